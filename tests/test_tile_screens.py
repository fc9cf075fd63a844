"""Tiles of several letters at the kiosk and the handheld (issue 38), in Chromium against a live server: a player
types letters as read, the screens show one box a tile as the board does, a 15-tile Spanish word of 16 letters is
taken and judged, and where the board could hold a Welsh word's tiles two ways the players state them first."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from wordjudge.model.auth import Role
from wordjudge.model.records import Kind

from .browser import new_page, open_enrolled, runner_sends, screenshot, serving
from .helpers import PASSWORD, LiveServer, access_store, audit_log, device_headers, write_event
from .test_console_records import sign_in
from .test_kiosk import hold_adjudicate, on_screen
from .tile_lists import NAMES, compile_list

pytestmark = pytest.mark.browser

DONE = "Done: hand over to the opponent"
LONG = "desengancharíais"  # 16 letters, 15 tiles: DESENGAN CH ARIAIS


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    for language in NAMES:
        compile_list(data_dir, language)
    write_event(data_dir, [(language, NAMES[language], "five-per-word") for language in NAMES], name="Tiles Open")
    with serving(data_dir) as live:
        yield live


def open_device(page: Page, server: LiveServer, role: Role, division: str) -> None:
    store = access_store(server.data_dir)
    try:
        token = store.devices.add(f"{role.value}-{division}", role, division, by="test").token
    finally:
        store.close()
    open_enrolled(page, server, "kiosk" if role is Role.KIOSK else "runner", token)
    on_screen(page, "idle" if role is Role.KIOSK else "entry")


def type_words(page: Page, words: str) -> None:
    """At an idle kiosk: start a challenge at table 4, round 2, and type ``words`` key by key."""
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "challenger")
    page.get_by_label("Table").fill("4")
    page.get_by_label("Round").fill("2")
    page.get_by_label("Words").press_sequentially(words)


def boxes(page: Page, where: str) -> list[str]:
    return [text.strip() for text in page.locator(f"{where} .tile").all_text_contents()]


def judged_acceptable(page: Page, server: LiveServer, *words: str) -> None:
    """The verdict on screen is ACCEPTABLE, and the log's one challenge record holds ``words`` (as tiles)."""
    on_screen(page, "verdict")
    expect(page.locator("h1")).to_have_text("ACCEPTABLE")
    assert recorded(server) == [words]


def recorded(server: LiveServer) -> list[tuple[str, ...]]:
    log = audit_log(server.data_dir)
    try:
        return [record.words for record in log.iterate() if record.kind == Kind.CHALLENGE]
    finally:
        log.close()


def test_a_fifteen_tile_spanish_word_is_shown_as_fifteen_boxes_and_judged_at_the_kiosk(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser, "large")
    open_device(page, server, Role.KIOSK, "spanish")
    type_words(page, LONG)  # 16 letters: taken, it is 15 tiles
    expect(page.get_by_label("Words")).to_have_value(LONG)
    typed = boxes(page, ".tiles")
    assert len(typed) == 15, typed
    assert typed[8] == "CH", typed
    page.get_by_label("Words").press_sequentially("s")  # a 16th tile is refused as typed
    expect(page.get_by_label("Words")).to_have_value(LONG)
    expect(page.locator("#word-message")).to_contain_text("A word has at most 15 tiles")
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "opponent")
    assert len(boxes(page, ".check-words")) == 15  # the opponent checks the tiles, one box a tile
    expect(page.locator(".check-words li").first).to_have_attribute("aria-label", "D E S E N G A N CH A R I A I S")
    screenshot(page, "tiles-kiosk-spanish-opponent")
    hold_adjudicate(page)
    judged_acceptable(page, server, "DESENGAN[CH]ARIAIS")
    screenshot(page, "tiles-kiosk-spanish-verdict")


def test_catalan_tiles_are_typed_as_read_and_shown_as_the_board_shows_them(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser, "small")
    open_device(page, server, Role.KIOSK, "catalan")
    type_words(page, "col.legi quatre")
    assert boxes(page, ".tiles") == ["C", "O", "L·L", "E", "G", "I", "QU", "A", "T", "R", "E"]
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "opponent")
    screenshot(page, "tiles-kiosk-catalan-opponent")
    hold_adjudicate(page)
    judged_acceptable(page, server, "CO[L·L]EGI", "[QU]ATRE")
    page.goto(f"{server.base}/docket?id=1")  # the kiosk's own record: the docket prints the letters
    expect(page.locator(".docket-words")).to_have_text("COL·LEGI QUATRE (2 words)")
    screenshot(page, "tiles-docket-catalan")


def judged(page: Page, verdict: str) -> None:
    on_screen(page, "verdict")
    expect(page.locator("h1")).to_have_text(verdict)


@pytest.mark.parametrize(
    ("board", "verdict", "stored"),
    [
        (["B", "A", "NG", "O", "R"], "UNACCEPTABLE", "BA[NG]OR"),
        (["B", "A", "N", "G", "O", "R"], "ACCEPTABLE", "BANGOR"),
    ],
    ids=["NG-tile", "N-and-G"],
)
def test_the_welsh_phony_is_judged_as_the_tiles_the_board_holds(
    browser: Browser, server: LiveServer, board: list[str], verdict: str, stored: str
) -> None:
    """The board holds B A NG O R (the NG tile) or B A N G O R; the list has BANGOR only as B A N G O R. The players
    state the tiles before anything is sent, and the server judges exactly those: the NG-tile phony does not stand."""
    page = new_page(browser, "small")
    open_device(page, server, Role.KIOSK, "welsh")
    type_words(page, "bangor")
    choice = page.locator("fieldset.tiling-choice")
    expect(choice).to_have_count(1)
    expect(choice.get_by_role("button")).to_have_count(2)
    expect(choice.locator(".tiling[aria-pressed=true]")).to_have_count(0)  # no default: the players choose
    page.get_by_role("button", name=DONE).click()  # not stated yet: nothing goes on
    on_screen(page, "challenger")
    expect(page.locator("#word-message")).to_have_text("Tap the tiles the board shows for BANGOR.")
    expect(page.locator(".tiling").first).to_be_focused()  # the keyboard is on the question
    screenshot(page, f"tiles-kiosk-welsh-state-{'-'.join(board)}")
    page.get_by_role("button", name=f"the tiles {' '.join(board)}").click()
    assert boxes(page, ".tiles") == board
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "opponent")
    expect(page.locator(".check-words li").first).to_have_attribute("aria-label", " ".join(board))
    assert boxes(page, ".check-words") == board
    expect(page.locator(".check-words .tile.split")).to_have_count(1 if "NG" in board else 2)  # marked to check
    screenshot(page, f"tiles-kiosk-welsh-opponent-{'-'.join(board)}")
    assert recorded(server) == []
    hold_adjudicate(page)
    judged(page, verdict)
    screenshot(page, f"tiles-kiosk-welsh-verdict-{'-'.join(board)}")
    assert recorded(server) == [(stored,)]


def test_the_tiles_are_stated_by_keyboard_alone(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser, "small")
    open_device(page, server, Role.KIOSK, "welsh")
    type_words(page, "dangos")
    page.get_by_label("Round").press("Enter")  # Done from the keyboard: the question takes the focus
    expect(page.locator(".tiling").first).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Space")  # the second tiling: D A N G O S
    expect(page.locator(".tiling[aria-pressed=true]")).to_have_attribute("aria-label", "the tiles D A N G O S")
    page.get_by_label("Round").press("Enter")
    on_screen(page, "opponent")
    hold_adjudicate(page)
    judged(page, "UNACCEPTABLE")  # DANGOS is a word with the NG tile only
    assert recorded(server) == [("DANGOS",)]


def test_catalan_qu_with_a_diaeresis_is_the_qu_tile_at_the_kiosk(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser, "small")
    open_device(page, server, Role.KIOSK, "catalan")
    type_words(page, "qüestió")
    assert boxes(page, ".tiles") == ["QU", "E", "S", "T", "I", "O"]
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "opponent")
    hold_adjudicate(page)
    judged_acceptable(page, server, "[QU]ESTIO")


def test_the_handheld_shows_a_fifteen_tile_slip_as_fifteen_boxes_and_sends_it(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser, "phone")
    open_device(page, server, Role.RUNNER, "spanish")
    runner_sends(page, "4", LONG)
    assert len(boxes(page, ".check-words")) == 15
    screenshot(page, "tiles-runner-spanish-confirm")
    page.get_by_role("button", name="Send for adjudication").click()
    judged_acceptable(page, server, "DESENGAN[CH]ARIAIS")
    # The runner carries the word back as the board shows it, and the docket prints it so: letters, no brackets.
    expect(page.locator(".verdict-list")).to_have_text("DESENGANCHARIAIS")
    screenshot(page, "tiles-runner-spanish-verdict")
    page.get_by_role("link", name="Print docket").click()
    expect(page.locator(".docket-words")).to_have_text("DESENGANCHARIAIS (1 word)")
    expect(page.locator(".docket-notes")).not_to_contain_text("tile by tile")
    screenshot(page, "tiles-docket-spanish")


def test_the_handheld_states_the_tiles_of_each_welsh_word_the_board_could_hold_two_ways(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser, "phone")
    page.set_viewport_size({"width": 360, "height": 740})  # the narrowest phone a runner carries
    open_device(page, server, Role.RUNNER, "welsh")
    page.get_by_label("Table").fill("4")
    page.get_by_label("Round").fill("2")
    page.get_by_label("Words").press_sequentially("henga dangos cath")
    expect(page.locator("fieldset.tiling-choice")).to_have_count(2)  # both NG words, whatever their validity
    page.get_by_role("button", name="Check the slip").click()
    on_screen(page, "entry")
    expect(page.locator("#word-message")).to_have_text("Tap the tiles the board shows for HENGA.")
    page.get_by_role("button", name="the tiles H E NG A").click()
    page.get_by_role("button", name="the tiles D A NG O S").click()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, width  # the question fits the phone: nothing to scroll sideways
    screenshot(page, "tiles-runner-welsh-state")
    page.get_by_role("button", name="Check the slip").click()
    on_screen(page, "confirm")
    expect(page.locator(".check-words .tile.split")).to_have_count(2)
    assert recorded(server) == []
    page.get_by_role("button", name="Send for adjudication").click()
    judged_acceptable(page, server, "HE[NG]A", "DA[NG]OS", "CA[TH]")
    # The verdict carries the words back as the board holds them: boxes where a tile could be read two ways.
    expect(page.locator(".verdict-list")).to_contain_text("CATH")
    expect(page.locator(".verdict-list .tile.split")).to_have_count(2)
    screenshot(page, "tiles-runner-welsh-verdict")
    # On paper, a word with a tile that could be read two ways is printed tile by tile, explained once.
    page.get_by_role("link", name="Print docket").click()
    expect(page.locator(".docket-words")).to_have_text("H-E-NG-A D-A-NG-O-S CATH (3 words)")
    expect(page.locator(".docket-notes")).to_contain_text("each part between hyphens is one tile")
    screenshot(page, "tiles-docket-welsh")


def test_a_statement_left_unfinished_clears_after_30_seconds(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser, "small")
    page.clock.install()
    open_device(page, server, Role.KIOSK, "welsh")
    type_words(page, "henga")
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "challenger")
    page.clock.fast_forward(31_000)
    on_screen(page, "idle")
    assert "HENGA" not in page.content()
    assert recorded(server) == []


def test_the_console_shows_the_tiles_judged_as_boxes_where_they_matter_and_letters_elsewhere(
    browser: Browser, server: LiveServer
) -> None:
    kiosk = device_headers(server.data_dir, "kiosk-x")
    for division, words in [("welsh", "ba[ng]or cath"), ("spanish", "chico")]:
        body = {"division": division, "table": 4, "round": 2, "words": words, "request_id": uuid.uuid4().hex}
        assert httpx.post(f"{server.base}/api/challenges", json=body, headers=kiosk).status_code == 201
    store = access_store(server.data_dir)
    try:
        store.tds.add("alice", PASSWORD, by="test")
    finally:
        store.close()
    page = new_page(browser, "desktop")
    sign_in(page, server)
    page.locator("#tab-feed").click()
    welsh, spanish = (
        page.locator("tr.record[data-id='1'] .record-words"),
        page.locator("tr.record[data-id='2'] .record-words"),
    )
    expect(welsh.locator(".tile")).to_have_count(5)  # B A NG O R, the NG tile judged
    expect(welsh.locator(".tile.split")).to_have_text("NG")
    expect(welsh).to_contain_text("CATH")
    expect(spanish).to_have_text("CHICO")  # letters, no brackets
    assert "[" not in page.locator("table.feed").inner_text()
    screenshot(page, "tiles-console-feed")
