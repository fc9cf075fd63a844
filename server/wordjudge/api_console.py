"""The TD console's API under ``/api/``: live feed, export, summary, TD accounts and event settings (TD only)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from fastapi.sse import EventSourceResponse, format_sse_event

from .adjudication import record_view
from .auth import Principal
from .deps import ERROR_RESPONSES, FilterDep, LoginIn, ResourcesDep, json_object, td_only
from .errors import InvalidInput
from .event import Event, EventSettings, RoundSetting, known_lexicons, parse_event_change
from .event_changes import event_changes, put_on_record, require_confirmed, td_added, td_disabled, weigh
from .export import ExportFormat, chunks
from .final_verdict import corrections, final_verdicts, finals_of_linked
from .profile import Catalog
from .records import RecordFilter
from .resources import Resources
from .summary import TOP_WORDS, from_tallies, summarise

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)

FEED_POLL_SECONDS = 0.5
_EVENT_ID = re.compile(r"[0-9]{1,16}")
_FEED_KEEPALIVE_SECONDS = 15.0
_EXPORT_MEDIA = {ExportFormat.CSV: "text/csv", ExportFormat.JSONL: "application/x-ndjson"}
# What the two non-JSON routes answer, for the OpenAPI schema (their errors are JSON, as everywhere).
_TEXT: dict[str, Any] = {"schema": {"type": "string"}}
_FEED_DOC: dict[int | str, dict[str, Any]] = {
    200: {"description": "Server-sent events", "content": {"text/event-stream": _TEXT}}
}
_EXPORT_DOC: dict[int | str, dict[str, Any]] = {
    200: {"description": "CSV or JSON Lines", "content": {media: _TEXT for media in _EXPORT_MEDIA.values()}}
}


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with each ``$ref`` to its ``$defs`` replaced by the definition itself."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {key: _inline(value, defs) for key, value in schema.items() if key != "$defs"}
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    return schema


# PUT /api/event's body is the event file's own schema (EventSettings), checked by parse_event, which
# words each refusal for the TD as for the file; documented here since the route reads the JSON itself.
_EVENT_SCHEMA = EventSettings.model_json_schema()
del _EVENT_SCHEMA["properties"]["current_round"]  # one way to set it: PUT /api/event/round
_EVENT_SCHEMA["properties"]["confirm"] = {
    "type": "boolean",
    "default": False,
    "description": "true: make the changes that need the TD's confirmation (a division's lexicon or rule, or its "
    "removal, once it has a challenge on record); without it they are refused (409)",
}
_EVENT_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": _inline(_EVENT_SCHEMA, _EVENT_SCHEMA.get("$defs", {}))}},
    }
}


@router.get("/feed", tags=["console"], response_class=Response, responses=_FEED_DOC)
async def feed(
    request: Request,
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.follow_feed")],
    where: FilterDep,
    seconds: Annotated[float | None, Query(gt=0, le=86400, description="Stop after this long (scripts).")] = None,
    after_id: Annotated[
        int | None, Query(ge=0, le=2**53, description="Start after this record (the list's `head.id`).")
    ] = None,
) -> StreamingResponse:
    """Server-sent events: each new record matching the filters, as the TD sees it (TD only), a challenge with
    its `final` verdict as in GET /api/challenges (`record` events, with the record's id); and, when a re-check,
    reissue or ruling is written (whatever the filters), its challenge's final verdict as it is now (`final`
    events: `final.challenge_id` names the challenge whose row to update).

    Starts after `Last-Event-ID` when the browser reconnects, else after `after_id` (the head of the list the
    console just read: nothing written between the two is missed), else after the newest record.
    """
    # A browser sends back the last id it got; anything else (not ASCII digits, or absurdly long) is ignored.
    last_id = request.headers.get("last-event-id", "")
    if _EVENT_ID.fullmatch(last_id):
        after = int(last_id)
    else:
        after = after_id if after_id is not None else (resources.audit.head.id or 0)
    audit = resources.audit

    def newer(after_id: int) -> tuple[list[bytes], int]:
        """The events of the records written after ``after_id``, and the last id they cover."""
        fresh = list(audit.iterate(RecordFilter(), after_id=after_id))  # half a second of records: a few
        if not fresh:
            return [], after_id
        last = fresh[-1].id
        matching = [record for record in audit.iterate(where, after_id=after_id) if record.id <= last]
        finals = final_verdicts(audit, matching)
        events = []
        for record in matching:
            view = record_view(record, who, audit)
            if record.id in finals:
                view["final"] = finals[record.id].as_dict()
                view["needs_ruling"] = finals[record.id].awaiting_ruling is not None
            events.append(format_sse_event(id=str(record.id), event="record", data_str=_json(view)))
        for final in finals_of_linked(audit, fresh):
            events.append(format_sse_event(event="final", data_str=_json(final.as_dict())))
        return events, last

    async def events() -> AsyncIterator[bytes]:
        nonlocal after
        yield format_sse_event(retry=2000)
        quiet = 0.0
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while not await request.is_disconnected():
            if deadline is not None and loop.time() >= deadline:
                return
            if (audit.head.id or 0) > after:
                found, after = await run_in_threadpool(newer, after)
                for event in found:
                    yield event
                quiet = 0.0
            pause = FEED_POLL_SECONDS if deadline is None else min(FEED_POLL_SECONDS, max(0.0, deadline - loop.time()))
            await asyncio.sleep(pause)  # never past the end the caller asked for
            quiet += pause
            if quiet >= _FEED_KEEPALIVE_SECONDS:  # keeps proxies and the browser from timing out
                yield format_sse_event(comment="keep-alive")
                quiet = 0.0

    return EventSourceResponse(events(), headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)


@router.get("/export", tags=["console"], response_class=Response, responses=_EXPORT_DOC)
def export_records(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.export")],
    where: FilterDep,
    format: Annotated[ExportFormat, Query(description="csv or jsonl")] = ExportFormat.CSV,
) -> Response:
    """The records matching the filters, every field (per-word results included), as CSV or JSON Lines (TD)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    media = _EXPORT_MEDIA[format]
    # Streamed as it is read (in a worker thread, a piece at a time): constant memory at any size.
    return StreamingResponse(
        chunks(resources.audit.iterate(where), format),
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="wordjudge-{stamp}.{format.value}"'},
    )


@router.get("/summary", tags=["console"])
def summary(
    resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.summary")], where: FilterDep
) -> dict[str, Any]:
    """The event's challenges per division and round with their final verdicts (after re-checks, reissues and
    rulings), the share acceptable, the most challenged words (TD).

    `acceptable` and `unacceptable` count final verdicts; `awaiting_ruling` the challenges a re-check disagreed
    with and the TD has not ruled on; `overturned` those whose final verdict is not the first one;
    `acceptable_share` is of the challenges decided. Unfiltered, or by division (and round), it reads counts
    kept as the log is written, corrected by the few families with a ruling, reissue or disagreeing re-check;
    other filters are summarised from the matching records.
    """
    event = resources.served.event.name
    changed = corrections(resources.audit, event)
    if where == RecordFilter(division=where.division, round=where.round) and (where.round is None or where.division):
        counts, words = resources.audit.tallies(event, TOP_WORDS)  # kept with the log: a few rows at any size
        return from_tallies(counts, words, changed.values(), where.division, where.round)
    return summarise(resources.audit.iterate(replace(where, event=event)), changed)


@router.get("/tds", tags=["console"])
def tds(resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.see_tds")]) -> dict[str, Any]:
    """The TD accounts (TD)."""
    return {"tds": [vars(account) for account in resources.access.tds.all()]}


@router.post("/tds", status_code=201, tags=["console"])
async def add_td(
    body: LoginIn, resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.add_tds")]
) -> dict[str, Any]:
    """Add a TD or deputy account (TD), put on record first (a `change` record `td.added`; 503 if it cannot be)."""

    def put_on_record_first(name: str) -> None:
        put_on_record(
            resources.audit, [td_added(name, by=who.actor)], actor=who.actor, event=resources.served.event.name
        )

    account = await run_in_threadpool(
        resources.access.tds.add, body.name, body.password, by=who.actor, before_commit=put_on_record_first
    )
    return vars(account)


@router.post("/tds/{name}/disable", tags=["console"])
def disable_td(
    name: Annotated[str, Path(max_length=40)],
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.disable_tds")],
) -> dict[str, Any]:
    """Disable a TD account and end its sessions (TD; not one's own), put on record first (a `change` record
    `td.disabled`; 503 if it cannot be)."""
    who.require_not_own_account(name)
    was = {account.name: account for account in resources.access.tds.all()}

    def put_on_record_first(found: str) -> None:
        change = td_disabled(found, was_disabled=found in was and was[found].disabled_at is not None)
        put_on_record(resources.audit, [change], actor=who.actor, event=resources.served.event.name)

    resources.access.tds.disable(name, before_commit=put_on_record_first)
    return {"ok": True, "name": name.strip()}


@router.put("/event", tags=["console"], openapi_extra=_EVENT_BODY)
def replace_event(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.change_event")],
    body: Annotated[dict[str, Any], Depends(json_object)],
) -> dict[str, Any]:
    """Change the event: name, divisions with their lexicon and rule, rate limit, kiosk result time (TD).

    Each change is written to the audit log as a `change` record (the TD, what changed, before and after),
    committed before the change is served; if it cannot be written, nothing changes (503). A division's
    lexicon or rule changed, or the division removed, once that division has a challenge on record, is
    refused (409, `error.event.confirm`, the changes in `details` as POST /api/event/preview lists them)
    unless `confirm` is true (WESPA 3.10.14(a): an announced penalty may not be changed). Then written to
    the event file and served at once; a lexicon that cannot be opened refuses the change. The body has the
    event file's keys (`division`: a list of name, lexicon, rule) but the current round, which stays as it
    is (PUT /api/event/round sets it). Lexicon names are matched to the compiled ones whatever their case.
    """
    confirmed = _confirmed(body)
    event = _asked_for(resources, body)
    devices = resources.access.devices.all()

    def put_on_record_first(served: Event, asked: Event) -> None:
        weighed = weigh(event_changes(served, asked), resources.audit, devices, event=served.name)
        require_confirmed(weighed, confirmed)
        put_on_record(resources.audit, [item.change for item in weighed], actor=who.actor, event=asked.name)

    resources.served.replace_event(event, before_serving=put_on_record_first)
    return resources.served.event.as_dict()


@router.post("/event/preview", tags=["console"], openapi_extra=_EVENT_BODY)
def preview_event(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.change_event")],
    body: Annotated[dict[str, Any], Depends(json_object)],
) -> dict[str, Any]:
    """What PUT /api/event with this body would change, changing nothing (TD): each change (`what`, `subject`,
    `division`, `before`, `after`, `message`), with the kiosks and handhelds serving its division
    (`devices`: not revoked, enrolled for it or for every division), its challenges on record, and whether
    it `needs_confirmation`. Refused as PUT /api/event refuses a body (422)."""
    _confirmed(body)
    event = _asked_for(resources, body)
    served = resources.served.event
    weighed = weigh(event_changes(served, event), resources.audit, resources.access.devices.all(), event=served.name)
    return {
        "changes": [item.as_dict() for item in weighed],
        "needs_confirmation": any(item.needs_confirmation for item in weighed),
    }


def _confirmed(body: dict[str, Any]) -> bool:
    """The body's `confirm` (taken out of it: the rest is the event). Raises :class:`InvalidInput` unless a boolean."""
    confirmed = body.pop("confirm", False)
    if not isinstance(confirmed, bool):
        raise InvalidInput(
            "error.event.confirm_not_bool", details=[{"field": "confirm", "message": "must be true or false"}]
        )
    return confirmed


def _asked_for(resources: Resources, body: dict[str, Any]) -> Event:
    lexicons = known_lexicons(resources.settings.data_dir)
    return parse_event_change(body, resources.served.event.current_round, lexicons=lexicons)


@router.put("/event/round", tags=["console"])
def set_current_round(
    body: RoundSetting, resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.set_round")]
) -> dict[str, Any]:
    """Set the round under way (TD): every kiosk and handheld pre-fills it in a new challenge (null: none).

    Written to the event file's `current_round` line and served at once. Refused (422) when the event has
    no rounds, or when the event file holds a hand edit that does not load.
    """
    return resources.served.set_current_round(body.current_round, who.actor).as_dict()


@router.get("/lexicons/available", tags=["console"])
def available_lexicons(
    resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.see_lexicons")]
) -> dict[str, Any]:
    """The compiled lexicons and profiles in the data dir that a division may use (TD)."""
    return {"names": Catalog(resources.settings.data_dir).names(), "served": list(resources.served.lexicon_views)}
