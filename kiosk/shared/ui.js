// Parts shared by the kiosk, the runner's handheld and the TD console: the challenge input with
// its as-typed checks, letter tiles, the lexicon line, the pairing form, passing messages.

import { api, h } from "./api.js";
import { STRINGS as S } from "./strings.js";
import { bracketed, tileCount, typeable } from "./tiles.js";
import { statementRows, tileBoxes, tileStatement, tileWord } from "./tile-boxes.js";
import { isRound, isTable, refusal, splitWords, tooShort } from "./words.js";
import { verdictMark, verdictWord } from "./verdict-words.js";

export { recordWord, sized, storedWord, tileStatement, tileWord } from "./tile-boxes.js";

const MESSAGE_MS = 6000;

// A message that stays long enough to be read, even while typing goes on.
export function flash(element, text) {
  element.stopWatching?.();
  element.textContent = text;
  clearTimeout(element.flashTimer);
  element.flashTimer = setTimeout(() => (element.textContent = ""), MESSAGE_MS);
}

// An error line about what was typed (no table, a word too short, the server's refusal): it stays while the
// text is wrong and goes as soon as an edit in its form fixes it. `now()` says what is wrong now ("" if
// nothing). Another message in the line (an as-typed refusal) ends the watch.
export function problemLine(element, text, now) {
  element.stopWatching?.();
  clearTimeout(element.flashTimer);
  element.textContent = text;
  const form = element.closest("form");
  if (!form) return;
  const check = () => {
    if (element.textContent === text && now() === text) return;
    if (element.textContent === text) element.textContent = "";
    stop();
  };
  const stop = () => {
    form.removeEventListener("input", check);
    element.stopWatching = null;
  };
  form.addEventListener("input", check);
  element.stopWatching = stop;
}

// A wait the server asked for (a rate limit's retry_after, in seconds), counted down in `element` as
// `text(seconds left)`; `done()` runs when it is over, unless the screen was left meanwhile.
export function countDown(element, seconds, text, done) {
  let left = Math.max(1, Math.ceil(seconds));
  element.textContent = text(left);
  const timer = setInterval(() => {
    if (!element.isConnected) return clearInterval(timer);
    left -= 1;
    if (left > 0) return (element.textContent = text(left));
    clearInterval(timer);
    done();
  }, 1000);
}

// How long the server asks a device to wait after a refusal (a 429's retry_after), in seconds; 0 if it did not.
export function retryAfter(error) {
  return error.kind === "rate_limited" ? Number(error.body?.details?.retry_after) || 0 : 0;
}

export function heading(text, level = "h1") {
  return h(level, { tabindex: "-1" }, text);
}

// A lexicon as screens show it: name (DEMO for the demo), UNVERIFIED badges, and on a detail line of its
// own the word count and the word-list ID (the short fingerprint, explained where a pointer rests on it).
// `division`, when given, leads: where an event has several divisions, the pair sees which one they are in.
export function lexiconBox(view, large = true, division = null) {
  return h(
    "div",
    { class: `lexicon${large ? " large" : ""}` },
    division ? h("span", { class: "lexicon-division" }, S.divisionName(division)) : null,
    h("span", { class: "lexicon-name" }, view.shown_name),
    view.demo ? h("span", { class: "badge demo" }, S.demoNote) : null,
    unverifiedBadges(view.unverified),
    h(
      "span",
      { class: "lexicon-facts", title: S.fingerprintExplain },
      `${S.wordCount(view.word_count)} · ${S.fingerprint(view.short_fingerprint)}`,
    ),
  );
}

// One badge per edition a lexicon's names claim and its words are not ("UNVERIFIED: not the official
// CSW24"): the TD forced it in, and every screen that shows the lexicon says so.
export function unverifiedBadges(claims) {
  return (claims || []).map((claim) =>
    h("span", { class: "badge unverified", title: S.unverifiedExplain }, S.unverified(claim)),
  );
}

// A word's squares, for a lexicon's `tiles` (null: its letters).
export function squares(tiles) {
  return (word) => tileCount(word, tiles);
}

// The words box: refuses, as typed, characters outside the lexicon's alphabet and the event's word and
// letter limits (`rules`: the event's input_rules), and shows the words back as tiles with their count. A word the
// board could hold in more than one way is asked about (`choices`): the players tap the tiles the board shows,
// kept in `statement` (`saved`: an earlier statement of the same draft).
export function wordsField(view, rules, text = "", saved = null) {
  const textarea = h("textarea", {
    id: "words",
    name: "words",
    rows: "2",
    autocomplete: "off",
    autocapitalize: "characters",
    spellcheck: "false",
    "aria-describedby": "word-message word-count",
  });
  textarea.value = text;
  const message = h("p", { id: "word-message", class: "message", role: "alert" });
  const count = h("p", { id: "word-count", class: "word-count" });
  const tiles = h("div", { class: "tiles", "aria-hidden": "true" });
  const statement = tileStatement(view, saved);
  const choices = h("div", { class: "tiling-choices" });
  let lastGood = textarea.value;
  const preview = () => {
    const list = splitWords(textarea.value);
    tiles.replaceChildren(...list.map((word, index) => tileWord(word, view.tiles, statement.chosen(index, word))));
  };
  const render = () => {
    const list = splitWords(textarea.value);
    count.textContent = list.length ? S.words(list.length) : S.noWordsYet;
    preview();
    const rows = view.tiles ? statementRows(statement, textarea.value, view, preview) : [];
    choices.replaceChildren(...(rows.length ? [h("p", { class: "hint" }, S.tilingHint), ...rows] : []));
  };
  textarea.addEventListener("input", () => {
    const refused = refusal(textarea.value, typeable(view.tiles) || view.alphabet, rules, squares(view.tiles));
    if (refused) {
      const caret = Math.max(0, textarea.selectionStart - (textarea.value.length - lastGood.length));
      textarea.value = lastGood;
      textarea.setSelectionRange(caret, caret);
      flash(
        message,
        refused.char
          ? S.refusedChar(refused.char, view.shown_name)
          : refused.tooMany
            ? S.tooManyWords(rules.max_words)
            : view.tiles
              ? S.tooLongTiles(rules.max_letters)
              : S.tooLong(rules.max_letters),
      );
      return;
    }
    lastGood = textarea.value;
    render();
  });
  render();
  return {
    label: h("label", { for: "words", class: "words-label" }, S.wordsLabel),
    textarea,
    message,
    count,
    tiles,
    choices,
    statement,
    setText(value) {
      textarea.value = value;
      lastGood = value;
      render();
    },
  };
}

// What is wrong with a challenge about to be sent, or null (the server checks again): {field} the first
// box at fault in the order they are typed ("words", "table", "round"), and {text} what is wrong, in words.
// `event`: its input_rules, and whether its challenges carry a round (the server refuses one without);
// `tiles`: the division's lexicon's tile set, if it has one (words are then counted in tiles).
export function draftFault(event, table, round, text, tiles = null) {
  const rules = event.input_rules;
  const list = splitWords(text);
  if (!list.length) return { field: "words", text: S.needWords };
  if (tooShort(list, rules, squares(tiles))) {
    return { field: "words", text: tiles ? S.tooShortTiles(rules.min_letters) : S.tooShort(rules.min_letters) };
  }
  if (!isTable(table, rules)) {
    const rule = rules.tables === "numbers" ? S.tableNumberRule(rules.max_table) : S.tableRule;
    return { field: "table", text: table ? rule : S.needTable };
  }
  if (event.rounds && !round) return { field: "round", text: S.needRound };
  if (round && !isRound(round, rules)) return { field: "round", text: S.roundRule };
  return null;
}

// What is wrong with a challenge about to be sent, in words, or "" (see draftFault).
export function draftProblem(event, table, round, text, tiles = null) {
  return draftFault(event, table, round, text, tiles)?.text || "";
}

// The pairing form of an unenrolled device; calls onEnrolled(token, device) once it has its token.
// `role`: the device's (kiosk, runner), for the command the hint names.
export function pairForm({ title, role, button = S.pair, code = "", message = "", onEnrolled }) {
  const input = h("input", {
    id: "pair-code",
    name: "code",
    autocomplete: "off",
    autocapitalize: "characters",
    spellcheck: "false",
    maxlength: "20",
    value: code,
    "aria-describedby": "pair-message",
  });
  const note = h("p", { id: "pair-message", class: "message", role: "alert" }, message);
  const form = h(
    "form",
    {
      class: "screen pair",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const enrolled = await api("/api/enrol", { method: "POST", body: { code: input.value } });
          await onEnrolled(enrolled.token, enrolled);
        } catch (error) {
          note.textContent = error.kind === "network" ? S.unreachable : error.message;
        }
      },
    },
    heading(title),
    h("p", { class: "pair-hint" }, S.pairHint(role)),
    h("label", { for: "pair-code" }, S.pairCode),
    input,
    note,
    h("button", { type: "submit", class: "primary" }, button),
  );
  return { form, input };
}

// The round the TD set as under way, as a round field shows it ("" if none, or if the event has no rounds).
export function currentRound(event) {
  return event?.rounds && event.current_round != null ? String(event.current_round) : "";
}

// The table number, and the round if the event uses rounds (then required: the server refuses a challenge
// without one). A new challenge's round is the TD's current round, never the last challenge's.
// Required by aria-required, not the required attribute: a missing table is told by the page's own error
// line (draftProblem), never by the browser's validation bubble.
export function tableRoundFields(rounds, table = "", round = "") {
  const tableInput = h("input", {
    id: "table",
    name: "table",
    inputmode: "numeric",
    autocomplete: "off",
    maxlength: "10",
    value: table,
    "aria-required": "true",
  });
  const roundInput = rounds
    ? h("input", {
        id: "round",
        name: "round",
        inputmode: "numeric",
        autocomplete: "off",
        maxlength: "3",
        value: round,
        "aria-required": "true",
      })
    : null;
  const fields = h(
    "div",
    { class: "fields" },
    h("label", { for: "table" }, S.table, tableInput),
    roundInput ? h("label", { for: "round" }, S.round, roundInput) : null,
  );
  return {
    fields,
    tableInput,
    roundInput,
    table: () => tableInput.value.trim(),
    round: () => (roundInput ? roundInput.value.trim() : ""),
  };
}

// Send a challenge; a retry passes the same draft, so the same request id: never recorded twice.
export function submitChallenge(token, divisionName, draft) {
  // The words with the tiles the players stated (BA[N][G]OR), else as typed.
  const body = {
    division: divisionName,
    table: draft.table,
    words: draft.sent || draft.text,
    request_id: draft.requestId,
  };
  if (draft.round) body.round = Number(draft.round);
  return api("/api/challenges", { method: "POST", body, token });
}

// The verdict as kiosk and handheld show it: icon, word and colour, never which word failed.
// Each page adds its own: `middle` under the heading, `facts` before the id, `after` at the end.
export function verdictPanel(record, { middle = [], facts = [], after = [] } = {}) {
  const ok = record.verdict === "acceptable";
  const time = S.formatDate(record.created_at, "time");
  return h(
    "section",
    { class: `screen verdict ${ok ? "acceptable" : "unacceptable"}`, role: "alert" },
    h("p", { class: "verdict-icon", "aria-hidden": "true" }, verdictMark(S, record.verdict)),
    heading(verdictWord(S, record.verdict)),
    middle,
    h("p", { class: "verdict-words" }, S.verdictLine(record.word_count, record.table, record.round)),
    h("p", { class: "consequence" }, S.message(record.consequence.message, record.consequence.text)),
    facts,
    h("p", { class: "verdict-facts" }, S.challengeId(record.id, time), record.replayed ? ` ${S.replayed}` : ""),
    after,
  );
}

// What a kiosk or handheld says of a challenge left without a clear answer that the server cannot settle now:
// its title, which challenge, and why (the server unreachable, or its refusal).
export function unsettledLines(pending, error) {
  return [
    heading(S.unsettledTitle),
    h("p", { class: "failure-message" }, S.unsettled(pending.table, pending.round)),
    h("p", { class: "hint" }, error.kind === "network" ? S.unreachable : S.serverRefused(error.message)),
  ];
}

// Calls `then` once the server answers at all (its health check, well or not), asking every `ms` with
// `schedule` (the screen's own timer: it stops with the screen), as long as `page` is still shown.
export function whenServerAnswers(page, schedule, ms, then) {
  schedule(async () => {
    try {
      await api("/api/health", { timeoutMs: 2500 });
    } catch (error) {
      if (error.kind === "network") return page.isConnected && whenServerAnswers(page, schedule, ms, then);
    }
    if (page.isConnected) then();
  }, ms);
}

// A challenge the server could not judge as typed: a word whose letters are words as tiles more than one way
// (Welsh NG, or N then G). `asked` (the error's details): each word read more than one way, with its readings.
// The players pick the tiles the board shows for each; onPicked(text) gets the words typed again with the
// picked tiles in brackets (so the server reads them only that way), onBack goes back to the typing.
export function readingPicker(text, asked, { onPicked, onBack }) {
  const picked = new Map();
  const send = h("button", { type: "button", class: "primary", id: "pick-send", disabled: true }, S.pickSend);
  const words = asked.map(({ position, typed, readings }) =>
    h(
      "fieldset",
      { class: "pick-word" },
      h("legend", {}, S.pickWord(position, typed)),
      readings.map((reading, index) => {
        const option = h(
          "button",
          {
            type: "button",
            class: "pick-reading",
            "aria-pressed": "false",
            "aria-label": reading.join(" "),
            "data-reading": String(index),
          },
          tileBoxes(reading),
        );
        option.addEventListener("click", () => {
          picked.set(position, reading);
          for (const other of option.parentElement.querySelectorAll(".pick-reading")) {
            other.setAttribute("aria-pressed", String(other === option));
          }
          send.disabled = picked.size < asked.length;
        });
        return option;
      }),
    ),
  );
  send.addEventListener("click", () => {
    const list = splitWords(text).map((word, index) => {
      const reading = picked.get(index + 1);
      return reading ? bracketed(reading) : word;
    });
    onPicked(list.join(" "));
  });
  return h(
    "section",
    { class: "screen framed pick" },
    h("header", {}, heading(S.pickTitle)),
    h("div", { class: "screen-body" }, h("p", { class: "hint" }, S.pickHint), words),
    h(
      "div",
      { class: "screen-foot" },
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", id: "pick-back", onclick: onBack }, S.back),
        send,
      ),
    ),
  );
}

// Whether the server's refusal asks the players which tiles a word is (see readingPicker).
export function asksForTiles(error) {
  return error.kind === "invalid" && error.body?.code === "ambiguous_tiles" && Array.isArray(error.body.details);
}
