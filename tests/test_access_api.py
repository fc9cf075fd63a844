"""Access control over HTTP: every route as every kind of caller, sign-in, pairing, revocation, limits."""

from __future__ import annotations

import re
import ssl
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from wordjudge.access.access_store import ACCESS_FILE
from wordjudge.base.errors import DeviceMoved
from wordjudge.model.auth import Role
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.web.deps import CSRF_HEADER, SESSION_COOKIE

from .helpers import (
    CHEAP_HASHER,
    PASSWORD,
    Actors,
    access_store,
    assert_error_shape,
    database_of,
    device_headers,
    td_headers,
    write_event,
)

CALLERS = ("anonymous", "kiosk", "runner", "revoked", "td", "monitor")
EVENT = {
    "name": "Test Open",
    "rounds": True,
    "challenges_per_minute": 0,
    "kiosk_result_seconds": 10,
    "division": [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}],
}
_PER_WORD_KEYS = {"results", "source", "sources"}


def challenge(words: str = "cat dog", **extra: Any) -> dict[str, Any]:
    return {"division": "Open", "table": 7, "round": 2, "words": words, "request_id": uuid.uuid4().hex, **extra}


class World:
    """A data dir with one of each caller, a kiosk's record, and fresh things for routes that use them up."""

    def __init__(self, data_dir: Path, client: TestClient) -> None:
        self.data_dir = data_dir
        self.headers = {
            "anonymous": {},
            "kiosk": device_headers(data_dir, "kiosk-1"),
            "runner": device_headers(data_dir, "runner-1", Role.RUNNER),
            "revoked": device_headers(data_dir, "kiosk-old"),
            "td": td_headers(data_dir, "alice"),
            "monitor": device_headers(data_dir, "prometheus", Role.MONITOR),
        }
        store = access_store(data_dir)
        store.tds.add("bob", PASSWORD, by="test")
        store.devices.revoke("kiosk-old", by="test")
        store.close()
        response = client.post("/api/challenges", json=challenge(), headers=self.headers["kiosk"])
        assert response.status_code == 201, response.text
        self.record = response.json()["id"]
        self.serial = 0

    def fresh_code(self) -> str:
        store = access_store(self.data_dir)
        try:
            return store.pairing.create_code(Role.KIOSK, by="test").code
        finally:
            store.close()

    def fresh_name(self) -> str:
        self.serial += 1
        return f"deputy-{self.serial}"

    def fresh_td(self) -> str:
        name = self.fresh_name()
        store = access_store(self.data_dir)
        try:
            store.tds.add(name, PASSWORD, by="test")
        finally:
            store.close()
        return name

    def fresh_sheet_name(self) -> str:
        self.serial += 1
        return f"sheet-{self.serial}"

    def fresh_device(self) -> str:
        self.serial += 1
        device_headers(self.data_dir, f"victim-{self.serial}")
        return f"victim-{self.serial}"

    def fresh_move(self) -> str:
        """A device whose token was refused from another address than its own: it moved to 10.0.0.9."""
        self.serial += 1
        store = access_store(self.data_dir)
        try:
            token = store.devices.add(f"moved-{self.serial}", Role.KIOSK, by="test").token
            store.devices.authenticate(token, client="10.0.0.8")
            with pytest.raises(DeviceMoved):
                store.devices.authenticate(token, client="10.0.0.9")
        finally:
            store.close()
        return f"moved-{self.serial}"


# (method, path, body, expected status for each of CALLERS). Paths and bodies are made per call.
# A monitor's token reads /metrics and nothing else: every other route that needs a credential
# refuses it (403), and the public ones answer it as they answer anyone.
Row = tuple[str, Callable[[World], str], Callable[[World], dict[str, Any] | None], tuple[int, ...]]
ROUTES: list[Row] = [
    ("GET", lambda w: "/api/health", lambda w: None, (200, 200, 200, 200, 200, 200)),
    ("GET", lambda w: "/metrics", lambda w: None, (401, 403, 403, 401, 200, 200)),
    ("GET", lambda w: "/api/event", lambda w: None, (401, 200, 200, 401, 200, 403)),
    ("GET", lambda w: "/api/lexicons", lambda w: None, (401, 200, 200, 401, 200, 403)),
    ("POST", lambda w: "/api/challenges", lambda w: challenge(), (401, 201, 201, 401, 201, 403)),
    ("GET", lambda w: "/api/challenges", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("GET", lambda w: f"/api/challenges/{w.record}", lambda w: None, (401, 200, 404, 401, 200, 403)),
    ("GET", lambda w: "/api/challenges/mine", lambda w: None, (401, 200, 200, 401, 200, 403)),
    ("GET", lambda w: f"/api/challenges/{w.record}/docket", lambda w: None, (401, 200, 404, 401, 200, 403)),
    (
        "POST",
        lambda w: f"/api/challenges/{w.record}/recheck",
        lambda w: {"request_id": uuid.uuid4().hex},
        (401, 403, 403, 401, 201, 403),
    ),
    (
        "POST",
        lambda w: f"/api/challenges/{w.record}/reissue",
        lambda w: {"words": "cats", "reason": "slip", "request_id": uuid.uuid4().hex},
        (401, 403, 403, 401, 201, 403),
    ),
    (
        "POST",
        lambda w: f"/api/challenges/{w.record}/ruling",
        lambda w: {"verdict": "acceptable", "note": "TD", "request_id": uuid.uuid4().hex},
        (401, 403, 403, 401, 201, 403),
    ),
    ("GET", lambda w: "/api/audit/verify", lambda w: None, (401, 403, 403, 401, 200, 403)),
    # The TD alone accepts the clock's correction; nothing is held here: 409, nothing written (issue 44).
    ("POST", lambda w: "/api/clock/accept-correction", lambda w: None, (401, 403, 403, 401, 409, 403)),
    ("GET", lambda w: "/api/audit/head", lambda w: None, (401, 403, 403, 401, 200, 200)),
    ("GET", lambda w: "/api/challenges/requests/never-sent-0001", lambda w: None, (401, 404, 404, 401, 404, 403)),
    ("POST", lambda w: "/api/session", lambda w: {"name": "bob", "password": PASSWORD}, (201, 201, 201, 201, 201, 201)),
    (
        "POST",
        lambda w: "/api/td-check",
        lambda w: {"name": "bob", "password": PASSWORD},
        (200, 200, 200, 200, 200, 200),
    ),
    ("GET", lambda w: "/api/session", lambda w: None, (401, 200, 200, 401, 200, 403)),
    ("POST", lambda w: "/api/pairing-codes", lambda w: {"role": "runner"}, (401, 403, 403, 401, 201, 403)),
    (
        "POST",
        lambda w: "/api/pairing-sheets",
        lambda w: {"role": "runner", "devices": [{"name": w.fresh_sheet_name()}]},
        (401, 403, 403, 401, 201, 403),
    ),
    ("POST", lambda w: "/api/enrol", lambda w: {"code": w.fresh_code()}, (201, 201, 201, 201, 201, 201)),
    ("GET", lambda w: "/api/devices", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("POST", lambda w: f"/api/devices/{w.fresh_device()}/revoke", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("POST", lambda w: f"/api/devices/{w.fresh_device()}/pairing-code", lambda w: None, (401, 403, 403, 401, 201, 403)),
    (
        "POST",
        lambda w: f"/api/devices/{w.fresh_move()}/accept-move",
        lambda w: {"client": "10.0.0.9"},
        (401, 403, 403, 401, 200, 403),
    ),
    ("GET", lambda w: "/api/alerts", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("POST", lambda w: "/api/alerts/999999/acknowledge", lambda w: None, (401, 403, 403, 401, 404, 403)),
    ("GET", lambda w: "/api/feed?seconds=0.2", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("GET", lambda w: "/api/export?format=jsonl", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("GET", lambda w: "/api/summary", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("GET", lambda w: "/api/tds", lambda w: None, (401, 403, 403, 401, 200, 403)),
    (
        "POST",
        lambda w: "/api/tds",
        lambda w: {"name": w.fresh_name(), "password": PASSWORD},
        (401, 403, 403, 401, 201, 403),
    ),
    ("POST", lambda w: f"/api/tds/{w.fresh_td()}/disable", lambda w: None, (401, 403, 403, 401, 200, 403)),
    ("PUT", lambda w: "/api/event", lambda w: EVENT, (401, 403, 403, 401, 200, 403)),
    ("POST", lambda w: "/api/event/preview", lambda w: EVENT, (401, 403, 403, 401, 200, 403)),
    ("PUT", lambda w: "/api/event/round", lambda w: {"current_round": 2}, (401, 403, 403, 401, 200, 403)),
    ("GET", lambda w: "/api/lexicons/available", lambda w: None, (401, 403, 403, 401, 200, 403)),
    # The hall's proofs: anyone may ask; a claim proves something only to a holder of the hall key, a proof only to
    # the holder of the proof key of the secret its hint names (none here: answered alike, with a MAC no key checks).
    ("GET", lambda w: f"/api/hall/claim?nonce={'ab' * 16}", lambda w: None, (200, 200, 200, 200, 200, 200)),
    (
        "GET",
        lambda w: f"/api/hall/proof?nonce={'ab' * 16}&hint={'0' * 16}&of=device",
        lambda w: None,
        (200, 200, 200, 200, 200, 200),
    ),
    ("DELETE", lambda w: "/api/session", lambda w: None, (401, 200, 200, 401, 200, 403)),  # last: ends the TD's session
]
PUBLIC_PAGES = [
    "/",
    "/kiosk",
    "/runner",
    "/td",
    "/docket",
    "/sw.js",
    "/static/shared/app.css",
    "/static/status/status.js",
    "/static/kiosk/kiosk.js",
    "/docs",
    "/docs-files/swagger-ui-bundle.js",
    "/openapi.json",
]


def per_word_keys(value: Any) -> set[str]:
    """Keys anywhere in a JSON value that would tell which word passed or failed."""
    if isinstance(value, dict):
        found = _PER_WORD_KEYS & set(value)
        return found.union(*(per_word_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(per_word_keys(v) for v in value))
    return set()


def test_every_route_as_every_caller(app: FastAPI, data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=0)
    with TestClient(app) as client:
        world = World(data_dir, client)
        schema_routes = {(m.upper(), p) for p, item in app.openapi()["paths"].items() for m in item}
        table_routes = {
            (method, path(world).replace(f"/challenges/{world.record}", "/challenges/{record_id}").split("?")[0])
            for method, path, *_ in ROUTES
        }
        table_routes = {(m, re.sub(r"/(victim|deputy|moved)-\d+/", "/{name}/", p)) for m, p in table_routes}
        table_routes = {(m, re.sub(r"/requests/[^/]+$", "/requests/{request_id}", p)) for m, p in table_routes}
        table_routes = {(m, re.sub(r"/alerts/\d+/", "/alerts/{alert_id}/", p)) for m, p in table_routes}
        assert table_routes == schema_routes  # a new route must get a row here
        failures = []
        for caller, headers in world.headers.items():
            for method, path, body, expected in ROUTES:
                url = path(world)
                client.cookies.clear()  # a sign-in's cookie must not stick to the next caller
                response = client.request(method, url, json=body(world), headers=headers)
                want = expected[CALLERS.index(caller)]
                if response.status_code != want:
                    failures.append(f"{caller} {method} {url}: {response.status_code}, expected {want}")
                if response.status_code >= 400:
                    assert_error_shape(response, response.status_code, response.json()["code"])
                if caller != "td" and response.headers["content-type"].startswith("application/json"):
                    assert not per_word_keys(response.json()), (caller, method, url)
            for page in PUBLIC_PAGES:
                assert client.get(page, headers=headers).status_code == 200, (caller, page)
        assert not failures, "\n".join(failures)


def test_device_responses_never_carry_per_word_results(client: TestClient, actors: Actors, data_dir: Path) -> None:
    responses = []
    for headers in (actors.kiosk, actors.runner):
        sent = challenge("cat qi dog")
        responses.append(client.post("/api/challenges", json=sent, headers=headers))  # unacceptable: QI
        responses.append(client.post("/api/challenges", json=sent, headers=headers))  # a retry
        responses.append(client.post("/api/challenges", json={**sent, "words": "cat"}, headers=headers))  # 409
        responses.append(client.get(f"/api/challenges/{responses[0].json()['id']}", headers=headers))
        responses.append(client.post("/api/challenges", json=challenge("cat qi x"), headers=headers))  # 422
        responses.append(client.post(f"/api/challenges/{responses[0].json()['id']}/recheck", json={}, headers=headers))
        responses.append(client.get("/api/challenges", headers=headers))  # 403
    assert sorted({r.status_code for r in responses}) == [200, 201, 403, 404, 409, 422]
    for response in responses:
        assert not per_word_keys(response.json()), response.text
        assert "not acceptable" not in response.text.replace("unacceptable", "")
    td = client.get(f"/api/challenges/{responses[0].json()['id']}", headers=actors.alice).json()
    assert [r["acceptable"] for r in td["results"]] == [True, False, True]


def test_sign_in_sets_a_strict_http_only_cookie_and_unsafe_requests_need_the_csrf_token(
    client: TestClient, data_dir: Path
) -> None:
    store = access_store(data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()
    wrong = client.post("/api/session", json={"name": "alice", "password": "not the password"})
    assert "wrong TD name or password" in assert_error_shape(wrong, 401, "unauthorized")["error"]
    response = client.post("/api/session", json={"name": "alice", "password": PASSWORD})
    assert response.status_code == 201
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    for attribute in ("HttpOnly", "SameSite=strict", "Path=/"):
        assert attribute.lower() in cookie.lower(), cookie
    assert "secure" not in cookie.lower()  # plain HTTP: a Secure cookie would never come back
    csrf, proof_key = response.json()["csrf_token"], response.json()["proof_key"]
    assert re.fullmatch(r"[0-9a-f]{64}", proof_key), proof_key
    assert client.get("/api/challenges").status_code == 200  # the cookie alone is enough to read
    assert client.get("/api/session").json() == {
        "actor": "alice",
        "role": "td",
        "channel": "console",
        "division": None,
        "csrf_token": csrf,
        "proof_key": proof_key,
    }
    no_token = client.post("/api/pairing-codes", json={"role": "kiosk"})
    assert "X-CSRF-Token" in assert_error_shape(no_token, 403, "forbidden")["error"]
    wrong_token = client.post("/api/pairing-codes", json={"role": "kiosk"}, headers={CSRF_HEADER: csrf + "x"})
    assert_error_shape(wrong_token, 403, "forbidden")
    assert client.post("/api/pairing-codes", json={"role": "kiosk"}, headers={CSRF_HEADER: csrf}).status_code == 201
    assert client.request("DELETE", "/api/session", headers={CSRF_HEADER: csrf}).status_code == 200
    client.cookies.set(SESSION_COOKIE, response.cookies[SESSION_COOKIE])  # a copy of the old cookie is dead
    assert_error_shape(client.get("/api/challenges"), 401, "unauthorized")


@pytest.mark.parametrize("cheap", [False, True])
def test_the_server_hashes_td_passwords_at_full_cost_unless_a_test_hands_in_its_hasher(
    settings: Settings, data_dir: Path, cheap: bool
) -> None:
    alice = td_headers(data_dir, "alice")
    app = create_app(settings, hasher=CHEAP_HASHER) if cheap else create_app(settings)  # the latter: as serve does
    with TestClient(app) as client:
        added = client.post("/api/tds", json={"name": "bob", "password": PASSWORD}, headers=alice)
        assert added.status_code == 201, added.text
    store = access_store(data_dir)
    try:
        (stored,) = store.database._connection.execute("SELECT password_hash FROM tds WHERE name = 'bob'").fetchone()  # type: ignore[union-attr]
    finally:
        store.close()
    assert stored.startswith("$argon2id$v=19$m=8,t=1,p=1$" if cheap else "$argon2id$v=19$m=65536,t=3,p=4$")


def test_failed_logins_are_throttled_over_http(client: TestClient, data_dir: Path) -> None:
    store = access_store(data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()
    statuses = [
        client.post("/api/session", json={"name": "alice", "password": f"guess number {n}"}).status_code
        for n in range(6)
    ]
    assert statuses == [401] * 5 + [429]
    refused = client.post("/api/session", json={"name": "alice", "password": PASSWORD})
    body = assert_error_shape(refused, 429, "rate_limited")
    assert int(refused.headers["retry-after"]) == body["details"]["retry_after"] > 0


def test_pairing_over_http_then_revocation(client: TestClient, actors: Actors) -> None:
    created = client.post("/api/pairing-codes", json={"role": "runner", "name": "Runner Ann"}, headers=actors.alice)
    assert created.status_code == 201, created.text
    code = created.json()
    assert code["link"] == f"http://testserver/runner#pair={code['code']}"
    assert code["qr_svg"].startswith("<svg")
    assert code["qr_svg"].endswith("</svg>")
    enrolled = client.post("/api/enrol", json={"code": code["code"]})
    assert enrolled.status_code == 201
    token = enrolled.json()["token"]
    device = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/session", headers=device).json()["actor"] == "Runner Ann"
    assert client.post("/api/challenges", json=challenge(), headers=device).json()["verdict"] == "acceptable"
    again = client.post("/api/enrol", json={"code": code["code"]})
    assert "used already" in assert_error_shape(again, 401, "unauthorized")["error"]
    listed = client.get("/api/devices", headers=actors.alice).json()["devices"]
    ann = next(d for d in listed if d["name"] == "Runner Ann")
    assert (ann["role"], ann["online"], ann["revoked_at"]) == ("runner", True, None)
    assert client.post("/api/devices/Runner Ann/revoke", headers=actors.alice).json()["revoked_by"] == "alice"
    refused = client.post("/api/challenges", json=challenge(), headers=device)
    assert "revoked by the TD" in assert_error_shape(refused, 401, "unauthorized")["error"]
    assert refused.headers["www-authenticate"].startswith("Bearer")


def test_the_td_pairs_a_revoked_device_again_and_its_old_token_stops_working(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    old = device_headers(data_dir, "kiosk-09", division="Open")
    assert client.post("/api/challenges", json=challenge(), headers=old).status_code == 201
    assert client.post("/api/devices/kiosk-09/revoke", headers=actors.alice).status_code == 200
    refused = client.post("/api/devices/kiosk-09/pairing-code", headers=actors.kiosk)
    assert "only the TD may pair a device again" in assert_error_shape(refused, 403, "forbidden")["error"]
    created = client.post("/api/devices/kiosk-09/pairing-code", headers=actors.alice)
    assert created.status_code == 201, created.text
    code = created.json()
    assert (code["device_name"], code["role"], code["division"], code["repair"]) == ("kiosk-09", "kiosk", "Open", True)
    assert code["link"] == f"http://testserver/kiosk#pair={code['code']}"
    assert code["qr_svg"].startswith("<svg")
    enrolled = client.post("/api/enrol", json={"code": code["code"]})
    assert enrolled.status_code == 201, enrolled.text
    assert (enrolled.json()["device"]["name"], enrolled.json()["device"]["revoked_at"]) == ("kiosk-09", None)
    new = {"Authorization": f"Bearer {enrolled.json()['token']}"}
    assert client.get("/api/session", headers=new).json()["actor"] == "kiosk-09"
    assert client.post("/api/challenges", json=challenge(), headers=new).status_code == 201
    gone = client.post("/api/challenges", json=challenge(), headers=old)
    assert "not valid" in assert_error_shape(gone, 401, "unauthorized")["error"]
    listed = [d for d in client.get("/api/devices", headers=actors.alice).json()["devices"] if d["name"] == "kiosk-09"]
    assert [(d["revoked_at"], d["online"]) for d in listed] == [(None, True)]
    unknown = client.post("/api/devices/nobody/pairing-code", headers=actors.alice)
    assert "no device named 'nobody'" in assert_error_shape(unknown, 404, "not_found")["error"]


def test_a_device_enrolled_for_a_division_stays_in_it(app: FastAPI, data_dir: Path) -> None:
    write_event(data_dir, [("A", "demo", "single"), ("B", "demo", "double")])
    with TestClient(app) as restarted:
        kiosk = device_headers(data_dir, "kiosk-a", division="A")
        assert restarted.post("/api/challenges", json=challenge(division="a"), headers=kiosk).status_code == 201
        other = restarted.post("/api/challenges", json=challenge(division="B"), headers=kiosk)
        assert "enrolled for division A, not B" in assert_error_shape(other, 403, "forbidden")["error"]


def test_the_challenge_rate_limit_refuses_new_challenges_but_answers_retries(
    app: FastAPI, data_dir: Path, actors: Actors
) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=2)
    with TestClient(app) as client:
        sent = [challenge() for _ in range(3)]
        assert [client.post("/api/challenges", json=s, headers=actors.kiosk).status_code for s in sent] == [
            201,
            201,
            429,
        ]
        refused = client.post("/api/challenges", json=sent[2], headers=actors.kiosk)
        assert "too many challenges from this kiosk" in assert_error_shape(refused, 429, "rate_limited")["error"]
        retry = client.post("/api/challenges", json=sent[0], headers=actors.kiosk)  # lost response: still answered
        assert (retry.status_code, retry.json()["replayed"]) == (200, True)
        bad = client.post("/api/challenges", json=challenge("x"), headers=actors.kiosk2)  # refused input is free
        assert bad.status_code == 422
        assert client.post("/api/challenges", json=challenge(), headers=actors.kiosk2).status_code == 201
        assert client.post("/api/challenges", json=challenge(), headers=actors.kiosk2).status_code == 201
        assert all(
            client.post("/api/challenges", json=challenge(), headers=actors.alice).status_code == 201 for _ in range(5)
        )
        alerts = client.get("/api/alerts", headers=actors.alice).json()["alerts"]
        assert [(a["kind"], a["actor"]) for a in alerts] == [("rate_limit", "kiosk-1")]
        assert client.get("/api/health").json()["audit"]["records"] == 9


def test_security_headers_on_pages_api_and_errors(client: TestClient) -> None:
    for path in ("/", "/api/health", "/api/challenges", "/static/shared/app.css", "/nowhere"):
        headers = client.get(path).headers
        assert "script-src 'self';" in headers["content-security-policy"], path
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert (headers["x-frame-options"], headers["x-content-type-options"]) == ("DENY", "nosniff")
        assert headers["referrer-policy"] == "no-referrer"
    assert "unsafe-inline" in client.get("/docs").headers["content-security-policy"]  # Swagger UI alone


@pytest.mark.live
def test_tls_serves_https_with_a_secure_cookie(data_dir: Path, tmp_path: Path) -> None:
    from .helpers import free_port, serve_process, wait_for_health

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    make_certificate(cert, key)
    store = access_store(data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()
    port = free_port()
    server = serve_process(data_dir, "--port", str(port), "--certfile", str(cert), "--keyfile", str(key))
    try:
        base = f"https://127.0.0.1:{port}"
        wait_for_health(base, server, verify=ssl.create_default_context(cafile=cert))
        with httpx.Client(base_url=base, verify=ssl.create_default_context(cafile=cert)) as https:
            response = https.post("/api/session", json={"name": "alice", "password": PASSWORD})
            assert response.status_code == 201
            assert "secure" in response.headers["set-cookie"].lower()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)
    finally:
        server.terminate()
        server.communicate(timeout=30)
    if database_of(data_dir) is None:  # (in a database, the TD's sign-in above shows it was this folder's)
        assert (data_dir / ACCESS_FILE).exists()


def make_certificate(cert: Path, key: Path) -> None:
    """A self-signed certificate for 127.0.0.1, made with the openssl command."""
    import subprocess

    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )


def test_a_hall_is_paired_from_one_printed_sheet_of_named_codes(client: TestClient, actors: Actors) -> None:
    hall = [{"name": f"kiosk-{n:02d}", "division": "Open"} for n in range(1, 41)]
    sheet = client.post("/api/pairing-sheets", json={"role": "kiosk", "devices": hall}, headers=actors.alice)
    assert sheet.status_code == 201, sheet.text
    codes = sheet.json()["codes"]
    assert [c["device_name"] for c in codes] == [f"kiosk-{n:02d}" for n in range(1, 41)]
    assert len({c["code"] for c in codes}) == 40
    assert all(c["qr_svg"].startswith("<svg") and c["code"] in c["link"].upper() for c in codes)
    # Each code enrols its own named kiosk, in its division, once.
    enrolled = client.post("/api/enrol", json={"code": codes[6]["code"]}).json()["device"]
    assert (enrolled["name"], enrolled["division"], enrolled["role"]) == ("kiosk-07", "Open", "kiosk")
    # All or none: a name taken or given twice, or too many codes open, creates no code at all.
    twice = client.post(
        "/api/pairing-sheets",
        json={"role": "kiosk", "devices": [{"name": "k-a"}, {"name": "K-A"}]},
        headers=actors.alice,
    )
    assert "k-a is asked for twice" in assert_error_shape(twice, 422, "invalid_input")["error"]
    taken = client.post(
        "/api/pairing-sheets",
        json={"role": "kiosk", "devices": [{"name": "new-1"}, {"name": "kiosk-07"}]},
        headers=actors.alice,
    )
    assert_error_shape(taken, 409, "conflict")
    more = [{"name": f"extra-{n}"} for n in range(30)]
    over = client.post("/api/pairing-sheets", json={"role": "runner", "devices": more}, headers=actors.alice)
    assert "39 pairing codes are open already and 30 more" in assert_error_shape(over, 409, "conflict")["error"]
    assert (
        client.post(
            "/api/pairing-sheets", json={"role": "kiosk", "devices": [{"name": "new-1"}]}, headers=actors.alice
        ).status_code
        == 201
    )  # (new-1 was not taken by the refusal)
    unknown = client.post(
        "/api/pairing-sheets",
        json={"role": "kiosk", "devices": [{"name": "x", "division": "Nope"}]},
        headers=actors.alice,
    )
    assert unknown.status_code in (404, 422)
