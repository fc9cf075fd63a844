"""This machine's wordjudge servers of a hall, found without being told their port.

``wordjudge standby promote`` runs as ``postgres`` in a fresh shell: it reads no ``wordjudge.env`` (root's alone)
and no data folder (the ``wordjudge`` user's, mode 0700), so it cannot know the port the hall's servers listen on.
It asked port 8000, and where the hall used another (the README suggests 8080), it printed one line and promoted
anyway, with the active server alive. What a fresh shell does have: the machine's listening sockets, which
``/proc/net/tcp`` and ``/proc/net/tcp6`` show to every user, and the hall's identity, which the database records
(every epoch names it). Each listening port is asked for its health, over HTTPS and plain HTTP; a wordjudge server
of this hall is one whose health names that identity.

The answers are this machine's own processes', asked on its own addresses (the traffic never leaves it), so a
certificate is not checked here: a phone on the network cannot answer for a port of this machine.
"""

from __future__ import annotations

import ipaddress
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from wordjudge.base.agent import LOCAL_SCAN, user_agent

PROC_NET = Path("/proc/net")
LISTEN = "0A"  # the TCP state /proc/net/tcp gives a listening socket
ASK_TIMEOUT_S = 1.0  # each port's answer: a wordjudge server answers its health in milliseconds
MAX_PORTS = 256  # a hall machine listens on a handful (ssh, PostgreSQL, wordjudge, etcd, Patroni)

_HEADERS = {"User-Agent": user_agent(LOCAL_SCAN)}


@dataclass(frozen=True)
class LocalServer:
    """A wordjudge server of the hall on this machine: where it answered, and its health."""

    url: str
    health: dict[str, Any]

    @property
    def role(self) -> str | None:
        """Its role in the hall (active, standby, fenced...), as its health says it."""
        hall = self.health.get("hall")
        return hall.get("role") if isinstance(hall, dict) else None

    def heard_active(self, active: str, within_s: float) -> bool | None:
        """Whether it heard ``active`` prove itself the hall's active server within ``within_s`` seconds (a signed
        claim, checked with the hall key: :mod:`wordjudge.hall.peers`); None if it has not asked its peers yet."""
        hall = self.health.get("hall")
        peers = hall.get("peers") if isinstance(hall, dict) else None
        if not isinstance(peers, list) or not peers:
            return None
        for peer in peers:
            if not isinstance(peer, dict) or peer.get("url") != active:
                continue
            age = peer.get("age_s")
            if not isinstance(age, int | float):
                return None
            return bool(peer.get("proven")) and peer.get("role") == "active" and age <= within_s
        return False


def _address(hex_address: str) -> str:
    """The text of an address as /proc/net/tcp{,6} writes it (hex, each 32-bit word in the host's byte order)."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def listening(proc_net: Path = PROC_NET) -> list[tuple[str, int]]:
    """The (host to ask, port) of each TCP socket listening on this machine: a wildcard address is asked on its
    loopback. Empty where /proc cannot be read."""
    found: set[tuple[str, int]] = set()
    for name, wildcard, loopback in (("tcp", "0.0.0.0", "127.0.0.1"), ("tcp6", "::", "::1")):
        try:
            lines = (proc_net / name).read_text("ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 4 or fields[3] != LISTEN:
                continue
            hex_address, _, hex_port = fields[1].partition(":")
            try:
                host, port = _address(hex_address), int(hex_port, 16)
            except ValueError:
                continue
            found.add((loopback if host == wildcard else host, port))
    return sorted(found)[:MAX_PORTS]


def _url(scheme: str, host: str, port: int) -> str:
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def _ask(scheme: str, host: str, port: int) -> LocalServer | None:
    """The wordjudge health at ``scheme://host:port``; None if what answers is not one."""
    url = _url(scheme, host, port)
    try:
        # Own machine, own addresses: nothing else can answer for this port (see the module's docstring).
        body = httpx.get(f"{url}/api/health", timeout=ASK_TIMEOUT_S, verify=False, headers=_HEADERS).json()
    except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return LocalServer(url, body) if isinstance(body, dict) and isinstance(body.get("server_id"), str) else None


def asked_again(servers: list[LocalServer]) -> list[LocalServer]:
    """The same servers' health now, each asked at its address (no scan: a second look costs one request each);
    one that no longer answers is left out."""
    again = []
    for server in servers:
        try:
            body = httpx.get(f"{server.url}/api/health", timeout=ASK_TIMEOUT_S, verify=False, headers=_HEADERS).json()
        except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(body, dict) and body.get("server_id") == server.health.get("server_id"):
            again.append(LocalServer(server.url, body))
    return again


def local_servers(server_id: str, proc_net: Path = PROC_NET, ports: list[int] | None = None) -> list[LocalServer]:
    """This machine's wordjudge servers whose health names the hall ``server_id`` (asked at once, each within
    :data:`ASK_TIMEOUT_S`); ``ports``: ask those on the loopback only, as the TD named them."""
    places = [("127.0.0.1", port) for port in ports] if ports else listening(proc_net)
    # HTTPS and plain HTTP asked at once: a port that takes a connection and never answers (not an HTTP server)
    # costs one timeout, not two, and the whole look about one.
    asks = [(scheme, host, port) for host, port in places for scheme in ("https", "http")]
    if not asks:
        return []
    with ThreadPoolExecutor(max_workers=min(32, len(asks))) as pool:
        answers = list(pool.map(lambda ask: _ask(*ask), asks))
    return [server for server in answers if server is not None and server.health.get("server_id") == server_id]
