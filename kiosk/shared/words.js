// The challenge input rules, checked as typed. `rules` is the event's `input_rules` (GET /api/event):
// the limits as the server applies them, never restated here.

const SEPARATOR = /[\s,]/u;

// NFC, upper case, NFC again, as the server's normal form (wordjudge.words.normal_form.normalise): upper case can
// leave a letter decomposed (ΐ becomes Ι, diaeresis, acute), which the second NFC composes (Ϊ, acute).
export function normalise(text) {
  return text.normalize("NFC").toUpperCase().normalize("NFC");
}

export function splitWords(text) {
  return normalise(text)
    .split(/[\s,]+/u)
    .filter(Boolean);
}

// How many squares a word takes: one a letter, unless the lexicon's tiles say otherwise (tiles.js, tileCount).
const LETTERS = (word) => [...word].length;

// What is wrong with the typed text, for refusing it as typed:
// {char} a character outside the alphabet, {tooMany} too many words, {tooLong} a word too long.
// `alphabet`: the characters words may be typed with; `count`: a word's squares.
export function refusal(text, alphabet, rules, count = LETTERS) {
  const letters = new Set(alphabet);
  for (const ch of normalise(text)) {
    if (!SEPARATOR.test(ch) && !letters.has(ch)) return { char: ch };
  }
  const words = splitWords(text);
  if (words.length > rules.max_words) return { tooMany: true };
  if (words.some((word) => count(word) > rules.max_letters)) return { tooLong: true };
  return null;
}

// Words typed more than once, with their counts: the opponent is shown them.
export function repeats(words) {
  const counts = new Map();
  for (const word of words) counts.set(word, (counts.get(word) || 0) + 1);
  return [...counts].filter(([, n]) => n > 1);
}

export function tooShort(words, rules, count = LETTERS) {
  return words.some((word) => count(word) < rules.min_letters);
}

// Whether `table` is a table label the server takes.
export function isTable(table, rules) {
  return new RegExp(`^(?:${rules.table_pattern})$`, "u").test(table);
}

// Whether the table field's text holds a character no table label of the event has (a letter where tables
// are numbers): refused as typed, so that words typed into the wrong field never become a table.
export function refusedTable(text, rules) {
  return !new RegExp(`^(?:${rules.table_chars})*$`, "u").test(text);
}

// Whether `round` (as typed) is a round number the server takes.
export function isRound(round, rules) {
  return /^[1-9][0-9]*$/u.test(round) && Number(round) <= rules.max_round;
}
