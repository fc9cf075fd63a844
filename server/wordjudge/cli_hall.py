"""``wordjudge standby``: the hall's standby machine made active by the TD (``promote``), and the hall's history
(``status``). See :mod:`wordjudge.hall`; deploy/hall.md has the steps a TD follows when a machine dies."""

from __future__ import annotations

import click

from .errors import InvalidInput, WordjudgeError

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
def standby_promote(url: str, yes: bool) -> None:
    """Make this machine's database (a standby) the hall's primary: its server becomes the active one, and the old
    active server is fenced (it never adjudicates again).

    Refused while the active server still answers: stop it (or unplug its machine) first.
    """
    from . import hall
    from .postgres import DatabaseError, check_url, describe, shown

    try:
        place = hall.place(check_url(url))
        if not place.standby:
            raise InvalidInput("error.hall.not_standby", url=shown(url))
        active = place.latest.server_url if place.latest else ""
        if active and hall.ask_peers([active])[0].role == hall.ACTIVE:
            raise InvalidInput("error.hall.active_answers", active=active)
        where = active or "the active machine"
        if not yes:
            click.confirm(
                f"Make this machine the active one? {where} must be dead or cut off: it will never adjudicate again",
                abort=True,
            )
        hall.promote(url)
    except WordjudgeError as exc:
        raise click.ClickException(exc.message) from None
    except DatabaseError as exc:
        raise click.ClickException(f"{shown(url)}: {describe(exc)}") from None
    click.echo(
        f"{shown(url)} promoted: this machine's server takes over within seconds (its health then says active); "
        f"{where} is fenced. Kiosks and handhelds follow by themselves. This machine runs alone now: make the "
        "other the standby again (deploy/hall.md) before it can take over in turn."
    )


@standby.command("status")
@_DATABASE
def standby_status(url: str) -> None:
    """The hall's history (which server was active from when), and whether this database is a standby."""
    from . import hall, postgres
    from .postgres import DatabaseError, check_url, describe, shown

    try:
        connection = postgres.connect(check_url(url), read_only=True, application="wordjudge standby status")
        try:
            (standby_now,) = connection.execute("SELECT pg_is_in_recovery()").fetchone() or (False,)
            epochs = hall.history(connection)
        finally:
            connection.close()
    except WordjudgeError as exc:
        raise click.ClickException(exc.message) from None
    except DatabaseError as exc:
        raise click.ClickException(f"{shown(url)}: {describe(exc)}") from None
    click.echo(f"{shown(url)}: {'a standby (read-only)' if standby_now else 'takes writes (primary)'}")
    for epoch in epochs:
        click.echo(f"epoch {epoch.epoch}: {epoch.server_url or '(a server alone)'} active from {epoch.since}")
    if not epochs:
        click.echo("no server has been active on this database yet")
