// Post-fusion's step views: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

registerStepView("answer_pool", "Post-fusion votes", step => el("div", {},
    el("table", { class: "votes" }, el("tr", {}, el("th", {}, "answer"), el("th", {}, "votes"), el("th", {}, "from passages")),
      step.tally.map(t => el("tr", { class: t.answer === step.winner ? "cited" : "" }, el("td", {}, t.answer, t.answer === step.winner ? " ✓" : ""),
        el("td", { class: "num" }, t.votes), el("td", {}, t.passage_ids.join(", "))))),
    el("p", {}, `${step.pool.filter(a => a.unknown).length} of ${step.pool.length} passages said unknown${step.voted ? "" : "; no vote was needed"}`)));
registerStepView("fallback", "Fallback");
registerStepView("distill", "Distillation");
registerStepView("rationale", "Rationale");
