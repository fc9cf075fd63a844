// The runner's handheld (WESPA 3.10.1-3.10.2): the runner types the words from the challenge slip,
// checks them against it, sends them, and carries the verdict (tick or cross) back to the table.
// On a flaky connection nothing is guessed: a challenge is either answered or clearly not sent,
// and trying again reuses its request id, so it is never recorded twice.

import { api, h, newRequestId } from "./api.js";
import { STRINGS as S } from "./strings.js";
import {
  currentRound,
  draftProblem,
  flash,
  heading,
  lexiconBox,
  pairForm,
  submitChallenge,
  tableRoundFields,
  verdictPanel,
  wordsField,
} from "./ui.js";
import { enrolment } from "./device.js";
import { refusedOutright, settle } from "./pending.js";
import { splitWords } from "./words.js";

const DEVICE = enrolment("runner");
const PENDING = DEVICE.pending; // a slip sent that got no clear answer
const app = document.getElementById("app");
const state = { token: DEVICE.token(), me: null, event: null, division: null, pending: null };

function show(name, element, focus) {
  app.replaceChildren(element);
  app.dataset.screen = name;
  (focus || element.querySelector("h1"))?.focus();
  window.scrollTo(0, 0);
}

async function boot() {
  const code = new URLSearchParams(location.hash.slice(1)).get("pair"); // from a pairing QR code's link
  history.replaceState(null, "", "/runner");
  // Back to the network: a challenge that could not be sent goes again, with the same id.
  window.addEventListener("online", () => state.pending && send(state.pending));
  if (!state.token || code) return showPair("", code || "");
  await load();
}

function showPair(message, code) {
  const { form, input } = pairForm({
    title: S.runnerPairTitle,
    button: S.runnerPair,
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

function forget(message) {
  DEVICE.forget();
  state.token = null;
  showPair(message, "");
}

// The token was refused: by this handheld's own server (revoked: forget it) or by another one (keep it).
async function refused() {
  if ((await DEVICE.refusedBy()) === "same") return forget(S.runnerRevoked);
  show(
    "elsewhere",
    h(
      "section",
      { class: "screen down" },
      heading(S.otherServer(DEVICE.event())),
      h("p", {}, S.otherServerHint),
      h("button", { class: "primary", onclick: load }, S.retry),
    ),
  );
}

async function load() {
  try {
    [state.me, state.event] = await Promise.all([
      api("/api/session", { token: state.token }),
      api("/api/event", { token: state.token }),
    ]);
    await DEVICE.learnServer();
  } catch (error) {
    if (error.kind === "unauthorized") return refused();
    show(
      "down",
      h(
        "section",
        { class: "screen down" },
        heading(error.kind === "moved" ? S.moved : S.serverDown),
        h("button", { class: "primary", onclick: load }, S.retry),
      ),
    );
    return;
  }
  showEntry();
}

function divisionChoice() {
  const all = state.event.divisions;
  const fixed = all.find((d) => d.name === state.me.division) || (all.length === 1 ? all[0] : null);
  if (fixed) return { get: () => fixed, element: null };
  const select = h(
    "select",
    { id: "division", name: "division" },
    all.map((d) =>
      h(
        "option",
        { value: d.name, selected: d.name === state.division?.name },
        S.divisionOption(d.name, d.lexicon_view.shown_name),
      ),
    ),
  );
  return {
    get: () => all.find((d) => d.name === select.value),
    element: h("label", { for: "division" }, S.division, select),
    select,
  };
}

function showEntry(draft = null) {
  const choice = divisionChoice();
  const division = state.division || choice.get();
  const place = tableRoundFields(
    state.event.rounds,
    draft?.table || "",
    draft ? draft.round : currentRound(state.event),
  );
  const words = wordsField(division.lexicon_view, state.event.input_rules, draft?.text || "");
  const lexicon = h("div", { class: "lexicon-line" }, lexiconBox(division.lexicon_view, false));
  choice.select?.addEventListener("change", () => {
    state.division = choice.get();
    showEntry({ table: place.table(), round: place.round(), text: "" });
  });
  const recent = h(
    "section",
    { class: "recent", "aria-labelledby": "recent-title" },
    h("h2", { id: "recent-title" }, S.recent),
    h("ol", { class: "recent-list" }, h("li", {}, "…")),
  );
  const form = h(
    "form",
    {
      class: "screen entry",
      autocomplete: "off",
      onsubmit: (event) => {
        event.preventDefault();
        const next = { division: choice.get(), table: place.table(), round: place.round(), text: words.textarea.value };
        const problem = draftProblem(state.event, next.table, next.round, next.text);
        if (problem) return flash(words.message, problem);
        const same = draft && ["table", "round", "text"].every((key) => draft[key] === next[key]);
        next.requestId = same && draft.requestId ? draft.requestId : newRequestId();
        state.division = next.division;
        showConfirm(next);
      },
    },
    h("header", {}, heading(state.event.name), h("p", { class: "hint" }, S.runnerTitle(state.me.actor))),
    choice.element,
    lexicon,
    place.fields,
    words.label,
    words.textarea,
    words.message,
    words.count,
    words.tiles,
    h("button", { type: "submit", class: "primary wide", id: "check" }, S.checkAndSend),
    recent,
  );
  show("entry", form, draft ? words.textarea : place.tableInput);
  loadRecent(recent.querySelector("ol"));
  if (!draft) followCurrentRound(place.roundInput);
}

// The TD may have moved on to another round since this page read the event: a round field the runner
// has not touched follows it.
async function followCurrentRound(input) {
  try {
    const event = await api("/api/event", { token: state.token, timeoutMs: 4000 });
    if (input && input.value === currentRound(state.event)) input.value = currentRound(event);
    state.event = { ...state.event, current_round: event.current_round };
  } catch {
    // the form works without it: the runner types the round
  }
}

async function loadRecent(list) {
  try {
    const { records } = await api("/api/challenges/mine?limit=5", { token: state.token });
    list.replaceChildren(...(records.length ? records.map(recentItem) : [h("li", {}, S.noRecent)]));
  } catch {
    list.replaceChildren(h("li", {}, S.serverDown));
  }
}

function recentItem(record) {
  const ok = record.verdict === "acceptable";
  const time = S.formatDate(record.created_at, "short-time");
  return h(
    "li",
    { class: ok ? "acceptable" : "unacceptable" },
    h("span", { class: "mark", "aria-hidden": "true" }, ok ? S.acceptableIcon : S.unacceptableIcon),
    h(
      "span",
      {},
      `${ok ? S.acceptable : S.unacceptable} · ${S.recentLine(record.id, record.table, record.word_count, time)}`,
    ),
    " ",
    h("a", { href: `/docket?id=${record.id}` }, S.printDocket),
  );
}

function showConfirm(draft) {
  const list = splitWords(draft.text);
  const page = h(
    "section",
    { class: "screen confirm" },
    heading(S.confirmTitle),
    h("p", { class: "table-round" }, S.confirmPlace(draft.table, draft.round, draft.division.name)),
    h("p", { class: "word-count big" }, S.words(list.length)),
    h(
      "ol",
      { class: "check-words" },
      list.map((word) => h("li", { "aria-label": [...word].join(" ") }, word)),
    ),
    h(
      "div",
      { class: "actions stacked" },
      h("button", { type: "button", class: "primary wide", id: "send", onclick: () => send(draft) }, S.send),
      h("button", { type: "button", class: "secondary wide", onclick: () => showEntry(draft) }, S.edit),
    ),
  );
  show("confirm", page);
}

async function send(draft) {
  const earlier = PENDING.get();
  if (earlier && earlier.requestId !== draft.requestId && !(await settled())) return;
  state.pending = draft;
  PENDING.set({ requestId: draft.requestId, table: draft.table, round: draft.round });
  show("sending", h("section", { class: "screen sending" }, heading(S.sending)));
  try {
    const record = await submitChallenge(state.token, draft.division.name, draft);
    state.pending = null;
    PENDING.clear();
    showVerdict(record);
  } catch (error) {
    if (refusedOutright(error)) PENDING.clear(); // nothing was recorded: nothing to settle
    if (error.kind === "unauthorized") {
      state.pending = null;
      return refused();
    }
    if (error.kind === "invalid") {
      state.pending = null;
      showEntry(draft);
      return flash(document.getElementById("word-message"), error.message);
    }
    showNotSent(draft, error);
  }
}

// Before a new slip is sent, the last one that got no clear answer is settled with the server: its
// verdict if it was recorded, else it is dropped (it never will be: the same id is not sent again).
async function settled() {
  const pending = PENDING.get();
  if (!pending) return true;
  show("settling", h("section", { class: "screen sending" }, heading(S.settling)));
  try {
    const { record } = await settle(state.token, pending.requestId);
    PENDING.clear();
    state.pending = null;
    if (!record) return true;
    showVerdict({ ...record, settled: true });
    return false;
  } catch (error) {
    if (error.kind === "unauthorized") {
      refused();
      return false;
    }
    show(
      "unsettled",
      h(
        "section",
        { class: "screen failure", role: "alert" },
        heading(S.unsettledTitle),
        h("p", { class: "failure-message" }, S.unsettled(pending.table, pending.round)),
        h("p", { class: "hint" }, error.kind === "network" ? S.unreachable : S.serverRefused(error.message)),
        h(
          "div",
          { class: "actions stacked" },
          h(
            "button",
            {
              type: "button",
              class: "primary wide",
              id: "retry",
              onclick: () => settled().then((free) => free && showEntry()),
            },
            S.retry,
          ),
        ),
      ),
    );
    return false;
  }
}

function showVerdict(record) {
  const page = verdictPanel(record, {
    facts: record.settled ? h("p", { class: "settled-note" }, S.settledNote(record.table, record.round)) : [],
    middle: h("p", { class: "verdict-list" }, record.words.join(" ")), // the runner carries the words back
    after: h(
      "div",
      { class: "actions stacked" },
      h("button", { type: "button", class: "primary wide inverse", id: "next", onclick: () => showEntry() }, S.next),
      h("a", { class: "button wide", href: `/docket?id=${record.id}` }, S.printDocket),
    ),
  });
  show("verdict", page);
}

function showNotSent(draft, error) {
  const page = h(
    "section",
    { class: "screen failure", role: "alert" },
    heading(S.notSent),
    h("p", { class: "failure-message" }, error.kind === "network" ? S.unreachable : S.serverRefused(error.message)),
    h("p", { class: "hint" }, S.notSentNote),
    h(
      "div",
      { class: "actions stacked" },
      h("button", { type: "button", class: "primary wide", id: "retry", onclick: () => send(draft) }, S.retry),
      h(
        "button",
        {
          type: "button",
          class: "secondary wide",
          onclick: () => {
            state.pending = null; // edited, it is a new slip: the old one is settled before it is sent
            showEntry(draft);
          },
        },
        S.edit,
      ),
    ),
  );
  show("not-sent", page);
}

boot();
