"""A hall of two machines on loopback, for the tests: two PostgreSQL clusters (the second a synchronous standby of
the first), two data folders holding the same hall key, two ``wordjudge serve`` (not started): the ``hall``
fixture, and what the hall's tests do with it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import Page, expect

from wordjudge.hall.pg_setup import prepare
from wordjudge.hall.proof import KEY_FILE, make_key
from wordjudge.log.audit import open_log
from wordjudge.log.chain import HeadMark
from wordjudge.model.records import RecordFilter
from wordjudge.service.serving import Serving
from wordjudge.storage.dialect import StateLocation

from .helpers import PASSWORD, LiveServer, free_port
from .postgres import Cluster

SYNC_WAIT = 30  # seconds for a standby to stream synchronously, or a server to take over


SERVER_ROLE, SERVER_PASSWORD = "wordjudge", "the-servers-own-password"


@dataclass
class Hall:
    """Two machines of a hall: each a cluster, a data folder and a server (not started). ``url_a``, ``url_b``: each
    machine's database as the servers reach it, as their own role (deploy/hall.md: it may read and add records,
    never change one); ``admin_a``, ``admin_b``: as a superuser (the TD's `standby` commands)."""

    primary: Cluster
    standby: Cluster
    a: LiveServer
    b: LiveServer
    url_a: str
    url_b: str
    admin_a: str
    admin_b: str


def sync_standby_streams(primary: Cluster) -> None:
    deadline = time.monotonic() + SYNC_WAIT
    with primary.connect() as connection:
        while connection.execute(
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'"
        ).fetchone() != (1,):
            assert time.monotonic() < deadline, "the standby did not stream synchronously"
            time.sleep(0.1)


def hall_server(data_dir: Path, url: str, port: int, peer_port: int) -> LiveServer:
    server = LiveServer(data_dir)
    server.port, server.base = port, f"http://127.0.0.1:{port}"
    server.extra = (
        "--database",
        url,
        "--public-url",
        server.base,
        "--peers",
        f"http://127.0.0.1:{peer_port}",
        "--log-level",
        "warning",
    )
    return server


@pytest.fixture
def hall(tmp_path: Path, compiled_demo: Path, postgres_clusters: Callable[..., Cluster]) -> Iterator[Hall]:
    primary = postgres_clusters()
    database = primary.create_database("hall")  # before a synchronous standby is asked for: none streams yet
    # As deploy/hall.md makes them: the server's own role, which owns nothing (`wordjudge database init
    # --server-role`: the tables are the superuser's), and may see whether a standby follows.
    primary.create_role(SERVER_ROLE, SERVER_PASSWORD)
    with primary.connect() as connection:
        connection.execute(f"GRANT pg_read_all_stats TO {SERVER_ROLE}")
    prepare(primary.url(database), SERVER_ROLE)
    with primary.connect() as connection:
        # As a TD's postgresql.conf (deploy/hall.md) would: ALTER SYSTEM, which the standby's copy keeps and its
        # promotion (wordjudge standby promote) undoes; a -c flag would outrank both.
        connection.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
        connection.execute("ALTER SYSTEM SET wal_retrieve_retry_interval = '500ms'")  # a prompt promotion
        connection.execute("ALTER SYSTEM SET wal_sender_timeout = '5s'")  # a silent standby seen gone within seconds
        connection.execute("SELECT pg_reload_conf()")
    standby = primary.standby(primary.folder.parent / "standby")
    sync_standby_streams(primary)
    folders = []
    for name in ("a", "b"):
        folder = tmp_path / name
        shutil.copytree(compiled_demo, folder / "lexicons" / compiled_demo.name)
        folder.chmod(0o700)  # as the guide's copy leaves it: a folder holding the hall key is its owner's alone
        folders.append(folder)
    make_key(folders[0])  # the hall's key, copied with the data folder to the other machine (deploy/hall.md)
    shutil.copy2(folders[0] / KEY_FILE, folders[1] / KEY_FILE)
    port_a, port_b = free_port(), free_port()
    url_a, url_b = (cluster.url(database, SERVER_ROLE, SERVER_PASSWORD) for cluster in (primary, standby))
    a = hall_server(folders[0], url_a, port_a, port_b)
    b = hall_server(folders[1], url_b, port_b, port_a)
    made = Hall(primary, standby, a, b, url_a, url_b, primary.url(database), standby.url(database))
    yield made
    # A test may put other servers in the hall's place (over HTTPS, say): whichever ran is stopped.
    for server in {a, b, made.a, made.b}:
        if server.process is not None and server.process.poll() is None:
            server.stop()


def challenge(base: str, token: str, request_id: str, words: str = "cat dog", *, timeout: float = 10) -> httpx.Response:
    body = {"division": "Open", "table": 3, "round": 1, "words": words, "request_id": request_id}
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.post(f"{base}/api/challenges", json=body, headers=headers, timeout=timeout)


Acknowledged = dict[str, tuple[str, dict[str, Any]]]  # request id: the kiosk's token, the verdict it was shown


def settled_once(server: LiveServer, url: str, acknowledged: Acknowledged, printed: HeadMark, *more: str) -> None:
    """Every acknowledged request settles on ``server`` (the new active one) as it was; its log, in ``url``,
    holds each once, and ``more`` besides, and verifies against ``printed``."""
    for request_id, (token, view) in acknowledged.items():
        retried = challenge(server.base, token, request_id, " ".join(str(word) for word in view["words"]))
        assert retried.status_code == 200, retried.text
        assert (retried.json()["id"], retried.json()["verdict"], retried.json()["replayed"]) == (
            view["id"],
            view["verdict"],
            True,
        )
    log = open_log(StateLocation(server.data_dir, url))
    try:
        ids = [record.request_id for record in log.find(RecordFilter(), limit=1000)]
        verification = log.verify([printed])
    finally:
        log.close()
    assert sorted(ids) == sorted([*acknowledged, *more])  # none lost, none twice
    assert verification.ok, verification


def kill_machine(cluster: Cluster, server: LiveServer) -> None:
    """kill -9 of a machine's PostgreSQL (its postmaster) and its server: a power cut, as far as they know."""
    postmaster = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
    assert server.process is not None
    server.process.send_signal(signal.SIGKILL)
    server.process.communicate(timeout=10)  # its output read and closed
    server.process = None
    os.kill(postmaster, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while cluster.running() and time.monotonic() < deadline:
        time.sleep(0.05)


def freeze_machine(cluster: Cluster, server: LiveServer) -> Callable[[], None]:
    """SIGSTOP a machine's PostgreSQL (its postmaster and every process under it) and its server: a power cut as
    its peers see one, no connection closed (kill -9 lets the kernel close them, which tells the other side at
    once). Returns what thaws it (SIGCONT to each)."""
    postmaster = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
    assert server.process is not None
    stopped = [server.process.pid, postmaster]
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # not a process, or one gone meanwhile
        if entry.name.isdigit() and int(fields[1]) == postmaster:
            stopped.append(int(entry.name))
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)

    def thaw() -> None:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    return thaw


def step(serving: Serving) -> None:
    """A look at the hall with the peers asked now: a server's own look asks them in the background, for the next
    look (here the test says when they are asked)."""
    serving.watch.refresh = lambda: None  # type: ignore[method-assign]
    serving.watch.ask()
    serving.step()


def add_td(hall: Hall) -> None:
    """A TD account, alice, as the TD adds one at the command line (its password: helpers.PASSWORD)."""
    from .test_cli_access import run

    added = run(
        "td",
        "add",
        "alice",
        "--password-stdin",
        "--data-dir",
        hall.a.data_dir,
        "--database",
        hall.url_a,
        stdin=PASSWORD + "\n",
    )
    assert added.exit_code == 0, added.output


def console_sign_in(page: Page) -> None:
    page.locator("#name").fill("alice")
    page.locator("#password").fill(PASSWORD)
    page.locator("button[type=submit]").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "overview")
