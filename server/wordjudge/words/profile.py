"""Lexicon profiles: a base lexicon plus the amendments a real event needs.

A profile is what a division adjudicates against:

- a **base** compiled lexicon (e.g. CSW24);
- **errata additions**: words acceptable although missing from the base
  (ABSP: "ANTEFIXAE was omitted in error ... and is acceptable");
- **errata removals**: words in the base that are not acceptable;
- an optional **secondary source**, consulted only for words of at least N letters
  (the NSA rule: a 9+ letter word not in the main list is checked in a second source).

A lookup says, for the TD's eyes only, which source accepted each word.

Every compiled lexicon is also a profile with no amendments; its fingerprint is the
lexicon's own. An amended profile's fingerprint is the SHA-256 of the text::

    wordjudge-profile/1
    base <fingerprint of the base>
    additions <fingerprint of the additions>
    removals <fingerprint of the removals>
    secondary <fingerprint of the secondary source or -> <minimum length or ->

so it covers the base and every amendment: two servers or kiosks that show the
same profile fingerprint adjudicate every word the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from wordjudge.base.errors import InvalidInput, LexiconExists, LexiconNotFound, Message, ProfileError
from wordjudge.base.files import write_atomic
from wordjudge.base.schemas import strict_json
from wordjudge.words.demo import open_demo
from wordjudge.words.editions import DEMO_NAME, check_name, check_new_name, load_registry
from wordjudge.words.editions import fingerprint as words_fingerprint
from wordjudge.words.lexicon import Lexicon, LexiconStore
from wordjudge.words.normal_form import describe_char, normalise
from wordjudge.words.tiles import TileError, TileSet
from wordjudge.words.wordlist import WordList

PROFILE_FORMAT = 1


@dataclass(frozen=True)
class Errata:
    """A list of words added to or removed from a base lexicon, with where it came from."""

    words: tuple[str, ...] = ()  # normalised, sorted
    source_name: str | None = None
    source_sha256: str | None = None

    @classmethod
    def from_word_list(cls, word_list: WordList) -> Errata:
        return cls(tuple(word_list.sorted_words()), word_list.source_name, word_list.source_sha256)

    @property
    def fingerprint(self) -> str:
        return words_fingerprint(self.words)


@dataclass(frozen=True)
class ProfileSpec:
    """How a profile is defined, as saved in ``<data dir>/profiles/<NAME>.json``."""

    name: str
    base: str
    additions: Errata = field(default_factory=Errata)
    removals: Errata = field(default_factory=Errata)
    secondary: str | None = None
    secondary_min_length: int | None = None
    created_at: str = ""
    format: int = PROFILE_FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def read(cls, path: Path) -> ProfileSpec:
        """Read a saved profile; raise :class:`ProfileError` naming the file if it is malformed."""
        try:
            data = json.loads(path.read_text("utf-8"))
            if not isinstance(data, dict) or data.get("format") != PROFILE_FORMAT:
                raise ValueError(f"not a wordjudge profile of format {PROFILE_FORMAT}")
            # Every key is written, so every key must be there: a lost 'removals' must not read as none.
            if missing := [f.name for f in fields(cls) if f.name not in data]:
                raise ValueError(f"{', '.join(missing)} missing")
            return strict_json(cls, data)
        except (OSError, ValueError) as exc:
            raise ProfileError("error.profile.unreadable", path=str(path), reason=str(exc)) from exc


class WordResult(NamedTuple):
    """The result of looking up one word. For the TD: never shown to players.

    A named tuple, not a dataclass: a verdict makes one per word, and a frozen dataclass took longer to
    build than the lookup itself (issue 19: at least 1,000,000 lookups a second on one core).
    """

    word: str
    acceptable: bool
    source: str | None  # what accepted it: the base, the errata additions, or the secondary source
    reason: str  # why, in words

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "acceptable": self.acceptable, "source": self.source, "reason": self.reason}


_result = tuple.__new__  # builds a WordResult from a ready tuple, without NamedTuple's generated __new__
_Outcome = tuple[bool, str | None, str]  # a WordResult but its word


class Profile:
    """A base lexicon with its amendments, ready to look words up."""

    def __init__(
        self,
        name: str,
        base: Lexicon,
        *,
        additions: Errata | None = None,
        removals: Errata | None = None,
        secondary: Lexicon | None = None,
        secondary_min_length: int | None = None,
    ) -> None:
        if (secondary is None) != (secondary_min_length is None):
            raise ProfileError("error.profile.secondary_pair")
        if secondary_min_length is not None and secondary_min_length < 2:
            raise ProfileError("error.profile.secondary_min", length=str(secondary_min_length))
        self.name = name
        self.base = base
        self.additions = additions or Errata()
        self.removals = removals or Errata()
        self.secondary = secondary
        self.secondary_min_length = secondary_min_length
        both = set(self.additions.words) & set(self.removals.words)
        if both:
            raise ProfileError("error.profile.added_and_removed", name=name, words=", ".join(sorted(both)))
        self._added = frozenset(self.additions.words)
        self._removed = frozenset(self.removals.words)
        self.tiles: TileSet | None = base.tiles
        if secondary is not None and _tiles_id(secondary.tiles) != _tiles_id(base.tiles):
            raise ProfileError(
                "error.profile.tiles_differ",
                name=name,
                base=base.name,
                secondary=secondary.name,
                base_tiles=_tiles_name(base.tiles),
                secondary_tiles=_tiles_name(secondary.tiles),
            )
        letters = set(base.manifest.alphabet).union(*self.additions.words) - set("[]")
        if secondary is not None:
            letters.update(secondary.manifest.alphabet)
        self.alphabet = "".join(sorted(letters))
        self._letters = frozenset(letters)
        self.fingerprint = self._fingerprint()
        # What lookup() answers, worked out once: (acceptable, source, reason) for each way a word can go.
        base_name = base.name
        self._in_base = base.contains
        self._in_secondary = secondary.contains if secondary is not None else None
        self._removed_result: _Outcome = (False, None, f"removed from {base_name} by errata")
        self._base_result: _Outcome = (True, base_name, f"in {base_name}")
        self._added_result: _Outcome = (True, "errata additions", f"added to {base_name} by errata")
        self._missing_result: _Outcome = (False, None, f"not in {base_name}")
        source = f"{secondary.name} ({secondary_min_length}+ letters)" if secondary is not None else ""
        self._secondary_result: _Outcome = (True, source, f"in the secondary source {source}")
        self._neither_result: _Outcome = (False, None, f"in neither {base_name} nor {source}")
        self._secondary_from = secondary_min_length or 0
        self._base_only = not self.amended
        self.split: tuple[str, ...] = self._split_tiles()

    @property
    def amended(self) -> bool:
        return bool(self.additions.words or self.removals.words or self.secondary)

    @property
    def demo(self) -> bool:
        return self.base.manifest.demo

    def _fingerprint(self) -> str:
        if not self.amended:
            return self.base.fingerprint
        secondary = f"{self.secondary.fingerprint} {self.secondary_min_length}" if self.secondary else "- -"
        text = (
            "wordjudge-profile/1\n"
            f"base {self.base.fingerprint}\n"
            f"additions {self.additions.fingerprint}\n"
            f"removals {self.removals.fingerprint}\n"
            f"secondary {secondary}\n"
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def lookup(self, word: str) -> WordResult:
        """Look up one word, already normalised: removals win, then base, additions, secondary source."""
        # Every source is asked about every word, whatever the answer: the work, and so the time a verdict
        # takes, must not depend on how many words failed or where (the one-verdict rule, WESPA 3.10.2).
        if self._base_only:  # no amendment: the base is the one source, and its answer is the whole work
            return _result(WordResult, (word,) + (self._base_result if self._in_base(word) else self._missing_result))
        removed = word in self._removed
        in_base = self._in_base(word)
        added = word in self._added
        in_secondary = self._in_secondary is not None and self._in_secondary(word)
        if removed:
            found = self._removed_result
        elif in_base:
            found = self._base_result
        elif added:
            found = self._added_result
        elif self._in_secondary is not None and len(word) >= self._secondary_from:
            found = self._secondary_result if in_secondary else self._neither_result
        else:
            found = self._missing_result
        return _result(WordResult, (word,) + found)  # noqa: RUF005 (concatenation: faster than unpacking here)

    def reason_message(self, word: str) -> Message:
        """Why :meth:`lookup` decides as it does for ``word``, as a message (``cli.reason.*``) whose English is
        the result's ``reason``. Not on the adjudication's path: the command line's word-by-word check says it."""
        base = self.base.name
        if word in self._removed:
            return Message("cli.reason.removed", base=base)
        if word in self.base:
            return Message("cli.reason.in_base", base=base)
        if word in self._added:
            return Message("cli.reason.added", base=base)
        if self.secondary is not None and len(word) >= (self.secondary_min_length or 0):
            source = Message("cli.reason.source", name=self.secondary.name, min=self.secondary_min_length or 0)
            if word in self.secondary:
                return Message("cli.reason.in_secondary", source=source)
            return Message("cli.reason.in_neither", base=base, source=source)
        return Message("cli.reason.not_in_base", base=base)

    def readings(self, typed: str, position: int = 1, *, held: bool = False) -> list[str]:
        """Every way to read one typed word as this profile's words are stored, fewest tiles first: the word
        normalised, for a lexicon of plain letters; each reading into tiles, for a lexicon of a tile set (``held``:
        only those its words can hold, the letters of a tile never split in them read as that tile: see
        :meth:`TileSet.readings`).

        Raises :class:`InvalidInput` naming the entry (``position``, from 1) and the character or tile at fault;
        the message says nothing of any word's validity.
        """
        typed = typed.strip()
        word = normalise(typed)
        if not word:
            raise InvalidInput("error.words.empty", position=position)
        if self.tiles is None:
            outside = [char for char in word if char not in self._letters]
            if outside:
                raise InvalidInput(
                    "error.words.not_a_letter",
                    position=position,
                    word=repr(typed),
                    char=describe_char(outside[0]),
                    lexicon=self.name,
                    letters=self.alphabet,
                )
            return [word]
        try:
            found = self.tiles.readings(word, self.split if held else None)
            return [self.tiles.stored(reading) for reading in found]
        except TileError as exc:
            raise InvalidInput(
                "error.words.not_tiles",
                position=position,
                word=repr(typed),
                problem=exc.msg,
                lexicon=self.name,
                tiles=self.tiles.shown(),
            ) from exc

    def _split_tiles(self) -> tuple[str, ...]:
        """The longer tiles whose letters the profile's words also hold as separate tiles (see
        :meth:`TileSet.split_in`): a word with one of them, or its letters, is judged as the players state its
        tiles (:attr:`split`)."""
        if self.tiles is None:
            return ()
        found = set(self.base.manifest.split_tiles) | set(self.tiles.split_in(self.additions.words))
        if self.secondary is not None:
            found.update(self.secondary.manifest.split_tiles)
        return tuple(tile for tile in self.tiles.tiles if tile in found)

    def length(self, word: str) -> int:
        """How many squares a word (as stored) takes on the board: its tiles."""
        return len(word) if self.tiles is None else self.tiles.length(word)

    def tiles_of(self, word: str) -> tuple[str, ...]:
        """The tiles of a word as stored: one per letter, for a lexicon of plain letters."""
        return tuple(word) if self.tiles is None else self.tiles.split(word)

    def check(self, words: Sequence[str]) -> list[WordResult]:
        """Look up every reading of typed words (see :meth:`readings` for the errors)."""
        return [
            self.lookup(reading)
            for position, typed in enumerate(words, start=1)
            for reading in self.readings(typed, position)
        ]

    def describe(self) -> dict[str, Any]:
        """Facts about the profile for screens and the TD (no word results)."""
        return {
            "name": self.name,
            "tiles": None if self.tiles is None else {**self.tiles.as_dict(), "split": list(self.split)},
            "base": self.base.name,
            "fingerprint": self.fingerprint,
            "word_count": self.base.manifest.word_count,
            "alphabet": self.alphabet,
            "demo": self.demo,
            "amended": self.amended,
            "additions": len(self.additions.words),
            "removals": len(self.removals.words),
            "secondary": self.secondary.name if self.secondary else None,
            "secondary_min_length": self.secondary_min_length,
        }


class Catalog:
    """The lexicons and profiles of a data dir, reached by name.

    Lexicons and profiles share one namespace: every compiled lexicon is also a
    profile with no amendments, so ``open("CSW24")`` works whether CSW24 is a
    compiled lexicon or a saved profile.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.lexicons = LexiconStore(data_dir / "lexicons")
        self.profiles_dir = data_dir / "profiles"

    def profile_names(self) -> list[str]:
        if not self.profiles_dir.is_dir():
            return []
        return sorted(p.stem for p in self.profiles_dir.glob("*.json") if not p.name.startswith("."))

    def names(self) -> list[str]:
        return sorted(set(self.lexicons.names()) | set(self.profile_names()))

    def resolve(self, name: str) -> str:
        """The compiled lexicon, saved profile or demo list ``name`` means, whatever its case (``csw24``: ``CSW24``),
        or ``name`` itself if none: lexicon and profile names match in any case everywhere."""
        check_name(name)
        if name.casefold() == DEMO_NAME:
            return DEMO_NAME
        if name in self.names():
            return name
        same = [known for known in self.names() if known.casefold() == name.casefold()]
        return same[0] if len(same) == 1 else name

    def spec(self, name: str) -> ProfileSpec | None:
        """The saved profile of that name (whatever its case), or None if ``name`` is not a saved profile."""
        path = self.profiles_dir / f"{self.resolve(name)}.json"
        return ProfileSpec.read(path) if path.is_file() else None

    def open(self, name: str) -> Profile:
        """Open a saved profile, or a compiled lexicon as a profile without amendments.

        The demo list's name opens the demo, compiling it first if needed. Raises
        :class:`LexiconNotFound`, :class:`LexiconIntegrityError` or :class:`ProfileError`.
        """
        name = self.resolve(name)
        if name == DEMO_NAME:
            return Profile(name, open_demo(self.lexicons))
        spec = self.spec(name)
        if spec is None:
            if not self.lexicons.exists(name):
                known: str | Message = ", ".join(self.names()) or Message("error.none_yet")
                raise LexiconNotFound("error.profile.not_found", name=name, folder=str(self.data_dir), known=known)
            return Profile(name, self.lexicons.open(name))
        return self._build(spec, self.lexicons.open(spec.base))

    def add_profile(
        self,
        name: str,
        base: str,
        *,
        additions: WordList | None = None,
        removals: WordList | None = None,
        secondary: str | None = None,
        secondary_min_length: int | None = None,
        replace: bool = False,
        force: bool = False,
    ) -> tuple[Profile, list[str]]:
        """Define and save a profile; return it with notes for the TD (e.g. errata that change nothing).

        Raises :class:`LexiconExists` if the name is taken, :class:`LexiconNotFound` if
        the base or secondary lexicon is unknown, :class:`ProfileError` if the parts clash,
        or if the name claims an edition (CSW24-errata: CSW24) that the base is not, unless
        ``force`` (errata are what a profile adds: the base is what its name answers for).
        """
        check_new_name(name)
        if self.lexicons.exists(name):
            raise LexiconExists("error.profile.lexicon_name", name=self.lexicons.resolve(name))
        name = self.resolve(name)  # a profile replaced whatever the case it is named in
        path = self.profiles_dir / f"{name}.json"
        if path.exists() and not replace:
            raise LexiconExists("error.profile.exists", name=name)
        base = self.lexicons.resolve(base)
        secondary = self.lexicons.resolve(secondary) if secondary else None
        spec = ProfileSpec(
            name=name,
            base=base,
            additions=Errata.from_word_list(additions) if additions else Errata(),
            removals=Errata.from_word_list(removals) if removals else Errata(),
            secondary=secondary,
            secondary_min_length=secondary_min_length,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        opened = self.lexicons.open(base)
        for errata in filter(None, (additions, removals)):
            if _tiles_id(errata.tiles) != _tiles_id(opened.tiles):  # errata words stored as the base's words are
                raise ProfileError(
                    "error.profile.errata_tiles",
                    source=errata.source_name,
                    tiles=_tiles_name(errata.tiles),
                    base=opened.name,
                    base_tiles=_tiles_name(opened.tiles),
                )
        profile = self._build(spec, opened)
        if not force:
            _check_claim(profile)
        notes = _errata_notes(profile)
        self.profiles_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, spec.to_json())
        return profile, notes

    def _build(self, spec: ProfileSpec, base: Lexicon) -> Profile:
        secondary = self.lexicons.open(spec.secondary) if spec.secondary else None
        return Profile(
            spec.name,
            base,
            additions=spec.additions,
            removals=spec.removals,
            secondary=secondary,
            secondary_min_length=spec.secondary_min_length,
        )


def _tiles_id(tiles: TileSet | None) -> str | None:
    return None if tiles is None else tiles.fingerprint


def _tiles_name(tiles: TileSet | None) -> str | Message:
    return (
        Message("error.profile.plain_letters") if tiles is None else Message("error.profile.tile_set", name=tiles.name)
    )


def _check_claim(profile: Profile) -> None:
    """Refuse a profile whose name claims an edition its base lexicon is not (see :meth:`Registry.claim`)."""
    base = profile.base
    claim = load_registry().claim(profile.name, base.manifest.word_count, base.fingerprint)
    if claim is not None and claim.unverified:
        what = f"its base lexicon {base.name}"
        remedy = claim.remedy(lambda edition: f"e.g. {edition}-errata")
        raise ProfileError(
            "error.profile.claim_refused",
            name=profile.name,
            problem=claim.problem(what),
            remedy=remedy,
            details=claim.as_dict(what),
        )


def _errata_notes(profile: Profile) -> list[str]:
    notes = []
    redundant = [w for w in profile.additions.words if w in profile.base]
    if redundant:
        notes.append(f"{len(redundant)} addition(s) already in {profile.base.name}: {_few(redundant)}")
    absent = [w for w in profile.removals.words if w not in profile.base]
    if absent:
        notes.append(f"{len(absent)} removal(s) not in {profile.base.name}: {_few(absent)}")
    return notes


def _few(words: Iterable[str], limit: int = 10) -> str:
    listed = list(words)
    return ", ".join(listed[:limit]) + (f" and {len(listed) - limit} more" if len(listed) > limit else "")
