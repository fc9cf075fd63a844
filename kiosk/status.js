// The server status page: what the server serves, from /api/health.

import { unverifiedBadges } from "./ui.js";

const $ = (selector) => document.querySelector(selector);

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function render(health) {
  // Degraded: the server answers but cannot stand behind a verdict (its health check says why).
  const degraded = health.state === "degraded";
  const notes = [...(degraded ? health.reasons : []), ...(health.warnings || [])];
  $("#server-state").textContent =
    (degraded ? "Server problem: call the TD" : "Server running") + (notes.length ? ` (${notes.join("; ")})` : "");
  // Warnings (low disk, a lexicon served UNVERIFIED) are worth a look: not green.
  $("#server-state").className = degraded ? "state error" : notes.length ? "state warn" : "state ok";
  $("#version").textContent = `wordjudge ${health.version}`;
  $("#demo-banner").hidden = !health.demo;
  const rows = $("#lexicons tbody");
  rows.replaceChildren();
  for (const lexicon of health.lexicons) {
    const tr = document.createElement("tr");
    const name = cell(lexicon.shown_name, "name");
    name.append(...unverifiedBadges(lexicon.unverified).flatMap((badge) => [" ", badge]));
    tr.append(
      name,
      cell(lexicon.word_count.toLocaleString("en")),
      cell(lexicon.edition),
      cell(lexicon.short_fingerprint, "fingerprint"),
    );
    tr.title = `fingerprint ${lexicon.fingerprint}`;
    rows.append(tr);
  }
}

async function refresh() {
  try {
    const response = await fetch("/api/health", { cache: "no-store" });
    // A degraded server answers 503 with its whole report; any other failure has no report.
    const health = await response.json().catch(() => null);
    if (!health || !Array.isArray(health.lexicons)) throw new Error(`the server answered ${response.status}`);
    render(health);
  } catch (error) {
    $("#server-state").textContent = `Cannot reach the server (${error.message})`;
    $("#server-state").className = "state error";
  }
}

refresh();
setInterval(refresh, 10000);
