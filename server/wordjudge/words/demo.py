"""The demo lexicon: a real, public-domain English list, so the server starts without an official one.

The words are the public-domain ENABLE list, shipped with wordjudge as package data
(``lexicons/enable.txt.gz``; see ``lexicons/README.md`` for provenance). It is compiled
into the data dir on first use and marked as the demo in its manifest: everything that
shows it says DEMO, and the registry, not this module, says whether it really is ENABLE.
"""

from __future__ import annotations

import logging
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING

from wordjudge import __version__
from wordjudge.base.errors import LexiconIntegrityError
from wordjudge.words.editions import DEMO_NAME
from wordjudge.words.wordlist import SourceFormat, WordList, parse_word_list

if TYPE_CHECKING:  # the store is handed in: this module only names the demo's
    from wordjudge.words.lexicon import Lexicon, LexiconStore

DEMO_RESOURCE = "enable.txt.gz"  # one word a line, gzipped; in the package wordjudge.lexicons

log = logging.getLogger(__name__)


def demo_source() -> Traversable:
    """The demo list's file, shipped inside wordjudge (read it with ``read_bytes()``)."""
    return resources.files("wordjudge.lexicons").joinpath(DEMO_RESOURCE)


def read_demo_list() -> WordList:
    """Read the demo list as a word list."""
    return parse_word_list(
        demo_source().read_bytes(), source_name=f"{DEMO_RESOURCE} (wordjudge {__version__})", format=SourceFormat.PLAIN
    )


def open_demo(store: LexiconStore) -> Lexicon:
    """Open the compiled demo lexicon, compiling it first if it is not there or not sound.

    The demo is derived from a file shipped with wordjudge, so a damaged copy is rebuilt
    (with a warning) rather than refused.
    """
    if store.exists(DEMO_NAME):
        try:
            lexicon = store.open(DEMO_NAME)
            if lexicon.manifest.demo:
                return lexicon
            raise LexiconIntegrityError("error.lexicon.not_demo", path=str(store.path(DEMO_NAME)))
        except LexiconIntegrityError as exc:
            log.warning("rebuilding the demo lexicon: %s", exc)
    store.add(read_demo_list(), DEMO_NAME, replace=True, demo=True)
    return store.open(DEMO_NAME)
