/* kcodec's compiled kernel: what the entry points share.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- argument parsing shared by the entry points */

typedef struct { Py_buffer view; Py_ssize_t pos, end, count; } Args;

static int parse_args(PyObject *args, Args *a, int with_count) {
    PyObject *end = Py_None;
    a->pos = 0;
    a->count = 0;
    int ok = with_count ? PyArg_ParseTuple(args, "y*nOn", &a->view, &a->pos, &end, &a->count)
                        : PyArg_ParseTuple(args, "y*|nO", &a->view, &a->pos, &end);
    if (!ok) return -1;
    a->end = a->view.len;
    if (end != Py_None) {
        a->end = PyLong_AsSsize_t(end);
        if (a->end == -1 && PyErr_Occurred()) { PyBuffer_Release(&a->view); return -1; }
    }
    /* kcodec errors, the same as the Python decoders' */
    if (a->count < 0) {
        PyBuffer_Release(&a->view);
        raise_at(E_RecordCount, a->pos, NULL, "negative count %zd", a->count);
        return -1;
    }
    if (a->pos < 0 || a->end > a->view.len || a->pos > a->end) {
        PyBuffer_Release(&a->view);
        raise_at(E_BadLength, a->pos, NULL, "need 0 <= pos <= end <= len(buf)");
        return -1;
    }
    return 0;
}

/* Entry points of decoders that take options: args beyond the first `head` are verify_crc, limit,
 * contents (as the Python decoders'); *rest becomes a new reference to the first `head` args. */
__attribute__((unused)) static int split_opts(PyObject *args, Py_ssize_t head, PyObject **rest, Opts *o) {
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > head + 3) {
        PyErr_Format(PyExc_TypeError, "takes at most %zd arguments (%zd given)", head + 3, n);
        return -1;
    }
    PyObject *v = n > head ? PyTuple_GET_ITEM(args, head) : NULL;
    PyObject *l = n > head + 1 ? PyTuple_GET_ITEM(args, head + 1) : NULL;
    PyObject *c = n > head + 2 ? PyTuple_GET_ITEM(args, head + 2) : NULL;
    if (parse_opts(v, l, c, o) < 0) return -1;
    *rest = n > head ? PyTuple_GetSlice(args, 0, head) : (Py_INCREF(args), args);
    return *rest ? 0 : -1;
}

static const Opts NO_OPTS = {1, NULL, CONTENTS_YES};

/* ---- projections: build caller-shaped tuples (e.g. kcodec's Record) straight from decoded fields.
 * A plan is a tuple of ("f", i) field i, ("t", i) array field i as a tuple, ("a", i, n) integer field i
 * plus n, ("n", i, j) field j of the entity in field i, ("c", obj) a constant. The decoded fields are
 * never a tuple: integers stay int64 (num[i]) until a plan item asks for one, other values are objects
 * (obj[i]); `kinds` says which (i int64, u uint32, l array as a tuple, o another object). */

typedef struct { char kind; Py_ssize_t field, nested; long long addend; PyObject *constant; } PlanOp;

static PlanOp *parse_plan(PyObject *plan, const char *kinds, Py_ssize_t *n) {
    Py_ssize_t nfields = (Py_ssize_t)strlen(kinds);
    if (!PyTuple_Check(plan)) { PyErr_SetString(PyExc_TypeError, "plan must be a tuple"); return NULL; }
    *n = PyTuple_GET_SIZE(plan);
    PlanOp *ops = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof(PlanOp));
    if (!ops) { PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *item = PyTuple_GET_ITEM(plan, i);
        const char *kind = NULL;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 2 ||
            !(kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0)))) goto bad;
        ops[i].kind = kind[0];
        if (kind[0] == 'c' && PyTuple_GET_SIZE(item) == 2) {
            ops[i].constant = PyTuple_GET_ITEM(item, 1);
            continue;
        }
        ops[i].field = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 1));
        if (ops[i].field < 0 || ops[i].field >= nfields) goto bad;
        char has = kinds[ops[i].field];
        if (kind[0] == 'f' && PyTuple_GET_SIZE(item) == 2) continue;
        if (kind[0] == 't' && PyTuple_GET_SIZE(item) == 2 && has == 'l') continue;
        if (kind[0] == 'n' && PyTuple_GET_SIZE(item) == 3 && has == 'o') {
            ops[i].nested = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 2));
            if (ops[i].nested < 0) goto bad;
            continue;
        }
        if (kind[0] == 'a' && PyTuple_GET_SIZE(item) == 3 && (has == 'i' || has == 'u')) {
            ops[i].addend = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 2));
            if (ops[i].addend == -1 && PyErr_Occurred()) goto bad;
            continue;
        }
        goto bad;
    }
    return ops;
bad:
    PyMem_Free(ops);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad plan item");
    return NULL;
}

/* Whether x is an object the garbage collector follows now (the type's flag first: no call for ints,
 * bytes, str, None). */
static inline int gc_tracked(PyObject *x) { return PyType_IS_GC(Py_TYPE(x)) && PyObject_GC_IsTracked(x); }

/* A tuple whose items the garbage collector need not follow can leave its
 * lists: it can never close a reference cycle. (CPython does the same for
 * tuples lazily, at the next collection; doing it now spares those scans.) */
static int untrack_if_atomic(PyObject *t, PlanOp *ops) {
    if (!PyTuple_CheckExact(t) && !ops) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
        if (ops && ops[i].kind == 'c') continue;  /* the caller's constants (enum members, None) */
        if (gc_tracked(PyTuple_GET_ITEM(t, i))) return 0;
    }
    if (PyObject_GC_IsTracked(t)) PyObject_GC_UnTrack(t);
    return 1;
}

/* kcodec's Record once reuse_records (lazy.c) gave it the kernel's deallocator: freed Records of
 * `reused_items` items wait here to be built again, as CPython keeps freed tuples, untracked, their items
 * NULL, each still holding its reference to the type. As many as a v1 wrapper's or a listed batch's records
 * (a thousand, freed together, are then built again without the allocator): at most about 130 KiB. */
enum { REUSED_MAX = 1024 };
static PyTypeObject *reused_type;
static Py_ssize_t reused_items;
static PyObject *reused[REUSED_MAX];
static int reused_count;

/* An instance of tuple subclass `type` with n items, all NULL, not tracked by the garbage collector: the
 * caller fills it and tracks it only if an item needs that (allocating it tracked to untrack it at once
 * costs both steps for every record). */
static PyObject *untracked_tuple_of(PyTypeObject *type, Py_ssize_t n) {
    if (type == reused_type && n == reused_items && reused_count) {  /* a freed Record (lazy.c), items NULL */
        PyObject *o = reused[--reused_count];
        _Py_NewReference(o);
        return o;
    }
    PyObject *o = (PyObject *)PyObject_GC_NewVar(PyObject, type, n);
    if (o) memset(((PyTupleObject *)o)->ob_item, 0, (size_t)n * sizeof(PyObject *));
    return o;
}

static PyObject *apply_plan(PyObject **obj, const int64_t *num, const char *kinds, PyTypeObject *type, PlanOp *ops,
                            Py_ssize_t n) {
    /* a subclass (kcodec's Record) is made untracked, and tracked below only if it holds a tracked item */
    PyObject *o = type == &PyTuple_Type ? PyTuple_New(n) : untracked_tuple_of(type, n);
    if (!o) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v;
        Py_ssize_t i = ops[k].field;
        if (ops[k].kind == 'c') {
            v = ops[k].constant;
            Py_INCREF(v);
        } else if (ops[k].kind == 'f' && kinds[i] == 'i') {
            v = PyLong_FromLongLong(num[i]);
        } else if (ops[k].kind == 'f' && kinds[i] == 'u') {
            v = PyLong_FromUnsignedLongLong((unsigned long long)num[i]);
        } else if (ops[k].kind == 'f' && kinds[i] == 'l') {
            v = PySequence_List(obj[i]);  /* as the tuple decoders give it */
        } else if (ops[k].kind == 'n') {
            if (!PyTuple_Check(obj[i]) || ops[k].nested >= PyTuple_GET_SIZE(obj[i])) {
                PyErr_SetString(PyExc_ValueError, "plan: no such nested field");
                Py_DECREF(o);
                return NULL;
            }
            v = PyTuple_GET_ITEM(obj[i], ops[k].nested);
            Py_INCREF(v);
        } else if (ops[k].kind == 'a') {
            long long sum;
            if (__builtin_add_overflow((long long)num[i], ops[k].addend, &sum)) {  /* no log holds it */
                raise_at(E_Corrupt, 0, NULL, "%lld + %lld is past the int64 range of offsets and timestamps",
                         (long long)ops[k].addend, (long long)num[i]);
                Py_DECREF(o);
                return NULL;
            }
            v = PyLong_FromLongLong(sum);
        } else {  /* 'f' on an object, 't' on an array: the object itself */
            v = obj[i];
            Py_INCREF(v);
        }
        if (!v) { Py_DECREF(o); return NULL; }
        PyTuple_SET_ITEM(o, k, v);
    }
    if (type == &PyTuple_Type) {
        untrack_if_atomic(o, ops);
    } else {
        for (Py_ssize_t k = 0; k < n; k++) {
            if (ops[k].kind != 'c' && gc_tracked(PyTuple_GET_ITEM(o, k))) {
                PyObject_GC_Track(o);
                break;
            }
        }
    }
    return o;
}

/* add_to_items(list, i, n): add n to integer item i of every tuple in list, in place. For projections
 * whose addend is known only once every entity is decoded (v1 inner offsets are relative to the last);
 * the tuples must be the list's alone, fresh from a projection. */
static PyObject *py_add_to_items(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *list;
    Py_ssize_t index;
    long long addend;
    if (!PyArg_ParseTuple(args, "O!nL", &PyList_Type, &list, &index, &addend)) return NULL;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(list); k++) {
        PyObject *t = PyList_GET_ITEM(list, k);
        if (!PyTuple_Check(t) || Py_REFCNT(t) != 1 || index < 0 || index >= PyTuple_GET_SIZE(t)) {
            PyErr_SetString(PyExc_ValueError, "add_to_items needs tuples only the list holds, with that item");
            return NULL;
        }
        long long x = PyLong_AsLongLong(PyTuple_GET_ITEM(t, index)), sum;
        if (x == -1 && PyErr_Occurred()) return NULL;
        if (__builtin_add_overflow(x, addend, &sum)) {  /* an offset no log holds */
            raise_at(E_Corrupt, 0, NULL, "%lld + %lld is past the int64 range of offsets and timestamps", addend, x);
            return NULL;
        }
        PyObject *v = PyLong_FromLongLong(sum);
        if (!v) return NULL;
        PyObject *old = PyTuple_GET_ITEM(t, index);
        PyTuple_SET_ITEM(t, index, v);
        Py_DECREF(old);
    }
    Py_RETURN_NONE;
}
