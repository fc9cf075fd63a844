"""The language the command line says its verdict lines in: ``--language`` (or ``WORDJUDGE_LANGUAGE``), else
the event's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wordjudge.base.errors import WordjudgeError
from wordjudge.base.messages import DEFAULT_LANGUAGE
from wordjudge.tournament.event_loading import load_event

if TYPE_CHECKING:
    from wordjudge.service.settings import Settings


def cli_language(settings: Settings) -> str:
    """``settings.language`` if given, else the language of the event in the data folder (English for the demo
    event, or when the event file does not load: the command still does its job)."""
    if settings.language is not None:
        return settings.language
    try:
        return load_event(settings.data_dir, check_lexicons=False).language
    except WordjudgeError:
        return DEFAULT_LANGUAGE
