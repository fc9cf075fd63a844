"""One event served by several OS processes (``wordjudge serve --processes N``), behind a front (HAProxy).

Each process is a whole server (its own lexicons, access store connection and audit writer) listening on
``--port + k``. They share the event's state where it lives, in the data folder and the database:

- **the chain**: every process's writer appends to the one log; each batch takes the database's lock on the
  chain and reads its head inside its transaction (:class:`wordjudge.log.audit.AuditLog` with ``shared``), so the
  records stay one sequence ordered by the database, whichever process wrote them;
- **process 0 leads**: it answers every request (the console, pairing, TD logins, live feeds, witnesses), and
  alone records the TD's hand edits of the event file. The others answer the verdict path only
  (:func:`answers`): what they hold in memory (rate limits, presence, alerts' de-duplication) is then a
  kiosk's, and the front sends each kiosk to one process (by its token);
- **the event**: process 0 writes what it serves to :data:`SERVED_COPY`; the others serve that file, never
  the TD's ``event.toml`` itself, so that a hand edit process 0 refused is served by none.

The :class:`Supervisor` starts the processes, restarts one that dies, and stops them all on SIGTERM or SIGINT.
Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import secrets
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import WordjudgeError
from wordjudge.tournament.changes import record_file_edit
from wordjudge.tournament.event import EVENT_FILE, Event, dump_event, write_event_file

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.tournament.served import ServedEvent

log = logging.getLogger(__name__)

SERVED_COPY = "event-served.toml"  # the event process 0 serves, for the others (never edited by hand)

# The verdict path: what every process answers. A kiosk's or handheld's challenge, its settling by request id
# (a retry after a lost answer), its docket, and health (the front's and devices' look).
_VERDICT_PATHS = (
    ("POST", re.compile(r"/api/challenges")),
    ("GET", re.compile(r"/api/challenges/requests/[^/]+")),
    ("GET", re.compile(r"/api/challenges/[0-9]+/docket")),
    ("GET", re.compile(r"/api/health")),
    ("HEAD", re.compile(r"/api/health")),
)
_RESTART_PAUSE = 1.0  # seconds before a process that died is started again
_FAILING_WITHIN = 10.0  # a process that dies this soon after its start ...
_FAILING_TIMES = 3  # ... this many times in a row keeps failing: the server stops
_STOP_GRACE = 10.0  # seconds a process has to finish what it answers, once asked to stop


@dataclass(frozen=True)
class Process:
    """One of the processes of an event's server: ``index`` 0 leads. ``token`` is new at each start of the server
    and shared by its processes alone: the database tells them from a second server by it."""

    index: int
    token: str

    @property
    def leads(self) -> bool:
        """Whether this is process 0, which answers every request."""
        return self.index == 0

    def port(self, base: int) -> int:
        """The port this process listens on, the server's first being ``base``."""
        return base + self.index


def leads(process: Process | None) -> bool:
    """Whether ``process`` answers everything and keeps the event: process 0, or a server of one process (None)."""
    return process is None or process.leads


def answers(process: Process | None, method: str, path: str) -> bool:
    """Whether ``process`` answers ``method path``: process 0 (or a server of one process) everything, the others
    the verdict path only."""
    if leads(process):
        return True
    return any(method == verb and pattern.fullmatch(path) for verb, pattern in _VERDICT_PATHS)


def event_source(process: Process | None) -> str:
    """The file ``process`` serves the event from: the TD's event file, or for a process but the first, the copy
    of what process 0 serves."""
    return EVENT_FILE if leads(process) else SERVED_COPY


def share_event(served: ServedEvent, process: Process | None, audit: AuditLog) -> None:
    """Wire ``served`` (opened from :func:`event_source`) for its place among the server's processes: the TD's hand
    edits put on record in ``audit`` (a change record by the file; the console's changes name their TD) by process
    0, or a server of one process, alone; process 0's event written where the others read it, now and at each
    change. Raises :class:`~wordjudge.base.errors.InvalidInput` if that copy cannot be written."""
    if not leads(process):
        return  # its event is process 0's, whose changes are on record already
    served.record_file_edit = lambda old, new: record_file_edit(audit, old, new)
    if process is None:
        return
    write_served_copy(served.data_dir, served.event)
    serve = served.on_change

    def serve_and_copy(changed: ServedEvent) -> None:
        serve(changed)
        try:
            write_served_copy(changed.data_dir, changed.event)
        except WordjudgeError as exc:  # served here already: the others keep the event before it
            log.error("the other processes cannot be given the event served: %s", exc)

    served.on_change = serve_and_copy


def write_served_copy(data_dir: Path, event: Event) -> None:
    """Write the event process 0 serves where the other processes read it (:data:`SERVED_COPY`), atomically; the
    demo event (no event file) as no copy. Raises :class:`~wordjudge.base.errors.InvalidInput` if it cannot be
    written."""
    path = data_dir / SERVED_COPY
    if event.demo:
        path.unlink(missing_ok=True)
        return
    write_event_file(path, dump_event(event))


def end_with_parent(parent: int) -> None:
    """Stop this process (SIGTERM to itself) once ``parent`` (the supervisor's pid) is gone, watched from a daemon
    thread: a process left serving after its supervisor was killed would hold no data folder lock, and a new
    server could then start on the folder beside it."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        log.error("the server's supervisor (pid %d) is gone: this process stops", parent)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="wordjudge-parent-watch", daemon=True).start()


class Supervisor:
    """Runs ``count`` processes, each ``target(settings, Process(k, token), supervisor_pid)``, until told
    to stop.

    ``target`` must be importable (processes are spawned, not forked: the parent's threads and connections stay
    its own). A process that dies is started again after a pause; one that keeps dying within seconds of its
    start stops the server.
    """

    def __init__(self, target: Callable[[Any, Process, int], None], settings: Any, count: int) -> None:
        self._target = target
        self._settings = settings
        self._count = count
        self._token = secrets.token_hex(16)
        self._context = multiprocessing.get_context("spawn")
        self._running: dict[int, BaseProcess] = {}
        self._started: dict[int, float] = {}
        self._quick_deaths: dict[int, int] = {}
        self._stopping = False

    def process(self, index: int) -> Process:
        """The process ``index`` of this server (its token is the server's)."""
        return Process(index, self._token)

    def run(self) -> int:
        """Start every process and watch them until SIGTERM or SIGINT; return the exit status (0, or 1 when a
        process kept failing)."""
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            for index in range(self._count):
                self._start(index)
            status = self._watch()
        finally:
            self._stop_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return status

    def _start(self, index: int) -> None:
        process = self.process(index)
        child = self._context.Process(
            target=self._target, args=(self._settings, process, os.getpid()), name=f"wordjudge-{index}", daemon=False
        )
        child.start()
        self._running[index] = child
        self._started[index] = time.monotonic()
        log.info("process %d of %d started (pid %s)", index, self._count, child.pid)

    def _watch(self) -> int:
        while not self._stopping:
            time.sleep(0.2)
            for index, child in list(self._running.items()):
                if child.is_alive() or self._stopping:
                    continue
                lived = time.monotonic() - self._started[index]
                quick = self._quick_deaths.get(index, 0) + 1 if lived < _FAILING_WITHIN else 0
                self._quick_deaths[index] = quick
                log.error(
                    "process %d (pid %s) ended with status %s after %.1f s", index, child.pid, child.exitcode, lived
                )
                if quick >= _FAILING_TIMES:
                    log.error("process %d keeps failing at its start: the server stops (its log says why)", index)
                    return 1
                time.sleep(_RESTART_PAUSE)
                if not self._stopping:
                    self._start(index)
        return 0

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self._stopping = True

    def _stop_all(self) -> None:
        self._stopping = True
        for child in self._running.values():
            if child.is_alive() and child.pid is not None:
                child.terminate()  # SIGTERM: uvicorn finishes the requests under way
        deadline = time.monotonic() + _STOP_GRACE
        for child in self._running.values():
            child.join(max(0.0, deadline - time.monotonic()))
            if child.is_alive():
                log.warning("process %s did not stop within %.0f s: killed", child.name, _STOP_GRACE)
                child.kill()
                child.join()
