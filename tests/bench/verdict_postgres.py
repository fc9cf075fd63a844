"""Durable, authenticated verdicts with wordjudge's state in PostgreSQL (issue 21, target 4), side by side in one run.

Run from the repository root as root or a user who can run Debian's PostgreSQL (needs ``wrk``, ``taskset`` and
the ``postgresql`` package; not part of the test suite):

    .venv/bin/python -m tests.bench.verdict_postgres [--seconds 10] [--cores 0-1] [--markdown FILE]

One after the other, each on a fresh data folder and a fresh throwaway cluster (tests/postgres.py), with the
verdict-path benchmark's load (tests/bench/bench_verdict.py: 200 kiosks, a 2-word challenge a request, each with
a new request id; wrk at concurrency 16 and 64, then an open loop at 500 a second):

- **sqlite**: ``wordjudge serve`` as today, its state in the data folder;
- **postgresql**: ``wordjudge serve --database`` on a local PostgreSQL (``synchronous_commit = on``, fsync on);
- **postgresql + standby**: the same, with a streaming standby on the same machine that every commit waits for
  (``synchronous_standby_names = '*'``): a verdict is answered once two clusters hold it;
- **durable**: the naive durable judge (one SQLite INSERT and commit a request), the verdict path's peer.

wordjudge and the naive judge are pinned to ``--cores``, as are the load generators (the machine has two);
PostgreSQL's own processes are not pinned. After every wordjudge run its log is read back: it must hold a record
for every acknowledged verdict, and its chain must verify. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests import postgres

from . import bench_verdict
from .bench_verdict import Bench, Row, load_average
from .headline import headline_lines, machine


@contextmanager
def cluster(folder: Path, standby: bool) -> Iterator[str]:
    """A throwaway PostgreSQL cluster (with a synchronous standby if asked): the URL of a fresh database."""
    bin_dir = postgres.find_bin_dir()
    if bin_dir is None:
        sys.exit(postgres.MISSING)
    primary = postgres.start_cluster(folder / "primary", bin_dir=bin_dir)
    try:
        url = primary.url(primary.create_database())
        if standby:
            primary.standby(folder / "standby")
            with primary.connect() as admin:
                admin.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
                admin.execute("SELECT pg_reload_conf()")
                deadline = time.monotonic() + 10
                while True:  # the walsender takes the new setting at its next loop
                    state = admin.execute("SELECT sync_state FROM pg_stat_replication").fetchall()
                    if state == [("sync",)] or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
            if state != [("sync",)]:
                sys.exit(f"the standby is not synchronous: {state}")
        yield url
    finally:
        postgres.stop_all(folder, bin_dir)
        postgres.remove_folder(folder)


def run(label: str, seconds: int, cores: str, measure: Callable[[Bench], None]) -> list[Row]:
    work = Path(tempfile.mkdtemp(prefix="wordjudge-pg-bench-"))
    bench = Bench(seconds, cores, cores, work)
    try:
        measure(bench)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for row in bench.rows:
        row.target = label
    return bench.rows


TITLE = "The verdict path with the state in PostgreSQL (issue 21, target 4)"
MEASURES = "the verdict path with the state in PostgreSQL (issue 21)"
STANDBY = "postgresql + sync standby"
DURABLE_TARGET = 1.0  # issue 21, target 4: as fast as the naive durable judge


def headline(rate: float, ratio: float, loads: tuple[float, float]) -> str:
    """The page's headline from its table: the synchronous standby's verdicts a second at concurrency 16, against
    the naive durable judge's and the target, and the load's range over the run."""
    met = "met" if ratio >= DURABLE_TARGET else "not met"
    return (
        f"with a synchronous standby: {rate:,.0f} verdicts/s at concurrency 16, {ratio:.2f}x the naive durable judge"
        f" (target {DURABLE_TARGET:.1f}x: {met}); load {loads[0]:.1f} to {loads[1]:.1f}"
    )


def table(rows: list[Row]) -> str:
    def find(target: str, mode: str, level: int) -> Row | None:
        return next((r for r in rows if (r.target, r.mode, r.level) == (target, mode, level)), None)

    peer = {c: find("durable", "closed", c) for c in bench_verdict.CLOSED}
    lines = [
        "| target | c16 verdicts/s | c16 p99 | c64 verdicts/s | c64 p99 | vs durable (c16 / c64) | open 500/s p99 "
        "| load | log |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for target in dict.fromkeys(r.target for r in rows):
        closed = [find(target, "closed", c) for c in bench_verdict.CLOSED]
        opened = find(target, "open", 500)
        cells = []
        for row in closed:
            cells += [f"{row.figures['rps']:,.0f}", f"{row.figures['p99']:.1f} ms"] if row else ["-", "-"]
        ratios = []
        for connections, row in zip(bench_verdict.CLOSED, closed, strict=True):
            base = peer[connections]
            ratios.append(f"{row.figures['rps'] / base.figures['rps']:.2f}x" if row and base else "-")
        p99 = f"{opened.figures['p99']:.1f} ms" if opened else "-"
        loads = [r.load for r in rows if r.target == target]
        audits = {r.audit.split(":")[0] for r in rows if r.target == target and r.audit}
        lines.append(
            f"| {target} | {' | '.join(cells)} | {' / '.join(ratios)} | {p99} | {min(loads):.1f}-{max(loads):.1f} "
            f"| {', '.join(sorted(audits)) or '-'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10, help="length of each run")
    parser.add_argument("--cores", default="0-1", help="taskset's list for the servers and the load (default: 0-1)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument(
        "--only", choices=("standby",), help="standby: only PostgreSQL with a sync standby and its peer (quicker)"
    )
    args = parser.parse_args()
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    bench_verdict.OPEN = (500,)  # the verdict path's middle rate: its p99
    rows: list[Row] = []
    print(f"load before: {load_average():.2f}", file=sys.stderr)
    states = [("postgresql", False), (STANDBY, True)]
    if args.only is None:
        rows += run("sqlite", args.seconds, args.cores, lambda bench: bench.wordjudge({"wordjudge"}))
    else:
        states = states[1:]
    for label, standby in states:
        with cluster(postgres.cluster_folder(), standby) as url:

            def measure(bench: Bench, url: str = url) -> None:
                bench.database_url = url
                bench.wordjudge({"wordjudge"})

            rows += run(label, args.seconds, args.cores, measure)
    rows += run("durable", args.seconds, args.cores, lambda bench: bench.naive(durable=True))
    text = table(rows)
    print(text)
    if args.markdown:
        found = {(r.target, r.mode, r.level): r.figures["rps"] for r in rows}
        rate = found[(STANDBY, "closed", 16)]
        loads = [r.load for r in rows]
        said = headline(rate, rate / found[("durable", "closed", 16)], (min(loads), max(loads)))
        args.markdown.write_text(f"# {TITLE}\n\n{headline_lines(MEASURES, said, machine(loads))}\n{text}\n", "utf-8")
    failed = [row for row in rows if row.audit.startswith("FAILED")]
    if failed:
        sys.exit(f"{len(failed)} log check(s) failed")


if __name__ == "__main__":
    main()
