// Unit tests of the kiosk's tile reading (kiosk/shared/tiles.js) with node:test: every typed word of the cases is read
// into the tiles the server reads it into (tests/test_client_modules.py passes the server's readings in
// WORDJUDGE_TILE_CASES), so that the boxes a kiosk shows are the tiles the server judges.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  bracketed,
  readings,
  shownTiles,
  shownWord,
  stated,
  storedTiles,
  tileCount,
  tilings,
  typeable,
} from "../../kiosk/shared/tiles.js";

const cases = JSON.parse(process.env.WORDJUDGE_TILE_CASES ?? "null");
assert.ok(cases?.length, "WORDJUDGE_TILE_CASES must hold the server's readings (run through pytest)");

test("every typed word is read into the tiles the server reads it into, in the same order", () => {
  for (const { tiles, word, readings: expected } of cases) {
    assert.deepEqual(readings(word, tiles), expected, `${word} (${tiles.name})`);
  }
});

test("the tilings a lexicon can hold, how each is stated and shown, are the server's", () => {
  for (const { tiles, word, held, stated: says, shown } of cases) {
    assert.deepEqual(readings(word, tiles, tiles.split), held, `${word} (${tiles.name})`);
    assert.deepEqual(
      held.map((reading) => stated(reading, tiles)),
      says,
      `${word} (${tiles.name})`,
    );
    assert.deepEqual(
      held.map((reading) => shownWord(reading, tiles.split)),
      shown,
      `${word} (${tiles.name})`,
    );
    assert.deepEqual(tilings(word, tiles), held.length > 1 && tiles.split.length ? held : [], word);
  }
});

test("Catalan QÜ is the QU tile; a word the board could hold two ways is asked about, any other is not", () => {
  const catalan = cases.find((c) => c.tiles.name === "catalan").tiles;
  assert.deepEqual(readings("qüestió", catalan), [["QU", "E", "S", "T", "I", "O"]]);
  const welsh = cases.find((c) => c.tiles.name === "welsh").tiles;
  assert.equal(tilings("bangor", welsh).length, 2);
  assert.deepEqual(tilings("llyfr", welsh), []);
  assert.equal(shownWord(["B", "A", "N", "G", "O", "R"], welsh.split), "B-A-N-G-O-R");
  assert.equal(shownWord(["D", "E", "S", "CH", "E"], []), "DESCHE");
});

test("a word is shown as its fewest tiles and counted in them: a 16-letter Spanish word with CH is 15 tiles", () => {
  const spanish = cases.find((c) => c.tiles.name === "spanish").tiles;
  const word = "CHAAAAAAAAAAAAAA"; // C H and 14 A: 16 letters
  assert.equal([...word].length, 16);
  assert.equal(tileCount(word, spanish), 15);
  assert.deepEqual(shownTiles("chico", spanish), { tiles: ["CH", "I", "C", "O"], ambiguous: true });
  assert.equal(tileCount("chico", null), 5);
});

test("a word as the server records it is split into its tiles; a picked reading is typed back in brackets", () => {
  assert.deepEqual(storedTiles("[CH]I[LL]O"), ["CH", "I", "LL", "O"]);
  assert.deepEqual(storedTiles("CO[L·L]EGI"), ["C", "O", "L·L", "E", "G", "I"]);
  assert.deepEqual(storedTiles("ÑU"), ["Ñ", "U"]);
  const welsh = cases.find((c) => c.tiles.name === "welsh").tiles;
  assert.equal(bracketed(["B", "A", "N", "G", "O", "R"]), "[B][A][N][G][O][R]");
  assert.deepEqual(readings(bracketed(["B", "A", "N", "G", "O", "R"]), welsh), [["B", "A", "N", "G", "O", "R"]]);
});

test("the characters a tile set's words may be typed with: its tiles', its spellings', and brackets", () => {
  const catalan = cases.find((c) => c.tiles.name === "catalan").tiles;
  const chars = typeable(catalan);
  for (const char of ["L", "·", ".", "[", "]", "Ç"]) assert.ok(chars.has(char), char);
  assert.ok(!chars.has("K"));
  assert.equal(typeable(null), null);
});
