"""The runner's handheld, dockets and the TD console in a real browser (Debian's Chromium), live server."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner
from playwright.sync_api import Browser, Page, expect
from pypdf import PdfReader

from wordjudge.base.errors import DeviceMoved
from wordjudge.cli.main import main
from wordjudge.model.auth import Role

from .browser import fits, new_page, runner_sends, screenshot, serving
from .helpers import PASSWORD, LiveServer, access_store, write_event, write_list

pytestmark = pytest.mark.browser


@pytest.fixture
def server(data_dir: Path, tmp_path: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Console Open", challenges_per_minute=0)
    errata = write_list(tmp_path / "errata.txt", ["QI"])
    added = CliRunner().invoke(
        main, ["profile", "add", "demo-qi", "--base", "demo", "--additions", str(errata), "--data-dir", str(data_dir)]
    )
    assert added.exit_code == 0, added.output
    with serving(data_dir, tds=("alice", "bob")) as live:
        yield live


def sign_in(page: Page, server: LiveServer, name: str) -> None:
    page.goto(f"{server.base}/td")
    page.get_by_label("TD name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "overview")


def tab(page: Page, name: str) -> None:
    page.get_by_role("button", name=name, exact=True).click()


def test_runner_docket_and_td_console_end_to_end(browser: Browser, server: LiveServer) -> None:
    console = new_page(browser, "desktop")
    sign_in(console, server, "alice")
    expect(console.locator("table").first).to_contain_text("matches ENABLE (172,820 words)")
    server_id = httpx.get(f"{server.base}/api/health").json()["server_id"]
    expect(console.locator("#server-id")).to_contain_text(server_id)  # the data folder's identity, as health says
    screenshot(console, "console-overview-1440x900")

    # The TD enrols a runner with a pairing code.
    tab(console, "Devices and accounts")
    console.get_by_label("Role").select_option("runner")
    console.get_by_label("Name (optional)").fill("Runner Ann")
    console.get_by_role("button", name="Create a pairing code").click()
    expect(console.locator(".pairing-code")).to_contain_text("Code ")
    code = console.locator(".pairing-code").inner_text().split()[1].rstrip(",")
    expect(console.locator(".pairing-result svg")).to_be_visible()
    screenshot(console, "console-devices-1440x900")

    runner = new_page(browser, "phone")
    runner.goto(f"{server.base}/runner")
    runner.get_by_label("Pairing code").fill(code)
    runner.get_by_role("button", name="Pair this handheld").click()
    expect(runner.locator("#app")).to_have_attribute("data-screen", "entry")
    expect(runner.locator(".hint").first).to_have_text("Paired as Runner Ann")
    screenshot(runner, "runner-entry-390x844")

    tab(console, "Live feed")
    expect(console.locator(".live")).to_have_text("Live: new adjudications appear at the top")

    # The runner adjudicates a slip: CAT QI (QI is not in the demo list).
    runner_sends(runner, "7", "cat qi")
    expect(runner.locator(".check-words li")).to_have_text(["CAT", "QI"])
    screenshot(runner, "runner-confirm-390x844")
    runner.get_by_role("button", name="Send for adjudication").click()
    expect(runner.locator(".verdict h1")).to_have_text("UNACCEPTABLE")
    expect(runner.locator(".verdict")).to_contain_text("CAT QI")
    expect(runner.locator(".verdict")).to_contain_text("Play comes off")
    assert fits(runner)
    screenshot(runner, "runner-verdict-390x844")

    # The TD sees it live, with the per-word results (here only).
    row = console.locator("tr.record").first
    expect(row).to_contain_text("Runner Ann")
    expect(row).to_contain_text("QI ✗")
    screenshot(console, "console-feed-1440x900")

    # The runner prints a docket: a PDF from the browser, read back.
    runner.get_by_role("link", name="Print docket").click()
    expect(runner.locator(".docket-verdict")).to_contain_text("UNACCEPTABLE")
    screenshot(runner, "runner-docket-390x844")
    pdf = PdfReader(io.BytesIO(runner.pdf(prefer_css_page_size=True)))
    # Lines joined: a code stands on a line of its own under its label (List ID, then b819e7b67f8f).
    text = " ".join(" ".join(page.extract_text().splitlines()) for page in pdf.pages)
    for expected in (
        "UNACCEPTABLE",
        "Console Open",
        "Open",
        "Table",
        "7",
        "Round",
        "2",
        "CAT QI (2 words)",
        "DEMO",
        "List ID b819e7b67f8f",
        "#1",
        "Play comes off",
    ):
        assert expected in text, (expected, text)
    assert "QI ✗" not in text  # the slip's words, never a result each (test_docket.py)
    assert round(float(pdf.pages[0].mediabox.width) / 72 * 25.4) == 80  # 80 mm paper

    # Errata arrive: the TD serves the amended list, re-checks (as someone other than the runner),
    # the re-check disagrees, and the TD rules.
    tab(console, "Event settings")
    console.locator(".division-lexicon").select_option("demo-qi")
    console.get_by_role("button", name="Save and serve").click()
    # Mid-event (a challenge is on record): the lexicon change is confirmed in a dialog naming it.
    expect(console.locator("#change-dialog")).to_contain_text("Open: lexicon demo -> demo-qi")
    console.get_by_role("button", name="Make these changes").click()
    expect(console.locator(".event-form ~ .ok, p.ok")).to_have_text("Event saved and served")
    tab(console, "Live feed")
    console.get_by_role("button", name="#1", exact=True).click()
    expect(console.locator("#record-title")).to_have_text("Record #1")
    console.get_by_label("Note").first.fill("player asked")
    console.get_by_role("button", name="Re-check (same words)").last.click()
    expect(console.locator(".record-view .needs-ruling")).to_have_text("The re-check disagrees: a TD ruling is needed")
    screenshot(console, "console-record-1440x900")
    console.locator("#reissue-words").fill("cat qis")
    console.locator("#reissue-reason").fill("the board shows QIS")
    console.get_by_role("button", name="Reissue with corrected words").last.click()
    expect(console.locator(".action-reissue .answer")).to_have_text("Reissue recorded as #4: CAT QIS ✗ UNACCEPTABLE")
    console.locator("#ruling-verdict").select_option("acceptable")
    console.locator("#ruling-note").fill("errata: QI is valid; play stands")
    console.get_by_role("button", name="Record a ruling").last.click()
    console.locator("#ruling-confirm").click()  # the ruling changes the final verdict: confirmed in the page
    expect(console.locator(".action-ruling .answer")).to_have_text(
        "Ruling recorded as #5: ✓ ACCEPTABLE, the final verdict"
    )
    expect(console.locator("#final-verdict")).to_contain_text("ruled ACCEPTABLE by alice, #5")
    expect(console.locator(".record-view .needs-ruling")).to_have_count(0)
    records = server.records()
    assert [(r.kind.value, r.actor, r.parent_id) for r in records] == [
        ("challenge", "Runner Ann", None),
        ("change", "alice", None),  # the lexicon change, on the record
        ("recheck", "alice", 1),
        ("reissue", "alice", 1),
        ("ruling", "alice", 1),
    ]
    assert records[1].change == {
        "what": "division.lexicon",
        "subject": "Open",
        "before": {"lexicon": "demo"},
        "after": {"lexicon": "demo-qi"},
    }
    assert records[2].agrees is False
    assert str(records[3].verdict) == "unacceptable"  # QIS is in neither list

    # The TD revokes the runner, whose next request fails.
    tab(console, "Devices and accounts")
    console.once("dialog", lambda dialog: dialog.accept())
    console.get_by_role("button", name="Revoke Runner Ann").click()
    expect(console.locator("td.state-revoked")).to_contain_text("revoked (alice)")
    runner.goto(f"{server.base}/runner")
    expect(runner.locator("#app")).to_have_attribute("data-screen", "pair")
    expect(runner.locator("#pair-message")).to_have_text("This handheld is not paired or was revoked: call the TD")

    tab(console, "Summary")
    expect(console.locator("table.summary")).to_contain_text("Whole event")
    screenshot(console, "console-summary-1440x900")
    console.context.close()
    runner.context.close()


def test_the_td_accepts_a_devices_move_from_the_alert_in_one_click(browser: Browser, server: LiveServer) -> None:
    store = access_store(server.data_dir)
    try:
        token = store.devices.add("kiosk-5", Role.KIOSK, by="test").token
        store.devices.authenticate(token, client="10.0.0.5")
        with pytest.raises(DeviceMoved):
            store.devices.authenticate(token, client="10.0.0.6")  # re-plugged: a new address
    finally:
        store.close()
    page = new_page(browser, "desktop")
    sign_in(page, server, "alice")
    alert = page.locator("li.alert-device_moved")
    expect(alert).to_contain_text("kiosk-5's token was used from 10.0.0.6, not from 10.0.0.5")
    expect(page.locator("td").filter(has_text="refused from 10.0.0.6")).to_have_count(1)
    screenshot(page, "console-device-moved-desktop")
    page.once("dialog", lambda dialog: dialog.accept())
    alert.get_by_role("button", name="Accept move kiosk-5").click()
    expect(page.locator("td").filter(has_text="refused from 10.0.0.6")).to_have_count(0)
    store = access_store(server.data_dir)
    try:
        assert store.devices.get("kiosk-5").bound_client == "10.0.0.6"
        assert store.devices.authenticate(token, client="10.0.0.6").actor == "kiosk-5"
    finally:
        store.close()
    page.context.close()
