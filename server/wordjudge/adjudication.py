"""Adjudication: one verdict for a multi-word challenge, and the records that follow it.

A challenge is 1 to 8 words (one play forms at most 8), each 2 to 15 letters (the
board is 15 wide), in the letters of the division's lexicon. It is acceptable only if
every word is (WESPA 3.10.2, ABSP 4.10.6, ASPA 10.10); players are told the one verdict,
never which word failed. The per-word results are recorded for the TD.

After a challenge come, as linked records: a re-adjudication of the same words by
someone other than the original adjudicator (WESPA 3.10.10), a reissue with corrected
words and a reason (3.10.11), and the TD's ruling where the two disagree.

This module builds the records; :mod:`wordjudge.audit` stores them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .audit import AuditLog, check_request_id
from .auth import Principal
from .errors import Forbidden, InvalidInput, NotFound, ProfileError
from .event import Division, Event
from .event_changes import describe
from .input_rules import MAX_LETTERS, MAX_ROUND, MAX_TABLE, MAX_WORDS, MIN_LETTERS, TABLE_PATTERNS, TABLE_RULES
from .messages import Message
from .profile import Profile
from .records import Entry, Kind, Record, Verdict, kind_message, verdict_message
from .rules import ChallengeRule, consequence, stored_consequence_message

MAX_NOTE = 500
_RULES = {rule.value for rule in ChallengeRule}
# What the TD may do to a record, and how each is refused.
_TD_ONLY = {"recheck": "error.td_only.recheck", "reissue": "error.td_only.reissue"}
_NOT_A_CHALLENGE = {
    "recheck": "error.record.recheck_not_a_challenge",
    "reissue": "error.record.reissue_not_a_challenge",
}
_SOMEONE_ELSE = {
    "recheck": "error.record.someone_else_recheck", "reissue": "error.record.someone_else_reissue",
    "ruling": "error.record.someone_else_ruling",
}  # fmt: skip
_SEPARATORS = re.compile(r"[\s,]+")
_TABLES = {tables: re.compile(pattern) for tables, pattern in TABLE_PATTERNS.items()}


def split_words(words: str | Sequence[str]) -> list[str]:
    """The entries of a challenge as typed: spaces, commas and new lines separate them."""
    items = [words] if isinstance(words, str) else list(words)
    return [part for item in items for part in _SEPARATORS.split(item) if part]


def check_table(table: str | int, event: Event) -> str:
    """A table label of ``event``: a number from 1 to 9999, or 1 to 10 letters, digits or '-' when the TD
    names the tables (``tables = "names"``). Raises :class:`InvalidInput` naming the field."""
    label = str(table).strip()
    if isinstance(table, bool) or not _TABLES[event.tables].fullmatch(label):
        rule = Message(TABLE_RULES[event.tables], max=str(MAX_TABLE))
        raise InvalidInput(
            "error.table.not_the_events", table=repr(str(table)), event=event.name, rule=rule,
            details=[{"field": "table", "message": Message("error.table.must_be", rule=rule).text()}],
        )  # fmt: skip
    return label


def check_round(round_number: int | None, event: Event | None = None) -> int | None:
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


def repeated(words: Sequence[str]) -> list[str]:
    """Words that occur more than once, so the opponent can check the typing."""
    return [word for word, count in Counter(words).items() if count > 1]


class Adjudicator:
    """The adjudication service for one event: its divisions, their profiles, the audit log."""

    def __init__(self, event: Event, profiles: dict[str, Profile], audit: AuditLog) -> None:
        missing = [d.lexicon for d in event.divisions if d.lexicon not in profiles]
        if missing:
            raise ProfileError("error.event.lexicons_not_loaded", lexicons=", ".join(missing))
        self.event = event
        self.profiles = profiles
        self.audit = audit

    def checked_words(self, division: Division, words: str | Sequence[str]) -> tuple[list[str], list[str]]:
        """The typed entries and their normalised words, checked against the input rules.

        Raises :class:`InvalidInput` naming the entry at fault, never saying whether any word is valid.
        """
        typed = split_words(words)
        if not typed:
            raise InvalidInput("error.words.none", min=MIN_LETTERS, max=MAX_LETTERS)
        if len(typed) > MAX_WORDS:
            raise InvalidInput("error.words.too_many", n=len(typed), max=MAX_WORDS)
        normalised = self.profiles[division.lexicon].normalise_words(typed)
        for position, (entry, word) in enumerate(zip(typed, normalised, strict=True), start=1):
            if not (MIN_LETTERS <= len(word) <= MAX_LETTERS):
                raise InvalidInput(
                    "error.words.length", position=position, word=repr(entry), n=len(word), min=MIN_LETTERS,
                    max=MAX_LETTERS,
                )  # fmt: skip
        return typed, normalised

    def _entry(
        self,
        principal: Principal,
        kind: Kind,
        division: Division,
        table: str,
        round_number: int | None,
        typed: Sequence[str],
        words: Sequence[str],
        request_id: str,
        *,
        parent: Record | None = None,
        note: str | None = None,
    ) -> Entry:
        profile = self.profiles[division.lexicon]
        results = [profile.lookup(word) for word in words]
        acceptable = all(result.acceptable for result in results)
        verdict = Verdict.ACCEPTABLE if acceptable else Verdict.UNACCEPTABLE
        return Entry(
            kind=kind,
            parent_id=parent.id if parent else None,
            event=self.event.name,
            division=division.name,
            round=round_number,
            table=table,
            actor=principal.actor,
            channel=principal.channel,
            words_typed=tuple(typed),
            words=tuple(words),
            lexicon=profile.name,
            fingerprint=profile.fingerprint,
            verdict=verdict,
            results=tuple(result.as_dict() for result in results),
            rule=division.rule.value,
            consequence=consequence(division.rule, acceptable, len(words)).as_dict(),
            request_id=check_request_id(request_id),
            agrees=None if parent is None else verdict == parent.verdict,
            note=note,
        )

    def challenge(
        self,
        principal: Principal,
        *,
        division: str,
        table: str | int,
        round_number: int | None,
        words: str | Sequence[str],
        request_id: str,
    ) -> Entry:
        """The record of a new challenge. Raises :class:`InvalidInput` for bad input (a round is required when
        the event has rounds), :class:`Forbidden` for a device enrolled for another division."""
        chosen = self.event.division(division)
        principal.require_division(chosen.name)
        typed, normalised = self.checked_words(chosen, words)
        return self._entry(
            principal, Kind.CHALLENGE, chosen, check_table(table, self.event), check_round(round_number, self.event),
            typed, normalised, request_id,
        )  # fmt: skip

    def recheck(self, principal: Principal, parent_id: int, *, request_id: str, note: str | None = None) -> Entry:
        """Re-adjudicate the same words, by someone other than the original adjudicator (WESPA 3.10.10)."""
        parent = self._parent(principal, parent_id, "recheck")
        division = self._division_of(parent)
        return self._entry(
            principal, Kind.RECHECK, division, parent.table, parent.round, parent.words_typed, parent.words,
            request_id, parent=parent, note=check_note(note),
        )  # fmt: skip

    def reissue(
        self, principal: Principal, parent_id: int, *, words: str | Sequence[str], reason: str, request_id: str
    ) -> Entry:
        """Adjudicate corrected words for a slip that did not match the board (WESPA 3.10.11)."""
        parent = self._parent(principal, parent_id, "reissue")
        division = self._division_of(parent)
        typed, normalised = self.checked_words(division, words)
        return self._entry(
            principal, Kind.REISSUE, division, parent.table, parent.round, typed, normalised, request_id,
            parent=parent, note=check_note(reason, required="reason"),
        )  # fmt: skip

    def ruling(self, principal: Principal, parent_id: int, *, verdict: Verdict, note: str, request_id: str) -> Entry:
        """The TD's final ruling on a challenge (typically after a disagreeing re-adjudication)."""
        principal.require_td("error.td_only.ruling")
        parent = self.get_record(parent_id)
        if parent.kind is Kind.RULING:
            raise InvalidInput("error.record.ruling_on_ruling", id=str(parent_id))
        if parent.kind is Kind.CHANGE:
            raise InvalidInput("error.record.no_verdict", id=str(parent_id), kind=parent.kind.value)
        self._require_other_adjudicator(principal, parent, "ruling")
        division = self._division_of(parent)
        acceptable = verdict is Verdict.ACCEPTABLE
        return Entry(
            kind=Kind.RULING,
            parent_id=parent.id,
            event=self.event.name,
            division=parent.division,
            round=parent.round,
            table=parent.table,
            actor=principal.actor,
            channel=principal.channel,
            words_typed=parent.words_typed,
            words=parent.words,
            lexicon=parent.lexicon,
            fingerprint=parent.fingerprint,
            verdict=verdict,
            results=(),
            rule=division.rule.value,
            consequence=consequence(division.rule, acceptable, len(parent.words)).as_dict(),
            request_id=check_request_id(request_id),
            agrees=verdict == parent.verdict,
            note=check_note(note, required="ruling"),
        )

    def get_record(self, record_id: int) -> Record:
        """The record with that id. Raises :class:`NotFound`."""
        record = self.audit.get(record_id)
        if record is None:
            raise NotFound("error.record.not_found", id=str(record_id))
        return record

    def _parent(self, principal: Principal, parent_id: int, action: str) -> Record:
        """The record to re-adjudicate (``action`` ``recheck``) or reissue (``reissue``): a challenge or a
        reissue that ``principal``, the TD, did not adjudicate. Raises :class:`Forbidden`, :class:`NotFound`,
        :class:`InvalidInput`."""
        principal.require_td(_TD_ONLY[action])
        parent = self.get_record(parent_id)
        if parent.kind not in (Kind.CHALLENGE, Kind.REISSUE):
            raise InvalidInput(_NOT_A_CHALLENGE[action], id=str(parent_id), kind=kind_message(parent.kind))
        self._require_other_adjudicator(principal, parent, action)
        return parent

    def _require_other_adjudicator(self, principal: Principal, record: Record, action: str) -> None:
        """Raise :class:`Forbidden` if ``principal`` adjudicated ``record`` or a record it comes from (``action``:
        ``recheck``, ``reissue`` or ``ruling``, for the refusal)."""
        originals = {record.actor}
        ancestor = record
        while ancestor.parent_id is not None:
            ancestor = self.get_record(ancestor.parent_id)
            originals.add(ancestor.actor)
        if principal.actor in originals:
            raise Forbidden(_SOMEONE_ELSE[action], actor=principal.actor, id=str(record.id))

    def _division_of(self, record: Record) -> Division:
        try:
            return self.event.division(record.division)
        except InvalidInput:
            raise InvalidInput("error.record.division_gone", id=str(record.id), division=record.division) from None


def record_view(record: Record, principal: Principal, audit: AuditLog | None = None) -> dict[str, Any]:
    """What ``principal`` may see of ``record``: never the per-word results unless it is the TD.

    Raises :class:`NotFound` if a device asks for a record it did not submit.
    """
    principal.require_may_see(record)  # a guard: handlers check first, with an explicit call
    view = verdict_view(record)
    if principal.is_td:
        view |= {
            "actor": record.actor,
            "channel": record.channel,
            "words_typed": list(record.words_typed),
            "results": list(record.results),
            "note": record.note,
            "software_version": record.software_version,
            "prev_hash": record.prev_hash,
            "hash": record.hash,
        }
        if audit is not None:
            view["children"] = [child.id for child in audit.children(record.id)]
    return view


def verdict_view(record: Record) -> dict[str, Any]:
    """What anyone allowed to see ``record`` may see: the verdict, never the per-word results (dockets too).

    The consequence is the stored one (its English ``text``) with its ``message``; ``kind_message``,
    ``verdict_message`` and ``rule_message`` say the kind, verdict and rule in words: each a catalogue key
    and its parameters, for screens to say in the event's language.
    """
    if record.verdict is None:
        return change_view(record)
    acceptable = record.verdict is Verdict.ACCEPTABLE
    said = _consequence_said(record.rule, acceptable, len(record.words), str(record.consequence.get("text", "")))
    return {
        "id": record.id,
        "kind": record.kind.value,
        "parent_id": record.parent_id,
        "created_at": record.created_at,
        "event": record.event,
        "division": record.division,
        "round": record.round,
        "table": record.table,
        "words": list(record.words),
        "word_count": len(record.words),
        "repeated": repeated(record.words),
        "verdict": record.verdict.value,
        "lexicon": record.lexicon,
        "fingerprint": record.fingerprint,
        "rule": record.rule,
        "consequence": {**record.consequence, "message": said.as_dict()},
        "kind_message": kind_message(record.kind).as_dict(),
        "verdict_message": verdict_message(record.verdict).as_dict(),
        "rule_message": ChallengeRule(record.rule).message.as_dict() if record.rule in _RULES else None,
        "agrees": record.agrees,
        "request_id": record.request_id,
        # A record's hash is safe to show only when salted (records.Record.salt); a record from before salts
        # existed could be brute-forced back to its per-word results.
        "hash": record.hash if record.hash_is_public else None,
    }


def change_view(record: Record) -> dict[str, Any]:
    """A change record as the console shows it: who changed what, before and after; no words, no verdict."""
    return {
        "id": record.id, "kind": record.kind.value, "parent_id": None, "created_at": record.created_at,
        "event": record.event, "division": record.division, "round": None, "table": "", "words": [],
        "word_count": 0, "repeated": [], "verdict": None, "lexicon": "", "fingerprint": "", "rule": "",
        "consequence": None, "kind_message": kind_message(record.kind).as_dict(), "verdict_message": None,
        "rule_message": None, "agrees": None, "request_id": record.request_id, "change": record.change,
        "change_message": describe(record.change or {}).as_dict(), "actor": record.actor,
        "hash": record.hash if record.hash_is_public else None,
    }  # fmt: skip


@lru_cache(maxsize=1024)
def _consequence_said(rule: str, acceptable: bool, word_count: int, text: str) -> Message:
    """:func:`stored_consequence_message` for a stored consequence's text, worked out once per kind of verdict
    (it renders the catalogue's text to compare it with the stored one: a tenth of an answer's time)."""
    return stored_consequence_message(rule, acceptable, word_count, {"text": text})
