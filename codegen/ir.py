"""Old import path of :mod:`kcodec.codegen.schema.ir`, kept only for ``kcodec.tools.inspect``.

Delete it when the inspect split (issue #10) reads ``kcodec.codegen.schema`` and
``kcodec.generated.schema_set()``; nothing else imports it (tests/test_layering.py pins that).
"""
from .schema.ir import ArrayType, BitsType, BytesType, EntityRef, Field, IntType

__all__ = ["ArrayType", "BitsType", "BytesType", "EntityRef", "Field", "IntType"]
