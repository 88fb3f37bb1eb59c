"""Span writers for the compiled backend: ``span_put_<e>_v<N>(out, field...)``.

The same bytes as the generated ``put_<e>_v<N>`` writers, for C callers whose
values are not Python objects but slices of memory (Arrow column buffers, say):
a byte string is a :c:type:`Span` (``p == NULL``: null), an array of entities is
its count and its elements already encoded back to back (written with the
element's own span writer). Integers are ranged-checked as ``put_`` does.
Only the entity versions a C caller names in :data:`SPAN_WRITERS` get one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schema import ArrayType, BytesType, EntityVersion, IntType, SchemaSet, resolve_all
from .buffer import Code
from .c import _PUT, _encode_error, _int_bounds, _put_int

__all__ = ["SPAN_WRITERS", "SpanWriter", "span_writers"]

#: The entity versions the kernel's column encoder (ckernel_columns.c.j2) writes.
SPAN_WRITERS = ("record_header_v2", "record_v2")


@dataclass
class SpanWriter:
    suffix: str
    signature: str
    lines: list[str]


def span_writers(schemas: SchemaSet) -> list[SpanWriter]:
    """A span writer per entity version in :data:`SPAN_WRITERS`, in that order (children first)."""
    by_suffix = {ev.suffix: ev for ev in resolve_all(schemas) if ev.compiled_plain}
    return [_span_writer(by_suffix[s]) for s in SPAN_WRITERS if s in by_suffix]


def _params(ev: EntityVersion) -> list[str]:
    params = ["Buf *out"]
    for f in ev.fields:
        if f.field.derived:
            continue
        if isinstance(f.type, IntType):
            params.append(f"long long f_{f.name}")
        elif isinstance(f.type, BytesType):
            params.append(f"Span f_{f.name}")
        elif isinstance(f.type, ArrayType):
            params += [f"long long n_{f.name}", f"Span f_{f.name}"]
        else:
            raise ValueError(f"{ev.suffix}.{f.name}: span writers take integers, byte strings and arrays only")
    return params


def _span_writer(ev: EntityVersion) -> SpanWriter:
    w = Code(depth=1)
    for f in ev.fields:
        t = f.type
        if not f.field.derived and isinstance(t, IntType) and (t.min, t.max) != (-(1 << 63), (1 << 63) - 1):
            lo, hi = _int_bounds(t)
            w(f'if (int_in_range(f_{f.name}, {lo}, {hi}, "{f.name}") < 0) return -1;')
    lengths: list[tuple[str, IntType]] = []
    starts = ev.length_starts()
    for f in ev.fields:
        for owner in starts.get(f.name, ()):
            lt = ev.field(owner).type
            w(f"Py_ssize_t body_{owner} = out->len;  /* {owner} goes here, once its bytes are known */")
            w(f"if (buf_reserve(out, {lt.max_width}) < 0) return -1;")
            w(f"out->len += {lt.max_width};")
            lengths.append((owner, lt))
        t = f.type
        if f.field.derived:
            continue
        x = f"f_{f.name}"
        if isinstance(t, IntType):
            _put_int(w, t, x)
        elif isinstance(t, BytesType):
            w(f"if (!{x}.p) {{")
            with w.indented():
                if t.nullable:
                    w(f"if ({_PUT[t.prefix.name]}(out, -1) < 0) return -1;")
                else:
                    _encode_error(w, f"{f.name} cannot be null")
            w(f"}} else if ({_PUT[t.prefix.name]}(out, {x}.n) < 0 || buf_put(out, {x}.p, {x}.n) < 0) {{")
            w("    return -1;")
            w("}")
        else:
            assert isinstance(t, ArrayType)
            w(f"if ({_PUT[t.prefix.name]}(out, n_{f.name}) < 0 || buf_put(out, {x}.p, {x}.n) < 0) return -1;")
    for owner, lt in reversed(lengths):
        w(f"if (patch_length_{lt.name}(out, body_{owner}, {lt.max_width}) < 0) return -1;")
    w("return 0;")
    return SpanWriter(ev.suffix, ", ".join(_params(ev)), w.lines)
