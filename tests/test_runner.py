"""The runner's handheld in Chromium (a phone's screen): a slip typed, checked and sent, a flaky connection,
every letter visible on a small phone and at 200 % zoom, and the dockets it prints (WESPA 3.10.1-3.10.2). The
handheld's end-to-end path with the TD console is in test_console.py; its failure screens in
test_failure_screens.py."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Literal

import pytest
from playwright.sync_api import Browser, expect
from pypdf import PdfReader

from wordjudge.model.auth import Role

from .browser import (
    PAGE_WAIT_MS,
    new_page,
    open_enrolled,
    pytest_runtest_makereport,
    reload_noting,
    runner_sends,
    screenshot,
    serving,
    told_sections,
)
from .helpers import LiveServer, access_store, write_event

pytestmark = pytest.mark.browser

# What on the page is not fully visible, in words (an empty list: every letter of every word is). Nothing is wider
# inside than its box (scrollWidth), nothing ends in an ellipsis, and each word of text is on one line, inside the
# page and inside the box it belongs to.
NOT_FULLY_VISIBLE = """() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.classList.length ? "." + [...el.classList].join(".") : "");
  if (document.documentElement.scrollWidth > width) problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  for (const el of document.querySelectorAll("#app, #app *")) {
    if (getComputedStyle(el).textOverflow === "ellipsis") problems.push(`${name(el)} has text-overflow: ellipsis`);
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth) problems.push(`${name(el)}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`);
  }
  const walker = document.createTreeWalker(document.getElementById("app"), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.getClientRects().length) continue;  // not shown
    let box = node.parentElement;
    while (getComputedStyle(box).display.startsWith("inline") && box.parentElement) box = box.parentElement;
    const outer = box.getBoundingClientRect();
    for (const match of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      if (rects.length > 1) problems.push(`"${match[0]}" is cut over ${rects.length} lines`);
      for (const r of rects) {
        if (r.left < -0.5 || r.right > width + 0.5) problems.push(`"${match[0]}" leaves the page: ${r.left}..${r.right} of ${width}`);
        else if (r.left < outer.left - 0.5 || r.right > outer.right + 0.5) problems.push(`"${match[0]}" leaves its ${name(box)}`);
      }
    }
  }
  return problems;
}"""
LONG_WORDS = "oversubscribing interdigitating mountainousness"  # 15 letters each, the most a word may have


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Runner Open", challenges_per_minute=0)
    with serving(data_dir) as live:
        yield live


def test_a_runner_on_a_flaky_connection_never_sees_a_guessed_verdict(browser: Browser, server: LiveServer) -> None:
    store = access_store(server.data_dir)
    token = store.devices.add("runner-9", Role.RUNNER, by="test").token
    store.close()
    runner = new_page(browser, "phone")
    open_enrolled(runner, server, "runner", token)
    runner_sends(runner, "3", "cat dog")
    runner.context.set_offline(True)
    runner.get_by_role("button", name="Send for adjudication").click()
    expect(runner.locator("#app")).to_have_attribute("data-screen", "not-sent")
    expect(runner.locator("h1")).to_have_text("Not sent: no answer from the server")
    expect(runner.locator("body")).not_to_contain_text("ACCEPTABLE")
    screenshot(runner, "runner-not-sent-390x844")
    assert server.records() == []
    runner.context.set_offline(False)  # the browser's "online" event sends it again, same request id
    expect(runner.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    runner.get_by_role("button", name="Next challenge").click()
    expect(runner.locator(".recent-list li")).to_have_count(1)
    expect(runner.locator(".recent-list li")).to_contain_text("ACCEPTABLE · #1 · table 3 · 2 words")
    assert len(server.records()) == 1
    runner.context.close()


def test_docket_sizes_and_another_devices_docket(browser: Browser, server: LiveServer) -> None:
    store = access_store(server.data_dir)
    token = store.devices.add("runner-1", Role.RUNNER, by="test").token
    other = store.devices.add("runner-2", Role.RUNNER, by="test").token
    store.close()
    page = new_page(browser)
    open_enrolled(page, server, "runner", token)
    runner_sends(page, "5", "cat")
    page.get_by_role("button", name="Send for adjudication").click()
    expect(page.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    for size, width_mm in (("58mm", 58), ("a6", 105)):
        page.goto(f"{server.base}/docket?id=1&size={size}")
        expect(page.locator(".docket-verdict")).to_contain_text("ACCEPTABLE")
        pdf = PdfReader(io.BytesIO(page.pdf(prefer_css_page_size=True)))
        assert round(float(pdf.pages[0].mediabox.width) / 72 * 25.4) == width_mm
    page.evaluate("token => localStorage.setItem('wordjudge.runner.token', token)", other)
    page.goto(f"{server.base}/docket?id=1")
    expect(page.locator(".message")).to_have_text("no record 1 submitted by runner-2")
    # That alone, under the page's heading.
    expect(page.locator("#app > *")).to_have_text(["wordjudge docket", "no record 1 submitted by runner-2"])
    page.context.close()


# 200 % zoom: Chromium then lays a 360x640 phone's page out in a 180x320 CSS-pixel viewport (a device scale
# factor would only sharpen it), so a 180x320 viewport is the page at 200 % zoom.
@pytest.mark.parametrize(("width", "height"), [(360, 640), (180, 320)], ids=["360x640", "zoom200-180x320"])
def test_every_letter_is_visible_on_a_small_phone_and_at_200_percent_zoom(
    browser: Browser, server: LiveServer, width: int, height: int
) -> None:
    store = access_store(server.data_dir)
    token = store.devices.add("runner-5", Role.RUNNER, by="test").token
    store.close()
    context = browser.new_context(viewport={"width": width, "height": height})
    runner = context.new_page()
    runner.set_default_timeout(PAGE_WAIT_MS)
    open_enrolled(runner, server, "runner", token)

    def fully_visible(screen: str) -> None:
        expect(runner.locator("#app")).to_have_attribute("data-screen", screen)
        assert runner.evaluate(NOT_FULLY_VISIBLE) == [], screen
        screenshot(runner, f"runner-{screen}-{width}x{height}")

    runner.get_by_label("Words").fill("cat")  # the words come first: the line then names the table
    runner.get_by_role("button", name="Check the slip").click()
    expect(runner.locator("#word-message")).to_have_text("Type the table number")
    fully_visible("entry")
    runner.get_by_label("Table").fill("12")
    runner.get_by_label("Round").fill("3")
    runner.get_by_label("Words").fill("")
    runner.get_by_label("Words").press_sequentially(f"{LONG_WORDS} cat")
    expect(runner.locator(".tile-word")).to_have_count(4)
    fully_visible("entry")
    runner.get_by_role("button", name="Check the slip").click()
    expect(runner.locator(".check-words li")).to_have_text([*LONG_WORDS.upper().split(), "CAT"])
    fully_visible("confirm")
    runner.get_by_role("button", name="Send for adjudication").click()
    expect(runner.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    fully_visible("verdict")
    runner.get_by_role("button", name="Next challenge").click()
    runner_sends(runner, "13", "mountainousness qi")
    runner.get_by_role("button", name="Send for adjudication").click()
    expect(runner.locator(".verdict h1")).to_have_text("UNACCEPTABLE")
    fully_visible("verdict")
    runner.get_by_role("button", name="Next challenge").click()
    runner_sends(runner, "14", LONG_WORDS)
    context.set_offline(True)
    runner.get_by_role("button", name="Send for adjudication").click()
    fully_visible("not-sent")
    context.close()


def test_a_failed_browser_test_reports_what_each_of_its_pages_did(
    browser: Browser, server: LiveServer, request: pytest.FixtureRequest
) -> None:
    page = new_page(browser, "phone")
    page.goto(f"{server.base}/runner")
    with pytest.raises(AssertionError):  # a wait that runs out, as on a loaded machine
        expect(page.locator("#app[data-screen=nowhere]")).to_have_count(1, timeout=2_000)
    [(title, told)] = told_sections(request.node)
    assert title == f"page 1 of the test ({server.base}/runner)"
    assert "the page now: " in told
    assert "/runner complete" in told  # where it is and how far it loaded
    assert f"navigated {server.base}/runner" in told
    assert f"-> GET {server.base}/api/health" in told
    assert f"<- {server.base}/api/health 200" in told
    # The report of a failed call carries the stories; a passed one does not.
    failed, passed = _reported(request.node, "failed"), _reported(request.node, "passed")
    assert [name for name, _ in failed.sections] == [title]
    assert failed.sections[0][1].startswith("the page now: ")
    assert passed.sections == []
    page.context.close()


def test_what_a_reload_notes_is_the_reloaded_documents_requests(browser: Browser, server: LiveServer) -> None:
    # A request the old document makes after the reload is asked, before the new one arrives, is not the reloaded
    # page's (test_hall_follow's kiosk polled its server just then, and its "first request" was the old page's).
    page = new_page(browser, "phone")
    page.goto(f"{server.base}/runner")
    expect(page.locator("#app[data-screen]")).to_have_count(1)
    page.evaluate("addEventListener('beforeunload', () => fetch('/api/health?old', {keepalive: true}))")
    made = reload_noting(page)
    expect(page.locator("#app[data-screen]")).to_have_count(1)
    assert made, "the reloaded page asked nothing"
    assert not any(url.endswith("?old") for url in made), made
    assert made[0].startswith(f"{server.base}/api/"), made
    page.context.close()


def _reported(item: pytest.Item, outcome: Literal["passed", "failed"]) -> pytest.TestReport:
    """The report of ``item``'s call with ``outcome``, as the browser plugin's report hook leaves it."""
    report = pytest.TestReport(item.nodeid, ("t", 0, "t"), {}, outcome, None, "call")
    hook = pytest_runtest_makereport(item, pytest.CallInfo.from_call(lambda: None, "call"))
    next(hook)
    with pytest.raises(StopIteration):
        hook.send(SimpleNamespace(get_result=lambda: report))
    return report
