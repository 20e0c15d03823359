"""A question's progress as a chat client shows it: one short line per stage, model call and method step.

COrg takes 20-60 s on a CPU; a chat window that shows nothing meanwhile reads as a hang. SSE comments keep the
connection open but chat UIs drop them, so by default (``service.chat_progress=reasoning``) each line goes out as a
``reasoning_content`` delta, the field reasoning models stream their thinking in, which Open WebUI and other chat
UIs show as a collapsible block beside the answer and never mix into it. ``preamble`` puts the lines into the
content before the answer instead (for clients that show only content); ``comments`` keeps the SSE comments alone.
"""

from __future__ import annotations

from pydantic import ValidationError

from tanglerag.trace import STEP_TYPES
from tanglerag.tracking import ProgressEvent


def progress_line(event: ProgressEvent) -> str | None:
    """One line for a progress event ("retrieve ...", "  model call, 1925 prompt tokens"), or None for one not worth
    a line (a stage's end, the passages retrieved, a token of the answer)."""
    if event.type == "stage_start":
        return f"{event.stage} ..."
    if event.type == "llm_call":
        cached = ", cached" if event.data.get("cached") else ""
        return f"  model call: {event.data.get('prompt_tokens', 0)} prompt tokens{cached}"
    if event.type == "batch":
        return f"  {event.data.get('done', 0)} of {event.data.get('planned', 0)} model calls of this step done"
    if event.type == "step":
        return "  " + _step_line(event.data)
    return None


def _step_line(data: dict[str, object]) -> str:
    kind = str(data.get("kind", "step"))
    cls = STEP_TYPES.find(kind)
    if cls is None:
        return kind
    try:
        step = cls.model_validate(data)
    except ValidationError:
        return cls.title or kind
    return step.headline() or cls.title or kind
