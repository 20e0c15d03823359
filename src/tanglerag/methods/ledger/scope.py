"""The scope a question asks for selects the claims about it: "How much is the Pro plan?" is answered by the claim
about the Pro membership, not by the one about the Basic membership beside it, which is another scope (a plan, a
region, a member class, a period), not a rival answer.

Read from the claims' ``about`` (what the model says each answer is about) against the question's words: when some
claims are about a word the question names and others are about something else instead, naming none of the
question's words those claims do not name too ("the Basic membership" beside "the Pro membership"), the others
compete for nothing. A claim whose ``about`` names no scope of its own (the bare subject), or names the question's
words in other ways ("the Tarrow to Keel Point stretch" beside "the coastal path" for a hike from Tarrow to Keel
Point), or whose passage names the scope asked for, is left alone; so is a version of a document another claim comes from (versions conflict whatever they are about).
"""

from __future__ import annotations

from tanglerag.conflicts import Claim
from tanglerag.methods.ledger.relevance import content_stems


def _about(claim: Claim) -> set[str]:
    return content_stems(claim.about) - content_stems(claim.answer)


def select_scope(claims: list[Claim], question: str, document: dict[str, int], texts: dict[str, str]) -> None:
    """Mark the competing claims about another scope than the one the question names (``dropped_by``, the
    ``scope`` rule). ``document``: each passage's document (copies and versions share one); ``texts``: each
    passage's words, since a passage that names the scope asked for is about it whatever its claim's ``about``
    says ("Travel policy" for a yearly travel allowance)."""
    asked = content_stems(question)
    competing = [c for c in claims if c.competes]
    for word in sorted(asked):
        named = [c for c in competing if word in _about(c)]
        if not named or len(named) == len(competing):
            continue
        theirs = set().union(*(_about(c) for c in named)) | asked
        shared = set().union(*(_about(c) & asked for c in named))
        versions = {document[c.passage_id] for c in named}
        for claim in competing:
            other = _about(claim) - theirs
            if claim in named or not other or (_about(claim) & asked) - shared or document[claim.passage_id] in versions \
                    or word in content_stems(texts.get(claim.passage_id, "")):
                continue
            claim.dropped_by = f"scope: about {' '.join(sorted(other))}, the question asks for {word}"
