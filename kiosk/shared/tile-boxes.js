// Words as tiles on screen, shared by the kiosk, the handheld, the docket and the console: one box a tile, as the
// board shows it; a recorded word as people read it; and the players' statement of the tiles of a word the board
// could hold in more than one way (Welsh NG, or N then G: the lexicon's split tiles), made before anything is
// sent, for every such word whatever its validity (the server asks the same question: wordjudge.words.tile_readings).

import { h } from "./api.js";
import { STRINGS as S } from "./strings.js";
import { shownTiles, shownWord, stated, storedTiles, tilesMatter, tilings } from "./tiles.js";
import { splitWords } from "./words.js";

// `element` told how many letters its word has (--letters), for the styles that fit a long word to the screen
// rather than cut it. (Set through the style object: the pages' CSP refuses style attributes.)
export function sized(element, letters) {
  element.style.setProperty("--letters", String(letters));
  return element;
}

// Tiles as boxes, one a tile. A box of one of the lexicon's `split` tiles, or of its letters as separate tiles,
// is marked: the players stated it (or must), and the opponent checks it against the board.
export function tileBoxes(tiles, split = []) {
  const marked = tilesMatter(tiles, split) ? markedTiles(tiles, split) : new Set();
  return sized(
    h(
      "span",
      { class: "tile-word" },
      tiles.map((tile, index) =>
        h("span", { class: `tile${tile.length > 1 ? " joined" : ""}${marked.has(index) ? " split" : ""}` }, tile),
      ),
    ),
    tiles.length,
  );
}

// The places of `tiles` that are a split tile, or its letters as separate tiles.
function markedTiles(tiles, split) {
  const marked = new Set();
  tiles.forEach((tile, index) => {
    if (split.includes(tile)) marked.add(index);
    for (const whole of split) {
      const parts = [...whole];
      if (parts.every((part, at) => tiles[index + at] === part)) parts.forEach((_, at) => marked.add(index + at));
    }
  });
  return marked;
}

// A typed word as the board's tiles (one a letter, unless the lexicon's `tiles` join letters: Spanish CH is one
// box), as read with the fewest tiles; `reading`: the tiles the players stated, if they did.
export function tileWord(word, tiles = null, reading = null) {
  return tileBoxes(reading || shownTiles(word, tiles).tiles, tiles?.split || []);
}

// A word as the server recorded it ("[CH]ICO"), one box a tile.
export function storedWord(word) {
  return tileBoxes(storedTiles(word));
}

// A recorded word as people read it: the letters on the board (DESENGANCHARIAIS, COL·LEGI), or its tiles as boxes
// where they matter (a split tile: B A NG O R). `split`: its lexicon's split tiles.
export function recordWord(word, split = []) {
  const tiles = storedTiles(word);
  if (tilesMatter(tiles, split)) return h("span", { "aria-label": tiles.join(" ") }, tileBoxes(tiles, split));
  const text = shownWord(tiles, split);
  return sized(h("span", {}, text), [...text].length);
}

// The players' statement of the tiles of a challenge's words, kept as the text is edited: a word's choice stays
// while the same word stands at the same place. `view`: the division's lexicon view (its tiles and split tiles).
export function tileStatement(view, saved = null) {
  const chosen = new Map(saved || []); // "place:word" -> the tiles stated
  const key = (index, word) => `${index}:${word}`;
  const asked = (text) =>
    splitWords(text)
      .map((word, index) => ({ index, word, tilings: tilings(word, view.tiles) }))
      .filter((entry) => entry.tilings.length);
  return {
    asked,
    chosen: (index, word) => chosen.get(key(index, word)) || null,
    choose: (index, word, reading) => chosen.set(key(index, word), reading),
    // The first word asked about whose tiles are not stated yet, or null.
    missing: (text) => asked(text).find(({ index, word }) => !chosen.has(key(index, word))) || null,
    // The words as sent: each stated word as its tiles (BA[N][G]OR), the rest as typed.
    sent: (text) =>
      splitWords(text)
        .map((word, index) => {
          const reading = chosen.get(key(index, word));
          return reading && tilings(word, view.tiles).length ? stated(reading, view.tiles) : word;
        })
        .join(" "),
    saved: () => [...chosen],
  };
}

// For each word of `text` the board could hold in more than one way: its tilings as buttons, the one the players
// tap is the one stated (reachable by keyboard: Tab, then Enter or Space). `changed()` after each choice.
export function statementRows(statement, text, view, changed = () => {}) {
  return statement.asked(text).map(({ index, word, tilings: options }) => {
    const now = statement.chosen(index, word);
    const buttons = options.map((reading) => {
      const pressed = now !== null && now.join(" ") === reading.join(" ");
      const button = h(
        "button",
        {
          type: "button",
          class: "tiling",
          "aria-pressed": String(pressed),
          "aria-label": S.tilingLabel(reading.join(" ")),
          "data-word": String(index + 1),
        },
        tileBoxes(reading, view.tiles.split),
      );
      button.addEventListener("click", () => {
        statement.choose(index, word, reading);
        for (const other of buttons) other.setAttribute("aria-pressed", String(other === button));
        row.classList.add("stated");
        changed();
      });
      return button;
    });
    const row = h(
      "fieldset",
      { class: `tiling-choice${now ? " stated" : ""}` },
      h("legend", {}, S.tilingWord(index + 1, word)),
      buttons,
    );
    return row;
  });
}
