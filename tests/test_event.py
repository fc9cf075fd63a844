from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from wordjudge.base.errors import InvalidInput
from wordjudge.cli.main import main
from wordjudge.model.rules import ChallengeRule
from wordjudge.tournament.event import (
    Division,
    Event,
    demo_event,
    dump_event,
    parse_event,
    save_current_round,
    save_event,
    template,
)
from wordjudge.tournament.event_loading import load_event
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import parse_word_list

from .helpers import fill_disk, write_event


def test_no_event_file_means_the_demo_event(tmp_path: Path) -> None:
    event = load_event(tmp_path)
    assert event.demo
    assert [(d.name, d.lexicon, d.rule) for d in event.divisions] == [("Open", "demo", ChallengeRule.FIVE_PER_WORD)]


def test_event_file_with_divisions_on_different_lexicons(tmp_path: Path) -> None:
    write_event(tmp_path, [("Collins", "CSW24", "five-per-word"), ("NWL", "NWL2023", "double")], name="Big Open")
    event = load_event(tmp_path, check_lexicons=False)  # none compiled here: only the file is read
    assert (event.name, event.demo, event.rounds) == ("Big Open", False, True)
    assert event.lexicons() == ["CSW24", "NWL2023"]
    assert event.division(" nwl ").rule is ChallengeRule.DOUBLE


def test_unknown_division_lists_the_divisions(tmp_path: Path) -> None:
    write_event(tmp_path, [("A", "CSW24", "single"), ("B", "CSW24", "single")])
    with pytest.raises(InvalidInput, match=r"unknown division 'C' \(divisions of Test Open: A, B\)"):
        load_event(tmp_path, check_lexicons=False).division("C")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"division": []}, "'name' is missing: give the event's name"),
        ({"name": "", "division": []}, "'name' must be the event's name"),
        ({"name": "E"}, r"needs at least one \[\[division\]\]"),
        ({"name": "E", "colour": "red", "division": []}, "unknown key.*colour"),
        ({"name": "E", "rounds": "yes", "division": []}, "'rounds' must be true or false"),
        (
            {"name": "E", "tables": "letters", "division": []},
            r"""'tables' must be "numbers" \(1 to 9999\) or "names" \(""",
        ),
        (
            {"name": "E", "division": [{"name": "A", "lexicon": "X", "rule": "seven"}]},
            "division 1 \\(A\\): 'rule' must be one of single, five-per-word",
        ),
        ({"name": "E", "division": [{"name": "A", "lexicon": "../x", "rule": "single"}]}, "cannot name a lexicon"),
        (
            {"name": "E", "division": [{"name": "A", "lexicon": "X", "rule": "single", "pin": 1}]},
            "division 1: unknown key",
        ),
        (
            {
                "name": "E",
                "division": [
                    {"name": "A", "lexicon": "X", "rule": "single"},
                    {"name": "a", "lexicon": "Y", "rule": "single"},
                ],
            },
            "two divisions are named 'a'",
        ),
    ],
)
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
    assert event.tables == "numbers"


def test_tables_are_numbers_unless_the_td_names_them() -> None:
    division = [{"name": "A", "lexicon": "X", "rule": "single"}]
    assert parse_event({"name": "E", "division": division}).tables == "numbers"
    named = parse_event({"name": "E", "tables": "names", "division": division})
    assert named.tables == "names"
    assert named.as_dict()["tables"] == "names"
    assert 'tables = "names"' in dump_event(named)


def test_an_event_written_by_the_console_reads_back_the_same(tmp_path: Path) -> None:
    event = Event(
        name='Spring "Open" — Ålesund',
        divisions=(
            Division("A", "CSW24", ChallengeRule.TEN_PER_TURN),
            Division("B 2", "NWL2023", ChallengeRule.DOUBLE),
        ),
        rounds=False,
        current_round=7,
        challenges_per_minute=0,
        kiosk_result_seconds=30,
        tables="names",
    )
    path = save_event(tmp_path, event)
    assert load_event(tmp_path, check_lexicons=False) == event
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


# -- honest mistakes in a hand-written event file (issue 15, item 9) ----------------------------------------


@pytest.mark.parametrize(
    ("division", "message"),
    [
        ({"name": "A", "lexicon": "demo"}, r"division 1 \(A\): 'rule' is missing: give one of single, five-per-word"),
        (
            {"name": "A", "rule": "single"},
            r"division 1 \(A\): 'lexicon' is missing: name a compiled lexicon or profile",
        ),
        ({"lexicon": "demo", "rule": "single"}, r"division 1: 'name' is missing: give the division's name"),
        (
            {"name": "A", "lexicon": "demo", "rules": "single"},
            r"unknown key\(s\) rules .*'rules': did you mean 'rule'\?",
        ),
    ],
)
def test_a_missing_key_is_named_missing_never_none(division: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as raised:
        parse_event({"name": "E", "division": [division]}, "event.toml")
    assert "None" not in raised.value.message


def test_a_division_in_single_brackets_gets_the_double_bracket_hint(data_dir: Path) -> None:
    (data_dir / "event.toml").write_text('name = "E"\n[division]\nname = "A"\nlexicon = "demo"\nrule = "single"\n')
    with pytest.raises(InvalidInput, match=r"event.toml: use \[\[division\]\] \(two brackets\) for each division"):
        load_event(data_dir)
    (data_dir / "event.toml").write_text('name = "E"\n[[divisions]]\nname = "A"\nlexicon = "demo"\nrule = "single"\n')
    with pytest.raises(InvalidInput, match=r"unknown key\(s\) divisions .*'divisions': did you mean 'division'\?"):
        load_event(data_dir)


def test_lexicon_names_match_whatever_their_case_and_a_typo_gets_a_suggestion(data_dir: Path) -> None:
    catalog = Catalog(data_dir)
    catalog.lexicons.add(parse_word_list(b"QI\nCAT\nDOG\n", source_name="club.txt"), "Club2026")
    write_event(data_dir, [("A", "CLUB2026", "single"), ("B", "DEMO", "double")])
    event = load_event(data_dir)
    assert event.lexicons() == ["Club2026", "demo"]  # the compiled names: what the server opens and records
    write_event(data_dir, [("A", "club2062", "single")])
    with pytest.raises(InvalidInput) as raised:
        load_event(data_dir)
    assert raised.value.message.endswith(
        "event.toml: division 1 (A): no lexicon or profile named 'club2062' is compiled (did you mean Club2026?); "
        "compiled: Club2026, demo. Compile one with: wordjudge lexicon add FILE --name NAME"
    )
    # Without a data dir at hand, parse_event checks the name's form only (the server checks it exists).
    assert parse_event({"name": "E", "division": [{"name": "A", "lexicon": "club2062", "rule": "single"}]})


def test_event_show_refuses_a_bad_file_with_the_fix_and_changes_nothing(data_dir: Path) -> None:
    path = write_event(data_dir, [("A", "dmeo", "single")])
    before = sorted(p.name for p in data_dir.iterdir()), path.read_bytes()
    result = CliRunner().invoke(main, ["event", "show", "--data-dir", str(data_dir)])
    assert result.exit_code != 0
    assert "no lexicon or profile named 'dmeo' is compiled (did you mean demo?)" in result.output
    assert (sorted(p.name for p in data_dir.iterdir()), path.read_bytes()) == before


# -- the current round ---------------------------------------------------------------------------------------


def test_the_current_round_is_read_checked_and_written(tmp_path: Path) -> None:
    division = [{"name": "A", "lexicon": "demo", "rule": "single"}]
    assert parse_event({"name": "E", "division": division}).current_round is None
    assert parse_event({"name": "E", "current_round": 4, "division": division}).current_round == 4
    for bad in (0, 1000, "3", True, 2.5):
        with pytest.raises(InvalidInput, match="'current_round' must be a round number from 1 to 999"):
            parse_event({"name": "E", "current_round": bad, "division": division})
    assert "current_round" not in dump_event(parse_event({"name": "E", "division": division}))


HAND_WRITTEN = """# Spring Open: edited by hand
name = "Spring Open"  # the name on the dockets
rounds = true
challenges_per_minute = 6

[[division]]
name = "A"
lexicon = "demo"   # until CSW24 arrives
rule = "five-per-word"
"""


def test_setting_the_round_changes_that_line_only_and_keeps_the_tds_comments(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    path.write_text(HAND_WRITTEN)
    event = load_event(tmp_path)
    save_current_round(tmp_path, replace(event, current_round=3))
    assert path.read_text() == HAND_WRITTEN.replace("rounds = true\n", "rounds = true\ncurrent_round = 3\n")
    save_current_round(tmp_path, replace(event, current_round=4))
    assert path.read_text() == HAND_WRITTEN.replace("rounds = true\n", "rounds = true\ncurrent_round = 4\n")
    assert load_event(tmp_path) == replace(event, current_round=4)
    save_current_round(tmp_path, replace(event, current_round=None))
    assert path.read_text() == HAND_WRITTEN
    # No 'rounds' line, no newline at the end: the line goes after the name, and the file still reads.
    path.write_text('name = "E"\n[[division]]\nname = "A"\nlexicon = "demo"\nrule = "single"')
    save_current_round(tmp_path, replace(load_event(tmp_path), current_round=2))
    assert (
        path.read_text() == 'name = "E"\ncurrent_round = 2\n[[division]]\nname = "A"\nlexicon = "demo"\nrule = "single"'
    )


def test_setting_the_round_over_a_hand_edit_that_does_not_load_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    path.write_text(HAND_WRITTEN.replace('rule = "five-per-word"', 'rule = "fivepw"'))
    before = path.read_bytes()
    served = parse_event(tomllib.loads(HAND_WRITTEN))  # what the server serves while the TD edits the file
    with pytest.raises(InvalidInput, match=r"'rule' must be one of .*, not 'fivepw': fix it, then set the round again"):
        save_current_round(tmp_path, replace(served, current_round=2))
    assert path.read_bytes() == before
    assert save_current_round(tmp_path.parent, demo_event()) is None  # the demo event has no file to write
