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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from .audit import AuditLog
from .errors import NotFound
from .records import Kind, Record, Verdict, kind_message, verdict_message
from .rules import stored_consequence_message


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
        acceptable = record.verdict is Verdict.ACCEPTABLE
        said = stored_consequence_message(record.rule, acceptable, len(record.words), record.consequence)
        return cls(
            kind=record.kind, id=record.id, parent_id=record.parent_id, verdict=record.verdict,
            agrees=record.agrees, actor=record.actor, created_at=record.created_at, words=record.words,
            consequence={**record.consequence, "message": said.as_dict()},
        )  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value, "id": self.id, "parent_id": self.parent_id, "verdict": self.verdict.value,
            "agrees": self.agrees, "actor": self.actor, "created_at": self.created_at, "words": list(self.words),
            "consequence": self.consequence, "kind_message": kind_message(self.kind).as_dict(),
            "verdict_message": verdict_message(self.verdict).as_dict(),
        }  # fmt: skip


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

    Raises :class:`NotFound` if there is no such record.
    """
    record = audit.get(record_id)
    if record is None:
        raise NotFound("error.record.not_found", id=str(record_id))
    while record.parent_id is not None:
        parent = audit.get(record.parent_id)
        if parent is None:  # the chain check refuses such a log; say so rather than guess
            raise NotFound("error.record.parent_missing", id=str(record.id), parent=str(record.parent_id))
        record = parent
    return final_verdicts(audit, [record])[record.id]


def final_verdicts(audit: AuditLog, records: Sequence[Record]) -> dict[int, FinalVerdict]:
    """The final verdict of each challenge among ``records`` (a page of a list), by its id; other kinds are
    left out (their challenge is listed on its own). Reads each challenge's linked records (indexed)."""
    finals = {}
    for record in records:
        if record.kind is not Kind.CHALLENGE:
            continue
        family, unread = [record], [record.id]
        while unread:
            children = audit.children(unread.pop())
            family += children
            unread += [child.id for child in children]
        finals[record.id] = settle(family)
    return finals


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

# The families a final verdict may differ from the first in: those holding a ruling, a reissue or a re-check that
# disagrees (few: found through the kind index and the disagreements' partial index), each record of them with
# its challenge's id, division and round; challenges of the event given only. Agreeing re-checks alone never
# change a verdict.
_TURNED_FAMILIES = """WITH RECURSIVE
turns(id) AS (
    SELECT id FROM records INDEXED BY records_kind WHERE kind IN ('ruling', 'reissue')
    UNION SELECT id FROM records INDEXED BY records_disagreements WHERE kind = 'recheck' AND agrees = 0
),
up(id, parent_id) AS (
    SELECT r.id, r.parent_id FROM turns JOIN records r ON r.id = turns.id
    UNION SELECT r.id, r.parent_id FROM up JOIN records r ON r.id = up.parent_id
),
family(id, challenge_id, division, round) AS (
    SELECT c.id, c.id, c.division, c.round FROM up JOIN records c ON c.id = up.id
    WHERE up.parent_id IS NULL AND c.kind = 'challenge' AND c.event = ?
    UNION ALL SELECT r.id, f.challenge_id, f.division, f.round
    FROM family f JOIN records r INDEXED BY records_parent ON r.parent_id = f.id
)
SELECT f.challenge_id, f.division, f.round, r.id, r.parent_id, r.kind, r.verdict, r.agrees
FROM family f JOIN records r ON r.id = f.id ORDER BY f.challenge_id, r.id"""


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


def corrections(audit: AuditLog, event: str) -> dict[int, Correction]:
    """The challenges of ``event`` whose final verdict is not the verdict first given (what the summary's tallies,
    kept at each insert, counted), by challenge id.

    Reads only the families that hold a ruling, a reissue or a disagreeing re-check, and of those records only
    the columns that decide (no record body is parsed)."""
    found: dict[int, Correction] = {}
    family: list[_Turn] = []
    place: tuple[int, str, int | None] = (0, "", None)

    def close() -> None:
        if not family:
            return
        decided, _, _ = _decide(family)
        final = decided.verdict if decided else None
        if final != family[0].verdict:
            found[place[0]] = Correction(place[0], place[1], place[2], family[0].verdict, final)
        family.clear()

    for challenge_id, division, round_number, *step in audit.select(_TURNED_FAMILIES, (event,)):
        if challenge_id != place[0]:
            close()
            place = (challenge_id, division, round_number)
        record_id, parent_id, kind, verdict, agrees = step
        family.append(
            _Turn(record_id, parent_id, Kind(kind), Verdict(verdict), None if agrees is None else bool(agrees))
        )
    close()
    return found
