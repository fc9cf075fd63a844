"""The audit log's schema on PostgreSQL: the twin of :mod:`wordjudge.audit_schema`, table for table.

The same layout as on SQLite: a record is its body (the bytes its hash covers) and every other column is
generated from it and stored; the word index and the tallies are kept by a trigger in the record's own
transaction; triggers refuse UPDATE, DELETE and TRUNCATE. :func:`missing_or_changed` reads the catalogue
back, so that a dropped or disabled trigger, a generated column made plain, a rule or a row-level policy
on the records (which could hide some from a check) is found as tampering, as on SQLite.
"""

from __future__ import annotations

from .postgres import Connection, PgMigration

MIGRATIONS_TABLE = "audit_migrations"


def _text(key: str) -> str:
    return f"(body::jsonb ->> '{key}')"


def _count(key: str) -> str:
    return f"CASE jsonb_typeof(body::jsonb -> '{key}') WHEN 'array' THEN jsonb_array_length(body::jsonb -> '{key}') END"


RECORDS_TABLE = f"""CREATE TABLE records (
    id BIGINT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,
    kind TEXT GENERATED ALWAYS AS {_text("kind")} STORED,
    parent_id BIGINT GENERATED ALWAYS AS ({_text("parent_id")}::bigint) STORED,
    event TEXT GENERATED ALWAYS AS {_text("event")} STORED,
    division TEXT GENERATED ALWAYS AS {_text("division")} STORED,
    round INTEGER GENERATED ALWAYS AS ({_text("round")}::integer) STORED,
    table_label TEXT GENERATED ALWAYS AS {_text("table")} STORED,
    actor TEXT GENERATED ALWAYS AS {_text("actor")} STORED,
    request_id TEXT GENERATED ALWAYS AS {_text("request_id")} STORED,
    created_at TEXT GENERATED ALWAYS AS {_text("created_at")} STORED,
    verdict TEXT GENERATED ALWAYS AS {_text("verdict")} STORED,
    agrees INTEGER GENERATED ALWAYS AS (({_text("agrees")}::boolean)::integer) STORED,
    rule TEXT GENERATED ALWAYS AS {_text("rule")} STORED,
    word_count INTEGER GENERATED ALWAYS AS ({_count("words")}) STORED,
    result_count INTEGER GENERATED ALWAYS AS ({_count("results")}) STORED,
    rejected INTEGER GENERATED ALWAYS AS ((strpos(body, '"acceptable":false') > 0)::integer) STORED
)"""


# Each generated column's expression as the catalogue gives it back (pg_get_expr, spaces folded): a column
# dropped and added again with another expression is found, as SQLite's stored SQL text finds it.
def _read(key: str) -> str:
    return f"((body)::jsonb ->> '{key}'::text)"


def _counted(key: str) -> str:
    part = f"((body)::jsonb -> '{key}'::text)"
    return f"CASE jsonb_typeof({part}) WHEN 'array'::text THEN jsonb_array_length({part}) ELSE NULL::integer END"


GENERATED = {
    **{name: _read(key) for name, key in (("kind", "kind"), ("event", "event"), ("division", "division"))},
    "parent_id": f"({_read('parent_id')})::bigint",
    "round": f"({_read('round')})::integer",
    **{name: _read(key) for name, key in (("table_label", "table"), ("actor", "actor"), ("request_id", "request_id"))},
    **{name: _read(name) for name in ("created_at", "verdict")},
    "agrees": f"(({_read('agrees')})::boolean)::integer",
    "rule": _read("rule"),
    "word_count": _counted("words"),
    "result_count": _counted("results"),
    "rejected": "((strpos(body, '\"acceptable\":false'::text) > 0))::integer",
}

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
FUNCTIONS = {"records_append_only": APPEND_ONLY_BODY, "records_indexed": INDEXED_BODY}
# name: (timing and events, row or statement, function), as the catalogue's trigger definition says them.
TRIGGERS = {
    "records_no_update": "BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION records_append_only()",
    "records_no_delete": "BEFORE DELETE ON records FOR EACH ROW EXECUTE FUNCTION records_append_only()",
    "records_no_truncate": "BEFORE TRUNCATE ON records FOR EACH STATEMENT EXECUTE FUNCTION records_append_only()",
    "records_indexed": "AFTER INSERT ON records REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT"
    " EXECUTE FUNCTION records_indexed()",
}

SCHEMA: list[str] = [
    RECORDS_TABLE,
    # Lists are newest first: see audit_schema.SCHEMA for why each index holds the columns it does.
    "CREATE UNIQUE INDEX records_request ON records (actor, request_id)",
    "CREATE INDEX records_parent ON records (parent_id)",
    "CREATE INDEX records_division ON records (division)",
    "CREATE INDEX records_place ON records (division, round, table_label)",
    "CREATE INDEX records_table ON records (lower(table_label))",  # SQLite's COLLATE NOCASE
    "CREATE INDEX records_actor ON records (actor)",
    "CREATE INDEX records_verdict ON records (verdict, division)",
    "CREATE INDEX records_kind ON records (kind)",
    "CREATE INDEX records_time ON records (created_at)",
    "CREATE INDEX records_disagreements ON records (parent_id) WHERE kind = 'recheck' AND agrees = 0",
    "CREATE TABLE record_words (word TEXT NOT NULL, record_id BIGINT NOT NULL, PRIMARY KEY (word, record_id))",
    """CREATE TABLE tallies (
    event TEXT NOT NULL,
    scope INTEGER NOT NULL,
    division TEXT NOT NULL,
    round_key INTEGER NOT NULL,
    challenges INTEGER NOT NULL,
    acceptable INTEGER NOT NULL,
    first_id BIGINT NOT NULL,
    PRIMARY KEY (event, scope, division, round_key)
)""",
    """CREATE TABLE word_tallies (
    event TEXT NOT NULL,
    scope INTEGER NOT NULL,
    division TEXT NOT NULL,
    round_key INTEGER NOT NULL,
    word TEXT NOT NULL,
    challenges INTEGER NOT NULL,
    first_id BIGINT NOT NULL,
    PRIMARY KEY (event, scope, division, round_key, word)
)""",
    "CREATE INDEX word_tallies_most ON word_tallies (event, scope, division, round_key, challenges DESC, first_id)",
    """CREATE TABLE checkpoints (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    record_id BIGINT NOT NULL,
    hash TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    whole INTEGER NOT NULL
)""",
    *(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $${body}$$" for name, body in FUNCTIONS.items()),
    *(f"CREATE TRIGGER {name} {definition}" for name, definition in TRIGGERS.items()),
    # Nobody but the owner may change or remove a record, even before the triggers are asked.
    "REVOKE UPDATE, DELETE, TRUNCATE ON records FROM PUBLIC",
]


def _create(connection: Connection) -> None:
    for statement in SCHEMA:
        connection.execute(statement)


def _index_per_statement(connection: Connection) -> None:
    """A log made before: its word index and tallies kept once a statement (:data:`INDEXED_BODY`)."""
    connection.execute("DROP TRIGGER records_indexed ON records")
    connection.execute(
        f"CREATE OR REPLACE FUNCTION records_indexed() RETURNS trigger LANGUAGE plpgsql AS $${INDEXED_BODY}$$"
    )
    connection.execute(f"CREATE TRIGGER records_indexed {TRIGGERS['records_indexed']}")


# 0001 makes a new log as it is now; each later one brings a log made before up to it (and is a no-op's equal on a
# new one).
MIGRATIONS: list[tuple[str, PgMigration]] = [
    ("0001_records", _create),
    ("0002_index_per_statement", _index_per_statement),
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
    columns = {
        name: " ".join(expression.split()) if generated == "s" and expression else None
        for name, generated, expression in connection.execute(
            "SELECT a.attname, a.attgenerated, pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a"
            " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
            " WHERE a.attrelid = to_regclass('records') AND a.attnum > 0 AND NOT a.attisdropped"
        ).fetchall()
    }
    found += [name for name, expression in GENERATED.items() if columns.get(name) != expression]
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
    found += [f"{name} (a rule)" for (name,) in connection.execute(
        "SELECT rulename FROM pg_rules WHERE schemaname = current_schema() AND tablename = 'records'"
    ).fetchall()]  # fmt: skip
    return found
