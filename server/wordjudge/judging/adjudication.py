"""Adjudication: one verdict for a multi-word challenge, and the records that follow it.

A challenge is 1 to 8 words (one play forms at most 8), each 2 to 15 letters (the
board is 15 wide), in the letters of the division's lexicon. It is acceptable only if
every word is (WESPA 3.10.2, ABSP 4.10.6, ASPA 10.10); players are told the one verdict,
never which word failed. The per-word results are recorded for the TD.

After a challenge come, as linked records: a re-adjudication of the same words by
someone other than the original adjudicator (WESPA 3.10.10), a reissue with corrected
words and a reason (3.10.11), and the TD's ruling where the two disagree.

This module builds the records; :mod:`wordjudge.log.audit` stores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wordjudge.base.errors import AmbiguousTiles, Forbidden, InvalidInput, NotFound, ProfileError
from wordjudge.model.input_rules import (
    MAX_LETTERS,
    MAX_WORDS,
    MIN_LETTERS,
    check_note,
    check_round,
    check_table,
    split_words,
)
from wordjudge.model.records import Entry, Kind, Record, Verdict, check_request_id, kind_message
from wordjudge.model.rules import consequence
from wordjudge.words.tile_readings import read_typed

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.model.auth import Principal
    from wordjudge.tournament.event import Division, Event
    from wordjudge.words.profile import Profile

# What the TD may do to a record, and how each is refused.
_TD_ONLY = {"recheck": "error.td_only.recheck", "reissue": "error.td_only.reissue"}
_NOT_A_CHALLENGE = {
    "recheck": "error.record.recheck_not_a_challenge",
    "reissue": "error.record.reissue_not_a_challenge",
}
_SOMEONE_ELSE = {
    "recheck": "error.record.someone_else_recheck",
    "reissue": "error.record.someone_else_reissue",
    "ruling": "error.record.someone_else_ruling",
}


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
        profile = self.profiles[division.lexicon]
        readings = read_typed(profile, typed)
        asked = [reading.asked(profile) for reading in readings if reading.chosen is None]
        if asked:
            # Which words are asked about follows from their letters and the tile set alone (nothing was looked
            # up): the question tells nothing of any word's validity, nor which word would decide the verdict.
            raise AmbiguousTiles(
                "error.words.ambiguous_tiles",
                positions=", ".join(str(word["position"]) for word in asked),
                choices="; ".join(f"{word['typed']!r}: {' or '.join(word['stated'])}" for word in asked),
                details=asked,
            )
        return typed, [reading.chosen for reading in readings if reading.chosen is not None]

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
            principal,
            Kind.CHALLENGE,
            chosen,
            check_table(table, self.event),
            check_round(round_number, self.event),
            typed,
            normalised,
            request_id,
        )

    def recheck(self, principal: Principal, parent_id: int, *, request_id: str, note: str | None = None) -> Entry:
        """Re-adjudicate the same words, by someone other than the original adjudicator (WESPA 3.10.10)."""
        parent = self._parent(principal, parent_id, "recheck")
        division = self._division_of(parent)
        return self._entry(
            principal,
            Kind.RECHECK,
            division,
            parent.table,
            parent.round,
            parent.words_typed,
            parent.words,
            request_id,
            parent=parent,
            note=check_note(note),
        )

    def reissue(
        self, principal: Principal, parent_id: int, *, words: str | Sequence[str], reason: str, request_id: str
    ) -> Entry:
        """Adjudicate corrected words for a slip that did not match the board (WESPA 3.10.11)."""
        parent = self._parent(principal, parent_id, "reissue")
        division = self._division_of(parent)
        typed, normalised = self.checked_words(division, words)
        return self._entry(
            principal,
            Kind.REISSUE,
            division,
            parent.table,
            parent.round,
            typed,
            normalised,
            request_id,
            parent=parent,
            note=check_note(reason, required="reason"),
        )

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
