// Unit tests of the kiosk's pure input module (kiosk/words.js) with node:test, against the rules the
// server serves (tests/test_client_modules.py passes them in WORDJUDGE_INPUT_RULES).
import assert from "node:assert/strict";
import { test } from "node:test";

import { isRound, isTable, normalise, refusal, repeats, splitWords, tooShort } from "../../kiosk/words.js";

const rules = JSON.parse(process.env.WORDJUDGE_INPUT_RULES ?? "null");
assert.ok(rules, "WORDJUDGE_INPUT_RULES must hold the server's input_rules (run through pytest)");
const ALPHABET = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"];

test("words are split on spaces, commas and new lines, and upper-cased in NFC", () => {
  assert.deepEqual(splitWords("qi, za\njo  "), ["QI", "ZA", "JO"]);
  assert.equal(normalise("e\u0301te\u0301"), "\u00c9T\u00c9");
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
  for (const table of ["1", "12", "A7", "top-1"]) assert.equal(isTable(table, rules), true, table);
  for (const table of ["", "-1", "12 ", "a".repeat(11), "7;"]) assert.equal(isTable(table, rules), false, table);
  assert.equal(isRound("1", rules), true);
  assert.equal(isRound(String(rules.max_round), rules), true);
  for (const round of ["0", "01", String(rules.max_round + 1), "2a", ""])
    assert.equal(isRound(round, rules), false, round);
});

test("words typed more than once are counted", () => {
  assert.deepEqual(repeats(["QI", "ZA", "QI"]), [["QI", 2]]);
});
