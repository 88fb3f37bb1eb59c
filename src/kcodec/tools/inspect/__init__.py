"""Annotated views of real bytes, driven by the schemas.

A small interpreter walks an entity version's fields over the bytes and
produces a tree of :class:`Span` objects: every field's byte range, its raw
bytes, its schema path and decoded value, and notes (lengths and what they
cover, CRCs stored and computed, compressed streams and what they inflate to).
Nothing here knows a format by heart: what a field is comes from the schema
(read through :mod:`.schema` alone), so a schema change shows up here without
code changes.

Damage is marked where it is and inspection goes on as far as the bytes allow:
a CRC mismatch marks the CRC and the walk continues; a truncated field marks
that field and ends its entry; a length that disagrees with what its fields
cover marks the length, and the next entry starts where the length says.

Positions are absolute byte positions in the input (``space == "file"``),
except inside decompressed streams, whose spans count from the start of the
decompressed bytes (``space`` names the stream).

Modules: :mod:`.spans` (the tree), :mod:`.schema` (the schema model),
:mod:`.entries` (log entries and their framing), :mod:`.walk` (entities,
bytes, arrays), :mod:`.numbers` (integers, enums, bit groups),
:mod:`.compressed` (compressed streams), :mod:`.checks` (lengths, CRCs),
:mod:`.flexible` (compact lengths, scalars, nullable structs, tagged sections),
:mod:`.internal` (internal topics' record framing, by their registries),
:mod:`.kafka` (what Kafka's readers know beyond the schemas), :mod:`.summary`
(one-line records), :mod:`.text` (annotated hex).
"""

from kcodec.tools.inspect.entries import Inspector, inspect_bytes
from kcodec.tools.inspect.kafka import TOP_LEVEL_ENTITIES
from kcodec.tools.inspect.spans import BAD, OK, WARN, Span
from kcodec.tools.inspect.text import render_text, strip_ansi

__all__ = ["Span", "Inspector", "inspect_bytes", "render_text", "strip_ansi", "OK", "WARN", "BAD", "TOP_LEVEL_ENTITIES"]
