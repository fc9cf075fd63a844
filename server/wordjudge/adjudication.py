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
from typing import Any

from .audit import AuditLog, check_request_id
from .auth import Principal
from .errors import Forbidden, InvalidInput, NotFound, ProfileError
from .event import Division, Event
from .input_rules import MAX_LETTERS, MAX_ROUND, MAX_WORDS, MIN_LETTERS, TABLE_PATTERNS, TABLE_RULES
from .profile import Profile
from .records import Entry, Kind, Record, Verdict
from .rules import consequence

MAX_NOTE = 500
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
        rule = TABLE_RULES[event.tables]
        raise InvalidInput(
            f"table {str(table)!r} is not a table number: the tables of {event.name} are {rule}",
            details=[{"field": "table", "message": f"must be {rule}"}],
        )
    return label


def check_round(round_number: int | None, event: Event | None = None) -> int | None:
    """A round number (1 to :data:`MAX_ROUND`), or None; required when ``event`` has rounds.

    Raises :class:`InvalidInput`."""
    if round_number is None and event is not None and event.rounds:
        current = f" (the current round is {event.current_round})" if event.current_round is not None else ""
        raise InvalidInput(
            f"round is missing: the challenges of {event.name} carry a round number: type the round{current}",
            details=[{"field": "round", "message": "required: this event's challenges carry a round number"}],
        )
    if round_number is not None and not (1 <= round_number <= MAX_ROUND):
        raise InvalidInput(f"round {round_number} is not a round number (1 to {MAX_ROUND})")
    return round_number


def check_note(note: str | None, *, required: str | None = None) -> str | None:
    """A free-text note or reason; ``required`` names it when it must be given."""
    text = (note or "").strip()
    if required and not text:
        raise InvalidInput(f"{required} is required")
    if len(text) > MAX_NOTE:
        raise InvalidInput(f"{required or 'the note'} is {len(text)} characters long; at most {MAX_NOTE}")
    return text or None


def repeated(words: Sequence[str]) -> list[str]:
    """Words that occur more than once, so the opponent can check the typing."""
    return [word for word, count in Counter(words).items() if count > 1]


class Adjudicator:
    """The adjudication service for one event: its divisions, their profiles, the audit log."""

    def __init__(self, event: Event, profiles: dict[str, Profile], audit: AuditLog) -> None:
        missing = [d.lexicon for d in event.divisions if d.lexicon not in profiles]
        if missing:
            raise ProfileError(f"the event's divisions use lexicons that are not loaded: {', '.join(missing)}")
        self.event = event
        self.profiles = profiles
        self.audit = audit

    def checked_words(self, division: Division, words: str | Sequence[str]) -> tuple[list[str], list[str]]:
        """The typed entries and their normalised words, checked against the input rules.

        Raises :class:`InvalidInput` naming the entry at fault, never saying whether any word is valid.
        """
        typed = split_words(words)
        if not typed:
            raise InvalidInput(f"no words: type the {MIN_LETTERS}-{MAX_LETTERS} letter words of the challenge")
        if len(typed) > MAX_WORDS:
            raise InvalidInput(f"{len(typed)} words: a challenge has 1 to {MAX_WORDS} words (a play forms at most 8)")
        normalised = self.profiles[division.lexicon].normalise_words(typed)
        for position, (entry, word) in enumerate(zip(typed, normalised, strict=True), start=1):
            if not (MIN_LETTERS <= len(word) <= MAX_LETTERS):
                raise InvalidInput(
                    f"word {position} {entry!r} has {len(word)} letter{'s' if len(word) != 1 else ''}: "
                    f"a challenged word has {MIN_LETTERS} to {MAX_LETTERS} letters"
                )
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
        parent = self._parent(principal, parent_id, "re-adjudicate")
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
            parent=parent, note=check_note(reason, required="the reason for the reissue"),
        )  # fmt: skip

    def ruling(self, principal: Principal, parent_id: int, *, verdict: Verdict, note: str, request_id: str) -> Entry:
        """The TD's final ruling on a challenge (typically after a disagreeing re-adjudication)."""
        principal.require_td("record a ruling")
        parent = self.get_record(parent_id)
        if parent.kind is Kind.RULING:
            raise InvalidInput(f"record {parent_id} is a ruling: rule on the challenge it settled")
        self._require_other_adjudicator(principal, parent, "rule on")
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
            note=check_note(note, required="the ruling's note"),
        )

    def get_record(self, record_id: int) -> Record:
        """The record with that id. Raises :class:`NotFound`."""
        record = self.audit.get(record_id)
        if record is None:
            raise NotFound(f"no record {record_id} in the audit log")
        return record

    def _parent(self, principal: Principal, parent_id: int, action: str) -> Record:
        principal.require_td(action)
        parent = self.get_record(parent_id)
        if parent.kind not in (Kind.CHALLENGE, Kind.REISSUE):
            raise InvalidInput(f"record {parent_id} is a {parent.kind.value}: {action} the challenge itself")
        self._require_other_adjudicator(principal, parent, action)
        return parent

    def _require_other_adjudicator(self, principal: Principal, record: Record, action: str) -> None:
        """Raise :class:`Forbidden` if ``principal`` adjudicated ``record`` or a record it comes from."""
        originals = {record.actor}
        ancestor = record
        while ancestor.parent_id is not None:
            ancestor = self.get_record(ancestor.parent_id)
            originals.add(ancestor.actor)
        if principal.actor in originals:
            raise Forbidden(
                f"{principal.actor} adjudicated record {record.id} (or the challenge it comes from): "
                f"someone else must {action} it"
            )

    def _division_of(self, record: Record) -> Division:
        try:
            return self.event.division(record.division)
        except InvalidInput:
            raise InvalidInput(
                f"record {record.id} is from division {record.division}, which this event no longer has"
            ) from None


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
            view["needs_ruling"] = audit.needs_ruling(record.id)
    return view


def verdict_view(record: Record) -> dict[str, Any]:
    """What anyone allowed to see ``record`` may see: the verdict, never the per-word results (dockets too)."""
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
        "consequence": record.consequence,
        "agrees": record.agrees,
        "request_id": record.request_id,
        # A record's hash is safe to show only when salted (records.Record.salt); a record from before salts
        # existed could be brute-forced back to its per-word results.
        "hash": record.hash if record.hash_is_public else None,
    }
