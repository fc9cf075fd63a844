// The runner's handheld (WESPA 3.10.1-3.10.2): the runner types the words from the challenge slip,
// checks them against it, sends them, and carries the verdict (tick or cross) back to the table.
// On a flaky connection nothing is guessed: a challenge is either answered or clearly not sent,
// and trying again reuses its request id, so it is never recorded twice. A slip not sent for want of a
// connection goes again by itself once the server answers; a page opened while the server is away
// (offline.js) says so and carries on by itself too.

import { api, followFrom, h, newRequestId, proveWith } from "../shared/api.js";
import { showConnection } from "../shared/connection.js";
import { STRINGS as S } from "../shared/strings.js";
import {
  asksForTiles,
  countDown,
  currentRound,
  draftProblem,
  heading,
  lexiconBox,
  pairForm,
  problemLine,
  readingPicker,
  recordWord,
  retryAfter,
  sized,
  submitChallenge,
  tableRoundFields,
  tileStatement,
  tileWord,
  unsettledLines,
  verdictPanel,
  whenServerAnswers,
  wordsField,
} from "../shared/ui.js";
import { enrolment, speakTheEventsLanguage } from "../shared/device.js";
import { refusedOutright, settle } from "../shared/pending.js";
import { shownTiles } from "../shared/tiles.js";
import { splitWords } from "../shared/words.js";
import { guardTaps } from "../shared/tap-guard.js";
import { leadingVerdict, standingNote } from "../shared/standing.js";
import { verdictMark, verdictWord } from "../shared/verdict-words.js";

const DEVICE = enrolment("runner");
// Another server of the hall proves itself to this device (its token) before it is sent anything (api.js).
proveWith(() => ({ value: DEVICE.proof(), of: "device" }));
// The server it followed last (a hall's other server, after a failover), proved again before its first request.
followFrom("wordjudge.runner.follows");
const PENDING = DEVICE.pending; // a slip sent that got no clear answer
const app = document.getElementById("app");
const state = { token: DEVICE.token(), me: null, event: null, division: null, pending: null };
const AGAIN_MS = 3000; // how often a screen waiting for the server asks again
let timers = []; // the screen's own: a new screen stops them
let screen = { name: "", shownAt: 0 }; // the screen shown: a new object for each
// A tap belongs to the screen it began on (tap-guard.js): the second tap of a double tap on Check never
// presses Send, nor does the tap on Send press Next on the verdict.
guardTaps(() => screen);

function show(name, element, focus) {
  for (const timer of timers) clearTimeout(timer);
  timers = [];
  screen = { name, shownAt: performance.now() };
  app.replaceChildren(element);
  app.dataset.screen = name;
  (focus || element.querySelector("h1"))?.focus();
  window.scrollTo(0, 0);
}

function later(fn, ms) {
  timers.push(setTimeout(fn, ms));
}

async function boot() {
  const code = new URLSearchParams(location.hash.slice(1)).get("pair"); // from a pairing QR code's link
  showConnection(); // plain HTTP in a hall: said above every screen
  if ((!state.token || code) && (await speakTheEventsLanguage())) return; // never paired: in the event's language
  history.replaceState(null, "", "/runner");
  // Back to the network: a challenge that could not be sent goes again, with the same id.
  window.addEventListener("online", () => state.pending && send(state.pending));
  if (!state.token || code) return showPair("", code || "");
  await load();
}

function showPair(message, code) {
  const { form, input } = pairForm({
    title: S.runnerPairTitle,
    role: "runner",
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
    DEVICE.keepProofKey(state.me);
    await DEVICE.learnServer();
  } catch (error) {
    if (error.kind === "unauthorized") return refused();
    show(
      "down",
      h(
        "section",
        { class: "screen down" },
        heading(error.kind === "moved" ? S.moved : S.serverDown),
        h("p", { class: "hint" }, error.body?.code === "unproven" ? error.message : S.comesBack),
        h("button", { class: "primary", onclick: load }, S.retry),
      ),
    );
    later(load, AGAIN_MS); // it carries on by itself once the server answers
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

// The entry screen, empty or with a slip to edit (`draft`), and the server's refusal of it (`refusal`) if any.
function showEntry(draft = null, refusal = "") {
  const choice = divisionChoice();
  const division = state.division || choice.get();
  const place = tableRoundFields(
    state.event.rounds,
    draft?.table || "",
    draft ? draft.round : currentRound(state.event),
  );
  const words = wordsField(division.lexicon_view, state.event.input_rules, draft?.text || "", draft?.saved);
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
  const tiles = () => choice.get().lexicon_view.tiles;
  const typedProblem = () => draftProblem(state.event, place.table(), place.round(), words.textarea.value, tiles());
  const form = h(
    "form",
    {
      class: "screen entry",
      autocomplete: "off",
      novalidate: true, // the page's own error line says what is missing, never the browser's bubble
      onsubmit: (event) => {
        event.preventDefault();
        const next = { division: choice.get(), table: place.table(), round: place.round(), text: words.textarea.value };
        const problem = draftProblem(state.event, next.table, next.round, next.text, tiles());
        if (problem) return problemLine(words.message, problem, typedProblem);
        // A word the board could hold in more than one way: the runner taps the tiles the slip or board shows.
        const unstated = words.statement.missing(next.text);
        if (unstated) {
          words.choices.querySelector(`.tiling[data-word="${unstated.index + 1}"]`)?.focus();
          return problemLine(words.message, S.stateTiles(unstated.word), () =>
            words.statement.missing(words.textarea.value) ? S.stateTiles(unstated.word) : "",
          );
        }
        next.sent = words.statement.sent(next.text);
        next.saved = words.statement.saved();
        const same = draft && ["table", "round", "sent"].every((key) => draft[key] === next[key]);
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
    words.choices,
    h("button", { type: "submit", class: "primary wide", id: "check" }, S.checkAndSend),
    recent,
  );
  show("entry", form, draft ? words.textarea : place.tableInput);
  if (refusal) {
    const unchanged = () => place.table() === draft.table && place.round() === draft.round;
    problemLine(words.message, refusal, () => (unchanged() && words.textarea.value === draft.text ? refusal : ""));
  }
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
    // the form works without it: the runner types the round (a revocation is told by loadRecent)
  }
}

async function loadRecent(list) {
  try {
    const { records } = await api("/api/challenges/mine?limit=5", { token: state.token });
    list.replaceChildren(...(records.length ? records.map(recentItem) : [h("li", {}, S.noRecent)]));
  } catch (error) {
    if (error.kind === "unauthorized") return list.isConnected && refused(); // revoked: say so
    list.replaceChildren(h("li", {}, S.serverDown));
  }
}

// A recent challenge: the verdict that stands leads (after a re-check, reissue or ruling, the final one, or that
// the TD's ruling is awaited), then the challenge's own verdict said to be superseded (or confirmed).
function recentItem(record) {
  const verdict = leadingVerdict(record, record.final);
  const time = S.formatDate(record.created_at, "short-time");
  const note = standingNote(S, record, record.final);
  return h(
    "li",
    { class: verdict ? (verdict === "acceptable" ? "acceptable" : "unacceptable") : "awaiting" },
    h("span", { class: "mark", "aria-hidden": "true" }, verdict ? verdictMark(S, verdict) : "⚠"),
    h(
      "span",
      {},
      `${verdict ? verdictWord(S, verdict) : S.docketAwaiting} · ${S.recentLine(record.id, record.table, record.word_count, time)}`,
    ),
    note ? h("small", { class: "superseded" }, note) : null,
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
      { class: `check-words${draft.division.lexicon_view.tiles ? " as-tiles" : ""}` },
      // Each word whole, scaled to fit a narrow screen (--letters): compared letter by letter with the slip; for a
      // lexicon of tiles of several letters (Spanish CH...), tile by tile, one box a tile.
      list.map((word, index) => {
        const view = draft.division.lexicon_view;
        if (!view.tiles) return sized(h("li", { "aria-label": [...word].join(" ") }, word), [...word].length);
        const reading = tileStatement(view, draft.saved).chosen(index, word) || shownTiles(word, view.tiles).tiles;
        return h("li", { "aria-label": reading.join(" ") }, tileWord(word, view.tiles, reading));
      }),
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
    if (asksForTiles(error)) return showPick(draft, error.body.details);
    if (error.kind === "invalid") {
      state.pending = null;
      return showEntry(draft, error.message);
    }
    showNotSent(draft, error);
  }
}

// The server asks which tiles a word of the slip is (the page's statement did not cover it: its lexicon changed
// since the page read it): the runner picks the tiles the board shows; then it is sent again (nothing was recorded).
function showPick(draft, asked) {
  state.pending = null;
  const page = readingPicker(draft.sent || draft.text, asked, {
    onPicked: (sent) => send({ ...draft, sent }),
    onBack: () => showEntry(draft),
  });
  show("pick", page, page.querySelector(".pick-reading"));
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
        ...unsettledLines(pending, error),
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

// The split tiles of a division's lexicon (Welsh NG), as this page read the event.
function splitTiles(division) {
  return state.event.divisions.find((d) => d.name === division)?.lexicon_view.tiles?.split || [];
}

function showVerdict(record) {
  const page = verdictPanel(record, {
    facts: record.settled ? h("p", { class: "settled-note" }, S.settledNote(record.table, record.round)) : [],
    // The runner carries the words back: each whole, scaled to fit a narrow screen, as the board shows it (its
    // tiles as boxes where they matter: a split tile).
    middle: h(
      "p",
      { class: "verdict-list" },
      record.words.flatMap((word) => [recordWord(word, splitTiles(record.division)), " "]),
    ),
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
  const offline = error.kind === "network";
  const wait = retryAfter(error);
  const message = h("p", { class: "failure-message" }, offline ? S.unreachable : S.serverRefused(error.message));
  const retry = h(
    "button",
    { type: "button", class: "primary wide", id: "retry", onclick: () => send(draft) },
    S.retry,
  );
  const page = h(
    "section",
    { class: "screen failure", role: "alert" },
    heading(wait ? S.notSentRateLimited : S.notSent),
    message,
    h("p", { class: "hint" }, offline ? S.notSentNote : S.notSentRetryNote),
    h(
      "div",
      { class: "actions stacked" },
      retry,
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
  // The connection back (the server answers at all): the slip goes again by itself, with its request id.
  if (offline) whenServerAnswers(page, later, AGAIN_MS, () => state.pending === draft && send(draft));
  if (wait) {
    retry.disabled = true; // nothing was recorded, and the server would refuse it again until then
    countDown(message, wait, S.rateLimited, () => {
      message.textContent = S.rateLimitOver;
      retry.disabled = false;
    });
  }
}

boot();
