"""``wordjudge lexicon add`` on the files TDs and engines have (issue 38): a KWG word graph (wolges, macondo) and a
Zyzzyva lexicon database beside text lists, each told from the file, each identifying its edition by the same
fingerprint as the same words read as text; bad files refused naming the file and the fix, nothing compiled."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from wordjudge.cli.main import main as cli
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.sources import kind_of, read_source
from wordjudge.words.tiles import builtin
from wordjudge.words.wordlist import SourceFormat, read_word_list

from .helpers import write_list
from .kwg_build import build_kwg, tile_indices
from .test_zyzzyva_db import make_db
from .tile_lists import LISTS, NAMES, compile_list


def add(data_dir: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["lexicon", "add", *args, "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    return result.output


def fingerprint_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("Fingerprint: "))


@pytest.mark.parametrize("language", ["spanish", "catalan", "welsh"])
def test_a_list_read_as_text_and_as_kwg_has_one_fingerprint(tmp_path: Path, data_dir: Path, language: str) -> None:
    tiles = builtin(language)
    text = write_list(tmp_path / f"{language}.txt", LISTS[language])
    stored = read_word_list(text, tiles=tiles).words
    kwg = tmp_path / f"{language}.kwg"
    kwg.write_bytes(build_kwg(tile_indices(stored, tiles)))
    assert kind_of(kwg) is SourceFormat.KWG
    assert kind_of(text) is SourceFormat.AUTO
    as_text = add(data_dir, str(text), "--name", "T", "--tiles", language)
    as_kwg = add(data_dir, str(kwg), "--name", "K", "--tiles", language)
    assert fingerprint_line(as_text) == fingerprint_line(as_kwg)
    store = LexiconStore(data_dir / "lexicons")
    assert store.open("T").words() == store.open("K").words()
    assert f"Read {language}.kwg, a KWG word graph (wolges, macondo): " in as_kwg


def test_a_kwg_named_as_the_engines_name_spanish_lexicons_is_read_with_the_spanish_tiles(
    tmp_path: Path, data_dir: Path
) -> None:
    tiles = builtin("spanish")
    kwg = tmp_path / "FISE2.kwg"
    kwg.write_bytes(
        build_kwg(
            tile_indices(read_word_list(write_list(tmp_path / "es.txt", LISTS["spanish"]), tiles=tiles).words, tiles)
        )
    )
    output = add(data_dir, str(kwg), "--name", "ES")
    assert "Tiles: spanish, from the file's name (give --tiles to choose another)" in output
    assert LexiconStore(data_dir / "lexicons").open("ES").tiles == tiles


def test_a_zyzzyva_database_is_read_as_its_text_list_is(tmp_path: Path, data_dir: Path) -> None:
    words = ["CAT", "DOGS", "QUIXOTRY", "ZA"]
    database = tmp_path / "CSW-T.db"
    make_db(database, words)
    text = write_list(tmp_path / "words.txt", words)
    assert kind_of(database) is SourceFormat.ZYZZYVA_DB
    assert fingerprint_line(add(data_dir, str(database), "--name", "Z")) == fingerprint_line(
        add(data_dir, str(text), "--name", "T")
    )
    # With tiles: the database's letters read into them, as a text list's are.
    spanish = tmp_path / "es.db"
    make_db(spanish, ["CHICO", "PERRO"])
    assert read_source(spanish, tiles=builtin("spanish")).words == {"[CH]ICO", "PE[RR]O"}


def test_a_database_word_no_tile_makes_is_refused_naming_it_and_nothing_is_compiled(
    tmp_path: Path, data_dir: Path
) -> None:
    database = tmp_path / "es.db"
    make_db(database, ["CHICO", "KILO"])
    result = CliRunner().invoke(
        cli, ["lexicon", "add", str(database), "--name", "ES", "--tiles", "spanish", "--data-dir", str(data_dir)]
    )
    assert result.exit_code != 0
    assert "es.db: 1 word(s) cannot be made of the tiles:" in result.output
    assert "'KILO': it cannot be made of the spanish tiles: 'K'" in result.output
    assert not (data_dir / "lexicons" / "ES").exists()


def test_a_database_without_a_words_table_is_refused_naming_the_file(tmp_path: Path, data_dir: Path) -> None:
    database = tmp_path / "notes.db"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.commit()
    result = CliRunner().invoke(cli, ["lexicon", "add", str(database), "--name", "N", "--data-dir", str(data_dir)])
    assert result.exit_code != 0
    assert "notes.db" in result.output
    assert "words" in result.output
    assert not (data_dir / "lexicons" / "N").exists()


def test_a_truncated_kwg_is_refused_naming_the_file(tmp_path: Path, data_dir: Path) -> None:
    tiles = builtin("english")
    kwg = tmp_path / "cut.kwg"
    kwg.write_bytes(build_kwg(tile_indices(["CAT", "CATS", "DOG"], tiles))[:-8])
    result = CliRunner().invoke(cli, ["lexicon", "add", str(kwg), "--name", "C", "--data-dir", str(data_dir)])
    assert result.exit_code != 0
    assert "cut.kwg" in result.output
    assert not (data_dir / "lexicons" / "C").exists()


def test_lexicon_check_shows_every_reading_of_a_word_as_tiles(data_dir: Path) -> None:
    compile_list(data_dir, "welsh")
    result = CliRunner().invoke(
        cli, ["lexicon", "check", NAMES["welsh"], "bangor", "bango", "--data-dir", str(data_dir)]
    )
    rows = [line.split() for line in result.output.splitlines()]
    assert ["BA[NG]OR", "NOT", "acceptable", "not", "in", "CYM-T"] in rows, result.output
    assert ["BANGOR", "acceptable", "in", "CYM-T"] in rows
    assert ["BANGO", "NOT", "acceptable", "not", "in", "CYM-T"] in rows
    assert rows[-1][:3] == ["Verdict:", "UNACCEPTABLE", "(2"]  # BANGO is a word no way


def test_an_english_kwg_compiles_to_a_lexicon_of_plain_letters_as_its_text_list_does(
    tmp_path: Path, data_dir: Path
) -> None:
    words = ["CAT", "CATS", "QUIXOTRY", "ZA"]
    kwg = tmp_path / "CSW-T.kwg"
    kwg.write_bytes(build_kwg(tile_indices(words, builtin("english"))))
    text = write_list(tmp_path / "csw.txt", words)
    assert fingerprint_line(add(data_dir, str(kwg), "--name", "K")) == fingerprint_line(
        add(data_dir, str(text), "--name", "T")
    )
    manifest = LexiconStore(data_dir / "lexicons").manifest("K")
    assert manifest.tiles is None  # one letter a tile: served, shown and judged as the text list's is
    assert manifest.format == 1
