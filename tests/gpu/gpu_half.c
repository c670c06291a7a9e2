/* tests/gpu/gpu_half.c - the 16-bit float kernels (f16 = IEEE binary16, bf16 = bfloat16) on the
   GPU against a CPU reference written here in double arithmetic: the widening conversions bit
   for bit over all 65536 patterns; the narrowing ones bit for bit on random f32 bits and the
   edge cases (ties to even, the largest finite, overflow to inf, subnormals, +-0, +-inf, NaN
   payloads); add/sub/mul on random 16-bit patterns bit for bit (one rounding of the exact
   result); axpy bit for bit against C's fmaf rounded once; sum/dot against double within f32
   rounding, min/max exactly. Sizes 0, 1, odd and 2^20 + 3, at aligned, equally misaligned and
   differently misaligned views; outputs poisoned first, and the element after the last must
   keep its poison. The same sum twice gives the same bits. The bench's calls at its size, 2^28
   (3 * 8192 + 5 under GPUK_TEST_QUICK): add, the f16 conversions, sum and dot.
   cc -std=c99 -I../.. gpu_half.c -ldl -lpthread -lm */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };
#define BIG ((size_t)(1u << 20) + 3)
#define POISON 0xA5u
static const size_t sizes[] = { 0, 1, 7, 1001, BIG };
enum { NSIZES = sizeof sizes / sizeof sizes[0] };
/* (out, a, b) element offsets: aligned, equally misaligned (a head, then 16-byte packs),
   misaligned apart (one element at a time) */
static const size_t offs[3][3] = { { 0, 0, 0 }, { 3, 3, 3 }, { 0, 1, 5 } };

/* ---- the CPU reference: a format of p significand bits (the implicit one included) and
   ebits exponent bits; f16 is (11, 5), bf16 (8, 8) ---- */
typedef struct format { int p, ebits; const char* name; } format;
static const format F16 = { 11, 5, "f16" }, BF16 = { 8, 8, "bf16" };

static float bits_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static int is_nan16(uint16_t h, format t) {
    const uint32_t e = (uint32_t)((1 << t.ebits) - 1);
    return ((h >> (t.p - 1)) & e) == e && (h & ((1u << (t.p - 1)) - 1));
}
static double value16(uint16_t h, format t) {
    const int bias = (1 << (t.ebits - 1)) - 1, e = (h >> (t.p - 1)) & ((1 << t.ebits) - 1);
    const double m = h & ((1 << (t.p - 1)) - 1);
    double v;
    if (e == (1 << t.ebits) - 1) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp(m, 1 - bias - (t.p - 1));
    else v = ldexp(m + ldexp(1, t.p - 1), e - bias - (t.p - 1));
    return (h & 0x8000) ? -v : v;
}
/* d rounded to nearest even (nearbyint in the default rounding mode), for a non-NaN d */
static uint16_t round16(double d, format t) {
    const int bias = (1 << (t.ebits - 1)) - 1;
    const uint16_t s = signbit(d) ? 0x8000 : 0;
    const uint16_t inf = (uint16_t)(((1 << t.ebits) - 1) << (t.p - 1));
    double a = fabs(d), k;
    int E;
    if (isinf(d)) return s | inf;
    if (a == 0) return s;
    frexp(a, &E);
    E -= 1;                        /* a = 1.x * 2^E */
    if (E < 1 - bias) E = 1 - bias; /* subnormal: the smallest normal exponent's grid */
    k = nearbyint(ldexp(a, (t.p - 1) - E));
    if (k >= ldexp(1, t.p)) { k /= 2; E++; }
    if (E > bias) return s | inf;
    if (k < ldexp(1, t.p - 1)) return s | (uint16_t)k; /* subnormal (or 0) */
    return s | (uint16_t)(((uint32_t)(E + bias) << (t.p - 1)) | ((uint32_t)k - (1u << (t.p - 1))));
}
/* the documented NaN rule: sign kept, quiet bit set, the payload's top bits kept */
static uint16_t nan16(uint32_t b, format t) {
    if (t.p == 8) return (uint16_t)(b >> 16 | 0x40u);
    return (uint16_t)((b >> 16 & 0x8000u) | 0x7e00u | (b >> 13 & 0x3ffu));
}
static uint16_t want16(float f, format t) { return f != f ? nan16(f_bits(f), t) : round16(f, t); }

/* ---- device buffers ---- */
static gpuk_buffer make(size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes ? bytes : 1 }, &b));
    return b;
}
static void put(gpuk_buffer b, const void* p, size_t bytes) {
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, p, bytes));
}
static void get(gpuk_buffer b, void* p, size_t bytes) {
    CHECK_OK(gpuk_ctx_sync(ctx));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, p, bytes));
}
static void poison(gpuk_buffer b, size_t bytes) {
    void* p = malloc(bytes);
    memset(p, POISON, bytes);
    put(b, p, bytes);
    free(p);
}
static int poisoned(const void* p, size_t bytes) {
    size_t i;
    for (i = 0; i < bytes; i++) if (((const unsigned char*)p)[i] != POISON) return 0;
    return 1;
}
/* a random pattern of t: all classes (NaN, inf, subnormal) where all_bits, else finite */
static uint16_t random16(format t, int all_bits) {
    for (;;) {
        const uint16_t h = (uint16_t)rng();
        const uint32_t e = (uint32_t)((1 << t.ebits) - 1);
        if (all_bits || ((h >> (t.p - 1)) & e) != e) return h;
    }
}
/* a random pattern of t with |value| < 2^scale, finite */
static uint16_t random_small(format t, int scale) {
    return round16(uniform(-1, 1) * ldexp(1, scale), t);
}

/* h widened to f32 bits: exact; a NaN's payload moves up, sign and quiet bit as they were */
static uint32_t want32(uint16_t h, format t) {
    const double v = value16(h, t);
    if (v == v) return f_bits((float)v);
    return t.p == 8 ? (uint32_t)h << 16
                    : (uint32_t)(h & 0x8000u) << 16 | 0x7f800000u | (h & 0x3ffu) << 13;
}

typedef gpuk_result (*to32_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, gpuk_array, size_t);

static int test_widening_is_exact_for_every_pattern(void) {
    const size_t n = 65536 + 8;
    uint16_t* in = (uint16_t*)malloc(n * 2);
    uint32_t* out = (uint32_t*)malloc((n + 1) * 4);
    gpuk_buffer bi = make(n * 2), bo = make((n + 1) * 4);
    size_t f, o, i, bad = 0;
    for (f = 0; f < 2; f++) {
        const format t = f ? BF16 : F16;
        to32_fn fn = f ? gpuk_to_f32_bf16 : gpuk_to_f32_f16;
        for (o = 0; o < 3; o++) {
            const size_t oo = offs[o][0], oi = offs[o][1], m = 65536;
            memset(in, 0, n * 2);
            for (i = 0; i < m; i++) in[oi + i] = (uint16_t)(i * 40503u); /* all, shuffled */
            put(bi, in, n * 2);
            poison(bo, (n + 1) * 4);
            CHECK_OK(fn(ctx, S, gpuk_at(bo, oo), gpuk_at(bi, oi), m));
            get(bo, out, (n + 1) * 4);
            for (i = 0; i < m; i++) {
                const uint16_t h = in[oi + i];
                const uint32_t want = want32(h, t);
                if (out[oo + i] != want && bad++ < 5)
                    fprintf(stderr, "  to_f32_%s(0x%04x) = 0x%08x, want 0x%08x\n", t.name, h,
                            out[oo + i], want);
            }
            CHECK(poisoned(out, oo * 4) && poisoned(out + oo + m, 4));
        }
    }
    CHECK(bad == 0);
    free(in); free(out);
    CHECK_OK(gpuk_buffer_destroy(ctx, bi));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

/* f32 inputs for the narrowing: the edge cases first, then random bits */
static size_t edge_cases(float* x, format t) {
    static const uint32_t fixed[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
        0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fffffffu, 0x7fa02000u, 0xffd5a000u, /* NaNs */
        0x00000001u, 0x807fffffu, 0x00800000u,                             /* f32 subnormals */
        0x477fe000u, 0x477fefffu, 0x477ff000u, 0xc77ff000u, 0x477fffffu, 0x47800000u, /* 65504.. */
        0x7f7fffffu, 0xff7fffffu, 0x7f7f7fffu, 0x7f7f8000u, 0x7f7f0000u,   /* f32 max */
        0x33000000u, 0x33000001u, 0xb3000001u, 0x32ffffffu, 0x33800000u, 0x33c00000u, /* 2^-25.. */
        0x38800000u, 0x387fffffu, 0x387fe000u, 0x387ff000u, 0x38000000u,               /* 2^-14 */
        0x3f800000u, 0x3f801000u, 0x3f803000u, 0x3f808000u, 0x3f818000u, 0x3f800001u, /* 1, ties */
    };
    size_t n = 0, i;
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) x[n++] = bits_f(fixed[i]);
    for (i = 0; i < 4000; i++) { /* ties between neighbours, and a float ulp either side */
        const uint16_t h = random16(t, 0);
        const double lo = value16(h, t), hi = value16((uint16_t)(h + 1), t);
        float mid;
        if (!isfinite(hi)) continue; /* past the largest finite */
        mid = (float)((lo + hi) / 2);
        x[n++] = mid;
        x[n++] = nextafterf(mid, INFINITY);
        x[n++] = nextafterf(mid, -INFINITY);
    }
    return n;
}

typedef gpuk_result (*to16_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, gpuk_array, size_t);

static int test_narrowing_rounds_to_nearest_even(void) {
    const size_t cap = BIG + 16;
    float* in = (float*)malloc(cap * 4);
    uint16_t* out = (uint16_t*)malloc((cap + 1) * 2);
    gpuk_buffer bi = make(cap * 4), bo = make((cap + 1) * 2);
    size_t f, o, s, i, bad = 0;
    for (f = 0; f < 2; f++) {
        const format t = f ? BF16 : F16;
        to16_fn fn = f ? gpuk_to_bf16_f32 : gpuk_to_f16_f32;
        for (s = 0; s < NSIZES; s++) {
            for (o = 0; o < 3; o++) {
                const size_t oo = offs[o][0], oi = offs[o][2], n = sizes[s];
                size_t e = edge_cases(in + oi, t);
                for (i = e < n ? e : n; i < n; i++) in[oi + i] = bits_f((uint32_t)rng());
                if (n < e) { /* small sizes: a random pick of the edge cases */
                    for (i = 0; i < n; i++) in[oi + i] = in[oi + (size_t)(rng() % e)];
                }
                put(bi, in, (oi + n) * 4);
                poison(bo, (cap + 1) * 2);
                CHECK_OK(fn(ctx, S, gpuk_at(bo, oo), gpuk_at(bi, oi), n));
                get(bo, out, (oo + n + 1) * 2);
                for (i = 0; i < n; i++) {
                    const uint16_t want = want16(in[oi + i], t);
                    if (out[oo + i] != want && bad++ < 5)
                        fprintf(stderr, "  to_%s_f32(0x%08x) = 0x%04x, want 0x%04x\n", t.name,
                                f_bits(in[oi + i]), out[oo + i], want);
                    if ((in[oi + i] != in[oi + i]) != is_nan16(out[oo + i], t) && bad++ < 5)
                        fprintf(stderr, "  to_%s_f32(0x%08x): NaN not kept a NaN\n", t.name,
                                f_bits(in[oi + i]));
                }
                CHECK(poisoned(out, oo * 2) && poisoned(out + oo + n, 2));
            }
        }
    }
    CHECK(bad == 0);
    free(in); free(out);
    CHECK_OK(gpuk_buffer_destroy(ctx, bi));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

typedef gpuk_result (*bin_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, gpuk_array, gpuk_array, size_t);

static int test_add_sub_mul_round_once(void) {
    const size_t cap = BIG + 16;
    uint16_t *a = (uint16_t*)malloc(cap * 2), *b = (uint16_t*)malloc(cap * 2);
    uint16_t* out = (uint16_t*)malloc((cap + 1) * 2);
    gpuk_buffer ba = make(cap * 2), bb = make(cap * 2), bo = make((cap + 1) * 2);
    static const bin_fn fns[2][3] = { { gpuk_add_f16, gpuk_sub_f16, gpuk_mul_f16 },
                                      { gpuk_add_bf16, gpuk_sub_bf16, gpuk_mul_bf16 } };
    static const char* const names[3] = { "add", "sub", "mul" };
    size_t f, op, s, o, i, bad = 0;
    for (f = 0; f < 2; f++) {
        const format t = f ? BF16 : F16;
        for (op = 0; op < 3; op++) {
            for (s = 0; s < NSIZES; s++) {
                for (o = 0; o < 4; o++) { /* o = 3: in place, out = a */
                    const size_t n = sizes[s], oo = o < 3 ? offs[o][0] : 1;
                    const size_t oa = o < 3 ? offs[o][1] : 1, ob = o < 3 ? offs[o][2] : 1;
                    const size_t lim = n + 8; /* elements written, read back */
                    gpuk_buffer dst = o < 3 ? bo : ba;
                    for (i = 0; i < lim; i++) {
                        a[i] = random16(t, 1);
                        b[i] = random16(t, 1);
                    }
                    put(ba, a, lim * 2);
                    put(bb, b, lim * 2);
                    if (o < 3) poison(bo, lim * 2);
                    CHECK_OK(fns[f][op](ctx, S, gpuk_at(dst, oo), gpuk_at(ba, oa),
                                        gpuk_at(bb, ob), n));
                    get(dst, out, lim * 2);
                    for (i = 0; i < n; i++) {
                        const double x = value16(a[oa + i], t), y = value16(b[ob + i], t);
                        const double r = op == 0 ? x + y : op == 1 ? x - y : x * y;
                        const uint16_t got = out[oo + i];
                        const int ok = r != r ? is_nan16(got, t) : got == round16(r, t);
                        if (!ok && bad++ < 5)
                            fprintf(stderr, "  %s_%s(0x%04x, 0x%04x) = 0x%04x, want %s0x%04x\n",
                                    names[op], t.name, a[oa + i], b[ob + i], got,
                                    r != r ? "a NaN, not " : "", r != r ? got : round16(r, t));
                    }
                    if (o < 3) CHECK(poisoned(out, oo * 2) && poisoned(out + oo + n, 2));
                    else CHECK(n == 0 || out[oo + n] == a[oa + n]); /* in place: no further */
                }
            }
        }
    }
    CHECK(bad == 0);
    free(a); free(b); free(out);
    CHECK_OK(gpuk_buffer_destroy(ctx, ba));
    CHECK_OK(gpuk_buffer_destroy(ctx, bb));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

typedef gpuk_result (*axpy_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, float, gpuk_array, size_t);

/* y = alpha x + y: one f32 fma (C's fmaf, correctly rounded too), rounded to 16 bits */
static int test_axpy_is_one_fma(void) {
    const size_t cap = BIG + 16;
    uint16_t *x = (uint16_t*)malloc(cap * 2), *y = (uint16_t*)malloc(cap * 2);
    uint16_t* out = (uint16_t*)malloc(cap * 2);
    gpuk_buffer bx = make(cap * 2), by = make(cap * 2);
    static const axpy_fn fns[2] = { gpuk_axpy_f16, gpuk_axpy_bf16 };
    size_t f, s, o, i, bad = 0;
    for (f = 0; f < 2; f++) {
        const format t = f ? BF16 : F16;
        for (s = 0; s < NSIZES; s++) {
            for (o = 0; o < 3; o++) {
                const size_t n = sizes[s], oy = offs[o][0], ox = offs[o][1], lim = n + 8;
                const float alpha = (float)uniform(-3, 3);
                for (i = 0; i < lim; i++) {
                    x[i] = random16(t, 1);
                    y[i] = random16(t, 1);
                }
                put(bx, x, lim * 2);
                put(by, y, lim * 2);
                CHECK_OK(fns[f](ctx, S, gpuk_at(by, oy), alpha, gpuk_at(bx, ox), n));
                get(by, out, lim * 2);
                for (i = 0; i < lim; i++) {
                    const int in = i >= oy && i < oy + n;
                    const float r = !in ? 0.0f : fmaf(alpha, (float)value16(x[ox + i - oy], t),
                                                      (float)value16(y[i], t));
                    const int ok = !in ? out[i] == y[i] : r != r ? is_nan16(out[i], t)
                                                               : out[i] == round16(r, t);
                    if (!ok && bad++ < 5)
                        fprintf(stderr, "  axpy_%s element %zu of %zu: 0x%04x, want 0x%04x\n",
                                t.name, i, n, out[i], in ? round16(r, t) : y[i]);
                }
            }
        }
    }
    CHECK(bad == 0);
    free(x); free(y); free(out);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    return TEST_PASS;
}

typedef gpuk_result (*red_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, gpuk_array, size_t);
typedef gpuk_result (*dot_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, gpuk_array, gpuk_array, size_t);

static int test_reductions_accumulate_in_f32(void) {
    const size_t cap = BIG + 16;
    uint16_t *x = (uint16_t*)malloc(cap * 2), *y = (uint16_t*)malloc(cap * 2);
    gpuk_buffer bx = make(cap * 2), by = make(cap * 2), bo = make(8);
    static const red_fn reds[2][3] = { { gpuk_sum_f16, gpuk_min_f16, gpuk_max_f16 },
                                       { gpuk_sum_bf16, gpuk_min_bf16, gpuk_max_bf16 } };
    static const dot_fn dots[2] = { gpuk_dot_f16, gpuk_dot_bf16 };
    static const char* const names[4] = { "sum", "min", "max", "dot" };
    size_t f, op, s, o, i;
    for (f = 0; f < 2; f++) {
        const format t = f ? BF16 : F16;
        for (s = 0; s < NSIZES; s++) {
            for (o = 0; o < 3; o++) {
                const size_t n = sizes[s], ox = offs[o][1], oy = offs[o][2], lim = n + 8;
                size_t k;
                for (i = 0; i < lim; i++) {
                    x[i] = random_small(t, 3);
                    y[i] = random_small(t, 2);
                    if (rng() % 64 == 0) x[i] = (uint16_t)(t.p == 8 ? 0x7fc1 : 0xfe01); /* a NaN */
                }
                put(by, y, lim * 2);
                for (k = 0; k < 4; k++) { /* min and max with NaN in x (skipped), then the sums */
                    double want, scale = 0;
                    float got[2];
                    int ok;
                    op = (size_t[]){ 1, 2, 0, 3 }[k];
                    want = op == 1 ? INFINITY : op == 2 ? -INFINITY : 0;
                    if (n == 0 && (op == 1 || op == 2)) continue; /* refused: see unit_kernels */
                    if (op == 0) /* NaN-free inputs for the sums */
                        for (i = 0; i < lim; i++) if (is_nan16(x[i], t)) x[i] = random_small(t, 3);
                    put(bx, x, lim * 2);
                    poison(bo, 8);
                    if (op < 3) CHECK_OK(reds[f][op](ctx, S, gpuk_at(bo, 0), gpuk_at(bx, ox), n));
                    else CHECK_OK(dots[f](ctx, S, gpuk_at(bo, 0), gpuk_at(bx, ox),
                                          gpuk_at(by, oy), n));
                    get(bo, got, 8);
                    for (i = 0; i < n; i++) {
                        const double v = value16(x[ox + i], t);
                        const double w = op == 3 ? v * value16(y[oy + i], t) : v;
                        if (op == 0 || op == 3) { want += w; scale += fabs(w); }
                        else if (v == v && (op == 1 ? v < want : v > want)) want = v;
                    }
                    /* sums: within f32 rounding of the magnitudes; min, max: exact */
                    ok = op == 0 || op == 3 ? fabs(got[0] - want) <= 1e-5 * scale : got[0] == want;
                    if (!ok)
                        fprintf(stderr, "  %s_%s n %zu offset %zu: %.9g, want %.9g\n", names[op],
                                t.name, n, o, got[0], want);
                    CHECK(ok);
                    CHECK(poisoned(got + 1, 4));
                }
            }
        }
    }
    free(x); free(y);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

static int test_the_sum_bits_repeat(void) {
    uint16_t* x = (uint16_t*)malloc(BIG * 2);
    gpuk_buffer bx = make(BIG * 2), bo = make(8);
    uint32_t first[2], again[2];
    size_t i, f;
    for (f = 0; f < 2; f++) {
        const format t = f ? BF16 : F16;
        const red_fn sum = f ? gpuk_sum_bf16 : gpuk_sum_f16;
        const dot_fn dot = f ? gpuk_dot_bf16 : gpuk_dot_f16;
        for (i = 0; i < BIG; i++) x[i] = random_small(t, 4);
        put(bx, x, BIG * 2);
        CHECK_OK(sum(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), BIG));
        CHECK_OK(dot(ctx, S, gpuk_at(bo, 1), gpuk_at(bx, 0), gpuk_at(bx, 0), BIG));
        get(bo, first, 8);
        poison(bo, 8);
        CHECK_OK(sum(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), BIG));
        CHECK_OK(dot(ctx, S, gpuk_at(bo, 1), gpuk_at(bx, 0), gpuk_at(bx, 0), BIG));
        get(bo, again, 8);
        CHECK(first[0] == again[0] && first[1] == again[1]);
    }
    free(x);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

/* n random bits (every class: NaN, inf, subnormal), four halves a rng() call */
static void fill_bits(uint16_t* x, size_t n) {
    size_t i;
    for (i = 0; i < n; i += 4) {
        const uint64_t r = rng();
        memcpy(x + i, &r, n - i < 4 ? (n - i) * 2 : 8);
    }
}
/* n random patterns of t with |value| < 2^scale, each as likely: the exponent field uniform
   below bias + scale, sign and fraction random bits (random_small's round16 is too slow) */
static void fill_below(uint16_t* x, size_t n, format t, int scale) {
    const uint64_t fields = (uint64_t)((1 << (t.ebits - 1)) - 1 + scale);
    const uint64_t keep = 0x8000u | ((1u << (t.p - 1)) - 1);
    size_t i;
    for (i = 0; i < n; i++) {
        const uint64_t r = rng();
        x[i] = (uint16_t)((r & keep) | ((r >> 32) * fields >> 32) << (t.p - 1));
    }
}

/* round16 on 2^28 values: called on each, over 10 s (frexp, ldexp, nearbyint a call). Its
   result changes only at a tie (a midpoint of t's neighbours: t's p - 1 fraction bits, a one,
   then zeros), so in a block of the doubles that share sign, exponent and top p fraction
   bits, which a tie can only start, the first double rounds as it does and every other as the
   last does. The table holds both for the blocks of t's range (from a quarter of the smallest
   subnormal to past the overflow); all else goes to round16 itself. */
typedef struct rounder { format t; unsigned elo, ehi, fb; uint16_t (*r)[2]; } rounder;
static double bits_d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static int rounder_make(rounder* m, format t) {
    const int bias = (1 << (t.ebits - 1)) - 1;
    unsigned s, e, f;
    size_t i = 0;
    m->t = t;
    m->fb = (unsigned)t.p;
    m->elo = (unsigned)(1023 + 1 - bias - (t.p - 1) - 2); /* biased exponents of doubles */
    m->ehi = (unsigned)(1023 + bias + 2);
    m->r = (uint16_t(*)[2])malloc(((size_t)2 * (m->ehi - m->elo) << m->fb) * 4);
    if (!m->r) return 0;
    for (s = 0; s < 2; s++)
        for (e = m->elo; e < m->ehi; e++)
            for (f = 0; f < 1u << m->fb; f++, i++) {
                const uint64_t first = (uint64_t)s << 63 | (uint64_t)e << 52 |
                                       (uint64_t)f << (52 - m->fb);
                m->r[i][0] = round16(bits_d(first), t);
                m->r[i][1] = round16(bits_d(first | (((uint64_t)1 << (52 - m->fb)) - 1)), t);
            }
    return 1;
}
/* round16(d, m->t), d not a NaN */
static uint16_t rounded(const rounder* m, double d) {
    uint64_t u;
    unsigned e;
    memcpy(&u, &d, 8);
    e = (unsigned)(u >> 52 & 0x7ff);
    if (e < m->elo || e >= m->ehi) return round16(d, m->t);
    return m->r[((size_t)(u >> 63) * (m->ehi - m->elo) + (e - m->elo)) << m->fb |
                (size_t)(u >> (52 - m->fb) & ((1u << m->fb) - 1))]
               [(u & (((uint64_t)1 << (52 - m->fb)) - 1)) != 0];
}

/* The bench's 16-bit calls at its size (bench/bench_kernels.c: n = 2^28, whole buffers from
   element 0): add_f16/_bf16 on random bits and both f16 conversions bit for bit, every element,
   the element after the last kept poisoned; sum_f16/_bf16 and dot_f16 on finite values against
   the double sum within f32 rounding. Three device buffers (1 GiB, 512 MiB, 1 GiB) serve every
   call. GPUK_TEST_QUICK (the sanitizer runs) shrinks n to 3 * 8192 + 5. */
static int test_the_bench_calls_at_the_bench_size(void) {
    const size_t n = getenv("GPUK_TEST_QUICK") ? 3 * 8192 + 5 : (size_t)1 << 28;
    void* xs = malloc(n * 4); /* the f32 input of to_f16_f32, else a's halves */
    uint16_t *x = (uint16_t*)xs, *y = (uint16_t*)malloc(n * 2);
    void* outs = malloc((n + 1) * 4);
    double* val = (double*)malloc(65536 * sizeof(double));
    uint32_t* wide = (uint32_t*)malloc(65536 * 4);
    rounder r16 = { F16, 0, 0, 0, NULL }, rb16 = { BF16, 0, 0, 0, NULL };
    gpuk_buffer bx, by, bo;
    size_t f, i, bad = 0;
    int ready = xs && y && outs && val && wide;
    ready = ready && rounder_make(&r16, F16) && rounder_make(&rb16, BF16);
    CHECK(ready); /* host memory */
    if (!ready) {
        free(xs); free(y); free(outs); free(val); free(wide); free(r16.r); free(rb16.r);
        return TEST_PASS;
    }
    bx = make(n * 4), by = make(n * 2), bo = make((n + 1) * 4);
    for (f = 0; f < 2; f++) { /* add: a NaN where the exact result is one, else round16 of it */
        const format t = f ? BF16 : F16;
        const rounder* m = f ? &rb16 : &r16;
        const bin_fn add = f ? gpuk_add_bf16 : gpuk_add_f16;
        uint16_t* out = (uint16_t*)outs;
        for (i = 0; i < 65536; i++) val[i] = value16((uint16_t)i, t);
        fill_bits(x, n);
        fill_bits(y, n);
        put(bx, x, n * 2);
        put(by, y, n * 2);
        CHECK_OK(gpuk_buffer_memset(ctx, S, bo, 0, POISON * 0x01010101u, 4, n + 1));
        CHECK_OK(add(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), gpuk_at(by, 0), n));
        get(bo, out, (n + 1) * 2);
        for (i = 0; i < n; i++) {
            const double r = val[x[i]] + val[y[i]];
            const int ok = r != r ? is_nan16(out[i], t) : out[i] == rounded(m, r);
            if (!ok && bad++ < 5)
                fprintf(stderr, "  add_%s(0x%04x, 0x%04x) element %zu of %zu = 0x%04x\n", t.name,
                        x[i], y[i], i, n, out[i]);
        }
        CHECK(poisoned(out + n, 2));
    }
    {   /* to_f16_f32: the narrowing test's edge cases, then uniform floats in [0, 1) on the
           2^-24 grid, as the bench's, one in 64 random f32 bits (NaN, inf, out of range) */
        float* in = (float*)xs;
        uint16_t* out = (uint16_t*)outs;
        const size_t e = edge_cases(in, F16); /* about 12000: n is larger */
        for (i = e; i < n; i++) {
            const uint64_t u = rng();
            in[i] = u % 64 ? (float)(u >> 40) / 16777216.0f : bits_f((uint32_t)(u >> 8));
        }
        put(bx, in, n * 4);
        CHECK_OK(gpuk_buffer_memset(ctx, S, bo, 0, POISON * 0x01010101u, 4, n + 1));
        CHECK_OK(gpuk_to_f16_f32(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), n));
        get(bo, out, (n + 1) * 2);
        for (i = 0; i < n; i++) {
            const int nan = in[i] != in[i];
            const uint16_t want = nan ? want16(in[i], F16) : rounded(&r16, in[i]);
            if ((out[i] != want || nan != is_nan16(out[i], F16)) && bad++ < 5)
                fprintf(stderr, "  to_f16_f32(0x%08x) element %zu of %zu = 0x%04x, want 0x%04x\n",
                        f_bits(in[i]), i, n, out[i], want);
        }
        CHECK(poisoned(out + n, 2));
    }
    {   /* to_f32_f16 on random bits: the widening's want32, one table entry a pattern */
        uint32_t* out = (uint32_t*)outs;
        for (i = 0; i < 65536; i++) wide[i] = want32((uint16_t)i, F16);
        fill_bits(x, n);
        put(bx, x, n * 2);
        CHECK_OK(gpuk_buffer_memset(ctx, S, bo, 0, POISON * 0x01010101u, 4, n + 1));
        CHECK_OK(gpuk_to_f32_f16(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), n));
        get(bo, out, (n + 1) * 4);
        for (i = 0; i < n; i++)
            if (out[i] != wide[x[i]] && bad++ < 5)
                fprintf(stderr, "  to_f32_f16(0x%04x) element %zu of %zu = 0x%08x, want 0x%08x\n",
                        x[i], i, n, out[i], wide[x[i]]);
        CHECK(poisoned(out + n, 4));
    }
    for (f = 0; f < 3; f++) { /* sum_f16, dot_f16 (x |v| < 8, y |v| < 4), sum_bf16 */
        const format t = f == 2 ? BF16 : F16;
        float got[2];
        double want = 0, scale = 0;
        int ok;
        if (f != 1) {
            for (i = 0; i < 65536; i++) val[i] = value16((uint16_t)i, t);
            fill_below(x, n, t, 3);
            put(bx, x, n * 2);
        }
        if (f == 0) {
            fill_below(y, n, t, 2);
            put(by, y, n * 2);
        }
        CHECK_OK(gpuk_buffer_memset(ctx, S, bo, 0, POISON * 0x01010101u, 4, 2));
        if (f == 1)
            CHECK_OK(gpuk_dot_f16(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), gpuk_at(by, 0), n));
        else
            CHECK_OK((f ? gpuk_sum_bf16 : gpuk_sum_f16)(ctx, S, gpuk_at(bo, 0), gpuk_at(bx, 0), n));
        get(bo, got, 8);
        for (i = 0; i < n; i++) {
            const double w = f == 1 ? val[x[i]] * val[y[i]] : val[x[i]];
            want += w;
            scale += fabs(w);
        }
        ok = fabs(got[0] - want) <= 1e-5 * scale; /* as the reductions test */
        if (!ok)
            fprintf(stderr, "  %s_%s n %zu: %.9g, want %.9g\n", f == 1 ? "dot" : "sum", t.name, n,
                    got[0], want);
        CHECK(ok);
        CHECK(poisoned(got + 1, 4));
    }
    CHECK(bad == 0);
    free(xs); free(y); free(outs); free(val); free(wide); free(r16.r); free(rb16.r);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

int main(void) {
    int rc;
    rng_seed_from_clock();
    if (!gpu_setup("gpu_half", 7, &ctx, &rc)) return rc;
    RUN(test_widening_is_exact_for_every_pattern);
    RUN(test_narrowing_rounds_to_nearest_even);
    RUN(test_add_sub_mul_round_once);
    RUN(test_axpy_is_one_fma);
    RUN(test_reductions_accumulate_in_f32);
    RUN(test_the_sum_bits_repeat);
    RUN(test_the_bench_calls_at_the_bench_size);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
