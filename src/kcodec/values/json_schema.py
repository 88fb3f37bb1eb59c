"""JSON Schema payloads: JSON text, parsed with non-integers as :class:`decimal.Decimal` (exact) and checked
against the schema with ``jsonschema`` (the ``confluent`` extra) where it is installed, ``$ref`` to
referenced schemas resolved by their reference names."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from kcodec.values.errors import PayloadError, SchemaParseError
from kcodec.values.registry import Reference, RegisteredSchema

__all__ = ["JsonSchema"]


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SchemaParseError(f"{where} is not JSON: {exc}") from None
    except RecursionError:
        raise SchemaParseError(f"{where} nests too deeply to read") from None


class JsonSchema:
    """A JSON Schema and, when ``jsonschema`` is installed, its validator."""

    def __init__(self, schema: RegisteredSchema, refs: list[tuple[Reference, RegisteredSchema]]):
        self.schema = _loads(schema.schema, f"schema {schema.id}")
        self.validator = self._validator(schema, refs)

    def _validator(self, schema: RegisteredSchema, refs: list[tuple[Reference, RegisteredSchema]]):
        try:
            import jsonschema
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT7
        except ImportError:
            return None  # the payload is still JSON; only the check is left out
        resources = []
        for ref, target in refs:
            contents = _loads(target.schema, f"reference {ref.name!r}")
            resources.append((ref.name, Resource.from_contents(contents, default_specification=DRAFT7)))
        if not isinstance(self.schema, (dict, bool)):
            raise SchemaParseError(f"schema {schema.id} is not a JSON Schema (neither an object nor a boolean)")
        cls = jsonschema.validators.validator_for(self.schema, default=jsonschema.Draft7Validator)
        try:
            cls.check_schema(self.schema)
        except jsonschema.SchemaError as exc:
            raise SchemaParseError(f"schema {schema.id} is not a valid JSON Schema: {exc.message}") from None
        return cls(self.schema, registry=Registry().with_resources(resources))

    def decode(self, payload: memoryview) -> Any:
        try:
            value = json.loads(bytes(payload), parse_float=Decimal)
        except (ValueError, UnicodeDecodeError) as exc:
            raise PayloadError(f"JSON payload does not parse: {exc}") from None
        except RecursionError:
            raise PayloadError("JSON payload nests too deeply to read") from None
        if self.validator is not None:
            try:
                error = next(iter(self.validator.iter_errors(value)), None)
            except Exception as exc:  # an unresolvable $ref surfaces while validating
                raise PayloadError(f"JSON payload cannot be checked against its schema: {exc}") from None
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path)
                raise PayloadError(f"JSON payload does not match its schema at /{where}: {error.message}")
        return value
