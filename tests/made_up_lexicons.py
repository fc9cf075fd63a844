"""Made-up lexicons big enough for the tile-fit checks of a KWG (:mod:`wordjudge.words.tile_fit`): Catalan-like and
Spanish-like words, each a stem and an ending of the language put together (CANTAREM, PERRITOS, COL·LEGIADES...),
a few thousand of each, so that their tiles are used about as often as a real lexicon of the language uses them.
Most of the words are not words of either language, and no official lexicon is used or needed."""

from __future__ import annotations

from itertools import product

from wordjudge.words.tiles import builtin

_CATALAN_STEMS = (
    "cas port cant parl menj dorm llum fill pen tren mar ter cel gat pom bosc cor nit escol pla quatr esqu "
    "col·leg paral·lel nyam senyor any caç forç plaç dolç pelut xarx peix zon jard hom fem vent vid guard bon "
    "bell blau roig verd negr dret sort mort cap pas tal cos ros rel pint mirall coneix creix ll"
)
_CATALAN_ENDINGS = (
    "a es ar em eu en at ada ats ades aria arien ava aven ant ament ació acions or ors ista istes et ets eta "
    "etes ós osa oses ia ies itat itats ible ibles ir int ida ides iré iria"
)
_SPANISH_STEMS = (
    "cas perr chic llam carr muchach call niñ pequeñ com habl cant corr viv escrib tom mir pas llev quer hac "
    "trabaj jug zorr mes libr gat lech noch coch mach ros pint marc plat dorm sent pens guard vent bail "
    "cerr tierr hierr arroy play reyn lluv calz mostr lleg sub baj fuert fiest fin text próxim exam"
)
_SPANISH_ENDINGS = (
    "o a os as ar ado ada ados adas ando amos aba aban ito ita itos itas ción ciones ero era eros eras mente "
    "ía ían ieron ió er ido ida imos ir ez eza al ales"
)


def _words(stems: str, endings: str, language: str) -> list[str]:
    """Every stem with every ending, in the set's stored form (CH, LL, NY... as tiles)."""
    tiles = builtin(language)
    return sorted({tiles.read_word(stem + ending) for stem, ending in product(stems.split(), endings.split())})


CATALAN_WORDS = _words(_CATALAN_STEMS, _CATALAN_ENDINGS, "catalan")
SPANISH_WORDS = _words(_SPANISH_STEMS, _SPANISH_ENDINGS, "spanish")
