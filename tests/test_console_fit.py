"""The TD console's live feed with a record open, at the console's sizes, in every language (issue 35 items 4 and 3):
long words never overlap the next column, nothing is cut, and a challenge whose verdict a ruling changed leads
with its final verdict, the superseded one marked as such (feed row and record view)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from wordjudge.model.records import Kind, Verdict
from wordjudge.model.rules import ChallengeRule, consequence

from .browser import PAGE_WAIT_MS, drawn, serving
from .helpers import PASSWORD, LiveServer, audit_log, device_headers, write_event
from .test_audit import entry

pytestmark = pytest.mark.browser

SHOTS = Path("/work/scratch/shots")
LONG = (
    "OVERSUBSCRIBING",
    "COUNTERCHARGING",
    "DISCONTINUANCES",
    "UNDERSTATEMENTS",
    "TRANSFORMATIONS",
    "INTERCONNECTING",
    "MISREPRESENTING",
    "OVERSIMPLIFYING",
)
SIZES = {"1366x768": (1366, 768), "1440x900": (1440, 900)}
LANGUAGES = ("en", "fr", "qps-ploc")


def long_entry(n: int, verdict: Verdict | None = None, **kwargs: Any) -> Any:
    """Record ``n`` as ``entry`` makes it (its ``verdict`` given, or ``entry``'s), with 8 words of 15 letters (each
    found in CSW24, or not), and the consequence its rule gives 8 words: a log that ``audit verify`` passes (the
    server checks its log in the background, and stops giving verdicts on one that does not)."""
    made = entry(n, **kwargs)
    words = LONG[n % 8 :] + LONG[: n % 8]
    acceptable = (verdict or made.verdict) is Verdict.ACCEPTABLE
    results = tuple(
        {
            "word": w,
            "acceptable": bool(acceptable or i),
            "source": "CSW24" if acceptable or i else None,
            "reason": "...",
        }
        for i, w in enumerate(words)
    )
    return dataclasses.replace(
        made,
        verdict=Verdict.ACCEPTABLE if acceptable else Verdict.UNACCEPTABLE,
        consequence=consequence(ChallengeRule.FIVE_PER_WORD, acceptable, len(words)).as_dict(),
        words=words,
        words_typed=tuple(w.lower() for w in words),
        results=() if made.kind is Kind.RULING else results,
    )


@pytest.fixture
def long_words(data_dir: Path) -> Iterator[LiveServer]:
    """Challenges #1..#8 of 8 long words each (#3 and #6 unacceptable); #9 a ruling making #3 acceptable, #10 a
    re-check of #4."""
    write_event(
        data_dir, [("A", "demo", "five-per-word"), ("B", "demo", "single")], name="Test Open", challenges_per_minute=0
    )
    log = audit_log(data_dir)
    log.start()
    try:
        entries = [long_entry(n) for n in range(1, 9)]
        ruling = long_entry(9, Verdict.ACCEPTABLE, kind=Kind.RULING, parent=3, agrees=False)
        entries += [ruling, long_entry(10, kind=Kind.RECHECK, parent=4, agrees=True)]
        for future in [log.submit(e) for e in entries]:
            future.result()
        # The server checks its log in the background and stops giving verdicts on one that does not verify: a
        # fixture that wrote such a log made the tests fail whenever that check finished mid-test.
        checked = log.verify()
        assert checked.ok, checked
    finally:
        log.close()
    device_headers(data_dir, "kiosk-1")
    with serving(data_dir, tds=("alice",)) as live:
        yield live


def console(browser: Browser, server: LiveServer, size: str, lang: str) -> Page:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(PAGE_WAIT_MS)
    signed = page.request.post(f"{server.base}/api/session", data={"name": "alice", "password": PASSWORD})
    assert signed.ok, signed.text()
    page.goto(f"{server.base}/td?lang={lang}")
    expect(page.locator("#app")).to_have_attribute("data-screen", "overview")
    page.locator("#tab-feed").click()
    expect(page.locator("tr.record")).to_have_count(10)
    return page


# Every visible cell of the feed's first rows (headers included), and the record view: what overlaps or is cut.
MEASURE = """() => {
  const problems = [];
  const inside = (r, b) => r.left >= b.left - 1 && r.right <= b.right + 1;
  // What shows: not display:none, not hidden, not in a collapsed column (app.css collapses some where the list is narrow).
  const collapsed = (cell) => {
    const col = cell.closest('table')?.querySelectorAll('col')[cell.cellIndex];
    return Boolean(col) && getComputedStyle(col).visibility === 'collapse';
  };
  const shown = (e) => {
    const s = getComputedStyle(e);
    const cell = e.closest('td, th');
    return s.display !== 'none' && s.visibility === 'visible' && e.getClientRects().length > 0 && !(cell && collapsed(cell));
  };
  const list = document.querySelector('.feed-list');
  const lb = list.getBoundingClientRect();
  if (list.scrollWidth > list.clientWidth + 1) problems.push(`the list scrolls sideways: ${list.scrollWidth} > ${list.clientWidth}`);
  if (document.documentElement.scrollWidth > innerWidth) problems.push('the page scrolls sideways');
  const view = document.querySelector('#record-view');
  const vb = view.getBoundingClientRect();
  if (vb.left < lb.right - 1) problems.push(`the record view overlaps the list: ${vb.left} < ${lb.right}`);
  if (vb.right > innerWidth) problems.push('the record view is cut');
  const text = (cell, b, what) => {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      if (!node.textContent.trim() || !shown(node.parentElement)) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const r of range.getClientRects())
        if (r.width && !inside(r, b)) problems.push(`${what}: "${node.textContent.trim().slice(0, 30)}" leaves its cell`);
    }
  };
  const rows = [...document.querySelectorAll('.feed-page:first-child tr')];
  for (const row of rows) {
    const cells = [...row.children].filter(shown);
    cells.forEach((cell, i) => {
      const b = cell.getBoundingClientRect();
      const what = `row ${row.dataset.id || 'head'} cell ${i}`;
      if (cell.scrollWidth > cell.clientWidth + 1) problems.push(`${what} overflows: ${cell.scrollWidth} > ${cell.clientWidth}`);
      if (i && cells[i - 1].getBoundingClientRect().right > b.left + 1) problems.push(`${what} overlaps the one before`);
      if (b.right > lb.right + 1) problems.push(`${what} is cut by the list's edge`);
      text(cell, b, what);
      for (const d of cell.querySelectorAll('*')) {
        if (!shown(d)) continue;
        if (!inside(d.getBoundingClientRect(), b)) problems.push(`${what}: <${d.tagName} ${d.className}> leaves its cell`);
        if (d.scrollWidth > d.clientWidth + 1 && getComputedStyle(d).display !== 'inline') problems.push(`${what}: <${d.tagName} ${d.className}> overflows`);
      }
    });
  }
  for (const dd of view.querySelectorAll('dd, dt, h2, label, button, p')) {
    if (!shown(dd)) continue;
    if (dd.scrollWidth > dd.clientWidth + 1) problems.push(`record view <${dd.tagName}> overflows: ${dd.textContent.slice(0, 30)}`);
    if (!inside(dd.getBoundingClientRect(), vb)) problems.push(`record view <${dd.tagName}> leaves it: ${dd.textContent.slice(0, 30)}`);
  }
  return problems;
}"""


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_feed_with_a_record_open_fits_with_eight_long_words(
    browser: Browser, long_words: LiveServer, size: str, lang: str
) -> None:
    page = console(browser, long_words, size, lang)
    page.locator("tr.record[data-id='3'] button.open-record").click()
    expect(page.locator("#record-title")).to_contain_text("3")
    page.locator("tr.record[data-id='3']").evaluate("row => row.scrollIntoView({block: 'center'})")  # the ruled one
    drawn(page)  # the layout settles
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"after-console-feed-record-{lang}-{size}.png"))
    problems = page.evaluate(MEASURE)
    assert problems == [], "\n".join(problems[:40])
    # The per-word results of every row are there to read beside the open record (or in it): nothing hidden but
    # for the privacy key.
    for n in range(1, 9):
        expect(page.locator(f"tr.record[data-id='{n}'] .word-ok").first).to_be_visible()
    page.context.close()


def test_a_ruled_challenge_leads_with_its_final_verdict_and_marks_the_first_superseded(
    browser: Browser, long_words: LiveServer
) -> None:
    page = console(browser, long_words, "1440x900", "en")
    three = page.locator("tr.record[data-id='3'] td.verdict-ok")
    # The final verdict first, the first one marked superseded (not merely "first verdict").
    expect(three.locator(".final > :first-child")).to_have_text("✓ ACCEPTABLE")
    expect(three.locator(".superseded")).to_have_text("superseded: ✗ UNACCEPTABLE")
    page.locator("tr.record[data-id='3'] button.open-record").click()
    view = page.locator("#record-view dl")
    # In the record view, the final verdict comes before the record's own, which is marked superseded. Its terms
    # are read once it shows record 3 with both (a read at once, on a loaded machine, found the view not drawn yet).
    expect(page.locator("#record-title")).to_contain_text("3")
    expect(view.locator("dt").filter(has_text=re.compile(r"^(Final verdict|Verdict)$"))).to_have_count(2)
    terms = view.locator("dt").all_inner_texts()
    assert terms.index("Final verdict") < terms.index("Verdict"), terms
    expect(page.locator("#record-verdict")).to_have_text("✗ UNACCEPTABLE superseded by ruling #9")
    expect(page.locator("#record-verdict .superseded-verdict")).to_have_css("text-decoration-line", "line-through")
    # The ruling's own row and view: its verdict is the final one (nothing superseded); the re-check agreeing
    # with #4 supersedes nothing either.
    nine = page.locator("tr.record[data-id='9']")
    expect(nine.locator(".superseded")).to_have_count(0)
    page.locator("tr.record[data-id='4'] button.open-record").click()
    expect(page.locator("#record-title")).to_contain_text("4")
    expect(page.locator("#record-verdict .superseded-verdict")).to_have_count(0)
    page.context.close()
