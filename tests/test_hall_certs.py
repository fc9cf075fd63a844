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
from wordjudge.hall.cert_requests import REQUEST_KEY, install_cert, key_id, make_request, sign_request
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


# The hall's other machine: its certificate signed on the CA's machine, no private key on the stick
# (wordjudge.hall.cert_requests; deploy/hall.md, set-up step 3).

LOCAL = ipaddress.ip_address("127.0.0.1")


def _two_machines(tmp_path: Path) -> tuple[Path, Path, Path]:
    """hall-a with the hall's CA and its certificate; hall-b with the CA's certificate alone (what the guide's
    copy of the folder brings); the USB stick."""
    a, b, stick = tmp_path / "a", tmp_path / "b", tmp_path / "usb"
    hall_certs(a)
    (b / "tls").mkdir(parents=True, mode=0o700)
    shutil.copy(HallFiles.of(a).ca_cert, HallFiles.of(b).ca_cert)
    stick.mkdir()
    return a, b, stick


def _private_keys(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and b"PRIVATE KEY" in p.read_bytes())


def test_the_other_machine_gets_its_certificate_signed_without_the_cas_key_leaving_the_first(tmp_path: Path) -> None:
    a, b, stick = _two_machines(tmp_path)
    # Without the CA's key, the plain command says what to do instead; nothing made.
    with pytest.raises(InvalidInput, match=r"hall-ca\.key is missing: the hall's CA key stays on the machine"):
        make_hall_certs(b, names=["hall-b"], addresses=[LAN])
    assert not HallFiles.of(b).cert.exists()
    request, asked = make_request(b, stick / "hall-b.csr", names=["hall-b", "localhost"], addresses=[LAN, LOCAL])
    assert stat.S_IMODE((b / "tls" / REQUEST_KEY).stat().st_mode) == 0o600
    signed = sign_request(a, stick / "hall-b.csr")
    assert signed.path == stick / "hall-b.pem"
    assert signed.key_id == asked == key_id(request.public_key())
    assert signed.names == ("hall-b", "localhost", "192.168.1.10", "127.0.0.1")
    served = install_cert(b, stick / "hall-b.pem", addresses=[LAN])
    files = HallFiles.of(b)
    ca = read_cert(HallFiles.of(a).ca_cert)
    assert served.ca == ca
    assert served.warnings == ()
    assert signed_by(read_cert(files.cert), ca)
    cert = read_cert(files.cert)
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ExtendedKeyUsageOID.SERVER_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert cert.not_valid_after_utc - cert.not_valid_before_utc <= timedelta(days=SERVER_DAYS)
    assert stat.S_IMODE(files.key.stat().st_mode) == 0o600
    assert check_served(files.cert, files.key, ca_path=files.ca_cert).ca == ca
    # The CA's key never was on hall-b, nor any private key on the stick; the request's key is now the server's.
    assert _private_keys(b) == ["server.key"]
    assert _private_keys(stick) == []
    assert sorted(p.name for p in stick.iterdir()) == ["hall-b.csr", "hall-b.pem"]
    # The same certificate installed again: still the same pair.
    install_cert(b, stick / "hall-b.pem")
    assert read_cert(files.cert) == cert


def _request_file(path: Path, key: object, *extensions: x509.ExtensionType, names: tuple[str, ...] = ("b",)) -> Path:
    builder = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "b")])
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
    for extension in extensions:
        builder = builder.add_extension(extension, critical=isinstance(extension, x509.BasicConstraints))
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    request = builder.sign(key, algorithm)  # type: ignore[arg-type]
    path.write_bytes(request.public_bytes(serialization.Encoding.PEM))
    return path


def _sign_refusal(a: Path, request: Path) -> str:
    with pytest.raises(InvalidInput) as caught:
        sign_request(a, request)
    assert not request.with_suffix(".pem").exists()  # nothing signed
    return caught.value.message


def test_every_request_the_hall_must_not_sign_is_refused_by_name(tmp_path: Path) -> None:
    a, b, stick = _two_machines(tmp_path)
    p256 = ec.generate_private_key(ec.SECP256R1())
    # Not a request: a certificate, and noise.
    shutil.copy(HallFiles.of(a).cert, stick / "cert.csr")
    assert "holds no certificate signing request" in _sign_refusal(a, stick / "cert.csr")
    (stick / "noise.csr").write_bytes(b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n")
    assert "holds no certificate signing request" in _sign_refusal(a, stick / "noise.csr")
    # Altered on the way: a name changed after it was signed.
    make_request(b, stick / "altered.csr", names=["hall-b"], addresses=[LAN])
    der = x509.load_pem_x509_csr((stick / "altered.csr").read_bytes()).public_bytes(serialization.Encoding.DER)
    assert der.count(b"hall-b") >= 1
    (stick / "altered.csr").write_bytes(der.replace(b"hall-b", b"hall-x"))
    assert "is not signed by its own key" in _sign_refusal(a, stick / "altered.csr")
    # Keys of another kind than the hall's servers'.
    for key, said in (
        (rsa.generate_private_key(65537, 2048), "RSA"),
        (ec.generate_private_key(ec.SECP384R1()), "ECDSA on secp384r1"),
        (ed25519.Ed25519PrivateKey.generate(), "Ed25519"),
    ):
        message = _sign_refusal(a, _request_file(stick / "kind.csr", key))
        assert f"is for a key that is {said}" in message
    # A request for a CA, either way of asking.
    ca_asked = _request_file(stick / "ca.csr", p256, x509.BasicConstraints(ca=True, path_length=None))
    assert "asks for a certificate authority" in _sign_refusal(a, ca_asked)
    usage = x509.KeyUsage(True, False, False, False, False, True, False, False, False)  # keyCertSign
    assert "asks for a certificate authority" in _sign_refusal(a, _request_file(stick / "sign.csr", p256, usage))
    # Names that are not a host name or an address: a wildcard, an e-mail address; and none.
    assert "names *.local, which is neither" in _sign_refusal(
        a, _request_file(stick / "w.csr", p256, names=("*.local",))
    )
    mail = _request_file(stick / "m.csr", p256, x509.SubjectAlternativeName([x509.RFC822Name("td@hall")]), names=())
    assert "names td@hall, which is neither" in _sign_refusal(a, mail)
    assert "must name at least one" in _sign_refusal(a, _request_file(stick / "none.csr", p256, names=()))
    # A good request, on a machine without the CA's key: it says where to sign it.
    make_request(b, stick / "hall-b.csr", names=["hall-b"], addresses=[LAN])
    assert "the hall's CA key stays on the machine that made it" in _sign_refusal(b, stick / "hall-b.csr")


def test_a_certificate_not_the_halls_or_not_for_this_machines_key_is_not_installed(tmp_path: Path) -> None:
    a, b, stick = _two_machines(tmp_path)
    make_request(b, stick / "hall-b.csr", names=["hall-b"], addresses=[LAN])
    # Another CA's certificate (a phone's), and one the hall's CA signed for another machine's key.
    phone = other_ca_certs(tmp_path / "phone")
    c = tmp_path / "c"
    (c / "tls").mkdir(parents=True)
    make_request(c, stick / "other.csr", names=["hall-b"], addresses=[LAN])
    sign_request(a, stick / "other.csr")
    for path, said in (
        (phone.cert, "was not signed by the hall's CA"),
        (stick / "other.pem", "is not the key of the certificate"),
        (stick / "hall-b.csr", "holds no PEM certificate"),
    ):
        with pytest.raises(InvalidInput) as caught:
            install_cert(b, path)
        assert said in caught.value.message
        assert not HallFiles.of(b).cert.exists()
        assert not HallFiles.of(b).key.exists()
    # Its own, signed by the hall's CA: installed.
    sign_request(a, stick / "hall-b.csr")
    install_cert(b, stick / "hall-b.pem")
    assert HallFiles.of(b).serves
