/* kcodec's compiled kernel: v2 records from Arrow columns.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- v2 records straight from Arrow columns (the Spark writer, kcodec.records.arrow_encode)
 *
 * The span writers are generated (codegen/emit/c.py) and printed before this file: the bytes of
 * put_<entity>, from slices of memory (Span). encode_columns_v2 walks a selection of rows of Arrow arrays
 * given as their buffers (validity bitmaps, int32 offsets, data; array offsets honoured), assigns offsets as
 * encode_batch does and writes each record with span_put_record_v2. Rows the Python writer would
 * refuse or word itself (timestamps below -1, kept offsets that do not increase, a null header
 * key) make it return None: the caller encodes those rows the Python way, which raises its error. */

/* A validity bitmap (NULL: no nulls), int32 offsets and data, at an array offset, of length rows. */
typedef struct { Py_buffer valid, offsets, data; int has_valid, has_data; Py_ssize_t offset, length; } BinArr;
/* An int64 array (timestamps in microseconds, kept offsets). */
/* An integer array of byte width 8 (the default) or 4: (validity or None, data, array offset, length[, width]). */
typedef struct { Py_buffer valid, data; int has_valid, has_data, width; Py_ssize_t offset, length; } IntArr;

static inline int bit_set(const Py_buffer *b, Py_ssize_t i) {
    return (((const uint8_t *)b->buf)[i >> 3] >> (i & 7)) & 1;
}

static int get_buffer(PyObject *o, Py_buffer *b, int *has, Py_ssize_t need) {
    *has = 0;
    if (o == Py_None) return 0;
    if (PyObject_GetBuffer(o, b, PyBUF_SIMPLE) < 0) return -1;
    *has = 1;
    if (b->len < need) {
        PyErr_Format(PyExc_ValueError, "an Arrow buffer of %zd bytes, %zd needed", b->len, need);
        return -1;
    }
    return 0;
}

static void bin_release(BinArr *a) {
    if (a->has_valid) PyBuffer_Release(&a->valid);
    if (a->has_data) { PyBuffer_Release(&a->offsets); PyBuffer_Release(&a->data); }
    a->has_valid = a->has_data = 0;
}

static void int_release(IntArr *a) {
    if (a->has_valid) PyBuffer_Release(&a->valid);
    if (a->has_data) PyBuffer_Release(&a->data);
    a->has_valid = a->has_data = 0;
}

/* (validity or None, offsets, data, offset, length); offsets are checked against the data where read. */
static int bin_arr(PyObject *t, BinArr *a) {
    PyObject *valid, *offsets, *data;
    int has_offsets = 0, has_data = 0;
    memset(a, 0, sizeof *a);
    if (!PyArg_ParseTuple(t, "OOOnn:binary array", &valid, &offsets, &data, &a->offset, &a->length)) return -1;
    if (a->offset < 0 || a->length < 0) {
        PyErr_SetString(PyExc_ValueError, "negative array offset or length");
        return -1;
    }
    Py_ssize_t end = a->offset + a->length;
    if (get_buffer(valid, &a->valid, &a->has_valid, (end + 7) / 8) < 0 ||
        get_buffer(offsets, &a->offsets, &has_offsets, (end + 1) * 4) < 0 ||
        get_buffer(data, &a->data, &has_data, 0) < 0)
        goto fail;
    if (!has_offsets || !has_data) {
        PyErr_SetString(PyExc_ValueError, "a binary array needs offsets and data buffers");
        goto fail;
    }
    a->has_data = 1;
    return 0;
fail:
    if (a->has_valid) PyBuffer_Release(&a->valid);
    if (has_offsets) PyBuffer_Release(&a->offsets);
    if (has_data) PyBuffer_Release(&a->data);
    a->has_valid = 0;
    return -1;
}

static int int_arr(PyObject *t, IntArr *a) {
    PyObject *valid, *data;
    memset(a, 0, sizeof *a);
    a->width = 8;
    if (!PyArg_ParseTuple(t, "OOnn|i:int array", &valid, &data, &a->offset, &a->length, &a->width)) return -1;
    if (a->offset < 0 || a->length < 0 || (a->width != 4 && a->width != 8)) {
        PyErr_SetString(PyExc_ValueError, "an int32 or int64 array at an offset >= 0");
        return -1;
    }
    Py_ssize_t end = a->offset + a->length;
    if (get_buffer(valid, &a->valid, &a->has_valid, (end + 7) / 8) < 0 ||
        get_buffer(data, &a->data, &a->has_data, end * a->width) < 0 || !a->has_data) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "an int array needs a data buffer");
        int_release(a);
        return -1;
    }
    return 0;
}

/* Element i (logical) of a binary array into *s (p NULL when null); -1 when its offsets do not
 * lie within the data. */
static inline int bin_at(const BinArr *a, Py_ssize_t i, Span *s) {
    Py_ssize_t j = a->offset + i;
    s->p = NULL;
    s->n = 0;
    if (a->has_valid && !bit_set(&a->valid, j)) return 0;
    const int32_t *o = (const int32_t *)a->offsets.buf;
    if (o[j] < 0 || o[j] > o[j + 1] || o[j + 1] > a->data.len) {
        PyErr_Format(PyExc_ValueError, "Arrow offsets out of bounds at element %zd", j);
        return -1;
    }
    s->p = (const char *)a->data.buf + o[j];
    s->n = o[j + 1] - o[j];
    return 0;
}

/* The list offsets of element i of a headers array, checked against its children. */
static inline int list_at(const Py_buffer *offsets, Py_ssize_t j, Py_ssize_t children, int32_t *lo, int32_t *hi) {
    const int32_t *o = (const int32_t *)offsets->buf;
    if (o[j] < 0 || o[j] > o[j + 1] || o[j + 1] > children) {
        PyErr_Format(PyExc_ValueError, "Arrow list offsets out of bounds at element %zd", j);
        return -1;
    }
    *lo = o[j];
    *hi = o[j + 1];
    return 0;
}

/* 1 and the value, or 0 when null. */
static inline int int_at(const IntArr *a, Py_ssize_t i, long long *v) {
    Py_ssize_t j = a->offset + i;
    if (a->has_valid && !bit_set(&a->valid, j)) return 0;
    *v = a->width == 8 ? ((const int64_t *)a->data.buf)[j] : ((const int32_t *)a->data.buf)[j];
    return 1;
}

/* headers: list<struct<key, value>> as (list validity, list offsets, list offset, list length,
 * struct validity, struct offset, key array, value array); key/value arrays indexed as the struct. */
typedef struct {
    Py_buffer valid, offsets, svalid;
    int has_valid, has_offsets, has_svalid;
    Py_ssize_t offset, length, soffset, children;
    BinArr key, value;
} HeadersArr;

static void headers_release(HeadersArr *h) {
    if (h->has_valid) PyBuffer_Release(&h->valid);
    if (h->has_offsets) PyBuffer_Release(&h->offsets);
    if (h->has_svalid) PyBuffer_Release(&h->svalid);
    bin_release(&h->key);
    bin_release(&h->value);
    h->has_valid = h->has_offsets = h->has_svalid = 0;
}

static int headers_arr(PyObject *t, HeadersArr *h) {
    PyObject *valid, *offsets, *svalid, *key, *value;
    memset(h, 0, sizeof *h);
    if (!PyArg_ParseTuple(t, "OOnnOnOO:headers array", &valid, &offsets, &h->offset, &h->length, &svalid, &h->soffset,
                          &key, &value))
        return -1;
    if (h->offset < 0 || h->length < 0 || h->soffset < 0) {
        PyErr_SetString(PyExc_ValueError, "negative array offset or length");
        return -1;
    }
    Py_ssize_t end = h->offset + h->length;
    if (get_buffer(valid, &h->valid, &h->has_valid, (end + 7) / 8) < 0 ||
        get_buffer(offsets, &h->offsets, &h->has_offsets, (end + 1) * 4) < 0 || !h->has_offsets ||
        bin_arr(key, &h->key) < 0 || bin_arr(value, &h->value) < 0)
        goto fail;
    h->children = h->key.length < h->value.length ? h->key.length : h->value.length;
    if (get_buffer(svalid, &h->svalid, &h->has_svalid, (h->soffset + h->children + 7) / 8) < 0) goto fail;
    return 0;
fail:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a headers array needs list offsets");
    headers_release(h);
    return -1;
}

/* The encoded headers of row i into scratch; 1 written (count in *n), 0 a header the Python writer
 * words (null header or key), -1 error. */
static int headers_at(const HeadersArr *h, Py_ssize_t i, Buf *scratch, long long *n) {
    Py_ssize_t j = h->offset + i;
    scratch->len = 0;
    *n = 0;
    if (h->has_valid && !bit_set(&h->valid, j)) return 1;
    int32_t lo, hi;
    if (list_at(&h->offsets, j, h->children, &lo, &hi) < 0) return -1;
    for (int32_t k = lo; k < hi; k++) {
        Span key, value;
        if (h->has_svalid && !bit_set(&h->svalid, h->soffset + k)) return 0;
        if (bin_at(&h->key, k, &key) < 0 || bin_at(&h->value, k, &value) < 0) return -1;
        if (!key.p) return 0;
        if (span_put_record_header_v2(scratch, key, value) < 0) return -1;
    }
    *n = hi - lo;
    return 1;
}

/* The selected rows: (start, count), or the int32/int64 values of an Arrow array given as
 * (data buffer, array offset, length, byte width). */
typedef struct { Py_buffer idx; int has_idx, wide; Py_ssize_t start, count; } Rows;

static int rows_arg(PyObject *x, Rows *r) {
    memset(r, 0, sizeof *r);
    if (PyTuple_Check(x) && PyTuple_GET_SIZE(x) == 2)
        return PyArg_ParseTuple(x, "nn:rows", &r->start, &r->count) ? 0 : -1;
    PyObject *data;
    Py_ssize_t offset, width;
    if (!PyTuple_Check(x) || !PyArg_ParseTuple(x, "Onnn:rows", &data, &offset, &r->count, &width)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "rows: (start, count) or (indices, offset, length, width)");
        return -1;
    }
    if (offset < 0 || r->count < 0 || (width != 4 && width != 8)) {
        PyErr_SetString(PyExc_ValueError, "row indices: int32 or int64 at an offset >= 0");
        return -1;
    }
    if (get_buffer(data, &r->idx, &r->has_idx, (offset + r->count) * width) < 0 || !r->has_idx) {
        if (r->has_idx) PyBuffer_Release(&r->idx);
        r->has_idx = 0;
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "row indices need a data buffer");
        return -1;
    }
    r->wide = width == 8;
    r->start = offset;
    return 0;
}

static inline Py_ssize_t row_at(const Rows *r, Py_ssize_t i) {
    if (!r->has_idx) return r->start + i;
    i += r->start;
    return r->wide ? (Py_ssize_t)((const int64_t *)r->idx.buf)[i] : (Py_ssize_t)((const int32_t *)r->idx.buf)[i];
}

static PyObject *py_encode_columns_v2(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *key_arg, *value_arg, *ts_arg, *headers_arg, *offsets_arg, *rows_obj, *base_arg, *prev_arg, *bts_arg;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO:encode_columns_v2", &key_arg, &value_arg, &ts_arg, &headers_arg,
                          &offsets_arg, &rows_obj, &base_arg, &prev_arg, &bts_arg))
        return NULL;
    BinArr key = {0}, value = {0};
    IntArr ts = {0}, offs = {0};
    HeadersArr hdr = {0};
    Rows rows = {0};
    Buf out = {0}, scratch = {0};
    PyObject *result = NULL;
    int has_key = key_arg != Py_None, has_value = value_arg != Py_None, has_ts = ts_arg != Py_None;
    int has_hdr = headers_arg != Py_None, explicit = offsets_arg != Py_None;
    long long base = 0, previous = 0, base_timestamp = -1, max_timestamp = -1;
    int has_base = base_arg != Py_None, has_prev = prev_arg != Py_None;
    if ((has_base && (base = PyLong_AsLongLong(base_arg)) == -1 && PyErr_Occurred()) ||
        (has_prev && (previous = PyLong_AsLongLong(prev_arg)) == -1 && PyErr_Occurred()) ||
        (bts_arg != Py_None && (base_timestamp = PyLong_AsLongLong(bts_arg)) == -1 && PyErr_Occurred()))
        return NULL;
    if (has_prev && !has_base) {
        PyErr_SetString(PyExc_ValueError, "a previous offset needs a base offset");
        return NULL;
    }
    if ((has_key && bin_arr(key_arg, &key) < 0) || (has_value && bin_arr(value_arg, &value) < 0) ||
        (has_ts && int_arr(ts_arg, &ts) < 0) || (explicit && int_arr(offsets_arg, &offs) < 0) ||
        (has_hdr && headers_arr(headers_arg, &hdr) < 0) || rows_arg(rows_obj, &rows) < 0)
        goto done;
    int first_segment = bts_arg == Py_None;
    Py_ssize_t count = rows.count;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t row = row_at(&rows, i);
        if (row < 0 || (has_key && row >= key.length) || (has_value && row >= value.length) ||
            (has_ts && row >= ts.length) || (explicit && row >= offs.length) || (has_hdr && row >= hdr.length)) {
            PyErr_Format(PyExc_IndexError, "row %zd is outside the arrays", row);
            goto done;
        }
        long long offset, timestamp = -1, delta, n_headers = 0;
        if (has_ts && int_at(&ts, row, &timestamp)) {  /* microseconds -> ms, floored as Python's // */
            long long us = timestamp;
            timestamp = us / 1000 - (us % 1000 < 0);
        }
        if (timestamp < -1) goto python;
        if (explicit) {
            if (!int_at(&offs, row, &offset) || offset < 0) goto python;
        } else if (i == 0 && !has_prev) {
            offset = base;
        } else if (previous == INT64_MAX) {
            goto python;
        } else {
            offset = previous + 1;
        }
        if (i == 0 && !has_prev) {
            if (!has_base) base = offset;
            if (first_segment) base_timestamp = timestamp;
        } else if (offset <= previous) {
            goto python;
        }
        if (offset < base || offset - base > INT32_MAX) goto python;
        if (__builtin_sub_overflow(timestamp, base_timestamp, &delta)) goto python;
        if (has_hdr) {
            int got = headers_at(&hdr, row, &scratch, &n_headers);
            if (got < 0) goto done;
            if (got == 0) goto python;
        } else {
            scratch.len = 0;
        }
        Span k = {NULL, 0}, v = {NULL, 0}, h = {scratch.data ? scratch.data : "", scratch.len};
        if ((has_key && bin_at(&key, row, &k) < 0) || (has_value && bin_at(&value, row, &v) < 0)) goto done;
        if (span_put_record_v2(&out, 0, delta, offset - base, k, v, n_headers, h) < 0) goto done;
        if (timestamp > max_timestamp) max_timestamp = timestamp;
        previous = offset;
    }
    {
        PyObject *data = bytes_of(&out);
        if (data && count == 0) {  /* nothing selected: nothing to say about offsets */
            result = Py_BuildValue("(NnOOLL)", data, count, Py_None, Py_None, base_timestamp, max_timestamp);
        } else if (data) {
            result = Py_BuildValue("(NnLLLL)", data, count, base, previous, base_timestamp, max_timestamp);
        }
    }
    goto done;
python:
    Py_INCREF(Py_None);
    result = Py_None;
done:
    buf_free(&out);
    buf_free(&scratch);
    bin_release(&key);
    bin_release(&value);
    int_release(&ts);
    int_release(&offs);
    headers_release(&hdr);
    if (rows.has_idx) PyBuffer_Release(&rows.idx);
    return result;
}

/* Kafka's default partitioner for keyed records over a binary array: toPositive(murmur2(key)) %
 * partitions per element (BuiltInPartitioner.partitionForKey), -1 for a null key. */
static PyObject *py_partitions_for_keys(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *arr;
    long long partitions;
    if (!PyArg_ParseTuple(args, "OL:partitions_for_keys", &arr, &partitions)) return NULL;
    if (partitions < 1 || partitions > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "partition count must be in 1..%d, not %lld", INT32_MAX, partitions);
        return NULL;
    }
    BinArr a;
    if (bin_arr(arr, &a) < 0) return NULL;
    PyObject *result = PyBytes_FromStringAndSize(NULL, a.length * 4);
    if (result) {
        int32_t *p = (int32_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t i = 0; i < a.length; i++) {
            Span s;
            if (bin_at(&a, i, &s) < 0) { Py_CLEAR(result); break; }
            p[i] = s.p ? (int32_t)((kafka_murmur2((const uint8_t *)s.p, s.n) & 0x7fffffff) % partitions) : -1;
        }
    }
    bin_release(&a);
    return result;
}

/* Bytes of a zigzag varint (Kafka's ByteUtils.sizeOfVarint/sizeOfVarlong). */
static inline long long varint_size(long long v) {
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    long long n = 1;
    while (u >= 0x80) { u >>= 7; n++; }
    return n;
}

/* Code points of UTF-8 text: the length of the str the Python writer holds. */
static inline long long utf8_chars(Span s) {
    long long n = 0;
    for (Py_ssize_t i = 0; i < s.n; i++) n += (((const uint8_t *)s.p)[i] & 0xC0) != 0x80;
    return n;
}

/* Per row of the arrays (length rows), three int64 arrays as bytes, for the writer's batch rules:
 * the payload (key + value bytes, header key characters + value bytes: batchBytes), the v2
 * record's bytes past its attributes and deltas (key, value and headers as DefaultRecord encodes
 * them: the producer's kafka.batch.size estimate) and the timestamp in ms (-1 when null). */
static PyObject *py_columns_sizes_v2(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *key_arg, *value_arg, *ts_arg, *headers_arg;
    Py_ssize_t length;
    if (!PyArg_ParseTuple(args, "OOOOn:columns_sizes_v2", &key_arg, &value_arg, &ts_arg, &headers_arg, &length))
        return NULL;
    BinArr key = {0}, value = {0};
    IntArr ts = {0};
    HeadersArr hdr = {0};
    PyObject *payload = NULL, *fixed = NULL, *millis = NULL, *result = NULL;
    int has_key = key_arg != Py_None, has_value = value_arg != Py_None, has_ts = ts_arg != Py_None;
    int has_hdr = headers_arg != Py_None;
    if ((has_key && bin_arr(key_arg, &key) < 0) || (has_value && bin_arr(value_arg, &value) < 0) ||
        (has_ts && int_arr(ts_arg, &ts) < 0) || (has_hdr && headers_arr(headers_arg, &hdr) < 0))
        goto done;
    if (length < 0 || (has_key && key.length < length) || (has_value && value.length < length) ||
        (has_ts && ts.length < length) || (has_hdr && hdr.length < length)) {
        PyErr_SetString(PyExc_ValueError, "arrays shorter than the rows asked for");
        goto done;
    }
    if (!(payload = PyBytes_FromStringAndSize(NULL, length * 8)) ||
        !(fixed = PyBytes_FromStringAndSize(NULL, length * 8)) ||
        !(millis = PyBytes_FromStringAndSize(NULL, length * 8)))
        goto done;
    int64_t *pay = (int64_t *)PyBytes_AS_STRING(payload), *fix = (int64_t *)PyBytes_AS_STRING(fixed);
    int64_t *ms = (int64_t *)PyBytes_AS_STRING(millis);
    for (Py_ssize_t i = 0; i < length; i++) {
        Span k = {NULL, 0}, v = {NULL, 0};
        if ((has_key && bin_at(&key, i, &k) < 0) || (has_value && bin_at(&value, i, &v) < 0)) goto done;
        long long p = k.n + v.n, f = (k.p ? varint_size(k.n) + k.n : 1) + (v.p ? varint_size(v.n) + v.n : 1);
        long long nh = 0, t = -1;
        if (has_hdr && !(hdr.has_valid && !bit_set(&hdr.valid, hdr.offset + i))) {
            int32_t lo, hi;
            if (list_at(&hdr.offsets, hdr.offset + i, hdr.children, &lo, &hi) < 0) goto done;
            nh = hi - lo;
            for (int32_t h = lo; h < hi; h++) {
                Span hk, hv;
                if (bin_at(&hdr.key, h, &hk) < 0 || bin_at(&hdr.value, h, &hv) < 0) goto done;
                p += utf8_chars(hk) + hv.n;
                f += varint_size(hk.n) + hk.n + (hv.p ? varint_size(hv.n) + hv.n : 1);
            }
        }
        if (has_ts && int_at(&ts, i, &t)) t = t / 1000 - (t % 1000 < 0);
        pay[i] = p;
        fix[i] = f + varint_size(nh);
        ms[i] = t;
    }
    result = PyTuple_Pack(3, payload, fixed, millis);
done:
    Py_XDECREF(payload);
    Py_XDECREF(fixed);
    Py_XDECREF(millis);
    bin_release(&key);
    bin_release(&value);
    int_release(&ts);
    headers_release(&hdr);
    return result;
}

/* A v2 record's size in its batch from the part columns_sizes_v2 gives (DefaultRecord.sizeInBytes). */
static inline long long v2_record_size(long long offset_delta, long long timestamp_delta, long long fixed) {
    long long body = 1 + varint_size(timestamp_delta) + varint_size(offset_delta) + fixed;
    return varint_size(body) + body;
}

/* The writer's batch rules over a run of rows bound for one stage (kcodec.spark.write_rows.cut_run):
 * from position pos of the rows, add rows to the open batch (pending records, payload bytes, its
 * v2 estimate and first timestamp) until one closes it: before a row that would take the v2
 * estimate past room (kafka.batch.size less the batch header; None: no such rule), or after the
 * row that brings it to records_per_batch records or batch_bytes of payload.
 * -> (end, closed, pending, pending_bytes, batch_v2, first_ts): rows [pos, end) joined the batch. */
static PyObject *py_cut_run(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *pay_o, *fix_o, *ms_o, *rows_o, *room_o;
    Py_ssize_t pos;
    long long pending, pbytes, bv2, first_ts, rpb, bb, room = 0;
    if (!PyArg_ParseTuple(args, "OOOOn(LLLL)LLO:cut_run", &pay_o, &fix_o, &ms_o, &rows_o, &pos, &pending, &pbytes,
                          &bv2, &first_ts, &rpb, &bb, &room_o))
        return NULL;
    int has_room = room_o != Py_None;
    if (has_room && (room = PyLong_AsLongLong(room_o)) == -1 && PyErr_Occurred()) return NULL;
    Py_buffer pay, fix, ms;
    int has_pay = 0, has_fix = 0, has_ms = 0;
    Rows rows = {0};
    PyObject *result = NULL;
    if (get_buffer(pay_o, &pay, &has_pay, 0) < 0 || get_buffer(fix_o, &fix, &has_fix, pay.len) < 0 ||
        get_buffer(ms_o, &ms, &has_ms, pay.len) < 0 || rows_arg(rows_o, &rows) < 0)
        goto done;
    const int64_t *payload = (const int64_t *)pay.buf, *fixed = (const int64_t *)fix.buf;
    const int64_t *millis = (const int64_t *)ms.buf;
    Py_ssize_t n = pay.len / 8, end = rows.count, i;
    int closed = 0;
    if (pos < 0 || pos > rows.count) {
        PyErr_SetString(PyExc_IndexError, "cut_run: position outside the rows");
        goto done;
    }
    for (i = pos; i < rows.count; i++) {
        Py_ssize_t r = row_at(&rows, i);
        if (r < 0 || r >= n) { PyErr_Format(PyExc_IndexError, "cut_run: row %zd outside the sizes", r); goto done; }
        if (has_room) {
            long long ts = millis[r];
            if (pending && bv2 + v2_record_size(pending, ts - first_ts, fixed[r]) > room) {
                closed = 1;
                end = i;
                break;
            }
            if (!pending) { bv2 = 0; first_ts = ts; }
            bv2 += v2_record_size(pending, pending ? ts - first_ts : 0, fixed[r]);
        }
        pending++;
        pbytes += payload[r];
        if (pending >= rpb || pbytes >= bb) { closed = 1; end = i + 1; break; }
    }
    result = Py_BuildValue("(niLLLL)", end, closed, pending, pbytes, bv2, first_ts);
done:
    if (has_pay) PyBuffer_Release(&pay);
    if (has_fix) PyBuffer_Release(&fix);
    if (has_ms) PyBuffer_Release(&ms);
    if (rows.has_idx) PyBuffer_Release(&rows.idx);
    return result;
}

static PyMethodDef columns_methods[] = {
    {"encode_columns_v2", py_encode_columns_v2, METH_VARARGS,
     "encode_columns_v2(key, value, timestamp_us, headers, offsets, rows, base_offset, previous_offset, "
     "base_timestamp) -> as encode_records_v2, from Arrow buffers (kcodec.records.arrow_encode)"},
    {"partitions_for_keys", py_partitions_for_keys, METH_VARARGS,
     "partitions_for_keys(binary array, partitions) -> int32 bytes: Kafka's default partition per key, -1 null"},
    {"columns_sizes_v2", py_columns_sizes_v2, METH_VARARGS,
     "columns_sizes_v2(key, value, timestamp_us, headers, rows) -> (payload, v2 record past its deltas, "
     "timestamp ms): int64 bytes per row"},
    {"cut_run", py_cut_run, METH_VARARGS,
     "cut_run(payload, fixed, millis, rows, pos, (pending, pending_bytes, batch_v2, first_ts), records_per_batch, "
     "batch_bytes, room) -> (end, closed, pending, pending_bytes, batch_v2, first_ts)"},
    {NULL, NULL, 0, NULL}
};
