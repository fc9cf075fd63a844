from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from wordjudge.cli import main
from wordjudge.errors import InvalidInput
from wordjudge.event import Division, Event, dump_event, load_event, parse_event, save_event, template
from wordjudge.rules import ChallengeRule

from .conftest import fill_disk, write_event


def test_no_event_file_means_the_demo_event(tmp_path: Path) -> None:
    event = load_event(tmp_path)
    assert event.demo
    assert [(d.name, d.lexicon, d.rule) for d in event.divisions] == [("Open", "demo", ChallengeRule.FIVE_PER_WORD)]


def test_event_file_with_divisions_on_different_lexicons(tmp_path: Path) -> None:
    write_event(tmp_path, [("Collins", "CSW24", "five-per-word"), ("NWL", "NWL2023", "double")], name="Big Open")
    event = load_event(tmp_path)
    assert (event.name, event.demo, event.rounds) == ("Big Open", False, True)
    assert event.lexicons() == ["CSW24", "NWL2023"]
    assert event.division(" nwl ").rule is ChallengeRule.DOUBLE


def test_unknown_division_lists_the_divisions(tmp_path: Path) -> None:
    write_event(tmp_path, [("A", "CSW24", "single"), ("B", "CSW24", "single")])
    with pytest.raises(InvalidInput, match=r"unknown division 'C' \(divisions of Test Open: A, B\)"):
        load_event(tmp_path).division("C")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"division": []}, "'name' must be the event's name"),
        ({"name": "E"}, r"needs at least one \[\[division\]\]"),
        ({"name": "E", "colour": "red", "division": []}, "unknown key.*colour"),
        ({"name": "E", "rounds": "yes", "division": []}, "'rounds' must be true or false"),
        ({"name": "E", "division": [{"name": "A", "lexicon": "X", "rule": "seven"}]}, "division 1 \\(A\\): 'rule' must be one of single, five-per-word"),
        ({"name": "E", "division": [{"name": "A", "lexicon": "../x", "rule": "single"}]}, "cannot name a lexicon"),
        ({"name": "E", "division": [{"name": "A", "lexicon": "X", "rule": "single", "pin": 1}]}, "division 1: unknown key"),
        ({"name": "E", "division": [{"name": "A", "lexicon": "X", "rule": "single"}, {"name": "a", "lexicon": "Y", "rule": "single"}]}, "two divisions are named 'a'"),
    ],
)  # fmt: skip
def test_bad_event_files_name_what_is_wrong(data: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_event(data, "event.toml")


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "event.toml").write_text("name = \n")
    with pytest.raises(InvalidInput, match=r"event.toml: not valid TOML"):
        load_event(tmp_path)


def test_template_is_a_valid_event() -> None:
    event = parse_event(tomllib.loads(template(["CSW24", "NWL2023"])))
    assert [(d.name, d.lexicon) for d in event.divisions] == [("A", "CSW24"), ("B", "NWL2023")]


def test_an_event_written_by_the_console_reads_back_the_same(tmp_path: Path) -> None:
    event = Event(
        name='Spring "Open" — Ålesund',
        divisions=(
            Division("A", "CSW24", ChallengeRule.TEN_PER_TURN),
            Division("B 2", "NWL2023", ChallengeRule.DOUBLE),
        ),
        rounds=False,
        challenges_per_minute=0,
        kiosk_result_seconds=30,
    )
    path = save_event(tmp_path, event)
    assert load_event(tmp_path) == event
    assert path.read_text("utf-8") == dump_event(event)
    assert [p.name for p in tmp_path.iterdir()] == ["event.toml"]  # no temporary file left behind


def test_an_event_file_is_replaced_whole_or_not_at_all_on_a_full_disk(small_disk: Path) -> None:
    data = small_disk / "data"
    assert CliRunner().invoke(main, ["event", "init", "--data-dir", str(data)]).exit_code == 0
    before = (data / "event.toml").read_text()
    filler = fill_disk(small_disk)
    try:
        again = CliRunner().invoke(main, ["event", "init", "--replace", "--data-dir", str(data)])
        assert again.exit_code == 1
        assert "event.toml: cannot be written" in again.output
        assert (data / "event.toml").read_text() == before  # never empty, never half written
        assert [p.name for p in data.iterdir()] == ["event.toml"]  # no temporary file left behind
    finally:
        filler.unlink()
