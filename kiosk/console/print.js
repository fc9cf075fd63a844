// Pages a TD prints, opened as /td?print=...: a division's round report (challenges, final verdicts, rulings
// pending, most challenged words) and the live feed's records as filtered. A4, black on white; Print and
// Back stay off the paper. Never per-word results: paper leaves the TD's table.

import { h } from "../shared/api.js";
import { STRINGS } from "../shared/strings.js";
import { call, changeSaid, problem, readSplits, recordWords, table, when } from "./common.js";
import { decidedBy, verdictText as said, verdictWord } from "../shared/verdict-words.js";

const C = STRINGS.console;
const K = C.columns;
const R = C.report;
const PAGE = 1000; // the API's largest page

const verdictText = (verdict) => said(STRINGS, verdict);
const roundText = (round) => (round === null || round === undefined ? C.noRound : String(round));

// What a challenge came to, for paper: its final verdict and, when something after it decided, what did
// ("ruled ACCEPTABLE by the TD (alice), #54"), or that it awaits the TD's ruling.
export function finalText(record) {
  const final = record.final;
  if (!final) return verdictText(record.verdict);
  if (final.verdict === null) return final.awaiting_ruling ? decidedBy(STRINGS, final) : STRINGS.docketAwaiting;
  const by = final.decided_by;
  if (!final.linked.length || !by || by.kind === "challenge") return verdictText(final.verdict);
  return `${verdictText(final.verdict)} · ${decidedBy(STRINGS, final)}`;
}

// Every record the filters `params` match, newest first, at most `most`, and how many match in all.
async function records(params, most) {
  await readSplits(); // the words as the board held them
  const found = [];
  let before = null;
  let matching = null;
  do {
    const page = new URLSearchParams(params);
    page.set("limit", String(PAGE));
    if (before !== null) page.set("before_id", String(before));
    const answer = await call(`/api/challenges?${page}`);
    if (matching === null) matching = answer.matching ?? answer.records.length;
    found.push(...answer.records);
    before = answer.older;
  } while (before !== null && found.length < most);
  return { records: found.slice(0, most), matching };
}

function frame(app, title, me) {
  const body = h("div", { class: "print-body" });
  app.replaceChildren(
    h(
      "div",
      { class: "print-controls" },
      h("button", { type: "button", class: "primary", id: "print", onclick: () => window.print() }, C.print.print),
      h("a", { href: "/td", class: "button secondary", id: "print-back" }, C.print.back),
    ),
    h(
      "article",
      { class: "print-page" },
      h(
        "header",
        {},
        title,
        h("p", { class: "print-meta" }, C.print.printed(when(new Date().toISOString()), me.actor)),
      ),
      body,
    ),
  );
  return body;
}

export async function printView(app, kind, me) {
  app.dataset.screen = `print-${kind}`;
  const params = new URLSearchParams(location.search);
  params.delete("print");
  params.delete("lang");
  const note = h("p", { class: "message", role: "alert" });
  try {
    if (kind === "report") await report(app, params, me);
    else await feed(app, params, me);
  } catch (error) {
    app.append(note);
    problem(note, error);
  }
  document.getElementById("print")?.focus();
}

// -- a division's round report ---------------------------------------------------------------------

async function report(app, params, me) {
  const division = params.get("division") || "";
  const round = params.get("round") ? Number(params.get("round")) : null;
  const scope = new URLSearchParams({ division, ...(round !== null ? { round: String(round) } : {}) });
  const [event, summary, listed, pending] = await Promise.all([
    call("/api/event"),
    call(`/api/summary?${scope}`),
    records(new URLSearchParams([...scope, ["kind", "challenge"]]), Infinity),
    call(`/api/challenges?${scope}&needs_ruling=true&limit=${PAGE}`),
  ]);
  const challenges = listed.records.slice().reverse(); // in the order they were made
  const finals = challenges.map((r) => (r.final ? r.final.verdict : r.verdict)); // null: awaiting a ruling
  const count = (test) => finals.filter(test).length;
  const awaiting = challenges.filter((r) => r.final && r.final.verdict === null).length;
  const changed = challenges.filter((r) => r.final?.changed).length;
  const total = summary.total;
  const body = frame(
    app,
    [
      h("h1", {}, event.name),
      h("h2", { id: "report-title" }, round === null ? R.titleAll(division) : R.title(division, round)),
    ],
    me,
  );
  const fact = (label, value, id) => [h("dt", {}, label), h("dd", { id }, STRINGS.formatNumber(value))];
  body.append(
    h(
      "dl",
      { class: "report-facts" },
      fact(R.challenges, total.challenges, "report-challenges"),
      fact(
        R.finalIs(STRINGS.acceptable),
        count((v) => v === "acceptable"),
        "report-acceptable",
      ),
      fact(
        R.finalIs(STRINGS.unacceptable),
        count((v) => v === "unacceptable"),
        "report-unacceptable",
      ),
      fact(R.awaiting, awaiting, "report-awaiting"),
      fact(R.changed, changed, "report-changed"),
    ),
    h("h3", {}, R.pending),
    pending.records.length
      ? table(
          [K.id, K.table, K.round, K.words, R.final],
          pending.records
            .slice()
            .reverse()
            .map((r) =>
              h(
                "tr",
                { class: "pending", "data-id": r.id },
                h("td", {}, `#${r.id}`),
                h("td", {}, r.table),
                h("td", {}, roundText(r.round)),
                h("td", {}, recordWords(r)),
                h("td", {}, r.final ? finalText(r) : C.needsRuling),
              ),
            ),
          { class: "report-pending" },
        )
      : h("p", { id: "report-none-pending" }, R.nonePending),
    h("h3", {}, C.mostChallenged),
    h(
      "p",
      { id: "report-words" },
      total.most_challenged.length
        ? total.most_challenged.map((w) => C.mostWord(w.word, w.challenges)).join(", ")
        : R.noWords,
    ),
    h("h3", {}, R.list),
    challenges.length
      ? table(
          [K.id, K.time, K.table, K.round, K.words, R.adjudicated, R.final],
          challenges.map((r) =>
            h(
              "tr",
              { "data-id": r.id },
              h("td", {}, `#${r.id}`),
              h("td", {}, STRINGS.formatDate(r.created_at, "short-time")),
              h("td", {}, r.table),
              h("td", {}, roundText(r.round)),
              h("td", {}, recordWords(r)),
              h("td", {}, verdictText(r.verdict)),
              h("td", { class: "final" }, finalText(r)),
            ),
          ),
          { class: "report-list" },
        )
      : h("p", {}, C.noRecords),
  );
}

// -- the feed, as filtered ----------------------------------------------------------------------------

// A filter of the feed as the page says it: its field's label and the value typed (a verdict in words).
function filterText(key, value) {
  const labels = {
    division: K.division,
    round: K.round,
    table: K.table,
    actor: C.device,
    verdict: K.verdict,
    since: C.since,
    until: C.until,
    kind: K.kind,
  };
  const shown =
    key === "verdict"
      ? verdictWord(STRINGS, value)
      : key === "since" || key === "until"
        ? when(value)
        : key === "kind"
          ? C.kind(value)
          : value;
  return C.print.filter(labels[key] || key, shown);
}

async function feed(app, params, me) {
  const [event, listed] = await Promise.all([call("/api/event"), records(params, PAGE)]);
  const filters = [...params].map(([key, value]) => filterText(key, value)).join(", ");
  const body = frame(app, [h("h1", {}, event.name), h("h2", { id: "report-title" }, C.print.feedTitle)], me);
  body.append(
    h(
      "p",
      { id: "feed-count" },
      listed.matching > listed.records.length
        ? C.print.newest(listed.records.length, listed.matching)
        : C.print.all(listed.records.length),
      filters ? ` · ${filters}` : "",
    ),
    table(
      [K.id, K.time, K.kind, K.division, K.round, K.table, K.actor, K.words, K.verdict, R.final],
      listed.records.map((r) =>
        h(
          "tr",
          { "data-id": r.id },
          h("td", {}, `#${r.id}`),
          h("td", {}, STRINGS.formatDate(r.created_at, "short-datetime")),
          h("td", {}, C.kind(r.kind)),
          h("td", {}, r.division),
          h("td", {}, roundText(r.round)),
          h("td", {}, r.table),
          h("td", {}, r.actor),
          // A TD's change: what changed, no verdict.
          h("td", {}, r.kind === "change" ? changeSaid(r) : recordWords(r)),
          h("td", {}, r.verdict ? verdictText(r.verdict) : ""),
          h(
            "td",
            { class: "final" },
            r.final ? finalText(r) : r.parent_id ? STRINGS.docketOf[r.kind]?.(r.parent_id) : "",
          ),
        ),
      ),
      { class: "report-list" },
    ),
  );
}
