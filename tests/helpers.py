"""What the tests share: enrolling devices and TDs, writing event files and word lists, the one JSON error shape,
and a live ``wordjudge serve`` (the fixtures that use these are in conftest.py)."""

from __future__ import annotations

import asyncio
import errno
import gzip
import os
import random
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx2 as httpx
from argon2 import PasswordHasher

from wordjudge.access.access_store import AccessStore
from wordjudge.base.errors import LANGUAGES, Message, catalogue
from wordjudge.log.audit import AuditLog
from wordjudge.log.connections import DATABASE_NOTE
from wordjudge.model.auth import Role
from wordjudge.model.records import Appended, Entry, Record, RecordFilter
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.deps import CSRF_HEADER, SESSION_COOKIE

# Tests sign TDs in with cheap Argon2 settings (the hash records its own settings, so the server
# checks it as it is), and the apps of the fixtures hash with them too (create_app's ``hasher``, which
# only tests pass); test_access checks that the server's own hashes use the real, costly ones, and
# the live servers (``wordjudge serve``) use those.
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
PASSWORD = "correct horse battery"

# How many examples the randomised tests (hypothesis properties, schemathesis fuzzing) run: every one they ask
# for under the "full" profile, which .ci/check chooses (WORDJUDGE_TESTS=full); a fifth of them (at least 5)
# under "fast", the default of a plain pytest run, so that the fast suite stays quick. The fast profile also
# leaves schemathesis' coverage phase to the full one (test_schema_fuzz.py); every other test runs the same.
PROFILES = ("fast", "full")
PROFILE = os.environ.get("WORDJUDGE_TESTS", "fast")
if PROFILE not in PROFILES:
    raise ValueError(f"WORDJUDGE_TESTS={PROFILE!r}: use one of {', '.join(PROFILES)}")


def examples(full: int) -> int:
    """The examples a randomised test runs under the profile chosen, ``full`` under the full one."""
    return full if PROFILE == "full" else max(min(full, 5), full // 5)


def database_of(data_dir: Path) -> str | None:
    """The URL (password included) of the test database a data folder keeps its state in, as its note names it
    (the PostgreSQL backend: conftest's data_dir); None for a folder that keeps it in its files."""
    from .postgres import PASSWORDED

    note = data_dir / DATABASE_NOTE
    return PASSWORDED[note.read_text("utf-8").strip()] if note.is_file() else None


def location_of(data_dir: Path) -> StateLocation:
    """Where a data folder keeps its state, as the server's settings say it (``Settings.location``): its files, or
    the test database its note names (:func:`database_of`)."""
    return StateLocation(data_dir, database_of(data_dir))


class FixtureLog(AuditLog):
    """An audit log a test fills before it serves: closing it checks that what was written verifies. The server
    checks its log in the background and stops giving verdicts on one that does not, so a fixture's inconsistent
    record (a consequence its rule would not give) failed the test that used it only when that check finished in
    time. A test that breaks a log on purpose does so after closing it."""

    wrote = False

    def submit(self, entry: Entry) -> Future[Appended]:
        self.wrote = True
        return super().submit(entry)

    def close(self) -> None:
        checked = self.verify() if self.wrote else None
        super().close()
        assert checked is None or checked.ok, f"the fixture wrote a log that does not verify: {checked}"


def audit_log(data_dir: Path) -> AuditLog:
    """The data dir's audit log, as a command opens it (in the database the folder notes, on PostgreSQL); closing it
    checks that the records written through it verify (:class:`FixtureLog`)."""
    return FixtureLog(location_of(data_dir))


def unchecked_audit_log(data_dir: Path) -> AuditLog:
    """The data dir's audit log, as :func:`audit_log` opens it, for a test that writes a log that does not verify on
    purpose (a clock stepped back under the writer) to see what the server and the TD make of it."""
    return AuditLog(location_of(data_dir))


def log_place(data_dir: Path) -> str:
    """How messages name the data dir's log: its file, or its database's URL without the password."""
    return audit_log(data_dir).where


def access_store(data_dir: Path) -> AccessStore:
    """The data dir's access store, as the CLI opens it (the server may have it open too)."""
    return AccessStore(location_of(data_dir), hasher=CHEAP_HASHER).open()


def device_headers(data_dir: Path, name: str, role: Role = Role.KIOSK, division: str | None = None) -> dict[str, str]:
    """Enrol a device as ``wordjudge device add`` does; return the headers it sends."""
    store = access_store(data_dir)
    try:
        token = store.devices.add(name, role, division, by="test").token
    finally:
        store.close()
    return {"Authorization": f"Bearer {token}"}


def td_headers(data_dir: Path, name: str) -> dict[str, str]:
    """Add a TD and sign them in; return the headers a console page sends (cookie and CSRF token)."""
    store = access_store(data_dir)
    try:
        store.tds.add(name, PASSWORD, by="test")
        session = store.tds.login(name, PASSWORD, client="test")
    finally:
        store.close()
    return {"Cookie": f"{SESSION_COOKIE}={session.token}", CSRF_HEADER: session.csrf_token}


@dataclass(frozen=True)
class Actors:
    """Request headers of two kiosks, a runner and two TDs, enrolled in the test's data dir."""

    kiosk: dict[str, str]
    kiosk2: dict[str, str]
    runner: dict[str, str]
    alice: dict[str, str]
    bob: dict[str, str]


def write_event(
    data_dir: Path,
    divisions: list[tuple[str, str, str]],
    *,
    name: str = "Test Open",
    challenges_per_minute: int | None = None,
    kiosk_result_seconds: int | None = None,
    language: str | None = None,
) -> Path:
    """Write an event.toml with (name, lexicon, rule) divisions."""
    lines = [f'name = "{name}"', "rounds = true"]
    if language is not None:
        lines.append(f'language = "{language}"')
    if challenges_per_minute is not None:
        lines.append(f"challenges_per_minute = {challenges_per_minute}")
    if kiosk_result_seconds is not None:
        lines.append(f"kiosk_result_seconds = {kiosk_result_seconds}")
    for division, lexicon, rule in divisions:
        lines += ["[[division]]", f'name = "{division}"', f'lexicon = "{lexicon}"', f'rule = "{rule}"']
    path = data_dir / "event.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_list(path: Path, lines: list[str], *, newline: str = "\n", bom: bool = False, gz: bool = False) -> Path:
    """Write a word-list file the way a TD's file might arrive."""
    data = (("\ufeff" if bom else "") + newline.join(lines) + newline).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def fill_disk(directory: Path) -> Path:
    """Write a file until the file system is full; return it."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as handle:  # unbuffered: nothing left to flush at close
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    return filler


# -- the one error shape --------------------------------------------------------------------------------

ERROR_KEYS = {"ok", "status", "code", "error", "details", "message"}


def assert_error_shape(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert set(body) == ERROR_KEYS
    assert body["ok"] is False
    assert (response.status_code, body["status"], body["code"]) == (status, status, code)
    assert isinstance(body["error"], str)
    assert body["error"]
    assert "Traceback" not in response.text
    assert_message_is_the_error(body)
    return body


def assert_message_is_the_error(body: dict[str, Any]) -> None:
    """The error body's ``message`` is a key of the English catalogue that, with its ``params``, says exactly
    its ``error``; and every language can say it."""
    key = body["message"]["key"]
    assert key in catalogue("en"), f"{key} is not in the English catalogue"
    message = Message.from_dict(body["message"])
    assert message.text("en") == body["error"], (message.text("en"), body["error"])
    for lang in LANGUAGES:
        assert message.text(lang)


# -- a real server --------------------------------------------------------------------------------


# Ports a test's server listens on are picked below this (and above the well-known and registered ports most
# services take).
LOWEST_PORT = 10_000


def ephemeral_ports() -> tuple[int, int]:
    """The system's range of ports for outgoing connections (Linux's ``ip_local_port_range``)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port() -> int:
    """A port free on 127.0.0.1 now, for a test's server to listen on, outside the ephemeral range: a port the
    system hands out (``bind(0)``) may be taken between this check and the server's bind by any process's
    outgoing connection, and was (a whole check beside three others: "port 35754 is in use")."""
    low, _ = ephemeral_ports()
    for _ in range(1000):
        port = random.randrange(LOWEST_PORT, low) if low > LOWEST_PORT else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:  # taken (or lingering after a close): another
                continue
            found: int = sock.getsockname()[1]
            return found
    raise RuntimeError(f"no free port on 127.0.0.1 between {LOWEST_PORT} and {low}")


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1 (a server of several processes listens on them)."""
    for _ in range(100):
        first = free_port()
        try:
            for port in range(first, first + count):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError(f"no {count} consecutive free ports on 127.0.0.1")


def wait_for_health(
    base: str, server: subprocess.Popen[str] | None = None, *, verify: ssl.SSLContext | bool = True
) -> httpx.Response:
    """Poll a starting server's health check until it answers (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return httpx.get(f"{base}/api/health", timeout=2, verify=verify)
        except httpx.TransportError:
            assert server is None or server.poll() is None, server.communicate()[0] if server else ""
            assert time.monotonic() < deadline, "server did not start in 30 s"
            time.sleep(0.1)


class ServeProcess(subprocess.Popen[str]):
    """A ``wordjudge serve`` process whose output (stdout and stderr) goes to a temporary file, never to a pipe:
    a server that logs more than a pipe holds (about 64 KB) while nobody reads it would block on its log and
    turn a failing test into a hung one. ``communicate`` waits for it to end and returns what it printed."""

    def __init__(self, args: Sequence[str], env: dict[str, str], **popen: Any) -> None:
        # Closed by communicate, which every test calls on a server it started.
        self._output: IO[str] | None = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._said = ""
        super().__init__(args, env=env, stdout=self._output, stderr=subprocess.STDOUT, text=True, **popen)

    def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str, str]:
        assert input is None, "a server reads nothing from its input"
        self.wait(timeout)
        if self._output is not None:
            self._output.seek(0)
            self._said = self._output.read()
            self._output.close()
            self._output = None
        return self._said, ""


# The node id of the running test if it is not marked ``live`` (conftest.py sets it): serve_process refuses to start
# a server for it, saying why, rather than let it slow the fast suite (which leaves the ``live`` tests out) unseen.
SERVERS_UNMARKED: str | None = None


def serve_process(data_dir: Path, *extra: str, prefix: Sequence[str] = ()) -> ServeProcess:
    """``wordjudge serve`` on ``data_dir`` with ``extra`` flags (its output: see ServeProcess); run by ``prefix``
    if given (``ip netns exec NAMESPACE``: on another machine of a lab)."""
    if SERVERS_UNMARKED is not None:
        raise AssertionError(
            f"{SERVERS_UNMARKED} starts a server but is not marked live: mark it @pytest.mark.live, or start it "
            "through something conftest.py's marking sees (live_server, LiveServer, serving, serve_process)"
        )
    script = Path(sys.executable).with_name("wordjudge")
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir)}
    return ServeProcess([*prefix, str(script), "serve", *extra], env)


class LiveServer:
    """``wordjudge serve`` on a free loopback port, which a test may stop and start again."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.data_dir = data_dir
        self.extra = extra or ("--log-level", "warning")  # flags for serve
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: ServeProcess | None = None
        self.prefix: Sequence[str] = ()  # runs it elsewhere: see serve_process

    def start(self) -> None:
        self.process = serve_process(self.data_dir, "--port", str(self.port), *self.extra, prefix=self.prefix)
        wait_for_health(self.base, self.process)

    def stop(self) -> str:
        """Stop the server (SIGTERM, a graceful stop); return what it printed ("" if it was not running)."""
        if self.process is None:
            return ""
        self.process.terminate()
        output = self.process.communicate(timeout=30)[0]
        self.process = None
        return output

    def records(self) -> list[Record]:
        log = AuditLog(location_of(self.data_dir))
        try:
            return list(reversed(log.find(RecordFilter(), limit=1000)))
        finally:
            log.close()


# What the ``live_server`` fixture (conftest.py) gives a test: start(data_dir, *flags) -> LiveServer.
StartServer = Callable[..., LiveServer]


T = TypeVar("T")


def eventually(check: Callable[[], T], what: str, *, seconds: float = 30, every: float = 0.05) -> T:
    """Poll ``check`` until what it returns is true, and return that; fail saying ``what`` did not happen (and
    what ``check`` last returned) after ``seconds``. For a test that waits for something it can see: a fixed
    sleep is either too short on a loaded machine or longer than needed on an idle one. The default deadline is
    sized for a loaded 2-core machine (as tests/browser.py's PAGE_WAIT_MS)."""
    deadline = time.monotonic() + seconds
    while not (seen := check()):
        assert time.monotonic() < deadline, f"{what}: not after {seconds} s (last: {seen!r})"
        time.sleep(every)
    return seen


def alert_kinds(data_dir: Path) -> list[str]:
    """The kinds of the data dir's latest alerts for the TD, newest first, as another process reads them."""
    store = access_store(data_dir)
    try:
        return [alert.kind for alert in store.alerts.latest()]
    finally:
        store.close()


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end in a new event loop, in a thread of its own: a test's own ``asyncio.run``
    fails in a process where Playwright's sync API (the browser tests) keeps a loop running."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
