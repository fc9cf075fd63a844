"""What every route may declare in its signature: the server's resources (while it is its hall's active
server), who is asking and what they may do, the filters of the log's routes, the request bodies' base, and
the errors every route may answer.

Authorization is declared here, not checked inside handlers: a route for the TD alone takes
``who: Annotated[Principal, td_only("error.td_only.see_devices")]`` (the refusal's message: "only the TD may
see the devices"), one for a monitor or the TD takes
``MetricsReaderDep``, any other route that needs a credential ``PrincipalDep``.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from pydantic import BeforeValidator, Field

from wordjudge.base.errors import Forbidden, InvalidInput, Unauthorized, error_schema
from wordjudge.judging.final_verdict import awaiting_ruling
from wordjudge.model.auth import Principal
from wordjudge.model.input_rules import MAX_PASSWORD, MAX_ROUND, Name
from wordjudge.model.records import Kind, RecordFilter, Verdict, utc_time
from wordjudge.service.resources import Resources  # reached through what serves them (Serving)
from wordjudge.service.serving import Serving
from wordjudge.web.bodies import StrictBody
from wordjudge.words.normal_form import normalise
from wordjudge.words.search import MAX_QUERY, SEARCH_HELP, known_name, parse_search, tile_forms

# Every route may answer an error, always in the one JSON shape of errors.error_body; documented so that
# clients (and the schema fuzzing in tests/test_schema_fuzz.py) can rely on it. The content is spelt out
# rather than given as a `model`, which FastAPI would document under the route's own media type (text/plain).
_ERROR_CONTENT = {"application/json": {"schema": error_schema()}}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    "4XX": {"description": "Refused: bad input, no credential, not allowed, not found, ...", "content": _ERROR_CONTENT},
    "5XX": {"description": "Cannot answer now: the audit log or a lexicon is unavailable.", "content": _ERROR_CONTENT},
}

SESSION_COOKIE = "wordjudge_session"
CSRF_HEADER = "X-CSRF-Token"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# A device's credential, exactly: one Authorization header, "Bearer", one space and the token (RFC 6750's
# token68). The HAProxy front of several processes routes each device on what follows those 7 characters
# (deploy/haproxy/wordjudge.cfg): a header the server read otherwise ("bearer", two spaces, a tab, a second
# header) could reach another process and its own count of the device's limit (issue 36).
_BEARER = re.compile(r"Bearer ([A-Za-z0-9._~+/-]+=*)")


# The dependencies are async although they do no I/O: FastAPI runs a sync dependency in a worker
# thread, which costs more than the rest of a health check.
async def get_serving(request: Request) -> Serving:
    """Whether the server serves (its place in its hall) and with what, from the app's lifespan."""
    serving: Serving = request.state.serving
    return serving


ServingDep = Annotated[Serving, Depends(get_serving)]


def resources_of(serving: Serving) -> Resources:
    """The server's :class:`Resources` while it is its hall's active server. Raises :class:`NotActive` (503,
    naming the active server) on a standby or a fenced server."""
    resources = serving.resources
    if resources is None:
        raise serving.refusal()
    return resources


async def get_resources(serving: ServingDep) -> Resources:
    """The server's :class:`Resources`, opened by the app's lifespan (see :func:`resources_of`)."""
    return resources_of(serving)


ResourcesDep = Annotated[Resources, Depends(get_resources)]


def client_address(request: Request) -> str:
    """The address the request came from (a proxy's X-Forwarded-For counts only if the TD named the proxy)."""
    return request.client.host if request.client else "unknown"


async def authenticate(request: Request, resources: ResourcesDep) -> Principal:
    """Who is asking: a device (monitors included) by its bearer token, or a TD by their console session cookie.

    Raises :class:`Unauthorized` without a valid credential, :class:`Forbidden` for a console
    request that changes something without the session's CSRF token.
    """
    credentials = request.headers.getlist("authorization")
    if credentials:
        bearer = _BEARER.fullmatch(credentials[0]) if len(credentials) == 1 else None
        if bearer is None:
            raise Unauthorized("error.access.bad_authorization")
        principal = await resources.access.devices.check(bearer.group(1), client=client_address(request))
        request.state.device_token = bearer.group(1)  # for GET /api/session, which hands the device its proof key
        return principal
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        session = resources.access.tds.authenticate(cookie)
        request.state.csrf_token = session.csrf_token  # for GET /api/session, which hands it to the page
        if request.method not in _SAFE_METHODS:
            sent = request.headers.get(CSRF_HEADER, "")
            if not secrets.compare_digest(sent.encode(), session.csrf_token.encode()):
                raise Forbidden("error.access.csrf_missing", header=CSRF_HEADER)
        return session.principal
    raise Unauthorized("error.access.no_credential")


async def get_principal(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    """Who is asking, for every route that needs a credential but those a monitor reads.

    Raises what :func:`authenticate` raises, and :class:`Forbidden` for a monitor (its token
    reads the metrics and nothing else).
    """
    principal.require_not_monitor()
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


async def metrics_reader(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    """A monitor or a TD. Raises what :func:`authenticate` raises, and :class:`Forbidden` for others."""
    principal.require_metrics_reader()
    return principal


MetricsReaderDep = Annotated[Principal, Depends(metrics_reader)]


def td_only(refusal: str) -> Any:
    """The dependency of a route for the TD alone: ``who: Annotated[Principal, td_only("error.td_only.see_devices")]``.

    ``refusal`` is the message's key: "only the TD may see the devices". The dependency raises what
    :func:`get_principal` raises, and :class:`Forbidden` for anyone but the TD, before the handler runs.
    """

    # One per route (each has its own refusal); the principal under it is worked out once a request.
    async def td(who: PrincipalDep) -> Principal:
        who.require_td(refusal)
        return who

    return Depends(td)


def _iso_only(value: Any) -> Any:
    """Refuse a bare number where an ISO time is asked for: pydantic would read it as seconds since 1970."""
    if isinstance(value, str) and value.strip().lstrip("+-").replace(".", "", 1).isdigit():
        raise ValueError("an ISO time such as 2026-11-21T09:00:00+01:00 is expected, not a number")
    return value


# Names of a kind and a verdict in any case (ACCEPTABLE, Ruling), as the other filters take theirs.
_ANY_CASE = BeforeValidator(lambda value: value.lower() if isinstance(value, str) else value)


def record_filter(
    resources: ResourcesDep,
    division: Annotated[str | None, Query(max_length=100)] = None,
    round: Annotated[int | None, Query(ge=1, le=MAX_ROUND)] = None,
    table: Annotated[str | None, Query(max_length=10)] = None,
    kind: Annotated[Kind | None, _ANY_CASE] = None,
    verdict: Annotated[Verdict | None, _ANY_CASE] = None,
    actor: Annotated[str | None, Query(max_length=64, description="A device's or TD's name.")] = None,
    since: Annotated[
        datetime | None, BeforeValidator(_iso_only), Query(description="ISO time with a zone (inclusive).")
    ] = None,
    until: Annotated[
        datetime | None, BeforeValidator(_iso_only), Query(description="ISO time with a zone (exclusive).")
    ] = None,
    needs_ruling: bool | None = None,
    word: Annotated[str | None, Query(max_length=30, description="Records whose words include this word.")] = None,
    q: Annotated[str | None, Query(max_length=MAX_QUERY, description=SEARCH_HELP)] = None,
) -> RecordFilter:
    """The filters of the log's list, live feed and export, from the query string; a division, device or TD
    in any case (as the event and the access store name them), like tables and words.

    Raises :class:`~wordjudge.base.errors.InvalidInput` for a time without a zone, a search text that is
    none of the forms :mod:`wordjudge.words.search` reads, or a search table other than ``table``.
    """
    found = parse_search(q or "")
    if division is not None:
        division = known_name(division, (d.name for d in resources.served.event.divisions))
    if actor is not None:
        access = resources.access
        actor = known_name(actor, [d.name for d in access.devices.all()] + [t.name for t in access.tds.all()])
    if found.table is not None and table is not None and found.table.upper() != table.upper():
        raise InvalidInput("error.search.two_tables", searched=found.table, table=table)
    # The queue's challenges, decided on each whole family (a reissue or ruling settles a disagreement).
    awaiting = None if needs_ruling is None else awaiting_ruling(resources.audit, resources.served.event.name)
    return RecordFilter(
        division=division,
        round=round,
        table=table or found.table,
        kind=kind,
        verdict=verdict,
        actor=actor,
        since=utc_time(since, "since") if since else None,
        until=utc_time(until, "until") if until else None,
        needs_ruling=needs_ruling,
        awaiting=awaiting,
        word=normalise(word) if word else None,
        words=found.words,
        word_forms=_tile_forms(resources, found.words + ((normalise(word),) if word else ())),
        record_id=found.record_id,
        hash_prefix=found.hash_prefix,
    )


def _tile_forms(resources: Resources, words: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each searched word's forms as the tiles of the lexicons served whose tiles can be several letters."""
    sets = {p.tiles.fingerprint: p.tiles for p in resources.served.profiles.values() if p.tiles and p.tiles.multi}
    if not sets:
        return ()
    return tuple((word, tile_forms(word, sets.values())) for word in dict.fromkeys(words))


FilterDep = Annotated[RecordFilter, Depends(record_filter)]


class LoginIn(StrictBody):
    """A TD's name and password."""

    name: Name = Field()
    password: str = Field(max_length=MAX_PASSWORD)


async def json_object(request: Request) -> dict[str, Any]:
    """The request's body, a JSON object, for a route that checks it itself. Raises :class:`InvalidInput`."""
    try:
        data = await request.json()
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the decoder goes
        raise InvalidInput("error.body.not_json", reason=str(exc)) from None
    if not isinstance(data, dict):
        raise InvalidInput("error.body.not_an_object")
    return data
