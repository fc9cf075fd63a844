"""Challenges in languages whose tiles can be several letters (issue 38), through the API: words counted in tiles,
typed as read (CH, L·L or L.L, Ñ or N~), judged under the reading the lexicon settles, and the players asked
where more than one reading is a word, never told which word decided."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from wordjudge.cli.main import main
from wordjudge.model.records import Kind, Record
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.words.profile import Catalog, WordResult
from wordjudge.words.tile_readings import read_typed

from .helpers import CHEAP_HASHER, assert_error_shape, audit_log, device_headers, td_headers, write_event
from .tile_lists import NAMES, compile_list


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    for language in NAMES:
        compile_list(data_dir, language)
    write_event(data_dir, [(language, NAMES[language], "five-per-word") for language in NAMES], name="Tiles Open")
    with TestClient(create_app(Settings(data_dir=data_dir), hasher=CHEAP_HASHER)) as client:
        client.headers.update(device_headers(data_dir, "kiosk-1"))
        yield client


def challenges(data_dir: Path) -> list[Record]:
    """The challenge records of the log, oldest first."""
    log = audit_log(data_dir)
    try:
        return [record for record in log.iterate() if record.kind == Kind.CHALLENGE]
    finally:
        log.close()


def challenge(client: TestClient, division: str, words: str, request_id: str | None = None) -> Any:
    body = {"division": division, "table": 4, "round": 2, "words": words, "request_id": request_id or uuid.uuid4().hex}
    return client.post("/api/challenges", json=body)


def test_a_fifteen_tile_spanish_word_of_sixteen_letters_is_judged(client: TestClient, data_dir: Path) -> None:
    answer = challenge(client, "spanish", "desengancharíais chico")
    assert answer.status_code == 201, answer.text
    assert answer.json()["verdict"] == "acceptable"
    [record] = challenges(data_dir)
    assert record.words == ("DESENGAN[CH]ARIAIS", "[CH]ICO")  # the tiles judged
    assert record.words_typed == ("desengancharíais", "chico")


def test_words_are_counted_in_tiles_and_a_tile_nobody_has_is_named(client: TestClient, data_dir: Path) -> None:
    too_long = assert_error_shape(challenge(client, "spanish", "desengancharíaiss"), 422, "invalid_input")
    assert too_long["message"]["key"] == "error.words.tile_length"
    assert "is 16 tiles: a challenged word has 2 to 15 tiles" in too_long["error"]
    kilo = assert_error_shape(challenge(client, "spanish", "casa kilo"), 422, "invalid_input")
    assert (
        "word 2 'kilo' cannot be made of the tiles of FISE-T: 'K' (LATIN CAPITAL LETTER K) is on no tile"
        in (kilo["error"])
    )
    qatar = assert_error_shape(challenge(client, "catalan", "qatar"), 422, "invalid_input")
    assert "'Q' (LATIN CAPITAL LETTER Q) is only on the tile(s) QU" in qatar["error"]
    assert challenges(data_dir) == []


def test_tiles_are_typed_as_players_read_them(client: TestClient) -> None:
    for division, words in [
        ("spanish", "n~andu PERRO llama"),
        ("catalan", "col.legi paral·lel nyap quatre"),
        ("catalan", "coŀlegi caça"),
        ("welsh", "llyfr rhedeg ffordd cath tan"),
    ]:
        answer = challenge(client, division, words)
        assert answer.status_code == 201, (words, answer.text)
        assert answer.json()["verdict"] == "acceptable", words


def asked_about(answer: Any) -> list[dict[str, Any]]:
    """The question of a challenge refused for want of stated tiles: each word asked about."""
    body = assert_error_shape(answer, 422, "ambiguous_tiles")
    assert body["message"]["key"] == "error.words.ambiguous_tiles"
    return list(body["details"])


def test_a_word_the_board_could_hold_two_ways_is_asked_about_whatever_its_readings_are(
    client: TestClient, data_dir: Path
) -> None:
    # DANGOS is a word as D A NG O S, BANGOR as B A N G O R, HENGA both ways, BANGO neither: the question is the
    # same for each (it follows from the letters and the tile set), so it says nothing of any word's validity.
    for typed in ("dangos", "bangor", "henga", "bango"):
        [word] = asked_about(challenge(client, "welsh", typed))
        upper = typed.upper()
        at = upper.index("NG")
        joined = [*upper[:at], "NG", *upper[at + 2 :]]
        assert word == {
            "position": 1,
            "typed": typed,
            "readings": [joined, list(upper)],
            "stated": [f"{upper[:at]}[NG]{upper[at + 2 :]}", f"{upper[:at]}[N][G]{upper[at + 2 :]}"],
        }
    # Two words: every word that must be stated is asked about, the message names each with its tilings.
    body = assert_error_shape(challenge(client, "welsh", "cath bangor dangos"), 422, "ambiguous_tiles")
    assert [word["position"] for word in body["details"]] == [2, 3]
    assert "'bangor': BA[NG]OR or BA[N][G]OR; 'dangos': DA[NG]OS or DA[N][G]OS" in body["error"]
    assert challenges(data_dir) == []  # nothing is recorded before the tiles are stated


def test_the_server_judges_exactly_the_tiles_stated(client: TestClient, data_dir: Path) -> None:
    # The board holds B A NG O R; the list has BANGOR only as B A N G O R: the phony does not stand.
    assert challenge(client, "welsh", "ba[ng]or").json()["verdict"] == "unacceptable"
    assert challenge(client, "welsh", "ba[n][g]or").json()["verdict"] == "acceptable"
    # The mirror: the board holds D A N G O S; the list has DANGOS only with the NG tile.
    assert challenge(client, "welsh", "da[n][g]os").json()["verdict"] == "unacceptable"
    assert challenge(client, "welsh", "da[ng]os").json()["verdict"] == "acceptable"
    assert [record.words for record in challenges(data_dir)] == [("BA[NG]OR",), ("BANGOR",), ("DANGOS",), ("DA[NG]OS",)]


def test_letters_of_a_tile_the_list_never_splits_are_that_tile_unless_stated_otherwise(
    client: TestClient, data_dir: Path
) -> None:
    # LL is never two L tiles in the Welsh list, nor CH, C and H in the Spanish one: no question, one reading.
    assert challenge(client, "welsh", "llyfr cath").json()["verdict"] == "acceptable"
    assert challenge(client, "spanish", "chico").json()["verdict"] == "acceptable"
    # Stated as separate tiles (a board with two L tiles), they are judged as stated.
    assert challenge(client, "welsh", "[L][L]yfr").json()["verdict"] == "unacceptable"
    assert [record.words for record in challenges(data_dir)] == [("[LL]YFR", "CA[TH]"), ("[CH]ICO",), ("LLYFR",)]


def test_a_question_spends_the_rate_limit_as_a_challenge_and_the_td_is_told(data_dir: Path) -> None:
    compile_list(data_dir, "welsh")
    write_event(data_dir, [("welsh", NAMES["welsh"], "five-per-word")], challenges_per_minute=3)
    with TestClient(create_app(Settings(data_dir=data_dir), hasher=CHEAP_HASHER)) as client:
        kiosk = device_headers(data_dir, "kiosk-1")
        answers = [challenge_as(client, kiosk, "welsh", "bangor").status_code for _ in range(4)]
        assert answers == [422, 422, 422, 429]
        alerts = client.get("/api/alerts", headers=td_headers(data_dir, "alice")).json()["alerts"]
        [told] = [alert for alert in alerts if alert["kind"] == "tile_question"]
        assert told["actor"] == "kiosk-1"
        assert told["count"] == 3
        assert "without its tiles" in told["message"]


def challenge_as(client: TestClient, headers: dict[str, str], division: str, words: str) -> Any:
    body = {"division": division, "table": 4, "round": 2, "words": words, "request_id": uuid.uuid4().hex}
    return client.post("/api/challenges", json=body, headers=headers)


def test_the_event_serves_each_lexicons_tiles_for_the_clients(client: TestClient) -> None:
    lexicons = {lexicon["name"]: lexicon for lexicon in client.get("/api/lexicons").json()}
    welsh = lexicons[NAMES["welsh"]]["tiles"]
    assert welsh["name"] == "welsh"
    assert "NG" in welsh["tiles"]
    assert welsh["split"] == ["NG"]
    assert lexicons[NAMES["spanish"]]["tiles"]["split"] == []
    assert lexicons[NAMES["catalan"]]["tiles"]["spellings"]["L.L"] == "L·L"


def test_reading_a_word_looks_nothing_up(data_dir: Path) -> None:
    """Which tiles a word is, and whether the players must state them, never depends on which readings are words:
    reading looks nothing up (the verdict's lookups come after, one a word stated)."""
    compile_list(data_dir, "welsh")
    profile = Catalog(data_dir).open(NAMES["welsh"])
    asked: list[str] = []
    lookup = profile.lookup

    def counted(word: str) -> WordResult:
        asked.append(word)
        return lookup(word)

    profile.lookup = counted  # type: ignore[method-assign]
    for typed in ("bangor", "bango", "dangos", "henga"):  # one reading a word (N G, then NG), none, both
        [reading] = read_typed(profile, [typed])
        assert reading.chosen is None, typed
        assert len(reading.options) == 2, typed
    assert read_typed(profile, ["ba[ng]or"])[0].chosen == "BA[NG]OR"
    assert asked == []


def test_the_td_finds_a_challenge_by_its_word_typed_as_letters_or_as_tiles(client: TestClient, data_dir: Path) -> None:
    challenge(client, "spanish", "chico perro")
    challenge(client, "welsh", "ba[n][g]or")
    challenge(client, "catalan", "casa col·legi")
    td = td_headers(data_dir, "alice")
    del client.headers["Authorization"]  # the TD's console, not the kiosk

    def found(q: str) -> list[tuple[str, ...]]:
        answer = client.get("/api/challenges", params={"q": q}, headers=td)
        assert answer.status_code == 200, answer.text
        return [tuple(record["words"]) for record in answer.json()["records"]]

    assert found("chico") == found("[ch]ico") == [("[CH]ICO", "PE[RR]O")]
    assert found("chico perro") == [("[CH]ICO", "PE[RR]O")]
    assert found("bangor") == [("BANGOR",)]  # B A N G O R; its NG reading is searched too
    assert found("casa") == [("CASA", "CO[L·L]EGI")]
    # Every spelling the kiosk takes finds it: the middle dot, a full stop, a hyphen, the one-character ŀ.
    for spelling in ("col·legi", "COL.LEGI", "col-legi", "coŀlegi", "co[l·l]egi", "col\u2027legi"):
        assert found(spelling) == [("CASA", "CO[L·L]EGI")], spelling
    assert found("kilo") == []


def test_the_td_reads_words_as_the_board_held_them_in_the_export_and_the_docket_says_which_tiles_matter(
    client: TestClient, data_dir: Path
) -> None:
    challenge(client, "spanish", "desengancharíais")
    welsh = challenge(client, "welsh", "ba[ng]or cath").json()
    docket = client.get(f"/api/challenges/{welsh['id']}/docket").json()
    assert docket["tiles_split"] == ["NG"]  # the docket prints B-A-NG-O-R tile by tile, CATH as letters
    assert docket["record"]["words"] == ["BA[NG]OR", "CA[TH]"]  # the tiles judged
    td = td_headers(data_dir, "alice")
    del client.headers["Authorization"]
    export = client.get("/api/export", params={"format": "csv"}, headers=td)
    assert export.status_code == 200, export.text
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(export.text))}
    assert [rows[key]["words"] for key in sorted(rows)] == ["DESENGANCHARIAIS", "B-A-NG-O-R CATH"]
    # JSON Lines, an archive a program reads, keep the stored form.
    archive = client.get("/api/export", params={"format": "jsonl"}, headers=td).text.splitlines()
    assert [json.loads(line)["words"] for line in archive] == [["DESENGAN[CH]ARIAIS"], ["BA[NG]OR", "CA[TH]"]]


def test_the_command_lines_csv_export_shows_the_words_as_the_board_held_them_too(
    client: TestClient, data_dir: Path
) -> None:
    challenge(client, "welsh", "ba[ng]or cath")
    challenge(client, "spanish", "desengancharíais")
    exported = CliRunner().invoke(main, ["audit", "export", "--format", "csv", "--data-dir", str(data_dir)])
    assert exported.exit_code == 0, exported.output
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [row["words"] for row in rows] == ["B-A-NG-O-R CATH", "DESENGANCHARIAIS"]
