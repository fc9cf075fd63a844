"""The audit log in a real PostgreSQL (a throwaway cluster, tests/postgres.py): what holds there that SQLite's
tests show of the file, and what only a database server can do (a second writer, a lost connection, a wrong
password, a server that is not there)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx2 as httpx
import psycopg
import psycopg.errors
import pytest
from click.testing import CliRunner

from wordjudge.access.access_store import ACCESS_FILE, AccessStore
from wordjudge.base.datadir import open_event_folder
from wordjudge.base.errors import AccessUnavailable, AuditUnavailable, InvalidInput, Unauthorized
from wordjudge.cli.main import main
from wordjudge.log.audit import AUDIT_FILE, AuditLog, open_log
from wordjudge.log.chain import Verification
from wordjudge.log.connections import DATABASE_NOTE, note_place
from wordjudge.model.auth import Role
from wordjudge.model.records import Kind, RecordFilter, Verdict
from wordjudge.storage import audit_schema_pg
from wordjudge.storage.dialect import StateLocation
from wordjudge.storage.postgres import shown

from .helpers import CHEAP_HASHER, StartServer, free_port, serve_process
from .postgres import Cluster
from .test_audit import child, entry, fill
from .test_cli_access import run

# Every test here names its PostgreSQL database itself (postgres_url): they run once, in the suite's first pass.


@pytest.fixture
def pg_log(tmp_path: Path, postgres_url: str) -> Iterator[AuditLog]:
    log = AuditLog(StateLocation(tmp_path, postgres_url))
    log.start()
    yield log
    log.close()


def _verified(data_dir: Path, url: str) -> Verification:
    """The whole check of the log in ``url``, by a log opened for it alone (as `wordjudge audit verify` does)."""
    log = open_log(StateLocation(data_dir, url))
    try:
        return log.verify()
    finally:
        log.close()


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True)


def test_the_log_refuses_update_delete_and_truncate_and_still_verifies(pg_log: AuditLog, postgres_url: str) -> None:
    fill(pg_log, 5)
    with _admin(postgres_url) as admin:
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only: records cannot be changed"):
            admin.execute("UPDATE records SET body = replace(body, 'unacceptable', 'acceptable') WHERE id = 3")
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only: records cannot be changed"):
            admin.execute("UPDATE records SET verdict = 'acceptable' WHERE id = 1")
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only: records cannot be deleted"):
            admin.execute("DELETE FROM records WHERE id = 3")
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only: records cannot be deleted"):
            admin.execute("TRUNCATE records")
        assert admin.execute("SELECT count(*) FROM records").fetchone() == (5,)
    assert pg_log.verify().ok


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        ("ALTER TABLE records DISABLE TRIGGER records_no_delete", "records_no_delete"),
        ("DROP TRIGGER records_no_truncate ON records", "records_no_truncate"),
        ("ALTER TABLE records DROP CONSTRAINT records_derived", "records_derived"),
        (
            "ALTER TABLE records DROP CONSTRAINT records_derived, ADD CONSTRAINT records_derived "
            f"{audit_schema_pg.DERIVED_CHECK} NOT VALID",
            "records_derived",
        ),
        ("ALTER TABLE records DISABLE TRIGGER records_read", "records_read"),
        ("ALTER TABLE records ALTER COLUMN verdict TYPE varchar(20)", "verdict"),
        (
            audit_schema_pg.READ_RIGHT_FUNCTION.split(" AS $$")[0] + " AS $$BEGIN RETURN true; END$$",
            "records_read_right",
        ),
        (
            "CREATE OR REPLACE FUNCTION records_append_only() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN OLD;"
            " END$$",
            "records_append_only",
        ),
        ("CREATE RULE keep_quiet AS ON DELETE TO records DO INSTEAD NOTHING", "keep_quiet (a rule)"),
        ("ALTER TABLE records ENABLE ROW LEVEL SECURITY", "records (row-level security)"),
    ],
)
def test_a_schema_changed_behind_the_servers_back_fails_the_check(
    tmp_path: Path, postgres_url: str, tamper: str, named: str
) -> None:
    log = AuditLog(StateLocation(tmp_path, postgres_url))
    log.start()
    fill(log, 3)
    log.close()
    with _admin(postgres_url) as admin:
        admin.execute(tamper)
    result = _verified(tmp_path, postgres_url)
    assert not result.ok
    assert named in result.describe()
    again = AuditLog(StateLocation(tmp_path, postgres_url))
    again.start()  # it starts, for reading, and refuses every record until the TD has looked
    try:
        with pytest.raises(AuditUnavailable, match="failed its check"):
            again.append_sync(entry(9))
    finally:
        again.close()


def test_a_record_rewritten_with_the_triggers_off_breaks_the_chain(pg_log: AuditLog, postgres_url: str) -> None:
    records = fill(pg_log, 6)
    with _admin(postgres_url) as admin:
        # A superuser can switch triggers off for a session (replication's role), not the CHECK: a column cannot
        # be made to say other than its body, and a body changed (its column with it) breaks the chain.
        admin.execute("SET session_replication_role = replica")
        with pytest.raises(psycopg.errors.CheckViolation, match="records_derived"):
            admin.execute("UPDATE records SET table_label = '9' WHERE id = 3")
        with pytest.raises(psycopg.errors.CheckViolation, match="records_derived"):
            admin.execute("""UPDATE records SET body = replace(body, '"table":"4"', '"table":"9"') WHERE id = 3""")
        admin.execute(
            """UPDATE records SET body = replace(body, '"table":"4"', '"table":"9"'), table_label = '9' WHERE id = 3"""
        )
        assert admin.execute("SELECT table_label FROM records WHERE id = 3").fetchone() == ("9",)
    assert records[2].table == "4"
    result = pg_log.verify()
    assert not result.ok
    assert result.first_bad_id == 3
    assert "altered" in result.describe()


def test_every_filter_and_the_tallies_read_the_same_as_in_sqlite(tmp_path: Path, postgres_url: str) -> None:
    logs = [
        AuditLog(StateLocation(tmp_path / "a")),
        AuditLog(StateLocation(tmp_path, postgres_url)),
    ]
    try:
        for log in logs:
            log.start()
            fill(log, 120)
            log.append_sync(child(500, Kind.RECHECK, 3, "td-alice"))
        filters = [
            RecordFilter(division="A"),
            RecordFilter(table="1"),
            RecordFilter(kind=Kind.RECHECK),
            RecordFilter(word="QI", round=3),
            RecordFilter(words=("QI", "WORD12")),
            RecordFilter(actor="td-bob"),
            RecordFilter(hash_prefix=logs[0].head.hash[:4]),
            RecordFilter(needs_ruling=True, awaiting=frozenset({3, 5})),
            RecordFilter(needs_ruling=False, awaiting=frozenset({3, 5})),
        ]
        for where in filters:
            sqlite, pg = ([r.id for r in log.find(where, limit=1000)] for log in logs)
            if where.hash_prefix is None:  # hashes differ between the two logs (their salts)
                assert sqlite == pg, where
                assert logs[0].count(where) == logs[1].count(where)
        assert logs[0].tallies("Test Open", 5) == logs[1].tallies("Test Open", 5)
        assert [r.id for r in logs[1].children(3)] == [r.id for r in logs[0].children(3)]
    finally:
        for log in logs:
            log.close()


# The word index and tallies as logs made before migration 0002 kept them: a trigger once a row.
_ROW_LEVEL_INDEX = """
BEGIN
    INSERT INTO record_words (word, record_id)
    SELECT DISTINCT w, NEW.id FROM jsonb_array_elements_text(NEW.body::jsonb -> 'words') AS w
    ON CONFLICT DO NOTHING;
    IF NEW.kind = 'challenge' THEN
        INSERT INTO tallies (event, scope, division, round_key, challenges, acceptable, first_id)
        VALUES (NEW.event, 0, '', 0, 1, (NEW.verdict = 'acceptable')::integer, NEW.id),
            (NEW.event, 1, NEW.division, 0, 1, (NEW.verdict = 'acceptable')::integer, NEW.id),
            (NEW.event, 2, NEW.division, coalesce(NEW.round, 0), 1, (NEW.verdict = 'acceptable')::integer, NEW.id)
        ON CONFLICT (event, scope, division, round_key) DO UPDATE
            SET challenges = tallies.challenges + 1, acceptable = tallies.acceptable + excluded.acceptable;
        INSERT INTO word_tallies (event, scope, division, round_key, word, challenges, first_id)
        SELECT NEW.event, s.scope, s.division, s.round_key, w.word, 1, NEW.id
        FROM (SELECT DISTINCT value AS word FROM jsonb_array_elements_text(NEW.body::jsonb -> 'words') AS value) AS w
        CROSS JOIN (VALUES (0, '', 0), (1, NEW.division, 0), (2, NEW.division, coalesce(NEW.round, 0)))
            AS s (scope, division, round_key)
        ON CONFLICT (event, scope, division, round_key, word) DO UPDATE SET challenges = word_tallies.challenges + 1;
    END IF;
    RETURN NULL;
END
"""


def _twin_logs_of_30(tmp_path: Path, postgres_url: str) -> AuditLog:
    """The same 30 records in a log in ``postgres_url``, closed (for a test to make it as an older schema had it),
    and in a SQLite log, returned open (what the migrated log must read and count as)."""
    sqlite = AuditLog(StateLocation(tmp_path / "a"))
    pg = AuditLog(StateLocation(tmp_path, postgres_url))
    for log in (sqlite, pg):
        log.start()
        fill(log, 30)
    pg.close()
    return sqlite


def test_a_log_made_with_the_index_kept_once_a_row_is_brought_up_and_counts_on(
    tmp_path: Path, postgres_url: str
) -> None:
    """Migration 0002: a log whose index and tallies a row-level trigger kept gets the statement-level one, passes
    the start's schema check, and its tallies go on as SQLite's do for the same records."""
    sqlite = _twin_logs_of_30(tmp_path, postgres_url)
    with _admin(postgres_url) as admin:
        admin.execute("DROP TRIGGER records_indexed ON records")
        admin.execute(f"CREATE FUNCTION records_row() RETURNS trigger LANGUAGE plpgsql AS $${_ROW_LEVEL_INDEX}$$")
        admin.execute(
            "CREATE TRIGGER records_indexed AFTER INSERT ON records FOR EACH ROW EXECUTE FUNCTION records_row()"
        )
        admin.execute("DELETE FROM audit_migrations WHERE name = '0002_index_per_statement'")
    pg = AuditLog(StateLocation(tmp_path, postgres_url))
    pg.start()
    try:
        assert pg.integrity.at_start is not None
        assert pg.integrity.at_start.ok, pg.integrity.at_start.describe()
        for log in (sqlite, pg):
            for future in [log.submit(entry(n, actor=f"kiosk-{n % 4}")) for n in range(31, 91)]:
                future.result()
        assert pg.tallies("Test Open", 10) == sqlite.tallies("Test Open", 10)
        assert [r.id for r in pg.find(RecordFilter(word="QI"), limit=500)] == [
            r.id for r in sqlite.find(RecordFilter(word="QI"), limit=500)
        ]
    finally:
        pg.close()
        sqlite.close()


def _schema_before_0003() -> list[str]:
    """The log's schema as migrations 0001 and 0002 made it: every column generated from the body."""
    generated = ", ".join(
        f"{name} {kind} GENERATED ALWAYS AS ({value.replace('d ->', 'body::jsonb ->')}) STORED"
        for name, kind, value in audit_schema_pg.DERIVED
    )
    table = f"CREATE TABLE records (id BIGINT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, body TEXT NOT NULL, {generated})"
    now = [audit_schema_pg.READ_RIGHT_FUNCTION, audit_schema_pg.RECORDS_TABLE]
    return [table] + [
        statement
        for statement in audit_schema_pg.SCHEMA
        if statement not in now and "records_read_body" not in statement
    ]


def test_a_log_made_with_generated_columns_is_brought_up_and_reads_the_same(tmp_path: Path, postgres_url: str) -> None:
    """Migration 0003: a log whose columns were generated keeps its rows' values, passes the start's schema check
    (the CHECK validated on every row), and reads and counts on as SQLite's does for the same records."""
    sqlite = _twin_logs_of_30(tmp_path, postgres_url)
    columns = ", ".join(name for name, _, _ in audit_schema_pg.DERIVED)
    with _admin(postgres_url) as admin:
        before = admin.execute(f"SELECT id, {columns} FROM records ORDER BY id").fetchall()
        rows = admin.execute("SELECT id, hash, body FROM records ORDER BY id").fetchall()
        admin.execute("DROP SCHEMA public CASCADE")
        admin.execute("CREATE SCHEMA public")
        for statement in _schema_before_0003():
            admin.execute(statement)
        admin.execute("CREATE TABLE audit_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        admin.execute("INSERT INTO audit_migrations VALUES ('0001_records', 'x'), ('0002_index_per_statement', 'x')")
        with admin.cursor() as cursor:
            cursor.executemany("INSERT INTO records (id, hash, body) VALUES (%s, %s, %s)", rows)
        assert admin.execute(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = 'records'::regclass AND attgenerated = 's'"
        ).fetchone() == (15,)
    pg = AuditLog(StateLocation(tmp_path, postgres_url))
    pg.start()
    try:
        assert pg.integrity.at_start is not None
        assert pg.integrity.at_start.ok, pg.integrity.at_start.describe()
        with _admin(postgres_url) as admin:
            assert admin.execute(f"SELECT id, {columns} FROM records ORDER BY id").fetchall() == before
            assert admin.execute(
                "SELECT count(*) FROM pg_attribute WHERE attrelid = 'records'::regclass AND attgenerated = 's'"
            ).fetchone() == (0,)
        for log in (sqlite, pg):
            for future in [log.submit(entry(n, actor=f"kiosk-{n % 4}")) for n in range(31, 91)]:
                future.result()
        assert pg.tallies("Test Open", 10) == sqlite.tallies("Test Open", 10)
        for where in (
            RecordFilter(word="QI"),
            RecordFilter(table="4"),
            RecordFilter(kind=Kind.CHALLENGE, division="A"),
        ):
            assert [r.id for r in pg.find(where, limit=500)] == [r.id for r in sqlite.find(where, limit=500)]
        assert pg.verify().ok
    finally:
        pg.close()
        sqlite.close()


def test_retries_among_the_batches_never_stop_the_writer(pg_log: AuditLog, caplog: pytest.LogCaptureFixture) -> None:
    """A batch is sent at once (psycopg's pipeline); one holding a retry fails whole and is made again, record by
    record. psycopg counted the statements it prepared in a failed pipeline as prepared, and every later batch
    failed ("prepared statement _pg3_8 does not exist"): the live concurrency test found it."""
    for n in range(1, 41):
        batch = [entry(n), entry(n)] + ([entry(n - 1)] if n > 1 else [])  # the request sent again, and an older one
        outcomes = [future.result(timeout=30) for future in [pg_log.submit(one) for one in batch]]
        assert [outcome.replayed for outcome in outcomes] == [False, True] + ([True] if n > 1 else [])
        assert len({outcome.record.id for outcome in outcomes[:2]}) == 1
    assert pg_log.head.records == 40
    assert pg_log.verify().ok
    # A retry is ordinary: nothing in the server's log makes it look like a failure.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_second_server_on_the_same_database_is_refused(pg_log: AuditLog, tmp_path: Path, postgres_url: str) -> None:
    pg_log.append_sync(entry(1))
    other = AuditLog(StateLocation(tmp_path / "other", postgres_url))
    with pytest.raises(AuditUnavailable, match="another wordjudge server already writes the audit log"):
        other.start()
    other.close()
    assert pg_log.append_sync(entry(2)).record.id == 2


def test_a_lost_connection_is_not_a_verdict_and_the_writer_comes_back(pg_log: AuditLog, postgres_url: str) -> None:
    pg_log.append_sync(entry(1))
    with _admin(postgres_url) as admin:
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'wordjudge audit writer'"
        ).fetchall()
    assert killed == [(True,)]
    with pytest.raises(AuditUnavailable, match="whether the request was recorded is not known"):
        pg_log.append_sync(entry(2))
    # The writer opened its connection again and read the head back: the next record follows the first.
    second = pg_log.append_sync(entry(2)).record
    assert second.id == 2
    assert pg_log.append_sync(entry(3)).record.prev_hash == second.hash
    assert pg_log.verify().ok


def _with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def test_a_wrong_password_or_no_server_is_named_and_writes_nothing(tmp_path: Path, postgres_url: str) -> None:
    wrong = _with_password(postgres_url, "not-the-password")
    with pytest.raises(AuditUnavailable, match="refused the user name or password") as refused:
        AuditLog(StateLocation(tmp_path, wrong)).start()
    assert "not-the-password" not in str(refused.value)
    nobody = re.sub(r":\d+/", f":{free_port()}/", postgres_url)
    with pytest.raises(AuditUnavailable, match="cannot be reached"):
        AuditLog(StateLocation(tmp_path, nobody)).start()
    assert not list(tmp_path.iterdir())


def test_the_data_folder_says_where_its_log_lives(tmp_path: Path, postgres_url: str) -> None:
    log = open_log(StateLocation(tmp_path, postgres_url))
    log.start()
    log.append_sync(entry(1))
    log.close()
    note_place(StateLocation(tmp_path, log.database))
    assert (tmp_path / DATABASE_NOTE).read_text("utf-8").strip() == shown(postgres_url)
    with pytest.raises(InvalidInput, match="are in the PostgreSQL database"):
        open_log(StateLocation(tmp_path))
    with pytest.raises(InvalidInput, match="not postgresql://"):
        open_log(StateLocation(tmp_path, postgres_url.rsplit("/", 1)[0] + "/another"))
    assert _verified(tmp_path, postgres_url).records == 1


def test_audit_verify_reads_the_log_in_postgresql(tmp_path: Path, postgres_url: str) -> None:
    log = AuditLog(StateLocation(tmp_path, postgres_url))
    log.start()
    head = fill(log, 12)[-1]
    log.close()
    note_place(StateLocation(tmp_path, postgres_url))
    runner = CliRunner()
    base = ["audit", "verify", "--data-dir", str(tmp_path), "--language", "en"]
    done = runner.invoke(main, [*base, "--database", postgres_url, "--expect-head", f"12:{head.hash[:16]}"])
    assert done.exit_code == 0, done.output
    assert "chain verified: 12 record(s)" in done.output
    assert shown(postgres_url) in done.output
    missing = runner.invoke(main, base)
    assert missing.exit_code == 1
    assert "give --database" in missing.output
    tail = runner.invoke(main, ["audit", "tail", "-n", "2", "--data-dir", str(tmp_path), "--database", postgres_url])
    assert tail.exit_code == 0, tail.output
    assert len(tail.output.strip().splitlines()) == 2


@pytest.mark.live
@pytest.mark.sqlite_only("names a PostgreSQL database of its own: runs in the suite's first pass")
def test_a_server_gives_verdicts_from_a_log_in_postgresql(
    data_dir: Path, live_server: StartServer, postgres_url: str
) -> None:
    server = live_server(data_dir, "--database", postgres_url, "--log-level", "warning")
    without = run("device", "add", "bench", "--role", "kiosk", "--data-dir", data_dir)
    assert without.exit_code == 1
    assert "give --database" in without.output
    added = run("device", "add", "bench", "--role", "kiosk", "--data-dir", data_dir, "--database", postgres_url)
    token = added.stdout.strip()
    body = {"division": "Open", "table": 3, "round": 1, "words": "cat dog", "request_id": "pg-live-1"}
    response = httpx.post(f"{server.base}/api/challenges", json=body, headers={"Authorization": f"Bearer {token}"})
    assert (response.status_code, response.json()["verdict"]) == (201, "acceptable")
    # Revoked from the command line, on the running server: refused at its next request (the access store is the
    # database's, shared by every process).
    assert run("device", "revoke", "bench", "--data-dir", data_dir, "--database", postgres_url).exit_code == 0
    again = {**body, "request_id": "pg-live-2"}
    refused_now = httpx.post(f"{server.base}/api/challenges", json=again, headers={"Authorization": f"Bearer {token}"})
    assert refused_now.status_code == 401
    server.stop()
    assert not (data_dir / AUDIT_FILE).exists()
    assert not (data_dir / ACCESS_FILE).exists()
    assert (data_dir / DATABASE_NOTE).read_text("utf-8").strip() == shown(postgres_url)
    log = AuditLog(StateLocation(data_dir, postgres_url))
    try:
        [record] = log.find(RecordFilter())
    finally:
        log.close()
    assert (record.request_id, record.words, record.verdict) == ("pg-live-1", ("CAT", "DOG"), Verdict.ACCEPTABLE)
    # Started again without the database: refused, naming it, before anything is served or written.
    refused = serve_process(data_dir, "--port", str(free_port()))
    output = refused.communicate(timeout=60)[0]
    assert refused.returncode != 0
    assert f"are in the PostgreSQL database {shown(postgres_url)}" in output
    assert not (data_dir / AUDIT_FILE).exists()


@pytest.mark.live
@pytest.mark.sqlite_only("names a PostgreSQL database of its own: runs in the suite's first pass")
def test_a_server_whose_database_cannot_be_reached_stops_and_writes_nothing(data_dir: Path, postgres_url: str) -> None:
    nobody = re.sub(r":\d+/", f":{free_port()}/", postgres_url)
    before = sorted(path.name for path in data_dir.iterdir() if path.name != "server.lock")
    process = serve_process(data_dir, "--port", str(free_port()), "--database", nobody)
    output = process.communicate(timeout=60)[0]
    assert process.returncode != 0
    assert "cannot be reached" in output
    assert "Traceback" not in output
    assert not (data_dir / DATABASE_NOTE).exists()
    assert not (data_dir / AUDIT_FILE).exists()
    # The folder's lock is the server's own (taken first, so that two servers never share a folder).
    assert sorted(path.name for path in data_dir.iterdir() if path.name != "server.lock") == before


def test_a_server_on_a_database_another_server_writes_stops_and_writes_nothing(
    pg_log: AuditLog, tmp_path: Path, postgres_url: str
) -> None:
    """Before, the refusal came once the new data folder held the server's identity and a compiled demo lexicon."""
    folder = tmp_path / "second"
    process = serve_process(folder, "--port", str(free_port()), "--database", postgres_url)
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 1
    assert f"another wordjudge server already writes the audit log in {shown(postgres_url)}" in output
    assert "Traceback" not in output
    assert [path.name for path in folder.iterdir()] == ["server.lock"]  # the folder's own lock, taken first
    assert pg_log.append_sync(entry(1)).record.id == 1  # the server writing it goes on


def test_a_standby_is_refused_naming_it_and_the_records_reach_it(
    tmp_path: Path, postgres_clusters: Callable[..., Cluster]
) -> None:
    primary = postgres_clusters()
    url = primary.url(primary.create_database())
    log = AuditLog(StateLocation(tmp_path, url))
    log.start()
    try:
        fill(log, 4)
        standby = primary.standby(primary.folder.parent / "standby")
        standby_url = standby.url(urlsplit(url).path.lstrip("/"))
        with pytest.raises(AuditUnavailable, match=r"is a standby .* give the active server's URL"):
            AuditLog(StateLocation(tmp_path / "other", standby_url)).start()
        for n in (10, 11):  # after the standby joined: streamed to it
            log.append_sync(entry(n))
    finally:
        log.close()
    # What the primary committed, the standby holds (replayed shortly after), and its chain verifies there.
    reader = AuditLog(StateLocation(tmp_path / "read", standby_url))
    try:
        deadline = time.monotonic() + 30
        while reader.count(RecordFilter()) < 6 and time.monotonic() < deadline:
            time.sleep(0.1)
        result = reader.verify()
    finally:
        reader.close()
    assert (result.ok, result.records) == (True, 6), result.describe()


def test_the_access_store_in_postgresql_comes_back_after_a_lost_connection(tmp_path: Path, postgres_url: str) -> None:
    store = AccessStore(StateLocation(tmp_path, postgres_url), hasher=CHEAP_HASHER).open()
    try:
        token = store.devices.add("kiosk-1", Role.KIOSK, "A", by="alice").token
        with _admin(postgres_url) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'wordjudge access'"
            )
        with pytest.raises(AccessUnavailable, match="cannot be used"):  # the request that finds it gone
            store.devices.authenticate(token, client="k")
        assert store.devices.authenticate(token, client="k").actor == "kiosk-1"  # the next one, on a new connection
        assert not (tmp_path / ACCESS_FILE).exists()
    finally:
        store.close()


def test_the_access_store_is_out_of_use_while_its_database_takes_no_writes_and_comes_back_after(
    tmp_path: Path, postgres_cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    # Run 51: a server whose database became a standby (its machine hung, woke after a failover) answered a
    # kiosk's challenge 422 "invalid input" (the reconnect's refusal of a standby), not 503: the store was out of
    # use, the kiosk's request was fine. Its last-seen times' flush raised as well, which stops the server's
    # watcher (the clock, the event file, silent kiosks). A schema gone and connections refused stand in for the
    # standby here: the same reconnect refuses both ways a database can take no writes.
    name = postgres_cluster.create_database()
    with psycopg.connect(postgres_cluster.url(name), autocommit=True) as admin:
        admin.execute("CREATE SCHEMA hall")
    url = postgres_cluster.url(name) + "?options=-csearch_path%3Dhall"
    store = AccessStore(StateLocation(tmp_path, url), hasher=CHEAP_HASHER).open()
    seen = "UPDATE devices SET last_seen_at = ? WHERE token_hash = ?"
    try:
        token = store.devices.add("kiosk-1", Role.KIOSK, "A", by="alice").token
        with psycopg.connect(postgres_cluster.url(), autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'wordjudge access'"
            )
        with psycopg.connect(postgres_cluster.url(name), autocommit=True) as admin:
            admin.execute("ALTER SCHEMA hall RENAME TO hall_away")
        with pytest.raises(AccessUnavailable, match="cannot be used"):  # the request that finds it gone
            store.devices.authenticate(token, client="k")
        with pytest.raises(AccessUnavailable, match="names no schema that exists"):  # and the next: no schema
            store.devices.authenticate(token, client="k")
        for n in range(2):  # the flusher's connection found gone, then not made again: nothing raised
            store.database.touch(f"device-{n}", seen)
            assert store.database.flush_touches() == 0
        with psycopg.connect(postgres_cluster.url(), autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        with pytest.raises(AccessUnavailable, match="cannot be used"):  # the server refuses every connection
            store.devices.authenticate(token, client="k")
        store.database.touch("device-2", seen)
        assert store.database.flush_touches() == 0
        with psycopg.connect(postgres_cluster.url(), autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
        with psycopg.connect(postgres_cluster.url(name), autocommit=True) as admin:
            admin.execute("ALTER SCHEMA hall_away RENAME TO hall")
        assert store.devices.authenticate(token, client="k").actor == "kiosk-1"  # back, on a new connection
        store.database.flush_touches()  # the kiosk's own last-seen time, if it was noted
        store.database.touch("device-3", seen)
        assert store.database.flush_touches() == 1
    finally:
        store.close()
    said = [r.getMessage() for r in caplog.records if "last-seen" in r.getMessage()]
    assert [line.startswith("cannot record 1 last-seen time(s): ") for line in said] == [True] * 3, said


def test_several_events_in_one_database_each_see_only_their_own(tmp_path: Path, postgres_cluster: Cluster) -> None:
    # One role and one schema an event (its URL's search_path): neither can read or change the other's records.
    name = postgres_cluster.create_database()
    urls = {}
    for event in ("spring", "autumn"):
        role = f"{event}_{name[-8:]}"  # roles are the cluster's: unique to this test
        postgres_cluster.create_role(role, f"{event}-password")
        with psycopg.connect(postgres_cluster.url(name), autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {event} AUTHORIZATION {role}")
        urls[event] = postgres_cluster.url(name, role, f"{event}-password") + f"?options=-csearch_path%3D{event}"
    logs = {event: AuditLog(StateLocation(tmp_path / event, url)) for event, url in urls.items()}
    stores = {event: AccessStore(StateLocation(tmp_path / event, url)).open() for event, url in urls.items()}
    try:
        for log in logs.values():
            log.start()  # both writers at once: one a schema
        fill(logs["spring"], 5)
        fill(logs["autumn"], 3)
        stores["spring"].devices.add("kiosk-1", Role.KIOSK, "A", by="alice")
        assert ([d.name for d in stores["spring"].devices.all()], stores["autumn"].devices.all()) == (["kiosk-1"], [])
        assert (logs["spring"].head.records, logs["autumn"].head.records) == (5, 3)
        assert all(log.verify().ok for log in logs.values())
    finally:
        for log in logs.values():
            log.close()
        for store in stores.values():
            store.close()
    with psycopg.connect(urls["autumn"]) as autumn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        autumn.execute("SELECT count(*) FROM spring.records")
    missing = postgres_cluster.url(name) + "?options=-csearch_path%3Dwinter"
    with pytest.raises(AuditUnavailable, match="names no schema that exists"):
        AuditLog(StateLocation(tmp_path / "winter", missing)).start()


def test_a_demo_kept_in_a_database_is_never_taken_over_by_a_real_event(tmp_path: Path, postgres_url: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    demo = open_event_folder(data, demo=True)  # the Quick start's demo, served with --database
    note_place(StateLocation(data, postgres_url))
    # Its records are in the database, where they cannot be moved aside: a real event would inherit them.
    with pytest.raises(AccessUnavailable, match=r"kept its log and devices in the database .* a new data folder"):
        open_event_folder(data, demo=False)
    assert open_event_folder(data, demo=True) == demo  # nothing was moved or changed
    assert (data / DATABASE_NOTE).is_file()


def test_a_locked_log_refuses_without_a_verdict_and_recovers(pg_log: AuditLog, postgres_url: str) -> None:
    pg_log.append_sync(entry(1))
    with _admin(postgres_url) as admin:
        admin.execute("BEGIN")
        admin.execute("LOCK TABLE records IN EXCLUSIVE MODE")  # readers go on; no record can be added
        started = time.monotonic()
        with pytest.raises(AuditUnavailable, match=r"cannot be written .*lock timeout"):
            pg_log.append_sync(entry(2))
        waited = time.monotonic() - started
        assert pg_log.get(1) is not None  # the log is still read
        admin.execute("ROLLBACK")
    assert 1.5 < waited < 10  # the busy timeout's 2 s, not for ever
    assert pg_log.append_sync(entry(2)).record.id == 2
    assert pg_log.verify().ok


def test_a_server_role_made_by_database_init_cannot_change_or_unprotect_a_record(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    name = postgres_cluster.create_database()
    role = postgres_cluster.create_role(f"server_{name[-8:]}", "server-password")
    owner_url = postgres_cluster.url(name)
    done = CliRunner().invoke(main, ["database", "init", "--database", owner_url, "--server-role", role])
    assert done.exit_code == 0, done.output
    assert f"migration(s) applied; {role} may serve it" in done.output
    server_url = postgres_cluster.url(name, role, "server-password")
    log = AuditLog(StateLocation(tmp_path, server_url))
    store = AccessStore(StateLocation(tmp_path, server_url), hasher=CHEAP_HASHER).open()
    try:
        log.start()  # the schema is the owner's: the server only reads that it is up to date
        fill(log, 4)
        token = store.devices.add("kiosk-1", Role.KIOSK, "A", by="alice").token
        store.devices.revoke("kiosk-1", by="alice")
        with pytest.raises(Unauthorized):
            store.devices.authenticate(token, client="k")
    finally:
        log.close()
        store.close()
    with psycopg.connect(server_url, autocommit=True) as server:
        for attack in (
            "UPDATE records SET body = body WHERE id = 2",
            "DELETE FROM records WHERE id = 2",
            "TRUNCATE records",
            "ALTER TABLE records DISABLE TRIGGER records_no_update",
            "DROP TRIGGER records_no_delete ON records",
            "DELETE FROM devices",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                server.execute(attack)
    assert _verified(tmp_path, server_url).records == 4
    again = CliRunner().invoke(main, ["database", "init", "--database", owner_url])
    assert (again.exit_code, "0 migration(s) applied" in again.output) == (0, True)
    refused = CliRunner().invoke(main, ["database", "init", "--database", owner_url, "--server-role", "nobody_here"])
    assert refused.exit_code == 1
    assert 'role "nobody_here" does not exist' in refused.output
