"""Issue 35, item 8: the TD's first hour, done as the README says and as a TD reads the commands' output."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, expect

from wordjudge.base.datadir import lock_for_server
from wordjudge.cli.main import main
from wordjudge.service.settings import Settings
from wordjudge.words.editions import DEMO_NAME

from .browser import new_page, screenshot
from .helpers import PASSWORD, LiveServer, free_port, serve_process, wait_for_health, write_event, write_list

ROOT = Path(__file__).resolve().parents[1]
DEMO_LIST_WARNING = "WARNING: the event 'Spring Open' would serve the DEMO list"


def run(*args: str | Path, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


def test_the_quick_starts_path_from_the_demo_names_lexicon_add() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    path = quick_start.split("**From the demo to your event", 1)[1].split("\n\n", 1)[0]
    assert "wordjudge lexicon add" in path  # compiling the TD's own list is a step of the path
    assert path.index("wordjudge lexicon add") < path.index("wordjudge event init")


def test_event_init_without_a_compiled_list_warns_loudly(tmp_path: Path) -> None:
    done = run("event", "init", "--data-dir", tmp_path / "data")
    assert done.exit_code == 0, done.output
    assert 'lexicon = "demo"' in (tmp_path / "data" / "event.toml").read_text()
    assert "WARNING: no word list is compiled in this folder" in done.output
    assert "wordjudge lexicon add FILE --name NAME" in done.output


def test_event_show_and_health_warn_a_real_event_on_the_demo_list(data_dir: Path, settings: Settings) -> None:
    write_event(data_dir, [("A", "demo", "single")], name="Spring Open")
    shown = run("event", "show", "--data-dir", data_dir)
    assert shown.exit_code == 0, shown.output
    assert DEMO_LIST_WARNING in shown.output
    from wordjudge.web.app import create_app

    from .helpers import CHEAP_HASHER

    with TestClient(create_app(settings, hasher=CHEAP_HASHER)) as client:
        body = client.get("/api/health").json()
    assert body["ok"] is True  # served, and said
    assert [m["key"] for m in body["warning_messages"]] == ["error.health.demo_list"]
    assert "serves the DEMO list" in body["warnings"][0]


def test_event_show_says_nothing_of_the_demo_for_an_event_on_its_own_list(
    tmp_path: Path, data_dir: Path, compiled_demo: Path
) -> None:
    write_list(tmp_path / "club.txt", ["cat", "dog", "emu"])
    run("lexicon", "add", tmp_path / "club.txt", "--name", "Club", "--data-dir", data_dir)
    write_event(data_dir, [("A", "Club", "single")], name="Spring Open")
    shown = run("event", "show", "--data-dir", data_dir)
    assert shown.exit_code == 0, shown.output
    assert "WARNING" not in shown.output


@pytest.mark.live
def test_serve_prints_the_event_its_pages_and_the_demo_list_warning(data_dir: Path) -> None:
    write_event(data_dir, [("A", "demo", "single")], name="Spring Open")
    port = free_port()
    said = _serve_says(data_dir, port)
    assert "Serving the event 'Spring Open'" in said, said
    for page in ("kiosk", "runner", "td"):
        assert f"http://127.0.0.1:{port}/{page}" in said, said
    assert DEMO_LIST_WARNING in said


def _serve_says(data_dir: Path, port: int | None = None) -> str:
    """What ``wordjudge serve`` on ``data_dir`` prints until it answers (on ``port``, else a free one)."""
    port = port or free_port()
    server = serve_process(data_dir, "--port", str(port), "--log-level", "warning")
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
    finally:
        server.terminate()
        said = server.communicate(timeout=30)[0]
    return said


def test_serve_on_a_folder_with_no_td_account_says_how_to_make_one(data_dir: Path) -> None:
    """Issue 46, item 3: before, a new TD met "wrong TD name or password" with nothing on screen saying how to get an
    account. The command serve names is the one that works, as typed."""
    write_event(data_dir, [("A", "demo", "single")], name="Spring Open")
    said = _serve_says(data_dir)
    found = re.search(r"No TD account yet: to sign in to the TD console, make one with (\S+) td add NAME (.*) \(", said)
    assert found, said
    program, options = found.groups()
    assert program.endswith("wordjudge")
    assert options == f"--data-dir {data_dir}"  # not the default folder: named
    made = run("td", "add", "alice", "--password-stdin", *options.split(), stdin="correct horse battery\n")
    assert made.exit_code == 0, made.output
    assert "No TD account yet" not in _serve_says(data_dir)


def test_device_pair_links_use_the_running_servers_port(data_dir: Path) -> None:
    write_event(data_dir, [("A", "demo", "single")], name="Spring Open")
    lock = lock_for_server(data_dir, host="127.0.0.1", port=8765)  # what serve writes in server.lock
    try:
        paired = run("device", "pair", "--role", "kiosk", "--data-dir", data_dir)
    finally:
        lock.release()
    assert paired.exit_code == 0, paired.output
    assert "Link: http://127.0.0.1:8765/kiosk#pair=" in paired.stdout
    assert "no server is running" not in paired.output


def _says_no_server_before_anything(result: Result, folder: Path, first: str) -> None:
    said = f"no server is running on this folder ({folder.resolve()})"
    assert said in result.stderr, result.output
    assert result.output.index(said) < result.output.index(first)


def test_commands_in_a_folder_whose_server_is_not_running_say_so_first(data_dir: Path) -> None:
    write_event(data_dir, [("A", "demo", "single")], name="Spring Open")
    paired = run("device", "pair", "--role", "kiosk", "--data-dir", data_dir)
    assert paired.exit_code == 0, paired.output
    _says_no_server_before_anything(paired, data_dir, "Pairing code:")
    assert "the code works once `wordjudge serve` runs here" in paired.stderr
    added = run("device", "add", "bench", "--role", "kiosk", "--data-dir", data_dir)
    _says_no_server_before_anything(added, data_dir, "wj_")
    td = run("td", "add", "alice", "--password-stdin", "--data-dir", data_dir, stdin=f"{PASSWORD}\n")
    _says_no_server_before_anything(td, data_dir, "TD alice added")


def test_a_data_folder_left_by_a_serve_from_the_wrong_folder_does_not_pass_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A serve run once from the home folder left wordjudge-data there with the demo in it (set aside by a later
    event init): commands run there used to print a code no running server knows."""
    wrong = tmp_path / "home"
    aside = wrong / "wordjudge-data" / "demo-20261127T100000"
    aside.mkdir(parents=True)
    (aside / "audit.sqlite3").write_bytes(b"")
    monkeypatch.chdir(wrong)
    monkeypatch.delenv("WORDJUDGE_DATA_DIR", raising=False)
    paired = run("device", "pair", "--role", "kiosk")
    _says_no_server_before_anything(paired, wrong / "wordjudge-data", "Pairing code:")


def test_lexicon_names_match_in_any_case_everywhere(tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = write_list(tmp_path / "club.txt", ["cat", "dog", "emu"])
    assert run("lexicon", "add", source, "--name", "Club", "--data-dir", data).exit_code == 0
    checked = run("lexicon", "check", "club", "cat", "--data-dir", data)
    assert checked.exit_code == 0, checked.output
    assert "ACCEPTABLE" in checked.output
    assert "Club" in checked.output  # said with the compiled name
    assert run("lexicon", "info", "CLUB", "--data-dir", data).exit_code == 0
    assert run("lexicon", "diff", "club", "CLUB", "--data-dir", data).exit_code == 0
    again = run("lexicon", "add", source, "--name", "CLUB", "--data-dir", data)
    assert again.exit_code == 1  # not a second lexicon that only the case tells apart
    assert "exists" in again.stderr
    profile = run("profile", "add", "ClubPlus", "--base", "club", "--data-dir", data)
    assert profile.exit_code == 0, profile.output
    assert run("lexicon", "check", "clubplus", "dog", "--data-dir", data).exit_code == 0
    assert run("lexicon", "check", DEMO_NAME.upper(), "cat", "--data-dir", data).exit_code == 0
    shutil.rmtree(data)


@pytest.mark.live
def test_device_pair_against_a_live_server_on_another_port_pairs(data_dir: Path) -> None:
    """The printed link works: the kiosk's page at the server's real port."""
    port = free_port()
    server = serve_process(data_dir, "--port", str(port), "--log-level", "warning")
    try:
        wait_for_health(f"http://127.0.0.1:{port}", server)
        paired = run("device", "pair", "--role", "kiosk", "--data-dir", data_dir)
        link = re.search(r"Link: (\S+)", paired.stdout)
        assert link, paired.output
        assert link.group(1).startswith(f"http://127.0.0.1:{port}/kiosk#pair=")
        code = link.group(1).split("#pair=")[1]
        assert httpx.post(f"http://127.0.0.1:{port}/api/enrol", json={"code": code}).status_code == 201
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.browser
def test_the_status_page_shows_the_event_its_pages_and_the_demo_list_warning(browser: Browser, data_dir: Path) -> None:
    write_event(data_dir, [("A", "demo", "single")], name="Spring Open")
    server = LiveServer(data_dir)
    server.start()
    try:
        page = new_page(browser, "desktop")
        page.goto(f"{server.base}/")
        expect(page.locator("#event-name")).to_have_text("Event: Spring Open")
        for name in ("kiosk", "runner", "td"):
            expect(page.locator(f"#pages a[href='/{name}']")).to_have_text(f"{server.base}/{name}")
        expect(page.locator("#server-state")).to_contain_text("serves the DEMO list")
        expect(page.locator("#server-state")).to_have_class("state warn")
        screenshot(page, "status-event-demo-list-desktop")
        page.context.close()
    finally:
        server.stop()


@pytest.mark.browser
def test_the_first_td_account_and_both_ways_to_a_code_are_on_screen_and_a_set_aside_demos_kiosk_pairs_again(
    browser: Browser, tmp_path: Path
) -> None:
    """Issue 46, item 3 (and 4's set-aside demo), in Chromium: the console's sign-in page says how to make the first
    TD account (as `serve` does); the kiosk's pairing screen names the console and `wordjudge device pair`; a kiosk
    paired on the demo, once the demo is set aside for a real event, says how to pair it again, and pairs with a new
    code. Before, the sign-in page said nothing of accounts, and the demo's kiosk waited for a server that never
    came back."""
    server = LiveServer(tmp_path / "data")  # a fresh folder: the demo event, no TD account
    server.start()
    try:
        console = new_page(browser, "desktop")
        console.goto(f"{server.base}/td")
        expect(console.locator("#first-account")).to_contain_text("make one with wordjudge td add NAME")
        screenshot(console, "console-first-account-desktop")
        console.context.close()
        page = new_page(browser)
        page.goto(f"{server.base}/kiosk")
        expect(page.locator("#app")).to_have_attribute("data-screen", "pair")
        hint = page.locator(".pair-hint")
        expect(hint).to_contain_text("the TD console makes one (Devices and accounts, Pair a device)")
        expect(hint).to_contain_text("wordjudge device pair --role kiosk")
        screenshot(page, "kiosk-pair-both-ways-small")
        paired = run("device", "pair", "--role", "kiosk", "--data-dir", server.data_dir)
        page.locator("#pair-code").fill(re.search(r"#pair=(\S+)", paired.stdout).group(1))  # type: ignore[union-attr]
        page.locator("#pair-code").press("Enter")
        expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
        # The demo set aside: a real event on the next start.
        server.stop()
        write_event(server.data_dir, [("A", "demo", "single")], name="Spring Open")
        server.start()
        expect(page.locator("#app")).to_have_attribute("data-screen", "elsewhere", timeout=30_000)
        expect(page.locator("#app")).to_contain_text("pair this device again with a code the TD makes")
        screenshot(page, "kiosk-demo-set-aside-small")
        page.locator("#pair-again").click()
        expect(page.locator("#app")).to_have_attribute("data-screen", "pair")
        again = run("device", "pair", "--role", "kiosk", "--data-dir", server.data_dir)
        page.locator("#pair-code").fill(re.search(r"#pair=(\S+)", again.stdout).group(1))  # type: ignore[union-attr]
        page.locator("#pair-code").press("Enter")
        expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
        expect(page.locator("h1")).to_have_text("Spring Open")
        page.context.close()
    finally:
        server.stop()
