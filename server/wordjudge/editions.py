"""Lexicon fingerprints and the registry of known editions.

The fingerprint of a word list is the SHA-256 of its canonical form: the unique
upper-case (NFC) words sorted by code point, joined with ``\\n``, with a final
``\\n``, encoded as UTF-8. It depends on the words only: order, case, line ends,
comments, definitions, compression and duplicates of the source do not change it.

The registry (``lexicons/editions.toml``, data shipped with wordjudge) pins the
word count and fingerprint of each known edition, so that a compiled lexicon can
be identified as "matches CSW24 (280,887 words)" rather than trusted by its name.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import InvalidInput

_REGISTRY_RESOURCE = "editions.toml"


def canonical_form(sorted_unique_words: Iterable[str]) -> bytes:
    """Encode words, already unique, normalised and sorted by code point, in the canonical form."""
    return "".join(word + "\n" for word in sorted_unique_words).encode("utf-8")


def fingerprint(words: Iterable[str]) -> str:
    """Return the fingerprint (hex SHA-256 of the canonical form) of normalised ``words``.

    Duplicates are dropped and the words sorted here; they must already be in
    wordjudge's normal form (see :func:`wordjudge.wordlist.normalise`).
    """
    return hashlib.sha256(canonical_form(sorted(set(words)))).hexdigest()


def short(fingerprint: str) -> str:
    """The first 12 hex digits of a fingerprint, as shown on screens and dockets."""
    return fingerprint[:12]


@dataclass(frozen=True)
class Edition:
    """One known edition of a lexicon, as pinned in the registry."""

    name: str
    title: str
    words: int
    sha256: str
    official: bool  # an official tournament lexicon (copyrighted: never shipped)


class Match(StrEnum):
    EXACT = "match"  # same fingerprint: the very edition
    SAME_COUNT = "same_count"  # same word count as an edition, different content
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Identification:
    """What the registry says of a word list."""

    match: Match
    edition: Edition | None

    def describe(self) -> str:
        """One line for people: "matches CSW24 (280,887 words)", "unknown list", ..."""
        if self.edition is None:
            return "unknown list"
        if self.match is Match.EXACT:
            return f"matches {self.edition.name} ({self.edition.words:,} words)"
        return f"word count of {self.edition.name} but different content"

    def as_dict(self) -> dict[str, Any]:
        return {
            "match": self.match.value,
            "edition": self.edition.name if self.edition else None,
            "official": bool(self.edition and self.edition.official and self.match is Match.EXACT),
            "description": self.describe(),
        }


class Registry:
    """The known editions, looked up by fingerprint and by word count."""

    def __init__(self, editions: Iterable[Edition]) -> None:
        self.editions = tuple(editions)
        self._by_sha = {edition.sha256: edition for edition in self.editions}

    def identify(self, word_count: int, fingerprint: str) -> Identification:
        """Say which edition a list with this word count and fingerprint is, if any."""
        edition = self._by_sha.get(fingerprint)
        if edition is not None:
            return Identification(Match.EXACT, edition)
        for edition in self.editions:
            if edition.words == word_count:
                return Identification(Match.SAME_COUNT, edition)
        return Identification(Match.UNKNOWN, None)

    def get(self, name: str) -> Edition | None:
        """The edition of that name (case-insensitive), or None."""
        return next((e for e in self.editions if e.name.casefold() == name.casefold()), None)


def load_registry(path: Path | None = None) -> Registry:
    """Load the registry from ``path``, or the one shipped with wordjudge.

    Raises :class:`InvalidInput` naming the file and entry if it is malformed.
    """
    if path is None:
        return _shipped_registry()
    return _parse_registry(path.read_text("utf-8"), str(path))


@cache
def _shipped_registry() -> Registry:
    # Shipped with the package, so it cannot change while the process runs; a Registry is immutable.
    text = resources.files("wordjudge.lexicons").joinpath(_REGISTRY_RESOURCE).read_text("utf-8")
    return _parse_registry(text, f"lexicons/{_REGISTRY_RESOURCE}")


def _parse_registry(text: str, where: str) -> Registry:
    try:
        data = tomllib.loads(text)
        entries = data["edition"]
        editions = [
            Edition(
                name=str(e["name"]),
                title=str(e["title"]),
                words=int(e["words"]),
                sha256=str(e["sha256"]).lower(),
                official=bool(e["official"]),
            )
            for e in entries
        ]
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}: malformed edition registry ({exc!s})") from exc
    for edition in editions:
        if len(edition.sha256) != 64 or any(c not in "0123456789abcdef" for c in edition.sha256):
            raise InvalidInput(f"{where}: edition {edition.name} has a malformed sha256")
    return Registry(editions)
