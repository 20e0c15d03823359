// The ledger's conflict report: registered into the inspector (service/static/inspector.js), served as part of
// /views.js. Any method that records a "conflicts" step gets this view.
"use strict";

// A passage named by its number in the answer (a button that shows it), or by its id when the answer lists it not.
const ledgerPassage = (index, numberOf) => id => numberOf.has(id) ? citeButton(numberOf.get(id), index) : `${id} `;

// The claims (one per passage: answer, what it is about, the quoted words; ungrounded and off-topic ones marked),
// then what each document says it is and what the trust setting ignored or bounded (where each trust came from), then
// one table per conflict: each side's verdict, answer, witnesses, passages and why it was set aside, and the policies
// tried in order.
registerStepView("conflicts", "Claims and conflicts", (step, index, numberOf) => {
  const source = ledgerPassage(index, numberOf);
  const claims = step.claims.length === 0 ? null : el("table", { class: "claims" },  // vetted reads no claims
    el("tr", {}, el("th", {}, "passage"), el("th", {}, "answer"), el("th", {}, "about"), el("th", {}, "quote")),
    step.claims.map(c => el("tr", { class: (c.supported || c.answer_found) && c.relevant !== false ? "" : "unsupported" },
      el("td", {}, source(c.passage_id)), el("td", {}, c.answer), el("td", {}, c.about),
      el("td", {}, c.quote, c.supported ? "" : c.answer_found ? " (reworded: the answer is in the passage, the quote is not)"
        : " (neither quote nor answer is in the passage: no witness)",
        c.relevant === false ? ` (its passage is about another question: relevance ${c.relevance.toFixed(2)})` : "",
        c.dropped_by ? ` (${c.dropped_by})` : "", c.read_as ? ` (${c.read_as})` : ""))));
  const reports = step.reports.map(r => el("div", { class: "conflict" },
    el("p", {}, el("strong", {}, r.kind.replaceAll("_", " ")), r.about ? ` about ${r.about}` : "",
      r.rule ? ` - ${r.rule}` : " - no policy decided",
      r.off_answer ? " (not about the answer: it does not make the question's kind)" : ""),
    el("table", { class: "sides" },
      el("tr", {}, el("th", {}, "verdict"), el("th", {}, "answer"), el("th", {}, "witnesses"), el("th", {}, "passages"),
        el("th", {}, "why")),
      r.sides.map(s => el("tr", { class: s.verdict },
        el("td", {}, s.verdict), el("td", {}, s.answer), el("td", { class: "num" }, s.witnesses),
        el("td", {}, s.passages.map(source)), el("td", {}, s.verdict === "kept" || s.note === "disputed" ? "" : s.note || "")))),
    r.trials.length ? el("ol", { class: "trials" }, r.trials.map(t => el("li", {}, `${t.policy}: ${t.outcome}`))) : null));
  const copies = step.copies.length
    ? el("p", {}, "One document (copies or versions): ", step.copies.map(g => el("span", {}, "{", g.map(source), "} ")))
    : null;
  const kinds = Object.entries(step.kinds || {});
  const documents = kinds.length
    ? el("p", { class: "kinds" }, "What the documents are: ", kinds.map(([id, kind]) => el("span", {}, source(id), ` ${kind}; `)))
    : null;
  const trust = (step.trust || []).length
    ? el("ul", { class: "trust" }, step.trust.map(line => el("li", {}, line)))
    : null;
  return el("div", {}, claims, copies, documents, trust,
    reports.length ? reports : el("p", {}, "The passages do not disagree."));
});

// vetted's vetting: the passages in the order the model read them, each with its label (date, kind, source,
// unverified) and "off topic" where it held too few of the question's words; those left out with the rule that did;
// and the rule that rewrote the answer's value, if one did.
registerStepView("vetting", "Vetted passages", (step, index, numberOf) => {
  const source = ledgerPassage(index, numberOf);
  const shown = el("ol", { class: "shown" }, step.shown.map(id => el("li", {}, source(id),
    step.labels[id] ? ` ${step.labels[id]}` : "", step.off_topic.includes(id) ? " (off topic)" : "")));
  const left = Object.entries(step.left_out);
  return el("div", {}, el("p", {}, "Read in this order:"), shown,
    left.length ? el("p", {}, "Left out:") : null,
    left.length ? el("ul", { class: "left-out" }, left.map(([id, why]) => el("li", {}, source(id), ` ${why}`))) : null,
    step.restated ? el("p", { class: "restated" }, step.restated) : null);
});
