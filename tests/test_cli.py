from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wordjudge.cli.main import main
from wordjudge.cli.options import SETTING_FLAGS
from wordjudge.log.audit import AuditLog
from wordjudge.service.settings import Settings, env_name
from wordjudge.storage.audit_schema import SCHEMA
from wordjudge.storage.dialect import StateLocation
from wordjudge.words.editions import DEMO_NAME

from .helpers import write_list


def run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_list(tmp_path / "tiny.txt", ["# a tiny list", "cat", "dog", "Dog", "emu", "antefix"])


# The settings of the commands that say verdicts (the server itself speaks the event's language).
_VERDICT_SETTINGS = {"language"}


def test_every_setting_has_a_flag_naming_its_environment_twin() -> None:
    assert set(SETTING_FLAGS) == set(Settings.model_fields)
    help_text = run("serve", "--help").output
    for field in set(Settings.model_fields) - _VERDICT_SETTINGS:
        assert SETTING_FLAGS[field][0] in help_text
        assert env_name(field) in help_text
    for command in (["lexicon", "check"], ["audit", "verify"], ["audit", "backup"], ["audit", "tail"]):
        help_text = run(*command, "--help").output
        for field in _VERDICT_SETTINGS:
            assert SETTING_FLAGS[field][0] in help_text, command
            assert env_name(field) in help_text, command


def test_add_reports_what_it_read_and_compiled(tmp_path: Path, tiny: Path) -> None:
    result = run("lexicon", "add", tiny, "--name", "TINY", "--data-dir", tmp_path / "data")
    assert result.exit_code == 0, result.output
    assert "Read tiny.txt (plain list): 4 words, 1 duplicate(s)" in result.output
    assert "Compiled TINY: 4 words, 3-7 letters" in result.output
    assert "Alphabet (13 letters): ACDEFGIMNOTUX" in result.output
    assert "Edition: unknown list" in result.output
    assert (tmp_path / "data" / "lexicons" / "TINY" / "words.marisa").is_file()


def test_add_of_the_enable_list_says_it_matches(tmp_path: Path, demo_words: list[str]) -> None:
    source = write_list(tmp_path / "enable1.txt", [w.lower() for w in demo_words], newline="\r\n")
    result = run("lexicon", "add", source, "--name", "ENABLE", "--data-dir", tmp_path / "data")
    assert result.exit_code == 0, result.output
    assert "Edition: matches ENABLE (172,820 words)" in result.output


def test_add_refuses_invalid_lines_naming_file_line_and_content(tmp_path: Path) -> None:
    source = write_list(tmp_path / "bad.txt", ["cat", "d0g", "emu"])
    result = run("lexicon", "add", source, "--name", "BAD", "--data-dir", tmp_path / "data")
    assert result.exit_code == 1
    assert "bad.txt, line 2: 'd0g': it has a digit '0' (DIGIT ZERO)" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "data" / "lexicons" / "BAD").exists()


def test_add_with_skip_invalid_reports_the_count(tmp_path: Path) -> None:
    source = write_list(tmp_path / "bad.txt", ["cat", "d0g", "emu", "e-mu"])
    result = run("lexicon", "add", source, "--name", "OK", "--skip-invalid", "--data-dir", tmp_path / "data")
    assert result.exit_code == 0, result.output
    assert "2 invalid line(s) skipped (first: bad.txt, line 2: 'd0g'" in result.output


def test_add_reports_comments_and_words_marked_with_a_hash(tmp_path: Path) -> None:
    source = write_list(tmp_path / "marked.txt", ["# new words are marked #", "#aargh", "aa", "#zzz", "#-", "ab"])
    result = run("lexicon", "add", source, "--name", "MARKED", "--data-dir", tmp_path / "data")
    assert result.exit_code == 0, result.output
    assert (
        "Read marked.txt (plain list): 4 words, 0 duplicate(s), 2 comment line(s) skipped, "
        "2 word(s) marked with '#' read without the mark (first: line 2 '#aargh', line 4 '#zzz')"
    ) in result.output
    assert "Compiled MARKED: 4 words" in result.output


def test_add_of_a_list_in_another_format_says_which_format_to_use(tmp_path: Path) -> None:
    source = write_list(tmp_path / "scores.txt", ["1520 qi", "1380 za", "12 aa"])
    result = run("lexicon", "add", source, "--name", "S", "--format", "zyzzyva", "--data-dir", tmp_path / "data")
    assert result.exit_code == 1
    error = result.stderr
    assert (
        "scores.txt: 3 line(s) are not words, read as a Zyzzyva list (WORD definition...), as --format zyzzyva" in error
    )
    assert "If it is a playability list (score WORD), add --format playability: every line then reads" in error
    assert not (tmp_path / "data").exists()
    assert run("lexicon", "add", source, "--name", "S", "--data-dir", tmp_path / "data").exit_code == 0


def test_data_dir_comes_from_the_environment_twin(tmp_path: Path, tiny: Path) -> None:
    env = {"WORDJUDGE_DATA_DIR": str(tmp_path / "envdata")}
    assert run("lexicon", "add", tiny, "--name", "TINY", env=env).exit_code == 0
    listing = run("lexicon", "list", env=env)
    assert "TINY" in listing.output
    assert "unknown list" in listing.output
    assert (tmp_path / "envdata" / "lexicons" / "TINY").is_dir()


def test_list_info_check_diff(tmp_path: Path, tiny: Path) -> None:
    data = tmp_path / "data"
    newer = write_list(tmp_path / "newer.txt", ["cat", "dog", "gnu", "antefix", "antefixae"])
    assert run("lexicon", "add", tiny, "--name", "OLD", "--data-dir", data).exit_code == 0
    assert run("lexicon", "add", newer, "--name", "NEW", "--data-dir", data).exit_code == 0

    listing = run("lexicon", "list", "--data-dir", data).output.splitlines()
    assert listing[0].split() == ["NAME", "KIND", "WORDS", "FINGERPRINT", "EDITION"]
    assert [line.split()[0] for line in listing[1:]] == ["NEW", "OLD"]

    info = run("lexicon", "info", "OLD", "--data-dir", data).output
    assert "words: 4, 3-7 letters" in info
    assert "fingerprint recomputed from the words it holds" in info
    assert "source: tiny.txt (plain" in info

    check = run("lexicon", "check", "NEW", "gnu", "antefixae,tax", "--data-dir", data)
    assert check.exit_code == 0
    lines = check.output.splitlines()
    assert lines[0].split()[:2] == ["GNU", "acceptable"]
    assert lines[2].split()[:3] == ["TAX", "NOT", "acceptable"]
    assert lines[-1].startswith("Verdict: UNACCEPTABLE (3 words, NEW ")

    diff = run("lexicon", "diff", "OLD", "NEW", "--data-dir", data)
    assert diff.stdout.splitlines() == ["-EMU", "+ANTEFIXAE", "+GNU"]
    assert "OLD -> NEW: 2 added, 1 removed" in diff.stderr


def test_check_refuses_letters_outside_the_alphabet(tmp_path: Path, tiny: Path) -> None:
    data = tmp_path / "data"
    run("lexicon", "add", tiny, "--name", "TINY", "--data-dir", data)
    result = run("lexicon", "check", "TINY", "caté", "--data-dir", data)
    assert result.exit_code == 1
    assert "word 1 'caté' has 'É' (LATIN CAPITAL LETTER E WITH ACUTE), which is not a letter of TINY" in result.stderr


def test_unknown_lexicon_is_a_clear_error(tmp_path: Path) -> None:
    result = run("lexicon", "info", "CSW24", "--data-dir", tmp_path / "data")
    assert result.exit_code == 1
    assert "no lexicon or profile named CSW24" in result.stderr


def test_profile_add_and_info(tmp_path: Path, tiny: Path) -> None:
    data = tmp_path / "data"
    run("lexicon", "add", tiny, "--name", "TINY", "--data-dir", data)
    additions = write_list(tmp_path / "errata.txt", ["# ABSP: omitted in error", "antefixae"])
    made = run("profile", "add", "TINY-E", "--base", "TINY", "--additions", additions, "--data-dir", data)
    assert made.exit_code == 0, made.output
    assert "Profile TINY-E: base TINY, 1 addition(s), 0 removal(s)" in made.output
    info = run("lexicon", "info", "TINY-E", "--data-dir", data).output
    assert "errata additions: 1 word(s) from errata.txt" in info
    check = run("lexicon", "check", "TINY-E", "antefixae", "--data-dir", data).output
    assert "added to TINY by errata" in check
    assert "Verdict: ACCEPTABLE (1 word, TINY-E" in check


def test_bad_setting_from_the_environment_names_it(tmp_path: Path) -> None:
    result = run("serve", env={"WORDJUDGE_PORT": "99999", "WORDJUDGE_DATA_DIR": str(tmp_path)})
    assert result.exit_code == 1
    assert "port (WORDJUDGE_PORT)" in result.stderr


def test_installed_console_script_runs(tmp_path: Path, tiny: Path) -> None:
    script = Path(sys.executable).with_name("wordjudge")
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [script, "lexicon", "add", tiny, "--name", "TINY"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Compiled TINY: 4 words" in done.stdout


# -- event and audit commands ------------------------------------------------------------------------


def _log_with_records(data: Path, count: int) -> AuditLog:
    from .test_audit import entry

    log = AuditLog(StateLocation(data))
    log.start()
    for n in range(1, count + 1):
        log.append_sync(entry(n, actor=f"kiosk-{n % 2}"))
    log.close()
    return log


def test_event_init_and_show(tmp_path: Path, tiny: Path, compiled_demo: Path) -> None:
    data = tmp_path / "data"
    run("lexicon", "add", tiny, "--name", "TINY", "--data-dir", data)
    shutil.copytree(compiled_demo, data / "lexicons" / DEMO_NAME)  # as the first start compiles it (test_app)
    shown = run("event", "show", "--data-dir", data)
    assert "Event: wordjudge demo event (DEMO event: there is no event.toml)" in shown.output
    assert "Division Open: DEMO: matches ENABLE (172,820 words)" in shown.output
    assert run("event", "init", "--data-dir", data).exit_code == 0
    assert 'lexicon = "TINY"' in (data / "event.toml").read_text()
    again = run("event", "init", "--data-dir", data)
    assert again.exit_code == 1
    assert "exists already" in again.stderr
    shown = run("event", "show", "--data-dir", data)
    assert "Event: My tournament" in shown.output
    assert "Division A: TINY: unknown list, fingerprint" in shown.output
    assert "rule five-per-word (5 points per word for an unsuccessful challenge)" in shown.output
    assert "Rounds: yes, current round not set" in shown.output
    assert "A running wordjudge serve serves this file within 2 s of a change" in shown.output
    (data / "event.toml").write_text('name = "X"\n[[division]]\nname = "A"\nlexicon = "TINY"\nrule = "seven"\n')
    broken = run("event", "show", "--data-dir", data)
    assert broken.exit_code == 1
    assert "event.toml: division 1 (A): 'rule' must be one of" in broken.stderr


def test_audit_verify_names_the_first_bad_record(tmp_path: Path) -> None:
    data = tmp_path / "data"
    log = _log_with_records(data, 30)
    ok = run("audit", "verify", "--data-dir", data)
    assert ok.exit_code == 0
    assert "chain verified: 30 record(s), head 30" in ok.output
    connection = sqlite3.connect(log.path)
    connection.executescript(  # a forger who knows to put the trigger back afterwards
        "DROP TRIGGER records_no_update;"
        """UPDATE records SET body = replace(body, '"table":"'||table_label||'"', '"table":"99"') WHERE id = 17;"""
        f"{dict(SCHEMA)['records_no_update']};"
    )
    connection.close()
    bad = run("audit", "verify", "--data-dir", data)
    assert bad.exit_code == 1
    assert "chain broken at record 17: its content was altered" in bad.stderr


def test_audit_verify_names_a_cut_below_a_checkpoint_as_the_servers_start_does(tmp_path: Path) -> None:
    # Issue 36: without heads, verify walked the chain alone and passed a log cut below its last checkpoint
    # ("chain verified: 3 record(s)") that the server refuses to start on. It checks the checkpoints too.
    data = tmp_path / "data"
    log = _log_with_records(data, 5)  # closing wrote a checkpoint at record 5
    connection = sqlite3.connect(log.path)
    connection.executescript(  # the careful forger: records 4 and 5 gone, the trigger put back
        f"DROP TRIGGER records_no_delete; DELETE FROM records WHERE id > 3;{dict(SCHEMA)['records_no_delete']};"
    )
    connection.close()
    cut = run("audit", "verify", "--data-dir", data)
    assert cut.exit_code == 1, cut.output
    assert "record 5 was checked before with hash" in cut.stderr
    assert "records were cut off" in cut.stderr
    started = AuditLog(StateLocation(data))
    started.start()  # the server's own start check says the same
    try:
        assert started.integrity.at_start is not None
        assert not started.integrity.at_start.ok
        assert "record 5 was checked before with hash" in started.integrity.at_start.describe()
    finally:
        started.close()


def test_audit_verify_without_a_log(tmp_path: Path) -> None:
    result = run("audit", "verify", "--data-dir", tmp_path)
    assert result.exit_code == 1
    assert "there is no audit log at" in result.stderr


def test_audit_export_csv_and_jsonl_with_filters(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _log_with_records(data, 12)
    out = tmp_path / "out.csv"
    result = run("audit", "export", "--format", "csv", "-o", out, "--actor", "kiosk-1", "--data-dir", data)
    assert result.exit_code == 0, result.output
    assert "exported 6 record(s)" in result.stderr
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert [row["id"] for row in rows] == ["1", "3", "5", "7", "9", "11"]
    assert rows[0]["words"] == "WORD1 QI"
    assert rows[0]["results"].startswith("WORD1 ")  # WORD1 ✓ QI ✓, as a person reads it
    lines = run(
        "audit", "export", "--format", "jsonl", "--verdict", "unacceptable", "--data-dir", data
    ).stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [3, 6, 9, 12]
    assert json.loads(lines[0])["hash"]


def test_audit_tail_shows_the_last_records_with_per_word_results(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _log_with_records(data, 12)
    lines = run("audit", "tail", "-n", "3", "--data-dir", data).output.splitlines()
    assert [line.split()[0] for line in lines] == ["#10", "#11", "#12"]
    assert "WORD12 QI -> UNACCEPTABLE (not: WORD12)" in lines[2]
