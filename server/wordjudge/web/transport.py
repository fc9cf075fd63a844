"""What the server takes from the network before any route sees a request.

A hall's LAN is shared with players' phones, so anything on it may be hostile. Three limits keep
one client from taking the server off the air for every kiosk:

- :class:`BodyLimit` (ASGI middleware, ahead of routing and authentication): a request body is at
  most :data:`MAX_BODY` bytes. A larger declared ``Content-Length`` is refused with 413 before a
  byte of the body is read; a body without one (chunked) is counted as it arrives and refused once
  over the limit, so no request ever holds more than the limit in memory.
- :class:`GuardedHttpProtocol` (uvicorn's httptools protocol, subclassed): a request must arrive in
  full, headers and body, within :data:`REQUEST_TIMEOUT` seconds of its first byte (a new connection
  that sends nothing is closed after as long), and one client address may hold at most
  ``max_connections_per_client`` connections (more are closed at once), and all clients together at
  most what the open-file limit leaves after :data:`FD_RESERVE` descriptors for the server's files.
  A request's bytes outside its body (its line and headers, then a chunked body's size lines, with their
  extensions, and its trailers) are at most :data:`MAX_HEAD`, counted as they arrive (431 and closed past it:
  httptools holds a header's or trailer's value whole before handing it on, and uvicorn the URL and every
  header, so they are refused before they are held); trailers never join the request's headers; and one
  client address (an IPv6 client by its /64, :func:`client_key`) begins at most ``requests_per_second``
  requests a second, in bursts of :data:`BURST_SECONDS` times as many (:class:`RateBuckets`): beyond that,
  429 with Retry-After, and the connection is closed, so that a pipelined flood is dropped unparsed. A
  trusted proxy is not counted.
- :func:`raise_open_file_limit`: the soft limit of open files goes up to the hard one at start
  (systemd's default soft limit, 1,024, is what a slow-client flood used to exhaust).

The middleware is plain ASGI (cheaper than a BaseHTTPMiddleware); the protocol is uvicorn's own, so
``wordjudge serve`` always runs httptools (``cli.serve`` passes the class to uvicorn).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from wordjudge.base.errors import PayloadTooLarge, RateLimited, RequestHeadTooLarge, RequestTimeout, WordjudgeError
from wordjudge.base.throttle import client_key  # the one key of every per-address limit

log = logging.getLogger(__name__)

# A challenge body is under 1 KiB, the largest valid body (an event with 50 divisions) about 15 KiB:
# 64 KiB is generous, and it is also uvicorn's own buffer (HIGH_WATER_LIMIT), so an accepted body
# never makes uvicorn pause reading while the request's time runs.
MAX_BODY = 64 * 1024
# Seconds a request has from its first byte (or from the connection's start) to arrive in full. A
# kiosk's request is one or two TCP segments: 5 s covers several retransmissions on a bad Wi-Fi.
REQUEST_TIMEOUT = 5.0
# Descriptors kept for the server's own files (SQLite databases and their journals, lexicons, the
# web clients' files, logs, the thread pool's connections) when capping connections overall.
FD_RESERVE = 256
# A request's line and header block: a kiosk's is under 1 KiB, a console's (its cookie) under 2 KiB. 16 KiB is
# HAProxy's default buffer for the whole head (tune.bufsize) and twice nginx's default header buffer.
MAX_HEAD = 16 * 1024
# A client address's requests may come in bursts of this many seconds' worth of its rate (a page's load).
BURST_SECONDS = 10
# Seconds between two log lines about the same refused address (a flood must not flood the log too).
_LOG_EVERY = 60.0

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


# -- request bodies ------------------------------------------------------------------------------


class BodyLimit:
    """Refuses a request body over ``limit`` bytes with 413, before the app (routes, authentication) sees it.

    A declared ``Content-Length`` over the limit is refused at once, unread. A body sent without
    one (``Transfer-Encoding: chunked``) is read here first, counting, and handed on to the app
    only once complete and within the limit. The refusal closes the connection, so that uvicorn
    does not go on reading (and discarding) what the client keeps sending.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared: bytes | None = None
        chunked = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                declared = value
            elif name == b"transfer-encoding":
                chunked = True
        if declared is not None:
            # uvicorn's parser delivers exactly the declared length and refuses a malformed one.
            if not declared.strip().isdigit() or int(declared) > self.limit:
                await self._refuse(send)
                return
        elif chunked:
            body = await self._read(receive)
            if body is None:
                await self._refuse(send)
                return
            receive = replay_body(body, receive)
        await self.app(scope, receive, send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None once it is over the limit (or the client went away)."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # a disconnect: nobody is left to answer, and _refuse's send is dropped
            body += message.get("body", b"")
            if len(body) > self.limit:
                return None
            if not message.get("more_body", False):
                return bytes(body)

    async def _refuse(self, send: Send) -> None:
        error = PayloadTooLarge("error.http.too_large", limit=self.limit, details={"limit": self.limit})
        content = json.dumps(error.body()).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(content)).encode()),
            (b"connection", b"close"),  # the rest of the body is never read: uvicorn closes after this
        ]
        await send({"type": "http.response.start", "status": error.status, "headers": headers})
        await send({"type": "http.response.body", "body": content})


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the app the body read already, then passes on what the server says next."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


# -- connections ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a request may take to arrive, and how many connections a client and everyone may hold."""

    per_client: int
    overall: int
    request_timeout: float = REQUEST_TIMEOUT
    requests_per_second: int = 0  # per client address (0: not limited)
    trusted_proxies: tuple[Network, ...] = ()  # a proxy carries many clients: not capped per address

    def exempt(self, host: str) -> bool:
        """Whether connections from ``host`` are not capped per address (a trusted proxy's)."""
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.trusted_proxies)


class RateBuckets:
    """A token bucket per client key: ``rate`` requests a second, ``burst`` at once; bounded memory."""

    MAX_KEYS = 10_000  # past it, the keys whose bucket is full again are forgotten (they would start full anyway)

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}  # key: (tokens, when counted)

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, now: float) -> float:
        """Take a request's token from ``key``'s bucket: 0.0 if there was one, else the seconds until there is."""
        held = self._buckets.get(key)
        if held is None:
            if len(self._buckets) >= self.MAX_KEYS:
                self._forget_full(now)
            tokens = self.burst
        else:
            tokens = min(self.burst, held[0] + (now - held[1]) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        full = [k for k, (tokens, at) in self._buckets.items() if tokens + (now - at) * self.rate >= self.burst]
        for key in full:
            del self._buckets[key]
        if len(self._buckets) >= self.MAX_KEYS:  # that many addresses all busy: start again rather than grow
            self._buckets.clear()


@dataclass
class _Counts:
    """Open connections and request rates per client address, shared by every connection of one server."""

    open: dict[str, int] = field(default_factory=dict)
    logged: dict[str, float] = field(default_factory=dict)
    rates: RateBuckets | None = None

    def should_log(self, key: str) -> bool:
        now = time.monotonic()
        if now - self.logged.get(key, -_LOG_EVERY) < _LOG_EVERY:
            return False
        if len(self.logged) > 10_000:
            self.logged.clear()
        self.logged[key] = now
        return True


class CoalescedWrites:
    """A connection's transport whose writes made in one turn of the event loop leave in one system call.

    uvicorn writes an answer's status line and headers, then its body, each with a ``send`` of its own: a
    verdict's answer cost two system calls where one does (issue 48: sent as one, the event loop's CPU a verdict
    fell by about 5 %). Here the writes are held until the loop's next turn (``call_soon``), then sent as one;
    ``close`` sends what is held first, ``abort`` drops it. Everything else is the wrapped transport's.
    """

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: list[bytes] = []
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._held:
            self._loop.call_soon(self._send)
        self._held.append(bytes(data))

    def writelines(self, lines: Sequence[bytes]) -> None:
        for data in lines:
            self.write(data)

    def _send(self) -> None:
        if self._held:
            data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
            self._held.clear()
            if not self._transport.is_closing():  # closed by the peer meanwhile: nobody to answer
                self._transport.write(data)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._held))

    def close(self) -> None:
        self._send()
        self._transport.close()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline per request and caps on open connections.

    Use :func:`guarded_protocol` to get the class for a server's :class:`ConnectionLimits`.
    """

    limits: ClassVar[ConnectionLimits]
    counts: ClassVar[_Counts]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._counted: str | None = None  # the key this connection is counted under, once accepted
        self._receiving = False  # a request has begun and has not arrived in full
        self._headers_done = False  # ... and its headers are in (self.cycle is its cycle)
        self._head = 0  # bytes of the request under way fed to the parser, less its body's (at most MAX_HEAD)
        self._refusal: WordjudgeError | None = None  # raised from a parser callback, answered by send_400_response
        self._rate_key: str | None = None  # the key this connection's requests are counted under
        self._dropping = False  # refused while an answer was on its way: the rest is not read

    # -- connections: counted per address, closed at once over a cap

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(cast(asyncio.Transport, CoalescedWrites(transport)))
        host = self.client[0] if self.client else None
        limits, counts = self.limits, self.counts
        if len(self.connections) > limits.overall:
            self._refuse("*", f"{len(self.connections) - 1} connections open, the most the open-file limit allows")
            return
        if host is not None and not limits.exempt(host):
            key = client_key(host)
            held = counts.open.get(key, 0)
            if held >= limits.per_client:
                self._refuse(key, f"{held} connections open from {key} (max_connections_per_client)")
                return
            counts.open[key] = held + 1
            self._counted = key
            if counts.rates is not None:
                self._rate_key = key
        self._arm()  # a connection that sends nothing is closed too

    def _refuse(self, key: str, reason: str) -> None:
        if self.counts.should_log(key):
            log.warning("closing new connections: %s", reason, extra={"client": key})
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            held = self.counts.open.get(self._counted, 1) - 1
            if held > 0:
                self.counts.open[self._counted] = held
            else:
                self.counts.open.pop(self._counted, None)
            self._counted = None
        super().connection_lost(exc)

    def _unsupported_upgrade_warning(self) -> None:
        # uvicorn would advise installing a WebSocket library: the server has no WebSocket routes
        # (cli.serve passes ws="none"), so an upgrade is served as the plain request it also is.
        log.debug("upgrade request served as plain HTTP: wordjudge has no WebSocket routes")

    # -- requests: the whole request within the deadline

    def data_received(self, data: bytes) -> None:
        # Bytes on an idle keep-alive connection (which cancel uvicorn's keep-alive timer) must
        # start the clock even when they begin no request (blank lines between requests).
        if self.cycle is None or self.cycle.response_complete:
            self._arm()
        # Every byte but the body's counts against MAX_HEAD: the line and headers, then a chunked body's size
        # lines (an extension or leading zeros may be endless) and its trailers (httptools holds a value whole,
        # appending each piece to what it holds, quadratic in its length). The data is fed at most what is left
        # of MAX_HEAD at a time, counted as fed, and on_body takes the body's bytes back out (BodyLimit counts
        # those): so a request is refused once it reaches MAX_HEAD, before httptools or uvicorn holds more. The
        # count starts again when a request ends: what the next one sent in that same piece is not counted, so
        # at most MAX_HEAD more of it is ever held.
        while data and not self._dropping and not self.transport.is_closing():
            size = MAX_HEAD - self._head
            piece, data = (data, b"") if len(data) <= size else (data[:size], data[size:])
            self._head += len(piece)
            super().data_received(piece)
            if self._head >= MAX_HEAD:
                in_body = self._receiving and self._headers_done
                self._refuse_request(
                    RequestHeadTooLarge(
                        "error.http.trailers_too_large" if in_body else "error.http.head_too_large", limit=MAX_HEAD
                    )
                )
            elif self._head < 0:  # the body of a request begun in this piece, whose start was not counted
                self._head = 0

    def on_message_begin(self) -> None:
        self._receiving, self._headers_done = True, False
        if self._rate_key is not None and self.counts.rates is not None:
            wait = self.counts.rates.take(self._rate_key, time.monotonic())
            if wait:
                if self.counts.should_log(self._rate_key):
                    log.warning(
                        "refusing requests from %s: over %d a second",
                        self._rate_key,
                        self.limits.requests_per_second,
                        extra={"client": self._rate_key},
                    )
                self._refusal = RateLimited("error.http.rate_limited", retry_after=wait)
                raise _Refused  # stops the parser: uvicorn's handler calls send_400_response, which answers it
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._headers_done = True
        # A chunked body's trailers come to on_header too, which appends to self.headers: uvicorn's list is the
        # scope's, read by the app once the body is in, so a trailer would pass for a header (an Authorization
        # trailer signed a request in). RFC 9110 section 6.5.1: trailers are kept apart or dropped; no route
        # reads one, so they go to a list of their own, dropped with the request (counted, so at most MAX_HEAD).
        self.headers = []

    def on_body(self, body: bytes) -> None:
        self._head -= len(body)  # counted by BodyLimit, not against MAX_HEAD
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._receiving = False
        self._head = 0
        self._disarm()

    def _arm(self) -> None:
        if self._deadline is None and not self.transport.is_closing():
            self._deadline = self.loop.call_later(self.limits.request_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._receiving and self._may_answer():
            if self._headers_done:  # the app waits for the body: it gets a disconnect, its answer is dropped
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self.transport.write(
                self._error_response(RequestTimeout("error.http.timeout", seconds=round(self.limits.request_timeout)))
            )
        log.debug("closing a connection whose request did not arrive in %.0f s", self.limits.request_timeout)
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        refusal, self._refusal = self._refusal, None
        if refusal is None:
            super().send_400_response(msg)
        else:
            self._refuse_request(refusal)

    def _refuse_request(self, error: WordjudgeError) -> None:
        """Answer the request under way with ``error`` (when no other answer is on its way) and close."""
        if self._may_answer():
            if self._receiving and self._headers_done:  # the app waits for the body: it gets a disconnect instead
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self.transport.write(self._error_response(error))
        elif self.cycle is not None:
            self.cycle.keep_alive = False  # the answer on its way is the connection's last
            self._dropping = True
            self.transport.pause_reading()
            return
        self._disarm()
        self.transport.close()

    def _may_answer(self) -> bool:
        """Whether a response may go out now: none to this request yet, and none other on its way."""
        if self.pipeline:
            return False
        if self._headers_done:
            return not self.cycle.response_started
        return self.cycle is None or self.cycle.response_complete

    def _error_response(self, error: WordjudgeError) -> bytes:
        """``error`` as a whole HTTP response, in the one error shape, closing the connection."""
        content = json.dumps(error.body()).encode()
        lines = [STATUS_LINE[error.status]]
        lines += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]
        lines += [name.lower().encode() + b": " + value.encode() + b"\r\n" for name, value in error.headers().items()]
        lines += [
            b"content-type: application/json\r\n",
            b"content-length: " + str(len(content)).encode() + b"\r\n",
            b"connection: close\r\n\r\n",
            content,
        ]
        return b"".join(lines)


class _Refused(Exception):
    """Raised in a parser callback to stop parsing a request refused there (its refusal is the protocol's)."""


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedHttpProtocol]:
    """The protocol class to give uvicorn (``http=``) for one server with these limits."""

    class Protocol(GuardedHttpProtocol):
        pass

    Protocol.limits = limits
    rate = limits.requests_per_second
    Protocol.counts = _Counts(rates=RateBuckets(rate, rate * BURST_SECONDS) if rate else None)
    return Protocol


# -- open files ----------------------------------------------------------------------------------


def raise_open_file_limit() -> int:
    """Raise the soft limit of open files to the hard one (where allowed); return the soft limit now.

    Under systemd, ``LimitNOFILE=`` in the unit sets both (and its system call filter may refuse
    the raise, which is then left alone).
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (OSError, ValueError) as exc:
            log.warning("could not raise the open-file limit from %d to %d: %s", soft, wanted, exc)
    return soft


def connection_limits(
    per_client: int, trusted_proxies: Sequence[Network] = (), requests_per_second: int = 0
) -> ConnectionLimits:
    """The limits for a server in this process: the open-file limit raised, less a reserve for files."""
    soft = raise_open_file_limit()
    overall = max(soft - FD_RESERVE, 64) if soft != resource.RLIM_INFINITY else 1_000_000
    return ConnectionLimits(
        per_client=per_client,
        overall=overall,
        trusted_proxies=tuple(trusted_proxies),
        requests_per_second=requests_per_second,
    )
