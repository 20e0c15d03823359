"""``auto`` as a family: the probe and the routing method, the ``auto`` section, ``tanglerag diagnose`` (the
evidence for retuning the routes) and the inspector view. It may hand a question to any method, so a run with it
depends on every family's settings."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.auto.config import AutoConfig
from tanglerag.methods.auto.method import AutoMethod

FAMILY = Family(name="auto", methods=(AutoMethod,), settings=AutoConfig, stages=frozenset({"probe"}),
                view=Path(__file__).with_name("view.js"), commands=("tanglerag.cli.families.auto:app",),
                delegates_to_any=True)
