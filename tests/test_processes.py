"""One event served by several processes (``wordjudge serve --processes N``, wordjudge.service.processes): one chain ordered
by the database whichever process writes, a second server still refused, the processes but the first answering
the verdict path alone, and a live server of two processes behind the HAProxy front of deploy/."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, expect

from wordjudge.base.errors import AuditUnavailable, InvalidInput
from wordjudge.log.audit import AuditLog, open_log
from wordjudge.model.records import Kind, RecordFilter
from wordjudge.service.processes import Process
from wordjudge.service.settings import Settings, load_settings
from wordjudge.storage.dialect import StateLocation
from wordjudge.web.app import create_app

from . import front
from .browser import new_page
from .helpers import (
    CHEAP_HASHER,
    LiveServer,
    access_store,
    alert_kinds,
    assert_error_shape,
    database_of,
    device_headers,
    eventually,
    free_port,
    free_ports,
    location_of,
    serve_process,
    td_headers,
    wait_for_health,
    write_event,
)
from .test_api import challenge
from .test_audit import entry
from .test_kiosk import adjudicate, enrol, on_screen


def folder(path: Path) -> Path:
    """``path``, made: the data folder of one of the writers (each its own, the database theirs in common)."""
    path.mkdir()
    return path


def _started(log: AuditLog) -> AuditLog:
    log.start()
    return log


def test_the_processes_of_one_server_append_to_one_chain_in_the_databases_order(data_dir: Path) -> None:
    """Two writers of one server (two processes), appending at once: one chain, ids without a gap or a fork, each
    head read from the database (before: the second writer was refused, or forked the chain at its next id)."""
    database = database_of(data_dir)
    logs = [_started(open_log(StateLocation(data_dir, database), shared="server-a")) for _ in range(2)]
    try:
        failures: list[BaseException] = []

        def write(log: AuditLog, first: int) -> None:
            try:
                for n in range(first, first + 60):
                    log.append_sync(entry(n))
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=write, args=(log, 1 + 60 * k)) for k, log in enumerate(logs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        records = list(reversed(logs[0].find(RecordFilter(), limit=500)))
        assert [record.id for record in records] == list(range(1, 121))
        assert {record.request_id for record in records} == {entry(n).request_id for n in range(1, 121)}
        verification = logs[1].verify()
        assert verification.ok, verification.describe()
        # The head of the log another process wrote is read again after a quarter of a second.
        eventually(lambda: logs[0].head == logs[1].head == verification.head, "the other process's head is read")
        assert logs[0].head == logs[1].head == verification.head
        # A retry of a request another process recorded gets that record, not a second one.
        (original,) = [record for record in records if record.request_id == entry(1).request_id]
        replay = logs[1].append_sync(entry(1))
        assert replay.replayed
        assert replay.record.id == original.id  # whichever process wrote it first (not always record 1)
    finally:
        for log in logs:
            log.close()


@pytest.mark.postgresql
def test_a_second_server_is_refused_beside_the_processes_of_one(tmp_path: Path, postgres_url: str) -> None:
    """The database tells the processes of one server (their token) from a second server on the same log."""
    first = _started(AuditLog(StateLocation(folder(tmp_path / "a"), postgres_url), shared="server-a"))
    sibling = _started(AuditLog(StateLocation(folder(tmp_path / "b"), postgres_url), shared="server-a"))
    try:
        for other in (
            AuditLog(StateLocation(folder(tmp_path / "c"), postgres_url), shared="server-b"),
            AuditLog(StateLocation(folder(tmp_path / "d"), postgres_url)),  # a server of one process
        ):
            _refused(other)
        first.close()
        # One process of the first server still writes: still refused.
        _refused(AuditLog(StateLocation(folder(tmp_path / "e"), postgres_url), shared="server-b"))
        assert sibling.append_sync(entry(1)).record.id == 1
    finally:
        first.close()
        sibling.close()
    # Every process of the first server gone: another may write the log, and then a server of several is refused.
    alone = _started(AuditLog(StateLocation(folder(tmp_path / "f"), postgres_url)))
    try:
        _refused(AuditLog(StateLocation(folder(tmp_path / "g"), postgres_url), shared="server-c"))
        assert alone.append_sync(entry(2)).record.id == 2
    finally:
        alone.close()


def _refused(log: AuditLog) -> None:
    with pytest.raises(AuditUnavailable, match="another wordjudge server already writes the audit log"):
        log.start()
    log.close()


def test_a_process_but_the_first_answers_the_verdict_path_alone(data_dir: Path) -> None:
    settings = Settings(data_dir=data_dir, processes=2, public_url="http://192.0.2.1:8000")
    kiosk = device_headers(data_dir, "kiosk-1")
    app = create_app(settings, hasher=CHEAP_HASHER, process=Process(1, "server-a"))
    with TestClient(app) as client:
        for method, path in (("GET", "/api/event"), ("GET", "/api/alerts"), ("POST", "/api/enrol"), ("GET", "/td")):
            refused = client.request(method, path, headers=kiosk)
            assert refused.status_code == 421, path
            body = refused.json()
            assert body["code"] == "misdirected"
            assert body["message"]["key"] == "error.process.verdicts_only"
            assert "http://192.0.2.1:8000" in body["error"]
        assert client.get("/api/health").status_code == 200
        answer = client.post("/api/challenges", json=challenge(), headers=kiosk)
        assert answer.status_code == 201, answer.text
        record = answer.json()
        assert (
            client.get(f"/api/challenges/requests/{record['request_id']}", headers=kiosk).json()["id"] == record["id"]
        )
        assert client.get(f"/api/challenges/{record['id']}/docket", headers=kiosk).status_code == 200
    first = create_app(settings, hasher=CHEAP_HASHER, process=Process(0, "server-b"))
    with TestClient(first) as client:
        assert client.get("/api/event", headers=kiosk).status_code == 200


@pytest.mark.parametrize(("index", "alerted"), [(1, False), (0, True)])
def test_only_process_0_tells_the_td_a_kiosk_went_silent(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, index: int, alerted: bool
) -> None:
    """A kiosk's polls go to process 0; another process hears its challenges alone, and must not alert the TD that
    it went silent between two of them."""
    monkeypatch.setattr("wordjudge.access.devices.ONLINE_WITHIN", 0.5)
    monkeypatch.setattr("wordjudge.web.app.EVENT_WATCH_SECONDS", 0.1)
    settings = Settings(data_dir=data_dir, processes=2, public_url="http://192.0.2.1:8000")
    kiosk = device_headers(data_dir, "kiosk-1")
    with TestClient(create_app(settings, hasher=CHEAP_HASHER, process=Process(index, "server-a"))) as client:
        assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 201
        if alerted:  # process 0 tells the TD once the kiosk's 0.5 s online window has passed
            eventually(lambda: "device_offline" in alert_kinds(data_dir), "the TD told of the silent kiosk", seconds=30)
        else:
            time.sleep(1.5)  # time passing is the test: the window and a few looks pass, and it says nothing
    store = access_store(data_dir)  # the server stopped: its alerts are written
    try:
        kinds = [alert.kind for alert in store.alerts.latest()]
    finally:
        store.close()
    assert ("device_offline" in kinds) is alerted, kinds


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ({"processes": 2}, "give --public-url"),
        ({"processes": 4, "port": 65534, "public_url": "http://192.0.2.1"}, "go past port 65535"),
        ({"processes": 0}, "processes"),
        (
            {"processes": 2, "public_url": "http://192.0.2.1:8000", "certfile": __file__, "keyfile": __file__},
            "leave --certfile and --keyfile out",
        ),
        (
            {
                "processes": 2,
                "public_url": "http://192.0.2.1:8000",
                "peers": "http://192.0.2.2:8000",
                "database": "postgresql://wordjudge@192.0.2.3/wordjudge",
            },
            "runs in one process",
        ),
    ],
)
def test_processes_that_cannot_serve_are_refused_naming_why(flags: dict[str, object], said: str) -> None:
    with pytest.raises(InvalidInput, match=said):
        load_settings(**flags)


def test_processes_have_an_environment_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORDJUDGE_PROCESSES", "3")
    monkeypatch.setenv("WORDJUDGE_PUBLIC_URL", "http://192.0.2.1:8000")
    assert load_settings().processes == 3


@pytest.mark.live
def test_two_processes_behind_the_front_serve_one_event(data_dir: Path, tmp_path: Path) -> None:
    """``serve --processes 2`` behind deploy/haproxy: kiosks get verdicts through the front and from each process,
    one chain holds them all; a hand edit of the event file is put on record once and served by both; a process
    killed is started again."""
    if not front.installed():
        pytest.skip(front.MISSING)
    write_event(data_dir, [("Open", "demo", "single")], challenges_per_minute=60)
    kiosks = [device_headers(data_dir, f"kiosk-{n}") for n in range(8)]
    server, port, front_port = _two_processes(data_dir)
    try:
        with front.front(port, 2, front_port, tmp_path) as url:
            ids = []
            for n, kiosk in enumerate(kiosks):
                for base in (url, f"http://127.0.0.1:{port + n % 2}"):
                    answer = httpx.post(f"{base}/api/challenges", json=challenge("qi za"), headers=kiosk, timeout=10)
                    assert answer.status_code == 201, answer.text
                    ids.append(answer.json()["id"])
            assert sorted(ids) == list(range(1, 17))
            # The head another process wrote is read again after a quarter of a second.
            eventually(
                lambda: all(
                    httpx.get(f"http://127.0.0.1:{port + k}/api/health").json()["audit"]["id"] == 16 for k in range(2)
                ),
                "both processes name the chain's head",
            )
            for k in range(2):
                audit = httpx.get(f"http://127.0.0.1:{port + k}/api/health").json()["audit"]
                assert audit["commits"] > 0, (k, audit)  # each process wrote some of them
                assert audit["id"] == 16, (k, audit)  # and names the chain's head, whoever wrote it

            # The console's live feed (process 0, through the front) shows a record only process 1 wrote.
            td = td_headers(data_dir, "alice")
            found: list[str] = []
            opened = threading.Event()

            def listen() -> None:
                params = {"after_id": "16", "seconds": "4"}
                with httpx.stream("GET", f"{url}/api/feed", params=params, headers=td, timeout=10) as feed:
                    opened.set()  # its headers came: the feed is open, to carry the record live
                    found.extend(line for line in feed.iter_lines() if line.startswith("id:"))

            listener = threading.Thread(target=listen)
            listener.start()
            assert opened.wait(30), "the feed did not open in 30 s"
            alone = httpx.post(f"http://127.0.0.1:{port + 1}/api/challenges", json=challenge(), headers=kiosks[1])
            assert alone.status_code == 201, alone.text
            listener.join()
            assert found == [f"id: {alone.json()['id']}"]

            write_event(data_dir, [("Open", "demo", "single")], name="Test Open, renamed", challenges_per_minute=60)
            deadline = time.monotonic() + 30
            names: list[str] = []
            while time.monotonic() < deadline:
                names = [httpx.get(f"http://127.0.0.1:{port + k}/api/health").json()["event"] for k in range(2)]
                if names == ["Test Open, renamed"] * 2:
                    break
                time.sleep(0.2)
            assert names == ["Test Open, renamed"] * 2
            log = AuditLog(location_of(data_dir))
            try:
                changes = log.find(RecordFilter(kind=Kind.CHANGE))
            finally:
                log.close()
            # Put on record by process 0 alone (before: once by each process, the others seeing it as a hand edit).
            assert [change.actor for change in changes] == ["event.toml"], changes

            victim = _pid_on(port + 1)
            os.kill(victim, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    if _pid_on(port + 1) != victim:
                        break
                except LookupError:
                    pass
                time.sleep(0.3)
            wait_for_health(f"http://127.0.0.1:{port + 1}", server)
            answer = httpx.post(f"{url}/api/challenges", json=challenge("qi za"), headers=kiosks[0], timeout=10)
            assert answer.status_code == 201
            assert answer.json()["id"] == 17 + len(changes) + 1
    finally:
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=30)[0]
    assert server.returncode == 0, output
    log = AuditLog(location_of(data_dir))
    try:
        assert log.verify().ok
    finally:
        log.close()


def _two_processes(data_dir: Path) -> tuple[subprocess.Popen[str], int, int]:
    """``serve --processes 2`` on two consecutive free ports, once both answer, and a free port for its front
    (its public URL): the server, its first port and the front's."""
    return _processes(data_dir, 2)


def _processes(data_dir: Path, count: int) -> tuple[subprocess.Popen[str], int, int]:
    """``serve --processes COUNT`` on consecutive free ports, once all answer, and a free port for its front:
    the server, its first port and the front's."""
    port, front_port = free_ports(count), free_port()
    while port <= front_port < port + count:
        front_port = free_port()
    server = serve_process(
        data_dir,
        "--processes",
        str(count),
        "--port",
        str(port),
        "--public-url",
        f"http://127.0.0.1:{front_port}",
        "--trusted-proxies",
        "127.0.0.1",
        "--log-level",
        "warning",
    )
    try:
        for k in range(count):
            wait_for_health(f"http://127.0.0.1:{port + k}", server)
    except BaseException:
        server.kill()
        server.communicate(timeout=30)
        raise
    return server, port, front_port


# One runner's header spelt 24 ways (issue 36): the front hashed the raw header and the server took any case of
# "Bearer" and any spaces, so each spelling could meet another process and its own count of the device's limit.
_SPELLINGS = [
    f"{scheme}{space}"
    for scheme in ("Bearer", "bearer", "BEARER", "bEaReR")
    for space in (" ", "  ", "   ", "\t", " \t", "\t ")
][1:]


@pytest.mark.parametrize("count", [2, 4])
def test_a_devices_limit_is_one_limit_through_the_front_however_its_header_is_spelt(
    data_dir: Path, tmp_path: Path, count: int
) -> None:
    """Through deploy/haproxy's file in front of 2 and 4 processes, a kiosk's 6 challenges a minute are 6 whatever
    it sends: the front routes on the token alone, the server takes exactly ``Bearer <token>``."""
    if not front.installed():
        pytest.skip(front.MISSING)
    write_event(data_dir, [("Open", "demo", "single")], challenges_per_minute=6)
    token = device_headers(data_dir, "kiosk-1")["Authorization"].removeprefix("Bearer ")
    server, port, front_port = _processes(data_dir, count)
    verdicts: dict[str, int] = {}
    try:
        with front.front(port, count, front_port, tmp_path) as url, httpx.Client(base_url=url, timeout=10) as client:
            tries: list[list[tuple[str, str]]] = [[("Authorization", f"{spelt}{token}")] for spelt in _SPELLINGS]
            tries.append([("Authorization", f"Bearer {token}"), ("Authorization", f"bearer {token}")])  # twice
            tries += [[("Authorization", f"Bearer {token}")]] * 10
            for n, headers in enumerate(tries):
                answer = client.post("/api/challenges", json=challenge("qi za"), headers=headers)
                verdicts[repr(headers[0][1][: -len(token)]) + f" #{n}"] = answer.status_code
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    accepted = [spelt for spelt, status in verdicts.items() if status == 201]
    print(f"{count} processes: {len(accepted)} verdicts from {len(tries)} tries (limit 6): {accepted}")
    assert len(accepted) == 6, verdicts
    assert all(status == 401 for status in list(verdicts.values())[: len(_SPELLINGS) + 1]), verdicts


def _pid_on(port: int) -> int:
    """The pid of the process listening on ``port`` on loopback (from /proc: no tool needed)."""
    wanted = f":{port:04X}"
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(wanted) and fields[3] == "0A":  # LISTEN
            inodes.add(fields[9])
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return int(proc.name)
        except OSError:
            continue
    raise LookupError(f"nothing listens on port {port}")


@pytest.mark.live
def test_the_processes_stop_when_their_supervisor_is_killed(data_dir: Path) -> None:
    """kill -9 of ``serve --processes 2`` frees the data folder: its processes must not go on serving without it."""
    port = free_ports(2)
    server = serve_process(
        data_dir,
        "--processes",
        "2",
        "--port",
        str(port),
        "--public-url",
        "http://127.0.0.1:9",
        "--log-level",
        "warning",
    )
    try:
        for k in range(2):
            wait_for_health(f"http://127.0.0.1:{port + k}", server)
        server.kill()
        server.wait()
        deadline = time.monotonic() + 30
        listening = [port, port + 1]
        while listening and time.monotonic() < deadline:
            listening = [p for p in (port, port + 1) if _listened(p)]
            time.sleep(0.2)
        assert listening == [], f"still serving on {listening} without its supervisor"
    finally:
        if server.poll() is None:
            server.kill()
        server.communicate(timeout=30)


def _listened(port: int) -> bool:
    try:
        _pid_on(port)
    except LookupError:
        return False
    return True


def test_a_kiosk_page_through_the_front_gets_its_verdict_from_a_process_but_the_first(
    browser: Browser, data_dir: Path, tmp_path: Path
) -> None:
    """Chromium on the front's address: the kiosk page, its session and event come from process 0, and its
    challenges from the process the front gives its token; kiosks are paired until one is given process 1."""
    if not front.installed():
        pytest.skip(front.MISSING)
    write_event(data_dir, [("Open", "demo", "single")], name="Front Open", challenges_per_minute=60)
    server, port, front_port = _two_processes(data_dir)
    try:
        with front.front(port, 2, front_port, tmp_path) as url:
            via_front = LiveServer(data_dir)
            via_front.base = url  # the pages are opened at the front's address, as the devices open them
            verdicts = 0
            for n in range(12):
                page = new_page(browser)
                enrol(via_front, page, name=f"kiosk-{n}")
                adjudicate(page, "12", "QI ZA")
                on_screen(page, "verdict")
                expect(page.locator(".verdict h1")).to_have_text("UNACCEPTABLE")  # QI and ZA: not in DEMO
                page.context.close()
                verdicts += 1
                if httpx.get(f"http://127.0.0.1:{port + 1}/api/health").json()["audit"]["commits"] > 0:
                    break
            assert httpx.get(f"http://127.0.0.1:{port + 1}/api/health").json()["audit"]["commits"] > 0
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    records = LiveServer(data_dir).records()
    assert [(r.words, r.table) for r in records] == [(("QI", "ZA"), "12")] * verdicts


@pytest.mark.live
def test_the_front_is_given_to_a_test_once_it_sees_every_process_up() -> None:
    """front.front hands over its URL only once HAProxy's admin socket says every server line of both backends is
    UP after a passed check (before: as soon as its port accepted, with the processes still "UP 1/2" and no check
    run, so a slow first check on a loaded machine could take process 1 out while the kiosks were sent)."""
    if not front.installed():
        pytest.skip(front.MISSING)
    port, front_port = free_ports(2), free_port()
    while port <= front_port < port + 2:
        front_port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="wjf-"))  # a short path: the admin socket's is at most 107 bytes
    listeners = [socket.create_server((front.HOST, port + k)) for k in range(2)]  # what a check connects to
    try:
        with front.front(port, 2, front_port, folder):
            states = front.server_states(folder / "haproxy.sock")
    finally:
        for listener in listeners:
            listener.close()
        shutil.rmtree(folder, ignore_errors=True)
    assert sorted(states) == ["process0/process0", *(f"verdicts/process{k}" for k in range(4))], states
    assert set(states.values()) == {("UP", "L4OK")}, states


def test_the_front_limits_one_addresss_requests_and_serves_another(data_dir: Path, tmp_path: Path) -> None:
    """Behind the front the processes count no address (they trust it): the front's own limit, as the server's
    default, 500 requests in 10 s from one address (an IPv6 client by its /64), then a 429 in the server's error
    shape, while another address is served (issue 36)."""
    if not front.installed():
        pytest.skip(front.MISSING)
    write_event(data_dir, [("Open", "demo", "single")])
    server, port, front_port = _processes(data_dir, 2)
    try:
        with front.front(port, 2, front_port, tmp_path) as url:
            with httpx.Client(base_url=url, timeout=10) as flood:
                statuses = [flood.get("/api/health").status_code for _ in range(520)]
                refused = flood.get("/api/health")
            other = httpx.Client(base_url=url, timeout=10, transport=httpx.HTTPTransport(local_address="127.0.0.2"))
            with other:
                served = other.get("/api/health").status_code
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    first = statuses.index(429)  # the front's own readiness checks count too: a few of the 500 are theirs
    assert 490 <= first <= 500, first
    assert set(statuses[:first]) == {200}
    assert set(statuses[first:]) == {429}
    body = assert_error_shape(refused, 429, "rate_limited")
    assert refused.headers["Retry-After"] == "10"
    assert body["message"]["key"] == "error.http.rate_limited"
    assert served == 200
