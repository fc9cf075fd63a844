"""Soak test: a live server under a steady, mixed, hall-like load for minutes, watched for drift.

Run from the repository root (not part of the test suite, not run in CI):

    .venv/bin/python -m tests.bench.soak [--minutes 10] [--kiosks 8] [--rate 12] [--markdown docs/bench-soak.md]

It starts ``wordjudge serve`` (one process, durable logging) on a fresh data dir with a
demo-lexicon event whose per-device rate limit is off, enrols ``--kiosks`` kiosks with
``wordjudge device add`` and a TD with ``wordjudge td add``, then for ``--minutes``:

- each kiosk sends ``--rate`` challenges a minute at a steady pace (1 to 4 words, a new request
  id each; one in 20 is then resent with the same id, as after a lost response: a replay), and
  reads its own recent verdicts once a minute;
- a monitor polls ``GET /api/health`` every second;
- the TD's console lists the newest 100 records every 5 s and the summary every 15 s, and keeps
  the live feed (server-sent events) open the whole time: the feed's delay is the time from a
  challenge's answer to its record arriving on the feed.

It prints, for the first and the last minute, the count, p50 and p99 latency and errors of each
kind of request, the server's resident memory (RSS) over the run, and at the end the number of
records (which must equal the challenges answered 201), the records the feed delivered, and the
verification of the hash chain. Latency is measured from sending each request to its answer; a
request that falls behind its schedule is sent at once, and counted as late.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx2 as httpx

from wordjudge import __version__
from wordjudge.log.audit import AuditLog
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.deps import SESSION_COOKIE

from .bench_challenges import free_port
from .headline import cpu_model, headline_lines, machine

WORDS = ["cat", "dog", "qi", "zax", "jo", "xu", "aa", "qat", "cwm", "zzz", "quixotic", "oxyphenbutazone", "fjord"]
KINDS = ["challenge", "replay", "mine", "health", "td list", "td summary", "feed delay"]
PASSWORD = "soak test password"


@dataclass
class Sample:
    at: float  # seconds since the load started
    kind: str
    ms: float
    ok: bool


@dataclass
class Run:
    started: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    answered: dict[int, float] = field(default_factory=dict)  # record id -> when its 201 arrived
    created: int = 0  # challenges answered 201
    late: int = 0  # requests sent after their scheduled time had passed
    feed_records: int = 0
    rss: list[tuple[float, int]] = field(default_factory=list)  # (seconds, KiB)
    cpu_start: float = 0.0  # the server's CPU seconds (user + system)
    cpu_end: float = 0.0
    errors: list[str] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.started

    def note(self, kind: str, began: float, ok: bool, detail: str = "") -> None:
        self.samples.append(Sample(began - self.started, kind, (time.monotonic() - began) * 1000, ok))
        if not ok and len(self.errors) < 20:
            self.errors.append(f"{kind}: {detail}")


def rss_kib(pid: int) -> int:
    """The process's resident set size in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system, in seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def paced(run: Run, deadline: float, interval: float, offset: float, step: object) -> None:
    """Call ``step()`` every ``interval`` seconds from ``offset`` until ``deadline`` (steady, never flat out)."""
    due = time.monotonic() + offset
    while due < deadline:
        wait = due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        else:
            run.late += 1
        await step()  # type: ignore[operator]
        due += interval


async def kiosk(run: Run, http: httpx.AsyncClient, token: str, name: str, rate: float, deadline: float) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(name)
    counter = 0
    last_mine = time.monotonic() - rng.uniform(0, 30)

    async def challenge() -> None:
        nonlocal counter, last_mine
        counter += 1
        body = {
            "division": "Open",
            "table": rng.randint(1, 60),
            "round": 1 + int(run.now() // 600),
            "words": " ".join(rng.sample(WORDS, rng.randint(1, 4))),
            "request_id": f"{name}-{counter:06d}-soak",
        }
        began = time.monotonic()
        try:
            response = await http.post("/api/challenges", json=body, headers=headers)
            ok = response.status_code == 201
            run.note("challenge", began, ok, f"{response.status_code} {response.text[:120]}")
            if ok:
                run.created += 1
                run.answered[response.json()["id"]] = time.monotonic()
        except httpx.HTTPError as exc:
            run.note("challenge", began, False, repr(exc))
            return
        if rng.random() < 0.05:  # a lost response: the kiosk resends the same request id
            began = time.monotonic()
            try:
                again = await http.post("/api/challenges", json=body, headers=headers)
                run.note("replay", began, again.status_code == 200 and again.json()["replayed"], again.text[:120])
            except httpx.HTTPError as exc:
                run.note("replay", began, False, repr(exc))
        if time.monotonic() - last_mine >= 30:
            last_mine = time.monotonic()
            began = time.monotonic()
            try:
                mine = await http.get("/api/challenges/mine", headers=headers)
                run.note("mine", began, mine.status_code == 200, mine.text[:120])
            except httpx.HTTPError as exc:
                run.note("mine", began, False, repr(exc))

    await paced(run, deadline, 60 / rate, rng.uniform(0, 60 / rate), challenge)


async def get(run: Run, http: httpx.AsyncClient, kind: str, path: str, **options: object) -> None:
    began = time.monotonic()
    try:
        response = await http.get(path, **options)  # type: ignore[arg-type]
        run.note(kind, began, response.status_code == 200, f"{response.status_code} {response.text[:120]}")
    except httpx.HTTPError as exc:
        run.note(kind, began, False, repr(exc))


async def feed(run: Run, http: httpx.AsyncClient, td: dict[str, str], seconds: float, opened: asyncio.Event) -> None:
    """The console's live feed, open for the whole run: counts records and their delay."""
    async with http.stream("GET", "/api/feed", params={"seconds": seconds}, headers=td, timeout=None) as events:
        async for line in events.aiter_lines():
            opened.set()  # the feed's first line ("retry: ...") comes once it follows the log
            if line.startswith("data: "):
                arrived = time.monotonic()
                record = json.loads(line[6:])
                run.feed_records += 1
                answered = run.answered.get(record["id"])
                if answered is not None:
                    run.samples.append(Sample(arrived - run.started, "feed delay", (arrived - answered) * 1000, True))


async def memory(run: Run, pid: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        run.rss.append((run.now(), rss_kib(pid)))
        await asyncio.sleep(5)
    run.rss.append((run.now(), rss_kib(pid)))


async def load(base: str, tokens: list[str], td: dict[str, str], pid: int, args: argparse.Namespace) -> Run:
    run = Run()
    seconds = args.minutes * 60
    limits = httpx.Limits(max_connections=len(tokens) + 8)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits, trust_env=False) as http:
        opened = asyncio.Event()
        tasks = [asyncio.create_task(feed(run, http, td, seconds + 5, opened))]
        await asyncio.wait_for(opened.wait(), 10)  # the feed starts after the newest record: open it first
        run.started = time.monotonic()
        run.cpu_start = cpu_seconds(pid)
        deadline = run.started + seconds
        tasks += [
            asyncio.create_task(memory(run, pid, deadline)),
            asyncio.create_task(paced(run, deadline, 1, 0, lambda: get(run, http, "health", "/api/health"))),
            asyncio.create_task(
                paced(run, deadline, 5, 2, lambda: get(run, http, "td list", "/api/challenges?limit=100", headers=td))
            ),
            asyncio.create_task(
                paced(run, deadline, 15, 7, lambda: get(run, http, "td summary", "/api/summary", headers=td))
            ),
        ]
        tasks += [
            asyncio.create_task(kiosk(run, http, token, f"kiosk-{n + 1}", args.rate, deadline))
            for n, token in enumerate(tokens)
        ]
        await asyncio.gather(*tasks[1:])
        run.cpu_end = cpu_seconds(pid)
        # The feed polls every 0.5 s: give it up to 5 s to deliver the last records before closing it.
        caught_up = time.monotonic() + 5
        while run.feed_records < run.created and time.monotonic() < caught_up:
            await asyncio.sleep(0.1)
        tasks[0].cancel()
        await asyncio.gather(tasks[0], return_exceptions=True)
    return run


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def window(run: Run, kind: str, start: float, end: float) -> str:
    chosen = [s for s in run.samples if s.kind == kind and start <= s.at < end]
    if not chosen:
        return "| – | – | – | – "
    times = [s.ms for s in chosen]
    errors = sum(not s.ok for s in chosen)
    return f"| {len(chosen):,} | {statistics.median(times):.1f} | {percentile(times, 0.99):.1f} | {errors} "


TITLE = "Soak benchmark"
MEASURES = "10 minutes of a hall's load"


def headline(records: int, challenges: int, rss_start_mib: float, rss_end_mib: float, cpu_percent: float) -> str:
    """The page's headline from the figures its report gives: the log's records for the challenges answered 201,
    the server's memory at the start and the end, and its CPU (percent of one core)."""
    return (
        f"{records:,} records for {challenges:,} challenges, server memory {rss_start_mib:.1f} to {rss_end_mib:.1f}"
        f" MiB, {cpu_percent:.0f}% of one core"
    )


def report(run: Run, args: argparse.Namespace, records: int, commits: int, verified: str) -> str:
    seconds = args.minutes * 60
    cpu = cpu_model()
    last = (max(0, seconds - 60), seconds)
    same = " First and last minute are the same minute in a 1-minute run." if seconds <= 60 else ""
    lines = [
        f"Soak, {datetime.now(UTC):%Y-%m-%d}: {args.minutes:g} min on {cpu}, {os.cpu_count()} cores shared by the "
        f"server and the load, Python {platform.python_version()}, wordjudge {__version__}. {args.kiosks} kiosks at "
        f"{args.rate:g} challenges/min each (1 in 20 resent as a replay), health every 1 s, TD list every 5 s, "
        f"summary every 15 s, the live feed open throughout.{same}",
        "",
        "| kind | first min: n | p50 ms | p99 ms | errors | last min: n | p50 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        lines.append(f"| {kind} {window(run, kind, 0, 60)}{window(run, kind, *last)}|")
    first_rss = [kib for at, kib in run.rss if at <= 60]
    lines += [
        "",
        f"Server RSS: {run.rss[0][1] / 1024:.1f} MiB at the start, {first_rss[-1] / 1024:.1f} MiB after the first "
        f"minute, {run.rss[-1][1] / 1024:.1f} MiB at the end (max {max(k for _, k in run.rss) / 1024:.1f} MiB). "
        f"Server CPU: {100 * (run.cpu_end - run.cpu_start) / seconds:.0f}% of one core on average.",
        f"Audit log: {records:,} records for {run.created:,} challenges answered 201 "
        f"({'equal' if records == run.created else 'DIFFERENT'}); the live feed delivered {run.feed_records:,} "
        f"({'all' if run.feed_records == records else 'MISSING ' + format(records - run.feed_records, ',')}); "
        f"{commits:,} commits; {verified}. Requests sent late (behind their schedule): {run.late}.",
    ]
    if run.errors:
        lines += ["", "First errors:", *(f"- {error}" for error in run.errors)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10, help="length of the run (default 10)")
    parser.add_argument("--kiosks", type=int, default=8, help="enrolled kiosks sending challenges (default 8)")
    parser.add_argument("--rate", type=float, default=12, help="challenges a minute per kiosk (default 12)")
    parser.add_argument("--markdown", type=Path, help="also write the page (docs/bench-soak.md) to this file")
    args = parser.parse_args()
    if args.minutes < 1:
        sys.exit("--minutes must be at least 1 (first and last minute are reported)")

    start_load = os.getloadavg()[0]
    data_dir = Path(tempfile.mkdtemp(prefix="wordjudge-soak-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir), "WORDJUDGE_LOG_LEVEL": "warning"}
    command = str(Path(sys.executable).with_name("wordjudge"))
    (data_dir / "event.toml").write_text(
        'name = "Soak"\nchallenges_per_minute = 0\n[[division]]\nname = "Open"\nlexicon = "demo"\nrule = "five-per-word"\n'
    )
    tokens = [
        subprocess.run(
            [command, "device", "add", f"kiosk-{n + 1}", "--role", "kiosk"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for n in range(args.kiosks)
    ]
    subprocess.run(
        [command, "td", "add", "soak-td", "--password-stdin"],
        env=env,
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    server = subprocess.Popen(
        [command, "serve", "--max-requests-per-client", "0", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/health", timeout=2, trust_env=False).raise_for_status()
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"server did not start: {server.communicate()[1]}")
                time.sleep(0.2)
        login = httpx.post(f"{base}/api/session", json={"name": "soak-td", "password": PASSWORD}, trust_env=False)
        login.raise_for_status()
        td = {"Cookie": f"{SESSION_COOKIE}={login.cookies[SESSION_COOKIE]}"}  # GETs need no CSRF token
        print(f"soaking for {args.minutes:g} min...", file=sys.stderr)
        run = asyncio.run(load(base, tokens, td, server.pid, args))
        health = httpx.get(f"{base}/api/health", timeout=5, trust_env=False).json()["audit"]
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=60)
    log = AuditLog(StateLocation(data_dir))
    verification = log.verify()
    log.close()
    verified = "chain verified" if verification.ok else "CHAIN BROKEN: " + verification.describe()
    text = report(run, args, verification.records, int(health.get("commits", 0)), verified)
    print(text)
    if args.markdown:
        cpu = 100 * (run.cpu_end - run.cpu_start) / (args.minutes * 60)
        said = headline(verification.records, run.created, run.rss[0][1] / 1024, run.rss[-1][1] / 1024, cpu)
        command = f"`.venv/bin/python -m tests.bench.soak --minutes {args.minutes:g}`"
        args.markdown.write_text(
            f"# {TITLE}\n\n{headline_lines(MEASURES, said, machine([start_load, os.getloadavg()[0]]))}\n{command}\n\n{text}\n",
            "utf-8",
        )
    if "Traceback" in stderr:
        print("\nThe server logged a traceback:\n" + stderr[-4000:])
    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
