"""Which tiles a typed word is: the reading a challenge is judged under.

A word typed at the kiosk is letters (``BANGOR``); the board holds tiles. Where the division's tile set reads
the letters only one way (English, always; Spanish ``CHICO``, whose C and H are never two tiles in the list),
that reading is the word. Where it reads them several ways that fit the board (2 to 15 tiles: Welsh ``NG`` is
the NG tile, or N then G), the lexicon decides when exactly one of them is a word, and when none is (the word
is not acceptable whichever was played; the fewest tiles are recorded). Where more than one is a word, the
players pick the reading the board shows (:attr:`Reading.chosen` is None): no word is judged under a reading
they did not see.

Every reading that fits the board is looked up, whatever the answers, so that the work done does not depend on
which words are acceptable (the one-verdict rule: see :meth:`wordjudge.words.profile.Profile.lookup`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from wordjudge.base.errors import InvalidInput
from wordjudge.model.input_rules import MAX_LETTERS, MIN_LETTERS

if TYPE_CHECKING:
    from wordjudge.words.profile import Profile


class Reading(NamedTuple):
    """One typed word and the tiles it is read as. (A named tuple: a verdict makes one a word, and a frozen
    dataclass took longer to build than the rest of the word's check.)"""

    position: int  # 1 for the challenge's first word
    typed: str
    options: tuple[str, ...]  # every reading that fits the board, stored form, fewest tiles first
    words: tuple[str, ...]  # those of them that are words of the profile (for the TD: never shown to players)
    chosen: str | None  # the reading judged; None: the players must pick one of the options

    @property
    def ambiguous(self) -> bool:
        """Whether the letters can be read as tiles in more than one way that fits the board."""
        return len(self.options) > 1

    def shown(self, profile: Profile) -> dict[str, Any]:
        """What the players are shown to pick from: the word as typed and each reading's tiles."""
        return {
            "position": self.position,
            "typed": self.typed,
            "readings": [list(profile.tiles_of(option)) for option in self.options],
        }


def read_typed(profile: Profile, typed: Sequence[str]) -> list[Reading]:
    """Read each typed word of a challenge as tiles of ``profile`` (see the module's docstring).

    Raises :class:`InvalidInput` naming the word at fault: one that is not made of the profile's tiles or letters,
    or that no reading fits on the board (2 to 15 tiles); never saying whether any word is acceptable.
    """
    readings = []
    if profile.tiles is None:  # one letter a tile: one reading (the verdict path's common case, kept short)
        for position, entry in enumerate(typed, start=1):
            word = profile.readings(entry, position)[0]
            if not MIN_LETTERS <= len(word) <= MAX_LETTERS:
                raise _length_error(profile, position, entry, len(word))
            readings.append(Reading(position, entry, (word,), (), word))
        return readings
    for position, entry in enumerate(typed, start=1):
        options = profile.readings(entry, position)
        fitting = tuple(option for option in options if MIN_LETTERS <= profile.length(option) <= MAX_LETTERS)
        if not fitting:
            raise _length_error(profile, position, entry, profile.length(options[0]))
        if len(fitting) == 1:
            readings.append(Reading(position, entry, fitting, (), fitting[0]))
            continue
        words = tuple(option for option in fitting if profile.lookup(option).acceptable)  # every one looked up
        chosen = words[0] if len(words) == 1 else fitting[0] if not words else None
        readings.append(Reading(position, entry, fitting, words, chosen))
    return readings


def _length_error(profile: Profile, position: int, entry: str, n: int) -> InvalidInput:
    key = "error.words.tile_length" if profile.tiles is not None and profile.tiles.multi else "error.words.length"
    return InvalidInput(key, position=position, word=repr(entry), n=n, min=MIN_LETTERS, max=MAX_LETTERS)
