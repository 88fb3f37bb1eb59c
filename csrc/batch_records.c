/* kcodec's compiled kernel: v2 data batches straight into kcodec's Batch, their records a LazyRecords.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after batch_header.c and the printed record_v2 code (see kernel.h for the order).
 *
 * v2_batches walks the run of v2 data batches at the start of its bytes as kcodec.records.decode's
 * compiled path decodes each one (header, CRC, decompression, every record checked once, LazyRecords),
 * without the generic header decoder's tuple, the plan tuple or a Python frame per batch. A batch it does
 * not take (a control batch, damage, a CRC that does not hold when it is checked, sequences that wrap,
 * a record count the chunked path takes, an entry not whole in the bytes) ends the run without an error:
 * the general decoder then decides what it is and says where, as before. */

/* The Batch slots a v2 batch fills, in this order: every slot of kcodec's Batch, each once. */
enum { VB_POSITION, VB_SIZE, VB_MAGIC, VB_BASE_OFFSET, VB_LAST_OFFSET, VB_CRC, VB_CRC_VALID, VB_COMPUTED_CRC,
       VB_COMPRESSION, VB_TIMESTAMP_TYPE, VB_MAX_TIMESTAMP, VB_RECORDS, VB_PARTITION_LEADER_EPOCH,
       VB_IS_TRANSACTIONAL, VB_IS_CONTROL, VB_HAS_DELETE_HORIZON, VB_PRODUCER_ID, VB_PRODUCER_EPOCH,
       VB_BASE_SEQUENCE, VB_BASE_TIMESTAMP, VB_RECORD_COUNT, VB_STORED_RECORDS_SIZE, VB_RECORDS_SIZE, VB_COUNT };
static const char *const V2_BATCH_SLOTS[VB_COUNT] = {
    "position", "size", "magic", "base_offset", "last_offset", "crc", "crc_valid", "computed_crc", "compression",
    "timestamp_type", "max_timestamp", "records", "partition_leader_epoch", "is_transactional", "is_control",
    "has_delete_horizon", "producer_id", "producer_epoch", "base_sequence", "base_timestamp", "record_count",
    "stored_records_size", "records_size"};

static PyTypeObject *v2_batch_type;  /* the class whose slot offsets are cached (a strong reference) */
static Py_ssize_t v2_batch_off[VB_COUNT];

/* The offsets of Batch's slots, found once per class; a class with any other slot is refused. */
static int v2_batch_slots(PyTypeObject *type) {
    if (type == v2_batch_type) return 0;
    Py_ssize_t nslots = 0;
    for (PyMemberDef *m = type->tp_members; m && m->name; m++) nslots++;
    if (type->tp_dictoffset || nslots != VB_COUNT) {
        PyErr_Format(PyExc_TypeError, "v2_batches: %s must have exactly the %d slots the kernel fills",
                     type->tp_name, VB_COUNT);
        return -1;
    }
    for (int k = 0; k < VB_COUNT; k++) {
        PyObject *name = PyUnicode_FromString(V2_BATCH_SLOTS[k]);
        v2_batch_off[k] = name ? slot_offset(type, name) : -1;
        Py_XDECREF(name);
        if (v2_batch_off[k] < 0) return -1;
    }
    Py_INCREF(type);
    Py_XSETREF(v2_batch_type, type);
    return 0;
}

typedef struct {
    PyObject *owner;        /* bytes the buffer lies in (records then point into it), or NULL: entries copied */
    Py_ssize_t owner_at;    /* where the buffer starts in owner */
    PyObject *crc;          /* crc32c(buffer) -> int */
    int verify_crc;
    PyObject *pending;      /* CrcPending(data, start, end, stored): a CRC computed when first read */
    PyObject *limit, *codecs, *ts_create, *ts_append;
    PyObject *ahead;        /* None, or what a thread inflated ahead (batch_header.c's v2_records_inflated) */
    long long ahead_min;    /* its min_stored */
    PyTypeObject *rtype;
    long long max_records;
    Py_ssize_t f_ts, f_off, f_key, f_value, f_headers;  /* the decoded record's fields (AT_RECORD_V2) */
} VbArgs;

/* The Record plan of decode._decode_v2_compiled for this header (entry.c's PlanOp), its constants in *keep. */
static PlanOp *vb_plan(const VbArgs *a, const V2Header *h, int log_append, PyObject **keep, Py_ssize_t *nops) {
    PyObject *max_ts = log_append ? PyLong_FromLongLong(h->max_timestamp) : (Py_INCREF(Py_None), Py_None);
    PyObject *minus_one = PyLong_FromLong(-1), *two = PyLong_FromLong(2);
    PyObject *ts_type = log_append ? a->ts_append : a->ts_create;
    *keep = max_ts && minus_one && two ? PyTuple_Pack(5, max_ts, minus_one, two, ts_type, Py_None) : NULL;
    Py_XDECREF(max_ts);
    Py_XDECREF(minus_one);
    Py_XDECREF(two);
    PlanOp *ops = *keep ? PyMem_Calloc(11, sizeof(PlanOp)) : NULL;
    if (!ops) {
        Py_CLEAR(*keep);
        return PyErr_Occurred() ? NULL : (PlanOp *)PyErr_NoMemory();
    }
    PyObject *none = Py_None;
    ops[0] = (PlanOp){'a', a->f_off, 0, h->base_offset, NULL};                           /* offset */
    ops[1] = log_append ? (PlanOp){'c', 0, 0, 0, PyTuple_GET_ITEM(*keep, 0)}             /* timestamp */
                        : (PlanOp){'a', a->f_ts, 0, h->base_timestamp, NULL};
    ops[2] = (PlanOp){'c', 0, 0, 0, ts_type};                                             /* timestamp_type */
    ops[3] = (PlanOp){'f', a->f_key, 0, 0, NULL};                                         /* key */
    ops[4] = (PlanOp){'f', a->f_value, 0, 0, NULL};                                       /* value */
    ops[5] = (PlanOp){'t', a->f_headers, 0, 0, NULL};                                     /* headers */
    ops[6] = h->base_sequence >= 0 ? (PlanOp){'a', a->f_off, 0, h->base_sequence, NULL}   /* sequence */
                                   : (PlanOp){'c', 0, 0, 0, PyTuple_GET_ITEM(*keep, 1)};
    ops[7] = ops[8] = ops[9] = (PlanOp){'c', 0, 0, 0, none};                              /* control, crc, crc_valid */
    ops[10] = (PlanOp){'c', 0, 0, 0, PyTuple_GET_ITEM(*keep, 2)};                         /* magic */
    *nops = 11;
    return ops;
}

/* The batch at `entry` (size bytes, at position `position` of the input, at `at` of the buffer) as a Batch:
 * 1 (*out set), 0 not taken (no error set), -1 an error that is not the batch's (memory). */
static int vb_take(const VbArgs *a, const V2Header *h, const uint8_t *entry, Py_ssize_t size, Py_ssize_t at,
                   Py_ssize_t position, PyObject **out) {
    long long count = h->records_count, last;
    int codec = v2_codec(h), log_append = v2_timestamp_type(h) != 0;
    if (!v2_walk_takes(h, a->codecs, a->max_records, &last)) return 0;
    PyObject *computed = NULL, *crc_valid = NULL, *data = NULL, *keep = NULL, *records = NULL, *b = NULL;
    PyObject *copy = NULL;
    Py_ssize_t rpos, rend, next;
    int taken = -1;
    if (a->verify_crc) {
        int holds = v2_crc_holds(a->crc, entry, size, h->crc, &computed);
        if (holds < 0) goto decline;
        if (!holds) { taken = 0; goto done; }
        crc_valid = Py_True;
        Py_INCREF(crc_valid);
    }
    PyObject *entry_bytes = a->owner;  /* what holds the entry: the caller's bytes, else a copy */
    Py_ssize_t entry_at = a->owner_at + at;
    if (!entry_bytes && (codec == 0 || !computed)) {
        if (!(copy = PyBytes_FromStringAndSize((const char *)entry, size))) goto done;
        entry_bytes = copy;
        entry_at = 0;
    }
    if (!computed) {  /* read on first use (kcodec.records.model.CrcPending) */
        computed = PyObject_CallFunction(a->pending, "OnnI", entry_bytes, entry_at + RECORD_BATCH_V2_OFFSET_ATTRIBUTES,
                                         entry_at + size, (unsigned int)h->crc);
        if (!computed) goto done;
        crc_valid = computed;
        Py_INCREF(crc_valid);
    }
    if (codec == 0) {
        data = entry_bytes;
        Py_INCREF(data);
        rpos = entry_at + RECORD_BATCH_V2_OFFSET_RECORDS;
        rend = entry_at + size;
    } else {
        data = v2_records_inflated(PyTuple_GET_ITEM(a->codecs, codec), entry, size, a->limit, a->ahead, a->ahead_min,
                                    position);
        if (!data) goto decline;  /* the general path raises it, with all its details */
        rpos = 0;
        rend = PyBytes_GET_SIZE(data);
    }
    if (count > rend - rpos) goto decline;
    Py_ssize_t nops;
    PlanOp *ops = vb_plan(a, h, log_append, &keep, &nops);
    if (!ops) goto done;
    records = lazy_make_ops(data, rpos, rend, (Py_ssize_t)count, a->rtype, keep, ops, nops, kinds_record_v2,
                            prj_record_v2, chk_record_v2, &next);
    if (!records) goto decline;
    if (next != rend) goto decline;  /* bytes left over after the records */
    if (!(b = untracked_batch_of(v2_batch_type))) goto done;
    long long stored = (long long)size - RECORD_BATCH_V2_OVERHEAD;
    PyObject *codec_name = PyTuple_GET_ITEM(a->codecs, codec), *ts_type = log_append ? a->ts_append : a->ts_create;
    PyObject *values[VB_COUNT] = {
        PyLong_FromSsize_t(position),
        PyLong_FromSsize_t(size),
        PyLong_FromLong(2),
        PyLong_FromLongLong(h->base_offset),
        PyLong_FromLongLong(last),
        PyLong_FromUnsignedLong(h->crc),
        crc_valid,
        computed,
        (Py_INCREF(codec_name), codec_name),
        (Py_INCREF(ts_type), ts_type),
        PyLong_FromLongLong(h->max_timestamp),
        records,
        PyLong_FromLong(h->partition_leader_epoch),
        PyBool_FromLong(h->attributes & RECORD_BATCH_V2_ATTRIBUTES_TRANSACTIONAL_MASK),
        PyBool_FromLong(0),
        PyBool_FromLong(h->attributes & RECORD_BATCH_V2_ATTRIBUTES_DELETE_HORIZON_MASK),
        PyLong_FromLongLong(h->producer_id),
        PyLong_FromLong(h->producer_epoch),
        PyLong_FromLong(h->base_sequence),
        PyLong_FromLongLong(h->base_timestamp),
        PyLong_FromLongLong(count),
        PyLong_FromLongLong(stored),
        codec == 0 ? PyLong_FromLongLong(stored) : PyLong_FromSsize_t(PyBytes_GET_SIZE(data)),
    };
    crc_valid = computed = records = NULL;  /* the values own them now */
    int complete = 1;
    for (int k = 0; k < VB_COUNT; k++) {
        complete &= values[k] != NULL;
        *(PyObject **)((char *)b + v2_batch_off[k]) = values[k];
    }
    if (!complete) { Py_CLEAR(b); goto done; }
    PyObject_GC_Track(b);
    *out = b;
    taken = 1;
    goto done;
decline:
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_MemoryError)) PyErr_Clear();
    taken = PyErr_Occurred() ? -1 : 0;
done:
    Py_XDECREF(computed);
    Py_XDECREF(crc_valid);
    Py_XDECREF(data);
    Py_XDECREF(keep);
    Py_XDECREF(records);
    Py_XDECREF(copy);
    return taken;
}

/* v2_batches(buf, pos, end, base, owner, crc32c, verify_crc, CrcPending, max_decompressed_size, max_batch_size,
 * max_records, run_bytes, codecs, Batch, Record, (create_time, log_append_time), record fields[, inflated]) ->
 * (batches, next_pos): the run of v2 data batches from pos (buf[0] at position base of the input), up to the first
 * entry it does not take or once it holds run_bytes of records. owner: the bytes object buf lies in (the
 * records then read it in place), or None (each entry copied). record fields: where the decoded record has
 * its timestamp delta, offset delta, key, value and headers (kcodec.generated.fast.record.AT_RECORD_V2).
 * inflated: what a thread inflated ahead (kcodec.records.prefetch), or None. */
static PyObject *py_v2_batches(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t pos, end, base;
    long long max_batch_size, run_bytes;
    PyObject *owner, *batch_type, *rtype;
    VbArgs a = {0};
    a.ahead = Py_None;
    if (!PyArg_ParseTuple(args, "y*nnnOOpOOLLLO!O!O!(OO)(nnnnn)|O:v2_batches", &view, &pos, &end, &base, &owner,
                          &a.crc, &a.verify_crc, &a.pending, &a.limit, &max_batch_size, &a.max_records, &run_bytes,
                          &PyTuple_Type, &a.codecs, &PyType_Type, &batch_type, &PyType_Type, &rtype, &a.ts_create,
                          &a.ts_append, &a.f_ts, &a.f_off, &a.f_key, &a.f_value, &a.f_headers, &a.ahead))
        return NULL;
    a.rtype = (PyTypeObject *)rtype;
    PyObject *list = NULL;
    if ((a.ahead_min = v2_ahead_min(a.ahead)) < 0) goto done;
    if (check_window(&view, pos, end) < 0 || v2_batch_slots((PyTypeObject *)batch_type) < 0) goto done;
    if (!PyType_IsSubtype(a.rtype, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "v2_batches: the record type must be a tuple subclass");
        goto done;
    }
    int fields[5] = {(int)a.f_ts, (int)a.f_off, (int)a.f_key, (int)a.f_value, (int)a.f_headers};
    const char want[5] = {'i', 'i', 'o', 'o', 'l'};
    for (int k = 0; k < 5; k++) {
        if (fields[k] < 0 || fields[k] >= (int)strlen(kinds_record_v2) || kinds_record_v2[fields[k]] != want[k]) {
            PyErr_SetString(PyExc_TypeError, "v2_batches: record fields are not record_v2's");
            goto done;
        }
    }
    const uint8_t *buf = (const uint8_t *)view.buf;
    if (PyBytes_CheckExact(owner)) {  /* records read in place only when buf lies in the owner's bytes */
        const uint8_t *o = (const uint8_t *)PyBytes_AS_STRING(owner);
        if (buf >= o && buf + view.len <= o + PyBytes_GET_SIZE(owner)) {
            a.owner = owner;
            a.owner_at = (Py_ssize_t)(buf - o);
        }
    }
    if (!(list = PyList_New(0))) goto done;
    long long held = 0;
    Py_ssize_t p = pos;
    while (held < run_bytes) {
        V2Header h;
        long long size = v2_whole_entry(buf + p, end - p, max_batch_size, &h);
        if (size < 0) break;
        PyObject *batch = NULL;
        int taken = vb_take(&a, &h, buf + p, (Py_ssize_t)size, p, base + p, &batch);
        if (taken < 0) { Py_CLEAR(list); break; }
        if (!taken) break;
        int appended = PyList_Append(list, batch);
        Py_DECREF(batch);  /* the list holds it */
        if (appended < 0) { Py_CLEAR(list); break; }
        /* what the run holds: the records' bytes (a compressed batch's once inflated) */
        held += PyLong_AsLongLong(*(PyObject **)((char *)batch + v2_batch_off[VB_RECORDS_SIZE]));
        p += (Py_ssize_t)size;
    }
    if (list) {
        PyObject *result = Py_BuildValue("(Nn)", list, p);
        list = result;
    }
done:
    PyBuffer_Release(&view);
    return list;
}

static PyMethodDef batch_records_methods[] = {
    {"v2_batches", py_v2_batches, METH_VARARGS,
     "v2_batches(buf, pos, end, base, owner, crc32c, verify_crc, CrcPending, max_decompressed_size, "
     "max_batch_size, max_records, run_bytes, codecs, Batch, Record, timestamp types, record fields[, inflated]) -> "
     "(batches, next_pos): the run of v2 data batches from pos as kcodec Batches, up to the first entry it does "
     "not take"},
    {NULL, NULL, 0, NULL}
};
