// A tap belongs to the screen it began on. The click that ends a press begun on another screen (the tap that
// cleared a verdict, landing on the idle screen behind it; a finger lifted after the hold) reaches nothing, nor
// does a touch that lands in the first TAP_GUARD_MS of a screen (a finger already on its way when the screen
// changed under it).
//
// Nor does the second tap of a double tap, however slowly it comes: a touch that begins within DOUBLE_TAP_MS of
// the end of a tap begun on another screen (the tap that cleared the verdict, or opened this screen) is the same
// gesture's second tap, and so is one within DOUBLE_TAP_MS of a tap that reached nothing (a third tap). Not a
// longer guard on every screen: the rule follows the finger, so a screen changed by a timer takes a deliberate
// tap once TAP_GUARD_MS have passed, and a tap on the screen it began on (a digit, twice) is never held back.
// A hold (a press longer than a tap) is no tap of a double tap: a tap after the hold on Adjudicate clears the
// verdict. A mouse's press is deliberate, and aimed: only the first rule holds for it. A key's click
// (detail 0) has guards of its own (screens.js: freshKey).

export const TAP_GUARD_MS = 400;
// The slowest double click a desktop may be set to is 900 ms (Windows' slowest setting): past it, with room
// for a loaded machine's late events.
export const DOUBLE_TAP_MS = 1000;
const TAP_MS = 500; // a press held longer is a hold (Chromium's long press starts at 500 ms), not a tap

// Guard the page's clicks; `current()` is the screen shown now: an object that is a new one for each screen
// shown, with `shownAt` (performance.now() when it was shown).
export function guardTaps(current) {
  // The last press: the screen it began on, when it began and ended, by what, and whether it reaches nothing.
  let pressed = { on: null, at: 0, upAt: -Infinity, type: "", void: false };
  document.addEventListener(
    "pointerdown",
    (event) => {
      const now = performance.now();
      const screen = current();
      const touch = event.pointerType !== "mouse";
      const last = pressed;
      const lastTap = last.type !== "" && last.type !== "mouse" && last.upAt - last.at < TAP_MS;
      const second = lastTap && now - last.upAt < DOUBLE_TAP_MS && (last.on !== screen || last.void);
      const early = now - screen.shownAt < TAP_GUARD_MS;
      pressed = { on: screen, at: now, upAt: Infinity, type: event.pointerType, void: touch && (second || early) };
    },
    true,
  );
  for (const type of ["pointerup", "pointercancel"]) {
    document.addEventListener(type, () => (pressed.upAt = Math.min(pressed.upAt, performance.now())), true);
  }
  document.addEventListener(
    "click",
    (event) => {
      if (event.detail === 0) return;
      if (pressed.on !== current() || pressed.void) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    },
    true,
  );
}
