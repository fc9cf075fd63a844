"""The hall trusts only what proves itself (issue 34): a phone answering at the standby's address, while that
machine is off, can neither stop the active server nor give a kiosk a verdict that was never recorded.

Each test puts a :class:`~tests.fake_peer.FakePeer` at the standby server's address (its server stopped) and
attacks as the outside review did: claims of a later or the same epoch (as health said them, unsigned, signed
with another key, replayed from the real standby's earlier answer), a 400 MB answer, an answer dripped a byte at a
time, free text in a standby's list of lexicons; a kiosk page and the TD's console in Chromium. Before, one health
answer fenced the active server in 0.3 s; the kiosks followed the phone and showed its ACCEPTABLE."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, expect

from wordjudge.access.access_store import AccessStore
from wordjudge.hall.peers import AGENT as PEER_AGENT
from wordjudge.hall.peers import Claim, PeerSays, signed
from wordjudge.hall.proof import HallKey
from wordjudge.hall.roles import ACTIVE, FENCED, STANDBY, latest_event_file
from wordjudge.service.opening import serving_of
from wordjudge.service.settings import Settings
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.event import EVENT_FILE

from .browser import new_page, open_enrolled
from .fake_peer import FakePeer, dripped_answer, huge_answer, json_answer
from .hall_lab import SYNC_WAIT, Hall, add_td, challenge, console_sign_in, kill_machine, step
from .test_cli_access import run
from .test_kiosk import hold_adjudicate, type_challenge

pytestmark = pytest.mark.sqlite_only("starts PostgreSQL clusters of its own: runs in the suite's first pass")


def _health(base: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{base}/api/health", timeout=30).json()
    return body


def _until(check: Any, seconds: float = 30, what: str = "") -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, what or "never came"
        time.sleep(0.2)
    return found


_EVENT = 'name = "{name}"\n[[division]]\nname = "Open"\nlexicon = "demo"\nrule = "five-per-word"\n'


def _close_other_pages(browser: Browser) -> None:
    """Close the pages earlier tests left open: a console page keeps polling its own address, whose port the fake
    may hold now (and 127.0.0.1's cookies are every port's)."""
    for context in browser.contexts:
        context.close()


def _a_claim(url: str, role: str, epoch: int, nonce: str = "0" * 32) -> dict[str, Any]:
    return Claim(url, role, epoch, url, "2026-11-27T12:00:00.000+00:00", nonce).as_dict()


@pytest.fixture
def kiosk(hall: Hall) -> str:
    added = run("device", "add", "kiosk 1", "--role", "kiosk", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    assert added.exit_code == 0, added.output
    return str(added.stdout.strip())


@pytest.fixture
def lone_active(hall: Hall, kiosk: str) -> Hall:
    """The hall with its active server alone: the standby machine's PostgreSQL stopped, and the TD has let the
    hall go on without it (`standby alone`), so that no synchronous standby proves the active server is still
    the hall's: what a peer claims is all it has to go on. The standby's server is stopped. The event is a real
    one (a demo's is never put on the hall's record)."""
    for folder in (hall.a.data_dir, hall.b.data_dir):
        (folder / EVENT_FILE).write_text(_EVENT.format(name="Set up"))
    hall.a.start()
    hall.standby.stop("immediate")
    alone = run("standby", "alone", "--database", hall.admin_a, "--yes")
    assert alone.exit_code == 0, alone.output
    return hall


def _still_active(hall: Hall, kiosk: str, request_id: str) -> None:
    health = _health(hall.a.base)
    assert (health["state"], health["hall"]["role"]) == ("ok", ACTIVE), health
    made = challenge(hall.a.base, kiosk, request_id)
    assert made.status_code == 201, made.text


@pytest.mark.live
@pytest.mark.parametrize(
    ("attack", "why"),
    [
        ("health", "its answer is not a hall server's claim"),  # the review's: health says "active, epoch 2"
        ("unsigned", "its answer is not signed with this hall's key over this server's question"),
        ("other_key", "its answer is not signed with this hall's key over this server's question"),
        ("same_epoch", "its answer is not signed with this hall's key over this server's question"),
    ],
)
def test_a_claim_that_proves_nothing_neither_fences_nor_splits_the_active_server(
    lone_active: Hall, kiosk: str, attack: str, why: str
) -> None:
    hall, b = lone_active, lone_active.b.base
    other = HallKey(secrets.token_bytes(32))
    answers = {
        "health": {"/api/health": json_answer({"hall": {"role": "active", "epoch": 2, "active_url": b}})},
        "unsigned": {"/api/hall/claim": json_answer({"claim": _a_claim(b, ACTIVE, 2), "mac": None})},
        "other_key": {"/api/hall/claim": json_answer(signed(other, Claim(b, ACTIVE, 2, b, "", "0" * 32)))},
        "same_epoch": {"/api/hall/claim": json_answer({"claim": _a_claim(b, ACTIVE, 1), "mac": "00" * 32})},
    }[attack]
    with FakePeer(hall.b.port, answers) as fake:
        _until(lambda: fake.heard, what="the active server never asked its peer")
        time.sleep(2.5)  # two more looks of the hall
        _still_active(hall, kiosk, f"under-{attack}")
        health = _health(hall.a.base)
        [warning] = [w for w in health["warnings"] if "does not prove it is that server" in w]
        assert f"something answers at {b}" in warning
        assert why in warning
        [peer] = health["hall"]["peers"]
        assert (peer["url"], peer["proven"], peer["role"]) == (b, False, None)


@pytest.mark.live
def test_a_replay_of_the_real_standbys_signed_answer_proves_nothing(hall: Hall, kiosk: str) -> None:
    hall.a.start()
    hall.b.start()
    # What a phone on the Wi-Fi could have recorded: the real standby's signed answer to some question.
    recorded = httpx.get(f"{hall.b.base}/api/hall/claim", params={"nonce": "ab" * 16}).json()
    assert recorded["mac"]
    assert recorded["claim"]["role"] == STANDBY
    forged = {**recorded, "claim": {**recorded["claim"], "role": ACTIVE, "epoch": 2}}
    hall.b.stop()
    hall.standby.stop("immediate")
    assert run("standby", "alone", "--database", hall.admin_a, "--yes").exit_code == 0
    for replayed in (recorded, forged):
        with FakePeer(hall.b.port, {"/api/hall/claim": json_answer(replayed)}) as fake:
            _until(lambda fake=fake: len(fake.heard_from(PEER_AGENT)) >= 2)
            _still_active(hall, kiosk, f"replayed-{len(replayed['claim'])}-{replayed['claim']['role']}")
            [peer] = _health(hall.a.base)["hall"]["peers"]
            assert (peer["proven"], peer["unproven"]) == (False, "not_signed")


@pytest.mark.live
def test_a_peer_answering_at_length_or_a_byte_at_a_time_holds_nothing(lone_active: Hall, kiosk: str) -> None:
    hall = lone_active
    assert hall.a.process is not None
    status = Path(f"/proc/{hall.a.process.pid}/status")

    def rss_mib() -> float:
        line = next(line for line in status.read_text().splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    before = rss_mib()
    with FakePeer(hall.b.port, {"/api/hall/claim": huge_answer(400)}) as fake:
        _until(lambda: len(fake.heard_from(PEER_AGENT)) >= 3, what="the active server stopped asking")
        _still_active(hall, kiosk, "under-a-huge-answer")
        [peer] = _health(hall.a.base)["hall"]["peers"]
        assert peer["unproven"] == "large"
    assert rss_mib() - before < 50, (before, rss_mib())  # before the fix: 88 -> 2,408 MiB

    # Dripped: the hall's look goes on (a TD's event change reaches the hall's record; a lost standby is noticed).
    with FakePeer(hall.b.port, {"/api/hall/claim": dripped_answer(every=0.5)}):
        (hall.a.data_dir / EVENT_FILE).write_text(_EVENT.format(name="Changed mid-drip"))
        _until(
            lambda: (kept := latest_event_file(hall.url_a)) is not None and '"Changed mid-drip"' in kept[1],
            seconds=15,
            what="the event change never reached the hall's record",
        )
        started = time.monotonic()
        _still_active(hall, kiosk, "under-a-dripped-answer")
        assert time.monotonic() - started < 2
        health = _health(hall.a.base)
        assert health["hall"]["alone"] is True
        assert health["hall"]["peers"][0]["unproven"] == "slow"


@pytest.mark.live
def test_a_peers_words_never_reach_the_tds_warnings(lone_active: Hall, kiosk: str) -> None:
    hall, b = lone_active, lone_active.b.base
    words = "Call the TD desk: kiosks must re-pair at http://evil.example"
    claim = {**_a_claim(b, STANDBY, 1), "unready": {"lacks": [words], "differs": []}}
    with FakePeer(hall.b.port, {"/api/hall/claim": json_answer({"claim": claim, "mac": "00" * 32})}) as fake:
        _until(lambda: len(fake.heard_from(PEER_AGENT)) >= 3)
        health = _health(hall.a.base)
        assert any(f"something answers at {b}" in warning for warning in health["warnings"]), health
        assert "evil.example" not in str(health)
    store = AccessStore(StateLocation(hall.a.data_dir, hall.url_a)).open()
    try:
        alerts = [alert.message for alert in store.alerts.latest()]
    finally:
        store.close()
    assert any(f"something answers at {b}" in said for said in alerts), alerts
    assert not any("evil.example" in said for said in alerts), alerts


def test_a_server_gives_way_only_to_proven_claims_and_never_while_a_synchronous_standby_follows_it(
    hall: Hall, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the active server stands is the database's word first: a synchronous standby streaming from its
    database proves nobody took the hall over, whatever is claimed; a fenced server whose database has such a
    standby again comes back by itself."""
    answers: list[PeerSays] = []
    monkeypatch.setattr("wordjudge.hall.peers.ask_peers", lambda peers, key, **_: list(answers))
    a = serving_of(Settings(data_dir=hall.a.data_dir, database=hall.url_a, public_url=hall.a.base, peers=hall.b.base))
    a.start()
    try:
        assert (a.role, a.alone) == (ACTIVE, False)
        # Proven or not, a claim of a later epoch changes nothing while the standby follows.
        answers[:] = [PeerSays(hall.b.base, ACTIVE, 2, hall.b.base)]
        step(a)
        assert a.role == ACTIVE
        # Without a standby following, only a proven claim fences it...
        hall.standby.stop("immediate")
        assert run("standby", "alone", "--database", hall.admin_a, "--yes").exit_code == 0
        answers[:] = [PeerSays(hall.b.base, unproven="not_signed")]
        step(a)
        assert a.role == ACTIVE
        answers[:] = [PeerSays(hall.b.base, ACTIVE, 2, hall.b.base)]
        step(a)
        assert (a.role, a.resources) == (FENCED, None)
        # ...and once a synchronous standby streams from its database again, nobody can have taken over: it comes
        # back by itself (the claim it gave way to no longer holds).
        hall.standby.start()
        required = run("standby", "require", "--database", hall.admin_a)
        assert required.exit_code == 0, required.output
        deadline = time.monotonic() + SYNC_WAIT
        while a.role != ACTIVE:
            assert time.monotonic() < deadline, "it stayed fenced"
            step(a)
            time.sleep(0.2)
        assert a.resources is not None
    finally:
        a.close()


@pytest.mark.browser
def test_a_kiosk_never_shows_a_verdict_from_something_that_cannot_prove_it_is_the_hall(
    hall: Hall, kiosk: str, browser: Browser
) -> None:
    _close_other_pages(browser)
    hall.a.start()
    hall.b.start()
    page = new_page(browser)
    open_enrolled(page, hall.a, "kiosk", kiosk)
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
    page.wait_for_function("() => localStorage.getItem('wordjudge.hall') !== null")  # [a, b], from a's health
    hall.b.stop()
    verdict = {
        "id": 99,
        "kind": "challenge",
        "verdict": "acceptable",
        "words": ["ZZZQ", "QXZV"],
        "hash": "0" * 64,
        "created_at": "2026-11-27T12:00:00.000+00:00",
        "replayed": False,
    }
    lies = {
        "/api/health": json_answer({"ok": True, "status": 200, "state": "ok", "hall": {"role": "active", "epoch": 2}}),
        "/api/challenges": json_answer(verdict, 201),
        "/api/hall/proof": json_answer({"url": hall.b.base, "role": "active", "epoch": 2, "mac": "00" * 32}),
    }
    with FakePeer(hall.b.port, lies) as fake:
        kill_machine(hall.primary, hall.a)  # the active machine dies; the phone holds the standby's address
        type_challenge(page, "12", "zzzq, qxzv")
        page.get_by_role("button", name="Done: hand over to the opponent").click()
        hold_adjudicate(page)
        # No verdict: the kiosk cannot reach the hall's server, and says to call the TD.
        expect(page.locator("#app")).not_to_have_attribute("data-screen", "verdict")
        expect(page.locator("body")).to_contain_text("call the TD")
        expect(page.locator("body")).not_to_contain_text("ACCEPTABLE")
        # The phone got a nonce and a hint: never the kiosk's token, its request id or its words.
        assert fake.heard, "the kiosk never looked at the standby's address"
        for heard in fake.heard:
            assert "authorization" not in {name.lower() for name in heard.headers}, heard
            assert kiosk not in heard.path
            assert b"ZZZQ" not in heard.body.upper()
            assert "zzzq" not in heard.path.lower()
            assert not (heard.method == "POST" and heard.path.startswith("/api/challenges")), heard
    page.context.close()


@pytest.mark.browser
def test_the_consoles_banner_never_sends_the_td_to_sign_in_where_nothing_proves_itself(
    hall: Hall, browser: Browser
) -> None:
    _close_other_pages(browser)
    hall.a.start()
    hall.b.start()
    add_td(hall)
    page = new_page(browser, "desktop")
    page.goto(f"{hall.a.base}/td")
    console_sign_in(page)
    page.wait_for_function("() => localStorage.getItem('wordjudge.hall') !== null")
    hall.b.stop()
    banner = page.locator("#servers-banner")
    lies = {
        "/api/hall/proof": json_answer({"url": hall.b.base, "role": "active", "epoch": 2, "mac": "00" * 32}),
        "/td": json_answer({"sign in": "here"}),
    }
    with FakePeer(hall.b.port, lies) as fake:
        kill_machine(hall.primary, hall.a)
        _until(
            lambda: any(h.path.startswith("/api/hall/proof") for h in fake.heard),
            seconds=20,
            what="the console never asked the standby's address to prove itself",
        )
        time.sleep(1)  # lets the console act on the lie if it would: it shows no link (a thing that must not happen)
        expect(banner.get_by_role("link")).to_have_count(0)
        assert not any(heard.path.startswith("/td") for heard in fake.heard)
    page.context.close()


def test_a_device_proof_is_the_servers_word_for_its_own_address_only(hall: Hall, kiosk: str) -> None:
    """The proof endpoint: only the active server answers, keyed with the device's proof key (the hall key's, never
    the database's), and signs its own address (a proof relayed from the hall's other server does not pass for
    this one); a hint that names nobody gets an answer of the same shape that no key checks."""
    from wordjudge.hall.proof import digest, proof_mac, read_key

    hall.a.start()
    hall.b.start()
    hall_key = read_key(hall.a.data_dir)
    assert hall_key is not None
    stored, nonce = digest(kiosk), secrets.token_hex(16)
    key = hall_key.proof_key("device", stored)
    answer = httpx.get(f"{hall.a.base}/api/hall/proof", params={"nonce": nonce, "hint": stored[:16], "of": "device"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["url"], body["role"], body["epoch"]) == (hall.a.base, ACTIVE, 1)
    assert body["mac"] == proof_mac(key, nonce=nonce, url=hall.a.base, role=ACTIVE, epoch=1)
    assert body["mac"] != proof_mac(key, nonce=nonce, url=hall.b.base, role=ACTIVE, epoch=1)
    assert body["mac"] != proof_mac(stored, nonce=nonce, url=hall.a.base, role=ACTIVE, epoch=1)  # the database's
    unknown = httpx.get(f"{hall.a.base}/api/hall/proof", params={"nonce": nonce, "hint": "0" * 16, "of": "device"})
    assert (unknown.status_code, sorted(unknown.json()), len(unknown.content)) == (
        200,
        sorted(body),
        len(answer.content),
    )
    standby = httpx.get(f"{hall.b.base}/api/hall/proof", params={"nonce": nonce, "hint": stored[:16], "of": "device"})
    assert (standby.status_code, standby.json()["code"]) == (503, "not_active")
    bad = httpx.get(f"{hall.a.base}/api/hall/proof", params={"nonce": "x", "hint": stored[:16], "of": "device"})
    assert (bad.status_code, bad.json()["message"]["key"]) == (422, "error.hall.nonce")


def _leaked_key_claims(key: HallKey, url: str, epoch: int) -> Any:
    """A phone's answer, holding a copy of the hall key: a claim signed over each asker's own nonce that ``url`` is
    the hall's active server at ``epoch`` (as the real standby would say after a takeover)."""
    from urllib.parse import parse_qs, urlsplit

    def answer(handler: Any) -> None:
        nonce = parse_qs(urlsplit(handler.path).query).get("nonce", [""])[0]
        claim = Claim(url, ACTIVE, epoch, url, "2026-11-29T12:00:00.000+00:00", nonce)
        json_answer(signed(key, claim))(handler)

    return answer


@pytest.mark.live
def test_a_server_fenced_by_a_copied_key_comes_back_by_itself_once_nothing_proves_a_later_epoch(
    lone_active: Hall, kiosk: str
) -> None:
    """Issue 44: a copied hall key fences the active server while no synchronous standby follows it. Before, it
    stayed fenced after the phone left, until the TD restarted it (every verdict in between lost). Now, while the
    claimant goes on proving a later epoch (as a real takeover's server does) it stays fenced; once nothing has
    for UNFENCE_AFTER_S seconds, it adjudicates again by itself."""
    from wordjudge.hall.peers import UNFENCE_AFTER_S
    from wordjudge.hall.proof import read_key

    hall, b = lone_active, lone_active.b.base
    leaked = read_key(hall.a.data_dir)
    assert leaked is not None
    with FakePeer(hall.b.port, {"/api/hall/claim": _leaked_key_claims(leaked, b, 2)}):
        _until(lambda: _health(hall.a.base)["hall"]["role"] == FENCED, what="the leaked key never fenced it")
        fenced_at = time.monotonic()
        refused = challenge(hall.a.base, kiosk, "while-fenced")
        assert (refused.status_code, refused.json()["code"]) == (503, "not_active")
        time.sleep(UNFENCE_AFTER_S + 2)  # proven again every second: it stays fenced
        assert _health(hall.a.base)["hall"]["role"] == FENCED
    left = time.monotonic()
    _until(lambda: _health(hall.a.base)["hall"]["role"] == ACTIVE, seconds=UNFENCE_AFTER_S + 10, what="stayed fenced")
    back = time.monotonic() - left
    _still_active(hall, kiosk, "after-the-phone-left")
    print(f"fenced {left - fenced_at:.1f} s while the phone proved epoch 2; active again {back:.1f} s after it left")
    assert back < UNFENCE_AFTER_S + 5

    # The TD is told: if that server really took over (and is only out of reach), this one must be stopped.
    def alerts() -> list[str]:
        store = AccessStore(StateLocation(hall.a.data_dir, hall.url_a)).open()
        try:
            return [alert.message for alert in store.alerts.latest()]
        finally:
            store.close()

    told = _until(lambda: [said for said in alerts() if f"fenced by {b}" in said], what="the TD was never told")
    assert "stop this server now" in told[0]
