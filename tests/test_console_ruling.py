"""The TD console's ruling form (issue 35 item 7): no verdict chosen for the TD, and a ruling that changes the final
verdict asks the TD to confirm in the page (never window.confirm, which a locked-down browser may block), naming the
change."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Dialog, expect

from .helpers import LiveServer
from .test_console_fit import SHOTS, console, long_words

pytestmark = pytest.mark.browser

__all__ = ["long_words"]  # the fixture, used here


def refuse_native_dialogs(dialog: Dialog) -> None:
    raise AssertionError(f"a native {dialog.type} dialog: {dialog.message}")


@pytest.mark.parametrize(("lang", "size"), [("en", "1366x768"), ("fr", "1440x900")])
def test_a_ruling_has_no_default_and_a_change_of_final_verdict_is_confirmed_in_the_page(
    browser: Browser, long_words: LiveServer, lang: str, size: str
) -> None:
    page = console(browser, long_words, size, lang)
    page.on("dialog", refuse_native_dialogs)
    written = len(long_words.records())
    page.locator("tr.record[data-id='6'] button.open-record").click()  # #6: UNACCEPTABLE, nothing linked
    expect(page.locator("#record-title")).to_contain_text("6")
    verdict = page.locator("#ruling-verdict")
    verdict.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"after-console-ruling-form-{lang}-{size}.png"))
    expect(verdict).to_have_value("")  # no verdict chosen for the TD
    submit = page.locator(".action-ruling button[type=submit]")

    # A note and the button, no verdict chosen: nothing is recorded, the form says what is missing.
    page.locator("#ruling-note").fill("the board")
    submit.click()
    expect(page.locator(".action-ruling .message")).not_to_be_empty()
    assert len(long_words.records()) == written

    # ACCEPTABLE reverses the final verdict: the page asks, naming the change; Cancel records nothing.
    verdict.select_option("acceptable")
    submit.click()
    dialog = page.locator("#ruling-dialog")
    expect(dialog).to_be_visible()
    said = {
        "en": "This changes the final verdict from ✗ UNACCEPTABLE to ✓ ACCEPTABLE. Confirm?",
        "fr": "Cette décision change le verdict final : de ✗ NON VALABLE à ✓ VALABLE. Confirmer ?",
    }[lang]
    expect(dialog.locator("#ruling-dialog-text")).to_have_text(said)
    expect(page.locator("#ruling-cancel")).to_be_focused()  # Enter on the dialog cancels
    page.screenshot(path=str(SHOTS / f"after-console-ruling-confirm-{lang}-{size}.png"))
    page.locator("#ruling-cancel").click()
    expect(dialog).to_have_count(0)
    assert len(long_words.records()) == written
    expect(page.locator("#ruling-verdict")).to_have_value("acceptable")  # the TD's choice is kept

    # Confirmed: recorded, answered, and the form starts again with no verdict chosen.
    submit.click()
    page.locator("#ruling-confirm").click()
    expect(page.locator(".action-ruling .answer")).to_contain_text(re.compile(r"\b11\b"))
    assert len(long_words.records()) == written + 1
    expect(page.locator("#ruling-verdict")).to_have_value("")

    # A ruling that keeps the final verdict (now ACCEPTABLE) changes nothing: no question.
    page.locator("#ruling-verdict").select_option("acceptable")
    page.locator("#ruling-note").fill("confirmed")
    page.locator(".action-ruling button[type=submit]").click()
    expect(page.locator(".action-ruling .answer")).to_contain_text(re.compile(r"\b12\b"))
    expect(page.locator("#ruling-dialog")).to_have_count(0)
    page.context.close()
