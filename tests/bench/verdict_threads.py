"""CPU per verdict in each thread of a real ``wordjudge serve`` under wrk (issue 19: where the time goes).

Run from the repository root (needs Debian's ``wrk`` and ``taskset``; not part of the test suite):

    .venv/bin/python -m tests.bench.verdict_threads [--seconds 10] [--connections 16,64] [--server-cores 0,1]
        [--load-cores 0,1] [--repeat 2] [--peers]

The server is prepared as :mod:`tests.bench.bench_verdict` prepares it (durable log, 200 kiosks, the rate
limit counted, 2-word challenges with a new request id each) and pinned to ``--server-cores``. Around each
wrk run, every thread's user and system CPU is read from ``/proc/PID/task/*/stat``; the table gives, per
acknowledged verdict, the microseconds each thread spent (the event loop thread, the audit writer, the
rest) and the server's whole CPU. Unlike requests a second, which swing with whatever else the machine
does, CPU per verdict moves little: it is the figure to compare code with. ``--peers`` adds the naive judges
(``tests/bench/naive_judge.py``, one thread: their whole cost is the event loop's) under the same load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from .bench_verdict import Bench, load_average, serving_naive, serving_wordjudge

_TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[int, float]:
    """Seconds of CPU (user + system) each thread of ``pid`` has used, by thread id (the main thread's is ``pid``)."""
    used: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended between the listing and the read
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        used[int(task.name)] = (int(fields[11]) + int(fields[12])) / _TICK
    return used


def row(bench: Bench, pid: int, base: str, connections: int, server: str = "wordjudge") -> str:
    """One wrk run against the server ``pid`` at ``base``: the table's row of CPU per verdict in each thread."""
    load = load_average()
    before = thread_cpu(pid)
    figures = bench.wrk(
        base + "/api/challenges", connections, bench.work / "challenge.lua", "t", str(bench.work / "tokens.txt")
    )
    time.sleep(0.3)
    after = thread_cpu(pid)
    spent = {tid: after[tid] - before.get(tid, 0.0) for tid in after}
    loop = spent.pop(pid)  # the event loop runs on the main thread
    # Python does not name its threads for the system: the audit writer is the busiest of the rest.
    writer = spent.pop(max(spent, key=spent.__getitem__)) if spent else 0.0
    rest = sum(spent.values())
    per = 1e6 / figures["ok"]
    return (
        f"| {server} | {connections} | {figures['rps']:,.0f} | {loop * per:,.0f} | {writer * per:,.0f} | "
        f"{rest * per:,.0f} | {(loop + writer + rest) * per:,.0f} | {load:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", default="16,64")
    parser.add_argument("--server-cores", default="0,1")
    parser.add_argument("--load-cores", default="0,1")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--peers", action="store_true", help="also the naive judges (tests/bench/naive_judge.py)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="wordjudge-threads-"))
    bench = Bench(args.seconds, args.server_cores, args.load_cores, work)
    print(
        f"server on cores {args.server_cores}, wrk on cores {args.load_cores}, {args.seconds} s a run\n\n"
        "| server | connections | verdicts/s | event loop us/verdict | audit writer (the busiest other thread) | "
        "other threads | whole server us/verdict | load |\n|---|---|---|---|---|---|---|---|"
    )
    try:
        with serving_wordjudge(work, args.server_cores) as (server, base, _):
            bench.wrk_warm(base + "/api/challenges", work / "tokens.txt")
            for connections in [int(c) for c in args.connections.split(",")]:
                for _ in range(args.repeat):
                    print(row(bench, server.pid, base, connections), flush=True)
        for durable in [False, True] if args.peers else []:
            # The naive judges under the same wrk script (they ignore the token): what the same HTTP stack costs
            # with none of wordjudge's work, and with a commit per request.
            with serving_naive(work, args.server_cores, durable) as (peer, base, _):
                bench.wrk_warm(base + "/api/challenges", work / "tokens.txt")
                name = "naive durable" if durable else "naive (no log)"
                for connections in [int(c) for c in args.connections.split(",")]:
                    for _ in range(args.repeat):
                        print(row(bench, peer.pid, base, connections, name), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
