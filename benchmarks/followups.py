"""Issue 52, item 1: follow-up sets made from AmbigNQ and ASQA dev, and their benchmark (with and without history).

Source and license: AmbigNQ light dev (Min et al., EMNLP 2020), agential-ai/agential @ ada38e88 : data/ambignq/
(copied unchanged into ../shared/data/ambignq/dev_light.json); CC BY-SA 3.0, its questions from Natural Questions.
Keep this attribution with any copy of the set.

How an ambiguous question becomes a conversation (``build``):
- AmbigNQ gives an ambiguous question Q ("Who sang i fooled around and fell in love?") and its disambiguated
  questions with their answers ("... in 1976?" Mickey Thomas; "... in 1985?" T. G. Sheppard).
- A disambiguated question B is kept when it is Q with words added at its end and nothing else changed (token
  diff, case and the question mark ignored), the added words are 1-8 plain words and do not open a new clause
  (who, what, which, is, was, ...). The follow-up is "And <added words>?" ("And in 1976?"): it means B only with
  Q in view.
- The conversation: the user asks Q, the assistant answers another interpretation A of Q (the first whose
  answers share none with B's), then the follow-up. Gold: B's answers; ``other_answers``: A's, the answer a
  system gives again when it ignores the follow-up's point; ``standalone``: B itself.
- One row per ambiguous question (its first B that qualifies), in file order; ``--questions N`` draws N of them
  with ``--seed``.

What ``run`` measures, per condition: ``without`` (the follow-up asked alone: what a client ignoring the history
gets), ``with`` (``stages/followup.py`` makes it standalone from the conversation) and ``gold`` (B asked directly,
the ceiling): the token F1 of the question asked against B (SQuAD-normalised), how many rewrites were made, and,
unless ``--no-answer``, the method's answer scored by answer recall (a gold alias in the answer, normalised) and
``other`` (an answer of A in it instead). AmbigNQ has no corpus here, so its set is answered with no passages;
``build --source asqa`` makes the same conversations from ASQA dev (AmbigNQ's questions) with the Wikipedia
passages of every interpretation, and ``run`` answers each condition over them (``--method concat``).

``rule`` measures the cheap test that decides when a rewrite call is made (``stages/followup.depends_on_history``),
with no model: the share of the set's follow-ups it catches, and the share of standalone questions (NQ-open dev)
it would send to a needless rewrite had they come with a history.

Usage:
  .venv/bin/python benchmarks/followups.py rule [--set ...jsonl] [--standalone ../shared/data/nq-open/dev.jsonl]
  .venv/bin/python benchmarks/followups.py build [--input ../shared/data/ambignq/dev_light.json] [--questions 50]
        [--seed 0] --out benchmarks/data/followups_ambignq_dev.jsonl
  .venv/bin/python benchmarks/followups.py build --source asqa --input ../shared/data/asqa/dev.jsonl
        --out benchmarks/data/followups_asqa_dev.jsonl
  .venv/bin/python benchmarks/followups.py run --set benchmarks/data/followups_ambignq_dev.jsonl
        [--method closed-book] [--limit N] [--no-answer] --out runs/followups [--set-option llm.n_ctx=...]
The ``run`` step makes one rewrite call a row (cached) and, with answers, three method calls a row; results of both
sets on the embedded model are in docs/results/followups*/.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tanglerag.aio import run_sync
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.stages.followup import Turn, depends_on_history, standalone
from tanglerag.text import normalize_answer, token_f1
from tanglerag.tracking import Tracker, track
from tanglerag.types import Passage, Question, RetrievedPassage

_WORD = re.compile(r"[\w'-]+|[^\w\s]")
_CLAUSE = {"who", "whom", "whose", "what", "which", "when", "where", "why", "how", "is", "was", "are", "were", "that"}
CONDITIONS = ("without", "with", "gold")


def _words(question: str) -> list[str]:
    return _WORD.findall(question.strip().rstrip("?").strip())


def added_at_end(question: str, disambiguated: str) -> str | None:
    """The words ``disambiguated`` adds at the end of ``question`` when that is all it changes, else None."""
    asked, meant = _words(question), _words(disambiguated)
    diff = [op for op in difflib.SequenceMatcher(a=[w.lower() for w in asked], b=[w.lower() for w in meant],
                                                 autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(diff) != 1 or diff[0][0] != "insert" or diff[0][4] != len(meant):
        return None
    added = meant[diff[0][3]:]
    if not 1 <= len(added) <= 8 or added[0].lower() in _CLAUSE or not all(re.fullmatch(r"[\w'-]+", w) for w in added):
        return None
    return " ".join(added)


def rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One conversation per ambiguous question that has a disambiguation usable as a follow-up."""
    out = []
    for record in records:
        pairs = next((a["qaPairs"] for a in record.get("annotations", []) if a.get("type") == "multipleQAs"), [])
        for meant in pairs:
            added = added_at_end(record["question"], meant["question"])
            gold = {normalize_answer(a) for a in meant["answer"]}
            other = next((p for p in pairs if p is not meant and not gold & {normalize_answer(a) for a in p["answer"]}),
                         None)
            if added is None or other is None:
                continue
            out.append({"id": record["id"], "question": f"And {added}?",
                        "history": [{"role": "user", "content": record["question"]},
                                    {"role": "assistant", "content": other["answer"][0]}],
                        "standalone": meant["question"], "answers": meant["answer"],
                        "other_answers": other["answer"], "original": record["question"]})
            break
    return out


def _asqa_passages(record: dict[str, Any]) -> list[dict[str, str]]:
    """The Wikipedia passages ASQA's annotators wrote their answers from, then each interpretation's own context:
    text about every reading of the question, the way a retriever would return it for the ambiguous question."""
    found = [(k.get("wikipage") or "", k["content"]) for a in record["annotations"] for k in a.get("knowledge", [])]
    found += [(p.get("wikipage") or "", p.get("context") or "") for p in record["qa_pairs"]]
    seen: set[str] = set()
    out = []
    for title, text in found:
        key = normalize_answer(text)
        if len(key.split()) >= 20 and key not in seen:
            seen.add(key)
            out.append({"id": f"{record['sample_id']}-{len(out)}", "title": title, "text": text})
    return out


def asqa_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """ASQA's questions are AmbigNQ's, with passages: the same conversations, each with the passages to answer from
    (those with none are left out)."""
    by_id = {str(r["sample_id"]): r for r in records}
    ambignq = [{"id": key, "question": r["ambiguous_question"], "annotations": [{"type": "multipleQAs", "qaPairs": [
        {"question": p["question"], "answer": p["short_answers"]} for p in r["qa_pairs"]]}]} for key, r in by_id.items()]
    found = [row | {"passages": _asqa_passages(by_id[row["id"]])} for row in rows(ambignq)]
    return [row for row in found if row["passages"]]


INPUTS = {"ambignq": "../shared/data/ambignq/dev_light.json", "asqa": "../shared/data/asqa/dev.jsonl"}
"""Where each source's dev file lies beside the repository (``build --input`` names another)."""


def build(args: argparse.Namespace) -> None:
    text = Path(args.input or INPUTS[args.source]).read_text(encoding="utf-8")
    if args.source == "asqa":
        found = asqa_rows(json.loads(line) for line in text.splitlines() if line.strip())
    else:
        found = rows(json.loads(text))
    if args.questions is not None and args.questions < len(found):
        keep = set(map(id, random.Random(args.seed).sample(found, args.questions)))
        found = [row for row in found if id(row) in keep]
    Path(args.out).write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in found), encoding="utf-8")
    print(f"{len(found)} follow-ups -> {args.out}", file=sys.stderr)


def _found(answer: str, golds: list[str]) -> bool:
    said = f" {normalize_answer(answer)} "
    return any(f" {normalize_answer(g)} " in said for g in golds if normalize_answer(g))


def measure(runtime: Runtime, row: dict[str, Any], method: str | None) -> dict[str, Any]:
    """Each condition's question, its F1 against the gold standalone question, and the answer if asked."""
    history = [Turn.model_validate(turn) for turn in row["history"]]
    passages = [RetrievedPassage(passage=Passage.model_validate(p), score=1.0, rank=rank)
                for rank, p in enumerate(row.get("passages", []), 1)]
    out: dict[str, Any] = {"id": row["id"]}
    for condition in CONDITIONS:
        tracker = Tracker()
        with track(tracker):
            if condition == "with":
                asked = run_sync(standalone(runtime.llm, history, row["question"], runtime.settings.conversation))
            else:
                asked = row["question"] if condition == "without" else row["standalone"]
            result: dict[str, Any] = {"question": asked, "question_f1": token_f1(asked, row["standalone"])}
            if method is not None:
                answer = runtime.method(method).answer(Question(text=asked), passages)
                result |= {"answer": answer.text, "recall": _found(answer.text, row["answers"]),
                           "other": _found(answer.text, row["other_answers"])}
        result["rewrites"] = tracker.usage.stages["rewrite"].total_calls if "rewrite" in tracker.usage.stages else 0
        out[condition] = result
    return out


def summary(measured: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for condition in CONDITIONS:
        results = [m[condition] for m in measured]
        n = max(len(results), 1)
        table[condition] = {"question_f1": round(100 * sum(r["question_f1"] for r in results) / n, 1),
                            "rewrites": sum(r["rewrites"] for r in results)}
        if results and "recall" in results[0]:
            table[condition] |= {"recall": round(100 * sum(r["recall"] for r in results) / n, 1),
                                 "other": round(100 * sum(r["other"] for r in results) / n, 1)}
    return table


def markdown(table: dict[str, dict[str, float]], n: int, method: str | None) -> str:
    columns = list(next(iter(table.values())))
    lines = [f"Follow-ups: {n} (method: {method or 'none, questions only'})", "",
             "| condition | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(str(row[c]) for c in columns) + " |" for name, row in table.items()]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, runtime: Runtime | None = None) -> dict[str, dict[str, float]]:
    settings = Settings.load(None, args.set_option or [])
    runtime = runtime or Runtime(settings)
    found = [json.loads(line) for line in Path(args.set).read_text(encoding="utf-8").splitlines() if line.strip()]
    found = found[:args.limit] if args.limit else found
    method = None if args.no_answer else args.method
    measured = [measure(runtime, row, method) for row in found]
    table = summary(measured)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "conversations.jsonl").write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in measured),
                                           encoding="utf-8")
    (out / "results.md").write_text(markdown(table, len(measured), method), encoding="utf-8")
    (out / "results.json").write_text(json.dumps({"n": len(measured), "method": method, "conditions": table,
                                                  "conversation": runtime.settings.conversation.model_dump()},
                                                 indent=2), encoding="utf-8")
    print(markdown(table, len(measured), method), end="")
    return table


def rule(args: argparse.Namespace) -> dict[str, float]:
    """How often the rewrite test fires on the follow-ups (should: always) and on standalone questions (should not)."""
    followups = [json.loads(line)["question"] for line in Path(args.set).read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    alone = [json.loads(line)["question"] for line in Path(args.standalone).read_text(encoding="utf-8").splitlines()
             if line.strip()]
    caught = sum(depends_on_history(q) is not None for q in followups)
    needless = sum(depends_on_history(q) is not None for q in alone)
    result = {"followups": len(followups), "caught_pct": round(100 * caught / max(len(followups), 1), 1),
              "standalone": len(alone), "needless_pct": round(100 * needless / max(len(alone), 1), 1)}
    print(json.dumps(result))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build")
    make.add_argument("--input", default=None, help="the source's dev file (default: its copy in ../shared/data)")
    make.add_argument("--source", choices=["ambignq", "asqa"], default="ambignq",
                      help="asqa: ASQA dev JSONL, each conversation with its Wikipedia passages")
    make.add_argument("--questions", type=int, default=None)
    make.add_argument("--seed", type=int, default=0)
    make.add_argument("--out", required=True)
    bench = sub.add_parser("run")
    bench.add_argument("--set", required=True, help="the follow-up set (JSONL) that build wrote")
    bench.add_argument("--method", default="closed-book")
    bench.add_argument("--limit", type=int, default=None)
    bench.add_argument("--no-answer", action="store_true", help="score the questions only (one call a row)")
    bench.add_argument("--set-option", action="append", help="a setting, e.g. conversation.max_turns=4")
    bench.add_argument("--out", required=True)
    test = sub.add_parser("rule")
    test.add_argument("--set", default="benchmarks/data/followups_ambignq_dev.jsonl")
    test.add_argument("--standalone", default="../shared/data/nq-open/dev.jsonl")
    args = parser.parse_args(argv)
    {"build": build, "run": run, "rule": rule}[args.command](args)


if __name__ == "__main__":
    main()
