"""``wordjudge database init``: a PostgreSQL database (or an event's schema) made ready by its owner."""

from __future__ import annotations

import click

from wordjudge.cli.options import told


@click.group()
def database() -> None:
    """The PostgreSQL database that holds an event's state (see --database on serve)."""


@database.command("init")
@click.option(
    "--database",
    "url",
    envvar="WORDJUDGE_DATABASE",
    required=True,
    metavar="postgresql://OWNER@HOST:PORT/DB",
    help="The database (its search_path: the event's schema), as the role that is to own the tables. "
    "[env: WORDJUDGE_DATABASE]",
)
@click.option(
    "--server-role",
    metavar="ROLE",
    help="The role `wordjudge serve` connects as: it may read and add records, never change, remove or unprotect one.",
)
@click.option(
    "--key-id",
    metavar="ID",
    help="The id of the hall key (16 hex digits, as `wordjudge standby key` prints it), recorded for the hall's "
    "servers to check their folder's key against: the server's role may not record one.",
)
def database_init(url: str, server_role: str | None, key_id: str | None) -> None:
    """Create or upgrade the tables as their owner, and give the server's role what it needs and no more."""
    from wordjudge.hall.pg_setup import prepare
    from wordjudge.storage.postgres import check_url, shown

    with told(url):
        applied = prepare(check_url(url), server_role, key_id)
    granted = f"; {server_role} may serve it" if server_role else ""
    recorded = f"; the hall key {key_id} is on record" if key_id else ""
    click.echo(f"{shown(url)}: {len(applied)} migration(s) applied{granted}{recorded}")
