"""The floor under the challenge benchmark: what each layer of a challenge costs, next to a bare route.

Run from the repository root (needs Debian's ``wrk``; not part of the test suite):

    .venv/bin/python -m tests.bench.bench_floor [--seconds 10] [--connections 64]

The challenge target (issue 3: at concurrency 64, challenges at >= 0.7x the health check's
throughput with p99 <= 25 ms, on 2 cores) can only be met if the layers a challenge cannot
skip fit in that budget. This benchmark serves a stripped app (``tests.bench.floor_app``,
one uvicorn process, the same stack as ``wordjudge serve``) with three routes and drives each
with wrk at the same concurrency, in the same run:

- ``GET /bare``: a constant JSON body, the cheapest route FastAPI can serve (cheaper than
  wordjudge's health check, which stands in the real benchmark's ratios, so the ratios
  here are upper bounds of what a challenge could reach);
- ``POST /parse``: reads and validates the challenge body with wordjudge's own ``ChallengeIn``
  model and answers a constant: FastAPI's body handling, no adjudication, no log;
- ``POST /log``: ``/parse`` plus a durable append of a fixed record to wordjudge's real
  ``AuditLog`` (WAL, synchronous=FULL, group commit, hash chain), answered after its commit.

A real challenge also checks the device token, the rate limit and the words, so it costs more
than ``/log``. If ``/log`` is already under 0.7x ``/bare``, the target is out of reach for this
stack on this machine whatever the rest of the code does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from .bench_challenges import free_port, wait_until_up, wrk

_POST_LUA = """
local counter = 0
local prefix = "floor"
local path = "/parse"
function init(args)
  path = args[1]
  prefix = args[2] .. "-" .. tostring(math.random(1, 1000000000))
end
function request()
  counter = counter + 1
  local body = '{"division":"Open","table":7,"round":1,"words":"cat qi","request_id":"' .. prefix .. "-" .. counter .. '"}'
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=64, help="wrk's concurrency")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    data_dir = Path(tempfile.mkdtemp(prefix="wordjudge-floor-"))
    script = data_dir / "post.lua"
    script.write_text(_POST_LUA)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.floor_app", str(data_dir), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
    )
    results = {}
    try:
        wait_until_up(f"{base}/bare", server)
        wrk(f"{base}/bare", 16, 2)  # warm up
        results["bare"] = wrk(f"{base}/bare", args.connections, args.seconds)
        for path in ("/parse", "/log"):
            results[path.strip("/")] = wrk(base, args.connections, args.seconds, script, path, uuid.uuid4().hex[:8])
    finally:
        server.terminate()
        server.communicate(timeout=30)
        shutil.rmtree(data_dir, ignore_errors=True)
    bare = results["bare"]["rps"]
    print(f"concurrency {args.connections}, {args.seconds} s per route, one uvicorn process, wrk -t1")
    print("| route | req/s | p50 / p99 | ratio to /bare | errors |")
    print("|---|---|---|---|---|")
    for name, row in results.items():
        print(
            f"| {name} | {row['rps']:,.0f} | {row['p50']:.2f} / {row['p99']:.2f} ms | {row['rps'] / bare:.2f} "
            f"| {int(row['errors'])} |"
        )


if __name__ == "__main__":
    main()
