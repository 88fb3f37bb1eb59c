/* kcodec's compiled kernel: v0/v1 log entries from record objects.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- v0/v1 log entries straight from the writer's inputs (kcodec.records.encode.encode_batch)
 *
 * encode_legacy_entries(items, base_offset, magic, append_time, relative, allow_lossy, NewRecord, Record) takes
 * the inputs encode_records_v2 takes and writes one log entry per record with put_legacy_message_v0/v1: the
 * uncompressed entries themselves, or (relative, for v1) a compressed wrapper's inner message set with offsets
 * relative to the base offset (Kafka's AbstractLegacyRecordBatch.toInnerOffset). Every message carries the
 * LogAppendTime bit and append_time when append_time is not None (v1, appendLegacyRecord), else its own
 * timestamp. With allow_lossy, headers and (v0) timestamps are dropped as the Python writer drops them;
 * without it, and on anything else the Python writer would convert or refuse, the result is None and that path
 * runs, with its own error messages. */

static PyObject *py_encode_legacy_entries(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *items, *base_arg, *append_arg;
    int magic, relative, lossy;
    PyTypeObject *new_type, *record_type;
    if (!PyArg_ParseTuple(args, "OOiOppO!O!:encode_legacy_entries", &items, &base_arg, &magic, &append_arg,
                          &relative, &lossy, &PyType_Type, &new_type, &PyType_Type, &record_type))
        return NULL;
    if (record_keys_init() < 0 || newrecord_slots(new_type) < 0) return NULL;
    if (magic != 0 && magic != 1) {
        PyErr_Format(PyExc_ValueError, "encode_legacy_entries: magic %d is not 0 or 1", magic);
        return NULL;
    }
    if (!PyList_CheckExact(items) && !PyTuple_CheckExact(items)) Py_RETURN_NONE;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    long long base = 0, previous = 0, append_time = -1, max_timestamp = -1;
    int log_append = append_arg != Py_None;
    if (count == 0 || (base_arg != Py_None && !plain_int(base_arg, 0, &base)) ||
        (log_append && (magic == 0 || !plain_int(append_arg, 0, &append_time))))
        Py_RETURN_NONE;
    long long attributes = log_append ? LEGACY_MESSAGE_V1_ATTRIBUTES_TIMESTAMP_TYPE_MASK : 0;
    Buf out = {0};
    for (Py_ssize_t i = 0; i < count; i++) {
        RecordIn r;
        long long offset, timestamp = -1;
        if (!record_in(PySequence_Fast_GET_ITEM(items, i), record_type, &r)) goto python;
        if (r.timestamp && !plain_int(r.timestamp, -1, &timestamp)) goto python;
        if (!record_offset(r.offset, i, base_arg, base, previous, &offset)) goto python;
        if (i == 0) {
            if (base_arg == Py_None) base = offset;
        } else if (offset <= previous) {
            goto python;
        }
        if (offset < base || !is_bytes_or_none(r.key) || !is_bytes_or_none(r.value)) goto python;
        if (bytes_size(r.key) > INT32_MAX || bytes_size(r.value) > INT32_MAX) goto python;
        PyObject *headers = r.headers;
        int has_headers = headers != Py_None && !((PyTuple_CheckExact(headers) || PyList_CheckExact(headers)) &&
                                                  PySequence_Fast_GET_SIZE(headers) == 0);
        /* v0/v1 hold no headers: dropped when lossy (still checked, as the Python writer does), else refused */
        if (has_headers && (!lossy || !plain_headers(headers))) goto python;
        if (magic == 0 && timestamp != -1) {
            if (!lossy) goto python;
            timestamp = -1;
        }
        if (timestamp > max_timestamp) max_timestamp = timestamp;
        if (log_append) timestamp = append_time;
        if (put_be64(&out, relative ? offset - base : offset) < 0) goto fail;
        Py_ssize_t size_at = out.len;  /* the entry's size, once its message is written */
        if (buf_reserve(&out, 4) < 0) goto fail;
        out.len += 4;
        int written = magic == 0 ? put_legacy_message_v0(&out, attributes, bytes_data(r.key), bytes_size(r.key),
                                                         bytes_data(r.value), bytes_size(r.value))
                                 : put_legacy_message_v1(&out, attributes, timestamp, bytes_data(r.key),
                                                         bytes_size(r.key), bytes_data(r.value), bytes_size(r.value));
        if (written < 0 || patch_length_int32(&out, size_at, 4) < 0) {
            if (!PyErr_ExceptionMatches(E_Encode)) goto fail;
            PyErr_Clear();
            goto python;
        }
        previous = offset;
    }
    PyObject *data = bytes_of(&out);
    buf_free(&out);
    return data ? Py_BuildValue("(NnLLL)", data, count, base, previous, max_timestamp) : NULL;
fail:
    buf_free(&out);
    return NULL;
python:
    buf_free(&out);
    Py_RETURN_NONE;
}

static PyMethodDef legacy_writer_methods[] = {
    {"encode_legacy_entries", py_encode_legacy_entries, METH_VARARGS,
     "encode_legacy_entries(items, base_offset, magic, append_time, relative, allow_lossy, NewRecord, Record) -> "
     "(entries bytes, count, base offset, last offset, max timestamp), or None for the Python writer"},
    {NULL, NULL, 0, NULL}
};
