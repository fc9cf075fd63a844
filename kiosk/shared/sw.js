// The offline shell: the kiosk, the handheld and the docket open even when the server cannot be reached (a
// kiosk restarted during a power cut, a phone reloading on a dead Wi-Fi) and say so themselves, instead of the
// browser's error page; they carry on by themselves once the server answers.
//
// The server heads this file with VERSION, SHELLS and FILES (wordjudge.web.pages.service_worker): one cache per
// version holds the shell pages and every client file of that version, all filled at install. It never holds
// an answer of the server's API (a verdict, a token, the event, a record): a page opened from the cache can
// only say that the server cannot be reached, until it answers again.
//
// A new server version is a new worker (its header changes): it fills a cache of its own, and once it takes
// over, every other cache is deleted. A page comes from the server whenever the server answers, naming its
// own version's files; the cache answers only for this worker's version. Old and new are never mixed.

const CACHE = `wordjudge-${VERSION}`;
const ASSETS = `/static/${VERSION}/`;
const NETWORK_MS = 4000; // a page the server has not sent by then comes from the cache

self.addEventListener("install", (event) => {
  event.waitUntil(fill().then(() => self.skipWaiting()));
});

// All or nothing: a file missing, or a page naming another version (the server was upgraded during the
// install), fails the install; the worker in place, if any, keeps its own complete cache.
async function fill() {
  const cache = await caches.open(CACHE);
  try {
    await Promise.all(
      [...SHELLS, ...FILES].map(async (url) => {
        const response = await fetch(url, { cache: "no-store" });
        if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
        if (SHELLS.includes(url) && !(await response.clone().text()).includes(`"${ASSETS}`)) {
          throw new Error(`${url} is not version ${VERSION}`);
        }
        await cache.put(url, response);
      }),
    );
  } catch (error) {
    await caches.delete(CACHE);
    throw error;
  }
}

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/api/")) return; // never from a cache: the server answers, or the page says it cannot
  if (request.mode === "navigate" && SHELLS.includes(url.pathname)) event.respondWith(page(request, url.pathname));
  else if (url.pathname.startsWith(ASSETS)) event.respondWith(asset(request));
});

// A shell page: the server's (its current version) when it sends it, else this version's copy. An error for the
// page (something else at the server's address, which has no such page) is no page: the copy answers, and proves
// the server it follows before its first request (api.js).
async function page(request, path) {
  let response;
  try {
    response = await Promise.race([
      fetch(request),
      new Promise((resolve, reject) => setTimeout(() => reject(new Error("no answer")), NETWORK_MS)),
    ]);
    if (response.ok || response.type === "opaqueredirect") return response;
  } catch (error) {
    response = error;
  }
  const cached = await caches.match(path, { cacheName: CACHE });
  if (cached) return cached;
  if (response instanceof Response) return response; // no copy: the server's own answer, error and all
  throw response;
}

// A file of this version: from the cache (filled at install; a file the browser dropped is put back, but never
// into a cache a newer worker has deleted: caches.open would make it again).
async function asset(request) {
  const cached = await caches.match(request, { cacheName: CACHE, ignoreSearch: true });
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok && (await caches.has(CACHE))) await (await caches.open(CACHE)).put(request, response.clone());
  return response;
}
