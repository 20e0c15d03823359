"""Why does the small model answer "unknown" to the multi-answer prompt? Try prompt variants on one call per question.

Every COrg-family method asks with the shared multi-answer prompt (`organize.prompts.MULTI_ANSWER_TASK`). This probe
asks Base's single call (all of a question's own documents, at most 10) with the current prompt and with variants
that each change one thing, on a seeded sample of RAMDocs dev (use a seed other than the reports' to keep the
report sample untouched), and prints per variant: the unknown rate for one-answer and for two-answer questions,
answer recall (Ans), parts per reply, the share of parts with a descriptor, and prompt tokens. Dev data only.
`--contexts noise` asks each question that has noise documents with those documents only: there the right reply is
unknown, so the unknown rate is the true-abstention rate a prompt change must keep.
Usage: python benchmarks/multi_answer_probe.py [--sample 30] [--seed 7] [--variants current,no-examples,...]
       [--contexts own|noise] [--show]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from statistics import mean

from tanglerag.datasets.registry import load_dataset
from tanglerag.embeddings import Embedder
from tanglerag.eval.passages import PassageBuilder
from tanglerag.llm.base import Message
from tanglerag.llm.factory import build_llm
from tanglerag.methods.corg.prompts import MULTI_ANSWER_TASK, READER_SYSTEM
from tanglerag.metrics.registry import compute
from tanglerag.settings import Settings
from tanglerag.stages.multi_answer import parse_parts, render
from tanglerag.tables import Table
from tanglerag.text import number_passages
from tanglerag.types import Answer

Variant = Callable[[str, str], list[Message]]
EXAMPLES = ("For example:\nJuly 27, 2007 (The Simpsons movie) [1][3]\nDecember 17, 1989 (The Simpsons TV series) [2]\n")
UNKNOWN = "If no context answers the question, write: unknown\n"
# The shared prompt before this probe; the variants below change one thing in it ("current" is the prompt now,
# the same messages as pipe-fields).
EARLIER_TASK = (
    "Question: {question}\n"
    "The contexts may describe different people or things with this name, and they may disagree. List every "
    "different answer they give, one per line, as: answer (what it is about) [context numbers]\n"
    f"{EXAMPLES}{UNKNOWN}Answers:")


def _ask(block: str, task: str, system: str = READER_SYSTEM) -> list[Message]:
    return [Message(role="system", content=system), Message(role="user", content=f"Contexts:\n{block}\n\n{task}")]


def current(question: str, block: str) -> list[Message]:
    return _ask(block, MULTI_ANSWER_TASK.format(question=question))


def earlier(question: str, block: str) -> list[Message]:
    return _ask(block, EARLIER_TASK.format(question=question))


def no_examples(question: str, block: str) -> list[Message]:
    return _ask(block, EARLIER_TASK.format(question=question).replace(EXAMPLES, ""))


def no_unknown_line(question: str, block: str) -> list[Message]:
    return _ask(block, EARLIER_TASK.format(question=question).replace(UNKNOWN, ""))


def unknown_as_last_resort(question: str, block: str) -> list[Message]:
    task = EARLIER_TASK.format(question=question).replace(
        UNKNOWN, "Most questions are answered by at least one context: give every answer they state. Write unknown "
                 "only when no context mentions an answer at all.\n")
    return _ask(block, task)


def unknown_if_unrelated(question: str, block: str) -> list[Message]:
    task = EARLIER_TASK.format(question=question).replace(
        UNKNOWN, "Write unknown only if none of the contexts is about what the question asks.\n")
    return _ask(block, task)


def no_descriptor(question: str, block: str) -> list[Message]:
    task = (f"Question: {question}\nList every different answer the contexts give, one per line, with the numbers "
            "of the contexts that give it, as: answer [context numbers]\nIf no context answers the question, write: "
            "unknown\nAnswers:")
    return _ask(block, task)


def question_first(question: str, block: str) -> list[Message]:
    task = EARLIER_TASK.format(question=question)
    return [Message(role="system", content=READER_SYSTEM),
            Message(role="user", content=f"Question: {question}\n\nContexts:\n{block}\n\n{task}")]


IF_UNRELATED = "Write unknown only if none of the contexts is about what the question asks.\n"


def _format_task(question: str, how: str, film: str, show: str) -> str:
    """The prompt with another answer-line format: how to write a line, and the two example lines."""
    return (f"Question: {question}\nThe contexts may describe different people or things with this name, and they "
            f"may disagree. {how}\nFor example:\n{film}\n{show}\n{IF_UNRELATED}Answers:")


def pipe_fields(question: str, block: str) -> list[Message]:
    return _ask(block, _format_task(
        question, "List every different answer they give, one per line, as: answer | which one it is about | "
                  "[context numbers]", "July 27, 2007 | The Simpsons movie | [1][3]",
        "December 17, 1989 | The Simpsons TV series | [2]"))


def about_first(question: str, block: str) -> list[Message]:
    return _ask(block, _format_task(
        question, "For every different answer they give, write one line: first which one it is about, then a colon, "
                  "the answer and the context numbers.", "The Simpsons movie: July 27, 2007 [1][3]",
        "The Simpsons TV series: December 17, 1989 [2]"))


VARIANTS: dict[str, Variant] = {"pipe-fields": pipe_fields, "about-first": about_first, "earlier": earlier, "current": current, "no-examples": no_examples, "no-unknown-line": no_unknown_line,
                                "unknown-last-resort": unknown_as_last_resort,
                                "unknown-if-unrelated": unknown_if_unrelated, "no-descriptor": no_descriptor,
                                "question-first": question_first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--contexts", choices=["own", "noise"], default="own",
                        help="noise: only the noise documents of questions that have some (the right reply: unknown)")
    parser.add_argument("--reverse", action="store_true", help="also try each variant with the passages reversed")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    settings = Settings.load()
    _, examples = load_dataset("ramdocs", sample=args.sample, seed=args.seed)
    llm = build_llm(settings.llm, settings.cache_dir)
    builder = PassageBuilder(examples, Embedder(settings.embedding), settings.eval)
    hits = {ex.id: builder.build(ex, 10) for ex in examples}
    if args.contexts == "noise":
        hits = {qid: [h for h in hs if h.passage.metadata.get("type") == "noise"] for qid, hs in hits.items()}
        examples = [ex for ex in examples if hits[ex.id]]
    orders = [False, True] if args.reverse else [False]
    table = Table(["variant", "order", "unk (1-answer q)", "unk (2-answer q)", "Ans", "parts/reply", "described",
                   "prompt tok"])
    print(table.markdown())
    for name in args.variants.split(","):
        for reverse in orders:
            unknown = {1: [], 2: []}
            recall, parts_n, tokens, described = [], [], [], []
            for ex in examples:
                passages = list(reversed(hits[ex.id])) if reverse else hits[ex.id]
                block = number_passages(passages, settings.methods.passage_words, title_sep=None)
                reply = llm.complete(VARIANTS[name](ex.question, block), llm.params(max_tokens=args.max_tokens))
                raw = reply.text
                if name == "about-first":  # "about: answer [n]" -> "answer | about | [n]"
                    raw = "\n".join(f"{m[2]} | {m[1]} | " if (m := re.match(r"^\s*([^:\[\]]{2,120}?):\s+(.+)$", line))
                                    else line for line in raw.splitlines())
                parts = parse_parts(raw, passages, None)
                text, cited = render(parts, passages)
                answer = Answer(question=ex.question, method="base", text=text or "unknown", citations=cited,
                                passages=passages, parts=parts, is_unknown=not parts)
                unknown[min(2, len(ex.answers))].append(float(answer.is_unknown))
                recall.append(compute(["ans"], answer, ex)["ans"] or 0.0)
                parts_n.append(len(parts))
                described += [bool(p.descriptor.strip()) for p in parts]
                tokens.append(reply.prompt_tokens)
                if args.show:
                    print(f"  [{name}] {ex.question} -> {reply.text!r}")
            table.add(name, "reversed" if reverse else "retrieval",
                      *(f"{100 * mean(unknown[k] or [0]):.0f}% (n={len(unknown[k])})" for k in (1, 2)),
                      f"{100 * mean(recall):.1f}", f"{mean(parts_n):.2f}", f"{100 * mean(described or [0]):.0f}%",
                      f"{mean(tokens):.0f}")
            print(table.last_line())


if __name__ == "__main__":
    main()
