// A challenge that got no clear answer (no connection, a server problem) stays pending, kept across a
// reload, until the server says what became of it: the same request id either was recorded (then the
// players are shown that verdict) or never will be. Only then may a new challenge start, so the same
// challenge typed again can never be recorded twice. The pending request ({requestId, table, round})
// is kept with api.js's storedJson.

import { api } from "./api.js";

// An error that says the request was refused before anything was recorded: nothing is pending after it.
export function refusedOutright(error) {
  return (
    ["invalid", "unauthorized", "moved", "rate_limited"].includes(error.kind) || [403, 404, 409].includes(error.status)
  );
}

// What became of a pending request: {record} if it was recorded, {record: null} if it never was.
// Throws an ApiError when the server cannot say now (no connection, a server problem).
export async function settle(token, requestId) {
  try {
    return { record: await api(`/api/challenges/requests/${encodeURIComponent(requestId)}`, { token }) };
  } catch (error) {
    if (error.status === 404 && error.body?.code === "not_found") return { record: null };
    throw error;
  }
}
