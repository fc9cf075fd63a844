"""The TD console's search box (issue 35 item 9): a refused search leaves no stale results under its message, and a
docket scanned after a click into the box replaces the text there instead of being added to it; a scan is the whole
query wherever the caret was, pasted or typed, or begun with the focus outside the box (issue 46 item 5)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

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


def _click_into_text(page: Page, at: int) -> None:
    """Click the search box (focused already) so that the caret lands after its text's ``at``-th character."""
    search = page.locator("#search")
    x = page.evaluate(
        """(at) => {
          const box = document.querySelector('#search');
          const style = getComputedStyle(box);
          const pen = document.createElement('canvas').getContext('2d');
          pen.font = style.font;
          return parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth) + pen.measureText(box.value.slice(0, at)).width;
        }""",
        at,
    )
    box = search.bounding_box()
    assert box is not None
    search.click(position={"x": x, "y": box["height"] / 2})
    assert page.evaluate("document.querySelector('#search').selectionEnd") == at


@pytest.mark.parametrize("at", [0, 2, 5], ids=["caret-first", "caret-inside", "caret-last"])
def test_a_scan_after_escape_and_a_click_is_the_whole_query(browser: Browser, long_words: LiveServer, at: int) -> None:
    """Issue 46 item 5: "qi za" searched with a record open, Escape (the record closes, the box keeps its text and the
    focus), a click into the text, and a USB scanner's keystrokes (fast, Enter at the end): the box holds the QR text
    alone and the search shows that record alone, wherever the click put the caret."""
    page = console(browser, long_words, "1440x900", "en")
    records = {r.id: r for r in long_words.records()}
    search = page.locator("#search")
    page.locator("tr.record[data-id='1'] button.open-record").click()
    expect(page.locator("#record-title")).to_have_text("Record #1")
    search.click()
    page.keyboard.type("qi za")
    page.keyboard.press("Enter")
    expect(page.locator("tr.record")).to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator("#record-title")).to_have_count(0)
    expect(search).to_be_focused()
    expect(search).to_have_value("qi za")
    _click_into_text(page, at)
    scan = f"wordjudge:challenge:5:{records[5].hash[:16]}"
    page.keyboard.type(scan, delay=5)  # a scanner types fast
    expect(search).to_have_value(scan)
    page.keyboard.press("Enter")
    expect(search).to_have_value(scan)
    expect(page.locator("#record-title")).to_have_text("Record #5")
    expect(page.locator("tr.record")).to_have_count(1)
    expect(page.locator("tr.record")).to_have_attribute("data-id", "5")
    page.context.close()


def test_a_docket_pasted_into_other_text_is_the_whole_query(browser: Browser, long_words: LiveServer) -> None:
    """A QR text pasted into the middle of other text replaces it and runs the search at once."""
    page = console(browser, long_words, "1440x900", "en")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    records = {r.id: r for r in long_words.records()}
    search = page.locator("#search")
    search.fill("qi za")
    page.keyboard.press("Enter")
    expect(page.locator("tr.record")).to_have_count(0)
    _click_into_text(page, 2)
    scan = f"wordjudge:challenge:6:{records[6].hash[:16]}"
    page.evaluate("(text) => navigator.clipboard.writeText(text)", scan)
    page.keyboard.press("Control+V")
    expect(search).to_have_value(scan)
    expect(page.locator("#record-title")).to_have_text("Record #6")
    expect(page.locator("tr.record")).to_have_count(1)
    page.context.close()


def test_a_scan_with_the_focus_on_a_row_goes_to_the_search_box(browser: Browser, long_words: LiveServer) -> None:
    """A record opened from its row and closed with Escape leaves the focus on the row's button: a scan then (its
    Enter would open that row's record) is the search box's whole query, and shows its record alone."""
    page = console(browser, long_words, "1440x900", "en")
    records = {r.id: r for r in long_words.records()}
    search = page.locator("#search")
    search.fill("qi za")
    page.locator("tr.record[data-id='1'] button.open-record").click()
    expect(page.locator("#record-title")).to_have_text("Record #1")
    page.keyboard.press("Escape")
    expect(page.locator("tr.record[data-id='1'] button.open-record")).to_be_focused()
    scan = f"wordjudge:challenge:4:{records[4].hash[:16]}"
    page.keyboard.type(scan, delay=5)
    page.keyboard.press("Enter")
    expect(search).to_have_value(scan)
    expect(page.locator("#record-title")).to_have_text("Record #4")
    expect(page.locator("tr.record")).to_have_count(1)
    page.context.close()
