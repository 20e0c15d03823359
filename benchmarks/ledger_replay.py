"""Re-score the ledger's rules on stored claims, without the model.

Every call the ledger makes (one claim a passage; the prior policy's closed-book call) is in the traces of a stored
run's predictions. This script answers each call from those traces through the canned backend, so the rules that
come after the claims (grounding, corroboration, independence, sides, what conflicts with what, the policies,
``show_disputed``) run for real, in the real method, on each question's stored passages in their stored order, and
the metric registry scores them: an ablation or a rule change costs seconds instead of an hour of model time. Each
answer's cost is what its calls cost when the stored run made them (calls, tokens, model seconds). A call no stored
run holds (a rule that asks something new, such as the prior policy where the stored runs never reached it) stops
the replay and names the question.

Usage: ledger_replay.py [NAME ...] [--from RUN ...]
  replays the named variants of VARIANTS (all of them by default; the prior policy is left out: today's rules reach
  it in questions where the stored run with it, under earlier rules, never asked it) over the stored runs (default:
  ledger and ledger-prior under docs/results/conflicts) and writes docs/results/conflicts/replay/NAME/ (results.json,
  predictions.jsonl in the eval's format, read by conflicts_report.py). The settings are the first run's, today's
  defaults for the rules that act after the claims (RULES), then the variant's overrides.

The variants: ``default`` (today's rules), one change of it each (a policy taken out of ``ledger.policies``, the
other ``show_disputed`` and ``same_thing`` modes, ``relevance-0``: every claim competes, ``overlap-0``: the claims'
'about' alone decides sameness, the similarity thresholds moved), ``concat-report``, and the cells of the grid
``ledger.relevance`` x ``ledger.description_overlap`` the two thresholds were chosen on (``grid-r0.34-o0.3``...):
conflicts_report.py reads the grid on the tune half, so a reader can check the choice.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tanglerag.datasets.registry import load_dataset
from tanglerag.eval.records import Prediction
from tanglerag.llm.factory import build_llm
from tanglerag.methods.base import Resources, make_method
from tanglerag.methods.ledger.config import LedgerConfig
from tanglerag.metrics import METRICS
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.trace import Message, Trace
from tanglerag.types import Passage, Question, RetrievedPassage

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "docs/results/conflicts"
USAGE_KEYS = ("llm_calls", "cached_calls", "prompt_tokens", "completion_tokens", "model_seconds", "seconds")
PEERS = ROOT / "docs/results/peers/main"
BASES = {"concat-report": ("concat", PEERS)}  # variant: (method, run it replays)
ANSWERS_FROM = {"verify-separate": PEERS}
"""Variants whose claims are another method's answers: the stored run whose traces hold those calls."""
DEFAULT_POLICIES: list[str] = list(LedgerConfig().policies)
GRID_RELEVANCE = (0.25, 0.3, 0.34, 0.5)
GRID_OVERLAP = (0.3, 0.4, 0.5)
"""The grid ``ledger.relevance`` x ``ledger.description_overlap`` was chosen on (RAMDocs, tune half): each cell is a
variant ``grid-r<relevance>-o<overlap>``, so conflicts_report.py can show the grid and the cell the rule picks."""


def grid_name(relevance: float, overlap: float) -> str:
    return f"grid-r{relevance:g}-o{overlap:g}"


def _without(policy: str) -> list[str]:
    """Today's default order with one policy taken out, as a ``--set`` override."""
    return [f"ledger.policies=[{', '.join(p for p in DEFAULT_POLICIES if p != policy)}]"]


VARIANTS: dict[str, list[str]] = {  # name: --set overrides of today's defaults; each changes one thing of them
    "default": [],
    "concat-report": ["conflicts.report=true"],  # concat's stored answers, the ledger's report on their passages
    **{f"no-{policy}": _without(policy) for policy in DEFAULT_POLICIES if policy != "show-all"},
    **{f"without-{rule}": [f"ledger.disabled_rules=[asked-names,{rule}]"]  # issue 67's rules, each turned off
       for rule in ("answer-type", "drafts", "scope", "same-value", "text-dates", "trust", "document-kinds")},
    "with-asked-names": ["ledger.disabled_rules=[]"],  # off by default, chosen on the tune half
    "show-all-only": ["ledger.policies=[show-all]"],
    "verify-separate": ["ledger.claims_from=separate"],  # the separate baseline's answers, the ledger's rules
    "show-disputed-never": ["ledger.show_disputed=never"],
    "show-disputed-always": ["ledger.show_disputed=always"],
    "same-thing-versions": ["ledger.same_thing=versions"],
    "relevance-0": ["ledger.relevance=0"],  # every claim competes, whatever its passage is about
    "overlap-0": ["ledger.description_overlap=0"],  # the claims' 'about' alone says whether two sides are one thing
    "about-0.8": ["ledger.about_similarity=0.8"],
    "about-1.0": ["ledger.about_similarity=1.0"],
    "duplicates-0.7": ["ledger.duplicate_similarity=0.7"],
    "duplicates-0.9": ["ledger.duplicate_similarity=0.9"],
    **{grid_name(r, o): [f"ledger.relevance={r}", f"ledger.description_overlap={o}"]
       for r in GRID_RELEVANCE for o in GRID_OVERLAP},
}


def _key(messages: list[Message] | list[dict[str, str]]) -> str:
    return json.dumps([(m["role"], m["content"]) if isinstance(m, dict) else (m.role, m.content) for m in messages])


def stored_calls(runs: list[Path]) -> dict[str, dict[str, Any]]:
    """Every call of the runs' traces by its messages: its first reply and what it cost."""
    calls: dict[str, dict[str, Any]] = {}
    for run in runs:
        with (run / "predictions.jsonl").open() as lines:
            for line in lines:
                for call in json.loads(line)["trace"]["calls"]:
                    calls.setdefault(_key(call["messages"]), call)
    return calls


class MissingCall(RuntimeError):
    """A rule asked the model something no stored run asked."""


def replay_backend(calls: dict[str, dict[str, Any]]) -> CannedBackend:
    def respond(messages: list[Message]) -> str:
        try:
            return str(calls[_key(messages)]["replies"][0])
        except KeyError:
            raise MissingCall(f"no stored reply for: {messages[-1].content[-200:]!r}") from None
    return CannedBackend(responder=respond, structured=True)


RULES = ("policies", "show_disputed", "same_thing", "duplicate_similarity", "about_similarity", "relevance",
         "description_overlap", "provenance_weights")
"""The ledger settings that act after the claims: a replay takes today's defaults for them, not the stored run's."""


def settings_of(run: Path, overrides: list[str]) -> Settings:
    """The stored run's settings, today's defaults for the ledger's rules, ``overrides`` on top (typed values would
    win over overrides: go through a file), the cache off: every call is answered from the traces."""
    stored = json.loads((run / "run.json").read_text())["settings"]
    stored["ledger"] = {k: v for k, v in stored.get("ledger", {}).items() if k not in RULES}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:  # JSON is YAML
        json.dump(Settings.load(values=stored).model_dump(mode="json"), file)
    return Settings.load(Path(file.name), overrides=[*overrides, "llm.cache=false"])


def usage_of(answer_calls: list[Any], calls: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """By stage, what the answer's calls cost when the stored run made them."""
    stages: dict[str, dict[str, float]] = {}
    for call in answer_calls:
        made = calls[_key(call.messages)]
        stage = stages.setdefault(call.stage, {"llm_calls": 0, "cached_calls": 0, "prompt_tokens": 0,
                                               "completion_tokens": 0, "model_seconds": 0.0, "seconds": 0.0})
        stage["cached_calls"] += 1
        for name in ("prompt_tokens", "completion_tokens", "model_seconds"):
            stage[name] += made[name]
    return stages


def replay(name: str, overrides: list[str], runs: list[Path], calls: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One variant: the ledger's stored questions answered again (or, for a variant in BASES, another method's
    stored questions, its own calls answered from its run's traces), scored by the ledger run's metrics."""
    method_name, base = BASES.get(name, ("ledger", runs[0]))
    if base != runs[0] or name in ANSWERS_FROM:
        calls = {**stored_calls([ANSWERS_FROM.get(name, base)]), **calls}
    settings = settings_of(runs[0], overrides)
    llm = build_llm(settings.llm, settings.cache_dir, backend=replay_backend(calls))
    method = make_method(method_name, Resources.for_llm(llm, settings, embedder=HashEmbedder()))
    stored_run = json.loads((runs[0] / "run.json").read_text())
    examples = {e.id: e for e in load_dataset(stored_run["dataset"])[1]}
    rows, totals = [], {m: [] for m in stored_run["metrics"]}
    for line in (base / "predictions.jsonl").read_text().splitlines():
        stored = json.loads(line)
        if stored["method"] != method_name:
            continue
        hits = [RetrievedPassage(passage=Passage(**p["passage"]), score=p["score"], rank=p["rank"])
                for p in stored["passages"]]
        answer = method.answer(Question(text=stored["question"]), hits)
        scores = {m: METRICS.get(m)(answer, examples[stored["id"]]) for m in stored_run["metrics"]}
        for metric, value in scores.items():
            if value is not None:
                totals[metric].append(value)
        stages = usage_of(answer.trace.calls, calls)
        example = examples[stored["id"]]
        rows.append(Prediction(  # as the eval writes it, without the passages (in the stored run) and the calls
            id=example.id, question=example.question, method=method_name, answer=answer.text,
            citations=answer.citations, passage_ids=[h.passage.id for h in answer.passages], gold=example.answers,
            metrics=scores, parts=answer.parts, tangles=example.tangles, trace=Trace(steps=answer.trace.steps),
            usage={k: sum(stage[k] for stage in stages.values()) for k in USAGE_KEYS}, usage_by_stage=stages))
    means = {m: sum(v) / len(v) for m, v in totals.items() if v}
    out = STORED / "replay" / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "predictions.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows))
    (out / "results.json").write_text(json.dumps({
        "dataset": stored_run["dataset"], "n": len(rows), "replayed_from": [r.name for r in runs],
        "overrides": overrides, "results": [{"method": method_name, "metrics": means}],
        "setting": {"passage_scope": "the stored run's passages, in their stored order"}}, indent=1) + "\n")
    return means


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(VARIANTS), help=f"variants: {', '.join(VARIANTS)}")
    parser.add_argument("--from", dest="runs", nargs="+", default=["ledger", "ledger-prior"],
                        help="stored runs under docs/results/conflicts (or paths) whose calls answer the replay")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; known: {', '.join(VARIANTS)}")
    runs = [Path(r) if "/" in r else STORED / r for r in args.runs]
    calls = stored_calls(runs)
    for name in args.names:
        try:
            means = replay(name, VARIANTS[name], runs, calls)
        except MissingCall as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            continue
        print(name, " ".join(f"{k}={100 * v:.1f}" for k, v in means.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
