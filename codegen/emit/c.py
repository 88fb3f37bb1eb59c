"""The compiled backend: a C extension printed from the same IR.

It covers the entity versions :attr:`EntityVersion.compiled` accepts (integers,
constants and bit groups, length-prefixed bytes and strings, nested entities
and prefixed arrays of them, lengths that cover the rest of the entity,
CRC-32s, compressed message sets): in Kafka's formats the v2 record and its
headers, and the v0/v1 log entry and message (Kafka's LegacyRecord). v2 batch
headers stay in Python (once per batch); decompression is kcodec's, called
from C.

Per supported entity version it prints:
* ``decode_<e>_v<N>(buf, pos=0, end=None)`` and ``decode_<e>_v<N>_array(buf, pos, end, count)``:
  drop-in replacements for the fast Python decoders (same tuples, same errors);
* ``columns_<e>_v<N>(buf, pos, end, count)``: decode ``count`` entities straight
  into Arrow-layout column buffers (no Python object per entity);
  with ``encode_<e>_v<N>``, for the :attr:`EntityVersion.compiled_plain` ones.

Decoders of entities that check a CRC or decompress take the Python
decoders' options too (``verify_crc, limit, contents``).

Both decoders walk the fields with one switch (:func:`_decode_fields`); what
differs is where a decoded value goes (:class:`_TupleSink`, :class:`_ColumnSink`).
Scalar reads are bounded by the buffer and byte strings by ``end``, exactly
as the Python backends do, so all three fail the same way on the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from ..schema import (
    ArrayType,
    BitsType,
    BytesType,
    EntityRef,
    EntityVersion,
    IntType,
    ResolvedField,
    SchemaSet,
    Type,
    constants,
    resolve_all,
)
from .buffer import Code

_LOAD = {
    "int8": "(int8_t)buf[p]",
    "int16": "(int16_t)load_be16(buf + p)",
    "int32": "(int32_t)load_be32(buf + p)",
    "int64": "(int64_t)load_be64(buf + p)",
    "uint32": "load_be32(buf + p)",
}
_PUT = {
    "int8": "put_be8",
    "int16": "put_be16",
    "int32": "put_be32",
    "int64": "put_be64",
    "uint32": "put_be32",
    "varint": "put_varint32",
    "varlong": "put_varint64",
    "uvarint": "put_uvarint32",
}


@dataclass
class CEntity:
    suffix: str
    name: str
    version: int
    nfields: int
    decode_lines: list[str] = field(default_factory=list)
    column_struct: list[str] = field(default_factory=list)
    column_lines: list[str] = field(default_factory=list)
    free_lines: list[str] = field(default_factory=list)
    export_lines: list[str] = field(default_factory=list)
    int_columns: list[str] = field(default_factory=list)  # top-level integer fields, for addends
    encode_lines: list[str] = field(default_factory=list)
    put_signature: str = ""
    put_lines: list[str] = field(default_factory=list)
    project_lines: list[str] = field(default_factory=list)
    check_lines: list[str] = field(default_factory=list)  # plain ones: decode without building anything
    kinds: str = ""  # per field, what a projection finds there (_kinds)
    plain: bool = True  # columns, projections and an encoder too (EntityVersion.compiled_plain)
    writer: bool = False  # not plain, but a put_<suffix> writer for C callers (_writable)
    options: bool = False  # the decoder takes verify_crc, limit, contents


def c_entities(schemas: SchemaSet) -> list[CEntity]:
    """Supported entity versions, children before parents (C needs declarations first)."""
    ordered: list[EntityVersion] = []
    visiting: set[tuple[str, int]] = set()

    def visit(ev: EntityVersion) -> None:
        key = (ev.name, ev.version)
        if key in visiting or any(o.name == ev.name and o.version == ev.version for o in ordered):
            return  # a cycle (a message set inside a compressed message) is declared ahead of time
        visiting.add(key)
        for ref in ev.refs:
            visit(ev.child(ref))
        ordered.append(ev)

    for ev in resolve_all(schemas):
        if ev.compiled:
            visit(ev)
    return [c_entity(ev) for ev in ordered]


LEGACY_ENTITIES = ("legacy_log_entry", "legacy_message")


def legacy_facts(schemas: SchemaSet) -> list[tuple[str, int]]:
    """The layout facts (field offsets, bit masks, overheads) of the v0/v1 entities, for the template's
    message-set walker, which reads raw bytes instead of building the generic decoders' tuples."""
    return [fact for ev in resolve_all(schemas) if ev.name in LEGACY_ENTITIES for fact in constants(ev)]


BATCH_HEADER_ENTITIES = ("record_batch",)


def batch_header_facts(schemas: SchemaSet) -> list[tuple[str, int]]:
    """The layout facts of the v2 batch header (field offsets, attribute bits, overhead), for the
    hand-written header parser (csrc/batch_header.c) that walks a segment's batches in C."""
    return [fact for ev in resolve_all(schemas) if ev.name in BATCH_HEADER_ENTITIES for fact in constants(ev)]


def c_entity(ev: EntityVersion) -> CEntity:
    ce = CEntity(ev.suffix, ev.name, ev.version, len(ev.fields), plain=ev.compiled_plain, options=ev.needs_options)
    ce.writer = not ce.plain and _writable(ev)
    ce.decode_lines = _decode_fields(ev, _TupleSink(ev))
    ce.project_lines = _decode_fields(ev, _ProjectSink(ev))
    ce.kinds = _kinds(ev)
    if ce.plain:
        ce.column_lines = _decode_fields(ev, _ColumnSink(ev))
        ce.check_lines = _decode_fields(ev, _CheckSink(ev))
        ce.column_struct, ce.free_lines, ce.export_lines = _column_parts(ev)
        ce.int_columns = [f.name for f in ev.fields if isinstance(f.type, IntType)]
        ce.encode_lines = _encode_body(ev)
    if ce.plain or ce.writer:
        ce.put_signature = _put_signature(ev)
        ce.put_lines = _put_body(ev)
    return ce


def _writable(ev: EntityVersion) -> bool:
    """A flat entity the kernel can write field by field though it is not plain: integers, constants,
    raw bit groups, bytes (a compressed one taken as stored) and CRC-32s over the fields after them
    (the v0/v1 message). Lengths mixed with CRCs are left out: patching a varint length moves bytes a
    CRC covered."""
    kinds = {f.derived_kind for f in ev.fields if f.field.derived}
    if not ev.compiled or kinds - {"crc"}:
        return False
    for f in ev.fields:
        d = f.field.derived
        if d and d.algorithm != "crc32":
            return False
        if not isinstance(f.type, (IntType, BitsType, BytesType)):
            return False
    return True


_ERRORS = {"corrupt": "E_Corrupt", "compression": "E_Compression", "magic": "E_Magic"}


# ---------------------------------------------------------------------------- errors


def _raise(w: Code, cond: str, error: str, at: str, path: str, fmt: str, *args: str) -> None:
    """``if (cond)``: raise ``error`` at byte ``at`` with a printf-style message, then fail."""
    w(f"if ({cond}) {{")
    with w.indented():
        call = f'raise_at({error}, {at}, "{path}", "{fmt}"'
        one = f"{call}, {', '.join(args)});" if args else f"{call});"
        if len(one) + 4 * w.depth <= 120:
            w(one)
        elif len(call) + 1 + 4 * w.depth <= 120:  # the values on a line of their own
            w(f"{call},")
            w(" " * len("raise_at(") + f"{', '.join(args)});")
        else:  # the message too, in two adjacent literals
            cut = fmt.rfind(" ", 0, len(fmt) // 2 + 10) + 1
            indent = " " * len("raise_at(")
            w(f'raise_at({error}, {at}, "{path}",')
            w(f'{indent}"{fmt[:cut]}"')
            w(f'{indent}"{fmt[cut:]}"' + (f", {', '.join(args)});" if args else ");"))
        w("goto fail;")
    w("}")


def _read_int(w: Code, t: IntType, target: str, path: str, checked: bool = False) -> None:
    """Set C int64 ``target`` from the integer at p (bounded by buflen, as in Python)."""
    if t.fixed:
        if not checked:
            w(f'if (p + {t.width} > buflen) {{ truncated(p, "{path}"); goto fail; }}')
        w(f"{target} = {_LOAD[t.name]};")
        w(f"p += {t.width};")
        return
    raw = f"{target}_raw"
    if t.name == "varlong":
        w(f"uint64_t {raw};")
        w(f'if (read_uvarint64(buf, &p, buflen, &{raw}, "{path}") < 0) goto fail;')
        w(f"{target} = zigzag64({raw});")
    else:
        w(f"uint32_t {raw};")
        w(f'if (read_uvarint32(buf, &p, buflen, &{raw}, "{path}") < 0) goto fail;')
        w(f"{target} = {'zigzag32(' + raw + ')' if t.zigzag else raw};")


_K = TypeVar("_K", IntType, BytesType)


def _type_of(f: ResolvedField, kind: type[_K]) -> _K:
    """f's type where the caller already knows its kind: a sink's ``integer`` or ``data``, a const or
    derived field (an integer: the loader checks)."""
    assert isinstance(f.type, kind), f.name
    return f.type


def _entity_array(t: Type) -> tuple[IntType, str]:
    """A compiled array's count prefix and element entity: the kernel takes arrays of structs with a
    count prefix only (see EntityVersion.compiled)."""
    assert isinstance(t, ArrayType) and t.prefix is not None and isinstance(t.element, EntityRef), t
    return t.prefix, t.element.name


def _contents_entity(f: ResolvedField) -> str:
    """The entity a compiled compressed field holds: its decompressed bytes are a greedy array of it
    (see EntityVersion.compiled)."""
    contents = f.field.compressed.contents if f.field.compressed else None
    assert isinstance(contents, ArrayType) and isinstance(contents.element, EntityRef), f.name
    return contents.element.name


def _atomic(ev: EntityVersion) -> bool:
    """Whether an entity decodes to a tuple of ints, bytes, str and None only (no dict, list, tuple or
    decompressed contents): the garbage collector need not follow it, so its decoder hands it out untracked
    (as CPython's next collection would make it) and arrays of it skip the per-item check."""
    return all(
        isinstance(f.type, IntType) or (isinstance(f.type, BytesType) and not f.field.compressed) for f in ev.fields
    )


def _py_int(t: IntType, expr: str) -> str:
    return f"PyLong_FromLongLong({expr})" if t.name != "uint32" else f"PyLong_FromUnsignedLong((unsigned long){expr})"


# ---------------------------------------------------------------------------- decoding: one switch, two sinks


class _TupleSink:
    """Decoded values become one Python tuple in FIELDS order."""

    def __init__(self, ev: EntityVersion):
        self.ev = ev

    def store(self, i: int, expr: str) -> str:
        """The statement putting a new reference in field i's place."""
        return f"PyTuple_SET_ITEM(out, {i}, {expr});"

    def slot(self, i: int) -> str:
        """The object in field i's place (borrowed)."""
        return f"PyTuple_GET_ITEM(out, {i})"

    def begin(self, w: Code) -> None:
        w(f"PyObject *out = PyTuple_New({len(self.ev.fields)});")
        w("if (!out) return NULL;")

    def integer(self, w: Code, i: int, f: ResolvedField, value: str) -> None:
        w(f"PyObject *o = {_py_int(_type_of(f, IntType), value)};")
        w("if (!o) goto fail;")
        w(self.store(i, "o"))

    def bytes_begin(self, w: Code) -> None:
        w("PyObject *o;")

    def null(self, w: Code, f: ResolvedField) -> None:
        w("o = Py_None; Py_INCREF(o);")

    def data(self, w: Code, f: ResolvedField, length: str) -> None:
        if _type_of(f, BytesType).text:
            # invalid UTF-8 decodes with replacement characters, as Kafka's Java client does
            w(f"o = text_of(buf + p, (Py_ssize_t){length});")
            w("if (!o) goto fail;")
        else:
            w(f"o = PyBytes_FromStringAndSize((const char *)buf + p, (Py_ssize_t){length});")
            w("if (!o) goto fail;")

    def bytes_end(self, w: Code, i: int) -> None:
        w(self.store(i, "o"))

    def bits(self, w: Code, i: int, f: ResolvedField, raw: str, groups: list[tuple[str, str]]) -> None:
        """A bit-group field becomes a dict {group: value} (enum names, flags as bools, ints)."""
        w("PyObject *o = PyDict_New();")
        w("if (!o) goto fail;")
        w(self.store(i, "o"))
        for name, expr in groups:  # the keys and enum names repeat on every message: made once
            w(f"static PyObject *key_{name};")
            declare = f"PyObject *value_{name} = {expr};"
            if len("    " * w.depth + declare) <= 120:
                w(declare)
            else:  # a long enum lookup: its expression on a line of its own
                w(f"PyObject *value_{name} =")
                with w.indented():
                    w(f"{expr};")
            w(f'if (put_keyed(o, &key_{name}, "{name}", value_{name}) < 0) goto fail;')

    def entity(self, w: Code, i: int, f: ResolvedField, child: EntityVersion) -> None:
        w(f"PyObject *o = dec_{child.suffix}(buf, buflen, &p, end, opts);")
        w(f'if (!o) {{ scope_error("{f.name}"); goto fail; }}')
        w(self.store(i, "o"))

    def array(self, w: Code, i: int, f: ResolvedField, child: EntityVersion, count: str) -> None:
        w(f"PyObject *o = PyList_New((Py_ssize_t){count});")
        w("if (!o) goto fail;")
        w(self.store(i, "o"))
        w(f"for (Py_ssize_t k = 0; k < (Py_ssize_t){count}; k++) {{")
        w(f'    if (count_outruns(p, end, k, (Py_ssize_t){count})) {{ scope_error("{f.name}"); goto fail; }}')
        w(f"    PyObject *item = dec_{child.suffix}(buf, buflen, &p, end, opts);")
        w(f'    if (!item) {{ scope_error("{f.name}"); goto fail; }}')
        w("    PyList_SET_ITEM(o, k, item);")
        w("}")

    def contents(self, w: Code, i: int, f: ResolvedField, ev: EntityVersion) -> None:
        """A compressed value (bytes at tuple slot i, the codec's name in ``codec``) becomes the list of
        entities its decompressed stream holds, as the Python decoders do."""
        child = ev.child(_contents_entity(f))
        w(f"PyObject *stored = {self.slot(i)};")
        _raise(
            w,
            "stored == Py_None",
            "E_Corrupt",
            "p",
            f.name,
            "compressed (%s) wrapper has a null value",
            "codec",
        )
        w("Py_ssize_t start_value = p - PyBytes_GET_SIZE(stored);")
        _raise(
            w,
            "opts->contents == CONTENTS_INSIDE",
            "E_Corrupt",
            "start_value",
            f.name,
            f"a compressed (%s) {f.name} inside a compressed stream: only one level of compression is allowed",
            "codec",
        )
        w(
            f'PyObject *items = decode_compressed(stored, codec, {ev.version}, start_value, "{f.name}", opts, '
            f"dec_{child.suffix});"
        )
        w("if (!items) goto fail;")
        w(self.store(i, "items"))
        w("Py_DECREF(stored);")

    def end(self, w: Code) -> None:
        if _atomic(self.ev):
            w("PyObject_GC_UnTrack(out);  /* ints, bytes, str and None: it can close no cycle */")
        w("*pos = p;")
        w("return out;")
        w.depth = 0
        w("fail:")
        w("    Py_DECREF(out);")
        w("    return NULL;")


class _ProjectSink(_TupleSink):
    """Decoded values stay in C for a projection (:func:`apply_plan` in the template builds the caller's
    tuple from them): integers unboxed in ``num[i]``, other values in ``obj[i]`` (the caller releases
    them), arrays as tuples. No tuple of fields, no int objects the plan does not ask for."""

    def store(self, i: int, expr: str) -> str:
        return f"obj[{i}] = {expr};"

    def slot(self, i: int) -> str:
        return f"obj[{i}]"

    def begin(self, w: Code) -> None:
        pass

    def integer(self, w: Code, i: int, f: ResolvedField, value: str) -> None:
        w(f"num[{i}] = (int64_t){value};")

    def array(self, w: Code, i: int, f: ResolvedField, child: EntityVersion, count: str) -> None:
        w(f"PyObject *o = PyTuple_New((Py_ssize_t){count});")
        w("if (!o) goto fail;")
        w(self.store(i, "o"))
        w(f"for (Py_ssize_t k = 0; k < (Py_ssize_t){count}; k++) {{")
        w(f'    if (count_outruns(p, end, k, (Py_ssize_t){count})) {{ scope_error("{f.name}"); goto fail; }}')
        w(f"    PyObject *item = dec_{child.suffix}(buf, buflen, &p, end, opts);")
        w(f'    if (!item) {{ scope_error("{f.name}"); goto fail; }}')
        w("    PyTuple_SET_ITEM(o, k, item);")
        if _atomic(child):  # the items come untracked (_TupleSink.end): so can the tuple of them
            w("}")
            w("PyObject_GC_UnTrack(o);")
            return
        w("    untrack_if_atomic(item, NULL);")
        w("}")
        w("untrack_if_atomic(o, NULL);")

    def end(self, w: Code) -> None:
        w("*pos = p;")
        w("return 0;")
        w.depth = 0
        w("fail:")
        w("    return -1;")


def _each_element(w: Code, f: ResolvedField, count: str, body: Callable[[], None]) -> None:
    """A loop over an array's ``count`` elements, ``body`` inside it, that stops naming the field when the
    count outruns the bytes left (the kernel's ``count_outruns``)."""
    w(f"for (int64_t k = 0; k < {count}; k++) {{")
    with w.indented():
        outruns = f"count_outruns(p, end, (Py_ssize_t)k, (Py_ssize_t){count})"
        w(f'if ({outruns}) {{ scope_error("{f.name}"); goto fail; }}')
        body()
    w("}")


class _CheckSink(_ProjectSink):
    """Every field decoded and checked as the projection does it, nothing built: integers still land in
    ``num[i]`` (a plan's sums are checked from them), bytes and entities are only walked. What a lazy
    sequence (``csrc/lazy.c``) runs once per entity before it builds any item."""

    def integer(self, w: Code, i: int, f: ResolvedField, value: str) -> None:
        w(f"num[{i}] = (int64_t){value};")

    def bytes_begin(self, w: Code) -> None:
        pass

    def null(self, w: Code, f: ResolvedField) -> None:
        pass

    def data(self, w: Code, f: ResolvedField, length: str) -> None:
        pass  # text decodes with replacement characters: it cannot fail

    def bytes_end(self, w: Code, i: int) -> None:
        pass

    def bits(self, w: Code, i: int, f: ResolvedField, raw: str, groups: list[tuple[str, str]]) -> None:
        raise NotImplementedError("bit groups are not checked alone (EntityVersion.compiled_plain)")

    def contents(self, w: Code, i: int, f: ResolvedField, ev: EntityVersion) -> None:
        raise NotImplementedError("compressed values are not checked alone (EntityVersion.compiled_plain)")

    def entity(self, w: Code, i: int, f: ResolvedField, child: EntityVersion) -> None:
        w(f"int64_t sub[{len(child.fields)}];")
        w(f"if (chk_{child.suffix}(buf, buflen, &p, end, opts, NULL, sub) < 0) {{")
        w(f'    scope_error("{f.name}");')
        w("    goto fail;")
        w("}")

    def array(self, w: Code, i: int, f: ResolvedField, child: EntityVersion, count: str) -> None:
        _each_element(w, f, count, lambda: self.entity(w, i, f, child))


def _kinds(ev: EntityVersion) -> str:
    """What a projection finds in each field: i (an int64), u (a uint32), l (an array, as a tuple),
    o (any other object)."""
    out = ""
    for f in ev.fields:
        t = f.type
        out += "u" if isinstance(t, IntType) and t.name == "uint32" else "i" if isinstance(t, IntType) else "o"
        if isinstance(t, ArrayType):
            out = out[:-1] + "l"
    return out


class _ColumnSink:
    """Decoded values are appended to Arrow-layout column builders (struct cols_<suffix> *c)."""

    def __init__(self, ev: EntityVersion):
        self.ev = ev

    def begin(self, w: Code) -> None:
        pass

    def integer(self, w: Code, i: int, f: ResolvedField, value: str) -> None:
        w(f"if (buf_put_i64(&c->{f.name}, (int64_t){value}) < 0) goto fail;")

    def bits(self, w: Code, i: int, f: ResolvedField, raw: str, groups: list[tuple[str, str]]) -> None:
        raise NotImplementedError("bit groups have no column form (EntityVersion.compiled_plain)")

    def contents(self, w: Code, i: int, f: ResolvedField, ev: EntityVersion) -> None:
        raise NotImplementedError("compressed values have no column form (EntityVersion.compiled_plain)")

    def bytes_begin(self, w: Code) -> None:
        pass

    def null(self, w: Code, f: ResolvedField) -> None:
        w(f"if (bincol_null(&c->{f.name}) < 0) goto fail;")

    def data(self, w: Code, f: ResolvedField, length: str) -> None:
        # invalid UTF-8 goes in with replacement characters, as Kafka's Java client reads it
        if _type_of(f, BytesType).text:
            w(f"if (!utf8_valid(buf + p, {length})) {{")
            w(f"    if (bincol_put_replaced(&c->{f.name}, buf + p, (Py_ssize_t){length}) < 0) goto fail;")
            w("} else {")
            w(f"    if (bincol_put(&c->{f.name}, buf + p, (Py_ssize_t){length}) < 0) goto fail;")
            w("}")
        else:
            w(f"if (bincol_put(&c->{f.name}, buf + p, (Py_ssize_t){length}) < 0) goto fail;")

    def bytes_end(self, w: Code, i: int) -> None:
        pass

    def entity(self, w: Code, i: int, f: ResolvedField, child: EntityVersion) -> None:
        w(f"if (col_{child.suffix}(buf, buflen, &p, end, &c->{f.name}) < 0) {{")
        w(f'    scope_error("{f.name}");')
        w("    goto fail;")
        w("}")

    def array(self, w: Code, i: int, f: ResolvedField, child: EntityVersion, count: str) -> None:
        _each_element(w, f, count, lambda: self.entity(w, i, f, child))
        w(f"if (buf_put_i32(&c->{f.name}_offsets, (int32_t)c->{f.name}.n) < 0) goto fail;")

    def end(self, w: Code) -> None:
        w("c->n++;")
        w("*pos = p;")
        w("return 0;")
        w.depth = 0
        w("fail:")
        w("    return -1;")


def _decode_fields(ev: EntityVersion, sink) -> list[str]:
    """The body of one decoder: every field in order, each value handed to ``sink``."""
    w = Code(depth=1)
    w("Py_ssize_t p = *pos;")
    sink.begin(w)
    for f in ev.fields:
        if f.field.derived:
            w(f"int64_t v_{f.name}; Py_ssize_t start_{f.name};")
        if f.derived_kind == "crc":
            w(f"Py_ssize_t at_{f.name};")
        if isinstance(f.type, BitsType):
            for b in f.type.bits:
                if b.kind == "enum":
                    w(f"const char *name_{f.name}_{b.name} = NULL;")
    starts = ev.length_starts()
    for i, f in enumerate(ev.fields):
        for owner in ev.covered_starts.get(f.name, ()):
            if ev.field(owner).derived_kind == "crc":
                w(f"start_{owner} = p;")
        for owner in starts.get(f.name, ()):
            _length_checks(w, ev, owner)
        t = f.type
        w(f"/* {f.name} */")
        w("{")
        with w.indented():
            if isinstance(t, (IntType, BitsType)):
                base = t.base if isinstance(t, BitsType) else t
                value = f"v_{f.name}" if f.field.derived else "value"
                if not f.field.derived:
                    w(f"int64_t {value};")
                if i in ev.fixed_runs:
                    # the Python backend reads a run of fixed fields with one struct unpack, so a
                    # short buffer fails at the run's start; checking the run here fails at the same byte
                    size = ev.fixed_runs[i].size
                    w(f'if (p + {size} > buflen) {{ truncated(p, "{f.name}"); goto fail; }}')
                w("Py_ssize_t at = p;")
                w("(void)at;")
                if f.derived_kind == "crc":
                    w(f"at_{f.name} = p;")
                _read_int(w, base, value, f.name, checked=base.fixed)
                if f.field.const is not None:
                    expected = ev.version if f.field.const == "version" else f.field.const
                    _raise(
                        w,
                        f"{value} != {expected}",
                        _ERRORS[f.field.error],
                        "at",
                        f.name,
                        f"{f.name} is %lld, expected {expected}",
                        f"(long long){value}",
                    )
                if isinstance(t, BitsType):
                    sink.bits(w, i, f, value, _bit_groups(w, ev, f, t, value))
                else:
                    sink.integer(w, i, f, value)
            elif isinstance(t, BytesType):
                w("int64_t length;")
                assert t.prefix is not None, f.name  # bytes to the end are not compiled (EntityVersion.compiled)
                _read_int(w, t.prefix, "length", f.name)
                sink.bytes_begin(w)
                w("if (length < 0) {")
                with w.indented():
                    if t.nullable:
                        sink.null(w, f)
                    else:
                        w(
                            f'raise_at(E_BadLength, p, "{f.name}", "length %lld is negative but {f.name} cannot '
                            f'be null", (long long)length);'
                        )
                        w("goto fail;")
                w("} else {")
                with w.indented():
                    _raise(
                        w,
                        "length > end - p",
                        "E_Truncated",
                        "p",
                        f.name,
                        f"{f.name}: needs %lld bytes but only %lld remain",
                        "(long long)length",
                        "(long long)(end - p)",
                    )
                    sink.data(w, f, "length")
                    w("p += length;")
                w("}")
                sink.bytes_end(w, i)
                if f.field.compressed:
                    codec = "name_" + "_".join(f.field.compressed.codec_path)
                    w(f"const char *codec = {codec};")
                    w('if (strcmp(codec, "none") != 0 && opts->contents != CONTENTS_NO) {')
                    with w.indented():
                        sink.contents(w, i, f, ev)
                    w("}")
            elif isinstance(t, EntityRef):
                sink.entity(w, i, f, ev.child(t.name))
            else:
                prefix, element = _entity_array(t)
                w("int64_t count;")
                _read_int(w, prefix, "count", f.name)
                # a count inside a record that is negative is an invalid record (Kafka's DefaultRecord
                # raises InvalidRecordException for a negative header count), not a record count
                _raise(w, "count < 0", "E_Corrupt", "p", f.name, f"{f.name}: negative count %lld", "(long long)count")
                _raise(
                    w,
                    "count > end - p",
                    "E_RecordCount",
                    "p",
                    f.name,
                    f"{f.name}: %lld elements cannot fit in the %lld bytes left",
                    "(long long)count",
                    "(long long)(end - p)",
                )
                sink.array(w, i, f, ev.child(element), "count")
        w("}")
    for f in ev.fields:
        if f.derived_kind == "crc":
            w(f"if (opts->verify_crc && crc_differs(buf + start_{f.name}, p - start_{f.name}, v_{f.name}, at_{f.name},")
            w(f'                                    "{f.name}"))')
            w("    goto fail;")
    for f in ev.fields:
        if f.derived_kind == "length":
            _raise(
                w,
                "p != end",
                "E_BadLength",
                f"start_{f.name}",
                f.name,
                f"{f.name} says %lld bytes but the fields it covers take %lld",
                f"(long long)v_{f.name}",
                f"(long long)(p - start_{f.name})",
            )
    sink.end(w)
    return w.lines


def _bit_groups(w: Code, ev: EntityVersion, f: ResolvedField, t: BitsType, value: str) -> list[tuple[str, str]]:
    """Split a bit-group field read into ``value``: enum groups are named (an unknown value of a closed
    enum fails at the field, as in Python); returns (group, C expression of a new Python object)."""
    width = (t.base.width or 8) * 8
    w(f"uint64_t bits = (uint64_t){value} & {(1 << width) - 1:#x}ULL;")
    groups = []
    for b in sorted(t.bits, key=lambda b: b.low):
        expr = f"(int64_t)((bits >> {b.low}) & {(1 << b.width) - 1:#x})"
        if b.kind == "flag":
            groups.append((b.name, f"PyBool_FromLong((long){expr})"))
        elif b.enum:  # kind "enum"
            e, target = ev.enum(b.enum), f"name_{f.name}_{b.name}"
            values = ev.enum_values(b.enum)
            w(f"int64_t {b.name} = {expr};")
            w(f"static PyObject *names_{b.name}[{len(values)}];")
            w(f"int index_{b.name} = 0;")
            w(f"switch ({b.name}) {{")
            for k, (name, number) in enumerate(values.items()):
                w(f'    case {number}: {target} = "{name}"; index_{b.name} = {k}; break;')
            w(f"    default: {target} = NULL;")
            w("}")
            named = f"interned_str(&names_{b.name}[index_{b.name}], {target})"
            if e.open:
                groups.append((b.name, f"{target} ? {named} : PyLong_FromLongLong({b.name})"))
                continue
            allowed = ", ".join(f"{v}={k}" for k, v in values.items())
            _raise(
                w,
                f"!{target}",
                _ERRORS[e.error],
                "at",
                f"{f.name}.{b.name}",
                f"unknown or disallowed {b.enum} %lld (allowed here: {allowed})",
                f"(long long){b.name}",
            )
            groups.append((b.name, named))
        else:
            groups.append((b.name, f"PyLong_FromLongLong({expr})"))
    return groups


def _length_checks(w: Code, ev: EntityVersion, owner: str) -> None:
    minimum = ev.min_covered(owner)
    w(f"start_{owner} = p;")
    _raise(
        w,
        f"v_{owner} < {minimum}",
        "E_BadLength",
        "p",
        owner,
        f"{owner} is %lld, less than the {minimum} bytes the fields it covers need at least",
        f"(long long)v_{owner}",
    )
    _raise(
        w,
        f"v_{owner} > end - p",
        "E_Truncated",
        "p",
        owner,
        f"{owner} says %lld bytes but only %lld remain",
        f"(long long)v_{owner}",
        "(long long)(end - p)",
    )
    w(f"end = p + v_{owner};")


def _column_parts(ev: EntityVersion) -> tuple[list[str], list[str], list[str]]:
    """The column builder struct's members, the lines freeing them and the lines exporting them."""
    struct, free, export = [], [], []
    for f in ev.fields:
        t = f.type
        if isinstance(t, IntType):
            struct.append(f"Buf {f.name};")
            free.append(f"buf_free(&c->{f.name});")
            export.append(f'if (put_ints(d, "{f.name}", &c->{f.name}) < 0) return -1;')
        elif isinstance(t, BytesType):
            struct.append(f"BinCol {f.name};")
            free.append(f"bincol_free(&c->{f.name});")
            export.append(f'if (put_bin(d, "{f.name}", &c->{f.name}, {int(t.text)}) < 0) return -1;')
        elif isinstance(t, EntityRef):
            child = ev.child(t.name)
            struct.append(f"cols_{child.suffix} {f.name};")
            free.append(f"free_cols_{child.suffix}(&c->{f.name});")
            export.append(f'if (put_struct(d, "{f.name}", (void *)&c->{f.name}, export_cols_{child.suffix}) < 0)')
            export.append("    return -1;")
        else:
            child = ev.child(_entity_array(t)[1])
            struct.append(f"Buf {f.name}_offsets; cols_{child.suffix} {f.name};")
            free.append(f"buf_free(&c->{f.name}_offsets); free_cols_{child.suffix}(&c->{f.name});")
            export.append(
                f'if (put_list(d, "{f.name}", &c->{f.name}_offsets, (void *)&c->{f.name}, '
                f"export_cols_{child.suffix}) < 0)"
            )
            export.append("    return -1;")
    return struct, free, export


# ---------------------------------------------------------------------------- encoding


def _put_int(w: Code, t: IntType, expr: str) -> None:
    w(f"if ({_PUT[t.name]}(out, {expr}) < 0) return -1;")


def _encode_error(w: Code, message: str) -> None:
    w(f'PyErr_SetString(E_Encode, "{message}");')
    w("return -1;")


def _int_bounds(t: IntType) -> tuple[str, str]:
    """C expressions of the range: stdint's names for the signed widths (INT64_MIN has no literal)."""
    names = {-(1 << (b - 1)): f"INT{b}_MIN" for b in (8, 16, 32, 64)}
    names.update({(1 << (b - 1)) - 1: f"INT{b}_MAX" for b in (8, 16, 32, 64)})
    return names.get(t.min, f"{t.min}LL"), names.get(t.max, f"{t.max}LL")


def _wrapped(head: str, items: list[str], tail: str, indent: str = "", width: int = 116) -> list[str]:
    """``head + items joined by commas + tail``, broken after commas to fit ``width``."""
    lines, line = [], indent + head
    for k, item in enumerate(items):
        piece = item + (", " if k < len(items) - 1 else tail)
        if len(line) + len(piece.rstrip()) > width and line.strip():
            lines.append(line.rstrip())
            line = indent + "    "
        line += piece
    lines.append(line)
    return lines


def _put_params(ev: EntityVersion) -> list[ResolvedField]:
    """The fields ``put_<suffix>`` takes: all but the derived ones (lengths, counts, CRCs) and constants."""
    return [f for f in ev.fields if not f.field.derived and f.field.const is None]


def _put_params_c(ev: EntityVersion) -> list[str]:
    """A long long per integer, (data, length) per byte string (data NULL: null), PyObject * for the rest."""
    params = ["Buf *out"]
    for f in _put_params(ev):
        if isinstance(f.type, (IntType, BitsType)):  # a bit group's whole integer, as it is written
            params.append(f"long long f_{f.name}")
        elif isinstance(f.type, BytesType):
            params.append(f"const char *f_{f.name}, Py_ssize_t f_{f.name}_len")
        else:
            params.append(f"PyObject *f_{f.name}")
    return params


def _put_signature(ev: EntityVersion) -> str:
    return "\n".join(_wrapped(f"static int put_{ev.suffix}(", _put_params_c(ev), ") {"))


def _put_body(ev: EntityVersion, span: bool = False) -> list[str]:
    """``put_<suffix>(out, field...)``: check the integers' ranges, then append the bytes of one
    value to ``out``; derived lengths are computed. C callers with field values in hand use it directly.
    With ``span``, the body of ``span_put_<suffix>``: byte strings are ``Span``s and arrays their count
    and elements already encoded (see the span writers below)."""
    w = Code(depth=1)
    for f in _put_params(ev):
        base = f.type.base if isinstance(f.type, BitsType) else f.type
        if isinstance(base, IntType) and (base.min, base.max) != (-(1 << 63), (1 << 63) - 1):
            lo, hi = _int_bounds(base)
            w(f'if (int_in_range(f_{f.name}, {lo}, {hi}, "{f.name}") < 0) return -1;')
    lengths: list[tuple[str, IntType]] = []
    crcs: list[str] = []
    starts = ev.length_starts()
    for f in ev.fields:
        for owner in starts.get(f.name, ()):
            lt = _type_of(ev.field(owner), IntType)
            w(f"Py_ssize_t body_{owner} = out->len;  /* {owner} goes here, once its bytes are known */")
            w(f"if (buf_reserve(out, {lt.max_width}) < 0) return -1;")
            w(f"out->len += {lt.max_width};")
            lengths.append((owner, lt))
        for owner in ev.covered_starts.get(f.name, ()):
            if ev.field(owner).derived_kind == "crc":
                w(f"Py_ssize_t from_{owner} = out->len;  /* {owner} covers the bytes from here to the end */")
                crcs.append(owner)
        t = f.type
        if f.derived_kind == "crc":
            w(f"Py_ssize_t at_{f.name} = out->len;  /* {f.name} goes here, once the bytes it covers are written */")
            w("if (buf_reserve(out, 4) < 0) return -1;")
            w("out->len += 4;")
            continue
        if f.field.derived:
            continue
        x = f"f_{f.name}"
        if f.field.const is not None:
            _put_int(w, _type_of(f, IntType), str(ev.version if f.field.const == "version" else f.field.const))
        elif isinstance(t, BitsType):
            _put_int(w, t.base, x)
        elif isinstance(t, IntType):
            _put_int(w, t, x)
        elif isinstance(t, BytesType):
            data, length = (f"{x}.p", f"{x}.n") if span else (x, f"{x}_len")
            assert t.prefix is not None, f.name  # bytes to the end are not compiled (EntityVersion.compiled)
            w(f"if ({data} == NULL) {{" if not span else f"if (!{data}) {{")
            with w.indented():
                if t.nullable:
                    w(f"if ({_PUT[t.prefix.name]}(out, -1) < 0) return -1;")
                else:
                    _encode_error(w, f"{f.name} cannot be null")
            w(f"}} else if ({_PUT[t.prefix.name]}(out, {length}) < 0 || buf_put(out, {data}, {length}) < 0) {{")
            w("    return -1;")
            w("}")
        elif span:
            if not isinstance(t, ArrayType):
                raise ValueError(f"{ev.suffix}.{f.name}: span writers take integers, byte strings and arrays only")
            assert t.prefix is not None, f.name  # the kernel's arrays have a count prefix (EntityVersion.compiled)
            w(f"if ({_PUT[t.prefix.name]}(out, n_{f.name}) < 0 || buf_put(out, {x}.p, {x}.n) < 0) return -1;")
        elif isinstance(t, EntityRef):
            w(f"if (enc_{ev.child(t.name).suffix}({x}, out) < 0) return -1;")
        else:
            prefix, element = _entity_array(t)
            child = ev.child(element)
            w(f"if (Py_TYPE({x}) == (PyTypeObject *)T_EncodedArray) {{  /* encoded already: count and bytes */")
            w(f"    if (put_encoded_array(out, {x}, {_PUT[prefix.name]}) < 0) return -1;")
            w(f"}} else if (!PyList_Check({x}) && !PyTuple_Check({x})) {{")
            with w.indented():
                _encode_error(w, f"{f.name} needs a list")
            w("} else {")
            with w.indented():
                _put_int(w, prefix, f"PySequence_Fast_GET_SIZE({x})")
                w(f"for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE({x}); k++)")
                w(f"    if (enc_{child.suffix}(PySequence_Fast_GET_ITEM({x}, k), out) < 0) return -1;")
            w("}")
    for owner in crcs:
        w(f"uint32_t crc_{owner} = crc32_of((const uint8_t *)out->data + from_{owner}, out->len - from_{owner});")
        w(f"for (int k = 0; k < 4; k++) out->data[at_{owner} + k] = (char)(crc_{owner} >> (24 - 8 * k));")
    for owner, lt in reversed(lengths):
        w(f"if (patch_length_{lt.name}(out, body_{owner}, {lt.max_width}) < 0) return -1;")
    w("return 0;")
    return w.lines


def _encode_body(ev: EntityVersion) -> list[str]:
    """``enc_<suffix>(fields, out)``: one value given as a tuple or list in FIELDS order,
    its integers converted (in field order), handed to ``put_<suffix>``."""
    w = Code(depth=1)
    n = len(ev.fields)
    w("if (!PyTuple_Check(v) && !PyList_Check(v)) {")
    with w.indented():
        _encode_error(w, f"{ev.name} v{ev.version} needs a tuple or list of {n} fields")
    w("}")
    w(f"if (PySequence_Fast_GET_SIZE(v) != {n}) {{")
    with w.indented():
        _encode_error(w, f"{ev.name} v{ev.version} needs {n} fields")
    w("}")
    args = ["out"]
    for f in _put_params(ev):
        i = ev.index(f.name)
        t = f.type
        if isinstance(t, IntType):
            lo, hi = _int_bounds(t)
            w(f'long long f_{f.name} = as_int(PySequence_Fast_GET_ITEM(v, {i}), {lo}, {hi}, "{f.name}");')
            w(f"if (f_{f.name} == -1 && PyErr_Occurred()) return -1;")
            args.append(f"f_{f.name}")
        elif isinstance(t, BytesType):
            w(f"PyObject *o_{f.name} = PySequence_Fast_GET_ITEM(v, {i});")
            w(f"const char *f_{f.name} = NULL;")
            w(f"Py_ssize_t f_{f.name}_len = 0;")
            _encode_bytes(w, f, t, f"o_{f.name}", f"f_{f.name}")
            args += [f"f_{f.name}", f"f_{f.name}_len"]
        else:
            w(f"PyObject *f_{f.name} = PySequence_Fast_GET_ITEM(v, {i});")
            args.append(f"f_{f.name}")
    for line in _wrapped(f"return put_{ev.suffix}(", args, ");"):
        w(line)
    return w.lines


def _encode_bytes(w: Code, f: ResolvedField, t: BytesType, x: str, target: str) -> None:
    """Point ``target`` and ``target_len`` at the bytes (UTF-8 for text) of ``x``; NULL for None."""
    if t.text:
        convert = f"!({target} = PyUnicode_AsUTF8AndSize({x}, &{target}_len))"
    else:
        convert = f"PyBytes_AsStringAndSize({x}, (char **)&{target}, &{target}_len) < 0"
    if t.nullable:
        w(f"if ({x} != Py_None && {convert}) {{")
    else:
        w(f"if ({x} == Py_None) {{")
        with w.indented():
            _encode_error(w, f"{f.name} cannot be null")
        w(f"}} else if ({convert}) {{")
    w("    PyErr_Clear();")
    with w.indented():
        _encode_error(w, f"{f.name} needs {'a str' if t.text else 'bytes'}")
    w("}")


# ---------------------------------------------------------------------------- span writers
#
# ``span_put_<e>_v<N>(out, field...)``: the bytes of ``put_<e>_v<N>`` for C callers whose values are
# slices of memory (Arrow column buffers, say), not Python objects: a byte string is a ``Span``
# (``p == NULL``: null), an array of entities its count and its elements already encoded back to back
# (by the element's own span writer). Integers are range-checked as ``put_`` does. Only the entity
# versions a C caller names in SPAN_WRITERS get one (csrc/columns.c).

#: The entity versions the kernel's column encoder (csrc/columns.c) writes.
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


def _span_params(ev: EntityVersion) -> list[str]:
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
    return SpanWriter(ev.suffix, _param_lines(_span_params(ev)), _put_body(ev, span=True))


def _param_lines(params: list[str]) -> str:
    """Parameters on their own lines after the opening parenthesis, each within 120 columns."""
    lines, line = [], ""
    for p in params:
        if line and len(line) + len(p) + 2 > 110:
            lines.append(line + ",")
            line = ""
        line = f"{line}, {p}" if line else p
    return "".join(f"\n    {text}" for text in [*lines, line])
