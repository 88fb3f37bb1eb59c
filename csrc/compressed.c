/* kcodec's compiled kernel: compressed values.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- compressed values: kcodec's decompressor, then the entities the stream holds, decoded here */

typedef PyObject *(*decode_fn)(const uint8_t *, Py_ssize_t, Py_ssize_t *, Py_ssize_t, const Opts *);

/* The pending exception, taken (normalized) so its attributes can be changed, then given back. */
typedef struct { PyObject *type, *value, *tb; } Pending;

static int take_decode_error(Pending *e) {  /* 1 when it is one of kcodec's DecodeErrors */
    PyErr_Fetch(&e->type, &e->value, &e->tb);
    PyErr_NormalizeException(&e->type, &e->value, &e->tb);
    return e->value && PyObject_IsInstance(e->value, E_Decode) == 1;
}

static void give_back(Pending *e) {
    PyErr_Clear();
    PyErr_Restore(e->type, e->value, e->tb);
}

static void set_attr(PyObject *o, const char *name, PyObject *v) {
    if (v) PyObject_SetAttrString(o, name, v);
    Py_XDECREF(v);
}

/* exc.position (None counts as 0) */
static Py_ssize_t error_position(PyObject *exc) {
    PyObject *p = PyObject_GetAttrString(exc, "position");
    Py_ssize_t v = p && p != Py_None ? PyLong_AsSsize_t(p) : 0;
    Py_XDECREF(p);
    PyErr_Clear();
    return v;
}

/* An error decoding a decompressed stream: said where in the stream, placed at the stored value. */
static void in_stream_error(Py_ssize_t start, const char *codec) {
    Pending e;
    if (take_decode_error(&e)) {
        PyObject *message = PyObject_GetAttrString(e.value, "message");
        if (message)
            set_attr(e.value, "message", PyUnicode_FromFormat("%S (at byte %zd of the decompressed %s stream)",
                                                              message, error_position(e.value), codec));
        Py_XDECREF(message);
        set_attr(e.value, "position", PyLong_FromSsize_t(start));
    }
    give_back(&e);
}

/* An error decompressing: placed in the input, named after the field unless it names its own. */
static void decompress_error(Py_ssize_t start, const char *field) {
    Pending e;
    if (take_decode_error(&e)) {
        set_attr(e.value, "position", PyLong_FromSsize_t(start + error_position(e.value)));
        PyObject *f = PyObject_GetAttrString(e.value, "field");
        if (!f || PyObject_IsTrue(f) != 1) set_attr(e.value, "field", PyUnicode_FromString(field));
        Py_XDECREF(f);
    }
    give_back(&e);
}

/* kcodec's decompressor on `stored` (a bytes-like object): decompress(codec, stored, magic=, max_size=limit). */
static PyObject *call_decompress(PyObject *codec, PyObject *stored, int magic, PyObject *limit) {
    PyObject *kw = Py_BuildValue("{s:i,s:O}", "magic", magic, "max_size", limit);
    PyObject *args = kw ? PyTuple_Pack(2, codec, stored) : NULL;
    PyObject *data = args ? PyObject_Call(F_decompress, args, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(args);
    return data;
}

__attribute__((unused)) static PyObject *decode_compressed(PyObject *stored, const char *codec, int magic,
                                                           Py_ssize_t start, const char *field, const Opts *opts,
                                                           decode_fn decode) {
    PyObject *name = PyUnicode_FromString(codec);
    PyObject *data = name ? call_decompress(name, stored, magic, opts->limit) : NULL;
    Py_XDECREF(name);
    if (!data) {
        decompress_error(start, field);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) { Py_DECREF(data); return NULL; }
    Opts inner = *opts;
    inner.contents = CONTENTS_INSIDE;
    PyObject *items = PyList_New(0);
    Py_ssize_t q = 0;
    while (items && q < view.len) {
        PyObject *item = decode((const uint8_t *)view.buf, view.len, &q, view.len, &inner);
        if (!item || PyList_Append(items, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(items);
            scope_error(field);
            in_stream_error(start, codec);
            break;
        }
        Py_DECREF(item);
    }
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return items;
}
