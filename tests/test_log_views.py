"""The TD's views at any size (issue 48): each found through an index, the primary key or the counts kept with the
records, never a scan of the log (their query plans, not their times); the counts kept equal to a full count; an
older log migrated to them."""

from __future__ import annotations

import itertools
import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from tests.test_audit import child, entry, fill
from wordjudge.judging.final_verdict import awaiting_ruling, correction_sums, corrections, read_corrections
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.log.reading import TALLY_COUNTS, TALLY_WORDS, children_sql, count_sql, find_sql, get_sql
from wordjudge.model.records import INSERT_RECORD, Kind, RecordFilter, Verdict, chained
from wordjudge.storage import audit_schema, audit_schema_pg, postgres
from wordjudge.storage.dialect import SQLITE_MIGRATIONS_TABLE, StateLocation
from wordjudge.web.answers import answer

EVENT = "Test Open"  # test_audit.entry's (its changes are of "Spring Open")


@pytest.fixture
def audit(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[AuditLog]:
    """A log of 600 mixed records (challenges, re-checks, reissues, rulings, TD's changes): in SQLite; in the
    --backend's database for a test that asks for ``database_url``."""
    database = request.getfixturevalue("database_url") if "database_url" in request.fixturenames else None
    log = AuditLog(StateLocation(tmp_path, database))
    log.start()
    fill(log, 600, changes=True)
    yield log
    log.close()


# The views of docs/bench-log.md (tests/bench/bench_log.py's), and a few more a TD may ask for.
VIEWS = {
    "newest": RecordFilter(),
    "division": RecordFilter(division="A"),
    "round + table": RecordFilter(round=3, table="7"),
    "device": RecordFilter(actor="kiosk-1"),
    "verdict + division": RecordFilter(verdict=Verdict.UNACCEPTABLE, division="A"),
    "kind": RecordFilter(kind=Kind.RULING),
    "needs ruling": RecordFilter(needs_ruling=True),
    "time range": RecordFilter(since="2026-01-01T00:00:00.000+00:00", until="2099-01-01T00:00:00.000+00:00"),
    "word": RecordFilter(word="QI"),
    "verdict": RecordFilter(verdict=Verdict.ACCEPTABLE),
    "round": RecordFilter(round=3),
    "table": RecordFilter(table="7"),
    "division + round": RecordFilter(division="A", round=3),
}


def _scans(plan: list[str]) -> list[str]:
    """The steps of a SQLite plan that read the records without an index (a scan of the log), or sort what an index
    found (every match read, to give the newest)."""
    return [step for step in plan if (_SCAN.match(step) and "INDEX" not in step) or "TEMP B-TREE" in step]


_SCAN = re.compile(r"SCAN (r|records|t)( |$)")  # the records (SELECT_RECORDS' r; the time index's t), not the counts'


@pytest.mark.parametrize("view", list(VIEWS))
def test_each_td_view_reads_through_an_index_or_the_counts_never_a_scan_of_the_log(audit: AuditLog, view: str) -> None:
    where = VIEWS[view]
    if where.needs_ruling is not None:
        where = RecordFilter(needs_ruling=True, awaiting=awaiting_ruling(audit, EVENT))
    found = audit.explain(*find_sql(where, audit.dialect.text, limit=101))
    older = audit.explain(*find_sql(where, audit.dialect.text, limit=101, before_id=300))
    counted = count_sql(where, audit.dialect.text)
    count = audit.explain(*counted) if counted is not None else []
    assert found
    assert older
    assert _scans(found) == [], found
    assert _scans(older) == [], older
    assert _scans(count) == [], count
    assert any("INDEX" in step or "PRIMARY KEY" in step for step in found)
    if counted is not None and view not in ("newest", "time range"):  # those: the last id, a range's ids
        assert any("INDEX" in step or "PRIMARY KEY" in step or "record_counts" in step for step in count), count


def test_the_summary_and_a_pages_linked_records_read_through_indexes(audit: AuditLog) -> None:
    for sql, params in (
        (TALLY_COUNTS, (EVENT,)),
        (TALLY_WORDS, (EVENT, 1, "A", 0, 10)),
        children_sql(list(range(1, 101)), audit.dialect.text),
        get_sql(300),
    ):
        plan = audit.explain(sql, params)
        # The tallies of an event are sorted (a few hundred rows at any size); the records never read whole.
        assert [step for step in plan if _SCAN.match(step)] == [], plan
        assert any("INDEX" in step or "PRIMARY KEY" in step for step in plan), plan


def test_the_plan_check_finds_a_scan_of_the_log(audit: AuditLog) -> None:
    # What the check above would say of a view that walked the records (the unfiltered list's count was such a walk).
    assert _scans(audit.explain("SELECT count(*) FROM records r WHERE r.rule = ?", ["x"])) != []
    assert _scans(audit.explain("SELECT r.id FROM records r WHERE r.verdict = ? ORDER BY r.id DESC", ["x"])) != []


def _every_filter() -> Iterator[RecordFilter]:
    """Each filter the counts are kept by, alone and two by two, with values records have and one they do not."""
    values: dict[str, list[Any]] = {
        "division": ["A", "B", "Nowhere"],
        "round": [1, 3, 20],
        "kind": list(Kind),
        "verdict": list(Verdict),
        "actor": ["kiosk-1", "td-alice", "td-bob", "nobody"],
        "event": [EVENT, "Spring Open", "Other"],
    }
    for name, options in values.items():
        for value in options:
            yield RecordFilter(**{name: value})
    for (one, first), (two, second) in itertools.combinations(values.items(), 2):
        for a, b in itertools.product(first[:2], second[:2]):
            yield RecordFilter(**{one: a, two: b})
    yield RecordFilter(since="2026-01-01T00:00:00.000+00:00")
    yield RecordFilter(until="2026-01-01T00:00:00.000+00:00")
    yield RecordFilter(since="2099-01-01T00:00:00.000+00:00")


@pytest.mark.usefixtures("database_url")  # on both backends
def test_the_counts_kept_with_the_records_equal_a_count_of_the_log(audit: AuditLog) -> None:
    for n in range(601, 641):  # more, after the first batches: the counts go on being kept
        audit.append_sync(entry(n, actor=f"kiosk-{n % 3}"))
    assert audit.verify().ok
    kinds = {record.kind for record in audit.iterate()}
    assert kinds == set(Kind)  # challenges, re-checks, reissues, rulings and changes
    for where in _every_filter():
        clause, params = where.where(audit.dialect.text)
        counted = audit.select(f"SELECT count(*) FROM records r{clause}", params)[0][0]
        assert audit.count(where) == counted, where
    awaiting = awaiting_ruling(audit, EVENT)
    assert awaiting  # the fill leaves disagreeing re-checks without a ruling
    for wanted in (True, False):
        where = RecordFilter(needs_ruling=wanted, awaiting=awaiting)
        clause, params = where.where(audit.dialect.text)
        assert audit.count(where) == audit.select(f"SELECT count(*) FROM records r{clause}", params)[0][0]
    kept = audit.select("SELECT sum(records) FROM record_counts")[0][0]
    assert kept == audit.head.id == 640


def _as_before_the_views(tmp_path: Path, database: str | None) -> None:
    """The log at ``tmp_path`` (or in ``database``) as the migration before the views' left it: without what
    SQLite's 0005_views or PostgreSQL's 0004_views adds, and without it noted as applied."""
    if database is None:
        connection = sqlite3.connect(tmp_path / AUDIT_FILE)
        with connection:
            connection.execute("DROP TRIGGER records_count")
            connection.execute("DROP INDEX records_table_round")
            connection.execute("DROP TABLE record_counts")
            connection.execute(f"DELETE FROM {SQLITE_MIGRATIONS_TABLE} WHERE name = '0005_views'")
        older = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE sql IS NOT NULL")}
        connection.close()
        added = {"records_count", "records_table_round", "record_counts"}
        assert older - {SQLITE_MIGRATIONS_TABLE} == {name for name, _ in audit_schema.SCHEMA} - added
        return
    pg = postgres.connect_writer(database)
    try:
        pg.execute("DROP TRIGGER records_counted ON records")
        pg.execute("DROP FUNCTION records_counted()")
        pg.execute("DROP INDEX records_table_round")
        pg.execute("DROP TABLE record_counts")
        pg.execute(f"DELETE FROM {audit_schema_pg.MIGRATIONS_TABLE} WHERE name = '0004_views'")
        pg.execute("COMMIT")
    finally:
        pg.close()


@pytest.mark.usefixtures("database_url")  # on both backends
def test_an_older_log_is_migrated_to_the_views_index_and_counts(tmp_path: Path, database_url: str | None) -> None:
    log = AuditLog(StateLocation(tmp_path, database_url))
    log.start()
    fill(log, 300, changes=True)
    log.close()
    _as_before_the_views(tmp_path, database_url)
    before = AuditLog(StateLocation(tmp_path, database_url))
    assert not before.verify().ok  # what the views' migration adds is part of the schema the chain check holds
    before.close_readers()

    log = AuditLog(StateLocation(tmp_path, database_url))
    log.start()
    try:
        result = log.verify()
        assert result.ok, result.describe()
        assert result.records == 300
        assert log.select("SELECT sum(records) FROM record_counts")[0][0] == 300
        for where in _every_filter():
            clause, params = where.where(log.dialect.text)
            assert log.count(where) == log.select(f"SELECT count(*) FROM records r{clause}", params)[0][0], where
        log.append_sync(entry(301))
        assert (
            log.count(RecordFilter(event=EVENT))
            == log.select("SELECT count(*) FROM records WHERE event = ?", [EVENT])[0][0]
        )
        if database_url is None:
            plan = log.explain(*find_sql(RecordFilter(round=3, table="7"), log.dialect.text, limit=101))
            assert any("records_table_round" in step for step in plan), plan
    finally:
        log.close()


@pytest.mark.parametrize(
    "body",
    [
        {
            "records": [{"id": 1, "words": ("CAT", "QI"), "kind": Kind.RULING, "at": "x", "share": 0.5, "ok": True}],
            "nested": [[None, 1, "x", {"deep": (Verdict.ACCEPTABLE, 2.0), "é": "déjà\u202f!"}]],
            "at": datetime(2026, 11, 29, 6, 0, tzinfo=UTC),
            "path": Path("/tmp/x"),
            "set": {"only"},
            3: "a key that is no string",
        },
        {Path("/a key that is a path"): 1},  # a key JSON's encoder refuses: jsonable_encoder's own way
        [1, 2.5, True, None, "text"],
    ],
)
def test_answers_are_the_bytes_fastapi_sends(body: Any) -> None:
    # The API's answers skip jsonable_encoder for what JSON holds as it is (a page's 20,000 values): the same bytes.
    assert answer(body).body == JSONResponse(jsonable_encoder(body)).body


def test_the_summarys_sums_and_the_ruling_queue_are_kept_as_the_corrections_are(audit: AuditLog) -> None:
    assert correction_sums(audit, EVENT)  # read once, then kept up to date as records are added:
    for n in range(601, 661):  # rulings, reissues and re-checks of challenges already summed
        kind = (Kind.RULING, Kind.REISSUE, Kind.RECHECK)[n % 3]
        audit.append_sync(child(n, kind, 1 + 3 * (n - 601), "td-alice"))
    found = {i: c for i, c in read_corrections(audit, EVENT).items() if c is not None}  # from the whole log
    assert corrections(audit, EVENT) == found
    sums: dict[tuple[str, int], list[int]] = {}
    for c in found.values():
        place = sums.setdefault((c.division, c.round or 0), [0, 0, 0])
        place[0] += (c.final is Verdict.ACCEPTABLE) - (c.first is Verdict.ACCEPTABLE)
        place[1] += c.final is None
        place[2] += c.final is not None
    kept = {place: three for place, three in correction_sums(audit, EVENT).items() if any(three)}  # 0s: all undone
    assert kept == {place: tuple(three) for place, three in sums.items() if any(three)}
    assert kept
    assert awaiting_ruling(audit, EVENT) == {c.challenge_id for c in found.values() if c.final is None}


def test_a_time_range_counts_the_records_its_list_lists_when_a_record_is_dated_back(tmp_path: Path) -> None:
    # A clock's correction dates a record before the one it follows: a range without a start still starts at the
    # first record (as the list's own clause does), not at the earliest time.
    log = AuditLog(StateLocation(tmp_path))
    log.start()
    fill(log, 50)
    head = log.head
    log.close()
    record, body = chained(
        entry(51),
        id=51,
        created_at="2000-01-01T00:00:00.000+00:00",
        software_version="x",
        prev_hash=head.hash,
        salt=None,
    )
    connection = sqlite3.connect(tmp_path / AUDIT_FILE)
    with connection:
        connection.execute(INSERT_RECORD, (record.id, record.hash, body.decode()))
    connection.close()
    reader = AuditLog(StateLocation(tmp_path))
    try:
        for where in (
            RecordFilter(until="2001-01-01T00:00:00.000+00:00"),
            RecordFilter(until="2099-01-01T00:00:00.000+00:00"),
            RecordFilter(since="2001-01-01T00:00:00.000+00:00"),
            RecordFilter(since="1999-01-01T00:00:00.000+00:00", until="2099-01-01T00:00:00.000+00:00"),
        ):
            clause, params = where.where(reader.dialect.text)
            listed = reader.select(f"SELECT count(*) FROM records r{clause}", params)[0][0]
            assert reader.count(where) == listed == len(reader.find(where, limit=1000)), where
    finally:
        reader.close_readers()
