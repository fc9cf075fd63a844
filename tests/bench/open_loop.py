"""An open-loop load generator: requests sent at fixed times, whatever the server does, latency from those times.

    python -m tests.bench.open_loop URL RATE SECONDS [--connections 64] [--tokens FILE] [--health]

Request ``i`` is due at ``start + i / RATE``. It goes out on the first free keep-alive HTTP/1.1
connection (of ``--connections``); when none is free it waits, and that wait counts: its latency is
measured from the time it was due, not from when it was sent, so a server that falls behind shows it
in every request that queued behind a slow one (no coordinated omission, unlike a closed loop such as
wrk, whose clients stop asking while they wait). Each POST is a 2-word challenge with a new request
id and, with ``--tokens``, the bearer tokens of that file in turn (one a line); ``--health`` sends
``GET`` to the URL instead.

Prints one JSON object: requests due and answered, the achieved rate, p50/p99/p99.9/max latency in
ms, errors (non-2xx, lost connections, no answer within the time out) and the generator's own CPU
(seconds and share of one core), so that a reader can judge whether the generator kept up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

TIMEOUT = 10.0  # seconds after the last request is due before what is unanswered counts as an error


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(sorted_values: list[float], share: float) -> float:
    """The value under which ``share`` of the values lie (nearest rank), or NaN for none."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), round(share * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


async def run(
    url: str, rate: float, seconds: float, connections: int, tokens: list[str], health: bool
) -> dict[str, Any]:
    parts = urlsplit(url)
    host, port, path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path or "/"
    prefix = f"open-{uuid.uuid4().hex[:8]}"
    total = int(rate * seconds)
    due = asyncio.Queue[tuple[int, float]]()
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    done = asyncio.Event()
    answered = 0

    def request(i: int) -> bytes:
        if health:
            return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        body = (f'{{"division":"Open","table":7,"round":1,"words":"cat qi","request_id":"{prefix}-{i}"}}').encode()
        auth = f"Authorization: Bearer {tokens[i % len(tokens)]}\r\n" if tokens else ""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{auth}"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    async def connection() -> None:
        nonlocal answered
        reader, writer = await asyncio.open_connection(host, port)
        while True:
            i, scheduled = await due.get()
            try:
                writer.write(request(i))
                head = await reader.readuntil(b"\r\n\r\n")
                status = head[9:12].decode()
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - scheduled)
                statuses[status] += 1
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                statuses[type(exc).__name__] += 1
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
            answered += 1
            if answered == total:
                done.set()

    workers = [asyncio.create_task(connection()) for _ in range(connections)]
    await asyncio.sleep(0.2)  # the connections open before the clock starts
    cpu = _cpu()
    start = time.perf_counter()
    for i in range(total):
        scheduled = start + i / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        due.put_nowait((i, scheduled))
    with contextlib.suppress(TimeoutError):  # what is still unanswered counts as errors
        await asyncio.wait_for(done.wait(), TIMEOUT)
    elapsed = time.perf_counter() - start
    cpu = _cpu() - cpu
    for worker in workers:
        worker.cancel()
    ok = sum(count for status, count in statuses.items() if status.startswith("2"))
    latencies.sort()
    return {
        "due": total,
        "answered": answered,
        "ok": ok,
        "errors": total - ok,
        "statuses": dict(statuses),
        "rate": rate,
        "achieved": ok / elapsed,
        "seconds": elapsed,
        "p50": percentile(latencies, 0.50) * 1000,
        "p99": percentile(latencies, 0.99) * 1000,
        "p999": percentile(latencies, 0.999) * 1000,
        "max": (latencies[-1] if latencies else float("nan")) * 1000,
        "cpu_seconds": cpu,
        "cpu_share": cpu / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("rate", type=float)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--tokens", type=Path)
    parser.add_argument("--health", action="store_true")
    args = parser.parse_args()
    tokens = args.tokens.read_text().split() if args.tokens else []
    job = run(args.url, args.rate, args.seconds, args.connections, tokens, args.health)
    try:
        import uvloop
    except ImportError:  # the stdlib loop: slower, its CPU share says so
        result = asyncio.run(job)
    else:
        result = uvloop.run(job)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
