// The server status page: what the server serves, from /api/health.

import { STRINGS as S, followLanguage } from "./strings.js";
import { unverifiedBadges } from "./ui.js";

const $ = (selector) => document.querySelector(selector);

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function render(health) {
  followLanguage(health.language); // a server that says its event's language
  // Degraded: the server answers but cannot stand behind a verdict (its health check says why).
  const degraded = health.state === "degraded";
  const notes = [...(degraded ? health.reasons : []), ...(health.warnings || [])].map((note) => S.message(null, note));
  const state = degraded ? S.status.problem : S.status.running;
  $("#server-state").textContent = notes.length ? S.status.withNotes(state, notes.join("; ")) : state;
  // Warnings (low disk, a lexicon served UNVERIFIED) are worth a look: not green.
  $("#server-state").className = degraded ? "state error" : notes.length ? "state warn" : "state ok";
  $("#version").textContent = S.status.version(health.version);
  $("#demo-banner").hidden = !health.demo;
  const rows = $("#lexicons tbody");
  rows.replaceChildren();
  for (const lexicon of health.lexicons) {
    const tr = document.createElement("tr");
    const name = cell(lexicon.shown_name, "name");
    name.append(...unverifiedBadges(lexicon.unverified).flatMap((badge) => [" ", badge]));
    tr.append(
      name,
      cell(S.formatNumber(lexicon.word_count)),
      cell(S.edition(lexicon)),
      cell(lexicon.short_fingerprint, "fingerprint"),
    );
    tr.title = S.status.fingerprintTitle(lexicon.fingerprint);
    rows.append(tr);
  }
}

async function refresh() {
  try {
    const response = await fetch("/api/health", { cache: "no-store" });
    // A degraded server answers 503 with its whole report; any other failure has no report.
    const health = await response.json().catch(() => null);
    if (!health || !Array.isArray(health.lexicons)) throw new Error(S.httpStatus(response.status));
    render(health);
  } catch (error) {
    const reason = error instanceof TypeError ? S.network : error.message; // fetch's own TypeError is in English
    $("#server-state").textContent = S.status.unreachable(reason);
    $("#server-state").className = "state error";
  }
}

refresh();
setInterval(refresh, 10000);
