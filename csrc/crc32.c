/* kcodec's compiled kernel: CRC-32 (IEEE), as zlib computes it.
 * Hand-written C, one part of the kernel's single translation unit: generated/_ckernel.c includes it
 * after kernel.h (see there for the order and for what the printed code provides). */

/* ---- CRC-32 (IEEE, zlib's), slicing by 8 */

/* CRC-32 by carry-less multiplication (x86-64 PCLMULQDQ): Intel's "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ Instruction", folding 64 bytes at a time, with the bit-reflected constants of
 * its IEEE polynomial. Takes and returns the CRC register (not inverted); n >= 64 and a multiple of 16.
 * Several times the table's speed on the few hundred bytes of a v0/v1 message. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KCODEC_CLMUL 1
static int have_clmul;

__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_clmul(const uint8_t *p, Py_ssize_t n, uint32_t c) {
    static const uint64_t __attribute__((aligned(16))) k1k2[2] = {0x0154442bd4ULL, 0x01c6e41596ULL};
    static const uint64_t __attribute__((aligned(16))) k3k4[2] = {0x01751997d0ULL, 0x00ccaa009eULL};
    static const uint64_t __attribute__((aligned(16))) k5k0[2] = {0x0163cd6124ULL, 0};
    static const uint64_t __attribute__((aligned(16))) poly[2] = {0x01db710641ULL, 0x01f7011641ULL};
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8;
    x1 = _mm_loadu_si128((const __m128i *)(p + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(p + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(p + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(p + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
    x0 = _mm_load_si128((const __m128i *)k1k2);
    p += 64;
    n -= 64;
    while (n >= 64) {  /* four lanes of 16 bytes, each folded 64 bytes ahead */
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(p + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(p + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(p + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(p + 0x30)));
        p += 64;
        n -= 64;
    }
    x0 = _mm_load_si128((const __m128i *)k3k4);  /* the four lanes into one */
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x11), x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x11), x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x11), x4), x5);
    while (n >= 16) {  /* then 16 bytes at a time */
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm_loadu_si128((const __m128i *)p)), x5);
        p += 16;
        n -= 16;
    }
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);  /* 128 bits to 64 */
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x0 = _mm_loadl_epi64((const __m128i *)k5k0);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x00), x2);
    x0 = _mm_load_si128((const __m128i *)poly);  /* Barrett reduction to 32 bits */
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

static uint32_t crc32_table[8][256];

static void crc32_init(void) {
#ifdef KCODEC_CLMUL
    __builtin_cpu_init();
    have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc32_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc32_table[t][i] = (crc32_table[t - 1][i] >> 8) ^ crc32_table[0][crc32_table[t - 1][i] & 0xFF];
}

static uint32_t crc32_of(const uint8_t *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
#ifdef KCODEC_CLMUL
    if (have_clmul && n >= 64) {
        Py_ssize_t folded = n & ~(Py_ssize_t)15;
        c = crc32_clmul(p, folded, c);
        p += folded;
        n -= folded;
        /* at most 15 bytes left: 8 at once (below), the rest byte by byte: a v0/v1 message's CRC covers a
         * few hundred bytes, and 15 dependent table steps cost about what the folding of them does */
    }
#endif
    while (n >= 8) {
        uint32_t a = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = crc32_table[7][a & 0xFF] ^ crc32_table[6][(a >> 8) & 0xFF] ^ crc32_table[5][(a >> 16) & 0xFF] ^
            crc32_table[4][a >> 24] ^ crc32_table[3][p[4]] ^ crc32_table[2][p[5]] ^ crc32_table[1][p[6]] ^
            crc32_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--) c = crc32_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* A stored CRC-32 (read at `at`) that does not match its bytes: Kafka's LegacyRecord wording. */
__attribute__((unused)) static int crc_differs(const uint8_t *p, Py_ssize_t n, int64_t stored, Py_ssize_t at,
                                               const char *field) {
    uint32_t computed = crc32_of(p, n);
    if (computed == (uint32_t)stored) return 0;
    raise_msg(E_Crc, at, field, PyObject_CallFunction(F_corrupt_message, "kk", (unsigned long)stored,
                                                      (unsigned long)computed));
    return 1;
}

/* crc32(buf) -> int: CRC-32 (IEEE, as zlib.crc32) by the kernel's carry-less multiplication where the CPU has
 * it: a v0/v1 wrapper's CRC covers its whole compressed value. */
static PyObject *py_crc32(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c;
    Py_BEGIN_ALLOW_THREADS
    c = crc32_of((const uint8_t *)view.buf, view.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(c);
}
