// The kiosk's challenge, screen by screen (WESPA 3.10.4, ASPA 10.3): the challenger types the words, the opponent
// checks them and holds "Adjudicate", both see the one verdict, and it clears; a challenge that got no clear
// answer is settled with the server before the next starts, and one that failed goes again with its request id.

import { h, newRequestId } from "../shared/api.js";
import { refusedOutright, settle } from "../shared/pending.js";
import { STRINGS as S } from "../shared/strings.js";
import { shownTiles } from "../shared/tiles.js";
import {
  asksForTiles,
  countDown,
  currentRound,
  draftFault,
  draftProblem,
  flash,
  heading,
  lexiconBox,
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
import { refusedTable, repeats, splitWords } from "../shared/words.js";
import { abandonLine, fitWords, freshKey, holdButton, later, listen, show, shownFor } from "./screens.js";
import { ABANDONED_S, PENDING, clearAbandoned, divisionShown, divisions, go, state } from "./state.js";

const RETRY_BACK_MS = 3000; // how often the failure screen asks whether the server is back
const HOLD_MS = 1200; // how long the opponent holds "Adjudicate"
const VERDICT_GRACE_MS = 500; // presses this soon after a verdict appears do not clear it

// -- challenger ----------------------------------------------------------------------------------

// A new challenge starts only once the last one that got no clear answer is settled with the server.
export async function startChallenge(division) {
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
    if (error.kind === "unauthorized") return go.refused();
    const page = h(
      "section",
      { class: "screen failure", role: "alert" },
      ...unsettledLines(pending, error),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", onclick: go.idle }, S.back),
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
      h("button", { type: "button", class: "secondary cancel", id: "cancel", onclick: go.idle }, S.cancel),
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
      else if (at === 0 && !words.textarea.value.trim() && !place.table()) go.idle(); // nothing typed: step out
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
    if (error.kind === "unauthorized") return go.refused();
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
    if (left <= 0) return go.idle();
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
    go.idle();
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
      h("button", { type: "button", class: "secondary", id: "discard", onclick: go.idle }, S.discard),
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
