// tanglerag inspector: asks the service, streams progress, and shows the answer with its trace.
// Plain DOM code, no third-party assets: all text from the corpus or the model goes in as textContent.
"use strict";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

function headers() {
  const key = document.getElementById("api-key").value.trim();
  const h = { "Content-Type": "application/json" };
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

async function init() {
  const health = await (await fetch("/healthz")).json();
  document.getElementById("key-box").hidden = !health.auth;
  const methods = await (await fetch("/v1/methods")).json();
  for (const select of ["method-a", "method-b"]) {
    const box = document.getElementById(select);
    for (const m of methods) {
      box.append(el("option", { value: m.name, title: `${m.description} (LLM calls: ${m.calls})` },
        `${m.name} (${m.paper === "baseline" ? "baseline" : "paper " + m.paper})`));
    }
  }
  document.getElementById("method-a").value = "concat";
  setStatus(health.index ? `model ${health.model}` : "no index yet: add documents through POST /v1/index/documents");
  document.getElementById("ask").addEventListener("submit", onAsk);
}

function setStatus(text, isError = false) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = isError ? "error" : "";
}

async function onAsk(event) {
  event.preventDefault();
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  const methods = [document.getElementById("method-a").value, document.getElementById("method-b").value].filter(Boolean);
  const results = document.getElementById("results");
  results.replaceChildren();
  const button = document.getElementById("ask-button");
  button.disabled = true;
  try {
    for (const [i, method] of methods.entries()) {
      const column = el("section", { class: "column", id: `col-${i}`, "data-method": method, "aria-label": method });
      results.append(column);
      setStatus(`asking ${method}...`);
      const failure = await askInto(column, i, method, question);
      if (failure) { setStatus(`${method}: ${failure}`, true); return; }
    }
    setStatus("done");
  } finally {
    button.disabled = false;
  }
}

// Returns null when the answer arrived, else the error message.
async function askInto(column, index, method, question) {
  const body = { question, method, top_k: Number(document.getElementById("top-k").value) || undefined };
  const user = document.getElementById("user").value.trim();
  if (user) body.user = user;
  const log = el("div", { class: "progress", "aria-label": "progress" });
  column.append(el("h2", {}, method, " ", el("small", {}, "working...")), log);
  const response = await fetch("/v1/ask?stream=true", { method: "POST", headers: headers(), body: JSON.stringify(body) });
  if (!response.ok) {
    const error = await response.json().catch(() => ({ error: response.statusText }));
    column.append(el("p", { class: "error" }, `${response.status}: ${error.error}`));
    return error.error;
  }
  let failure = null;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const kind = (block.match(/^event: (.*)$/m) || [])[1];
      const data = JSON.parse((block.match(/^data: (.*)$/m) || [])[1] || "{}");
      if (kind === "answer") renderAnswer(column, index, data);
      else if (kind === "error") {
        failure = data.error;
        column.append(el("p", { class: "error" }, `${data.status}: ${data.error}`));
      }
      else log.append(el("div", {}, describeEvent(kind, data)));
      log.scrollTop = log.scrollHeight;
    }
  }
  return failure;
}

function describeEvent(kind, event) {
  if (kind === "stage_start") return `▶ ${event.stage}`;
  if (kind === "stage_end") return `■ ${event.stage} (${event.data.seconds}s)`;
  if (kind === "llm_call") return `  call in ${event.stage}: ${event.data.prompt_tokens}+${event.data.completion_tokens} tokens${event.data.cached ? " (cached)" : ""}`;
  return `  step: ${event.data.kind}`;
}

// -- the answer ------------------------------------------------------------------------------
function renderAnswer(column, index, answer) {
  column.querySelector("h2 small").textContent = `${answer.usage.llm_calls + answer.usage.cached_calls} LLM calls · ${answer.usage.seconds.toFixed(2)}s`;
  const numberOf = new Map(answer.passages.map((p, i) => [p.id, i + 1]));
  column.append(el("div", { class: "answer", "aria-label": "answer" }, withCitations(answer.answer, index, answer.passages.length)));
  if (answer.parts && answer.parts.length) {
    column.append(el("ul", { class: "parts" }, answer.parts.map(part => el("li", {},
      part.descriptor ? el("strong", {}, part.descriptor, ": ") : null, part.answer, " ",
      part.citations.map(id => citeButton(numberOf.get(id), index))))));
  }
  if (answer.user_context) column.append(el("p", {}, "used what we know about the user: ", el("em", {}, answer.user_context.text)));
  column.append(costTable(answer));
  for (const step of answer.trace.steps) column.append(renderStep(step, index, numberOf));
  column.append(el("h3", {}, "Passages"), ...answer.passages.map((p, i) => el("div", {
    class: `passage${answer.citations.includes(p.id) ? " cited" : ""}`, id: `c${index}-p${i + 1}`, tabindex: "-1",
  }, el("span", { class: "pid" }, `[${i + 1}] ${p.id} · ${p.score.toFixed(3)}`), el("div", {}, p.title ? el("strong", {}, p.title, ": ") : null, p.text))));
}

function withCitations(text, index, count) {
  const pieces = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    const n = Number(match[1]);
    if (n < 1 || n > count) continue;
    pieces.push(text.slice(last, match.index), citeButton(n, index));
    last = match.index + match[0].length;
  }
  pieces.push(text.slice(last));
  return pieces;
}

function citeButton(n, index) {
  if (!n) return null;
  return el("button", { type: "button", class: "cite", "aria-label": `show passage ${n}`, onclick: () => highlight(index, n) }, `[${n}]`);
}

function highlight(index, n) {
  document.querySelectorAll(`#col-${index} .passage.highlight`).forEach(node => node.classList.remove("highlight"));
  const target = document.getElementById(`c${index}-p${n}`);
  if (!target) return;
  target.classList.add("highlight");
  target.scrollIntoView({ block: "nearest" });
  target.focus({ preventScroll: true });
}

function costTable(answer) {
  const rows = Object.entries(answer.usage_by_stage).map(([stage, u]) => el("tr", {},
    el("td", {}, stage), el("td", { class: "num" }, u.llm_calls), el("td", { class: "num" }, u.cached_calls),
    el("td", { class: "num" }, u.prompt_tokens), el("td", { class: "num" }, u.completion_tokens),
    el("td", { class: "num" }, u.seconds.toFixed(2))));
  const u = answer.usage;
  rows.push(el("tr", {}, el("th", {}, "total"), el("th", { class: "num" }, u.llm_calls), el("th", { class: "num" }, u.cached_calls),
    el("th", { class: "num" }, u.prompt_tokens), el("th", { class: "num" }, u.completion_tokens), el("th", { class: "num" }, u.seconds.toFixed(2))));
  return el("details", { class: "cost", open: "" }, el("summary", {}, "Cost per stage"),
    el("table", {}, el("tr", {}, ["stage", "calls", "cached", "prompt tok", "completion tok", "seconds"].map(h => el("th", {}, h))), rows));
}

// -- method steps ----------------------------------------------------------------------------
function renderStep(step, index, numberOf) {
  const render = STEP_VIEWS[step.kind];
  const body = render ? render(step, index, numberOf) : el("pre", {}, JSON.stringify(step, null, 2));
  return el("details", { class: `step step-${step.kind}`, "data-kind": step.kind }, el("summary", {}, STEP_TITLES[step.kind] || step.kind), body);
}

// Step views live beside each method family's code (methods/<family>/view.js) and are served together as
// /views.js; each registers itself here. A step without a view is shown as its JSON.
const STEP_VIEWS = {};
const STEP_TITLES = {};
function registerStepView(kind, title, render) {
  STEP_TITLES[kind] = title;
  if (render) STEP_VIEWS[kind] = render;
}

init().catch(error => setStatus(`cannot reach the service: ${error}`, true));
