"""``wordjudge hall cert``: the hall's certificates, so that its servers serve HTTPS that kiosks and phones trust (see
:mod:`wordjudge.hall.certs`; deploy/hall.md has the TD's steps)."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from urllib.parse import urlsplit

import click

from wordjudge.base.errors import InvalidInput
from wordjudge.cli.folder import say_folder
from wordjudge.cli.options import setting_options

LOOPBACK = ("127.0.0.1", "::1")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@click.group()
def hall() -> None:
    """The hall's own certificates: HTTPS that only the hall's servers can serve."""


@hall.command("cert")
@setting_options("data_dir", "host", "public_url", "mdns_name")
@click.option(
    "--name",
    "extra",
    multiple=True,
    envvar="WORDJUDGE_CERT_NAMES",
    metavar="NAME|ADDRESS",
    help="Another host name or IP address devices use to reach this machine, named in its certificate (again for "
    "more). [env: WORDJUDGE_CERT_NAMES, space-separated]",
)
@click.option(
    "--hall-name",
    envvar="WORDJUDGE_HALL_NAME",
    default=None,
    help="The hall's CA is named 'wordjudge hall NAME' (kiosks and phones show it); only when it is made. "
    "[env: WORDJUDGE_HALL_NAME; default: a random id]",
)
@click.option(
    "--request",
    is_flag=True,
    envvar="WORDJUDGE_CERT_REQUEST",
    help="On the hall's other machine: make this machine's key (kept here, tls/request.key) and write a "
    "certificate signing request for it (public) to --out, for the CA's machine to sign with --sign. "
    "[env: WORDJUDGE_CERT_REQUEST]",
)
@click.option(
    "--sign",
    "sign",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="WORDJUDGE_CERT_SIGN",
    metavar="FILE.csr",
    help="On the machine holding the hall's CA: check the request FILE.csr and sign its server certificate, "
    "written to --out (default: beside it, FILE.pem). [env: WORDJUDGE_CERT_SIGN]",
)
@click.option(
    "--install",
    "install",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="WORDJUDGE_CERT_INSTALL",
    metavar="FILE.pem",
    help="On the machine that made the request: check that FILE.pem is signed by the hall's CA for this "
    "machine's key, and install it as this machine's certificate. [env: WORDJUDGE_CERT_INSTALL]",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="WORDJUDGE_CERT_OUT",
    metavar="FILE",
    help="Where --request writes the request (needed), or --sign the certificate. [env: WORDJUDGE_CERT_OUT]",
)
def hall_cert(
    data_dir: Path | None,
    host: str | None,
    public_url: str | None,
    mdns_name: str | None,
    extra: tuple[str, ...],
    hall_name: str | None,
    request: bool,
    sign: Path | None,
    install: Path | None,
    out: Path | None,
) -> None:
    """Make the hall's certificate authority in the data folder if it has none, then this machine's server
    certificate, signed by it: for its host name, NAME.local, its LAN addresses and --public-url's host. Prints
    the CA's fingerprint, which the TD compares on each kiosk and phone made to trust it. wordjudge serve then
    serves HTTPS (restart a running server). The CA's key never leaves this machine: the hall's other machine
    gets its certificate with --request there, --sign here, --install there (deploy/hall.md)."""
    from wordjudge.service.mdns import lan_addresses
    from wordjudge.service.settings import load_settings

    if sum((request, sign is not None, install is not None)) > 1:
        raise click.UsageError("give one of --request, --sign and --install")
    if request and out is None:
        raise click.UsageError("--request needs --out FILE: where to write the request (e.g. /media/usb/hall-b.csr)")
    if out is not None and not (request or sign):
        raise click.UsageError("--out goes with --request or --sign")
    settings = load_settings(data_dir=data_dir, host=host, public_url=public_url, mdns_name=mdns_name, https="off")
    names, addresses = _names_and_addresses(settings.host, settings.public_url, settings.mdns_name, extra)
    # Every LAN address of the machine, whatever --host: the server may listen on 0.0.0.0 tomorrow.
    addresses += [ipaddress.ip_address(a.split("%")[0]) for a in lan_addresses("::") + lan_addresses("0.0.0.0")]
    say_folder(settings.data_dir)
    try:
        if sign is not None:
            return _sign(settings.data_dir, sign, out)
        if install is not None:
            return _install(settings.data_dir, install, addresses)
        if request:
            assert out is not None
            return _request(settings.data_dir, out, names, addresses)
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or settings.data_dir.resolve()}: {exc.strerror or exc}") from None
    from wordjudge.hall.certs import common_name, fingerprint_lines, make_hall_certs

    try:
        made = make_hall_certs(settings.data_dir, names=names, addresses=addresses, hall=hall_name)
    except OSError as exc:
        raise click.ClickException(
            f"{settings.data_dir.resolve()} cannot hold the hall's certificates: {exc}"
        ) from None
    shown = common_name(made.ca)
    said = "Made" if made.ca_made else "Found"
    click.echo(f"{said} the hall's certificate authority {shown!r}: {made.files.ca_cert.resolve()}")
    click.echo(f"  valid until {made.ca.not_valid_after_utc:%Y-%m-%d}; its key: {made.files.ca_key.resolve()} (0600)")
    click.echo("  SHA-256 fingerprint (compare it on each kiosk and phone made to trust the hall):")
    for line in fingerprint_lines(made.ca):
        click.echo(f"    {line}")
    click.echo(f"This machine's certificate: {made.files.cert.resolve()} (key {made.files.key.name}, 0600)")
    click.echo(f"  valid until {made.cert.not_valid_after_utc:%Y-%m-%d}, for: {', '.join(made.names)}")
    click.echo(f"  and the addresses: {', '.join(str(a) for a in made.addresses)}")
    click.echo(
        "wordjudge serve serves HTTPS with it from its next start. The CA's key stays here: on the hall's other "
        "machine, wordjudge hall cert --request --out FILE.csr, here --sign FILE.csr, there --install FILE.pem "
        "(deploy/hall.md); trust the CA on each kiosk with deploy/kiosk-setup.sh"
    )


def _request(data_dir: Path, out: Path, names: list[str], addresses: list[Address]) -> None:
    from wordjudge.hall.cert_requests import make_request
    from wordjudge.hall.certs import HallFiles

    _, key_id = make_request(data_dir, out, names=names, addresses=addresses)
    click.echo(f"This machine's new key: {HallFiles.of(data_dir).folder.resolve()}/request.key (0600, stays here)")
    click.echo(f"The certificate signing request (public): {out.resolve()}")
    click.echo(f"  its key id: {key_id}  (the CA's machine prints it when it signs: compare)")
    click.echo(
        f"On the machine holding the hall's CA: wordjudge hall cert --sign {out}; then here: wordjudge hall cert "
        f"--install {out.with_suffix('.pem')}"
    )


def _sign(data_dir: Path, path: Path, out: Path | None) -> None:
    from wordjudge.hall.cert_requests import sign_request

    signed = sign_request(data_dir, path, out)
    click.echo(f"Signed with the hall's CA: {signed.path.resolve()}")
    click.echo(f"  for the key id: {signed.key_id}  (compare with the one --request printed there)")
    click.echo(f"  for: {', '.join(signed.names)}")
    click.echo(f"  valid until {signed.cert.not_valid_after_utc:%Y-%m-%d}")
    click.echo(f"On the machine that made the request: wordjudge hall cert --install {signed.path}")


def _install(data_dir: Path, path: Path, addresses: list[Address]) -> None:
    from wordjudge.hall.cert_requests import install_cert
    from wordjudge.hall.certs import HallFiles, common_name, fingerprint_lines, names_of

    served = install_cert(data_dir, path, addresses=addresses)
    files = HallFiles.of(data_dir)
    assert served.ca is not None
    click.echo(f"Installed this machine's certificate: {files.cert.resolve()} (key {files.key.name}, 0600)")
    click.echo(f"  valid until {served.expires:%Y-%m-%d}, for: {', '.join(names_of(served.cert))}")
    click.echo(f"  signed by the hall's certificate authority {common_name(served.ca)!r}, SHA-256 fingerprint:")
    for line in fingerprint_lines(served.ca):
        click.echo(f"    {line}")
    for warning in served.warnings:
        click.echo(f"Warning: {warning.text()}")
    click.echo("wordjudge serve serves HTTPS with it from its next start (restart a running server)")


def _names_and_addresses(
    host: str, public_url: str | None, mdns_name: str, extra: tuple[str, ...]
) -> tuple[list[str], list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    """The host names and addresses this machine's certificate names: its host name and ``<host name>.local``,
    ``<mdns_name>.local``, ``localhost``, the loopback addresses, ``--host`` if an address, --public-url's host
    and the extra ones given (each a name or an address). Raises :class:`InvalidInput` for an extra that is
    neither."""
    from wordjudge.hall.certs import a_host_name

    hostname = socket.gethostname().split(".")[0].lower()
    names = [hostname, f"{hostname}.local", "localhost"]
    if mdns_name:
        names.append(f"{mdns_name.lower()}.local")
    addresses = [ipaddress.ip_address(a) for a in LOOPBACK]
    given = [host, urlsplit(public_url).hostname or "" if public_url else "", *extra]
    for item in (part for text in given for part in text.split()):
        try:
            address = ipaddress.ip_address(item.strip("[]"))
        except ValueError:
            if not a_host_name(item):
                raise InvalidInput("error.tls.bad_name", name=item) from None
            names.append(item.lower().rstrip("."))
            continue
        if not address.is_unspecified:
            addresses.append(address)
    return names, addresses
