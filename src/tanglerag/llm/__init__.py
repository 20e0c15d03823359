"""One LLM interface (chat messages in, text out) with embedded and HTTP backends."""

from tanglerag.errors import LLMError
from tanglerag.llm.base import Completion, GenerationParams, LLMBackend
from tanglerag.llm.client import LLM
from tanglerag.trace import Message

__all__ = ["LLM", "Completion", "GenerationParams", "LLMBackend", "LLMError", "Message"]
