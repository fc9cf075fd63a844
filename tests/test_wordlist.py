from __future__ import annotations

import gzip
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordjudge.base.errors import WordListError
from wordjudge.words import wordlist
from wordjudge.words.normal_form import normalise
from wordjudge.words.wordlist import SourceFormat, parse_word_list, read_word_list, word_problem

from .helpers import examples, write_list


def parse(text: str, **kwargs: object) -> set[str]:
    return parse_word_list(text.encode("utf-8"), source_name="test.txt", **kwargs).words  # type: ignore[arg-type]


def test_plain_list_is_upper_cased_and_deduplicated(tmp_path: Path) -> None:
    path = write_list(tmp_path / "words.txt", ["cat", "Dog", "CAT", "emu"])
    result = read_word_list(path)
    assert result.format is SourceFormat.PLAIN
    assert result.sorted_words() == ["CAT", "DOG", "EMU"]
    assert result.duplicates == 1
    assert result.lines == 4
    assert result.source_name == "words.txt"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("gz", [False, True])
def test_line_ends_bom_and_gzip_give_the_same_words(tmp_path: Path, newline: str, bom: bool, gz: bool) -> None:
    path = write_list(tmp_path / "words", ["aa", "ab", "zyzzyva"], newline=newline, bom=bom, gz=gz)
    assert read_word_list(path).words == {"AA", "AB", "ZYZZYVA"}


def test_comments_and_blank_lines_are_ignored() -> None:
    result = parse_word_list(b"# CSW-style header\n\nAA\n   \n  # indented comment\nAB\n", source_name="t.txt")
    assert result.words == {"AA", "AB"}
    assert result.lines == 2
    assert not result.invalid


def test_zyzzyva_list_takes_the_first_token() -> None:
    text = "AA a rough cindery lava [n -S]\nAAH to exclaim in amazement [v -ED, -ING, -S]\nAAHED AAH, to exclaim [v]\n"
    result = parse_word_list(text.encode(), source_name="CSW.txt")
    assert result.format is SourceFormat.ZYZZYVA
    assert result.words == {"AA", "AAH", "AAHED"}


def test_playability_list_takes_the_word_after_the_score() -> None:
    result = parse_word_list(b"1520 QI\n1380 ZA\n12 AA\n", source_name="play.txt")
    assert result.format is SourceFormat.PLAYABILITY
    assert result.words == {"QI", "ZA", "AA"}


def test_playability_line_without_a_score_is_invalid() -> None:
    with pytest.raises(WordListError, match=r"line 2: 'QI': expected 'score WORD'"):
        parse_word_list(b"1520 QI\nQI\n", source_name="play.txt", format=SourceFormat.PLAYABILITY)


def test_an_invalid_line_names_file_line_number_and_content() -> None:
    with pytest.raises(WordListError) as caught:
        parse_word_list(b"AA\nAB\nCAT3\nDOG\nice-cream\nEMU\n", source_name="mylist.txt")
    message = caught.value.message
    assert "mylist.txt: 2 line(s) are not words" in message
    assert "mylist.txt, line 3: 'CAT3': it has a digit '3' (DIGIT THREE)" in message
    assert "mylist.txt, line 5: 'ice-cream': it has '-' (HYPHEN-MINUS), which is not a letter" in message
    assert "--skip-invalid" in message
    assert caught.value.details[0] == {"line": 3, "content": "CAT3", "reason": "it has a digit '3' (DIGIT THREE)"}


def test_a_plain_list_with_a_space_inside_a_line_is_not_read_as_zyzzyva() -> None:
    lines = [f"WORD{chr(65 + i % 26)}" for i in range(30)] + ["ICE CREAM"]
    with pytest.raises(WordListError, match=r"line 31: 'ICE CREAM': it has a space inside"):
        parse_word_list("\n".join(lines).encode(), source_name="plain.txt")


def test_skip_invalid_leaves_bad_lines_out_and_counts_them() -> None:
    result = parse_word_list(b"AA\nCAT3\nAB\n!!\n", source_name="t.txt", skip_invalid=True)
    assert result.words == {"AA", "AB"}
    assert [(bad.line, bad.content) for bad in result.invalid] == [(2, "CAT3"), (4, "!!")]


def test_invalid_utf8_line_is_reported_with_its_number() -> None:
    with pytest.raises(WordListError, match=r"latin1.txt, line 2: .*not valid UTF-8"):
        parse_word_list(b"AA\nCAF\xc9\n", source_name="latin1.txt")


def test_utf16_file_gets_a_clear_error() -> None:
    with pytest.raises(WordListError, match="is UTF-16 text; save it as UTF-8"):
        parse_word_list("AA\nAB\n".encode("utf-16"), source_name="u16.txt")


def test_binary_file_gets_a_clear_error() -> None:
    with pytest.raises(WordListError, match="not a text file"):
        parse_word_list(b"\x00\x01\x02AA", source_name="blob.bin")


def test_broken_gzip_gets_a_clear_error() -> None:
    data = gzip.compress(b"AA\nAB\n")[:-6]
    with pytest.raises(WordListError, match=r"gz.txt: looks gzip-compressed but cannot be decompressed"):
        parse_word_list(data, source_name="gz.txt")


def test_missing_file_gets_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WordListError, match=r"cannot read word list .*nope\.txt"):
        read_word_list(tmp_path / "nope.txt")


def test_words_are_stored_in_nfc() -> None:
    decomposed = unicodedata.normalize("NFD", "añejo")
    assert decomposed != "añejo"
    assert parse(decomposed + "\n") == {"AÑEJO"}


def test_other_alphabets_are_words() -> None:
    words = parse("ñandú\ngarçon\nmädchen\nłódź\nčaj\nσοφία\n")
    assert words == {"ÑANDÚ", "GARÇON", "MÄDCHEN", "ŁÓDŹ", "ČAJ", "ΣΟΦΊΑ"}


def test_combining_mark_after_a_letter_is_part_of_the_word() -> None:
    # Devanagari vowel signs are combining marks with no precomposed form.
    assert word_problem(normalise("कि")) is None
    assert word_problem("\u0301A") is not None  # but a word cannot start with one


def test_progress_is_reported_for_big_lists() -> None:
    calls: list[tuple[int, int]] = []
    data = "\n".join(f"W{'A' * (i % 10)}B{chr(65 + i % 26)}" for i in range(45_000)).encode()
    parse_word_list(data, source_name="big.txt", progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (20_000, 45_000)
    assert calls[-1] == (45_000, 45_000)


@settings(max_examples=examples(100))  # hypothesis's own number, under the full profile
@given(st.text(alphabet=st.characters(categories=("Lu", "Ll", "Mn", "Nd", "Po", "Zs")), max_size=20))
def test_normalise_is_idempotent(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)


@settings(max_examples=examples(100))
@given(st.lists(st.text(alphabet="abcçñäłσ", min_size=1, max_size=8), min_size=1, max_size=30), st.randoms())
def test_format_and_order_do_not_change_the_words(words: list[str], rng: object) -> None:
    plain = parse("\n".join(words))
    shuffled = list(words)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    zyzzyva = parse("\n".join(f"{w.upper()} some definition [n]" for w in shuffled), format=SourceFormat.ZYZZYVA)
    scored = parse("\r\n".join(f"{i} {w}" for i, w in enumerate(shuffled)), format=SourceFormat.PLAYABILITY)
    assert plain == zyzzyva == scored == {normalise(w) for w in words}


# -- '#' marks and format detection (issue 15, item 8) --------------------------------------------


def test_a_hash_right_before_a_letter_marks_a_word_and_is_counted() -> None:
    text = "# header\n#AARGH\nAA\n#-- a rule\n#\n#1 numbered note\n  #ÉTÉ\n##AB\n"
    result = parse_word_list(text.encode(), source_name="marked.txt")
    assert result.words == {"AARGH", "AA", "ÉTÉ"}
    assert (result.marked, result.comments, result.lines) == (2, 5, 3)
    assert result.marked_lines == [(2, "#AARGH"), (7, "#ÉTÉ")]
    zyzzyva = parse_word_list(b"#AA rough lava\nAB to abet\n# a comment\n", source_name="z.txt")
    assert (zyzzyva.format, zyzzyva.words, zyzzyva.marked) == (SourceFormat.ZYZZYVA, {"AA", "AB"}, 1)


def test_a_marked_line_that_is_not_a_word_says_how_to_write_a_comment() -> None:
    lines = ["#Collins Scrabble Words 2019", *(f"W{chr(65 + i)}" for i in range(20))]
    with pytest.raises(WordListError) as caught:
        parse_word_list("\n".join(lines).encode(), source_name="csw.txt")
    assert (
        "csw.txt, line 1: '#Collins Scrabble Words 2019': it has a space inside (' ' (SPACE)); "
        "'#' right before a letter marks a word: write '# ' to make the line a comment"
    ) in caught.value.message


def test_a_zyzzyva_export_is_detected_from_the_whole_file_when_its_first_words_have_no_definition(
    demo_words: list[str],
) -> None:
    # 1,500 words without a definition first, then 3,000 with one: most lines have one.
    lines = demo_words[:1500] + [f"{word} a definition [n]" for word in demo_words[1500:4500]]
    result = parse_word_list("\n".join(lines).encode(), source_name="zyzzyva.txt")
    assert result.format is SourceFormat.ZYZZYVA
    assert result.words == set(demo_words[:4500])


def test_a_zyzzyva_export_with_few_definitions_gets_a_hint_to_use_format_zyzzyva(demo_words: list[str]) -> None:
    lines = [f"{word} a definition [n]" if i % 3 == 0 else word for i, word in enumerate(demo_words[:3000])]
    with pytest.raises(WordListError) as caught:
        parse_word_list("\n".join(lines).encode(), source_name="few.txt")
    message = caught.value.message
    assert (
        "few.txt: 1,000 line(s) are not words, read as a plain list (one word per line), "
        "the format detected from the whole file:"
    ) in message
    assert "If it is a Zyzzyva list (WORD definition...), add --format zyzzyva: every line then reads as a word." in (
        message
    )
    assert parse_word_list("\n".join(lines).encode(), source_name="few.txt", format=SourceFormat.ZYZZYVA).words == (
        set(demo_words[:3000])
    )


@pytest.mark.parametrize(
    ("text", "chosen", "suggested"),
    [
        ("10 AA\n20 AB\n30 AD\n", SourceFormat.ZYZZYVA, "add --format playability"),
        ("AA\nAB\nAD\n", SourceFormat.PLAYABILITY, "add --format plain"),
        ("AA rough lava\nAB to abet\n", SourceFormat.PLAYABILITY, "add --format zyzzyva"),
    ],
)
def test_a_chosen_format_that_does_not_fit_names_the_one_that_does(
    text: str, chosen: SourceFormat, suggested: str
) -> None:
    with pytest.raises(WordListError) as caught:
        parse_word_list(text.encode(), source_name="l.txt", format=chosen)
    assert f"as --format {chosen.value} says" in caught.value.message
    assert f"{suggested}: every line then reads as a word" in caught.value.message


def test_no_format_is_suggested_when_none_reads_more_lines() -> None:
    with pytest.raises(WordListError) as caught:
        parse_word_list(b"AA\nCAT3\nAB\n", source_name="t.txt")
    assert "--format" not in caught.value.message
    assert "Fix the list, or add it with --skip-invalid" in caught.value.message


# -- a big list is read a slice at a time (the fast suite, issue 18) ------------------------------------

# Lines that are their own word, and lines of every other kind the reader tells apart: blank, spaced,
# comments and '#' marks, scores and definitions, other alphabets, combining marks, digits and punctuation,
# and bytes that are not UTF-8.
_LETTERS = st.text(alphabet="abcxyzABCXYZ", min_size=1, max_size=6).map(str.encode)
_OTHER = st.sampled_from(
    [
        "",
        "  ",
        "# note",
        "#",
        "#AARGH",
        "#-",
        "##AB",
        "été",
        "ÉTÉ",
        "straße",
        "кот",
        "e\u0301",
        "\u0301e",
        "cat dog",
        "12 cat",
        "7\tcat",
        "cat some def [n]",
        "cat\tdef",
        "cat\x0cdog",
        "x1",
        "a-b",
        "  cat  ",
        "cat\u00a0",
        "\x0bcat",
        "cat\t",
    ]
).map(str.encode) | st.sampled_from([b"\xff\xfe", b"caf\xe9", b"\xc3"])


@settings(max_examples=examples(200))
@given(
    st.lists(_LETTERS, max_size=40),
    st.lists(st.tuples(st.integers(min_value=0, max_value=40), _OTHER), max_size=4),
    st.sampled_from([SourceFormat.PLAIN, SourceFormat.ZYZZYVA, SourceFormat.PLAYABILITY]),
    st.integers(min_value=1, max_value=12),
)
def test_a_list_read_a_slice_at_a_time_gives_what_reading_it_line_by_line_gives(
    letters: list[bytes], others: list[tuple[int, bytes]], format: SourceFormat, every: int
) -> None:
    # A slice of nothing but ASCII letters and blank lines is read at once (wordlist._read_letters_only), any
    # other line by line; slices run from one progress report to the next, made small here so that a list
    # mixes both kinds.
    lines = list(letters)
    for at, other in others:
        lines.insert(at, other)
    calls: list[tuple[int, int]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wordlist, "_PROGRESS_EVERY", every)
        read = wordlist._read_lines(lines, "t.txt", "sha", format, lambda done, total: calls.append((done, total)))
    one_by_one = wordlist.WordList(source_name="t.txt", source_sha256="sha", format=format)
    wordlist._read_line_by_line(lines, 0, len(lines), one_by_one)
    assert read == one_by_one
    total = len(lines)
    assert calls == [(n, total) for n in range(1, total + 1) if n % every == 0] + [(total, total)]
    assert wordlist.detect_format(lines) is wordlist._detect_line_by_line(lines)


@pytest.mark.parametrize("space", [" ", "\t", "\x0b", "\x0c"])
def test_any_space_between_two_tokens_is_seen_when_the_format_is_detected(space: str) -> None:
    # The plain lists' shortcut (no such space anywhere: plain) must know every space bytes.split() splits at.
    zyzzyva = parse_word_list(f"AA{space}rough lava\nAB{space}to abet\n".encode(), source_name="z.txt")
    playability = parse_word_list(f"10{space}AA\n20{space}AB\n".encode(), source_name="p.txt")
    assert (zyzzyva.format, zyzzyva.words) == (SourceFormat.ZYZZYVA, {"AA", "AB"})
    assert (playability.format, playability.words) == (SourceFormat.PLAYABILITY, {"AA", "AB"})
