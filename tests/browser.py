"""Browser-test support: a live ``wordjudge serve`` and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Frame, Page, Request, expect, sync_playwright

from wordjudge.hall.proof import digest, read_key

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
# How long a page's action or a test's expectation waits for what it waits for: sized for a loaded 2-core machine
# (two whole checks side by side, the PostgreSQL pass among them: a console's sign-in form took more than 10 s, and
# Playwright's own 5 s for an expectation). A page that never gets there still fails, later.
PAGE_WAIT_MS = 30_000
expect.set_options(timeout=PAGE_WAIT_MS)


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


def open_enrolled(page: Page, server: LiveServer, role: str, token: str, *, proof_key: bool = True) -> None:
    """Open the ``role`` page (kiosk, runner) on ``page`` as a device enrolled with ``token``, as after pairing
    (:func:`enrol`; ``proof_key=False``: the token alone)."""
    page.goto(f"{server.base}/{role}")
    # A screen of its own (pairing, if it holds no token yet): shown once the page speaks the event's language (it
    # may reload into it first).
    expect(page.locator("#app[data-screen]")).to_have_count(1)
    enrol(page, server, role, token, proof_key=proof_key)
    page.goto(f"{server.base}/{role}")


def enrol(page: Page, server: LiveServer, role: str, token: str, *, proof_key: bool = True) -> None:
    """Keep in ``page``'s storage what pairing leaves a ``role`` device: ``token`` and the proof key the server hands
    with it (made here as the server makes it, from the data folder's hall key). ``proof_key=False``: the token
    alone, as a device paired before servers handed out keys holds it, which learns its key from its own server.

    (Until issue 47's run 45 the tests' devices held the token alone: a page in a hall whose first request failed
    before its server handed it the key could then have no server prove itself, and said "call the TD" for good.)"""
    kept = {f"wordjudge.{role}.token": token}
    hall_key = read_key(server.data_dir) if proof_key else None
    if hall_key is not None:
        kept[f"wordjudge.{role}.proof-key"] = hall_key.proof_key("device", digest(token))
    page.evaluate("(kept) => Object.entries(kept).forEach(([key, value]) => localStorage.setItem(key, value))", kept)


def shell_ready(page: Page, seconds: float = 90) -> None:
    """Wait until the page's offline shell is in place: its service worker activated, so its cache of this version
    is complete (the install fills it whole or fails) and the next navigation (a reload) goes through it.

    Not that the worker controls this very page: a worker that activates while the page is being navigated
    (open_enrolled opens the page twice) claims no page, and this one stays uncontrolled until its next load,
    which the shell then answers. In two whole .ci/check runs on 2026-11-28 the worker was "activated", its cache
    filled, and the page uncontrolled 90 s on (never in a run of the browser tests alone: the server measured
    by coverage answers more slowly, so the second navigation is under way longer).
    """
    state = page.evaluate(
        """(ms) => Promise.race([
            navigator.serviceWorker.ready.then((registration) => {
                const worker = registration.active;
                if (worker.state === "activated") return "activated";
                return new Promise((done) => worker.addEventListener("statechange", () => done(worker.state)));
            }),
            new Promise((done) => setTimeout(() => done("no worker activated"), ms)),
        ])""",
        seconds * 1000,
    )
    assert state == "activated", f"{page.url}: the offline shell is not in place after {seconds} s: {state}"


def runner_sends(runner: Page, table: str, words: str) -> None:
    """On the handheld's entry screen: type a slip (table, round 2, words) and go to its check screen."""
    runner.get_by_label("Table").fill(table)
    runner.get_by_label("Round").fill("2")
    runner.get_by_label("Words").press_sequentially(words)
    runner.get_by_role("button", name="Check the slip").click()
    expect(runner.locator("#app")).to_have_attribute("data-screen", "confirm")


# Debian's chromium obeys the managed policies in this folder, for every profile on the machine: where
# deploy/kiosk-setup.sh has locked a kiosk's Chromium down to its server's origin, every page the tests open is
# blocked, and Playwright says only "Cannot read properties of undefined (reading '_page')". The browser tests'
# Chromium sees an empty folder here instead, in a private mount namespace; the machine's is left as it is.
POLICIES = Path("/etc/chromium/policies")


def managed_policies() -> list[Path]:
    """The managed Chromium policies installed on this machine (deploy/kiosk-setup.sh writes one)."""
    return sorted((POLICIES / "managed").glob("*.json"))


def _unshare() -> list[str]:
    """A private mount namespace: as root, or in a user namespace of its own (where the kernel allows it)."""
    mount = ["--mount", "--propagation", "private"]
    return ["unshare", *mount] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", *mount]


def _without_policies(empty: Path, *command: str) -> list[str]:
    """``command`` in a private mount namespace whose ``/etc/chromium/policies`` is the empty folder ``empty``."""
    script = f'mount --bind "$0" {shlex.quote(str(POLICIES))} && exec "$@"'
    return [*_unshare(), "sh", "-c", script, str(empty), *command]


@functools.cache
def policies_hidden() -> str | None:
    """None if the browser tests can give Chromium an empty policy folder here, else why they cannot."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is missing"
    with tempfile.TemporaryDirectory() as empty:
        probe = [*_without_policies(Path(empty), "sh", "-c", f"! ls {shlex.quote(str(POLICIES))}/managed/*.json")]
        tried = subprocess.run(probe, capture_output=True, text=True, check=False)
    return None if tried.returncode == 0 else f"a private mount namespace fails here: {tried.stderr.strip()}"


def pytest_report_header() -> str | None:
    found = managed_policies()
    if not found:
        return None
    names = ", ".join(map(str, found))
    why_not = policies_hidden()
    if why_not is None:
        return f"chromium: managed policy {names} (a kiosk lock-down?) hidden from the browser tests' Chromium"
    return (
        f"chromium: managed policy {names} (deploy/kiosk-setup.sh's kiosk lock-down?) is in force and blocks the "
        f"browser tests' pages ({why_not}): run them as root, or remove it while they run"
    )


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Debian's Chromium, started once for the session (see :func:`browser` for a test's use of it)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/check installs it)")
    executable = CHROMIUM
    found = managed_policies()
    if found and policies_hidden() is None:  # Chromium started by a script that hides them first
        folder = tmp_path_factory.mktemp("chromium")
        (folder / "no-policies").mkdir()
        executable = folder / "chromium"
        command = shlex.join(_without_policies(folder / "no-policies", str(CHROMIUM)))
        executable.write_text(f'#!/bin/sh\n# {CHROMIUM} without {POLICIES} (tests/browser.py)\nexec {command} "$@"\n')
        executable.chmod(0o755)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        if found and executable == CHROMIUM:
            try:  # a page, which the kiosk's lock-down refuses: fail saying why, not with Playwright's riddle
                context = launched.new_context()
                context.new_page()
                context.close()
            except Exception as exc:
                launched.close()
                pytest.fail(
                    f"a managed Chromium policy is installed ({', '.join(map(str, found))}: deploy/kiosk-setup.sh's "
                    f"kiosk lock-down?) and Chromium opens no page under it ({policies_hidden()}): {exc}"
                )
        yield launched
        launched.close()


@pytest.fixture
def browser(chromium: Browser, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Browser]:
    """The session's Chromium; every context (and page) the test opened is closed after it.

    Left open, a whole run's pages (each still polling its own long-gone server) pile up in the one browser. Late
    in three whole .ci/check runs (2026-11-27/28, never in a run of the browser tests alone) a new page's service
    worker did not take control within 90 s; those hundreds of open pages are the one thing such runs differ in.
    """
    before = set(chromium.contexts)
    stories = request.node.stash.setdefault(STORIES, [])
    new_context, new_page = chromium.new_context, chromium.new_page

    def context_told(*args: Any, **kwargs: Any) -> BrowserContext:
        context = new_context(*args, **kwargs)
        context.on("page", lambda page: stories.append(PageStory(page)))
        return context

    def page_told(*args: Any, **kwargs: Any) -> Page:
        page = new_page(*args, **kwargs)
        stories.append(PageStory(page))
        return page

    # Every page the test opens has its story (told in the test's report if it fails), however it was opened.
    monkeypatch.setattr(chromium, "new_context", context_told)
    monkeypatch.setattr(chromium, "new_page", page_told)
    yield chromium
    for context in chromium.contexts:
        if context not in before:
            context.close()
    stories.clear()  # told already if the test failed; the closed pages are let go with them


class PageStory:
    """What a page did (its loads, requests, answers, console lines and errors, each with its time), told when an
    expectation on it fails: a page that never showed what was awaited says why (a whole check on a loaded machine
    once met a runner page with no screen after 30 s, and nothing else to go on). It listens from its creation for
    the page's life; the ``browser`` fixture gives every page a test opens one, told in the report of a failed test.
    """

    def __init__(self, page: Page) -> None:
        self.page = page
        self.started = time.monotonic()
        self.lines: list[str] = []
        heard: list[tuple[str, Callable[..., None]]] = [
            ("framenavigated", self._navigated),
            ("load", lambda _: self.note("load")),
            ("console", lambda message: self.note(f"console.{message.type}: {message.text}")),
            ("pageerror", lambda error: self.note(f"page error: {error}")),
            ("request", lambda request: self.note(f"-> {request.method} {request.url}")),
            ("response", lambda response: self.note(f"<- {response.url} {response.status}")),
            ("requestfailed", lambda request: self.note(f"<- {request.url} FAILED {request.failure}")),
            ("close", lambda _: self.note("closed")),
        ]
        for event, listener in heard:
            page.on(event, listener)  # type: ignore[call-overload]  # Playwright types each event's listener apart

    def _navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            self.note(f"navigated {frame.url}")

    def note(self, what: str) -> None:
        self.lines.append(f"{time.monotonic() - self.started:7.2f} s  {what}")

    def told(self) -> str:
        """Where the page is now (its address, how far it loaded, the start of its screen) and what it did."""
        try:
            now = self.page.evaluate(
                "() => `${location.href} ${document.readyState} ` + "
                "(document.getElementById('app')?.outerHTML ?? '(no #app)').slice(0, 300)"
            )
        except Exception as gone:  # a page mid-navigation or closed: said instead
            now = f"(the page could not be read: {gone})"
        return f"the page now: {now}\nwhat it did:\n" + "\n".join(self.lines[-80:])


# The stories of the pages a test opened through the ``browser`` fixture, told in its report if it fails.
STORIES = pytest.StashKey[list[PageStory]]()


def told_sections(item: pytest.Item) -> list[tuple[str, str]]:
    """The report sections of ``item``'s pages: each page's story, titled with its number and address."""
    stories: list[PageStory] = item.stash.get(STORIES, [])  # none: the test opened no browser
    return [(f"page {number} of the test ({story.page.url})", story.told()) for number, story in enumerate(stories, 1)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    # A browser test that fails says what each of its pages did: a wait that ran out on a loaded machine, met once
    # in a whole check and never again, is understood from the report alone.
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        report.sections.extend(told_sections(item))


def new_page(browser: Browser, size: str = "small") -> Page:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def reload_noting(page: Page, part: str = "/api/") -> list[str]:
    """Reload ``page`` and return the list of the URLs holding ``part`` that the reloaded document requests, in
    the order made; the list grows as the page goes on. Until the new document is in place the old one still runs
    (a poll of its own after a reload is asked, even after the page's file is asked for): what it requests then is
    not the reloaded page's, so the list begins at the main frame's first navigation."""
    made: list[str] = []
    arrived = False

    def noted(request: Request) -> None:
        if arrived and part in request.url:
            made.append(request.url)

    def navigated(frame: Frame) -> None:
        nonlocal arrived
        arrived = arrived or frame == page.main_frame

    page.on("request", noted)
    page.on("framenavigated", navigated)
    page.reload()
    return made


def drawn(page: Page) -> None:
    """Wait until the page has drawn what was just changed (a scroll, a new window size): two frames later."""
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


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
