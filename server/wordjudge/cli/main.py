"""The ``wordjudge`` command: a thin shell over the domain modules.

Every flag that is a setting is generated from :class:`wordjudge.service.settings.Settings`,
so it has an environment twin (``--data-dir`` / ``WORDJUDGE_DATA_DIR``).
"""

from __future__ import annotations

import errno
import logging
import re
import socket
import sys
from pathlib import Path
from typing import Any

import click

from wordjudge import __version__
from wordjudge.base.datadir import FolderInUse, ServerLock, lock_for_server, refuse_if_served, restrict_umask
from wordjudge.base.errors import WordjudgeError
from wordjudge.base.logs import configure_logging, uvicorn_json_config
from wordjudge.base.messages import Message, render
from wordjudge.cli.access import device, td
from wordjudge.cli.audit import audit, witness
from wordjudge.cli.database import database
from wordjudge.cli.folder import say_folder
from wordjudge.cli.hall import standby
from wordjudge.cli.language import cli_language
from wordjudge.cli.options import setting_options
from wordjudge.model.records import Verdict, verdict_message
from wordjudge.service.links import device_url
from wordjudge.service.processes import Process, Supervisor, end_with_parent
from wordjudge.service.settings import Settings, load_settings
from wordjudge.tournament.event import EVENT_FILE, Event, load_event, write_event_file
from wordjudge.tournament.event import template as event_template
from wordjudge.tournament.served import describe_profile, unverified_claims
from wordjudge.words.editions import load_registry, short
from wordjudge.words.lexicon import DEMO_NAME, Lexicon, Manifest
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import Progress, SourceFormat, WordList, read_word_list

log = logging.getLogger(__name__)

_PROGRESS_MIN_LINES = 50_000


class _Group(click.Group):
    """Turns wordjudge's own errors into a one-line message and exit status 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WordjudgeError as exc:
            raise click.ClickException(exc.message) from None


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="wordjudge")
def main() -> None:
    """wordjudge: challenge adjudication for word-game tournaments."""
    restrict_umask()  # lexicons, backups and exports hold what the TD alone may read


@main.command()
@setting_options(
    "data_dir", "database", "processes", "host", "port", "log_level", "log_format", "certfile", "keyfile",
    "public_url", "peers", "mdns_name", "max_connections_per_client", "max_requests_per_client", "trusted_proxies",
)  # fmt: skip
def serve(**flags: Any) -> None:
    """Start the adjudication server for the event in the data dir (a DEMO event if there is none)."""
    settings = load_settings(**flags)
    configure_logging(settings.log_level, settings.log_format)
    lock = _claim(settings)  # first: a second server on the folder, or on the port, must touch nothing
    try:
        if settings.processes == 1:
            _serve(settings, None)
        else:
            _serve_in_processes(settings)
    finally:
        lock.release()


def _serve_in_processes(settings: Settings) -> None:
    """Serve the event in ``settings.processes`` processes (:mod:`wordjudge.service.processes`) until stopped."""
    from wordjudge.service.serving import Serving

    supervisor = Supervisor(_serve_process, settings, settings.processes)
    # Process 0's resources opened once, then closed, before any process starts: a bad lexicon, event file or
    # log stops the start here, said once; the copy of the event the others serve is written.
    first = Serving(settings, process=supervisor.process(0))
    first.start()
    _say_served(settings, first.resources.served.event if first.resources else None)
    first.close()
    log.info("serving the event in %d processes, ports %d-%d", settings.processes, settings.port,
             settings.port + settings.processes - 1)  # fmt: skip
    if supervisor.run() != 0:
        raise click.ClickException("a process of the server kept failing at its start: its log lines say why")


def _serve_process(settings: Settings, process: Process, supervisor: int) -> None:
    """One process of a server of several (spawned by the :class:`~wordjudge.service.processes.Supervisor`, whose pid is
    ``supervisor``)."""
    restrict_umask()
    configure_logging(settings.log_level, settings.log_format)
    end_with_parent(supervisor)
    try:
        _serve(settings, process)
    except (WordjudgeError, click.ClickException) as exc:
        log.error("process %d: %s", process.index, exc.message)
        sys.exit(1)


def _serve(settings: Settings, process: Process | None) -> None:
    """Open the event (``process``: one of a server's processes, or None) and answer requests until stopped."""
    import uvicorn

    from wordjudge.service.serving import Serving
    from wordjudge.web.app import create_app
    from wordjudge.web.transport import connection_limits, guarded_protocol

    # Raises the open-file limit, and leaves room under it for the server's own files.
    limits = connection_limits(
        settings.max_connections_per_client, settings.proxy_networks, settings.max_requests_per_client
    )
    # Before the server starts: a bad lexicon stops it with a clear message. In a hall, a standby opens nothing
    # until its database is promoted.
    serving = Serving(settings, process=process)
    serving.start()
    if process is None:  # one process: its banner (several: the supervisor's, once)
        _say_served(settings, serving.resources.served.event if serving.resources else None)
    try:
        uvicorn.run(
            create_app(settings, serving=serving),
            host=settings.host,
            port=process.port(settings.port) if process is not None else settings.port,
            log_level=settings.log_level,
            # JSON lines: uvicorn's access and error logs too, so that the whole server speaks one format.
            log_config=uvicorn_json_config() if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG,
            ssl_certfile=settings.certfile,
            ssl_keyfile=settings.keyfile,
            # Open live feeds (the TD console's) would otherwise hold a stop or restart forever.
            timeout_graceful_shutdown=5,
            # httptools with a deadline per request and caps on connections (transport.py). No
            # limit_concurrency: it answers 503 to every request once connections are many, the
            # kiosks' included, which is what a flood wants; the caps close the flood's instead.
            http=guarded_protocol(limits),
            ws="none",  # no WebSocket routes: an upgrade would leave the guarded protocol
            # X-Forwarded-For only from a proxy the TD names: uvicorn trusts loopback by default,
            # which let anything on the server machine pick its address for the per-address limits.
            proxy_headers=bool(settings.trusted_proxies.strip()),
            forwarded_allow_ips=[str(network) for network in limits.trusted_proxies] or None,
        )
    finally:
        serving.close()


def _say_served(settings: Settings, served: Event | None) -> None:
    """Say what a TD needs at the start: the event served, the three pages' addresses (where a kiosk or phone on the
    LAN opens them) and, loudly, a real event served on the DEMO list. In JSON logs, as log lines; else printed."""
    base = device_url(host=settings.host, port=settings.port, tls=settings.tls, public_url=settings.public_url).url
    lines = [f"Serving the event {served.name!r}" if served else "Serving: no event yet (a standby of a hall)"]
    lines += [f"  {label}: {base}/{page}" for label, page in _PAGES]
    lines.append(f"  Status page: {base}/  (on this machine: {_local_base(settings)}/)")
    warning = _demo_list_warning(served) if served else None
    if settings.log_format == "json":
        for line in lines:
            log.info("%s", line.strip())
        if warning:
            log.warning("%s", warning)
        return
    click.echo("\n".join(lines), err=True)
    if warning:
        click.echo(warning, err=True)


_PAGES = (("Kiosks", "kiosk"), ("Runners' handhelds", "runner"), ("TD console", "td"))


def _local_base(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    host = f"[{host}]" if ":" in host else host
    return f"{'https' if settings.tls else 'http'}://{host}:{settings.port}"


def _demo_list_warning(served: Event) -> str | None:
    """A loud line for a real event whose divisions use the DEMO list (None: it has none)."""
    divisions = served.demo_list_divisions()
    if not divisions:
        return None
    return (
        f"WARNING: the event {served.name!r} would serve the DEMO list (ENABLE, not an official lexicon) in division "
        f"{', '.join(divisions)}. Compile the event's list (wordjudge lexicon add FILE --name NAME), name it as the "
        "division's lexicon in event.toml (or run wordjudge event init --replace, which names every compiled list), "
        "and start wordjudge serve again"
    )


def _claim(settings: Settings) -> ServerLock:
    """Check that no server uses the data folder and that the port is free, then take the folder's lock for
    this server (:func:`wordjudge.base.datadir.lock_for_server`). Raises :class:`click.ClickException` naming the
    server that holds the folder, the port in use, or why the lock cannot be taken; a refusal writes nothing."""
    try:
        refuse_if_served(settings.data_dir)  # before the port: "another server on this folder" says more
        for port in range(settings.port, settings.port + settings.processes):  # said plainly, before the lexicons
            _refuse_a_taken_port(settings.host, port)
        lock = lock_for_server(settings.data_dir, host=settings.host, port=settings.port)
    except FolderInUse as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"the data folder {settings.data_dir.resolve()} cannot be used: {exc}") from None
    log.info("data folder %s (locked for this server: %s)", settings.data_dir.resolve(), lock.path.name)
    return lock


def _refuse_a_taken_port(host: str, port: int) -> None:
    """Bind ``host:port`` as uvicorn will (SO_REUSEADDR, every address the host resolves to) and let it go.
    Raises :class:`click.ClickException` if that fails: uvicorn would only say so after the lexicons were
    loaded, in a log line naming an errno."""
    sockets: list[socket.socket] = []
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _, address in dict.fromkeys(found):  # each address once, as asyncio binds them
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio does: IPv6 only, or it would clash with the IPv4 one
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise click.ClickException(
                f"port {port} is in use (another wordjudge?): use --port (or WORDJUDGE_PORT) to pick another"
            ) from None
        raise click.ClickException(
            f"cannot listen on {host} port {port} ({exc.strerror or exc}): check --host and --port "
            "(WORDJUDGE_HOST, WORDJUDGE_PORT)"
        ) from None
    finally:
        for sock in sockets:
            sock.close()


@main.group()
def lexicon() -> None:
    """Compile, list, inspect, compare and query lexicons (TD tools on the server machine)."""


@lexicon.command("add")
@click.argument("source", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--name", required=True, help="Name to serve it under, e.g. CSW24.")
@click.option(
    "--format",
    "source_format",
    type=click.Choice([f.value for f in SourceFormat]),
    default="auto",
    show_default=True,
    help="plain: one word per line; zyzzyva: WORD definition...; playability: score WORD.",
)
@click.option("--skip-invalid", is_flag=True, help="Leave out lines that are not words (and count them).")
@click.option("--replace", is_flag=True, help="Replace a compiled lexicon of the same name.")
@click.option(
    "--force",
    is_flag=True,
    help="Add it although its name claims an edition (CSW24, NWL2023...) its words are not: "
    "every screen then shows it as UNVERIFIED.",
)
@setting_options("data_dir")
def lexicon_add(
    source: Path,
    name: str,
    source_format: str,
    skip_invalid: bool,
    replace: bool,
    force: bool,
    data_dir: Path | None,
) -> None:
    """Compile the word list SOURCE (plain, Zyzzyva or playability; optionally gzipped)."""
    catalog = _catalog(data_dir)
    catalog.lexicons.path(name)  # a bad name fails before the file is read
    say_folder(catalog.data_dir)
    word_list = read_word_list(
        source, format=SourceFormat(source_format), skip_invalid=skip_invalid, progress=_progress_bar("Reading")
    )
    click.echo(_reading_summary(word_list))
    manifest = catalog.lexicons.add(word_list, name, replace=replace, force=force)
    click.echo(f"Compiled {name}: {manifest.word_count:,} words, {manifest.min_length}-{manifest.max_length} letters")
    click.echo(f"Alphabet ({len(manifest.alphabet)} letters): {manifest.alphabet}")
    click.echo(f"Fingerprint: {manifest.fingerprint}")
    click.echo(f"Edition: {_identify(manifest)}")
    claim = load_registry().claim(name, manifest.word_count, manifest.fingerprint)
    if claim is not None and claim.unverified:
        click.echo(f"WARNING: {claim.badge}: {claim.problem()}. Added anyway (--force): kiosks, handhelds, "
                   "dockets, the console and /api/health show it with this badge.")  # fmt: skip
    elif claim is not None:
        click.echo(f"Name: {claim.problem()}")
    click.echo(
        f"Saved in {catalog.lexicons.path(name)} (trie {manifest.trie_bytes:,} bytes, sha256 {manifest.trie_sha256})"
    )


@lexicon.command("list")
@setting_options("data_dir")
def lexicon_list(data_dir: Path | None) -> None:
    """List the compiled lexicons and profiles, with their fingerprints and editions."""
    catalog = _catalog(data_dir)
    names = catalog.names()
    if not names:
        click.echo(f"No lexicons in {catalog.data_dir}. Add one with: wordjudge lexicon add FILE --name NAME")
        return
    rows = [("NAME", "KIND", "WORDS", "FINGERPRINT", "EDITION")]
    for name in names:
        spec = catalog.spec(name)
        if spec is None:
            manifest = catalog.lexicons.manifest(name)
            kind = "demo" if manifest.demo else "lexicon"
            rows.append((name, kind, f"{manifest.word_count:,}", short(manifest.fingerprint), _identify(manifest)))
        else:
            amended = catalog.open(name)
            amendments = f"+{len(amended.additions.words)} -{len(amended.removals.words)} errata"
            if amended.secondary:
                amendments += f", {amended.secondary.name} for {amended.secondary_min_length}+ letters"
            edition = f"{spec.base} ({_identify(amended.base.manifest)}) {amendments}"
            claim = load_registry().claim(name, amended.base.manifest.word_count, amended.base.fingerprint)
            if claim is not None and claim.unverified:
                edition += f"; {claim.badge}"
            rows.append((name, "profile", "", short(amended.fingerprint), edition))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])


@lexicon.command("info")
@click.argument("name")
@setting_options("data_dir")
def lexicon_info(name: str, data_dir: Path | None) -> None:
    """Show a lexicon or profile in full, after verifying its files and recomputing its fingerprint."""
    profile = _catalog(data_dir).open(name)
    for lexicon in filter(None, (profile.base, profile.secondary)):
        lexicon.verify_content()
    if profile.amended:
        click.echo(f"Profile {profile.name}")
        click.echo(f"  fingerprint: {profile.fingerprint} (covers the base and every amendment)")
        click.echo(f"  alphabet: {profile.alphabet}")
        for label, errata in (("errata additions", profile.additions), ("errata removals", profile.removals)):
            if errata.words:
                click.echo(
                    f"  {label}: {len(errata.words)} word(s) from {errata.source_name} (sha256 {errata.source_sha256})"
                )
                click.echo(f"    {', '.join(errata.words[:20])}{' ...' if len(errata.words) > 20 else ''}")
        if profile.secondary:
            click.echo(
                f"  secondary source: {profile.secondary.name}, for words of {profile.secondary_min_length}+ letters"
            )
        for claim in unverified_claims(profile, load_registry()):
            click.echo(f"  {claim['badge']}: {claim['description']}")
        click.echo("")
    for lexicon in filter(None, (profile.base, profile.secondary)):
        _echo_manifest(lexicon)


@lexicon.command("check")
@click.argument("name")
@click.argument("words", nargs=-1, required=True)
@setting_options("data_dir", "language")
def lexicon_check(name: str, words: tuple[str, ...], data_dir: Path | None, language: str | None) -> None:
    """Look WORDS up in a lexicon or profile, word by word, with the source that accepted each (TD only).

    The lines are in the event's language (or --language's)."""
    settings = load_settings(data_dir=data_dir, language=language)
    lang = cli_language(settings)
    profile = Catalog(settings.data_dir).open(name)
    typed = [word for argument in words for word in re.split(r"[\s,]+", argument) if word]
    results = profile.check(typed)
    width = max(len(result.word) for result in results)
    said = {True: render("cli.word.acceptable", lang=lang), False: render("cli.word.not_acceptable", lang=lang)}
    column = max(14, *(len(text) for text in said.values()))
    for result in results:
        reason = profile.reason_message(result.word).text(lang)
        click.echo(f"{result.word.ljust(width)}  {said[result.acceptable].ljust(column)}  {reason}")
    verdict = Verdict.ACCEPTABLE if all(result.acceptable for result in results) else Verdict.UNACCEPTABLE
    line = Message(
        "cli.verdict", verdict=verdict_message(verdict), n=len(results), lexicon=profile.name,
        fingerprint=short(profile.fingerprint),
    )  # fmt: skip
    click.echo(line.text(lang))


@lexicon.command("diff")
@click.argument("old")
@click.argument("new")
@setting_options("data_dir")
def lexicon_diff(old: str, new: str, data_dir: Path | None) -> None:
    """List the words added (+WORD) and removed (-WORD) from lexicon OLD to lexicon NEW."""
    store = _catalog(data_dir).lexicons
    before, after = set(store.open(old).words()), set(store.open(new).words())
    added, removed = sorted(after - before), sorted(before - after)
    for word in removed:
        click.echo(f"-{word}")
    for word in added:
        click.echo(f"+{word}")
    click.echo(f"{old} -> {new}: {len(added):,} added, {len(removed):,} removed", err=True)


@main.group()
def profile() -> None:
    """Define lexicon profiles: a base lexicon with errata and a secondary source for long words."""


@profile.command("add")
@click.argument("name")
@click.option("--base", required=True, help="The compiled lexicon the profile amends, e.g. CSW24.")
@click.option(
    "--additions",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Errata: a word list of words to accept.",
)
@click.option(
    "--removals",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Errata: a word list of words to refuse.",
)
@click.option("--secondary", metavar="LEXICON", help="A compiled lexicon consulted for long words not in the base.")
@click.option(
    "--secondary-min-length",
    type=click.IntRange(min=2),
    help="Consult the secondary source for words of at least this many letters (NSA: 9).",
)
@click.option("--replace", is_flag=True, help="Replace a profile of the same name.")
@click.option(
    "--force",
    is_flag=True,
    help="Add it although its name claims an edition (CSW24-errata: CSW24) its base is not: "
    "every screen then shows it as UNVERIFIED.",
)
@setting_options("data_dir")
def profile_add(
    name: str,
    base: str,
    additions: Path | None,
    removals: Path | None,
    secondary: str | None,
    secondary_min_length: int | None,
    replace: bool,
    force: bool,
    data_dir: Path | None,
) -> None:
    """Define the profile NAME and show its fingerprint."""
    errata = {
        key: read_word_list(path) if path else None for key, path in (("additions", additions), ("removals", removals))
    }
    catalog = _catalog(data_dir)
    say_folder(catalog.data_dir)
    created, notes = catalog.add_profile(
        name,
        base,
        additions=errata["additions"],
        removals=errata["removals"],
        secondary=secondary,
        secondary_min_length=secondary_min_length,
        replace=replace,
        force=force,
    )
    click.echo(
        f"Profile {name}: base {base}, "
        f"{len(created.additions.words)} addition(s), {len(created.removals.words)} removal(s)"
    )
    if created.secondary:
        click.echo(f"Secondary source {created.secondary.name} for words of {created.secondary_min_length}+ letters")
    for note in notes:
        click.echo(f"Note: {note}")
    for claim in unverified_claims(created, load_registry()):
        click.echo(f"WARNING: {claim['badge']}: {claim['description']}; every screen shows it with this badge.")
    click.echo(f"Fingerprint: {created.fingerprint}")


def _catalog(data_dir: Path | None) -> Catalog:
    return Catalog(load_settings(data_dir=data_dir).data_dir)


def _identify(manifest: Manifest) -> str:
    registry = load_registry()
    description = registry.identify(manifest.word_count, manifest.fingerprint).describe()
    claim = registry.claim(manifest.name, manifest.word_count, manifest.fingerprint)
    if claim is not None and claim.unverified:
        description += f"; {claim.badge}"
    return f"DEMO list, {description}" if manifest.demo else description


def _echo_manifest(lexicon: Lexicon) -> None:
    m = lexicon.manifest
    click.echo(f"Lexicon {m.name}{' (DEMO: not an official lexicon)' if m.demo else ''}")
    click.echo(f"  edition: {_identify(m)}")
    click.echo(f"  words: {m.word_count:,}, {m.min_length}-{m.max_length} letters")
    click.echo(f"  alphabet ({len(m.alphabet)}): {m.alphabet}")
    click.echo(f"  fingerprint: {m.fingerprint}")
    click.echo("  verified: trie file matches the manifest; fingerprint recomputed from the words it holds")
    click.echo(f"  trie: {lexicon.directory / 'words.marisa'} ({m.trie_bytes:,} bytes, sha256 {m.trie_sha256})")
    click.echo(f"  source: {m.source_name} ({m.source_format}, sha256 {m.source_sha256})")
    click.echo(f"  source had: {m.duplicates:,} duplicate(s), {m.skipped_lines:,} invalid line(s) skipped")
    click.echo(f"  built: {m.built_at} by wordjudge {m.tool_version}")


def _reading_summary(word_list: WordList) -> str:
    summary = (
        f"Read {word_list.source_name} ({word_list.format.value} list): {len(word_list.words):,} words, "
        f"{word_list.duplicates:,} duplicate(s), {word_list.comments:,} comment line(s) skipped"
    )
    if word_list.marked:
        first = ", ".join(f"line {number} {content!r}" for number, content in word_list.marked_lines)
        summary += f", {word_list.marked:,} word(s) marked with '#' read without the mark (first: {first})"
    if word_list.invalid:
        first = word_list.invalid[0].describe(word_list.source_name)
        summary += f", {len(word_list.invalid):,} invalid line(s) skipped (first: {first})"
    return summary


def _progress_bar(label: str) -> Progress | None:
    """A progress callback drawing a bar on a terminal, for big lists only; None elsewhere."""
    if not sys.stderr.isatty():
        return None
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if total < _PROGRESS_MIN_LINES:
            return
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    return update


@main.group()
def event() -> None:
    """The event file: the event's name, its divisions, their lexicons and challenge rules."""


@event.command("init")
@click.option("--replace", is_flag=True, help="Overwrite an existing event file.")
@setting_options("data_dir")
def event_init(replace: bool, data_dir: Path | None) -> None:
    """Write a commented event.toml to edit, with a division for each compiled lexicon."""
    catalog = _catalog(data_dir)
    path = catalog.data_dir / EVENT_FILE
    if path.exists() and not replace:
        raise click.ClickException(f"{path} exists already (use --replace to overwrite it)")
    names = [name for name in catalog.names() if name.casefold() != DEMO_NAME]
    say_folder(catalog.data_dir)
    write_event_file(path, event_template(names))
    click.echo(f"Wrote {path}: edit it, then check it with: wordjudge event show")
    if not names:  # the template's divisions then name the demo list: said before anyone serves it
        click.echo(
            "WARNING: no word list is compiled in this folder, so the event file's division uses the DEMO list "
            "(ENABLE, not an official lexicon). Compile the event's list first: wordjudge lexicon add FILE --name "
            'NAME, then run wordjudge event init --replace (or set lexicon = "NAME" in the file)'
        )


@event.command("show")
@setting_options("data_dir")
def event_show(data_dir: Path | None) -> None:
    """Check the event file and show the event, each division's lexicon (verified) and rule."""
    settings = load_settings(data_dir=data_dir)
    current = load_event(settings.data_dir)
    catalog = Catalog(settings.data_dir)
    registry = load_registry()
    click.echo(f"Event: {current.name}{' (DEMO event: there is no event.toml)' if current.demo else ''}")
    rounds = "no" if not current.rounds else f"yes, current round {current.current_round or 'not set'}"
    click.echo(f"Rounds: {rounds}")
    for division in current.divisions:
        view = describe_profile(catalog.open(division.lexicon), registry)
        click.echo(
            f"Division {division.name}: {view['label']}; rule {division.rule.value} ({division.rule.description})"
        )
    warning = _demo_list_warning(current)
    if warning:
        click.echo(warning)
    if not current.demo:  # what a running server does with an edit of the file (see ServedEvent.pick_up_event_file)
        click.echo(
            "A running wordjudge serve serves this file within 2 s of a change (its log says so); a file that does "
            "not load is not served, and /api/health warns until it is fixed."
        )


main.add_command(audit)
main.add_command(database)
main.add_command(standby)
main.add_command(witness)
main.add_command(device)
main.add_command(td)
