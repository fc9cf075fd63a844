"""The audit log at scale: the TD's views, the summary, export, verify and start-up at 10k, 100k and 1M records.

Run from the repository root (not part of the test suite; 1M records take 13 to 22 minutes to write):

    .venv/bin/python -m tests.bench.bench_log [--sizes 10000,100000,1000000] [--markdown docs/bench-log.md] [--keep]
    .venv/bin/python -m tests.bench.bench_log --data DIR [--markdown docs/bench-log.md]

It makes a data dir with two full lexicons (the demo list, and a generated list of 280,000 words,
the size of CSW24) and an event with three divisions, then fills its audit log through the real
write path (``AuditLog`` and its writer: group commit, fsync, the triggers that keep the word index,
the summary's tallies and the records' counts) with a hall's mix: challenges of 1 to 3 words at 150 tables
over 20 rounds from 60 devices, about a third unacceptable, and re-checks (one in 20, a fifth of them
disagreeing), reissues and rulings. ``--keep`` keeps the data dir; ``--data`` measures such a dir again (this
version's server migrates it first, if need be) without writing it again. At each size it starts
``wordjudge serve`` (time to the first verdict), waits for the server's background check of the whole log to
end, and times through the HTTP API as a signed-in TD (median of 9, the views taken in turn, after a first request of each): each list filter, a page of keyset paging
in the middle of the log, the summary, opening a record, an export's first byte and whole (with the server's RSS
before and after), and ``wordjudge audit verify`` (records/s). Each view is printed against its target, and the
page ends with each view's statements as SQLite plans them (EXPLAIN QUERY PLAN, on the log measured).
Targets: each view <= 20 ms at 1M (issue 48), export's first byte <= 200 ms in constant memory, verify >=
150,000 records/s on 2 cores (the median of 3 runs), start to first verdict <= 1.0 s at 1M (issue 48, point 2);
the load average is noted with each, and verify's busiest thread's CPU time with the rate it makes for on two free
cores (tests/bench/verify_threads.py: a figure the load of a shared machine does not move). A second start, under cProfile and stopped at its first verdict, says where
the start's time goes (the page's "Where the start's time goes").
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import pstats
import random
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx

from wordjudge import __version__
from wordjudge.access.access_store import AccessStore
from wordjudge.judging.final_verdict import awaiting_ruling
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.log.reading import TALLY_COUNTS, TALLY_WORDS, children_sql, count_sql, find_sql, get_sql
from wordjudge.model.auth import Role
from wordjudge.model.records import Entry, Kind, RecordFilter, Verdict, utc_time
from wordjudge.model.rules import ChallengeRule, consequence
from wordjudge.storage.dialect import StateLocation
from wordjudge.words.demo import read_demo_list
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.normal_form import normalise
from wordjudge.words.wordlist import SourceFormat, read_word_list

from ..wordgen import markov_words
from .bench_challenges import free_port, wait_until_up
from .headline import cpu_model, headline_lines, machine

DIVISIONS = ("A", "B", "C")
PASSWORD = "bench password 123"
RUNS = 9


def make_data_dir(root: Path) -> tuple[Path, list[str]]:
    """A data dir with the demo lexicon and a generated 280k list, an event of three divisions, a TD."""
    data = root / "data"
    store = LexiconStore(data / "lexicons")
    demo = read_demo_list().sorted_words()
    generated = root / "gen280k.txt"
    generated.write_text("\n".join(markov_words(demo, 280_000)) + "\n")
    for name, path in (("DEMOLIST", _plain(root, demo)), ("GEN280K", generated)):
        store.add(read_word_list(path, format=SourceFormat.PLAIN), name)
    (data / "event.toml").write_text(
        'name = "Bench Open"\nrounds = true\nchallenges_per_minute = 0\n'
        + "".join(
            f'[[division]]\nname = "{d}"\nlexicon = "{"GEN280K" if d == "C" else "DEMOLIST"}"\nrule = "five-per-word"\n'
            for d in DIVISIONS
        )
    )
    access = AccessStore(StateLocation(data)).open()
    access.tds.add("benchtd", PASSWORD, by="bench")
    access.close()
    return data, demo


def _plain(root: Path, words: list[str]) -> Path:
    path = root / "demo.txt"
    path.write_text("\n".join(words) + "\n")
    return path


class Filler:
    """Appends a hall's mix of records through the real writer, remembering enough to link children."""

    def __init__(self, log: AuditLog, words: list[str], seed: int = 7) -> None:
        self.log = log
        self.words = words
        self.random = random.Random(seed)
        self.made = 0
        self.challenges: list[tuple[int, bool, str, int, str, tuple[str, ...]]] = []  # id, ok, division...

    def fill(self, until: int) -> float:
        started = time.perf_counter()
        pending = []
        while self.made < until:
            pending.append(self.log.submit(self._next()))
            self.made += 1
            if len(pending) >= 2000:
                self._collect(pending)
                pending = []
        self._collect(pending)
        return time.perf_counter() - started

    def _collect(self, pending: list[Any]) -> None:
        for future in pending:
            record = future.result().record
            if record.kind is Kind.CHALLENGE:
                ok = record.verdict is Verdict.ACCEPTABLE
                self.challenges.append((record.id, ok, record.division, record.round, record.table, record.words))
            if len(self.challenges) > 5000:
                del self.challenges[:2500]

    def _next(self) -> Entry:
        pick = self.random.random()
        if self.challenges and pick < 0.05:
            return self._child(Kind.RECHECK)
        if self.challenges and pick < 0.06:
            return self._child(Kind.REISSUE)
        if self.challenges and pick < 0.065:
            return self._child(Kind.RULING)
        words = tuple(self.random.sample(self.words, self.random.randint(1, 3)))
        ok = self.random.random() > 0.33
        if not ok:
            words = (*words[:-1], "QZX" + words[-1])  # not a word
        return self._entry(
            Kind.CHALLENGE,
            None,
            ok,
            words,
            None,
            self.random.choice(DIVISIONS),
            self.random.randint(1, 20),
            str(self.random.randint(1, 150)),
            f"kiosk-{self.random.randint(1, 60)}",
        )

    def _child(self, kind: Kind) -> Entry:
        parent, parent_ok, division, round_number, table, words = self.random.choice(self.challenges)
        ok = parent_ok if kind is not Kind.RECHECK or self.random.random() > 0.2 else not parent_ok
        return self._entry(kind, parent, ok, words, ok == parent_ok, division, round_number, table, "benchtd")

    def _entry(
        self,
        kind: Kind,
        parent: int | None,
        ok: bool,
        words: tuple[str, ...],
        agrees: bool | None,
        division: str,
        round_number: int,
        table: str,
        actor: str,
    ) -> Entry:
        # The last word decides (a re-check that disagrees found it otherwise): results agree with the verdict.
        results = (
            ()
            if kind is Kind.RULING
            else tuple(
                {"word": w, "acceptable": ok or n < len(words) - 1, "source": None, "reason": "bench"}
                for n, w in enumerate(words)
            )
        )
        return Entry(
            kind=kind,
            parent_id=parent,
            event="Bench Open",
            division=division,
            round=round_number,
            table=table,
            actor=actor,
            channel="kiosk",
            words_typed=words,
            words=words,
            lexicon="DEMOLIST",
            fingerprint="f" * 64,
            verdict=Verdict.ACCEPTABLE if ok else Verdict.UNACCEPTABLE,
            results=results,
            rule="five-per-word",
            consequence=consequence(ChallengeRule.FIVE_PER_WORD, ok, len(words)).as_dict(),
            request_id=uuid.uuid4().hex,
            agrees=agrees,
            note="bench" if kind is not Kind.CHALLENGE else None,
        )


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _get(http: httpx.Client, path: str) -> None:
    http.get(path).raise_for_status()


def interleaved_ms(calls: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """The median of :data:`RUNS` times of each call, in ms, the calls taken in turn (one of each, then again...):
    a burst of other work on the machine slows a round of every view, not the whole median of one."""
    for call in calls.values():
        call()  # once first: each view's first answer (its pages read into the cache) is not what is timed
    times: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(RUNS):
        for label, call in calls.items():
            started = time.perf_counter()
            call()
            times[label].append((time.perf_counter() - started) * 1000)
    return {label: statistics.median(taken) for label, taken in times.items()}


# The TD's views timed, each against this (issue 48: each view <= 20 ms at 1M records).
VIEW_TARGET_MS = 20.0
VERIFY_TARGET = 150_000  # records a second (issue 48, point 2)
START_TARGET_S = 1.0  # start to first verdict at 1M (issue 48, point 2)
VERIFY_RUNS = 3
FREE_CORES = "audit verify on two free cores (records/s, from the busiest thread)"
PACKAGE = Path(__file__).resolve().parents[2] / "server" / "wordjudge"
_SINCE, _UNTIL = "2026-01-01T00:00:00Z", "2099-01-01T00:00:00Z"


def views(size: int, words: list[str]) -> dict[str, tuple[str, RecordFilter | None, int | None]]:
    """The TD's views timed: label, their path in the API, and the filter and ``before_id`` the log is listed with
    (None for a view other than a list: the summary, a record), for its query plan."""
    middle, word = size // 2, words[1234]
    return {
        "list: newest": ("/api/challenges", RecordFilter(), None),
        "list: division": ("/api/challenges?division=B", RecordFilter(division="B"), None),
        "list: round + table": ("/api/challenges?round=7&table=42", RecordFilter(round=7, table="42"), None),
        "list: device": ("/api/challenges?actor=kiosk-17", RecordFilter(actor="kiosk-17"), None),
        "list: verdict + division": (
            "/api/challenges?verdict=unacceptable&division=C",
            RecordFilter(verdict=Verdict.UNACCEPTABLE, division="C"),
            None,
        ),
        "list: kind": ("/api/challenges?kind=ruling", RecordFilter(kind=Kind.RULING), None),
        "list: needs ruling": ("/api/challenges?needs_ruling=true", RecordFilter(needs_ruling=True), None),
        "list: time range": (
            f"/api/challenges?since={_SINCE}&until={_UNTIL}",
            RecordFilter(since=utc_time(_SINCE), until=utc_time(_UNTIL)),
            None,
        ),
        "list: word": (f"/api/challenges?word={word}", RecordFilter(word=normalise(word)), None),
        "page: before_id (middle)": (f"/api/challenges?before_id={middle}", RecordFilter(), middle),
        "summary": ("/api/summary", None, None),
        "summary: division": ("/api/summary?division=A", None, None),
        "summary: division + round": ("/api/summary?division=A&round=5", None, None),
        "open a record": (f"/api/challenges/{middle}", None, None),
    }


def plans(data: Path, size: int, words: list[str]) -> dict[str, list[str]]:
    """Each view's statements as SQLite means to run them (EXPLAIN QUERY PLAN), read from the log in ``data``."""
    log = AuditLog(StateLocation(data))
    try:
        awaiting = awaiting_ruling(log, "Bench Open")
        found: dict[str, list[str]] = {}
        for label, (_, where, before_id) in views(size, words).items():
            if where is None:
                continue
            if where.needs_ruling is not None:
                where = replace(where, awaiting=awaiting)
            said = [
                f"find: {' / '.join(log.explain(*find_sql(where, log.dialect.text, limit=101, before_id=before_id)))}"
            ]
            counted = count_sql(where, log.dialect.text)
            if before_id is not None:
                said.append("count: none (an older page)")
            elif counted is None:
                said.append(f"count: none (the {len(awaiting):,} challenges awaiting a ruling, kept in memory)")
            else:
                said.append(f"count: {' / '.join(log.explain(*counted))}")
            found[label] = said
        page = [record.id for record in log.find(RecordFilter(), limit=100, before_id=size // 2)]
        children = f"each challenge's linked records: {' / '.join(log.explain(*children_sql(page, log.dialect.text)))}"
        for label in found:
            found[label].append(children)
        tallies = [
            f"tallies: {' / '.join(log.explain(TALLY_COUNTS, ('Bench Open',)))}",
            f"most challenged words, a tally at a time: "
            f"{' / '.join(log.explain(TALLY_WORDS, ('Bench Open', 1, 'A', 0, 10)))}",
        ]
        for label in ("summary", "summary: division", "summary: division + round"):
            found[label] = tallies
        found["open a record"] = [f"the record: {' / '.join(log.explain(*get_sql(size // 2)))}", children]
    finally:
        log.close()
    return found


def whole_checked(base: str, started: float) -> float:
    """Wait for the server's check of the whole log, which it starts 3 s after its start, to end (health's
    ``audit.integrity.whole`` no longer ``running``): the views are timed as a TD meets them, not beside a chain
    check of a million records on one of the two cores. Return the seconds from the start to its end."""
    while True:
        whole = httpx.get(f"{base}/api/health", timeout=10).json()["audit"]["integrity"]["whole"]
        if whole is not None and whole != "running":
            return time.perf_counter() - started
        if time.perf_counter() - started > 300:
            sys.exit("the server's check of the whole log did not end within 300 s")
        time.sleep(0.2)


def measure(data: Path, size: int, words: list[str]) -> dict[str, Any]:
    """Start a server on ``data`` and time what a TD does, at this size."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data), "WORDJUDGE_LOG_LEVEL": "warning", "WORDJUDGE_MDNS_NAME": ""}
    script = Path(sys.executable).with_name("wordjudge")
    access = AccessStore(StateLocation(data)).open()
    token = access.devices.add(f"bench-kiosk-{size}", Role.KIOSK, by="bench").token
    access.close()
    figures: dict[str, Any] = {"load at the start (1 min)": os.getloadavg()[0]}
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(script), "serve", "--max-requests-per-client", "0", "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first_verdict(base, token, server, started)
        figures["start to first verdict (s)"] = time.perf_counter() - started
        wait_until_up(f"{base}/api/health", server)
        figures["start-up's check of the whole log (s)"] = whole_checked(base, started)
        http = httpx.Client(base_url=base, timeout=120)
        signed = http.post("/api/session", json={"name": "benchtd", "password": PASSWORD})
        signed.raise_for_status()
        figures |= interleaved_ms(
            {label: functools.partial(_get, http, path) for label, (path, _, _) in views(size, words).items()}
        )
        before = rss_kib(server.pid)
        started = time.perf_counter()
        peak = before
        with http.stream("GET", "/api/export?format=csv&division=A") as response:
            first = None
            for _chunk in response.iter_bytes():
                if first is None:
                    first = time.perf_counter() - started
                peak = max(peak, rss_kib(server.pid))
        figures["export: first byte (ms)"] = (first or 0) * 1000
        figures["export: division A, whole (s)"] = time.perf_counter() - started
        figures["export: server RSS before / peak (MiB)"] = f"{before / 1024:.0f} / {peak / 1024:.0f}"
        http.close()
    finally:
        server.terminate()
        server.communicate(timeout=60)
    rates, loads = [], []
    for _ in range(VERIFY_RUNS):
        loads.append(os.getloadavg()[0])
        started = time.perf_counter()
        done = subprocess.run([str(script), "audit", "verify"], env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"verify failed: {done.stderr}")
        rates.append(size / elapsed)
    figures["audit verify (records/s)"] = round(statistics.median(rates))
    figures["load at verify (1 min)"] = statistics.median(loads)
    figures |= verify_threads(data, size)
    figures["start, profiled"] = start_profile(data, size, env)
    return figures


def verify_threads(data: Path, size: int) -> dict[str, Any]:
    """The check's busiest thread's CPU time (tests/bench/verify_threads.py), and the rate on two free cores it
    makes for (the records over it and the process's start, as ``audit verify`` measured whole includes it): a
    figure the load of a shared machine does not move."""
    command = [sys.executable, "-m", "tests.bench.verify_threads", str(data / AUDIT_FILE)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    if done.returncode != 0:
        sys.exit(f"verify_threads failed: {done.stderr}")
    said = json.loads(done.stdout)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [str(Path(sys.executable).with_name("wordjudge")), "audit", "verify", "--help"]
    subprocess.run(command, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The command's own start (its imports, no check), in CPU seconds as the threads are.
    start = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    busiest = said["threads_cpu_s"][0]
    return {
        "audit verify: CPU, all threads (s)": said["cpu_s"],
        "audit verify: CPU, busiest thread (s)": busiest,
        FREE_CORES: round(size / (busiest + start)),
    }


def first_verdict(base: str, token: str, server: subprocess.Popen[str], started: float) -> None:
    """Ask the server starting at ``base`` for a verdict until it gives one (a kiosk's ``token``); exit if it
    stops, refuses, or gives none within 120 s of ``started``."""
    body = {"division": "A", "table": 1, "round": 1, "words": "cat dog", "request_id": uuid.uuid4().hex}
    with httpx.Client(timeout=5, headers={"Authorization": f"Bearer {token}"}) as poll:  # no set-up per try
        while True:
            try:
                answer = poll.post(f"{base}/api/challenges", json=body)
                if answer.status_code in (200, 201):
                    return
            except httpx.TransportError:
                pass
            else:
                if answer.status_code >= 400 and answer.status_code != 503:
                    sys.exit(f"the first challenge was refused: {answer.text}")
            if server.poll() is not None:
                sys.exit(f"server stopped: {server.communicate()[1]}")
            if time.perf_counter() - started > 120:
                server.terminate()
                sys.exit(f"no verdict after 120 s: {answer.text if 'answer' in locals() else 'no answer'}")
            time.sleep(0.02)


def start_profile(data: Path, size: int, env: dict[str, str]) -> list[str]:
    """Where the start's time goes: a server started again on ``data`` under cProfile (its main thread: the
    start and the event loop; the background check of the whole log runs in a thread of its own and is not in
    it), stopped (SIGINT, as a TD's Ctrl-C) as soon as it gives its first verdict. The lines of the page: the
    profiled start, then wordjudge's own steps and the imports by their cumulative time, longest first."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    access = AccessStore(StateLocation(data)).open()
    token = access.devices.add(f"bench-profile-{size}-{uuid.uuid4().hex[:6]}", Role.KIOSK, by="bench").token
    access.close()
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "start.prof"
        started = time.perf_counter()
        command = [sys.executable, "-m", "cProfile", "-o", str(output), "-m", "wordjudge", "serve"]
        server = subprocess.Popen(
            [*command, "--max-requests-per-client", "0", "--port", str(port)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            first_verdict(base, token, server, started)
            took = time.perf_counter() - started
        finally:
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=120)
        if not output.is_file():
            return [f"start to first verdict under cProfile: {took:.2f} s (the profile was not written)"]
        return [
            f"start to first verdict under cProfile: {took:.2f} s (cProfile's own cost included)",
            *profiled(pstats.Stats(str(output))),
        ]


# A start's steps as the profile names them (a function of wordjudge's, in its file), and the imports'.
_IMPORTS = ("<frozen importlib._bootstrap>", "_find_and_load")
_SERVING = ("uvicorn", "asyncio")  # the event loop's own running, which lasts until the stop: not a step


def profiled(stats: pstats.Stats, top: int = 14) -> list[str]:
    """The profile's summary: the time in the longest import, then wordjudge's functions by cumulative time (a step and the
    steps within it each), ``top`` of them."""
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    imports = max((row[3] for (file, _, name), row in table.items() if (file, name) == _IMPORTS), default=0.0)
    own = [
        (row[3], f"{Path(file).relative_to(PACKAGE).as_posix()}:{name}")
        for (file, _, name), row in table.items()
        if file.startswith(str(PACKAGE)) and name not in ("<module>", "<lambda>", "<genexpr>", "<listcomp>")
    ]
    lines = [f"{imports:.3f} s in the longest import (with all it imports: the command line, the web app)"]
    lines += [f"{seconds:.3f} s `{where}`" for seconds, where in sorted(own, reverse=True)[:top]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="record counts to measure at, ascending")
    parser.add_argument("--markdown", type=Path, help="also write the table to this Markdown file")
    parser.add_argument("--keep", action="store_true", help="keep the data dir (its path is printed) for profiling")
    parser.add_argument(
        "--data",
        type=Path,
        help="measure the data dir a run with --keep left (its log as it is, migrated if this version's schema is newer:"
        " the writing is not timed again), instead of writing one",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="with --data: a JSON file of the figures an earlier version measured on the same log (a line this"
        " script prints), shown beside this run's",
    )
    args = parser.parse_args()
    if args.before is not None and args.data is None:
        parser.error("--before goes with --data: the figures of an earlier version on the log --data names")
    if args.data is not None:
        before = None
        if args.before is not None:
            try:
                before = json.loads(args.before.read_text())
            except (OSError, ValueError) as exc:
                parser.error(f"--before {args.before}: not a file of figures this script printed ({exc})")
        reuse(args.data, args.markdown, before)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="wordjudge-bench-log-"))
    print(f"data dir: {root / 'data'}", file=sys.stderr, flush=True)
    try:
        data, words = make_data_dir(root)
        results: dict[int, dict[str, Any]] = {}
        fill_times: dict[int, float] = {}
        filler = Filler(AuditLog(StateLocation(data)), words)
        for size in sizes:
            filler.log = AuditLog(StateLocation(data))
            filler.log.start()
            try:
                fill_times[size] = filler.fill(size - len(results))  # each measure before adds one verdict
            finally:
                filler.log.close()
            print(f"{size:,} records written ({fill_times[size]:.0f} s)", file=sys.stderr, flush=True)
            results[size] = measure(data, size, words)
            print(json.dumps(results[size]), file=sys.stderr, flush=True)
        table = render(results, fill_times, plans(data, sizes[-1], words))
        print(table)
        if args.markdown:
            args.markdown.write_text(table)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def reuse(data: Path, markdown: Path | None, before: dict[str, Any] | None = None) -> None:
    """Measure the data dir ``data`` a run with ``--keep`` left (its words are the demo list's, as it was made),
    beside the figures ``before`` of an earlier version on it, if given."""
    if not (data / AUDIT_FILE).is_file():
        sys.exit(f"{data} holds no audit log ({AUDIT_FILE}): give the data dir a run with --keep printed")
    words = read_demo_list().sorted_words()
    log = AuditLog(StateLocation(data))
    started = time.perf_counter()
    log.start()  # migrated here, if the schema is newer than the log's: timed apart from the views
    opened = time.perf_counter() - started
    size = log.count(RecordFilter())
    log.close()
    print(f"{size:,} records, opened (and migrated if need be) in {opened:.1f} s", file=sys.stderr, flush=True)
    results = {size: measure(data, size, words)}
    print(json.dumps(results[size]), file=sys.stderr, flush=True)
    table = render(results, {}, plans(data, size, words), before)
    print(table)
    if markdown:
        markdown.write_text(table)


def _loads(results: dict[int, dict[str, Any]]) -> list[float]:
    """The load averages (1 min) the run noted with its figures, at every size."""
    return [value for figures in results.values() for name, value in figures.items() if name.startswith("load at")]


def render(
    results: dict[int, dict[str, Any]],
    fill_times: dict[int, float],
    planned: dict[str, list[str]],
    before: dict[str, Any] | None = None,
) -> str:
    """The page: the figures at each size, the views' against their target at the largest, and their plans (and
    an earlier version's figures on the same log, ``before``, if given)."""
    sizes = list(results)
    rows = [row for row in next(iter(results.values())) if row != "start, profiled"]
    largest = sizes[-1]
    lines = [
        "# The audit log at scale",
        "",
        headline_lines(
            MEASURES,
            _headline(largest, results[largest], timed=views(largest, ["X"] * 1235)),
            machine([*_loads(results), os.getloadavg()[0]]),
        ).rstrip(),
        "",
        "`python -m tests.bench.bench_log` (see its docstring for what it does); this page is what its"
        " `--markdown docs/bench-log.md` writes.",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {cpu_model()}, "
        f"{os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at the end), Python "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version} via Python's sqlite3, wordjudge {__version__}. "
        f"Views are the median of {RUNS} requests through the HTTP API as a TD (taken in turn, after a first of each), in "
        "ms unless the row says otherwise. "
        f"Targets: each view <= {VIEW_TARGET_MS:.0f} ms at 1M (issue 48), export first byte <= 200 ms in constant "
        f"memory, verify >= {VERIFY_TARGET:,} records/s on 2 cores (the median of {VERIFY_RUNS} runs of `wordjudge audit"
        f" verify`, each timed whole, the process's start included), start to first verdict <= {START_TARGET_S} s at"
        " 1M (issue 48, point 2). The load average (1 min) is noted as each was measured: the machine is shared.",
        "",
        "| | "
        + ("before (an earlier version, the same log) | " if before else "")
        + " | ".join(f"{size:,} records" for size in sizes)
        + " | target | at the target |",
        "|---|" + "---|" * (len(sizes) + 2 + bool(before)),
    ]
    if fill_times:
        lines.append(
            "| writing them (s, through the writer) | " + " | ".join(f"{fill_times[s]:.0f}" for s in sizes) + " | | |"
        )
    timed = views(largest, ["X"] * 1235)
    for row in rows:
        cells = [results[s][row] for s in sizes]
        shown = [_cell(c) for c in cells]
        target, ratio = _target(row, results[largest][row], timed)
        if before:
            shown.insert(0, _cell(before.get(row, "")))
        lines.append(f"| {row} | " + " | ".join(shown) + f" | {target} | {ratio} |")
    lines += [
        "",
        '"At the target": the largest size\'s figure over the target (1.00 x is the target; for a time, below it is'
        " within; for verify's rate, above it)."
        + (
            ' "Before": the figures of `--before`, measured by an earlier version on the same machine, the'
            " same way, on a copy of the same log (its size within 1 %)."
            if before
            else ""
        ),
        "",
        f"## Where the start's time goes ({largest:,} records)",
        "",
        "A server started again on the same log under cProfile, stopped as soon as it gave its first verdict: the"
        " time in imports, then wordjudge's own functions by cumulative time (a step includes the steps it calls)."
        " Its main thread only: the check of the whole log, started 3 s later in a thread of its own, is not in it.",
        "",
        *[f"- {line}" for line in results[largest].get("start, profiled", ["(not measured)"])],
        "",
        f"## The views' query plans ({largest:,} records)",
        "",
        "SQLite's `EXPLAIN QUERY PLAN` of each statement a view runs, read from the log measured (steps joined by"
        " ` / `): each a search through an index, the primary key or a tally; none a scan of the records. A list"
        " reads a page (`find`), counts its matches on the first page (`count`: the last id, a time range's ids,"
        " the counts kept with the records, or an index), and reads its challenges' linked records. The summary"
        " reads the tallies kept with the log (its final verdicts' corrections are kept in memory, read once).",
        "",
    ]
    for label, said in planned.items():
        lines.append(f"- **{label}**")
        lines += [f"  - {line}" for line in said]
    return "\n".join(lines) + "\n"


# What the page measures (docs/benchmarks.md's table says it, from the page).
MEASURES = "the audit log at 1,000,000 records, through the HTTP API"


def _headline(size: int, figures: dict[str, Any], *, timed: dict[str, Any]) -> str:
    """The page's headline: the largest size's figures against their targets, with the load they were taken at."""
    shown = [figures[row] for row in timed if isinstance(figures.get(row), float)]
    first = figures.get("export: first byte (ms)", 0.0)
    return (
        f"at {size:,} records, load {figures.get('load at the start (1 min)', 0.0):.1f}: every TD view"
        f" {min(shown, default=0.0):.1f} to {max(shown, default=0.0):.1f} ms (target {VIEW_TARGET_MS:.0f} ms),"
        f" `audit verify` {figures.get('audit verify (records/s)', 0):,} records/s (target {VERIFY_TARGET:,}, load"
        f" {figures.get('load at verify (1 min)', 0.0):.1f}; on two free cores, from its busiest thread's CPU time:"
        f" {figures.get(FREE_CORES, 0):,}), start to first verdict"
        f" {figures.get('start to first verdict (s)', 0.0):.2f} s (target {START_TARGET_S} s); export's first byte"
        f" {first:,.1f} ms (target 200 ms{': not met' if first > 200 else ''})"
    )


def _cell(value: Any) -> str:
    """A figure as the table shows it."""
    if isinstance(value, float):
        return f"{value:.1f}" if value >= 10 or value == 0 else f"{value:.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _target(row: str, value: Any, timed: dict[str, Any]) -> tuple[str, str]:
    """A row's target and the largest size's figure against it (empty for a row without one)."""
    if row in timed:
        return f"<= {VIEW_TARGET_MS:.0f}", f"{value / VIEW_TARGET_MS:.2f} x"
    if row == "start to first verdict (s)":
        return f"<= {START_TARGET_S}", f"{value / START_TARGET_S:.2f} x"
    if row.startswith("audit verify") and "records/s" in row and isinstance(value, int | float):
        return f">= {VERIFY_TARGET:,}", f"{value / VERIFY_TARGET:.2f} x"
    return "", ""


if __name__ == "__main__":
    main()
