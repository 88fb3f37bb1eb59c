/* kcodec's compiled kernel: encoding helpers.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- encoding */

static long long as_int(PyObject *x, long long lo, long long hi, const char *field) {
    int overflow = 0;
    long long n = PyLong_Check(x) && !PyBool_Check(x) ? PyLong_AsLongLongAndOverflow(x, &overflow) : -1;
    if (!PyLong_Check(x) || PyBool_Check(x) || overflow || n < lo || n > hi) {
        if (!PyErr_Occurred()) PyErr_Format(E_Encode, "%s must be an integer in [%lld, %lld]", field, lo, hi);
        return -1;
    }
    return n;
}

/* The same check and message as as_int's, for callers that hold a C integer already. */
__attribute__((unused)) static int int_in_range(long long n, long long lo, long long hi, const char *field) {
    if (n < lo || n > hi) {
        PyErr_Format(E_Encode, "%s must be an integer in [%lld, %lld]", field, lo, hi);
        return -1;
    }
    return 0;
}

static inline int put_be8(Buf *b, long long v) { uint8_t x = (uint8_t)v; return buf_put(b, &x, 1); }
static inline int put_be16(Buf *b, long long v) { uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v}; return buf_put(b, x, 2); }
static inline int put_be32(Buf *b, long long v) {
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    return buf_put(b, x, 4);
}
static inline int put_be64(Buf *b, long long v) {
    return put_be32(b, (long long)((unsigned long long)v >> 32)) < 0 ? -1 : put_be32(b, v & 0xffffffffLL);
}
static inline int put_uvarint64(Buf *b, uint64_t u) {
    uint8_t x[10];
    int n = 0;
    while (u >= 0x80) { x[n++] = (uint8_t)(u | 0x80); u >>= 7; }
    x[n++] = (uint8_t)u;
    return buf_put(b, x, n);
}
static inline int put_uvarint32(Buf *b, long long v) { return put_uvarint64(b, (uint32_t)v); }
static inline int put_varint32(Buf *b, long long v) {
    int32_t s = (int32_t)v;
    return put_uvarint64(b, (uint32_t)(((uint32_t)s << 1) ^ (uint32_t)(s >> 31)));
}
static inline int put_varint64(Buf *b, long long v) {
    return put_uvarint64(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* An EncodedArray: its count through the array's prefix writer, then its bytes as they are. */
__attribute__((unused)) static int put_encoded_array(Buf *out, PyObject *x, int (*put_count)(Buf *, long long)) {
    PyObject *data = PyObject_GetAttrString(x, "data");
    PyObject *count = data ? PyObject_GetAttrString(x, "count") : NULL;
    int rc = -1;
    if (count) {
        long long n = PyLong_AsLongLong(count);
        if (n == -1 && PyErr_Occurred()) {
            /* rc stays -1 */
        } else if (!PyBytes_Check(data)) {
            PyErr_SetString(E_Encode, "EncodedArray data must be bytes");
        } else if (put_count(out, n) >= 0 && buf_put(out, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)) >= 0) {
            rc = 0;
        }
    }
    Py_XDECREF(data);
    Py_XDECREF(count);
    return rc;
}

/* A length was reserved at `at` (room bytes); write it and close the gap. */
static int patch_length_varint(Buf *b, Py_ssize_t at, int room) {
    Py_ssize_t body = b->len - at - room;
    if (body > INT32_MAX) { PyErr_SetString(E_Encode, "length exceeds int32"); return -1; }
    uint32_t u = ((uint32_t)body << 1) ^ (uint32_t)((int32_t)body >> 31);  /* zigzag, no buffer of its own */
    Py_ssize_t n = 0;
    while (u >= 0x80) { b->data[at + n++] = (char)(u | 0x80); u >>= 7; }
    b->data[at + n++] = (char)u;
    if (n < room) {
        memmove(b->data + at + n, b->data + at + room, (size_t)body);
        b->len -= room - n;
    }
    return 0;
}
__attribute__((unused)) static int patch_length_uvarint(Buf *b, Py_ssize_t at, int room) { return patch_length_varint(b, at, room); }
__attribute__((unused)) static int patch_length_int32(Buf *b, Py_ssize_t at, int room) {
    long long body = b->len - at - room;
    if (body > INT32_MAX) { PyErr_SetString(E_Encode, "length exceeds int32"); return -1; }
    b->data[at] = (char)(body >> 24); b->data[at + 1] = (char)(body >> 16);
    b->data[at + 2] = (char)(body >> 8); b->data[at + 3] = (char)body;
    return 0;
}
