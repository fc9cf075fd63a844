"""Challenge rules: what happens after the verdict (WESPA 3.10.14's standard list).

The rule is set per event or division. An unsuccessful challenge (the play is
acceptable) costs the challenger what the rule says; a successful one takes the
play off the board. The challenged player is never penalised by the rule.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class ChallengeRule(StrEnum):
    SINGLE = "single"  # no penalty
    FIVE_PER_WORD = "five-per-word"  # WESPA's preferred international norm
    FIVE_PER_TURN = "five-per-turn"
    TEN_PER_WORD = "ten-per-word"
    TEN_PER_TURN = "ten-per-turn"
    DOUBLE = "double"  # loss of turn: the challenger loses their turn

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    ChallengeRule.SINGLE: "no penalty for an unsuccessful challenge",
    ChallengeRule.FIVE_PER_WORD: "5 points per word for an unsuccessful challenge",
    ChallengeRule.FIVE_PER_TURN: "5 points per unsuccessful challenge",
    ChallengeRule.TEN_PER_WORD: "10 points per word for an unsuccessful challenge",
    ChallengeRule.TEN_PER_TURN: "10 points per unsuccessful challenge",
    ChallengeRule.DOUBLE: "an unsuccessful challenge loses the challenger their turn",
}
_PER_WORD = {ChallengeRule.FIVE_PER_WORD: 5, ChallengeRule.TEN_PER_WORD: 10}
_PER_TURN = {ChallengeRule.FIVE_PER_TURN: 5, ChallengeRule.TEN_PER_TURN: 10}


@dataclass(frozen=True)
class Consequence:
    """What the verdict means at the board, in numbers and in words."""

    play_stands: bool
    challenger_penalty: int  # points the challenger loses
    challenger_loses_turn: bool
    text: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def consequence(rule: ChallengeRule, acceptable: bool, word_count: int) -> Consequence:
    """The consequence of a verdict under ``rule`` for a challenge of ``word_count`` words."""
    if not acceptable:
        return Consequence(False, 0, False, "Play comes off: tiles back to the rack, no score for the turn")
    if rule in _PER_WORD:
        each = _PER_WORD[rule]
        words = f"{word_count} word{'s' if word_count != 1 else ''}"
        points = each * word_count
        return Consequence(True, points, False, f"Play stands: challenger loses {points} points ({words} x {each})")
    if rule in _PER_TURN:
        points = _PER_TURN[rule]
        return Consequence(True, points, False, f"Play stands: challenger loses {points} points")
    if rule is ChallengeRule.DOUBLE:
        return Consequence(True, 0, True, "Play stands: challenger loses their turn")
    return Consequence(True, 0, False, "Play stands: no penalty")
