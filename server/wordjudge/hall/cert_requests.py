"""A certificate for the hall's other machine without its CA key leaving the machine that made it: the other
machine makes its own key and a certificate signing request (:func:`make_request`), the CA's machine checks and
signs it (:func:`sign_request`), and the other machine installs the certificate (:func:`install_cert`).

Only public files travel (on the USB stick): the request, the certificate, the CA's certificate. Whoever held the
CA's key could make certificates every kiosk and phone trusts, for any address: the very thing HTTPS in the hall
keeps a phone from doing. The request's key waits in ``tls/request.key`` (0600) until its certificate is
installed, so a server keeps serving its current pair meanwhile. The TD compares the request's key id
(:func:`key_id`), printed where it is made and where it is signed: a request swapped on the stick shows another.
Nothing here imports the web framework or the command line.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from wordjudge.base.errors import InvalidInput
from wordjudge.base.files import secure_folder, write_atomic
from wordjudge.hall.certs import (
    Address,
    HallFiles,
    Served,
    a_host_name,
    check_served,
    names_of,
    read_ca,
    read_cert,
    read_key,
    server_cert,
    signed_by,
)

REQUEST_KEY = "request.key"
_MAX_REQUEST = 64 * 1024  # a request is a few hundred bytes: a bigger file is not one


@dataclass(frozen=True)
class Signed:
    """What :func:`sign_request` signed: the certificate, where it was written, and what it names."""

    cert: x509.Certificate
    path: Path
    names: tuple[str, ...]
    key_id: str


def key_id(public: object) -> str:
    """A short id of a public key, for the TD to compare where a request is made and where it is signed: the first
    8 bytes of the SHA-256 of its SubjectPublicKeyInfo, in 4 groups of 4 hex digits."""
    der = public.public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    digest = hashes.Hash(hashes.SHA256())
    digest.update(der)
    hexed = digest.finalize()[:8].hex().upper()
    return " ".join(hexed[i : i + 4] for i in range(0, 16, 4))


def request_key_path(files: HallFiles) -> Path:
    return files.folder / REQUEST_KEY


def make_request(
    data_dir: Path, out: Path, *, names: Iterable[str], addresses: Iterable[Address]
) -> tuple[x509.CertificateSigningRequest, str]:
    """Make this machine's new server key (``tls/request.key``, 0600, replacing a pending one) and a certificate
    signing request for it naming ``names`` and ``addresses``, written to ``out`` (public). Returns the request
    and its key's id. Raises :class:`InvalidInput` if it names nothing, :class:`OSError` if a file cannot be
    written."""
    files = HallFiles.of(data_dir)
    names_ = tuple(dict.fromkeys(n.lower().rstrip(".") for n in names if n))
    addresses_ = tuple(dict.fromkeys(addresses))
    if not names_ and not addresses_:
        raise InvalidInput("error.tls.no_names")
    secure_folder(files.folder)
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in names_]
    sans += [x509.IPAddress(a) for a in addresses_]
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (*names_, "wordjudge")[0][:64])]))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    write_atomic(request_key_path(files), pem.decode())  # mkstemp: 0600 whatever the umask
    os.chmod(request_key_path(files), 0o600)
    _write_public(out, request.public_bytes(serialization.Encoding.PEM).decode())
    return request, key_id(key.public_key())


def _write_public(path: Path, text: str) -> None:
    write_atomic(path, text)
    # A USB stick's FAT has no modes: the file is public anyway, and root reads it on the other machine.
    with contextlib.suppress(OSError):
        os.chmod(path, 0o644)


def read_request(path: Path) -> x509.CertificateSigningRequest:
    """The certificate signing request in the PEM (or DER) file ``path``, checked: signed by its own key, for an
    ECDSA P-256 key (the hall's servers' kind), not for a CA, naming only host names and IP addresses, at least
    one. Raises :class:`InvalidInput` naming the file and what is wrong."""
    try:
        data = path.read_bytes()[: _MAX_REQUEST + 1]
    except OSError as exc:
        raise InvalidInput("error.tls.unreadable", path=str(path), reason=exc.strerror or str(exc)) from None
    try:
        if len(data) > _MAX_REQUEST:
            raise ValueError
        loaded = x509.load_pem_x509_csr if b"-----BEGIN" in data else x509.load_der_x509_csr
        request = loaded(data)
        request.subject  # noqa: B018 - parsed lazily: a broken one raises here
        extensions = request.extensions
    except ValueError:
        raise InvalidInput("error.tls.not_a_request", path=str(path)) from None
    if not request.is_signature_valid:
        raise InvalidInput("error.tls.request_signature", path=str(path))
    public = request.public_key()
    if not (isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name == "secp256r1"):
        found = (
            f"ECDSA on {public.curve.name}"
            if isinstance(public, ec.EllipticCurvePublicKey)
            else type(public).__name__.removeprefix("_").replace("PublicKey", "")
        )
        raise InvalidInput("error.tls.request_key", path=str(path), found=found)
    for extension in extensions:
        value = extension.value
        if (isinstance(value, x509.BasicConstraints) and value.ca) or (
            isinstance(value, x509.KeyUsage) and value.key_cert_sign
        ):
            raise InvalidInput("error.tls.request_ca", path=str(path))
    _request_names(request, path)
    return request


def _request_names(request: x509.CertificateSigningRequest, path: Path) -> tuple[list[str], list[Address]]:
    """The request's host names and addresses. Raises :class:`InvalidInput` for another kind of name, a name that
    is not a host name (a wildcard), or none."""
    try:
        sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        raise InvalidInput("error.tls.no_names") from None
    names: list[str] = []
    addresses: list[Address] = []
    for general in sans:
        if isinstance(general, x509.DNSName) and a_host_name(general.value):
            names.append(general.value.lower().rstrip("."))
        elif isinstance(general, x509.IPAddress) and isinstance(general.value, Address):
            addresses.append(general.value)
        else:
            raise InvalidInput("error.tls.request_name", path=str(path), name=str(general.value))
    if not names and not addresses:
        raise InvalidInput("error.tls.no_names")
    return names, addresses


def sign_request(data_dir: Path, path: Path, out: Path | None = None, *, now: datetime | None = None) -> Signed:
    """Check the request ``path`` (:func:`read_request`) and sign a server certificate for its key and names with
    the hall's CA in ``data_dir`` (:func:`~wordjudge.hall.certs.server_cert`: at most 397 days, serverAuth, not a
    CA), written to ``out`` (default: beside the request, ``.pem``). Raises :class:`InvalidInput` for a request
    refused or a CA this machine cannot sign with (its key elsewhere, expired...), :class:`OSError` if the
    certificate cannot be written."""
    now = now or datetime.now(UTC)
    request = read_request(path)
    names, addresses = _request_names(request, path)
    ca, ca_key = read_ca(HallFiles.of(data_dir), now=now)
    public = request.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)  # read_request refused any other
    cert = server_cert(ca, ca_key, public, names, addresses, now)
    target = out or path.with_suffix(".pem")
    if target.resolve() == path.resolve():
        target = path.with_name(path.name + ".pem")
    _write_public(target, cert.public_bytes(serialization.Encoding.PEM).decode())
    return Signed(cert, target, tuple(names_of(cert)), key_id(public))


def install_cert(
    data_dir: Path, path: Path, *, addresses: Iterable[Address] = (), now: datetime | None = None
) -> Served:
    """Install the certificate ``path`` as this machine's (``tls/server.pem``, with the pending request's key as
    ``tls/server.key``), once checked: signed by the hall's CA (``tls/hall-ca.pem``, which came with the folder),
    for the key this machine's request holds, within its validity, a server's. Raises :class:`InvalidInput`
    naming what is wrong (nothing installed), :class:`OSError` if the files cannot be written."""
    files = HallFiles.of(data_dir)
    cert = read_cert(path)
    if not files.ca_cert.exists():
        raise InvalidInput("error.tls.no_ca")
    ca = read_cert(files.ca_cert)
    if not signed_by(cert, ca):
        raise InvalidInput("error.tls.not_the_halls", path=str(path), ca=str(files.ca_cert))
    pending = request_key_path(files)
    own = serialization.PublicFormat.SubjectPublicKeyInfo
    wanted = cert.public_key().public_bytes(serialization.Encoding.DER, own)
    # The pending request's key, else the installed one (the same certificate installed again).
    for key_path in (pending, files.key):
        if key_path.exists():
            key = read_key(key_path)
            if key.public_key().public_bytes(serialization.Encoding.DER, own) == wanted:
                break
    else:
        raise InvalidInput("error.tls.key_mismatch", cert=str(path), key=str(pending))
    with contextlib.suppress(x509.ExtensionNotFound):
        if cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca:
            raise InvalidInput("error.tls.request_ca", path=str(path))
    # Checked as the server will check it, from where it is, before anything is replaced.
    check_served(path, key_path, ca_path=files.ca_cert, now=now)
    if key_path == pending:
        os.replace(pending, files.key)  # same folder: the key whole, or the old one
    write_atomic(files.cert, cert.public_bytes(serialization.Encoding.PEM).decode())
    os.chmod(files.cert, 0o644)
    return check_served(files.cert, files.key, ca_path=files.ca_cert, addresses=list(addresses), now=now)
