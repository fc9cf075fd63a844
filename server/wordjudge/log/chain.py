"""Checking the audit log: its hash chain, each record's own consistency, and heads shown elsewhere.

A **head** is a record's position in the chain as it leaves the server: ``ID:HEX``, the record's
id and the first :data:`HEAD_HEX` (or more) hex digits of its chain hash. A docket prints the
head of its own record; the console and exports show heads the same way; a witness
(``wordjudge witness``) writes down the log's head every few seconds on another machine. Any head
from the past checks the log: someone who alters a record and rehashes every later one changes
the hash of every head after it, and someone who cuts records off loses the heads beyond the cut.

:func:`verify_chain` checks, record by record: ids consecutive from 1, the hash of the stored body,
the link to the record before, the verdict against the per-word results, the consequence against
the rule, the word count and the verdict, time never going backwards, parent links (to an
earlier record of the same event, of a kind that may have that child), the schema (append-only
triggers, generated columns), every checkpoint (each record the log was once found intact up to must still be
there with the same hash: a log cut or rehashed below its last checkpoint fails without any head) and every
head given. It can start at a checkpoint (the server's start checks only what came after the last one).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wordjudge.base.clock import corrected_time
from wordjudge.base.errors import InvalidInput, Message
from wordjudge.base.messages import duration
from wordjudge.model.input_rules import MAX_WORDS
from wordjudge.model.records import Kind, Verdict, canonical
from wordjudge.model.rules import ChallengeRule, consequence
from wordjudge.storage.dialect import dialect_of
from wordjudge.storage.postgres import AnyConnection, DatabaseError

GENESIS_HASH = "0" * 64
HEAD_HEX = 16  # hex digits of a head as printed: 64 bits, beyond any forger's reach
# A change record of this kind is the TD's acceptance of a record dated before the record it follows, made by an
# honest clock set back in a log written before record times were held (wordjudge.tournament.clock_steps).
STEP_ACCEPTED = "clock.step_accepted"
_HEAD = re.compile(r"#?(\d{1,16}):([0-9a-fA-F]{16,64})")
_KINDS = {kind.value for kind in Kind}
_VERDICTS = {verdict.value for verdict in Verdict}
_PARENT_KINDS = {"recheck": {"challenge", "reissue"}, "reissue": {"challenge", "reissue"}}


@dataclass(frozen=True)
class Head:
    """The chain's position after ``records`` records: the last one's id and hash."""

    records: int
    id: int | None
    hash: str
    time: str = ""  # the last record's time ("" for an empty log): no record after it is dated before it

    @property
    def text(self) -> str:
        """The head as printed: ``ID:HEX``."""
        return head_text(self.id or 0, self.hash)

    def as_dict(self) -> dict[str, Any]:
        """The head as the API sends it: its position (the time is the writer's, for the next record's)."""
        return {"records": self.records, "id": self.id, "hash": self.hash, "text": self.text}


GENESIS = Head(0, None, GENESIS_HASH)


def head_text(record_id: int, record_hash: str) -> str:
    """A record's position as printed on dockets and screens: ``ID:HEX``."""
    return f"{record_id}:{record_hash[:HEAD_HEX]}"


@dataclass(frozen=True)
class HeadMark:
    """A head shown somewhere (a docket, a witness file): record ``id`` had a hash starting with ``hex``."""

    id: int
    hex: str
    where: str | Message = ""  # where it came from, for messages

    @classmethod
    def parse(cls, text: str, where: str | Message = "") -> HeadMark:
        """Read ``ID:HEX`` (as a docket prints it; a leading '#' is fine). Raises :class:`InvalidInput`."""
        match = _HEAD.fullmatch(text.strip())
        if match is None or int(match[1]) < 1:
            shown = repr(text.strip()[:80])
            if where:
                raise InvalidInput("error.head.invalid_from", text=shown, where=where, hex=HEAD_HEX)
            raise InvalidInput("error.head.invalid", text=shown, hex=HEAD_HEX)
        return cls(int(match[1]), match[2].lower(), where)

    def __str__(self) -> str:
        return f"{self.id}:{self.hex}"


def read_heads(path: Path) -> list[HeadMark]:
    """The heads in a file, one a line, as a witness writes them (``TIME ID:HEX``, or just ``ID:HEX``).

    Blank lines and lines starting with '#' followed by a space are skipped. Raises
    :class:`InvalidInput` naming the file and line of anything else that is not a head.
    """
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("error.head.file_unreadable", path=str(path), reason=str(exc)) from exc
    marks = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("# ") or text == "#":
            continue
        marks.append(HeadMark.parse(text.split()[-1], Message("chain.where.line", file=path.name, line=str(number))))
    return marks


@dataclass(frozen=True)
class Checkpoint:
    """Where the chain was last found intact: the record's id and its hash."""

    record_id: int
    hash: str


def read_head(connection: AnyConnection) -> Head:
    """The log's last record as a head (GENESIS for an empty log)."""
    row = connection.execute("SELECT id, hash, created_at FROM records ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return GENESIS
    # Ids run from 1 without a gap (the chain check holds it): the last id is the count, without counting.
    return Head(row[0], row[0], row[1], row[2] if isinstance(row[2], str) else "")


def record_stamp(connection: AnyConnection, record_id: int) -> tuple[str, str] | None:
    """A record's hash and time as stored (None: the log has no such record)."""
    row = connection.execute("SELECT hash, created_at FROM records WHERE id = ?", (record_id,)).fetchone()
    return (str(row[0]), str(row[1])) if row else None


def last_checkpoint(connection: AnyConnection) -> Checkpoint | None:
    """The last point up to which the chain was found intact, if any."""
    row = connection.execute("SELECT record_id, hash FROM checkpoints ORDER BY id DESC LIMIT 1").fetchone()
    return Checkpoint(row[0], row[1]) if row else None


def insert_checkpoint(connection: AnyConnection, head: Head, *, whole: bool) -> None:
    """Note, in the caller's transaction, that the chain was found intact up to ``head`` (``whole``: by a
    check of the whole log)."""
    connection.execute(
        "INSERT INTO checkpoints (record_id, hash, checked_at, whole) VALUES (?, ?, ?, ?)",
        (head.id, head.hash, datetime.now(UTC).isoformat(timespec="milliseconds"), int(whole)),
    )


@dataclass(frozen=True)
class Verification:
    ok: bool
    records: int  # records checked (since the checkpoint, if one was given)
    head: Head  # the last record found good
    first_bad_id: int | None = None
    problem: Message | None = None  # what is wrong with the first bad record (a chain.problem.* message)
    since: int = 0  # the checkpoint's record id: records up to it were not checked again
    heads: int = 0  # heads checked

    def message(self) -> Message:
        """The check's outcome in one sentence (``chain.*``): verified, with what; or where it broke and why."""
        if not self.ok:
            return Message("chain.broken", id=str(self.first_bad_id), problem=self.problem)
        key = _VERIFIED[bool(self.since), bool(self.heads)]
        params: dict[str, Any] = {"records": self.records, "head": self.head.text}
        if self.since:
            params["since"] = str(self.since)
        if self.heads:
            params["heads"] = self.heads
        return Message(key, **params)

    def describe(self) -> str:
        """:meth:`message` in English."""
        return self.message().text()

    def as_dict(self) -> dict[str, Any]:
        """The outcome as the API sends it: ``problem`` and ``description`` in English, ``message`` (and
        ``problem_message``) as catalogue keys with their parameters."""
        return {
            "ok": self.ok,
            "records": self.records,
            "head": self.head.as_dict(),
            "first_bad_id": self.first_bad_id,
            "problem": self.problem.text() if self.problem else None,
            "since": self.since,
            "heads": self.heads,
            "description": self.describe(),
            "message": self.message().as_dict(),
            "problem_message": self.problem.as_dict() if self.problem else None,
        }


_VERIFIED = {
    (False, False): "chain.verified",
    (True, False): "chain.verified_since",
    (False, True): "chain.verified_heads",
    (True, True): "chain.verified_since_heads",
}


class _Broken(Exception):
    def __init__(self, record_id: int, problem: Message) -> None:
        super().__init__(problem.text())
        self.record_id = record_id
        self.problem = problem


_ROWS = "SELECT id, hash, body, created_at FROM records WHERE id > ? ORDER BY id"
# What SQLite checks faster than Python can, from the columns it derives from each body: a record's kind and
# verdict, its per-word results against its verdict and words, and a challenge that claims to agree.
# A change record (a TD's change to the event, a TD account or a device) has no words, results, verdict,
# parent or agreement, and a "change" object; no other kind may carry one.
_BAD_ROWS = """SELECT id, kind, verdict, word_count, result_count, rejected, agrees, json_type(body, '$.change')
    FROM records WHERE id > ? AND (
    kind IS NULL OR kind NOT IN ('challenge', 'recheck', 'reissue', 'ruling', 'change')
    OR (kind = 'change' AND (verdict IS NOT NULL OR word_count IS NOT 0 OR result_count IS NOT 0
        OR json_array_length(body, '$.words_typed') IS NOT 0 OR parent_id IS NOT NULL OR agrees IS NOT NULL
        OR json_type(body, '$.change') IS NOT 'object'))
    OR (kind != 'change' AND (verdict IS NULL OR verdict NOT IN ('acceptable', 'unacceptable')
        OR json_type(body, '$.change') IS NOT NULL))
    OR (kind = 'ruling' AND result_count != 0)
    OR (kind NOT IN ('ruling', 'change') AND (result_count IS NOT word_count OR (verdict = 'acceptable') = rejected))
    OR (kind = 'challenge' AND agrees IS NOT NULL)) ORDER BY id LIMIT 1"""
# The same checks in PostgreSQL's words.
_BAD_ROWS_PG = """SELECT id, kind, verdict, word_count, result_count, rejected, agrees,
    jsonb_typeof(body::jsonb -> 'change') FROM records WHERE id > ? AND (
    kind IS NULL OR kind NOT IN ('challenge', 'recheck', 'reissue', 'ruling', 'change')
    OR (kind = 'change' AND (verdict IS NOT NULL OR word_count IS DISTINCT FROM 0 OR result_count IS DISTINCT FROM 0
        OR (CASE jsonb_typeof(body::jsonb -> 'words_typed') WHEN 'array'
            THEN jsonb_array_length(body::jsonb -> 'words_typed') END) IS DISTINCT FROM 0
        OR parent_id IS NOT NULL OR agrees IS NOT NULL
        OR jsonb_typeof(body::jsonb -> 'change') IS DISTINCT FROM 'object'))
    OR (kind != 'change' AND (verdict IS NULL OR verdict NOT IN ('acceptable', 'unacceptable')
        OR jsonb_typeof(body::jsonb -> 'change') IS NOT NULL))
    OR (kind = 'ruling' AND result_count != 0)
    OR (kind NOT IN ('ruling', 'change') AND (result_count IS DISTINCT FROM word_count
        OR (verdict = 'acceptable') = (rejected = 1)))
    OR (kind = 'challenge' AND agrees IS NOT NULL)) ORDER BY id LIMIT 1"""


# The parts of the log's schema a database lacks or holds otherwise (tampering or damage), read from its catalogue:
# the storage layer's, for the connection's backend (wordjudge.log.connections.missing_or_changed).
SchemaCheck = Callable[[Any], list[str]]


def verify_chain(
    connection: AnyConnection,
    marks: Sequence[HeadMark] = (),
    since: Checkpoint | None = None,
    *,
    side: AnyConnection | None = None,
    deep: bool = False,
    accepting: Mapping[int, str] | None = None,
    schema: SchemaCheck,
) -> Verification:
    """Check the log in ``connection`` (see the module's docstring), from ``since`` if given.

    With ``side`` (a second connection to the same file), the checks SQLite does alone run there in
    a thread while this one walks the chain, on another core. ``deep`` also runs SQLite's own check
    of the file's structure (``PRAGMA quick_check``). A record dated before the record it follows is a
    break unless the TD accepted it as a clock set back (:func:`accepted_steps`), or ``accepting`` names it
    (record id: its hash; what :func:`step_acceptance` weighs). ``schema`` reads the log's tables, indexes and
    triggers back (:func:`wordjudge.log.connections.missing_or_changed`). Never raises for what it finds: a broken chain
    is a :class:`Verification` naming the first bad record. Raises :class:`sqlite3.Error` (or
    :class:`psycopg.Error`, for a log in PostgreSQL) if the log cannot be read.
    """
    changed = schema(connection)
    if changed:
        problem = Message("chain.problem.schema_changed", parts=", ".join(changed))
        return Verification(False, 0, GENESIS, 1, problem, heads=len(marks))
    previous, start = GENESIS, 0
    if since is not None:
        row = connection.execute("SELECT hash, created_at FROM records WHERE id = ?", (since.record_id,)).fetchone()
        if row is None or row[0] != since.hash:
            checked = {"id": str(since.record_id), "hash": since.hash[:HEAD_HEX]}
            if row is None:
                problem = Message("chain.problem.checkpoint_missing", **checked)
            else:
                problem = Message("chain.problem.checkpoint_rewritten", **checked, now=row[0][:HEAD_HEX])
            return Verification(False, 0, GENESIS, since.record_id, problem, since=since.record_id)
        previous, start = Head(since.record_id, since.record_id, since.hash, str(row[1])), since.record_id
    by_id: dict[int, list[HeadMark]] = {}
    for mark in marks:
        by_id.setdefault(mark.id, []).append(mark)
    found: list[tuple[int | None, Message] | None] = []
    failed: list[Exception] = []

    def sql_checks() -> None:
        try:
            found.append(_sql_problem(side or connection, start, deep))
        except DatabaseError as exc:  # raised below, in the caller's thread (a closing log interrupts both)
            failed.append(exc)

    checks = threading.Thread(target=sql_checks)
    if side is not None:
        checks.start()
    accepted = {**accepted_steps(connection), **(accepting or {})}
    walk = _Walk(previous, by_id, accepted)
    bad: tuple[int | None, Message] | None = None
    try:
        # PostgreSQL's rows are streamed: a million records are never all in memory (SQLite reads as it goes).
        stream = getattr(connection, "stream", connection.execute)
        walk.records(stream(_ROWS, (start,)))
        last = walk.head.id or 0
        beyond = [mark for mark in marks if mark.id > last]
        if beyond:
            raise _Broken(last + 1, _cut_off(last, min(beyond, key=lambda mark: mark.id)))
    except _Broken as broken:
        bad = (broken.record_id, broken.problem)
    if side is None:
        checks.run()
    else:
        checks.join()
    if failed:
        raise failed[0]
    early = found[0] if found else None
    if early is not None and (bad is None or early[0] is None or bad[0] is None or early[0] <= bad[0]):
        bad = early
    # A checkpoint's record that is there but changed: the record's own problem, if it has one, says more.
    cut = _checkpoint_problem(connection)
    if cut is not None and (bad is None or (bad[0] is not None and cut[0] < bad[0])):
        bad = cut
    if bad is None:
        return Verification(True, walk.count, walk.head, since=start, heads=len(marks))
    head = walk.head if bad[0] is None or (walk.head.id or 0) < bad[0] else _head_before(connection, bad[0])
    return Verification(False, head.records - previous.records, head, bad[0], bad[1], since=start, heads=len(marks))


# Every checkpoint against the record it names (issue 36): the first one whose record is gone or has another hash.
_CHECKPOINTS = """SELECT c.record_id, c.hash, r.hash FROM checkpoints c LEFT JOIN records r ON r.id = c.record_id
    WHERE c.record_id > 0 AND (r.hash IS NULL OR r.hash <> c.hash) ORDER BY c.record_id LIMIT 1"""


def _checkpoint_problem(connection: AnyConnection) -> tuple[int, Message] | None:
    """The first checkpoint the log no longer matches, as the start check says it (``chain.problem.checkpoint_*``):
    a record the chain was once found intact up to, now missing (records were cut off) or with another hash (the
    log was rewritten). What a checkpoint cannot see (records cut or rehashed after the last one, or the
    checkpoints deleted too) needs a head from a docket or a witness."""
    row = connection.execute(_CHECKPOINTS).fetchone()
    if row is None:
        return None
    checked = {"id": str(row[0]), "hash": str(row[1])[:HEAD_HEX]}
    if row[2] is None:
        return int(row[0]), Message("chain.problem.checkpoint_missing", **checked)
    return int(row[0]), Message("chain.problem.checkpoint_rewritten", **checked, now=str(row[2])[:HEAD_HEX])


# The TD's acceptances of a step back in time (change records of what clock.step_accepted): few, found through the
# kind's index; each body is read again as JSON, so that a text that only looks like one accepts nothing.
_ACCEPTANCES = "SELECT body FROM records WHERE kind = 'change' AND body LIKE ? ORDER BY id"


def accepted_steps(connection: AnyConnection) -> dict[int, str]:
    """The records dated before the record they follow that the TD accepted as a clock set back (``wordjudge audit
    accept-clock-step``): record id: its hash (an acceptance holds for that very record, never another)."""
    accepted: dict[int, str] = {}
    for (body,) in connection.execute(_ACCEPTANCES, (f'%"what":"{STEP_ACCEPTED}"%',)):
        try:
            change = json.loads(body)["change"]
            if change["what"] == STEP_ACCEPTED:
                accepted[int(change["after"]["id"])] = str(change["after"]["hash"])
        except (ValueError, KeyError, TypeError):
            continue  # not an acceptance, whatever its text: it accepts nothing (the chain check says what it is)
    return accepted


def _consequences() -> list[tuple[str, str, int, str]]:
    """Every (rule, verdict, word count) a record can have, and the consequence it must then carry, as stored."""
    return [
        (
            rule.value,
            verdict.value,
            words,
            canonical(consequence(rule, verdict is Verdict.ACCEPTABLE, words).as_dict()).decode(),
        )
        for rule in ChallengeRule
        for verdict in Verdict
        for words in range(1, MAX_WORDS + 1)
    ]


_CONSEQUENCE_PG = """SELECT r.id, r.rule, r.verdict, r.word_count, e.text, r.kind FROM records r
    LEFT JOIN unnest(?::text[], ?::text[], ?::integer[], ?::text[]) AS e (rule, verdict, words, text)
        ON e.rule = r.rule AND e.verdict = r.verdict AND e.words = r.word_count
    WHERE r.id > ? AND (CASE WHEN r.kind = 'change'
        THEN r.rule != '' OR strpos(r.body, '"consequence":{},') = 0
        ELSE e.text IS NULL OR strpos(r.body, '"consequence":' || e.text || ',') = 0 END)
    ORDER BY r.id LIMIT 1"""


def _consequence_problem(connection: Any, start: int) -> tuple[int, Message] | None:
    """The first record whose consequence is not what its rule gives its word count and verdict (or whose rule
    or word count no record can have)."""
    row = dialect_of(connection).pick(_consequence_row_sqlite, _consequence_row_pg)(connection, start)
    if row is None:
        return None
    record_id, rule, verdict, words, text, kind = row
    if kind == "change":
        return record_id, Message("chain.problem.change_not_plain")
    if text is None:
        return record_id, Message(
            "chain.problem.not_a_rule", rule=repr(rule), verdict=repr(verdict), words=_shown(words)
        )
    return record_id, Message("chain.problem.consequence", rule=str(rule), words=_shown(words), verdict=str(verdict))


def _consequence_row_sqlite(connection: sqlite3.Connection, start: int) -> tuple[Any, ...] | None:
    # A keyed table of every consequence a record may carry (in the connection's own temporary database: the
    # log itself is only read), so that each record costs one lookup.
    connection.execute(
        "CREATE TEMP TABLE IF NOT EXISTS wordjudge_consequences"
        " (rule TEXT, verdict TEXT, words INTEGER, text TEXT, PRIMARY KEY (rule, verdict, words))"
    )
    connection.executemany("INSERT OR REPLACE INTO temp.wordjudge_consequences VALUES (?, ?, ?, ?)", _consequences())
    row: tuple[Any, ...] | None = connection.execute(
        "SELECT r.id, r.rule, r.verdict, r.word_count, e.text, r.kind FROM records r"
        " LEFT JOIN temp.wordjudge_consequences e"
        " ON e.rule = r.rule AND e.verdict = r.verdict AND e.words = r.word_count"
        " WHERE r.id > ? AND (CASE WHEN r.kind = 'change'"
        " THEN r.rule != '' OR instr(r.body, '\"consequence\":{},') = 0"
        " ELSE e.text IS NULL OR instr(r.body, '\"consequence\":' || e.text || ',') = 0 END)"
        " ORDER BY r.id LIMIT 1",
        (start,),
    ).fetchone()
    return row


def _consequence_row_pg(connection: Any, start: int) -> tuple[Any, ...] | None:
    # The table of consequences as arrays, joined as a relation (a read-only session makes no table).
    columns = [list(column) for column in zip(*_consequences(), strict=True)]
    row: tuple[Any, ...] | None = connection.execute(_CONSEQUENCE_PG, (*columns, start)).fetchone()
    return row


def _shown(value: Any) -> Any:
    """A value read from a record as a message's parameter: a number as a number, anything else as its text."""
    return value if isinstance(value, int) else str(value)


def _sql_problem(connection: Any, start: int, deep: bool) -> tuple[int | None, Message] | None:
    """The first problem the database finds alone: a damaged SQLite file (``deep``), a record at odds with itself,
    a bad link. (PostgreSQL checks its own pages as it reads them, with data checksums where the cluster has them.)"""
    dialect = dialect_of(connection)
    damage = dialect.damage(connection) if deep else None
    if damage is not None:
        return None, Message("chain.problem.damaged_file", check=damage)
    row = connection.execute(dialect.pick(_BAD_ROWS, _BAD_ROWS_PG), (start,)).fetchone()
    bad: tuple[int | None, Message] | None = None
    if row is not None:
        record_id, kind, verdict, words, results, rejected, agrees, change = row
        if kind not in _KINDS:
            bad = record_id, Message("chain.problem.not_a_record", kind=repr(kind), verdict=repr(verdict))
        elif kind == "change":
            bad = record_id, Message("chain.problem.change_not_plain")
        elif verdict not in _VERDICTS:
            bad = record_id, Message("chain.problem.not_a_record", kind=repr(kind), verdict=repr(verdict))
        elif change is not None:
            bad = record_id, Message("chain.problem.change_on_adjudication", kind=str(kind))
        elif kind == "ruling":
            bad = record_id, Message("chain.problem.ruling_with_results")
        elif results != words:
            bad = record_id, Message("chain.problem.result_count", words=_shown(words), results=_shown(results))
        elif (verdict == "acceptable") == bool(rejected):
            bad = record_id, Message("chain.problem.verdict_results", verdict=str(verdict))
        else:
            bad = record_id, Message("chain.problem.challenge_agrees", agrees=str(agrees))
    for found in (_consequence_problem(connection, start), _parent_problem(connection, start, bad[0] if bad else None)):
        if found is not None and (bad is None or bad[0] is None or found[0] < bad[0]):
            bad = found
    return bad


def _head_before(connection: AnyConnection, record_id: int) -> Head:
    row = connection.execute(
        "SELECT id, hash, created_at FROM records WHERE id < ? ORDER BY id DESC LIMIT 1", (record_id,)
    )
    found = row.fetchone()
    return Head(found[0], found[0], found[1], str(found[2])) if found else GENESIS


def _cut_off(last: int, mark: HeadMark) -> Message:
    if mark.where:
        return Message("chain.problem.cut_off_from", last=str(last), head=str(mark), where=mark.where)
    return Message("chain.problem.cut_off", last=str(last), head=str(mark))


class _Walk:
    """The record-by-record part of :func:`verify_chain`: one tight loop (it runs a million times). What
    SQLite can check alone, it checks meanwhile in :func:`_sql_problem`."""

    def __init__(self, previous: Head, marks: dict[int, list[HeadMark]], accepted: Mapping[int, str]) -> None:
        self.head = previous
        self.marks = marks
        self.count = 0
        self.accepted = accepted  # record id: its hash, a step back in time the TD accepted

    def records(self, rows: Iterable[tuple[Any, ...]]) -> None:
        sha256, marks, accepted = hashlib.sha256, self.marks, self.accepted
        last_id, prev_hash, last_time, count = self.head.id or 0, self.head.hash, self.head.time, 0
        try:
            for record_id, record_hash, body, created_at in rows:
                problem = None
                if record_id != last_id + 1:
                    missing = Message("chain.problem.missing", id=str(last_id + 1), next=str(record_id))
                    raise _Broken(last_id + 1, missing)
                if sha256(body.encode()).hexdigest() != record_hash:
                    problem = Message("chain.problem.altered")
                elif '"prev_hash":"' + prev_hash + '"' not in body:
                    problem = Message("chain.problem.unlinked")
                elif f'"id":{record_id},' not in body:
                    problem = Message("chain.problem.other_id")
                elif not isinstance(created_at, str) or created_at < last_time:
                    if not isinstance(created_at, str) or (
                        accepted.get(record_id) != record_hash and not _corrects(body, created_at, last_time)
                    ):
                        problem = _time_problem(record_id, created_at, last_time)
                elif record_id in marks:
                    problem = _mark_problem(record_id, record_hash, marks[record_id])
                if problem is not None:
                    raise _Broken(record_id, problem)
                last_id, prev_hash, last_time = record_id, record_hash, created_at
                count += 1
        finally:
            self.head = Head(self.head.records + count, last_id or None, prev_hash, last_time)
            self.count += count


def _corrects(body: str, created_at: str, previous: str) -> bool:
    """Whether the record whose hashed ``body`` this is, dated ``created_at`` before ``previous`` (the record
    before it's), is the TD's acceptance of the clock's correction of record times held at ``previous``, dated
    as it says (:func:`wordjudge.base.clock.corrected_time`): the one record an honest writer dates back."""
    try:
        record = json.loads(body)
    except ValueError:
        return False
    if not isinstance(record, dict) or record.get("kind") != Kind.CHANGE.value:
        return False
    return corrected_time(record.get("change"), previous) == created_at == record.get("created_at")


def _time_problem(record_id: int, created_at: Any, previous: str) -> Message:
    """A record dated before the record it follows: by how much (an honest clock set back, in a log written
    before record times were held, is accepted by the TD; nothing else is)."""
    try:
        if not isinstance(created_at, str):
            raise TypeError(created_at)
        step = datetime.fromisoformat(previous) - datetime.fromisoformat(created_at)
    except (TypeError, ValueError):  # a time that is no ISO time, or naive against aware
        return Message("chain.problem.time_unreadable", time=str(created_at))
    return Message(
        "chain.problem.time", time=created_at, previous=previous, step=duration(step.total_seconds()), id=str(record_id)
    )


def _mark_problem(record_id: int, record_hash: str, marks: list[HeadMark]) -> Message | None:
    for mark in marks:
        if not record_hash.startswith(mark.hex):
            found = {"hash": record_hash[:HEAD_HEX], "head": str(mark), "id": str(record_id)}
            if mark.where:
                return Message("chain.problem.head_mismatch_from", **found, where=mark.where)
            return Message("chain.problem.head_mismatch", **found)
    return None


_CHILDREN = """SELECT c.id, c.kind, c.parent_id, c.event, c.verdict, c.agrees, p.id, p.kind, p.event, p.verdict
    FROM records c LEFT JOIN records p ON p.id = c.parent_id
    WHERE c.id > ? AND c.id < ? AND (c.parent_id IS NOT NULL OR c.kind IN ('recheck', 'reissue', 'ruling'))
        AND c.kind != 'change'  -- a change with a parent is caught by _BAD_ROWS
    ORDER BY c.id"""


def _parent_problem(connection: AnyConnection, after: int, before: int | None) -> tuple[int, Message] | None:
    """The first record in (after, before) whose parent link is wrong, and what is wrong with it."""
    for row in connection.execute(_CHILDREN, (after, before if before is not None else 2**63 - 1)):
        record_id, kind, parent_id, event, verdict, agrees, found, parent_kind, parent_event, parent_verdict = row
        link = {"kind": str(kind), "parent": str(parent_id)}
        if kind == "challenge":
            return record_id, Message("chain.problem.challenge_parent", parent=str(parent_id))
        if parent_id is None:
            return record_id, Message("chain.problem.orphan", kind=str(kind))
        if found is None or found >= record_id:
            return record_id, Message("chain.problem.parent_not_earlier", **link)
        if parent_event != event:
            return record_id, Message("chain.problem.parent_other_event", **link, event=str(parent_event))
        if parent_kind not in _PARENT_KINDS.get(kind, _KINDS - {"ruling", "change"}):
            return record_id, Message("chain.problem.parent_kind", **link, parent_kind=str(parent_kind))
        if agrees is None or bool(agrees) != (verdict == parent_verdict):
            wrongly = "chain.problem.agrees_wrongly" if agrees else "chain.problem.disagrees_wrongly"
            return record_id, Message(wrongly, parent=str(parent_id))
    return None
