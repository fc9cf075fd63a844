"""The first screens a device or a TD meets (issue 35, item 9).

Before: a kiosk or handheld never paired, and the console's sign-in on a new browser, stayed English on a French
event (nothing they may read before pairing or signing in said the event's language: the health check did not).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, expect

from .browser import new_page, serving
from .helpers import LiveServer, write_event

pytestmark = pytest.mark.browser


@pytest.fixture
def french(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("A", "demo", "five-per-word")], name="Open de Paris", language="fr")
    with serving(data_dir) as live:
        yield live


def test_the_health_check_says_the_events_language(french: LiveServer) -> None:
    body = httpx.get(f"{french.base}/api/health", timeout=30).json()
    assert body["language"] == "fr"


@pytest.mark.parametrize(
    ("path", "size", "heading"),
    [
        ("/kiosk", "small", "Cette borne n’est pas appairée"),
        ("/runner", "phone", "Ce terminal n’est pas appairé"),
        ("/td", "desktop", "Console de l’arbitre : connexion"),
    ],
)
def test_a_browser_that_never_saw_the_event_speaks_its_language_from_the_first_screen(
    french: LiveServer, browser: Browser, path: str, size: str, heading: str
) -> None:
    """A new browser (no language remembered): the pairing screens and the console's sign-in are French."""
    page = new_page(browser, size)
    page.goto(f"{french.base}{path}")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("#app h1").first).to_have_text(heading)
    page.context.close()
