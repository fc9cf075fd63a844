"""Properties of input parsing and normalisation, checked with hypothesis.

The challenge word parser (adjudication.py: separators, case, NFC, the division's alphabet, 1-8 words
of 2-15 letters), the one verdict and what devices see of it, word-list lines (wordlist.py: plain,
Zyzzyva and playability lists in any alphabet) and the one error shape of the HTTP API.
"""

from __future__ import annotations

import gzip
import inspect
import re
import unicodedata
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wordjudge.base import errors
from wordjudge.base.errors import ErrorBody, InvalidInput, Message, WordListError, error_body
from wordjudge.judging.adjudication import Adjudicator
from wordjudge.judging.record_views import record_view, verdict_view
from wordjudge.log.audit import AuditLog
from wordjudge.model.auth import Principal, Role
from wordjudge.model.input_rules import split_words
from wordjudge.model.records import Record, Verdict
from wordjudge.model.rules import ChallengeRule
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.event import Division, Event
from wordjudge.words.normal_form import normalise
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import SourceFormat, parse_word_list, word_problem

from .helpers import examples

# Bounded: these run with the rest of the suite on a small shared machine (and fewer under the fast profile,
# helpers.examples: .ci/check runs these counts).
PROPERTY = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW_PROPERTY = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

KIOSK = Principal("kiosk-1", Role.KIOSK, "kiosk")
TD = Principal("alice", Role.TD, "console")

# A small lexicon outside A-Z, and a second one with the same name and letters but other words: what the
# parser says about bad input must not depend on which words a lexicon holds.
LEXICON_WORDS = ("QI", "ZA", "CAT", "CATS", "DOG", "ÑU", "AÑO", "ÇA", "ŁAN", "TACO", "DOGS")
OTHER_WORDS = ("IQ", "AZ", "TAC", "GOD", "UÑ", "OÑA", "AÇ", "NAŁ", "COAST")
ALPHABET = "".join(sorted(set("".join(LEXICON_WORDS))))
assert "".join(sorted(set("".join(OTHER_WORDS)))) == ALPHABET  # the same letters


@dataclass(frozen=True)
class Parsers:
    """Two adjudicators whose only lexicon is called LEX: the same letters, different words."""

    real: Adjudicator
    other: Adjudicator


def _adjudicator(root: Path, words: tuple[str, ...]) -> Adjudicator:
    catalog = Catalog(root)
    catalog.lexicons.add(parse_word_list("\n".join(words).encode(), source_name="lex.txt"), "LEX")
    event = Event("Props Open", (Division("Open", "LEX", ChallengeRule.FIVE_PER_WORD),))
    return Adjudicator(event, {"LEX": catalog.open("LEX")}, AuditLog(StateLocation(root)))  # never started


@pytest.fixture(scope="module")
def parsers(tmp_path_factory: pytest.TempPathFactory) -> Parsers:
    return Parsers(
        _adjudicator(tmp_path_factory.mktemp("real"), LEXICON_WORDS),
        _adjudicator(tmp_path_factory.mktemp("other"), OTHER_WORDS),
    )


def _division(adjudicator: Adjudicator) -> Division:
    return adjudicator.event.divisions[0]


MAX_WORDS = 8  # the README's rules, stated here again rather than imported: 1 to 8 words of 2 to 15 letters
# -- strategies --------------------------------------------------------------------------------------

_SEPARATOR = st.sampled_from([" ", ",", "\n", "\r\n", "\t", ", ", " ,\n", "\u00a0", "\u3000", ",,"])
# Anything the parser must keep inside one entry: no whitespace (str.isspace is what re's \s matches), no comma.
_ENTRY = st.text(
    st.characters(exclude_categories=["Cs"]).filter(lambda c: not c.isspace() and c != ","), min_size=1, max_size=8
)


def _mixed_case(word: str, flips: list[bool]) -> str:
    return "".join(c.lower() if flip else c for c, flip in zip(word, flips + [False] * len(word), strict=False))


@st.composite
def typed_words(draw: st.DrawFn) -> str:
    """Words over the lexicon's letters (some in it, most not), typed in any case, NFC or NFD."""
    word = draw(st.one_of(st.sampled_from(LEXICON_WORDS), st.text(st.sampled_from(ALPHABET), min_size=2, max_size=15)))
    typed = _mixed_case(word, draw(st.lists(st.booleans(), max_size=15)))
    return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), typed)


# Typing as it comes: the lexicon's letters in both cases, other letters, digits, punctuation, separators.
_TYPED_CHARS = st.sampled_from(ALPHABET + ALPHABET.lower() + "XÉé4-'." + " ,\n\t")


# Anything typed, and lists of words around the 8-word limit.
_TYPING = st.one_of(
    st.text(_TYPED_CHARS, max_size=60),
    st.lists(typed_words(), max_size=10).map(" ".join),
    st.integers(MAX_WORDS - 1, MAX_WORDS + 2)
    .flatmap(lambda n: st.lists(typed_words(), min_size=n, max_size=n))
    .map(",\n".join),
)


# -- the challenge word parser -----------------------------------------------------------------------


@PROPERTY
@given(st.lists(_ENTRY, min_size=1, max_size=10), st.data())
def test_any_run_of_separators_splits_and_only_separators_do(entries: list[str], data: st.DataObject) -> None:
    separators = data.draw(st.lists(_SEPARATOR, min_size=len(entries) + 1, max_size=len(entries) + 1))
    lead, trail = data.draw(st.booleans()), data.draw(st.booleans())
    text = (separators[0] if lead else "") + "".join(e + s for e, s in zip(entries, separators[1:], strict=True))
    text = text if trail else text[: len(text) - len(separators[-1])]
    assert split_words(text) == entries
    assert split_words(entries) == entries  # a list of entries is taken as it is
    assert split_words([text, text]) == entries + entries  # and each item is split as typed


@PROPERTY
@given(st.lists(typed_words(), min_size=1, max_size=MAX_WORDS), st.randoms(use_true_random=False))
def test_case_form_order_and_separators_do_not_change_the_words(parsers: Parsers, words: list[str], rng: Any) -> None:
    division = _division(parsers.real)
    _, normalised = parsers.real.checked_words(division, " ".join(words))
    assert normalised == [normalise(word) for word in words]
    assert all(unicodedata.is_normalized("NFC", word) and word == word.upper() for word in normalised)
    again = [_mixed_case(w.upper(), [rng.random() < 0.5 for _ in w]) for w in words]  # another case
    assert parsers.real.checked_words(division, ",\n".join(again))[1] == normalised
    nfd = [unicodedata.normalize("NFD", w) for w in words]
    assert parsers.real.checked_words(division, nfd)[1] == normalised
    shuffled = list(words)
    rng.shuffle(shuffled)
    assert sorted(parsers.real.checked_words(division, "\t".join(shuffled))[1]) == sorted(normalised)


def within_the_rules(text: str) -> list[str] | None:
    """The rules as the README states them, written again from scratch: the words, or None if refused."""
    entries = [entry for entry in re.split(r"[\s,]+", text) if entry]
    if not 1 <= len(entries) <= 8:
        return None
    words = [normalise(entry) for entry in entries]
    if any(set(word) - set(ALPHABET) or not 2 <= len(word) <= 15 for word in words):
        return None
    return words


@PROPERTY
@given(_TYPING)
def test_accepted_exactly_when_within_the_rules_and_refusals_name_the_entry(parsers: Parsers, text: str) -> None:
    expected = within_the_rules(text)
    try:
        _, words = parsers.real.checked_words(_division(parsers.real), text)
    except InvalidInput as refused:
        message = refused.message
    else:
        assert words == expected, f"{text!r} is not within the rules"
        return
    assert expected is None, f"{text!r} is within the rules: {message}"
    entries = split_words(text)
    if not entries:
        assert message.startswith("no words")
    elif len(entries) > 8:
        assert message.startswith(f"{len(entries)} words")
    else:  # names one entry that breaks a rule: its position and what was typed
        assert any(
            f"word {n} {entry!r}" in message and within_the_rules(entry) is None
            for n, entry in enumerate(entries, start=1)
        ), message


@PROPERTY
@given(_TYPING)
def test_what_the_parser_says_does_not_depend_on_the_lexicons_words(parsers: Parsers, text: str) -> None:
    outcomes: list[object] = []
    for adjudicator in (parsers.real, parsers.other):
        try:
            outcomes.append(adjudicator.checked_words(_division(adjudicator), text))
        except InvalidInput as refused:
            outcomes.append(refused.message)
    assert outcomes[0] == outcomes[1]  # the same words, or the same refusal word for word


@PROPERTY
@given(st.lists(typed_words(), min_size=1, max_size=MAX_WORDS), st.sampled_from(["12", 7, "150"]))
def test_the_verdict_is_acceptable_exactly_when_every_word_is(parsers: Parsers, words: list[str], table: Any) -> None:
    entry = parsers.real.challenge(
        KIOSK, division="open", table=table, round_number=3, words=words, request_id="props-0001"
    )
    in_lexicon = [normalise(word) in LEXICON_WORDS for word in words]
    assert entry.verdict is (Verdict.ACCEPTABLE if all(in_lexicon) else Verdict.UNACCEPTABLE)
    assert [result["acceptable"] for result in entry.results] == in_lexicon  # recorded for the TD
    assert [result["word"] for result in entry.results] == list(entry.words)
    assert entry.words_typed == tuple(words)
    assert entry.consequence["play_stands"] is all(in_lexicon)
    assert entry.consequence["challenger_penalty"] == (5 * len(words) if all(in_lexicon) else 0)


def _record(entry: Any) -> Record:
    """The record the audit log would make of ``entry``."""
    return Record(**{f.name: getattr(entry, f.name) for f in fields(entry)}, id=1, hash="ab" * 32)


@PROPERTY
@given(st.lists(typed_words(), min_size=1, max_size=MAX_WORDS), st.permutations(range(MAX_WORDS)))
def test_devices_see_the_verdict_never_which_word_failed(parsers: Parsers, words: list[str], order: list[int]) -> None:
    entry = parsers.real.challenge(
        KIOSK, division="Open", table=1, round_number=1, words=words, request_id="props-0002"
    )
    record = _record(entry)
    # Other per-word results behind the same verdict: shuffled, other sources and reasons.
    reordered = [entry.results[i] for i in order if i < len(entry.results)]
    other = replace(record, results=tuple({**r, "source": "X", "reason": "other"} for r in reordered))
    for principal in (KIOSK, Principal("runner-1", Role.RUNNER, "runner")):
        mine = replace(record, actor=principal.actor)
        view = record_view(mine, principal)
        assert view == verdict_view(mine)  # what dockets show too
        assert view == record_view(replace(other, actor=principal.actor), principal)
        assert not {"results", "words_typed", "actor", "note"} & set(view)
        assert "source" not in repr(view)
        assert "reason" not in repr(view)
    assert record_view(record, TD)["results"] == list(entry.results)  # the TD sees them


# -- word lists --------------------------------------------------------------------------------------

# Any alphabet: letters of every script, with a combining mark now and then after a letter.
_LETTER = st.characters(categories=("Lu", "Ll", "Lt", "Lo"))
_WORD = st.lists(st.tuples(_LETTER, st.booleans()), min_size=1, max_size=10).map(
    lambda letters: "".join(letter + ("\u0301" if accent else "") for letter, accent in letters)
)


@PROPERTY
@given(st.text())
def test_normalise_is_idempotent_nfc_and_blind_to_the_typed_normal_form(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert unicodedata.is_normalized("NFC", once)
    for form in ("NFC", "NFD"):
        assert normalise(unicodedata.normalize(form, text)) == once


# Two capitals whose small letter upper-cases to something else: ϴ (U+03F4) -> θ -> Θ, and ẞ (U+1E9E) -> ß -> SS.
# A list holding them matches typing of the capital only; no known edition has either.
_CASE_EXCEPTIONS = "\u03f4\u1e9e"


@PROPERTY
@given(st.text(_LETTER.filter(lambda c: c not in _CASE_EXCEPTIONS), min_size=1, max_size=12))
def test_normalise_ignores_case_and_keeps_a_word_a_word(word: str) -> None:
    assert normalise(word.lower()) == normalise(word) == normalise(word.upper())
    assert word_problem(normalise(word)) is None


@st.composite
def word_list_source(draw: st.DrawFn) -> tuple[bytes, SourceFormat, list[str]]:
    """The same words as a plain, Zyzzyva or playability list, with comments, blank lines, any line ends,
    maybe a BOM, maybe gzipped."""
    words = draw(st.lists(_WORD, min_size=1, max_size=25))
    fmt = draw(st.sampled_from([SourceFormat.PLAIN, SourceFormat.ZYZZYVA, SourceFormat.PLAYABILITY]))
    lines = []
    for n, word in enumerate(words):
        lines += draw(st.lists(st.sampled_from(["", "   ", "# a comment", "  # indented: 12 x"]), max_size=2))
        pad = draw(st.sampled_from(["", " ", "\t"]))
        text = {SourceFormat.PLAIN: word, SourceFormat.ZYZZYVA: f"{word} a definition [n -S]"}.get(fmt, f"{n} {word}")
        lines.append(pad + text + pad)
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    data = (("\ufeff" if draw(st.booleans()) else "") + newline.join(lines) + newline).encode("utf-8")
    return (gzip.compress(data, mtime=0) if draw(st.booleans()) else data), fmt, words


@SLOW_PROPERTY
@given(word_list_source())
def test_every_format_gives_the_normalised_words(source: tuple[bytes, SourceFormat, list[str]]) -> None:
    data, fmt, words = source
    for asked in (fmt, SourceFormat.AUTO):
        result = parse_word_list(data, source_name="t.txt", format=asked)
        assert result.words == {normalise(word) for word in words}
        assert (result.lines, result.duplicates) == (len(words), len(words) - len(result.words))
        assert not result.invalid


# Spoils a word wherever it goes (a space only between letters: the ends of a line are stripped).
_NOT_A_LETTER = st.sampled_from(["0", "7", "-", "'", ".", "_", "/", "x y", "x\u00a0y", "x\ty"])


@SLOW_PROPERTY
@given(st.lists(st.tuples(_WORD, st.none() | st.tuples(st.integers(0, 30), _NOT_A_LETTER)), min_size=1, max_size=30))
def test_lines_that_are_not_words_are_named_and_the_rest_kept(lines: list[tuple[str, Any]]) -> None:
    text, bad_lines = [], []
    for number, (word, spoil) in enumerate(lines, start=1):
        if spoil is None:
            text.append(word)
        else:
            at, junk = spoil
            text.append(word[: at % (len(word) + 1)] + junk + word[at % (len(word) + 1) :])
            bad_lines.append(number)
    data = "\n".join(text).encode()
    kept = parse_word_list(data, source_name="t.txt", format=SourceFormat.PLAIN, skip_invalid=True)
    assert [bad.line for bad in kept.invalid] == bad_lines
    good = {normalise(word) for (word, spoil) in lines if spoil is None}
    assert kept.words == good
    if bad_lines:
        with pytest.raises(WordListError) as refused:
            parse_word_list(data, source_name="t.txt", format=SourceFormat.PLAIN)
        first = bad_lines[0]
        assert f"t.txt: {len(bad_lines)} line(s) are not words" in refused.value.message
        assert f"t.txt, line {first}: {text[first - 1]!r}: " in refused.value.message  # file, line, content
        assert [detail["line"] for detail in refused.value.details] == bad_lines[:100]


# -- the error shape ---------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def _error_classes() -> list[type[errors.WordjudgeError]]:
    found, todo = [], [errors.WordjudgeError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


@PROPERTY
@given(st.integers(400, 599), st.text(min_size=1, max_size=20), st.text(min_size=1), _JSON)
def test_every_error_body_is_the_documented_error_shape(status: int, code: str, message: str, details: Any) -> None:
    said = Message("error.http.detail", detail=message)  # "{detail}": any text at all
    body = error_body(status, code, said, details)
    assert ErrorBody.model_validate(body).model_dump() == body
    assert (body["error"], body["message"]) == (message, {"key": "error.http.detail", "params": {"detail": message}})
    for cls in _error_classes():
        takes_details = "retry_after" not in inspect.signature(cls.__init__).parameters
        exc = cls(said, details=details) if takes_details else cls("error.rate.pairing", retry_after=1)
        shaped = ErrorBody.model_validate(exc.body())
        assert (shaped.status, shaped.code) == (cls.status, cls.code)


@PROPERTY
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40) | st.text(max_size=20))
def test_the_ascii_shortcut_of_normalise_is_the_normal_form(text: str) -> None:
    # normalise skips both NFC passes for ASCII (NFC and upper-casing leave ASCII as ASCII): the same answer.
    assert normalise(text) == unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).upper())
