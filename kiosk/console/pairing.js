// Pairing devices from the TD console: one code, a hall's worth at once (kiosk-01..kiosk-40, a division
// each or one for all), a device paired again, every code made listed until the page closes, and the A4
// sheet they print on (name, code and QR code per device, cut lines).

import { h } from "../shared/api.js";
import { DEVICE_PREFIX, hallNames } from "./device-names.js";
import { STRINGS } from "../shared/strings.js";
import { call, limited, problem, svg, when } from "./common.js";

const C = STRINGS.console;
const K = C.columns;
const P = C.hall;

const LOOPBACK = /^(127(\.\d+){3}|localhost|\[::1\])$/;
const MAX_CODES = 64; // the server's limit of codes open at once (pairing.MAX_OPEN_CODES)
const PER_PAGE = 8; // cards on an A4 page: 2 across, 4 down

// The codes made on this page, newest first: kept across the console's tabs (never stored: a code is a
// secret for 30 minutes, and the server keeps only its hash).
const made = []; // {code..., batch, seq}: a batch is one answer (a hall's codes in their order)
let madeCount = 0;
let note = null; // why a phone might not open the links (the latest answer's link note)

// Why a phone may not open a pairing link: for a link to this machine only, said in the language; any
// other note as the server wrote it.
function linkNote(link, message, text) {
  const host = new URL(link).hostname;
  return LOOPBACK.test(host) ? C.linkLoopback(host) : STRINGS.message(message, text);
}

function divisionOptions(select, chosen = "") {
  call("/api/event").then((event) =>
    select.append(...event.divisions.map((d) => h("option", { value: d.name, selected: d.name === chosen }, d.name))),
  );
}

export function enrolView(onEnrolled, add) {
  const role = h(
    "select",
    { id: "pair-role", name: "role" },
    h("option", { value: "kiosk" }, STRINGS.role("kiosk")),
    h("option", { value: "runner" }, STRINGS.role("runner")),
  );
  const division = h("select", { id: "pair-division", name: "division" }, h("option", { value: "" }, C.anyDivision));
  const name = limited(h("input", { id: "pair-name", name: "name" }), "max_name");
  const message = h("p", { class: "message", role: "alert" });
  divisionOptions(division);
  return h(
    "form",
    {
      class: "pairing",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const code = await call("/api/pairing-codes", {
            method: "POST",
            body: { role: role.value, division: division.value || null, name: name.value || null },
          });
          message.textContent = "";
          add([code], code.link_note ? linkNote(code.link, code.link_note_message, code.link_note) : null);
          name.value = "";
          onEnrolled();
        } catch (error) {
          problem(message, error);
        }
      },
    },
    h("h2", {}, C.pairing),
    h(
      "div",
      { class: "fields" },
      h("label", { for: "pair-role" }, C.pairingRole, role),
      h("label", { for: "pair-division" }, K.division, division),
      h("label", { for: "pair-name" }, C.pairingName, name),
    ),
    h("button", { type: "submit", class: "primary" }, C.createCode),
    message,
  );
}

// A role's default start of device names: the one naming scheme (device-names.js), whatever the language, so
// that the sheet's kiosk-07 is the kiosk-07 the command line and a loose code would name.
const namePrefix = (role) => DEVICE_PREFIX[role] || `${role}-`;

// A hall at once: named codes for a range of devices, one division for all or a division each, made all
// or none (POST /api/pairing-sheets).
export function hallView(onEnrolled, add) {
  const roles = ["kiosk", "runner"].map((value) =>
    h("input", { type: "radio", name: "hall-role", id: `hall-role-${value}`, value, checked: value === "kiosk" }),
  );
  const prefix = h("input", { id: "hall-prefix", value: namePrefix("kiosk"), maxlength: "30", autocomplete: "off" });
  const from = h("input", { id: "hall-from", type: "number", min: "0", max: "9999", value: "1", inputmode: "numeric" });
  const to = h("input", { id: "hall-to", type: "number", min: "0", max: "9999", value: "10", inputmode: "numeric" });
  const forAll = h("select", { id: "hall-division" }, h("option", { value: "" }, C.anyDivision));
  const each = h("div", { class: "hall-grid", id: "hall-each" });
  const summary = h("p", { class: "hint", id: "hall-names", role: "status" });
  const message = h("p", { class: "message", role: "alert", id: "hall-message" });
  const submit = h("button", { type: "submit", class: "primary", id: "hall-create" });
  let divisions = [];
  const chosen = new Map(); // name -> division picked for that device alone

  const names = () => hallNames(prefix.value.trim(), from.value.trim(), to.value.trim());
  const render = () => {
    const list = names();
    const fits = list && list.length <= MAX_CODES;
    submit.disabled = !fits;
    submit.textContent = P.create(fits ? list.length : 0);
    summary.textContent = !list
      ? P.badRange
      : !fits
        ? P.tooMany(MAX_CODES)
        : P.names(list[0], list[list.length - 1], list.length);
    each.replaceChildren(
      ...(fits ? list : []).map((name) => {
        const select = h(
          "select",
          {
            class: "hall-device-division",
            "data-name": name,
            "aria-label": P.divisionOf(name),
            onchange: () => chosen.set(name, select.value),
          },
          h("option", { value: "" }, C.anyDivision),
          divisions.map((d) => h("option", { value: d, selected: d === (chosen.get(name) ?? forAll.value) }, d)),
        );
        return h("label", { class: "hall-device" }, h("span", {}, name), select);
      }),
    );
  };
  for (const input of [prefix, from, to]) input.addEventListener("input", render);
  forAll.addEventListener("change", () => {
    chosen.clear(); // one division for all: every device's own choice gives way
    render();
  });
  for (const radio of roles) {
    radio.addEventListener("change", () => {
      // The default prefix follows the role (kiosk-, handheld-); a prefix the TD typed stays.
      if (["kiosk", "runner"].some((role) => prefix.value === namePrefix(role))) prefix.value = namePrefix(radio.value);
      render();
    });
  }
  call("/api/event").then((event) => {
    divisions = event.divisions.map((d) => d.name);
    forAll.append(...divisions.map((d) => h("option", { value: d }, d)));
    render();
  });
  render();
  return h(
    "form",
    {
      class: "hall",
      id: "hall-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const role = roles.find((radio) => radio.checked).value;
        const devices = [...each.querySelectorAll("select")].map((select) => ({
          name: select.dataset.name,
          division: select.value || null,
        }));
        try {
          const sheet = await call("/api/pairing-sheets", { method: "POST", body: { role, devices } });
          message.textContent = "";
          const first = sheet.codes[0];
          add(sheet.codes, sheet.link_note ? linkNote(first.link, sheet.link_note_message, sheet.link_note) : null);
          chosen.clear();
          onEnrolled();
        } catch (error) {
          problem(message, error);
        }
      },
    },
    h("h2", {}, P.title),
    h("p", { class: "hint" }, P.hint),
    h(
      "div",
      { class: "fields" },
      h(
        "fieldset",
        { class: "hall-roles" },
        h("legend", {}, C.pairingRole),
        h(
          "div",
          {},
          roles.map((radio) => h("label", { for: radio.id, class: "inline" }, radio, STRINGS.role(radio.value))),
        ),
      ),
      h("label", { for: "hall-prefix" }, P.prefix, prefix),
      h("label", { for: "hall-from" }, P.from, from),
      h("label", { for: "hall-to" }, P.to, to),
      h("label", { for: "hall-division" }, P.division, forAll),
    ),
    summary,
    h("details", { class: "hall-each" }, h("summary", {}, P.each), each),
    submit,
    message,
  );
}

// "Re-pair" beside a device: a new pairing code for it (its role and division); the device that pairs
// with it takes its place, and its present token stops working then.
export function repairButton(name, onRepair) {
  return h(
    "button",
    {
      type: "button",
      class: "secondary small",
      "aria-label": C.repairNamed(name),
      onclick: () => {
        if (window.confirm(C.repairConfirm(name))) onRepair(name);
      },
    },
    C.repair,
  );
}

const expired = (code) => new Date(code.expires_at) <= new Date();

function codeCard(code) {
  const place = `${STRINGS.role(code.role)} · ${code.division || C.anyDivision}`;
  return h(
    "li",
    { class: expired(code) ? "code-card expired" : "code-card", "data-name": code.device_name || "" },
    svg(code.qr_svg),
    h(
      "div",
      {},
      h(
        "p",
        { class: "code-name" },
        code.device_name || STRINGS.role(code.role),
        code.repair ? h("span", { class: "code-tag" }, ` ${C.codes.repair}`) : null,
      ),
      h("p", { class: "hint" }, place),
      h("p", { class: "pairing-code" }, C.code(code.code, when(code.expires_at))),
      expired(code) ? h("p", { class: "message" }, C.codes.expired) : null,
      h("p", { class: "code-link" }, h("a", { href: code.link }, code.link)),
    ),
  );
}

// Every code made on this page, newest first, and the sheet they print on. `back` shows the console again
// after the sheet. Returns {section, add(codes, note), repair(name)}.
export function codesView(back) {
  const list = h("ul", { class: "pairing-result" });
  const message = h("p", { class: "message", role: "alert", id: "codes-message" });
  const noteLine = h("p", { class: "message", id: "codes-note" });
  const print = h("button", {
    type: "button",
    class: "primary",
    id: "print-sheet",
    onclick: () =>
      showSheet(
        made.filter((code) => !expired(code)),
        back,
      ),
  });
  const forget = h("button", {
    type: "button",
    class: "secondary",
    id: "clear-codes",
    onclick: () => {
      made.length = 0;
      render();
    },
  });
  const section = h(
    "section",
    { class: "codes", "aria-labelledby": "codes-title" },
    h("h2", { id: "codes-title" }, C.codes.title),
    h("p", { class: "hint" }, C.codes.hint),
    noteLine,
    h("p", { class: "codes-actions" }, print, " ", forget),
    message,
    list,
  );
  const render = () => {
    section.hidden = made.length === 0;
    const usable = made.filter((code) => !expired(code)).length;
    print.textContent = C.codes.print(usable);
    print.disabled = usable === 0;
    forget.textContent = C.codes.clear;
    noteLine.textContent = note || "";
    list.replaceChildren(...made.map(codeCard));
  };
  const add = (codes, linkNoteText) => {
    // A device's newer code replaces its older one (the server voids a re-paired device's older code).
    const names = new Set(codes.map((code) => code.device_name).filter(Boolean));
    const kept = made.filter((code) => !names.has(code.device_name));
    const batch = madeCount;
    const added = codes.map((code) => ({ ...code, batch, seq: madeCount++ }));
    made.splice(0, made.length, ...added, ...kept); // the newest answer first, each in its own order
    note = linkNoteText;
    message.textContent = "";
    render();
    list.firstChild?.scrollIntoView({ block: "nearest" });
  };
  const repair = async (name) => {
    try {
      const code = await call(`/api/devices/${encodeURIComponent(name)}/pairing-code`, { method: "POST" });
      add([code], code.link_note ? linkNote(code.link, code.link_note_message, code.link_note) : null);
    } catch (error) {
      problem(message, error);
      message.scrollIntoView({ block: "nearest" });
    }
  };
  render();
  return { section, add, repair };
}

// The sheet: A4 pages of 8 cards (name, role and division, code, until when, QR code of the pairing link,
// the link), cut lines between them; the page alone, with Print and Back above it (not printed).
async function showSheet(codes, back) {
  const app = document.getElementById("app");
  let event = "";
  try {
    event = (await call("/api/event")).name;
  } catch {
    // the sheet is whole without the event's name
  }
  const ordered = codes.slice().sort((a, b) => a.seq - b.seq); // the order they were made in: kiosk-01 first
  const pages = [];
  for (let i = 0; i < ordered.length; i += PER_PAGE) pages.push(ordered.slice(i, i + PER_PAGE));
  const card = (code) =>
    h(
      "article",
      { class: "sheet-card", "data-name": code.device_name || "" },
      h("div", { class: "sheet-qr" }, svg(code.qr_svg)),
      h(
        "div",
        { class: "sheet-facts" },
        h("p", { class: "sheet-name" }, code.device_name || STRINGS.role(code.role)),
        h("p", { class: "sheet-place" }, `${STRINGS.role(code.role)} · ${code.division || C.anyDivision}`),
        h("p", { class: "sheet-code" }, code.code),
        h("p", { class: "sheet-until" }, C.sheet.until(STRINGS.formatDate(code.expires_at, "short-time"))),
        h("p", { class: "sheet-link" }, h("a", { href: code.link }, code.link)),
      ),
    );
  app.replaceChildren(
    h(
      "div",
      { class: "print-controls" },
      h("h1", { class: "sheet-title" }, STRINGS.t("ui.console.sheet.title", { event })), // the screen's; not printed
      h("button", { type: "button", class: "primary", id: "print", onclick: () => window.print() }, C.print.print),
      h("button", { type: "button", class: "secondary", id: "print-back", onclick: back }, C.print.back),
    ),
    ...pages.map((page, index) =>
      h(
        "section",
        { class: "sheet-page" },
        h(
          "p",
          { class: "sheet-head" },
          h("strong", {}, C.sheet.head(event, index + 1, pages.length)),
          h("br"),
          C.sheet.how,
        ),
        h("div", { class: "sheet-grid" }, page.map(card)),
      ),
    ),
  );
  app.dataset.screen = "pairing-sheet";
  document.getElementById("print").focus();
}
