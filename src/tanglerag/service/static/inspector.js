// tanglerag inspector, the ask page: asks the service, streams progress, and shows the answer with its trace
// (render.js shows it); "Search only" lists the passages a question retrieves, as an answer lists them.
"use strict";

// what a person picks from for their own documents (docs/methods.md, "Which method for what"), apart from the rest
const FOR_PEOPLE = {
  vetted: "your documents, the default",
  ledger: "sources disagree, full report",
  concat: "fastest",
  corg: "ambiguous",
  auto: "picks for you",
};
const PAPER_LABEL = { baseline: "baseline", peer: "peer", ours: "ours" };

async function init() {
  const health = await (await fetch("/healthz")).json();
  document.getElementById("key-box").hidden = !health.auth;
  document.getElementById("nav").hidden = !health.runs;
  const methods = await (await fetch("/v1/methods")).json();
  const option = m => el("option", { value: m.name, title: `${m.description} (LLM calls: ${m.calls})` },
    FOR_PEOPLE[m.name] ? `${m.name}: ${FOR_PEOPLE[m.name]}` : `${m.name} (${PAPER_LABEL[m.paper] || "paper " + m.paper})`);
  for (const select of ["method-a", "method-b"]) {
    const box = document.getElementById(select);
    box.append(el("optgroup", { label: "For your documents" },
      Object.keys(FOR_PEOPLE).map(name => methods.find(m => m.name === name)).filter(Boolean).map(option)));
    box.append(el("optgroup", { label: "Papers, baselines, peers" },
      methods.filter(m => !FOR_PEOPLE[m.name]).map(option)));
  }
  document.getElementById("method-a").value = "vetted";
  setStatus(health.index ? `model ${health.model}` : "no index yet: add documents through POST /v1/index/documents");
  document.getElementById("ask").addEventListener("submit", onAsk);
  document.getElementById("search-button").addEventListener("click", onSearch);
  document.getElementById("stop-button").addEventListener("click", () => running && running.abort());
  if (readPermalink()) document.getElementById("ask").requestSubmit();
}

function setStatus(text, isError = false) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = isError ? "error" : "";
}

// -- asking: every chosen method at once, one stream each; Stop aborts them (the server then cancels) -----------
let running = null;  // the AbortController of the questions in flight

async function onAsk(event) {
  event.preventDefault();
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  const methods = [document.getElementById("method-a").value, document.getElementById("method-b").value].filter(Boolean);
  writePermalink(question, methods);
  const results = document.getElementById("results");
  const columns = methods.map((method, i) => new Column(i, method));
  results.replaceChildren(...columns.map(c => c.node));
  const [askButton, stopButton] = [document.getElementById("ask-button"), document.getElementById("stop-button")];
  running = new AbortController();
  askButton.disabled = true; stopButton.disabled = false;
  setStatus(`asking ${methods.join(" and ")}...`);
  const ticker = setInterval(() => columns.forEach(c => c.tick()), 200);
  try {
    const failures = await Promise.all(columns.map(c => c.ask(question, running.signal)));
    const failed = failures.map((f, i) => f && `${methods[i]}: ${f}`).filter(Boolean);
    if (running.signal.aborted) setStatus("stopped");
    else if (failed.length) setStatus(failed.join(" · "), true);
    else setStatus("done");
  } finally {
    clearInterval(ticker);
    running = null;
    askButton.disabled = false; stopButton.disabled = true;
  }
}

// -- search only: the passages the question retrieves, ranked, with where each stands; no LLM call ---------------
async function onSearch() {
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  const body = { query: question, top_k: Number(document.getElementById("top-k").value) || undefined };
  setStatus("searching...");
  try {
    const response = await fetch("/v1/search", { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const found = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) return setStatus(`${response.status}: ${typeof found.error === "string" ? found.error : response.statusText}`, true);
    const state = `${found.passages.length} passages · ${found.usage.seconds.toFixed(3)}s · no LLM call`;
    document.getElementById("results").replaceChildren(el("section", { class: "column", id: "col-0", "aria-label": "search" },
      el("h2", {}, "search ", el("small", { class: "state" }, state)),
      found.passages.length ? found.passages.map((p, i) => passageView(p, i, 0, [])) : el("p", { class: "pid" }, "no passages")));
    setStatus("done");
  } catch (error) {
    setStatus(`cannot reach the service: ${error}`, true);
  }
}

function writePermalink(question, methods) {
  const params = new URLSearchParams({ q: question, m: methods.join(","), k: document.getElementById("top-k").value });
  const user = document.getElementById("user").value.trim();
  if (user) params.set("u", user);
  history.replaceState(null, "", `#${params}`);
}

function readPermalink() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.get("q")) return false;
  const [a, b] = (params.get("m") || "vetted").split(",");
  document.getElementById("question").value = params.get("q");
  document.getElementById("method-a").value = a;
  document.getElementById("method-b").value = b || "";
  document.getElementById("top-k").value = params.get("k") || "5";
  document.getElementById("user").value = params.get("u") || "";
  return true;
}

// One method's column: a live state line (queued, running with the elapsed time, then the cost), the timeline of
// stages, and when the answer arrives, the answer with its trace.
class Column {
  constructor(index, method) {
    this.index = index; this.method = method;
    this.state = el("small", { class: "state" }, "queued");
    this.timeline = el("ol", { class: "timeline", "aria-label": "timeline" });
    this.node = el("section", { class: "column", id: `col-${index}`, "data-method": method, "aria-label": method },
      el("h2", {}, method, " ", this.state), this.timeline);
    this.started = performance.now(); this.firstEvent = null; this.open = []; this.done = false; this.calls = [];
    this.early = null; this.draft = null;  // the passages as retrieved and the answer as it is written, till it arrives
  }

  tick() {
    if (this.done) return;
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    const stage = this.open.length ? ` · ${this.open[this.open.length - 1].dataset.stage}` : "";
    this.state.textContent = this.firstEvent === null ? `queued ${seconds}s` : `running ${seconds}s${stage}`;
    for (const row of this.open) row.querySelector(".took").textContent = `${((performance.now() - row.since) / 1000).toFixed(1)}s…`;
  }

  finish(text, isError = false) {
    this.done = true;
    this.state.textContent = text;
    this.state.className = `state${isError ? " failed" : ""}`;
  }

  // Returns null when the answer arrived, else what went wrong (one line).
  async ask(question, signal) {
    const body = { question, method: this.method, top_k: Number(document.getElementById("top-k").value) || undefined };
    const user = document.getElementById("user").value.trim();
    if (user) body.user = user;
    try {
      const response = await fetch("/v1/ask?stream=true", { method: "POST", headers: headers(), body: JSON.stringify(body), signal });
      if (!response.ok) {
        const error = await response.json().catch(() => ({ error: response.statusText }));
        return this.fail(`${response.status}: ${typeof error.error === "string" ? error.error : response.statusText}`);
      }
      return await this.read(response.body.getReader());
    } catch (error) {
      if (error.name !== "AbortError") return this.fail(String(error));
      this.finish("stopped");
      // the calls that finished before Stop came with their events: they can still be opened
      if (this.calls.length) this.node.append(callsView(this.calls));
      return null;
    }
  }

  fail(message) {
    this.finish("failed", true);
    this.node.append(el("p", { class: "error" }, message));
    return message;
  }

  async read(reader) {
    const decoder = new TextDecoder();
    let buffer = "", failure = null;
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
        if (kind === "answer") this.answered(data);
        else if (kind === "error") failure = this.fail(`${data.status}: ${data.error}`);
        else this.progress(kind, data);
      }
    }
    return failure;
  }

  progress(kind, event) {
    if (this.firstEvent === null) this.firstEvent = performance.now();
    this.handle(kind, event);
    this.tick();
  }

  handle(kind, event) {
    if (kind === "stage_start") {
      // A stage a method enters again (COrg's rerank: the reranker, later the plural question) is one row, as it is
      // one line of the cost table: its calls add up, and its seconds are the stage's total so far at each end.
      const again = [...this.timeline.children].find(r => r.dataset.stage === event.stage && !this.open.includes(r));
      const row = again || el("li", { "data-stage": event.stage }, el("span", { class: "name" }, event.stage),
        el("span", { class: "calls" }, ""), el("span", { class: "took" }, "0.0s…"), el("span", { class: "bar" }));
      row.className = "running"; row.since = performance.now() - 1000 * (row.seconds || 0); row.callCount = row.callCount || 0;
      this.open.push(row);
      if (!again) this.timeline.append(row);
    } else if (kind === "stage_end") {
      const i = this.open.map(r => r.dataset.stage).lastIndexOf(event.stage);
      if (i < 0) return;
      const [row] = this.open.splice(i, 1);
      row.className = "ended"; row.seconds = event.data.seconds;
      row.querySelector(".took").textContent = `${Number(event.data.seconds).toFixed(2)}s`;
    } else if (kind === "passages") {
      // what the method will read, shown the moment retrieval ends (the answer takes seconds to minutes more); a
      // method that ranks them sends them again in the order its answer numbers them, which replaces the first list
      const heading = this.early ? "Passages, as the method ranked them (the answer's [n] number these)"
                                 : "Passages (retrieved; the answer is being worked out)";
      const early = el("div", { class: "early" }, el("h3", {}, heading),
        ...event.data.passages.map((p, i) => passageView(p, i, this.index, [])));
      if (this.early) this.early.replaceWith(early); else this.node.append(early);
      this.early = early;
    } else if (kind === "token") {
      if (!this.draft) {
        this.draft = el("div", { class: "answer draft", "aria-label": "answer so far" });
        this.node.insertBefore(this.draft, this.early || null);
      }
      this.draft.textContent += event.data.text;
    } else if (kind === "batch") {
      // a batch's calls are charged when its last one ends: count them as they end
      const row = this.open[this.open.length - 1];
      if (row) row.querySelector(".calls").textContent = `${event.data.done} of ${event.data.planned} calls`;
    } else if (kind === "llm_call") {
      if (event.data.call) this.calls.push(event.data.call);
      const row = this.open[this.open.length - 1];
      if (row) row.querySelector(".calls").textContent = `${++row.callCount} call${row.callCount > 1 ? "s" : ""}`;
    }
  }

  answered(answer) {
    const u = answer.usage;
    const calls = u.llm_calls + u.cached_calls;
    this.finish(`${calls} LLM call${calls === 1 ? "" : "s"}${u.cached_calls ? ` (${u.cached_calls} cached)` : ""} · ${u.seconds.toFixed(2)}s`);
    const longest = Math.max(...[...this.timeline.children].map(r => r.seconds || 0), 0.001);
    for (const row of this.timeline.children) row.querySelector(".bar").style.width = `${Math.round(100 * (row.seconds || 0) / longest)}%`;
    for (const early of [this.draft, this.early]) if (early) early.remove();  // the answer shows both, cited
    renderAnswer(this.node, this.index, answer);
  }
}

init().catch(error => setStatus(`cannot reach the service: ${error}`, true));
