"""A kiosk's verdict latency while another address floods the server with pipelined requests (issue 36, item 8).

``wordjudge serve`` (one process) on a fresh data folder; a kiosk on 127.0.0.2 asks for a verdict every 100 ms;
first alone, then while 127.0.0.3 pipelines GET /api/health on 8 connections as fast as the server takes them
(reconnecting when closed). Run once with the per-address request limit off (``--max-requests-per-client 0``,
the code before it) and once with the default. Prints medians and 90th percentiles. About 40 s.

    .venv/bin/python -m tests.bench.bench_flood [--markdown docs/bench-flood.md]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import socket
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx2 as httpx

from tests.helpers import device_headers, free_port, wait_for_health, write_event
from tests.test_api import challenge
from tests.test_transport import _start
from wordjudge.words.demo import open_demo
from wordjudge.words.lexicon import LexiconStore

from .headline import headline_lines, machine

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


def _cell(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p90 = ordered[int(len(ordered) * 0.9)]
    return f"{statistics.median(ordered) * 1000:,.1f} ms ({p90 * 1000:,.1f} ms)"


@dataclass(frozen=True)
class Result:
    """One run: the request rate per address (``--max-requests-per-client``), the kiosk's latencies (s) alone and
    in the flood, and the flood's answers 200 and 429."""

    limit: str
    alone: list[float]
    flooded: list[float]
    counts: list[int]


TITLE = "One address floods, a kiosk on another keeps its verdicts (issue 36, item 8)"
MEASURES = "a kiosk's verdicts while another address floods the server"
LIMITS = {"0": "off (`0`, the baseline)", "50": "50 a second, bursts of 500 (the default)"}


def headline(default_ms: float, off_ms: float) -> str:
    """The page's headline: the kiosk's median verdict (ms) during the flood with the default rate and with none."""
    return (
        f"with the default request rate the kiosk's median stays at {default_ms:,.1f} ms during the flood;"
        f" with the rate off, {off_ms:,.1f} ms"
    )


def page(results: list[Result], loads: list[float]) -> str:
    """The page: its title, headline lines, the machine and its load, and the table of the runs."""
    rows = [
        "| request rate per address | kiosk alone: median (p90) | kiosk while another address floods: median (p90) "
        "| kiosk's verdicts in the flood | the flood's answers |",
        "|---|---|---|---|---|",
    ]
    for result in results:
        answers = f"{result.counts[0]:,} x 200" + (f", {result.counts[1]:,} x 429" if result.counts[1] else "")
        rows.append(
            f"| {LIMITS.get(result.limit, result.limit)} | {_cell(result.alone)} | {_cell(result.flooded)} "
            f"| {len(result.flooded)} in {SECONDS + 1:.0f} s | {answers} |"
        )
    median = {result.limit: statistics.median(result.flooded) * 1000 for result in results}
    return (
        f"# {TITLE}\n\n{headline_lines(MEASURES, headline(median['50'], median['0']), machine(loads))}\n"
        "Written by `python -m tests.bench.bench_flood --markdown docs/bench-flood.md` (its docstring says how it"
        f" runs). Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.processor() or platform.machine()},"
        f" {os.cpu_count()} cores, load average (1 min) {os.getloadavg()[0]:.2f} at the end.\n\n"
        + "\n".join(rows)
        + "\n"
    )


def run(limit: str) -> Result:
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
        return Result(limit, alone, flooded, counts)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", type=Path, help="also write the page (docs/bench-flood.md) to this file")
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    results = [run(limit) for limit in LIMITS]
    loads.append(os.getloadavg()[0])
    if args.markdown:
        args.markdown.write_text(page(results, loads), "utf-8")


if __name__ == "__main__":
    main()
