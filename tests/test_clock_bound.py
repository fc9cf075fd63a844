"""Clocks bounded and told (issue 44, point 5): a hold of record times has a bound, past which the TD accepts the
clock's correction; the set-back alert is its own; TD sessions and alert windows count elapsed time.

Before: a clock a year ahead, then set right, held every record's time for a year and nothing could end it; the
step back that caused it was folded into the jump forward's alert, which the clock set right closed; a forward
jump signed every TD out, and a session made while the clock was ahead lasted a year. The clocks here are the
scripted ones of tests/test_clock.py (the writer's ``time_now``, a watch's wall and steady clocks), and a real
shifted clock (libfaketime) for the server.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, expect

from wordjudge.access.access_store import AccessStore
from wordjudge.access.accounts import SESSION_TTL
from wordjudge.base.clock import CORRECTED, HOLD_BOUND_S, ClockWatch, stored
from wordjudge.base.errors import Message, Unauthorized
from wordjudge.log.chain import verify_chain
from wordjudge.log.connections import missing_or_changed
from wordjudge.model.records import Kind, Record, RecordFilter
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.clock_correction import accept_correction
from wordjudge.tournament.time_source import READ_EVERY_S, TimeSource
from wordjudge.tournament.timekeeping import HOLD_ALERT, SET_BACK_ALERT, STEP_ALERT, Timekeeper

from .browser import new_page
from .clocks import ShiftedClock
from .helpers import (
    CHEAP_HASHER,
    PASSWORD,
    LiveServer,
    access_store,
    audit_log,
    device_headers,
    td_headers,
    unchecked_audit_log,
)
from .test_audit import entry
from .test_chain import challenge, rewrite
from .test_cli_access import run
from .test_clock import Clocks, recording_keeper
from .test_console import sign_in

YEAR = 365 * 86400.0
EVENT = "wordjudge demo event"


@pytest.fixture
def scripted_clock(monkeypatch: pytest.MonkeyPatch) -> Clocks:
    """The writer's clock, as the test sets it (the audit writer reads ``time_now``)."""
    clocks = Clocks()
    monkeypatch.setattr("wordjudge.log.audit.time_now", clocks.wall)
    return clocks


def _write(data_dir: Path, count: int, first: int = 0) -> list[Record]:
    log = audit_log(data_dir)
    log.start()
    try:
        return [log.append_sync(replace(entry(n), event=EVENT)).record for n in range(first, first + count)]
    finally:
        log.close()


def year_ahead_then_set_right(data_dir: Path, clocks: Clocks) -> list[Record]:
    """Three records written by a clock a year ahead, then the clock set right (a year back)."""
    clocks.step(YEAR)
    written = _write(data_dir, 3)
    clocks.step(-YEAR)
    return written


def _changes(data_dir: Path) -> list[Record]:
    log = audit_log(data_dir)
    try:
        return list(reversed(log.find(RecordFilter(kind=Kind.CHANGE), limit=100)))
    finally:
        log.close()


def test_a_year_long_hold_asks_the_td_and_the_acceptance_lets_times_follow_the_clock(
    data_dir: Path, scripted_clock: Clocks
) -> None:
    ahead = year_ahead_then_set_right(data_dir, scripted_clock)
    keeper, raised, closed = recording_keeper(scripted_clock)
    log = audit_log(data_dir)
    log.start()
    try:
        keeper.look(log, event=EVENT, leads=True)
        held = log.append_sync(replace(entry(3), event=EVENT)).record
        assert held.created_at == ahead[-1].created_at  # held: a year ahead of the clock
        # Past the bound: health says how long and that the TD must accept; an alert asks it, once.
        keeper.look(log, event=EVENT, leads=True)
        kinds = [kind for kind, _, _ in raised]
        assert kinds == [SET_BACK_ALERT, HOLD_ALERT], raised
        [bound] = [text for kind, text, _ in raised if kind == HOLD_ALERT]
        assert "365 d" in bound
        assert "the TD must accept the clock's correction" in bound
        view = keeper.view(log.head.time)
        assert view["must_accept"]
        assert view["hold_bound_s"] == HOLD_BOUND_S
        assert view["held_s"] > YEAR - 60
        assert any("accept the clock's correction" in said.text() for said in keeper.warnings(log.head.time))
        # The TD accepts: a change record from the held time to the clock's, dated by the clock.
        accepted = accept_correction(log, server="hall-a", actor="alice", channel="console")
        assert isinstance(accepted, Record), accepted
        assert accepted.created_at == stored(scripted_clock.wall_s) < ahead[-1].created_at
        assert accepted.change is not None
        assert (accepted.change["what"], accepted.change["before"]["time"]) == (CORRECTED, ahead[-1].created_at)
        assert accepted.change["after"]["time"] == accepted.created_at
        keeper.corrected()
        assert closed == [HOLD_ALERT, SET_BACK_ALERT]
        scripted_clock.passes(1)
        after = log.append_sync(replace(entry(4), event=EVENT)).record
        assert after.created_at == stored(scripted_clock.wall_s)  # times follow the clock again
        assert not keeper.view(log.head.time)["must_accept"]
        assert keeper.warnings(log.head.time) == []
        # Nothing held: nothing to accept, nothing written.
        refused = accept_correction(log, server="hall-a", actor="alice", channel="console")
        assert isinstance(refused, Message)
        assert refused.key == "error.clock.nothing_held"
        assert log.verify().ok
    finally:
        log.close()
    assert run("audit", "verify", "--data-dir", data_dir).exit_code == 0


def test_a_hold_within_the_bound_asks_nothing(data_dir: Path, scripted_clock: Clocks) -> None:
    _write(data_dir, 1)
    scripted_clock.step(-(HOLD_BOUND_S - 60))  # four minutes back: held, but within the bound
    raised: list[str] = []

    def alert(kind: str, said: Message, about: str) -> bool:
        raised.append(kind)
        return True

    keeper = Timekeeper(
        server="hall-a",
        alert=alert,
        watch=ClockWatch(wall=scripted_clock.wall, steady=scripted_clock.steady),
    )
    log = audit_log(data_dir)
    log.start()
    try:
        keeper.look(log, event=EVENT, leads=True)
        keeper.look(log, event=EVENT, leads=True)
        assert HOLD_ALERT not in raised
        assert not keeper.view(log.head.time)["must_accept"]
    finally:
        log.close()


def test_the_td_accepts_the_correction_at_the_command_line(data_dir: Path, scripted_clock: Clocks) -> None:
    ahead = year_ahead_then_set_right(data_dir, scripted_clock)
    accepted = run("audit", "accept-clock", "--data-dir", data_dir)
    assert accepted.exit_code == 0, accepted.output
    assert "the clock's correction is accepted (record 4, by cli:root)" in accepted.output
    assert "chain verified: 4 record(s)" in accepted.output
    [change] = _changes(data_dir)
    assert change.change is not None
    assert (change.change["what"], change.channel) == (CORRECTED, "cli")
    assert change.created_at == stored(scripted_clock.wall_s) < ahead[-1].created_at
    scripted_clock.passes(2)
    [after] = _write(data_dir, 1, first=3)
    assert after.created_at == stored(scripted_clock.wall_s)
    again = run("audit", "accept-clock", "--data-dir", data_dir)
    assert again.exit_code == 1
    assert "record times are not held" in again.output
    assert run("audit", "verify", "--data-dir", data_dir).exit_code == 0


def _forged_step_back(data_dir: Path, monkeypatch: pytest.MonkeyPatch, clocks: Clocks) -> None:
    """A record dated back by a year with no acceptance before it: what a writer that ignores the hold writes."""
    with monkeypatch.context() as patched:
        patched.setattr("wordjudge.log.audit.record_time", lambda clock, previous: clock)
        log = unchecked_audit_log(data_dir)
        log.start()
        try:
            log.append_sync(replace(entry(9), event=EVENT))
        finally:
            log.close()


def test_a_record_dated_back_without_the_acceptance_still_breaks_the_chain(
    data_dir: Path, scripted_clock: Clocks, monkeypatch: pytest.MonkeyPatch
) -> None:
    year_ahead_then_set_right(data_dir, scripted_clock)
    _forged_step_back(data_dir, monkeypatch, scripted_clock)
    said = run("audit", "verify", "--data-dir", data_dir)
    assert said.exit_code == 1
    assert "chain broken at record 4" in said.output


@pytest.mark.sqlite_only("rewrites the log file with SQLite (what a forger with the file can do)")
@pytest.mark.parametrize(
    "forged",
    [
        {"what": "clock.stepped_back"},  # another kind of change record
        {"before": {"time": "2027-11-27T12:00:01.000+00:00"}},  # from a time that is not the record before's
        {"after": {"time": "2026-11-27T11:00:00.000+00:00", "seconds": 0}},  # to a time that is not its own
    ],
    ids=["other-kind", "other-before", "other-after"],
)
def test_only_an_acceptance_that_says_its_own_times_dates_a_record_back(
    data_dir: Path, scripted_clock: Clocks, forged: dict[str, Any]
) -> None:
    year_ahead_then_set_right(data_dir, scripted_clock)
    assert run("audit", "accept-clock", "--data-dir", data_dir).exit_code == 0
    path = data_dir / "audit.sqlite3"
    rewrite(path, 4, lambda record: replace(record, change={**(record.change or {}), **forged}))
    connection = sqlite3.connect(path)
    try:
        checked = verify_chain(connection, schema=missing_or_changed)
    finally:
        connection.close()
    assert (checked.ok, checked.first_bad_id) == (False, 4)
    assert checked.problem is not None
    assert checked.problem.key == "chain.problem.time"


# -- the set-back alert, its own ------------------------------------------------------------------------------


def test_a_clock_set_right_after_a_year_ahead_tells_its_step_back_on_its_own(
    data_dir: Path, scripted_clock: Clocks
) -> None:
    """Before: the step back closed the jump's alert as "set right" and was never told, while it held every
    record's time for a year."""
    raised: list[str] = []
    closed: list[str] = []

    def alert(kind: str, said: Message, about: str) -> bool:
        raised.append(kind)
        return True

    watch = ClockWatch(wall=scripted_clock.wall, steady=scripted_clock.steady)
    keeper = Timekeeper(server="hall-a", alert=alert, watch=watch, close=closed.append)
    log = audit_log(data_dir)
    log.start()
    try:
        log.append_sync(replace(entry(0), event=EVENT))
        keeper.look(log, event=EVENT, leads=True)
        scripted_clock.step(YEAR)
        keeper.look(log, event=EVENT, leads=True)
        log.append_sync(replace(entry(1), event=EVENT))  # written a year ahead
        scripted_clock.step(-YEAR)  # set right
        keeper.look(log, event=EVENT, leads=True)
        assert closed == [STEP_ALERT]  # the jump's alert closes...
        assert raised == [STEP_ALERT, SET_BACK_ALERT, HOLD_ALERT]  # ...and the step back is told, on its own
        said = " ".join(warning.text() for warning in keeper.warnings(log.head.time))
        assert "was set back by 365 d" in said
        assert "the TD must accept the clock's correction" in said
    finally:
        log.close()


def test_the_set_back_alert_is_said_in_english_and_french() -> None:
    step = ClockWatch(wall=lambda: 1000.0, steady=lambda: 0.0).behind(stored(1000.0 + YEAR))
    assert step is not None
    assert "before the log's last record" in step.message(stored(1000.0 + YEAR)).text("en")
    assert "avant le dernier enregistrement du journal" in step.message(stored(1000.0 + YEAR)).text("fr")
    bound = Message("error.clock.hold_bound", time="t", size="365 d", bound="5 min")
    assert "doit accepter la correction de l’horloge" in bound.text("fr")


# -- TD sessions and alert windows count elapsed time -----------------------------------------------------------


class Clock:
    """A clock the test moves."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _store(path: Path, wall: Clock, steady: Clock) -> AccessStore:
    return AccessStore(StateLocation(path), clock=wall, monotonic=steady, hasher=CHEAP_HASHER).open()


def test_a_forward_jump_does_not_sign_the_td_out(tmp_path: Path) -> None:
    wall, steady = Clock(datetime(2026, 11, 27, 9, tzinfo=UTC).timestamp()), Clock(1000.0)
    store = _store(tmp_path, wall, steady)
    try:
        store.tds.add("alice", PASSWORD, by="test")
        session = store.tds.login("alice", PASSWORD, client="test")
        wall.now += YEAR  # the clock jumps a year forward
        assert store.tds.authenticate(session.token).principal.actor == "alice"
        steady.now += SESSION_TTL  # a tournament day passes
        with pytest.raises(Unauthorized):
            store.tds.authenticate(session.token)
    finally:
        store.close()


def test_a_session_made_while_the_clock_was_ahead_does_not_last_a_year(tmp_path: Path) -> None:
    wall, steady = Clock(datetime(2027, 11, 27, 9, tzinfo=UTC).timestamp()), Clock(1000.0)  # a year ahead
    store = _store(tmp_path, wall, steady)
    try:
        store.tds.add("alice", PASSWORD, by="test")
        session = store.tds.login("alice", PASSWORD, client="test")
        kept = store.tds.login("alice", PASSWORD, client="test")  # seen next by a server started again
        wall.now -= YEAR  # set right
        assert store.tds.authenticate(session.token).principal.actor == "alice"
        steady.now += SESSION_TTL
        with pytest.raises(Unauthorized):
            store.tds.authenticate(session.token)
    finally:
        store.close()
    # Restarted (another process, its steady clock anew): the session's stored expiry, a year away, is bounded.
    again = _store(tmp_path, wall, Clock(5.0))
    try:
        assert again.tds.authenticate(kept.token).principal.actor == "alice"
    finally:
        again.close()
    wall.now += SESSION_TTL + 1
    later = _store(tmp_path, wall, Clock(5.0))
    try:
        with pytest.raises(Unauthorized):
            later.tds.authenticate(kept.token)
    finally:
        later.close()


def test_alert_windows_count_elapsed_time_not_the_wall_clock(tmp_path: Path) -> None:
    wall, steady = Clock(datetime(2027, 11, 27, 9, tzinfo=UTC).timestamp()), Clock(1000.0)
    store = _store(tmp_path, wall, steady)
    try:
        store.alerts.raise_alert("rate_limit", "kiosk-1", "first")
        wall.now -= YEAR  # set right: a window counted on the wall clock would last a year
        steady.now += 61
        store.alerts.raise_alert("rate_limit", "kiosk-1", "second")
        assert [alert.message for alert in store.alerts.latest()] == ["second", "first"]
        wall.now += 2 * YEAR  # a jump forward: the window is not over
        store.alerts.raise_alert("rate_limit", "kiosk-1", "third")
        assert [alert.count for alert in store.alerts.latest()] == [2, 1]
    finally:
        store.close()


# -- a real server, its clock a year ahead, then set right --------------------------------------------------------


def _health_until(server: LiveServer, said: Any, seconds: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        body: dict[str, Any] = httpx.get(f"{server.base}/api/health", timeout=30).json()
        if said(body):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.2)


def _alert_kinds_until(server: LiveServer, td: dict[str, str], kinds: set[str], seconds: float = 30) -> list[str]:
    deadline = time.monotonic() + seconds
    while True:
        listed = httpx.get(f"{server.base}/api/alerts", headers=td, timeout=30).json()["alerts"]
        found = [alert["kind"] for alert in listed]
        if kinds <= set(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


@pytest.mark.live
def test_a_server_a_year_ahead_set_right_asks_the_td_who_accepts_in_the_console(data_dir: Path, tmp_path: Path) -> None:
    shifted = ShiftedClock(tmp_path, "+365d")
    server = LiveServer(data_dir)
    server.prefix = shifted.prefix
    kiosk = device_headers(data_dir, "kiosk-1")
    try:
        server.start()
        ahead = httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk, timeout=10).json()
        assert ahead["created_at"] > "2027"
        shifted.set("+0")  # set right while serving
        body = _health_until(server, lambda body: body["clock"]["must_accept"])
        assert body["clock"]["held_s"] > YEAR - 3600
        assert body["clock"]["hold_bound_s"] == HOLD_BOUND_S
        assert any("the TD must accept the clock's correction" in text for text in body["warnings"])
        held = httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk, timeout=10).json()
        assert held["created_at"] == ahead["created_at"]
        td = td_headers(data_dir, "alice")
        kinds = _alert_kinds_until(server, td, {SET_BACK_ALERT, HOLD_ALERT})
        assert {SET_BACK_ALERT, HOLD_ALERT} <= set(kinds), kinds
        # The console's action: the TD accepts the clock's correction.
        accepted = httpx.post(f"{server.base}/api/clock/accept-correction", headers=td, timeout=10)
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["held"] == ahead["created_at"]
        assert accepted.json()["time"] < ahead["created_at"]
        after = httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk, timeout=10).json()
        assert abs(datetime.fromisoformat(after["created_at"]).timestamp() - time.time()) < 60  # follows the clock
        body = _health_until(server, lambda body: not body["clock"]["must_accept"])
        assert not any("clock" in text for text in body["warnings"]), body["warnings"]
        remaining = _alert_kinds_until(server, td, set(), seconds=0)
        assert SET_BACK_ALERT not in remaining
        assert HOLD_ALERT not in remaining
        again = httpx.post(f"{server.base}/api/clock/accept-correction", headers=td, timeout=10)
        assert again.status_code == 409
        assert again.json()["message"]["key"] == "error.clock.nothing_held"
        kiosk_refused = httpx.post(f"{server.base}/api/clock/accept-correction", headers=kiosk, timeout=10)
        assert kiosk_refused.status_code == 403
    finally:
        server.stop()
    verified = run("audit", "verify", "--data-dir", data_dir)
    assert verified.exit_code == 0, verified.output


@pytest.mark.browser
def test_the_console_offers_the_acceptance_on_the_holds_alert(browser: Browser, data_dir: Path, tmp_path: Path) -> None:
    """The console's alert of a hold past the bound has "Accept the clock's correction" beside it (Chromium)."""
    shifted = ShiftedClock(tmp_path, "+365d")
    server = LiveServer(data_dir)
    server.prefix = shifted.prefix
    kiosk = device_headers(data_dir, "kiosk-1")
    store = access_store(data_dir)
    try:
        store.tds.add("alice", PASSWORD, by="test")
    finally:
        store.close()
    try:
        server.start()
        assert httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk, timeout=10).is_success
        shifted.set("+0")
        _health_until(server, lambda body: body["clock"]["must_accept"])
        page = new_page(browser, "desktop")
        sign_in(page, server, "alice")
        alert = page.locator("li.alert-clock_held")
        expect(alert).to_contain_text("the TD must accept the clock's correction")
        expect(page.locator("li.alert-clock_set_back")).to_have_count(1)  # the step back, told on its own
        page.once("dialog", lambda dialog: dialog.accept())
        alert.get_by_role("button", name="Accept the clock's correction", exact=True).click()
        expect(page.locator("li.alert-clock_held")).to_have_count(0)
        expect(page.locator("li.alert-clock_set_back")).to_have_count(0)
        assert not _health_until(server, lambda body: not body["clock"]["must_accept"])["clock"]["must_accept"]
        page.context.close()
    finally:
        server.stop()
    [change] = [record for record in _changes(data_dir) if record.change and record.change["what"] == CORRECTED]
    assert (change.actor, change.channel) == ("alice", "console")
    assert run("audit", "verify", "--data-dir", data_dir).exit_code == 0


def test_health_says_what_the_clock_follows_and_warns_of_an_unauthenticated_hall_source(
    data_dir: Path, scripted_clock: Clocks
) -> None:
    followed = [TimeSource("chrony", "192.168.1.10", synchronised=True, authenticated=False)]
    keeper = Timekeeper(
        server="hall-b",
        alert=lambda kind, said, about: True,
        watch=ClockWatch(wall=scripted_clock.wall, steady=scripted_clock.steady),
        source=lambda: followed[0],
    )
    log = audit_log(data_dir)
    log.start()
    try:
        keeper.look(log, event=EVENT, leads=True)
        assert keeper.view(log.head.time)["time_source"] == {
            "via": "chrony",
            "reference": "192.168.1.10",
            "synchronised": True,
            "authenticated": False,
        }
        [warning] = keeper.warnings(log.head.time)
        assert warning.key == "error.clock.source_unauthenticated"
        followed[0] = TimeSource("chrony", "192.168.1.10", synchronised=True, authenticated=True)
        scripted_clock.passes(READ_EVERY_S)  # read again once a minute
        keeper.look(log, event=EVENT, leads=True)
        assert keeper.view(log.head.time)["time_source"]["authenticated"] is True
        assert keeper.warnings(log.head.time) == []
    finally:
        log.close()
