"""The one error vocabulary of wordjudge.

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

Each error is raised with a :class:`~wordjudge.base.messages.Message`: a catalogue key (``error.*``) and its
parameters, ``raise InvalidInput("error.round.invalid", round="0", max=999)``. Its English text is
``message``; its key and parameters, ``msg``, let each screen say it in the event's language.

HTTP responses carry every error in one JSON shape, built by :func:`error_body`
and described by :class:`ErrorBody` for the OpenAPI schema. This module imports
nothing from the web framework: the domain modules raise these, and the HTTP shell
turns them into responses.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wordjudge.base.messages import Message


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
