"""Preparing a PostgreSQL database (or one event's schema in it) for wordjudge, as its owner.

``wordjudge serve --database`` creates its tables itself when its role may. For the log to be append-only
against the server itself, the tables are made by another role, their owner, and the server's role is given
what it uses and no more: it may read and add records, never change or remove one, and it cannot disable or
drop the triggers that refuse it (only an owner can). :func:`prepare` does both.
"""

from __future__ import annotations

from psycopg import sql

from wordjudge.hall import roles as hall
from wordjudge.storage import access_db, audit_schema_pg, postgres
from wordjudge.storage.dialect import POSTGRESQL

# What the server's role may do, table by table: the records and their checkpoints are only added to; the word
# index and the tallies are kept by the records' trigger (ON CONFLICT DO UPDATE); the access store is a
# mutable store (revoking a device is an update), with nothing ever deleted.
# The hall's keys are only read: a row the server's role could add (its password is in wordjudge.env) would name
# another key, and every server would warn of it for good; the owner records the key (``database init --key-id``).
_GRANTS = {
    "SELECT, INSERT": ("records", "checkpoints", "hall_servers", "hall_event_files"),
    "SELECT, INSERT, UPDATE": (
        "record_words",
        "tallies",
        "word_tallies",
        "record_counts",
        "devices",
        "pairing_codes",
        "tds",
        "sessions",
        "alerts",
    ),
    "SELECT": (
        "hall_keys",
        audit_schema_pg.MIGRATIONS_TABLE,
        access_db.PG_MIGRATIONS_TABLE,
        hall.PG_MIGRATIONS_TABLE,
    ),
}


def prepare(owner_url: str, server_role: str | None, key_id: str | None = None) -> list[str]:
    """Create or migrate every table of the database (the schema its search path names) as the role of
    ``owner_url``, give ``server_role`` (if given) what the server needs and no more, and record ``key_id`` (if
    given) as the hall key's id. Returns the migrations applied.

    Raises :class:`~wordjudge.base.errors.InvalidInput` for a standby or a schema that does not exist, and
    :class:`psycopg.Error` for what the server refuses (a role that does not exist, no right to create).
    """
    connection = postgres.connect_writer(owner_url, application="wordjudge database init")
    try:
        applied = POSTGRESQL.migrate(connection, audit_schema_pg.MIGRATIONS, audit_schema_pg.MIGRATIONS_TABLE)
        applied += POSTGRESQL.migrate(connection, access_db.PG_MIGRATIONS, access_db.PG_MIGRATIONS_TABLE)
        applied += POSTGRESQL.migrate(connection, hall.PG_MIGRATIONS, hall.PG_MIGRATIONS_TABLE)
        if key_id is not None:
            with connection.raw.transaction():
                hall.record_key(connection, key_id)
        if server_role is not None:
            # What an earlier version granted is taken back first: the server's role never writes the hall's keys.
            with connection.raw.transaction():
                connection.raw.execute(
                    sql.SQL("REVOKE INSERT, UPDATE, DELETE ON hall_keys FROM {}").format(sql.Identifier(server_role))
                )
            role = sql.Identifier(server_role)
            with connection.raw.transaction():
                (current,) = connection.execute("SELECT current_schema()").fetchone() or ("public",)
                schema = sql.Identifier(current)
                connection.raw.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, role))
                for rights, tables in _GRANTS.items():
                    names = sql.SQL(", ").join(sql.Identifier(table) for table in tables)
                    connection.raw.execute(sql.SQL(f"GRANT {rights} ON {{}} TO {{}}").format(names, role))
                connection.raw.execute(sql.SQL("GRANT USAGE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(schema, role))
    finally:
        connection.close()
    return applied
