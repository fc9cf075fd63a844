"""CPU per verdict, in-process: wordjudge's ASGI app against the naive judges', without the network or a load tool.

    .venv/bin/python -m tests.bench.verdict_cpu [--verdicts 5000] [--concurrency 64] [--repeat 3]

On a machine shared with other work, requests a second swing with the load; the CPU time a
verdict costs does much less. This calls each app's ASGI entry directly (as uvicorn would, minus the
socket and the HTTP parser), ``--concurrency`` requests at a time on one event loop, pinned to one core,
and reports per verdict: wall time, the event loop thread's CPU (``time.thread_time`` around the run:
everything a request does on the loop) and the whole process's CPU (the loop plus wordjudge's audit
writer thread: SQLite's insert and fsync calls, the record's hashing). wordjudge's app is the real one
(``create_app`` on a fresh data folder: durable log, 200 kiosks, rate limit counted, a bearer token
each request, a new request id each); the naive judges are ``tests.bench.naive_judge``'s. Best of
``--repeat`` runs. The 1-minute load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from wordjudge.service.opening import open_resources
from wordjudge.service.settings import load_settings
from wordjudge.web.app import create_app

from .bench_verdict import prepare_wordjudge
from .naive_judge import build as build_naive

App = Callable[
    [dict[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Awaitable[None]]],
    Awaitable[None],
]


async def call(app: App, state: dict[str, Any], body: bytes, token: str) -> int:
    """One POST /api/challenges through ``app``; returns the status."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/challenges",
        "raw_path": b"/api/challenges",
        "root_path": "",
        "query_string": b"",
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "state": dict(state),
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"authorization", b"Bearer " + token.encode()),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # never: the app has its whole body
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def run(app: App, state: dict[str, Any], tokens: list[str], verdicts: int, concurrency: int) -> dict[str, float]:
    prefix = os.urandom(4).hex()
    statuses: dict[int, int] = {}
    queue = iter(range(verdicts))

    async def worker() -> None:
        for i in queue:
            body = json.dumps(
                {"division": "Open", "table": 7, "round": 1, "words": "cat qi", "request_id": f"cpu-{prefix}-{i:07d}"}
            ).encode()
            status = await call(app, state, body, tokens[i % len(tokens)])
            statuses[status] = statuses.get(status, 0) + 1

    wall, loop_cpu, process_cpu = time.perf_counter(), time.thread_time(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, loop_cpu = time.perf_counter() - wall, time.thread_time() - loop_cpu
    process_cpu = time.process_time() - process_cpu
    if set(statuses) - {200, 201}:
        raise SystemExit(f"unexpected answers: {statuses}")
    return {
        "wall_us": wall / verdicts * 1e6,
        "loop_us": loop_cpu / verdicts * 1e6,
        "process_us": process_cpu / verdicts * 1e6,
    }


async def lifespan_state(app: Any) -> tuple[dict[str, Any], Any]:
    """Start ``app``'s lifespan; return its state and the context to leave it by."""
    context = app.router.lifespan_context(app)
    state = await context.__aenter__() or {}
    return dict(state), context


async def measure(verdicts: int, concurrency: int, repeat: int) -> dict[str, dict[str, float]]:
    work = Path(tempfile.mkdtemp(prefix="wordjudge-cpu-"))
    results: dict[str, dict[str, float]] = {}
    try:
        data_dir, env = prepare_wordjudge(work)
        os.environ.update(env)
        tokens = (work / "tokens.txt").read_text().split()
        settings = load_settings(data_dir=data_dir)
        resources = open_resources(settings)
        apps: list[tuple[str, Any, Any]] = [
            ("wordjudge", create_app(settings, resources), None),
            ("naive", build_naive(), None),
        ]
        durable = work / "durable"
        durable.mkdir()
        apps.append(("durable", build_naive(durable), None))
        for name, app, _ in apps:
            state, context = await lifespan_state(app)
            try:
                await run(app, state, tokens, min(1000, verdicts), concurrency)  # warm up: every kiosk seen once
                runs = [await run(app, state, tokens, verdicts, concurrency) for _ in range(repeat)]
            finally:
                await context.__aexit__(None, None, None)
            results[name] = {key: min(r[key] for r in runs) for key in runs[0]}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verdicts", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--core", type=int, default=0, help="the core to pin this process to")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.core})
    load = os.getloadavg()[0]
    try:
        import uvloop
    except ImportError:
        results = asyncio.run(measure(args.verdicts, args.concurrency, args.repeat))
    else:
        results = uvloop.run(measure(args.verdicts, args.concurrency, args.repeat))
    print(f"{args.verdicts} verdicts x {args.repeat}, concurrency {args.concurrency}, one core, load {load:.2f}")
    print("| app | wall us/verdict | loop CPU us/verdict | process CPU us/verdict |")
    print("|---|---|---|---|")
    for name, figures in results.items():
        print(f"| {name} | {figures['wall_us']:.0f} | {figures['loop_us']:.0f} | {figures['process_us']:.0f} |")


if __name__ == "__main__":
    main()
