"""``ledger`` on the real embedded model (Qwen2.5-Coder-1.5B GGUF), a bundled RAMDocs question whose three correct
documents say 1902 and two misinformation documents say otherwise: every passage's claim reads under the schema,
and the report keeps what its claims witness. No cache: these calls must reach llama.cpp (about 40 s on 2 cores)."""

import pytest

from tanglerag.conflicts import ConflictStep
from tanglerag.datasets.registry import load_dataset
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.llm.llamacpp import LlamaCppBackend
from tanglerag.methods.base import Resources, make_method
from tanglerag.metrics.registry import compute
from tanglerag.settings import Settings
from tanglerag.testing import HashEmbedder
from tanglerag.types import Question, RetrievedPassage

# the embedded model's xdist group: one model load, and two copies of the model would share two cores
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("embedded-model")]


def test_ledger_reads_a_claim_per_document_and_keeps_the_witnessed_answer():
    settings = Settings.load()
    backend = LlamaCppBackend(settings.llm.model, settings.cache_dir, n_ctx=2048, n_threads=settings.llm.n_threads)
    llm = LLM(backend, CallCache(None), structured=settings.llm.structured,
              structured_stages=settings.llm.structured_stages)
    _, examples = load_dataset("ramdocs-sample")
    example = next(e for e in examples if e.question == "When was the Dallas County Courthouse built?")
    hits = [RetrievedPassage(passage=p, score=1.0, rank=i + 1) for i, p in enumerate(example.passages)]
    answer = make_method("ledger", Resources.for_llm(llm, settings, embedder=HashEmbedder())).answer(
        Question(text=example.question), hits)
    step = answer.trace.find(ConflictStep)
    assert step is not None and not step.unread and len(answer.trace.calls) == len(hits), step.lines()
    assert all(call.constrained for call in answer.trace.calls)  # the claims went out under the JSON schema
    claims = {c.passage_id: c for c in step.claims}
    assert claims and set(claims) <= {h.passage.id for h in hits}
    for part in answer.parts:  # a kept answer cites only passages whose claims gave it
        assert part.citations and all(claims[c].answer.lower() in part.answer.lower()
                                      or part.answer.lower() in claims[c].answer.lower() for c in part.citations)
    scores = compute(["answer_recall", "misinfo_leak"], answer, example)
    assert scores == {"answer_recall": 1.0, "misinfo_leak": 0.0}, "\n".join(step.lines())
