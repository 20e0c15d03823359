// auto's step view: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

// The tangle found, the method chosen and why, what the probe's call gave for each passage, then every signal the
// probe measured.
registerStepView("auto", "Tangle and route", (step, index) => el("div", {},
  el("p", {}, el("strong", {}, step.tangle), ` → ${step.route}: ${step.why}`),
  (step.passages || []).length ? el("table", { class: "probe" },
    el("tr", {}, el("th", {}, "passage"), el("th", {}, "its answer"), el("th", {}, "about")),
    step.passages.map(p => el("tr", {}, el("td", {}, citeButton(p.number, index)), el("td", {}, p.answer),
      el("td", {}, p.descriptor)))) : null,
  el("table", { class: "signals" }, Object.entries(step.signals).map(([name, value]) =>
    el("tr", {}, el("td", {}, name.replaceAll("_", " ")), el("td", { class: "num" }, String(value)))))));
