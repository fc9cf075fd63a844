// What must not wait unseen at the TD's table: the challenges waiting for a ruling (listed on the overview
// and counted in the tab bar), new rows of the live feed (marked until the TD has seen them, those out of
// sight counted), and lists that refresh themselves while shown.

import { h } from "../shared/api.js";
import { STRINGS } from "../shared/strings.js";
import { call, readSplits, recordWordBoxes, when } from "./common.js";
import { verdictWord } from "../shared/verdict-words.js";

const C = STRINGS.console;
const R = C.rulings;

export const REFRESH_MS = 5000; // a kiosk is "offline" after 30 s silent: the TD hears of it within 5 s more
const FRESH_MS = 6000; // how long a new feed row stays marked once it is in sight
const QUEUE_LIMIT = 100;

// Run `task` now and every `ms` milliseconds until the returned function is called (a view's cleanup).
export function every(ms, task) {
  task();
  const timer = setInterval(task, ms);
  return () => clearInterval(timer);
}

// Put `fresh` in place of `container`'s children, keeping the keyboard focus on the control it was on (a
// list refreshing itself must not take the TD's place away), found again by its accessible name.
export function refill(container, fresh) {
  const focused = container.contains(document.activeElement) ? document.activeElement : null;
  const name = focused && (focused.getAttribute("aria-label") || focused.textContent);
  container.replaceChildren(fresh);
  if (!focused) return;
  const again = [...container.querySelectorAll(focused.tagName)].find(
    (element) => (element.getAttribute("aria-label") || element.textContent) === name,
  );
  again?.focus();
}

// -- the challenges waiting for a ruling --------------------------------------------------------------

const rulings = { records: null, matching: 0, listeners: new Set(), timer: null };

// Ask the server which challenges wait for a ruling, and tell the tab bar and the overview.
export async function checkRulings() {
  try {
    const [found] = await Promise.all([call(`/api/challenges?needs_ruling=true&limit=${QUEUE_LIMIT}`), readSplits()]);
    rulings.records = found.records;
    rulings.matching = found.matching ?? found.records.length;
  } catch {
    return; // signed out, or the server is away: the count stays as it was, and the next check tries again
  }
  showRulingCount();
  for (const listener of rulings.listeners) listener(rulings);
}

// Keep the count current while the console is open, whatever tab is shown; stop on sign-out.
export function watchRulings() {
  if (rulings.timer === null) rulings.timer = setInterval(checkRulings, REFRESH_MS);
  checkRulings();
}

export function stopWatchingRulings() {
  clearInterval(rulings.timer);
  rulings.timer = null;
  rulings.records = null;
  rulings.matching = 0;
}

// The count beside the overview's tab name: hidden while nothing waits.
export function rulingCount() {
  const badge = h("span", { class: "tab-count", id: "ruling-count", hidden: true });
  queueMicrotask(showRulingCount);
  return badge;
}

function showRulingCount() {
  const badge = document.getElementById("ruling-count");
  if (!badge) return;
  badge.hidden = !rulings.matching;
  badge.textContent = R.count(rulings.matching);
}

function rulingRow(record, open) {
  const waiting = record.final?.awaiting_ruling;
  const verdict = (v) => verdictWord(STRINGS, v);
  return h(
    "li",
    { class: "ruling-item", "data-id": record.id },
    h(
      "button",
      { type: "button", class: "link", "aria-label": R.openNamed(record.id), onclick: () => open(record.id) },
      `#${record.id}`,
    ),
    " ",
    R.place(record.division, record.table, record.round ?? null),
    " · ",
    h("span", { class: "words" }, recordWordBoxes(record)),
    " · ",
    waiting
      ? R.disagree(waiting.id, verdict(waiting.verdict), verdict(record.verdict), when(waiting.created_at))
      : C.needsRuling,
  );
}

// The overview's queue: every challenge waiting for a ruling, oldest first (the one waiting longest on top),
// each opening its record (with the ruling form) through `open(id)`. Returns [section, stop].
export function rulingQueue(open) {
  const list = h("div", { id: "ruling-queue" }, h("p", { class: "hint" }, STRINGS.loading));
  const render = ({ records, matching }) => {
    const items = [...records].reverse().map((record) => rulingRow(record, open));
    list.replaceChildren(
      records.length ? h("ol", { class: "ruling-list" }, items) : h("p", { class: "hint", id: "no-rulings" }, R.none),
      matching > records.length ? h("p", { class: "hint" }, R.more(matching - records.length)) : "",
    );
  };
  rulings.listeners.add(render);
  if (rulings.records) render(rulings);
  checkRulings();
  const section = h(
    "section",
    { class: "rulings", "aria-labelledby": "rulings-title" },
    h("h3", { id: "rulings-title" }, R.title),
    list,
  );
  return [section, () => rulings.listeners.delete(render)];
}

// -- new rows of the live feed --------------------------------------------------------------------------

// New rows of a live list: each is marked (class "fresh") until the TD has had it in sight for FRESH_MS;
// those that came while out of sight (the list scrolled on, the window in the background) are counted on a
// button that brings the newest into view. feedView calls add(row) for each row the feed pushes, clear()
// when it loads another list, and stop() when it closes.
export function freshRows() {
  const unseen = new Set();
  const indicator = h("button", {
    type: "button",
    class: "unseen",
    id: "unseen-count",
    hidden: true,
    onclick: () => {
      const newest = [...unseen].find((row) => row.isConnected);
      newest?.scrollIntoView({ block: "center" });
      newest?.querySelector("button, a")?.focus({ preventScroll: true });
    },
  });
  const title = document.title.replace(/^\(\d+\) /, "");
  const update = () => {
    indicator.hidden = unseen.size === 0;
    indicator.textContent = C.unseen(unseen.size);
    document.title = unseen.size ? `(${unseen.size}) ${title}` : title; // seen from another window's tab
  };
  const seen = (row) => {
    if (!unseen.delete(row)) return;
    observer.unobserve(row);
    setTimeout(() => row.classList.remove("fresh"), FRESH_MS);
    update();
  };
  const inSight = (row) => {
    const box = row.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight && box.height > 0;
  };
  const observer = new IntersectionObserver((entries) => {
    if (document.hidden) return;
    for (const entry of entries) if (entry.isIntersecting) seen(entry.target);
  });
  const back = () => {
    if (!document.hidden) for (const row of [...unseen]) if (inSight(row)) seen(row);
  };
  document.addEventListener("visibilitychange", back);
  return {
    indicator,
    add(row) {
      row.classList.add("fresh");
      unseen.add(row);
      observer.observe(row);
      update();
    },
    clear() {
      unseen.clear();
      observer.disconnect();
      update();
    },
    stop() {
      this.clear();
      document.removeEventListener("visibilitychange", back);
    },
  };
}

// -- devices ---------------------------------------------------------------------------------------------

// A device's state as the TD reads it: online, "offline since 14:02" (the time it was last heard; with
// the date when that was another day), not seen yet, or revoked.
export function deviceState(device) {
  if (device.revoked_at) return C.revokedBy(device.revoked_by);
  if (device.online) return C.online;
  if (!device.last_seen_at) return C.notSeen;
  const heard = new Date(device.last_seen_at);
  const today = heard.toDateString() === new Date().toDateString();
  return C.offlineSince(STRINGS.formatDate(heard, today ? "short-time" : "short-datetime"));
}
