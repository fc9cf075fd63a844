"""What a record shows, and to whom: the verdict anyone allowed may see, the per-word results only to the TD.

The views of :mod:`wordjudge.model.records` that the API, the live feed and dockets answer with (each says its kind,
verdict, rule and consequence as catalogue keys, for screens to say in the event's language), and the line
``wordjudge audit tail`` prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import Message
from wordjudge.base.messages import format_datetime, times_shown
from wordjudge.model.records import Record, Verdict, kind_message, verdict_message
from wordjudge.model.rules import ChallengeRule, stored_consequence_message
from wordjudge.tournament.changes import describe
from wordjudge.words.editions import short

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.model.auth import Principal

_RULES = {rule.value for rule in ChallengeRule}


def repeated(words: Sequence[str]) -> list[str]:
    """Words that occur more than once, so the opponent can check the typing."""
    return [word for word, count in Counter(words).items() if count > 1]


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
        "id": record.id,
        "kind": record.kind.value,
        "parent_id": None,
        "created_at": record.created_at,
        "event": record.event,
        "division": record.division,
        "round": None,
        "table": "",
        "words": [],
        "word_count": 0,
        "repeated": [],
        "verdict": None,
        "lexicon": "",
        "fingerprint": "",
        "rule": "",
        "consequence": None,
        "kind_message": kind_message(record.kind).as_dict(),
        "verdict_message": None,
        "rule_message": None,
        "agrees": None,
        "request_id": record.request_id,
        "change": record.change,
        "change_message": describe(record.change or {}).as_dict(),
        "actor": record.actor,
        "hash": record.hash if record.hash_is_public else None,
    }


@lru_cache(maxsize=1024)
def _consequence_said(rule: str, acceptable: bool, word_count: int, text: str) -> Message:
    """:func:`stored_consequence_message` for a stored consequence's text, worked out once per kind of verdict
    (it renders the catalogue's text to compare it with the stored one: a tenth of an answer's time)."""
    return stored_consequence_message(rule, acceptable, word_count, {"text": text})


def record_line(record: Record, lang: str) -> str:
    """One record as ``wordjudge audit tail`` shows it, in ``lang``, its time in this machine's time zone: with
    the words that failed (the TD's view)."""
    shown = format_datetime(datetime.fromisoformat(record.created_at).astimezone(), lang)  # this machine's time
    if record.verdict is None:  # a change record: who changed what
        said = Message(
            "cli.tail.change", id=str(record.id), time=shown, actor=record.actor, change=describe(record.change or {})
        )
        return times_shown(said.text(lang), lang)  # a clock record's times, as the record's own
    failed = [r["word"] for r in record.results if not r["acceptable"]]
    link = Message("cli.tail.of", parent=str(record.parent_id)) if record.parent_id else ""
    line = Message(
        "cli.tail.line",
        id=str(record.id),
        time=shown,
        kind=kind_message(record.kind),
        link=link,
        division=record.division,
        round=str(record.round) if record.round is not None else "-",
        table=record.table,
        actor=record.actor,
        words=" ".join(record.words),
        verdict=verdict_message(record.verdict),
        failed=Message("cli.tail.failed", words=" ".join(failed)) if failed else "",
        lexicon=record.lexicon,
        fingerprint=short(record.fingerprint),
    )
    return line.text(lang)
