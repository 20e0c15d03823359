"""CDIT's trim log: witnesses, cut links and the separation table of one index (paper 003).

By the paper's witness theorem, a query q for which passage s1 is consistent and s2 is not is a
witness that s1 and s2 should not be linked as similar. Each judged query appends one witness per such
pair; once a pair has ``k`` witnesses it is *separated*. The log (``trim_log.jsonl`` beside the index's
manifest, outside its versioned data) is the single source of truth: witness counts, separated pairs
and HNSW cuts are all replayed from it, so it survives re-saves, rebuilds and ``--add``, and undo is
truncating it. Every write replaces the whole file atomically (write then rename) under a lock.

Retrieval applies the separation table on every index type: candidates are walked in rank order and
one separated from a passage already kept is dropped (not demoted: a demoted passage comes back as soon
as k is large enough, and the witnesses say it contradicts what the answer will be built on).

>>> log = TrimLog(Path("my-index"))  # doctest: +SKIP
>>> log.add_witnesses("who wrote it?", consistent=["p1"], inconsistent=["p7"], judge="llm:phi1", k=2)  # doctest: +SKIP
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from tanglerag.errors import IndexStoreError
from tanglerag.fileio import atomic_write_text, file_lock
from tanglerag.types import RetrievedPassage

LOG_NAME = "trim_log.jsonl"


def pair(a: str, b: str) -> tuple[str, str]:
    """The unordered pair as a canonical tuple."""
    return (a, b) if a <= b else (b, a)


class TrimEvent(BaseModel):
    seq: int
    kind: Literal["witness", "separate"]
    a: str = Field(description="witness: the consistent passage; separate: one side of the pair")
    b: str = Field(description="witness: the inconsistent passage; separate: the other side")
    query: str = ""
    judge: str = ""
    at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


class TrimState(BaseModel):
    """What the log amounts to now."""

    witnesses: dict[tuple[str, str], int] = Field(default_factory=dict)
    separated: set[tuple[str, str]] = Field(default_factory=set)
    judged_queries: int = 0
    last_seq: int = 0

    def is_separated(self, a: str, b: str) -> bool:
        return pair(a, b) in self.separated

    @property
    def pending(self) -> int:
        """Pairs with witnesses but not (yet) separated."""
        return sum(1 for p in self.witnesses if p not in self.separated)


class TrimLog:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOG_NAME

    def events(self) -> list[TrimEvent]:
        if not self.path.exists():
            return []
        events = []
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    events.append(TrimEvent.model_validate_json(line))
                except ValidationError as exc:
                    raise IndexStoreError(f"{self.path}:{n}: damaged trim log entry ({exc.errors()[0]['msg']})") from exc
        return events

    def state(self) -> TrimState:
        return replay(self.events())

    def add_witnesses(self, query: str, consistent: Iterable[str], inconsistent: Iterable[str], *, judge: str,
                      k: int) -> list[tuple[str, str]]:
        """One witness per (consistent, inconsistent) pair; the pairs that reach ``k`` witnesses are separated
        now and returned."""
        if k < 1:
            raise IndexStoreError("a link needs at least one witness to be cut")
        consistent, inconsistent = list(consistent), list(inconsistent)
        with file_lock(self.folder / ".trim.lock"):
            events = self.events()
            state = replay(events)
            seq = state.last_seq
            new: list[TrimEvent] = []
            separated_now = []
            counts = Counter(state.witnesses)
            for good in consistent:
                for bad in inconsistent:
                    if good == bad:
                        continue
                    seq += 1
                    new.append(TrimEvent(seq=seq, kind="witness", a=good, b=bad, query=query, judge=judge))
                    key = pair(good, bad)
                    counts[key] += 1
                    if counts[key] >= k and key not in state.separated and key not in separated_now:
                        seq += 1
                        new.append(TrimEvent(seq=seq, kind="separate", a=key[0], b=key[1], query=query, judge=judge))
                        separated_now.append(key)
            if new:
                self._write([*events, *new])
        return separated_now

    def undo(self, to_seq: int) -> int:
        """Forget every event after ``to_seq`` (0: all); how many were dropped."""
        with file_lock(self.folder / ".trim.lock"):
            events = self.events()
            kept = [e for e in events if e.seq <= to_seq]
            if len(kept) != len(events):
                self._write(kept)
            return len(events) - len(kept)

    def _write(self, events: list[TrimEvent]) -> None:
        atomic_write_text(self.path, "".join(e.model_dump_json() + "\n" for e in events))


def replay(events: list[TrimEvent]) -> TrimState:
    witnesses: Counter[tuple[str, str]] = Counter()
    separated: set[tuple[str, str]] = set()
    queries = set()
    for event in events:
        if event.kind == "witness":
            witnesses[pair(event.a, event.b)] += 1
            queries.add(event.query)
        else:
            separated.add(pair(event.a, event.b))
    return TrimState(witnesses=dict(witnesses), separated=separated, judged_queries=len(queries),
                     last_seq=events[-1].seq if events else 0)


def apply_separation(hits: list[RetrievedPassage], state: TrimState, k: int) -> tuple[list[RetrievedPassage],
                                                                                     list[tuple[str, str]]]:
    """The first ``k`` hits in rank order with no two separated; also (dropped, kept-one-it-clashed-with)."""
    kept: list[RetrievedPassage] = []
    dropped: list[tuple[str, str]] = []
    for hit in hits:
        clash = next((h for h in kept if state.is_separated(h.passage.id, hit.passage.id)), None)
        if clash is not None:
            dropped.append((hit.passage.id, clash.passage.id))
            continue
        kept.append(hit)
        if len(kept) == k:
            break
    return [h.model_copy(update={"rank": r}) for r, h in enumerate(kept, 1)], dropped
