from tanglerag.datasets.base import QAExample
from tanglerag.methods.post_fusion.steps import AnswerPoolStep, FallbackStep, PoolAnswer
from tanglerag.metrics.bootstrap import bootstrap_ci
from tanglerag.metrics.registry import compute
from tanglerag.trace import Trace
from tanglerag.types import Answer

EX = QAExample(id="q", question="Who?", answers=["Mahesh Bhatt"])


def _pool(*answers):
    pool = [PoolAnswer(passage_id=str(i), answer=a, unknown=a == "unknown") for i, a in enumerate(answers)]
    return Trace(steps=[AnswerPoolStep(pool=pool, tally=[])])


def test_nm_counts_gold_in_pool_but_lost_vote():
    lost = Answer(question="Who?", method="post-fusion", text="Raj Kapoor",
                  trace=_pool("Raj Kapoor", "Raj Kapoor", "Mahesh Bhatt"))
    won = lost.model_copy(update={"text": "Mahesh Bhatt"})
    absent = Answer(question="Who?", method="post-fusion", text="Raj Kapoor", trace=_pool("Raj Kapoor"))
    no_fallback = Answer(question="Who?", method="concat+pf", text="Raj Kapoor", trace=Trace(steps=[FallbackStep(fired=False)]))
    assert compute(["nm"], lost, EX)["nm"] == 1.0
    assert compute(["nm"], won, EX)["nm"] == 0.0
    assert compute(["nm"], absent, EX)["nm"] == 0.0
    assert compute(["nm"], no_fallback, EX)["nm"] == 0.0
    assert compute(["nm"], Answer(question="Who?", method="concat", text="x"), EX)["nm"] is None


def test_bootstrap_ci_brackets_the_mean_and_narrows_with_n():
    small = bootstrap_ci([1.0, 0.0] * 10, samples=2000)
    large = bootstrap_ci([1.0, 0.0] * 500, samples=2000)
    assert small[0] < 0.5 < small[1] and large[0] < 0.5 < large[1]
    assert (large[1] - large[0]) < (small[1] - small[0]) / 3
    assert bootstrap_ci([1.0] * 5) == (1.0, 1.0)


def test_misled_counts_repeated_misinformation_only_where_labelled():
    labelled = EX.model_copy(update={"metadata": {"wrong_answers": ["Raj Kapoor"]}})
    wrong = Answer(question="Who?", method="concat", text="Raj Kapoor [2]")
    assert compute(["misled"], wrong, labelled)["misled"] == 1.0
    assert compute(["misled"], wrong.model_copy(update={"text": "unknown", "is_unknown": True}),
                   labelled)["misled"] == 0.0
    assert compute(["misled"], wrong, EX)["misled"] is None
