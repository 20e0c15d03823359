"""Scores for answers over conflicting documents (RAMDocs' labels): the MADAM-RAG paper's strict score and what
leaks through.

RAMDocs labels each document correct / misinfo / noise and lists the question's gold and wrong answers. The
MADAM-RAG paper scores a response correct only when it contains every gold answer and none of the wrong ones
(matched after SQuAD normalisation, as containment in the response). We match whole words of the normalised
response, so a wrong answer "19" is not found inside "1990"; that is stricter than a plain substring test, and the
only difference we know of. The response is what the answer asserts: the ledger's ``Set aside:`` lines, which name
the answers it rejected and why, are shown to the reader but not scored as given (``tanglerag.text.asserted_text``).
"""

from __future__ import annotations

from tanglerag.conflicts import ConflictStep
from tanglerag.datasets.base import QAExample
from tanglerag.metrics.registry import METRICS
from tanglerag.text import asserted_text, normalize_answer, strip_citations
from tanglerag.types import Answer


def _contains(response: str, answer: str) -> bool:
    wanted = normalize_answer(answer)
    return bool(wanted) and f" {wanted} " in f" {response} "


def _response(answer: Answer) -> str:
    """The normalised response (every line: multi-answer methods give one per answer); empty when unknown."""
    return "" if answer.is_unknown else normalize_answer(strip_citations(asserted_text(answer.text)))


def _wrong(example: QAExample) -> list[str]:
    return [w for w in example.metadata.get("wrong_answers") or [] if isinstance(w, str) and normalize_answer(w)]


@METRICS.add("answer_recall")
def gold_answers_contained(answer: Answer, example: QAExample) -> float | None:
    """Share of the gold answers the response contains, each as whole words (not the token recall of ``ans``)."""
    golds = [g for g in example.answers if normalize_answer(g)]
    if not golds:
        return None
    response = _response(answer)
    return sum(_contains(response, g) for g in golds) / len(golds)


@METRICS.add("ramdocs_strict")
def ramdocs_strict(answer: Answer, example: QAExample) -> float | None:
    """1 when the response contains every gold answer and no wrong answer (the MADAM-RAG paper's score)."""
    recall = gold_answers_contained(answer, example)
    if recall is None:
        return None
    response = _response(answer)
    return float(recall == 1.0 and not any(_contains(response, w) for w in _wrong(example)))


@METRICS.add("misinfo_leak")
def misinfo_leak(answer: Answer, example: QAExample) -> float | None:
    """1 when a wrong answer (a misinformation document's) appears in the response; None without wrong answers."""
    wrong = _wrong(example)
    if not wrong:
        return None
    response = _response(answer)
    return float(any(_contains(response, w) for w in wrong))


@METRICS.add("tangle_score")
def tangle_score(answer: Answer, example: QAExample) -> float | None:
    """One score for questions of every kind (the auto report's): the share of gold answers the response contains,
    0 when it also contains a known wrong answer, so repeating misinformation costs as much as answering nothing."""
    recall = gold_answers_contained(answer, example)
    if recall is None:
        return None
    return 0.0 if misinfo_leak(answer, example) else recall


@METRICS.add("noise_cited")
def noise_cited(answer: Answer, example: QAExample) -> float | None:
    """1 when the response cites a document labelled noise; None when the question has none."""
    noise = {p.id for p in example.passages if p.metadata.get("type") == "noise"}
    if not noise:
        return None
    return float(bool(noise & set(answer.citations)))


@METRICS.add("as_of_correct")
def as_of_correct(answer: Answer, example: QAExample) -> float | None:
    """For a question asked "as of" a date (metadata ``as_of``, the freshness set's): 1 when the response gives the
    answer valid then, in any of its spellings (``answers`` and ``aliases``), and none of the answers the other
    dates had (``wrong_answers``); None for other questions, so a run's mean is the share of as-of questions answered
    with the answer valid at that date. ``accuracy`` would pass a response that lists every date's answer."""
    if not example.metadata.get("as_of"):
        return None
    spellings = [*example.answers, *(a for a in example.metadata.get("aliases") or [] if isinstance(a, str))]
    response = _response(answer)
    return float(any(_contains(response, s) for s in spellings)
                 and not any(_contains(response, w) for w in _wrong(example)))


def _flagged(answer: Answer) -> list[str] | None:
    """The answers a method's conflict report rejected or disputed; None when it wrote no report."""
    step = answer.trace.find(ConflictStep)
    if step is None:
        return None
    return [normalize_answer(side.answer) for report in step.reports for side in report.sides
            if side.verdict in ("rejected", "disputed")]


@METRICS.add("conflict_recall")
def conflict_recall(answer: Answer, example: QAExample) -> float | None:
    """1 when the conflict report rejects or disputes a known wrong answer of a question with misinformation
    documents; None without such documents or without a report (methods that write none)."""
    flagged, wrong = _flagged(answer), _wrong(example)
    if flagged is None or not wrong or "misinformation" not in example.tangles:
        return None
    return float(any(_contains(side, w) or _contains(normalize_answer(w), side) for side in flagged for w in wrong
                     if side))


def _gold_disagrees(example: QAExample) -> bool:
    """The question's evidence disagrees by its dataset's labels: a passage with misinformation or a conflicting
    answer (RAMDocs, conflictQA), or passages dated with the answers other dates had (the freshness set), which a
    report is right to call outdated."""
    tangles = set(example.tangles)
    return bool(tangles & {"misinformation", "conflict"}) or ("temporal" in tangles and bool(_wrong(example)))


@METRICS.add("false_conflict_rate")
def false_conflict_rate(answer: Answer, example: QAExample) -> float | None:
    """1 when the report finds a conflict (a side rejected or disputed) in a question whose evidence does not
    disagree by its labels; None for questions whose evidence does, or without a report."""
    flagged = _flagged(answer)
    if flagged is None or _gold_disagrees(example):
        return None
    return float(bool(flagged))
