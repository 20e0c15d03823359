"""Method names as the CLI, the eval runner and the service know them."""

from __future__ import annotations

from tanglerag.errors import InputError
from tanglerag.methods.base import Method, Resources
from tanglerag.methods.cdit import CditMethod
from tanglerag.methods.concat import ConcatMethod
from tanglerag.methods.corg import CorgMethod
from tanglerag.methods.corg_baselines import (
    BaseMethod,
    KMeansMethod,
    RandomMethod,
    RetrieveMethod,
    SeparateMethod,
    SummarizeMethod,
)
from tanglerag.methods.diva import DIVA_METHODS
from tanglerag.methods.post_fusion import (
    ConcatPostFusionMethod,
    PostFusionConcatMethod,
    PostFusionMethod,
    PruningMethod,
    SummaryMethod,
)

METHODS: dict[str, type[Method]] = {
    cls.name: cls
    for cls in [ConcatMethod, PostFusionMethod, PruningMethod, SummaryMethod, ConcatPostFusionMethod,
                PostFusionConcatMethod, CorgMethod, BaseMethod, RetrieveMethod, SummarizeMethod, RandomMethod,
                KMeansMethod, SeparateMethod, *DIVA_METHODS, CditMethod]
}


def method_class(name: str) -> type[Method]:
    try:
        return METHODS[name]
    except KeyError:
        raise InputError(f"unknown method {name!r}; available: {', '.join(sorted(METHODS))}") from None


def make_method(name: str, resources: Resources) -> Method:
    return method_class(name)(resources)
