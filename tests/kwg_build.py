"""Build KWG files for the tests, from a list of words, with the layout wolges documents (andy-k/wolges
``details.txt``, "KURNIA WORD GRAPH"; ``src/build.rs``, ``write_node`` and ``to_vec``; see
:mod:`wordjudge.words.kwg`).

A word is a sequence of tile indices (1..n, the tile set's order). The builder makes:

* the DAWG: the words' trie with equal sibling lists merged (a list's key is its nodes' tiles, accepts flags and
  children's lists), so that common suffixes are stored once, as in a real KWG; each list's nodes are written
  one after another, sorted by tile, the last with is_end set, and a node without children has arc_index 0;
* with ``gaddag`` (the default, as ``buildlex <lang>-kwg`` writes), the GADDAG the same way: for CARE the paths
  ERAC, RAC@E, AC@RE and C@ARE, with tile 0 for the direction switch @ (details.txt). Its lists are merged
  with the DAWG's too, so that the list after RAC@ is the DAWG's list after CAR, as wolges' builder shares it;
* node 0, the pointer to the DAWG's root list, and (with ``gaddag``) node 1, the pointer to the GADDAG's: tile
  0, is_end set, accepts clear. Without ``gaddag`` the file is DawgOnly: the lists start at node 1.

Lists are written leaves first (wolges' "Legacy" order); readers must not care. :func:`node` packs one node,
for the tests that write damaged files node by node.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from wordjudge.words.tiles import TileSet

TILE_SHIFT, ACCEPTS, IS_END, ARC = 24, 0x0080_0000, 0x0040_0000, 0x003F_FFFF
SEPARATOR = 0  # the GADDAG's direction switch, '@' in details.txt

# A trie node's children: tile -> (accepts, children).
Trie = dict[int, tuple[bool, "Trie"]]
# A sibling list's key: its nodes as (tile, accepts, the index of the children's list or 0), sorted by tile.
ListKey = tuple[tuple[int, bool, int], ...]


def node(tile: int, *, accepts: bool = False, is_end: bool = False, arc: int = 0) -> int:
    """One KWG node as its u32: tile in bits 24-31, accepts bit 23, is_end bit 22, arc_index bits 0-21."""
    assert 0 <= tile <= 0xFF
    assert 0 <= arc <= ARC
    return tile << TILE_SHIFT | (ACCEPTS if accepts else 0) | (IS_END if is_end else 0) | arc


def pack(nodes: Iterable[int]) -> bytes:
    """Nodes as the file's bytes: little-endian u32s, no header."""
    values = list(nodes)
    return struct.pack(f"<{len(values)}I", *values)


def tile_indices(words: Iterable[str], tiles: TileSet) -> list[tuple[int, ...]]:
    """Words in a set's stored form (``[CH]ICO``) as tile indices (1-based, the set's order)."""
    index = {tile: number for number, tile in enumerate(tiles.tiles, start=1)}
    return [tuple(index[tile] for tile in tiles.split(word)) for word in words]


def build_kwg(words: Iterable[Sequence[int]], *, gaddag: bool = True) -> bytes:
    """The KWG file of ``words`` (tile index sequences; order and repeats do not matter)."""
    unique = {tuple(word) for word in words}
    assert all(word and min(word) >= 1 for word in unique), "a word is one or more tiles numbered from 1"
    writer = _Writer(first=2 if gaddag else 1)
    dawg_root = writer.write(_trie(unique))
    pointers = [node(0, is_end=True, arc=dawg_root)]
    if gaddag:
        pointers.append(node(0, is_end=True, arc=writer.write(_trie(_gaddag_paths(unique)))))
    return pack(pointers + writer.nodes)


def _gaddag_paths(words: Iterable[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """Each word's GADDAG paths: for CARE, ERAC, RAC@E, AC@RE and C@ARE (the prefix reversed, then @ and the rest
    if any: the @ is always followed by a tile)."""
    paths = set()
    for word in words:
        for cut in range(1, len(word) + 1):
            rest = word[cut:]
            paths.add(word[:cut][::-1] + ((SEPARATOR, *rest) if rest else ()))
    return paths


def _trie(words: Iterable[tuple[int, ...]]) -> Trie:
    root: Trie = {}
    for word in words:
        children, last = root, len(word) - 1
        for position, tile in enumerate(word):
            entry = children.get(tile)
            if entry is None:
                entry = children[tile] = (position == last, {})
            elif position == last and not entry[0]:
                entry = children[tile] = (True, entry[1])
            children = entry[1]
    return root


class _Writer:
    """Writes sibling lists as nodes, each distinct list once (the merging that makes the trie a DAWG)."""

    def __init__(self, first: int) -> None:
        self.first = first  # the index of the first node written (after the pointer nodes)
        self.nodes: list[int] = []
        self.lists: dict[ListKey, int] = {}

    def write(self, children: Trie) -> int:
        """The index of the list of ``children`` (written if no equal list was): 0 for no children."""
        if not children:
            return 0
        key = tuple((tile, accepts, self.write(below)) for tile, (accepts, below) in sorted(children.items()))
        if key not in self.lists:
            self.lists[key] = self.first + len(self.nodes)
            for position, (tile, accepts, arc) in enumerate(key):
                self.nodes.append(node(tile, accepts=accepts, is_end=position == len(key) - 1, arc=arc))
        return self.lists[key]
