"""The TD console's API: export, summary, TD accounts, event settings, the live feed, dockets."""

from __future__ import annotations

import csv
import io
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient

from wordjudge.service.settings import Settings
from wordjudge.tournament.event import EVENT_FILE
from wordjudge.tournament.event_loading import load_event
from wordjudge.web.app import create_app
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import parse_word_list

from .helpers import (
    Actors,
    StartServer,
    assert_error_shape,
    device_headers,
    td_headers,
    write_event,
)


def challenge(words: str, table: int = 1, round_number: int = 1, division: str = "Open") -> dict[str, Any]:
    return {"division": division, "table": table, "round": round_number, "words": words, "request_id": uuid.uuid4().hex}


def test_export_follows_the_filters_and_carries_everything(client: TestClient, actors: Actors) -> None:
    client.post("/api/challenges", json=challenge("cat dog", round_number=1), headers=actors.kiosk)
    client.post("/api/challenges", json=challenge("cat qi", round_number=2), headers=actors.kiosk)
    response = client.get("/api/export?format=csv&round=2", headers=actors.alice)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"].startswith('attachment; filename="wordjudge-')
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["words"], r["verdict"], r["round"]) for r in rows] == [("CAT QI", "unacceptable", "2")]
    # Readable in a spreadsheet: per-word results as marks, the consequence as its sentence.
    assert rows[0]["results"] == "CAT ✓ QI ✗"
    assert rows[0]["consequence"] == "Play comes off: tiles back to the rack, no score for the turn"
    assert json.loads(client.get("/api/export?format=jsonl&round=2", headers=actors.alice).text)["results"][1] == {
        "word": "QI",
        "acceptable": False,
        "source": None,
        "reason": "not in demo",
    }  # the archive keeps every field as data
    lines = client.get("/api/export?format=jsonl", headers=actors.alice).text.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1, 2]


def test_summary_per_division_and_round(client: TestClient, actors: Actors) -> None:
    for words, round_number in (("cat dog", 1), ("cat qi", 1), ("cat", 2), ("zzz cat", 2)):
        client.post("/api/challenges", json=challenge(words, round_number=round_number), headers=actors.alice)
    first = client.get("/api/challenges?limit=1", headers=actors.alice).json()["records"][0]["id"]
    client.post(f"/api/challenges/{first}/recheck", json={"request_id": "recheck-0001"}, headers=actors.bob)
    data = client.get("/api/summary", headers=actors.alice).json()
    assert (data["total"]["challenges"], data["total"]["acceptable"]) == (4, 2)  # the recheck is not a challenge
    (division,) = data["divisions"]
    assert division["division"] == "Open"
    assert [(r["round"], r["challenges"], r["acceptable_share"]) for r in division["rounds"]] == [
        (1, 2, 0.5),
        (2, 2, 0.5),
    ]
    assert division["most_challenged"][0] == {"word": "CAT", "challenges": 4}


def test_td_accounts_from_the_console(client: TestClient, actors: Actors) -> None:
    added = client.post("/api/tds", json={"name": "carol", "password": "a long enough password"}, headers=actors.alice)
    assert added.status_code == 201
    assert added.json()["created_by"] == "alice"
    short = client.post("/api/tds", json={"name": "dave", "password": "short"}, headers=actors.alice)
    assert "at least 10 characters" in assert_error_shape(short, 422, "invalid_input")["error"]
    own = client.post("/api/tds/alice/disable", headers=actors.alice)
    assert "cannot disable their own account" in assert_error_shape(own, 403, "forbidden")["error"]
    assert client.post("/api/tds/bob/disable", headers=actors.alice).status_code == 200
    assert_error_shape(client.get("/api/tds", headers=actors.bob), 401, "unauthorized")  # bob's session ended
    names = {(t["name"], bool(t["disabled_at"])) for t in client.get("/api/tds", headers=actors.alice).json()["tds"]}
    assert names == {("alice", False), ("bob", True), ("carol", False)}


def test_event_settings_change_what_is_served(event_client: TestClient, actors: Actors, data_dir: Path) -> None:
    event = {
        "name": "Spring Open",
        "rounds": False,
        "challenges_per_minute": 2,
        "kiosk_result_seconds": 15,
        "division": [
            {"name": "A", "lexicon": "demo", "rule": "double"},
            {"name": "B", "lexicon": "demo", "rule": "single"},
        ],
    }
    response = event_client.put("/api/event", json=event, headers=actors.alice)
    assert response.status_code == 200, response.text
    assert [d["name"] for d in response.json()["divisions"]] == ["A", "B"]
    assert load_event(data_dir).kiosk_result_seconds == 15  # written to event.toml
    assert event_client.get("/api/event", headers=actors.kiosk).json()["name"] == "Spring Open"
    verdict = event_client.post("/api/challenges", json=challenge("cat qi", division="A"), headers=actors.kiosk).json()
    assert verdict["consequence"]["text"] == "Play comes off: tiles back to the rack, no score for the turn"
    assert (
        event_client.post("/api/challenges", json=challenge("cat", division="B"), headers=actors.kiosk).status_code
        == 201
    )
    assert (
        event_client.post("/api/challenges", json=challenge("cat", division="B"), headers=actors.kiosk).status_code
        == 429
    )
    before = (data_dir / EVENT_FILE).read_text()
    bad = event_client.put(
        "/api/event",
        json={**event, "division": [{"name": "A", "lexicon": "CSW99", "rule": "double"}]},
        headers=actors.alice,
    )
    assert "no lexicon or profile named 'CSW99' is compiled" in assert_error_shape(bad, 422, "invalid_input")["error"]
    assert (data_dir / EVENT_FILE).read_text() == before  # refused: nothing changed
    typo = event_client.put(
        "/api/event",
        json={**event, "division": [{"name": "A", "lexicon": "dmeo", "rule": "double"}]},
        headers=actors.alice,
    )
    assert "'dmeo' is compiled (did you mean demo?); compiled: demo." in typo.json()["error"]
    assert (data_dir / EVENT_FILE).read_text() == before
    upper = event_client.put(  # B is removed, with challenges on record: confirmed (test_event_changes.py)
        "/api/event",
        json={**event, "confirm": True, "division": [{"name": "A", "lexicon": "DEMO", "rule": "double"}]},
        headers=actors.alice,
    )
    assert upper.json()["divisions"][0]["lexicon"] == "demo"  # the compiled name, whatever the case typed
    wrong_rule = event_client.put(
        "/api/event",
        json={**event, "division": [{"name": "A", "lexicon": "demo", "rule": "triple"}]},
        headers=actors.alice,
    )
    assert "'rule' must be one of" in assert_error_shape(wrong_rule, 422, "invalid_input")["error"]


HAND_WRITTEN = """# Spring Open, written by hand
name = "Spring Open"
rounds = true  # every challenge says its round

[[division]]
name = "Open"
lexicon = "demo"
rule = "five-per-word"
"""


def test_the_td_sets_the_current_round_and_every_device_reads_it(data_dir: Path, settings: Settings) -> None:
    path = data_dir / EVENT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HAND_WRITTEN)
    kiosk, alice = device_headers(data_dir, "kiosk-1"), td_headers(data_dir, "alice")
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/event", headers=kiosk).json()["current_round"] is None
        response = client.put("/api/event/round", json={"current_round": 3}, headers=alice)
        assert response.status_code == 200, response.text
        assert response.json()["current_round"] == 3
        assert client.get("/api/event", headers=kiosk).json()["current_round"] == 3
        # Only that line of the TD's file changes: their comments stay.
        assert path.read_text() == HAND_WRITTEN.replace("says its round\n", "says its round\ncurrent_round = 3\n")
        for bad in ({"current_round": 0}, {"current_round": 1000}, {"current_round": "3rd"}, {}, {"round": 3}):
            refused = client.put("/api/event/round", json=bad, headers=alice)
            assert_error_shape(refused, 422, "invalid_request")
        assert_error_shape(client.put("/api/event/round", json={"current_round": 5}, headers=kiosk), 403, "forbidden")
        assert "current_round = 3\n" in path.read_text()  # refused: nothing changed
        # The event settings keep the current round; they cannot set it (one way to set it).
        settings_body = {
            "name": "Spring Open",
            "rounds": True,
            "challenges_per_minute": 6,
            "kiosk_result_seconds": 10,
            "division": [{"name": "Open", "lexicon": "demo", "rule": "double"}],
        }
        assert client.put("/api/event", json=settings_body, headers=alice).json()["current_round"] == 3
        assert load_event(data_dir).current_round == 3
        assert_error_shape(
            client.put("/api/event", json={**settings_body, "current_round": 4}, headers=alice), 422, "invalid_input"
        )
        cleared = client.put("/api/event/round", json={"current_round": None}, headers=alice)
        assert cleared.json()["current_round"] is None
        assert "current_round" not in path.read_text()
        # No rounds in the event: no current round either.
        client.put("/api/event", json={**settings_body, "rounds": False}, headers=alice)
        no_rounds = client.put("/api/event/round", json={"current_round": 2}, headers=alice)
        assert "carry no round (rounds = false)" in assert_error_shape(no_rounds, 422, "invalid_input")["error"]


def test_setting_the_round_over_a_broken_hand_edit_is_refused_and_leaves_the_file(
    data_dir: Path, settings: Settings
) -> None:
    path = data_dir / EVENT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HAND_WRITTEN)
    alice = td_headers(data_dir, "alice")
    with TestClient(create_app(settings)) as client:
        path.write_text(HAND_WRITTEN.replace('rule = "five-per-word"', "rule = five-per-word"))  # unquoted: not TOML
        broken = path.read_bytes()
        refused = client.put("/api/event/round", json={"current_round": 2}, headers=alice)
        error = assert_error_shape(refused, 422, "invalid_input")["error"]
        assert "event.toml: not valid TOML" in error
        assert error.endswith("fix it, then set the round again")
        assert path.read_bytes() == broken
        assert client.get("/api/event", headers=alice).json()["current_round"] is None


def test_a_docket_shows_the_verdict_never_the_words_results(client: TestClient, actors: Actors) -> None:
    record = client.post("/api/challenges", json=challenge("cat qi"), headers=actors.runner).json()
    docket = client.get(f"/api/challenges/{record['id']}/docket", headers=actors.runner).json()
    assert docket["record"]["verdict"] == "unacceptable"
    assert "results" not in docket["record"]
    assert docket["lexicon_name"] == "DEMO"
    assert docket["short_fingerprint"] == "b819e7b67f8f"
    assert docket["head"]["hash"] == record["hash"]
    assert docket["qr_svg"].startswith("<svg")
    same = client.get(f"/api/challenges/{record['id']}/docket", headers=actors.alice).json()
    assert "results" not in same["record"]  # not even the TD's docket
    mine = client.get("/api/challenges/mine", headers=actors.runner).json()["records"]
    assert [r["id"] for r in mine] == [record["id"]]
    assert client.get("/api/challenges/mine", headers=actors.kiosk).json()["records"] == []


@pytest.mark.live
def test_the_live_feed_streams_new_records_to_the_td(data_dir: Path, live_server: StartServer) -> None:

    kiosk = device_headers(data_dir, "kiosk-1")
    alice = td_headers(data_dir, "alice")
    base = live_server(data_dir).base
    httpx.post(f"{base}/api/challenges", json=challenge("emu"), headers=kiosk)  # before: not in the feed
    with (
        httpx.Client(base_url=base, timeout=10) as http,
        http.stream("GET", "/api/feed?seconds=3&verdict=unacceptable", headers=alice) as stream,
    ):
        assert stream.headers["content-type"].startswith("text/event-stream")
        httpx.post(f"{base}/api/challenges", json=challenge("cat dog"), headers=kiosk)
        time.sleep(1.2)  # the feed polls meanwhile and finds only a record its filter leaves out
        httpx.post(f"{base}/api/challenges", json=challenge("cat qi"), headers=kiosk)
        text = "".join(stream.iter_text())
    events = [block for block in text.split("\n\n") if any(line.startswith("id: ") for line in block.split("\n"))]
    assert len(events) == 1  # only the unacceptable one matches the filter
    data = json.loads(events[0].split("data: ", 1)[1].split("\n", 1)[0])
    assert (data["id"], data["words"], data["actor"]) == (3, ["CAT", "QI"], "kiosk-1")
    assert [r["acceptable"] for r in data["results"]] == [True, False]  # the TD sees per-word results here


def test_the_live_feed_ends_when_asked_not_at_its_next_look(
    client: TestClient, actors: Actors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("wordjudge.web.routes.console.FEED_POLL_SECONDS", 30.0)  # looks for new records this far apart
    started = time.monotonic()
    response = client.get("/api/feed?seconds=0.2", headers=actors.alice)
    assert response.status_code == 200
    assert time.monotonic() - started < 10  # not a whole look (30 s) past the 0.2 s asked for


def test_the_demo_event_is_not_changed_into_a_real_one_inside_the_demos_log(
    client: TestClient, actors: Actors, data_dir: Path
) -> None:
    event = {
        "name": "Spring Open",
        "rounds": True,
        "challenges_per_minute": 6,
        "kiosk_result_seconds": 10,
        "division": [{"name": "A", "lexicon": "demo", "rule": "single"}],
    }
    refused = client.put("/api/event", json=event, headers=actors.alice)
    assert "stop the server, write the event" in assert_error_shape(refused, 409, "conflict")["error"]
    assert not (data_dir / "event.toml").exists()  # nothing written: the demo stays the demo


def test_the_live_feed_resumes_after_the_last_event_id_with_ids_and_a_retry(client: TestClient, actors: Actors) -> None:
    for words in ("cat", "cat qi", "dog"):
        assert client.post("/api/challenges", json=challenge(words), headers=actors.kiosk).status_code == 201
    response = client.get("/api/feed?seconds=0.3", headers={**actors.alice, "Last-Event-ID": "1"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-store"
    blocks = [dict(line.split(": ", 1) for line in block.split("\n")) for block in response.text.split("\n\n") if block]
    assert blocks[0] == {"retry": "2000"}  # the browser reconnects after 2 s
    assert [(b["id"], b["event"], json.loads(b["data"])["id"]) for b in blocks[1:]] == [
        ("2", "record", 2),
        ("3", "record", 3),
    ]


def test_a_recheck_that_disagrees_alerts_the_td_at_once(
    data_dir: Path, settings: Settings, actors: Actors, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two lists that disagree on CAT, as after an errata fix: the re-check uses the one served then.
    monkeypatch.setattr("wordjudge.web.app.EVENT_WATCH_SECONDS", 0.2)  # the file is looked at sooner (test_event_watch)
    Catalog(data_dir).lexicons.add(parse_word_list(b"QI\nDOG\n", source_name="errata.txt"), "ERRATA")
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Test Open")
    with TestClient(create_app(settings)) as client:
        first = client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk).json()
        agreeing = client.post(
            f"/api/challenges/{first['id']}/recheck", json={"request_id": "recheck-0001"}, headers=actors.bob
        )
        assert agreeing.json()["agrees"] is True
        assert not [
            a for a in client.get("/api/alerts", headers=actors.alice).json()["alerts"] if a["kind"] == "needs_ruling"
        ]
        write_event(data_dir, [("Open", "ERRATA", "five-per-word")], name="Test Open")
        deadline = time.monotonic() + 30
        while client.get("/api/event", headers=actors.kiosk).json()["divisions"][0]["lexicon"] != "ERRATA":
            assert time.monotonic() < deadline, "the changed event file was not picked up"
            time.sleep(0.2)
        recheck = client.post(
            f"/api/challenges/{first['id']}/recheck", json={"request_id": "recheck-0002"}, headers=actors.bob
        )
        assert (recheck.status_code, recheck.json()["agrees"]) == (201, False)
        alerts = [
            a for a in client.get("/api/alerts", headers=actors.alice).json()["alerts"] if a["kind"] == "needs_ruling"
        ]
        assert [a["actor"] for a in alerts] == [f"#{first['id']}"]
        assert f"re-check #{recheck.json()['id']} of challenge #{first['id']}" in alerts[0]["message"]
        queue = client.get("/api/challenges?needs_ruling=true", headers=actors.alice).json()["records"]
        assert [r["id"] for r in queue] == [first["id"]]
        # The slip did not match the board: the corrected words decide, and nothing waits for a ruling any more.
        reissue = client.post(
            f"/api/challenges/{first['id']}/reissue",
            headers=actors.bob,
            json={"words": "qi", "reason": "board shows QI", "request_id": "reissue-0001"},
        )
        assert reissue.status_code == 201
        assert client.get("/api/challenges?needs_ruling=true", headers=actors.alice).json()["records"] == []
        assert queue[0]["needs_ruling"] is True  # before the reissue
        view = client.get(f"/api/challenges/{first['id']}", headers=actors.alice).json()
        assert (view["needs_ruling"], view["final"]["verdict"]) == (False, "acceptable")
        rest = client.get("/api/challenges?needs_ruling=false&kind=challenge", headers=actors.alice).json()
        assert first["id"] in [r["id"] for r in rest["records"]]


def test_rulings_reach_the_list_and_the_record_view(client: TestClient, actors: Actors) -> None:
    first = client.post("/api/challenges", json=challenge("cat qi"), headers=actors.kiosk).json()
    client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk)
    ruling = client.post(
        f"/api/challenges/{first['id']}/ruling",
        json={"verdict": "acceptable", "note": "QI is good in this event", "request_id": uuid.uuid4().hex},
        headers=actors.bob,
    ).json()
    listed = {r["id"]: r for r in client.get("/api/challenges", headers=actors.alice).json()["records"]}
    assert (listed[first["id"]]["verdict"], listed[first["id"]]["final"]["verdict"]) == ("unacceptable", "acceptable")
    decided = listed[first["id"]]["final"]["decided_by"]
    assert (decided["kind"], decided["id"], decided["actor"]) == ("ruling", ruling["id"], "bob")
    assert listed[2]["final"]["changed"] is False
    assert "final" not in listed[ruling["id"]]  # the ruling's row is itself; its challenge carries the outcome
    view = client.get(f"/api/challenges/{first['id']}", headers=actors.alice).json()
    assert [(s["kind"], s["id"], s["verdict"]) for s in view["final"]["linked"]] == [
        ("ruling", ruling["id"], "acceptable")
    ]


def _feed(client: TestClient, actors: Actors, query: str = "") -> list[tuple[str, dict[str, Any]]]:
    """The live feed's events from the start of the log (Last-Event-ID 0), as (event, data)."""
    response = client.get(f"/api/feed?seconds=0.3{query}", headers={**actors.alice, "Last-Event-ID": "0"})
    assert response.status_code == 200, response.text
    blocks = [dict(line.split(": ", 1) for line in block.split("\n")) for block in response.text.split("\n\n") if block]
    return [(b["event"], json.loads(b["data"])) for b in blocks if "event" in b]


def test_the_live_feed_carries_final_verdicts_and_each_ruling_updates_its_challenge(
    client: TestClient, actors: Actors
) -> None:
    first = client.post("/api/challenges", json=challenge("cat qi"), headers=actors.kiosk).json()
    second = client.post("/api/challenges", json=challenge("cat"), headers=actors.kiosk).json()
    ruling = client.post(
        f"/api/challenges/{first['id']}/ruling",
        json={"verdict": "acceptable", "note": "QI is good here", "request_id": uuid.uuid4().hex},
        headers=actors.bob,
    ).json()
    events = _feed(client, actors)
    assert [(kind, data.get("id", data.get("challenge_id"))) for kind, data in events] == [
        ("record", first["id"]),
        ("record", second["id"]),
        ("record", ruling["id"]),
        ("final", first["id"]),
    ]
    listed = {r["id"]: r for r in client.get("/api/challenges", headers=actors.alice).json()["records"]}
    assert events[0][1]["final"] == listed[first["id"]]["final"]  # as the list says it
    assert events[0][1]["final"]["verdict"] == "acceptable"
    assert events[1][1]["final"]["changed"] is False
    assert "final" not in events[2][1]  # a ruling's own row is itself, as in the list
    final = events[3][1]
    assert (final["verdict"], final["decided_by"]["kind"], final["decided_by"]["actor"]) == (
        "acceptable",
        "ruling",
        "bob",
    )
    assert "results" not in json.dumps(final)
    # Whatever the filters: a feed of challenges only still hears that the ruling changed one.
    only = _feed(client, actors, "&kind=challenge")
    assert [(kind, data.get("id", data.get("challenge_id"))) for kind, data in only] == [
        ("record", first["id"]),
        ("record", second["id"]),
        ("final", first["id"]),
    ]


def test_every_filter_takes_names_in_any_case(data_dir: Path, settings: Settings) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word"), ("Premier", "demo", "single")], name="Test Open")
    kiosk = device_headers(data_dir, "Kiosk-7")
    alice = td_headers(data_dir, "alice")
    with TestClient(create_app(settings)) as client:
        for division, words in (("Open", "cat"), ("Premier", "cat qi"), ("Open", "dog")):
            body = challenge(words, division=division)
            assert client.post("/api/challenges", json=body, headers=kiosk).status_code == 201

        def ids(**params: str) -> list[int]:
            answer = client.get("/api/challenges", params=params, headers=alice)
            assert answer.status_code == 200, answer.text
            return [r["id"] for r in answer.json()["records"]]

        assert ids(division="premier") == ids(division="PREMIER") == ids(division="Premier") == [2]
        assert ids(actor="kiosk-7") == ids(actor="KIOSK-7") == [3, 2, 1]
        assert ids(verdict="UNACCEPTABLE") == ids(verdict="unacceptable") == [2]
        assert ids(kind="Challenge", division="open") == [3, 1]
        assert ids(division="Elsewhere") == []  # a name the event does not have finds nothing, as typed
        assert client.get("/api/summary?division=open", headers=alice).json()["total"]["challenges"] == 2
        refused = client.get("/api/challenges?verdict=maybe", headers=alice)
        assert "verdict" in assert_error_shape(refused, 422, "invalid_request")["error"]


def test_the_summary_counts_final_verdicts(client: TestClient, actors: Actors) -> None:
    for words in ("cat qi", "cat", "dog", "qi"):
        client.post("/api/challenges", json=challenge(words, round_number=2), headers=actors.kiosk)
    ruling = {"verdict": "acceptable", "note": "errata: QI", "request_id": uuid.uuid4().hex}
    assert client.post("/api/challenges/1/ruling", json=ruling, headers=actors.bob).status_code == 201
    reissue = {"words": "dogz", "reason": "the board shows DOGZ", "request_id": uuid.uuid4().hex}
    assert client.post("/api/challenges/3/reissue", json=reissue, headers=actors.bob).status_code == 201
    for query in ("", "?division=Open", "?division=Open&round=2", "?table=1"):  # tallies, and from the records
        total = client.get(f"/api/summary{query}", headers=actors.alice).json()["total"]
        assert (total["challenges"], total["acceptable"], total["unacceptable"]) == (4, 2, 2), query
        assert (total["overturned"], total["awaiting_ruling"], total["acceptable_share"]) == (2, 0, 0.5), query


def test_the_live_feed_starts_after_the_head_the_console_read(client: TestClient, actors: Actors) -> None:
    for words in ("cat", "dog", "emu"):
        client.post("/api/challenges", json=challenge(words), headers=actors.kiosk)
    # The console read the list when the head was #1; #2 and #3 came before its feed connected: not missed.
    response = client.get("/api/feed?seconds=0.3&after_id=1", headers=actors.alice)
    ids = [json.loads(line[6:])["id"] for line in response.text.splitlines() if line.startswith("data: ")]
    assert ids == [2, 3]
    resumed = client.get("/api/feed?seconds=0.3&after_id=1", headers={**actors.alice, "Last-Event-ID": "2"})
    assert [json.loads(line[6:])["id"] for line in resumed.text.splitlines() if line.startswith("data: ")] == [3]
    assert_error_shape(client.get("/api/feed?seconds=0.3&after_id=-1", headers=actors.alice), 422, "invalid_request")
