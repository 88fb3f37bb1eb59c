/* kcodec's compiled kernel: records built when they are read.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after entry.c (see kernel.h for the order). The printed lazy_<entity> entry points make these.
 *
 * LazyItems is a read-only sequence of `count` projections (apply_plan over prj_<entity>) of entities
 * stored back to back in one immutable bytes object. Every entity was decoded once, without building
 * anything, when the sequence was made (so its errors are raised then, as the eager projection raises
 * them); only where each one starts is kept. Indexing or iterating decodes one entity and builds its
 * item: items a loop drops are freed before the next is made, so the memory a batch's records take is
 * the bytes plus 8 bytes a record, and allocations reuse warm memory. */

enum { LAZY_MAX_FIELDS = 16, LAZY_PREFETCH = 2048 };
typedef int (*prj_fn)(const uint8_t *, Py_ssize_t, Py_ssize_t *, Py_ssize_t, const Opts *, PyObject **, int64_t *);

typedef struct {
    PyObject_HEAD
    PyObject *data;      /* the bytes the entities are in */
    Py_ssize_t count, end;
    Py_ssize_t *starts;  /* where each entity starts */
    PyTypeObject *type;  /* what each item is (kcodec's Record) */
    PyObject *plan;      /* keeps the plan's constants alive */
    PlanOp *ops;
    Py_ssize_t nops;
    const char *kinds;
    int nfields;
    int moves;           /* build_moving builds the items (plan_moves) */
    prj_fn prj;
} LazyItems;

static PyTypeObject LazyItems_Type;

static void lazy_dealloc(LazyItems *self) {
    Py_XDECREF(self->data);
    Py_XDECREF(self->type);
    Py_XDECREF(self->plan);
    PyMem_Free(self->starts);
    PyMem_Free(self->ops);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Whether build_moving can build the plan's items: each object field taken as it is, by one item at most, and
 * every other item an integer or a constant (kcodec's Record plans). */
static int plan_moves(const PlanOp *ops, Py_ssize_t n, const char *kinds) {
    unsigned taken = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        char kind = ops[k].kind, has = kind == 'c' ? 0 : kinds[ops[k].field];
        if (kind == 'c' || kind == 'a' || (kind == 'f' && (has == 'i' || has == 'u'))) continue;
        if (!((kind == 'f' && has == 'o') || (kind == 't' && has == 'l')) || (taken >> ops[k].field) & 1) return 0;
        taken |= 1u << ops[k].field;
    }
    return 1;
}

/* apply_plan for a plan that plan_moves: the decoded objects are moved into the item (obj[i] left NULL), no
 * reference counted twice, and the item tracked only when a moved object is (ints and the plan's constants
 * are not, as apply_plan decides). */
static PyObject *build_moving(PyObject **obj, const int64_t *num, const char *kinds, PyTypeObject *type, PlanOp *ops,
                              Py_ssize_t n) {
    if (type == &PyTuple_Type) return apply_plan(obj, num, kinds, type, ops, n);
    PyObject *o = untracked_tuple_of(type, n);
    if (!o) return NULL;
    int track = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v;
        const PlanOp *op = &ops[k];
        if (op->kind == 'c') {
            v = op->constant;
            Py_INCREF(v);
        } else if (op->kind == 'a') {
            long long sum;
            if (__builtin_add_overflow((long long)num[op->field], op->addend, &sum)) {  /* plan_fits said it fits */
                raise_at(E_Corrupt, 0, NULL, "%lld + %lld is past the int64 range of offsets and timestamps",
                         (long long)op->addend, (long long)num[op->field]);
                v = NULL;
            } else {
                v = PyLong_FromLongLong(sum);
            }
        } else if (kinds[op->field] == 'i') {
            v = PyLong_FromLongLong(num[op->field]);
        } else if (kinds[op->field] == 'u') {
            v = PyLong_FromUnsignedLongLong((unsigned long long)num[op->field]);
        } else {
            v = obj[op->field];
            obj[op->field] = NULL;
            track |= gc_tracked(v);
        }
        if (!v) {  /* the items not yet set are NULL */
            Py_DECREF(o);
            return NULL;
        }
        PyTuple_SET_ITEM(o, k, v);
    }
    if (track) PyObject_GC_Track(o);
    return o;
}

/* Item i, built from its bytes (which decoded once already). */
static PyObject *lazy_build(LazyItems *self, Py_ssize_t i) {
    PyObject *obj[LAZY_MAX_FIELDS];
    int64_t num[LAZY_MAX_FIELDS];
    for (int k = 0; k < self->nfields; k++) obj[k] = NULL;
    Py_ssize_t p = self->starts[i];
    const uint8_t *buf = (const uint8_t *)PyBytes_AS_STRING(self->data);
    int decoded = self->prj(buf, PyBytes_GET_SIZE(self->data), &p, self->end, &NO_OPTS, obj, num);
    PyObject *item = decoded < 0    ? NULL
                     : self->moves ? build_moving(obj, num, self->kinds, self->type, self->ops, self->nops)
                                   : apply_plan(obj, num, self->kinds, self->type, self->ops, self->nops);
    for (int k = 0; k < self->nfields; k++) Py_XDECREF(obj[k]);
    return item;
}

static Py_ssize_t lazy_len(LazyItems *self) { return self->count; }

static PyObject *lazy_item(LazyItems *self, Py_ssize_t i) {
    if (i < 0 || i >= self->count) {
        PyErr_SetString(PyExc_IndexError, "record index out of range");
        return NULL;
    }
    return lazy_build(self, i);
}

static PyObject *lazy_list(LazyItems *self) {
    PyObject *list = PyList_New(self->count);
    for (Py_ssize_t i = 0; list && i < self->count; i++) {
        PyObject *item = lazy_build(self, i);
        if (!item) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *lazy_subscript(LazyItems *self, PyObject *key) {
    if (PyIndex_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) return NULL;
        return lazy_item(self, i < 0 ? i + self->count : i);
    }
    if (PySlice_Check(key)) {  /* a list, as a list's slice is */
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
        Py_ssize_t n = PySlice_AdjustIndices(self->count, &start, &stop, step);
        PyObject *list = PyList_New(n);
        for (Py_ssize_t k = 0, i = start; list && k < n; k++, i += step) {
            PyObject *item = lazy_build(self, i);
            if (!item) { Py_CLEAR(list); break; }
            PyList_SET_ITEM(list, k, item);
        }
        return list;
    }
    return PyErr_Format(PyExc_TypeError, "record indices must be integers or slices, not %.200s",
                        Py_TYPE(key)->tp_name);
}

/* Equal to what the eager projection gives (a list): compared as that list. */
static PyObject *lazy_richcompare(PyObject *self, PyObject *other, int op) {
    if ((op != Py_EQ && op != Py_NE) || !(PyList_Check(other) || Py_TYPE(other) == &LazyItems_Type))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *mine = lazy_list((LazyItems *)self);
    PyObject *theirs = Py_TYPE(other) == &LazyItems_Type ? lazy_list((LazyItems *)other) : (Py_INCREF(other), other);
    PyObject *r = mine && theirs ? PyObject_RichCompare(mine, theirs, op) : NULL;
    Py_XDECREF(mine);
    Py_XDECREF(theirs);
    return r;
}

static PyObject *lazy_repr(LazyItems *self) {
    PyObject *list = lazy_list(self);
    PyObject *r = list ? PyObject_Repr(list) : NULL;
    Py_XDECREF(list);
    return r;
}

/* Pickled (and copied) as the list it reads as. */
static PyObject *lazy_reduce(LazyItems *self, PyObject *unused) {
    (void)unused;
    PyObject *list = lazy_list(self);
    return list ? Py_BuildValue("(O(N))", (PyObject *)&PyList_Type, list) : NULL;
}

typedef struct {
    PyObject_HEAD
    LazyItems *items;
    Py_ssize_t next;
} LazyIter;

static PyTypeObject LazyIter_Type;

static PyObject *lazy_iter(LazyItems *self) {
    LazyIter *it = PyObject_New(LazyIter, &LazyIter_Type);
    if (!it) return NULL;
    Py_INCREF(self);
    it->items = self;
    it->next = 0;
    return (PyObject *)it;
}

static void lazy_iter_dealloc(LazyIter *it) {
    Py_XDECREF(it->items);
    PyObject_Free(it);
}

static PyObject *lazy_iter_next(LazyIter *it) {
    if (!it->items || it->next >= it->items->count) {
        Py_CLEAR(it->items);
        return NULL;
    }
    return lazy_build(it->items, it->next++);
}

static PyObject *lazy_iter_length_hint(LazyIter *it, PyObject *unused) {
    (void)unused;
    return PyLong_FromSsize_t(it->items ? it->items->count - it->next : 0);
}

static PyMethodDef lazy_iter_methods[] = {
    {"__length_hint__", (PyCFunction)lazy_iter_length_hint, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}
};

static PyTypeObject LazyIter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcodec.LazyRecordsIterator",
    .tp_basicsize = sizeof(LazyIter),
    .tp_dealloc = (destructor)lazy_iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)lazy_iter_next,
    .tp_methods = lazy_iter_methods,
};

static PySequenceMethods lazy_as_sequence = {
    .sq_length = (lenfunc)lazy_len,
    .sq_item = (ssizeargfunc)lazy_item,
};

static PyMappingMethods lazy_as_mapping = {
    .mp_length = (lenfunc)lazy_len,
    .mp_subscript = (binaryfunc)lazy_subscript,
};

static PyMethodDef lazy_methods[] = {
    {"__reduce__", (PyCFunction)lazy_reduce, METH_NOARGS, "pickled as a list"},
    {NULL, NULL, 0, NULL}
};

/* Holds only bytes, a type and a plan of constants: it can close no reference cycle, so no GC. */
static PyTypeObject LazyItems_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcodec.LazyRecords",
    .tp_doc = "The records of a batch, each built when it is read (a read-only sequence; equal to their list).",
    .tp_basicsize = sizeof(LazyItems),
    .tp_dealloc = (destructor)lazy_dealloc,
    .tp_repr = (reprfunc)lazy_repr,
    .tp_as_sequence = &lazy_as_sequence,
    .tp_as_mapping = &lazy_as_mapping,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_SEQUENCE,
    .tp_richcompare = lazy_richcompare,
    .tp_iter = (getiterfunc)lazy_iter,
    .tp_methods = lazy_methods,
};

/* The plan's sums fit (apply_plan would raise otherwise); 0 or -1. sums: the plan's 'a' items, n of them
 * (plan_sums). */
static int plan_fits(const int64_t *num, const PlanOp *const *sums, int n) {
    for (int k = 0; k < n; k++) {
        long long sum;
        if (__builtin_add_overflow((long long)num[sums[k]->field], sums[k]->addend, &sum)) return -1;
    }
    return 0;
}

/* The plan's sums ('a' items: offsets, timestamps, sequences) into sums (room for LAZY_MAX_FIELDS): plan_fits
 * then checks only those, record after record. How many, or -1 when more. */
static int plan_sums(const PlanOp *ops, Py_ssize_t n, const PlanOp **sums) {
    int count = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (ops[k].kind != 'a') continue;
        if (count == LAZY_MAX_FIELDS) return -1;
        sums[count++] = &ops[k];
    }
    return count;
}

/* A LazyItems over the `count` entities from pos in data (bytes), each checked by chk, built by the plan
 * `ops` (nops items, PyMem memory it takes over, whatever it returns) whose constants `keep` holds; *next:
 * where the last one ends. NULL with no error set when one does not decode (the eager projection then raises
 * what is wrong, where). */
static PyObject *lazy_make_ops(PyObject *data, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t count, PyTypeObject *type,
                               PyObject *keep, PlanOp *ops, Py_ssize_t nops, const char *kinds, prj_fn prj,
                               prj_fn chk, Py_ssize_t *next) {
    int nfields = (int)strlen(kinds);
    LazyItems *self = nfields > LAZY_MAX_FIELDS ? NULL : PyObject_New(LazyItems, &LazyItems_Type);
    if (!self) { PyMem_Free(ops); return NULL; }
    self->ops = ops;
    self->nops = nops;
    self->starts = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(Py_ssize_t));
    Py_INCREF(data);
    Py_INCREF(type);
    Py_INCREF(keep);
    self->data = data;
    self->type = type;
    self->plan = keep;
    self->count = count;
    self->end = end;
    self->kinds = kinds;
    self->nfields = nfields;
    self->moves = plan_moves(ops, nops, kinds);
    self->prj = prj;
    if (!self->starts) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    const uint8_t *buf = (const uint8_t *)PyBytes_AS_STRING(data);
    Py_ssize_t buflen = PyBytes_GET_SIZE(data), p = pos;
    int64_t num[LAZY_MAX_FIELDS] = {0};  /* zeroed once: chk sets every integer field plan_fits reads */
    const PlanOp *sums[LAZY_MAX_FIELDS];
    int nsums = plan_sums(ops, nops, sums);
    if (nsums < 0) {  /* more sums than fields: no plan of kcodec's; the eager projection builds it */
        Py_DECREF(self);
        return NULL;
    }
    Py_ssize_t ahead = p;  /* prefetched up to here: each entity's start depends on the one before, so
                            * the walk would wait on memory at every entity of bytes not in cache */
    for (Py_ssize_t i = 0; i < count; i++) {
        for (; ahead < end && ahead < p + LAZY_PREFETCH; ahead += 64) __builtin_prefetch(buf + ahead);
        self->starts[i] = p;
        if (p >= end || chk(buf, buflen, &p, end, &NO_OPTS, NULL, num) < 0 || plan_fits(num, sums, nsums) < 0) {
            PyErr_Clear();
            Py_DECREF(self);
            return NULL;
        }
    }
    *next = p;
    return (PyObject *)self;
}

/* lazy_make_ops with the plan given as a Python tuple (entry.c's parse_plan): (LazyItems, next_pos). */
static PyObject *lazy_make(PyObject *data, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t count, PyTypeObject *type,
                           PyObject *plan, const char *kinds, prj_fn prj, prj_fn chk) {
    Py_ssize_t nops, next;
    if ((Py_ssize_t)strlen(kinds) > LAZY_MAX_FIELDS) return NULL;
    PlanOp *ops = parse_plan(plan, kinds, &nops);
    if (!ops) return NULL;
    PyObject *self = lazy_make_ops(data, pos, end, count, type, plan, ops, nops, kinds, prj, chk, &next);
    return self ? Py_BuildValue("(Nn)", self, next) : NULL;
}

/* ---- tuple fields read as slots */

/* tuple_fields(cls, names, docs) -> {name: descriptor}: a read-only member descriptor per name reading item
 * i of a tuple subclass whose instances always hold len(names) items (kcodec's Record). CPython specialises
 * attribute reads through member descriptors (as it does __slots__), which it does not do for
 * namedtuple's item getters. The definitions live as long as the process (the descriptors point at them). */
static PyObject *py_tuple_fields(PyObject *self, PyObject *args) {
    (void)self;
    PyTypeObject *type;
    PyObject *names, *docs;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &type, &PyTuple_Type, &names, &PyTuple_Type, &docs))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    if (!PyType_IsSubtype(type, &PyTuple_Type) || PyTuple_GET_SIZE(docs) != n) {
        PyErr_SetString(PyExc_TypeError, "tuple_fields needs a tuple subclass and as many docs as names");
        return NULL;
    }
    PyMemberDef *defs = PyMem_Calloc((size_t)(n ? n : 1), sizeof(PyMemberDef));
    PyObject *out = defs ? PyDict_New() : NULL;
    if (!out) { PyMem_Free(defs); return defs ? NULL : PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i), *doc = PyTuple_GET_ITEM(docs, i);
        Py_INCREF(name);  /* kept for ever: the definition points into it */
        Py_INCREF(doc);
        defs[i].name = PyUnicode_AsUTF8(name);
        defs[i].doc = doc == Py_None ? NULL : PyUnicode_AsUTF8(doc);
        defs[i].type = T_OBJECT_EX;
        defs[i].offset = offsetof(PyTupleObject, ob_item) + i * (Py_ssize_t)sizeof(PyObject *);
        defs[i].flags = READONLY;
        PyObject *d = defs[i].name && (doc == Py_None || defs[i].doc) ? PyDescr_NewMember(type, &defs[i]) : NULL;
        if (!d || PyDict_SetItem(out, name, d) < 0) {
            Py_XDECREF(d);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(d);
    }
    return out;
}

/* ---- Records freed and built again without the allocator
 *
 * kcodec's Record is a class statement's tuple subclass, so CPython frees each through the generic
 * deallocator of such classes (subtype_dealloc: finalizers, weak references, slots, a trashcan, then the
 * tuple's and the allocator's) and allocates each anew. reuse_records(Record, n) gives the class this
 * deallocator instead, which is all the class needs (it has no __del__, __dict__, weak references or
 * slots of its own): a freed Record of n items is kept (up to REUSED_MAX, entry.c), for untracked_tuple_of
 * to build the next one in; the class itself, its instances and its API stay as Python defines them. */

static void reused_record_dealloc(PyObject *op) {
    PyTypeObject *type = Py_TYPE(op);
    Py_ssize_t n = Py_SIZE(op);
    if (!PyObject_GC_IsTracked(op) && type == reused_type && n == reused_items) {
        /* a Record the kernel built untracked: its items are ints, bytes, str, None, constants and untracked
         * tuples (each freeing itself under its own trashcan), never a Record, so no nesting for the trashcan
         * to bound; the Records Python builds are tracked (and a subclass's are not of reused_type): below */
        for (Py_ssize_t i = 0; i < n; i++) Py_CLEAR(((PyTupleObject *)op)->ob_item[i]);
        if (reused_count < REUSED_MAX) {
            reused[reused_count++] = op;  /* keeps its reference to the type */
        } else {
            type->tp_free(op);
            Py_DECREF(type);
        }
        return;
    }
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, reused_record_dealloc)
    for (Py_ssize_t i = 0; i < n; i++) Py_CLEAR(((PyTupleObject *)op)->ob_item[i]);
    if (type == reused_type && n == reused_items && reused_count < REUSED_MAX) {
        reused[reused_count++] = op;  /* keeps its reference to the type */
    } else {  /* also an instance of a subclass, after subtype_dealloc: the base's part, then the type's */
        type->tp_free(op);
        Py_DECREF(type);
    }
    Py_TRASHCAN_END
}

/* reuse_records(cls, n): the deallocator above for cls, a class statement's direct tuple subclass with
 * no state beyond its items (kcodec's Record); its freed instances of n items are built again. Once. */
static PyObject *py_reuse_records(PyObject *self, PyObject *args) {
    (void)self;
    PyTypeObject *type;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!n", &PyType_Type, &type, &n)) return NULL;
    if (reused_type == type && reused_items == n) Py_RETURN_NONE;
    if (reused_type || type->tp_base != &PyTuple_Type || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
        type->tp_basicsize != PyTuple_Type.tp_basicsize || type->tp_dictoffset || type->tp_weaklistoffset ||
        type->tp_finalize || type->tp_del || n < 0) {
        PyErr_SetString(PyExc_TypeError,
                        "reuse_records needs a tuple subclass without __dict__, weak references or finalizers, once");
        return NULL;
    }
    Py_INCREF(type);  /* for ever: the kept instances are of it */
    reused_type = type;
    reused_items = n;
    type->tp_dealloc = reused_record_dealloc;
    Py_RETURN_NONE;
}

/* reuse_batches(cls, keep): the same for cls, a class statement's direct object subclass whose state is its
 * __slots__ alone (kcodec's Batch, a dataclass with slots): a freed instance has every slot cleared and is
 * kept (up to `keep`: the most one legacy_batches run makes, so the next run is built in the last one's),
 * untracked, for legacy_batches (legacy_reader.c) to fill again; one per uncompressed v0/v1 message. */
static PyTypeObject *reused_batch_type;
static PyObject **reused_batches;
static Py_ssize_t reused_batch_count, reused_batch_max;

static void reused_batch_dealloc(PyObject *op) {
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, reused_batch_dealloc)
    for (PyMemberDef *m = reused_batch_type->tp_members; m && m->name; m++)  /* the slots (of a subclass: cleared) */
        if (m->type == T_OBJECT_EX) Py_CLEAR(*(PyObject **)((char *)op + m->offset));
    if (type == reused_batch_type && reused_batch_count < reused_batch_max) {
        reused_batches[reused_batch_count++] = op;  /* keeps its reference to the type */
    } else {
        type->tp_free(op);
        Py_DECREF(type);
    }
    Py_TRASHCAN_END
}

/* An instance of `type` with every slot NULL, not tracked: a freed one when `type` is the reused class. */
static PyObject *untracked_batch_of(PyTypeObject *type) {
    if (type == reused_batch_type && reused_batch_count) {
        PyObject *o = reused_batches[--reused_batch_count];
        _Py_NewReference(o);
        return o;
    }
    PyObject *o = type->tp_alloc(type, 0);
    if (o) PyObject_GC_UnTrack(o);
    return o;
}

static PyObject *py_reuse_batches(PyObject *self, PyObject *args) {
    (void)self;
    PyTypeObject *type;
    Py_ssize_t keep;
    if (!PyArg_ParseTuple(args, "O!n", &PyType_Type, &type, &keep)) return NULL;
    if (reused_batch_type == type && reused_batch_max == keep) Py_RETURN_NONE;
    if (reused_batch_type || keep < 0 || type->tp_base != &PyBaseObject_Type || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
        !(type->tp_flags & Py_TPFLAGS_HAVE_GC) || type->tp_itemsize || type->tp_dictoffset ||
        type->tp_weaklistoffset || type->tp_finalize || type->tp_del || !type->tp_members) {
        PyErr_SetString(PyExc_TypeError,
                        "reuse_batches needs a class with __slots__ alone (no __dict__, weak references or "
                        "finalizers), once");
        return NULL;
    }
    if (!(reused_batches = PyMem_Calloc((size_t)(keep ? keep : 1), sizeof(PyObject *)))) return PyErr_NoMemory();
    Py_INCREF(type);  /* for ever: the kept instances are of it */
    reused_batch_type = type;
    reused_batch_max = keep;
    type->tp_dealloc = reused_batch_dealloc;
    Py_RETURN_NONE;
}
