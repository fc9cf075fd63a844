"""The pairing sheet the console prints (issue 35 item 9): the page has its one heading of level one (axe's
page-has-heading-one), naming the event."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from .helpers import LiveServer
from .test_console_fit import SHOTS, console, long_words

pytestmark = pytest.mark.browser

__all__ = ["long_words"]  # the fixture, used here


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_pairing_sheet_has_a_heading_one(browser: Browser, long_words: LiveServer, lang: str) -> None:
    page = console(browser, long_words, "1366x768", lang)
    page.locator("#tab-devices").click()
    page.locator("#hall-prefix").fill("table")
    page.locator("#hall-to").fill("2")
    page.locator("#hall-create").click()
    expect(page.locator(".code-card")).to_have_count(2)
    page.locator("#print-sheet").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "pairing-sheet")
    expect(page.locator("h1")).to_have_count(1)
    expect(page.locator("h1")).to_contain_text("Test Open")
    page.screenshot(path=str(SHOTS / f"after-console-pairing-sheet-{lang}-1366x768.png"))
    page.context.close()
