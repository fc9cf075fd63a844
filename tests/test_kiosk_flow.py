"""The kiosk's flow (issue 16, items 1, 2 and 4, and part of 8), in a real browser against a live server: a
verdict is always read, the action is always on screen, and the keyboard alone is Zyzzyva-quick."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .browser import PAGE_WAIT_MS, fits, new_page, screenshot, serving
from .helpers import LiveServer, write_event
from .test_kiosk import HOLD_S, enrol, hold_adjudicate, on_screen

pytestmark = pytest.mark.browser

RESULT_S = 5  # the event's kiosk_result_seconds
DONE = "Done: hand over to the opponent"
SIZES = [(800, 480), (1024, 600), (1280, 800), (1920, 1080)]
FITS = "() => { const box = document.querySelector('.opponent .screen-body'); return box.scrollHeight <= box.clientHeight; }"
LONGEST = [
    "OVERSUBSCRIBING",
    "EXTEMPORISATION",
    "COUNTERCHARGING",
    "REINVESTIGATING",
    "UNSELFCONSCIOUS",
    "ACCEPTABILITIES",
    "INTERNALISATION",
    "MISPRONUNCIATES",
]
WORD_SETS = {
    "1 word of 2": ["QI"],
    "1 word of 15": LONGEST[:1],
    "3 words of 2": ["QI", "ZA", "JO"],
    "3 words of 15": LONGEST[:3],
    "8 words of 2": ["QI", "ZA", "JO", "XU", "AA", "OX", "EH", "MU"],
    "8 words of 15": LONGEST,
    "the issue's 8": [
        "OVERSUBSCRIBING",
        "UNDERSTRENGTHS",
        "QUIXOTRY",
        "ZYZZYVAS",
        "REINVESTIGATED",
        "COUNTERCHARGED",
        "MUZJIKS",
        "EXTEMPORISATION",
    ],
    "8 of 15, repeated": LONGEST[:4] * 2,  # and the note that says which words are typed twice
}


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    """An event with a current round (3), which the kiosk pre-fills, as on the day."""
    path = write_event(data_dir, [("Open", "demo", "five-per-word")], name="Flow Open", kiosk_result_seconds=RESULT_S)
    path.write_text(path.read_text().replace("rounds = true", "rounds = true\ncurrent_round = 3"))
    with serving(data_dir) as live:
        yield live


def focused(page: Page) -> str:
    return str(page.evaluate("document.activeElement.id || document.activeElement.textContent"))


def to_opponent(page: Page, table: str, words: str) -> None:
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "challenger")
    page.get_by_label("Words").fill(words)
    page.get_by_label("Table").fill(table)
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "opponent")


# -- item 1: a verdict is always read -------------------------------------------------------------------


# What the page did, timed by the page itself (performance.now(), the events' own timeStamp): each data-screen it
# showed, and each keydown and click it was given. A test's own clock runs behind the page's on a loaded machine
# (each command a round trip), so what a verdict does with keys is judged from the page's record.
RECORDER = """() => {
  const log = (window.flowLog = { screens: [], keys: [], clicks: [] });
  const app = document.getElementById("app");
  const seen = () => log.screens.push([app.dataset.screen, performance.now()]);
  new MutationObserver(seen).observe(app, { attributes: true, attributeFilter: ["data-screen"] });
  addEventListener("keydown", (e) => log.keys.push([e.code, e.repeat, e.timeStamp]), true);
  addEventListener("click", (e) => log.clicks.push(e.timeStamp), true);
}"""
VERDICT_GRACE_MS = 500  # kiosk/kiosk/challenge.js: presses this soon after a verdict appears do not clear it


def _recorded(page: Page) -> tuple[list[tuple[float, float]], dict[str, Any]]:
    """The page's record since RECORDER, and each verdict in it: when it appeared and when it was left (inf: still
    shown)."""
    log: dict[str, Any] = page.evaluate("() => window.flowLog")
    changes: list[tuple[str, float]] = [(screen, at) for screen, at in log["screens"]]
    verdicts = []
    for i, (screen, at) in enumerate(changes):
        if screen == "verdict" and (i == 0 or changes[i - 1][0] != "verdict"):
            left = next((later for name, later in changes[i + 1 :] if name != "verdict"), float("inf"))
            verdicts.append((at, left))
    return verdicts, log


def test_a_held_key_never_clears_the_verdict_only_a_fresh_press_or_a_tap(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    page.evaluate(RECORDER)
    # The opponent holds Space, as the screen invites, and keeps it down through the whole verdict: the keyboard
    # repeats it (every ~30 ms after half a second; here as fast as the test goes), repeat=true, and a key down
    # since before the verdict arrives again without the flag. Held until the verdict ends by its own time.
    to_opponent(page, "12", "cat dog")
    page.wait_for_timeout(500)  # past the new screen's guard on keys (400 ms)
    page.locator("#adjudicate").focus()
    page.keyboard.down(" ")
    on_screen(page, "verdict")
    expect(page.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    carried = "document.dispatchEvent(new KeyboardEvent('keydown', {key: ' ', code: 'Space', bubbles: true}))"
    deadline = time.monotonic() + RESULT_S + PAGE_WAIT_MS / 1000
    while page.locator("#app").get_attribute("data-screen") == "verdict":
        assert time.monotonic() < deadline, "the verdict never ended by itself"
        page.keyboard.down(" ")
        page.evaluate(carried)
    page.keyboard.up(" ")
    [(shown, left)], log = _recorded(page)
    held = [key for key in log["keys"] if key[0] == "Space" and shown + VERDICT_GRACE_MS < key[2] < left]
    assert {repeat for _, repeat, _ in held} == {True, False}, held  # the keyboard's repeats and the carried key
    assert len(held) >= 10, f"only {len(held)} held keys came while the verdict stood"
    assert left - shown >= RESULT_S * 1000 - 50, f"left after {left - shown:.0f} ms, its time is {RESULT_S} s"
    on_screen(page, "idle")

    # Let go, then a fresh press: that clears it at once, before its time.
    to_opponent(page, "12", "cat dog")
    page.wait_for_timeout(500)  # past the new screen's guard on keys (400 ms)
    page.locator("#adjudicate").focus()
    page.keyboard.down(" ")
    on_screen(page, "verdict")
    page.keyboard.up(" ")
    page.wait_for_timeout(VERDICT_GRACE_MS + 100)  # the verdict ignores keys in its first half second
    page.keyboard.press("x")
    on_screen(page, "idle")
    verdicts, log = _recorded(page)
    shown, left = verdicts[1]
    pressed = next(at for code, repeat, at in log["keys"] if code == "KeyX" and not repeat and at > shown)
    assert pressed <= left < pressed + 1000, (shown, pressed, left)
    assert left - shown < RESULT_S * 1000, f"left after {left - shown:.0f} ms: by its time, not by the press"

    # A tap clears it too (after its first half second), as a key does.
    to_opponent(page, "12", "emu")
    hold_adjudicate(page)
    on_screen(page, "verdict")
    expect(page.locator(".clears")).to_contain_text("tap the screen or press any key")  # on a touch screen too
    page.wait_for_timeout(VERDICT_GRACE_MS + 100)  # the verdict ignores taps in its first half second
    page.mouse.click(10, 10)
    on_screen(page, "idle")
    verdicts, log = _recorded(page)
    shown, left = verdicts[2]
    tapped = next(at for at in log["clicks"] if at > shown)
    assert tapped <= left < tapped + 1000, (shown, tapped, left)
    assert left - shown < RESULT_S * 1000, f"left after {left - shown:.0f} ms: by its time, not by the tap"
    assert len(server.records()) == 3
    page.context.close()


# -- item 2: the action is always on screen ---------------------------------------------------------------

# Each control: its box inside the window, and itself what is drawn at its centre (nothing covers it).
_IN_VIEW = """(elements) => elements.map((element) => {
  const box = element.getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return {
    name: element.id || element.textContent,
    inside: box.width > 0 && box.left >= 0 && box.top >= 0 && box.right <= innerWidth && box.bottom <= innerHeight,
    drawn: hit !== null && element.contains(hit),
  };
})"""


def _not_in_view(page: Page, controls: list[Locator], where: str) -> list[str]:
    handles = [control.element_handle() for control in controls]
    found: list[dict[str, Any]] = page.evaluate(_IN_VIEW, handles)
    problems = [
        f"{where}: {c['name']!r} {'is covered' if c['inside'] else 'is not inside the window'}"
        for c in found
        if not (c["inside"] and c["drawn"])
    ]
    if not fits(page):
        problems.append(f"{where}: the page itself scrolls")
    return problems


def test_the_action_bar_is_in_view_at_every_size_for_any_words(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "challenger")
    page.get_by_label("Table").fill("12")
    problems: list[str] = []
    challenger = [page.get_by_role("button", name=DONE), page.get_by_role("button", name="Cancel")]
    opponent = [page.locator("#adjudicate"), page.get_by_role("button", name="Back")]
    for label, words in WORD_SETS.items():
        page.set_viewport_size({"width": 1024, "height": 600})
        page.get_by_label("Words").fill(" ".join(words))
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            problems += _not_in_view(page, challenger, f"challenger, {label}, {width}x{height}")
        page.get_by_role("button", name=DONE).click()
        on_screen(page, "opponent")
        expect(page.locator(".check-words li")).to_have_count(len(words))
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            problems += _not_in_view(page, opponent, f"opponent, {label}, {width}x{height}")
            if label == "the issue's 8":
                screenshot(page, f"kiosk-opponent-8-long-words-{width}x{height}")
        page.get_by_role("button", name="Back").click()
        on_screen(page, "challenger")
    assert not problems, "\n".join(problems)
    page.context.close()


def test_the_opponent_sees_every_word_without_scrolling_from_1024x600(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    to_opponent(page, "12", " ".join(LONGEST))
    place = page.locator(".table-round")
    for width, height in SIZES[1:]:
        page.set_viewport_size({"width": width, "height": height})
        body = page.locator(".opponent .screen-body")
        expect(body).to_have_js_property("scrollTop", 0)
        # The page fits the words on the window's resize event, which comes a frame or so after the new size:
        # a look taken at once may see the old fit (CI saw that once, at 1920x1080).
        try:
            page.wait_for_function(FITS, timeout=PAGE_WAIT_MS)
        except PlaywrightTimeoutError:
            pytest.fail(f"{width}x{height}: the words scroll")
        sizes = page.evaluate(
            "() => [document.querySelector('.table-round'), document.querySelector('.check-words li')]"
            ".map((e) => parseFloat(getComputedStyle(e).fontSize))"
        )
        assert sizes[0] >= sizes[1] >= 16, (width, height, sizes)  # shrunk, still readable, never above the table
    expect(place).to_have_text("Table 12, round 3")
    page.context.close()


# -- item 4: keyboard-only, Zyzzyva-quick -------------------------------------------------------------------


class Keys:
    """The keyboard, counting each input: a key pressed or a character typed (the hold is counted apart)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.count += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.count += len(text)


def test_qi_za_jo_at_table_12_by_keyboard_alone_in_at_most_14_inputs_and_the_hold(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser)
    enrol(server, page)
    keys = Keys(page)
    keys.press("Enter")  # Start: it has the focus
    on_screen(page, "challenger")
    keys.type("QI ZA JO")  # straight into the words box
    keys.press("Enter")  # on to the table
    expect(page.get_by_label("Table")).to_be_focused()
    keys.type("12")
    keys.press("Enter")  # the round is the TD's (pre-filled): handed over
    on_screen(page, "opponent")
    expect(page.locator(".check-words li")).to_have_text(["QI", "ZA", "JO"])
    expect(page.locator(".table-round")).to_have_text("Table 12, round 3")
    expect(page.locator("#adjudicate")).to_be_focused()
    page.wait_for_timeout(300)  # the opponent reads the words
    page.keyboard.down(" ")  # the hold
    page.wait_for_timeout(HOLD_S * 1000)  # the hold itself: the time is what is tested
    page.keyboard.up(" ")
    on_screen(page, "verdict")
    expect(page.locator(".verdict h1")).to_have_text("UNACCEPTABLE")  # QI and ZA are not in the DEMO list
    print(f"QI ZA JO at table 12, keyboard only: {keys.count} inputs and the hold")
    assert keys.count <= 14
    (record,) = server.records()
    assert (record.words, record.table, record.round) == (("QI", "ZA", "JO"), "12", 3)
    page.context.close()


def test_the_keyboard_follows_words_table_round_done_and_never_lands_in_a_trap(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser)
    enrol(server, page)
    page.keyboard.press("Enter")
    on_screen(page, "challenger")
    expect(page.get_by_label("Words")).to_be_focused()  # words typed at once land in the words box
    order = []
    for _ in range(3):
        page.keyboard.press("Tab")
        order.append(focused(page))
    assert order == ["table", "round", "done"]  # Cancel is not on the way
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    expect(page.get_by_label("Table")).to_be_focused()
    page.keyboard.type("QUIXOTRY")  # the event numbers its tables: a word is no table
    expect(page.get_by_label("Table")).to_have_value("")
    expect(page.locator("#word-message")).to_have_text("A table number has digits only: the words go in the Words box")
    page.keyboard.press("Escape")  # steps back to the words
    expect(page.get_by_label("Words")).to_be_focused()
    page.keyboard.press("Enter")  # nothing to hand over: says what is missing, where
    expect(page.locator("#word-message")).to_have_text("Type at least one word")
    page.keyboard.type("cat dog")
    page.keyboard.press("Enter")
    expect(page.get_by_label("Table")).to_be_focused()
    expect(page.locator("#word-message")).to_have_text("Type the table number")
    page.keyboard.type("0")
    page.keyboard.press("Enter")
    expect(page.locator("#word-message")).to_have_text("A table number is a whole number from 1 to 9999")
    page.get_by_label("Table").fill("7")
    page.get_by_label("Round").fill("")
    page.get_by_label("Table").press("Enter")
    expect(page.get_by_label("Round")).to_be_focused()
    expect(page.locator("#word-message")).to_have_text("Type the round number")
    page.keyboard.type("4")
    page.keyboard.press("Enter")
    on_screen(page, "opponent")
    expect(page.locator(".table-round")).to_have_text("Table 7, round 4")
    page.wait_for_timeout(300)  # the opponent reads the words
    page.keyboard.press("Enter")  # a key tap on the hold: not a hold, and it says so
    expect(page.locator("#hold-message")).to_have_text("Keep holding until the bar is full")
    page.locator("#adjudicate").click()  # a tap, likewise
    expect(page.locator("#hold-message")).to_have_text("Keep holding until the bar is full")
    page.keyboard.press("Escape")  # steps back: the words are kept for correcting
    on_screen(page, "challenger")
    expect(page.get_by_label("Words")).to_have_value("cat dog")
    expect(page.get_by_label("Words")).to_be_focused()
    page.keyboard.press("Escape")  # words typed: Escape does not throw them away
    on_screen(page, "challenger")
    page.get_by_label("Words").fill("")
    page.get_by_label("Table").fill("")
    page.get_by_label("Words").press("Escape")  # nothing typed: steps out
    on_screen(page, "idle")
    assert server.records() == []
    page.context.close()


def test_the_abandon_timer_shows_its_countdown_and_any_input_restarts_it(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    page.clock.install()
    enrol(server, page)
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "challenger")
    countdown = page.locator(".abandon")
    expect(countdown).to_have_text("Left alone, this clears in 30 s")
    page.clock.run_for(21_000)
    expect(countdown).to_have_text("Left alone, this clears in 9 s")
    expect(countdown).to_have_class("abandon hint small soon")
    page.keyboard.type("c")  # any input restarts it
    expect(countdown).to_have_text("Left alone, this clears in 30 s")
    page.get_by_label("Words").fill("cat")
    page.get_by_label("Table").fill("3")
    page.get_by_role("button", name=DONE).click()
    on_screen(page, "opponent")
    page.clock.run_for(25_000)
    expect(page.locator(".abandon")).to_have_text("Left alone, this clears in 5 s")
    page.mouse.click(5, 5)  # a touch anywhere restarts it too
    expect(page.locator(".abandon")).to_have_text("Left alone, this clears in 30 s")
    page.clock.run_for(30_000)
    on_screen(page, "idle")
    assert server.records() == []
    page.context.close()


# -- item 8 (part): the TD button at 200 % zoom ---------------------------------------------------------------

# Every scroll position, every division card against the TD button: do their boxes ever overlap?
_COVERED = """() => {
  const td = document.querySelector('.td-button');
  const cards = [...document.querySelectorAll('button.division')];
  const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const found = [];
  for (let y = 0; y <= document.documentElement.scrollHeight; y += 10) {
    window.scrollTo(0, y);
    const button = td.getBoundingClientRect();
    cards.forEach((card, n) => { if (overlap(button, card.getBoundingClientRect())) found.push(`card ${n + 1} at ${y}`); });
  }
  window.scrollTo(0, 0);
  return found;
}"""


def test_the_td_button_never_covers_a_division_card_at_200_percent_zoom(browser: Browser, server: LiveServer) -> None:
    write_event(server.data_dir, [(name, "demo", "single") for name in "ABCDE"], name="Five Divisions")
    server.stop()
    server.start()
    problems = []
    for width, height in SIZES:
        # 200 % zoom: the page is laid out in half the CSS pixels, each drawn twice as large.
        context = browser.new_context(viewport={"width": width // 2, "height": height // 2}, device_scale_factor=2)
        page = context.new_page()
        enrol(server, page, f"kiosk-{width}")
        expect(page.locator("button.division")).to_have_count(5)
        problems += [f"{width}x{height} at 200 %: {where}" for where in page.evaluate(_COVERED)]
        page.get_by_role("button", name="TD settings").scroll_into_view_if_needed()
        expect(page.get_by_role("button", name="TD settings")).to_be_in_viewport()
        if width == 1024:
            screenshot(page, "kiosk-idle-divisions-200-percent")
        context.close()
    assert not problems, "\n".join(problems)
