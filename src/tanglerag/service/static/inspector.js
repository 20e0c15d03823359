// tanglerag inspector: asks the service, streams progress, and shows the answer with its trace.
// Plain DOM code, no third-party assets: all text from the corpus or the model goes in as textContent.
"use strict";

const RELATION_COLOURS = {
  ambiguous: "#2454a6", duplicated: "#7a7a7a", counterfactual: "#b42318", distracting: "#c77700", none: "#cfd5dd",
};

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
      box.append(el("option", { value: m.name, title: `${m.summary} (LLM calls: ${m.calls})` },
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

const STEP_TITLES = {
  corg_graph: "Context graph", groups: "Groups and dropped contexts", context_ranking: "Context ranking", summary: "Summary",
  answer_pool: "Post-fusion votes", fallback: "Fallback", distill: "Distillation", rationale: "Rationale",
  diva: "Interpretations, retrieval and verification", clarification_tree: "Tree of clarifications", personal_context: "Personal context",
  separation: "CDIT: passages left out", cdit: "CDIT: consistency judgments",
};

const STEP_VIEWS = {
  corg_graph: graphView,
  groups: step => el("div", {},
    el("ol", {}, step.groups.map(g => el("li", {}, g.passage_ids.join(", "), g.question ? el("div", { class: "pid" }, `asked: ${g.question}`) : null))),
    step.dropped.length ? el("table", {}, el("tr", {}, el("th", {}, "dropped"), el("th", {}, "reason"), el("th", {}, "kept instead")),
      step.dropped.map(d => el("tr", {}, el("td", {}, d.passage_id), el("td", {}, d.reason), el("td", {}, d.kept_instead || "")))) : el("p", {}, "no context dropped")),
  answer_pool: step => el("div", {},
    el("table", { class: "votes" }, el("tr", {}, el("th", {}, "answer"), el("th", {}, "votes"), el("th", {}, "from passages")),
      step.tally.map(t => el("tr", { class: t.answer === step.winner ? "cited" : "" }, el("td", {}, t.answer, t.answer === step.winner ? " ✓" : ""),
        el("td", { class: "num" }, t.votes), el("td", {}, t.passage_ids.join(", "))))),
    el("p", {}, `${step.pool.filter(a => a.unknown).length} of ${step.pool.length} passages said unknown${step.voted ? "" : "; no vote was needed"}`)),
  diva: step => el("div", {},
    el("p", {}, "retrieval: ", el("span", { class: `grade ${step.grade}` }, step.grade || "n/a"), ` · answered ${step.mode === "rag" ? "from the passages" : "closed-book"}`),
    step.reason ? el("p", {}, el("em", {}, step.reason)) : null,
    el("table", {}, el("tr", {}, el("th", {}, "interpretation"), el("th", {}, "covered")),
      step.interpretations.map(q => {
        const v = step.verification.find(x => x.interpretation === q);
        return el("tr", {}, el("td", {}, q), el("td", {}, v ? (v.covered === null ? "unreadable" : v.covered ? "yes" : "no") : "-"));
      })),
    el("details", {}, el("summary", {}, "retrieval per query"), el("ul", {}, step.retrievals.map(r => el("li", {}, r.query, ": ", r.passage_ids.join(", "))))),
    el("p", {}, "kept: ", step.kept.map(k => `${k.passage_id} (${k.relevance.toFixed(3)})`).join(", "))),
  clarification_tree: step => el("ol", {}, step.nodes.map(n => el("li", { style: `margin-left:${(n.depth - 1) * 1.2}rem` }, n.question, " → ", el("strong", {}, n.answer)))),
  cdit: step => el("div", {},
    el("table", {}, el("tr", {}, el("th", {}, "passage"), el("th", {}, `matches the question (${step.cmd})`)),
      step.judgments.map(j => el("tr", { class: j.consistent === false ? "error" : "" }, el("td", {}, j.passage_id),
        el("td", {}, j.consistent === null ? "unreadable (kept)" : j.consistent ? "yes" : "no (discarded)")))),
    el("p", {}, step.recorded ? `${step.witnesses_added} witnesses recorded; separated now: ${step.separated_now.map(p => p.join(" / ")).join(", ") || "none"}` : "no witnesses recorded",
      ` · answered by ${step.answer_method}`)),
  separation: step => el("table", {}, el("tr", {}, el("th", {}, "left out"), el("th", {}, "separated from")),
    step.dropped.map(d => el("tr", {}, el("td", {}, d.passage_id), el("td", {}, d.separated_from)))),
  personal_context: step => el("p", {}, step.text ? `“${step.text}” (score ${step.score.toFixed(3)}, λ=${step.lam})` : "no statement of the user was relevant"),
};

function graphView(step) {
  const size = 320, r = 130, cx = size / 2, cy = size / 2;
  const n = step.nodes.length;
  const where = new Map(step.nodes.map((node, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, n) - Math.PI / 2;
    return [node.passage_id, [cx + r * Math.cos(angle), cy + r * Math.sin(angle)]];
  }));
  const canvas = svg("svg", { viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: "img",
    "aria-label": `context graph: ${n} passages, ${step.edges.filter(e => e.relation !== "none").length} relations` });
  for (const edge of step.edges) {
    if (edge.relation === "none" || !where.has(edge.source) || !where.has(edge.target)) continue;
    const [x1, y1] = where.get(edge.source), [x2, y2] = where.get(edge.target);
    const line = svg("line", { x1, y1, x2, y2, stroke: RELATION_COLOURS[edge.relation], "stroke-width": 3, class: `edge ${edge.relation}` });
    line.append(svg("title")); line.lastChild.textContent = `${edge.source} – ${edge.target}: ${edge.relation} (${edge.origin})`;
    canvas.append(line);
  }
  for (const node of step.nodes) {
    const [x, y] = where.get(node.passage_id);
    const group = svg("g", { class: "node" });
    group.append(svg("circle", { cx: x, cy: y, r: 15, fill: "#fff", stroke: "#1d2430", "stroke-width": 1.5 }));
    const label = svg("text", { x, y: y + 5, "text-anchor": "middle", "font-size": 13 });
    label.textContent = node.number;
    const title = svg("title");
    title.textContent = `[${node.number}] ${node.passage_id}${node.entity ? ` — ${node.entity}` : ""}`;
    group.append(label, title);
    canvas.append(group);
  }
  const legend = el("div", { class: "legend" }, Object.entries(RELATION_COLOURS).filter(([k]) => k !== "none")
    .map(([k, colour]) => el("span", {}, el("i", { style: `background:${colour}` }), k)));
  return el("div", {}, canvas, legend, el("p", { class: "pid" }, `${step.mode} mode · ${step.pairs_judged} of ${step.pairs_total} pairs judged by the LLM`));
}

init().catch(error => setStatus(`cannot reach the service: ${error}`, true));
