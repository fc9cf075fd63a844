// Unit tests of the one module that says a verdict in words (kiosk/shared/verdict-words.js) and of how a record stands
// in its challenge (kiosk/shared/standing.js), with node:test, on the shipped catalogues.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { merged, translator } from "../../kiosk/shared/i18n.js";
import { standingNote } from "../../kiosk/shared/standing.js";
import { buildStrings } from "../../kiosk/shared/texts.js";
import { decidedBy, verdictMark, verdictText, verdictWord } from "../../kiosk/shared/verdict-words.js";

const read = (lang) => JSON.parse(readFileSync(new URL(`../../kiosk/locales/${lang}.json`, import.meta.url), "utf8"));
const EN = read("en");
const S = buildStrings(translator(EN, "en"));
const F = buildStrings(translator(merged(EN, read("fr")), "fr"));

test("a verdict is said one way: its word, its mark, and both", () => {
  assert.equal(verdictWord(S, "acceptable"), "ACCEPTABLE");
  assert.equal(verdictWord(S, "unacceptable"), "UNACCEPTABLE");
  assert.equal(verdictMark(S, "acceptable"), "✓");
  assert.equal(verdictMark(S, "unacceptable"), "✗");
  assert.equal(verdictText(S, "acceptable"), "✓ ACCEPTABLE");
  assert.equal(verdictText(S, "unacceptable"), "✗ UNACCEPTABLE");
  assert.equal(verdictText(F, "acceptable"), `✓ ${F.acceptable}`); // in the event's language
});

const step = (id, kind, verdict, more = {}) => ({ id, kind, verdict, actor: "alice", words: ["QI"], ...more });

test("what gave a final verdict is said alike on the docket and the console's printouts", () => {
  const ruled = { verdict: "acceptable", decided_by: step(54, "ruling", "acceptable"), awaiting_ruling: null };
  assert.equal(decidedBy(S, ruled), S.docketDecidedBy.ruling("ACCEPTABLE", "alice", 54));
  const awaiting = { verdict: null, decided_by: null, awaiting_ruling: step(52, "recheck", "unacceptable") };
  assert.equal(decidedBy(S, awaiting), S.docketAwaitingBy(52, "UNACCEPTABLE"));
  const reissued = {
    verdict: "unacceptable",
    decided_by: step(53, "reissue", "unacceptable", { words: ["ZA", "QI"] }),
  };
  assert.equal(decidedBy(S, reissued), S.docketDecidedBy.reissue(53, "ZA QI"));
  const rechecked = { verdict: "acceptable", decided_by: step(55, "recheck", "acceptable") };
  assert.equal(decidedBy(S, rechecked), S.docketDecidedBy.recheck(55));
});

test("a record's own verdict, superseded by another, is said with the same words", () => {
  const record = step(50, "challenge", "unacceptable");
  const final = {
    verdict: "acceptable",
    words: ["QI"],
    decided_by: step(54, "ruling", "acceptable"),
    awaiting_ruling: null,
    linked: [step(54, "ruling", "acceptable")],
  };
  const note = standingNote(S, record, final);
  assert.equal(note, S.t("ui.docket.standing.superseded.ruling", { verdict: "✗ UNACCEPTABLE", id: "54" }));
  assert.equal(standingNote(S, record, { ...final, linked: [] }), null); // nothing linked: nothing to say
});
