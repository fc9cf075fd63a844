// The page says plainly when its connection to the event's server is unproven: plain HTTP in a hall, where
// anything that takes a server's address could answer for it (follow.js), or HTTPS with a certificate this device
// does not trust (reached through the browser's warning: offline.js). Over HTTPS it trusts, or plain HTTP outside
// a hall, it says nothing. The kiosk and the handheld show it above their screens.

import { h, hallServers } from "./api.js";
import { STRINGS as S } from "./strings.js";
import { unprovenConnection } from "./follow.js";
import { certificateRefused } from "./offline.js";

const EVERY_MS = 5000; // the page learns its hall from health: the banner follows within this

// Shows the banner while the connection is unproven, checking again every few seconds (the hall is learnt, or
// forgotten, as the page runs).
export function showConnection() {
  update();
  setInterval(update, EVERY_MS);
  certificateRefused.then((refused) => {
    untrusted = refused;
    if (refused) update();
  });
}

let untrusted = false; // the browser refused this page's certificate (offline.js)

function update() {
  const shown = document.getElementById("connection-banner");
  if (!untrusted && !unprovenConnection(location.protocol, hallServers())) {
    document.body.classList.remove("with-banner");
    return shown?.remove();
  }
  if (shown) return;
  const text = untrusted ? S.untrustedCertificate : S.unprovenConnection;
  const banner = h(
    "aside",
    { id: "connection-banner", class: "connection-banner", role: "note" },
    h("p", {}, `${text} `, h("span", { class: "hint" }, S.unprovenConnectionStep)),
  );
  document.body.prepend(banner);
  // Every full-height screen leaves the banner its height (app.css): nothing is pushed off the screen.
  document.body.classList.add("with-banner");
  document.body.style.setProperty("--banner", `${banner.offsetHeight}px`);
}
