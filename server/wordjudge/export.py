"""Exporting audit records as CSV or JSON Lines, for the TD and for archives.

Exports are the TD's view: every field, per-word results included. JSON Lines keep each record's data as
it is (an archive a program reads); CSV is for a person with a spreadsheet: one row per record, per-word
results as ``QI ✓ ZA ✗`` and the consequence as its sentence.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any, TextIO

from .chain import head_text
from .records import Record


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


CSV_COLUMNS = [
    "id", "created_at", "kind", "parent_id", "event", "division", "round", "table", "actor", "channel",
    "words_typed", "words", "lexicon", "fingerprint", "verdict", "results", "rule", "consequence", "request_id",
    "agrees", "note", "software_version", "prev_hash", "hash", "head", "salt", "change",
]  # fmt: skip
# "change": a change record's change (what, subject, before, after), empty for an adjudication.
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): a note typed by a TD or
# a device's name could then reach out of the sheet. In CSV only, such a cell gets a leading apostrophe, which
# spreadsheets show as text; JSON Lines keep every value as it is.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def record_data(record: Record) -> dict[str, Any]:
    """A record as plain JSON-ready data, in export column order."""
    # Not dataclasses.asdict: its deep copies were most of an export's time.
    data = {column: getattr(record, column) for column in CSV_COLUMNS if column != "head"}
    data["head"] = head_text(record.id, record.hash)  # its place in the chain, as dockets print it
    return {column: _plain(data[column]) for column in CSV_COLUMNS}


def lines(records: Iterable[Record], format: ExportFormat) -> Iterator[str]:
    """The export of ``records``, one line at a time (for CSV, the header first): nothing is held but a line."""
    if format is ExportFormat.JSONL:
        for record in records:
            yield json.dumps(record_data(record), ensure_ascii=False) + "\n"
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for record in records:
        data = record_data(record)
        writer.writerow([_neutralised(_readable(column, data[column])) for column in CSV_COLUMNS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()  # the header alone: there was no record


def chunks(records: Iterable[Record], format: ExportFormat, size: int = 64 * 1024) -> Iterator[str]:
    """:func:`lines`, gathered in pieces of about ``size`` characters (for a streamed response)."""
    pending: list[str] = []
    held = 0
    for line in lines(records, format):
        pending.append(line)
        held += len(line)
        if held >= size:
            yield "".join(pending)
            pending, held = [], 0
    if pending:
        yield "".join(pending)


def export(records: Iterable[Record], out: TextIO, format: ExportFormat) -> int:
    """Write ``records`` to ``out``; return how many were written."""
    count = 0

    def counted() -> Iterator[Record]:
        nonlocal count
        for record in records:
            count += 1
            yield record

    for line in lines(counted(), format):
        out.write(line)
    return count


def _plain(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _neutralised(cell: str) -> str:
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell


def _readable(column: str, value: Any) -> str:
    """A CSV cell as a person reads it."""
    if column == "results":  # [{"word": "QI", "acceptable": true, ...}, ...] -> QI ✓ ZA ✗
        return " ".join(f"{result['word']} {'✓' if result['acceptable'] else '✗'}" for result in value)
    if column == "consequence":  # a change record has none
        return str(value["text"]) if value else ""
    return _cell(value)


def _cell(value: Any) -> str:
    """A CSV cell: lists and objects as JSON, words joined by spaces, None as empty."""
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return " ".join(value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
