// Tiles, where a tile can be several letters (Spanish CH, LL, RR; Catalan L·L, NY, QU; Welsh NG, LL, RH...):
// the typed letters read as the board's tiles, as the server reads them (wordjudge.words.tiles; both are held
// to the same cases by tests/tile_cases.json), so that the kiosk and the handheld show one box per tile and
// count tiles against the board's 15 squares. `tiles` is a lexicon's tile set as the event serves it
// ({name, tiles, spellings}), or null for a lexicon of plain letters: one letter a tile.

import { normalise } from "./words.js";

const OPEN = "[";
const CLOSE = "]";

function tokens(tiles) {
  const map = new Map(tiles.tiles.map((tile) => [tile, tile]));
  for (const [typed, tile] of Object.entries(tiles.spellings || {})) map.set(normalise(typed), tile);
  return map;
}

const TOKENS = new WeakMap(); // a set's tokens, worked out once

function tokensOf(tiles) {
  if (!TOKENS.has(tiles)) TOKENS.set(tiles, tokens(tiles));
  return TOKENS.get(tiles);
}

// Every reading of a run of letters (no brackets) as tiles, fewest tiles first, or null if none.
function runReadings(text, map, longest) {
  const ways = new Map([[text.length, [[]]]]);
  for (let start = text.length - 1; start >= 0; start -= 1) {
    const found = [];
    for (let size = 1; size <= Math.min(longest, text.length - start); size += 1) {
      const tile = map.get(text.slice(start, start + size));
      const rest = ways.get(start + size);
      if (tile !== undefined && rest) for (const more of rest) found.push([tile, ...more]);
    }
    if (found.length) ways.set(start, found.slice(0, 64));
  }
  return ways.get(0) || null;
}

// Every way to read one typed word as tiles (arrays of tiles), fewest tiles first; [] if it cannot be.
// Brackets fix a tile ("[N][G]"); with no tile set, each letter is a tile.
export function readings(word, tiles) {
  const text = normalise(word);
  if (!tiles) return [[...text]];
  const map = tokensOf(tiles);
  const longest = Math.max(...[...map.keys()].map((key) => [...key].length));
  let all = [[]];
  let index = 0;
  while (index < text.length) {
    let options;
    if (text[index] === OPEN) {
      const end = text.indexOf(CLOSE, index);
      const tile = end > 0 ? map.get(text.slice(index + 1, end)) : undefined;
      if (tile === undefined) return [];
      options = [[tile]];
      index = end + 1;
    } else {
      const found = text.indexOf(OPEN, index);
      const end = found < 0 ? text.length : found;
      options = runReadings(text.slice(index, end), map, longest);
      if (!options) return [];
      index = end;
    }
    all = all.flatMap((done) => options.map((more) => [...done, ...more])).slice(0, 64);
  }
  const unique = [...new Map(all.map((reading) => [reading.join("\u0000"), reading])).values()];
  return unique.sort((a, b) => a.length - b.length);
}

// The tiles a typed word is shown as: its reading with the fewest tiles (as the server reads a list's word),
// with `ambiguous` true where the letters can be read otherwise too (the server then decides, or asks).
export function shownTiles(word, tiles) {
  const found = readings(word, tiles);
  return { tiles: found[0] || [...normalise(word)], ambiguous: found.length > 1 };
}

// How many squares a typed word takes: its fewest tiles.
export function tileCount(word, tiles) {
  return shownTiles(word, tiles).tiles.length;
}

// The tiles of a word as the server stores and records it: "[CH]ICO" is CH I C O.
export function storedTiles(word) {
  const found = [];
  for (let index = 0; index < word.length;) {
    if (word[index] === OPEN) {
      const end = word.indexOf(CLOSE, index);
      found.push(word.slice(index + 1, end < 0 ? word.length : end));
      index = end < 0 ? word.length : end + 1;
    } else {
      const char = String.fromCodePoint(word.codePointAt(index));
      found.push(char);
      index += char.length;
    }
  }
  return found;
}

// A reading the players picked, typed so that the server reads it only that way: every tile in brackets.
export function bracketed(tiles) {
  return tiles.map((tile) => `${OPEN}${tile}${CLOSE}`).join("");
}

// The characters a word of `tiles` may be typed with (with brackets, to fix a tile), or null: the lexicon's
// alphabet decides (plain letters).
export function typeable(tiles) {
  if (!tiles) return null;
  const chars = new Set([OPEN, CLOSE]);
  for (const text of [...tiles.tiles, ...Object.keys(tiles.spellings || {})]) {
    for (const char of normalise(text)) chars.add(char);
  }
  return chars;
}
