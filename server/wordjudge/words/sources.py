"""The lexicon files a TD brings, whatever their kind: a text list, an engine's KWG word graph, a Zyzzyva database.

:func:`read_source` tells the kind from the file (its first bytes, a ``.kwg`` name) unless told, and reads it with
its reader; with a tile set, the words are the set's tile sequences (a KWG's are, by its tile numbers; a text
list's and a Zyzzyva database's letters are read into tiles, fewest first). Whatever the file is, it is read in
bounded time and memory (:func:`wordjudge.words.wordlist.read_bounded`).

A KWG file does not say which tiles its numbers are, and nothing is guessed: the set is the one given, else the
one its name says as the engines name their files (:func:`named_tiles`: CSW21.kwg, NWL2020.kwg English;
FILE2017.kwg, FISE2.kwg Spanish; DISC2.kwg Catalan), else the one the registry of known editions gives for its
SHA-256 (a published file, whatever it is called); else it is refused, naming the sets to choose from. The set
is then checked against the words (:mod:`wordjudge.words.tile_fit`), and the list says where it came from.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import replace
from pathlib import Path

from wordjudge.base.errors import InvalidInput, Message, WordListError
from wordjudge.words.editions import Registry, load_registry
from wordjudge.words.kwg import MAX_KWG_BYTES, parse_kwg
from wordjudge.words.sniff import SQLITE_MAGIC, looks_like_kwg
from wordjudge.words.tiles import BUILTIN, TileSet, builtin
from wordjudge.words.wordlist import (
    TEXT_FORMATS,
    InvalidLine,
    Progress,
    SourceFormat,
    WordList,
    checked_size,
    read_bounded,
    read_word_list,
)
from wordjudge.words.zyzzyva_db import read_zyzzyva_db

# The tile set a KWG's name says, as the engines name their lexicons' files (woogles-io/liwords' published ones:
# CSW21, NWL23, NSWL20, ECWL, FILE2017, DISC2...; macondo's and MAGPIE's data/lexica the same): the family, then
# anything but a letter (a year, an edition letter after it, "-", "_", the ".kwg"). FRA, RD, NSF, OSPS, SLV and
# the like are other languages' lexicons, whose sets wordjudge does not have built in: give --tiles.
_ENGLISH = ("CSW", "NWL", "NSWL", "TWL", "OTCWL", "OWL", "OSPD", "ECWL", "CEL", "ENABLE", "SOWPODS", "AMERICA")
_NAMED_SETS = (
    (re.compile(r"(?i)^(FISE|FILE)(?![A-Z])"), "spanish"),
    (re.compile(r"(?i)^DISC(?![A-Z])"), "catalan"),
    (re.compile(rf"(?i)^({'|'.join(_ENGLISH)})(?![A-Z])"), "english"),
)
_HEAD = 4096


def kind_of(path: Path) -> SourceFormat:
    """What kind of lexicon file ``path`` is: a Zyzzyva database (SQLite), a KWG, or a text list (AUTO: its
    format is detected from its lines). Raises :class:`WordListError` if it cannot be read, or is not a regular
    file (it is not opened then: a named pipe would wait for a writer)."""
    checked_size(path, sys.maxsize)  # a regular file (only its head is read here: each reader checks its size)
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


def named_tiles(path: Path) -> TileSet | None:
    """The tile set a KWG file's name says, as the engines name their files (FISE2.kwg: Spanish), or None."""
    for pattern, name in _NAMED_SETS:
        if pattern.match(path.name):
            return builtin(name)
    return None


def read_source(
    path: Path,
    *,
    format: SourceFormat = SourceFormat.AUTO,
    tiles: TileSet | None = None,
    skip_invalid: bool = False,
    progress: Progress | None = None,
    force_tiles: bool = False,
    registry: Registry | None = None,
) -> WordList:
    """Read the lexicon file at ``path`` (see the module's docstring). Raises :class:`WordListError` naming the
    file, the line or word at fault and the fix; nothing is compiled from a file that raises. ``force_tiles``:
    a KWG's set that does not fit its words is used all the same, and the list says why it did not fit
    (``tiles_forced``). ``registry``: the registry of known editions (the shipped one if None)."""
    kind = kind_of(path) if format is SourceFormat.AUTO else format
    if kind is SourceFormat.KWG:
        return _read_kwg(path, tiles, progress, force_tiles, registry)
    if kind is SourceFormat.ZYZZYVA_DB:
        read = read_zyzzyva_db(path, progress=progress)
        return read if tiles is None else into_tiles(read, tiles, skip_invalid=skip_invalid)
    text_format = format if format in TEXT_FORMATS else SourceFormat.AUTO
    return read_word_list(path, format=text_format, skip_invalid=skip_invalid, progress=progress, tiles=tiles)


def _read_kwg(
    path: Path, tiles: TileSet | None, progress: Progress | None, force_tiles: bool, registry: Registry | None
) -> WordList:
    """A KWG's words, with the set given, else the one its name or the registry says; refused without one."""
    data = read_bounded(path, MAX_KWG_BYTES)
    how = Message("error.kwg.how.given")
    if tiles is None:
        tiles = named_tiles(path)
        how = Message("error.kwg.how.name")
    if tiles is None:
        known = (registry or load_registry()).kwg_file(hashlib.sha256(data).hexdigest())
        if known is None:
            raise WordListError("error.kwg.no_tiles", path=str(path), sets=", ".join(BUILTIN))
        tiles = builtin(known.tiles)
        how = Message("error.kwg.how.registry", edition=known.edition, source=known.source)
    return parse_kwg(data, path, tiles, how=how, progress=progress, force_tiles=force_tiles)


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
