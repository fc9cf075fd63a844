// The catalogue formatter shared by every page (and unit-tested in Node: nothing here touches the DOM):
// placeholders, plurals, the pseudo-language, numbers and dates in the event's language. Plurals, numbers and
// the parts of a date come from the browser's Intl (PluralRules, NumberFormat, DateTimeFormat).
//
// A catalogue is a flat object of dotted keys; a value is a text with {name} placeholders, or a plural
// object {one, other} chosen by the numeric parameter `n`. The server renders the same catalogues
// (server/wordjudge/base/errors.py): both say the same, and the pseudo-language uses the same letters.

// The languages this copy has a catalogue file for (locales/<lang>.json; the pseudo-language is made from
// English). Every language an event may name is the server's to say (GET /api/event: input_rules.languages):
// one with its region (en-US, fr-CA) says the same words as its base language and writes dates the region's
// way (dateOrder). A page picks its language before the server answers (strings.js), from these files.
export const CATALOGUE_LANGUAGES = ["en", "fr", "qps-ploc"];
export const DEFAULT_LANGUAGE = "en";
export const PSEUDO_LANGUAGE = "qps-ploc";
// Dates are day-first (27/11/2026) unless the region writes them otherwise: month-first in the United States,
// ISO (2026-11-27) in Canada. As the server's messages.date_order: every screen, docket and export alike. (Not
// Intl's order: it writes "en" month-first and en-ZA year-first, fr-CH with dots, en-CA with a comma and fr-CA's
// time as "09 h 05": Intl gives the numbers, this table their order and the text between them.)
const DAY_FIRST = ["day", "month", "year"];
const DATE_ORDERS = {
  "en-US": ["month", "day", "year"],
  "en-CA": ["year", "month", "day"],
  "fr-CA": ["year", "month", "day"],
};

// The language whose catalogue `lang` says things from: en for en-GB, fr for fr-CA.
export function baseLanguage(lang) {
  return CATALOGUE_LANGUAGES.includes(lang) ? lang : String(lang).split("-")[0];
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ACCENTED = [..."àƀçďèƒĝĥìĵķľɱñòþʠŕšţùṽŵẋýžÀƁÇĎÈƑĜĤÌĴĶĽṀÑÒÞǪŔŠŢÙṼŴẊÝŽ"];
const PSEUDO_LETTERS = new Map([...PLAIN].map((letter, i) => [letter, ACCENTED[i]]));
// Text the server sent in English because the catalogue has no key for it: marked in the pseudo-language
// only, so that the screen walk can tell it from text that forgot the catalogue.
export const FALLBACK_OPEN = "⟪";
export const FALLBACK_CLOSE = "⟫";

// The locale Intl formats numbers with: the base language (as the server does), the pseudo-language as English.
export function intlLocale(lang) {
  return lang === PSEUDO_LANGUAGE ? DEFAULT_LANGUAGE : baseLanguage(lang);
}

// `text` in the pseudo-language: ⟦ + its letters accented + ⟧, its {placeholders} intact.
export function pseudo(text) {
  const parts = text.split(/(\{[A-Za-z_][A-Za-z0-9_]*\})/);
  const accented = parts.map((part, i) =>
    i % 2 ? part : [...part].map((ch) => PSEUDO_LETTERS.get(ch) ?? ch).join(""),
  );
  return `⟦${accented.join("")}⟧`;
}

// The pseudo-language's catalogue, made from the English one (never a file).
export function pseudoCatalogue(english) {
  return Object.fromEntries(
    Object.entries(english).map(([key, value]) => [
      key,
      typeof value === "string"
        ? pseudo(value)
        : Object.fromEntries(Object.entries(value).map(([form, text]) => [form, pseudo(text)])),
    ]),
  );
}

// Whether `lang` is one a page may speak before the server says which: a well-formed tag whose base language
// has a catalogue here (en, en-GB, fr-CA, qps-ploc; not de, nor "english").
export function speakable(lang) {
  if (typeof lang !== "string" || !lang) return false;
  try {
    const [canonical] = Intl.getCanonicalLocales(lang); // qps-ploc is qps-Ploc to Intl
    return canonical.toLowerCase() === lang.toLowerCase() && CATALOGUE_LANGUAGES.includes(baseLanguage(lang));
  } catch {
    return false; // not a language tag
  }
}

const pluralRules = new Map(); // locale -> Intl.PluralRules

// The CLDR plural category of n, from Intl.PluralRules: "one" or "other" (English: n == 1; French: 0 <= n < 2).
// The catalogues have those two forms: French's "many" (a million) says "other", as does a negative count
// (Intl reads -1 as one), as the server's messages.plural_category says.
export function pluralCategory(n, lang) {
  const locale = intlLocale(lang);
  if (!pluralRules.has(locale)) pluralRules.set(locale, new Intl.PluralRules(locale));
  return n >= 0 && pluralRules.get(locale).select(n) === "one" ? "one" : "other";
}

// The placeholder names a catalogue value uses (every plural form's).
export function placeholders(value) {
  const texts = typeof value === "string" ? [value] : Object.values(value);
  return new Set(texts.flatMap((text) => [...text.matchAll(PLACEHOLDER)].map((m) => m[1])));
}

function isMessage(value) {
  return value !== null && typeof value === "object" && typeof value.key === "string";
}

// A translator for one language: t(key, params), message(msg, fallback), and the number and date formats.
// `catalogue` is the language's (English filled in where it lacks a key: see merged()).
export function translator(catalogue, lang) {
  const locale = intlLocale(lang);
  const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 3 });
  const percent = new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 0 });
  // A date's numbers, two digits each (the year four), 24-hour; placed in the event's order by formatDate.
  const dateNumbers = new Intl.DateTimeFormat(locale, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    numberingSystem: "latn",
  });

  const formatNumber = (n) => numbers.format(n);
  const param = (value) =>
    typeof value === "number" ? formatNumber(value) : isMessage(value) ? message(value) : String(value ?? "");

  // The text of `key` with `params` put in; a key the catalogue lacks shows as itself (tests catch it).
  function t(key, params = {}) {
    let value = catalogue[key];
    if (value === undefined) return key;
    if (typeof value === "object") value = value[pluralCategory(Number(params.n), lang)] ?? value.other;
    return value.replace(PLACEHOLDER, (whole, name) => (name in params ? param(params[name]) : whole));
  }

  // A message the server sent ({key, params}), or its English text where the catalogue lacks the key
  // (a server newer than this page, or one from before messages had keys).
  function message(msg, fallback = "") {
    if (isMessage(msg) && msg.key in catalogue) return t(msg.key, msg.params || {});
    const text = String(fallback ?? "");
    return lang === PSEUDO_LANGUAGE && text ? `${FALLBACK_OPEN}${text}${FALLBACK_CLOSE}` : text;
  }

  // A date and time as the event writes it (dateParts), on a 24-hour clock: datetime, short-datetime (no
  // seconds), time or short-time. The server's messages.format_datetime writes the same text.
  function formatDate(date, style = "datetime") {
    const moment = date instanceof Date ? date : new Date(date);
    const value = Object.fromEntries(
      dateNumbers.formatToParts(moment).map((part) => [part.type, part.value]), // in the page's time zone
    );
    value.year = value.year.padStart(4, "0");
    const seconds = `:${value.second}`;
    const known = ["datetime", "short-datetime", "time", "short-time"].includes(style) ? style : "datetime";
    const withSeconds = known === "datetime" || known === "time";
    const parts = dateParts(lang);
    const shown = known === "time" || known === "short-time" ? parts.slice(-3) : parts;
    const text = shown.map((part) => (part.type === "literal" ? part.value : value[part.type])).join("");
    return withSeconds ? text + seconds : text;
  }

  return {
    lang,
    t,
    message,
    formatNumber,
    formatDate,
    formatPercent: (x) => percent.format(x),
    has: (key) => key in catalogue,
  };
}

// `english` with `own` on top: a key a translation lacks shows in English, never as its key.
export function merged(english, own) {
  return { ...english, ...own };
}

// -- dates typed by people: in the order the language writes them ----------------------------------------

// The parts of a date and time in the order the event writes them, with the text between them: ["day",
// "/", "month", "/", "year", ", ", "hour", ":", "minute"] in English, ["month", ...] in en-US, ["year", "-",
// "month", "-", "day", " ", ...] where dates are ISO (en-CA, fr-CA). A date is shown and typed so.
export function dateParts(lang) {
  const order = DATE_ORDERS[lang] || DAY_FIRST;
  const iso = order[0] === "year";
  const between = iso ? "-" : "/";
  const gap = iso || baseLanguage(lang) === "fr" ? " " : ", ";
  const literal = (value) => ({ type: "literal", value });
  return [
    { type: order[0], value: "" },
    literal(between),
    { type: order[1], value: "" },
    literal(between),
    { type: order[2], value: "" },
    literal(gap),
    { type: "hour", value: "" },
    literal(":"),
    { type: "minute", value: "" },
  ];
}

export function dateOrder(lang) {
  return dateParts(lang)
    .filter((part) => part.type !== "literal")
    .map((part) => part.type);
}

// The pattern a date is typed in, e.g. "mm/dd/yyyy, hh:mm", with each part's letters from `symbols`.
export function datePattern(lang, symbols) {
  return dateParts(lang)
    .map((part) => (part.type === "literal" ? part.value : symbols[part.type]))
    .join("");
}

// A date typed in the language's order (the time may be left out: midnight), as a local Date; null if it
// is not one.
export function parseDate(text, lang) {
  const numbers = String(text).match(/\d+/g) || [];
  const order = dateOrder(lang);
  if (numbers.length !== 3 && numbers.length !== order.length) return null;
  const value = { hour: 0, minute: 0 };
  order.forEach((type, i) => {
    if (i < numbers.length) value[type] = Number(numbers[i]);
  });
  const yearText = numbers[order.indexOf("year")];
  if (!yearText || yearText.length !== 4) return null;
  const date = new Date(value.year, value.month - 1, value.day, value.hour, value.minute);
  const same =
    date.getFullYear() === value.year &&
    date.getMonth() === value.month - 1 &&
    date.getDate() === value.day &&
    date.getHours() === value.hour &&
    date.getMinutes() === value.minute;
  return same ? date : null;
}
