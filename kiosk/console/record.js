// The TD console's record view: one record with its per-word results (the TD's only), its challenge's
// final verdict and what gave it, its linked records (kind and verdict), and the re-check, reissue and
// ruling forms, each answering where it was used with the new record's verdict. Also the final-verdict mark
// the feed's rows share (a verdict in words: verdict-words.js).

import { h, newRequestId } from "../shared/api.js";
import { STRINGS } from "../shared/strings.js";
import {
  call,
  changeSaid,
  limited,
  problem,
  readSplits,
  recordWordBoxes,
  recordWords,
  timesShown,
  when,
} from "./common.js";
import { verdictMark, verdictText as said, verdictWord, wordsShown } from "../shared/verdict-words.js";

const C = STRINGS.console;
const K = C.columns;

const verdictText = (verdict) => said(STRINGS, verdict);
const bare = (verdict) => verdictWord(STRINGS, verdict);

// What gave a challenge its final verdict, in words: "ruled ACCEPTABLE by alice, #54", "awaiting a ruling:
// re-check #52 gave UNACCEPTABLE"...; null for a challenge nothing was linked to.
export function finalMark(final) {
  if (!final || !final.linked.length) return null;
  const by = final.decided_by;
  if (!by) return C.final.awaiting(final.awaiting_ruling.id, bare(final.awaiting_ruling.verdict));
  if (by.kind === "ruling") return C.final.ruling(bare(by.verdict), by.actor, by.id);
  if (by.kind === "reissue") return C.final.reissue(wordsShown(by.words), bare(by.verdict), by.id);
  if (by.kind === "recheck") return C.final.recheck(by.id);
  return C.final.challenge(by.id);
}

// A console text that texts.js does not shape (added for issue 35): ui.console.<key> with its params.
export const ct = (key, params = {}) => STRINGS.t(`ui.console.${key}`, params);

// The record that superseded `verdict` (a record's own, in the family `final` describes), or null: the final
// verdict was given by another record (a re-check, reissue or ruling) and is not `verdict`. A re-check that
// agreed, a ruling that confirmed, and a challenge awaiting a ruling supersede nothing.
export function supersededBy(final, verdict, id) {
  const by = final?.decided_by;
  if (!by || by.id === id || final.verdict === null || final.verdict === verdict) return null;
  return by;
}

// The final verdict as a feed cell or a record fact shows it: the verdict (or "awaiting a ruling") first, the
// mark saying what gave it, and the record's own verdict marked superseded when it was. `verdict` is the
// record's own, `id` its id.
export function finalVerdict(final, verdict, id = null) {
  const mark = finalMark(final);
  if (!mark) return verdictText(verdict);
  const superseded = supersededBy(final, verdict, id ?? final.challenge_id);
  return h(
    "span",
    { class: "final" },
    h(
      "span",
      { class: final.verdict === null ? "final-verdict awaiting" : "final-verdict" },
      final.verdict === null ? C.final.pending : verdictText(final.verdict),
    ),
    " ",
    h("span", { class: "final-mark" }, `⚑ ${mark}`),
    superseded
      ? [
          " ",
          h(
            "span",
            { class: "superseded" },
            ct("final.superseded"),
            " ",
            h("span", { class: "superseded-verdict" }, verdictText(verdict)),
          ),
        ]
      : null,
  );
}

export function perWord(record) {
  return h(
    "span",
    { class: "results" },
    record.results.map((r) =>
      h(
        "span",
        { class: r.acceptable ? "word-ok" : "word-bad" },
        `${recordWords(record, [r.word])} ${verdictMark(STRINGS, r.acceptable ? "acceptable" : "unacceptable")}${r.source ? ` (${r.source})` : ""}`, // data
      ),
    ),
  );
}

// Show record `id` in `detail` (focusing its title, or the answer to what the TD just did); `open(id)` opens
// another, `close()` closes the view. `answer`: {kind, text} after a re-check, reissue or ruling.
export async function showRecord(detail, id, { open, close }, answer = null) {
  const note = h("p", { class: "message", role: "alert" });
  detail.replaceChildren(note);
  let record;
  try {
    [record] = await Promise.all([call(`/api/challenges/${id}`), readSplits()]);
  } catch (error) {
    return problem(note, error);
  }
  const fact = (label, value) => [h("dt", {}, label), h("dd", {}, value)];
  const reopen = (kind) => (created) => showRecord(detail, id, { open, close }, { kind, text: answerText(created) });
  const link = (target, text) => h("button", { type: "button", class: "link", onclick: () => open(target) }, text);
  if (record.kind === "change") {
    detail.replaceChildren(changeView(record, fact, note, close));
    detail.querySelector("#record-title").focus();
    return;
  }
  const linked = linkedSteps(record);
  detail.replaceChildren(
    h(
      "section",
      { class: "record-view", "aria-labelledby": "record-title", id: "record-view", "data-id": record.id },
      h("h2", { id: "record-title", tabindex: "-1" }, C.record(record.id)),
      record.needs_ruling ? h("p", { class: "needs-ruling", role: "alert" }, C.needsRuling) : null,
      h(
        "dl",
        {},
        fact(K.kind, C.kind(record.kind)),
        fact(K.time, when(record.created_at)),
        fact(K.division, record.division),
        fact(K.round, record.round ?? ""),
        fact(K.table, record.table),
        fact(K.actor, C.actorChannel(record.actor, STRINGS.channel(record.channel))),
        fact(K.words, recordWordBoxes(record)),
        // The final verdict leads; the record's own follows, marked superseded when another record's replaced it.
        record.final && record.final.linked.length
          ? fact(
              C.final.label,
              h("span", { id: "final-verdict" }, finalVerdict(record.final, record.verdict, record.id)),
            )
          : null,
        fact(K.verdict, ownVerdict(record)),
        fact(K.results, perWord(record)),
        fact(K.consequence, STRINGS.message(record.consequence.message, record.consequence.text)),
        fact(K.lexicon, `${record.lexicon} ${record.fingerprint}`),
        record.note ? fact(C.note, record.note) : null,
        record.agrees !== null ? fact(C.agrees, record.agrees ? C.yes : C.no) : null,
        fact(C.chain, C.chainPosition(record.id, record.hash.slice(0, 16), record.prev_hash.slice(0, 16))),
        record.parent_id ? fact(C.parent, link(record.parent_id, `#${record.parent_id}`)) : null,
        linked.length
          ? fact(
              C.children,
              h(
                "ul",
                { class: "linked" },
                linked.map((s) =>
                  h("li", {}, link(s.id, C.linkedStep(C.kind(s.kind), s.id, s.actor, verdictText(s.verdict)))),
                ),
              ),
            )
          : null,
      ),
      h("p", {}, h("a", { href: `/docket?id=${record.id}`, target: "_blank" }, STRINGS.printDocket)),
      record.kind === "challenge" ? actions(record, reopen, answer) : null,
      note,
      h("button", { type: "button", class: "secondary", id: "close-record", onclick: close }, C.closeRecord),
    ),
  );
  (detail.querySelector(".answer") || detail.querySelector("#record-title")).focus();
}

// The record's own verdict; struck through, "superseded by ruling #9", when another record's replaced it.
function ownVerdict(record) {
  const by = supersededBy(record.final, record.verdict, record.id);
  if (!by) return h("span", { id: "record-verdict" }, verdictText(record.verdict));
  return h(
    "span",
    { id: "record-verdict", class: "superseded" },
    h("span", { class: "superseded-verdict" }, verdictText(record.verdict)),
    " ",
    ct("final.supersededBy", { kind: C.kind(by.kind), id: String(by.id) }),
  );
}

// A change record: who changed what, and the state before and after it (no words, verdict or docket).
function changeView(record, fact, note, close) {
  const side = (values) =>
    values === null || values === undefined
      ? C.change.nothing
      : h(
          "ul",
          { class: "change-values" },
          Object.entries(values).map(([key, value]) =>
            h(
              "li",
              {},
              `${C.change.setting(key)}: ${timesShown(Array.isArray(value) ? value.join(" / ") : String(value))}`,
            ),
          ),
        );
  return h(
    "section",
    { class: "record-view", "aria-labelledby": "record-title", id: "record-view", "data-id": record.id },
    h("h2", { id: "record-title", tabindex: "-1" }, C.record(record.id)),
    h(
      "dl",
      {},
      fact(K.kind, C.kind(record.kind)),
      fact(K.time, when(record.created_at)),
      fact(K.actor, C.actorChannel(record.actor, STRINGS.channel(record.channel))),
      record.division ? fact(K.division, record.division) : null,
      fact(C.change.what, h("span", { id: "change-what" }, changeSaid(record))),
      fact(C.change.before, h("div", { id: "change-before" }, side(record.change.before))),
      fact(C.change.after, h("div", { id: "change-after" }, side(record.change.after))),
      fact(C.chain, C.chainPosition(record.id, record.hash.slice(0, 16), record.prev_hash.slice(0, 16))),
    ),
    note,
    h("button", { type: "button", class: "secondary", id: "close-record", onclick: close }, C.closeRecord),
  );
}

// The records linked to this one, with kind and verdict: a challenge's whole family after it; a re-check's,
// reissue's or ruling's own followers. Record ids of links the final verdict does not describe stay bare.
function linkedSteps(record) {
  const steps = record.final ? record.final.linked : [];
  if (record.kind === "challenge") return steps;
  const known = new Map(steps.map((s) => [s.id, s]));
  return record.children.map((id) => known.get(id)).filter(Boolean);
}

// The new record's verdict, said where the TD clicked: "Ruling recorded as #54: ACCEPTABLE, the final verdict".
function answerText(created) {
  const verdict = verdictText(created.verdict);
  if (created.kind === "recheck") return C.answer.recheck(created.id, verdict, created.agrees);
  if (created.kind === "reissue") return C.answer.reissue(created.id, recordWords(created), verdict);
  return C.answer.ruling(created.id, verdict);
}

function actions(record, reopen, answer) {
  const recheckNote = limited(h("input", { id: "recheck-note" }), "max_note");
  const words = h("input", { id: "reissue-words", maxlength: "200" });
  const reason = limited(h("input", { id: "reissue-reason" }), "max_note");
  // No verdict chosen for the TD: a ruling is the TD's own choice, every time (the form starts again so).
  const verdict = h(
    "select",
    { id: "ruling-verdict", required: true },
    h("option", { value: "", selected: true }, ct("rulingChoose")),
    h("option", { value: "acceptable" }, STRINGS.acceptable),
    h("option", { value: "unacceptable" }, STRINGS.unacceptable),
  );
  const rulingNote = limited(h("input", { id: "ruling-note" }), "max_note");
  // Each form answers below its own button: the new record's verdict (success), or why it was refused.
  // `check(note)`: before sending, false to send nothing (it said why, or the TD cancelled).
  const form = (kind, title, fields, body, check = async () => true) => {
    const said = answer?.kind === kind;
    const note = h(
      "p",
      said
        ? { class: "answer ok", role: "status", tabindex: "-1", id: `answer-${kind}` }
        : { class: "message", role: "alert" },
      said ? answer.text : "",
    );
    return h(
      "form",
      {
        class: `action action-${kind}`,
        novalidate: true, // the form says what is missing, in the event's language
        onsubmit: async (event) => {
          event.preventDefault();
          note.className = "message";
          note.textContent = "";
          if (!(await check(note, event.submitter || event.target.querySelector("button[type=submit]")))) return;
          call(`/api/challenges/${record.id}/${kind}`, {
            method: "POST",
            body: { ...body(), request_id: newRequestId() },
          }).then(reopen(kind), (error) => problem(note, error));
        },
      },
      h("h3", {}, title),
      fields,
      h("button", { type: "submit", class: "primary" }, title),
      note,
    );
  };
  return h(
    "div",
    { class: "actions-grid" },
    form("recheck", C.recheck, [h("label", { for: "recheck-note" }, C.note, recheckNote)], () => ({
      note: recheckNote.value || null,
    })),
    form(
      "reissue",
      C.reissue,
      [h("label", { for: "reissue-words" }, K.words, words), h("label", { for: "reissue-reason" }, C.reason, reason)],
      () => ({ words: words.value, reason: reason.value }),
    ),
    form(
      "ruling",
      C.ruling,
      [
        h("label", { for: "ruling-verdict" }, C.rulingVerdict, verdict),
        h("label", { for: "ruling-note" }, C.note, rulingNote),
      ],
      () => ({ verdict: verdict.value, note: rulingNote.value }),
      async (note, button) => {
        if (!verdict.value) {
          note.textContent = ct("rulingNoVerdict");
          verdict.focus();
          return false;
        }
        // A ruling that changes the final verdict is confirmed first, the change named.
        const now = record.final && record.final.linked.length ? record.final.verdict : record.verdict;
        if (now === null || now === verdict.value) return true;
        const confirmed = await confirmRuling(button, now, verdict.value);
        if (!confirmed) button.focus();
        return confirmed;
      },
    ),
  );
}

// The in-page question before a ruling that changes the final verdict (a modal dialog: Escape or Cancel, which
// has the focus first, records nothing). Never window.confirm: a locked-down browser may not show it. Resolves
// true when the TD confirms.
function confirmRuling(near, from, to) {
  const dialog = h(
    "dialog",
    { id: "ruling-dialog", class: "change-dialog", "aria-labelledby": "ruling-dialog-title" },
    h(
      "form",
      { method: "dialog" },
      h("h2", { id: "ruling-dialog-title" }, C.ruling),
      h(
        "p",
        { id: "ruling-dialog-text", class: "ruling-change" },
        ct("rulingChanges", { from: verdictText(from), to: verdictText(to) }),
      ),
      h(
        "p",
        { class: "dialog-buttons" },
        h(
          "button",
          { type: "submit", value: "cancel", class: "secondary", id: "ruling-cancel", autofocus: true },
          ct("rulingCancel"),
        ),
        h("button", { type: "submit", value: "confirm", class: "primary", id: "ruling-confirm" }, ct("rulingConfirm")),
      ),
    ),
  );
  (near.closest(".record-view") || document.body).append(dialog); // outside the ruling form: forms never nest
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    dialog.showModal();
  });
}
