"""Old import path of :mod:`kcodec.codegen.schema.resolve`, kept only for ``kcodec.tools.inspect``.

Delete it when the inspect split (issue #10) reads ``kcodec.codegen.schema`` and
``kcodec.generated.schema_set()``; nothing else imports it (tests/test_layering.py pins that).
"""
from .schema.resolve import ResolvedField, bit_type_text, resolve, type_text

__all__ = ["ResolvedField", "bit_type_text", "resolve", "type_text"]
