"""Majority vote over an answer pool (post-fusion, self-consistency)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from tanglerag.text import normalize_answer, strip_citations


class VoteCount(BaseModel):
    """One row of the vote table (post-fusion's trace keeps it)."""

    answer: str
    votes: int
    passage_ids: list[str]


@dataclass(frozen=True)
class Candidate:
    """One answer in the pool: its text, the passage it came from and that passage's retrieval rank."""

    text: str
    passage_id: str | None
    rank: int
    unknown: bool = False

    @property
    def key(self) -> str:
        return normalize_answer(strip_citations(self.text))


def majority_vote(pool: list[Candidate]) -> tuple[Candidate | None, list[Candidate]]:
    """Return (winner, its supporters). Unknowns do not vote.

    Ties go to the answer whose best supporting passage ranks highest in retrieval,
    which makes the vote deterministic and prefers what the retriever trusted most.
    """
    groups: dict[str, list[Candidate]] = {}
    for cand in pool:
        if not cand.unknown and cand.key:
            groups.setdefault(cand.key, []).append(cand)
    if not groups:
        return None, []
    best_key = min(groups, key=lambda k: (-len(groups[k]), min(c.rank for c in groups[k])))
    supporters = sorted(groups[best_key], key=lambda c: c.rank)
    return supporters[0], supporters


def tally(pool: list[Candidate]) -> list[VoteCount]:
    """The vote table: each distinct non-unknown answer with its votes and passages, most votes first."""
    groups: dict[str, list[Candidate]] = {}
    for cand in pool:
        if not cand.unknown and cand.key:
            groups.setdefault(cand.key, []).append(cand)
    rows = sorted(groups.values(), key=lambda g: (-len(g), min(c.rank for c in g)))
    return [VoteCount(answer=min(g, key=lambda c: c.rank).text, votes=len(g),
                      passage_ids=list(dict.fromkeys(c.passage_id for c in g if c.passage_id is not None)))
            for g in rows]
