// COrg's step views: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

const RELATION_COLOURS = {
  ambiguous: "#2454a6", duplicated: "#7a7a7a", counterfactual: "#b42318", distracting: "#c77700", none: "#cfd5dd",
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
  const relations = oneEdgePerPair(step.edges.filter(e => e.relation !== "none" && where.has(e.source) && where.has(e.target)));
  for (const edge of relations) {
    const [x1, y1] = where.get(edge.source), [x2, y2] = where.get(edge.target);
    const judged = edge.origin === "llm";
    const line = svg("line", { x1, y1, x2, y2, stroke: RELATION_COLOURS[edge.relation], "stroke-width": 3,
      class: `edge ${edge.relation} ${judged ? "judged" : "inferred"}`, "stroke-dasharray": judged ? "" : "6 4" });
    line.append(svg("title"));
    line.lastChild.textContent = `${edge.source} – ${edge.target}: ${edge.relation} (${judged ? "judged by the LLM" : `inferred: ${edge.origin}`})`;
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
    .map(([k, colour]) => el("span", {}, el("i", { style: `background:${colour}` }), k)),
    el("span", {}, el("i", { style: "background:repeating-linear-gradient(90deg,#1d2430 0 4px,transparent 4px 7px)" }),
      "dashed: inferred (mirrored or by rule), solid: judged by the LLM"));
  // What the graph could not read from the LLM's replies (pairs in pairwise mode, contexts in extract mode) has no
  // relation here: that is not "no relations found", and the view says so.
  const unread = step.unparsed || 0;
  const what = step.mode === "pairwise" ? ["pair", "pairs"] : ["context", "contexts"];
  const unreadNote = unread ? el("p", { class: "warn unread" }, `${unread} ${unread === 1 ? what[0] : what[1]} could not be ` +
    "read from the LLM's replies: they have no relation here, which says nothing about the contexts") : null;
  const alone = relations.length ? null : el("p", {}, unread ? "no relation could be read" : "no relations found: every context stands on its own");
  // The circles are numbered as the prompts numbered the contexts; the key names each number's passage id, as the
  // tables below name passages.
  const key = el("p", { class: "pid graph-key" }, step.nodes.map(node =>
    `[${node.number}] ${node.passage_id}${node.entity ? ` (${node.entity})` : ""}`).join(" · "));
  const judged = `${step.pairs_judged} of ${step.pairs_total} pairs judged by the LLM` +
    (unread ? `, ${unread} ${unread === 1 ? what[0] : what[1]} unreadable` : "");
  return el("div", {}, canvas, key, legend, unreadNote, alone, el("p", { class: "pid" }, `${step.mode} mode · ${judged}`));
}

// A pair judged one way and mirrored the other is drawn once, as the judged edge.
function oneEdgePerPair(edges) {
  const byPair = new Map();
  for (const edge of edges) {
    const key = [edge.source, edge.target].sort().join("\u0000");
    const seen = byPair.get(key);
    if (!seen || (seen.origin !== "llm" && edge.origin === "llm")) byPair.set(key, edge);
  }
  return [...byPair.values()];
}

registerStepView("corg_graph", "Context graph", graphView);
registerStepView("groups", "Groups and dropped contexts", step => el("div", {},
    el("ol", {}, step.groups.map(g => el("li", {}, g.passage_ids.join(", "), g.question ? el("div", { class: "pid" }, `asked: ${g.question}`) : null))),
    step.dropped.length ? el("table", {}, el("tr", {}, el("th", {}, "dropped"), el("th", {}, "reason"), el("th", {}, "kept instead")),
      step.dropped.map(d => el("tr", {}, el("td", {}, d.passage_id), el("td", {}, d.reason), el("td", {}, d.kept_instead || "")))) : el("p", {}, "no context dropped")));
registerStepView("context_ranking", "Context ranking");
registerStepView("summary", "Summary");
registerStepView("corg_conflicts", "Conflicting answers", step => step.overruled.length
  ? el("table", {}, el("tr", {}, el("th", {}, "overruled"), el("th", {}, "contexts"), el("th", {}, "lost to")),
      step.overruled.map(o => el("tr", {}, el("td", {}, o.answer), el("td", {}, `${o.support}: ${o.citations.join(", ")}`),
        el("td", {}, `${o.kept_answer} (${o.kept_support})`))))
  : el("p", {}, "no answer contradicted a better-backed one"));
