"""Method names as the CLI and eval runner know them."""

from __future__ import annotations

from tanglerag.llm.client import LLM
from tanglerag.methods.base import Method, MethodFactory
from tanglerag.methods.concat import ConcatMethod

METHODS: dict[str, MethodFactory] = {
    ConcatMethod.name: ConcatMethod,
}


def make_method(name: str, llm: LLM) -> Method:
    try:
        factory = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; available: {', '.join(sorted(METHODS))}") from None
    return factory(llm)
