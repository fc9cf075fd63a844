"""The data folder as the commands meet it: the server's, never a new one made by mistake.

Every command uses ``wordjudge-data`` in the folder it runs in unless told otherwise (``--data-dir``,
``WORDJUDGE_DATA_DIR``). Run from the wrong folder, a command that enrols a device or adds a TD used to
make a new data folder there and print a code or token that the server did not know. So the commands that
touch access refuse a folder they were not told of that holds no event and no log (:func:`served_folder`),
and every command that writes says which folder it wrote in (:func:`say_folder`).

The commands that prepare an event (``lexicon add``, ``profile add``, ``event init``) work in a new
folder: they are how a TD starts one, and nothing they make is a credential the server must know.
"""

from __future__ import annotations

from pathlib import Path

import click

from wordjudge.base.datadir import LockHolder, serving_server
from wordjudge.base.errors import InvalidInput
from wordjudge.log.connections import AUDIT_FILE, DATABASE_NOTE, check_place
from wordjudge.service.settings import Settings, load_settings
from wordjudge.tournament.event import EVENT_FILE


def holds_an_event(data_dir: Path) -> bool:
    """Whether ``data_dir`` holds an event file, an audit log, or the log of a demo set aside: a folder that
    a server used or that a TD started an event in. A folder that cannot be read counts as one (the command
    then meets the error itself)."""
    try:
        return (
            (data_dir / EVENT_FILE).is_file()
            or (data_dir / AUDIT_FILE).is_file()
            or (data_dir / DATABASE_NOTE).is_file()  # a log in PostgreSQL
            or any(data_dir.glob(f"demo-*/{AUDIT_FILE}"))
        )
    except OSError:
        return True


def served_folder(data_dir: Path | None, database: str | None = None) -> Settings:
    """The settings, with ``data_dir`` and ``database`` (the flags; None: not given), for a command that changes
    or reads who may use the server. Raises :class:`click.ClickException` when the folder was not named (by the
    flag or ``WORDJUDGE_DATA_DIR``) and holds no event and no log, or keeps its state in another database than
    the one given (or none), before anything is written."""
    settings = load_settings(data_dir=data_dir, database=database)
    try:
        check_place(settings.location)
    except InvalidInput as exc:
        raise click.ClickException(exc.message) from None
    if "data_dir" in settings.model_fields_set or holds_an_event(settings.data_dir):
        return settings
    path = settings.data_dir.resolve()
    what = "does not exist" if not path.exists() else f"holds no event and no log (no {EVENT_FILE}, no {AUDIT_FILE})"
    raise click.ClickException(
        f"the data folder {path} {what}, so no server uses it: run this command from the folder where "
        "`wordjudge serve` runs, or name the server's data folder with --data-dir (or WORDJUDGE_DATA_DIR); "
        "to start a new event here, run `wordjudge event init` (or `wordjudge serve`) first"
    )


def say_folder(data_dir: Path) -> None:
    """Print the absolute data folder a command writes in, on stderr (stdout stays what scripts read)."""
    note = "" if holds_an_event(data_dir) else " (new: no event and no audit log there yet)"
    click.echo(f"Data folder: {data_dir.resolve()}{note}", err=True)


def say_if_not_served(data_dir: Path, works: str) -> LockHolder | None:
    """The server running on ``data_dir`` (from its ``server.lock``), or None, said on stderr first: a code or
    account made in a folder no server runs on (a ``wordjudge-data`` left by a serve from the wrong folder) is
    known to no running server. ``works``: what works once a server runs there ("the code", "this account")."""
    holder = serving_server(data_dir)
    if holder is None:
        click.echo(
            f"Note: no server is running on this folder ({data_dir.resolve()}); {works} works once `wordjudge serve` "
            "runs here (or run this command where the server runs, or with its --data-dir)",
            err=True,
        )
    return holder
