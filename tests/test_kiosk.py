"""The self-adjudication kiosk in a real browser (Debian's Chromium) against a live server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import APIResponse, Browser, Page, Route, expect

from wordjudge.model.auth import Role

from .browser import CHROMIUM, CHROMIUM_ARGS, fits, new_page, open_enrolled, screenshot, serving
from .helpers import PASSWORD, LiveServer, access_store, eventually, write_event

pytestmark = pytest.mark.browser

HOLD_S = 1.6  # longer than the kiosk's 1.2 s hold


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Kiosk Open", kiosk_result_seconds=5)
    with serving(data_dir) as live:
        yield live


def enrol(server: LiveServer, page: Page, name: str = "kiosk-1", division: str | None = None) -> None:
    """Enrol a kiosk as the TD would (a token from `wordjudge device add`) and open its page."""
    store = access_store(server.data_dir)
    try:
        token = store.devices.add(name, Role.KIOSK, division, by="test").token
    finally:
        store.close()
    open_enrolled(page, server, "kiosk", token)
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")


def on_screen(page: Page, name: str) -> None:
    expect(page.locator("#app")).to_have_attribute("data-screen", name)


def type_challenge(page: Page, table: str, words: str, round_number: str = "3") -> None:
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "challenger")
    page.get_by_label("Table").fill(table)
    page.get_by_label("Round").fill(round_number)
    page.get_by_label("Words").press_sequentially(words)


def hold_adjudicate(page: Page) -> None:
    button = page.locator("#adjudicate")
    button.hover()
    page.mouse.down()
    page.wait_for_timeout(HOLD_S * 1000)  # the hold itself: the time is what is tested
    page.mouse.up()


def adjudicate(page: Page, table: str, words: str) -> None:
    """The whole protocol: the challenger types, hands over, the opponent holds Adjudicate."""
    type_challenge(page, table, words)
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    hold_adjudicate(page)


def lose_the_first_response(page: Page) -> list[APIResponse]:
    """The server records the next challenge, and the kiosk never hears back; what the server said is kept."""
    lost: list[APIResponse] = []

    def lose(route: Route) -> None:
        if not lost:
            lost.append(route.fetch())
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/api/challenges", lose)
    return lost


@pytest.mark.parametrize("size", ["small", "large"])
def test_an_acceptable_challenge_through_every_screen(browser: Browser, server: LiveServer, size: str) -> None:
    page = new_page(browser, size)
    enrol(server, page)
    expect(page.locator("h1")).to_have_text("Kiosk Open")
    expect(page.locator(".lexicon-name")).to_have_text("DEMO")
    expect(page.locator(".lexicon-facts")).to_contain_text("172,820 words · word\u2011list ID b819e7b67f8f")
    expect(page.locator("#server-state")).to_have_text("Server connected")
    assert fits(page)
    screenshot(page, f"kiosk-idle-{size}")

    type_challenge(page, "12", "cat, dog")
    expect(page.locator(".tile-word")).to_have_count(2)
    expect(page.locator("#word-count")).to_have_text("2 words")
    assert fits(page)
    screenshot(page, f"kiosk-challenger-{size}")
    page.get_by_role("button", name="Done: hand over to the opponent").click()

    on_screen(page, "opponent")
    expect(page.locator(".check-words li")).to_have_text(["CAT", "DOG"])
    expect(page.locator(".table-round")).to_have_text("Table 12, round 3")
    assert fits(page)
    screenshot(page, f"kiosk-opponent-{size}")
    hold_adjudicate(page)

    on_screen(page, "verdict")
    verdict = page.locator(".verdict")
    expect(verdict.locator("h1")).to_have_text("ACCEPTABLE")
    expect(verdict.locator(".verdict-icon")).to_have_text("✓")
    expect(verdict).to_contain_text("2 words together · table 12 · round 3")
    expect(verdict).to_contain_text("Play stands: challenger loses 10 points (2 words x 5)")
    expect(verdict).to_contain_text("DEMO · word\u2011list ID b819e7b67f8f")
    expect(verdict).to_contain_text("Challenge #1")
    assert fits(page)
    screenshot(page, f"kiosk-verdict-acceptable-{size}")
    (record,) = server.records()
    assert (record.words, record.table, record.round, record.actor, record.channel) == (
        ("CAT", "DOG"),
        "12",
        3,
        "kiosk-1",
        "kiosk",
    )
    page.context.close()


def test_an_unacceptable_challenge_never_says_which_word(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser, "large")
    enrol(server, page)
    adjudicate(page, "4", "cat qi dog")
    on_screen(page, "verdict")
    verdict = page.locator(".verdict")
    expect(verdict.locator("h1")).to_have_text("UNACCEPTABLE")
    expect(verdict.locator(".verdict-icon")).to_have_text("✗")
    expect(verdict).to_contain_text("3 words together · table 4 · round 3")
    expect(verdict).to_contain_text("Play comes off: tiles back to the rack, no score for the turn")
    body = page.locator("body").inner_text()
    for word in ("CAT", "QI", "DOG"):
        assert word not in body
    screenshot(page, "kiosk-verdict-unacceptable-large")
    small = new_page(browser, "small")
    enrol(server, small, "kiosk-2")
    adjudicate(small, "5", "qi")
    expect(small.locator(".verdict h1")).to_have_text("UNACCEPTABLE")
    assert fits(small)
    screenshot(small, "kiosk-verdict-unacceptable-small")
    assert [str(r.verdict) for r in server.records()] == ["unacceptable", "unacceptable"]
    page.context.close()
    small.context.close()


def test_input_outside_the_rules_is_refused_as_typed(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    type_challenge(page, "7", "ca7t")
    words = page.get_by_label("Words")
    expect(words).to_have_value("cat")
    expect(page.locator("#word-message")).to_have_text("“7” is not a letter of DEMO")
    words.fill("")
    words.press_sequentially("aa bb cc dd ee ff gg hh ii")
    expect(words).to_have_value("aa bb cc dd ee ff gg hh ")
    expect(page.locator("#word-message")).to_have_text("A challenge has at most 8 words")
    words.fill("")
    words.press_sequentially("abcdefghijklmnopq")
    expect(words).to_have_value("abcdefghijklmno")
    expect(page.locator("#word-message")).to_have_text("A word has at most 15 letters")
    words.fill("cat a")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    expect(page.locator("#word-message")).to_have_text("Each word needs at least 2 letters")
    table = page.get_by_label("Table")
    table.fill("12; DROP")  # the event numbers its tables: refused as typed, the table typed before is kept
    expect(table).to_have_value("7")
    expect(page.locator("#word-message")).to_have_text("A table number has digits only: the words go in the Words box")
    table.fill("0")  # digits, and still no table number
    words.fill("cat")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    expect(page.locator("#word-message")).to_have_text("A table number is a whole number from 1 to 9999")
    expect(table).to_be_focused()  # the box at fault
    screenshot(page, "kiosk-refused-small")
    on_screen(page, "challenger")
    assert server.records() == []
    page.context.close()


def test_only_the_opponents_hold_executes(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    type_challenge(page, "9", "cat cat")
    done = page.get_by_role("button", name="Done: hand over to the opponent")
    done.focus()
    page.keyboard.down("Enter")  # the challenger presses Enter on Done and keeps it down
    on_screen(page, "opponent")
    expect(page.locator(".repeated")).to_have_text("CAT is typed 2 times")
    page.wait_for_timeout(HOLD_S * 1000)  # a hold's time on Done: it is not the adjudicate button's hold
    page.keyboard.up("Enter")
    page.locator("#adjudicate").click()  # a plain click is not a hold
    page.locator("#adjudicate").focus()
    page.keyboard.press("Enter")  # nor a key tap
    page.wait_for_timeout(HOLD_S * 1000)  # time passes as long as a hold: nothing is sent
    on_screen(page, "opponent")
    assert server.records() == []
    page.get_by_role("button", name="Back").click()
    on_screen(page, "challenger")
    expect(page.get_by_label("Words")).to_have_value("cat cat")  # Back keeps the words for correcting
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    page.wait_for_timeout(500)  # past the new screen's guard on keys (400 ms), as a player's hands come
    page.locator("#adjudicate").focus()
    page.keyboard.down(" ")  # keyboard-only: the opponent holds Space on the button
    page.wait_for_timeout(HOLD_S * 1000)  # the hold itself: the time is what is tested
    page.keyboard.up(" ")
    on_screen(page, "verdict")
    assert len(server.records()) == 1
    page.context.close()


def test_the_verdict_clears_and_leaves_nothing_behind(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    adjudicate(page, "3", "cat dog")
    on_screen(page, "verdict")
    page.keyboard.press("x")  # within the first half second: ignored
    on_screen(page, "verdict")
    expect(page.locator(".clears")).to_have_text(re.compile(r"Clears in [1-5] s"))
    page.wait_for_timeout(600)  # the verdict ignores keys in its first half second: let it pass
    page.keyboard.press("x")
    on_screen(page, "idle")
    assert "CAT" not in page.content()
    # On its own, after the event's kiosk_result_seconds (5 s here).
    adjudicate(page, "3", "emu")
    on_screen(page, "verdict")
    page.go_back()  # no way back into an old verdict
    on_screen(page, "idle")
    adjudicate(page, "3", "gnu")
    on_screen(page, "verdict")
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")  # by itself, after 5 s
    on_screen(page, "idle")
    assert "GNU" not in page.content().upper().replace("GNU GENERAL", "")
    assert page.evaluate("getSelection().toString()") == ""
    page.context.close()


def test_abandoned_input_clears_after_30_seconds(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    page.clock.install()
    enrol(server, page)
    type_challenge(page, "3", "cat dog")
    page.clock.fast_forward(20_000)
    on_screen(page, "challenger")
    page.get_by_label("Words").press_sequentially(" emu")  # typing restarts the count
    page.clock.fast_forward(20_000)
    on_screen(page, "challenger")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    on_screen(page, "opponent")
    page.clock.fast_forward(31_000)
    on_screen(page, "idle")
    assert "EMU" not in page.content()
    assert server.records() == []
    page.context.close()


def no_verdict_for_want_of_the_server(browser: Browser, server: LiveServer) -> Page:
    """A kiosk whose challenge (table 21: CAT DOG) finds the server stopped: its "No verdict" screen."""
    page = new_page(browser)
    enrol(server, page)
    type_challenge(page, "21", "cat dog")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    server.stop()
    hold_adjudicate(page)
    on_screen(page, "failure")
    return page


def test_server_down_mid_flow_then_back_makes_one_record(browser: Browser, server: LiveServer) -> None:
    page = no_verdict_for_want_of_the_server(browser, server)
    expect(page.locator(".failure-message")).to_have_text("Cannot reach the adjudication server: call the TD")
    expect(page.locator("body")).not_to_contain_text("ACCEPTABLE")
    screenshot(page, "kiosk-failure-small")
    # The players press Try again before the kiosk's own look (its health check) sees the server back.
    page.route("**/api/health", lambda route: route.abort())
    server.start()
    page.get_by_role("button", name="Try again").click()
    on_screen(page, "verdict")
    expect(page.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    assert len(server.records()) == 1
    page.context.close()


def test_the_no_verdict_screen_sends_again_by_itself_once_the_server_is_back(
    browser: Browser, server: LiveServer
) -> None:
    """Before, it waited for someone to press Try again (issue 35, item 9); the handheld already resent by itself."""
    page = no_verdict_for_want_of_the_server(browser, server)
    expect(page.locator(".hint")).to_contain_text("again by itself as soon as the server answers")
    server.start()  # nobody presses Try again
    expect(page.locator("#app")).to_have_attribute("data-screen", "verdict")
    expect(page.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    (record,) = server.records()
    assert (record.table, record.words) == ("21", ("CAT", "DOG"))
    page.context.close()


def test_a_lost_response_retried_gives_the_same_verdict_and_one_record(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    lost = lose_the_first_response(page)
    adjudicate(page, "8", "cat dog")
    on_screen(page, "failure")
    assert len(server.records()) == 1
    assert lost[0].status == 201
    page.route("**/api/health", lambda route: route.abort())  # Try again, before the kiosk's own look does
    page.get_by_role("button", name="Try again").click()
    on_screen(page, "verdict")
    expect(page.locator(".verdict")).to_contain_text("already adjudicated: same result")
    assert len(server.records()) == 1
    page.context.close()


def test_an_unpaired_kiosk_is_refused_until_it_pairs(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    page.goto(f"{server.base}/kiosk")
    on_screen(page, "pair")
    expect(page.locator("h1")).to_have_text("This kiosk is not paired")
    screenshot(page, "kiosk-pair-small")
    page.get_by_label("Pairing code").fill("AAAA-BBBB-CC")
    page.get_by_role("button", name="Pair this kiosk").click()
    expect(page.locator("#pair-message")).to_have_text("unknown pairing code: check it, or ask the TD for a new one")
    store = access_store(server.data_dir)
    code = store.pairing.create_code(Role.KIOSK, None, "Hall A", by="test").code
    store.close()
    page.context.close()
    page = new_page(browser)
    page.goto(f"{server.base}/kiosk#pair={code}")  # the QR code's link, opened by a camera app
    expect(page.get_by_label("Pairing code")).to_have_value(code)
    page.get_by_role("button", name="Pair this kiosk").click()
    on_screen(page, "idle")
    assert "pair=" not in page.url
    # Its proof key (issue 44): handed at pairing and kept beside its token; made from the hall key, never stored.
    from wordjudge.hall.proof import digest, read_key

    token, kept = page.evaluate("() => ['token', 'proof-key'].map((k) => localStorage.getItem(`wordjudge.kiosk.${k}`))")
    hall_key = read_key(server.data_dir)
    assert hall_key is not None
    assert kept == hall_key.proof_key("device", digest(token))
    # Revoked by the TD: the next challenge is refused, and the kiosk asks to be enrolled again.
    store = access_store(server.data_dir)
    store.devices.revoke("Hall A", by="test")
    store.close()
    adjudicate(page, "1", "cat")
    on_screen(page, "pair")
    expect(page.locator("#pair-message")).to_have_text("This kiosk is not paired or was revoked: call the TD")
    assert server.records() == []
    page.context.close()


def test_settings_open_only_for_a_td(browser: Browser, server: LiveServer) -> None:
    write_event(server.data_dir, [("A", "demo", "single"), ("B", "demo", "double")], name="Two Divisions")
    server.stop()
    server.start()
    store = access_store(server.data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    store.close()
    page = new_page(browser)
    enrol(server, page)
    expect(page.locator("button.division")).to_have_count(2)  # the challenger picks the division
    screenshot(page, "kiosk-idle-divisions-small")
    page.get_by_role("button", name="TD settings").click()
    on_screen(page, "td-login")
    page.get_by_label("TD name").fill("alice")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Open settings").click()
    expect(page.locator(".td-login .message")).to_have_text("wrong TD name or password")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Open settings").click()
    on_screen(page, "settings")
    page.get_by_label("B: DEMO").check()
    screenshot(page, "kiosk-settings-small")
    page.get_by_role("button", name="Close").click()
    on_screen(page, "idle")
    expect(page.locator(".division-name")).to_have_text("Division B")
    page.get_by_role("button", name="TD settings").click()
    page.get_by_label("TD name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Open settings").click()
    page.get_by_role("button", name="Forget this kiosk's pairing").click()
    on_screen(page, "pair")
    page.context.close()


def test_the_deploy_launcher_opens_the_kiosk_in_chromium(server: LiveServer, tmp_path: Path) -> None:
    launcher = Path(__file__).resolve().parent.parent / "deploy" / "kiosk-chromium.sh"
    done = subprocess.run(
        [str(launcher), server.base, *CHROMIUM_ARGS, "--virtual-time-budget=5000", "--dump-dom"],
        env={
            **os.environ,
            "WORDJUDGE_KIOSK_PROFILE": str(tmp_path / "profile"),
            "WORDJUDGE_CHROMIUM": str(CHROMIUM),
            # No lock-down policy here (tests/test_kiosk_lockdown.py has it), and --dump-dom ends Chromium.
            "WORDJUDGE_KIOSK_UNLOCKED": "1",
            "WORDJUDGE_KIOSK_RESTART": "0",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert 'data-screen="pair"' in done.stdout  # the page ran: an unenrolled kiosk asks for its code
    assert "This kiosk is not paired" in done.stdout
    assert (tmp_path / "profile").is_dir()  # a persistent profile keeps the enrolment


def test_a_whole_challenge_by_keyboard_alone(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    enrol(server, page)
    page.keyboard.press("Enter")  # the start control has the focus
    on_screen(page, "challenger")
    page.keyboard.insert_text("cat\ndog")  # the words first; a new line (pasted) separates words too
    page.keyboard.press("Tab")
    page.keyboard.type("5")
    page.keyboard.press("Tab")
    page.keyboard.type("2")
    page.keyboard.press("Tab")  # Done
    page.keyboard.press("Enter")
    on_screen(page, "opponent")
    expect(page.locator(".check-words li")).to_have_text(["CAT", "DOG"])
    expect(page.locator("#adjudicate")).to_be_focused()  # the opponent's hands go straight to the hold
    page.wait_for_timeout(500)  # the opponent reads the words
    page.keyboard.down(" ")
    page.wait_for_timeout(HOLD_S * 1000)  # the hold itself: the time is what is tested
    page.keyboard.up(" ")
    on_screen(page, "verdict")
    page.wait_for_timeout(600)  # the verdict ignores keys in its first half second: let it pass
    page.keyboard.press("Escape")
    on_screen(page, "idle")
    (record,) = server.records()
    assert (record.table, record.round, record.words) == ("5", 2, ("CAT", "DOG"))
    page.context.close()


def test_an_idle_kiosk_notices_its_revocation(browser: Browser, server: LiveServer) -> None:
    page = new_page(browser)
    page.clock.install()
    enrol(server, page, "kiosk-9")
    store = access_store(server.data_dir)
    # Seen from another process (as `wordjudge device list` sees it): the server writes last-seen times once
    # a second, off the request path.
    eventually(lambda: store.devices.get("kiosk-9").online, "the kiosk seen online from another process", seconds=30)
    assert store.devices.get("kiosk-9").online is True
    store.devices.revoke("kiosk-9", by="test")
    store.close()
    page.clock.fast_forward(11_000)  # the kiosk checks every 10 s
    on_screen(page, "pair")
    expect(page.locator("#pair-message")).to_have_text("This kiosk is not paired or was revoked: call the TD")
    page.context.close()


def test_an_idle_kiosk_shows_the_tds_event_changes(browser: Browser, server: LiveServer) -> None:
    store = access_store(server.data_dir)
    store.tds.add("alice", PASSWORD, by="test")
    session = store.tds.login("alice", PASSWORD, client="test")
    store.close()
    page = new_page(browser)
    page.clock.install()
    enrol(server, page)
    event = {
        "name": "Renamed Open",
        "rounds": True,
        "challenges_per_minute": 6,
        "kiosk_result_seconds": 10,
        "division": [
            {"name": "A", "lexicon": "demo", "rule": "single"},
            {"name": "B", "lexicon": "demo", "rule": "double"},
        ],
    }
    changed = httpx.put(
        f"{server.base}/api/event",
        json=event,
        headers={"Cookie": f"wordjudge_session={session.token}", "X-CSRF-Token": session.csrf_token},
    )
    assert changed.status_code == 200, changed.text
    page.clock.fast_forward(11_000)
    expect(page.locator("h1")).to_have_text("Renamed Open")
    expect(page.locator("button.division")).to_have_count(2)
    page.context.close()


def test_a_kiosk_refused_for_a_new_address_keeps_its_enrolment_until_the_td_accepts(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser)
    page.clock.install()
    enrol(server, page, "kiosk-7")
    # The kiosk was re-plugged and has a new address: to the server, its token now comes from elsewhere.
    store = access_store(server.data_dir)
    with store.database.write() as db:
        db.execute("UPDATE devices SET bound_client = '10.9.9.9' WHERE name = 'kiosk-7'")
    store.close()
    page.clock.fast_forward(11_000)  # the kiosk checks every 10 s
    on_screen(page, "down")
    expect(page.locator("h1")).to_contain_text("network address changed: call the TD")
    screenshot(page, "kiosk-moved-small")
    assert page.evaluate("localStorage.getItem('wordjudge.kiosk.token')")  # kept: it may only have moved
    store = access_store(server.data_dir)
    assert store.devices.get("kiosk-7").moved_to == "127.0.0.1"
    assert [a.kind for a in store.alerts.latest()] == ["device_moved"]
    store.devices.accept_move("kiosk-7", "127.0.0.1", by="alice")  # the TD's one click
    store.close()
    page.clock.fast_forward(4_000)  # it tries again by itself
    on_screen(page, "idle")
    page.context.close()


def test_a_challenge_left_without_a_clear_answer_is_settled_before_the_next_one(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser)
    enrol(server, page)
    lost = lose_the_first_response(page)
    adjudicate(page, "8", "cat qzx")
    assert lost[0].status == 201  # recorded, unheard
    on_screen(page, "failure")
    page.get_by_role("button", name="Leave it for now").click()  # the players give up and go back ...
    on_screen(page, "idle")
    page.reload()  # ... and even a reload keeps the request pending
    on_screen(page, "idle")
    page.get_by_role("button", name="Start a challenge").click()  # ... to type the same challenge again
    on_screen(page, "verdict")  # but first the kiosk asks the server: it was recorded, and this is its verdict
    expect(page.locator(".verdict h1")).to_have_text("UNACCEPTABLE")
    expect(page.locator(".settled-note")).to_contain_text("The last challenge (table 8, round 3) got no clear answer")
    screenshot(page, "kiosk-settled-small")
    page.wait_for_timeout(700)  # a verdict ignores keys in its first half second
    page.keyboard.press("Escape")
    on_screen(page, "idle")
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "challenger")  # settled: a new challenge may start
    assert len(server.records()) == 1  # the same challenge was never recorded twice
    page.context.close()


def test_a_challenge_that_never_reached_the_server_is_dropped_once_the_server_says_so(
    browser: Browser, server: LiveServer
) -> None:
    page = new_page(browser)
    enrol(server, page)
    page.route("**/api/challenges", lambda route: route.abort("connectionreset"))  # never sent
    adjudicate(page, "9", "cat dog")
    on_screen(page, "failure")
    page.get_by_role("button", name="Leave it for now").click()
    page.unroute("**/api/challenges")
    server.stop()  # and the server cannot be asked: no new challenge until it can
    page.get_by_role("button", name="Start a challenge").click()
    on_screen(page, "unsettled")
    expect(page.locator(".failure-message")).to_contain_text("table 9, round 3")
    server.start()
    page.get_by_role("button", name="Try again").click()
    on_screen(page, "challenger")  # the server said: never recorded
    assert server.records() == []
    page.context.close()


@pytest.mark.sqlite_only("two servers at once, each with a folder of its own, would share the test's one database")
def test_a_kiosk_facing_another_server_keeps_its_enrolment_and_recovers(
    browser: Browser, server: LiveServer, tmp_path: Path, compiled_demo: Path
) -> None:
    page = new_page(browser)
    page.clock.install()
    enrol(server, page, "kiosk-3")
    # The TD starts wordjudge from the wrong folder, on the same port: a server that does not know this kiosk.
    server.stop()
    wrong = LiveServer(tmp_path / "wrong-folder")
    shutil.copytree(compiled_demo, wrong.data_dir / "lexicons" / "demo")
    wrong.port, wrong.base = server.port, server.base
    wrong.start()
    page.clock.fast_forward(11_000)  # the kiosk checks every 10 s: a 401, from another server
    on_screen(page, "elsewhere")
    expect(page.locator("h1")).to_have_text(
        "This is not the server this device was paired with (event Kiosk Open): call the TD"
    )
    screenshot(page, "kiosk-other-server-small")
    assert page.evaluate("localStorage.getItem('wordjudge.kiosk.token')")  # kept
    wrong.stop()
    server.start()  # its own server is back
    page.clock.fast_forward(6_000)
    on_screen(page, "idle")
    expect(page.locator("h1")).to_have_text("Kiosk Open")
    page.context.close()
