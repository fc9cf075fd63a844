// Is a server the hall's? A device (or a console) asks it to sign a fresh nonce, its own address, its role and
// its epoch with the device's (or session's) proof key, and checks the signature before it sends that server
// anything (wordjudge/hall/proof.py is the server's side). The proof key is the hall key's HMAC of the digest of
// the device's token (the session's CSRF token), handed over at pairing (sign-in) and by GET /api/session: the
// hall's database holds the digest, never the key, so neither a phone at a hall server's address nor whoever
// read the database or a backup can make a proof. The server finds the asker by a hint: the first 16 hex digits
// of its secret's digest.
//
// SHA-256 and HMAC are written here in plain JavaScript: a phone's page over plain HTTP is not a secure context,
// and has no WebCrypto. Pure functions, tested against the standard's vectors (tests/js/proof.test.mjs).

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const rotr = (x, n) => (x >>> n) | (x << (32 - n));

// SHA-256 of bytes (a Uint8Array), as 32 bytes.
export function sha256(bytes) {
  const length = bytes.length;
  const blocks = Math.ceil((length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor((length * 8) / 2 ** 32));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  for (let block = 0; block < blocks; block++) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block * 64 + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, hh].forEach((value, i) => (h[i] = (h[i] + value) >>> 0));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((value, i) => outView.setUint32(i * 4, value));
  return out;
}

const utf8 = (text) => new TextEncoder().encode(text);
export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

// HMAC-SHA256 (RFC 2104) of a message with a key, both text (UTF-8), as 32 bytes.
export function hmacSha256(key, message) {
  let keyBytes = utf8(key);
  if (keyBytes.length > 64) keyBytes = sha256(keyBytes);
  const inner = new Uint8Array(64 + utf8(message).length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = (keyBytes[i] || 0) ^ 0x36;
    outer[i] = (keyBytes[i] || 0) ^ 0x5c;
  }
  inner.set(utf8(message), 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

// The hint a proof is asked with: the first 16 hex digits of the secret's SHA-256 (what the hall's database holds of
// a device's token, or of a session's CSRF token), by which the server finds the asker. Not the proof's key.
export const hintOf = (secret) => hex(sha256(utf8(secret))).slice(0, 16);

// A proof key as the server hands it: 64 lower-case hex digits (anything else proves nothing).
const isProofKey = (key) => typeof key === "string" && /^[0-9a-f]{64}$/.test(key);

// Whether a page's proof secret ({secret, key}) lets a server prove itself to it: a secret and its proof key. A
// device paired before servers handed out keys holds its token alone: no server can prove itself to it.
export const canProve = (held) => typeof held?.secret === "string" && held.secret !== "" && isProofKey(held.key);

// What the server signs: the nonce, the address the asker is about to talk to, the role and the epoch it says.
export function proofMac(key, { nonce, url, role, epoch }) {
  return hex(hmacSha256(key, `wordjudge hall proof\n${nonce}\n${url}\n${role}\n${epoch ?? ""}`));
}

// Two hex strings equal, in a time that does not depend on where they differ.
function sameHex(a, b) {
  if (typeof a !== "string" || a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differ === 0;
}

// Whether an answer to a proof request proves that `server` is the hall's active server to the holder of the
// proof key `key`, over `nonce`.
export function proves(answer, { server, key, nonce }) {
  if (!answer || answer.url !== server || answer.role !== "active" || !isProofKey(key)) return false;
  return sameHex(answer.mac, proofMac(key, { nonce, url: server, role: answer.role, epoch: answer.epoch }));
}

// A fresh nonce: 128 random bits in hex (crypto.getRandomValues works on plain HTTP too).
export function newNonce() {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

// Ask `server` to prove it is the hall's active server to the holder of `secret` (a device's token, a session's
// CSRF token: `of` "device" or "session"), whose proof key is `key`. Sends the nonce and the hint (hintOf), nothing
// else. Resolves true or false; never rejects. No key (a device paired before it was handed one): false, unasked.
export async function proveServer(server, { secret, key }, of, timeoutMs = 4000) {
  if (!canProve({ secret, key })) return false;
  const nonce = newNonce();
  const hint = hintOf(secret);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const response = await fetch(`${server}/api/hall/proof?nonce=${nonce}&hint=${hint}&of=${of}`, {
      cache: "no-store",
      credentials: "omit",
      signal: abort.signal,
    });
    if (!response.ok) return false;
    const text = await readCapped(response, 4096); // a proof is a few hundred bytes
    return text !== null && proves(JSON.parse(text), { server, key, nonce });
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

// A response's text, read as it comes and given up past `max` bytes (null): a fake answer of hundreds of MB
// never fills the page's memory.
async function readCapped(response, max) {
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(all);
}
