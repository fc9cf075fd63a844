"""The verdict path side by side (issue 19): wordjudge's challenge route against two naive judges, in one run.

Run from the repository root (needs Debian's ``wrk`` and ``taskset``; not part of the test suite):

    .venv/bin/python -m tests.bench.bench_verdict [--seconds 10] [--server-cores 0] [--load-cores 1]
        [--markdown FILE] [--only wordjudge,naive,durable]

Four servers, one after the other, each pinned with ``taskset`` to ``--server-cores`` while the load
generators run on ``--load-cores`` (by default the other cores, or the same ones on a machine
without others: the table then says they share):

- **wordjudge**: ``wordjudge serve`` on a fresh data folder, demo lexicon, durable log (WAL,
  synchronous=FULL, each verdict committed with fsync before it is sent), 200 kiosks enrolled and
  bound to 127.0.0.1 (a large hall), each at the event's highest rate limit (600 a minute, which
  this load never reaches per kiosk: the limit is counted, never refused); every request is a
  2-word challenge with a new request id and the next kiosk's bearer token;
- **health**: the same server's ``GET /api/health``, the ceiling;
- **naive**: ``tests.bench.naive_judge`` (FastAPI, one POST route, pydantic body, a Python set of
  the same demo words, a JSON answer; no log, no tokens, no limits);
- **durable**: the same with one SQLite INSERT + commit per request (WAL, synchronous=FULL).

Each is measured (a) closed loop with wrk (one thread) at concurrency 16 and 64, and (b) open loop
with ``tests.bench.open_loop`` at 200, 500 and 1,000 requests a second. After every wordjudge run
the audit log is read: it must hold at least one record per acknowledged verdict (a few more for
requests in flight when the generator stopped) and its chain must verify. The load average is
noted beside every figure. Prints Markdown tables; ``--markdown`` also writes them to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wordjudge import __version__
from wordjudge.access.access_store import AccessStore
from wordjudge.log.audit import AuditLog
from wordjudge.model.auth import Role
from wordjudge.storage.dialect import StateLocation

from .bench_challenges import benchmark_event, free_port, parse_wrk, wait_until_up
from .headline import cpu_model

CLOSED = (16, 64)
OPEN: tuple[int, ...] = (200, 500, 1000)
KIOSKS = 200
TARGETS = ("wordjudge", "health", "naive", "durable")

_LUA = """
local counter = 0
local prefix = "bench"
local tokens = {}
local path = "/api/challenges"
function init(args)
  prefix = args[1] .. "-" .. tostring(math.random(1, 1000000000))
  for line in io.lines(args[2]) do tokens[#tokens + 1] = line end
end
function request()
  counter = counter + 1
  local body = '{"division":"Open","table":7,"round":1,"words":"cat qi","request_id":"' .. prefix .. "-" .. counter .. '"}'
  local token = tokens[(counter % #tokens) + 1]
  return wrk.format("POST", path,
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end
"""


def load_average() -> float:
    return os.getloadavg()[0]


@dataclass
class Row:
    """One measurement: a target at a concurrency (closed) or a rate (open)."""

    target: str
    mode: str  # "closed" or "open"
    level: int  # connections or requests a second
    figures: dict[str, Any]
    load: float
    audit: str = ""  # for wordjudge: what the log held afterwards


@dataclass
class Bench:
    seconds: int
    server_cores: str
    load_cores: str
    work: Path
    rows: list[Row] = field(default_factory=list)
    database_url: str | None = None  # wordjudge's state in PostgreSQL (--database's URL), or in its data folder

    def pinned(self, cores: str, command: list[str]) -> list[str]:
        return ["taskset", "-c", cores, *command]

    def wrk(self, url: str, connections: int, script: Path | None, *script_args: str) -> dict[str, Any]:
        command = ["wrk", "-t1", f"-c{connections}", f"-d{self.seconds}s", "--latency", "--timeout", "5s"]
        if script is not None:
            command += ["-s", str(script)]
        command.append(url)
        if script is not None:
            command += ["--", *script_args]
        done = subprocess.run(self.pinned(self.load_cores, command), capture_output=True, text=True, check=True)
        figures = parse_wrk(done.stdout)
        non_2xx = done.stdout.split("Non-2xx or 3xx responses:")
        figures["ok"] = figures["done"] - (int(non_2xx[1].split()[0]) if len(non_2xx) > 1 else 0)
        return figures

    def open_loop(self, url: str, rate: int, tokens: Path | None, health: bool = False) -> dict[str, Any]:
        command = [sys.executable, "-m", "tests.bench.open_loop", url, str(rate), str(self.seconds)]
        if tokens is not None:
            command += ["--tokens", str(tokens)]
        if health:
            command.append("--health")
        done = subprocess.run(self.pinned(self.load_cores, command), capture_output=True, text=True, check=True)
        figures: dict[str, Any] = json.loads(done.stdout)
        return figures

    def measure(
        self,
        target: str,
        base: str,
        path: str,
        tokens: Path | None,
        after: Any = None,
        *,
        health: bool = False,
    ) -> None:
        script = self.work / "challenge.lua"
        for connections in CLOSED:
            load = load_average()
            if health:
                figures = self.wrk(base + path, connections, None)
            else:
                assert tokens is not None
                figures = self.wrk(base + path, connections, script, uuid.uuid4().hex[:8], str(tokens))
            row = Row(target, "closed", connections, figures, load)
            if after is not None:
                row.audit = after(figures["ok"])
            self.rows.append(row)
            print(f"{target} closed c{connections}: {figures} load {load:.2f} {row.audit}", file=sys.stderr)
        for rate in OPEN:
            load = load_average()
            figures = self.open_loop(base + path, rate, tokens, health)
            row = Row(target, "open", rate, figures, load)
            if after is not None:
                row.audit = after(figures["ok"])
            self.rows.append(row)
            print(f"{target} open {rate}/s: {figures} load {load:.2f} {row.audit}", file=sys.stderr)

    def wordjudge(self, targets: set[str]) -> None:
        with serving_wordjudge(self.work, self.server_cores, self.database_url) as (_, base, data_dir):
            self._measure_wordjudge(targets, base, data_dir)

    def _measure_wordjudge(self, targets: set[str], base: str, data_dir: Path) -> None:
        token_file = self.work / "tokens.txt"
        log = AuditLog(StateLocation(data_dir, self.database_url))
        seen = {"records": 0}

        def after(acknowledged: int) -> str:
            time.sleep(0.5)  # what was in flight when the generator stopped is written by now
            verification = log.verify()
            added = verification.records - seen["records"]
            seen["records"] = verification.records
            state = "ok" if verification.ok and added >= acknowledged else "FAILED"
            chain = "chain verified" if verification.ok else "CHAIN BROKEN: " + verification.describe()
            return f"{state}: {added:,} records for {acknowledged:,} acknowledged; {chain}"

        try:
            # Warm up: every kiosk binds and is seen once, the code paths run.
            self.wrk_warm(base + "/api/challenges", token_file)
            seen["records"] = log.verify().records
            if "health" in targets:
                self.measure("health", base, "/api/health", None, health=True)
            if "wordjudge" in targets:
                self.measure("wordjudge", base, "/api/challenges", token_file, after)
        finally:
            log.close()

    def wrk_warm(self, url: str, tokens: Path) -> None:
        subprocess.run(
            self.pinned(
                self.load_cores,
                ["wrk", "-t1", "-c16", "-d2s", "-s", str(self.work / "challenge.lua"), url, "--", "warm", str(tokens)],
            ),
            capture_output=True,
            check=True,
        )

    def naive(self, durable: bool) -> None:
        token_file = self.work / "tokens.txt"
        if not token_file.exists():
            token_file.write_text("none\n")
        (self.work / "challenge.lua").write_text(_LUA)
        target = "durable" if durable else "naive"
        with serving_naive(self.work, self.server_cores, durable) as (_, base, folder):
            self.wrk_warm(base + "/api/challenges", token_file)
            if durable:
                before = _count(folder)

                def after(acknowledged: int) -> str:
                    nonlocal before
                    time.sleep(0.5)
                    now = _count(folder)
                    added, before = now - before, now
                    return f"{'ok' if added >= acknowledged else 'FAILED'}: {added:,} rows for {acknowledged:,}"

                self.measure(target, base, "/api/challenges", token_file, after)
            else:
                self.measure(target, base, "/api/challenges", token_file)


@contextmanager
def serving_naive(work: Path, cores: str, durable: bool) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """The naive judge (``durable``: its SQLite file in ``work/durable``, else no log), pinned with taskset to
    ``cores``, on a free port, once it answers a challenge: the process, its base URL and its folder."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "tests.bench.naive_judge", str(port)]
    folder = work / ("durable" if durable else "naive")
    folder.mkdir()
    if durable:
        command += ["--durable", str(folder)]
    server = subprocess.Popen(
        ["taskset", "-c", cores, *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])},
    )
    try:
        _wait_post(base + "/api/challenges", server)
        yield server, base, folder
    finally:
        server.terminate()
        server.communicate(timeout=60)


def prepare_wordjudge(work: Path, database: str | None = None) -> tuple[Path, dict[str, str]]:
    """A data folder in ``work`` for ``wordjudge serve``: the demo event at the highest rate limit, :data:`KIOSKS`
    kiosks bound to 127.0.0.1, their tokens in ``work/tokens.txt`` and wrk's script in ``work/challenge.lua``;
    the log and the kiosks in ``database`` if given. Returns the folder and the environment to run wordjudge in."""
    data_dir = work / "wordjudge"
    data_dir.mkdir()
    # The first kiosk as the CLI enrols it (which also makes the data folder what a server expects) ...
    env, _, first = benchmark_event(data_dir, "kiosk-000", challenges_per_minute=600, database_url=database)
    # ... and the rest bound to the address they will use, as pairing binds a kiosk.
    access = AccessStore(StateLocation(data_dir, database)).open()
    tokens = [first]
    with access.database.write() as db:
        for n in range(1, KIOSKS):
            enrolled = access.devices.insert(db, f"kiosk-{n:03d}", Role.KIOSK, None, "bench", "127.0.0.1")
            tokens.append(enrolled.token)
    access.close()
    (work / "tokens.txt").write_text("\n".join(tokens) + "\n")
    (work / "challenge.lua").write_text(_LUA)
    return data_dir, env


@contextmanager
def serving_wordjudge(
    work: Path, cores: str, database: str | None = None
) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """``wordjudge serve`` on the data folder :func:`prepare_wordjudge` makes in ``work`` (its state in
    ``database`` if given), pinned with taskset to ``cores``, on a free port, once its health check answers: the
    process (taskset execs the server, so its pid is the server's), its base URL and its data folder. Stopped
    on leaving."""
    data_dir, env = prepare_wordjudge(work, database)
    base = f"http://127.0.0.1:{free_port()}"
    command = [
        str(Path(sys.executable).with_name("wordjudge")),
        "serve",
        "--max-requests-per-client",
        "0",
        "--port",
        base.rsplit(":", 1)[1],
    ]
    server = subprocess.Popen(
        ["taskset", "-c", cores, *command], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until_up(f"{base}/api/health", server)
        yield server, base, data_dir
    finally:
        server.terminate()
        server.communicate(timeout=60)


def _count(folder: Path) -> int:
    with sqlite3.connect(folder / "naive.sqlite3") as connection:
        return int(connection.execute("SELECT count(*) FROM verdicts").fetchone()[0])


def _wait_post(url: str, server: subprocess.Popen[str], seconds: float = 60) -> None:
    import httpx2 as httpx

    body = {"division": "Open", "table": 7, "round": 1, "words": "cat qi", "request_id": "warm-up-0"}
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.post(url, json=body, timeout=2).raise_for_status()
            return
        except httpx.TransportError:
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"server did not start: {server.communicate()[1]}")
            time.sleep(0.2)


def tables(bench: Bench, shares: bool) -> str:
    by = {(row.target, row.mode, row.level): row for row in bench.rows}
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {cpu_model()}, {os.cpu_count()} cores; server pinned "
        f"to core(s) {bench.server_cores}, load generators on core(s) {bench.load_cores}"
        f"{' (sharing the server’s cores)' if shares else ''}; Python {platform.python_version()}, wordjudge "
        f"{__version__}; {bench.seconds} s per run. Load: the 1-minute load average when each run started.",
        "",
        "Closed loop (wrk -t1): requests a second, p50 / p99 latency, errors.",
        "",
        "| concurrency | wordjudge | health (ceiling) | naive (no log) | naive durable | vs naive | vs durable |",
        "|---|---|---|---|---|---|---|",
    ]

    def cell(row: Row | None, rate: str = "rps") -> str:
        if row is None:
            return "-"
        f = row.figures
        return f"{f[rate]:,.0f}/s, {f['p50']:.1f} / {f['p99']:.1f} ms, {int(f['errors'])} err (load {row.load:.2f})"

    def ratio(a: Row | None, b: Row | None, rate: str) -> str:
        return f"{a.figures[rate] / b.figures[rate]:.2f}x" if a and b and b.figures[rate] else "-"

    for level in CLOSED:
        rows = [by.get((target, "closed", level)) for target in TARGETS]
        lines.append(
            f"| {level} | {' | '.join(cell(r) for r in rows)} | {ratio(rows[0], rows[2], 'rps')} "
            f"| {ratio(rows[0], rows[3], 'rps')} |"
        )
    lines += [
        "",
        "Open loop (tests/bench/open_loop.py, 64 keep-alive connections, latency from each request's due time): "
        "achieved rate, p50 / p99 / p99.9 ms, errors; the generator's CPU as a share of one core.",
        "",
        "| rate | target | achieved | p50 | p99 | p99.9 | max | errors | generator CPU | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for level in OPEN:
        for target in TARGETS:
            row = by.get((target, "open", level))
            if row is None:
                continue
            f = row.figures
            lines.append(
                f"| {level}/s | {target} | {f['achieved']:,.0f}/s | {f['p50']:.2f} | {f['p99']:.2f} | {f['p999']:.2f} "
                f"| {f['max']:.1f} | {f['errors']} | {f['cpu_share']:.0%} | {row.load:.2f} |"
            )
    checks = [row for row in bench.rows if row.audit]
    if checks:
        lines += ["", "Log checks after each run:", ""]
        lines += [f"- {row.target} {row.mode} {row.level}: {row.audit}" for row in checks]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10, help="length of each run")
    parser.add_argument("--server-cores", default="0", help="taskset's list for the servers (default: 0)")
    parser.add_argument("--load-cores", help="taskset's list for the load generators (default: the other cores)")
    parser.add_argument("--only", default=",".join(TARGETS), help="which targets, comma-separated")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    everything = set(range(os.cpu_count() or 1))
    server = {int(c) for part in args.server_cores.split(",") for c in _span(part)}
    others = sorted(everything - server)
    load_cores = args.load_cores or (",".join(map(str, others)) if others else args.server_cores)
    shares = bool(server & {int(c) for part in load_cores.split(",") for c in _span(part)})
    targets = set(args.only.split(","))
    work = Path(tempfile.mkdtemp(prefix="wordjudge-verdict-"))
    bench = Bench(args.seconds, args.server_cores, load_cores, work)
    try:
        if targets & {"wordjudge", "health"}:
            bench.wordjudge(targets)
        if "naive" in targets:
            bench.naive(durable=False)
        if "durable" in targets:
            bench.naive(durable=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = tables(bench, shares)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    failed = [row for row in bench.rows if row.audit.startswith("FAILED")]
    if failed:
        sys.exit(f"{len(failed)} log check(s) failed")


def _span(part: str) -> list[str]:
    if "-" in part:
        low, high = part.split("-")
        return [str(n) for n in range(int(low), int(high) + 1)]
    return [part]


if __name__ == "__main__":
    main()
