// The challenge input rules, as the server applies them (wordjudge.adjudication), checked as typed.

export const MAX_WORDS = 8; // one play forms at most 8 words
export const MIN_LETTERS = 2;
export const MAX_LETTERS = 15; // the board is 15 wide
const SEPARATOR = /[\s,]/u;

export function normalise(text) {
  return text.normalize("NFC").toUpperCase();
}

export function splitWords(text) {
  return normalise(text).split(/[\s,]+/u).filter(Boolean);
}

// What is wrong with the typed text, for refusing it as typed:
// {char} a character outside the alphabet, {tooMany} too many words, {tooLong} a word too long.
export function refusal(text, alphabet) {
  const letters = new Set(alphabet);
  for (const ch of normalise(text)) {
    if (!SEPARATOR.test(ch) && !letters.has(ch)) return { char: ch };
  }
  const words = splitWords(text);
  if (words.length > MAX_WORDS) return { tooMany: true };
  if (words.some((word) => [...word].length > MAX_LETTERS)) return { tooLong: true };
  return null;
}

// Words typed more than once, with their counts: the opponent is shown them.
export function repeats(words) {
  const counts = new Map();
  for (const word of words) counts.set(word, (counts.get(word) || 0) + 1);
  return [...counts].filter(([, n]) => n > 1);
}

export function tooShort(words) {
  return words.some((word) => [...word].length < MIN_LETTERS);
}
