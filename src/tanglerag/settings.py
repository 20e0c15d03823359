"""The root settings: the core sections, plus one section for each registered method family that has settings.

Why assembled: the families are known only once they are registered (entry points, or ``register_family``), so
the full model is built from them on first use and rebuilt when a family is added. ``Settings(...)`` and
``Settings.model_validate(...)`` give an instance of that assembled model, a subclass of ``Settings``: the core
sections are typed attributes, and a family reads its own section with ``settings.section(CorgConfig)``.
Validation errors keep their full location (``corg.answer_tokens``), and the JSON schema lists every section.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field, create_model, model_validator

from tanglerag.config import (
    ConflictsConfig,
    ConversationConfig,
    EmbeddingConfig,
    EvalConfig,
    IndexConfig,
    LLMConfig,
    MethodsConfig,
    OtelConfig,
    PersonalConfig,
    RetrievalConfig,
    Section,
    ServiceConfig,
    load_config,
)
from tanglerag.errors import ConfigError
from tanglerag.family import FAMILIES, sections, structured_defaults
from tanglerag.store_config import StoreConfig
from tanglerag.trust import TrustConfig

S = TypeVar("S", bound=Section)
_ASSEMBLED = "AssembledSettings"


class Settings(Section):
    """Root config. ``cache_dir`` holds the LLM cache and assembled model files."""

    cache_dir: Path = Field(default_factory=lambda: Path(os.environ.get("TANGLERAG_CACHE", "~/.cache/tanglerag")).expanduser())
    llm: LLMConfig = Field(default_factory=LLMConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    methods: MethodsConfig = Field(default_factory=MethodsConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    personal: PersonalConfig = Field(default_factory=PersonalConfig)
    service: ServiceConfig = Field(default_factory=ServiceConfig)
    conflicts: ConflictsConfig = Field(default_factory=ConflictsConfig)
    conversation: ConversationConfig = Field(default_factory=ConversationConfig)
    otel: OtelConfig = Field(default_factory=OtelConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    trust: TrustConfig = Field(default_factory=TrustConfig)

    def __new__(cls, *args: Any, **kwargs: Any) -> Settings:
        return super().__new__(assembled() if cls is Settings else cls)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Settings:
        target = assembled() if cls is Settings else cls
        return super(Settings, target).model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Settings:
        target = assembled() if cls is Settings else cls
        return super(Settings, target).model_validate_json(json_data, **kwargs)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Every section's schema, the families' included."""
        target = assembled() if cls is Settings else cls
        return super(Settings, target).model_json_schema(*args, **kwargs)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickled as its values, rebuilt under the families registered where it is unpickled: the assembled class
        is rebuilt whenever a family is registered, so it cannot be pickled by name (Ray sends settings to its
        actors)."""
        return _rebuilt, (self.model_dump(),)

    @classmethod
    def load(cls, path: Path | None = None, overrides: list[str] | None = None,
             values: dict[str, Any] | None = None) -> Settings:
        """YAML (optional), then ``a.b=value`` overrides, then typed ``values`` (see ``config.load_config``)."""
        return load_config(assembled(), path, overrides, values)

    def evaluating(self) -> Settings:
        """These settings as an evaluation answers under them, as the papers' scores assume: short answers at
        ``eval.answer_tokens`` unless ``methods.answer_tokens`` was set, and the whole top-k (no relevance floor)
        unless ``retrieval.min_score`` was set; a person's question gets the longer answers and the floor."""
        update: dict[str, Any] = {}
        if "answer_tokens" not in self.methods.model_fields_set:
            update["methods"] = self.methods.model_copy(update={"answer_tokens": self.eval.answer_tokens})
        if "min_score" not in self.retrieval.model_fields_set:
            update["retrieval"] = self.retrieval.model_copy(update={"min_score": None})
        return self.model_copy(update=update) if update else self

    def section(self, kind: type[S]) -> S:
        """A family's section, typed: ``settings.section(CorgConfig).answer_tokens``."""
        for name, cls in sections().items():
            if cls is kind:
                value = getattr(self, name)
                assert isinstance(value, kind)
                return value
        raise ConfigError(f"no registered family has the settings section {kind.__name__}")

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return _with_structured_defaults(upgrade(data)) if isinstance(data, dict) else data


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Settings as written by an earlier release, in today's shape (run folders keep theirs): the D-F1 reader moved
    from ``corg.reader`` to ``eval.reader``."""
    data = dict(data)
    corg = data.get("corg")
    if isinstance(corg, dict) and "reader" in corg:
        data["corg"] = {k: v for k, v in corg.items() if k != "reader"}
        evaluation = data.get("eval")
        if isinstance(evaluation, dict) or evaluation is None:
            data["eval"] = {"reader": corg["reader"], **(evaluation or {})}
    return data


def _with_structured_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """``llm.structured_stages``' default is what the registered families measured better (``Family.structured``)."""
    llm = data.get("llm")
    if llm is None or isinstance(llm, dict) and "structured_stages" not in llm:
        data["llm"] = {**(llm or {}), "structured_stages": structured_defaults()}
    elif isinstance(llm, LLMConfig) and "structured_stages" not in llm.model_fields_set:
        data["llm"] = llm.model_copy(update={"structured_stages": structured_defaults()})
    return data


def assembled() -> type[Settings]:
    """The settings model with every registered family's section (rebuilt when a family is registered)."""
    FAMILIES.load()
    return _assemble(FAMILIES.version, tuple(sections().items()))


def _rebuilt(values: dict[str, Any]) -> Settings:
    return Settings.model_validate(values)


@lru_cache(maxsize=8)
def _assemble(version: int, family_sections: tuple[tuple[str, type[Section]], ...]) -> type[Settings]:
    taken = sorted(name for name, _ in family_sections if hasattr(Settings, name) or name in Settings.model_fields)
    if taken:  # a family section named like a core one (eval) or a method (load) would silently replace it
        raise ConfigError(f"a method family's settings section is named {taken[0]!r}, which the core settings use")
    fields: dict[str, Any] = {name: (cls, Field(default_factory=cls)) for name, cls in family_sections}
    model: type[Settings] = create_model(_ASSEMBLED, __base__=Settings, __module__=__name__, **fields)
    return model
