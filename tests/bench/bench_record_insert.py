"""What a record costs the audit log's writer: building and hashing it, and inserting it with the schema's parts.

    .venv/bin/python -m tests.bench.bench_record_insert [--records 5000]

Pinned to one core. The record is a 2-word challenge as the server makes it. Inserts go in batches of
100 rows, one statement a batch (as the writer does), WAL and synchronous=FULL, into the real schema
(:data:`wordjudge.storage.audit_schema.SCHEMA`), then into the same without its triggers (the word index and
the tallies), then without the indexes as well: the differences are what each part costs per record.
Times are per record, best of 3, with the 1-minute load average.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import sqlite3
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from wordjudge import __version__
from wordjudge.model.records import ENTRY_FIELDS, Entry, Kind, Record, Verdict, record_body
from wordjudge.storage.audit_schema import SCHEMA

ENTRY = Entry(
    kind=Kind.CHALLENGE,
    parent_id=None,
    event="Benchmark",
    division="Open",
    round=1,
    table="7",
    actor="kiosk-001",
    channel="kiosk",
    words_typed=("cat", "qi"),
    words=("CAT", "QI"),
    lexicon="demo",
    fingerprint="0" * 64,
    verdict=Verdict.UNACCEPTABLE,
    results=(
        {"word": "CAT", "acceptable": True, "source": "demo", "reason": "in demo"},
        {"word": "QI", "acceptable": False, "source": None, "reason": "not in demo"},
    ),
    rule="five-per-word",
    consequence={"text": "Play comes off"},
    request_id="bench-0000000000",
)
BATCH = 100


def build(count: int) -> list[tuple[int, str, str]]:
    """``count`` chained records as the writer builds them: (id, hash, body)."""
    rows, previous = [], "0" * 64
    for n in range(1, count + 1):
        unhashed = Record(
            **{**{name: getattr(ENTRY, name) for name in ENTRY_FIELDS}, "request_id": f"bench-{n:010d}"},
            id=n,
            created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            software_version=__version__,
            prev_hash=previous,
            salt=secrets.token_hex(16),
        )
        body = record_body(unhashed)
        record = replace(unhashed, hash=hashlib.sha256(body).hexdigest())
        rows.append((n, record.hash, body.decode()))
        previous = record.hash
    return rows


def insert(rows: list[tuple[int, str, str]], variant: str) -> float:
    folder = tempfile.mkdtemp(prefix="wordjudge-insert-")
    connection = sqlite3.connect(Path(folder) / "a.sqlite3", isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    for name, statement in SCHEMA:
        if variant != "full" and statement.startswith("CREATE TRIGGER") and not name.endswith(("update", "delete")):
            continue
        if variant == "no triggers, no indexes" and statement.startswith(("CREATE INDEX", "CREATE UNIQUE INDEX")):
            continue
        connection.execute(statement)
    started = time.perf_counter()
    for k in range(0, len(rows), BATCH):
        chunk = rows[k : k + BATCH]
        connection.execute("BEGIN IMMEDIATE")
        sql = "INSERT INTO records (id, hash, body) VALUES " + ", ".join(["(?, ?, ?)"] * len(chunk))
        connection.execute(sql, [value for row in chunk for value in row])
        connection.execute("COMMIT")
    seconds = time.perf_counter() - started
    connection.close()
    return seconds / len(rows) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=5000)
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    load = os.getloadavg()[0]
    times = []
    for _ in range(3):
        started = time.perf_counter()
        rows = build(args.records)
        times.append((time.perf_counter() - started) / args.records * 1e6)
    print(f"{args.records} records, one core, load {load:.2f}; microseconds per record, best of 3")
    print("| part | us/record |")
    print("|---|---|")
    print(f"| build + hash (Python, holds the interpreter) | {min(times):.0f} |")
    for variant in ("full", "no triggers", "no triggers, no indexes"):
        print(
            f"| insert, batches of {BATCH}, with commit: {variant} | {min(insert(rows, variant) for _ in range(3)):.0f} |"
        )


if __name__ == "__main__":
    main()
