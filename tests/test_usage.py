from tanglerag.llm.base import Completion
from tanglerag.usage import UsageTracker


def test_completions_are_charged_to_the_current_stage():
    tracker = UsageTracker()
    with tracker.stage("organize"):
        tracker.record(Completion(texts=["a"], prompt_tokens=10, completion_tokens=2))
        tracker.record(Completion(texts=["a"], prompt_tokens=10, completion_tokens=2, cached=True, seconds=4.0))
    with tracker.stage("generate"):
        tracker.record(Completion(texts=["b"], prompt_tokens=30, completion_tokens=5))
    stages = tracker.usage.stages
    assert (stages["organize"].llm_calls, stages["organize"].cached_calls) == (1, 1)
    assert stages["organize"].prompt_tokens == 20
    assert stages["organize"].model_seconds == 4.0  # a cached call still reports its original model time
    assert stages["generate"].completion_tokens == 5
    assert stages["organize"].seconds >= 0.0
    assert tracker.usage.summary()["llm_calls"] == 2
