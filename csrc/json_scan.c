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

static inline int scan_lit(Scan *s, const char *lit, size_t n) {
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

/* null, or "hex" decoded into c: 1 taken, 0 not this shape, -1 error. */
static int scan_hex_value(Scan *s, BinCol *c) {
    if (SCAN_LIT(s, "null")) return bincol_null(c) < 0 ? -1 : 1;
    if (s->p >= s->end || *s->p != '"') return 0;
    const uint8_t *q = ++s->p;
    q = s->p < s->end ? memchr(s->p, '"', (size_t)(s->end - s->p)) : NULL;
    if (!q || (q - s->p) % 2) return 0;
    Py_ssize_t n = (q - s->p) / 2;
    if (c->data.len + n > INT32_MAX || buf_reserve(&c->data, n) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "column data exceeds 2 GiB");
        return -1;
    }
    uint8_t *restrict o = (uint8_t *)c->data.data + c->data.len, bad = 0;
    const uint8_t *restrict h = s->p;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t hi = HEX_VALUES[h[2 * i]], lo = HEX_VALUES[h[2 * i + 1]];
        bad |= hi | lo;
        o[i] = (uint8_t)(hi << 4 | (lo & 15));
    }
    if (bad & 0xf0) return 0;
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
    PyObject *valid = c->nulls ? bytes_of(&c->valid) : (Py_INCREF(Py_None), Py_None);
    return Py_BuildValue("(NNNn)", valid, offsets_of(&c->offsets), bytes_of(&c->data), c->nulls);
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
                           c.hkey.n ? offsets_of(&c.lists) : (Py_INCREF(Py_None), Py_None),
                           c.hkey.n ? Py_BuildValue("(NN)", scan_binary(&c.hkey), scan_binary(&c.hvalue))
                                    : (Py_INCREF(Py_None), Py_None),
                           bytes_of(&c.micros));
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
