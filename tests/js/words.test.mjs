// Unit tests of the kiosk's pure input module (kiosk/shared/words.js) with node:test, against the rules the
// server serves (tests/test_client_modules.py passes them in WORDJUDGE_INPUT_RULES).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  isRound,
  isTable,
  normalise,
  refusal,
  refusedTable,
  repeats,
  splitWords,
  tooShort,
} from "../../kiosk/shared/words.js";

const rules = JSON.parse(process.env.WORDJUDGE_INPUT_RULES ?? "null");
assert.ok(rules, "WORDJUDGE_INPUT_RULES must hold the server's input_rules (run through pytest)");
const named = JSON.parse(process.env.WORDJUDGE_INPUT_RULES_NAMED ?? "null"); // an event whose TD names its tables
assert.ok(named, "WORDJUDGE_INPUT_RULES_NAMED must hold the input_rules of an event with named tables");
const ALPHABET = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"];

test("words are split on spaces, commas and new lines, and upper-cased in NFC", () => {
  assert.deepEqual(splitWords("qi, za\njo  "), ["QI", "ZA", "JO"]);
  assert.equal(normalise("e\u0301te\u0301"), "\u00c9T\u00c9");
  assert.equal(normalise("\u0390"), "\u03aa\u0301"); // upper case decomposes it: the second NFC, as the server's
});

test("the normal form is the server's, case by case", () => {
  // WORDJUDGE_NORMAL_CASES: typed texts and the server's normal form of each (wordjudge.words.normal_form.normalise).
  const cases = JSON.parse(process.env.WORDJUDGE_NORMAL_CASES ?? "null");
  assert.ok(cases?.length, "WORDJUDGE_NORMAL_CASES must hold the server's normal forms (run through pytest)");
  for (const [typed, server] of cases) assert.equal(normalise(typed), server, JSON.stringify(typed));
  assert.ok(cases.some(([typed, server]) => typed.normalize("NFC").toUpperCase() !== server)); // the second NFC matters
});

test("a character outside the alphabet is refused as typed, naming it", () => {
  assert.deepEqual(refusal("CAT3", ALPHABET, rules), { char: "3" });
  assert.equal(refusal("cat, dog", ALPHABET, rules), null);
});

test("the word and letter limits are the server's", () => {
  const word = "A".repeat(rules.max_letters);
  assert.equal(refusal(Array(rules.max_words).fill("QI").join(" "), ALPHABET, rules), null);
  assert.deepEqual(
    refusal(
      Array(rules.max_words + 1)
        .fill("QI")
        .join(" "),
      ALPHABET,
      rules,
    ),
    { tooMany: true },
  );
  assert.equal(refusal(word, ALPHABET, rules), null);
  assert.deepEqual(refusal(`${word}A`, ALPHABET, rules), { tooLong: true });
  assert.equal(tooShort(["A".repeat(rules.min_letters)], rules), false);
  assert.equal(tooShort(["A".repeat(rules.min_letters - 1)], rules), true);
});

test("tables and rounds are those the server takes", () => {
  // Tables are numbers, unless the TD names them: a word typed into the table field is no table.
  assert.equal(rules.tables, "numbers");
  for (const table of ["1", "12", "9999"]) assert.equal(isTable(table, rules), true, table);
  for (const table of ["", "0", "012", "10000", "A7", "QUIXOTRY", "-1", "12 ", "7;"])
    assert.equal(isTable(table, rules), false, table);
  for (const table of ["1", "12", "A7", "top-1"]) assert.equal(isTable(table, named), true, table);
  for (const table of ["", "-1", "12 ", "a".repeat(11), "7;"]) assert.equal(isTable(table, named), false, table);
  assert.equal(isRound("1", rules), true);
  assert.equal(isRound(String(rules.max_round), rules), true);
  for (const round of ["0", "01", String(rules.max_round + 1), "2a", ""])
    assert.equal(isRound(round, rules), false, round);
});

test("a character no table label of the event has is refused as typed", () => {
  for (const typed of ["", "1", "12", "0"]) assert.equal(refusedTable(typed, rules), false, typed);
  for (const typed of ["Q", "12a", "1-2", " "]) assert.equal(refusedTable(typed, rules), true, typed);
  for (const typed of ["Q", "top-1", "A7"]) assert.equal(refusedTable(typed, named), false, typed);
  for (const typed of ["7;", "a b"]) assert.equal(refusedTable(typed, named), true, typed);
});

test("words typed more than once are counted", () => {
  assert.deepEqual(repeats(["QI", "ZA", "QI"]), [["QI", 2]]);
});
