"""Issue 36, items 2 and 5: neighbours on one IPv6 /64 share every per-address limit, and sign-ins do not tell
which TD names exist, by their time or by their refusals. docs/threat-model.md lists these with their controls.

The live tests put ``wordjudge serve --host ::`` in a network namespace and reach it from the test's own
namespace through a veth pair that holds many addresses of one /64 (a host on a LAN takes any address of its
/64 at will) and one of another /64 (the TD's laptop). Making namespaces needs root; without it they skip.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
import pytest

from wordjudge.access.access_store import AccessStore
from wordjudge.access.limits import ENROL_FAILURES_PER_CLIENT, LOGIN_FAILURES, LOGIN_PACE_MAX_WAIT
from wordjudge.base.errors import RateLimited, Unauthorized
from wordjudge.model.auth import Role
from wordjudge.storage.dialect import StateLocation

from .helpers import (
    CHEAP_HASHER,
    PASSWORD,
    LiveServer,
    StartServer,
    assert_error_shape,
    free_port,
    location_of,
    write_event,
)

NAMES_HELD = 10_000  # the most names whose wrong passwords are counted at once
ATTACKERS = 12  # addresses of the one /64 the attacking host uses (the review used 12, then 61)


class Clock:
    def __init__(self) -> None:
        self.now = 1_790_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[AccessStore]:
    clock = Clock()
    opened = AccessStore(StateLocation(tmp_path), clock=clock, monotonic=clock, hasher=CHEAP_HASHER).open()
    yield opened
    opened.close()


def _neighbour(n: int) -> str:
    return f"2001:db8:1:2::{n:x}"


# -- 2. one /64 is one client, everywhere ------------------------------------------------------------------


def test_sign_ins_from_one_64_are_one_client_and_the_td_signs_in_from_another(store: AccessStore) -> None:
    store.tds.add("alice", PASSWORD, by="test")
    statuses = []
    for n in range(ATTACKERS):
        try:
            store.tds.login("alice", f"guess number {n}", client=_neighbour(n + 1))
        except Unauthorized:
            statuses.append(401)
        except RateLimited:
            statuses.append(429)
    print(
        f"\nsign-ins from {ATTACKERS} addresses of one /64: {statuses.count(401)} checked, {statuses.count(429)} refused"
    )
    assert statuses == [401] * LOGIN_FAILURES + [429] * (ATTACKERS - LOGIN_FAILURES)
    with pytest.raises(RateLimited):  # the kiosk's TD check from the same /64 is the same client
        store.tds.check("alice", PASSWORD, client=_neighbour(0xBEEF))
    assert store.tds.login("alice", PASSWORD, client="2001:db8:1:3::1").principal.actor == "alice"
    kinds = {(a.kind, a.actor) for a in store.alerts.latest()}
    assert ("login_throttled", "2001:db8:1:2::/64") in kinds  # one alert for the /64, not one per address


def test_an_ipv4_mapped_address_is_its_ipv4_address(store: AccessStore) -> None:
    store.tds.add("alice", PASSWORD, by="test")
    for n in range(LOGIN_FAILURES):
        client = "10.0.0.66" if n % 2 else "::ffff:10.0.0.66"
        with pytest.raises(Unauthorized):
            store.tds.login("alice", f"guess number {n}", client=client)
    with pytest.raises(RateLimited):
        store.tds.login("alice", PASSWORD, client="10.0.0.66")
    with pytest.raises(RateLimited):
        store.tds.login("alice", PASSWORD, client="::ffff:10.0.0.66")


def test_wrong_pairing_codes_from_one_64_are_one_client(store: AccessStore) -> None:
    store.pairing.create_code(Role.KIOSK, by="test")
    statuses = []
    for n in range(ATTACKERS):
        try:
            store.pairing.enrol(f"0000-0{n:04d}", client=_neighbour(n + 1))
        except Unauthorized:
            statuses.append(401)
        except RateLimited:
            statuses.append(429)
    print(
        f"\npairing codes from {ATTACKERS} addresses of one /64: {statuses.count(401)} tried, {statuses.count(429)} refused"
    )
    assert statuses.count(401) == ENROL_FAILURES_PER_CLIENT
    assert statuses.count(429) == ATTACKERS - ENROL_FAILURES_PER_CLIENT


@dataclass(frozen=True)
class Link:
    """A namespace holding the server, reached over a veth pair whose end here holds many addresses."""

    namespace: str
    server: str  # the server's address
    attackers: list[str]  # addresses of one /64, here
    td: str  # an address of another /64, here

    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.namespace]


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr.strip()}"


@pytest.fixture
def link() -> Iterator[Link]:
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed: the IPv6 neighbour tests make a network namespace with it")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root: the IPv6 neighbour tests run as root (as CI does)")
    tag = uuid.uuid4().hex[:6]
    namespace, here, there = f"wj6{tag}", f"wj6{tag}h", f"wj6{tag}s"
    site = f"fd{tag[:2]}:{tag[2:6]}:36"  # a unique-local /48 of this test's own
    _ip("netns", "add", namespace)
    try:
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", namespace)
        _ip("-n", namespace, "link", "set", "lo", "up")
        server = f"{site}:ff::1"
        _ip("-n", namespace, "addr", "add", f"{server}/48", "dev", there, "nodad")
        _ip("-n", namespace, "link", "set", there, "up")
        attackers = [f"{site}:1::{n:x}" for n in range(1, 61 + 1)]  # the review's 61 addresses of one /64
        td = f"{site}:2::1"
        for address in [*attackers, td]:
            _ip("addr", "add", f"{address}/48", "dev", here, "nodad")
        _ip("link", "set", here, "up")
        yield Link(namespace, server, attackers, td)
    finally:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)  # takes the veth pair


def _from(address: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=30)


@pytest.mark.live
@pytest.mark.timeout(180)
@pytest.mark.sqlite_only(
    "the server runs in a network namespace, where the test's PostgreSQL on loopback is not reachable"
)
def test_a_host_with_many_addresses_of_one_64_is_one_client_to_every_limit(link: Link, data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    store = AccessStore(location_of(data_dir), hasher=CHEAP_HASHER).open()
    try:
        store.tds.add("alice", PASSWORD, by="test")
        store.pairing.create_code(Role.KIOSK, by="test")  # an open code: the guesses have something to hit
    finally:
        store.close()
    server = LiveServer(
        data_dir, "--host", "::", "--max-connections-per-client", "8", "--mdns-name", "", "--log-level", "warning"
    )  # no mDNS: the namespace has no multicast route
    server.port = free_port()
    server.prefix = link.prefix()
    server.base = f"http://[{link.server}]:{server.port}"
    server.start()
    base = server.base
    try:
        # Sign-ins (and the kiosk's TD check): one wrong password from each of 12 addresses of one /64.
        signs = []
        for n, address in enumerate(link.attackers[:ATTACKERS]):
            route = "/api/td-check" if n % 2 else "/api/session"
            with _from(address) as attacker:
                signs.append(
                    attacker.post(f"{base}{route}", json={"name": "alice", "password": f"guess {n}"}).status_code
                )
        # Pairing codes: one wrong code from each of 12 other addresses of the /64.
        codes = []
        for n, address in enumerate(link.attackers[ATTACKERS : 2 * ATTACKERS]):
            with _from(address) as attacker:
                codes.append(attacker.post(f"{base}/api/enrol", json={"code": f"0000-0{n:04d}"}).status_code)
        # The TD, from another /64, still signs in; the right password from the attacking /64 is refused with
        # the rest of its guesses: one client, one limit.
        with _from(link.td) as td:
            signed_in = td.post(f"{base}/api/session", json={"name": "alice", "password": PASSWORD})
        with _from(link.attackers[-1]) as neighbour:
            from_the_64 = neighbour.post(f"{base}/api/session", json={"name": "alice", "password": PASSWORD})
        print(
            f"\n{ATTACKERS} addresses of one /64: sign-ins {signs.count(401)} checked, {signs.count(429)} refused;"
            f" pairing codes {codes.count(401)} tried, {codes.count(429)} refused;"
            f" the TD from another /64: {signed_in.status_code}; the right password from the /64: {from_the_64.status_code}"
        )
        # Connections (capped at 8 here): held open from 9 addresses of the /64; another /64 still connects.
        held: list[httpx.Client] = []
        opened = []
        try:
            for address in link.attackers[2 * ATTACKERS : 2 * ATTACKERS + 9]:
                client = _from(address)
                held.append(client)
                try:
                    opened.append(client.get(f"{base}/api/health").status_code)
                except httpx.TransportError:
                    opened.append(0)  # closed at once: over the cap
            with _from(link.td) as td:
                elsewhere = td.get(f"{base}/api/health").status_code
        finally:
            for client in held:
                client.close()
        print(
            f"9 connections from the /64: {opened.count(200)} answered, {opened.count(0)} closed; another /64: {elsewhere}"
        )
        assert signs == [401] * LOGIN_FAILURES + [429] * (ATTACKERS - LOGIN_FAILURES)
        assert codes.count(401) == ENROL_FAILURES_PER_CLIENT
        assert codes.count(429) == ATTACKERS - ENROL_FAILURES_PER_CLIENT
        assert signed_in.status_code == 201
        assert_error_shape(from_the_64, 429, "rate_limited")
        assert opened == [200] * 8 + [0]
        assert elsewhere == 200
    finally:
        output = server.stop()
    assert "Traceback" not in output, output


# -- 5. sign-ins do not tell which names exist -----------------------------------------------------------------


def test_wrong_passwords_for_unknown_names_are_counted_in_bounded_memory(store: AccessStore) -> None:
    limits = store.limits
    for n in range(3 * NAMES_HELD):  # within one window: none of them is idle yet
        limits.wrong_password(f"nobody number {n}")
    held = limits._login_by_name._failures
    print(f"\n{3 * NAMES_HELD} unknown names with a wrong password: {len(held)} held")
    assert len(held) <= NAMES_HELD
    assert not any("nobody" in str(key) for key in held)  # names are held hashed, never as typed


def _full_cost_td(data_dir: Path, name: str) -> None:
    """A TD account hashed as ``wordjudge td add`` hashes it (full cost: the dummy hash of an unknown name is)."""
    store = AccessStore(location_of(data_dir)).open()
    try:
        store.tds.add(name, PASSWORD, by="test")
    finally:
        store.close()


def _sign_in(base: str, address: str, name: str) -> tuple[int, float]:
    with _from(address) as client:
        started = time.monotonic()
        status = client.post(f"{base}/api/session", json={"name": name, "password": "wrong password"}).status_code
        return status, time.monotonic() - started


TRIES = 12  # sequential tries per name, after 5 wrong passwords for each


@pytest.mark.live
@pytest.mark.timeout(120)
def test_sign_in_timing_does_not_tell_a_td_name_from_an_unknown_one(data_dir: Path, live_server: StartServer) -> None:
    _full_cost_td(data_dir, "alice")
    server = live_server(data_dir)
    addresses = (f"127.0.{block}.{host}" for block in range(10, 40) for host in range(1, 250))
    for name in ("alice", "nobody-here"):  # 5 wrong passwords for each, as a guesser would make
        for _ in range(LOGIN_FAILURES):
            assert _sign_in(server.base, next(addresses), name)[0] == 401
    times: dict[str, list[float]] = {}
    for name in ("alice", "nobody-here"):
        tries = [_sign_in(server.base, next(addresses), name) for _ in range(TRIES)]
        assert {status for status, _ in tries} == {401}
        times[name] = [seconds for _, seconds in tries]
    known, unknown = statistics.median(times["alice"]), statistics.median(times["nobody-here"])
    print(
        f"\n{TRIES} sequential wrong sign-ins after 5: a TD name's median {known * 1000:.0f} ms"
        f" ({min(times['alice']) * 1000:.0f}-{max(times['alice']) * 1000:.0f}),"
        f" an unknown name's {unknown * 1000:.0f} ms"
        f" ({min(times['nobody-here']) * 1000:.0f}-{max(times['nobody-here']) * 1000:.0f})"
    )
    assert abs(known - unknown) <= 0.30 * max(known, unknown)


BURST = 16  # concurrent wrong sign-ins per name, each from its own address


@pytest.mark.live
@pytest.mark.timeout(120)
def test_sign_in_refusals_do_not_tell_a_td_name_from_an_unknown_one(data_dir: Path, live_server: StartServer) -> None:
    _full_cost_td(data_dir, "alice")
    server = live_server(data_dir)
    addresses = iter([f"127.0.{block}.{host}" for block in range(40, 60) for host in range(1, 250)])
    for name in ("alice", "nobody-here"):
        for _ in range(LOGIN_FAILURES):
            assert _sign_in(server.base, next(addresses), name)[0] == 401
    jobs = [(_from(next(addresses)), name) for _ in range(BURST) for name in ("alice", "nobody-here")]
    for client, _ in jobs:  # each connection opened first, so that the sign-ins leave together
        assert client.get(f"{server.base}/api/health").status_code == 200
    start = threading.Barrier(len(jobs))

    def sign_in(client: httpx.Client, name: str) -> tuple[str, int]:
        start.wait()
        try:
            body = {"name": name, "password": "wrong password"}
            return name, client.post(f"{server.base}/api/session", json=body).status_code
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        results = list(pool.map(lambda job: sign_in(*job), jobs))
    refused = {name: [status for who, status in results if who == name].count(429) for name in ("alice", "nobody-here")}
    print(
        f"\n{BURST} concurrent wrong sign-ins per name after 5 (turns at most {LOGIN_PACE_MAX_WAIT:.0f} s away):"
        f" a TD name {refused['alice']} refused, an unknown name {refused['nobody-here']} refused"
    )
    assert {status for _, status in results} <= {401, 429}
    assert refused["nobody-here"] >= 1
    assert refused["alice"] >= 1
    assert abs(refused["alice"] - refused["nobody-here"]) <= 2
