/* tests/gpu/gpu_select.c - gpuk_select_if_*, _select_flagged_*, _count_if_*, _partition_if_*,
   _unique_* and _run_length_encode_* (f32, f64, i32, u32) on a real GPU against a CPU
   reference: every op, fresh random inputs at sizes 0, 1, odd, each tile size +-1 (8192 4-byte,
   4096 8-byte elements) and about 10^6 and 3 * 10^6, with 0 %, 100 % and a random share kept,
   floats with NaN, +-inf and -0.0 mixed in, inputs aligned and not (a view at element 1).
   Outputs and count are poisoned before each run and the elements past what the call writes
   must keep their poison. Also: in place, scans and selects taking turns on one stream's
   scratch, a CUDA graph of select_if replayed on changing input, and the bench's two calls at
   its size, 2^28: select_if_f32 < 0.5 on uniform [0, 1) and run_length_encode_i32 on runs of
   about 8. Skipped where no driver or GPU exists. GPUK_TEST_QUICK=1 (the sanitizer runs):
   sizes 0, 1, 4097, 8193 and 70001 only, every op at 9000, the bench's calls at 3 * 8192 + 5;
   under the sanitizer f32 and f64 alone (a 4-byte and an 8-byte tile), but for those calls. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };
static size_t sizes[] = { 0, 1, 7, 4095, 4096, 4097, 8191, 8192, 8193, 24577, 1000003, 3000017 };
static size_t nsizes = sizeof sizes / sizeof sizes[0];
static size_t op_n = 20011; /* the size test_every_op_type_and_mode runs at */
static int ntypes = 4;       /* the types run: all, or f32 and f64 under the sanitizer */
static size_t bench_n = (size_t)1 << 28; /* bench/bench_kernels.c's N28 */
#define GUARD 64 /* poisoned elements past each output */
enum { F32, F64, I32, U32, NTYPES };
enum { IF, FLAGGED, COUNT, PARTITION, UNIQUE, RLE, NMODES };
static const char* const type_names[NTYPES] = { "f32", "f64", "i32", "u32" };
static const char* const mode_names[NMODES] = { "select_if", "select_flagged", "count_if",
                                                "partition_if", "unique", "run_length_encode" };
static const size_t elem_of[NTYPES] = { 4, 8, 4, 4 };
static const uint64_t POISON = 0xFFFFFFFFFFFFFFFFull;

/* Every value of every type held as a double: i32, u32 and f32 convert exactly and compare,
   test for equality and finiteness the same, so one reference serves all four. */
static void store(int type, void* p, size_t i, double v) {
    switch (type) {
    case F32: ((float*)p)[i] = (float)v; break;
    case F64: ((double*)p)[i] = v; break;
    case I32: ((int32_t*)p)[i] = (int32_t)v; break;
    default: ((uint32_t*)p)[i] = (uint32_t)v; break;
    }
}

static int passes(uint32_t op, double x, double v) {
    switch (op) {
    case GPUK_CMP_LT: return x < v;
    case GPUK_CMP_LE: return x <= v;
    case GPUK_CMP_GT: return x > v;
    case GPUK_CMP_GE: return x >= v;
    case GPUK_CMP_EQ: return x == v;
    case GPUK_CMP_NE: return x != v;
    case GPUK_CMP_NONZERO: return x != 0;
    default: return isfinite(x) != 0;
    }
}

/* n values of type: shares of small integers in [0, 100) (so EQ and unique find matches);
   floats get fractions and, one in 32, NaN, +-inf or -0.0; i32 negatives and its extremes,
   u32 its top value. runs (> 1): a value ends its run with probability 1 / runs (runs of
   20000 cross whole tiles). */
static void make_values(int type, double* v, size_t n, uint64_t runs) {
    size_t i;
    for (i = 0; i < n; i++) {
        const uint64_t r = rng();
        double x = (double)(r % 100);
        if (runs > 1 && i > 0 && (r >> 32) % runs != 0) { v[i] = v[i - 1]; continue; }
        if (type == F32 || type == F64) {
            if ((r >> 40) % 2) x = uniform(0.0, 100.0);
            if ((r >> 48) % 32 == 0) {
                static const double special[] = { NAN, INFINITY, -INFINITY, -0.0 };
                x = special[(r >> 56) % 4];
            }
        } else if (type == I32 && (r >> 48) % 32 == 0) {
            x = (r >> 56) % 2 ? -2147483648.0 : 2147483647.0;
        } else if (type == I32 && (r >> 40) % 2) {
            x = -x;
        } else if (type == U32 && (r >> 48) % 32 == 0) {
            x = 4294967295.0;
        }
        if (type == F32) x = (double)(float)x;
        v[i] = x;
    }
}

/* Values and value for op to keep none (share 0) or all (share 1) of n: values in [1, 100),
   thresholds 0 and 1000, or every value 42 (EQ, NE), 0 or -0.0 (NONZERO), NaN or +-inf
   (FINITE). */
static void shape_share(uint32_t op, int share, double* v, size_t n, double* value) {
    static const double special[] = { NAN, INFINITY, -INFINITY };
    size_t i;
    for (i = 0; i < n; i++) v[i] = (double)(1 + rng() % 99);
    switch (op) {
    case GPUK_CMP_LT: case GPUK_CMP_LE: *value = share ? 1000 : 0; break;
    case GPUK_CMP_GT: case GPUK_CMP_GE: *value = share ? 0 : 1000; break;
    case GPUK_CMP_EQ: case GPUK_CMP_NE:
        *value = 42;
        if ((op == GPUK_CMP_EQ) == (share == 1))
            for (i = 0; i < n; i++) v[i] = 42;
        break;
    case GPUK_CMP_NONZERO:
        if (!share)
            for (i = 0; i < n; i++) v[i] = rng() % 2 ? -0.0 : 0.0;
        break;
    default:
        if (!share)
            for (i = 0; i < n; i++) v[i] = special[rng() % 3];
        break;
    }
}

/* The call of mode on type, with the value in the type. */
static gpuk_result launch(int type, int mode, gpuk_stream s, gpuk_array out, gpuk_array count,
                          gpuk_array in, gpuk_array flags, gpuk_array lengths, size_t n,
                          uint32_t op, double v) {
#define SELECT_CALLS(t, T)                                                                   \
    switch (mode) {                                                                          \
    case IF: return gpuk_select_if_##t(ctx, s, out, count, in, n, op, (T)v);                 \
    case FLAGGED: return gpuk_select_flagged_##t(ctx, s, out, count, in, flags, n);          \
    case COUNT: return gpuk_count_if_##t(ctx, s, count, in, n, op, (T)v);                    \
    case PARTITION: return gpuk_partition_if_##t(ctx, s, out, count, in, n, op, (T)v);       \
    case UNIQUE: return gpuk_unique_##t(ctx, s, out, count, in, n);                          \
    default: return gpuk_run_length_encode_##t(ctx, s, out, lengths, count, in, n);          \
    }
    switch (type) {
    case F32: SELECT_CALLS(f32, float)
    case F64: SELECT_CALLS(f64, double)
    case I32: SELECT_CALLS(i32, int32_t)
    default: SELECT_CALLS(u32, uint32_t)
    }
#undef SELECT_CALLS
}

/* Reference: out's expected bytes (elements of in's bytes, so NaN payloads carry), the run
   lengths (RLE) and the count. */
static size_t reference(int type, int mode, const double* v, const unsigned char* raw,
                        const unsigned char* flags, size_t n, uint32_t op, double value,
                        unsigned char* want, uint64_t* want_lengths) {
    const size_t e = elem_of[type];
    size_t i, kept = 0, rest = 0;
    for (i = 0; i < n; i++) {
        int keep;
        if (mode == FLAGGED) keep = flags[i] != 0;
        else if (mode == UNIQUE || mode == RLE) keep = i == 0 || !(v[i] == v[i - 1]);
        else keep = passes(op, v[i], value);
        if (keep && mode != COUNT) memcpy(want + e * kept, raw + e * i, e);
        else if (!keep && mode == PARTITION) memcpy(want + e * (n - 1 - rest++), raw + e * i, e);
        if (mode == RLE && keep) want_lengths[kept] = 0;
        if (mode == RLE) want_lengths[kept + (size_t)keep - 1]++;
        kept += (size_t)keep;
    }
    return kept;
}

/* One call on n fresh values against the reference; in at element first of its buffer.
   share: 0 none kept, 1 all, 2 random (through the value, or the flags). Returns 1 when it
   matched (failures are reported with what ran). */
static int run_case(int type, int mode, size_t n, size_t first, uint32_t op, int share) {
    const uint64_t runs = mode == UNIQUE || mode == RLE ? (n > 100000 ? 20000 : 4) : 0;
    const size_t e = elem_of[type], cap = n + GUARD;
    double* v = (double*)malloc((n + 1) * sizeof(double));
    unsigned char* raw = (unsigned char*)malloc((n + first + 1) * e);
    unsigned char* flags = (unsigned char*)malloc(n + 1);
    unsigned char* want = (unsigned char*)malloc(cap * e);
    unsigned char* got = (unsigned char*)malloc(cap * e);
    uint64_t* want_len = (uint64_t*)malloc(cap * 8);
    uint64_t* got_len = (uint64_t*)malloc(cap * 8);
    gpuk_buffer bin = { 0 }, bout = { 0 }, bcount = { 0 }, bflags = { 0 }, blen = { 0 };
    uint64_t count = POISON;
    size_t i, kept, check_n;
    double value = 50.0;
    int ok = 0;
    if (!v || !raw || !flags || !want || !got || !want_len || !got_len) {
        CHECK(0);
        goto done;
    }
    make_values(type, v, n, runs);
    if (share != 2) shape_share(op, share, v, n, &value);
    for (i = 0; i < n; i++) {
        const uint64_t r = rng();
        flags[i] = share == 0 ? 0 : share == 1 ? (unsigned char)(1 + r % 255)
                                               : (unsigned char)(r % 2 ? 1 + (r >> 8) % 255 : 0);
    }
    if (type == F32) value = (double)(float)value;
    for (i = 0; i < n; i++) store(type, raw + first * e, i, v[i]);
    memset(want, 0xAB, cap * e);
    memset(want_len, 0xAB, cap * 8);
    kept = reference(type, mode, v, raw + first * e, flags, n, op, value, want, want_len);
    if (gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + first + 1) * e, .label = "in" },
                           &bin) != GPUK_OK ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cap * e, .label = "out" },
                           &bout) != GPUK_OK ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "count" },
                           &bcount) != GPUK_OK ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n + 1, .label = "flags" },
                           &bflags) != GPUK_OK ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cap * 8, .label = "lengths" },
                           &blen) != GPUK_OK) {
        CHECK(0);
        goto done;
    }
    memset(got, 0xAB, cap * e);
    memset(got_len, 0xAB, cap * 8);
    CHECK_OK(gpuk_buffer_write(ctx, blen, 0, got_len, cap * 8));
    CHECK_OK(gpuk_buffer_write(ctx, bin, 0, raw, (n + first) * e));
    CHECK_OK(gpuk_buffer_write(ctx, bout, 0, got, cap * e));
    CHECK_OK(gpuk_buffer_write(ctx, bcount, 0, &count, 8));
    CHECK_OK(gpuk_buffer_write(ctx, bflags, 0, flags, n + 1));
    CHECK_OK(launch(type, mode, S, gpuk_at(bout, 0), gpuk_at(bcount, 0), gpuk_at(bin, first),
                    gpuk_at(bflags, 0), gpuk_at(blen, 0), n, op, value));
    CHECK_OK(gpuk_buffer_read(ctx, bout, 0, got, cap * e));
    CHECK_OK(gpuk_buffer_read(ctx, bcount, 0, &count, 8));
    CHECK_OK(gpuk_buffer_read(ctx, blen, 0, got_len, cap * 8));
    /* everything the call may write and the guard after it: partition writes all n */
    check_n = cap;
    ok = count == kept && memcmp(got, want, check_n * e) == 0 &&
         memcmp(got_len, want_len, cap * 8) == 0;
    if (!ok) {
        size_t bad = 0;
        while (bad < check_n && memcmp(got + bad * e, want + bad * e, e) == 0) bad++;
        fprintf(stderr, "  %s_%s n %zu first %zu op %u share %d: count %llu want %zu, first "
                "differing element %zu of %zu\n", mode_names[mode], type_names[type], n, first,
                op, share, (unsigned long long)count, kept, bad, check_n);
        CHECK(0);
    }
done:
    gpuk_buffer_destroy(ctx, bin);
    gpuk_buffer_destroy(ctx, bout);
    gpuk_buffer_destroy(ctx, bcount);
    gpuk_buffer_destroy(ctx, bflags);
    gpuk_buffer_destroy(ctx, blen);
    free(want_len);
    free(got_len);
    free(v);
    free(raw);
    free(flags);
    free(want);
    free(got);
    return ok;
}

/* count_if writes no out: its poison stays, which run_case checks like any other mode's. */
static int test_every_op_type_and_mode(void) {
    int type, mode, share;
    uint32_t op;
    for (type = 0; type < ntypes; type++)
        for (mode = 0; mode < NMODES; mode++)
            for (op = GPUK_CMP_LT; op < GPUK_CMP_NUM; op++) {
                const int floats = type == F32 || type == F64;
                if (op == GPUK_CMP_FINITE && !floats) continue;
                if ((mode == FLAGGED || mode >= UNIQUE) && op != GPUK_CMP_LT) continue;
                for (share = 0; share < 3; share++) {
                    if (mode >= UNIQUE && share != 2) continue;
                    if (!run_case(type, mode, op_n, share == 1, op, share)) return TEST_PASS;
                }
            }
    return TEST_PASS;
}

/* Each size (the tile edges, large ones) for every mode and type, the op turning with the
   size, aligned and not. */
static int test_sizes_and_tile_edges(void) {
    int type, mode;
    size_t s;
    for (type = 0; type < ntypes; type++)
        for (mode = 0; mode < NMODES; mode++)
            for (s = 0; s < nsizes; s++) {
                const uint32_t op = (uint32_t)(GPUK_CMP_LT + (s + (size_t)mode) % 6);
                if (!run_case(type, mode, sizes[s], s % 2, op, 2)) return TEST_PASS;
            }
    return TEST_PASS;
}

/* select_if and select_flagged with out the same view as in. */
static int test_in_place(void) {
    const size_t n = sizes[nsizes - 1];
    float* x = (float*)malloc(n * sizeof(float));
    float* want = (float*)malloc(n * sizeof(float));
    unsigned char* flags = (unsigned char*)malloc(n);
    gpuk_buffer b = { 0 }, c = { 0 }, f = { 0 };
    uint64_t count = POISON;
    size_t i, kept = 0, kept2 = 0;
    CHECK(x && want && flags);
    if (!x || !want || !flags) goto done;
    for (i = 0; i < n; i++) {
        x[i] = (float)uniform(0.0, 1.0);
        if (x[i] < 0.3f) want[kept++] = x[i];
    }
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "x" }, &b));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "count" }, &c));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n, .label = "flags" }, &f));
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, x, n * 4));
    CHECK_OK(gpuk_buffer_write(ctx, c, 0, &count, 8));
    CHECK_OK(gpuk_select_if_f32(ctx, S, gpuk_at(b, 0), gpuk_at(c, 0), gpuk_at(b, 0), n,
                                GPUK_CMP_LT, 0.3f));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, x, n * 4));
    CHECK_OK(gpuk_buffer_read(ctx, c, 0, &count, 8));
    CHECK(count == kept && memcmp(x, want, kept * 4) == 0);
    /* then every other one of those kept, by flags */
    for (i = 0; i < kept; i++) {
        flags[i] = (unsigned char)(i % 2 == 0);
        if (i % 2 == 0) want[kept2++] = want[i];
    }
    CHECK_OK(gpuk_buffer_write(ctx, f, 0, flags, kept));
    CHECK_OK(gpuk_select_flagged_f32(ctx, S, gpuk_at(b, 0), gpuk_at(c, 0), gpuk_at(b, 0),
                                     gpuk_at(f, 0), kept));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, x, kept2 * 4));
    CHECK_OK(gpuk_buffer_read(ctx, c, 0, &count, 8));
    CHECK(count == kept2 && memcmp(x, want, kept2 * 4) == 0);
done:
    gpuk_buffer_destroy(ctx, b);
    gpuk_buffer_destroy(ctx, c);
    gpuk_buffer_destroy(ctx, f);
    free(x);
    free(want);
    free(flags);
    return TEST_PASS;
}

/* Selects and scans share a stream's scratch (ticket, epoch, status words): taking turns, each
   still sees only its own launch's tiles. */
static int test_scans_and_selects_take_turns(void) {
    const size_t n = 300007;
    int32_t* x = (int32_t*)malloc(n * 4);
    int32_t* got = (int32_t*)malloc(n * 4);
    gpuk_buffer b = { 0 }, o = { 0 }, c = { 0 };
    uint64_t count;
    size_t i, kept;
    int round;
    CHECK(x && got);
    if (!x || !got) goto done;
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "x" }, &b));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "o" }, &o));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "count" }, &c));
    for (round = 0; round < 4; round++) {
        int32_t sum = 0;
        int bad = 0;
        for (i = 0; i < n; i++) x[i] = (int32_t)(rng() % 7) - 3;
        CHECK_OK(gpuk_buffer_write(ctx, b, 0, x, n * 4));
        CHECK_OK(gpuk_scan_inclusive_i32(ctx, S, gpuk_at(o, 0), gpuk_at(b, 0), n));
        CHECK_OK(gpuk_select_if_i32(ctx, S, gpuk_at(b, 0), gpuk_at(c, 0), gpuk_at(b, 0), n,
                                    GPUK_CMP_GT, 0));
        CHECK_OK(gpuk_buffer_read(ctx, o, 0, got, n * 4));
        for (i = 0; i < n; i++) {
            sum = (int32_t)((uint32_t)sum + (uint32_t)x[i]);
            bad += got[i] != sum;
        }
        CHECK(bad == 0);
        CHECK_OK(gpuk_buffer_read(ctx, b, 0, got, n * 4));
        CHECK_OK(gpuk_buffer_read(ctx, c, 0, &count, 8));
        for (i = 0, kept = 0; i < n; i++)
            if (x[i] > 0) bad += got[kept++] != x[i];
        CHECK(bad == 0 && count == kept);
    }
done:
    gpuk_buffer_destroy(ctx, b);
    gpuk_buffer_destroy(ctx, o);
    gpuk_buffer_destroy(ctx, c);
    free(x);
    free(got);
    return TEST_PASS;
}

/* select_if captured once (kernel loaded and scratch reserved ahead), the graph replayed on new
   input each time: the count lands in device memory, no host round trip, and each replay's
   fresh epoch keeps the previous replay's tile flags from passing for its own. */
static int test_graph_replay(void) {
    const size_t n = sizes[nsizes - 1] / 2;
    float* x = (float*)malloc(n * 4);
    float* got = (float*)malloc((n + GUARD) * 4);
    gpuk_buffer b = { 0 }, o = { 0 }, c = { 0 };
    gpuk_stream s = { 0 };
    gpuk_graph g = { 0 };
    uint64_t count;
    size_t i, kept;
    int round;
    if (!(gpuk_features() & GPUK_FEATURE_GRAPHS)) return TEST_SKIP;
    CHECK(x && got);
    if (!x || !got) goto done;
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "x" }, &b));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + GUARD) * 4,
                                                          .label = "out" }, &o));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "count" }, &c));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_kernels_load(ctx, "select_if_f32"));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, n));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_select_if_f32(ctx, s, gpuk_at(o, 0), gpuk_at(c, 0), gpuk_at(b, 0), n,
                                GPUK_CMP_GE, 0.25f));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    for (round = 0; round < 5; round++) {
        int bad = 0;
        const float lo = round % 2 ? 0.2f : -1.0f; /* rounds keep ~94 % and ~63 % */
        for (i = 0; i < n; i++) x[i] = lo + (float)uniform(0.0, 1.25);
        count = POISON;
        memset(got, 0xAB, (n + GUARD) * 4);
        CHECK_OK(gpuk_buffer_write(ctx, b, 0, x, n * 4));
        CHECK_OK(gpuk_buffer_write(ctx, o, 0, got, (n + GUARD) * 4));
        CHECK_OK(gpuk_buffer_write(ctx, c, 0, &count, 8));
        CHECK_OK(gpuk_graph_launch(ctx, s, g));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        CHECK_OK(gpuk_buffer_read(ctx, o, 0, got, (n + GUARD) * 4));
        CHECK_OK(gpuk_buffer_read(ctx, c, 0, &count, 8));
        for (i = 0, kept = 0; i < n; i++)
            if (x[i] >= 0.25f) bad += memcmp(&got[kept++], &x[i], 4) != 0;
        for (i = kept; i < n + GUARD; i++) {
            uint32_t w;
            memcpy(&w, &got[i], 4);
            bad += w != 0xABABABABu;
        }
        CHECK(bad == 0 && count == kept);
    }
done:
    if (g.id) gpuk_graph_destroy(ctx, g);
    if (s.id) gpuk_stream_destroy(ctx, s);
    gpuk_buffer_destroy(ctx, b);
    gpuk_buffer_destroy(ctx, o);
    gpuk_buffer_destroy(ctx, c);
    free(x);
    free(got);
    return TEST_PASS;
}

/* The bench's select_if_f32 (x < 0.5 of x uniform in [0, 1), about half kept) or
   run_length_encode_i32 (mode IF or RLE) at its size, on fresh input of its kind, against
   reference(). The RLE input is segments of 1 to 7 (mean 4), each the last one's value again
   or a new one with even odds, so runs average 8 as the bench's and end anywhere, not only at
   its multiples of 4; new values span all of i32. Outputs and guard as run_case checks them.
   The host arrays hold n + GUARD elements and come from the caller, to be touched once for
   both calls; v then takes the lengths read back and raw the values. */
static int bench_case(int mode, size_t n, double* v, unsigned char* raw, unsigned char* want,
                      uint64_t* want_len) {
    const int type = mode == IF ? F32 : I32;
    const size_t cap = n + GUARD;
    unsigned char* const got = raw;
    uint64_t* const got_len = (uint64_t*)v;
    gpuk_buffer bin = { 0 }, bout = { 0 }, bcount = { 0 }, blen = { 0 };
    uint64_t count = POISON;
    size_t i, kept;
    int ok = 0;
    if (mode == IF) {
        for (i = 0; i < n; i++) {
            const float x = (float)uniform(0.0, 1.0);
            memcpy(raw + 4 * i, &x, 4);
            v[i] = (double)x;
        }
    } else {
        uint32_t cur = (uint32_t)rng();
        for (i = 0; i < n;) {
            const uint64_t r = rng();
            size_t left = 1 + (size_t)(r % 7);
            /* a step of 1 to 2^32 - 1 (mod 2^32) never lands on cur: the new value differs */
            if ((r >> 8) & 1) cur += 1 + (uint32_t)((r >> 32) % 0xFFFFFFFFu);
            for (; left > 0 && i < n; left--, i++) {
                const int32_t x = (int32_t)cur;
                memcpy(raw + 4 * i, &x, 4);
                v[i] = (double)x;
            }
        }
    }
    memset(want, 0xAB, cap * 4);
    memset(want_len, 0xAB, cap * 8);
    kept = reference(type, mode, v, raw, NULL, n, GPUK_CMP_LT, 0.5, want, want_len);
    if (gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "in" },
                           &bin) != GPUK_OK ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cap * 4, .label = "out" },
                           &bout) != GPUK_OK ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "count" },
                           &bcount) != GPUK_OK ||
        (mode == RLE &&
         gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cap * 8, .label = "lengths" },
                            &blen) != GPUK_OK)) {
        CHECK(0);
        goto done;
    }
    CHECK_OK(gpuk_buffer_write(ctx, bin, 0, raw, n * 4));
    memset(got, 0xAB, cap * 4);
    memset(got_len, 0xAB, cap * 8);
    CHECK_OK(gpuk_buffer_write(ctx, bout, 0, got, cap * 4));
    CHECK_OK(gpuk_buffer_write(ctx, bcount, 0, &count, 8));
    if (mode == RLE) {
        CHECK_OK(gpuk_buffer_write(ctx, blen, 0, got_len, cap * 8));
        CHECK_OK(gpuk_run_length_encode_i32(ctx, S, gpuk_at(bout, 0), gpuk_at(blen, 0),
                                            gpuk_at(bcount, 0), gpuk_at(bin, 0), n));
        CHECK_OK(gpuk_buffer_read(ctx, blen, 0, got_len, cap * 8));
    } else {
        CHECK_OK(gpuk_select_if_f32(ctx, S, gpuk_at(bout, 0), gpuk_at(bcount, 0),
                                    gpuk_at(bin, 0), n, GPUK_CMP_LT, 0.5f));
    }
    CHECK_OK(gpuk_buffer_read(ctx, bout, 0, got, cap * 4));
    CHECK_OK(gpuk_buffer_read(ctx, bcount, 0, &count, 8));
    /* select_if's want_len and got_len both stay all poison */
    ok = count == kept && memcmp(got, want, cap * 4) == 0 &&
         memcmp(got_len, want_len, cap * 8) == 0;
    if (!ok) {
        size_t bad = 0, bad_len = 0;
        while (bad < cap && memcmp(got + bad * 4, want + bad * 4, 4) == 0) bad++;
        while (bad_len < cap && got_len[bad_len] == want_len[bad_len]) bad_len++;
        fprintf(stderr, "  %s_%s n %zu: count %llu want %zu, first differing element %zu, "
                "length %zu of %zu\n", mode_names[mode], type_names[type], n,
                (unsigned long long)count, kept, bad, bad_len, cap);
        CHECK(0);
    }
done:
    gpuk_buffer_destroy(ctx, bin);
    gpuk_buffer_destroy(ctx, bout);
    gpuk_buffer_destroy(ctx, bcount);
    gpuk_buffer_destroy(ctx, blen);
    return ok;
}

/* bench/bench_kernels.c's select_if and run_length rows, results checked at their size. Host
   6 GiB, GPU 4 GiB at most (RLE's in, values and lengths). */
static int test_bench_calls_at_bench_size(void) {
    const size_t cap = bench_n + GUARD;
    double* v = (double*)malloc(cap * sizeof(double));
    unsigned char* raw = (unsigned char*)malloc(cap * 4);
    unsigned char* want = (unsigned char*)malloc(cap * 4);
    uint64_t* want_len = (uint64_t*)malloc(cap * 8);
    CHECK(v && raw && want && want_len);
    if (v && raw && want && want_len && bench_case(IF, bench_n, v, raw, want, want_len))
        bench_case(RLE, bench_n, v, raw, want, want_len);
    free(v);
    free(raw);
    free(want);
    free(want_len);
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (getenv("GPUK_TEST_QUICK")) {
        static const size_t quick[] = { 0, 1, 4097, 8193, 70001 };
        memcpy(sizes, quick, sizeof quick);
        nsizes = sizeof quick / sizeof quick[0];
        op_n = 9000;
        bench_n = 3 * 8192 + 5;
    }
    if (under_sanitizer()) ntypes = 2;
    if (!gpu_setup("gpu_select", 6, &ctx, &code)) return code;
    RUN(test_every_op_type_and_mode);
    RUN(test_sizes_and_tile_edges);
    RUN(test_in_place);
    RUN(test_scans_and_selects_take_turns);
    RUN(test_graph_replay);
    RUN(test_bench_calls_at_bench_size);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
