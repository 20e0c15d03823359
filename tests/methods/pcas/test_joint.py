import pytest

from tanglerag.datasets.orca_sharc import OrcaExample
from tanglerag.errors import ConfigError, InputError
from tanglerag.methods.pcas.joint import retrieve_pcas
from tanglerag.methods.pcas.scorers import BM25Scorer, DenseScorer
from tanglerag.methods.pcas.scoring import rank, run_method, score, sweep
from tanglerag.testing import HashEmbedder

DOC_IDS = ["0", "1", "2", "3"]
DOCS = [
    "Winter Fuel Payment abroad: paid to people living in Switzerland.",
    "Winter Fuel Payment: the fuel payment goes to people born before 1955.",
    "Exporting goods: boots and leather need an export licence.",
    "Apprentice rate of the minimum wage applies under 19.",
]
EXAMPLE = OrcaExample(id="u1", question="Can I get Winter Fuel Payment?", gold_snippet_id="0",
                      contexts=["I'm trying to export some boots.", "Living in Switzerland.",
                                "I am an experienced apprentice."], gold_context=1)


@pytest.fixture(params=["dense", "bm25"])
def scorer(request):
    return DenseScorer(HashEmbedder("hash-1024", 1024), DOCS) if request.param == "dense" else BM25Scorer(DOCS)


def test_context_disambiguates_the_document(scorer):
    # The question alone prefers the generic snippet; the user's context points to the right one.
    assert rank("b2", scorer, EXAMPLE, DOCS, lam=0.5, beam=2).docs[0] == 1
    ranking = retrieve_pcas(scorer, EXAMPLE.question, EXAMPLE.contexts, beam=2, lam=0.5, depth=2)
    assert ranking.docs[0] == 0 and ranking.context == 1
    assert set(ranking.docs) == {0, 1}  # reranks within the beam only


def test_lambda_one_is_plain_question_retrieval(scorer):
    plain = rank("b2", scorer, EXAMPLE, DOCS, lam=1.0, beam=4).docs
    assert retrieve_pcas(scorer, EXAMPLE.question, EXAMPLE.contexts, beam=4, lam=1.0, depth=4).docs == plain
    with pytest.raises(ConfigError, match="lambda"):
        retrieve_pcas(scorer, EXAMPLE.question, EXAMPLE.contexts, beam=4, lam=1.5, depth=4)


def test_baselines_shapes(scorer):
    assert rank("or", scorer, EXAMPLE, DOCS, lam=0.5, beam=2).docs[0] == 0  # told the gold context
    assert rank("b1", scorer, EXAMPLE, DOCS, lam=0.5, beam=2).context is None
    b3 = rank("b3", scorer, EXAMPLE, DOCS, lam=0.5, beam=2)
    assert b3.context is not None and len(b3.context_scores) == 3
    with pytest.raises(InputError, match="unknown PCAS method"):
        rank("b9", scorer, EXAMPLE, DOCS, lam=0.5, beam=2)


def test_ranking_metrics_and_sweep():
    scorer = DenseScorer(HashEmbedder("hash-1024", 1024), DOCS)
    second = EXAMPLE.model_copy(update={"id": "u2", "gold_snippet_id": "1", "gold_context": None})
    result = run_method("pcas", scorer, [EXAMPLE, second], DOC_IDS, DOCS, lam=0.5, beam=4)
    assert result.n == 2 and result.context_r1 == 1.0  # only u1 has a gold context
    assert result.doc["recall@1"] == 0.5 and result.doc["recall@5"] == 1.0
    doc, ctx = score([EXAMPLE], [rank("b1", scorer, EXAMPLE, DOCS, lam=0.5, beam=2)], DOC_IDS)
    assert ctx is None and set(doc) == {"recall@1", "recall@5", "map@5"}
    grid = sweep(scorer, [EXAMPLE, second], DOC_IDS, DOCS, lams=[0.2, 1.0], beams=[2, 4])
    assert len(grid) == 4
    best = grid[0][2].doc["recall@1"]
    assert all(best >= g[2].doc["recall@1"] for g in grid)
