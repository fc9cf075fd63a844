// A page whose program could not be loaded would show its first line ("Starting…") for ever: a module that
// does not arrive stops its whole program. Chromium fails every request under way when the machine's network
// changes (ERR_NETWORK_CHANGED: a Wi-Fi that reconnects, an address added), so a page opened at that moment
// never started. This script is loaded by every page before its program, on its own (it imports nothing, so
// nothing else can stop it), and reloads the page when a program of the page fails to load: after 1 s, then
// 2, 4... and every 30 s at most, for as long as it takes.

const TRIES = "wordjudge.restarts"; // this tab's reloads in a row after a program that did not load
const FIRST_MS = 1000;
const MOST_MS = 30000;

let failed = false;

function tries() {
  try {
    return Number(sessionStorage.getItem(TRIES)) || 0;
  } catch {
    return 0; // no storage (a private window's limits): every restart is the first
  }
}

function remember(count) {
  try {
    if (count) sessionStorage.setItem(TRIES, String(count));
    else sessionStorage.removeItem(TRIES);
  } catch {
    // as above: the count is only the wait's length
  }
}

function restart() {
  if (failed) return;
  failed = true;
  const count = tries();
  remember(count + 1);
  setTimeout(() => location.reload(), Math.min(MOST_MS, FIRST_MS * 2 ** count));
}

// A module script whose file, or any file it imports, could not be fetched gets an "error" event when its turn
// to run comes, after this one's (scripts of a page run in order): each is watched from here.
for (const script of document.querySelectorAll('script[type="module"]')) {
  script.addEventListener("error", restart);
}
// Every script of the page has run or failed by "load": a page that loaded whole starts its count again.
window.addEventListener("load", () => failed || remember(0));
