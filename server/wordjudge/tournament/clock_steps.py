"""The TD's acceptance of a step back in time in a log written before record times were held.

Since :func:`wordjudge.base.clock.record_time`, an honest writer never dates a record before the record it follows,
and the chain check calls such a record a break. A log written before may hold one made by an honest clock
set back: ``wordjudge audit accept-clock-step ID`` puts the TD's acceptance of it on record (a change record,
in the chain), after which the chain check takes that very record's time as it is. Nothing else is accepted:
not a record altered, unlinked or out of place, nor a step on a chain broken elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wordjudge.base.clock import seconds_of
from wordjudge.base.errors import Message
from wordjudge.log.chain import STEP_ACCEPTED, record_stamp, verify_chain
from wordjudge.log.connections import missing_or_changed
from wordjudge.tournament.changes import Change, change_entry

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.model.records import Entry, Record
    from wordjudge.storage.postgres import AnyConnection

CHANNEL = "cli"  # the TD accepts a step at the server machine's command line


@dataclass(frozen=True)
class StepAcceptance:
    """A step back in time the TD may accept: record ``id`` (its ``hash``) dated ``time``, before ``previous``
    (the time of the record before it); ``others``: later records dated before their predecessor, each to be
    accepted in turn (the chain is otherwise intact)."""

    id: int
    hash: str
    time: str
    previous: str
    others: tuple[int, ...] = ()

    @property
    def seconds(self) -> float:
        """How far back the record is dated, in seconds (negative)."""
        return (seconds_of(self.time) or 0.0) - (seconds_of(self.previous) or 0.0)

    def change(self) -> Change:
        """The acceptance's change (``before``: the record before; ``after``: the one accepted, by its hash)."""
        return Change(
            STEP_ACCEPTED,
            str(self.id),
            "",
            {"id": self.id - 1, "time": self.previous},
            {"id": self.id, "time": self.time, "hash": self.hash, "seconds": round(self.seconds, 3)},
        )


def step_acceptance(connection: AnyConnection, record_id: int) -> StepAcceptance | Message:
    """Whether record ``record_id``, dated before the record it follows, may be accepted as a clock set back:
    only where the chain breaks first, for that reason alone, on a chain otherwise intact (later steps back
    aside, each accepted in turn). Returns what to put on record, or the refusal naming the real problem
    (``error.clock_step.*``). Raises what :func:`verify_chain` raises."""
    row = record_stamp(connection, record_id)
    if row is None:
        return Message("error.clock_step.no_record", id=str(record_id))
    checked = verify_chain(connection, deep=True, schema=missing_or_changed)
    if checked.ok:
        return Message("error.clock_step.verifies", id=str(record_id))
    if checked.first_bad_id != record_id:
        at = str(checked.first_bad_id) if checked.first_bad_id is not None else "?"
        return Message("error.clock_step.breaks_elsewhere", id=str(record_id), at=at, problem=checked.problem or "")
    if checked.problem is None or checked.problem.key != "chain.problem.time":
        return Message("error.clock_step.not_a_step", id=str(record_id), problem=checked.problem or "")
    accepting, others = {record_id: row[0]}, []
    while not (again := verify_chain(connection, accepting=accepting, schema=missing_or_changed)).ok:
        later = again.first_bad_id
        if later is None or again.problem is None or again.problem.key != "chain.problem.time" or later in accepting:
            at = str(later) if later is not None else "?"
            return Message("error.clock_step.also_broken", id=str(record_id), at=at, problem=again.problem or "")
        accepting[later] = (record_stamp(connection, later) or ("", ""))[0]
        others.append(later)
    previous = str(checked.problem.params["previous"])
    return StepAcceptance(record_id, row[0], row[1], previous, tuple(others))


def accept_step(log: AuditLog, record_id: int, *, actor: str) -> tuple[Record, StepAcceptance] | Message:
    """Put ``actor``'s acceptance of record ``record_id``'s time on record in ``log`` (started: a log that failed
    its check takes this append alone), weighed again in the append's own transaction. Returns the acceptance's
    record and what it accepts, or the refusal naming the real problem (nothing written then). Raises
    :class:`~wordjudge.base.errors.AuditUnavailable`."""
    found: list[StepAcceptance | Message] = []

    def decide(connection: AnyConnection) -> Entry | None:
        weighed = step_acceptance(connection, record_id)
        found.append(weighed)
        if isinstance(weighed, Message):
            return None
        accepted = log.get(record_id)
        event = accepted.event if accepted is not None else ""
        return change_entry(weighed.change(), actor=actor, event=event, channel=CHANNEL)

    written = log.append_decided(decide)
    weighed = found[-1]
    if isinstance(weighed, Message):
        return weighed
    assert written is not None  # an entry decided on is written, or the append raised
    return written, weighed
