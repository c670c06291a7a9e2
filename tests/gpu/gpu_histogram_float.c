/* tests/gpu/gpu_histogram_float.c - gpuk_histogram_f32 / _f64 on a real GPU against a CPU
   reference of the documented rule (bin = trunc((x - lo) * scale), scale = nbins / (hi - lo),
   each step rounded to nearest in the input's type, nbins - 1 where that rounds to nbins; counts
   [nbins] below lo, [nbins + 1] at or above hi, [nbins + 2] NaN), itself held within one bin of
   the bin in long double. Fresh random inputs with edge values mixed in (lo, hi, their
   neighbours, bin edges, -0.0, +-inf, NaN) at sizes 0, 1, 31, 1025, 2^20+7, aligned and
   misaligned; bins 1, 7, 256 (per-warp shared counts), 2048 (one shared copy), 3000 (global);
   hand-worked cases; one value 2^20 times (every thread on one counter); the bench's call, 256
   bins of [0, 1) over 2^28 uniform floats with edge values mixed in. Counts poisoned before
   every run, with a guard on each side. Skipped where no driver or GPU exists.
   GPUK_TEST_QUICK=1 (the sanitizer runs) uses 20011 in place of 2^20+7, 3 * 8192 + 5 for 2^28. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };
static size_t sizes[] = { 0, 1, 31, 1025, (1u << 20) + 7 };
#define NSIZES (sizeof sizes / sizeof sizes[0])
static const uint64_t POISON = 0xFFFFFFFFFFFFFFFFull;

/* ---- the documented rule, step by step in the input's type (volatile: each result rounded
   to its type, never fused or kept wider) ---- */
static float scale32(uint32_t nbins, float lo, float hi) {
    volatile float span = hi - lo, s = (float)nbins / span;
    return s;
}
static double scale64(uint32_t nbins, double lo, double hi) {
    volatile double span = hi - lo, s = (double)nbins / span;
    return s;
}
/* the bin before the clamp: nbins where rounding carries x just below hi up */
static uint32_t raw_bin32(float x, float lo, float scale) {
    volatile float d = x - lo, p = d * scale;
    return (uint32_t)p;
}
static uint32_t raw_bin64(double x, double lo, double scale) {
    volatile double d = x - lo, p = d * scale;
    return (uint32_t)p;
}
static uint32_t slot_of(int f64, double x, double lo, double hi, uint32_t nbins) {
    uint32_t b;
    if (x != x) return nbins + 2;
    if (x < lo) return nbins;
    if (x >= hi) return nbins + 1;
    b = f64 ? raw_bin64(x, lo, scale64(nbins, lo, hi))
            : raw_bin32((float)x, (float)lo, scale32(nbins, (float)lo, (float)hi));
    return b < nbins ? b : nbins - 1;
}

/* The GPU's counts for in[first .. first + n) (as doubles, converted to the type), read from a
   view at counts' element 1 with poisoned guards at 0 and nbins + 4; 0 on a guard or API
   failure (reported). */
static int run_gpu(int f64, const double* values, size_t n, size_t first, uint32_t nbins,
                   double lo, double hi, uint64_t* got) {
    const size_t elem = f64 ? 8 : 4, slots = (size_t)nbins + 3;
    unsigned char* host = (unsigned char*)malloc((n + first + 1) * elem);
    uint64_t* back = (uint64_t*)malloc((slots + 2) * 8);
    gpuk_buffer in, counts;
    size_t i;
    int ok = 1;
    if (!host || !back) { /* the bench's size takes 1 GiB here */
        printf("  histogram n %zu: out of host memory\n", n);
        free(host);
        free(back);
        return 0;
    }
    for (i = 0; i < n + first + 1; i++) {
        const double v = i >= first && i < first + n ? values[i - first] : 0.5 * (lo + hi);
        if (f64) memcpy(host + i * 8, &v, 8);
        else { const float w = (float)v; memcpy(host + i * 4, &w, 4); }
    }
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (n + first + 1) * elem }, &in));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (slots + 2) * 8 }, &counts));
    CHECK_OK(gpuk_buffer_write(ctx, in, 0, host, (n + first + 1) * elem));
    CHECK_OK(gpuk_buffer_memset(ctx, S, counts, 0, 0xFFFFFFFFu, 4, (slots + 2) * 2)); /* poison */
    if (f64)
        CHECK_OK(gpuk_histogram_f64(ctx, S, gpuk_at(counts, 1), nbins, lo, hi, gpuk_at(in, first),
                                    n));
    else
        CHECK_OK(gpuk_histogram_f32(ctx, S, gpuk_at(counts, 1), nbins, (float)lo, (float)hi,
                                    gpuk_at(in, first), n));
    CHECK_OK(gpuk_buffer_read(ctx, counts, 0, back, (slots + 2) * 8));
    if (back[0] != POISON || back[slots + 1] != POISON) {
        printf("  histogram_%s nbins %u n %zu: a guard beside the counts was written\n",
               f64 ? "f64" : "f32", nbins, n);
        ok = 0;
    }
    memcpy(got, back + 1, slots * 8);
    CHECK_OK(gpuk_buffer_destroy(ctx, in));
    CHECK_OK(gpuk_buffer_destroy(ctx, counts));
    free(host);
    free(back);
    return ok;
}

/* 1 when the GPU's counts equal want's (the first few differences printed) */
static int same_counts(int f64, const uint64_t* got, const uint64_t* want, uint32_t nbins, size_t n,
                       const char* what) {
    static const char* const apart[] = { " below", " above", " NaN" };
    size_t i, bad = 0;
    for (i = 0; i < (size_t)nbins + 3; i++)
        if (got[i] != want[i] && bad++ < 3)
            printf("  histogram_%s %s nbins %u n %zu: counts[%zu%s] = %llu, want %llu\n",
                   f64 ? "f64" : "f32", what, nbins, n, i, i < nbins ? "" : apart[i - nbins],
                   (unsigned long long)got[i], (unsigned long long)want[i]);
    return bad == 0;
}

/* Random values over [lo - span/4, hi + span/4) in the type, one in 16 an edge value. */
static double random_value(int f64, double lo, double hi, uint32_t nbins) {
    const double span = hi - lo;
    double v;
    if (rng() % 16) v = uniform(lo - span / 4, hi + span / 4);
    else {
        const double edge = lo + (double)(rng() % (nbins + 1u)) * span / nbins;
        switch (rng() % 12) {
        case 0: v = lo; break;
        case 1: v = hi; break;
        case 2: v = f64 ? nextafter(hi, -INFINITY) : nextafterf((float)hi, -INFINITY); break;
        case 3: v = f64 ? nextafter(lo, -INFINITY) : nextafterf((float)lo, -INFINITY); break;
        case 4: v = f64 ? nextafter(lo, INFINITY) : nextafterf((float)lo, INFINITY); break;
        case 5: v = -0.0; break;
        case 6: v = 0.0; break;
        case 7: v = INFINITY; break;
        case 8: v = -INFINITY; break;
        case 9: v = NAN; break;
        case 10: v = f64 ? edge : (double)(float)edge; break; /* a bin edge as the type has it */
        default: v = f64 ? nextafter(edge, -INFINITY) : nextafterf((float)edge, -INFINITY); break;
        }
    }
    return f64 ? v : (double)(float)v;
}

/* The rule's bin against the bin in long double: never more than one apart (the rounding of
   x - lo and of the product moves an edge by an ulp or so, never a whole bin). */
static int rule_near_exact(double x, double lo, double hi, uint32_t nbins, uint32_t slot) {
    long double e;
    uint32_t exact;
    if (!(x >= lo && x < hi)) return 1;
    e = ((long double)x - lo) * nbins / ((long double)hi - lo);
    exact = (uint32_t)floorl(e);
    if (exact >= nbins) exact = nbins - 1;
    return slot + 1 >= exact && slot <= exact + 1;
}

static int mismatches;

static void check_random(int f64, size_t n, size_t first, uint32_t nbins, double lo, double hi) {
    double* values = (double*)malloc((n + 1) * sizeof(double));
    uint64_t* want = (uint64_t*)calloc((size_t)nbins + 3, 8);
    uint64_t* got = (uint64_t*)malloc(((size_t)nbins + 3) * 8);
    size_t i, far = 0;
    if (!f64) { lo = (float)lo; hi = (float)hi; }
    for (i = 0; i < n; i++) {
        uint32_t s;
        values[i] = random_value(f64, lo, hi, nbins);
        s = slot_of(f64, values[i], lo, hi, nbins);
        want[s]++;
        far += !rule_near_exact(values[i], lo, hi, nbins, s);
    }
    if (far) {
        printf("  histogram_%s reference: %zu values more than one bin from the long double bin\n",
               f64 ? "f64" : "f32", far);
        mismatches++;
    }
    if (!run_gpu(f64, values, n, first, nbins, lo, hi, got) ||
        !same_counts(f64, got, want, nbins, n, "random"))
        mismatches++;
    free(values); free(want); free(got);
}

static int test_random_values_match_the_rule(void) {
    static const uint32_t bins[] = { 1, 7, 256, 2048, 3000 };
    size_t si, bi;
    int f64;
    mismatches = 0;
    for (f64 = 0; f64 < 2; f64++)
        for (si = 0; si < NSIZES; si++)
            for (bi = 0; bi < sizeof bins / sizeof bins[0]; bi++) {
                /* an odd range whose ends the type rounds, and one across 0 */
                check_random(f64, sizes[si], bi % 3, bins[bi], 0.1, 0.7);
                check_random(f64, sizes[si], (bi + 1) % 3, bins[bi], -1e3, 2.5e3);
            }
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* Worked by hand, not from the rule's code: [0, 1) in 10 bins; and [-1, 1) in 3 bins, where x
   just below 1 (1 - 2^-24 in f32) gives x - lo = 2 - 2^-24, a tie that rounds to even, 2.0, so
   the product is 3 = nbins and the clamp must put x in bin 2 (f64 alike with 2^-53). */
static int test_edge_values_worked_by_hand(void) {
    int f64;
    for (f64 = 0; f64 < 2; f64++) {
        const double below1 = f64 ? nextafter(1.0, 0.0) : nextafterf(1.0f, 0.0f);
        const double tiny = f64 ? 4.9406564584124654e-324 : 1.40129846e-45; /* subnormal */
        const double v10[] = { 0.0, -0.0, 1.0, below1, -INFINITY, INFINITY, NAN, -tiny, 0.5, tiny,
                               0.05, 0.95, -1.0, 2.0, NAN };
        /* 0.05 and 0.95 are 0.05000000x / 0.9499999x or so in the type: bins 0 and 9 whatever
           their rounding, as 0.1 and 0.9 are a long way off */
        uint64_t want10[13] = { 0 }, got[13];
        const double v3[] = { below1, -1.0, 0.0, 0.5 };
        uint64_t want3[6] = { 0 };
        want10[0] = 4;  /* 0, -0.0, tiny, 0.05 */
        want10[5] = 1;  /* 0.5 */
        want10[9] = 2;  /* below1, 0.95 */
        want10[10] = 3; /* -inf, -tiny, -1 */
        want10[11] = 3; /* 1, inf, 2 */
        want10[12] = 2; /* NaN twice */
        CHECK(run_gpu(f64, v10, 15, 0, 10, 0.0, 1.0, got));
        CHECK(same_counts(f64, got, want10, 10, 15, "hand-worked"));
        /* the clamp is needed: the product rounds to 3 */
        CHECK((f64 ? raw_bin64(below1, -1.0, 1.5) : raw_bin32((float)below1, -1.0f, 1.5f)) == 3);
        want3[0] = 1; /* -1 */
        want3[1] = 1; /* 0: 1 * 1.5 */
        want3[2] = 2; /* 0.5: 1.5 * 1.5 = 2.25, and below1 clamped */
        CHECK(run_gpu(f64, v3, 4, 1, 3, -1.0, 1.0, got));
        CHECK(same_counts(f64, got, want3, 3, 4, "clamped"));
    }
    return TEST_PASS;
}

/* Every value the same (one shared counter for every thread), then all NaN; and a second run
   on the same counts gives the same counts (they are overwritten, never added to). */
static int test_one_value_everywhere(void) {
    const size_t n = sizes[NSIZES - 1];
    double* values = (double*)malloc(n * sizeof(double));
    uint64_t want[259], got[259];
    size_t i;
    int f64;
    for (f64 = 0; f64 < 2; f64++) {
        for (i = 0; i < n; i++) values[i] = 1.25;
        memset(want, 0, sizeof want);
        want[slot_of(f64, 1.25, -2.0, 2.0, 256)] = n;
        CHECK(slot_of(f64, 1.25, -2.0, 2.0, 256) == 208); /* (1.25 + 2) * 64: exact */
        CHECK(run_gpu(f64, values, n, 1, 256, -2.0, 2.0, got));
        CHECK(same_counts(f64, got, want, 256, n, "one value"));
        for (i = 0; i < n; i++) values[i] = NAN;
        memset(want, 0, sizeof want);
        want[4 + 2] = n;
        CHECK(run_gpu(f64, values, n, 0, 4, -2.0, 2.0, got));
        CHECK(same_counts(f64, got, want, 4, n, "all NaN"));
    }
    {   /* twice on the same counts */
        gpuk_buffer in, counts;
        float v[3] = { 0.25f, 0.75f, 5.0f };
        uint64_t c[5];
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof v }, &in));
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof c }, &counts));
        CHECK_OK(gpuk_buffer_write(ctx, in, 0, v, sizeof v));
        CHECK_OK(gpuk_histogram_f32(ctx, S, gpuk_at(counts, 0), 2, 0.0f, 1.0f, gpuk_at(in, 0), 3));
        CHECK_OK(gpuk_histogram_f32(ctx, S, gpuk_at(counts, 0), 2, 0.0f, 1.0f, gpuk_at(in, 0), 3));
        CHECK_OK(gpuk_buffer_read(ctx, counts, 0, c, sizeof c));
        CHECK(c[0] == 1 && c[1] == 1 && c[2] == 0 && c[3] == 1 && c[4] == 0);
        CHECK_OK(gpuk_buffer_destroy(ctx, in));
        CHECK_OK(gpuk_buffer_destroy(ctx, counts));
    }
    free(values);
    return TEST_PASS;
}

/* The bench's call at its size (bench/bench_kernels.c): 256 bins of [0, 1) over n = 2^28
   floats uniform in [0, 1) on the 2^-24 grid gpuk_random_uniform_f32 draws from, one in 1024
   from random_value instead (out of range, edges), and the edge values (NaN, +-inf, +-0, lo,
   hi, just below hi) at random places and last. Counts from element 0, as the bench's. */
static int test_the_bench_call_at_the_bench_size(void) {
    const size_t n = getenv("GPUK_TEST_QUICK") ? 3 * 8192 + 5 : (size_t)1 << 28;
    const float below = nextafterf(1.0f, 0.0f);
    const double edges[] = { NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0, below,
                             nextafterf(below, 0.0f) };
    enum { NEDGES = sizeof edges / sizeof edges[0] };
    double* values = (double*)malloc(n * sizeof(double)); /* 2 GiB, and run_gpu's 1 GiB */
    uint64_t want[256 + 3] = { 0 }, got[256 + 3];
    size_t i, k;
    CHECK(values != NULL);
    if (!values) return TEST_PASS;
    for (i = 0; i < n; i++) { /* the low 10 bits pick, the top 24 make the uniform */
        const uint64_t r = rng();
        values[i] = r % 1024 ? (double)(r >> 40) / 16777216.0 : random_value(0, 0.0, 1.0, 256);
    }
    for (k = 0; k < NEDGES; k++) {
        values[n - 1 - k] = edges[k]; /* the last elements too */
        for (i = 0; i < 4; i++) values[rng() % n] = edges[k];
    }
    for (i = 0; i < n; i++) want[slot_of(0, values[i], 0.0, 1.0, 256)]++;
    CHECK(run_gpu(0, values, n, 0, 256, 0.0, 1.0, got));
    CHECK(same_counts(0, got, want, 256, n, "bench size"));
    free(values);
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (getenv("GPUK_TEST_QUICK")) sizes[NSIZES - 1] = 20011;
    if (!gpu_setup("gpu_histogram_float", 4, &ctx, &code)) return code;
    RUN(test_edge_values_worked_by_hand);
    RUN(test_random_values_match_the_rule);
    RUN(test_one_value_everywhere);
    RUN(test_the_bench_call_at_the_bench_size);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
