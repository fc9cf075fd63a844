"""The hall's proofs over HTTP (thin glue over :mod:`wordjudge.hall.proof` and :mod:`wordjudge.hall.peers`):
``GET /api/hall/claim``, a server's signed claim for a peer; ``GET /api/hall/proof``, a server's proof to a device
or a console that it is the hall's, before either sends it anything."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from wordjudge.base.errors import NotActive
from wordjudge.hall.proof import check_hint, check_nonce, proof_mac
from wordjudge.web.answers import answer
from wordjudge.web.answers_status import ClaimAnswer, ProofAnswer
from wordjudge.web.deps import ERROR_RESPONSES, ServingDep

router = APIRouter(prefix="/api/hall", responses=ERROR_RESPONSES, tags=["hall"])

_NONCE = Query(description="32 to 64 lower-case hex digits, fresh for each ask: the answer is signed over it.")


@router.get("/claim", response_model=ClaimAnswer)
def hall_claim(serving: ServingDep, nonce: Annotated[str, _NONCE]) -> JSONResponse:
    """This server's claim for a peer of its hall: its address, role, epoch, the active server, its time, the
    lexicons it serves (active) or could not serve (standby), over `nonce`, signed with the hall key (`mac`;
    null without one). Anyone may ask: it proves something only to a server holding the hall key."""
    return answer(serving.claim(check_nonce(nonce)))


@router.get("/proof", response_model=ProofAnswer)
def hall_proof(
    serving: ServingDep,
    nonce: Annotated[str, _NONCE],
    hint: Annotated[str, Query(description="The first 16 hex digits of the SHA-256 of the asker's secret.")],
    of: Annotated[Literal["device", "session"], Query(description="A device's token, or a console's session.")],
) -> JSONResponse:
    """This server's proof, to a device (`of=device`) or a console (`of=session`), that it is the hall's active
    server: `mac` over `nonce`, its address, role and epoch, keyed with the asker's proof key (handed to it at
    pairing or sign-in, and by `GET /api/session`). Only the active server answers (a standby: 503 `not_active`).
    A hint that names nobody, or a revoked device or an ended session, is answered alike, with a MAC no proof key
    checks: the answer tells nobody whether a hint is live."""
    check_nonce(nonce)
    check_hint(hint)
    resources = serving.resources
    if resources is None:
        raise serving.refusal()
    key = serving.key
    if key is None:
        raise NotActive("error.hall.no_key", recorded=serving.recorded_key or "?")
    access = resources.access
    found = access.devices.proof_digest(hint) if of == "device" else access.tds.proof_digest(hint)
    proof_key = key.proof_key(of, found) if found is not None else key.decoy_key(of, hint)
    view = serving.view()
    said = {"url": serving.own_url, "role": view["role"], "epoch": view["epoch"]}
    return answer({**said, "mac": proof_mac(proof_key, nonce=nonce, **said)})
