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
from dataclasses import dataclass

from .errors import InvalidInput
from .input_rules import MAX_WORDS, TABLE_PATTERNS
from .wordlist import normalise

MAX_QUERY = 200  # characters: a QR text is about 45
SEARCH_HELP = (
    "A record number (54 or #54), a docket's QR code text (wordjudge:challenge:54...), a table (table 12, t12),"
    " or words (QI ZA: records whose words include all of them); words and a table combine."
)

_QR = re.compile(r"^wordjudge:challenge:(\d{1,16})(?::([0-9a-fA-F]{16}))?$")
_RECORD = re.compile(r"^#?(\d{1,16})$")
_TABLE = re.compile(r"^(?:table:(.*)|t:?(\d+))$", re.IGNORECASE)  # table:B7, t12, t:12
_TABLE_RULE = re.compile(TABLE_PATTERNS["names"])  # any label an event may have: numbers are names too


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
        raise InvalidInput(f"a search is at most {MAX_QUERY} characters")
    if not text:
        return Search()
    qr = _QR.match(text)
    if qr:
        return Search(record_id=int(qr[1]), hash_prefix=qr[2].lower() if qr[2] else None)
    tokens = [token for token in re.split(r"[\s,;]+", text) if token]
    record = _RECORD.match(tokens[0])
    if record:
        if len(tokens) > 1:
            raise InvalidInput(f"search {text!r}: a record number ({tokens[0]}) stands alone")
        return Search(record_id=int(record[1]))
    words: list[str] = []
    table: str | None = None
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if token.lower() == "table":  # "table 12": the label is the next token
            if position == len(tokens):
                raise InvalidInput(f"search {text!r}: 'table' needs a table after it, e.g. table 12")
            token = "table:" + tokens[position]
            position += 1
        label = _TABLE.match(token)
        if label:
            if table is not None:
                raise InvalidInput(f"search {text!r}: one table at a time")
            table = label[1] if label[1] is not None else label[2]
            if not _TABLE_RULE.fullmatch(table):
                raise InvalidInput(f"search {text!r}: {table!r} is not a table (1 to 10 letters or digits)")
            continue
        word = normalise(token)
        if not word.isalpha():
            raise InvalidInput(
                f"search {text!r}: {token!r} is not a word, a record number (#54), a table (table 12)"
                " or a docket's QR code"
            )
        if word not in words:
            words.append(word)
    if len(words) > MAX_WORDS:
        raise InvalidInput(f"search {text!r}: at most {MAX_WORDS} words")
    return Search(words=tuple(words), table=table)
