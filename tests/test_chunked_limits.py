"""A chunked body's framing and trailers, counted as the request's head is (issue 44, point 4), against real servers.

Every byte of a request is counted: the body by :class:`~wordjudge.web.transport.BodyLimit`, everything else (the
request line and headers, then a chunked body's size lines with their extensions, and its trailers) against
:data:`~wordjudge.web.transport.MAX_HEAD` as it arrives, 431 and closed past it. httptools holds a trailer's value
whole (appending each piece it is fed to what it holds: quadratic in the value's length) and uvicorn appended every
trailer to the request's headers, so before the limit one connection held what it could send in 5 s and one long
value blocked the event loop for every kiosk. Trailers never pass for headers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from wordjudge.web import transport

from .helpers import assert_message_is_the_error, device_headers, free_port, wait_for_health, write_event
from .test_api import challenge
from .test_transport import MiB, _rss, _start

MAX_HEAD = transport.MAX_HEAD

ATTACKER = "127.0.0.3"
KIOSK = "127.0.0.2"

HEAD = (
    b"POST /api/challenges HTTP/1.1\r\nHost: hall\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
)
BODY = json.dumps(challenge("cat")).encode()
ONE_CHUNK = b"%x\r\n%s\r\n" % (len(BODY), BODY)


def _blocks(block: bytes) -> Iterator[bytes]:
    while True:
        yield block


ATTACKS: dict[str, tuple[bytes, Callable[[], Iterator[bytes]]]] = {
    # name: (what starts the request, what fills it until the server hangs up; b"\r\n\r\n" ends it)
    "200 MiB of trailers": (HEAD + b"\r\n" + ONE_CHUNK + b"0\r\n", lambda: _blocks(b"X-Pad: " + b"a" * 57 + b"\r\n")),
    "one 200 MiB trailer": (HEAD + b"\r\n" + ONE_CHUNK + b"0\r\nX-Big: ", lambda: _blocks(b"b" * MiB)),
    "a 200 MiB chunk extension": (HEAD + b"\r\n" + b"%x;ext=" % len(BODY), lambda: _blocks(b"e" * MiB)),
    "a chunk size of 200 MiB of zeros": (HEAD + b"\r\n" + ONE_CHUNK, lambda: _blocks(b"0" * MiB)),
}
BUDGET = 200 * MiB


def _attack(port: int, start: bytes, filler: Iterator[bytes], budget: int = BUDGET) -> tuple[int, bytes]:
    """Send ``start`` then ``filler`` (up to ``budget`` bytes, or until the server hangs up) from ATTACKER, then end
    the request: (bytes sent, what the server answered before closing)."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(ATTACKER, 0)) as sock:
        try:
            sock.sendall(start)
            sent += len(start)
            for block in filler:
                # Small writes, so that the server gets the stream in many pieces (as over a real network).
                for at in range(0, len(block), 64 * 1024):
                    sock.sendall(block[at : at + 64 * 1024])
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


def _assert_refused(data: bytes, key: str = "error.http.trailers_too_large") -> None:
    """431 in the one error shape, naming the limit, and the connection closed."""
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), data[:300]
    assert b"connection: close" in head.lower()
    refusal = httpx.Response(431, content=body).json()
    assert (refusal["ok"], refusal["status"], refusal["code"]) == (False, 431, "request_head_too_large")
    assert refusal["message"] == {"key": key, "params": {"limit": MAX_HEAD}}
    assert_message_is_the_error(refusal)


class _Kiosk:
    """A kiosk on KIOSK asking ``count`` verdicts, one every ``every`` seconds, on its own connection."""

    def __init__(self, port: int, headers: dict[str, str], count: int, every: float = 0.3) -> None:
        self.port, self.headers, self.count, self.every = port, headers, count, every
        self.verdicts: list[tuple[float, int | str]] = []  # (seconds, status or what went wrong)
        self.thread = threading.Thread(target=self._ask)

    def _ask(self) -> None:
        http_transport = httpx.HTTPTransport(local_address=KIOSK)
        with httpx.Client(base_url=f"http://127.0.0.1:{self.port}", transport=http_transport, timeout=8) as http:
            for _ in range(self.count):
                started = time.monotonic()
                try:
                    status: int | str = http.post(
                        "/api/challenges", json=challenge("cat"), headers=self.headers
                    ).status_code
                except httpx.TimeoutException:
                    status = "timed out"
                self.verdicts.append((time.monotonic() - started, status))
                time.sleep(self.every)

    def answered(self) -> int:
        return sum(status == 201 for _, status in self.verdicts)

    def slowest(self) -> float:
        return max((took for took, _ in self.verdicts), default=0.0)

    def failures(self) -> list[str]:
        if self.answered() == self.count and self.slowest() < 1.0:
            return []
        return [f"kiosk: {self.answered()} of {self.count} verdicts within 8 s, slowest {self.slowest():.2f} s"]


@pytest.fixture
def served(data_dir: Path) -> Iterator[tuple[int, int, dict[str, str]]]:
    """A live ``wordjudge serve``: (port, pid, a kiosk's headers)."""
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    port = free_port()
    server = _start(data_dir, port)
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        yield port, server.pid, kiosk
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.live
@pytest.mark.parametrize("name", list(ATTACKS))
def test_chunk_lines_and_trailers_past_the_limit_are_refused_before_they_are_held(
    served: tuple[int, int, dict[str, str]], name: str
) -> None:
    port, pid, kiosk_headers = served
    start, filler = ATTACKS[name]
    before = peak = _rss(pid)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _rss(pid))
            time.sleep(0.01)  # a sampler's pace, until the attack is done

    sampler = threading.Thread(target=sample)
    kiosk = _Kiosk(port, kiosk_headers, count=5, every=0.1)
    sampler.start()
    kiosk.thread.start()
    started = time.monotonic()
    try:
        sent, answer = _attack(port, start, filler())
    finally:
        took = time.monotonic() - started
        kiosk.thread.join(timeout=60)
        done.set()
        sampler.join(timeout=10)
    grew = peak - before
    print(
        f"{name}: sent {sent / MiB:.2f} MiB in {took:.2f} s, answered {answer[:12]!r}; RSS {before / MiB:.0f} MiB, "
        f"peak +{grew / MiB:.1f} MiB; kiosk: {kiosk.answered()} of {kiosk.count}, slowest {kiosk.slowest() * 1000:.0f} ms"
    )
    _assert_refused(answer)
    assert sent < 16 * MiB  # refused as it came, not once the stream ended
    assert grew < 20 * MiB, f"RSS grew by {grew / MiB:.0f} MiB"
    assert not kiosk.failures(), kiosk.verdicts


@pytest.mark.live
def test_long_trailer_values_do_not_block_the_loop_for_the_kiosks(served: tuple[int, int, dict[str, str]]) -> None:
    port, _, kiosk_headers = served
    kiosk = _Kiosk(port, kiosk_headers, count=10)
    answers: list[bytes] = []

    def attack() -> None:
        # Each long value sent as fast as the server reads it, until it hangs up; again while the kiosk asks
        # (20 a second from each of the two, under the address's 50 requests a second).
        start, filler = ATTACKS["one 200 MiB trailer"]
        while kiosk.thread.is_alive() and len(answers) < 200:
            answers.append(_attack(port, start, filler())[1])
            time.sleep(0.05)  # the attack's pace while the kiosk's verdicts are timed

    attackers = [threading.Thread(target=attack) for _ in range(2)]
    kiosk.thread.start()
    for thread in attackers:
        thread.start()
    kiosk.thread.join(timeout=120)
    for thread in attackers:
        thread.join(timeout=120)
    took = sorted(seconds for seconds, _ in kiosk.verdicts)
    print(
        f"{len(answers)} long values sent; kiosk: {kiosk.answered()} of {kiosk.count} verdicts answered, "
        f"median {took[len(took) // 2] * 1000:.0f} ms, slowest {kiosk.slowest() * 1000:.0f} ms"
    )
    assert not kiosk.failures(), kiosk.verdicts
    for answer in answers:
        _assert_refused(answer)


def _exchange(port: int, data: bytes, source: str = ATTACKER) -> list[tuple[int, bytes]]:
    """Send ``data`` on one connection, read until the server closes it: each response's (status, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    responses = []
    while received:
        head, _, rest = received.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        responses.append((int(head.split(b" ")[1]), rest[:length]))
        received = rest[length:]
    return responses


@pytest.mark.live
def test_chunked_bodies_with_small_trailers_are_served_and_trailers_never_pass_for_headers(
    served: tuple[int, int, dict[str, str]],
) -> None:
    port, _, kiosk_headers = served
    token = kiosk_headers["Authorization"].encode()

    def chunked(authorised: bool, trailers: bytes = b"X-Checksum: 1234\r\n", close: bool = False) -> bytes:
        body = json.dumps(challenge("cat dog")).encode()  # a request id of its own: never a retry
        head = HEAD + (b"Authorization: " + token + b"\r\n" if authorised else b"")
        head += b"Connection: close\r\n" if close else b""
        chunks = b"".join(b"%x;n=%d\r\n%s\r\n" % (len(piece), n, piece) for n, piece in enumerate((body[:9], body[9:])))
        return head + b"\r\n" + chunks + b"0\r\n" + trailers + b"\r\n"

    # Two chunked requests on one connection, with extensions and small trailers, then one whose only token is a
    # trailer: the first two are served, the third is not signed in (a trailer is not a header).
    answers = _exchange(
        port, chunked(True) + chunked(True) + chunked(False, b"Authorization: " + token + b"\r\n", True)
    )
    assert [status for status, _ in answers] == [201, 201, 401], answers
    assert [json.loads(answer)["verdict"] for _, answer in answers[:2]] == ["acceptable", "acceptable"]

    def padded(outside_the_body: int) -> bytes:
        """A request whose bytes outside its body (line, headers, chunk lines, trailers) are this many."""
        request = chunked(True, close=True)
        pad = outside_the_body - (len(request) - len(json.dumps(challenge("cat dog")))) - len(b"X-Pad: \r\n")
        return request[:-2] + b"X-Pad: " + b"p" * pad + b"\r\n\r\n"

    # Framing and trailers just within the limit, on a request of its own: served; a few bytes more: refused.
    assert [status for status, _ in _exchange(port, padded(MAX_HEAD - 50))] == [201]
    (status, refusal), *_ = _exchange(port, padded(MAX_HEAD + 50))
    assert status == 431
    _assert_refused(b"HTTP/1.1 431 x\r\nconnection: close\r\n\r\n" + refusal)
