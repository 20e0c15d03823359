"""JSON parsing for files and bodies that users hand us.

A document nested thousands of levels deep makes Python's parser raise ``RecursionError``, and an integer of more
than 4,300 digits a ``ValueError`` advising ``sys.set_int_max_str_digits()``; here each is a ``json.JSONDecodeError``
like any other malformed JSON, in our words, so every reader reports it as that file's problem.
"""

from __future__ import annotations

import json
import sys
from typing import Any


class _TooLong(ValueError):
    def __init__(self, digits: str) -> None:
        super().__init__(digits)
        self.digits = digits


def loads(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", _doc(text), 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's own limit on integer digits: read again to find the integer
        try:
            return json.loads(text, parse_int=_integer)
        except _TooLong as exc:
            doc, count = _doc(text), len(exc.digits.lstrip("-"))
            raise json.JSONDecodeError(f"an integer of {count} digits, too long to read (at most "
                                       f"{sys.get_int_max_str_digits()})", doc, doc.find(exc.digits)) from None


def _integer(digits: str) -> int:
    limit = sys.get_int_max_str_digits()
    if limit and len(digits.lstrip("-")) > limit:
        raise _TooLong(digits)
    return int(digits)


def _doc(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", errors="replace")
