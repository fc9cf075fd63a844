"""A hall whose failover is automatic: Patroni on each machine, a three-member etcd (deploy/patroni/, made on
loopback by tests/patroni.py), and ``wordjudge serve`` beside each PostgreSQL. Nobody promotes anything: the
active machine dies and the standby's server is the active one within 30 s, with nothing acknowledged lost or
recorded twice; the old machine, back, is rewound into the standby; the standby dying does not stop the hall, the
TD is told at once, and the synchronous standby comes back by itself."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from wordjudge.access import ACCESS_FILE, AccessStore
from wordjudge.audit import open_log
from wordjudge.chain import HEAD_HEX, HeadMark
from wordjudge.hall import ACTIVE, STANDBY
from wordjudge.records import RecordFilter
from wordjudge.serving import ALONE_ALERT

from .helpers import LiveServer, free_port
from .patroni import MISSING, PatroniHall, installed, start_hall
from .postgres import cluster_folder, remove_folder
from .test_cli_access import run
from .test_hall import _challenge, _server

pytestmark = [
    pytest.mark.sqlite_only("starts PostgreSQL clusters of its own, or none: runs in the suite's first pass"),
    pytest.mark.live,
]

FAILOVER_LIMIT = 30  # seconds from the death to the first verdict: the limit for the automatic way
SETTLE = 30  # seconds for what Patroni does in its loop (every second): a rejoin, a synchronous standby again


def _alerts(data_dir: Path, url: str) -> int:
    store = AccessStore(data_dir / ACCESS_FILE, database=url).open()
    try:
        # One row a minute, counting each time the hall found itself alone again
        return sum(alert.count for alert in store.alerts.latest() if alert.kind == ALONE_ALERT)
    finally:
        store.close()


def _until(what: str, check: Any, limit: float) -> float:
    """Wait until ``check()`` is true; return the seconds waited; fail after ``limit``."""
    began = time.monotonic()
    while not check():
        assert time.monotonic() - began < limit, f"{what}: not after {limit} s"
        time.sleep(0.1)
    return time.monotonic() - began


def _hall_says(server: LiveServer) -> dict[str, Any]:
    try:
        body: dict[str, Any] = httpx.get(f"{server.base}/api/health", timeout=2).json()
    except httpx.HTTPError:
        return {}
    return body


@pytest.fixture
def patroni_hall(postgres_bin_dir: Path) -> Iterator[PatroniHall]:
    if not installed():
        if os.environ.get("CI") or os.getuid() == 0:
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    folder = cluster_folder()
    hall = start_hall(folder, postgres_bin_dir)
    try:
        yield hall
    finally:
        hall.close()
        remove_folder(folder)


def test_patroni_fails_over_by_itself_with_nothing_lost_and_the_hall_outlives_its_standby(
    patroni_hall: PatroniHall, tmp_path: Path, compiled_demo: Path
) -> None:
    node_a, node_b = patroni_hall.nodes["a"], patroni_hall.nodes["b"]
    node_a.cluster.create_database("hall")
    url_a, url_b = node_a.cluster.url("hall"), node_b.cluster.url("hall")
    folders = []
    for name in ("a", "b"):
        folder = tmp_path / name
        shutil.copytree(compiled_demo, folder / "lexicons" / compiled_demo.name)
        folders.append(folder)
    port_a, port_b = free_port(), free_port()
    a = _server(folders[0], url_a, port_a, port_b)
    b = _server(folders[1], url_b, port_b, port_a)
    try:
        a.start()
        b.start()
        tokens = []
        for kiosk in range(4):
            added = run("device", "add", f"kiosk {kiosk}", "--role", "kiosk", "--data-dir", a.data_dir,
                        "--database", url_a)  # fmt: skip
            assert added.exit_code == 0, added.output
            tokens.append(added.stdout.strip())
        acknowledged: dict[str, tuple[str, dict[str, Any]]] = {}
        for number in range(8):
            token, words = tokens[number % 4], "cat dog" if number % 3 else "cat zzxq"
            response = _challenge(a.base, token, f"before-{number}", words)
            assert response.status_code == 201, response.text
            acknowledged[f"before-{number}"] = (token, response.json())
        docket = acknowledged["before-7"][1]
        printed = HeadMark(int(docket["id"]), str(docket["hash"])[:HEAD_HEX], "a docket printed before the failover")
        assert _hall_says(a)["hall"]["role"] == ACTIVE
        assert (_hall_says(b)["state"], _hall_says(b)["hall"]["active_url"]) == (STANDBY, a.base)

        # The active machine dies. Nobody acts: Patroni promotes the synchronous standby once the leader key
        # lapses, and its server takes over.
        patroni_hall.kill("a")
        assert a.process is not None
        a.process.kill()
        a.process.communicate(timeout=10)
        a.process = None
        died = time.monotonic()
        while (response := _challenge(b.base, tokens[0], "after-failover")).status_code != 201:
            assert response.status_code == 503, response.text
            assert time.monotonic() - died < FAILOVER_LIMIT, f"no verdict {FAILOVER_LIMIT} s after the death"
            time.sleep(0.2)
        assert _hall_says(b)["hall"]["epoch"] == 2
        _until("health warns that no standby follows", lambda: _hall_says(b)["hall"]["alone"], 10)
        _until("the TD is alerted", lambda: _alerts(b.data_dir, url_b) == 1, 10)
        for request_id, (token, view) in acknowledged.items():
            retried = _challenge(b.base, token, request_id, " ".join(str(word) for word in view["words"]))
            assert retried.status_code == 200, retried.text
            assert (retried.json()["id"], retried.json()["verdict"], retried.json()["replayed"]) == (
                view["id"], view["verdict"], True,
            )  # fmt: skip
        log = open_log(b.data_dir, url_b)
        try:
            ids = [record.request_id for record in log.find(RecordFilter(), limit=1000)]
            verification = log.verify([printed])
        finally:
            log.close()
        assert sorted(ids) == sorted([*acknowledged, "after-failover"])  # none lost, none twice
        assert verification.ok, verification

        # The old machine comes back: Patroni rewinds its PostgreSQL into the new primary's standby, the
        # synchronous standby is asked for again by itself, and its server serves as the standby.
        patroni_hall.start("a")
        patroni_hall.wait("a", "sync", timeout=SETTLE)
        _until("health says a standby follows again", lambda: _hall_says(b)["hall"]["alone"] is False, SETTLE)
        a.start()
        assert (_hall_says(a)["state"], _hall_says(a)["hall"]["active_url"]) == (STANDBY, b.base)
        refused = _challenge(a.base, tokens[1], "on-the-old-machine")
        assert (refused.status_code, refused.json()["code"]) == (503, "not_active")

        # The standby dies: the hall goes on (Patroni stops waiting for it), and the TD is told at once.
        patroni_hall.kill("a")
        response = _challenge(b.base, tokens[1], "standby-dead")
        assert response.status_code == 201, response.text
        _until("the TD is alerted again", lambda: _alerts(b.data_dir, url_b) == 2, 10)
        assert any("this machine only" in warning for warning in _hall_says(b)["warnings"])
    finally:
        for server in (a, b):
            if server.process is not None and server.process.poll() is None:
                server.stop()
