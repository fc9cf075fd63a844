"""The console's live feed prints no raw ISO time (issue 46 item 2): a clock record's times (what the clock read,
what was due) are shown as the console shows every time, in the feed's row, the record view and the printed feed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from wordjudge.tournament.changes import Change, change_entry

from .browser import PAGE_WAIT_MS, serving
from .helpers import PASSWORD, LiveServer, audit_log, write_event
from .test_audit import entry

pytestmark = pytest.mark.browser

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
READ, DUE = "2026-11-27T11:00:02.000+00:00", "2026-11-27T12:00:01.000+00:00"


@pytest.fixture
def clock_record(data_dir: Path) -> Iterator[LiveServer]:
    """Challenge #1, then #2: the server's record of its clock set back an hour."""
    write_event(data_dir, [("A", "demo", "single")], name="Test Open", challenges_per_minute=0)
    log = audit_log(data_dir)
    log.start()
    try:
        log.append_sync(entry(1))
        stepped = Change("clock.stepped_back", "hall-a", "", {"time": DUE}, {"time": READ, "seconds": -3599.0})
        log.append_sync(change_entry(stepped, actor="server", event="Test Open", channel="server"))
    finally:
        log.close()
    with serving(data_dir, tds=("alice",)) as live:
        yield live


def test_a_clock_records_times_are_shown_as_the_console_shows_times(browser: Browser, clock_record: LiveServer) -> None:
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    signed = page.request.post(f"{clock_record.base}/api/session", data={"name": "alice", "password": PASSWORD})
    assert signed.ok, signed.text()
    page.goto(f"{clock_record.base}/td?lang=en")
    page.locator("#tab-feed").click()
    expect(page.locator("tr.record")).to_have_count(2)
    shown = [
        page.evaluate("(iso) => import('/static/shared/strings.js').then((m) => m.formatDate(iso))", t)
        for t in (READ, DUE)
    ]
    row = page.locator("tr.record.change[data-id='2'] .change-what")
    expect(row).to_contain_text("the clock of hall-a was set back by 59 min 59 s")
    for text in shown:
        expect(row).to_contain_text(text)
    assert not ISO_TIME.search(row.inner_text()), row.inner_text()
    page.locator("tr.record[data-id='2'] button.open-record").click()
    view = page.locator("#change-what")
    for text in shown:
        expect(view).to_contain_text(text)
    assert not ISO_TIME.search(page.locator("#record-detail").inner_text())
    assert not ISO_TIME.search(page.locator(".feed-list").inner_text())
    # The printed feed too.
    page.goto(f"{clock_record.base}/td?print=feed&lang=en")
    printed = page.locator("tr", has_text="hall-a")
    for text in shown:
        expect(printed).to_contain_text(text)
    assert not ISO_TIME.search(page.locator("body").inner_text())
    page.context.close()
