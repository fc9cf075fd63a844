"""The hall's own certificates: a certificate authority made once for the hall, and each machine's server certificate
signed by it, so that kiosks and phones that trust the hall's CA know the hall's servers from a phone at their address.

Over plain HTTP whoever answers at the page's address owns the page's origin: after a reload its script, its token
and its verdicts are the impostor's. Over HTTPS with a certificate only the hall's CA could sign, a phone at that
address gets a TLS error instead, and nothing is sent to it. The files live in the data folder's ``tls/`` folder
(``0700``; keys ``0600``, written whole or not at all): ``hall-ca.pem`` and ``hall-ca.key`` (the CA: its certificate
copied with the folder to the hall's other machine, its key never, see :mod:`wordjudge.hall.cert_requests`),
``server.pem`` and ``server.key`` (this machine's own).

Keys are ECDSA P-256 and signatures SHA-256 (what every browser accepts); the CA is valid for
:data:`CA_DAYS`, a server certificate for at most :data:`SERVER_DAYS` (Chromium refuses a longer one).
The TD compares the CA's SHA-256 fingerprint (:func:`fingerprint`) where a kiosk or phone is made to trust it.
Nothing here imports the web framework or the command line.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import ssl
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from wordjudge.base.errors import InvalidInput, Message
from wordjudge.base.files import secure_folder, write_atomic

TLS_FOLDER = "tls"
CA_CERT, CA_KEY = "hall-ca.pem", "hall-ca.key"
SERVER_CERT, SERVER_KEY = "server.pem", "server.key"
CA_DAYS = 5 * 365  # a hall's CA outlives several events: the kiosks and phones trust it once
SERVER_DAYS = 397  # Chromium refuses a server certificate valid for longer (CA/Browser Forum's limit)
_BACKDATE = timedelta(hours=1)  # a device whose clock is a little behind still takes a certificate made just now
_RSA_MIN_BITS = 2048
_CURVES = ("secp256r1", "secp384r1")  # the curves browsers take for a server's key

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class HallFiles:
    """Where a data folder keeps the hall's certificates and keys."""

    folder: Path

    @classmethod
    def of(cls, data_dir: Path) -> HallFiles:
        return cls(data_dir / TLS_FOLDER)

    @property
    def ca_cert(self) -> Path:
        return self.folder / CA_CERT

    @property
    def ca_key(self) -> Path:
        return self.folder / CA_KEY

    @property
    def cert(self) -> Path:
        return self.folder / SERVER_CERT

    @property
    def key(self) -> Path:
        return self.folder / SERVER_KEY

    @property
    def serves(self) -> bool:
        """Whether the folder holds a server certificate and its key (checked only by :func:`check_served`)."""
        return self.cert.is_file() and self.key.is_file()


@dataclass(frozen=True)
class Made:
    """What :func:`make_hall_certs` did: the CA (``ca_made``: made now, else found), this machine's certificate, and
    what it names."""

    files: HallFiles
    ca: x509.Certificate
    cert: x509.Certificate
    ca_made: bool
    names: tuple[str, ...]
    addresses: tuple[Address, ...]


@dataclass(frozen=True)
class Served:
    """A certificate and key checked for serving (:func:`check_served`): the hall's own (``ca`` set) or another
    CA's (None), when it expires, and what is worth a warning (addresses it does not name)."""

    cert: x509.Certificate
    ca: x509.Certificate | None
    warnings: tuple[Message, ...] = field(default=())

    @property
    def expires(self) -> datetime:
        return self.cert.not_valid_after_utc


def fingerprint(cert: x509.Certificate) -> str:
    """The SHA-256 of the certificate's DER, as ``certutil``, ``openssl x509 -fingerprint`` and phones show it:
    upper-case hex in pairs joined by colons."""
    return ":".join(f"{byte:02X}" for byte in cert.fingerprint(hashes.SHA256()))


def fingerprint_lines(cert: x509.Certificate) -> list[str]:
    """The fingerprint in two lines of 16 pairs, easier to compare on a small screen."""
    pairs = fingerprint(cert).split(":")
    return [":".join(pairs[:16]), ":".join(pairs[16:])]


def make_hall_certs(
    data_dir: Path,
    *,
    names: Iterable[str],
    addresses: Iterable[Address],
    hall: str | None = None,
    now: datetime | None = None,
) -> Made:
    """Make the hall's CA in ``data_dir`` if it has none (named ``wordjudge hall <hall>``, a random id if
    ``hall`` is None), then this machine's server certificate, signed by it, for ``names`` (DNS names) and
    ``addresses`` (IP addresses), replacing the one there. Raises :class:`InvalidInput` if the CA found is not a
    usable one (see :func:`read_ca`), or names nothing; :class:`OSError` if the files cannot be written."""
    files = HallFiles.of(data_dir)
    now = now or datetime.now(UTC)
    names_, addresses_ = (
        tuple(dict.fromkeys(n.lower().rstrip(".") for n in names if n)),
        tuple(dict.fromkeys(addresses)),
    )
    if not names_ and not addresses_:
        raise InvalidInput("error.tls.no_names")
    secure_folder(files.folder)
    ca_made = not files.ca_cert.exists() and not files.ca_key.exists()
    ca_key: PrivateKey
    if ca_made:
        ca, ca_key = _make_ca(hall or secrets.token_hex(4), now)
        _write(files.ca_key, _key_pem(ca_key), private=True)
        _write(files.ca_cert, ca.public_bytes(serialization.Encoding.PEM).decode(), private=False)
    else:
        ca, ca_key = read_ca(files, now=now)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = server_cert(ca, ca_key, key.public_key(), names_, addresses_, now)
    # The key first: a certificate is never there without its key (a crash between leaves the old pair's key).
    _write(files.key, _key_pem(key), private=True)
    _write(files.cert, cert.public_bytes(serialization.Encoding.PEM).decode(), private=False)
    return Made(files, ca, cert, ca_made, names_, addresses_)


def server_cert(
    ca: x509.Certificate,
    ca_key: PrivateKey,
    public: ec.EllipticCurvePublicKey,
    names: Sequence[str],
    addresses: Sequence[Address],
    now: datetime,
) -> x509.Certificate:
    """A server certificate for ``public``, naming ``names`` and ``addresses``, signed by the hall's CA: valid for
    at most :data:`SERVER_DAYS` (never beyond the CA), not a CA, for serverAuth only."""
    sans: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    sans += [x509.IPAddress(address) for address in addresses]
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (*names, "wordjudge")[0][:64])]))
        .issuer_name(ca.subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(min(now + timedelta(days=SERVER_DAYS) - _BACKDATE, ca.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


def _make_ca(hall: str, now: datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "wordjudge"),
            x509.NameAttribute(NameOID.COMMON_NAME, f"wordjudge hall {hall}"[:64]),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _key_usage(*, sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=sign,
        crl_sign=sign,
        encipher_only=False,
        decipher_only=False,
    )


def _key_pem(key: PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _write(path: Path, text: str, *, private: bool) -> None:
    write_atomic(path, text)  # mkstemp makes it 0600 whatever the umask
    os.chmod(path, 0o600 if private else 0o644)


def read_ca(files: HallFiles, *, now: datetime | None = None) -> tuple[x509.Certificate, PrivateKey]:
    """The hall's CA certificate and key in ``files``. Raises :class:`InvalidInput` for a missing half, a file that
    is not one, a key readable by others, a key that is not the certificate's, or a CA out of its validity."""
    if files.ca_cert.exists() and not files.ca_key.exists():
        # The hall's other machine: the CA's key never leaves the machine that made it (set-up step 3).
        raise InvalidInput("error.tls.ca_key_elsewhere", path=str(files.ca_key))
    if not files.ca_cert.exists():
        raise InvalidInput("error.tls.ca_half", path=str(files.ca_cert))
    ca = read_cert(files.ca_cert)
    key = read_key(files.ca_key)
    _matches(ca, key, files.ca_cert, files.ca_key)
    _in_validity(ca, files.ca_cert, now or datetime.now(UTC))
    return ca, key


def read_cert(path: Path) -> x509.Certificate:
    """The first certificate of the PEM file ``path``. Raises :class:`InvalidInput` naming the file if it cannot be
    read or holds none."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput("error.tls.unreadable", path=str(path), reason=exc.strerror or str(exc)) from None
    try:
        return x509.load_pem_x509_certificates(data)[0]
    except (ValueError, IndexError):
        raise InvalidInput("error.tls.not_a_certificate", path=str(path)) from None


def read_key(path: Path) -> PrivateKey:
    """The private key in the PEM file ``path``: private to its owner (0600; its group may read it), unencrypted,
    ECDSA on P-256 or P-384, or RSA of 2048 bits or more. Raises :class:`InvalidInput` naming the file and what is
    wrong."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput("error.tls.unreadable", path=str(path), reason=exc.strerror or str(exc)) from None
    # Others may neither read nor write it; its group may read it (a key root owns, the service's group reads:
    # root:wordjudge 0640), never write it.
    if mode & 0o027:
        raise InvalidInput("error.tls.key_open", path=str(path), mode=f"{mode:04o}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:  # encrypted: uvicorn would ask for its password on a terminal nobody watches
        raise InvalidInput("error.tls.key_encrypted", path=str(path)) from None
    except (ValueError, UnsupportedAlgorithm):
        raise InvalidInput("error.tls.not_a_key", path=str(path)) from None
    if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name in _CURVES:
        return key
    if isinstance(key, rsa.RSAPrivateKey) and key.key_size >= _RSA_MIN_BITS:
        return key
    found = (
        f"ECDSA on {key.curve.name}"
        if isinstance(key, ec.EllipticCurvePrivateKey)
        else f"RSA of {key.key_size} bits"
        if isinstance(key, rsa.RSAPrivateKey)
        else type(key).__name__.removeprefix("_").replace("PrivateKey", "")
    )
    raise InvalidInput("error.tls.key_kind", path=str(path), found=found)


def _matches(cert: x509.Certificate, key: PrivateKey, cert_path: Path, key_path: Path) -> None:
    own = serialization.PublicFormat.SubjectPublicKeyInfo
    if cert.public_key().public_bytes(serialization.Encoding.DER, own) != key.public_key().public_bytes(
        serialization.Encoding.DER, own
    ):
        raise InvalidInput("error.tls.key_mismatch", cert=str(cert_path), key=str(key_path))


def _in_validity(cert: x509.Certificate, path: Path, now: datetime) -> None:
    if now < cert.not_valid_before_utc:
        raise InvalidInput("error.tls.not_yet_valid", path=str(path), when=cert.not_valid_before_utc.isoformat())
    if now > cert.not_valid_after_utc:
        raise InvalidInput("error.tls.expired", path=str(path), when=cert.not_valid_after_utc.isoformat())


def signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    """Whether ``ca`` signed ``cert`` (its issuer named, its signature verified with the CA's key)."""
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def check_served(
    cert_path: Path,
    key_path: Path,
    *,
    ca_path: Path | None,
    addresses: Sequence[Address] = (),
    now: datetime | None = None,
) -> Served:
    """Check a certificate and key before a server serves them: readable, the key private (0600) and of a kind
    browsers take, the key the certificate's, the certificate within its validity and, with ``ca_path`` (the hall's
    CA), signed by that CA, itself valid. Warns of the ``addresses`` (this machine's) the certificate does not name:
    a device opening one gets a certificate error. Raises :class:`InvalidInput` naming the file and what is wrong."""
    now = now or datetime.now(UTC)
    cert, key = read_cert(cert_path), read_key(key_path)
    _matches(cert, key, cert_path, key_path)
    ca = None
    if ca_path is not None:
        ca = read_cert(ca_path)
        if not signed_by(cert, ca):
            raise InvalidInput("error.tls.not_the_halls", path=str(cert_path), ca=str(ca_path))
        _in_validity(ca, ca_path, now)
    _in_validity(cert, cert_path, now)
    named = _named_addresses(cert)
    missing = [str(address) for address in addresses if address not in named and not address.is_loopback]
    warnings = (
        (Message("error.tls.names_missing", path=str(cert_path), addresses=", ".join(missing)),) if missing else ()
    )
    return Served(cert, ca, warnings)


def _named_addresses(cert: x509.Certificate) -> set[Address]:
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {a for a in sans.get_values_for_type(x509.IPAddress) if isinstance(a, Address)}


def trust(data_dir: Path) -> ssl.SSLContext | None:
    """A client SSL context that trusts the hall's CA in ``data_dir`` and nothing else (host names and addresses
    checked): how the hall's servers, and the commands that ask a local server, know a hall server from anything
    else at its address. None if the folder holds no hall CA. Raises :class:`InvalidInput` naming a CA file that
    cannot be read or is not a certificate."""
    files = HallFiles.of(data_dir)
    if not files.ca_cert.exists():
        return None
    try:
        return ssl.create_default_context(cafile=str(files.ca_cert))
    except OSError as exc:
        raise InvalidInput("error.tls.unreadable", path=str(files.ca_cert), reason=exc.strerror or str(exc)) from None
    except ssl.SSLError:
        raise InvalidInput("error.tls.not_a_certificate", path=str(files.ca_cert)) from None


def common_name(cert: x509.Certificate) -> str:
    """The certificate's common name (its whole subject if it has none), as devices show it."""
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else cert.subject.rfc4514_string()


def names_of(cert: x509.Certificate) -> list[str]:
    """The names and addresses a certificate is for (its subject alternative names), as text."""
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [*sans.get_values_for_type(x509.DNSName), *(str(a) for a in sans.get_values_for_type(x509.IPAddress))]


def a_host_name(text: str) -> bool:
    """Whether ``text`` is a host name a certificate may name: dot-separated labels of letters, digits and hyphens
    (none first), 63 characters at most each, 253 in all (no wildcard)."""
    labels = text.rstrip(".").split(".")
    return 0 < len(text) <= 253 and all(
        0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii() and label[0] != "-"
        for label in labels
    )
