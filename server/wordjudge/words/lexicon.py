"""Compiled lexicons: a marisa-trie of the words plus a manifest that proves what it holds.

A compiled lexicon is a folder ``<data dir>/lexicons/<NAME>/`` with two files:

- ``words.marisa``: the words, normalised, in a marisa-trie (memory-mapped on load);
- ``manifest.json``: name, word count, alphabet, word lengths, the fingerprint of
  the words (see :mod:`wordjudge.words.editions`), the trie file's own SHA-256, the source
  file's name and SHA-256, build time and tool version; and for a lexicon of a tile set (Spanish, Catalan,
  Welsh: :mod:`wordjudge.words.tiles`), the set itself, whose words are tile sequences in its stored form
  (``[CH]ICO``), whose lengths count tiles and whose fingerprint covers the set.

Loading checks the trie file against the manifest before first use, so a missing,
truncated or altered file is refused with an error that names it, never used.
:meth:`Lexicon.verify_content` goes further and recomputes the fingerprint from
the words in the trie.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import marisa_trie

from wordjudge import __version__
from wordjudge.base.errors import InvalidInput, LexiconExists, LexiconIntegrityError, LexiconNotFound, Message
from wordjudge.base.files import fsync_path
from wordjudge.base.schemas import strict_json
from wordjudge.words.editions import (
    LEXICON_NAME,
    Registry,
    check_name,
    check_new_name,
    fingerprint,
    load_registry,
    sorted_fingerprint,
)
from wordjudge.words.tiles import TileSet

if TYPE_CHECKING:
    from wordjudge.words.wordlist import WordList

MANIFEST_FILE = "manifest.json"
TRIE_FILE = "words.marisa"
MANIFEST_FORMAT = 1
# A lexicon of tiles of several letters: a server that reads format 1 only would take [CH]ICO for letters.
TILES_MANIFEST_FORMAT = 2


@dataclass(frozen=True)
class Manifest:
    """What a compiled lexicon holds and where it came from."""

    name: str
    word_count: int
    alphabet: str  # every character that occurs in a word, sorted by code point
    min_length: int
    max_length: int
    fingerprint: str
    trie_sha256: str
    trie_bytes: int
    source_name: str
    source_sha256: str
    source_format: str
    duplicates: int
    skipped_lines: int
    built_at: str  # UTC, ISO 8601
    tool_version: str
    demo: bool = False  # the built-in demo list, not an official lexicon
    tiles: dict[str, Any] | None = None  # the tile set (TileSet.as_dict), if the list was compiled with one
    split_tiles: tuple[str, ...] = ()  # its longer tiles that words also hold as separate tiles (TileSet.split_in)
    # What showed that a KWG's tile set does not fit its words, when the TD compiled it so (--force-tiles); "" if not.
    tiles_forced: str = ""
    format: int = MANIFEST_FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def read(cls, path: Path) -> Manifest:
        """Read a manifest file; raise :class:`LexiconIntegrityError` naming it if it is missing or malformed."""
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise LexiconIntegrityError("error.lexicon.manifest_missing", path=str(path)) from None
        except (OSError, ValueError) as exc:
            raise LexiconIntegrityError("error.lexicon.manifest_unreadable", path=str(path), reason=str(exc)) from exc
        if not isinstance(data, dict) or data.get("format") not in (MANIFEST_FORMAT, TILES_MANIFEST_FORMAT):
            raise LexiconIntegrityError("error.lexicon.manifest_format", path=str(path), format=MANIFEST_FORMAT)
        try:
            # Strict: a word count of "12" or true is not a number; keys a later version adds are ignored.
            manifest = strict_json(cls, data)
            manifest.tile_set()  # a set that is not one: refused here, by the manifest's name
        except (ValueError, InvalidInput) as exc:
            reason = exc.message if isinstance(exc, InvalidInput) else str(exc)
            raise LexiconIntegrityError("error.lexicon.manifest_malformed", path=str(path), reason=reason) from exc
        return manifest

    def tile_set(self) -> TileSet | None:
        """The tile set the words are stored in, or None (one letter a tile, the letters the list has).

        Raises :class:`InvalidInput` if the manifest's set is not one."""
        return None if self.tiles is None else TileSet.from_dict(self.tiles, MANIFEST_FILE)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def tiles_covered(tiles: TileSet | None) -> str | None:
    """What a lexicon's fingerprint covers of its tile set: the set's own fingerprint where a tile is several
    letters (the stored words then depend on it), nothing otherwise (an English list's fingerprint is its words')."""
    return tiles.fingerprint if tiles is not None and tiles.multi else None


def list_fingerprint(word_list: WordList) -> str:
    """The fingerprint a lexicon compiled from ``word_list`` has."""
    return fingerprint(word_list.words, tiles_covered(word_list.tiles))


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def compile_lexicon(word_list: WordList, directory: Path, name: str, *, demo: bool = False) -> Manifest:
    """Compile ``word_list`` into ``directory`` (which must not exist yet) and return its manifest.

    The folder is written beside its final place and renamed into it only when
    complete, so a crash never leaves a half-written lexicon under that name.
    Raises :class:`InvalidInput` if the list has no words.
    """
    check_name(name)
    words = word_list.sorted_words()
    if not words:
        raise InvalidInput("error.lexicon.no_words", source=word_list.source_name)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=directory.parent))
    try:
        trie_path = staging / TRIE_FILE
        marisa_trie.Trie(words).save(str(trie_path))
        # A set of plain letters (English) checked the list's letters; the words are read as plain letters are.
        tiles = word_list.tiles if word_list.tiles is not None and not word_list.tiles.plain else None
        lengths = [len(word) for word in words] if tiles is None else [tiles.length(word) for word in words]
        manifest = Manifest(
            name=name,
            word_count=len(words),
            alphabet="".join(sorted(set("".join(words)) - set("[]"))),  # the letters (a tile set's brackets are not)
            min_length=min(lengths),
            max_length=max(lengths),
            fingerprint=sorted_fingerprint(words, tiles_covered(tiles)),
            trie_sha256=file_sha256(trie_path),
            trie_bytes=trie_path.stat().st_size,
            source_name=word_list.source_name,
            source_sha256=word_list.source_sha256,
            source_format=word_list.format.value,
            duplicates=word_list.duplicates,
            skipped_lines=len(word_list.invalid),
            built_at=datetime.now(UTC).isoformat(timespec="seconds"),
            tool_version=__version__,
            demo=demo,
            tiles=tiles.as_dict() if tiles is not None else None,
            split_tiles=tuple(tiles.split_in(words)) if tiles is not None else (),
            tiles_forced=word_list.tiles_forced,
            format=MANIFEST_FORMAT if tiles is None else TILES_MANIFEST_FORMAT,
        )
        (staging / MANIFEST_FILE).write_text(manifest.to_json(), "utf-8")
        for path in staging.iterdir():
            fsync_path(path)
        fsync_path(staging)
        os.rename(staging, directory)
        fsync_path(directory.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


class Lexicon:
    """A compiled lexicon, verified and memory-mapped. ``word in lexicon`` looks a word up.

    Words must be in wordjudge's normal form (:func:`wordjudge.words.normal_form.normalise`).
    """

    def __init__(self, manifest: Manifest, trie: marisa_trie.Trie, directory: Path) -> None:
        self.manifest = manifest
        self.directory = directory
        self.tiles = manifest.tile_set()
        self._trie = trie
        # `word in lexicon` without the method call in between: what a profile's lookup calls per word.
        self.contains: Callable[[str], bool] = trie.__contains__

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def fingerprint(self) -> str:
        return self.manifest.fingerprint

    def __contains__(self, word: object) -> bool:
        return word in self._trie

    def __len__(self) -> int:
        return len(self._trie)

    def __repr__(self) -> str:
        return f"<Lexicon {self.name} {self.manifest.word_count} words {self.fingerprint[:12]}>"

    @classmethod
    def open(cls, directory: Path) -> Lexicon:
        """Open the compiled lexicon in ``directory`` after checking its trie file against its manifest.

        Raises :class:`LexiconIntegrityError`, naming the file, if the manifest or
        trie is missing, truncated, altered or unreadable, or if both are another lexicon's.
        """
        manifest = Manifest.read(directory / MANIFEST_FILE)
        trie_path = directory / TRIE_FILE
        try:
            size = trie_path.stat().st_size
        except FileNotFoundError:
            raise LexiconIntegrityError("error.lexicon.trie_missing", path=str(trie_path)) from None
        if size != manifest.trie_bytes:
            raise LexiconIntegrityError(
                "error.lexicon.trie_size", path=str(trie_path), size=size, expected=manifest.trie_bytes
            )
        actual = file_sha256(trie_path)
        if actual != manifest.trie_sha256:
            raise LexiconIntegrityError(
                "error.lexicon.trie_sha256", path=str(trie_path), actual=actual, expected=manifest.trie_sha256
            )
        trie = marisa_trie.Trie()
        try:
            trie.mmap(str(trie_path))
        except Exception as exc:  # marisa raises bare Exception subclasses from C++
            raise LexiconIntegrityError("error.lexicon.trie_unreadable", path=str(trie_path), reason=str(exc)) from exc
        if len(trie) != manifest.word_count:
            raise LexiconIntegrityError(
                "error.lexicon.trie_words", path=str(trie_path), words=len(trie), expected=manifest.word_count
            )
        # Sound files, but both another lexicon's (a folder copied over this one): they would be served
        # under this name. (casefold: a case-insensitive file system may give the name as it was asked for.)
        if manifest.name.casefold() != directory.name.casefold():
            raise LexiconIntegrityError(
                "error.lexicon.swapped", path=str(directory / MANIFEST_FILE), name=manifest.name, folder=directory.name
            )
        return cls(manifest, trie, directory)

    def words(self) -> list[str]:
        """Every word, sorted by code point."""
        return sorted(self._trie.keys())

    def verify_content(self) -> None:
        """Recompute the fingerprint from the words in the trie; raise :class:`LexiconIntegrityError` if it differs.

        This proves the content, not just the file: the words served are the words fingerprinted.
        """
        words = self.words()
        actual = sorted_fingerprint(words, tiles_covered(self.tiles))
        split = tuple(self.tiles.split_in(words)) if self.tiles is not None else ()
        if split != self.manifest.split_tiles:
            raise LexiconIntegrityError(
                "error.lexicon.manifest_malformed",
                path=str(self.directory / MANIFEST_FILE),
                reason=f"split_tiles says {list(self.manifest.split_tiles)}, its words {list(split)}",
            )
        if actual != self.manifest.fingerprint:
            raise LexiconIntegrityError(
                "error.lexicon.fingerprint",
                path=str(self.directory / TRIE_FILE),
                actual=actual,
                expected=self.manifest.fingerprint,
            )


class LexiconStore:
    """The compiled lexicons of a data dir: ``<data dir>/lexicons/<NAME>/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / check_name(name)

    def names(self) -> list[str]:
        """Names of the compiled lexicons present, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if LEXICON_NAME.fullmatch(p.name) and p.is_dir())

    def resolve(self, name: str) -> str:
        """The compiled lexicon ``name`` means, whatever its case (``csw24``: ``CSW24``), or ``name`` itself if none
        is compiled under it: lexicon names match in any case everywhere, as in the event file."""
        check_name(name)
        if (self.root / name).is_dir():
            return name
        same = [known for known in self.names() if known.casefold() == name.casefold()]
        return same[0] if len(same) == 1 else name

    def exists(self, name: str) -> bool:
        return self.path(self.resolve(name)).is_dir()

    def add(
        self,
        word_list: WordList,
        name: str,
        *,
        replace: bool = False,
        demo: bool = False,
        force: bool = False,
        registry: Registry | None = None,
    ) -> Manifest:
        """Compile ``word_list`` under ``name``.

        Raises :class:`LexiconExists` if the name is taken and ``replace`` is false, and
        :class:`InvalidInput` if the name claims an edition (CSW24, NWL2023...: see
        :meth:`Registry.claim`) that the words are not, unless ``force``: a forced one is
        shown as unverified wherever it is served. Nothing is written when it raises.
        A replaced lexicon is swapped out only after the new one is complete.
        """
        if not demo:
            check_new_name(name)
        if self.exists(name):  # whatever its case: two lexicons that only the case tells apart would be one name
            name = self.resolve(name)
            if not replace:
                raise LexiconExists("error.lexicon.exists", name=name, folder=str(self.root))
        target = self.path(name)
        if not demo and not force:
            registry = registry or load_registry()
            claim = registry.claim(name, len(word_list.words), list_fingerprint(word_list))
            if claim is not None and claim.unverified:
                remedy = claim.remedy(lambda edition: f"--name {edition}")
                raise InvalidInput(
                    "error.lexicon.claim_refused",
                    name=name,
                    problem=claim.problem(),
                    remedy=remedy,
                    details=claim.as_dict(),
                )
        if not target.exists():
            return compile_lexicon(word_list, target, name, demo=demo)
        old = target.with_name(f".{name}.old")
        shutil.rmtree(old, ignore_errors=True)
        staging = target.with_name(f".{name}.new")
        shutil.rmtree(staging, ignore_errors=True)
        manifest = compile_lexicon(word_list, staging, name, demo=demo)
        os.rename(target, old)
        os.rename(staging, target)
        fsync_path(self.root)
        shutil.rmtree(old, ignore_errors=True)
        return manifest

    def manifest(self, name: str) -> Manifest:
        """The manifest of ``name``, read without verifying the trie. Raises :class:`LexiconNotFound`."""
        return Manifest.read(self._existing(name) / MANIFEST_FILE)

    def open(self, name: str) -> Lexicon:
        """Open and verify ``name``. Raises :class:`LexiconNotFound` or :class:`LexiconIntegrityError`."""
        return Lexicon.open(self._existing(name))

    def _existing(self, name: str) -> Path:
        directory = self.path(self.resolve(name))
        if not directory.is_dir():
            known: str | Message = ", ".join(self.names()) or Message("error.none_yet")
            raise LexiconNotFound("error.lexicon.not_found", name=name, folder=str(self.root), known=known)
        return directory
