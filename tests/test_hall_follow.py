"""A kiosk page that followed the hall to another server never goes back to its own address unproven (issue 44,
point 1). After a failover the dead machine's address is anyone's: the guide tells the TD to unplug the old active
machine, and a phone that takes its address answered every kiosk, after one blip of the new server or any reload,
with its ACCEPTABLE, and got the kiosk's token, request id and words. The page's origin was trusted by construction.

Now the server a page followed is remembered across reloads and proved before its first request, and the page's
own origin, once the page has followed another server (or it failed a request), proves itself like any other.
Each test holds a real hall (two PostgreSQL clusters, two ``wordjudge serve``) and Debian's Chromium; the phone is
a :class:`~tests.fake_peer.FakePeer` on the dead machine's port."""

from __future__ import annotations

import json
import os
import ssl
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from wordjudge.hall.proof import digest, read_key

from .browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    drawn,
    enrol,
    fits,
    new_page,
    open_enrolled,
    reload_noting,
    screenshot,
    serving,
    shell_ready,
)
from .fake_peer import FakePeer, Heard, json_answer
from .hall_lab import SYNC_WAIT, Hall, kill_machine
from .helpers import LiveServer, eventually, serve_process, wait_for_health, write_event
from .test_cli_access import run
from .test_hall_trust import _close_other_pages
from .test_kiosk import hold_adjudicate, type_challenge
from .tls_hall import chromium_home, hall_certs, other_ca_certs, second_machine_certs, trusting

pytestmark = pytest.mark.sqlite_only("starts PostgreSQL clusters of its own: runs in the suite's first pass")

FOLLOWS = "wordjudge.kiosk.follows"


def _kiosk_token(hall: Hall) -> str:
    added = run("device", "add", "kiosk 1", "--role", "kiosk", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    assert added.exit_code == 0, added.output
    return str(added.stdout.strip())


def _followed_to_the_standby(hall: Hall, browser: Browser, verify: ssl.SSLContext | bool = True) -> tuple[Page, str]:
    """A kiosk page opened on the active server (a), its offline shell in place; a dies, the TD promotes b, and the
    kiosk's next challenge gets its verdict from b, which the page follows from then on. ``verify``: how the test's
    own requests check b's certificate (over HTTPS)."""
    _close_other_pages(browser)
    hall.a.start()
    hall.b.start()
    token = _kiosk_token(hall)
    page = new_page(browser)
    open_enrolled(page, hall.a, "kiosk", token)
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
    page.wait_for_function("() => localStorage.getItem('wordjudge.hall') !== null")  # [a, b], from a's health
    shell_ready(page)
    kill_machine(hall.primary, hall.a)
    promoted = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert promoted.exit_code == 0, promoted.output
    eventually(
        lambda: httpx.get(f"{hall.b.base}/api/health", verify=verify).status_code == 200, "b serves", seconds=SYNC_WAIT
    )
    _verdict(page, "cat, dog", "ACCEPTABLE")
    assert _remembered(page) == {"server": hall.b.base}
    return page, token


def _verdict(page: Page, words: str, shown: str) -> None:
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
    type_challenge(page, "12", words)
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    hold_adjudicate(page)
    expect(page.locator("#app")).to_have_attribute("data-screen", "verdict")
    expect(page.locator(".verdict h1")).to_have_text(shown)
    _clear(page)


def _clear(page: Page) -> None:
    page.wait_for_timeout(600)  # the verdict ignores keys in its first half second
    page.keyboard.press("x")
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")


def _remembered(page: Page) -> Any:
    return json.loads(page.evaluate(f"() => localStorage.getItem('{FOLLOWS}') || 'null'"))


def _given_nothing(heard: list[Heard], token: str) -> None:
    """The phone got no token, no request id and no words: at most a proof's nonce and hint, a page, health."""
    for request in heard:
        assert "authorization" not in {name.lower() for name in request.headers}, request
        assert token not in request.path, request
        assert token.encode() not in request.body, request
        assert not request.path.startswith("/api/challenges"), request  # a challenge, or a pending one's request id
        assert b"ZZ" not in request.body.upper(), request
        assert b"CAT" not in request.body.upper(), request
        assert not request.path.startswith(("/api/session", "/api/event", "/api/td-check")), request


@pytest.mark.browser
def test_a_kiosk_remembers_the_server_it_followed_and_proves_it_before_its_first_request_after_a_reload(
    hall: Hall, browser: Browser
) -> None:
    page, _ = _followed_to_the_standby(hall, browser)
    made = reload_noting(page)  # nothing at a's address: the offline shell's copy of the page
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
    assert made, "the reloaded page asked nothing"
    # Its first request is b's proof: not a's health, nor a token sent anywhere before b proved itself.
    assert made[0].startswith(f"{hall.b.base}/api/hall/proof?"), made
    assert not any(url.startswith(hall.a.base) for url in made), made  # b answered: a was never asked
    assert _remembered(page) == {"server": hall.b.base}
    _verdict(page, "cat, zzxq", "UNACCEPTABLE")
    page.context.close()


@pytest.mark.browser
def test_a_kiosk_that_followed_the_standby_sends_a_phone_at_its_own_address_nothing(
    hall: Hall, browser: Browser
) -> None:
    page, token = _followed_to_the_standby(hall, browser)
    lie = {
        "id": 99,
        "kind": "challenge",
        "verdict": "acceptable",
        "words": ["CAT", "ZZXQ"],
        "word_count": 2,
        "division": "Open",
        "table": 12,
        "round": 3,
        "consequence": {"text": "Play stands", "message": None},
        "hash": "0" * 64,
        "created_at": "2026-11-27T12:00:00.000+00:00",
        "replayed": False,
    }
    lies = {
        "/api/health": json_answer({"ok": True, "status": 200, "state": "ok", "hall": {"role": "active", "epoch": 3}}),
        "/api/session": json_answer({"actor": "kiosk 1", "division": None}),
        "/api/challenges": json_answer(lie, 201),
        "/api/hall/proof": json_answer({"url": hall.a.base, "role": "active", "epoch": 3, "mac": "00" * 32}),
    }
    with FakePeer(hall.a.port, lies) as phone:
        # One blip of the new server (the issue's 12 s of silence) while a challenge is under way: the kiosk looks
        # at its own address, which proves nothing, and is sent nothing; the challenge gets no verdict, and the
        # kiosk says to call the TD.
        type_challenge(page, "12", "cat, zzxq")
        page.get_by_role("button", name="Done: hand over to the opponent").click()
        hall.b.stop()
        hold_adjudicate(page)
        expect(page.locator("body")).to_contain_text("call the TD")
        expect(page.locator(".verdict h1")).to_have_count(0)  # before: the phone's ACCEPTABLE
        assert any(heard.path.startswith("/api/hall/proof") for heard in phone.heard), phone.heard
        # The server is back: the same challenge goes again by itself, and gets its verdict there, the real one.
        hall.b.start()
        expect(page.locator("#app")).to_have_attribute("data-screen", "verdict", timeout=30_000)
        expect(page.locator(".verdict h1")).to_have_text("UNACCEPTABLE")
        _clear(page)
        # A reload (F5, a restart) while the phone answers at the page's address: the phone has no page of the
        # kiosk's, so the shell's copy answers and proves b before its first request.
        made = reload_noting(page)
        expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
        assert made[0].startswith(f"{hall.b.base}/api/hall/proof?"), made
        _verdict(page, "cat, zzxq", "UNACCEPTABLE")
        _given_nothing(phone.heard, token)
        assert any(heard.path == "/kiosk" for heard in phone.heard), "the reload never asked the phone for the page"
    page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("proof_key", [True, False], ids=["paired-with-its-key", "paired-before-keys"])
def test_a_kiosk_whose_first_request_fails_in_a_hall_has_its_server_prove_itself(
    hall: Hall, browser: Browser, proof_key: bool
) -> None:
    """In a hall, once a request to the page's own server failed (a slow answer on a loaded machine, a restart),
    that address may be anyone's: the server proves itself before it is sent anything more. A kiosk holding its
    proof key, as pairing hands it, has it prove itself and starts, with no reload, though its very first request
    failed. A kiosk paired before servers handed out keys holds its token alone: no server can prove itself to it,
    so it sends nothing more, and its screen says so and has the TD pair it again (before, it said it would carry
    on by itself once a server proved itself, which none can). (Issue 47, run 45: the tests' devices held their
    token alone; one first request that failed on a loaded machine left the page at "call the TD" for good.)"""
    _close_other_pages(browser)
    hall.a.start()
    hall.b.start()
    token = _kiosk_token(hall)
    page = new_page(browser)
    page.goto(f"{hall.a.base}/kiosk")
    expect(page.locator("#app[data-screen]")).to_have_count(1)
    hall_servers = {"servers": [hall.a.base, hall.b.base]}  # as a's health says them (a page learnt them before)
    page.evaluate("(servers) => localStorage.setItem('wordjudge.hall', JSON.stringify(servers))", hall_servers)
    enrol(page, hall.a, "kiosk", token, proof_key=proof_key)
    failed: list[str] = []
    sent: list[str] = []  # every request that carried the token, the failed one included

    def first_fails(route: Route) -> None:
        if "authorization" in route.request.headers:
            sent.append(route.request.url)
            if not failed:
                failed.append(route.request.url)
                route.abort("connectionreset")
                return
        route.continue_()

    page.route("**/api/**", first_fails)
    page.goto(f"{hall.a.base}/kiosk")
    if proof_key:
        expect(page.locator("#app")).to_have_attribute("data-screen", "idle", timeout=30_000)
        assert failed, "no request of the page's failed: the test proved nothing"
        assert len(page.evaluate("() => JSON.parse(localStorage.getItem('wordjudge.hall')).servers")) == 2  # a hall
        _verdict(page, "cat, zzxq", "UNACCEPTABLE")
    else:
        expect(page.locator("#app")).to_have_attribute("data-screen", "down", timeout=30_000)
        expect(page.locator("#app")).to_contain_text("it holds no proof key")
        expect(page.locator("#app")).to_contain_text("Ask the TD to pair it again")
        first_load = list(sent)  # its first load's requests, sent at once: one failed, the other was answered
        # The page asks again every few seconds: two more of its tries, each sending nothing.
        page.evaluate(
            """() => {
                window.shown = 0;
                const app = document.querySelector('#app');
                new MutationObserver(() => window.shown++).observe(app, {childList: true});
            }"""
        )
        page.wait_for_function("() => window.shown >= 2", timeout=30_000)
        expect(page.locator("#app")).to_contain_text("it holds no proof key")
        assert sent == first_load, sent  # nothing more carried its token, to anyone
    page.context.close()


@pytest.mark.browser
def test_a_kiosk_paired_before_proof_keys_learns_its_key_from_its_own_server(browser: Browser, data_dir: Path) -> None:
    """A device paired before servers handed out proof keys holds its token alone: the page's own server hands it
    its key at its first request (GET /api/session), and the page keeps it beside its token."""
    write_event(data_dir, [("Open", "demo", "five-per-word")])
    with serving(data_dir) as lone:
        token = _lone_kiosk(lone)
        page = new_page(browser)
        open_enrolled(page, lone, "kiosk", token, proof_key=False)
        expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
        hall_key = read_key(data_dir)
        assert hall_key is not None
        expected = hall_key.proof_key("device", digest(token))
        page.wait_for_function("(key) => localStorage.getItem('wordjudge.kiosk.proof-key') === key", arg=expected)
        page.context.close()


@pytest.mark.browser
def test_a_kiosk_says_its_connection_is_unproven_over_plain_http_in_a_hall_only(
    hall: Hall, browser: Browser, data_dir: Path
) -> None:
    _close_other_pages(browser)
    hall.a.start()
    hall.b.start()
    page = new_page(browser)
    open_enrolled(page, hall.a, "kiosk", _kiosk_token(hall))
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
    banner = page.locator("#connection-banner")
    expect(banner).to_contain_text("Unproven connection")  # once the page learnt its hall
    expect(banner).to_contain_text("one-time step")
    # Every screen leaves it its height: nothing is pushed off the kiosk's screen.
    drawn(page)
    assert fits(page), screenshot(page, "kiosk-unproven-idle")
    type_challenge(page, "12", "cat, dog")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    drawn(page)
    assert fits(page), screenshot(page, "kiosk-unproven-opponent")
    page.goto(f"{hall.a.base}/kiosk?lang=fr")
    expect(page.locator("#connection-banner")).to_contain_text("Connexion non prouvée")
    page.context.close()
    # The handheld on a runner's phone says it too, above its screens.
    added = run(
        "device", "add", "runner 1", "--role", "handheld", "--data-dir", hall.a.data_dir, "--database", hall.url_a
    )
    assert added.exit_code == 0, added.output
    phone = new_page(browser, "phone")
    open_enrolled(phone, hall.a, "runner", added.stdout.strip())
    expect(phone.locator("#app")).to_have_attribute("data-screen", "entry")
    expect(phone.locator("#connection-banner")).to_contain_text("one-time step")
    phone.context.close()
    # Outside a hall: one server, nothing to tell it from, nothing shown.
    write_event(data_dir, [("Open", "demo", "five-per-word")])
    with serving(data_dir) as lone:
        alone = new_page(browser)
        token = _lone_kiosk(lone)
        open_enrolled(alone, lone, "kiosk", token)
        expect(alone.locator("#app")).to_have_attribute("data-screen", "idle")
        alone.wait_for_timeout(6000)  # the banner's next look
        expect(alone.locator("#connection-banner")).to_have_count(0)
        # A hall this browser learnt at this address before (another event): the server's health, which names no
        # hall, ends it, and the banner with it.
        alone.evaluate(
            "() => localStorage.setItem('wordjudge.hall', JSON.stringify({servers: ['http://a:1', 'http://b:1']}))"
        )
        alone.reload()
        expect(alone.locator("#connection-banner")).to_have_count(1)
        expect(alone.locator("#connection-banner")).to_have_count(0)
        assert alone.evaluate("() => localStorage.getItem('wordjudge.hall')") is None
        alone.context.close()


def _lone_kiosk(server: LiveServer) -> str:
    added = run("device", "add", "kiosk 1", "--role", "kiosk", "--data-dir", server.data_dir)
    assert added.exit_code == 0, added.output
    return str(added.stdout.strip())


class _HttpsServer(LiveServer):
    """A hall server served over HTTPS with the hall's certificate (``wordjudge serve`` picks tls/server.pem up by
    itself), its public address and its peer's https://."""

    def __init__(self, plain: LiveServer, peer: LiveServer) -> None:
        super().__init__(plain.data_dir)
        self.port, self.base = plain.port, f"https://127.0.0.1:{plain.port}"
        self.trust = trusting(self.data_dir / "tls" / "hall-ca.pem")
        database = plain.extra[plain.extra.index("--database") + 1]
        peers = f"https://127.0.0.1:{peer.port}"
        self.extra = ("--database", database, "--public-url", self.base, "--peers", peers, "--log-level", "warning")

    def start(self) -> None:
        self.process = serve_process(self.data_dir, "--port", str(self.port), *self.extra, prefix=self.prefix)
        wait_for_health(self.base, self.process, verify=self.trust)


def _over_https(hall: Hall) -> ssl.SSLContext:
    """The hall's two servers over HTTPS: the hall's CA made on a, b's certificate requested there and signed on a
    (as deploy/hall.md says: the CA's key never leaves a), each machine's certificate for 127.0.0.1. Returns a context that trusts the hall's CA alone."""
    made = hall_certs(hall.a.data_dir)
    second_machine_certs(hall.a.data_dir, hall.b.data_dir, hall.a.data_dir.parent / "stick")  # no CA key on b
    hall.a, hall.b = _HttpsServer(hall.a, hall.b), _HttpsServer(hall.b, hall.a)
    return trusting(made.ca_pem)


def _phone_over_tls(phone: FakePeer, folder: Path) -> None:
    """The phone answers TLS with a certificate of its own CA for the same address (all a phone can have)."""
    certs = other_ca_certs(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs.cert, certs.key)
    server = phone._server  # a test's fake: its listening socket, wrapped before it serves
    server.socket = context.wrap_socket(server.socket, server_side=True)


@pytest.mark.browser
def test_over_https_a_reload_while_a_phone_holds_the_kiosks_address_gives_it_nothing(
    hall: Hall, browser: Browser, tmp_path: Path
) -> None:
    """Over HTTPS (the hall's certificate, trusted by the kiosk's Chromium as deploy/kiosk-setup.sh makes it): a
    reload while a phone answers at the page's address gets nothing from it, and gives it nothing. Chromium refuses
    the phone's certificate, so the offline shell's copy of the page answers, and proves the server the kiosk
    followed before its first request. No banner: the connection is the hall's."""
    trust = _over_https(hall)
    home = chromium_home(tmp_path / "home", hall.a.data_dir / "tls" / "hall-ca.pem")
    kiosk_browser = browser.browser_type.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env={**os.environ, "HOME": str(home)}
    )
    try:
        page, token = _followed_to_the_standby(hall, kiosk_browser, verify=trust)
        expect(page.locator("#connection-banner")).to_have_count(0)
        phone = FakePeer(hall.a.port, {"/": json_answer({"the phone": "answers"})})
        _phone_over_tls(phone, tmp_path / "phone")
        kiosk_agent = page.evaluate("() => navigator.userAgent")
        with phone:
            made = reload_noting(page)
            expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
            assert made, "the reloaded page asked nothing"
            assert made[0].startswith(f"{hall.b.base}/api/hall/proof?"), made
            _verdict(page, "cat, zzxq", "UNACCEPTABLE")
            expect(page.locator("#connection-banner")).to_have_count(0)
        assert phone.heard_from(kiosk_agent) == [], phone.heard  # not even a request: the handshake failed before it
        _given_nothing(phone.heard, token)  # nor from anything else (another check's look at this machine's ports)
        page.context.close()
    finally:
        kiosk_browser.close()
        for server in (hall.a, hall.b):
            if server.process is not None:
                server.stop()
