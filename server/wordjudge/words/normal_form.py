"""wordjudge's one normal form of text, written once: NFC, upper case, NFC again; and a character named as the
error messages name it.

The word lists (:mod:`wordjudge.words.wordlist`) and the tile sets (:mod:`wordjudge.words.tiles`) read text in
this one form, side by side: neither is built on the other. The clients write the same form
(``kiosk/shared/words.js``), held to the same cases (``tests/test_client_modules.py``).
"""

from __future__ import annotations

import unicodedata


def normalise(text: str) -> str:
    """Return ``text`` in wordjudge's one normal form: NFC, upper case, NFC again.

    The second NFC is there because upper-casing can decompose a character.
    """
    if text.isascii():  # NFC leaves ASCII as it is, and so does upper-casing it: most lists, most challenges
        return text.upper()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).upper())


def describe_char(char: str) -> str:
    """Name a character for an error message, e.g. ``'-' (HYPHEN-MINUS)``."""
    return f"{char!r} ({unicodedata.name(char, f'U+{ord(char):04X}')})"
