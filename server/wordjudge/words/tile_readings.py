"""Which tiles a typed word is: the tiles a challenge is judged as, which the players state.

A word typed at the kiosk is letters (``BANGOR``); the board holds tiles. Where the letters can be only one
sequence of tiles that the lexicon's words could hold (English, always; Spanish ``CHICO``, whose C and H are never
separate tiles in the list; Welsh ``LLYFR``, whose LL is never two L tiles in it), that is the word. Where they
can be more than one (Welsh ``NG`` is the NG tile, or N then G: a split tile of the lexicon, whose words hold it
both ways), the players state the tiles the board holds, and the word is judged as stated: the server never
settles a reading itself, so that no word is judged under tiles the players did not see.

Whether a word must be stated depends on its letters and the lexicon's tile set alone, never on whether any
reading is a word: the question asked before anything is recorded tells nothing of any word's validity.
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
    options: tuple[str, ...]  # every tiling the lexicon's words could hold that fits the board, stored form
    chosen: str | None  # the tiles judged; None: the players must state them (one of the options)

    @property
    def ambiguous(self) -> bool:
        """Whether the letters can be more than one tiling that fits the board: the players must state it."""
        return len(self.options) > 1

    def asked(self, profile: Profile) -> dict[str, Any]:
        """What the players are asked to state: the word as typed, each tiling's tiles, and how each is typed
        (:meth:`TileSet.stated`: ``BA[NG]OR``, ``BA[N][G]OR``)."""
        tilings = [profile.tiles_of(option) for option in self.options]
        tiles = profile.tiles
        return {
            "position": self.position,
            "typed": self.typed,
            "readings": [list(tiling) for tiling in tilings],
            "stated": [tiles.stated(tiling, profile.split) if tiles else "".join(tiling) for tiling in tilings],
        }


def read_typed(profile: Profile, typed: Sequence[str]) -> list[Reading]:
    """Read each typed word of a challenge as tiles of ``profile`` (see the module's docstring). No word is looked
    up: a word that must be stated is a :class:`Reading` with no ``chosen`` tiles, whatever its readings are.

    Raises :class:`InvalidInput` naming the word at fault: one that is not made of the profile's tiles or letters,
    or that no reading fits on the board (2 to 15 tiles).
    """
    readings = []
    if profile.tiles is None:  # one letter a tile: one reading (the verdict path's common case, kept short)
        for position, entry in enumerate(typed, start=1):
            word = profile.readings(entry, position)[0]
            if not MIN_LETTERS <= len(word) <= MAX_LETTERS:
                raise _length_error(profile, position, entry, len(word))
            readings.append(Reading(position, entry, (word,), word))
        return readings
    for position, entry in enumerate(typed, start=1):
        options = profile.readings(entry, position, held=True)
        fitting = tuple(option for option in options if MIN_LETTERS <= profile.length(option) <= MAX_LETTERS)
        if not fitting:
            raise _length_error(profile, position, entry, profile.length(options[0]))
        readings.append(Reading(position, entry, fitting, fitting[0] if len(fitting) == 1 else None))
    return readings


def _length_error(profile: Profile, position: int, entry: str, n: int) -> InvalidInput:
    key = "error.words.tile_length" if profile.tiles is not None and profile.tiles.multi else "error.words.length"
    return InvalidInput(key, position=position, word=repr(entry), n=n, min=MIN_LETTERS, max=MAX_LETTERS)
