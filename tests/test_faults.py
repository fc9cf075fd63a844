"""Faults against real ``wordjudge serve`` processes, real SQLite files and real signals.

The promise under test: every verdict a player saw is in the audit log exactly once, and no
verdict is ever shown that is not in the log. Each test hurts a running server the way a hall
can: the power goes (SIGKILL, again and again, with challenges in flight), the disk fills up,
the disk fails and the kernel turns it read-only, a lexicon folder is damaged or swapped. The
clients behave like the kiosk: a request that got no response is sent again, with the same
request id, until it is answered.

(The browser tests in test_kiosk.py cover the kiosk itself retrying across a server restart and
after a lost response; these tests stay at the HTTP level, where the faults can be placed.)
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from wordjudge.log.audit import AuditLog
from wordjudge.log.chain import Verification
from wordjudge.model.records import Kind, Record
from wordjudge.storage.dialect import StateLocation
from wordjudge.words.editions import DEMO_NAME, load_registry
from wordjudge.words.lexicon import MANIFEST_FILE, TRIE_FILE, LexiconStore
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import parse_word_list

from .helpers import assert_error_shape, audit_log, device_headers, fill_disk, free_port, write_event, write_list

pytestmark = pytest.mark.live

WORDJUDGE = Path(sys.executable).with_name("wordjudge")
START_TIMEOUT_S = 90  # a start verifies the demo lexicon's 172,820 words; a busy 2-core machine is slow
ACCEPTABLE = ("cat", "dog", "emu", "gnu", "zebra", "quiz", "jinx", "oxen", "fjord", "ewe", "qat", "xu")
UNACCEPTABLE = ("qi", "za", "zzxq", "brixle", "wug", "ctad")  # not in the demo list (ENABLE)


# -- a server that can be killed ----------------------------------------------------------------


class Server:
    """``wordjudge serve`` on one loopback port, started again after each kill or stop.

    Its output goes to a file per start (a pipe nobody reads could fill up and stall it), kept
    for the assertion messages.
    """

    def __init__(self, data_dir: Path, logs: Path) -> None:
        self.data_dir = data_dir
        self.logs = logs
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None
        self.starts = 0

    def start(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        with (self.logs / f"serve-{self.starts}.log").open("w") as out:
            self.process = subprocess.Popen(
                [str(WORDJUDGE), "serve", "--port", str(self.port), "--log-level", "warning"],
                env={**os.environ, "WORDJUDGE_DATA_DIR": str(self.data_dir)},
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                httpx.get(f"{self.base}/api/health", timeout=5)  # any answer: it listens (it may be degraded)
                return
            except httpx.TransportError:
                assert self.process.poll() is None, f"the server exited at start:\n{self.output()}"
                assert time.monotonic() < deadline, f"the server did not start in {START_TIMEOUT_S} s:\n{self.output()}"
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no closing of files; the process dies wherever it is.

        (Unlike a power cut, what it wrote but had not yet fsynced survives in the page cache: a
        kill cannot tell a commit from a durable commit.)
        """
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)
        self.process = None

    def stop(self) -> None:
        """SIGTERM, as systemd stops it: a graceful shutdown, which must not end in a traceback."""
        assert self.process is not None
        self.process.terminate()
        status = self.process.wait(timeout=60)
        self.process = None
        # uvicorn shuts down, then raises the signal it caught again: -SIGTERM is its normal status.
        assert status in (0, -signal.SIGTERM), f"exit status {status}:\n{self.output()}"
        assert "Traceback" not in self.output(), self.output()

    def output(self) -> str:
        return "".join(path.read_text() for path in sorted(self.logs.glob("serve-*.log")))


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[[Path], Server]]:
    """Make servers for a data dir; any still running at the end of the test is killed.

    A test that mounts a file system must ask for its mount fixture before this one, so that the
    servers are gone before it is unmounted.
    """
    made: list[Server] = []

    def make(data_dir: Path) -> Server:
        server = Server(data_dir, tmp_path / f"logs-{len(made)}")
        made.append(server)
        return server

    yield make
    for server in made:
        if server.process is not None:
            server.kill()


def wordjudge(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a ``wordjudge`` command on ``data_dir`` as the TD would, and wait for it."""
    return subprocess.run(
        [str(WORDJUDGE), *args],
        env={**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )


def refused_start(data_dir: Path) -> str:
    """Run ``wordjudge serve``, which must stop at start with exit status 1; return what it printed.

    Fails at once, rather than after a timeout, if the server starts serving instead.
    """
    port = free_port()
    process = subprocess.Popen(
        [str(WORDJUDGE), "serve", "--port", str(port)],
        env={**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while process.poll() is None:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
        except httpx.TransportError:
            assert time.monotonic() < deadline, "wordjudge serve neither served nor stopped"
            time.sleep(0.1)
            continue
        process.kill()
        pytest.fail(f"wordjudge serve started serving:\n{process.communicate(timeout=60)[0]}")
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 1, output
    assert "Traceback" not in output
    return output


def read_log(data_dir: Path) -> tuple[Verification, list[Record]]:
    """The log's chain verification and every record in it, read from the file as it is now."""
    log = audit_log(data_dir)
    try:
        return log.verify(), list(log.iterate())
    finally:
        log.close()


def verify_with_the_cli(data_dir: Path, records: int) -> None:
    done = wordjudge(data_dir, "audit", "verify")
    assert done.returncode == 0, done.stdout
    assert f"chain verified: {records} record(s)" in done.stdout


def demo_data_dir(root: Path, compiled_demo: Path) -> Path:
    """A data dir under ``root`` with the demo lexicon, a one-division event and no rate limit.

    Flushed to disk, as a data dir set up before the event would be: a disk that fails later must
    not take the set-up with it.
    """
    data = root / "data"
    shutil.copytree(compiled_demo, data / "lexicons" / DEMO_NAME)
    write_event(data, [("Open", DEMO_NAME, "five-per-word")], challenges_per_minute=0)
    os.sync()
    return data


# -- challenges as a kiosk sends them -----------------------------------------------------------


@dataclass
class Challenge:
    """One challenge a kiosk sends, and what happened to it."""

    actor: str
    request_id: str
    typed: tuple[str, ...]
    separator: str
    table: int
    round: int
    acceptable: bool  # what the demo list says
    refused: int = 0  # attempts that found no server listening
    cut: int = 0  # attempts whose connection broke before a response came: sent, maybe recorded
    generation_before: int = -1  # the server generation when the answered attempt was sent ...
    generation_after: int = -1  # ... and when its response had been read
    status: int | None = None
    answer: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.actor, self.request_id)

    def body(self) -> dict[str, Any]:
        words = self.separator.join(self.typed)
        return {
            "division": "Open",
            "table": self.table,
            "round": self.round,
            "words": words,
            "request_id": self.request_id,
        }

    def describe(self, record: Record | None) -> str:
        """This challenge's answer, and what the log holds for it, for an assertion message."""
        answered = (
            f"{self.request_id} {' '.join(self.typed)!r} answered {self.status}: "
            f"record {self.answer.get('id')} {self.answer.get('verdict')}"
        )
        if record is None:
            return f"{answered}; the log has no record of it"
        return f"{answered}; the log has record {record.id} {' '.join(record.words)} {record.verdict!s}"

    def matches(self, record: Record) -> bool:
        """Whether ``record`` is this challenge, as sent and as answered."""
        return (
            record.kind is Kind.CHALLENGE
            and (record.actor, record.request_id) == self.key
            and record.words_typed == self.typed
            and record.words == tuple(word.upper() for word in self.typed)
            and (record.table, record.round, record.division) == (str(self.table), self.round, "Open")
            and str(record.verdict) == ("acceptable" if self.acceptable else "unacceptable")
            and (record.id, str(record.verdict), record.hash)
            == (
                self.answer.get("id"),
                self.answer.get("verdict"),
                self.answer.get("hash"),
            )
        )


def make_challenges(rng: random.Random, actor: str, count: int) -> list[Challenge]:
    """``count`` challenges of 1 to 3 words, about a quarter of them unacceptable, some capitalised."""
    challenges = []
    for n in range(count):
        typed = []
        for _ in range(rng.randint(1, 3)):
            word = rng.choice(UNACCEPTABLE if rng.random() < 0.15 else ACCEPTABLE)
            typed.append(word.capitalize() if rng.random() < 0.3 else word)
        acceptable = all(word.lower() in ACCEPTABLE for word in typed)
        request_id = f"{actor}-{n:04d}-{rng.getrandbits(32):08x}"
        separator = rng.choice([" ", ", ", "\n"])
        challenges.append(
            Challenge(actor, request_id, tuple(typed), separator, rng.randint(1, 60), rng.randint(1, 12), acceptable)
        )
    return challenges


class Floor:
    """The kiosks' shared state: how many answers came, the server's generation, when to kill it."""

    def __init__(self, base: str, deadline: float) -> None:
        self.base = base
        self.deadline = deadline
        self.generation = 0  # raised by the test after each kill, before the next start
        self.answered = 0
        self.changed = threading.Condition()
        self.errors: list[str] = []
        self.running = 0
        self._kill: tuple[int, int] | None = None  # (answer number, server pid)

    def kill_at(self, answer: int, pid: int) -> None:
        """SIGKILL the server the moment answer number ``answer`` arrives, from the kiosk that gets it.

        Right then, that challenge must already be committed; the other kiosks' requests are at
        every other stage (parsed, adjudicated, queued, being committed, being answered).
        """
        with self.changed:
            self._kill = (answer, pid)
        with self.changed:
            done = self.changed.wait_for(lambda: self._kill is None or self.running == 0, timeout=180)
        assert done, f"only {self.answered} answers after 180 s (the kill was due at {answer})"

    def kiosk(self, headers: dict[str, str], challenges: list[Challenge]) -> None:
        """Send each challenge until it is answered, like the kiosk's "Try again": same request id."""
        try:
            with httpx.Client(base_url=self.base, headers=headers, timeout=httpx.Timeout(120, connect=10)) as http:
                for challenge in challenges:
                    self._send(http, challenge)
        except Exception as exc:  # reported by the test, which fails on it
            self.errors.append(f"{challenges[0].actor}: {exc!r}")
        finally:
            with self.changed:
                self.running -= 1
                self.changed.notify_all()

    def _send(self, http: httpx.Client, challenge: Challenge) -> None:
        while True:
            if time.monotonic() > self.deadline:
                raise TimeoutError(f"{challenge.request_id} got no answer in time")
            generation = self.generation
            try:
                response = http.post("/api/challenges", json=challenge.body())
            except httpx.ConnectError:  # no server listening: it is down between a kill and its restart
                challenge.refused += 1
                time.sleep(0.05)
                continue
            except httpx.TransportError:  # the connection broke: the server may have recorded it, or not
                challenge.cut += 1
                time.sleep(0.05)
                continue
            with self.changed:
                self.answered += 1
                if self._kill is not None and self.answered >= self._kill[0]:
                    os.kill(self._kill[1], signal.SIGKILL)
                    self._kill = None
                self.changed.notify_all()
            challenge.generation_before, challenge.generation_after = generation, self.generation
            challenge.status = response.status_code
            challenge.answer = response.json()
            return


# -- kill -9, again and again, during concurrent challenges --------------------------------------

KIOSKS = 8
PER_KIOSK = 45
KILLS = 5


def test_kill_9_during_concurrent_challenges_loses_and_duplicates_nothing(
    tmp_path: Path,
    compiled_demo: Path,
    demo_words: list[str],
    servers: Callable[[Path], Server],
    capsys: pytest.CaptureFixture[str],
    record_property: Callable[[str, object], None],
) -> None:
    """Eight kiosks send challenges while the server is SIGKILLed five times and started again.

    After each kill, before the restart, the log on disk is read: what it holds is what was
    committed before the kill. Then, for every challenge: its answer is in the log exactly once,
    with the same id, verdict, hash and words; the answer is a replay exactly when the log
    already held the challenge when the answered attempt was sent (it was committed before a kill,
    and the response died with the server); and the log holds nothing that was not sent.

    This fails if the server ever answered before committing (a kill in between loses an
    acknowledged record, and the next challenge takes its id), if a retry made a second record
    or a different verdict, or if a committed record did not survive a kill.
    """
    known = set(demo_words)
    assert all(word.upper() in known for word in ACCEPTABLE)
    assert not any(word.upper() in known for word in UNACCEPTABLE)
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    data = demo_data_dir(tmp_path, compiled_demo)
    kiosks = {f"kiosk-{n}": device_headers(data, f"kiosk-{n}") for n in range(KIOSKS)}
    plan = {name: make_challenges(rng, name, PER_KIOSK) for name in kiosks}
    challenges = [challenge for planned in plan.values() for challenge in planned]
    server = servers(data)
    server.start()
    floor = Floor(server.base, deadline=time.monotonic() + 240)
    # What the log held before each generation of the server started: nothing before the first,
    # then what was committed before each kill.
    before: list[dict[tuple[str, str], Record]] = [{}]
    threads = [threading.Thread(target=floor.kiosk, args=(kiosks[name], plan[name])) for name in kiosks]
    floor.running = len(threads)
    for thread in threads:
        thread.start()
    try:
        for _ in range(KILLS):
            assert server.process is not None
            floor.kill_at(floor.answered + rng.randint(15, 45), server.process.pid)
            server.kill()  # reaps it (another SIGKILL to a dead process that is not reaped yet is harmless)
            verification, records = read_log(data)
            assert verification.ok, f"after a kill: {verification.describe()}"
            before.append({(r.actor, r.request_id): r for r in records})
            floor.generation += 1
            server.start()
    finally:
        for thread in threads:
            thread.join(timeout=300)
    assert not floor.errors, floor.errors
    server.stop()

    verification, records = read_log(data)
    assert verification.ok, verification.describe()
    in_log = Counter((r.actor, r.request_id) for r in records)
    by_key = {(r.actor, r.request_id): r for r in records}
    unanswered = [c.request_id for c in challenges if c.status not in (200, 201)]
    assert not unanswered, f"{len(unanswered)} challenge(s) not answered with a verdict (seed {seed})"
    exactly_once = [c for c in challenges if in_log[c.key] == 1 and c.matches(by_key[c.key])]
    missing = [c.describe(by_key.get(c.key)) for c in challenges if c not in exactly_once]
    assert not missing, f"{len(missing)} answer(s) not in the log as given (seed {seed}): " + "; ".join(missing[:5])
    assert set(in_log) == {c.key for c in challenges}, "the log holds records nobody sent"
    assert len(records) == len({c.key for c in challenges}) == len(challenges)
    # Nothing committed before a kill was lost or changed afterwards.
    for committed in before:
        assert all(by_key[key] == record for key, record in committed.items())
    # A replay exactly when the challenge was committed before the attempt that got the answer.
    for c in challenges:
        if c.answer["replayed"]:
            assert c.status == 200
            assert c.cut > 0, f"{c.request_id} replayed but never lost a response"
            assert c.key in before[c.generation_after], f"{c.request_id} replayed but was not committed before a kill"
        else:
            assert c.status == 201
            assert c.key not in before[c.generation_before], f"{c.request_id} was committed earlier: not a replay"
    verify_with_the_cli(data, len(challenges))

    cut = [c for c in challenges if c.cut]
    replays = [c for c in challenges if c.answer["replayed"]]
    assert cut, "no kill caught a request in flight: the test did not test anything"
    figures = {
        "kills": KILLS,
        "acknowledged": len(challenges),
        "exactly_once": len(exactly_once),
        "cut_by_a_kill": len(cut),
        "replays_after_a_kill": len(replays),
        "recorded_after_a_restart": len(cut) - len(replays),
    }
    for name, value in figures.items():
        record_property(name, value)
    with capsys.disabled():
        print(
            f"\n[kill -9] seed {seed}: {KILLS} kills, {len(challenges)} challenges acknowledged, "
            f"{len(exactly_once)} found exactly once in the log; {len(cut)} cut off by a kill: "
            f"{len(replays)} had been committed and were answered as replays after the restart, "
            f"{len(cut) - len(replays)} had not and were recorded after it; chain verified"
        )


# -- a response lost to kill -9 after its commit --------------------------------------------------


def test_a_response_lost_to_kill_9_after_its_commit_is_replayed_from_the_log(
    tmp_path: Path, compiled_demo: Path, servers: Callable[[Path], Server]
) -> None:
    """The case the kill -9 test meets only by chance, made certain: committed, then the server dies.

    The kiosk's request reaches the server; the test waits until the record is in the log file,
    then SIGKILLs the server without reading the response. The kiosk sends it again to the new
    server process: it gets the original record (same id, verdict and hash) marked as a replay,
    and the log holds it once. (test_kiosk.py covers a response lost by the network with the
    server alive, and a request that never reached a stopped server, in the real browser.)
    """
    data = demo_data_dir(tmp_path, compiled_demo)
    headers = device_headers(data, "kiosk-1")
    server = servers(data)
    server.start()
    body = {"division": "Open", "table": 7, "round": 2, "words": "cat qi", "request_id": "kiosk-1-lost-0001"}
    payload = json.dumps(body).encode()
    request = (
        f"POST /api/challenges HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: {headers['Authorization']}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    log = AuditLog(StateLocation(data))
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(request)
        deadline = time.monotonic() + 60
        while (committed := log.by_request("kiosk-1", str(body["request_id"]))) is None:
            assert time.monotonic() < deadline, "the challenge was never committed"
            time.sleep(0.01)
        server.kill()  # the response, if it was even written, is never read
    log.close()
    server.start()
    with httpx.Client(base_url=server.base, headers=headers, timeout=60) as http:
        again = http.post("/api/challenges", json=body)
        after = http.post("/api/challenges", json={**body, "request_id": "kiosk-1-lost-0002"})
    assert again.status_code == 200
    answer = again.json()
    assert answer["replayed"] is True
    assert (answer["id"], answer["verdict"], answer["hash"]) == (committed.id, "unacceptable", committed.hash)
    assert after.status_code == 201
    assert after.json()["id"] == committed.id + 1
    server.stop()
    verification, records = read_log(data)
    assert verification.ok, verification.describe()
    assert [(r.request_id, r.hash) for r in records] == [
        (body["request_id"], committed.hash),
        ("kiosk-1-lost-0002", after.json()["hash"]),
    ]
    verify_with_the_cli(data, 2)


# -- a full disk, a read-only one, a failing one ----------------------------------------------------


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), capture_output=True, text=True, timeout=60)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs for a whole data dir (lexicon, access store, log), mounted for this test (root)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = _run("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount_point))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        if _run("umount", str(mount_point)).returncode != 0:
            _run("umount", "-l", str(mount_point))


def challenge_body(request_id: str, words: str = "cat dog") -> dict[str, Any]:
    return {"division": "Open", "table": 3, "round": 1, "words": words, "request_id": request_id}


def assert_refused_without_a_verdict(response: httpx.Response, *causes: str) -> None:
    """A 503 in the one error shape, saying why (one of ``causes``) and that there is no verdict; nothing like one."""
    body = assert_error_shape(response, 503, "audit_unavailable")
    assert any(cause in str(body["error"]) for cause in causes), body["error"]
    assert "no verdict is given" in str(body["error"])
    assert "acceptable" not in response.text.lower()  # "unacceptable" too


def assert_degraded(health: httpx.Response, *, failures: int) -> None:
    """The health check tells a monitor that the log cannot be written (503, degraded), and why."""
    report = health.json()
    assert (health.status_code, report["ok"], report["state"]) == (503, False, "degraded"), report
    assert report["audit"]["writable"] is False
    assert report["audit"]["failures"] >= failures
    assert any("audit log's last write failed" in reason for reason in report["reasons"]), report["reasons"]


def test_a_full_disk_refuses_challenges_without_a_verdict_and_recovers(
    tmpfs: Path, compiled_demo: Path, servers: Callable[[Path], Server]
) -> None:
    """The data dir's disk fills up under a live server, then is freed; then it is read-only at start.

    While full, every challenge is a 503 with no verdict, and the health check says the server is
    degraded and why; freed, the same request ids are recorded once, as new records. The log then verifies and
    holds exactly the acknowledged challenges. A data dir that is read-only stops ``wordjudge
    serve`` at start, naming the file; made writable again, it serves as before.

    (Linux refuses to remount a file system read-only while a process has files open on it for
    writing, as the server does: a disk that turns read-only under a live server is the failing disk
    of the next test.)
    """
    data = demo_data_dir(tmpfs, compiled_demo)
    headers = device_headers(data, "kiosk-1")
    server = servers(data)
    server.start()
    acknowledged: dict[str, dict[str, Any]] = {}
    with httpx.Client(base_url=server.base, headers=headers, timeout=60) as http:

        def challenge(request_id: str, words: str = "cat dog") -> httpx.Response:
            response = http.post("/api/challenges", json=challenge_body(request_id, words))
            if response.status_code in (200, 201):
                acknowledged[request_id] = response.json()
            return response

        assert [
            challenge(f"before-full-{n}", words).status_code for n, words in enumerate(["cat", "qi", "emu gnu"])
        ] == [201] * 3
        filler = fill_disk(tmpfs)
        refused = [challenge(f"while-full-{n}", "zebra qi") for n in range(3)]
        for response in refused:
            assert_refused_without_a_verdict(response, "disk is full")
        assert_degraded(http.get("/api/health"), failures=len(refused))
        filler.unlink()
        again = [challenge(f"while-full-{n}", "zebra qi") for n in range(3)]
        assert [(r.status_code, r.json()["replayed"], r.json()["verdict"]) for r in again] == [
            (201, False, "unacceptable")
        ] * 3
        assert challenge("after-full", "fjord").status_code == 201
        health = http.get("/api/health")
        assert (health.status_code, health.json()["audit"]["writable"]) == (200, True)
    server.stop()

    verification, records = read_log(data)
    assert verification.ok, verification.describe()
    assert {r.request_id: (r.id, str(r.verdict), r.hash) for r in records} == {
        request_id: (answer["id"], answer["verdict"], answer["hash"]) for request_id, answer in acknowledged.items()
    }
    verify_with_the_cli(data, 7)

    # Read-only at start: refused with a clear message, no traceback, no server.
    done = _run("mount", "-o", "remount,ro", str(tmpfs))
    assert done.returncode == 0, done.stderr
    refusal = refused_start(data)
    # The audit log is the first file it opens for writing (before anything else is written in the folder).
    assert (
        f"Error: the audit log {data / 'audit.sqlite3'} cannot be opened for writing: {data} cannot be written "
        "(a read-only disk" in refusal
    )
    verify_with_the_cli(data, 7)  # a read-only log still verifies
    done = _run("mount", "-o", "remount,rw", str(tmpfs))
    assert done.returncode == 0, done.stderr
    server.start()
    with httpx.Client(base_url=server.base, headers=headers, timeout=60) as http:
        response = http.post("/api/challenges", json=challenge_body("after-read-only"))
    assert response.status_code == 201, response.text
    assert response.json()["id"] == 8
    server.stop()
    verify_with_the_cli(data, 8)


@pytest.fixture
def failing_disk(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    """A 32 MiB ext4 file system on a loop device, ``errors=remount-ro``: (mount point, image, its sysfs folder).

    Writing to ``trigger_fs_error`` in its sysfs folder makes the kernel treat it as a disk that
    failed: it aborts the journal and turns the file system read-only under whoever is using it.
    """
    image, mount_point = tmp_path / "disk.img", tmp_path / "disk"
    mount_point.mkdir()
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is missing (apt-get install e2fsprogs)")
    with image.open("wb") as handle:
        handle.truncate(32 * 1024 * 1024)
    done = _run("mkfs.ext4", "-q", "-F", str(image))
    assert done.returncode == 0, done.stderr
    done = _run("mount", "-o", "loop,errors=remount-ro", str(image), str(mount_point))
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount an ext4 image on a loop device here (needs root and /dev/loop*): {done.stderr.strip()}"
        )
    try:
        device = Path(_run("findmnt", "-n", "-o", "SOURCE", str(mount_point)).stdout.strip()).name
        sysfs = Path("/sys/fs/ext4") / device
        if not (sysfs / "trigger_fs_error").exists():
            pytest.skip(f"{sysfs}/trigger_fs_error is missing: this kernel cannot simulate a failing disk")
        yield mount_point, image, sysfs
    finally:
        if _run("umount", str(mount_point)).returncode != 0:
            _run("umount", "-l", str(mount_point))


def test_a_disk_that_fails_read_only_under_a_live_server(
    failing_disk: tuple[Path, Path, Path], compiled_demo: Path, servers: Callable[[Path], Server]
) -> None:
    """The data dir's disk fails while serving and the kernel makes it read-only: 503s, no verdicts.

    The kernel will not make it writable again (``mount -o remount,rw`` is refused after such an
    error): the way back is to stop the server, check the disk (e2fsck), mount it and start the
    server again. The log then holds exactly the challenges acknowledged before the failure, and
    the challenge refused during it is recorded once when the kiosk tries again.
    """
    mount_point, image, sysfs = failing_disk
    data = demo_data_dir(mount_point, compiled_demo)
    headers = device_headers(data, "kiosk-1")
    os.sync()  # the enrolment too: from here on, only the server's own fsyncs keep what it writes
    server = servers(data)
    server.start()
    acknowledged: dict[int, dict[str, Any]] = {}
    with httpx.Client(base_url=server.base, headers=headers, timeout=60) as http:
        for n, words in enumerate(["cat", "qi", "emu gnu"]):
            response = http.post("/api/challenges", json=challenge_body(f"before-{n}", words))
            assert response.status_code == 201
            acknowledged[response.json()["id"]] = response.json()
        (sysfs / "trigger_fs_error").write_text("wordjudge test: the disk fails")
        for n in range(3):
            refused = http.post("/api/challenges", json=challenge_body(f"failing-{n}"))
            # SQLite's words for EIO (this kernel shuts the file system down) or EROFS (older kernels)
            assert_refused_without_a_verdict(refused, "disk I/O error", "readonly database")
        assert_degraded(http.get("/api/health"), failures=3)
    assert _run("mount", "-o", "remount,rw", str(mount_point)).returncode != 0  # the kernel will not
    server.stop()
    done = _run("umount", str(mount_point))
    assert done.returncode == 0, done.stderr
    fsck = _run("e2fsck", "-f", "-y", str(image))
    assert fsck.returncode in (0, 1), fsck.stdout + fsck.stderr  # 1: errors found and corrected
    done = _run("mount", "-o", "loop,errors=remount-ro", str(image), str(mount_point))
    assert done.returncode == 0, done.stderr

    verification, records = read_log(data)
    assert verification.ok, verification.describe()
    assert {r.id: (r.request_id, str(r.verdict), r.hash) for r in records} == {
        id_: (answer["request_id"], answer["verdict"], answer["hash"]) for id_, answer in acknowledged.items()
    }
    # Once (beside three other checks) the disk mounted again was read-only by the next start: say so, and what the
    # kernel said of its device, rather than only the server's refusal to write.
    mounted = _run("findmnt", "-n", "-o", "OPTIONS,SOURCE", str(mount_point)).stdout.strip()
    device = mounted.rsplit("/", 1)[-1]
    kernel = [line for line in _run("dmesg").stdout.splitlines() if device and device in line][-10:]
    assert mounted.startswith("rw"), f"the test's disk came back read-only: {mounted}\n" + "\n".join(kernel)
    server.start()
    with httpx.Client(base_url=server.base, headers=headers, timeout=60) as http:
        response = http.post("/api/challenges", json=challenge_body("failing-0"))
    assert response.status_code == 201, response.text  # not a replay: nothing of it reached the disk
    assert response.json()["id"] == 4
    server.stop()
    verify_with_the_cli(data, 4)


# -- a damaged or swapped lexicon stops the start -------------------------------------------------


def _compile(data: Path, name: str, words: list[str]) -> Path:
    listed = parse_word_list("\n".join(words).encode(), source_name=f"{name.lower()}.txt")
    LexiconStore(data / "lexicons").add(listed, name)
    return data / "lexicons" / name


def _edit_manifest(folder: Path, **changes: object) -> None:
    path = folder / MANIFEST_FILE
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}, indent=2))


def _swap_folder(data: Path, folder: Path) -> str:
    other = _compile(data, "OTHER", ["CAT", "DOG", "EMU", "QI"])
    for name in (MANIFEST_FILE, TRIE_FILE):
        shutil.copy(other / name, folder / name)
    return f"{folder / MANIFEST_FILE} is the manifest of lexicon OTHER"


def _pose_as_csw24(data: Path, folder: Path) -> str:
    edition = load_registry().get("CSW24")
    assert edition is not None
    _edit_manifest(folder, fingerprint=edition.sha256)
    return f"{folder / TRIE_FILE}: the words it holds have fingerprint"


def _edit_word_count(data: Path, folder: Path) -> str:
    _edit_manifest(folder, word_count=4)
    return f"{folder / TRIE_FILE} holds 3 words, the manifest says 4"


def _truncate_profile(data: Path, folder: Path) -> str:
    additions = write_list(data / "errata.txt", ["ZZZ"])
    Catalog(data).add_profile(
        "EVENT-E", "EVENT", additions=parse_word_list(additions.read_bytes(), source_name="errata.txt")
    )
    write_event(data, [("A", "EVENT-E", "single")])
    profile = data / "profiles" / "EVENT-E.json"
    profile.write_bytes(profile.read_bytes()[:100])  # a copy cut short
    return f"{profile} cannot be read as a profile"


@pytest.mark.parametrize(
    "damage",
    [_swap_folder, _pose_as_csw24, _edit_word_count, _truncate_profile],
    ids=[
        "folder-swapped-for-another-lexicon",
        "fingerprint-edited-to-pose-as-CSW24",
        "word-count-edited",
        "profile-truncated",
    ],
)
def test_a_damaged_or_swapped_lexicon_stops_serve(tmp_path: Path, damage: Callable[[Path, Path], str]) -> None:
    """``wordjudge serve`` refuses to start, naming the file, without a traceback, exit status 1.

    Each damage gets past the trie file's own SHA-256 check (test_app.py and test_lexicon.py
    cover a missing, truncated, altered or swapped trie file): a whole folder copied from another
    lexicon, a manifest edited to claim an official edition or another word count, a profile file
    cut short.
    """
    data = tmp_path / "data"
    folder = _compile(data, "EVENT", ["CAT", "DOG", "EMU"])
    write_event(data, [("A", "EVENT", "single")])
    expected = damage(data, folder)
    output = refused_start(data)
    assert f"Error: {expected}" in output, output
