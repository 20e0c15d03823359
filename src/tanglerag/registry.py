"""One registry type for every table of named things (method families, metrics, trace step kinds, dataset formats).

Why one type: the tables used to be plain dicts filled by side-effect imports, each with its own rule for a name
registered twice. A ``Registry`` refuses a second, different item under a known name (re-registering the same
object is harmless, so a module imported twice does no damage), lists its names in registration order (a lookup
that misses says which names exist and which one was probably meant), and loads plug-ins from a Python
entry-point group only when ``load()`` is called, explicitly, by the registry's owner.

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
from collections.abc import Callable, Iterable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from tanglerag.errors import InputError

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


class Registry(Generic[T]):
    """Named items of one ``kind``; ``group`` names the entry-point group whose plug-ins ``load()`` adds, and
    ``check`` (optional) refuses an item that does not fit the others (it raises), plug-ins' included."""

    def __init__(self, kind: str, *, group: str | None = None,
                 check: Callable[[str, T], None] | None = None) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._items: dict[str, T] = {}
        self._loaded = group is None
        self.version = 0
        """Bumped by every change, so a value derived from the registry (a settings model) knows to rebuild."""

    def register(self, name: str, item: T) -> T:
        """File ``item`` under ``name``; a different item already there is refused."""
        known = self._items.get(name)
        if known is not None and known is not item:
            raise DuplicateName(f"two {self.kind}s are named {name!r}: {known!r} and {item!r}")
        if known is None:
            if self._check is not None:
                self._check(name, item)
            self._items[name] = item
            self.version += 1
        return item

    def add(self, name: str) -> Callable[[T], T]:
        """``register`` as a decorator: ``@METRICS.add("em")``."""
        return lambda item: self.register(name, item)

    def remove(self, name: str) -> T:
        """Take an item out (a test's plug-in, after the test)."""
        item = self._items.pop(name)
        self.version += 1
        return item

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
        try:
            return self._items[name]
        except KeyError:
            raise InputError(self.unknown(name)) from None

    def find(self, name: str) -> T | None:
        self.load()
        return self._items.get(name)

    def unknown(self, name: str) -> str:
        """The message for a name that is not registered (see ``unknown_name``)."""
        return unknown_name(self.kind, name, self.names())

    def names(self) -> list[str]:
        self.load()
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        self.load()
        return list(self._items.items())

    def values(self) -> list[T]:
        self.load()
        return list(self._items.values())

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self.load()
        return len(self._items)
