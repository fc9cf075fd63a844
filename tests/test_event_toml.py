"""The event file is edited, never rewritten: the TD's comments and layout survive every change the server writes
(the console's settings and divisions, the round), and a file without comments reads back as it was written."""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from wordjudge.model.rules import ChallengeRule
from wordjudge.service.settings import Settings
from wordjudge.tournament import event as event_module
from wordjudge.tournament.event import (
    Division,
    Event,
    dump_event,
    edit_event_text,
    parse_event,
    save_current_round,
    save_event,
)
from wordjudge.tournament.event_loading import load_event
from wordjudge.web.app import create_app

from .helpers import CHEAP_HASHER, Actors

# A TD's own file: a header comment, comments after values, a comment inside a division and between them.
TD_FILE = """# Spring Open 2026: the TD's notes
# (ask Marie before changing the rules)
name = "Spring Open"  # the name on the dockets
rounds = true
challenges_per_minute = 6   # per kiosk

[[division]]
name = "Open"
lexicon = "demo"  # until CSW24 arrives
# Open plays five-per-word, as announced on the flyer
rule = "five-per-word"

[[division]]
name = "Juniors"  # under 18
lexicon = "demo"
rule = "single"
"""
COMMENTS = [line for line in TD_FILE.splitlines() if "#" in line]


def _kept_comments(text: str) -> None:
    for comment in (line[line.index("#") :] for line in COMMENTS):
        assert comment in text, f"lost: {comment}"


@pytest.fixture
def td_client(data_dir: Path, settings: Settings) -> Iterator[TestClient]:
    """A server for the TD's own commented event file."""
    (data_dir / "event.toml").write_text(TD_FILE)
    with TestClient(create_app(settings, hasher=CHEAP_HASHER)) as client:
        yield client


def _console_event(**changed: object) -> dict[str, object]:
    """What the console sends: the event's settings and divisions (all of them), with ``changed``."""
    return {
        "name": "Spring Open",
        "rounds": True,
        "challenges_per_minute": 6,
        "kiosk_result_seconds": 10,
        "tables": "numbers",
        "language": "en",
        "division": [
            {"name": "Open", "lexicon": "demo", "rule": "five-per-word"},
            {"name": "Juniors", "lexicon": "demo", "rule": "single"},
        ],
        **changed,
    }


def test_a_console_save_of_the_settings_keeps_the_tds_comments(
    td_client: TestClient, actors: Actors, data_dir: Path
) -> None:
    path = data_dir / "event.toml"
    saved = td_client.put(
        "/api/event", json=_console_event(kiosk_result_seconds=20, name="Spring Open 2026"), headers=actors.alice
    )
    assert saved.status_code == 200, saved.text
    # The two settings changed, in place (the name's comment kept), the one the file lacked after the one before it.
    assert path.read_text() == TD_FILE.replace('name = "Spring Open"', 'name = "Spring Open 2026"').replace(
        "challenges_per_minute = 6   # per kiosk\n",
        "challenges_per_minute = 6   # per kiosk\nkiosk_result_seconds = 20\n",
    )
    served = td_client.get("/api/event", headers=actors.alice).json()
    assert (served["name"], served["kiosk_result_seconds"]) == ("Spring Open 2026", 20)
    assert load_event(data_dir).as_dict() == {
        k: served[k] for k in load_event(data_dir).as_dict() if k != "divisions"
    } | {"divisions": [d.as_dict() for d in load_event(data_dir).divisions]}


def test_a_console_change_of_the_divisions_keeps_the_tds_comments(
    td_client: TestClient, actors: Actors, data_dir: Path
) -> None:
    path = data_dir / "event.toml"
    divisions = [
        {"name": "Open", "lexicon": "demo", "rule": "ten-per-word"},
        {"name": "Juniors", "lexicon": "demo", "rule": "single"},
        {"name": "Seniors", "lexicon": "demo", "rule": "double"},
    ]
    saved = td_client.put("/api/event", json=_console_event(division=divisions), headers=actors.alice)
    assert saved.status_code == 200, saved.text
    text = path.read_text()
    _kept_comments(text)
    assert text == TD_FILE.replace('rule = "five-per-word"', 'rule = "ten-per-word"') + (
        '\n[[division]]\nname = "Seniors"\nlexicon = "demo"\nrule = "double"\n'
    )
    # Juniors removed: its table goes, with the comment on its line; the others' stay.
    saved = td_client.put("/api/event", json=_console_event(division=divisions[::2]), headers=actors.alice)
    assert saved.status_code == 200, saved.text
    text = path.read_text()
    assert "Juniors" not in text
    assert "# Open plays five-per-word, as announced on the flyer" in text
    assert "# Spring Open 2026: the TD's notes\n# (ask Marie before changing the rules)\n" in text
    assert [d.name for d in load_event(data_dir).divisions] == ["Open", "Seniors"]


def test_a_round_change_keeps_the_tds_comments(td_client: TestClient, actors: Actors, data_dir: Path) -> None:
    path = data_dir / "event.toml"
    for current_round in (3, 4):
        answer = td_client.put("/api/event/round", json={"current_round": current_round}, headers=actors.alice)
        assert answer.status_code == 200, answer.text
        assert path.read_text() == TD_FILE.replace(
            "rounds = true\n", f"rounds = true\ncurrent_round = {current_round}\n"
        )
    assert td_client.put("/api/event/round", json={"current_round": None}, headers=actors.alice).status_code == 200
    assert path.read_text() == TD_FILE


def _td_event() -> Event:
    return parse_event(tomllib.loads(TD_FILE))


def test_saving_the_event_edits_the_file_in_place(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    path.write_text(TD_FILE)
    event = _td_event()
    save_event(tmp_path, event)
    assert path.read_text() == TD_FILE  # nothing changed: nothing written differently
    juniors = Division("Juniors", "demo", ChallengeRule.DOUBLE)
    renamed = Division("Open A", "demo", ChallengeRule.FIVE_PER_WORD)
    changed = replace(event, language="fr", current_round=2, divisions=(renamed, juniors))
    save_event(tmp_path, changed)
    text = path.read_text()
    _kept_comments(text.replace('name = "Open A"', 'name = "Open"'))
    assert 'name = "Open A"\nlexicon = "demo"  # until CSW24 arrives\n' in text  # renamed: its table kept
    assert 'name = "Juniors"  # under 18\nlexicon = "demo"\nrule = "double"\n' in text
    assert load_event(tmp_path, check_lexicons=False) == changed
    save_current_round(tmp_path, replace(changed, current_round=5))
    assert path.read_text() == text.replace("current_round = 2", "current_round = 5")


def test_divisions_moved_keep_their_tables_each_on_lines_of_their_own() -> None:
    tight = 'name = "E"\n[[division]]\nname = "A"  # first\nlexicon = "x"\nrule = "single"\n[[division]]\nname = "B"'
    tight += '\nlexicon = "y"\nrule = "double"'  # no new line at the end
    event = parse_event(tomllib.loads(tight))
    moved = replace(event, divisions=(*event.divisions[::-1], Division("C", "z", ChallengeRule.SINGLE)))
    edited = edit_event_text(tight, moved)
    assert edited == (
        'name = "E"\n[[division]]\nname = "B"\nlexicon = "y"\nrule = "double"\n\n'
        '[[division]]\nname = "A"  # first\nlexicon = "x"\nrule = "single"\n\n'
        '[[division]]\nname = "C"\nlexicon = "z"\nrule = "single"\n'
    )
    assert parse_event(tomllib.loads(edited)) == moved


def test_a_lexicon_written_in_another_case_is_left_as_the_td_wrote_it() -> None:
    text = 'name = "E"\n[[division]]\nname = "A"\nlexicon = "csw24"  # the TD\'s case\nrule = "single"\n'
    served = replace(parse_event(tomllib.loads(text)), divisions=(Division("A", "CSW24", ChallengeRule.SINGLE),))
    assert edit_event_text(text, replace(served, kiosk_result_seconds=30)) == text.replace(
        "\n[[division]]", "\nkiosk_result_seconds = 30\n[[division]]", 1
    )


def test_divisions_written_inline_are_edited_inline() -> None:
    text = 'name = "E"  # ours\ndivision = [{name = "A", lexicon = "x", rule = "single"}]\nrounds = false\n'
    event = parse_event(tomllib.loads(text))
    added = replace(event, divisions=(*event.divisions, Division("B", "y", ChallengeRule.DOUBLE)))
    assert edit_event_text(text, added) == text.replace("}]", '}, {name = "B", lexicon = "y", rule = "double"}]')


@pytest.mark.parametrize(
    "change",
    [
        {"current_round": 7},
        {"name": 'Spring "Open" — Ålesund', "rounds": False, "tables": "names", "language": "fr-CA"},
        {"challenges_per_minute": 0, "kiosk_result_seconds": 120},
        {"divisions": (Division("A", "CSW24", ChallengeRule.SINGLE),)},
        {"divisions": (Division("B 2", "NWL2023", ChallengeRule.DOUBLE), Division("A", "CSW24", ChallengeRule.DOUBLE))},
        {
            "divisions": (
                Division("A", "CSW24", ChallengeRule.TEN_PER_TURN),
                Division("B 2", "NWL2023", ChallengeRule.DOUBLE),
                Division("C", "CSW24", ChallengeRule.SINGLE),
            )
        },
    ],
)
def test_a_file_without_comments_round_trips(tmp_path: Path, change: dict[str, object]) -> None:
    """A file the console wrote (no comments) edited for a change is the file it would write for the new event."""
    event = Event(
        name="Open",
        divisions=(
            Division("A", "CSW24", ChallengeRule.TEN_PER_TURN),
            Division("B 2", "NWL2023", ChallengeRule.DOUBLE),
        ),
        current_round=2,
    )
    path = tmp_path / "event.toml"
    path.write_text(dump_event(event))
    save_event(tmp_path, event)
    assert path.read_text() == dump_event(event)
    changed = replace(event, **change)  # type: ignore[arg-type]
    save_event(tmp_path, changed)
    assert path.read_text() == dump_event(changed)
    assert load_event(tmp_path, check_lexicons=False) == changed


def test_a_file_that_does_not_load_is_written_whole_by_the_console(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    path.write_text('name = "E"\n[[division]\n')  # a hand edit under way
    event = _td_event()
    save_event(tmp_path, event)
    assert path.read_text() == dump_event(event)


def test_the_regex_round_editor_is_gone() -> None:
    source = inspect.getsource(event_module)
    assert not hasattr(event_module, "with_current_round")
    assert "import re\n" not in source
    assert "tomli_w" not in source
