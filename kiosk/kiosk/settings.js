// The kiosk's TD settings, behind a TD's name and password: which division this kiosk serves (unless its
// enrolment fixes it), and unpairing it.

import { api, h } from "../shared/api.js";
import { STRINGS as S } from "../shared/strings.js";
import { heading } from "../shared/ui.js";
import { show } from "./screens.js";
import { DIVISION_KEY, clearAbandoned, divisions, go, state } from "./state.js";

const SETTINGS_S = 60; // the settings left alone this long close

export function showTdLogin() {
  const name = h("input", { id: "td-name", autocomplete: "off", maxlength: String(state.event.input_rules.max_name) });
  const password = h("input", { id: "td-password", type: "password", autocomplete: "off", maxlength: "1000" });
  const note = h("p", { class: "message", role: "alert" });
  const form = h(
    "form",
    {
      class: "screen td-login",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const td = await api("/api/td-check", {
            method: "POST",
            body: { name: name.value, password: password.value },
          });
          showSettings(td.actor);
        } catch (error) {
          password.value = "";
          note.textContent = error.kind === "network" ? S.unreachable : error.message;
        }
      },
    },
    heading(S.tdTitle),
    h("label", { for: "td-name" }, S.tdName, name),
    h("label", { for: "td-password" }, S.tdPassword, password),
    note,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", onclick: go.idle }, S.close),
      h("button", { type: "submit", class: "primary" }, S.tdUnlock),
    ),
  );
  show("td-login", form, name);
  clearAbandoned(SETTINGS_S);
}

function showSettings(td) {
  const enrolledFor = state.me?.division;
  const current = localStorage.getItem(DIVISION_KEY) || "";
  const options = [
    ["", S.allDivisions],
    ...divisions().map((d) => [d.name, S.divisionOption(d.name, d.lexicon_view.shown_name)]),
  ];
  const choices = h(
    "fieldset",
    { class: "settings-divisions", disabled: Boolean(enrolledFor) },
    h("legend", {}, S.settingsDivision),
    options.map(([value, label]) =>
      h(
        "label",
        {},
        h("input", {
          type: "radio",
          name: "division",
          value,
          checked: value === current,
          onchange: () => (value ? localStorage.setItem(DIVISION_KEY, value) : localStorage.removeItem(DIVISION_KEY)),
        }),
        label,
      ),
    ),
  );
  const page = h(
    "section",
    { class: "screen settings" },
    heading(S.tdTitle),
    h("p", {}, S.enrolledAs(state.me?.actor || "?")),
    h("p", { class: "hint" }, S.openedBy(td)),
    enrolledFor ? h("p", {}, S.enrolledFor(enrolledFor)) : null,
    choices,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", id: "unpair", onclick: () => go.forget("") }, S.unpair),
      h("button", { type: "button", class: "primary", onclick: go.idle }, S.close),
    ),
  );
  show("settings", page);
  clearAbandoned(SETTINGS_S);
}
