// The TD console's set-up views: TD accounts, event settings, and the summary (pairing: console/pairing.js).

import { h } from "../shared/api.js";
import { STRINGS, followLanguage } from "../shared/strings.js";
import { call, limited, problem, ruleName, ruleText, table, when } from "./common.js";

const C = STRINGS.console;
const K = C.columns;

export function accountsView(me) {
  const list = h("div", {});
  const note = h("p", { class: "message", role: "alert" });
  const refresh = async () => {
    const { tds } = await call("/api/tds");
    list.replaceChildren(
      table(
        [K.name, K.added, K.by, K.state, K.actions],
        tds.map((t) =>
          h(
            "tr",
            {},
            h("td", {}, t.name),
            h("td", {}, when(t.created_at)),
            h("td", {}, t.created_by),
            h("td", {}, t.disabled_at ? C.tdDisabled(when(t.disabled_at)) : C.tdActive),
            h(
              "td",
              {},
              t.disabled_at || t.name === me
                ? ""
                : h(
                    "button",
                    {
                      type: "button",
                      class: "secondary small",
                      onclick: () =>
                        call(`/api/tds/${encodeURIComponent(t.name)}/disable`, { method: "POST" }).then(
                          refresh,
                          (error) => problem(note, error),
                        ),
                    },
                    C.disable,
                  ),
            ),
          ),
        ),
      ),
    );
  };
  const name = limited(h("input", { id: "td-new-name" }), "max_name");
  const password = limited(
    h("input", { id: "td-new-password", type: "password", autocomplete: "new-password" }),
    "max_password",
  );
  refresh();
  return h(
    "section",
    {},
    h("h2", {}, C.accounts),
    list,
    h(
      "form",
      {
        class: "add-td",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            await call("/api/tds", { method: "POST", body: { name: name.value, password: password.value } });
            name.value = password.value = "";
            note.textContent = "";
            refresh();
          } catch (error) {
            problem(note, error);
          }
        },
      },
      h(
        "div",
        { class: "fields" },
        h("label", { for: "td-new-name" }, K.name, name),
        h("label", { for: "td-new-password" }, C.password, password),
      ),
      h("button", { type: "submit", class: "primary" }, C.addTd),
    ),
    note,
  );
}

// The event form's fields: its name, rounds, pace, result time and (once the server keeps one) language.
function eventFields(event) {
  const name = h("input", {
    id: "event-name",
    value: event.name,
    maxlength: String(event.input_rules.max_event_name),
  });
  const rounds = h("input", { id: "event-rounds", type: "checkbox", checked: event.rounds });
  const perMinute = h("input", {
    id: "event-per-minute",
    type: "number",
    min: "0",
    max: "600",
    value: event.challenges_per_minute,
  });
  const seconds = h("input", {
    id: "event-seconds",
    type: "number",
    min: "3",
    max: "120",
    value: event.kiosk_result_seconds,
  });
  // The language of every screen, one of those the server lists: offered once it keeps one for the event.
  const language =
    typeof event.language === "string"
      ? h(
          "select",
          { id: "event-language" },
          event.input_rules.languages.map((l) =>
            h("option", { value: l, selected: l === event.language }, STRINGS.languageName(l)),
          ),
        )
      : null;
  return { name, rounds, perMinute, seconds, language };
}

// The divisions' rows (name, lexicon, rule, remove button) and addRow, which adds one (a new division by default).
function divisionRows(event, lexicons) {
  const rows = h("tbody", {});
  const addRow = (d = { name: "", lexicon: lexicons[0], rule: "five-per-word" }) => {
    const tr = h(
      "tr",
      { class: "division-row" },
      h(
        "td",
        {},
        h("input", {
          class: "division-name-input",
          value: d.name,
          maxlength: String(event.input_rules.max_event_name),
          "aria-label": K.division,
        }),
      ),
      h(
        "td",
        {},
        h(
          "select",
          { class: "division-lexicon", "aria-label": K.lexicon },
          lexicons.map((l) => h("option", { value: l, selected: l === d.lexicon }, l)),
        ),
      ),
      h(
        "td",
        {},
        h(
          "select",
          { class: "division-rule", "aria-label": K.rule },
          event.input_rules.challenge_rules.map((r) =>
            h(
              "option",
              { value: r.value, selected: r.value === d.rule, title: ruleText(r.value, r.text) },
              ruleName(r),
            ),
          ),
        ),
      ),
      h(
        "td",
        {},
        h("button", { type: "button", class: "secondary small", onclick: () => tr.remove() }, C.removeDivision),
      ),
    );
    rows.append(tr);
  };
  return { rows, addRow };
}

// The form's submit: what would change is shown for the TD to confirm, and only then saved.
async function saveEvent(submitted, { content, note, event, fields, rows }) {
  const { name, rounds, perMinute, seconds, language } = fields;
  submitted.preventDefault();
  const body = {
    name: name.value,
    ...(language ? { language: language.value } : {}),
    rounds: rounds.checked,
    challenges_per_minute: Number(perMinute.value),
    kiosk_result_seconds: Number(seconds.value),
    tables: event.tables, // set in event.toml: the form keeps it as it is
    division: [...rows.querySelectorAll("tr")].map((tr) => ({
      name: tr.querySelector(".division-name-input").value,
      lexicon: tr.querySelector(".division-lexicon").value,
      rule: tr.querySelector(".division-rule").value,
    })),
  };
  try {
    // What would change, with the kiosks serving each division and its challenges: the TD
    // confirms it in a dialog naming each change, and only then is it sent (confirmed).
    const preview = await call("/api/event/preview", { method: "POST", body });
    if (!preview.changes.length) {
      note.textContent = C.change.none;
      note.className = "ok";
      return;
    }
    if (!(await confirmChanges(content, preview.changes))) {
      note.textContent = C.change.cancelled;
      note.className = "message";
      return;
    }
    await call("/api/event", { method: "PUT", body: { ...body, confirm: true } });
    note.textContent = C.eventSaved;
    note.className = "ok";
    if (language) followLanguage(language.value); // the console too speaks the new language
  } catch (error) {
    note.className = "message";
    problem(note, error);
  }
}

export function eventView(content) {
  const note = h("p", { class: "message", role: "alert", id: "event-note" });
  content.append(note);
  Promise.all([call("/api/event"), call("/api/lexicons/available")]).then(
    ([event, available]) => {
      const lexicons = [...new Set([...available.names, ...available.served])].sort();
      const fields = eventFields(event);
      const { name, rounds, perMinute, seconds, language } = fields;
      const { rows, addRow } = divisionRows(event, lexicons);
      event.divisions.forEach(addRow);
      content.append(
        h(
          "form",
          {
            class: "event-form",
            onsubmit: (submitted) => saveEvent(submitted, { content, note, event, fields, rows }),
          },
          h("label", { for: "event-name" }, C.eventName, name),
          language ? h("label", { for: "event-language" }, C.language, language) : null,
          h("label", { for: "event-rounds", class: "inline" }, rounds, C.rounds),
          h("label", { for: "event-per-minute" }, C.perMinute, perMinute),
          h("label", { for: "event-seconds" }, C.resultSeconds, seconds),
          h(
            "table",
            {},
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                [K.division, K.lexicon, K.rule, K.actions].map((t) => h("th", { scope: "col" }, t)),
              ),
            ),
            rows,
          ),
          h("button", { type: "button", class: "secondary", onclick: () => addRow() }, C.addDivision),
          h("button", { type: "submit", class: "primary", id: "save-event" }, C.save),
        ),
      );
    },
    (error) => problem(note, error),
  );
}

// The changes a save would make, in a modal dialog (keyboard: Tab between the buttons, Escape cancels;
// Cancel has the focus first). Resolves true when the TD confirms.
function confirmChanges(content, changes) {
  const item = (change) =>
    h(
      "li",
      { class: change.needs_confirmation ? "change-item deliberate" : "change-item" },
      h("strong", {}, STRINGS.message(change.message)),
      change.division && change.what.startsWith("division.") && change.what !== "division.added"
        ? [
            h("br"),
            C.change.serving(change.devices.kiosk, change.devices.runner, change.division),
            "; ",
            C.change.recorded(change.challenges, change.division),
          ]
        : null,
      change.what === "division.rule" && change.challenges ? [h("br"), h("em", {}, C.change.penalty)] : null,
    );
  const dialog = h(
    "dialog",
    { id: "change-dialog", class: "change-dialog", "aria-labelledby": "change-dialog-title" },
    h(
      "form",
      { method: "dialog" },
      h("h2", { id: "change-dialog-title" }, C.change.title),
      h("p", {}, C.change.intro),
      h("ul", { class: "change-list" }, changes.map(item)),
      h(
        "p",
        { class: "dialog-buttons" },
        h(
          "button",
          { type: "submit", value: "cancel", class: "secondary", id: "change-cancel", autofocus: true },
          C.change.cancel,
        ),
        h("button", { type: "submit", value: "confirm", class: "primary", id: "change-confirm" }, C.change.confirm),
      ),
    ),
  );
  content.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    dialog.showModal();
  });
}

// A row of the summary. Each bar says what it measures: the challenges (against the largest count shown)
// and the share found acceptable (of this row's challenges), as text beside it.
function tallyRow(label, t, most) {
  const bar = h("span", { class: "bar" });
  bar.style.width = `${most ? (100 * t.challenges) / most : 0}%`; // CSSOM, which the page's CSP allows
  const share = t.acceptable_share;
  const fill = h("span", { class: "share-fill" });
  fill.style.width = `${100 * (share ?? 0)}%`;
  return h(
    "tr",
    {},
    h("td", {}, label),
    h("td", {}, STRINGS.formatNumber(t.challenges)),
    h("td", {}, STRINGS.formatNumber(t.acceptable)),
    h(
      "td",
      { class: "share" },
      share === null
        ? ""
        : [
            h("span", { class: "share-bar" }, fill),
            h("span", { class: "bar-label" }, C.summaryShare(STRINGS.formatPercent(share))),
          ],
    ),
    // Final verdicts: how many a re-check, reissue or ruling changed, how many await the TD's ruling.
    h("td", { class: "overturned" }, t.overturned ? `⚑ ${STRINGS.formatNumber(t.overturned)}` : "0"),
    h("td", { class: t.awaiting_ruling ? "verdict-awaiting" : "" }, STRINGS.formatNumber(t.awaiting_ruling)),
    h(
      "td",
      { class: "chart" },
      h("span", { class: "bar-track" }, bar),
      h("span", { class: "bar-label" }, C.summaryChallenges(t.challenges)),
    ),
    h(
      "td",
      {},
      t.most_challenged
        .slice(0, 5)
        .map((w) => C.mostWord(w.word, w.challenges))
        .join(", "),
    ),
  );
}

// The round report of a division (one round, or every round), opened as a page of its own to print.
function reportForm(summary, event) {
  const R = C.report;
  const division = h("select", { id: "report-division" });
  const round = h("select", { id: "report-round" });
  const link = h("a", { id: "report-link", class: "button primary", target: "_blank" }, R.open);
  const update = () => {
    const d = summary.divisions.find((x) => x.division === division.value);
    const chosen = round.value;
    round.replaceChildren(
      h("option", { value: "" }, R.everyRound),
      ...(d?.rounds || [])
        .filter((r) => r.round !== null)
        .map((r) => h("option", { value: String(r.round), selected: String(r.round) === chosen }, String(r.round))),
    );
    const params = new URLSearchParams({ print: "report", division: division.value });
    if (round.value) params.set("round", round.value);
    link.href = `/td?${params}`;
  };
  division.append(...event.divisions.map((d) => h("option", { value: d.name }, d.name)));
  division.addEventListener("change", update);
  round.addEventListener("change", update);
  update();
  return h(
    "form",
    { class: "report-form fields", onsubmit: (event) => event.preventDefault() },
    h("h2", {}, R.heading),
    h("label", { for: "report-division" }, K.division, division),
    h("label", { for: "report-round" }, K.round, round),
    link,
  );
}

export function summaryView(content) {
  const note = h("p", { class: "message", role: "alert" });
  content.append(note);
  Promise.all([call("/api/summary"), call("/api/event")]).then(
    ([summary, event]) => {
      const most = summary.total.challenges;
      const rows = [tallyRow(C.total, summary.total, most)];
      for (const d of summary.divisions) {
        rows.push(tallyRow(C.summaryDivision(d.division), d, most));
        for (const r of d.rounds) {
          const label = r.round === null ? C.summaryNoRound(d.division) : C.summaryRound(d.division, r.round);
          rows.push(tallyRow(label, r, most));
        }
      }
      const F = C.finalColumns;
      const headers = [
        K.division,
        K.challenges,
        K.acceptable,
        K.share,
        F.overturned,
        F.awaiting,
        K.chart,
        C.mostChallenged,
      ];
      content.append(
        reportForm(summary, event),
        h("p", { class: "summary-final" }, C.summaryFinal),
        table(headers, rows, { class: "summary" }),
      );
    },
    (error) => problem(note, error),
  );
}
