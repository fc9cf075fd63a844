from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wordjudge.base.errors import InvalidInput, LexiconExists, LexiconIntegrityError, LexiconNotFound, ProfileError
from wordjudge.words.lexicon import MANIFEST_FILE
from wordjudge.words.profile import Catalog, Errata, Profile
from wordjudge.words.wordlist import WordList, parse_word_list


def listed(text: str, name: str = "list.txt") -> WordList:
    return parse_word_list(text.encode("utf-8"), source_name=name)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    catalog = Catalog(tmp_path / "data")
    catalog.lexicons.add(listed("ANTEFIX\nANTEFIXA\nANTEFIXES\nCAT\nPICKANINNY\nDOG\n", "otcwl.txt"), "BASE")
    catalog.lexicons.add(listed("PREPONDERANT\nCATS\nIRREGARDLESS\nDOGGEDLY\n", "mw10.txt"), "LONG")
    return catalog


def test_a_lexicon_is_a_profile_with_no_amendments(catalog: Catalog) -> None:
    profile = catalog.open("BASE")
    assert not profile.amended
    assert profile.fingerprint == profile.base.fingerprint
    assert profile.lookup("CAT").source == "BASE"


def test_errata_add_and_remove_words_and_say_so(catalog: Catalog) -> None:
    profile, notes = catalog.add_profile(
        "OWL-ERRATA",
        "BASE",
        additions=listed("# ABSP: omitted in error, acceptable\nantefixae\n", "add.txt"),
        removals=listed("PICKANINNY\n", "remove.txt"),
    )
    assert notes == []
    added = profile.lookup("ANTEFIXAE")
    assert (added.acceptable, added.source) == (True, "errata additions")
    removed = profile.lookup("PICKANINNY")
    assert (removed.acceptable, removed.source, removed.reason) == (False, None, "removed from BASE by errata")
    assert profile.lookup("CAT").source == "BASE"
    assert not profile.lookup("ZZZ").acceptable
    assert profile.additions.source_name == "add.txt"


def test_secondary_source_only_for_long_words(catalog: Catalog) -> None:
    profile, _ = catalog.add_profile("NSA", "BASE", secondary="LONG", secondary_min_length=9)
    long_word = profile.lookup("PREPONDERANT")
    assert (long_word.acceptable, long_word.source) == (True, "LONG (9+ letters)")
    assert not profile.lookup("CATS").acceptable  # in the secondary source, but shorter than 9
    assert profile.lookup("CATS").reason == "not in BASE"
    assert profile.lookup("DOGGEDLY").acceptable is False  # 8 letters
    nine_missing = profile.lookup("ABCDEFGHI")
    assert nine_missing.reason == "in neither BASE nor LONG (9+ letters)"


def test_removal_wins_over_secondary_source(catalog: Catalog) -> None:
    profile, _ = catalog.add_profile(
        "STRICT",
        "BASE",
        removals=listed("IRREGARDLESS\n"),
        secondary="LONG",
        secondary_min_length=9,
    )
    assert not profile.lookup("IRREGARDLESS").acceptable


def test_profile_fingerprint_covers_base_and_every_amendment(catalog: Catalog) -> None:
    base = catalog.lexicons.open("BASE")
    long = catalog.lexicons.open("LONG")
    plain = Profile("P", base)
    one_add = Profile("P", base, additions=Errata(("ANTEFIXAE",)))
    other_add = Profile("P", base, additions=Errata(("ANTEFIXAS",)))
    one_remove = Profile("P", base, removals=Errata(("ANTEFIXAE",)))
    secondary8 = Profile("P", base, secondary=long, secondary_min_length=8)
    secondary9 = Profile("P", base, secondary=long, secondary_min_length=9)
    prints = [p.fingerprint for p in (plain, one_add, other_add, one_remove, secondary8, secondary9)]
    assert len(set(prints)) == len(prints)
    # the same definition gives the same fingerprint, whatever the profile's name or the errata's file
    assert Profile("Q", base, additions=Errata(("ANTEFIXAE",), "other.txt")).fingerprint == one_add.fingerprint


def test_saved_profile_is_reopened_identically(catalog: Catalog) -> None:
    made, _ = catalog.add_profile(
        "E", "BASE", additions=listed("ANTEFIXAE\n"), secondary="LONG", secondary_min_length=9
    )
    again = catalog.open("E")
    assert again.fingerprint == made.fingerprint
    assert again.lookup("ANTEFIXAE").acceptable
    assert catalog.names() == ["BASE", "E", "LONG"]


def test_errata_that_change_nothing_are_noted(catalog: Catalog) -> None:
    _, notes = catalog.add_profile("N", "BASE", additions=listed("CAT\nANTEFIXAE\n"), removals=listed("NOTTHERE\n"))
    assert notes == ["1 addition(s) already in BASE: CAT", "1 removal(s) not in BASE: NOTTHERE"]


def test_word_both_added_and_removed_is_refused(catalog: Catalog) -> None:
    with pytest.raises(ProfileError, match="both added and removed by errata: CAT"):
        catalog.add_profile("X", "BASE", additions=listed("CAT\n"), removals=listed("CAT\n"))
    assert "X" not in catalog.names()


def test_secondary_needs_a_minimum_length(catalog: Catalog) -> None:
    with pytest.raises(ProfileError, match="a secondary source needs a minimum word length"):
        catalog.add_profile("X", "BASE", secondary="LONG")


def test_profile_names_are_checked(catalog: Catalog) -> None:
    with pytest.raises(LexiconExists, match="BASE is the name of a compiled lexicon"):
        catalog.add_profile("BASE", "LONG")
    catalog.add_profile("X", "BASE")
    with pytest.raises(LexiconExists, match="a profile named X exists already"):
        catalog.add_profile("X", "BASE")
    with pytest.raises(LexiconNotFound, match="no compiled lexicon named NOPE"):
        catalog.add_profile("Y", "NOPE")
    with pytest.raises(LexiconNotFound, match=r"no lexicon or profile named Z .*known: BASE, LONG, X"):
        catalog.open("Z")


def test_typed_words_outside_the_alphabet_are_a_clear_error(catalog: Catalog) -> None:
    profile = catalog.open("BASE")
    assert [r.word for r in profile.check(["cat", " Dog "])] == ["CAT", "DOG"]
    with pytest.raises(
        InvalidInput, match=r"word 2 'ñu' has 'Ñ' \(LATIN CAPITAL LETTER N WITH TILDE\), which is not a letter of BASE"
    ):
        profile.check(["cat", "ñu"])
    with pytest.raises(InvalidInput, match="word 1 'C4T' has '4'"):
        profile.check(["C4T"])
    with pytest.raises(InvalidInput, match="word 1 is empty"):
        profile.check([" "])


def test_non_latin_lexicon_takes_its_own_letters(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "data")
    catalog.lexicons.add(listed("ÑANDÚ\nGARÇON\nMÄDCHEN\nŁÓDŹ\n"), "MIXED")
    profile = catalog.open("MIXED")
    results = profile.check(["ñandú", "łódź", "garcon"])
    assert [r.acceptable for r in results] == [True, True, False]
    with pytest.raises(InvalidInput, match="'X'"):
        profile.check(["XYZ"])


# -- the saved files are read by their schema (issue 18, item 3) ---------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("removals"), "removals missing"),
        (lambda d: d.update(secondary_min_length="9"), "secondary_min_length"),
        (lambda d: d["additions"].update(words="ANTEFIXAE"), "additions.words"),
    ],
)
def test_a_saved_profile_of_the_wrong_shape_is_refused_by_name(catalog: Catalog, change: Any, message: str) -> None:
    catalog.add_profile("OWL", "BASE", additions=listed("ANTEFIXAE\n"), removals=listed("PICKANINNY\n"))
    path = catalog.profiles_dir / "OWL.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match=rf"OWL.json cannot be read as a profile: .*{message}"):
        catalog.open("OWL")


@pytest.mark.parametrize("count", ["6", True, 6.0])
def test_a_manifest_whose_word_count_is_not_a_number_is_refused(catalog: Catalog, count: object) -> None:
    path = catalog.lexicons.root / "BASE" / MANIFEST_FILE
    data = json.loads(path.read_text())
    data["word_count"] = count
    path.write_text(json.dumps(data))
    with pytest.raises(LexiconIntegrityError, match=r"manifest.json: malformed manifest \(word_count: "):
        catalog.open("BASE")


def test_a_word_result_is_recorded_with_every_field_of_its_own() -> None:
    # as_dict is spelt out for speed: a field added to WordResult must not be left out of the record.
    from wordjudge.words.profile import WordResult

    result = WordResult("QI", False, None, "not in DEMO")
    assert result.as_dict() == result._asdict()
    assert list(result.as_dict()) == list(WordResult._fields)
