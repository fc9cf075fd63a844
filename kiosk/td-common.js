// What the TD console's modules share: requests with the session's CSRF token, tables, times.

import { api, h } from "./api.js";
import { STRINGS } from "./strings.js";

export const session = { csrf: null };

// Every console request: the session cookie, and the CSRF token for anything that changes.
export function call(path, options = {}) {
  return api(path, { ...options, csrf: options.method && options.method !== "GET" ? session.csrf : undefined });
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
  return iso ? new Date(iso).toLocaleString("en-GB") : STRINGS.console.never;
}

export function problem(element, error) {
  element.textContent = error.kind === "network" ? STRINGS.unreachable : error.message;
}

// Server-made SVG (a QR code), parsed as SVG, never as HTML.
export function svg(markup) {
  const parsed = new DOMParser().parseFromString(markup, "image/svg+xml").documentElement;
  return document.importNode(parsed, true);
}

// The query string of a filter form's non-empty fields; times from datetime-local inputs as UTC.
export function query(form) {
  const params = new URLSearchParams();
  for (const [key, value] of new FormData(form)) {
    if (!value) continue;
    params.set(key, key === "since" || key === "until" ? new Date(value).toISOString() : value);
  }
  return params;
}
