"""Issue 35, item 5: one naming scheme for devices wherever they are paired, a name decided when its code is
made (so that a code never fails at the table for a name), and a refusal a kiosk cannot act on that says
"call the TD" in the event's language."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from wordjudge.access import pairing
from wordjudge.access.access_store import AccessStore
from wordjudge.base.errors import Conflict
from wordjudge.cli.main import main
from wordjudge.model.auth import Role
from wordjudge.storage.dialect import StateLocation

from .helpers import CHEAP_HASHER, PASSWORD

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[AccessStore]:
    opened = AccessStore(StateLocation(tmp_path), hasher=CHEAP_HASHER).open()
    yield opened
    opened.close()


def run(*args: str | Path, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def test_one_naming_scheme_the_cli_and_the_sheet_give_the_same_names() -> None:
    assert pairing.default_device_name(Role.KIOSK, 1) == "kiosk-01"
    assert pairing.default_device_name(Role.KIOSK, 10) == "kiosk-10"
    assert pairing.default_device_name(Role.RUNNER, 3) == "handheld-03"  # the screens' word for the device
    assert pairing.default_device_name(Role.KIOSK, 100) == "kiosk-100"
    # The console's sheet names its range the same way (kiosk/console/device-names.js, which its pairing.js uses).
    script = (
        "import('./kiosk/console/device-names.js').then(m => console.log(JSON.stringify("
        "[m.hallNames(m.DEVICE_PREFIX.kiosk, '1', '10'), m.hallNames(m.DEVICE_PREFIX.runner, '9', '10'),"
        " m.hallNames('kiosk-', '99', '100')])))"
    )
    shown = subprocess.run(
        ["node", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    kiosks, runners, wide = json.loads(shown.stdout)
    assert kiosks == [pairing.default_device_name(Role.KIOSK, n) for n in range(1, 11)]
    assert runners == [pairing.default_device_name(Role.RUNNER, n) for n in (9, 10)]
    assert wide == ["kiosk-99", "kiosk-100"]


def test_a_code_made_without_a_name_gets_its_name_when_it_is_made(store: AccessStore) -> None:
    code = store.pairing.create_code(Role.KIOSK, by="alice")
    assert code.device_name == "kiosk-01"  # printed with the code: the TD knows which kiosk it is
    runner = store.pairing.create_code(Role.RUNNER, by="alice")
    assert runner.device_name == "handheld-01"
    assert store.pairing.enrol(code.code, client="10.0.0.5").device.name == "kiosk-01"


def test_a_sheet_then_command_line_pairings_never_take_the_sheets_names(store: AccessStore) -> None:
    """The issue's case: a sheet kiosk-01..kiosk-10 printed, then kiosks paired at the command line while it is
    walked round; every code of the sheet still pairs its kiosk."""
    sheet = store.pairing.create_codes(Role.KIOSK, [(f"kiosk-{n:02d}", None) for n in range(1, 11)], by="alice")
    loose = [store.pairing.create_code(Role.KIOSK, by="cli:root") for _ in range(3)]
    assert [code.device_name for code in loose] == ["kiosk-11", "kiosk-12", "kiosk-13"]
    for code in loose:  # the command line's kiosks pair first
        store.pairing.enrol(code.code, client="10.0.0.50")
    for number, code in enumerate(sheet, start=1):
        assert store.pairing.enrol(code.code, client=f"10.0.0.{number}").device.name == code.device_name


def test_a_name_held_by_an_open_code_is_refused_to_anything_else(store: AccessStore) -> None:
    store.pairing.create_code(Role.KIOSK, None, "kiosk-10", by="alice")
    with pytest.raises(Conflict, match=r"(?i)kiosk-10.*kept for a pairing code"):
        store.devices.add("KIOSK-10", Role.KIOSK, by="cli:root")  # names are case-insensitive
    with pytest.raises(Conflict, match="kept for a pairing code"):
        store.tds.add("kiosk-10", PASSWORD, by="cli:root")
    with pytest.raises(Conflict, match="kept for a pairing code"):
        store.pairing.create_codes(Role.KIOSK, [("kiosk-09", None), ("kiosk-10", None)], by="bob")
    assert store.pairing.create_code(Role.KIOSK, by="bob").device_name == "kiosk-01"


def test_a_name_lost_at_the_table_says_call_the_td_in_the_events_language(store: AccessStore, tmp_path: Path) -> None:
    """A code whose name was taken all the same (a code made before names were kept, on an older version): the
    kiosk cannot pick another name, so its refusal says to call the TD, as a catalogue key it shows in the
    event's language."""
    code = store.pairing.create_code(Role.KIOSK, None, "kiosk-10", by="alice")
    with store.database.write() as db:  # as an older version left it: the name not kept
        db.execute(
            "INSERT INTO devices (name, role, division, token_hash, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)",
            ("kiosk-10", "kiosk", None, "x" * 64, "2026-11-27T10:00:00.000+00:00", "cli:root"),
        )
    with pytest.raises(Conflict) as refused:
        store.pairing.enrol(code.code, client="10.0.0.5")
    message = refused.value.msg
    assert message.key == "error.pairing.name_lost"
    assert "call the TD" in message.text("en")
    assert "pick another" not in message.text("en")
    assert re.search(r"appelez l.arbitre", message.text("fr"))
    for language in ("en", "fr"):
        catalogue = json.loads((ROOT / "kiosk" / "locales" / f"{language}.json").read_text("utf-8"))
        assert "error.pairing.name_lost" in catalogue  # the kiosk renders the key from its catalogue


def test_device_pair_prints_the_name_its_code_pairs(data_dir: Path) -> None:
    result = run("device", "pair", "--role", "kiosk", "--data-dir", data_dir)
    assert result.exit_code == 0, result.output
    assert re.search(r"Pairing code: \S+  \(kiosk-01: one kiosk, until ", result.stdout), result.stdout
    named = run("device", "pair", "--role", "runner", "--name", "floor-1", "--data-dir", data_dir)
    assert "(floor-1: one handheld, until " in named.stdout
    taken = run("device", "add", "kiosk-01", "--role", "kiosk", "--data-dir", data_dir)
    assert taken.exit_code == 1
    assert "the name 'kiosk-01' is kept for a pairing code" in taken.stderr
