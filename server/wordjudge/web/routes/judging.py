"""The JSON API under ``/api/``: thin glue from HTTP to the adjudication service and the audit log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from wordjudge.base.errors import NotFound
from wordjudge.judging.docket import docket_view
from wordjudge.judging.final_verdict import FinalVerdict, final_verdict, final_verdicts
from wordjudge.judging.record_views import record_view
from wordjudge.model.auth import Principal
from wordjudge.model.input_rules import RequestId
from wordjudge.model.records import RecordFilter, Verdict
from wordjudge.web.answers import answer
from wordjudge.web.answers_records import (
    AppendedAnswer,
    DocketAnswer,
    RecordAnswer,
    RecordsAnswer,
    RecordsPageAnswer,
    appended_response,
)
from wordjudge.web.bodies import ChallengeIn, RecheckIn, ReissueIn, RulingIn
from wordjudge.web.deps import ERROR_RESPONSES, FilterDep, PrincipalDep, ResourcesDep, td_only

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)

_RecordId = Annotated[int, Path(ge=1, le=2**53, description="The record's id.")]
# A retry with a request_id already recorded answers 200 with that record (and "replayed": true), not 201.
_REPLAYED: dict[int | str, dict[str, Any]] = {
    200: {"description": "A retry: the record that request_id made", "model": AppendedAnswer}
}


@router.post("/challenges", status_code=201, tags=["challenges"], response_model=AppendedAnswer, responses=_REPLAYED)
async def submit_challenge(body: ChallengeIn, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """Adjudicate a challenge: one verdict for all its words, returned once its record is committed.

    Kiosks and runners' handhelds are limited to the event's `challenges_per_minute` (429 beyond it).
    A retry with the same `request_id` returns the original record (status 200, `replayed`);
    the same id for different words is a 409.
    """
    appended = await resources.challenges.adjudicate(
        who,
        division=body.division,
        table=body.table,
        round_number=body.round,
        words=body.words,
        request_id=body.request_id,
    )
    return appended_response(appended.record, appended.replayed, who)


@router.get("/challenges", tags=["challenges"], response_model=RecordsPageAnswer)
def list_challenges(
    resources: ResourcesDep,
    who: Annotated[Principal, td_only("error.td_only.list_log")],
    where: FilterDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before_id: Annotated[int | None, Query(ge=1, le=2**53)] = None,
) -> JSONResponse:
    """The audit log's records, newest first, filtered, at most `limit`; older pages with `before_id` (TD only).

    `matching` counts every record the filters match (all pages), on the first page only (null on older
    pages: the count is the same, and costs a scan of the matches); `older` is the `before_id` of the next
    page, or null on the last one. `q` is the console's search box (a record number, a docket's QR code, a
    table or words)."""
    records = resources.audit.find(where, limit=limit + 1, before_id=before_id)
    page = records[:limit]
    finals = final_verdicts(resources.audit, page)
    return answer(
        {
            "records": [_with_final(record_view(r, who), finals.get(r.id)) for r in page],
            "matching": resources.audit.count(where) if before_id is None else None,
            "older": page[-1].id if len(records) > limit else None,
            "head": resources.audit.head.as_dict(),
        }
    )


@router.get("/challenges/requests/{request_id}", tags=["challenges"], response_model=RecordAnswer)
async def settle_request(
    request_id: Annotated[RequestId, Path()],
    resources: ResourcesDep,
    who: PrincipalDep,
) -> JSONResponse:
    """What became of a request this caller sent and got no clear answer to: its record, or 404 (never recorded).

    Answered once every request that reached the server before this one is written or refused, so a
    404 means the request was not recorded and never will be (unless it is sent again).
    """
    record = await resources.audit.settled(who.actor, request_id)
    if record is None:
        raise NotFound("error.request.not_recorded", request_id=request_id, actor=who.actor)
    return answer(record_view(record, who))


@router.get("/challenges/mine", tags=["challenges"], response_model=RecordsAnswer)
def my_challenges(
    resources: ResourcesDep, who: PrincipalDep, limit: Annotated[int, Query(ge=1, le=100)] = 10
) -> JSONResponse:
    """The caller's own latest records, newest first: verdicts only for a device (a runner's recent list), each
    challenge with its `final` verdict after re-checks, reissues and rulings (as in GET /api/challenges)."""
    records = resources.audit.find(RecordFilter(actor=who.actor), limit=limit)
    finals = final_verdicts(resources.audit, records)
    return answer({"records": [_with_final(record_view(r, who), finals.get(r.id)) for r in records]})


@router.get("/challenges/{record_id}", tags=["challenges"], response_model=RecordAnswer)
def read_challenge(record_id: _RecordId, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """One record: its verdict for the device that submitted it; everything, with links, for the TD."""
    record = resources.challenges.adjudicator.get_record(record_id)
    who.require_may_see(record)
    final = final_verdict(resources.audit, record.id) if record.verdict is not None else None  # a change: none
    return answer(_with_final(record_view(record, who, resources.audit), final))


def _with_final(view: dict[str, Any], final: FinalVerdict | None) -> dict[str, Any]:
    """A record's view with the final verdict of its challenge (after re-checks, reissues and rulings), if known:
    `final.verdict` (null while a re-check awaits the TD's ruling), `final.decided_by` (kind, id, actor) and
    `final.linked` (each linked record's kind and verdict), and `needs_ruling`: whether it awaits the TD's ruling.
    Never per-word results."""
    if final is None:
        return view
    return view | {"final": final.as_dict(), "needs_ruling": final.awaiting_ruling is not None}


@router.get("/challenges/{record_id}/docket", tags=["challenges"], response_model=DocketAnswer)
def docket(record_id: _RecordId, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """What a printed docket shows of a record: its words and verdict, never per-word results; the final verdict
    after its re-checks, reissues and rulings; its place in the chain; a QR code of its id."""
    record = resources.challenges.adjudicator.get_record(record_id)
    who.require_may_see(record)
    final = final_verdict(resources.audit, record.id)
    view = docket_view(record, resources.served.lexicon_views.get(record.lexicon), resources.audit.head, final)
    return answer(view)


@router.post(
    "/challenges/{record_id}/recheck",
    status_code=201,
    tags=["challenges"],
    response_model=AppendedAnswer,
    responses=_REPLAYED,
)
async def recheck(record_id: _RecordId, body: RecheckIn, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """Re-adjudicate the same words; someone other than the original adjudicator must do it (WESPA 3.10.10)."""
    entry = resources.challenges.adjudicator.recheck(who, record_id, request_id=body.request_id, note=body.note)
    appended = await resources.challenges.record(entry)
    return appended_response(appended.record, appended.replayed, who)


@router.post(
    "/challenges/{record_id}/reissue",
    status_code=201,
    tags=["challenges"],
    response_model=AppendedAnswer,
    responses=_REPLAYED,
)
async def reissue(record_id: _RecordId, body: ReissueIn, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """Adjudicate corrected words for a slip that did not match the board, with the reason (WESPA 3.10.11)."""
    entry = resources.challenges.adjudicator.reissue(
        who, record_id, words=body.words, reason=body.reason, request_id=body.request_id
    )
    appended = await resources.challenges.record(entry)
    return appended_response(appended.record, appended.replayed, who)


@router.post(
    "/challenges/{record_id}/ruling",
    status_code=201,
    tags=["challenges"],
    response_model=AppendedAnswer,
    responses=_REPLAYED,
)
async def ruling(record_id: _RecordId, body: RulingIn, resources: ResourcesDep, who: PrincipalDep) -> JSONResponse:
    """Record the TD's final ruling on a challenge, with a note."""
    entry = resources.challenges.adjudicator.ruling(
        who, record_id, verdict=Verdict(body.verdict), note=body.note, request_id=body.request_id
    )
    appended = await resources.challenges.record(entry)
    return appended_response(appended.record, appended.replayed, who)
