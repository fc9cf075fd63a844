"""``wordjudge device`` and ``wordjudge td``: enrol and revoke devices, manage TD accounts (at the server)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import segno

from wordjudge.access.access_store import AccessStore
from wordjudge.base.datadir import open_event_folder, serving_server
from wordjudge.cli.folder import say_folder, say_if_not_served, served_folder
from wordjudge.cli.language import cli_language, cli_time, role_word
from wordjudge.cli.options import F, setting_options
from wordjudge.model.auth import Role, cli_principal
from wordjudge.service.links import printed_pairing_links
from wordjudge.service.settings import Settings, load_settings
from wordjudge.tournament.event_loading import load_event


@contextmanager
def _store(
    data_dir: Path | None, database: str | None, *, writes: bool = True, works: str | None = None
) -> Iterator[tuple[AccessStore, Settings]]:
    """The access store of the server's folder. ``works``: what the command makes ("the code"), said to work only
    once a server runs on the folder when none does, before it is made."""
    settings = served_folder(data_dir, database)  # never a new folder made by mistake, whose codes no server knows
    if writes:
        say_folder(settings.data_dir)
    if works:
        say_if_not_served(settings.data_dir, works)
    # A folder that served the demo and now has an event file: the demo's devices are set aside first.
    open_event_folder(settings.data_dir, demo=load_event(settings.data_dir).demo)
    store = AccessStore(settings.location).open()
    try:
        yield store, settings
    finally:
        store.close()


def _division(settings: Settings, division: str | None) -> str | None:
    return load_event(settings.data_dir).division(division).name if division else None


_data_dir_option = setting_options("data_dir", "database")


# A runner's device is typed as the console names it (handheld) or as the API does (runner).
_HANDHELD = "handheld"
_ROLE = click.Choice([Role.KIOSK.value, _HANDHELD, Role.RUNNER.value])
_ADD_ROLE = click.Choice([Role.KIOSK.value, _HANDHELD, Role.RUNNER.value, Role.MONITOR.value])  # a monitor: add only


def _role(typed: str) -> Role:
    return Role.RUNNER if typed == _HANDHELD else Role(typed)


@click.group()
def device() -> None:
    """Enrol, list and revoke kiosks, runners' handhelds and monitors (Prometheus)."""


@device.command("add")
@click.argument("name")
@click.option(
    "--role",
    type=_ADD_ROLE,
    required=True,
    help="kiosk (self-adjudication), handheld (a runner's; runner is the same) or monitor (reads GET /metrics only, "
    "e.g. Prometheus).",
)
@click.option("--division", help="Limit the device to this division of the event.")
@_data_dir_option
def device_add(name: str, role: str, division: str | None, data_dir: Path | None, database: str | None) -> None:
    """Enrol a device and print its token, once: clients send it as 'Authorization: Bearer TOKEN'."""
    with _store(data_dir, database, works="its token") as (store, settings):
        enrolled = store.devices.add(name, _role(role), _division(settings, division), by=cli_principal().actor)
    said = f"{role_word(enrolled.device.role)}{f', division {division}' if division else ''}"
    click.echo(f"Enrolled {enrolled.device.name} ({said}).", err=True)
    click.echo("Its token, shown this once (only its hash is kept):", err=True)
    click.echo(enrolled.token)


@device.command("pair")
@click.option(
    "--role", type=_ROLE, required=True, help="kiosk (self-adjudication) or handheld (a runner's; runner is the same)."
)
@click.option("--division", help="Limit the device to this division of the event.")
@click.option("--name", help="The device's name (default: the first free kiosk-NN or handheld-NN, e.g. kiosk-01).")
@setting_options("data_dir", "database", "public_url", "host", "port", "mdns_name")
def device_pair(role: str, division: str | None, name: str | None, data_dir: Path | None, **server: Any) -> None:
    """Print a one-time pairing code (30 minutes), and a QR code of its link for phones.

    The link points at --public-url, or else at NAME.local (--mdns-name) when --host is a LAN
    address, with a link by IP address too, or else at --host and --port (as given to serve; by default, those
    of the server running on the data folder, as its server.lock records them).
    """
    with _store(data_dir, server.get("database"), works="the code") as (store, settings):
        code = store.pairing.create_code(_role(role), _division(settings, division), name, by=cli_principal().actor)
        lang = cli_language(settings)
    served = _running_server_settings(load_settings(data_dir=data_dir, **server))
    links = printed_pairing_links(served, code.role, code.code)
    until = cli_time(code.expires_at, lang)
    click.echo(f"Pairing code: {code.code}  ({code.device_name}: one {role_word(code.role)}, until {until})")
    click.echo(f"Link: {links.link}")
    if links.by_ip:
        click.echo(f"Or, for a device that cannot open {served.mdns_name.lower()}.local: {links.by_ip}")
    if links.note:
        click.echo(f"Note: {links.note}", err=True)
    if sys.stdout.isatty():
        segno.make(links.link, error="m").terminal(compact=True)


def _running_server_settings(settings: Settings) -> Settings:
    """``settings`` with the host and port of the server running on the data folder (server.lock), unless given."""
    holder = serving_server(settings.data_dir)
    if holder is None:
        return settings
    known = {"host": holder.host, "port": holder.port}
    ran = {key: value for key, value in known.items() if value is not None and key not in settings.model_fields_set}
    return settings.model_copy(update=ran)


@device.command("list")
@_data_dir_option
def device_list(data_dir: Path | None, database: str | None) -> None:
    """Every device: name, role, division, last seen, state."""
    with _store(data_dir, database, writes=False) as (store, settings):
        devices = store.devices.all()
        lang = cli_language(settings)
    if not devices:
        click.echo("No devices enrolled (wordjudge device add, or wordjudge device pair).")
    for item in devices:
        state = (
            f"revoked {cli_time(item.revoked_at, lang)} by {item.revoked_by}"
            if item.revoked_at
            else ("online" if item.online else "offline")
        )
        seen = cli_time(item.last_seen_at, lang) if item.last_seen_at else "never"
        click.echo(f"{item.name}  {role_word(item.role)}  division {item.division or 'any'}  last seen {seen}  {state}")


@device.command("revoke")
@click.argument("name")
@_data_dir_option
def device_revoke(name: str, data_dir: Path | None, database: str | None) -> None:
    """Revoke a device: its next request fails."""
    with _store(data_dir, database) as (store, settings):
        revoked = store.devices.revoke(name, by=cli_principal().actor)
        lang = cli_language(settings)
    when = cli_time(revoked.revoked_at, lang) if revoked.revoked_at else "?"
    click.echo(f"{revoked.name} revoked at {when} by {revoked.revoked_by}.")


@click.group()
def td() -> None:
    """TD accounts for the console: add, list, change a password, disable."""


def _password_option(command: F) -> F:
    return click.option(
        "--password-stdin", is_flag=True, help="Read the password from the first line of stdin (for scripts)."
    )(command)


def _read_password(password_stdin: bool) -> str:
    if password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    password: str = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    return password


@td.command("add")
@click.argument("name")
@_password_option
@_data_dir_option
def td_add(name: str, password_stdin: bool, data_dir: Path | None, database: str | None) -> None:
    """Add a TD (or deputy) who signs in to the console with NAME and a password (10+ characters)."""
    settings = served_folder(data_dir, database)  # a wrong folder is refused before the password is asked for
    say_if_not_served(settings.data_dir, "this account")
    password = _read_password(password_stdin)
    with _store(data_dir, database) as (store, _):
        account = store.tds.add(name, password, by=cli_principal().actor)
    click.echo(f"TD {account.name} added.")


@td.command("password")
@click.argument("name")
@_password_option
@_data_dir_option
def td_password(name: str, password_stdin: bool, data_dir: Path | None, database: str | None) -> None:
    """Set a TD's password (and re-enable the account); their console sessions end."""
    served_folder(data_dir, database)  # a wrong folder is refused before the password is asked for
    password = _read_password(password_stdin)
    with _store(data_dir, database) as (store, _):
        store.tds.set_password(name, password)
    click.echo(f"Password of {name} changed; their sessions are ended.")


@td.command("disable")
@click.argument("name")
@_data_dir_option
def td_disable(name: str, data_dir: Path | None, database: str | None) -> None:
    """Disable a TD account; its console sessions end."""
    with _store(data_dir, database) as (store, _):
        store.tds.disable(name)
    click.echo(f"TD {name} disabled.")


@td.command("list")
@_data_dir_option
def td_list(data_dir: Path | None, database: str | None) -> None:
    """The TD accounts."""
    with _store(data_dir, database, writes=False) as (store, settings):
        accounts = store.tds.all()
        lang = cli_language(settings)
    if not accounts:
        click.echo("No TD accounts (wordjudge td add NAME).")
    for account in accounts:
        state = f"disabled {cli_time(account.disabled_at, lang)}" if account.disabled_at else "active"
        click.echo(f"{account.name}  added {cli_time(account.created_at, lang)} by {account.created_by}  {state}")
