"""The project's error classes: one base for everything a user can cause and fix.

The CLI (and later the service) turns a ``TangleragError`` into one clear line and exit code 2;
any other exception is a bug and keeps its traceback. Raise the most specific class that says
what the user has to change.
"""

from __future__ import annotations


class TangleragError(Exception):
    """A problem the user can fix: the message names what is wrong and, where known, what to do."""


class ConfigError(TangleragError):
    """A config file, override or option value is malformed or out of range."""


class InputError(TangleragError):
    """Bad input: a malformed file, a missing field, an unknown name, an empty question."""


class DatasetError(InputError):
    """A dataset file or name cannot be read as a dataset."""


class IngestError(InputError):
    """A corpus cannot be read into passages."""


class ContextStoreError(InputError):
    """A user's personal context store is asked for something it cannot do."""


class DiskFullError(TangleragError):
    """A write ran out of space (or quota); what was stored before the write is kept."""


class IndexStoreError(TangleragError):
    """An index folder is missing, incomplete, or incompatible with the configuration."""


class ModelError(TangleragError):
    """A model file or package is missing or cannot be loaded."""


class EmbeddingError(ModelError):
    """The embedding model could not be loaded."""


class ReaderError(ModelError):
    """The QA reader model (D-F1) could not be loaded."""


class LLMError(ModelError):
    """The LLM could not be loaded, or its server refused or garbled a request."""


class StructuredOutputUnsupported(LLMError):
    """The backend or its server does not take an output schema (``llm.structured=on`` needs one that does)."""


class ServerUnreachableError(LLMError):
    """The OpenAI-compatible server did not answer after all retries."""


class QuestionCancelled(TangleragError):
    """The question was stopped before its next LLM call: its client left, or it ran past its time."""
