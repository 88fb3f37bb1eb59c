"""Schema references resolved through the same source as the schema: every schema a schema needs,
dependencies first, each once; a reference that is missing or leads back to itself is a
:class:`~kcodec.values.errors.SchemaReferenceError` naming the path."""

from __future__ import annotations

from kcodec.values.errors import SchemaReferenceError
from kcodec.values.registry import Reference, RegisteredSchema

__all__ = ["resolve_references", "MAX_REFERENCE_DEPTH"]

MAX_REFERENCE_DEPTH = 64  # far beyond real schemas; a chain this deep is a loop by another name


def _label(schema: RegisteredSchema) -> str:
    if schema.subject is not None:
        return f"{schema.subject} v{schema.version}"
    return f"schema {schema.id}"


def resolve_references(schema: RegisteredSchema, source) -> list[tuple[Reference, RegisteredSchema]]:
    """The schemas ``schema`` refers to, transitively, in an order where each comes after those it needs."""
    out: list[tuple[Reference, RegisteredSchema]] = []
    done: set[tuple[str, int]] = set()

    def visit(current: RegisteredSchema, path: list[str]) -> None:
        if len(path) > MAX_REFERENCE_DEPTH:
            raise SchemaReferenceError(f"references nest deeper than {MAX_REFERENCE_DEPTH}: {' -> '.join(path)}")
        for ref in current.references:
            at = (ref.subject, ref.version)
            label = f"{ref.subject} v{ref.version}"
            if label in path:
                raise SchemaReferenceError(f"reference cycle: {' -> '.join([*path, label])}")
            if at in done:
                continue
            target = source.version(ref.subject, ref.version)
            if target is None:
                raise SchemaReferenceError(
                    f"{path[-1]} refers to {ref.name!r} as {label}, which {source.description} does not have"
                )
            visit(target, [*path, label])
            done.add(at)
            out.append((ref, target))

    visit(schema, [_label(schema)])
    return out
