"""The seam between SQLite and PostgreSQL: the placeholder translation, and a query with a "%" on both backends."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from wordjudge.storage import access_db, audit_schema, audit_schema_pg, audit_tables, database, postgres
from wordjudge.storage.database import connect_writer
from wordjudge.storage.dialect import POSTGRESQL, SQLITE, SQLITE_MIGRATIONS_TABLE, Dialect
from wordjudge.storage.postgres import _translated


@pytest.mark.parametrize(
    ("sqlite_text", "psycopg_text"),
    [
        ("SELECT a FROM t WHERE b = ?", "SELECT a FROM t WHERE b = %s"),
        ("SELECT a FROM t WHERE b = :b AND c = :c", "SELECT a FROM t WHERE b = %(b)s AND c = %(c)s"),
        ("SELECT x::int FROM t WHERE y = ?", "SELECT x::int FROM t WHERE y = %s"),
        # A "%" outside quotes (a LIKE pattern built by ||) and within them: psycopg refuses a lone one.
        ("SELECT a FROM t WHERE b LIKE ? || '%'", "SELECT a FROM t WHERE b LIKE %s || '%%'"),
        ("SELECT a FROM t WHERE b LIKE 'x%y' AND c = ?", "SELECT a FROM t WHERE b LIKE 'x%%y' AND c = %s"),
        ("SELECT 5 % 3, ?", "SELECT 5 %% 3, %s"),
        ('SELECT "a%b" FROM t WHERE c = ?', 'SELECT "a%%b" FROM t WHERE c = %s'),
        # A "?" or ":name" within quotes or a comment is text, not a placeholder.
        ("SELECT '?', ':x', ? FROM t", "SELECT '?', ':x', %s FROM t"),
        ("SELECT 'it''s ? 100%', ?", "SELECT 'it''s ? 100%%', %s"),
        ('SELECT "what?" FROM t WHERE c = ?', 'SELECT "what?" FROM t WHERE c = %s'),
        ("SELECT ? -- is it? 'quoted\nFROM t", "SELECT %s -- is it? 'quoted\nFROM t"),
        ("SELECT /* ? 50% */ ?", "SELECT /* ? 50%% */ %s"),
        ("SELECT $$ ? % $$, $f$ ? $f$, ?", "SELECT $$ ? %% $$, $f$ ? $f$, %s"),
    ],
)
def test_the_placeholders_become_psycopgs_and_every_percent_is_escaped(sqlite_text: str, psycopg_text: str) -> None:
    assert _translated(sqlite_text) == psycopg_text


def test_a_percent_literal_and_a_parameter_read_the_same_on_either_backend(
    tmp_path: Path, database_url: str | None
) -> None:
    sql = "SELECT '100%' || ?, 'what?' || ?, ? LIKE 'ab%'"
    params = ("!", "?", "abc")
    if database_url is None:
        sqlite = sqlite3.connect(tmp_path / "one.sqlite3")
        try:
            row = sqlite.execute(sql, params).fetchone()
        finally:
            sqlite.close()
    else:
        pg = postgres.connect(database_url)
        try:
            row = pg.execute(sql, params).fetchone()
            # executemany and stream translate the same way
            pg.execute("CREATE TABLE t (a TEXT)")
            pg.executemany("INSERT INTO t (a) VALUES ('50%' || ?)", [("x",), ("y",)])
            assert list(pg.stream("SELECT a FROM t WHERE a LIKE '50%' AND a <> ? ORDER BY a", ("?",))) == [
                ("50%x",),
                ("50%y",),
            ]
        finally:
            pg.close()
    assert tuple(row) == ("100%!", "what??", True if database_url else 1)


def test_postgresql_waits_for_a_lock_as_long_as_sqlite() -> None:
    assert postgres.LOCK_TIMEOUT_MS == database.BUSY_TIMEOUT_MS


# -- the schemas: the same tables, columns and indexes on both backends ------------------------------------

_BOOKKEEPING = {"migrations", audit_schema_pg.MIGRATIONS_TABLE, access_db.PG_MIGRATIONS_TABLE}


def _sqlite_catalogue(tmp_path: Path) -> dict[str, tuple[set[str], set[str]]]:
    """Each table of the audit log's and the access store's SQLite files: its columns and its indexes."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for name, migrations in (("audit.sqlite3", audit_schema.MIGRATIONS), ("access.sqlite3", access_db.MIGRATIONS)):
        connection = connect_writer(tmp_path / name)
        try:
            SQLITE.migrate(connection, migrations, SQLITE_MIGRATIONS_TABLE)
            tables = [t for (t,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                columns = {row[1] for row in connection.execute(f"SELECT * FROM pragma_table_xinfo('{table}')")}
                indexes = {
                    i
                    for (i,) in connection.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                        (table,),
                    )
                }
                found[table] = (columns, indexes)
        finally:
            connection.close()
    return {table: kept for table, kept in found.items() if table not in _BOOKKEEPING}


def _postgres_catalogue(url: str) -> dict[str, tuple[set[str], set[str]]]:
    """The same, of a PostgreSQL database both stores were migrated in (the indexes of its keys and unique columns aside,
    as SQLite's automatic ones are)."""
    connection = postgres.connect_writer(url)
    try:
        POSTGRESQL.migrate(connection, audit_schema_pg.MIGRATIONS, audit_schema_pg.MIGRATIONS_TABLE)
        POSTGRESQL.migrate(connection, access_db.PG_MIGRATIONS, access_db.PG_MIGRATIONS_TABLE)
        found: dict[str, tuple[set[str], set[str]]] = {}
        for table, column in connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        ):
            found.setdefault(table, (set(), set()))[0].add(column)
        for table, index in connection.execute(
            "SELECT tablename, indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexname NOT IN (SELECT conname FROM pg_constraint)"  # a key's or a unique column's, unnamed
        ):
            found[table][1].add(index)
    finally:
        connection.close()
    return {table: kept for table, kept in found.items() if table not in _BOOKKEEPING}


def test_the_sqlite_schemas_hold_the_stores_tables(tmp_path: Path) -> None:
    tables = _sqlite_catalogue(tmp_path)
    assert {"records", "record_words", "tallies", "word_tallies", "checkpoints"} <= tables.keys()
    assert {"devices", "pairing_codes", "tds", "sessions", "alerts"} <= tables.keys()
    assert "records_request" in tables["records"][1]


def test_the_schemas_have_the_same_tables_columns_and_indexes_on_either_backend(
    tmp_path: Path, database_url: str | None
) -> None:
    if database_url is None:
        pytest.skip("compares SQLite's schemas with PostgreSQL's: --backend postgresql")
    assert _postgres_catalogue(database_url) == _sqlite_catalogue(tmp_path)


# -- the schemas described once: the text each backend gets is what shipped migrations created ------------

# SHA-256 of the audit log's tables and indexes as each backend's DDL, whitespace folded (as the chain check
# compares a SQLite file's), one statement a line: the literal statements they replaced, which shipped migrations
# created (SQLite's 0003_record_bodies, PostgreSQL's 0001_records). A description that renders otherwise needs a
# migration, never a new pin.
_AUDIT_DDL = {
    "sqlite": "476ca703f34a7f5dc7e87b1a628ae7a1aa225c97b22b1afded649b4b7879e579",
    "postgresql": "add220f140ae067883f75d09132cdb6e734b59a4456b8da8b4f30f1c3f327e51",
}


@pytest.mark.parametrize("dialect", [SQLITE, POSTGRESQL], ids=lambda d: d.name)
def test_the_audit_tables_and_indexes_render_the_ddl_shipped_migrations_created(dialect: Dialect) -> None:
    rendered = "\n".join(" ".join(part.create(dialect).split()) for part in audit_tables.TABLES_AND_INDEXES)
    assert hashlib.sha256(rendered.encode()).hexdigest() == _AUDIT_DDL[dialect.name]


def test_each_backend_creates_the_audit_tables_and_indexes_from_the_one_description() -> None:
    parts = [part.create(SQLITE) for part in audit_tables.TABLES_AND_INDEXES]
    assert [statement for _, statement in audit_schema.SCHEMA[: len(parts)]] == parts
    parts = [part.create(POSTGRESQL) for part in audit_tables.TABLES_AND_INDEXES]
    assert audit_schema_pg.SCHEMA[1 : 1 + len(parts)] == parts
    assert parts[0] == audit_schema_pg.RECORDS_TABLE
