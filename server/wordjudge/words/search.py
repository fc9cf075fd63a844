"""The console's search box: one line of text read as record filters.

A TD is called to a table with a docket in hand. What they type or scan is one of:

- what the docket's QR code holds (a USB barcode scanner types it): ``wordjudge:challenge:54`` or
  ``wordjudge:challenge:54:1f0c2a...`` (the record's number and, when public, the start of its hash);
- the record number printed on the docket: ``54`` or ``#54``;
- a table: ``table 12``, ``table:12`` or ``t12``;
- one or more words: ``QI ZA`` (records whose words include all of them), in any case.

Words and a table combine (``QI table 12``); a record number or a QR code stands alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wordjudge.base.errors import InvalidInput
from wordjudge.model.input_rules import MAX_WORDS, TABLE_PATTERNS
from wordjudge.words.normal_form import normalise
from wordjudge.words.tiles import BUILTIN

if TYPE_CHECKING:
    from wordjudge.words.tiles import TileSet

MAX_QUERY = 200  # characters: a QR text is about 45
SEARCH_HELP = (
    "A record number (54 or #54), a docket's QR code text (wordjudge:challenge:54...), a table (table 12, t12),"
    " or words (QI ZA: records whose words include all of them); words and a table combine."
)

_QR = re.compile(r"^wordjudge:challenge:(\d{1,16})(?::([0-9a-fA-F]{16}))?$")
_RECORD = re.compile(r"^#?(\d{1,16})$")
_TABLE = re.compile(r"^(?:table:(.*)|t:?(\d+))$", re.IGNORECASE)  # table:B7, t12, t:12
_TABLE_RULE = re.compile(TABLE_PATTERNS["names"])  # any label an event may have: numbers are names too


def _read_by_a_set(word: str) -> bool:
    """Whether a built-in tile set reads ``word`` as its tiles (a spelling's marks: L·L, L.L, N~)."""
    for tiles in BUILTIN.values():
        try:
            tiles.readings(word)
        except InvalidInput:
            continue
        return True
    return False


@dataclass(frozen=True)
class Search:
    """What a search text asks for: a record (by number, and hash start from a QR code), or words and a table."""

    record_id: int | None = None
    hash_prefix: str | None = None
    words: tuple[str, ...] = ()
    table: str | None = None


def parse_search(text: str) -> Search:
    """Read the console's search text (see the module's docstring).

    Raises :class:`InvalidInput` naming the part that is none of a record number, a QR code's text, a
    table or a word, or a text that mixes a record number with anything else.
    """
    text = text.strip()
    if len(text) > MAX_QUERY:
        raise InvalidInput("error.search.too_long", max=MAX_QUERY)
    if not text:
        return Search()
    qr = _QR.match(text)
    if qr:
        return Search(record_id=int(qr[1]), hash_prefix=qr[2].lower() if qr[2] else None)
    tokens = [token for token in re.split(r"[\s,;]+", text) if token]
    record = _RECORD.match(tokens[0])
    if record:
        if len(tokens) > 1:
            raise InvalidInput("error.search.record_alone", text=repr(text), record=tokens[0])
        return Search(record_id=int(record[1]))
    words: list[str] = []
    table: str | None = None
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if token.lower() == "table":  # "table 12": the label is the next token
            if position == len(tokens):
                raise InvalidInput("error.search.table_needs_label", text=repr(text))
            token = "table:" + tokens[position]
            position += 1
        label = _TABLE.match(token)
        if label:
            if table is not None:
                raise InvalidInput("error.search.one_table", text=repr(text))
            table = label[1] if label[1] is not None else label[2]
            if not _TABLE_RULE.fullmatch(table):
                raise InvalidInput("error.search.bad_table", text=repr(text), table=repr(table))
            continue
        word = normalise(token)
        # Letters, tiles as stored ([CH]ICO), and the marks a tile is typed with where a set reads them as one
        # (COL·LEGI, COL.LEGI, N~ANDU: not QI-ZA).
        if not word.replace("[", "").replace("]", "").isalpha() and not _read_by_a_set(word):
            raise InvalidInput("error.search.not_a_term", text=repr(text), term=repr(token))
        if word not in words:
            words.append(word)
    if len(words) > MAX_WORDS:
        raise InvalidInput("error.search.too_many_words", text=repr(text), max=MAX_WORDS)
    return Search(words=tuple(words), table=table)


def tile_forms(word: str, tile_sets: Iterable[TileSet]) -> tuple[str, ...]:
    """The forms other than ``word`` it is recorded in, read as the tiles of each of ``tile_sets`` (a lexicon
    served): CHICO is [CH]ICO and CHICO (C then H) with the Spanish set. None for a word no set makes."""
    forms: set[str] = set()
    for tiles in tile_sets:
        try:
            forms.update(tiles.stored(reading) for reading in tiles.readings(word))
        except InvalidInput:  # not made of this set's tiles: recorded in no other form by its lexicons
            continue
    forms.discard(word)
    return tuple(sorted(forms))


def known_name(typed: str, names: Iterable[str]) -> str:
    """The name among ``names`` that ``typed`` is, in any case (a division, a device, a TD): the filters are
    case-insensitive, the log's indexes exact. ``typed`` itself when it is one of them or none is (a name from
    another event), or when it is several in other cases."""
    typed = typed.strip()
    found = {name for name in names if name.casefold() == typed.casefold()}
    return found.pop() if typed not in found and len(found) == 1 else typed
