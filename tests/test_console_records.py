"""The TD console's feed and records in a real browser (Debian's Chromium), live server (issue 17 items 1, 2, 7, 8):
any record in seconds (paging over the whole log, the match count, the search box a docket's number or QR code
opens a record from, the division list), rulings in every view, privacy at the TD's table, the keyboard."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from .browser import new_page, screenshot, serving
from .helpers import PASSWORD, LiveServer, audit_log, device_headers, write_event
from .test_audit import entry

pytestmark = pytest.mark.browser

RECORDS = 250  # challenges #1..#250: odd ones in division A, even in B; every third (3, 6...) unacceptable


@pytest.fixture
def hall(data_dir: Path) -> Iterator[LiveServer]:
    """A server whose log holds 250 challenges (more than two pages of the feed), with TDs alice and bob."""
    write_event(
        data_dir, [("A", "demo", "five-per-word"), ("B", "demo", "single")], name="Test Open", challenges_per_minute=0
    )
    log = audit_log(data_dir)
    log.start()
    try:
        for future in [log.submit(entry(n)) for n in range(1, RECORDS + 1)]:
            future.result()
    finally:
        log.close()
    device_headers(data_dir, "kiosk-1")  # the records' device, enrolled
    with serving(data_dir, tds=("alice", "bob")) as live:
        yield live


def sign_in(page: Page, server: LiveServer, name: str = "alice") -> None:
    page.goto(f"{server.base}/td")
    page.get_by_label("TD name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "overview")


def feed(page: Page) -> None:
    page.locator("#tab-feed").click()
    expect(page.locator("tr.record").first).to_be_visible()


def shown_ids(page: Page) -> list[int]:
    return [int(i) for i in page.locator("tr.record").evaluate_all("rows => rows.map(r => r.dataset.id)")]


def as_td(server: LiveServer, name: str) -> httpx.Client:
    """An HTTP client signed in as TD ``name``, sending the session's CSRF token."""
    http = httpx.Client(base_url=server.base, timeout=10)
    signed = http.post("/api/session", json={"name": name, "password": PASSWORD})
    signed.raise_for_status()
    http.headers["X-CSRF-Token"] = signed.json()["csrf_token"]
    return http


# -- item 1: any record in seconds ----------------------------------------------------------------------------


def test_the_feed_pages_through_the_whole_log_saying_how_many_match(browser: Browser, hall: LiveServer) -> None:
    page = new_page(browser, "desktop")
    sign_in(page, hall)
    feed(page)
    expect(page.locator("#matching")).to_contain_text("250 records match · 100 shown")
    assert shown_ids(page) == list(range(250, 150, -1))  # the newest page first
    page.locator("#older").click()
    expect(page.locator("tr.record")).to_have_count(200)
    page.locator("#older").scroll_into_view_if_needed()  # scrolling to the end brings the next page by itself
    expect(page.locator("tr.record")).to_have_count(250)
    assert shown_ids(page) == list(range(250, 0, -1))  # the whole log, no record twice
    expect(page.locator("#older")).to_be_hidden()
    expect(page.locator(".feed-end")).to_have_text("Every matching record is shown")
    expect(page.locator("#matching")).to_contain_text("250 records match · 250 shown")
    screenshot(page, "console-feed-paged-1440x900")

    # The division is chosen from the event's divisions, not typed; the device filter takes any case.
    assert page.locator("#filter-division option").all_inner_texts() == ["every division", "A", "B"]
    page.locator("#filter-division").select_option("B")
    page.locator("#filter-actor").fill("KIOSK-1")
    page.locator(".filters button[type=submit]").click()
    expect(page.locator("#matching")).to_contain_text("125 records match · 100 shown")
    assert shown_ids(page) == list(range(250, 50, -2))
    page.context.close()


def test_a_docket_in_hand_opens_its_record_with_one_scan_or_one_number_and_enter(
    browser: Browser, hall: LiveServer
) -> None:
    page = new_page(browser, "desktop")
    sign_in(page, hall)
    page.locator("#tab-feed").click()
    expect(page.locator("#search")).to_be_focused()  # the feed opens on its search box: a scan goes there
    expect(page.locator("tr.record").first).to_be_visible()
    records = {r.id: r for r in hall.records()}

    # A USB scanner types the docket's QR code text and Enter: that record opens, whatever the filters.
    page.locator("#filter-division").select_option("A")
    page.locator(".filters button[type=submit]").click()
    expect(page.locator("#matching")).to_contain_text("125 records match")
    page.locator("#search").focus()
    page.keyboard.type(f"wordjudge:challenge:54:{records[54].hash[:16]}")
    page.keyboard.press("Enter")
    expect(page.locator("#record-title")).to_have_text("Record #54")
    expect(page.locator("#record-title")).to_be_focused()
    expect(page.locator("#record-view")).to_contain_text("WORD54 QI")
    screenshot(page, "console-scan-opens-record-1440x900")

    # Escape closes it and the search box has the focus again, its text selected: the next docket replaces it.
    page.keyboard.press("Escape")
    expect(page.locator("#record-view")).to_have_count(0)
    expect(page.locator("#search")).to_be_focused()
    page.keyboard.type("#7")
    page.keyboard.press("Enter")
    expect(page.locator("#record-title")).to_have_text("Record #7")
    page.keyboard.press("Escape")
    page.keyboard.type("123")
    page.keyboard.press("Enter")
    expect(page.locator("#record-title")).to_have_text("Record #123")
    page.keyboard.press("Escape")

    # A QR code whose hash is not the record's opens nothing; a number beyond the log says so.
    page.keyboard.type("wordjudge:challenge:54:" + "0" * 16)
    page.keyboard.press("Enter")
    expect(page.locator("tr.empty")).to_have_text("No record matches wordjudge:challenge:54:" + "0" * 16)
    expect(page.locator("#record-view")).to_have_count(0)

    # Words (any case) and a table are searched within the filters, with the count.
    page.locator("#search").fill("qi")
    page.keyboard.press("Enter")
    expect(page.locator("#matching")).to_contain_text("125 records match · 100 shown")  # division A's
    assert shown_ids(page) == list(range(249, 49, -2))
    page.locator("#filter-division").select_option("")
    page.locator("#search").fill("T12")
    page.keyboard.press("Enter")
    expect(page.locator("#matching")).to_contain_text("6 records match")  # tables 1 + n % 40: n = 11, 51...
    assert shown_ids(page) == [211 - 40 * k for k in range(6)]
    page.locator("#search").fill("qi-za")
    page.keyboard.press("Enter")
    expect(page.locator("#filter-message")).to_contain_text("'qi-za' is not a word")
    page.context.close()


# -- item 2: rulings reach every view -------------------------------------------------------------------------


def test_rulings_reach_the_feed_row_the_record_view_and_the_summary(browser: Browser, hall: LiveServer) -> None:
    page = new_page(browser, "desktop")
    sign_in(page, hall)
    feed(page)
    expect(page.locator(".live")).to_have_text("Live: new adjudications appear at the top")
    three = page.locator("tr.record[data-id='3']")
    for shown in (200, 250):  # the whole log, scrolling to its end twice
        page.locator("#older").scroll_into_view_if_needed()
        expect(page.locator("tr.record")).to_have_count(shown)
    expect(three).to_have_class(re.compile(r"\bunacceptable\b"))

    # Bob rules elsewhere: the challenge's row says the final verdict, and who gave it, at once.
    bob = as_td(hall, "bob")
    try:
        ruling = {"verdict": "acceptable", "note": "QI is good here", "request_id": uuid.uuid4().hex}
        assert bob.post("/api/challenges/3/ruling", json=ruling).status_code == 201
    finally:
        bob.close()
    expect(three.locator("td.verdict-ok")).to_contain_text("✓ ACCEPTABLE ⚑ ruled ACCEPTABLE by bob, #251")
    expect(three.locator("td.verdict-ok")).to_contain_text("superseded: ✗ UNACCEPTABLE")  # issue 35: marked so
    expect(three).to_have_class(re.compile(r"\bacceptable\b"))
    expect(page.locator("tr.record").first).to_have_attribute("data-id", "251")  # the ruling itself, live

    three.locator("button.open-record").click()
    expect(page.locator("#final-verdict")).to_have_text(
        "✓ ACCEPTABLE ⚑ ruled ACCEPTABLE by bob, #251 superseded: ✗ UNACCEPTABLE"
    )
    expect(page.locator("#record-view ul.linked li")).to_have_text(["ruling #251 by bob: ✓ ACCEPTABLE"])

    # What the TD does in the record view is answered beside the button, in the success style, with the verdict.
    page.locator("tr.record[data-id='6'] button.open-record").click()
    expect(page.locator("#record-title")).to_have_text("Record #6")
    page.locator("#recheck-note").fill("the player asked")
    page.locator(".action-recheck button[type=submit]").click()
    answer = page.locator(".action-recheck .answer")
    expect(answer).to_have_text("Re-check recorded as #252: ✗ UNACCEPTABLE, as the original")
    expect(answer).to_have_class(re.compile(r"\bok\b"))
    expect(answer).to_be_focused()
    expect(page.locator("#record-view .message:not(:empty)")).to_have_count(0)  # never the error style
    page.locator("#reissue-words").fill("cat")
    page.locator("#reissue-reason").fill("the board shows CAT")
    page.locator(".action-reissue button[type=submit]").click()
    expect(page.locator(".action-reissue .answer")).to_have_text("Reissue recorded as #253: CAT ✓ ACCEPTABLE")
    expect(page.locator("#final-verdict")).to_contain_text("reissued as CAT: ACCEPTABLE, #253")
    expect(page.locator("#record-view ul.linked li")).to_have_text(
        ["re-check #252 by alice: ✗ UNACCEPTABLE", "reissue #253 by alice: ✓ ACCEPTABLE"]
    )
    expect(page.locator("tr.record[data-id='6'] td.verdict-ok")).to_contain_text("reissued as CAT: ACCEPTABLE")
    screenshot(page, "console-record-answers-1440x900")
    page.locator("tr.record[data-id='10'] button.open-record").click()
    expect(page.locator("#record-title")).to_have_text("Record #10")
    page.locator("#ruling-verdict").select_option("unacceptable")
    page.locator("#ruling-note").fill("the board")
    page.locator(".action-ruling button[type=submit]").click()
    page.locator("#ruling-confirm").click()  # it changes the final verdict: confirmed in the page (issue 35)
    expect(page.locator(".action-ruling .answer")).to_have_text(
        "Ruling recorded as #254: ✗ UNACCEPTABLE, the final verdict"
    )

    # The summary counts final verdicts: #3 and #6 became acceptable, #10 unacceptable.
    page.locator("#tab-summary").click()
    total = page.locator("table.summary tbody tr").first
    first_acceptable = sum(1 for n in range(1, RECORDS + 1) if n % 3)
    expect(total.locator("td").nth(2)).to_have_text(str(first_acceptable + 1))
    expect(total.locator("td").nth(4)).to_have_text("⚑ 3")
    expect(page.locator(".summary-final")).to_have_text("Final verdicts: after re-checks, reissues and rulings")
    page.context.close()


# -- item 7: privacy at the TD's table ------------------------------------------------------------------------


def test_one_key_hides_the_per_word_results_and_the_record_and_a_minute_alone_does_too(
    browser: Browser, hall: LiveServer
) -> None:
    page = new_page(browser, "desktop")
    page.clock.install()
    sign_in(page, hall)
    feed(page)
    # Beside an open record the list is narrow: the per-word results show in the words' cell (issue 35), not in a
    # column of their own; wherever they are, the key hides them.
    per_word = page.locator("tr.record[data-id='250'] .per-word:visible")
    page.locator("tr.record[data-id='250'] button.open-record").click()
    expect(page.locator("#record-view")).to_contain_text("WORD250 ✓ (CSW24)")
    expect(per_word).to_contain_text("WORD250 ✓")
    expect(page.locator("#private-note")).to_be_hidden()

    page.keyboard.press("F9")  # one key, wherever the focus is (here: the record's title)
    expect(per_word).to_be_hidden()
    expect(page.locator("thead th.per-word")).to_be_hidden()
    expect(page.locator("#record-view")).to_be_hidden()
    expect(page.locator("#private-note")).to_have_text(
        "Hidden: per-word results and the open record (players may pass by). Press F9 to show them again."
    )
    expect(page.locator("#privacy")).to_have_text("Show per-word results (F9)")
    assert "WORD250 ✓" not in page.locator("body").inner_text()
    screenshot(page, "console-private-1440x900")
    page.locator("#search").focus()
    page.keyboard.press("F9")  # in a field too: F9 types nothing
    expect(per_word).to_be_visible()
    expect(page.locator("#record-view")).to_be_visible()
    expect(page.locator("#privacy")).to_have_text("Hide per-word results (F9)")
    expect(page.locator("#search")).to_have_value("")

    # A minute without input hides them; input before the minute is out starts it again.
    page.clock.run_for(50_000)
    page.mouse.move(200, 300)
    page.clock.run_for(50_000)
    expect(per_word).to_be_visible()
    page.clock.run_for(11_000)
    expect(per_word).to_be_hidden()
    expect(page.locator("#record-view")).to_be_hidden()
    expect(page.locator("#private-note")).to_be_visible()
    page.keyboard.press("F9")
    expect(per_word).to_be_visible()
    page.context.close()


# -- item 8: the keyboard -------------------------------------------------------------------------------------


def test_the_first_record_is_three_keys_from_the_feed_tab_and_escape_closes_it(
    browser: Browser, hall: LiveServer
) -> None:
    page = new_page(browser, "desktop")
    sign_in(page, hall)
    page.locator("#tab-feed").focus()
    keys: list[str] = []

    def press(key: str) -> None:
        page.keyboard.press(key)
        keys.append(key)

    press("Enter")  # the feed tab
    expect(page.locator("tr.record").first).to_be_visible()
    press("ArrowDown")  # the first record
    expect(page.locator("tr.record[data-id='250'] button.open-record")).to_be_focused()
    press("Enter")  # opened
    expect(page.locator("#record-title")).to_have_text("Record #250")
    expect(page.locator("#record-title")).to_be_focused()
    assert keys == ["Enter", "ArrowDown", "Enter"]

    # Escape closes it and gives the focus back to its row; arrows go on down and back to the search box.
    page.keyboard.press("Escape")
    expect(page.locator("#record-view")).to_have_count(0)
    expect(page.locator("tr.record[data-id='250'] button.open-record")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.locator("tr.record[data-id='248'] button.open-record")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#record-title")).to_have_text("Record #248")
    page.keyboard.press("Escape")
    for _ in range(3):
        page.keyboard.press("ArrowUp")
    expect(page.locator("#search")).to_be_focused()

    # "/" comes to the search box from any tab.
    page.locator("#tab-summary").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "summary")
    page.keyboard.press("/")
    expect(page.locator("#app")).to_have_attribute("data-screen", "feed")
    expect(page.locator("#search")).to_be_focused()
    expect(page.locator("#search")).to_have_value("")  # the key itself is not typed
    page.context.close()
