// The server status page: what the server serves, from /api/health.

import { STRINGS as S, followLanguage } from "../shared/strings.js";
import { unverifiedBadges } from "../shared/ui.js";

const $ = (selector) => document.querySelector(selector);

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

// The event served and the three pages' addresses (at the address this page was opened at), under the heading:
// what a TD checks first after `wordjudge serve`.
function eventLines(health) {
  let event = $("#event-name");
  if (!event) {
    event = document.createElement("p");
    event.id = "event-name";
    event.className = "event";
    const pages = document.createElement("ul");
    pages.id = "pages";
    pages.className = "hint pages";
    $("main h1").after(event, pages);
  }
  event.textContent = S.t("ui.status.event", { event: health.event || "" });
  // One line per page: its name (the catalogue's text, whole) and its address, a link.
  const item = ([page, key]) => {
    const a = document.createElement("a");
    a.href = `/${page}`;
    a.textContent = `${location.origin}/${page}`;
    const li = document.createElement("li");
    li.append(S.t(key), " ", a);
    return li;
  };
  $("#pages").replaceChildren(
    ...[
      ["kiosk", "ui.status.pageKiosk"],
      ["runner", "ui.status.pageHandheld"],
      ["td", "ui.status.pageConsole"],
    ].map(item),
  );
}

// How devices reach this server: HTTPS with the hall's certificate (its CA's fingerprint, what a kiosk or phone is
// checked against before it trusts it, and the CA to download), another certificate, or plain HTTP: a
// single-machine demo (in a hall, health warns too).
function transportLine(transport) {
  const line = $("#transport");
  line.hidden = !transport;
  if (!transport) return;
  if (transport.scheme !== "https") {
    line.replaceChildren(S.t(transport.demo ? "ui.status.transport.demo" : "ui.status.transport.plainHall"));
    line.className = transport.demo ? "hint" : "hint warn";
    return;
  }
  line.className = "hint";
  if (transport.certificate !== "hall") {
    line.replaceChildren(S.t("ui.status.transport.other", { ca: transport.ca }));
    return;
  }
  const link = document.createElement("a");
  link.href = "/hall-ca.crt";
  link.textContent = S.t("ui.status.transport.caLink");
  line.replaceChildren(
    S.t("ui.status.transport.hall", { ca: transport.ca, fingerprint: transport.ca_fingerprint }),
    " ",
    link,
  );
}

// A reason or warning in the page's language (its catalogue key), else as the server wrote it.
const said = (messages, texts) => texts.map((text, index) => S.message(messages?.[index], text));

function render(health) {
  followLanguage(health.language); // a server that says its event's language
  eventLines(health);
  // Degraded: the server answers but cannot stand behind a verdict (its health check says why).
  const degraded = health.state === "degraded";
  const notes = [
    ...(degraded ? said(health.reason_messages, health.reasons) : []),
    ...said(health.warning_messages, health.warnings || []),
  ];
  const state = degraded ? S.status.problem : S.status.running;
  $("#server-state").textContent = notes.length ? S.status.withNotes(state, notes.join("; ")) : state;
  // Warnings (low disk, a lexicon served UNVERIFIED) are worth a look: not green.
  $("#server-state").className = degraded ? "state error" : notes.length ? "state warn" : "state ok";
  $("#version").textContent = S.status.version(health.version);
  transportLine(health.transport);
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
