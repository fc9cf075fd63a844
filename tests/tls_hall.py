"""Test helpers for an HTTPS hall: the hall's CA and a server certificate made in a data folder by
:mod:`wordjudge.hall.certs` (as ``wordjudge hall cert`` makes them), another CA's certificate for the same
address (a phone at the hall's address), an SSL context trusting only the hall's CA, and a home folder whose NSS
database trusts the hall's CA, for Chromium (``HOME`` pointed at it).

    hall = hall_certs(data_dir)                       # tls/hall-ca.pem, tls/server.pem... for 127.0.0.1, localhost
    phone = other_ca_certs(tmp_path / "phone")        # same names, another CA: what the hall's devices must refuse
    ctx = trusting(hall.ca_pem)                       # ssl.SSLContext for httpx / raw sockets
    home = chromium_home(tmp_path / "home", hall.ca_pem)  # HOME for Chromium: .pki/nssdb trusts the CA ("C,,")
    second_machine_certs(a_dir, b_dir, stick)         # hall-b's, by --request, --sign, --install: no CA key on b
"""

from __future__ import annotations

import ipaddress
import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

from wordjudge.hall.certs import HallFiles, fingerprint, make_hall_certs

LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
CERTUTIL = shutil.which("certutil") or "/usr/bin/certutil"
NSS_NICKNAME = "wordjudge hall"


@dataclass(frozen=True)
class TlsHall:
    """A data folder's hall certificates, by path."""

    files: HallFiles
    fingerprint: str

    @property
    def ca_pem(self) -> Path:
        return self.files.ca_cert

    @property
    def cert(self) -> Path:
        return self.files.cert

    @property
    def key(self) -> Path:
        return self.files.key


def hall_certs(
    data_dir: Path, names: tuple[str, ...] = ("localhost",), addresses: tuple[str, ...] = ("127.0.0.1", "::1")
) -> TlsHall:
    """The hall's CA (made if the folder has none) and this machine's server certificate, in ``data_dir/tls``."""
    made = make_hall_certs(data_dir, names=names, addresses=[ipaddress.ip_address(a) for a in addresses], hall="test")
    return TlsHall(made.files, fingerprint(made.ca))


def second_machine_certs(
    first: Path,
    data_dir: Path,
    stick: Path,
    names: tuple[str, ...] = ("localhost",),
    addresses: tuple[str, ...] = ("127.0.0.1", "::1"),
) -> TlsHall:
    """The hall's other machine's certificate as deploy/hall.md makes it: the CA's certificate alone copied from
    ``first`` (never its key), a request made in ``data_dir`` and written to ``stick``, signed in ``first``,
    installed in ``data_dir``."""
    from wordjudge.hall.cert_requests import install_cert, make_request, sign_request

    files = HallFiles.of(data_dir)
    files.folder.mkdir(parents=True, mode=0o700, exist_ok=True)
    shutil.copy(HallFiles.of(first).ca_cert, files.ca_cert)
    stick.mkdir(parents=True, exist_ok=True)
    request = stick / f"{data_dir.name}.csr"
    make_request(data_dir, request, names=names, addresses=[ipaddress.ip_address(a) for a in addresses])
    served = install_cert(data_dir, sign_request(first, request).path)
    assert served.ca is not None
    return TlsHall(files, fingerprint(served.ca))


def other_ca_certs(folder: Path, **kwargs: tuple[str, ...]) -> TlsHall:
    """A CA of its own and a server certificate for the same names as :func:`hall_certs`'s, in ``folder/tls``:
    what a phone at the hall's address could serve."""
    return hall_certs(folder, **kwargs)


def trusting(ca_pem: Path) -> ssl.SSLContext:
    """A client context that trusts ``ca_pem`` and nothing else (host names and addresses checked)."""
    return ssl.create_default_context(cafile=str(ca_pem))


def nss_trust(nssdb: Path, ca_pem: Path, nickname: str = NSS_NICKNAME) -> None:
    """Make the NSS database ``nssdb`` (created if needed, no password) trust ``ca_pem`` to identify web sites."""
    nssdb.mkdir(parents=True, exist_ok=True)
    if not (nssdb / "cert9.db").exists():
        subprocess.run([CERTUTIL, "-N", "-d", f"sql:{nssdb}", "--empty-password"], check=True, capture_output=True)
    subprocess.run(
        [CERTUTIL, "-A", "-d", f"sql:{nssdb}", "-n", nickname, "-t", "C,,", "-i", str(ca_pem)],
        check=True,
        capture_output=True,
    )


def nss_list(nssdb: Path) -> str:
    """``certutil -L`` of the NSS database: its certificates and their trust."""
    return subprocess.run([CERTUTIL, "-L", "-d", f"sql:{nssdb}"], check=True, capture_output=True, text=True).stdout


def chromium_home(home: Path, ca_pem: Path) -> Path:
    """A home folder for Chromium (its ``HOME``) whose user NSS databases trust ``ca_pem``: both
    ``~/.pki/nssdb`` and ``~/.local/share/pki/nssdb`` (newer Chromium's folder)."""
    for nssdb in (home / ".pki" / "nssdb", home / ".local" / "share" / "pki" / "nssdb"):
        nss_trust(nssdb, ca_pem)
    return home
