"""``ask --user``: PCAS over a passage index and one user's stored contexts, as a ``Retriever``.

Documents are retrieved by the question (top ``beam``), each is paired with the user's context that
fits it best, and pairs are ranked by lambda*s(d,q) + (1-lambda)*s(d,c) (``pcas.rank_pairs``, the same
function the evaluation uses). s(d,c) uses the vectors the index already holds. The context of the best
pair goes to generation, so the answer can use it ("yes, since you live in Singapore"), and into the trace.
"""

from __future__ import annotations

import numpy as np

from tanglerag.index.passage_index import PassageIndex
from tanglerag.index.user_contexts import UserContextStore
from tanglerag.methods.pcas.joint import rank_pairs
from tanglerag.settings import Settings
from tanglerag.stages.retrieve import Retrieval
from tanglerag.tracking import record_step
from tanglerag.types import Question, RetrievedPassage
from tanglerag.users import PersonalContextStep


class PersonalRetriever:
    """Joint passage + user-context retrieval for questions that carry a ``user_id``.

    >>> retriever = PersonalRetriever(index, UserContextStore(root, embedder), top_k=5)  # doctest: +SKIP
    >>> retriever.retrieve(Question(text="Can I get Winter Fuel Payment?", user_id="alice"))  # doctest: +SKIP
    """

    def __init__(self, index: PassageIndex, store: UserContextStore, *, top_k: int = 5, beam: int = 10,
                 lam: float = 0.6) -> None:
        self.index = index
        self.store = store
        self.top_k = top_k
        self.beam = beam
        self.lam = lam

    def retrieve(self, question: Question, k: int | None = None) -> Retrieval:
        k = k or self.top_k
        candidates = self.index.search(question.text, max(self.beam, k))
        if question.user_id is None:
            return Retrieval(passages=candidates[:k])
        contexts, context_vectors = self.store.vectors(question.user_id)
        if not contexts or not candidates:
            record_step(PersonalContextStep(user=question.user_id, lam=self.lam, beam=self.beam))
            return Retrieval(passages=candidates[:k])
        doc_vectors = self.index.vectors([h.passage.id for h in candidates])
        fit = context_vectors @ doc_vectors.T  # contexts x documents
        top = rank_pairs(np.array([h.score for h in candidates]), fit, list(range(len(candidates))), lam=self.lam, depth=k)
        hits = [RetrievedPassage(passage=candidates[i].passage, score=score, rank=rank)
                for rank, (score, i, _) in enumerate(top, 1)]
        chosen = contexts[top[0][2]]
        record_step(PersonalContextStep(user=question.user_id, context_id=chosen.id, text=chosen.text,
                                        score=top[0][0], lam=self.lam, beam=self.beam))
        return Retrieval(passages=hits, user_contexts=[chosen.text])


def personal_retriever(index: PassageIndex, store: UserContextStore, settings: Settings) -> PersonalRetriever:
    """The ``personal`` retriever the PCAS family offers: what a question carrying a user is answered with."""
    return PersonalRetriever(index, store, top_k=settings.retrieval.top_k, beam=settings.personal.beam,
                             lam=settings.personal.lam)
