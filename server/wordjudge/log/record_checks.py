"""What the database checks of the audit log alone, segment by segment: each record at odds with itself, its links.

The chain check (:mod:`wordjudge.log.chain`) walks the hash chain record by record in Python; what SQL can check
faster (a record's kind and verdict against its per-word results, its consequence against the rule, its parent
link, the file's own structure) runs meanwhile on the database, in **segments**: the records after the start are
cut into consecutive id ranges ``(after, upto]``, the last one open-ended (so that no record is left out, however
many were written since the cut was planned), each checked apart by whichever connection is free (a second one
in a thread from the start, the walking one once its walk is done), and the findings are **joined**: the first
problem of the log is the segments' problem with the lowest id (a damaged file before any record's). The SQL is
written once, for both backends, with the dialect's words (:class:`wordjudge.storage.dialect.SqlText`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import Message

if TYPE_CHECKING:  # the chain check gives the connection's dialect: no import of the storage's choices here
    from wordjudge.storage.dialect import Dialect, SqlText
    from wordjudge.storage.postgres import AnyConnection

_PARENT_KINDS = {"recheck": {"challenge", "reissue"}, "reissue": {"challenge", "reissue"}}
# Segments a check is cut into: enough that two connections end together (one of them walks the chain first).
SEGMENTS = 12
_LAST_ID = 2**63 - 1  # an open-ended segment's end

# A problem found: the record's id (None: the file itself), the check's rank among those that found the same
# record (the first check's finding says more), and what is wrong.
Found = tuple[int | None, int, Message]


@dataclass(frozen=True)
class RecordRules:
    """What a record may be, as the model says (given by the chain check: this module reads no model): its kinds,
    its verdicts, and every (rule, verdict, word count) it may have with the consequence it must then carry, as
    stored."""

    kinds: frozenset[str]
    verdicts: frozenset[str]
    consequences: tuple[tuple[str, str, int, str], ...]


@dataclass(frozen=True)
class Segment:
    """The records with ids in ``(after, upto]``."""

    after: int
    upto: int = _LAST_ID


def segments(start: int, last: int, count: int = SEGMENTS) -> list[Segment]:
    """The records after ``start`` cut into at most ``count`` consecutive segments up to ``last`` (the last
    record's id when planned), the last one open-ended: together they hold every record after ``start``."""
    size = max(1, -(-(last - start) // count))
    cuts = list(range(start, last, size))[1:count]  # where one segment ends and the next begins
    bounds = [start, *cuts]
    return [*(Segment(after, upto) for after, upto in pairwise(bounds)), Segment(bounds[-1])]


def at_odds(text: SqlText) -> str:
    """The condition that a record (``r``) is at odds with itself, from the columns the database derives from its
    body: its kind and verdict, its per-word results against its verdict and words, and a challenge that claims to
    agree. A change record (a TD's change to the event, a TD account or a device) has no words, results, verdict,
    parent or agreement, and a "change" object; no other kind may carry one."""
    change, differs = text.json_type("r.body", "change"), text.differs
    return f"""(r.kind IS NULL OR r.kind NOT IN ('challenge', 'recheck', 'reissue', 'ruling', 'change')
    OR (r.kind = 'change' AND (r.verdict IS NOT NULL OR {differs("r.word_count", "0")}
        OR {differs("r.result_count", "0")} OR {differs(text.array_length("r.body", "words_typed"), "0")}
        OR r.parent_id IS NOT NULL OR r.agrees IS NOT NULL OR {differs(change, "'object'")}))
    OR (r.kind != 'change' AND (r.verdict IS NULL OR r.verdict NOT IN ('acceptable', 'unacceptable')
        OR {change} IS NOT NULL))
    OR (r.kind = 'ruling' AND r.result_count != 0)
    OR (r.kind NOT IN ('ruling', 'change') AND ({differs("r.result_count", "r.word_count")}
        OR (r.verdict = 'acceptable') = (r.rejected = 1)))
    OR (r.kind = 'challenge' AND r.agrees IS NOT NULL))"""


_CONSEQUENCE_COLUMNS: tuple[tuple[str, Any], ...] = (
    ("rule", "TEXT"),
    ("verdict", "TEXT"),
    ("words", "INTEGER"),
    ("text", "TEXT"),
)
_RULES = "wordjudge_consequences"  # the relation of the consequences, as the query names its columns
# A change record's consequence (none), and an adjudication's as its rule gives it, as the stored body holds them.
_PLAIN_CONSEQUENCE, _RULED_CONSEQUENCE = """'"consequence":{},'""", f"""'"consequence":' || {_RULES}.text || ','"""


def bad_records_sql(text: SqlText, rules: str) -> str:
    """The first record of a segment at odds with itself (:func:`at_odds`) or whose consequence is not what its
    rule gives its word count and verdict (or whose rule or word count no record can have), ``rules`` being the
    relation of the consequences a record may carry: one pass over the bodies for both."""
    odd, has = at_odds(text), text.position
    return f"""SELECT r.id, r.kind, r.verdict, r.word_count, r.result_count, r.rejected, r.agrees,
        {text.json_type("r.body", "change")}, r.rule, {_RULES}.text, {odd}
    FROM records r LEFT JOIN {rules}
        ON {_RULES}.rule = r.rule AND {_RULES}.verdict = r.verdict AND {_RULES}.words = r.word_count
    WHERE r.id > ? AND r.id <= ? AND ({odd} OR (CASE WHEN r.kind = 'change'
        THEN r.rule != '' OR {has("r.body", _PLAIN_CONSEQUENCE)} = 0
        ELSE {_RULES}.text IS NULL OR {has("r.body", _RULED_CONSEQUENCE)} = 0 END))
    ORDER BY r.id LIMIT 1"""


def _shown(value: Any) -> Any:
    """A value read from a record as a message's parameter: a number as a number, anything else as its text."""
    return value if isinstance(value, int) else str(value)


def bad_record(connection: AnyConnection, segment: Segment, rules: RecordRules, dialect: Dialect) -> Found | None:
    """The first record of ``segment`` at odds with itself or with its rule (:func:`bad_records_sql`), and what is
    wrong with it (what is at odds first: it says more)."""
    relation, params = dialect.constant_rows(connection, _RULES, _CONSEQUENCE_COLUMNS, rules.consequences)
    sql = bad_records_sql(dialect.text, relation)
    row = connection.execute(sql, (*params, segment.after, segment.upto)).fetchone()
    if row is None:
        return None
    record_id, kind, verdict, words, results, rejected, agrees, change, rule, ruled, odd = row
    if not odd:
        return record_id, 1, _consequence_problem(kind, rule, verdict, words, ruled)
    if kind not in rules.kinds or (kind != "change" and verdict not in rules.verdicts):
        problem = Message("chain.problem.not_a_record", kind=repr(kind), verdict=repr(verdict))
    elif kind == "change":
        problem = Message("chain.problem.change_not_plain")
    elif change is not None:
        problem = Message("chain.problem.change_on_adjudication", kind=str(kind))
    elif kind == "ruling":
        problem = Message("chain.problem.ruling_with_results")
    elif results != words:
        problem = Message("chain.problem.result_count", words=_shown(words), results=_shown(results))
    elif (verdict == "acceptable") == bool(rejected):
        problem = Message("chain.problem.verdict_results", verdict=str(verdict))
    else:
        problem = Message("chain.problem.challenge_agrees", agrees=str(agrees))
    return record_id, 0, problem


def _consequence_problem(kind: Any, rule: Any, verdict: Any, words: Any, ruled: Any) -> Message:
    """What is wrong with a record's consequence (``ruled``: what its rule gives, None for a rule or word count no
    record can have)."""
    if kind == "change":
        return Message("chain.problem.change_not_plain")
    if ruled is None:
        return Message("chain.problem.not_a_rule", rule=repr(rule), verdict=repr(verdict), words=_shown(words))
    return Message("chain.problem.consequence", rule=str(rule), words=_shown(words), verdict=str(verdict))


_CHILDREN = """SELECT c.id, c.kind, c.parent_id, c.event, c.verdict, c.agrees, p.id, p.kind, p.event, p.verdict
    FROM records c LEFT JOIN records p ON p.id = c.parent_id
    WHERE c.id > ? AND c.id <= ? AND (c.parent_id IS NOT NULL OR c.kind IN ('recheck', 'reissue', 'ruling'))
        AND c.kind != 'change'  -- a change with a parent is caught by bad_rows_sql
    ORDER BY c.id"""


def bad_parent(connection: AnyConnection, segment: Segment, rules: RecordRules, dialect: Dialect) -> Found | None:
    """The first record of ``segment`` whose parent link is wrong (to an earlier record of the same event, of a
    kind that may have that child, whose verdict it agrees with as it says), and what is wrong with it."""
    for row in connection.execute(_CHILDREN, (segment.after, segment.upto)):
        record_id, kind, parent_id, event, verdict, agrees, found, parent_kind, parent_event, parent_verdict = row
        link = {"kind": str(kind), "parent": str(parent_id)}
        if kind == "challenge":
            return record_id, 2, Message("chain.problem.challenge_parent", parent=str(parent_id))
        if parent_id is None:
            return record_id, 2, Message("chain.problem.orphan", kind=str(kind))
        if found is None or found >= record_id:
            return record_id, 2, Message("chain.problem.parent_not_earlier", **link)
        if parent_event != event:
            return record_id, 2, Message("chain.problem.parent_other_event", **link, event=str(parent_event))
        if parent_kind not in _PARENT_KINDS.get(kind, rules.kinds - {"ruling", "change"}):
            return record_id, 2, Message("chain.problem.parent_kind", **link, parent_kind=str(parent_kind))
        if agrees is None or bool(agrees) != (verdict == parent_verdict):
            wrongly = "chain.problem.agrees_wrongly" if agrees else "chain.problem.disagrees_wrongly"
            return record_id, 2, Message(wrongly, parent=str(parent_id))
    return None


def damaged_file(connection: AnyConnection, dialect: Dialect) -> Found | None:
    """What the database finds damaged in its own file (SQLite's quick check; PostgreSQL checks its own pages as
    it reads them, with data checksums where the cluster has them)."""
    damage = dialect.damage(connection)
    return None if damage is None else (None, 0, Message("chain.problem.damaged_file", check=damage))


Check = Callable[["AnyConnection"], "Found | None"]


def plan(
    start: int, last: int, rules: RecordRules, dialect: Dialect, *, deep: bool, count: int | None = None
) -> list[Check]:
    """The checks of every record after ``start`` (``last``: the last record's id) against ``rules``, in the
    ``dialect`` of the connections that run them, segment by segment, the file's own first (``deep``: the longest,
    so that it starts first)."""
    checks: list[Check] = [partial(damaged_file, dialect=dialect)] if deep else []
    for segment in segments(start, last, count or SEGMENTS):
        checks += [partial(check, segment=segment, rules=rules, dialect=dialect) for check in (bad_record, bad_parent)]
    return checks


def joined(found: Sequence[Found]) -> tuple[int | None, Message] | None:
    """The first problem of the log among the segments' findings: the file's own, else the lowest record id (of
    two checks that found the same record, the one planned first)."""
    if not found:
        return None
    record_id, _, problem = min(found, key=lambda item: (-1, 0) if item[0] is None else (item[0], item[1]))
    return record_id, problem


class Checks:
    """Checks shared by connections that each take the next one left when free (:meth:`work`), their findings
    joined (:meth:`first`). Thread-safe."""

    def __init__(self, checks: Sequence[Check]) -> None:
        self._left = deque(checks)
        self._lock = threading.Lock()
        self.found: list[Found] = []
        self.failed: list[Exception] = []

    def work(self, connection: AnyConnection) -> None:
        """Run checks on ``connection`` until none is left; an error stops this connection's share (it is raised by
        :meth:`first`, in the caller's thread: a closing log interrupts every connection, and a check that cannot
        run must never pass for one that found nothing)."""
        while True:
            with self._lock:
                if not self._left:
                    return
                check = self._left.popleft()
            try:
                found = check(connection)
            except Exception as exc:  # never a check skipped unsaid: first() raises it
                self.failed.append(exc)
                return
            if found is not None:
                self.found.append(found)

    def abandon(self) -> None:
        """Begin no more checks (those running end on their own)."""
        with self._lock:
            self._left.clear()

    def first(self) -> tuple[int | None, Message] | None:
        """The first problem found (:func:`joined`). Raises the first error a check met (a database error: the log
        could not be read)."""
        if self.failed:
            raise self.failed[0]
        return joined(self.found)
