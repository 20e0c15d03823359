"""MADAM-RAG (a peer) as a family: the debate, the ``madam`` section, its stages and inspector view."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.madam.config import MadamConfig
from tanglerag.methods.madam.method import MadamRagMethod

FAMILY = Family(name="madam", methods=(MadamRagMethod,), settings=MadamConfig,
                stages=frozenset({"debate", "aggregate"}), view=Path(__file__).with_name("view.js"))
