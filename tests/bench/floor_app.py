"""The stripped app that ``tests.bench.bench_floor`` measures: ``python -m tests.bench.floor_app DATA_DIR PORT``."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from wordjudge.log.audit import AuditLog
from wordjudge.model.records import Entry, Kind, Verdict
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.bodies import ChallengeIn

_ANSWER = {"id": 1, "verdict": "acceptable", "words": ["CAT", "QI"], "word_count": 2}


def build(data_dir: Path) -> FastAPI:
    """Three routes, each one layer more of what a challenge does; see tests/bench/bench_floor.py."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, AuditLog]]:
        audit = AuditLog(StateLocation(data_dir))
        audit.start()
        try:
            yield {"audit": audit}
        finally:
            audit.close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/bare")
    async def bare() -> JSONResponse:
        return JSONResponse(_ANSWER)

    @app.post("/parse", status_code=201)
    async def parse(body: ChallengeIn) -> JSONResponse:
        return JSONResponse(_ANSWER, status_code=201)

    @app.post("/log", status_code=201)
    async def log(body: ChallengeIn, request: Request) -> JSONResponse:
        audit: AuditLog = request.state.audit
        appended = await audit.append(
            Entry(
                kind=Kind.CHALLENGE,
                parent_id=None,
                event="Floor",
                division=body.division,
                round=body.round,
                table=str(body.table),
                actor="floor",
                channel="kiosk",
                words_typed=("cat", "qi"),
                words=("CAT", "QI"),
                lexicon="demo",
                fingerprint="0" * 64,
                verdict=Verdict.ACCEPTABLE,
                results=({"word": "CAT", "acceptable": True}, {"word": "QI", "acceptable": True}),
                rule="single",
                consequence={"text": "Play stands"},
                request_id=body.request_id,
            )
        )
        return JSONResponse({**_ANSWER, "id": appended.record.id}, status_code=201)

    return app


if __name__ == "__main__":
    uvicorn.run(build(Path(sys.argv[1])), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
