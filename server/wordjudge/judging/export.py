"""Exporting audit records as CSV or JSON Lines, for the TD and for archives.

Exports are the TD's view: every field, per-word results included. JSON Lines keep each record's data as
it is (an archive a program reads); CSV is for a person with a spreadsheet: one row per record, per-word
results as ``QI ✓ ZA ✗``, the consequence as its sentence, and the words as the board held them (``split_of``: a
lexicon's split tiles by its name; DESENGANCHARIAIS, and B-A-NG-O-R tile by tile where a tile could be read two
ways; a lexicon it does not know keeps the stored form, ``BA[NG]OR``, which says the tiles as well).

A challenge's row also carries its final verdict after its re-checks, reissues and rulings (each of which is a
row of its own, with ``parent_id``): ``final_verdict`` (empty while a re-check awaits the TD's ruling),
``final_source`` (``original``, ``recheck``, ``reissue``, ``ruling`` or ``awaiting_ruling``) and
``final_record_id``, the record that gave it; so a sheet filtered on challenges counts each once, finally. Those
columns are empty on the other rows, and on every row of an export made without the log's families.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any, TextIO

from wordjudge.judging.final_verdict import LinkedFamilies, decision
from wordjudge.log.chain import head_text
from wordjudge.model.records import Kind, Record
from wordjudge.words.tiles import shown_word, stored_tiles

#: A lexicon's split tiles (:attr:`wordjudge.words.profile.Profile.split`) by its name; None: not known.
SplitOf = Callable[[str], Sequence[str] | None]


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


CSV_COLUMNS = [
    "id",
    "created_at",
    "kind",
    "parent_id",
    "event",
    "division",
    "round",
    "table",
    "actor",
    "channel",
    "words_typed",
    "words",
    "lexicon",
    "fingerprint",
    "verdict",
    "final_verdict",
    "final_source",
    "final_record_id",
    "results",
    "rule",
    "consequence",
    "request_id",
    "agrees",
    "note",
    "software_version",
    "prev_hash",
    "hash",
    "head",
    "salt",
    "change",
]
# "change": a change record's change (what, subject, before, after), empty for an adjudication.
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): a note typed by a TD or
# a device's name could then reach out of the sheet. In CSV only, such a cell gets a leading apostrophe, which
# spreadsheets show as text; JSON Lines keep every value as it is.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


_COMPUTED = frozenset({"head", "final_verdict", "final_source", "final_record_id"})


def record_data(record: Record, families: LinkedFamilies | None = None) -> dict[str, Any]:
    """A record as plain JSON-ready data, in export column order; a challenge's final verdict from ``families``
    (:func:`wordjudge.judging.final_verdict.linked_families`), if given."""
    # Not dataclasses.asdict: its deep copies were most of an export's time.
    data = {column: getattr(record, column) for column in CSV_COLUMNS if column not in _COMPUTED}
    data["head"] = head_text(record.id, record.hash)  # its place in the chain, as dockets print it
    data |= _final(record, families)
    return {column: _plain(data[column]) for column in CSV_COLUMNS}


def _final(record: Record, families: Mapping[int, Sequence[Any]] | None) -> dict[str, Any]:
    if families is None or record.kind is not Kind.CHALLENGE:
        return {"final_verdict": None, "final_source": None, "final_record_id": None}
    final = decision(record, families.get(record.id, ()))
    return {"final_verdict": final.verdict, "final_source": final.source, "final_record_id": final.record_id}


def lines(
    records: Iterable[Record],
    format: ExportFormat,
    families: LinkedFamilies | None = None,
    split_of: SplitOf | None = None,
) -> Iterator[str]:
    """The export of ``records``, one line at a time (for CSV, the header first): nothing is held but a line (and
    ``families``, the log's few linked records, for the challenges' final verdicts; ``split_of``: see the module's
    docstring)."""
    if format is ExportFormat.JSONL:
        for record in records:
            yield json.dumps(record_data(record, families), ensure_ascii=False) + "\n"
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for record in records:
        data = record_data(record, families)
        split = None if split_of is None else split_of(record.lexicon)
        if split is not None:
            data["words"] = [shown_word(stored_tiles(word), split) for word in record.words]
        writer.writerow([_neutralised(_readable(column, data[column])) for column in CSV_COLUMNS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()  # the header alone: there was no record


def chunks(
    records: Iterable[Record],
    format: ExportFormat,
    size: int = 64 * 1024,
    families: LinkedFamilies | None = None,
    split_of: SplitOf | None = None,
) -> Iterator[str]:
    """:func:`lines`, gathered in pieces of about ``size`` characters (for a streamed response)."""
    pending: list[str] = []
    held = 0
    for line in lines(records, format, families, split_of):
        pending.append(line)
        held += len(line)
        if held >= size:
            yield "".join(pending)
            pending, held = [], 0
    if pending:
        yield "".join(pending)


def export(
    records: Iterable[Record],
    out: TextIO,
    format: ExportFormat,
    families: LinkedFamilies | None = None,
    split_of: SplitOf | None = None,
) -> int:
    """Write ``records`` to ``out``; return how many were written. ``families``
    (:func:`wordjudge.judging.final_verdict.linked_families`) gives the challenges' final verdicts; ``split_of``
    the lexicons' split tiles (see the module's docstring)."""
    count = 0

    def counted() -> Iterator[Record]:
        nonlocal count
        for record in records:
            count += 1
            yield record

    for line in lines(counted(), format, families, split_of):
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
