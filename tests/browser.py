"""Browser-test support: a live ``wordjudge serve`` and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from wordjudge.audit import AUDIT_FILE, AuditLog
from wordjudge.records import Record, RecordFilter

from .conftest import PASSWORD, access_store
from .test_app import _free_port, _serve, wait_for_health

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and nothing that reaches for the internet (the machine's network is closed).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SCREENSHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"
SIZES = {"small": (1024, 600), "large": (1920, 1080), "phone": (390, 844), "desktop": (1440, 900)}


class LiveServer:
    """``wordjudge serve`` on a free loopback port, which a test may stop and start again."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = _serve(self.data_dir, "--port", str(self.port), "--log-level", "warning")
        wait_for_health(self.base, self.process)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.communicate(timeout=30)
            self.process = None

    def records(self) -> list[Record]:
        log = AuditLog(self.data_dir / AUDIT_FILE)
        try:
            return list(reversed(log.find(RecordFilter(), limit=1000)))
        finally:
            log.close()


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


def open_enrolled(page: Page, server: LiveServer, role: str, token: str) -> None:
    """Open the ``role`` page (kiosk, runner) on ``page`` as a device enrolled with ``token``, as after pairing."""
    page.goto(f"{server.base}/{role}")
    page.evaluate("([key, token]) => localStorage.setItem(key, token)", [f"wordjudge.{role}.token", token])
    page.goto(f"{server.base}/{role}")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/check installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def new_page(browser: Browser, size: str = "small") -> Page:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


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
