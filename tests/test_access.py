"""The access store: devices, pairing codes, TD accounts and sessions, on a real SQLite file."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from wordjudge.access import accounts, devices, limits, pairing
from wordjudge.access.access_store import ACCESS_FILE, AccessStore
from wordjudge.access.pairing import brute_force_odds, normalise_code
from wordjudge.base.errors import Conflict, DeviceMoved, InvalidInput, NotFound, RateLimited, Unauthorized
from wordjudge.model.auth import Principal, Role
from wordjudge.storage.access_db import stored_time
from wordjudge.storage.dialect import StateLocation

from .helpers import CHEAP_HASHER, PASSWORD


class Clock:
    def __init__(self) -> None:
        self.now = 1_790_000_000.0  # November 2026

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock, request: pytest.FixtureRequest) -> Iterator[AccessStore]:
    """The access store of one test: in SQLite; in the --backend's database for a test that asks for
    ``database_url`` (marked postgresql by the conftest, so that .ci/check runs it on both backends)."""
    database = request.getfixturevalue("database_url") if "database_url" in request.fixturenames else None
    opened = AccessStore(
        StateLocation(tmp_path, database),
        clock=clock,
        monotonic=clock,
        hasher=CHEAP_HASHER,
        challenges_per_minute=3,
    ).open()
    yield opened
    opened.close()


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_device_token_names_the_device_until_it_is_revoked(store: AccessStore, clock: Clock) -> None:
    enrolled = store.devices.add("Kiosk 1", Role.KIOSK, "A", by="alice")
    assert enrolled.token.startswith("wj_")
    assert len(enrolled.token) > 40
    assert store.devices.authenticate(enrolled.token, client="test") == Principal("Kiosk 1", Role.KIOSK, "kiosk", "A")
    assert store.devices.get("kiosk 1").online is True  # names are case-insensitive
    clock.now += devices.ONLINE_WITHIN + 1
    assert store.devices.get("Kiosk 1").online is False
    revoked = store.devices.revoke("Kiosk 1", by="alice")
    assert (revoked.revoked_by, revoked.online) == ("alice", False)
    with pytest.raises(Unauthorized, match=r"this device \(Kiosk 1\) was revoked by the TD"):
        store.devices.authenticate(enrolled.token, client="test")
    with pytest.raises(Unauthorized, match="not valid"):
        store.devices.authenticate(enrolled.token + "x", client="test")
    with pytest.raises(NotFound):
        store.devices.revoke("nobody", by="alice")


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_kiosk_silent_for_30_s_is_offline_since_it_was_last_heard_and_the_td_is_told_once(
    store: AccessStore, clock: Clock
) -> None:
    kiosk = store.devices.add("kiosk-01", Role.KIOSK, "A", by="alice").token
    phone = store.devices.add("runner-01", Role.RUNNER, "A", by="alice").token
    store.devices.authenticate(kiosk, client="k")
    store.devices.authenticate(phone, client="p")
    heard = store.devices.get("kiosk-01").last_seen_at
    clock.now += 20
    store.devices.authenticate(kiosk, client="k")  # within the minute: not written, but heard
    assert store.devices.get("kiosk-01").last_seen_at != heard
    assert store.devices.watch_offline() == []
    clock.now += devices.ONLINE_WITHIN - 1
    assert store.devices.get("kiosk-01").online is True
    assert store.devices.watch_offline() == []
    clock.now += 1
    last_heard = store.devices.get("kiosk-01")
    assert last_heard.online is False
    assert store.devices.watch_offline() == ["kiosk-01"]  # a handheld asleep in a pocket is no news
    assert store.devices.watch_offline() == []  # told once a silence
    [alert] = [a for a in store.alerts.latest() if a.kind == "device_offline"]
    assert (alert.actor, f"since {last_heard.last_seen_at}" in alert.message) == ("kiosk-01", True)
    store.devices.authenticate(kiosk, client="k")  # back: a new silence is news again
    assert store.devices.get("kiosk-01").online is True
    clock.now += devices.ONLINE_WITHIN
    assert store.devices.watch_offline() == ["kiosk-01"]
    store.devices.authenticate(kiosk, client="k")
    store.devices.revoke("KIOSK-01", by="alice")  # a revoked kiosk going quiet is no news
    clock.now += devices.ONLINE_WITHIN
    assert store.devices.watch_offline() == []


def _stored_last_seen(path: Path, name: str) -> str | None:
    with closing(sqlite3.connect(path)) as db:
        row: tuple[str | None] = db.execute("SELECT last_seen_at FROM devices WHERE name = ?", (name,)).fetchone()
    return row[0]


def test_a_request_never_waits_for_the_disk_and_last_seen_times_are_written_in_one_flush(
    store: AccessStore, clock: Clock
) -> None:
    # Each device's first request of a minute wrote its last-seen time with an fsync, on the request path: 200
    # kiosks heard together stalled the hall a minute later, 200 commits in a row (issue 19).
    tokens = [store.devices.add(f"kiosk-{n:02d}", Role.KIOSK, "A", by="alice").token for n in range(20)]
    for token in tokens:
        store.devices.authenticate(token, client="k")  # a token's first use binds it to its address: written
    assert store.database.flush_touches() == 20
    path = store.database.path
    wal = path.with_name(path.name + "-wal")
    before = (path.stat().st_mtime_ns, wal.stat().st_mtime_ns, wal.stat().st_size)
    clock.now += 60
    for token in tokens:  # a minute later: each device's time is due again
        store.devices.authenticate(token, client="k")
    assert (path.stat().st_mtime_ns, wal.stat().st_mtime_ns, wal.stat().st_size) == before  # nothing written
    assert store.devices.get("kiosk-07").last_seen_at == stored_time(clock.now)  # heard: the TD sees it at once
    assert _stored_last_seen(path, "kiosk-07") == stored_time(clock.now - 60)
    assert store.database.flush_touches() == 20  # one transaction for all of them
    assert _stored_last_seen(path, "kiosk-07") == stored_time(clock.now)
    assert store.database.flush_touches() == 0
    clock.now += 30
    store.devices.authenticate(tokens[7], client="k")  # within the minute: heard, nothing to write
    assert store.database.flush_touches() == 0
    clock.now += 30
    store.devices.authenticate(tokens[7], client="k")
    store.close()  # what is noted is written before the store closes
    assert _stored_last_seen(path, "kiosk-07") == stored_time(clock.now)


def test_a_revocation_by_another_process_holds_at_the_next_request(store: AccessStore) -> None:
    # The store's second connection (for last-seen times) was opened after the first, and opening it closed a
    # descriptor of the file, which dropped the locks SQLite held for the first: once the command line had
    # written, the server read a stale copy for good and let a revoked kiosk in (found by the live test
    # test_a_token_from_the_cli_works_on_a_running_server_until_revoked, before it was committed).
    def cli(action: str) -> str:  # the command line, in a process of its own, on the same file
        script = (
            "import sys; from pathlib import Path; from wordjudge.access.access_store import AccessStore; from wordjudge.model.auth import"
            " Role; from wordjudge.storage.dialect import StateLocation;"
            f" s = AccessStore(StateLocation(Path(sys.argv[1]).parent)).open(); print({action}); s.close()"
        )
        done = subprocess.run([sys.executable, "-c", script, str(store.database.path)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    token = cli("s.devices.add('kiosk-01', Role.KIOSK, 'A', by='cli').token")
    store.devices.authenticate(token, client="k")
    assert store.database.flush_touches() == 1
    cli("s.devices.revoke('kiosk-01', by='cli').name")
    with pytest.raises(Unauthorized, match="revoked"):
        store.devices.authenticate(token, client="k")


def test_only_hashes_of_tokens_are_stored(store: AccessStore, tmp_path: Path) -> None:
    token = store.devices.add("runner-1", Role.RUNNER, by="alice").token
    store.close()
    raw = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert store_has_device(tmp_path, "runner-1")
    assert token.encode() not in raw
    assert token[3:].encode() not in raw


def store_has_device(directory: Path, name: str) -> bool:
    connection = sqlite3.connect(directory / ACCESS_FILE)
    try:
        return bool(connection.execute("SELECT count(*) FROM devices WHERE name = ?", (name,)).fetchone()[0] == 1)
    finally:
        connection.close()


@pytest.mark.usefixtures("database_url")  # on both backends
def test_names_are_one_namespace_and_never_reused(store: AccessStore) -> None:
    store.devices.add("kiosk-1", Role.KIOSK, by="alice")
    store.tds.add("alice", PASSWORD, by="cli")
    with pytest.raises(Conflict, match="taken by a device"):
        store.tds.add("KIOSK-1", PASSWORD, by="cli")
    with pytest.raises(Conflict, match="taken by a TD"):
        store.devices.add("Alice", Role.RUNNER, by="cli")
    store.devices.revoke("kiosk-1", by="alice")
    with pytest.raises(Conflict):
        store.devices.add("kiosk-1", Role.KIOSK, by="alice")
    with pytest.raises(InvalidInput, match="must be 1 to 40 letters"):
        store.devices.add("cli:root", Role.KIOSK, by="alice")
    with pytest.raises(InvalidInput, match="a device's role is kiosk, runner or monitor"):
        store.devices.add("td-device", Role.TD, by="alice")


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_pairing_code_enrols_one_device_once(store: AccessStore) -> None:
    code = store.pairing.create_code(Role.RUNNER, "B", by="alice")
    assert re.fullmatch(r"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{2}", code.code)
    enrolled = store.pairing.enrol(code.code.lower().replace("-", " "), client="10.0.0.5")
    assert (enrolled.device.name, enrolled.device.role, enrolled.device.division) == ("handheld-01", Role.RUNNER, "B")
    assert store.devices.authenticate(enrolled.token, client="10.0.0.5").actor == "handheld-01"
    with pytest.raises(Unauthorized, match="used already"):
        store.pairing.enrol(code.code, client="10.0.0.5")
    named = store.pairing.create_code(Role.KIOSK, None, "Hall kiosk", by="alice")
    assert store.pairing.enrol(named.code, client="10.0.0.5").device.name == "Hall kiosk"


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_pairing_code_expires(store: AccessStore, clock: Clock) -> None:
    code = store.pairing.create_code(Role.KIOSK, by="alice")
    clock.now += pairing.PAIRING_TTL
    with pytest.raises(Unauthorized, match="has expired"):
        store.pairing.enrol(code.code, client="10.0.0.5")


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_device_paired_again_gets_a_new_token_for_its_new_address_and_the_old_token_stops(
    store: AccessStore, clock: Clock
) -> None:
    old = store.devices.add("kiosk-07", Role.KIOSK, "A", by="alice").token
    store.devices.authenticate(old, client="10.0.0.7")
    store.devices.revoke("kiosk-07", by="alice")
    code = store.pairing.create_repair_code("KIOSK-07", by="alice")  # names are case-insensitive
    assert (code.device_name, code.role, code.division, code.repair) == ("kiosk-07", Role.KIOSK, "A", True)
    enrolled = store.pairing.enrol(code.code, client="10.0.0.8")
    device = enrolled.device
    assert (device.name, device.role, device.division, device.revoked_at, device.bound_client) == (
        "kiosk-07",
        Role.KIOSK,
        "A",
        None,
        "10.0.0.8",
    )
    assert store.devices.authenticate(enrolled.token, client="10.0.0.8").actor == "kiosk-07"
    with pytest.raises(Unauthorized, match="not valid"):
        store.devices.authenticate(old, client="10.0.0.7")  # the old token is gone, not only revoked
    with pytest.raises(DeviceMoved):
        store.devices.authenticate(enrolled.token, client="10.0.0.7")  # bound to the address it paired from
    assert [d.name for d in store.devices.all()] == ["kiosk-07"]  # the same device, not a new one
    with pytest.raises(Unauthorized, match="used already"):
        store.pairing.enrol(code.code, client="10.0.0.9")
    # A device still in use is paired again too (a replaced kiosk): the token it had stops at once.
    current = enrolled.token
    again = store.pairing.create_repair_code("kiosk-07", by="bob")
    newest = store.pairing.enrol(again.code, client="10.0.0.9").token
    with pytest.raises(Unauthorized, match="not valid"):
        store.devices.authenticate(current, client="10.0.0.8")
    assert store.devices.authenticate(newest, client="10.0.0.9").actor == "kiosk-07"


@pytest.mark.usefixtures("database_url")  # on both backends
def test_the_tds_latest_word_on_a_device_wins_over_an_older_re_pair_code(store: AccessStore, clock: Clock) -> None:
    token = store.devices.add("runner-3", Role.RUNNER, by="alice").token
    first = store.pairing.create_repair_code("runner-3", by="alice")
    second = store.pairing.create_repair_code("runner-3", by="alice")
    with pytest.raises(Unauthorized, match="expired"):
        store.pairing.enrol(first.code, client="10.0.0.5")  # a newer code replaced it
    store.devices.revoke("runner-3", by="alice")
    with pytest.raises(Unauthorized, match="expired"):
        store.pairing.enrol(second.code, client="10.0.0.5")  # revoked after: it stays revoked
    with pytest.raises(Unauthorized, match="revoked"):
        store.devices.authenticate(token, client="10.0.0.5")
    third = store.pairing.create_repair_code("runner-3", by="alice")
    clock.now += pairing.PAIRING_TTL
    with pytest.raises(Unauthorized, match="expired"):
        store.pairing.enrol(third.code, client="10.0.0.5")
    with pytest.raises(NotFound, match="no device named 'nobody'"):
        store.pairing.create_repair_code("nobody", by="alice")
    store.devices.add("prometheus", Role.MONITOR, by="alice")
    with pytest.raises(InvalidInput, match="a monitor is enrolled with 'wordjudge device add'"):
        store.pairing.create_repair_code("prometheus", by="alice")
    store.pairing.create_codes(Role.KIOSK, [(None, None)] * pairing.MAX_OPEN_CODES, by="alice")
    with pytest.raises(Conflict, match="64 pairing codes are open already and 1 more"):
        store.pairing.create_repair_code("runner-3", by="alice")


def test_codes_read_aloud_are_forgiven_and_garbage_is_refused() -> None:
    assert normalise_code("7kq2-m9xd-4f") == "7KQ2M9XD4F"
    assert normalise_code(" 0OIL 1234 56") == "0011123456"  # O is 0, I and L are 1
    assert normalise_code("7KQ2-M9XD-4") == ""
    assert normalise_code("7KQ2-M9XD-4U") == ""  # U is not in the alphabet


@pytest.mark.usefixtures("database_url")  # on both backends
def test_wrong_codes_are_throttled_per_client_even_for_a_right_code(store: AccessStore, clock: Clock) -> None:
    code = store.pairing.create_code(Role.KIOSK, by="alice")
    for guess in range(limits.ENROL_FAILURES_PER_CLIENT):
        with pytest.raises(Unauthorized):
            store.pairing.enrol(f"AAAA-{guess:04d}-00", client="10.0.0.66")
    with pytest.raises(RateLimited, match="too many wrong pairing codes") as refused:
        store.pairing.enrol(code.code, client="10.0.0.66")
    assert 1 <= refused.value.retry_after <= limits.ENROL_WINDOW + 1
    assert [a.kind for a in store.alerts.latest()] == ["enrol_throttled"]
    assert store.pairing.enrol(code.code, client="10.0.0.7").device.name == "kiosk-01"  # another client is not blocked
    clock.now += limits.ENROL_WINDOW
    with pytest.raises(Unauthorized):
        store.pairing.enrol("AAAA-0000-00", client="10.0.0.66")


def test_limits_count_on_the_monotonic_clock_not_the_wall_clock(tmp_path: Path) -> None:
    wall, steady = Clock(), Clock()
    store = AccessStore(StateLocation(tmp_path), clock=wall, monotonic=steady, hasher=CHEAP_HASHER).open()
    try:
        for guess in range(limits.ENROL_FAILURES_PER_CLIENT):
            with pytest.raises(Unauthorized):
                store.pairing.enrol(f"CCCC-{guess:04d}", client="10.0.0.66")
        wall.now += 10 * limits.ENROL_WINDOW  # the machine's clock is set forward: the limit stands
        with pytest.raises(RateLimited):
            store.pairing.enrol("CCCC-0000", client="10.0.0.66")
        steady.now += limits.ENROL_WINDOW
        with pytest.raises(Unauthorized):
            store.pairing.enrol("CCCC-0000", client="10.0.0.66")
    finally:
        store.close()


@pytest.mark.usefixtures("database_url")  # on both backends
def test_wrong_codes_from_many_clients_are_throttled_together(store: AccessStore) -> None:
    code = store.pairing.create_code(Role.KIOSK, by="alice")
    for guess in range(limits.ENROL_FAILURES_TOTAL):
        with pytest.raises(Unauthorized):
            store.pairing.enrol(f"BBBB-{guess:04d}", client=f"10.0.1.{guess}")
    with pytest.raises(RateLimited):
        store.pairing.enrol(code.code, client="10.0.2.1")


@pytest.mark.usefixtures("database_url")  # on both backends
def test_pairing_codes_cannot_be_brute_forced_within_the_throttle(store: AccessStore) -> None:
    # The bound that the throttle and the limits give: with every open code there can be, trying as
    # fast as allowed for a code's whole life, a guesser's chance is below one in a hundred million.
    assert brute_force_odds() < 1e-8
    for _ in range(pairing.MAX_OPEN_CODES):
        store.pairing.create_code(Role.KIOSK, by="alice")
    with pytest.raises(Conflict, match="pairing codes are open already"):
        store.pairing.create_code(Role.KIOSK, by="alice")


def test_pairing_codes_are_random(tmp_path: Path) -> None:
    store = AccessStore(StateLocation(tmp_path), hasher=CHEAP_HASHER).open()
    try:
        codes = set()
        for _ in range(10):
            for _ in range(pairing.MAX_OPEN_CODES):
                codes.add(store.pairing.create_code(Role.KIOSK, by="alice").code)
            store.database._connection.execute("UPDATE pairing_codes SET used_at = 'x'")  # type: ignore[union-attr]
    finally:
        store.close()
    assert len(codes) == 10 * pairing.MAX_OPEN_CODES
    assert set("".join(codes).replace("-", "")) <= set(pairing.PAIRING_ALPHABET)


@pytest.mark.usefixtures("database_url")  # on both backends
def test_td_login_session_and_logout(store: AccessStore, clock: Clock) -> None:
    store.tds.add("alice", PASSWORD, by="cli")
    session = store.tds.login(" alice ", PASSWORD, client="10.0.0.2")
    assert session.principal == Principal("alice", Role.TD, "console")
    assert store.tds.authenticate(session.token).csrf_token == session.csrf_token
    store.tds.logout(session.token)
    with pytest.raises(Unauthorized, match="not signed in"):
        store.tds.authenticate(session.token)
    later = store.tds.login("ALICE", PASSWORD, client="10.0.0.2")
    clock.now += accounts.SESSION_TTL
    with pytest.raises(Unauthorized, match="expired"):
        store.tds.authenticate(later.token)


@pytest.mark.usefixtures("database_url")  # on both backends
def test_failed_logins_are_throttled_per_client_and_never_lock_the_td_out(store: AccessStore, clock: Clock) -> None:
    store.tds.add("alice", PASSWORD, by="cli")
    for _ in range(limits.LOGIN_FAILURES):
        with pytest.raises(Unauthorized, match="wrong TD name or password"):
            store.tds.login("alice", "guess-guess-guess", client="10.0.0.66")
    with pytest.raises(RateLimited, match="too many failed sign-ins"):
        store.tds.login("alice", PASSWORD, client="10.0.0.66")  # the guessing address is stopped, right password or not
    # The guesses from one address do not lock alice out: from her own device, her password works.
    assert store.tds.login("alice", PASSWORD, client="10.0.0.2").principal.actor == "alice"
    for n in range(limits.LOGIN_FAILURES):
        with pytest.raises(Unauthorized, match="wrong TD name or password"):  # unknown names say the same
            store.tds.login(f"nobody-{n}", PASSWORD, client="10.0.0.77")
    with pytest.raises(RateLimited):
        store.tds.login("bob", PASSWORD, client="10.0.0.77")  # the client is stopped, for any name
    alerts = {(a.kind, a.actor) for a in store.alerts.latest()}
    assert alerts == {("login_throttled", "10.0.0.66"), ("login_throttled", "10.0.0.77"), ("login_guessing", "alice")}
    clock.now += limits.LOGIN_WINDOW
    assert store.tds.login("alice", PASSWORD, client="10.0.0.66").principal.actor == "alice"  # the window has passed


@pytest.mark.usefixtures("database_url")  # on both backends
def test_password_change_and_disable_end_sessions(store: AccessStore) -> None:
    store.tds.add("alice", PASSWORD, by="cli")
    first = store.tds.login("alice", PASSWORD, client="c")
    store.tds.set_password("alice", "another long password")
    with pytest.raises(Unauthorized):
        store.tds.authenticate(first.token)
    with pytest.raises(Unauthorized):
        store.tds.login("alice", PASSWORD, client="c")
    second = store.tds.login("alice", "another long password", client="c")
    store.tds.disable("alice")
    with pytest.raises(Unauthorized):
        store.tds.authenticate(second.token)
    with pytest.raises(Unauthorized, match="disabled"):
        store.tds.login("alice", "another long password", client="c")
    with pytest.raises(InvalidInput, match="at least 10 characters"):
        store.tds.add("bob", "short", by="cli")
    assert [(td.name, bool(td.disabled_at)) for td in store.tds.all()] == [("alice", True)]


def test_passwords_are_hashed_with_argon2id_at_full_cost(tmp_path: Path) -> None:
    store = AccessStore(StateLocation(tmp_path)).open()  # the server's own settings
    try:
        store.tds.add("alice", PASSWORD, by="cli")
        (stored,) = store.database._connection.execute("SELECT password_hash FROM tds").fetchone()  # type: ignore[union-attr]
    finally:
        store.close()
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert PASSWORD not in stored
    assert PasswordHasher().verify(stored, PASSWORD)


@pytest.mark.usefixtures("database_url")  # on both backends
def test_challenge_rate_limit_alerts_the_td_and_spares_the_td(store: AccessStore) -> None:
    kiosk = Principal("kiosk-1", Role.KIOSK, "kiosk")
    for _ in range(3):
        store.limits.spend_challenge(kiosk)
    with pytest.raises(RateLimited, match=r"at most 3 a minute\): the TD has been told"):
        store.limits.spend_challenge(kiosk)
    store.limits.refund_challenge(kiosk)
    store.limits.spend_challenge(kiosk)
    td = Principal("alice", Role.TD, "console")
    for _ in range(10):
        store.limits.spend_challenge(td)
    with pytest.raises(RateLimited):
        store.limits.spend_challenge(kiosk)
    alerts = store.alerts.latest()
    assert [(a.kind, a.actor) for a in alerts] == [("rate_limit", "kiosk-1")]  # once a minute, not per refusal


def test_the_store_is_durable_and_shared_with_another_process(tmp_path: Path) -> None:
    server = AccessStore(StateLocation(tmp_path), hasher=CHEAP_HASHER).open()
    cli = AccessStore(StateLocation(tmp_path), hasher=CHEAP_HASHER).open()
    try:
        token = cli.devices.add("kiosk-1", Role.KIOSK, by="cli").token
        assert server.devices.authenticate(token, client="test").actor == "kiosk-1"
        cli.devices.revoke("kiosk-1", by="cli")
        with pytest.raises(Unauthorized):
            server.devices.authenticate(token, client="test")
    finally:
        server.close()
        cli.close()
    connection = sqlite3.connect(tmp_path / ACCESS_FILE)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [row[0] for row in connection.execute("SELECT name FROM migrations")] == [
        "0001_access",
        "0002_monitor_role",
        "0003_bound_devices_counted_alerts",
        "0004_acknowledged_alerts",
        "0005_session_digests",
    ]
    connection.close()


def test_checking_a_td_opens_no_session_and_counts_failures(store: AccessStore, tmp_path: Path) -> None:
    store.tds.add("alice", PASSWORD, by="cli")
    assert store.tds.check("ALICE", PASSWORD, client="kiosk") == Principal("alice", Role.TD, "console")
    connection = sqlite3.connect(tmp_path / ACCESS_FILE)
    assert connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
    connection.close()
    for _ in range(limits.LOGIN_FAILURES):
        with pytest.raises(Unauthorized):
            store.tds.check("alice", "wrong password!", client="kiosk")
    with pytest.raises(RateLimited):
        store.tds.login("alice", PASSWORD, client="kiosk")  # the same throttle as signing in
    assert store.tds.login("alice", PASSWORD, client="elsewhere").principal.actor == "alice"
