"""The answers documented in ``/openapi.json``: most JSON success answers have a schema (the models of
wordjudge.web.answers*), and each model mirrors the bodies the server really sends (every key documented, none
dropped or changed by the model)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from pydantic import BaseModel

from wordjudge.service.settings import Settings
from wordjudge.web.answers import answer
from wordjudge.web.answers_access import DevicesAnswer, TdAccountsAnswer, WhoamiAnswer
from wordjudge.web.answers_event import LexiconAnswer, ServedEventAnswer
from wordjudge.web.answers_records import (
    AppendedAnswer,
    DocketAnswer,
    FinalVerdictAnswer,
    HeadAnswer,
    RecordAnswer,
    RecordsAnswer,
    RecordsPageAnswer,
    SummaryAnswer,
    VerificationAnswer,
)
from wordjudge.web.answers_status import HealthAnswer
from wordjudge.web.app import create_app

from .helpers import Actors

TYPED_SHARE = 0.8  # of the JSON success answers, at least


def _described(schema: dict[str, Any]) -> bool:
    """Whether a schema says something of the body: a model ($ref), properties, or an array or union of such;
    not ``{}`` nor an open ``{"type": "object"}``."""
    if "$ref" in schema or "properties" in schema:
        return True
    if schema.get("type") == "array":
        return _described(schema.get("items", {}))
    for union in ("anyOf", "oneOf", "allOf"):
        if union in schema:
            return all(_described(part) or part.get("type") == "null" for part in schema[union])
    return False


def json_success_answers(schema: dict[str, Any]) -> dict[str, bool]:
    """Each JSON 2xx answer of ``schema`` ("METHOD path status") and whether it has a schema."""
    return {
        f"{method.upper()} {path} {status}": _described(response["content"]["application/json"].get("schema", {}))
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        for status, response in operation["responses"].items()
        if status.startswith("2") and "application/json" in response.get("content", {})
    }


def test_most_json_success_answers_have_a_schema() -> None:
    answers = json_success_answers(create_app(Settings(data_dir=Path("unused"))).openapi())
    typed = [name for name, described in answers.items() if described]
    print(f"JSON success answers with a schema: {len(typed)}/{len(answers)}")
    assert len(answers) >= 37
    untyped = sorted(set(answers) - set(typed))
    assert len(typed) >= TYPED_SHARE * len(answers), untyped


def mirrors(model: type[BaseModel], body: Any) -> None:
    """``model`` documents ``body`` exactly: it reads it, and gives it back unchanged (no key left out of the
    model, none it would add, no value it would change)."""
    assert model.model_validate(body).model_dump(mode="json", exclude_unset=True) == body


def _challenge(words: str) -> dict[str, Any]:
    return {"division": "Open", "table": 12, "round": 3, "words": words, "request_id": uuid.uuid4().hex}


def test_the_record_answers_mirror_real_bodies(client: TestClient, actors: Actors) -> None:
    made = client.post("/api/challenges", json=_challenge("cat dog"), headers=actors.kiosk)
    assert made.status_code == 201
    mirrors(AppendedAnswer, made.json())
    record_id = made.json()["id"]
    recheck = client.post(
        f"/api/challenges/{record_id}/recheck", json={"request_id": uuid.uuid4().hex, "note": "n"}, headers=actors.bob
    )
    assert recheck.status_code == 201
    mirrors(AppendedAnswer, recheck.json())
    for headers in (actors.kiosk, actors.alice):  # a device's view, and the TD's (per-word results, links)
        body = client.get(f"/api/challenges/{record_id}", headers=headers).json()
        mirrors(RecordAnswer, body)
        mirrors(FinalVerdictAnswer, body["final"])
    td_view = client.get(f"/api/challenges/{record_id}", headers=actors.alice).json()
    assert {"results", "children", "final", "needs_ruling"} <= set(td_view)
    mirrors(RecordsAnswer, client.get("/api/challenges/mine", headers=actors.kiosk).json())
    mirrors(RecordsPageAnswer, client.get("/api/challenges", headers=actors.alice).json())
    mirrors(DocketAnswer, client.get(f"/api/challenges/{record_id}/docket", headers=actors.kiosk).json())
    mirrors(HeadAnswer, client.get("/api/audit/head", headers=actors.alice).json())
    mirrors(VerificationAnswer, client.get("/api/audit/verify", headers=actors.alice).json())
    mirrors(SummaryAnswer, client.get("/api/summary", headers=actors.alice).json())


def test_a_change_record_answer_mirrors_a_real_body(client: TestClient, actors: Actors) -> None:
    assert client.post("/api/devices/kiosk-2/revoke", headers=actors.alice).status_code == 200  # a change record
    page = client.get("/api/challenges", headers=actors.alice).json()
    assert [record["kind"] for record in page["records"]] == ["change"]
    mirrors(RecordsPageAnswer, page)


def test_the_event_health_and_device_answers_mirror_real_bodies(client: TestClient, actors: Actors) -> None:
    mirrors(ServedEventAnswer, client.get("/api/event", headers=actors.kiosk).json())
    lexicons = client.get("/api/lexicons", headers=actors.kiosk).json()
    assert lexicons
    for lexicon in lexicons:
        mirrors(LexiconAnswer, lexicon)
    health = client.get("/api/health")
    assert health.status_code == 200
    mirrors(HealthAnswer, health.json())
    devices = client.get("/api/devices", headers=actors.alice).json()
    assert len(devices["devices"]) == 3
    mirrors(DevicesAnswer, devices)
    mirrors(WhoamiAnswer, client.get("/api/session", headers=actors.alice).json())
    mirrors(WhoamiAnswer, client.get("/api/session", headers=actors.runner).json())
    mirrors(TdAccountsAnswer, client.get("/api/tds", headers=actors.alice).json())


def test_a_documented_answer_is_sent_as_a_plain_one() -> None:
    # The routes answer with web.answers.answer, their model documenting the body without being applied: the
    # bytes are those FastAPI sends for a plain dict (key order as built, non-ASCII as is, absent keys absent).
    body = {"z": 1, "a": None, "word": "ÉTÉ", "nested": {"b": [1.5, True], "a": "x"}}
    app = FastAPI()

    @app.get("/plain")
    def plain() -> dict[str, Any]:
        return body

    @app.get("/documented", response_model=WhoamiAnswer)
    def documented() -> JSONResponse:
        return answer(body)

    with TestClient(app) as client:
        sent, documented_sent = client.get("/plain"), client.get("/documented")
    assert documented_sent.content == sent.content
    assert documented_sent.headers["content-type"] == sent.headers["content-type"] == "application/json"
    assert list(documented_sent.json()) == ["z", "a", "word", "nested"]
