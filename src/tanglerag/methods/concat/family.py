"""The concatenation baseline as a family: one method, no settings of its own."""

from __future__ import annotations

from tanglerag.family import Family
from tanglerag.methods.concat.method import ConcatMethod

FAMILY = Family(name="concat", methods=(ConcatMethod,), stages=frozenset({"generate"}))
