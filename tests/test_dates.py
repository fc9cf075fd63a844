"""Dates follow the event's conventions (issue 35, item 6): day-first for English unless the event says otherwise
with a regional language tag (en-US month-first; en-CA and fr-CA ISO), the same in the server's words
(messages.format_datetime) and the clients' (kiosk/i18n.js formatDate, dateParts): a docket, a screen and the
command line agree. An unknown tag is refused naming the accepted ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from wordjudge.base import messages
from wordjudge.base.errors import LANGUAGES, InvalidInput, Message
from wordjudge.base.messages import format_datetime
from wordjudge.tournament.event import dump_event, parse_event

from .helpers import Actors

KIOSK = Path(__file__).resolve().parent.parent / "kiosk"
DIVISION = [{"name": "Open", "lexicon": "demo", "rule": "five-per-word"}]
# 4 March 2026 (03/04 is the ambiguous kind), 09:05:03 UTC.
MOMENT = datetime(2026, 3, 4, 9, 5, 3, tzinfo=UTC)
EXPECTED = {
    "en": "04/03/2026, 09:05:03",
    "en-GB": "04/03/2026, 09:05:03",
    "en-AU": "04/03/2026, 09:05:03",
    "en-US": "03/04/2026, 09:05:03",
    "en-CA": "2026-03-04 09:05:03",
    "fr": "04/03/2026 09:05:03",
    "fr-FR": "04/03/2026 09:05:03",
    "fr-CA": "2026-03-04 09:05:03",
    "qps-ploc": "04/03/2026, 09:05:03",
}


def _node(script: str) -> Any:
    """What ``script`` (an ES module importing kiosk/i18n.js as ``i18n``) prints as JSON, in UTC."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is missing: apt-get install nodejs")
    module = f"import * as i18n from {json.dumps((KIOSK / 'shared' / 'i18n.js').as_uri())};\n{script}"
    run = subprocess.run(
        [node, "--input-type=module", "-e", module],
        env={**os.environ, "TZ": "UTC"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_english_dates_are_day_first_unless_the_event_says_otherwise() -> None:
    for tag, expected in EXPECTED.items():
        assert format_datetime(MOMENT, tag) == expected, tag
    assert messages.date_order("en") == ("day", "month", "year")
    assert messages.date_order("en-US") == ("month", "day", "year")
    assert messages.date_order("fr-CA") == ("year", "month", "day")


def test_the_clients_format_dates_as_the_server_does() -> None:
    tags = list(EXPECTED)
    shown = _node(
        f"const tags = {json.dumps(tags)};\n"
        "const moment = new Date(Date.UTC(2026, 2, 4, 9, 5, 3));\n"
        "const out = {};\n"
        "for (const tag of tags) { const tr = i18n.translator({}, tag);"
        " out[tag] = [tr.formatDate(moment), tr.formatDate(moment, 'short-datetime'), tr.formatDate(moment, 'time')]; }\n"
        "console.log(JSON.stringify(out));"
    )
    for tag, (datetime_text, short, time) in shown.items():
        assert datetime_text == EXPECTED[tag] == format_datetime(MOMENT, tag), tag
        assert short == format_datetime(MOMENT, tag, "short-datetime"), tag
        assert time == "09:05:03"


def test_a_date_is_typed_in_the_events_order() -> None:
    """The console's date filters (dateOrder, datePattern, parseDate) follow the same order as the dates shown."""
    found = _node(
        "const symbols = { day: 'dd', month: 'mm', year: 'yyyy', hour: 'hh', minute: 'mm' };\n"
        "const iso = (d) => d && [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes()];\n"
        "const moment = new Date(2026, 2, 4, 9, 5);\n"
        "const out = {};\n"
        "for (const tag of ['en', 'en-GB', 'en-US', 'fr', 'fr-CA']) {\n"
        "  const tr = i18n.translator({}, tag);\n"
        "  out[tag] = { order: i18n.dateOrder(tag), pattern: i18n.datePattern(tag, symbols),\n"
        "    typed: iso(i18n.parseDate('04/03/2026', tag)), back: iso(i18n.parseDate(tr.formatDate(moment, "
        "'short-datetime'), tag)) };\n"
        "}\n"
        "console.log(JSON.stringify(out));"
    )
    assert found["en"]["order"] == ["day", "month", "year", "hour", "minute"]
    assert found["en"]["pattern"] == "dd/mm/yyyy, hh:mm"
    assert found["en"]["typed"] == [2026, 3, 4, 0, 0]  # 4 March, as an English event writes it
    assert found["en-GB"]["typed"] == [2026, 3, 4, 0, 0]
    assert found["en-US"]["order"] == ["month", "day", "year", "hour", "minute"]
    assert found["en-US"]["typed"] == [2026, 4, 3, 0, 0]  # 3 April in the United States
    assert found["fr"]["typed"] == [2026, 3, 4, 0, 0]
    assert found["fr-CA"]["order"] == ["year", "month", "day", "hour", "minute"]
    assert found["fr-CA"]["pattern"] == "yyyy-mm-dd hh:mm"
    for tag, seen in found.items():
        assert seen["back"] == [2026, 3, 4, 9, 5], tag  # what is shown, typed back, is the same moment


@pytest.mark.parametrize("tag", ["en-US", "en-GB", "fr-CA", "en-AU", "fr-BE"])
def test_the_event_takes_a_regional_language_tag(tag: str) -> None:
    event = parse_event({"name": "E", "language": tag, "division": DIVISION})
    assert event.language == tag
    assert event.as_dict()["language"] == tag
    assert f'language = "{tag}"' in dump_event(event)
    # The catalogue is the base language's: en-GB says what en says, fr-CA what fr says.
    base = tag.split("-")[0]
    assert Message("ui.docket.final").text(tag) == Message("ui.docket.final").text(base)


@pytest.mark.parametrize("tag", ["de", "en-XX", "fr_CA", "english"])
def test_an_unknown_language_tag_is_refused_naming_the_accepted_ones(tag: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_event({"name": "E", "language": tag, "division": DIVISION})
    text = refused.value.message
    assert refused.value.msg.key == "error.event.language_invalid"
    for accepted in ("en", "en-GB", "en-US", "fr", "fr-CA", "qps-ploc"):
        assert accepted in text.split("must be one of ")[1], text
    assert repr(tag) in text


def test_the_console_sets_a_regional_tag_and_the_clients_read_it(
    event_client: TestClient, actors: Actors, data_dir: Path
) -> None:
    body = {"name": "Test Open", "language": "en-US", "division": DIVISION}
    changed = event_client.put("/api/event", json=body, headers=actors.alice)
    assert changed.status_code == 200, changed.text
    assert event_client.get("/api/event", headers=actors.kiosk).json()["language"] == "en-US"
    refused = event_client.put("/api/event", json={**body, "language": "en-XX"}, headers=actors.alice)
    assert refused.status_code == 422
    assert "en-GB" in refused.json()["error"]
    assert "'en-XX'" in refused.json()["error"]


def test_every_accepted_tag_has_a_name_in_every_catalogue() -> None:
    """The console's language list names each tag (ui.language.<tag>) in English and French."""
    for lang in ("en", "fr"):
        catalogue = json.loads((KIOSK / "locales" / f"{lang}.json").read_text("utf-8"))
        for tag in LANGUAGES:
            assert f"ui.language.{tag}" in catalogue, (lang, tag)
