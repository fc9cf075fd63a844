"""The chain check's database checks in segments (wordjudge.log.record_checks): the records cut into id ranges, each
checked apart by whichever connection is free, the findings joined. A break in any segment, on either side of a
boundary between two, and in the last, open-ended one is found; of breaks in several segments, the join names the
first, whichever segment finished first."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from wordjudge.base.errors import Message
from wordjudge.log import chain, record_checks
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.log.chain import RECORD_RULES
from wordjudge.log.connections import missing_or_changed
from wordjudge.log.record_checks import Checks, Segment, joined, plan, segments
from wordjudge.model.records import Record, Verdict
from wordjudge.storage.dialect import StateLocation, dialect_of

from .test_chain import a_log, forget_checkpoints, rewrite

RECORDS = 40
CUT = 4  # segments (0, 10], (10, 20], (20, 30] and (30, end)


def flipped(record: Record) -> Record:
    """The record with the other verdict, its per-word results and consequence left as they were: at odds with
    itself, which only the database's checks see once the chain is rehashed from it."""
    other = Verdict.UNACCEPTABLE if record.verdict is Verdict.ACCEPTABLE else Verdict.ACCEPTABLE
    return replace(record, verdict=other)


def forged(path: Path, *ids: int) -> None:
    """Each record of ``ids`` made at odds with itself, the chain rehashed after it, the checkpoints forgotten."""
    for record_id in ids:
        rewrite(path, record_id, flipped)
    forget_checkpoints(path)


@pytest.fixture
def cut_in_four(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_checks, "SEGMENTS", CUT)


@pytest.mark.parametrize(("start", "last", "count"), [(0, 40, 4), (0, 41, 4), (7, 9, 12), (5, 5, 12), (0, 1, 3)])
def test_the_segments_hold_every_record_after_the_start_once(start: int, last: int, count: int) -> None:
    cut = segments(start, last, count)
    assert len(cut) <= count
    assert cut[0].after == start
    assert cut[-1] == Segment(cut[-1].after)  # the last one open-ended
    for record_id in range(start + 1, last + 50):  # records written after the plan too
        assert sum(part.after < record_id <= part.upto for part in cut) == 1, record_id
    assert sum(part.after < start <= part.upto for part in cut) == 0


@pytest.mark.usefixtures("cut_in_four")
@pytest.mark.parametrize("bad", [1, 10, 11, 20, 21, 30, 31, 40])
def test_a_break_in_any_segment_and_on_either_side_of_a_boundary_is_found(tmp_path: Path, bad: int) -> None:
    path = tmp_path / AUDIT_FILE
    records = a_log(path, RECORDS)
    assert segments(0, records[-1].id, CUT)[1] == Segment(10, 20)
    forged(path, bad)
    result = AuditLog(StateLocation(path.parent)).verify()
    assert (result.ok, result.first_bad_id) == (False, bad), result.describe()


@pytest.mark.usefixtures("cut_in_four")
def test_the_join_names_the_first_break_of_several_segments(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    a_log(path, RECORDS)
    forged(path, 35, 22, 13)  # the last segment's, the third's, the second's
    result = AuditLog(StateLocation(path.parent)).verify()
    assert (result.ok, result.first_bad_id) == (False, 13), result.describe()
    assert result.head.id == 12  # the last record found good: the one before the first break


def test_the_join_takes_the_lowest_record_and_the_first_check_planned() -> None:
    first, second, damage = Message("chain.problem.altered"), Message("chain.problem.unlinked"), Message("x")
    assert joined([]) is None
    assert joined([(33, 0, second), (12, 1, second), (12, 0, first)]) == (12, first)
    assert joined([(5, 0, first), (None, 0, damage), (2, 1, second)]) == (None, damage)  # the file itself first


def test_the_join_is_the_same_whichever_segment_ends_first(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    records = a_log(path, RECORDS)
    forged(path, 35, 22, 13)
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        planned = plan(0, records[-1].id, RECORD_RULES, dialect_of(connection), deep=True, count=CUT)
        for order in (planned, planned[::-1]):  # the last segment's checks run first, then the first's
            checks = Checks(order)
            checks.work(connection)
            found = checks.first()
            assert found is not None
            assert found[0] == 13
    finally:
        connection.close()


def test_a_check_that_cannot_run_is_raised_never_passed() -> None:
    def unreadable(connection: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    def broken(connection: object) -> None:
        raise ZeroDivisionError

    for failing in (unreadable, broken):
        checks = Checks([failing])
        checks.work(sqlite3.connect(":memory:"))
        with pytest.raises((sqlite3.OperationalError, ZeroDivisionError)):
            checks.first()


def test_a_walk_that_cannot_be_read_leaves_no_check_at_work_on_the_side_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The caller closes the side connection once verify_chain returns or raises: a check still at work on it then
    # would fail in a thread of its own, or hold the file open.
    path = tmp_path / AUDIT_FILE
    a_log(path, RECORDS)
    begun: list[str] = []

    def counted(connection: object) -> None:
        begun.append(threading.current_thread().name)
        time.sleep(0.05)  # the behaviour under test: a check that takes a while, so that some are not begun yet

    def unreadable(self: object, connection: object, start: int) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(chain, "plan", lambda *args, **kwargs: [counted] * 40)
    monkeypatch.setattr(chain._Walk, "through", unreadable)
    main = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    side = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
            chain.verify_chain(main, side=side, schema=missing_or_changed)
        assert not [thread for thread in threading.enumerate() if thread.name == "wordjudge-chain-check"]
        after = len(begun)
        time.sleep(0.2)  # the behaviour under test: nothing more begins once it has raised
        assert len(begun) == after < 40  # the checks not begun were dropped, not run to the end
    finally:
        main.close()
        side.close()
