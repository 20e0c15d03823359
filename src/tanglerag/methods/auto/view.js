// auto's step view: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

// The tangle read, the method chosen and why, then every signal the probe measured.
registerStepView("auto", "Tangle and route", step => el("div", {},
  el("p", {}, el("strong", {}, step.tangle), ` → ${step.route}: ${step.why}`),
  el("table", { class: "signals" }, Object.entries(step.signals).map(([name, value]) =>
    el("tr", {}, el("td", {}, name.replaceAll("_", " ")), el("td", { class: "num" }, String(value)))))));
