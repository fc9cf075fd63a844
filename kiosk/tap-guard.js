// A tap belongs to the screen it began on. The click that ends a press begun on another screen (the tap that
// cleared a verdict, landing on the idle screen behind it; a finger lifted after the hold) reaches nothing, nor
// does a touch that lands in the first TAP_GUARD_MS of a screen (a finger already on its way when the screen
// changed under it: the second tap of a double tap). A mouse's press is deliberate, and aimed: only the first
// rule holds for it. A key's click (detail 0) has guards of its own (screens.js: freshKey).

export const TAP_GUARD_MS = 400;

// Guard the page's clicks; `current()` is the screen shown now: an object that is a new one for each screen
// shown, with `shownAt` (performance.now() when it was shown).
export function guardTaps(current) {
  let pressed = { on: null, at: 0, type: "" }; // the last press: the screen it began on, when, and by what
  document.addEventListener(
    "pointerdown",
    (event) => (pressed = { on: current(), at: performance.now(), type: event.pointerType }),
    true,
  );
  document.addEventListener(
    "click",
    (event) => {
      if (event.detail === 0) return;
      const screen = current();
      const early = pressed.type !== "mouse" && pressed.at - screen.shownAt < TAP_GUARD_MS;
      if (pressed.on !== screen || early) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    },
    true,
  );
}
