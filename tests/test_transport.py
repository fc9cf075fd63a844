"""Trust at the edge: bounded request bodies, slow clients, proxy headers and HSTS, against real servers.

The live tests speak HTTP over raw sockets where a client library would hide what is measured (a
body streamed until the server hangs up, a byte every two seconds, the client's own address).
"""

from __future__ import annotations

import ipaddress
import json
import os
import resource
import selectors
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient

from wordjudge.base.throttle import client_key
from wordjudge.web.transport import MAX_BODY, REQUEST_TIMEOUT, ConnectionLimits

from .helpers import (
    ERROR_KEYS,
    ServeProcess,
    assert_error_shape,
    assert_message_is_the_error,
    device_headers,
    free_port,
    wait_for_health,
    write_event,
)
from .test_access_api import make_certificate
from .test_api import challenge

MiB = 1024 * 1024
SYSTEMD_NOFILE = 1024  # systemd's default soft limit of open files for a service


def _start(data_dir: Path, port: int, *extra: str, nofile: int | None = None) -> subprocess.Popen[str]:
    """``wordjudge serve`` in a subprocess, optionally with systemd's default soft open-file limit."""

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    script = Path(sys.executable).with_name("wordjudge")
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data_dir)}
    return ServeProcess(
        [str(script), "serve", "--port", str(port), "--log-level", "warning", *extra], env, preexec_fn=limit
    )


@pytest.fixture
def live(data_dir: Path) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """A live server on 127.0.0.1 for the test's data dir: (port, process)."""
    port = free_port()
    server = _start(data_dir, port)
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        yield port, server
    finally:
        server.terminate()
        server.communicate(timeout=30)


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    sent: int = 0  # body bytes the client got to send before the server answered or hung up

    def json(self) -> Any:
        return json.loads(self.body)


def raw_request(
    port: int, head: str, body: Iterable[bytes] = (), *, source: str = "127.0.0.1", timeout: float = 10
) -> RawResponse:
    """Send a request head, then the body chunks until the server stops taking them; read the response."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as sock:
        sent = 0
        try:
            sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
            for chunk in body:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server hung up: what it answered first is still in this socket's buffer
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
                if _complete(data):
                    break
        except ConnectionResetError:
            pass
    assert data, f"no response (after {sent:,} body bytes)"
    head_bytes, _, content = data.partition(b"\r\n\r\n")
    status_line, *lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return RawResponse(int(status_line.split()[1]), headers, content, sent)


def _complete(data: bytes) -> bool:
    head, found, content = data.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(content) >= int(value)
    return False


def chunked(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """A body in HTTP/1.1 chunked transfer coding."""
    for block in blocks:
        yield b"%x\r\n" % len(block) + block + b"\r\n"
    yield b"0\r\n\r\n"


def assert_too_large(response: RawResponse) -> None:
    assert response.status == 413, (response.status, response.body[:200])
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert_message_is_the_error(body)
    assert (body["ok"], body["status"], body["code"]) == (False, 413, "payload_too_large")
    assert f"at most {MAX_BODY:,} bytes" in body["error"]
    assert response.headers["connection"] == "close"  # the rest of the body is not read
    assert response.headers["x-content-type-options"] == "nosniff"  # the security headers too


# -- request bodies --------------------------------------------------------------------------------


@pytest.mark.live
def test_a_declared_body_over_the_limit_is_refused_unread_on_every_route(
    data_dir: Path, live: tuple[int, subprocess.Popen[str]]
) -> None:
    port, _ = live
    kiosk = device_headers(data_dir, "kiosk-1")
    routes = ["POST /api/challenges", "POST /api/enrol", "PUT /api/event", "POST /nowhere", "DELETE /api/health"]
    for route in routes:
        for length in (MAX_BODY + 1, 300 * MiB):
            # Only the head is sent: a server that waited for the body would never answer.
            head = f"{route} HTTP/1.1\nHost: hall\nContent-Type: application/json\nContent-Length: {length}\n"
            assert_too_large(raw_request(port, head, timeout=5))
    # A device's credential changes nothing: the body is refused before anyone is authenticated.
    auth = kiosk["Authorization"]
    head = f"POST /api/challenges HTTP/1.1\nHost: hall\nAuthorization: {auth}\nContent-Length: {300 * MiB}\n"
    assert_too_large(raw_request(port, head, timeout=5))
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
        # Up to the limit, a body is the app's to judge: a 60 KB challenge is refused as invalid, not as large.
        big = challenge(["cat"] * 6000)
        assert len(json.dumps(big)) > 40_000
        assert http.post("/api/challenges", json=big, headers=kiosk).status_code == 422
        normal = http.post("/api/challenges", json=challenge("cat dog"), headers=kiosk)
        assert normal.status_code == 201
        assert normal.json()["verdict"] == "acceptable"


@pytest.mark.live
def test_a_chunked_body_is_counted_and_refused_once_over_the_limit(
    data_dir: Path, live: tuple[int, subprocess.Popen[str]]
) -> None:
    port, _ = live
    kiosk = device_headers(data_dir, "kiosk-1")
    for route in ("POST /api/challenges", "POST /nowhere"):
        head = f"{route} HTTP/1.1\nHost: hall\nContent-Type: application/json\nTransfer-Encoding: chunked\n"
        response = raw_request(port, head, chunked(iter([b" " * 16384] * 64)), timeout=5)  # 1 MiB
        assert_too_large(response)
        print(f"{route}: 413; the client got {response.sent:,} bytes of a 1 MiB chunked body out (framing included)")
    # Within the limit, a chunked body reaches the app whole.
    body = json.dumps(challenge("cat dog")).encode()
    head = (
        f"POST /api/challenges HTTP/1.1\nHost: hall\nAuthorization: {kiosk['Authorization']}\n"
        "Content-Type: application/json\nTransfer-Encoding: chunked\nConnection: close\n"
    )
    response = raw_request(port, head, chunked(iter([body[:10], body[10:]])))
    assert response.status == 201, response.body
    assert response.json()["words"] == ["CAT", "DOG"]


def test_the_limit_holds_in_process_too(client: TestClient) -> None:
    refused = client.post("/api/challenges", content=b"x" * (MAX_BODY + 1))
    assert_error_shape(refused, 413, "payload_too_large")
    streamed = client.post("/api/challenges", content=iter([b"x" * 40_000] * 2))  # no Content-Length: chunked
    assert_error_shape(streamed, 413, "payload_too_large")
    assert client.post("/api/challenges", content=iter([b"{}"])).status_code == 401  # within it: the app's


def _rss(pid: int) -> int:
    """The process's resident memory, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.live
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_three_300_mib_bodies_leave_the_memory_alone(data_dir: Path, framing: str) -> None:
    port = free_port()
    server = _start(data_dir, port)
    size = 300 * MiB
    block = b"x" * MiB
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        before = _rss(server.pid)
        peak = before
        sampling = True

        def sample() -> None:
            nonlocal peak
            while sampling:
                peak = max(peak, _rss(server.pid))
                time.sleep(0.01)  # a sampler's pace, until the attack is done

        def attempt() -> RawResponse:
            if framing == "chunked":
                head = "POST /api/challenges HTTP/1.1\nHost: hall\nTransfer-Encoding: chunked\n"
                return raw_request(port, head, chunked(iter([block] * 300)), timeout=60)
            head = f"POST /api/challenges HTTP/1.1\nHost: hall\nContent-Length: {size}\n"
            return raw_request(port, head, iter([block] * 300), timeout=60)

        sampler = threading.Thread(target=sample)
        sampler.start()
        results: list[RawResponse] = []
        attackers = [threading.Thread(target=lambda: results.append(attempt())) for _ in range(3)]
        started = time.monotonic()
        for thread in attackers:
            thread.start()
        for thread in attackers:
            thread.join(timeout=120)
        took = time.monotonic() - started
        time.sleep(1)  # the memory is measured once the server has had a second to give back what it took
        after = _rss(server.pid)
        sampling = False
        sampler.join()
    finally:
        server.terminate()
        server.communicate(timeout=30)
    print(
        f"{framing}: RSS before {before / MiB:.1f} MiB, peak {peak / MiB:.1f} MiB (+{(peak - before) // 1024} KiB), "
        f"after {after / MiB:.1f} MiB (+{(after - before) // 1024} KiB); {took:.1f} s; "
        f"answers {sorted(r.status for r in results)}, body bytes sent {[r.sent for r in results]}"
    )
    assert [r.status for r in results] == [413, 413, 413]
    assert peak - before < 20 * 1000 * 1000
    assert after - before < 20 * 1000 * 1000


# -- slow clients ----------------------------------------------------------------------------------

ATTACKERS = 1100
TICK = 2.0  # seconds between two bytes of a slow connection
SLOWLY = b"POST /api/challenges HTTP/1.1\r\nHost: hall\r\nX-Slow: " + b"a" * 100


@dataclass
class Flood:
    """Connections from 127.0.0.1 that each send a byte every TICK seconds, replaced when closed.

    Each closed connection is kept as (seconds it lived until the server's first answer or its close,
    whether the server answered): the server answers a connection it let in and timed out (408), and
    closes one over the per-address cap unanswered. ``blind`` is the longest stretch the flood spent
    away from ``select`` (sending, connecting): a close is noticed at most that late, which on a loaded
    machine is well over a second.
    """

    port: int
    selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    opened: int = 0
    failed: int = 0  # could not even connect
    closes: list[tuple[float, bool]] = field(default_factory=list)
    blind: float = 0.0

    def open(self) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=2, source_address=("127.0.0.1", 0))
        except OSError:
            self.failed += 1
            return
        sock.setblocking(False)
        self.opened += 1
        # [opened at, bytes sent, seconds to the server's first answer (None: no answer yet)]
        self.selector.register(sock, selectors.EVENT_READ, [time.monotonic(), 0, None])
        self.send(sock)

    def send(self, sock: socket.socket) -> None:
        state = self.selector.get_key(sock).data
        try:
            sock.send(SLOWLY[state[1] : state[1] + 1])
            state[1] += 1
        except (BlockingIOError, BrokenPipeError, ConnectionResetError):
            self.close(sock)

    def close(self, sock: socket.socket) -> None:
        opened_at, _, answered_after = self.selector.get_key(sock).data
        if answered_after is None:
            self.closes.append((time.monotonic() - opened_at, False))
        else:
            self.closes.append((answered_after, True))
        self.selector.unregister(sock)
        sock.close()

    def open_now(self) -> int:
        return len(self.selector.get_map())

    def run(self, seconds: float, keep: int) -> None:
        """Keep ``keep`` connections trickling for ``seconds``."""
        end = time.monotonic() + seconds
        next_tick = time.monotonic()
        looked = time.monotonic()
        while (now := time.monotonic()) < end:
            if now >= next_tick:
                for key in list(self.selector.get_map().values()):
                    self.send(key.fileobj)  # type: ignore[arg-type]
                while self.open_now() < keep:
                    self.open()
                next_tick = now + TICK
            now = time.monotonic()
            self.blind = max(self.blind, now - looked)
            ready = self.selector.select(timeout=min(0.05, max(0.0, next_tick - now)))
            looked = time.monotonic()
            for key, _ in ready:
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    if sock.recv(4096):
                        if key.data[2] is None:  # the answer (408) before the close
                            key.data[2] = looked - key.data[0]
                        continue
                except (BlockingIOError, InterruptedError):
                    continue
                except ConnectionResetError:
                    pass
                self.close(sock)

    def close_all(self) -> None:
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self.selector.close()


@pytest.mark.live
def test_slow_clients_cannot_take_the_hall_off_the_air(data_dir: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < ATTACKERS + 500:
        pytest.skip(f"the hard open-file limit ({hard}) is too low for {ATTACKERS} client connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this test's own 1,100 sockets
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    port = free_port()
    server = _start(data_dir, port, nofile=SYSTEMD_NOFILE)  # as systemd starts a service by default
    flood = Flood(port)
    verdicts: list[tuple[float, int | str]] = []
    idle_closed_after: list[float] = []

    def kiosk_challenges() -> None:
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", transport=transport, timeout=5) as http:
            for wait in (1.0, 3.5, 3.5):  # while the flood is fresh, and after its first connections timed out
                time.sleep(wait)
                started = time.monotonic()
                try:
                    status: int | str = http.post("/api/challenges", json=challenge("cat"), headers=kiosk).status_code
                except httpx.TransportError as exc:
                    status = type(exc).__name__
                verdicts.append((time.monotonic() - started, status))

    def idle_connection() -> None:  # connects and sends nothing at all
        with socket.create_connection(("127.0.0.1", port), timeout=15, source_address=("127.0.0.3", 0)) as sock:
            started = time.monotonic()
            try:
                sock.recv(1)
            except (TimeoutError, ConnectionResetError):
                return
            idle_closed_after.append(time.monotonic() - started)

    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        helpers = [threading.Thread(target=kiosk_challenges), threading.Thread(target=idle_connection)]
        started = time.monotonic()
        for thread in helpers:
            thread.start()
        flood.run(1.0, keep=ATTACKERS)
        accepted = flood.open_now()  # still open a second after the flood began
        flood.run(REQUEST_TIMEOUT + 5.0, keep=ATTACKERS)
        for thread in helpers:
            thread.join(timeout=20)
        took = time.monotonic() - started
    finally:
        flood.close_all()
        server.terminate()
        server.communicate(timeout=30)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    timed_out = [life for life, answered in flood.closes if answered]
    refused_at_once = len(flood.closes) - len(timed_out)
    # A close is noticed up to `blind` seconds late: that much is the observer's, not the server's.
    window = (REQUEST_TIMEOUT - 0.5, REQUEST_TIMEOUT + TICK + 1.0 + flood.blind)
    print(
        f"{ATTACKERS} slow connections kept up for {took:.1f} s: {flood.opened} opened, {flood.failed} could not "
        f"connect, {accepted} held after 1 s, {refused_at_once} closed unanswered, {len(timed_out)} answered 408 "
        f"(after {min(timed_out, default=0):.1f}-{max(timed_out, default=0):.1f} s, the flood looked away for "
        f"{flood.blind:.2f} s at most); an idle connection closed after {idle_closed_after}; "
        f"kiosk from 127.0.0.2: {[(f'{t:.3f} s', s) for t, s in verdicts]}"
    )
    assert [status for _, status in verdicts] == [201, 201, 201]
    assert all(latency < 1.0 for latency, _ in verdicts), verdicts  # the target: under a second
    assert accepted <= 64  # max_connections_per_client, by default
    assert refused_at_once >= ATTACKERS - 64
    # ...each closed at once: an unanswered close noticed later than the flood's blind stretch allows would be a
    # connection let in and then dropped without its 408.
    late = [round(life, 2) for life, answered in flood.closes if not answered and life >= 1.0 + flood.blind]
    assert not late, f"{len(late)} closed unanswered after {1.0 + flood.blind:.1f} s: {late[:20]}"
    # Each connection that was let in but trickled its request was answered 408 once its time was up.
    assert timed_out
    outside = [round(life, 2) for life in timed_out if not window[0] < life < window[1]]
    assert not outside, (
        f"{len(outside)} of {len(timed_out)} answered outside {window[0]:.1f}-{window[1]:.1f} s: {outside}"
    )
    assert idle_closed_after
    assert REQUEST_TIMEOUT - 0.5 < idle_closed_after[0] < REQUEST_TIMEOUT + 1.5


@pytest.mark.live
def test_a_request_that_does_not_arrive_in_time_gets_a_408_and_is_closed(
    live: tuple[int, subprocess.Popen[str]],
) -> None:
    port, _ = live
    with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT + 5) as sock:
        sock.sendall(b"POST /api/enrol HTTP/1.1\r\nHost: hall\r\nContent-Length: 40\r\n\r\n{")
        started = time.monotonic()
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
        waited = time.monotonic() - started
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ")
    refusal = json.loads(body)
    assert refusal["code"] == "request_timeout"
    assert_message_is_the_error(refusal)
    assert refusal["message"] == {"key": "error.http.timeout", "params": {"seconds": round(REQUEST_TIMEOUT)}}
    assert REQUEST_TIMEOUT - 0.5 < waited < REQUEST_TIMEOUT + 1.5


def test_connections_are_counted_per_address() -> None:
    assert client_key("192.168.1.20") == "192.168.1.20"
    assert client_key("::ffff:192.168.1.20") == "192.168.1.20"  # IPv4 on a dual-stack socket
    # One host on a LAN may use any address of its /64: they count as one.
    assert client_key("2001:db8:1:2::1") == client_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    # A trusted proxy carries many clients: its connections are not capped per address.
    limits = ConnectionLimits(per_client=4, overall=100, trusted_proxies=(ipaddress.ip_network("10.1.0.0/16"),))
    assert limits.exempt("10.1.2.3")
    assert not limits.exempt("10.2.0.1")
    assert not limits.exempt("127.0.0.1")


# -- proxy headers and HSTS ------------------------------------------------------------------------


def _wrong_codes(port: int) -> list[int]:
    """Six wrong pairing codes from 127.0.0.1, each claiming another address in X-Forwarded-For."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
        return [
            http.post("/api/enrol", json={"code": "AAAA-AAAA"}, headers={"X-Forwarded-For": f"10.0.0.{n}"}).status_code
            for n in range(6)
        ]


@pytest.mark.live
@pytest.mark.sqlite_only("two servers at once, each with a folder of its own, would share the test's one database")
def test_x_forwarded_for_is_trusted_only_from_a_named_proxy(
    data_dir: Path, tmp_path: Path, live: tuple[int, subprocess.Popen[str]]
) -> None:
    port, _ = live
    # Five wrong pairing codes a minute per address: a client on the server machine cannot dodge that.
    assert _wrong_codes(port) == [401, 401, 401, 401, 401, 429]
    proxied_port = free_port()
    proxied_dir = tmp_path / "proxied"  # one server per data folder: the second gets its own
    shutil.copytree(data_dir / "lexicons", proxied_dir / "lexicons")
    proxied = _start(proxied_dir, proxied_port, "--trusted-proxies", "127.0.0.1")
    try:
        wait_for_health(f"http://127.0.0.1:{proxied_port}", proxied)
        # Behind the TD's proxy, each forwarded address is a client of its own (the total limit is 30).
        assert _wrong_codes(proxied_port) == [401] * 6
    finally:
        proxied.terminate()
        proxied.communicate(timeout=30)


HSTS = "max-age=15552000"


@pytest.mark.live
def test_https_responses_carry_strict_transport_security(data_dir: Path, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    make_certificate(cert, key)
    port = free_port()
    server = _start(data_dir, port, "--certfile", str(cert), "--keyfile", str(key))
    verify = ssl.create_default_context(cafile=cert)
    try:
        base = f"https://127.0.0.1:{port}"
        wait_for_health(base, server, verify=verify)
        with httpx.Client(base_url=base, verify=verify, timeout=10) as https:
            for response in (https.get("/api/health"), https.get("/kiosk"), https.get("/nowhere")):
                assert response.headers["strict-transport-security"] == HSTS, response.url
            refused = https.post("/api/challenges", content=b"x" * (MAX_BODY + 1))
            assert refused.status_code == 413
            assert refused.headers["strict-transport-security"] == HSTS
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_plain_http_responses_carry_no_strict_transport_security(client: TestClient) -> None:
    assert "strict-transport-security" not in client.get("/api/health").headers
