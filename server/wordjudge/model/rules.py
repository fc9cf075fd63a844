"""Challenge rules: what happens after the verdict (WESPA 3.10.14's standard list).

The rule is set per event or division. An unsuccessful challenge (the play is
acceptable) costs the challenger what the rule says; a successful one takes the
play off the board. The challenged player is never penalised by the rule.

Each record stores its consequence with its English text (the audit log hashes it, and the chain
check recomputes it from :func:`consequence`: that text never changes). Screens say it in the
event's language from :func:`consequence_message` (``consequence.*`` keys); rule names and
descriptions are ``rule.<rule>`` and ``rule.<rule>.description`` in the catalogues.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from wordjudge.base.errors import Message


class ChallengeRule(StrEnum):
    SINGLE = "single"  # no penalty
    FIVE_PER_WORD = "five-per-word"  # WESPA's preferred international norm
    FIVE_PER_TURN = "five-per-turn"
    TEN_PER_WORD = "ten-per-word"
    TEN_PER_TURN = "ten-per-turn"
    DOUBLE = "double"  # loss of turn: the challenger loses their turn

    @property
    def message(self) -> Message:
        """The rule's name in words (``rule.<rule>``)."""
        return Message(f"rule.{self.value}")

    @property
    def description_message(self) -> Message:
        """What the rule does (``rule.<rule>.description``): "5 points per word for an unsuccessful challenge"."""
        return Message(f"rule.{self.value}.description")

    @property
    def description(self) -> str:
        """:attr:`description_message` in English."""
        return self.description_message.text()


def served() -> list[dict[str, Any]]:
    """The challenge rules a division may have, in order, as ``GET /api/event`` serves them beside the input
    rules (``input_rules.challenge_rules``): each one's value, its description and both as messages."""
    return [
        {
            "value": rule.value,
            "text": rule.description,
            "message": rule.message.as_dict(),
            "text_message": rule.description_message.as_dict(),
        }
        for rule in ChallengeRule
    ]


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
        # Spelt out, not dataclasses.asdict (slow: a deep copy); in field order, as asdict gave it.
        return {
            "play_stands": self.play_stands,
            "challenger_penalty": self.challenger_penalty,
            "challenger_loses_turn": self.challenger_loses_turn,
            "text": self.text,
        }


def consequence(rule: ChallengeRule, acceptable: bool, word_count: int) -> Consequence:
    """The consequence of a verdict under ``rule`` for a challenge of ``word_count`` words, as records store it.

    Its text is written here, not read from the catalogue: stored records are hashed with it, and the chain
    check recomputes it, so it must never change (a test holds :func:`consequence_message` to it).
    """
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


def consequence_message(rule: ChallengeRule, acceptable: bool, word_count: int) -> Message:
    """The consequence of :func:`consequence` as a message (``consequence.*``), to say it in any language.

    In English it is the stored text, word for word.
    """
    if not acceptable:
        return Message("consequence.play_off")
    if rule in _PER_WORD:
        each = _PER_WORD[rule]
        return Message("consequence.per_word", n=word_count, points=each * word_count, each=each)
    if rule in _PER_TURN:
        return Message("consequence.per_turn", points=_PER_TURN[rule])
    if rule is ChallengeRule.DOUBLE:
        return Message("consequence.lose_turn")
    return Message("consequence.no_penalty")


def stored_consequence_message(rule: str, acceptable: bool, word_count: int, stored: dict[str, Any]) -> Message:
    """The message of a consequence as a record stores it (its ``rule`` and ``stored`` consequence read from
    the log): :func:`consequence_message` when its English is the stored text, which the chain check holds
    for every record; else the stored text itself (``consequence.as_recorded``)."""
    text = str(stored.get("text", ""))
    try:
        message = consequence_message(ChallengeRule(rule), acceptable, word_count)
    except ValueError:
        return Message("consequence.as_recorded", text=text)
    return message if message.text() == text else Message("consequence.as_recorded", text=text)
