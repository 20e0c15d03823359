"""Eval run folders for the run browser's tests: a real ``EvalRunner`` run on four RAMDocs sample questions with
a canned model whose answers make every filter meaningful.

==============  ==========  ==========  =========================
question        concat      pruning     tangles
==============  ==========  ==========  =========================
Broken Bow      right       wrong       noise
Bobby Carpenter wrong       right       noise
Lahu Ke Do Rang right       right       misinformation, noise
Ryan Davis      wrong       wrong       noise
==============  ==========  ==========  =========================
"""

from __future__ import annotations

from pathlib import Path

from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.report import write_outputs
from tanglerag.eval.runner import EvalRunner
from tanglerag.llm.cache import CallCache
from tanglerag.llm.client import LLM
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder

METHODS = ["concat", "pruning"]
_ANSWERS = {  # question word: (concat's reply, pruning's answer)
    "Broken Bow": ("3,559 people [1]", "1,647"),
    "Bobby Carpenter": ("unknown", "American football"),
    "Lahu Ke Do Rang": ("Mahesh Bhatt [1]", "Mahesh Bhatt"),
}


def _reply(messages) -> str:
    prompt = messages[-1].content
    concat, pruning = next((a for word, a in _ANSWERS.items() if word in prompt), ("unknown", "unknown"))
    if "rule out each one" in messages[0].content:
        return f"Rationale: Let's think step by step. The sources were read.\nAnswer: {pruning}"
    return concat


def write_run(folder: Path, *, finished: bool = True) -> Path:
    """A run of concat and pruning in ``folder``: finished (predictions.jsonl), or only its checkpoint."""
    _, examples = load_dataset("ramdocs-sample", limit=4)
    runtime = Runtime(Settings.load(overrides=["retrieval.top_k=3"]),
                      llm=LLM(CannedBackend(responder=_reply), CallCache(None)), embedder=HashEmbedder())
    report, predictions = EvalRunner(runtime).run("ramdocs-sample", examples, METHODS, out=folder)
    if finished:
        write_outputs(folder, report, predictions)
    return folder
