"""The bridge from synchronous code into the async core: the portal runs coroutines for sync callers with their
context, never deadlocks on nested sync calls, keeps loop-bound state with its loop, and a method's own ``run`` or
``arun`` decides whichever it inherited."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest

from tanglerag.aio import per_loop, run_sync
from tanglerag.eval.engines.local import answer_in_batches
from tanglerag.methods.base import MethodOutput, Resources
from tanglerag.methods.concat.method import ConcatMethod
from tanglerag.testing import HashEmbedder, canned_llm
from tanglerag.trace import Message
from tanglerag.tracking import current_tracker, track
from tanglerag.types import Passage, Question, RetrievedPassage

PASSAGES = [RetrievedPassage(passage=Passage(id="p", title="Paris", text="Paris is the capital of France."),
                             score=1.0, rank=1)]
QUESTION = Question(text="What is the capital of France?")


class SyncConcat(ConcatMethod):
    """A plug-in's subclass of a built-in method that overrides ``run`` and calls the model synchronously."""

    def run(self, question: Question, passages: list[RetrievedPassage]) -> MethodOutput:
        reply = self.llm.complete(_messages(question))
        return MethodOutput(f"mine: {reply.text}", [passages[0].passage.id])


def _messages(question: Question) -> list[Message]:
    return [Message(role="user", content=question.text)]


def _resources():
    return Resources.for_llm(canned_llm([("capital", "Paris [1]")]), embedder=HashEmbedder())


def test_run_sync_carries_the_callers_context_into_the_coroutine():
    async def seen():
        return current_tracker()

    with track() as tracker:
        assert run_sync(seen()) is tracker


def test_a_subclass_that_overrides_run_answers_with_its_run_through_every_door():
    method = SyncConcat(_resources())
    assert method.answer(QUESTION, PASSAGES).text == "mine: Paris [1]"
    assert asyncio.run(method.aanswer(QUESTION, PASSAGES)).text == "mine: Paris [1]"


def test_many_sync_callers_of_run_only_methods_at_once_do_not_deadlock():
    """Each caller's run waits in a worker thread on a model call that needs a thread too: more callers than the
    loop's default executor has threads must all be answered."""
    method = SyncConcat(_resources())
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda _: method.answer(QUESTION, PASSAGES).text, range(16)))
    assert answers == ["mine: Paris [1]"] * 16


def test_state_kept_per_loop_goes_with_its_loop():
    kept = per_loop(lambda: asyncio.Semaphore(1))
    loops = []

    async def use() -> None:
        semaphore = kept.get()
        async with semaphore:
            await asyncio.sleep(0)
        assert kept.get() is semaphore  # once a loop
        loops.append(weakref.ref(asyncio.get_running_loop()))

    for _ in range(3):
        asyncio.run(use())
    gc.collect()
    assert [ref() for ref in loops] == [None, None, None]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the portal thread's end
def test_an_item_that_raises_system_exit_ends_the_run_with_an_error_not_a_hang():
    async def answer(item: int) -> int:
        if item == 2:
            await asyncio.to_thread(_exit)
        return item

    done = threading.Event()
    errors = []

    def consume():
        try:
            list(answer_in_batches(answer, [1, 2, 3], 1))
        except BaseException as exc:  # noqa: BLE001 - the test reads what ended the run
            errors.append(exc)
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    assert done.wait(20), "the run hung"
    assert errors and isinstance(errors[0], (SystemExit, RuntimeError))
    assert run_sync(asyncio.sleep(0, result="the portal answers again")) == "the portal answers again"


def _exit() -> None:
    raise SystemExit(3)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_results_come_back_every_one_once(concurrency):
    async def answer(item: int) -> int:
        await asyncio.sleep(0.001 * (5 - item))
        return item * 10

    got = [r for batch in answer_in_batches(answer, [1, 2, 3, 4], concurrency) for r in batch]
    assert sorted(got) == [10, 20, 30, 40]


def test_a_new_per_loop_never_finds_a_collected_ones_object():
    """A per_loop made after another was collected (an LLM client per runtime, the portal loop living on) must make
    its own object, whatever address it was given."""
    async def made_by_many() -> set[int]:
        seen = set()
        for n in range(50):
            kept = per_loop(lambda n=n: [n])
            seen.add(kept.get()[0])
            del kept
            gc.collect(0)  # the youngest generation holds it: a full collection of a test worker's heap took ~1 s
        return seen

    assert run_sync(made_by_many()) == set(range(50))
