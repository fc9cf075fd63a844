"""Honest screens when things fail (issue 16 item 5), in Chromium against a live server: the kiosk, the handheld
and the docket open from their offline shell (a service worker) when the server cannot be reached, say so in the
app's own words and come back by themselves; the kiosk's cards cannot start a challenge meanwhile; a rate limit's
wait counts down; a revoked handheld is told so; a slip not sent goes again by itself; an error line goes once
the text is fixed, and a missing table is the app's message, never the browser's validation bubble."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from importlib import resources as package_files
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

import wordjudge
from wordjudge.model.auth import Role
from wordjudge.web.pages import SHELL_PAGES, WEB_DIR, asset_version

from .browser import PAGE_WAIT_MS, new_page, open_enrolled, runner_sends, screenshot, serving, shell_ready
from .helpers import LiveServer, ServeProcess, access_store, td_headers, wait_for_health, write_event

pytestmark = pytest.mark.browser

CANNOT_REACH = "Cannot reach the adjudication server: call the TD"
CHROMIUM_ERROR = re.compile("can’t be reached|ERR_CONNECTION_REFUSED")


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(
        data_dir,
        [("A", "demo", "five-per-word"), ("B", "demo", "single")],
        name="Failure Open",
        challenges_per_minute=1,
    )
    with serving(data_dir) as live:
        yield live


def token(server: LiveServer, name: str, role: Role) -> str:
    store = access_store(server.data_dir)
    try:
        return store.devices.add(name, role, by="test").token
    finally:
        store.close()


def on_screen(page: Page, name: str, timeout: float = PAGE_WAIT_MS) -> None:
    expect(page.locator("#app")).to_have_attribute("data-screen", name, timeout=timeout)


def cached_urls(page: Page) -> dict[str, list[str]]:
    """Every cache of the page's origin, with the paths (and queries) it holds."""
    urls: dict[str, list[str]] = page.evaluate(
        """async () => {
            const all = {};
            for (const name of await caches.keys()) {
                const keys = await (await caches.open(name)).keys();
                all[name] = keys.map((request) => { const url = new URL(request.url); return url.pathname + url.search; });
            }
            return all;
        }"""
    )
    return urls


def send_slip(page: Page, table: str, words: str = "cat") -> None:
    runner_sends(page, table, words)
    page.get_by_role("button", name="Send for adjudication").click()


# -- the offline shell -------------------------------------------------------------------------------------------


def open_kiosk(page: Page, server: LiveServer) -> None:
    open_enrolled(page, server, "kiosk", token(server, "kiosk-1", Role.KIOSK))
    on_screen(page, "idle")


def open_runner(page: Page, server: LiveServer) -> None:
    open_enrolled(page, server, "runner", token(server, "runner-1", Role.RUNNER))
    on_screen(page, "entry")


def open_docket(page: Page, server: LiveServer) -> None:
    runner = token(server, "runner-1", Role.RUNNER)
    sent = httpx.post(
        f"{server.base}/api/challenges",
        headers={"Authorization": f"Bearer {runner}"},
        json={"division": "A", "table": "4", "round": 1, "words": "cat", "request_id": "docket-1"},
    )
    assert sent.status_code == 201, sent.text
    page.goto(f"{server.base}/runner")
    page.evaluate("token => localStorage.setItem('wordjudge.runner.token', token)", runner)
    page.goto(f"{server.base}/docket?id=1&size=58mm")
    expect(page.locator(".docket-verdict")).to_contain_text("ACCEPTABLE")


def kiosk_page(browser: Browser) -> Page:
    """A kiosk's screen, 1280x800."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def phone_page(browser: Browser) -> Page:
    return new_page(browser, "phone")


SHELLS: dict[str, tuple[Callable[[Browser], Page], Callable[[Page, LiveServer], None], Callable[[Page], None]]] = {
    # page: (its screen, how it is opened, what it shows once the server is back)
    "kiosk": (kiosk_page, open_kiosk, lambda page: on_screen(page, "idle")),
    "runner": (phone_page, open_runner, lambda page: on_screen(page, "entry")),
    "docket": (
        phone_page,
        open_docket,
        lambda page: expect(page.locator(".docket-verdict")).to_contain_text("ACCEPTABLE"),
    ),
}


@pytest.mark.parametrize("shell", list(SHELLS))
def test_a_page_reloaded_while_the_server_is_down_says_so_and_comes_back_by_itself(
    browser: Browser, server: LiveServer, shell: str
) -> None:
    screen, open_page, back = SHELLS[shell]
    page = screen(browser)
    open_page(page, server)
    shell_ready(page)
    server.stop()
    page.reload()  # the browser's own error page, without the shell
    expect(page.locator("#app")).to_contain_text(CANNOT_REACH)
    expect(page.locator("body")).not_to_contain_text(CHROMIUM_ERROR)
    expect(page.locator("button.division, #start")).to_have_count(0)  # no challenge can start
    # The shell never answers for the server: an API request fails, it is never served from a cache.
    assert page.evaluate("fetch('/api/health').then(() => 'answered', () => 'failed')") == "failed"
    screenshot(page, f"{shell}-offline-shell")
    server.start()  # on the same port: the page carries on by itself, nobody touches it
    back(page)
    expect(page.locator("body")).not_to_contain_text(CANNOT_REACH)
    version = asset_version()
    urls = cached_urls(page)
    assert list(urls) == [f"wordjudge-{version}"]
    (cached,) = urls.values()
    assert set(SHELL_PAGES) <= set(cached)
    assert all(url in SHELL_PAGES or url.startswith(f"/static/{version}/") for url in cached), cached
    assert not [url for url in cached if "/api/" in url]  # never an answer: no verdict, token or event
    page.context.close()


class InstalledCopy(LiveServer):
    """``wordjudge serve`` from a copy of the package (its client files too) in ``folder``: a release that a test
    can upgrade in place, as ``pip install`` of the next version would, and serve again on the same port."""

    def __init__(self, data_dir: Path, folder: Path) -> None:
        super().__init__(data_dir)
        self.package = folder / "wordjudge"
        shutil.copytree(
            Path(wordjudge.__file__).parent,
            self.package,
            ignore=shutil.ignore_patterns("__pycache__", "kiosk", "lexicons"),
        )
        shutil.copytree(WEB_DIR, self.web, ignore=shutil.ignore_patterns("__pycache__"))
        (self.package / "lexicons").symlink_to(Path(str(package_files.files("wordjudge.lexicons"))))

    @property
    def web(self) -> Path:
        return self.package / "kiosk"

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(self.package.parent), "WORDJUDGE_DATA_DIR": str(self.data_dir)}
        command = [sys.executable, "-m", "wordjudge", "serve", "--port", str(self.port), *self.extra]
        self.process = ServeProcess(command, env)
        wait_for_health(self.base, self.process)
        assert f"/static/{asset_version(self.web)}/" in httpx.get(f"{self.base}/runner").text  # the copy serves


def test_a_new_server_version_replaces_the_offline_shell_whole(
    browser: Browser, data_dir: Path, tmp_path: Path
) -> None:
    write_event(data_dir, [("A", "demo", "five-per-word")], name="Upgrade Open")
    server = InstalledCopy(data_dir, tmp_path / "release")
    old = asset_version(server.web)
    server.start()
    try:
        page = phone_page(browser)
        open_runner(page, server)
        shell_ready(page)
        assert list(cached_urls(page)) == [f"wordjudge-{old}"]
        server.stop()
        with (server.web / "shared" / "app.css").open("a") as css:
            css.write("\n/* the next release */\n")
        new = asset_version(server.web)
        assert new != old
        server.start()
        page.reload()  # the new version's page, and a new worker that fills its own cache and drops the old one
        on_screen(page, "entry")
        # The worker is updated after the page has loaded: it fills its cache (named from the start: the two names
        # are there while it fills) and then drops the old one. 15 s was too short once in CI's PostgreSQL pass, on
        # 2 loaded cores; the claim is the cache's content, not its speed. (Only the names: opening a cache makes it
        # again.)
        deadline = time.monotonic() + 45
        while (names := page.evaluate("caches.keys()")) != [f"wordjudge-{new}"]:
            assert time.monotonic() < deadline, names
            page.wait_for_timeout(200)
        cached = cached_urls(page)[f"wordjudge-{new}"]
        assert all(url in SHELL_PAGES or url.startswith(f"/static/{new}/") for url in cached), cached
        server.stop()
        page.reload()  # the shell now: all of the new version, nothing of the old
        expect(page.locator("#app")).to_contain_text(CANNOT_REACH)
        files = page.evaluate("[...document.querySelectorAll('script[src], link[href]')].map((e) => e.src || e.href)")
        assert files
        assert all(f"/static/{new}/" in url for url in files), files
        css = page.evaluate("fetch(document.querySelector('link[rel=stylesheet]').href).then((r) => r.text())")
        assert "the next release" in css
        page.context.close()
    finally:
        server.stop()


def test_the_kiosks_cards_cannot_start_a_challenge_while_the_server_is_unreachable(
    browser: Browser, server: LiveServer
) -> None:
    page = kiosk_page(browser)
    page.clock.install()
    open_kiosk(page, server)
    cards = page.locator("button.division")
    expect(cards).to_have_count(2)
    server.stop()
    page.clock.fast_forward(11_000)  # the kiosk checks every 10 s
    expect(page.locator("#server-state")).to_have_text(CANNOT_REACH)
    for card in cards.all():
        expect(card).to_be_disabled()
        expect(card).to_contain_text("Cannot reach the adjudication server: no challenge can start")
    screenshot(page, "kiosk-cards-server-down-1280x800")
    cards.first.click(force=True)
    page.keyboard.press("Enter")
    on_screen(page, "idle")  # not the challenger's screen
    server.start()
    page.clock.fast_forward(11_000)
    expect(page.locator("#server-state")).to_have_text("Server connected")
    expect(cards.first).to_be_enabled()
    cards.first.click()
    on_screen(page, "challenger")
    page.context.close()


# -- rate limits, revocation, a slip not sent --------------------------------------------------------------------


def seconds_left(page: Page) -> int:
    text = page.locator(".failure-message").inner_text()
    found = re.fullmatch(r"Too many challenges from this device in a minute: try again in (\d+) s", text)
    assert found, text
    return int(found.group(1))


def test_the_handhelds_rate_limit_wait_counts_down(browser: Browser, server: LiveServer) -> None:
    page = phone_page(browser)
    page.clock.install()
    open_runner(page, server)
    send_slip(page, "1")  # one a minute: the next is refused
    on_screen(page, "verdict")
    page.get_by_role("button", name="Next challenge").click()
    send_slip(page, "2")
    on_screen(page, "not-sent")
    expect(page.locator("h1")).to_have_text("Not sent yet: too many challenges in a minute")
    first = seconds_left(page)
    assert 50 <= first <= 61
    expect(page.locator("#retry")).to_be_disabled()
    screenshot(page, "runner-rate-limited-390x844")
    page.clock.run_for(3_000)  # every second's tick
    assert seconds_left(page) == first - 3
    page.clock.run_for((first - 3) * 1000)
    expect(page.locator(".failure-message")).to_have_text("The wait is over: you can try again")
    expect(page.locator("#retry")).to_be_enabled()
    assert len(server.records()) == 1
    page.context.close()


def test_the_kiosks_rate_limit_wait_counts_down(browser: Browser, server: LiveServer) -> None:
    page = kiosk_page(browser)
    page.clock.install()
    open_kiosk(page, server)
    for table in ("1", "2"):
        page.locator("button.division").first.click()
        page.get_by_label("Table").fill(table)
        page.get_by_label("Round").fill("1")
        page.get_by_label("Words").press_sequentially("cat")
        page.get_by_role("button", name="Done: hand over to the opponent").click()
        page.locator("#adjudicate").hover()
        page.mouse.down()
        page.wait_for_timeout(1_600)  # the hold (the kiosk asks 1.2 s)
        page.mouse.up()
        if table == "1":
            on_screen(page, "verdict")
            page.wait_for_timeout(600)  # the verdict ignores keys in its first half second: let it pass
            page.keyboard.press("Escape")
            on_screen(page, "idle")
    on_screen(page, "failure")
    first = seconds_left(page)
    expect(page.locator("#retry")).to_be_disabled()
    screenshot(page, "kiosk-rate-limited-1280x800")
    page.clock.run_for(2_000)  # every second's tick
    assert seconds_left(page) == first - 2
    page.clock.run_for((first - 2) * 1000)
    expect(page.locator(".failure-message")).to_have_text("The wait is over: you can try again")
    expect(page.locator("#retry")).to_be_enabled()
    page.context.close()


def test_a_revoked_handheld_is_told_it_was_revoked(browser: Browser, server: LiveServer) -> None:
    page = phone_page(browser)
    open_runner(page, server)
    send_slip(page, "3")
    on_screen(page, "verdict")
    td = td_headers(server.data_dir, "alice")
    httpx.post(f"{server.base}/api/devices/runner-1/revoke", headers=td).raise_for_status()
    page.get_by_role("button", name="Next challenge").click()
    on_screen(page, "pair")
    expect(page.locator("#pair-message")).to_have_text("This handheld is not paired or was revoked: call the TD")
    expect(page.locator("body")).not_to_contain_text("Cannot reach")
    page.context.close()


def test_a_slip_not_sent_goes_again_by_itself_when_the_server_is_back(browser: Browser, server: LiveServer) -> None:
    page = phone_page(browser)
    open_runner(page, server)
    runner_sends(page, "5", "cat dog")
    server.stop()
    page.get_by_role("button", name="Send for adjudication").click()
    on_screen(page, "not-sent")
    expect(page.locator(".failure-message")).to_have_text(CANNOT_REACH)
    expect(page.locator(".hint")).to_contain_text("sends it again by itself as soon as the connection is back")
    screenshot(page, "runner-not-sent-resends-390x844")
    assert server.records() == []
    server.start()  # the phone never lost its Wi-Fi: no "online" event, nobody presses Try again
    on_screen(page, "verdict")
    expect(page.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    (record,) = server.records()
    assert (record.table, record.words) == ("5", ("CAT", "DOG"))
    page.context.close()


# -- error lines ---------------------------------------------------------------------------------------------------


def start_kiosk_challenge(page: Page) -> None:
    page.locator("button.division").first.click()
    on_screen(page, "challenger")


@pytest.mark.parametrize("device", ["runner", "kiosk"])
def test_an_error_line_is_the_apps_own_and_goes_when_the_text_is_fixed(
    browser: Browser, server: LiveServer, device: str
) -> None:
    page = phone_page(browser) if device == "runner" else kiosk_page(browser)
    if device == "runner":
        open_runner(page, server)
        submit = page.get_by_role("button", name="Check the slip")
    else:
        open_kiosk(page, server)
        start_kiosk_challenge(page)
        submit = page.get_by_role("button", name="Done: hand over to the opponent")
    line = page.locator("#word-message")
    page.get_by_label("Words").fill("cat")
    page.get_by_label("Round").fill("2")
    submit.click()  # no table
    expect(line).to_have_text("Type the table number")
    table = page.get_by_label("Table")
    # The page's own line, not the browser's validation bubble ("Please fill out this field.").
    assert table.evaluate("input => input.validationMessage") == ""
    assert table.evaluate("input => input.form.checkValidity()") is True
    screenshot(page, f"{device}-missing-table")
    page.get_by_label("Words").fill("cat qi")  # not the table (one edit, no half-typed word): the line stays
    page.wait_for_timeout(300)  # lets the page react if it would: the line must not go
    expect(line).to_have_text("Type the table number")
    table.fill("7")  # fixed: the line goes at once (a passing message would stay 6 s)
    expect(line).to_have_text("", timeout=3_000)  # at once, not after a passing message's 6 s
    page.get_by_label("Words").fill("")
    submit.click()
    expect(line).to_have_text("Type at least one word")
    page.get_by_label("Words").press_sequentially("dog")
    expect(line).to_have_text("", timeout=3_000)  # at once, not after a passing message's 6 s
    page.context.close()


def test_the_servers_refusal_of_a_slip_goes_once_the_slip_is_edited(browser: Browser, server: LiveServer) -> None:
    page = phone_page(browser)
    open_runner(page, server)
    refusal = {"ok": False, "status": 422, "code": "invalid_input", "error": "words: DOG is refused", "details": {}}
    page.route("**/api/challenges", lambda route: route.fulfill(status=422, json=refusal))
    send_slip(page, "6", "cat dog")
    on_screen(page, "entry")  # back to the slip, as sent
    line = page.locator("#word-message")
    expect(line).to_have_text("words: DOG is refused")
    page.get_by_label("Round").fill("2")  # the same as sent: still refused
    page.wait_for_timeout(300)  # lets the page react if it would: the refusal must stay
    expect(line).to_have_text("words: DOG is refused")
    page.get_by_label("Words").press("Backspace")  # edited: the server will say again
    expect(line).to_have_text("", timeout=3_000)  # at once, not after a passing message's 6 s
    page.context.close()


# page: (its path, what it shows once its program has run)
STARTS = {
    "kiosk": ("/kiosk", "#app[data-screen]"),
    "handheld": ("/runner", "#app[data-screen]"),
    "docket": ("/docket", "#app .message"),  # no record named: it says so
    "console": ("/td", "#app[data-screen]"),
    "status": ("/", "#server-state:is(.ok, .warn)"),
}


@pytest.mark.parametrize("name", list(STARTS))
def test_a_page_whose_program_did_not_arrive_whole_starts_again_by_itself(
    browser: Browser, server: LiveServer, name: str
) -> None:
    """One of a program's files fails to arrive (as every request under way fails when the machine's network
    changes: Chromium's ERR_NETWORK_CHANGED, met in two whole checks while another check made its network
    namespaces): the page reloads by itself and starts, instead of showing its first line for ever."""
    path, shown = STARTS[name]
    page = new_page(browser)
    failed: list[str] = []

    def once(route: Route) -> None:  # the first ask of strings.js (every program imports it) fails
        if failed:
            route.continue_()
        else:
            failed.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/shared/strings.js", once)
    loads: list[str] = []
    page.on("load", lambda loaded: loads.append(loaded.url))
    page.goto(f"{server.base}{path}")
    expect(page.locator(shown)).to_have_count(1)
    assert failed, "the program's file was never asked for"
    assert len(loads) >= 2, loads  # the page it opened, then the reload that started
    page.context.close()
