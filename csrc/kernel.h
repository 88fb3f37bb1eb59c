/* kcodec's compiled kernel: the hand-written C shared by every part.
 *
 * The kernel is one translation unit, generated/_ckernel.c, printed from the schemas by
 * codegen/templates/ckernel.c.j2. It includes the files of this directory (setup.py puts csrc/ on the
 * include path) around the code it prints per entity version, in this order:
 *
 *   kernel.h        includes, kcodec's exception classes, errors, varints and other primitives, options
 *   crc32.c         CRC-32 (IEEE) by carry-less multiplication or tables; the crc32 entry point
 *   compressed.c    compressed values: kcodec's decompressor, then the stream decoded here
 *   buffers.c       growable buffers, Arrow binary columns and their export to Python
 *   encode.c        integer checks, big-endian and varint writers, length patching
 *   entry.c         argument parsing of the entry points, projections, add_to_items
 *   lazy.c          LazyRecords (projections built when read, for the printed lazy_<entity>), tuple_fields
 *   -- printed: per entity version dec_/prj_/py_decode_/py_project_ and, where plain, put_/enc_/col_...
 *   records_v2.c    encode_records_v2 (calls the printed put_record_v2)
 *   murmur2.c       Kafka's murmur2 and the murmur2 entry point
 *   -- printed: the span writers span_put_<entity> (of the Span type of buffers.c)
 *   columns.c       encode_columns_v2, partitions_for_keys, columns_sizes_v2, cut_run
 *   json_lines.c    json_records: `kcodec dump --json` record text from Arrow columns (uses columns.c)
 *   json_scan.c     scan_hex_records: `kcodec write`'s JSON lines of one exact shape into columns
 *   -- printed: the LEGACY_* layout facts of the v0/v1 entities
 *   legacy_reader.c legacy_batches and legacy_inner_records
 *   -- printed: the RECORD_BATCH_V2_* layout facts of the v2 batch header
 *   batch_header.c  V2Header and v2_header_parse: a v2 batch header read from raw bytes; what both batch
 *                   walks below judge and do to a batch alike (v2_whole_entry, v2_walk_takes, v2_crc_holds,
 *                   v2_records_inflated)
 *   segment_columns.c segment_columns: a run of v2 data batches into one set of Arrow columns (calls the
 *                   printed col_record_v2)
 *   batch_records.c v2_batches: a run of v2 data batches into kcodec Batches holding LazyRecords (calls the
 *                   printed prj_/chk_record_v2)
 *   legacy_writer.c encode_legacy_entries (calls the printed put_legacy_message_v0/v1)
 *   module.c        kernel_init (what PyInit__ckernel does before it makes the module), the entry points
 *                   every kernel has (kernel_methods) and ENTITIES from the printed table
 *   -- printed: the per-entity method table and PyInit__ckernel, which adds kernel_methods and the
 *      records_v2_methods, columns_methods, json_lines_methods, json_scan_methods, legacy_writer_methods,
 *      segment_columns_methods and batch_records_methods of the files it included
 *
 * Every helper is static: a single translation unit lets the compiler inline them into the printed
 * code, and no name leaks out of the extension. records_v2.c, columns.c, segment_columns.c, batch_records.c
 * and legacy_writer.c are included only when the schemas give the writers they call. The digest of these files is printed
 * into the kernel (CSRC_SHA256) and into kcodec.generated.fast.kernel: a kernel built from other
 * csrc/ files is not used (see kcodec.runtime.kernel), and `kcodec generate --check` notices a change.
 */
#ifndef KCODEC_KERNEL_H
#define KCODEC_KERNEL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static PyObject *E_Truncated, *E_BadLength, *E_RecordCount, *E_VarintTooLong, *E_Corrupt, *E_Encode;
static PyObject *E_Magic, *E_Compression, *E_Crc, *E_Decode;
/* kcodec's own functions the kernel calls: decompression and Kafka's wording of a CRC mismatch */
static PyObject *F_decompress, *F_corrupt_message, *DEFAULT_LIMIT, *INSIDE_COMPRESSED;
/* kcodec.runtime.encoded.EncodedArray: an array field given already encoded */
static PyObject *T_EncodedArray;

/* ---- errors: kcodec's exception classes with position and field */

/* Set while this thread walks records without the GIL (segment_columns.c, beside a thread that inflates the
 * next batches): an error is then only a failure (-1), no exception is made, and the caller walks the same
 * bytes again with the GIL to raise it. */
static _Thread_local int walk_without_gil;

/* Raise cls(msg, position=pos, field=field); steals msg. */
static void raise_msg(PyObject *cls, Py_ssize_t pos, const char *field, PyObject *msg) {
    if (!msg) return;
    PyObject *args = PyTuple_Pack(1, msg);
    PyObject *kw = Py_BuildValue("{s:n,s:s}", "position", pos, "field", field);
    PyObject *exc = (args && kw) ? PyObject_Call(cls, args, kw) : NULL;
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_DECREF(msg);
}

static void raise_at(PyObject *cls, Py_ssize_t pos, const char *field, const char *fmt, ...) {
    if (walk_without_gil) return;
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    raise_msg(cls, pos, field, msg);
}

/* Before element k of count: bytes framed by a length that end with elements still to come mean the count
 * lies, not that the input was cut (Kafka: "Incorrect declared batch size, premature EOF reached"). The
 * Python decoders raise the same (fast_module.py.j2, constructs.CountedArray). */
static int count_outruns(Py_ssize_t p, Py_ssize_t end, Py_ssize_t k, Py_ssize_t count) {
    if (p < end) return 0;
    raise_at(E_RecordCount, p, NULL, "the count says %zd elements but the bytes end after %zd", count, k);
    return 1;
}

/* An error from a nested entity: put the parent field in front of its path ("headers.key"). */
static void scope_error(const char *parent) {
    if (walk_without_gil) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && PyObject_HasAttrString(value, "field")) {
        PyObject *field = PyObject_GetAttrString(value, "field");
        PyObject *scoped = (field && field != Py_None) ? PyUnicode_FromFormat("%s.%U", parent, field)
                                                       : PyUnicode_FromString(parent);
        if (scoped) PyObject_SetAttrString(value, "field", scoped);
        Py_XDECREF(scoped);
        Py_XDECREF(field);
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
}

static void truncated(Py_ssize_t pos, const char *field) {
    raise_at(E_Truncated, pos, field, "%s runs past the end of its bytes", field);
}

/* ---- primitives */

static inline uint16_t load_be16(const uint8_t *b) { return (uint16_t)((b[0] << 8) | b[1]); }
static inline uint32_t load_be32(const uint8_t *b) {
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}
static inline uint64_t load_be64(const uint8_t *b) { return ((uint64_t)load_be32(b) << 32) | load_be32(b + 4); }
static inline int32_t zigzag32(uint32_t u) { return (int32_t)((u >> 1) ^ (0u - (u & 1u))); }
static inline int64_t zigzag64(uint64_t u) { return (int64_t)((u >> 1) ^ (0ull - (u & 1ull))); }

/* Kafka's varints: at most 5 (10) bytes; bits beyond 32 (64) are dropped as Java does. */
static inline int read_uvarint32(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t limit, uint32_t *out,
                                 const char *field) {
    Py_ssize_t p = *pos;
    if (p < limit && buf[p] < 0x80) { *out = buf[p]; *pos = p + 1; return 0; }
    uint32_t v = 0;
    for (int i = 0; i < 5; i++) {
        if (p >= limit) { raise_at(E_Truncated, *pos, field, "varint runs past the end of the input"); return -1; }
        uint8_t b = buf[p++];
        v |= (uint32_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) { *out = v; *pos = p; return 0; }
    }
    raise_at(E_VarintTooLong, *pos, field, "Varint is too long, the most significant bit in the 5th byte is set");
    return -1;
}

static inline int read_uvarint64(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t limit, uint64_t *out,
                                 const char *field) {
    Py_ssize_t p = *pos;
    if (p < limit && buf[p] < 0x80) { *out = buf[p]; *pos = p + 1; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= limit) { raise_at(E_Truncated, *pos, field, "varlong runs past the end of the input"); return -1; }
        uint8_t b = buf[p++];
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) { *out = v; *pos = p; return 0; }
    }
    raise_at(E_VarintTooLong, *pos, field, "Varlong is too long, most significant bit in the 10th byte is set");
    return -1;
}

static int utf8_valid(const uint8_t *s, int64_t n) {
    int64_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) return 0;
        uint32_t cp = c & (0x7F >> len);
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

/* A text field's str (invalid UTF-8 replaced, as Kafka's Java client reads it). Short ASCII texts repeat
 * from record to record (header keys): the str made for the same bytes last time in one of TEXT_SLOTS slots
 * (picked by a hash of the bytes) is handed out again instead of a new one decoded and allocated. A str is
 * immutable, so sharing it changes nothing but its identity; one character is CPython's own singleton. */
enum { TEXT_SLOTS = 256, TEXT_SHARED_MAX = 64 };
static PyObject *text_shared[TEXT_SLOTS];

static PyObject *text_of(const uint8_t *s, Py_ssize_t n) {
    if (n <= 1 || n > TEXT_SHARED_MAX) return PyUnicode_DecodeUTF8((const char *)s, n, "replace");
    uint32_t h = 2166136261u;  /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    PyObject **slot = &text_shared[(h ^ (h >> 16)) % TEXT_SLOTS], *t = *slot;
    if (t && PyUnicode_GET_LENGTH(t) == n && memcmp(PyUnicode_1BYTE_DATA(t), s, (size_t)n) == 0) {
        Py_INCREF(t);
        return t;
    }
    t = PyUnicode_DecodeUTF8((const char *)s, n, "replace");
    if (t && PyUnicode_IS_ASCII(t) && PyUnicode_GET_LENGTH(t) == n) {  /* only ASCII: its data are the bytes */
        Py_INCREF(t);
        Py_XSETREF(*slot, t);
    }
    return t;
}

/* ---- decoder options (the Python decoders' verify_crc, limit, contents) */

enum { CONTENTS_NO, CONTENTS_YES, CONTENTS_INSIDE };  /* INSIDE: in a decompressed stream, no second level */
typedef struct { int verify_crc; PyObject *limit; int contents; } Opts;

static int parse_opts(PyObject *verify_crc, PyObject *limit, PyObject *contents, Opts *o) {
    int v = verify_crc ? PyObject_IsTrue(verify_crc) : 1;
    if (v < 0) return -1;
    o->verify_crc = v;
    o->limit = limit ? limit : DEFAULT_LIMIT;
    o->contents = CONTENTS_YES;
    if (contents) {
        int eq = PyObject_RichCompareBool(contents, INSIDE_COMPRESSED, Py_EQ);
        int yes = eq > 0 ? 1 : PyObject_IsTrue(contents);
        if (eq < 0 || yes < 0) return -1;
        o->contents = eq > 0 ? CONTENTS_INSIDE : yes ? CONTENTS_YES : CONTENTS_NO;
    }
    return 0;
}

#endif /* KCODEC_KERNEL_H */
