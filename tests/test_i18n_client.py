"""Every word the web clients say comes from the catalogue (kiosk/locales/<lang>.json), in the event's
language: the French catalogue is complete, every screen walked in the pseudo-language shows only
catalogue text and data, and the words and the console's accessibility of issue 16 item 8."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, Page, Request, Route, expect

from wordjudge.model.auth import Role

from .browser import new_page, serving
from .helpers import PASSWORD, LiveServer, access_store, device_headers, td_headers, write_event
from .screen_walk import DIVISIONS, EVENT, HANDHELD, KIOSK, TDS, TOKEN, Walk, axe_violations, walk_every_screen

LOCALES = Path(__file__).resolve().parent.parent / "kiosk" / "locales"
EVIDENCE = Path("/work/helpers/evidence/i18n-client")
AXE_RESULTS = Path(__file__).resolve().parent.parent / "build" / "axe"  # what axe-core found, screen by screen
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
PSEUDO_LETTERS = set("àƀçďèƒĝĥìĵķľɱñòþʠŕšţùṽŵẋýžÀƁÇĎÈƑĜĤÌĴĶĽṀÑÒÞǪŔŠŢÙṼŴẊÝŽ")


def catalogue(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((LOCALES / f"{lang}.json").read_text("utf-8"))
    return data


def placeholders(value: str | dict[str, str]) -> set[str]:
    texts = [value] if isinstance(value, str) else list(value.values())
    return {name for text in texts for name in PLACEHOLDER.findall(text)}


# -- the catalogues ---------------------------------------------------------------------------------------


def test_the_french_catalogue_has_every_english_key_with_the_same_placeholders() -> None:
    en, fr = catalogue("en"), catalogue("fr")
    assert sorted(en) == list(en), "en.json: keys are sorted"
    assert sorted(fr) == list(fr), "fr.json: keys are sorted"
    assert set(en) - set(fr) == set(), "keys English has and French lacks"
    assert set(fr) - set(en) == set(), "keys French has and English lacks"
    for key, value in en.items():
        assert placeholders(fr[key]) == placeholders(value), key
        assert type(fr[key]) is type(value), f"{key}: a plural in one language is a plural in the other"
        if isinstance(value, dict):
            assert set(value) == set(fr[key]) == {"one", "other"}, key
            assert "n" in placeholders(value) or key == "ui.verdictLine.words", f"{key}: a plural chosen by n shows n"
        text = fr[key] if isinstance(fr[key], str) else fr[key]["other"]
        assert text.strip(), f"{key}: no French text"
    # The clients' keys are ui.* (and role.*); the server's, beside them, error.*, rule.*, consequence.*,
    # verdict.*, chain.*, cli.*, change.*, time.* and role.* (tests/test_messages.py).
    namespaces = ("ui.", "role.", "error.", "rule.", "consequence.", "verdict.", "chain.", "cli.", "change.", "time.")
    assert all(key.startswith(namespaces) for key in en), "every key is in one of the catalogue's namespaces"


# -- the screen walk in the pseudo-language -------------------------------------------------------------


@pytest.fixture
def walk_server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(
        data_dir,
        [(DIVISIONS[0], "demo", "five-per-word"), (DIVISIONS[1], "demo", "double")],
        name=EVENT,
        challenges_per_minute=0,
        kiosk_result_seconds=60,
    )
    with serving(data_dir, tds=(TDS[0],)) as live:
        yield live


def offences(text: str, data: set[str]) -> tuple[list[str], list[str]]:
    """What in ``text`` did not come from the catalogue: (words that are neither catalogue text nor data,
    server texts the client fell back to because the catalogue has no key for them, between ⟪ ⟫).

    Catalogue text in the pseudo-language is between ⟦ ⟧ with every letter accented; a parameter put in
    it, or text outside it, is plain: each of its words must be one of the walk's data (what it typed,
    what the server holds). A number or a sign is never a word."""
    fallbacks = re.findall(r"⟪(.*?)⟫", text)
    text = re.sub(r"⟪.*?⟫", " ", text)
    bad: list[str] = []
    depth = 0
    position = 0
    for match in TOKEN.finditer(text):
        depth += text.count("⟦", position, match.start()) - text.count("⟧", position, match.start())
        position = match.start()
        token = match.group()
        if token in data or not any(ch.isalpha() for ch in token):
            continue
        if depth == 0:
            bad.append(token)  # plain text, or catalogue letters, outside the catalogue's brackets
            continue
        # Catalogue text: its letters accented; a plain run in it was put in as a parameter, and is data.
        plain = "".join(" " if ch in PSEUDO_LETTERS else ch for ch in token).split()
        bad += [run for run in plain if any(ch.isalpha() for ch in run) and run not in data]
    return bad, fallbacks


def server_speaks_language(server: LiveServer) -> bool:
    """Whether the server keeps an event language (and so sends message keys): then nothing may fall back."""
    headers = td_headers(server.data_dir, "lang-check")
    return "language" in httpx.get(f"{server.base}/api/event", headers=headers).json()


def test_every_screen_in_the_pseudo_language_shows_only_catalogue_text(
    browser: Browser, walk_server: LiveServer
) -> None:
    walk = walk_every_screen(browser, walk_server, "qps-ploc", EVIDENCE)
    data = walk.data_tokens()
    unexplained: list[str] = []
    fallbacks: list[str] = []
    count = 0
    for seen in walk.seen():
        count += 1
        if seen.address:
            continue  # a link shown as its own address
        bad, fell_back = offences(seen.text, data)
        unexplained += [f"{seen.screen} {seen.where}: {word!r} in {seen.text!r}" for word in bad]
        fallbacks += [f"{seen.screen} {seen.where}: {text!r}" for text in fell_back]
    assert len(walk.screens) >= 30, sorted(walk.screens)
    print(f"\nwalked {len(walk.screens)} screens, checked {count} texts; {len(fallbacks)} server texts without a key:")
    print("\n".join(fallbacks))
    assert not unexplained, "text that is not from the catalogue:\n" + "\n".join(unexplained)
    # Server texts shown in English because the server sent no message key: only from a server that keeps no
    # event language (before its messages had keys); a server that has one sends keys for all it says.
    if server_speaks_language(walk_server):
        assert not fallbacks, "server text the catalogue has no key for:\n" + "\n".join(fallbacks)
    for page in walk.pages.values():
        assert page.evaluate("document.documentElement.lang") == "qps-ploc"
        page.context.close()


def test_the_checker_finds_english_left_in_a_screen() -> None:
    data = {"Kwx", "Qup", "Xq", "CAT"}
    assert offences("⟦Ţàƀľè 7, ŕòùñď 2⟧", data) == ([], [])
    assert offences("Kwx Qup", data) == ([], [])
    assert offences("⟦ÇĥàľľèñĝèŠ ⟧CAT ✓ 12/31/2026, 10:00:00 #4", data) == ([], [])
    assert offences("⟦Ďìṽìšìòñ Xq⟧", data) == ([], [])
    assert offences("Division Xq", data) == (["Division"], [])  # English around data
    assert offences("⟦Ţàƀľè table⟧", data) == (["table"], [])  # English put into catalogue text
    assert offences("⟦Ţĥè šèŕṽèŕ ŕèƒùšèď: ⟪table 3! is bad⟫⟧", data) == ([], ["table 3! is bad"])
    assert offences("ŕòùñď", data) == (["ŕòùñď"], [])  # catalogue letters outside the catalogue's brackets
    assert offences("58mm", data) == (["58mm"], [])


# -- the same walk in English and French: item 8's words, the evidence --------------------------------


PLAYER_SCREENS = ("kiosk-", "handheld-", "docket-")


def texts(walk: Walk, prefixes: tuple[str, ...] = ("",)) -> list[str]:
    """What the screens starting with ``prefixes`` say, links shown as their own address left out (the
    handheld's page is at /runner: an address, not a word on a screen)."""
    return [f"{s.screen}: {s.text}" for s in walk.seen() if s.screen.startswith(prefixes) and not s.address]


KIOSK_PAIR_COMMAND = "wordjudge device pair --role kiosk"


def test_one_word_for_one_thing_and_no_jargon_on_player_screens(browser: Browser, walk_server: LiveServer) -> None:
    walk = walk_every_screen(browser, walk_server, "en")
    assert_accessible(walk)
    shown = texts(walk)
    # "pair" for giving a device its credential, never "enrol"; "handheld" for the device, never "runner"
    # (the runner is the person who carries it); a device is "Paired as", only a TD "Signed in".
    assert not [t for t in shown if re.search(r"enrol", t, re.I)], [t for t in shown if re.search("enrol", t, re.I)]
    # A page's address is not a word a person reads as one (the status page links /runner).
    assert not [t for t in shown if re.search(r"\brunners?\b", re.sub(r"https?://\S+", "", t), re.I)]
    assert [t for t in shown if t.startswith("console-") and t.endswith(": handheld")], "the console says handheld"
    assert not [t for t in texts(walk, PLAYER_SCREENS) if "Signed in" in t]
    assert [t for t in texts(walk, ("handheld-entry",)) if f"Paired as {HANDHELD}" in t]
    # No jargon on player screens: no fingerprint, no command names, no HTTP authentication.
    player = texts(walk, PLAYER_SCREENS)
    assert not [t for t in player if re.search(r"fingerprint", t, re.I)]
    # The kiosk's pairing screen is the TD's (issue 46): it names the console and the one command that makes a code.
    assert not [
        t
        for t in texts(walk, ("kiosk-pair", "handheld-pair"))
        if re.search(r"wordjudge (device|td|event|lexicon|serve)|device pair|--", t.replace(KIOSK_PAIR_COMMAND, ""))
    ]
    assert [t for t in texts(walk, ("kiosk-pair",)) if KIOSK_PAIR_COMMAND in t and "Pair a device" in t]
    assert not [t for t in texts(walk, ("docket-",)) if re.search(r"Authorization|Bearer", t)]
    assert [t for t in texts(walk, ("docket-not-allowed",)) if "This docket opens on the kiosk or handheld" in t]
    for page in walk.pages.values():
        page.context.close()


def assert_accessible(walk: Walk) -> None:
    """No screen of the walk breaks a rule axe-core checks (WCAG 2.1 A and AA, best practices); the results,
    screen by screen, are kept in build/ for the record."""
    AXE_RESULTS.mkdir(parents=True, exist_ok=True)
    (AXE_RESULTS / f"axe-{walk.lang}.json").write_text(json.dumps(walk.axe, indent=1, ensure_ascii=False))
    assert len(walk.axe) == len(walk.screens) > 30, "axe ran on every screen"
    found = {screen: violations for screen, violations in walk.axe.items() if violations}
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)


def test_the_accessibility_check_finds_what_it_looks_for(browser: Browser) -> None:
    """axe-core, as the walk runs it, names a page's faults (a check that could not fail would prove nothing)."""
    page = new_page(browser, "desktop")
    page.set_content('<html lang="en"><title>t</title><body><img src="x.png"><button></button></body></html>')
    rules = {violation["rule"] for violation in axe_violations(page)}
    assert {"image-alt", "button-name", "page-has-heading-one"} <= rules, rules
    page.context.close()


def test_the_french_screens(browser: Browser, walk_server: LiveServer) -> None:
    walk = walk_every_screen(browser, walk_server, "fr", EVIDENCE)
    assert_accessible(walk)
    shown = texts(walk)
    assert not [t for t in shown if re.search(r"\bui\.[a-z]", t)], "a key without its text"
    assert [t for t in texts(walk, ("kiosk-idle",)) if "Commencer une contestation" in t]
    assert [t for t in texts(walk, ("console-overview",)) if "Vérifier la chaîne d’audit" in t]
    for page in walk.pages.values():
        assert page.evaluate("document.documentElement.lang") == "fr"
        page.context.close()


# -- the console's accessibility and dates (item 8) --------------------------------------------------------


def sign_in(page: Page, server: LiveServer, lang: str | None = None) -> None:
    """Sign in to the console, in ``lang`` for this tab (?lang=), or else in the language the browser follows."""
    page.goto(f"{server.base}/td" + (f"?lang={lang}" if lang else ""))
    page.locator("#name").fill(TDS[0])
    page.locator("#password").fill(PASSWORD)
    page.locator("button[type=submit]").click()
    expect(page.locator("#app")).to_have_attribute("data-screen", "overview")


def adjudicated(server: LiveServer, words: str = "cat") -> None:
    """A challenge from a kiosk, through the API (the console's screens then have a record to show)."""
    headers = device_headers(server.data_dir, f"k-{words.replace(' ', '-')}")
    body = {"division": DIVISIONS[0], "table": "7", "round": 2, "words": words, "request_id": f"walk-{words}-0001"}
    answer = httpx.post(f"{server.base}/api/challenges", headers=headers, json=body)
    assert answer.status_code == 201, answer.text


FOCUS_STYLE = """() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return { where: el.tagName + "#" + el.id + "." + el.className + " " + (el.textContent || "").trim().slice(0, 30),
           style: style.outlineStyle, width: parseFloat(style.outlineWidth), color: style.outlineColor,
           shadow: style.boxShadow };
}"""


def luminance(css: str) -> float:
    red, green, blue = (int(v) / 255 for v in re.findall(r"\d+(?:\.\d+)?", css)[:3])
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _fetched(page: Page, action: Callable[[], None], *, seconds: float = 30, quiet: float = 0.3) -> None:
    """Do ``action``, then wait until every request the page made since has its answer and none began for
    ``quiet`` seconds (a console tab says no "done"; its live feed, never done, aside); fail after ``seconds``."""
    pending: set[Request] = set()

    def began(request: Request) -> None:
        if request.resource_type != "eventsource":
            pending.add(request)

    def ended(request: Request) -> None:
        pending.discard(request)

    listeners = {"request": began, "requestfinished": ended, "requestfailed": ended}
    for event, listener in listeners.items():
        page.on(event, listener)  # type: ignore[call-overload]
    try:
        action()
        deadline = quiet_since = time.monotonic()
        deadline += seconds
        while pending or time.monotonic() - quiet_since < quiet:
            assert time.monotonic() < deadline, f"requests unanswered after {seconds} s: {[r.url for r in pending]}"
            if pending:
                quiet_since = time.monotonic()
            page.wait_for_timeout(50)  # Playwright's events are handled while it waits
    finally:
        for event, listener in listeners.items():
            page.remove_listener(event, listener)


def test_the_consoles_keyboard_focus_is_clearly_visible(browser: Browser, walk_server: LiveServer) -> None:
    adjudicated(walk_server)
    page = new_page(browser, "desktop")
    sign_in(page, walk_server)
    checked: list[str] = []
    for tab in ("overview", "feed", "devices", "event"):
        _fetched(page, page.locator(f"#tab-{tab}").click)  # the tab's data, fetched as it opens, is drawn
        expect(page.locator("#app")).to_have_attribute("data-screen", tab)
        page.locator(f"#tab-{tab}").focus()
        for _ in range(12):  # the controls after the tab: buttons, links, fields, selects
            page.keyboard.press("Tab")
            focus = page.evaluate(FOCUS_STYLE)
            if focus["where"].startswith("BODY"):
                break
            # WCAG 2.4.7: an outline of 2 px at least, solid, in a colour that stands out from the white page
            # (3:1), whatever the control's own 2 px black border.
            assert focus["style"] not in ("none", "auto"), focus
            assert focus["width"] >= 2, focus
            assert contrast(focus["color"], "rgb(255, 255, 255)") >= 3, focus
            checked.append(focus["where"])
    assert len(checked) >= 30, checked
    page.context.close()


def test_no_console_table_has_an_empty_header(browser: Browser, walk_server: LiveServer) -> None:
    adjudicated(walk_server)
    page = new_page(browser, "desktop")
    sign_in(page, walk_server)
    headers = 0
    for tab in ("overview", "feed", "devices", "event", "summary"):
        _fetched(page, page.locator(f"#tab-{tab}").click)  # the tab's tables, fetched as it opens, are drawn
        expect(page.locator("#app")).to_have_attribute("data-screen", tab)
        expect(page.locator("table").first).to_be_visible()
        for th in page.locator("th").all():
            headers += 1
            assert th.inner_text().strip() or (th.get_attribute("aria-label") or "").strip(), f"{tab}: empty <th>"
    assert headers >= 25
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_dates_are_typed_in_the_order_the_console_shows_them(
    browser: Browser, walk_server: LiveServer, lang: str
) -> None:
    adjudicated(walk_server)
    page = new_page(browser, "desktop")
    sign_in(page, walk_server, lang)
    page.locator("#tab-feed").click()
    row = page.locator("tr.record").first
    expect(row).to_be_visible()
    # The feed's pages are content-visibility: auto, so until the browser's next rendering update a new
    # page's innerText is "" though its text is there (CI read it empty twice): wait for the text as shown.
    expect(row.locator("td").nth(1)).to_have_text(re.compile(r"\d"), use_inner_text=True)
    shown = row.locator("td").nth(1).inner_text()  # e.g. 11/24/2026, 09:05:03 (en) or 24/11/2026 09:05:03 (fr)
    typed = shown.rsplit(":", 1)[0]  # the same, to the minute
    since = page.locator("#filter-since")
    # The field says the order: the pattern has the shape of the dates shown (dd/mm/yyyy hh:mm, ...).
    assert re.sub(r"\d", "#", typed) == re.sub(r"[^\W\d_]", "#", since.get_attribute("placeholder") or "")
    # And reads it in that order: a date typed as shown is the same moment (the record is from that minute).
    since.fill(typed)
    page.locator(".filters button[type=submit]").click()
    expect(page.locator("#filter-message")).to_be_empty()
    expect(page.locator("tr.record")).to_have_count(1)
    since.fill("")
    page.locator("#filter-until").fill(typed)
    page.locator(".filters button[type=submit]").click()
    expect(page.locator("#filter-message")).to_be_empty()
    expect(page.locator("tr.record")).to_have_count(0)
    page.context.close()


# -- following the event's language ----------------------------------------------------------------------


def with_language(language: str) -> Any:
    """A route handler that answers GET /api/event (or /api/health) as a server that keeps the event's language
    does."""

    def handle(route: Route) -> None:
        if route.request.method != "GET":
            route.continue_()
            return
        answer = route.fetch()
        route.fulfill(response=answer, json={**answer.json(), "language": language})

    return handle


def test_the_pages_follow_the_events_language(browser: Browser, walk_server: LiveServer) -> None:
    page = new_page(browser, "small")
    store = access_store(walk_server.data_dir)
    try:
        token = store.devices.add(KIOSK, Role.KIOSK, None, by="test").token
    finally:
        store.close()
    page.goto(f"{walk_server.base}/kiosk")
    expect(page.locator("h1")).to_have_text("This kiosk is not paired")
    page.evaluate("(token) => localStorage.setItem('wordjudge.kiosk.token', token)", token)
    page.route("**/api/event", with_language("fr"))
    page.goto(f"{walk_server.base}/kiosk")
    # The event is in French: the kiosk reloads in it, and remembers it for the screens it shows before it
    # may read the event (pairing, here after the token is gone), even with the server out of reach (a never
    # paired kiosk that reaches it follows its health check's language: tests/test_first_screens.py).
    expect(page.locator("h2")).to_have_text("Contestataire : choisissez votre division")
    assert page.evaluate("document.documentElement.lang") == "fr"
    page.unroute("**/api/event")
    page.evaluate("localStorage.removeItem('wordjudge.kiosk.token')")
    page.route("**/api/health", lambda route: route.abort())
    page.goto(f"{walk_server.base}/kiosk")
    expect(page.locator("h1")).to_have_text("Cette borne n’est pas appairée")
    page.context.close()

    # The TD changes the language in the event editor: the console says the new language at once.
    console = new_page(browser, "desktop")
    sign_in(console, walk_server)
    sent: list[Any] = []

    def save(route: Route) -> None:
        if route.request.method == "PUT":
            sent.append(route.request.post_data_json)
            route.fulfill(json={"ok": True})
        else:
            with_language(sent[-1]["language"] if sent else "en")(route)

    console.route("**/api/event", save)
    # The server saying the new language in its health check too, as a server that saved it does.
    console.route("**/api/health", lambda route: with_language(sent[-1]["language"] if sent else "en")(route))
    console.locator("#tab-event").click()
    console.locator("#event-language").select_option("fr")
    console.locator("#save-event").click()
    console.locator("#change-confirm").click()  # the dialog naming the change (test_console_changes.py)
    expect(console.locator("#tab-event")).to_have_text("Réglages du tournoi")
    assert [body["language"] for body in sent] == ["fr"]
    # The page in French reads the event again meanwhile: its request is still in the handler as the test ends.
    console.unroute_all(behavior="ignoreErrors")
    console.context.close()
