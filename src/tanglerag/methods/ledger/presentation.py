"""How the ledger's verdicts become the answer a person reads: what the evidence favours first, the disputed sides
marked, and every side set aside on a ``Set aside:`` line with why and where it came from ("9,000 dollars:
unverified; staff forum, undated"). Metrics score what the answer asserts: its lines but those
(``tanglerag.text.asserted_text``).

Which disputed sides are held back (``ledger.show_disputed``): ``independent`` holds back sides disputed with a
version of their own document (a conflict for certain, so neither version is asserted), and then every side of the
same dispute that is no stronger: a weaker side is never the only one asserted while a stronger one is held back (it
was the forum's rumour, asserted alone beside two handbook versions, in issue 60).
"""

from __future__ import annotations

from tanglerag.conflicts import ConflictReport, Side
from tanglerag.methods.ledger.independence import Independence
from tanglerag.methods.ledger.policies import Evidence
from tanglerag.stages.multi_answer import render
from tanglerag.text import SET_ASIDE
from tanglerag.types import AnswerPart, RetrievedPassage


def withheld(reports: list[ConflictReport], found: Independence, show_disputed: str,
             evidence: Evidence) -> list[Side]:
    """The disputed sides ``ledger.show_disputed`` leaves out of the answer text."""
    disputed = [[s for s in r.sides if s.verdict == "disputed"] for r in reports]
    if show_disputed != "independent":
        return [s for group in disputed for s in group] if show_disputed == "never" else []
    held: list[Side] = []
    for group in disputed:
        documents = [{found.document[p] for p in side.passages} for side in group]
        versions = [side for i, side in enumerate(group)
                    if any(documents[i] & other for other in documents[:i] + documents[i + 1:])]
        if versions:
            strongest = max(_strength(s, evidence) for s in versions)
            held += [s for s in group if any(s is v for v in versions) or _strength(s, evidence) <= strongest]
    return held


def _strength(side: Side, evidence: Evidence) -> tuple[int, float]:
    return side.witnesses, evidence.standing_of(side)


def _ranked(sides: list[Side], evidence: Evidence) -> list[Side]:
    """Kept before disputed, each the best witnessed and best placed first (a stable sort: ties keep their order)."""
    return sorted(sides, key=lambda s: (s.verdict != "kept", -s.witnesses, -evidence.standing_of(s)))


def asserted_parts(sides: list[Side], held: list[Side], evidence: Evidence) -> list[AnswerPart]:
    """The kept answers and the disputed ones not held back (marked)."""
    shown = [s for s in _ranked(sides, evidence)
             if s.verdict == "kept" or (s.verdict == "disputed" and all(s is not h for h in held))]
    return [AnswerPart(answer=s.answer, descriptor=f"{s.about}, disputed" if s.verdict == "disputed" else s.about,
                       citations=s.passages) for s in shown]


def _why(side: Side, held: list[Side], evidence: Evidence) -> str:
    if any(side is h for h in held):
        return f"disputed, not asserted; {evidence.provenance(side)}"
    if side.note.startswith(("outdated", "dated after")):
        return side.note
    return f"{side.note or 'rejected'}; {evidence.provenance(side)}"


def set_aside_lines(sides: list[Side], held: list[Side], passages: list[RetrievedPassage],
                    evidence: Evidence) -> tuple[list[str], list[str]]:
    """One ``Set aside:`` line per rejected or held-back side, citing its passages; and their ids."""
    position = {p.passage.id: i for i, p in enumerate(passages, 1)}
    aside = [s for s in sides if s.verdict == "rejected" or any(s is h for h in held)]
    lines = [f"{SET_ASIDE} {s.answer}{f' ({s.about})' if s.about else ''}: {_why(s, held, evidence)} "
             + "".join(f"[{position[p]}]" for p in s.passages if p in position) for s in aside]
    return [line.rstrip() for line in lines], [p for s in aside for p in s.passages]


def answer_text(sides: list[Side], held: list[Side], passages: list[RetrievedPassage],
                evidence: Evidence) -> tuple[str, list[str], list[AnswerPart]]:
    """The answer's text (asserted lines, then the set-aside ones), its citations and its asserted parts."""
    parts = asserted_parts(sides, held, evidence)
    text, citations = render(parts, passages)
    aside, aside_ids = set_aside_lines(sides, held, passages, evidence)
    return "\n".join([text, *aside]).strip(), citations + [p for p in aside_ids if p not in citations], parts
