import { shownWord, storedTiles } from "./tiles.js";

// A verdict in words, said one way on every page (the kiosk, the handheld, the docket, the console and its
// printouts): the word (ACCEPTABLE), its mark (✓) and both ("✓ ACCEPTABLE"). Pure (no DOM): `S` is the page's
// STRINGS; `verdict` is a record's ("acceptable" or "unacceptable").

export function verdictWord(S, verdict) {
  return verdict === "acceptable" ? S.acceptable : S.unacceptable;
}

export function verdictMark(S, verdict) {
  return verdict === "acceptable" ? S.acceptableIcon : S.unacceptableIcon;
}

export function verdictText(S, verdict) {
  return `${verdictMark(S, verdict)} ${verdictWord(S, verdict)}`;
}

// Recorded words ("BA[NG]OR") as people read them: letters, or tile by tile where one of the lexicon's `split`
// tiles could be read two ways (tiles.js, shownWord).
export function wordsShown(words, split = []) {
  return words.map((word) => shownWord(storedTiles(word), split)).join(" ");
}

// What gave a challenge its final verdict (`final`: the API's, with records linked to it), as the docket and the
// console's printouts say it: "ruled ACCEPTABLE by alice, #54", or that a re-check awaits the TD's ruling.
// `split`: the split tiles of the challenge's lexicon, for a reissue's words.
export function decidedBy(S, final, split = []) {
  const waiting = final.awaiting_ruling;
  if (waiting) return S.docketAwaitingBy(waiting.id, verdictWord(S, waiting.verdict));
  const by = final.decided_by;
  if (by.kind === "ruling") return S.docketDecidedBy.ruling(verdictWord(S, by.verdict), by.actor, by.id);
  if (by.kind === "reissue") return S.docketDecidedBy.reissue(by.id, wordsShown(by.words, split));
  return S.docketDecidedBy[by.kind](by.id);
}
