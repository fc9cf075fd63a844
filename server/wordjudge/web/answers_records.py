"""The answers about records: a record as its caller may see it (:mod:`wordjudge.judging.record_views`), its final
verdict (:mod:`wordjudge.judging.final_verdict`), its docket, pages of the log, the log's head and its check, and
the summary. See :mod:`wordjudge.web.answers`."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from wordjudge.judging.record_views import record_view
from wordjudge.model.auth import Principal
from wordjudge.model.records import Kind, Record, Verdict
from wordjudge.web.answers import MessageAnswer, Shape, absent


class ConsequenceAnswer(Shape):
    """What the verdict means for the play, as the record stores it, with its ``message``."""

    play_stands: bool = absent()
    challenger_penalty: int = absent()
    challenger_loses_turn: bool = absent()
    text: str = absent("In English, as stored (and hashed).")
    message: MessageAnswer


class HeadAnswer(Shape):
    """The audit log's head: its records, the last one's id (null: none yet) and hash, and both as printed."""

    records: int
    id: int | None
    hash: str
    text: str


class StepAnswer(Shape):
    """One record of a challenge's family, as it bears on the final verdict (never per-word results)."""

    kind: Kind
    id: int
    parent_id: int | None
    verdict: Verdict
    agrees: bool | None
    actor: str
    created_at: str
    words: list[str]
    consequence: ConsequenceAnswer
    kind_message: MessageAnswer
    verdict_message: MessageAnswer


class FinalVerdictAnswer(Shape):
    """What a challenge finally came to, after its re-checks, reissues and rulings (``verdict`` null while a
    re-check awaits the TD's ruling)."""

    challenge_id: int
    verdict: Verdict | None
    verdict_message: MessageAnswer | None
    decided_by: StepAnswer | None
    awaiting_ruling: StepAnswer | None
    words: list[str]
    changed: bool
    linked: list[StepAnswer]


class RecordAnswer(Shape):
    """A record as its caller may see it: the verdict for a device; everything, per-word results included, for
    the TD. A change record (``kind`` change) has no words and no verdict, and says what changed."""

    id: int
    kind: Kind
    parent_id: int | None
    created_at: str
    event: str
    division: str
    round: int | None
    table: str
    words: list[str]
    word_count: int
    repeated: list[str]
    verdict: Verdict | None
    lexicon: str
    fingerprint: str
    rule: str
    consequence: ConsequenceAnswer | None
    kind_message: MessageAnswer
    verdict_message: MessageAnswer | None
    rule_message: MessageAnswer | None
    agrees: bool | None
    request_id: str
    hash: str | None
    # A change record's
    change: dict[str, Any] | None = absent("A change record's: what changed, before and after.")
    change_message: MessageAnswer = absent("A change record's change, in words.")
    # The TD's view (``actor`` a change record's too)
    actor: str = absent()
    channel: str = absent()
    words_typed: list[str] = absent()
    results: list[dict[str, Any]] = absent("The per-word results (the TD's view only).")
    note: str | None = absent()
    software_version: str = absent()
    prev_hash: str = absent()
    children: list[int] = absent("The ids of the records linked to it (the TD's view of one record).")
    # A challenge's, when its final verdict is known
    final: FinalVerdictAnswer = absent()
    needs_ruling: bool = absent()


class AppendedAnswer(RecordAnswer):
    """The record a request appended (201), or the one a retry's ``request_id`` already made (200, ``replayed``)."""

    replayed: bool


class RecordsAnswer(Shape):
    """The caller's own latest records, newest first."""

    records: list[RecordAnswer]


class RecordsPageAnswer(RecordsAnswer):
    """A page of the log's records, newest first (``matching``: null on older pages; ``older``: null on the last)."""

    matching: int | None
    older: int | None
    head: HeadAnswer


class DocketAnswer(Shape):
    """What a printed docket shows of a record."""

    record: RecordAnswer
    final: FinalVerdictAnswer
    lexicon_name: str
    lexicon_unverified: list[dict[str, Any]]
    tiles_split: list[str]
    short_fingerprint: str
    head: HeadAnswer
    head_text: str | None
    qr_text: str
    qr_svg: str


class VerificationAnswer(Shape):
    """The whole log checked: where it broke and why, or what was verified."""

    ok: bool
    records: int
    head: HeadAnswer
    first_bad_id: int | None
    problem: str | None
    since: int
    heads: int
    description: str
    message: MessageAnswer
    problem_message: MessageAnswer | None


class WordCount(Shape):
    word: str
    challenges: int


class TallyAnswer(Shape):
    """Challenges and their final verdicts."""

    challenges: int
    acceptable: int
    unacceptable: int
    awaiting_ruling: int
    overturned: int
    acceptable_share: float | None
    most_challenged: list[WordCount]


class RoundSummary(TallyAnswer):
    round: int | None


class DivisionSummary(TallyAnswer):
    division: str
    rounds: list[RoundSummary]


class SummaryAnswer(Shape):
    """The event's challenges in all, and per division and round."""

    total: TallyAnswer
    divisions: list[DivisionSummary]


def appended_response(record: Record, replayed: bool, principal: Principal) -> JSONResponse:
    """The answer to a record appended: 201 with its view, or 200 for a retry (``replayed``)."""
    view = record_view(record, principal)
    view["replayed"] = replayed
    return JSONResponse(view, status_code=200 if replayed else 201)
