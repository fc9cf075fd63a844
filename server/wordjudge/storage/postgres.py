"""PostgreSQL as wordjudge's database: connecting, the checks before use, and named migrations.

SQLite (:mod:`wordjudge.storage.database`) is the embedded default; ``--database postgresql://USER@HOST:PORT/DB``
puts the stores there instead. The store modules keep one SQL text for both where the two agree, written
with SQLite's ``?`` and ``:name`` placeholders: :class:`Connection` turns them into psycopg's, and offers
the few calls of :class:`sqlite3.Connection` the stores use (``execute``, ``executemany``, ``interrupt``,
``close``), so that a store's code reads the same on both. Where the dialects differ, the difference is
:mod:`wordjudge.storage.dialect`'s (which also runs the named migrations of either backend).

A connection is in autocommit mode, as SQLite's are here: a store opens its transactions itself.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import psycopg
import psycopg.conninfo
import psycopg.errors

from wordjudge.base.errors import InvalidInput, WordjudgeError

SCHEMES = ("postgresql", "postgres")
# A lock held elsewhere is waited for as long as SQLite's busy timeout (wordjudge.storage.database.BUSY_TIMEOUT_MS,
# not imported: that module is the SQLite side's; tests/test_dialect.py checks the two agree).
LOCK_TIMEOUT_MS = 2000
CONNECT_TIMEOUT = 5  # seconds: a server that does not answer is named quickly, not waited for

# What either backend raises for a database that fails: stores catch these, never one library's alone.
DatabaseError: tuple[type[Exception], ...] = (sqlite3.Error, psycopg.Error)
IntegrityError: tuple[type[Exception], ...] = (sqlite3.IntegrityError, psycopg.errors.IntegrityError)
# What making a store's connection may raise: the database or the network fails, or the database takes no writes
# (a standby, its schema missing: :func:`connect_writer`'s InvalidInput). A store that catches these is out of use.
CONNECT_FAILURES: tuple[type[Exception], ...] = (WordjudgeError, OSError, *DatabaseError)

PgMigration = str | Callable[["Connection"], None]


def shown(url: str) -> str:
    """``url`` as it may be shown or logged: without its password. Never raises, even for a URL that is not one
    (a port that is no number, an unclosed IPv6 bracket): it is what error messages name."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _PASSWORD.sub(r"\1@", url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return urlunsplit((parts.scheme, f"{user}@{host}" if user else host, parts.path, parts.query, parts.fragment))


_PASSWORD = re.compile(r"(://[^:/@]*):[^@]*@")  # the password of a URL urlsplit cannot read


def check_url(url: str) -> str:
    """Return ``url`` if it is a PostgreSQL URL wordjudge can use; raise :class:`InvalidInput` naming what is wrong
    (not a postgresql:// URL, no database named, a port that is no port, an option libpq does not know)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (read for its check: a number from 0 to 65535)
    except ValueError as exc:
        raise InvalidInput("error.database.bad_url", url=shown(url), reason=" ".join(str(exc).split())) from exc
    if parts.scheme not in SCHEMES:
        raise InvalidInput("error.database.not_postgresql", url=shown(url))
    if not parts.path.strip("/") and "dbname=" not in parts.query:
        raise InvalidInput("error.database.no_name", url=shown(url))
    try:
        psycopg.conninfo.conninfo_to_dict(url)  # an option libpq does not know
    except psycopg.ProgrammingError as exc:
        raise InvalidInput("error.database.bad_url", url=shown(url), reason=" ".join(str(exc).split())) from exc
    return url


class Connection:
    """A psycopg connection that takes SQLite's placeholders, in autocommit mode (see the module's docstring)."""

    def __init__(self, raw: psycopg.Connection[tuple[Any, ...]]) -> None:
        self.raw = raw
        self._pipelined = False

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor[Any]:
        """Run ``sql`` (with ``?`` or ``:name`` placeholders) and return its cursor (``fetchone``, iteration...)."""
        prepare = False if self._pipelined else None  # see pipeline()
        if params is None or (not params and not isinstance(params, Mapping)):
            # Without parameters psycopg sends the text as it is: "%" needs no escape.
            return self.raw.execute(sql, prepare=prepare)
        return self.raw.execute(_translated(sql), params, prepare=prepare)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run ``sql`` once for each of ``rows`` (in one round trip where psycopg can)."""
        with self.raw.cursor() as cursor:
            cursor.executemany(_translated(sql), rows)

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` as the server sends them, never all in memory at once (the chain walk)."""
        with self.raw.cursor() as cursor:
            yield from cursor.stream(_translated(sql), params, size=2000)

    @contextmanager
    def pipeline(self) -> Iterator[None]:
        """Within, statements are sent without waiting for their answers, which come at the end or when a
        result is read (psycopg's pipeline mode); an error surfaces then, the statements after it skipped.

        None is prepared within: psycopg prepares a statement run often by sending a PREPARE ahead of it, and
        when a pipeline is aborted that PREPARE is skipped while psycopg counts it as made, so every later run
        of the statement failed ("prepared statement _pg3_18 does not exist"). A failure within is raised as
        it is, the pipeline's own "aborted" at its end aside.
        """
        self._pipelined, failure = True, None
        try:
            with self.raw.pipeline():
                try:
                    yield
                except psycopg.Error as exc:  # not raised through psycopg's exit, which logs a warning of its own
                    failure = exc
        except psycopg.Error:  # the pipeline's end, aborted by that failure
            if failure is None:
                raise
        finally:
            self._pipelined = False
        if failure is not None:
            raise failure

    def interrupt(self) -> None:
        """Cancel the statement running on this connection (from another thread), as SQLite's interrupt does."""
        self.raw.cancel_safe(timeout=2)

    def close(self) -> None:
        """Close the connection (an open transaction is rolled back by the server)."""
        self.raw.close()

    @property
    def broken(self) -> bool:
        """Whether the connection is lost (the server went away): it cannot be used again."""
        return self.raw.closed or self.raw.broken


class Cursor(Protocol):
    """What the stores read of a cursor, on either backend (sqlite3's, or psycopg's)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class AnyConnection(Protocol):
    """What the stores' functions take: a :class:`sqlite3.Connection` or a :class:`Connection` (PostgreSQL)."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...

    def close(self) -> None: ...


def connect(url: str, *, read_only: bool = False, application: str = "wordjudge") -> Connection:
    """Connect to the PostgreSQL database ``url``, in autocommit mode; ``read_only`` refuses every write on it.

    Raises :class:`psycopg.Error` (see :func:`describe` for a message a TD can act on).
    """
    raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name=application)
    # Every time is written by wordjudge in UTC as text; the session's own settings must not change a read.
    raw.execute("SET TIME ZONE 'UTC'")
    # A lock held elsewhere (a TD's psql, a migration) is waited for as long as SQLite's busy timeout, then
    # refused with the server's reason: never a verdict path that hangs without a word.
    raw.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
    if read_only:
        raw.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    return Connection(raw)


def connect_writer(url: str, *, application: str = "wordjudge") -> Connection:
    """Connect for writing: refused, naming the problem, if ``url`` is a standby (it cannot take writes) or its
    search path names no schema that exists (``?options=-csearch_path=NAME``: an event's schema, not made yet).

    Raises :class:`InvalidInput` for either, :class:`psycopg.Error` if the server cannot be used.
    """
    connection = connect(url, application=application)
    in_recovery, schema = connection.execute("SELECT pg_is_in_recovery(), current_schema()").fetchone() or (0, 0)
    if in_recovery or schema is None:
        connection.close()
        if in_recovery:
            raise InvalidInput("error.database.standby", url=shown(url))
        raise InvalidInput("error.database.no_schema", url=shown(url))
    return connection


def reason(exc: BaseException) -> str:
    """A database failure in words: SQLite's own, or what :func:`describe` makes of PostgreSQL's."""
    return str(exc) if isinstance(exc, (sqlite3.Error, OSError)) else describe(exc)


_REFUSALS = (
    (
        r"no password supplied",
        "the server asks for a password and the URL gives none: give it (postgresql://USER:PASSWORD@HOST:PORT/DB), "
        "or put it in the user's ~/.pgpass file",
    ),
    (
        r"pg_hba\.conf",
        "the server does not let this user reach this database from this machine: add a line for it to the "
        "server's pg_hba.conf, then reload PostgreSQL",
    ),
    (
        r"invalid response to SSL negotiation",
        "something answers at that address, but not as PostgreSQL does: check the URL's host and port",
    ),
    (
        r"does not support SSL|SSL (was|is) required|SSL off",
        "the URL's SSL setting (sslmode) and the server's do not agree: leave sslmode out, or set up SSL on the server",
    ),
    (
        r"failed to resolve host|could not translate host name",
        "the host name in the URL is not known on this network: check it, or give the server's address",
    ),
    (
        r"the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)",
        "the server is starting or stopping: wait a few seconds and try again",
    ),
    (
        r"too many (clients|connections)|remaining connection slots are reserved",
        "the server has no connection to spare (max_connections): stop what holds them, or raise the limit",
    ),
)


def describe(exc: BaseException) -> str:
    """What went wrong with a PostgreSQL server, in words a TD can act on (the server's own words kept)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, psycopg.errors.InvalidPassword) or "password authentication failed" in text:
        return f"the server refused the user name or password ({text})"
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return (
            f"the database user may not do this ({text}): if the schema is older than this wordjudge, run "
            "`wordjudge database init` as its owner"
        )
    if re.search(r'\brole "[^"]*" does not exist', text):
        return f"there is no such user on that server: create it (createuser), or give the right user name ({text})"
    if isinstance(exc, psycopg.errors.InvalidCatalogName) or ("database" in text and "does not exist" in text):
        return f"there is no such database on that server: create it first ({text})"
    if isinstance(exc, psycopg.OperationalError) and re.search(r"\binvalid \S+ value\b|\binvalid port\b", text):
        return f"the database URL's settings are not right: give postgresql://USER@HOST:PORT/DATABASE ({text})"
    # Refusals made once the server was reached: saying "cannot be reached" of them sent TDs to the wrong place.
    for pattern, said in _REFUSALS:
        if isinstance(exc, psycopg.OperationalError) and re.search(pattern, text):
            return f"{said} ({text})"
    if isinstance(exc, psycopg.OperationalError) and ("connect" in text or "timeout" in text):
        return f"the server cannot be reached: is PostgreSQL running there, and the address right? ({text})"
    return text


# What the translation reads, left to right: a quoted literal or identifier, a comment or a dollar-quoted body
# (kept, but for its "%"), PostgreSQL's "::" cast, a placeholder (SQLite's "?" or ":name") or a "%".
_TOKEN = re.compile(
    r"'(?:[^']|'')*'"  # a string literal ('' is a quote within)
    r'|"(?:[^"]|"")*"'  # a quoted identifier
    r"|--[^\n]*"  # a comment to the line's end
    r"|/\*.*?\*/"  # a block comment
    r"|(?<!\w)(\$(?:[A-Za-z_]\w*)?\$).*?\1"  # a dollar-quoted body ($$...$$, $fn$...$fn$)
    r"|::"
    r"|\?"
    r"|(?<![\w:]):([A-Za-z_]\w*)"
    r"|%",
    re.DOTALL,
)


@lru_cache(maxsize=512)
def _translated(sql: str) -> str:
    """``sql`` with SQLite's placeholders as psycopg's, for a statement run with parameters: ``?`` as ``%s``,
    ``:name`` as ``%(name)s``, and every ``%`` as ``%%`` (psycopg reads a lone one as a placeholder, within quotes
    too, and refuses the statement), a ``?`` or ``:name`` within quotes or a comment left as it is."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        if match.group(2) is not None:
            return f"%({match.group(2)})s"
        return token.replace("%", "%%")  # a literal, identifier, comment or body: its "%" escaped, the rest kept

    return _TOKEN.sub(one, sql)
