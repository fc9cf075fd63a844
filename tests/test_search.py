"""The console's search: a record number, a docket's QR code, a table or words, read as filters; paging with counts."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from wordjudge.base.errors import InvalidInput
from wordjudge.words.search import Search, parse_search

from .helpers import Actors, assert_error_shape, audit_log, database_of


def challenge(words: str, table: int | str = 1, round_number: int = 1) -> dict[str, Any]:
    return {"division": "Open", "table": table, "round": round_number, "words": words, "request_id": uuid.uuid4().hex}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("54", Search(record_id=54)),
        ("  #54 ", Search(record_id=54)),
        ("wordjudge:challenge:54", Search(record_id=54)),
        ("wordjudge:challenge:54:0123456789ABCDEF", Search(record_id=54, hash_prefix="0123456789abcdef")),
        ("qi", Search(words=("QI",))),
        ("QI za, jo", Search(words=("QI", "ZA", "JO"))),
        ("qi qi", Search(words=("QI",))),
        ("table 12", Search(table="12")),
        ("Table:b7 qi", Search(words=("QI",), table="b7")),
        ("t12", Search(table="12")),
        ("za T:3", Search(words=("ZA",), table="3")),
        ("", Search()),
    ],
)
def test_a_search_text_is_read_as_filters(text: str, expected: Search) -> None:
    assert parse_search(text) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("54 qi", "stands alone"),
        ("qi-za", "'qi-za' is not a word"),
        ("table", "needs a table after it"),
        ("table 12 t13", "one table at a time"),
        ("table:!!", "'!!' is not a table"),
        ("a b c d e f g h i", "at most 8 words"),
        ("x" * 201, "at most 200 characters"),
    ],
)
def test_a_search_that_is_none_of_the_forms_says_what_is_wrong(text: str, named: str) -> None:
    with pytest.raises(InvalidInput, match=named):
        parse_search(text)


def test_the_log_is_searched_by_number_qr_table_and_words_and_paged_with_counts(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    plays: list[tuple[str, int | str]] = [("qi za", 12), ("qi jo", 12), ("za", 7), ("cat qi za", 3), ("dog", 12)]
    for words, table in plays:
        assert client.post("/api/challenges", json=challenge(words, table), headers=actors.kiosk).status_code == 201

    def ids(q: str, **params: Any) -> list[int]:
        answer = client.get("/api/challenges", params={"q": q, **params}, headers=actors.alice)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["matching"] == len(body["records"])  # every match fits one page here
        return [r["id"] for r in body["records"]]

    assert ids("#2") == [2]
    assert ids("qi za") == [4, 1]  # both words, newest first
    assert ids("QI") == [4, 2, 1]
    assert ids("table 12") == [5, 2, 1]
    assert ids("table 7") == [3]
    assert ids("qi t12") == [2, 1]
    assert ids("za", table="7") == [3]
    # What the docket's QR code holds opens exactly that record; a hash that is not its own finds nothing.
    log = audit_log(data_dir)
    try:
        record_hash = log.get(4).hash  # type: ignore[union-attr]
    finally:
        log.close()
    qr_text = f"wordjudge:challenge:4:{record_hash[:16].upper()}"  # as a scanner may type it
    assert ids(qr_text) == [4]
    assert ids("wordjudge:challenge:4:" + "0" * 16) == []
    # Paging: `matching` counts every page, `older` leads to the next until the last.
    first = client.get("/api/challenges", params={"limit": 2}, headers=actors.alice).json()
    assert ([r["id"] for r in first["records"]], first["matching"], first["older"]) == ([5, 4], 5, 4)
    second = client.get("/api/challenges", params={"limit": 2, "before_id": 4}, headers=actors.alice).json()
    assert ([r["id"] for r in second["records"]], second["matching"], second["older"]) == ([3, 2], None, 2)
    last = client.get("/api/challenges", params={"limit": 2, "before_id": 2}, headers=actors.alice).json()
    assert ([r["id"] for r in last["records"]], last["older"]) == ([1], None)
    if database_of(data_dir) is not None:
        return  # PostgreSQL's planner reads a table this small whole, whatever its indexes
    # A table search uses the table index, in any case (no scan of the log).
    with sqlite3.connect(data_dir / "audit.sqlite3") as connection:
        plan = connection.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM records r WHERE r.table_label = ? COLLATE NOCASE", ("b7",)
        ).fetchall()
    assert "records_table" in str(plan)


def test_a_search_the_server_cannot_read_is_refused_in_the_one_error_shape(client: TestClient, actors: Actors) -> None:
    answer = client.get("/api/challenges", params={"q": "qi-za"}, headers=actors.alice)
    assert_error_shape(answer, 422, "invalid_input")
    assert "'qi-za' is not a word" in answer.json()["error"]
    clash = client.get("/api/challenges", params={"q": "table 3", "table": "4"}, headers=actors.alice)
    assert_error_shape(clash, 422, "invalid_input")
    assert "choose one" in clash.json()["error"]


def test_named_tables_are_found_in_any_case(event_client: TestClient, actors: Actors) -> None:
    division = [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}]
    named = {"name": "Test Open", "tables": "names", "division": division}
    assert event_client.put("/api/event", json=named, headers=actors.alice).status_code == 200
    made = event_client.post(
        "/api/challenges", json={**challenge("za", "B7"), "division": "Open"}, headers=actors.kiosk
    )
    assert made.status_code == 201, made.text
    found = event_client.get("/api/challenges", params={"q": "table b7"}, headers=actors.alice).json()
    assert [r["id"] for r in found["records"]] == [made.json()["id"]]


def test_a_bare_number_is_not_taken_for_a_time(client: TestClient, actors: Actors) -> None:
    # Schemathesis found it: pydantic read since=171325 as seconds after 1970 and answered 200.
    answer = client.get("/api/summary?since=&since=72788853&since=171325", headers=actors.alice)
    assert "an ISO time such as" in assert_error_shape(answer, 422, "invalid_request")["error"]
    assert client.get("/api/challenges?since=2026-11-21T09:00:00Z", headers=actors.alice).status_code == 200
