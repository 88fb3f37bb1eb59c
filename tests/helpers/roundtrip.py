"""The round-trip check every codec test shares, in the spirit of construct's own test helper
(``common(format, data, obj, size)``): one value, every property a codec must have."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TRAILING = b"\xff\x00trailing"


def examples(schemas, entity: str, default: int) -> int:
    """Hypothesis examples per entity version: Kafka's internal records (schemas/internal/, plain fields
    and small structs) take a quarter of what the record formats take, so the suite stays fast."""
    return max(10, default // 4) if "/" in schemas.entities[entity].file else default


def added_by_parse(schemas) -> set[str]:
    """Names parsing adds but building does not take: derived and const fields, and fields with a default
    (parsing gives it where the field is absent)."""
    return {
        f.name
        for e in schemas.entities.values()
        for f in e.fields
        if f.derived is not None or f.const is not None or f.default is not None
    }


def assert_matches(parsed, value, added: set[str], path: str = "value") -> None:
    """``parsed`` equals ``value``, except for the fields the parser adds (derived, const)."""
    if isinstance(value, dict):
        assert isinstance(parsed, dict), path
        for k, v in value.items():
            assert k in parsed, f"{path}.{k} missing after parse"
            assert_matches(parsed[k], v, added, f"{path}.{k}")
        extra = {k for k in parsed if not k.startswith("_")} - set(value)
        assert extra <= added, f"{path}: parse added {extra - added}"
    elif isinstance(value, list):
        assert isinstance(parsed, list) and len(parsed) == len(value), path
        for i, (p, v) in enumerate(zip(parsed, value)):
            assert_matches(p, v, added, f"{path}[{i}]")
    else:
        assert parsed == value and type(parsed) is type(value), f"{path}: {parsed!r} != {value!r}"


def check_roundtrip(codec, value, added: set[str]) -> bytes:
    """size(value) == len(build(value)) == the field sizes' sum == bytes parse consumes (with trailing
    bytes after it), parse gives the value back, and a parsed value rebuilds byte for byte."""
    data = codec.build(value)
    assert codec.size(value) == len(data)
    assert sum(codec.field_sizes(value).values()) == len(data)
    parsed, consumed = codec.parse_prefix(data + TRAILING)
    assert consumed == len(data)
    assert_matches(parsed, value, added)
    assert codec.build(parsed) == data
    return data


@contextmanager
def generated_package(root: Path, schemas: Path, package: str) -> Iterator:
    """``schemas`` generated into a throwaway package ``package`` under ``root``, imported (with its fast
    decoders) for the duration, and forgotten afterwards."""
    from kcodec.codegen import generate

    result = generate(schemas, root / package)
    assert not result.deleted and result.written
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(package)
        importlib.import_module(package + ".fast")
        yield module
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
