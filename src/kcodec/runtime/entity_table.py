"""The generated packages' tables of entity versions, each entity's module imported when one of its
entries is first read. Importing ``kcodec.generated`` (or its fast decoders) used to import every entity of
every internal topic, half a second before any command or Spark worker did anything."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")
Key = tuple[str, int]


class EntityTable(MutableMapping[Key, T]):
    """``table[(entity, version)]`` is ``pick(module, version)`` for the module ``package.entity``, imported
    and picked from on the first read of any of its entries. The keys are known up front, so ``in``,
    ``len`` and iteration import nothing. Entries can be set and deleted as a dict's (the fuzzer's tests put a
    failing decoder in place)."""

    __slots__ = ("_package", "_pick", "_keys", "_picked")

    def __init__(self, package: str, pick: Callable[[ModuleType, int], T], keys: Iterable[Key]) -> None:
        self._package = package
        self._pick = pick
        self._keys = dict.fromkeys(keys)
        self._picked: dict[Key, T] = {}

    def __getitem__(self, key: Key) -> T:
        try:
            return self._picked[key]
        except KeyError:
            if key not in self._keys:
                raise
        entity, version = key
        value = self._picked[key] = self._pick(importlib.import_module(f"{self._package}.{entity}"), version)
        return value

    def __setitem__(self, key: Key, value: T) -> None:
        self._keys[key] = None
        self._picked[key] = value

    def __delitem__(self, key: Key) -> None:
        del self._keys[key]
        self._picked.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[Key]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"<EntityTable of {self._package}: {len(self._keys)} entity versions>"


def submodules(package: str, names: Iterable[str]) -> Callable[[str], ModuleType]:
    """A package's module-level ``__getattr__`` giving its entity modules as attributes, imported on first
    use (``kcodec.generated.record_batch`` keeps working without importing every entity up front)."""
    known = frozenset(names)

    def __getattr__(name: str) -> ModuleType:
        if name in known:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
