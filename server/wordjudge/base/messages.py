"""How wordjudge says dates, times, durations and lists in the event's language, as its clients do.

What it says, a :class:`~wordjudge.base.errors.Message` (a catalogue key and its parameters), its languages and
its catalogues, are :mod:`wordjudge.base.errors`' (every error is a message). Nothing here imports the web
framework or the rest of wordjudge but its messages.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final, Literal

from wordjudge.base.errors import DEFAULT_LANGUAGE, PLACEHOLDER, Message, Template, base_language

DateOrder = tuple[str, str, str]
DAY_FIRST: Final = ("day", "month", "year")
# Dates are day-first (27/11/2026) unless the language's region writes them otherwise: month-first in the United
# States, ISO (2026-11-27) in Canada. kiosk/shared/i18n.js holds the same table: the clients write dates alike.
_DATE_ORDERS: Final[dict[str, DateOrder]] = {
    "en-US": ("month", "day", "year"),
    "en-CA": ("year", "month", "day"),
    "fr-CA": ("year", "month", "day"),
}
DateStyle = Literal["datetime", "short-datetime", "time", "short-time"]


def date_order(lang: str) -> DateOrder:
    """The order ``lang`` writes a date's day, month and year in: day-first but for the regions that do not."""
    return _DATE_ORDERS.get(lang, DAY_FIRST)


def format_datetime(moment: datetime, lang: str = DEFAULT_LANGUAGE, style: DateStyle = "datetime") -> str:
    """A date and time as the event writes it (in ``moment``'s own time zone), on a 24-hour clock: 27/11/2026,
    09:05:03 in English, 27/11/2026 09:05:03 in French, 11/27/2026, 09:05:03 in en-US, 2026-11-27 09:05:03 where
    dates are ISO (en-CA, fr-CA). ``style`` as kiosk/shared/i18n.js's formatDate: datetime, short-datetime (no seconds),
    time, short-time. The same text as the clients'."""
    time = f"{moment:%H:%M:%S}" if style in ("datetime", "time") else f"{moment:%H:%M}"
    if style in ("time", "short-time"):
        return time
    order = date_order(lang)
    parts = {"day": f"{moment.day:02d}", "month": f"{moment.month:02d}", "year": f"{moment.year:04d}"}
    iso = order[0] == "year"
    date = ("-" if iso else "/").join(parts[part] for part in order)
    return f"{date}{_date_time_gap(lang, iso)}{time}"


# An ISO time with its zone in a rendered text (a clock record's "it read 2026-11-27T11:00:02.000+00:00").
_ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})")


def times_shown(text: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """``text`` with each ISO time in it (with its zone) as :func:`format_datetime` writes it in ``lang``, in this
    machine's time zone: what the console's timesShown (kiosk/console/common.js) does to the same text."""

    def shown(found: re.Match[str]) -> str:
        try:
            return format_datetime(datetime.fromisoformat(found.group(0)).astimezone(), lang)
        except ValueError:  # a date that is none (month 13): left as written
            return found.group(0)

    return _ISO_TIME.sub(shown, text)


def _date_time_gap(lang: str, iso: bool) -> str:
    """What stands between a date and its time: a comma and a space in English, a space in French and ISO."""
    return " " if iso or base_language(lang) == "fr" else ", "


def duration(seconds: float) -> Message:
    """A length of time in words: 4.2 s, 3 min 05 s, 1 h 00 min 02 s, 2 d 03 h (``time.*``)."""
    whole = round(abs(seconds))
    if abs(seconds) < 60:  # a step of milliseconds (two processes' clocks) still reads as one
        return Message("time.seconds", s=round(abs(seconds), 3 if abs(seconds) < 1 else 1))
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return Message("time.days", d=days, h=f"{hours:02d}")
    if hours:
        return Message("time.hours", h=hours, min=f"{minutes:02d}", s=f"{secs:02d}")
    return Message("time.minutes", min=minutes, s=f"{secs:02d}")


def placeholders(value: Template) -> set[str]:
    """The parameter names a catalogue value uses (every plural form's)."""
    texts = [value] if isinstance(value, str) else list(value.values())
    return {name for text in texts for name in PLACEHOLDER.findall(text)}


def joined(items: list[str] | list[Message] | list[str | Message], key: str) -> str | Message:
    """``items`` joined by the catalogue's ``key`` (a two-place join such as ``error.list.or``: "{first} or
    {rest}"), as nested messages, so that each language joins them its own way. One item is itself."""
    if len(items) == 1:
        return items[0]
    return Message(key, first=items[0], rest=joined(items[1:], key))
