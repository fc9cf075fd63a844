"""The language the command line says its verdict lines in: ``--language`` (or ``WORDJUDGE_LANGUAGE``), else
the event's; the times it prints, as the event writes dates; the console's name for a device's role."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from wordjudge.base.errors import DEFAULT_LANGUAGE, WordjudgeError, render
from wordjudge.base.messages import format_datetime
from wordjudge.tournament.event_loading import load_event

if TYPE_CHECKING:
    from wordjudge.model.auth import Role
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


def cli_time(stored: str, lang: str) -> str:
    """A stored time (ISO 8601 with its zone) as the event writes dates and the console shows them, in this
    machine's time zone (as ``audit tail``). Raises :class:`ValueError` for text that is no such time."""
    return format_datetime(datetime.fromisoformat(stored).astimezone(), lang)


def role_word(role: Role | str) -> str:
    """A device's role as the console names it (the catalogue's ``role.*`` in English, as the command line's
    other words): a runner's device is a handheld."""
    return render(f"role.{role}")
