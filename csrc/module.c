/* kcodec's compiled kernel: the module's set-up.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* The entry points every kernel has; the printed method table holds the per-entity ones, and
 * records_v2.c, columns.c and legacy_writer.c give theirs (added by PyInit__ckernel when included). */
static PyMethodDef kernel_methods[] = {
    {"add_to_items", py_add_to_items, METH_VARARGS, "add_to_items(list, i, n): add n to item i of every tuple"},
    {"legacy_batches", py_legacy_batches, METH_VARARGS,
     "legacy_batches(buf, pos, end, base, max_count, max_size, layout, Record, ts_types) -> (list of Batch, "
     "next_pos): the run of uncompressed v0/v1 messages from pos"},
    {"crc32", py_crc32, METH_O, "crc32(buf) -> CRC-32 (IEEE, as zlib.crc32) of buf"},
    {"legacy_inner_records", py_legacy_inner_records, METH_VARARGS,
     "legacy_inner_records(data, magic, wrapper_offset, ts_type, append_time, Record) -> list of Record or None"},
    {"tuple_fields", py_tuple_fields, METH_VARARGS,
     "tuple_fields(cls, names, docs) -> {name: read-only member descriptor of tuple item i}"},
    {"reuse_records", py_reuse_records, METH_VARARGS,
     "reuse_records(cls, n): free cls's instances through the kernel, which builds freed ones of n items again"},
    {"reuse_batches", py_reuse_batches, METH_VARARGS,
     "reuse_batches(cls, keep): free cls's instances through the kernel, keeping up to `keep` to fill again "
     "(v0/v1 Batches)"},
    {"murmur2", py_murmur2, METH_O, "murmur2(buf) -> Kafka's murmur2 of buf, a signed 32-bit int (Utils.murmur2)"},
    {NULL, NULL, 0, NULL}
};

/* What the module needs before it is made: kcodec's exception classes and the functions it calls. */
static int kernel_init(void) {
    PyObject *errors = PyImport_ImportModule("kcodec.errors");
    if (!errors) return -1;
    E_Truncated = PyObject_GetAttrString(errors, "TruncatedError");
    E_BadLength = PyObject_GetAttrString(errors, "BadLengthError");
    E_RecordCount = PyObject_GetAttrString(errors, "RecordCountError");
    E_VarintTooLong = PyObject_GetAttrString(errors, "VarintTooLongError");
    E_Corrupt = PyObject_GetAttrString(errors, "CorruptError");
    E_Encode = PyObject_GetAttrString(errors, "EncodeError");
    E_Magic = PyObject_GetAttrString(errors, "UnknownMagicError");
    E_Compression = PyObject_GetAttrString(errors, "CompressionError");
    E_Crc = PyObject_GetAttrString(errors, "CrcMismatchError");
    E_Decode = PyObject_GetAttrString(errors, "DecodeError");
    F_corrupt_message = PyObject_GetAttrString(errors, "record_corrupt_message");
    Py_DECREF(errors);
    if (!E_Truncated || !E_BadLength || !E_RecordCount || !E_VarintTooLong || !E_Corrupt || !E_Encode || !E_Magic ||
        !E_Compression || !E_Crc || !E_Decode || !F_corrupt_message)
        return -1;
    /* the inner message set of a compressed wrapper; imported lazily by Python's decoders too */
    PyObject *compression = PyImport_ImportModule("kcodec.runtime.compression");
    if (!compression) return -1;
    F_decompress = PyObject_GetAttrString(compression, "decompress");
    DEFAULT_LIMIT = PyObject_GetAttrString(compression, "DEFAULT_MAX_DECOMPRESSED_SIZE");
    Py_DECREF(compression);
    INSIDE_COMPRESSED = PyUnicode_InternFromString("inside a compressed stream");
    if (!F_decompress || !DEFAULT_LIMIT || !INSIDE_COMPRESSED) return -1;
    PyObject *encoded = PyImport_ImportModule("kcodec.runtime.encoded");
    if (!encoded) return -1;
    T_EncodedArray = PyObject_GetAttrString(encoded, "EncodedArray");
    Py_DECREF(encoded);
    if (!T_EncodedArray) return -1;
    if (PyType_Ready(&LazyItems_Type) < 0 || PyType_Ready(&LazyIter_Type) < 0 || PyType_Ready(&OwnedBuffer_Type) < 0)
        return -1;
    crc32_init();
    static int fork_handlers;  /* once per process: a second prepare handler would lock the pool twice */
    if (!fork_handlers && pthread_atfork(pool_before_fork, pool_after_fork, pool_after_fork) != 0) {
        PyErr_NoMemory();
        return -1;
    }
    fork_handlers = 1;
    return 0;
}

/* (name, version) of the entity versions the kernel decodes, as the printed table lists them. */
typedef struct { const char *name; int version; } EntityVersion;

/* The module's ENTITIES: a tuple of (name, version) from a table that ends with a NULL name. */
static PyObject *entity_versions(const EntityVersion *table) {
    Py_ssize_t n = 0;
    while (table[n].name) n++;
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *item = Py_BuildValue("(si)", table[i].name, table[i].version);
        if (!item) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}
