/* kcodec's compiled kernel: Kafka's murmur2.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* MurmurHash2 as Kafka's Utils.murmur2 computes it (seed 0x9747b28c), as a signed 32-bit int: the
 * default partitioner's hash of a record key (columns.c's partitions_for_keys, kcodec.log.partitioner). */
static int32_t kafka_murmur2(const uint8_t *data, Py_ssize_t length) {
    const uint32_t m = 0x5bd1e995u;
    uint32_t h = 0x9747b28cu ^ (uint32_t)length;
    Py_ssize_t whole = length & ~(Py_ssize_t)3;
    for (Py_ssize_t i = 0; i < whole; i += 4) {
        uint32_t k = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16 |
                     (uint32_t)data[i + 3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h = (h * m) ^ k;
    }
    switch (length & 3) {  /* the last 1-3 bytes, as Java's fall-through switch adds them */
    case 3: h ^= (uint32_t)data[whole + 2] << 16; /* fall through */
    case 2: h ^= (uint32_t)data[whole + 1] << 8; /* fall through */
    case 1: h ^= data[whole]; h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return (int32_t)h;
}

/* murmur2(buf) -> int: kafka_murmur2 of a bytes-like object (kcodec.log.partitioner.murmur2). */
static PyObject *py_murmur2(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    int32_t h = kafka_murmur2((const uint8_t *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromLong(h);
}
