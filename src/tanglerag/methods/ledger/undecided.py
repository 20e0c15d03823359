"""Rule ``undecided``: a document that says the asked value is not decided yet, or not published, answers "the
documents do not say".

People's documents often state that a figure does not exist yet: "We have not decided on pricing yet", "ticket prices
will be announced in the new year", "No price yet", "date to be confirmed". Beside them sits a figure for something
close (a sponsor tier, last year's exhibition, a weekend workshop), and the 1.5B model answers with it
(g-larkspur-cli-3, g-stourhaven-museum-2, g-loftworks-yoga-2). A sentence saying so, read with what it sits under (the
page's title, its heading, the sentence before it: "## larkspur Cloud" / "We have not decided on pricing yet"), that
is more about the question than the sentence the answer's value comes from (it holds more of the question's content
words, or as many and a name the question asks about that no sentence stating the value holds: "Tidemill annexe" in
"we will not publish opening hours for the annexe" under its title, against the main museum's "will open at 10am",
e-haverleigh-museum-2), in a document no older than the answer's, makes the answer unknown, with the sentence as the
reason. An older or undated note gives way to the figure (it may have come since) unless it names what the question
names and the figure's sentences do not: the undated waitlist's "We haven't set pricing yet" for Pipkin for Teams
against the dated e-mail's Premium price (h-pipkin-budget-app-3).
"""

from __future__ import annotations

import datetime
import re

from tanglerag.methods.ledger.dissent import names
from tanglerag.methods.ledger.relevance import content_stems, name_stems
from tanglerag.methods.ledger.scoped import sentence_contexts
from tanglerag.methods.ledger.values import Value
from tanglerag.types import RetrievedPassage

_NOT_YET = re.compile(
    r"\b(?:(?:has|have|had)(?:\s+not|n't)\s+(?:yet\s+)?(?:been\s+)?(?:decided|set|agreed|announced|confirmed|fixed|"
    r"published)|not\s+(?:yet\s+)?(?:been\s+)?(?:decided|agreed|announced|confirmed|fixed|published|set)\s+yet|"
    r"(?:is|are)\s+not\s+(?:yet\s+)?(?:decided|agreed|announced|confirmed|fixed)|yet\s+to\s+be\s+(?:decided|set|agreed|"
    r"announced|confirmed)|to\s+be\s+(?:confirmed|announced|decided)|\bTB[CA]\b|will\s+be\s+(?:announced|published|"
    r"confirmed|decided|set)\b|(?:we'll|we\s+will)\s+(?:announce|publish|confirm)\b|no\s+(?:price|prices|pricing|"
    r"fee|fees|cost|costs|date|dates|figure|figures)\s+yet|not\s+yet\s+(?:decided|known|priced)|"
    r"(?:will|do|does|did)(?:\s+not|n't)\s+publish|not\s+in\s+a\s+position\s+to\s+(?:give|say|confirm|publish)|"
    r"(?:charges?|prices?|fees?|rates?)\s+on\s+(?:application|request)|quoted?\s+on\s+the\s+day)",
    re.IGNORECASE)
"""Words saying a value does not exist yet (not decided, to be confirmed, will be announced, no price yet) or is not
published (we will not publish opening hours, charges on application, quoted on the day: e-haverleigh-museum-2,
f-yarrowfield-ferry-3). Not "will be" alone ("will be £12"), nor "announced" in the past ("the board announced a
rise")."""


def undecided(said: Value, cited: list[str], passages: list[RetrievedPassage], question: str,
              dates: dict[str, datetime.date | None]) -> str | None:
    """The words of a shown passage saying the asked value is not decided yet, when the answer ``said`` should give
    way to them (module docstring), else None. ``dates``: each passage's document date, None when undated."""
    asked = content_stems(question)
    if not asked:
        return None
    holders = holding(said, [h for h in passages if h.passage.id in cited], asked) or \
        holding(said, passages, asked)  # the 1.5B model may cite the passage beside the one holding its value
    if not holders:
        return None
    stated = max(cover for _, cover, _ in holders)
    held = {h.passage.id for h, _, _ in holders}
    named = name_stems(question) - \
        set().union(*(stems for _, _, stems in holders))  # names the question asks about no value's sentence holds
    newest = max((d for pid in held if (d := dates.get(pid)) is not None), default=None)
    for hit in passages:
        date = dates.get(hit.passage.id)
        stale = hit.passage.id not in held and newest is not None and (date is None or date < newest)
        contexts = sentence_contexts(hit)
        for n, (context, own) in enumerate(contexts):
            before = contexts[n - 1][1] if n else ""  # "The board agreed the 2026 exhibition's theme. Its ticket
            # prices will be announced in the new year." (g-stourhaven-museum-2): what is not decided is named before
            said_here, naming = cover(f"{before} {context}", asked), named & content_stems(f"{before} {context}")
            if _NOT_YET.search(own) and (naming if stale else True) and (
                    said_here > stated or (said_here == stated and naming)):
                return own.strip()
    return None


def holding(said: Value, passages: list[RetrievedPassage],
            asked: set[str]) -> list[tuple[RetrievedPassage, float, set[str]]]:
    """Each sentence of ``passages`` stating ``said``, as its passage, how much of the question it holds and its
    content words (read with its title, heading and label)."""
    return [(hit, cover(context, asked), content_stems(context)) for hit in passages
            for context, own in sentence_contexts(hit) if names(own, said)]


def cover(context: str, asked: set[str]) -> float:
    """The share of the question's content words ``asked`` that a sentence, read with its title, heading and label,
    holds: two sentences are compared this way rather than against a fixed threshold."""
    return len(asked & content_stems(context)) / len(asked) if asked else 0.0
