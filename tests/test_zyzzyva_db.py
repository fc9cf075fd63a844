"""Reading Zyzzyva lexicon databases: the words of a database made with Zyzzyva's schema from a list are the
list's words, the file is only read, and a file that is not one is refused with a message naming it and what to
do. The databases are made here from made-up words, never from an official lexicon."""

from __future__ import annotations

import gzip
import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from wordjudge.base.errors import WordListError
from wordjudge.words import zyzzyva_db
from wordjudge.words.editions import fingerprint
from wordjudge.words.wordlist import SourceFormat, read_word_list
from wordjudge.words.zyzzyva_db import read_zyzzyva_db

from .helpers import write_list
from .kwg_build import build_kwg

# Zyzzyva's own schema: boshvark/zyzzyva-pc, src/libzyzzyva/CreateDatabaseThread.cpp, createTables and
# createIndexes (the word index is unique; the other tables say the database's version and lexicon).
ZYZZYVA_SCHEMA = """
CREATE TABLE words (word text, length integer,
    playability integer, playability_order integer,
    min_playability_order integer, max_playability_order integer,
    combinations0 integer, probability_order0 integer,
    min_probability_order0 integer, max_probability_order0 integer,
    combinations1 integer, probability_order1 integer,
    min_probability_order1 integer, max_probability_order1 integer,
    combinations2 integer, probability_order2 integer,
    min_probability_order2 integer, max_probability_order2 integer,
    alphagram text, num_anagrams integer,
    num_unique_letters integer, num_vowels integer,
    point_value integer, front_hooks text,
    back_hooks text, is_front_hook integer,
    is_back_hook integer, lexicon_symbols text,
    definition text);
CREATE TABLE db_version (version integer);
INSERT INTO db_version (version) VALUES (2);
CREATE TABLE lexicon_date (date date);
CREATE TABLE lexicon_file (file text);
CREATE UNIQUE INDEX word_index on words (word);
CREATE INDEX word_length_index on words (length);
"""
WORDS = ["AA", "AAH", "AAHED", "CAT", "CATS", "CATSUP", "QI", "QIS", "ZA", "ZYZZYVA", "ZYZZYVAS", "JINX"]


def make_db(path: Path, words: Sequence[object], schema: str = ZYZZYVA_SCHEMA) -> Path:
    """A database as Zyzzyva makes one (``schema``), holding ``words`` with the columns it fills for them."""
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(schema)
        for word in words:
            if "length" in schema:
                connection.execute(
                    "INSERT INTO words (word, length, alphagram, front_hooks, back_hooks, definition) "
                    "VALUES (?, ?, ?, '', 's', 'a made-up word')",
                    (word, len(word) if isinstance(word, str) else 0, "".join(sorted(str(word)))),
                )
            else:
                connection.execute("INSERT INTO words (word) VALUES (?)", (word,))
    connection.close()
    return path


def refused(path: Path, key: str) -> WordListError:
    with pytest.raises(WordListError) as caught:
        read_zyzzyva_db(path)
    assert caught.value.msg.key == key, caught.value.message
    assert str(path) in caught.value.message
    assert str(path) in caught.value.msg.text("fr")
    return caught.value


# -- the words --------------------------------------------------------------------------------------


def test_a_zyzzyva_database_holds_the_words_of_its_list(tmp_path: Path) -> None:
    db = make_db(tmp_path / "MADEUP.db", list(WORDS))
    text = read_word_list(write_list(tmp_path / "madeup.txt", WORDS))
    seen: list[tuple[int, int]] = []
    read = read_zyzzyva_db(db, progress=lambda done, total: seen.append((done, total)))
    assert read.words == text.words == set(WORDS)
    assert fingerprint(read.words) == fingerprint(text.words)
    assert (read.format, read.source_name, read.lines, read.duplicates) == (SourceFormat.ZYZZYVA_DB, "MADEUP.db", 12, 0)
    assert read.source_sha256 == hashlib.sha256(db.read_bytes()).hexdigest()
    assert seen[-1] == (12, 12)


def test_words_are_normalised_and_repeats_counted(tmp_path: Path) -> None:
    db = make_db(tmp_path / "loose.db", ["cat", "CAT", "Émeute", "straße"], schema="CREATE TABLE words (word text)")
    read = read_zyzzyva_db(db)
    assert read.words == {"CAT", "ÉMEUTE", "STRASSE"}
    assert (read.lines, read.duplicates) == (4, 1)


def test_the_database_is_only_read(tmp_path: Path) -> None:
    db = make_db(tmp_path / "odd name #1 ?%.db", list(WORDS))  # characters a URI must quote
    db.chmod(0o444)
    tmp_path.chmod(0o555)  # no journal could be written beside it
    try:
        before = (db.read_bytes(), db.stat().st_mtime_ns)
        assert read_zyzzyva_db(db).words == set(WORDS)
        assert (db.read_bytes(), db.stat().st_mtime_ns) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [db.name]
    finally:
        tmp_path.chmod(0o755)


# -- what is refused ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "an empty file"),
        (b"AA\nAB\nCAT\n", "text: if it is a word list, add it as a word list"),
        (gzip.compress(b"AA\nAB\n"), "a gzip-compressed file: decompress it first"),
        (build_kwg([(1, 2), (3, 1, 20)]), "a KWG word graph (wolges, macondo): add it as a KWG, with its tile set"),
        (bytes(range(256)), "binary data of no format wordjudge reads"),
    ],
    ids=["empty", "text", "gzip", "kwg", "binary"],
)
def test_a_file_that_is_not_sqlite_is_named_for_what_it_looks_like(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "CSW.db"
    path.write_bytes(content)
    error = refused(path, "error.zyzzyva_db.not_sqlite")
    assert "is not a Zyzzyva lexicon database (an SQLite file), it looks like " + said in error.message


def test_a_database_without_a_words_table_names_its_tables(tmp_path: Path) -> None:
    db = make_db(tmp_path / "other.db", [], schema="CREATE TABLE cards (question text); CREATE TABLE scores (n int)")
    assert "(its tables: cards, scores)" in refused(db, "error.zyzzyva_db.no_words_table").message
    bare = make_db(tmp_path / "bare.db", [], schema="CREATE TABLE gone (x int); DROP TABLE gone")
    assert "(its tables: none)" in refused(bare, "error.zyzzyva_db.no_words_table").message


def test_a_words_table_without_a_word_column_names_its_columns(tmp_path: Path) -> None:
    db = make_db(tmp_path / "terms.db", [], schema="CREATE TABLE words (term text, meaning text)")
    assert "(its columns: term, meaning)" in refused(db, "error.zyzzyva_db.no_word_column").message


def test_an_empty_words_table_is_refused(tmp_path: Path) -> None:
    refused(make_db(tmp_path / "empty.db", []), "error.zyzzyva_db.empty")


def test_rows_that_are_not_words_are_named(tmp_path: Path) -> None:
    rows: list[object] = ["AA", "ICE CREAM", "CAT3", None, 42, "ZA"]
    db = make_db(tmp_path / "bad.db", rows, schema="CREATE TABLE words (word)")
    error = refused(db, "error.zyzzyva_db.invalid_words")
    assert "4 row(s) of its words table are not words" in error.message
    assert "'ICE CREAM': it has a space inside" in error.message
    assert "'CAT3': it has a digit '3' (DIGIT THREE)" in error.message
    assert "None: it is not text" in error.message
    assert "42: it is not text" in error.message


def test_a_damaged_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    error = refused(path, "error.zyzzyva_db.broken")
    assert "let Zyzzyva rebuild" in error.message


def test_a_database_held_locked_is_refused_after_a_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = make_db(tmp_path / "busy.db", list(WORDS))
    monkeypatch.setattr(zyzzyva_db, "BUSY_TIMEOUT", 0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # as Zyzzyva does while it rebuilds the database
        error = refused(db, "error.zyzzyva_db.broken")
        assert "locked" in error.message
        assert "close it and try again" in error.message
    finally:
        holder.close()
    assert read_zyzzyva_db(db).words == set(WORDS)


def test_a_missing_file_is_said_so(tmp_path: Path) -> None:
    refused(tmp_path / "nowhere.db", "error.word_list.unreadable")
