"""Metrics: the text format (rendered and parsed by Prometheus' own client), GET /metrics after real
challenges, and the monitor role that reads it."""

from __future__ import annotations

import re
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from wordjudge.base.errors import InvalidInput
from wordjudge.base.metrics import CONTENT_TYPE, LATENCY_BUCKETS, Metrics, State
from wordjudge.cli.main import main
from wordjudge.model.auth import Role
from wordjudge.storage.dialect import StateLocation

from .helpers import Actors, access_store, assert_error_shape, device_headers, write_event

# A sample line of the text format 0.0.4: name, optional labels (escaped values), a value.
_LINE = re.compile(
    r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\\n])*")*\})?'
    r" (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$"
)


def parse(text: str) -> dict[str, list[Sample]]:
    """The samples of each family by family name, after checking the text line by line."""
    assert text.endswith("\n")
    typed: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
        elif not line.startswith("# HELP "):
            assert _LINE.match(line), line
            name = line.split("{")[0].split(" ")[0]
            assert any(name == t or name.startswith(t + "_") for t in typed), f"{name} has no TYPE before it"
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def value(families: dict[str, list[Sample]], family: str, sample: str | None = None, **labels: str) -> float:
    """The value of the one sample of ``family`` with exactly these labels (0 if there is none)."""
    found = [s.value for s in families[family] if s.name == (sample or family) and s.labels == labels]
    assert len(found) <= 1, found
    return float(found[0]) if found else 0.0


# -- the text format (prometheus_client renders it; these check what wordjudge puts in) ----------


def test_rendered_text_parses_with_awkward_label_values_and_cumulative_buckets() -> None:
    awkward = 'say "hi"\\back\nslash, {braces}=, ünïcode'
    metrics = Metrics()
    metrics.adjudicated("challenge", awkward, "acceptable", 0.004, replayed=False)
    metrics.adjudicated("challenge", awkward, "acceptable", 0.004, replayed=False)
    metrics.adjudicated("challenge", "", "unacceptable", 0.004, replayed=False)
    for seconds in (0.0025, 0.003, 0.05, 0.5, 7.0):
        metrics.adjudicated("recheck", "Open", "acceptable", seconds, replayed=False)
    text = metrics.render(State(version="9.9", healthy=True, lexicons=[(awkward, "ab" * 32, False)]))
    assert "# HELP wordjudge_healthy 1 when /api/health says ok, 0 when it says degraded.\n" in text
    assert "# TYPE wordjudge_adjudication_seconds histogram\n" in text
    assert 'division="say \\"hi\\"\\\\back\\nslash, {braces}=, ünïcode"' in text  # backslash, quote, newline escaped
    families = parse(text)
    assert (
        value(
            families,
            "wordjudge_adjudications",
            "wordjudge_adjudications_total",
            kind="challenge",
            division=awkward,
            verdict="acceptable",
        )
        == 2
    )
    assert (
        value(
            families,
            "wordjudge_adjudications",
            "wordjudge_adjudications_total",
            kind="challenge",
            division="",
            verdict="unacceptable",
        )
        == 1
    )
    assert value(families, "wordjudge_lexicon_info", name=awkward, fingerprint="ab" * 32, demo="false") == 1
    histogram = "wordjudge_adjudication_seconds"
    buckets = [
        (s.labels["le"], s.value)
        for s in families[histogram]
        if s.name.endswith("_bucket") and s.labels["kind"] == "recheck"
    ]
    assert buckets == [
        ("0.001", 0),
        ("0.0025", 1),
        ("0.005", 2),
        ("0.01", 2),
        ("0.025", 2),
        ("0.05", 3),
        ("0.1", 3),
        ("0.25", 3),
        ("0.5", 4),
        ("1.0", 4),
        ("+Inf", 5),
    ]  # cumulative, the bound included
    assert value(families, histogram, f"{histogram}_count", kind="recheck") == 5
    assert value(families, histogram, f"{histogram}_sum", kind="recheck") == pytest.approx(7.5555)


def test_unlabelled_metrics_exist_at_zero_and_labelled_ones_only_once_used() -> None:
    families = parse(Metrics().render(State(version="9.9", healthy=True)))
    assert value(families, "wordjudge_audit_commits", "wordjudge_audit_commits_total") == 0
    assert value(families, "wordjudge_data_dir_free_bytes") == 0
    assert families["wordjudge_adjudications"] == []
    assert families["wordjudge_adjudication_seconds"] == []
    assert families["wordjudge_lexicon_info"] == []
    assert not any(name.endswith("_created") for name in families)  # only the series the format always had


def test_each_metrics_has_its_own_registry() -> None:
    first, second = Metrics(), Metrics()
    state = State(version="9.9", healthy=True)
    first.adjudicated("challenge", "Open", "acceptable", 0.004, replayed=False)
    assert (
        value(
            parse(first.render(state)),
            "wordjudge_adjudications",
            "wordjudge_adjudications_total",
            kind="challenge",
            division="Open",
            verdict="acceptable",
        )
        == 1
    )
    assert parse(second.render(state))["wordjudge_adjudications"] == []


def test_a_total_taken_from_elsewhere_never_goes_down() -> None:
    totals = [5, 3, 8]  # an older reading comes after a newer one (two scrapes at once)
    metrics = Metrics()
    states = [State(version="9.9", healthy=True, audit_commits=total, free_bytes=None) for total in totals]
    seen = [
        value(parse(metrics.render(state)), "wordjudge_audit_commits", "wordjudge_audit_commits_total")
        for state in states
    ]
    assert seen == [5, 5, 8]


def test_the_server_metrics_render_the_state_read_at_scrape_time() -> None:
    states: list[State] = []
    metrics = Metrics()
    metrics.adjudicated("challenge", "Open", "acceptable", 0.004, replayed=False)
    metrics.adjudicated("challenge", "Open", "acceptable", 0.0001, replayed=True)
    states.append(
        State(
            version="9.9",
            healthy=False,
            devices=[("kiosk", True), ("kiosk", False), ("monitor", True)],
            lexicons=[("CSW24", "ab" * 32, False), ('odd "name"', "cd" * 32, True)],
            audit_records=12,
            audit_commits=7,
            audit_failures=1,
            audit_queue_depth=2,
            audit_writable=False,
            refusals={"challenges": 3},
            free_bytes=1234,
        )
    )
    families = parse(metrics.render(states[-1]))
    assert (
        value(
            families,
            "wordjudge_adjudications",
            "wordjudge_adjudications_total",
            kind="challenge",
            division="Open",
            verdict="acceptable",
        )
        == 1
    )
    assert value(families, "wordjudge_replayed", "wordjudge_replayed_total", kind="challenge") == 1
    assert (
        value(families, "wordjudge_adjudication_seconds", "wordjudge_adjudication_seconds_count", kind="challenge") == 1
    )
    assert value(families, "wordjudge_devices_online", role="kiosk") == 1
    assert value(families, "wordjudge_devices_enrolled", role="kiosk") == 2
    assert value(families, "wordjudge_devices_online", role="runner") == 0  # every role is there, even at 0
    assert value(families, "wordjudge_devices_online", role="monitor") == 1
    assert value(families, "wordjudge_lexicon_info", name='odd "name"', fingerprint="cd" * 32, demo="true") == 1
    assert value(families, "wordjudge_audit_records") == 12
    assert value(families, "wordjudge_audit_commits", "wordjudge_audit_commits_total") == 7
    assert value(families, "wordjudge_audit_write_failures", "wordjudge_audit_write_failures_total") == 1
    assert value(families, "wordjudge_audit_queue_depth") == 2
    assert value(families, "wordjudge_audit_writable") == 0
    assert value(families, "wordjudge_healthy") == 0
    assert value(families, "wordjudge_rate_limited", "wordjudge_rate_limited_total", reason="challenges") == 3
    assert value(families, "wordjudge_rate_limited", "wordjudge_rate_limited_total", reason="login") == 0
    assert value(families, "wordjudge_data_dir_free_bytes") == 1234
    assert value(families, "wordjudge_build_info", version="9.9") == 1
    bounds = [s.labels["le"] for s in families["wordjudge_adjudication_seconds"] if s.name.endswith("_bucket")]
    assert bounds == [repr(b) for b in LATENCY_BUCKETS] + ["+Inf"]
    states.append(State(version="9.9", healthy=True, lexicons=[("CSW24", "ab" * 32, False)]))
    later = parse(metrics.render(states[-1]))
    assert [s.labels["name"] for s in later["wordjudge_lexicon_info"]] == ["CSW24"]  # a lexicon no longer served goes


# -- GET /metrics on the real app ----------------------------------------------------------------

DEMO_FINGERPRINT = "b819e7b67f8f2c80640ae76f0edbe59a4a1befb6de0f348463642ad49bdd2ad3"


def challenge(words: str = "cat dog", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 7, "round": 2, "words": words, "request_id": uuid.uuid4().hex, **extra}


def scrape(client: TestClient, headers: dict[str, str]) -> dict[str, list[Sample]]:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == CONTENT_TYPE
    return parse(response.text)


def test_metrics_after_real_challenges(app: FastAPI, data_dir: Path, actors: Actors) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word"), ("Juniors", "demo", "single")], challenges_per_minute=3)
    monitor = device_headers(data_dir, "prometheus", Role.MONITOR)
    with TestClient(app) as client:
        first = challenge("cat dog")
        statuses = [
            client.post("/api/challenges", json=first, headers=actors.kiosk).status_code,
            client.post("/api/challenges", json=challenge("cat qi"), headers=actors.kiosk).status_code,
            client.post("/api/challenges", json=first, headers=actors.kiosk).status_code,  # a retry: not a record
            client.post("/api/challenges", json=challenge(division="Juniors"), headers=actors.kiosk).status_code,
            client.post("/api/challenges", json=challenge(), headers=actors.kiosk).status_code,  # over 3 a minute
            client.post("/api/challenges", json=challenge("cat"), headers=actors.runner).status_code,
        ]
        assert statuses == [201, 201, 200, 201, 429, 201]
        record = client.post("/api/challenges", json=challenge("cat qi"), headers=actors.alice).json()["id"]
        recheck = {"request_id": uuid.uuid4().hex}
        assert client.post(f"/api/challenges/{record}/recheck", json=recheck, headers=actors.bob).status_code == 201
        assert client.post(f"/api/challenges/{record}/recheck", json=recheck, headers=actors.bob).status_code == 200
        ruling = {"verdict": "acceptable", "note": "errata", "request_id": uuid.uuid4().hex}
        assert client.post(f"/api/challenges/{record}/ruling", json=ruling, headers=actors.bob).status_code == 201
        for _ in range(6):
            client.post("/api/session", json={"name": "alice", "password": "wrong password"})
        families = scrape(client, monitor)
        as_td = scrape(client, actors.alice)  # a TD may read them too
    adjudications = {
        (s.labels["kind"], s.labels["division"], s.labels["verdict"]): s.value
        for s in families["wordjudge_adjudications"]
    }
    assert adjudications == {
        ("challenge", "Open", "acceptable"): 2,  # the kiosk's first and the runner's
        ("challenge", "Open", "unacceptable"): 2,  # the kiosk's and the TD's
        ("challenge", "Juniors", "acceptable"): 1,
        ("recheck", "Open", "unacceptable"): 1,  # its retry is not counted
        ("ruling", "Open", "acceptable"): 1,
    }
    assert value(families, "wordjudge_replayed", "wordjudge_replayed_total", kind="challenge") == 1
    assert value(families, "wordjudge_replayed", "wordjudge_replayed_total", kind="recheck") == 1
    latency = "wordjudge_adjudication_seconds"
    assert value(families, latency, f"{latency}_count", kind="challenge") == 5
    assert value(families, latency, f"{latency}_bucket", kind="challenge", le="+Inf") == 5
    assert 0 < value(families, latency, f"{latency}_sum", kind="challenge") < 5
    assert value(families, "wordjudge_rate_limited", "wordjudge_rate_limited_total", reason="challenges") == 1
    assert value(families, "wordjudge_rate_limited", "wordjudge_rate_limited_total", reason="login") == 1
    assert value(families, "wordjudge_audit_records") == 7
    assert value(families, "wordjudge_audit_commits", "wordjudge_audit_commits_total") >= 1
    assert value(families, "wordjudge_audit_writable") == 1
    assert value(families, "wordjudge_healthy") == 1
    # online: the devices that made requests (kiosk-1, runner-1, and the monitor scraping); kiosk-2 never did
    assert value(families, "wordjudge_devices_online", role="kiosk") == 1
    assert value(families, "wordjudge_devices_enrolled", role="kiosk") == 2
    assert value(families, "wordjudge_devices_online", role="runner") == 1
    assert value(families, "wordjudge_devices_online", role="monitor") == 1
    [lexicon] = families["wordjudge_lexicon_info"]
    assert lexicon.labels == {"name": "demo", "fingerprint": DEMO_FINGERPRINT, "demo": "true"}
    assert value(as_td, "wordjudge_audit_records") == 7


# -- the monitor role ----------------------------------------------------------------------------


def test_metrics_need_a_monitor_or_a_td(client: TestClient, data_dir: Path, actors: Actors) -> None:
    assert_error_shape(client.get("/metrics"), 401, "unauthorized")
    for device in (actors.kiosk, actors.runner):
        refused = client.get("/metrics", headers=device)
        assert "monitor" in assert_error_shape(refused, 403, "forbidden")["error"]
    monitor = device_headers(data_dir, "prometheus", Role.MONITOR)
    assert client.get("/metrics", headers=monitor).status_code == 200
    store = access_store(data_dir)
    store.devices.revoke("prometheus", by="test")
    store.close()
    assert_error_shape(client.get("/metrics", headers=monitor), 401, "unauthorized")


def test_a_monitor_reads_the_metrics_and_health_and_nothing_else(client: TestClient, data_dir: Path) -> None:
    monitor = device_headers(data_dir, "prometheus", Role.MONITOR)
    assert client.get("/api/health", headers=monitor).status_code == 200
    for method, path, body in [
        ("GET", "/api/event", None),
        ("GET", "/api/session", None),
        ("POST", "/api/challenges", challenge()),
        ("GET", "/api/challenges/mine", None),
    ]:
        refused = client.request(method, path, json=body, headers=monitor)
        assert "GET /metrics only" in assert_error_shape(refused, 403, "forbidden")["error"], path
    assert client.get("/metrics", headers=monitor).status_code == 200


def test_a_monitor_is_enrolled_from_the_command_line_only(client: TestClient, data_dir: Path, actors: Actors) -> None:
    runner = CliRunner()
    env = {"WORDJUDGE_DATA_DIR": str(data_dir)}
    added = runner.invoke(main, ["device", "add", "prom", "--role", "monitor"], env=env)
    assert added.exit_code == 0, added.output
    token = added.stdout.strip().splitlines()[-1]
    assert client.get("/metrics", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    with_division = runner.invoke(main, ["device", "add", "prom2", "--role", "monitor", "--division", "Open"], env=env)
    assert with_division.exit_code == 1
    assert "takes no division" in with_division.output
    paired = runner.invoke(main, ["device", "pair", "--role", "monitor"], env=env)
    assert paired.exit_code == 2  # not a choice there
    over_http = client.post("/api/pairing-codes", json={"role": "monitor"}, headers=actors.alice)
    assert_error_shape(over_http, 422, "invalid_request")
    store = access_store(data_dir)
    with pytest.raises(InvalidInput, match="not a pairing code"):
        store.pairing.create_code(Role.MONITOR, by="test")
    store.close()
    devices = client.get("/api/devices", headers=actors.alice).json()["devices"]
    assert [(d["name"], d["role"], d["online"]) for d in devices if d["name"] == "prom"] == [("prom", "monitor", True)]


def test_an_access_store_from_before_monitors_keeps_its_devices_and_takes_monitors(tmp_path: Path) -> None:
    from wordjudge.access.access_store import ACCESS_FILE, AccessStore
    from wordjudge.storage.access_db import MIGRATIONS, digest
    from wordjudge.storage.database import connect_writer
    from wordjudge.storage.dialect import SQLITE, SQLITE_MIGRATIONS_TABLE

    old = connect_writer(tmp_path / ACCESS_FILE)
    SQLITE.migrate(
        old, MIGRATIONS[:1], SQLITE_MIGRATIONS_TABLE
    )  # the store as the release before monitors left it, with a kiosk
    old.execute(
        "INSERT INTO devices (name, role, token_hash, created_at, created_by) VALUES (?, 'kiosk', ?, ?, 'cli')",
        ("kiosk-1", digest("wj_old-token"), "2026-01-01T00:00:00.000+00:00"),
    )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        old.execute(
            "INSERT INTO devices (name, role, token_hash, created_at, created_by) VALUES ('m', 'monitor', 'h', 't', 'c')"
        )
    old.close()
    store = AccessStore(StateLocation(tmp_path)).open()
    try:
        assert store.devices.authenticate("wj_old-token", client="test").actor == "kiosk-1"  # kept, token and all
        monitor = store.devices.add("prometheus", Role.MONITOR, by="test").token
        assert store.devices.authenticate(monitor, client="test").role is Role.MONITOR
        assert [d.name for d in store.devices.all()] == ["kiosk-1", "prometheus"]
    finally:
        store.close()
