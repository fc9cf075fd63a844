// The TD console's live feed and record view: per-word results and accepting sources are shown
// here only; re-checks, reissues and rulings are recorded as linked audit records.

import { h, newRequestId } from "./api.js";
import { STRINGS } from "./strings.js";
import { call, problem, query, table, typedDatePattern, when } from "./td-common.js";
import { freshRows } from "./td-live.js";

const C = STRINGS.console;
const K = C.columns;

// Dates are typed in the order the console shows them (the browser's own date picker follows the
// browser's language, not the event's): the pattern is the field's placeholder.
function filtersForm(onApply, note) {
  const field = (name, label, attributes = {}) =>
    h("label", { for: `filter-${name}` }, label, h("input", { id: `filter-${name}`, name, ...attributes }));
  const date = { class: "date-field", maxlength: "40", autocomplete: "off", placeholder: typedDatePattern() };
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
    field("division", K.division, { maxlength: "100" }),
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
    field("since", C.since, date),
    field("until", C.until, date),
    h("button", { type: "submit", class: "primary" }, C.apply),
  );
  return form;
}

function perWord(record) {
  return h(
    "span",
    { class: "results" },
    record.results.map((r) =>
      h(
        "span",
        { class: r.acceptable ? "word-ok" : "word-bad" },
        `${r.word} ${r.acceptable ? STRINGS.acceptableIcon : STRINGS.unacceptableIcon}${r.source ? ` (${r.source})` : ""}`, // data
      ),
    ),
  );
}

function row(record, open) {
  const ok = record.verdict === "acceptable";
  return h(
    "tr",
    { class: `record ${ok ? "acceptable" : "unacceptable"}`, "data-id": record.id },
    h("td", {}, h("button", { type: "button", class: "link", onclick: () => open(record.id) }, `#${record.id}`)),
    h("td", {}, when(record.created_at)),
    h("td", {}, C.kind(record.kind)),
    h("td", {}, record.division),
    h("td", {}, record.round ?? ""),
    h("td", {}, record.table),
    h("td", {}, record.actor),
    h("td", {}, record.words.join(" ")),
    h(
      "td",
      { class: ok ? "verdict-ok" : "verdict-bad" },
      `${ok ? STRINGS.acceptableIcon : STRINGS.unacceptableIcon} ${ok ? STRINGS.acceptable : STRINGS.unacceptable}`,
    ),
    h("td", {}, perWord(record)),
  );
}

export function feedView(content) {
  let source = null;
  const status = h("p", { class: "live", role: "status" });
  const note = h("p", { class: "message", role: "alert", id: "filter-message" });
  const body = h("tbody", {});
  const exports = h("p", { class: "exports" });
  const detail = h("div", { class: "record-detail" });
  const open = (id) => showRecord(detail, id, open);
  const fresh = freshRows(); // rows the feed pushes: marked, and counted until seen
  const load = async (params) => {
    source?.close();
    fresh.clear();
    exports.replaceChildren(
      h("a", { href: `/api/export?format=csv&${params}`, class: "button secondary", download: "" }, C.exportCsv),
      " ",
      h("a", { href: `/api/export?format=jsonl&${params}`, class: "button secondary", download: "" }, C.exportJsonl),
      " ",
      h("a", { href: `/td?print=feed&${params}`, class: "button secondary", target: "_blank" }, C.print.feed),
    );
    try {
      const { records } = await call(`/api/challenges?limit=200&${params}`);
      body.replaceChildren(...records.map((r) => row(r, open)));
      if (!records.length) body.append(h("tr", {}, h("td", { colspan: "10" }, C.noRecords)));
    } catch (error) {
      problem(status, error);
      return;
    }
    source = new EventSource(`/api/feed?${params}`);
    source.addEventListener("open", () => (status.textContent = C.live));
    source.addEventListener("error", () => (status.textContent = C.liveLost));
    source.addEventListener("record", (event) => {
      const record = JSON.parse(event.data);
      body.querySelector("td[colspan]")?.parentElement.remove();
      const added = row(record, open);
      body.prepend(added);
      fresh.add(added);
    });
  };
  content.append(
    filtersForm(load, note),
    note,
    exports,
    status,
    h(
      "table",
      { class: "feed" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          [K.id, K.time, K.kind, K.division, K.round, K.table, K.actor, K.words, K.verdict, K.results].map((t) =>
            h("th", { scope: "col" }, t),
          ),
        ),
      ),
      body,
    ),
    detail,
    fresh.indicator,
  );
  load(new URLSearchParams());
  return () => {
    source?.close();
    fresh.stop();
  };
}

export async function showRecord(detail, id, open, message = "") {
  const note = h("p", { class: "message", role: "alert" }, message);
  detail.replaceChildren(note);
  let record;
  try {
    record = await call(`/api/challenges/${id}`);
  } catch (error) {
    return problem(note, error);
  }
  const ok = record.verdict === "acceptable";
  const fact = (label, value) => [h("dt", {}, label), h("dd", {}, value)];
  const after = (kind) => (created) => showRecord(detail, id, open, C.done(C.kind(kind), created.id));
  detail.replaceChildren(
    h(
      "section",
      { class: "record-view", "aria-labelledby": "record-title", id: "record-view" },
      h("h2", { id: "record-title", tabindex: "-1" }, C.record(record.id)),
      record.needs_ruling ? h("p", { class: "needs-ruling", role: "alert" }, C.needsRuling) : null,
      h(
        "dl",
        {},
        fact(K.kind, C.kind(record.kind)),
        fact(K.time, when(record.created_at)),
        fact(K.division, record.division),
        fact(K.round, record.round ?? ""),
        fact(K.table, record.table),
        fact(K.actor, C.actorChannel(record.actor, STRINGS.channel(record.channel))),
        fact(K.words, record.words.join(" ")),
        fact(
          K.verdict,
          `${ok ? STRINGS.acceptableIcon : STRINGS.unacceptableIcon} ${ok ? STRINGS.acceptable : STRINGS.unacceptable}`,
        ),
        fact(K.results, perWord(record)),
        fact(K.consequence, STRINGS.message(record.consequence.message, record.consequence.text)),
        fact(K.lexicon, `${record.lexicon} ${record.fingerprint}`),
        record.note ? fact(C.note, record.note) : null,
        record.agrees !== null ? fact(C.agrees, record.agrees ? C.yes : C.no) : null,
        fact(C.chain, C.chainPosition(record.id, record.hash.slice(0, 16), record.prev_hash.slice(0, 16))),
        record.parent_id
          ? fact(
              C.parent,
              h(
                "button",
                { type: "button", class: "link", onclick: () => open(record.parent_id) },
                `#${record.parent_id}`,
              ),
            )
          : null,
        record.children.length
          ? fact(
              C.children,
              record.children.map((c) =>
                h("button", { type: "button", class: "link", onclick: () => open(c) }, `#${c}`),
              ),
            )
          : null,
      ),
      h("p", {}, h("a", { href: `/docket?id=${record.id}`, target: "_blank" }, STRINGS.printDocket)),
      record.kind === "challenge" ? actions(record, note, after) : null,
      note,
      h("button", { type: "button", class: "secondary", onclick: () => detail.replaceChildren() }, C.close),
    ),
  );
  detail.querySelector("#record-title").focus();
}

function actions(record, note, after) {
  const post = (path, body, kind) =>
    call(`/api/challenges/${record.id}/${path}`, {
      method: "POST",
      body: { ...body, request_id: newRequestId() },
    }).then(after(kind), (error) => problem(note, error));
  const recheckNote = h("input", { id: "recheck-note", maxlength: "500" });
  const words = h("input", { id: "reissue-words", maxlength: "200" });
  const reason = h("input", { id: "reissue-reason", maxlength: "500" });
  const verdict = h(
    "select",
    { id: "ruling-verdict" },
    h("option", { value: "acceptable" }, STRINGS.acceptable),
    h("option", { value: "unacceptable" }, STRINGS.unacceptable),
  );
  const rulingNote = h("input", { id: "ruling-note", maxlength: "500" });
  const form = (title, fields, submit) =>
    h(
      "form",
      {
        class: "action",
        onsubmit: (event) => {
          event.preventDefault();
          submit();
        },
      },
      h("h3", {}, title),
      fields,
      h("button", { type: "submit", class: "primary" }, title),
    );
  return h(
    "div",
    { class: "actions-grid" },
    form(C.recheck, [h("label", { for: "recheck-note" }, C.note, recheckNote)], () =>
      post("recheck", { note: recheckNote.value || null }, "recheck"),
    ),
    form(
      C.reissue,
      [h("label", { for: "reissue-words" }, K.words, words), h("label", { for: "reissue-reason" }, C.reason, reason)],
      () => post("reissue", { words: words.value, reason: reason.value }, "reissue"),
    ),
    form(
      C.ruling,
      [
        h("label", { for: "ruling-verdict" }, C.rulingVerdict, verdict),
        h("label", { for: "ruling-note" }, C.note, rulingNote),
      ],
      () => post("ruling", { verdict: verdict.value, note: rulingNote.value }, "ruling"),
    ),
  );
}
