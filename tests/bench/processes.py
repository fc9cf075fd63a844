"""One event in several processes (``wordjudge serve --processes N``) behind the HAProxy front, side by side.

Run from the repository root as root or a user who can run Debian's PostgreSQL (needs ``wrk``, ``taskset``,
``haproxy`` and the ``postgresql`` package; not part of the test suite):

    .venv/bin/python -m tests.bench.processes [--seconds 8] [--cores 0-1] [--markdown FILE]
        [--only sqlite,postgresql,standby] [--processes 1,2,4] [--kiosks 200]

For each target, ``wordjudge serve --processes N`` for N = 1, 2 and 4, each on a fresh data folder (and a fresh
throwaway cluster, tests/postgres.py), with the processes on 127.0.0.1 from a free port up and HAProxy in front
of them (tests/front.py: deploy/haproxy/wordjudge.cfg as deployed, the processes told of it with
``--trusted-proxies 127.0.0.1`` and ``--public-url`` its address):

- **sqlite**: the state in the data folder;
- **postgresql**: ``--database`` on a local PostgreSQL (``synchronous_commit = on``, fsync on);
- **standby**: the same, with a streaming standby on this machine that every commit waits for;
- **durable**: the naive durable judge (one SQLite INSERT and commit a request, no front), the baseline row.

The load is tests/bench/bench_verdict.py's: 200 kiosks bound to 127.0.0.1 at the event's highest rate limit (600
a minute in bursts of 600, per kiosk: counted, never refused below about 8,000 verdicts a second over a default
run; ``--kiosks`` raises it), a 2-word challenge a request, each with a new request id and the next kiosk's
token; wrk closed loop at concurrency 16 and 64, through the front. The front hashes each token to one process,
so each kiosk's limit is counted by one process. wordjudge, HAProxy and the load generators are pinned to
``--cores`` (the machine has two); PostgreSQL is not. After every wordjudge run its log is read back: a record
for every acknowledged verdict, and a chain that verifies. Prints a Markdown table: verdicts a second and p99 at
each concurrency, against one process of the same target and against the durable judge.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import front, postgres
from tests.helpers import free_ports

from . import bench_verdict
from .bench_challenges import free_port, wait_until_up
from .bench_verdict import Bench, Row, load_average
from .headline import headline_lines, machine
from .verdict_postgres import cluster

TARGETS = {"sqlite": "sqlite", "postgresql": "postgresql", "standby": "postgresql + sync standby"}


def cpu_times() -> tuple[int, int]:
    """The whole machine's (busy, total) CPU time so far, in jiffies (/proc/stat's first line; iowait counts idle)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


class CpuBench(Bench):
    """:class:`Bench` noting how busy the machine's CPUs were during each wrk run (``figures["cpu"]``, 0 to 1):
    whether another process could have had a core to itself."""

    def wrk(self, url: str, connections: int, script: Path | None, *script_args: str) -> dict[str, Any]:
        before = cpu_times()
        figures = super().wrk(url, connections, script, *script_args)
        after = cpu_times()
        figures["cpu"] = (after[0] - before[0]) / max(1, after[1] - before[1])
        return figures


@dataclass
class Result:
    target: str
    processes: int  # 0 for the durable judge
    rows: list[Row]

    def closed(self, connections: int) -> Row | None:
        return next((r for r in self.rows if (r.mode, r.level) == ("closed", connections)), None)


@contextmanager
def serving(work: Path, cores: str, processes: int, database: str | None) -> Iterator[tuple[str, Path]]:
    """``wordjudge serve --processes`` on a fresh data folder in ``work``, and the front before it, both pinned
    to ``cores``, once every process answers its health: the front's base URL and the data folder."""
    data_dir, env = bench_verdict.prepare_wordjudge(work, database)
    port = free_ports(processes)
    front_port = free_port()
    while port <= front_port < port + processes:
        front_port = free_port()
    # Devices reach the event through its front: its address is the server's public URL.
    command = [
        str(Path(sys.executable).with_name("wordjudge")),
        "serve",
        "--max-requests-per-client",
        "0",
        "--processes",
        str(processes),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--trusted-proxies",
        "127.0.0.1",
        "--public-url",
        f"http://127.0.0.1:{front_port}",
    ]
    if database is not None:
        command += ["--database", database]
    errors = work / "wordjudge.log"
    with errors.open("w") as stderr:
        server = subprocess.Popen(["taskset", "-c", cores, *command], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        for k in range(processes):
            wait_until_up(f"http://127.0.0.1:{port + k}/api/health", server, errors=errors)
        with front.front(port, processes, front_port, work / "front", prefix=["taskset", "-c", cores]) as base:
            yield base, data_dir
    finally:
        server.terminate()
        server.wait(timeout=60)


def measure(label: str, processes: int, seconds: int, cores: str, database: str | None) -> Result:
    work = Path(tempfile.mkdtemp(prefix="wordjudge-processes-bench-"))
    bench = CpuBench(seconds, cores, cores, work, database_url=database)
    try:
        with serving(work, cores, processes, database) as (base, data_dir):
            bench._measure_wordjudge({"wordjudge"}, base, data_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Result(label, processes, bench.rows)


TITLE = "One event in several processes: throughput at 1, 2 and 4 processes (issue 21, target 3b)"
MEASURES = "one event in 1, 2 and 4 processes behind HAProxy"
NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "postgresql + sync standby": "PostgreSQL with a sync standby"}


def headline(target: str, rates: dict[int, float], loads: tuple[float, float]) -> str:
    """The page's headline from its table: one target's verdicts a second at concurrency 16 for each number of
    processes (the fewest first), whether the most processes gave more than the fewest, and the load's range."""
    counts = sorted(rates)
    said = [f"{rates[counts[0]]:,.0f}/s with {counts[0]} process{'es' if counts[0] > 1 else ''}"]
    said += [f"{rates[n]:,.0f}/s with {n}" for n in counts[1:]]
    more = rates[counts[-1]] > rates[counts[0]]
    return (
        f"{NAMES.get(target, target)} at concurrency 16: {', '.join(said)}: more processes"
        f" {'give' if more else 'do not give'} more verdicts on this machine (load {loads[0]:.1f} to {loads[1]:.1f})"
    )


def table(results: list[Result]) -> str:
    durable = next((r for r in results if r.processes == 0), None)
    lines = [
        "| target | processes | c16 verdicts/s | c16 p99 | c64 verdicts/s | c64 p99 | vs 1 process (c16 / c64) "
        "| vs durable (c16 / c64) | CPUs busy (c16 / c64) | load | log |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def ratios(result: Result, base: Result | None) -> str:
        cells = []
        for connections in bench_verdict.CLOSED:
            row, peer = result.closed(connections), base.closed(connections) if base else None
            cells.append(f"{row.figures['rps'] / peer.figures['rps']:.2f}x" if row and peer else "-")
        return " / ".join(cells)

    def busy(result: Result) -> str:
        cells = []
        for connections in bench_verdict.CLOSED:
            row = result.closed(connections)
            cells.append(f"{row.figures['cpu']:.0%}" if row and "cpu" in row.figures else "-")
        return " / ".join(cells)

    for result in results:
        one = next((r for r in results if (r.target, r.processes) == (result.target, 1)), None)
        cells = []
        for connections in bench_verdict.CLOSED:
            row = result.closed(connections)
            cells += [f"{row.figures['rps']:,.0f}", f"{row.figures['p99']:.1f} ms"] if row else ["-", "-"]
        loads = [r.load for r in result.rows]
        audits = {r.audit.split(":")[0] for r in result.rows if r.audit}
        errors = sum(int(r.figures["errors"]) for r in result.rows)
        log = ", ".join(sorted(audits)) or "-"
        if errors:
            log += f"; {errors:,} errors (not 2xx or socket)"
        lines.append(
            f"| {result.target} | {result.processes or '-'} | {' | '.join(cells)} "
            f"| {ratios(result, one) if result.processes else '-'} | {ratios(result, durable)} "
            f"| {busy(result)} | {min(loads):.1f}-{max(loads):.1f} | {log} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=8, help="length of each wrk run")
    parser.add_argument("--cores", default="0-1", help="taskset's list for the servers, the front and the load")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--only", default=",".join(TARGETS), help="targets, comma-separated: sqlite,postgresql,standby")
    parser.add_argument("--processes", default="1,2,4", help="process counts, comma-separated (default: 1,2,4)")
    parser.add_argument("--kiosks", type=int, default=bench_verdict.KIOSKS, help="kiosks enrolled (default: 200)")
    args = parser.parse_args()
    targets = args.only.split(",")
    if unknown := set(targets) - set(TARGETS):
        parser.error(f"unknown target(s) {', '.join(sorted(unknown))}: choose from {', '.join(TARGETS)}")
    counts = [int(n) for n in args.processes.split(",")]
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    if not front.installed():
        sys.exit(front.MISSING)
    bench_verdict.OPEN = ()  # closed loop only
    bench_verdict.KIOSKS = args.kiosks
    results: list[Result] = []
    print(f"load before: {load_average():.2f}", file=sys.stderr)
    for target in targets:
        for processes in counts:
            if target == "sqlite":
                results.append(measure(TARGETS[target], processes, args.seconds, args.cores, None))
                continue
            with cluster(postgres.cluster_folder(), standby=target == "standby") as url:
                results.append(measure(TARGETS[target], processes, args.seconds, args.cores, url))
    work = Path(tempfile.mkdtemp(prefix="wordjudge-processes-bench-"))
    baseline = CpuBench(args.seconds, args.cores, args.cores, work)
    try:
        baseline.naive(durable=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results.append(Result("durable", 0, baseline.rows))
    text = table(results)
    print(text)
    if args.markdown:
        first = next(result.target for result in results if result.processes)
        rates = {
            result.processes: row.figures["rps"]
            for result in results
            if result.target == first and (row := result.closed(16))
        }
        loads = [row.load for result in results for row in result.rows]
        said = headline(first, rates, (min(loads), max(loads)))
        args.markdown.write_text(f"# {TITLE}\n\n{headline_lines(MEASURES, said, machine(loads))}\n{text}\n", "utf-8")
    failed = [row for result in results for row in result.rows if row.audit.startswith("FAILED")]
    if failed:
        sys.exit(f"{len(failed)} log check(s) failed")


if __name__ == "__main__":
    main()
