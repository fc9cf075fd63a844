from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wordjudge import __version__
from wordjudge.base.errors import InvalidInput, LexiconExists, LexiconIntegrityError, LexiconNotFound
from wordjudge.words.demo import open_demo, read_demo_list
from wordjudge.words.editions import DEMO_NAME, fingerprint
from wordjudge.words.lexicon import MANIFEST_FILE, TRIE_FILE, Lexicon, LexiconStore, Manifest, file_sha256
from wordjudge.words.wordlist import SourceFormat, WordList, parse_word_list

from .wordgen import near_misses


def word_list(words: list[str], name: str = "src.txt") -> WordList:
    return parse_word_list("\n".join(words).encode("utf-8"), source_name=name)


@pytest.fixture
def store(tmp_path: Path) -> LexiconStore:
    return LexiconStore(tmp_path / "lexicons")


@pytest.fixture
def small(store: LexiconStore) -> Lexicon:
    store.add(word_list(["cat", "dog", "emu", "Ñandú", "cat"], "small.txt"), "SMALL")
    return store.open("SMALL")


def test_compile_writes_trie_and_complete_manifest(store: LexiconStore, small: Lexicon) -> None:
    m = small.manifest
    assert (m.name, m.word_count, m.min_length, m.max_length) == ("SMALL", 4, 3, 5)
    assert m.alphabet == "ACDEGMNOTUÑÚ"
    assert m.fingerprint == fingerprint(["CAT", "DOG", "EMU", "ÑANDÚ"])
    trie = small.directory / TRIE_FILE
    assert m.trie_sha256 == file_sha256(trie)
    assert m.trie_bytes == trie.stat().st_size
    assert (m.source_name, m.source_format, m.duplicates, m.skipped_lines) == ("small.txt", "plain", 1, 0)
    assert m.tool_version == __version__
    assert m.built_at.endswith("+00:00")
    assert not m.demo
    assert json.loads((small.directory / MANIFEST_FILE).read_text())["fingerprint"] == m.fingerprint


def test_lookups(small: Lexicon) -> None:
    assert "CAT" in small
    assert "ÑANDÚ" in small
    assert "CA" not in small
    assert "CATS" not in small
    assert "cat" not in small  # lookups take normalised words
    assert len(small) == 4
    assert small.words() == ["CAT", "DOG", "EMU", "ÑANDÚ"]
    small.verify_content()


def test_skipped_lines_are_recorded(store: LexiconStore) -> None:
    listed = parse_word_list(b"AA\nA1\nAB\n", source_name="s.txt", skip_invalid=True)
    assert store.add(listed, "S").skipped_lines == 1


def test_empty_list_is_refused(store: LexiconStore) -> None:
    with pytest.raises(InvalidInput, match=r"empty.txt: holds no words"):
        store.add(parse_word_list(b"# nothing\n", source_name="empty.txt"), "E")
    assert store.names() == []


@pytest.mark.parametrize("name", ["", "../x", "a b", "-x", "x" * 65, "CSW/24"])
def test_bad_names_are_refused(store: LexiconStore, name: str) -> None:
    with pytest.raises(InvalidInput, match="cannot name a lexicon"):
        store.add(word_list(["AA"]), name)


def test_demo_name_is_reserved(store: LexiconStore) -> None:
    with pytest.raises(InvalidInput, match="reserved for the built-in demo list"):
        store.add(word_list(["AA"]), "Demo")


def test_existing_name_is_refused_unless_replaced(store: LexiconStore, small: Lexicon) -> None:
    with pytest.raises(LexiconExists, match="a lexicon named SMALL exists already"):
        store.add(word_list(["AA"]), "SMALL")
    store.add(word_list(["AA", "AB"]), "SMALL", replace=True)
    assert store.open("SMALL").words() == ["AA", "AB"]
    assert store.names() == ["SMALL"]  # no staging folders left behind
    assert sorted(p.name for p in store.root.iterdir()) == ["SMALL"]


def test_unknown_name_lists_what_exists(store: LexiconStore, small: Lexicon) -> None:
    with pytest.raises(LexiconNotFound, match=r"no compiled lexicon named CSW24 .*compiled lexicons: SMALL"):
        store.open("CSW24")


def test_missing_trie_is_refused_naming_the_file(small: Lexicon) -> None:
    (small.directory / TRIE_FILE).unlink()
    with pytest.raises(LexiconIntegrityError, match=r"SMALL/words.marisa is missing"):
        Lexicon.open(small.directory)


def test_truncated_trie_is_refused_naming_the_file(small: Lexicon) -> None:
    trie = small.directory / TRIE_FILE
    trie.write_bytes(trie.read_bytes()[:-10])
    with pytest.raises(LexiconIntegrityError, match=r"SMALL/words.marisa is truncated or altered"):
        Lexicon.open(small.directory)


def test_altered_trie_of_the_same_size_is_refused(small: Lexicon) -> None:
    trie = small.directory / TRIE_FILE
    data = bytearray(trie.read_bytes())
    data[len(data) // 2] ^= 0xFF
    trie.write_bytes(bytes(data))
    with pytest.raises(LexiconIntegrityError, match=r"SMALL/words.marisa is altered: its SHA-256 is [0-9a-f]{64}"):
        Lexicon.open(small.directory)


def test_swapped_trie_is_refused(store: LexiconStore, small: Lexicon) -> None:
    store.add(word_list(["CAT", "DOG", "EMU", "GNU"]), "OTHER")
    shutil.copy(store.path("OTHER") / TRIE_FILE, small.directory / TRIE_FILE)
    with pytest.raises(LexiconIntegrityError, match=r"SMALL/words\.marisa"):
        Lexicon.open(small.directory)


def test_missing_or_malformed_manifest_is_refused(small: Lexicon) -> None:
    manifest = small.directory / MANIFEST_FILE
    manifest.write_text("{not json")
    with pytest.raises(LexiconIntegrityError, match=r"manifest.json cannot be read as a manifest"):
        Lexicon.open(small.directory)
    manifest.unlink()
    with pytest.raises(LexiconIntegrityError, match=r"manifest.json is missing"):
        Lexicon.open(small.directory)


def test_manifest_and_trie_replaced_together_are_caught_by_content_check(store: LexiconStore, small: Lexicon) -> None:
    """A forger who recomputes the trie hash but keeps the old fingerprint is caught by verify_content."""
    store.add(word_list(["CAT", "DOG", "EMU", "ZZZ"]), "FORGED")
    forged = store.path("FORGED")
    data = json.loads((small.directory / MANIFEST_FILE).read_text())
    other = Manifest.read(forged / MANIFEST_FILE)
    data.update(trie_sha256=other.trie_sha256, trie_bytes=other.trie_bytes)
    shutil.copy(forged / TRIE_FILE, small.directory / TRIE_FILE)
    (small.directory / MANIFEST_FILE).write_text(json.dumps(data))
    lexicon = Lexicon.open(small.directory)  # the file check passes: the forger fixed it
    with pytest.raises(LexiconIntegrityError, match="the words it holds have fingerprint"):
        lexicon.verify_content()


def test_demo_is_compiled_on_first_use_and_marked(store: LexiconStore) -> None:
    demo = open_demo(store)
    assert demo.manifest.demo
    assert demo.manifest.source_name.startswith("enable.txt.gz (wordjudge ")
    assert demo.manifest.source_format == SourceFormat.PLAIN
    assert demo.fingerprint == "b819e7b67f8f2c80640ae76f0edbe59a4a1befb6de0f348463642ad49bdd2ad3"
    assert open_demo(store).manifest.built_at == demo.manifest.built_at  # reused, not rebuilt


def test_damaged_demo_is_rebuilt(store: LexiconStore, compiled_demo: Path, caplog: pytest.LogCaptureFixture) -> None:
    shutil.copytree(compiled_demo, store.root / DEMO_NAME)  # compiled as open_demo does (the test above)
    demo = open_demo(store)
    assert "rebuilding" not in caplog.text
    (demo.directory / TRIE_FILE).write_bytes(b"garbage")
    rebuilt = open_demo(store)
    assert "rebuilding the demo lexicon" in caplog.text
    assert "ZYZZYVA" in rebuilt
    rebuilt.verify_content()


def _round_trip(store: LexiconStore, words: list[str], name: str) -> None:
    listed = word_list(words, f"{name}.txt")
    store.add(listed, name)
    lexicon = store.open(name)
    reference = set(words)
    assert len(lexicon) == len(reference)
    assert all(word in lexicon for word in words)
    misses = near_misses(words, lexicon.manifest.alphabet, 100_000)
    assert len(misses) == 100_000
    assert [word in lexicon for word in misses] == [word in reference for word in misses]
    assert not any(word in lexicon for word in misses)


def test_round_trip_demo_list(store: LexiconStore, demo_words: list[str]) -> None:
    assert demo_words == read_demo_list().sorted_words()
    _round_trip(store, demo_words, "ENABLE")


def test_round_trip_generated_280000_words(store: LexiconStore, generated_words: list[str]) -> None:
    assert len(generated_words) == 280_000
    _round_trip(store, generated_words, "GEN280K")
