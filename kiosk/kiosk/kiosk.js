// The self-adjudication kiosk (WESPA 3.10.4, ASPA 10.3): the challenger types the words, the
// opponent checks them and executes the adjudication, both see one verdict, and it clears.
// Everything the server enforces (credentials, input rules, rate limit) is enforced there too;
// this page only makes the protocol easy to follow and hard to get wrong. This module starts it:
// its pairing, what it asks the server every few seconds, and the idle screen the others lead back to
// (the challenge's screens: challenge.js; the TD's settings: settings.js).

import { api, followFrom, h, proveWith } from "../shared/api.js";
import { showConnection } from "../shared/connection.js";
import { speakTheEventsLanguage } from "../shared/device.js";
import { STRINGS as S } from "../shared/strings.js";
import { currentRound, heading, lexiconBox, pairForm } from "../shared/ui.js";
import { startChallenge } from "./challenge.js";
import { later, screenName, show } from "./screens.js";
import { showTdLogin } from "./settings.js";
import { DEVICE, DIVISION_KEY, divisions, go, state } from "./state.js";

// Another server of the hall proves itself to this device (its token) before it is sent anything (api.js).
proveWith(() => ({ value: DEVICE.proof(), of: "device" }));
// The server it followed last (a hall's other server, after a failover), proved again before its first request.
followFrom("wordjudge.kiosk.follows");
const HEALTH_EVERY_MS = 10000;

// -- start-up and enrolment ----------------------------------------------------------------------

async function boot() {
  const code = new URLSearchParams(location.hash.slice(1)).get("pair"); // from a pairing QR code's link
  showConnection(); // plain HTTP in a hall: said above every screen
  if ((!state.token || code) && (await speakTheEventsLanguage())) return; // never paired: in the event's language
  // No way back into an old screen: the history holds one kiosk entry, and Back lands on idle.
  history.replaceState({ kiosk: true }, "", "/kiosk");
  history.pushState({ kiosk: true }, "", "/kiosk");
  window.addEventListener("popstate", () => {
    history.pushState({ kiosk: true }, "", "/kiosk");
    goIdle();
  });
  document.addEventListener("contextmenu", (event) => event.preventDefault());
  setInterval(checkHealth, HEALTH_EVERY_MS);
  if (!state.token || code) {
    showPair("", code || "");
    return;
  }
  await load();
}

async function load() {
  try {
    const [me, event] = await Promise.all([
      api("/api/session", { token: state.token }),
      api("/api/event", { token: state.token }),
    ]);
    state.me = me;
    state.event = event;
    state.serverOk = true;
    DEVICE.keepProofKey(me);
    await DEVICE.learnServer();
  } catch (error) {
    if (error.kind === "unauthorized") return refused();
    state.serverOk = false;
    const title = error.kind === "network" ? S.serverDown : error.kind === "moved" ? S.moved : S.serverProblem;
    // Not the browser's words for a failed fetch: the kiosk says it carries on by itself (and does).
    // Nothing proved itself the event's server: it was sent nothing, and the screen says so.
    const unproven = error.body?.code === "unproven";
    const detail = error.kind === "network" && !unproven ? S.comesBack : error.message;
    show("down", h("section", { class: "screen down" }, heading(title), h("p", {}, detail)));
    later(load, 3000);
    return;
  }
  goIdle();
}

function forget(message) {
  DEVICE.forget();
  state.token = null;
  state.me = null;
  showPair(message, "");
}

// The token was refused: by this kiosk's own server (it was revoked: forget it), or by another server
// (started from the wrong folder, a replacement box): keep the enrolment, say so, and try again until
// the kiosk's own server is back.
async function refused() {
  if ((await DEVICE.refusedBy()) === "same") return forget(S.revoked);
  state.serverOk = false;
  // A demo set aside (or an event moved to this machine) never comes back: the TD pairs the kiosk again, with a
  // new code; the old pairing is kept until one works.
  const again = h(
    "button",
    { type: "button", class: "secondary", id: "pair-again", onclick: () => showPair("", "") },
    S.pairAgain,
  );
  show(
    "elsewhere",
    h(
      "section",
      { class: "screen down" },
      heading(S.otherServer(DEVICE.event())),
      h("p", {}, S.otherServerHint),
      h("p", { class: "hint" }, S.pairAgainHint),
      h("div", { class: "actions" }, again),
    ),
  );
  later(load, 5000);
}

function showPair(message, code) {
  const { form, input } = pairForm({
    title: S.pairTitle,
    role: "kiosk",
    code,
    message,
    onEnrolled: async (token, enrolled) => {
      DEVICE.save(token, enrolled);
      state.token = token;
      await load();
    },
  });
  show("pair", form, input);
}

// Every few seconds: is the server there and well, and is this kiosk still enrolled? (The TD's
// device list shows a kiosk as online from these calls.) A revoked kiosk goes back to its pairing
// screen when idle.
async function checkHealth() {
  const wasOk = state.serverOk;
  try {
    state.serverProblem = await serverProblem();
    if (state.token) {
      state.me = await api("/api/session", { token: state.token, timeoutMs: 4000 });
      if (screenName() === "idle") {
        // The TD may have changed the event (divisions, lexicons, rules): an idle kiosk shows it at once.
        const event = await api("/api/event", { token: state.token, timeoutMs: 4000 });
        if (JSON.stringify(event) !== JSON.stringify(state.event)) {
          // Idle still? The players may have begun a challenge while the answer came: it is never taken from
          // them. Only a round field they have not touched follows the TD's round, as on the handheld; the
          // rest of the change shows once the kiosk is idle again. The idle screen does not show the round,
          // so a new round (every round of the day) is not drawn again: a tap on Start just then is kept.
          if (screenName() === "idle" && !onlyTheRound(state.event, event)) {
            state.event = event;
            return goIdle();
          }
          const round = document.getElementById("round");
          if (round && round.value === currentRound(state.event)) round.value = currentRound(event);
          state.event = { ...state.event, current_round: event.current_round };
        }
      }
    }
    state.serverOk = true;
  } catch (error) {
    if (error.kind === "unauthorized" && state.token && screenName() === "idle") return refused();
    if (error.kind === "moved" && screenName() === "idle") return load(); // shows why, and tries again
    // An answer that is an error (a 503: the access store cannot be used) is a server problem, not silence.
    state.serverOk = error.kind !== "network";
    if (state.serverOk && error.kind !== "unauthorized") state.serverProblem = error.message;
  }
  // The division cards follow: none can start a challenge while the server cannot be reached.
  if (state.serverOk !== wasOk && screenName() === "idle") return goIdle();
  const line = document.getElementById("server-state");
  if (line) renderServerState(line);
}

// Whether two readings of the event differ in nothing but the TD's current round.
function onlyTheRound(before, after) {
  const rest = (event) => JSON.stringify({ ...event, current_round: null });
  return rest(before) === rest(after);
}

// What the server says about itself: null when it is ok; why not when it is degraded (its health
// check answers 503 with the reasons: the audit log cannot be written, a lexicon file changed...).
async function serverProblem() {
  try {
    await api("/api/health", { timeoutMs: 4000 });
    return null;
  } catch (error) {
    if (error.body?.state === "degraded") return error.body.reasons.join("; ");
    throw error;
  }
}

function renderServerState(line) {
  const problem = state.serverOk && state.serverProblem !== null;
  line.textContent = !state.serverOk ? S.serverDown : problem ? S.serverProblem : S.serverOk;
  line.className = `server-state ${state.serverOk && !problem ? "ok" : "error"}`;
  line.title = problem ? state.serverProblem : "";
}

// -- idle ----------------------------------------------------------------------------------------

// The division this kiosk serves, if it serves only one: by enrolment, by the TD's setting, or the event's only one.
function fixedDivision() {
  const all = divisions();
  const wanted = state.me?.division || localStorage.getItem(DIVISION_KEY);
  return all.find((d) => d.name === wanted) || (all.length === 1 ? all[0] : null);
}

function goIdle() {
  state.draft = null;
  state.division = null;
  if (!state.token) return showPair("", "");
  if (!state.event) return load();
  const fixed = fixedDivision();
  const status = h("p", { id: "server-state", role: "status" });
  renderServerState(status);
  const down = !state.serverOk; // then no card can start a challenge, and each says why
  const cannot = () => (down ? h("span", { class: "card-down" }, S.cannotStart) : null);
  const choices = fixed
    ? [
        h("p", { class: "division-name" }, S.divisionName(fixed.name)),
        lexiconBox(fixed.lexicon_view),
        h(
          "button",
          { class: "primary start", id: "start", disabled: down, onclick: () => startChallenge(fixed) },
          S.start,
        ),
        cannot(),
      ]
    : [
        h("h2", {}, S.pickDivision),
        h(
          "div",
          { class: "division-choices" },
          divisions().map((d) =>
            h(
              "button",
              { class: "division", disabled: down, onclick: () => startChallenge(d) },
              h("span", { class: "division-name" }, S.divisionName(d.name)),
              lexiconBox(d.lexicon_view),
              cannot(),
            ),
          ),
        ),
      ];
  const page = h(
    "section",
    { class: "screen idle" },
    heading(state.event.name),
    ...choices,
    h("p", { class: "hint" }, S.startHint),
    status,
    h("button", { class: "td-button", onclick: showTdLogin, "aria-label": S.tdTitle }, S.tdButton),
  );
  show("idle", page, page.querySelector("#start"));
}

go.idle = goIdle;
go.refused = refused;
go.forget = forget;
boot();
