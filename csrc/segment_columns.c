/* kcodec's compiled kernel: the v2 data batches of many entries into one set of Arrow columns.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- segment_columns: a run of v2 data batches, decoded into one set of columns in one call
 *
 * For kcodec.records.columnar's read_arrow / iter_arrow: the batches of the bytes at hand are walked here
 * (their headers by batch_header.c), each one's records appended by the printed col_record_v2 (the same
 * record walk and column sinks as columns_record_v2) into ONE cols_record_v2, whose offset and
 * timestamp columns are then made absolute in place; the per-record batch columns (timestamp type,
 * sequence, batch position) are written beside them. A batch's CRC check and a compressed batch's records
 * inflated by kcodec's own decompressor are batch_header.c's, as for batch_records.c.
 *
 * A run takes about run_bytes of batches (its columns, a few times that, then come from blocks
 * buffers.c's pool kept from released columns rather than fresh pages) and says so; the next call takes on from there. Otherwise the run
 * stops, before it, at the first entry it does not take whole: not whole in the bytes, not a
 * v2 data batch, a record-count bomb, an unknown codec, a CRC that does not hold (when asked), records
 * that do not decode or add up, a sum past its type. Nothing is raised for it: that batch's records are
 * taken back out of the columns, and the caller hands the entry to the general path, which decides it
 * (same error, same position) and calls again after it. */

#include <sys/mman.h>

/* Room for n more bytes in b, asked of the system as transparent huge pages where that is large: the
 * columns of a run are tens of MB written once, and faulting them in 4 KiB pages cost about as much as
 * decoding into them. Only advice: memory stays malloc's (the pool or free() takes it back). */
#define SEG_HUGE (2 << 20)
static int seg_reserve(Buf *b, Py_ssize_t n) {
    Py_ssize_t cap = b->cap;
    if (buf_reserve(b, n) < 0) return -1;
    (void)cap;
#ifdef MADV_HUGEPAGE
    if (b->cap != cap && b->cap >= 2 * SEG_HUGE) {
        uintptr_t lo = ((uintptr_t)b->data + SEG_HUGE - 1) & ~(uintptr_t)(SEG_HUGE - 1);
        uintptr_t hi = ((uintptr_t)b->data + (uintptr_t)b->cap) & ~(uintptr_t)(SEG_HUGE - 1);
        if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return 0;
}

/* What a column held before a batch, to take the batch back out. */
typedef struct { Py_ssize_t offsets, data, n, nulls; } BinMark;
typedef struct {
    BinMark key, value, header_key, header_value;
    Py_ssize_t offset, timestamp, headers_offsets, headers_n, n;
    Py_ssize_t ts_type, sequence, position;
} SegMark;

/* The run's columns: the record walk's own, and the batch-level ones it writes per record. */
typedef struct {
    cols_record_v2 rec;  /* offset_delta and timestamp_delta become the absolute offset and timestamp */
    Buf ts_type, sequence, position;  /* int32, int32, int64 */
} SegCols;

static BinMark bin_mark(const BinCol *c) { return (BinMark){c->offsets.len, c->data.len, c->n, c->nulls}; }

static void bin_restore(BinCol *c, BinMark m) {
    c->offsets.len = m.offsets;
    c->data.len = m.data;
    c->n = m.n;
    c->nulls = m.nulls;
    c->valid.len = (m.n + 7) / 8;
    if (m.n % 8) c->valid.data[m.n / 8] &= (char)((1 << (m.n % 8)) - 1);  /* bits of the records taken out */
}

static SegMark seg_mark(const SegCols *s) {
    const cols_record_v2 *r = &s->rec;
    return (SegMark){bin_mark(&r->key), bin_mark(&r->value), bin_mark(&r->headers.key), bin_mark(&r->headers.value),
                     r->offset_delta.len, r->timestamp_delta.len, r->headers_offsets.len, r->headers.n, r->n,
                     s->ts_type.len, s->sequence.len, s->position.len};
}

static void seg_restore(SegCols *s, const SegMark *m) {
    cols_record_v2 *r = &s->rec;
    bin_restore(&r->key, m->key);
    bin_restore(&r->value, m->value);
    bin_restore(&r->headers.key, m->header_key);
    bin_restore(&r->headers.value, m->header_value);
    r->offset_delta.len = m->offset;
    r->timestamp_delta.len = m->timestamp;
    r->headers_offsets.len = m->headers_offsets;
    r->headers.n = m->headers_n;
    r->n = m->n;
    s->ts_type.len = m->ts_type;
    s->sequence.len = m->sequence;
    s->position.len = m->position;
}

static void seg_free(SegCols *s) {
    free_cols_record_v2(&s->rec);
    buf_free(&s->ts_type);
    buf_free(&s->sequence);
    buf_free(&s->position);
}

/* The arguments that stay the same over a run. */
typedef struct {
    PyObject *crc;      /* crc32c(buffer) -> int, called when the CRC is to be checked; NULL: not checked */
    PyObject *limit;    /* the decompressed-size cap, as kcodec's decompressor takes it */
    PyObject *codecs;   /* tuple: the codec name of each compression id, None where unknown */
    PyObject *ahead;    /* None, or what a thread inflated ahead (batch_header.c's v2_records_inflated): the
                         * records are then walked without the GIL, so that thread runs beside the walk */
    long long ahead_min;  /* its min_stored */
    long long max_batch_size, max_count, start_offset, base;  /* base: the position of buf[0] in the input */
    long long run_bytes;  /* a run ends before a batch that would take it past this many bytes */
    int has_start;
} SegArgs;

/* The batch whose header is h appended to the columns: 1 taken, 0 not (the columns as they were). */
static int seg_batch(SegCols *s, const SegArgs *a, const V2Header *h, const uint8_t *entry, Py_ssize_t size,
                     Py_ssize_t position) {
    long long count = h->records_count, base = h->base_offset, base_seq = h->base_sequence, last;
    int codec = v2_codec(h), log_append = v2_timestamp_type(h) != 0;
    if (!v2_walk_takes(h, a->codecs, a->max_count, &last)) return 0;
    if (a->crc) {
        int holds = v2_crc_holds(a->crc, entry, size, h->crc, NULL);
        if (holds < 0) PyErr_Clear();
        if (holds <= 0) return 0;
    }
    PyObject *inflated = NULL;
    const uint8_t *data = entry + RECORD_BATCH_V2_OFFSET_RECORDS;
    Py_ssize_t n = size - RECORD_BATCH_V2_OFFSET_RECORDS, p = 0;
    if (codec != 0) {
        if (!(inflated = v2_records_inflated(PyTuple_GET_ITEM(a->codecs, codec), entry, size, a->limit, a->ahead,
                                             a->ahead_min, (Py_ssize_t)a->base + position))) {
            PyErr_Clear();  /* the general path raises it, with all its details */
            return 0;
        }
        data = (const uint8_t *)PyBytes_AS_STRING(inflated);
        n = PyBytes_GET_SIZE(inflated);
    }
    SegMark mark = seg_mark(s);
    cols_record_v2 *r = &s->rec;
    int taken = 0;
    if (count > n) goto done;
    if (seg_reserve(&r->offset_delta, count * 8) < 0 || seg_reserve(&r->timestamp_delta, count * 8) < 0 ||
        seg_reserve(&s->ts_type, count * 4) < 0 || seg_reserve(&s->sequence, count * 4) < 0 ||
        seg_reserve(&s->position, count * 8) < 0 || seg_reserve(&r->value.data, n) < 0)
        goto done;
    int walked = 0;
    if (a->ahead != Py_None) {  /* without the GIL; a failure there is walked again with it, to be decided */
        long long i = 0;
        Py_BEGIN_ALLOW_THREADS
        walk_without_gil = 1;
        while (i < count && p < n && col_record_v2(data, n, &p, n, r) == 0) i++;
        walk_without_gil = 0;
        Py_END_ALLOW_THREADS
        if (!(walked = i == count)) {
            seg_restore(s, &mark);
            p = 0;
        }
    }
    if (!walked)
        for (long long i = 0; i < count; i++)
            if (p >= n || col_record_v2(data, n, &p, n, r) < 0) goto done;
    if (p != n) goto done;  /* bytes left over after the records */
    /* the record walk's deltas made absolute, in place; the batch columns beside them */
    int64_t *offsets = (int64_t *)(r->offset_delta.data + mark.offset);
    int64_t *stamps = (int64_t *)(r->timestamp_delta.data + mark.timestamp);
    int32_t *types = (int32_t *)(s->ts_type.data + s->ts_type.len);
    int32_t *seqs = (int32_t *)(s->sequence.data + s->sequence.len);
    int64_t *positions = (int64_t *)(s->position.data + s->position.len);
    for (long long i = 0; i < count; i++) {
        long long delta = offsets[i], seq = -1;
        if (__builtin_add_overflow(delta, base, &offsets[i])) goto done;
        if (log_append) stamps[i] = h->max_timestamp;
        else if (__builtin_add_overflow(stamps[i], h->base_timestamp, &stamps[i])) goto done;
        if (base_seq >= 0 && (seq = base_seq + delta) > INT32_MAX) goto done;
        types[i] = log_append;
        seqs[i] = (int32_t)seq;
        positions[i] = a->base + position;
    }
    s->ts_type.len += count * 4;
    s->sequence.len += count * 4;
    s->position.len += count * 8;
    taken = 1;
done:
    r->length.len = r->attributes.len = 0;  /* columns the table does not have: their memory reused */
    if (!taken) {
        PyErr_Clear();  /* the general path raises it, with all its details */
        seg_restore(s, &mark);
    }
    Py_XDECREF(inflated);
    return taken;
}

/* The columns sized for the run ahead before it is walked, from its batch headers alone: a record
 * count and its records' bytes (stored: a compressed batch grows its columns as it is inflated). */
static int seg_presize(SegCols *s, const uint8_t *buf, Py_ssize_t p, Py_ssize_t end, long long *records) {
    long long count = 0, bytes = 0;
    V2Header h;
    long long size;
    while ((size = v2_whole_entry(buf + p, end - p, INT32_MAX, &h)) >= 0 && h.records_count >= 0) {
        if (h.records_count <= size) count += h.records_count;
        bytes += size - RECORD_BATCH_V2_OVERHEAD;
        p += (Py_ssize_t)size;
    }
    if (bytes > (INT32_MAX >> 1)) bytes = INT32_MAX >> 1;
    cols_record_v2 *r = &s->rec;
    if (seg_reserve(&r->offset_delta, count * 8) < 0 || seg_reserve(&r->timestamp_delta, count * 8) < 0 ||
        seg_reserve(&s->ts_type, count * 4) < 0 || seg_reserve(&s->sequence, count * 4) < 0 ||
        seg_reserve(&s->position, count * 8) < 0 || seg_reserve(&r->key.offsets, count * 4) < 0 ||
        seg_reserve(&r->value.offsets, count * 4) < 0 || seg_reserve(&r->headers_offsets, count * 4) < 0 ||
        seg_reserve(&r->key.valid, count / 8 + 1) < 0 || seg_reserve(&r->value.valid, count / 8 + 1) < 0 ||
        seg_reserve(&r->value.data, bytes) < 0)
        return -1;
    *records = count;
    return 0;
}

/* Room for the rest of a run of `records` records in the columns whose size the batch headers do not tell
 * (keys, the headers' keys and values), at the rate of the records taken so far: their buffers grow once,
 * not by doubling (each step a copy). Only a reservation: a run that differs grows as before. */
static int bin_extrapolate(BinCol *c, long long taken, long long records) {
    long long rest = records - taken, data = c->data.len / taken * rest + c->data.len % taken;
    if (data > (INT32_MAX >> 2)) data = INT32_MAX >> 2;
    long long n = c->n / taken * rest + rest;  /* a column of a list (header keys) can have more than one per record */
    if (n > (INT32_MAX >> 4)) n = INT32_MAX >> 4;
    return seg_reserve(&c->data, data) < 0 || seg_reserve(&c->offsets, n * 4) < 0 || seg_reserve(&c->valid, n / 8 + 1) < 0
               ? -1
               : 0;
}

static int seg_extrapolate(SegCols *s, long long records) {
    cols_record_v2 *r = &s->rec;
    long long taken = r->n;
    if (taken <= 0 || records <= taken) return 0;
    return bin_extrapolate(&r->key, taken, records) < 0 || bin_extrapolate(&r->headers.key, taken, records) < 0 ||
                   bin_extrapolate(&r->headers.value, taken, records) < 0
               ? -1
               : 0;
}

/* segment_columns(buf, pos, end, crc32c or None, max_decompressed_size, max_batch_size, max_count, codecs,
 * start_offset or None, base, run_bytes[, inflated]) -> (columns or None, records, next_pos, full): the run of v2 data
 * batches from pos (buf[0] is at position base of the input; entries whose last offset is below start_offset
 * passed over undecoded). next_pos is the first entry not taken: full when the run stopped there only because
 * it holds run_bytes (the next run takes that entry), else the entry is one the run does not take. inflated: what a
 * thread inflated ahead (kcodec.records.prefetch), or None. */
static PyObject *py_segment_columns(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t pos, end;
    PyObject *crc, *start;
    SegArgs a = {0};
    a.ahead = Py_None;
    if (!PyArg_ParseTuple(args, "y*nnOOLLO!OLL|O:segment_columns", &view, &pos, &end, &crc, &a.limit,
                          &a.max_batch_size, &a.max_count, &PyTuple_Type, &a.codecs, &start, &a.base, &a.run_bytes,
                          &a.ahead))
        return NULL;
    a.crc = crc == Py_None ? NULL : crc;
    if ((a.ahead_min = v2_ahead_min(a.ahead)) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    a.has_start = start != Py_None;
    if (a.has_start && (a.start_offset = PyLong_AsLongLong(start)) == -1 && PyErr_Occurred()) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (pos < 0 || end > view.len || pos > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "segment_columns: need 0 <= pos <= end <= len(buf)");
        return NULL;
    }
    const uint8_t *buf = (const uint8_t *)view.buf;
    SegCols s;
    memset(&s, 0, sizeof s);
    Py_ssize_t p = pos;
    PyObject *result = NULL, *d = NULL;
    int full = 0;
    if (a.run_bytes < 1) a.run_bytes = 1;
    long long records = 0;
    int extrapolated = 0;
    if (seg_presize(&s, buf, p, end - p > a.run_bytes ? p + (Py_ssize_t)a.run_bytes : end, &records) < 0) goto done;
    while (1) {
        V2Header h;
        long long size = v2_whole_entry(buf + p, end - p, a.max_batch_size, &h);
        if (size < 0) break;
        /* a run holds about run_bytes (its columns' blocks are reused once released), and a column's data
         * past 2 GiB would not fit its int32 offsets: the run ends before that, the next one takes on */
        if (p > pos && (size > (long long)(pos - p) + a.run_bytes ||
                        s.rec.value.data.len + s.rec.key.data.len + s.rec.headers.value.data.len +
                                s.rec.headers.key.data.len > (INT32_MAX >> 1))) {
            full = 1;
            break;
        }
        long long last;
        if (__builtin_add_overflow(h.base_offset, (long long)h.last_offset_delta, &last)) break;
        if (!(a.has_start && last < a.start_offset) && !seg_batch(&s, &a, &h, buf + p, (Py_ssize_t)size, p)) break;
        p += (Py_ssize_t)size;
        if (!extrapolated && s.rec.n > 0) {
            extrapolated = 1;
            if (seg_extrapolate(&s, records) < 0) goto done;
        }
    }
    if (s.rec.n == 0) {
        result = Py_BuildValue("(Onni)", Py_None, (Py_ssize_t)0, p, full);
        goto done;
    }
    d = PyDict_New();
    if (!d || export_cols_record_v2(d, &s.rec) < 0 ||
        put_item(d, "timestamp_type", Py_BuildValue("(sN)", "int32", owned_of(&s.ts_type))) < 0 ||
        put_item(d, "sequence", Py_BuildValue("(sN)", "int32", owned_of(&s.sequence))) < 0 ||
        put_ints(d, "position", &s.position) < 0)
        goto done;
    result = Py_BuildValue("(Onni)", d, s.rec.n, p, full);
done:
    Py_XDECREF(d);
    seg_free(&s);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef segment_columns_methods[] = {
    {"segment_columns", py_segment_columns, METH_VARARGS,
     "segment_columns(buf, pos, end, crc32c or None, max_decompressed_size, max_batch_size, max_count, codecs, "
     "start_offset or None, base, run_bytes[, inflated]) -> (columns or None, records, next_pos, full): the run of v2 data "
     "batches from pos in one set of columns, up to the first entry it does not take or about run_bytes"},
    {NULL, NULL, 0, NULL}
};
