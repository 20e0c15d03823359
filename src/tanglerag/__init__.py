"""tanglerag: answer questions from tangled retrieved contexts.

``import tanglerag`` is cheap: the command line and light modules import it. The Python API
(``tanglerag.Tanglerag``, ``tanglerag.ask``, ... from ``tanglerag.api``) and the models it takes and returns
are loaded on first use (PEP 562), and with them the index, LLM and method code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tanglerag.types import Answer, AnswerPart, Passage, Question, RetrievedPassage, StageUsage, Usage

if TYPE_CHECKING:  # what type checkers and editors see; at run time ``__getattr__`` loads these
    from tanglerag.api import (
        Tanglerag,
        aask,
        add_documents,
        ask,
        ask_many,
        build_index,
        evaluate,
        remove_documents,
        replace_documents,
    )
    from tanglerag.eval.records import EvalReport
    from tanglerag.index.documents import DocumentChanges
    from tanglerag.index.manifest import IndexManifest
    from tanglerag.settings import Settings

__all__ = ["Answer", "AnswerPart", "Passage", "Question", "RetrievedPassage", "StageUsage", "Usage",
           "Tanglerag", "aask", "add_documents", "ask", "ask_many", "build_index", "evaluate", "remove_documents",
           "replace_documents", "DocumentChanges", "EvalReport", "IndexManifest", "Settings"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Load the API on first use of one of its names (the types above are here already); it stays loaded."""
    if name not in __all__:
        raise AttributeError(f"module 'tanglerag' has no attribute {name!r}")
    from tanglerag import api

    value = getattr(api, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
