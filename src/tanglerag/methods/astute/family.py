"""Astute RAG (a peer) as a family: memory passages and consolidation, the ``astute`` section, its stages and
inspector view."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.astute.config import AstuteConfig
from tanglerag.methods.astute.method import AstuteRagMethod

FAMILY = Family(name="astute", methods=(AstuteRagMethod,), settings=AstuteConfig,
                stages=frozenset({"recall", "consolidate", "generate"}), view=Path(__file__).with_name("view.js"))
