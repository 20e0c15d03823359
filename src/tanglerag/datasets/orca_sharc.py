"""Build ORCA-ShARC (paper 002) from OR-ShARC: each utterance gets a set of ~10 user scenarios.

The set is the utterance's gold scenario plus scenarios sampled at random (seeded) from the split,
kept only when they do not contradict the gold one. To stay affordable on a CPU, one LLM call judges
a whole batch of candidates, and two cheap prefilters spare it most candidates: those from the same
source page are dropped (same rule, so likely conflicting or a second gold), and with an embedder,
candidates whose embedding is far from the gold scenario (cosine below ``judge_above``) are kept
unjudged: a statement on another topic cannot contradict it. Judgments are cached like every LLM call.
Utterances that share a scenario (and page) share its sampled contexts: they stand for the same user
asking again, and a scenario is judged once however many utterances carry it.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from tanglerag.datasets.base import iter_json_records, require
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import DatasetError
from tanglerag.fileio import atomic_write_text
from tanglerag.jsonio import loads as json_loads
from tanglerag.llm.client import LLM
from tanglerag.llm.structured import Decision, numbered_reply, numbered_values, partly_numbered
from tanglerag.redaction import without_credentials
from tanglerag.trace import Message


class OrcaExample(BaseModel):
    id: str
    question: str
    gold_snippet_id: str
    contexts: list[str]
    gold_context: int | None = Field(None, description="index of the gold scenario in contexts; None if it had none")
    source_url: str = ""


class OrcaManifest(BaseModel):
    source: str
    source_sha256: str
    seed: int
    model: str
    target_contexts: int
    examples: int
    mean_contexts: float
    llm_calls: int
    short_sets: int = Field(description="examples with fewer contexts than the target")
    embedding_model: str | None = Field(None, description="prefilter embedder; None: every candidate judged")
    judge_above: float | None = Field(None, description="cosine to the gold from which a candidate is judged")
    candidates_seen: int = 0
    candidates_judged: int = 0
    candidates_rejected: int = 0


JUDGE_SYSTEM = (
    "You check whether statements about one person can be true at the same time. You get what is known about "
    "the person and numbered candidate statements. For every candidate write one line with its number and "
    "'ok' if it can be true together with what is known, or 'conflict' if it cannot. Most unrelated "
    "statements are ok: mark conflict only for a real contradiction."
)


JUDGE_JSON_SYSTEM = JUDGE_SYSTEM.split("For every candidate")[0] + (
    "Reply with JSON with one key per candidate number and 'ok' if it can be true together with what is known, or "
    "'conflict' if it cannot, for example {\"candidate_1\": \"ok\", \"candidate_2\": \"conflict\"}. Most "
    "unrelated statements are ok: mark conflict only for a real contradiction."
)


def judge_messages(known: str, candidates: list[str], *, as_json: bool = False) -> list[Message]:
    listed = "\n".join(f"{i}. {c}" for i, c in enumerate(candidates, 1))
    ask = "Verdicts as JSON:" if as_json else "Verdicts, one line each (number: ok or conflict):"
    user = f"Known about the person: {known}\n\nCandidates:\n{listed}\n\n{ask}"
    return [Message(role="system", content=JUDGE_JSON_SYSTEM if as_json else JUDGE_SYSTEM),
            Message(role="user", content=user)]


def judge_decision(known: str, candidates: list[str]) -> Decision[BaseModel]:
    """One verdict per candidate: a required key each as JSON, or lines such as ``2: conflict``."""
    numbers = tuple(range(1, len(candidates) + 1))
    reply = numbered_reply("Judgment", "candidate", numbers, Literal["ok", "conflict"])

    def read(text: str) -> BaseModel:
        found = {int(num): "ok" if word.lower() in ("ok", "compatible") else "conflict"
                 for num, word in _VERDICT.findall(text) if 1 <= int(num) <= len(candidates)}
        return partly_numbered(reply, "candidate", found)

    # JSON may come spread over lines with indentation: a key costs up to ~14 tokens, not 8
    return Decision(reply=reply, json_messages=judge_messages(known, candidates, as_json=True),
                    json_tokens=14 * len(candidates) + 8, text_messages=judge_messages(known, candidates),
                    text_tokens=8 * len(candidates) + 8, parse_text=read)


_VERDICT = re.compile(r"(\d+)\s*[:.)-]?\s*\**\s*(ok|conflict|contradict\w*|compatible)", re.IGNORECASE)


class OrcaBuilder:
    def __init__(self, llm: LLM, *, n_contexts: int = 10, batch: int = 12, max_calls: int = 3, seed: int = 0,
                 embedder: TextEmbedder | None = None, judge_above: float = 0.3) -> None:
        self.llm = llm
        self.embedder = embedder
        self.judge_above = judge_above
        self._vectors: dict[str, np.ndarray] = {}
        self.counts = {"seen": 0, "judged": 0, "rejected": 0}
        self.n_contexts = n_contexts
        self.batch = batch
        self.max_calls = max_calls
        self.seed = seed
        self.calls = 0
        self._drawn: dict[tuple[str, str], list[str]] = {}

    def expand(self, record: dict[str, Any], pool: list[tuple[str, str]], rng: random.Random) -> OrcaExample:
        gold = record["scenario"].strip()
        url = record.get("source_url", "")
        key = (gold, url)
        if not gold or key not in self._drawn:
            self._drawn[key] = self._draw(gold, url, pool, rng)
        contexts = ([gold] if gold else []) + self._drawn[key]
        order = list(range(len(contexts)))
        rng.shuffle(order)  # the gold scenario must not sit at a fixed position
        shuffled = [contexts[i] for i in order]
        return OrcaExample(id=record["utterance_id"], question=record["question"],
                           gold_snippet_id=str(record["gold_snippet_id"]), contexts=shuffled,
                           gold_context=order.index(0) if gold else None, source_url=url)

    def _draw(self, gold: str, url: str, pool: list[tuple[str, str]], rng: random.Random) -> list[str]:
        """Sample scenarios from other pages that the judge finds compatible with ``gold``."""
        kept: list[str] = []
        target = self.n_contexts - (1 if gold else 0)
        candidates = [text for text, page in pool if page != url and text != gold]
        rng.shuffle(candidates)
        cursor = 0
        for _ in range(self.max_calls):
            need = target - len(kept)
            if need <= 0 or cursor >= len(candidates):
                break
            batch = candidates[cursor:cursor + max(self.batch, need)]
            cursor += len(batch)
            if not gold:  # nothing known to contradict: keep the random draw
                return batch[:need]
            self.counts["seen"] += len(batch)
            to_judge = [c for c in batch if self._near(gold, c)]
            rejected: set[str] = set()
            if to_judge:
                numbers = list(range(1, len(to_judge) + 1))
                verdicts = numbered_values(self.llm.decide(judge_decision(gold, to_judge)), "candidate", numbers)
                self.calls += 1
                self.counts["judged"] += len(to_judge)
                if len(verdicts) < len(to_judge):
                    continue  # unusable judgment: trust none of this batch
                rejected = {to_judge[i - 1] for i, verdict in verdicts.items() if verdict == "conflict"}
                self.counts["rejected"] += len(rejected)
            kept += [c for c in batch if c not in rejected][:need]
        return kept

    def _near(self, gold: str, candidate: str) -> bool:
        """Worth judging: without an embedder every candidate is."""
        if self.embedder is None:
            return True
        return float(self._vectors[gold] @ self._vectors[candidate]) >= self.judge_above

    def build(self, source: Path, limit: int | None = None,
              on_step: Callable[[], None] | None = None) -> tuple[list[OrcaExample], OrcaManifest]:
        records = []
        for line_no, record in iter_json_records(source):
            for field in ("utterance_id", "question", "scenario", "gold_snippet_id"):
                require(record, field, source, line_no)
            records.append(record)
        if not records:
            raise DatasetError(f"{source} holds no utterances")
        self._drawn = {}
        self.counts = {"seen": 0, "judged": 0, "rejected": 0}
        pool = sorted({(r["scenario"].strip(), r.get("source_url", "")) for r in records if r["scenario"].strip()})
        if self.embedder is not None:
            texts = sorted({text for text, _ in pool})
            vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            self._vectors = dict(zip(texts, vectors, strict=True))
        examples = []
        for i, record in enumerate(records[:limit] if limit else records):
            rng = random.Random(f"{self.seed}:{record['utterance_id']}:{i}")
            examples.append(self.expand(record, pool, rng))
            if on_step:
                on_step()
        sizes = [len(e.contexts) for e in examples]
        manifest = OrcaManifest(
            source=str(source), source_sha256=hashlib.sha256(source.read_bytes()).hexdigest(), seed=self.seed,
            model=without_credentials(self.llm.backend.model_id), target_contexts=self.n_contexts,
            examples=len(examples),
            mean_contexts=sum(sizes) / len(sizes), llm_calls=self.calls,
            short_sets=sum(s < self.n_contexts for s in sizes),
            embedding_model=self.embedder.model_name if self.embedder else None,
            judge_above=self.judge_above if self.embedder else None, candidates_seen=self.counts["seen"],
            candidates_judged=self.counts["judged"], candidates_rejected=self.counts["rejected"])
        return examples, manifest


def write_orca(folder: Path, examples: list[OrcaExample], manifest: OrcaManifest) -> None:
    atomic_write_text(folder / "orca_sharc.jsonl", "".join(e.model_dump_json() + "\n" for e in examples))
    atomic_write_text(folder / "manifest.json", manifest.model_dump_json(indent=2))


def _orca_file(path: Path) -> Path:
    """A built dataset is a folder holding orca_sharc.jsonl; the file itself works too."""
    return path / "orca_sharc.jsonl" if path.is_dir() else path


def looks_like(path: Path) -> bool:
    """An ORCA-ShARC file (or folder): records with a question, a gold snippet and a context set."""
    path = _orca_file(path)
    if not path.is_file():
        return False
    for _, record in iter_json_records(path):
        return {"question", "gold_snippet_id", "contexts"} <= record.keys()
    return False


def load_orca(path: Path) -> list[OrcaExample]:
    """Read ``orca_sharc.jsonl`` (or a folder holding it)."""
    path = _orca_file(path)
    examples = []
    for line_no, record in iter_json_records(path):
        try:
            examples.append(OrcaExample.model_validate(record))
        except ValueError as exc:
            raise DatasetError(f"{path}:{line_no}: {exc}") from exc
    return examples


def load_snippets(path: Path) -> tuple[list[str], list[str]]:
    """OR-ShARC ``id2snippet.json`` -> (ids, texts) in a stable order."""
    try:
        data = json_loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"cannot read snippet corpus {path}: {exc}") from exc
    if not isinstance(data, dict) or not data:
        raise DatasetError(f"{path} must map snippet ids to texts")
    ids = sorted(data, key=lambda k: (len(k), k))
    return ids, [str(data[i]) for i in ids]
