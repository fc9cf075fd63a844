"""The TD console's search box (issue 35 item 9): a refused search leaves no stale results under its message, and a
docket scanned after a click into the box replaces the text there instead of being added to it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from .helpers import LiveServer
from .test_console_fit import console, long_words

pytestmark = pytest.mark.browser

__all__ = ["long_words"]  # the fixture, used here


def test_a_refused_search_shows_no_stale_results(browser: Browser, long_words: LiveServer) -> None:
    page = console(browser, long_words, "1440x900", "en")
    page.locator("#search").fill("t5")
    page.keyboard.press("Enter")
    expect(page.locator("#matching")).to_contain_text("1 record matches")
    page.locator("#search").fill("qi-za")
    page.keyboard.press("Enter")
    expect(page.locator("#filter-message")).to_contain_text("'qi-za' is not a word")
    expect(page.locator("tr.record")).to_have_count(0)  # the last search's results are gone, not shown as its answer
    expect(page.locator("#matching")).to_have_text("")
    # A date the filters cannot read: the same.
    page.locator("#search").fill("t5")
    page.keyboard.press("Enter")
    expect(page.locator("tr.record")).to_have_count(1)
    page.locator("#filter-since").fill("yesterday")
    page.locator(".filters button[type=submit]").click()
    expect(page.locator("#filter-message")).not_to_be_empty()
    expect(page.locator("tr.record")).to_have_count(0)
    # The next search that works shows its list.
    page.locator("#filter-since").fill("")
    page.locator("#search").fill("t5")
    page.keyboard.press("Enter")
    expect(page.locator("tr.record")).to_have_count(1)
    expect(page.locator("#filter-message")).to_have_text("")
    page.context.close()


def test_a_scan_after_a_click_into_the_search_box_replaces_its_text(browser: Browser, long_words: LiveServer) -> None:
    page = console(browser, long_words, "1440x900", "en")
    records = {r.id: r for r in long_words.records()}
    search = page.locator("#search")
    search.fill("t5")
    page.keyboard.press("Enter")
    expect(page.locator("#matching")).to_contain_text("1 record matches")
    page.locator("tr.record button.open-record").first.focus()  # the TD moves on
    search.click()  # ... and clicks back into the box: the scanner types the next docket's QR code
    page.keyboard.type(f"wordjudge:challenge:7:{records[7].hash[:16]}")
    expect(search).to_have_value(f"wordjudge:challenge:7:{records[7].hash[:16]}")
    page.keyboard.press("Enter")
    expect(page.locator("#record-title")).to_have_text("Record #7")
    # A click that put the caret after the text (the box already focused): the scan still replaces it.
    search.fill("t5")
    search.click()
    page.keyboard.press("End")
    page.keyboard.type(f"wordjudge:challenge:2:{records[2].hash[:16]}")
    expect(search).to_have_value(f"wordjudge:challenge:2:{records[2].hash[:16]}")
    page.context.close()
