// Talking to the wordjudge server: one fetch wrapper that turns every failure into an ApiError, whose
// message is in the event's language (the server's message key rendered from the catalogue, else its
// English text).

import { proveServer } from "./proof.js";
import { STRINGS as S, followLanguage } from "./strings.js";

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
const hall = storedJson("wordjudge.hall");
let base = ""; // the server followed: "" is the page's own
const proven = new Set(); // the other servers that proved themselves to this page, until one fails it
let proofSecret = () => null; // what this page proves servers with: {value: {secret, key}, of} (see proveWith)

// The page's secret for proofs: a device's token and proof key (of "device"), a console session's CSRF token and
// proof key (of "session"), as {value: {secret, key}, of}. `secret` is a function: the value may change (a new
// pairing, a sign-in).
export function proveWith(secret) {
  proofSecret = secret;
}

const trusted = (server) => server === "" || proven.has(server);

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
  if (!secret?.value || !(await proveServer(server, secret.value, secret.of))) return false;
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
// session's CSRF token (csrf). `stay: true` keeps to the server followed even for health (the console).
export async function api(path, options = {}) {
  const follows = !options.stay && (Boolean(options.token) || path === "/api/health");
  const tried = new Set();
  let server = base;
  for (;;) {
    tried.add(server || location.origin);
    try {
      const data = await request(server, path, options);
      base = server; // the server that answered is the active one: followed from now on
      return data;
    } catch (error) {
      if (trusted(server)) {
        learnHall(error.body?.details);
        learnHall(error.body?.hall); // a health report that answers 503 (a standby's) still says its hall
      }
      proven.delete(server); // a server that failed a request proves itself again before the next
      const astray = error.kind === "network" || error.body?.code === "not_active";
      let next = follows && astray ? nextServer(trusted(server) ? error.body?.details : null, tried) : null;
      while (next !== null && next !== location.origin && !(await provesItself(next, options.token))) {
        tried.add(next); // it proved nothing: it is sent nothing
        next = nextServer(null, tried);
      }
      if (next === null) throw error;
      server = next === location.origin ? "" : next;
    }
  }
}

async function request(server, path, { method = "GET", body, token, csrf, timeoutMs = 8000 } = {}) {
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
  if (path === "/api/health" && trusted(server)) learnHall(data.hall);
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
