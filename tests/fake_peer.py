"""Something that is not a hall server answering at a hall server's address: a phone that took the standby's IP
while that machine was off, or one that ARP-spoofs it. It answers whatever a test tells it to, and notes every
request it got (what a device or a server would have given away to it)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Heard:
    """A request the fake got: its method, path (with its query), headers and body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Answer = Callable[["_Handler"], None]  # writes a whole response


@dataclass
class FakePeer:
    """An HTTP server on ``port`` (127.0.0.1) answering each path prefix with what ``answers`` says (else 404)."""

    port: int
    answers: dict[str, Answer] = field(default_factory=dict)
    heard: list[Heard] = field(default_factory=list)

    def __post_init__(self) -> None:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakePeer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def heard_from(self, agent: str) -> list[Heard]:
        """What the fake heard from clients whose User-Agent begins with ``agent``. A test asks this of the party
        it tests: on a shared machine anything may knock at a listening port (another check's ``standby
        promote`` asks every port of the machine for its health)."""
        return [heard for heard in self.heard if _agent(heard).startswith(agent)]


def _agent(heard: Heard) -> str:
    return next((value for name, value in heard.headers.items() if name.lower() == "user-agent"), "")


class _Handler(BaseHTTPRequestHandler):
    owner: FakePeer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.owner.heard.append(Heard(self.command, self.path, dict(self.headers.items()), body))
        for prefix, answer in self.owner.answers.items():
            if self.path.startswith(prefix):
                answer(self)
                return
        json_answer({"detail": "Not Found"}, 404)(self)

    do_GET = do_POST = do_OPTIONS = _handle


def json_answer(body: Any, status: int = 200) -> Answer:
    """An answer of ``body`` as JSON, with CORS open (a page elsewhere may read it, as it may a real server's)."""

    def answer(handler: _Handler) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("Access-Control-Allow-Origin", "*")
        handler.send_header("Access-Control-Allow-Headers", "*")
        handler.end_headers()
        handler.wfile.write(data)

    return answer


def huge_answer(megabytes: int) -> Answer:
    """A JSON-looking answer of ``megabytes`` MB, sent as fast as it is read."""

    def answer(handler: _Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(megabytes * 2**20 + 2))
        handler.end_headers()
        chunk = b" " * 2**20
        try:
            handler.wfile.write(b"{")
            for _ in range(megabytes):
                handler.wfile.write(chunk)
            handler.wfile.write(b"}")
        except OSError:
            pass  # the asker gave up: as it should

    return answer


def dripped_answer(every: float = 0.5, seconds: float = 60.0) -> Answer:
    """An answer dripped one byte every ``every`` seconds, for up to ``seconds``: the status line first."""

    def answer(handler: _Handler) -> None:
        text = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"claim": ' + b" " * 10_000
        deadline = time.monotonic() + seconds
        try:
            for byte in text:
                if time.monotonic() > deadline:
                    break
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(every)
        except OSError:
            pass
        handler.close_connection = True

    return answer
