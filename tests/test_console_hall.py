"""The TD console in a hall (issue 17 items 3, 5 and 6), in a real browser against a live server: nothing waits
unseen (the rulings queue and its count in the tab bar, new feed rows, devices that fall silent), pairing a hall
from one printed A4 sheet and pairing a device again, and the reports a TD prints."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from click.testing import CliRunner
from playwright.sync_api import Browser, Dialog, Page, expect
from pypdf import PdfReader

from wordjudge.cli.main import main
from wordjudge.model.auth import Role

from .browser import PAGE_WAIT_MS, SCREENSHOTS, drawn, screenshot, serving
from .helpers import PASSWORD, LiveServer, device_headers, td_headers, write_event, write_list

pytestmark = pytest.mark.browser

A4_POINTS = (595, 842)  # 210 x 297 mm
DPI = 150  # an office printer's draft; the codes are 44 mm wide
MM = 72 / 25.4  # points a millimetre
SIZES = {"1440x900": (1440, 900), "1280x720": (1280, 720)}
REFRESHED = 12_000  # ms: lists refresh every 5 s (kiosk/console/live.js REFRESH_MS), on a machine that may be slow


@pytest.fixture
def server(data_dir: Path, tmp_path: Path) -> Iterator[LiveServer]:
    write_event(
        data_dir,
        [("Open", "demo", "five-per-word"), ("Premier", "demo", "double")],
        name="Hall Open",
        challenges_per_minute=0,
    )
    errata = write_list(tmp_path / "errata.txt", ["QI"])
    added = CliRunner().invoke(
        main, ["profile", "add", "demo-qi", "--base", "demo", "--additions", str(errata), "--data-dir", str(data_dir)]
    )
    assert added.exit_code == 0, added.output
    with serving(data_dir, tds=("alice",)) as live:
        yield live


def console(browser: Browser, server: LiveServer, size: str = "1440x900") -> Page:
    width, height = SIZES[size]
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    page.goto(f"{server.base}/td")
    page.get_by_label("TD name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "overview")
    return page


def send(server: LiveServer, headers: dict[str, str], words: str, table: int = 1, **fields: Any) -> int:
    body = {"division": "Open", "table": table, "round": 1, "words": words, "request_id": uuid.uuid4().hex, **fields}
    response = httpx.post(f"{server.base}/api/challenges", json=body, headers=headers)
    assert response.status_code == 201, response.text
    record_id: int = response.json()["id"]
    return record_id


def serve_errata(server: LiveServer, td: dict[str, str]) -> None:
    """The TD serves the amended list (QI is valid) in Open: a re-check of a QI challenge now disagrees."""
    event = httpx.get(f"{server.base}/api/event", headers=td).json()
    body = {
        "name": event["name"],
        "rounds": True,
        "challenges_per_minute": 0,
        "kiosk_result_seconds": 10,
        "confirm": True,  # a lexicon changed mid-event (test_event_changes.py)
        "division": [
            {"name": "Open", "lexicon": "demo-qi", "rule": "five-per-word"},
            {"name": "Premier", "lexicon": "demo", "rule": "double"},
        ],
    }
    assert httpx.put(f"{server.base}/api/event", json=body, headers=td).status_code == 200


def act(server: LiveServer, td: dict[str, str], record_id: int, action: str, **body: Any) -> int:
    body["request_id"] = uuid.uuid4().hex
    response = httpx.post(f"{server.base}/api/challenges/{record_id}/{action}", json=body, headers=td)
    assert response.status_code == 201, response.text
    created: int = response.json()["id"]
    return created


def shots(page: Page, name: str) -> None:
    """Screenshots at both console sizes, for a person to look at."""
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        drawn(page)
        screenshot(page, f"{name}-{size}")


def tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    message = f"{name} is missing: apt-get install {package} (.ci/check installs it)"
    if os.environ.get("CI") or os.getuid() == 0:
        pytest.fail(message)
    pytest.skip(message)


# -- item 3: nothing waits unseen ------------------------------------------------------------------------


def test_a_challenge_waiting_for_a_ruling_is_queued_on_the_overview_and_counted_in_the_tab_bar(
    browser: Browser, server: LiveServer
) -> None:
    kiosk = device_headers(server.data_dir, "table-kiosk", Role.KIOSK)
    bob = td_headers(server.data_dir, "bob")
    first = send(server, kiosk, "cat qi", table=7)  # QI is not in the demo list: UNACCEPTABLE
    page = console(browser, server)
    expect(page.locator("#no-rulings")).to_have_text("No challenge waits for a ruling")
    expect(page.locator("#ruling-count")).to_be_hidden()
    # Errata arrive and another TD re-checks at a table: the console, untouched, hears of it within seconds.
    serve_errata(server, bob)
    recheck = act(server, bob, first, "recheck", note="errata")
    expect(page.locator("#ruling-count")).to_have_text("1 to rule", timeout=REFRESHED)
    item = page.locator(f".ruling-item[data-id='{first}']")
    expect(item).to_contain_text("Open, table 7, round 1")
    expect(item).to_contain_text("CAT QI")
    expect(item).to_contain_text(f"re-check #{recheck} gave ACCEPTABLE, the challenge UNACCEPTABLE")
    expect(page.locator("li.alert-needs_ruling")).to_contain_text(
        f"re-check #{recheck} of challenge #{first}", timeout=REFRESHED
    )
    # The count is in the tab bar whatever tab is shown.
    page.locator("#tab-summary").click()
    expect(page.locator("#ruling-count")).to_have_text("1 to rule")
    page.locator("#tab-overview").click()
    shots(page, "console-rulings-queue")
    # The TD opens it from the queue and rules there: the queue and the count empty themselves.
    page.get_by_role("button", name=f"Open record #{first}").click()
    expect(page.locator(".record-view .needs-ruling")).to_be_visible()
    page.locator("#ruling-verdict").select_option("acceptable")
    page.locator("#ruling-note").fill("errata: QI is valid")
    page.get_by_role("button", name="Record a ruling").last.click()
    expect(page.locator("#no-rulings")).to_be_visible()
    expect(page.locator("#ruling-count")).to_be_hidden()
    page.context.close()


def test_new_feed_rows_are_marked_and_those_out_of_sight_are_counted_until_seen(
    browser: Browser, server: LiveServer
) -> None:
    kiosk = device_headers(server.data_dir, "table-kiosk", Role.KIOSK)
    for table in range(1, 41):
        send(server, kiosk, "cat", table=table)
    page = console(browser, server, "1280x720")
    page.locator("#tab-feed").click()
    expect(page.locator("tr.record")).to_have_count(40)
    expect(page.locator(".live")).to_have_text("Live: new adjudications appear at the top")
    expect(page.locator("tr.record.fresh")).to_have_count(0)  # what was there already is not news
    # A new record in sight: marked for a few seconds, nothing counted.
    new = send(server, kiosk, "dog", table=41)
    row = page.locator(f"tr.record[data-id='{new}']")
    expect(row).to_have_class(re.compile(r"\bfresh\b"))
    expect(page.locator("#unseen-count")).to_be_hidden()
    expect(row).not_to_have_class(re.compile(r"\bfresh\b"))
    # The TD has scrolled down the list: new records are counted until they are brought into sight.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    later = [send(server, kiosk, "qat", table=42), send(server, kiosk, "za", table=43)]
    expect(page.locator("#unseen-count")).to_have_text("2 new records: show")
    assert page.title().startswith("(2) ")  # seen from another window's tab too
    expect(page.locator(f"tr.record[data-id='{later[1]}']")).to_have_class(re.compile(r"\bfresh\b"))
    screenshot(page, "console-feed-unseen-1280x720")
    page.locator("#unseen-count").click()
    expect(page.locator("#unseen-count")).to_be_hidden()
    assert not page.title().startswith("(")
    page.context.close()


def test_the_device_list_refreshes_itself_and_a_silent_kiosk_shows_offline_since_it_was_last_heard(
    browser: Browser, server: LiveServer
) -> None:
    kiosk = device_headers(server.data_dir, "kiosk-05", Role.KIOSK, "Open")
    assert httpx.get(f"{server.base}/api/event", headers=kiosk).status_code == 200  # heard: online
    page = console(browser, server)
    state = page.locator("tr").filter(has_text="kiosk-05").locator("td").nth(5)
    expect(state).to_have_text("online")
    # A kiosk paired meanwhile appears, and shows online once it is heard from, without a click.
    late = device_headers(server.data_dir, "kiosk-06", Role.KIOSK, "Open")
    late_state = page.locator("tr").filter(has_text="kiosk-06").locator("td").nth(5)
    expect(late_state).to_have_text("not seen yet", timeout=REFRESHED)
    assert httpx.get(f"{server.base}/api/event", headers=late).status_code == 200
    expect(late_state).to_have_text("online", timeout=REFRESHED)
    # kiosk-05 falls silent: 30 s later it is offline since it was last heard, and the TD is alerted.
    heard = next(
        d
        for d in httpx.get(f"{server.base}/api/devices", headers=td_headers(server.data_dir, "bob")).json()["devices"]
        if d["name"] == "kiosk-05"
    )["last_seen_at"]
    since = page.evaluate(
        "(iso) => new Intl.DateTimeFormat('en-GB', {hour: '2-digit', minute: '2-digit', hourCycle: 'h23'})"
        ".format(new Date(iso))",
        heard,
    )
    expect(state).to_have_text(f"offline since {since}", timeout=45_000)
    expect(page.locator("li.alert-device_offline")).to_contain_text(
        "kiosk-05 has not been heard from since", timeout=REFRESHED
    )
    page.locator("#tab-devices").click()
    row = page.locator("#device-list tr").filter(has_text="kiosk-05")
    expect(row).to_contain_text(f"offline since {since}")
    shots(page, "console-devices-offline")
    page.context.close()
    assert datetime.fromisoformat(heard)  # the time shown is the last-heard time the server gives


# -- item 5: pairing a hall ------------------------------------------------------------------------------


def card_crops(pdf: Path, names: list[str]) -> dict[str, str]:
    """Each device's card on the printed sheet, read back: the text of the QR code printed beside its name.

    pdftotext finds each name on the paper; the QR code is the square to its left on the same card
    (kiosk/console/print.css: 4 mm padding, a 44 mm code, 3 mm gap), cut out at :data:`DPI` by pdftoppm and read by zbarimg.
    """
    pdftotext, pdftoppm, zbarimg = (
        tool(t, p)
        for t, p in (("pdftotext", "poppler-utils"), ("pdftoppm", "poppler-utils"), ("zbarimg", "zbar-tools"))
    )
    bbox = subprocess.run([pdftotext, "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    found: dict[str, tuple[int, float, float]] = {}
    for number, page in enumerate(bbox.split("<page ")[1:], start=1):
        for x, y, word in re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]+)</word>', page):
            if word in names:
                found[word] = (number, float(x), float(y))
    assert sorted(found) == sorted(names), bbox
    decoded = {}
    for name, (number, x, y) in found.items():
        left, top = (x - 53 * MM) * DPI / 72, (y - 6 * MM) * DPI / 72
        size = 52 * MM * DPI / 72
        stem = pdf.with_name(f"card-{name}")
        subprocess.run(
            [
                pdftoppm,
                "-r",
                str(DPI),
                "-f",
                str(number),
                "-l",
                str(number),
                "-x",
                str(int(left)),
                "-y",
                str(int(top)),
                "-W",
                str(int(size)),
                "-H",
                str(int(size)),
                "-png",
                "-singlefile",
                str(pdf),
                str(stem),
            ],
            check=True,
        )
        read = subprocess.run(
            [zbarimg, "--quiet", "--raw", str(stem.with_suffix(".png"))], capture_output=True, text=True
        )
        assert read.returncode == 0, f"no QR code beside {name} on page {number}: {read.stderr}"
        decoded[name] = read.stdout.strip()
    return decoded


def test_a_hall_is_paired_from_one_printed_a4_sheet_and_every_code_stays_listed(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    page = console(browser, server)
    page.locator("#tab-devices").click()
    # One code first, for a runner: it stays listed when more are made.
    page.get_by_label("Role").select_option("runner")
    page.get_by_label("Name (optional)").fill("Runner Ann")
    page.get_by_role("button", name="Create a pairing code").click()
    expect(page.locator(".code-card")).to_have_count(1)
    # The hall: kiosk-01..kiosk-12, Open for all but kiosk-03 (Premier).
    page.locator("#hall-prefix").fill("kiosk-")
    page.locator("#hall-from").fill("1")
    page.locator("#hall-to").fill("12")
    expect(page.locator("#hall-names")).to_have_text("kiosk-01 to kiosk-12: 12 devices")
    page.get_by_label("Division for all").select_option("Open")
    page.locator(".hall-each summary").click()
    page.get_by_label("Division of kiosk-03").select_option("Premier")
    page.get_by_role("button", name="Create 12 pairing codes").click()
    expect(page.locator(".code-card")).to_have_count(13)
    expect(page.locator(".code-card").filter(has_text="Runner Ann")).to_have_count(1)  # not replaced
    expect(page.locator(".code-card").first).to_contain_text("kiosk-01")  # the newest answer first, in its order
    expect(page.locator(".code-card").filter(has_text="kiosk-03")).to_contain_text("kiosk · Premier")
    shots(page, "console-hall-codes")
    # The sheet: 13 cards, 8 to an A4 page, each with its name, code and the QR code of its pairing link.
    page.get_by_role("button", name="Print the sheet (13 codes)").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "pairing-sheet")
    cards = page.locator(".sheet-card")
    expect(cards).to_have_count(13)
    expect(page.locator(".sheet-page")).to_have_count(2)
    shown = {
        card.get_attribute("data-name") or "": (
            card.locator(".sheet-code").inner_text(),
            card.locator(".sheet-link").inner_text(),
        )
        for card in cards.all()
    }
    assert list(shown)[:3] == ["Runner Ann", "kiosk-01", "kiosk-02"]  # in the order they were made
    shots(page, "console-pairing-sheet")
    pdf = tmp_path / "sheet.pdf"
    pdf.write_bytes(page.pdf(prefer_css_page_size=True))
    reader = PdfReader(io.BytesIO(pdf.read_bytes()))
    assert len(reader.pages) == 2
    assert all((round(float(p.mediabox.width)), round(float(p.mediabox.height))) == A4_POINTS for p in reader.pages)
    text = " ".join(p.extract_text() for p in reader.pages)
    assert "Print" not in text.replace("Print the sheet", "")  # the page's buttons stay off the paper
    assert "Cut along the dashed lines" in text
    names = [name for name in shown if name.startswith("kiosk-")]
    decoded = card_crops(pdf, names)
    for name in names:
        code, link = shown[name]
        assert decoded[name] == link == f"{server.base}/kiosk#pair={code}", name
        assert code in text
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "pairing-sheet-decoded.txt").write_text(
        "".join(f"{name}\t{decoded[name]}\n" for name in names), "utf-8"
    )
    # Each printed code pairs its own device, in its division.
    kiosk03 = decoded["kiosk-03"].rsplit("#pair=", 1)[1]
    enrolled = httpx.post(f"{server.base}/api/enrol", json={"code": kiosk03}).json()["device"]
    assert (enrolled["name"], enrolled["division"], enrolled["role"]) == ("kiosk-03", "Premier", "kiosk")
    page.get_by_role("button", name="Back to the console").click()
    expect(page.locator(".code-card")).to_have_count(13)  # still listed
    page.context.close()


def test_the_td_revokes_and_re_pairs_a_kiosk_from_the_device_list(browser: Browser, server: LiveServer) -> None:
    old = device_headers(server.data_dir, "kiosk-07", Role.KIOSK, "Premier")
    assert httpx.get(f"{server.base}/api/event", headers=old).status_code == 200
    page = console(browser, server)
    page.locator("#tab-devices").click()
    row = page.locator("tr").filter(has_text="kiosk-07")
    expect(row).to_contain_text("online")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke kiosk-07").click()
    expect(row).to_contain_text("revoked (alice)")
    # A replacement kiosk: the TD re-pairs kiosk-07 from the same list.
    messages: list[str] = []

    def confirm(dialog: Dialog) -> None:
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", confirm)
    page.get_by_role("button", name="Re-pair kiosk-07").click()
    card = page.locator(".code-card").filter(has_text="kiosk-07")
    expect(card).to_contain_text("(re-pair)")
    expect(card).to_contain_text("kiosk · Premier")
    assert "token kiosk-07 holds now stops working" in messages[0]
    code = card.locator(".pairing-code").inner_text().split()[1].rstrip(",")
    shots(page, "console-re-pair")
    enrolled = httpx.post(f"{server.base}/api/enrol", json={"code": code})
    assert enrolled.status_code == 201, enrolled.text
    new = {"Authorization": f"Bearer {enrolled.json()['token']}"}
    assert httpx.get(f"{server.base}/api/event", headers=new).status_code == 200
    assert httpx.get(f"{server.base}/api/event", headers=old).status_code == 401  # the old token stopped
    expect(row).to_contain_text("online", timeout=REFRESHED)  # the list says so by itself: no longer revoked
    expect(row.get_by_role("button", name="Revoke kiosk-07")).to_be_visible()
    page.context.close()


# -- item 6: reports a TD prints -------------------------------------------------------------------------


def test_a_round_report_per_division_and_the_feed_print_on_a4_with_final_verdicts(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    kiosk = device_headers(server.data_dir, "table-kiosk", Role.KIOSK)
    bob = td_headers(server.data_dir, "bob")
    carol = td_headers(server.data_dir, "carol")
    qi = [send(server, kiosk, "cat qi", table=t) for t in (1, 2)]  # UNACCEPTABLE on the demo list
    send(server, kiosk, "cat", table=3)
    send(server, kiosk, "dog qat", table=4, round=2)
    send(server, kiosk, "za", table=5, division="Premier")
    serve_errata(server, bob)
    act(server, bob, qi[0], "recheck")  # disagrees: waits for a ruling
    act(server, bob, qi[1], "recheck")
    ruling = act(server, carol, qi[1], "ruling", verdict="acceptable", note="errata")
    page = console(browser, server)
    page.locator("#tab-summary").click()
    # The bars say what they measure.
    whole = page.locator("table.summary tr").filter(has_text="Whole event")
    expect(whole.locator("td.chart .bar-label")).to_have_text("5 challenges")
    expect(whole.locator("td.share .bar-label")).to_have_text(re.compile(r"^\d+% acceptable$"))
    headers = page.locator("table.summary th")
    expect(headers.nth(3)).to_have_text("Share acceptable")
    expect(headers.nth(6)).to_have_text("Challenges, against the whole event")
    page.get_by_label("Division").select_option("Open")
    page.get_by_label("Round").select_option("1")
    shots(page, "console-summary-report-form")
    href = page.locator("#report-link").get_attribute("href")
    assert href == "/td?print=report&division=Open&round=1"
    page.goto(f"{server.base}{href}")
    expect(page.locator("#report-title")).to_have_text("Round report: division Open, round 1")
    facts = {"challenges": "3", "acceptable": "2", "unacceptable": "0", "awaiting": "1", "changed": "2"}
    for key, value in facts.items():
        expect(page.locator(f"#report-{key}")).to_have_text(value)
    expect(page.locator(".report-pending tr.pending")).to_have_count(1)
    expect(page.locator(f".report-pending tr[data-id='{qi[0]}']")).to_contain_text("the TD rules on it")
    expect(page.locator(f".report-list tr[data-id='{qi[1]}'] td.final")).to_have_text(
        f"✓ ACCEPTABLE · ruled ACCEPTABLE by the TD (carol), #{ruling}"
    )
    expect(page.locator("#report-words")).to_contain_text("CAT (3), QI (2)")
    shots(page, "console-round-report")
    pdf = PdfReader(io.BytesIO(page.pdf(prefer_css_page_size=True)))
    assert (round(float(pdf.pages[0].mediabox.width)), round(float(pdf.pages[0].mediabox.height))) == A4_POINTS
    text = " ".join(p.extract_text() for p in pdf.pages)
    for expected in (
        "Hall Open",
        "Round report: division Open, round 1",
        "Rulings pending",
        "Most challenged words",
        f"ruled ACCEPTABLE by the TD (carol), #{ruling}",
        "Final verdict ACCEPTABLE",
    ):
        assert expected in text, (expected, text)
    assert "Back to the console" not in text  # the page's buttons stay off the paper
    expect(page.locator(".results, .word-ok, .word-bad")).to_have_count(0)  # never per-word results on paper
    # The feed's print view, as filtered.
    page.goto(f"{server.base}/td")
    page.locator("#tab-feed").click()
    page.locator("#filter-round").fill("2")
    page.get_by_role("button", name="Apply").click()
    link = page.get_by_role("link", name="Print view")
    expect(link).to_have_attribute("href", "/td?print=feed&round=2")
    page.goto(f"{server.base}/td?print=feed&round=2")
    expect(page.locator("#report-title")).to_have_text("Records of the live feed")
    expect(page.locator("#feed-count")).to_have_text("1 record · Round: 2")
    expect(page.locator(".report-list tbody tr")).to_have_count(1)
    expect(page.locator(".report-list tbody tr")).to_contain_text("DOG QAT")
    page.goto(f"{server.base}/td?print=feed")
    # 5 challenges, 2 re-checks, a ruling, and the errata's lexicon change (what changed, no verdict)
    expect(page.locator(".report-list tbody tr")).to_have_count(9)
    expect(page.locator(".report-list tbody tr").filter(has_text="Open: lexicon demo -> demo-qi")).to_have_count(1)
    expect(page.locator(f".report-list tr[data-id='{qi[0]}'] td.final")).to_contain_text("the TD rules on it")
    shots(page, "console-feed-print")
    page.context.close()


def test_a_report_says_no_round_for_a_challenge_made_without_one(browser: Browser, server: LiveServer) -> None:
    td = td_headers(server.data_dir, "bob")
    event = httpx.get(f"{server.base}/api/event", headers=td).json()
    body = {
        "name": event["name"],
        "rounds": False,
        "challenges_per_minute": 0,
        "kiosk_result_seconds": 10,
        "division": [{"name": d["name"], "lexicon": d["lexicon"], "rule": d["rule"]} for d in event["divisions"]],
    }
    assert httpx.put(f"{server.base}/api/event", json=body, headers=td).status_code == 200
    kiosk = device_headers(server.data_dir, "table-kiosk", Role.KIOSK)
    send(server, kiosk, "cat", table=9, round=None)
    page = console(browser, server)
    page.locator("#tab-summary").click()
    expect(page.locator("table.summary")).to_contain_text("Open, no round")
    page.goto(f"{server.base}/td?print=report&division=Open")
    expect(page.locator("#report-title")).to_have_text("Report: division Open, every round")
    expect(page.locator(".report-list tbody tr td").nth(3)).to_have_text("no round")
    page.context.close()
