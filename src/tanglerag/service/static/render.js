// tanglerag inspector, shared by its pages: DOM helpers and how an answer with its trace is shown.
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

// -- the answer ------------------------------------------------------------------------------
function renderAnswer(column, index, answer) {
  const numberOf = new Map(answer.passages.map((p, i) => [p.id, i + 1]));
  column.append(el("div", { class: "answer", "aria-label": "answer" }, withCitations(answer.answer, index, answer.passages.length)));
  if (/^unknown\b/i.test(answer.answer.trim()))  // a bare "unknown" read as a fault to a newcomer
    column.append(el("p", { class: "unknown-note" }, "The documents do not say: no passage below answers the question as the method read them."));
  if (answer.cut) {
    column.append(el("p", { class: "cut", role: "note" },
      "Cut: the answer reached its token budget (methods.answer_tokens) before the model finished it."));
  }
  if (answer.parts && answer.parts.length) {
    column.append(el("ul", { class: "parts" }, answer.parts.map(part => el("li", {},
      part.descriptor ? el("strong", {}, part.descriptor, ": ") : null, part.answer, " ",
      part.citations.map(id => citeButton(numberOf.get(id), index))))));
  }
  if (answer.user_context) column.append(el("p", {}, "used what we know about the user: ", el("em", {}, answer.user_context.text)));
  if (answer.conflicts && answer.conflicts.length) column.append(conflictsPanel(answer, index, numberOf));
  column.append(exportLinks(answer), costTable(answer), callsView(answer.trace.calls));
  for (const step of answer.trace.steps) column.append(renderStep(step, index, numberOf));
  if (!answer.passages.length) {
    column.append(el("p", { class: "pid" }, "no passages: this answer was given without retrieval"));
    return;
  }
  column.append(el("h3", {}, "Passages"), ...answer.passages.map((p, i) => passageView(p, i, index, answer.citations)));
}

// A passage as the method was shown it, with where it stands in its file (page, section) and its document's date and
// source when it gives them; eval runs add the dataset's label (e.g. misinfo) and older runs kept no text.
function passageView(p, i, index, citations) {
  const about = [`[${i + 1}] ${p.id}`, typeof p.score === "number" ? p.score.toFixed(3) : null, p.location, p.date,
    p.source]
    .filter(Boolean).join(" · ");
  return el("div", { class: `passage${citations.includes(p.id) ? " cited" : ""}`, id: `c${index}-p${i + 1}`, tabindex: "-1" },
    el("span", { class: "pid" }, about), p.label ? el("span", { class: `label label-${p.label}` }, p.label) : null,
    p.text ? el("div", {}, p.title ? el("strong", {}, p.title, ": ") : null, p.text)
      : el("div", { class: "pid" }, "(this run did not keep the passage's text)"));
}

// The answer's conflict reports (its method's, or conflicts.report's): each one's kind, its sides with their verdicts,
// passages (with where they stand in their files, and the date, source and authority the report read),
// witnesses and, for a side set aside, why; and the rule that decided.
function conflictsPanel(answer, index, numberOf) {
  const step = answer.trace.steps.find(s => s.kind === "conflicts");
  const documents = step && step.documents ? step.documents : {};
  const placeOf = new Map(answer.passages.map(p => [p.id, p.location]));
  const source = id => {
    const meta = documents[id] || {};
    const about = [placeOf.get(id), meta.source, meta.date,
      typeof meta.authority === "number" ? `authority ${meta.authority}` : null];
    const shown = about.filter(Boolean).join(", ");
    return el("span", { class: "side-passage" }, numberOf.has(id) ? citeButton(numberOf.get(id), index) : id,
      shown ? ` (${shown})` : "", " ");
  };
  const last = r => r.trials.length ? r.trials[r.trials.length - 1] : null;
  const rule = r => r.rule || (last(r) ? `no policy decided (${last(r).policy}: ${last(r).outcome})` : "no policy decided");
  return el("section", { class: "conflicts", "aria-label": "conflicts" }, el("h3", {}, "Conflicts"),
    answer.conflicts.map(r => el("div", { class: `report kind-${r.kind}` },
      el("p", {}, el("strong", {}, r.kind.replaceAll("_", " ")), r.about ? ` about ${r.about}` : ""),
      el("ul", { class: "sides" }, r.sides.map(s => el("li", { class: `verdict-${s.verdict}` },
        // set aside only for being dated after the moment asked about: later, not false
        el("span", { class: "verdict" }, s.verdict === "rejected" && (s.note || "").startsWith("dated after") ? "later" : s.verdict), " ", el("strong", {}, s.answer), " ", s.passages.map(source),
        `· ${s.witnesses} witness${s.witnesses === 1 ? "" : "es"}`,
        s.note && s.verdict === "rejected" ? el("span", { class: "why" }, ` · ${s.note}`) : ""))),
      el("p", { class: "rule" }, "rule: ", rule(r)))));
}

function exportLinks(answer) {
  const json = JSON.stringify(answer, null, 2);
  const download = el("a", { class: "export", download: `tanglerag-${answer.method}.json`,
    href: URL.createObjectURL(new Blob([json], { type: "application/json" })) }, "download JSON");
  return el("p", { class: "exports" }, download, " · ", el("a", { class: "export", href: location.href }, "permalink"));
}

function withCitations(text, index, count) {
  const pieces = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    const n = Number(match[1]);
    const mark = n >= 1 && n <= count ? citeButton(n, index)
      : el("span", { class: "cite-missing", title: "the model cited a passage it was not given" }, match[0]);
    pieces.push(text.slice(last, match.index), mark);
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

// This run's seconds beside the model seconds the calls cost when first made (a cached call costs ~0 now).
function costTable(answer) {
  const modelSeconds = {};
  for (const call of answer.trace.calls) modelSeconds[call.stage] = (modelSeconds[call.stage] || 0) + call.model_seconds;
  const cells = (u, stage) => [u.llm_calls, u.cached_calls, u.prompt_tokens, u.completion_tokens, u.seconds.toFixed(2),
    (stage === null ? Object.values(modelSeconds).reduce((a, b) => a + b, 0) : modelSeconds[stage] || 0).toFixed(2)];
  const rows = Object.entries(answer.usage_by_stage).map(([stage, u]) => el("tr", {},
    el("td", {}, stage), cells(u, stage).map(v => el("td", { class: "num" }, v))));
  rows.push(el("tr", {}, el("th", {}, "total"), cells(answer.usage, null).map(v => el("th", { class: "num" }, v))));
  const head = ["stage", "calls", "cached", "prompt tok", "completion tok", "seconds now", "model seconds (original)"];
  return el("details", { class: "cost", open: "" }, el("summary", {}, "Cost per stage"),
    el("div", { class: "scroll" }, el("table", {}, el("tr", {}, head.map(h => el("th", {}, h))), rows)));
}

// Each LLM call: its stage, tokens and cost; a click shows the prompt it was sent and what came back.
function callsView(calls) {
  const items = calls.map((call, i) => el("details", { class: "call" },
    el("summary", {}, `#${i + 1} ${call.stage} · ${call.prompt_tokens}+${call.completion_tokens} tokens · `,
      call.cached ? `cached (originally ${call.model_seconds.toFixed(2)}s)` : `${call.model_seconds.toFixed(2)}s`,
      call.constrained ? " · JSON (schema)" : ""),
    call.messages.map(m => el("div", {}, el("strong", {}, m.role), el("pre", {}, m.content))),
    el("strong", {}, call.replies.length > 1 ? `${call.replies.length} replies` : "reply"),
    call.replies.map(r => el("pre", { class: "reply" }, r))));
  return el("details", { class: "calls" }, el("summary", {}, `LLM calls (${calls.length})`),
    items.length ? items : el("p", {}, "no LLM call"));
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

