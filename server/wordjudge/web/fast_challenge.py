"""POST /api/challenges without FastAPI's per-request machinery: the verdict path's hot route (issue 19).

FastAPI serves a route by matching every route in turn, solving its dependency tree (resources,
credential, principal, body) through generic introspecting code, and wrapping it in exit stacks:
on this route that was more of a verdict's time than the adjudication itself. :class:`ChallengeFastPath`,
an ASGI middleware just outside the router, serves the route itself for the common case, doing exactly
what the route and its dependencies do, in the same order:

- the body is read (after :class:`~wordjudge.web.transport.BodyLimit`, which still refuses an oversized one)
  and, when it is ``application/json``, decoded and validated with the route's own model
  (:class:`~wordjudge.web.bodies.ChallengeIn`);
- the caller is authenticated by :func:`~wordjudge.web.deps.authenticate` and :func:`~wordjudge.web.deps.get_principal`
  (a device's token bound to its address, a TD's session with its CSRF token, a monitor refused);
- the challenge goes through :meth:`~wordjudge.judging.challenges.ChallengeService.adjudicate` (rate limit, the
  durable append with its fsync before the answer, idempotent request ids) and is answered by the
  route's own :func:`~wordjudge.web.answers_records.appended_response`.

Anything else (no or another content type, a body that is not JSON or not a valid challenge) is handed,
with its body, to FastAPI's route, which answers it as it always did (its 422 names every field at
fault; a missing credential is still refused before the body is judged). A refusal raised here is
answered as the app's handler answers it (:func:`error_response`). So the route answers exactly as
before; only the generic work is gone. The route stays declared for the API reference (``/docs``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from wordjudge.base.errors import WordjudgeError
from wordjudge.web.answers_records import appended_response
from wordjudge.web.bodies import ChallengeIn
from wordjudge.web.deps import authenticate, get_principal, resources_of
from wordjudge.web.transport import replay_body

PATH = "/api/challenges"


def error_response(exc: WordjudgeError) -> JSONResponse:
    """The answer to a refusal: the one JSON error shape, its status and headers (the app's handler too)."""
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers())


def _is_json(scope: Scope) -> bool:
    """Whether the request says its body is ``application/json`` (with or without parameters)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bool(value.split(b";", 1)[0].strip().lower() == b"application/json")
    return False


class ChallengeFastPath:
    """Serves ``POST /api/challenges`` for a JSON body that is a valid challenge; hands anything else on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] != "POST" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        body = await self._body(receive)
        if body is None:  # the client went away: FastAPI's route sees the disconnect, as it did
            await self.app(scope, receive, send)
            return
        challenge = _challenge(body)
        replay = replay_body(body, receive)
        if challenge is None:
            await self.app(scope, replay, send)
            return
        request = Request(scope, replay)
        try:
            resources = resources_of(request.state.serving)
            who = await get_principal(await authenticate(request, resources))
            appended = await resources.challenges.adjudicate(
                who,
                division=challenge.division,
                table=challenge.table,
                round_number=challenge.round,
                words=challenge.words,
                request_id=challenge.request_id,
            )
            response = appended_response(appended.record, appended.replayed, who)
        except WordjudgeError as exc:
            response = error_response(exc)
        await response(scope, replay, send)

    @staticmethod
    async def _body(receive: Receive) -> bytes | None:
        """The whole body (its size is held by BodyLimit, ahead of this), or None if the client went away."""
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return b"".join(chunks)


def _challenge(body: bytes) -> ChallengeIn | None:
    """The body as a valid challenge, or None for FastAPI's route to refuse it in its own words."""
    if not body:
        return None
    try:
        data: Any = json.loads(body)
        return ChallengeIn.model_validate(data)
    except (ValueError, ValidationError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        # RecursionError: JSON nested deeper than the decoder goes ([[[...]]] of 2 KB); the route answers it (400),
        # as it answers any body it cannot parse.
        return None
