"""The hall's own certificates (:mod:`wordjudge.hall.certs`): what is made, and every certificate or key refused."""

from __future__ import annotations

import ipaddress
import os
import shutil
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from tests.tls_hall import hall_certs, other_ca_certs
from wordjudge.base.errors import InvalidInput
from wordjudge.hall.certs import (
    SERVER_DAYS,
    HallFiles,
    check_served,
    fingerprint,
    make_hall_certs,
    read_cert,
    signed_by,
)

LAN = ipaddress.ip_address("192.168.1.10")


def test_the_hall_ca_and_a_server_certificate_are_made_as_browsers_take_them(tmp_path: Path) -> None:
    made = make_hall_certs(tmp_path, names=["hall-a", "hall-a.local", "wordjudge.local"], addresses=[LAN], hall="open")
    ca, cert = made.ca, made.cert
    assert made.ca_made
    assert ca.subject.rfc4514_string() == "CN=wordjudge hall open,O=wordjudge"
    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical
    assert constraints.value.ca
    assert constraints.value.path_length == 0
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    public = ca.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)
    assert public.curve.name == "secp256r1"
    assert isinstance(ca.signature_hash_algorithm, hashes.SHA256)
    assert ca.not_valid_after_utc - ca.not_valid_before_utc > timedelta(days=2 * 365)
    assert signed_by(cert, ca)
    assert cert.not_valid_after_utc - cert.not_valid_before_utc <= timedelta(days=SERVER_DAYS)
    assert ExtendedKeyUsageOID.SERVER_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["hall-a", "hall-a.local", "wordjudge.local"]
    assert sans.get_values_for_type(x509.IPAddress) == [LAN]
    files = made.files
    assert stat.S_IMODE(files.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(files.key.stat().st_mode) == 0o600
    assert stat.S_IMODE(files.ca_key.stat().st_mode) == 0o600
    assert check_served(files.cert, files.key, ca_path=files.ca_cert, addresses=[LAN]).warnings == ()
    assert len(fingerprint(ca).split(":")) == 32


def test_the_second_machine_makes_its_own_certificate_from_the_copied_ca(tmp_path: Path) -> None:
    first = make_hall_certs(tmp_path / "a", names=["a"], addresses=[LAN])
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    second = make_hall_certs(tmp_path / "b", names=["b"], addresses=[ipaddress.ip_address("192.168.1.11")])
    assert not second.ca_made
    assert fingerprint(second.ca) == fingerprint(first.ca)
    assert signed_by(second.cert, first.ca)
    assert second.cert != first.cert


def _write_key(path: Path, key: object) -> None:
    path.write_bytes(
        key.private_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    path.chmod(0o600)


def _refusal(files: HallFiles, **kwargs: object) -> str:
    with pytest.raises(InvalidInput) as caught:
        check_served(files.cert, files.key, ca_path=files.ca_cert, **kwargs)  # type: ignore[arg-type]
    return caught.value.message


def test_every_certificate_or_key_a_server_must_not_serve_is_refused_by_name(tmp_path: Path) -> None:
    hall = hall_certs(tmp_path / "hall")
    files = hall.files
    phone = other_ca_certs(tmp_path / "phone")
    # Another CA's certificate, with its own key: not the hall's.
    shutil.copy(phone.cert, files.cert)
    shutil.copy(phone.key, files.key)
    assert "was not signed by the hall's CA" in _refusal(files)
    hall_certs(tmp_path / "hall")  # this machine's own again
    # Expired, and not yet valid.
    assert "expired on" in _refusal(files, now=datetime.now(UTC) + timedelta(days=SERVER_DAYS + 1))
    assert "valid only from" in _refusal(files, now=datetime.now(UTC) - timedelta(days=1))
    # A key readable by others: the fix named.
    files.key.chmod(0o644)
    assert f"chmod 600 {files.key}" in _refusal(files)
    files.key.chmod(0o660)  # its group may not write it
    assert "(mode 0660)" in _refusal(files)
    files.key.chmod(0o640)  # root:wordjudge 0640, as deploy/wordjudge.env describes a key of the TD's own: served
    assert check_served(files.cert, files.key, ca_path=files.ca_cert).ca is not None
    files.key.chmod(0o600)
    # Another key than the certificate's.
    good = files.key.read_bytes()
    _write_key(files.key, ec.generate_private_key(ec.SECP256R1()))
    assert "is not the key of the certificate" in _refusal(files)
    # Keys of the wrong kind or length.
    for key, said in (
        (rsa.generate_private_key(65537, 1024), "RSA of 1024 bits"),
        (ec.generate_private_key(ec.SECP256K1()), "ECDSA on secp256k1"),
        (ed25519.Ed25519PrivateKey.generate(), "Ed25519"),
    ):
        _write_key(files.key, key)
        assert said in _refusal(files)
    # An encrypted key, and files that are not PEM at all.
    files.key.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    assert "protected by a password" in _refusal(files)
    files.key.write_text("not a key")
    assert "holds no PEM private key" in _refusal(files)
    files.key.write_bytes(good)
    saved = files.cert.read_bytes()
    files.cert.write_text("nothing")
    assert "holds no PEM certificate" in _refusal(files)
    files.cert.write_bytes(saved)
    os.unlink(files.ca_cert)
    assert "cannot be read" in _refusal(files)


def test_a_certificate_that_does_not_name_this_machines_address_is_warned_of(tmp_path: Path) -> None:
    hall = hall_certs(tmp_path)
    served = check_served(hall.cert, hall.key, ca_path=hall.ca_pem, addresses=[ipaddress.ip_address("127.0.0.1"), LAN])
    assert [w.text() for w in served.warnings] == [
        f"the certificate {hall.cert} does not name 192.168.1.10, an address of this machine: a kiosk or phone "
        "opening it gets a certificate error. Make this machine's certificate again with: wordjudge hall cert"
    ]


def test_a_half_copied_ca_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    hall = hall_certs(tmp_path)
    hall.files.ca_key.unlink()
    before = read_cert(hall.cert)
    with pytest.raises(InvalidInput, match=r"hall-ca\.key is missing"):
        make_hall_certs(tmp_path, names=["a"], addresses=[LAN])
    assert read_cert(hall.cert) == before


def test_a_hall_ca_out_of_its_validity_makes_no_certificate(tmp_path: Path) -> None:
    hall = hall_certs(tmp_path)
    before = read_cert(hall.cert)
    with pytest.raises(InvalidInput, match=r"hall-ca\.pem expired on"):
        make_hall_certs(tmp_path, names=["a"], addresses=[LAN], now=datetime.now(UTC) + timedelta(days=6 * 365))
    assert read_cert(hall.cert) == before
