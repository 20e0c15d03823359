"""Per-question method settings a client may change: method sections only, never paths or the LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from tanglerag.errors import InputError
from tanglerag.settings import Settings

SECTIONS = ("retrieval", "methods", "corg", "diva", "personal")
LOADS_A_MODEL = {"corg.reader"}  # a model name: a request must not make the server fetch or load a model


def allowed_options() -> list[str]:
    """``section.field`` names a request may set (fields holding a path are left out: no request picks a file)."""
    names = []
    for section in SECTIONS:
        model = type(getattr(Settings(), section))
        for field, info in model.model_fields.items():
            if not _holds_path(info.annotation) and f"{section}.{field}" not in LOADS_A_MODEL:
                names.append(f"{section}.{field}")
    return names


def with_options(settings: Settings, options: dict[str, Any]) -> Settings:
    if not options:
        return settings
    allowed = set(allowed_options())
    data = settings.model_dump()
    for key, value in options.items():
        if key not in allowed:
            raise InputError(f"option {key!r} cannot be set per question; allowed: {', '.join(sorted(allowed))}")
        section, field = key.split(".", 1)
        data[section][field] = value
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"option {'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from exc


def _holds_path(annotation: Any) -> bool:
    return annotation is Path or any(_holds_path(arg) for arg in get_args(annotation))
