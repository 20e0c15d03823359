"""Method names as the CLI and eval runner know them."""

from __future__ import annotations

from tanglerag.config import Settings
from tanglerag.llm.client import LLM
from tanglerag.methods.base import Method, MethodFactory
from tanglerag.methods.concat import ConcatMethod
from tanglerag.methods.corg_baselines import CORG_METHODS
from tanglerag.methods.post_fusion import (
    ConcatPostFusionMethod,
    PostFusionConcatMethod,
    PostFusionMethod,
    PruningMethod,
    SummaryMethod,
)

METHODS: dict[str, MethodFactory] = {
    cls.name: cls.from_settings
    for cls in [ConcatMethod, PostFusionMethod, PruningMethod, SummaryMethod, ConcatPostFusionMethod,
                PostFusionConcatMethod, *CORG_METHODS]
}


def make_method(name: str, llm: LLM, settings: Settings | None = None) -> Method:
    try:
        factory = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; available: {', '.join(sorted(METHODS))}") from None
    return factory(llm, settings or Settings())
