"""The event of a data folder: its event file read (or the demo event when there is none), each division's
lexicon checked against the folder's compiled lexicons and saved profiles. The event itself, its parsing and
its writing are :mod:`wordjudge.tournament.event`'s."""

from __future__ import annotations

import tomllib
from pathlib import Path

from wordjudge.base.errors import InvalidInput
from wordjudge.tournament.event import EVENT_FILE, Event, demo_event, parse_event
from wordjudge.words.editions import DEMO_NAME
from wordjudge.words.profile import Catalog


def known_lexicons(data_dir: Path) -> list[str]:
    """The names a division may use: the data dir's compiled lexicons and profiles, and the demo list."""
    return sorted({*Catalog(data_dir).names(), DEMO_NAME})


def load_event(data_dir: Path, *, check_lexicons: bool = True, name: str = EVENT_FILE) -> Event:
    """Read ``<data_dir>/event.toml`` (or the file ``name``), or return the demo event if there is none.

    With ``check_lexicons``, each division's lexicon must be one compiled in the data dir (matched whatever
    its case; the event holds the compiled name). Raises :class:`InvalidInput` naming the file and the
    entry at fault.
    """
    path = data_dir / name
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return demo_event()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("error.file.unreadable", path=str(path), reason=str(exc)) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput("error.file.not_toml", path=str(path), reason=str(exc)) from exc
    return parse_event(data, str(path), lexicons=known_lexicons(data_dir) if check_lexicons else None)
