/* kcodec's compiled kernel: `kcodec dump --json` record text from Arrow columns.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after columns.c, whose Arrow array readers (BinArr, HeadersArr) it uses (see kernel.h for the order).
 *
 * json_records formats rows of a batch's record columns (kcodec.records.columnar.schema) as
 * kcodec.tools.dump.log.record_json prints one record through as_ndjson (json.dumps with
 * separators=(",", ":") and ensure_ascii=False), records joined by commas, into a bytearray the caller
 * keeps from batch to batch (fresh memory for every batch's text would cost a page fault per 4 KiB): no
 * Python object per record. Whatever it does not print exactly as json.dumps would (a null in an integer
 * column, an unknown timestamp type, a null header or header key, a header key that is not UTF-8) makes
 * it return None, and the caller formats those rows the Python way. */

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- text writers; the caller has reserved room (json_room) */

static const char DIGIT_PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline char *put_int(char *o, long long v) {
    char tmp[24];
    char *t = tmp + sizeof tmp;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        *--t = DIGIT_PAIRS[d + 1];
        *--t = DIGIT_PAIRS[d];
    }
    if (u >= 10) {
        *--t = DIGIT_PAIRS[u * 2 + 1];
        *--t = DIGIT_PAIRS[u * 2];
    } else {
        *--t = (char)('0' + u);
    }
    if (v < 0) *--t = '-';
    size_t n = (size_t)(tmp + sizeof tmp - t);
    memcpy(o, t, n);
    return o + n;
}

static inline char *put_lit(char *o, const char *s, size_t n) {
    memcpy(o, s, n);
    return o + n;
}
#define PUT_LIT(o, s) put_lit((o), (s), sizeof(s) - 1)

/* "00".."ff": two characters a byte, copied as one 16-bit word */
static char HEX_PAIRS[512];

static void hex_pairs_init(void) {
    static const char digits[] = "0123456789abcdef";
    for (int b = 0; b < 256; b++) {
        HEX_PAIRS[2 * b] = digits[b >> 4];
        HEX_PAIRS[2 * b + 1] = digits[b & 15];
    }
}

static inline char *put_hex(char *restrict o, const uint8_t *restrict p, Py_ssize_t n) {
    Py_ssize_t i = 0;
#ifdef __SSE2__
    const __m128i low4 = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9), zero = _mm_set1_epi8('0');
    const __m128i letters = _mm_set1_epi8('a' - '0' - 10);
    for (; i + 16 <= n; i += 16) {  /* sixteen bytes: their nibbles interleaved, each to '0'..'9' or 'a'..'f' */
        __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), low4), lo = _mm_and_si128(x, low4);
        __m128i a = _mm_unpacklo_epi8(hi, lo), b = _mm_unpackhi_epi8(hi, lo);
        a = _mm_add_epi8(_mm_add_epi8(a, zero), _mm_and_si128(_mm_cmpgt_epi8(a, nine), letters));
        b = _mm_add_epi8(_mm_add_epi8(b, zero), _mm_and_si128(_mm_cmpgt_epi8(b, nine), letters));
        _mm_storeu_si128((__m128i *)(o + 2 * i), a);
        _mm_storeu_si128((__m128i *)(o + 2 * i + 16), b);
    }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 4 <= n; i += 4) {  /* four bytes, eight characters, one store */
        uint16_t a, b, c, d;
        memcpy(&a, HEX_PAIRS + 2 * p[i], 2);
        memcpy(&b, HEX_PAIRS + 2 * p[i + 1], 2);
        memcpy(&c, HEX_PAIRS + 2 * p[i + 2], 2);
        memcpy(&d, HEX_PAIRS + 2 * p[i + 3], 2);
        uint64_t w = (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32 | (uint64_t)d << 48;  /* little-endian */
        memcpy(o + 2 * i, &w, 8);
    }
#endif
    for (; i < n; i++) memcpy(o + 2 * i, HEX_PAIRS + 2 * p[i], 2);
    return o + 2 * n;
}

/* base64.b64encode: the standard alphabet, '=' padding. */
static inline char *put_base64(char *o, const uint8_t *p, Py_ssize_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t w = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8) | p[i + 2];
        o[0] = abc[w >> 18];
        o[1] = abc[(w >> 12) & 63];
        o[2] = abc[(w >> 6) & 63];
        o[3] = abc[w & 63];
        o += 4;
    }
    if (n - i == 1) {
        uint32_t w = (uint32_t)p[i] << 16;
        o = put_lit(o, (char[]){abc[w >> 18], abc[(w >> 12) & 63], '=', '='}, 4);
    } else if (n - i == 2) {
        uint32_t w = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8);
        o = put_lit(o, (char[]){abc[w >> 18], abc[(w >> 12) & 63], abc[(w >> 6) & 63], '='}, 4);
    }
    return o;
}

/* UTF-8 text inside quotes as json.dumps(..., ensure_ascii=False) escapes it: '"', '\\', the short
 * escapes \b \f \n \r \t, other bytes below 0x20 as \u00xx; everything else as it is. */
static inline char *put_escaped(char *o, const uint8_t *p, Py_ssize_t n) {
    static const char digits[] = "0123456789abcdef";
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default: o = put_lit(o, (char[]){'u', '0', '0', digits[c >> 4], digits[c & 15]}, 5);
        }
    }
    return o;
}

enum { JSON_HEX, JSON_BASE64, JSON_UTF8 };

/* The most text n bytes can take in an encoding (quotes included). */
static inline Py_ssize_t json_room(Py_ssize_t n, int encoding) {
    return 2 + (encoding == JSON_HEX ? 2 * n : encoding == JSON_BASE64 ? (n + 2) / 3 * 4 : 6 * n);
}

/* A value in the encoding, quoted, or null. Under utf8 the bytes are UTF-8 (checked before). */
static inline char *put_bytes(char *o, Span s, int encoding) {
    if (!s.p) return PUT_LIT(o, "null");
    *o++ = '"';
    const uint8_t *p = (const uint8_t *)s.p;
    o = encoding == JSON_HEX ? put_hex(o, p, s.n) : encoding == JSON_BASE64 ? put_base64(o, p, s.n)
                                                                          : put_escaped(o, p, s.n);
    *o++ = '"';
    return o;
}

/* What a record's columns hold, read and checked. */
typedef struct {
    IntArr offset, timestamp, ts_type, sequence;
    BinArr key, value;
    HeadersArr headers;
    const char *names[3];  /* the timestamp types -1, 0, 1 as Kafka names them */
    Py_ssize_t name_len[3];
    int encoding;
} RecordCols;

enum { CAN_PRINT = 1, PYTHON_PRINTS = 0 };

/* Row i's header k: key and value spans; 0 when the Python way prints it (a null header or key). */
static inline int header_at(const HeadersArr *h, int32_t k, Span *key, Span *value) {
    if (h->has_svalid && !bit_set(&h->svalid, h->soffset + k)) return PYTHON_PRINTS;
    if (bin_at(&h->key, k, key) < 0 || bin_at(&h->value, k, value) < 0) return -1;
    return key->p ? CAN_PRINT : PYTHON_PRINTS;
}

/* Row i checked: 1 printable, 0 the Python way, -1 error. Under utf8, *bad is set to the field that is not
 * UTF-8 (0 key, 1 value, 2 + k header k) and 1 returned. *room: the most text the row can take. */
static int check_row(const RecordCols *c, Py_ssize_t i, Py_ssize_t *room, Py_ssize_t *bad) {
    long long v;
    Span key, value;
    *bad = -1;
    if (!int_at(&c->offset, i, &v) || !int_at(&c->timestamp, i, &v) || !int_at(&c->sequence, i, &v) ||
        !int_at(&c->ts_type, i, &v) || v < -1 || v > 1)
        return PYTHON_PRINTS;
    if (bin_at(&c->key, i, &key) < 0 || bin_at(&c->value, i, &value) < 0) return -1;
    int utf8 = c->encoding == JSON_UTF8;
    if (utf8 && key.p && !utf8_valid((const uint8_t *)key.p, key.n)) *bad = 0;
    else if (utf8 && value.p && !utf8_valid((const uint8_t *)value.p, value.n)) *bad = 1;
    Py_ssize_t n = 200 + c->name_len[v + 1] + json_room(key.n, c->encoding) + json_room(value.n, c->encoding);
    const HeadersArr *h = &c->headers;
    Py_ssize_t j = h->offset + i;
    if (!(h->has_valid && !bit_set(&h->valid, j))) {
        int32_t lo, hi;
        if (list_at(&h->offsets, j, h->children, &lo, &hi) < 0) return -1;
        for (int32_t k = lo; k < hi; k++) {
            Span hk, hv;
            int got = header_at(h, k, &hk, &hv);
            if (got <= 0) return got;
            if (!utf8_valid((const uint8_t *)hk.p, hk.n)) return PYTHON_PRINTS;
            if (utf8 && *bad < 0 && hv.p && !utf8_valid((const uint8_t *)hv.p, hv.n)) *bad = 2 + (k - lo);
            n += 8 + 6 * hk.n + json_room(hv.n, c->encoding);
        }
    }
    *room = n;
    return CAN_PRINT;
}

/* Row i as record_json prints it, at o (room reserved by check_row). */
static char *put_row(const RecordCols *c, Py_ssize_t i, char *o) {
    long long offset, timestamp, sequence, type;
    Span key, value;
    int_at(&c->offset, i, &offset);
    int_at(&c->timestamp, i, &timestamp);
    int_at(&c->sequence, i, &sequence);
    int_at(&c->ts_type, i, &type);
    bin_at(&c->key, i, &key);
    bin_at(&c->value, i, &value);
    o = PUT_LIT(o, "{\"offset\":");
    o = put_int(o, offset);
    o = PUT_LIT(o, ",\"timestamp\":");
    o = put_int(o, timestamp);
    o = PUT_LIT(o, ",\"timestampType\":\"");
    o = put_lit(o, c->names[type + 1], (size_t)c->name_len[type + 1]);
    o = PUT_LIT(o, "\",\"key\":");
    o = put_bytes(o, key, c->encoding);
    o = PUT_LIT(o, ",\"value\":");
    o = put_bytes(o, value, c->encoding);
    o = PUT_LIT(o, ",\"headers\":[");
    const HeadersArr *h = &c->headers;
    Py_ssize_t j = h->offset + i;
    if (!(h->has_valid && !bit_set(&h->valid, j))) {
        int32_t lo = ((const int32_t *)h->offsets.buf)[j], hi = ((const int32_t *)h->offsets.buf)[j + 1];
        for (int32_t k = lo; k < hi; k++) {
            Span hk, hv;
            header_at(h, k, &hk, &hv);
            if (k > lo) *o++ = ',';
            o = PUT_LIT(o, "[\"");
            o = put_escaped(o, (const uint8_t *)hk.p, hk.n);
            o = PUT_LIT(o, "\",");
            o = put_bytes(o, hv, c->encoding);
            *o++ = ']';
        }
    }
    o = PUT_LIT(o, "],\"sequence\":");
    o = put_int(o, sequence);
    *o++ = '}';
    return o;
}

static void record_cols_release(RecordCols *c) {
    int_release(&c->offset);
    int_release(&c->timestamp);
    int_release(&c->ts_type);
    int_release(&c->sequence);
    bin_release(&c->key);
    bin_release(&c->value);
    headers_release(&c->headers);
}

static PyObject *py_json_records(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *offset, *timestamp, *ts_type, *key, *value, *headers, *sequence, *names, *out_arg;
    Py_ssize_t start, count;
    RecordCols c;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "OOOOOOOO!innO:json_records", &offset, &timestamp, &ts_type, &key, &value, &headers,
                          &sequence, &PyTuple_Type, &names, &c.encoding, &start, &count, &out_arg))
        return NULL;
    if (out_arg != Py_None && !PyByteArray_CheckExact(out_arg)) {
        PyErr_SetString(PyExc_TypeError, "json_records: out is a bytearray or None");
        return NULL;
    }
    if (PyTuple_GET_SIZE(names) != 3 || c.encoding < JSON_HEX || c.encoding > JSON_UTF8 || start < 0 || count < 0) {
        PyErr_SetString(PyExc_ValueError, "json_records: three timestamp type names, an encoding 0..2, rows >= 0");
        return NULL;
    }
    for (int k = 0; k < 3; k++) {
        PyObject *name = PyTuple_GET_ITEM(names, k);
        if (!PyBytes_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "json_records: timestamp type names are bytes");
            return NULL;
        }
        c.names[k] = PyBytes_AS_STRING(name);
        c.name_len[k] = PyBytes_GET_SIZE(name);
    }
    PyObject *result = NULL;
    if (!HEX_PAIRS[0]) hex_pairs_init();
    if (int_arr(offset, &c.offset) < 0 || int_arr(timestamp, &c.timestamp) < 0 || int_arr(ts_type, &c.ts_type) < 0 ||
        int_arr(sequence, &c.sequence) < 0 || bin_arr(key, &c.key) < 0 || bin_arr(value, &c.value) < 0 ||
        headers_arr(headers, &c.headers) < 0)
        goto done;
    Py_ssize_t end = start + count;
    if (end > c.offset.length || end > c.timestamp.length || end > c.ts_type.length || end > c.sequence.length ||
        end > c.key.length || end > c.value.length || end > c.headers.length) {
        PyErr_SetString(PyExc_IndexError, "json_records: rows outside the arrays");
        goto done;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t i = start; i < end; i++) {  /* every row checked before any is written */
        Py_ssize_t room, bad;
        int got = check_row(&c, i, &room, &bad);
        if (got < 0) goto done;
        if (got == PYTHON_PRINTS) {
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
        if (bad >= 0) {  /* the Python way words the error (kcodec.tools.records_io.encode_bytes) */
            result = Py_BuildValue("(nn)", i, bad);
            goto done;
        }
        total += room + 1;
    }
    if (out_arg != Py_None) {
        if (total >= PyByteArray_GET_SIZE(out_arg) && PyByteArray_Resize(out_arg, total + 1) < 0) goto done;
        char *base = PyByteArray_AS_STRING(out_arg), *o = base;
        for (Py_ssize_t i = start; i < end; i++) {
            if (i > start) *o++ = ',';
            o = put_row(&c, i, o);
        }
        result = PyLong_FromSsize_t(o - base);
    } else {
        Py_INCREF(Py_True);
        result = Py_True;
    }
done:
    record_cols_release(&c);
    return result;
}

static PyMethodDef json_lines_methods[] = {
    {"json_records", py_json_records, METH_VARARGS,
     "json_records(offset, timestamp, timestamp_type, key, value, headers, sequence, type_names, encoding, start, "
     "count, out) -> n: the rows as kcodec dump --json prints records, comma-joined, in out[:n] (a bytearray, "
     "grown when too small); (row, field) when a field is not UTF-8 under encoding 2 (0 key, 1 value, 2 + k "
     "header k); None: rows the Python way prints; out None: True when every row prints, nothing written"},
    {NULL, NULL, 0, NULL}
};
