"""PCAS (paper 002) as a family: no answer method of its own (it retrieves for whichever is asked), the
``personal`` retriever, the ORCA-ShARC retrieval evaluation, ``tanglerag pcas`` and the inspector view of the
statement it chose. Its parameters are the core ``personal`` section: user contexts belong to the whole package."""

from __future__ import annotations

from pathlib import Path

from tanglerag.family import Family
from tanglerag.methods.pcas.retriever import personal_retriever

FAMILY = Family(
    name="pcas",
    stages=frozenset({"retrieve"}),
    view=Path(__file__).with_name("view.js"),
    retrievers={"personal": personal_retriever},
    commands=("tanglerag.cli.families.pcas:pcas_app",),
    tasks={"retrieval": "tanglerag.eval.families.pcas:evaluate_retrieval"},
)
