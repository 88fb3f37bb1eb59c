/* kcodec's compiled kernel: the v2 batch header.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- a v2 batch header (DefaultRecordBatch) read from raw bytes
 *
 * Its field offsets and attribute bits are the RECORD_BATCH_V2_* facts printed from
 * schemas/record_batch.yaml just before this file; nothing here retypes them. The parse only reads:
 * what a value means (a magic that is not 2, an unknown codec, a length that lies) is the caller's
 * to judge. */

typedef struct {
    int64_t base_offset;
    int32_t batch_length;  /* bytes after the batch_length field */
    int32_t partition_leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp, max_timestamp, producer_id;
    int16_t producer_epoch;
    int32_t base_sequence, records_count;
} V2Header;

/* Where batch_length starts counting: the bytes before it are Kafka's LOG_OVERHEAD. */
#define V2_LENGTH_COVERS_FROM RECORD_BATCH_V2_OFFSET_PARTITION_LEADER_EPOCH

/* The header at b, of which n bytes are at hand: 0, or -1 (no exception set) when n is shorter
 * than the header. The magic is read, not checked. */
static int v2_header_parse(const uint8_t *b, Py_ssize_t n, V2Header *h) {
    if (n < RECORD_BATCH_V2_OVERHEAD) return -1;
    h->base_offset = (int64_t)load_be64(b + RECORD_BATCH_V2_OFFSET_BASE_OFFSET);
    h->batch_length = (int32_t)load_be32(b + RECORD_BATCH_V2_OFFSET_BATCH_LENGTH);
    h->partition_leader_epoch = (int32_t)load_be32(b + RECORD_BATCH_V2_OFFSET_PARTITION_LEADER_EPOCH);
    h->magic = (int8_t)b[RECORD_BATCH_V2_OFFSET_MAGIC];
    h->crc = load_be32(b + RECORD_BATCH_V2_OFFSET_CRC);
    h->attributes = (int16_t)load_be16(b + RECORD_BATCH_V2_OFFSET_ATTRIBUTES);
    h->last_offset_delta = (int32_t)load_be32(b + RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA);
    h->base_timestamp = (int64_t)load_be64(b + RECORD_BATCH_V2_OFFSET_BASE_TIMESTAMP);
    h->max_timestamp = (int64_t)load_be64(b + RECORD_BATCH_V2_OFFSET_MAX_TIMESTAMP);
    h->producer_id = (int64_t)load_be64(b + RECORD_BATCH_V2_OFFSET_PRODUCER_ID);
    h->producer_epoch = (int16_t)load_be16(b + RECORD_BATCH_V2_OFFSET_PRODUCER_EPOCH);
    h->base_sequence = (int32_t)load_be32(b + RECORD_BATCH_V2_OFFSET_BASE_SEQUENCE);
    h->records_count = (int32_t)load_be32(b + RECORD_BATCH_V2_OFFSET_RECORDS_COUNT);
    return 0;
}

/* The attribute bit groups (their values as the schema's enums number them). */
static inline int v2_codec(const V2Header *h) {
    return (h->attributes & RECORD_BATCH_V2_ATTRIBUTES_COMPRESSION_MASK) >> RECORD_BATCH_V2_ATTRIBUTES_COMPRESSION_SHIFT;
}
static inline int v2_timestamp_type(const V2Header *h) {
    return (h->attributes & RECORD_BATCH_V2_ATTRIBUTES_TIMESTAMP_TYPE_MASK) >>
           RECORD_BATCH_V2_ATTRIBUTES_TIMESTAMP_TYPE_SHIFT;
}
static inline int v2_is_control(const V2Header *h) { return (h->attributes & RECORD_BATCH_V2_ATTRIBUTES_CONTROL_MASK) != 0; }

/* ---- what both batch walks (segment_columns.c, batch_records.c) do to a batch alike; unused in a kernel
 * whose schemas give no record writer (neither walk is included then) */

/* The size of the v2 entry at b (n bytes at hand), its header read into *h; -1 where a batch walk ends before
 * it: not a v2 batch whole in the bytes, or more than max_batch_size bytes after its length field. */
__attribute__((unused)) static long long v2_whole_entry(const uint8_t *b, Py_ssize_t n, long long max_batch_size,
                                                        V2Header *h) {
    if (v2_header_parse(b, n, h) < 0 || h->magic != 2) return -1;
    long long size = (long long)V2_LENGTH_COVERS_FROM + h->batch_length;
    if (h->batch_length < RECORD_BATCH_V2_OVERHEAD - V2_LENGTH_COVERS_FROM || h->batch_length > max_batch_size ||
        size > n)
        return -1;
    return size;
}

/* 1 when a batch walk takes the batch whose header is h (else the general path decides it): a data batch of
 * 0 to max_count records, of a codec `codecs` names (a tuple of names by id, None where unknown), whose
 * offsets and sequences (the last of them; baseSequence - baseOffset, an int64 in the old paths too) do not
 * overflow. *last: its last offset. */
__attribute__((unused)) static int v2_walk_takes(const V2Header *h, PyObject *codecs, long long max_count,
                                                 long long *last) {
    long long count = h->records_count, base = h->base_offset, base_seq = h->base_sequence, seq_shift;
    int codec = v2_codec(h);
    if (v2_is_control(h) || count < 0 || count > max_count || codec >= PyTuple_GET_SIZE(codecs) ||
        PyTuple_GET_ITEM(codecs, codec) == Py_None)
        return 0;
    if (base_seq >= 0 && base_seq + (h->last_offset_delta > count ? h->last_offset_delta : count) > INT32_MAX)
        return 0;
    return !__builtin_add_overflow(base, (long long)h->last_offset_delta, last) &&
           !(base_seq >= 0 && __builtin_sub_overflow(base_seq, base, &seq_shift));
}

/* Whether the batch of `size` bytes at b holds its stored CRC-32C (what it covers: from the attributes on),
 * computed as crc(view) gives it (kcodec.runtime.crc.crc32c): 1 or 0, the computed int left in *computed (a
 * new reference) where computed is not NULL; -1 with an error set when it cannot be computed. Only called where
 * the caller asked for the CRC to be checked. */
__attribute__((unused)) static int v2_crc_holds(PyObject *crc, const uint8_t *b, Py_ssize_t size, uint32_t stored,
                                                PyObject **computed) {
    PyObject *view = PyMemoryView_FromMemory((char *)b + RECORD_BATCH_V2_OFFSET_ATTRIBUTES,
                                             size - RECORD_BATCH_V2_OFFSET_ATTRIBUTES, PyBUF_READ);
    PyObject *got = view ? PyObject_CallOneArg(crc, view) : NULL;
    Py_XDECREF(view);
    if (!got) return -1;
    unsigned long value = PyLong_AsUnsignedLong(got);
    if (value == (unsigned long)-1 && PyErr_Occurred()) {
        Py_DECREF(got);
        return -1;
    }
    if (computed) *computed = got;
    else Py_DECREF(got);
    return value == stored;
}

/* The records of the compressed batch of `size` bytes at b, inflated by kcodec's decompressor (compressed.c's
 * call_decompress, magic 2, at most `limit` bytes) as a bytes object; NULL when that fails (its error set) or
 * gives something else (no error set). `ahead`: None, or inflated(position) -> (entry, records) or None, what a
 * thread inflated ahead (kcodec.records.prefetch) for the entry at `position` of the input, asked for when its
 * compressed records are at least `ahead_min` bytes (v2_ahead_min): taken when that entry holds the same bytes
 * as this one (the records then are what the decompressor gives for them), else the decompressor is called here
 * as without it. */
__attribute__((unused)) static PyObject *v2_records_inflated(PyObject *codec, const uint8_t *b, Py_ssize_t size,
                                                            PyObject *limit, PyObject *ahead, long long ahead_min,
                                                            Py_ssize_t position) {
    if (ahead != Py_None && size - RECORD_BATCH_V2_OFFSET_RECORDS >= ahead_min) {
        PyObject *got = PyObject_CallFunction(ahead, "n", position);
        if (!got) return NULL;
        if (PyTuple_CheckExact(got) && PyTuple_GET_SIZE(got) == 2 && PyBytes_CheckExact(PyTuple_GET_ITEM(got, 1))) {
            Py_buffer entry;
            int same = 0;
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(got, 0), &entry, PyBUF_SIMPLE) == 0) {
                /* the same memory (the walk's own bytes), or bytes equal to them (a window read again) */
                same = entry.len == size && (entry.buf == (const void *)b || memcmp(entry.buf, b, (size_t)size) == 0);
                PyBuffer_Release(&entry);
            }
            PyErr_Clear();
            if (same) {
                PyObject *data = PyTuple_GET_ITEM(got, 1);
                Py_INCREF(data);
                Py_DECREF(got);
                return data;
            }
        }
        Py_DECREF(got);
    }
    PyObject *view = PyMemoryView_FromMemory((char *)b + RECORD_BATCH_V2_OFFSET_RECORDS,
                                             size - RECORD_BATCH_V2_OFFSET_RECORDS, PyBUF_READ);
    PyObject *data = view ? call_decompress(codec, view, 2, limit) : NULL;
    Py_XDECREF(view);
    if (data && !PyBytes_CheckExact(data)) Py_CLEAR(data);
    return data;
}

/* inflated.min_stored: the fewest compressed bytes of records a batch has for `inflated` to be asked for it (a
 * smaller one is inflated where it is decoded: handing it to a thread costs more than it saves); 0 for None,
 * -1 with an error set when it is not an int. */
__attribute__((unused)) static long long v2_ahead_min(PyObject *ahead) {
    if (ahead == Py_None) return 0;
    PyObject *min = PyObject_GetAttrString(ahead, "min_stored");
    long long v = min ? PyLong_AsLongLong(min) : -1;
    Py_XDECREF(min);
    return v;
}
