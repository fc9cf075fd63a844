"""Whether the words of a KWG are a lexicon read with the right tile set.

A KWG numbers its tiles and does not say which tiles the numbers are: read with another set, a Catalan KWG is
26-tile "English" words (CASA becomes a phony, RFV a word) and nothing in the file objects. What the words
are made of does: a lexicon of a language uses every tile of its set, and uses them about as often as the
set's bag holds them (a bag is made so: many E, one Z). :func:`check` compares the file with the set it is
read with, from the tile counts and the order of the tiles in its words (:class:`TileUsage`, counted as the
words are read), and says what does not fit:

* **an alphagram graph** (MAGPIE's ``.kad``, or the same named ``.kwg``): its entries are each word's tiles
  sorted, so every entry of two tiles or more is in non-decreasing tile order. In a lexicon few are (under
  1 % of ENABLE's words; 0.1 to 0.2 % of Catalan and Spanish spelling lists' words; even a list of nothing but
  two-tile words would be about half); refused when :data:`ALPHAGRAM_SHARE` of them or more are. Never
  overridden: it is not a lexicon whatever its tiles.
* **tiles the set has that no word uses**, where the words are enough for a lexicon to use them (a Catalan
  KWG read with the Spanish set, which has two tiles more: its Y and Z are never used).
* **tile frequencies unlike the set's language**, for a built-in set (whose bag is known, :data:`BAGS`): a
  Catalan KWG read with the English set uses every tile from 1 to 26, but tile 18, the Catalan QU, as rarely
  as a QU is used, where the English set's 18th tile is R.

The last two can be overridden (``lexicon add --force-tiles``), and the override is recorded in the lexicon's
manifest for the TD to see. A set of the TD's own (a TOML file) has no bag here: only the first two checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from wordjudge.base.errors import Message, WordListError
from wordjudge.words.tiles import BUILTIN, TileSet

# -- the built-in sets' bags -------------------------------------------------------------------------------
#
# Tiles of each kind in the bag of each built-in set, in the set's order, blanks left out. English, Spanish and
# Catalan: the engines' letter distributions (woogles-io/liwords liwords-ui/public/wasm/english.csv and
# catalan.csv; domino14/macondo data/letterdistributions/spanish, where 1, 2 and 3 are CH, LL and RR). Welsh:
# the Welsh-language set's 105 tiles as Wikipedia's "Scrabble letter distributions" gives them; it has no PH
# tile (PH is nearly always a mutation, which the rules disallow), hence its 0.
BAGS: dict[str, tuple[int, ...]] = {
    "english": (9, 2, 2, 4, 12, 2, 3, 2, 9, 1, 1, 4, 2, 6, 8, 2, 1, 6, 4, 6, 4, 2, 2, 1, 2, 1),
    "spanish": (12, 2, 4, 1, 5, 12, 1, 2, 2, 6, 1, 4, 1, 2, 5, 1, 9, 2, 1, 5, 1, 6, 4, 5, 1, 1, 1, 1),
    "catalan": (12, 2, 3, 1, 3, 13, 1, 2, 1, 8, 1, 4, 1, 3, 6, 1, 5, 2, 1, 8, 8, 5, 4, 1, 1, 1),
    "welsh": (10, 2, 2, 1, 6, 4, 8, 3, 2, 3, 1, 2, 7, 1, 3, 1, 2, 8, 6, 1, 0, 7, 1, 3, 2, 2, 3, 5, 7),
}

# -- the thresholds, and why ---------------------------------------------------------------------------------

#: Alphagram graph: at least this share of the entries of two tiles or more in non-decreasing tile order (an
#: alphagram graph: all of them; a lexicon: under 1 %; a list of two-tile words only: about half).
ALPHAGRAM_SHARE = 0.9
#: ... among at least this many such entries (fewer say nothing either way).
ALPHAGRAM_MIN_ENTRIES = 20
# An unused tile counts against the set when a lexicon of its language would use it for sure: its bag's share of
# all the tiles used is at least this many uses. A bag overstates its rare tiles about five times (one Q in
# English's 98 letter tiles; about 0.2 % of the letters of an English lexicon), so 50 by the bag is still about
# 10 by the language, and the chance that a lexicon uses a tile expected 10 times not at all is e^-10, 5e-5.
_EXPECTED_USES = 50
#: For a set without a bag (a TOML file): an unused tile counts against it from this many words, what the
#: smallest tournament lexicons have (a list of a few dozen test words uses a few tiles only).
UNUSED_MIN_WORDS = 10_000
#: The frequency checks need at least this many tiles used (about 700 words): below it, the shares are noise.
FIT_MIN_TILES = 5_000
# The frequency checks measure how far the file's tile shares f are from a bag's shares q by the Kullback-Leibler
# divergence D(f || q) = sum f_i ln(f_i / q_i), in nats: 0 when the shares are the bag's, and the more the less
# the words look like that bag's language. Measured on real lists read with their own set: ENABLE (English,
# public domain) 0.085; Debian's Catalan spelling list (550,000 words) 0.059; its Spanish one (86,000) 0.093.
# With the wrong set: Catalan as Spanish 0.28, as English 0.59, as Welsh 0.90; English as Welsh 0.60, as
# Catalan 0.62, as Spanish 0.63; Spanish as Welsh 0.63. So:
#: a set fits poorly past this divergence (more than twice what a real list of the set's language shows, and
#: under what every wrong set measured shows);
POOR_FIT = 0.25
#: and another built-in set fits far better when its divergence is smaller by more than this (the right set
#: against the best wrong one: 0.22 at the least, Catalan against Spanish).
BETTER_FIT = 0.1
# A bag's count of 0 (Welsh PH) is taken as half a tile, and so is every count (+0.5 to each): a tile a bag lacks
# is rare, not impossible, and the divergence stays finite.
_SMOOTHING = 0.5


@dataclass
class TileUsage:
    """What the words of a KWG are made of, counted as they are read."""

    uses: list[int] = field(default_factory=list)  # uses[i]: how many times tile number i occurs in the words
    words: int = 0
    entries: int = 0  # words of two tiles or more
    ordered: int = 0  # of which in non-decreasing tile order, as an alphagram's tiles are

    @property
    def tiles_used(self) -> int:
        return sum(self.uses)


def check(usage: TileUsage, tiles: TileSet, path: Path, how: Message) -> Message | None:
    """Check that ``usage`` (a KWG's words, read with ``tiles``) is a lexicon's: raise :class:`WordListError`
    naming the file if it is an alphagram graph (never overridden); return what shows that the set does not fit
    it (tiles it never uses, frequencies unlike the set's language) as a message saying where the set came from
    (``how``), or None if nothing does."""
    if usage.entries >= ALPHAGRAM_MIN_ENTRIES and usage.ordered >= ALPHAGRAM_SHARE * usage.entries:
        raise WordListError(
            "error.kwg.alphagrams",
            path=str(path),
            ordered=usage.ordered,
            n=usage.entries,
            share=f"{usage.ordered / usage.entries:.0%}",
        )
    uses = usage.uses + [0] * (len(tiles.tiles) + 1 - len(usage.uses))
    unused = _unused(uses, usage, tiles)
    if unused:
        return Message(
            "error.kwg.tiles_unused",
            path=str(path),
            tiles=tiles.name,
            how=how,
            n=len(unused),
            unused=" ".join(unused),
            words=usage.words,
        )
    return _misfit(uses, usage, tiles, path, how)


def _unused(uses: list[int], usage: TileUsage, tiles: TileSet) -> list[str]:
    """The tiles of the set that no word uses where a lexicon of its language would use them."""
    bag = bag_of(tiles)
    if bag is None:
        if usage.words < UNUSED_MIN_WORDS:
            return []
        return [tile for number, tile in enumerate(tiles.tiles, 1) if not uses[number]]
    total, in_bag = usage.tiles_used, sum(bag)
    return [
        tile
        for number, (tile, count) in enumerate(zip(tiles.tiles, bag, strict=True), 1)
        if not uses[number] and count * total >= _EXPECTED_USES * in_bag
    ]


def _misfit(uses: list[int], usage: TileUsage, tiles: TileSet, path: Path, how: Message) -> Message | None:
    """What says the words' tile frequencies are not the set's language, or None (see the module's docstring)."""
    bag = bag_of(tiles)
    if bag is None or usage.tiles_used < FIT_MIN_TILES:
        return None
    top = max((number for number, count in enumerate(uses) if count), default=0)
    fits = {
        name: divergence(uses[1:], counts)
        for name, counts in BAGS.items()
        if len(counts) >= top  # a set that has a tile for every number the file uses
    }
    own = divergence(uses[1:], bag)
    others = {name: value for name, value in fits.items() if name != tiles.name}
    best = min(others, key=others.__getitem__, default=None)
    if best is not None and own - others[best] > BETTER_FIT:
        return Message(
            "error.kwg.tiles_better",
            path=str(path),
            tiles=tiles.name,
            how=how,
            fit=f"{own:.2f}",
            other=best,
            other_fit=f"{others[best]:.2f}",
        )
    if own > POOR_FIT:
        return Message(
            "error.kwg.tiles_poor", path=str(path), tiles=tiles.name, how=how, fit=f"{own:.2f}", max=f"{POOR_FIT}"
        )
    return None


def bag_of(tiles: TileSet) -> tuple[int, ...] | None:
    """The bag of ``tiles`` if it is a built-in set (its tiles in that set's order), else None."""
    builtin = BUILTIN.get(tiles.name)
    bag = BAGS.get(tiles.name)
    return bag if builtin is not None and bag is not None and builtin.tiles == tiles.tiles else None


def divergence(uses: list[int], bag: tuple[int, ...]) -> float:
    """D(f || q) in nats: f the shares of ``uses`` (tile 1 first), q the smoothed shares of ``bag``; a tile past
    the bag's (which a set of fewer tiles lacks) is not counted here: the caller keeps such sets out."""
    total = sum(uses)
    weight = sum(bag) + _SMOOTHING * len(bag)
    result = 0.0
    for count, in_bag in zip(uses, bag, strict=False):
        if count:
            share = count / total
            result += share * math.log(share * weight / (in_bag + _SMOOTHING))
    return result
