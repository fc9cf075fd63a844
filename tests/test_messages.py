"""What wordjudge says, in each language: the catalogues (kiosk/locales/<lang>.json), their rendering, and
that every message the server can say is in them."""

from __future__ import annotations

import ast
import json
import re
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import pytest

from wordjudge.base import errors
from wordjudge.base.errors import (
    DEFAULT_LANGUAGE,
    LANGUAGES,
    PLACEHOLDER,
    Language,
    Message,
    catalogue,
    format_number,
    plural_category,
    pseudo,
    render,
)
from wordjudge.base.messages import format_datetime, joined, placeholders, times_shown
from wordjudge.model.auth import Role
from wordjudge.model.records import Kind, Verdict, kind_message, verdict_message
from wordjudge.model.rules import ChallengeRule, consequence, consequence_message, stored_consequence_message
from wordjudge.tournament.changes import FIELDS

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server" / "wordjudge"
LOCALES = ROOT / "kiosk" / "locales"
FILES = ("en", "fr")  # the languages with a catalogue file (qps-ploc is made from en)
# The namespaces the server says things in (the clients' are ui.*).
SERVER_KEY = re.compile(r"^(error|rule|consequence|verdict|chain|cli|role|change|time)\.[a-z0-9_.-]*[a-z0-9_-]$")
NNBSP = "\u202f"


def _file(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((LOCALES / f"{lang}.json").read_text("utf-8"))
    return data


# -- rendering --------------------------------------------------------------------------------------


def test_a_message_renders_its_key_with_its_params_in_each_language() -> None:
    said = Message("error.round.invalid", round="0", max=999)
    assert said.text() == "round 0 is not a round number (1 to 999)"
    assert said.text("fr") == "la ronde 0 n’est pas un numéro de ronde (1 à 999)"
    assert said.as_dict() == {"key": "error.round.invalid", "params": {"round": "0", "max": 999}}
    assert Message.from_dict(said.as_dict()) == said
    assert str(said) == said.text("en")


def test_numbers_in_params_follow_the_language_and_text_does_not() -> None:
    assert format_number(1234567) == "1,234,567"
    assert format_number(1234567, "fr") == f"1{NNBSP}234{NNBSP}567"  # as Intl.NumberFormat("fr") writes it
    assert format_number(1234.5, "fr") == f"1{NNBSP}234,5"
    assert format_number(2.0) == "2"
    assert format_number(1234, PSEUDO := "qps-ploc") == "1,234", PSEUDO  # the pseudo-language formats as English
    said = Message("error.lexicon.trie_words", path="a/words.marisa", words=280887, expected=1234)
    assert said.text() == "a/words.marisa holds 280,887 words, the manifest says 1,234"
    assert f"280{NNBSP}887 mots" in said.text("fr")
    # Text stays as it is: an id passed as text is never grouped.
    assert (
        Message("error.record.not_found", id="12345").text("fr") == "aucun enregistrement 12345 dans le journal d’audit"
    )


@pytest.mark.parametrize(
    ("n", "en", "fr"), [(0, "other", "one"), (1, "one", "one"), (1.5, "other", "one"), (2, "other", "other")]
)
def test_plural_categories_are_cldrs(n: float, en: str, fr: str) -> None:
    assert (plural_category(n, "en"), plural_category(n, "fr")) == (en, fr)


def test_a_plural_is_chosen_by_n() -> None:
    one = consequence_message(ChallengeRule.FIVE_PER_WORD, True, 1)
    two = consequence_message(ChallengeRule.FIVE_PER_WORD, True, 2)
    assert one.text() == "Play stands: challenger loses 5 points (1 word x 5)"
    assert two.text() == "Play stands: challenger loses 10 points (2 words x 5)"
    assert one.text("fr") == f"Le coup est maintenu{NNBSP}: le contestataire perd 5 points (1 mot × 5)"
    assert two.text("fr") == f"Le coup est maintenu{NNBSP}: le contestataire perd 10 points (2 mots × 5)"
    with pytest.raises(KeyError, match="needs the number n"):
        render("consequence.per_word", {"points": 5, "each": 5})


def test_a_message_param_is_rendered_in_the_same_language() -> None:
    said = Message("error.event.entry", where="event.toml", problem=Message("error.event.where.settings"))
    assert said.text() == "event.toml: event settings"
    assert said.text("fr") == f"event.toml{NNBSP}: réglages du tournoi"
    assert said.as_dict()["params"]["problem"] == {"key": "error.event.where.settings", "params": {}}
    either = joined(["A", "B", "C"], "error.list.or")
    assert Message("error.lexicon.ambiguous_case", name="'a'", same=either).text() == (
        "'a' could be A or B or C, which differ only in case: write one exactly"
    )
    assert "A ou B ou C" in Message("error.lexicon.ambiguous_case", name="'a'", same=either).text("fr")
    assert joined(["A"], "error.list.or") == "A"


def test_a_key_or_param_the_catalogue_lacks_is_a_mistake_of_the_code() -> None:
    with pytest.raises(KeyError, match="no message"):
        render("error.nothing.like.this")
    with pytest.raises(KeyError, match="needs the parameter 'max'"):
        render("error.round.invalid", {"round": "0"})
    with pytest.raises(ValueError, match="no catalogue for language 'de'"):
        catalogue("de")
    assert render("error.none", lang="de") == "none"  # an unknown language says it in English


def test_the_pseudo_language_is_made_from_english_with_placeholders_kept() -> None:
    assert pseudo("Table {table}") == "⟦Ţàƀľè {table}⟧"
    pseudo_catalogue = catalogue("qps-ploc")
    assert set(pseudo_catalogue) == set(catalogue("en"))
    for key, value in catalogue("en").items():
        made = pseudo_catalogue[key]
        english_forms = [value] if isinstance(value, str) else [value[form] for form in sorted(value)]
        made_forms = [made] if isinstance(made, str) else [made[form] for form in sorted(made)]
        for english, text in zip(english_forms, made_forms, strict=True):
            assert text.startswith("⟦"), key
            assert text.endswith("⟧"), key
            assert PLACEHOLDER.findall(text) == PLACEHOLDER.findall(english), key
            assert not re.search(r"[A-Za-z]", PLACEHOLDER.sub("", text)), (key, text)  # every letter accented
    assert (
        Message("error.round.invalid", round="7", max=999).text("qps-ploc")
        == "⟦ŕòùñď 7 ìš ñòţ à ŕòùñď ñùɱƀèŕ (1 ţò 999)⟧"
    )


def test_dates_follow_the_language() -> None:
    moment = datetime(2026, 11, 21, 9, 5, 3)
    # Day-first unless the event's region writes dates otherwise (tests/test_dates.py has the rest).
    assert format_datetime(moment) == "21/11/2026, 09:05:03"
    assert format_datetime(moment, "fr") == "21/11/2026 09:05:03"
    assert format_datetime(moment, "qps-ploc") == "21/11/2026, 09:05:03"
    assert format_datetime(moment, "en-US") == "11/21/2026, 09:05:03"


# -- the catalogues ---------------------------------------------------------------------------------


def test_the_languages_are_one_list() -> None:
    assert get_args(Language) == LANGUAGES
    assert DEFAULT_LANGUAGE in LANGUAGES
    assert sorted(path.stem for path in LOCALES.glob("*.json")) == sorted(FILES)


@pytest.mark.parametrize("lang", FILES)
def test_a_catalogue_is_a_flat_sorted_object_of_texts_and_plurals(lang: str) -> None:
    data = _file(lang)
    assert list(data) == sorted(data)
    for key, value in data.items():
        assert re.fullmatch(r"[a-z]+(\.[A-Za-z0-9_-]+)+", key), key
        if isinstance(value, dict):
            assert set(value) == {"one", "other"}, key
            assert all(isinstance(text, str) and text for text in value.values()), key
            if SERVER_KEY.fullmatch(key):
                assert "n" in placeholders(value), f"{key}: a plural is chosen by n"
        else:
            assert isinstance(value, str), key
            assert value, key


def test_every_key_is_in_both_catalogues_with_the_same_placeholders() -> None:
    english, french = _file("en"), _file("fr")
    assert set(english) == set(french)
    for key in english:
        assert placeholders(english[key]) == placeholders(french[key]), key
        assert isinstance(english[key], dict) == isinstance(french[key], dict), key


def test_french_text_is_french_typography() -> None:
    # The server's keys (the clients' ui.* keys are theirs to check).
    for key, value in _file("fr").items():
        if not SERVER_KEY.fullmatch(key):
            continue
        for text in [value] if isinstance(value, str) else value.values():
            # A narrow no-break space before ; : ! ? and inside « », never a plain space.
            assert not re.search(r" [;:!?»]|« ", text), (key, text)
            assert "'" not in re.sub(r"'[^' ]*'", "", text), f"{key}: an apostrophe is ’ ({text})"


# -- every message the server says is in the catalogue -----------------------------------------------


def _error_classes() -> set[str]:
    found, todo = set(), [errors.WordjudgeError]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo += cls.__subclasses__()
    return found


def _calls() -> list[tuple[str, ast.expr, set[str]]]:
    """Every call in the server's code to an error class or to Message (or its alias): where it is, its first
    argument and the names of its keyword arguments ("*" for a ``**`` splat)."""
    # td_only and require_td take the key of their refusal ("only the TD may ...").
    callees = _error_classes() | {"Message", "Said", "td_only", "require_td"}
    calls = []
    for path in sorted(SERVER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if callee in callees:
                names = {keyword.arg or "*" for keyword in node.keywords}
                where = f"{path.name}:{node.lineno} {callee}({ast.unparse(node.args[0])})"
                calls.append((where, node.args[0], names))
    return calls


# The keys made from a name (a kind, verdict, rule or a change's setting: every one is checked below), the only keys not written out.
_MADE = ("Message(f'verdict.kind.{", "Message(f'verdict.{", "Message(f'rule.{", "Message(f'change.field.{")


def test_every_error_is_raised_with_a_catalogue_key_never_with_text() -> None:
    calls = _calls()
    assert len(calls) > 200  # every raise site, and the messages built beside them
    english = catalogue("en")
    for where, first, names in calls:
        made = isinstance(first, ast.JoinedStr) and where.split(" ", 1)[1].startswith(_MADE)
        assert made or not isinstance(first, ast.JoinedStr | ast.BinOp), f"{where}: text, not a key"
        # A key, or a choice of keys: each must be in the catalogue, with every parameter it needs given.
        choices = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
        for choice in choices:
            if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                assert choice.value in english, f"{where}: {choice.value} is not in the English catalogue"
                needed = placeholders(english[choice.value])
                assert "*" in names or needed <= names, f"{where}: needs {needed - names}"


def test_every_key_written_in_the_code_is_in_the_catalogue() -> None:
    english = catalogue("en")
    written = set()
    for path in sorted(SERVER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SERVER_KEY.fullmatch(node.value):
                written.add(node.value)
    assert len(written) > 250
    assert sorted(written - set(english)) == []
    # The keys made from names: every kind, verdict, rule (and its description) and role.
    made = {kind_message(kind).key for kind in Kind} | {verdict_message(verdict).key for verdict in Verdict}
    made |= {rule.message.key for rule in ChallengeRule} | {rule.description_message.key for rule in ChallengeRule}
    made |= {f"role.{role.value}" for role in Role} | {f"change.field.{name}" for name in FIELDS}
    assert sorted(made - set(english)) == []
    # And nothing in the server's namespaces that the server never says.
    unused = {key for key in english if SERVER_KEY.fullmatch(key)} - written - made
    assert sorted(unused) == []


# -- rules and consequences -------------------------------------------------------------------------


@pytest.mark.parametrize("rule", list(ChallengeRule))
def test_the_consequence_message_says_the_stored_text_word_for_word(rule: ChallengeRule) -> None:
    # The stored text is hashed into the audit log and recomputed by the chain check: never from the catalogue.
    for acceptable in (True, False):
        for words in range(1, 9):
            stored = consequence(rule, acceptable, words)
            said = consequence_message(rule, acceptable, words)
            assert said.text() == stored.text
            assert said.text("fr") not in ("", stored.text)
            assert stored_consequence_message(rule.value, acceptable, words, stored.as_dict()) == said


def test_a_consequence_the_rules_do_not_give_is_said_as_recorded() -> None:
    odd = {"text": "Play stands: as the TD said"}
    assert stored_consequence_message("five-per-word", True, 2, odd) == Message(
        "consequence.as_recorded", text=odd["text"]
    )
    assert stored_consequence_message("no-such-rule", True, 2, odd).text("fr") == odd["text"]


def test_rule_names_and_descriptions_come_from_the_catalogue() -> None:
    assert ChallengeRule.FIVE_PER_WORD.description == "5 points per word for an unsuccessful challenge"
    assert (
        ChallengeRule.FIVE_PER_WORD.description_message.text("fr")
        == "5 points par mot pour une contestation infructueuse"
    )
    assert ChallengeRule.DOUBLE.message.text("fr") == "double"
    assert verdict_message(Verdict.ACCEPTABLE).text("fr") == "VALABLE"


# -- packaging --------------------------------------------------------------------------------------


def test_the_catalogues_ship_in_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    # The folder of catalogues is a package of its own to setuptools (else every build warns that it is left out).
    assert "wordjudge.kiosk.locales" in project["tool"]["setuptools"]["packages"]
    shipped = project["tool"]["setuptools"]["package-data"]["wordjudge.kiosk.locales"]
    assert "*.json" in shipped


def test_times_in_a_text_are_shown_as_the_event_writes_dates() -> None:
    """A clock record's times in the TD's view (audit tail): as format_datetime writes them, in this machine's zone;
    text that only looks like a time stays as written (issue 46 item 2)."""
    moment = datetime.fromisoformat("2026-11-27T11:00:02.000+00:00")
    text = "it read 2026-11-27T11:00:02.000+00:00 where 2026-13-40T99:00Z was due"
    assert (
        times_shown(text, "fr")
        == f"it read {format_datetime(moment.astimezone(), 'fr')} where 2026-13-40T99:00Z was due"
    )
    assert times_shown("no time here, 2026-11-27 alone", "fr") == "no time here, 2026-11-27 alone"
