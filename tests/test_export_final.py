"""After a re-check, reissue or ruling, the final verdict leads wherever a record is shown (issue 35, item 3): the
exports carry each challenge's final verdict, what gave it (original, re-check, reissue, ruling) and the deciding
record's id on the challenge's own row; a device's list of its own challenges carries their final verdicts."""

from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from fastapi.testclient import TestClient

from wordjudge.cli.main import main

from .helpers import Actors

FINAL_COLUMNS = ("final_verdict", "final_source", "final_record_id")


def challenge(words: str, table: int = 1) -> dict[str, Any]:
    return {"division": "Open", "table": table, "round": 1, "words": words, "request_id": uuid.uuid4().hex}


def _event(client: TestClient, actors: Actors) -> dict[str, int]:
    """Four challenges: one left alone, one ruled on, one re-checked (agreeing), one reissued; and one whose
    re-check disagrees (a ruling awaited) cannot happen on one list, so the ruled one stands for the turned ones."""
    plain = client.post("/api/challenges", json=challenge("cat"), headers=actors.runner).json()
    ruled = client.post("/api/challenges", json=challenge("cat qi", 2), headers=actors.runner).json()
    ruling = client.post(
        f"/api/challenges/{ruled['id']}/ruling",
        headers=actors.bob,
        json={"verdict": "acceptable", "note": "errata", "request_id": uuid.uuid4().hex},
    ).json()
    checked = client.post("/api/challenges", json=challenge("dog", 3), headers=actors.runner).json()
    recheck = client.post(
        f"/api/challenges/{checked['id']}/recheck", headers=actors.alice, json={"request_id": uuid.uuid4().hex}
    ).json()
    slip = client.post("/api/challenges", json=challenge("cat zzz", 4), headers=actors.runner).json()
    reissue = client.post(
        f"/api/challenges/{slip['id']}/reissue",
        headers=actors.alice,
        json={"words": "cat zoo", "reason": "slip miscopied", "request_id": uuid.uuid4().hex},
    ).json()
    assert ruling["verdict"] == "acceptable", ruling
    assert reissue["verdict"] == "acceptable", reissue
    return {
        "plain": plain["id"],
        "ruled": ruled["id"],
        "ruling": ruling["id"],
        "checked": checked["id"],
        "recheck": recheck["id"],
        "slip": slip["id"],
        "reissue": reissue["id"],
    }


def test_the_csv_export_carries_each_challenges_final_verdict_on_its_own_row(
    client: TestClient, actors: Actors
) -> None:
    ids = _event(client, actors)
    response = client.get("/api/export?format=csv", headers=actors.alice)
    rows = {int(row["id"]): row for row in csv.DictReader(io.StringIO(response.text))}
    for column in FINAL_COLUMNS:
        assert column in rows[ids["plain"]], column
    final = {key: tuple(rows[ids[key]][c] for c in FINAL_COLUMNS) for key in ("plain", "ruled", "checked", "slip")}
    assert final["plain"] == ("acceptable", "original", str(ids["plain"]))
    assert rows[ids["ruled"]]["verdict"] == "unacceptable"  # the verdict first given, kept as it was
    assert final["ruled"] == ("acceptable", "ruling", str(ids["ruling"]))
    assert final["checked"] == ("acceptable", "recheck", str(ids["recheck"]))
    assert final["slip"] == ("acceptable", "reissue", str(ids["reissue"]))
    # A linked record's row is not a challenge: it carries no final verdict of its own to count twice.
    assert tuple(rows[ids["ruling"]][c] for c in FINAL_COLUMNS) == ("", "", "")


def test_the_jsonl_export_carries_the_final_verdict_as_data(client: TestClient, actors: Actors) -> None:
    ids = _event(client, actors)
    lines = [
        json.loads(line) for line in client.get("/api/export?format=jsonl", headers=actors.alice).text.splitlines()
    ]
    records = {line["id"]: line for line in lines}
    ruled = records[ids["ruled"]]
    assert (ruled["verdict"], ruled["final_verdict"], ruled["final_source"], ruled["final_record_id"]) == (
        "unacceptable",
        "acceptable",
        "ruling",
        ids["ruling"],
    )
    assert records[ids["plain"]]["final_source"] == "original"
    assert records[ids["ruling"]]["final_verdict"] is None


def test_a_devices_own_list_carries_each_challenges_final_verdict(client: TestClient, actors: Actors) -> None:
    ids = _event(client, actors)
    records = {r["id"]: r for r in client.get("/api/challenges/mine?limit=10", headers=actors.runner).json()["records"]}
    ruled = records[ids["ruled"]]
    assert ruled["verdict"] == "unacceptable"  # the record's own, as before
    assert ruled["final"]["verdict"] == "acceptable"
    assert (ruled["final"]["decided_by"]["kind"], ruled["final"]["decided_by"]["id"]) == ("ruling", ids["ruling"])
    assert records[ids["plain"]]["final"]["changed"] is False


def test_the_command_lines_export_carries_the_final_verdict_too(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    """``wordjudge audit export`` (the TD's spreadsheet, made at the desk): the same columns, filled."""
    ids = _event(client, actors)
    result = CliRunner().invoke(main, ["audit", "export", "--format", "csv", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    rows = {int(row["id"]): row for row in csv.DictReader(io.StringIO(result.stdout))}
    assert tuple(rows[ids["ruled"]][c] for c in FINAL_COLUMNS) == ("acceptable", "ruling", str(ids["ruling"]))
    assert tuple(rows[ids["plain"]][c] for c in FINAL_COLUMNS) == ("acceptable", "original", str(ids["plain"]))
