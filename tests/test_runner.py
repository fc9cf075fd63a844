"""The runner's handheld in Chromium (a phone's screen): a slip typed, checked and sent, a flaky connection,
and the dockets it prints (WESPA 3.10.1-3.10.2). The handheld's end-to-end path with the TD console is in
test_console.py."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from pypdf import PdfReader

from wordjudge.access import ACCESS_FILE, AccessStore
from wordjudge.auth import Role

from .browser import new_page, open_enrolled, runner_sends, screenshot, serving
from .helpers import LiveServer, write_event

pytestmark = pytest.mark.browser


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Runner Open", challenges_per_minute=0)
    with serving(data_dir) as live:
        yield live


def test_a_runner_on_a_flaky_connection_never_sees_a_guessed_verdict(browser: Browser, server: LiveServer) -> None:
    store = AccessStore(server.data_dir / ACCESS_FILE).open()
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
    store = AccessStore(server.data_dir / ACCESS_FILE).open()
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
    page.context.close()
