"""The audit log proves itself: a forger with the file, against the chain, heads from dockets and a witness,
each record's own consistency, and the server's check before serving. docs/threat-model.md lists these."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from wordjudge.base.errors import AuditUnavailable
from wordjudge.cli.main import main
from wordjudge.judging.final_verdict import Correction, settle
from wordjudge.judging.summary import summarise
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.log.chain import HeadMark, head_text, verify_chain
from wordjudge.log.connections import missing_or_changed
from wordjudge.log.witness import Witness
from wordjudge.model.auth import Role
from wordjudge.model.records import (
    ENTRY_FIELDS,
    Appended,
    Kind,
    Record,
    chained,
    from_body,
    record_body,
    record_hash,
    verdict_of,
)
from wordjudge.service.opening import open_resources
from wordjudge.service.settings import Settings
from wordjudge.storage.audit_schema import MIGRATIONS, SCHEMA
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.app import create_app

from .helpers import Actors, StartServer, device_headers, run_async, write_event
from .test_audit import entry, fill


def challenge(words: str = "cat dog", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 7, "round": 2, "words": words, "request_id": uuid.uuid4().hex, **extra}


def a_log(path: Path, count: int) -> list[Record]:
    log = AuditLog(StateLocation(path.parent))
    log.start()
    records = fill(log, count)
    log.close()
    return records


def forge(path: Path, sql: str, *params: object, restore_triggers: bool = True) -> None:
    """What someone with a shell on the server can do: drop the append-only triggers, change the file, and
    (a careful forger) put the triggers back."""
    connection = sqlite3.connect(path)
    connection.executescript("DROP TRIGGER records_no_update; DROP TRIGGER records_no_delete;")
    connection.execute(sql, params)
    if restore_triggers:
        for name in ("records_no_update", "records_no_delete"):
            connection.execute(dict(SCHEMA)[name])
    connection.commit()
    connection.close()


def rewrite(path: Path, first: int, change: Callable[[Record], Record]) -> None:
    """The strongest forgery without a witness: change record ``first`` and recompute every hash after it."""
    connection = sqlite3.connect(path)
    connection.executescript("DROP TRIGGER records_no_update; DROP TRIGGER records_no_delete;")
    rows = connection.execute("SELECT id, hash, body FROM records WHERE id >= ? ORDER BY id", (first,)).fetchall()
    previous = connection.execute("SELECT hash FROM records WHERE id = ?", (first - 1,)).fetchone()
    prev_hash = previous[0] if previous else "0" * 64
    for record_id, stored_hash, body in rows:
        record = from_body(body, stored_hash)
        record = replace(change(record) if record_id == first else record, prev_hash=prev_hash)
        prev_hash = record_hash(record)
        connection.execute(
            "UPDATE records SET body = ?, hash = ? WHERE id = ?", (record_body(record).decode(), prev_hash, record_id)
        )
    for name in ("records_no_update", "records_no_delete"):
        connection.execute(dict(SCHEMA)[name])
    connection.commit()
    connection.close()


def forget_checkpoints(path: Path) -> None:
    """The forger who knows the checkpoints (where the chain was found intact, in the same file) deletes them too."""
    connection = sqlite3.connect(path)
    connection.execute("DELETE FROM checkpoints")
    connection.commit()
    connection.close()


def verify(path: Path, *heads: str) -> tuple[bool, int | None, str]:
    result = AuditLog(StateLocation(path.parent)).verify([HeadMark.parse(text) for text in heads])
    return result.ok, result.first_bad_id, result.describe()


# -- the tamper table: what verify says for each alteration -----------------------------------------


def test_an_intact_log_passes_against_any_head_from_its_past(tmp_path: Path) -> None:
    records = a_log(tmp_path / AUDIT_FILE, 300)
    heads = [head_text(r.id, r.hash) for r in (records[0], records[149], records[299])]
    assert verify(tmp_path / AUDIT_FILE, *heads)[0]
    ok, _, said = verify(tmp_path / AUDIT_FILE, f"#{records[41].id}:{records[41].hash}")  # as shown, or in full
    assert ok, said
    assert (
        "3 head(s) matched" in AuditLog(StateLocation(tmp_path)).verify([HeadMark.parse(h) for h in heads]).describe()
    )


def test_a_rewritten_history_passes_alone_but_not_against_a_docket_or_a_witness(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    records = a_log(path, 300)
    witnessed = [head_text(r.id, r.hash) for r in records]
    docket = head_text(records[11].id, records[11].hash)
    rewrite(path, 2, lambda r: replace(r, table="99"))
    ok, bad, said = verify(path)  # the checkpoint the log's close wrote at record 300 sees it (issue 36) ...
    assert (ok, bad) == (False, 300)
    assert "record 300 was checked before with hash" in said
    forget_checkpoints(path)
    assert verify(path)[0]  # ... but a chain rebuilt from record 2 on is a chain: alone, it cannot tell
    ok, bad, said = verify(path, docket)
    assert (ok, bad) == (False, 12)
    assert "does not match the head 12:" in said
    assert "altered at or before record 12" in said
    heads = tmp_path / "heads.txt"
    heads.write_text("".join(f"2026-11-23T10:00:00+00:00 {h}\n" for h in witnessed))
    result = AuditLog(StateLocation(path.parent)).verify(_read(heads))
    assert (result.ok, result.first_bad_id) == (False, 2)  # a witness of every head names the very record


def _read(path: Path) -> list[HeadMark]:
    from wordjudge.log.chain import read_heads

    return read_heads(path)


def test_records_cut_off_the_end_fail_against_a_later_head(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    records = a_log(path, 300)
    forge(path, "DELETE FROM records WHERE id > 290")
    ok, bad, said = verify(path)  # below the checkpoint at record 300: named without a head (issue 36) ...
    assert (ok, bad) == (False, 300)
    assert "record 300 was checked before with hash" in said
    forget_checkpoints(path)
    assert verify(path)[0]  # ... and with the checkpoints gone too, only a head beyond the cut can tell
    ok, bad, said = verify(path, head_text(296, records[295].hash))
    assert (ok, bad) == (False, 291)
    assert "the log ends at record 290" in said
    assert "records were cut off" in said
    assert verify(path, head_text(200, records[199].hash))[0]


@pytest.mark.parametrize("salt", ["0f" * 16, None])
@pytest.mark.parametrize("change", [None, {"what": "event", "subject": "Test Open", "before": None, "after": {}}])
def test_a_chained_record_is_the_record_its_fields_make(salt: str | None, change: dict[str, Any] | None) -> None:
    # The writer builds each record once (records.chained); it must be the record, body and hash that building
    # the unhashed record and hashing its body give, which is what verification recomputes.
    made = replace(entry(3), change=change)
    fields: dict[str, Any] = {
        "id": 7,
        "created_at": "2026-11-24T11:00:00.000+00:00",
        "software_version": "9.9",
        "prev_hash": "ab" * 32,
    }
    record, body = chained(made, **fields, salt=salt)
    unhashed = Record(**{name: getattr(made, name) for name in ENTRY_FIELDS}, **fields, salt=salt)
    assert body == record_body(unhashed)
    assert record == replace(unhashed, hash=record_hash(unhashed))
    assert from_body(body, record.hash) == record
    assert ('"salt"' in body.decode(), '"change"' in body.decode()) == (salt is not None, change is not None)


def test_a_back_dated_forged_record_is_caught(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    records = a_log(path, 30)
    last = records[-1]
    forged = replace(
        records[5], id=31, prev_hash=last.hash, request_id="forged-0001", created_at="2026-01-01T00:00:00.000+00:00"
    )
    body = record_body(forged).decode()
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO records (id, hash, body) VALUES (31, ?, ?)", (record_hash(forged), body))
    connection.commit()
    connection.close()
    ok, bad, said = verify(path)
    assert (ok, bad) == (False, 31)
    assert "before the time of the record before it" in said


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda r: replace(r, verdict=r.verdict.__class__("acceptable")), "is not what its per-word results say"),
        (lambda r: replace(r, consequence={**r.consequence, "challenger_penalty": 50}), "its consequence is not what"),
        (lambda r: replace(r, results=r.results[:1]), "but 1 per-word result(s)"),
        (
            lambda r: replace(r, rule="fifty-per-word"),
            "its rule 'fifty-per-word', verdict 'unacceptable' and 2 word(s) are not",
        ),
        (lambda r: replace(r, agrees=True), "is a challenge, yet says whether it agrees"),
    ],
)
def test_each_record_must_agree_with_itself(tmp_path: Path, change: Callable[[Record], Record], problem: str) -> None:
    path = tmp_path / AUDIT_FILE
    a_log(path, 12)  # record 3 is an unacceptable challenge (fill's pattern)
    rewrite(path, 3, change)  # rehashed: the chain alone holds
    ok, bad, said = verify(path)
    assert (ok, bad) == (False, 3), said
    assert problem in said


@pytest.mark.parametrize("typed", ["x", {"a": 1}, None, ["x"]])
def test_a_change_record_whose_typed_words_are_not_an_empty_list_is_caught(tmp_path: Path, typed: object) -> None:
    # SQLite's json_array_length says 0 for a text, an object or null: the check once took each for no words, where
    # PostgreSQL's said NULL and caught it; both now hold a change record to an empty list.
    path = tmp_path / AUDIT_FILE
    log = AuditLog(StateLocation(path.parent))
    log.start()
    records = fill(log, 12, changes=True)  # record 2 is a TD's change
    log.close()
    assert records[1].kind == Kind.CHANGE
    rewrite(path, 2, lambda r: replace(r, words_typed=typed))  # type: ignore[arg-type]  # a forged body
    forget_checkpoints(path)  # the careful forger: only the record's own consistency is left to catch it
    ok, bad, said = verify(path)
    assert (ok, bad) == (False, 2), said
    assert "is a change record, yet has words" in said


@pytest.mark.parametrize(
    ("record_id", "change", "problem"),
    [
        (14, lambda r: replace(r, parent_id=20), "which is not an earlier record"),
        (14, lambda r: replace(r, event="Another Open"), "of another event"),
        (14, lambda r: replace(r, agrees=not r.agrees), "wrongly"),
        (14, lambda r: replace(r, parent_id=None), "is a recheck of no record"),
        (5, lambda r: replace(r, parent_id=3), "is a challenge, yet has a parent"),
    ],
)
def test_links_between_records_must_hold(
    tmp_path: Path, record_id: int, change: Callable[[Record], Record], problem: str
) -> None:
    path = tmp_path / AUDIT_FILE
    a_log(path, 30)  # record 14 re-checks record 13
    rewrite(path, record_id, change)
    ok, bad, said = verify(path)
    assert (ok, bad) == (False, record_id), said
    assert problem in said


def test_a_dropped_trigger_is_tampering(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    a_log(path, 5)
    forge(path, "SELECT 1", restore_triggers=False)
    ok, _, said = verify(path)
    assert not ok
    assert "the log's schema was changed (records_no_update, records_no_delete missing or altered)" in said


# -- heads on the command line: dockets and witness files -------------------------------------------


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.mark.sqlite_only("rewrites the log file with SQLite (PostgreSQL's tampering: test_postgres_store)")
def test_the_docket_head_checks_the_log_from_the_command_line(app: Any, data_dir: Path, actors: Actors) -> None:
    with TestClient(app) as client:
        made = [client.post("/api/challenges", json=challenge(), headers=actors.kiosk).json() for _ in range(3)]
        docket = client.get(f"/api/challenges/{made[0]['id']}/docket", headers=actors.kiosk).json()
        listed = client.get("/api/challenges", headers=actors.alice).json()
    assert docket["head_text"] == f"{made[0]['id']}:{made[0]['hash'][:16]}"
    assert listed["head"]["text"] == f"3:{made[2]['hash'][:16]}"
    passed = run("audit", "verify", "--data-dir", str(data_dir), "--expect-head", docket["head_text"])
    assert passed.exit_code == 0, passed.output  # an intact log against an old docket: no "cut off"
    assert "1 head(s) matched" in passed.output
    forge(data_dir / AUDIT_FILE, "DELETE FROM records WHERE id > 1")
    later = run("audit", "verify", "--data-dir", str(data_dir), "--expect-head", listed["head"]["text"])
    assert later.exit_code == 1
    assert "chain broken at record 2: the log ends at record 1, but the head 3:" in later.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--expect-head", "nonsense"], "'nonsense' (--expect-head) is not a head"),
        (["--expect-head", "12:abc"], "'12:abc' (--expect-head) is not a head"),
        (["--expect-head", "0:3f9a0c17b2d4e865"], "is not a head"),
        (["--heads", "HEADS"], "heads.txt line 3) is not a head"),
        (["--heads", "MISSING"], "cannot be read as a heads file"),
    ],
)
def test_bad_heads_are_a_clear_error_with_exit_status_2(
    tmp_path: Path, data_dir: Path, args: list[str], message: str
) -> None:
    a_log(data_dir / AUDIT_FILE, 3)
    heads = tmp_path / "heads.txt"
    heads.write_text("# witnessed\n2026-11-23T10:00:00+00:00 1:" + "0" * 16 + "\nthis is not a head\n")
    args = [{"HEADS": str(heads), "MISSING": str(tmp_path / "none.txt")}.get(a, a) for a in args]
    result = run("audit", "verify", "--data-dir", str(data_dir), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


# -- the witness --------------------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.sqlite_only("rewrites the log file with SQLite")
def test_a_witness_on_another_machine_catches_a_rewrite_of_the_log(
    data_dir: Path, tmp_path: Path, live_server: StartServer
) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    token = device_headers(data_dir, "witness", Role.MONITOR)["Authorization"].removeprefix("Bearer ")
    out = tmp_path / "witness" / "heads.txt"
    out.parent.mkdir()
    server = live_server(data_dir)
    with Witness(server.base, token, out) as witness:
        assert witness.observe().head is None  # an empty log: nothing to witness
        for n in range(3):
            assert httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk).status_code == 201
            seen = witness.observe()
            assert seen.head is not None
            assert (seen.head.id, seen.problem) == (n + 1, None)
        assert witness.observe().head is None  # unchanged: nothing written
    assert httpx.get(f"{server.base}/api/audit/head", headers=kiosk).status_code == 403  # not for a kiosk
    server.stop()
    lines = out.read_text().splitlines()
    assert len(lines) == 3
    assert run("audit", "verify", "--data-dir", str(data_dir), "--heads", str(out)).exit_code == 0
    rewrite(data_dir / AUDIT_FILE, 2, lambda r: replace(r, table="99"))
    server.start()  # on the rewritten log (the fixture stops it after the test)
    assert httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk).status_code == 503
    assert httpx.get(f"{server.base}/api/health").status_code == 503  # the server's own check found it
    with Witness(server.base, token, out) as witness:
        seen = witness.observe()
    assert seen.problem is not None
    assert "record 3 was " in seen.problem
    assert "the log was rewritten" in seen.problem
    assert "# PROBLEM record 3 was" in out.read_text()
    checked = run("audit", "verify", "--data-dir", str(data_dir), "--heads", str(out))
    assert checked.exit_code == 1
    assert "chain broken at record 2: its hash" in checked.stderr  # the witness names the rewritten record


@pytest.mark.live
def test_the_witness_command(data_dir: Path, tmp_path: Path, live_server: StartServer) -> None:
    kiosk = device_headers(data_dir, "kiosk-1")
    token = device_headers(data_dir, "witness", Role.MONITOR)["Authorization"].removeprefix("Bearer ")
    server = live_server(data_dir)
    httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=kiosk)
    out = tmp_path / "heads.txt"
    done = run("witness", server.base, "--out", str(out), "--token", token, "--once")
    assert done.exit_code == 0, done.output
    assert "head 1:" in done.output
    refused = run("witness", server.base, "--out", str(out), "--token", "wj_wrong", "--once")
    assert refused.exit_code == 1
    assert "the server answered 401" in refused.output
    assert len(out.read_text().splitlines()) == 1


# -- the server checks the log before serving ------------------------------------------------------


@pytest.mark.sqlite_only("drops a trigger in the log file (PostgreSQL's: test_postgres_store)")
def test_a_log_with_a_dropped_trigger_is_served_for_reading_but_refuses_records(data_dir: Path, actors: Actors) -> None:
    path = data_dir / AUDIT_FILE
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        assert client.post("/api/challenges", json=challenge(), headers=actors.kiosk).status_code == 201
    forge(path, 'UPDATE records SET body = replace(body, \'"table":"7"\', \'"table":"8"\')', restore_triggers=False)
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        health = client.get("/api/health")
        assert health.status_code == 503
        assert "the audit log failed its check" in " ".join(health.json()["reasons"])
        refused = client.post("/api/challenges", json=challenge(), headers=actors.kiosk)
        assert refused.status_code == 503
        assert "failed its check" in refused.json()["error"]
        assert client.get("/api/challenges/1", headers=actors.alice).status_code == 200  # still readable


def test_the_start_checks_what_came_since_its_checkpoint_and_the_whole_log_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("wordjudge.log.audit._WHOLE_CHECK_AFTER", 0.1)  # a server waits 3 s: its first verdicts first
    path = tmp_path / AUDIT_FILE
    a_log(path, 200)  # its start wrote a checkpoint; so does each start after it
    log = AuditLog(StateLocation(path.parent))
    log.start()
    log.append_sync(entry(201))
    log.close()
    # An edit to an old record, triggers put back: after the checkpoint, so the start's quick check passes ...
    forge(path, 'UPDATE records SET body = replace(body, \'"table":"4"\', \'"table":"5"\') WHERE id = 3')
    quick = AuditLog(StateLocation(path.parent))
    quick.start()
    assert quick.integrity.at_start is not None
    assert quick.integrity.at_start.ok
    assert "0 record(s) after record 201" in quick.integrity.at_start.describe()
    quick.close()
    # ... and the whole check, in the background, finds it and stops new records.
    whole = AuditLog(StateLocation(path.parent))
    whole.start(check_whole=True)
    try:
        deadline = time.monotonic() + 30
        while whole.integrity.whole_running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert whole.integrity.whole is not None
        assert whole.integrity.whole.first_bad_id == 3
        with pytest.raises(AuditUnavailable, match="failed its check"):
            whole.append_sync(entry(202))
    finally:
        whole.close()


def test_a_side_connection_that_fails_fails_the_check_in_the_callers_thread(tmp_path: Path) -> None:
    # A closing log interrupts its background check's two connections: the SQL checks on the side connection,
    # in a thread of their own, failed there unseen (an unhandled exception in a thread) and the check went on.
    path = tmp_path / AUDIT_FILE
    a_log(path, 20)
    main, side = (sqlite3.connect(path, check_same_thread=False) for _ in range(2))  # as the log's own
    side.close()
    try:
        with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
            verify_chain(main, side=side, deep=True, schema=missing_or_changed)
    finally:
        main.close()


def test_a_rehashed_log_fails_the_start_against_its_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    a_log(path, 50)
    log = AuditLog(StateLocation(path.parent))
    log.start()  # checkpoint at record 50
    log.close()
    rewrite(path, 10, lambda r: replace(r, table="99"))
    again = AuditLog(StateLocation(path.parent))
    again.start()
    try:
        checked = again.integrity.at_start
        assert checked is not None
        assert not checked.ok
        assert checked.first_bad_id == 50
        assert "the log was rewritten" in checked.describe()
    finally:
        again.close()


# -- the first layout, upgraded ------------------------------------------------------------------------


def first_layout_log(path: Path, records: list[Record]) -> sqlite3.Connection:
    """A log as the first layout (migrations 0001 and 0002) stored ``records``: a column per field."""
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, step in MIGRATIONS[:2]:
        assert isinstance(step, str)
        old.executescript(step)
        old.execute("INSERT INTO migrations VALUES (?, '2026-11-01T00:00:00+00:00')", (name,))
    columns = [row[1] for row in old.execute("PRAGMA table_info(records)")]
    for record in records:
        row = {**record.__dict__, "table_label": record.table}
        values = [
            json.dumps(row[c]) if c in ("words_typed", "words", "results", "consequence") else row[c] for c in columns
        ]
        values = [v.value if hasattr(v, "value") else v for v in values]
        old.execute(f"INSERT INTO records ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values)
    return old


def test_a_log_of_the_first_layout_is_upgraded_with_every_hash_kept(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    (tmp_path / "model").mkdir()  # a folder of its own: the model log whose records the old layout stores
    records = a_log(tmp_path / "model" / AUDIT_FILE, 40)
    old = first_layout_log(path, records)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):  # the first layout's triggers held too
        old.execute("UPDATE records SET verdict = 'acceptable' WHERE id = 21")
    old.close()
    upgraded = AuditLog(StateLocation(path.parent))
    upgraded.start()
    try:
        assert [upgraded.get(r.id) for r in records] == records
        assert upgraded.verify().ok
    finally:
        upgraded.close()


def test_a_record_altered_in_the_first_layout_stays_caught_after_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    (tmp_path / "model").mkdir()  # a folder of its own: the model log whose records the old layout stores
    records = a_log(tmp_path / "model" / AUDIT_FILE, 10)
    # Record 4 altered, its hash the original's: the upgrade keeps the evidence.
    first_layout_log(path, [replace(r, table="99") if r.id == 4 else r for r in records]).close()
    upgraded = AuditLog(StateLocation(path.parent))
    upgraded.start()
    try:
        assert upgraded.integrity.broken is not None
        assert upgraded.integrity.broken.first_bad_id == 4
    finally:
        upgraded.close()


# -- no phantom records: a request without a clear answer is settled -----------------------------------


def test_a_request_with_no_clear_answer_is_settled_with_the_server(client: TestClient, actors: Actors) -> None:
    sent = challenge("cat qzx")
    made = client.post("/api/challenges", json=sent, headers=actors.kiosk).json()
    settled = client.get(f"/api/challenges/requests/{sent['request_id']}", headers=actors.kiosk)
    assert settled.status_code == 200
    assert (settled.json()["id"], settled.json()["verdict"]) == (made["id"], "unacceptable")
    assert "results" not in settled.json()
    never = client.get(f"/api/challenges/requests/{uuid.uuid4().hex}", headers=actors.kiosk)
    assert never.status_code == 404
    assert "was not recorded" in never.json()["error"]
    other = client.get(f"/api/challenges/requests/{sent['request_id']}", headers=actors.kiosk2)
    assert other.status_code == 404  # another device's request is not this one's


class _FailingAfterCommit(AuditLog):
    """A log whose writes are committed, and then reported failed (a fault between the commit and the answer)."""

    async def append(self, entry: Any) -> Appended:
        await super().append(entry)
        raise AuditUnavailable("error.audit.cannot_write", reason="disk I/O error")


def test_a_write_fault_after_the_commit_answers_with_the_record_not_503(data_dir: Path, settings: Settings) -> None:
    resources = open_resources(settings)
    resources.audit.close()
    resources.audit = resources.challenges.audit = _FailingAfterCommit(StateLocation(data_dir))
    resources.audit.start()
    from wordjudge.model.auth import Principal

    kiosk = Principal("kiosk-1", Role.KIOSK, "kiosk")
    try:
        appended = run_async(
            resources.challenges.adjudicate(
                kiosk, division="Open", table=4, round_number=1, words="cat", request_id="req-00000001"
            )
        )
        assert (appended.record.id, appended.replayed) == (1, False)
        assert resources.audit.head.records == 1
    finally:
        resources.close()


# -- the summary, kept as the log is written ------------------------------------------------------------


def test_the_summary_from_its_tallies_is_the_summary_of_the_records(client: TestClient, actors: Actors) -> None:
    words = ["cat", "dog qi", "emu cat", "zzv", "cat dog emu", "qi"]
    for n in range(60):
        body = challenge(words[n % 6], table=n % 9 + 1, round=n % 4 + 1)
        assert client.post("/api/challenges", json=body, headers=actors.alice).status_code == 201
    recheck = {"request_id": uuid.uuid4().hex}
    assert client.post("/api/challenges/3/recheck", json=recheck, headers=actors.bob).status_code == 201
    # Final verdicts: #7 (round 3) and #8 ruled the other way, #4 reissued with words of the other verdict.
    for parent, verdict in ((7, "unacceptable"), (8, "acceptable")):
        ruling = {"verdict": verdict, "note": "checked", "request_id": uuid.uuid4().hex}
        assert client.post(f"/api/challenges/{parent}/ruling", json=ruling, headers=actors.bob).status_code == 201
    reissue = {"words": "cat", "reason": "the board", "request_id": uuid.uuid4().hex}
    assert client.post("/api/challenges/4/reissue", json=reissue, headers=actors.bob).status_code == 201
    every = _all_records(client, actors, "")
    finals = {
        r.id: settle([f for f in every if f.id == r.id or _family_of(f, every) == r.id])
        for r in every
        if r.kind.value == "challenge"
    }
    changed = {
        cid: Correction(cid, every[cid - 1].division, every[cid - 1].round, verdict_of(every[cid - 1]), f.verdict)
        for cid, f in finals.items()
        if f.verdict is not every[cid - 1].verdict
    }
    assert sorted(changed) == [4, 7, 8]
    for query in ("", "?division=Open", "?division=Open&round=3"):
        fast = client.get(f"/api/summary{query}", headers=actors.alice).json()
        records = [
            r for r in _all_records(client, actors, query) if r.kind.value == "challenge"
        ]  # the slow way, from every record
        assert fast == summarise(records, changed), query
    whole = client.get("/api/summary", headers=actors.alice).json()["total"]
    first = sum(str(r.verdict) == "acceptable" for r in every if r.kind.value == "challenge")
    assert (whole["acceptable"], whole["overturned"], whole["awaiting_ruling"]) == (first - 1 + 1 + 1, 3, 0)
    by_table = client.get("/api/summary?table=3", headers=actors.alice).json()  # no tally: from the records
    assert by_table["total"]["challenges"] == sum(1 for n in range(60) if n % 9 + 1 == 3)


def _family_of(record: Record, every: list[Record]) -> int:
    while record.parent_id is not None:
        record = every[record.parent_id - 1]
    return record.id


def _all_records(client: TestClient, actors: Actors, query: str) -> list[Record]:
    lines = client.get(f"/api/export?format=jsonl{'&' + query[1:] if query else ''}", headers=actors.alice)
    out = []
    for line in lines.text.splitlines():
        data = json.loads(line)
        data.pop("head")
        # The export's own columns (the final verdict of each challenge) are not the record's: its hash covers it.
        record = {k: v for k, v in data.items() if k != "hash" and not k.startswith("final_")}
        out.append(from_body(json.dumps(record), data["hash"]))
    return out


# -- one parser for filter times, in the API and the CLI ---------------------------------------------------


def test_times_with_an_offset_filter_the_same_rows_in_the_api_and_the_cli(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    for _ in range(3):
        client.post("/api/challenges", json=challenge(), headers=actors.kiosk)
    first = client.get("/api/challenges/1", headers=actors.alice).json()["created_at"]  # UTC, as stored
    # The same moment written in another zone: 1 hour ahead, with its offset.
    from datetime import datetime, timedelta, timezone

    moment = datetime.fromisoformat(first).astimezone(timezone(timedelta(hours=1)))
    shifted = moment.isoformat(timespec="milliseconds")
    api = client.get("/api/challenges", params={"since": shifted}, headers=actors.alice).json()["records"]
    cli = run("audit", "export", "--format", "jsonl", "--since", shifted, "--data-dir", str(data_dir))
    assert cli.exit_code == 0, cli.output
    assert sorted(r["id"] for r in api) == sorted(json.loads(line)["id"] for line in cli.stdout.splitlines())
    assert len(api) == 3
    naive = run("audit", "export", "--format", "jsonl", "--since", "2026-11-23T10:00:00", "--data-dir", str(data_dir))
    assert naive.exit_code == 2
    assert "has no time zone" in naive.output
    bad = client.get("/api/challenges", params={"since": "2026-11-23T10:00:00"}, headers=actors.alice)
    assert bad.status_code == 422
    assert "has no time zone" in bad.json()["error"]
