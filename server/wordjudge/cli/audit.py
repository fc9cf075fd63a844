"""``wordjudge audit`` (verify, backup, accept-clock, accept-clock-step, export, tail) and ``wordjudge witness``: the
log, from the command line."""

from __future__ import annotations

import os
import socket
import ssl
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

import click

from wordjudge.base.datadir import FolderInUse
from wordjudge.base.errors import AuditUnavailable, Conflict, InvalidInput, Message, WordjudgeError
from wordjudge.base.messages import duration
from wordjudge.cli.language import cli_language, cli_time
from wordjudge.cli.options import F, setting_options
from wordjudge.judging.export import ExportFormat, export
from wordjudge.judging.final_verdict import linked_families
from wordjudge.judging.record_views import record_line
from wordjudge.log.audit import AUDIT_FILE, AuditLog, open_log
from wordjudge.log.chain import HeadMark, read_heads
from wordjudge.model.auth import cli_principal
from wordjudge.model.input_rules import MAX_ROUND
from wordjudge.model.records import Kind, RecordFilter, Verdict, utc_time
from wordjudge.service.settings import Settings, load_settings
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.clock_correction import accept_correction, correction_said
from wordjudge.tournament.clock_steps import CHANNEL as CLI_CHANNEL
from wordjudge.tournament.clock_steps import accept_step
from wordjudge.words.editions import DEMO_NAME
from wordjudge.words.normal_form import normalise
from wordjudge.words.profile import Catalog

T = TypeVar("T")


@click.group()
def audit() -> None:
    """The audit log: verify its hash chain, export it, follow it."""


def _audit_log(settings: Settings) -> AuditLog:
    """The event's log, where the settings say (raises :class:`click.ClickException` for the wrong place)."""
    try:
        return open_log(settings.location)
    except InvalidInput as exc:
        raise click.ClickException(exc.message) from None


def _record_filters(command: F) -> F:
    options = [
        click.option("--division"),
        click.option("--round", "round_number", type=click.IntRange(1, MAX_ROUND)),
        click.option("--table"),
        click.option("--kind", type=click.Choice([k.value for k in Kind])),
        click.option("--verdict", type=click.Choice([v.value for v in Verdict])),
        click.option("--actor"),
        click.option("--word", help="Records whose words include this word."),
        click.option("--since", metavar="TIME", help="ISO time with a zone, e.g. 2026-11-21T09:00+01:00 (inclusive)."),
        click.option("--until", metavar="TIME", help="ISO time with a zone (exclusive)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@audit.command("verify")
@click.option(
    "--expect-head",
    "heads",
    metavar="ID:HEX",
    multiple=True,
    help="A head as a docket or the console shows it (e.g. 42:3f9a0c17b2d4e865); repeatable.",
)
@click.option(
    "--heads",
    "heads_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A file of heads, one a line, such as a witness writes (wordjudge witness).",
)
@setting_options("data_dir", "database", "language")
def audit_verify(heads: tuple[str, ...], heads_file: Path | None, **flags: Any) -> None:
    """Check the whole log: its hash chain, each record's consistency, its checkpoints, and every head given.

    As the server's start check, names a log cut or rewritten below a checkpoint; a head from a docket or a
    witness also catches a log rewritten after it, or cut off before it, past the last checkpoint.
    Names the first bad record and exits 1 if the log fails; exits 2 for a head that cannot be read.
    The result is said in the event's language (or --language's).
    """
    try:
        marks = [HeadMark.parse(text, "--expect-head") for text in heads]
        if heads_file is not None:
            marks += read_heads(heads_file)
    except InvalidInput as exc:
        raise click.UsageError(exc.message) from None
    settings = load_settings(**flags)
    _verify_and_report(_audit_log(settings), cli_language(settings), marks)


def _verify_and_report(log: AuditLog, lang: str, marks: list[HeadMark] | None = None, *, copy: bool = False) -> None:
    """Verify ``log``, print the result in ``lang``; exit 1 if it fails (for a ``copy``, a backup just written,
    saying that it was written)."""
    try:
        result = log.verify(marks or ())
    finally:
        log.close()
    if not result.ok:
        broken = "cli.backup_broken" if copy else "cli.verify"
        raise click.ClickException(Message(broken, path=log.where, result=result.message()).text(lang))
    click.echo(Message("cli.verify", path=log.where, result=result.message()).text(lang))


@audit.command("backup")
@click.argument("destination")
@setting_options("data_dir", "database", "language")
def audit_backup(destination: str, **flags: Any) -> None:
    """Copy the audit log to DESTINATION (a file, or a folder for a dated file), safely while serving.

    The copy's hash chain is verified (the result said in the event's language, or --language's); the
    command exits 1 if it does not verify. A log in PostgreSQL is copied by PostgreSQL's own tools.
    """
    settings = load_settings(**flags)
    location = _audit_log(settings).location  # the event's log, where the settings say
    # A Path forgets a trailing slash: "backups/" meant a folder, never a file named "backups".
    if destination.endswith(("/", os.sep)) and not Path(destination).is_dir():
        raise click.ClickException(f"{destination} is not a folder: create it first, or give a file name")
    # Copied by its place: a log in PostgreSQL is refused (error.audit.backup_in_database: pg_dump copies it).
    copy = location.dialect.place.backup(location, AUDIT_FILE, Path(destination))
    _verify_and_report(AuditLog(StateLocation(copy.parent), file=copy.name), cli_language(settings), copy=True)


def _with_stopped_log(settings: Settings, write: Callable[[AuditLog], T]) -> T:
    """``write(log)`` on the log as its only writer: refused, in the event's language, while a server serves the
    folder or holds the database's writer (it checks the log when it starts, and would not see the record)."""
    lang = cli_language(settings)
    location = settings.location
    try:
        location.dialect.place.refuse_if_served(location)  # the data folder's lock; else a writer's lock (below)
    except FolderInUse as exc:
        said = Message(
            "cli.clock_step.served_folder", pid=str(exc.holder.pid or "?"), path=str(settings.data_dir.resolve())
        )
        raise click.ClickException(said.text(lang)) from None
    log = _audit_log(settings)
    try:
        log.start()
        return write(log)
    except AuditUnavailable as exc:
        if isinstance(exc.__cause__, Conflict):  # another server's writer holds the log
            raise click.ClickException(Message("cli.clock_step.served_database", path=log.where).text(lang)) from None
        raise click.ClickException(exc.message) from None
    finally:
        log.close()


@audit.command("accept-clock-step")
@click.argument("record_id", metavar="ID", type=click.IntRange(min=1))
@setting_options("data_dir", "database", "language")
def audit_accept_clock_step(record_id: int, **flags: Any) -> None:
    """Accept record ID, dated before the record it follows, as a clock set back: the log verifies again and a
    server serves it.

    For a log written before wordjudge held record times (it no longer writes such a record). Only where the
    chain breaks first, for that reason alone, on a chain otherwise intact: anything else is refused, naming the
    real problem, and nothing is written. The acceptance is a record of the log, by the command line's user. Stop
    the server first (it checks the log when it starts). The result is said in the event's language.
    """
    settings = load_settings(**flags)
    lang = cli_language(settings)
    outcome = _with_stopped_log(settings, lambda log: accept_step(log, record_id, actor=cli_principal().actor))
    if isinstance(outcome, Message):
        raise click.ClickException(outcome.text(lang))
    record, step = outcome
    accepted = Message(
        "cli.clock_step.accepted",
        id=str(step.id),
        time=cli_time(step.time, lang),
        previous=cli_time(step.previous, lang),
        size=duration(step.seconds),
        record=str(record.id),
        actor=record.actor,
    )
    click.echo(accepted.text(lang))
    if step.others:
        click.echo(Message("cli.clock_step.others", ids=", ".join(map(str, step.others))).text(lang))
    else:
        _verify_and_report(_audit_log(settings), lang)


@audit.command("accept-clock")
@setting_options("data_dir", "database", "language")
def audit_accept_clock(**flags: Any) -> None:
    """Accept the clock's correction: record times held at the log's last record's, ahead of this machine's clock
    (it was set back, after records were written while it was ahead), follow the clock again.

    The server asks for it in health and in the console (which has the same action) once the hold passes 5 minutes.
    A change record, by the command line's user, says from what time to what time; `audit verify` passes. Refused,
    writing nothing, if record times are not held. Stop the server first (it checks the log when it starts).
    """
    settings = load_settings(**flags)
    lang = cli_language(settings)
    outcome = _with_stopped_log(
        settings,
        lambda log: accept_correction(
            log, server=socket.gethostname(), actor=cli_principal().actor, channel=CLI_CHANNEL
        ),
    )
    if isinstance(outcome, Message):
        raise click.ClickException(outcome.text(lang))
    click.echo(correction_said(outcome, shown=lambda moment: cli_time(moment, lang)).text(lang))
    _verify_and_report(_audit_log(settings), lang)


@audit.command("export")
@click.option("--format", "export_format", type=click.Choice([f.value for f in ExportFormat]), required=True)
@click.option(
    "--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="File to write (default: stdout)."
)
@_record_filters
@setting_options("data_dir", "database")
def audit_export(
    export_format: str, output: Path | None, data_dir: Path | None, database: str | None, **filters: Any
) -> None:
    """Export the records (all fields, per-word results included) as CSV or JSON Lines."""
    where = _filter(filters)
    settings = load_settings(data_dir=data_dir, database=database)
    log = _audit_log(settings)
    split_of = _split_tiles(Catalog(settings.data_dir))
    try:
        families = linked_families(log)  # each challenge's final verdict, on its own row
        if output is None:
            count = export(log.iterate(where), sys.stdout, ExportFormat(export_format), families, split_of)
        else:
            with output.open("w", encoding="utf-8", newline="") as handle:
                count = export(log.iterate(where), handle, ExportFormat(export_format), families, split_of)
    finally:
        log.close()
    click.echo(f"exported {count} record(s)", err=True)


def _split_tiles(catalog: Catalog) -> Callable[[str], Sequence[str] | None]:
    """A lexicon's split tiles by its name, from the folder's lexicons, each opened once when first asked for; None
    for one the folder no longer has (its words keep their stored form)."""
    known: dict[str, Sequence[str] | None] = {}

    def split_of(name: str) -> Sequence[str] | None:
        if name.casefold() == DEMO_NAME:  # plain letters (and not compiled by an export)
            return ()
        if name not in known:
            try:
                known[name] = catalog.open(name).split
            except WordjudgeError:  # gone, or not readable: the stored form says the tiles
                known[name] = None
        return known[name]

    return split_of


@audit.command("tail")
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=10, show_default=True)
@click.option("--follow", "-f", is_flag=True, help="Keep printing new records as they are written.")
@setting_options("data_dir", "database", "language")
def audit_tail(count: int, follow: bool, **flags: Any) -> None:
    """Show the last records, one line each (the TD's view), and optionally follow new ones.

    The lines are in the event's language (or --language's), times in this machine's time zone."""
    settings = load_settings(**flags)
    lang = cli_language(settings)
    log = _audit_log(settings)
    try:
        newest = log.find(RecordFilter(), limit=max(count, 1))
        last = newest[0].id if newest else 0
        for record in reversed(newest[:count]):
            click.echo(record_line(record, lang))
        while follow:
            time.sleep(1)
            for record in log.iterate(after_id=last):
                click.echo(record_line(record, lang))
                last = record.id
    except KeyboardInterrupt:
        pass
    finally:
        log.close()


def _filter(filters: dict[str, Any]) -> RecordFilter:
    """The record filter from the command's options; times read as the API reads them (records.utc_time)."""
    try:
        since = utc_time(filters["since"], "--since") if filters["since"] else None
        until = utc_time(filters["until"], "--until") if filters["until"] else None
    except InvalidInput as exc:
        raise click.UsageError(exc.message) from None
    return RecordFilter(
        division=filters["division"],
        round=filters["round_number"],
        table=filters["table"],
        kind=Kind(filters["kind"]) if filters["kind"] else None,
        verdict=Verdict(filters["verdict"]) if filters["verdict"] else None,
        actor=filters["actor"],
        word=normalise(filters["word"]) if filters["word"] else None,
        since=since,
        until=until,
    )


@click.command()
@click.argument("url")
@click.option("--out", "-o", type=click.Path(path_type=Path, dir_okay=False), required=True, help="The heads file.")
@click.option(
    "--token",
    envvar="WORDJUDGE_WITNESS_TOKEN",
    required=True,
    help="A monitor's token (wordjudge device add NAME --role monitor, at the server). [env: WORDJUDGE_WITNESS_TOKEN]",
)
@click.option("--every", type=click.FloatRange(0.5, 3600), default=5.0, show_default=True, help="Seconds between looks")
@click.option("--once", is_flag=True, help="Look once and stop (for scripts and cron).")
@click.option(
    "--ca",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    envvar="WORDJUDGE_WITNESS_CA",
    default=None,
    help="For an https URL: the hall's CA certificate (tls/hall-ca.pem of the server's data folder, or the server's "
    "/hall-ca.pem with its fingerprint checked), trusted alone; none: the system's CAs. [env: WORDJUDGE_WITNESS_CA]",
)
def witness(url: str, out: Path, token: str, every: float, once: bool, ca: Path | None) -> None:
    """Witness the audit log of the server at URL from this machine: append its head to OUT every few seconds.

    Run it on another machine than the server, with a monitor's token. Later, `wordjudge audit verify
    --heads OUT` at the server checks every head witnessed. It warns at once if the log's history changes.
    """
    import httpx  # here, not at the top: every other command starts faster without it

    from wordjudge.log.witness import Witness

    try:
        verify = _trusting(ca) if ca is not None else True
        watcher = Witness(url, token, out, client=httpx.Client(timeout=10, verify=verify))
    except InvalidInput as exc:
        raise click.UsageError(exc.message) from None
    click.echo(f"witnessing {url} into {out.resolve()}", err=True)
    with watcher:
        if once:
            try:
                seen = watcher.observe()
            except (httpx.HTTPError, InvalidInput) as exc:
                raise click.ClickException(f"cannot read the head from {url}: {exc}") from None
            click.echo(seen.problem or (f"head {seen.head}" if seen.head else "head unchanged"))
            if seen.problem:
                sys.exit(1)
            return
        with suppress(KeyboardInterrupt):
            watcher.run(every, lambda line: click.echo(f"{time.strftime('%H:%M:%S')} {line}", err=True))


def _trusting(ca: Path) -> ssl.SSLContext:
    """A client context that trusts the CA certificate ``ca`` alone. Raises :class:`InvalidInput` if it is not one."""
    try:
        return ssl.create_default_context(cafile=str(ca))
    except (ssl.SSLError, OSError):
        raise InvalidInput("error.tls.not_a_certificate", path=str(ca)) from None
