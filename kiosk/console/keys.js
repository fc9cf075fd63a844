// The console's keys and its privacy at the TD's table: F9 hides the per-word results and the record view
// (players walk past the TD's laptop) and shows them again; they hide by themselves after a minute without
// input; "/" comes to the live feed's search box from any tab, and so does a docket's QR code that a USB scanner
// types while no field has the focus. F9 types nothing, so it works in a field too.

import { h } from "../shared/api.js";
import { STRINGS } from "../shared/strings.js";

const C = STRINGS.console;
export const PRIVACY_KEY = "F9";
export const IDLE_MS = 60_000;
// What a docket's QR code starts with (console/records.js reads the rest).
const SCAN_PREFIX = "wordjudge:challenge:";

let idle = null;

const isHidden = () => document.body.classList.contains("private");
const label = (hidden) => (hidden ? C.privacy.show : C.privacy.hide);

export function setHidden(hidden) {
  document.body.classList.toggle("private", hidden);
  for (const button of document.querySelectorAll(".privacy-toggle")) button.textContent = label(hidden);
}

let signedIn = () => false;

function rearm() {
  clearTimeout(idle);
  idle = setTimeout(() => signedIn() && setHidden(true), IDLE_MS);
}

function isTextField(element) {
  return Boolean(element?.closest?.("input, textarea, select, [contenteditable]"));
}

// The header's switch, saying what it does now.
export function privacyButton() {
  return h(
    "button",
    { type: "button", class: "secondary privacy-toggle", id: "privacy", onclick: () => setHidden(!isHidden()) },
    label(isHidden()),
  );
}

// What the console says while they are hidden (app.css shows it then only).
export function privacyNote() {
  return h("p", { class: "private-note", id: "private-note", role: "status" }, C.privacy.hidden);
}

// Once per page: F9, "/" and a scan (`search(text)` opens the feed's search box holding `text`; false while
// signed out) and the idle timer (which hides nothing while `active()` is false: the sign-in screen shows nothing
// to hide).
export function installKeys(search, active) {
  let typed = ""; // the last keys typed outside a field: a scanner's, once they end with SCAN_PREFIX
  signedIn = active;
  for (const name of ["keydown", "pointerdown", "pointermove", "wheel", "touchstart"]) {
    document.addEventListener(name, rearm, { capture: true, passive: true });
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === PRIVACY_KEY) {
      event.preventDefault();
      setHidden(!isHidden());
      return;
    }
    if (event.key === "/" && !isTextField(event.target) && search("")) {
      event.preventDefault();
      return;
    }
    // A scan with the focus on a button or a row (Enter would press it): the rest of the scan goes to the box.
    if (event.key === "Shift") return; // a scanner's ":" comes with it
    if (isTextField(event.target) || event.key.length !== 1) {
      typed = "";
      return;
    }
    typed = (typed + event.key).slice(-SCAN_PREFIX.length);
    if (typed.toLowerCase() === SCAN_PREFIX && search(typed)) {
      event.preventDefault();
      typed = "";
    }
  });
  rearm();
}
