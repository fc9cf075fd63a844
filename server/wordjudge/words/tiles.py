"""Tile sets: what a word is made of on the board, where a tile may be more than one letter.

English has one letter a tile. Other languages' sets do not: Spanish has CH, LL and RR tiles, Catalan L·L, NY and
QU, Welsh CH, DD, FF, NG, LL, PH, RH and TH. The board counts tiles (15 squares), the lexicon is a list of tile
sequences, and a challenge is a sequence of tiles. A lexicon compiled with a tile set keeps its words in the
**stored form**: a single-letter tile as itself, a longer tile in brackets (``[CH]ICO``, ``BA[NG]OR`` against
``BANGOR``, which is B A N G O R), so that two readings of the same letters are two different keys.

Typed text is read into tiles by :meth:`TileSet.readings`: letters as a player reads them off the board (``CH``,
``L·L`` or ``L.L``, ``Ñ`` or ``N~``; accents a set ignores, ``Á`` for ``A``), and a tile in brackets (``[N][G]``)
taken as it stands. Where letters can be read as tiles in more than one way (Welsh ``NG`` is the NG tile or N
then G), every reading is returned, fewest tiles first; the caller decides among them (a list: the first, as the
list's own brackets allow; a challenge: the lexicon, or the players).

The built-in sets (:data:`BUILTIN`) follow the tile orders of the engines that serve those tournaments (a KWG
file numbers its tiles in this order); a TD gives another as a TOML file (:func:`load`)::

    name = "basque"                 # optional: the file's name otherwise
    tiles = ["A", "B", "D", "E", "TS", "TX", "TZ", "..."]
    [spellings]                     # optional: other ways to type a tile
    "T.S" = "TS"
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from wordjudge.base.errors import InvalidInput
from wordjudge.words.normal_form import describe_char, normalise

#: Readings of one typed word at most: past it the word must say where its tiles are, in brackets.
MAX_READINGS = 64
_OPEN, _CLOSE = "[", "]"
_BRACKETED = re.compile(r"\[[^\]]*\]")


class TileError(InvalidInput):
    """Raised when text cannot be read as tiles of a set. ``position`` is where (0-based) reading stopped."""

    def __init__(self, key: str, /, *, position: int = 0, **params: Any) -> None:
        super().__init__(key, **params)
        self.position = position


@dataclass(frozen=True)
class TileSet:
    """The tiles of a board game's set, in the order an engine numbers them (tile 1 first), and their spellings.

    ``spellings`` maps other ways to type a tile (``L.L``, ``N~``, an accented vowel the set ignores) to the tile.
    """

    name: str
    tiles: tuple[str, ...]
    spellings: Mapping[str, str] = field(default_factory=dict)
    source: str = field(default="", compare=False)  # where the set comes from, in words

    def __post_init__(self) -> None:
        problem = _problem(self.tiles, self.spellings)
        if problem is not None:
            raise InvalidInput("error.tiles.bad_set", name=self.name, problem=problem)

    # -- what it is

    @property
    def multi(self) -> bool:
        """Whether a tile of the set is more than one letter (then readings can differ, and words are bracketed)."""
        return any(len(tile) > 1 for tile in self.tiles)

    @property
    def plain(self) -> bool:
        """Whether the set reads words as plain letters do (one letter a tile, no other spellings): a lexicon of
        it keeps no set (its list was only checked against the letters)."""
        return not self.multi and not self.spellings

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the set's canonical text: its tiles in order and its spellings, sorted."""
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()

    def canonical(self) -> str:
        """The text the fingerprint is taken of: ``wordjudge-tiles/1``, the tiles, then ``typed=tile`` lines."""
        lines = ["wordjudge-tiles/1", " ".join(self.tiles)]
        lines += [f"{typed}={tile}" for typed, tile in sorted(self.spellings.items())]
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict[str, Any]:
        """The set as a manifest, a profile or a client keeps it: name, tiles, spellings, fingerprint."""
        return {
            "name": self.name,
            "tiles": list(self.tiles),
            "spellings": dict(sorted(self.spellings.items())),
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> TileSet:
        """The set :meth:`as_dict` wrote; raises :class:`InvalidInput` naming ``where`` if it is not one."""
        tiles, spellings = data.get("tiles"), data.get("spellings", {})
        if not (isinstance(tiles, list) and all(isinstance(tile, str) for tile in tiles)):
            raise InvalidInput("error.tiles.bad_file", path=where, problem="'tiles' is not a list of strings")
        if not (isinstance(spellings, dict) and all(isinstance(v, str) for v in spellings.values())):
            raise InvalidInput("error.tiles.bad_file", path=where, problem="'spellings' is not a table of strings")
        name = data.get("name")
        made = cls(str(name) if name else Path(where).stem, tuple(tiles), dict(spellings))
        expected = data.get("fingerprint")
        if expected is not None and expected != made.fingerprint:
            raise InvalidInput("error.tiles.fingerprint", path=where, actual=made.fingerprint, expected=expected)
        return made

    @cached_property
    def letters(self) -> str:
        """Every character a tile or a spelling is typed with, sorted: what a kiosk lets a player type."""
        return "".join(sorted(set("".join(self.tiles)) | set("".join(self.spellings))))

    def shown(self) -> str:
        """The tiles for a message: ``A B C CH D ...``."""
        return " ".join(self.tiles)

    # -- the stored form

    def stored(self, tiles: Iterable[str]) -> str:
        """The stored form of a tile sequence: single letters as they are, longer tiles in brackets."""
        return "".join(tile if len(tile) == 1 else f"{_OPEN}{tile}{_CLOSE}" for tile in tiles)

    def split(self, stored: str) -> tuple[str, ...]:
        """The tiles of a word in the stored form (see :meth:`stored`). Raises ``ValueError`` if it is not one."""
        return stored_tiles(stored)

    def length(self, stored: str) -> int:
        """How many tiles (board squares) a word in the stored form takes."""
        return len(self.split(stored)) if _OPEN in stored else len(stored)

    # -- reading typed text

    @cached_property
    def _tokens(self) -> dict[str, str]:
        """Every way to type a tile (the tile itself, or a spelling), upper case, to the tile it types.

        A spelling of one letter for another (an accent the set ignores: Catalan Ü for U) also spells that letter
        inside a longer tile: Catalans write QÜ (qüestió, freqüent) where the board has the QU tile.
        """
        tokens = {tile: tile for tile in self.tiles}
        tokens.update((normalise(typed), tile) for typed, tile in self.spellings.items())
        accents: dict[str, list[str]] = {}
        for typed, tile in self.spellings.items():
            if len(normalise(typed)) == 1 and len(tile) == 1:
                accents.setdefault(tile, []).append(normalise(typed))
        for tile in self.tiles:
            if len(tile) > 1:
                for variant in _variants(tile, accents):
                    tokens.setdefault(variant, tile)
        return tokens

    @cached_property
    def _longest(self) -> int:
        return max(map(len, self._tokens), default=1)

    def readings(self, text: str, split: Collection[str] | None = None) -> list[tuple[str, ...]]:
        """Every way to read ``text`` (one word as typed) as tiles, fewest tiles first, each once.

        Brackets fix a tile (``[N][G]``, ``[CH]``); letters outside them are read every way the set allows, or,
        given a lexicon's ``split`` tiles (:meth:`split_in`), every way its words can hold: the letters of a longer
        tile that no word holds as separate tiles (Spanish CH) are that tile, unless brackets say otherwise.
        Raises :class:`TileError` naming the character or bracketed text that no tile makes, or a word with more
        than :data:`MAX_READINGS` readings (to be typed with brackets).
        """
        text = normalise(text)
        parts: list[list[tuple[str, ...]]] = []  # each part: its readings
        index = 0
        while index < len(text):
            if text[index] == _OPEN:
                end = text.find(_CLOSE, index)
                inside = text[index + 1 : end] if end > 0 else text[index + 1 :]
                tile = self._tokens.get(inside)
                if end < 0 or tile is None:
                    raise TileError(
                        "error.tiles.no_such_tile", position=index, tile=f"[{inside}" + ("]" if end > 0 else "")
                    )
                parts.append([(tile,)])
                index = end + 1
                continue
            end = text.find(_OPEN, index)
            end = len(text) if end < 0 else end
            run = self._run_readings(text, index, end)
            parts.append(run if split is None else self._held(run, split))
            index = end
        readings: list[tuple[str, ...]] = [()]
        for options in parts:
            readings = [done + more for done in readings for more in options]
            if len(readings) > MAX_READINGS:
                raise TileError("error.tiles.too_many_readings", position=0, max=MAX_READINGS)
        unique = list(dict.fromkeys(readings))
        return sorted(unique, key=len) if len(unique) > 1 else unique

    def _held(self, run: list[tuple[str, ...]], split: Collection[str]) -> list[tuple[str, ...]]:
        """The readings of ``run`` a lexicon whose split tiles are ``split`` can hold: none with the letters of
        another longer tile as separate tiles (all of them, if that leaves none: the players said so)."""
        joined = [tile for tile in self.tiles if len(tile) > 1 and tile not in split]
        held = [reading for reading in run if not any(tile in loose for loose in _loose(reading) for tile in joined)]
        return held or run

    def stated(self, tiles: Sequence[str], split: Collection[str] = ()) -> str:
        """``tiles`` as text that reads back as these tiles alone (:meth:`readings` with ``split``): longer tiles
        in brackets, and the single letters that could join into one (Welsh ``BA[N][G]OR``, ``BA[NG]OR``) too."""
        longer = [tile for tile in self.tiles if len(tile) > 1]
        for bracketed in (set(), set("".join(split)), set("".join(longer)), None):
            text = "".join(
                tile if len(tile) == 1 and bracketed is not None and tile not in bracketed else f"{_OPEN}{tile}{_CLOSE}"
                for tile in tiles
            )
            if bracketed is None or self.readings(text, split) == [tuple(tiles)]:
                return text
        raise AssertionError("unreachable: every tile in brackets reads one way")  # pragma: no cover

    def _run_readings(self, text: str, begin: int, end: int) -> list[tuple[str, ...]]:
        """Every reading of ``text[begin:end]`` (no brackets) as tiles; raises :class:`TileError` where none goes on."""
        tokens, longest = self._tokens, self._longest
        # ways[i]: the readings of text[i:end], worked out from the end (a word is at most a few dozen letters).
        ways: dict[int, list[tuple[str, ...]]] = {end: [()]}
        for start in range(end - 1, begin - 1, -1):
            found: list[tuple[str, ...]] = []
            for size in range(1, min(longest, end - start) + 1):
                tile = tokens.get(text[start : start + size])
                if tile is not None and ways.get(start + size):
                    found += [(tile, *rest) for rest in ways[start + size]]
                    if len(found) > MAX_READINGS:
                        raise TileError("error.tiles.too_many_readings", position=start, max=MAX_READINGS)
            if found:
                ways[start] = found
        if ways.get(begin):
            return ways[begin]
        raise self._no_tile(text, begin, end)

    def _no_tile(self, text: str, begin: int, end: int) -> TileError:
        """The error for letters no reading covers: the first place a reading from the start cannot go on from."""
        reached = {begin}
        for start in range(begin, end):
            if start not in reached:
                continue
            for size in range(1, min(self._longest, end - start) + 1):
                if text[start : start + size] in self._tokens:
                    reached.add(start + size)
        stuck = max(reached)
        char = text[stuck]
        if any(char in tile for tile in self.tiles):  # a letter of a longer tile only (Catalan Q, of QU)
            tiles = ", ".join(tile for tile in self.tiles if char in tile)
            return TileError("error.tiles.only_in", position=stuck, char=describe_char(char), tiles=tiles)
        return TileError("error.tiles.not_a_tile", position=stuck, char=describe_char(char))

    def split_in(self, words: Iterable[str]) -> list[str]:
        """The tiles of several letters that ``words`` (stored form) also hold as separate tiles (Welsh: NG in
        BA[NG]OR and N G in BANGOR), in the set's order: where a kiosk shows such a tile, it may be read either way.
        """
        longer = [tile for tile in self.tiles if len(tile) > 1]
        found: set[str] = set()
        for word in words:
            loose = _BRACKETED.sub("|", word)  # the single-letter tiles, runs cut where a longer tile stood
            found.update(tile for tile in longer if tile in loose)
            if len(found) == len(longer):
                break
        return [tile for tile in longer if tile in found]

    def read_word(self, text: str) -> str:
        """``text`` (a word of a list, letters and brackets) in the stored form, read with as few tiles as it
        allows: a list's ``CHICO`` is [CH]ICO; a list says ``BAN[G]OR`` for B A N G O R. It is the first of
        :meth:`readings`, found without listing them (a list has hundreds of thousands of words).
        Raises :class:`TileError` naming the character or bracketed text that no tile makes."""
        text = normalise(text)
        if _OPEN in text:  # a list's brackets: rare, read the whole way
            return self.stored(self.readings(text)[0])
        tokens, longest, end = self._tokens, self._longest, len(text)
        # best[i]: the first reading of text[i:] with the fewest tiles, in the order readings() lists them.
        best: dict[int, tuple[str, ...]] = {end: ()}
        for start in range(end - 1, -1, -1):
            found: tuple[str, ...] | None = None
            for size in range(1, min(longest, end - start) + 1):
                tile = tokens.get(text[start : start + size])
                rest = best.get(start + size)
                if tile is not None and rest is not None and (found is None or len(rest) + 1 < len(found)):
                    found = (tile, *rest)
            if found is not None:
                best[start] = found
        if 0 not in best:
            raise self._no_tile(text, 0, end)
        return self.stored(best[0])


def stored_tiles(stored: str) -> tuple[str, ...]:
    """The tiles of a word in the stored form, whatever its set (``[CH]ICO``: CH I C O). Raises ``ValueError`` if
    it is not one."""
    if _OPEN not in stored:
        return tuple(stored)
    tiles: list[str] = []
    index = 0
    while index < len(stored):
        if stored[index] == _OPEN:
            end = stored.find(_CLOSE, index)
            if end < 0:
                raise ValueError(f"{stored!r}: '[' without ']'")
            tiles.append(stored[index + 1 : end])
            index = end + 1
        else:
            tiles.append(stored[index])
            index += 1
    return tuple(tiles)


def _variants(tile: str, accents: Mapping[str, Sequence[str]]) -> list[str]:
    """``tile`` spelt with every combination of the one-letter spellings of its letters (QU: QÜ, QÚ), itself
    left out."""
    found = [""]
    for char in tile:
        found = [done + option for done in found for option in (char, *accents.get(char, ()))]
    return [variant for variant in found if variant != tile]


def _loose(tiles: Sequence[str]) -> list[str]:
    """The runs of single-letter tiles of a reading, cut where a longer tile stands."""
    return "".join(tile if len(tile) == 1 else "|" for tile in tiles).split("|")


#: What stands between two tiles where a word is written tile by tile (:func:`shown_word`).
TILE_JOIN = "-"


def shown_word(tiles: Sequence[str], split: Collection[str] = ()) -> str:
    """A word's tiles as people read them: the letters on the board (``DESENGANCHARIAIS``, ``COL·LEGI``), or,
    where a tile of the lexicon's ``split`` tiles is on it, as one tile or as its separate letters, tile by tile
    (``B-A-NG-O-R``, ``B-A-N-G-O-R``): there the tiles are what was judged."""
    letters = "".join(tiles)
    if split and (
        any(tile in split for tile in tiles) or any(tile in loose for loose in _loose(tiles) for tile in split)
    ):
        return TILE_JOIN.join(tiles)
    return letters


def _problem(tiles: Sequence[str], spellings: Mapping[str, str]) -> str | None:
    """What makes ``tiles`` and ``spellings`` not a tile set, or None."""
    if not tiles:
        return "it has no tiles"
    for tile in tiles:
        if not tile or tile != normalise(tile) or not all(char.isalpha() or char == "·" for char in tile):
            return f"{tile!r} is not a tile (letters, upper case; '·' inside a tile like L·L)"
        if not tile[0].isalpha():
            return f"{tile!r} is not a tile (it must start with a letter)"
    if len(set(tiles)) != len(tiles):
        return "a tile is listed twice"
    for typed, tile in spellings.items():
        if tile not in tiles:
            return f"the spelling {typed!r} types {tile!r}, which is not one of its tiles"
        if not typed or _OPEN in typed or _CLOSE in typed or any(char.isspace() or char == "," for char in typed):
            return f"the spelling {typed!r} is not one (no brackets, spaces or commas)"
        if normalise(typed) in tiles and normalise(typed) != tile:
            return f"the spelling {typed!r} is the tile {normalise(typed)!r} already"
    return None


def _set(name: str, tiles: str, spellings: Mapping[str, str], source: str) -> TileSet:
    return TileSet(name, tuple(tiles.split()), dict(spellings), source)


# Accents a set's tiles do not carry: typed, they are the plain tile (Spanish, Catalan and Welsh play without them).
_SPANISH_ACCENTS = {"Á": "A", "É": "E", "Í": "I", "Ó": "O", "Ú": "U", "Ü": "U"}
_CATALAN_ACCENTS = {"À": "A", "É": "E", "È": "E", "Í": "I", "Ï": "I", "Ó": "O", "Ò": "O", "Ú": "U", "Ü": "U"}
_WELSH_ACCENTS = {
    f"{base}{accent}": base
    for base in "AEIOUWY"
    for accent in ("\u0302", "\u0301", "\u0300", "\u0308")  # circumflex (to bach), acute, grave, diaeresis
}

#: The built-in tile sets, by name.
BUILTIN: dict[str, TileSet] = {
    tile_set.name: tile_set
    for tile_set in (
        _set(
            "english",
            "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z",
            {},
            "the English set: one letter a tile",
        ),
        _set(
            "spanish",
            "A B C CH D E F G H I J L LL M N Ñ O P Q R RR S T U V X Y Z",
            {"N~": "Ñ", **_SPANISH_ACCENTS},
            "the Spanish set (FISE): CH, LL, RR and Ñ tiles; tile order as wolges' Spanish alphabet",
        ),
        _set(
            "catalan",
            "A B C Ç D E F G H I J L L·L M N NY O P QU R S T U V X Z",
            {"L.L": "L·L", "L-L": "L·L", "ĿL": "L·L", "L\u2027L": "L·L", **_CATALAN_ACCENTS},
            "the Catalan set: L·L, NY and QU tiles, and Ç; tile order as wolges' Catalan alphabet",
        ),
        _set(
            "welsh",
            "A B C CH D DD E F FF G NG H I J L LL M N O P PH R RH S T TH U W Y",
            {normalise(typed): tile for typed, tile in _WELSH_ACCENTS.items()},
            "the Welsh set: CH, DD, FF, NG, LL, PH, RH and TH tiles, in the Welsh alphabet's order",
        ),
    )
}


def builtin_sets() -> str:
    """The built-in sets for a help text, each with the tiles that are not one letter of A to Z: ``spanish (CH, LL,
    RR, Ñ), ..., english``."""
    said = []
    for name, tile_set in BUILTIN.items():
        special = [tile for tile in tile_set.tiles if len(tile) > 1 or not "A" <= tile <= "Z"]
        said.append(f"{name} ({', '.join(special)})" if special else name)
    return ", ".join(said)


def builtin(name: str) -> TileSet:
    """The built-in set ``name`` (any case). Raises :class:`InvalidInput` naming the sets there are."""
    found = BUILTIN.get(name.casefold())
    if found is None:
        raise InvalidInput("error.tiles.unknown", name=repr(name), known=", ".join(BUILTIN))
    return found


def load(path: Path) -> TileSet:
    """The tile set in the TOML file at ``path`` (see the module's docstring). Raises :class:`InvalidInput` naming
    the file and what is wrong with it."""
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise InvalidInput("error.tiles.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput("error.tiles.bad_file", path=str(path), problem=str(exc)) from exc
    try:
        return TileSet.from_dict(data, str(path))
    except InvalidInput as exc:
        if exc.msg.key != "error.tiles.bad_set":
            raise
        raise InvalidInput("error.tiles.bad_file", path=str(path), problem=exc.msg.params["problem"]) from exc


def find(name_or_file: str) -> TileSet:
    """A built-in set by name (``spanish``), or the set in a TOML file (a path, or a name ending ``.toml``)."""
    if name_or_file.casefold() in BUILTIN:
        return BUILTIN[name_or_file.casefold()]
    path = Path(name_or_file)
    if path.suffix.casefold() == ".toml" or path.exists():
        return load(path)
    return builtin(name_or_file)
