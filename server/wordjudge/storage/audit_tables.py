"""The audit log's tables and indexes, described once: :mod:`wordjudge.storage.audit_schema` (SQLite) and
:mod:`wordjudge.storage.audit_schema_pg` (PostgreSQL) render them with their dialect, and add their triggers,
which differ too much to share a description (SQLite's triggers, PostgreSQL's plpgsql functions).

What a shipped migration created must render the same for good (``tests/test_dialect.py`` pins it).
"""

from __future__ import annotations

from wordjudge.storage.ddl import Backend, Column, Index, Table


def _json(key: str, pg: str = "") -> dict[Backend, str]:
    """A column read from the body's field ``key``: its value (in PostgreSQL, cast as ``pg`` says)."""
    return {"sqlite": f"json_extract(body, '$.{key}')", "postgresql": f"(d ->> '{key}'){pg}"}


def _count(key: str) -> dict[Backend, str]:
    """A column read from the body: how many items the list ``key`` has (none if it is not one)."""
    return {
        "sqlite": f"json_array_length(body, '$.{key}')",
        "postgresql": f"CASE jsonb_typeof(d -> '{key}') WHEN 'array' THEN jsonb_array_length(d -> '{key}') END",
    }


# The columns read from a record's body, each an expression per backend: of ``body`` in SQLite (a generated
# column); of ``d`` (the body as jsonb) and ``body`` (its text) in PostgreSQL (filled by a trigger before the
# INSERT and held to the body by a CHECK: audit_schema_pg).
DERIVED: tuple[Column, ...] = (
    Column("kind", "TEXT", reads=_json("kind")),
    Column("parent_id", "ROW_ID", reads=_json("parent_id", "::bigint")),
    Column("event", "TEXT", reads=_json("event")),
    Column("division", "TEXT", reads=_json("division")),
    Column("round", "INTEGER", reads=_json("round", "::integer")),
    Column("table_label", "TEXT", reads=_json("table")),
    Column("actor", "TEXT", reads=_json("actor")),
    Column("request_id", "TEXT", reads=_json("request_id")),
    Column("created_at", "TEXT", reads=_json("created_at")),
    Column("verdict", "TEXT", reads=_json("verdict")),
    Column(
        "agrees",
        "INTEGER",
        reads={"sqlite": "json_extract(body, '$.agrees')", "postgresql": "((d ->> 'agrees')::boolean)::integer"},
    ),
    Column("rule", "TEXT", reads=_json("rule")),
    Column("word_count", "INTEGER", reads=_count("words")),
    Column("result_count", "INTEGER", reads=_count("results")),
    # Some per-word result is not acceptable. In canonical JSON the text '"acceptable":false' can only be such a
    # result: inside any string (a note, a typed word) its quotes would be escaped.
    Column(
        "rejected",
        "INTEGER",
        reads={
            "sqlite": "instr(body, '\"acceptable\":false') > 0",
            "postgresql": "(strpos(body, '\"acceptable\":false') > 0)::integer",
        },
    ),
)
# PostgreSQL's CHECK that holds the columns to the body, as the catalogue gives it back (pg_get_constraintdef).
DERIVED_CHECK = f"CHECK (records_read_right(body, {', '.join(column.name for column in DERIVED)}))"

RECORDS = Table(
    "records",
    (
        Column("id", "ROW_ID", "PRIMARY KEY"),
        Column("hash", "TEXT", "NOT NULL UNIQUE"),
        Column("body", "TEXT", "NOT NULL"),
        *DERIVED,
    ),
    only={"postgresql": (f"CONSTRAINT records_derived {DERIVED_CHECK}",)},
)
# The tables and indexes, in the order they are created (the triggers after them, per backend).
TABLES_AND_INDEXES: tuple[Table | Index, ...] = (
    RECORDS,
    # Lists are newest first: an index on a filter's columns alone keeps id order among its matches, so that
    # "WHERE division = ? ORDER BY id DESC LIMIT 100" reads 100 index entries instead of sorting a division.
    Index("records_request", "records", ("actor", "request_id"), unique=True),
    Index("records_parent", "records", ("parent_id",)),
    Index("records_division", "records", ("division",)),
    Index("records_place", "records", ("division", "round", "table_label")),
    # Tables are searched in any case (the console's "table b7" finds B7).
    Index("records_table", "records", ("table_label",), nocase=("table_label",)),
    Index("records_actor", "records", ("actor",)),
    Index("records_verdict", "records", ("verdict", "division")),
    Index("records_kind", "records", ("kind",)),
    Index("records_time", "records", ("created_at",)),
    Index("records_disagreements", "records", ("parent_id",), where="kind = 'recheck' AND agrees = 0"),
    Table(
        "record_words",
        (Column("word", "TEXT", "NOT NULL"), Column("record_id", "ROW_ID", "NOT NULL")),
        ("PRIMARY KEY (word, record_id)",),
        without_rowid=True,
        one_line=True,
    ),
    # scope 0: the event; 1: a division (round_key 0); 2: a division's round (round_key 0: no round).
    Table(
        "tallies",
        (
            Column("event", "TEXT", "NOT NULL"),
            Column("scope", "INTEGER", "NOT NULL"),
            Column("division", "TEXT", "NOT NULL"),
            Column("round_key", "INTEGER", "NOT NULL"),
            Column("challenges", "INTEGER", "NOT NULL"),
            Column("acceptable", "INTEGER", "NOT NULL"),
            Column("first_id", "ROW_ID", "NOT NULL"),
        ),
        ("PRIMARY KEY (event, scope, division, round_key)",),
        without_rowid=True,
    ),
    Table(
        "word_tallies",
        (
            Column("event", "TEXT", "NOT NULL"),
            Column("scope", "INTEGER", "NOT NULL"),
            Column("division", "TEXT", "NOT NULL"),
            Column("round_key", "INTEGER", "NOT NULL"),
            Column("word", "TEXT", "NOT NULL"),
            Column("challenges", "INTEGER", "NOT NULL"),
            Column("first_id", "ROW_ID", "NOT NULL"),
        ),
        ("PRIMARY KEY (event, scope, division, round_key, word)",),
        without_rowid=True,
    ),
    Index(
        "word_tallies_most", "word_tallies", ("event", "scope", "division", "round_key", "challenges DESC", "first_id")
    ),
    Table(
        "checkpoints",
        (
            Column("id", "NEW_ROW_ID", "PRIMARY KEY"),
            Column("record_id", "ROW_ID", "NOT NULL"),
            Column("hash", "TEXT", "NOT NULL"),
            Column("checked_at", "TEXT", "NOT NULL"),
            Column("whole", "INTEGER", "NOT NULL"),
        ),
    ),
)

# Added after the tables above shipped, by a migration of their own on each backend (SQLite's 0005_views,
# PostgreSQL's 0004_views): what the TD's views need to answer in a few ms at a million records (issue 48).
VIEW_PARTS: tuple[Table | Index, ...] = (
    # A table's round, newest first (the console's "round 7, table 42"): neither records_place (its division first,
    # its table compared as written) nor records_table (the table alone, every round's) finds it without reading
    # each record of the table. The table first: a round alone is found walking the ids down (a twentieth of the
    # records are a round's), not through this index sorting a whole round's records.
    Index("records_table_round", "records", ("table_label", "round"), nocase=("table_label",)),
    # How many records each event, division, kind, verdict, device or TD and round holds (round_key 0: none; ''
    # for a change record's verdict), kept in each record's own transaction: a list's ``matching`` count by these
    # filters sums a few rows, never counting a third of the log's index (audit_schema, audit_schema_pg).
    Table(
        "record_counts",
        (
            Column("event", "TEXT", "NOT NULL"),
            Column("division", "TEXT", "NOT NULL"),
            Column("kind", "TEXT", "NOT NULL"),
            Column("verdict", "TEXT", "NOT NULL"),
            Column("actor", "TEXT", "NOT NULL"),
            Column("round_key", "INTEGER", "NOT NULL"),
            Column("records", "INTEGER", "NOT NULL"),
        ),
        # The division first: the filters' most asked (a division's, its verdicts'), a search of the counts.
        ("PRIMARY KEY (division, verdict, kind, actor, round_key, event)",),
        without_rowid=True,
    ),
)
