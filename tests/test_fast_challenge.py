"""POST /api/challenges served by its fast path (fast_challenge.py): the same answers as FastAPI's route gave."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fastapi.routing
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wordjudge.model.auth import Role
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.web.fast_challenge import ChallengeFastPath
from wordjudge.words.editions import DEMO_NAME

from .helpers import device_headers, examples, td_headers, write_event

BODY = {"division": "Open", "table": 12, "round": 3, "words": "cat qi", "request_id": "fast-path-0001"}


def _without_fast_path(app: FastAPI) -> FastAPI:
    """``app`` serving the route as FastAPI always did (the fast path taken out before the stack is built)."""
    app.user_middleware = [m for m in app.user_middleware if m.cls is not ChallengeFastPath]  # type: ignore[comparison-overlap]
    return app


@pytest.fixture
def two_servers(tmp_path: Path, compiled_demo: Path) -> Iterator[Callable[[bool], tuple[TestClient, dict[str, Any]]]]:
    """A server with the fast path and one without, each on a data folder of its own enrolled alike."""
    opened: list[TestClient] = []

    def open_one(fast: bool) -> tuple[TestClient, dict[str, Any]]:
        data = tmp_path / ("fast" if fast else "fastapi")
        shutil.copytree(compiled_demo, data / "lexicons" / DEMO_NAME)
        write_event(data, [("Open", "demo", "five-per-word")], challenges_per_minute=3)
        headers = {
            "kiosk": device_headers(data, "kiosk-1"),
            "monitor": device_headers(data, "prometheus", Role.MONITOR),
            "td": td_headers(data, "alice"),
        }
        app = create_app(Settings(data_dir=data))
        client = TestClient(app if fast else _without_fast_path(app))
        client.__enter__()
        opened.append(client)
        return client, headers

    yield open_one
    for client in opened:
        client.__exit__(None, None, None)


# Each step: (headers' owner or None, extra headers, body as JSON or raw bytes). Run in order on both servers.
STEPS: list[tuple[str | None, dict[str, str], Any]] = [
    ("kiosk", {}, BODY),  # 201, a verdict
    ("kiosk", {}, BODY),  # 200, the same record replayed
    ("kiosk", {}, {**BODY, "words": "cat dog"}),  # 409: the id of another request
    ("kiosk", {}, {**BODY, "request_id": "fast-path-0002", "words": "cat x"}),  # 422 from the adjudicator
    ("kiosk", {}, {**BODY, "request_id": "fast-path-0003", "colour": "red"}),  # 422 from the model
    ("kiosk", {}, {**BODY, "request_id": "x"}),  # 422 from the model
    ("kiosk", {}, b"{not json"),  # 422: not JSON
    ("kiosk", {}, b""),  # 422: no body
    ("kiosk", {"Content-Type": "text/plain"}, b'{"division": "Open"}'),  # 422: not declared JSON
    ("kiosk", {"Content-Type": "application/json; charset=utf-8"}, {**BODY, "request_id": "fast-path-0004"}),
    (None, {}, {**BODY, "request_id": "fast-path-0005"}),  # 401: no credential
    (None, {"Authorization": "Bearer wj_nonsense"}, {**BODY, "request_id": "fast-path-0006"}),  # 401
    (None, {"Authorization": "Basic abc"}, {**BODY, "request_id": "fast-path-0007"}),  # 401
    ("monitor", {}, {**BODY, "request_id": "fast-path-0008"}),  # 403: a monitor reads metrics only
    ("td", {}, {**BODY, "request_id": "fast-path-0009"}),  # 201: the TD, by session and CSRF token
    ("td", {"X-CSRF-Token": "wrong"}, {**BODY, "request_id": "fast-path-0010"}),  # 403: no CSRF token
    ("kiosk", {}, {**BODY, "request_id": "fast-path-0011", "words": ["cat", "dog"]}),  # 201
    ("kiosk", {}, {**BODY, "request_id": "fast-path-0012"}),  # 429: over 3 a minute
    ("kiosk", {}, BODY),  # 200: a retry is answered over the limit
]


def _send(client: TestClient, headers: dict[str, dict[str, str]], step: tuple[str | None, dict[str, str], Any]) -> Any:
    owner, extra, body = step
    sent = {**(headers[owner] if owner else {}), **extra}
    if isinstance(body, bytes):
        sent.setdefault("Content-Type", "application/json")
        return client.post("/api/challenges", content=body, headers=sent)
    return client.post("/api/challenges", json=body, headers=sent)


def _answer(response: Any) -> tuple[int, Any, dict[str, str]]:
    body = response.json()
    if isinstance(body, dict):
        body = {
            k: v for k, v in body.items() if k not in ("created_at", "hash", "prev_hash")
        }  # differ by the clock and salt
    kept = ("content-type", "retry-after", "www-authenticate", "x-frame-options", "content-security-policy")
    return response.status_code, body, {name: response.headers[name] for name in kept if name in response.headers}


def test_the_fast_path_answers_every_request_as_fastapis_route_did(two_servers: Any) -> None:
    fast, fast_headers = two_servers(True)
    slow, slow_headers = two_servers(False)
    for step in STEPS:
        assert _answer(_send(fast, fast_headers, step)) == _answer(_send(slow, slow_headers, step)), step
    statuses = [_send(fast, fast_headers, (None, {}, b""))]  # once more: it still refuses without a credential
    assert statuses[0].status_code == 401
    records = [client.get("/api/health").json()["audit"]["records"] for client in (fast, slow)]
    assert records == [4, 4]


def test_a_valid_challenge_is_served_without_fastapis_dependency_solver(
    client: TestClient, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the fast path saves (issue 19): FastAPI's generic dependency solving, route matching and exit stacks.
    solved: list[str] = []
    original = fastapi.routing.solve_dependencies  # type: ignore[attr-defined]

    async def counting(*args: Any, **kwargs: Any) -> Any:
        solved.append(kwargs["request"].url.path)
        return await original(*args, **kwargs)

    monkeypatch.setattr(fastapi.routing, "solve_dependencies", counting)
    kiosk = device_headers(data_dir, "kiosk-1")
    response = client.post("/api/challenges", json=BODY, headers=kiosk)
    assert (response.status_code, response.json()["verdict"]) == (201, "unacceptable")
    assert solved == []
    refused = client.post("/api/challenges", json={**BODY, "colour": "red"}, headers=kiosk)
    assert refused.status_code == 422
    assert "body.colour" in refused.json()["error"]
    assert solved == ["/api/challenges"]  # anything but a valid challenge goes to FastAPI's route


# -- any body at all: the fast path and the route agree, and neither answers 500 (issue 36, item 3) ------------

_CLOSERS = {b"[": b"]", b'{"a":': b"}", b'{"words":[': b"]}"}
_NESTING = st.builds(
    lambda depth, opener, closed: opener * depth + (_CLOSERS[opener] * depth if closed else b""),
    st.integers(min_value=1, max_value=20_000),
    st.sampled_from([b"[", b'{"a":', b'{"words":[']),
    st.booleans(),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "division": _JSON | st.just("Open"),
        "table": _JSON | st.just(1),
        "round": _JSON | st.just(1),
        "words": _JSON | st.just("cat"),
        "request_id": _JSON | st.just("fuzzed-0001"),
    },
)
_NESTED_FIELD = st.builds(
    lambda depth, field: json.dumps({**BODY, field: "@"}).encode().replace(b'"@"', b"[" * depth + b"]" * depth),
    st.integers(min_value=1, max_value=5000),
    st.sampled_from(sorted(BODY)),
)
BODIES = st.one_of(
    _NESTING,
    _NESTED_FIELD,
    _JSON.map(lambda value: json.dumps(value).encode()),
    _FIELDS.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass")),
)


def _code(response: Any) -> Any:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None


def test_any_body_gets_the_same_answer_from_the_fast_path_and_the_route_and_never_a_500(
    two_servers: Any, caplog: pytest.LogCaptureFixture
) -> None:
    fast, fast_headers = two_servers(True)
    slow, slow_headers = two_servers(False)

    @settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
    @given(body=BODIES, owner=st.sampled_from([None, "kiosk", "td"]), declared=st.booleans())
    def answers_alike(body: bytes, owner: str | None, declared: bool) -> None:
        extra = {"Content-Type": "application/json" if declared else "text/plain"}
        fast_answer = _send(fast, fast_headers, (owner, extra, body))
        slow_answer = _send(slow, slow_headers, (owner, extra, body))
        assert fast_answer.status_code < 500, (fast_answer.status_code, fast_answer.text[:300])
        assert slow_answer.status_code < 500, (slow_answer.status_code, slow_answer.text[:300])
        assert (fast_answer.status_code, _code(fast_answer)) == (slow_answer.status_code, _code(slow_answer))

    with caplog.at_level(logging.ERROR):
        answers_alike()
        deep = b"[" * 2000 + b"]" * 2000  # the review's body, to each path, with a token and without
        for owner in (None, "kiosk"):
            for client, headers in ((fast, fast_headers), (slow, slow_headers)):
                answer = _send(client, headers, (owner, {}, deep))
                assert answer.status_code == 400, answer.text[:300]
                assert _code(answer) == "bad_request"
        # A route that reads its JSON body itself (the event, for the TD) refuses it too.
        for opener, closer in ((b"[", b"]"), (b'{"a":', b"}")):
            put = fast.put(
                "/api/event",
                content=opener * 5000 + closer * 5000,
                headers={**fast_headers["td"], "Content-Type": "application/json"},
            )
            assert put.status_code == 422, put.text[:300]
            assert _code(put) == "invalid_input"
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
