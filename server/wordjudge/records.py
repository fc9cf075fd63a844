"""What the audit log holds: the record model, its canonical (hashed) encoding and its SQL mapping.

A challenge, re-adjudication, reissue or ruling is an :class:`Entry` when the adjudication
service builds it and a :class:`Record` once the log has given it an id, a time and its place
in the hash chain. :class:`RecordFilter` says which records to list or export. The log itself,
its writer and its verification are in :mod:`wordjudge.audit`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    CHALLENGE = "challenge"
    RECHECK = "recheck"  # re-adjudication of the same words (WESPA 3.10.10)
    REISSUE = "reissue"  # corrected words for a slip that did not match the board (3.10.11)
    RULING = "ruling"  # the TD's final ruling


class Verdict(StrEnum):
    ACCEPTABLE = "acceptable"
    UNACCEPTABLE = "unacceptable"


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
    verdict: Verdict
    results: tuple[dict[str, Any], ...]  # per-word results: for the TD only
    rule: str
    consequence: dict[str, Any]
    request_id: str
    agrees: bool | None = None  # for a recheck or reissue: same verdict as its parent?
    note: str | None = None

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
        data = {name: getattr(self, name) for name in _HASHED_FIELDS}
        if self.salt is None:
            del data["salt"]
        return data

    @property
    def hash_is_public(self) -> bool:
        """Whether the hash may leave the server to a device or docket: only a salted one reveals nothing."""
        return self.salt is not None


def canonical(data: dict[str, Any]) -> bytes:
    """The canonical encoding the chain hashes: JSON, sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def record_hash(record: Record) -> str:
    return hashlib.sha256(canonical(record.hashed_fields())).hexdigest()


@dataclass(frozen=True)
class RecordFilter:
    """What to list or export; every field is optional."""

    division: str | None = None
    round: int | None = None
    table: str | None = None
    kind: Kind | None = None
    verdict: Verdict | None = None
    actor: str | None = None
    since: str | None = None  # UTC ISO time, inclusive
    until: str | None = None  # UTC ISO time, exclusive
    needs_ruling: bool | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses, params = [], []
        for column, value in (
            ("division", self.division),
            ("round", self.round),
            ("table_label", self.table),
            ("kind", self.kind),
            ("verdict", self.verdict),
            ("actor", self.actor),
        ):
            if value is not None:
                clauses.append(f"r.{column} = ?")
                params.append(str(value) if isinstance(value, StrEnum) else value)
        if self.since is not None:
            clauses.append("r.created_at >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("r.created_at < ?")
            params.append(self.until)
        if self.needs_ruling is not None:
            clauses.append(("" if self.needs_ruling else "NOT ") + NEEDS_RULING)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


# A record needs a ruling when a re-adjudication of it disagreed and no ruling on it came after (WESPA
# 3.10.10). A reissue is not a disagreement: it adjudicates corrected words.
NEEDS_RULING = """EXISTS (
    SELECT 1 FROM records c WHERE c.parent_id = r.id AND c.kind = 'recheck' AND c.agrees = 0
    AND NOT EXISTS (SELECT 1 FROM records x WHERE x.parent_id = r.id AND x.kind = 'ruling' AND x.id > c.id))"""

_JSON_COLUMNS = {"words_typed", "words", "results", "consequence"}
COLUMNS = [f.name for f in fields(Record)]  # "table" is stored as table_label: TABLE is an SQL keyword
_SQL_COLUMNS = ["table_label" if name == "table" else name for name in COLUMNS]
SELECT_RECORDS = "SELECT " + ", ".join(f"r.{c}" for c in _SQL_COLUMNS) + " FROM records r"
INSERT_RECORD = f"INSERT INTO records ({', '.join(_SQL_COLUMNS)}) VALUES ({', '.join('?' for _ in _SQL_COLUMNS)})"
ENTRY_FIELDS = [f.name for f in fields(Entry)]
_HASHED_FIELDS = [name for name in COLUMNS if name != "hash"]


def to_row(record: Record) -> list[Any]:
    row = []
    for name in COLUMNS:
        value = getattr(record, name)
        if name in _JSON_COLUMNS:
            value = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, StrEnum):
            value = value.value
        elif isinstance(value, bool):
            value = int(value)
        row.append(value)
    return row


def from_row(row: tuple[Any, ...]) -> Record:
    data = dict(zip(COLUMNS, row, strict=True))
    for name in _JSON_COLUMNS:
        data[name] = json.loads(data[name])
    data["words_typed"] = tuple(data["words_typed"])
    data["words"] = tuple(data["words"])
    data["results"] = tuple(data["results"])
    data["kind"] = Kind(data["kind"])
    data["verdict"] = Verdict(data["verdict"])
    if data["agrees"] is not None:
        data["agrees"] = bool(data["agrees"])
    return Record(**data)
