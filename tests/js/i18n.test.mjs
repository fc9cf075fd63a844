// Unit tests of the catalogue formatter (kiosk/shared/i18n.js) and the pages' text table (kiosk/shared/texts.js) with
// node:test, on the shipped catalogues: placeholders, plurals, the pseudo-language, numbers and dates.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  dateOrder,
  datePattern,
  merged,
  parseDate,
  placeholders,
  pluralCategory,
  pseudo,
  pseudoCatalogue,
  speakable,
  translator,
} from "../../kiosk/shared/i18n.js";
import { buildStrings } from "../../kiosk/shared/texts.js";

const read = (lang) => JSON.parse(readFileSync(new URL(`../../kiosk/locales/${lang}.json`, import.meta.url), "utf8"));
const EN = read("en");
const FR = read("fr");
const en = translator(EN, "en");
const fr = translator(merged(EN, FR), "fr");
const qps = translator(pseudoCatalogue(EN), "qps-ploc");
const NNBSP = "\u202f"; // French groups digits with a narrow no-break space

test("placeholders are filled from the params, numbers formatted for the language", () => {
  assert.equal(en.t("ui.tableRound.withRound", { table: "12", round: 3 }), "Table 12, round 3");
  assert.equal(en.t("ui.edition.match", { edition: "ENABLE", n: 172820 }), "matches ENABLE (172,820 words)");
  assert.equal(fr.t("ui.edition.match", { edition: "ENABLE", n: 172820 }), `identique à ENABLE (172${NNBSP}820 mots)`);
  assert.equal(en.formatNumber(1234.5), "1,234.5");
  assert.equal(fr.formatNumber(1234.5), `1${NNBSP}234,5`);
  assert.equal(en.t("ui.tableRound.withRound", { table: "12" }), "Table 12, round {round}"); // a missing param shows
  assert.equal(en.t("ui.no.such.key"), "ui.no.such.key"); // a missing key shows as itself, never as nothing
});

test("plurals follow each language's rule: English one iff n == 1, French one iff 0 <= n < 2", () => {
  assert.deepEqual(
    [0, 1, 1.5, 2].map((n) => pluralCategory(n, "en")),
    ["other", "one", "other", "other"],
  );
  assert.deepEqual(
    [0, 1, 1.5, 2, -1].map((n) => pluralCategory(n, "fr")),
    ["one", "one", "one", "other", "other"],
  );
  assert.deepEqual(
    [0, 1, 2].map((n) => en.t("ui.words", { n })),
    ["0 words", "1 word", "2 words"],
  );
  assert.deepEqual(
    [0, 1, 2].map((n) => fr.t("ui.words", { n })),
    ["0 mot", "1 mot", "2 mots"],
  );
  assert.equal(qps.t("ui.words", { n: 1 }), "⟦1 ŵòŕď⟧");
});

test("the pseudo-language accents every letter, wraps each text in ⟦ ⟧ and keeps the placeholders", () => {
  assert.equal(pseudo("Table {table}"), "⟦Ţàƀľè {table}⟧"); // the contract's own example
  assert.equal(pseudo("abcdefghijklmnopqrstuvwxyz"), "⟦àƀçďèƒĝĥìĵķľɱñòþʠŕšţùṽŵẋýž⟧"); // as base/errors.py does
  assert.equal(pseudo("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), "⟦ÀƁÇĎÈƑĜĤÌĴĶĽṀÑÒÞǪŔŠŢÙṼŴẊÝŽ⟧");
  const catalogue = pseudoCatalogue(EN);
  assert.deepEqual(Object.keys(catalogue), Object.keys(EN));
  for (const [key, value] of Object.entries(catalogue)) {
    const texts = typeof value === "string" ? [value] : Object.values(value);
    for (const text of texts) {
      assert.match(text, /^⟦[^A-Za-z]*(\{[A-Za-z_]+\}[^A-Za-z]*)*⟧$/u, `${key}: ${text}`); // no plain letter left
    }
    assert.deepEqual(placeholders(value), placeholders(EN[key]), key);
  }
  assert.equal(
    qps.t("ui.tableRound.withRound", { table: "T7", round: 2 }),
    "⟦Ţàƀľè T7, ŕòùñď 2⟧", // a parameter (data) stays as it is, inside the brackets
  );
});

test("a server message renders from the catalogue, else its English text (marked in the pseudo-language)", () => {
  const msg = { key: "ui.tableRound.withRound", params: { table: "4", round: 9 } };
  assert.equal(fr.message(msg, "Table 4, round 9"), "Table 4, ronde 9");
  assert.equal(fr.message({ key: "error.not.in.this.copy", params: {} }, "the English text"), "the English text");
  assert.equal(fr.message(undefined, "the English text"), "the English text");
  assert.equal(qps.message({ key: "error.unknown", params: {} }, "the English text"), "⟪the English text⟫");
  assert.equal(qps.message(msg, "x"), "⟦Ţàƀľè 4, ŕòùñď 9⟧");
  // A parameter that is itself a message renders in the same language.
  const nested = { key: "ui.serverRefused", params: { message: { key: "ui.needTable", params: {} } } };
  assert.equal(fr.message(nested, ""), "Le serveur a refusé : Tapez le numéro de table");
});

test("the English texts are those the pages showed before the catalogue", () => {
  const S = buildStrings(en);
  assert.equal(S.words(1), "1 word");
  assert.equal(S.words(3), "3 words");
  assert.equal(S.wordCount(172820), "172,820 words");
  assert.equal(S.verdictLine(1, "4", null), "1 word · table 4");
  assert.equal(S.verdictLine(3, "4", 3), "3 words together · table 4 · round 3");
  assert.equal(S.tableRound("12", ""), "Table 12");
  assert.equal(S.repeated("CAT", 2), "CAT is typed 2 times");
  assert.equal(S.refusedChar("3", "DEMO"), "“3” is not a letter of DEMO");
  assert.equal(S.unsettled("7", "2").slice(0, 44), "The last challenge (table 7, round 2) got no");
  assert.equal(S.settledNote("7", "").slice(0, 34), "The last challenge (table 7) got n");
  assert.equal(S.unverified({ verdict: "other", claimed: "CSW24" }), "UNVERIFIED: not the official CSW24");
  assert.equal(
    S.unverified({ verdict: "unknown_edition", claimed: "CSW99" }),
    "UNVERIFIED: CSW99 is not a known edition",
  );
  assert.equal(S.recentLine(12, "7", 2, "10:04"), "#12 · table 7 · 2 words · 10:04");
  assert.equal(S.console.code("ABCD-EFGH", "x"), "Code ABCD-EFGH, valid until x");
  assert.equal(S.console.done(S.console.kind("reissue"), 3), "reissue recorded as #3");
  assert.equal(S.console.revokeNamed("Runner Ann"), "Revoke Runner Ann");
  assert.equal(S.role("runner"), "handheld"); // one word for the device: the runner is the person
  assert.equal(S.runnerTitle("Ann"), "Paired as Ann");
});

test("dates and times follow the language, on a 24-hour clock", () => {
  const moment = new Date(2026, 10, 24, 9, 5, 3);
  // Day-first unless the event's region writes dates otherwise (tests/test_dates.py: the same as the server).
  assert.equal(en.formatDate(moment), "24/11/2026, 09:05:03");
  assert.equal(fr.formatDate(moment), "24/11/2026 09:05:03");
  assert.equal(qps.formatDate(moment), "24/11/2026, 09:05:03"); // the pseudo-language formats as English
  assert.equal(fr.formatDate(moment, "time"), "09:05:03");
  assert.equal(en.formatDate(moment, "short-time"), "09:05");
  assert.equal(fr.formatPercent(0.5), "50\u00a0%"); // Intl puts a no-break space before % in French
});

test("a date is typed in the order the language shows dates in, and read back in that order", () => {
  assert.deepEqual(dateOrder("en"), ["day", "month", "year", "hour", "minute"]);
  assert.deepEqual(dateOrder("en-US"), ["month", "day", "year", "hour", "minute"]);
  assert.deepEqual(dateOrder("fr"), ["day", "month", "year", "hour", "minute"]);
  const enSymbols = buildStrings(en).console.dateSymbols;
  const frSymbols = buildStrings(fr).console.dateSymbols;
  assert.equal(datePattern("en", enSymbols), "dd/mm/yyyy, hh:mm");
  assert.equal(datePattern("en-US", enSymbols), "mm/dd/yyyy, hh:mm");
  assert.equal(datePattern("fr", frSymbols), "jj/mm/aaaa hh:mm");
  const moment = new Date(2026, 10, 24, 9, 5);
  // What the console shows, typed back (seconds dropped), is the same moment.
  assert.deepEqual(parseDate(en.formatDate(moment, "short-datetime"), "en"), moment);
  assert.deepEqual(parseDate(fr.formatDate(moment, "short-datetime"), "fr"), moment);
  assert.deepEqual(parseDate("24/11/2026", "fr"), new Date(2026, 10, 24));
  assert.deepEqual(parseDate("24/11/2026", "en"), new Date(2026, 10, 24)); // day-first in English too
  assert.equal(parseDate("24/11/2026", "en-US"), null); // no 24th month
  assert.equal(parseDate("24/11/26", "en"), null); // a year has four digits
  assert.equal(parseDate("30/2/2026", "en"), null); // no 30 February
  assert.equal(parseDate("24/11/2026 25:00", "en"), null);
  assert.equal(parseDate("tomorrow", "en"), null);
});

test("every language the server lists is one a page speaks, and no other", () => {
  const rules = JSON.parse(process.env.WORDJUDGE_INPUT_RULES ?? "null");
  assert.ok(rules, "WORDJUDGE_INPUT_RULES must hold the server's input_rules (run through pytest)");
  for (const lang of rules.languages) {
    assert.ok(speakable(lang), lang);
    const tr = translator(EN, lang);
    assert.match(tr.formatDate(new Date(2026, 10, 24, 9, 5, 3)), /^(24\/11\/2026|11\/24\/2026|2026-11-24),? 09:05:03$/);
  }
  for (const lang of ["de", "english", "fr_CA", "", null, "EN"]) assert.equal(speakable(lang), false, String(lang));
});

test("plurals come from Intl, in the catalogues' two forms: a million in French and a negative count are other", () => {
  assert.equal(pluralCategory(1_000_000, "fr"), "other"); // Intl: "many"
  assert.equal(pluralCategory(-1, "en"), "other"); // Intl: "one"
  assert.equal(pluralCategory(1, "en-US"), "one");
  assert.equal(pluralCategory(0, "fr-CA"), "one");
  assert.equal(pluralCategory(1, "qps-ploc"), "one"); // the pseudo-language counts as English
  assert.equal(fr.t("ui.words", { n: 1_000_000 }), `1${NNBSP}000${NNBSP}000 mots`);
});
