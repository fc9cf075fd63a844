"""Tile sets (issue 38): a tile can be several letters. The built-in sets, a set from a file, words read into tiles
from a list and as typed, lexicons stored as tile sequences whose lengths count tiles and whose fingerprint covers
the set, and the errors that name the tile a word cannot be made of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from wordjudge.base.errors import InvalidInput, LexiconIntegrityError, ProfileError, WordListError
from wordjudge.cli.main import main
from wordjudge.words.editions import fingerprint
from wordjudge.words.lexicon import MANIFEST_FILE, Lexicon, LexiconStore
from wordjudge.words.profile import Catalog
from wordjudge.words.tiles import BUILTIN, TileError, TileSet, builtin, builtin_sets, find, load
from wordjudge.words.wordlist import read_word_list

from .helpers import examples, write_list
from .tile_lists import NAMES, SPANISH, compile_list


def test_the_built_in_sets_hold_their_languages_tiles_in_the_engines_order() -> None:
    assert set(BUILTIN) == {"english", "spanish", "catalan", "welsh"}
    assert builtin("English").tiles == tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    spanish = builtin("spanish").tiles
    assert {"CH", "LL", "RR", "Ñ"} <= set(spanish)
    assert "K" not in spanish
    assert "W" not in spanish
    assert spanish.index("CH") == spanish.index("C") + 1  # a KWG file numbers CH right after C
    assert {"L·L", "NY", "QU", "Ç"} <= set(builtin("catalan").tiles)
    assert {"CH", "DD", "FF", "NG", "LL", "PH", "RH", "TH"} <= set(builtin("welsh").tiles)
    assert builtin("welsh").tiles.index("NG") == builtin("welsh").tiles.index("G") + 1  # the Welsh alphabet's order
    with pytest.raises(InvalidInput, match="no tile set 'basque': the built-in sets are english, spanish"):
        builtin("basque")


def test_letters_that_make_a_tile_are_read_every_way_fewest_tiles_first() -> None:
    spanish, catalan, welsh = builtin("spanish"), builtin("catalan"), builtin("welsh")
    assert spanish.readings("chico") == [("CH", "I", "C", "O"), ("C", "H", "I", "C", "O")]
    assert spanish.readings("c[h]ico") == [("C", "H", "I", "C", "O")]  # a bracket fixes a tile
    assert spanish.readings("n~andu") == spanish.readings("ñandú") == [("Ñ", "A", "N", "D", "U")]
    for typed in ("col·legi", "col.legi", "col-legi", "coŀlegi", "COL·LEGI"):
        assert catalan.readings(typed) == [("C", "O", "L·L", "E", "G", "I")], typed
    assert catalan.readings("quatre") == [("QU", "A", "T", "R", "E")]
    assert welsh.readings("bangor") == [("B", "A", "NG", "O", "R"), ("B", "A", "N", "G", "O", "R")]
    assert welsh.readings("tân") == [("T", "A", "N")]  # Welsh tiles carry no accents


def test_a_word_no_tile_makes_is_refused_naming_the_character_and_why() -> None:
    with pytest.raises(TileError, match=r"'K' \(LATIN CAPITAL LETTER K\) is on no tile") as refused:
        builtin("spanish").readings("kilo")
    assert refused.value.position == 0
    with pytest.raises(TileError, match=r"'Q' \(LATIN CAPITAL LETTER Q\) is only on the tile\(s\) QU") as refused:
        builtin("catalan").readings("qatar")
    with pytest.raises(TileError, match=r"\[XX\] is not a tile"):
        builtin("spanish").readings("a[xx]")
    with pytest.raises(TileError, match="more than 64 ways"):
        builtin("welsh").readings("ng" * 7)


def test_the_stored_form_brackets_the_longer_tiles_and_counts_tiles() -> None:
    spanish = builtin("spanish")
    assert spanish.stored(["CH", "I", "C", "O"]) == "[CH]ICO"
    assert spanish.split("[CH]I[LL]O") == ("CH", "I", "LL", "O")
    assert spanish.length("DESENGAN[CH]ARIAIS") == 15
    with pytest.raises(ValueError, match="without"):
        spanish.split("[CH")


def test_a_tile_set_file_is_read_and_named_in_every_error(tmp_path: Path) -> None:
    basque = tmp_path / "basque.toml"
    basque.write_text('tiles = ["A", "B", "D", "E", "TS", "TX", "TZ"]\n[spellings]\n"T.S" = "TS"\n', "utf-8")
    tiles = find(str(basque))
    assert tiles.name == "basque"
    assert tiles.readings("t.sa") == [("TS", "A")]
    assert tiles.fingerprint == TileSet.from_dict(tiles.as_dict(), "x").fingerprint
    for text, problem in [
        ("tiles = 3\n", "'tiles' is not a list of strings"),
        ('tiles = ["A", "A"]\n', "a tile is listed twice"),
        ('tiles = ["a"]\n', "'a' is not a tile"),
        ('tiles = ["A"]\n[spellings]\n"B" = "C"\n', "types 'C', which is not one of its tiles"),
        ("tiles = [\n", "Invalid value"),
    ]:
        basque.write_text(text, "utf-8")
        with pytest.raises(InvalidInput, match=f"{basque}: not a tile set file: .*{problem}"):
            load(basque)
    with pytest.raises(InvalidInput, match="cannot read the tile set"):
        load(tmp_path / "missing.toml")


def test_a_spanish_list_is_stored_as_tiles_counted_in_tiles_with_a_fingerprint_that_covers_the_set(
    data_dir: Path,
) -> None:
    manifest = compile_list(data_dir, "spanish")
    lexicon = Lexicon.open(data_dir / "lexicons" / NAMES["spanish"])
    assert "[CH]ICO" in lexicon
    assert "PE[RR]O" in lexicon
    assert "[LL]AMA" in lexicon
    assert "ÑANDU" in lexicon
    assert "CHICO" not in lexicon  # C then H: not a word of the list
    assert manifest.max_length == 15  # DESENGANCHARÍAIS: 16 letters, 15 tiles
    assert manifest.tiles is not None
    assert manifest.tiles["name"] == "spanish"
    assert manifest.format == 2
    assert manifest.split_tiles == ()  # no word holds C H, L L or R R as separate tiles
    # The fingerprint covers the set: the same stored words fingerprinted without it differ.
    assert manifest.fingerprint != fingerprint(lexicon.words())
    assert manifest.fingerprint == fingerprint(lexicon.words(), builtin("spanish").fingerprint)
    lexicon.verify_content()


def test_a_list_read_as_plain_letters_keeps_its_fingerprint_with_the_english_set(data_dir: Path) -> None:
    path = write_list(data_dir.parent / "en.txt", ["cat", "dogs", "quixotry"])
    plain, english = read_word_list(path), read_word_list(path, tiles=builtin("english"))
    store = LexiconStore(data_dir / "lexicons")
    assert store.add(plain, "EN-A").fingerprint == store.add(english, "EN-B").fingerprint == fingerprint(plain.words)


def test_a_welsh_lexicon_knows_which_tiles_it_also_has_as_separate_letters(data_dir: Path) -> None:
    manifest = compile_list(data_dir, "welsh")
    assert manifest.split_tiles == ("NG",)  # BANGOR and HENGA hold N G; nothing else is split
    lexicon = Lexicon.open(data_dir / "lexicons" / NAMES["welsh"])
    assert {"DA[NG]OS", "BANGOR", "HE[NG]A", "HENGA", "[LL]YFR", "[RH]EDEG", "[FF]OR[DD]", "CA[TH]"} <= set(
        lexicon.words()
    )


def test_a_word_of_a_list_no_tile_makes_is_refused_naming_the_file_the_line_and_the_fix(tmp_path: Path) -> None:
    path = write_list(tmp_path / "es.txt", ["chico", "kilo", "wifi"])
    with pytest.raises(WordListError) as refused:
        read_word_list(path, tiles=builtin("spanish"))
    text = str(refused.value)
    assert "es.txt, line 2: 'kilo': it cannot be made of the spanish tiles: 'K'" in text
    assert "es.txt, line 3: 'wifi'" in text
    assert "--skip-invalid" in text
    skipped = read_word_list(path, tiles=builtin("spanish"), skip_invalid=True)
    assert skipped.words == {"[CH]ICO"}


def test_an_altered_tile_set_or_split_list_in_a_manifest_is_refused(data_dir: Path) -> None:
    compile_list(data_dir, "welsh")
    folder = data_dir / "lexicons" / NAMES["welsh"]
    path = folder / MANIFEST_FILE
    original = json.loads(path.read_text("utf-8"))
    altered = {**original, "tiles": {**original["tiles"], "fingerprint": "0" * 64}}
    path.write_text(json.dumps(altered), "utf-8")
    with pytest.raises(LexiconIntegrityError, match="not the one the lexicon was compiled with"):
        Lexicon.open(folder)
    path.write_text(json.dumps({**original, "split_tiles": []}), "utf-8")
    with pytest.raises(LexiconIntegrityError, match="split_tiles says"):
        Lexicon.open(folder).verify_content()


def test_a_profile_reads_errata_with_its_bases_tiles_and_refuses_a_secondary_of_other_tiles(data_dir: Path) -> None:
    compile_list(data_dir, "spanish")
    catalog = Catalog(data_dir)
    errata = read_word_list(write_list(data_dir.parent / "add.txt", ["chucho"]), tiles=builtin("spanish"))
    profile, _ = catalog.add_profile("ES-ERRATA", NAMES["spanish"], additions=errata)
    assert profile.lookup("[CH]U[CH]O").acceptable
    assert profile.tiles == builtin("spanish")
    plain = read_word_list(write_list(data_dir.parent / "plain.txt", ["chucho"]))
    with pytest.raises(ProfileError, match=r"errata plain\.txt were read as plain letters"):
        catalog.add_profile("ES-BAD", NAMES["spanish"], additions=plain)
    LexiconStore(data_dir / "lexicons").add(plain, "PLAIN")
    with pytest.raises(ProfileError, match="read as the spanish tiles and its secondary source PLAIN as plain letters"):
        catalog.add_profile("ES-SEC", NAMES["spanish"], secondary="PLAIN", secondary_min_length=9)


def test_the_spanish_test_list_holds_every_digraph_and_a_fifteen_tile_word() -> None:
    words = [builtin("spanish").read_word(word) for word in SPANISH]
    assert all(tile in "".join(words) for tile in ("[CH]", "[LL]", "[RR]", "Ñ"))
    assert max(builtin("spanish").length(word) for word in words) == 15


@settings(max_examples=examples(400), deadline=None)
@given(data=st.data())
def test_a_lists_word_is_read_as_the_first_of_its_readings(data: st.DataObject) -> None:
    """read_word finds the first reading with the fewest tiles without listing them all: the same one."""
    tiles = builtin(data.draw(st.sampled_from(sorted(BUILTIN))))
    letters = sorted(set("".join(tiles.tiles)) | {"X"})
    word = data.draw(st.text(alphabet=letters, min_size=1, max_size=12))
    try:
        first: str | TileError = tiles.stored(tiles.readings(word)[0])
    except TileError as refused:
        first = refused
    if isinstance(first, str):
        assert tiles.read_word(word) == first
    elif first.msg.key == "error.tiles.too_many_readings":  # typed, it must be bracketed; in a list it is read
        assert tiles.length(tiles.read_word(word)) <= len(word)
    else:
        with pytest.raises(TileError) as also:
            tiles.read_word(word)
        assert also.value.message == first.message


def test_the_tiles_help_lists_every_built_in_set_from_the_registry() -> None:
    """``lexicon add --help`` names each built-in set with its tiles of several letters (and Ñ, Ç), from the sets
    themselves: a set added to BUILTIN is listed without a hand edit."""
    shown = CliRunner().invoke(main, ["lexicon", "add", "--help"], terminal_width=400).output
    for name, tile_set in BUILTIN.items():
        assert name in shown, name
        for tile in tile_set.tiles:
            if len(tile) > 1:
                assert tile in shown, (name, tile)
    assert "catalan (Ç, L·L, NY, QU)" in builtin_sets()
