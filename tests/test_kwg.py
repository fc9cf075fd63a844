"""Reading KWG word graphs (wolges, macondo): the words of a KWG built from a list are the list's words, and a
file that is not a lexicon's KWG is refused with a message naming it and what to do. The KWG files are built
here from made-up words (tests/kwg_build.py), never from an official lexicon."""

from __future__ import annotations

import gzip
import hashlib
import random
import sqlite3
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordjudge.base.errors import WordListError
from wordjudge.words.editions import fingerprint
from wordjudge.words.kwg import MAX_WORD_TILES, read_kwg
from wordjudge.words.tiles import builtin
from wordjudge.words.wordlist import TEXT_FORMATS, SourceFormat, detect_format, parse_word_list, read_word_list

from .helpers import examples, write_list
from .kwg_build import build_kwg, node, pack, tile_indices

ENGLISH = builtin("english")
# Made up for the tests; words that are prefixes of others (CAT, CATS, CATSUP), one-tile and long words.
_WORDS = (
    "A AB ABS CAT CATS CATSUP CAR CARE CARED CARES CARET DOG DOGE DOGES DOGS EMU EMUS QI QIS ZA ZAS ZYZZYVA ZYZZYVAS OXO "
    "OXOS TRAPEZOIDAL TRAPEZOIDALLY JINX JINXED MY"
)
WORDS = _WORDS.split()


def english(words: list[str]) -> bytes:
    return build_kwg(tile_indices(words, ENGLISH))


def refused(path: Path, data: bytes, key: str, tiles: str = "english") -> WordListError:
    """Write ``data`` to ``path``, read it as a KWG and return the error, after checking its key and that its
    message names the file."""
    path.write_bytes(data)
    with pytest.raises(WordListError) as caught:
        read_kwg(path, builtin(tiles))
    assert caught.value.msg.key == key, caught.value.message
    assert str(path) in caught.value.message
    assert str(path) in caught.value.msg.text("fr")  # and it says so in French too
    return caught.value


# -- the words --------------------------------------------------------------------------------------


@pytest.mark.parametrize("gaddag", [True, False], ids=["gaddawg", "dawg-only"])
def test_a_kwg_holds_the_words_of_the_list_it_was_built_from(tmp_path: Path, gaddag: bool) -> None:
    kwg = tmp_path / "made-up.kwg"
    kwg.write_bytes(build_kwg(tile_indices(WORDS, ENGLISH), gaddag=gaddag))
    text = read_word_list(write_list(tmp_path / "made-up.txt", WORDS))
    read = read_kwg(kwg, ENGLISH)
    assert read.words == text.words == set(WORDS)
    assert fingerprint(read.words) == fingerprint(text.words)
    assert (read.format, read.source_name, read.lines, read.duplicates) == (SourceFormat.KWG, "made-up.kwg", 30, 0)
    assert read.source_sha256 == hashlib.sha256(kwg.read_bytes()).hexdigest()
    assert read.tiles is ENGLISH


def test_two_thousand_random_words_read_back(tmp_path: Path) -> None:
    rng = random.Random(38)
    words = {"".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ", k=rng.randint(1, 15))) for _ in range(2000)}
    words |= {word[:cut] for word in list(words)[:300] for cut in range(1, len(word))}  # prefixes, as lists have
    kwg = tmp_path / "random.kwg"
    kwg.write_bytes(english(sorted(words)))
    seen: list[tuple[int, int]] = []
    read = read_kwg(kwg, ENGLISH, progress=lambda done, total: seen.append((done, total)))
    assert read.words == words
    assert fingerprint(read.words) == fingerprint(read_word_list(write_list(tmp_path / "r.txt", sorted(words))).words)
    assert seen[-1] == (len(words), len(words))


@settings(max_examples=examples(100), deadline=None)
@given(
    st.sets(st.lists(st.integers(1, 26), min_size=1, max_size=9).map(tuple), min_size=1, max_size=40),
    st.booleans(),
)
def test_any_list_of_words_reads_back(
    tmp_path_factory: pytest.TempPathFactory, words: set[tuple[int, ...]], gaddag: bool
) -> None:
    kwg = tmp_path_factory.mktemp("any") / "any.kwg"  # a folder per example (tmp_path is one per test)
    kwg.write_bytes(build_kwg(words, gaddag=gaddag))
    expected = {"".join(ENGLISH.tiles[tile - 1] for tile in word) for word in words}
    assert read_kwg(kwg, ENGLISH).words == expected


def test_tiles_of_several_letters_are_read_in_the_stored_form(tmp_path: Path) -> None:
    spanish = builtin("spanish")
    text = read_word_list(write_list(tmp_path / "es.txt", ["CHICO", "LLAMA", "PERRO", "CARRO", "ÑANDÚ"]), tiles=spanish)
    assert text.words == {"[CH]ICO", "[LL]AMA", "PE[RR]O", "CA[RR]O", "ÑANDU"}
    kwg = tmp_path / "es.kwg"
    kwg.write_bytes(build_kwg(tile_indices(text.words, spanish)))
    read = read_kwg(kwg, spanish)
    assert read.words == text.words
    assert fingerprint(read.words) == fingerprint(text.words)
    # Read with the English tiles, the same file is other words: CH I C O are tiles 4 10 3 17 of the Spanish set,
    # D J C Q of the English one. The tile set is part of what a KWG says.
    assert "DJCQ" in read_kwg(kwg, ENGLISH).words


def test_a_list_may_be_the_tail_of_another_and_siblings_need_not_be_sorted(tmp_path: Path) -> None:
    # CA, CB and DB: D's list (B) is the tail of C's (A, B), as wolges shares them; the root list is D then C.
    a, b, c, d = 1, 2, 3, 4
    nodes = [
        node(0, is_end=True, arc=1),
        node(d, arc=4),  # 1: D -> its list is node 4, the tail of C's list
        node(c, is_end=True, arc=3),  # 2: C -> nodes 3-4
        node(a, accepts=True),  # 3
        node(b, accepts=True, is_end=True),  # 4
    ]
    kwg = tmp_path / "shared.kwg"
    kwg.write_bytes(pack(nodes))
    assert read_kwg(kwg, ENGLISH).words == {"CA", "CB", "DB"}


def test_text_formats_stay_the_text_readers(tmp_path: Path) -> None:
    assert SourceFormat.KWG not in TEXT_FORMATS
    assert SourceFormat.ZYZZYVA_DB not in TEXT_FORMATS
    assert detect_format([b"AA", b"AB"]) is SourceFormat.PLAIN
    with pytest.raises(ValueError, match="KWG"):
        parse_word_list(b"AA\n", source_name="x.kwg", format=SourceFormat.KWG)


# -- what is refused ----------------------------------------------------------------------------------


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    refused(tmp_path / "empty.kwg", b"", "error.kwg.empty")


def test_a_file_that_is_not_whole_nodes_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path / "cut.kwg", english(WORDS)[:-3], "error.kwg.size")
    assert "not a whole number of 4-byte nodes" in error.message


def test_an_arc_past_the_end_is_a_file_cut_short(tmp_path: Path) -> None:
    nodes = [node(0, is_end=True, arc=1), node(1, accepts=True, is_end=True, arc=7)]
    error = refused(tmp_path / "cut.kwg", pack(nodes), "error.kwg.truncated")
    assert "node 1 points to node 7, past the end of the file (2 nodes): the file is cut short" in error.message
    refused(tmp_path / "root.kwg", pack([node(0, is_end=True, arc=9)]), "error.kwg.truncated")


def test_a_list_running_off_the_end_is_a_file_cut_short(tmp_path: Path) -> None:
    nodes = [node(0, is_end=True, arc=1), node(1, accepts=True)]  # no is_end, and no node after it
    refused(tmp_path / "cut.kwg", pack(nodes), "error.kwg.runs_off")


def test_a_tile_the_set_lacks_names_the_tile_and_the_set(tmp_path: Path) -> None:
    data = build_kwg([(1, 2), (29, 1)])  # tile 29: the Spanish set has 28 tiles
    error = refused(tmp_path / "es.kwg", data, "error.kwg.tile_range", tiles="spanish")
    assert "tile 29 but the spanish tile set has 28 tiles" in error.message
    assert "give --tiles" in error.message
    refused(tmp_path / "en.kwg", build_kwg([(27,)]), "error.kwg.tile_range")


def test_tile_zero_in_the_dawg_is_refused(tmp_path: Path) -> None:
    nodes = [node(0, is_end=True, arc=1), node(0, accepts=True, is_end=True)]
    refused(tmp_path / "blank.kwg", pack(nodes), "error.kwg.blank")


def test_a_graph_that_loops_is_refused(tmp_path: Path) -> None:
    nodes = [node(0, is_end=True, arc=1), node(1, accepts=True), node(2, accepts=True, is_end=True, arc=1)]
    error = refused(tmp_path / "loop.kwg", pack(nodes), "error.kwg.cycle")
    assert "leads back to itself" in error.message


def test_a_word_longer_than_any_is_refused(tmp_path: Path) -> None:
    refused(tmp_path / "long.kwg", build_kwg([(1,) * (MAX_WORD_TILES + 1)]), "error.kwg.too_long")
    longest = tmp_path / "longest.kwg"
    longest.write_bytes(build_kwg([(1,) * MAX_WORD_TILES]))
    assert read_kwg(longest, ENGLISH).words == {"A" * MAX_WORD_TILES}


def test_a_graph_of_more_words_than_a_lexicon_is_refused_before_they_are_listed(tmp_path: Path) -> None:
    # 24 levels of two accepting tiles each: 2^25 - 2 words from 49 nodes, counted, never listed.
    nodes = [node(0, is_end=True, arc=1)]
    for level in range(24):
        below = 1 + 2 * (level + 1) if level < 23 else 0
        nodes += [node(1, accepts=True, arc=below), node(2, accepts=True, is_end=True, arc=below)]
    refused(tmp_path / "many.kwg", pack(nodes), "error.kwg.too_many")


@pytest.mark.parametrize(
    "nodes",
    [
        [node(0, is_end=True), node(0, is_end=True)],  # wolges' EMPTY_KWG_BYTES: both roots 0
        [node(0, is_end=True, arc=1), node(1, is_end=True)],  # a node, but no word ends anywhere
    ],
    ids=["empty-kwg", "no-accepting-node"],
)
def test_a_graph_of_no_words_is_refused(tmp_path: Path, nodes: list[int]) -> None:
    refused(tmp_path / "none.kwg", pack(nodes), "error.kwg.no_words")


def _sqlite(path: Path) -> bytes:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE words (word text)")
    connection.close()
    return path.read_bytes()


def _klv(tmp_path: Path) -> bytes:
    """A KLV as wolges' buildlex writes one: u32 node count, the leaves' DawgOnly KWG, u32 count, i16 values."""
    leaves = build_kwg([(1,), (1, 2), (5,)], gaddag=False)
    values = struct.pack("<3h", 256, -128, 512)
    return struct.pack("<I", len(leaves) // 4) + leaves + struct.pack("<I", 3) + values


OTHER_FILES: dict[str, tuple[str, Callable[[Path], bytes], str]] = {
    "gzip": ("CSW.kwg", lambda tmp: gzip.compress(english(WORDS)), "gzip-compressed"),
    "text": ("CSW.kwg", lambda tmp: b"AA\nAB\nCAT\n", "text: if it is a word list, add it as a word list"),
    "sqlite": ("CSW.kwg", lambda tmp: _sqlite(tmp / "z.db"), "an SQLite database"),
    "zip": ("CSW.kwg", lambda tmp: b"PK\x03\x04" + bytes(20), "a ZIP archive"),
    "klv": ("leaves.kwg", _klv, "a KLV file of leave values"),
    "kbwg-name": ("CSW.kbwg", lambda tmp: english(WORDS), "a big KWG (.kbwg"),
    "kbwg-content": ("CSW.kwg", lambda tmp: bytes([0x40, 2, 0, 0, 1, 0, 0, 0]), "a big KWG (.kbwg"),
    "kad": ("CSW.kad", lambda tmp: english(WORDS), "an alphagram graph (.kad)"),
    "other": ("CSW.kwg", lambda tmp: bytes([1, 2, 3, 4, 0, 0, 0, 0]), "first node is not a KWG's DAWG pointer"),
}


@pytest.mark.parametrize("kind", OTHER_FILES)
def test_another_kind_of_file_is_named_for_what_it_looks_like(tmp_path: Path, kind: str) -> None:
    name, make, said = OTHER_FILES[kind]
    error = refused(tmp_path / name, make(tmp_path), "error.kwg.not_kwg")
    assert said in error.message
    assert "is not a KWG word graph, it looks like" in error.message


def test_a_file_that_cannot_be_read_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(WordListError) as caught:
        read_kwg(tmp_path / "gone.kwg", ENGLISH)
    assert caught.value.msg.key == "error.word_list.unreadable"
    assert str(tmp_path) in caught.value.message
    with pytest.raises(WordListError) as caught:
        read_kwg(tmp_path, ENGLISH)  # a folder
    assert caught.value.msg.key == "error.word_list.not_a_file"
    assert f"{tmp_path}: is a folder, not a file" in caught.value.message
