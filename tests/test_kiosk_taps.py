"""A tap never starts the wrong challenge (issue 35, item 1): with touch, at every kiosk size, a tap belongs to the
screen it began on. Before, the kiosk cleared a verdict on the finger's press, and the same tap's click then
landed on the idle screen behind it, on the division card under the finger: with two divisions, a tap at the
centre opened Division B 6 times in 6 at all three kiosk sizes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from wordjudge.model.auth import Role

from .browser import PAGE_WAIT_MS, open_enrolled, serving
from .helpers import LiveServer, access_store, write_event
from .test_kiosk import HOLD_S, enrol, hold_adjudicate, on_screen

pytestmark = pytest.mark.browser

KIOSK_SIZES = [(1024, 600), (1280, 800), (1920, 1080)]
GRACE_S = 0.6  # past the verdict's own grace (500 ms), as a player's tap comes
SETTLED_MS = 1200  # past the guard on a new screen (400 ms) and a double tap (1 s, tap-guard.js): a deliberate tap


@pytest.fixture
def two_divisions(data_dir: Path) -> Iterator[LiveServer]:
    write_event(
        data_dir,
        [("A", "demo", "five-per-word"), ("B", "demo", "ten-per-word")],
        name="Two Divisions",
        kiosk_result_seconds=30,
    )
    with serving(data_dir) as live:
        yield live


def _touch_page(browser: Browser, width: int, height: int) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True, is_mobile=False)
    page = context.new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def _centre(page: Page, selector: str) -> tuple[float, float]:
    page.locator(selector).first.scroll_into_view_if_needed()
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _tap_centre(page: Page) -> None:
    size = page.viewport_size
    assert size is not None
    page.touchscreen.tap(size["width"] / 2, size["height"] / 2)


def _early_tap(page: Page, at: str | tuple[float, float]) -> None:
    """A finger already on its way: it lands on ``at`` (a selector of the screen just shown, or the point where an
    earlier showing of that screen had it) 100 ms after the screen appeared. A point found beforehand saves the
    look-up's round trips to the browser, which on a loaded machine took the tap past the guard's 400 ms (a whole
    check met a tap that was no longer early: it opened the screen the test says it does not)."""
    page.wait_for_timeout(100)  # the finger's 100 ms: the time is what is tested
    page.touchscreen.tap(*(_centre(page, at) if isinstance(at, str) else at))


@contextmanager
def _finger_on(page: Page, selector: str) -> Iterator[None]:
    """A finger on ``selector`` while the block runs, lifted after it (Playwright's touchscreen only taps): touch
    events by CDP."""
    x, y = _centre(page, selector)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    yield
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def _touch_hold(page: Page, selector: str, seconds: float = HOLD_S) -> None:
    """A finger held on ``selector`` for ``seconds``."""
    with _finger_on(page, selector):
        page.wait_for_timeout(seconds * 1000)  # the hold itself: the time is what is tested


def _held_until(page: Page, selector: str, until: str, then: str) -> tuple[float, float]:
    """A finger held on ``selector`` until the screen ``until`` shows, and lifted: the centre of ``then`` on that
    screen, found by the same wait that saw the screen (no round trip more, so that a tap there comes early)."""
    with _finger_on(page, selector):
        found = page.wait_for_function(
            """([until, then]) => {
              if (document.getElementById("app").dataset.screen !== until) return false;
              const box = document.querySelector(then).getBoundingClientRect();
              return [box.x + box.width / 2, box.y + box.height / 2];
            }""",
            arg=[until, then],
            polling="raf",
        ).json_value()
    return float(found[0]), float(found[1])


def _to_challenger(page: Page, division: str) -> None:
    page.get_by_role("button", name=f"Division {division}").first.click()
    on_screen(page, "challenger")
    # The pair sees which division they are in, where the event has several.
    expect(page.locator("#app header .lexicon")).to_contain_text(f"Division {division}")


def _to_opponent(page: Page, division: str) -> None:
    _to_challenger(page, division)
    page.get_by_label("Table").fill("5")
    page.get_by_label("Round").fill("2")
    page.get_by_label("Words").press_sequentially("cat dog")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    on_screen(page, "opponent")
    expect(page.locator("#app header .lexicon")).to_contain_text(f"Division {division}")


def _to_verdict(page: Page, division: str) -> None:
    _to_opponent(page, division)
    hold_adjudicate(page)  # the mouse's release after the hold lands on the verdict: it must not clear it
    on_screen(page, "verdict")


@pytest.mark.parametrize(("width", "height"), KIOSK_SIZES)
def test_the_tap_that_clears_a_verdict_starts_nothing_behind_it(
    two_divisions: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = _touch_page(browser, width, height)
    enrol(two_divisions, page)
    for _ in range(3):
        _to_verdict(page, "A")
        time.sleep(0.3)  # lets the release act if it would: it does not clear the verdict
        on_screen(page, "verdict")  # the hold's release did not clear it
        time.sleep(GRACE_S)
        _tap_centre(page)
        on_screen(page, "idle")
        page.wait_for_timeout(700)  # whatever the tap was going to do, it has done
        on_screen(page, "idle")
    page.context.close()


@pytest.mark.parametrize(("width", "height"), KIOSK_SIZES)
def test_a_tap_in_the_first_moments_of_a_new_screen_reaches_nothing(
    two_divisions: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """A finger already on its way when the screen changes under it, at each change that can happen under a
    finger: the idle screen appears (the verdict's time ran out, or a key cleared it), the challenger's screen
    appears (a double tap on a division card), the failure screen appears (no verdict): a tap 100 ms later
    reaches nothing, and a deliberate tap once the screen has settled works as ever."""
    page = _touch_page(browser, width, height)
    enrol(two_divisions, page)
    card = 'button.division:has-text("Division B")'
    card_at = _centre(page, card)  # where the idle screen shows it, found before the screen the tap is early on
    # verdict -> idle: a tap on Division B's card 100 ms later opens nothing.
    _to_verdict(page, "A")
    page.wait_for_timeout(GRACE_S * 1000)  # past the verdict's grace: the time is what is tested
    page.keyboard.press("Escape")  # idle is shown by the key's own handler: it is there once the press returns
    _early_tap(page, card_at)
    page.wait_for_timeout(SETTLED_MS)  # time for the tap to act if it would: the test shows it does not
    on_screen(page, "idle")
    page.touchscreen.tap(*_centre(page, card))
    on_screen(page, "challenger")
    expect(page.locator("#app header .lexicon")).to_contain_text("Division B")
    cancel_at = _centre(page, "#cancel")  # where the challenger's screen shows it, found before the early tap
    # idle -> challenger: the second tap of a double tap lands on Cancel, and does not cancel.
    page.locator("#cancel").click()
    on_screen(page, "idle")
    page.wait_for_timeout(SETTLED_MS)  # past the new screen's guard: the next tap is a deliberate one
    page.touchscreen.tap(*_centre(page, card))
    on_screen(page, "challenger")
    _early_tap(page, cancel_at)
    page.wait_for_timeout(SETTLED_MS)  # time for the tap to act if it would: the test shows it does not
    on_screen(page, "challenger")
    page.touchscreen.tap(*_centre(page, "#cancel"))
    on_screen(page, "idle")
    # opponent -> failure (no verdict: the server could not be reached): Discard, tapped at once, discards nothing.
    # The finger holds Adjudicate until the failure screen shows, lets go, and taps where Discard now is.
    page.route("**/api/challenges", lambda route: route.abort())
    _to_opponent(page, "A")
    discard_at = _held_until(page, "#adjudicate", until="failure", then="#discard")
    page.touchscreen.tap(*discard_at)
    page.wait_for_timeout(SETTLED_MS)  # time for the tap to act if it would: the test shows it does not
    on_screen(page, "failure")
    page.touchscreen.tap(*_centre(page, "#discard"))
    on_screen(page, "idle")
    page.context.close()


@pytest.mark.parametrize(("width", "height"), KIOSK_SIZES)
def test_a_finger_held_on_adjudicate_and_lifted_leaves_the_verdict(
    two_divisions: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """opponent -> verdict under a finger: the verdict appears while the finger still holds, and lifting it
    neither clears the verdict nor presses anything on it."""
    page = _touch_page(browser, width, height)
    enrol(two_divisions, page)
    _to_opponent(page, "A")
    _touch_hold(page, "#adjudicate", HOLD_S + 0.7)  # lifted past the verdict's own grace
    on_screen(page, "verdict")
    page.wait_for_timeout(700)  # lets the lift act if it would: the verdict stays
    on_screen(page, "verdict")
    _tap_centre(page)  # a deliberate tap clears it
    on_screen(page, "idle")
    page.context.close()


# -- the handheld: the same rule, on a phone ---------------------------------------------------------------------

PHONE_SIZES = [(360, 640), (390, 844)]


@pytest.mark.parametrize(("width", "height"), PHONE_SIZES)
def test_a_double_tap_on_the_handheld_never_sends_nor_clears_behind_the_screen(
    two_divisions: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """entry -> check: the second tap of a double tap on "Check the slip" lands where Send now is, and sends
    nothing; check -> verdict: a tap 100 ms after the verdict shows lands on Next, and the verdict stays."""
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    open_enrolled(page, two_divisions, "runner", _token(two_divisions, "handheld-01", Role.RUNNER))
    on_screen(page, "entry")
    page.get_by_label("Table").fill("7")
    page.get_by_label("Round").fill("2")
    page.get_by_label("Words").press_sequentially("cat dog")
    page.wait_for_timeout(SETTLED_MS)  # a person types a slip in more than 400 ms
    page.touchscreen.tap(*_centre(page, "#check"))
    on_screen(page, "confirm")
    _early_tap(page, "#send")
    page.wait_for_timeout(SETTLED_MS)  # time for the tap to act if it would: the test shows it does not
    on_screen(page, "confirm")
    assert two_divisions.records() == []
    page.touchscreen.tap(*_centre(page, "#send"))
    on_screen(page, "verdict")
    _early_tap(page, "#next")
    page.wait_for_timeout(SETTLED_MS)  # time for the tap to act if it would: the test shows it does not
    on_screen(page, "verdict")
    page.touchscreen.tap(*_centre(page, "#next"))
    on_screen(page, "entry")
    assert len(two_divisions.records()) == 1
    context.close()


def _token(server: LiveServer, name: str, role: Role) -> str:
    store = access_store(server.data_dir)
    try:
        return store.devices.add(name, role, None, by="test").token
    finally:
        store.close()


# -- a double tap on the verdict, at every interval a person double-taps -----------------------------------------

DOUBLE_TAP_INTERVALS_MS = [300, 400, 500, 600, 700, 800, 900]


def _double_tap(page: Page, interval_ms: int) -> None:
    """Two taps at the centre of the screen, the second beginning ``interval_ms`` after the first (each a finger
    down for 60 ms): touch events by CDP, timed by the clock, as a person's double tap."""
    size = page.viewport_size
    assert size is not None
    point = {"x": size["width"] / 2, "y": size["height"] / 2}
    cdp = page.context.new_cdp_session(page)
    first = time.monotonic()
    for start in (first, first + interval_ms / 1000):
        time.sleep(max(0.0, start - time.monotonic()))
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
        time.sleep(0.06)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


@pytest.mark.parametrize(("width", "height"), KIOSK_SIZES)
def test_a_double_tap_on_the_verdict_at_any_interval_starts_nothing(
    two_divisions: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """The first tap of a double tap clears the verdict; the second, 300 to 900 ms later (the slowest double click
    a desktop allows is 900 ms), lands on the idle screen's division card under the finger and opens nothing.
    Before, a second tap 400 ms or more after the first opened Division B's challenger screen."""
    page = _touch_page(browser, width, height)
    enrol(two_divisions, page)
    after: dict[int, str] = {}
    for interval in DOUBLE_TAP_INTERVALS_MS:
        _to_verdict(page, "A")
        time.sleep(GRACE_S)
        _double_tap(page, interval)
        page.wait_for_timeout(1500)  # whatever the second tap was going to do, it has done
        after[interval] = page.locator("#app").get_attribute("data-screen") or ""
        if after[interval] == "challenger":  # back to idle, for the next interval
            page.locator("#cancel").click()
        on_screen(page, "idle")
    assert after == dict.fromkeys(DOUBLE_TAP_INTERVALS_MS, "idle"), f"{width}x{height}: {after}"
    page.context.close()
