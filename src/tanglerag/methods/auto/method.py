"""``auto``: probe the passages for the question's tangle, then answer with the method ``auto.routes`` names for it.

The probe costs at most one LLM call (stage ``probe``); the chosen method's own steps and calls follow in the same
trace, so the answer shows both why a method was chosen and how that method answered. The route ``probe`` answers
from the answers the probe's call gave per passage instead (``answer.py``), so that question costs the one call only.
"""

from __future__ import annotations

from typing import ClassVar, get_args

from tanglerag.errors import ConfigError
from tanglerag.methods import base
from tanglerag.methods.auto.answer import PROBE_ROUTE, answer_from_probe
from tanglerag.methods.auto.config import AutoConfig, Tangle
from tanglerag.methods.auto.probe import probe, probe_passages
from tanglerag.methods.auto.steps import AutoStep, ProbedPassage
from tanglerag.methods.base import MULTI_ANSWER_METRICS, Method, MethodOutput, Resources, make_method
from tanglerag.tracking import record_step, stage
from tanglerag.types import Question, RetrievedPassage


class AutoMethod(Method):
    name: ClassVar[str] = "auto"
    paper: ClassVar[str] = "ours"
    description: ClassVar[str] = "probes the passages for the question's tangle and routes to the method that fits it"
    calls: ClassVar[str] = "0-1 probe + the chosen method's"
    default_metrics: ClassVar[tuple[str, ...]] = (*MULTI_ANSWER_METRICS, "answer_recall", "misinfo_leak")

    def __init__(self, resources: Resources) -> None:
        super().__init__(resources)
        routes = self.settings.section(AutoConfig).routes
        missing = [t for t in get_args(Tangle) if t not in routes]
        known = base.method_classes()
        unknown = sorted({m for m in routes.values()
                          if (m not in known and m != PROBE_ROUTE) or m == self.name})
        if missing or unknown:
            raise ConfigError("auto.routes " + "; ".join(
                ([f"has no method for {', '.join(missing)}"] if missing else [])
                + ([f"names {', '.join(unknown)}, not a method auto can route to"] if unknown else [])))

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        cfg = self.settings.section(AutoConfig)
        with stage("probe"):
            finding = await probe(self.llm, question.text, passages, overlap=cfg.duplicate_overlap,
                                  words=self.settings.methods.passage_words, tokens=cfg.probe_tokens,
                                  entities=cfg.entity_signals, index=self.resources.index)
            route = cfg.routes[finding.tangle]  # type: ignore[index]
            if route == PROBE_ROUTE and finding.passages is None and passages:  # decided without the call: make it
                finding.passages = await probe_passages(self.llm, question.text, passages,
                                                        words=self.settings.methods.passage_words,
                                                        tokens=cfg.probe_tokens)
        record_step(AutoStep(signals=finding.signals, tangle=finding.tangle, route=route, why=finding.why,
                             passages=ProbedPassage.listed(finding.passages or {})))
        if route == PROBE_ROUTE:
            return answer_from_probe(finding.passages or {}, passages)
        return await make_method(route, self.resources).arun_named(question, passages)

