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
def hall_cert(
    data_dir: Path | None,
    host: str | None,
    public_url: str | None,
    mdns_name: str | None,
    extra: tuple[str, ...],
    hall_name: str | None,
) -> None:
    """Make the hall's certificate authority in the data folder if it has none (on the hall's other machine it
    comes with the copied folder), then this machine's server certificate, signed by it: for its host name,
    NAME.local, its LAN addresses and --public-url's host. Prints the CA's fingerprint, which the TD compares on
    each kiosk and phone made to trust it. wordjudge serve then serves HTTPS (restart a running server)."""
    from wordjudge.hall.certs import common_name, fingerprint_lines, make_hall_certs
    from wordjudge.service.mdns import lan_addresses
    from wordjudge.service.settings import load_settings

    settings = load_settings(data_dir=data_dir, host=host, public_url=public_url, mdns_name=mdns_name, https="off")
    names, addresses = _names_and_addresses(settings.host, settings.public_url, settings.mdns_name, extra)
    # Every LAN address of the machine, whatever --host: the server may listen on 0.0.0.0 tomorrow.
    addresses += [ipaddress.ip_address(a.split("%")[0]) for a in lan_addresses("::") + lan_addresses("0.0.0.0")]
    say_folder(settings.data_dir)
    try:
        made = make_hall_certs(settings.data_dir, names=names, addresses=addresses, hall=hall_name)
    except OSError as exc:
        raise click.ClickException(
            f"{settings.data_dir.resolve()} cannot hold the hall's certificates: {exc}"
        ) from None
    shown = common_name(made.ca)
    said = "Made" if made.ca_made else "Found (copied with the folder)"
    click.echo(f"{said} the hall's certificate authority {shown!r}: {made.files.ca_cert.resolve()}")
    click.echo(f"  valid until {made.ca.not_valid_after_utc:%Y-%m-%d}; its key: {made.files.ca_key.resolve()} (0600)")
    click.echo("  SHA-256 fingerprint (compare it on each kiosk and phone made to trust the hall):")
    for line in fingerprint_lines(made.ca):
        click.echo(f"    {line}")
    click.echo(f"This machine's certificate: {made.files.cert.resolve()} (key {made.files.key.name}, 0600)")
    click.echo(f"  valid until {made.cert.not_valid_after_utc:%Y-%m-%d}, for: {', '.join(made.names)}")
    click.echo(f"  and the addresses: {', '.join(str(a) for a in made.addresses)}")
    click.echo(
        "wordjudge serve serves HTTPS with it from its next start. On the hall's other machine, copy this data "
        "folder there (deploy/hall.md) and run wordjudge hall cert there too; trust the CA on each kiosk with "
        "deploy/kiosk-setup.sh"
    )


def _names_and_addresses(
    host: str, public_url: str | None, mdns_name: str, extra: tuple[str, ...]
) -> tuple[list[str], list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    """The host names and addresses this machine's certificate names: its host name and ``<host name>.local``,
    ``<mdns_name>.local``, ``localhost``, the loopback addresses, ``--host`` if an address, --public-url's host
    and the extra ones given (each a name or an address). Raises :class:`InvalidInput` for an extra that is
    neither."""
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
            if not _a_host_name(item):
                raise InvalidInput("error.tls.bad_name", name=item) from None
            names.append(item.lower().rstrip("."))
            continue
        if not address.is_unspecified:
            addresses.append(address)
    return names, addresses


def _a_host_name(text: str) -> bool:
    labels = text.rstrip(".").split(".")
    return 0 < len(text) <= 253 and all(
        0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii() and label[0] != "-"
        for label in labels
    )
