"""tanglerag: answer questions from tangled retrieved contexts."""

from tanglerag.types import Answer, AnswerPart, Passage, Question, RetrievedPassage, StageUsage, Usage

__all__ = ["Answer", "AnswerPart", "Passage", "Question", "RetrievedPassage", "StageUsage", "Usage"]
__version__ = "0.1.0"
