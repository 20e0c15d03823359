"""Per-question method settings a client may change: method sections only, never paths or the LLM.

A user-bound key may lower what costs model work (``RaisesCost`` settings) but not raise it past the server's own
settings, so no user can hold the model far longer than the operator planned; an admin key may, up to the
ceilings every setting carries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from tanglerag.config import RaisesCost
from tanglerag.errors import InputError
from tanglerag.family import families
from tanglerag.service.errors import ServiceError
from tanglerag.settings import Settings, assembled

CORE_SECTIONS = ("retrieval", "methods", "personal", "conflicts")
"""Core sections a request may set every field of; a family names its own fields (``Family.options``)."""


def allowed_options() -> list[str]:
    """``section.field`` names a request may set (fields holding a path are left out: no request picks a file)."""
    names = [f"{section}.{field}" for section in CORE_SECTIONS for field in _section(section).model_fields]
    names += [f"{family.section_name}.{field}" for family in families() for field in family.options]
    return [key for key in names if not _holds_path(_field(key).annotation)]


def _section(section: str) -> type[BaseModel]:
    annotation = assembled().model_fields[section].annotation
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation


def _field(key: str) -> FieldInfo:
    """The settings field a ``section.field`` option sets (its type, bounds and cost marker)."""
    section, field = key.split(".", 1)
    return _section(section).model_fields[field]


def _integral(value: Any) -> Any:
    """``9.0`` as ``9``: JSON Schema counts it an integer, and a strict int field would refuse it."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


INTEGRAL = BeforeValidator(_integral)
"""Put last in an int's ``Annotated``: ``9`` or ``9.0`` pass, ``true`` or ``"9"`` do not (in a strict model)."""


def options_model() -> type[BaseModel]:
    """The body's ``options`` object: every allowed ``section.field`` with the setting's own type and bounds.

    Generated from the settings, so the OpenAPI schema lists exactly the keys and values a request may send.
    """
    fields: dict[str, Any] = {}
    for key in allowed_options():
        info = _field(key)
        extra = [INTEGRAL] if info.annotation is int else []
        typed: Any = Annotated[(info.annotation, *info.metadata, *extra)] if info.metadata or extra else info.annotation
        fields[key.replace(".", "__")] = (typed | None, Field(None, alias=key, description=info.description,
                                                              json_schema_extra=info.json_schema_extra))
    config = ConfigDict(extra="forbid", populate_by_name=False, strict=True)
    return create_model("Options", __config__=config, __doc__="method settings for this question", **fields)


def with_options(settings: Settings, options: dict[str, Any], *, admin: bool = True) -> Settings:
    """``settings`` with ``options`` applied; a non-admin caller may not raise a cost above ``settings``."""
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
        changed = Settings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"option {'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from exc
    if not admin:
        for key in options:
            _refuse_raised_cost(key, settings, changed)
    return changed


def _refuse_raised_cost(key: str, before: Settings, after: Settings) -> None:
    section, field = key.split(".", 1)
    marker = next((m for m in _field(key).metadata if isinstance(m, RaisesCost)), None)
    old, new = getattr(getattr(before, section), field), getattr(getattr(after, section), field)
    if marker is not None and marker.rank(new) > marker.rank(old):
        raise ServiceError(403, f"option {key}: {new!r} costs more than this server's {old!r}; a user key may "
                                "only lower it (an admin key may raise it)")


def _holds_path(annotation: Any) -> bool:
    return annotation is Path or any(_holds_path(arg) for arg in get_args(annotation))
