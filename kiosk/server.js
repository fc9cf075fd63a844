// Which server this device paired with. A server started from the wrong folder, or a replacement box
// before its data is restored, does not know this device's token and answers 401: that is not a
// revocation, and the device must not throw its enrolment away. Only its own server (the same
// identity, /api/health's server_id) can say its token was revoked.

import { api, storedJson } from "./api.js";

export function serverStore(key) {
  const stored = storedJson(key);
  return { ...stored, set: (server) => stored.set({ id: server.server_id, event: server.event }) };
}

// The identity of the server answering now (from its health check, 200 or 503), or throws an ApiError.
export async function answeringServer() {
  try {
    return await api("/api/health", { timeoutMs: 4000 });
  } catch (error) {
    if (error.body?.server_id) return error.body; // degraded, but it says who it is
    throw error;
  }
}

// After a 401: "same" (its own server refused the token: revoked), "other" (another server), or
// "unknown" (no answer now: neither a revocation nor another server, for sure). Never throws.
export async function whoRefused(stored) {
  if (!stored?.id) return "same"; // paired before servers had identities
  try {
    const now = await answeringServer();
    return now.server_id === stored.id ? "same" : "other";
  } catch {
    return "unknown";
  }
}
