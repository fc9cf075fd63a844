"""The audit log's schema on PostgreSQL: the twin of :mod:`wordjudge.storage.audit_schema`, its tables and
indexes rendered from the same description (:mod:`wordjudge.storage.audit_tables`), its triggers its own.

The same layout as on SQLite: a record is its body (the bytes its hash covers) and every other column is
read from it and stored (here by a trigger, once a record, and held to the body by a CHECK; SQLite generates
them); the word index and the tallies are kept by a trigger in the record's own transaction; triggers refuse
UPDATE, DELETE and TRUNCATE. :func:`missing_or_changed` reads the catalogue back, so that a dropped or disabled
trigger, a dropped or unvalidated CHECK, a rule or a row-level policy on the records (which could hide some
from a check) is found as tampering, as on SQLite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wordjudge.storage import audit_tables
from wordjudge.storage.dialect import POSTGRESQL

if TYPE_CHECKING:
    from wordjudge.storage.postgres import Connection, PgMigration

MIGRATIONS_TABLE = "audit_migrations"


# The columns read from a record's body: (name, type, value), the value an expression of ``d`` (the body as
# jsonb) and ``body`` (its text): described once with SQLite's generated columns (audit_tables.DERIVED).
DERIVED: list[tuple[str, str, str]] = [
    (column.name, POSTGRESQL.text.column_type(column.kind), column.reads["postgresql"])
    for column in audit_tables.DERIVED
]
_NAMES = ", ".join(name for name, _, _ in DERIVED)

# A record's columns are read from its body once, by a trigger before its INSERT, and a CHECK holds them to it
# for good. Generated columns (as on SQLite, and here before migration 0003) parse the body once a column:
# fifteen parses a record took 1.6 ms of a batch of eight's 2.1 ms INSERT (issue 21, docs/bench-postgres.md).
# A CHECK, unlike a trigger, cannot be switched off (session_replication_role included), only dropped, which
# the schema check finds: a row whose columns say other than its body can neither be written nor changed into,
# so what the log's queries read is what its hashes cover.
RECORDS_TABLE = audit_tables.RECORDS.create(POSTGRESQL)
DERIVED_CHECK = audit_tables.DERIVED_CHECK  # as the catalogue gives it back (pg_get_constraintdef)
_CATALOGUE_TYPES = {"TEXT": "text", "BIGINT": "bigint", "INTEGER": "integer"}  # format_type's names

READ_BODY = """
DECLARE
    d jsonb := NEW.body::jsonb;
    body text := NEW.body;
BEGIN
{assignments}
    RETURN NEW;
END
""".format(assignments="\n".join(f"    NEW.{name} := {value};" for name, _, value in DERIVED))
READ_RIGHT = """
DECLARE
    d jsonb := body::jsonb;
BEGIN
    RETURN {comparisons};
END
""".format(comparisons="\n        AND ".join(f"{name} IS NOT DISTINCT FROM {value}" for name, _, value in DERIVED))
READ_RIGHT_FUNCTION = (
    f"CREATE OR REPLACE FUNCTION records_read_right(body text, {', '.join(f'{n} {k}' for n, k, _ in DERIVED)})"
    f" RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $${READ_RIGHT}$$"
)

# The trigger functions' bodies, compared as they are with the catalogue's.
APPEND_ONLY_BODY = """
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: records cannot be %',
        CASE TG_OP WHEN 'UPDATE' THEN 'changed' ELSE 'deleted' END
        USING ERRCODE = 'restrict_violation';
END
"""
# A challenge counts in its event, division and round; each of its words once (a set), as on SQLite. Once a
# statement, for all the rows it inserted (a batch: the writer inserts one in one statement), not once a row: the
# row-level trigger took 45 % of a batch's INSERT with a synchronous standby (1,333 records a second from the
# writer with it, 1,985 without), and a batch's rows mostly share their tallies' rows.
INDEXED_BODY = """
BEGIN
    INSERT INTO record_words (word, record_id)
    SELECT DISTINCT w, n.id FROM inserted AS n, jsonb_array_elements_text(n.body::jsonb -> 'words') AS w
    ON CONFLICT DO NOTHING;
    INSERT INTO tallies (event, scope, division, round_key, challenges, acceptable, first_id)
    SELECT n.event, s.scope, s.division, s.round_key, count(*), sum((n.verdict = 'acceptable')::integer), min(n.id)
    FROM inserted AS n CROSS JOIN LATERAL (VALUES (0, '', 0), (1, n.division, 0), (2, n.division, coalesce(n.round, 0)))
        AS s (scope, division, round_key)
    WHERE n.kind = 'challenge'
    GROUP BY n.event, s.scope, s.division, s.round_key
    ON CONFLICT (event, scope, division, round_key) DO UPDATE
        SET challenges = tallies.challenges + excluded.challenges,
            acceptable = tallies.acceptable + excluded.acceptable;
    INSERT INTO word_tallies (event, scope, division, round_key, word, challenges, first_id)
    SELECT n.event, s.scope, s.division, s.round_key, w.word, count(*), min(n.id)
    FROM inserted AS n
    CROSS JOIN LATERAL (SELECT DISTINCT value AS word FROM jsonb_array_elements_text(n.body::jsonb -> 'words') AS value)
        AS w
    CROSS JOIN LATERAL (VALUES (0, '', 0), (1, n.division, 0), (2, n.division, coalesce(n.round, 0)))
        AS s (scope, division, round_key)
    WHERE n.kind = 'challenge'
    GROUP BY n.event, s.scope, s.division, s.round_key, w.word
    ON CONFLICT (event, scope, division, round_key, word) DO UPDATE
        SET challenges = word_tallies.challenges + excluded.challenges;
    RETURN NULL;
END
"""
# Every record counts once, under its event, division, kind, verdict, actor and round, as on SQLite (migration
# 0004_views): a list's count by these sums a few rows. Once a statement, as the word index and tallies are.
COUNTED_BODY = """
BEGIN
    INSERT INTO record_counts (event, division, kind, verdict, actor, round_key, records)
    SELECT coalesce(n.event, ''), coalesce(n.division, ''), n.kind, coalesce(n.verdict, ''), coalesce(n.actor, ''),
        coalesce(n.round, 0), count(*)
    FROM inserted AS n
    GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (division, verdict, kind, actor, round_key, event) DO UPDATE
        SET records = record_counts.records + excluded.records;
    RETURN NULL;
END
"""
# The count of the records already in a log, as records_counted would have kept it (0004_views).
COUNT_RECORDS = """INSERT INTO record_counts (event, division, kind, verdict, actor, round_key, records)
SELECT coalesce(event, ''), coalesce(division, ''), kind, coalesce(verdict, ''), coalesce(actor, ''),
    coalesce(round, 0), count(*)
FROM records GROUP BY 1, 2, 3, 4, 5, 6"""
TRIGGER_FUNCTIONS = {
    "records_append_only": APPEND_ONLY_BODY,
    "records_indexed": INDEXED_BODY,
    "records_read_body": READ_BODY,
    "records_counted": COUNTED_BODY,
}
FUNCTIONS = {**TRIGGER_FUNCTIONS, "records_read_right": READ_RIGHT}
# name: (timing and events, row or statement, function), as the catalogue's trigger definition says them.
TRIGGERS = {
    "records_read": "BEFORE INSERT ON records FOR EACH ROW EXECUTE FUNCTION records_read_body()",
    "records_no_update": "BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION records_append_only()",
    "records_no_delete": "BEFORE DELETE ON records FOR EACH ROW EXECUTE FUNCTION records_append_only()",
    "records_no_truncate": "BEFORE TRUNCATE ON records FOR EACH STATEMENT EXECUTE FUNCTION records_append_only()",
    "records_indexed": "AFTER INSERT ON records REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT"
    " EXECUTE FUNCTION records_indexed()",
    "records_counted": "AFTER INSERT ON records REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT"
    " EXECUTE FUNCTION records_counted()",
}


def _trigger_function(name: str) -> str:
    return f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $${TRIGGER_FUNCTIONS[name]}$$"


SCHEMA: list[str] = [
    READ_RIGHT_FUNCTION,
    # The tables and indexes, as on SQLite (audit_tables.TABLES_AND_INDEXES).
    *(part.create(POSTGRESQL) for part in audit_tables.TABLES_AND_INDEXES),
    *(part.create(POSTGRESQL) for part in audit_tables.VIEW_PARTS),
    *(_trigger_function(name) for name in TRIGGER_FUNCTIONS),
    *(f"CREATE TRIGGER {name} {definition}" for name, definition in TRIGGERS.items()),
    # Nobody but the owner may change or remove a record, even before the triggers are asked.
    "REVOKE UPDATE, DELETE, TRUNCATE ON records FROM PUBLIC",
]


def _renew_trigger(connection: Connection, trigger: str, function: str) -> None:
    """Make ``trigger`` and its ``function`` as :data:`TRIGGERS` and :data:`TRIGGER_FUNCTIONS` say (a migration)."""
    connection.execute(f"DROP TRIGGER IF EXISTS {trigger} ON records")
    connection.execute(_trigger_function(function))
    connection.execute(f"CREATE TRIGGER {trigger} {TRIGGERS[trigger]}")


def _create(connection: Connection) -> None:
    for statement in SCHEMA:
        connection.execute(statement)


def _read_once(connection: Connection) -> None:
    """A log made before: its columns read from the body by a trigger and held to it by a CHECK
    (:data:`RECORDS_TABLE`), no longer generated. Its rows keep their values, which the CHECK checks."""
    generated = [
        name
        for (name,) in connection.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('records') AND attgenerated <> ''"
        ).fetchall()
    ]
    if generated:
        connection.execute(
            "ALTER TABLE records " + ", ".join(f"ALTER COLUMN {name} DROP EXPRESSION" for name in generated)
        )
    connection.execute(READ_RIGHT_FUNCTION)
    _renew_trigger(connection, "records_read", "records_read_body")
    connection.execute("ALTER TABLE records DROP CONSTRAINT IF EXISTS records_derived")
    connection.execute(f"ALTER TABLE records ADD CONSTRAINT records_derived {DERIVED_CHECK}")


def _index_per_statement(connection: Connection) -> None:
    """A log made before: its word index and tallies kept once a statement (:data:`INDEXED_BODY`)."""
    _renew_trigger(connection, "records_indexed", "records_indexed")


def _views(connection: Connection) -> None:
    """A log made before: the index and the counts the TD's views read (:data:`audit_tables.VIEW_PARTS`), the
    counts of the records already written taken once, in this migration's transaction, kept from then on by
    each statement's own (:data:`COUNTED_BODY`)."""
    for part in audit_tables.VIEW_PARTS:
        connection.execute(part.create(POSTGRESQL).replace(f" {part.name} ", f" IF NOT EXISTS {part.name} ", 1))
    _renew_trigger(connection, "records_counted", "records_counted")
    connection.execute("DELETE FROM record_counts")
    connection.execute(COUNT_RECORDS)


# 0001 makes a new log as it is now; each later one brings a log made before up to it (and is a no-op's equal on a
# new one).
MIGRATIONS: list[tuple[str, PgMigration]] = [
    ("0001_records", _create),
    ("0002_index_per_statement", _index_per_statement),
    ("0003_columns_read_once", _read_once),
    ("0004_views", _views),
]


def missing_or_changed(connection: Connection) -> list[str]:
    """The parts of :data:`SCHEMA` the database lacks or holds otherwise (tampering or damage), by name."""
    found: list[str] = []
    table = connection.execute(
        "SELECT c.relrowsecurity FROM pg_class c WHERE c.oid = to_regclass('records')"
    ).fetchone()
    if table is None:
        return ["records"]
    if table[0]:
        found.append("records (row-level security)")
    columns = dict(
        connection.execute(
            "SELECT a.attname, CASE WHEN a.attgenerated = '' THEN format_type(a.atttypid, a.atttypmod) END"
            " FROM pg_attribute a WHERE a.attrelid = to_regclass('records') AND a.attnum > 0 AND NOT a.attisdropped"
        ).fetchall()
    )
    found += [name for name, kind, _ in DERIVED if columns.get(name) != _CATALOGUE_TYPES[kind]]
    check = connection.execute(
        "SELECT pg_get_constraintdef(oid), convalidated FROM pg_constraint"
        " WHERE conrelid = to_regclass('records') AND conname = 'records_derived'"
    ).fetchone()
    if check is None or check[1] is not True or " ".join(check[0].split()) != DERIVED_CHECK:
        found.append("records_derived")
    bodies = dict(
        connection.execute(
            "SELECT p.proname, p.prosrc FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace"
            " AND p.proname = ANY(?)",
            (list(FUNCTIONS),),
        ).fetchall()
    )
    found += [name for name, body in FUNCTIONS.items() if bodies.get(name) != body]
    triggers = {
        name: (enabled, " ".join(definition.split()))
        for name, enabled, definition in connection.execute(
            "SELECT tgname, tgenabled, pg_get_triggerdef(oid) FROM pg_trigger"
            " WHERE tgrelid = to_regclass('records') AND NOT tgisinternal"
        ).fetchall()
    }
    for name, definition in TRIGGERS.items():
        enabled, text = triggers.get(name, (None, ""))
        # The catalogue names the table with its schema ("ON public.records"): compare without it.
        shown = text.replace(" ON " + text.split(" ON ", 1)[-1].split(" ", 1)[0], " ON records", 1) if text else ""
        if enabled not in ("O", "A") or shown != f"CREATE TRIGGER {name} {definition}":
            found.append(name)
    found += [
        f"{name} (a rule)"
        for (name,) in connection.execute(
            "SELECT rulename FROM pg_rules WHERE schemaname = current_schema() AND tablename = 'records'"
        ).fetchall()
    ]
    return found
