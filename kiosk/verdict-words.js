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

// What gave a challenge its final verdict (`final`: the API's, with records linked to it), as the docket and the
// console's printouts say it: "ruled ACCEPTABLE by alice, #54", or that a re-check awaits the TD's ruling.
export function decidedBy(S, final) {
  const waiting = final.awaiting_ruling;
  if (waiting) return S.docketAwaitingBy(waiting.id, verdictWord(S, waiting.verdict));
  const by = final.decided_by;
  if (by.kind === "ruling") return S.docketDecidedBy.ruling(verdictWord(S, by.verdict), by.actor, by.id);
  if (by.kind === "reissue") return S.docketDecidedBy.reissue(by.id, by.words.join(" "));
  return S.docketDecidedBy[by.kind](by.id);
}
