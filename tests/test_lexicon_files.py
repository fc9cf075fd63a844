"""``wordjudge lexicon add`` decides nothing by guessing (issue 43): a KWG is read with the tile set given, named
by its file's name as the engines name theirs, or known by its SHA-256, and refused otherwise; a set that does not
fit its words is refused (or forced, and the lexicon says so); an alphagram graph is not a lexicon; and any file,
a hostile graph, a device, a pipe, a file of gigabytes, a database with changes beside it, ends in seconds with an
error naming it, nothing compiled. The KWGs are built here from made-up words (tests/made_up_lexicons.py)."""

from __future__ import annotations

import gzip
import hashlib
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wordjudge.base.errors import InvalidInput, WordListError
from wordjudge.cli.main import main as cli
from wordjudge.words import kwg as kwg_module
from wordjudge.words import wordlist as wordlist_module
from wordjudge.words.editions import load_registry
from wordjudge.words.kwg import read_kwg
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.sources import named_tiles, read_source
from wordjudge.words.tile_fit import BAGS
from wordjudge.words.tiles import BUILTIN, builtin, load
from wordjudge.words.wordlist import read_bounded, read_word_list

from .helpers import write_list
from .kwg_build import build_kwg, node, pack, tile_indices
from .made_up_lexicons import CATALAN_WORDS, SPANISH_WORDS
from .test_zyzzyva_db import make_db

CATALAN = builtin("catalan")


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def catalan_kwg(path: Path, words: list[str] = CATALAN_WORDS) -> Path:
    path.write_bytes(build_kwg(tile_indices(words, CATALAN)))
    return path


def add(data_dir: Path, source: Path, *args: str, name: str = "L") -> Result:
    return invoke(["lexicon", "add", str(source), "--name", name, *args, "--data-dir", str(data_dir)])


def refused(result: Result, data_dir: Path, *said: str, name: str = "L") -> None:
    """The command failed, said each of ``said``, and compiled nothing."""
    assert result.exit_code != 0, result.output
    for text in said:
        assert text in result.output, result.output
    assert not (data_dir / "lexicons" / name).exists()


# -- which tiles -------------------------------------------------------------------------------------------


def test_a_kwg_whose_name_says_nothing_is_refused_naming_the_sets(tmp_path: Path, data_dir: Path) -> None:
    kwg = catalan_kwg(tmp_path / "catala.kwg")  # DISC2.kwg, renamed
    result = add(data_dir, kwg)
    refused(result, data_dir, f"{kwg}: a KWG does not say which tiles its numbers are", "give --tiles")
    assert "english, spanish, catalan, welsh" in result.output
    assert "from the file's name" not in result.output


def test_a_kwg_named_as_the_engines_name_it_is_read_with_that_set(tmp_path: Path, data_dir: Path) -> None:
    result = add(data_dir, catalan_kwg(tmp_path / "DISC2.kwg"))
    assert result.exit_code == 0, result.output
    assert "Tiles: catalan, from the file's name (give --tiles to choose another)" in result.output
    assert LexiconStore(data_dir / "lexicons").open("L").tiles == CATALAN


@pytest.mark.parametrize(
    ("name", "tiles"),
    [
        ("CSW21.kwg", "english"),
        ("NWL2020.kwg", "english"),
        ("nwl23.kwg", "english"),
        ("NSWL20.kwg", "english"),
        ("ECWL.kwg", "english"),
        ("CSW19X.kwg", "english"),
        ("TWL06.kwg", "english"),
        ("FILE2017.kwg", "spanish"),
        ("FISE2016_converted.kwg", "spanish"),
        ("DISC2.kwg", "catalan"),
        ("catala.kwg", None),
        ("files.kwg", None),
        ("discs.kwg", None),
        ("lexicon.kwg", None),
        ("FRA20.kwg", None),  # French: no built-in set
    ],
)
def test_the_names_that_say_a_set(name: str, tiles: str | None) -> None:
    found = named_tiles(Path(name))
    assert (found.name if found else None) == tiles


def test_the_set_given_is_not_said_to_come_from_the_name(tmp_path: Path, data_dir: Path) -> None:
    result = add(data_dir, catalan_kwg(tmp_path / "catala.kwg"), "--tiles", "catalan")
    assert result.exit_code == 0, result.output
    assert "Tiles: catalan" not in result.output
    assert "from the file's name" not in result.output


def test_a_kwg_the_registry_knows_by_its_sha256_is_read_with_its_set(tmp_path: Path) -> None:
    kwg = catalan_kwg(tmp_path / "catala.kwg")
    sha256 = hashlib.sha256(kwg.read_bytes()).hexdigest()
    registry = tmp_path / "editions.toml"
    registry.write_text(
        "[[edition]]\nname = 'X'\ntitle = 'X'\nwords = 1\nofficial = false\n\n"
        f"[[kwg]]\nsha256 = '{sha256.upper()}'\ntiles = 'catalan'\nedition = 'DISC-T'\nsource = 'made up for a test'\n",
        "utf-8",
    )
    read = read_source(kwg, registry=load_registry(registry))
    assert read.tiles == CATALAN
    assert read.tiles_said is not None
    assert read.tiles_said.text("en") == "from the registry of known editions: DISC-T, made up for a test"
    with pytest.raises(WordListError) as caught:
        read_source(kwg)  # the shipped registry does not know it
    assert caught.value.msg.key == "error.kwg.no_tiles"


def test_a_registry_kwg_entry_of_a_set_wordjudge_lacks_is_refused_naming_the_sets(tmp_path: Path) -> None:
    kwg = catalan_kwg(tmp_path / "catala.kwg")
    registry = tmp_path / "editions.toml"
    registry.write_text(
        "[[edition]]\nname = 'X'\ntitle = 'X'\nwords = 1\nofficial = false\n\n"
        f"[[kwg]]\nsha256 = '{hashlib.sha256(kwg.read_bytes()).hexdigest()}'\ntiles = 'klingon'\n"
        "edition = 'K'\nsource = 'nowhere'\n",
        "utf-8",
    )
    with pytest.raises(InvalidInput, match="klingon"):
        read_source(kwg, registry=load_registry(registry))


# -- a set that does not fit ---------------------------------------------------------------------------------


def test_the_bags_are_the_built_in_sets(tmp_path: Path) -> None:
    assert set(BAGS) == set(BUILTIN)
    for name, bag in BAGS.items():
        assert len(bag) == len(BUILTIN[name].tiles), name


def test_a_catalan_kwg_read_with_its_own_set_fits(tmp_path: Path) -> None:
    read = read_kwg(catalan_kwg(tmp_path / "ca.kwg"), CATALAN)
    assert len(read.words) == len(CATALAN_WORDS)
    assert read.tiles_forced == ""
    spanish = builtin("spanish")
    es = tmp_path / "es.kwg"
    es.write_bytes(build_kwg(tile_indices(SPANISH_WORDS, spanish)))
    assert len(read_kwg(es, spanish).words) == len(SPANISH_WORDS)


def test_a_catalan_kwg_read_with_the_spanish_set_is_refused_for_the_tiles_it_never_uses(
    tmp_path: Path, data_dir: Path
) -> None:
    kwg = catalan_kwg(tmp_path / "cat.kwg")
    result = add(data_dir, kwg, "--tiles", "spanish")
    refused(
        result,
        data_dir,
        f"{kwg}: read with the spanish tile set (given with --tiles), its 2,501 words never use these tiles of "
        "the set: Y Z",
        "--force-tiles",
    )


def test_a_catalan_kwg_read_as_english_is_refused_for_its_tile_frequencies(tmp_path: Path, data_dir: Path) -> None:
    # Every tile number 1..26 is used (the English set has 26 tiles too): only the frequencies tell.
    kwg = catalan_kwg(tmp_path / "CSW-cat.kwg")  # a name that says English, wrongly
    result = add(data_dir, kwg)
    refused(
        result,
        data_dir,
        f"{kwg}: read with the english tile set (from the file's name), its words do not use the tiles as english",
        "but 0.07 from the catalan bag's",
        "catalan most likely",
    )


def test_a_set_forced_is_compiled_and_the_lexicon_says_so(tmp_path: Path, data_dir: Path) -> None:
    kwg = catalan_kwg(tmp_path / "cat.kwg")
    result = add(data_dir, kwg, "--tiles", "spanish", "--force-tiles")
    assert result.exit_code == 0, result.output
    assert "WARNING: --force-tiles: " in result.output
    manifest = LexiconStore(data_dir / "lexicons").manifest("L")
    assert "never use these tiles of the set: Y Z" in manifest.tiles_forced
    info = invoke(["lexicon", "info", "L", "--data-dir", str(data_dir)])
    assert "TILES FORCED (--force-tiles): " in info.output
    listed = invoke(["lexicon", "list", "--data-dir", str(data_dir)])
    assert "TILES FORCED" in listed.output


def test_a_custom_set_gets_the_structural_checks_only(tmp_path: Path) -> None:
    # The Catalan tiles in a TOML file of the TD's: no bag, so no frequencies; all its tiles used.
    toml = tmp_path / "mine.toml"
    toml.write_text("tiles = [" + ", ".join(f'"{tile}"' for tile in CATALAN.tiles) + "]\n", "utf-8")
    assert len(read_kwg(catalan_kwg(tmp_path / "c.kwg"), load(toml)).words) == len(CATALAN_WORDS)


def test_a_small_list_is_too_small_to_judge_its_tiles(tmp_path: Path) -> None:
    kwg = tmp_path / "few.kwg"
    kwg.write_bytes(build_kwg(tile_indices(["CASA", "[QU]ATRE"], CATALAN)))
    assert read_kwg(kwg, builtin("english")).words == {"CAUA", "SAVTF"}  # two words tell nothing of their set


# -- not a lexicon ---------------------------------------------------------------------------------------------


def test_an_alphagram_graph_is_refused_as_not_a_lexicon(tmp_path: Path, data_dir: Path) -> None:
    alphagrams = {tuple(sorted(word)) for word in tile_indices(CATALAN_WORDS, CATALAN)}
    kwg = tmp_path / "DISC2.kwg"  # MAGPIE's .kad, renamed
    kwg.write_bytes(build_kwg(alphagrams))
    result = add(data_dir, kwg, "--force-tiles")  # no override for this
    refused(result, data_dir, f"{kwg}: is an alphagram graph, not a lexicon: ", "(100%)")


def hostile_graph(levels: int = 41) -> bytes:
    """340 bytes: the word A, then B followed by ``levels`` levels of two tiles each leading to both tiles of the
    next level (shared tails), no word among the 2^41 paths."""
    nodes = [node(0, is_end=True, arc=1), node(1, accepts=True), node(2, is_end=True, arc=3)]
    for level in range(levels):
        below = len(nodes) + 2 if level < levels - 1 else 0
        nodes += [node(1, arc=below), node(2, is_end=True, arc=below)]
    return pack(nodes)


def test_a_hostile_graph_of_paths_to_no_word_is_refused(tmp_path: Path, data_dir: Path) -> None:
    kwg = tmp_path / "CSW.kwg"
    kwg.write_bytes(hostile_graph())
    assert kwg.stat().st_size == 340
    result = add(data_dir, kwg)  # listing its paths would take days
    refused(result, data_dir, f"{kwg}: node ", "leads to no word")


def test_a_graph_of_more_paths_than_a_lexicon_walks_is_refused(tmp_path: Path) -> None:
    # 2^20 words of 64 tiles: 20 levels of two tiles, then one tail of 44 tiles shared by every word. Few words,
    # but 46 million beginnings of words to list; counted, never listed.
    nodes = [node(0, is_end=True, arc=1)]
    for _level in range(20):
        below = len(nodes) + 2
        nodes += [node(1, arc=below), node(2, is_end=True, arc=below)]
    for position in range(44):
        nodes.append(node(3, accepts=position == 43, is_end=True, arc=0 if position == 43 else len(nodes) + 1))
    kwg = tmp_path / "CSW.kwg"
    kwg.write_bytes(pack(nodes))
    with pytest.raises(WordListError) as caught:
        read_kwg(kwg, builtin("english"))
    assert caught.value.msg.key == "error.kwg.too_many_paths"
    assert f"more than {kwg_module.MAX_WALK:,} word beginnings to walk for its 1,048,576 words" in caught.value.message


# -- any file ends in seconds --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["words.txt", "CSW.kwg", "CSW.db"])
def test_a_link_to_dev_zero_is_refused_unread(tmp_path: Path, data_dir: Path, name: str) -> None:
    link = tmp_path / name
    link.symlink_to("/dev/zero")
    refused(add(data_dir, link), data_dir, f"{link}: is a device (like /dev/zero, which never ends), not a file")


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path, data_dir: Path) -> None:
    fifo = tmp_path / "words.txt"
    os.mkfifo(fifo)
    refused(add(data_dir, fifo), data_dir, f"{fifo}: is a named pipe (FIFO), not a file")
    with pytest.raises(WordListError, match="named pipe"):
        read_word_list(fifo)  # the errata of a profile are read so


@pytest.mark.parametrize(
    ("name", "head", "limit"),
    [
        ("words.txt", b"", "256 MiB"),
        ("CSW.kwg", b"", "16 MiB"),
        ("CSW.db", b"SQLite format 3\x00", "2 GiB"),
        ("other.db", b"", "256 MiB"),  # not a database: read as a text list
    ],
)
def test_a_file_of_gigabytes_is_refused_by_its_size(
    tmp_path: Path, data_dir: Path, name: str, head: bytes, limit: str
) -> None:
    huge = tmp_path / name
    with huge.open("wb") as handle:
        handle.write(head)
        handle.truncate(5 << 30)  # 5 GiB, sparse: no disk used
    result = add(data_dir, huge)
    refused(
        result, data_dir, f"{huge}: is 5,368,709,120 bytes, more than any lexicon file of this kind ({limit} at most)"
    )


def test_a_kwg_bigger_than_a_kwg_can_be_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "CSW.kwg"
    with big.open("wb") as handle:
        handle.truncate(kwg_module.MAX_KWG_BYTES + 4)
    with pytest.raises(WordListError) as caught:
        read_kwg(big, builtin("english"))
    assert "(16 MiB at most)" in caught.value.message
    big.write_bytes(bytes(kwg_module.MAX_KWG_BYTES))
    assert len(read_bounded(big, kwg_module.MAX_KWG_BYTES)) == kwg_module.MAX_KWG_BYTES  # the largest is read


@pytest.mark.parametrize("suffix", ["-wal", "-journal"])
def test_a_zyzzyva_database_with_changes_beside_it_is_refused(tmp_path: Path, data_dir: Path, suffix: str) -> None:
    database = make_db(tmp_path / "CSW-T.db", ["CAT", "DOGS"])
    (tmp_path / f"CSW-T.db{suffix}").write_bytes(b"")
    result = add(data_dir, database)
    refused(result, data_dir, f"{database}: has CSW-T.db{suffix} beside it", "Close Zyzzyva")


def test_a_zyzzyva_database_in_wal_mode_that_zyzzyva_has_open_is_refused(tmp_path: Path, data_dir: Path) -> None:
    database = make_db(tmp_path / "CSW-T.db", ["CAT", "DOGS"])
    writer = sqlite3.connect(database)  # Zyzzyva, open, with a word not yet in the database
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("INSERT INTO words (word) VALUES ('EMU')")
        writer.commit()
        assert (tmp_path / "CSW-T.db-wal").exists()
        refused(add(data_dir, database), data_dir, "has CSW-T.db-wal beside it")
    finally:
        writer.close()


def test_a_text_list_of_one_giant_line_is_refused(tmp_path: Path, data_dir: Path) -> None:
    giant = tmp_path / "words.txt"
    giant.write_bytes(b"A" * (wordlist_module.MAX_LINE_BYTES + 1))
    refused(add(data_dir, giant), data_dir, "words.txt, line 1: is 65,537 bytes long, more than 65,536")


def test_a_text_list_of_too_many_lines_is_refused_before_they_are_made(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wordlist_module, "MAX_LINES", 1000)
    many = write_list(tmp_path / "words.txt", ["AB"] * 1001)
    refused(add(data_dir, many), data_dir, "words.txt: has more than 1,000 lines")


def test_a_gzip_bomb_is_refused_after_its_limit(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wordlist_module, "MAX_SOURCE_BYTES", 1 << 20)
    bomb = tmp_path / "words.txt.gz"
    bomb.write_bytes(gzip.compress(b"AB\n" * (1 << 20)))  # 3 MiB of text in a few KiB
    assert bomb.stat().st_size < 50_000
    refused(add(data_dir, bomb), data_dir, "words.txt.gz: decompresses to more than 1 MiB of text")


def test_a_list_read_as_usual_still_compiles(tmp_path: Path, data_dir: Path) -> None:
    text = write_list(tmp_path / "words.txt", ["CAT", "DOGS"], gz=True)
    assert add(data_dir, text).exit_code == 0
