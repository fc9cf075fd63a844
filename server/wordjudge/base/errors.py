"""The one vocabulary of wordjudge: what it says (a :class:`Message`, rendered from one catalogue per language) and
the errors it raises, each saying what went wrong as a message.

**Messages.** The catalogues are the web clients' own: ``locales/<lang>.json`` in the ``wordjudge.kiosk`` package
(the kiosk, the handheld and the console load the same files). Each is a flat JSON object of dotted keys
(``error.*``, ``rule.*``, ``consequence.*``, ``verdict.*``, ``chain.*``, ``cli.*``, ``role.*``, ``change.*``,
``time.*`` here; ``ui.*`` for the clients). A value is a text with ``{name}`` placeholders, or a plural object
``{"one": ..., "other": ...}`` chosen by the number in the parameter ``n`` (CLDR: in English one iff
n == 1, in French one iff 0 <= n < 2). A :class:`Message` is a key and its parameters: the server sends it as
``{"key": ..., "params": {...}}`` so that each screen renders it in its language, and keeps its English text for
API users, logs and the audit log. Parameters are text (shown as they are: names, paths, ids), numbers (formatted
for the language: 1,234 in English, 1 234 with a narrow no-break space in French) or other messages (rendered in
the same language). The pseudo-language ``qps-ploc`` is made from English when loaded (never a file): each text
becomes ``⟦`` + its letters accented + ``⟧``, placeholders kept, so that text that did not come from the catalogue
stands out on any screen. How dates, times, durations and lists are said is :mod:`wordjudge.base.messages`'.

The messages sit here, under the errors, because every error is one: the module that every layer imports for its
errors is the one that says them, and imports nothing of wordjudge (issue 47: a level off every chain of imports).

**Errors.**

Every error that wordjudge raises on purpose is a :class:`WordjudgeError`. Each
class carries a stable machine-readable ``code``, the HTTP ``status`` it maps to,
and a message written for the person in front of it: it names the file, line,
word or setting that is wrong and, where possible, what to do about it.

    WordjudgeError
     ├── InvalidInput            422  bad words, settings or arguments from a user
     │    ├── AmbiguousTiles     422  a word whose tiles the players must state (Welsh NG or N+G)
     │    ├── WordListError      422  a word-list file that cannot be compiled
     │    └── ProfileError       422  a profile whose parts do not fit together
     ├── Unauthorized            401  no valid credential (device token or TD login)
     ├── Forbidden               403  not allowed for this actor or role
     │    └── DeviceMoved        403  a device token used from another address than its own
     ├── NotFound                404  no such route or resource
     │    └── LexiconNotFound    404  no compiled lexicon or profile of that name
     ├── Conflict                409  the thing exists already
     │    └── LexiconExists      409
     ├── MethodNotAllowed        405
 ├── Misdirected             421  a request sent to a process of the event's server that answers verdicts only
     ├── RequestTimeout          408  a request that did not arrive in full within seconds
     ├── PayloadTooLarge         413  a request body over the server's limit (64 KiB)
     ├── RequestHeadTooLarge     431  a request line and headers over the server's limit (16 KiB)
     ├── RateLimited             429  too many challenges, logins or pairing attempts:
     │                                try again after ``retry_after`` seconds
     ├── LexiconIntegrityError   503  a compiled lexicon that is missing, truncated
     │                                or altered: refused, never used
     ├── AuditUnavailable        503  the audit log cannot be written or read: no
     │                                verdict is given without its record
     ├── AccessUnavailable       503  the device and TD account store cannot be used
     └── NotActive               503  this server is the hall's standby, or was replaced (fenced): the
                                      details name the active server

Each error is raised with a :class:`Message`: a catalogue key (``error.*``) and its
parameters, ``raise InvalidInput("error.round.invalid", round="0", max=999)``. Its English text is
``message``; its key and parameters, ``msg``, let each screen say it in the event's language.

HTTP responses carry every error in one JSON shape, built by :func:`error_body`
and described by :class:`ErrorBody` for the OpenAPI schema. This module imports
nothing from the web framework (nor the rest of wordjudge): the domain modules raise these, and the HTTP shell
turns them into responses.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

# The languages wordjudge has a catalogue for; an event may name one with its region (en-US, fr-CA), which says
# the same words as its base language and writes dates the region's way (see wordjudge.base.messages.date_order).
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


class WordjudgeError(Exception):
    """Base class of every error wordjudge raises on purpose."""

    code = "error"
    status = 400

    def __init__(self, key: str | Message, /, *, details: Any = None, **params: Any) -> None:
        """``key``: an ``error.*`` key of the catalogue, with its ``params``; or a :class:`Message` made already.

        Raises :class:`KeyError` for a key the catalogue lacks or a parameter it needs (a mistake in the code).
        """
        self.msg = key if isinstance(key, Message) else Message(key, **params)
        self.message = self.msg.text()  # English: API users, logs and the command line read it
        self.details = details
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        """The JSON error body for this error (see :func:`error_body`)."""
        return error_body(self.status, self.code, self.msg, self.details)

    def headers(self) -> dict[str, str]:
        """HTTP headers that go with this error's response."""
        return {}


class InvalidInput(WordjudgeError):
    """Raised when words, settings or arguments given by a user are not acceptable input."""

    code = "invalid_input"
    status = 422


class AmbiguousTiles(InvalidInput):
    """Raised when a challenged word's letters can be more than one sequence of tiles and the request did not say
    which: the players state the tiles the board holds (``details``: each such word, its tilings and how each is
    typed). Asked whatever the words' validity, before anything is recorded."""

    code = "ambiguous_tiles"


class WordListError(InvalidInput):
    """Raised when a word-list file cannot be read or holds lines that are not words."""

    code = "invalid_word_list"


class ProfileError(InvalidInput):
    """Raised when a lexicon profile's base, errata and secondary source do not fit together."""

    code = "invalid_profile"


class Unauthorized(WordjudgeError):
    """Raised when a request carries no credential, or one that is unknown, expired or revoked."""

    code = "unauthorized"
    status = 401

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Bearer realm="wordjudge"'}


class Forbidden(WordjudgeError):
    """Raised when the actor or role may not do this (e.g. re-adjudicate their own adjudication)."""

    code = "forbidden"
    status = 403


class DeviceMoved(Forbidden):
    """Raised when a device's token comes from another client address than the one it is bound to.

    The device keeps its token (it may only have moved); the TD is alerted and may accept the move.
    """

    code = "device_moved"


class NotFound(WordjudgeError):
    """Raised when a route or a named resource does not exist."""

    code = "not_found"
    status = 404


class LexiconNotFound(NotFound):
    """Raised when no compiled lexicon or profile has the given name."""

    code = "lexicon_not_found"


class Conflict(WordjudgeError):
    """Raised when creating something that exists already."""

    code = "conflict"
    status = 409


class LexiconExists(Conflict):
    """Raised when compiling a lexicon or profile under a name already taken."""

    code = "lexicon_exists"


class MethodNotAllowed(WordjudgeError):
    """Raised when a route exists but not for that HTTP method."""

    code = "method_not_allowed"
    status = 405


class Misdirected(WordjudgeError):
    """Raised by a process of an event's server that answers the verdict path only (``--processes``), for any
    other request: the front sends those to process 0."""

    code = "misdirected"
    status = 421


class RequestTimeout(WordjudgeError):
    """Raised (sent by the HTTP server itself) when a request does not arrive in full in time."""

    code = "request_timeout"
    status = 408


class PayloadTooLarge(WordjudgeError):
    """Raised when a request's body is over the server's limit; it is refused before it is read."""

    code = "payload_too_large"
    status = 413


class RequestHeadTooLarge(WordjudgeError):
    """Raised (sent by the HTTP server itself) when a request's bytes outside its body (its line and headers, a
    chunked body's size lines and trailers) are over the server's limit; they are refused as they arrive, never
    held."""

    code = "request_head_too_large"
    status = 431


class RateLimited(WordjudgeError):
    """Raised when an actor or client has made too many attempts; ``retry_after`` says when to try again."""

    code = "rate_limited"
    status = 429

    def __init__(self, key: str, /, *, retry_after: float, **params: Any) -> None:
        """``key``'s text ends with when to try again: its parameter ``retry_after`` (whole seconds)."""
        self.retry_after = max(1, round(retry_after + 0.5))
        super().__init__(key, details={"retry_after": self.retry_after}, retry_after=self.retry_after, **params)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class LexiconIntegrityError(WordjudgeError):
    """Raised when a compiled lexicon is missing, truncated, altered or unreadable.

    Such a lexicon is refused: wordjudge never adjudicates with it.
    """

    code = "lexicon_integrity"
    status = 503


class AuditUnavailable(WordjudgeError):
    """Raised when the audit log cannot be written (disk full, read-only, locked) or read.

    A challenge that cannot be recorded gets no verdict.
    """

    code = "audit_unavailable"
    status = 503


class AccessUnavailable(WordjudgeError):
    """Raised when the store of devices, pairing codes and TD accounts cannot be opened or written."""

    code = "access_unavailable"
    status = 503


class NotActive(WordjudgeError):
    """Raised for every request but health on a server that is not its hall's active server: a standby, or
    one replaced by another (fenced). ``details`` name the role and the active server, for devices to follow."""

    code = "not_active"
    status = 503


def error_body(status: int, code: str, message: Message, details: Any = None) -> dict[str, Any]:
    """Build the one JSON error shape that every wordjudge HTTP error uses.

    ``{"ok": false, "status": 422, "code": "invalid_input", "error": "...", "details": ...,
    "message": {"key": "error.round.invalid", "params": {"round": "0", "max": 999}}}``

    ``status`` repeats the HTTP status, ``code`` is stable and machine-readable,
    ``error`` is the human message in English, ``details`` is ``null`` or structured data
    (for example the list of offending fields), ``message`` the same message as a catalogue key and
    its parameters, which clients render in the event's language (``error`` is its English text).
    Raises :class:`KeyError` for a message the English catalogue cannot render.
    """
    return {
        "ok": False,
        "status": status,
        "code": code,
        "error": message.text(),
        "details": details,
        "message": message.as_dict(),
    }


class MessageBody(BaseModel):
    """A message as the API sends it: a catalogue key and its parameters (a parameter may be a message)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(
        min_length=1, description="A key of the catalogues (kiosk/locales/<lang>.json), e.g. error.round.invalid."
    )
    params: dict[str, Any] = Field(
        description="The values of the key's {placeholders}: text, numbers (formatted for the language) or "
        "messages ({key, params}, rendered in the same language)."
    )


class ErrorBody(BaseModel):
    """The shape :func:`error_body` builds, as the OpenAPI schema documents it for every 4xx and 5xx response."""

    model_config = ConfigDict(extra="forbid")

    ok: Literal[False]
    status: int = Field(ge=400, le=599, description="The HTTP status, repeated.")
    code: str = Field(min_length=1, description="Stable and machine-readable, e.g. invalid_input.")
    error: str = Field(min_length=1, description="The message for the person in front of it, in English.")
    details: Any = Field(description="null, or structured data such as the offending fields.")
    message: MessageBody = Field(
        description="The same message as a catalogue key and its parameters, for a client to say it in the "
        "event's language (falling back to `error` for a key it does not know)."
    )


def error_schema() -> dict[str, Any]:
    """:class:`ErrorBody`'s JSON schema with its message's schema written in place (no ``$defs``), so that it
    can sit anywhere in the OpenAPI document."""
    schema = ErrorBody.model_json_schema()
    definitions = schema.pop("$defs")
    message = schema["properties"]["message"]
    reference = message.pop("$ref").rsplit("/", 1)[-1]
    schema["properties"]["message"] = {**definitions[reference], **message}
    return schema
