// A printable docket of one verdict (WESPA 3.10.2), for 58 mm and 80 mm receipt printers and A6:
// event, division, round, table, number of words, verdict, consequence, lexicon and short
// fingerprint, time, challenge id, the audit log's head, and a QR code of the id for the TD.
// Never the per-word results (the server does not send them for a docket).

import { api, h } from "./api.js";
import { anyToken } from "./device.js";
import { STRINGS as S } from "./strings.js";
import { unverifiedBadges } from "./ui.js";

const SIZES = ["58mm", "80mm", "a6"];
const app = document.getElementById("app");
const params = new URLSearchParams(location.search);
const F = S.docketFacts;
const AGAIN_MS = 3000; // while the server cannot be reached, the docket asks again this often

function setSize(size) {
  // Beside this module: the same asset version as the page.
  document.getElementById("paper").href = new URL(`./docket-${size}.css`, import.meta.url).href;
  document.body.dataset.size = size;
}

function svg(markup) {
  // The QR code comes from our own server as SVG; parsed as SVG, never as HTML.
  const parsed = new DOMParser().parseFromString(markup, "image/svg+xml").documentElement;
  return document.importNode(parsed, true);
}

async function boot() {
  const size = SIZES.includes(params.get("size")) ? params.get("size") : "80mm";
  setSize(size);
  let docket;
  try {
    docket = await api(`/api/challenges/${encodeURIComponent(params.get("id") || "")}/docket`, { token: anyToken() });
  } catch (error) {
    const away = error.kind === "network"; // opened from the offline shell, or the server went away
    app.replaceChildren(h("p", { class: "message", role: "alert" }, away ? S.unreachable : error.message));
    if (away) app.append(h("p", { class: "hint" }, S.comesBack));
    if (away) setTimeout(boot, AGAIN_MS); // the docket shows itself once the server answers
    return;
  }
  const r = docket.record;
  const ok = r.verdict === "acceptable";
  const fact = (label, value) => [h("dt", {}, label), h("dd", {}, String(value))];
  const sizes = h(
    "p",
    { class: "docket-controls" },
    `${S.docketSize}: `,
    SIZES.map((s) =>
      h("button", { type: "button", class: s === size ? "primary" : "secondary", onclick: () => setSize(s) }, s),
    ),
    " ",
    h("button", { type: "button", id: "print", onclick: () => window.print() }, S.docketPrint),
  );
  app.replaceChildren(
    sizes,
    h(
      "article",
      { class: `docket ${ok ? "acceptable" : "unacceptable"}` },
      h("h1", {}, S.docketTitle),
      h(
        "p",
        { class: "docket-verdict" },
        `${ok ? S.acceptableIcon : S.unacceptableIcon} ${ok ? S.acceptable : S.unacceptable}`,
      ),
      h(
        "dl",
        {},
        fact(F.event, r.event),
        fact(F.division, r.division),
        r.round ? fact(F.round, r.round) : null,
        fact(F.table, r.table),
        fact(F.words, r.word_count),
        fact(F.consequence, r.consequence.text),
        fact(F.lexicon, `${docket.lexicon_name} ${docket.short_fingerprint}`),
        docket.lexicon_unverified?.length
          ? [h("dt", {}, ""), h("dd", { class: "docket-unverified" }, unverifiedBadges(docket.lexicon_unverified))]
          : null,
        fact(F.time, new Date(r.created_at).toLocaleString("en-GB")),
        fact(F.id, `#${r.id}`),
        // The record's own place in the audit chain: with it, anyone can later check that the log holds this
        // record as it was (wordjudge audit verify --expect-head ID:HEX).
        docket.head_text ? fact(F.head, docket.head_text) : null,
      ),
      h("div", { class: "docket-qr" }, svg(docket.qr_svg)),
    ),
  );
  if (params.get("print") === "1") window.print();
}

boot();
