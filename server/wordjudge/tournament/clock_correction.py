"""The TD's acceptance of the clock's correction: record times held for a clock set back follow the clock again.

While the clock reads earlier than the log's last record, record times are held at that record's
(:func:`wordjudge.base.clock.record_time`): for a clock a year ahead, then set right, a year. Past
:data:`~wordjudge.base.clock.HOLD_BOUND_S` the server asks the TD (a health warning and an alert, whose console
action is "Accept the clock's correction"; ``wordjudge audit accept-clock`` at the command line) to accept it: a
change record of what :data:`~wordjudge.base.clock.CORRECTED`, saying from what time (the held one) to what time
(the clock's), dated by the clock, before the record it follows. It is the one record an honest writer dates back,
and the chain check accepts it as that, strictly (:func:`wordjudge.base.clock.corrected_time`): the record's
``before`` time is its predecessor's and its ``after`` time its own. Records after it follow the clock.
Nothing here imports the web framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from wordjudge.base.clock import CORRECTED, TOLERANCE_S, seconds_of
from wordjudge.base.errors import Message
from wordjudge.base.messages import duration
from wordjudge.log.chain import read_head
from wordjudge.tournament.changes import Change, change_entry

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.model.records import Entry, Record
    from wordjudge.storage.postgres import AnyConnection


def accept_correction(log: AuditLog, *, server: str, actor: str, channel: str) -> Record | Message:
    """Put ``actor``'s acceptance of the clock's correction on record in ``log`` (started) for the clock of
    ``server`` (its URL or host name), through ``channel``, weighed in the append's own transaction: only while
    record times are held more than the tolerance ahead of the clock (else the refusal
    ``error.clock.nothing_held``, and nothing is written). Returns the record. Raises
    :class:`~wordjudge.base.errors.AuditUnavailable`."""
    refused: list[Message] = []

    def decide(connection: AnyConnection) -> Entry | None:
        head, now = read_head(connection), log.clock()
        held, clock = seconds_of(head.time), seconds_of(now)
        if head.id is None or held is None or clock is None or held - clock <= TOLERANCE_S:
            refused.append(Message("error.clock.nothing_held", time=head.time or "-", now=now))
            return None
        before, after = {"time": head.time}, {"time": now, "seconds": round(clock - held, 3)}
        record = log.get(head.id)
        event = record.event if record is not None else ""
        return change_entry(Change(CORRECTED, server, "", before, after), actor=actor, event=event, channel=channel)

    written = log.append_decided(decide)
    if written is None:
        return refused[-1]
    return written


def correction_said(record: Record, *, shown: Callable[[str], str] = str) -> Message:
    """What a command or the console says of an acceptance's ``record``: from what time to what time (each time as
    ``shown`` writes it), by whom."""
    change = record.change or {}
    held, now = (change.get("before") or {}).get("time", ""), (change.get("after") or {}).get("time", "")
    size = duration((seconds_of(now) or 0.0) - (seconds_of(held) or 0.0))
    said = {"held": shown(held), "time": shown(now), "size": size}
    return Message("cli.clock.corrected", id=str(record.id), **said, actor=record.actor)
