"""What the audit log holds: the record model, its canonical (hashed) encoding and its SQL mapping.

A challenge, re-adjudication, reissue or ruling is an :class:`Entry` when the adjudication
service builds it and a :class:`Record` once the log has given it an id, a time and its place
in the hash chain. :class:`RecordFilter` says which records to list or export. The log itself,
its writer and its verification are in :mod:`wordjudge.log.audit`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from wordjudge.base.errors import Conflict, InvalidInput, Message
from wordjudge.model.input_rules import REQUEST_ID_PATTERN


class Kind(StrEnum):
    CHALLENGE = "challenge"
    RECHECK = "recheck"  # re-adjudication of the same words (WESPA 3.10.10)
    REISSUE = "reissue"  # corrected words for a slip that did not match the board (3.10.11)
    RULING = "ruling"  # the TD's final ruling
    CHANGE = "change"  # a TD's change to the event, its divisions, TD accounts or devices (no words, no verdict)


class Verdict(StrEnum):
    ACCEPTABLE = "acceptable"
    UNACCEPTABLE = "unacceptable"


def kind_message(kind: Kind) -> Message:
    """The kind of record in words (``verdict.kind.<kind>``): challenge, recheck, reissue, ruling."""
    return Message(f"verdict.kind.{kind.value}")


def verdict_message(verdict: Verdict) -> Message:
    """The verdict in words (``verdict.<verdict>``): ACCEPTABLE or UNACCEPTABLE."""
    return Message(f"verdict.{verdict.value}")


def verdict_of(record: Entry) -> Verdict:
    """The verdict of an adjudication record (challenge, recheck, reissue, ruling).

    Raises :class:`InvalidInput` (``error.record.no_verdict``) for a change record, which has none: the
    places that need a verdict (a docket, a final verdict) name the record instead of failing.
    """
    if record.verdict is None:
        raise InvalidInput("error.record.no_verdict", id=str(getattr(record, "id", "")), kind=record.kind.value)
    return record.verdict


@dataclass(frozen=True)
class Entry:
    """A record to append, as the adjudication service builds it."""

    kind: Kind
    parent_id: int | None
    event: str
    division: str
    round: int | None
    table: str
    actor: str
    channel: str
    words_typed: tuple[str, ...]
    words: tuple[str, ...]
    lexicon: str
    fingerprint: str
    verdict: Verdict | None  # None only for a change record
    results: tuple[dict[str, Any], ...]  # per-word results: for the TD only
    rule: str
    consequence: dict[str, Any]
    request_id: str
    agrees: bool | None = None  # for a recheck or reissue: same verdict as its parent?
    note: str | None = None
    # For a change record only: {"what": key, "subject": ..., "before": {...} | None, "after": {...} | None}.
    # Left out of the hashed body when None (as ``salt`` is), so that every record written before it
    # existed hashes byte for byte as it did.
    change: dict[str, Any] | None = None

    def same_request(self, other: Entry) -> bool:
        """Whether ``other`` asks for the same thing (a retry), so that its record can be given back."""
        return (self.kind, self.parent_id, self.division, self.round, self.table, self.words, self.note) == (
            other.kind,
            other.parent_id,
            other.division,
            other.round,
            other.table,
            other.words,
            other.note,
        ) and (self.kind is not Kind.RULING or self.verdict == other.verdict)


@dataclass(frozen=True)
class Record(Entry):
    """An entry as stored: with its id, time, software version and place in the hash chain."""

    id: int = 0
    created_at: str = ""
    software_version: str = ""
    prev_hash: str = ""
    hash: str = ""
    # 128 random bits inside the hashed data. Without them the hash would commit to the per-word results
    # with nothing else unknown to the device that made the record: it could try the 2^8 combinations and
    # learn which word failed. Stored in the log (so the chain verifies from the file alone), never sent to
    # a device. None for records written before salts existed, which were hashed without one.
    salt: str | None = None

    def hashed_fields(self) -> dict[str, Any]:
        """Every field except ``hash``: what the hash covers (``salt`` only when the record has one)."""
        # Not dataclasses.asdict: its deep copy is most of the cost of appending a record.
        return _covered({name: getattr(self, name) for name in _HASHED_FIELDS})

    @property
    def hash_is_public(self) -> bool:
        """Whether the hash may leave the server to a device or docket: only a salted one reveals nothing."""
        return self.salt is not None


def canonical(data: dict[str, Any]) -> bytes:
    """The canonical encoding the chain hashes: JSON, sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def record_body(record: Record) -> bytes:
    """What the log stores of a record and its hash covers: the canonical encoding of every field but the hash."""
    return canonical(record.hashed_fields())


def record_hash(record: Record) -> str:
    return hashlib.sha256(record_body(record)).hexdigest()


def chained(
    entry: Entry, *, id: int, created_at: str, software_version: str, prev_hash: str, salt: str | None
) -> tuple[Record, bytes]:
    """The record of ``entry`` at its place in the chain, hashed, with its body (what the hash covers).

    The same record and body as building the unhashed record, taking :func:`record_body` and adding the
    hash, with one record built instead of two: the log's writer calls this for every record it appends.
    """
    data = {name: getattr(entry, name) for name in ENTRY_FIELDS}
    data.update(id=id, created_at=created_at, software_version=software_version, prev_hash=prev_hash, salt=salt)
    body = canonical(_covered(dict(data)))
    return Record(**data, hash=hashlib.sha256(body).hexdigest()), body


def from_body(body: str | bytes, hash: str) -> Record:
    """The record stored as ``body`` (see :func:`record_body`) with its ``hash``.

    Raises :class:`ValueError` (or :class:`TypeError`, :class:`KeyError`) for a body that is not a record.
    """
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("a record's body is a JSON object")
    data["kind"] = Kind(data["kind"])
    data["verdict"] = None if data["verdict"] is None else Verdict(data["verdict"])
    for name in ("words_typed", "words", "results"):
        data[name] = tuple(data[name])
    return Record(**data, hash=hash)


def utc_time(moment: datetime | str, what: str = "time") -> str:
    """A time as the log stores it (UTC, ISO 8601 with milliseconds), from a datetime or ISO text with a zone.

    The one parser of times for record filters, in the API and the CLI alike. Raises
    :class:`InvalidInput` for text that is not an ISO time, or a time without a zone.
    """
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment.strip().replace("z", "Z"))
        except ValueError:
            raise InvalidInput("error.time.not_iso", what=what, time=repr(moment)) from None
    if moment.tzinfo is None:
        raise InvalidInput("error.time.no_zone", what=what, time=moment.isoformat())
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Appended:
    """What an append answers: the record, and whether the request was a retry (``replayed``: this is the
    original record, nothing was added)."""

    record: Record
    replayed: bool


class FilterSql(Protocol):
    """What a filter's SQL needs of its backend: :class:`wordjudge.storage.dialect.SqlText` (a layer above)."""

    def equal_any_case(self, column: str) -> str: ...

    def one_of(self, column: str, values: Sequence[int], *, negated: bool = False) -> tuple[str, Any]: ...


@dataclass(frozen=True)
class RecordFilter:
    """What to list or export; every field is optional."""

    division: str | None = None
    round: int | None = None
    table: str | None = None
    kind: Kind | None = None
    verdict: Verdict | None = None
    actor: str | None = None
    since: str | None = None  # UTC ISO time as stored (utc_time), inclusive
    until: str | None = None  # UTC ISO time as stored (utc_time), exclusive
    needs_ruling: bool | None = None  # with ``awaiting``: challenges awaiting the TD's ruling, or all but those
    # The ids of the challenges whose final verdict awaits a ruling, as final_verdict.awaiting_ruling decides them
    # (from each challenge's whole family: a reissue or a ruling settles it): what ``needs_ruling`` selects by.
    awaiting: frozenset[int] | None = None
    word: str | None = None  # a normalised word: records whose words include it
    event: str | None = None
    words: tuple[str, ...] = ()  # normalised words: records whose words include every one
    # A searched word's other forms, as the tiles of a lexicon served ("[CH]ICO" for CHICO): a record holding any
    # of a word's forms holds the word.
    word_forms: tuple[tuple[str, tuple[str, ...]], ...] = ()
    record_id: int | None = None
    hash_prefix: str | None = None  # lower-case hex: the record's hash starts with it (a docket's QR code)

    def where(self, dialect: FilterSql) -> tuple[str, list[Any]]:
        """The SQL ``WHERE`` clause (empty if nothing is asked) and its parameters, in ``dialect``'s words."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("event", self.event),
            ("division", self.division),
            ("round", self.round),
            ("kind", self.kind),
            ("verdict", self.verdict),
            ("actor", self.actor),
        ):
            if value is not None:
                clauses.append(f"r.{column} = ?")
                params.append(str(value) if isinstance(value, StrEnum) else value)
        if self.verdict is not None and self.division is None:
            # Not through records_verdict (verdict, division): a verdict alone is most of the log, which that index
            # gives in division order, to be sorted whole for the newest; walking the ids down finds a page at once.
            clauses[clauses.index("r.verdict = ?")] = "r.verdict || '' = ?"
        if self.table is not None:
            # In any case: through the records_table index (SQLite's NOCASE, PostgreSQL's lower()).
            clauses.append(dialect.equal_any_case("r.table_label"))
            params.append(self.table)
        if self.record_id is not None:
            clauses.append("r.id = ?")
            params.append(self.record_id)
        if self.hash_prefix is not None:
            clauses.append("substr(r.hash, 1, ?) = ?")
            params += [len(self.hash_prefix), self.hash_prefix]
        # Times never go backwards along the chain (the chain check holds it), so a time range is an id
        # range: found through the time index once, then walked in id order like any other list.
        if self.since is not None:
            clauses.append(f"r.id >= coalesce(({FIRST_AT}), {NO_ID})")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"r.id < coalesce(({FIRST_AT}), {NO_ID})")
            params.append(self.until)
        forms = dict(self.word_forms)
        for word in dict.fromkeys(((self.word,) if self.word is not None else ()) + self.words):
            spelt = (word, *forms.get(word, ()))
            held = "word = ?" if len(spelt) == 1 else f"word IN ({', '.join('?' * len(spelt))})"
            clauses.append(f"r.id IN (SELECT record_id FROM record_words WHERE {held})")
            params += spelt
        if self.needs_ruling is not None:
            if self.awaiting is None:
                raise ValueError("needs_ruling selects by `awaiting`: give the challenges awaiting a ruling")
            clause, param = dialect.one_of("r.id", sorted(self.awaiting), negated=not self.needs_ruling)
            clauses.append(clause)
            params.append(param)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


# The first record at or after a time (its id), through the time index.
FIRST_AT = "SELECT t.id FROM records t WHERE t.created_at >= ? ORDER BY t.created_at, t.id LIMIT 1"
NO_ID = 2**62  # beyond any record: no record at or after that time

# A record is read from its body (the truth its hash covers); the other columns are generated from the
# body by SQLite, for the filters and indexes (audit_schema.py).
SELECT_RECORDS = "SELECT r.id, r.hash, r.body FROM records r"
INSERT_RECORD = "INSERT INTO records (id, hash, body) VALUES (?, ?, ?)"
ENTRY_FIELDS = [f.name for f in fields(Entry)]
_HASHED_FIELDS = [f.name for f in fields(Record) if f.name != "hash"]


def _covered(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a record's fields but its hash) without what the hash leaves out when absent: a salt (records
    from before salts) and a change (every record but a change record), so that old records hash as they did."""
    if data["salt"] is None:
        del data["salt"]
    if data["change"] is None:
        del data["change"]
    return data


def from_row(row: tuple[Any, ...]) -> Record:
    """A record read with :data:`SELECT_RECORDS`."""
    return from_body(row[2], row[1])


def conflicting_request(request_id: str, record_id: int) -> Conflict:
    """The refusal of a request id sent again with a different request (409)."""
    return Conflict("error.request.id_reused", request_id=request_id, id=str(record_id))


def check_request_id(request_id: str) -> str:
    """Return a valid client request id or raise :class:`InvalidInput`."""
    if _REQUEST_ID.fullmatch(request_id) is None:
        raise InvalidInput("error.request.id_invalid")
    return request_id


_REQUEST_ID = re.compile(REQUEST_ID_PATTERN)
