from __future__ import annotations

import dataclasses

import pytest

from wordjudge.model.rules import ChallengeRule, consequence


@pytest.mark.parametrize(
    ("rule", "words", "text", "points", "loses_turn"),
    [
        ("single", 2, "Play stands: no penalty", 0, False),
        ("five-per-word", 2, "Play stands: challenger loses 10 points (2 words x 5)", 10, False),
        ("five-per-word", 1, "Play stands: challenger loses 5 points (1 word x 5)", 5, False),
        ("ten-per-word", 3, "Play stands: challenger loses 30 points (3 words x 10)", 30, False),
        ("five-per-turn", 3, "Play stands: challenger loses 5 points", 5, False),
        ("ten-per-turn", 3, "Play stands: challenger loses 10 points", 10, False),
        ("double", 2, "Play stands: challenger loses their turn", 0, True),
    ],
)
def test_unsuccessful_challenge_costs_the_challenger(
    rule: str, words: int, text: str, points: int, loses_turn: bool
) -> None:
    result = consequence(ChallengeRule(rule), True, words)
    assert (result.text, result.challenger_penalty, result.challenger_loses_turn) == (text, points, loses_turn)
    assert result.play_stands


@pytest.mark.parametrize("rule", list(ChallengeRule))
def test_successful_challenge_takes_the_play_off_and_never_penalises_the_challenged_player(
    rule: ChallengeRule,
) -> None:
    result = consequence(rule, False, 4)
    assert result.text == "Play comes off: tiles back to the rack, no score for the turn"
    assert (result.play_stands, result.challenger_penalty, result.challenger_loses_turn) == (False, 0, False)


def test_the_standard_list_is_complete() -> None:
    assert [r.value for r in ChallengeRule] == [
        "single",
        "five-per-word",
        "five-per-turn",
        "ten-per-word",
        "ten-per-turn",
        "double",
    ]
    assert all(rule.description for rule in ChallengeRule)


@pytest.mark.parametrize("acceptable", [True, False])
@pytest.mark.parametrize("rule", list(ChallengeRule))
def test_a_consequence_is_stored_with_every_field_of_its_own(rule: ChallengeRule, acceptable: bool) -> None:
    # as_dict is spelt out for speed: a field added to Consequence must not be left out of the stored record.
    found = consequence(rule, acceptable, 3)
    assert found.as_dict() == dataclasses.asdict(found)
    assert list(found.as_dict()) == [field.name for field in dataclasses.fields(found)]
