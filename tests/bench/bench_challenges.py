"""Challenge throughput and latency against a live server, next to its health endpoint, in the same run.

Run from the repository root (needs Debian's ``wrk``: ``apt-get install wrk``; not part of the test suite):

    .venv/bin/python -m tests.bench.bench_challenges [--seconds 10] [--markdown docs/bench-challenges.md]

It starts ``wordjudge serve`` (one process, durable logging on: WAL, synchronous=FULL,
every verdict committed before it is sent) on a fresh data dir with a demo-lexicon event
whose per-device rate limit is off, enrols a kiosk with ``wordjudge device add`` (so every
challenge is authenticated by its bearer token, as in a hall), then drives it with wrk, a separate process, at concurrency 1, 16 and 64: first
``GET /api/health``, then ``POST /api/challenges`` with a 2-word challenge and a new
request id each time. Afterwards it checks that the audit log holds exactly the
challenges wrk completed and that its chain verifies.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx

from wordjudge import __version__
from wordjudge.log.audit import AuditLog
from wordjudge.storage.dialect import StateLocation

from .headline import cpu_model, headline_lines, machine

CONCURRENCY = (1, 16, 64)
RATIO_TARGET, P99_TARGET_MS = 0.7, 25
TARGET = f"at concurrency 64: challenge throughput >= {RATIO_TARGET} x health throughput, p99 <= {P99_TARGET_MS} ms"
TITLE = "Challenge service benchmark"
MEASURES = "the challenge service beside its own health check, closed loop (wrk)"


def headline(rows: list[tuple[int, float, float, float]]) -> str:
    """The page's headline from its table's rows, each (concurrency, challenges a second, challenge p99 in ms,
    challenges against health checks a second): the highest concurrency's, against the targets."""
    connections, rps, p99, ratio = max(rows)
    met = ratio >= RATIO_TARGET and p99 <= P99_TARGET_MS
    return (
        f"concurrency {connections}: {rps:,.0f} challenges/s, {ratio:.2f}x the health check (target {RATIO_TARGET}x),"
        f" p99 {p99:.0f} ms (target {P99_TARGET_MS} ms): {'met' if met else 'not met'}"
    )


_LUA = """
local counter = 0
local prefix = "bench"
local token = ""
function init(args)
  prefix = args[1] .. "-" .. tostring(math.random(1, 1000000000))
  token = args[2]
end
function request()
  counter = counter + 1
  local body = '{"division":"Open","table":7,"round":1,"words":"cat qi","request_id":"' .. prefix .. "-" .. counter .. '"}'
  return wrk.format("POST", "/api/challenges",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def parse_wrk(output: str) -> dict[str, float]:
    """Requests/s, p50 and p99 (ms), requests completed and errors, from ``wrk --latency`` output."""

    def millis(label: str) -> float:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
        if not match:
            raise ValueError(f"no {label}% latency in wrk output:\n{output}")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    done = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    errors = int(non_2xx.group(1)) if non_2xx else 0
    if socket_errors:
        errors += sum(int(socket_errors.group(i)) for i in range(1, 5))
    return {"rps": rps, "p50": millis("50"), "p99": millis("99"), "done": done, "errors": errors}


def wait_until_up(url: str, server: subprocess.Popen[Any], seconds: float = 60, *, errors: Path | None = None) -> None:
    """Poll ``url`` until the server answers it; exit naming what the server said (its piped stderr, or the file
    ``errors``) if it stops or takes too long."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.get(url, timeout=2).raise_for_status()
            return
        except httpx.TransportError:
            if server.poll() is not None or time.monotonic() > deadline:
                said = errors.read_text() if errors is not None else server.communicate()[1]
                sys.exit(f"server did not start ({url}): {said}")
            time.sleep(0.2)


def wrk(url: str, connections: int, seconds: int, script: Path | None = None, *script_args: str) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    if script is not None:
        command += ["-s", str(script)]
    command.append(url)
    if script is not None:
        command += ["--", *script_args]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return parse_wrk(done.stdout)


def benchmark_event(
    data_dir: Path, kiosk: str, *, challenges_per_minute: int, database_url: str | None = None
) -> tuple[dict[str, str], str, str]:
    """Make ``data_dir`` the benchmark's event (one division, Open, on the demo lexicon) with one kiosk enrolled
    by the CLI (which also makes the folder what a server expects), its state in ``database_url`` if given
    (a PostgreSQL URL, as ``--database`` takes it). Returns the environment to run wordjudge in, its command, and the kiosk's token."""
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir), "WORDJUDGE_LOG_LEVEL": "warning"}
    if database_url is not None:
        env["WORDJUDGE_DATABASE"] = database_url
    command = str(Path(sys.executable).with_name("wordjudge"))
    (data_dir / "event.toml").write_text(
        f'name = "Benchmark"\nchallenges_per_minute = {challenges_per_minute}\n[[division]]\nname = "Open"\n'
        'lexicon = "demo"\nrule = "five-per-word"\n'
    )
    token = subprocess.run(
        [command, "device", "add", kiosk, "--role", "kiosk"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    return env, command, token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--markdown", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")

    start_load = os.getloadavg()[0]
    data_dir = Path(tempfile.mkdtemp(prefix="wordjudge-bench-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    script = data_dir / "challenge.lua"
    script.write_text(_LUA)
    env, command, token = benchmark_event(data_dir, "bench-kiosk", challenges_per_minute=0)
    server = subprocess.Popen(
        [command, "serve", "--max-requests-per-client", "0", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    rows = []
    challenges_done = 0
    try:
        wait_until_up(f"{base}/api/health", server)
        wrk(f"{base}/api/health", 16, 2)  # warm up
        for connections in CONCURRENCY:
            health = wrk(f"{base}/api/health", connections, args.seconds)
            challenge = wrk(base, connections, args.seconds, script, uuid.uuid4().hex[:8], token)
            challenges_done += int(challenge["done"])
            rows.append((connections, health, challenge))
            print(f"measured concurrency {connections}", file=sys.stderr)
        stats = httpx.get(f"{base}/api/health", timeout=5).json()["audit"]
    finally:
        server.terminate()
        server.communicate(timeout=60)

    log = AuditLog(StateLocation(data_dir))
    verification = log.verify()
    log.close()
    cpu = cpu_model()
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {cpu}, {os.cpu_count()} cores (server and wrk share them), "
        f"Python {platform.python_version()}, wordjudge {__version__}, one server process, durable logging "
        f"(WAL, synchronous=FULL, verdict sent after commit), {args.seconds} s per run, wrk -t1. "
        f"Challenge: 2 words, a new request id each. Target: {TARGET}.",
        "",
        "| concurrency | health req/s | health p50 / p99 | challenge req/s | challenge p50 / p99 | challenge / health | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    said = headline(
        [(c, challenge["rps"], challenge["p99"], challenge["rps"] / health["rps"]) for c, health, challenge in rows]
    )
    for connections, health, challenge in rows:
        lines.append(
            f"| {connections} | {health['rps']:,.0f} | {health['p50']:.2f} / {health['p99']:.2f} ms "
            f"| {challenge['rps']:,.0f} | {challenge['p50']:.2f} / {challenge['p99']:.2f} ms "
            f"| {challenge['rps'] / health['rps']:.2f} | {int(health['errors'] + challenge['errors'])} |"
        )
    lines += [
        "",
        f"Audit log afterwards: {verification.records:,} records for {challenges_done:,} challenges completed by wrk "
        f"(wrk stops at its deadline with some requests in flight, which the server still records); "
        f"{'chain verified' if verification.ok else 'CHAIN BROKEN: ' + verification.describe()}; "
        f"{stats['commits']:,} commits (fsyncs), largest batch {stats['largest_batch']}.",
    ]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(
            f"# {TITLE}\n\n{headline_lines(MEASURES, said, machine([start_load, os.getloadavg()[0]]))}\n`python -m tests.bench.bench_challenges`\n\n{table}\n"
        )
    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
