"""Where the time per verdict goes: py-spy samples of ``wordjudge serve`` under wrk, sorted into the layers.

Run from the repository root (needs ``wrk``, ``taskset`` and ``py-spy`` in the venv; not part of the suite):

    .venv/bin/python -m tests.bench.profile_verdict [--seconds 15] [--connections 16] [--server-cores 0]
        [--save FILE.txt] [--gil] [--summary FILE.md]

The server is prepared as ``tests.bench.bench_verdict`` prepares it (durable log, 200 kiosks, the rate
limit counted) and pinned to ``--server-cores``; wrk sends 2-word challenges from the other cores while
``py-spy record --format raw`` samples every thread of the server. Each sample of the event loop's thread
is put in the layer of its innermost frame (from the leaf up) that one of :data:`LAYERS` names; the
writer thread's samples are counted apart (they run beside the loop, on the same core when pinned to one).
Prints a table of the loop's time per layer, and the busiest functions of the loop and of the writer (self
time); ``--summary`` also writes them to a file (``tests.bench.verdict_pairs --profile`` puts it in the bench
page). With ``--gil``, only the thread holding the interpreter's lock is sampled: the samples are then the
interpreter's work, which the loop and the writer take in turn, not a thread's waits (in SQLite, an fsync,
or for the lock itself). Markers name a function and its file, not its folder, so that a module moved
between layers is still found.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from tests import postgres

from .bench_verdict import serving_wordjudge
from .verdict_postgres import cluster

# (layer, markers): a sample belongs to the layer of its innermost frame that holds a marker ("function (file").
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("auth (device token)", ("authenticate (", "/devices.py:")),
    ("rate limit", ("spend_challenge", "refund_challenge")),
    ("lexicon (normalise + lookup)", ("checked_words", "lookup (wordjudge/words/profile.py")),
    ("record building (entry, consequence)", ("/adjudication.py:",)),
    ("hand-off to the writer / wake-up", ("AuditLog.append (", "_resolve_all", "_enqueue")),
    ("answer: record view + JSON", ("appended_response (", "render (", "JSONResponse")),
    ("metrics + adjudication log line", ("ChallengeService._answered (",)),
    (
        "body parsing + validation",
        (
            "request_body_to_args",
            "_get_body",
            "body (starlette",
            "json (starlette",
            "validate_python",
            "_validate_value",
            "_challenge (wordjudge/web/fast_challenge.py",
            "_body (wordjudge/web/fast_challenge.py",
        ),
    ),
    (
        "FastAPI: dependencies + routing",
        (
            "solve_dependencies",
            "matches (starlette",
            "__call__ (starlette/routing",
            "run_endpoint_function",
            "app (starlette",
            "serialize_response",
            "fastapi/routing.py",
            "_exception_handler.py",
        ),
    ),
    ("fast path's own dispatch", ("ChallengeFastPath.__call__",)),
    (
        "middleware (transport checks, headers, error handling)",
        (
            "/transport.py:",
            "SecurityHeaders",
            "starlette/middleware",
            "fastapi/_body_limit",
            "fastapi/telemetry",
            "applications.py",
        ),
    ),
    ("HTTP (uvicorn, httptools)", ("uvicorn/protocols",)),
    ("event loop (uvloop's C code: sockets, callbacks) + other", ("",)),
]
_RATE = 250  # samples a second
WRITER_THREAD = "wordjudge-audit-writer"  # the writer's thread name, first in each of its stacks


def _layer(frames: list[str]) -> str:
    """The layer of the innermost frame (from the leaf up) that names one."""
    for frame in reversed(frames):
        for layer, markers in LAYERS[:-1]:
            if any(marker in frame for marker in markers):
                return layer
    return LAYERS[-1][0]


def parse(
    raw: str,
) -> tuple[collections.Counter[str], int, int, collections.Counter[str], int, collections.Counter[str]]:
    """The loop's samples per layer and in all, the writer's, the loop's self time per function, the idle ones, and
    the writer's self time per function."""
    layers: collections.Counter[str] = collections.Counter()
    functions: collections.Counter[str] = collections.Counter()
    writer_functions: collections.Counter[str] = collections.Counter()
    loop = writer = idle = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = stack.split(";")
        if WRITER_THREAD in frames[0]:
            writer += count
            writer_functions[frames[-1]] += count
            continue
        if not any("uvicorn" in frame or "asyncio" in frame or "uvloop" in frame for frame in frames):
            continue  # another thread (the event-file watcher's worker, py-spy's own view of idle threads)
        loop += count
        if frames[-1].startswith(("select (", "poll (", "run_once", "_run_once")) or "run_forever" in frames[-1]:
            idle += count
        functions[frames[-1]] += count
        layers[_layer(frames)] += count
    return layers, loop, writer, functions, idle, writer_functions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--server-cores", default="0")
    parser.add_argument("--load-cores", default="1")
    parser.add_argument("--save", type=Path, help="keep py-spy's raw samples in this file")
    parser.add_argument("--summary", type=Path, help="also write the tables (Markdown) to this file")
    parser.add_argument(
        "--gil", action="store_true", help="sample only the thread holding the interpreter's lock (its work, not waits)"
    )
    parser.add_argument(
        "--state",
        choices=("sqlite", "postgresql", "standby"),
        default="sqlite",
        help="where the log and access store live: the data folder, a throwaway PostgreSQL cluster, or one with a "
        "synchronous standby (tests/bench/verdict_postgres.py's)",
    )
    args = parser.parse_args()
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        sys.exit(f"py-spy is not installed in {spy.parent}: pip install py-spy")
    work = Path(tempfile.mkdtemp(prefix="wordjudge-profile-"))
    raw_file = args.save or work / "raw.txt"
    try:
        with ExitStack() as stack:
            database = None
            if args.state != "sqlite":
                database = stack.enter_context(cluster(postgres.cluster_folder(), standby=args.state == "standby"))
            server, base, _ = stack.enter_context(serving_wordjudge(work, args.server_cores, database))
            wrk = [
                "taskset",
                "-c",
                args.load_cores,
                "wrk",
                "-t1",
                f"-c{args.connections}",
                "--latency",
                "-s",
                str(work / "challenge.lua"),
                f"{base}/api/challenges",
            ]
            subprocess.run(
                [*wrk[:5], "-d3s", *wrk[5:], "--", "warm", str(work / "tokens.txt")], check=True, capture_output=True
            )
            load = __import__("os").getloadavg()[0]
            sampler = subprocess.Popen(
                [
                    str(spy),
                    "record",
                    "--pid",
                    str(server.pid),
                    "--format",
                    "raw",
                    "--rate",
                    str(_RATE),
                    *(["--gil"] if args.gil else []),
                    "--threads",
                    "--duration",
                    str(args.seconds),
                    "--output",
                    str(raw_file),
                    "--nonblocking",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(0.5)
            done = subprocess.run(
                [*wrk[:5], f"-d{args.seconds - 1}s", *wrk[5:], "--", uuid.uuid4().hex[:8], str(work / "tokens.txt")],
                check=True,
                capture_output=True,
                text=True,
            )
            sampler.wait(timeout=args.seconds + 30)
        rate = next(line for line in done.stdout.splitlines() if "Requests/sec" in line).split()[-1]
        layers, loop, writer, functions, idle, writer_functions = parse(raw_file.read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    busy = loop - idle
    possible = args.seconds * _RATE
    mode = "samples holding the interpreter's lock (py-spy --gil)" if args.gil else "samples of running threads"
    lines = [
        f"wrk -c{args.connections}: {rate} verdicts/s; server on core(s) {args.server_cores}, wrk on core(s) "
        f"{args.load_cores}; load {load:.2f}; {args.seconds} s at {_RATE} samples a second, {mode}",
        "",
        f"Event loop thread: {loop} samples ({loop / possible:.0%} of the run; {idle} idle); audit writer thread: "
        f"{writer} samples ({writer / possible:.0%} of the run).",
        "",
        "| layer (event loop thread) | share of the loop's busy samples |",
        "|---|---|",
    ]
    for layer, _ in LAYERS:
        count = layers[layer] - (idle if layer.startswith("event loop") else 0)
        lines.append(f"| {layer} | {count / max(busy, 1):.1%} |")
    lines += ["", "Busiest functions (self samples, event loop thread):", "", "```"]
    lines += [f"{count / max(busy, 1):6.1%}  {function}" for function, count in functions.most_common(15)]
    lines += ["```", "", "Busiest functions (self samples, audit writer thread):", "", "```"]
    lines += [f"{count / max(writer, 1):6.1%}  {function}" for function, count in writer_functions.most_common(10)]
    lines.append("```")
    print("\n".join(lines))
    if args.summary:
        args.summary.write_text("\n".join(lines) + "\n", "utf-8")


if __name__ == "__main__":
    main()
