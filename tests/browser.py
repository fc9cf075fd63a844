"""Browser-test support: a live ``wordjudge serve`` and Debian's Chromium driven by Playwright."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from .helpers import PASSWORD, LiveServer, access_store

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and nothing that reaches for the internet (the machine's network is closed).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"
SIZES = {"small": (1024, 600), "large": (1920, 1080), "phone": (390, 844), "desktop": (1440, 900)}


@contextmanager
def serving(data_dir: Path, tds: tuple[str, ...] = ()) -> Iterator[LiveServer]:
    """A live server on ``data_dir`` for the duration, with TD accounts ``tds`` (password PASSWORD)."""
    if tds:
        store = access_store(data_dir)
        for name in tds:
            store.tds.add(name, PASSWORD, by="test")
        store.close()
    live = LiveServer(data_dir)
    live.start()
    try:
        yield live
    finally:
        live.stop()


def open_enrolled(page: Page, server: LiveServer, role: str, token: str) -> None:
    """Open the ``role`` page (kiosk, runner) on ``page`` as a device enrolled with ``token``, as after pairing."""
    page.goto(f"{server.base}/{role}")
    # A screen of its own (pairing, if it holds no token yet): shown once the page speaks the event's language (it
    # may reload into it first).
    expect(page.locator("#app[data-screen]")).to_have_count(1)
    page.evaluate("([key, token]) => localStorage.setItem(key, token)", [f"wordjudge.{role}.token", token])
    page.goto(f"{server.base}/{role}")


def runner_sends(runner: Page, table: str, words: str) -> None:
    """On the handheld's entry screen: type a slip (table, round 2, words) and go to its check screen."""
    runner.get_by_label("Table").fill(table)
    runner.get_by_label("Round").fill("2")
    runner.get_by_label("Words").press_sequentially(words)
    runner.get_by_role("button", name="Check the slip").click()
    expect(runner.locator("#app")).to_have_attribute("data-screen", "confirm")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/check installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def new_page(browser: Browser, size: str = "small") -> Page:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


def screenshot(page: Page, name: str) -> Path:
    """Save what the page shows now, as build/screenshots/<name>.png, for a person to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def fits(page: Page) -> bool:
    """Whether the screen's content fits the window: nothing to scroll to, either way."""
    return bool(
        page.evaluate(
            "document.documentElement.scrollWidth <= innerWidth && document.documentElement.scrollHeight <= innerHeight"
        )
    )
