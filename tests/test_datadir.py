"""The data folder's identity, and the demo set apart from a real event (issue "Hall safety", items 1 and 2)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from wordjudge.access.access_store import ACCESS_FILE
from wordjudge.base.datadir import IDENTITY_FILE, identity
from wordjudge.cli.main import main
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.service.settings import Settings
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.app import create_app

from .helpers import PASSWORD, access_store, device_headers, write_event


def challenge(words: str = "cat dog", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 7, "round": 2, "words": words, "request_id": uuid.uuid4().hex, **extra}


def test_a_folder_has_one_identity_made_once_and_shown_by_health(data_dir: Path, settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        first = client.get("/api/health").json()["server_id"]
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/health").json()["server_id"] == first  # the same folder: the same server
    assert identity(data_dir, demo=True).id == first
    other = data_dir.parent / "other"
    assert identity(other, demo=True).id != first  # another folder: another server


def test_pairing_tells_the_device_which_server_it_paired_with(data_dir: Path, settings: Settings) -> None:
    store = access_store(data_dir)
    code = store.pairing.create_code("kiosk", by="test").code  # type: ignore[arg-type]
    store.close()
    with TestClient(create_app(settings)) as client:
        enrolled = client.post("/api/enrol", json={"code": code}).json()
        health = client.get("/api/health").json()
    assert (enrolled["server_id"], enrolled["event"]) == (health["server_id"], "wordjudge demo event")
    with TestClient(create_app(settings)) as client:
        token = {"Authorization": f"Bearer {enrolled['token']}"}
        assert client.get("/api/event", headers=token).json()["server_id"] == health["server_id"]


@pytest.mark.sqlite_only("moves the demo's files aside (a database's demo: test_postgres_store)")
def test_the_demo_is_set_aside_when_the_folder_gets_a_real_event(data_dir: Path, settings: Settings) -> None:
    kiosk = device_headers(data_dir, "kiosk-1")
    with TestClient(create_app(settings)) as client:  # the Quick start: the demo, and a few challenges
        for _ in range(3):
            assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 201
        demo_server = client.get("/api/health").json()["server_id"]
    store = access_store(data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()
    write_event(data_dir, [("Open", "demo", "single")], name="Spring Open")  # the real event, division "Open" too
    with TestClient(create_app(settings)) as client:
        health = client.get("/api/health").json()
        assert health["server_id"] != demo_server  # a new server, as far as devices can tell
        assert health["audit"]["records"] == 0  # none of the demo's records
        assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 401  # nor its kiosks
    [aside] = [p for p in data_dir.iterdir() if p.name.startswith("demo-")]
    assert {ACCESS_FILE, AUDIT_FILE, IDENTITY_FILE} <= {p.name for p in aside.iterdir()}
    kept = AuditLog(StateLocation(aside))
    try:
        result = kept.verify()  # the demo's log is kept whole, apart
        assert (result.ok, result.records) == (True, 3)
    finally:
        kept.close()
    exported = CliRunner().invoke(main, ["audit", "export", "--format", "jsonl", "--data-dir", str(data_dir)])
    assert exported.exit_code == 0
    assert exported.stdout == ""  # the real event's export holds nothing of the demo
    store = access_store(data_dir)
    assert store.tds.all() == []  # nor its TD accounts
    store.close()


def test_a_real_event_keeps_its_own_log_and_devices_across_starts(data_dir: Path, settings: Settings) -> None:
    write_event(data_dir, [("Open", "demo", "single")])
    kiosk = device_headers(data_dir, "kiosk-1")
    with TestClient(create_app(settings)) as client:
        assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 201
        server = client.get("/api/health").json()["server_id"]
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/health").json()["server_id"] == server
        assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 201
    assert not [p for p in data_dir.iterdir() if p.name.startswith("demo-")]
