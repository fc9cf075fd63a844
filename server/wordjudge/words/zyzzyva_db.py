"""Reading a Zyzzyva lexicon database (``~/.collinszyzzyva/lexicons/CSW24.db``, ``~/.zyzzyva/lexicons/*.db``) as a
list of words.

Zyzzyva, the word-study program, keeps each lexicon it has loaded as an SQLite database whose ``words`` table has
one row a word: ``word`` (the word, upper case), then ``length``, ``playability``, probability orders,
``alphagram``, ``front_hooks``, ``back_hooks``, ``definition`` and more (boshvark/zyzzyva-pc,
``src/libzyzzyva/CreateDatabaseThread.cpp``, ``createTables``). Only ``word`` is read: the words are returned
in wordjudge's normal form, as a text list's are (a tile set, if any, is applied to them later).

The file is opened read-only and never written (nor its journal): Zyzzyva may have it open. A database with a
``-wal`` or ``-journal`` file beside it is refused: its last changes may be in that file, not in the database
(SQLite moves them in when the program that made them closes it), so what would be read is not what Zyzzyva
shows. Nothing is compiled from a file that raises here.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

from wordjudge.base.errors import Message, WordListError
from wordjudge.words.normal_form import normalise
from wordjudge.words.sniff import SQLITE_MAGIC, looks_like
from wordjudge.words.wordlist import (
    MAX_DATABASE_BYTES,
    MAX_WORDS,
    Progress,
    SourceFormat,
    WordList,
    checked_size,
    word_problem,
)

#: Seconds to wait for a database another program holds locked (Zyzzyva rebuilding it) before saying so.
BUSY_TIMEOUT = 5.0
_HEAD = 4096  # bytes read to tell what a file that is not a database is
_BATCH = 10_000  # rows fetched at a time
_PROGRESS_EVERY = 20_000
_SHOWN_INVALID = 10  # rows quoted in an error message
# The files SQLite keeps beside a database whose changes are not all in it yet: the write-ahead log (WAL mode) and
# the rollback journal (a transaction under way, or cut short).
_PENDING = ("-wal", "-journal")


def read_zyzzyva_db(path: Path, *, progress: Progress | None = None) -> WordList:
    """Read the words of the Zyzzyva lexicon database at ``path`` (``SELECT word FROM words``), normalised.

    ``progress(rows_done, rows_total)`` is called as the rows are read. Raises :class:`WordListError` naming
    the file and what to do if it is not a regular file of at most
    :data:`~wordjudge.words.wordlist.MAX_DATABASE_BYTES`, has a ``-wal`` or ``-journal`` file beside it,
    cannot be read, is not an SQLite database (saying what it looks like), has no ``words`` table or no ``word``
    column in it, has no rows or more than :data:`~wordjudge.words.wordlist.MAX_WORDS`, is locked or damaged,
    or has rows that are not words.
    """
    checked_size(path, MAX_DATABASE_BYTES)
    for suffix in _PENDING:
        pending = path.with_name(path.name + suffix)
        if pending.exists():
            raise WordListError("error.zyzzyva_db.pending", path=str(path), pending=pending.name)
    source_sha256 = _sha256(path)
    uri = path.resolve().as_uri() + "?mode=ro"  # as_uri quotes what a URI must ('?', '#', '%' in a name)
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)) as connection:
            total = _count_rows(connection, path)
            result = WordList(source_name=path.name, source_sha256=source_sha256, format=SourceFormat.ZYZZYVA_DB)
            invalid = _read_rows(connection, result, total, progress)
    except sqlite3.DatabaseError as exc:
        raise WordListError("error.zyzzyva_db.broken", path=str(path), reason=str(exc)) from exc
    if invalid:
        raise _invalid_rows_error(path, invalid)
    return result


def _sha256(path: Path) -> str:
    """The file's SHA-256, after checking that it is an SQLite database (by its header): raises
    :class:`WordListError` if it cannot be read or is not one, saying what it looks like."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD)
            if not head.startswith(SQLITE_MAGIC):
                raise WordListError("error.zyzzyva_db.not_sqlite", path=str(path), looks=looks_like(head))
            digest.update(head)
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    return digest.hexdigest()


def _count_rows(connection: sqlite3.Connection, path: Path) -> int:
    """The number of rows of the database's ``words`` table; raises :class:`WordListError` if it has no such
    table (naming the tables it has), no ``word`` column (naming its columns), or no rows."""
    tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    if not any(name.casefold() == "words" for name in tables):  # SQLite's names ignore case
        listed = ", ".join(tables) if tables else Message("error.zyzzyva_db.no_tables")
        raise WordListError("error.zyzzyva_db.no_words_table", path=str(path), tables=listed)
    columns = [row[1] for row in connection.execute("PRAGMA table_info(words)")]
    if not any(name.casefold() == "word" for name in columns):
        raise WordListError("error.zyzzyva_db.no_word_column", path=str(path), columns=", ".join(columns))
    total: int = connection.execute("SELECT count(*) FROM words").fetchone()[0]
    if total == 0:
        raise WordListError("error.zyzzyva_db.empty", path=str(path))
    if total > MAX_WORDS:
        raise WordListError("error.zyzzyva_db.too_many", path=str(path), n=total, max=MAX_WORDS)
    return total


def _read_rows(
    connection: sqlite3.Connection, result: WordList, total: int, progress: Progress | None
) -> list[tuple[object, str]]:
    """Read every row's word into ``result``; return the rows that are not words, as (value, why)."""
    invalid: list[tuple[object, str]] = []
    words = result.words
    cursor = connection.execute("SELECT word FROM words")
    while rows := cursor.fetchmany(_BATCH):
        for (value,) in rows:
            result.lines += 1
            if progress is not None and result.lines % _PROGRESS_EVERY == 0:
                progress(result.lines, total)
            if not isinstance(value, str):  # NULL, a number or a blob: SQLite columns take any type
                invalid.append((value, "it is not text"))
                continue
            word = normalise(value.strip())
            problem = word_problem(word)
            if problem is not None:
                invalid.append((value, problem))
            elif word in words:
                result.duplicates += 1
            else:
                words.add(word)
    if progress is not None:
        progress(result.lines, total)
    return invalid


def _invalid_rows_error(path: Path, invalid: list[tuple[object, str]]) -> WordListError:
    shown = [f"{value!r}: {why}" for value, why in invalid[:_SHOWN_INVALID]]
    more = Message("error.word_list.more", n=len(invalid) - len(shown)) if len(invalid) > len(shown) else ""
    return WordListError(
        "error.zyzzyva_db.invalid_words",
        path=str(path),
        n=len(invalid),
        rows="\n  ".join(shown),
        more=more,
        details=[{"word": repr(value), "reason": why} for value, why in invalid[:100]],
    )
