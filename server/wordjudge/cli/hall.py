"""``wordjudge standby``: the hall's standby machine made active by the TD (``promote``), the active machine going
on without a dead standby (``alone``) and waiting for it again once it is back (``require``), and the hall's history
(``status``). See :mod:`wordjudge.hall.roles`; deploy/hall.md has the steps a TD follows when a machine dies."""

from __future__ import annotations

import time
from pathlib import Path

import click

from wordjudge.base.errors import InvalidInput, Message
from wordjudge.cli.options import setting_options, told

_DATABASE = click.option(
    "--database",
    "url",
    envvar="WORDJUDGE_DATABASE",
    required=True,
    metavar="postgresql://USER@HOST:PORT/DB",
    help="This machine's database, as a superuser (promotion is PostgreSQL's own). [env: WORDJUDGE_DATABASE]",
)


@click.group()
def standby() -> None:
    """The hall's standby machine: its place, and taking over when the active machine dies."""


@standby.command("promote")
@_DATABASE
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (the TD has checked the active machine).")
@click.option(
    "--force",
    is_flag=True,
    help="Promote even where no server of the hall answers on this machine, so that whether the active server "
    "still proves itself cannot be checked (the TD has checked that its machine is dead or cut off).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    multiple=True,
    help="The port of this machine's wordjudge server (default: every port this machine listens on is asked, and "
    "the hall's servers are those whose health names the hall the database records).",
)
def standby_promote(url: str, yes: bool, force: bool, port: tuple[int, ...]) -> None:
    """Make this machine's database (a standby) the hall's primary: its server becomes the active one, and the old
    active server is fenced (it never adjudicates again).

    Refused while the active server still proves itself the hall's active server to this machine's server (an
    answer signed with the hall key: anything else at its address proves nothing): stop it (or unplug its
    machine) first. Refused too, unless ``--force``, where that cannot be checked: no server of the hall answers on
    this machine, or it has not heard its peers yet.
    """
    from wordjudge.hall import roles as hall

    with told(url):
        place = hall.place(_checked(url))
        if not place.standby:
            raise InvalidInput("error.hall.not_standby", url=_shown(url))
        latest = place.latest
        active = latest.server_url if latest else ""
        if latest is not None and active:
            _refuse_while_active(latest.server_id, active, list(port), force)
        where = active or "the active machine"
        if not yes:
            click.confirm(
                f"Make this machine the active one? {where} must be dead or cut off: it will never adjudicate again",
                abort=True,
            )
        hall.promote(url)
    click.echo(
        f"{_shown(url)} promoted: this machine's server takes over within seconds (its health then says active); "
        f"{where} is fenced. Kiosks and handhelds follow by themselves. This machine runs alone now: make the "
        "other the standby again (deploy/hall.md) before it can take over in turn."
    )


@standby.command("alone")
@_DATABASE
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (the TD has checked the standby machine).")
def standby_alone(url: str, yes: bool) -> None:
    """On the active machine, when the standby machine is dead: go on without it. Every commit waits for the
    synchronous standby, so the hall stops while it is gone; from this command on, the verdicts live on this
    machine only.

    The standby machine must be dead or switched off, and never promoted afterwards: it lacks every verdict given
    from now on, until it follows this machine again (then run ``wordjudge standby require``).
    """
    from wordjudge.hall import roles as hall

    with told(url):
        if not yes:
            click.confirm(
                "Go on without the standby? It must be dead or switched off, and must never be promoted: it lacks "
                "every verdict given from now on, until it follows this machine again",
                abort=True,
            )
        hall.go_alone(_checked(url))
    click.echo(
        f"{_shown(url)} waits for no standby: the hall goes on, its verdicts on this machine only (health and the "
        "console say so). When the standby machine is back and follows this one, run: wordjudge standby require"
    )


@standby.command("require")
@_DATABASE
def standby_require(url: str) -> None:
    """On the active machine, once the standby machine is back and streams from it: make every commit wait for it
    again, so that a verdict acknowledged is on both machines. Refused while no standby streams (the hall would
    stop)."""
    from wordjudge.hall import roles as hall

    with told(url):
        synchronous = hall.require_standby(_checked(url))
    if not synchronous:
        raise click.ClickException(
            f"{_shown(url)} asked for a synchronous standby, but none was seen streaming synchronously within "
            "10 s: the hall's commits wait for it. Check the standby (wordjudge standby status on it), or run "
            "wordjudge standby alone again"
        )
    click.echo(f"{_shown(url)} waits for its synchronous standby again: every verdict is on both machines")


def _checked(url: str) -> str:
    from wordjudge.storage.postgres import check_url

    return check_url(url)


def _shown(url: str) -> str:
    from wordjudge.storage.postgres import shown

    return shown(url)


@standby.command("status")
@_DATABASE
def standby_status(url: str) -> None:
    """The hall's history (which server was active from when), and whether this database is a standby."""
    from wordjudge.hall import roles as hall

    with told(url):
        stands = hall.standing(_checked(url))
    click.echo(f"{_shown(url)}: {'a standby (read-only)' if stands.standby else 'takes writes (primary)'}")
    if not stands.standby:
        if stands.waits:
            click.echo(
                "its commits wait for a synchronous standby that does not stream: the hall is stopped "
                "(if the standby machine is dead: wordjudge standby alone)"
            )
        elif hall.alone(stands.streaming) is False:
            click.echo("a synchronous standby streams from it: every verdict is on both machines")
        elif stands.streaming:
            click.echo("a standby streams from it, but its commits do not wait for it: wordjudge standby require")
        elif stands.streaming is not None:
            click.echo("no standby streams from it: its verdicts live on this machine only")
        else:
            click.echo("this user may not see its standbys' state: run this as the postgres user to see it")
    for epoch in stands.epochs:
        click.echo(f"epoch {epoch.epoch}: {epoch.server_url or '(a server alone)'} active from {epoch.since}")
    if not stands.epochs:
        click.echo("no server has been active on this database yet")


_PROVEN_WITHIN_S = 5.0  # how recent this machine's server's proven answer of the active server must be to count
_LOOKS_S = 4.0  # how long a proof heard is looked at again before it refuses: a few of the server's looks


def _refuse_while_active(server_id: str, active: str, ports: list[int], force: bool) -> None:
    """Raise :class:`InvalidInput` while ``active`` proves itself to a server of the hall on this machine (found by
    :func:`wordjudge.hall.local.local_servers`), or, unless ``force``, where that cannot be checked."""
    from wordjudge.hall.local import asked_again, local_servers

    # A machine that died a moment ago proved itself at the last look: this machine's server looks at its peers
    # every second, so its next looks tell a dead machine from a live one (the TD typed this right after the death).
    deadline = time.monotonic() + _LOOKS_S
    servers = local_servers(server_id, ports=ports or None)
    while True:
        heard = [server.heard_active(active, _PROVEN_WITHIN_S) for server in servers]
        if not any(heard) or time.monotonic() >= deadline:
            break
        time.sleep(0.3)
        servers = asked_again(servers) or servers
    if any(heard):
        raise InvalidInput("error.hall.active_answers", active=active)
    if not servers:
        unchecked = Message("error.hall.unchecked.no_server", ports=", ".join(map(str, ports)) or "every port")
    elif None in heard:
        unchecked = Message("error.hall.unchecked.not_asked", server=servers[heard.index(None)].url)
    else:
        shown = ", ".join(server.url for server in servers)
        click.echo(f"this machine's server ({shown}) has not heard {active} prove itself: it is not in the way")
        return
    if not force:
        raise InvalidInput("error.hall.unchecked", active=active, why=unchecked)
    click.echo(f"--force: {unchecked.text()}; promoting as the TD checked {active} is dead or cut off", err=True)


@standby.command("key")
@setting_options("data_dir")
@click.option("--show", is_flag=True, help="Show the key (16 groups of 4 hex digits) to type on the other machine.")
@click.option("--enter", is_flag=True, help="Type the key shown on the other machine (asked, not echoed).")
@click.option(
    "--chrony",
    is_flag=True,
    help="Print the hall's chrony key, made from the hall key, as /etc/chrony/chrony.keys takes it (the same on both).",
)
def standby_key(data_dir: Path | None, show: bool, enter: bool, chrony: bool) -> None:
    """Make the hall key in this data folder (``hall.key``: the hall's servers sign what they say to each other,
    and make their devices' proof keys, with it), or say the one there; ``--show`` shows it to type on the hall's
    other machine, whose ``--enter`` takes it: no copy of the key is left on a USB stick (deploy/hall.md, set-up
    step 3). Prints the key's id, as each server's health shows it: the two machines' must be the same.
    ``--chrony`` prints the hall's chrony key (deploy/hall.md, set-up step 5), made from the hall key so that no
    copy of it travels either; it never makes a hall key, and refuses a folder that holds none."""
    from wordjudge.hall.peers import hall_key
    from wordjudge.hall.proof import enter_key, shown_key, typed_key
    from wordjudge.service.settings import load_settings

    if show + enter + chrony > 1:
        raise click.UsageError("--show, --enter and --chrony are each a step of their own: give one of them")
    folder = load_settings(data_dir=data_dir).data_dir
    path = (folder / "hall.key").resolve()
    try:
        if chrony:
            found = hall_key(folder)
            if found is None:
                raise click.ClickException(
                    f"{path} holds no hall key to make chrony's key from: make it (`standby key`) or type it "
                    "(`standby key --enter`) first (deploy/hall.md, set-up step 3)"
                )
            click.echo(found.chrony_key())
            return
        if enter:
            typed = typed_key(click.prompt("The hall key, as the other machine shows it", hide_input=True))
            written = enter_key(folder, typed)
            click.echo(f"{path} {'now holds' if written else 'already holds'} the hall key {typed.id}")
            return
        had = hall_key(folder)
        key = had or hall_key(folder, make=True)
    except InvalidInput as exc:
        raise click.ClickException(exc.message) from None
    except OSError as exc:
        raise click.ClickException(f"{folder.resolve()} cannot hold the hall key: {exc}") from None
    assert key is not None
    if show:
        click.echo(f"{shown_key(key)}\n(the hall key {key.id}: type it with `wordjudge standby key --enter` there)")
        return
    click.echo(
        f"{path} {'holds' if had else 'now holds'} the hall key {key.id}. On the hall's other machine, type it in "
        "with `standby key --enter` (`standby key --show` here shows it); record its id with `database init "
        f"--key-id {key.id}` as the database's owner (deploy/hall.md, set-up step 3)"
    )
