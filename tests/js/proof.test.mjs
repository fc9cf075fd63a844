// The hall proof's client side (kiosk/shared/proof.js): SHA-256 and HMAC-SHA256 against the standards' vectors, and a
// proof the server made (wordjudge.hall_proof, passed in by tests/test_client_modules.py) checked as a device does.
import assert from "node:assert/strict";
import { test } from "node:test";

import { canProve, hex, hintOf, hmacSha256, proofMac, proves, sha256 } from "../../kiosk/shared/proof.js";

const text = (s) => new TextEncoder().encode(s);

test("SHA-256 gives the standard's digests, across block boundaries", () => {
  assert.equal(hex(sha256(text(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(hex(sha256(text("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(
    hex(sha256(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  assert.equal(hex(sha256(text("a".repeat(1000)))), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
});

const vector = JSON.parse(process.env.WORDJUDGE_PROOF_VECTOR ?? "null");

test("HMAC-SHA256 gives RFC 4231's values", () => {
  assert.equal(
    hex(hmacSha256("Jefe", "what do ya want for nothing?")),
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  );
  // A key longer than a block (64 bytes) is hashed first: as Python's hmac does it (the vector below).
  assert.equal(hex(hmacSha256("k".repeat(100), "a message")), vector.long_key_mac);
});

test("a proof the server made checks as the device checks it, and nothing else does", () => {
  assert.ok(vector, "WORDJUDGE_PROOF_VECTOR must hold a proof the server made (run through pytest)");
  const { secret, key, nonce, url, role, epoch, mac } = vector;
  assert.equal(hintOf(secret), vector.hint);
  assert.equal(proofMac(key, { nonce, url, role, epoch }), mac);
  const answer = { url, role, epoch, mac };
  assert.ok(proves(answer, { server: url, key, nonce }));
  // Another nonce (a replay), another address (a proof relayed from another server), another key, a standby.
  assert.ok(!proves(answer, { server: url, key, nonce: "0".repeat(32) }));
  assert.ok(!proves(answer, { server: url + "0", key, nonce }));
  assert.ok(!proves({ ...answer, url: url + "0" }, { server: url + "0", key, nonce }));
  assert.ok(!proves(answer, { server: url, key: "0".repeat(64), nonce }));
  assert.ok(!proves({ ...answer, role: "standby" }, { server: url, key, nonce }));
  assert.ok(!proves({ ...answer, mac: mac.slice(0, 63) }, { server: url, key, nonce }));
  assert.ok(!proves(null, { server: url, key, nonce }));
  // No key (a device paired before it was handed one), or not a key: nothing proves.
  assert.ok(!proves(answer, { server: url, key: null, nonce }));
  assert.ok(!proves(answer, { server: url, key: key.toUpperCase(), nonce }));
});

test("what a copy of the hall's database holds of a device makes no proof it accepts", () => {
  // Before: the proof's key was the token's SHA-256, which the database holds; a dump made the device's proof.
  const { secret, key, nonce, url, role, epoch, stored, stored_mac } = vector;
  assert.notEqual(key, stored);
  assert.notEqual(key, hex(sha256(text(secret))));
  // The proof an attacker makes from the stored digest is refused (the device checks with its own proof key).
  const forged = { url, role, epoch, mac: stored_mac };
  assert.ok(!proves(forged, { server: url, key, nonce }));
});

test("a page can have a server prove itself only with its secret and that secret's proof key", () => {
  const key = "ab".repeat(32);
  assert.ok(canProve({ secret: "the-token", key }));
  assert.ok(!canProve({ secret: "the-token", key: null })); // paired before servers handed out keys
  assert.ok(!canProve({ secret: "the-token", key: key.toUpperCase() }));
  assert.ok(!canProve({ secret: "", key }));
  assert.ok(!canProve(null));
});
