"""Attacks from the edge (issue "Trust at the edge"): each tried as a device, a player or a phone on the
hall's network would, and what stops it. docs/threat-model.md lists them with these tests."""

from __future__ import annotations

import concurrent.futures
import csv
import io
import itertools
import json
import os
import stat
import subprocess
import sys
import tomllib
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge import __version__
from wordjudge.access.access_store import AccessStore
from wordjudge.access.alerts import LISTED_PER_KIND, NEW_PER_WINDOW
from wordjudge.access.limits import LOGIN_FAILURES
from wordjudge.base.errors import DeviceMoved
from wordjudge.log.audit import AUDIT_FILE
from wordjudge.model.auth import Role
from wordjudge.model.records import Kind, Record, Verdict, record_hash
from wordjudge.storage.dialect import StateLocation

from .helpers import (
    CHEAP_HASHER,
    PASSWORD,
    Actors,
    LiveServer,
    StartServer,
    access_store,
    assert_error_shape,
    audit_log,
    device_headers,
    free_port,
    wait_for_health,
    write_event,
)


def challenge(words: str = "cat dog", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 7, "round": 2, "words": words, "request_id": uuid.uuid4().hex, **extra}


def stored(data_dir: Path, record_id: int) -> Record:
    log = audit_log(data_dir)
    try:
        record = log.get(record_id)
    finally:
        log.close()
    assert record is not None
    return record


# -- 1. per-word results cannot be derived from anything a device gets --------------------------------


def _guess(view: dict[str, Any], acceptable: tuple[bool, ...], *, actor: str, typed: list[str], prev: str) -> Record:
    """The record the server would have written if the words were (not) acceptable as ``acceptable`` says:
    what a device that read the source can write down for each combination, from its own view."""
    lexicon = view["lexicon"]
    results = tuple(
        {
            "word": w,
            "acceptable": ok,
            "source": lexicon if ok else None,
            "reason": f"{'in' if ok else 'not in'} {lexicon}",
        }
        for w, ok in zip(view["words"], acceptable, strict=True)
    )
    return Record(
        kind=Kind(view["kind"]),
        parent_id=view["parent_id"],
        event=view["event"],
        division=view["division"],
        round=view["round"],
        table=view["table"],
        actor=actor,
        channel="kiosk",
        words_typed=tuple(typed),
        words=tuple(view["words"]),
        lexicon=lexicon,
        fingerprint=view["fingerprint"],
        verdict=Verdict(view["verdict"]),
        results=results,
        rule=view["rule"],
        request_id=view["request_id"],
        # As stored: the answer's consequence less its message (for screens, never hashed).
        consequence={key: value for key, value in view["consequence"].items() if key != "message"},
        agrees=view["agrees"],
        note=None,
        id=view["id"],
        created_at=view["created_at"],
        software_version=__version__,
        prev_hash=prev,
    )


def test_a_device_cannot_work_out_which_word_failed_from_its_record(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    typed = ["cat", "qzx", "dog", "zzv"]
    prev = client.get("/api/health").json()["audit"]["hash"]  # public
    view = client.post("/api/challenges", json=challenge(" ".join(typed)), headers=actors.kiosk).json()
    assert view["verdict"] == "unacceptable"
    guesses = list(itertools.product((True, False), repeat=len(typed)))
    truth = (True, False, True, False)
    # The attack: everything in the hash but the results is known to the device, so it tries all 16.
    hits = [a for a in guesses if record_hash(_guess(view, a, actor="kiosk-1", typed=typed, prev=prev)) == view["hash"]]
    assert hits == []
    # The attack is the right one: given the record's salt, which only the server holds, it finds the answer.
    record = stored(data_dir, view["id"])
    assert record.salt is not None
    assert len(bytes.fromhex(record.salt)) == 16  # 128 random bits
    salt = record.salt
    salted = [
        a
        for a in guesses
        if record_hash(replace(_guess(view, a, actor="kiosk-1", typed=typed, prev=prev), salt=salt)) == view["hash"]
    ]
    assert salted == [truth]


def test_no_device_reachable_answer_carries_the_salt_or_per_word_results(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    view = client.post("/api/challenges", json=challenge("cat qzx"), headers=actors.runner).json()
    salt = stored(data_dir, view["id"]).salt
    assert salt
    answers = [
        client.get("/api/health"),
        client.get("/api/challenges/mine", headers=actors.runner),
        client.get(f"/api/challenges/{view['id']}", headers=actors.runner),
        client.get(f"/api/challenges/{view['id']}/docket", headers=actors.runner),
        client.post(
            "/api/challenges", json={**challenge("cat qzx"), "request_id": view["request_id"]}, headers=actors.runner
        ),  # a retry
        client.post(
            "/api/challenges", json={**challenge("cat dog"), "request_id": view["request_id"]}, headers=actors.runner
        ),  # a conflict
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 200, 409]
    for answer in answers:
        assert salt not in answer.text
        assert salt not in str(answer.headers)
        assert '"results"' not in answer.text
        assert "not in demo" not in answer.text
    # The TD's export keeps the salt, so that the chain can be checked from an export too.
    exported = client.get("/api/export?format=jsonl", headers=actors.alice).text
    assert json.loads(exported.splitlines()[0])["salt"] == salt


# -- 2. a copied device token is useless elsewhere, and the TD is told ---------------------------------


@pytest.fixture
def live(data_dir: Path, live_server: StartServer) -> LiveServer:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    return live_server(data_dir)


def _from(address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (127.0.0.2 is another machine for the server)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10)


@pytest.mark.live
def test_a_token_copied_to_another_address_is_refused_and_the_td_accepts_a_real_move(live: LiveServer) -> None:
    kiosk = device_headers(live.data_dir, "kiosk-1")
    td = _td(live, "alice")
    with _from("127.0.0.1") as hall, _from("127.0.0.2") as phone:
        assert hall.post(f"{live.base}/api/challenges", json=challenge(), headers=kiosk).status_code == 201
        stolen = phone.post(f"{live.base}/api/challenges", json=challenge(), headers=kiosk)
        assert_error_shape(stolen, 403, "device_moved")
        assert phone.get(f"{live.base}/api/session", headers=kiosk).status_code == 403
        assert hall.get(f"{live.base}/api/session", headers=kiosk).status_code == 200  # the kiosk goes on
        alerts = hall.get(f"{live.base}/api/alerts", headers=td).json()["alerts"]
        assert [(a["kind"], a["actor"]) for a in alerts] == [("device_moved", "kiosk-1")]
        assert "127.0.0.2" in alerts[0]["message"]
        assert alerts[0]["count"] == 2
        [device] = [
            d for d in hall.get(f"{live.base}/api/devices", headers=td).json()["devices"] if d["name"] == "kiosk-1"
        ]
        assert (device["bound_client"], device["moved_to"]) == ("127.0.0.1", "127.0.0.2")
        # The kiosk really moved (a new cable): the TD accepts the address shown, in one click.
        wrong = hall.post(f"{live.base}/api/devices/kiosk-1/accept-move", json={"client": "10.0.0.1"}, headers=td)
        assert_error_shape(wrong, 409, "conflict")
        moved = hall.post(f"{live.base}/api/devices/kiosk-1/accept-move", json={"client": "127.0.0.2"}, headers=td)
        assert moved.status_code == 200
        assert moved.json()["bound_client"] == "127.0.0.2"
        assert phone.post(f"{live.base}/api/challenges", json=challenge(), headers=kiosk).status_code == 201
        assert hall.get(f"{live.base}/api/session", headers=kiosk).status_code == 403


@pytest.mark.parametrize("last", ["kiosk", "copier"])
def test_the_move_alert_names_the_address_accepting_it_binds_and_the_others_refused(data_dir: Path, last: str) -> None:
    """Issue 36: the alert kept the first refused address of its minute while "Accept move" bound the latest, so
    a copied token used once after a kiosk's DHCP change made the TD's accept bind the copier's address."""
    store = access_store(data_dir)
    try:
        token = store.devices.add("kiosk-1", Role.KIOSK, by="test").token
        store.devices.authenticate(token, client="10.0.0.5")  # bound here
        moves = ["10.0.0.7", "10.0.0.66", "10.0.0.7", "10.0.0.7"]  # its new lease, the copier once, its new lease
        for client in moves if last == "kiosk" else [*moves, "10.0.0.66"]:
            with pytest.raises(DeviceMoved):
                store.devices.authenticate(token, client=client)
        binds = store.devices.get("kiosk-1").moved_to
        [alert] = [a for a in store.alerts.latest() if a.kind == "device_moved"]
    finally:
        store.close()
    assert binds == ("10.0.0.7" if last == "kiosk" else "10.0.0.66")
    other = "10.0.0.66" if binds == "10.0.0.7" else "10.0.0.7"
    assert f"kiosk-1's token was used from {binds}, not from 10.0.0.5" in alert.message, alert.message
    assert f"also refused in the last minute from {other}" in alert.message, alert.message


@pytest.mark.sqlite_only(
    "two TestClients of one app are two servers on one log, which PostgreSQL refuses (the binding on both backends: test_access.py)"
)
def test_a_paired_device_is_bound_to_the_address_it_paired_from(data_dir: Path, app: FastAPI) -> None:
    store = access_store(data_dir)
    code = store.pairing.create_code(Role.KIOSK, by="test").code
    store.close()
    with TestClient(app, client=("10.0.0.5", 4000)) as kiosk, TestClient(app, client=("10.0.0.6", 4000)) as other:
        token = kiosk.post("/api/enrol", json={"code": code}).json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        assert_error_shape(other.get("/api/session", headers=headers), 403, "device_moved")
        assert kiosk.get("/api/session", headers=headers).status_code == 200


def _td(live: LiveServer, name: str) -> dict[str, str]:
    store = access_store(live.data_dir)
    try:
        store.tds.add(name, PASSWORD, by="test")
    finally:
        store.close()
    response = httpx.post(f"{live.base}/api/session", json={"name": name, "password": PASSWORD})
    assert response.status_code == 201
    return {
        "Cookie": f"wordjudge_session={response.cookies['wordjudge_session']}",
        "X-CSRF-Token": response.json()["csrf_token"],
    }


# -- 3. and 4. sign-in throttling has no race, and nobody can lock a TD out ----------------------------


@pytest.mark.live
@pytest.mark.parametrize("route", ["/api/session", "/api/td-check"])
def test_forty_concurrent_wrong_passwords_from_one_address_check_at_most_five(live: LiveServer, route: str) -> None:
    store = access_store(live.data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()

    def guess(n: int) -> int:
        body = {"name": "alice", "password": f"wrong guess number {n}"}
        return httpx.post(f"{live.base}{route}", json=body, timeout=60).status_code

    with concurrent.futures.ThreadPoolExecutor(40) as pool:
        statuses = list(pool.map(guess, range(40)))
    checked = statuses.count(401)  # a 401 is a password that was checked and found wrong
    print(
        f"\n{route}: 40 concurrent wrong passwords from one address: {checked} checked, {statuses.count(429)} refused"
    )
    assert checked <= LOGIN_FAILURES
    assert checked + statuses.count(429) == 40


@pytest.mark.live
def test_wrong_passwords_from_one_address_do_not_lock_the_td_out(live: LiveServer) -> None:
    store = access_store(live.data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()
    with _from("127.0.0.2") as attacker, _from("127.0.0.1") as alice:
        for _ in range(3):  # and again, after each refusal: repeatable, as the attack was
            statuses = [
                attacker.post(f"{live.base}/api/session", json={"name": "alice", "password": "guess-guess"}).status_code
                for _ in range(LOGIN_FAILURES + 1)
            ]
            assert statuses[-1] == 429
            assert (
                alice.post(f"{live.base}/api/td-check", json={"name": "alice", "password": PASSWORD}).status_code == 200
            )
            signed_in = alice.post(f"{live.base}/api/session", json={"name": "alice", "password": PASSWORD})
            assert signed_in.status_code == 201
        td = {"X-CSRF-Token": signed_in.json()["csrf_token"]}
        kinds = {(a["kind"], a["actor"]) for a in alice.get(f"{live.base}/api/alerts", headers=td).json()["alerts"]}
        assert ("login_guessing", "alice") in kinds
        assert ("login_throttled", "127.0.0.2") in kinds


# -- 5. alerts cannot be flooded away ------------------------------------------------------------------


def test_a_flood_of_throttled_sign_ins_does_not_bury_a_kiosks_alert(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=1)
    store = AccessStore(StateLocation(data_dir), hasher=CHEAP_HASHER, challenges_per_minute=1).open()
    try:
        kiosk = store.devices.authenticate(store.devices.add("kiosk-1", Role.KIOSK, by="test").token, client="10.0.0.5")
        store.limits.spend_challenge(kiosk)
        with pytest.raises(Exception, match="too many challenges"):
            store.limits.spend_challenge(kiosk)  # the real alert
        for n in range(300):  # 300 sign-ins with new names from one address, all but 5 throttled
            with pytest.raises(Exception, match=r"wrong TD name|too many failed"):
                store.tds.login(f"nobody-{n}", "wrong password", client="10.0.0.66")
        for n in range(300):  # and 300 from as many addresses
            store.alerts.raise_alert("enrol_throttled", f"10.1.{n // 250}.{n % 250}", "too many wrong pairing codes")
        alerts = store.alerts.latest()
        by_kind = {kind: [a for a in alerts if a.kind == kind] for kind in {a.kind for a in alerts}}
        assert [a.actor for a in by_kind["rate_limit"]] == ["kiosk-1"]  # still listed
        [throttled] = by_kind["login_throttled"]  # one row, keyed by address, counting the flood
        assert (throttled.actor, throttled.count) == ("10.0.0.66", 295)
        # NEW_PER_WINDOW rows, and the rest counted in one "suppressed" row: all listed, nothing lost
        assert len(by_kind["enrol_throttled"]) == NEW_PER_WINDOW + 1 <= LISTED_PER_KIND
        assert sum(a.count for a in by_kind["enrol_throttled"]) == 300
        assert [a.count for a in by_kind["enrol_throttled"] if a.actor == "*"] == [300 - NEW_PER_WINDOW]
        assert len(store.alerts._open) <= 3 * NEW_PER_WINDOW  # bounded memory, whatever the flood
    finally:
        store.close()


# -- 8. smaller ones -------------------------------------------------------------------------------------


def test_a_td_cannot_rule_on_their_own_adjudication(client: TestClient, actors: Actors) -> None:
    record = client.post("/api/challenges", json=challenge("cat qzx"), headers=actors.alice).json()["id"]
    recheck = client.post(
        f"/api/challenges/{record}/recheck", json={"request_id": uuid.uuid4().hex}, headers=actors.bob
    )
    assert recheck.status_code == 201
    ruling = {"verdict": "acceptable", "note": "my own", "request_id": uuid.uuid4().hex}
    assert_error_shape(
        client.post(f"/api/challenges/{record}/ruling", json=ruling, headers=actors.alice), 403, "forbidden"
    )
    assert client.post(f"/api/challenges/{record}/ruling", json=ruling, headers=actors.bob).status_code == 201


def test_a_rate_limited_device_reusing_a_request_id_with_other_words_gets_409(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=1)
    from wordjudge.service.settings import Settings
    from wordjudge.web.app import create_app

    kiosk = device_headers(data_dir, "kiosk-1")
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        first = challenge("cat dog")
        assert client.post("/api/challenges", json=first, headers=kiosk).status_code == 201
        assert client.post("/api/challenges", json=challenge(), headers=kiosk).status_code == 429  # over the limit
        assert client.post("/api/challenges", json=first, headers=kiosk).status_code == 200  # a retry is answered
        other = {**first, "words": "cat qzx"}
        assert_error_shape(client.post("/api/challenges", json=other, headers=kiosk), 409, "conflict")


def test_csv_export_neutralises_formulas(client: TestClient, actors: Actors) -> None:
    record = client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk).json()["id"]
    notes = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "plain"]
    for note in notes:
        body = {"verdict": "acceptable", "note": note, "request_id": uuid.uuid4().hex}
        assert client.post(f"/api/challenges/{record}/ruling", json=body, headers=actors.alice).status_code == 201
    rows = list(csv.DictReader(io.StringIO(client.get("/api/export?format=csv", headers=actors.alice).text)))
    assert [row["note"] for row in rows if row["kind"] == "ruling"] == [
        '\'=HYPERLINK("http://x")',
        "'+1+1",
        "'-2+3",
        "'@SUM(A1)",
        "plain",
    ]
    jsonl = client.get("/api/export?format=jsonl", headers=actors.alice).text.splitlines()
    assert [json.loads(line)["note"] for line in jsonl[1:]] == notes  # as they are


@pytest.mark.parametrize("name", ["Spring\x7fOpen", "Spring\nOpen", "Open \u202egnirpS", "Open\u200b", "Open\x00"])
def test_an_event_name_with_a_control_character_is_refused_and_the_file_always_loads(
    event_client: TestClient, actors: Actors, data_dir: Path, name: str
) -> None:
    event = {
        "name": "Spring Open",
        "rounds": True,
        "challenges_per_minute": 6,
        "kiosk_result_seconds": 10,
        "division": [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}],
    }
    assert event_client.put("/api/event", json=event, headers=actors.alice).status_code == 200
    refused = event_client.put("/api/event", json={**event, "name": name}, headers=actors.alice)
    assert "U+" in assert_error_shape(refused, 422, "invalid_input")["error"]
    division = {**event, "division": [{"name": name, "lexicon": "demo", "rule": "five-per-word"}]}
    assert_error_shape(event_client.put("/api/event", json=division, headers=actors.alice), 422, "invalid_input")
    assert tomllib.loads((data_dir / "event.toml").read_text())["name"] == "Spring Open"


@pytest.mark.live
@pytest.mark.sqlite_only("checks the modes of the SQLite files")
def test_the_data_folder_and_its_databases_are_private_whatever_the_umask(tmp_path: Path, data_dir: Path) -> None:
    fresh = tmp_path / "fresh"
    script = Path(sys.executable).with_name("wordjudge")
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(fresh)}

    def umask_022() -> None:
        os.umask(0o022)  # what a shell usually has: files readable by every account

    for command in (["device", "add", "kiosk-1", "--role", "kiosk"], ["event", "init"]):
        done = subprocess.run([str(script), *command], env=env, capture_output=True, text=True, preexec_fn=umask_022)
        assert done.returncode == 0, done.stderr
    port = free_port()
    server = subprocess.Popen(
        [str(script), "serve", "--port", str(port)], env=env, preexec_fn=umask_022, stdout=subprocess.DEVNULL, text=True
    )
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        # While it runs: the -wal and -shm files too (a clean stop removes them).
        modes = {p: stat.S_IMODE(p.stat().st_mode) for p in fresh.iterdir() if p.is_file()}
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert {p.name for p in modes} >= {"access.sqlite3", "audit.sqlite3", "audit.sqlite3-wal", "event.toml"}
    os.chmod(data_dir, 0o755)  # a folder made before this fix: opening it closes it up
    (data_dir / AUDIT_FILE).touch(mode=0o644)
    (data_dir / AUDIT_FILE).chmod(0o644)
    old = audit_log(data_dir)
    old.start()
    old.close()
    for folder in (fresh, data_dir):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    modes[data_dir / AUDIT_FILE] = stat.S_IMODE((data_dir / AUDIT_FILE).stat().st_mode)
    for path, mode in modes.items():
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


def test_a_huge_last_event_id_is_ignored_not_a_500(client: TestClient, actors: Actors) -> None:
    for last in ("9" * 5000, "²", "-1", "12abc"):
        headers = [*((k, v) for k, v in actors.alice.items()), ("Last-Event-ID", last)]
        response = client.get("/api/feed?seconds=0.1", headers=[(k.encode(), v.encode("utf-8")) for k, v in headers])
        assert response.status_code == 200, (last[:10], response.text[:200])
