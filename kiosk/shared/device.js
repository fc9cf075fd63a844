// A device's enrolment as this browser keeps it, in one place for the kiosk, the handheld and the
// docket: its token, its proof key (proof.js: what the hall's servers prove themselves to it with), the server it
// paired with, and a challenge that got no clear answer.
//
// A server started from the wrong folder, or a replacement box before its data is restored, does not
// know this device's token and answers 401: that is not a revocation, and the device must not throw its
// enrolment away. Only its own server (the same identity, /api/health's server_id) can say its token
// was revoked.

import { api, storedJson } from "./api.js";
import { reloading } from "./strings.js";

const ROLES = ["kiosk", "runner"];
const key = (role, what) => `wordjudge.${role}.${what}`;

// The enrolment of this browser as a `role` device ("kiosk" or "runner").
export function enrolment(role) {
  const server = storedJson(key(role, "server")); // {id, event}
  return {
    token: () => localStorage.getItem(key(role, "token")),
    // What it asks another server to prove itself with (api.js proveWith): its token and proof key; null unpaired.
    proof: () => proofOf(role),
    // The proof key its server hands it (pairing, GET /api/session): a device paired before it was handed one at
    // pairing learns it from its own server, the one its page came from (api.js sends its token to no other
    // server before that server proved itself, which it cannot do without the key).
    keepProofKey(answer) {
      if (typeof answer?.proof_key === "string") localStorage.setItem(key(role, "proof-key"), answer.proof_key);
    },
    pending: storedJson(key(role, "pending")), // a challenge that got no clear answer, to settle
    event: () => server.get()?.event,
    // After pairing: the token, and which server gave it (the enrolment answer names it).
    save(token, enrolled) {
      server.set({ id: enrolled.server_id, event: enrolled.event });
      localStorage.setItem(key(role, "token"), token);
      localStorage.removeItem(key(role, "proof-key")); // the old token's, if any
      this.keepProofKey(enrolled);
    },
    forget() {
      localStorage.removeItem(key(role, "token"));
      localStorage.removeItem(key(role, "proof-key"));
      server.clear();
    },
    // A device paired before servers had identities learns its server's now.
    async learnServer() {
      if (server.get()?.id) return;
      try {
        const now = await answeringServer();
        server.set({ id: now.server_id, event: now.event });
      } catch {
        // not now: next time
      }
    },
    // After a 401: "same" (its own server refused the token: revoked), "other" (another server), or
    // "unknown" (no answer now: neither a revocation nor another server, for sure). Never throws.
    async refusedBy() {
      const stored = server.get();
      if (!stored?.id) return "same"; // paired before servers had identities
      try {
        return (await answeringServer()).server_id === stored.id ? "same" : "other";
      } catch {
        return "unknown";
      }
    },
  };
}

// The token of whichever device this browser is (a docket opened from the kiosk or the handheld).
export function anyToken() {
  for (const role of ROLES) {
    const token = localStorage.getItem(key(role, "token"));
    if (token) return token;
  }
  return undefined;
}

// That device's token and proof key, for the proofs of the hall's other servers (null: no device here).
export function anyProof() {
  for (const role of ROLES) {
    const proof = proofOf(role);
    if (proof) return proof;
  }
  return null;
}

function proofOf(role) {
  const token = localStorage.getItem(key(role, "token"));
  return token ? { secret: token, key: localStorage.getItem(key(role, "proof-key")) } : null;
}

// The identity of the server answering now (from its health check, 200 or 503), or throws an ApiError.
async function answeringServer() {
  try {
    return await api("/api/health", { timeoutMs: 4000 });
  } catch (error) {
    if (error.body?.server_id) return error.body; // degraded, but it says who it is
    throw error;
  }
}

// A device page that may not read the event yet (never paired, or opened from a pairing link): its health
// check says the event's language, and the page reloads in it (with its link) before it shows anything.
// Whether it is reloading now: then the caller shows nothing.
export async function speakTheEventsLanguage() {
  await api("/api/health", { timeoutMs: 3000 }).catch(() => {});
  return reloading();
}
