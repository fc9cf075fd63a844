// A printable docket of one record (WESPA 3.10.2), for 58 mm and 80 mm receipt printers and A6: event,
// division, round, table, the challenged words (the slip had them), verdict, consequence, the challenge's
// final verdict after its re-checks, reissues and rulings, lexicon and list ID, time, record id, the
// record's own place in the audit log, and a QR code of both. Never the per-word results (the server
// does not send them for a docket).
//
// The page is as wide as the paper and, on a receipt roll, as long as the docket: once the docket is laid
// out, its height sets the page size (@page), which both the browser's print and a PDF follow. (Chromium
// ignores "size: 58mm auto": a page without a length gets a fixed one, mostly blank.)

import { api, h, proveWith } from "../shared/api.js";
import { anyProof, anyToken } from "../shared/device.js";
import { leadingVerdict, linked, standingNote, superseded } from "../shared/standing.js";
import { STRINGS as S } from "../shared/strings.js";
import { unverifiedBadges } from "../shared/ui.js";
import { storedTiles, tilesMatter } from "../shared/tiles.js";
import { decidedBy, verdictText, verdictWord, wordsShown } from "../shared/verdict-words.js";

const SIZES = ["58mm", "80mm", "a6"];
const PX_PER_MM = 96 / 25.4; // CSS pixels
const SLACK_MM = 1; // below the last line: rounding never pushes it onto a second page
const app = document.getElementById("app");
const params = new URLSearchParams(location.search);
const F = S.docketFacts;
// The page's size, set from here: a constructed sheet, as the page's security policy allows no inline style.
const pageSheet = new CSSStyleSheet();
document.adoptedStyleSheets = [...document.adoptedStyleSheets, pageSheet];
const AGAIN_MS = 3000; // while the server cannot be reached, the docket asks again this often

// The paper's figures in millimetres, from its stylesheet (docket-<size>.css); NaN for a roll's length.
function paper() {
  const style = getComputedStyle(document.body);
  const mm = (name) => parseFloat(style.getPropertyValue(name));
  return { width: mm("--paper-width"), length: mm("--paper-length"), x: mm("--margin-x"), y: mm("--margin-y") };
}

// The page as wide as the paper and, for a roll, as long as the docket laid out on it. On a sheet (A6),
// a docket too long for it is set smaller until it fits: one docket, one sheet.
function fitPage() {
  const docket = document.querySelector(".docket");
  if (!docket) return;
  const { width, length, x, y } = paper();
  const height = () => docket.getBoundingClientRect().height / PX_PER_MM;
  docket.style.removeProperty("--fit");
  let pageLength = length;
  if (Number.isNaN(length)) pageLength = Math.ceil(height() + 2 * y + SLACK_MM);
  else {
    for (let scale = 0.95; height() + SLACK_MM > length - 2 * y && scale > 0.5; scale -= 0.05) {
      docket.style.setProperty("--fit", String(scale));
    }
  }
  pageSheet.replaceSync(`@page { size: ${width}mm ${pageLength}mm; margin: ${y}mm ${x}mm; }`);
  document.body.dataset.pageLength = String(pageLength); // for the tests, and anyone curious
}

function useSize(size) {
  document.body.dataset.size = size;
  for (const button of document.querySelectorAll(".docket-controls [data-size]")) {
    const chosen = button.dataset.size === size;
    button.setAttribute("aria-pressed", String(chosen));
    button.className = chosen ? "primary" : "secondary";
  }
  const url = new URL(location.href);
  url.searchParams.set("size", size); // a reload, or the print dialog's own reload, keeps it
  history.replaceState(null, "", url);
  fitPage();
}

function svg(markup) {
  // The QR code comes from our own server as SVG; parsed as SVG, never as HTML.
  const parsed = new DOMParser().parseFromString(markup, "image/svg+xml").documentElement;
  return document.importNode(parsed, true);
}

// How the challenge ended, when records were linked to it: the final verdict, what gave it, and each
// linked record. Verdicts only: the server sends no per-word results and no notes. (The final verdict itself
// leads the docket, with the consequence that stands: see render.)
function finalBox(final, split) {
  if (!linked(final)) return null;
  const reason = decidedBy(S, final, split);
  const step = (s) =>
    s.kind === "ruling"
      ? S.docketStep.ruling(s.id, verdictWord(S, s.verdict), s.actor)
      : s.kind === "reissue"
        ? S.docketStep.reissue(s.id, verdictWord(S, s.verdict), wordsShown(s.words, split))
        : S.docketStep.recheck(s.id, verdictWord(S, s.verdict));
  return h(
    "section",
    { class: "docket-final" },
    h(
      "p",
      { class: "docket-final-verdict" },
      `${S.docketFinal}: ${final.verdict ? verdictText(S, final.verdict) : S.docketAwaiting}`,
    ),
    h("p", { class: "docket-final-by" }, reason),
    h("p", {}, h("strong", {}, `${S.docketLinked}:`)),
    h(
      "ol",
      {},
      final.linked.map((s) => h("li", {}, step(s))),
    ),
  );
}

// The docket's lead, its biggest line: the verdict that stands. After a re-check, reissue or ruling it is the
// challenge's final verdict (or that the TD's ruling is awaited), with the consequence that stands; the
// record's own verdict follows, said to be superseded (or confirmed) by the record that decided.
function lead(r, final) {
  const verdict = leadingVerdict(r, final);
  const by = final.decided_by;
  return [
    h("p", { class: "docket-verdict" }, verdict ? verdictText(S, verdict) : S.t("ui.docket.awaitingLead")),
    linked(final) && by && by.id !== r.id && by.consequence
      ? h("p", { class: "docket-final-consequence" }, S.message(by.consequence.message, by.consequence.text))
      : null,
    ((note) => (note ? h("p", { class: "docket-superseded" }, note) : null))(standingNote(S, r, final)),
  ];
}

function render(docket, size) {
  const r = docket.record;
  const standing = leadingVerdict(r, docket.final);
  const old = superseded(r, docket.final);
  // A code (list ID, log check) is typed or compared by someone: it takes the whole line, never broken (set
  // smaller if its length, --chars, needs it); on narrow paper so does a long value (words, a sentence, a name).
  // Values break only between words (docket.css).
  const fact = (label, value, kind = null) => {
    const text = typeof value === "number" ? S.formatNumber(value) : String(value);
    const dd = h("dd", { class: kind }, text);
    if (kind === "code") dd.style.setProperty("--chars", String(text.length)); // the CSSOM: no inline style (CSP)
    return [h("dt", {}, label), dd];
  };
  const controls = h(
    "p",
    { class: "docket-controls" },
    `${S.docketSize} `,
    SIZES.map((s) =>
      h(
        "button",
        { type: "button", "data-size": s, "aria-pressed": String(s === size), onclick: () => useSize(s) },
        S.docketSizes[s],
      ),
    ),
    " ",
    h("button", { type: "button", id: "print", onclick: () => window.print() }, S.docketPrint),
  );
  const article = h(
    "article",
    { class: `docket ${standing ? standing : "awaiting"}` },
    h("h1", {}, S.docketTitles[r.kind] || S.docketTitle),
    lead(r, docket.final),
    r.parent_id ? h("p", { class: "docket-link" }, S.docketOf[r.kind](r.parent_id)) : null,
    finalBox(docket.final, docket.tiles_split),
    h(
      "dl",
      {},
      fact(F.event, r.event, "wide"),
      fact(F.division, r.division),
      r.round ? fact(F.round, r.round) : null,
      fact(F.table, r.table),
      // The words as the slip had them, in its order: one verdict for all of them, never one each.
      // As the board shows them: letters, or tile by tile where a tile could be read two ways (B-A-NG-O-R).
      fact(F.words, S.docketWords(wordsShown(r.words, docket.tiles_split), r.word_count), "wide docket-words"),
      fact(
        old ? S.t("ui.docket.facts.consequenceSuperseded") : F.consequence,
        S.message(r.consequence.message, r.consequence.text),
        "wide",
      ),
      fact(F.lexicon, docket.lexicon_name, "wide"),
      docket.lexicon_unverified?.length
        ? [h("dt", {}, ""), h("dd", { class: "docket-unverified wide" }, unverifiedBadges(docket.lexicon_unverified))]
        : null,
      fact(F.listId, docket.short_fingerprint, "code"),
      fact(F.time, S.formatDate(r.created_at), "docket-time"),
      fact(F.id, `#${r.id}`),
      // The record's own place in the audit chain: with it, anyone can later check that the log holds this
      // record as it was (wordjudge audit verify --expect-head ID:HEX).
      docket.head_text ? fact(F.head, docket.head_text, "code") : null,
    ),
    h("div", { class: "docket-qr" }, svg(docket.qr_svg)),
    h(
      "div",
      { class: "docket-notes" },
      h("p", {}, S.docketNotes.listId),
      docket.head_text ? h("p", {}, S.docketNotes.head) : null,
      r.words.some((word) => tilesMatter(storedTiles(word), docket.tiles_split))
        ? h("p", {}, S.docketNotes.tiles)
        : null,
    ),
  );
  app.replaceChildren(controls, h("div", { class: "docket-sheet" }, article));
}

async function boot() {
  const size = SIZES.includes(params.get("size")) ? params.get("size") : "80mm";
  document.body.dataset.size = size;
  const id = params.get("id") || "";
  // A page that shows no docket still says what it is (its heading) before why it shows none.
  const refused = (...children) => app.replaceChildren(h("h1", {}, S.docketPageTitle), ...children);
  if (!/^[1-9][0-9]{0,15}$/.test(id)) {
    refused(h("p", { class: "message", role: "alert" }, S.docketNoId));
    return;
  }
  const token = anyToken();
  proveWith(() => ({ value: anyProof(), of: "device" })); // the hall's other server proves itself first
  let docket;
  try {
    docket = await api(`/api/challenges/${id}/docket`, { token });
  } catch (error) {
    const message =
      error.kind === "network"
        ? S.unreachable
        : error.kind === "unauthorized" && !token
          ? S.docketNotAllowed // neither a device's docket nor a signed-in TD: say so in plain words
          : error.message;
    refused(h("p", { class: "message", role: "alert" }, message));
    if (error.kind === "network") {
      // Opened from the offline shell, or the server went away: the docket shows itself once it answers.
      app.append(h("p", { class: "hint" }, S.comesBack));
      setTimeout(boot, AGAIN_MS);
    }
    return;
  }
  render(docket, size);
  await document.fonts.ready; // the docket's height in the fonts it prints in
  useSize(size);
  // Laid out again for print (fonts, a changed size): measure once more just before.
  window.addEventListener("beforeprint", fitPage);
  document.body.dataset.ready = "true";
  if (params.get("print") === "1") window.print();
}

boot();
