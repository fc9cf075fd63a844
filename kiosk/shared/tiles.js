// Tiles, where a tile can be several letters (Spanish CH, LL, RR; Catalan L·L, NY, QU; Welsh NG, LL, RH...):
// the typed letters read as the board's tiles, as the server reads them (wordjudge.words.tiles; both are held
// to the same cases by tests/tile_cases.json), so that the kiosk and the handheld show one box per tile and
// count tiles against the board's 15 squares. `tiles` is a lexicon's tile set as the event serves it
// ({name, tiles, spellings}), or null for a lexicon of plain letters: one letter a tile.

import { normalise } from "./words.js";

const OPEN = "[";
const CLOSE = "]";

const letters = (text) => [...text].length;

// Every way to type a tile, to the tile. A spelling of one letter for another (an accent the set ignores: Catalan
// Ü for U) spells that letter inside a longer tile too: QÜ is the QU tile (as the server's TileSet._tokens).
function tokens(tiles) {
  const map = new Map(tiles.tiles.map((tile) => [tile, tile]));
  const accents = new Map();
  for (const [typed, tile] of Object.entries(tiles.spellings || {})) {
    map.set(normalise(typed), tile);
    if (letters(normalise(typed)) === 1 && letters(tile) === 1) {
      accents.set(tile, [...(accents.get(tile) || []), normalise(typed)]);
    }
  }
  for (const tile of tiles.tiles.filter((tile) => letters(tile) > 1)) {
    let variants = [""];
    for (const char of tile) {
      variants = variants.flatMap((done) => [char, ...(accents.get(char) || [])].map((more) => done + more));
    }
    for (const variant of variants) if (variant !== tile && !map.has(variant)) map.set(variant, tile);
  }
  return map;
}

// The runs of single-letter tiles of a reading, cut where a longer tile stands.
function loose(reading) {
  return reading
    .map((tile) => (letters(tile) === 1 ? tile : "|"))
    .join("")
    .split("|");
}

// The readings of a run a lexicon whose split tiles are `split` can hold: none with the letters of another longer
// tile as separate tiles (all of them, if that leaves none), as the server's TileSet._held.
function held(run, tiles, split) {
  const joined = tiles.tiles.filter((tile) => letters(tile) > 1 && !split.includes(tile));
  const kept = run.filter((reading) => !loose(reading).some((part) => joined.some((tile) => part.includes(tile))));
  return kept.length ? kept : run;
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
// Brackets fix a tile ("[N][G]"); with no tile set, each letter is a tile. Given a lexicon's `split` tiles, only
// the readings its words can hold (the letters of a tile it never splits are that tile).
export function readings(word, tiles, split = null) {
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
      if (split) options = held(options, tiles, split);
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

// The tilings of a typed word the players must choose from, as the board holds it (the server asks the same
// whatever the words' validity): its readings the lexicon's words can hold, if more than one; else [].
export function tilings(word, tiles) {
  if (!tiles?.split?.length) return [];
  const found = readings(word, tiles, tiles.split);
  return found.length > 1 ? found : [];
}

// `reading` (tiles) as text the server reads as these tiles alone: longer tiles in brackets, and the single
// letters that could join into one too ("BA[N][G]OR", "BA[NG]OR"), as the server's TileSet.stated.
export function stated(reading, tiles) {
  const split = tiles.split || [];
  const longer = tiles.tiles.filter((tile) => letters(tile) > 1);
  for (const bracketed of [new Set(), new Set([...split.join("")]), new Set([...longer.join("")]), null]) {
    const text = reading
      .map((tile) => (letters(tile) === 1 && bracketed && !bracketed.has(tile) ? tile : `${OPEN}${tile}${CLOSE}`))
      .join("");
    const back = readings(text, tiles, split);
    if (!bracketed || (back.length === 1 && back[0].join("\u0000") === reading.join("\u0000"))) return text;
  }
  return null; // not reached: every tile in brackets reads one way
}

// What stands between two tiles where a word is written tile by tile (the server's TILE_JOIN).
export const TILE_JOIN = "-";

// Whether a word's tiles matter to whoever reads it: it holds one of the lexicon's `split` tiles, as one tile or
// as its separate letters (Welsh NG, or N then G).
export function tilesMatter(reading, split) {
  if (!split?.length) return false;
  return (
    reading.some((tile) => split.includes(tile)) || loose(reading).some((part) => split.some((t) => part.includes(t)))
  );
}

// A word's tiles as people read them: the letters on the board, or tile by tile where its tiles matter
// ("B-A-NG-O-R"), as the server's shown_word.
export function shownWord(reading, split) {
  return tilesMatter(reading, split) ? reading.join(TILE_JOIN) : reading.join("");
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
