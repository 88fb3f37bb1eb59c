/* kcodec's compiled kernel: growable buffers and Arrow columns.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- a bounded pool of large blocks: column memory reused from one decode to the next
 *
 * A decode's columns are tens of MB written once. Fresh from the system each time, their pages are faulted
 * in and cleared by the kernel, which cost about a third of a segment's decode into Arrow. A block whose
 * last user let go of it (a Buf freed, or the Python owner of a column handed to pyarrow deallocated, so
 * no table can still see it) is kept here instead, up to POOL_BYTES, and a new buffer starts from the
 * smallest kept block that holds it. Touched under pool_lock: segment_columns.c walks records without the
 * GIL while other threads may free columns. */
#define POOL_MIN ((Py_ssize_t)64 << 10)   /* smaller blocks come from malloc's own free lists */
#define POOL_BYTES ((Py_ssize_t)96 << 20)
#define POOL_SLOTS 256
static struct { char *data; Py_ssize_t cap; } pool[POOL_SLOTS];
static int pool_n;
static Py_ssize_t pool_bytes;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* A fork waits for the pool to be consistent: the child's copy is never left locked by a thread it lacks. */
static void pool_before_fork(void) { pthread_mutex_lock(&pool_lock); }
static void pool_after_fork(void) { pthread_mutex_unlock(&pool_lock); }

/* A kept block of at least need bytes and at most four times that (its size in *cap), or NULL. */
static char *pool_take(Py_ssize_t need, Py_ssize_t *cap) {
    int best = -1;
    char *d = NULL;
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < pool_n; i++)
        if (pool[i].cap >= need && pool[i].cap / 4 <= need && (best < 0 || pool[i].cap < pool[best].cap)) best = i;
    if (best >= 0) {
        d = pool[best].data;
        *cap = pool[best].cap;
        pool_bytes -= *cap;
        pool[best] = pool[--pool_n];
    }
    pthread_mutex_unlock(&pool_lock);
    return d;
}

/* A block no one uses any more: kept for the next buffer when it is large and there is room, else freed. */
static void pool_give(char *data, Py_ssize_t cap) {
    int kept = 0;
    if (data && cap >= POOL_MIN) {
        pthread_mutex_lock(&pool_lock);
        if ((kept = pool_n < POOL_SLOTS && pool_bytes + cap <= POOL_BYTES)) {
            pool[pool_n].data = data;
            pool[pool_n++].cap = cap;
            pool_bytes += cap;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    if (!kept) free(data);
}

/* ---- growable buffers for Arrow columns */

typedef struct { char *data; Py_ssize_t len, cap; } Buf;

__attribute__((noinline, cold)) static int buf_grow(Buf *b, Py_ssize_t extra) {
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    Py_ssize_t kept;
    char *d = cap >= POOL_MIN ? pool_take(cap, &kept) : NULL;
    if (d) {  /* a kept block instead of fresh pages; what b held moves into it */
        if (b->len) memcpy(d, b->data, (size_t)b->len);
        pool_give(b->data, b->cap);
        b->data = d;
        b->cap = kept;
        return 0;
    }
    d = realloc(b->data, (size_t)cap);
    if (!d) {
        if (!walk_without_gil) PyErr_NoMemory();
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}
static inline int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (__builtin_expect(b->len + extra <= b->cap, 1)) return 0;
    return buf_grow(b, extra);
}
static inline int buf_put(Buf *b, const void *p, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, p, (size_t)n);
    b->len += n;
    return 0;
}
static inline int buf_put_i64(Buf *b, int64_t v) { return buf_put(b, &v, 8); }
static inline int buf_put_i32(Buf *b, int32_t v) { return buf_put(b, &v, 4); }
static void buf_free(Buf *b) { pool_give(b->data, b->cap); b->data = NULL; b->len = b->cap = 0; }

/* Binary column: offsets (int32, the leading 0 put in front on export), data, validity bitmap. */
typedef struct { Buf offsets, data, valid; Py_ssize_t n, nulls; } BinCol;

static inline int bincol_bit(BinCol *c, int set) {
    if (c->n % 8 == 0) {
        uint8_t zero = 0;
        if (buf_put(&c->valid, &zero, 1) < 0) return -1;
    }
    if (set) c->valid.data[c->n / 8] |= (char)(1 << (c->n % 8));
    c->n++;
    return 0;
}
__attribute__((noinline, cold)) static int bincol_put_grow(BinCol *c, const uint8_t *p, Py_ssize_t n) {
    if (c->data.len + n > INT32_MAX) {
        if (!walk_without_gil) PyErr_SetString(PyExc_OverflowError, "column data exceeds 2 GiB");
        return -1;
    }
    if (buf_put(&c->data, p, n) < 0 || buf_put_i32(&c->offsets, (int32_t)c->data.len) < 0) return -1;
    return bincol_bit(c, 1);
}
/* One value appended: where every buffer has room (a run reserves it up front), without a check per
 * buffer, else by bincol_put_grow. */
static inline int bincol_put(BinCol *c, const uint8_t *p, Py_ssize_t n) {
    Py_ssize_t len = c->data.len + n;
    if (__builtin_expect(len > c->data.cap || len > INT32_MAX || c->offsets.len + 4 > c->offsets.cap ||
                             c->valid.len >= c->valid.cap, 0))
        return bincol_put_grow(c, p, n);
    memcpy(c->data.data + c->data.len, p, (size_t)n);
    c->data.len = len;
    int32_t end = (int32_t)len;
    memcpy(c->offsets.data + c->offsets.len, &end, 4);
    c->offsets.len += 4;
    if (c->n % 8 == 0) c->valid.data[c->valid.len++] = 0;
    c->valid.data[c->n / 8] |= (char)(1 << (c->n % 8));
    c->n++;
    return 0;
}
/* Text that is not valid UTF-8, stored as Kafka's Java client reads it: with replacement characters. */
static int bincol_put_replaced(BinCol *c, const uint8_t *p, Py_ssize_t n) {
    if (walk_without_gil) return -1;  /* Python's decoder needs the GIL: the walk is done again with it */
    PyObject *text = PyUnicode_DecodeUTF8((const char *)p, n, "replace");
    if (!text) return -1;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    int rc = utf8 ? bincol_put(c, (const uint8_t *)utf8, size) : -1;
    Py_DECREF(text);
    return rc;
}
static inline int bincol_null(BinCol *c) {
    if (buf_put_i32(&c->offsets, (int32_t)c->data.len) < 0) return -1;
    c->nulls++;
    return bincol_bit(c, 0);
}
static void bincol_free(BinCol *c) { buf_free(&c->offsets); buf_free(&c->data); buf_free(&c->valid); }

/* A slice of memory: a key, a value, encoded headers (the span writers' arguments, columns.c). */
typedef struct { const char *p; Py_ssize_t n; } Span;

/* ---- exporting columns: {"name": ("int64", data) | ("binary"|"string", valid, offsets, data, nulls)
 *                              | ("list", offsets, {child columns}) | ("struct", {child columns})} */

static PyObject *bytes_of(Buf *b) { return PyBytes_FromStringAndSize(b->data ? b->data : "", b->len); }

/* A column's memory handed to Python without a copy: a read-only buffer (pyarrow's py_buffer wraps it
 * zero-copy) that frees the malloc'd bytes with its last reference. len() is its size in bytes. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t len, cap;  /* cap: the block's size, for the pool */
} OwnedBuffer;

static void owned_dealloc(OwnedBuffer *self) {
    pool_give(self->data, self->cap);
    PyObject_Free(self);
}

static int owned_getbuffer(OwnedBuffer *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data ? self->data : (char *)"", self->len, 1, flags);
}

static Py_ssize_t owned_len(OwnedBuffer *self) { return self->len; }

static PyBufferProcs owned_as_buffer = {.bf_getbuffer = (getbufferproc)owned_getbuffer};
static PySequenceMethods owned_as_sequence = {.sq_length = (lenfunc)owned_len};

/* No references to other objects: no GC. */
static PyTypeObject OwnedBuffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcodec.KernelBuffer",
    .tp_doc = "A column's bytes as the kernel wrote them (the buffer protocol, read-only).",
    .tp_basicsize = sizeof(OwnedBuffer),
    .tp_dealloc = (destructor)owned_dealloc,
    .tp_as_buffer = &owned_as_buffer,
    .tp_as_sequence = &owned_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

/* b's memory as an OwnedBuffer, taken from b (which is left empty). */
static PyObject *owned_of(Buf *b) {
    OwnedBuffer *o = PyObject_New(OwnedBuffer, &OwnedBuffer_Type);
    if (!o) return NULL;
    o->data = b->data;
    o->len = b->len;
    o->cap = b->cap;
    b->data = NULL;
    b->len = b->cap = 0;
    return (PyObject *)o;
}

static PyObject *offsets_of(Buf *b) {
    PyObject *o = PyBytes_FromStringAndSize(NULL, b->len + 4);
    if (!o) return NULL;
    memset(PyBytes_AS_STRING(o), 0, 4);
    if (b->len) memcpy(PyBytes_AS_STRING(o) + 4, b->data, (size_t)b->len);
    return o;
}

/* Arrow offsets from b (which is left empty): its ends with the leading 0 put in front, in place. */
static PyObject *offsets_owned(Buf *b) {
    if (buf_reserve(b, 4) < 0) return NULL;
    memmove(b->data + 4, b->data, (size_t)b->len);
    memset(b->data, 0, 4);
    b->len += 4;
    return owned_of(b);
}

static int put_item(PyObject *d, const char *name, PyObject *v) {
    if (!v) return -1;
    int r = PyDict_SetItemString(d, name, v);
    Py_DECREF(v);
    return r;
}

/* A str made once and kept in *slot (a new reference each call): names that repeat on every entity. */
__attribute__((unused)) static PyObject *interned_str(PyObject **slot, const char *s) {
    if (!*slot) *slot = PyUnicode_InternFromString(s);
    Py_XINCREF(*slot);
    return *slot;
}

/* d[name] = v (stolen), the key made once and kept in *key. */
__attribute__((unused)) static int put_keyed(PyObject *d, PyObject **key, const char *name, PyObject *v) {
    PyObject *k = v ? interned_str(key, name) : NULL;
    int r = k ? PyDict_SetItem(d, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    return r;
}

static int put_ints(PyObject *d, const char *name, Buf *b) {
    return put_item(d, name, Py_BuildValue("(sN)", "int64", owned_of(b)));
}

static int put_bin(PyObject *d, const char *name, BinCol *c, int text) {
    return put_item(d, name, Py_BuildValue("(sNNNn)", text ? "string" : "binary", owned_of(&c->valid),
                                           offsets_owned(&c->offsets), owned_of(&c->data), c->nulls));
}

typedef int (*export_fn)(PyObject *, void *);

__attribute__((unused)) static int put_struct(PyObject *d, const char *name, void *cols, export_fn fn) {
    PyObject *child = PyDict_New();
    if (!child || fn(child, cols) < 0) { Py_XDECREF(child); return -1; }
    return put_item(d, name, Py_BuildValue("(sN)", "struct", child));
}

__attribute__((unused)) static int put_list(PyObject *d, const char *name, Buf *offsets, void *cols, export_fn fn) {
    PyObject *child = PyDict_New();
    if (!child || fn(child, cols) < 0) { Py_XDECREF(child); return -1; }
    return put_item(d, name, Py_BuildValue("(sNN)", "list", offsets_owned(offsets), child));
}
