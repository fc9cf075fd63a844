"""The seam between SQLite and PostgreSQL: the placeholder translation, and a query with a "%" on both backends."""

from __future__ import annotations

import ast
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


# -- the backend chosen in one place -------------------------------------------------------------------------------

PACKAGE = Path(postgres.__file__).parent.parent
# Where code may choose between SQLite and PostgreSQL (issue 47, item 3: at most 6 branch points in the package), and
# how many times: the dialect, where a location's backend and a connection's are told (dialect_for, dialect_of);
# the connection module, which words a failure by its backend's kind (reason); the settings, where a hall of
# servers needs a database; the server's takeover, recorded in a database (service/serving.py). Everything else asks
# the dialect or its place (storage/places.py), whose classes each do their own backend's part.
BACKEND_BRANCHES = {
    "storage/dialect.py": 2,
    "storage/postgres.py": 1,
    "service/settings.py": 1,
    "service/serving.py": 1,
}
MAX_BACKEND_BRANCHES = 6
_URL_NAMES = {"url", "database"}  # the --database URL, however a module holds it
_BACKEND_WORDS = {"sqlite", "postgresql", "postgres"}


def backend_branches(name: str, source: str) -> list[str]:
    """The places in ``source`` (the module ``name``) that choose between SQLite and PostgreSQL, one line each: a
    test of the URL's presence (``url is None``, ``database is not None``), a comparison with a backend's name, an
    ``in_folder`` flag, ``isinstance`` on a connection's or an error's backend, a lookup keyed by a dialect's name
    (``x[dialect.name]``, ``.get(self.name)`` in a dialect), and ``pick(sqlite, postgresql)``. An ``assert`` states
    what holds and chooses nothing: not counted."""
    tree = ast.parse(source)
    found: list[str] = []

    def said(node: ast.AST) -> str:
        return ast.get_source_segment(source, node) or ""

    def why(node: ast.AST, in_dialect: bool) -> str | None:
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = [
                s.attr if isinstance(s, ast.Attribute) else s.id
                for s in sides
                if isinstance(s, ast.Attribute | ast.Name)
            ]
            if any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops) and _URL_NAMES & set(named):
                return "the URL's presence"
            if any(isinstance(s, ast.Constant) and s.value in _BACKEND_WORDS for s in sides):
                return "a backend's name"
        if isinstance(node, ast.Attribute) and node.attr == "in_folder":
            return "a backend's flag"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            kinds = said(node.args[1]).lower() if len(node.args) == 2 else ""
            if "sqlite" in kinds or ("connection" in kinds and ("postgres" in kinds or "psycopg" in kinds)):
                return "a backend's kind"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pick":
            return "pick()"
        key = node.slice if isinstance(node, ast.Subscript) else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            key = node.args[0]
        if isinstance(key, ast.Attribute) and key.attr == "name":
            owner = said(key.value)
            if any(word in owner.lower() for word in ("dialect", "sqlite", "postgres")) or (
                owner == "self" and in_dialect
            ):
                return "a lookup by the dialect's name"
        return None

    def visit(node: ast.AST, in_dialect: bool) -> None:
        if isinstance(node, ast.Assert):
            return
        if isinstance(node, ast.ClassDef):
            in_dialect = node.name.endswith("Dialect")
        if (reason := why(node, in_dialect)) is not None:
            found.append(f"{name}:{getattr(node, 'lineno', '?')}: {reason}: {said(node).splitlines()[0]}")
        for child in ast.iter_child_nodes(node):
            visit(child, in_dialect)

    visit(tree, False)
    return found


def _package_branches() -> list[str]:
    return [
        found
        for path in sorted(PACKAGE.rglob("*.py"))
        for found in backend_branches(path.relative_to(PACKAGE).as_posix(), path.read_text("utf-8"))
    ]


def test_the_branch_count_finds_every_way_of_choosing_a_backend() -> None:
    source = """
class Store:
    def open(self, where, connection, dialect):
        if where.url is None: ...
        database = where.url if where.url is not None else None
        if isinstance(connection, postgres.Connection): ...
        if isinstance(exc, sqlite3.Error): ...
        schema = _SCHEMA[dialect.name]
        extra = self.only.get(dialect.name, ())
        check = dialect.pick(sqlite_check, pg_check)
        explain = "EXPLAIN QUERY PLAN " if self.dialect.name == "sqlite" else "EXPLAIN "
        if where.dialect.in_folder: ...
        assert where.url is not None  # a precondition: no choice
        if isinstance(exc, psycopg.errors.InvalidPassword): ...  # one backend's errors among themselves
        if self.name == other.name: ...
class SqliteDialect:
    def part(self, described):
        return described.get(self.name)
"""
    reasons = [line.split(": ")[1] for line in backend_branches("sample.py", source)]
    assert reasons == [
        "the URL's presence",
        "the URL's presence",
        "a backend's kind",
        "a backend's kind",
        "a lookup by the dialect's name",
        "a lookup by the dialect's name",
        "pick()",
        "a backend's name",
        "a backend's flag",
        "a lookup by the dialect's name",
    ]


def test_the_backend_is_chosen_in_six_places_at_most_each_where_it_belongs() -> None:
    found = _package_branches()
    assert len(found) <= MAX_BACKEND_BRANCHES, "\n".join(found)
    by_module: dict[str, int] = {}
    for line in found:
        by_module[line.split(":")[0]] = by_module.get(line.split(":")[0], 0) + 1
    over = {module: n for module, n in by_module.items() if n > BACKEND_BRANCHES.get(module, 0)}
    assert over == {}, "a new choice of backend: ask the dialect or its place instead\n" + "\n".join(found)
    assert by_module == BACKEND_BRANCHES, f"fewer than listed: lower BACKEND_BRANCHES ({by_module})"
