"""A new TD's first hour, timed: from ``wordjudge serve`` on an empty folder to a judged challenge with the console
open, each step as a TD takes it (the commands as the README gives them, the pages in Chromium).

Run from the repository root (not part of the test suite):

    .venv/bin/python -m tests.bench.first_hour [--markdown docs/bench-first-hour.md]

Steps: ``wordjudge serve`` until its health answers (and what it says of the first TD account); ``wordjudge td add``
(the command serve printed); the console's sign-in in Chromium; ``wordjudge device pair --role kiosk``; the
kiosk's pairing; a challenge typed, handed over and held at the kiosk, to its verdict; the console's feed showing
the record. The figures are the machine's time for each step, not a person's reading and typing: they say where
the software makes a TD wait.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx2 as httpx
from playwright.sync_api import Page, expect, sync_playwright

from tests.bench.headline import headline_lines, machine
from tests.browser import CHROMIUM, CHROMIUM_ARGS

PASSWORD = "first-hour-password"
HOLD_S = 1.4  # the kiosk's hold (1.2 s) and a little


def _wordjudge(folder: Path, *args: str, stdin: str = "") -> str:
    """Run a wordjudge command as the README does, in the folder; its output."""
    program = Path(sys.executable).with_name("wordjudge")
    done = subprocess.run(
        [str(program), *args], cwd=folder, input=stdin, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout + done.stderr


def walk(folder: Path, port: int) -> list[tuple[str, float]]:
    """Take a new TD's first steps in ``folder``; each step's name and seconds."""
    timings: list[tuple[str, float]] = []

    def step(name: str, action: Callable[[], object]) -> object:
        started = time.perf_counter()
        result = action()
        timings.append((name, time.perf_counter() - started))
        return result

    base = f"http://127.0.0.1:{port}"
    program = Path(sys.executable).with_name("wordjudge")
    server = subprocess.Popen(
        [str(program), "serve", "--port", str(port)],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def started() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                        return
                except httpx.TransportError:
                    time.sleep(0.05)
            raise RuntimeError("wordjudge serve did not answer in 60 s")

        step("wordjudge serve, to its health answering", started)
        step(
            "wordjudge td add alice (the command serve printed)",
            lambda: _wordjudge(folder, "td", "add", "alice", "--password-stdin", stdin=PASSWORD + "\n"),
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            console = browser.new_page(viewport={"width": 1366, "height": 768})
            kiosk = browser.new_page(viewport={"width": 1280, "height": 800})

            def sign_in() -> None:
                console.goto(f"{base}/td")
                console.locator("#name").fill("alice")
                console.locator("#password").fill(PASSWORD)
                console.locator("#password").press("Enter")
                expect(console.locator("#tab-overview")).to_be_visible(timeout=30_000)

            step("the console: signed in, overview shown", sign_in)
            said = str(
                step(
                    "wordjudge device pair --role kiosk",
                    lambda: _wordjudge(folder, "device", "pair", "--role", "kiosk"),
                )
            )
            code = re.search(r"Pairing code: (\S+)", said)
            if code is None:
                raise RuntimeError(f"no pairing code in: {said}")

            def pair() -> None:
                kiosk.goto(f"{base}/kiosk")
                kiosk.locator("#pair-code").fill(code[1])
                kiosk.locator("#pair-code").press("Enter")
                expect(kiosk.locator("#app")).to_have_attribute("data-screen", "idle", timeout=30_000)

            step("the kiosk: paired, idle", pair)

            def challenge(page: Page = kiosk) -> None:
                page.get_by_role("button", name="Start a challenge").click()
                page.get_by_label("Table").fill("4")
                page.get_by_label("Round").fill("1")
                page.get_by_label("Words").fill("cat dog")
                page.get_by_label("Words").press("Enter")
                expect(page.locator("#app")).to_have_attribute("data-screen", "opponent")
                page.locator("#adjudicate").hover()
                page.mouse.down()
                page.wait_for_timeout(HOLD_S * 1000)
                page.mouse.up()
                expect(page.locator("#app")).to_have_attribute("data-screen", "verdict", timeout=30_000)

            step("a challenge at the kiosk, typed, held, to its verdict", challenge)

            def feed() -> None:
                console.locator("#tab-feed").click()
                expect(console.locator("tr.record").first).to_be_visible(timeout=30_000)

            step("the console's feed, the record shown", feed)
            browser.close()
    finally:
        server.terminate()
        printed = server.communicate(timeout=30)[0]
    told = next((line.strip() for line in printed.splitlines() if "No TD account yet" in line), None)
    if told is None:
        raise RuntimeError(f"serve did not say how to make the first TD account:\n{printed}")
    timings.append((f"(serve said: {told})", 0.0))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    start_load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="wordjudge-first-hour-") as folder:
        timings = walk(Path(folder), args.port)
    load = os.getloadavg()
    lines = [
        "| step | seconds |",
        "|---|---|",
        *(f"| {name} | {seconds:.2f} |" for name, seconds in timings),
        f"| **all** | **{sum(seconds for _, seconds in timings):.2f}** |",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()};"
        f" load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end.",
    ]
    print("\n".join(lines))
    if args.markdown:
        said = headline_lines(
            MEASURES, _headline(timings, sum(seconds for _, seconds in timings)), machine([start_load, load[0]])
        )
        header = f"# A new TD's first hour, timed\n\n{said}\nMade by `.venv/bin/python -m tests.bench.first_hour`.\n\n"
        args.markdown.write_text(header + "\n".join(lines) + "\n", "utf-8")


# What the page measures (docs/benchmarks.md's table says it, from the page).
MEASURES = "a new TD's first hour: `serve` on an empty folder to a judged challenge with the console open (issue 46)"


def _headline(timings: list[tuple[str, float]], total: float) -> str:
    """The whole walk's time (``total``), its steps and its longest, as the table shows them."""
    steps = [(name, seconds) for name, seconds in timings if not name.startswith("(")]  # what serve said is no step
    name, longest = max(steps, key=lambda step: step[1])
    return f"{total:.2f} s of the machine's time in {len(steps)} steps, the longest {name} ({longest:.2f} s)"


if __name__ == "__main__":
    main()
