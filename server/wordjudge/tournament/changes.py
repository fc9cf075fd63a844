"""A TD's changes to the event, its TD accounts and its devices: worked out, weighed and put on the record.

Each change is a ``change`` record in the audit log, in the same hash chain as the challenges (so dockets'
heads and witnesses cover them too): who made it, what it concerns, and what it was before and after.
It is written through the log's single writer, committed, before the change is served: a change that
cannot be recorded is not made.

Some changes mid-event need the TD to confirm them: a division's lexicon or rule (WESPA 3.10.14(a): an
announced penalty may not be changed), or removing a division, once that division has a challenge on
record. :func:`preview` says what a new event would change, how many kiosks and handhelds serve each
division concerned and how many challenges it has on record, so that the console can ask first.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import AuditUnavailable, Conflict, Message
from wordjudge.base.messages import duration
from wordjudge.model.auth import Role
from wordjudge.model.records import Entry, Kind, Record
from wordjudge.model.rules import ChallengeRule
from wordjudge.tournament.event import EVENT_FILE, Division, Event

if TYPE_CHECKING:
    from wordjudge.access.devices import Device
    from wordjudge.log.audit import AuditLog

CHANNEL = "console"
# The changes that need the TD's confirmation once their division has a challenge on record.
DELIBERATE = ("division.lexicon", "division.rule", "division.removed")
# The event's own settings a change record names (the divisions are changes of their own).
_SETTINGS = ("name", "rounds", "challenges_per_minute", "kiosk_result_seconds", "tables", "language")
_SERVING = (Role.KIOSK, Role.RUNNER)
_RULES = {rule.value for rule in ChallengeRule}
# Every kind of change a record may name, and how it is said.
WHATS = {
    "event.settings": "change.event.settings",
    "division.added": "change.division.added",
    "division.removed": "change.division.removed",
    "division.name": "change.division.name",
    "division.lexicon": "change.division.lexicon",
    "division.rule": "change.division.rule",
    "td.added": "change.td.added",
    "td.disabled": "change.td.disabled",
    "device.revoked": "change.device.revoked",
    "device.repair_code": "change.device.repair_code",
}


@dataclass(frozen=True)
class Change:
    """One change: ``what`` (``division.rule``, ``td.added``...), what it concerns (``subject``: a division, TD
    or device name, or the event's), the division it concerns ("" for none) and its state before and after
    (None: it did not exist, or no longer does)."""

    what: str
    subject: str
    division: str = ""
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """What a change record stores (its ``change`` field)."""
        return {"what": self.what, "subject": self.subject, "before": self.before, "after": self.after}


def _division(division: Division) -> dict[str, Any]:
    return {"name": division.name, "lexicon": division.lexicon, "rule": division.rule.value}


def event_changes(old: Event, new: Event) -> list[Change]:
    """Every difference between the event served (``old``) and the one asked for (``new``), in order: the
    event's settings, then each division (matched by name whatever its case) changed, removed or added."""
    changes = []
    before = {key: getattr(old, key) for key in _SETTINGS if getattr(old, key) != getattr(new, key)}
    old_names = {d.name.casefold(): d for d in old.divisions}
    new_names = {d.name.casefold(): d for d in new.divisions}
    kept_old = [d.name for d in old.divisions if d.name.casefold() in new_names]
    kept_new = [new_names[d.name.casefold()].name for d in new.divisions if d.name.casefold() in old_names]
    after = {key: getattr(new, key) for key in before}
    if [n.casefold() for n in kept_old] != [n.casefold() for n in kept_new]:
        before["division_order"], after["division_order"] = kept_old, kept_new
    if before:
        changes.append(Change("event.settings", new.name, "", before, after))
    for key, was in old_names.items():
        now = new_names.get(key)
        if now is None:
            changes.append(Change("division.removed", was.name, was.name, _division(was), None))
            continue
        for field in ("name", "lexicon", "rule"):
            if getattr(was, field) != getattr(now, field):
                value = {field: getattr(was, field)}, {field: getattr(now, field)}
                changes.append(Change(f"division.{field}", now.name, now.name, *_plain(value)))
    for key, now in new_names.items():
        if key not in old_names:
            changes.append(Change("division.added", now.name, now.name, None, _division(now)))
    return changes


def _plain(pair: tuple[dict[str, Any], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Values as JSON keeps them (a rule's name, not the enum)."""
    return tuple({k: getattr(v, "value", v) for k, v in part.items()} for part in pair)  # type: ignore[return-value]


def challenges_by_division(audit: AuditLog, event: str) -> dict[str, int]:
    """Challenges of ``event`` on record per division (by name folded to lower case), from the counts kept with
    the log."""
    counts: dict[str, int] = {}
    for scope, division, _, challenges, _ in audit.tallies(event, top=0)[0]:
        if scope == 1:  # a division's count (0 is the whole event's, 2 a round's)
            counts[str(division).casefold()] = counts.get(str(division).casefold(), 0) + int(challenges)
    return counts


def serving(devices: Iterable[Device], division: str) -> dict[str, int]:
    """How many kiosks and handhelds, not revoked, serve ``division``: enrolled for it, or for every division."""
    counts = {role.value: 0 for role in _SERVING}
    for device in devices:
        mine = device.division is None or device.division.casefold() == division.casefold()
        if device.role in _SERVING and device.revoked_at is None and mine:
            counts[device.role.value] += 1
    return counts


@dataclass(frozen=True)
class Weighed:
    """A change with what it touches: the devices serving its division and the challenges on record there."""

    change: Change
    devices: dict[str, int] | None  # kiosk and runner counts; None for an event-wide change
    challenges: int | None
    needs_confirmation: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.change.as_dict(),
            "division": self.change.division or None,
            "devices": self.devices,
            "challenges": self.challenges,
            "needs_confirmation": self.needs_confirmation,
            "message": describe(self.change).as_dict(),
        }


def weigh(changes: Sequence[Change], audit: AuditLog, devices: Sequence[Device], *, event: str) -> list[Weighed]:
    """Each change with the devices serving its division, the challenges of ``event`` (the event served: its
    records bear its name) on record there, and whether the TD must confirm it (:data:`DELIBERATE`, with a
    challenge on record)."""
    recorded = challenges_by_division(audit, event) if changes else {}
    weighed = []
    for change in changes:
        if not change.division:
            weighed.append(Weighed(change, None, None, False))
            continue
        count = recorded.get(change.division.casefold(), 0)
        weighed.append(
            Weighed(change, serving(devices, change.division), count, change.what in DELIBERATE and count > 0)
        )
    return weighed


def require_confirmed(weighed: Sequence[Weighed], confirmed: bool) -> None:
    """Raise :class:`Conflict` (``error.event.confirm``, naming the first change) when a change needs the TD's
    confirmation and the request did not give it."""
    if confirmed:
        return
    for item in weighed:
        if item.needs_confirmation:
            raise Conflict(
                "error.event.confirm",
                change=describe(item.change),
                division=item.change.division,
                challenges=Message("change.challenges", n=item.challenges or 0),
                devices=Message("change.devices", n=sum((item.devices or {}).values())),
                details=[w.as_dict() for w in weighed],
            )


def describe(change: Change | dict[str, Any]) -> Message:
    """The change (or a change record's ``change``) in words (``change.<what>``): for the console, the CLI."""
    if isinstance(change, Change):
        change = change.as_dict()
    before, after = change.get("before") or {}, change.get("after") or {}
    what = str(change.get("what"))
    if what in _CLOCK:
        return _clock_change(what, change.get("subject"), before, after)
    named = not what.startswith("division.") or what in ("division.added", "division.removed")
    if what == "event.settings":  # each setting from its old value to its new one: "name: 10 -> 20, ..."
        said: str | Message = ""
        for key in reversed(list(after or before)):
            one = Message(
                "change.from_to",
                name=_name(key),
                before=_value(key, before.get(key)),
                after=_value(key, after.get(key)),
            )
            said = one if said == "" else Message("change.and", first=one, rest=said)
        return Message("change.event.settings", subject=str(change.get("subject", "")), changes=said)
    return Message(
        WHATS.get(what, "change.other"),
        subject=str(change.get("subject", "")),
        what=what,
        before=_said(before, named),
        after=_said(after, named),
    )


# The clock's own records (wordjudge.tournament.timekeeping) and the TD's acceptance of a step back
# (wordjudge.tournament.clock_steps).
_CLOCK = {
    "clock.stepped_back": "change.clock.stepped_back",
    "clock.jumped_forward": "change.clock.jumped_forward",
    "clock.behind_log": "change.clock.behind_log",
    "clock.step_accepted": "change.clock.step_accepted",
    "clock.corrected": "change.clock.corrected",
}


def _clock_change(what: str, subject: Any, before: dict[str, Any], after: dict[str, Any]) -> Message:
    """A clock record in words: the step, its size, what the clock read where what was due; or the TD's
    acceptance of a record dated before the record it follows."""
    step = after.get("seconds")
    size = duration(step) if isinstance(step, int | float) else "?"
    times = {"expected": str(before.get("time")), "read": str(after.get("time"))}
    return Message(_CLOCK[what], subject=str(subject), size=size, **times)


def _said(values: dict[str, Any], named: bool) -> str | Message:
    """A side of a change in words: each setting by its name in the catalogue (``named``: "seconds a kiosk
    shows a verdict: 20, rounds: yes"), or the one value alone (a rule by its description: "10 points per word
    for an unsuccessful challenge")."""
    if not named and len(values) == 1:
        ((key, value),) = values.items()
        return _value(key, value)
    said: str | Message = ""
    for key, value in reversed(values.items()):
        one = Message("change.setting", name=_name(key), value=_value(key, value))
        said = one if said == "" else Message("change.and", first=one, rest=said)
    return said


# The settings a change may name (change.field.<name> in the catalogue): the event's and a division's.
FIELDS = (*_SETTINGS, "division_order", "lexicon", "rule")


def _name(key: str) -> str | Message:
    return Message(f"change.field.{key}") if key in FIELDS else key


def _value(key: str, value: Any) -> str | Message:
    if key == "rule" and value in _RULES:
        return ChallengeRule(value).description_message
    if isinstance(value, list):
        return " / ".join(str(item) for item in value)
    if isinstance(value, bool):
        return Message("change.yes" if value else "change.no")
    return str(value)


def device_revoked(device: Device) -> Change:
    """A device revoked: its role and division, from not revoked to revoked."""
    state = {"role": device.role.value, "division": device.division}
    return Change(
        "device.revoked", device.name, device.division or "", {**state, "revoked": False}, {**state, "revoked": True}
    )


def repair_code_made(device: str, division: str | None, *, was_revoked: bool) -> Change:
    """A code that pairs ``device`` again, made (whether the device was revoked then)."""
    return Change("device.repair_code", device, division or "", {"revoked": was_revoked}, {"repair_code": True})


def td_added(name: str, *, by: str) -> Change:
    return Change("td.added", name, "", None, {"name": name, "created_by": by})


def td_disabled(name: str, *, was_disabled: bool) -> Change:
    return Change("td.disabled", name, "", {"disabled": was_disabled}, {"disabled": True})


def change_entry(change: Change, *, actor: str, event: str, channel: str = CHANNEL) -> Entry:
    """The change record of ``change`` made by ``actor`` (through ``channel``): no words, results or verdict."""
    return Entry(
        kind=Kind.CHANGE,
        parent_id=None,
        event=event,
        division=change.division,
        round=None,
        table="",
        actor=actor,
        channel=channel,
        words_typed=(),
        words=(),
        lexicon="",
        fingerprint="",
        verdict=None,
        results=(),
        rule="",
        consequence={},
        request_id=f"change-{secrets.token_hex(12)}",
        change=change.as_dict(),
    )


def record_changes(audit: AuditLog, old: Event, new: Event, *, actor: str) -> list[Record]:
    """Put every difference between ``old`` and ``new`` on record (see :func:`put_on_record`)."""
    return put_on_record(audit, event_changes(old, new), actor=actor, event=new.name)


def record_file_edit(audit: AuditLog, old: Event, new: Event) -> None:
    """Put a hand edit of the event file on record, by the file (nobody signed in made it). Raises
    :class:`AuditUnavailable` as :func:`put_on_record` does: then the edit is not served."""
    record_changes(audit, old, new, actor=EVENT_FILE)


def put_on_record(audit: AuditLog, changes: Sequence[Change], *, actor: str, event: str) -> list[Record]:
    """Write a change record of each change (committed when this returns). Raises :class:`AuditUnavailable`
    (``error.change.not_recorded``): then nothing of the change may be made."""
    try:
        futures = [audit.submit(change_entry(change, actor=actor, event=event)) for change in changes]
        return [future.result().record for future in futures]
    except AuditUnavailable as exc:
        raise AuditUnavailable("error.change.not_recorded", reason=exc.msg) from exc
