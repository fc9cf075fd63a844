"""Dockets a player can check: the words and the final verdict after re-checks, reissues and rulings, never which
word failed; printed on 58 mm and 80 mm receipts and A6 so that nothing is cut, the QR code decodes at a receipt
printer's 203 dpi, and a receipt is as long as what it says. The API in-process; the page in Debian's Chromium,
its PDF rasterised by poppler's pdftoppm and read back by zbar's zbarimg."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, Page, expect
from pypdf import PdfReader

from wordjudge.log.chain import head_text
from wordjudge.model.auth import Role

from .browser import new_page, serving
from .helpers import Actors, LiveServer, access_store, td_headers, write_event

# The papers: width, the printer's margin at each side, the length of a sheet (None: a roll, any length).
PAPERS = {"58mm": (58, 5, None), "80mm": (80, 4, None), "a6": (105, 8, 148)}
DPI = 203  # a thermal receipt printer's 8 dots a millimetre
EIGHT_WORDS = "cat dog quixotically zebra overwhelming jovial antiquarian extemporize"


def challenge(words: str, table: int = 1) -> dict[str, Any]:
    return {"division": "Open", "table": table, "round": 1, "words": words, "request_id": uuid.uuid4().hex}


# -- the API: what a docket says -----------------------------------------------------------------------


def _ruled(client: TestClient, actors: Actors) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A runner's challenge CAT QI (unacceptable on the demo list), re-checked by alice, ruled on by bob."""
    made = client.post("/api/challenges", json=challenge("cat qi"), headers=actors.runner).json()
    recheck = client.post(
        f"/api/challenges/{made['id']}/recheck", json={"request_id": uuid.uuid4().hex}, headers=actors.alice
    ).json()
    ruling = client.post(
        f"/api/challenges/{made['id']}/ruling",
        headers=actors.bob,
        json={"verdict": "acceptable", "note": "errata: QI is valid", "request_id": uuid.uuid4().hex},
    ).json()
    return made, recheck, ruling


def test_a_docket_gives_the_final_verdict_after_a_ruling(client: TestClient, actors: Actors) -> None:
    made, recheck, ruling = _ruled(client, actors)
    docket = client.get(f"/api/challenges/{made['id']}/docket", headers=actors.runner).json()
    assert docket["record"]["verdict"] == "unacceptable"
    assert docket["record"]["words"] == ["CAT", "QI"]  # the slip's words: the players wrote them
    final = docket["final"]
    assert (final["challenge_id"], final["verdict"], final["changed"]) == (made["id"], "acceptable", True)
    assert (final["decided_by"]["kind"], final["decided_by"]["id"], final["decided_by"]["actor"]) == (
        "ruling",
        ruling["id"],
        "bob",
    )
    assert [(s["kind"], s["id"], s["verdict"]) for s in final["linked"]] == [
        ("recheck", recheck["id"], "unacceptable"),
        ("ruling", ruling["id"], "acceptable"),
    ]
    # The TD's docket of the re-check belongs to the same challenge, and says so.
    of_recheck = client.get(f"/api/challenges/{recheck['id']}/docket", headers=actors.alice).json()
    assert (of_recheck["record"]["kind"], of_recheck["record"]["parent_id"]) == ("recheck", made["id"])
    assert of_recheck["final"] == final


def test_a_docket_gives_a_reissues_corrected_words_and_verdict(client: TestClient, actors: Actors) -> None:
    made = client.post("/api/challenges", json=challenge("cat qi"), headers=actors.kiosk).json()
    reissue = client.post(
        f"/api/challenges/{made['id']}/reissue",
        headers=actors.alice,
        json={"words": "cat ox", "reason": "the board shows OX", "request_id": uuid.uuid4().hex},
    ).json()
    final = client.get(f"/api/challenges/{made['id']}/docket", headers=actors.kiosk).json()["final"]
    assert (final["verdict"], final["words"], final["decided_by"]["id"]) == ("acceptable", ["CAT", "OX"], reissue["id"])


def test_a_dockets_final_verdict_never_tells_which_word_failed(client: TestClient, actors: Actors) -> None:
    made, _, _ = _ruled(client, actors)
    answer = client.get(f"/api/challenges/{made['id']}/docket", headers=actors.runner)
    assert answer.status_code == 200
    for secret in ('"results"', '"salt"', '"note"', "not in demo", "errata: QI is valid"):
        assert secret not in answer.text, secret


def test_the_qr_code_scales_to_any_width_and_says_the_records_head(client: TestClient, actors: Actors) -> None:
    made = client.post("/api/challenges", json=challenge("cat"), headers=actors.runner).json()
    docket = client.get(f"/api/challenges/{made['id']}/docket", headers=actors.runner).json()
    assert docket["head_text"] == head_text(made["id"], made["hash"])
    assert docket["qr_text"] == f"wordjudge:challenge:{docket['head_text']}"
    svg = docket["qr_svg"]
    assert svg.startswith("<svg ")
    assert 'viewBox="0 0 ' in svg  # drawn in modules: a stylesheet's width scales it, never clips it


# -- the page: printed on each paper ----------------------------------------------------------------------


def _need(tool: str, package: str) -> str:
    """The path of ``tool``; a clear failure without it in CI or as root (.ci/check installs it), else a skip."""
    found = shutil.which(tool)
    if found:
        return found
    message = f"{tool} is missing: apt-get install {package} (.ci/check installs it)"
    if os.environ.get("CI") or os.getuid() == 0:
        pytest.fail(message)
    pytest.skip(message)


@dataclass(frozen=True)
class Raster:
    """A PDF page rasterised at :data:`DPI` by pdftoppm: a PNG (for zbarimg) and its grey pixels."""

    png: Path
    width: int
    height: int
    pixels: bytes  # one byte a pixel, 0 black to 255 white, row after row

    @classmethod
    def of(cls, pdf: Path) -> Raster:
        pdftoppm = _need("pdftoppm", "poppler-utils")
        stem = pdf.with_suffix("")
        subprocess.run([pdftoppm, "-r", str(DPI), "-png", "-singlefile", str(pdf), str(stem)], check=True)
        subprocess.run([pdftoppm, "-r", str(DPI), "-gray", "-singlefile", str(pdf), str(stem)], check=True)
        data = stem.with_suffix(".pgm").read_bytes()
        magic, width, height, depth = data.split(maxsplit=4)[:4]
        assert (magic, depth) == (b"P5", b"255")
        return cls(stem.with_suffix(".png"), int(width), int(height), data[-int(width) * int(height) :])

    def dark_columns(self) -> tuple[int, int]:
        """The leftmost and rightmost columns with a dark pixel."""
        columns = [
            x for x in range(self.width) if any(self.pixels[y * self.width + x] < 128 for y in range(self.height))
        ]
        return columns[0], columns[-1]

    def lowest_dark_row(self) -> int:
        return max(y for y in range(self.height) if min(self.pixels[y * self.width : (y + 1) * self.width]) < 128)

    def decoded(self) -> str:
        zbarimg = _need("zbarimg", "zbar-tools")
        done = subprocess.run([zbarimg, "--quiet", "--raw", str(self.png)], capture_output=True, text=True)
        assert done.returncode == 0, f"zbarimg found no code in {self.png}: {done.stderr}"
        return done.stdout.strip()


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Docket Open", challenges_per_minute=0)
    with serving(data_dir) as live:
        yield live


def _runner(browser: Browser, server: LiveServer) -> tuple[Page, dict[str, str]]:
    """A page of an enrolled runner's browser, and the headers of its requests."""
    store = access_store(server.data_dir)
    token = store.devices.add("runner-1", Role.RUNNER, by="test").token
    store.close()
    page = new_page(browser, "phone")
    page.goto(f"{server.base}/runner")
    # Its pairing screen: shown once the page speaks the event's language (it may reload into it first).
    expect(page.locator("#app")).to_have_attribute("data-screen", "pair")
    page.evaluate("token => localStorage.setItem('wordjudge.runner.token', token)", token)
    return page, {"Authorization": f"Bearer {token}"}


def _open(page: Page, server: LiveServer, record_id: int, size: str) -> None:
    page.goto(f"{server.base}/docket?id={record_id}&size={size}")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")


def _print(page: Page, path: Path) -> tuple[PdfReader, Raster]:
    """The docket as the browser prints it (the page's own size: preferCSSPageSize), and rasterised."""
    path.write_bytes(page.pdf(prefer_css_page_size=True))
    return PdfReader(path), Raster.of(path)


def _mm(points: float) -> float:
    return float(points) / 72 * 25.4


@pytest.mark.browser
@pytest.mark.parametrize("size", list(PAPERS))
def test_each_paper_prints_whole_with_a_qr_code_that_decodes_and_no_blank_paper(
    browser: Browser, server: LiveServer, tmp_path: Path, size: str
) -> None:
    paper_width, margin, sheet = PAPERS[size]
    page, headers = _runner(browser, server)
    lengths = []
    for words in ("cat", EIGHT_WORDS):
        made = httpx.post(f"{server.base}/api/challenges", json=challenge(words), headers=headers).json()
        meant = httpx.get(f"{server.base}/api/challenges/{made['id']}/docket", headers=headers).json()["qr_text"]
        _open(page, server, made["id"], size)
        # Nothing beyond the printable width: every element of the docket within it, in the page's layout.
        outside = page.evaluate(
            """(width) => {
                const docket = document.querySelector('.docket').getBoundingClientRect();
                const right = docket.left + width;
                return [...document.querySelectorAll('.docket, .docket *')]
                    .map((e) => [e.tagName + '.' + e.className, e.getBoundingClientRect()])
                    .filter(([, r]) => r.width > 0 && (r.right > right + 0.5 || r.left < docket.left - 0.5))
                    .map(([name, r]) => `${name}: ${r.left}-${r.right}, printable ${docket.left}-${right}`);
            }""",
            (paper_width - 2 * margin) * 96 / 25.4,
        )
        assert outside == []
        pdf, raster = _print(page, tmp_path / f"{size}-{len(words)}.pdf")
        assert len(pdf.pages) == 1
        box = pdf.pages[0].mediabox
        assert abs(_mm(box.width) - paper_width) < 0.5
        # The QR code reads back, at a receipt printer's resolution, as what the server meant.
        assert raster.decoded() == meant
        # Nothing cut at either edge: the ink stays within the paper less the printer's margins.
        left, right = raster.dark_columns()
        dots = DPI / 25.4  # a millimetre
        assert left >= margin * dots - 2
        assert right <= (paper_width - margin) * dots + 2
        length = _mm(box.height)
        if sheet is not None:
            assert abs(length - sheet) < 0.5  # a sheet is as long as it is
        else:
            # A roll: the page ends below the last line (its margin and a millimetre), not 30-40 % later.
            tail = (raster.height - 1 - raster.lowest_dark_row()) / raster.height
            assert tail < 0.15, f"{tail:.0%} of the {length:.0f} mm page is blank below the docket"
            lengths.append(length)
    if sheet is None:
        assert lengths[0] < lengths[1]  # one word takes less paper than eight
    page.context.close()


@pytest.mark.browser
def test_the_size_buttons_show_the_chosen_size_and_print_it(browser: Browser, server: LiveServer) -> None:
    page, headers = _runner(browser, server)
    made = httpx.post(f"{server.base}/api/challenges", json=challenge("cat"), headers=headers).json()
    _open(page, server, made["id"], "80mm")
    buttons = {size: page.locator(f".docket-controls button[data-size='{size}']") for size in PAPERS}
    for chosen in ("58mm", "a6", "80mm"):
        buttons[chosen].click()
        for size, button in buttons.items():
            expect(button).to_have_attribute("aria-pressed", "true" if size == chosen else "false")
        pressed, other = (
            b.evaluate("b => getComputedStyle(b).backgroundColor")
            for b in (buttons[chosen], next(b for s, b in buttons.items() if s != chosen))
        )
        assert pressed != other  # seen, not only announced
        assert page.evaluate("location.search").endswith(f"size={chosen}")  # a reload keeps it
        pdf = PdfReader(io.BytesIO(page.pdf(prefer_css_page_size=True)))
        assert abs(_mm(pdf.pages[0].mediabox.width) - PAPERS[chosen][0]) < 0.5  # and the page follows
    page.context.close()


@pytest.mark.browser
def test_a_docket_shows_the_words_and_the_final_verdict_never_which_word_failed(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    page, headers = _runner(browser, server)
    made = httpx.post(f"{server.base}/api/challenges", json=challenge("cat qi", table=9), headers=headers).json()
    alice, bob = td_headers(server.data_dir, "alice"), td_headers(server.data_dir, "bob")
    recheck = httpx.post(
        f"{server.base}/api/challenges/{made['id']}/recheck", headers=alice, json={"request_id": uuid.uuid4().hex}
    ).json()
    ruling = httpx.post(
        f"{server.base}/api/challenges/{made['id']}/ruling",
        headers=bob,
        json={"verdict": "acceptable", "note": "errata: QI is valid", "request_id": uuid.uuid4().hex},
    ).json()
    later = httpx.post(f"{server.base}/api/challenges", json=challenge("dog"), headers=headers).json()
    _open(page, server, made["id"], "80mm")
    pdf, _ = _print(page, tmp_path / "ruled.pdf")
    text = " ".join(p.extract_text() for p in pdf.pages)
    for expected in (
        "UNACCEPTABLE",
        "CAT QI (2 words)",
        "Final verdict: ✓ ACCEPTABLE",
        f"ruled ACCEPTABLE by the TD (bob), #{ruling['id']}",
        "Play stands: challenger loses 10 points (2 words x 5)",
        f"#{recheck['id']} re-check: UNACCEPTABLE",
        f"#{ruling['id']} TD ruling (bob): ACCEPTABLE",
        # Its own place in the chain, not the log's head now (a later record exists).
        head_text(made["id"], made["hash"]),
    ):
        assert expected in " ".join(text.split()), (expected, text)
    assert head_text(later["id"], later["hash"]) not in text
    for secret in ("QI ✗", "✗ QI", "errata", "not in"):  # no per-word result, no TD's note
        assert secret not in text
    page.context.close()


@pytest.mark.browser
def test_a_docket_speaks_plainly(browser: Browser, server: LiveServer) -> None:
    page, headers = _runner(browser, server)
    made = httpx.post(f"{server.base}/api/challenges", json=challenge("cat"), headers=headers).json()
    _open(page, server, made["id"], "58mm")
    docket = page.locator(".docket")
    # The list's fingerprint and the log check are codes a player cannot read: each is named, and explained.
    expect(docket).to_contain_text("List ID")
    expect(docket.locator(".docket-notes")).to_contain_text(
        "List ID: the start of the code that identifies the word list"
    )
    expect(docket.locator(".docket-notes")).to_contain_text("Log check: lets the TD prove")
    # Opened where nobody is signed in (another phone): who may open it, not how HTTP authenticates.
    stranger = new_page(browser, "phone")
    stranger.goto(f"{server.base}/docket?id={made['id']}")
    expect(stranger.locator(".message")).to_have_text(
        "This docket opens on the kiosk or handheld that sent the challenge, or in the TD console."
    )
    expect(stranger.locator("body")).not_to_contain_text("Bearer")
    stranger.goto(f"{server.base}/docket")
    expect(stranger.locator(".message")).to_have_text(
        "No docket chosen: open one from the kiosk, the handheld or the TD console."
    )
    for closing in (page, stranger):
        closing.context.close()
