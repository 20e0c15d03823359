// Astute RAG's step view: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

// The model's own passages, then each consolidation round's groups with their sources (retrieved documents as
// citation buttons, memory passages by name); the chosen groups are marked.
registerStepView("astute", "Memory, consolidation and choice", (step, index, numberOf) => {
  const source = id => numberOf.has(id) ? citeButton(numberOf.get(id), index) : `${id} `;
  const last = step.rounds.length - 1;
  return el("div", {},
    step.internal.length ? el("ol", { class: "memory" }, step.internal.map(t => el("li", {}, "(memory) ", t))) : el("p", {}, "Nothing recalled from memory."),
    step.rounds.map((groups, r) => el("table", { class: "groups" },
      el("tr", {}, el("th", {}, `round ${r + 1}: group`), el("th", {}, "states"), el("th", {}, "answer"), el("th", {}, "sources")),
      groups.map((g, i) => el("tr", { class: r === last && step.chosen_groups.includes(i + 1) ? "cited" : "" },
        el("td", { class: "num" }, i + 1, g.conflict ? " (conflict)" : ""), el("td", {}, g.statement), el("td", {}, g.answer),
        el("td", {}, g.sources.map(source)))))),
    el("p", {}, `Chose group(s) ${step.chosen_groups.join(", ") || "none"}: ${step.reason}`));
});
