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
head given. It can start at a checkpoint (the server's start checks only what came after the last one). What the
database checks alone (a record against itself, its consequence, its parent) is :mod:`wordjudge.log.record_checks`'s;
the record-time rule is :func:`wordjudge.base.clock.in_order`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wordjudge.base.clock import corrected_time, in_order
from wordjudge.base.errors import InvalidInput, Message
from wordjudge.base.messages import duration
from wordjudge.log.record_checks import Checks, RecordRules, plan
from wordjudge.model.input_rules import MAX_WORDS
from wordjudge.model.records import Kind, Verdict, canonical
from wordjudge.model.rules import ChallengeRule, consequence
from wordjudge.storage.dialect import dialect_of
from wordjudge.storage.postgres import AnyConnection

GENESIS_HASH = "0" * 64
HEAD_HEX = 16  # hex digits of a head as printed: 64 bits, beyond any forger's reach
# A change record of this kind is the TD's acceptance of a record dated before the record it follows, made by an
# honest clock set back in a log written before record times were held (wordjudge.tournament.clock_steps).
STEP_ACCEPTED = "clock.step_accepted"
_HEAD = re.compile(r"#?(\d{1,16}):([0-9a-fA-F]{16,64})")


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


def _consequences() -> tuple[tuple[str, str, int, str], ...]:
    """Every (rule, verdict, word count) a record can have, and the consequence it must then carry, as stored."""
    return tuple(
        (
            rule.value,
            verdict.value,
            words,
            canonical(consequence(rule, verdict is Verdict.ACCEPTABLE, words).as_dict()).decode(),
        )
        for rule in ChallengeRule
        for verdict in Verdict
        for words in range(1, MAX_WORDS + 1)
    )


# What a record may be, as the database checks it (wordjudge.log.record_checks).
RECORD_RULES = RecordRules(
    frozenset(kind.value for kind in Kind), frozenset(verdict.value for verdict in Verdict), _consequences()
)


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

    The database's own checks run in segments (:mod:`wordjudge.log.record_checks`): with ``side`` (a second
    connection to the same log), in a thread from the start while this one walks the chain, on another core, this
    one taking its share once its walk is done; the first problem of either is the log's. ``deep`` also runs
    SQLite's own check of the file's structure (``PRAGMA quick_check``). A record dated before the record it
    follows is a break unless the TD accepted it as a clock set back (:func:`accepted_steps`), or ``accepting`` names it
    (record id: its hash; what :func:`step_acceptance` weighs). ``schema`` reads the log's tables, indexes and
    triggers back (:func:`wordjudge.log.connections.missing_or_changed`). Never raises for what it finds: a broken chain
    is a :class:`Verification` naming the first bad record. Raises :class:`sqlite3.Error` (or
    :class:`psycopg.Error`, for a log in PostgreSQL) if the log cannot be read.
    """
    changed = schema(connection)
    if changed:
        problem = Message("chain.problem.schema_changed", parts=", ".join(changed))
        return Verification(False, 0, GENESIS, 1, problem, heads=len(marks))
    previous = _starting_point(connection, since)
    if isinstance(previous, Verification):
        return previous
    start = previous.id or 0
    checks = Checks(plan(start, read_head(connection).id or 0, RECORD_RULES, dialect_of(connection), deep=deep))
    helper = threading.Thread(target=checks.work, args=(side,), name="wordjudge-chain-check") if side else None
    if helper is not None:
        helper.start()  # the database's checks, on another core, while this thread walks the chain
    walk = _Walk(previous, marks, {**accepted_steps(connection), **(accepting or {})})
    try:
        walked = walk.through(connection, start)
        checks.work(connection)  # what is left of them, the walk done
    except BaseException:
        checks.abandon()  # the walk could not be read: the checks not begun are not worth waiting for
        raise
    finally:
        if helper is not None:
            helper.join()  # never left at work on the side connection, which the caller closes next
    bad = _first_problem(walked, checks.first(), _checkpoint_problem(connection))
    if bad is None:
        return Verification(True, walk.count, walk.head, since=start, heads=len(marks))
    head = walk.head if bad[0] is None or (walk.head.id or 0) < bad[0] else _head_before(connection, bad[0])
    return Verification(False, head.records - previous.records, head, bad[0], bad[1], since=start, heads=len(marks))


def _starting_point(connection: AnyConnection, since: Checkpoint | None) -> Head | Verification:
    """Where the check starts: the genesis, or the checkpoint ``since``'s record, if it is there with its hash (else
    the failed check that says it is not)."""
    if since is None:
        return GENESIS
    stamp = record_stamp(connection, since.record_id)
    if stamp is not None and stamp[0] == since.hash:
        return Head(since.record_id, since.record_id, since.hash, stamp[1])
    checked = {"id": str(since.record_id), "hash": since.hash[:HEAD_HEX]}
    if stamp is None:
        problem = Message("chain.problem.checkpoint_missing", **checked)
    else:
        problem = Message("chain.problem.checkpoint_rewritten", **checked, now=stamp[0][:HEAD_HEX])
    return Verification(False, 0, GENESIS, since.record_id, problem, since=since.record_id)


Problem = tuple[int | None, Message]  # the first bad record's id (None: the file itself), and what is wrong


def _first_problem(walked: Problem | None, checked: Problem | None, cut: Problem | None) -> Problem | None:
    """The log's first problem, of the walk's (``walked``), the database's checks' (``checked``: on a record the
    walk also found, the more telling) and the checkpoints' (``cut``: a checkpoint's record that is there but
    changed says less than the record's own problem)."""
    bad = walked
    if checked is not None and (bad is None or checked[0] is None or bad[0] is None or checked[0] <= bad[0]):
        bad = checked
    if cut is not None and (bad is None or (bad[0] is not None and cut[0] is not None and cut[0] < bad[0])):
        bad = cut
    return bad


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
    """The record-by-record part of :func:`verify_chain`: one tight loop (it runs a million times). What the
    database can check alone, it checks meanwhile (:mod:`wordjudge.log.record_checks`)."""

    def __init__(self, previous: Head, marks: Sequence[HeadMark], accepted: Mapping[int, str]) -> None:
        self.head = previous
        self.given = marks
        self.marks: dict[int, list[HeadMark]] = {}
        for mark in marks:
            self.marks.setdefault(mark.id, []).append(mark)
        self.count = 0
        self.accepted = accepted  # record id: its hash, a step back in time the TD accepted

    def through(self, connection: AnyConnection, start: int) -> Problem | None:
        """Walk every record after ``start``, then the heads given beyond the last: the first problem met, if any."""
        try:
            # PostgreSQL's rows are streamed: a million records are never all in memory (SQLite reads as it goes).
            stream = getattr(connection, "stream", connection.execute)
            self.records(stream(_ROWS, (start,)))
            last = self.head.id or 0
            beyond = [mark for mark in self.given if mark.id > last]
            if beyond:
                raise _Broken(last + 1, _cut_off(last, min(beyond, key=lambda mark: mark.id)))
        except _Broken as broken:
            return broken.record_id, broken.problem
        return None

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
                elif not in_order(created_at, last_time):
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
