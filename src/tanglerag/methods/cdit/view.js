// CDIT's step views: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

registerStepView("cdit", "CDIT: consistency judgments", step => el("div", {},
    el("table", {}, el("tr", {}, el("th", {}, "passage"), el("th", {}, `matches the question (${step.cmd})`)),
      step.judgments.map(j => el("tr", { class: j.consistent === false ? "error" : "" }, el("td", {}, j.passage_id),
        el("td", {}, j.consistent === null ? "unreadable (kept)" : j.consistent ? "yes" : "no (discarded)")))),
    el("p", {}, step.recorded ? `${step.witnesses_added} witnesses recorded; separated now: ${step.separated_now.map(p => p.join(" / ")).join(", ") || "none"}` : "no witnesses recorded",
      ` · answered by ${step.answer_method}`)));
registerStepView("separation", "CDIT: passages left out", step => el("table", {}, el("tr", {}, el("th", {}, "left out"), el("th", {}, "separated from")),
    step.dropped.map(d => el("tr", {}, el("td", {}, d.passage_id), el("td", {}, d.separated_from)))));
