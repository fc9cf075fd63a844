"""Reading word lists: the TD's source files, errata files, and words as typed.

A source is a plain list (one word per line), a Zyzzyva-style text list (``WORD
definition...``: the first token is the word) or a ``score WORD`` playability
list, any of them optionally gzip-compressed. It is UTF-8 with or without a BOM,
with LF, CRLF or CR line ends; blank lines are ignored, and so are comment lines:
``#`` followed by a space, by nothing or by anything but a letter. ``#WORD`` (``#``
right before a letter) is a word marked with ``#``, as some published lists mark new
words: the word is read without the mark, and marked words are counted. The format
is detected from the whole file, and an error for lines that are not words says
which ``--format`` reads them, if one does.

Words are compared in one normal form everywhere (:func:`normalise`): Unicode
NFC, upper case. Nothing here assumes A-Z: a word is any run of Unicode letters
(with combining marks after a letter), so lists with Ñ, Ç, Ä or Ł work as they are.

Any lexicon file, a list, a KWG or a Zyzzyva database, is read through :func:`read_bounded` or checked by
:func:`checked_size` first, so that ``lexicon add`` ends within seconds in bounded memory whatever it is given:
a link to ``/dev/zero`` or a named pipe is never opened for reading (a read from either may never end), a file
bigger than any lexicon is refused by its size before a byte of it is read, and nothing is read past that size
even if the file grows while it is read.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import os
import re
import stat
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from wordjudge.base.errors import InvalidInput, Message, WordListError
from wordjudge.words.normal_form import describe_char, normalise

if TYPE_CHECKING:
    from wordjudge.words.tiles import TileSet

#: Called as ``progress(lines_done, lines_total)`` while a big list is read.
Progress = Callable[[int, int], None]

_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_INNER_SPACES = (b" ", b"\t", b"\x0b", b"\x0c")  # what bytes.split() splits a stripped line at
_INNER_SPACE = re.compile(b"[" + b"".join(_INNER_SPACES) + b"]")
_MARK = "#"  # starts a comment, or marks a word when a letter follows it at once
_SHOWN_MARKED = 3  # marked words quoted in the reading summary
_PROGRESS_EVERY = 20_000
_SHOWN_INVALID = 10  # invalid lines quoted in an error message
#: More words than this is not a lexicon (the biggest, Polish OSPS, has about 3.5 million).
MAX_WORDS = 10_000_000
#: The biggest text list read (and a gzipped list's text once decompressed): the biggest real ones
#: are tens of MiB (CSW24 with its definitions, about 20 MiB; OSPS's 3.5 million words as text, about 45 MiB).
MAX_SOURCE_BYTES = 256 << 20
#: The biggest Zyzzyva database read: SQLite reads it a page at a time, so it may be bigger than a text list (a
#: Zyzzyva database also holds definitions, hooks and indexes: about 100 MiB for CSW).
MAX_DATABASE_BYTES = 2 << 30
#: More lines than this is not a word list: twice :data:`MAX_WORDS`, room for comments and blank lines.
MAX_LINES = 2 * MAX_WORDS
#: A line longer than this is not a word list's (a word and its definition take a few hundred bytes at most).
MAX_LINE_BYTES = 64 << 10


class SourceFormat(StrEnum):
    """How the word is found on each line of a source file; or, for the binary sources read elsewhere
    (:mod:`wordjudge.words.kwg`, :mod:`wordjudge.words.zyzzyva_db`), in the file. See :data:`TEXT_FORMATS`."""

    AUTO = "auto"
    PLAIN = "plain"  # the whole line is the word
    ZYZZYVA = "zyzzyva"  # WORD definition...: the first token
    PLAYABILITY = "playability"  # score WORD: the second token, after an integer
    KWG = "kwg"  # an engine's word graph (wolges, macondo): its DAWG's words
    ZYZZYVA_DB = "zyzzyva-db"  # Zyzzyva's SQLite lexicon database: its words table

    @property
    def description(self) -> str:
        """The format in words, for messages: "a Zyzzyva list (WORD definition...)"."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    SourceFormat.AUTO: "a list of a format to detect",
    SourceFormat.PLAIN: "a plain list (one word per line)",
    SourceFormat.ZYZZYVA: "a Zyzzyva list (WORD definition...)",
    SourceFormat.PLAYABILITY: "a playability list (score WORD)",
    SourceFormat.KWG: "a KWG word graph (wolges, macondo)",
    SourceFormat.ZYZZYVA_DB: "a Zyzzyva lexicon database (SQLite)",
}
#: The formats of text lists, which :func:`read_word_list` reads (and ``--format`` offers).
TEXT_FORMATS = (SourceFormat.AUTO, SourceFormat.PLAIN, SourceFormat.ZYZZYVA, SourceFormat.PLAYABILITY)


def checked_size(path: Path, limit: int) -> int:
    """The size of the file at ``path`` (a link is followed), after checking that it is a regular file of at most
    ``limit`` bytes. Raises :class:`WordListError` naming the file if it cannot be reached, is a device, a named
    pipe, a socket or a folder, or is bigger than ``limit``."""
    try:
        info = path.stat()
    except OSError as exc:
        raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    return _check_file(path, info, limit)


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
            _check_file(path, os.fstat(descriptor), limit)  # what was opened, whatever the path named before
            data = handle.read(limit + 1)
        except OSError as exc:
            raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    if len(data) > limit:  # it grew while it was read
        raise WordListError("error.word_list.too_big", path=str(path), size=len(data), max=_mib(limit))
    return data


def _check_file(path: Path, info: os.stat_result, limit: int) -> int:
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


def word_problem(word: str) -> str | None:
    """Say why ``word`` (already normalised) is not a word, or return None if it is one.

    A word is one or more Unicode letters; a combining mark may follow a letter.
    """
    if not word:
        return "it is empty"
    if word.isalpha():  # the fast path: every character is a letter
        return None
    for index, char in enumerate(word):
        category = unicodedata.category(char)
        if category.startswith("L") or (category.startswith("M") and index > 0):
            continue
        if char.isspace():
            return f"it has a space inside ({describe_char(char)})"
        if category.startswith("N"):
            return f"it has a digit {describe_char(char)}"
        return f"it has {describe_char(char)}, which is not a letter"
    return None


@dataclass(frozen=True)
class InvalidLine:
    """A line of a source that holds no word, and why."""

    line: int
    content: str
    reason: str

    def describe(self, source: str) -> str:
        shown = self.content if len(self.content) <= 60 else self.content[:57] + "..."
        return f"{source}, line {self.line}: {shown!r}: {self.reason}"


@dataclass
class WordList:
    """The words read from one source, with what was found on the way."""

    source_name: str
    source_sha256: str
    format: SourceFormat
    words: set[str] = field(default_factory=set)
    lines: int = 0  # data lines: not blank, not comments
    duplicates: int = 0
    invalid: list[InvalidLine] = field(default_factory=list)
    comments: int = 0  # comment lines skipped
    marked: int = 0  # "#WORD" lines: words marked with '#', read without the mark
    marked_lines: list[tuple[int, str]] = field(default_factory=list)  # the first few, as (line, content)
    detected: bool = False  # the format was detected, not chosen
    tiles: TileSet | None = None  # the words are tile sequences of this set, in its stored form ([CH]ICO)
    tiles_said: Message | None = None  # where a KWG's set came from: error.kwg.how.given, .name or .registry
    tiles_forced: str = ""  # what showed the set does not fit the file, when the TD overrode it (--force-tiles)

    def sorted_words(self) -> list[str]:
        """The unique words sorted by code point (the canonical order)."""
        return sorted(self.words)


def read_word_list(
    path: Path,
    *,
    format: SourceFormat = SourceFormat.AUTO,
    skip_invalid: bool = False,
    progress: Progress | None = None,
    tiles: TileSet | None = None,
) -> WordList:
    """Read the word-list file at ``path``; with ``tiles``, each word as tiles of that set (letters that make a
    tile are that tile: ``CHICO`` is [CH]ICO; a tile in brackets is read as it stands: ``BAN[G]OR``).

    Raises :class:`WordListError` if the file is not a regular file of at most
    :data:`MAX_SOURCE_BYTES` (nor its text, gzipped), cannot be read, is not UTF-8
    text (plain or gzip), has more than :data:`MAX_LINES` lines or one longer than :data:`MAX_LINE_BYTES`, or has
    lines that are not words, or not made of the tiles (unless ``skip_invalid``: then they are left out and
    listed in ``WordList.invalid``).
    """
    data = read_bounded(path, MAX_SOURCE_BYTES)
    return parse_word_list(
        data, source_name=path.name, format=format, skip_invalid=skip_invalid, progress=progress, tiles=tiles
    )


def parse_word_list(
    data: bytes,
    *,
    source_name: str,
    format: SourceFormat = SourceFormat.AUTO,
    skip_invalid: bool = False,
    progress: Progress | None = None,
    tiles: TileSet | None = None,
) -> WordList:
    """Parse the bytes of a word-list source; see :func:`read_word_list`. ``format`` is one of
    :data:`TEXT_FORMATS` (``ValueError`` else: a KWG or a Zyzzyva database has its own reader)."""
    if format not in TEXT_FORMATS:
        raise ValueError(f"{format.description} is not a text list: read it with its own reader")
    source_sha256 = hashlib.sha256(data).hexdigest()
    lines = _text_lines(_decompress(data, source_name), source_name)
    detected = format is SourceFormat.AUTO
    if detected:
        format = detect_format(lines)
    result = _read_lines(lines, source_name, source_sha256, format, progress, tiles)
    result.detected = detected
    if result.invalid and not skip_invalid:
        raise _invalid_lines_error(result, _better_format(lines, result))
    return result


def _read_lines(
    lines: list[bytes],
    source_name: str,
    source_sha256: str,
    format: SourceFormat,
    progress: Progress | None = None,
    tiles: TileSet | None = None,
) -> WordList:
    result = WordList(source_name=source_name, source_sha256=source_sha256, format=format, tiles=tiles)
    total = len(lines)
    # A slice of lines between two progress reports at a time: line N (from 1) is reported, as done, just
    # before it is read, for every N a multiple of _PROGRESS_EVERY; then (total, total) at the end.
    bounds = [0, *range(_PROGRESS_EVERY - 1, total, _PROGRESS_EVERY), total]
    for index, (begin, end) in enumerate(itertools.pairwise(bounds)):
        if index and progress is not None:  # every slice but the first starts at a line reported
            progress(begin + 1, total)
        if not _read_letters_only(lines[begin:end], result):
            _read_line_by_line(lines, begin, end, result)
    if progress is not None:
        progress(total, total)
    return result


def _read_letters_only(lines: list[bytes], result: WordList) -> bool:
    """Read ``lines`` into ``result`` at once if every one is blank or ASCII letters only, as nearly every line
    of a published list is, and return True; else read nothing and return False (:func:`_read_line_by_line`
    reads them). In a plain or a Zyzzyva list such a line is the word itself, and upper-cased it is a word in
    the normal form: reading it so gives what reading it line by line gives, several times faster."""
    first = lines[0] if lines else b""
    if result.tiles is not None:
        return False  # each word read into tiles, with its line's errors
    if result.format not in (SourceFormat.PLAIN, SourceFormat.ZYZZYVA) or (first and not first.isalpha()):
        return False  # the first line tells most slices that will not do (a Zyzzyva list's) at once
    joined = b"\n".join(lines)  # lines hold no line end: bytes.splitlines cut them there
    if not (joined.isascii() and joined.replace(b"\n", b"").isalpha()):  # bytes.isalpha: ASCII letters only
        return False
    upper = joined.upper().decode("ascii").split("\n")  # ASCII: the normal form is the upper case
    if len(upper) != len(lines):
        return False
    words = [word for word in upper if word]  # blank lines are skipped
    before = len(result.words)
    result.words.update(words)
    result.lines += len(words)
    result.duplicates += len(words) - (len(result.words) - before)
    return True


def _read_line_by_line(lines: list[bytes], begin: int, end: int, result: WordList) -> None:
    """Read ``lines[begin:end]`` into ``result`` one line at a time: every rule of the format, every error."""
    extract = _EXTRACTORS[result.format]
    words = result.words
    for number in range(begin + 1, end + 1):
        raw = lines[number - 1]
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            result.invalid.append(InvalidLine(number, raw.decode("utf-8", "replace").strip(), "it is not valid UTF-8"))
            continue
        if not line:
            continue
        marked = line.startswith(_MARK)
        if marked:
            if not line[1:2].isalpha():  # "# note", "#", "#-", "#1": a comment
                result.comments += 1
                continue
            result.marked += 1
            if len(result.marked_lines) < _SHOWN_MARKED:
                result.marked_lines.append((number, line))
        result.lines += 1
        token, problem = extract(line[1:] if marked else line)
        if problem is None:
            word, problem = _word(token, result.tiles)
            if problem is None:
                if word in words:
                    result.duplicates += 1
                else:
                    words.add(word)
                continue
        if marked:
            problem += f"; '{_MARK}' right before a letter marks a word: write '{_MARK} ' to make the line a comment"
        result.invalid.append(InvalidLine(number, line, problem))


def _word(token: str, tiles: TileSet | None) -> tuple[str, str | None]:
    """``token`` as a word of the list (in the stored form of ``tiles`` if given), or why it is not one."""
    word = normalise(token)
    if tiles is None:
        return word, word_problem(word)
    try:
        return tiles.read_word(word), None
    except InvalidInput as exc:  # the TileError saying which character no tile makes
        return word, f"it cannot be made of the {tiles.name} tiles: {exc.message}"


def detect_format(lines: Iterable[bytes]) -> SourceFormat:
    """Guess the format of a source from all its data lines (not blank, not comments).

    Playability if nearly every line is ``integer token``; Zyzzyva if at least half
    of the lines have more than one token (so a Zyzzyva export where some words have
    no definition is still one); plain otherwise, so that a plain list with a few bad
    lines is reported rather than silently cut at the space.
    """
    lines = lines if isinstance(lines, list) else list(lines)
    joined = b"\n".join(lines)
    if not any(space in joined for space in _INNER_SPACES):  # no line has two tokens: most plain lists, at once
        return SourceFormat.PLAIN
    return _detect_line_by_line(lines)


def _detect_line_by_line(lines: list[bytes]) -> SourceFormat:
    """:func:`detect_format`, looking at every line."""
    data = scored = several = 0
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith(b"#"):
            if not line[1:5].decode("utf-8", "ignore")[:1].isalpha():
                continue  # a comment
            line = line[1:]  # a word marked with '#'
        data += 1
        if _INNER_SPACE.search(line) is None:  # one token: cheaper than splitting every line of a big list
            continue
        several += 1
        tokens = line.split(maxsplit=2)
        if len(tokens) == 2 and tokens[0].isdigit():
            scored += 1
    if not data:
        return SourceFormat.PLAIN
    if scored >= 0.9 * data:
        return SourceFormat.PLAYABILITY
    if several >= 0.5 * data:
        return SourceFormat.ZYZZYVA
    return SourceFormat.PLAIN


def _better_format(lines: list[bytes], result: WordList) -> tuple[SourceFormat, int] | None:
    """The format that reads the most of a source's lines as words, and how many it leaves unread,
    if it reads more of them than the format used; else None. Only worked out for an error."""
    best: tuple[SourceFormat, int] | None = None
    for candidate in (SourceFormat.PLAIN, SourceFormat.ZYZZYVA, SourceFormat.PLAYABILITY):
        if candidate is result.format:
            continue
        other = _read_lines(lines, result.source_name, result.source_sha256, candidate, tiles=result.tiles)
        if len(other.invalid) < len(result.invalid) and (best is None or len(other.invalid) < best[1]):
            best = (candidate, len(other.invalid))
    return best


def _decompress(data: bytes, source_name: str) -> bytes:
    """A gzipped list's text, never more than :data:`MAX_SOURCE_BYTES` of it (a few KiB of gzip can hold GiB of
    text); other data as it is."""
    if not data.startswith(_GZIP_MAGIC):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
            text = unzipped.read(MAX_SOURCE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise WordListError("error.word_list.bad_gzip", source=source_name, reason=str(exc)) from exc
    if len(text) > MAX_SOURCE_BYTES:
        raise WordListError("error.word_list.gzip_too_big", source=source_name, max=f"{MAX_SOURCE_BYTES >> 20} MiB")
    return text


def _text_lines(data: bytes, source_name: str) -> list[bytes]:
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    elif data.startswith(_UTF16_BOMS):
        raise WordListError("error.word_list.utf16", source=source_name)
    if b"\x00" in data[:4096]:
        raise WordListError("error.word_list.binary", source=source_name)
    # Counted before the lines are made: each line is an object of some 40 bytes besides its text.
    if max(data.count(b"\n"), data.count(b"\r")) > MAX_LINES:
        raise WordListError("error.word_list.too_many_lines", source=source_name, max=MAX_LINES)
    # bytes.splitlines splits on LF, CRLF and CR only, so line numbers match what an editor shows.
    lines = data.splitlines()
    longest = max(map(len, lines), default=0)
    if longest > MAX_LINE_BYTES:
        number = next(index for index, line in enumerate(lines, 1) if len(line) == longest)
        raise WordListError(
            "error.word_list.line_too_long", source=source_name, line=number, size=longest, max=MAX_LINE_BYTES
        )
    return lines


def _plain(line: str) -> tuple[str, str | None]:
    return line, None


def _zyzzyva(line: str) -> tuple[str, str | None]:
    return line.split(maxsplit=1)[0], None


def _playability(line: str) -> tuple[str, str | None]:
    tokens = line.split()
    if len(tokens) != 2 or not tokens[0].isdigit():
        return line, "expected 'score WORD' (a playability list)"
    return tokens[1], None


_EXTRACTORS: dict[SourceFormat, Callable[[str], tuple[str, str | None]]] = {
    SourceFormat.PLAIN: _plain,
    SourceFormat.ZYZZYVA: _zyzzyva,
    SourceFormat.PLAYABILITY: _playability,
}


def _invalid_lines_error(result: WordList, better: tuple[SourceFormat, int] | None) -> WordListError:
    source_name, invalid = result.source_name, result.invalid
    how = (
        Message("error.word_list.detected")
        if result.detected
        else Message("error.word_list.as_format", format=str(result.format))
    )
    shown = [bad.describe(source_name) for bad in invalid[:_SHOWN_INVALID]]
    more: str | Message = ""
    if len(invalid) > len(shown):
        more = Message("error.word_list.more", n=len(invalid) - len(shown))
    if better is not None:
        fitted, left = better
        outcome = Message("error.word_list.then_all") if not left else Message("error.word_list.then_left", n=left)
        advice = Message(
            "error.word_list.try_format", description=fitted.description, format=fitted.value, outcome=outcome
        )
    else:
        advice = Message("error.word_list.fix")
    details = [{"line": bad.line, "content": bad.content, "reason": bad.reason} for bad in invalid[:100]]
    return WordListError(
        "error.word_list.invalid_lines",
        source=source_name,
        n=len(invalid),
        format=result.format.description,
        how=how,
        lines="\n  ".join(shown),
        more=more,
        advice=advice,
        details=details,
    )
