// Every word the pages show, in the event's language: this module loads the catalogue
// (kiosk/locales/<lang>.json, the server renders its messages from the same files) before any page
// module runs, and gives it to them as STRINGS (S.start, S.words(n), S.console.tabs.feed...), with
// t(key, params), message(msg, fallback), formatNumber(n) and formatDate(date, style).
//
// The language: the event's (GET /api/event's `language`), remembered by this browser so that a page
// opens in it at once, even before it may read the event (pairing, sign-in, the status page). A page
// that reads another language from the server reloads in it (followLanguage). `?lang=fr` (or
// `?lang=qps-ploc`, the pseudo-language that shows text left out of the catalogue) overrides it for
// this browser tab, for translators and the tests; `?lang=` drops the override.

import {
  DEFAULT_LANGUAGE,
  PSEUDO_LANGUAGE,
  baseLanguage,
  merged,
  pseudoCatalogue,
  speakable,
  translator,
} from "./i18n.js";
import { buildStrings } from "./texts.js";

const REMEMBERED = "wordjudge.language"; // localStorage: the event's language, as last read
const OVERRIDE = "wordjudge.language.override"; // sessionStorage: ?lang= for this tab

function overridden() {
  const asked = new URLSearchParams(location.search).get("lang");
  try {
    if (asked === "") sessionStorage.removeItem(OVERRIDE);
    else if (asked) sessionStorage.setItem(OVERRIDE, asked);
    return sessionStorage.getItem(OVERRIDE);
  } catch {
    return asked || null; // storage refused (a locked-down browser): the link's language for this page only
  }
}

function remembered() {
  try {
    return localStorage.getItem(REMEMBERED);
  } catch {
    return null;
  }
}

const OVERRIDE_LANGUAGE = overridden();
// The language asked for: it decides when to reload (followLanguage), even if its catalogue failed to load.
const ASKED = OVERRIDE_LANGUAGE || remembered() || DEFAULT_LANGUAGE;

async function catalogueFile(lang) {
  const response = await fetch(new URL(`../locales/${lang}.json`, import.meta.url), { cache: "no-cache" });
  if (!response.ok) throw new Error(`${lang}.json: HTTP ${response.status}`);
  return response.json();
}

// The catalogue of the language's base (en-GB speaks from en.json, fr-CA from fr.json); the full tag (en-US)
// decides how dates are written.
async function load(lang) {
  const english = await catalogueFile(DEFAULT_LANGUAGE);
  if (lang === PSEUDO_LANGUAGE) return pseudoCatalogue(english);
  const base = baseLanguage(lang);
  if (base === DEFAULT_LANGUAGE || !speakable(lang)) return english;
  try {
    return merged(english, await catalogueFile(base));
  } catch {
    return english; // a language this copy does not have: English rather than nothing
  }
}

// Chosen before the server answers (the page speaks at once): the event's languages are the server's to list, so
// any tag this copy has the catalogue of is taken (the server only ever names one it accepts).
export const LANGUAGE = speakable(ASKED) ? ASKED : DEFAULT_LANGUAGE;
const tr = translator(await load(LANGUAGE), LANGUAGE);
export const STRINGS = buildStrings(tr);
export const { t, message, formatNumber, formatDate } = tr;

// The event's language, as the server says it: remembered, and the page reloads in it if it is another.
// An override (?lang=) wins; a language this page cannot load is remembered all the same (no reload loop).
let reloadingInto = null; // the language the page is reloading in, once followLanguage has asked for it

// Whether the page is about to reload in another language: a screen shown now would be gone at once.
export function reloading() {
  return reloadingInto !== null;
}

export function followLanguage(language) {
  if (typeof language !== "string" || !language || OVERRIDE_LANGUAGE) return;
  if (language === ASKED) return;
  try {
    localStorage.setItem(REMEMBERED, language);
  } catch {
    return; // cannot remember it: reloading would only come back to the same language
  }
  reloadingInto = language;
  location.reload();
}

// The page's own markup in the language: data-i18n="key" sets an element's text, data-i18n-title (and
// -aria-label, -placeholder, -alt) an attribute; the page title and <html lang> follow.
function translatePage() {
  document.documentElement.lang = LANGUAGE;
  for (const element of document.querySelectorAll("[data-i18n]")) element.textContent = t(element.dataset.i18n);
  for (const name of ["title", "aria-label", "placeholder", "alt"]) {
    for (const element of document.querySelectorAll(`[data-i18n-${name}]`)) {
      element.setAttribute(name, t(element.getAttribute(`data-i18n-${name}`)));
    }
  }
}

if (typeof document !== "undefined") translatePage();
