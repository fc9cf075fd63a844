"""A kiosk's verdict latency while another address floods the server with pipelined requests (issue 36, item 8).

``wordjudge serve`` (one process) on a fresh data folder; a kiosk on 127.0.0.2 asks for a verdict every 100 ms;
first alone, then while 127.0.0.3 pipelines GET /api/health on 8 connections as fast as the server takes them
(reconnecting when closed). Run once with the per-address request limit off (``--max-requests-per-client 0``,
the code before it) and once with the default. Prints medians and 90th percentiles. About 40 s.

    .venv/bin/python -m tests.bench.bench_flood
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx2 as httpx

from tests.helpers import device_headers, free_port, wait_for_health, write_event
from tests.test_api import challenge
from tests.test_transport import _start
from wordjudge.words.demo import open_demo
from wordjudge.words.lexicon import LexiconStore

SECONDS = 8.0
PIPELINE = b"GET /api/health HTTP/1.1\r\nHost: hall\r\n\r\n" * 100


def _flood(port: int, stop: threading.Event, counts: list[int]) -> None:
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2, source_address=("127.0.0.3", 0)) as sock:
                sock.setblocking(False)
                while not stop.is_set():
                    with contextlib.suppress(BlockingIOError):
                        sock.send(PIPELINE)
                    try:
                        data = sock.recv(1 << 20)
                        if not data:
                            break
                        counts[0] += data.count(b"HTTP/1.1 200")
                        counts[1] += data.count(b"HTTP/1.1 429")
                    except BlockingIOError:
                        time.sleep(0.001)
        except OSError:
            time.sleep(0.01)


def _kiosk(port: int, kiosk: dict[str, str], seconds: float) -> list[float]:
    latencies = []
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", transport=transport, timeout=10) as http:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.monotonic()
            try:
                response = http.post("/api/challenges", json=challenge("cat"), headers=kiosk)
                assert response.status_code == 201, response.text
            except httpx.TransportError:
                pass  # no answer within the client's 10 s: counted as the time it waited
            latencies.append(time.monotonic() - started)
            time.sleep(0.1)
    return latencies


def _figures(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p90 = ordered[int(len(ordered) * 0.9)]
    return f"median {statistics.median(ordered) * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms ({len(ordered)} verdicts)"


def run(limit: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    try:
        data = work / "data"
        open_demo(LexiconStore(data / "lexicons"))
        write_event(data, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
        kiosk = device_headers(data, "kiosk-1")
        port = free_port()
        server = _start(data, port, "--max-requests-per-client", limit)
        try:
            wait_for_health(f"http://127.0.0.1:{port}", server)
            alone = _kiosk(port, kiosk, SECONDS / 2)
            stop, counts = threading.Event(), [0, 0]
            flooders = [threading.Thread(target=_flood, args=(port, stop, counts)) for _ in range(8)]
            for thread in flooders:
                thread.start()
            time.sleep(1.0)
            flooded = _kiosk(port, kiosk, SECONDS)
            stop.set()
            for thread in flooders:
                thread.join()
        finally:
            server.terminate()
            server.communicate(timeout=30)
        print(f"--max-requests-per-client {limit}: kiosk alone: {_figures(alone)}")
        print(
            f"  while 127.0.0.3 floods: {_figures(flooded)}; the flood got {counts[0]:,} answers 200, "
            f"{counts[1]:,} answers 429 in {SECONDS + 1:.0f} s"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    for limit in ("0", "50"):
        run(limit)
