"""Challenges in languages whose tiles can be several letters (issue 38), through the API: words counted in tiles,
typed as read (CH, L·L or L.L, Ñ or N~), judged under the reading the lexicon settles, and the players asked
where more than one reading is a word, never told which word decided."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from wordjudge.model.records import Kind, Record
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.words.profile import Catalog, WordResult
from wordjudge.words.readings import read_typed

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


def test_the_lexicon_decides_when_exactly_one_reading_is_a_word(client: TestClient, data_dir: Path) -> None:
    assert challenge(client, "welsh", "dangos bangor").json()["verdict"] == "acceptable"
    assert challenge(client, "welsh", "bango").json()["verdict"] == "unacceptable"  # no reading is a word
    dangos, bango = challenges(data_dir)
    assert dangos.words == ("DA[NG]OS", "BANGOR")  # D A NG O S, and B A N G O R
    assert bango.words == ("BA[NG]O",)  # recorded with the fewest tiles


def test_where_more_than_one_reading_is_a_word_the_players_pick_and_nothing_is_recorded_before(
    client: TestClient, data_dir: Path
) -> None:
    request_id = uuid.uuid4().hex
    asked = assert_error_shape(challenge(client, "welsh", "henga dangos", request_id), 422, "ambiguous_tiles")
    # Every word read more than one way is asked about, not only the one the lexicon cannot settle.
    assert asked["details"] == [
        {"position": 1, "typed": "henga", "readings": [["H", "E", "NG", "A"], ["H", "E", "N", "G", "A"]]},
        {"position": 2, "typed": "dangos", "readings": [["D", "A", "NG", "O", "S"], ["D", "A", "N", "G", "O", "S"]]},
    ]
    assert asked["message"]["params"]["positions"] == "1, 2"
    assert challenges(data_dir) == []
    picked = challenge(client, "welsh", "[H][E][N][G][A] [D][A][NG][O][S]", request_id)
    assert picked.status_code == 201
    assert picked.json()["verdict"] == "acceptable"
    [record] = challenges(data_dir)
    assert record.words == ("HENGA", "DA[NG]OS")
    # A reading the players pick that is not a word is judged as picked.
    assert challenge(client, "welsh", "[D][A][N][G][O][S]").json()["verdict"] == "unacceptable"


def test_the_event_serves_each_lexicons_tiles_for_the_clients(client: TestClient) -> None:
    lexicons = {lexicon["name"]: lexicon for lexicon in client.get("/api/lexicons").json()}
    welsh = lexicons[NAMES["welsh"]]["tiles"]
    assert welsh["name"] == "welsh"
    assert "NG" in welsh["tiles"]
    assert welsh["split"] == ["NG"]
    assert lexicons[NAMES["spanish"]]["tiles"]["split"] == []
    assert lexicons[NAMES["catalan"]]["tiles"]["spellings"]["L.L"] == "L·L"


def test_every_reading_that_fits_the_board_is_looked_up_whatever_the_answers(data_dir: Path) -> None:
    """The work done for a word does not depend on which of its readings are words (the one-verdict rule)."""
    compile_list(data_dir, "welsh")
    profile = Catalog(data_dir).open(NAMES["welsh"])
    asked: list[str] = []
    lookup = profile.lookup

    def counted(word: str) -> WordResult:
        asked.append(word)
        return lookup(word)

    profile.lookup = counted  # type: ignore[method-assign]
    for typed in ("bangor", "bango", "dangos", "henga"):  # one reading a word (N G, then NG), none, both
        asked.clear()
        read_typed(profile, [typed])
        assert len(asked) == 2, (typed, asked)


def test_the_td_finds_a_challenge_by_its_word_typed_as_letters_or_as_tiles(client: TestClient, data_dir: Path) -> None:
    challenge(client, "spanish", "chico perro")
    challenge(client, "welsh", "bangor")
    challenge(client, "catalan", "casa")
    td = td_headers(data_dir, "alice")
    del client.headers["Authorization"]  # the TD's console, not the kiosk

    def found(q: str) -> list[tuple[str, ...]]:
        answer = client.get("/api/challenges", params={"q": q}, headers=td)
        assert answer.status_code == 200, answer.text
        return [tuple(record["words"]) for record in answer.json()["records"]]

    assert found("chico") == found("[ch]ico") == [("[CH]ICO", "PE[RR]O")]
    assert found("chico perro") == [("[CH]ICO", "PE[RR]O")]
    assert found("bangor") == [("BANGOR",)]  # B A N G O R; its NG reading is searched too
    assert found("casa") == [("CASA",)]
    assert found("kilo") == []
