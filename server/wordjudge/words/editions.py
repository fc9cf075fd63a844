"""Lexicon fingerprints, the registry of known editions, and the names a lexicon may have (``check_name``).

The fingerprint of a word list is the SHA-256 of its canonical form: the unique
upper-case (NFC) words sorted by code point, joined with ``\\n``, with a final
``\\n``, encoded as UTF-8. It depends on the words only: order, case, line ends,
comments, definitions, compression and duplicates of the source do not change it.

The registry (``lexicons/editions.toml``, data shipped with wordjudge) pins the
word count and fingerprint of each known edition, so that a compiled lexicon can
be identified as "matches CSW24 (280,887 words)" rather than trusted by its name.

A name is checked too: a lexicon or profile named like an edition (``CSW24``,
``nwl23``, ``CSW2024-club``, ``ENABLE``) claims that edition, and :meth:`Registry.claim`
says whether its words bear the claim out. One that does not is refused unless the
TD forces it, and is then shown everywhere as "UNVERIFIED: not the official CSW24".
The verdict is worked out from name, word count, fingerprint and registry each time,
never stored, so it cannot go stale.

The registry also knows engines' published KWG files by the SHA-256 of the file itself (``[[kwg]]``): a KWG
does not say which tiles its numbers are, and one the registry knows is read with the set it names
(:meth:`Registry.kwg_file`), whatever the file is called.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from wordjudge.base.errors import InvalidInput

_REGISTRY_RESOURCE = "editions.toml"
DEMO_NAME = "demo"  # the name reserved for the built-in demo list (see wordjudge.words.demo)
# Families of edition names, besides those the registry lists: a name like these claims an edition.
FAMILIES = ("CSW", "NWL", "TWL", "OTCWL", "ENABLE")
_FAMILY = re.compile(r"[A-Za-z]+")
# After a family: a year of 2 or 4 digits (not more), then any suffix ("CSW24", "NWL2023-club").
_YEAR = re.compile(r"(\d{4}|\d{2})(?!\d)")
# What may name a compiled lexicon or a profile (its folder, and the name an event's division gives).
LEXICON_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_name(name: str) -> str:
    """Return ``name`` if it can name a lexicon or profile; raise :class:`InvalidInput` if not."""
    if not LEXICON_NAME.fullmatch(name):
        raise InvalidInput("error.lexicon.bad_name", name=repr(name))
    return name


def check_new_name(name: str) -> str:
    """Like :func:`check_name`, and refuse the name reserved for the demo list."""
    if check_name(name).casefold() == DEMO_NAME:
        raise InvalidInput("error.lexicon.reserved_name", name=repr(name))
    return name


def canonical_form(sorted_unique_words: Iterable[str]) -> bytes:
    """Encode words, already unique, normalised and sorted by code point, in the canonical form."""
    words = list(sorted_unique_words)
    # One join, not a string a word: four times as fast for a lexicon (each server start verifies each one).
    return ("\n".join(words) + "\n").encode("utf-8") if words else b""


def fingerprint(words: Iterable[str], tiles: str | None = None) -> str:
    """Return the fingerprint (hex SHA-256 of the canonical form) of normalised ``words``.

    Duplicates are dropped and the words sorted here; they must already be in
    wordjudge's normal form (see :func:`wordjudge.words.normal_form.normalise`). ``tiles``: the fingerprint of the
    tile set the words are stored in, for a set with tiles of several letters (see :func:`sorted_fingerprint`).
    """
    return sorted_fingerprint(sorted(set(words)), tiles)


def sorted_fingerprint(sorted_unique_words: Iterable[str], tiles: str | None = None) -> str:
    """The fingerprint of words already unique, normalised and sorted. With ``tiles`` (a tile set's fingerprint),
    the SHA-256 of ``wordjudge-tiles/1 <tiles>`` and a newline, then the canonical form: the same words read with
    another set are another lexicon (how a typed word is read into tiles is part of what is judged)."""
    digest = hashlib.sha256()
    if tiles is not None:
        digest.update(f"wordjudge-tiles/1 {tiles}\n".encode())
    digest.update(canonical_form(sorted_unique_words))
    return digest.hexdigest()


def short(fingerprint: str) -> str:
    """The first 12 hex digits of a fingerprint, as shown on screens and dockets."""
    return fingerprint[:12]


@dataclass(frozen=True)
class Edition:
    """One known edition of a lexicon, as pinned in the registry."""

    name: str
    title: str
    words: int
    sha256: str | None  # None: only the word count is known, so the words cannot be checked
    official: bool  # an official tournament lexicon (copyrighted: never shipped)

    @property
    def family(self) -> str:
        """The letters the name starts with, upper case: ``CSW`` for CSW24, ``ENABLE`` for ENABLE."""
        found = _FAMILY.match(self.name)
        return found.group(0).upper() if found else self.name.upper()

    @property
    def year(self) -> str | None:
        """The last two digits of the edition's year (``24`` for CSW24 and CSW2024), or None if it has none."""
        found = _YEAR.match(self.name[len(self.family) :])
        return found.group(1)[-2:] if found else None


class Match(StrEnum):
    EXACT = "match"  # same fingerprint: the very edition
    SAME_COUNT = "same_count"  # same word count as an edition, different content
    COUNT_ONLY = "count_only"  # same word count as an edition whose fingerprint is not known
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
        if self.match is Match.COUNT_ONLY:
            return f"word count of {self.edition.name} (its words cannot be checked: no fingerprint is known)"
        return f"word count of {self.edition.name} but different content"

    def as_dict(self) -> dict[str, Any]:
        return {
            "match": self.match.value,
            "edition": self.edition.name if self.edition else None,
            "official": bool(self.edition and self.edition.official and self.match is Match.EXACT),
            "description": self.describe(),
        }


@dataclass(frozen=True)
class KwgFile:
    """An engine's published KWG file, known by the SHA-256 of its bytes: the tile set its numbers are."""

    sha256: str
    tiles: str  # the name of a built-in tile set (checked where it is used: a set it lacks is refused then)
    edition: str  # the edition it holds, as the engines name it (DISC2, FILE2017)
    source: str  # where it is published, for people


class Registry:
    """The known editions, looked up by fingerprint and by word count; and the known KWG files, by their SHA-256."""

    def __init__(self, editions: Iterable[Edition], kwg_files: Iterable[KwgFile] = ()) -> None:
        self.editions = tuple(editions)
        self._kwg_files = {entry.sha256: entry for entry in kwg_files}
        self._by_sha = {edition.sha256: edition for edition in self.editions if edition.sha256}
        self.families = tuple(dict.fromkeys([*FAMILIES, *(edition.family for edition in self.editions)]))

    def identify(self, word_count: int, fingerprint: str) -> Identification:
        """Say which edition a list with this word count and fingerprint is, if any."""
        edition = self._by_sha.get(fingerprint)
        if edition is not None:
            return Identification(Match.EXACT, edition)
        for edition in self.editions:
            if edition.words == word_count:
                return Identification(Match.SAME_COUNT if edition.sha256 else Match.COUNT_ONLY, edition)
        return Identification(Match.UNKNOWN, None)

    def claimed(self, name: str) -> tuple[str, tuple[Edition, ...]] | None:
        """The edition a lexicon or profile name claims, as ``(what it claims, the registry's editions of it)``.

        None if the name claims no edition. A name claims one when, ignoring case, it starts
        with a family (CSW, NWL, TWL, OTCWL, ENABLE or one the registry lists), then a year of
        2 or 4 digits and any suffix (``CSW24``, ``nwl23``, ``CSW2024-club``: CSW24, NWL2023,
        CSW24), or no year and nothing or a non-letter (``CSW``: any CSW edition; ``ENABLE1``).
        What it claims is the edition's name (``CSW24``), or the family's if it gives no year
        (``CSW``). The editions are empty when the registry knows none of that family and year.
        """
        found = self._claimed(name)
        return None if found is None else (found[1], found[2])

    def _claimed(self, name: str) -> tuple[str, str, tuple[Edition, ...]] | None:
        """Like :meth:`claimed`, with the family first."""
        upper = name.upper()
        # Longest family first, so that a family that begins another's name cannot take it.
        for family in sorted(self.families, key=len, reverse=True):
            if not upper.startswith(family):
                continue
            rest = name[len(family) :]
            of_family = tuple(edition for edition in self.editions if edition.family == family)
            if of_family and all(edition.year is None for edition in of_family):
                # A family without years (ENABLE): ENABLE1, ENABLE2K and ENABLE-x claim it; ENABLED does not.
                if rest[:1].isalpha():
                    continue
                return family, of_family[0].name, of_family
            year = _YEAR.match(rest)
            if year is not None:
                matching = tuple(edition for edition in of_family if edition.year == year.group(1)[-2:])
                # An edition the registry does not know is named as written: CSW25, NWL2026.
                return family, matching[0].name if matching else family + year.group(1), matching
            if rest[:1].isalnum():  # CSWords, TWL6: not a family and a year
                continue
            return family, family, of_family
        return None

    def claim(self, name: str, word_count: int, fingerprint: str) -> Claim | None:
        """Check the edition ``name`` claims (see :meth:`claimed`) against a list's word count and fingerprint.

        None if the name claims no edition.
        """
        found = self._claimed(name)
        if found is None:
            return None
        family, what, editions = found
        if not editions:
            verdict = ClaimVerdict.UNKNOWN_EDITION
        elif any(edition.sha256 == fingerprint for edition in editions):
            verdict = ClaimVerdict.VERIFIED
        elif any(edition.sha256 is None and edition.words == word_count for edition in editions):
            verdict = ClaimVerdict.COUNT_ONLY
        else:
            verdict = ClaimVerdict.MISMATCH
        known = tuple(edition.name for edition in self.editions if edition.family == family)
        return Claim(
            name, what, editions, verdict, word_count, fingerprint, self.identify(word_count, fingerprint), known
        )

    def get(self, name: str) -> Edition | None:
        """The edition of that name (case-insensitive), or None."""
        return next((e for e in self.editions if e.name.casefold() == name.casefold()), None)

    def kwg_file(self, sha256: str) -> KwgFile | None:
        """The published KWG file whose bytes have this SHA-256 (hex), or None."""
        return self._kwg_files.get(sha256.lower())


class ClaimVerdict(StrEnum):
    VERIFIED = "verified"  # the fingerprint is the claimed edition's
    COUNT_ONLY = "count_only"  # the word count is the claimed edition's, whose fingerprint is not known
    MISMATCH = "mismatch"  # not the claimed edition
    UNKNOWN_EDITION = "unknown_edition"  # the registry knows no such edition: nothing to check it against


@dataclass(frozen=True)
class Claim:
    """The edition a lexicon or profile name claims, and whether the list's words bear it out."""

    name: str  # the name that claims it
    claimed: str  # what it claims: "CSW24", or "CSW" for any CSW edition
    editions: tuple[Edition, ...]  # the registry's editions it may be; none if the registry knows none
    verdict: ClaimVerdict
    word_count: int
    fingerprint: str
    identification: Identification  # what the list is, whatever its name
    known: tuple[str, ...] = ()  # the registry's editions of that family, to name in a message

    @property
    def unverified(self) -> bool:
        """Whether the name claims an edition the list is not shown to be (refused unless forced)."""
        return self.verdict in (ClaimVerdict.MISMATCH, ClaimVerdict.UNKNOWN_EDITION)

    @property
    def any_edition(self) -> bool:
        """Whether the name gives no year, so that any of several editions would do ("CSW")."""
        return len(self.editions) > 1

    @property
    def badge(self) -> str:
        """What every screen shows beside an unverified list: "UNVERIFIED: not the official CSW24".

        The web clients word it themselves (kiosk/shared/strings.js), from ``claimed`` and ``verdict``.
        """
        if self.verdict is ClaimVerdict.UNKNOWN_EDITION:
            return f"UNVERIFIED: {self.claimed} is not a known edition"
        if self.any_edition:
            return f"UNVERIFIED: not an official {self.claimed} edition"
        return f"UNVERIFIED: not the official {self.claimed}"

    def problem(self, what: str = "this list") -> str:
        """What was found, in one sentence naming ``what`` was checked (e.g. "its base lexicon BASE")."""
        facts = f"{self.word_count:,} words, fingerprint {short(self.fingerprint)}"
        head = f"the name {self.name} claims {'a ' if self.any_edition else ''}{self.claimed}"
        if self.verdict is ClaimVerdict.VERIFIED:
            return f"{head}, and {what} {self.identification.describe()}"
        if self.verdict is ClaimVerdict.COUNT_ONLY:
            return (
                f"{head}, and {what} has its word count ({self.word_count:,}); its words cannot be checked: "
                f"the registry has no fingerprint for {self.claimed}"
            )
        if self.verdict is ClaimVerdict.UNKNOWN_EDITION:
            known = f" (it knows {', '.join(self.known)})" if self.known else ""
            return f"{head}, an edition wordjudge's registry does not know{known}: {what} ({facts}) cannot be checked"
        if self.any_edition:
            names = ", ".join(edition.name for edition in self.editions)
            return f"{head} edition, but {what} ({facts}) is none of them ({names}); {self._is()}"
        edition = self.editions[0]
        difference = self.word_count - edition.words
        if difference:
            counted = f"{what} has {self.word_count:,} ({abs(difference):,} {'more' if difference > 0 else 'fewer'})"
            counted += f", fingerprint {short(self.fingerprint)}; {self._is()}"
        else:
            counted = f"{what} has as many but not the same ones (fingerprint {short(self.fingerprint)})"
        # The registry's titles may start with the name ("ENABLE (Enhanced ...)"): not "ENABLE (ENABLE (...))".
        named = edition.title if edition.title.startswith(edition.name) else f"{edition.name} ({edition.title})"
        return f"{head}, but {what} is not {edition.name}: {named} has {edition.words:,} words, {counted}"

    def _is(self) -> str:
        """What the list is instead, for a claim that fails."""
        edition = self.identification.edition
        if edition is None:
            return "it matches no known edition"
        if self.identification.match is Match.EXACT:
            return f"it matches {edition.name} ({edition.words:,} words)"
        return f"it has the word count of {edition.name} but other words"

    def remedy(self, rename: Callable[[str], str] = lambda edition: f"--name {edition}") -> str:
        """What the TD can do about an unverified claim: rename it, or force it.

        ``rename`` says how to give a name after an edition (``--name CSW21``, ``e.g. CSW21-errata``).
        """
        identified = self.identification
        steps = []
        if identified.match is Match.EXACT and identified.edition is not None:
            steps.append(f"name it after the edition it is ({rename(identified.edition.name)})")
        elif self.verdict is not ClaimVerdict.UNKNOWN_EDITION:
            steps.append(f"check that the file is the official {self.claimed}")
        if self.verdict is ClaimVerdict.UNKNOWN_EDITION:
            steps.append(
                f"if {self.claimed} is a new edition, add its word count and fingerprint to lexicons/editions.toml"
            )
        if identified.match is not Match.EXACT:
            steps.append(f"give it a name that claims no edition ({rename('MYLIST')})")
        steps.append(
            "add --force to serve it anyway: kiosks, handhelds, dockets, the console and /api/health "
            f'will show it as "{self.badge}"'
        )
        return "; or ".join(steps)

    def as_dict(self, what: str = "this list") -> dict[str, Any]:
        """The claim for screens and /api/health; ``what`` names the list checked, as in :meth:`problem`."""
        return {
            "name": self.name,
            "claimed": self.claimed,
            "verdict": self.verdict.value,
            "unverified": self.unverified,
            "any_edition": self.any_edition,
            "badge": self.badge if self.unverified else None,
            "description": self.problem(what),
        }


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
                # No sha256: an edition known by its word count only (its words cannot be checked).
                sha256=str(e["sha256"]).lower() if "sha256" in e else None,
                official=bool(e["official"]),
            )
            for e in entries
        ]
        kwg_files = [
            KwgFile(
                sha256=str(e["sha256"]).lower(),
                tiles=str(e["tiles"]),
                edition=str(e["edition"]),
                source=str(e["source"]),
            )
            for e in data.get("kwg", [])
        ]
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InvalidInput("error.registry.malformed", where=where, reason=str(exc)) from exc
    for name, sha in [(e.name, e.sha256) for e in editions] + [(k.edition, k.sha256) for k in kwg_files]:
        if sha is not None and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
            raise InvalidInput("error.registry.bad_sha256", where=where, edition=name)
    return Registry(editions, kwg_files)
