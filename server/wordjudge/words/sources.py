"""The lexicon files a TD brings, whatever their kind: a text list, an engine's KWG word graph, a Zyzzyva database.

:func:`read_source` tells the kind from the file (its first bytes, a ``.kwg`` name) unless told, and reads it with
its reader; with a tile set, the words are the set's tile sequences (a KWG's are, by its tile numbers; a text
list's and a Zyzzyva database's letters are read into tiles, fewest first). A KWG file does not say which tiles
its numbers are: the set is the one given, else the one its name says (wolges' and macondo's names: FILE and FISE
Spanish, DISC Catalan), else English, and the summary says which.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from wordjudge.base.errors import InvalidInput, WordListError
from wordjudge.words.kwg import read_kwg
from wordjudge.words.sniff import SQLITE_MAGIC, looks_like_kwg
from wordjudge.words.tiles import TileSet, builtin
from wordjudge.words.wordlist import TEXT_FORMATS, InvalidLine, Progress, SourceFormat, WordList, read_word_list
from wordjudge.words.zyzzyva_db import read_zyzzyva_db

# The tile set a KWG's name says, as the engines name their lexicons (FISE2.kwg, FILE2017.kwg, DISC2.kwg).
_NAMED_SETS = ((re.compile(r"(?i)^(FISE|FILE)"), "spanish"), (re.compile(r"(?i)^DISC"), "catalan"))
_HEAD = 4096


def kind_of(path: Path) -> SourceFormat:
    """What kind of lexicon file ``path`` is: a Zyzzyva database (SQLite), a KWG, or a text list (AUTO: its
    format is detected from its lines). Raises :class:`WordListError` if it cannot be read."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD)
    except OSError as exc:
        raise WordListError("error.word_list.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    if head.startswith(SQLITE_MAGIC):
        return SourceFormat.ZYZZYVA_DB
    if path.suffix.casefold() == ".kwg" or (looks_like_kwg(head) and b"\x00" in head[:_HEAD]):
        return SourceFormat.KWG
    return SourceFormat.AUTO


def kwg_tiles(path: Path) -> TileSet:
    """The tile set a KWG file's name says (FISE2.kwg: Spanish), else English."""
    for pattern, name in _NAMED_SETS:
        if pattern.match(path.name):
            return builtin(name)
    return builtin("english")


def read_source(
    path: Path,
    *,
    format: SourceFormat = SourceFormat.AUTO,
    tiles: TileSet | None = None,
    skip_invalid: bool = False,
    progress: Progress | None = None,
) -> WordList:
    """Read the lexicon file at ``path`` (see the module's docstring). Raises :class:`WordListError` naming the
    file, the line or word at fault and the fix; nothing is compiled from a file that raises."""
    kind = kind_of(path) if format is SourceFormat.AUTO else format
    if kind is SourceFormat.KWG:
        return read_kwg(path, tiles or kwg_tiles(path), progress=progress)
    if kind is SourceFormat.ZYZZYVA_DB:
        read = read_zyzzyva_db(path, progress=progress)
        return read if tiles is None else into_tiles(read, tiles, skip_invalid=skip_invalid)
    text_format = format if format in TEXT_FORMATS else SourceFormat.AUTO
    return read_word_list(path, format=text_format, skip_invalid=skip_invalid, progress=progress, tiles=tiles)


def into_tiles(word_list: WordList, tiles: TileSet, *, skip_invalid: bool = False) -> WordList:
    """``word_list``'s words (letters) read into ``tiles``, fewest tiles first. Raises :class:`WordListError`
    naming the words no tile makes (unless ``skip_invalid``: they are left out and counted)."""
    words: set[str] = set()
    invalid: list[InvalidLine] = []
    for word in sorted(word_list.words):
        try:
            words.add(tiles.read_word(word))
        except InvalidInput as exc:
            invalid.append(InvalidLine(0, word, f"it cannot be made of the {tiles.name} tiles: {exc.message}"))
    if invalid and not skip_invalid:
        shown = "\n  ".join(f"{bad.content!r}: {bad.reason}" for bad in invalid[:10])
        more = f"\n  ... and {len(invalid) - 10} more" if len(invalid) > 10 else ""
        raise WordListError(
            "error.word_list.not_tiles", source=word_list.source_name, n=len(invalid), words=shown + more
        )
    return replace(word_list, words=words, tiles=tiles, invalid=[*word_list.invalid, *invalid])
