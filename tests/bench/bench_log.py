"""The audit log at scale: the TD's views, the summary, export, verify and start-up at 10k, 100k and 1M records.

Run from the repository root (not part of the test suite; 1M records take about ten minutes to write):

    .venv/bin/python -m tests.bench.bench_log [--sizes 10000,100000,1000000] [--markdown docs/bench-log.md]

It makes a data dir with two full lexicons (the demo list, and a generated list of 280,000 words,
the size of CSW24) and an event with three divisions, then fills its audit log through the real
write path (``AuditLog`` and its writer: group commit, fsync, the triggers that keep the word index
and the summary's tallies) with a hall's mix: challenges of 1 to 3 words at 150 tables over 20
rounds from 60 devices, about a third unacceptable, and re-checks (one in 20, a fifth of them
disagreeing), reissues and rulings. At each size it starts ``wordjudge serve`` (time to the first
verdict), and times through the HTTP API as a signed-in TD (median of 5): each list filter, a page
of keyset paging in the middle of the log, the summary, opening a record, an export's first byte
and whole (with the server's RSS before and after), and ``wordjudge audit verify`` (records/s).
Targets (issue "The audit log proves itself"): each view <= 100 ms, export's first byte <= 200 ms in
constant memory, verify >= 100,000 records/s, start to first verdict <= 1.5 s at 1M.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx

from wordjudge import __version__
from wordjudge.access.store import ACCESS_FILE, AccessStore
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.model.auth import Role
from wordjudge.model.records import Entry, Kind, Verdict
from wordjudge.model.rules import ChallengeRule, consequence
from wordjudge.words.demo import read_demo_list
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.wordlist import SourceFormat, read_word_list

from ..wordgen import markov_words
from .bench_challenges import free_port, wait_until_up

DIVISIONS = ("A", "B", "C")
PASSWORD = "bench password 123"
RUNS = 5


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
    access = AccessStore(data / ACCESS_FILE).open()
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


def median_ms(call: Callable[[], Any]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(data: Path, size: int, words: list[str]) -> dict[str, Any]:
    """Start a server on ``data`` and time what a TD does, at this size."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data), "WORDJUDGE_LOG_LEVEL": "warning", "WORDJUDGE_MDNS_NAME": ""}
    script = Path(sys.executable).with_name("wordjudge")
    access = AccessStore(data / ACCESS_FILE).open()
    token = access.devices.add(f"bench-kiosk-{size}", Role.KIOSK, by="bench").token
    access.close()
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(script), "serve", "--max-requests-per-client", "0", "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    figures: dict[str, Any] = {}
    try:
        body = {"division": "A", "table": 1, "round": 1, "words": "cat dog", "request_id": uuid.uuid4().hex}
        poll = httpx.Client(timeout=5, headers={"Authorization": f"Bearer {token}"})  # one client: no set-up per try
        while True:
            try:
                answer = poll.post(f"{base}/api/challenges", json=body)
                if answer.status_code in (200, 201):
                    break
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
        figures["start to first verdict (s)"] = time.perf_counter() - started
        poll.close()
        wait_until_up(f"{base}/api/health", server)
        http = httpx.Client(base_url=base, timeout=120)
        signed = http.post("/api/session", json={"name": "benchtd", "password": PASSWORD})
        signed.raise_for_status()
        middle = size // 2
        views = {
            "list: newest": "/api/challenges",
            "list: division": "/api/challenges?division=B",
            "list: round + table": "/api/challenges?round=7&table=42",
            "list: device": "/api/challenges?actor=kiosk-17",
            "list: verdict + division": "/api/challenges?verdict=unacceptable&division=C",
            "list: kind": "/api/challenges?kind=ruling",
            "list: needs ruling": "/api/challenges?needs_ruling=true",
            "list: time range": "/api/challenges?since=2026-01-01T00:00:00Z&until=2099-01-01T00:00:00Z",
            "list: word": f"/api/challenges?word={words[1234]}",
            "page: before_id (middle)": f"/api/challenges?before_id={middle}",
            "summary": "/api/summary",
            "summary: division": "/api/summary?division=A",
            "summary: division + round": "/api/summary?division=A&round=5",
            "open a record": f"/api/challenges/{middle}",
        }
        for label, path in views.items():
            figures[label] = median_ms(functools.partial(_get, http, path))
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
    started = time.perf_counter()
    done = subprocess.run([str(script), "audit", "verify"], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"verify failed: {done.stderr}")
    figures["audit verify (records/s)"] = f"{size / elapsed:,.0f}"
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="record counts to measure at, ascending")
    parser.add_argument("--markdown", type=Path, help="also write the table to this Markdown file")
    parser.add_argument("--keep", action="store_true", help="keep the data dir (its path is printed) for profiling")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="wordjudge-bench-log-"))
    print(f"data dir: {root / 'data'}", file=sys.stderr, flush=True)
    try:
        data, words = make_data_dir(root)
        results: dict[int, dict[str, Any]] = {}
        fill_times: dict[int, float] = {}
        filler = Filler(AuditLog(data / AUDIT_FILE), words)
        for size in sizes:
            filler.log = AuditLog(data / AUDIT_FILE)
            filler.log.start()
            try:
                fill_times[size] = filler.fill(size - len(results))  # each measure before adds one verdict
            finally:
                filler.log.close()
            print(f"{size:,} records written ({fill_times[size]:.0f} s)", file=sys.stderr, flush=True)
            results[size] = measure(data, size, words)
            print(json.dumps(results[size]), file=sys.stderr, flush=True)
        table = render(results, fill_times)
        print(table)
        if args.markdown:
            args.markdown.write_text(table)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def render(results: dict[int, dict[str, Any]], fill_times: dict[int, float]) -> str:
    sizes = list(results)
    rows = list(next(iter(results.values())))
    lines = [
        "# The audit log at scale",
        "",
        "`python -m tests.bench.bench_log` (see its docstring for what it does).",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, SQLite via Python's sqlite3, "
        f"wordjudge {__version__}. Views are the median of {RUNS} requests through the HTTP API as a TD, in ms "
        "unless the row says otherwise. Targets: views <= 100 ms, export first byte <= 200 ms in constant "
        "memory, verify >= 100,000 records/s, start to first verdict <= 1.5 s at 1M.",
        "",
        "| | " + " | ".join(f"{size:,} records" for size in sizes) + " |",
        "|---|" + "---|" * len(sizes),
        "| writing them (s, through the writer) | " + " | ".join(f"{fill_times[s]:.0f}" for s in sizes) + " |",
    ]
    for row in rows:
        cells = [results[s][row] for s in sizes]
        shown = [f"{c:.1f}" if isinstance(c, float) else str(c) for c in cells]
        lines.append(f"| {row} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
