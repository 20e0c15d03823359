// tanglerag inspector, the run browser: a run's questions x methods with each cell's score, filtered on the
// server (GET /v1/runs/{run}/grid), and a question's answers and traces side by side (render.js shows them).
"use strict";

const CONTROLS = { metric: "metric", right_at: "right-at", show: "show", a: "method-a", b: "method-b", tangle: "tangle" };
const control = name => document.getElementById(CONTROLS[name] || name);

function setStatus(text, isError = false) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = isError ? "error" : "";
}

async function api(path) {
  const response = await fetch(path, { headers: headers() });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(`${response.status}: ${typeof body.error === "string" ? body.error : response.statusText}`);
  return body;
}

const runPath = name => name.split("/").map(encodeURIComponent).join("/");

async function initRuns() {
  const health = await (await fetch("/healthz")).json();
  document.getElementById("key-box").hidden = !health.auth;
  const hash = new URLSearchParams(location.hash.slice(1));
  document.getElementById("filters").addEventListener("change", event => {
    if (event.target.id === "api-key") loadRuns().catch(fail);
    else if (event.target.id === "run") { clearChoices(); loadGrid().catch(fail); }
    else loadGrid().catch(fail);
  });
  await loadRuns(hash);
}

const fail = error => setStatus(String(error.message || error), true);

function clearChoices() {
  for (const name of ["metric", "a", "b", "tangle"]) control(name).replaceChildren();
  document.getElementById("question-view").hidden = true;
  document.getElementById("results").replaceChildren();
}

// The runs under the served folder; the permalink's choices (run, filters, open question) are applied first.
async function loadRuns(hash = new URLSearchParams()) {
  const runs = await api("/v1/runs");
  const box = control("run");
  finished = new Map(runs.map(r => [r.name, r.finished]));
  box.replaceChildren(...runs.map(r => el("option", { value: r.name }, runLabel(r))));
  if (!runs.length) return setStatus("no eval runs in this folder: run `tanglerag eval --out DIR` into it");
  if (hash.get("run")) box.value = hash.get("run");
  for (const name of Object.keys(CONTROLS)) {
    if (!hash.has(name)) continue;
    const input = control(name);
    if (input.tagName === "SELECT" && ![...input.options].some(o => o.value === hash.get(name))) input.append(el("option", { value: hash.get(name) }, hash.get(name)));
    input.value = hash.get(name);
  }
  await loadGrid();
  if (hash.get("q")) await openQuestion(hash.get("q"), (hash.get("m") || "").split(",").filter(Boolean));
}

let latest = 0;  // filters change faster than grids come back: only the newest request's grid is shown
let finished = new Map();  // run name -> finished, as /v1/runs last said
let refresh = null;
const REFRESH_MS = 3000;  // a run still going is read again this often, until it finishes

function runLabel(run) {
  return `${run.name} (${run.dataset}${run.finished ? "" : ", running or interrupted"})`;
}

// While the run shown has only its checkpoint (still running, or interrupted), its grid is read again every few
// seconds with the same filters, so questions appear as the run answers them; a finished run is not polled.
function watch(run) {
  clearTimeout(refresh);
  if (finished.get(run) !== false) return;
  refresh = setTimeout(async () => {
    const runs = await api("/v1/runs").catch(() => null);
    if (runs) {
      finished = new Map(runs.map(r => [r.name, r.finished]));
      for (const option of control("run").options) {
        const info = runs.find(r => r.name === option.value);
        if (info) option.textContent = runLabel(info);
      }
    }
    if (control("run").value === run) await loadGrid().catch(() => watch(run));
  }, REFRESH_MS);
}

async function loadGrid() {
  const run = control("run").value;
  const params = new URLSearchParams();
  for (const name of Object.keys(CONTROLS)) if (control(name).value) params.set(name, control(name).value);
  setStatus(`reading ${run}...`);
  const asked = ++latest;
  let grid;
  try {
    grid = await api(`/v1/runs/${runPath(run)}/grid?${params}`);
  } catch (error) {
    if (asked === latest) throw error;
    return;  // an older request's error is as stale as its grid would be
  }
  if (asked !== latest) return;
  fillChoices(grid);
  renderGrid(grid);
  writeHash();
  const shown = `${grid.rows.length} of ${grid.total} questions` +
    (finished.get(run) === false ? ` · the run is still going (or was interrupted): read again every ${REFRESH_MS / 1000} s` : "");
  setStatus(grid.rows.length ? `${shown} · click a question for A and B's traces, a score for that method's` : `${shown}: none matches these filters`);
  watch(run);
}

function fillChoices(grid) {
  const options = (box, values, labels = values) => box.replaceChildren(...values.map((v, i) => el("option", { value: v }, labels[i])));
  options(control("metric"), grid.metrics);
  options(control("a"), grid.methods);
  options(control("b"), ["", ...grid.methods], ["(none)", ...grid.methods]);
  const kinds = Object.keys(grid.tangles).sort();
  options(control("tangle"), ["", ...kinds, "untangled"], ["any", ...kinds.map(k => `${k} (${grid.tangles[k]})`), "untangled"]);
  for (const name of ["metric", "a", "b", "tangle"]) control(name).value = grid.query[name] || "";
  control("show").value = grid.query.show;
  control("right_at").value = grid.query.right_at;
}

function renderGrid(grid) {
  const { a, b } = grid.query;
  const head = el("tr", {}, el("th", {}, "question"), el("th", {}, "tangles"),
    grid.methods.map(m => el("th", { class: m === a ? "method-a" : m === b ? "method-b" : "" }, m, m === a ? " (A)" : m === b ? " (B)" : "")));
  const rows = grid.rows.map(row => el("tr", { "data-id": row.id },
    el("td", { class: "qcell" }, el("button", { type: "button", class: "qopen", onclick: () => openQuestion(row.id, [a, b].filter(Boolean)) }, row.question),
      el("div", { class: "gold" }, `${row.id} · gold: ${row.gold.join(" | ")}`)),
    el("td", {}, row.tangles.map(t => el("span", { class: "chip" }, t))),
    grid.methods.map(m => scoreCell(row, m, a, b))));
  const means = el("tr", { class: "means" }, el("th", {}, `mean ${grid.query.metric || ""} over the rows shown`), el("th", {}),
    grid.methods.map(m => el("th", { class: "num" }, grid.means[m] === null ? "–" : grid.means[m].toFixed(3))));
  document.getElementById("grid").replaceChildren(el("thead", {}, head), el("tbody", {}, rows), el("tfoot", {}, means));
}

function scoreCell(row, method, a, b) {
  const cell = row.cells[method];
  if (!cell) return el("td", { class: "cell na" }, "not answered");
  const verdict = cell.right === null ? "na" : cell.right ? "right" : "wrong";
  const other = method === a ? b : a;
  return el("td", { class: `cell ${verdict}`, "data-method": method },
    el("button", { type: "button", class: "score", title: `open ${method}'s trace`, onclick: () => openQuestion(row.id, [method, other].filter(Boolean)) },
      cell.score === null ? "n/a" : String(Math.round(cell.score * 1000) / 1000)),
    el("div", { class: "ans", title: cell.answer }, cell.answer));
}

// One question: the chosen methods' answers, passages and traces in columns side by side.
async function openQuestion(id, methods) {
  const run = control("run").value;
  const found = await api(`/v1/runs/${runPath(run)}/question?id=${encodeURIComponent(id)}`).catch(error => { fail(error); return null; });
  if (!found) return;
  const chosen = methods.length ? methods : found.answers.slice(0, 2).map(x => x.method);
  const answers = chosen.map(m => found.answers.find(x => x.method === m)).filter(Boolean);
  const view = document.getElementById("question-view");
  view.hidden = false;
  view.replaceChildren(el("h2", {}, found.question), el("p", { class: "gold" }, `${found.id} · gold: ${found.gold.join(" | ")} `,
    found.tangles.map(t => el("span", { class: "chip" }, t))));
  document.getElementById("results").replaceChildren(...answers.map((answer, i) => {
    const column = el("section", { class: "column", id: `col-${i}`, "data-method": answer.method, "aria-label": answer.method },
      el("h2", {}, answer.method, " ", el("small", { class: "state" }, metricLine(answer.metrics))));
    renderAnswer(column, i, answer);
    return column;
  }));
  writeHash(id, answers.map(x => x.method));
  document.querySelectorAll("#grid tr.open").forEach(row => row.classList.remove("open"));
  const row = [...document.querySelectorAll("#grid tbody tr")].find(r => r.dataset.id === id);
  if (row) row.classList.add("open");
  view.scrollIntoView({ block: "start" });
}

function metricLine(metrics) {
  return Object.entries(metrics).filter(([, v]) => v !== null).map(([k, v]) => `${k} ${Math.round(v * 1000) / 1000}`).join(" · ");
}

function writeHash(question = null, methods = []) {
  const params = new URLSearchParams({ run: control("run").value });
  for (const name of Object.keys(CONTROLS)) if (control(name).value) params.set(name, control(name).value);
  if (question) { params.set("q", question); params.set("m", methods.join(",")); }
  history.replaceState(null, "", `#${params}`);
}

initRuns().catch(fail);
