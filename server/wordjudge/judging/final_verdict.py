"""A challenge's final verdict: what stands after every re-check, reissue and ruling linked to it.

Records link to the record they follow (``parent_id``); a challenge and every record below it are
its *family*. Read in the order they were written (ids), the family's records settle the verdict so:

- a **ruling** is the TD's final word (WESPA 3.10.10 c): its verdict stands, whatever it ruled on;
- a **reissue** adjudicates corrected words instead of the slip's (3.10.11): its verdict stands, on
  its words, and what was said of the old words no longer counts;
- a **re-check** of the words that count now (the challenge's, or the latest reissue's) that agrees
  with the adjudication it repeats confirms it (3.10.10 c: it is final), but never overturns a ruling;
  one that disagrees leaves the challenge without a final verdict until the TD rules (or the words
  are reissued), as the console's "needs a ruling" says. A re-check of words a reissue has replaced
  changes nothing.

:func:`settle` works on records already read (for lists and exports); :func:`final_verdict` reads a
record's family from the audit log first. Neither says anything of per-word results.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar
from weakref import WeakKeyDictionary

from wordjudge.base.errors import NotFound
from wordjudge.model.records import Kind, Record, Verdict, kind_message, verdict_message, verdict_of
from wordjudge.model.rules import stored_consequence_message

if TYPE_CHECKING:
    from wordjudge.base.errors import Message
    from wordjudge.log.audit import AuditLog


@lru_cache(maxsize=1024)
def _consequence_said(rule: str, acceptable: bool, word_count: int, text: str) -> Message:
    """:func:`stored_consequence_message` for a stored consequence's text (all it reads of it), worked out once per
    kind of verdict: it renders the catalogue's text to compare, half of a "needs a ruling" page's time."""
    return stored_consequence_message(rule, acceptable, word_count, {"text": text})


@dataclass(frozen=True)
class Step:
    """One record of a challenge's family, as it bears on the final verdict (never its per-word results)."""

    kind: Kind
    id: int
    parent_id: int | None
    verdict: Verdict
    agrees: bool | None  # a re-check, reissue or ruling: the same verdict as its parent?
    actor: str  # who made it: the TD for a re-check, reissue or ruling
    created_at: str
    words: tuple[str, ...]
    # What the verdict means for the play (rules.Consequence.as_dict, as stored) with its ``message``, for
    # screens to say in the event's language.
    consequence: dict[str, Any]

    @classmethod
    def of(cls, record: Record) -> Step:
        verdict = verdict_of(record)  # a family holds adjudications only: never a change record
        text = str(record.consequence.get("text", ""))
        said = _consequence_said(record.rule, verdict is Verdict.ACCEPTABLE, len(record.words), text)
        return cls(
            kind=record.kind,
            id=record.id,
            parent_id=record.parent_id,
            verdict=verdict,
            agrees=record.agrees,
            actor=record.actor,
            created_at=record.created_at,
            words=record.words,
            consequence={**record.consequence, "message": said.as_dict()},
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "id": self.id,
            "parent_id": self.parent_id,
            "verdict": self.verdict.value,
            "agrees": self.agrees,
            "actor": self.actor,
            "created_at": self.created_at,
            "words": list(self.words),
            "consequence": self.consequence,
            "kind_message": kind_message(self.kind).as_dict(),
            "verdict_message": verdict_message(self.verdict).as_dict(),
        }


@dataclass(frozen=True)
class FinalVerdict:
    """What a challenge finally came to.

    ``verdict`` is None while a re-check disagrees and the TD has not ruled (``awaiting_ruling`` is that
    re-check); otherwise ``decided_by`` is the record whose verdict stands: the challenge itself, a
    re-check that confirmed it, a reissue or a ruling. ``words`` are the words it is on (a reissue's
    corrected words). ``steps`` is the whole family, the challenge first, in the order written.
    """

    challenge: Step
    verdict: Verdict | None
    decided_by: Step | None
    awaiting_ruling: Step | None
    words: tuple[str, ...]
    steps: tuple[Step, ...]

    @property
    def linked(self) -> tuple[Step, ...]:
        """The re-checks, reissues and rulings after the challenge, in the order written."""
        return self.steps[1:]

    @property
    def changed(self) -> bool:
        """Whether anything after the challenge changed its verdict or words (or left it awaiting a ruling)."""
        return self.verdict != self.challenge.verdict or self.words != self.challenge.words

    def as_dict(self) -> dict[str, Any]:
        return {
            "challenge_id": self.challenge.id,
            "verdict": self.verdict.value if self.verdict else None,
            "verdict_message": verdict_message(self.verdict).as_dict() if self.verdict else None,
            "decided_by": self.decided_by.as_dict() if self.decided_by else None,
            "awaiting_ruling": self.awaiting_ruling.as_dict() if self.awaiting_ruling else None,
            "words": list(self.words),
            "changed": self.changed,
            "linked": [step.as_dict() for step in self.linked],
        }


class _Linked(Protocol):
    """What deciding a family reads of each of its records."""

    @property
    def kind(self) -> Kind: ...
    @property
    def id(self) -> int: ...
    @property
    def parent_id(self) -> int | None: ...
    @property
    def verdict(self) -> Verdict: ...
    @property
    def agrees(self) -> bool | None: ...


L = TypeVar("L", bound=_Linked)


def _decide(steps: Sequence[L]) -> tuple[L | None, L, L | None]:
    """The rules of the module's docstring on a family in the order written, the challenge first: the step whose
    verdict stands (None while awaiting a ruling), the step whose words count now, and the re-check awaiting a
    ruling (or None)."""
    decided: L | None = steps[0]
    current = steps[0]  # the record whose words count now: the challenge, or the latest reissue
    awaiting: L | None = None
    for step in steps[1:]:
        if step.kind in (Kind.RULING, Kind.REISSUE):
            decided, awaiting = step, None
            if step.kind is Kind.REISSUE:
                current = step
        elif step.kind is Kind.RECHECK and step.parent_id == current.id:
            if not step.agrees:
                decided, awaiting = None, step
            elif decided is not None and decided.kind is not Kind.RULING:
                decided = step  # confirms the words' adjudication; never overturns the TD's ruling
    return decided, current, awaiting


def settle(family: Sequence[Record]) -> FinalVerdict:
    """The final verdict of a challenge from its family: the challenge and every record linked below it, in any
    order (see the module's docstring for the rules).

    Raises :class:`ValueError` if ``family`` is not one challenge's family (no challenge, two, or a record
    whose parent is not in it).
    """
    records = sorted(family, key=lambda record: record.id)
    if not records or records[0].parent_id is not None or records[0].kind is not Kind.CHALLENGE:
        raise ValueError("a family starts with its challenge: a record without a parent")
    members = {records[0].id}
    for record in records[1:]:
        if record.parent_id not in members:
            raise ValueError(f"record {record.id} does not follow a record of challenge {records[0].id}'s family")
        members.add(record.id)
    steps = tuple(Step.of(record) for record in records)
    decided, current, awaiting = _decide(steps)
    return FinalVerdict(
        challenge=steps[0],
        verdict=decided.verdict if decided else None,
        decided_by=decided,
        awaiting_ruling=awaiting,
        words=decided.words if decided else current.words,  # a ruling carries the words it ruled on
        steps=steps,
    )


def final_verdict(audit: AuditLog, record_id: int) -> FinalVerdict:
    """The final verdict of the challenge record ``record_id`` belongs to (itself, or the challenge its
    re-check, reissue or ruling follows), after every record linked to it so far.

    Raises :class:`NotFound` if there is no such record, :class:`InvalidInput` (``error.record.no_verdict``)
    for a change record (it has no verdict, and belongs to no challenge).
    """
    record = audit.get(record_id)
    if record is None:
        raise NotFound("error.record.not_found", id=str(record_id))
    verdict_of(record)
    while record.parent_id is not None:
        parent = audit.get(record.parent_id)
        if parent is None:  # the chain check refuses such a log; say so rather than guess
            raise NotFound("error.record.parent_missing", id=str(record.id), parent=str(record.parent_id))
        record = parent
    return final_verdicts(audit, [record])[record.id]


def final_verdicts(audit: AuditLog, records: Sequence[Record]) -> dict[int, FinalVerdict]:
    """The final verdict of each challenge among ``records`` (a page of a list), by its id; other kinds are
    left out (their challenge is listed on its own). Reads the challenges' linked records a generation at a time
    (indexed: one read for a page's children, one for their children...), not a challenge at a time."""
    families = {record.id: [record] for record in records if record.kind is Kind.CHALLENGE}
    challenge_of = {challenge_id: challenge_id for challenge_id in families}  # each record read: its challenge
    unread = list(families)
    while unread:
        children = audit.children_of(unread)
        unread = []
        for child in children:
            challenge_id = challenge_of[child.parent_id] if child.parent_id is not None else child.id
            families[challenge_id].append(child)
            challenge_of[child.id] = challenge_id
            unread.append(child.id)
    return {challenge_id: settle(family) for challenge_id, family in families.items()}


def finals_of_linked(audit: AuditLog, records: Sequence[Record]) -> list[FinalVerdict]:
    """The final verdict, as it is now, of each challenge that a re-check, reissue or ruling among ``records``
    (new records, in any order) belongs to: once a challenge, in the order of its first such record."""
    finals: dict[int, FinalVerdict] = {}
    for record in sorted(records, key=lambda record: record.id):
        if record.parent_id is None:
            continue
        final = final_verdict(audit, record.id)
        finals.setdefault(final.challenge.id, final)
    return list(finals.values())


# -- final verdicts in the summary ------------------------------------------------------------------------------

# Every record that may make a final verdict differ from the first (a ruling, a reissue, a re-check that
# disagrees: few, found through the kind index and the disagreements' partial index), with the challenge it
# belongs to (its parents climbed: one read for most, the challenge being the parent), for the challenges of
# :event. An agreeing re-check never changes the verdict (it confirms it), so these decide each family.
_EVERY_TURN = """WITH RECURSIVE
turns(id, parent_id, kind, verdict) AS (
    SELECT id, parent_id, kind, verdict FROM records INDEXED BY records_kind WHERE kind IN ('ruling', 'reissue')
    UNION ALL SELECT id, parent_id, kind, verdict FROM records INDEXED BY records_disagreements
    WHERE kind = 'recheck' AND agrees = 0
),
climb(id, parent_id, kind, verdict, at, next, at_kind, at_verdict, division, round, event) AS (
    SELECT t.id, t.parent_id, t.kind, t.verdict, p.id, p.parent_id, p.kind, p.verdict, p.division, p.round, p.event
    FROM turns t JOIN records p ON p.id = t.parent_id
    UNION ALL SELECT c.id, c.parent_id, c.kind, c.verdict, r.id, r.parent_id, r.kind, r.verdict, r.division, r.round,
        r.event
    FROM climb c JOIN records r ON r.id = c.next WHERE c.next IS NOT NULL
)
SELECT at, at_verdict, division, round, id, parent_id, kind, verdict FROM climb
WHERE next IS NULL AND at_kind = 'challenge' AND event = :event"""
# The whole families of the challenges of :event that such a record written after :after belongs to (a range of
# the newest ids): each record with its challenge's id, verdict, division and round.
_FAMILIES_TURNED_AFTER = """WITH RECURSIVE
turns(id) AS (
    SELECT id FROM records WHERE id > :after AND (kind IN ('ruling', 'reissue') OR (kind = 'recheck' AND agrees = 0))
),
up(id, parent_id) AS (
    SELECT r.id, r.parent_id FROM turns JOIN records r ON r.id = turns.id
    UNION SELECT r.id, r.parent_id FROM up JOIN records r ON r.id = up.parent_id
),
family(challenge_id, first, division, round, id, parent_id, kind, verdict, agrees) AS (
    SELECT c.id, c.verdict, c.division, c.round, c.id, CAST(NULL AS BIGINT), c.kind, c.verdict, CAST(NULL AS INTEGER)
    FROM records c
    WHERE c.id IN (SELECT id FROM up WHERE parent_id IS NULL) AND c.kind = 'challenge' AND c.event = :event
    UNION ALL SELECT f.challenge_id, f.first, f.division, f.round, r.id, r.parent_id, r.kind, r.verdict, r.agrees
    FROM family f JOIN records r INDEXED BY records_parent ON r.parent_id = f.id
)
SELECT challenge_id, first, division, round, id, parent_id, kind, verdict, agrees FROM family
WHERE id != challenge_id"""


def _in_dialect(audit: AuditLog, sql: str) -> str:
    """``sql`` as the log's database takes it: PostgreSQL has no index hints (its planner picks the same indexes)."""
    return audit.dialect.text.hinted(sql)


class _Turn(NamedTuple):
    id: int
    parent_id: int | None
    kind: Kind
    verdict: Verdict
    agrees: bool | None


@dataclass(frozen=True)
class Correction:
    """A challenge whose final verdict is not its first: ``final`` is None while it awaits the TD's ruling."""

    challenge_id: int
    division: str
    round: int | None
    first: Verdict
    final: Verdict | None


# By value, without Enum's call (a third of the time of tens of thousands of rows).
_KINDS = {kind.value: kind for kind in Kind}
_VERDICTS = {verdict.value: verdict for verdict in Verdict}


def read_corrections(audit: AuditLog, event: str, after_id: int | None = None) -> dict[int, Correction | None]:
    """Decide the families of ``event``'s challenges that hold a ruling, a reissue or a disagreeing re-check (only
    those with such a record written after ``after_id``, if given): by challenge id, its :class:`Correction`, or
    None where the final verdict is the first after all (a ruling that upheld it). Never reads a record's body."""
    if after_id is None:
        turns = audit.select(_in_dialect(audit, _EVERY_TURN), {"event": event})
        rows = [(*row, None if row[6] != Kind.RECHECK else 0) for row in turns]
    else:
        rows = audit.select(_in_dialect(audit, _FAMILIES_TURNED_AFTER), {"event": event, "after": after_id})
    families: dict[int, list[_Turn]] = {}
    places: dict[int, tuple[str, int | None]] = {}
    for challenge_id, first, division, round_number, record_id, parent_id, kind, verdict, agrees in rows:
        if challenge_id not in families:
            families[challenge_id] = [_Turn(challenge_id, None, Kind.CHALLENGE, _VERDICTS[first], None)]
            places[challenge_id] = (division, round_number)
        turn = _Turn(record_id, parent_id, _KINDS[kind], _VERDICTS[verdict], None if agrees is None else bool(agrees))
        families[challenge_id].append(turn)
    decided: dict[int, Correction | None] = {}
    for challenge_id, family in families.items():
        family.sort()  # by id: the order written, the challenge first
        by, _, _ = _decide(family)
        first, final = family[0].verdict, by.verdict if by else None
        division, round_number = places[challenge_id]
        changed = final != first
        decided[challenge_id] = Correction(challenge_id, division, round_number, first, final) if changed else None
    return decided


@dataclass
class _Kept:
    upto: int = 0  # every record up to this id is decided in `found`
    found: dict[int, Correction] = field(default_factory=dict)
    # `found` summed by division and round (round_key 0: none), as the summary's tallies are kept: how many
    # more (or fewer) acceptable, awaiting a ruling, overturned.
    sums: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    awaiting: set[int] = field(default_factory=set)  # the challenges of `found` awaiting a ruling

    def keep(self, challenge_id: int, correction: Correction | None) -> None:
        """Note ``challenge_id``'s correction as it is now (None: its final verdict is its first), in the sums too."""
        old = self.found.pop(challenge_id, None)
        if old is not None:
            self._add(old, -1)
        if correction is not None:
            self.found[challenge_id] = correction
            self._add(correction, 1)

    def _add(self, correction: Correction, sign: int) -> None:
        if correction.final is None:
            (self.awaiting.add if sign > 0 else self.awaiting.discard)(correction.challenge_id)
        sums = self.sums.setdefault((correction.division, correction.round or 0), [0, 0, 0])
        sums[0] += sign * ((correction.final is Verdict.ACCEPTABLE) - (correction.first is Verdict.ACCEPTABLE))
        sums[1] += sign * (correction.final is None)
        sums[2] += sign * (correction.final is not None)


# Per audit log and event, kept up to date as the log grows: a summary reads the whole set once, then only the
# rulings, reissues and disagreeing re-checks written since (a range of the newest ids).
_KEPT: WeakKeyDictionary[AuditLog, dict[str, _Kept]] = WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


def corrections(audit: AuditLog, event: str) -> dict[int, Correction]:
    """The challenges of ``event`` whose final verdict is not the verdict first given (what the summary's tallies,
    kept at each insert, counted), by challenge id: :func:`read_corrections` once, then kept up to date with the
    records written since."""
    with _KEPT_LOCK:
        return dict(_kept(audit, event).found)


def correction_sums(audit: AuditLog, event: str) -> dict[tuple[str, int], tuple[int, int, int]]:
    """:func:`corrections` summed by division and round (round 0: none): how many more (or fewer) of their
    challenges are acceptable, awaiting a ruling and overturned than the summary's tallies counted. What the
    summary of the event, a division or a round reads: a few sums at any size, not thousands of corrections."""
    with _KEPT_LOCK:
        return {place: (sums[0], sums[1], sums[2]) for place, sums in _kept(audit, event).sums.items()}


def _kept(audit: AuditLog, event: str) -> _Kept:
    """``event``'s corrections, brought up to the log's head (under ``_KEPT_LOCK``)."""
    kept = _KEPT.setdefault(audit, {}).setdefault(event, _Kept())
    head = audit.head.id or 0
    if head > kept.upto or not kept.upto:
        for challenge_id, correction in read_corrections(audit, event, kept.upto or None).items():
            kept.keep(challenge_id, correction)
        kept.upto = head
    return kept


def awaiting_ruling(audit: AuditLog, event: str) -> frozenset[int]:
    """The ids of ``event``'s challenges whose final verdict awaits the TD's ruling: a re-check of the words that
    count disagreed and no ruling or reissue came after it (the module's rules, on each whole family). What the
    console's "needs a ruling" queue and the ``needs_ruling`` filter list."""
    with _KEPT_LOCK:
        return frozenset(_kept(audit, event).awaiting)


# -- final verdicts in exports ----------------------------------------------------------------------------------

# Every record that follows another (re-checks, reissues, rulings: few), read once for an export, through the
# parent index: SQLite's planner would scan the whole log for them (0.40 s against 0.15 s at 1 M records).
_LINKED = (
    "SELECT id, parent_id, kind, verdict, agrees FROM records INDEXED BY records_parent"
    " WHERE parent_id IS NOT NULL ORDER BY id"
)


@dataclass(frozen=True)
class Decision:
    """What an export says of a challenge's final verdict: the verdict (None while awaiting the TD's ruling), what
    gave it (``original``, ``recheck``, ``reissue``, ``ruling``; ``awaiting_ruling`` while none has), and the id
    of the record that gave it."""

    verdict: Verdict | None
    source: str
    record_id: int | None


LinkedFamilies = dict[int, list[_Turn]]  # by challenge id, the records that follow it


def linked_families(audit: AuditLog) -> LinkedFamilies:
    """The re-checks, reissues and rulings of the whole log, by the id of the challenge each belongs to (its
    parents climbed), in the order written: what :func:`decision` needs beside the challenge itself."""
    rows = audit.select(_in_dialect(audit, _LINKED))
    parent = {row[0]: row[1] for row in rows}
    families: LinkedFamilies = {}
    for record_id, parent_id, kind, verdict, agrees in rows:
        top = parent_id
        while top in parent:  # a ruling on a re-check: climb to the challenge
            top = parent[top]
        turn = _Turn(record_id, parent_id, _KINDS[kind], _VERDICTS[verdict], None if agrees is None else bool(agrees))
        families.setdefault(top, []).append(turn)
    return families


def decision(challenge: Record, linked: Sequence[_Turn]) -> Decision:
    """The final verdict of ``challenge`` after ``linked`` (its family's other records, from
    :func:`linked_families`), by the module's rules."""
    first = _Turn(challenge.id, None, Kind.CHALLENGE, verdict_of(challenge), None)
    by, _, _ = _decide([first, *sorted(linked)])
    if by is None:
        return Decision(None, "awaiting_ruling", None)
    return Decision(by.verdict, "original" if by.kind is Kind.CHALLENGE else by.kind.value, by.id)
