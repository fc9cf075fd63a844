"""Small word lists made for the tests (never an official list): Spanish with CH, LL, RR and Ñ, Catalan with L·L, NY
and QU, Welsh with the NG/N G ambiguity. Each is as a TD's text file would have it: letters as read, a tile the
letters could be read otherwise written in brackets (Welsh BAN[G]OR is B A N G O R)."""

from __future__ import annotations

from pathlib import Path

from wordjudge.words.lexicon import LexiconStore, Manifest
from wordjudge.words.tiles import builtin
from wordjudge.words.wordlist import read_word_list

from .helpers import write_list

# DESENGANCHARÍAIS: 16 letters, 15 tiles (CH is one): a board's longest word, which "2 to 15 letters" refused.
SPANISH = [
    "chico",
    "perro",
    "llama",
    "ñandú",
    "calle",
    "carro",
    "muchacho",
    "casa",
    "desengancharíais",
    "ACHICHARRADORES",
]
CATALAN = ["col·legi", "paral·lel", "nyap", "any", "quatre", "qui", "llum", "caça", "casa", "qüestió"]
# DANGOS is D A NG O S; BAN[G]OR is B A N G O R; HENGA is a word both ways (made up for the tests: the kiosk asks).
WELSH = ["dangos", "ban[g]or", "he[ng]a", "hen[g]a", "llyfr", "rhedeg", "ffordd", "cath", "tân"]

LISTS = {"spanish": SPANISH, "catalan": CATALAN, "welsh": WELSH}
NAMES = {"spanish": "FISE-T", "catalan": "DISC-T", "welsh": "CYM-T"}


def compile_list(data_dir: Path, language: str) -> Manifest:
    """Compile the test list of ``language`` (spanish, catalan, welsh) under its test name, with its tiles."""
    path = write_list(data_dir.parent / f"{language}.txt", LISTS[language])
    word_list = read_word_list(path, tiles=builtin(language))
    return LexiconStore(data_dir / "lexicons").add(word_list, NAMES[language])
