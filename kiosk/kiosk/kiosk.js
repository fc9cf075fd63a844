// The self-adjudication kiosk (WESPA 3.10.4, ASPA 10.3): the challenger types the words, the
// opponent checks them and executes the adjudication, both see one verdict, and it clears.
// Everything the server enforces (credentials, input rules, rate limit) is enforced there too;
// this page only makes the protocol easy to follow and hard to get wrong.

import { api, followFrom, h, newRequestId, proveWith } from "../shared/api.js";
import { showConnection } from "../shared/connection.js";
import { STRINGS as S } from "../shared/strings.js";
import {
  asksForTiles,
  countDown,
  currentRound,
  draftFault,
  draftProblem,
  flash,
  heading,
  lexiconBox,
  pairForm,
  problemLine,
  readingPicker,
  retryAfter,
  submitChallenge,
  tableRoundFields,
  tileStatement,
  tileWord,
  unsettledLines,
  unverifiedBadges,
  verdictPanel,
  whenServerAnswers,
  wordsField,
} from "../shared/ui.js";
import { enrolment, speakTheEventsLanguage } from "../shared/device.js";
import { refusedOutright, settle } from "../shared/pending.js";
import {
  abandonLine,
  clearWhenAbandoned,
  fitWords,
  freshKey,
  holdButton,
  later,
  listen,
  screenName,
  show,
  shownFor,
} from "./screens.js";
import { shownTiles } from "../shared/tiles.js";
import { refusedTable, repeats, splitWords } from "../shared/words.js";

const DEVICE = enrolment("kiosk");
// Another server of the hall proves itself to this device (its token) before it is sent anything (api.js).
proveWith(() => ({ value: DEVICE.proof(), of: "device" }));
// The server it followed last (a hall's other server, after a failover), proved again before its first request.
followFrom("wordjudge.kiosk.follows");
const DIVISION_KEY = "wordjudge.kiosk.division";
const PENDING = DEVICE.pending; // a challenge that got no clear answer
const ABANDONED_S = 30; // typed input left alone this long is cleared
const SETTINGS_S = 60;
const RETRY_BACK_MS = 3000; // how often the failure screen asks whether the server is back
const HOLD_MS = 1200; // how long the opponent holds "Adjudicate"
const VERDICT_GRACE_MS = 500; // presses this soon after a verdict appears do not clear it
const HEALTH_EVERY_MS = 10000;

const state = {
  token: DEVICE.token(),
  me: null, // {actor, division} from /api/session
  event: null, // /api/event
  serverOk: true, // the server answers (false: it cannot be reached)
  serverProblem: null, // what the server says is wrong with it (/api/health degraded), or null
  division: null, // the division chosen for the challenge under way
  draft: null, // {table, round, text, requestId}
};

// Typed input left alone is cleared: back to idle, where nothing typed remains.
function clearAbandoned(seconds, line = null) {
  clearWhenAbandoned(seconds, goIdle, line);
}

// -- start-up and enrolment ----------------------------------------------------------------------

async function boot() {
  const code = new URLSearchParams(location.hash.slice(1)).get("pair"); // from a pairing QR code's link
  showConnection(); // plain HTTP in a hall: said above every screen
  if ((!state.token || code) && (await speakTheEventsLanguage())) return; // never paired: in the event's language
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
    DEVICE.keepProofKey(me);
    await DEVICE.learnServer();
  } catch (error) {
    if (error.kind === "unauthorized") return refused();
    state.serverOk = false;
    const title = error.kind === "network" ? S.serverDown : error.kind === "moved" ? S.moved : S.serverProblem;
    // Not the browser's words for a failed fetch: the kiosk says it carries on by itself (and does).
    // Nothing proved itself the event's server: it was sent nothing, and the screen says so.
    const unproven = error.body?.code === "unproven";
    const detail = error.kind === "network" && !unproven ? S.comesBack : error.message;
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
  // A demo set aside (or an event moved to this machine) never comes back: the TD pairs the kiosk again, with a
  // new code; the old pairing is kept until one works.
  const again = h(
    "button",
    { type: "button", class: "secondary", id: "pair-again", onclick: () => showPair("", "") },
    S.pairAgain,
  );
  show(
    "elsewhere",
    h(
      "section",
      { class: "screen down" },
      heading(S.otherServer(DEVICE.event())),
      h("p", {}, S.otherServerHint),
      h("p", { class: "hint" }, S.pairAgainHint),
      h("div", { class: "actions" }, again),
    ),
  );
  later(load, 5000);
}

function showPair(message, code) {
  const { form, input } = pairForm({
    title: S.pairTitle,
    role: "kiosk",
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
      if (screenName() === "idle") {
        // The TD may have changed the event (divisions, lexicons, rules): an idle kiosk shows it at once.
        const event = await api("/api/event", { token: state.token, timeoutMs: 4000 });
        if (JSON.stringify(event) !== JSON.stringify(state.event)) {
          // Idle still? The players may have begun a challenge while the answer came: it is never taken from
          // them. Only a round field they have not touched follows the TD's round, as on the handheld; the
          // rest of the change shows once the kiosk is idle again. The idle screen does not show the round,
          // so a new round (every round of the day) is not drawn again: a tap on Start just then is kept.
          if (screenName() === "idle" && !onlyTheRound(state.event, event)) {
            state.event = event;
            return goIdle();
          }
          const round = document.getElementById("round");
          if (round && round.value === currentRound(state.event)) round.value = currentRound(event);
          state.event = { ...state.event, current_round: event.current_round };
        }
      }
    }
    state.serverOk = true;
  } catch (error) {
    if (error.kind === "unauthorized" && state.token && screenName() === "idle") return refused();
    if (error.kind === "moved" && screenName() === "idle") return load(); // shows why, and tries again
    // An answer that is an error (a 503: the access store cannot be used) is a server problem, not silence.
    state.serverOk = error.kind !== "network";
    if (state.serverOk && error.kind !== "unauthorized") state.serverProblem = error.message;
  }
  // The division cards follow: none can start a challenge while the server cannot be reached.
  if (state.serverOk !== wasOk && screenName() === "idle") return goIdle();
  const line = document.getElementById("server-state");
  if (line) renderServerState(line);
}

// Whether two readings of the event differ in nothing but the TD's current round.
function onlyTheRound(before, after) {
  const rest = (event) => JSON.stringify({ ...event, current_round: null });
  return rest(before) === rest(after);
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

// The division's name, for the challenge's screens of an event with several: the opponent checks it too.
function divisionShown(division) {
  return divisions().length > 1 ? division.name : null;
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
        h("p", { class: "division-name" }, S.divisionName(fixed.name)),
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
              h("span", { class: "division-name" }, S.divisionName(d.name)),
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
      ...unsettledLines(pending, error),
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

// The challenger's screen, in the order a player types (Zyzzyva's judge mode: the words at once): the words,
// the table, the round (the TD's, pre-filled), then Done. Enter goes on to the next box that needs typing,
// and hands over once none does; Escape steps back a box. Cancel is out of that path (in the header), and
// the action bar stays in view however many words there are: the words area scrolls instead.
function showChallenger(division, draft = null) {
  state.division = division;
  const rules = state.event.input_rules;
  // The round the TD set (read every few seconds while idle), never the last challenge's: players change it if need be.
  const place = tableRoundFields(
    state.event.rounds,
    draft?.table || "",
    draft ? draft.round : currentRound(state.event),
  );
  const words = wordsField(division.lexicon_view, rules, draft?.text || "", draft?.saved);
  const fields = { words: words.textarea, table: place.tableInput, round: place.roundInput };
  const order = [words.textarea, place.tableInput, place.roundInput].filter(Boolean);
  // Only table labels the event can have: where tables are numbers, a word typed into Table is refused as typed.
  place.tableInput.setAttribute("inputmode", rules.tables === "numbers" ? "numeric" : "text");
  let goodTable = place.tableInput.value;
  place.tableInput.addEventListener("input", () => {
    if (!refusedTable(place.tableInput.value, rules)) {
      goodTable = place.tableInput.value;
      return;
    }
    place.tableInput.value = goodTable;
    flash(words.message, rules.tables === "numbers" ? S.tableDigitsOnly : S.tableNameChars);
  });
  const done = () => {
    const next = { table: place.table(), round: place.round(), text: words.textarea.value };
    const fault = draftFault(state.event, next.table, next.round, next.text, division.lexicon_view.tiles);
    if (fault) {
      fields[fault.field].focus();
      // Until an edit fixes it (then it goes): the page's own line, never the browser's bubble.
      problemLine(words.message, fault.text, () =>
        draftProblem(state.event, place.table(), place.round(), words.textarea.value, division.lexicon_view.tiles),
      );
      return;
    }
    // A word the board could hold in more than one way: the players tap the tiles it shows, before anything is sent.
    const unstated = words.statement.missing(next.text);
    if (unstated) {
      words.choices.querySelector(`.tiling[data-word="${unstated.index + 1}"]`)?.focus();
      problemLine(words.message, S.stateTiles(unstated.word), () =>
        words.statement.missing(words.textarea.value) ? S.stateTiles(unstated.word) : "",
      );
      return;
    }
    next.sent = words.statement.sent(next.text);
    next.saved = words.statement.saved();
    const same = draft && draft.table === next.table && draft.round === next.round && draft.sent === next.sent;
    next.requestId = same ? draft.requestId : newRequestId(); // a retry of the same challenge keeps its id
    showOpponent(division, next);
  };
  const countdown = abandonLine(ABANDONED_S);
  const form = h(
    "form",
    {
      class: "screen framed challenger",
      autocomplete: "off",
      novalidate: true, // the kiosk's own messages, in the kiosk's words, for the box at fault
      onsubmit: (event) => {
        event.preventDefault();
        done();
      },
    },
    h(
      "header",
      {},
      heading(S.challengerTitle),
      h("button", { type: "button", class: "secondary cancel", id: "cancel", onclick: goIdle }, S.cancel),
      lexiconBox(division.lexicon_view, false, divisionShown(division)),
    ),
    h(
      "div",
      { class: "screen-body" },
      words.label,
      words.textarea,
      words.count,
      place.fields,
      words.tiles,
      words.choices,
    ),
    h(
      "div",
      { class: "screen-foot" },
      words.message,
      h("div", { class: "actions" }, countdown, h("button", { type: "submit", class: "primary", id: "done" }, S.done)),
    ),
  );
  form.addEventListener("keydown", (event) => {
    const at = order.indexOf(event.target);
    if (event.key === "Enter" && at >= 0) {
      event.preventDefault(); // no new line in the words, no second submission from a held key
      if (freshKey(event)) done();
    } else if (event.key === "Escape" && freshKey(event)) {
      event.preventDefault();
      if (at > 0) order[at - 1].focus();
      else if (event.target.id === "done") order[order.length - 1].focus();
      else if (at === 0 && !words.textarea.value.trim() && !place.table()) goIdle(); // nothing typed: step out
    }
  });
  // The words box shows every typed word (up to its CSS max-height, then it scrolls).
  const grow = () => {
    words.textarea.style.height = "auto";
    words.textarea.style.height = `${words.textarea.scrollHeight + 6}px`; // its borders
  };
  words.textarea.addEventListener("input", grow);
  show("challenger", form, words.textarea);
  grow();
  listen("resize", grow, window);
  words.textarea.setSelectionRange(words.textarea.value.length, words.textarea.value.length);
  clearAbandoned(ABANDONED_S, countdown);
}

// -- opponent ------------------------------------------------------------------------------------

function showOpponent(division, draft) {
  const list = splitWords(draft.text);
  const twice = repeats(list);
  const { button, said } = holdButton(HOLD_MS, () => adjudicate(division, draft));
  const back = () => showChallenger(division, draft);
  // A lexicon of tiles of several letters (Spanish CH...): each word as its tiles, one box a tile, as the board
  // shows it, so that the opponent checks the tiles; else each word as typed, checked letter by letter.
  // A word whose tiles the players stated is shown as stated, its stated boxes marked for the opponent to check.
  const tiles = division.lexicon_view.tiles;
  const statement = tileStatement(division.lexicon_view, draft.saved);
  const wordList = h(
    "ol",
    { class: `check-words${tiles ? " as-tiles" : ""}`, "aria-label": S.words(list.length) },
    list.map((word, index) => {
      const reading = tiles ? statement.chosen(index, word) || shownTiles(word, tiles).tiles : null;
      return tiles
        ? h("li", { "aria-label": reading.join(" ") }, tileWord(word, tiles, reading))
        : h("li", { "aria-label": [...word].join(" ") }, word);
    }),
  );
  const body = h(
    "div",
    { class: "screen-body" },
    h("p", { class: "table-round big" }, S.tableRound(draft.table, draft.round)), // the opponent checks both
    h("p", { class: "word-count big" }, S.words(list.length)),
    wordList,
    twice.length
      ? h("p", { class: "repeated", role: "note" }, twice.map(([w, n]) => S.repeated(w, n)).join(" · "))
      : null,
    h("p", { class: "hint" }, S.opponentHint),
    list.some((word, index) => statement.chosen(index, word)) ? h("p", { class: "hint" }, S.tilesHint) : null,
  );
  const countdown = abandonLine(ABANDONED_S);
  const page = h(
    "section",
    { class: "screen framed opponent" },
    h("header", {}, heading(S.opponentTitle), lexiconBox(division.lexicon_view, false, divisionShown(division))),
    body,
    h(
      "div",
      { class: "screen-foot" },
      said,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", id: "back", onclick: back }, S.back),
        button,
      ),
      h("div", { class: "foot-line" }, countdown, h("p", { id: "hold-keys", class: "hint small" }, S.holdKeys)),
    ),
  );
  // The opponent's hands go straight to the hold (a key carried over from the challenger's Done is ignored).
  show("opponent", page, button);
  const fit = () => fitWords(wordList, body);
  fit();
  listen("resize", fit, window);
  listen("keydown", (event) => {
    if (event.key === "Escape" && freshKey(event)) back();
  });
  clearAbandoned(ABANDONED_S, countdown);
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
    if (asksForTiles(error)) return showPick(division, draft, error.body.details);
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

// The players pick the tiles the board shows for a word the lexicon has as words more than one way; then it is
// judged under that reading (the same request id: nothing was recorded).
function showPick(division, draft, asked) {
  const page = readingPicker(draft.sent || draft.text, asked, {
    onPicked: (sent) => adjudicate(division, { ...draft, sent }),
    onBack: () => showChallenger(division, draft),
  });
  const countdown = abandonLine(ABANDONED_S); // players who walk away leave no challenge on the screen
  page.querySelector(".screen-foot").append(countdown);
  show("pick", page, page.querySelector(".pick-reading"));
  clearAbandoned(ABANDONED_S, countdown);
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
  // A verdict stays its whole time unless a new press clears it: not the key that held the hold (nor its
  // auto-repeat, which starts half a second in), only a key pressed after it was let go, or a tap, completed
  // (its click: the tap then ends on the verdict, and nothing of the idle screen behind it reacts to it).
  const clear = (event) => {
    if (shownFor() < VERDICT_GRACE_MS) return;
    if (event.type === "keydown" && !freshKey(event)) return;
    event.preventDefault();
    goIdle();
  };
  listen("keydown", clear);
  listen("click", clear);
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
  const offline = error.kind === "network";
  const page = h(
    "section",
    { class: "screen failure", role: "alert" },
    heading(S.failedTitle),
    message,
    h("p", { class: "hint" }, offline ? S.retryByItself : S.retryNote),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", id: "discard", onclick: goIdle }, S.discard),
      retry,
    ),
  );
  show("failure", page);
  // The server back (it answers at all): the challenge goes again by itself, with its request id (never recorded
  // twice), as the screen says, unless the players left it.
  if (offline) whenServerAnswers(page, later, RETRY_BACK_MS, () => adjudicate(division, draft));
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
  const name = h("input", { id: "td-name", autocomplete: "off", maxlength: String(state.event.input_rules.max_name) });
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
  clearAbandoned(SETTINGS_S);
}

function showSettings(td) {
  const enrolledFor = state.me?.division;
  const current = localStorage.getItem(DIVISION_KEY) || "";
  const options = [
    ["", S.allDivisions],
    ...divisions().map((d) => [d.name, S.divisionOption(d.name, d.lexicon_view.shown_name)]),
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
  clearAbandoned(SETTINGS_S);
}

boot();
