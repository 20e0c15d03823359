"""Text helpers every layer shares: answer normalization, unknown detection, citations, passage numbering.

Small models say "I don't know" in many ways; every pipeline must treat them alike, and empty or
garbage output counts as unknown instead of crashing. Passages are numbered for prompts in one place,
so ``[n]`` in a reply always means the n-th passage (1-based) of the list the prompt showed.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tanglerag.types import RetrievedPassage

UNKNOWN = "unknown"

_CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_UNKNOWN_PATTERNS = [
    # "unknown" alone or followed by punctuation / a reason, but not a title like "Unknown Pleasures"
    r"^\W*unknown(\W*$|\s*[.,;:!(\[-]|\s+(because|since|as|from|based|in)\b)",
    r"\b(i|we) (do not|don't|cannot|can't|can ?not) (know|tell|say|determine|answer|find)",
    r"\b(not|no) (enough|sufficient) (information|context|evidence)",
    (r"\b(context|passages?|documents?|text|information)s? (provided )?(do(es)?n'?t|do(es)? not|did not|didn't) "
     r"(say|mention|contain|provide|specify|state|include|give)"),
    r"\b(is|are) not (mentioned|provided|specified|stated|given|available)",
    r"\bno (answer|information|mention)\b",
    r"\bcannot be (determined|answered|found)",
    r"^\W*(n/?a|none|no idea)\W*$",
]
_UNKNOWN_RE = re.compile("|".join(f"(?:{p})" for p in _UNKNOWN_PATTERNS), re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(final answer|answer|short answer|a)\s*[:\-]\s*", re.IGNORECASE)


def is_unknown(text: str | None) -> bool:
    """True for abstentions, empty output, and output with no letters or digits."""
    if text is None:
        return True
    stripped = strip_citations(text).strip()
    if not re.search(r"[^\W_]", stripped):
        return True
    return bool(_UNKNOWN_RE.search(stripped))


def cited_numbers(text: str) -> list[int]:
    """Passage numbers cited as [n] or [n, m], in order of first appearance."""
    seen: list[int] = []
    for group in _CITATION.findall(text):
        for number in _group_numbers(group):
            if number not in seen:
                seen.append(number)
    return seen


def _group_numbers(group: str) -> list[int]:
    """The numbers of one citation marker's inside: "2" or "1, 3"."""
    return [int(n) for n in re.split(r"\s*[,;]\s*", group)]


def filter_citations(text: str, keep: Callable[[int], bool]) -> str:
    """``text`` with only the citation numbers ``keep`` admits (a marker left with none is removed)."""
    def kept(match: re.Match[str]) -> str:
        numbers = [str(x) for x in _group_numbers(match.group(1)) if keep(x)]
        return f"[{', '.join(numbers)}]" if numbers else ""
    return _CITATION.sub(kept, text)


def drop_dangling_citations(text: str, n: int) -> str:
    """Remove citation numbers outside 1..n (a marker left with none is removed): text never cites
    a passage that was not shown."""
    return re.sub(r"\s+", " ", filter_citations(text, lambda x: 1 <= x <= n)).strip()


SET_ASIDE = "Set aside:"
"""Starts each line of an answer that names a side the evidence set aside: shown to the reader, not asserted."""


def asserted_text(text: str) -> str:
    """An answer's text without its ``Set aside:`` lines: what it asserts, which metrics score."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(SET_ASIDE))


def strip_citations(text: str) -> str:
    return re.sub(r"\s+", " ", _CITATION.sub("", text)).strip()


def after_streamed(text: str, streamed: str) -> str | None:
    """What of an answer's ``text`` follows the tokens already ``streamed`` to a reader (the ledger's ``Set aside:``
    lines, a chat reply's sources), or None when the method changed what the model wrote (an unknown said in words,
    a citation dropped) and all of it must be shown. A method that asked twice (``vetted``, when its rules overrule
    the first answer) streamed two answers, each ending its own line: the answer is the last line streamed. One rule
    for the terminal and the chat routes, so both show an answer once."""
    shown = streamed.strip()
    for printed in (shown, shown.rsplit("\n", 1)[-1]):
        if printed and text.startswith(printed):
            return text[len(printed):]
    return None


def first_answer_line(text: str) -> str:
    """The answer part of a reply: first non-empty line, without an 'Answer:' prefix."""
    for line in text.strip().splitlines():
        if line.strip():
            return _PREFIX.sub("", line.strip()).strip()
    return ""


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | set("\u2010\u2011\u2012\u2013\u2014\u2015")  # ASCII's and the dashes


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def best_over(metric: Callable[[str, str], float], prediction: str, golds: list[str]) -> float:
    return max((metric(prediction, gold) for gold in golds), default=0.0)


MAX_CHARS_PER_WORD = 30
"""Words are the unit of the clip, but a 'word' can be a whole megabyte without spaces: the clip bounds both."""


_CITATION_MARK = re.compile(r"\[(\s*\d+(?:\s*[,;–-]\s*\d+)*\s*)\]")


def fence(text: str) -> str:
    """Passage text as a prompt quotes it: on one line (a prompt's passages are separated by line breaks, which
    the text then cannot forge) and with its own citation marks written ``(9)``, so ``[9] HR handbook: ...`` inside
    a passage cannot pass for a numbered passage or cite one."""
    return _CITATION_MARK.sub(r"(\1)", " ".join(text.split()))


def clip_words(text: str, max_words: int | None) -> str:
    """The first ``max_words`` words, at most ``MAX_CHARS_PER_WORD`` characters each on average (all of the
    text for None), fenced (``fence``): prompt length is the cost."""
    if max_words is None:
        return fence(text)
    return fence(" ".join(text.split()[:max_words])[:max_words * MAX_CHARS_PER_WORD])


def clip_title(title: str, max_words: int | None) -> str:
    """A title as a prompt shows it: bounded like the text (``max_words``, ``methods.passage_words``), since a title
    is prompt too and one of megabytes would be sent whole; fenced like the text."""
    if max_words is None or (len(title) <= max_words * MAX_CHARS_PER_WORD and len(title.split()) <= max_words):
        return fence(title)
    return clip_words(title, max_words)


def number_passages(passages: Sequence[RetrievedPassage], max_words: int | None = None, *,
                    title_sep: str | None = ": ", joiner: str = "\n\n") -> str:
    """Render passages as ``[n] Title<title_sep>text`` blocks numbered from 1, the form citations refer to; title
    and text are each clipped to ``max_words`` (every method's prompt shows titles through here).

    ``title_sep=None`` leaves titles out (COrg's context block); prompts differ only in these two knobs.
    """
    blocks = []
    for i, hit in enumerate(passages, 1):
        shown = clip_title(hit.passage.title, max_words) if title_sep is not None else ""
        title = f"{shown}{title_sep}" if shown else ""
        blocks.append(f"[{i}] {title}{clip_words(hit.passage.text, max_words)}")
    return joiner.join(blocks)
