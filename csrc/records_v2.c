/* kcodec's compiled kernel: v2 records from record objects.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- v2 records straight from the writer's inputs (kcodec.records.encode.encode_batch)
 *
 * encode_records_v2(items, base_offset, delete_horizon, NewRecord, Record) walks a list or tuple of
 * NewRecord (its slots read at the member descriptors' offsets), kcodec Record (a tuple: fields by
 * index) or plain dicts (only key/value/headers/timestamp/offset), assigns offsets as Kafka's
 * MemoryRecordsBuilder.nextSequentialOffset does and writes each record with put_record_v2.
 * It only takes what the Python writer takes without converting anything: on any other input
 * (other types, bytearray, odd headers, offsets or timestamps out of range or out of order,
 * deltas past their ints, a control Record) it returns None and the writer's Python path runs,
 * with its own error messages. */

typedef struct { PyObject *key, *value, *headers, *timestamp, *offset; } RecordIn;

enum { NEWRECORD_FIELDS = 5 };
static PyTypeObject *newrecord_type;  /* the class whose slot offsets are cached (a strong reference) */
static Py_ssize_t newrecord_slot[NEWRECORD_FIELDS];
static const char *record_field_names[NEWRECORD_FIELDS] = {"key", "value", "headers", "timestamp", "offset"};
static PyObject *record_keys[NEWRECORD_FIELDS], *no_headers;

/* The offsets of NewRecord's key, value, headers, timestamp and offset slots, found once per class. */
static int newrecord_slots(PyTypeObject *type) {
    const char **names = record_field_names;
    if (type == newrecord_type) return 0;
    for (int i = 0; i < NEWRECORD_FIELDS; i++) {
        PyObject *d = type->tp_dict ? PyDict_GetItemString(type->tp_dict, names[i]) : NULL;
        if (!d || Py_TYPE(d) != &PyMemberDescr_Type || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            PyErr_Format(PyExc_TypeError, "%s has no slot %s", type->tp_name, names[i]);
            return -1;
        }
        newrecord_slot[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    Py_INCREF(type);
    Py_XSETREF(newrecord_type, type);
    return 0;
}

static int record_keys_init(void) {
    if (no_headers) return 0;
    for (int i = 0; i < NEWRECORD_FIELDS; i++)
        if (!(record_keys[i] = PyUnicode_InternFromString(record_field_names[i]))) return -1;
    return (no_headers = PyTuple_New(0)) ? 0 : -1;
}

/* 1: the fields of one input; 0: an input for the Python path. */
static int record_in(PyObject *item, PyTypeObject *record_type, RecordIn *r) {
    if (Py_TYPE(item) == newrecord_type) {
        PyObject **slots[NEWRECORD_FIELDS] = {&r->key, &r->value, &r->headers, &r->timestamp, &r->offset};
        for (int i = 0; i < NEWRECORD_FIELDS; i++)
            if (!(*slots[i] = *(PyObject **)((char *)item + newrecord_slot[i]))) return 0;
        return 1;
    }
    if (Py_TYPE(item) == record_type) {
        if (PyTuple_GET_SIZE(item) < 8 || PyTuple_GET_ITEM(item, 7) != Py_None) return 0;  /* control */
        r->offset = PyTuple_GET_ITEM(item, 0);
        r->timestamp = PyTuple_GET_ITEM(item, 1);
        r->key = PyTuple_GET_ITEM(item, 3);
        r->value = PyTuple_GET_ITEM(item, 4);
        r->headers = PyTuple_GET_ITEM(item, 5);
        return 1;
    }
    if (PyDict_CheckExact(item)) {  /* str keys only: no Python code runs while the items are walked */
        PyObject **slots[NEWRECORD_FIELDS] = {&r->key, &r->value, &r->headers, &r->timestamp, &r->offset};
        PyObject *k, *v;
        Py_ssize_t it = 0;
        r->key = r->value = r->headers = r->offset = Py_None;
        r->timestamp = NULL;  /* -1 */
        while (PyDict_Next(item, &it, &k, &v)) {
            if (!PyUnicode_CheckExact(k)) return 0;
            int i = 0;
            while (i < NEWRECORD_FIELDS && k != record_keys[i]) i++;
            for (int j = 0; i == NEWRECORD_FIELDS && j < NEWRECORD_FIELDS; j++)
                if (PyUnicode_Compare(k, record_keys[j]) == 0) i = j;
            if (i == NEWRECORD_FIELDS) return 0;  /* another key */
            *slots[i] = v;
        }
        return 1;
    }
    return 0;
}

static inline int is_bytes_or_none(PyObject *x) { return x == Py_None || PyBytes_CheckExact(x); }
/* put_record_v2's (data, length) of bytes or None */
static inline const char *bytes_data(PyObject *x) { return x == Py_None ? NULL : PyBytes_AS_STRING(x); }
static inline Py_ssize_t bytes_size(PyObject *x) { return x == Py_None ? 0 : PyBytes_GET_SIZE(x); }

/* (str, bytes-or-None) pairs in a list or tuple, as the Python writer takes them unchanged. */
static int plain_headers(PyObject *h) {
    if (!PyList_CheckExact(h) && !PyTuple_CheckExact(h)) return 0;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(h); k++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(h, k);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)) || !is_bytes_or_none(PyTuple_GET_ITEM(pair, 1)))
            return 0;
    }
    return 1;
}

/* An exact int in [lo, INT64_MAX]; 0 if anything else. */
static int plain_int(PyObject *x, long long lo, long long *n) {
    if (!PyLong_CheckExact(x)) return 0;
    int overflow = 0;
    *n = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (*n == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return !overflow && *n >= lo;
}

/* A record's absolute offset: the one given, else the previous record's + 1 (the base offset, or 0, for the
 * first), as MemoryRecordsBuilder.nextSequentialOffset; 0 for the Python path (not a plain int >= 0, or past
 * INT64_MAX). */
static int record_offset(PyObject *given, Py_ssize_t i, PyObject *base_arg, long long base, long long previous,
                         long long *offset) {
    if (given != Py_None) return plain_int(given, 0, offset);
    if (i == 0) *offset = base_arg == Py_None ? 0 : base;
    else if (previous == INT64_MAX) return 0;
    else *offset = previous + 1;
    return 1;
}

static PyObject *py_encode_records_v2(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *items, *base_arg, *horizon_arg;
    PyTypeObject *new_type, *record_type;
    if (!PyArg_ParseTuple(args, "OOOO!O!:encode_records_v2", &items, &base_arg, &horizon_arg, &PyType_Type,
                          &new_type, &PyType_Type, &record_type))
        return NULL;
    if (record_keys_init() < 0 || newrecord_slots(new_type) < 0) return NULL;
    if (!PyList_CheckExact(items) && !PyTuple_CheckExact(items)) Py_RETURN_NONE;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    long long base = 0, horizon = 0, previous = 0, base_timestamp = 0, max_timestamp = -1;
    int has_horizon = horizon_arg != Py_None;
    if (count == 0 || (base_arg != Py_None && !plain_int(base_arg, 0, &base)) ||
        (has_horizon && !plain_int(horizon_arg, 0, &horizon)))
        Py_RETURN_NONE;
    Buf out = {0};
    /* Room for as many bytes as the last call wrote: a writer's batches are alike, so the records are
     * written without growing (and copying) the buffer from 256 bytes up. */
    static Py_ssize_t last_size;
    if (buf_reserve(&out, last_size) < 0) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        RecordIn r;
        long long offset, timestamp = -1, delta;
        if (!record_in(PySequence_Fast_GET_ITEM(items, i), record_type, &r)) goto python;
        if (r.timestamp && !plain_int(r.timestamp, -1, &timestamp)) goto python;
        if (!record_offset(r.offset, i, base_arg, base, previous, &offset)) goto python;
        if (i == 0) {
            if (base_arg == Py_None) base = offset;
            base_timestamp = has_horizon ? horizon : timestamp;
        } else if (offset <= previous) {
            goto python;
        }
        if (offset < base || offset - base > INT32_MAX) goto python;
        if (!is_bytes_or_none(r.key) || !is_bytes_or_none(r.value)) goto python;
        PyObject *headers = r.headers;
        if (headers == Py_None || (PyTuple_CheckExact(headers) && PyTuple_GET_SIZE(headers) == 0)) headers = no_headers;
        else if (!plain_headers(headers)) goto python;
        if (__builtin_sub_overflow(timestamp, base_timestamp, &delta)) goto python;
        if (put_record_v2(&out, 0, delta, offset - base, bytes_data(r.key), bytes_size(r.key), bytes_data(r.value),
                          bytes_size(r.value), headers) < 0) {
            if (!PyErr_ExceptionMatches(E_Encode)) { buf_free(&out); return NULL; }
            PyErr_Clear();  /* e.g. a header key that is not valid UTF-8: the Python path says so */
            goto python;
        }
        if (timestamp > max_timestamp) max_timestamp = timestamp;
        previous = offset;
    }
    last_size = out.len;
    PyObject *data = bytes_of(&out);
    buf_free(&out);
    return data ? Py_BuildValue("(NnLLLL)", data, count, base, previous, base_timestamp, max_timestamp) : NULL;
python:
    buf_free(&out);
    Py_RETURN_NONE;
}

static PyMethodDef records_v2_methods[] = {
    {"encode_records_v2", py_encode_records_v2, METH_VARARGS,
     "encode_records_v2(items, base_offset, delete_horizon, NewRecord, Record) -> (records bytes, count, base offset, "
     "last offset, base timestamp, max timestamp), or None for the Python writer"},
    {NULL, NULL, 0, NULL}
};
