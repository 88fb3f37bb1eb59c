"""The schemas as data: version ranges, the backend-neutral IR, the YAML loader and the
resolver every backend reads.

Importing this package loads neither PyYAML nor Jinja2: :func:`load_schemas` imports PyYAML
when it reads files, and tools rebuild the IR from ``kcodec.generated.schema_set()``.
"""

from .data import from_data, to_data
from .ir import (
    INT_TYPES,
    SCALAR_TYPES,
    ArrayType,
    Bit,
    BitsType,
    BytesType,
    Compression,
    Default,
    Derived,
    Entity,
    EntityRef,
    Enum,
    EnumValue,
    Field,
    IntType,
    ScalarType,
    SchemaSet,
    Type,
)
from .loader import load_schemas
from .resolve import (
    UNKNOWN_TAGS,
    EntityVersion,
    FixedRun,
    ResolvedField,
    bit_type_text,
    constants,
    default_value,
    field_type_at,
    layout_rows,
    min_size,
    resolve,
    resolve_all,
    resolve_entity,
    struct_default,
    type_refs,
    type_text,
)
from .versions import VersionRange

__all__ = [
    "INT_TYPES",
    "SCALAR_TYPES",
    "ScalarType",
    "Default",
    "UNKNOWN_TAGS",
    "default_value",
    "field_type_at",
    "struct_default",
    "ArrayType",
    "Bit",
    "BitsType",
    "BytesType",
    "Compression",
    "Derived",
    "Entity",
    "EntityRef",
    "Enum",
    "EnumValue",
    "Field",
    "IntType",
    "SchemaSet",
    "Type",
    "VersionRange",
    "load_schemas",
    "from_data",
    "to_data",
    "EntityVersion",
    "FixedRun",
    "ResolvedField",
    "bit_type_text",
    "constants",
    "layout_rows",
    "min_size",
    "resolve",
    "resolve_all",
    "resolve_entity",
    "type_refs",
    "type_text",
]
