"""The shapes of the API's JSON answers, for the OpenAPI schema (``/openapi.json``, ``/docs``): what a client can
rely on, and what the schema fuzzing (tests/test_schema_fuzz.py) holds every answer to.

A route declares its answer's model (``response_model=``, or ``model`` in ``responses``) and answers with
:func:`answer`: the body its domain module builds, sent exactly as FastAPI sends a route's plain dict (key order,
numbers, absent keys and nulls as built). The models document it and are not applied to it: pydantic's
serialisation would reorder the keys into the model's order and pay for a validation on every request, the
verdict path's included. That each model mirrors the bodies it documents is held by the tests instead
(tests/test_openapi.py and the fuzzing's response checks).

A key a body has only sometimes is declared with :func:`absent` (not required; never null unless its type says
so); a key that is always there, null or not, is required. Models of bodies that another module may grow
(the event, its divisions, the input rules, the lexicons) take ``extra="allow"``: more keys than documented.

The shared pieces are here; each concept's answers are in a module of its own: :mod:`.answers_records` (records,
final verdicts, dockets, the log's head and check, the summary), :mod:`.answers_access` (sessions, pairing codes,
devices, TDs, alerts), :mod:`.answers_event` (the event, lexicons, changes), :mod:`.answers_status` (health, the
hall's claims and proofs).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field


def answer(body: Any, status_code: int = 200) -> JSONResponse:
    """``body`` answered as FastAPI answers a route's plain return value without a response model
    (:func:`jsonable_encoder`, then a :class:`JSONResponse`): byte for byte the same, the route's declared model
    documenting it without being applied."""
    return _Answer(body, status_code=status_code)


class _Answer(JSONResponse):
    """A :class:`JSONResponse` of a body as :func:`jsonable_encoder` would give it, without asking it first: JSON's
    encoder writes what JSON holds as it is (dicts, lists and tuples, strings and their enums, numbers, booleans,
    null) and hands :func:`jsonable_encoder` the rest (a date, a set, a model...), the same text. A page of a
    hundred records is some 20,000 values, which :func:`jsonable_encoder` asks a dozen questions of each: 15 ms a
    page, of a view's 20 at a million records (issue 48)."""

    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(
                content,
                default=jsonable_encoder,
                ensure_ascii=False,
                allow_nan=False,
                indent=None,
                separators=(",", ":"),
            ).encode("utf-8")
        except TypeError:  # a key JSON's encoder takes no other way (jsonable_encoder makes it a string)
            return super().render(jsonable_encoder(content))


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent(description: str | None = None) -> Any:
    """A key the body has only sometimes: not required, and no default shown (its absence is the default)."""
    return Field(default=None, description=description, json_schema_extra=_no_default)


class Shape(BaseModel):
    """A JSON answer's shape: its keys, documented. Not applied to the answer (see the module's docstring)."""

    model_config = ConfigDict(extra="ignore")


class OpenShape(Shape):
    """A shape that may carry more keys than documented (a body another module may grow)."""

    model_config = ConfigDict(extra="allow")


class MessageAnswer(Shape):
    """A catalogue key and its parameters, for a screen to say in the event's language
    (:meth:`wordjudge.base.errors.Message.as_dict`); a parameter may itself be a message."""

    key: str
    params: dict[str, Any]


class Ok(Shape):
    """Done, and by whom or on what."""

    ok: bool
