// Talking to the wordjudge server: one fetch wrapper that turns every failure into an ApiError, whose
// message is in the event's language (the server's message key rendered from the catalogue, else its
// English text).

import { canProve, proveServer } from "./proof.js";
import { STRINGS as S, followLanguage } from "./strings.js";
import { firstServer, originMustProve, startingServer } from "./follow.js";

export class ApiError extends Error {
  // kind: "network" (no answer), "unauthorized", "moved", "rate_limited", "invalid", "unavailable", "other"
  constructor(kind, status, message, body) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.body = body;
  }
}

const KINDS = { 401: "unauthorized", 422: "invalid", 429: "rate_limited", 503: "unavailable" };

// A hall of two machines (deploy/hall.md): a device learns every server of its event from health, and
// when its server does not answer, or answers that it is not the active one (a standby, or a server
// replaced), it sends the same request to the active server it names, else to the next one. A challenge
// keeps its request id, so a retry there settles what the dead server recorded, never twice. Only a
// device's requests (its token) and health follow: the TD console's session cookie is its server's.
//
// No other server is sent anything (a token, a request id, words) before it proves it is the hall's active
// server (proof.js): asked to sign a fresh nonce with this device's proof key, which only a holder of the hall key
// makes (never the hall's database, nor a copy of it). Whatever else answers at a hall server's address (a phone that took it) gets a nonce and a
// hint, and the page says "call the TD": never a verdict it did not record. What a server says of its hall is
// learnt from the page's own server, or from one that proved itself.
//
// The page's own origin is no exception once a phone could hold its address (follow.js): after the page (or
// another of this browser's) followed another server, or its origin failed a request, the origin proves itself
// as any other does before it is sent anything. The server followed is remembered across reloads (per program:
// followFrom) and proved before the page's first request to it.
const hall = storedJson("wordjudge.hall");
const strayed = storedJson("wordjudge.strayed"); // true once this browser's pages followed another server
let followed = null; // where this page's program remembers the server it follows (followFrom), if it does
let base = ""; // the server followed: "" is the page's own
let originFailed = false; // a request to the page's own server failed since the page was loaded
const proven = new Set(); // the servers ("" the origin) that proved themselves to this page, until one fails it
let proofSecret = () => null; // what this page proves servers with: {value: {secret, key}, of} (see proveWith)

// The page follows the server its program (a kiosk, a handheld) followed last, remembered under `key`: it is
// asked for its proof before the page's first request to it.
export function followFrom(key) {
  followed = storedJson(key);
  base = startingServer(followed.get()?.server, hallServers(), location.origin);
}

// The page's secret for proofs: a device's token and proof key (of "device"), a console session's CSRF token and
// proof key (of "session"), as {value: {secret, key}, of}. `secret` is a function: the value may change (a new
// pairing, a sign-in).
export function proveWith(secret) {
  proofSecret = secret;
}

// Whether `server` ("" the page's origin) may be sent a request now, without asking it for a proof first (with
// the request's `token`, or the page's secret).
function trusted(server, token) {
  if (proven.has(server)) return true;
  if (server !== "") return false;
  const inHall = hallServers().length > 1;
  return !originMustProve({ inHall, strayed: strayed.get() === true, originFailed, hasSecret: holdsSecret(token) });
}

// Whether this page can ask a server for a proof: it holds a device's token (or the page's secret).
const holdsSecret = (token) => Boolean(token || proofSecret()?.value);

// Whether `server` may be sent a request: trusted, or it proves itself now (a device's `token`, else the page's
// secret).
async function vouched(server, token) {
  return trusted(server, token) || (await provesItself(server, token));
}

// The page follows `server` from now on (it answered): remembered for the next load; away from the page's origin,
// that origin proves itself from now on.
function follow(server) {
  base = server;
  if (server !== "") strayed.set(true);
  if (followed && followed.get()?.server !== server) followed.set({ server });
}

function learnHall(view) {
  const servers = view?.servers;
  if (Array.isArray(servers) && servers.length > 1 && servers.every((s) => typeof s === "string")) {
    hall.set({ servers });
  }
}

// Whether `server` (another origin) proved itself the hall's active server to this page: asked once, then
// trusted until a request to it fails.
async function provesItself(server, token) {
  if (proven.has(server)) return true;
  // The page's: a device's token and proof key, or a session's CSRF token and proof key (proveWith).
  const secret = proofSecret();
  if (!secret?.value || !(await proveServer(server || location.origin, secret.value, secret.of))) return false;
  proven.add(server);
  return true;
}

// The servers of this page's hall, as last learnt ([] outside a hall).
export function hallServers() {
  const servers = hall.get()?.servers;
  return Array.isArray(servers) ? servers : [];
}

function nextServer(details, tried) {
  const known = hall.get()?.servers || [];
  const candidates = [details?.active_url, ...known];
  return candidates.find((s) => typeof s === "string" && known.includes(s) && !tried.has(s)) ?? null;
}

// A device sends its token; the TD console sends its session cookie and, to change anything, the
// session's CSRF token (csrf). `stay: true` keeps to the server followed even for health (the console), which
// is then sent the request as it is (a console's session is its own origin's).
export async function api(path, options = {}) {
  const follows = !options.stay && (Boolean(options.token) || path === "/api/health");
  const tried = new Set();
  let server = firstServer(base, { hasSecret: holdsSecret(options.token), baseProven: proven.has(base) });
  for (;;) {
    tried.add(server || location.origin);
    let error;
    try {
      if (!options.stay && !(await vouched(server, options.token))) throw unproven();
      const data = await request(server, path, options);
      follow(server); // the server that answered is the active one: followed from now on
      return data;
    } catch (failed) {
      error = failed;
    }
    const known = options.stay || trusted(server, options.token); // what it says of the hall counts
    if (known) {
      learnHall(error.body?.details);
      learnHall(error.body?.hall); // a health report that answers 503 (a standby's) still says its hall
    }
    // Its address may be anyone's from now on (a machine that died): it proves itself before the next request.
    if (server === "" && astray(error) && error.body?.code !== "unproven") originFailed = true;
    proven.delete(server); // a server that failed a request proves itself again before the next
    const go = follows && astray(error);
    const next = go ? await provenNext(known ? error.body?.details : null, tried, options.token) : null;
    if (next === null) throw error;
    server = next === location.origin ? "" : next;
  }
}

// Whether a request failed because its server is not (or no longer) the one to ask: another may be.
const astray = (error) =>
  error.kind === "network" || error.body?.code === "not_active" || error.body?.code === "unproven";

// The next server of the hall to send a request to (the active one named, else the next one not tried): the first
// that may be sent it (trusted, or it proves itself now), or null. One that proves nothing is sent nothing.
async function provenNext(details, tried, token) {
  let next = nextServer(details, tried);
  while (next !== null && !(await vouched(next === location.origin ? "" : next, token))) {
    tried.add(next);
    next = nextServer(null, tried);
  }
  return next;
}

// What a request that was never sent says: no server at hand proves itself the hall's (the page says to call the
// TD). A "network" error: the page carries on as when its server cannot be reached, and asks again. A device that
// holds its token without its proof key (paired before servers handed out keys) is told the truth: no server can
// prove itself to it, and the TD pairs it again (trusting its origin instead would hand its token to whatever holds
// that address at a failover).
function unproven() {
  const held = proofSecret()?.value;
  const message = held && !canProve(held) ? S.unprovenNoKey : S.unproven;
  return new ApiError("network", 0, message, { code: "unproven" });
}

async function request(server, path, { method = "GET", body, token, csrf, stay, timeoutMs = 8000 } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  if (csrf) headers["X-CSRF-Token"] = csrf;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  let response;
  try {
    response = await fetch(server + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: token ? "omit" : "same-origin", // a device speaks with its token only, never a cookie
      signal: abort.signal,
    });
  } catch (error) {
    throw new ApiError("network", 0, S.network);
  } finally {
    clearTimeout(timer);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    throw new ApiError(response.ok ? "other" : "network", response.status, S.httpStatus(response.status));
  }
  // The event's language, where the server says it (a degraded health report too): the page follows it
  // (reloads in it) when it changes.
  if (path === "/api/event" || path === "/api/health") followLanguage(data?.language);
  if (!response.ok) {
    // "moved": this device's token came from another network address than its own; the device keeps its
    // token (the TD may accept the move) and tries again.
    const kind =
      data.code === "device_moved"
        ? "moved"
        : KINDS[response.status] || (response.status >= 500 ? "unavailable" : "other");
    throw new ApiError(
      kind,
      response.status,
      S.message(data.message, data.error || S.httpStatus(response.status)),
      data,
    );
  }
  if (path === "/api/health" && (stay || trusted(server, token))) {
    // A server with no hall (one machine): the hall this browser learnt before (another event here) is no more.
    if (!(data.hall?.servers?.length > 1)) hall.clear();
    else learnHall(data.hall); // a console's: its own server's word
  }
  return data;
}

// A new id for each challenge; a retry reuses it. (crypto.randomUUID needs HTTPS; this does not.)
export function newRequestId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Build an element: h("p", {class: "x", onclick: f}, "text", child...). Text is never parsed as HTML.
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  element.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return element;
}

// A JSON value kept in localStorage across reloads: get (null when absent or unreadable), set, clear.
export function storedJson(key) {
  return {
    get: () => {
      try {
        return JSON.parse(localStorage.getItem(key) || "null");
      } catch {
        return null;
      }
    },
    set: (value) => localStorage.setItem(key, JSON.stringify(value)),
    clear: () => localStorage.removeItem(key),
  };
}
