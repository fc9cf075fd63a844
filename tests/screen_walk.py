"""A walk through every screen of the kiosk, the handheld, the docket, the status page and the console in
a real browser, collecting every visible text and every attribute a person reads (title, aria-label,
placeholder, alt, a button's value), for the catalogue tests in test_i18n_client.py.

The language is set for each browser tab with ``?lang=`` (kiosk/strings.js keeps it for the tab): it works
whether or not the server keeps a language for the event. The walk records what it typed and what the
server holds (names, words, hashes, codes): that is the only text a screen may show that is not the
catalogue's (:meth:`Walk.data_tokens`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
from playwright.sync_api import Browser, Page, Route, expect

from wordjudge.model.auth import Role

from .browser import new_page
from .helpers import PASSWORD, LiveServer, access_store

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"  # npm ci installs it

# Names chosen so that none is an English word a screen could show: text that let English through would
# not hide behind them.
EVENT = "Kwx Qup"
DIVISIONS = ("Xq", "Yv")
TDS = ("zed", "qux")
KIOSK = "Zq-1"
HANDHELD = "Vw-2"
HALL = "Zq-h"  # the start of a hall's device names: Zq-h01, Zq-h02
TABLE = "7"
ROUND = "2"
WORDS_OK = "cat dog cat"  # CAT twice: the opponent's screen warns of it
WORDS_BAD = "cat qi"
NOTE = "xyzzy"
REASON = "plugh"
HOLD_S = 1.6

# What a screen shows, collected in the page: visible text nodes, the attributes people read, the title.
COLLECT = """() => {
  const shown = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.display === "none" || style.visibility === "hidden") return false;
    }
    return el.getClientRects().length > 0;
  };
  const where = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const text = node.textContent.trim();
    if (!text) continue;
    const el = node.parentElement;
    if (el.closest("script, style, noscript")) continue;
    const owner = el.tagName === "OPTION" ? el.closest("select") : el;
    if (!owner || !shown(owner)) continue;
    // A link shown as its own address (the pairing link, /docs): the address is data.
    const link = el.closest("a");
    out.push({ text, where: where(el), address: Boolean(link && link.getAttribute("href") === text) });
  }
  for (const el of document.querySelectorAll("[title], [aria-label], [placeholder], [alt], input[type=button], input[type=submit]")) {
    if (!shown(el)) continue;
    for (const name of ["title", "aria-label", "placeholder", "alt"]) {
      const value = (el.getAttribute(name) || "").trim();
      if (value) out.push({ text: value, where: where(el) + "@" + name, address: false });
    }
    if (el.tagName === "INPUT" && el.value.trim()) out.push({ text: el.value.trim(), where: where(el) + "@value", address: false });
  }
  if (document.title.trim()) out.push({ text: document.title.trim(), where: "title", address: false });
  return out;
}"""


@dataclass
class Seen:
    screen: str
    text: str
    where: str
    address: bool


@dataclass
class Walk:
    """What a walk saw, screen by screen, and the data it typed or the server holds."""

    lang: str
    screens: dict[str, list[Seen]] = field(default_factory=dict)
    data: set[str] = field(default_factory=set)
    pages: dict[str, Page] = field(default_factory=dict)
    axe: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # each screen's axe-core violations

    def seen(self) -> Iterator[Seen]:
        for texts in self.screens.values():
            yield from texts

    def data_tokens(self) -> set[str]:
        """The words and numbers (runs of letters and digits) of the data: what a screen may show as it is."""
        return {token for value in self.data for token in TOKEN.findall(value)}


TOKEN = re.compile(r"[^\W_]+")


def collect(walk: Walk, page: Page, screen: str, shots: Path | None) -> None:
    """Record what ``page`` shows now as ``screen`` (and its screenshot in ``shots``)."""
    page.wait_for_timeout(150)  # the screen's own focus and messages settle
    texts: list[dict[str, Any]] = page.evaluate(COLLECT)
    assert texts, f"{screen}: nothing shown"
    walk.screens[screen] = [Seen(screen, t["text"], t["where"], t["address"]) for t in texts]
    walk.axe[screen] = axe_violations(page)
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / f"{walk.lang}-{screen}.png"), full_page=True)


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """What axe-core (the npm package of package.json, installed by ``npm ci``) finds wrong on ``page`` now, by
    the WCAG 2.1 A and AA rules and best practices: each violation's rule, impact and the elements it names.

    axe's source is evaluated by the browser's DevTools protocol, which the pages' Content-Security-Policy does
    not govern: the pages themselves never run it."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = page.evaluate(
        """async () => {
            const result = await axe.run(document, { resultTypes: ["violations"] });
            return result.violations.map((v) => ({
                rule: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
            }));
        }"""
    )
    return found


def on_screen(page: Page, name: str) -> None:
    expect(page.locator("#app")).to_have_attribute("data-screen", name)


def hold(page: Page) -> None:
    page.locator("#adjudicate").hover()
    page.mouse.down()
    page.wait_for_timeout(HOLD_S * 1000)  # the hold itself: the time is what is tested
    page.mouse.up()


def walk_every_screen(browser: Browser, server: LiveServer, lang: str, shots: Path | None = None) -> Walk:
    """Walk every screen in ``lang``; the server must hold the event :func:`prepare` wrote."""
    walk = Walk(lang)
    walk.data |= {EVENT, *DIVISIONS, *TDS, KIOSK, HANDHELD, TABLE, ROUND, NOTE, REASON}
    for words in (WORDS_OK, WORDS_BAD):
        walk.data |= {words, words.upper(), *(" ".join(w.upper()) for w in words.split())}
    q = f"?lang={lang}"
    base = server.base
    walk.data |= {f"{base}/{page}" for page in ("kiosk", "runner", "td")}  # the status page's links

    console = new_page(browser, "desktop")
    walk.pages["console"] = console
    console.goto(f"{base}/td{q}")
    console.locator("#name").fill(TDS[0])
    console.locator("#password").fill("not the password")
    console.locator("button[type=submit]").click()
    expect(console.locator(".console-login .message")).not_to_be_empty()
    collect(walk, console, "console-sign-in", shots)
    console.locator("#password").fill(PASSWORD)
    console.locator("button[type=submit]").click()
    on_screen(console, "overview")

    # Devices and accounts: a pairing code for the handheld, a second TD.
    console.locator("#tab-devices").click()
    on_screen(console, "devices")
    console.locator("#pair-role").select_option("runner")
    console.locator("#pair-name").fill(HANDHELD)
    console.locator(".pairing button[type=submit]").click()
    expect(console.locator(".pairing-code")).to_be_visible()
    created = console.locator(".pairing-result a").inner_text()
    code = created.rsplit("#pair=", 1)[1]
    walk.data |= {code, created}
    console.locator("#hall-prefix").fill(HALL)  # the hall form's preview names what the TD typed
    console.locator("#hall-to").fill("2")
    walk.data |= {f"{HALL}{n:02d}" for n in (1, 2)}
    console.locator("#td-new-name").fill(TDS[1])
    console.locator("#td-new-password").fill(PASSWORD)
    console.locator(".add-td button[type=submit]").click()
    expect(console.locator(f"td:text-is('{TDS[1]}')")).to_be_visible()
    collect(walk, console, "console-devices-pairing-accounts", shots)

    # The kiosk: pairing, both idle screens, the challenge's screens, failures, the TD's settings.
    store = access_store(server.data_dir)
    try:
        token = store.devices.add(KIOSK, Role.KIOSK, None, by="test").token
    finally:
        store.close()
    kiosk = new_page(browser, "small")
    walk.pages["kiosk"] = kiosk
    kiosk.goto(f"{base}/kiosk{q}")
    on_screen(kiosk, "pair")
    collect(walk, kiosk, "kiosk-pair", shots)
    kiosk.evaluate("(token) => localStorage.setItem('wordjudge.kiosk.token', token)", token)
    kiosk.goto(f"{base}/kiosk")
    on_screen(kiosk, "idle")
    expect(kiosk.locator("#server-state")).not_to_be_empty()
    collect(walk, kiosk, "kiosk-idle-division-pick", shots)

    def challenge(words: str, refusal: bool = False) -> None:
        kiosk.locator("button.division").first.click()
        on_screen(kiosk, "challenger")
        kiosk.locator("#table").fill(TABLE)
        kiosk.locator("#round").fill(ROUND)
        kiosk.locator("#words").press_sequentially(words)
        if refusal:
            kiosk.locator("#words").press("3")  # refused as typed, with a message
            expect(kiosk.locator("#word-message")).not_to_be_empty()
            collect(walk, kiosk, "kiosk-challenger", shots)
        kiosk.locator("#done").click()
        on_screen(kiosk, "opponent")

    challenge(WORDS_OK, refusal=True)
    expect(kiosk.locator(".repeated")).to_be_visible()
    collect(walk, kiosk, "kiosk-opponent", shots)
    hold(kiosk)
    on_screen(kiosk, "verdict")
    expect(kiosk.locator(".verdict.acceptable")).to_be_visible()
    collect(walk, kiosk, "kiosk-verdict-acceptable", shots)
    kiosk.wait_for_timeout(600)  # a key this soon after the verdict appears does not clear it
    kiosk.keyboard.press("Escape")
    on_screen(kiosk, "idle")
    challenge(WORDS_BAD)
    hold(kiosk)
    on_screen(kiosk, "verdict")
    expect(kiosk.locator(".verdict.unacceptable")).to_be_visible()
    collect(walk, kiosk, "kiosk-verdict-unacceptable", shots)
    kiosk.wait_for_timeout(600)  # a key this soon after the verdict appears does not clear it
    kiosk.keyboard.press("Escape")
    on_screen(kiosk, "idle")

    # No answer: the challenge never reaches the server; then the server cannot be asked about it either.
    def lose(route: Route) -> None:
        route.abort("connectionreset")

    kiosk.route("**/api/challenges", lose)
    challenge(WORDS_BAD)
    hold(kiosk)
    on_screen(kiosk, "failure")
    kiosk.route("**/api/health", lose)  # the server stays out of reach: the failure screen stays as it is
    collect(walk, kiosk, "kiosk-failure-no-verdict", shots)
    kiosk.unroute("**/api/challenges", lose)
    kiosk.locator("#discard").click()
    kiosk.unroute("**/api/health", lose)
    on_screen(kiosk, "idle")
    kiosk.route("**/api/challenges/requests/*", lose)
    kiosk.locator("button.division").first.click()
    on_screen(kiosk, "unsettled")
    collect(walk, kiosk, "kiosk-unsettled", shots)
    kiosk.unroute("**/api/challenges/requests/*", lose)
    kiosk.locator("#retry").click()
    on_screen(kiosk, "challenger")  # the server says it never got it: a new challenge starts
    kiosk.locator("#cancel").click()
    on_screen(kiosk, "idle")

    kiosk.locator(".td-button").click()
    on_screen(kiosk, "td-login")
    kiosk.locator("#td-name").fill(TDS[0])
    kiosk.locator("#td-password").fill("not the password")
    kiosk.locator(".td-login button[type=submit]").click()
    expect(kiosk.locator(".td-login .message")).not_to_be_empty()
    collect(walk, kiosk, "kiosk-td-sign-in", shots)
    kiosk.locator("#td-password").fill(PASSWORD)
    kiosk.locator(".td-login button[type=submit]").click()
    on_screen(kiosk, "settings")
    collect(walk, kiosk, "kiosk-settings", shots)
    kiosk.locator(f"input[type=radio][value='{DIVISIONS[0]}']").check()
    kiosk.locator(".settings .actions button.primary").click()
    on_screen(kiosk, "idle")
    expect(kiosk.locator("#start")).to_be_visible()
    collect(walk, kiosk, "kiosk-idle", shots)

    def unreachable(route: Route) -> None:
        route.abort("connectionrefused")

    kiosk.route("**/api/session", unreachable)
    kiosk.goto(f"{base}/kiosk")
    on_screen(kiosk, "down")
    collect(walk, kiosk, "kiosk-server-down", shots)
    kiosk.unroute("**/api/session", unreachable)

    # The handheld: pairing with the console's code, entry, check, result, not sent.
    handheld = new_page(browser, "phone")
    walk.pages["handheld"] = handheld
    handheld.goto(f"{base}/runner{q}")
    on_screen(handheld, "pair")
    collect(walk, handheld, "handheld-pair", shots)
    handheld.locator("#pair-code").fill(code)
    handheld.locator(".pair button[type=submit]").click()
    on_screen(handheld, "entry")
    expect(handheld.locator(".recent-list li").first).not_to_have_text("…")
    collect(walk, handheld, "handheld-entry", shots)

    def slip(words: str) -> None:
        handheld.locator("#table").fill(TABLE)
        handheld.locator("#round").fill(ROUND)
        handheld.locator("#words").press_sequentially(words)
        handheld.locator("#check").click()
        on_screen(handheld, "confirm")

    slip(WORDS_BAD)
    collect(walk, handheld, "handheld-check", shots)
    handheld.locator("#send").click()
    on_screen(handheld, "verdict")
    collect(walk, handheld, "handheld-result", shots)
    handheld.locator("#next").click()
    on_screen(handheld, "entry")
    expect(handheld.locator(".recent-list li a").first).to_be_visible()
    collect(walk, handheld, "handheld-entry-with-recent", shots)
    handheld.route("**/api/challenges", lose)
    slip(WORDS_OK)
    handheld.locator("#send").click()
    on_screen(handheld, "not-sent")
    collect(walk, handheld, "handheld-not-sent", shots)
    handheld.unroute("**/api/challenges", lose)

    # Dockets: each paper size, and one opened where no device or TD is signed in.
    records = server.records()
    walk.data |= {r.hash[:16] for r in records} | {r.hash for r in records}
    last = records[-1].id
    handheld.goto(f"{base}/docket?id={last}")
    expect(handheld.locator(".docket")).to_be_visible()
    for size in ("58mm", "80mm", "a6"):
        handheld.locator(".docket-controls button").nth(("58mm", "80mm", "a6").index(size)).click()
        expect(handheld.locator("body")).to_have_attribute("data-size", size)
        collect(walk, handheld, f"docket-{size}", shots)
    stranger = new_page(browser, "phone")
    walk.pages["stranger"] = stranger
    stranger.goto(f"{base}/docket?id={last}&lang={lang}")
    expect(stranger.locator(".message")).not_to_be_empty()
    collect(walk, stranger, "docket-not-allowed", shots)

    # The status page.
    stranger.goto(f"{base}/{q}")
    expect(stranger.locator("#version")).not_to_be_empty()
    collect(walk, stranger, "status", shots)

    # The console with the records: overview, live feed, record view, event editor, summary.
    console.locator("#tab-overview").click()
    on_screen(console, "overview")
    console.locator("#current-round").fill(ROUND)
    console.locator("#set-round").click()
    expect(console.locator("#round-note")).not_to_be_empty()
    console.locator("#verify").click()
    expect(console.locator("#chain-result")).not_to_be_empty()
    collect(walk, console, "console-overview", shots)
    console.locator("#tab-feed").click()
    on_screen(console, "feed")
    expect(console.locator("tr.record")).to_have_count(len(records))
    console.locator("#filter-since").fill("99/99/2026")
    console.locator(".filters button[type=submit]").click()
    expect(console.locator("#filter-message")).not_to_be_empty()
    expect(console.locator("tr.record")).to_have_count(0)  # a refused search shows no stale results
    console.locator("#filter-since").fill("")
    console.locator(".filters button[type=submit]").click()
    expect(console.locator("tr.record")).to_have_count(len(records))
    collect(walk, console, "console-feed", shots)
    adjudicated = next(r for r in records if r.verdict is not None)  # not the TD account's change record
    console.locator(f"tr.record[data-id='{adjudicated.id}'] button.link").click()
    expect(console.locator("#record-view")).to_be_visible()
    console.locator("#recheck-note").fill(NOTE)
    console.locator(".actions-grid form").first.locator("button[type=submit]").click()
    expect(console.locator("#record-view .answer")).not_to_be_empty()
    walk.data |= {r.hash[:16] for r in server.records()}
    collect(walk, console, "console-record", shots)
    console.keyboard.press("F9")  # privacy: per-word results and the record hidden, and saying so
    expect(console.locator("#private-note")).to_be_visible()
    collect(walk, console, "console-private", shots)
    console.keyboard.press("F9")
    console.keyboard.press("Escape")
    console.locator("#search").fill("qi")
    console.locator("#search").press("Enter")
    expect(console.locator("tr.record")).to_have_count(sum("QI" in r.words for r in server.records()))
    collect(walk, console, "console-feed-search", shots)
    console.locator("#search").fill("#9999")
    console.locator("#search").press("Enter")
    expect(console.locator("tr.empty")).to_be_visible()
    walk.data |= {"#9999"}
    collect(walk, console, "console-feed-not-found", shots)
    console.locator("#tab-event").click()
    on_screen(console, "event")
    expect(console.locator(".event-form")).to_be_visible()
    collect(walk, console, "console-event-editor", shots)
    console.locator("#tab-summary").click()
    on_screen(console, "summary")
    expect(console.locator("table.summary")).to_be_visible()
    collect(walk, console, "console-summary", shots)

    # Pairing a hall (its codes listed with the earlier one, a kiosk paired again) and the sheet they print on.
    console.locator("#tab-devices").click()
    on_screen(console, "devices")
    console.locator("#hall-prefix").fill(HALL)
    console.locator("#hall-to").fill("2")
    console.locator(".hall-each summary").click()
    console.locator("#hall-create").click()
    expect(console.locator(".code-card")).to_have_count(3)
    console.once("dialog", lambda dialog: dialog.accept())
    console.locator(f"#device-list button[aria-label*=' {KIOSK}']").last.click()  # Re-pair (after Revoke)
    expect(console.locator(".code-card")).to_have_count(4)
    for link in console.locator(".code-card .code-link a").all_inner_texts():
        walk.data |= {link, link.rsplit("#pair=", 1)[1]}
    collect(walk, console, "console-devices-hall-codes", shots)
    console.locator("#print-sheet").click()
    on_screen(console, "pairing-sheet")
    collect(walk, console, "console-pairing-sheet", shots)
    console.locator("#print-back").click()
    on_screen(console, "devices")

    # The reports a TD prints: a division's round report, the feed as filtered (same tab: same language).
    console.goto(f"{base}/td?print=report&division={DIVISIONS[0]}&round={ROUND}")
    expect(console.locator("#report-title")).not_to_be_empty()
    collect(walk, console, "console-round-report", shots)
    console.goto(f"{base}/td?print=feed&verdict=unacceptable&round={ROUND}")
    expect(console.locator("#feed-count")).not_to_be_empty()
    collect(walk, console, "console-feed-print", shots)

    # What the server holds that screens show as it is: lexicon names, editions, fingerprints, ids.
    signed = {"Cookie": "; ".join(f"{c['name']}={c['value']}" for c in console.context.cookies())}
    for account in httpx.get(f"{base}/api/tds", headers=signed).json()["tds"]:
        walk.data |= {account["name"], account["created_by"]}  # who added the TD: "test" for the fixture's
    for device in httpx.get(f"{base}/api/devices", headers=signed).json()["devices"]:
        walk.data |= {device["name"], device["created_by"], device["bound_client"] or ""}
    health = httpx.get(f"{base}/api/health").json()
    walk.data |= {health["server_id"], health["version"]}
    for lexicon in health["lexicons"]:
        walk.data |= {lexicon["name"], lexicon["shown_name"], lexicon["fingerprint"], lexicon["short_fingerprint"]}
        walk.data |= {lexicon["identification"]["edition"] or ""}
    return walk
