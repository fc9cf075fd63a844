// The server status page: what the server serves, from /api/health.

const $ = (selector) => document.querySelector(selector);

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function render(health) {
  $("#server-state").textContent = "Server running";
  $("#server-state").className = "state ok";
  $("#version").textContent = `wordjudge ${health.version}`;
  $("#demo-banner").hidden = !health.demo;
  const rows = $("#lexicons tbody");
  rows.replaceChildren();
  for (const lexicon of health.lexicons) {
    const tr = document.createElement("tr");
    tr.append(
      cell(lexicon.shown_name, "name"),
      cell(lexicon.word_count.toLocaleString("en")),
      cell(lexicon.edition),
      cell(lexicon.short_fingerprint, "fingerprint"),
    );
    tr.title = `fingerprint ${lexicon.fingerprint}`;
    rows.append(tr);
  }
}

async function refresh() {
  try {
    const response = await fetch("/api/health", { cache: "no-store" });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    render(await response.json());
  } catch (error) {
    $("#server-state").textContent = `Cannot reach the server (${error.message})`;
    $("#server-state").className = "state error";
  }
}

refresh();
setInterval(refresh, 10000);
