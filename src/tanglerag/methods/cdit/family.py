"""CDIT (paper 003) as a family: the method, the ``cdit`` section, its stages, the ``tanglerag cdit`` commands and
inspector view."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.cdit.config import CditConfig
from tanglerag.methods.cdit.method import CditMethod

FAMILY = Family(
    name="cdit",
    methods=(CditMethod,),
    settings=CditConfig,
    stages=frozenset({"judge", "determine", "trim"}),
    view=Path(__file__).with_name("view.js"),
    commands=("tanglerag.cli.families.cdit:cdit_app",),
)
