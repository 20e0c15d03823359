from tanglerag.config import EvalConfig, RetrievalConfig
from tanglerag.datasets.base import QAExample
from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.passages import PassageBuilder, is_gold
from tanglerag.eval.runner import EvalRunner
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend
from tanglerag.types import Passage
from tanglerag.where import parse_where


def _example(qid: str, topic: str) -> QAExample:
    return QAExample(id=qid, question=f"Where does the {topic} live?", answers=[f"{topic} land"], passages=[
        Passage(id=f"{qid}-g", text=f"The {topic} lives in {topic} land.", metadata={"type": "correct"}),
        Passage(id=f"{qid}-m", text=f"Where does the {topic} live? The {topic} lives on the moon.",
                metadata={"type": "misinfo"}),
        Passage(id=f"{qid}-n", text=f"Where does the {topic} live? Nobody knows where the {topic} goes.",
                metadata={"type": "noise"}),
    ])


EXAMPLES = [_example("a", "zebra"), _example("b", "penguin")]


def test_gold_detection_by_type_or_string():
    assert is_gold(EXAMPLES[0].passages[0], EXAMPLES[0]) and not is_gold(EXAMPLES[0].passages[1], EXAMPLES[0])
    plain = QAExample(id="x", question="q", answers=["Paris"], passages=[])
    assert is_gold(Passage(id="1", text="It is Paris, France."), plain)
    assert not is_gold(Passage(id="2", text="Parisian cafes"), plain)


def test_own_scope_ranks_only_the_questions_passages(embedder):
    builder = PassageBuilder(EXAMPLES, embedder, EvalConfig())
    hits = builder.build(EXAMPLES[0], 3)
    assert {h.passage.id for h in hits} == {"a-g", "a-m", "a-n"}


def test_ensure_exclude_and_positions(embedder):
    ex = EXAMPLES[0]
    ensured = PassageBuilder(EXAMPLES, embedder, EvalConfig(gold="ensure", passage_scope="pooled")).build(ex, 1)
    assert [h.passage.id for h in ensured] == ["a-g"]
    excluded = PassageBuilder(EXAMPLES, embedder, EvalConfig(gold="exclude", passage_scope="pooled")).build(ex, 6)
    assert "a-g" not in {h.passage.id for h in excluded} and len(excluded) == 5
    bottom = PassageBuilder(EXAMPLES, embedder, EvalConfig(gold_position="bottom")).build(ex, 3)
    top = PassageBuilder(EXAMPLES, embedder, EvalConfig(gold_position="top")).build(ex, 3)
    assert bottom[-1].passage.id == "a-g" and top[0].passage.id == "a-g"


def test_pooled_scope_mixes_questions(embedder):
    hits = PassageBuilder(EXAMPLES, embedder, EvalConfig(passage_scope="pooled")).build(EXAMPLES[1], 6)
    assert {h.passage.id[0] for h in hits} == {"a", "b"}


def test_an_inserted_gold_passage_lands_at_a_seeded_random_position(embedder):
    def example(qid: str) -> QAExample:  # the gold passage shares no word with the question: never retrieved top-3
        noise = [Passage(id=f"{qid}-n{j}", text=f"Where does the zebra live? Guess {j}.", metadata={"type": "noise"})
                 for j in range(5)]
        gold = Passage(id=f"{qid}-g", text="Equus quagga grazes savannah grassland.", metadata={"type": "correct"})
        return QAExample(id=qid, question="Where does the zebra live?", answers=["savannah"], passages=[gold, *noise])

    examples = [example(f"q{i}") for i in range(12)]

    def gold_positions(seed: int) -> list[int]:
        builder = PassageBuilder(examples, embedder, EvalConfig(gold="ensure", seed=seed))
        placed = []
        for ex in examples:
            assert all(h.passage.id != f"{ex.id}-g" for h in builder.ranking(ex, 6)[:3])
            ids = [h.passage.id for h in builder.build(ex, 3)]
            placed.append(ids.index(f"{ex.id}-g"))
        return placed

    positions = gold_positions(0)
    assert positions == gold_positions(0)  # fixed by the seed and the question id
    assert set(positions) == {0, 1, 2}  # anywhere in the top 3, not always last
    assert positions != gold_positions(1)


class _NoEmbedding:
    """An embedder that must not be used: BM25 over a question's own passages embeds nothing."""

    model_name = "none"
    dimension = 8

    def embed(self, texts, *, show_progress=False):
        raise AssertionError(f"embedded {len(texts)} text(s)")


def test_bm25_over_own_passages_ranks_by_words_and_embeds_nothing():
    example = QAExample(id="q", question="Which river flows through Vienna?", answers=["Danube"], passages=[
        Passage(id="p0", text="Paris is the capital of France."),
        Passage(id="p1", text="The Danube river flows through Vienna and Budapest.", metadata={"source": "a.org"}),
        Passage(id="p2", text="Vienna hosts the opera ball.", metadata={"source": "b.org"}),
    ])
    builder = PassageBuilder([example], _NoEmbedding(), EvalConfig(), retrieval=RetrievalConfig(mode="bm25"))
    hits = builder.build(example, 3)
    # every own passage ranked: one sharing no word with the question comes last, score 0
    assert [h.passage.id for h in hits] == ["p1", "p2", "p0"] and hits[-1].score == 0.0
    assert [h.rank for h in hits] == [1, 2, 3]
    # the filter decides which are shown, as it does for an index
    filtered = PassageBuilder([example], _NoEmbedding(), EvalConfig(), where=parse_where("source = b.org"),
                              retrieval=RetrievalConfig(mode="bm25")).build(example, 3)
    assert [h.passage.id for h in filtered] == ["p2"]


def test_hybrid_and_pooled_modes_rank_with_both(embedder):
    hybrid = RetrievalConfig(mode="hybrid")
    hits = PassageBuilder(EXAMPLES, embedder, EvalConfig(), retrieval=hybrid).build(EXAMPLES[0], 3)
    assert {h.passage.id for h in hits} == {"a-g", "a-m", "a-n"}
    pooled = PassageBuilder(EXAMPLES, embedder, EvalConfig(passage_scope="pooled"),
                            retrieval=RetrievalConfig(mode="bm25"))
    assert pooled.shared_index is not None and pooled.shared_index.bm25 is not None
    assert {h.passage.id[0] for h in pooled.build(EXAMPLES[1], 2)} == {"b"}  # penguin's words rank first


def test_an_eval_run_with_bm25_over_own_passages_embeds_nothing(llm_factory):
    _, examples = load_dataset("ramdocs-sample", limit=3)
    settings = Settings.load(overrides=["retrieval.top_k=2", "retrieval.mode=bm25"])
    runtime = Runtime(settings, llm=llm_factory(CannedBackend(default="unknown")), embedder=_NoEmbedding())
    report, predictions = EvalRunner(runtime).run("ramdocs-sample", examples, ["concat"])
    assert report.n == 3 and all(len(p.passage_ids) == 2 for p in predictions)
    assert all(pid.startswith(ex.id) for ex, p in zip(examples, predictions, strict=True) for pid in p.passage_ids)
