"""The TD console's API under ``/api/``: live feed, export and summary of the records (TD only); the event's settings
are :mod:`wordjudge.web.routes.event`'s, TD accounts :mod:`wordjudge.web.routes.access`'s."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from fastapi.sse import EventSourceResponse, format_sse_event

from wordjudge.judging.export import ExportFormat, chunks
from wordjudge.judging.final_verdict import (
    correction_sums,
    corrections,
    final_verdicts,
    finals_of_linked,
    linked_families,
)
from wordjudge.judging.record_views import record_view
from wordjudge.judging.summary import TOP_WORDS, from_tallies, summarise
from wordjudge.model.auth import Principal
from wordjudge.model.records import RecordFilter
from wordjudge.web.answers import answer
from wordjudge.web.answers_access import AlertAnswer
from wordjudge.web.answers_records import SummaryAnswer
from wordjudge.web.deps import ERROR_RESPONSES, FilterDep, ResourcesDep, td_only

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


@router.post("/alerts/{alert_id}/acknowledge", tags=["console"], response_model=AlertAnswer)
def acknowledge_alert(
    alert_id: Annotated[int, Path(ge=1, le=2**53)],
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.see_alerts")],
) -> Response:
    """The TD has seen an alert: it leaves GET /api/alerts (kept on record); if it happens again, it is listed
    again (TD). Answers the alert; 404 if there is no such alert."""
    return answer(asdict(resources.access.alerts.acknowledge(alert_id, by=who.actor)))


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
        # Each challenge's row with its final verdict: the log's linked records, read once (few).
        chunks(
            resources.audit.iterate(where),
            format,
            families=linked_families(resources.audit),
            split_of=lambda name: profile.split if (profile := resources.served.profiles.get(name)) else None,
        ),
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="wordjudge-{stamp}.{format.value}"'},
    )


@router.get("/summary", tags=["console"], response_model=SummaryAnswer)
def summary(
    resources: ResourcesDep, who: Annotated[Principal, td_only("error.td_only.summary")], where: FilterDep
) -> Response:
    """The event's challenges per division and round with their final verdicts (after re-checks, reissues and
    rulings), the share acceptable, the most challenged words (TD).

    `acceptable` and `unacceptable` count final verdicts; `awaiting_ruling` the challenges a re-check disagreed
    with and the TD has not ruled on; `overturned` those whose final verdict is not the first one;
    `acceptable_share` is of the challenges decided. Unfiltered, or by division (and round), it reads counts
    kept as the log is written, corrected by the few families with a ruling, reissue or disagreeing re-check;
    other filters are summarised from the matching records.
    """
    event = resources.served.event.name
    if where == RecordFilter(division=where.division, round=where.round) and (where.round is None or where.division):
        counts, words = resources.audit.tallies(event, TOP_WORDS)  # kept with the log: a few rows at any size
        corrected = correction_sums(resources.audit, event)
        return answer(from_tallies(counts, words, corrected, where.division, where.round))
    return answer(summarise(resources.audit.iterate(replace(where, event=event)), corrections(resources.audit, event)))
