"""One decision asked of the model: as JSON under an output schema, or as text read by a parser.

A small model often writes a decision in a shape no parser foresaw, and what does not parse is dropped. Decoding
under a JSON schema (a grammar in llama.cpp, ``response_format`` on a server) makes every complete reply parse. A
step states its decision once, both ways, and ``LLM.decide`` picks by ``llm.structured``: ``on`` sends the schema,
``off`` the text prompt, ``auto`` the schema until the backend refuses one, then the text prompt from then on,
``repair`` the text prompt and the schema only for a reply its parser cannot read in full (the schema's labels
can be worse than the text prompt's, so a step keeps the text where it reads and pays for JSON where it does not).
Either way the step gets the reply model, or None when the reply cannot be read (the step counts those), and the
trace marks each call constrained or not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic_core import from_json

from tanglerag.llm.base import GenerationParams
from tanglerag.trace import Message

T = TypeVar("T", bound=BaseModel)
MAX_DROPPED = 4  # rounds of dropping incomplete list items before a cut-off reply counts as unreadable


@dataclass(frozen=True, kw_only=True)
class Decision(Generic[T]):
    """``reply`` is the schema; ``json_messages`` ask for it as JSON, ``text_messages`` as text that
    ``parse_text`` reads (None: unreadable). Each way has its own generation budget. Keyword-only: two message
    lists and two budgets side by side are easy to swap by position."""

    reply: type[T]
    json_messages: list[Message]
    json_tokens: int
    text_messages: list[Message]
    text_tokens: int
    parse_text: Callable[[str], T | None]
    shown: Callable[[Any], str] | None = None
    """How a JSON reply reads as the answer while it is being written (given what was decoded so far, as a dict):
    for a decision that is a method's answer, so a watcher sees it grow; None for one nobody reads as it comes."""

    def json_view(self, raw: str) -> str:
        """``shown`` of a JSON reply written up to ``raw`` ('' for no ``shown`` or nothing decodable yet)."""
        if self.shown is None:
            return ""
        try:
            decoded = from_json(raw, allow_partial="trailing-strings")
        except ValueError:
            return ""
        return self.shown(decoded) if isinstance(decoded, dict) else ""

    def json_params(self, base: GenerationParams) -> GenerationParams:
        """No stop strings: the schema ends the reply, and a stop string inside a JSON value would cut it."""
        return base.model_copy(update={"json_schema": schema_of(self.reply), "max_tokens": self.json_tokens,
                                       "stop": ()})

    def text_params(self, base: GenerationParams) -> GenerationParams:
        return base.model_copy(update={"max_tokens": self.text_tokens})

    @staticmethod
    def is_whole(reply: T | None) -> bool:
        """Whether a reply gives every required value; ``notes`` is JSON's scratch space, never read from text."""
        if reply is None:
            return False
        needed = {name for name, field in type(reply).model_fields.items() if field.is_required()} - {"notes"}
        return needed <= reply.model_fields_set

    def read_json(self, text: str) -> T | None:
        """The schema's reply; one cut off by the token budget is read as far as it was decoded (a text parser
        reads a cut-off line too). None when what was decoded does not make a reply."""
        try:
            return self.reply.model_validate_json(text)
        except ValidationError:
            pass
        try:
            decoded = from_json(text, allow_partial="trailing-strings")
        except ValueError:
            return None
        return _validated_prefix(self.reply, decoded)


def _validated_prefix(model: type[T], decoded: Any) -> T | None:
    """``decoded`` as ``model`` once the list items it left incomplete (a required key missing) are dropped."""
    for _ in range(MAX_DROPPED):
        try:
            return model.model_validate(decoded)
        except ValidationError as exc:
            if not _drop_list_items(decoded, [error["loc"] for error in exc.errors()]):
                return None
    return None


def _drop_list_items(decoded: Any, locations: list[tuple[int | str, ...]]) -> bool:
    """Remove the innermost list item named in each error location; False when no location names one."""
    items = set()
    for loc in locations:
        last = max((i for i, key in enumerate(loc) if isinstance(key, int)), default=None)
        if last is not None:
            items.add(loc[:last + 1])
    for loc in sorted(items, key=lambda loc: loc[-1], reverse=True):  # later items first: indexes stay right
        container = decoded
        try:
            for key in loc[:-1]:
                container = container[key]
            del container[loc[-1]]
        except (LookupError, TypeError):
            pass  # inside an item already dropped
    return bool(items)


@cache
def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


@cache
def numbered_reply(name: str, prefix: str, numbers: tuple[int, ...], value: Any,
                   notes_chars: int = 0) -> type[BaseModel]:
    """A reply with one required key per number (``context_3``): constrained to it, the model answers for every
    item it was shown, none left out. ``notes_chars`` > 0 puts a ``notes`` string of at most that length first:
    decoded in order, the values then follow what the model noted."""
    fields: dict[str, Any] = {"notes": (str, Field(max_length=notes_chars))} if notes_chars else {}
    fields |= {f"{prefix}_{n}": (value, ...) for n in numbers}
    return create_model(name, **fields)


def numbered_values(reply: BaseModel | None, prefix: str, numbers: list[int]) -> dict[int, Any]:
    """The values a numbered reply gives, by number (one read from text may leave some out)."""
    if reply is None:
        return {}
    given = {n: getattr(reply, f"{prefix}_{n}", None) for n in numbers}
    return {n: value for n, value in given.items() if value is not None}


def partly_numbered(reply: type[BaseModel], prefix: str, found: dict[int, Any]) -> BaseModel:
    """A numbered reply read from text as far as it goes: the numbers not found stay unset."""
    values: dict[str, Any] = {f"{prefix}_{n}": value for n, value in found.items()}
    return reply.model_construct(None, **values)
