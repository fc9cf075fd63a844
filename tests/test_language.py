"""The event's language: set in event.toml or the console, served to the clients, and what the server's
answers carry for them to say things in it (error, consequence, verdict, rule and chain messages); the
command line's verdict lines in it."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient

from wordjudge.base.errors import InvalidInput, Message
from wordjudge.cli.main import main
from wordjudge.service.opening import open_resources
from wordjudge.service.settings import Settings
from wordjudge.service.status import health_report
from wordjudge.tournament.event import EVENT_FILE, dump_event, parse_event
from wordjudge.tournament.event_loading import load_event
from wordjudge.web.app import create_app

from .helpers import Actors, assert_error_shape, log_place, write_event

NNBSP = "\u202f"
ACCEPTED = "en, en-AU, en-CA, en-GB, en-IE, en-IN, en-NZ, en-US, en-ZA, fr, fr-BE, fr-CA, fr-CH, fr-FR, qps-ploc"
DIVISION = [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}]


def challenge(words: str, table: int = 1) -> dict[str, Any]:
    return {"division": "Open", "table": table, "round": 1, "words": words, "request_id": uuid.uuid4().hex}


def said(message: dict[str, Any], lang: str = "en") -> str:
    """A message of an API answer, as a client says it in ``lang``."""
    return Message.from_dict(message).text(lang)


# -- the setting ------------------------------------------------------------------------------------


def test_the_event_speaks_english_unless_it_says_otherwise() -> None:
    assert parse_event({"name": "E", "division": DIVISION}).language == "en"
    french = parse_event({"name": "E", "language": "fr", "division": DIVISION})
    assert french.language == "fr"
    assert french.as_dict()["language"] == "fr"
    assert 'language = "fr"' in dump_event(french)
    assert parse_event({"name": "E", "language": "qps-ploc", "division": DIVISION}).language == "qps-ploc"


@pytest.mark.parametrize("language", ["de", "FR", "french", 1, ""])
def test_a_language_wordjudge_does_not_speak_is_refused_naming_those_it_does(language: object) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_event({"name": "E", "language": language, "division": DIVISION})
    assert refused.value.message == f"event.toml: 'language' must be one of {ACCEPTED}, not {language!r}"
    assert refused.value.msg.key == "error.event.language_invalid"


def test_the_event_file_sets_the_language_and_keeps_it(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], language="fr")
    event = load_event(data_dir)
    assert event.language == "fr"
    assert load_event(data_dir) == parse_event(
        {"name": "Test Open", "language": "fr", "division": DIVISION}, lexicons=["demo"]
    )


def test_get_event_serves_the_language_and_the_console_changes_it(
    event_client: TestClient, actors: Actors, data_dir: Path
) -> None:
    served = event_client.get("/api/event", headers=actors.kiosk).json()
    assert served["language"] == "en"
    division = served["divisions"][0]
    assert division["rule_message"] == {"key": "rule.five-per-word", "params": {}}
    assert said(division["rule_text_message"]) == division["rule_text"]
    assert said(division["rule_text_message"], "fr") == "5 points par mot pour une contestation infructueuse"
    rules = served["input_rules"]["challenge_rules"]
    assert [said(rule["text_message"]) for rule in rules] == [rule["text"] for rule in rules]
    body = {"name": "Test Open", "language": "fr", "division": DIVISION}
    changed = event_client.put("/api/event", json=body, headers=actors.alice)
    assert changed.status_code == 200, changed.text
    assert changed.json()["language"] == "fr"
    assert event_client.get("/api/event", headers=actors.kiosk).json()["language"] == "fr"
    assert 'language = "fr"' in (data_dir / EVENT_FILE).read_text("utf-8")
    refused = event_client.put("/api/event", json={**body, "language": "de"}, headers=actors.alice)
    error = assert_error_shape(refused, 422, "invalid_input")
    assert error["error"] == f"event settings: 'language' must be one of {ACCEPTED}, not 'de'"
    assert error["message"]["key"] == "error.event.language_invalid"
    assert said(error["message"], "fr") == (
        f"réglages du tournoi{NNBSP}: 'language' doit être l’une des valeurs {ACCEPTED}, pas 'de'"
    )
    assert event_client.get("/api/event", headers=actors.kiosk).json()["language"] == "fr"  # unchanged


# -- what the answers carry -------------------------------------------------------------------------


def test_an_error_carries_its_message_and_its_english_text(client: TestClient, actors: Actors) -> None:
    refused = client.post("/api/challenges", json={**challenge("cat"), "table": "no table!"}, headers=actors.kiosk)
    error = assert_error_shape(refused, 422, "invalid_input")
    assert error["message"]["key"] == "error.table.not_the_events"
    assert (
        error["error"]
        == "table 'no table!' is not a table number: the tables of wordjudge demo event are a number from 1 to 9999"
    )
    assert said(error["message"], "fr") == (
        f"la table 'no table!' n’est pas un numéro de table{NNBSP}: les tables de wordjudge demo event sont un nombre de 1 à 9999"
    )
    long = client.post("/api/challenges", json=challenge("c"), headers=actors.kiosk).json()
    assert long["message"]["key"] == "error.words.length"
    assert said(long["message"], "fr").startswith(f"le mot 1 'c' a 1 lettre{NNBSP}: ")
    # The framework's own refusals too: no such route, a method the route does not answer, a malformed body.
    missing = assert_error_shape(client.get("/api/nothing"), 404, "not_found")
    assert missing["message"] == {
        "key": "error.http.at_path",
        "params": {"problem": {"key": "error.http.not_found", "params": {}}, "path": "/api/nothing"},
    }
    assert said(missing["message"], "fr") == f"aucune page ni route d’API de ce nom{NNBSP}: /api/nothing"
    assert assert_error_shape(client.delete("/api/health"), 405, "method_not_allowed")["message"]["key"] == (
        "error.http.method_not_allowed"
    )
    malformed = client.post(
        "/api/challenges", content=b"{", headers={**actors.kiosk, "content-type": "application/json"}
    )
    assert assert_error_shape(malformed, 422, "invalid_request")["message"]["key"] == "error.http.invalid_request"


def test_a_rate_limit_says_when_to_try_again_in_every_language(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")], challenges_per_minute=1)
    from .helpers import device_headers

    kiosk = device_headers(data_dir, "kiosk-1")
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        assert client.post("/api/challenges", json=challenge("cat"), headers=kiosk).status_code == 201
        error = assert_error_shape(
            client.post("/api/challenges", json=challenge("dog"), headers=kiosk), 429, "rate_limited"
        )
    retry = error["details"]["retry_after"]
    assert error["message"] == {
        "key": "error.rate.challenges_kiosk",
        "params": {"retry_after": retry, "role": "kiosk", "per_minute": 1},
    }
    assert said(error["message"], "fr").endswith(f"réessayez dans {retry} s")


def test_every_record_answer_carries_its_consequence_verdict_kind_and_rule_as_messages(
    client: TestClient, actors: Actors
) -> None:
    answer = client.post("/api/challenges", json=challenge("cat dog"), headers=actors.kiosk).json()
    consequence = answer["consequence"]
    assert consequence["text"] == "Play stands: challenger loses 10 points (2 words x 5)"  # as stored, as hashed
    assert consequence["message"] == {"key": "consequence.per_word", "params": {"n": 2, "points": 10, "each": 5}}
    assert said(consequence["message"]) == consequence["text"]
    assert (
        said(consequence["message"], "fr")
        == f"Le coup est maintenu{NNBSP}: le contestataire perd 10 points (2 mots × 5)"
    )
    assert (answer["verdict_message"], answer["kind_message"], answer["rule_message"]) == (
        {"key": "verdict.acceptable", "params": {}},
        {"key": "verdict.kind.challenge", "params": {}},
        {"key": "rule.five-per-word", "params": {}},
    )
    off = client.post("/api/challenges", json=challenge("cat qi", table=2), headers=actors.kiosk).json()
    assert said(off["consequence"]["message"], "fr").startswith(f"Le coup est retiré{NNBSP}: ")
    assert said(off["verdict_message"], "fr") == "NON VALABLE"
    # The same wherever a record is shown: the record, the docket, the TD's list and the live feed.
    views = [
        client.get(f"/api/challenges/{off['id']}", headers=actors.kiosk).json(),
        client.get(f"/api/challenges/{off['id']}/docket", headers=actors.kiosk).json()["record"],
        client.get("/api/challenges", headers=actors.alice).json()["records"][0],
        client.get("/api/challenges/mine", headers=actors.kiosk).json()["records"][0],
    ]
    feed = client.get("/api/feed?seconds=0.3", headers={**actors.alice, "Last-Event-ID": "1"}).text
    views.append(json.loads(re.findall(r"^data: (.*)$", feed, re.MULTILINE)[-1]))
    for view in views:
        assert view["consequence"] == off["consequence"]
        assert view["verdict_message"] == off["verdict_message"]


def test_the_chain_check_says_its_sentence_as_a_message(client: TestClient, actors: Actors) -> None:
    for words in ("cat", "dog"):
        client.post("/api/challenges", json=challenge(words), headers=actors.kiosk)
    verified = client.get("/api/audit/verify", headers=actors.alice).json()
    head = verified["head"]["text"]
    assert verified["description"] == f"chain verified: 2 record(s), head {head}"
    assert verified["message"] == {"key": "chain.verified", "params": {"records": 2, "head": head}}
    assert said(verified["message"], "fr") == f"chaîne vérifiée{NNBSP}: 2 enregistrement(s), tête {head}"
    integrity = client.get("/api/health").json()["audit"]["integrity"]
    assert said(integrity["at_start_message"]) == integrity["at_start"]
    assert integrity["whole_message"] is None or said(integrity["whole_message"]) == integrity["whole"]


def test_health_says_its_reasons_and_warnings_as_messages(data_dir: Path) -> None:
    write_event(data_dir, [("Open", "demo", "five-per-word")])
    resources = open_resources(Settings(data_dir=data_dir))
    try:
        (data_dir / EVENT_FILE).write_text("name = [", "utf-8")  # a hand edit that does not load
        resources.served.pick_up_event_file()
        resources.served.pick_up_event_file()  # read once it has held still for a look
        resources.audit.close()  # and the log's writer stopped
        health = health_report(resources).body
    finally:
        resources.close()
    assert [said(m) for m in health["warning_messages"]] == health["warnings"]
    assert [m["key"] for m in health["warning_messages"]][:1] == ["error.event_file.refused"]
    assert "le serveur sert toujours Test Open" in said(health["warning_messages"][0], "fr")
    assert [said(m) for m in health["reason_messages"]] == health["reasons"]
    assert [m["key"] for m in health["reason_messages"]] == ["error.health.audit_stopped"]
    assert said(health["reason_messages"][0], "fr").startswith("l’écriture du journal d’audit s’est arrêtée")


# -- the command line --------------------------------------------------------------------------------


def cli(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture
def french_event(data_dir: Path, actors: Actors) -> Path:
    """A French event with two records: CAT DOG (acceptable), CAT QI (not)."""
    write_event(data_dir, [("Open", "demo", "five-per-word")], language="fr")
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        for table, words in enumerate(("cat dog", "cat qi"), start=1):
            assert client.post("/api/challenges", json=challenge(words, table), headers=actors.kiosk).status_code == 201
    return data_dir


def test_lexicon_check_says_its_verdict_in_the_events_language(french_event: Path) -> None:
    lines = cli("lexicon", "check", "demo", "cat", "qi", "--data-dir", french_event).output.splitlines()
    assert lines[0].split() == ["CAT", "valable", "dans", "demo"]
    assert lines[1].split() == ["QI", "NON", "valable", "absent", "de", "demo"]
    assert re.fullmatch(f"Verdict{NNBSP}: NON VALABLE \\(2 mots, demo [0-9a-f]+\\)", lines[2]), lines[2]
    english = cli("lexicon", "check", "demo", "cat", "--language", "en", "--data-dir", french_event).output
    assert re.search(r"^Verdict: ACCEPTABLE \(1 word, demo [0-9a-f]+\)$", english, re.MULTILINE), english
    by_env = cli("lexicon", "check", "demo", "cat", "--data-dir", french_event, env={"WORDJUDGE_LANGUAGE": "en"})
    assert "Verdict: ACCEPTABLE (1 word, demo " in by_env.output
    assert "not in demo" in cli("lexicon", "check", "demo", "qi", "--data-dir", french_event, "--language", "en").output


def test_audit_verify_and_tail_speak_the_events_language(french_event: Path) -> None:
    log = log_place(french_event)  # its file, or its database (--backend postgresql)
    verified = cli("audit", "verify", "--data-dir", french_event)
    assert verified.exit_code == 0, verified.output
    assert re.fullmatch(
        f"{re.escape(log)}{NNBSP}: chaîne vérifiée{NNBSP}: 2 enregistrement\\(s\\), tête 2:[0-9a-f]{{16}}\n",
        verified.output,
    ), verified.output
    english = cli("audit", "verify", "--language", "en", "--data-dir", french_event).output
    assert f"{log}: chain verified: 2 record(s), head 2:" in english
    tail = cli("audit", "tail", "--data-dir", french_event).output.splitlines()
    assert len(tail) == 2
    assert re.fullmatch(
        r"nº 2 \d\d/\d\d/\d{4} \d\d:\d\d:\d\d "
        f"contestation Open ronde 1 table 2 kiosk-1{NNBSP}: CAT QI -> NON VALABLE \\(non valables{NNBSP}: QI\\) "
        r"\[demo [0-9a-f]+\]",
        tail[1],
    ), tail[1]
    english_tail = cli("audit", "tail", "--language", "en", "--data-dir", french_event).output.splitlines()
    assert re.fullmatch(
        r"#2 \d\d/\d\d/\d{4}, \d\d:\d\d:\d\d challenge Open r1 t2 kiosk-1: CAT QI -> UNACCEPTABLE "
        r"\(not: QI\) \[demo [0-9a-f]+\]",
        english_tail[1],
    ), english_tail[1]


def test_a_broken_event_file_leaves_the_command_line_in_english(data_dir: Path) -> None:
    (data_dir / EVENT_FILE).write_text("name = [", "utf-8")
    assert "Verdict: ACCEPTABLE (1 word, demo " in cli("lexicon", "check", "demo", "cat", "--data-dir", data_dir).output
