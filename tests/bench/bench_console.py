"""The TD console at scale, end to end in Chromium: each action a TD takes, timed in the browser at 10k (and,
with --million, 1M) records.

Run from the repository root (not part of the test suite; 1M records take ten minutes or more to write):

    .venv/bin/python -m tests.bench.bench_console [--million] [--data-dir DIR] [--markdown docs/bench-console.md]

The log is filled by tests/bench/bench_log.py's ``make_data_dir`` and ``Filler`` (a hall's mix through the
real writer: challenges at 150 tables over 20 rounds from 60 devices, re-checks, a fifth of them
disagreeing, reissues, rulings). At each size a ``wordjudge serve`` starts on it; Chromium signs in to the
console and times, in the page (``performance.now()``), from the TD's action to the screen showing its
result: a search by record number, by a word, by a docket's QR code text (each with its Enter), opening a
record from the list, the next older page, the division filter, and the summary tab. Median of 5 runs each.
Target (issue 17): every console action <= 200 ms end to end at 1,000,000 records.

``--data-dir DIR`` writes each size's data folder in DIR/<size>/ and keeps it (a later run on the same DIR
fills only what is missing: a 1M log is written once; ``--fill-only`` writes it and measures nothing).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx
from playwright.sync_api import Page, sync_playwright

from wordjudge import __version__
from wordjudge.log.audit import AuditLog
from wordjudge.storage.dialect import StateLocation
from wordjudge.words.demo import read_demo_list

from ..browser import CHROMIUM, CHROMIUM_ARGS
from .bench_challenges import free_port, wait_until_up
from .bench_log import PASSWORD, Filler, make_data_dir
from .headline import cpu_model, headline_lines, kept_sections, machine

RUNS = 5
TARGET_MS = 200


def filled(data_dir: Path | None, size: int) -> tuple[Path, float]:
    """A data dir whose log holds ``size`` records, made or topped up, and the seconds spent writing them."""
    root = data_dir or Path(tempfile.mkdtemp(prefix="wordjudge-bench-console-"))
    root.mkdir(parents=True, exist_ok=True)
    data = root / "data"
    if (data / "event.toml").exists():
        words = read_demo_list().sorted_words()
    else:
        data, words = make_data_dir(root)
    log = AuditLog(StateLocation(data))
    log.start()
    try:
        held = log.head.records
        if held > size:
            sys.exit(f"{data} holds {held:,} records, more than {size:,}: use another --data-dir")
        filler = Filler(log, words)
        filler.made = held
        seconds = filler.fill(size)
    finally:
        log.close()
    print(f"{size:,} records in {data} ({seconds:.0f} s of writing)", file=sys.stderr, flush=True)
    return data, seconds


# One console action, timed in the page: from the action (the form sent, the button clicked) to the frame that
# shows its result (the record view of that record, the list loaded again, the summary's table).
MEASURE = """async ([kind, arg]) => {
  const $ = (selector) => document.querySelector(selector);
  const loads = () => Number($(".feed-layout")?.dataset.loaded || 0);
  const before = loads();
  let done = () => loads() > before;
  const started = performance.now();
  if (kind === "search") {
    $("#search").value = arg.text;
    $("form.search").requestSubmit();
    if (arg.record) done = () => $(`#record-view[data-id="${arg.record}"]`);
  } else if (kind === "open") {
    $(`tr.record[data-id="${arg}"] button.open-record`).click();
    done = () => $(`#record-view[data-id="${arg}"]`);
  } else if (kind === "older") {
    $("#older").scrollIntoView({ block: "end" }); // the TD scrolls to the end of the list: the next page comes
  } else if (kind === "division") {
    $("#filter-division").value = arg;
    $("form.filters").requestSubmit();
  } else if (kind === "summary") {
    $("#tab-summary").click();
    done = () => $("table.summary");
  }
  await new Promise((resolve) => {
    if (done()) return resolve();
    const observer = new MutationObserver(() => done() && (observer.disconnect(), resolve()));
    observer.observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await new Promise(requestAnimationFrame);
  return performance.now() - started;
}"""
ACTIONS = [
    "search by record number (+ Enter: opens it)",
    "search by QR code text (+ Enter: opens it)",
    "search by a word",
    "open a record from the list",
    "older page (scrolling to the end: 100 more)",
    "filter by division",
    "summary tab",
]


def serve(data: Path) -> tuple[subprocess.Popen[str], str]:
    """``wordjudge serve`` on ``data``, up and done with its whole-log check (which would slow every timing)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "WORDJUDGE_DATA_DIR": str(data), "WORDJUDGE_LOG_LEVEL": "warning", "WORDJUDGE_MDNS_NAME": ""}
    script = Path(sys.executable).with_name("wordjudge")
    server = subprocess.Popen(
        [str(script), "serve", "--max-requests-per-client", "0", "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_up(f"{base}/api/health", server, seconds=120)
    deadline = time.monotonic() + 600
    while httpx.get(f"{base}/api/health", timeout=10).json()["audit"]["integrity"]["whole"] == "running":
        if time.monotonic() > deadline:
            sys.exit("the whole-log check did not end in 10 minutes")
        time.sleep(1)
    return server, base


def measure(data: Path) -> dict[str, float]:
    """The median of RUNS timings of each console action, in ms, on a server serving ``data``."""
    server, base = serve(data)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{base}/td")
            page.locator("#name").fill("benchtd")
            page.locator("#password").fill(PASSWORD)
            page.locator("button[type=submit]").click()
            page.wait_for_selector("#app[data-screen=overview]")
            page.locator("#tab-feed").click()
            page.wait_for_selector("tr.record")
            return timings(page)
    finally:
        server.terminate()
        server.communicate(timeout=60)


def timings(page: Page) -> dict[str, float]:
    ids = [int(i) for i in page.locator("tr.record").evaluate_all("rows => rows.map(r => r.dataset.id)")]
    head = ids[0]
    picks = [head * k // 7 for k in range(1, RUNS + 1)]  # spread over the log, each once
    hashes = {
        i: page.evaluate("(id) => fetch(`/api/challenges/${id}`).then(r => r.json()).then(r => r.hash)", i)
        for i in picks
    }
    words = page.evaluate(
        "(ids) => Promise.all(ids.map(id => fetch(`/api/challenges/${id}`).then(r => r.json()).then(r => r.words[0])))",
        picks,
    )
    runs: dict[str, list[float]] = {action: [] for action in ACTIONS}

    def timed(action: str, kind: str, arg: Any) -> None:
        runs[action].append(page.evaluate(MEASURE, [kind, arg]))
        if page.locator("#record-view").count():
            page.locator("#close-record").click()

    for n, record in enumerate(picks):
        timed(ACTIONS[0], "search", {"text": str(record), "record": record})
        qr = f"wordjudge:challenge:{record}:{hashes[record][:16]}"
        timed(ACTIONS[1], "search", {"text": qr, "record": record})
        timed(ACTIONS[2], "search", {"text": words[n]})
    timed_search = page.locator("#search")
    timed_search.fill("")
    timed_search.press("Enter")
    page.wait_for_selector("#older:not([hidden])")
    for n in range(RUNS):
        shown = [int(i) for i in page.locator("tr.record").evaluate_all("rows => rows.map(r => r.dataset.id)")]
        timed(ACTIONS[3], "open", shown[10 + 17 * n])
        timed(ACTIONS[4], "older", None)
    for division in ["A", "B", "C", "A", "B"]:
        timed(ACTIONS[5], "division", division)
    for _ in range(RUNS):
        timed(ACTIONS[6], "summary", None)
        page.locator("#tab-feed").click()
        page.wait_for_selector("tr.record")
    return {action: statistics.median(times) for action, times in runs.items()}


def render(results: dict[int, dict[str, float]], fill_seconds: dict[int, float]) -> str:
    sizes = list(results)
    lines = [
        "| console action, end to end in Chromium (ms, median of 5) | "
        + " | ".join(f"{size:,} records" for size in sizes)
        + " | target |",
        "|---|" + "---|" * len(sizes) + "---|",
    ]
    for action in ACTIONS:
        cells = " | ".join(f"{results[size][action]:.0f}" for size in sizes)
        lines.append(f"| {action} | {cells} | <= {TARGET_MS} |")
    written = [f"{fill_seconds[size]:.0f}" if fill_seconds[size] >= 1 else "kept" for size in sizes]
    lines.append("| (writing the log, s; kept: written by an earlier run) | " + " | ".join(written) + " | |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--million", action="store_true", help="also measure at 1,000,000 records")
    parser.add_argument("--data-dir", type=Path, help="write the log here and keep it (reused when run again)")
    parser.add_argument("--fill-only", action="store_true", help="write the log, measure nothing")
    parser.add_argument("--markdown", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args()
    sizes = [10_000, 1_000_000] if args.million else [10_000]
    if args.fill_only:
        filled(args.data_dir / str(sizes[-1]) if args.data_dir else None, sizes[-1])
        return
    start_load = os.getloadavg()[0]
    results: dict[int, dict[str, float]] = {}
    fill_seconds: dict[int, float] = {}
    for size in sizes:
        data_dir = args.data_dir / str(size) if args.data_dir else None
        data, fill_seconds[size] = filled(data_dir, size)
        results[size] = measure(data)
        print(f"{size:,}: {results[size]}", file=sys.stderr, flush=True)
        if data_dir is None:
            shutil.rmtree(data.parent, ignore_errors=True)
    table = render(results, fill_seconds)
    header = (
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {cpu_model()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, wordjudge {__version__}, "
        f"Chromium {CHROMIUM}.\n\n"
    )
    print(header + table)
    if args.markdown:
        largest = sizes[-1]
        said = headline_lines(
            MEASURES, headline(largest, list(results[largest].values())), machine([start_load, os.getloadavg()[0]])
        )
        kept = kept_sections(args.markdown)
        page = f"# The TD console at scale, end to end in the browser\n\n{said}\n{DESCRIPTION}\n{header}{table}"
        args.markdown.write_text(page + (f"\n{kept}" if kept else ""))


# What the page says of its method, under its headline lines (the table's header says when and where it ran).
DESCRIPTION = """\
`python -m tests.bench.bench_console [--million] [--data-dir DIR] [--markdown FILE]` (see its docstring): the
log is filled by `tests/bench/bench_log.py`'s `make_data_dir` and `Filler` (a hall's mix through the real
writer: challenges of 1 to 3 words at 150 tables over 20 rounds from 60 devices, a third unacceptable,
re-checks (a fifth of them disagreeing), reissues and rulings); a `wordjudge serve` starts on it and, once its
whole-log check is done, Chromium (Debian's, headless, 1440x900) signs in to the console and times each
action **in the page**, with `performance.now()`: from the TD's action (the search form sent with its Enter,
the row's link clicked, the list scrolled to its end, the division filter applied, the Summary tab clicked)
to the frame that shows its result (the record view of that record, the list loaded again, the next page,
the summary's table). Median of 5 runs of each; the five record numbers and QR codes are spread over the
log, the word searched is a word of each of those records.

Target (issue 17): every console action at 1,000,000 records answers in <= 200 ms end to end.
"""

# What the page measures (docs/benchmarks.md's table says it, from the page).
MEASURES = "the TD console's actions, end to end in Chromium"


def headline(records: int, times_ms: list[float]) -> str:
    """The headline of a run: the fastest and slowest action at the largest log, beside the target."""
    return f"at {records:,} records: every action {min(times_ms):.0f} to {max(times_ms):.0f} ms (target {TARGET_MS} ms)"


if __name__ == "__main__":
    main()
