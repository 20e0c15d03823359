"""A method family declared once: its methods, settings section, stages, per-request options, inspector view, and
the hooks the general layers reach it through.

Why here, in the core: the settings model, the list of stages, the service's options schema, the structured-output
defaults, the inspector's views and the CLI's commands are all *derived* from the registered families, so no general
module names a family. The package's own families are lines of ``BUILT_IN`` (``"module:FAMILY"`` references,
imported when first needed, so a checkout run without ``pip install`` has them too); another distribution's register
through the ``tanglerag.families`` entry-point group, and whatever a built-in family can do, such a family can do too.
In a running process ``register_family`` adds one without an entry point (tests, notebooks).

A family's ``methods`` are the classes of ``tanglerag.methods.base.Method`` (checked there, where the contract
lives); ``retrievers`` point at code in the family's folder. ``commands`` and ``tasks`` are ``"module:attribute"``
strings, resolved only by the layer that runs them (the CLI, the evaluation), since that code imports the runtime and
eval, which a family's folder may not (the built-in families keep it in ``cli/families/`` and ``eval/families/``).
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tanglerag.config import Section, StructuredModes
from tanglerag.errors import ConfigError
from tanglerag.registry import DuplicateName, Registry
from tanglerag.tracking import CORE_STAGES


@dataclass(frozen=True, eq=False)
class Family:
    """Everything the package needs to know about one family (a paper with its baselines, a peer, ``auto``)."""

    name: str
    methods: tuple[type[Any], ...] = ()
    settings: type[Section] | None = None
    """Its settings section's class; the section is named ``section`` (default: the family's name)."""
    section: str = ""
    stages: frozenset[str] = frozenset()
    """The stages its methods mark (``tracking.stage``), besides the core ones: usage is reported by them and
    ``llm.structured_stages`` may name them."""
    options: tuple[str, ...] = ()
    """Fields of its section a client may set per question (``/v1/ask`` options); paths are never allowed."""
    view: Path | None = None
    """A script calling ``registerStepView`` for its trace steps, served to the inspector."""
    structured: StructuredModes = field(default_factory=dict)
    """Its measured-better ``llm.structured_stages`` entries, part of that setting's default."""
    metrics: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """Metrics that read its own trace steps (post-fusion's %NM), by name: ``(answer, example) -> score | None``."""
    retrievers: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """Retrievers by name (``personal``), each built from ``(index, context store, settings)``."""
    commands: tuple[str, ...] = ()
    """CLI commands: ``"module:attribute"`` of typer apps, added to ``tanglerag``'s (a named app is a group)."""
    tasks: Mapping[str, str] = field(default_factory=dict)
    """Dataset tasks it evaluates (``retrieval``): task -> ``"module:function"``."""
    tables: Mapping[str, str] = field(default_factory=dict)
    """Tables of its own the documentation shows (``ledger``'s rules): a catalog block's name -> ``"module:function"``
    returning the Markdown table (``tanglerag.catalog`` writes it into the page)."""
    delegates_to_any: bool = False
    """Its methods may hand a question to any method (``auto``): a run with them depends on every section."""
    conflict_reporter: type[Any] | None = None
    """One of its methods whose ``run`` records a ``ConflictStep`` (``ledger``): with ``conflicts.report`` on, it
    reads the passages any other method answered from, and only that step is kept (``Method.answer``)."""

    @property
    def section_name(self) -> str:
        return self.section or self.name

    def method_names(self) -> list[str]:
        return [cls.name for cls in self.methods]


def _fits(name: str, family: Family) -> None:
    """A new family may not reuse a registered family's method, section, metric, retriever or task name, and may
    only offer per-request options its section has (a name clash would silently shadow one of the two)."""
    if name != family.name:
        raise DuplicateName(f"family {family.name!r} is registered under another name, {name!r}")
    fields = set(family.settings.model_fields) if family.settings is not None else set()
    if not set(family.options) <= fields:
        raise ConfigError(f"family {family.name!r} offers per-request options its settings section does not have: "
                          f"{', '.join(sorted(set(family.options) - fields))}")
    for other in FAMILIES.resolved():
        for what, ours, theirs in (("metric", family.metrics, other.metrics),
                                   ("retriever", family.retrievers, other.retrievers),
                                   ("task", family.tasks, other.tasks)):
            if shared := sorted(set(ours) & set(theirs)):
                raise DuplicateName(f"families {other.name!r} and {family.name!r} both have a {what} {shared[0]!r}")
        clash = set(other.method_names()) & set(family.method_names())
        if clash:
            raise DuplicateName(f"families {other.name!r} and {family.name!r} both have a method {sorted(clash)[0]!r}")
        if family.settings is not None and other.settings is not None and other.section_name == family.section_name:
            raise DuplicateName(f"families {other.name!r} and {family.name!r} both have a section "
                                f"{family.section_name!r}")


FAMILIES: Registry[Family] = Registry("method family", group="tanglerag.families", check=_fits)
BUILT_IN = ("astute", "auto", "cdit", "concat", "corg", "diva", "ledger", "madam", "pcas", "post_fusion")
"""The package's families: each is ``tanglerag.methods.<name>.family:FAMILY``, listed (so loaded) in name order."""
for _name in BUILT_IN:
    FAMILIES.register_lazy(_name, f"tanglerag.methods.{_name}.family:FAMILY")


def register_family(family: Family) -> Family:
    """Make a family known in this process (an installed plug-in needs no call: its entry point is loaded)."""
    return FAMILIES.register(family.name, family)


def families() -> list[Family]:
    return FAMILIES.values()


def family_of(method: str) -> Family | None:
    return next((f for f in families() if method in f.method_names()), None)


def sections() -> dict[str, type[Section]]:
    """Section name -> class, for every family that has settings."""
    return {f.section_name: f.settings for f in families() if f.settings is not None}


def known_stages() -> frozenset[str]:
    return CORE_STAGES.union(*(f.stages for f in families()))


def structured_defaults() -> StructuredModes:
    """``llm.structured_stages``' default: every family's measured-better entries."""
    merged: StructuredModes = {}
    for family in families():
        merged.update(family.structured)
    return merged


def conflict_reporter() -> type[Any] | None:
    """The method class that makes conflict reports for other methods' answers (the first family offering one)."""
    return next((f.conflict_reporter for f in families() if f.conflict_reporter is not None), None)


def retriever_factory(name: str) -> Callable[..., Any]:
    for family in families():
        if name in family.retrievers:
            return family.retrievers[name]
    raise ConfigError(f"no registered family offers a {name!r} retriever")


def task_runner(task: str) -> Callable[..., None]:
    """What evaluates a dataset task no answer runner handles (``retrieval``: PCAS's ORCA-ShARC), called with
    ``(settings, dataset, methods, *, limit, out, as_json, options)``; ``options`` holds the eval command's flags
    for that task."""
    for family in families():
        if task in family.tasks:
            runner: Callable[..., None] = resolve(family.tasks[task])
            return runner
    raise ConfigError(f"no registered family evaluates {task!r} datasets")


def resolve(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference of a family names (a command, a task's runner)."""
    return pkgutil.resolve_name(reference)


def check_structured_modes(modes: StructuredModes) -> None:
    """Refuse an ``llm.structured_stages`` key that names no stage and no method: it would be silently ignored."""
    stage_names = known_stages()
    method_names = {name for f in families() for name in f.method_names()}
    stages, methods = f"stages: {', '.join(sorted(stage_names))}", f"methods: {', '.join(sorted(method_names))}"
    for key, value in modes.items():
        if isinstance(value, dict):
            if key not in method_names:
                raise ConfigError(f"llm.structured_stages.{key}: no method has this name (modes per stage go under "
                                  f"a method's name); {methods}")
            unknown = sorted(value.keys() - stage_names)
            if unknown:
                raise ConfigError(f"llm.structured_stages.{key}.{unknown[0]}: no stage has this name; {stages}")
        elif key not in stage_names and key not in method_names:
            raise ConfigError(f"llm.structured_stages.{key}: neither a stage nor a method; {stages}; {methods}")
