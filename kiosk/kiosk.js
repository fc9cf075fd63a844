// The self-adjudication kiosk (WESPA 3.10.4, ASPA 10.3): the challenger types the words, the
// opponent checks them and executes the adjudication, both see one verdict, and it clears.
// Everything the server enforces (credentials, input rules, rate limit) is enforced there too;
// this page only makes the protocol easy to follow and hard to get wrong.

import { api, h, newRequestId } from "./api.js";
import { STRINGS as S } from "./strings.js";
import {
  countDown,
  currentRound,
  draftProblem,
  heading,
  lexiconBox,
  pairForm,
  problemLine,
  retryAfter,
  submitChallenge,
  tableRoundFields,
  unverifiedBadges,
  verdictPanel,
  wordsField,
} from "./ui.js";
import { enrolment } from "./device.js";
import { refusedOutright, settle } from "./pending.js";
import { repeats, splitWords } from "./words.js";

const DEVICE = enrolment("kiosk");
const DIVISION_KEY = "wordjudge.kiosk.division";
const PENDING = DEVICE.pending; // a challenge that got no clear answer
const ABANDONED_MS = 30000; // typed input left alone this long is cleared
const SETTINGS_MS = 60000;
const HOLD_MS = 1200; // how long the opponent holds "Adjudicate"
const KEY_GRACE_MS = 400; // keys already down when a screen appears do not count on it
const VERDICT_GRACE_MS = 500; // presses this soon after a verdict appears do not clear it
const HEALTH_EVERY_MS = 10000;

const app = document.getElementById("app");
const state = {
  token: DEVICE.token(),
  me: null, // {actor, division} from /api/session
  event: null, // /api/event
  serverOk: true, // the server answers (false: it cannot be reached)
  serverProblem: null, // what the server says is wrong with it (/api/health degraded), or null
  division: null, // the division chosen for the challenge under way
  draft: null, // {table, round, text, requestId}
};
let screen = { timers: [], listeners: [], name: "" };

// -- screens: each replaces the whole page, and with it every typed word ---------------------------

function show(name, element, focus) {
  for (const timer of screen.timers) clearTimeout(timer);
  for (const [type, handler] of screen.listeners) document.removeEventListener(type, handler, true);
  screen = { timers: [], listeners: [], name, shownAt: performance.now() };
  app.replaceChildren(element);
  app.dataset.screen = name;
  (focus || element.querySelector("h1, h2"))?.focus();
}

function later(fn, ms) {
  screen.timers.push(setTimeout(fn, ms));
}

function listen(type, handler) {
  screen.listeners.push([type, handler]);
  document.addEventListener(type, handler, true);
}

// Clears typed input left alone for ABANDONED_MS: any key or touch restarts the count.
function clearWhenAbandoned(ms = ABANDONED_MS) {
  let timer = setTimeout(goIdle, ms);
  screen.timers.push(timer);
  const restart = () => {
    clearTimeout(timer);
    timer = setTimeout(goIdle, ms);
    screen.timers.push(timer);
  };
  for (const type of ["keydown", "pointerdown", "input"]) listen(type, restart);
}

// -- start-up and enrolment ----------------------------------------------------------------------

async function boot() {
  const code = new URLSearchParams(location.hash.slice(1)).get("pair"); // from a pairing QR code's link
  // No way back into an old screen: the history holds one kiosk entry, and Back lands on idle.
  history.replaceState({ kiosk: true }, "", "/kiosk");
  history.pushState({ kiosk: true }, "", "/kiosk");
  window.addEventListener("popstate", () => {
    history.pushState({ kiosk: true }, "", "/kiosk");
    goIdle();
  });
  document.addEventListener("contextmenu", (event) => event.preventDefault());
  setInterval(checkHealth, HEALTH_EVERY_MS);
  if (!state.token || code) {
    showPair("", code || "");
    return;
  }
  await load();
}

async function load() {
  try {
    const [me, event] = await Promise.all([
      api("/api/session", { token: state.token }),
      api("/api/event", { token: state.token }),
    ]);
    state.me = me;
    state.event = event;
    state.serverOk = true;
    await DEVICE.learnServer();
  } catch (error) {
    if (error.kind === "unauthorized") return refused();
    state.serverOk = false;
    const title = error.kind === "network" ? S.serverDown : error.kind === "moved" ? S.moved : S.serverProblem;
    // Not the browser's words for a failed fetch: the kiosk says it carries on by itself (and does).
    const detail = error.kind === "network" ? S.comesBack : error.message;
    show("down", h("section", { class: "screen down" }, heading(title), h("p", {}, detail)));
    later(load, 3000);
    return;
  }
  goIdle();
}

function forget(message) {
  DEVICE.forget();
  state.token = null;
  state.me = null;
  showPair(message, "");
}

// The token was refused: by this kiosk's own server (it was revoked: forget it), or by another server
// (started from the wrong folder, a replacement box): keep the enrolment, say so, and try again until
// the kiosk's own server is back.
async function refused() {
  if ((await DEVICE.refusedBy()) === "same") return forget(S.revoked);
  state.serverOk = false;
  show(
    "elsewhere",
    h("section", { class: "screen down" }, heading(S.otherServer(DEVICE.event())), h("p", {}, S.otherServerHint)),
  );
  later(load, 5000);
}

function showPair(message, code) {
  const { form, input } = pairForm({
    title: S.pairTitle,
    code,
    message,
    onEnrolled: async (token, enrolled) => {
      DEVICE.save(token, enrolled);
      state.token = token;
      await load();
    },
  });
  show("pair", form, input);
}

// Every few seconds: is the server there and well, and is this kiosk still enrolled? (The TD's
// device list shows a kiosk as online from these calls.) A revoked kiosk goes back to its pairing
// screen when idle.
async function checkHealth() {
  const wasOk = state.serverOk;
  try {
    state.serverProblem = await serverProblem();
    if (state.token) {
      state.me = await api("/api/session", { token: state.token, timeoutMs: 4000 });
      if (screen.name === "idle") {
        // The TD may have changed the event (divisions, lexicons, rules): an idle kiosk shows it at once.
        const event = await api("/api/event", { token: state.token, timeoutMs: 4000 });
        if (JSON.stringify(event) !== JSON.stringify(state.event)) {
          state.event = event;
          return goIdle();
        }
      }
    }
    state.serverOk = true;
  } catch (error) {
    if (error.kind === "unauthorized" && state.token && screen.name === "idle") return refused();
    if (error.kind === "moved" && screen.name === "idle") return load(); // shows why, and tries again
    // An answer that is an error (a 503: the access store cannot be used) is a server problem, not silence.
    state.serverOk = error.kind !== "network";
    if (state.serverOk && error.kind !== "unauthorized") state.serverProblem = error.message;
  }
  // The division cards follow: none can start a challenge while the server cannot be reached.
  if (state.serverOk !== wasOk && screen.name === "idle") return goIdle();
  const line = document.getElementById("server-state");
  if (line) renderServerState(line);
}

// What the server says about itself: null when it is ok; why not when it is degraded (its health
// check answers 503 with the reasons: the audit log cannot be written, a lexicon file changed...).
async function serverProblem() {
  try {
    await api("/api/health", { timeoutMs: 4000 });
    return null;
  } catch (error) {
    if (error.body?.state === "degraded") return error.body.reasons.join("; ");
    throw error;
  }
}

function renderServerState(line) {
  const problem = state.serverOk && state.serverProblem !== null;
  line.textContent = !state.serverOk ? S.serverDown : problem ? S.serverProblem : S.serverOk;
  line.className = `server-state ${state.serverOk && !problem ? "ok" : "error"}`;
  line.title = problem ? state.serverProblem : "";
}

// -- idle ----------------------------------------------------------------------------------------

function divisions() {
  return state.event ? state.event.divisions : [];
}

// The division this kiosk serves, if it serves only one: by enrolment, by the TD's setting, or the event's only one.
function fixedDivision() {
  const all = divisions();
  const wanted = state.me?.division || localStorage.getItem(DIVISION_KEY);
  return all.find((d) => d.name === wanted) || (all.length === 1 ? all[0] : null);
}

function goIdle() {
  state.draft = null;
  state.division = null;
  if (!state.token) return showPair("", "");
  if (!state.event) return load();
  const fixed = fixedDivision();
  const status = h("p", { id: "server-state", role: "status" });
  renderServerState(status);
  const down = !state.serverOk; // then no card can start a challenge, and each says why
  const cannot = () => (down ? h("span", { class: "card-down" }, S.cannotStart) : null);
  const choices = fixed
    ? [
        h("p", { class: "division-name" }, `Division ${fixed.name}`),
        lexiconBox(fixed.lexicon_view),
        h(
          "button",
          { class: "primary start", id: "start", disabled: down, onclick: () => startChallenge(fixed) },
          S.start,
        ),
        cannot(),
      ]
    : [
        h("h2", {}, S.pickDivision),
        h(
          "div",
          { class: "division-choices" },
          divisions().map((d) =>
            h(
              "button",
              { class: "division", disabled: down, onclick: () => startChallenge(d) },
              h("span", { class: "division-name" }, `Division ${d.name}`),
              lexiconBox(d.lexicon_view),
              cannot(),
            ),
          ),
        ),
      ];
  const page = h(
    "section",
    { class: "screen idle" },
    heading(state.event.name),
    ...choices,
    h("p", { class: "hint" }, S.startHint),
    status,
    h("button", { class: "td-button", onclick: showTdLogin, "aria-label": S.tdTitle }, S.tdButton),
  );
  show("idle", page, page.querySelector("#start"));
}

// -- challenger ----------------------------------------------------------------------------------

// A new challenge starts only once the last one that got no clear answer is settled with the server.
async function startChallenge(division) {
  if (!state.serverOk) return; // the cards say so
  const pending = PENDING.get();
  if (!pending) return showChallenger(division);
  show("settling", h("section", { class: "screen sending" }, heading(S.settling)));
  try {
    const { record } = await settle(state.token, pending.requestId);
    PENDING.clear();
    if (!record) return showChallenger(division);
    const recorded = divisions().find((d) => d.name === record.division) || division;
    return showVerdict(recorded, { ...record, settled: true });
  } catch (error) {
    if (error.kind === "unauthorized") return refused();
    const page = h(
      "section",
      { class: "screen failure", role: "alert" },
      heading(S.unsettledTitle),
      h("p", { class: "failure-message" }, S.unsettled(pending.table, pending.round)),
      h("p", { class: "hint" }, error.kind === "network" ? S.unreachable : S.serverRefused(error.message)),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", onclick: goIdle }, S.back),
        h(
          "button",
          { type: "button", class: "primary", id: "retry", onclick: () => startChallenge(division) },
          S.retry,
        ),
      ),
    );
    show("unsettled", page);
  }
}

function showChallenger(division, draft = null) {
  state.division = division;
  // The round the TD set (read every few seconds while idle), never the last challenge's: players change it if need be.
  const place = tableRoundFields(
    state.event.rounds,
    draft?.table || "",
    draft ? draft.round : currentRound(state.event),
  );
  const words = wordsField(division.lexicon_view, state.event.input_rules, draft?.text || "");
  const done = (event) => {
    event.preventDefault();
    const next = { table: place.table(), round: place.round(), text: words.textarea.value };
    const problem = draftProblem(state.event, next.table, next.round, next.text);
    if (problem) {
      // Until an edit fixes it (then it goes): the page's own line, never the browser's bubble.
      problemLine(words.message, problem, () =>
        draftProblem(state.event, place.table(), place.round(), words.textarea.value),
      );
      return;
    }
    const same = draft && draft.table === next.table && draft.round === next.round && draft.text === next.text;
    next.requestId = same ? draft.requestId : newRequestId(); // a retry of the same challenge keeps its id
    showOpponent(division, next);
  };
  const form = h(
    "form",
    { class: "screen challenger", onsubmit: done, autocomplete: "off" },
    h("header", {}, heading(S.challengerTitle), lexiconBox(division.lexicon_view, false)),
    place.fields,
    words.label,
    words.textarea,
    words.message,
    words.count,
    words.tiles,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", onclick: goIdle }, S.cancel),
      h("button", { type: "submit", class: "primary", id: "done" }, S.done),
    ),
  );
  show("challenger", form, draft ? words.textarea : place.tableInput);
  clearWhenAbandoned();
}

// -- opponent ------------------------------------------------------------------------------------

function showOpponent(division, draft) {
  const list = splitWords(draft.text);
  const twice = repeats(list);
  const button = h(
    "button",
    { type: "button", class: "hold", id: "adjudicate", "aria-describedby": "hold-keys" },
    h("span", { class: "hold-fill", "aria-hidden": "true" }),
    h("span", { class: "hold-label" }, S.hold),
  );
  let holding = null;
  const start = () => {
    if (holding) return;
    button.classList.add("holding");
    holding = setTimeout(() => {
      holding = null;
      adjudicate(division, draft);
    }, HOLD_MS);
  };
  const stop = () => {
    clearTimeout(holding);
    holding = null;
    button.classList.remove("holding");
  };
  button.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    start();
  });
  for (const type of ["pointerup", "pointerleave", "pointercancel"]) button.addEventListener(type, stop);
  button.addEventListener("click", (event) => event.preventDefault()); // a click is not a hold
  button.addEventListener("keydown", (event) => {
    if (event.key !== " " && event.key !== "Enter") return;
    event.preventDefault();
    // A key held since the challenger's screen, or auto-repeating, is not the opponent's press.
    if (event.repeat || performance.now() - screen.shownAt < KEY_GRACE_MS) return;
    start();
  });
  button.addEventListener("keyup", stop);
  button.addEventListener("blur", stop);

  const page = h(
    "section",
    { class: "screen opponent" },
    h("header", {}, heading(S.opponentTitle), lexiconBox(division.lexicon_view, false)),
    h("p", { class: "table-round big" }, S.tableRound(draft.table, draft.round)), // the opponent checks both
    h("p", { class: "word-count big" }, S.words(list.length)),
    h(
      "ol",
      { class: "check-words", "aria-label": S.words(list.length) },
      list.map((word) => h("li", { "aria-label": [...word].join(" ") }, word)),
    ),
    twice.length
      ? h("p", { class: "repeated", role: "note" }, twice.map(([w, n]) => S.repeated(w, n)).join(" · "))
      : null,
    h("p", { class: "hint" }, S.opponentHint),
    h(
      "div",
      { class: "actions" },
      h(
        "button",
        { type: "button", class: "secondary", id: "back", onclick: () => showChallenger(division, draft) },
        S.back,
      ),
      button,
    ),
    h("p", { id: "hold-keys", class: "hint small" }, S.holdKeys),
  );
  show("opponent", page);
  clearWhenAbandoned();
}

async function adjudicate(division, draft) {
  show("sending", h("section", { class: "screen sending" }, heading(S.sending)));
  PENDING.set({ requestId: draft.requestId, table: draft.table, round: draft.round });
  try {
    const record = await submitChallenge(state.token, division.name, draft);
    PENDING.clear();
    state.serverOk = true;
    showVerdict(division, record);
  } catch (error) {
    if (refusedOutright(error)) PENDING.clear(); // nothing was recorded: nothing to settle
    if (error.kind === "unauthorized") return refused();
    if (error.kind === "invalid") {
      showChallenger(division, draft);
      // The server's refusal of what was sent: it goes once an edit changes the table, round or words.
      const typed = () => ["table", "round", "words"].map((id) => document.getElementById(id)?.value).join("\n");
      const sent = typed();
      problemLine(document.getElementById("word-message"), error.message, () =>
        typed() === sent ? error.message : "",
      );
      return;
    }
    showFailure(division, draft, error);
  }
}

// -- verdict -------------------------------------------------------------------------------------

function showVerdict(division, record) {
  state.draft = null; // the typed words are gone from here on
  const view = division.lexicon_view;
  const seconds = state.event.kiosk_result_seconds;
  const countdown = h("p", { class: "clears" }, S.clearsIn(seconds));
  const page = verdictPanel(record, {
    facts: h(
      "p",
      { class: "verdict-facts" },
      `${view.shown_name} · ${S.fingerprint(view.short_fingerprint)} `,
      unverifiedBadges(view.unverified),
    ),
    after: countdown,
  });
  if (record.settled) page.prepend(h("p", { class: "settled-note" }, S.settledNote(record.table, record.round)));
  show("verdict", page);
  let left = seconds;
  const tick = () => {
    left -= 1;
    if (left <= 0) return goIdle();
    countdown.textContent = S.clearsIn(left);
    later(tick, 1000);
  };
  later(tick, 1000);
  const clear = (event) => {
    if (performance.now() - screen.shownAt < VERDICT_GRACE_MS) return;
    event.preventDefault();
    goIdle();
  };
  listen("keydown", clear);
  listen("pointerdown", clear);
}

// -- failures ------------------------------------------------------------------------------------

function showFailure(division, draft, error) {
  const text = error.kind === "network" ? S.unreachable : S.serverRefused(error.message);
  const message = h("p", { class: "failure-message" }, text);
  const retry = h(
    "button",
    { type: "button", class: "primary", id: "retry", onclick: () => adjudicate(division, draft) },
    S.retry,
  );
  const page = h(
    "section",
    { class: "screen failure", role: "alert" },
    heading(S.failedTitle),
    message,
    h("p", { class: "hint" }, S.retryNote),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", id: "discard", onclick: goIdle }, S.discard),
      retry,
    ),
  );
  show("failure", page);
  const wait = retryAfter(error); // the rate limit: the wait the server asked for, counted down
  if (wait) {
    retry.disabled = true;
    countDown(message, wait, S.rateLimited, () => {
      message.textContent = S.rateLimitOver;
      retry.disabled = false;
    });
  }
}

// -- TD settings ---------------------------------------------------------------------------------

function showTdLogin() {
  const name = h("input", { id: "td-name", autocomplete: "off", maxlength: "40" });
  const password = h("input", { id: "td-password", type: "password", autocomplete: "off", maxlength: "1000" });
  const note = h("p", { class: "message", role: "alert" });
  const form = h(
    "form",
    {
      class: "screen td-login",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const td = await api("/api/td-check", {
            method: "POST",
            body: { name: name.value, password: password.value },
          });
          showSettings(td.actor);
        } catch (error) {
          password.value = "";
          note.textContent = error.kind === "network" ? S.unreachable : error.message;
        }
      },
    },
    heading(S.tdTitle),
    h("label", { for: "td-name" }, S.tdName, name),
    h("label", { for: "td-password" }, S.tdPassword, password),
    note,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", onclick: goIdle }, S.close),
      h("button", { type: "submit", class: "primary" }, S.tdUnlock),
    ),
  );
  show("td-login", form, name);
  clearWhenAbandoned(SETTINGS_MS);
}

function showSettings(td) {
  const enrolledFor = state.me?.division;
  const current = localStorage.getItem(DIVISION_KEY) || "";
  const options = [
    ["", S.allDivisions],
    ...divisions().map((d) => [d.name, `${d.name}: ${d.lexicon_view.shown_name}`]),
  ];
  const choices = h(
    "fieldset",
    { class: "settings-divisions", disabled: Boolean(enrolledFor) },
    h("legend", {}, S.settingsDivision),
    options.map(([value, label]) =>
      h(
        "label",
        {},
        h("input", {
          type: "radio",
          name: "division",
          value,
          checked: value === current,
          onchange: () => (value ? localStorage.setItem(DIVISION_KEY, value) : localStorage.removeItem(DIVISION_KEY)),
        }),
        label,
      ),
    ),
  );
  const page = h(
    "section",
    { class: "screen settings" },
    heading(S.tdTitle),
    h("p", {}, S.enrolledAs(state.me?.actor || "?")),
    h("p", { class: "hint" }, S.openedBy(td)),
    enrolledFor ? h("p", {}, S.enrolledFor(enrolledFor)) : null,
    choices,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", id: "unpair", onclick: () => forget("") }, S.unpair),
      h("button", { type: "button", class: "primary", onclick: goIdle }, S.close),
    ),
  );
  show("settings", page);
  clearWhenAbandoned(SETTINGS_MS);
}

boot();
