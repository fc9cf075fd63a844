"""Reading a KWG file (the word graph of wolges, macondo, MAGPIE and Woogles) as a list of words.

A KWG ("Kurnia Word Graph") has no header and no magic: it is a flat array of 32-bit little-endian nodes.
Each node packs::

    bits 24-31  tile       0 is special (the blank, or the GADDAG's direction switch); 1..n are the
                           alphabet's tiles in the engine's order (English: A=1 ... Z=26)
    bit 23      accepts    the tiles so far, this one included, make a word
    bit 22      is_end     the last node of its sibling list (else the next sibling is the next node)
    bits 0-21   arc_index  the first node of the list of tiles that may follow; 0: none

Node 0 is a pointer node (tile 0, is_end set, accepts clear) whose arc_index is the DAWG's root list. A
"Gaddawg" file (``buildlex <lang>-kwg``, what engines load) also has node 1, the same kind of pointer to the
GADDAG's root; a "DawgOnly" file (``<lang>-kwg-dawg``) has no node 1 pointer (its nodes start at 1). The DAWG
is all this module reads, so both read alike. A sibling list may be the tail of another list (an arc may point
into the middle of a list), and builds with reordered lists do not keep siblings sorted: neither is assumed.

Sources, read for this module: andy-k/wolges ``src/kwg.rs`` (``Node``: ``tile`` is ``self.0 >> 24``, ``accepts``
``& 0x800000``, ``is_end`` ``& 0x400000``, ``arc_index`` ``& 0x3fffff``; ``from_bytes_alloc`` reads
little-endian u32s from byte 0), ``src/build.rs`` (``write_node``'s comment "bits 0-21 = pointer, bit 22 =
end, bit 23 = is_terminal, bits 24-31 = char"; ``to_vec`` writes node 0, and node 1 for ``Gaddawg`` only,
with tile 0, ``IsEnd(true)``, ``Accepts(false)``), ``details.txt`` ("KURNIA WORD GRAPH": tiles 01-3f, 00
special, arc_index 0 a dead end, shared tails, DawgOnly and Gaddawg, ``EMPTY_KWG_BYTES`` in kwg.rs); the same
masks in domino14/word-golib ``kwg/kwg.go`` and jvc56/MAGPIE's ``kwg.h`` (DAWG root: node 0's arc_index).

Files of the same family that are not a lexicon's KWG, told apart here: a KLV or KLV2 (leave values: a u32
node count, that many nodes, a u32 count, then i16 or f32 values), a ``.kbwg`` ("big" KWG of 24-bit arcs,
``build_big`` in build.rs: another bit layout, not read) and a ``.kad`` (alphagram DAWG: the same layout, but
its entries are sorted tiles, not words). Nothing is ever compiled from a file that raises here.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from pathlib import Path
from typing import TYPE_CHECKING

from wordjudge.base.errors import Message, WordListError
from wordjudge.words.sniff import looks_like, looks_like_kwg
from wordjudge.words.tile_fit import TileUsage, check
from wordjudge.words.wordlist import MAX_WORDS, Progress, SourceFormat, WordList, read_bounded

if TYPE_CHECKING:
    from wordjudge.words.tiles import TileSet

_TILE_SHIFT = 24
_ACCEPTS = 0x0080_0000
_IS_END = 0x0040_0000
_ARC = 0x003F_FFFF

#: A DAWG word longer than this many tiles means a damaged file (the longest words played are 15).
MAX_WORD_TILES = 64
#: The biggest KWG: a node's arc_index has 22 bits, so a KWG has at most 2^22 nodes of 4 bytes (16 MiB); a bigger
#: graph is a big KWG (``.kbwg``, 24-bit arcs), which is not read.
MAX_KWG_BYTES = 4 << 22
#: More nodes than this walked to list the words is not a lexicon: the walk visits each beginning of a word once
#: (a trie's nodes: 2.2 a word for ENABLE, fewer the more words share beginnings), and a graph can make far more
#: of them than words: a 340-byte one of 2^41 paths, one word among them, is refused for its dead ends, but
#: every path may end in a word, or share a long tail.
MAX_WALK = 4 * MAX_WORDS
_PROGRESS_EVERY = 20_000
# The array typecode of an unsigned 32-bit integer ('I' on every platform CPython runs on; 'L' is 64 bits on most).
_U32 = next(code for code in "IL" if array(code).itemsize == 4)


def read_kwg(path: Path, tiles: TileSet, *, progress: Progress | None = None, force_tiles: bool = False) -> WordList:
    """Read the words of the KWG file at ``path``: every word of its DAWG, each tile index ``i`` read as
    ``tiles.tiles[i - 1]`` and the word kept in the set's stored form (:meth:`TileSet.stored`).

    ``progress(words_done, words_total)`` is called as the words are read. Raises :class:`WordListError` naming
    the file and what to do if it is not a regular file of at most :data:`MAX_KWG_BYTES`, cannot be read, is
    empty, is another kind of file, is cut short, holds a tile the set does not have, loops, holds a word longer
    than :data:`MAX_WORD_TILES` tiles, holds no words, more than :data:`MAX_WORDS` or more paths to walk than
    :data:`MAX_WALK`, is an alphagram graph, or does not fit the set (:func:`wordjudge.words.tile_fit.check`:
    unless ``force_tiles``, which records what did not fit in the list's ``tiles_forced``).
    """
    data = read_bounded(path, MAX_KWG_BYTES)
    how = Message("error.kwg.how.given")
    return parse_kwg(data, path, tiles, how=how, progress=progress, force_tiles=force_tiles)


def parse_kwg(
    data: bytes,
    path: Path,
    tiles: TileSet,
    *,
    how: Message,
    progress: Progress | None = None,
    force_tiles: bool = False,
) -> WordList:
    """The words of a KWG file whose bytes are ``data``; see :func:`read_kwg`. ``how``: where the set came from,
    for the messages that say it does not fit (and the list's ``tiles_said``)."""
    if len(data) > MAX_KWG_BYTES:
        looks = Message("error.sniff.kbwg")
        raise WordListError("error.kwg.not_kwg", path=str(path), looks=looks)
    nodes = _nodes(data, path)
    _check_whole(nodes, path)
    root = nodes[0] & _ARC
    total, counts = _check_dawg(nodes, root, path, tiles)
    result = WordList(
        source_name=path.name,
        source_sha256=hashlib.sha256(data).hexdigest(),
        format=SourceFormat.KWG,
        tiles=tiles,
        tiles_said=how,
    )
    usage = _read_words(nodes, root, tiles, result, total, counts, progress)
    misfit = check(usage, tiles, path, how)
    if misfit is not None:
        if not force_tiles:
            raise WordListError(misfit)
        result.tiles_forced = misfit.text("en")
    return result


def _nodes(data: bytes, path: Path) -> list[int]:
    """The nodes of a KWG file's bytes, after checking that the file is one (see :func:`_not_a_kwg`)."""
    if not data:
        raise WordListError("error.kwg.empty", path=str(path))
    looks = _not_a_kwg(data, path)
    if looks is not None:
        raise WordListError("error.kwg.not_kwg", path=str(path), looks=looks)
    if len(data) % 4:
        raise WordListError("error.kwg.size", path=str(path), size=len(data))
    packed = array(_U32)
    packed.frombytes(data)
    if sys.byteorder == "big":  # the file is little-endian whatever the machine
        packed.byteswap()
    return packed.tolist()  # a list indexes faster than an array: no int object made at each read


def _check_whole(nodes: list[int], path: Path) -> None:
    """Check the file is whole, the GADDAG too (the words are read from the DAWG alone, which a cut in the GADDAG
    after it leaves readable): every arc points inside the file, and its last node ends a list. Raises
    :class:`WordListError` naming the first node at fault."""
    size = len(nodes)
    if max(node & _ARC for node in nodes) >= size:
        at = next(index for index, node in enumerate(nodes) if node & _ARC >= size)
        raise WordListError("error.kwg.truncated", path=str(path), node=at, target=nodes[at] & _ARC, nodes=size)
    if not nodes[-1] & _IS_END:
        raise WordListError("error.kwg.runs_off", path=str(path), node=size - 1, nodes=size)


def _not_a_kwg(data: bytes, path: Path) -> Message | None:
    """What a file given as a KWG looks like instead, or None if it may be one: by its name (the same family's
    ``.kbwg`` and ``.kad``), by its first bytes (gzip, SQLite, text...) or, for a KLV, by its length prefixes."""
    suffix = path.suffix.casefold()
    if suffix == ".kbwg":
        return Message("error.sniff.kbwg")
    if suffix == ".kad":
        return Message("error.sniff.kad")
    if _is_klv(data):
        return Message("error.sniff.klv")
    if looks_like_kwg(data):
        return None
    looks = looks_like(data)
    if looks.key == "error.sniff.unknown" and len(data) >= 4:  # binary: say what its node 0 is not
        looks = _unlike_a_kwg(int.from_bytes(data[:4], "little"))
    return looks


def _is_klv(data: bytes) -> bool:
    """Whether ``data`` is laid out as a KLV (or KLV2) leave-values file: a u32 count of nodes, the nodes, a u32
    count of values, then that many i16 (KLV) or f32 (KLV2) values. A KWG's first u32 (node 0) is at least
    0x400000 (its end flag), which as a count would need a file of more than 16 MiB."""
    if len(data) < 8:
        return False
    count = int.from_bytes(data[:4], "little")
    values_at = 4 + 4 * count
    if values_at + 4 > len(data):
        return False
    values = int.from_bytes(data[values_at : values_at + 4], "little")
    return len(data) - values_at - 4 in (2 * values, 4 * values)


def _unlike_a_kwg(first: int) -> Message:
    """What a file whose node 0 is not a KWG's pointer node looks like: a big KWG's pointer node has tile 0 and
    its end flag in its low byte (0x40), a KWG's in its high ones."""
    return Message("error.sniff.kbwg" if first & 0xFF == 0x40 else "error.sniff.not_pointer")


def _check_dawg(nodes: list[int], root: int, path: Path, tiles: TileSet) -> tuple[int, list[int]]:
    """Check every node the DAWG reaches from ``root`` and return how many words it holds, and for each node the
    words from it to the end of its list (capped just past :data:`MAX_WORDS`). Raises :class:`WordListError`
    for a node past the end of the file, a tile outside ``tiles``, a loop, a word of more than
    :data:`MAX_WORD_TILES` tiles, too many words or none, a node that leads to no word (a graph can hide any
    number of paths behind such nodes), or more nodes to walk than :data:`MAX_WALK`.

    Each node is visited once (a depth-first walk with an explicit stack, so no recursion limit), and what
    listing the words would take is counted before it is done, which is what makes reading safe: a damaged or
    hostile file cannot make the word listing loop or run for ever.
    """
    size, top = len(nodes), len(tiles.tiles)
    if root == 0:
        raise WordListError("error.kwg.no_words", path=str(path))
    if root >= size:
        raise WordListError("error.kwg.truncated", path=str(path), node=0, target=root, nodes=size)
    # Per node: 0 not seen, 1 being walked (its arc and its next sibling not done yet), 2 done.
    state = bytearray(size)
    counts = [0] * size  # words from this node to the end of its list
    dead = -1  # the first node found that leads to no word
    walks = [0] * size  # nodes the word listing visits from this node to the end of its list (a trie's nodes)
    heights = bytearray(size)  # tiles in the longest word from this node to the end of its list
    stack = [root]
    while stack:
        index = stack[-1]
        seen = state[index]
        if seen == 2:  # reached twice before it was walked: walked already
            stack.pop()
            continue
        node = nodes[index]
        arc, more = node & _ARC, not node & _IS_END
        if seen == 0:
            _check_node(node, index, size, path, tiles, top)
            state[index] = 1
            for follow in (arc, index + 1 if more else 0):
                if follow and state[follow] != 2:
                    if state[follow] == 1:  # a node on the way to this one: the graph loops
                        raise WordListError("error.kwg.cycle", path=str(path), node=follow)
                    stack.append(follow)
            continue
        count, height, walk = (node & _ACCEPTS) >> 23, 1, 1
        if arc:
            count += counts[arc]
            height += heights[arc]
            walk += walks[arc]
        if not count and dead < 0:  # no word ends here nor below: an engine's graph has no such node
            dead = index
        if more:
            count += counts[index + 1]
            height = max(height, heights[index + 1])
            walk += walks[index + 1]
        if height > MAX_WORD_TILES:
            raise WordListError("error.kwg.too_long", path=str(path), node=index, max=MAX_WORD_TILES)
        counts[index], heights[index], state[index] = min(count, MAX_WORDS + 1), height, 2
        walks[index] = min(walk, MAX_WALK + 1)
        stack.pop()
    total = counts[root]
    if total > MAX_WORDS:
        raise WordListError("error.kwg.too_many", path=str(path), max=MAX_WORDS)
    if total == 0:
        raise WordListError("error.kwg.no_words", path=str(path))
    if dead >= 0:
        raise WordListError("error.kwg.dead_end", path=str(path), node=dead)
    if walks[root] > MAX_WALK:
        raise WordListError("error.kwg.too_many_paths", path=str(path), max=MAX_WALK, n=total)
    return total, counts


def _check_node(node: int, index: int, size: int, path: Path, tiles: TileSet, top: int) -> None:
    """Raise :class:`WordListError` if the DAWG node ``node`` (at ``index``) holds a tile outside the set or
    leads past the end of the file."""
    tile = node >> _TILE_SHIFT
    if tile == 0:
        raise WordListError("error.kwg.blank", path=str(path), node=index)
    if tile > top:
        raise WordListError("error.kwg.tile_range", path=str(path), node=index, tile=tile, tiles=tiles.name, size=top)
    arc = node & _ARC
    if arc >= size:
        raise WordListError("error.kwg.truncated", path=str(path), node=index, target=arc, nodes=size)
    if not node & _IS_END and index + 1 >= size:
        raise WordListError("error.kwg.runs_off", path=str(path), node=index, nodes=size)


def _read_words(
    nodes: list[int],
    root: int,
    tiles: TileSet,
    result: WordList,
    total: int,
    counts: list[int],
    progress: Progress | None,
) -> TileUsage:
    """Add every word of the DAWG (checked by :func:`_check_dawg`, whose ``counts`` say where words are) to
    ``result``, in the set's stored form, and return what they are made of. An arc to no word is not followed."""
    names = ("", *tiles.tiles)  # tile index -> tile
    stored, words = tiles.stored, result.words
    usage = TileUsage(uses=[0] * 256)
    uses = usage.uses
    path: list[str] = []  # the tiles of the word being walked, up to the node at hand
    # ordered[d]: the tile number at depth d if the tiles up to it are in non-decreasing order, else 256.
    ordered: list[int] = [0]
    stack = [(root, 0)]  # a sibling list to walk, and how many tiles come before it
    found = entries = ordered_words = 0
    while stack:
        index, depth = stack.pop()
        while True:  # the list, node by node; a node's own list is walked before its next sibling
            node = nodes[index]
            tile = node >> _TILE_SHIFT
            arc = node & _ARC
            below = counts[arc] if arc else 0
            del path[depth:]
            path.append(names[tile])
            del ordered[depth + 1 :]
            ordered.append(tile if tile >= ordered[depth] else 256)
            accepts = node & _ACCEPTS
            uses[tile] += below + (1 if accepts else 0)  # the words through this node
            if accepts:
                found += 1
                if depth:  # two tiles or more
                    entries += 1
                    ordered_words += ordered[depth + 1] != 256
                word = stored(path)
                if word in words:  # only a damaged file repeats a word: a DAWG holds each once
                    result.duplicates += 1
                words.add(word)
                if progress is not None and found % _PROGRESS_EVERY == 0:
                    progress(found, total)
            if node & _IS_END:
                if not below:
                    break
                index, depth = arc, depth + 1
                continue
            if below:
                stack.append((index + 1, depth))
                index, depth = arc, depth + 1
            else:
                index += 1
    result.lines = found
    if progress is not None:
        progress(found, total)
    usage.uses = uses[: len(names)]
    usage.words, usage.entries, usage.ordered = found, entries, ordered_words
    return usage
