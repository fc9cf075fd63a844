"""The request's head and the request rate, held before the app (issue 36, items 1 and 8), against real servers.

- A request line and header block over :data:`~wordjudge.web.transport.MAX_HEAD` bytes is refused (431, the one
  error shape) as it arrives, never held: httptools keeps a header's value whole before it hands it on, and
  uvicorn keeps every header and the whole URL, so without a limit a client held what it could send in 5 s.
- One client address (an IPv6 client by its /64) gets :data:`~wordjudge.service.settings` ``max_requests_per_client``
  requests a second, in bursts; beyond that, 429 with Retry-After, and the connection is closed (a pipelined
  flood is dropped unread); another address is served as before.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from wordjudge.base.throttle import client_key
from wordjudge.web import transport

from .helpers import assert_message_is_the_error, device_headers, free_port, wait_for_health, write_event
from .test_api import challenge
from .test_processes import _pid_on, _two_processes
from .test_transport import MiB, RawResponse, _rss, _start, raw_request

MAX_HEAD: int = getattr(transport, "MAX_HEAD", 16 * 1024)  # (the tests were run before the limit existed)

ATTACKER = "127.0.0.3"
KIOSK = "127.0.0.2"


def _head_attack(port: int, start: bytes, filler: Iterator[bytes], budget: int) -> tuple[int, bytes]:
    """Send ``start`` then ``filler`` blocks (up to ``budget`` bytes) from ATTACKER until the server hangs up:
    (bytes sent, what the server answered)."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(ATTACKER, 0)) as sock:
        try:
            sock.sendall(start)
            sent += len(start)
            for block in filler:
                sock.sendall(block)
                sent += len(block)
                if sent >= budget:
                    break
            sock.sendall(b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    return sent, data


def _headers(size: int) -> Iterator[bytes]:
    """``size`` bytes of small headers, 1 MiB a block."""
    line = b"X-Pad: " + b"a" * 57 + b"\r\n"  # 66 bytes
    block = line * (MiB // len(line))
    while True:
        yield block


def _one_header(size: int) -> Iterator[bytes]:
    """One header whose value is ``size`` bytes."""
    yield b"X-Big: "
    block = b"b" * MiB
    while True:
        yield block


def _url(size: int) -> Iterator[bytes]:
    block = b"u" * MiB
    while True:
        yield block


ATTACKS = {
    # name: (what starts the request, what fills it, bytes in all)
    "200 MiB of headers": (b"GET /api/health HTTP/1.1\r\nHost: hall\r\n", _headers, 200 * MiB),
    "one 200 MiB header": (b"GET /api/health HTTP/1.1\r\nHost: hall\r\n", _one_header, 200 * MiB),
    "a 50 MiB URL": (b"GET /api/health?", _url, 50 * MiB),
}


def _assert_head_refused(data: bytes) -> None:
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), data[:300]
    assert b"connection: close" in head.lower()
    refusal = httpx.Response(431, content=body).json()
    assert (refusal["ok"], refusal["status"], refusal["code"]) == (False, 431, "request_head_too_large")
    assert refusal["message"] == {"key": "error.http.head_too_large", "params": {"limit": MAX_HEAD}}
    assert_message_is_the_error(refusal)


def _run_head_attacks(port: int, pid: int, kiosk: dict[str, str], kiosk_port: int) -> list[str]:
    """Each attack from ATTACKER while a kiosk on KIOSK asks for verdicts; returns the failures, printing figures."""
    failures = []
    for name, (start, filler, size) in ATTACKS.items():
        failures += [
            f"{name}: {failure}"
            for failure in _head_attack_watched(name, port, pid, start, filler(size), size, kiosk, kiosk_port)
        ]
    return failures


def _head_attack_watched(
    name: str,
    port: int,
    pid: int,
    start: bytes,
    filler: Iterator[bytes],
    size: int,
    kiosk: dict[str, str],
    kiosk_port: int,
) -> list[str]:
    before = _rss(pid)
    peak = before
    done, going = threading.Event(), threading.Event()
    verdicts: list[tuple[float, int]] = []

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _rss(pid))
            time.sleep(0.01)  # a sampler's pace, until the attack is done

    def kiosk_asks() -> None:
        transport = httpx.HTTPTransport(local_address=KIOSK)
        with httpx.Client(base_url=f"http://127.0.0.1:{kiosk_port}", transport=transport, timeout=5) as http:
            while not done.is_set():
                started = time.monotonic()
                status = http.post("/api/challenges", json=challenge("cat"), headers=kiosk).status_code
                verdicts.append((time.monotonic() - started, status))
                going.set()
                time.sleep(0.2)  # a kiosk's pace

    threads = [threading.Thread(target=sample), threading.Thread(target=kiosk_asks)]
    for thread in threads:
        thread.start()
    # The kiosk is served before the attack starts (its first verdict, a new connection on a loaded machine, is not
    # counted): an attack answered in 10 ms once ended before a kiosk that had not yet started asked anything.
    going.wait(30)
    warm = len(verdicts)
    started = time.monotonic()
    try:
        sent, answer = _head_attack(port, start, filler, size)
    finally:
        took = time.monotonic() - started
        # The memory and the kiosk are watched after the attack too: until the kiosk has had two more verdicts (the
        # first may have been under way before the attack), 30 s at most.
        deadline = time.monotonic() + 30
        while len(verdicts) < warm + 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        done.set()
        for thread in threads:
            thread.join(timeout=10)
    grew = peak - before
    watched = verdicts[warm:] if warm else []
    slowest = max((t for t, _ in watched), default=0.0)
    print(
        f"{name}: sent {sent / MiB:.2f} MiB in {took:.2f} s, answered {answer[:12]!r}; RSS {before / MiB:.0f} MiB, "
        f"peak +{grew / MiB:.1f} MiB; kiosk: {len(watched)} verdicts from the attack on, slowest {slowest * 1000:.0f} ms"
    )
    failures = []
    try:
        _assert_head_refused(answer)
    except AssertionError as exc:
        failures.append(str(exc)[:300])
    if grew >= 30 * 1000 * 1000:
        failures.append(f"RSS grew by {grew / MiB:.0f} MiB")
    if len(watched) < 2 or any(status != 201 for _, status in verdicts) or slowest >= 1.0:
        failures.append(f"kiosk verdicts {verdicts} ({warm} before the attack)")
    return failures


@pytest.mark.live
def test_an_oversized_request_head_is_refused_before_it_is_held(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    port = free_port()
    server = _start(data_dir, port)
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        failures = _run_head_attacks(port, server.pid, kiosk, port)
        # A head just within the limit is served.
        within = b"GET /api/health HTTP/1.1\r\nHost: hall\r\nConnection: close\r\nX-Pad: "
        within += b"a" * (MAX_HEAD - len(within) - 200) + b"\r\n\r\n"
        _, answer = _head_attack(port, within, iter(()), 0)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert not failures, failures


@pytest.mark.live
def test_every_process_of_a_server_of_several_refuses_an_oversized_head(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    server, port, _ = _two_processes(data_dir)
    failures = []
    try:
        for k in (0, 1):  # the kiosk asks process 1, which answers the verdict path
            failures += [f"process {k}: {f}" for f in _run_head_attacks(port + k, _pid_on(port + k), kiosk, port + 1)]
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert not failures, failures


# -- the request rate ------------------------------------------------------------------------------


def _get(port: int, source: str, path: str = "/api/health") -> RawResponse:
    return raw_request(port, f"GET {path} HTTP/1.1\nHost: hall\n", source=source, timeout=10)


@pytest.mark.live
def test_an_address_over_its_request_rate_gets_429_and_another_is_served(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    port = free_port()
    server = _start(data_dir, port, "--max-requests-per-client", "5")  # bursts of 50
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        statuses = []
        refusal: RawResponse | None = None
        for _ in range(80):
            answer = _get(port, ATTACKER)
            statuses.append(answer.status)
            if answer.status == 429 and refusal is None:
                refusal = answer
        transport = httpx.HTTPTransport(local_address=KIOSK)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", transport=transport, timeout=5) as http:
            verdict = http.post("/api/challenges", json=challenge("cat"), headers=kiosk)
    finally:
        server.terminate()
        server.communicate(timeout=30)
    print(f"80 requests at once from {ATTACKER}: {statuses.count(200)} served, {statuses.count(429)} refused")
    assert 45 <= statuses.count(200) <= 55  # the burst, and what refilled meanwhile
    assert statuses.count(429) == 80 - statuses.count(200)
    assert refusal is not None
    assert refusal.headers["connection"] == "close"
    assert int(refusal.headers["retry-after"]) >= 1
    body = refusal.json()
    assert (body["ok"], body["status"], body["code"]) == (False, 429, "rate_limited")
    assert body["message"]["key"] == "error.http.rate_limited"
    assert body["details"] == {"retry_after": int(refusal.headers["retry-after"])}
    assert_message_is_the_error(body)
    assert verdict.status_code == 201  # the kiosk at another address is served as before


def test_the_request_rate_counts_an_ipv6_client_by_its_64() -> None:
    buckets = transport.RateBuckets(rate=1.0, burst=3)
    now = 100.0
    # Three addresses of one /64 share one bucket; another /64 has its own.
    assert [buckets.take(client_key(f"2001:db8:1:2::{n}"), now) for n in range(1, 5)] == [0.0, 0.0, 0.0, 1.0]
    assert buckets.take(client_key("2001:db8:1:3::1"), now) == 0.0
    assert buckets.take(client_key("::ffff:192.0.2.1"), now) == 0.0  # IPv4 on a dual-stack socket: its own
    assert buckets.take(client_key("2001:db8:1:2::99"), now + 1.0) == 0.0  # one refilled a second later


def test_the_request_rate_keeps_bounded_memory() -> None:
    buckets = transport.RateBuckets(rate=10.0, burst=100)
    for n in range(50_000):
        buckets.take(f"198.51.{n // 256 % 256}.{n % 256}-{n}", float(n) / 1000)
    assert len(buckets) <= transport.RateBuckets.MAX_KEYS
