"""The root settings: the core sections and one section per method family that has knobs.

A method family keeps its section's class beside its code; this module only assembles them, so it sits
at the methods layer. A new family with settings adds one field here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field

from tanglerag.config import (
    EmbeddingConfig,
    EvalConfig,
    IndexConfig,
    LLMConfig,
    MethodsConfig,
    RetrievalConfig,
    Section,
    ServiceConfig,
    load_config,
)
from tanglerag.methods.astute.config import AstuteConfig
from tanglerag.methods.auto.config import AutoConfig
from tanglerag.methods.cdit.config import CditConfig
from tanglerag.methods.corg.config import CorgConfig
from tanglerag.methods.diva.config import DivaConfig
from tanglerag.methods.madam.config import MadamConfig
from tanglerag.methods.pcas.config import PersonalConfig


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
    corg: CorgConfig = Field(default_factory=CorgConfig)
    diva: DivaConfig = Field(default_factory=DivaConfig)
    cdit: CditConfig = Field(default_factory=CditConfig)
    madam: MadamConfig = Field(default_factory=MadamConfig)
    astute: AstuteConfig = Field(default_factory=AstuteConfig)
    auto: AutoConfig = Field(default_factory=AutoConfig)
    service: ServiceConfig = Field(default_factory=ServiceConfig)

    @classmethod
    def load(cls, path: Path | None = None, overrides: list[str] | None = None,
             values: dict[str, Any] | None = None) -> Settings:
        """YAML (optional), then ``a.b=value`` overrides, then typed ``values`` (see ``config.load_config``)."""
        return load_config(cls, path, overrides, values)
