"""The ``wordjudge`` command: a thin shell over the domain modules.

Every flag that is a setting is generated from :class:`wordjudge.service.settings.Settings`,
so it has an environment twin (``--data-dir`` / ``WORDJUDGE_DATA_DIR``).
"""

from __future__ import annotations

import errno
import logging
import shlex
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from wordjudge import __version__
from wordjudge.base.datadir import FolderInUse, ServerLock, lock_for_server, refuse_if_served
from wordjudge.base.errors import WordjudgeError
from wordjudge.base.files import restrict_umask
from wordjudge.base.logs import configure_logging, uvicorn_json_config
from wordjudge.cli.access import device, td
from wordjudge.cli.audit import audit, witness
from wordjudge.cli.database import database
from wordjudge.cli.folder import say_folder
from wordjudge.cli.hall import standby
from wordjudge.cli.lexicon import lexicon, open_catalog, profile
from wordjudge.cli.options import setting_options
from wordjudge.cli.tls import hall
from wordjudge.service.links import device_url
from wordjudge.service.processes import Process, Supervisor, end_with_parent
from wordjudge.service.settings import Settings, load_settings
from wordjudge.tournament.event import EVENT_FILE, Event, write_event_file
from wordjudge.tournament.event import template as event_template
from wordjudge.tournament.event_loading import load_event
from wordjudge.tournament.served import describe_profile
from wordjudge.words.editions import DEMO_NAME, load_registry
from wordjudge.words.profile import Catalog

if TYPE_CHECKING:
    from wordjudge.service.resources import Resources

log = logging.getLogger(__name__)


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
    "data_dir",
    "database",
    "processes",
    "host",
    "port",
    "log_level",
    "log_format",
    "https",
    "certfile",
    "keyfile",
    "public_url",
    "peers",
    "mdns_name",
    "max_connections_per_client",
    "max_requests_per_client",
    "trusted_proxies",
)
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
    from wordjudge.service.opening import serving_of

    supervisor = Supervisor(_serve_process, settings, settings.processes)
    # Process 0's resources opened once, then closed, before any process starts: a bad lexicon, event file or
    # log stops the start here, said once; the copy of the event the others serve is written.
    first = serving_of(settings, process=supervisor.process(0))
    first.start()
    _say_served(settings, first.resources)
    first.close()
    log.info(
        "serving the event in %d processes, ports %d-%d",
        settings.processes,
        settings.port,
        settings.port + settings.processes - 1,
    )
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

    from wordjudge.service.opening import serving_of
    from wordjudge.web.app import create_app
    from wordjudge.web.transport import connection_limits, guarded_protocol

    # Raises the open-file limit, and leaves room under it for the server's own files.
    limits = connection_limits(
        settings.max_connections_per_client, settings.proxy_networks, settings.max_requests_per_client
    )
    # Before the server starts: a bad lexicon stops it with a clear message. In a hall, a standby opens nothing
    # until its database is promoted.
    serving = serving_of(settings, process=process)
    serving.start()
    if process is None:  # one process: its banner (several: the supervisor's, once)
        _say_served(settings, serving.resources)
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


def _say_served(settings: Settings, resources: Resources | None) -> None:
    """Say what a TD needs at the start: the event served, the three pages' addresses (where a kiosk or phone on the
    LAN opens them), how to make the first TD account where there is none and, loudly, a real event served on the
    DEMO list. In JSON logs, as log lines; else printed. ``resources``: None for a standby (no event of its own)."""
    served = resources.served.event if resources else None
    base = device_url(host=settings.host, port=settings.port, tls=settings.tls, public_url=settings.public_url).url
    lines = [f"Serving the event {served.name!r}" if served else "Serving: no event yet (a standby of a hall)"]
    lines += [f"  {label}: {base}/{page}" for label, page in _PAGES]
    lines.append(f"  Status page: {base}/  (on this machine: {_local_base(settings)}/)")
    lines += _transport_lines(settings)
    if resources is not None and not any(td.disabled_at is None for td in resources.access.tds.all()):
        lines.append(f"  No TD account yet: to sign in to the TD console, make one with {first_td_command(settings)}")
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


def _transport_lines(settings: Settings) -> list[str]:
    """How devices reach the server: HTTPS and the certificate's CA (its fingerprint: what kiosks and phones are made
    to trust), or plain HTTP, a single-machine demo (or, in a hall, what to do about it)."""
    from wordjudge.service.https import transport_of

    transport = transport_of(settings)
    view, warnings = transport.view(), [f"  WARNING: {warning.text()}" for warning in transport.warnings()]
    if view["scheme"] == "https":
        print_ = f", SHA-256 {view['ca_fingerprint']}" if view["ca_fingerprint"] else ""
        return [f"  HTTPS: certificate of {view['ca']}{print_}, until {view['expires'][:10]}", *warnings]
    if view["demo"]:
        return ["  Plain HTTP: a single-machine demo (for a hall: wordjudge hall cert, then start again)"]
    return warnings


_PAGES = (("Kiosks", "kiosk"), ("Handhelds", "runner"), ("TD console", "td"))


def first_td_command(settings: Settings) -> str:
    """The command that makes a TD account for the folder served, as this server was started (its program as
    typed, ``.venv/bin/wordjudge`` or ``wj``; the data folder if not the default), asking its password."""
    program = sys.argv[0] if "/" in sys.argv[0] and not sys.argv[0].endswith("__main__.py") else "wordjudge"
    folder = (
        ""
        if settings.data_dir == Settings.model_fields["data_dir"].default
        else f" --data-dir {shlex.quote(str(settings.data_dir))}"
    )
    return f"{program} td add NAME{folder} (in a second terminal, in this folder; it asks a password)"


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
def event() -> None:
    """The event file: the event's name, its divisions, their lexicons and challenge rules."""


@event.command("init")
@click.option("--replace", is_flag=True, help="Overwrite an existing event file.")
@setting_options("data_dir")
def event_init(replace: bool, data_dir: Path | None) -> None:
    """Write a commented event.toml to edit, with a division for each compiled lexicon."""
    catalog = open_catalog(data_dir)
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


main.add_command(lexicon)
main.add_command(profile)
main.add_command(audit)
main.add_command(database)
main.add_command(standby)
main.add_command(hall)
main.add_command(witness)
main.add_command(device)
main.add_command(td)
