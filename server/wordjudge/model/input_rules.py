"""The input rules, written once: the server checks every challenge, request id and name against them, and
serves what the clients need to the kiosk, the handheld and the console in ``GET /api/event`` (the clients
refuse as typed what the server would refuse), so that no client restates a limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import StringConstraints

from wordjudge.base.errors import LANGUAGES, InvalidInput, Message

MAX_WORDS = 8  # a play forms at most 8 words, so a challenge has 1 to 8
MIN_LETTERS = 2
MAX_LETTERS = 15  # the board is 15 squares wide
MAX_ROUND = 999
MAX_NOTE = 500  # a re-check's, reissue's or ruling's note, in characters
MAX_EVENT_NAME = 100  # an event's or a division's name, in characters
MAX_PASSWORD = 1000  # a TD's password, in characters (Argon2id hashes any length: this only caps the work)
# A device's or TD's name: 1 to MAX_NAME letters, digits, spaces, '.', '_' or '-', starting with a letter or digit
# (storage.access_db.check_name refuses any other in words).
MAX_NAME = 40
NAME_PATTERN = rf"[A-Za-z0-9][A-Za-z0-9 ._-]{{0,{MAX_NAME - 1}}}"
# A request id, made by the client for each new challenge (reused on a retry): 8 to 64 ASCII letters, digits,
# '_' or '-' (ASCII only: \w and isalnum() take other scripts); records.check_request_id refuses any other.
MIN_REQUEST_ID, MAX_REQUEST_ID = 8, 64
REQUEST_ID_CHARS = "A-Za-z0-9_-"
REQUEST_ID_PATTERN = rf"[{REQUEST_ID_CHARS}]{{{MIN_REQUEST_ID},{MAX_REQUEST_ID}}}"
# The two as types, for a request body or a path (pydantic and FastAPI check them; 422 as for any field).
RequestId = Annotated[
    str,
    StringConstraints(min_length=MIN_REQUEST_ID, max_length=MAX_REQUEST_ID, pattern=rf"^[{REQUEST_ID_CHARS}]+$"),
]
Name = Annotated[str, StringConstraints(max_length=MAX_NAME)]  # the rest is check_name's, in words
# How an event labels its tables (event.toml's ``tables``): numbers, unless the TD names them, so that a
# word typed into the table field ("Table QUIXOTRY") is refused, not recorded.
Tables = Literal["numbers", "names"]
MAX_TABLE = 9999
TABLE_PATTERNS: dict[str, str] = {"numbers": r"[1-9][0-9]{0,3}", "names": r"[A-Za-z0-9][A-Za-z0-9-]{0,9}"}
TABLE_CHARS: dict[str, str] = {"numbers": "[0-9]", "names": "[A-Za-z0-9-]"}  # refused as typed otherwise
# What a table label is, as the catalogue says it (the refusal of a table names it), with the param max=MAX_TABLE.
TABLE_RULES: dict[str, str] = {"numbers": "error.table.rule_numbers", "names": "error.table.rule_names"}


def served(tables: Tables = "numbers") -> dict[str, Any]:
    """The rules as ``GET /api/event`` serves them: the input limits (a challenge's, a name's, a note's), the
    languages an event may speak, and what a table label is for an event whose tables are ``tables`` (the
    challenge rules a division may have are :func:`wordjudge.model.rules.served`, served beside them)."""
    return {
        "max_words": MAX_WORDS,
        "min_letters": MIN_LETTERS,
        "max_letters": MAX_LETTERS,
        "max_round": MAX_ROUND,
        "max_name": MAX_NAME,
        "max_note": MAX_NOTE,
        "max_event_name": MAX_EVENT_NAME,
        "max_password": MAX_PASSWORD,
        "languages": list(LANGUAGES),
        "tables": tables,
        "max_table": MAX_TABLE,
        "table_pattern": TABLE_PATTERNS[tables],
        "table_chars": TABLE_CHARS[tables],
    }


_SEPARATORS = re.compile(r"[\s,]+")

_TABLES = {tables: re.compile(pattern) for tables, pattern in TABLE_PATTERNS.items()}


def split_words(words: str | Sequence[str]) -> list[str]:
    """The entries of a challenge as typed: spaces, commas and new lines separate them."""
    items = [words] if isinstance(words, str) else list(words)
    return [part for item in items for part in _SEPARATORS.split(item) if part]


class EventShape(Protocol):
    """What the checks read of an event (:class:`wordjudge.tournament.event.Event`, a layer above, has it)."""

    @property
    def name(self) -> str: ...
    @property
    def tables(self) -> Tables: ...
    @property
    def rounds(self) -> bool: ...
    @property
    def current_round(self) -> int | None: ...


def check_table(table: str | int, event: EventShape) -> str:
    """A table label of ``event``: a number from 1 to 9999, or 1 to 10 letters, digits or '-' when the TD
    names the tables (``tables = "names"``). Raises :class:`InvalidInput` naming the field."""
    label = str(table).strip()
    if isinstance(table, bool) or not _TABLES[event.tables].fullmatch(label):
        rule = Message(TABLE_RULES[event.tables], max=str(MAX_TABLE))
        raise InvalidInput(
            "error.table.not_the_events",
            table=repr(str(table)),
            event=event.name,
            rule=rule,
            details=[{"field": "table", "message": Message("error.table.must_be", rule=rule).text()}],
        )
    return label


def check_round(round_number: int | None, event: EventShape | None = None) -> int | None:
    """A round number (1 to :data:`MAX_ROUND`), or None; required when ``event`` has rounds.

    Raises :class:`InvalidInput`."""
    if round_number is None and event is not None and event.rounds:
        details = [{"field": "round", "message": "required: this event's challenges carry a round number"}]
        if event.current_round is not None:
            raise InvalidInput(
                "error.round.missing_current", event=event.name, current=event.current_round, details=details
            )
        raise InvalidInput("error.round.missing", event=event.name, details=details)
    if round_number is not None and not (1 <= round_number <= MAX_ROUND):
        raise InvalidInput("error.round.invalid", round=str(round_number), max=MAX_ROUND)
    return round_number


# The refusals of a note: too long, and missing where it must be given (a reissue's reason, a ruling's note).
_NOTE_TOO_LONG = {
    None: "error.note.too_long",
    "reason": "error.note.reason_too_long",
    "ruling": "error.note.ruling_too_long",
}
_NOTE_MISSING = {"reason": "error.note.reason_missing", "ruling": "error.note.ruling_missing"}


def check_note(note: str | None, *, required: str | None = None) -> str | None:
    """A free-text note or reason; ``required`` (``reason`` for a reissue, ``ruling`` for a ruling's note) when
    it must be given. Raises :class:`InvalidInput`."""
    text = (note or "").strip()
    if required and not text:
        raise InvalidInput(_NOTE_MISSING[required])
    if len(text) > MAX_NOTE:
        raise InvalidInput(_NOTE_TOO_LONG[required], length=len(text), max=MAX_NOTE)
    return text or None
