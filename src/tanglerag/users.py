"""Users as the whole package knows them: a safe user id, one statement about a user, and the trace step that says
which statement an answer used.

Why core: the service checks user ids in its auth layer, the context store keeps statements, retrieval pairs them
with passages and every answer reports the one it used; none of that belongs to one method family.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from tanglerag.errors import ContextStoreError
from tanglerag.trace import TraceStep

# 1-128 of these characters, but not "." or ".." (written without look-ahead, which JSON Schema tools lack);
# also the service schema's: one definition of a valid user id
USER_ID_PATTERN = r"^([A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,127}|\.[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,126}|\.\.[A-Za-z0-9_.@-]{1,126})$"
_USER_ID = re.compile(USER_ID_PATTERN)


def check_user_id(user: str) -> str:
    """``user`` if it is a safe folder name, else ContextStoreError (a user id never escapes the store)."""
    if not _USER_ID.fullmatch(user):
        raise ContextStoreError(f"invalid user id {user!r}: use letters, digits, '_', '-', '.', '@' (max 128)")
    return user


class UserContext(BaseModel):
    """One statement about a user (called a context in the CLI, the HTTP API and the stored files)."""

    id: str
    text: str
    added_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


class PersonalContextStep(TraceStep):
    """The user statement chosen with the passages, and the combined score of the best pair."""

    kind: Literal["personal_context"] = "personal_context"
    title: ClassVar[str] = "Personal context"
    user: str
    context_id: str | None = None
    text: str | None = None
    score: float | None = None
    lam: float
    beam: int

    def lines(self) -> list[str]:
        chosen = f"{self.text} ({self.context_id}, score {self.score:.3f})" if self.text else "none"
        return [f"personal context of {self.user} (lambda {self.lam}, beam {self.beam}): {chosen}"]

    def headline(self) -> str | None:
        return f"using what we know about {self.user}: {self.text}" if self.text else None
