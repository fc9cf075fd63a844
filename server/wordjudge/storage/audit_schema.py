"""The audit log's schema: its migrations, and the tables, indexes and triggers it must have.

A record is stored as its **body**, the canonical JSON of every field but its hash
(:func:`wordjudge.model.records.record_body`): exactly the bytes the hash covers, so checking the chain
is one SHA-256 over a stored string per record. Every other column is *generated* by SQLite from
the body and stored, for filters and indexes: a column cannot say something its body does not.

Around the records, kept in the same transaction by triggers (so no writer can forget them):
``record_words`` (which records hold a word, for the word filter), ``tallies`` and
``word_tallies`` (challenges and most-challenged words per event, division and round, for the
summary at any size). ``checkpoints`` holds where the chain was last checked, so that a start
checks only what came after (:mod:`wordjudge.log.chain`).

The tables and indexes are described once for both backends (:mod:`wordjudge.storage.audit_tables`); the
triggers are SQLite's own. :data:`SCHEMA` is what the database must hold, statement for statement; the chain
check compares it with the file (a dropped append-only trigger, or a generated column made plain, is tampering).
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from wordjudge.model.records import Kind, Record, Verdict, record_body
from wordjudge.storage.audit_tables import RECORDS, TABLES_AND_INDEXES, VIEW_PARTS
from wordjudge.storage.dialect import SQLITE

if TYPE_CHECKING:
    from wordjudge.storage.database import Migrations


RECORDS_TABLE = RECORDS.create(SQLITE)

# (name, statement): everything the records need in SQLite, in the order it is created.
SCHEMA: list[tuple[str, str]] = [
    *((part.name, part.create(SQLITE)) for part in TABLES_AND_INDEXES),
    (
        "records_no_update",
        """CREATE TRIGGER records_no_update BEFORE UPDATE ON records
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be changed'); END""",
    ),
    (
        "records_no_delete",
        """CREATE TRIGGER records_no_delete BEFORE DELETE ON records
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be deleted'); END""",
    ),
    (
        "records_words",
        """CREATE TRIGGER records_words AFTER INSERT ON records BEGIN
    INSERT OR IGNORE INTO record_words (word, record_id) SELECT value, NEW.id FROM json_each(NEW.body, '$.words');
END""",
    ),
    (
        "records_tally",
        # A challenge counts in its event, division and round; each of its words once (a set).
        """CREATE TRIGGER records_tally AFTER INSERT ON records WHEN NEW.kind = 'challenge' BEGIN
    INSERT INTO tallies (event, scope, division, round_key, challenges, acceptable, first_id)
    VALUES (NEW.event, 0, '', 0, 1, NEW.verdict = 'acceptable', NEW.id),
        (NEW.event, 1, NEW.division, 0, 1, NEW.verdict = 'acceptable', NEW.id),
        (NEW.event, 2, NEW.division, coalesce(NEW.round, 0), 1, NEW.verdict = 'acceptable', NEW.id)
    ON CONFLICT DO UPDATE SET challenges = challenges + 1, acceptable = acceptable + excluded.acceptable;
    INSERT INTO word_tallies (event, scope, division, round_key, word, challenges, first_id)
    SELECT NEW.event, s.scope, s.division, s.round_key, w.word, 1, NEW.id
    FROM (SELECT DISTINCT value AS word FROM json_each(NEW.body, '$.words')) AS w,
        (SELECT 0 AS scope, '' AS division, 0 AS round_key UNION ALL SELECT 1, NEW.division, 0
         UNION ALL SELECT 2, NEW.division, coalesce(NEW.round, 0)) AS s
    WHERE true
    ON CONFLICT DO UPDATE SET challenges = challenges + 1;
END""",
    ),
]
# What migration 0005_views added (every log has it after): the TD's views at a million records (issue 48).
VIEWS_SCHEMA: list[tuple[str, str]] = [
    *((part.name, part.create(SQLITE)) for part in VIEW_PARTS),
    (
        "records_count",
        # Every record counts once, under its event, division, kind, verdict, actor and round (as the filters
        # name them), so that a list's count by these sums a few rows (reading.LogReader.count).
        """CREATE TRIGGER records_count AFTER INSERT ON records BEGIN
    INSERT INTO record_counts (event, division, kind, verdict, actor, round_key, records)
    VALUES (coalesce(NEW.event, ''), coalesce(NEW.division, ''), NEW.kind, coalesce(NEW.verdict, ''),
        coalesce(NEW.actor, ''), coalesce(NEW.round, 0), 1)
    ON CONFLICT DO UPDATE SET records = records + 1;
END""",
    ),
]
# The count of the records already in a log, as records_count would have kept it (0005_views).
COUNT_RECORDS = """INSERT INTO record_counts (event, division, kind, verdict, actor, round_key, records)
SELECT coalesce(event, ''), coalesce(division, ''), kind, coalesce(verdict, ''), coalesce(actor, ''),
    coalesce(round, 0), count(*)
FROM records GROUP BY 1, 2, 3, 4, 5, 6"""
# Before 0005_views, the log's schema was the first part, which 0003_record_bodies creates.
_BODIES_SCHEMA = list(SCHEMA)
SCHEMA += VIEWS_SCHEMA
APPEND_ONLY = ("records_no_update", "records_no_delete")


def create_schema(connection: sqlite3.Connection) -> None:
    """Create the tables, indexes and triggers a log held once its records were bodies (0003_record_bodies: the
    first part of :data:`SCHEMA`; later migrations add the rest)."""
    for _, statement in _BODIES_SCHEMA:
        connection.execute(statement)


def _views(connection: sqlite3.Connection) -> None:
    """0005: the index and the counts the TD's views read (:data:`VIEWS_SCHEMA`), the counts of the records already
    written taken once, in this migration's transaction: from then on each record's own keeps them."""
    present = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
    for name, statement in VIEWS_SCHEMA:
        if name not in present:
            connection.execute(statement)
    connection.execute("DELETE FROM record_counts")
    connection.execute(COUNT_RECORDS)


def missing_or_changed(connection: sqlite3.Connection) -> list[str]:
    """The objects of :data:`SCHEMA` the database lacks or holds with other SQL (tampering or damage)."""
    found = dict(connection.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall())
    return [name for name, statement in SCHEMA if _folded(found.get(name)) != _folded(statement)]


def _folded(sql: str | None) -> str | None:
    return " ".join(sql.split()) if sql is not None else None


# -- migrations --------------------------------------------------------------------------------------------

# The first layout kept every field in a column of its own and hashed their canonical encoding. Its columns,
# as 0001 and 0002 made them, for 0003 to read.
_V1_COLUMNS = [
    "id",
    "created_at",
    "kind",
    "parent_id",
    "event",
    "division",
    "round",
    "table_label",
    "actor",
    "channel",
    "words_typed",
    "words",
    "lexicon",
    "fingerprint",
    "verdict",
    "results",
    "rule",
    "consequence",
    "request_id",
    "agrees",
    "note",
    "software_version",
    "prev_hash",
    "hash",
    "salt",
]
_V1_JSON = {"words_typed", "words", "results", "consequence"}


def _v1_record(row: tuple[Any, ...]) -> Record:
    data = dict(zip(_V1_COLUMNS, row, strict=True))
    for name in _V1_JSON:
        data[name] = json.loads(data[name])
    data["table"] = data.pop("table_label")
    data["kind"], data["verdict"] = Kind(data["kind"]), Verdict(data["verdict"])
    data["agrees"] = None if data["agrees"] is None else bool(data["agrees"])
    for name in ("words_typed", "words", "results"):
        data[name] = tuple(data[name])
    return Record(**data)


def _to_bodies(connection: sqlite3.Connection) -> None:
    """0003: store each record as its body, the exact bytes its hash covers; derive everything else.

    Hashes are kept as they are: the body is the canonical encoding the old layout hashed, so an
    intact record's hash matches its body, and an altered one's still does not (the evidence stays).
    """
    for name in ("records_no_update", "records_no_delete"):
        connection.execute(f"DROP TRIGGER IF EXISTS {name}")
    for name in ("records_parent", "records_division_round_table"):
        connection.execute(f"DROP INDEX IF EXISTS {name}")
    connection.execute("ALTER TABLE records RENAME TO records_v1")
    create_schema(connection)
    rows = connection.execute(f"SELECT {', '.join(_V1_COLUMNS)} FROM records_v1 ORDER BY id")
    connection.executemany("INSERT INTO records (id, hash, body) VALUES (?, ?, ?)", map(_v2_row, rows))
    connection.execute("DROP TABLE records_v1")


def _v2_row(row: tuple[Any, ...]) -> tuple[int, str, str]:
    try:
        record = _v1_record(row)
    except (ValueError, TypeError, KeyError) as exc:
        raise sqlite3.DatabaseError(f"record {row[0]} cannot be read to upgrade the log ({exc})") from exc
    return record.id, record.hash, record_body(record).decode()


# Named migrations, applied in order, each once. Never edit one that has shipped: add another.
MIGRATIONS: Migrations = [
    (
        "0001_records",
        """
        CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('challenge', 'recheck', 'reissue', 'ruling')),
            parent_id INTEGER REFERENCES records (id),
            event TEXT NOT NULL,
            division TEXT NOT NULL,
            round INTEGER,
            table_label TEXT NOT NULL,
            actor TEXT NOT NULL,
            channel TEXT NOT NULL,
            words_typed TEXT NOT NULL,
            words TEXT NOT NULL,
            lexicon TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            verdict TEXT NOT NULL CHECK (verdict IN ('acceptable', 'unacceptable')),
            results TEXT NOT NULL,
            rule TEXT NOT NULL,
            consequence TEXT NOT NULL,
            request_id TEXT NOT NULL,
            agrees INTEGER CHECK (agrees IN (0, 1)),
            note TEXT,
            software_version TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE,
            UNIQUE (actor, request_id)
        );
        CREATE INDEX records_parent ON records (parent_id);
        CREATE INDEX records_division_round_table ON records (division, round, table_label);
        CREATE TRIGGER records_no_update BEFORE UPDATE ON records
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be changed'); END;
        CREATE TRIGGER records_no_delete BEFORE DELETE ON records
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be deleted'); END;
        """,
    ),
    # A random salt inside each record's hashed data, so that a hash reveals nothing of the per-word
    # results (records.Record.salt). Older records keep no salt, and their hashes stay as they were.
    ("0002_record_salt", "ALTER TABLE records ADD COLUMN salt TEXT;"),
    ("0003_record_bodies", _to_bodies),
    (
        "0004_table_any_case",
        "DROP INDEX records_table; CREATE INDEX records_table ON records (table_label COLLATE NOCASE);",
    ),
    ("0005_views", _views),
]
