// What the TD console's modules share: requests with the session's CSRF token, tables, times.

import { api, h, hallServers, proveWith } from "../shared/api.js";
import { proveServer } from "../shared/proof.js";
import { datePattern, parseDate } from "../shared/i18n.js";
import { LANGUAGE, STRINGS } from "../shared/strings.js";
import { recordWord } from "../shared/tile-boxes.js";
import { wordsShown } from "../shared/verdict-words.js";

export const session = { csrf: null, proofKey: null };
// Another server of the hall proves itself to this console's session (its CSRF token's hint, the session's proof
// key, handed at sign-in and with the session: proof.js) before the banner names it.
const sessionProof = () => (session.csrf ? { secret: session.csrf, key: session.proofKey } : null);
proveWith(() => ({ value: sessionProof(), of: "session" }));

// Every console request: the session cookie, and the CSRF token for anything that changes. Its answer, or
// its failure, also says where this server stands in its hall (the banner below).
export async function call(path, options = {}) {
  try {
    const data = await api(path, {
      ...options,
      csrf: options.method && options.method !== "GET" ? session.csrf : undefined,
    });
    showServers(null);
    return data;
  } catch (error) {
    showServers(error);
    throw error;
  }
}

// A hall of two machines (deploy/hall.md): the console's session is its own server's, so it does not follow the
// hall as devices do. When its server answers that it is not the active one, a banner above the console links to
// the console of the active server it names (its own server is believed); when it does not answer, to those of
// the hall's other servers (learnt from health) that prove themselves the hall's active server to this session
// (proof.js), where the same TD account signs in: never to whatever answers at their address. Any answer of the
// server hides it.
const banner = h("div", { class: "servers-banner", id: "servers-banner", role: "alert", hidden: true });

function consoleOf(server) {
  try {
    const url = new URL("/td", server);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

let shownFor = null; // the error the banner was last made for: a later one replaces it

async function showServers(error) {
  shownFor = error;
  const astray = error && (error.kind === "network" || error.body?.code === "not_active");
  const named = astray && error.kind !== "network" ? error.body?.details?.active_url : null;
  const active = typeof named === "string" && named !== location.origin ? named : null;
  let servers = active ? [active] : [];
  if (!active && astray) {
    const others = hallServers().filter((s) => s !== location.origin);
    const proofs = await Promise.all(others.map((s) => proveServer(s, sessionProof() ?? {}, "session")));
    servers = others.filter((_, i) => proofs[i]);
    if (shownFor !== error) return; // an answer came meanwhile
  }
  const links = servers.map((server) => [server, consoleOf(server)]).filter(([, href]) => href);
  if (!links.length) {
    banner.hidden = true;
    banner.replaceChildren();
    return;
  }
  banner.replaceChildren(
    h("p", {}, active ? STRINGS.console.servers.active(active) : STRINGS.console.servers.others),
    h(
      "ul",
      {},
      links.map(([server, href]) =>
        h("li", {}, h("a", { href, class: "button primary" }, STRINGS.console.servers.open(server))),
      ),
    ),
  );
  banner.hidden = false;
  if (!banner.isConnected) document.body.prepend(banner);
}

// What the console knows of its hall comes from health (a standby's too): asked for once, when it opens.
export function learnServers() {
  api("/api/health", { stay: true }).catch(() => {}); // the console's requests stay with its own server
}

export function table(headers, rows, attributes = {}) {
  return h(
    "table",
    attributes,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headers.map((t) => h("th", { scope: "col" }, t)),
      ),
    ),
    h("tbody", {}, rows),
  );
}

export function when(iso) {
  return iso ? STRINGS.formatDate(iso) : STRINGS.console.never;
}

// An ISO time in a server's text or a record's message (a clock record's "it read 2026-11-27T11:00:02.000+00:00").
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?/g;

// A text the console shows (an alert, a change record's message), its times as the console shows times.
export function timesShown(text) {
  return text.replace(ISO_TIME, (iso) => (Number.isNaN(Date.parse(iso)) ? iso : when(iso)));
}

// A change record's message (who changed what), its times as the console shows them.
export function changeSaid(record) {
  return timesShown(STRINGS.message(record.change_message));
}

// A challenge rule's name and description in the language (rule.<value>, rule.<value>.description), or
// the server's English description.
export function ruleName(rule) {
  return STRINGS.has(`rule.${rule.value}`) ? STRINGS.t(`rule.${rule.value}`) : STRINGS.message(null, rule.text);
}

export function ruleText(value, english) {
  const key = `rule.${value}.description`;
  return STRINGS.has(key) ? STRINGS.t(key) : STRINGS.message(null, english);
}

export function problem(element, error) {
  element.textContent = error.kind === "network" ? STRINGS.console.unreachable : error.message;
}

// Server-made SVG (a QR code), parsed as SVG, never as HTML.
export function svg(markup) {
  const parsed = new DOMParser().parseFromString(markup, "image/svg+xml").documentElement;
  return document.importNode(parsed, true);
}

// How a date is typed: in the order the console shows dates in (e.g. "dd/mm/yyyy hh:mm" in French).
export function typedDatePattern() {
  return datePattern(LANGUAGE, STRINGS.console.dateSymbols);
}

// A date field (.date-field, name since/until) as typed, in the order the console shows dates: the moment
// in UTC, "" when empty, or null when it is not a date.
export function typedDate(value) {
  if (!value.trim()) return "";
  const date = parseDate(value, LANGUAGE);
  return date ? date.toISOString() : null;
}

// The query string of a filter form's non-empty fields, dates as UTC; throws an Error naming a date
// field that holds no date, and the pattern to type it in.
export function query(form) {
  const params = new URLSearchParams();
  for (const [key, value] of new FormData(form)) {
    if (!value) continue;
    const field = form.querySelector(`[name="${key}"]`);
    if (field?.classList.contains("date-field")) {
      const moment = typedDate(value);
      if (moment === null)
        throw new Error(STRINGS.console.badDate(field.labels[0]?.firstChild?.textContent || key, typedDatePattern()));
      params.set(key, moment);
    } else params.set(key, value);
  }
  return params;
}

// The event's input rules (GET /api/event's input_rules: the limits the server keeps), read once a TD is signed in.
let rulesRead = null;
export function inputRules() {
  rulesRead ??= call("/api/event").then(
    (event) => event.input_rules,
    (error) => {
      rulesRead = null; // asked again next time
      throw error;
    },
  );
  return rulesRead;
}

// `input`, kept as typed to the server's limit `key` of the input rules (max_name, max_note): set when they are read.
export function limited(input, key) {
  inputRules().then(
    (rules) => input.setAttribute("maxlength", String(rules[key])),
    () => {}, // the server's own check still refuses a longer one
  );
  return input;
}

// The split tiles of each lexicon served (GET /api/lexicons: Welsh NG), read once a TD is signed in, so that a
// record's words are shown as the board held them: letters, or tile by tile where a tile could be read two ways
// (B-A-NG-O-R). Pages that list records wait for it (readSplits()); a lexicon no longer served shows letters.
const SPLITS = new Map();
let splitsRead = null;
export function readSplits() {
  splitsRead ??= call("/api/lexicons").then(
    (views) => views.forEach((view) => SPLITS.set(view.name, view.tiles?.split || [])),
    () => {
      splitsRead = null; // asked again next time; meanwhile letters
    },
  );
  return splitsRead;
}

// A record's words (or `words` of its lexicon: a reissue's) as people read them, as text (B-A-NG-O-R tile by tile).
export function recordWords(record, words = record.words) {
  return wordsShown(words, SPLITS.get(record.lexicon) || []);
}

// A record's words on screen: letters, or boxes where the tiles matter (a split tile: B A NG O R).
export function recordWordBoxes(record) {
  const split = SPLITS.get(record.lexicon) || [];
  return h(
    "span",
    { class: "record-words", "aria-label": recordWords(record) },
    record.words.flatMap((word, index) => (index ? [" ", recordWord(word, split)] : [recordWord(word, split)])),
  );
}
