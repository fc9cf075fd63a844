"""A hall's servers asking each other where they stand: signed claims, read with a size cap and a deadline.

Each server names itself (``--public-url``) and the others (``--peers``). It asks each peer's
``/api/hall/claim`` with a fresh nonce, every peer at once, and reads each answer within :data:`DEADLINE`
seconds and :data:`ANSWER_MAX_BYTES` bytes: a dead machine, one that answers slowly or at length, holds
nothing. An answer counts only if it is a :class:`Claim` signed with the hall key over that nonce
(:mod:`wordjudge.hall.proof`): anything else at a peer's address (a phone that took it, a laptop, a replay of
an earlier answer) is a :class:`PeerSays` with ``proven`` false, which decides nothing; the TD is told its
address and what was wrong with it, never its words. Nothing here imports the web framework.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import h11

from wordjudge.base.agent import PEER, user_agent
from wordjudge.base.clock import Offset, seconds_of
from wordjudge.base.errors import Message, WordjudgeError
from wordjudge.hall.certs import trust
from wordjudge.hall.proof import HallKey, make_key, read_key
from wordjudge.hall.roles import ACTIVE
from wordjudge.words.profile import Catalog

log = logging.getLogger(__name__)

CLAIM_PATH = "/api/hall/claim"
AGENT = user_agent(PEER)
DEADLINE = 1.0  # seconds a peer has to answer in full: a dead or slow machine must not hold the hall's look
ANSWER_MAX_BYTES = 64 * 1024  # a claim is a few hundred bytes; more is not one
PEER_NAMES_MAX = 64  # names a claim may list: more than any event serves
# What can be wrong with an answer at a peer's address, and how the TD is told it.
UNPROVEN = {
    "no_answer": "error.hall.unproven.no_answer",
    "slow": "error.hall.unproven.slow",
    "large": "error.hall.unproven.large",
    "not_a_claim": "error.hall.unproven.not_a_claim",
    "no_key": "error.hall.unproven.no_key",
    "not_signed": "error.hall.unproven.not_signed",
    "other_server": "error.hall.unproven.other_server",
    "untrusted": "error.hall.unproven.untrusted",
}


@dataclass(frozen=True)
class Unready:
    """The lexicons and profiles a standby's folder lacks (``lacks``), or holds in another edition than the
    active server serves (``differs``: another fingerprint): with them it could not take over the event as
    it is served."""

    lacks: tuple[str, ...] = ()
    differs: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, list[str]]:
        return {"lacks": list(self.lacks), "differs": list(self.differs)}

    @classmethod
    def from_dict(cls, data: Any) -> Unready | None:
        """What a claim says, if it is an :class:`Unready` that names something (names checked)."""
        if not isinstance(data, dict):
            return None
        lists = [data.get(key) for key in ("lacks", "differs")]
        if not all(isinstance(names, list) and len(names) <= PEER_NAMES_MAX for names in lists):
            return None
        lacks, differs = (tuple(name for name in names or () if _a_name(name)) for names in lists)
        return cls(lacks, differs) if lacks or differs else None


@dataclass(frozen=True)
class Claim:
    """What a hall server says of itself, signed (:func:`signed`): its address, role and epoch, the active
    server, its time, the lexicons it serves (active) or could not serve (standby), over the asker's nonce."""

    url: str
    role: str
    epoch: int | None
    active_url: str | None
    time: str
    nonce: str
    lexicons: Mapping[str, str] | None = None
    unready: Unready | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "role": self.role,
            "epoch": self.epoch,
            "active_url": self.active_url,
            "time": self.time,
            "nonce": self.nonce,
            "lexicons": dict(self.lexicons) if self.lexicons else None,
            "unready": self.unready.as_dict() if self.unready else None,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Claim | None:
        """The claim ``data`` is, its fields checked (None: it is not one)."""
        if not isinstance(data, dict):
            return None
        url, role, when, nonce = (data.get(k) for k in ("url", "role", "time", "nonce"))
        epoch, active = data.get("epoch"), data.get("active_url")
        if not (isinstance(url, str) and isinstance(role, str) and isinstance(when, str) and isinstance(nonce, str)):
            return None
        if isinstance(epoch, bool) or not isinstance(epoch, int | None) or not isinstance(active, str | None):
            return None
        lexicons, unready = _lexicons(data.get("lexicons")), Unready.from_dict(data.get("unready"))
        return cls(url, role, epoch, active, when, nonce, lexicons, unready)


def signed(key: HallKey | None, claim: Claim) -> dict[str, Any]:
    """The answer to a peer: the claim and its MAC with the hall key (None without a key: it proves nothing)."""
    body = claim.as_dict()
    return {"claim": body, "mac": key.sign(body) if key is not None else None}


@dataclass(frozen=True)
class PeerSays:
    """What a peer proved of itself (``proven``: its claim verified), or why not (``unproven``: one of
    :data:`UNPROVEN`). An unproven answer says nothing else: role, epoch and the rest are None."""

    url: str
    role: str | None = None
    epoch: int | None = None
    active_url: str | None = None
    unproven: str | None = None
    lexicons: Mapping[str, str] | None = None
    unready: Unready | None = None
    clock: Offset | None = None  # its clock against this server's, read across the round trip

    @property
    def proven(self) -> bool:
        return self.unproven is None

    @property
    def answered(self) -> bool:
        """Whether something answered at its address (proven or not)."""
        return self.unproven not in ("no_answer",)

    def warning(self) -> Message:
        """The TD's warning of an unproven answer: the address, and what was wrong with it (never its words)."""
        why = Message(UNPROVEN[self.unproven or "not_a_claim"])
        return Message("error.hall.peer_unproven", url=self.url, why=why)


def ask_peers(
    peers: Sequence[str],
    key: HallKey | None,
    *,
    deadline: float = DEADLINE,
    max_bytes: int = ANSWER_MAX_BYTES,
    trust: ssl.SSLContext | None = None,
) -> list[PeerSays]:
    """Ask every peer for its signed claim, all at once; each answer read in full within ``deadline`` seconds
    and ``max_bytes`` bytes, and believed only if signed with ``key`` over this ask's nonce. An https peer must
    show a certificate ``trust`` verifies for its address (the hall's CA: :func:`wordjudge.hall.certs.trust`;
    None: the system's CAs). Never raises: a peer that does not prove itself says why. Returns one
    :class:`PeerSays` a peer, in ``peers``' order."""
    said: dict[str, PeerSays] = {}

    def ask(url: str) -> None:
        said[url] = _ask(url, key, deadline, max_bytes, trust)

    threads = [threading.Thread(target=ask, args=(url,), daemon=True) for url in peers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(deadline + 0.5)  # each read stops itself at the deadline; this is a guard
    return [said.get(url) or PeerSays(url, unproven="slow") for url in peers]


def _ask(url: str, key: HallKey | None, deadline: float, max_bytes: int, trust: ssl.SSLContext | None) -> PeerSays:
    nonce = secrets.token_hex(16)
    sent = time.time()
    try:
        body = _fetch(f"{url}{CLAIM_PATH}?nonce={nonce}", deadline, max_bytes, trust)
    except _Unproven as unproven:
        return PeerSays(url, unproven=unproven.why)
    return _weighed(url, body, key, nonce, (sent, time.time()))


class _Unproven(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _fetch(url: str, deadline: float, max_bytes: int, trust: ssl.SSLContext | None = None) -> bytes:
    """The body of ``GET url``, read in full within ``deadline`` seconds in all (a per-read timeout would let an
    answer dripped a byte at a time hold the caller for ever) and ``max_bytes`` bytes; over https, from a server
    whose certificate ``trust`` verifies for the URL's host (None: the system's CAs). Raises :class:`_Unproven`
    (``no_answer``, ``slow``, ``large``, ``not_a_claim``, ``untrusted``)."""
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    host, port = parts.hostname or "", parts.port or (443 if tls else 80)
    end = time.monotonic() + deadline

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise _Unproven("slow")
        return remaining

    try:
        raw = socket.create_connection((host, port), timeout=left())
    except OSError:  # refused, or no machine there to take the connection in time (one switched off): no answer
        raise _Unproven("no_answer") from None
    held = [raw]
    try:
        # The handshake within what is left of the deadline (CPython's SSL calls keep one deadline a call); the
        # certificate checked against the hall's CA alone: a phone at the address gets nothing, not even the ask.
        raw.settimeout(left())
        sock = (trust or _SYSTEM_TRUST).wrap_socket(raw, server_hostname=host) if tls else raw
        held.append(sock)  # the TLS socket takes the connection over from raw: it is the one to close
        connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=max_bytes)
        request = h11.Request(
            method="GET",
            target=f"{parts.path}?{parts.query}",
            headers=[
                ("Host", parts.netloc),
                ("Accept", "application/json"),
                ("User-Agent", AGENT),
                ("Connection", "close"),
            ],
        )
        sock.sendall((connection.send(request) or b"") + (connection.send(h11.EndOfMessage()) or b""))
        return _body(sock, connection, left, max_bytes)
    except TimeoutError:
        raise _Unproven("slow") from None
    except ssl.SSLCertVerificationError:
        raise _Unproven("untrusted") from None
    except (OSError, h11.ProtocolError):
        raise _Unproven("not_a_claim") from None
    finally:
        for each in held:
            each.close()


def _body(sock: socket.socket, connection: h11.Connection, left: Any, max_bytes: int) -> bytes:
    body, status = bytearray(), 0
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            sock.settimeout(left())
            connection.receive_data(sock.recv(65536))
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > max_bytes:
                raise _Unproven("large")
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    if status != 200:
        raise _Unproven("not_a_claim")
    return bytes(body)


_SYSTEM_TRUST = ssl.create_default_context()


def _weighed(url: str, body: bytes, key: HallKey | None, nonce: str, trip: tuple[float, float]) -> PeerSays:
    """What an answer proves: a claim of ``url``, over ``nonce``, signed with ``key`` (asked and answered at
    ``trip``, this clock's times: the claim's time is read half-way)."""
    try:
        answer = json.loads(body)
    except ValueError:
        return PeerSays(url, unproven="not_a_claim")
    data = answer.get("claim") if isinstance(answer, dict) else None
    claim = Claim.from_dict(data)
    if claim is None or not isinstance(data, dict) or not isinstance(answer, dict):
        return PeerSays(url, unproven="not_a_claim")
    if key is None:
        return PeerSays(url, unproven="no_key")
    if claim.nonce != nonce or not key.signs(data, answer.get("mac")):
        return PeerSays(url, unproven="not_signed")  # another key, or a replay of an answer to another nonce
    if claim.url != url:
        return PeerSays(url, unproven="other_server")  # the hall's other server's claim, relayed from here
    reading = seconds_of(claim.time)
    clock = Offset.read_across(reading, *trip) if reading is not None else None
    return PeerSays(url, claim.role, claim.epoch, claim.active_url, None, claim.lexicons, claim.unready, clock)


def hall_key(data_dir: Path, *, make: bool = False) -> HallKey | None:
    """The hall key in ``data_dir`` (None: none there), made there if ``make``. Raises
    :class:`~wordjudge.base.errors.InvalidInput` for a key file that is not a key, :class:`OSError` if it cannot be
    made."""
    return make_key(data_dir) if make else read_key(data_dir)


def own_key(data_dir: Path, *, in_hall: bool) -> HallKey | None:
    """The key a server signs with, and makes its devices' and consoles' proof keys with: a hall's is read from its
    folder (copied there at set-up, or made by the hall's first takeover); a server alone makes its own there at
    its first start. None if there is none (a hall server's folder lacks it: health says so), or a server alone's
    folder cannot hold one (it then proves itself to nobody, said in its log). Raises
    :class:`~wordjudge.base.errors.InvalidInput` for a key file that is not a key or that others may read."""
    if in_hall:
        return read_key(data_dir)
    try:
        return make_key(data_dir)
    except OSError as exc:
        log.warning("%s cannot hold a hall key (%s): this server proves itself to no device or console", data_dir, exc)
        return None


def _lexicons(items: Any) -> dict[str, str] | None:
    """A claim's served lexicons, name: fingerprint (names and count checked); None if it lists none."""
    if not isinstance(items, dict) or not items or len(items) > PEER_NAMES_MAX:
        return None
    served = {name: print_ for name, print_ in items.items() if _a_name(name) and isinstance(print_, str)}
    return served or None


def _a_name(name: Any) -> bool:
    return isinstance(name, str) and 0 < len(name) <= 64 and name.isprintable()


def unready_for(data_dir: Path, served: Mapping[str, str]) -> Unready | None:
    """What ``data_dir`` could not serve as ``served`` is served (the active server's lexicons and profiles,
    name: fingerprint): the names it lacks or cannot open, and those whose fingerprint differs (another
    edition, or other amendments). None if it could serve them all."""
    catalog = Catalog(data_dir)
    lacks, differs = [], []
    for name, fingerprint in sorted(served.items()):
        try:
            profile = catalog.open(name)
        except (WordjudgeError, OSError) as exc:
            log.debug("cannot open %s: %s", name, exc)  # said once a change, by the standby (serving.py)
            lacks.append(name)
            continue
        if profile.fingerprint != fingerprint:
            differs.append(name)
    return Unready(tuple(lacks), tuple(differs)) if lacks or differs else None


def unready_warning(url: str, unready: Unready) -> Message:
    """The TD's warning that the standby ``url`` could not take the event over as it is served."""
    lacks, differs = ", ".join(unready.lacks), ", ".join(unready.differs)
    if lacks and differs:
        reason = Message("error.hall.lexicons_both", lacks=lacks, differs=differs)
    elif lacks:
        reason = Message("error.hall.lexicons_lacks", names=lacks)
    else:
        reason = Message("error.hall.lexicons_differ", names=differs)
    return Message("error.hall.standby_unready", url=url, reason=reason)


def parse_peers(text: str) -> tuple[str, ...]:
    """The peers' base URLs from a comma-separated setting, each without a trailing slash. Raises
    :class:`ValueError` naming one that is not a server's address (see :func:`check_server_url`)."""
    peers = [check_server_url(item).rstrip("/") for item in filter(None, (part.strip() for part in text.split(",")))]
    return tuple(dict.fromkeys(peers))


def check_server_url(text: str) -> str:
    """Return ``text`` if it is a server's address: http(s), a host, a port from 1 to 65535 if any, no path
    but "/". Raises :class:`ValueError` naming it, with an example, if not."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        port = -1
    if (
        port == 0
        or port == -1
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path.strip("/")
        or parts.query
        or parts.fragment
        or any(c.isspace() for c in text)
    ):
        raise ValueError(f"{text!r} is not a server's address such as http://192.168.1.11:8000")
    return text


def rival(epoch: int | None, own_url: str, said: Iterable[PeerSays]) -> PeerSays | None:
    """A peer that proves it is active at ``epoch``, this server's own (None: it has none): in one replicated
    database an epoch names one server, so the two machines' databases are not one (each made on its own
    machine, say). Neither may adjudicate: their verdicts would make two logs."""
    if epoch is None:
        return None
    return next((p for p in said if p.proven and p.role == ACTIVE and p.epoch == epoch and p.url != own_url), None)


def superseded_by(epoch: int | None, said: Iterable[PeerSays]) -> PeerSays | None:
    """The peer that proves it is active at a later epoch than ``epoch`` (this server's), if one does: this
    server must then never adjudicate again."""
    later = [
        peer
        for peer in said
        if peer.proven and peer.role == ACTIVE and peer.epoch is not None and (epoch is None or peer.epoch > epoch)
    ]
    return max(later, key=lambda peer: peer.epoch or 0, default=None)


UNFENCE_AFTER_S = 10.0  # seconds without a proven claim of a later epoch after which a fenced server comes back


class Fence:
    """When a fenced server last saw a peer prove it active at a later epoch. A phone holding a copied hall key can
    fence the active server while no synchronous standby follows it; once it leaves (or is unplugged), nothing
    proves a later epoch any more, and after :data:`UNFENCE_AFTER_S` seconds the server comes back by itself
    (:meth:`lifted`), as a restart by the TD would make it. A real takeover's server goes on proving itself every
    second, and keeps it fenced; if that server dies too, the fenced one's first commit still waits for its
    synchronous standby (the hall's steps ask for one), so that it acknowledges nothing until a standby that
    follows it proves nobody else took the hall over. Thread-safe enough: one look at a time writes it."""

    def __init__(self) -> None:
        self._seen = time.monotonic()
        self.by: PeerSays | None = None  # the peer that last proved a later epoch

    def seen(self, by: PeerSays | None = None) -> None:
        """A peer (``by``) proved a later epoch now."""
        self._seen = time.monotonic()
        self.by = by or self.by

    def came_back(self) -> Message:
        """The TD's alert once the server serves again: who fenced it, and what to do if that server really took
        over (it is then unreachable: its death, or a partition)."""
        peer, epoch = (self.by.url, self.by.epoch) if self.by else ("?", "?")
        return Message("error.hall.unfenced", peer=peer, epoch=epoch, seconds=f"{UNFENCE_AFTER_S:g}")

    def lifted(self, epoch: int | None, said: Iterable[PeerSays]) -> bool:
        """Whether a fenced server whose database's latest epoch is its own ``epoch`` (None: its database names
        another server, or none: never) may come back, by what its peers last ``said``: no proven claim of a later
        epoch for :data:`UNFENCE_AFTER_S` seconds."""
        if epoch is None:
            return False
        ahead = superseded_by(epoch, said)
        if ahead is not None:
            self.seen(ahead)
            return False
        if time.monotonic() - self._seen < UNFENCE_AFTER_S:
            return False
        log.warning("no peer proved a later epoch for %g s: this server serves again as the hall's", UNFENCE_AFTER_S)
        return True


class PeerWatch:
    """The peers as last asked. :meth:`refresh` asks them in a thread of its own, so that the hall's look (which
    notes a lost standby, a demotion, and puts event changes on the hall's record) never waits on a peer; each
    answer is bounded (:func:`ask_peers`). Thread-safe to read."""

    def __init__(self, peers: Sequence[str], key: HallKey | None, trust: ssl.SSLContext | None = None) -> None:
        self.peers, self.key, self.trust = tuple(peers), key, trust
        self._said: list[PeerSays] = []
        self._at = 0.0  # when they were last asked (time.monotonic)
        self._unproven_since: dict[str, float] = {}  # each peer that proves nothing: since when (time.monotonic)
        self._asking: threading.Thread | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, peers: Sequence[str], key: HallKey | None, data_dir: Path) -> PeerWatch:
        """The watch of a server whose data folder is ``data_dir``: an https peer must show a certificate of the
        hall's CA there (:func:`wordjudge.hall.certs.trust`; the folder holding none, of the system's CAs). Raises
        :class:`~wordjudge.base.errors.InvalidInput` for a CA file that is not a certificate."""
        return cls(peers, key, trust(data_dir) if peers else None)

    def ask(self) -> list[PeerSays]:
        """Ask every peer now and wait for their answers (at most :data:`DEADLINE` seconds)."""
        said = ask_peers(self.peers, self.key, trust=self.trust)
        now = time.monotonic()
        with self._lock:
            self._said, self._at = said, now
            for peer in said:
                if peer.proven:
                    self._unproven_since.pop(peer.url, None)
                else:
                    self._unproven_since.setdefault(peer.url, now)
        return said

    def unproven_for(self, seconds: float) -> list[PeerSays]:
        """The peers that have proved nothing (no answer, or an unproven one) at every ask for ``seconds`` or
        more: one slow answer is not a machine without a server."""
        now = time.monotonic()
        with self._lock:
            since = dict(self._unproven_since)
        return [peer for peer in self.said if not peer.proven and now - since.get(peer.url, now) >= seconds]

    def refresh(self) -> None:
        """Ask the peers again in the background, unless an ask is still under way."""
        with self._lock:
            if self._asking is not None and self._asking.is_alive():
                return
            self._asking = threading.Thread(target=self.ask, name="hall peers", daemon=True)
            self._asking.start()

    @property
    def said(self) -> list[PeerSays]:
        """The last answers (empty before the first ask)."""
        with self._lock:
            return list(self._said)

    @property
    def age(self) -> float:
        """Seconds since the peers were last asked (infinite before the first ask)."""
        with self._lock:
            return time.monotonic() - self._at if self._said else float("inf")

    def view(self) -> list[dict[str, Any]]:
        """What health shows of each peer: proven or not (and why not), its role and epoch, how long ago."""
        age = round(self.age, 1) if self._said else None
        return [
            {"url": p.url, "proven": p.proven, "unproven": p.unproven, "role": p.role, "epoch": p.epoch, "age_s": age}
            for p in self.said
        ]

    def warnings(self) -> list[Message]:
        """The TD's warnings of answers that do not prove they are the hall's (a peer that does not answer at
        all is not one: health says elsewhere that no standby follows)."""
        return [peer.warning() for peer in self.said if not peer.proven and peer.answered]
