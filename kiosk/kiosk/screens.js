// The kiosk's screens, one at a time: each replaces the whole page (and with it every typed word), and takes
// its timers and listeners with it. Also what makes a press on a screen deliberate: keys carried over from
// the screen before never count, the opponent's control wants a hold, and a screen left alone clears.

import { h } from "../shared/api.js";
import { STRINGS as S } from "../shared/strings.js";
import { guardTaps } from "../shared/tap-guard.js";
import { flash } from "../shared/ui.js";

const app = document.getElementById("app");
const FIT_STEPS = [1, 0.9, 0.8, 0.7, 0.6, 0.5]; // the opponent's words shrink this far to fit, then scroll
let screen = { timers: [], listeners: [], carried: new Set(), name: "", shownAt: 0 };

// The keys held down now (by code). A key already down when a screen appears is "carried over" onto it
// (Enter held on Done, Space held through the hold and the verdict): it, and its auto-repeat, count on
// that screen only once it has been let go and pressed again.
const keysDown = new Set();
window.addEventListener("keydown", (event) => keysDown.add(event.code), true);
window.addEventListener(
  "keyup",
  (event) => {
    keysDown.delete(event.code);
    screen.carried.delete(event.code);
  },
  true,
);
window.addEventListener("blur", () => keysDown.clear());
// Nor does a held or carried-over Enter or Space press a button (Start, Done, Back...) of a new screen.
document.addEventListener(
  "keydown",
  (event) => {
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement;
    if ((event.key === "Enter" || event.key === " ") && !typing && !freshKey(event)) event.preventDefault();
  },
  true,
);

// A tap belongs to the screen it began on (tap-guard.js).
guardTaps(() => screen);

// A key pressed on this screen: not an auto-repeat, not one held since before the screen appeared.
export function freshKey(event) {
  return !event.repeat && !screen.carried.has(event.code);
}

// Show `element` as the screen `name` (the page's data-screen), with the focus on `focus` or its heading.
export function show(name, element, focus) {
  for (const timer of screen.timers) clearTimeout(timer);
  for (const [target, type, handler] of screen.listeners) target.removeEventListener(type, handler, true);
  screen = { timers: [], listeners: [], carried: new Set(keysDown), name, shownAt: performance.now() };
  app.replaceChildren(element);
  app.dataset.screen = name;
  (focus || element.querySelector("h1, h2"))?.focus();
}

export function screenName() {
  return screen.name;
}

// How long the screen has been shown, in ms.
export function shownFor() {
  return performance.now() - screen.shownAt;
}

// Run `fn` in `ms`, unless the screen is gone by then.
export function later(fn, ms) {
  screen.timers.push(setTimeout(fn, ms));
}

// Listen to `type` on `target` (capturing) while the screen is shown.
export function listen(type, handler, target = document) {
  screen.listeners.push([target, type, handler]);
  target.addEventListener(type, handler, true);
}

// Calls `abandoned` once the screen is left alone for `seconds`: any key, touch or typing restarts the count,
// which `line` (if given: see abandonLine) shows, so that nobody is surprised by a screen that empties
// itself. The time left is read from the clock at each tick: a late tick (a busy machine) never stretches it.
export function clearWhenAbandoned(seconds, abandoned, line = null) {
  let deadline = 0;
  let timer = null;
  const render = (left) => {
    if (!line) return;
    line.textContent = S.abandonIn(left);
    line.classList.toggle("soon", left <= 10);
  };
  const tick = () => {
    const left = Math.ceil((deadline - Date.now()) / 1000);
    if (left <= 0) return abandoned();
    render(left);
    timer = setTimeout(tick, 1000);
    screen.timers.push(timer);
  };
  const restart = () => {
    clearTimeout(timer);
    deadline = Date.now() + seconds * 1000;
    render(seconds);
    timer = setTimeout(tick, 1000);
    screen.timers.push(timer);
  };
  for (const type of ["keydown", "pointerdown", "input"]) listen(type, restart);
  restart();
}

// The line that shows the count of clearWhenAbandoned.
export function abandonLine(seconds) {
  return h("p", { class: "abandon hint small" }, S.abandonIn(seconds));
}

// The opponent's control: `held` runs once it is held for `holdMs` (pointer, or Space or Enter on it).
// No click, key tap, auto-repeat or key carried over from the challenger's screen triggers it; a tap or a
// short press says, in `said`, to keep holding.
export function holdButton(holdMs, held) {
  const button = h(
    "button",
    { type: "button", class: "hold", id: "adjudicate", "aria-describedby": "hold-keys" },
    h("span", { class: "hold-fill", "aria-hidden": "true" }),
    h("span", { class: "hold-label" }, S.hold),
  );
  const said = h("p", { id: "hold-message", class: "message", role: "status" });
  let holding = null;
  let heldKey = null; // the key that holds it, if a key does: letting go of another key does not stop it
  const start = (key = null) => {
    if (holding) return;
    heldKey = key;
    said.textContent = "";
    button.classList.add("holding");
    holding = setTimeout(() => {
      holding = null;
      held();
    }, holdMs);
  };
  const stop = () => {
    if (!holding) return;
    clearTimeout(holding);
    holding = null;
    button.classList.remove("holding");
    flash(said, S.keepHolding); // a tap or a short press: say what the control wants
  };
  button.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    start();
  });
  for (const type of ["pointerup", "pointerleave", "pointercancel"]) button.addEventListener(type, stop);
  button.addEventListener("click", (event) => {
    event.preventDefault(); // a click is not a hold
    if (!holding && event.detail === 0) flash(said, S.keepHolding); // activated without a press (assistive tech)
  });
  button.addEventListener("keydown", (event) => {
    if (event.key !== " " && event.key !== "Enter") return;
    event.preventDefault();
    if (freshKey(event)) start(event.code);
  });
  button.addEventListener("keyup", (event) => {
    if (event.code === heldKey) stop();
  });
  button.addEventListener("blur", stop);
  return { button, said };
}

// Shrinks the opponent's words (never below half their size) until they fit `box` without scrolling; past
// that, `box` scrolls, while the table, the round and the action bar stay where they are.
export function fitWords(list, box) {
  for (const step of FIT_STEPS) {
    list.style.setProperty("--fit", String(step));
    if (box.scrollHeight <= box.clientHeight) return;
  }
}
