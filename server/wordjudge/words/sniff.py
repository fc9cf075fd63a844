"""What a lexicon file looks like, from its first bytes, for the error that says it is not what it was given as.

A KWG that is a gzip file, a Zyzzyva database that is a text list: each kind is said as a catalogue message
(``error.sniff.*``) naming it and what to do, which a reader's error takes as its ``looks`` parameter:
"…, it looks like text: if it is a word list, add it as a word list".
"""

from __future__ import annotations

import codecs

from wordjudge.base.errors import Message

GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite 3 database file
ZIP_MAGIC = b"PK\x03\x04"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_TEXT_SAMPLE = 4096  # bytes looked at to tell text: a word list's first lines


def looks_like(head: bytes) -> Message:
    """What the file whose first bytes are ``head`` looks like, as a message naming the kind and what to do.

    Only the first few KiB are looked at: ``head`` may be the whole file or its start.
    """
    if not head:
        return Message("error.sniff.empty")
    if head.startswith(GZIP_MAGIC):
        return Message("error.sniff.gzip")
    if head.startswith(SQLITE_MAGIC):
        return Message("error.sniff.sqlite")
    if head.startswith(ZIP_MAGIC):
        return Message("error.sniff.zip")
    if head.startswith(_UTF16_BOMS) or _is_text(head[:_TEXT_SAMPLE]):
        return Message("error.sniff.text")
    if looks_like_kwg(head):
        return Message("error.sniff.kwg")
    return Message("error.sniff.unknown")


def looks_like_kwg(head: bytes) -> bool:
    """Whether ``head`` starts as a KWG does: its node 0 (a little-endian u32) holds tile 0, the end flag set and
    the accepts flag clear (see :mod:`wordjudge.words.kwg`)."""
    return len(head) >= 4 and head[3] == 0 and head[2] & 0xC0 == 0x40


def _is_text(sample: bytes) -> bool:
    """Whether ``sample`` reads as UTF-8 text: no NUL byte (a binary format has some in its first KiB; a KWG has
    one at byte 3) and valid UTF-8, but for a character the sample cuts in two at its end."""
    if b"\x00" in sample:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    return True
