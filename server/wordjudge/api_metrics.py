"""What a monitor's token reads (a TD may too): ``GET /metrics``, the server's metrics for Prometheus
(thin glue over :mod:`wordjudge.metrics`), and ``GET /api/audit/head``, the log's head for a witness."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse, Response

from .chain import Head
from .deps import ERROR_RESPONSES, MetricsReaderDep, ResourcesDep
from .errors import NotFound
from .metrics import CONTENT_TYPE
from .status import metrics_text

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


@router.get("/api/audit/head", tags=["audit"])
def audit_head(
    resources: ResourcesDep,
    who: MetricsReaderDep,
    at: Annotated[int | None, Query(ge=1, le=2**53, description="A record's id: its head then.")] = None,
) -> dict[str, Any]:
    """The audit log's head (or the head at record `at`), for a witness (a monitor's token) or a TD.

    A witness (`wordjudge witness`) writes it down every few seconds on another machine; `wordjudge
    audit verify --heads FILE` then checks the log against every head written.
    """
    if at is None:
        return resources.audit.head.as_dict()
    record = resources.audit.get(at)
    if record is None:
        raise NotFound("error.record.not_found", id=str(at))
    return Head(at, record.id, record.hash).as_dict()
