"""A TD's changes on the record: change records in the audit log's chain, and the deliberate event API."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from wordjudge.base.errors import AuditUnavailable
from wordjudge.judging.record_views import record_line
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.model.auth import Role
from wordjudge.model.records import Kind, Verdict, from_body, record_body, record_hash
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.changes import Change, change_entry, describe
from wordjudge.tournament.event_loading import load_event

from .helpers import Actors, assert_error_shape, device_headers
from .test_audit import entry, fill
from .test_chain import rewrite

OPEN = {"name": "Test Open", "division": [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}]}


def _event(rule: str = "five-per-word", **more: Any) -> dict[str, Any]:
    return {**OPEN, "division": [{"name": "Open", "lexicon": "demo", "rule": rule}], **more}


def _challenge(client: TestClient, headers: dict[str, str]) -> None:
    body = {"words": ["cat"], "division": "Open", "table": "1", "round": 1, "request_id": f"req-{id(headers)}-x"}
    assert client.post("/api/challenges", json=body, headers=headers).status_code == 201


def _changes(client: TestClient, actors: Actors) -> list[dict[str, Any]]:
    listed = client.get("/api/challenges?kind=change", headers=actors.alice)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["records"])


# -- the record and the chain ------------------------------------------------------------------------------


def test_a_record_written_before_change_records_existed_hashes_byte_for_byte(tmp_path: Path) -> None:
    # A body as the code before this change wrote it: every field, no "change" key.
    log = AuditLog(StateLocation(tmp_path))
    log.start()
    old = log.append_sync(entry(1)).record
    log.close()
    body = record_body(old)
    assert b'"change"' not in body
    assert record_hash(from_body(body, old.hash)) == old.hash
    # Its stored bytes are read back as the same record, and written again as the same bytes.
    with sqlite3.connect(tmp_path / AUDIT_FILE) as connection:
        stored = connection.execute("SELECT body FROM records WHERE id = 1").fetchone()[0]
    assert stored.encode() == body
    assert record_body(from_body(stored, old.hash)) == body


def test_an_existing_log_opens_and_verifies_with_change_records_after_it(tmp_path: Path) -> None:
    path = tmp_path / AUDIT_FILE
    log = AuditLog(StateLocation(path.parent))
    log.start()
    fill(log, 30)  # a log of challenges, re-checks, reissues and rulings, as written before
    log.close()
    log = AuditLog(StateLocation(path.parent))
    log.start()
    assert log.integrity.at_start is not None
    assert log.integrity.at_start.ok
    change = Change("division.rule", "Open", "Open", {"rule": "ten-per-word"}, {"rule": "five-per-word"})
    written = log.append_sync(change_entry(change, actor="alice", event="Spring Open")).record
    assert (written.kind, written.verdict, written.words, written.results) == (Kind.CHANGE, None, (), ())
    assert written.prev_hash == log.get(30).hash  # type: ignore[union-attr]  # the same chain, one head
    assert log.get(31) == written
    assert log.verify().ok, log.verify().describe()
    log.close()


@pytest.fixture
def changed_log(tmp_path: Path) -> Path:
    """A log of 10 mixed records and a change record (#11), then 2 more challenges."""
    path = tmp_path / AUDIT_FILE
    log = AuditLog(StateLocation(path.parent))
    log.start()
    fill(log, 10)
    change = Change("td.added", "carol", "", None, {"name": "carol"})
    log.append_sync(change_entry(change, actor="alice", event="Spring Open"))
    log.append_sync(entry(12))
    log.append_sync(entry(13))
    assert log.verify().ok
    log.close()
    return path


def _problem(path: Path) -> tuple[int | None, str]:
    log = AuditLog(StateLocation(path.parent))
    try:
        result = log.verify()
    finally:
        log.close()
    assert not result.ok
    return result.first_bad_id, result.problem.key if result.problem else ""


@pytest.mark.parametrize(
    "change",
    [
        lambda r: replace(r, words=("QI",), words_typed=("qi",)),
        lambda r: replace(r, results=({"word": "QI", "acceptable": True},)),
        lambda r: replace(r, verdict=Verdict.ACCEPTABLE),
        lambda r: replace(r, parent_id=1),
        lambda r: replace(r, change=None),
        lambda r: replace(r, rule="double"),
    ],
    ids=["words", "results", "verdict", "parent", "no-change", "rule"],
)
def test_a_change_record_with_words_results_a_verdict_or_a_parent_is_reported(changed_log: Path, change: Any) -> None:
    rewrite(changed_log, 11, change)  # rehashed after it: only the record's own consistency can tell
    assert _problem(changed_log)[0] == 11


def test_a_challenge_with_a_change_or_without_a_verdict_is_reported(changed_log: Path) -> None:
    rewrite(changed_log, 12, lambda r: replace(r, change={"what": "td.added"}))
    assert _problem(changed_log) == (12, "chain.problem.change_on_adjudication")


def test_a_challenge_without_a_verdict_is_reported(changed_log: Path) -> None:
    rewrite(changed_log, 13, lambda r: replace(r, verdict=None))
    assert _problem(changed_log) == (13, "chain.problem.not_a_record")


# -- the event API: deliberate, previewed, on the record --------------------------------------------------


def test_a_rule_change_mid_event_is_refused_without_confirm_and_previewed(
    event_client: TestClient, actors: Actors, data_dir: Path
) -> None:
    client = event_client
    more_kiosks = [device_headers(data_dir, f"kiosk-open-{n}", division="Open") for n in range(3)]
    device_headers(data_dir, "kiosk-other", division="Elsewhere")  # serves another division
    device_headers(data_dir, "runner-open", Role.RUNNER, division="Open")
    _challenge(client, actors.kiosk)
    _challenge(client, more_kiosks[0])
    before = client.get("/api/event", headers=actors.alice).json()

    refused = client.put("/api/event", json=_event("ten-per-word"), headers=actors.alice)
    body = assert_error_shape(refused, 409, "conflict")
    assert body["message"]["key"] == "error.event.confirm"
    assert "Open: rule 5 points per word" in body["error"]
    assert "10 points per word" in body["error"]
    assert "division Open has 2 challenges on record and 7 kiosks and handhelds serving it" in body["error"]
    assert client.get("/api/event", headers=actors.alice).json() == before  # nothing changed
    assert load_event(data_dir).divisions[0].rule.value == "five-per-word"
    assert _changes(client, actors) == []

    preview = client.post(
        "/api/event/preview", json=_event("ten-per-word", kiosk_result_seconds=20), headers=actors.alice
    )
    assert preview.status_code == 200, preview.text
    answer = preview.json()
    assert answer["needs_confirmation"] is True
    settings, rule = answer["changes"]
    assert settings["what"] == "event.settings"
    assert settings["needs_confirmation"] is False
    assert (settings["before"], settings["after"]) == ({"kiosk_result_seconds": 10}, {"kiosk_result_seconds": 20})
    assert rule["what"] == "division.rule"
    assert rule["division"] == "Open"
    assert (rule["before"], rule["after"]) == ({"rule": "five-per-word"}, {"rule": "ten-per-word"})
    # kiosk-1 and kiosk-2 serve every division, kiosk-open-* Open; kiosk-other does not serve it.
    assert rule["devices"] == {"kiosk": 5, "runner": 2}
    assert rule["challenges"] == 2
    assert rule["message"]["key"] == "change.division.rule"
    assert client.get("/api/event", headers=actors.alice).json() == before  # a preview changes nothing

    done = client.put("/api/event", json=_event("ten-per-word", confirm=True), headers=actors.alice)
    assert done.status_code == 200, done.text
    assert done.json()["divisions"][0]["rule"] == "ten-per-word"
    (record,) = _changes(client, actors)
    assert (record["kind"], record["actor"], record["division"], record["verdict"]) == ("change", "alice", "Open", None)
    assert record["change"] == {
        "what": "division.rule",
        "subject": "Open",
        "before": {"rule": "five-per-word"},
        "after": {"rule": "ten-per-word"},
    }
    assert record["change_message"]["key"] == "change.division.rule"
    assert client.get("/api/audit/verify", headers=actors.alice).json()["ok"] is True


def test_changes_before_any_challenge_need_no_confirm_and_are_each_recorded(
    event_client: TestClient, actors: Actors
) -> None:
    client = event_client
    changed = {**_event("double"), "challenges_per_minute": 3}
    changed["division"] = [*changed["division"], {"name": "Juniors", "lexicon": "demo", "rule": "single"}]
    assert client.put("/api/event", json=changed, headers=actors.alice).status_code == 200
    whats = [(r["change"]["what"], r["change"]["subject"]) for r in reversed(_changes(client, actors))]
    assert whats == [("event.settings", "Test Open"), ("division.rule", "Open"), ("division.added", "Juniors")]
    added = _changes(client, actors)[0]
    assert added["change"]["before"] is None
    assert added["change"]["after"]["rule"] == "single"
    # Nothing changed: nothing recorded.
    assert client.put("/api/event", json=changed, headers=actors.alice).status_code == 200
    assert len(_changes(client, actors)) == 3


def test_removing_or_changing_the_lexicon_of_a_division_with_challenges_needs_confirm(
    event_client: TestClient, actors: Actors
) -> None:
    client = event_client
    two = {**OPEN, "division": [*OPEN["division"], {"name": "B", "lexicon": "demo", "rule": "single"}]}
    assert client.put("/api/event", json=two, headers=actors.alice).status_code == 200
    _challenge(client, actors.kiosk)  # in Open
    without_open = {**OPEN, "division": [{"name": "B", "lexicon": "demo", "rule": "single"}]}
    refused = assert_error_shape(client.put("/api/event", json=without_open, headers=actors.alice), 409, "conflict")
    assert "division Open removed" in refused["error"]
    removed_b = client.put("/api/event", json=OPEN, headers=actors.alice)  # B has no challenge
    assert removed_b.status_code == 200
    assert _changes(client, actors)[0]["change"]["what"] == "division.removed"


def test_a_bad_confirm_is_refused_with_the_error_shape(event_client: TestClient, actors: Actors) -> None:
    for route in ("/api/event/preview", "/api/event"):
        method = event_client.post if route.endswith("preview") else event_client.put
        bad = method(route, json=_event("double", confirm="yes"), headers=actors.alice)
        assert "confirm must be true or false" in assert_error_shape(bad, 422, "invalid_input")["error"]
        unknown = method(route, json=_event("double", confirmed=True), headers=actors.alice)
        assert_error_shape(unknown, 422, "invalid_input")
        assert_error_shape(method(route, json=_event(), headers=actors.kiosk), 403, "forbidden")


def test_a_change_that_cannot_be_recorded_is_not_made(
    event_client: TestClient, actors: Actors, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: AuditLog, entry: Any) -> Any:
        raise AuditUnavailable("error.audit.cannot_write", reason="disk full")

    monkeypatch.setattr(AuditLog, "submit", refuse)
    refused = event_client.put("/api/event", json=_event("double"), headers=actors.alice)
    assert "could not be put on record" in assert_error_shape(refused, 503, "audit_unavailable")["error"]
    assert load_event(data_dir).divisions[0].rule.value == "five-per-word"
    assert event_client.get("/api/event", headers=actors.alice).json()["divisions"][0]["rule"] == "five-per-word"
    td = event_client.post(
        "/api/tds", json={"name": "carol", "password": "a long enough password"}, headers=actors.alice
    )
    assert_error_shape(td, 503, "audit_unavailable")
    assert "carol" not in {t["name"] for t in event_client.get("/api/tds", headers=actors.alice).json()["tds"]}
    assert_error_shape(event_client.post("/api/tds/bob/disable", headers=actors.alice), 503, "audit_unavailable")
    assert_error_shape(event_client.post("/api/devices/kiosk-1/revoke", headers=actors.alice), 503, "audit_unavailable")
    devices = {d["name"]: d for d in event_client.get("/api/devices", headers=actors.alice).json()["devices"]}
    assert devices["kiosk-1"]["revoked_at"] is None
    tds = {t["name"]: t for t in event_client.get("/api/tds", headers=actors.alice).json()["tds"]}
    assert tds["bob"]["disabled_at"] is None


def test_td_accounts_and_devices_changes_are_recorded(event_client: TestClient, actors: Actors, data_dir: Path) -> None:
    client = event_client
    device_headers(data_dir, "kiosk-open", division="Open")
    assert (
        client.post(
            "/api/tds", json={"name": "carol", "password": "a long enough password"}, headers=actors.alice
        ).status_code
        == 201
    )
    assert client.post("/api/tds/bob/disable", headers=actors.alice).status_code == 200
    assert client.post("/api/devices/kiosk-open/revoke", headers=actors.alice).status_code == 200
    assert client.post("/api/devices/kiosk-open/revoke", headers=actors.alice).status_code == 200  # no change
    assert client.post("/api/devices/kiosk-open/pairing-code", headers=actors.alice).status_code == 201
    records = list(reversed(_changes(client, actors)))
    assert [(r["change"]["what"], r["change"]["subject"], r["division"], r["actor"]) for r in records] == [
        ("td.added", "carol", "", "alice"),
        ("td.disabled", "bob", "", "alice"),
        ("device.revoked", "kiosk-open", "Open", "alice"),
        ("device.repair_code", "kiosk-open", "Open", "alice"),
    ]
    assert records[2]["change"]["before"] == {"role": "kiosk", "division": "Open", "revoked": False}
    assert records[2]["change"]["after"]["revoked"] is True
    assert records[3]["change"]["before"] == {"revoked": True}


def test_every_view_of_a_change_record_answers_without_a_verdict(event_client: TestClient, actors: Actors) -> None:
    client = event_client
    _challenge(client, actors.kiosk)
    assert client.put("/api/event", json=_event("double", confirm=True), headers=actors.alice).status_code == 200
    change_id = _changes(client, actors)[0]["id"]
    one = client.get(f"/api/challenges/{change_id}", headers=actors.alice)
    assert one.status_code == 200
    assert one.json()["verdict"] is None
    assert "final" not in one.json()
    assert one.json()["change"]["what"] == "division.rule"
    docket = client.get(f"/api/challenges/{change_id}/docket", headers=actors.alice)
    assert "has no verdict" in assert_error_shape(docket, 422, "invalid_input")["error"]
    for action, body in (("recheck", {}), ("ruling", {"verdict": "acceptable", "note": "why"})):
        refused = client.post(
            f"/api/challenges/{change_id}/{action}", json={**body, "request_id": f"r-{action}-1234"}, headers=actors.bob
        )
        assert_error_shape(refused, 422, "invalid_input")
    listed = client.get("/api/challenges", headers=actors.alice).json()["records"]
    assert [r["kind"] for r in listed] == ["change", "challenge"]
    exported = client.get("/api/export?format=csv", headers=actors.alice)
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert next((r["kind"], r["verdict"], r["consequence"]) for r in rows) == (
        "challenge",
        "acceptable",
        rows[0]["consequence"],
    )
    assert (rows[1]["kind"], rows[1]["verdict"], rows[1]["consequence"]) == ("change", "", "")
    assert json.loads(rows[1]["change"])["what"] == "division.rule"
    lines = client.get("/api/export?format=jsonl", headers=actors.alice).text.splitlines()
    assert json.loads(lines[1])["change"]["after"] == {"rule": "double"}
    summary = client.get("/api/summary", headers=actors.alice).json()
    assert summary["total"]["challenges"] == 1
    assert [d["division"] for d in summary["divisions"]] == ["Open"]
    filtered = client.get("/api/summary?kind=change", headers=actors.alice)
    assert filtered.status_code == 200
    found = client.get(f"/api/challenges?q=%23{change_id}", headers=actors.alice).json()["records"]
    assert [r["id"] for r in found] == [change_id]


def test_openapi_documents_the_preview_and_confirm(event_client: TestClient) -> None:
    spec = event_client.get("/openapi.json").json()
    assert "post" in spec["paths"]["/api/event/preview"]
    for path, method in (("/api/event", "put"), ("/api/event/preview", "post")):
        schema = spec["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
        assert schema["properties"]["confirm"]["type"] == "boolean"
    assert "change" in spec["components"]["schemas"]["Kind"]["enum"]  # the kind filter takes change records


def test_audit_tail_says_who_changed_what(tmp_path: Path) -> None:
    log = AuditLog(StateLocation(tmp_path))
    log.start()
    change = Change("division.rule", "Open", "Open", {"rule": "ten-per-word"}, {"rule": "five-per-word"})
    record = log.append_sync(change_entry(change, actor="alice", event="Spring Open")).record
    log.close()
    line = record_line(record, "en")
    assert line.endswith(
        "change by alice: Open: rule 10 points per word for an unsuccessful challenge -> 5 points per word for an"
        " unsuccessful challenge"
    )
    assert "modification par alice\u202f: Open\u202f: règle 10 points par mot" in record_line(record, "fr")


def test_a_change_is_said_with_the_settings_names_in_the_language_never_their_keys() -> None:
    settings = Change(
        "event.settings",
        "Test Open",
        "",
        {"kiosk_result_seconds": 10, "rounds": True},
        {"kiosk_result_seconds": 20, "rounds": False},
    )
    assert describe(settings).text("en") == (
        "event settings: seconds a kiosk shows a verdict: 10 -> 20, round numbers: yes -> no"
    )
    assert describe(settings).text("fr") == (
        "réglages du tournoi\u202f: secondes d’affichage du verdict sur la borne\u202f: 10 -> 20,"
        " numéros de ronde\u202f: oui -> non"
    )
    added = Change(
        "division.added", "Premier", "Premier", None, {"name": "Premier", "lexicon": "demo", "rule": "double"}
    )
    said = describe(added).text("en")
    assert said.startswith("division Premier added (name: Premier, lexicon: demo, rule: ")
    assert "rule: double" not in said  # the rule by its description, not its key
    for text in (describe(settings).text("en"), said):
        assert "_" not in text
