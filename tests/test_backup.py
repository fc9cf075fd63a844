"""Backing up the audit log while the server writes, and the restore drill: the copy verifies and serves."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from wordjudge.base.errors import AuditUnavailable, Conflict
from wordjudge.cli.main import main
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.service.settings import Settings
from wordjudge.storage.backup import backup_sqlite
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.app import create_app
from wordjudge.words.editions import DEMO_NAME

from .helpers import StartServer, device_headers, write_event


def challenge(words: str) -> dict[str, object]:
    return {"division": "Open", "table": 4, "round": 1, "words": words, "request_id": uuid.uuid4().hex}


@pytest.mark.live
@pytest.mark.sqlite_only("copies the SQLite log file (a database is copied by pg_dump)")
def test_backup_while_serving_then_restore_drill(
    data_dir: Path, tmp_path: Path, compiled_demo: Path, live_server: StartServer
) -> None:
    write_event(data_dir, [("Open", "demo", "single")], challenges_per_minute=0)
    kiosk = device_headers(data_dir, "kiosk-1")
    server = live_server(data_dir)
    base = server.base
    stop = threading.Event()
    answered: list[int] = []

    def keep_challenging() -> None:
        with httpx.Client(base_url=base, timeout=10) as http:
            while not stop.is_set():
                response = http.post("/api/challenges", json=challenge("cat dog"), headers=kiosk)
                assert response.status_code == 201, response.text
                answered.append(response.json()["id"])

    try:
        writer = threading.Thread(target=keep_challenging)
        writer.start()
        while len(answered) < 20:
            threading.Event().wait(0.05)
        command = [str(Path(sys.executable).with_name("wordjudge")), "audit", "backup", str(tmp_path / "backups")]
        (tmp_path / "backups").mkdir()
        done = subprocess.run(
            command, env={"WORDJUDGE_DATA_DIR": str(data_dir), "PATH": ""}, capture_output=True, text=True, timeout=60
        )
        stop.set()
        writer.join()
    finally:
        stop.set()
        server.stop()
    assert done.returncode == 0, done.stderr
    (copy,) = (tmp_path / "backups").iterdir()
    assert "chain verified" in done.stdout
    log = AuditLog(StateLocation(copy.parent), file=copy.name)  # a backup's name is its own, as the CLI's check
    verified = log.verify()
    log.close()
    assert verified.ok
    assert 20 <= verified.records <= len(answered)  # a consistent state taken while challenges went on

    # The restore drill: a fresh data dir with the copy as its log serves, and the chain goes on.
    restored = tmp_path / "restored"
    shutil.copytree(compiled_demo, restored / "lexicons" / DEMO_NAME)
    shutil.copy(copy, restored / AUDIT_FILE)
    write_event(restored, [("Open", "demo", "single")])
    kiosk2 = device_headers(restored, "kiosk-2")
    with TestClient(create_app(Settings(data_dir=restored))) as client:
        assert client.get("/api/health").json()["audit"]["records"] == verified.records
        added = client.post("/api/challenges", json=challenge("emu"), headers=kiosk2)
        assert added.json()["id"] == verified.records + 1
    after = CliRunner().invoke(
        main, ["audit", "verify", "--data-dir", str(restored), "--expect-head", verified.head.text]
    )
    assert after.exit_code == 0, after.output
    assert f"chain verified: {verified.records + 1} record(s)" in after.output


def test_backups_never_overwrite_and_name_a_missing_source(tmp_path: Path) -> None:
    with pytest.raises(AuditUnavailable, match="there is no database"):
        backup_sqlite(tmp_path / "nothing.sqlite3", tmp_path / "copy.sqlite3")
    assert not (tmp_path / "copy.sqlite3.partial").exists()
    (tmp_path / "copy.sqlite3").write_text("an older backup")
    with pytest.raises(Conflict, match="backups never overwrite"):
        backup_sqlite(tmp_path / "nothing.sqlite3", tmp_path / "copy.sqlite3")
    assert (tmp_path / "copy.sqlite3").read_text() == "an older backup"


def test_a_folder_that_does_not_exist_is_refused_not_made_a_file(tmp_path: Path) -> None:
    log = AuditLog(StateLocation(tmp_path / "data"))
    log.start()
    log.close()
    missing = tmp_path / "backups"
    result = CliRunner().invoke(main, ["audit", "backup", f"{missing}/", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1
    assert "is not a folder: create it first" in result.output
    assert not missing.exists()
    missing.mkdir()
    result = CliRunner().invoke(main, ["audit", "backup", f"{missing}/", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    assert [p.name.startswith("audit-") for p in missing.iterdir()] == [True]


def test_a_log_in_postgresql_is_not_copied_as_a_file_and_the_td_is_told_what_copies_it(tmp_path: Path) -> None:
    """The backup is its place's (storage/places.py): a log in a database is refused, naming pg_dump, before
    anything is connected to or written; the same command copies a log kept in the data folder (above)."""
    data, copy = tmp_path / "data", tmp_path / "copy.sqlite3"
    data.mkdir()
    database = "postgresql://wj@127.0.0.1:1/hall"  # never reached: nothing listens on port 1
    result = CliRunner().invoke(main, ["audit", "backup", str(copy), "--data-dir", str(data), "--database", database])
    assert result.exit_code == 1
    assert "this event's log is in PostgreSQL: copy it with pg_dump (or keep a standby)" in result.output
    assert not copy.exists()
    assert sorted(p.name for p in data.iterdir()) == []
