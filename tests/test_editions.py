from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from wordjudge.base.errors import InvalidInput
from wordjudge.words.editions import Edition, Match, Registry, canonical_form, fingerprint, load_registry
from wordjudge.words.wordlist import read_word_list

from .helpers import PROFILE, write_list

ENABLE_SHA = "b819e7b67f8f2c80640ae76f0edbe59a4a1befb6de0f348463642ad49bdd2ad3"


def test_canonical_form_is_sorted_unique_words_with_final_newline() -> None:
    assert canonical_form(["AA", "AB", "ÉTÉ"]) == "AA\nAB\nÉTÉ\n".encode()
    assert canonical_form(iter(["QI"])) == b"QI\n"  # any iterable, each word ending in a newline
    assert canonical_form([]) == b""
    assert fingerprint(["AB", "AA", "AB"]) == hashlib.sha256(b"AA\nAB\n").hexdigest()


def test_sorting_is_by_code_point_not_by_locale() -> None:
    # Z (U+005A) sorts before Ä (U+00C4) by code point; a German collation would put Ä after A.
    assert canonical_form(sorted({"ÄA", "ZA", "AA"})) == "AA\nZA\nÄA\n".encode()


def test_the_shipped_registry_holds_the_recorded_editions() -> None:
    registry = load_registry()
    recorded = {e.name: (e.words, e.sha256) for e in registry.editions}
    assert recorded["CSW24"] == (280887, "4200a40a888042ac4fa95d42ed3de82952301401df62c395180cdc2e67d63893")
    assert recorded["NWL2023"] == (196601, "7ced912101628ad7f80a38553fa79a5e6c2a163dd871d7251ca4cef10b12b97f")
    assert recorded["ENABLE"] == (172820, ENABLE_SHA)
    assert len(recorded) == 11
    assert [e.name for e in registry.editions if not e.official] == ["ENABLE"]


def test_identify_says_match_same_count_or_unknown() -> None:
    registry = Registry([Edition("TINY1", "Tiny", 2, fingerprint(["AA", "AB"]), True)])
    exact = registry.identify(2, fingerprint(["AB", "AA"]))
    assert exact.match is Match.EXACT
    assert exact.describe() == "matches TINY1 (2 words)"
    same = registry.identify(2, fingerprint(["AA", "AC"]))
    assert same.match is Match.SAME_COUNT
    assert same.describe() == "word count of TINY1 but different content"
    assert registry.identify(3, fingerprint(["AA", "AB", "AC"])).describe() == "unknown list"


def test_real_registry_wording() -> None:
    registry = load_registry()
    assert registry.identify(280887, "4200a40a888042ac4fa95d42ed3de82952301401df62c395180cdc2e67d63893").describe() == (
        "matches CSW24 (280,887 words)"
    )
    assert registry.identify(196601, "0" * 64).describe() == "word count of NWL2023 but different content"
    assert registry.identify(12, "0" * 64).describe() == "unknown list"


def test_malformed_registry_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "editions.toml"
    path.write_text('[[edition]]\nname = "X"\ntitle = "X"\nwords = 1\nsha256 = "abc"\nofficial = true\n')
    with pytest.raises(InvalidInput, match=r"editions.toml: edition X has a malformed sha256"):
        load_registry(path)
    path.write_text('[[edition]]\nname = "X"\n')
    with pytest.raises(InvalidInput, match=r"editions.toml: malformed edition registry"):
        load_registry(path)


def _variants(words: list[str]) -> dict[str, dict[str, object]]:
    rng = random.Random(5)
    shuffled = list(words)
    rng.shuffle(shuffled)
    lower = [w.lower() for w in shuffled]
    mixed = [w.capitalize() if i % 3 else w.lower() for i, w in enumerate(shuffled)]
    return {
        "plain-sorted-LF.txt": {"lines": words},
        "plain-shuffled-lower-CRLF-BOM.txt": {"lines": lower, "newline": "\r\n", "bom": True},
        "plain-mixed-case-CR.txt": {"lines": mixed, "newline": "\r"},
        "comments-blanks-duplicates.txt": {"lines": ["# header", "", *lower[:1000], *shuffled, "  ", "# end"]},
        "zyzzyva.txt": {"lines": [f"{w} a definition of {w.lower()} [n -S]" for w in shuffled]},
        "playability.txt": {"lines": [f"{i * 7 % 9973} {w}" for i, w in enumerate(lower)], "newline": "\r\n"},
        "plain.txt.gz": {"lines": lower, "gz": True},
        "zyzzyva.gz": {"lines": [f"{w}\tdefinition" for w in mixed], "gz": True, "bom": True},
    }


@pytest.fixture(scope="module")
def enable_variants(demo_words: list[str]) -> dict[str, dict[str, object]]:
    """The ENABLE list written every way, made once for the module (each takes most of a second)."""
    return _variants(demo_words)


# The fast profile reads one variant of each format (each read of ENABLE takes most of a second); the full
# profile (.ci/check) reads every one.
_FAST_VARIANTS = ("plain-shuffled-lower-CRLF-BOM.txt", "zyzzyva.gz", "playability.txt")
_VARIANTS = [name for name in _variants(["AA"]) if PROFILE == "full" or name in _FAST_VARIANTS]


@pytest.mark.parametrize("variant", _VARIANTS)
def test_fingerprint_of_enable_matches_registry_in_every_order_case_line_end_and_format(
    tmp_path: Path, enable_variants: dict[str, dict[str, object]], variant: str
) -> None:
    spec = dict(enable_variants[variant])
    lines = spec.pop("lines")
    path = write_list(tmp_path / variant, lines, **spec)  # type: ignore[arg-type]
    word_list = read_word_list(path)
    found = fingerprint(word_list.words)
    assert found == ENABLE_SHA
    identified = load_registry().identify(len(word_list.words), found)
    assert identified.describe() == "matches ENABLE (172,820 words)"
