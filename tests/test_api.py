"""The JSON API: challenges, records, roles, idempotency, and the error shape on every route."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge.log.audit import AUDIT_FILE

from .helpers import (
    ERROR_KEYS,
    Actors,
    StartServer,
    assert_error_shape,
    audit_log,
    device_headers,
    run_async,
    write_event,
)


def challenge(words: str | list[str] = "qi za", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 12, "round": 3, "words": words, "request_id": uuid.uuid4().hex, **extra}


def test_submit_returns_one_verdict_after_recording_it(client: TestClient, actors: Actors) -> None:
    response = client.post("/api/challenges", json=challenge("cat, dog\nemu"), headers=actors.kiosk)
    assert response.status_code == 201
    body = response.json()
    assert body["verdict"] == "acceptable"
    assert (body["words"], body["word_count"], body["table"], body["round"]) == (["CAT", "DOG", "EMU"], 3, "12", 3)
    assert body["lexicon"] == "demo"
    assert body["fingerprint"] == "b819e7b67f8f2c80640ae76f0edbe59a4a1befb6de0f348463642ad49bdd2ad3"
    assert body["consequence"]["text"] == "Play stands: challenger loses 15 points (3 words x 5)"
    assert body["replayed"] is False
    assert "results" not in body
    head = client.get("/api/health").json()["audit"]
    assert (head["records"], head["id"], head["hash"]) == (1, body["id"], body["hash"])


def test_unacceptable_verdict_does_not_say_which_word(client: TestClient, actors: Actors) -> None:
    body = client.post("/api/challenges", json=challenge("cat qi dog"), headers=actors.kiosk).json()
    assert body["verdict"] == "unacceptable"
    assert body["consequence"]["text"] == "Play comes off: tiles back to the rack, no score for the turn"
    assert body["consequence"]["message"] == {"key": "consequence.play_off", "params": {}}
    assert set(body) == {
        "id",
        "kind",
        "parent_id",
        "created_at",
        "event",
        "division",
        "round",
        "table",
        "words",
        "word_count",
        "repeated",
        "verdict",
        "lexicon",
        "fingerprint",
        "rule",
        "consequence",
        "agrees",
        "request_id",
        "hash",
        "replayed",
        "kind_message",
        "verdict_message",
        "rule_message",
    }
    td = client.get(f"/api/challenges/{body['id']}", headers=actors.alice).json()
    assert [(r["word"], r["acceptable"], r["source"]) for r in td["results"]] == [
        ("CAT", True, "demo"),
        ("QI", False, None),
        ("DOG", True, "demo"),
    ]


def test_retry_returns_the_original_and_other_words_are_a_conflict(client: TestClient, actors: Actors) -> None:
    sent = challenge("cat dog")
    first = client.post("/api/challenges", json=sent, headers=actors.kiosk)
    again = client.post("/api/challenges", json=sent, headers=actors.kiosk)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["replayed"] is True
    assert {k: v for k, v in again.json().items() if k != "replayed"} == {
        k: v for k, v in first.json().items() if k != "replayed"
    }
    conflict = client.post("/api/challenges", json={**sent, "words": "cat emu"}, headers=actors.kiosk)
    body = assert_error_shape(conflict, 409, "conflict")
    assert "already used for a different request" in body["error"]
    assert client.get("/api/health").json()["audit"]["records"] == 1


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"words": "cat dog emu gnu yak elk ewe ram ox"}, "9 words: a challenge has 1 to 8 words"),
        ({"words": "cat x"}, "word 2 'x' has 1 letter"),
        ({"words": "cat d0g"}, "word 2 'd0g' has '0' (DIGIT ZERO)"),
        ({"division": "Expert"}, "unknown division 'Expert'"),
        ({"table": "12; DROP TABLE"}, "is not a table number"),
        ({"words": 42}, "body.words"),
        ({"request_id": "x"}, "body.request_id"),
        ({"colour": "red"}, "body.colour"),
    ],
)
def test_bad_challenges_are_422_naming_the_entry(
    client: TestClient, payload: dict[str, Any], fragment: str, actors: Actors
) -> None:
    response = client.post("/api/challenges", json={**challenge("cat dog"), **payload}, headers=actors.kiosk)
    body = assert_error_shape(response, 422, response.json()["code"])
    assert fragment in body["error"]
    assert "results" not in response.text
    assert client.get("/api/health").json()["audit"]["records"] == 0


def test_a_table_that_is_not_a_number_is_422_unless_the_event_names_its_tables(
    data_dir: Path, event_client: TestClient, actors: Actors
) -> None:
    rules = event_client.get("/api/event", headers=actors.kiosk).json()["input_rules"]
    assert (rules["tables"], rules["table_pattern"], rules["table_chars"], rules["max_table"]) == (
        "numbers",
        "[1-9][0-9]{0,3}",
        "[0-9]",
        9999,
    )
    refused = event_client.post("/api/challenges", json=challenge(table="QUIXOTRY"), headers=actors.kiosk)
    body = assert_error_shape(refused, 422, "invalid_input")
    assert (
        body["error"] == "table 'QUIXOTRY' is not a table number: the tables of Test Open are a number from 1 to 9999"
    )
    assert body["details"] == [{"field": "table", "message": "must be a number from 1 to 9999"}]
    assert event_client.post("/api/challenges", json=challenge(table="12"), headers=actors.kiosk).status_code == 201
    # The TD names the tables (as the console does): a label is then taken.
    division = [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}]
    changed = event_client.put(
        "/api/event", json={"name": "Test Open", "tables": "names", "division": division}, headers=actors.alice
    )
    assert changed.status_code == 200, changed.text
    assert 'tables = "names"' in (data_dir / "event.toml").read_text()
    named = event_client.get("/api/event", headers=actors.kiosk).json()
    assert (named["tables"], named["input_rules"]["tables"]) == ("names", "names")
    accepted = event_client.post("/api/challenges", json=challenge(table="top-2"), headers=actors.kiosk)
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["table"] == "top-2"


def test_a_challenge_without_a_round_is_422_when_the_event_has_rounds(client: TestClient, actors: Actors) -> None:
    sent = {key: value for key, value in challenge("cat dog").items() if key != "round"}
    for body in (sent, {**sent, "round": None}):
        response = client.post("/api/challenges", json=body, headers=actors.kiosk)
        error = assert_error_shape(response, 422, "invalid_input")
        assert error["error"].startswith("round is missing: the challenges of wordjudge demo event carry a round")
        assert error["details"][0]["field"] == "round"
    assert client.put("/api/event/round", json={"current_round": 4}, headers=actors.alice).status_code == 200
    error = client.post("/api/challenges", json=sent, headers=actors.runner).json()["error"]
    assert error.endswith("type the round (the current round is 4)")  # an old client is told which round
    assert client.get("/api/health").json()["audit"]["records"] == 0  # nothing recorded
    assert client.post("/api/challenges", json={**sent, "round": 4}, headers=actors.kiosk).status_code == 201


def test_devices_see_only_their_own_records_and_only_the_td_lists(client: TestClient, actors: Actors) -> None:
    mine = client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk).json()
    assert client.get(f"/api/challenges/{mine['id']}", headers=actors.kiosk).json()["verdict"] == "acceptable"
    assert "results" not in client.get(f"/api/challenges/{mine['id']}", headers=actors.kiosk).json()
    assert_error_shape(client.get(f"/api/challenges/{mine['id']}", headers=actors.kiosk2), 404, "not_found")
    assert_error_shape(client.get("/api/challenges", headers=actors.kiosk), 403, "forbidden")
    listed = client.get("/api/challenges", headers=actors.alice).json()
    assert [r["id"] for r in listed["records"]] == [mine["id"]]
    assert listed["records"][0]["actor"] == "kiosk-1"


def test_list_filters(client: TestClient, actors: Actors) -> None:
    client.post("/api/challenges", json=challenge("cat", table=1, round=1), headers=actors.kiosk)
    client.post("/api/challenges", json=challenge("qi", table=2, round=1), headers=actors.kiosk)
    client.post("/api/challenges", json=challenge("dog", table=1, round=2), headers=actors.kiosk2)

    def ids(query: str) -> list[int]:
        response = client.get(f"/api/challenges?{query}", headers=actors.alice)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["records"]]

    assert ids("table=1") == [3, 1]
    assert ids("round=1&verdict=unacceptable") == [2]
    assert ids("actor=kiosk-2") == [3]
    assert ids("limit=1") == [3]
    assert ids("before_id=3&limit=5") == [2, 1]
    assert ids("since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z") == [3, 2, 1]
    assert ids("until=2000-01-01T00:00:00Z") == []
    assert ids("kind=recheck") == []
    assert_error_shape(
        client.get("/api/challenges?since=2000-01-01T00:00:00", headers=actors.alice), 422, "invalid_input"
    )


def test_recheck_reissue_and_ruling_over_http(client: TestClient, actors: Actors) -> None:
    original = client.post("/api/challenges", json=challenge("cat dog"), headers=actors.kiosk).json()
    recheck = client.post(
        f"/api/challenges/{original['id']}/recheck", json={"request_id": "recheck-001"}, headers=actors.alice
    )
    assert recheck.status_code == 201
    assert (recheck.json()["kind"], recheck.json()["agrees"], recheck.json()["parent_id"]) == (
        "recheck",
        True,
        original["id"],
    )
    own = client.post(
        f"/api/challenges/{recheck.json()['id']}/recheck", json={"request_id": "recheck-002"}, headers=actors.alice
    )
    assert "is a recheck: re-adjudicate the challenge itself" in assert_error_shape(own, 422, "invalid_input")["error"]
    reissue = client.post(
        f"/api/challenges/{original['id']}/reissue",
        json={"words": "cats dogz", "reason": "the board shows CATS DOGZ", "request_id": "reissue-001"},
        headers=actors.bob,
    )
    assert reissue.status_code == 201, reissue.text
    assert (reissue.json()["verdict"], reissue.json()["note"]) == ("unacceptable", "the board shows CATS DOGZ")
    ruling = client.post(
        f"/api/challenges/{original['id']}/ruling",
        json={"verdict": "acceptable", "note": "TD: the slip was wrong, play stands", "request_id": "ruling-0001"},
        headers=actors.alice,
    )
    assert ruling.status_code == 201, ruling.text
    record = client.get(f"/api/challenges/{original['id']}", headers=actors.alice).json()
    assert record["children"] == [recheck.json()["id"], reissue.json()["id"], ruling.json()["id"]]
    assert record["needs_ruling"] is False
    assert client.get("/api/audit/verify", headers=actors.alice).json()["ok"] is True


def test_the_original_adjudicator_is_refused_a_recheck(client: TestClient, actors: Actors) -> None:
    original = client.post("/api/challenges", json=challenge("cat"), headers=actors.alice).json()
    response = client.post(
        f"/api/challenges/{original['id']}/recheck", json={"request_id": "recheck-001"}, headers=actors.alice
    )
    body = assert_error_shape(response, 403, "forbidden")
    assert "someone else must re-adjudicate it" in body["error"]


def test_event_and_lexicons(client: TestClient, actors: Actors) -> None:
    event = client.get("/api/event", headers=actors.runner).json()
    assert event["demo"] is True
    assert event["divisions"][0]["name"] == "Open"
    assert event["divisions"][0]["rule"] == "five-per-word"
    assert event["divisions"][0]["lexicon_view"]["shown_name"] == "DEMO"
    assert client.get("/api/lexicons", headers=actors.kiosk).json()[0]["edition"] == "matches ENABLE (172,820 words)"


@pytest.mark.usefixtures("quick_busy_timeout")  # before the app or log: its connections
@pytest.mark.sqlite_only("holds SQLite's write lock on the log file (PostgreSQL's lock: test_postgres_store)")
def test_a_locked_audit_log_gives_503_and_no_verdict(client: TestClient, data_dir: Path, actors: Actors) -> None:
    blocker = sqlite3.connect(data_dir / AUDIT_FILE, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        response = client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    body = assert_error_shape(response, 503, "audit_unavailable")
    assert "no verdict is given" in body["error"]
    assert "verdict" not in body
    assert "acceptable" not in response.text.replace("no verdict", "")
    assert client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk).status_code == 201
    alerts = client.get("/api/alerts", headers=actors.alice).json()["alerts"]
    assert [(a["kind"], a["actor"]) for a in alerts] == [("audit_unavailable", "kiosk-1")]  # the TD is told


# -- every route, every way of getting it wrong -----------------------------------------------------


def _bad_requests(actors: Actors) -> list[tuple[str, dict[str, Any] | None, dict[str, str]]]:
    return [
        ("wrong body", {"nonsense": True}, actors.kiosk),
        ("not json", None, actors.kiosk),
        ("kiosk", {}, actors.kiosk),
        ("anonymous", {}, {}),
        ("bad token", {}, {"Authorization": "Bearer wj_forged"}),
        ("not bearer", {}, {"Authorization": "Basic YWxpY2U6cHc="}),
        ("td, empty body", {}, actors.alice),
        ("td without csrf", {}, {"Cookie": actors.alice["Cookie"]}),
    ]


def _routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every API route, from the app's own OpenAPI schema (so a new route is walked too)."""
    return sorted((method.upper(), path) for path, item in app.openapi()["paths"].items() for method in item)


def test_every_route_answers_bad_requests_in_the_one_shape(app: FastAPI, actors: Actors) -> None:
    with TestClient(app, raise_server_exceptions=False) as client:
        client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk)
        routes = _routes(app)
        assert len(routes) == 41  # update when a route is added: the walk below covers it
        for method, path in routes:
            for record_id in ("1", "999999", "-1", "abc", str(2**70)):
                url = path.replace("{record_id}", record_id).replace("{name}", record_id)
                url = url.replace("{request_id}", record_id)
                url += "?seconds=0.05" if path == "/api/feed" else ""  # the feed ends after that long
                for label, body, headers in _bad_requests(actors):
                    if body is None:
                        response = client.request(
                            method, url, content=b"{not json", headers={**headers, "content-type": "application/json"}
                        )
                    else:
                        response = client.request(method, url, json=body if method == "POST" else None, headers=headers)
                    assert response.status_code < 500, (method, url, label, response.text)
                    if response.status_code >= 400:
                        assert set(response.json()) == ERROR_KEYS, (method, url, label)
                        assert "results" not in response.json()["error"]


def test_query_garbage_is_422_not_500(client: TestClient, actors: Actors) -> None:
    for query in (
        "round=0",
        "round=x",
        "limit=100000",
        "kind=nope",
        "verdict=maybe",
        "since=yesterday",
        f"before_id={2**70}",
        "needs_ruling=perhaps",
    ):
        response = client.get(f"/api/challenges?{query}", headers=actors.alice)
        assert_error_shape(response, 422, response.json()["code"])


# -- a real server ----------------------------------------------------------------------------------


@pytest.mark.live
def test_concurrent_challenges_against_a_live_server(data_dir: Path, live_server: StartServer) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    kiosks = [device_headers(data_dir, f"kiosk-{n}") for n in range(8)]
    # 600 requests at once from one address: past the per-address request rate, which is not what this tests.
    base = live_server(data_dir, "--log-level", "warning", "--max-requests-per-client", "0").base
    requests = [challenge("cat dog" if n % 3 else "cat qi", table=n % 50 + 1) for n in range(300)]

    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            semaphore = asyncio.Semaphore(32)

            async def send(body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
                async with semaphore:
                    return await http.post("/api/challenges", json=body, headers=headers)

            # every challenge sent twice, as a kiosk that lost the first response would
            jobs = [send(body, kiosks[n % 8]) for n, body in enumerate(requests)]
            jobs += [send(body, kiosks[n % 8]) for n, body in enumerate(requests)]
            return await asyncio.gather(*jobs)

    responses = run_async(run())
    assert all(r.status_code in (200, 201) for r in responses), {r.status_code for r in responses}
    first, second = responses[:300], responses[300:]
    assert [r.json()["id"] for r in first] == [r.json()["id"] for r in second]
    assert sorted(r.json()["id"] for r in first) == list(range(1, 301))
    assert sum(r.status_code == 201 for r in responses) == 300
    assert [r.json()["verdict"] for r in first] == ["acceptable" if n % 3 else "unacceptable" for n in range(300)]
    log = audit_log(data_dir)
    result = log.verify()
    log.close()
    assert result.ok, result.describe()
    assert result.records == 300
