"""What wordjudge says, in the event's language: message codes with parameters, rendered from one catalogue
per language.

The catalogues are the web clients' own: ``locales/<lang>.json`` in the ``wordjudge.kiosk`` package (the
kiosk, the handheld and the console load the same files). Each is a flat JSON object of dotted keys
(``error.*``, ``rule.*``, ``consequence.*``, ``verdict.*``, ``chain.*``, ``cli.*``, ``role.*``, ``change.*``,
``time.*`` here; ``ui.*`` for the clients). A value is a text with ``{name}`` placeholders, or a plural object
``{"one": ..., "other": ...}`` chosen by the number in the parameter ``n`` (CLDR: in English one iff
n == 1, in French one iff 0 <= n < 2).

A :class:`Message` is a key and its parameters: the server sends it as ``{"key": ..., "params": {...}}``
so that each screen renders it in its language, and keeps its English text for API users, logs and
the audit log. Parameters are text (shown as they are: names, paths, ids), numbers (formatted for the
language: 1,234 in English, 1 234 with a narrow no-break space in French) or other messages (rendered
in the same language).

The pseudo-language ``qps-ploc`` is made from English when loaded (never a file): each text becomes
``⟦`` + its letters accented + ``⟧``, placeholders kept, so that text that did not come from the
catalogue stands out on any screen. Nothing here imports the web framework or the rest of wordjudge.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any, Final, Literal, get_args

# The languages wordjudge has a catalogue for; an event may name one with its region (en-US, fr-CA), which says
# the same words as its base language and writes dates the region's way (see date_order).
CATALOGUE_LANGUAGES = ("en", "fr", "qps-ploc")
# Every language an event may name, listed once (as a type); the clients read them from GET /api/event
# (input_rules.served: ``languages``).
Language = Literal[
    "en",
    "en-AU",
    "en-CA",
    "en-GB",
    "en-IE",
    "en-IN",
    "en-NZ",
    "en-US",
    "en-ZA",
    "fr",
    "fr-BE",
    "fr-CA",
    "fr-CH",
    "fr-FR",
    "qps-ploc",
]
LANGUAGES: Final[tuple[str, ...]] = get_args(Language)
DEFAULT_LANGUAGE: Final = "en"
PSEUDO_LANGUAGE: Final = "qps-ploc"
DateOrder = tuple[str, str, str]
DAY_FIRST: Final = ("day", "month", "year")
# Dates are day-first (27/11/2026) unless the language's region writes them otherwise: month-first in the United
# States, ISO (2026-11-27) in Canada. kiosk/i18n.js holds the same table: the clients write dates alike.
_DATE_ORDERS: Final[dict[str, DateOrder]] = {
    "en-US": ("month", "day", "year"),
    "en-CA": ("year", "month", "day"),
    "fr-CA": ("year", "month", "day"),
}
CATALOGUE_PACKAGE = "wordjudge.kiosk"
CATALOGUE_FOLDER = "locales"

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NARROW_NBSP = "\u202f"  # French groups digits with it, as Intl.NumberFormat("fr") does
# The pseudo-language's letters: each ASCII letter accented, so that every word still reads.
_PSEUDO = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "àƀçďèƒĝĥìĵķľɱñòþʠŕšţùṽŵẋýžÀƁÇĎÈƑĜĤÌĴĶĽṀÑÒÞǪŔŠŢÙṼŴẊÝŽ",
)

Template = str | dict[str, str]
DateStyle = Literal["datetime", "short-datetime", "time", "short-time"]


@dataclass(frozen=True, init=False)
class Message:
    """A catalogue key and its parameters: ``Message("error.no_record", id="12")``."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, key: str, /, **params: Any) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "params", params)

    def as_dict(self) -> dict[str, Any]:
        """``{"key": ..., "params": {...}}`` as the API sends it (a parameter that is a message, nested alike)."""
        return {"key": self.key, "params": {name: _param_dict(value) for name, value in self.params.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """The message :meth:`as_dict` gave (as an API answer carries it). Raises :class:`KeyError` or
        :class:`TypeError` for anything else."""
        params = data["params"]
        if not isinstance(data["key"], str) or not isinstance(params, Mapping):
            raise TypeError(f"not a message: {data!r}")
        return cls(data["key"], **{name: _param_message(value) for name, value in params.items()})

    def text(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The message in ``lang``. Raises :class:`KeyError` for a key or parameter the catalogue lacks."""
        return render(self.key, self.params, lang)

    def __str__(self) -> str:
        return self.text()


def _param_dict(value: Any) -> Any:
    return value.as_dict() if isinstance(value, Message) else value


def _param_message(value: Any) -> Any:
    return Message.from_dict(value) if isinstance(value, Mapping) else value


def language(lang: str | None) -> str:
    """``lang`` if it is one wordjudge speaks, else :data:`DEFAULT_LANGUAGE`."""
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def base_language(lang: str) -> str:
    """The language whose catalogue ``lang`` says things from: en for en-GB, fr for fr-CA (the pseudo-language
    is its own)."""
    return lang if lang in CATALOGUE_LANGUAGES else lang.split("-")[0]


def date_order(lang: str) -> DateOrder:
    """The order ``lang`` writes a date's day, month and year in: day-first but for the regions that do not."""
    return _DATE_ORDERS.get(lang, DAY_FIRST)


@functools.cache
def catalogue(lang: str) -> dict[str, Template]:
    """The catalogue of ``lang`` (its base language's for a regional tag; ``qps-ploc`` made from English). Raises
    :class:`ValueError` for a language wordjudge does not speak, :class:`OSError` if the file cannot be read."""
    if lang not in LANGUAGES:
        raise ValueError(f"no catalogue for language {lang!r} (languages: {', '.join(LANGUAGES)})")
    if lang not in CATALOGUE_LANGUAGES:
        return catalogue(base_language(lang))
    if lang == PSEUDO_LANGUAGE:
        return {key: _pseudo_template(value) for key, value in catalogue(DEFAULT_LANGUAGE).items()}
    path = resources.files(CATALOGUE_PACKAGE).joinpath(CATALOGUE_FOLDER, f"{lang}.json")
    data: dict[str, Template] = json.loads(path.read_text("utf-8"))
    return data


def pseudo(text: str) -> str:
    """``text`` in the pseudo-language: ``⟦`` + its letters accented + ``⟧``, its ``{placeholders}`` intact."""
    parts = PLACEHOLDER.split(text)  # text, name, text, name, ..., text
    return (
        "⟦" + "".join(part.translate(_PSEUDO) if i % 2 == 0 else "{" + part + "}" for i, part in enumerate(parts)) + "⟧"
    )


def _pseudo_template(value: Template) -> Template:
    return pseudo(value) if isinstance(value, str) else {form: pseudo(text) for form, text in value.items()}


def plural_category(n: float, lang: str) -> str:
    """The CLDR plural category of ``n`` in ``lang``: ``one`` or ``other``."""
    if base_language(lang) == "fr":
        return "one" if 0 <= n < 2 else "other"
    return "one" if n == 1 else "other"


def format_number(n: float, lang: str = DEFAULT_LANGUAGE) -> str:
    """``n`` as the language writes it (as ``Intl.NumberFormat`` does): 1,234.5 in English, 1 234,5 in French
    (a narrow no-break space groups the digits). At most three decimals."""
    text = f"{n:,.3f}".rstrip("0") if isinstance(n, float) and not n.is_integer() else f"{int(n):,}"
    if base_language(lang) == "fr":
        return text.replace(",", _NARROW_NBSP).replace(".", ",")
    return text


def format_datetime(moment: datetime, lang: str = DEFAULT_LANGUAGE, style: DateStyle = "datetime") -> str:
    """A date and time as the event writes it (in ``moment``'s own time zone), on a 24-hour clock: 27/11/2026,
    09:05:03 in English, 27/11/2026 09:05:03 in French, 11/27/2026, 09:05:03 in en-US, 2026-11-27 09:05:03 where
    dates are ISO (en-CA, fr-CA). ``style`` as kiosk/i18n.js's formatDate: datetime, short-datetime (no seconds),
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
    machine's time zone: what the console's timesShown (kiosk/td-common.js) does to the same text."""

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


def render(key: str, params: Mapping[str, Any] | None = None, lang: str = DEFAULT_LANGUAGE) -> str:
    """The text of ``key`` in ``lang`` (English where ``lang`` lacks the key) with ``params`` put in.

    A plural value is chosen by the parameter ``n``. Raises :class:`KeyError` for a key no catalogue has,
    or a placeholder without its parameter (a mistake of the code, which the tests catch).
    """
    params = params or {}
    lang = language(lang)
    found = catalogue(lang).get(key)
    if found is None:
        found = catalogue(DEFAULT_LANGUAGE).get(key)
        if found is None:
            raise KeyError(f"no message {key!r} in the catalogue")
    if isinstance(found, dict):
        count = params.get("n")
        if not isinstance(count, int | float):
            raise KeyError(f"message {key!r} is a plural: it needs the number n")
        found = found.get(plural_category(count, lang)) or found["other"]

    def put(match: re.Match[str]) -> str:
        name = match[1]
        if name not in params:
            raise KeyError(f"message {key!r} needs the parameter {name!r}")
        return format_param(params[name], lang)

    return PLACEHOLDER.sub(put, found)


def format_param(value: Any, lang: str = DEFAULT_LANGUAGE) -> str:
    """A parameter as shown in ``lang``: a number formatted, a message rendered, anything else as text."""
    if isinstance(value, Message):
        return value.text(lang)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int | float):
        return format_number(value, lang)
    return str(value)


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
