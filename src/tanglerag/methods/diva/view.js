// Diva's step views: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

registerStepView("diva", "Interpretations, retrieval and verification", step => el("div", {},
    el("p", {}, "retrieval: ", el("span", { class: `grade ${step.grade}` }, step.grade || "n/a"), ` · answered ${step.mode === "rag" ? "from the passages" : "closed-book"}`),
    step.reason ? el("p", {}, el("em", {}, step.reason)) : null,
    el("table", {}, el("tr", {}, el("th", {}, "interpretation"), el("th", {}, "covered")),
      step.interpretations.map(q => {
        const v = step.verification.find(x => x.interpretation === q);
        return el("tr", {}, el("td", {}, q), el("td", {}, v ? (v.covered === null ? "unreadable" : v.covered ? "yes" : "no") : "-"));
      })),
    el("details", {}, el("summary", {}, "retrieval per query"), el("ul", {}, step.retrievals.map(r => el("li", {}, r.query, ": ", r.passage_ids.join(", "))))),
    el("p", {}, "kept: ", step.kept.map(k => `${k.passage_id} (${k.relevance.toFixed(3)})`).join(", "))));
registerStepView("clarification_tree", "Tree of clarifications", step => el("ol", {}, step.nodes.map(n => el("li", { style: `margin-left:${(n.depth - 1) * 1.2}rem` }, n.question, " → ", el("strong", {}, n.answer)))));
