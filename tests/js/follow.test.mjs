// Which server a device page may talk to before it proves itself (kiosk/shared/follow.js): the page's own origin is
// trusted without a proof only while no phone could have taken its address.
import assert from "node:assert/strict";
import { test } from "node:test";

import { firstServer, originMustProve, startingServer, unprovenConnection } from "../../kiosk/shared/follow.js";

const page = { inHall: true, strayed: false, originFailed: false, hasSecret: true };

test("in a hall, the origin proves itself once the page followed another server or the origin failed", () => {
  assert.equal(originMustProve(page), false); // the server the page came from, never failed: its own
  assert.equal(originMustProve({ ...page, strayed: true }), true); // after a failover (remembered across reloads)
  assert.equal(originMustProve({ ...page, originFailed: true }), true); // its machine may have died: anyone's now
  assert.equal(originMustProve({ ...page, strayed: true, originFailed: true }), true);
});

test("outside a hall, or with nothing to prove with, the origin is the page's own", () => {
  assert.equal(originMustProve({ ...page, inHall: false, strayed: true, originFailed: true }), false);
  assert.equal(originMustProve({ ...page, hasSecret: false, strayed: true }), false); // a device not paired yet
});

test("a page starts with the server it followed last, if it is still one of its hall's", () => {
  const servers = ["http://10.0.0.1:8000", "http://10.0.0.2:8000"];
  assert.equal(startingServer("http://10.0.0.2:8000", servers, "http://10.0.0.1:8000"), "http://10.0.0.2:8000");
  assert.equal(startingServer("http://10.0.0.1:8000", servers, "http://10.0.0.1:8000"), ""); // its own origin
  assert.equal(startingServer("http://10.9.9.9:8000", servers, "http://10.0.0.1:8000"), ""); // not the hall's
  assert.equal(startingServer("http://10.0.0.2:8000", [], "http://10.0.0.1:8000"), ""); // no hall learnt
  assert.equal(startingServer(undefined, servers, "http://10.0.0.1:8000"), "");
  assert.equal(startingServer({ server: "x" }, servers, "http://10.0.0.1:8000"), "");
});

test("a connection is unproven over plain HTTP in a hall, and only then", () => {
  const hall = ["http://10.0.0.1:8000", "http://10.0.0.2:8000"];
  assert.equal(unprovenConnection("http:", hall), true);
  assert.equal(unprovenConnection("https:", hall), false);
  assert.equal(unprovenConnection("http:", ["http://10.0.0.1:8000"]), false);
  assert.equal(unprovenConnection("http:", []), false);
  assert.equal(unprovenConnection("http:", null), false);
});

test("a page with nothing to prove a server with asks its own origin, unless the server it follows proved itself", () => {
  const b = "http://10.0.0.2:8000";
  assert.equal(firstServer(b, { hasSecret: true, baseProven: false }), b); // it proves b first
  assert.equal(firstServer(b, { hasSecret: false, baseProven: true }), b); // b proved itself to this page already
  assert.equal(firstServer(b, { hasSecret: false, baseProven: false }), ""); // a pairing forgotten, then a reload
  assert.equal(firstServer("", { hasSecret: false, baseProven: false }), "");
});
