"""Few-shot demonstrations for Diva, chosen per question by nearest neighbour in embedding space.

The pool is made from an ASQA-format file (the dev split: the paper draws demonstrations from labelled
data): each record gives a question, its disambiguated questions with short answers and a gold long answer.
A question never gets itself as a demonstration.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tanglerag.datasets.asqa import load as load_asqa
from tanglerag.datasets.disambig import Disambiguation
from tanglerag.embeddings import TextEmbedder
from tanglerag.methods.diva.prompts import Demo
from tanglerag.text import normalize_answer


class DemoPool:
    def __init__(self, demos: list[Demo], embedder: TextEmbedder) -> None:
        self.demos = demos
        self.embedder = embedder
        self._vectors: np.ndarray | None = None

    @classmethod
    def from_file(cls, path: Path, embedder: TextEmbedder) -> DemoPool:
        demos = []
        for example in load_asqa(Path(path)):
            interpretations = tuple((d.sub_question, d.answer)
                                    for d in (Disambiguation.model_validate(x) for x in example.metadata["disambig"]))
            long_answers = example.metadata.get("long_answers") or []
            if interpretations and long_answers:
                demos.append(Demo(question=example.question, interpretations=interpretations,
                                  long_answer=long_answers[0]))
        return cls(demos, embedder)

    def nearest(self, question: str, k: int) -> list[Demo]:
        if k <= 0 or not self.demos:
            return []
        if self._vectors is None:
            self._vectors = self.embedder.embed([d.question for d in self.demos])
        scores = self._vectors @ self.embedder.embed([question])[0]
        own = normalize_answer(question)
        order = [i for i in np.argsort(-scores, kind="stable") if normalize_answer(self.demos[i].question) != own]
        return [self.demos[i] for i in order[:k]]
