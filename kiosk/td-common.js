// What the TD console's modules share: requests with the session's CSRF token, tables, times.

import { api, h } from "./api.js";
import { datePattern, parseDate } from "./i18n.js";
import { LANGUAGE, STRINGS } from "./strings.js";

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
  return iso ? STRINGS.formatDate(iso) : STRINGS.console.never;
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
  element.textContent = error.kind === "network" ? STRINGS.unreachable : error.message;
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
