"""Typed configuration, loadable from YAML and overridable with ``section.key=value`` pairs.

Every component takes its own section, so a component's config can be serialized
next to its outputs (the index manifest, eval results) and reloaded exactly.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tanglerag.errors import ConfigError


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


PositiveInt = Annotated[int, Field(strict=True, ge=1)]
"""A count or size: ``top_k=0`` or ``top_k=true`` is refused, not silently read as something else."""
NonNegativeInt = Annotated[int, Field(strict=True, ge=0)]
StrictInt = Annotated[int, Field(strict=True)]


DEFAULT_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m"


class LLMConfig(_Section):
    backend: Literal["llamacpp", "openai"] = "llamacpp"
    model: str = Field(
        DEFAULT_GGUF,
        description="llamacpp: a built-in model name, a .gguf path or 'hf:REPO/FILE.gguf'; openai: the served model name",
    )
    base_url: str = "http://localhost:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    n_ctx: PositiveInt = 4096
    n_threads: PositiveInt = Field(default_factory=lambda: max(1, os.cpu_count() or 1))
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: PositiveInt = 128
    seed: StrictInt = 0
    timeout_s: float = Field(120.0, gt=0)
    max_retries: NonNegativeInt = 4
    backoff_s: float = Field(1.0, ge=0)
    concurrency: PositiveInt = 4
    cache: bool = True


class EmbeddingConfig(_Section):
    model: str = Field("all-MiniLM-L6-v2", description="sentence-transformers name or local path")
    batch_size: PositiveInt = 32
    device: str = "cpu"
    normalize: bool = True


class IndexConfig(_Section):
    index_type: Literal["flat", "hnsw", "ivf"] = "flat"
    bm25: bool = False
    hnsw_m: PositiveInt = 32
    hnsw_ef_construction: PositiveInt = 80
    hnsw_ef_search: PositiveInt = 64
    ivf_nlist: NonNegativeInt = 0  # 0: pick ~4*sqrt(n) at build time
    ivf_nprobe: PositiveInt = 8
    chunk_words: PositiveInt = 200
    chunk_overlap: NonNegativeInt = 40


class RetrievalConfig(_Section):
    top_k: PositiveInt = 5
    mode: Literal["dense", "bm25", "hybrid"] = "dense"
    rrf_k: PositiveInt = 60


class MethodsConfig(_Section):
    """Knobs shared by the answer-integration methods (paper 004 and the concat baseline)."""

    passage_words: PositiveInt = Field(100, description="passages are cut to this many words in prompts (the paper's 100)")
    answer_tokens: PositiveInt = 32
    cot_tokens: PositiveInt = Field(200, description="budget for the pruning / summary rationale and answer")
    samples: PositiveInt = Field(1, description="self-consistency: answers sampled per call (p)")
    sample_temperature: float = Field(0.7, ge=0.0, le=2.0)
    concat_prompt: Literal["cited", "post_fusion"] = Field(
        "cited", description="concat's prompt: cited ([n] citations, for ask) or post_fusion (post-fusion's answer "
                             "prompt over all passages: paper 004 compares the two strategies with one prompt)")


class CorgConfig(_Section):
    """COrg (paper 000) and its baselines."""

    graph: Literal["pairwise", "extract"] = Field(
        "pairwise", description="pairwise: LLM labels relations (Algorithm 1); extract: one call per context")
    plural: Literal["rule", "llm"] = Field("rule", description="how a group's question is put in plural form")
    answer_each: bool = Field(False, description="answer every kept context in its own call (for models that give "
                                                 "one answer per call); groups still label the parts")
    answer_tokens: PositiveInt = Field(96, description="budget for a multi-answer reply (one line per answer)")
    retrieve_top: PositiveInt = Field(5, description="contexts the 'retrieve' baseline keeps (the paper's 5)")
    summary_tokens: PositiveInt = 160
    match_threshold: float = Field(0.6, ge=0.0, le=1.0,
                                   description="extract mode: token F1 at which descriptors/answers count as equal")
    reader: str = Field("llm", description="D-F1 reader: 'llm' (the configured LLM) or a HF extractive QA model, "
                                           "e.g. deepset/roberta-base-squad2")
    seed: StrictInt = 0


class DivaConfig(_Section):
    """Diva (paper 001) and its baselines: long answers to ambiguous questions."""

    top_k: PositiveInt = Field(5, description="passages kept after pruning (and retrieved per query)")
    max_interpretations: PositiveInt = Field(5, description="pseudo-interpretations used at most")
    verification: Literal["each", "batched"] = Field(
        "batched", description="each: one yes/no call per interpretation; batched: one call for all")
    demos: NonNegativeInt = Field(0, description="few-shot demonstrations chosen by nearest neighbour from demo_pool")
    demo_pool: Path | None = Field(None, description="ASQA-format file the demonstrations come from (dev split)")
    answer_tokens: PositiveInt = Field(300, description="budget of a long answer with its interpretations")
    step_tokens: PositiveInt = Field(120, description="budget of the ambiguity-type and interpretation calls")
    toc_depth: PositiveInt = Field(3, description="ToC: deepest level of clarification")
    toc_nodes: PositiveInt = Field(10, description="ToC: most clarification nodes expanded")


class EvalConfig(_Section):
    """How the benchmark runner builds each question's passages."""

    passage_scope: Literal["own", "pooled"] = Field(
        "own", description="own: rank each question's own passages; pooled: retrieve from all questions' passages")
    gold: Literal["natural", "ensure", "exclude"] = Field(
        "natural", description="ensure: put a gold passage in the top-k; exclude: drop gold passages")
    gold_position: Literal["retrieval", "top", "bottom"] = "retrieval"
    closed_book_filter: bool = Field(False, description="drop questions the LLM answers right with no passages")
    bootstrap_samples: PositiveInt = 1000
    seed: StrictInt = 0


class PersonalConfig(_Section):
    """Per-user context store and PCAS parameters (paper 002)."""

    store_dir: Path = Field(default_factory=lambda: Path(os.environ.get("TANGLERAG_HOME", "~/.tanglerag"))
                            .expanduser() / "users")
    beam: PositiveInt = Field(10, description="K: documents retrieved by the question before pairing")
    lam: float = Field(0.6, ge=0.0, le=1.0, description="weight of s(d,q) against s(d,c); 0.6 was best for "
                                                    "MiniLM on ORCA-ShARC dev (docs/results/pcas.md)")


class CditConfig(_Section):
    """CDIT (paper 003): judge retrieved passages against the question, discard and trim."""

    cmd: Literal["phi1", "phi1+phi2"] = Field(
        "phi1", description="phi1: subject, predicate, object must match; phi1+phi2: attributives and adverbials too")
    judge: Literal["llm", "spacy"] = Field("llm", description="llm: the configured LLM; spacy: dependency parses, no LLM")
    spacy_threshold: float = Field(0.5, ge=0.0, le=1.0, description="spacy judge: embedding similarity of equal nouns")
    batched: bool = Field(False, description="judge all passages in one call instead of one call each")
    witnesses: PositiveInt = Field(2, description="witnesses before a link is cut (1 reproduces the public code)")
    record: bool = Field(True, description="record witnesses in the index folder's trim log (when it has one)")
    answer_method: str = Field("concat", description="the method that answers from the consistent passages")
    determiner: bool = Field(True, description="reuse the verdicts of a close enough query judged before")
    reuse_threshold: float = Field(0.95, ge=0.0, le=1.0, description="determiner: cosine similarity of a close query")
    judge_tokens: PositiveInt = Field(4, description="budget of one true/false judgment")


class ServiceConfig(_Section):
    """``tanglerag serve``: limits that keep one process-wide LLM usable under load."""

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    max_running: PositiveInt = Field(1, description="questions answered at once (the embedded LLM is one resource)")
    max_waiting: NonNegativeInt = Field(4, description="questions queued beyond those; more get 429 + Retry-After")
    queue_timeout_s: float = Field(30.0, gt=0, description="longest wait for a free slot before 429")
    answer_timeout_s: float = Field(600.0, gt=0, description="longest answer; the client gets 504 beyond it")
    max_body_bytes: PositiveInt = Field(10_000_000, description="request bodies above this get 413")
    max_question_chars: PositiveInt = 2000
    api_keys_file: Path | None = Field(
        None, description="lines 'KEY' (admin) or 'KEY USER' (that user only); adds to TANGLERAG_API_KEYS")


class Settings(_Section):
    """Root config. ``cache_dir`` holds the LLM cache and assembled model files."""

    cache_dir: Path = Field(default_factory=lambda: Path(os.environ.get("TANGLERAG_CACHE", "~/.cache/tanglerag")).expanduser())
    llm: LLMConfig = Field(default_factory=LLMConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    methods: MethodsConfig = Field(default_factory=MethodsConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    personal: PersonalConfig = Field(default_factory=PersonalConfig)
    corg: CorgConfig = Field(default_factory=CorgConfig)
    diva: DivaConfig = Field(default_factory=DivaConfig)
    cdit: CditConfig = Field(default_factory=CditConfig)
    service: ServiceConfig = Field(default_factory=ServiceConfig)

    @classmethod
    def load(cls, path: Path | None = None, overrides: list[str] | None = None) -> Settings:
        """Read YAML (optional) and apply ``a.b=value`` overrides; values are parsed as YAML scalars."""
        data: dict[str, Any] = {}
        if path is not None:
            try:
                loaded = yaml.safe_load(Path(path).read_text())
            except FileNotFoundError as exc:
                raise ConfigError(f"config file not found: {path}") from exc
            except yaml.YAMLError as exc:
                raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
            if loaded is not None and not isinstance(loaded, dict):
                raise ConfigError(f"config file {path} must hold a mapping at the top level")
            data = loaded or {}
        for item in overrides or []:
            _apply_override(data, item)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid config: {exc}") from exc


def _apply_override(data: dict[str, Any], item: str) -> None:
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {item!r} must look like section.key=value")
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {item!r}: {part} is not a section")
        node = child
    try:
        node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        node[parts[-1]] = raw
