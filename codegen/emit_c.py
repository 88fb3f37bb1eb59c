"""The compiled backend: a C extension printed from the same IR.

It covers the entity versions whose fields are all integers (fixed or
varint), length-prefixed bytes and strings, nested entities and prefixed
arrays of them, and lengths that cover the rest of the entity: in Kafka's
formats that is the v2 record and its headers, where the time goes. Batch
headers, CRCs and codecs stay in Python (once per batch).

Per supported entity version it prints:
* ``decode_<e>_v<N>(buf, pos=0, end=None)`` and ``decode_<e>_v<N>_array(buf, pos, end, count)``:
  drop-in replacements for the fast Python decoders (same tuples, same errors);
* ``columns_<e>_v<N>(buf, pos, end, count)``: decode ``count`` entities straight
  into Arrow-layout column buffers (no Python object per entity).

Scalar reads are bounded by the buffer and byte strings by ``end``, exactly
as the Python backends do, so all three fail the same way on the same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .ir import ArrayType, BytesType, EntityRef, IntType
from .layout import EntityVersion, min_covered, resolve

_CTYPE = {"int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "uint32": "uint32_t"}
_LOAD = {"int8": "(int8_t)buf[p]", "int16": "(int16_t)load_be16(buf + p)", "int32": "(int32_t)load_be32(buf + p)",
         "int64": "(int64_t)load_be64(buf + p)", "uint32": "load_be32(buf + p)"}


def supported(ev: EntityVersion, _seen: frozenset = frozenset()) -> bool:
    key = (ev.name, ev.version)
    if key in _seen:
        return False
    for f in ev.fields:
        fld, t = f.field, f.type
        if fld.compressed or fld.enum or fld.const is not None:
            return False
        if fld.derived and fld.derived.kind != "length":
            return False
        if isinstance(t, IntType):
            if fld.derived and fld.derived.covers != ev.fields[ev.index(f.name) + 1].name:
                return False  # the encoder patches a length in front of the bytes it covers
            continue
        if isinstance(t, BytesType):
            continue
        if isinstance(t, EntityRef):
            if not supported(resolve(ev.schemas, ev.schemas.entities[t.name], ev.version), _seen | {key}):
                return False
            continue
        if isinstance(t, ArrayType) and t.prefix is not None and isinstance(t.element, EntityRef):
            child = resolve(ev.schemas, ev.schemas.entities[t.element.name], ev.version)
            if not supported(child, _seen | {key}):
                return False
            continue
        return False
    return True


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


class _W:
    def __init__(self, depth: int = 1):
        self.lines: list[str] = []
        self.depth = depth
        self.n = 0

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def tmp(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"


def _run_sizes(ev: EntityVersion) -> dict[str, int]:
    """Fields that start a run of fixed-width fields -> the run's size. The
    Python backend reads such a run with one struct unpack, so a short buffer
    fails at the run's start; checking the run here fails at the same byte."""
    from .emit_fast import _fixed_scalar, _is_length

    out: dict[str, int] = {}
    i = 0
    while i < len(ev.fields):
        if not _fixed_scalar(ev.fields[i]):
            i += 1
            continue
        j = i
        while j + 1 < len(ev.fields) and _fixed_scalar(ev.fields[j + 1]) and not _is_length(ev.fields[j]):
            j += 1
        out[ev.fields[i].name] = sum(f.size for f in ev.fields[i:j + 1])
        i = j + 1
    return out


def _check_run(w: _W, runs: dict[str, int], name: str) -> None:
    if name in runs:
        w(f"if (p + {runs[name]} > buflen) {{ truncated(p, \"{name}\"); goto fail; }}")


def _read_int(w: _W, t: IntType, target: str, path: str, checked: bool = False) -> None:
    """Set C int64 ``target`` from the integer at p (bounded by buflen, as in Python)."""
    if t.fixed:
        if not checked:
            w(f"if (p + {t.width} > buflen) {{ truncated(p, \"{path}\"); goto fail; }}")
        w(f"{target} = {_LOAD[t.name]};")
        w(f"p += {t.width};")
        return
    if t.name == "varlong":
        u = w.tmp("u")
        w(f"uint64_t {u};")
        w(f"if (read_uvarint64(buf, &p, buflen, &{u}, \"{path}\") < 0) goto fail;")
        w(f"{target} = zigzag64({u});")
    else:
        u = w.tmp("u")
        w(f"uint32_t {u};")
        w(f"if (read_uvarint32(buf, &p, buflen, &{u}, \"{path}\") < 0) goto fail;")
        w(f"{target} = {'zigzag32(' + u + ')' if t.zigzag else u};")


def _py_int(t: IntType, expr: str) -> str:
    return f"PyLong_FromLongLong({expr})" if t.name != "uint32" else f"PyLong_FromUnsignedLong((unsigned long){expr})"


def c_entity(ev: EntityVersion) -> CEntity:
    ce = CEntity(ev.suffix, ev.name, ev.version, len(ev.fields))
    _decode_body(ev, ce)
    _columns_body(ev, ce)
    _encode_body(ev, ce)
    return ce


_PUT = {"int8": "put_be8", "int16": "put_be16", "int32": "put_be32", "int64": "put_be64", "uint32": "put_be32",
        "varint": "put_varint32", "varlong": "put_varint64", "uvarint": "put_uvarint32"}


def _put_int(w: _W, t: IntType, expr: str) -> None:
    w(f"if ({_PUT[t.name]}(out, {expr}) < 0) return -1;")


def _encode_body(ev: EntityVersion, ce: CEntity) -> None:
    """``enc_<suffix>(fields, out)``: append the bytes of one value (a tuple or
    list in FIELDS order) to ``out``; derived lengths are computed."""
    w = _W()
    w(f"if (!PyTuple_Check(v) && !PyList_Check(v)) {{ PyErr_SetString(E_Encode, \"{ev.name} v{ev.version} "
      f"needs a tuple or list of {len(ev.fields)} fields\"); return -1; }}")
    w(f"if (PySequence_Fast_GET_SIZE(v) != {len(ev.fields)}) {{ PyErr_SetString(E_Encode, \"{ev.name} "
      f"v{ev.version} needs {len(ev.fields)} fields\"); return -1; }}")
    lengths: list[tuple[str, IntType]] = []
    starts = _starts(ev)
    for i, f in enumerate(ev.fields):
        for owner in starts.get(f.name, []):
            lt = ev.field(owner).type
            w(f"Py_ssize_t body_{owner} = out->len;  /* {owner} goes here, once its bytes are known */")
            w(f"if (buf_reserve(out, {lt.max_width}) < 0) return -1;")
            w(f"out->len += {lt.max_width};")
            lengths.append((owner, lt))
        t = f.type
        item = f"PySequence_Fast_GET_ITEM(v, {i})"
        if f.field.derived:
            continue
        w("{")
        w.depth += 1
        w(f"PyObject *x = {item};")
        if isinstance(t, IntType):
            lo = f"({t.min + 1}LL - 1)" if t.min == -(1 << 63) else f"{t.min}LL"  # INT64_MIN has no literal
            w(f"long long n = as_int(x, {lo}, {t.max}LL, \"{f.name}\");")
            w("if (n == -1 && PyErr_Occurred()) return -1;")
            _put_int(w, t, "n")
        elif isinstance(t, BytesType):
            w("if (x == Py_None) {")
            if t.nullable:
                w(f"    if ({_PUT[t.prefix.name]}(out, -1) < 0) return -1;")
            else:
                w(f"    PyErr_SetString(E_Encode, \"{f.name} cannot be null\"); return -1;")
            w("} else {")
            w("    const char *data; Py_ssize_t n;")
            if t.text:
                w(f"    if (!(data = PyUnicode_AsUTF8AndSize(x, &n))) {{ PyErr_Clear(); PyErr_SetString(E_Encode, "
                  f"\"{f.name} needs a str\"); return -1; }}")
            else:
                w(f"    if (PyBytes_AsStringAndSize(x, (char **)&data, &n) < 0) {{ PyErr_Clear(); "
                  f"PyErr_SetString(E_Encode, \"{f.name} needs bytes\"); return -1; }}")
            w(f"    if ({_PUT[t.prefix.name]}(out, n) < 0 || buf_put(out, data, n) < 0) return -1;")
            w("}")
        elif isinstance(t, EntityRef):
            child = resolve(ev.schemas, ev.schemas.entities[t.name], ev.version)
            w(f"if (enc_{child.suffix}(x, out) < 0) return -1;")
        else:
            child = resolve(ev.schemas, ev.schemas.entities[t.element.name], ev.version)
            w(f"if (!PyList_Check(x) && !PyTuple_Check(x)) {{ PyErr_SetString(E_Encode, \"{f.name} needs a list\"); "
              f"return -1; }}")
            _put_int(w, t.prefix, "PySequence_Fast_GET_SIZE(x)")
            w("for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(x); k++)")
            w(f"    if (enc_{child.suffix}(PySequence_Fast_GET_ITEM(x, k), out) < 0) return -1;")
        w.depth -= 1
        w("}")
    for owner, lt in reversed(lengths):
        w(f"if (patch_length_{lt.name}(out, body_{owner}, {lt.max_width}) < 0) return -1;")
    w("return 0;")
    ce.encode_lines = w.lines


def _starts(ev: EntityVersion) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in ev.fields:
        d = f.field.derived
        if d and d.kind == "length":
            out.setdefault(d.covers, []).append(f.name)
    return out


def _length_checks(w: _W, ev: EntityVersion, owner: str) -> None:
    minimum = min_covered(ev, owner)
    w(f"start_{owner} = p;")
    w(f"if (v_{owner} < {minimum}) {{ raise_at(E_BadLength, p, \"{owner}\", \"{owner} is %lld, less than the "
      f"{minimum} bytes the fields it covers need at least\", (long long)v_{owner}); goto fail; }}")
    w(f"if (v_{owner} > end - p) {{ raise_at(E_Truncated, p, \"{owner}\", \"{owner} says %lld bytes but only "
      f"%lld remain\", (long long)v_{owner}, (long long)(end - p)); goto fail; }}")
    w(f"end = p + v_{owner};")


def _decode_body(ev: EntityVersion, ce: CEntity) -> None:
    w = _W()
    starts = _starts(ev)
    runs = _run_sizes(ev)
    w("Py_ssize_t p = *pos;")
    w(f"PyObject *out = PyTuple_New({len(ev.fields)});")
    w("if (!out) return NULL;")
    for f in ev.fields:
        if f.field.derived:
            w(f"int64_t v_{f.name}; Py_ssize_t start_{f.name};")
    for i, f in enumerate(ev.fields):
        for owner in starts.get(f.name, []):
            _length_checks(w, ev, owner)
        t = f.type
        w(f"/* {f.name} */")
        w("{")
        w.depth += 1
        if isinstance(t, IntType):
            target = f"v_{f.name}" if f.field.derived else w.tmp("x")
            if not f.field.derived:
                w(f"int64_t {target};")
            _check_run(w, runs, f.name)
            _read_int(w, t, target, f.name, checked=t.fixed)
            w(f"PyObject *o = {_py_int(t, target)};")
            w("if (!o) goto fail;")
            w(f"PyTuple_SET_ITEM(out, {i}, o);")
        elif isinstance(t, BytesType):
            n = w.tmp("n")
            w(f"int64_t {n};")
            _read_int(w, t.prefix, n, f.name)
            w("PyObject *o;")
            w(f"if ({n} < 0) {{")
            if t.nullable:
                w("    o = Py_None; Py_INCREF(o);")
            else:
                w(f"    raise_at(E_BadLength, p, \"{f.name}\", \"length %lld is negative but {f.name} cannot be "
                  f"null\", (long long){n}); goto fail;")
            w("} else {")
            w(f"    if ({n} > end - p) {{ raise_at(E_Truncated, p, \"{f.name}\", \"{f.name}: needs %lld bytes but "
              f"only %lld remain\", (long long){n}, (long long)(end - p)); goto fail; }}")
            if t.text:
                w(f"    o = PyUnicode_DecodeUTF8((const char *)buf + p, (Py_ssize_t){n}, NULL);")
                w(f"    if (!o) {{ utf8_error(p, \"{f.name}\"); goto fail; }}")
            else:
                w(f"    o = PyBytes_FromStringAndSize((const char *)buf + p, (Py_ssize_t){n});")
                w("    if (!o) goto fail;")
            w(f"    p += {n};")
            w("}")
            w(f"PyTuple_SET_ITEM(out, {i}, o);")
        elif isinstance(t, EntityRef):
            child = resolve(ev.schemas, ev.schemas.entities[t.name], ev.version)
            w(f"PyObject *o = dec_{child.suffix}(buf, buflen, &p, end);")
            w(f"if (!o) {{ scope_error(\"{f.name}\"); goto fail; }}")
            w(f"PyTuple_SET_ITEM(out, {i}, o);")
        else:
            child = resolve(ev.schemas, ev.schemas.entities[t.element.name], ev.version)
            c = w.tmp("count")
            w(f"int64_t {c};")
            _read_int(w, t.prefix, c, f.name)
            w(f"if ({c} < 0) {{ raise_at(E_RecordCount, p, \"{f.name}\", \"{f.name}: negative count %lld\", "
              f"(long long){c}); goto fail; }}")
            w(f"if ({c} > end - p) {{ raise_at(E_RecordCount, p, \"{f.name}\", \"{f.name}: %lld elements cannot "
              f"fit in the %lld bytes left\", (long long){c}, (long long)(end - p)); goto fail; }}")
            w(f"PyObject *o = PyList_New((Py_ssize_t){c});")
            w("if (!o) goto fail;")
            w(f"PyTuple_SET_ITEM(out, {i}, o);")
            w(f"for (Py_ssize_t k = 0; k < (Py_ssize_t){c}; k++) {{")
            w(f"    PyObject *item = dec_{child.suffix}(buf, buflen, &p, end);")
            w(f"    if (!item) {{ scope_error(\"{f.name}\"); goto fail; }}")
            w("    PyList_SET_ITEM(o, k, item);")
            w("}")
        w.depth -= 1
        w("}")
    for f in ev.fields:
        d = f.field.derived
        if d and d.kind == "length":
            w(f"if (p != end) {{ raise_at(E_BadLength, start_{f.name}, \"{f.name}\", \"{f.name} says %lld bytes but "
              f"the fields it covers take %lld\", (long long)v_{f.name}, (long long)(p - start_{f.name})); goto fail; }}")
    w("*pos = p;")
    w("return out;")
    ce.decode_lines = w.lines
    w.lines = []
    w.depth = 0
    w("fail:")
    w("    Py_DECREF(out);")
    w("    return NULL;")
    ce.decode_lines += w.lines


def _columns_body(ev: EntityVersion, ce: CEntity) -> None:
    """Decode one entity into column builders (struct cols_<suffix>)."""
    w = _W()
    starts = _starts(ev)
    runs = _run_sizes(ev)
    struct = []
    free = []
    export = []
    for f in ev.fields:
        t = f.type
        if isinstance(t, IntType):
            struct.append(f"Buf {f.name};")
            free.append(f"buf_free(&c->{f.name});")
            export.append(f"if (put_ints(d, \"{f.name}\", &c->{f.name}) < 0) return -1;")
        elif isinstance(t, BytesType):
            struct.append(f"BinCol {f.name};")
            free.append(f"bincol_free(&c->{f.name});")
            export.append(f"if (put_bin(d, \"{f.name}\", &c->{f.name}, {int(t.text)}) < 0) return -1;")
        elif isinstance(t, EntityRef):
            child = resolve(ev.schemas, ev.schemas.entities[t.name], ev.version)
            struct.append(f"cols_{child.suffix} {f.name};")
            free.append(f"free_cols_{child.suffix}(&c->{f.name});")
            export.append(f"if (put_struct(d, \"{f.name}\", (void *)&c->{f.name}, export_cols_{child.suffix}) < 0) "
                          f"return -1;")
        else:
            child = resolve(ev.schemas, ev.schemas.entities[t.element.name], ev.version)
            struct.append(f"Buf {f.name}_offsets; cols_{child.suffix} {f.name};")
            free.append(f"buf_free(&c->{f.name}_offsets); free_cols_{child.suffix}(&c->{f.name});")
            export.append(f"if (put_list(d, \"{f.name}\", &c->{f.name}_offsets, (void *)&c->{f.name}, "
                          f"export_cols_{child.suffix}) < 0) return -1;")
    ce.column_struct, ce.free_lines, ce.export_lines = struct, free, export
    ce.int_columns = [f.name for f in ev.fields if isinstance(f.type, IntType)]
    w("Py_ssize_t p = *pos;")
    for f in ev.fields:
        if f.field.derived:
            w(f"int64_t v_{f.name}; Py_ssize_t start_{f.name};")
    for f in ev.fields:
        for owner in starts.get(f.name, []):
            _length_checks(w, ev, owner)
        t = f.type
        w("{")
        w.depth += 1
        if isinstance(t, IntType):
            target = f"v_{f.name}" if f.field.derived else w.tmp("x")
            if not f.field.derived:
                w(f"int64_t {target};")
            _check_run(w, runs, f.name)
            _read_int(w, t, target, f.name, checked=t.fixed)
            w(f"if (buf_put_i64(&c->{f.name}, (int64_t){target}) < 0) goto fail;")
        elif isinstance(t, BytesType):
            n = w.tmp("n")
            w(f"int64_t {n};")
            _read_int(w, t.prefix, n, f.name)
            w(f"if ({n} < 0) {{")
            if t.nullable:
                w(f"    if (bincol_null(&c->{f.name}) < 0) goto fail;")
            else:
                w(f"    raise_at(E_BadLength, p, \"{f.name}\", \"length %lld is negative but {f.name} cannot be "
                  f"null\", (long long){n}); goto fail;")
            w("} else {")
            w(f"    if ({n} > end - p) {{ raise_at(E_Truncated, p, \"{f.name}\", \"{f.name}: needs %lld bytes but "
              f"only %lld remain\", (long long){n}, (long long)(end - p)); goto fail; }}")
            if t.text:
                w(f"    if (!utf8_valid(buf + p, {n})) {{ utf8_error(p, \"{f.name}\"); goto fail; }}")
            w(f"    if (bincol_put(&c->{f.name}, buf + p, (Py_ssize_t){n}) < 0) goto fail;")
            w(f"    p += {n};")
            w("}")
        elif isinstance(t, EntityRef):
            child = resolve(ev.schemas, ev.schemas.entities[t.name], ev.version)
            w(f"if (col_{child.suffix}(buf, buflen, &p, end, &c->{f.name}) < 0) {{ scope_error(\"{f.name}\"); "
              f"goto fail; }}")
        else:
            child = resolve(ev.schemas, ev.schemas.entities[t.element.name], ev.version)
            cnt = w.tmp("count")
            w(f"int64_t {cnt};")
            _read_int(w, t.prefix, cnt, f.name)
            w(f"if ({cnt} < 0) {{ raise_at(E_RecordCount, p, \"{f.name}\", \"{f.name}: negative count %lld\", "
              f"(long long){cnt}); goto fail; }}")
            w(f"if ({cnt} > end - p) {{ raise_at(E_RecordCount, p, \"{f.name}\", \"{f.name}: %lld elements cannot "
              f"fit in the %lld bytes left\", (long long){cnt}, (long long)(end - p)); goto fail; }}")
            w(f"for (int64_t k = 0; k < {cnt}; k++) {{")
            w(f"    if (col_{child.suffix}(buf, buflen, &p, end, &c->{f.name}) < 0) {{ scope_error(\"{f.name}\"); "
              f"goto fail; }}")
            w("}")
            w(f"if (buf_put_i32(&c->{f.name}_offsets, (int32_t)c->{f.name}.n) < 0) goto fail;")
        w.depth -= 1
        w("}")
    for f in ev.fields:
        d = f.field.derived
        if d and d.kind == "length":
            w(f"if (p != end) {{ raise_at(E_BadLength, start_{f.name}, \"{f.name}\", \"{f.name} says %lld bytes but "
              f"the fields it covers take %lld\", (long long)v_{f.name}, (long long)(p - start_{f.name})); goto fail; }}")
    w("c->n++;")
    w("*pos = p;")
    w("return 0;")
    ce.column_lines = w.lines + ["fail:", "    return -1;"]


def c_entities(schemas) -> list[CEntity]:
    """Supported entity versions, children before parents (C needs declarations first)."""
    from .layout import resolve_all

    evs = [ev for ev in resolve_all(schemas) if supported(ev)]
    ordered: list[EntityVersion] = []

    def visit(ev: EntityVersion) -> None:
        if any(o.name == ev.name and o.version == ev.version for o in ordered):
            return
        for f in ev.fields:
            t = f.type.element if isinstance(f.type, ArrayType) else f.type
            if isinstance(t, EntityRef):
                visit(resolve(ev.schemas, ev.schemas.entities[t.name], ev.version))
        ordered.append(ev)

    for ev in evs:
        visit(ev)
    return [c_entity(ev) for ev in ordered]
