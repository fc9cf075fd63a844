"""Honest time (issue 33): a clock that steps back never stops the hall nor makes its log read as tampered.

A record is never dated before the record it follows, by construction (the writer holds record times while the
clock reads earlier than the log's last record); a step is told to the TD and put on record; a log written before
this, holding a step back made by an honest clock, is served again once the TD accepts it, and nothing else
passes that way. The servers here run with a real shifted clock (libfaketime, tests/clocks.py); the hall's
failover with a standby 5 s behind is in tests/test_hall.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from wordjudge.base.clock import BEHIND_LOG, JUMPED_FORWARD, STEPPED_BACK, ClockWatch, Offset, record_time, stored
from wordjudge.base.errors import Message
from wordjudge.base.messages import format_datetime
from wordjudge.log.chain import STEP_ACCEPTED, verify_chain
from wordjudge.log.connections import missing_or_changed
from wordjudge.model.records import Kind, Record, RecordFilter
from wordjudge.service.settings import Settings
from wordjudge.tournament.changes import Change, change_entry
from wordjudge.tournament.clock_steps import StepAcceptance, step_acceptance
from wordjudge.tournament.timekeeping import ACTOR, HOLD_ALERT, SET_BACK_ALERT, STEP_ALERT, Timekeeper
from wordjudge.web.app import create_app

from .clocks import ShiftedClock
from .helpers import (
    CHEAP_HASHER,
    LiveServer,
    access_store,
    device_headers,
    td_headers,
)
from .helpers import (
    unchecked_audit_log as audit_log,  # its logs step back on purpose: see what is made of them
)
from .test_audit import entry
from .test_chain import challenge, forge
from .test_cli_access import run

HOUR = 3600.0


# -- the rules, on clocks given -----------------------------------------------------------------------------


@given(st.lists(st.integers(min_value=-(10**6), max_value=10**6), min_size=1, max_size=40))
def test_a_record_is_never_dated_before_the_one_it_follows_whatever_the_clock_reads(steps: list[int]) -> None:
    """The clock wanders back and forth by up to a quarter of an hour between records: record times never go
    back, and each is the clock's own whenever the clock is not behind the record before."""
    start = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()
    previous, clock = "", start
    for step in steps:
        clock += step / 1000
        dated = record_time(stored(clock), previous)
        assert dated >= previous
        assert dated == max(stored(clock), previous)
        previous = dated


class Clocks:
    """A wall clock and a steady one, moved by the test: time passing moves both, a step the wall clock alone."""

    def __init__(self) -> None:
        self.wall_s, self.steady_s = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp(), 1000.0

    def wall(self) -> float:
        return self.wall_s

    def steady(self) -> float:
        return self.steady_s

    def passes(self, seconds: float) -> None:
        self.wall_s += seconds
        self.steady_s += seconds

    def step(self, seconds: float) -> None:
        self.wall_s += seconds


def recording_keeper(clocks: Clocks) -> tuple[Timekeeper, list[tuple[str, str, str]], list[str]]:
    """A timekeeper on ``clocks`` whose alerts are noted (kind, English text, about) as it raises them and whose
    closings (kinds) as it closes them: the keeper (its watch: ``keeper.watch``), the raised, the closed."""
    raised: list[tuple[str, str, str]] = []
    closed: list[str] = []

    def alert(kind: str, said: Message, about: str) -> bool:
        raised.append((kind, said.text(), about))
        return True

    watch = ClockWatch(wall=clocks.wall, steady=clocks.steady)
    return Timekeeper(server="hall-a", alert=alert, watch=watch, close=closed.append), raised, closed


def test_the_watch_names_a_step_back_and_a_jump_forward_once_each() -> None:
    clocks = Clocks()
    watch = ClockWatch(wall=clocks.wall, steady=clocks.steady)
    assert watch.look() is None  # the first look sets what the clock is measured from
    clocks.passes(30)
    assert watch.look() is None  # time passing is no step
    clocks.step(-HOUR)
    back = watch.look()
    assert back is not None
    assert (back.what, round(back.seconds)) == (STEPPED_BACK, -HOUR)
    assert back.expected == stored(clocks.wall_s + HOUR)
    clocks.passes(5)
    assert watch.look() is None  # the same step, once
    clocks.step(86400)
    ahead = watch.look()
    assert ahead is not None
    assert (ahead.what, round(ahead.seconds)) == (JUMPED_FORWARD, 86400)
    assert "jumped forward by 1 d 00 h" in ahead.message().text()


def test_small_moves_add_up_to_a_step_and_slewing_is_none() -> None:
    clocks = Clocks()
    watch = ClockWatch(wall=clocks.wall, steady=clocks.steady)
    watch.look()
    for _ in range(2):
        clocks.step(-1.5)  # each within the tolerance...
        clocks.passes(60)
    step = watch.look()  # ...together beyond it
    assert step is not None
    assert round(step.seconds, 1) == -3.0


def test_a_clock_behind_the_log_is_found_against_its_last_record() -> None:
    clocks = Clocks()
    watch = ClockWatch(wall=clocks.wall, steady=clocks.steady)
    assert watch.behind(stored(clocks.wall_s + 1.5)) is None  # within the tolerance: two machines a moment apart
    behind = watch.behind(stored(clocks.wall_s + 5))
    assert behind is not None
    assert (behind.what, round(behind.seconds)) == (BEHIND_LOG, -5)
    assert "reads 5 s before the log's last record" in behind.message(stored(clocks.wall_s + 5)).text()
    assert watch.behind("") is None  # an empty log


def test_an_offset_leaves_half_the_round_trip_unknown() -> None:
    offset = Offset.read_across(1005.0, sent=1000.0, received=1001.0)  # the other clock read 1005 half-way
    assert (offset.seconds, offset.within) == (4.5, 0.5)
    assert offset.beyond()  # surely more than 2 s apart
    assert not Offset.read_across(1002.4, sent=1000.0, received=1001.0).beyond()  # 1.9 +- 0.5: maybe not
    assert not Offset.read_across(1004.0, sent=1000.0, received=1004.0).beyond()  # 2 +- 2: not known
    said = offset.message("error.clock.peer_offset", url="http://b:8000").text()
    assert said.startswith("the clock of http://b:8000, the hall's other server, is 4.5 s behind the database's")
    assert "ahead of" in Offset(-3.0, 0.0).message("error.clock.peer_offset", url="x").text()
    assert "en retard de 4,5 s sur" in offset.message("error.clock.peer_offset", url="x").text("fr")


# -- the writer: record times held while its clock reads earlier ----------------------------------------------


@pytest.fixture
def scripted_clock(monkeypatch: pytest.MonkeyPatch) -> Clocks:
    """The writer's clock, as the test sets it (the audit writer reads ``time_now``)."""
    clocks = Clocks()
    monkeypatch.setattr("wordjudge.log.audit.time_now", clocks.wall)
    return clocks


def test_the_writer_holds_record_times_while_its_clock_reads_earlier(data_dir: Path, scripted_clock: Clocks) -> None:
    log = audit_log(data_dir)
    log.start()
    try:
        first = [log.append_sync(entry(n)).record for n in range(3)]
        scripted_clock.step(-HOUR)  # the clock set right: an hour back
        held = [log.append_sync(entry(n)).record for n in range(3, 8)]
        scripted_clock.passes(HOUR + 5)  # past the last record: times follow the clock again
        after = log.append_sync(entry(8)).record
        assert log.verify().ok
    finally:
        log.close()
    assert {record.created_at for record in held} == {first[-1].created_at}
    assert after.created_at == stored(scripted_clock.wall_s)
    times = [record.created_at for record in (*first, *held, after)]
    assert times == sorted(times)


# -- a real shifted clock: one machine ---------------------------------------------------------------------


def _challenge(server: LiveServer, headers: dict[str, str], words: str = "cat dog") -> httpx.Response:
    return httpx.post(f"{server.base}/api/challenges", json=challenge(words), headers=headers, timeout=10)


def _clock_records(data_dir: Path) -> list[Record]:
    log = audit_log(data_dir)
    try:
        return list(reversed(log.find(RecordFilter(kind=Kind.CHANGE, actor=ACTOR), limit=100)))
    finally:
        log.close()


def _health_until(server: LiveServer, said: Callable[[dict[str, Any]], bool], seconds: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        body: dict[str, Any] = httpx.get(f"{server.base}/api/health", timeout=30).json()
        if said(body):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.2)


def _step_alerts(server: LiveServer, td: dict[str, str], expected: int, kind: str = SET_BACK_ALERT) -> int:
    """How many clock alerts of ``kind`` the console lists, once it lists ``expected`` (an alert is stored in a
    thread of its own) or after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        alerts = httpx.get(f"{server.base}/api/alerts", headers=td).json()["alerts"]
        found = [alert["kind"] for alert in alerts].count(kind)
        if found >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


@pytest.fixture
def shifted(tmp_path: Path) -> ShiftedClock:
    return ShiftedClock(tmp_path)


@pytest.fixture
def server(data_dir: Path, shifted: ShiftedClock) -> Iterator[LiveServer]:
    """``wordjudge serve`` on the test's data folder, its clock ``shifted`` (not started)."""
    live = LiveServer(data_dir)
    live.prefix = shifted.prefix
    yield live
    live.stop()


@pytest.mark.live
def test_a_server_restarted_an_hour_back_keeps_adjudicating_and_its_log_verifies(
    data_dir: Path, shifted: ShiftedClock, server: LiveServer
) -> None:
    """The issue's first case: the laptop's clock an hour fast, corrected while the server was stopped. Before,
    records 4 and 5 were dated an hour earlier than record 3, `audit verify` called it a broken chain, and the
    next start refused every challenge."""
    kiosk, td = device_headers(data_dir, "kiosk-1"), td_headers(data_dir, "alice")
    shifted.set("+1h")
    server.start()
    for _ in range(3):
        assert _challenge(server, kiosk).status_code == 201
    server.stop()
    shifted.set("+0")  # corrected
    server.start()
    for _ in range(2):
        made = _challenge(server, kiosk)
        assert made.status_code == 201, made.text
    # The TD is told the size, in health (and the console's alerts), and the log says why times were held.
    body = _health_until(server, lambda body: "before the log's last record" in " ".join(body["warnings"]))
    assert body["ok"]
    [warning] = [text for text in body["warnings"] if "before the log's last record" in text]
    assert "this server's clock reads 59 min 5" in warning
    assert "record times are held at" in warning
    assert body["clock"]["held_s"] > HOUR - 60
    assert _step_alerts(server, td, 1) == 1
    # Started again while still held: health says it, and neither the alert nor the record is repeated.
    server.stop()
    server.start()
    assert _challenge(server, kiosk).status_code == 201
    _health_until(server, lambda body: "record times are held at" in " ".join(body["warnings"]))
    time.sleep(1.5)  # lets a look or two of the clock's watch pass: neither is repeated by them (checked below)
    server.stop()
    [on_record] = _clock_records(data_dir)
    assert on_record.change is not None
    assert on_record.change["what"] == BEHIND_LOG
    assert round(on_record.change["after"]["seconds"] / 60) == -60
    verified = run("audit", "verify", "--data-dir", data_dir)
    assert verified.exit_code == 0, verified.output
    assert "chain verified: 7 record(s)" in verified.output
    records = server.records()
    assert [record.created_at for record in records] == sorted(record.created_at for record in records)


@pytest.mark.live
def test_a_clock_stepped_while_serving_is_named_held_and_put_on_record(
    data_dir: Path, shifted: ShiftedClock, server: LiveServer
) -> None:
    kiosk, td = device_headers(data_dir, "kiosk-1"), td_headers(data_dir, "alice")
    server.start()
    before = _challenge(server, kiosk).json()
    shifted.set("-1h")  # an NTP step when the hall's router reaches the internet
    body = _health_until(server, lambda body: "was set back by" in " ".join(body["warnings"]))
    assert "was set back by 1 h 00 min 0" in body["warnings"][0]
    held = _challenge(server, kiosk).json()
    assert held["created_at"] == before["created_at"]  # held at the last record's time, not an hour before it
    assert _step_alerts(server, td, 1) == 1
    shifted.set("+1d")  # a day forward: every later record inherits it, so it is named too
    body = _health_until(server, lambda body: "jumped forward" in " ".join(body["warnings"]))
    assert "jumped forward by 1 d 01 h" in " ".join(body["warnings"])  # from an hour back to a day ahead
    after = _challenge(server, kiosk).json()
    assert after["created_at"] > (datetime.now(UTC) + timedelta(hours=23)).isoformat()
    # The TD's session counts elapsed time, not the wall clock: a day's jump forward does not sign the TD out
    # (issue 44: before, it did). The jump's alert is its own kind, the step back's its own.
    assert _step_alerts(server, td, 1, STEP_ALERT) == 1
    server.stop()
    store = access_store(data_dir)
    try:
        kinds = [alert.kind for alert in store.alerts.latest()]
        assert (kinds.count(SET_BACK_ALERT), kinds.count(STEP_ALERT), kinds.count(HOLD_ALERT)) == (1, 1, 1)
    finally:
        store.close()
    assert [record.change["what"] for record in _clock_records(data_dir) if record.change] == [
        STEPPED_BACK,
        JUMPED_FORWARD,
    ]
    assert run("audit", "verify", "--data-dir", data_dir).exit_code == 0


# -- several processes, their clocks a few milliseconds apart ------------------------------------------------

# One writer of a server of several processes (wordjudge.service.processes): it appends ``count`` records from ``first`` on.
_WRITER = """
import sys
from pathlib import Path
from wordjudge.log.audit import open_log
from wordjudge.storage.dialect import StateLocation
from tests.test_audit import entry
data_dir, database, first, count = Path(sys.argv[1]), sys.argv[2] or None, int(sys.argv[3]), int(sys.argv[4])
log = open_log(StateLocation(data_dir, database), shared="one-server")
log.start()
try:
    for n in range(first, first + count):
        log.append_sync(entry(n))
finally:
    log.close()
"""


@pytest.mark.live
def test_processes_whose_clocks_are_a_few_ms_apart_never_write_a_time_inversion(data_dir: Path, tmp_path: Path) -> None:
    """Three writers of one log, each process with its own clock (0, 4 and 8 ms behind), appending at once:
    record times never go back along the chain (before, a batch of the process behind, ordered after one of the
    process ahead, was dated before it)."""
    database = audit_log(data_dir).database or ""
    log_written = audit_log(data_dir)
    log_written.start()  # the log made once, before the processes share it
    log_written.close()
    writers = []
    for k, offset in enumerate(("+0", "-0.004", "-0.008")):
        (tmp_path / f"clock-{k}").mkdir()
        clock = ShiftedClock(tmp_path / f"clock-{k}", offset)
        env = {**os.environ, **clock.env, "PYTHONPATH": str(Path(__file__).parent.parent)}
        args = [str(data_dir), database, str(1 + 200 * k), "200"]
        writers.append(subprocess.Popen([sys.executable, "-c", _WRITER, *args], env=env))
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0, 0]
    log = audit_log(data_dir)
    try:
        records = list(log.iterate())
        verification = log.verify()
    finally:
        log.close()
    assert len(records) == 600
    assert len({record.created_at for record in records}) > 10  # the times are the clocks', not one held for all
    assert verification.ok, verification.describe()


# -- a log written before the fix: the TD accepts an honest step back, and nothing else ----------------------


def log_written_before_the_fix(data_dir: Path, monkeypatch: pytest.MonkeyPatch, times: list[float]) -> list[Record]:
    """A log whose records are dated as the writer dated them before record times were held: each its clock's
    time as it read (``times``: seconds after noon), before the record before it or not."""
    noon = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()
    readings = iter(noon + seconds for seconds in times)
    with monkeypatch.context() as patched:
        patched.setattr("wordjudge.log.audit.record_time", lambda clock, previous: clock)
        patched.setattr("wordjudge.log.audit.time_now", lambda: next(readings))
        log = audit_log(data_dir)
        log.start()
        try:
            return [log.append_sync(replace(entry(n), event="wordjudge demo event")).record for n in range(len(times))]
        finally:
            log.close()


@pytest.mark.live
def test_a_log_with_an_honest_step_back_is_accepted_by_the_td_and_served_again(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_written_before_the_fix(data_dir, monkeypatch, [0, 1, 2, 3 - HOUR, 4 - HOUR, 5 - HOUR])
    said = run("audit", "verify", "--data-dir", data_dir)
    assert said.exit_code == 1
    assert "chain broken at record 4: its time 2026-11-27T11:00:03.000+00:00 is 59 min 59 s before" in said.output
    assert "wordjudge audit accept-clock-step 4" in said.output
    accepted = run("audit", "accept-clock-step", "4", "--data-dir", data_dir)
    assert accepted.exit_code == 0, accepted.output
    # Dated as the event writes dates, in this machine's time zone (issue 46 item 5).
    dated = format_datetime(datetime.fromisoformat("2026-11-27T11:00:03+00:00").astimezone())
    assert f"record 4, dated {dated}, 59 min 59 s before the record before it" in accepted.output
    assert "chain verified: 7 record(s)" in accepted.output
    log = audit_log(data_dir)
    try:
        [acceptance] = log.find(RecordFilter(kind=Kind.CHANGE), limit=5)
    finally:
        log.close()
    assert acceptance.change is not None
    assert (acceptance.change["what"], acceptance.actor, acceptance.channel) == (STEP_ACCEPTED, "cli:root", "cli")
    # The server serves the log again: its start and its whole check pass, and challenges are recorded.
    monkeypatch.setattr("wordjudge.log.audit._WHOLE_CHECK_AFTER", 0.0)
    kiosk = device_headers(data_dir, "kiosk-1")
    with TestClient(create_app(Settings(data_dir=data_dir), hasher=CHEAP_HASHER)) as client:
        deadline = time.monotonic() + 30
        while (integrity := client.get("/api/health").json()["audit"]["integrity"])["whole"] in (None, "running"):
            assert time.monotonic() < deadline, integrity
            time.sleep(0.05)
        assert integrity["ok"], integrity
        assert integrity["whole"].startswith("chain verified: 7 record(s)")
        assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 201


def _records_count(data_dir: Path) -> int:
    log = audit_log(data_dir)
    try:
        return len(log.find(RecordFilter(), limit=1000))
    finally:
        log.close()


def test_an_acceptance_holds_for_that_very_record_only(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = log_written_before_the_fix(data_dir, monkeypatch, [0, 1, 2, 3 - HOUR, 4 - HOUR, 5, 6 - HOUR])
    log = audit_log(data_dir)
    try:
        with log._reader() as connection:
            # Accepting record 4's time says nothing of record 7's, nor of a record 4 with another hash.
            again = verify_chain(connection, accepting={4: records[3].hash}, schema=missing_or_changed)
            assert (again.ok, again.first_bad_id) == (False, 7)
            other = verify_chain(
                connection, accepting={4: records[4].hash, 7: records[6].hash}, schema=missing_or_changed
            )
            assert (other.ok, other.first_bad_id) == (False, 4)
            weighed = step_acceptance(connection, 4)
            assert isinstance(weighed, StepAcceptance)
            assert (weighed.id, weighed.hash, weighed.others) == (4, records[3].hash, (7,))
    finally:
        log.close()
    accepted = run("audit", "accept-clock-step", "4", "--data-dir", data_dir)
    assert accepted.exit_code == 0, accepted.output
    assert "records 7 are dated before the records before them too" in accepted.output
    assert run("audit", "verify", "--data-dir", data_dir).exit_code == 1
    assert run("audit", "accept-clock-step", "7", "--data-dir", data_dir).exit_code == 0
    assert run("audit", "verify", "--data-dir", data_dir).exit_code == 0


@pytest.mark.sqlite_only("forges the log file with SQLite (what a forger with the file can do)")
@pytest.mark.parametrize(
    ("times", "forged", "record_id", "refusal"),
    [
        ([0, 1, 2, 3], None, 3, "the log verifies: record 3 is not dated before the record before it"),
        ([0, 1, 2, 3], None, 9, "the log has no record 9"),
        # A time forged into record 4, not rehashed: its content was altered, and nothing accepts that.
        ([0, 1, 2, 3, 4], (4, "earlier"), 4, "record 4 breaks the chain for another reason than its time: its content"),
        # A step back at 4, but record 2 altered before it: the chain breaks first at record 2.
        ([0, 1, 2, 3 - HOUR, 4], (2, "table"), 4, "the chain breaks first at record 2, not at record 4: its content"),
        # A step back at 4, and record 5 altered after it: not a chain otherwise intact.
        ([0, 1, 2, 3 - HOUR, 4, 5], (5, "table"), 4, "the chain still breaks at record 5: its content was altered"),
        # Two steps back: the first must be accepted first.
        ([0, 1, 2, 3 - HOUR, 4, 5 - HOUR], None, 6, "breaks first at record 4, not at record 6: its time"),
    ],
)
def test_accept_clock_step_refuses_anything_else_naming_the_real_problem_and_writes_nothing(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    times: list[float],
    forged: tuple[int, str] | None,
    record_id: int,
    refusal: str,
) -> None:
    log_written_before_the_fix(data_dir, monkeypatch, times)
    path = data_dir / "audit.sqlite3"
    if forged is not None:
        # A plain edit of the stored body, not rehashed: what the chain check calls altered.
        old, new = ("T12:00:0", "T10:00:0") if forged[1] == "earlier" else ('"table":"', '"table":"9')
        forge(path, "UPDATE records SET body = replace(body, ?, ?) WHERE id = ?", old, new, forged[0])
    count = _records_count(data_dir)
    refused = run("audit", "accept-clock-step", str(record_id), "--data-dir", data_dir)
    assert refused.exit_code == 1
    assert refusal in refused.output
    assert _records_count(data_dir) == count  # nothing written


def test_an_acceptance_of_another_hash_accepts_nothing(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An acceptance appended to the chain that names record 4 with another record's hash does not accept record
    4's time; and an accepted record altered afterwards is caught as altered, whatever was accepted."""
    records = log_written_before_the_fix(data_dir, monkeypatch, [0, 1, 2, 3 - HOUR, 4])
    wrong = {"id": 4, "time": records[3].created_at, "hash": records[2].hash, "seconds": -HOUR}
    change = Change(STEP_ACCEPTED, "4", "", {"id": 3, "time": records[2].created_at}, wrong)
    log = audit_log(data_dir)
    log.start()  # the start checks only what came after its last checkpoint: it takes records
    try:
        log.append_sync(change_entry(change, actor="forger", event="wordjudge demo event"))
    finally:
        log.close()
    said = run("audit", "verify", "--data-dir", data_dir)
    assert said.exit_code == 1
    assert "chain broken at record 4: its time" in said.output


@pytest.mark.sqlite_only("alters the log file with SQLite")
def test_an_accepted_record_altered_afterwards_is_caught(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_written_before_the_fix(data_dir, monkeypatch, [0, 1, 2, 3 - HOUR, 4])
    assert run("audit", "accept-clock-step", "4", "--data-dir", data_dir).exit_code == 0
    forge(data_dir / "audit.sqlite3", "UPDATE records SET body = replace(body, 'T11:00:0', 'T10:00:0') WHERE id = 4")
    said = run("audit", "verify", "--data-dir", data_dir)
    assert said.exit_code == 1
    assert "chain broken at record 4: its content was altered" in said.output


def test_a_server_serving_the_folder_is_stopped_first(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_written_before_the_fix(data_dir, monkeypatch, [0, 1, 2 - HOUR])
    server = LiveServer(data_dir)
    server.start()
    try:
        refused = run("audit", "accept-clock-step", "3", "--data-dir", data_dir)
    finally:
        server.stop()
    assert refused.exit_code == 1
    assert "stop it, run this again, then start it" in refused.output
    assert run("audit", "accept-clock-step", "3", "--data-dir", data_dir).exit_code == 0


def test_the_log_of_clock_records_reads_as_words(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_written_before_the_fix(data_dir, monkeypatch, [0, 1, 2 - HOUR])
    assert run("audit", "accept-clock-step", "3", "--data-dir", data_dir).exit_code == 0
    tail = run("audit", "tail", "-n", "1", "--data-dir", data_dir).output
    dated = format_datetime(datetime.fromisoformat("2026-11-27T11:00:02+00:00").astimezone())
    assert f"record 3, dated {dated}, 59 min 59 s before the record before it" in tail  # no ISO time (issue 46)
    assert "accepted by the TD as a clock set back" in tail


def test_the_timekeeper_tells_a_step_once_and_a_clock_within_the_tolerance_never(
    data_dir: Path, scripted_clock: Clocks
) -> None:
    alerts: list[tuple[str, str]] = []

    def alert(kind: str, said: Message, about: str) -> bool:
        alerts.append((kind, said.text()))
        return True

    keeper = Timekeeper(
        server="hall-a",
        alert=alert,
        watch=ClockWatch(wall=scripted_clock.wall, steady=scripted_clock.steady),
    )
    log = audit_log(data_dir)
    log.start()
    try:
        log.append_sync(entry(1))
        assert keeper.look(log, event="Test Open", leads=True) is None
        scripted_clock.step(-1.5)  # two laptops a moment apart: nothing to tell
        log.append_sync(entry(2))
        assert keeper.look(log, event="Test Open", leads=True) is None
        assert keeper.warnings(log.head.time) == []
        scripted_clock.step(-HOUR)
        step = keeper.look(log, event="Test Open", leads=True)
        assert step is not None
        assert keeper.look(log, event="Test Open", leads=True) is None  # once
        log.append_sync(entry(3))
        # An hour's hold is past the bound: the TD is asked to accept the clock's correction (issue 44).
        [warning, bound] = keeper.warnings(log.head.time)
        assert "was set back by 1 h 00 min 0" in warning.text()
        assert "record times are held at" in warning.text()
        assert "the TD must accept the clock's correction" in bound.text()
        assert keeper.view(log.head.time)["held_s"] > HOUR - 5
    finally:
        log.close()
    assert [kind for kind, _ in alerts] == [SET_BACK_ALERT, HOLD_ALERT]
    [on_record] = _clock_records(data_dir)
    assert on_record.change is not None
    assert (on_record.change["what"], on_record.change["subject"], on_record.channel) == (
        STEPPED_BACK,
        "hall-a",
        "server",
    )


def test_a_clock_set_right_closes_its_alert_and_a_later_step_is_an_alert_of_its_own(
    data_dir: Path, scripted_clock: Clocks
) -> None:
    """Issue 46, item 2: the step's alert says what to do now and what waits for the end of the round; putting the
    clock right closes it (before: a second alert telling the TD to set it right); a later 5 s step is an alert of
    its own (before: counted on the hour's as "(3 times)"); what happens is dated as the clock ran before the step."""
    keeper, raised, closed = recording_keeper(scripted_clock)
    watch = keeper.watch
    log = audit_log(data_dir)
    log.start()
    try:
        log.append_sync(entry(1))
        keeper.look(log, event="Test Open", leads=True)
        started = watch.wall()
        scripted_clock.step(-HOUR)
        keeper.look(log, event="Test Open", leads=True)
        [(kind, text, first), (bound, _, _)] = raised
        assert (kind, bound) == (SET_BACK_ALERT, HOLD_ALERT)
        assert "Now: nothing, challenges are judged as ever. Between rounds (not mid-round)" in text
        assert "set the clock right" not in text  # not mid-round, as deploy/README.md says
        assert abs(watch.real() - started) < 5  # dated as the clock ran, not an hour back
        scripted_clock.step(-5)  # another step, 5 s: its own alert
        keeper.look(log, event="Test Open", leads=True)
        assert len(raised) == 3
        assert raised[2][2] != first
        scripted_clock.step(HOUR + 5)  # the TD sets the clock right
        keeper.look(log, event="Test Open", leads=True)
        assert len(raised) == 3  # no alert telling the TD to set it right
        assert closed == [SET_BACK_ALERT, HOLD_ALERT]
        assert keeper.warnings(log.head.time) == []
    finally:
        log.close()


def test_in_a_hall_the_offset_names_the_machine_whose_clock_differs_from_the_databases() -> None:
    """Issue 46, item 2: machine A (right) sees B's clock 30 s behind its own and the database's within 0.1 s of
    its own: the warning names B, against the database, and how to check it. Before, A's alert said A's own clock
    was ahead of B's."""
    said: list[Message] = []

    def alert(kind: str, message: Message, about: str) -> bool:
        said.append(message)
        return True

    keeper = Timekeeper(server="hall-a", alert=alert)
    keeper.note_database(Offset(0.1, 0.01), "hall-a:5432")
    keeper.note_peers({"http://hall-b:8000": Offset(-30.0, 0.01)})
    [warning] = [message.text() for message in said]
    assert warning.startswith(
        "the clock of http://hall-b:8000, the hall's other server, is 30.1 s behind the database's"
    )
    assert "check the time on that machine (timedatectl" in warning
    # Where B is right and A is wrong, A's warning is of its own clock against the database, and names no peer.
    wrong = Timekeeper(server="hall-a", alert=alert)
    wrong.note_database(Offset(30.0, 0.01), "hall-a:5432")
    wrong.note_peers({"http://hall-b:8000": Offset(30.0, 0.01)})
    assert [message.text().split(":")[0] for message in wrong.warnings(None)] == [
        "this server's clock is 30 s behind the clock of its database (hall-a"
    ]
