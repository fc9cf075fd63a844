"""The challenge input rules, written once: the server checks every challenge against them, and serves
them to the kiosk, the handheld and the console in ``GET /api/event`` (the clients refuse as typed what
the server would refuse), so that no client restates a limit.
"""

from __future__ import annotations

from typing import Any, Literal

from .rules import ChallengeRule

MAX_WORDS = 8  # a play forms at most 8 words, so a challenge has 1 to 8
MIN_LETTERS = 2
MAX_LETTERS = 15  # the board is 15 squares wide
MAX_ROUND = 999
# How an event labels its tables (event.toml's ``tables``): numbers, unless the TD names them, so that a
# word typed into the table field ("Table QUIXOTRY") is refused, not recorded.
Tables = Literal["numbers", "names"]
MAX_TABLE = 9999
TABLE_PATTERNS: dict[str, str] = {"numbers": r"[1-9][0-9]{0,3}", "names": r"[A-Za-z0-9][A-Za-z0-9-]{0,9}"}
TABLE_CHARS: dict[str, str] = {"numbers": "[0-9]", "names": "[A-Za-z0-9-]"}  # refused as typed otherwise
# What a table label is, as the catalogue says it (the refusal of a table names it), with the param max=MAX_TABLE.
TABLE_RULES: dict[str, str] = {"numbers": "error.table.rule_numbers", "names": "error.table.rule_names"}


def served(tables: Tables = "numbers") -> dict[str, Any]:
    """The rules as ``GET /api/event`` serves them: the input limits, what a table label is for an event whose
    tables are ``tables``, and the challenge rules a division may have (value and description, in order)."""
    return {
        "max_words": MAX_WORDS,
        "min_letters": MIN_LETTERS,
        "max_letters": MAX_LETTERS,
        "max_round": MAX_ROUND,
        "tables": tables,
        "max_table": MAX_TABLE,
        "table_pattern": TABLE_PATTERNS[tables],
        "table_chars": TABLE_CHARS[tables],
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
