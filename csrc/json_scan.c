/* kcodec's compiled kernel: `kcodec write`'s JSON lines of one exact shape, scanned into columns.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after json_lines.c (see kernel.h for the order).
 *
 * scan_hex_records takes a block of lines that are all, exactly,
 *     {"key":K,"value":V,"headers":[["name",V],...],"timestamp":T}
 * (a single space allowed after each ':' and ','), K and V null or a string of lowercase hex digits of even
 * length, a header name of printable ASCII other than '"' and '\\', T an integer of at most 15 digits; each
 * line ends with '\n' but the block's last, which may not. Anything else anywhere in the block (another
 * field, another order, escapes, uppercase hex, a blank line ...) makes it return None: the caller reads
 * that block the general way (kcodec.tools.json_rows), which takes or words every line. What it returns is
 * the columns that general way builds for the same block (key, value, headers, timestamp in microseconds). */

typedef struct { const uint8_t *p, *end; } Scan;

/* always inlined: n is a constant there, so the comparison is a few instructions, not a call */
static inline __attribute__((always_inline)) int scan_lit(Scan *s, const char *lit, size_t n) {
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n)) return 0;
    s->p += n;
    return 1;
}
#define SCAN_LIT(s, lit) scan_lit((s), (lit), sizeof(lit) - 1)

/* ':' or ',' and the one space JSON writers put after it. */
static inline int scan_sep(Scan *s, char c) {
    if (s->p >= s->end || *s->p != (uint8_t)c) return 0;
    s->p++;
    if (s->p < s->end && *s->p == ' ') s->p++;
    return 1;
}

/* a lowercase hex digit's value, 0xf0 for any other byte (or-ed over a value: one test at its end) */
static uint8_t HEX_VALUES[256];

static void hex_values_init(void) {
    memset(HEX_VALUES, 0xf0, sizeof HEX_VALUES);
    for (int d = 0; d < 10; d++) HEX_VALUES['0' + d] = (uint8_t)d;
    for (int d = 0; d < 6; d++) HEX_VALUES['a' + d] = (uint8_t)(10 + d);
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The values of 16 characters when all are lowercase hex digits, as 8 bytes per 16-bit lane pair (first digit
 * the high nibble); *ok the mask of the characters that are. SSE2, which every x86-64 has. */
static inline __m128i hex16(__m128i x, int *ok) {
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('f' + 1)));
    *ok = _mm_movemask_epi8(_mm_or_si128(digit, letter));
    __m128i v = _mm_or_si128(_mm_and_si128(digit, _mm_sub_epi8(x, _mm_set1_epi8('0'))),
                             _mm_and_si128(letter, _mm_sub_epi8(x, _mm_set1_epi8('a' - 10))));
    /* a lane holds (first, second) digit as its (low, high) byte: first << 4 | second */
    return _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x00ff)), 4), _mm_srli_epi16(v, 8));
}
#endif

/* The bytes of the lowercase hex digit pairs from h on, up to the first pair that is not two such digits (or
 * end), into o (which has room for half of [h, end)): how many. 32 digits a step where the CPU has SSE2
 * (the bytes past the count written too, not counted), a pair a step after them. */
static inline Py_ssize_t hex_run(uint8_t *restrict o, const uint8_t *restrict h, const uint8_t *end) {
    Py_ssize_t n = 0;
#if defined(__SSE2__)
    while (end - h >= 32) {  /* o has room for 16 more: the caller reserved half of [h, end) */
        int ok_a, ok_b;
        __m128i a = hex16(_mm_loadu_si128((const __m128i *)h), &ok_a);
        __m128i b = hex16(_mm_loadu_si128((const __m128i *)(h + 16)), &ok_b);
        _mm_storeu_si128((__m128i *)(o + n), _mm_packus_epi16(a, b));
        unsigned ok = (unsigned)ok_a | (unsigned)ok_b << 16;
        if (ok != 0xffffffffu) return n + __builtin_ctz(~ok) / 2;  /* the pairs before the first non-digit */
        n += 16;
        h += 32;
    }
#endif
    while (end - h >= 2) {
        uint8_t hi = HEX_VALUES[h[0]], lo = HEX_VALUES[h[1]];
        if ((hi | lo) & 0xf0) break;
        o[n++] = (uint8_t)(hi << 4 | lo);
        h += 2;
    }
    return n;
}

/* null, or "hex" decoded into c: 1 taken, 0 not this shape, -1 error. Decoded as the digits are found: the
 * string is taken when its first character that is not part of a pair of digits is its closing quote. */
static int scan_hex_value(Scan *s, BinCol *c) {
    if (SCAN_LIT(s, "null")) return bincol_null(c) < 0 ? -1 : 1;
    if (s->p >= s->end || *s->p != '"') return 0;
    const uint8_t *h = ++s->p;
    if (buf_reserve(&c->data, (s->end - h) / 2) < 0) return -1;  /* what the rest of the line can hold */
    Py_ssize_t n = hex_run((uint8_t *)c->data.data + c->data.len, h, s->end);
    const uint8_t *q = h + 2 * n;
    if (q >= s->end || *q != '"') return 0;  /* not hex, uppercase, odd length, an escape, no closing quote */
    if (c->data.len + n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "column data exceeds 2 GiB");
        return -1;
    }
    c->data.len += n;
    s->p = q + 1;
    return buf_put_i32(&c->offsets, (int32_t)c->data.len) < 0 || bincol_bit(c, 1) < 0 ? -1 : 1;
}

/* "name": printable ASCII but '"' and '\\'. */
static int scan_name(Scan *s, BinCol *c) {
    if (s->p >= s->end || *s->p != '"') return 0;
    const uint8_t *q = ++s->p;
    while (q < s->end && *q >= 0x20 && *q < 0x7f && *q != '"' && *q != '\\') q++;
    if (q >= s->end || *q != '"') return 0;
    if (bincol_put(c, s->p, q - s->p) < 0) return -1;
    s->p = q + 1;
    return 1;
}

/* -?(0|[1-9][0-9]{0,14}) */
static int scan_int(Scan *s, int64_t *v) {
    int neg = s->p < s->end && *s->p == '-';
    const uint8_t *q = s->p + neg, *start = q;
    int64_t x = 0;
    while (q < s->end && *q >= '0' && *q <= '9' && q - start < 16) x = x * 10 + (*q++ - '0');
    Py_ssize_t digits = q - start;
    if (digits == 0 || digits > 15 || (digits > 1 && *start == '0')) return 0;
    *v = neg ? -x : x;
    s->p = q;
    return 1;
}

typedef struct {
    BinCol key, value, hkey, hvalue;
    Buf lists, micros;  /* the headers' list offsets (after the leading 0), timestamps in microseconds */
    Py_ssize_t n;
} ScanCols;

/* One line from s->p to its end (exclusive): 1 taken, 0 not this shape, -1 error. */
static int scan_line(Scan *s, ScanCols *c) {
    int got;
    if (!SCAN_LIT(s, "{\"key\"") || !scan_sep(s, ':')) return 0;
    if ((got = scan_hex_value(s, &c->key)) <= 0) return got;
    if (!scan_sep(s, ',') || !SCAN_LIT(s, "\"value\"") || !scan_sep(s, ':')) return 0;
    if ((got = scan_hex_value(s, &c->value)) <= 0) return got;
    if (!scan_sep(s, ',') || !SCAN_LIT(s, "\"headers\"") || !scan_sep(s, ':') || !SCAN_LIT(s, "[")) return 0;
    if (!SCAN_LIT(s, "]")) {
        do {
            if (!SCAN_LIT(s, "[")) return 0;
            if ((got = scan_name(s, &c->hkey)) <= 0) return got;
            if (!scan_sep(s, ',')) return 0;
            if ((got = scan_hex_value(s, &c->hvalue)) <= 0) return got;
            if (!SCAN_LIT(s, "]")) return 0;
        } while (scan_sep(s, ','));
        if (!SCAN_LIT(s, "]")) return 0;
    }
    if (c->hkey.n > INT32_MAX || buf_put_i32(&c->lists, (int32_t)c->hkey.n) < 0) return -1;
    int64_t ts;
    if (!scan_sep(s, ',') || !SCAN_LIT(s, "\"timestamp\"") || !scan_sep(s, ':') || !scan_int(s, &ts) ||
        !SCAN_LIT(s, "}"))
        return 0;
    if (s->p != s->end) return 0;
    c->n++;
    return buf_put_i64(&c->micros, ts * 1000) < 0 ? -1 : 1;
}

static void scan_cols_free(ScanCols *c) {
    bincol_free(&c->key);
    bincol_free(&c->value);
    bincol_free(&c->hkey);
    bincol_free(&c->hvalue);
    buf_free(&c->lists);
    buf_free(&c->micros);
}

/* (validity or None, offsets with the leading 0, data, nulls) of a column; None when every value is null. */
static PyObject *scan_binary(BinCol *c) {
    if (c->nulls == c->n) Py_RETURN_NONE;
    PyObject *valid = c->nulls ? owned_of(&c->valid) : (Py_INCREF(Py_None), Py_None);
    return Py_BuildValue("(NNNn)", valid, offsets_owned(&c->offsets), owned_of(&c->data), c->nulls);
}

static PyObject *py_scan_hex_records(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*:scan_hex_records", &view)) return NULL;
    if (HEX_VALUES[0] != 0xf0) hex_values_init();
    ScanCols c;
    memset(&c, 0, sizeof c);
    PyObject *result = NULL;
    const uint8_t *p = (const uint8_t *)view.buf, *end = p + view.len;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        Scan s = {p, nl ? nl : end};
        int got = scan_line(&s, &c);
        if (got < 0) goto done;
        if (got == 0) {
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
        p = nl ? nl + 1 : end;
    }
    result = Py_BuildValue("(nNNNNN)", c.n, scan_binary(&c.key), scan_binary(&c.value),
                           c.hkey.n ? offsets_owned(&c.lists) : (Py_INCREF(Py_None), Py_None),
                           c.hkey.n ? Py_BuildValue("(NN)", scan_binary(&c.hkey), scan_binary(&c.hvalue))
                                    : (Py_INCREF(Py_None), Py_None),
                           owned_of(&c.micros));
done:
    scan_cols_free(&c);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef json_scan_methods[] = {
    {"scan_hex_records", py_scan_hex_records, METH_VARARGS,
     "scan_hex_records(block) -> (rows, key, value, header list offsets, (header keys, header values), "
     "timestamps in microseconds as int64 bytes) of JSON lines of the one shape it takes, binary columns as "
     "(validity or None, offsets, data, nulls) or None when all null; None: a line of another shape"},
    {NULL, NULL, 0, NULL}
};
