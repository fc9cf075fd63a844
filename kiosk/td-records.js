// The TD console's live feed: the whole log, a page at a time (older pages as the TD scrolls or clicks),
// how many records match, a search box that takes what a docket gives (its record number, or its QR code
// as a USB scanner types it: the record opens at once), filters, and the record view beside the list.
// Per-word results and accepting sources are shown here only; each challenge shows its final verdict.
// Keys: "/" (td-keys.js) comes to the search box, ↓ and ↑ move through the records, Enter opens one,
// Escape closes it.

import { h } from "./api.js";
import { STRINGS } from "./strings.js";
import { call, problem, query, typedDatePattern, when } from "./td-common.js";
import { freshRows } from "./td-live.js";
import { finalVerdict, perWord, showRecord } from "./td-record.js";

const C = STRINGS.console;
const K = C.columns;
const PAGE = 100;
// What a docket gives the TD: its record number (54, #54) or its QR code's text (wordjudge:challenge:54:...).
const DOCKET = /^\s*(#?\d{1,16}|wordjudge:challenge:\d{1,16}(:[0-9a-f]{16})?)\s*$/i;
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

// One page of the list: a table of its own, columns fixed, so that a page added lays out that page alone, and
// pages out of view are not laid out at all (app.css: content-visibility). Each has the column headers.
function pageTable(rows) {
  const body = h("tbody", {}, rows);
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
          COLUMNS.map((t, i) => h("th", { scope: "col", class: WIDTHS[i] === "per-word" ? "per-word" : null }, t)),
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
function filtersForm(onApply, note) {
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

// A TD's change (event settings, a division, a TD account, a device): who changed what, no verdict.
function changeRow(record, open) {
  return h(
    "tr",
    { class: "record change", "data-id": record.id },
    h(
      "td",
      {},
      h("button", { type: "button", class: "link open-record", onclick: () => open(record.id) }, `#${record.id}`),
    ),
    h("td", {}, when(record.created_at)),
    h("td", {}, C.kind(record.kind)),
    h("td", {}, record.division),
    h("td", {}, ""),
    h("td", {}, ""),
    h("td", {}, record.actor),
    h("td", { class: "change-what" }, STRINGS.message(record.change_message)),
    h("td", {}, ""),
    h("td", { class: "per-word" }, ""),
  );
}

function row(record, open) {
  if (record.kind === "change") return changeRow(record, open);
  const final = record.final;
  const shown = final && final.linked.length ? final.verdict : record.verdict;
  const state = shown === null ? "awaiting" : shown === "acceptable" ? "acceptable" : "unacceptable";
  return h(
    "tr",
    { class: `record ${state}`, "data-id": record.id },
    h(
      "td",
      {},
      h("button", { type: "button", class: "link open-record", onclick: () => open(record.id) }, `#${record.id}`),
    ),
    h("td", {}, when(record.created_at)),
    h("td", {}, C.kind(record.kind)),
    h("td", {}, record.division),
    h("td", {}, record.round ?? ""),
    h("td", {}, record.table),
    h("td", {}, record.actor),
    h("td", {}, record.words.join(" ")),
    h(
      "td",
      { class: shown === null ? "verdict-awaiting" : shown === "acceptable" ? "verdict-ok" : "verdict-bad" },
      finalVerdict(final, record.verdict),
    ),
    h("td", { class: "per-word" }, perWord(record)),
  );
}

export function feedView(content) {
  const view = { params: new URLSearchParams(), older: null, matching: 0, loading: null, source: null };
  const records = new Map(); // id -> the record as its row shows it (a `final` event updates it)
  let opener = null; // what had the focus when the record view opened: it gets it back on Escape
  const status = h("p", { class: "live", role: "status" });
  const note = h("p", { class: "message", role: "alert", id: "filter-message" });
  const count = h("p", { class: "matching", id: "matching", role: "status" });
  const pages = h("div", { class: "feed-pages" });
  let body = null; // the newest page's rows: the live feed adds to it
  const exports = h("p", { class: "exports" });
  const detail = h("div", { class: "record-detail", id: "record-detail" });
  const layout = h("div", { class: "feed-layout" });
  const fresh = freshRows(); // rows the feed pushes: marked, and counted until seen
  const older = h("button", { type: "button", class: "secondary", id: "older", onclick: () => more() }, C.older);
  const end = h("p", { class: "feed-end" });
  const search = h("input", {
    id: "search",
    type: "search",
    name: "q",
    maxlength: "200",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: C.searchHint,
    onfocus: () => search.select(), // a new scan replaces the last one
  });

  const close = () => {
    detail.replaceChildren();
    layout.classList.remove("has-record");
    (opener?.isConnected ? opener : search).focus();
    opener = null;
  };
  const open = (id) => {
    if (!layout.classList.contains("has-record")) opener = document.activeElement;
    layout.classList.add("has-record");
    return showRecord(detail, id, { open, close });
  };

  const showCount = () => {
    count.replaceChildren(
      h("strong", {}, C.matching(view.matching)),
      " · ",
      C.shown(pages.querySelectorAll("tr.record").length),
    );
    older.hidden = view.older === null;
    end.textContent = view.older === null && view.matching ? C.allShown : "";
    layout.dataset.loaded = String(Number(layout.dataset.loaded || 0) + 1); // for tests and the benchmark
  };

  const load = async (params, { docket = false } = {}) => {
    view.source?.close();
    view.params = params;
    view.loading = null;
    fresh.clear();
    exports.replaceChildren(
      h("a", { href: `/api/export?format=csv&${params}`, class: "button secondary", download: "" }, C.exportCsv),
      " ",
      h("a", { href: `/api/export?format=jsonl&${params}`, class: "button secondary", download: "" }, C.exportJsonl),
      " ",
      h("a", { href: `/td?print=feed&${params}`, class: "button secondary", target: "_blank" }, C.print.feed),
    );
    let page;
    try {
      page = await call(`/api/challenges?limit=${PAGE}&${params}`);
    } catch (error) {
      problem(note, error);
      return;
    }
    if (view.params !== params) return; // another search or filter came meanwhile
    note.textContent = "";
    records.clear();
    const first = pageTable(page.records.map((r) => remembered(r)));
    body = first.body;
    pages.replaceChildren(first.page);
    if (!page.records.length) {
      const empty = docket ? C.notFound(params.get("q")) : C.noRecords;
      body.append(h("tr", { class: "empty" }, h("td", { colspan: String(COLUMNS.length) }, empty)));
    }
    view.older = page.older;
    view.matching = page.matching;
    showCount();
    if (docket && page.records.length === 1) open(page.records[0].id); // the docket's record, at once
    follow(params, page.head.id ?? 0);
  };

  const remembered = (record) => {
    records.set(record.id, record);
    return row(record, open);
  };

  // The next older page (the button, or the TD scrolling to the end of the list).
  const more = () => {
    if (view.older === null || view.loading) return view.loading;
    const params = view.params;
    view.loading = call(`/api/challenges?limit=${PAGE}&before_id=${view.older}&${params}`)
      .then(
        (page) => {
          if (view.params !== params) return;
          pages.append(pageTable(page.records.map((r) => remembered(r))).page);
          view.older = page.older;
          showCount();
        },
        (error) => problem(note, error),
      )
      .finally(() => {
        if (view.params === params) view.loading = null;
      });
    return view.loading;
  };

  // From the head of the list just read: a record written meanwhile is not missed.
  const follow = (params, head) => {
    const source = new EventSource(`/api/feed?after_id=${head}&${params}`);
    view.source = source;
    source.addEventListener("open", () => (status.textContent = C.live));
    source.addEventListener("error", () => (status.textContent = C.liveLost));
    source.addEventListener("record", (event) => {
      const record = JSON.parse(event.data);
      if (records.has(record.id) || !body) return;
      body.querySelector("tr.empty")?.remove();
      const added = remembered(record);
      body.prepend(added);
      fresh.add(added);
      view.matching += 1;
      showCount();
    });
    // A re-check, reissue or ruling changed a challenge's final verdict: its row says so at once.
    source.addEventListener("final", (event) => {
      const final = JSON.parse(event.data);
      const record = records.get(final.challenge_id);
      const shown = pages.querySelector(`tr.record[data-id="${final.challenge_id}"]`);
      if (!record || !shown) return;
      record.final = final;
      const focused = shown.contains(document.activeElement);
      const updated = row(record, open);
      shown.replaceWith(updated);
      if (focused) updated.querySelector(".open-record").focus();
    });
  };

  const find = (event) => {
    event.preventDefault();
    const text = search.value.trim();
    if (DOCKET.test(text)) {
      // A docket's record whatever the filters: the TD has it in hand.
      load(new URLSearchParams({ q: text }), { docket: true });
      return;
    }
    let params;
    try {
      params = query(filters);
    } catch (error) {
      note.textContent = error.message;
      return;
    }
    if (text) params.set("q", text);
    load(params);
  };
  const filters = filtersForm((params) => {
    if (search.value.trim() && !DOCKET.test(search.value)) params.set("q", search.value.trim());
    load(params);
  }, note);

  // Older pages come as the end of the list comes into view.
  const watcher = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && more(), {
    rootMargin: "200px",
  });
  watcher.observe(older);

  const links = () => [...pages.querySelectorAll("button.open-record")];
  const keys = (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (event.key === "Escape" && layout.classList.contains("has-record")) {
      event.preventDefault();
      close();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const list = links();
      const at = list.indexOf(target);
      if (at < 0 && target !== search && isTextField(target)) return; // a field's own arrows
      if (at < 0 && event.key === "ArrowUp") return;
      event.preventDefault();
      if (at < 0) list[0]?.focus();
      else if (event.key === "ArrowUp") (list[at - 1] || search).focus();
      else if (list[at + 1]) list[at + 1].focus();
      else more(); // the end of the list: the next older page
    }
  };
  document.addEventListener("keydown", keys);

  content.append(
    h(
      "form",
      { class: "search", role: "search", onsubmit: find },
      h("label", { for: "search" }, C.search, search),
      h("button", { type: "submit", class: "primary" }, C.find),
    ),
    h("p", { class: "keys-hint" }, C.keys),
    filters,
    note,
    h("div", { class: "feed-status" }, count, exports, status),
    layout,
    fresh.indicator,
  );
  layout.append(h("div", { class: "feed-list" }, pages, older, end), detail);
  load(new URLSearchParams());
  search.focus(); // the TD comes with a docket: a scan, or its number and Enter, opens its record
  return () => {
    view.source?.close();
    view.params = null;
    watcher.disconnect();
    fresh.stop();
    document.removeEventListener("keydown", keys);
  };
}
