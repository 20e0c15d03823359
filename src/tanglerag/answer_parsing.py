"""Turn raw model text into an answer: citations, and one canonical UNKNOWN.

Small models say "I don't know" in many ways; every pipeline must treat them alike,
and empty or garbage output counts as unknown instead of crashing.
"""

from __future__ import annotations

import re

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
        for number in re.split(r"\s*[,;]\s*", group):
            value = int(number)
            if value not in seen:
                seen.append(value)
    return seen


def strip_citations(text: str) -> str:
    return re.sub(r"\s+", " ", _CITATION.sub("", text)).strip()


def first_answer_line(text: str) -> str:
    """The answer part of a reply: first non-empty line, without an 'Answer:' prefix."""
    for line in text.strip().splitlines():
        if line.strip():
            return _PREFIX.sub("", line.strip()).strip()
    return ""
