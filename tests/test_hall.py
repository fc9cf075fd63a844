"""A hall of two machines on loopback: two PostgreSQL clusters (the second a synchronous standby of the first),
two ``wordjudge serve``, one active and one standby. The active machine dies (kill -9 of its PostgreSQL and its
server), the TD promotes the standby, and nothing acknowledged is lost or recorded twice; the old machine, back,
never adjudicates again (see wordjudge/hall.py, wordjudge/serving.py)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import psycopg
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, expect

from wordjudge.access.access_store import AccessStore
from wordjudge.base.errors import Message
from wordjudge.hall.event_copy import BEFORE_TAKEOVER, adopt_event_file
from wordjudge.hall.peers import PeerSays, Unready, parse_peers, rival, superseded_by, unready_for, unready_warning
from wordjudge.hall.proof import KEY_FILE, make_key
from wordjudge.hall.roles import (
    ACTIVE,
    FENCED,
    SPLIT,
    STANDBY,
    WAITING,
    alone,
    event_file_digest,
    latest_event_file,
    promote,
    replicas,
)
from wordjudge.log.audit import open_log
from wordjudge.log.chain import HEAD_HEX, HeadMark
from wordjudge.model.records import Kind, RecordFilter
from wordjudge.service.opening import serving_of
from wordjudge.service.serving import ALONE_ALERT, UNREADY_ALERT, Serving
from wordjudge.service.settings import Settings
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.event import EVENT_FILE, dump_event
from wordjudge.tournament.event_loading import load_event
from wordjudge.web.app import create_app
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import read_word_list

from .browser import new_page, open_enrolled
from .clocks import ShiftedClock
from .hall_lab import (
    SYNC_WAIT,
    Acknowledged,
    Hall,
    add_td,
    challenge,
    console_sign_in,
    freeze_machine,
    hall_server,
    kill_machine,
    settled_once,
    step,
    sync_standby_streams,
)
from .helpers import PASSWORD, LiveServer, eventually, free_port, write_event, write_list
from .postgres import Cluster
from .test_cli_access import run
from .test_kiosk import hold_adjudicate, type_challenge

pytestmark = pytest.mark.sqlite_only("starts PostgreSQL clusters of its own, or none: runs in the suite's first pass")

# How far the standby machine's clock runs behind the active one's in the takeover test below.
BEHIND_S = 30


# What the warning of a standby lacking a lexicon has the TD type (deploy/hall.md, set-up step 3): the profiles folder
# only where there is one (tar refuses a folder that is not there).
COPY_LEXICONS = (
    "Copy this machine's lexicons folder, and its profiles folder where it has one, to the standby's data folder: "
    "here, sudo tar -C /var/lib/wordjudge -czf /media/usb/wordjudge-lexicons.tar.gz lexicons "
    "$(sudo test -d /var/lib/wordjudge/profiles && echo profiles); there, sudo tar -C /var/lib/wordjudge -xzf /media/usb/wordjudge-lexicons.tar.gz "
    "&& sudo chown -R wordjudge:wordjudge /var/lib/wordjudge (deploy/hall.md, set-up step 3)"
)


def _alerted(data_dir: Path, url: str, kind: str = ALONE_ALERT) -> bool:
    store = AccessStore(StateLocation(data_dir, url)).open()
    try:
        return any(alert.kind == kind for alert in store.alerts.latest())
    finally:
        store.close()


@pytest.mark.live
def test_the_standby_takes_over_with_no_verdict_lost_and_the_old_machine_never_adjudicates_again(hall: Hall) -> None:
    hall.a.start()
    hall.b.start()
    tokens = []
    for kiosk in range(3):  # three kiosks: each may challenge 6 times a minute
        added = run(
            "device",
            "add",
            f"kiosk {kiosk}",
            "--role",
            "kiosk",
            "--data-dir",
            hall.a.data_dir,
            "--database",
            hall.url_a,
        )
        assert added.exit_code == 0, added.output
        tokens.append(added.stdout.strip())
    token = tokens[0]

    hall.primary.create_role("not_super", "its-password")  # as the server's role: it may read the hall's tables
    with hall.primary.connect("hall") as connection:
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO not_super")

    # The active server adjudicates; the standby says it is one, naming the active server, and adjudicates nothing.
    acknowledged: Acknowledged = {}
    for number in range(12):
        words = "cat dog" if number % 3 else "cat zzxq"
        kiosk_token = tokens[number % 3]
        response = challenge(hall.a.base, kiosk_token, f"before-{number}", words)
        assert response.status_code == 201, response.text
        acknowledged[f"before-{number}"] = (kiosk_token, response.json())
    docket = acknowledged["before-11"][1]
    printed = HeadMark(int(docket["id"]), str(docket["hash"])[:HEAD_HEX], "a docket printed before the failover")
    a_health = httpx.get(f"{hall.a.base}/api/health").json()
    assert a_health["hall"]["role"] == ACTIVE
    assert a_health["hall"]["epoch"] == 1
    assert a_health["hall"]["servers"] == [hall.a.base, hall.b.base]
    standing = httpx.get(f"{hall.b.base}/api/health")
    assert standing.status_code == 503
    assert (standing.json()["state"], standing.json()["hall"]["active_url"]) == (STANDBY, hall.a.base)
    assert standing.json()["server_id"] == a_health["server_id"]  # one server to a device
    refused = challenge(hall.b.base, token, "on-the-standby")
    assert refused.status_code == 503
    assert refused.json()["code"] == "not_active"
    assert hall.a.base in refused.json()["error"]
    assert refused.json()["details"]["active_url"] == hall.a.base

    # The TD cannot promote while the active server proves itself to the standby's server: the hall would have two.
    early = run("standby", "promote", "--database", hall.admin_b, "--port", str(hall.b.port), "--yes")
    assert early.exit_code == 1
    assert f"{hall.a.base} still proves itself the hall's active server" in early.output
    # Not told the port (as `sudo -u postgres` runs it, with no wordjudge.env): this machine's listening ports are
    # asked, and the hall's server among them found by the hall's identity. Before, port 8000 was asked, nothing
    # answered there, and the standby was promoted with the active server alive.
    found = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert found.exit_code == 1, found.output
    assert f"{hall.a.base} still proves itself the hall's active server" in found.output

    # The active machine dies; the TD promotes the standby; the kiosk's next challenge gets its verdict there.
    kill_machine(hall.primary, hall.a)
    died = time.monotonic()
    # Not as the server's own role: promotion is a superuser's, and the command says so before it changes anything.
    as_server = run("standby", "promote", "--database", hall.standby.url("hall", "not_super", "its-password"), "--yes")
    assert as_server.exit_code == 1
    assert "only a superuser of that server may do" in as_server.output
    promoted = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert promoted.exit_code == 0, promoted.output
    while (response := challenge(hall.b.base, token, "after-failover-0")).status_code != 201:
        assert response.status_code == 503, response.text
        assert time.monotonic() - died < SYNC_WAIT, response.text
        time.sleep(0.1)
    assert time.monotonic() - died < SYNC_WAIT
    b_health = httpx.get(f"{hall.b.base}/api/health").json()
    assert (b_health["hall"]["role"], b_health["hall"]["epoch"]) == (ACTIVE, 2)
    assert b_health["server_id"] == a_health["server_id"]
    # No standby follows it now: said by health within a look or two, and the TD alerted.
    while not (b_health := httpx.get(f"{hall.b.base}/api/health").json())["hall"]["alone"]:
        assert time.monotonic() - died < SYNC_WAIT + 5
        time.sleep(0.2)
    assert any("this machine only" in warning for warning in b_health["warnings"])
    while not _alerted(hall.b.data_dir, hall.url_b):  # the TD's console lists the alert
        assert time.monotonic() - died < SYNC_WAIT + 10
        time.sleep(0.2)

    # Every request acknowledged before the death settles there as it was: none lost, none recorded twice.
    settled_once(hall.b, hall.url_b, acknowledged, printed, "after-failover-0")

    # The old machine comes back: its PostgreSQL as it was, its server as it was started. It learns from its peer
    # that it was replaced, and never adjudicates again; it names the active server.
    hall.primary.start()
    hall.a.start()
    back = httpx.get(f"{hall.a.base}/api/health")
    assert back.status_code == 503
    assert (back.json()["state"], back.json()["hall"]["active_url"]) == (FENCED, hall.b.base)
    fenced = challenge(hall.a.base, token, "on-the-old-machine")
    assert fenced.status_code == 503
    assert fenced.json()["code"] == "not_active"
    assert f"replaced by {hall.b.base}" in fenced.json()["error"]


@pytest.mark.live
def test_a_standby_whose_clock_is_seconds_behind_takes_over_with_the_chain_verifying_and_nothing_lost(
    hall: Hall, tmp_path: Path
) -> None:
    """Two laptops are never in step: the standby machine's clock runs 30 s behind the active one's (its server's
    clock shifted by libfaketime; loopback alone shares one clock). The issue measured 5 s; 30 leave the takeover
    (1 to 3 s on a quiet machine, past 6 s beside other checks) room to come before the standby's clock passes the
    old server's last record, and the step it finds is bounded by the takeover's time as the test measures it.
    Before, the new active server's first record was dated before the old server's last one: `audit verify` called
    the failover's log broken, and the next start stopped the hall. Now its records are held at the log's last time,
    the TD is told the offset while both machines run (each server's health, the active one's console) and the step
    at the takeover, and it is on record."""
    hall.b.prefix = ShiftedClock(tmp_path, f"-{BEHIND_S}").prefix
    hall.a.start()
    hall.b.start()
    td = run(
        "td",
        "add",
        "alice",
        "--password-stdin",
        "--data-dir",
        hall.a.data_dir,
        "--database",
        hall.url_a,
        stdin=PASSWORD + "\n",
    )
    assert td.exit_code == 0, td.output
    added = run("device", "add", "kiosk 1", "--role", "kiosk", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    token = added.stdout.strip()
    acknowledged: Acknowledged = {}
    for number in range(5):
        response = challenge(hall.a.base, token, f"before-{number}")
        assert response.status_code == 201, response.text
        acknowledged[f"before-{number}"] = (token, response.json())
    docket = acknowledged["before-4"][1]
    printed = HeadMark(int(docket["id"]), str(docket["hash"])[:HEAD_HEX], "a docket printed before the failover")
    # Each server names the machine whose clock is off the hall's reference, the database's (each machine's
    # PostgreSQL runs on the real clock here): the active one names the standby's; the standby names its own, and
    # never the active one's, which is right.
    deadline = time.monotonic() + SYNC_WAIT
    named = f"the clock of {hall.b.base}, the hall's other server, is {BEHIND_S} s behind the database's"
    while not any(named in w for w in _health(hall.a)["warnings"]):
        assert time.monotonic() < deadline, _health(hall.a)
        time.sleep(0.2)
    own = f"this server's clock is {BEHIND_S} s behind the clock of its database"
    warned = _health(hall.b)["warnings"]
    while not any(own in w for w in warned):
        assert time.monotonic() < deadline, warned
        time.sleep(0.2)
        warned = _health(hall.b)["warnings"]
    # (b may also say, beside other checks, that a's proof came late: not a word of a's clock.)
    assert not any(f"the clock of {hall.a.base}" in w or f"that of {hall.a.base}" in w for w in warned), warned
    [peer] = _health(hall.a)["clock"]["peers"]
    assert (peer["url"], round(peer["offset_s"])) == (hall.b.base, -BEHIND_S)
    while not _alerted(hall.a.data_dir, hall.url_a, "clock_offset"):
        assert time.monotonic() < deadline
        time.sleep(0.2)

    # The kiosks challenge until the machine dies: its last record is of the moment of its death.
    sent = time.time()
    last = challenge(hall.a.base, token, "at-the-death")
    assert last.status_code == 201, last.text
    acknowledged["at-the-death"] = (token, last.json())
    kill_machine(hall.primary, hall.a)
    promoted = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert promoted.exit_code == 0, promoted.output
    while (response := challenge(hall.b.base, token, "after-failover-0")).status_code != 201:
        assert response.status_code == 503, response.text
        assert time.monotonic() < deadline + SYNC_WAIT, response.text
        time.sleep(0.1)
    taken_over = time.time()
    # Held at the last time the old server wrote, not dated up to 30 s before it.
    assert response.json()["created_at"] >= last.json()["created_at"]
    while (step := _health(hall.b)["clock"]["step"]) is None:  # told at the clock's next look (every second)
        assert time.monotonic() < deadline + SYNC_WAIT
        time.sleep(0.2)
    assert step["what"] == "clock.behind_log"
    # As far behind the log's last record as the takeover left it: b read its clock between the last record (written
    # after `sent`) and its first verdict (before `taken_over`).
    assert -BEHIND_S - 0.01 < step["seconds"] < -BEHIND_S + (taken_over - sent) + 0.01, (step, taken_over - sent)
    assert "before the log's last record" in " ".join(_health(hall.b)["warnings"])
    log = open_log(StateLocation(hall.b.data_dir, hall.url_b))
    try:
        while not (steps := log.find(RecordFilter(kind=Kind.CHANGE, actor="clock"), limit=5)):
            assert time.monotonic() < deadline + SYNC_WAIT
            time.sleep(0.1)
    finally:
        log.close()
    [on_record] = steps
    assert (on_record.change or {}).get("what") == "clock.behind_log"
    # Nothing lost, nothing twice: the log holds what was acknowledged, the new challenge and the clock's record.
    settled_once(hall.b, hall.url_b, acknowledged, printed, "after-failover-0", on_record.request_id)
    verified = run("audit", "verify", "--data-dir", hall.b.data_dir, "--database", hall.url_b)
    assert verified.exit_code == 0, verified.output


def _health(server: LiveServer) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{server.base}/api/health", timeout=30).json()
    return body


def test_a_server_steps_down_for_good_when_a_peer_took_over_after_it() -> None:
    said = [
        PeerSays("http://b:8000", ACTIVE, 3, "http://b:8000"),
        PeerSays("http://c:8000", STANDBY, 3, "http://b:8000"),
        PeerSays("http://d:8000", unproven="no_answer"),
    ]
    assert superseded_by(2, said) == said[0]
    assert superseded_by(None, said) == said[0]  # a server with no epoch of its own: any active peer is ahead
    assert superseded_by(3, said) is None  # the same epoch is its own
    assert superseded_by(2, said[1:]) is None  # a standby or a silent peer takes nothing over
    assert parse_peers(" http://b:8000/ ,http://b:8000,https://c.local") == ("http://b:8000", "https://c.local")


@pytest.mark.browser
def test_a_kiosk_page_follows_the_hall_to_the_standby_and_gets_its_verdict_there(hall: Hall, browser: Browser) -> None:
    hall.a.start()
    hall.b.start()
    added = run("device", "add", "kiosk 1", "--role", "kiosk", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    page = new_page(browser)
    open_enrolled(page, hall.a, "kiosk", added.stdout.strip())
    expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
    # The kiosk learns the hall's servers from its server's health.
    page.wait_for_function("() => localStorage.getItem('wordjudge.hall') !== null")
    kill_machine(hall.primary, hall.a)
    promoted = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert promoted.exit_code == 0, promoted.output
    eventually(lambda: httpx.get(f"{hall.b.base}/api/health").status_code == 200, "b serves", seconds=SYNC_WAIT)
    # The page still shown is the dead server's: its challenge goes to the active server, and its verdict comes.
    type_challenge(page, "12", "cat, dog")
    page.get_by_role("button", name="Done: hand over to the opponent").click()
    hold_adjudicate(page)
    expect(page.locator("#app")).to_have_attribute("data-screen", "verdict")
    expect(page.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    log = open_log(StateLocation(hall.b.data_dir, hall.url_b))
    try:
        [record] = log.find(RecordFilter(), limit=10)
    finally:
        log.close()
    assert (record.words, record.actor) == (("CAT", "DOG"), "kiosk 1")


@pytest.mark.browser
def test_the_td_console_links_to_the_active_servers_console_from_a_standby_and_after_a_takeover(
    hall: Hall, browser: Browser
) -> None:
    """The console's session is its own server's, so it cannot follow the hall as a device does: it says which
    server's console to open instead. Before, a standby's console showed only an error, and a dead server's
    console told the TD to call the TD."""
    hall.a.start()
    hall.b.start()
    add_td(hall)
    page = new_page(browser, "desktop")
    banner = page.locator("#servers-banner")
    # On the standby: the console names the active server and opens its console.
    page.goto(f"{hall.b.base}/td")
    expect(banner).to_contain_text(f"The event's active server is {hall.a.base}.")
    expect(banner.get_by_role("link")).to_have_attribute("href", f"{hall.a.base}/td")
    banner.get_by_role("link", name=f"Open the console on {hall.a.base}").click()
    expect(page).to_have_url(f"{hall.a.base}/td")
    console_sign_in(page)
    expect(banner).to_be_hidden()  # the active server's console: nothing to say
    page.wait_for_function("() => localStorage.getItem('wordjudge.hall') !== null")  # learnt from health

    # The active machine dies and the standby takes over: the open console (its lists refresh every 5 s) says
    # its server does not answer, and links to the console of the hall's other server.
    kill_machine(hall.primary, hall.a)
    promoted = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert promoted.exit_code == 0, promoted.output
    expect(banner).to_contain_text("If another server of the event has taken over, open the console there")
    [link] = banner.get_by_role("link").all()
    expect(link).to_have_attribute("href", f"{hall.b.base}/td")
    expect(page.locator("#content")).not_to_contain_text("call the TD")
    eventually(lambda: httpx.get(f"{hall.b.base}/api/health").status_code == 200, "b serves", seconds=SYNC_WAIT)
    page.context.clear_cookies()  # two machines are two hosts: a's session cookie never reaches b (here: two ports)
    link.click()
    console_sign_in(page)  # the same account: TD accounts live in the database
    expect(banner).to_be_hidden()
    page.context.close()


def test_only_the_halls_peers_may_call_a_server_from_their_pages(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        database="postgresql://wj@127.0.0.1:1/hall",
        public_url="http://10.0.0.1:8000",
        peers="http://10.0.0.2:8000",
    )
    client = TestClient(create_app(settings))  # no lifespan: a preflight is answered before any route
    asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
    peer = client.options("/api/challenges", headers={"Origin": "http://10.0.0.2:8000", **asked})
    assert peer.status_code == 200
    assert peer.headers["access-control-allow-origin"] == "http://10.0.0.2:8000"
    assert "access-control-allow-credentials" not in peer.headers  # a device's token, never a cookie
    assert "connect-src 'self' http://10.0.0.2:8000;" in peer.headers["content-security-policy"]
    stranger = client.options("/api/challenges", headers={"Origin": "http://10.0.0.9:8000", **asked})
    assert stranger.status_code == 400
    assert "access-control-allow-origin" not in stranger.headers
    alone = TestClient(create_app(Settings(data_dir=tmp_path)))
    assert "connect-src 'self';" in alone.options("/api/health").headers["content-security-policy"]


def _with_lexicon(folder: Path, name: str, words: list[str]) -> None:
    (folder / "lexicons").mkdir(parents=True, exist_ok=True)
    LexiconStore(folder / "lexicons").add(read_word_list(write_list(folder / f"{name}.txt", words)), name)


def test_a_standby_names_the_lexicons_it_could_not_serve_as_the_active_server_does(
    tmp_path: Path, compiled_demo: Path
) -> None:
    active, standby = tmp_path / "a", tmp_path / "b"
    for folder, words in ((active, ["aa", "ab"]), (standby, ["aa", "ab", "ad"])):
        shutil.copytree(compiled_demo, folder / "lexicons" / compiled_demo.name)
        _with_lexicon(folder, "SIDE", words)  # the same name, other words: another edition
    _with_lexicon(active, "EXTRA", ["zo"])
    served = {name: Catalog(active).open(name).fingerprint for name in (compiled_demo.name, "SIDE", "EXTRA")}
    assert unready_for(active, served) is None
    unready = unready_for(standby, served)
    assert unready == Unready(lacks=("EXTRA",), differs=("SIDE",))
    assert unready_warning("http://hall-b:8000", unready).text() == (
        "the standby http://hall-b:8000 could not take this event over as it is served here: it lacks EXTRA, and "
        "its SIDE differ from what is served here (another fingerprint: another edition, or other amendments). "
        f"{COPY_LEXICONS}; this warning goes within seconds of it having them"
    )
    # As a peer's health carries it: names only, checked.
    assert Unready.from_dict(unready.as_dict()) == unready
    assert Unready.from_dict({"lacks": [], "differs": []}) is None
    assert Unready.from_dict({"lacks": ["X" * 65, 3, "OK"], "differs": []}) == Unready(lacks=("OK",))
    assert Unready.from_dict({"lacks": "EXTRA"}) is None
    assert Unready.from_dict({"lacks": ["A"] * 65, "differs": []}) is None


def _warned(server: LiveServer) -> list[str]:
    return [text for text in httpx.get(f"{server.base}/api/health").json()["warnings"] if "the standby" in text]


def _until(look: Callable[[], Any], wanted: Callable[[Any], bool], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while not wanted(seen := look()):
        assert time.monotonic() < deadline, f"still {seen!r} after {seconds} s"
        time.sleep(0.2)
    return seen


@pytest.mark.live
def test_the_td_is_warned_while_the_standby_could_not_serve_the_events_lexicons_as_served(hall: Hall) -> None:
    """A lexicon compiled on the active machine only (a division added during the day) used to be found out at
    the takeover, which then failed; a standby holding another edition under the same name would have
    adjudicated by it. The active server now warns the TD, from what its standby says, while there is time."""
    divisions = [("Open", "demo", "single"), ("Side", "SIDE", "single")]
    for folder in (hall.a.data_dir, hall.b.data_dir):
        write_event(folder, divisions, name="Hall Open")
    _with_lexicon(hall.a.data_dir, "SIDE", ["aa", "ab"])
    hall.a.start()
    hall.b.start()
    lacks = _until(lambda: _warned(hall.a), bool)
    assert lacks == [
        f"the standby {hall.b.base} could not take this event over as it is served here: it lacks SIDE. "
        f"{COPY_LEXICONS}; this warning goes within seconds of it having them"
    ]
    # Another edition under the same name: said as such.
    _with_lexicon(hall.b.data_dir, "SIDE", ["aa", "ab", "ad"])
    differs = _until(lambda: _warned(hall.a), lambda seen: seen != lacks)
    [said_differs] = differs
    assert "its SIDE differ from what is served here (another fingerprint" in said_differs
    # An alert for the TD's console (a change within its minute is counted on it, as alerts are).
    store = AccessStore(StateLocation(hall.a.data_dir, hall.url_a)).open()
    try:
        said = [alert.message for alert in store.alerts.latest() if alert.kind == UNREADY_ALERT]
    finally:
        store.close()
    assert said == lacks
    # The TD copies the active machine's lexicon over: the warning goes.
    shutil.rmtree(hall.b.data_dir / "lexicons" / "SIDE")
    shutil.copytree(hall.a.data_dir / "lexicons" / "SIDE", hall.b.data_dir / "lexicons" / "SIDE")
    _until(lambda: _warned(hall.a), lambda seen: seen == [])


def test_a_role_that_may_not_see_the_standby_does_not_raise_a_false_alarm(hall: Hall) -> None:
    assert alone(replicas(hall.admin_a)) is False  # the superuser sees the synchronous standby streaming
    hall.primary.create_role("watcher", "watcher-password")
    without_right = hall.primary.url("hall", user="watcher", password="watcher-password")
    assert replicas(without_right) is None  # PostgreSQL hides the state: not known, never "alone"
    assert alone(replicas(without_right)) is None
    with hall.primary.connect() as admin:
        admin.execute("GRANT pg_read_all_stats TO watcher")
    assert alone(replicas(without_right)) is False


def _serving(server: LiveServer, url: str, peer: LiveServer) -> Serving:
    """The hall's place of ``server``'s folder as its server would find it, in this process (not served)."""
    serving = serving_of(Settings(data_dir=server.data_dir, database=url, public_url=server.base, peers=peer.base))
    serving.start()
    return serving


def _follow(hall: Hall) -> None:
    """Make the old primary's database follow the promoted standby's: a fresh copy on its old port, as the TD's
    step 6 (deploy/hall.md) or Patroni's rejoin does."""
    hall.primary.stop("immediate")
    shutil.rmtree(hall.primary.data_dir)
    hall.standby.standby(hall.primary.folder, port=hall.primary.port)


def test_a_fenced_server_whose_database_follows_the_active_one_again_is_its_standby(hall: Hall) -> None:
    a = _serving(hall.a, hall.url_a, hall.b)
    try:
        assert (a.role, a.epoch.epoch if a.epoch else None) == (ACTIVE, 1)
        hall.b.start()
        promote(hall.admin_b)
        # It took over: epoch 2.
        eventually(lambda: httpx.get(f"{hall.b.base}/api/health").status_code == 200, "b serves", seconds=SYNC_WAIT)
        step(a)  # its peer proves it is active at a later epoch
        assert (a.role, a.active_url, a.resources) == (FENCED, hall.b.base, None)
        _follow(hall)
        a.step()
        assert (a.role, a.active_url, a.resources) == (STANDBY, hall.b.base, None)
        assert a.view()["epoch"] == 2  # the hall's history, replicated to it
        assert a.health_body()["state"] == STANDBY
        assert a.refusal().msg.key == "error.hall.standby"
    finally:
        a.close()


def test_an_active_server_whose_database_is_made_a_standby_under_it_steps_down(hall: Hall) -> None:
    # As Patroni does to a primary that lost the hall's leadership: its peers are out of reach (a partition, or
    # no server runs there), so only its database tells.
    a = _serving(hall.a, hall.url_a, hall.b)
    b = _serving(hall.b, hall.url_b, hall.a)
    try:
        assert (a.role, b.role) == (ACTIVE, STANDBY)
        promote(hall.admin_b)
        b.step()
        assert (b.role, b.epoch.epoch if b.epoch else None) == (ACTIVE, 2)
        _follow(hall)
        a.step()
        assert (a.role, a.active_url, a.resources) == (STANDBY, hall.b.base, None)
        assert a.refusal().msg.key == "error.hall.standby"
    finally:
        a.close()
        b.close()


def test_the_td_is_warned_when_the_standby_dies_even_though_nothing_can_be_committed(hall: Hall) -> None:
    # The TD-confirmed way: with the standby gone, every commit waits for it (by design: two machines cannot
    # tell a dead standby from a cut cable). The warning must not wait with them: health says it at once,
    # and the watcher goes on looking (here: a second look that returns).
    a = _serving(hall.a, hall.url_a, hall.b)
    try:
        a.step()
        assert a.alone is False
        hall.standby.stop("immediate")
        looked = threading.Thread(target=a.step, daemon=True)
        looked.start()
        looked.join(10)
        assert not looked.is_alive(), "the hall's watcher hangs on the alert it cannot commit"
        assert a.alone is True
        # Every commit waits: the hall is stopped, and health says so, never "the verdicts live on this machine".
        assert a.warnings() == [Message("error.hall.stopped")]
        second = threading.Thread(target=a.step, daemon=True)
        second.start()
        second.join(10)
        assert not second.is_alive()
    finally:
        hall.standby.start()  # the alert's commit, waiting, goes through: nothing is left hanging
        a.close()


# The bound for a dead standby to be told: wal_sender_timeout (5 s, as the hall's steps set it) and a look
# of the hall every second leave room for a loaded machine.
SILENT_DEATH_SEEN_S = 10
SERVERLESS_TOLD_S = 15  # the bound for a standby machine whose server does not answer


def _told(health: dict[str, Any], words: str) -> bool:
    return any(words in warning for warning in health["warnings"])


def _warning_keys(server: LiveServer) -> list[str]:
    """The keys of the hall's warnings in ``server``'s health (its transport's aside)."""
    body = httpx.get(f"{server.base}/api/health", timeout=30).json()
    return [message["key"] for message in body["warning_messages"] if message["key"].startswith("error.hall.")]


@pytest.mark.live
def test_health_says_the_hall_is_stopped_within_seconds_of_a_silent_standby_death(hall: Hall) -> None:
    # A power cut closes no connection: the active machine's walsender keeps the dead standby as streaming until
    # wal_sender_timeout. With PostgreSQL's default (60 s) health said "ok" for a minute while no verdict could
    # be given, then "the verdicts live on this machine only", false while the commits waited. Now health names a
    # timeout that holds the news back, and with the guide's 5 s says within 10 s that the hall is stopped.
    with hall.primary.connect() as connection:
        connection.execute("ALTER SYSTEM RESET wal_sender_timeout")
        connection.execute("SELECT pg_reload_conf()")
    hall.a.start()
    hall.b.start()
    eventually(lambda: "error.hall.sender_timeout" in _warning_keys(hall.a), "the default timeout named", seconds=15)
    with hall.primary.connect() as connection:
        connection.execute("ALTER SYSTEM SET wal_sender_timeout = '5s'")
        connection.execute("SELECT pg_reload_conf()")
    eventually(lambda: _warning_keys(hall.a) == [] or None, "the hall whole, nothing to warn of", seconds=15)
    thaw = freeze_machine(hall.standby, hall.b)
    try:
        died = time.monotonic()
        said: list[list[str]] = []  # every warning said meanwhile: the standby's server not answering comes first

        def stopped() -> bool:
            said.append(_warning_keys(hall.a))
            return "error.hall.stopped" in said[-1]

        eventually(stopped, "the hall told stopped", seconds=SILENT_DEATH_SEEN_S)
        told = time.monotonic() - died
        said.append(_warning_keys(hall.a))
        assert not any("error.hall.alone" in keys for keys in said), said  # no verdict given: never "live here"
    finally:
        thaw()
    print(f"a silent standby's death told in {told:.1f} s")


@pytest.mark.live
def test_health_warns_within_15_s_when_the_standbys_database_streams_but_no_server_stands_in_front_of_it(
    hall: Hall,
) -> None:
    # Patroni rewound the old machine into the standby, its server died (its database was still being rewound), and
    # health said "ok" for minutes: the next failover would have promoted a database with no server in front of it.
    hall.a.start()
    assert "error.hall.standby_serverless" not in _warning_keys(hall.a)  # b's server not started: not yet told
    went = time.monotonic()
    eventually(
        lambda: "error.hall.standby_serverless" in _warning_keys(hall.a),
        "the serverless standby told",
        seconds=SERVERLESS_TOLD_S,
    )
    print(f"a standby machine with no server told in {time.monotonic() - went:.1f} s")
    body = httpx.get(f"{hall.a.base}/api/health", timeout=30).json()
    assert any(hall.b.base in text and "no server" in text for text in body["warnings"]), body["warnings"]
    hall.b.start()  # its server back: the warning goes
    eventually(lambda: "error.hall.standby_serverless" not in _warning_keys(hall.a), "the warning gone", seconds=15)


@pytest.mark.live
def test_a_server_whose_database_is_not_up_yet_waits_for_it_and_says_so(hall: Hall) -> None:
    # Patroni starts the old machine again and rewinds its PostgreSQL into the standby; its wordjudge server, started
    # with it, found no database and exited (`cannot be opened for writing`), the unit gave up, and the next
    # failover would have promoted a database with no server in front of it. Now it serves 503 `unreached`, says
    # why, and takes its place once the database answers.
    hall.a.start()
    hall.standby.stop("fast")
    hall.b.start()  # before: it exited here, and start() failed
    body = httpx.get(f"{hall.b.base}/api/health", timeout=30).json()
    assert (body["status"], body["state"]) == (503, "unreached"), body
    assert "cannot be reached yet" in body["reasons"][0]
    refused = challenge(hall.b.base, "any-token", "while-unreached")
    assert refused.status_code == 503
    assert refused.json()["code"] == "not_active"
    hall.standby.start()
    eventually(
        lambda: httpx.get(f"{hall.b.base}/api/health", timeout=30).json()["state"] == STANDBY,
        "the server serving as the standby once its database answers",
        seconds=30,
    )
    assert hall.b.process is not None
    assert hall.b.process.poll() is None


@pytest.mark.live
def test_a_promotion_that_cannot_check_the_active_server_is_refused_unless_forced(hall: Hall) -> None:
    # The standby machine's server is not running, so nothing on this machine can say whether the active server
    # still proves itself: the promotion is refused, naming what could not be checked, and --force (the TD made
    # sure the active machine is dead) promotes.
    hall.a.start()
    kill_machine(hall.primary, hall.a)
    refused = run("standby", "promote", "--database", hall.admin_b, "--yes")
    assert refused.exit_code == 1
    assert "could not be checked: no wordjudge server of this hall answers on this machine" in refused.output
    assert "--force" in refused.output
    with hall.standby.connect("hall") as connection:
        assert connection.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)  # nothing was changed
    forced = run("standby", "promote", "--database", hall.admin_b, "--yes", "--force")
    assert forced.exit_code == 0, forced.output
    assert "--force" in forced.output
    with hall.standby.connect("hall") as connection:
        eventually(
            lambda: connection.execute("SELECT pg_is_in_recovery()").fetchone() == (False,), "promoted", seconds=30
        )


@pytest.mark.live
def test_the_td_lets_the_hall_go_on_when_the_standby_dies_and_asks_for_it_again_once_it_is_back(hall: Hall) -> None:
    # The TD-confirmed way: the standby's death stops every commit (two machines cannot tell it from a cut cable).
    # The TD's `standby alone` lets the hall go on, the waiting verdict included; `standby require` makes the
    # commits wait for the standby again once it streams. Each refuses what would stop the hall or do nothing.
    hall.a.start()
    hall.b.start()
    added = run("device", "add", "kiosk", "--role", "kiosk", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    assert added.exit_code == 0, added.output
    token = added.stdout.strip()
    assert challenge(hall.a.base, token, "both-machines", "cat").status_code == 201
    streams = run("standby", "alone", "--database", hall.admin_a, "--yes")
    assert streams.exit_code == 1
    assert "a synchronous standby streams from" in streams.output
    on_standby = run("standby", "alone", "--database", hall.admin_b, "--yes")
    assert on_standby.exit_code == 1
    assert "is a standby: run this on the active machine" in on_standby.output
    assert "a synchronous standby streams from it" in run("standby", "status", "--database", hall.admin_a).output
    # Each is a superuser's, and says so (not "no standby streams", which the role could not see).
    hall.primary.create_role("not_super", "its-password")  # as the server's role: it may read the hall's tables
    with hall.primary.connect("hall") as connection:
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO not_super")
    on_a = hall.primary.url("hall", "not_super", "its-password")
    for command in (("alone", "--yes", "--database", on_a), ("require", "--database", on_a)):
        refused = run("standby", *command)
        assert refused.exit_code == 1
        assert "only a superuser of that server may do" in refused.output
    assert "may not see its standbys' state" in run("standby", "status", "--database", on_a).output

    # The standby machine dies: a kiosk's challenge waits, unanswered, for a commit the standby never confirms.
    kill_machine(hall.standby, hall.b)
    answered: list[httpx.Response] = []
    waiting = threading.Thread(
        target=lambda: answered.append(challenge(hall.a.base, token, "while-it-died", "dog", timeout=60)), daemon=True
    )
    waiting.start()
    waiting.join(3)
    assert waiting.is_alive(), "a verdict was acknowledged that only one machine holds"
    assert not answered
    stopped = run("standby", "status", "--database", hall.admin_a).output
    assert "wait for a synchronous standby that does not stream: the hall is stopped" in stopped
    nothing = run("standby", "require", "--database", hall.admin_a)
    assert nothing.exit_code == 1
    assert "no standby streams from" in nothing.output

    # Health says the hall is stopped (never that the verdicts live on this machine: none is given).
    stopped_health = _until(lambda: httpx.get(f"{hall.a.base}/api/health").json(), lambda body: _told(body, "stopped"))
    assert not _told(stopped_health, "machine only")

    # The TD lets the hall go on: the waiting challenge gets its verdict, and the next ones too; health warns.
    went_on = run("standby", "alone", "--database", hall.admin_a, "--yes")
    assert went_on.exit_code == 0, went_on.output
    waiting.join(SYNC_WAIT)
    assert [response.status_code for response in answered] == [201]
    alone_one = challenge(hall.a.base, token, "on-one-machine", "cats")
    assert alone_one.status_code == 201, alone_one.text
    # Health says the verdicts live on this machine only now that they are given, and no longer that it stopped.
    warned = _until(lambda: httpx.get(f"{hall.a.base}/api/health").json(), lambda body: _told(body, "machine only"))
    assert not _told(warned, "the hall is stopped")

    # The standby machine is back: it catches up, and once the TD requires it, every commit waits for it again.
    hall.standby.start()
    _until(lambda: replicas(hall.admin_a), lambda streaming: any(row[1] == "streaming" for row in streaming or []))
    required = run("standby", "require", "--database", hall.admin_a)
    assert required.exit_code == 0, required.output
    sync_standby_streams(hall.primary)
    assert challenge(hall.a.base, token, "both-again", "dogs").status_code == 201
    _until(lambda: httpx.get(f"{hall.a.base}/api/health").json(), lambda body: body["hall"]["alone"] is False)
    with hall.standby.connect("hall") as connection:
        on_both = {row[0] for row in connection.execute("SELECT request_id FROM records")}
    assert {"both-machines", "while-it-died", "on-one-machine", "both-again"} <= on_both


@pytest.mark.live
def test_two_servers_whose_databases_are_not_one_never_both_adjudicate(
    tmp_path: Path, compiled_demo: Path, postgres_clusters: Callable[..., Cluster]
) -> None:
    # A TD's slip: each machine's database made on its own (not a standby of the other), each server started once
    # while the other was off. Both hold epoch 1, naming themselves: both thought they were the active server.
    # Their data folders are one hall's, copied as set-up step 3 says: the same hall key.
    cluster = postgres_clusters()
    urls = [cluster.url(cluster.create_database(name)) for name in ("hall_a", "hall_b")]
    ports = [free_port(), free_port()]
    servers = []
    for index, name in enumerate(("a", "b")):
        folder = tmp_path / name
        shutil.copytree(compiled_demo, folder / "lexicons" / compiled_demo.name)
        servers.append(hall_server(folder, urls[index], ports[index], ports[1 - index]))
    a, b = servers
    make_key(a.data_dir)
    shutil.copy2(a.data_dir / KEY_FILE, b.data_dir / KEY_FILE)
    try:
        b.start()
        assert httpx.get(f"{b.base}/api/health").json()["hall"]["epoch"] == 1
        b.stop()
        a.start()
        added = run("device", "add", "kiosk", "--role", "kiosk", "--data-dir", a.data_dir, "--database", urls[0])
        token = added.stdout.strip()
        b.start()
        # The second one meets the first active at its own epoch: it adjudicates nothing, and says why and what to do.
        split = httpx.get(f"{b.base}/api/health")
        assert split.status_code == 503
        assert (split.json()["state"], split.json()["hall"]["active_url"]) == (SPLIT, None)
        assert (
            f"{a.base} also says it is this hall's active server, at the same epoch (1)" in split.json()["reasons"][0]
        )
        refused = challenge(b.base, token, "on-the-split-one")
        assert (refused.status_code, refused.json()["code"]) == (503, "not_active")
        assert "the two machines' databases are not one replicated database" in refused.json()["error"]
        # The first goes on (it sees the other split, not active), and the other stays split at its next looks.
        assert challenge(a.base, token, "on-the-first-one").status_code == 201
        time.sleep(2.5)  # lets two looks of the hall pass: nothing changes (not an event to poll for)
        assert httpx.get(f"{a.base}/api/health").json()["hall"]["role"] == ACTIVE
        assert httpx.get(f"{b.base}/api/health").json()["state"] == SPLIT
        # Stopped, the first one says nothing: the split one does not take that for the other's consent.
        a.stop()
        time.sleep(2.5)  # lets two looks pass without the first one: still split
        assert httpx.get(f"{b.base}/api/health").json()["state"] == SPLIT
    finally:
        for server in servers:
            server.stop()


def _told_by_its_peer(
    tmp_path: Path, compiled_demo: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> tuple[Serving, Callable[[PeerSays], None], str, str]:
    """A started server of a hall on a real database whose one peer says what the test makes it say: the server,
    ``said(answer)`` (the peer's answer, then a look of the server's), its own address and its peer's."""
    url = cluster.url(cluster.create_database("hall"))
    shutil.copytree(compiled_demo, tmp_path / "lexicons" / compiled_demo.name)
    own, other = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    answers: list[PeerSays] = [PeerSays(other, unproven="no_answer")]
    monkeypatch.setattr("wordjudge.hall.peers.ask_peers", lambda peers, key, **_: list(answers))
    serving = serving_of(Settings(data_dir=tmp_path, database=url, public_url=own, peers=other))
    serving.start()

    def said(answer: PeerSays) -> None:
        answers[:] = [answer]
        step(serving)

    return serving, said, own, other


def test_a_split_server_takes_over_only_once_the_other_says_it_is_the_standby(
    tmp_path: Path, compiled_demo: Path, postgres_clusters: Callable[..., Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the other server says is given here (its health's answers, one by one); the database is real.
    serving, said, own, other = _told_by_its_peer(tmp_path, compiled_demo, postgres_clusters(), monkeypatch)
    try:
        assert (serving.role, serving.view()["epoch"]) == (ACTIVE, 1)
        said(PeerSays(other, ACTIVE, 1, other))
        assert (serving.role, serving.resources) == (SPLIT, None)
        assert serving.refusal().msg.key == "error.hall.split"
        for meanwhile in (PeerSays(other, unproven="slow"), PeerSays(other, SPLIT, 1), PeerSays(other, ACTIVE, 1)):
            said(meanwhile)
            assert serving.role == SPLIT, meanwhile
        # An answer that proves nothing says nothing: not "standby".
        said(PeerSays(other, unproven="not_signed"))
        assert serving.role == SPLIT
        said(PeerSays(other, STANDBY, 1, own))
        assert (serving.role, serving.view()["epoch"]) == (ACTIVE, 1)
        assert serving.resources is not None
        # A peer that proves it is active at a later epoch fences it, split or not; one that proves nothing, never.
        said(PeerSays(other, unproven="not_signed"))
        assert serving.role == ACTIVE
        said(PeerSays(other, ACTIVE, 2, other))
        assert (serving.role, serving.active_url) == (FENCED, other)
    finally:
        serving.close()


def test_a_split_servers_takeover_that_fails_once_is_tried_again_at_the_next_look(
    tmp_path: Path, compiled_demo: Path, postgres_clusters: Callable[..., Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in a whole check on a loaded machine: the takeover met the server's own old log writer, still closing,
    # and failed; the split was forgotten already, so the server stayed split for good.
    from wordjudge.base.errors import AuditUnavailable

    serving, said, own, other = _told_by_its_peer(tmp_path, compiled_demo, postgres_clusters(), monkeypatch)
    opened = serving.opener
    failures = [
        AuditUnavailable("error.audit.cannot_open", path="the hall's database", reason="another writer, still closing")
    ]

    def open_once_failing(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return opened(*args, **kwargs)

    try:
        said(PeerSays(other, ACTIVE, 1, other))
        assert serving.role == SPLIT
        monkeypatch.setattr(serving, "opener", open_once_failing)
        said(PeerSays(other, STANDBY, 1, own))
        assert serving.role == SPLIT  # the takeover failed: still split, and it knows with whom
        said(PeerSays(other, STANDBY, 1, own))
        assert (serving.role, serving.view()["epoch"]) == (ACTIVE, 1)
    finally:
        serving.close()


def test_a_server_is_split_only_by_a_peer_active_at_its_own_epoch() -> None:
    said = [
        PeerSays("http://b", ACTIVE, 2),
        PeerSays("http://c", STANDBY, 3),
        PeerSays("http://d", unproven="slow"),
        PeerSays("http://a", ACTIVE, 3),  # itself, as a peer list may name it
    ]
    assert rival(2, "http://a", said) == said[0]
    assert rival(3, "http://a", said) is None
    assert rival(None, "http://a", said) is None  # no epoch of its own: fenced, not split (superseded_by)
    assert rival(1, "http://a", said) is None


def test_a_server_whose_database_waits_for_a_missing_standby_says_so_instead_of_hanging(hall: Hall) -> None:
    # The standby machine is off (or this machine was replaced, and its old standby follows another): every
    # commit here would wait for ever, the takeover's first. The server says why, and takes over by itself
    # once a standby streams.
    hall.standby.stop("immediate")
    a = serving_of(Settings(data_dir=hall.a.data_dir, database=hall.url_a, public_url=hall.a.base, peers=hall.b.base))
    started = threading.Thread(target=a.start, daemon=True)
    started.start()
    started.join(15)
    try:
        assert not started.is_alive(), "the server hangs on a commit no standby will confirm"
        assert (a.role, a.resources) == (WAITING, None)
        assert a.refusal().msg.key == "error.hall.waiting"
        assert a.health_body()["state"] == WAITING
        a.step()
        assert a.role == WAITING
        hall.standby.start()
        sync_standby_streams(hall.primary)
        a.step()
        assert (a.role, a.view()["epoch"]) == (ACTIVE, 1)
        assert a.resources is not None
    finally:
        if not started.is_alive():
            a.close()


def _event_text(name: str) -> str:
    return f'name = "{name}"\n[[division]]\nname = "Open"\nlexicon = "demo"\nrule = "five-per-word"\n'


def test_the_standby_takes_over_with_the_event_the_active_server_served_last(hall: Hall) -> None:
    for folder in (hall.a.data_dir, hall.b.data_dir):  # copied at set-up (deploy/hall.md, step 3)
        (folder / EVENT_FILE).write_text(_event_text("Set up"))
    a = _serving(hall.a, hall.url_a, hall.b)
    b = _serving(hall.b, hall.url_b, hall.a)
    try:
        # The TD changes the event on the active machine only (the console writes its file, or the TD edits it):
        # its server serves the change, and puts it on the hall's record, replicated with the log.
        (hall.a.data_dir / EVENT_FILE).write_text(_event_text("Changed on a"))
        assert a.resources is not None
        a.resources.served.pick_up_event_file()
        a.resources.served.pick_up_event_file()  # read once it has held still for one look
        assert a.resources.served.event.name == "Changed on a"
        deadline = time.monotonic() + 30
        while (kept := latest_event_file(hall.url_b)) is None or '"Changed on a"' not in kept[1]:
            assert time.monotonic() < deadline, "the served event is not on the hall's record"
            a.step()
            time.sleep(0.1)
        # a dies; the standby, promoted, serves the event as a served it, not its folder's older file.
        hall.primary.stop("immediate")
        promote(hall.admin_b)
        b.step()
        assert b.role == ACTIVE
        assert b.resources is not None
        assert b.resources.served.event.name == "Changed on a"
        assert '"Set up"' in (hall.b.data_dir / BEFORE_TAKEOVER).read_text()  # its own file, kept
    finally:
        a.close()
        b.close()


def test_a_server_restarted_on_its_own_epoch_keeps_its_folders_event_file(tmp_path: Path) -> None:
    # Only a takeover from another server takes the hall's event: a file the TD edited while the server was
    # stopped, or one that already holds the same event, is left alone.
    (tmp_path / EVENT_FILE).write_text(_event_text("Same") + "# the TD's comment\n")
    same = _event_text("Same").replace("name", "name ", 1)  # the same event, written otherwise
    kept = (event_file_digest(dump_event(load_event(tmp_path, check_lexicons=False))), same)
    assert adopt_event_file(tmp_path, kept) is False
    assert "# the TD's comment" in (tmp_path / EVENT_FILE).read_text()
    assert adopt_event_file(tmp_path, None) is False
    (tmp_path / EVENT_FILE).write_text("this is not TOML [")
    other = _event_text("Other")
    assert adopt_event_file(tmp_path, (event_file_digest(other), other)) is True
    assert (tmp_path / EVENT_FILE).read_text() == other
    assert (tmp_path / BEFORE_TAKEOVER).read_text() == "this is not TOML ["


def test_the_halls_server_role_can_add_records_but_never_rewrite_the_log(hall: Hall) -> None:
    """The password in each machine's wordjudge.env is the server's own role's (deploy/hall.md: `database init
    --server-role`): it may read and add records, never change, remove or unprotect one. Before, the guide made
    that role own the database, and its password could drop the triggers and rewrite and rehash the log."""
    hall.a.start()
    added = run("device", "add", "kiosk 1", "--role", "kiosk", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    assert challenge(hall.a.base, added.stdout.strip(), "a-record").status_code == 201
    refused = []
    with psycopg.connect(hall.url_a, autocommit=True) as connection:
        for statement in (
            "UPDATE records SET body = body",
            "DELETE FROM records",
            "TRUNCATE records",
            "ALTER TABLE records DISABLE TRIGGER USER",
            "DROP TRIGGER records_no_update ON records",
            "DELETE FROM checkpoints",
            "UPDATE hall_servers SET server_url = 'http://phone'",
            "DELETE FROM hall_keys",
            # Issue 44: one row named another key, and every server warned of it for good.
            "INSERT INTO hall_keys (seq, key_id) VALUES (99, '0123456789abcdef')",
            "ALTER TABLE records DROP CONSTRAINT records_derived",
        ):
            try:
                connection.execute(statement)
            except psycopg.errors.InsufficientPrivilege:
                refused.append(statement)
    assert len(refused) == 10, refused
    verified = run("audit", "verify", "--data-dir", hall.a.data_dir, "--database", hall.url_a)
    assert verified.exit_code == 0, verified.output


def test_the_hall_keys_id_is_recorded_by_the_databases_owner_never_by_the_server(hall: Hall) -> None:
    """Issue 44: the server's role may not write hall_keys, so the first takeover records no key; `database init
    --key-id`, run as the owner, records the id `standby key` printed, and refuses one that is not an id."""
    from wordjudge.hall.proof import read_key
    from wordjudge.hall.roles import place

    hall.a.start()
    assert place(hall.url_a).key_id is None  # the server, as its role, recorded nothing
    key = read_key(hall.a.data_dir)
    assert key is not None
    bad = run("database", "init", "--database", hall.admin_a, "--key-id", "not-an-id")
    assert bad.exit_code != 0
    assert "not-an-id is not a hall key's id" in bad.output
    recorded = run("database", "init", "--database", hall.admin_a, "--key-id", key.id)
    assert recorded.exit_code == 0, recorded.output
    assert f"the hall key {key.id} is on record" in recorded.output
    assert place(hall.url_a).key_id == key.id
    health = _health(hall.a)
    assert health["hall"]["key_id"] == key.id
    assert not [w for w in health["warnings"] if "hall key" in w]
