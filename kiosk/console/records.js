// The TD console's live feed: the whole log, a page at a time (older pages as the TD scrolls or clicks),
// how many records match, a search box that takes what a docket gives (its record number, or its QR code
// as a USB scanner types it: the record opens at once), filters, and the record view beside the list.
// Per-word results and accepting sources are shown here only; each challenge shows its final verdict.
// Keys: "/" (console/keys.js) comes to the search box, ↓ and ↑ move through the records, Enter opens one,
// Escape closes it.

import { h } from "../shared/api.js";
import { STRINGS } from "../shared/strings.js";
import { call, changeSaid, problem, query, readSplits, recordWordBoxes, typedDatePattern, when } from "./common.js";
import { freshRows } from "./live.js";
import { finalVerdict, perWord, showRecord } from "./record.js";

const C = STRINGS.console;
const K = C.columns;
const PAGE = 100;
// What a docket gives the TD: its record number (54, #54) or its QR code's text (wordjudge:challenge:54:...).
const DOCKET = /^\s*(#?\d{1,16}|wordjudge:challenge:\d{1,16}(:[0-9a-f]{16})?)\s*$/i;
// A QR code's text as it arrives (a scanner types it a key at a time): its prefix, then what has come of the rest.
const SCAN_PREFIX = /wordjudge:challenge:/gi;
const PREFIX_LENGTH = "wordjudge:challenge:".length;
const SCAN = /^wordjudge:challenge:\d{0,16}(:[0-9a-f]{0,16})?/i;
const COLUMNS = [K.id, K.time, K.kind, K.division, K.round, K.table, K.actor, K.words, K.verdict, K.results];
const WIDTHS = [
  "c-id",
  "c-time",
  "c-kind",
  "c-division",
  "c-round",
  "c-table",
  "c-actor",
  "c-words",
  "c-verdict",
  "per-word",
];

// What a cell shows only in the narrow list (beside an open record, app.css): the columns it stands for.
const narrow = (...parts) => h("span", { class: "narrow-only" }, parts);
const line = (text) => h("span", { class: "narrow-line" }, text);

// One page of the list: a table of its own, columns fixed, so that a page added lays out that page alone, and
// pages out of view are not laid out at all (app.css: content-visibility). Each has the column headers. Where the
// list is narrow (a record open beside it), the time goes under the record's number, the place and device under
// its kind, the per-word results in place of the words (app.css collapses the columns they leave).
function pageTable(rows) {
  const body = h("tbody", {}, rows);
  const heads = {
    "c-id": [K.id, narrow(line(K.time))],
    "c-kind": [K.kind, narrow(line(K.division), line(K.round), line(K.table), line(K.actor))],
    "c-words": [h("span", { class: "wide-only" }, K.words), narrow(K.results)],
  };
  const page = h(
    "div",
    { class: "feed-page" },
    h(
      "table",
      { class: "feed" },
      h(
        "colgroup",
        {},
        WIDTHS.map((c) => h("col", { class: c })),
      ),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          COLUMNS.map((t, i) => h("th", { scope: "col", class: WIDTHS[i] }, heads[WIDTHS[i]] ?? t)),
        ),
      ),
      body,
    ),
  );
  return { page, body };
}

function isTextField(element) {
  return Boolean(element?.closest?.("input, textarea, select, [contenteditable]"));
}

// Dates are typed in the order the console shows them (the browser's own date picker follows the
// browser's language, not the event's): the pattern is the field's placeholder.
function filtersForm(onApply, note, onError) {
  const field = (name, label, attributes = {}) =>
    h("label", { for: `filter-${name}` }, label, h("input", { id: `filter-${name}`, name, ...attributes }));
  const date = { class: "date-field", maxlength: "40", autocomplete: "off", placeholder: typedDatePattern() };
  const division = h(
    "select",
    { id: "filter-division", name: "division" },
    h("option", { value: "" }, C.everyDivision),
  );
  call("/api/event").then(
    (event) => division.append(...event.divisions.map((d) => h("option", { value: d.name }, d.name))),
    (error) => problem(note, error),
  );
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (event) => {
        event.preventDefault();
        let params;
        try {
          params = query(form);
        } catch (error) {
          note.textContent = error.message;
          onError();
          return;
        }
        note.textContent = "";
        onApply(params);
      },
    },
    h("label", { for: "filter-division" }, K.division, division),
    field("round", K.round, { inputmode: "numeric", maxlength: "3" }),
    field("table", K.table, { maxlength: "10" }),
    field("actor", C.device, { maxlength: "64" }),
    h(
      "label",
      { for: "filter-verdict" },
      K.verdict,
      h(
        "select",
        { id: "filter-verdict", name: "verdict" },
        h("option", { value: "" }, C.anyVerdict),
        h("option", { value: "acceptable" }, STRINGS.acceptable),
        h("option", { value: "unacceptable" }, STRINGS.unacceptable),
      ),
    ),
    h(
      "label",
      { for: "filter-kind" },
      K.kind,
      h(
        "select",
        { id: "filter-kind", name: "kind" },
        h("option", { value: "" }, C.anyKind),
        ["challenge", "recheck", "reissue", "ruling", "change"].map((kind) =>
          h("option", { value: kind }, C.kind(kind)),
        ),
      ),
    ),
    field("since", C.since, date),
    field("until", C.until, date),
    h("button", { type: "submit", class: "primary" }, C.apply),
  );
  return form;
}

// The first cells of a row, with what the narrow list shows under them (see pageTable).
function leadCells(record, open, place) {
  const time = when(record.created_at);
  return [
    h(
      "td",
      { class: "c-id" },
      h("button", { type: "button", class: "link open-record", onclick: () => open(record.id) }, `#${record.id}`),
      narrow(line(time)),
    ),
    h("td", { class: "c-time" }, time),
    h("td", { class: "c-kind" }, C.kind(record.kind), narrow(place ? line(place) : null, line(record.actor))),
  ];
}

// A TD's change (event settings, a division, a TD account, a device): who changed what, no verdict.
function changeRow(record, open) {
  return h(
    "tr",
    { class: "record change", "data-id": record.id },
    leadCells(record, open, record.division || null),
    h("td", { class: "c-division" }, record.division),
    h("td", { class: "c-round" }, ""),
    h("td", { class: "c-table" }, ""),
    h("td", { class: "c-actor" }, record.actor),
    h("td", { class: "c-words change-what" }, changeSaid(record)),
    h("td", { class: "c-verdict" }, ""),
    h("td", { class: "per-word" }, ""),
  );
}

// `final`: the final verdict of the record's challenge (a challenge's own; for a re-check, reissue or ruling,
// its challenge's when the list has it), or null.
function row(record, open, final = record.final) {
  if (record.kind === "change") return changeRow(record, open);
  const shown = final && final.linked.length ? final.verdict : record.verdict;
  const state = shown === null ? "awaiting" : shown === "acceptable" ? "acceptable" : "unacceptable";
  const words = recordWordBoxes(record);
  const results = record.results?.length ? perWord(record) : null;
  return h(
    "tr",
    { class: `record ${state}`, "data-id": record.id },
    leadCells(record, open, C.rulings.place(record.division, record.table, record.round ?? null)),
    h("td", { class: "c-division" }, record.division),
    h("td", { class: "c-round" }, record.round ?? ""),
    h("td", { class: "c-table" }, record.table),
    h("td", { class: "c-actor" }, record.actor),
    h(
      "td",
      { class: "c-words" },
      h("span", { class: results ? "words-plain has-results" : "words-plain" }, words),
      results ? h("span", { class: "per-word narrow-only" }, perWord(record)) : null,
    ),
    h(
      "td",
      {
        class: `c-verdict ${shown === null ? "verdict-awaiting" : shown === "acceptable" ? "verdict-ok" : "verdict-bad"}`,
      },
      finalVerdict(final, record.verdict, record.id),
    ),
    h("td", { class: "per-word" }, perWord(record)),
  );
}

// The feed's shared state: what it shows and asks (view), the records its rows show, and its elements. The
// functions below share it; feedView assigns its handlers (open, close, more) once they exist.
function feedState() {
  const feed = {
    view: { params: new URLSearchParams(), older: null, matching: 0, loading: null, source: null },
    records: new Map(), // id -> the record as its row shows it (a `final` event updates it)
    opener: null, // what had the focus when the record view opened: it gets it back on Escape
    status: h("p", { class: "live", role: "status" }),
    note: h("p", { class: "message", role: "alert", id: "filter-message" }),
    count: h("p", { class: "matching", id: "matching", role: "status" }),
    pages: h("div", { class: "feed-pages" }),
    body: null, // the newest page's rows: the live feed adds to it
    exports: h("p", { class: "exports" }),
    detail: h("div", { class: "record-detail", id: "record-detail" }),
    layout: h("div", { class: "feed-layout" }),
    fresh: freshRows(), // rows the feed pushes: marked, and counted until seen
  };
  feed.older = h("button", { type: "button", class: "secondary", id: "older", onclick: () => feed.more() }, C.older);
  feed.end = h("p", { class: "feed-end" });
  feed.search = searchBox();
  return feed;
}

// The search box. A docket's QR code typed by a scanner or pasted into a box that held other text, wherever the
// caret was (a click into focused text puts it there, not at the end): the scan is the whole query. It is told by
// its prefix arriving: the box holds it once more than before this input. Keys typed after a scan are added to it.
function searchBox() {
  const search = h("input", {
    id: "search",
    type: "search",
    name: "q",
    maxlength: "200",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: C.searchHint,
    onfocus: () => search.select(), // a new scan replaces the last one
    // A click into the box selects its text too (the click's own mouseup would put the caret in it instead).
    onpointerdown: () => (search.dataset.clicked = document.activeElement === search ? "" : "1"),
    onmouseup: (event) => {
      if (search.dataset.clicked) event.preventDefault();
      search.dataset.clicked = "";
    },
    oninput: (event) => scanned(event),
  });
  let prefixes = 0;
  const scanned = (event) => {
    const value = search.value;
    const starts = [...value.matchAll(SCAN_PREFIX)].map((m) => m.index);
    const before = prefixes;
    prefixes = starts.length;
    if (starts.length <= before) return;
    const caret = search.selectionEnd ?? value.length;
    // The prefix just come is the last one before the caret; what came with it ends at the caret.
    const start = starts.filter((at) => at + PREFIX_LENGTH <= caret).at(-1) ?? starts.at(-1);
    const scan = value.slice(start, Math.max(caret, start + PREFIX_LENGTH)).match(SCAN)[0];
    if (scan !== value) {
      search.value = scan;
      search.setSelectionRange(scan.length, scan.length);
      prefixes = 1;
    }
    // A pasted or dropped docket is searched at once (a scanner ends with Enter, which searches).
    if (event.inputType?.startsWith("insertFrom") && DOCKET.test(scan)) search.form.requestSubmit();
  };
  return search;
}

// The record view beside the list: feed.open(id) shows a record, feed.close() gives the focus back.
function recordView(feed) {
  feed.close = () => {
    feed.detail.replaceChildren();
    feed.layout.classList.remove("has-record");
    (feed.opener?.isConnected ? feed.opener : feed.search).focus();
    feed.opener = null;
  };
  feed.open = (id) => {
    if (!feed.layout.classList.contains("has-record")) feed.opener = document.activeElement;
    feed.layout.classList.add("has-record");
    return showRecord(feed.detail, id, { open: feed.open, close: feed.close });
  };
}

function showCount(feed) {
  const { view, older, end, layout } = feed;
  feed.count.replaceChildren(
    h("strong", {}, C.matching(view.matching)),
    " · ",
    C.shown(feed.pages.querySelectorAll("tr.record").length),
  );
  older.hidden = view.older === null;
  end.textContent = view.older === null && view.matching ? C.allShown : "";
  layout.dataset.loaded = String(Number(layout.dataset.loaded || 0) + 1); // for tests and the benchmark
}

// The list for these filters and search, from its newest page, then the records the feed pushes.
async function load(feed, params, { docket = false } = {}) {
  const { view } = feed;
  view.source?.close();
  view.params = params;
  view.loading = null;
  feed.fresh.clear();
  feed.exports.replaceChildren(
    h("a", { href: `/api/export?format=csv&${params}`, class: "button secondary", download: "" }, C.exportCsv),
    " ",
    h("a", { href: `/api/export?format=jsonl&${params}`, class: "button secondary", download: "" }, C.exportJsonl),
    " ",
    h("a", { href: `/td?print=feed&${params}`, class: "button secondary", target: "_blank" }, C.print.feed),
  );
  let page;
  try {
    [page] = await Promise.all([call(`/api/challenges?limit=${PAGE}&${params}`), readSplits()]);
  } catch (error) {
    if (view.params !== params) return;
    problem(feed.note, error);
    stale(feed);
    return;
  }
  if (view.params !== params) return; // another search or filter came meanwhile
  feed.note.textContent = "";
  feed.records.clear();
  const first = pageTable(rowsOf(feed, page.records));
  feed.body = first.body;
  feed.pages.replaceChildren(first.page);
  if (!page.records.length) {
    const empty = docket ? C.notFound(params.get("q")) : C.noRecords;
    feed.body.append(h("tr", { class: "empty" }, h("td", { colspan: String(COLUMNS.length) }, empty)));
  }
  view.older = page.older;
  view.matching = page.matching;
  showCount(feed);
  if (docket && page.records.length === 1) feed.open(page.records[0].id); // the docket's record, at once
  follow(feed, params, page.head.id ?? 0);
}

// A record's row, with its challenge's final verdict: a re-check, reissue or ruling whose verdict another
// record's superseded says so too (when the list holds its challenge).
const familyFinal = (feed, record) =>
  record.final ??
  [...feed.records.values()].find((r) => r.final?.linked.some((step) => step.id === record.id))?.final ??
  null;
const rowsOf = (feed, list) => {
  for (const record of list) feed.records.set(record.id, record); // a page's challenges before its newer rulings
  return list.map((record) => remembered(feed, record));
};
// A search refused (or its filters): the list no longer answers what the TD asked, so it goes, with its count
// and export links; the message says why. The next search that succeeds shows a list again.
const stale = (feed) => {
  feed.view.source?.close();
  feed.view.older = null;
  feed.view.matching = 0;
  feed.records.clear();
  feed.fresh.clear();
  feed.body = null;
  feed.pages.replaceChildren();
  feed.exports.replaceChildren();
  feed.count.replaceChildren();
  feed.older.hidden = true;
  feed.end.textContent = "";
  feed.status.textContent = "";
};
const remembered = (feed, record) => {
  feed.records.set(record.id, record);
  return row(record, feed.open, familyFinal(feed, record));
};

// The next older page (the button, or the TD scrolling to the end of the list).
function more(feed) {
  const { view } = feed;
  if (view.older === null || view.loading) return view.loading;
  const params = view.params;
  view.loading = call(`/api/challenges?limit=${PAGE}&before_id=${view.older}&${params}`)
    .then(
      (page) => {
        if (view.params !== params) return;
        feed.pages.append(pageTable(rowsOf(feed, page.records)).page);
        view.older = page.older;
        showCount(feed);
      },
      (error) => problem(feed.note, error),
    )
    .finally(() => {
      if (view.params === params) view.loading = null;
    });
  return view.loading;
}

// From the head of the list just read: a record written meanwhile is not missed.
function follow(feed, params, head) {
  const { view, records, status } = feed;
  const source = new EventSource(`/api/feed?after_id=${head}&${params}`);
  view.source = source;
  source.addEventListener("open", () => (status.textContent = C.live));
  source.addEventListener("error", () => (status.textContent = C.liveLost));
  source.addEventListener("record", (event) => {
    const record = JSON.parse(event.data);
    if (records.has(record.id) || !feed.body) return;
    feed.body.querySelector("tr.empty")?.remove();
    const added = remembered(feed, record);
    feed.body.prepend(added);
    feed.fresh.add(added);
    view.matching += 1;
    showCount(feed);
  });
  // A re-check, reissue or ruling changed a challenge's final verdict: its row says so at once.
  source.addEventListener("final", (event) => {
    const final = JSON.parse(event.data);
    const challenge = records.get(final.challenge_id);
    if (challenge) challenge.final = final;
    // The challenge's row and those of its re-checks, reissues and rulings shown.
    for (const id of [final.challenge_id, ...final.linked.map((step) => step.id)]) {
      const record = records.get(id);
      const shown = feed.pages.querySelector(`tr.record[data-id="${id}"]`);
      if (!record || !shown) continue;
      const focused = shown.contains(document.activeElement);
      const updated = row(record, feed.open, id === final.challenge_id ? final : (familyFinal(feed, record) ?? final));
      shown.replaceWith(updated);
      if (focused) updated.querySelector(".open-record").focus();
    }
  });
}

// The search form's submit: a docket's record, or the records the search and filters match.
function find(feed, event) {
  event.preventDefault();
  const text = feed.search.value.trim();
  if (DOCKET.test(text)) {
    // A docket's record whatever the filters: the TD has it in hand.
    load(feed, new URLSearchParams({ q: text }), { docket: true });
    return;
  }
  let params;
  try {
    params = query(feed.filters);
  } catch (error) {
    feed.view.params = null; // a search under way is not shown when it comes
    feed.note.textContent = error.message;
    stale(feed);
    return;
  }
  if (text) params.set("q", text);
  load(feed, params);
}

function feedFilters(feed) {
  const { search } = feed;
  return filtersForm(
    (params) => {
      if (search.value.trim() && !DOCKET.test(search.value)) params.set("q", search.value.trim());
      load(feed, params);
    },
    feed.note,
    () => {
      feed.view.params = null;
      stale(feed);
    },
  );
}

// The feed's keys: Escape closes the record, ↓ and ↑ move through the records (and from and to the search box).
function feedKeys(feed) {
  const links = () => [...feed.pages.querySelectorAll("button.open-record")];
  return (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (event.key === "Escape" && feed.layout.classList.contains("has-record")) {
      event.preventDefault();
      feed.close();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const list = links();
      const at = list.indexOf(target);
      if (at < 0 && target !== feed.search && isTextField(target)) return; // a field's own arrows
      if (at < 0 && event.key === "ArrowUp") return;
      event.preventDefault();
      if (at < 0) list[0]?.focus();
      else if (event.key === "ArrowUp") (list[at - 1] || feed.search).focus();
      else if (list[at + 1]) list[at + 1].focus();
      else feed.more(); // the end of the list: the next older page
    }
  };
}

export function feedView(content) {
  const feed = feedState();
  recordView(feed);
  feed.more = () => more(feed);
  feed.filters = feedFilters(feed);
  const { search, note, count, exports, status, layout, fresh, pages, older, end, detail } = feed;

  // Older pages come as the end of the list comes into view.
  const watcher = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && feed.more(), {
    rootMargin: "200px",
  });
  watcher.observe(older);
  const keys = feedKeys(feed);
  document.addEventListener("keydown", keys);

  content.append(
    h(
      "form",
      { class: "search", role: "search", onsubmit: (event) => find(feed, event) },
      h("label", { for: "search" }, C.search, search),
      h("button", { type: "submit", class: "primary" }, C.find),
    ),
    h("p", { class: "keys-hint" }, C.keys),
    feed.filters,
    note,
    h("div", { class: "feed-status" }, count, exports, status),
    layout,
    fresh.indicator,
  );
  layout.append(h("div", { class: "feed-list" }, pages, older, end), detail);
  load(feed, new URLSearchParams());
  search.focus(); // the TD comes with a docket: a scan, or its number and Enter, opens its record
  return () => {
    feed.view.source?.close();
    feed.view.params = null;
    watcher.disconnect();
    fresh.stop();
    document.removeEventListener("keydown", keys);
  };
}
