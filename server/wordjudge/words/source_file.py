"""A lexicon file as the TD gives it, before any reader looks inside: a regular file of a size a lexicon has.

``lexicon add`` must end within seconds, in bounded memory, whatever it is given: a link to ``/dev/zero`` or a
named pipe is never opened for reading (a read from either may never end), a file bigger than any lexicon is
refused by its size before a byte of it is read, and nothing is read past that size even if the file grows
while it is read. Each refusal is a :class:`WordListError` naming the file, what it is and what to do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from wordjudge.base.errors import WordListError
from wordjudge.base.messages import Message

#: More words than this is not a lexicon (the biggest, Polish OSPS, has about 3.5 million).
MAX_WORDS = 10_000_000
#: The biggest text list or KWG file read (and a gzipped list's text once decompressed): the biggest real ones
#: are tens of MiB (CSW24 with its definitions, about 20 MiB; OSPS's 3.5 million words as text, about 45 MiB).
MAX_SOURCE_BYTES = 256 << 20
#: The biggest Zyzzyva database read: SQLite reads it a page at a time, so it may be bigger than a text list (a
#: Zyzzyva database also holds definitions, hooks and indexes: about 100 MiB for CSW).
MAX_DATABASE_BYTES = 2 << 30


def checked_size(path: Path, limit: int) -> int:
    """The size of the file at ``path`` (a link is followed), after checking that it is a regular file of at most
    ``limit`` bytes. Raises :class:`WordListError` naming the file if it cannot be reached, is a device, a named
    pipe, a socket or a folder, or is bigger than ``limit``."""
    try:
        info = path.stat()
    except OSError as exc:
        raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    return _check(path, info, limit)


def read_bounded(path: Path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of the file at ``path``, after the checks of :func:`checked_size`; never more than ``limit``
    bytes are read. Raises :class:`WordListError` naming the file as :func:`checked_size` does."""
    checked_size(path, limit)  # before opening: opening a named pipe for reading waits for a writer
    try:
        # O_NONBLOCK: should the path have become a named pipe since, opening it does not wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    with os.fdopen(descriptor, "rb") as handle:
        try:
            _check(path, os.fstat(descriptor), limit)  # what was opened, whatever the path named before
            data = handle.read(limit + 1)
        except OSError as exc:
            raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    if len(data) > limit:  # it grew while it was read
        raise WordListError("error.word_list.too_big", path=str(path), size=len(data), max=_mib(limit))
    return data


def _check(path: Path, info: os.stat_result, limit: int) -> int:
    if not stat.S_ISREG(info.st_mode):
        raise WordListError("error.word_list.not_a_file", path=str(path), what=_kind(info.st_mode))
    if info.st_size > limit:
        raise WordListError("error.word_list.too_big", path=str(path), size=info.st_size, max=_mib(limit))
    return info.st_size


def _kind(mode: int) -> Message:
    """What a file that is not a regular one is, for the message that refuses it."""
    if stat.S_ISDIR(mode):
        return Message("error.word_list.kind.folder")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return Message("error.word_list.kind.device")
    if stat.S_ISFIFO(mode):
        return Message("error.word_list.kind.fifo")
    return Message("error.word_list.kind.other")


def _mib(size: int) -> str:
    """A size limit for a message: ``256 MiB``, ``2 GiB``."""
    return f"{size >> 30} GiB" if size >= 1 << 30 and not size % (1 << 30) else f"{size >> 20} MiB"
