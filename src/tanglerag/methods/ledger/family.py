"""``ledger`` (ours) as a family: the method, the ``ledger`` section, its stages, structured defaults, the
inspector view of its conflict report and the rule table the documentation shows."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.ledger.config import LedgerConfig
from tanglerag.methods.ledger.method import LedgerMethod
from tanglerag.methods.ledger.vetted import VettedMethod

FAMILY = Family(
    name="ledger",
    methods=(LedgerMethod, VettedMethod),
    settings=LedgerConfig,
    stages=frozenset({"claims", "prior", "answer"}),
    options=("policies", "show_disputed", "same_thing", "duplicate_similarity", "about_similarity"),
    # the claim (quote, answer, about) under the JSON schema: three fields a text reply often leaves out or merges
    structured={"ledger": "auto"},
    view=Path(__file__).with_name("view.js"),
    conflict_reporter=LedgerMethod,  # conflicts.report: its claims, witnesses and policies on any method's passages
    tables={"rules": "tanglerag.methods.ledger.rules:markdown_table"},  # docs/conflicts.md's rule table
)
