// How a record stands in its challenge once re-checks, reissues or rulings are linked to it: the verdict that
// leads (the challenge's final verdict, null while a re-check awaits the TD's ruling), and a note on the
// record's own verdict when another record decided ("✗ UNACCEPTABLE: superseded by TD ruling #54"). The
// docket and the runner's recent list say it alike. Pure (no DOM): `S` is the page's STRINGS.

import { verdictText } from "./verdict-words.js";

// Whether `final` (the API's final verdict of the record's challenge) has anything linked to the challenge.
export function linked(final) {
  return Boolean(final && final.linked && final.linked.length);
}

// The verdict to lead with: the final one once records are linked (null: awaiting the TD's ruling), else the
// record's own.
export function leadingVerdict(record, final) {
  return linked(final) ? final.verdict : record.verdict;
}

// The record's own verdict, said as superseded or confirmed by the record that decided, or awaiting the TD's
// ruling; null when nothing is linked or the record itself decided.
export function standingNote(S, record, final) {
  if (!linked(final)) return null;
  const by = final.decided_by;
  const own = verdictText(S, record.verdict);
  if (!by) {
    const waiting = final.awaiting_ruling;
    return S.t("ui.docket.standing.awaiting", { verdict: own, id: String(waiting ? waiting.id : "") });
  }
  if (by.id === record.id) return null;
  const sameWords = record.words.join(" ") === final.words.join(" ");
  const how = record.verdict === final.verdict && sameWords ? "confirmed" : "superseded";
  return S.t(`ui.docket.standing.${how}.${by.kind}`, { verdict: own, id: String(by.id) });
}

// Whether the record's own verdict no longer stands: another record decided otherwise, or a ruling is awaited.
export function superseded(record, final) {
  if (!linked(final)) return false;
  const by = final.decided_by;
  if (!by) return true;
  return by.id !== record.id && (record.verdict !== final.verdict || record.words.join(" ") !== final.words.join(" "));
}
