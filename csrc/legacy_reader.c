/* kcodec's compiled kernel: v0/v1 message sets, read message by message.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ================================================================ v0/v1 message sets, message by message
 * Kafka's AbstractLegacyRecordBatch: an uncompressed v0/v1 message is a batch of its own, and a compressed
 * wrapper's value a message set. These walk runs of messages straight into kcodec's Batch and Record objects,
 * without the generic decoders' tuples; the layout facts (LEGACY_*, printed before this file) come from the
 * schemas' legacy entities. A message they cannot finish (compressed, damaged, truncated, of another magic, a
 * CRC that does not hold, past a limit) ends the run without an error: the general decoders then decide what
 * it is and say where. */

#define LEGACY_ENTRY_MIN (LEGACY_LOG_ENTRY_V0_OVERHEAD + LEGACY_MESSAGE_V0_OVERHEAD)

typedef struct {
    int64_t offset, timestamp;  /* timestamp: -1 in v0 */
    uint32_t crc;
    int magic, log_append;
    const uint8_t *key, *value;
    int32_t key_len, value_len;  /* -1: null */
    Py_ssize_t next, total;      /* where the next log entry starts; this one's bytes */
} LegacyMsg;

/* A length-prefixed byte string inside [*q, stop): 1 when whole (a negative length is null). */
static inline int legacy_bytes(const uint8_t **q, const uint8_t *stop, const uint8_t **data, int32_t *len) {
    if (stop - *q < 4) return 0;
    int32_t n = (int32_t)load_be32(*q);
    *q += 4;
    if (n < 0) { *len = -1; *data = NULL; return 1; }
    if (n > stop - *q) return 0;
    *data = *q;
    *len = n;
    *q += n;
    return 1;
}

/* The log entry at p: 1 (m filled) when it is whole in [p, end), its size at most max_size, an
 * uncompressed message of magic 0 or 1 (`magic` when it is >= 0) whose key and value fill it exactly and
 * whose CRC-32 holds; else 0. */
static int legacy_message_at(const uint8_t *buf, Py_ssize_t p, Py_ssize_t end, int magic, int64_t max_size,
                             LegacyMsg *m) {
    if (end - p < LEGACY_ENTRY_MIN) return 0;
    int64_t size = (int32_t)load_be32(buf + p + LEGACY_LOG_ENTRY_V0_OFFSET_SIZE);
    const uint8_t *msg = buf + p + LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE;
    int mg = msg[LEGACY_MESSAGE_V0_OFFSET_MAGIC];
    if (mg > 1 || (magic >= 0 && mg != magic)) return 0;
    int64_t overhead = mg ? LEGACY_MESSAGE_V1_OVERHEAD : LEGACY_MESSAGE_V0_OVERHEAD;
    if (size < overhead || size > max_size || size > end - p - LEGACY_LOG_ENTRY_V0_OVERHEAD) return 0;
    int attributes = msg[LEGACY_MESSAGE_V0_OFFSET_ATTRIBUTES];
    if (attributes & LEGACY_MESSAGE_V0_ATTRIBUTES_COMPRESSION_MASK) return 0;
    const uint8_t *stop = msg + size;
    const uint8_t *q = msg + (mg ? LEGACY_MESSAGE_V1_OFFSET_KEY : LEGACY_MESSAGE_V0_OFFSET_KEY);
    if (!legacy_bytes(&q, stop, &m->key, &m->key_len) || !legacy_bytes(&q, stop, &m->value, &m->value_len) ||
        q != stop)
        return 0;
    m->crc = load_be32(msg + LEGACY_MESSAGE_V0_OFFSET_CRC);
    if (crc32_of(msg + LEGACY_MESSAGE_V0_OFFSET_MAGIC, size - LEGACY_MESSAGE_V0_OFFSET_MAGIC) != m->crc) return 0;
    m->offset = (int64_t)load_be64(buf + p);
    m->magic = mg;
    m->timestamp = mg ? (int64_t)load_be64(msg + LEGACY_MESSAGE_V1_OFFSET_TIMESTAMP) : -1;
    m->log_append = mg && (attributes & LEGACY_MESSAGE_V1_ATTRIBUTES_TIMESTAMP_TYPE_MASK);
    m->total = LEGACY_LOG_ENTRY_V0_OVERHEAD + size;
    m->next = p + m->total;
    return 1;
}

static inline PyObject *bytes_or_none(const uint8_t *data, int32_t len) {
    if (len < 0) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)data, len);
}

/* A Record (a tuple subclass) of a v0/v1 message whose CRC holds: offset, timestamp, timestamp_type, key,
 * value, headers (), sequence -1, control None, crc, crc_valid True, magic. Steals offset and crc. */
static PyObject *legacy_record(PyTypeObject *type, const LegacyMsg *m, PyObject *offset, PyObject *timestamp,
                               PyObject *ts_type, PyObject *crc) {
    PyObject *r = untracked_tuple_of(type, 11);  /* ints, bytes, None and constants: no cycle */
    if (!r) { Py_XDECREF(offset); Py_XDECREF(crc); return NULL; }
    PyTuple_SET_ITEM(r, 0, offset);
    Py_XINCREF(timestamp);
    PyTuple_SET_ITEM(r, 1, timestamp);
    Py_INCREF(ts_type);
    PyTuple_SET_ITEM(r, 2, ts_type);
    PyTuple_SET_ITEM(r, 3, bytes_or_none(m->key, m->key_len));
    PyTuple_SET_ITEM(r, 4, bytes_or_none(m->value, m->value_len));
    PyTuple_SET_ITEM(r, 5, PyTuple_New(0));
    PyTuple_SET_ITEM(r, 6, PyLong_FromLong(-1));
    Py_INCREF(Py_None);
    PyTuple_SET_ITEM(r, 7, Py_None);
    PyTuple_SET_ITEM(r, 8, crc);
    Py_INCREF(Py_True);
    PyTuple_SET_ITEM(r, 9, Py_True);
    PyTuple_SET_ITEM(r, 10, PyLong_FromLong(m->magic));
    for (int k = 0; k < 11; k++)
        if (!PyTuple_GET_ITEM(r, k)) { Py_DECREF(r); return NULL; }
    return r;
}

/* How a Batch (kcodec.records.model, a dataclass with slots) is filled: the slot offsets of the fields
 * computed per message, in LEGACY_BATCH_FIELDS order, and of the fields every uncompressed message sets to
 * the same value. Found once per layout from the type's member descriptors; every slot of __slots__ must be
 * covered exactly once, so no field is ever left unset. */
enum { BF_POSITION, BF_SIZE, BF_MAGIC, BF_BASE_OFFSET, BF_LAST_OFFSET, BF_CRC, BF_COMPUTED_CRC, BF_TIMESTAMP_TYPE,
       BF_MAX_TIMESTAMP, BF_RECORDS, BF_STORED_RECORDS_SIZE, BF_RECORDS_SIZE, BF_COUNT };
static const char *const LEGACY_BATCH_FIELDS[BF_COUNT] = {
    "position", "size", "magic", "base_offset", "last_offset", "crc", "computed_crc", "timestamp_type",
    "max_timestamp", "records", "stored_records_size", "records_size"};
#define BATCH_MAX_CONSTANTS 32

typedef struct {
    PyObject *layout;  /* the (type, names, constants) tuple these offsets were found for */
    PyTypeObject *type;
    Py_ssize_t off[BF_COUNT], nconst, const_off[BATCH_MAX_CONSTANTS];
    PyObject *const_value[BATCH_MAX_CONSTANTS];
} BatchLayout;

static BatchLayout batch_layout;

/* The offset of type's own object slot `name`, found in its member definitions (not by attribute: a class
 * may read a slot through a property of the same name, as Batch does its CRC fields). */
static Py_ssize_t slot_offset(PyTypeObject *type, PyObject *name) {
    const char *s = PyUnicode_AsUTF8(name);
    if (!s) return -1;
    for (PyMemberDef *m = type->tp_members; m && m->name; m++)
        if (strcmp(m->name, s) == 0 && m->type == T_OBJECT_EX) return m->offset;
    PyErr_Format(PyExc_TypeError, "%R is not a slot of %s", name, type->tp_name);
    return -1;
}

/* layout: (Batch, LEGACY_BATCH_FIELDS as a tuple, ((name, value), ...) of the constant fields). */
static BatchLayout *find_batch_layout(PyObject *layout) {
    if (batch_layout.layout == layout) return &batch_layout;
    PyObject *type, *names, *constants;
    if (!PyArg_ParseTuple(layout, "O!O!O!", &PyType_Type, &type, &PyTuple_Type, &names, &PyTuple_Type, &constants))
        return NULL;
    BatchLayout l = {0};
    l.type = (PyTypeObject *)type;
    l.nconst = PyTuple_GET_SIZE(constants);
    if (PyTuple_GET_SIZE(names) != BF_COUNT || l.nconst > BATCH_MAX_CONSTANTS || l.type->tp_dictoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "batch layout: not the fields this kernel fills, or a type with a __dict__");
        return NULL;
    }
    for (int k = 0; k < BF_COUNT; k++) {
        PyObject *name = PyTuple_GET_ITEM(names, k);
        if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, LEGACY_BATCH_FIELDS[k]) != 0) {
            PyErr_Format(PyExc_TypeError, "batch layout: field %d must be %s", k, LEGACY_BATCH_FIELDS[k]);
            return NULL;
        }
        if ((l.off[k] = slot_offset(l.type, name)) < 0) return NULL;
    }
    for (Py_ssize_t k = 0; k < l.nconst; k++) {
        PyObject *item = PyTuple_GET_ITEM(constants, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "batch layout: constants are (name, value) pairs");
            return NULL;
        }
        if ((l.const_off[k] = slot_offset(l.type, PyTuple_GET_ITEM(item, 0))) < 0) return NULL;
        l.const_value[k] = PyTuple_GET_ITEM(item, 1);
    }
    /* every slot exactly once: as many names as slots, all slots of the type, no offset twice */
    PyObject *slots = PyObject_GetAttrString(type, "__slots__");
    if (!slots) return NULL;
    Py_ssize_t nslots = PySequence_Size(slots);
    Py_DECREF(slots);
    if (nslots < 0) return NULL;
    Py_ssize_t all[BF_COUNT + BATCH_MAX_CONSTANTS], n = 0;
    for (int k = 0; k < BF_COUNT; k++) all[n++] = l.off[k];
    for (Py_ssize_t k = 0; k < l.nconst; k++) all[n++] = l.const_off[k];
    int distinct = 1;
    for (Py_ssize_t i = 0; i < n; i++)
        for (Py_ssize_t j = i + 1; j < n; j++) distinct &= all[i] != all[j];
    if (n != nslots || !distinct) {
        PyErr_Format(PyExc_TypeError, "batch layout: %zd fields named for the %zd slots of %s, or one twice", n,
                     nslots, l.type->tp_name);
        return NULL;
    }
    Py_INCREF(layout);
    Py_XSETREF(batch_layout.layout, layout);  /* the layout holds the type and the constants */
    l.layout = layout;
    batch_layout = l;
    return &batch_layout;
}

static inline void set_slot(PyObject *o, Py_ssize_t off, PyObject *v) {  /* steals v */
    *(PyObject **)((char *)o + off) = v;
}

/* One uncompressed message as a Batch holding its one Record (the fields decode.py's general path sets). */
static PyObject *legacy_batch(BatchLayout *l, PyTypeObject *rtype, const LegacyMsg *m, Py_ssize_t position,
                              PyObject *ts_type) {
    PyObject *b = untracked_batch_of(l->type);  /* tracked below, once every slot is set */
    if (!b) return NULL;
    PyObject *offset = PyLong_FromLongLong(m->offset), *crc = PyLong_FromUnsignedLong(m->crc);
    PyObject *ts = PyLong_FromLongLong(m->timestamp);
    int64_t n = m->value_len < 0 ? 0 : m->value_len;
    PyObject *stored = PyLong_FromLongLong(n), *records = PyList_New(1);
    PyObject *pos = PyLong_FromSsize_t(position), *size = PyLong_FromSsize_t(m->total);
    if (!offset || !crc || !ts || !stored || !records || !pos || !size) goto fail;
    Py_INCREF(offset);
    Py_INCREF(crc);
    PyObject *record = legacy_record(rtype, m, offset, ts, ts_type, crc);
    if (!record) goto fail;
    PyList_SET_ITEM(records, 0, record);
    Py_INCREF(offset);
    Py_INCREF(crc);
    Py_INCREF(stored);
    Py_INCREF(ts_type);
    set_slot(b, l->off[BF_POSITION], pos);
    set_slot(b, l->off[BF_SIZE], size);
    set_slot(b, l->off[BF_MAGIC], PyLong_FromLong(m->magic));
    set_slot(b, l->off[BF_BASE_OFFSET], offset);
    set_slot(b, l->off[BF_LAST_OFFSET], offset);
    set_slot(b, l->off[BF_CRC], crc);
    set_slot(b, l->off[BF_COMPUTED_CRC], crc);
    set_slot(b, l->off[BF_TIMESTAMP_TYPE], ts_type);
    set_slot(b, l->off[BF_MAX_TIMESTAMP], ts);
    set_slot(b, l->off[BF_RECORDS], records);
    set_slot(b, l->off[BF_STORED_RECORDS_SIZE], stored);
    set_slot(b, l->off[BF_RECORDS_SIZE], stored);
    for (Py_ssize_t k = 0; k < l->nconst; k++) {
        Py_INCREF(l->const_value[k]);
        set_slot(b, l->const_off[k], l->const_value[k]);
    }
    PyObject_GC_Track(b);
    return b;
fail:
    Py_XDECREF(offset);
    Py_XDECREF(crc);
    Py_XDECREF(ts);
    Py_XDECREF(stored);
    Py_XDECREF(records);
    Py_XDECREF(pos);
    Py_XDECREF(size);
    Py_DECREF(b);
    return NULL;
}

static int check_window(Py_buffer *view, Py_ssize_t pos, Py_ssize_t end) {
    if (pos < 0 || end > view->len || pos > end) {
        raise_at(E_BadLength, pos, NULL, "need 0 <= pos <= end <= len(buf)");
        return -1;
    }
    return 0;
}

/* legacy_batches(buf, pos, end, base, max_count, max_size, layout, Record, ts_types) -> (batches, next_pos) */
static PyObject *py_legacy_batches(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t pos, end, base, max_count;
    long long max_size;
    PyObject *layout, *rtype, *ts_none, *ts_create, *ts_append;
    if (!PyArg_ParseTuple(args, "y*nnnnLOO!(OOO)", &view, &pos, &end, &base, &max_count, &max_size, &layout,
                          &PyType_Type, &rtype, &ts_none, &ts_create, &ts_append))
        return NULL;
    PyObject *list = NULL;
    BatchLayout *l = check_window(&view, pos, end) < 0 ? NULL : find_batch_layout(layout);
    if (l && !PyType_IsSubtype((PyTypeObject *)rtype, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "the record type must be a tuple subclass");
        l = NULL;
    }
    if (!l) goto done;
    int gc_was_enabled = PyGC_Disable();  /* thousands of new containers, all alive: no collection pays */
    list = PyList_New(0);
    const uint8_t *buf = (const uint8_t *)view.buf;
    LegacyMsg m;
    while (list && (max_count < 0 || PyList_GET_SIZE(list) < max_count) &&
           legacy_message_at(buf, pos, end, -1, max_size, &m)) {
        PyObject *ts_type = m.magic == 0 ? ts_none : m.log_append ? ts_append : ts_create;
        PyObject *batch = legacy_batch(l, (PyTypeObject *)rtype, &m, base + pos, ts_type);
        if (!batch || PyList_Append(list, batch) < 0) Py_CLEAR(list);
        Py_XDECREF(batch);
        pos = m.next;
    }
    if (gc_was_enabled) PyGC_Enable();
done:
    PyBuffer_Release(&view);
    return list ? Py_BuildValue("(Nn)", list, pos) : NULL;
}

/* legacy_inner_records(data, magic, wrapper_offset, ts_type, append_time, Record) -> list of Records or None.
 * The message set of a compressed wrapper when it is exactly whole messages of the wrapper's magic, none
 * compressed, every CRC holding, at least one. Offsets: absolute in v0; in v1 relative, the last one the
 * wrapper's (unless the wrapper's offset is 0). append_time: the wrapper's timestamp under LogAppendTime,
 * else None (each message's own; -1 in v0). None: the general path decides (and says what is wrong). */
static PyObject *py_legacy_inner_records(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    int magic;
    long long wrapper_offset;
    PyObject *ts_type, *append_time, *rtype;
    if (!PyArg_ParseTuple(args, "y*iLOOO!", &view, &magic, &wrapper_offset, &ts_type, &append_time, &PyType_Type,
                          &rtype))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)rtype, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "the record type must be a tuple subclass");
        PyBuffer_Release(&view);
        return NULL;
    }
    const uint8_t *buf = (const uint8_t *)view.buf;
    Py_ssize_t end = view.len, count = 0, room = 0;
    LegacyMsg *msgs = NULL;
    int64_t addend = 0;
    for (Py_ssize_t p = 0; p < end; p = msgs[count++].next) {  /* first: is it all whole and sound */
        if (count == room) {
            room = room ? 2 * room : 64;
            LegacyMsg *more = PyMem_Realloc(msgs, (size_t)room * sizeof(LegacyMsg));
            if (!more) { PyMem_Free(msgs); PyBuffer_Release(&view); return PyErr_NoMemory(); }
            msgs = more;
        }
        if (!legacy_message_at(buf, p, end, magic, INT64_MAX, &msgs[count])) goto none;
    }
    if (count == 0) goto none;
    if (magic == 1 && wrapper_offset != 0) {  /* relative offsets: the last one is the wrapper's */
        if (wrapper_offset < msgs[count - 1].offset) goto none;
        addend = wrapper_offset - msgs[count - 1].offset;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        long long sum;
        if (__builtin_add_overflow((long long)msgs[i].offset, (long long)addend, &sum)) goto none;
        msgs[i].offset = sum;
    }
    int gc_was_enabled = PyGC_Disable();
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++) {
        const LegacyMsg *m = &msgs[i];
        PyObject *record = NULL;
        PyObject *ts = append_time != Py_None ? (Py_INCREF(append_time), append_time)
                                              : PyLong_FromLongLong(m->timestamp);
        if (ts) record = legacy_record((PyTypeObject *)rtype, m, PyLong_FromLongLong(m->offset), ts, ts_type,
                                       PyLong_FromUnsignedLong(m->crc));
        Py_XDECREF(ts);
        if (!record) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, record);
    }
    if (gc_was_enabled) PyGC_Enable();
    PyMem_Free(msgs);
    PyBuffer_Release(&view);
    return list;
none:
    PyMem_Free(msgs);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}
