"""A hall of two servers over HTTPS with the hall's certificates (issue 44): each server proves itself to the other
over TLS that trusts the hall's CA alone, health names the transport on both, and a phone holding the standby's
address with a certificate of its own CA proves nothing to the active server: it is not even asked."""

from __future__ import annotations

import ssl
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from wordjudge.hall.peers import AGENT as PEER_AGENT

from .fake_peer import FakePeer, json_answer
from .hall_lab import Hall
from .helpers import LiveServer, serve_process, wait_for_health
from .tls_hall import hall_certs, other_ca_certs, second_machine_certs, trusting

pytestmark = pytest.mark.sqlite_only("starts PostgreSQL clusters of its own: runs in the suite's first pass")


class _Https(LiveServer):
    """A hall server over HTTPS: its folder's certificate, its public address and its peer's in https://."""

    def __init__(self, plain: LiveServer, peer: LiveServer, trust: ssl.SSLContext) -> None:
        super().__init__(plain.data_dir)
        self.port, self.base, self.trust = plain.port, f"https://127.0.0.1:{plain.port}", trust
        database = plain.extra[plain.extra.index("--database") + 1]
        self.extra = (
            *("--database", database, "--public-url", self.base),
            *("--peers", f"https://127.0.0.1:{peer.port}", "--https", "on", "--log-level", "warning"),
        )

    def start(self) -> None:
        self.process = serve_process(self.data_dir, "--port", str(self.port), *self.extra, prefix=self.prefix)
        wait_for_health(self.base, self.process, verify=self.trust)


def _peer_until(server: _Https, url: str, said: dict[str, Any], seconds: float = 30) -> dict[str, Any]:
    """The server's view of its peer ``url`` (its health's hall.peers) once it says what ``said`` holds."""
    deadline = time.monotonic() + seconds
    while True:
        body = httpx.get(f"{server.base}/api/health", verify=server.trust, timeout=30).json()
        peer: dict[str, Any] = next((p for p in (body.get("hall") or {}).get("peers") or [] if p.get("url") == url), {})
        if all(peer.get(key) == value for key, value in said.items()):
            return peer
        assert time.monotonic() < deadline, peer
        time.sleep(0.2)


def test_the_halls_servers_prove_themselves_to_each_other_over_https_and_a_phone_at_a_peers_address_is_not_asked(
    hall: Hall, tmp_path: Path
) -> None:
    # First over plain HTTP, as the fixture's hall is: a warning in the hall, not a demo.
    hall.a.start()
    plain = httpx.get(f"{hall.a.base}/api/health", timeout=30).json()
    hall.a.stop()
    assert (plain["transport"]["scheme"], plain["transport"]["demo"]) == ("http", False)
    assert any("this hall server serves plain HTTP" in w for w in plain["warnings"]), plain["warnings"]
    made = hall_certs(hall.a.data_dir)  # on hall-a; hall-b's signed there, the CA's key never on hall-b
    second_machine_certs(hall.a.data_dir, hall.b.data_dir, tmp_path / "usb")
    assert not (hall.b.data_dir / "tls" / "hall-ca.key").exists()
    trust = trusting(made.ca_pem)
    a, b = _Https(hall.a, hall.b, trust), _Https(hall.b, hall.a, trust)
    a.start()
    b.start()
    try:
        health_a = httpx.get(f"{a.base}/api/health", verify=trust, timeout=30).json()
        assert health_a["transport"]["certificate"] == "hall"
        assert health_a["transport"]["ca_fingerprint"] == made.fingerprint
        assert not [w for w in health_a["warnings"] if "plain HTTP" in w]
        standby = httpx.get(f"{b.base}/api/health", verify=trust, timeout=30).json()  # 503: the standby
        assert standby["state"] == "standby"
        assert standby["transport"]["certificate"] == "hall"
        # b's signed claim, asked over TLS trusting the hall's CA alone
        assert _peer_until(a, b.base, {"proven": True})["role"] == "standby"
        b.stop()
        # A phone takes hall-b's address, with a certificate of its own CA for it.
        phone = FakePeer(b.port, {"/": json_answer({"the phone": "answers"})})
        certs = other_ca_certs(tmp_path / "phone")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certs.cert, certs.key)
        with phone:
            phone._server.socket = context.wrap_socket(phone._server.socket, server_side=True)
            _peer_until(a, b.base, {"proven": False, "unproven": "untrusted"})
            assert phone.heard_from(PEER_AGENT) == []  # not even the ask: the handshake failed before it
            warnings = httpx.get(f"{a.base}/api/health", verify=trust, timeout=30).json()["warnings"]
            assert any("not one the hall's CA signed for that address" in w for w in warnings), warnings
    finally:
        for server in (a, b):
            if server.process is not None:
                server.stop()
