// What the kiosk's screens share: its enrolment, what it knows of its server and event, and the ways out of a
// screen that the program's start-up owns (idle, the pairing screen, a refused token), set once by kiosk.js.

import { enrolment } from "../shared/device.js";
import { clearWhenAbandoned } from "./screens.js";

export const DEVICE = enrolment("kiosk");
export const PENDING = DEVICE.pending; // a challenge that got no clear answer
export const DIVISION_KEY = "wordjudge.kiosk.division"; // the division the TD set this kiosk to serve
export const ABANDONED_S = 30; // typed input left alone this long is cleared

export const state = {
  token: DEVICE.token(),
  me: null, // {actor, division} from /api/session
  event: null, // /api/event
  serverOk: true, // the server answers (false: it cannot be reached)
  serverProblem: null, // what the server says is wrong with it (/api/health degraded), or null
  division: null, // the division chosen for the challenge under way
  draft: null, // {table, round, text, requestId}
};

// Where a screen goes when it is done or cannot go on, set by kiosk.js before its first screen (the challenge's
// and the TD's screens are reached from idle, and lead back to it): idle(), refused() for a refused token, and
// forget(message) to drop the enrolment and show the pairing screen.
export const go = { idle: null, refused: null, forget: null };

// Typed input left alone is cleared: back to idle, where nothing typed remains.
export function clearAbandoned(seconds, line = null) {
  clearWhenAbandoned(seconds, () => go.idle(), line);
}

export function divisions() {
  return state.event ? state.event.divisions : [];
}

// The division's name, for the challenge's screens of an event with several: the opponent checks it too.
export function divisionShown(division) {
  return divisions().length > 1 ? division.name : null;
}
