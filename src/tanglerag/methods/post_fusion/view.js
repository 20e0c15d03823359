// Post-fusion's step views: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

// Each per-passage answer cites "[1]", its only passage: the marker is dropped here and the passages are given
// the numbers the answer's passage list uses.
registerStepView("answer_pool", "Post-fusion votes", (step, index, numberOf) => el("div", {},
    el("table", { class: "votes" }, el("tr", {}, el("th", {}, "answer"), el("th", {}, "votes"), el("th", {}, "from passages")),
      step.tally.map(t => el("tr", { class: t.answer === step.winner ? "cited" : "" },
        el("td", {}, t.answer.replace(/\s*\[\d+\]/g, ""), t.answer === step.winner ? " ✓" : ""),
        el("td", { class: "num" }, t.votes),
        el("td", {}, t.passage_ids.map(id => numberOf.has(id) ? citeButton(numberOf.get(id), index) : `${id} `))))),
    el("p", {}, `${step.pool.filter(a => a.unknown).length} of ${step.pool.length} passages said unknown${step.voted ? "" : "; no vote was needed"}`)));
registerStepView("fallback", "Fallback");
registerStepView("distill", "Distillation");
registerStepView("rationale", "Rationale");
