// The TD console's set-up views: pairing codes, TD accounts, event settings, and the summary.

import { h } from "./api.js";
import { LANGUAGES } from "./i18n.js";
import { STRINGS, followLanguage } from "./strings.js";
import { call, problem, ruleName, ruleText, svg, table, when } from "./td-common.js";

const C = STRINGS.console;
const K = C.columns;

const LOOPBACK = /^(127(\.\d+){3}|localhost|\[::1\])$/;

// Why a phone may not open a pairing link: for a link to this machine only, said in the language; any
// other note as the server wrote it.
function linkNote(code) {
  const host = new URL(code.link).hostname;
  return LOOPBACK.test(host) ? C.linkLoopback(host) : STRINGS.message(code.link_note_message, code.link_note);
}

export function enrolView(onEnrolled) {
  const role = h(
    "select",
    { id: "pair-role", name: "role" },
    h("option", { value: "kiosk" }, STRINGS.role("kiosk")),
    h("option", { value: "runner" }, STRINGS.role("runner")),
  );
  const division = h("select", { id: "pair-division", name: "division" }, h("option", { value: "" }, C.anyDivision));
  const name = h("input", { id: "pair-name", name: "name", maxlength: "40" });
  const result = h("div", { class: "pairing-result", role: "status" });
  call("/api/event").then((event) =>
    division.append(...event.divisions.map((d) => h("option", { value: d.name }, d.name))),
  );
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
          result.replaceChildren(
            h("p", { class: "pairing-code" }, C.code(code.code, when(code.expires_at))),
            svg(code.qr_svg),
            h("p", {}, h("a", { href: code.link }, code.link)),
            code.link_note ? h("p", { class: "message" }, linkNote(code)) : null,
          );
          name.value = "";
          onEnrolled();
        } catch (error) {
          problem(result, error);
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
    result,
  );
}

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
  const name = h("input", { id: "td-new-name", maxlength: "40" });
  const password = h("input", {
    id: "td-new-password",
    type: "password",
    autocomplete: "new-password",
    maxlength: "1000",
  });
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

export function eventView(content) {
  const note = h("p", { class: "message", role: "alert" });
  content.append(note);
  Promise.all([call("/api/event"), call("/api/lexicons/available")]).then(
    ([event, available]) => {
      const lexicons = [...new Set([...available.names, ...available.served])].sort();
      const name = h("input", { id: "event-name", value: event.name, maxlength: "100" });
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
      // The language of every screen: offered once the server keeps one for the event.
      const language =
        typeof event.language === "string"
          ? h(
              "select",
              { id: "event-language" },
              LANGUAGES.map((l) => h("option", { value: l, selected: l === event.language }, STRINGS.languageName(l))),
            )
          : null;
      const rows = h("tbody", {});
      const addRow = (d = { name: "", lexicon: lexicons[0], rule: "five-per-word" }) => {
        const tr = h(
          "tr",
          { class: "division-row" },
          h(
            "td",
            {},
            h("input", { class: "division-name-input", value: d.name, maxlength: "100", "aria-label": K.division }),
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
      event.divisions.forEach(addRow);
      content.append(
        h(
          "form",
          {
            class: "event-form",
            onsubmit: async (submitted) => {
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
                await call("/api/event", { method: "PUT", body });
                note.textContent = C.eventSaved;
                note.className = "ok";
                if (language) followLanguage(language.value); // the console too speaks the new language
              } catch (error) {
                note.className = "message";
                problem(note, error);
              }
            },
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

function tallyRow(label, t, most) {
  const share = t.acceptable_share === null ? "" : STRINGS.formatPercent(t.acceptable_share);
  const bar = h("span", { class: "bar", title: STRINGS.formatNumber(t.challenges) });
  bar.style.width = `${most ? (100 * t.challenges) / most : 0}%`; // CSSOM, which the page's CSP allows
  return h(
    "tr",
    {},
    h("td", {}, label),
    h("td", {}, STRINGS.formatNumber(t.challenges)),
    h("td", {}, STRINGS.formatNumber(t.acceptable)),
    h("td", {}, share),
    // Final verdicts: how many a re-check, reissue or ruling changed, how many await the TD's ruling.
    h("td", { class: "overturned" }, t.overturned ? `⚑ ${STRINGS.formatNumber(t.overturned)}` : "0"),
    h("td", { class: t.awaiting_ruling ? "verdict-awaiting" : "" }, STRINGS.formatNumber(t.awaiting_ruling)),
    h("td", { class: "chart" }, bar),
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

export function summaryView(content) {
  const note = h("p", { class: "message", role: "alert" });
  content.append(note);
  call("/api/summary").then(
    (summary) => {
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
      content.append(h("p", { class: "summary-final" }, C.summaryFinal), table(headers, rows, { class: "summary" }));
    },
    (error) => problem(note, error),
  );
}
