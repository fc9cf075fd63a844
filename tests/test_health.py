"""/api/health reports the server's state (200 ok, 503 degraded), and ``serve --log-format json`` logs JSON lines."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, expect
from prometheus_client.parser import text_string_to_metric_families

from wordjudge.log.audit import AUDIT_FILE
from wordjudge.service.opening import open_resources
from wordjudge.service.settings import Settings
from wordjudge.service.status import health_report
from wordjudge.words.lexicon import TRIE_FILE

from .browser import new_page, open_enrolled, screenshot
from .helpers import (
    Actors,
    LiveServer,
    StartServer,
    assert_error_shape,
    device_headers,
    write_event,
)


def challenge(words: str = "cat dog", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 7, "round": 2, "words": words, "request_id": uuid.uuid4().hex, **extra}


def test_health_says_what_it_checked(client: TestClient, data_dir: Path) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert (body["ok"], body["status"], body["state"], body["reasons"], body["warnings"]) == (True, 200, "ok", [], [])
    [lexicon] = body["lexicons"]
    assert (lexicon["name"], lexicon["verified"], lexicon["on_disk"]) == ("demo", True, "unchanged")
    assert datetime.fromisoformat(lexicon["verified_at"]).tzinfo is not None
    audit = body["audit"]
    assert (audit["writable"], audit["queue_depth"], audit["failures"], audit["last_failure"]) == (True, 0, 0, None)
    assert abs(body["disk"]["free_bytes"] - shutil.disk_usage(data_dir).free) < 2**30  # others write meanwhile


@pytest.mark.usefixtures("quick_busy_timeout")  # before the app or log: its connections
@pytest.mark.sqlite_only("holds SQLite's write lock on the log file (PostgreSQL's lock: test_postgres_store)")
def test_a_locked_audit_log_makes_health_degraded_until_a_write_succeeds(
    client: TestClient, data_dir: Path, actors: Actors
) -> None:
    blocker = sqlite3.connect(data_dir / AUDIT_FILE, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        assert_error_shape(
            client.post("/api/challenges", json=challenge(), headers=actors.kiosk), 503, "audit_unavailable"
        )
        degraded = client.get("/api/health")
        metrics = client.get("/metrics", headers=actors.alice).text
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert degraded.status_code == 503
    body = degraded.json()
    assert (body["ok"], body["status"], body["state"]) == (False, 503, "degraded")
    [reason] = body["reasons"]
    assert "the audit log's last write failed" in reason
    assert "database is locked" in reason
    audit = body["audit"]
    assert (audit["writable"], audit["failures"], audit["last_failure"]) == (False, 1, "database is locked")
    assert datetime.fromisoformat(audit["last_failure_at"]).tzinfo is not None
    assert body["lexicons"][0]["name"] == "demo"  # still the whole report, for the status page
    samples = {s.name: s.value for family in text_string_to_metric_families(metrics) for s in family.samples}
    assert samples["wordjudge_healthy"] == 0
    assert samples["wordjudge_audit_writable"] == 0
    assert samples["wordjudge_audit_write_failures_total"] == 1

    assert client.post("/api/challenges", json=challenge(), headers=actors.kiosk).status_code == 201
    recovered = client.get("/api/health")
    assert recovered.status_code == 200
    assert (recovered.json()["state"], recovered.json()["audit"]["writable"]) == ("ok", True)
    assert recovered.json()["audit"]["last_commit_at"] > audit["last_failure_at"]


def test_a_lexicon_file_that_changes_after_start_makes_health_degraded(
    client: TestClient, data_dir: Path, actors: Actors
) -> None:
    trie = data_dir / "lexicons" / "demo" / TRIE_FILE
    info = trie.stat()
    os.utime(trie, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))  # written to, as far as a stat can tell
    changed = client.get("/api/health")
    assert changed.status_code == 503
    assert changed.json()["lexicons"][0]["on_disk"] == "changed"
    [reason] = changed.json()["reasons"]
    assert reason.startswith("lexicon demo: its compiled file is not the one verified at start")
    assert "lexicons/demo/words.marisa changed" in reason
    copy = trie.with_name("copy")
    shutil.copyfile(trie, copy)
    copy.replace(trie)  # same bytes, another file (the served one stays mapped)
    assert client.get("/api/health").json()["lexicons"][0]["on_disk"] == "replaced"
    trie.unlink()
    missing = client.get("/api/health")
    assert (missing.status_code, missing.json()["lexicons"][0]["on_disk"]) == (503, "missing")
    # Degraded is a report, not a refusal: the lexicon verified at start is still mapped and answers.
    assert client.post("/api/challenges", json=challenge(), headers=actors.kiosk).json()["verdict"] == "acceptable"


def test_low_disk_space_is_a_warning_not_degraded(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wordjudge.tournament.health.LOW_DISK_BYTES", 2**62)
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "ok"
    [warning] = body["warnings"]
    assert "free on the data dir's disk" in warning
    assert body["disk"]["warn_below_bytes"] == 2**62


def test_a_stopped_audit_writer_is_degraded(data_dir: Path) -> None:
    resources = open_resources(Settings(data_dir=data_dir))
    try:
        assert health_report(resources).ok
        resources.audit.close()
        health = health_report(resources)
    finally:
        resources.close()
    assert not health.ok
    assert health.reasons == [
        "the audit log's writer has stopped: no challenge can be recorded; restart wordjudge serve"
    ]
    assert health.body["audit"]["writable"] is False


def test_a_lexicon_added_by_an_event_change_is_stamped_when_verified(
    event_client: TestClient, data_dir: Path, actors: Actors
) -> None:
    shutil.copytree(data_dir / "lexicons" / "demo", data_dir / "lexicons" / "SECOND")
    manifest = data_dir / "lexicons" / "SECOND" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"name": "demo"', '"name": "SECOND"'))
    event = {
        "name": "Two",
        "rounds": True,
        "challenges_per_minute": 6,
        "kiosk_result_seconds": 10,
        "division": [
            {"name": "A", "lexicon": "demo", "rule": "single"},
            {"name": "B", "lexicon": "SECOND", "rule": "single"},
        ],
    }
    assert event_client.put("/api/event", json=event, headers=actors.alice).status_code == 200, "event change"
    body = event_client.get("/api/health").json()
    assert [(x["name"], x["verified"], x["on_disk"]) for x in body["lexicons"]] == [
        ("demo", True, "unchanged"),
        ("SECOND", True, "unchanged"),
    ]
    first, second = (x["verified_at"] for x in body["lexicons"])
    assert second > first  # verified when the event change opened it


# -- JSON log lines from a real server ------------------------------------------------------------


@pytest.mark.live
def test_serve_with_json_logs_writes_json_lines_and_never_the_words(data_dir: Path, live_server: StartServer) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")])
    kiosk = device_headers(data_dir, "kiosk-1")
    server = live_server(data_dir, "--log-format", "json")
    sent = challenge("zyzzyvas qi")
    response = httpx.post(f"{server.base}/api/challenges", json=sent, headers=kiosk, timeout=10)
    assert response.status_code == 201, response.text
    assert httpx.post(f"{server.base}/api/challenges", json=sent, headers=kiosk, timeout=10).status_code == 200
    output = server.stop()
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]  # every line is JSON
    for line in lines:
        assert {"time", "level", "logger", "message"} <= set(line), line
        assert line["time"].endswith("Z")
        assert datetime.fromisoformat(line["time"]).utcoffset() is not None
    messages = [(line["logger"], line["message"]) for line in lines]
    assert ("wordjudge.service.opening", "event Test Open") in messages  # wordjudge's own start-up lines
    assert any(logger == "uvicorn.error" and "Uvicorn running on" in m for logger, m in messages)  # uvicorn's
    access = [line for line in lines if line["logger"] == "uvicorn.access" and line.get("path") == "/api/challenges"]
    assert [(a["method"], a["status"]) for a in access] == [("POST", 201), ("POST", 200)]
    adjudications = [line for line in lines if line["logger"] == "wordjudge.adjudications"]
    assert len(adjudications) == 2
    first, retry = adjudications
    assert {
        key: first[key] for key in ("id", "kind", "division", "table", "round", "verdict", "actor", "replayed")
    } == {
        "id": 1,
        "kind": "challenge",
        "division": "Open",
        "table": "7",
        "round": 2,
        "verdict": "unacceptable",
        "actor": "kiosk-1",
        "replayed": False,
    }
    assert first["latency_ms"] > 0
    assert (retry["id"], retry["replayed"]) == (1, True)
    assert "zyzzyvas" not in output.lower()  # neither the words ...
    assert not re.search(r"\bqi\b", output, re.IGNORECASE)
    assert "results" not in output  # ... nor which of them failed


# -- what a kiosk and the status page show of a degraded server -----------------------------------


@pytest.mark.browser
@pytest.mark.sqlite_only("holds SQLite's write lock on the log file (PostgreSQL's lock: test_postgres_store)")
def test_a_kiosk_and_the_status_page_say_server_problem_while_the_log_cannot_be_written(
    browser: Browser, data_dir: Path
) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Kiosk Open")
    other = device_headers(data_dir, "kiosk-2")
    token = device_headers(data_dir, "kiosk-1")["Authorization"].removeprefix("Bearer ")
    server = LiveServer(data_dir)
    server.start()
    try:
        page = new_page(browser)
        page.clock.install()
        open_enrolled(page, server, "kiosk", token)
        state = page.locator("#server-state")
        expect(state).to_have_text("Server connected")
        blocker = sqlite3.connect(data_dir / AUDIT_FILE, isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            refused = httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=other, timeout=10)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert refused.status_code == 503
        page.clock.fast_forward(11_000)  # the kiosk checks every 10 s
        expect(state).to_have_text("Server problem: call the TD")  # not "cannot reach": the server answered
        expect(state).to_have_class(re.compile(r"\berror\b"))
        expect(state).to_have_attribute("title", re.compile("audit log's last write failed"))
        screenshot(page, "kiosk-server-problem-small")
        status = new_page(browser, "desktop")
        status.goto(f"{server.base}/")
        expect(status.locator("#server-state")).to_contain_text("Server problem: call the TD (the audit log's last")
        expect(status.locator("#lexicons tbody tr")).to_have_count(1)  # the rest of the report is still shown
        screenshot(status, "status-degraded-desktop")
        assert (
            httpx.post(f"{server.base}/api/challenges", json=challenge(), headers=other, timeout=10).status_code == 201
        )
        page.clock.fast_forward(11_000)
        expect(state).to_have_text("Server connected")
        page.context.close()
        status.context.close()
    finally:
        server.stop()
