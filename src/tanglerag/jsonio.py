"""JSON parsing for files and bodies that users hand us.

A document nested thousands of levels deep makes Python's parser raise ``RecursionError``; here it is a
``json.JSONDecodeError`` like any other malformed JSON, so every reader reports it as that file's problem.
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        doc = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
        raise json.JSONDecodeError("nested too deeply to read", doc, 0) from None
