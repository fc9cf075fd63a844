// The catalogue formatter shared by every page (and unit-tested in Node: nothing here touches the DOM):
// placeholders, plurals, the pseudo-language, numbers and dates in the event's language.
//
// A catalogue is a flat object of dotted keys; a value is a text with {name} placeholders, or a plural
// object {one, other} chosen by the numeric parameter `n`. The server renders the same catalogues
// (server/wordjudge/messages.py): both follow the same rules, and the pseudo-language uses the same letters.

export const LANGUAGES = ["en", "fr", "qps-ploc"];
export const DEFAULT_LANGUAGE = "en";
export const PSEUDO_LANGUAGE = "qps-ploc";

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ACCENTED = [..."àƀçďèƒĝĥìĵķľɱñòþʠŕšţùṽŵẋýžÀƁÇĎÈƑĜĤÌĴĶĽṀÑÒÞǪŔŠŢÙṼŴẊÝŽ"];
const PSEUDO_LETTERS = new Map([...PLAIN].map((letter, i) => [letter, ACCENTED[i]]));
// Text the server sent in English because the catalogue has no key for it: marked in the pseudo-language
// only, so that the screen walk can tell it from text that forgot the catalogue.
export const FALLBACK_OPEN = "⟪";
export const FALLBACK_CLOSE = "⟫";

// The locale Intl formats with: the pseudo-language formats as English.
export function intlLocale(lang) {
  return lang === PSEUDO_LANGUAGE ? DEFAULT_LANGUAGE : lang;
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

// The CLDR plural category of n: "one" or "other" (English: n == 1; French: 0 <= n < 2).
export function pluralCategory(n, lang) {
  if (lang === "fr") return n >= 0 && n < 2 ? "one" : "other";
  return n === 1 ? "one" : "other";
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
  const formats = {
    time: { hour: "2-digit", minute: "2-digit", second: "2-digit" },
    "short-time": { hour: "2-digit", minute: "2-digit" },
    datetime: {
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    },
    "short-datetime": { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" },
  };
  const dates = Object.fromEntries(
    // A 24-hour clock in every language: a tournament's times, as its schedule prints them.
    Object.entries(formats).map(([style, options]) => [
      style,
      new Intl.DateTimeFormat(locale, { ...options, hourCycle: "h23" }),
    ]),
  );

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

  function formatDate(date, style = "datetime") {
    const moment = date instanceof Date ? date : new Date(date);
    return (dates[style] || dates.datetime).format(moment);
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

// The parts of a date and time in the order the language writes them, e.g. ["month", "day", "year", "hour",
// "minute"] in English, ["day", "month", "year", "hour", "minute"] in French, with the text between them.
export function dateParts(lang) {
  const format = new Intl.DateTimeFormat(intlLocale(lang), {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  return format
    .formatToParts(new Date(2031, 10, 23, 13, 45))
    .map((part) => ({ type: part.type, value: part.value }))
    .filter((part) => part.type !== "dayPeriod");
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
