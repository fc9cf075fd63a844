"""The web application: ``create_app(settings)`` builds it; routes are thin glue over the domain modules."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

from argon2 import PasswordHasher
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wordjudge import __version__
from wordjudge.base.errors import AuditUnavailable, Misdirected, WordjudgeError, error_body
from wordjudge.base.errors import Message as Said
from wordjudge.judging.final_verdict import corrections
from wordjudge.service.opening import serving_of
from wordjudge.service.processes import Process, answers, leads
from wordjudge.service.resources import Resources
from wordjudge.service.serving import Serving
from wordjudge.service.settings import Settings
from wordjudge.web.fast_challenge import ChallengeFastPath, error_response
from wordjudge.web.pages import mount_docs, mount_hall_ca, mount_web
from wordjudge.web.routes.access import router as access_router
from wordjudge.web.routes.console import router as console_router
from wordjudge.web.routes.event import router as event_router
from wordjudge.web.routes.hall import router as hall_router
from wordjudge.web.routes.judging import router as api_router
from wordjudge.web.routes.status import router as status_router
from wordjudge.web.transport import BodyLimit

log = logging.getLogger(__name__)

EVENT_WATCH_SECONDS = 1.0  # how often the event file is looked at (a stat) for the TD's hand edits
HALL_WATCH_SECONDS = 1.0  # how often a hall server looks at its database and asks its peers
# How long a stop waits for a watcher's step under way (a disk that stopped answering may hold one for good).
WATCH_STOP_SECONDS = 10.0


def create_app(
    settings: Settings,
    resources: Resources | None = None,
    *,
    serving: Serving | None = None,
    hasher: PasswordHasher | None = None,
    process: Process | None = None,
) -> FastAPI:
    """Build the wordjudge web app.

    The lifespan finds where the server stands in its hall and, if it is active, opens the :class:`Resources`
    (event, lexicons, audit log) for the settings (:meth:`Serving.start`), unless ``serving`` started already
    or opened ``resources`` are handed in (``wordjudge serve`` starts first, to stop with a clear message when
    a lexicon is bad), and closes them at shutdown. While it runs, the event file is watched (the TD's hand
    edits are served, see :meth:`ServedEvent.pick_up_event_file`) and the hall looked at
    (:meth:`Serving.step`). ``hasher``: see :func:`~wordjudge.service.opening.open_resources` (tests only).
    ``process``: one of the processes of a server of several (:mod:`wordjudge.service.processes`): the processes but
    the first answer the verdict path alone (421 for the rest).
    """
    process = process or (serving.process if serving is not None else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        opened = serving
        if opened is None:
            opened = serving_of(settings, resources=resources, hasher=hasher, process=process)
            opened.start()
        if opened.resources is not None:
            opened.resources.advertise()  # wordjudge.local on the LAN, when listening there
        stopping = asyncio.Event()
        tasks = [asyncio.create_task(_watch_event_file(opened, stopping), name="event file watcher")]
        if opened.in_hall:
            tasks.append(asyncio.create_task(_watch_hall(opened, stopping), name="hall watcher"))
        try:
            yield {"serving": opened}
        finally:
            # The watchers stop between two steps, not in one: a step runs in a worker thread, which a cancel leaves
            # running against the resources closed under it (a read of the log racing its close opened a
            # connection nobody closed). A step that hangs is given up on after WATCH_STOP_SECONDS.
            stopping.set()
            await asyncio.wait(tasks, timeout=WATCH_STOP_SECONDS)
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task  # ended before the resources close, not left pending
            opened.close()

    app = FastAPI(
        title="wordjudge",
        version=__version__,
        summary="Challenge adjudication for word-game tournaments",
        lifespan=lifespan,
        docs_url=None,  # mount_docs: the API reference with its files served here, not from a CDN
        redoc_url=None,  # ReDoc comes from a CDN: /docs is the reference
        # FastAPI's own OpenTelemetry layer asks for the global providers on every request; wordjudge
        # exports its metrics itself (/metrics) and configures no OpenTelemetry, so it is off (issue 19).
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    _add_error_handlers(app)
    # The last added runs first: the body limit before routing and authentication, and the
    # security headers (HSTS too, over HTTPS) around everything, the limit's 413 included. The
    # challenge route's fast path (fast_challenge.py) runs last, just before the router.
    app.add_middleware(ChallengeFastPath)  # innermost: after the body limit, inside the security headers
    app.add_middleware(BodyLimit)
    peers = list(settings.peer_urls)
    if peers:
        # A device that followed the hall's active server here still runs the page of the server it was loaded
        # from: its requests come from that origin (a peer's), with its token and no cookie.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=peers,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Accept"],
            max_age=600,
        )
    if process is not None and not process.leads:
        app.add_middleware(VerdictsOnly, process=process, url=settings.public_url or "")
    app.add_middleware(SecurityHeaders, hsts=settings.tls, connect=peers)
    app.include_router(api_router)
    app.include_router(access_router)
    app.include_router(console_router)
    app.include_router(event_router)
    app.include_router(status_router)
    app.include_router(hall_router)
    mount_web(app)
    mount_docs(app)
    mount_hall_ca(app, settings.data_dir)
    return app


async def _stops_within(stopping: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds``, or less if ``stopping`` is set meanwhile; whether it is."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stopping.wait(), seconds)
    return stopping.is_set()


async def _watch_hall(serving: Serving, stopping: asyncio.Event) -> None:
    """Look at the server's place in its hall every :data:`HALL_WATCH_SECONDS`, in a worker thread (it asks the
    database and the peers), until ``stopping`` is set: a standby promoted becomes active, an active server
    replaced steps down (:meth:`Serving.step`)."""

    async def look() -> None:
        await asyncio.to_thread(serving.step)

    await _keep_looking("hall watcher", HALL_WATCH_SECONDS, stopping, look)


async def _keep_looking(
    watcher: str, seconds: float, stopping: asyncio.Event, look: Callable[[], Awaitable[None]]
) -> None:
    """Await ``look()`` every ``seconds`` until ``stopping`` is set. A look that fails is logged with its traceback
    and the next one comes on time: a watcher ended by its first unforeseen error left the clock, the event file,
    silent kiosks or the hall unwatched for good, with nothing said and the server answering as before. A failure
    the same as the look's before is not logged again (a traceback a second, all day, would fill the disk the log
    is on); the first look that succeeds after failures says so."""
    failing: tuple[type[Exception], str] | None = None  # the failure of the look before, if it failed
    while not await _stops_within(stopping, seconds):
        try:
            await look()
        except Exception as exc:
            if (type(exc), str(exc)) != failing:
                log.exception("the %s's look failed (it looks again every %g s)", watcher, seconds)
            failing = (type(exc), str(exc))
        else:
            if failing is not None:
                log.warning("the %s's look succeeds again", watcher)
            failing = None


async def _watch_event_file(serving: Serving, stopping: asyncio.Event) -> None:
    """Look at the clock (:meth:`~wordjudge.tournament.timekeeping.Timekeeper.look`) and the event file every
    :data:`EVENT_WATCH_SECONDS`, in a worker thread (reading a changed file
    and verifying a new lexicon take time), write the devices' and sessions' last-seen times (in a worker
    thread too: a commit waits for the disk), at which kiosks went silent (alerting the TD), and keep the
    summary's final verdicts up to date (so that no summary waits for them), until ``stopping`` is set. Only while
    the server is active (a standby has no event open)."""

    async def look() -> None:
        resources = serving.resources
        if resources is None:
            return
        resources.advertise()  # a standby that became active announces itself now (else: already announcing)
        # The clock first: a step is told, and put on record, within a second of it.
        await asyncio.to_thread(
            serving.clock.look, resources.audit, event=resources.served.event.name, leads=leads(resources.process)
        )
        await asyncio.to_thread(resources.served.pick_up_event_file)
        await asyncio.to_thread(resources.access.database.flush_touches)
        if leads(resources.process):
            # Kiosks are heard by process 0 (their polls go there): another process hears a kiosk's challenges
            # alone, and would think it silent between them.
            resources.access.devices.watch_offline()
        with contextlib.suppress(AuditUnavailable):  # health says it; the summary says it when asked
            await asyncio.to_thread(corrections, resources.audit, resources.served.event.name)

    await _keep_looking("event file watcher", EVENT_WATCH_SECONDS, stopping, look)


# Same-origin scripts, styles and connections only; no framing (clickjacking), no MIME sniffing,
# no referrer (a pairing link must not leak). The /docs page (pages.mount_docs) starts Swagger UI with an
# inline script and style, so it alone gets a looser policy; it holds no data, and loads nothing from elsewhere.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_DOCS_PATHS = {"/docs"}
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
# Over HTTPS, browsers are told to use nothing else for 180 days. Not includeSubDomains: the hall's
# other local names (a router's page, a printer) may well be plain HTTP.
_HSTS = (b"strict-transport-security", b"max-age=15552000")


class SecurityHeaders:
    """Adds the security headers to every HTTP response (plain ASGI: cheaper than a BaseHTTPMiddleware).

    ``hsts``: the server speaks HTTPS, so responses carry Strict-Transport-Security too.
    """

    def __init__(self, app: ASGIApp, hsts: bool = False, connect: list[str] | None = None) -> None:
        self.app = app
        self.headers = [*_HEADERS, _HSTS] if hsts else _HEADERS
        # The hall's other servers (``connect``): a device's page may follow the active one there.
        self.csp = _CSP.replace("connect-src 'self'", " ".join(["connect-src 'self'", *(connect or [])])).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = _DOCS_CSP.encode() if scope["path"] in _DOCS_PATHS else self.csp

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"content-security-policy", csp), *self.headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class VerdictsOnly:
    """Refuses, with 421 and the one error shape, what a process but the first of a server of several does not
    answer (:func:`wordjudge.service.processes.answers`): what it holds in memory is then a kiosk's alone, whatever a
    front sends it."""

    def __init__(self, app: ASGIApp, process: Process, url: str) -> None:
        self.app = app
        self.process = process
        self.url = url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or answers(self.process, scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        refusal = Misdirected("error.process.verdicts_only", index=str(self.process.index), url=self.url)
        await error_response(refusal)(scope, receive, send)


def _add_error_handlers(app: FastAPI) -> None:
    """Every error leaves in the one JSON shape of :func:`wordjudge.base.errors.error_body`."""

    @app.exception_handler(WordjudgeError)
    async def wordjudge_error(request: Request, exc: WordjudgeError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        phrase = HTTPStatus(exc.status_code).phrase
        code = phrase.lower().replace(" ", "_").replace("-", "_")
        if isinstance(exc.detail, str) and exc.detail != phrase:
            message = Said("error.http.detail", detail=exc.detail)  # the framework's own words, as they are
        elif exc.status_code in _MESSAGES:
            message = Said(_MESSAGES[exc.status_code])
        else:
            message = Said("error.http.status", phrase=phrase)
        headers = exc.headers
        if exc.status_code == 404:
            message = Said("error.http.at_path", problem=message, path=request.url.path)
        elif exc.status_code == 405 and (allowed := _allowed_methods(request)):
            headers = {**(headers or {}), "Allow": allowed}
        return JSONResponse(error_body(exc.status_code, code, message), status_code=exc.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # pydantic's own words for each field (English), in one message naming every field at fault.
        problems = [
            {"field": ".".join(str(part) for part in error["loc"]), "message": error["msg"]} for error in exc.errors()
        ]
        listed = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return JSONResponse(
            error_body(422, "invalid_request", Said("error.http.invalid_request", problems=listed), problems),
            status_code=422,
        )

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSONResponse(error_body(500, "internal_error", Said("error.http.internal")), status_code=500)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(request: Request) -> str:
    """Every method the path answers, for a 405's Allow header (RFC 9110: all of them). Starlette names only
    those of the first route that matched the path, and one path's routes can come from several routers
    (GET /api/event from the API, PUT from the console). "" for the client files, which refuse on their own."""
    routes = [route for route in request.app.routes if not isinstance(route, Mount)]
    return ", ".join(
        method
        for method in _METHODS
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)
    )


_MESSAGES = {
    404: "error.http.not_found",
    405: "error.http.method_not_allowed",
}
