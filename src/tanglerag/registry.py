"""One registry type for every table of named things (method families, stores, file loaders, embedders, metrics,
trace step kinds, dataset formats).

Why one type: the tables used to be plain dicts filled by side-effect imports, each with its own rule for a name
registered twice. A ``Registry`` refuses a second, different item under a known name (re-registering the same
object is harmless, so a module imported twice does no damage), lists its names in registration order (a lookup
that misses says which names exist and which one was probably meant), and loads plug-ins from a Python
entry-point group only when ``load()`` is called, explicitly, by the registry's owner.

The package's own plug-ins are written as ``"module:attribute"`` references (``register_lazy``), the way fsspec's
``registry.py`` lists its filesystems: a name is known without importing anything, the module is imported when the
item is first asked for, and a reference whose module needs an optional extra that is not installed is refused in one
line naming the ``pip install`` that fixes it. Adding one is one module plus one line in its registry's table.

>>> colours: Registry[int] = Registry("colour")
>>> colours.register("red", 1)
1
>>> colours.get("rde")
Traceback (most recent call last):
...
tanglerag.errors.InputError: unknown colour 'rde' (did you mean 'red'?); available: red
"""

from __future__ import annotations

import difflib
import logging
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from tanglerag.errors import ConfigError, InputError

T = TypeVar("T")
log = logging.getLogger(__name__)


def unknown_name(kind: str, name: str, known: Iterable[str]) -> str:
    """The message for a name that is not among ``known``: the likely intended one, then every known name."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; available: {', '.join(known)}"


class DuplicateName(ValueError):
    """Two different things registered under one name: a programming error, so not a user error."""


@dataclass(frozen=True)
class Reference:
    """An item not imported yet: ``"module:attribute"``, and the optional extra that installs what its module
    imports (None: the core has it)."""

    target: str
    extra: str | None = None

    def resolve(self, kind: str, name: str) -> object:
        """The object; a missing third-party module is a ConfigError naming the extra to install."""
        try:
            return pkgutil.resolve_name(self.target)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if self.extra is None or missing == "tanglerag" or missing.startswith("tanglerag."):
                raise
            raise ConfigError(f"the {kind} {name!r} needs {missing}: pip install 'tanglerag[{self.extra}]'") from None


class Registry(Generic[T]):
    """Named items of one ``kind``; ``group`` names the entry-point group whose plug-ins ``load()`` adds, and
    ``check`` (optional) refuses an item that does not fit the others (it raises), plug-ins' included."""

    def __init__(self, kind: str, *, group: str | None = None,
                 check: Callable[[str, T], None] | None = None) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._items: dict[str, T] = {}
        self._lazy: dict[str, Reference] = {}
        self._loaded = group is None
        self.version = 0
        """Bumped by every change, so a value derived from the registry (a settings model) knows to rebuild."""

    def register(self, name: str, item: T) -> T:
        """File ``item`` under ``name``; a different item already there is refused."""
        known = self._resolved(name)
        if known is not None and known is not item:
            raise DuplicateName(f"two {self.kind}s are named {name!r}: {known!r} and {item!r}")
        if known is None:
            self._check_and_file(name, item)
        return item

    def register_lazy(self, name: str, target: str, *, extra: str | None = None) -> None:
        """File the item ``target`` (``"module:attribute"``) names under ``name``, imported when first asked for;
        ``extra``: the optional dependency group its module needs."""
        reference, known = Reference(target, extra), self._lazy.get(name)
        if known == reference:  # the same line again is harmless, whether its item was imported since or not
            return
        if known is not None or name in self._items:
            raise DuplicateName(f"two {self.kind}s are named {name!r}")
        self._lazy[name] = reference
        self.version += 1

    def reference(self, name: str) -> Reference | None:
        """Where a lazily registered item lives (None for an item registered as an object, or not at all)."""
        return self._lazy.get(name)

    def _resolved(self, name: str) -> T | None:
        """The item under ``name``, imported now if it was registered lazily."""
        if name in self._lazy and name not in self._items:
            item = self._lazy[name].resolve(self.kind, name)
            self._check_and_file(name, item)  # type: ignore[arg-type]
        return self._items.get(name)

    def _check_and_file(self, name: str, item: T) -> None:
        if self._check is not None:
            self._check(name, item)
        self._items[name] = item
        self.version += 1

    def resolved(self) -> list[T]:
        """The items imported so far, in registration order (a ``check`` compares a newcomer with these, so that
        checking one item never imports the others)."""
        return [self._items[n] for n in self._order() if n in self._items]

    def _order(self) -> list[str]:
        return list(dict.fromkeys([*self._lazy, *self._items]))

    def add(self, name: str) -> Callable[[T], T]:
        """``register`` as a decorator: ``@METRICS.add("em")``."""
        return lambda item: self.register(name, item)

    def remove(self, name: str) -> None:
        """Take an item out, imported or not (a test's plug-in, after the test); KeyError for an unknown name."""
        lazy, item = self._lazy.pop(name, None), self._items.pop(name, None)
        if lazy is None and item is None:
            raise KeyError(name)
        self.version += 1

    def load(self) -> None:
        """Register every plug-in of the entry-point group, once; an entry point's name is the item's name. A plug-in
        that fails to import or does not fit is left out with one logged line naming it and its distribution."""
        if self._loaded:
            return
        self._loaded = True  # first: a plug-in's own check may look the registry up while it loads
        for point in entry_points(group=self.group or ""):
            try:
                self.register(point.name, point.load())
            except Exception as exc:  # one broken plug-in must not take the others (or the CLI's --help) down
                owner = point.dist.name if point.dist is not None else "an unknown distribution"
                log.error("the %s plug-in %r of %s was not loaded: %s: %s", self.kind, point.name, owner,
                          type(exc).__name__, exc)

    def get(self, name: str) -> T:
        """The item, or an InputError naming the closest known names."""
        self.load()
        item = self._resolved(name)
        if item is None:
            raise InputError(self.unknown(name))
        return item

    def find(self, name: str) -> T | None:
        self.load()
        return self._resolved(name)

    def unknown(self, name: str) -> str:
        """The message for a name that is not registered (see ``unknown_name``)."""
        return unknown_name(self.kind, name, self.names())

    def names(self) -> list[str]:
        """Every name, lazily registered ones included (nothing is imported)."""
        self.load()
        return self._order()

    def items(self) -> list[tuple[str, T]]:
        """Every item, each lazily registered one imported."""
        self.load()
        return [(name, item) for name in self._order() if (item := self._resolved(name)) is not None]

    def values(self) -> list[T]:
        return [item for _, item in self.items()]

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())
