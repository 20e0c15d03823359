// PCAS's step view: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

registerStepView("personal_context", "Personal context", step => el("p", {}, step.text ? `“${step.text}” (score ${step.score.toFixed(3)}, λ=${step.lam})` : "no statement of the user was relevant"));
