// The offline shell of the kiosk, the handheld and the docket: a service worker (/sw.js, see sw.js) keeps
// the page and its files, so that a reload or a restart while the server cannot be reached shows the page's
// own "cannot reach the adjudication server" state, never the browser's error page, and the page carries on
// by itself when the server is back.
//
// Browsers allow a service worker only in a secure context: https, localhost, or an http address the browser
// is told to trust (deploy/kiosk-setup.sh does that for a kiosk). Anywhere else (a phone on the hall's plain
// http) there is no shell: the page still says when the server cannot be reached, but only once it is open.

//
// Over https the browser refuses the worker's script when the page's certificate is not one it trusts: a page
// reached through its certificate warning (a runner's phone that has not installed the hall's CA, see
// deploy/hall.md). Then the connection is unproven, as over plain http: connection.js says so.
export const certificateRefused =
  "serviceWorker" in navigator
    ? navigator.serviceWorker.register("/sw.js", { updateViaCache: "none" }).then(
        () => false,
        // Else no shell this time (the server went away during the install): the page works without one.
        (error) => location.protocol === "https:" && /certificate/i.test(String(error?.message)),
      )
    : Promise.resolve(false);
