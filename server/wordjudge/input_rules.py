"""The challenge input rules, written once: the server checks every challenge against them, and serves
them to the kiosk, the handheld and the console in ``GET /api/event`` (the clients refuse as typed what
the server would refuse), so that no client restates a limit.
"""

from __future__ import annotations

from typing import Any

from .rules import ChallengeRule

MAX_WORDS = 8  # a play forms at most 8 words, so a challenge has 1 to 8
MIN_LETTERS = 2
MAX_LETTERS = 15  # the board is 15 squares wide
MAX_ROUND = 999
# A table label: usually a number; letters, digits and '-' for events that name their tables.
TABLE_PATTERN = r"[A-Za-z0-9][A-Za-z0-9-]{0,9}"


def served() -> dict[str, Any]:
    """The rules as ``GET /api/event`` serves them: the input limits and the challenge rules a division
    may have (value and description, in order)."""
    return {
        "max_words": MAX_WORDS,
        "min_letters": MIN_LETTERS,
        "max_letters": MAX_LETTERS,
        "max_round": MAX_ROUND,
        "table_pattern": TABLE_PATTERN,
        "challenge_rules": [
            {
                "value": rule.value,
                "text": rule.description,
                "message": rule.message.as_dict(),
                "text_message": rule.description_message.as_dict(),
            }
            for rule in ChallengeRule
        ],
    }
