"""Hand edits to event.toml while the server runs (issue 15, item 7): served, or said not to be.

The server looks at the file every second (a stat) and serves a changed file as the console's change is
served; a file that does not load is not served, the log says why, and /api/health warns until it is fixed.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient

from wordjudge.service.settings import Settings
from wordjudge.tournament.event import EVENT_FILE
from wordjudge.web.app import create_app

from .helpers import StartServer, device_headers, td_headers

EVENT = """# Spring Open, written by hand
name = "Spring Open"
rounds = true

[[division]]
name = "Open"
lexicon = "demo"
rule = "five-per-word"
"""
# The in-process servers here look at the file five times a second rather than once (the same watcher, sooner;
# the live test at the end runs ``wordjudge serve`` with its own second).
LOOK_SECONDS = 0.2
# A changed file is served once it has held still for one look: at most two looks, and some slack.
PICKED_UP_WITHIN = 2 * LOOK_SECONDS + 8


@pytest.fixture(autouse=True)
def quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wordjudge.web.app.EVENT_WATCH_SECONDS", LOOK_SECONDS)


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll ``check`` until it returns something true (the watcher runs in the server's own time)."""
    deadline = time.monotonic() + PICKED_UP_WITHIN
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"not within {PICKED_UP_WITHIN:.0f} s: {what}"
        time.sleep(0.1)


@pytest.fixture
def event_file(data_dir: Path) -> Path:
    path = data_dir / EVENT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EVENT)
    return path


@pytest.fixture
def served(settings: Settings, event_file: Path) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


def _warnings_about(client: TestClient, problem: str) -> list[str]:
    return [warning for warning in warnings(client) if problem in warning]


def warnings(client: TestClient) -> list[str]:
    health = client.get("/api/health")
    assert health.status_code == 200, health.text  # a warning, never degraded: the event served is whole
    # These events use the demo list: its warning (tests/test_first_hour.py) is not what these tests look at.
    found: list[str] = [w for w in health.json()["warnings"] if "serves the DEMO list" not in w]
    return found


def test_a_hand_edit_is_served_within_seconds(
    served: TestClient, event_file: Path, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="wordjudge")
    kiosk = device_headers(data_dir, "kiosk-1")
    event_file.write_text(
        EVENT.replace('"Spring Open"', '"Spring Open 2"')
        .replace('lexicon = "demo"', 'lexicon = "DEMO"')  # any case: the compiled name is served
        .replace("rounds = true\n", "rounds = true\ncurrent_round = 6\n")
        .replace('rule = "five-per-word"', 'rule = "double"')
    )
    event = eventually(lambda: (e := served.get("/api/event", headers=kiosk).json())["current_round"] == 6 and e, "")
    assert (event["name"], event["divisions"][0]["lexicon"], event["divisions"][0]["rule"]) == (
        "Spring Open 2",
        "demo",
        "double",
    )
    verdict = served.post(
        "/api/challenges",
        json={"division": "Open", "table": 1, "round": 6, "words": "qi", "request_id": "hand-0001"},
        headers=kiosk,
    ).json()
    assert (verdict["event"], verdict["rule"]) == ("Spring Open 2", "double")
    assert "event.toml changed: now serving Spring Open 2, 1 division(s), current round 6" in caplog.text
    assert warnings(served) == []
    # The hand edit is on the record too, by the file (test_event_changes.py): before it was served.
    changes = served.get("/api/challenges?kind=change", headers=td_headers(data_dir, "alice")).json()["records"]
    assert [
        (r["actor"], r["change"]["what"], r["change"]["before"], r["change"]["after"]) for r in reversed(changes)
    ] == [
        ("event.toml", "event.settings", {"name": "Spring Open"}, {"name": "Spring Open 2"}),
        ("event.toml", "division.rule", {"rule": "five-per-word"}, {"rule": "double"}),
    ]
    assert changes[0]["id"] < verdict["id"]


def test_a_hand_edit_that_does_not_load_is_not_served_and_health_says_why_until_fixed(
    served: TestClient, event_file: Path, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kiosk = device_headers(data_dir, "kiosk-1")
    for broken, problem in (
        (EVENT.replace('rule = "five-per-word"', "rule = five-per-word"), "event.toml: not valid TOML"),
        (
            EVENT.replace('lexicon = "demo"', 'lexicon = "dmeo"'),
            "division 1 (Open): no lexicon or profile named 'dmeo' is compiled (did you mean demo?)",
        ),
        (EVENT.replace('rule = "five-per-word"\n', ""), "division 1 (Open): 'rule' is missing"),
    ):
        event_file.write_text(broken)
        warning = eventually(functools.partial(_warnings_about, served, problem), f"a warning about {problem}")
        assert len(warning) == 1
        assert warning[0].endswith(
            "not served, the server still serves Spring Open (check the file with: wordjudge event show)"
        )
        assert problem in caplog.text  # the log says it too
        assert served.get("/api/event", headers=kiosk).json()["divisions"][0]["rule"] == "five-per-word"
        sent = {"division": "Open", "table": 1, "round": 2, "words": "qi", "request_id": f"keep-{len(broken):05d}"}
        assert served.post("/api/challenges", json=sent, headers=kiosk).status_code == 201  # the hall goes on
    event_file.write_text(EVENT.replace("five-per-word", "single"))
    eventually(lambda: served.get("/api/event", headers=kiosk).json()["divisions"][0]["rule"] == "single", "fixed")
    assert warnings(served) == []


def test_a_removed_event_file_keeps_the_event_and_warns(served: TestClient, event_file: Path) -> None:
    event_file.unlink()
    warning = eventually(lambda: warnings(served), "a warning about the missing file")
    assert "event.toml is missing: the server still serves Spring Open; put the file back" in warning[0]
    assert served.get("/api/health").json()["event"] == "Spring Open"  # never the demo event in its place
    event_file.write_text(EVENT)
    eventually(lambda: not warnings(served), "the warning gone")


def test_the_consoles_own_writes_are_not_taken_for_hand_edits(
    served: TestClient, event_file: Path, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="wordjudge")
    alice = td_headers(data_dir, "alice")
    assert served.put("/api/event/round", json={"current_round": 2}, headers=alice).status_code == 200
    body = {
        "name": "Spring Open",
        "rounds": True,
        "challenges_per_minute": 6,
        "kiosk_result_seconds": 10,
        "division": [{"name": "Open", "lexicon": "demo", "rule": "single"}],
    }
    assert served.put("/api/event", json=body, headers=alice).status_code == 200
    time.sleep(3 * LOOK_SECONDS + 0.5)  # several looks at the file the console wrote
    assert "changed: now serving" not in caplog.text
    assert warnings(served) == []
    assert served.get("/api/event", headers=alice).json()["current_round"] == 2


def test_an_event_file_written_while_the_demo_runs_asks_for_a_restart(settings: Settings, data_dir: Path) -> None:
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/health").json()["demo"] is True
        (data_dir / EVENT_FILE).write_text(EVENT)
        warning = eventually(lambda: warnings(client), "a warning about the new file")
        assert "was written while the demo event runs: restart wordjudge serve to serve Spring Open" in warning[0]
        assert client.get("/api/health").json()["event"] == "wordjudge demo event"


@pytest.mark.live
def test_a_running_wordjudge_serve_picks_up_a_hand_edit_and_logs_it(
    event_file: Path, data_dir: Path, live_server: StartServer
) -> None:
    kiosk = device_headers(data_dir, "kiosk-1")
    server = live_server(data_dir, "--log-level", "info")
    event_file.write_text(EVENT.replace("rounds = true\n", "rounds = true\ncurrent_round = 9\n"))
    eventually(lambda: httpx.get(f"{server.base}/api/event", headers=kiosk).json()["current_round"] == 9, "round 9")
    output = server.stop()
    assert "event.toml changed: now serving Spring Open, 1 division(s), current round 9" in output


def test_a_stop_waits_for_the_watchers_step_under_way(
    settings: Settings, event_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's steps run in a worker thread, which cancelling the watcher does not stop: a stop that came
    during one closed the log under it (a read then opened a connection nobody closed: PostgreSQL's "deleted while
    still open", failing whichever test ran when it was collected). The stop now waits for the step to end."""
    started = threading.Event()
    log_open_at_its_end: list[bool] = []

    def slow_corrections(audit: Any, event: str) -> None:
        started.set()
        time.sleep(1.0)  # a step that takes its time: the stop comes during it
        log_open_at_its_end.append(not audit._closing.is_set())

    monkeypatch.setattr("wordjudge.web.app.corrections", slow_corrections)
    with TestClient(create_app(settings)):
        assert started.wait(PICKED_UP_WITHIN), "the watcher never took its step"
    assert log_open_at_its_end == [True]


def test_a_look_that_fails_is_logged_and_the_watcher_looks_again(
    settings: Settings,
    event_file: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A look that raised ended the watcher for good: the clock, the event file, silent kiosks unwatched, the
    server answering as before (run 51: the last-seen times' write raised on a database become a standby). A
    failed look is now logged, with its traceback, and the next comes on time."""
    looks: list[str] = []

    def failing_once(audit: Any, event: str) -> None:
        looks.append(event)
        if len(looks) == 1:
            raise RuntimeError("a look's unforeseen failure")

    monkeypatch.setattr("wordjudge.web.app.corrections", failing_once)
    with TestClient(create_app(settings)) as client:
        eventually(lambda: len(looks) >= 3, "the watcher's looks after a failed one")
        event_file.write_text(EVENT.replace("Spring Open", "Summer Open"))  # and it still serves a hand edit
        kiosk = device_headers(data_dir, "kiosk-1")
        eventually(lambda: client.get("/api/event", headers=kiosk).json()["name"] == "Summer Open", "the edit")
    failed = [r for r in caplog.records if "event file watcher's look failed" in r.getMessage()]
    assert [r.levelno for r in failed] == [logging.ERROR]
    assert failed[0].exc_info is not None
    assert str(failed[0].exc_info[1]) == "a look's unforeseen failure"


def test_a_look_that_keeps_failing_the_same_way_is_logged_once_and_its_end_is_said(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A look failing the same way every second, all day, logged its traceback every second: one line for the
    failure, another when it ends, and a different failure is logged in its turn."""
    looks: list[str] = []
    failures = {1: "the same failure", 2: "the same failure", 3: "the same failure", 4: "another failure"}

    def failing_five_times(audit: Any, event: str) -> None:
        looks.append(event)
        if len(looks) in failures:
            raise RuntimeError(failures[len(looks)])

    monkeypatch.setattr("wordjudge.web.app.corrections", failing_five_times)
    with TestClient(create_app(settings)):
        eventually(lambda: len(looks) >= 6, "the watcher's looks after the failed ones")
    said = [r for r in caplog.records if "event file watcher's look" in r.getMessage()]
    assert [(r.levelno, r.exc_info and str(r.exc_info[1])) for r in said] == [
        (logging.ERROR, "the same failure"),
        (logging.ERROR, "another failure"),
        (logging.WARNING, None),
    ]
    assert said[-1].getMessage() == "the event file watcher's look succeeds again"
