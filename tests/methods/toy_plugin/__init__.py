"""A method family from outside the package, as a plug-in author writes one: a method, a trace step, a settings
section with a per-request option, a stage of its own and an inspector view, declared in one ``Family``. One method
is written as a plug-in of before wrote it (a synchronous ``run``, no model), the other as one writes them now
(``async def arun`` awaiting the model).

``tests/methods/test_plugin_method.py`` registers it in-process (``register_family``) and through an entry point."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from tanglerag.config import Section
from tanglerag.family import Family
from tanglerag.methods.base import Method, MethodOutput
from tanglerag.trace import Message, TraceStep
from tanglerag.tracking import record_step, stage
from tanglerag.types import Question, RetrievedPassage


class ToyConfig(Section):
    """The ``toy`` section."""

    min_count: int = Field(1, strict=True, ge=1, description="titles carried by fewer passages are not answers")


class TitleVoteStep(TraceStep):
    """Which titles the passages carry and how many passages carry each."""

    kind: Literal["toy_title_vote"] = "toy_title_vote"
    title: ClassVar[str] = "Title vote"
    counts: dict[str, int]

    def lines(self) -> list[str]:
        return ["title vote", *(f"  {title}: {n}" for title, n in self.counts.items())]

    def headline(self) -> str | None:
        return f"toy: {len(self.counts)} distinct titles"


class TitleVoteMethod(Method):
    """Answers with the title most passages share (ties: the best-ranked), citing every passage that carries it."""

    name: ClassVar[str] = "toy-title-vote"
    paper: ClassVar[str] = "baseline"
    description: ClassVar[str] = "the most common passage title (a plug-in example; no LLM)"
    calls: ClassVar[str] = "0"

    def run(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        with stage("tally"):
            counts: dict[str, int] = {}
            for hit in passages:
                counts[hit.passage.title or hit.passage.id] = counts.get(hit.passage.title or hit.passage.id, 0) + 1
        record_step(TitleVoteStep(counts=counts))
        if not counts or max(counts.values()) < self.settings.section(ToyConfig).min_count:
            return MethodOutput.abstain()
        best = max(counts, key=lambda t: counts[t])  # dicts keep retrieval order: ties go to the best-ranked
        cited = [h.passage.id for h in passages if (h.passage.title or h.passage.id) == best]
        numbers = " ".join(f"[{i}]" for i, h in enumerate(passages, 1) if h.passage.id in cited)
        return MethodOutput(f"{best} {numbers}", cited)


class AskTitleMethod(TitleVoteMethod):
    """Asks the model which of the passages' titles the question is about, and cites the passages that carry it."""

    name: ClassVar[str] = "toy-ask-title"
    description: ClassVar[str] = "the title the model picks among the passages' (a plug-in example; one LLM call)"
    calls: ClassVar[str] = "1"

    async def arun(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        titles = list(dict.fromkeys(h.passage.title or h.passage.id for h in passages))
        with stage("tally"):
            reply = await self.llm.acomplete([Message(role="user", content=(
                f"Question: {question.text}\nTitles: {', '.join(titles)}\nWhich title is it about?"))])
        best = next((t for t in titles if t.lower() in reply.text.lower()), None)
        if best is None:
            return MethodOutput.abstain()
        cited = [h.passage.id for h in passages if (h.passage.title or h.passage.id) == best]
        return MethodOutput(f"{best} [{1 + [h.passage.id for h in passages].index(cited[0])}]", cited)


FAMILY = Family(name="toy", methods=(TitleVoteMethod, AskTitleMethod), settings=ToyConfig, stages=frozenset({"tally"}),
                options=("min_count",), view=Path(__file__).with_name("view.js"))
