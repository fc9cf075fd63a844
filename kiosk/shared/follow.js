// Which server a device page may talk to before it proves itself (api.js follows the hall with these). Pure
// functions, unit-tested in Node (tests/js/follow.test.mjs).
//
// A page's own origin is the server it came from, so it is trusted without a proof only while nothing says a phone
// could have taken its address: outside a hall (one server: nothing to follow, nothing to prove), and in a hall
// until the page has followed another server (it went because its origin failed: that machine is dead or fenced,
// and its address may be anyone's) or its origin has failed a request since the page was loaded. From then on the
// origin proves itself as any other server does, with the same secret, before it is sent anything.

// Whether the page's origin must prove itself before it is sent anything. `inHall`: the page learnt more than one
// server; `strayed`: this browser's pages followed another server of the hall (remembered across reloads);
// `originFailed`: a request to the origin failed since the page was loaded; `hasSecret`: the page holds a secret to
// ask for a proof with (a device's token). A page with none holds nothing of a device's to give away (a device not
// paired yet): its origin is the one server it can pair with.
export function originMustProve({ inHall, strayed, originFailed, hasSecret }) {
  return Boolean(inHall && hasSecret && (strayed || originFailed));
}

// The server a page starts with: the one it followed last (remembered), if it is still one of the hall's servers,
// else its own origin (""). `origin` is the page's own (location.origin): remembered as itself, it is "".
export function startingServer(remembered, servers, origin) {
  if (typeof remembered !== "string" || remembered === "" || remembered === origin) return "";
  return Array.isArray(servers) && servers.includes(remembered) ? remembered : "";
}

// The server a request goes to first: the one the page follows, unless the page holds nothing to prove it with (a
// device not paired yet, or whose pairing was forgotten) and it has not proved itself already: then the page's own
// origin, the one server such a page can pair with (as before it followed anything).
export function firstServer(base, { hasSecret, baseProven }) {
  return hasSecret || baseProven ? base : "";
}

// Whether a page's connection to its server is unproven: plain HTTP in a hall. Over HTTP anything that takes a
// hall server's address can answer for it (HTTPS: only the holder of the hall's certificate can); outside a hall
// there is no other server to tell it from, and nothing to show.
export function unprovenConnection(protocol, servers) {
  return protocol === "http:" && Array.isArray(servers) && servers.length > 1;
}
