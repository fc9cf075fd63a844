"""Event changes in the TD console, in a real browser against a live server: a rule changed mid-event is
confirmed in a dialog naming the change, the kiosks serving the division and its challenges; the feed and the
record view show the change record (pushed live to another TD's console)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from .browser import PAGE_WAIT_MS, new_page, screenshot, serving
from .helpers import LiveServer, device_headers, write_event
from .test_console import sign_in, tab

pytestmark = pytest.mark.browser

EVIDENCE = Path("/work/helpers/evidence/event-changes")


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "ten-per-word"), ("Juniors", "demo", "single")], challenges_per_minute=0)
    kiosks = [device_headers(data_dir, f"kiosk-open-{n}", division="Open") for n in range(1, 4)]
    device_headers(data_dir, "kiosk-juniors", division="Juniors")  # serves another division: not counted
    with serving(data_dir, tds=("alice", "bob")) as live:
        for n, headers in enumerate(kiosks[:2], start=1):
            body = {
                "words": ["cat"],
                "division": "Open",
                "table": str(n),
                "round": 1,
                "request_id": f"request-{n}-0000",
            }
            assert httpx.post(f"{live.base}/api/challenges", json=body, headers=headers).status_code == 201
        yield live


def _sized(browser: Browser, width: int, height: int) -> Page:
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def _evidence(page: Page, name: str) -> None:
    """A screenshot in build/screenshots, and a copy for the report where the helpers keep evidence."""
    shot = screenshot(page, name)
    if EVIDENCE.parent.exists():
        EVIDENCE.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, EVIDENCE / f"{name}.png")


def _served_rule(page: Page, server: LiveServer) -> str:
    event = page.request.get(f"{server.base}/api/event").json()
    return str(next(d for d in event["divisions"] if d["name"] == "Open")["rule"])


def test_a_rule_change_mid_event_is_confirmed_naming_it_and_goes_on_the_record(
    browser: Browser, server: LiveServer
) -> None:
    console = new_page(browser, "desktop")  # 1440x900
    sign_in(console, server, "alice")
    tab(console, "Event settings")
    open_rule = console.locator(".division-row").first.locator(".division-rule")
    open_rule.select_option("five-per-word")
    console.locator("#save-event").click()

    dialog = console.locator("#change-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(
        "Open: rule 10 points per word for an unsuccessful challenge -> 5 points per word for an unsuccessful challenge"
    )
    expect(dialog).to_contain_text("3 kiosks and 0 handhelds serve Open")  # not kiosk-juniors
    expect(dialog).to_contain_text("2 challenges recorded in Open")
    expect(dialog).to_contain_text("WESPA 3.10.14(a): an announced penalty should not change")
    expect(console.locator("#change-cancel")).to_be_focused()  # the safe choice first
    _evidence(console, "change-dialog-1440x900")

    # Escape cancels: nothing changed, nothing recorded.
    console.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(console.locator("#event-note")).to_have_text("Cancelled: nothing was changed.")
    assert _served_rule(console, server) == "ten-per-word"
    assert console.request.get(f"{server.base}/api/challenges?kind=change").json()["records"] == []

    # Confirmed with the keyboard: Tab to "Make these changes", Enter.
    console.locator("#save-event").click()
    expect(console.locator("#change-cancel")).to_be_focused()
    console.keyboard.press("Tab")
    expect(console.locator("#change-confirm")).to_be_focused()
    console.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    expect(console.locator("#event-note")).to_have_text("Event saved and served")
    assert _served_rule(console, server) == "five-per-word"

    # The feed: the change record, with its TD and what changed, no verdict; the record view: before, after.
    tab(console, "Live feed")
    row = console.locator("tr.record.change")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("alice")
    expect(row.locator(".change-what")).to_have_text(
        "Open: rule 10 points per word for an unsuccessful challenge -> 5 points per word for an unsuccessful challenge"
    )
    console.locator("#filter-kind").select_option("change")
    console.locator(".filters button[type=submit]").click()
    expect(console.locator("tr.record")).to_have_count(1)
    row.locator("button.link").click()
    expect(console.locator("#record-view")).to_be_visible()
    expect(console.locator("#change-before")).to_have_text("rule: ten-per-word")
    expect(console.locator("#change-after")).to_have_text("rule: five-per-word")
    _evidence(console, "change-record-1440x900")

    # Another TD on a 1280x720 screen changes a setting: alice's feed gets it pushed.
    console.locator("#close-record").click()
    console.locator("#filter-kind").select_option("")
    console.locator(".filters button[type=submit]").click()
    expect(console.locator("tr.record")).to_have_count(3)
    other = _sized(browser, 1280, 720)
    sign_in(other, server, "bob")
    tab(other, "Event settings")
    other.locator("#event-seconds").fill("20")
    other.locator("#save-event").click()
    expect(other.locator("#change-dialog")).to_contain_text("event settings: seconds a kiosk shows a verdict: 10 -> 20")
    _evidence(other, "change-dialog-1280x720")
    other.locator("#change-confirm").click()
    expect(other.locator("#event-note")).to_have_text("Event saved and served")
    pushed = console.locator("tr.record.change").first
    expect(pushed).to_contain_text("bob")
    expect(pushed.locator(".change-what")).to_contain_text("seconds a kiosk shows a verdict: 10 -> 20")
    expect(console.locator("tr.record.change")).to_have_count(2)
