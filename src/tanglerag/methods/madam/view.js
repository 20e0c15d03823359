// MADAM-RAG's step view: registered into the inspector (service/static/inspector.js), served as part of /views.js.
"use strict";

// Rounds x agents: one row per agent (its document's number in the answer's passage list), one column per round;
// a changed answer is marked, and each round's aggregation is the last row.
registerStepView("debate", "Agents' debate", (step, index, numberOf) => {
  const agents = step.rounds.length ? step.rounds[0].agents.map(a => a.passage_id) : [];
  const head = el("tr", {}, el("th", {}, "agent (document)"), step.rounds.map((_, r) => el("th", {}, `round ${r + 1}`)));
  const rows = agents.map((id, a) => el("tr", {},
    el("td", {}, numberOf.has(id) ? citeButton(numberOf.get(id), index) : id),
    step.rounds.map(round => {
      const turn = round.agents[a];
      return el("td", { class: turn.changed ? "changed" : "", title: turn.reason },
        turn.unreadable ? "(unreadable)" : turn.answer, turn.changed ? " (changed)" : "");
    })));
  const kept = el("tr", {}, el("th", {}, "aggregator"), step.rounds.map(round => el("td", { title: round.summary },
    round.aggregated ? (round.kept.map(p => `${p.answer}${p.descriptor ? ` (${p.descriptor})` : ""}`).join("; ") || "unknown")
      : "(not asked: no agent moved)")));
  return el("div", {}, el("table", { class: "debate" }, head, rows, kept), el("p", {}, `Stopped: ${step.stopped}.`));
});
