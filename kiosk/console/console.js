// The TD console: the event and its lexicons, devices and alerts, the live feed with per-word
// results (here only), records with their re-checks, reissues and rulings, enrolment, accounts,
// event settings and the after-event summary. The server checks every request; this page only
// shows what a signed-in TD may do.

import { h } from "../shared/api.js";
import { STRINGS } from "../shared/strings.js";
import { accountsView, eventView, summaryView } from "./admin.js";
import { call, learnServers, problem, ruleText, session, table, timesShown, when } from "./common.js";
import {
  REFRESH_MS,
  checkRulings,
  deviceState,
  every,
  refill,
  rulingCount,
  rulingQueue,
  stopWatchingRulings,
  watchRulings,
} from "./live.js";
import { installKeys, privacyButton, privacyNote } from "./keys.js";
import { enrolView, hallView, codesView, repairButton } from "./pairing.js";
import { printView } from "./print.js";
import { showRecord } from "./record.js";
import { feedView } from "./records.js";
import { unverifiedBadges } from "../shared/ui.js";

const C = STRINGS.console;
const app = document.getElementById("app");
const state = { me: null, tab: "overview", cleanup: null };

async function boot() {
  learnServers();
  try {
    const me = await call("/api/session");
    if (me.role !== "td") throw new Error("not a TD");
    state.me = me;
    session.csrf = me.csrf_token;
    session.proofKey = me.proof_key;
    // A print page (/td?print=report|feed&...): that page alone, for the browser to print.
    const print = new URLSearchParams(location.search).get("print");
    if (print) return printView(app, print, me);
    showConsole();
  } catch {
    showLogin();
  }
}

function showLogin() {
  // Before a session the console cannot read the input rules (GET /api/event is for the signed-in): the one
  // limit the page keeps without them, the server's MAX_NAME (model/input_rules.py), until the server serves it
  // to anyone.
  const name = h("input", { id: "name", autocomplete: "username", maxlength: "40" });
  const password = h("input", {
    id: "password",
    type: "password",
    autocomplete: "current-password",
    maxlength: "1000",
  });
  const note = h("p", { class: "message", role: "alert" });
  app.replaceChildren(
    h(
      "form",
      {
        class: "console-login",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            const signed = await call("/api/session", {
              method: "POST",
              body: { name: name.value, password: password.value },
            });
            state.me = { actor: signed.actor, role: "td" };
            session.csrf = signed.csrf_token;
            session.proofKey = signed.proof_key;
            showConsole();
          } catch (error) {
            password.value = "";
            problem(note, error);
          }
        },
      },
      h("h1", {}, C.signInTitle),
      h("label", { for: "name" }, STRINGS.tdName, name),
      h("label", { for: "password" }, STRINGS.tdPassword, password),
      note,
      h("button", { type: "submit", class: "primary" }, C.signIn),
      // A new TD meets this page before any account exists: how to make the first one (as `wordjudge serve` says).
      h("p", { class: "hint", id: "first-account" }, C.firstAccount),
    ),
  );
  app.dataset.screen = "login";
  name.focus();
}

const VIEWS = { overview: overviewView, feed: feedView, devices: devicesView, event: eventView, summary: summaryView };

function showConsole(tab = state.tab) {
  state.cleanup?.();
  state.cleanup = null;
  state.tab = tab;
  const onTab = document.activeElement?.classList.contains("tab"); // keeps the keyboard on the tab bar
  watchRulings();
  watchAlerts();
  const nav = h(
    "nav",
    { "aria-label": C.title },
    Object.entries(C.tabs).map(([key, label]) =>
      h(
        "button",
        {
          type: "button",
          class: key === tab ? "tab current" : "tab",
          "aria-current": key === tab ? "page" : null,
          id: `tab-${key}`,
          onclick: () => showConsole(key),
        },
        label,
        key === "overview" ? rulingCount() : null,
        key === "overview" ? alertCount() : null,
      ),
    ),
  );
  const content = h("section", { class: "console-content", id: "content" });
  app.replaceChildren(
    h(
      "header",
      { class: "console-header" },
      h("h1", {}, C.title),
      h("span", { class: "who" }, C.signedInAs(state.me.actor)),
      privacyButton(),
      h("button", { type: "button", class: "secondary", onclick: signOut }, C.signOut),
    ),
    nav,
    privacyNote(),
    content,
  );
  app.dataset.screen = tab;
  if (onTab) nav.querySelector(".current").focus();
  state.cleanup = VIEWS[tab](content) || null;
}

// "/" from any tab: the live feed's search box (a docket's number or QR code, words, a table); a scan begun
// outside it (console/keys.js): the box holding what came of it, the caret after it for the scanner's next keys.
function toSearch(text) {
  if (!state.me) return false;
  if (state.tab !== "feed") showConsole("feed");
  const search = document.getElementById("search");
  search.focus();
  if (text) {
    search.value = text;
    search.setSelectionRange(text.length, text.length);
    search.dispatchEvent(new Event("input")); // its scan handler counts the prefix come
  }
  return true;
}

async function signOut() {
  try {
    await call("/api/session", { method: "DELETE" });
  } finally {
    stopWatchingRulings();
    stopWatchingAlerts();
    state.cleanup?.(); // the view's timers and feed stop with the session
    state.cleanup = null;
    state.me = null;
    session.csrf = null;
    session.proofKey = null;
    showLogin();
  }
}

// -- overview: the event, its lexicons, devices, alerts, the chain ------------------------------

function overviewView(content) {
  const note = h("p", { class: "message", role: "alert" });
  const head = h("div", {});
  const divisions = h("div", {});
  const devices = h("div", { id: "overview-devices" });
  const alerts = h("div", { id: "overview-alerts" });
  // A challenge waiting for a ruling opens here, ruling form and all; the queue follows what is done in it.
  const detail = h("div", { class: "record-detail" });
  const close = () => detail.replaceChildren();
  const open = (id) => showRecord(detail, id, { open, close });
  const [queue, stopQueue] = rulingQueue(open);
  // After a ruling (or a re-check) the record view shows itself again: the queue is asked again then.
  new MutationObserver(() => detail.querySelector("#record-view") && checkRulings()).observe(detail, {
    childList: true,
  });
  // The alerts first, under the event's name: what needs the TD is where the TD looks first (and counted on the
  // tab, from every tab).
  content.append(
    note,
    head,
    h(
      "section",
      { class: "overview-alerts", "aria-labelledby": "alerts-title" },
      h("h3", { id: "alerts-title" }, C.alerts),
      alerts,
    ),
    queue,
    detail,
    divisions,
    h("h3", {}, STRINGS.console.tabs.devices),
    devices,
    chainCheck(),
  );
  (async () => {
    try {
      const event = await call("/api/event");
      head.append(
        h("h2", {}, event.demo ? C.demoEvent(event.name) : event.name),
        h("p", { class: "server-id", id: "server-id" }, C.serverId(event.server_id)),
        event.rounds ? roundControl(event) : null,
      );
      divisions.append(
        h("h3", {}, C.divisions),
        table(
          [C.columns.division, C.columns.lexicon, C.columns.edition, C.columns.fingerprint, C.columns.rule],
          event.divisions.map((d) =>
            h(
              "tr",
              {},
              h("td", {}, d.name),
              h("td", {}, d.lexicon_view.shown_name, " ", unverifiedBadges(d.lexicon_view.unverified)),
              h("td", {}, STRINGS.edition(d.lexicon_view)),
              h("td", { class: "fingerprint", title: d.lexicon_view.fingerprint }, d.lexicon_view.short_fingerprint),
              h("td", {}, ruleText(d.rule, d.rule_text)),
            ),
          ),
        ),
      );
    } catch (error) {
      problem(note, error);
    }
  })();
  // Devices and alerts refresh themselves: a kiosk falling silent shows as offline within seconds, unasked.
  let shown = "";
  const refresh = async () => {
    try {
      const [listed, raised] = await Promise.all([call("/api/devices"), call("/api/alerts")]);
      if (note.dataset.from === "refresh") note.textContent = note.dataset.from = ""; // reached again
      const now = JSON.stringify([listed, raised]);
      if (now === shown) return;
      shown = now;
      showAlertCount(raised.alerts.length);
      const again = () => ((shown = ""), refresh());
      refill(devices, devicesTable(listed.devices, again));
      const shownAlerts = raised.alerts.slice(0, ALERTS_SHOWN);
      const moreAlerts = raised.alerts.length - shownAlerts.length;
      refill(
        alerts,
        raised.alerts.length
          ? h(
              "div",
              {},
              h(
                "ul",
                { class: "alerts" },
                shownAlerts.map((a) => alertItem(a, listed.devices, again, note)),
              ),
              moreAlerts
                ? h("p", { class: "hint", id: "alerts-more" }, STRINGS.t("ui.console.alertsMore", { n: moreAlerts }))
                : null,
            )
          : h("p", {}, C.noAlerts),
      );
    } catch (error) {
      problem(note, error);
      note.dataset.from = "refresh";
    }
  };
  const stop = every(REFRESH_MS, refresh);
  return () => {
    stop();
    stopQueue();
  };
}

// The round under way: every kiosk and handheld pre-fills it in a new challenge (players can change it).
function roundControl(event) {
  const input = h("input", {
    id: "current-round",
    type: "number",
    min: "1",
    max: event.input_rules.max_round,
    inputmode: "numeric",
    value: event.current_round ?? "",
  });
  const note = h("p", { id: "round-note", role: "status" });
  return h(
    "form",
    {
      class: "current-round",
      onsubmit: async (submitted) => {
        submitted.preventDefault();
        const value = input.value.trim();
        try {
          const saved = await call("/api/event/round", {
            method: "PUT",
            body: { current_round: value === "" ? null : Number(value) },
          });
          input.value = saved.current_round ?? "";
          note.textContent = saved.current_round === null ? C.roundCleared : C.roundSet(saved.current_round);
          note.className = "ok";
        } catch (error) {
          note.className = "message";
          problem(note, error);
        }
      },
    },
    h("label", { for: "current-round" }, C.currentRound, input),
    h("button", { type: "submit", class: "primary", id: "set-round" }, C.setRound),
    note,
  );
}

function chainCheck() {
  const result = h("p", { id: "chain-result", role: "status" });
  return h(
    "div",
    { class: "chain" },
    h(
      "button",
      {
        type: "button",
        id: "verify",
        onclick: async () => {
          try {
            const verified = await call("/api/audit/verify");
            const sentence = STRINGS.message(verified.message, verified.description);
            result.textContent = `${sentence} · ${C.chainHead(verified.head)}`;
            result.className = verified.ok ? "ok" : "message";
          } catch (error) {
            problem(result, error);
          }
        },
      },
      C.verify,
    ),
    result,
  );
}

// The alerts waiting for the TD, counted on the overview's tab whatever tab is open (asked every REFRESH_MS while
// signed in; the overview's own refresh tells it too).
let alertsWaiting = 0;
let alertsWatch = null;

function alertCount() {
  const badge = h("span", { class: "tab-count", id: "alert-count", hidden: true });
  queueMicrotask(() => showAlertCount(alertsWaiting));
  return badge;
}

function showAlertCount(n) {
  alertsWaiting = n;
  const badge = document.getElementById("alert-count");
  if (!badge) return;
  badge.hidden = !n;
  badge.textContent = String(n);
  badge.setAttribute("aria-label", STRINGS.t("ui.console.alertsWaiting", { n }));
}

function watchAlerts() {
  if (alertsWatch) return;
  alertsWatch = every(REFRESH_MS, async () => {
    try {
      showAlertCount((await call("/api/alerts")).alerts.length);
    } catch {
      // the overview says why when it is open; the count waits for the next answer
    }
  });
}

function stopWatchingAlerts() {
  alertsWatch?.();
  alertsWatch = null;
}

// The newest alerts the overview lists (the server keeps the newest of each kind); the rest are counted.
const ALERTS_SHOWN = 10;

// An alert, counted ("x 12") when it repeated; a device's move has its one-click acceptance beside it, record times
// held past the bound the acceptance of the clock's correction, and every alert a button that acknowledges it (it
// leaves the list; if it happens again, it is listed again).
function alertItem(alert, devices, refresh, note) {
  const count = alert.count > 1 ? ` ${C.alertRepeats(alert.count, when(alert.last_at))}` : "";
  const moved =
    alert.kind === "device_moved" && devices.find((d) => d.name === alert.actor && d.moved_to && !d.revoked_at);
  const text = alertText(alert);
  return h(
    "li",
    { class: `alert alert-${alert.kind}`, "data-id": alert.id },
    `${C.alertLine(when(alert.created_at), text)}${count} `,
    moved ? moveButton(moved, refresh) : null,
    alert.kind === "clock_held" ? clockButton(refresh, note) : null,
    " ",
    h(
      "button",
      {
        type: "button",
        class: "secondary small acknowledge",
        "aria-label": STRINGS.t("ui.console.alertAcknowledgeNamed", { message: text }),
        onclick: async () => {
          try {
            await call(`/api/alerts/${encodeURIComponent(alert.id)}/acknowledge`, { method: "POST" });
            refresh();
          } catch (error) {
            problem(note, error);
          }
        },
      },
      STRINGS.t("ui.console.alertAcknowledge"),
    ),
  );
}

// An alert's text: a message ({key, params}) rendered in the language, or the server's English text; the times
// in it as the console shows times.
function alertText(alert) {
  const text =
    typeof alert.message === "object"
      ? STRINGS.message(alert.message, alert.text)
      : STRINGS.message(null, alert.message);
  return timesShown(text); // "not heard from since 2026-11-27T14:02:11.000+00:00"
}

function moveButton(device, refresh) {
  return h(
    "button",
    {
      type: "button",
      class: "secondary small",
      "aria-label": C.acceptMoveNamed(device.name),
      onclick: async () => {
        if (!window.confirm(C.acceptMoveConfirm(device.name, device.bound_client, device.moved_to))) return;
        await call(`/api/devices/${encodeURIComponent(device.name)}/accept-move`, {
          method: "POST",
          body: { client: device.moved_to },
        });
        refresh();
      },
    },
    C.acceptMove,
  );
}

// Record times held ahead of the clock past the bound (issue 44): the TD accepts the clock's correction, a change
// record from the held time to the clock's; the hold's alerts close with it.
function clockButton(refresh, note) {
  return h(
    "button",
    {
      type: "button",
      class: "secondary small accept-clock",
      onclick: async () => {
        if (!window.confirm(C.acceptClockConfirm)) return;
        try {
          await call("/api/clock/accept-correction", { method: "POST" });
          refresh();
        } catch (error) {
          problem(note, error);
        }
      },
    },
    C.acceptClock,
  );
}

// The devices, with revoke and (given onRepair: where the pairing codes are listed) re-pair beside each.
function devicesTable(devices, refresh, onRepair = null) {
  return table(
    [
      C.columns.name,
      C.columns.role,
      C.columns.division,
      C.columns.address,
      C.columns.lastSeen,
      C.columns.state,
      C.columns.actions,
    ],
    devices.map((d) =>
      h(
        "tr",
        { class: d.revoked_at ? "revoked" : "" },
        h("td", {}, d.name),
        h("td", {}, STRINGS.role(d.role)),
        h("td", {}, d.division || C.anyDivision),
        h(
          "td",
          {},
          d.bound_client || C.notUsed,
          d.moved_to && !d.revoked_at
            ? h("span", { class: "moved" }, ` ${C.refusedFrom(d.moved_to, when(d.moved_at))} `, moveButton(d, refresh))
            : null,
        ),
        h("td", {}, when(d.last_seen_at)),
        h(
          "td",
          { class: d.revoked_at ? "state-revoked" : d.online ? "state-online" : "state-offline" },
          deviceState(d),
        ),
        h(
          "td",
          {},
          h(
            "div",
            { class: "device-actions" },
            d.revoked_at
              ? ""
              : h(
                  "button",
                  {
                    type: "button",
                    class: "secondary small",
                    "aria-label": C.revokeNamed(d.name),
                    onclick: async () => {
                      if (!window.confirm(C.revokeConfirmDivision(d.name, d.division))) return;
                      await call(`/api/devices/${encodeURIComponent(d.name)}/revoke`, { method: "POST" });
                      refresh();
                    },
                  },
                  C.revoke,
                ),
            onRepair && d.role !== "monitor" ? repairButton(d.name, onRepair) : null,
          ),
        ),
      ),
    ),
  );
}

function devicesView(content) {
  const devices = h("div", { id: "device-list" });
  const codes = codesView(() => showConsole("devices"));
  let shown = "";
  const refresh = async () => {
    try {
      const { devices: list } = await call("/api/devices");
      const now = JSON.stringify(list);
      if (now === shown) return;
      shown = now;
      refill(
        devices,
        devicesTable(list, () => ((shown = ""), refresh()), codes.repair),
      );
    } catch {
      // the next refresh tries again
    }
  };
  const enrolled = () => ((shown = ""), refresh());
  content.append(
    enrolView(enrolled, codes.add),
    hallView(enrolled, codes.add),
    codes.section,
    h("h2", {}, STRINGS.console.tabs.devices),
    devices,
    accountsView(state.me.actor),
  );
  return every(REFRESH_MS, refresh);
}

installKeys(toSearch, () => Boolean(state.me));
boot();
