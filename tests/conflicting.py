"""A corpus whose passages disagree, and a canned model that reads it: a method's answer call gets ``answer``, and
the ledger's claim calls get each passage's claim, so ``conflicts.report`` has a conflict to report (two sources
say 1963, a fan page says 1998)."""

from __future__ import annotations

from tanglerag.methods.ledger.prompts import CLAIM_SYSTEM
from tanglerag.testing import CannedBackend
from tanglerag.trace import Message
from tanglerag.types import Passage

QUESTION = "When was Michael Jordan born?"
ABOUT = "Michael Jordan, the basketball player"
JORDAN = [
    Passage(id="bio", title="Michael Jordan",
            text="Michael Jordan, the basketball player, was born on February 17, 1963 in Brooklyn."),
    Passage(id="bulls", title="Chicago Bulls",
            text="The Chicago Bulls guard Michael Jordan came into the world in 1963 and grew up in Wilmington."),
    Passage(id="fan", title="Fan page",
            text="A fan page claims that the basketball star Michael Jordan was born in 1998 somewhere in Texas."),
]
CLAIMS = {"bio": ("was born on February 17, 1963", "1963"), "bulls": ("came into the world in 1963", "1963"),
          "fan": ("was born in 1998", "1998")}


def conflicting_backend(answer: str = "1963 [1][2]") -> CannedBackend:
    """Claims as the ledger's text lines (a backend without schemas: ``auto`` falls back to them), every other call
    ``answer``."""
    def reply(messages: list[Message]) -> str:
        if messages[0].content != CLAIM_SYSTEM:
            return answer
        passage = next(p.id for p in JORDAN if p.text in messages[-1].content)
        quote, said = CLAIMS[passage]
        return f"Quote: {quote}\nAnswer: {said}\nAbout: {ABOUT}"
    return CannedBackend(responder=reply)
