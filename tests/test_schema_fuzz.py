"""The API fuzzed from its own OpenAPI schema with schemathesis, in-process, as the TD (session cookie and
CSRF token) and as a kiosk (bearer token).

Every operation in ``/openapi.json`` gets schemathesis' coverage phase (boundary values, missing and
wrong-typed fields, methods the path does not answer) and its fuzzing phase (``MAX_EXAMPLES`` requests,
schema-valid and schema-violating). Under the fast profile of a plain pytest run (helpers.PROFILE) only the
fuzzing phase runs, with a fifth of the requests: the coverage phase's two thousand requests are most of the
fast suite's time, and .ci/check (the full profile) runs both phases in full. For every response:

- never a 5xx;
- every 4xx in the one documented error shape (``errors.error_body``, ``errors.ErrorBody`` in the schema);
- schemathesis' own checks: the status code, content type and body are those the schema documents (each
  success answer's model: wordjudge.web.answers*; response schema and content type conformance on), a
  405 names every method the path answers, a schema-violating request is refused, and a schema-valid
  one gets a 2xx or one of the refusals this API documents (401, 403, 404, 409, 422, 429);
- the credential in use keeps working: no request takes the caller's own access away.

Each operation runs against a fresh data dir copied from one prepared per session (an event without a
rate limit, two kiosks, a runner, TDs alice and bob, three records), so what one operation changes (the
event, revoked devices, disabled TDs) never reaches another. Each request drawn for an operation is sent by
both callers, the kiosk first, to one app on one data dir: sound, because neither can take the other's
access away, nor make the other's requests replays:

- a device cannot change the event, a device or a TD (every such route refuses it), and what it can do,
  a challenge, makes a record of its own (request ids are a caller's own);
- the TD can revoke or re-pair a device, but the devices its requests name (``_DICTIONARIES["names"]``)
  are kiosk-2 and runner-1, never kiosk-1, the kiosk whose requests are sent;
- sign-ins, TD checks and pairing codes count failures per client address, and every request here comes
  from one: the TD sends those operations' requests to an app of its own, or the kiosk's failures would
  throttle them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.core.failures import AcceptedNegativeData, Failure
from schemathesis.python.asgi import shutdown_lifespans

from wordjudge.base.errors import ErrorBody, error_schema
from wordjudge.model.auth import Role
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.web.deps import CSRF_HEADER, SESSION_COOKIE
from wordjudge.words.editions import DEMO_NAME

from .helpers import (
    CHEAP_HASHER,
    ERROR_KEYS,
    PASSWORD,
    PROFILE,
    access_store,
    assert_message_is_the_error,
    device_headers,
    examples,
    td_headers,
    write_event,
)

# Fuzzed requests per operation and actor, schema-valid and not (a fifth of them under the fast profile:
# helpers.examples); plus the coverage phase's, under the full profile.
MAX_EXAMPLES = examples(20)
COVERAGE_PHASE = PROFILE == "full"
FEED_TIMEOUT = 1.0  # the live feed never ends by itself: read what it sends in this long
FEED_EXAMPLES = 4 if PROFILE == "full" else 1  # each schema-valid request to the feed takes FEED_TIMEOUT

# Values the schema cannot know, offered most of the time so that schema-valid requests also reach the
# adjudication itself and the records, devices and TDs of the prepared data dir (below). The words are
# within the input rules, acceptable or not (QI, ZA and UNSELFCONSCIOUS are not in ENABLE); the strings
# generated from the schema the rest of the time are mostly outside them.
_CHALLENGED = ["cat dog", "qi, za", "Cat\r\ndog,,emu", "zyzzyva", "cat cat", "ab ad ae ag ah ai al am"]
_DICTIONARIES = {
    "divisions": {"values": ["Open", "Junior", "open"]},
    "tables": {"values": ["12", 7, "A-3", "0"]},
    "rounds": {"values": [1, 3, 999]},
    "words": {"values": [*_CHALLENGED, "acceptabilities", "unselfconscious"]},
    "records": {"values": [1, 2, 3, 4]},  # 4 is not there
    "names": {"values": ["kiosk-2", "runner-1", "alice", "bob", "ALICE"]},  # not kiosk-1: see the docstring
}
_OFTEN = 0.9  # the rest of the time, the value is generated from the schema as usual


def _from(dictionary: str) -> dict[str, object]:
    return {"dictionary": dictionary, "probability": _OFTEN}


_WORDS = {"body.words": _from("words")}
_RECORD = {"path.record_id": _from("records")}

CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {"max-examples": MAX_EXAMPLES, "mode": "all"},
        "phases": {
            "examples": {"enabled": False},
            "coverage": {"enabled": COVERAGE_PHASE},
            "fuzzing": {"enabled": True},
        },
        "checks": {
            # Every answer is what its operation documents: its content type, and its body (the models of
            # wordjudge.web.answers*), not only its status code.
            "response_schema_conformance": {"enabled": True},
            "content_type_conformance": {"enabled": True},
            # A schema-valid request may still be refused for what a schema cannot say: an unknown division,
            # a word outside the lexicon's alphabet (422), a record that is not there (404), a TD's route (403).
            "positive_data_acceptance": {"expected-statuses": ["2xx", "401", "403", "404", "409", "422", "429"]},
        },
        "dictionaries": _DICTIONARIES,
        "operations": [  # an operation's parameters come from the one entry that names it
            {
                "include-name": "POST /api/challenges",
                "parameters": {
                    "body.division": _from("divisions"),
                    "body.table": _from("tables"),
                    "body.round": _from("rounds"),
                    **_WORDS,
                },
                "generation": {"max-examples": 3 * MAX_EXAMPLES},  # the adjudication itself: more of it
            },
            {"include-name": "POST /api/challenges/{record_id}/reissue", "parameters": {**_WORDS, **_RECORD}},
            {
                "include-name": [
                    f"{method} /api/challenges/{{record_id}}{tail}"
                    for method, tail in (("GET", ""), ("GET", "/docket"), ("POST", "/recheck"), ("POST", "/ruling"))
                ],
                "parameters": _RECORD,
            },
            {
                "include-name": ["POST /api/devices/{name}/revoke", "POST /api/tds/{name}/disable"],
                "parameters": {"path.name": _from("names")},
            },
            # Each schema-valid request to the feed takes FEED_TIMEOUT; its filters are those of GET
            # /api/challenges, /api/export and /api/summary, which get the coverage phase.
            {
                "include-name": "GET /api/feed",
                "phases": {"coverage": {"enabled": False}},
                "generation": {"max-examples": FEED_EXAMPLES},
            },
        ],
    }
)

# The schema does not depend on the data dir: load it once, without starting the app.
SCHEMA = schemathesis.openapi.from_dict(create_app(Settings(data_dir=Path("unused"))).openapi(), config=CONFIG)

# Refusing a credential is right for these: a wrong TD name or password, a wrong pairing code.
_CHECKS_A_SECRET = {("POST", "/api/session"), ("POST", "/api/td-check"), ("POST", "/api/enrol")}


@SCHEMA.hook
def filter_failure(context: Any, failure: Failure, case: schemathesis.Case[Any], response: Any) -> bool:
    """Accept one known leniency: pydantic reads a number as a Unix time for a date-time query parameter
    (``since=0.5`` is 1970-01-01T00:00:00.5Z, in UTC), which the schema types as an ISO 8601 string."""
    query = case.query or {}
    return not (
        isinstance(failure, AcceptedNegativeData) and any(_is_number(query.get(name)) for name in ("since", "until"))
    )


def _is_number(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Prepared:
    """A data dir ready to fuzz, and the headers of its actors."""

    data_dir: Path
    td: dict[str, str]
    kiosk: dict[str, str]


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory, compiled_demo: Path) -> Prepared:
    data = tmp_path_factory.mktemp("fuzz") / "data"
    shutil.copytree(compiled_demo, data / "lexicons" / DEMO_NAME)
    write_event(data, [("Open", "demo", "five-per-word"), ("Junior", "demo", "double")], challenges_per_minute=0)
    kiosk = device_headers(data, "kiosk-1")  # the kiosk whose requests are sent
    device_headers(data, "kiosk-2")  # a kiosk the TD's requests name, to revoke or re-pair
    device_headers(data, "runner-1", Role.RUNNER, "Junior")
    alice, bob = td_headers(data, "alice"), td_headers(data, "bob")
    with TestClient(create_app(Settings(data_dir=data), hasher=CHEAP_HASHER)) as client:
        for words, request_id in (("cat dog", "fuzz-0001"), ("cat qi", "fuzz-0002")):
            body = {"division": "Open", "table": 1, "round": 1, "words": words, "request_id": request_id}
            assert client.post("/api/challenges", json=body, headers=kiosk).status_code == 201
        recheck = client.post("/api/challenges/2/recheck", json={"request_id": "fuzz-0003"}, headers=bob)
        assert recheck.status_code == 201  # records 1 and 2 the kiosk's, 3 bob's re-check; alice may rule on all
    return Prepared(data, alice, kiosk)


class Target:
    """The apps one operation is fuzzed on, each on a fresh copy of the prepared data dir, made when first
    asked for: the one both callers share, and the TD's own for the operations that check a secret."""

    def __init__(self, prepared: Prepared, folder: Path) -> None:
        self.prepared = prepared
        self.folder = folder
        self.apps: dict[str, tuple[FastAPI, Path]] = {}

    def app(self, name: str) -> tuple[FastAPI, Path]:
        """The app called ``name`` and its data dir."""
        if name not in self.apps:
            data = self.folder / name / "data"
            shutil.copytree(self.prepared.data_dir, data)
            # The TDs the fuzzing adds, and the sign-ins it tries, hash with the cheap test hasher (test_access
            # checks the server's own cost); Argon2id at full cost would make them most of the run.
            self.apps[name] = (create_app(Settings(data_dir=data), hasher=CHEAP_HASHER), data)
        return self.apps[name]


@pytest.fixture
def target(prepared: Prepared, tmp_path: Path) -> Iterator[Target]:
    """The apps of one operation. Schemathesis starts an app's lifespan at its first request and keeps it for
    the rest of the process; they are ended here with their operation, or each operation's apps would go on
    running their writers and their once-a-second watchers to the end."""
    yield Target(prepared, tmp_path)
    shutdown_lifespans()


def _send(case: schemathesis.Case[Any], app: FastAPI, headers: dict[str, str], caller: str) -> None:
    timeout = FEED_TIMEOUT if case.path == "/api/feed" else 60
    response = case.call(app=app, headers=headers, timeout=timeout)
    where = (
        f"as {caller}: {case.method} {case.formatted_path} {case.query or ''} -> {response.status_code}: "
        f"{response.text[:300]}"
    )
    assert response.status_code < 500, where
    if response.status_code >= 400:
        content_type = ";".join(response.headers.get("content-type", []))
        assert_error_shape(response.status_code, content_type, response.text, where)
    if response.status_code == 401:
        assert (case.method, case.path) in _CHECKS_A_SECRET, f"the caller's credential stopped working: {where}"
    case.validate_response(response)


def assert_error_shape(status: int, content_type: str, text: str, where: str) -> None:
    """The one error shape: ErrorBody's fields and nothing else, the status repeated, no traceback."""
    assert content_type.startswith("application/json"), where
    body = json.loads(text)
    assert set(body) == ERROR_KEYS, where
    parsed = ErrorBody.model_validate(body)
    assert parsed.status == status, where
    assert "Traceback" not in text, where
    assert_message_is_the_error(body)


FUZZ_SETTINGS = settings(
    deadline=None,
    # One app and data dir per operation, shared by its cases: the function-scoped fixture is the point.
    # Generating a request body can take a while on a busy machine; that is not a fault of the API.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SCHEMA.parametrize()
@FUZZ_SETTINGS
def test_fuzz_as_a_kiosk_then_as_the_td(case: schemathesis.Case[Any], target: Target) -> None:
    app, data_dir = target.app("shared")
    _send(case, app, target.prepared.kiosk, "the kiosk")
    if (case.method, case.path) in _CHECKS_A_SECRET:  # failures are counted per client address (the docstring)
        app, data_dir = target.app("the TD's own")
    headers = target.prepared.td
    if (case.method, case.path) == ("DELETE", "/api/session"):
        headers = _fresh_td_session(data_dir)  # each sign-out ends a session of its own
    _send(case, app, headers, "the TD")


def _fresh_td_session(data_dir: Path) -> dict[str, str]:
    store = access_store(data_dir)
    try:
        session = store.tds.login("alice", PASSWORD, client="fuzz")
    finally:
        store.close()
    return {"Cookie": f"{SESSION_COOKIE}={session.token}", CSRF_HEADER: session.csrf_token}


# -- what the fuzzing found, and the schema it relies on ---------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/api/event", "GET, PUT"),  # GET from the API's router, PUT from the console's
        ("PATCH", "/api/session", "GET, POST, DELETE"),
        ("PUT", "/api/challenges", "GET, POST"),
        ("GET", "/api/challenges/1/recheck", "POST"),
        ("POST", "/api/health", "GET"),
    ],
)
def test_a_405_names_every_method_the_path_answers(client: TestClient, method: str, path: str, allowed: str) -> None:
    # Found by the fuzzing (allow_header_conformance): Starlette's 405 named the methods of the first route
    # that matched the path only, so OPTIONS /api/event said "Allow: GET" although PUT /api/event exists.
    response = client.request(method, path)
    assert_error_shape(response.status_code, response.headers["content-type"], response.text, path)
    assert (response.status_code, response.headers["allow"]) == (405, allowed)


def test_the_schema_documents_the_one_error_shape_on_every_operation() -> None:
    schema = create_app(Settings(data_dir=Path("unused"))).openapi()
    operations = [(path, method, op) for path, item in schema["paths"].items() for method, op in item.items()]
    assert len(operations) >= 29
    for path, method, operation in operations:
        for status in ("4XX", "5XX"):
            documented = operation["responses"][status]["content"]
            assert list(documented) == ["application/json"], (method, path, status)
            assert documented["application/json"]["schema"] == error_schema(), (method, path)
        assert "422" not in operation["responses"], (method, path)  # FastAPI's own validation shape is not used
    assert "HTTPValidationError" not in schema.get("components", {}).get("schemas", {})
    responses = {
        path: item["get"]["responses"]["200"]["content"]
        for path, item in schema["paths"].items()
        if path in ("/api/feed", "/api/export")
    }
    assert list(responses["/api/feed"]) == ["text/event-stream"]
    assert sorted(responses["/api/export"]) == ["application/x-ndjson", "text/csv"]
