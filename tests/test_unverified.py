"""A list named like an edition it is not (issue 15, item 3): refused unless forced, then loud everywhere.

Official lexicons are never used here: ENABLE (public domain, whose real fingerprint is in the
registry) with a line deleted stands for "CSW24 with one line deleted", and the demo list or a
few of its words named CSW24 or NWL2023 stand for "CSW21 named CSW24".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, expect

from wordjudge.base.errors import InvalidInput, ProfileError
from wordjudge.cli.main import main
from wordjudge.model.auth import Role
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.words.editions import Claim, ClaimVerdict, Edition, Registry, fingerprint, load_registry
from wordjudge.words.lexicon import LexiconStore
from wordjudge.words.profile import Catalog
from wordjudge.words.wordlist import parse_word_list

from .browser import new_page, open_enrolled, screenshot, serving
from .helpers import PASSWORD, LiveServer, access_store, device_headers, write_event, write_list
from .test_kiosk import adjudicate

ENABLE_WORDS = 172_820
BADGE = "UNVERIFIED: not the official CSW24"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def claim(registry: Registry, name: str, word_count: int, words_fingerprint: str) -> Claim:
    found = registry.claim(name, word_count, words_fingerprint)
    assert found is not None, f"{name} claims no edition"
    return found


def files_under(path: Path) -> list[Path]:
    return sorted(path.rglob("*")) if path.exists() else []


@pytest.fixture(scope="module")
def enable_file(tmp_path_factory: pytest.TempPathFactory, demo_words: list[str]) -> Path:
    return write_list(tmp_path_factory.mktemp("lists") / "enable1.txt", [w.lower() for w in demo_words])


@pytest.fixture(scope="module")
def enable_minus_one(tmp_path_factory: pytest.TempPathFactory, demo_words: list[str]) -> Path:
    """ENABLE with one line (AARDVARK) deleted: one word short of the real thing."""
    words = [w for w in demo_words if w != "AARDVARK"]
    assert len(words) == ENABLE_WORDS - 1
    return write_list(tmp_path_factory.mktemp("lists") / "enable-minus-one.txt", words)


# -- which names claim which edition ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "claimed", "editions"),
    [
        ("CSW24", "CSW24", ["CSW24"]),
        ("csw2024-club", "CSW24", ["CSW24"]),
        ("NWL23", "NWL2023", ["NWL2023"]),
        ("nwl2023", "NWL2023", ["NWL2023"]),
        ("TWL2006", "TWL06", ["TWL06"]),
        ("OTCWL14", "OTCWL2014", ["OTCWL2014"]),
        ("CSW", "CSW", ["CSW15", "CSW19", "CSW21", "CSW24"]),
        ("NWL-club", "NWL", ["NWL2018", "NWL2020", "NWL2023"]),
        ("ENABLE", "ENABLE", ["ENABLE"]),
        ("enable1", "ENABLE", ["ENABLE"]),
        ("ENABLE2K", "ENABLE", ["ENABLE"]),
        ("CSW25", "CSW25", []),  # a family the registry knows, a year it does not
        ("TWL2030", "TWL2030", []),
    ],
)
def test_a_name_claims_the_edition_of_its_family_and_year(name: str, claimed: str, editions: list[str]) -> None:
    found = load_registry().claimed(name)
    assert found is not None
    assert (found[0], [edition.name for edition in found[1]]) == (claimed, editions)


@pytest.mark.parametrize("name", ["demo", "CLUB", "GEN280K", "CSWords", "ENABLED", "TWL6", "MYLIST", "EVENT-E"])
def test_other_names_claim_nothing(name: str) -> None:
    assert load_registry().claimed(name) is None
    assert load_registry().claim(name, 3, "0" * 64) is None


def test_the_claim_is_checked_against_fingerprint_and_word_count(demo_words: list[str]) -> None:
    registry = load_registry()
    enable = fingerprint(demo_words)
    assert claim(registry, "ENABLE", ENABLE_WORDS, enable).verdict is ClaimVerdict.VERIFIED

    minus = claim(registry, "ENABLE", ENABLE_WORDS - 1, fingerprint(demo_words[1:]))
    assert (minus.verdict, minus.unverified) == (ClaimVerdict.MISMATCH, True)
    assert minus.badge == "UNVERIFIED: not the official ENABLE"
    assert "has 172,820 words, this list has 172,819 (1 fewer)" in minus.problem()
    assert "it matches no known edition" in minus.problem()
    assert "check that the file is the official ENABLE" in minus.remedy()

    misnamed = claim(registry, "CSW24", ENABLE_WORDS, enable)  # "CSW21 named CSW24"
    assert (misnamed.verdict, misnamed.badge) == (ClaimVerdict.MISMATCH, BADGE)
    assert "it matches ENABLE (172,820 words)" in misnamed.problem()
    assert "name it after the edition it is (--name ENABLE)" in misnamed.remedy()
    assert (
        "add --force to serve it anyway: kiosks, handhelds, dockets, the console and /api/health "
        f'will show it as "{BADGE}"'
    ) in misnamed.remedy()

    csw = registry.get("CSW24")
    assert csw is not None
    assert csw.sha256 is not None
    same_count = claim(registry, "CSW24", csw.words, "0" * 64)
    assert same_count.unverified
    assert "has as many but not the same ones" in same_count.problem()

    unknown = claim(registry, "CSW25", ENABLE_WORDS, enable)
    assert (unknown.verdict, unknown.unverified) == (ClaimVerdict.UNKNOWN_EDITION, True)
    assert unknown.badge == "UNVERIFIED: CSW25 is not a known edition"
    assert "an edition wordjudge's registry does not know (it knows CSW15, CSW19, CSW21, CSW24)" in unknown.problem()

    family = claim(registry, "CSW", ENABLE_WORDS, enable)
    assert (family.unverified, family.any_edition) == (True, True)
    assert family.badge == "UNVERIFIED: not an official CSW edition"
    assert claim(registry, "CSW", csw.words, csw.sha256).verdict is ClaimVerdict.VERIFIED


def test_an_edition_known_by_word_count_only_is_checked_by_word_count(tmp_path: Path) -> None:
    path = tmp_path / "editions.toml"
    path.write_text('[[edition]]\nname = "XYZ2030"\ntitle = "A future list"\nwords = 3\nofficial = true\n')
    registry = load_registry(path)
    assert registry.editions == (Edition("XYZ2030", "A future list", 3, None, True),)
    counted = claim(registry, "XYZ30", 3, fingerprint(["AA", "AB", "AD"]))
    assert (counted.verdict, counted.unverified) == (ClaimVerdict.COUNT_ONLY, False)
    assert "its words cannot be checked: the registry has no fingerprint for XYZ2030" in counted.problem()
    assert registry.identify(3, "0" * 64).describe() == (
        "word count of XYZ2030 (its words cannot be checked: no fingerprint is known)"
    )
    other = claim(registry, "XYZ2030", 4, fingerprint(["AA", "AB", "AD", "AE"]))
    assert other.verdict is ClaimVerdict.MISMATCH
    assert "has 3 words, this list has 4 (1 more)" in other.problem()


# -- the store and the catalog refuse it, and write nothing -------------------------------------


def test_the_store_refuses_a_list_that_is_not_the_edition_it_is_named_after(
    tmp_path: Path, enable_minus_one: Path
) -> None:
    store = LexiconStore(tmp_path / "lexicons")
    listed = parse_word_list(enable_minus_one.read_bytes(), source_name="enable-minus-one.txt")
    with pytest.raises(
        InvalidInput, match=r"ENABLE was not added: the name ENABLE claims ENABLE, but this list is not"
    ):
        store.add(listed, "ENABLE")
    assert files_under(tmp_path / "lexicons") == []
    assert store.add(listed, "ENABLE", force=True).word_count == ENABLE_WORDS - 1
    assert store.names() == ["ENABLE"]


def test_a_profile_named_after_an_edition_its_base_is_not_is_refused(tmp_path: Path, demo_words: list[str]) -> None:
    catalog = Catalog(tmp_path)
    catalog.lexicons.add(parse_word_list("\n".join(demo_words).encode(), source_name="enable1.txt"), "ENABLE")
    catalog.lexicons.add(parse_word_list(b"CAT\nDOG\nEMU\n", source_name="club.txt"), "CLUB")
    errata = parse_word_list(b"QI\n", source_name="errata.txt")
    profile, _ = catalog.add_profile("ENABLE-errata", "ENABLE", additions=errata)  # errata on the real thing: fine
    assert profile.amended
    with pytest.raises(ProfileError, match=r"its base lexicon CLUB is not CSW24.*\n.*Nothing was written"):
        catalog.add_profile("CSW24-errata", "CLUB", additions=errata)
    assert not (tmp_path / "profiles" / "CSW24-errata.json").exists()
    forced, _ = catalog.add_profile("CSW24-errata", "CLUB", additions=errata, force=True)
    assert forced.name == "CSW24-errata"


# -- the command line -----------------------------------------------------------------------------


def test_add_refuses_enable_with_a_line_deleted_named_enable(tmp_path: Path, enable_minus_one: Path) -> None:
    data = tmp_path / "data"
    result = run("lexicon", "add", enable_minus_one, "--name", "ENABLE", "--data-dir", data)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert (
        "Error: ENABLE was not added: the name ENABLE claims ENABLE, but this list is not ENABLE: "
        "ENABLE (Enhanced North American Benchmark Lexicon), public domain has 172,820 words, "
        "this list has 172,819 (1 fewer)"
    ) in result.stderr
    assert "Nothing was written. To go on, check that the file is the official ENABLE" in result.stderr
    assert "--force to serve it anyway" in result.stderr
    assert files_under(data) == []


def test_add_refuses_another_list_named_csw24_and_says_what_it_is(tmp_path: Path, enable_file: Path) -> None:
    data = tmp_path / "data"
    result = run("lexicon", "add", enable_file, "--name", "CSW24", "--data-dir", data)
    assert result.exit_code == 1
    assert (
        "CSW24 (Collins Scrabble Words 2024) has 280,887 words, this list has 172,820 (108,067 fewer)" in result.stderr
    )
    assert "it matches ENABLE (172,820 words)" in result.stderr
    assert "name it after the edition it is (--name ENABLE)" in result.stderr
    assert files_under(data) == []
    renamed = run("lexicon", "add", enable_file, "--name", "ENABLE", "--data-dir", data)
    assert renamed.exit_code == 0, renamed.output
    assert "Name: the name ENABLE claims ENABLE, and this list matches ENABLE (172,820 words)" in renamed.output


def test_add_refuses_a_generated_list_named_nwl2023_and_an_unknown_edition(tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = write_list(tmp_path / "gen.txt", ["aa", "ab", "zyzzyva"])
    nwl = run("lexicon", "add", source, "--name", "nwl23", "--data-dir", data)
    assert nwl.exit_code == 1
    assert "the name nwl23 claims NWL2023, but this list is not NWL2023" in nwl.stderr
    unknown = run("lexicon", "add", source, "--name", "CSW25", "--data-dir", data)
    assert unknown.exit_code == 1
    assert "CSW25, an edition wordjudge's registry does not know" in unknown.stderr
    assert "if CSW25 is a new edition, add its word count and fingerprint to lexicons/editions.toml" in unknown.stderr
    assert files_under(data) == []


def test_a_forced_list_is_added_and_marked_unverified_in_every_listing(tmp_path: Path, enable_file: Path) -> None:
    data = tmp_path / "data"
    result = run("lexicon", "add", enable_file, "--name", "CSW24", "--force", "--data-dir", data)
    assert result.exit_code == 0, result.output
    assert "Edition: matches ENABLE (172,820 words); UNVERIFIED: not the official CSW24" in result.output
    assert f"WARNING: {BADGE}: the name CSW24 claims CSW24, but this list is not CSW24" in result.output
    listing = run("lexicon", "list", "--data-dir", data).output
    assert f"matches ENABLE (172,820 words); {BADGE}" in listing
    assert (
        f"edition: matches ENABLE (172,820 words); {BADGE}"
        in run("lexicon", "info", "CSW24", "--data-dir", data).output
    )

    # A profile on it carries the badge; one whose own name claims CSW24 needs --force too.
    club = run("profile", "add", "club", "--base", "CSW24", "--data-dir", data)
    assert club.exit_code == 0, club.output
    assert f"WARNING: {BADGE}: the name CSW24 claims CSW24" in club.output
    refused = run("profile", "add", "CSW24-errata", "--base", "CSW24", "--data-dir", data)
    assert refused.exit_code == 1
    assert "profile CSW24-errata was not added: the name CSW24-errata claims CSW24, but its base lexicon CSW24" in (
        refused.stderr
    )
    assert "name it after the edition it is (e.g. ENABLE-errata)" in refused.stderr
    assert not (data / "profiles" / "CSW24-errata.json").exists()
    assert run("profile", "add", "CSW24-errata", "--base", "CSW24", "--force", "--data-dir", data).exit_code == 0
    write_event(data, [("A", "CSW24-errata", "single")])
    shown = run("event", "show", "--data-dir", data).output
    assert f"Division A: CSW24-errata [{BADGE}]: matches ENABLE (172,820 words)" in shown


# -- what the server says of it -------------------------------------------------------------------


@pytest.fixture
def forced_data_dir(data_dir: Path, demo_words: list[str]) -> Path:
    """The demo list's first 3,000 words and CAT, DOG, forced in as CSW24, served in division Open."""
    words = sorted({*demo_words[:3000], "CAT", "DOG"})
    LexiconStore(data_dir / "lexicons").add(
        parse_word_list("\n".join(words).encode(), source_name="csw24.txt"), "CSW24", force=True
    )
    write_event(data_dir, [("Open", "CSW24", "five-per-word"), ("Demo", "demo", "single")], name="Forced Open")
    return data_dir


def test_health_warns_of_a_forced_list_and_each_view_carries_the_flag(
    forced_data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with TestClient(create_app(Settings(data_dir=forced_data_dir))) as client:
        started = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert any(message.startswith(f"lexicon CSW24: {BADGE} (the name CSW24 claims") for message in started)
        response = client.get("/api/health")
        assert response.status_code == 200  # the TD forced it: served, with a warning
        body = response.json()
        assert body["state"] == "ok"
        # Its warning, and the DEMO list's of division Demo (a real event served on the demo list: issue 35).
        [warning, demo] = body["warnings"]
        assert warning.startswith(f"lexicon CSW24: {BADGE} (the name CSW24 claims CSW24, but this list is not CSW24")
        assert "serves the DEMO list" in demo
        assert "division Demo" in demo
        views = {view["name"]: view for view in body["lexicons"]}
        [claim] = views["CSW24"]["unverified"]
        assert (claim["claimed"], claim["verdict"], claim["badge"]) == ("CSW24", "mismatch", BADGE)
        assert views["demo"]["unverified"] == []

        kiosk = device_headers(forced_data_dir, "kiosk-1")
        event = client.get("/api/event", headers=kiosk).json()
        assert [d["lexicon_view"]["unverified"][0]["badge"] for d in event["divisions"] if d["name"] == "Open"] == [
            BADGE
        ]
        made = client.post(
            "/api/challenges",
            json={"division": "Open", "table": "3", "round": 1, "words": "cat", "request_id": "a" * 32},
            headers=kiosk,
        )
        assert made.status_code == 201, made.text
        docket = client.get(f"/api/challenges/{made.json()['id']}/docket", headers=kiosk).json()
        assert [claim["badge"] for claim in docket["lexicon_unverified"]] == [BADGE]


# -- every screen shows the badge ----------------------------------------------------------------


@pytest.fixture
def forced_server(forced_data_dir: Path) -> Iterator[LiveServer]:
    with serving(forced_data_dir, tds=("alice",)) as live:
        yield live


@pytest.mark.browser
def test_the_badge_shows_on_kiosk_handheld_docket_status_page_and_console(
    browser: Browser, forced_server: LiveServer
) -> None:
    store = access_store(forced_server.data_dir)
    kiosk_token = store.devices.add("kiosk-1", Role.KIOSK, "Open", by="test").token
    runner_token = store.devices.add("runner-1", Role.RUNNER, by="test").token
    store.close()

    kiosk = new_page(browser, "small")
    open_enrolled(kiosk, forced_server, "kiosk", kiosk_token)
    expect(kiosk.locator("#app")).to_have_attribute("data-screen", "idle")
    expect(kiosk.locator(".lexicon-name")).to_have_text("CSW24")
    expect(kiosk.locator(".lexicon .badge.unverified")).to_have_text(BADGE)
    screenshot(kiosk, "kiosk-idle-unverified-small")
    adjudicate(kiosk, "3", "cat")
    expect(kiosk.locator(".verdict h1")).to_have_text("ACCEPTABLE")
    expect(kiosk.locator(".verdict-facts .badge.unverified")).to_have_text(BADGE)
    screenshot(kiosk, "kiosk-verdict-unverified-small")

    runner = new_page(browser, "phone")
    open_enrolled(runner, forced_server, "runner", runner_token)
    expect(runner.locator("#app")).to_have_attribute("data-screen", "entry")
    runner.get_by_label("Division").select_option("Open")
    expect(runner.locator(".lexicon .badge.unverified")).to_have_text(BADGE)
    screenshot(runner, "runner-entry-unverified-390x844")

    answered = httpx.post(
        f"{forced_server.base}/api/challenges",
        json={"division": "Open", "table": "4", "round": 1, "words": "cat dog", "request_id": "b" * 32},
        headers={"Authorization": f"Bearer {runner_token}"},
        timeout=10,
    )
    assert answered.status_code == 201, answered.text
    runner.goto(f"{forced_server.base}/docket?id={answered.json()['id']}")
    expect(runner.locator(".docket-verdict")).to_contain_text("ACCEPTABLE")
    expect(runner.locator(".docket .badge.unverified")).to_have_text(BADGE)
    screenshot(runner, "docket-unverified-390x844")

    status = new_page(browser, "desktop")
    status.goto(f"{forced_server.base}/")
    row = status.locator("#lexicons tbody tr", has_text="CSW24")
    expect(row.locator(".badge.unverified")).to_have_text(BADGE)
    expect(status.locator("#server-state")).to_contain_text(f"Server running (lexicon CSW24: {BADGE}")
    expect(status.locator("#server-state")).to_have_class("state warn")
    screenshot(status, "status-unverified-desktop")

    console = new_page(browser, "desktop")
    console.goto(f"{forced_server.base}/td")
    console.get_by_label("TD name").fill("alice")
    console.get_by_label("Password").fill(PASSWORD)
    console.get_by_role("button", name="Sign in").click()
    expect(console.locator("#app")).to_have_attribute("data-screen", "overview")
    divisions = console.locator("table").first
    expect(divisions.locator("tr", has_text="Open").locator(".badge.unverified")).to_have_text(BADGE)
    expect(divisions.locator("tr", has_text="Demo").locator(".badge.unverified")).to_have_count(0)
    screenshot(console, "console-overview-unverified-1440x900")
    for page in (kiosk, runner, status, console):
        page.context.close()
