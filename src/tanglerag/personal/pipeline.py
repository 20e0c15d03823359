"""``ask --user``: PCAS over a passage index and one user's stored contexts, then a method answers.

Documents are retrieved by the question (top ``beam``), each is paired with the user's context that
fits it best, and pairs are ranked by lambda*s(d,q) + (1-lambda)*s(d,c). The context of the best pair
is handed to generation, so the answer can use it ("yes, since you live in Singapore").
"""

from __future__ import annotations

from tanglerag.index.passage_index import PassageIndex
from tanglerag.methods.base import Method
from tanglerag.personal.store import UserContext, UserContextStore
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


class PersonalRetriever:
    def __init__(self, index: PassageIndex, store: UserContextStore, *, beam: int = 10, lam: float = 0.6) -> None:
        self.index = index
        self.store = store
        self.beam = beam
        self.lam = lam

    def retrieve(self, question: str, user: str, k: int) -> tuple[list[RetrievedPassage], UserContext | None]:
        candidates = self.index.search(question, max(self.beam, k))
        contexts, context_vectors = self.store.vectors(user)
        if not contexts or not candidates:
            return candidates[:k], None
        doc_vectors = self.index.embedder.embed([h.passage.text for h in candidates])
        fit = doc_vectors @ context_vectors.T  # documents x contexts
        best = fit.argmax(axis=1)
        scored = [(self.lam * h.score + (1 - self.lam) * float(fit[i, best[i]]), i) for i, h in enumerate(candidates)]
        scored.sort(key=lambda s: (-s[0], s[1]))
        top = scored[:k]
        hits = [RetrievedPassage(passage=candidates[i].passage, score=score, rank=rank)
                for rank, (score, i) in enumerate(top, 1)]
        return hits, contexts[int(best[top[0][1]])]


class PersonalPipeline:
    def __init__(self, retriever: PersonalRetriever, method: Method, top_k: int = 5) -> None:
        self.retriever = retriever
        self.method = method
        self.top_k = top_k

    def ask(self, question: str, user: str) -> tuple[Answer, UserContext | None]:
        tracker = UsageTracker()
        with tracker.stage("retrieve"):
            passages, context = self.retriever.retrieve(question, user, self.top_k)
        q = Question(text=question, user_id=user, user_contexts=[context.text] if context else [])
        return self.method.answer(q, passages, tracker), context

