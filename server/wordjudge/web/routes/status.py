"""The server's state: ``GET /api/health`` (anyone: whether it can do its job); what a monitor's token reads (a
TD may too): ``GET /metrics``, the server's metrics for Prometheus (thin glue over :mod:`wordjudge.base.metrics`), and
``GET /api/audit/head``, the log's head for a witness; ``GET /api/audit/verify``, the whole log checked (TD); and
``POST /api/clock/accept-correction``, the TD's acceptance of the clock's correction (record times held)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from wordjudge.base.errors import Conflict, Message, NotFound
from wordjudge.base.metrics import CONTENT_TYPE
from wordjudge.log.chain import Head, HeadMark
from wordjudge.model.auth import Principal
from wordjudge.service.status import health_report, metrics_text
from wordjudge.tournament.clock_correction import accept_correction, correction_said
from wordjudge.web.answers import MessageAnswer, Shape, answer
from wordjudge.web.answers_records import HeadAnswer, VerificationAnswer
from wordjudge.web.answers_status import HealthAnswer
from wordjudge.web.deps import ERROR_RESPONSES, MetricsReaderDep, ResourcesDep, ServingDep, td_only

router = APIRouter(responses=ERROR_RESPONSES)


@router.get(
    "/metrics",
    tags=["status"],
    response_class=PlainTextResponse,
    responses={200: {"description": "Prometheus text format 0.0.4.", "content": {"text/plain": {}}}},
)
async def metrics(resources: ResourcesDep, who: MetricsReaderDep) -> Response:
    """The metrics in Prometheus' text format, for a monitor's token (`wordjudge device add --role monitor`) or a TD.

    Adjudications by kind, division and verdict (records appended, not retries), their latency,
    rate-limit refusals, devices online by role, the audit log's records, commits, failures and
    queue, the lexicons served (name and fingerprint), health, free disk space.
    """
    text = await run_in_threadpool(metrics_text, resources)  # reads the device list from SQLite
    return Response(text, media_type=CONTENT_TYPE)


@router.get("/api/audit/head", tags=["audit"], response_model=HeadAnswer)
def audit_head(
    resources: ResourcesDep,
    who: MetricsReaderDep,
    at: Annotated[int | None, Query(ge=1, le=2**53, description="A record's id: its head then.")] = None,
) -> JSONResponse:
    """The audit log's head (or the head at record `at`), for a witness (a monitor's token) or a TD.

    A witness (`wordjudge witness`) writes it down every few seconds on another machine; `wordjudge
    audit verify --heads FILE` then checks the log against every head written.
    """
    if at is None:
        return answer(resources.audit.head.as_dict())
    record = resources.audit.get(at)
    if record is None:
        raise NotFound("error.record.not_found", id=str(at))
    return answer(Head(at, record.id, record.hash).as_dict())


@router.get(
    "/api/health",
    tags=["status"],
    response_model=HealthAnswer,
    responses={
        200: {"description": "The server is ok (`state`: ok)."},
        503: {
            "description": "Degraded (`state`: degraded): the same report, `reasons` says why.",
            "model": HealthAnswer,
        },
    },
)
async def health(serving: ServingDep) -> JSONResponse:
    """Whether the server can do its job: 200 and `state` ok, or 503 and `state` degraded with its `reasons`
    (`status` is the HTTP code, as in an error body).

    Degraded: the audit log's last write failed or its writer stopped, or a lexicon's compiled
    file is no longer the one verified at start. Also: the event, each lexicon (name,
    fingerprint, edition, DEMO, `unverified` claims, when verified, `on_disk`), the audit log (head,
    commits, failures, writable, queue depth) and the data dir's free space. `warnings`: low disk
    space, a lexicon named like an edition it is not (forced in by the TD), an event file edited by hand
    that is not served (it does not load: the server keeps the event it had), the server's clock stepped or read
    before the log's last record (record times held), or another clock of the hall beyond 2 s. `hall`: this
    server's role in its hall (active, standby, fenced, waiting or split), its epoch, the active server and every
    server of the event; a server that is not active answers 503 with that `state` and the reason, and no more
    but its `clock`. `clock`: this server's time, the tolerance, how long record times are held yet, the last
    step, and the database's and the hall's other servers' clocks against this one (`offset_s`, `within_s`).
    """
    resources = serving.resources
    if resources is None:
        return JSONResponse(serving.health_body(), status_code=503)
    report = health_report(resources, serving)
    return JSONResponse(report.body, status_code=200 if report.ok else 503)


@router.get("/api/audit/verify", tags=["audit"], response_model=VerificationAnswer)
def verify_audit(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.verify_log")],
    head: Annotated[list[str] | None, Query(description="Heads shown elsewhere (ID:HEX), e.g. a docket's.")] = None,
) -> JSONResponse:
    """Check the whole log: its hash chain, each record's consistency, and each head given (TD only).

    Names the first bad record.
    """
    marks = [HeadMark.parse(text, "head") for text in head or []]
    return answer(resources.audit.verify(marks).as_dict())


class ClockCorrectionAnswer(Shape):
    """The TD's acceptance of the clock's correction, on record: from what time (``held``) to what time."""

    id: int
    held: str
    time: str
    message: MessageAnswer


@router.post("/api/clock/accept-correction", tags=["status"], response_model=ClockCorrectionAnswer)
def accept_clock_correction(
    serving: ServingDep,
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.accept_clock")],
) -> JSONResponse:
    """Accept the clock's correction (TD): record times held at the log's last record's, ahead of the clock (it
    was set back), follow the clock again. A change record says from what time to what time; health's `clock`
    says `must_accept` while the hold is beyond `hold_bound_s`.

    409 if record times are not held (nothing written).
    """
    outcome = accept_correction(resources.audit, server=serving.clock.server, actor=who.actor, channel=who.channel)
    if isinstance(outcome, Message):
        raise Conflict(outcome)
    serving.clock.corrected()
    change = outcome.change or {}
    held, now = (change.get("before") or {}).get("time", ""), (change.get("after") or {}).get("time", "")
    return answer({"id": outcome.id, "held": held, "time": now, "message": correction_said(outcome).as_dict()})
