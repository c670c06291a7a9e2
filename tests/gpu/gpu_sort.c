/* tests/gpu/gpu_sort.c - gpuk_sort_keys_*, gpuk_sort_pairs_* and gpuk_sort_index_* on a real GPU
   against a CPU reference: the documented order (ordered bits, complemented for descending,
   only [begin_bit, end_bit) counting), stable (ties keep input order), built with qsort on
   (key, input index), and for full-width sorts also checked against C's own comparison of the
   keys (numbers in order; -0.0 before +0.0, NaNs at the ends by sign). Every key type, keys
   alone, with random 32-bit values and with their input index; ascending and descending; bit
   ranges; in place; sizes 0, 1, odd, one tile (of each tile size) +-1, several tiles and
   about 10^6; random bits, many duplicates, all equal, sorted, reversed, float specials;
   4-byte pairs on the baseline too where the GPU would take their sm_90 variant.
   Outputs poisoned before each run, with a guard on each side. A sort captured into a graph
   and replayed on new keys. The bench's sorts at its sizes (2^28 u32 keys, alone and with
   values, also on the baseline; 2^16 u32; 2^27 u64), checked in O(n) through the index sort.
   Skipped where no driver or GPU exists.
   GPUK_TEST_QUICK=1 (the sanitizer runs) uses 20011 in place of 1000003, 9001 in place of
   50001 and 20011, 24581 for the bench's sizes, and one run a size, type and case where the
   full test makes two. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };
static size_t big = 1000003, mid = 50001, range_n = 20011;
static int quick; /* GPUK_TEST_QUICK: fewer runs (each launch is slow under the sanitizers) */

enum { U32, I32, F32, U64, I64, F64, NTYPES };
static const char* const type_name[NTYPES] = { "u32", "i32", "f32", "u64", "i64", "f64" };
static size_t key_bytes(int type) { return type < U64 ? 4 : 8; }

/* ---- the reference ---- */
/* the key's ordered bits: unsigned as they are, signed with the sign bit flipped, floats with
   the sign bit of positives flipped and every bit of negatives */
static uint64_t ordered(int type, uint64_t raw) {
    const int bits = (int)key_bytes(type) * 8;
    const uint64_t top = (uint64_t)1 << (bits - 1);
    const uint64_t all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    if (type == U32 || type == U64) return raw;
    if (type == I32 || type == I64) return raw ^ top;
    return (raw & top) ? ~raw & all : raw ^ top;
}

typedef struct sort_rec { uint64_t key; uint32_t index; } sort_rec;
static int by_key_then_index(const void* a, const void* b) {
    const sort_rec* x = (const sort_rec*)a;
    const sort_rec* y = (const sort_rec*)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static uint64_t get_key(int type, const unsigned char* p, size_t i) {
    if (key_bytes(type) == 4) { uint32_t v; memcpy(&v, p + i * 4, 4); return v; }
    { uint64_t v; memcpy(&v, p + i * 8, 8); return v; }
}

/* order[i]: the input index of output i, stably by the bits [begin, end) of the (for
   descending, complemented) ordered key */
static void reference(int type, const unsigned char* keys, size_t n, int descending,
                      unsigned begin, unsigned end, uint32_t* order) {
    sort_rec* r = (sort_rec*)malloc((n ? n : 1) * sizeof *r);
    const uint64_t mask = end - begin == 64 ? ~0ull : (1ull << (end - begin)) - 1;
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t o = ordered(type, get_key(type, keys, i));
        if (descending) o = ~o;
        r[i].key = (o >> begin) & mask;
        r[i].index = (uint32_t)i;
    }
    qsort(r, n, sizeof *r, by_key_then_index);
    for (i = 0; i < n; i++) order[i] = r[i].index;
    free(r);
}

/* C's own order of two keys for full-width sorts: -1, 0, 1; NaNs by sign at the ends, -0.0
   before +0.0 (the documented order, which C's < leaves open) */
static int c_compare(int type, uint64_t a, uint64_t b) {
    switch (type) {
    case U32: return (uint32_t)a < (uint32_t)b ? -1 : (uint32_t)a > (uint32_t)b;
    case I32: {
        const int32_t x = (int32_t)(uint32_t)a, y = (int32_t)(uint32_t)b;
        return x < y ? -1 : x > y;
    }
    case U64: return a < b ? -1 : a > b;
    case I64: return (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
    default: {
        double x, y;
        int nx, ny, sx, sy;
        if (type == F32) {
            float f, g;
            uint32_t u = (uint32_t)a, v = (uint32_t)b;
            memcpy(&f, &u, 4); memcpy(&g, &v, 4);
            x = f; y = g;
        } else {
            memcpy(&x, &a, 8); memcpy(&y, &b, 8);
        }
        nx = x != x; ny = y != y; sx = signbit(x) != 0; sy = signbit(y) != 0;
        if (nx || ny) { /* rank: -NaN 0, numbers 1, +NaN 2 */
            const int rx = nx ? (sx ? 0 : 2) : 1, ry = ny ? (sy ? 0 : 2) : 1;
            return rx < ry ? -1 : rx > ry;
        }
        if (x != y) return x < y ? -1 : 1;
        return sx == sy ? 0 : sx ? -1 : 1;
    }
    }
}

/* ---- inputs ---- */
enum { RANDOM, FEW, EQUAL, SORTED, REVERSED, SPECIALS, NKINDS };
static const char* const kind_name[NKINDS] = { "random", "few values", "all equal", "sorted",
                                                "reversed", "specials" };

static uint64_t special(int type) {
    static const uint32_t f32[] = { 0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                                    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA00001u,
                                    0x00000001u, 0x80000001u, 0x3F800000u, 0xBF800000u };
    static const uint64_t f64[] = { 0, 0x8000000000000000ull, 0x7FF0000000000000ull,
                                    0xFFF0000000000000ull, 0x7FF8000000000000ull,
                                    0xFFF8000000000000ull, 0x7FF0000000000001ull,
                                    0xFFF4000000000001ull, 1, 0x8000000000000001ull,
                                    0x3FF0000000000000ull, 0xBFF0000000000000ull };
    static const uint64_t ints[] = { 0, 1, ~0ull, 0x80000000u, 0x7FFFFFFFu,
                                     0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull };
    if (type == F32) return f32[rng() % 12];
    if (type == F64) return f64[rng() % 12];
    return ints[rng() % 7];
}

static void make_keys(int type, int kind, unsigned char* keys, size_t n) {
    const size_t kb = key_bytes(type);
    uint64_t pick = rng(), v;
    size_t i;
    for (i = 0; i < n; i++) {
        switch (kind) {
        case FEW: v = (rng() % 5) * 0x0101010101010101ull ^ pick; break;
        case EQUAL: v = pick; break;
        case SORTED: v = (uint64_t)i * 977; break;
        case REVERSED: v = (uint64_t)(n - i) * 977; break;
        case SPECIALS: v = rng() % 3 ? special(type) : rng(); break;
        default: v = rng(); break;
        }
        if (kb == 4) { uint32_t w = (uint32_t)v; memcpy(keys + i * 4, &w, 4); }
        else memcpy(keys + i * 8, &v, 8);
    }
}

/* ---- one run ---- */
enum { KEYS, PAIRS, INDEX };
static const char* const what_name[] = { "keys", "pairs", "index" };

static gpuk_result sort_call(int type, int what, gpuk_array ko, gpuk_array vo, gpuk_array ki,
                             gpuk_array vi, size_t n, int desc, unsigned begin, unsigned end) {
#define SORT_CASE(T, t)                                                                 \
    case T:                                                                             \
        if (what == KEYS) return gpuk_sort_keys_##t(ctx, S, ko, ki, n, desc, begin, end); \
        if (what == PAIRS)                                                              \
            return gpuk_sort_pairs_##t(ctx, S, ko, vo, ki, vi, n, desc, begin, end);    \
        return gpuk_sort_index_##t(ctx, S, ko, vo, ki, n, desc, begin, end);
    switch (type) {
    SORT_CASE(U32, u32)
    SORT_CASE(I32, i32)
    SORT_CASE(F32, f32)
    SORT_CASE(U64, u64)
    SORT_CASE(I64, i64)
    SORT_CASE(F64, f64)
    }
#undef SORT_CASE
    return GPUK_ERR_INVALID_ARG;
}

static int failures_shown;

/* Sorts n keys of the kind (and values) on the GPU and compares with the reference; end 0:
   all bits. The input sits at element 3 of its buffer, the output at element 1 of another
   (poisoned, guards at 0 and n + 1), or, in place, the output is the input. 1: all agree. */
static int run_one(int type, int kind, int what, size_t n, int desc, unsigned begin,
                   unsigned end, int in_place) {
    const size_t kb = key_bytes(type), bits = kb * 8;
    const unsigned end_bits = end ? end : (unsigned)bits;
    unsigned char* keys = (unsigned char*)malloc((n + 4) * kb);
    unsigned char* got = (unsigned char*)malloc((n + 4) * kb);
    uint32_t* vals = (uint32_t*)malloc((n + 4) * 4);
    uint32_t* gotv = (uint32_t*)malloc((n + 4) * 4);
    uint32_t* order = (uint32_t*)malloc((n + 1) * 4);
    gpuk_buffer kin, kout, vin, vout;
    size_t i, bad = 0, in_at = 3, out_at = in_place ? 3 : 1;
    int ok = 1;
    make_keys(type, kind, keys, n + 4);
    for (i = 0; i < n + 4; i++) vals[i] = (uint32_t)rng();
    reference(type, keys + in_at * kb, n, desc, begin, end_bits, order);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * kb }, &kin));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * kb }, &kout));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * 4 }, &vin));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * 4 }, &vout));
    CHECK_OK(gpuk_buffer_write(ctx, kin, 0, keys, (n + 4) * kb));
    CHECK_OK(gpuk_buffer_write(ctx, vin, 0, vals, (n + 4) * 4));
    CHECK_OK(gpuk_buffer_memset(ctx, S, kout, 0, 0xA5A5A5A5u, 4, (n + 4) * kb / 4)); /* poison */
    CHECK_OK(gpuk_buffer_memset(ctx, S, vout, 0, 0xA5A5A5A5u, 4, n + 4));
    {
        const gpuk_buffer kdst = in_place ? kin : kout, vdst = in_place ? vin : vout;
        CHECK_OK(sort_call(type, what, gpuk_at(kdst, out_at), gpuk_at(vdst, out_at),
                           gpuk_at(kin, in_at), gpuk_at(vin, in_at), n, desc, begin, end));
        CHECK_OK(gpuk_buffer_read(ctx, kdst, 0, got, (n + 4) * kb));
        CHECK_OK(gpuk_buffer_read(ctx, vdst, 0, gotv, (n + 4) * 4));
    }
    /* the guards beside the output: poison, or the input's own elements in place */
    for (i = 0; i < n + 4; i++) {
        const int inside = i >= out_at && i < out_at + n;
        const uint64_t poison = kb == 4 ? 0xA5A5A5A5u : 0xA5A5A5A5A5A5A5A5ull;
        const uint64_t want_k = in_place ? get_key(type, keys, i) : poison;
        const uint32_t want_v = in_place ? vals[i] : 0xA5A5A5A5u;
        if (inside) continue;
        if (get_key(type, got, i) != want_k || (what != KEYS && gotv[i] != want_v)) {
            if (failures_shown++ < 8) printf("  element %zu beside the output was written\n", i);
            ok = 0;
        }
    }
    for (i = 0; i < n; i++) {
        const uint32_t src = order[i];
        const uint64_t want_k = get_key(type, keys + in_at * kb, src);
        const uint32_t want_v = what == INDEX ? src : vals[in_at + src];
        const uint64_t gk = get_key(type, got + out_at * kb, i);
        if (gk != want_k || (what != KEYS && gotv[out_at + i] != want_v)) {
            if (bad++ < 3 && failures_shown++ < 8)
                printf("  [%zu]: key %llx value %u, want key %llx value %u\n", i,
                       (unsigned long long)gk, gotv[out_at + i], (unsigned long long)want_k,
                       want_v);
            ok = 0;
        }
        /* full width: C's order agrees (a check of the reference itself) */
        if (!end && !begin && i > 0) {
            const int c = c_compare(type, get_key(type, got + out_at * kb, i - 1), gk);
            if (desc ? c < 0 : c > 0) {
                if (bad++ < 3 && failures_shown++ < 8)
                    printf("  [%zu] out of order by C's comparison\n", i);
                ok = 0;
            }
        }
    }
    if (!ok)
        printf("  sort_%s_%s %s n %zu %s bits [%u, %u)%s\n", what_name[what], type_name[type],
               kind_name[kind], n, desc ? "descending" : "ascending", begin, end_bits,
               in_place ? " in place" : "");
    CHECK_OK(gpuk_buffer_destroy(ctx, kin));
    CHECK_OK(gpuk_buffer_destroy(ctx, kout));
    CHECK_OK(gpuk_buffer_destroy(ctx, vin));
    CHECK_OK(gpuk_buffer_destroy(ctx, vout));
    free(keys); free(got); free(vals); free(gotv); free(order);
    return ok;
}

/* sizes: 0, 1, odd, a tile +-1 (each tile size: 4-byte keys alone k4, with values p4 or, in
   the sm_90 variant, p4m, 8-byte keys alone k8, with values p8), several tiles */
static int test_small_and_tile_edge_sizes(void) {
    const size_t k4 = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_4K;
    const size_t p4 = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_4;
    const size_t p4m = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_4M;
    const size_t k8 = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_8K;
    const size_t p8 = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_8;
    const size_t sizes[] = { 0, 1, 2, 31, 255, 1000, k8 - 1, k8, k8 + 1, p8 - 1, p8, p8 + 1,
                             p4 - 1, p4, p4 + 1, p4m - 1, p4m, p4m + 1, k4 - 1, k4, k4 + 1,
                             8191, 8193, 12289,
                             2 * k4 + 1, 40961 };
    int type, failed = 0;
    size_t s;
    for (type = 0; type < NTYPES; type++)
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const size_t n = sizes[s];
            const int what = (int)(s % 3);
            if (!quick || (s + (size_t)type) % 2)
                failed += !run_one(type, RANDOM, KEYS, n, 0, 0, 0, 0);
            if (!quick || (s + (size_t)type) % 2 == 0)
                failed += !run_one(type, (int)(s % NKINDS), what, n, (int)(s & 1), 0, 0, 0);
        }
    CHECK(failed == 0);
    return TEST_PASS;
}

/* 4-byte pairs and index on the baseline (a ctx held to sm_80, what an A100 runs), which a
   GPU of sm_90 or newer otherwise leaves for its variant: tile edges of both tile sizes,
   several tiles, both orders, a bit range */
static int test_pairs_on_the_baseline(void) {
    const size_t p4 = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_4;
    const size_t p4m = (size_t)GPUK__BLOCK * GPUK__SORT_ITEMS_4M;
    const size_t sizes[] = { 1, 1000, p4 - 1, p4, p4 + 1, p4m + 1, mid };
    gpuk_ctx *own = ctx, *held = NULL;
    int type, failed = 0;
    size_t s;
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .kernels_max_sm = 80 }, &held));
    ctx = held; /* run_one sorts on ctx */
    for (type = U32; type <= F32; type++)
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            failed += !run_one(type, (int)((s + (size_t)type) % NKINDS), s % 2 ? PAIRS : INDEX,
                               sizes[s], (int)(s & 2) / 2, 0, s == 6 ? 24 : 0, 0);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    ctx = own;
    CHECK(failed == 0);
    return TEST_PASS;
}

/* every kind of input, both orders, keys, pairs and index, at about 10^6 keys */
static int test_large_inputs_every_kind(void) {
    int type, kind, failed = 0;
    for (type = 0; type < NTYPES; type++)
        for (kind = 0; kind < NKINDS; kind++)
            failed += !run_one(type, kind, (type + kind) % 3, big, kind & 1, 0, 0, 0);
    CHECK(failed == 0);
    return TEST_PASS;
}

/* ---- the bench's sizes: checked in O(n), without a reference sort ---- */
static const unsigned char poison_bytes[8] = { 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5 };

/* One ascending full-width sort of n keys of type (and, for pairs, values) on ctx, laid out as
   in run_one: the input at element 3 of n + 4, the outputs at element 1 of n + 4 poisoned;
   the whole output buffers are read back into got (and gotv for pairs and index). */
static void sort_on_gpu(int type, int what, size_t n, const unsigned char* keys,
                        const uint32_t* vals, unsigned char* got, uint32_t* gotv) {
    const size_t kb = key_bytes(type);
    gpuk_buffer kin = { 0 }, kout = { 0 }, vin, vout; /* {0}: none, should a create fail */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * kb }, &kin));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * kb }, &kout));
    CHECK_OK(gpuk_buffer_write(ctx, kin, 0, keys, (n + 4) * kb));
    CHECK_OK(gpuk_buffer_memset(ctx, S, kout, 0, 0xA5A5A5A5u, 4, (n + 4) * kb / 4));
    vin = kin; /* keys alone and index take no values; sort_call still wants arrays */
    vout = kout;
    if (what != KEYS) {
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * 4 }, &vout));
        CHECK_OK(gpuk_buffer_memset(ctx, S, vout, 0, 0xA5A5A5A5u, 4, n + 4));
    }
    if (what == PAIRS) {
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + 4) * 4 }, &vin));
        CHECK_OK(gpuk_buffer_write(ctx, vin, 0, vals, (n + 4) * 4));
    }
    CHECK_OK(sort_call(type, what, gpuk_at(kout, 1), gpuk_at(vout, 1), gpuk_at(kin, 3),
                       gpuk_at(vin, 3), n, 0, 0, 0));
    CHECK_OK(gpuk_buffer_read(ctx, kout, 0, got, (n + 4) * kb));
    if (what != KEYS) CHECK_OK(gpuk_buffer_read(ctx, vout, 0, gotv, (n + 4) * 4));
    if (what == PAIRS) CHECK_OK(gpuk_buffer_destroy(ctx, vin));
    if (what != KEYS) CHECK_OK(gpuk_buffer_destroy(ctx, vout));
    CHECK_OK(gpuk_buffer_destroy(ctx, kin));
    CHECK_OK(gpuk_buffer_destroy(ctx, kout));
}

/* 1 where the n + 4 elements of eb bytes of got equal want's; else the first that differs
   is shown */
static int same_elements(const char* what, const unsigned char* got, const unsigned char* want,
                         size_t eb, size_t n) {
    size_t i;
    if (!memcmp(got, want, (n + 4) * eb)) return 1;
    for (i = 0; !memcmp(got + i * eb, want + i * eb, eb); i++) continue;
    if (failures_shown++ < 8)
        printf("  %s: element %zu of the output buffer differs from the index sort's\n", what, i);
    return 0;
}

/* element j of the splitmix64 stream rng() would give from start: the bench's keys and values
   as functions of their position, so that a check computes the one a position wants in place
   of reading it from gigabytes at random (at 2^28 keys that is slower than the sort itself) */
static uint64_t stream_at(uint64_t start, size_t j) {
    uint64_t z = start + ((uint64_t)j + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* 1 where each value (gotv[1 + i]) is the input's at its index (element 3 + index of the
   stream from vs) and the guards hold the poison */
static int values_follow_index(const char* what, const uint32_t* gotv, uint64_t vs,
                               const uint32_t* index, size_t n) {
    size_t i, bad = 0;
    for (i = 0; i < n + 4; i++) {
        const int inside = i >= 1 && i < n + 1;
        const uint32_t want = inside ? (uint32_t)stream_at(vs, 3 + (size_t)index[i])
                                     : 0xA5A5A5A5u;
        if (gotv[i] != want && bad++ < 3 && failures_shown++ < 8)
            printf("  %s: value [%zu] %u, want %u\n", what, i, gotv[i], want);
    }
    return bad == 0;
}

/* 1 where the n indices hold each of 0..n-1 once. A bitmap of all n read at random costs more
   than the sort at 2^28 (a cache and TLB miss each), so the indices are first bucketed by their
   top bits into tmp (n elements; sequential reads, at most a few hundred write streams); with
   every bucket holding exactly its share, each is checked against a bitmap that stays in cache. */
static int is_permutation(const uint32_t* index, size_t n, uint32_t* tmp) {
    enum { SHIFT = 20 }; /* 2^20 indices a bucket: 256 of them at 2^28, a 128 KiB bitmap */
    const size_t buckets = (n >> SHIFT) + 1;
    size_t* at = (size_t*)calloc(buckets + 1, sizeof *at);
    unsigned char* seen = (unsigned char*)malloc((size_t)1 << (SHIFT - 3));
    size_t i, b;
    int ok = at && seen;
    CHECK(at && seen);
    for (i = 0; ok && i < n; i++) {
        ok = index[i] < n;
        if (ok) at[(index[i] >> SHIFT) + 1]++;
    }
    for (b = 0; ok && b < buckets; b++) {
        const size_t lo = b << SHIFT, full = (size_t)1 << SHIFT;
        ok = at[b + 1] == (n - lo < full ? n - lo : full);
        at[b + 1] += at[b];
    }
    if (ok)
        for (i = 0; i < n; i++) tmp[at[index[i] >> SHIFT]++] = index[i];
    /* at[b] is now where bucket b ends */
    for (b = 0; ok && b < buckets; b++) {
        memset(seen, 0, (size_t)1 << (SHIFT - 3));
        for (i = b ? at[b - 1] : 0; ok && i < at[b]; i++) {
            const uint32_t j = tmp[i] & ((1u << SHIFT) - 1);
            ok = !(seen[j / 8] >> (j % 8) & 1);
            seen[j / 8] |= (unsigned char)(1u << (j % 8));
        }
    }
    free(at);
    free(seen);
    return ok;
}

/* The bench's sorts of n fresh random keys of type (U32 or U64; ascending, all bits): first
   the index sort, checked on its own in O(n): the index a permutation of 0..n-1, each key the
   input's at its index, the keys in order and equal keys by increasing index (which makes it
   the stable sort); then keys alone and, for u32, pairs with random values must give the same
   keys and each value the input's at its index.
   baseline: the pairs once more on a ctx held to sm_80. 1: all agree. */
static int bench_sorts(int type, size_t n, int baseline) {
    const size_t kb = key_bytes(type);
    const int pairs = type == U32;
    const uint64_t ks = rng(), vs = rng(); /* the starts of the keys' and values' streams */
    unsigned char* keys = (unsigned char*)malloc((n + 4) * kb);
    unsigned char* sorted = (unsigned char*)malloc((n + 4) * kb);
    unsigned char* got = (unsigned char*)malloc((n + 4) * kb);
    uint32_t* index = (uint32_t*)malloc((n + 4) * 4);
    uint32_t* vals = pairs ? (uint32_t*)malloc((n + 4) * 4) : NULL;
    uint32_t* gotv = pairs ? (uint32_t*)malloc((n + 4) * 4) : NULL;
    size_t i, bad = 0;
    uint64_t prev = 0;
    int ok = 1;
    CHECK(keys && sorted && got && index && (!pairs || (vals && gotv)));
    if (!keys || !sorted || !got || !index || (pairs && (!vals || !gotv))) {
        ok = 0;
        goto done;
    }
    for (i = 0; i < n + 4; i++) {
        const uint64_t k = stream_at(ks, i);
        const uint32_t k32 = (uint32_t)k;
        memcpy(keys + i * kb, kb == 4 ? (const void*)&k32 : (const void*)&k, kb);
        if (pairs) vals[i] = (uint32_t)stream_at(vs, i);
    }
    sort_on_gpu(type, INDEX, n, keys, NULL, sorted, index);
    for (i = 0; i < n + 4; i++) { /* the guards */
        if (i >= 1 && i < n + 1) continue;
        if (memcmp(sorted + i * kb, poison_bytes, kb) || index[i] != 0xA5A5A5A5u) {
            if (failures_shown++ < 8) printf("  element %zu beside the output was written\n", i);
            bad++;
        }
    }
    if (!is_permutation(index + 1, n, (uint32_t*)got)) { /* got is free until the keys sort */
        if (failures_shown++ < 8) printf("  the index is not a permutation of 0..n-1\n");
        bad++;
    }
    for (i = 1; i < n + 1; i++) { /* unsigned keys: the ordered bits are the keys' own */
        const uint32_t j = index[i];
        const uint64_t k = get_key(type, sorted, i);
        const uint64_t want = kb == 4 ? (uint32_t)stream_at(ks, 3 + (size_t)j)
                                      : stream_at(ks, 3 + (size_t)j);
        if (k != want && bad++ < 3 && failures_shown++ < 8)
            printf("  [%zu]: key %llx, input %u is %llx\n", i - 1, (unsigned long long)k, j,
                   (unsigned long long)want);
        if (i > 1 && (prev > k || (prev == k && index[i - 1] >= j)) && bad++ < 3 &&
            failures_shown++ < 8)
            printf("  [%zu]: key %llx index %u after key %llx index %u\n", i - 1,
                   (unsigned long long)k, j, (unsigned long long)prev, index[i - 1]);
        prev = k;
    }
    if (bad) {
        printf("  sort_index_%s n %zu: not the stable sort\n", type_name[type], n);
        ok = 0;
        goto done; /* the rest is checked against it */
    }
    sort_on_gpu(type, KEYS, n, keys, NULL, got, NULL);
    ok &= same_elements(type == U32 ? "sort_keys_u32" : "sort_keys_u64", got, sorted, kb, n);
    if (pairs) {
        sort_on_gpu(type, PAIRS, n, keys, vals, got, gotv);
        ok &= same_elements("sort_pairs_u32", got, sorted, kb, n);
        ok &= values_follow_index("sort_pairs_u32", gotv, vs, index, n);
    }
    if (pairs && baseline) { /* where the GPU would take the sm_90 variant */
        gpuk_ctx *own = ctx, *held = NULL;
        CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .kernels_max_sm = 80 }, &held));
        if (held) {
            ctx = held; /* sort_on_gpu sorts on ctx */
            sort_on_gpu(type, PAIRS, n, keys, vals, got, gotv);
            ok &= same_elements("sort_pairs_u32 on sm_80", got, sorted, kb, n);
            ok &= values_follow_index("sort_pairs_u32 on sm_80", gotv, vs, index, n);
            CHECK_OK(gpuk_ctx_destroy(held));
            ctx = own;
        }
    }
    if (!ok) printf("  the bench's sorts of %s keys, n %zu\n", type_name[type], n);
done:
    free(keys); free(sorted); free(got); free(index); free(vals); free(gotv);
    return ok;
}

/* the bench's calls at its sizes: 2^28 u32 keys alone and with values (with the baseline's
   pairs too), 2^16 u32 keys and 2^27 u64 keys, each after the index sort that checks them;
   GPUK_TEST_QUICK: a few tiles of each */
static int test_bench_sizes(void) {
    const size_t few_tiles = 3 * 8192 + 5;
    int failed = 0;
    failed += !bench_sorts(U32, quick ? few_tiles : (size_t)1 << 28, 1);
    if (!quick) failed += !bench_sorts(U32, (size_t)1 << 16, 0);
    failed += !bench_sorts(U64, quick ? few_tiles : (size_t)1 << 27, 0);
    CHECK(failed == 0);
    return TEST_PASS;
}

/* bit ranges: a digit's worth, one bit, a range ending short of the top, one starting past
   0 (the other bits keep their input order); a range narrower than 8 bits */
static int test_bit_ranges(void) {
    static const unsigned ranges[][2] = { { 0, 8 }, { 5, 6 }, { 3, 17 }, { 8, 30 }, { 1, 32 },
                                          { 20, 64 }, { 31, 64 }, { 0, 63 } };
    int type, failed = 0;
    size_t r;
    for (type = 0; type < NTYPES; type++)
        for (r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
            if (ranges[r][1] > key_bytes(type) * 8) continue;
            failed += !run_one(type, RANDOM, (int)(r % 3), range_n, (int)(r & 1), ranges[r][0],
                               ranges[r][1], 0);
            if (!quick)
                failed += !run_one(type, SPECIALS, KEYS, 3000, (int)(r & 1) ^ 1, ranges[r][0],
                                   ranges[r][1], 0);
        }
    CHECK(failed == 0);
    return TEST_PASS;
}

/* out the same view as in: an even and an odd number of passes (the latter through the
   second buffer first), keys and values, one tile and many */
static int test_in_place(void) {
    int type, failed = 0;
    for (type = 0; type < NTYPES; type++) {
        failed += !run_one(type, RANDOM, KEYS, mid, 0, 0, 0, 1);
        failed += !run_one(type, RANDOM, PAIRS, mid, 1, 0, 0, 1);
        failed += !run_one(type, RANDOM, PAIRS, mid, 0, 0, 24, 1); /* 3 passes */
        failed += !run_one(type, FEW, INDEX, mid, 1, 4, 12, 1);    /* 1 pass */
        failed += !run_one(type, RANDOM, PAIRS, 2000, 1, 0, 0, 1);   /* one block */
    }
    CHECK(failed == 0);
    return TEST_PASS;
}

/* A sort captured into a graph after the kernel is loaded and the scratch reserved; replayed
   on new keys, it sorts them. Inside the capture, a sort too large for the reserved scratch
   is refused with GPUK_ERR_CAPTURING and the capture goes on. */
static int test_captured_sort_replays(void) {
    const size_t n = 100003;
    uint32_t* keys = (uint32_t*)malloc(n * 4);
    uint32_t* got = (uint32_t*)malloc(n * 4);
    uint32_t* idx = (uint32_t*)malloc(n * 4);
    uint32_t* order = (uint32_t*)malloc(n * 4);
    gpuk_buffer kin, kout, iout, big_in;
    const size_t bn = (size_t)1 << 22; /* keys, too many for the reserved scratch */
    gpuk_stream s;
    gpuk_graph g;
    size_t i;
    int round, failed = 0;
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4 }, &kin));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4 }, &kout));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4 }, &iout));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bn * 4 }, &big_in));
    CHECK_OK(gpuk_kernels_load(ctx, "sort_keys_u32, sort_pairs_u32"));
    CHECK_OK(gpuk_kernels_reserve_sort(ctx, s, n));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_RESULT(gpuk_sort_index_u32(ctx, s, gpuk_at(kout, 0), gpuk_at(iout, 0), gpuk_at(kin, 0),
                                     n, 0, 0, 0), GPUK_OK);
    /* too big for the scratch: refused, the capture intact */
    CHECK_RESULT(gpuk_sort_keys_u32(ctx, s, gpuk_at(big_in, 0), gpuk_at(big_in, 0), bn, 0, 0, 0),
                 GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_kernels_reserve_sort");
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_buffer_destroy(ctx, big_in));
    for (round = 0; round < 2; round++) {
        make_keys(U32, round ? FEW : RANDOM, (unsigned char*)keys, n);
        reference(U32, (const unsigned char*)keys, n, 0, 0, 32, order);
        CHECK_OK(gpuk_buffer_write(ctx, kin, 0, keys, n * 4));
        CHECK_OK(gpuk_buffer_memset(ctx, s, kout, 0, 0xA5A5A5A5u, 4, n));
        CHECK_OK(gpuk_buffer_memset(ctx, s, iout, 0, 0xA5A5A5A5u, 4, n));
        CHECK_OK(gpuk_graph_launch(ctx, s, g));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        CHECK_OK(gpuk_buffer_read(ctx, kout, 0, got, n * 4));
        CHECK_OK(gpuk_buffer_read(ctx, iout, 0, idx, n * 4));
        for (i = 0; i < n; i++)
            if (got[i] != keys[order[i]] || idx[i] != order[i]) failed++;
    }
    CHECK(failed == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_OK(gpuk_buffer_destroy(ctx, kin));
    CHECK_OK(gpuk_buffer_destroy(ctx, kout));
    CHECK_OK(gpuk_buffer_destroy(ctx, iout));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    free(keys); free(got); free(idx); free(order);
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (getenv("GPUK_TEST_QUICK")) big = 20011, mid = range_n = 9001, quick = 1;
    if (!gpu_setup("gpu_sort", 7, &ctx, &code)) return code;
    RUN(test_small_and_tile_edge_sizes);
    RUN(test_bit_ranges);
    RUN(test_in_place);
    RUN(test_captured_sort_replays);
    RUN(test_pairs_on_the_baseline);
    RUN(test_large_inputs_every_kind);
    RUN(test_bench_sizes);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
