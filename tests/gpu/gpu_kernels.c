/* tests/gpu/gpu_kernels.c - every built-in kernel on a real GPU against a CPU reference (float64
   for float results, tolerances stated where each check is made) on fresh random inputs at
   sizes 0, 1, 31, 32, 33, 1023, 1025, 2^20+7, at aligned and misaligned first elements, with
   outputs poisoned (0xFF bytes: NaN for floats) before every run. The u8 histogram also runs on
   2^31 + 4099 bytes. Skipped where no driver or GPU exists.
   GPUK_TEST_QUICK=1 (for the sanitizer runs) leaves out the 2^31-byte case and uses 20011 in
   place of 2^20+7: still several scan tiles and reduction blocks, at a sanitizer's speed. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>
#include <time.h>

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };
static size_t sizes[] = { 0, 1, 31, 32, 33, 1023, 1025, (1u << 20) + 7 };
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXN ((1u << 20) + 7)
#define PAD 8 /* elements of room before and after each array for misaligned views */


/* ---- element types, handled through one tag ---- */
typedef enum { F32, F64, I32, U32 } ty;
static const char* const ty_name[] = { "f32", "f64", "i32", "u32" };
static size_t tsize(ty t) { return t == F64 ? 8 : 4; }
static double get(const void* p, ty t, size_t i) {
    switch (t) {
    case F32: return ((const float*)p)[i];
    case F64: return ((const double*)p)[i];
    case I32: return ((const int32_t*)p)[i];
    default: return ((const uint32_t*)p)[i];
    }
}
static uint32_t bits32(const void* p, size_t i) { return ((const uint32_t*)p)[i]; }
static void put(void* p, ty t, size_t i, double v) {
    switch (t) {
    case F32: ((float*)p)[i] = (float)v; break;
    case F64: ((double*)p)[i] = v; break;
    case I32: ((int32_t*)p)[i] = (int32_t)v; break;
    default: ((uint32_t*)p)[i] = (uint32_t)v; break;
    }
}
/* The reference result rounded to the element type, as the GPU must store it. */
static double as_type(ty t, double v) { return t == F32 ? (double)(float)v : v; }
static double ulp(ty t, double v) {
    int e;
    frexp(v == 0 ? 1e-30 : v, &e);
    return ldexp(1.0, e - (t == F32 ? 24 : 53));
}

/* Random values of type t in [lo, hi) (integers: any 32-bit pattern when lo == hi == 0). */
static void fill_random(void* p, ty t, size_t n, double lo, double hi) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (t == F32 || t == F64) put(p, t, i, uniform(lo, hi));
        else if (lo == 0 && hi == 0) ((uint32_t*)p)[i] = (uint32_t)rng();
        else put(p, t, i, floor(uniform(lo, hi)));
    }
}

/* A device array of MAXN + 2 * PAD elements and its host mirror. */
typedef struct arr { gpuk_buffer buf; void* host; ty t; } arr;
static arr arr_new(ty t) {
    arr a;
    a.t = t;
    a.host = calloc(MAXN + 2 * PAD, 8);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (MAXN + 2 * PAD) * tsize(t) }, &a.buf));
    return a;
}
static void arr_free(arr* a) { CHECK_OK(gpuk_buffer_destroy(ctx, a->buf)); free(a->host); }
static void upload(arr* a) { CHECK_OK(gpuk_buffer_write(ctx, a->buf, 0, a->host, (MAXN + 2 * PAD) * tsize(a->t))); }
static void poison(arr* a) { CHECK_OK(gpuk_buffer_memset(ctx, S, a->buf, 0, 0xFF, 1, (MAXN + 2 * PAD) * tsize(a->t))); }
static void download(arr* a) { CHECK_OK(gpuk_buffer_read(ctx, a->buf, 0, a->host, (MAXN + 2 * PAD) * tsize(a->t))); }
static gpuk_array view(const arr* a, size_t first) { return gpuk_at(a->buf, first); }

/* Reports the first few mismatches of one run; returns the count. */
static int mismatches;
static void mismatch(const char* what, ty t, size_t n, size_t i, double got, double want, double tol) {
    if (mismatches++ < 5)
        fprintf(stderr, "  %s %s n=%zu: [%zu] = %.17g, want %.17g (tolerance %.3g)\n", what, ty_name[t], n, i,
                got, want, tol);
}
static void expect_close(const char* what, ty t, size_t n, size_t i, double got, double want, double tol) {
    if (!(fabs(got - want) <= tol) && !(isnan(got) && isnan(want))) mismatch(what, t, n, i, got, want, tol);
}

/* Elements before and after [first, first + n) must still hold the poison. */
static void expect_untouched(const char* what, const arr* a, size_t first, size_t n) {
    const unsigned char* p = (const unsigned char*)a->host;
    size_t e = tsize(a->t), i;
    for (i = 0; i < first * e; i++) if (p[i] != 0xFF) { mismatch(what, a->t, n, i / e, p[i], 0xFF, 0); break; }
    for (i = (first + n) * e; i < (first + n + PAD) * e; i++) if (p[i] != 0xFF) { mismatch(what, a->t, n, i / e, p[i], 0xFF, 0); break; }
}

/* ==== element-wise ==== */
typedef enum { ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM, AXPY, SCALE, ABS, SQRT, EXP, LOG, SIN, COS, C2S2, SELU, FILL, NOPS } op;
static const char* const op_name[] = { "add", "sub", "mul", "div", "minimum", "maximum", "axpy", "scale", "abs",
                                       "sqrt", "exp", "log", "sin", "cos", "cos2_plus_sin2", "selu", "fill" };
static const double selu_alpha = 1.6732632423543772, selu_lambda = 1.0507009873554805;

#define TYPED4(fn, t, ...) \
    ((t) == F32 ? fn##_f32(__VA_ARGS__) : (t) == F64 ? fn##_f64(__VA_ARGS__) : (t) == I32 ? fn##_i32(__VA_ARGS__) : fn##_u32(__VA_ARGS__))
#define TYPED2(fn, t, ...) ((t) == F32 ? fn##_f32(__VA_ARGS__) : fn##_f64(__VA_ARGS__))

static gpuk_result call_map(op o, ty t, gpuk_array out, gpuk_array a, gpuk_array b, size_t n, double s) {
    switch (o) {
    case ADD: return TYPED4(gpuk_add, t, ctx, S, out, a, b, n);
    case SUB: return TYPED4(gpuk_sub, t, ctx, S, out, a, b, n);
    case MUL: return TYPED4(gpuk_mul, t, ctx, S, out, a, b, n);
    case MINIMUM: return TYPED4(gpuk_minimum, t, ctx, S, out, a, b, n);
    case MAXIMUM: return TYPED4(gpuk_maximum, t, ctx, S, out, a, b, n);
    case DIV: return TYPED2(gpuk_div, t, ctx, S, out, a, b, n);
    case AXPY: return t == F32 ? gpuk_axpy_f32(ctx, S, out, (float)s, a, n) : gpuk_axpy_f64(ctx, S, out, s, a, n);
    case SCALE: return t == F32 ? gpuk_scale_f32(ctx, S, out, (float)s, a, n) : gpuk_scale_f64(ctx, S, out, s, a, n);
    case ABS: return t == I32 ? gpuk_abs_i32(ctx, S, out, a, n) : TYPED2(gpuk_abs, t, ctx, S, out, a, n);
    case SQRT: return TYPED2(gpuk_sqrt, t, ctx, S, out, a, n);
    case EXP: return TYPED2(gpuk_exp, t, ctx, S, out, a, n);
    case LOG: return TYPED2(gpuk_log, t, ctx, S, out, a, n);
    case SIN: return TYPED2(gpuk_sin, t, ctx, S, out, a, n);
    case COS: return TYPED2(gpuk_cos, t, ctx, S, out, a, n);
    case C2S2: return TYPED2(gpuk_cos2_plus_sin2, t, ctx, S, out, a, n);
    case SELU:
        return t == F32 ? gpuk_selu_f32(ctx, S, out, a, n, (float)selu_alpha, (float)selu_lambda)
                        : gpuk_selu_f64(ctx, S, out, a, n, selu_alpha, selu_lambda);
    case FILL:
        return t == F32 ? gpuk_fill_f32(ctx, S, out, n, (float)s) : t == F64 ? gpuk_fill_f64(ctx, S, out, n, s)
             : t == I32 ? gpuk_fill_i32(ctx, S, out, n, (int32_t)s) : gpuk_fill_u32(ctx, S, out, n, (uint32_t)s);
    default: return GPUK_ERR_INVALID_ARG;
    }
}

/* Exact reference for integer ops (wrapping) as a 32-bit pattern. */
static uint32_t int_ref(op o, ty t, uint32_t x, uint32_t y, uint32_t s) {
    int32_t sx = (int32_t)x, sy = (int32_t)y;
    switch (o) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case MINIMUM: return t == I32 ? (uint32_t)(sx < sy ? sx : sy) : (x < y ? x : y);
    case MAXIMUM: return t == I32 ? (uint32_t)(sx > sy ? sx : sy) : (x > y ? x : y);
    case ABS: return sx < 0 ? 0u - x : x;
    default: return s; /* FILL */
    }
}

/* float64 reference and its tolerance: exact (the IEEE op rounded to the type) for + - * / min
   max abs sqrt scale fill; 2 ulp of the largest term for axpy (the GPU fuses the multiply-add,
   the reference rounds twice); 4 ulp for the
   library functions (CUDA documents 1-2 ulp); cos^2+sin^2 within 4 ulp of 1. */
static double float_ref(op o, ty t, double x, double y, double s, double* tol) {
    double r;
    *tol = 0;
    switch (o) {
    case ADD: return as_type(t, x + y);
    case SUB: return as_type(t, x - y);
    case MUL: return as_type(t, x * y);
    case DIV: return as_type(t, x / y);
    case MINIMUM: return x < y ? x : y;
    case MAXIMUM: return x > y ? x : y;
    case SCALE: return as_type(t, as_type(t, s) * x);
    case ABS: return fabs(x);
    case SQRT: return as_type(t, sqrt(x));
    case FILL: return as_type(t, s);
    case AXPY: r = as_type(t, s) * x + y; *tol = 2 * ulp(t, fabs(r) + fabs(as_type(t, s) * x) + fabs(y)); return r;
    case EXP: r = exp(x); break;
    case LOG: r = log(x); break;
    case SIN: r = sin(x); break;
    case COS: r = cos(x); break;
    case C2S2: r = cos(x) * cos(x) + sin(x) * sin(x); *tol = 4 * ulp(t, 1.0); return r;
    case SELU: r = selu_lambda * (x > 0 ? x : selu_alpha * exp(x) - selu_alpha); *tol = 4 * ulp(t, r) + 4 * ulp(t, selu_lambda * selu_alpha) * (x <= 0); return r;
    default: return 0;
    }
    *tol = 4 * ulp(t, r);
    return r;
}

static void input_range(op o, ty t, double* lo, double* hi) {
    *lo = -1000; *hi = 1000;
    if (t == I32 || t == U32) { *lo = *hi = 0; return; }            /* any bit pattern */
    if (o == SQRT || o == LOG) { *lo = 1e-6; *hi = 1e6; }
    if (o == EXP) { *lo = t == F32 ? -80 : -700; *hi = -*lo; }
    if (o == SIN || o == COS || o == C2S2) { *lo = -1e5; *hi = 1e5; } /* includes the slow argument reduction */
    if (o == SELU) { *lo = -20; *hi = 20; }
    if (o == DIV) { *lo = 0.5; *hi = 1000; }
}

static int op_has_type(op o, ty t) {
    if (t == F32 || t == F64) return 1;
    return o == ADD || o == SUB || o == MUL || o == MINIMUM || o == MAXIMUM || o == FILL || (o == ABS && t == I32);
}

/* One op, one type, every size; out/a/b start at different offsets so that both the 16-byte
   body (equal alignment) and the element-at-a-time path (unequal) run; also once in place. */
static void check_map(op o, ty t) {
    const int nin = o == FILL ? 0 : (o >= ABS && o != AXPY && o != SCALE) ? 1 : (o == SCALE ? 1 : 2);
    arr out = arr_new(t), a = arr_new(t), b = arr_new(t);
    double lo, hi, s = o == FILL ? 7.25 : 1.75;
    size_t si, i;
    int pass;
    if (t == I32 && o == FILL) s = -12345;
    if (t == U32 && o == FILL) s = 4000000000.0;
    input_range(o, t, &lo, &hi);
    for (pass = 0; pass < 3; pass++) {
        /* pass 0: all arrays at element 4 (16-byte aligned); 1: out and b at 1, a at 2 (unequal
           alignment: one element at a time); 2: in place at 1 */
        size_t fo = pass == 0 ? 4 : 1, fa = pass == 1 ? 2 : fo, fb = fo;
        for (si = 0; si < NSIZES; si++) {
            size_t n = sizes[si];
            arr* dst = (pass == 2 && nin > 0) ? (o == AXPY ? &b : &a) : &out;
            fill_random(a.host, t, MAXN + 2 * PAD, lo, hi);
            fill_random(b.host, t, MAXN + 2 * PAD, lo, hi);
            upload(&a);
            upload(&b);
            if (dst == &out) poison(&out);
            if (o == AXPY) { /* y = s*x + y: y is b's values (copied into the poisoned out), x is a */
                memcpy(out.host, b.host, (MAXN + 2 * PAD) * tsize(t));
                CHECK_OK(gpuk_buffer_write(ctx, out.buf, fo * tsize(t), (char*)b.host + fo * tsize(t), n * tsize(t)));
                dst = pass == 2 ? &b : &out;
                CHECK_OK(call_map(o, t, view(dst, pass == 2 ? fb : fo), view(&a, fa), view(dst, pass == 2 ? fb : fo), n, s));
            } else {
                size_t fd = dst == &out ? fo : fa;
                CHECK_OK(call_map(o, t, view(dst, fd), view(&a, fa), view(&b, fb), n, s));
            }
            {
                void* in_a = malloc((MAXN + 2 * PAD) * 8);
                void* in_b = malloc((MAXN + 2 * PAD) * 8);
                size_t fd = o == AXPY ? (pass == 2 ? fb : fo) : (dst == &out ? fo : fa);
                memcpy(in_a, a.host, (MAXN + 2 * PAD) * tsize(t));
                memcpy(in_b, b.host, (MAXN + 2 * PAD) * tsize(t));
                download(dst);
                for (i = 0; i < n; i++) {
                    if (t == I32 || t == U32) {
                        uint32_t want = int_ref(o, t, bits32(in_a, fa + i), bits32(in_b, fb + i), (uint32_t)(int64_t)s);
                        if (bits32(dst->host, fd + i) != want) mismatch(op_name[o], t, n, i, bits32(dst->host, fd + i), want, 0);
                    } else {
                        double tol, x = get(in_a, t, fa + i), y = get(in_b, t, (o == AXPY ? fd : fb) + i);
                        double want = float_ref(o, t, x, y, s, &tol);
                        expect_close(op_name[o], t, n, i, get(dst->host, t, fd + i), want, tol);
                    }
                }
                if (dst == &out) expect_untouched(op_name[o], &out, fd, n);
                free(in_a);
                free(in_b);
            }
        }
    }
    arr_free(&out); arr_free(&a); arr_free(&b);
}

static int test_elementwise_ops_match_float64(void) {
    int o, t;
    for (o = 0; o < NOPS; o++)
        for (t = F32; t <= U32; t++)
            if (op_has_type((op)o, (ty)t)) {
                mismatches = 0;
                check_map((op)o, (ty)t);
                CHECK(mismatches == 0);
            }
    return TEST_PASS;
}

/* ==== iota, linspace, strided copy ==== */
static int test_iota_linspace_and_strided_copy(void) {
    size_t si, i;
    int t;
    mismatches = 0;
    for (t = F32; t <= U32; t++) {
        arr out = arr_new((ty)t), in = arr_new((ty)t);
        for (si = 0; si < NSIZES; si++) {
            size_t n = sizes[si], cols = 7, rows = n / cols;
            double start = t == U32 ? 4000000000.0 : -3.5, step = t >= I32 ? 3 : 0.25;
            gpuk_result r;
            poison(&out);
            r = t == F32 ? gpuk_iota_f32(ctx, S, view(&out, 1), n, (float)start, (float)step)
              : t == F64 ? gpuk_iota_f64(ctx, S, view(&out, 1), n, start, step)
              : t == I32 ? gpuk_iota_i32(ctx, S, view(&out, 1), n, -4, 3)
                         : gpuk_iota_u32(ctx, S, view(&out, 1), n, 4000000000u, 3);
            CHECK_OK(r);
            download(&out);
            for (i = 0; i < n; i++) {
                if (t >= I32) {
                    uint32_t want = t == I32 ? (uint32_t)-4 + 3u * (uint32_t)i : 4000000000u + 3u * (uint32_t)i;
                    if (bits32(out.host, 1 + i) != want) mismatch("iota", (ty)t, n, i, bits32(out.host, 1 + i), want, 0);
                } else {
                    double want = start + (double)as_type((ty)t, (double)i) * step;
                    expect_close("iota", (ty)t, n, i, get(out.host, (ty)t, 1 + i), want, ulp((ty)t, want));
                }
            }
            expect_untouched("iota", &out, 1, n);
            if (t <= F64) { /* linspace from -2 to 5: ends exact, within 2 ulp of 5 elsewhere */
                poison(&out);
                CHECK_OK(t == F32 ? gpuk_linspace_f32(ctx, S, view(&out, 3), n, -2.0f, 5.0f)
                                  : gpuk_linspace_f64(ctx, S, view(&out, 3), n, -2.0, 5.0));
                download(&out);
                for (i = 0; i < n; i++) {
                    double want = n == 1 ? -2.0 : -2.0 + 7.0 * (double)i / (double)(n - 1);
                    double tol = (i == 0 || i == n - 1) ? 0 : 2 * ulp((ty)t, 5.0);
                    expect_close("linspace", (ty)t, n, i, get(out.host, (ty)t, 3 + i), want, tol);
                }
                expect_untouched("linspace", &out, 3, n);
            }
            /* gather column 2 of a rows x 7 matrix into every 3rd element of out */
            fill_random(in.host, (ty)t, MAXN + 2 * PAD, -100, 100);
            upload(&in);
            poison(&out);
            r = t == F32 ? gpuk_copy_strided_f32(ctx, S, view(&out, 1), 3, view(&in, 2), cols, rows)
              : t == F64 ? gpuk_copy_strided_f64(ctx, S, view(&out, 1), 3, view(&in, 2), cols, rows)
              : t == I32 ? gpuk_copy_strided_i32(ctx, S, view(&out, 1), 3, view(&in, 2), cols, rows)
                         : gpuk_copy_strided_u32(ctx, S, view(&out, 1), 3, view(&in, 2), cols, rows);
            CHECK_OK(r);
            download(&out);
            for (i = 0; i < rows; i++)
                if (memcmp((char*)out.host + (1 + 3 * i) * tsize((ty)t), (char*)in.host + (2 + i * cols) * tsize((ty)t), tsize((ty)t)))
                    mismatch("copy_strided", (ty)t, rows, i, get(out.host, (ty)t, 1 + 3 * i), get(in.host, (ty)t, 2 + i * cols), 0);
        }
        arr_free(&out);
        arr_free(&in);
    }
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* ==== reductions ==== */
typedef enum { R_SUM, R_MIN, R_MAX, R_ARGMIN, R_ARGMAX, R_DOT, R_NORM2, NRED } red;
static const char* const red_name[] = { "sum", "min", "max", "argmin", "argmax", "dot", "norm2" };

static gpuk_result call_reduce(red o, ty t, gpuk_array out, gpuk_array x, gpuk_array y, size_t n) {
    switch (o) {
    case R_SUM: return TYPED4(gpuk_sum, t, ctx, S, out, x, n);
    case R_MIN: return TYPED4(gpuk_min, t, ctx, S, out, x, n);
    case R_MAX: return TYPED4(gpuk_max, t, ctx, S, out, x, n);
    case R_ARGMIN: return TYPED4(gpuk_argmin, t, ctx, S, out, x, n);
    case R_ARGMAX: return TYPED4(gpuk_argmax, t, ctx, S, out, x, n);
    case R_DOT: return TYPED2(gpuk_dot, t, ctx, S, out, x, y, n);
    default: return TYPED2(gpuk_norm2, t, ctx, S, out, x, n);
    }
}

/* Sums: float64 reference, tolerance 8 n_eff eps sum|terms| with n_eff = log2(n) + 64 (the
   per-thread, tree and partial folds); integers exact modulo 2^32; min/max/arg exact, with the
   extreme value planted twice so the first index must win. */
static void check_reduce(red o, ty t) {
    arr x = arr_new(t), y = arr_new(t), out = arr_new(o == R_ARGMIN || o == R_ARGMAX ? F64 : t);
    size_t si, i;
    int first;
    for (si = 0; si < NSIZES; si++)
        for (first = 0; first < 4; first += 3) {
            size_t n = sizes[si];
            double want = 0, mag = 0, got;
            uint32_t iwant = 0;
            size_t at = 0;
            if (n == 0 && (o == R_MIN || o == R_MAX || o == R_ARGMIN || o == R_ARGMAX)) {
                CHECK_RESULT(call_reduce(o, t, view(&out, 0), view(&x, first), view(&y, first), 0), GPUK_ERR_INVALID_ARG);
                continue;
            }
            fill_random(x.host, t, MAXN + 2 * PAD, t >= I32 ? -1e6 : -10, t >= I32 ? 1e6 : 10);
            if (t == U32) fill_random(x.host, t, MAXN + 2 * PAD, 0, 0);
            fill_random(y.host, t, MAXN + 2 * PAD, -10, 10);
            if (n > 2 && (o == R_ARGMIN || o == R_ARGMAX || o == R_MIN || o == R_MAX)) {
                size_t p = n / 3, q = 2 * n / 3;
                double v = (o == R_ARGMIN || o == R_MIN) ? (t == U32 ? 0 : -2e6) : (t == U32 ? 4294967295.0 : 2e6);
                put(x.host, t, first + p, v);
                put(x.host, t, first + q, v);
            }
            upload(&x);
            upload(&y);
            poison(&out);
            CHECK_OK(call_reduce(o, t, view(&out, 1), view(&x, first), view(&y, first), n));
            download(&out);
            for (i = 0; i < n; i++) {
                double v = get(x.host, t, first + i);
                if (o == R_SUM) { want += v; mag += fabs(v); iwant += bits32(x.host, first + i); }
                if (o == R_DOT) { want += v * get(y.host, t, first + i); mag += fabs(v * get(y.host, t, first + i)); }
                if (o == R_NORM2) { want += v * v; mag += v * v; }
                if ((o == R_MIN || o == R_ARGMIN) && (i == 0 || v < get(x.host, t, first + at))) at = i;
                if ((o == R_MAX || o == R_ARGMAX) && (i == 0 || v > get(x.host, t, first + at))) at = i;
            }
            if (o == R_ARGMIN || o == R_ARGMAX) {
                uint64_t idx;
                memcpy(&idx, (char*)out.host + 8, 8);
                if (idx != at) mismatch(red_name[o], t, n, 0, (double)idx, (double)at, 0);
                continue;
            }
            if (o == R_MIN || o == R_MAX) {
                if (memcmp((char*)out.host + tsize(t), (char*)x.host + (first + at) * tsize(t), tsize(t)))
                    mismatch(red_name[o], t, n, 0, get(out.host, t, 1), get(x.host, t, first + at), 0);
                continue;
            }
            if (t >= I32) {
                if (bits32(out.host, 1) != iwant) mismatch(red_name[o], t, n, 0, bits32(out.host, 1), iwant, 0);
                continue;
            }
            got = get(out.host, t, 1);
            if (o == R_NORM2) { want = sqrt(want); mag = want; }
            expect_close(red_name[o], t, n, 0, got, want,
                         8 * (log2((double)n + 1) + 64) * (t == F32 ? 5.96e-8 : 1.11e-16) * mag);
        }
    arr_free(&x); arr_free(&y); arr_free(&out);
}

static int test_reductions_match_float64(void) {
    int o, t;
    mismatches = 0;
    for (o = 0; o < NRED; o++)
        for (t = F32; t <= U32; t++)
            if (t <= F64 || (o != R_DOT && o != R_NORM2)) check_reduce((red)o, (ty)t);
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* The same input gives the same bits, run after run and on another stream. */
static int test_reductions_are_deterministic(void) {
    const size_t n = sizes[NSIZES - 1];
    arr x = arr_new(F32), out = arr_new(F32);
    gpuk_stream other;
    float first = 0, again = 0;
    int k;
    CHECK_OK(gpuk_stream_create(ctx, NULL, &other));
    fill_random(x.host, F32, MAXN + 2 * PAD, -1, 1);
    upload(&x);
    for (k = 0; k < 20; k++) {
        CHECK_OK(gpuk_sum_f32(ctx, k % 2 ? other : S, view(&out, 0), view(&x, 1), n));
        CHECK_OK(gpuk_stream_sync(ctx, k % 2 ? other : S));
        CHECK_OK(gpuk_buffer_read(ctx, out.buf, 0, k ? &again : &first, sizeof first));
        if (k) CHECK(memcmp(&first, &again, sizeof first) == 0);
    }
    CHECK_OK(gpuk_stream_destroy(ctx, other));
    arr_free(&x); arr_free(&out);
    return TEST_PASS;
}

/* argmin/argmax skip NaN; an all-NaN input gives index 0 (the first NaN, as NumPy), never an
   out-of-range index; a NaN before the extreme element does not hide it. */
static int test_argmin_argmax_with_nan(void) {
    const size_t n = 5000;
    arr x = arr_new(F64), xf = arr_new(F32), out = arr_new(F64);
    uint64_t idx[4];
    size_t i;
    int pass;
    for (pass = 0; pass < 2; pass++) { /* 0: all NaN; 1: NaN first, extremes at 1234 and 4321 */
        for (i = 0; i < n; i++) {
            double v = pass && i % 7 != 0 ? uniform(-10, 10) : NAN;
            if (pass && i == 1234) v = -100;
            if (pass && i == 4321) v = 100;
            ((double*)x.host)[i] = v;
            ((float*)xf.host)[i] = (float)v;
        }
        upload(&x);
        upload(&xf);
        poison(&out);
        CHECK_OK(gpuk_argmin_f64(ctx, S, view(&out, 0), view(&x, 0), n));
        CHECK_OK(gpuk_argmax_f64(ctx, S, view(&out, 1), view(&x, 0), n));
        CHECK_OK(gpuk_argmin_f32(ctx, S, view(&out, 2), view(&xf, 0), n));
        CHECK_OK(gpuk_argmax_f32(ctx, S, view(&out, 3), view(&xf, 0), n));
        CHECK_OK(gpuk_buffer_read(ctx, out.buf, 0, idx, sizeof idx));
        if (pass == 0) CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 0 && idx[3] == 0);
        else CHECK(idx[0] == 1234 && idx[1] == 4321 && idx[2] == 1234 && idx[3] == 4321);
        if (check_failures) fprintf(stderr, "  pass %d: %llu %llu %llu %llu\n", pass, (unsigned long long)idx[0],
                                    (unsigned long long)idx[1], (unsigned long long)idx[2], (unsigned long long)idx[3]);
    }
    arr_free(&x); arr_free(&xf); arr_free(&out);
    return TEST_PASS;
}

/* ==== scans ==== */
static int test_scans_match_float64(void) {
    int t, excl, inplace;
    size_t si, i;
    mismatches = 0;
    for (t = F32; t <= U32; t++) {
        arr in = arr_new((ty)t), out = arr_new((ty)t);
        for (excl = 0; excl < 2; excl++)
            for (inplace = 0; inplace < 2; inplace++)
                for (si = 0; si < NSIZES; si++) {
                    /* 16-byte aligned views (the 16-byte load path) and misaligned ones */
                    size_t n = sizes[si], fi = (excl ^ inplace) ? 4 : 3, fo = inplace ? fi : (excl ? 8 : 1);
                    arr* dst = inplace ? &in : &out;
                    void* src = malloc((MAXN + 2 * PAD) * 8);
                    double run = 0, mag = 0;
                    uint32_t irun = 0;
                    gpuk_result r;
                    fill_random(in.host, (ty)t, MAXN + 2 * PAD, t >= I32 ? 0 : -10, t >= I32 ? 0 : 10);
                    memcpy(src, in.host, (MAXN + 2 * PAD) * tsize((ty)t));
                    upload(&in);
                    if (!inplace) poison(&out);
                    if (excl) r = TYPED4(gpuk_scan_exclusive, (ty)t, ctx, S, view(dst, fo), view(&in, fi), n);
                    else r = TYPED4(gpuk_scan_inclusive, (ty)t, ctx, S, view(dst, fo), view(&in, fi), n);
                    CHECK_OK(r);
                    download(dst);
                    for (i = 0; i < n; i++) {
                        double v = get(src, (ty)t, fi + i);
                        uint32_t w = bits32(src, fi + i);
                        if (!excl) { run += v; mag += fabs(v); irun += w; }
                        if (t >= I32) {
                            if (bits32(dst->host, fo + i) != irun) mismatch(excl ? "scan_exclusive" : "scan_inclusive", (ty)t, n, i, bits32(dst->host, fo + i), irun, 0);
                        } else {
                            /* sequential over tiles: tolerance 4 (tiles + 64) eps sum|x| so far */
                            double tol = 4 * ((double)i / 2048 + 64) * (t == F32 ? 5.96e-8 : 1.11e-16) * mag;
                            expect_close(excl ? "scan_exclusive" : "scan_inclusive", (ty)t, n, i, get(dst->host, (ty)t, fo + i), run, tol);
                        }
                        if (excl) { run += v; mag += fabs(v); irun += w; }
                    }
                    if (!inplace) expect_untouched("scan", &out, fo, n);
                    free(src);
                }
        arr_free(&in); arr_free(&out);
    }
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* A scan with more tiles than the stream's scratch holds (after smaller reductions and scans
   made it) regrows the scratch, waiting for the stream first; the result stays exact. */
static int test_scan_after_scratch_regrowth(void) {
    const size_t n = (size_t)9000 * 8192 + 5; /* 9001 tiles: past the first scratch's 8191 */
    uint32_t* host = (uint32_t*)malloc(n * 4);
    uint32_t* got = (uint32_t*)malloc(n * 4);
    gpuk_buffer b;
    gpuk_stream s;
    uint32_t run = 0;
    size_t i, bad = 0;
    if (getenv("GPUK_TEST_QUICK")) { free(host); free(got); return TEST_SKIP; }
    for (i = 0; i < n; i++) host[i] = (uint32_t)rng();
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4 }, &b));
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, host, n * 4));
    CHECK_OK(gpuk_sum_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 1), 1000)); /* scratch at its first size */
    CHECK_OK(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 1), gpuk_at(b, 1), 100000));
    CHECK_OK(gpuk_buffer_write_async(ctx, s, b, 0, host, n * 4));
    CHECK_OK(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), n));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, got, n * 4));
    for (i = 0; i < n; i++) { run += host[i]; bad += got[i] != run; }
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    free(host); free(got);
    return TEST_PASS;
}

/* Scans keep their epoch in device memory and step it themselves (graph replays need that):
   started 3 launches before the 30-bit wrap, six scans of mixed lengths on one stream stay
   exact across it, and the epoch word afterwards says six launches happened. Then a long
   scan leaves status flags in 513 tiles; short scans (one tile) clear 256 words past their end
   each launch at a walking cursor, so after capacity / 256 + 1 of them no stale flag remains. */
static int test_scan_epoch_wrap_and_stale_flag_sweep(void) {
    const size_t big = (size_t)512 * 8192 + 77, sizes6[6] = { 1000, (size_t)1 << 20, 8192, 5, 300001, big };
    uint32_t* host = (uint32_t*)malloc(big * 4);
    uint32_t* got = (uint32_t*)malloc(big * 4);
    uint64_t word, *status;
    gpuk_buffer b, scratch;
    gpuk_stream s;
    const gpuk__scratch* sc;
    size_t k, i, bad = 0, stale = 0, launches;
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = big * 4 }, &b));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, big));
    sc = &gpuk__builtin_of(ctx)->scratch[gpuk__stream_slot_of(ctx, s)];
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sc->bytes, .wrap = sc->ptr }, &scratch));
    word = (uint64_t)(0x3FFFFFFFu - 2) << 32; /* no tiles drawn; epoch 3 short of the wrap */
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_write(ctx, scratch, GPUK__SCRATCH_SCAN, &word, 8));
    for (k = 0; k < 6; k++) {
        uint32_t run = 0;
        size_t n = sizes6[k];
        for (i = 0; i < n; i++) host[i] = (uint32_t)rng();
        CHECK_OK(gpuk_buffer_write(ctx, b, 0, host, n * 4));
        CHECK_OK(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), n));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        CHECK_OK(gpuk_buffer_read(ctx, b, 0, got, n * 4));
        for (i = 0; i < n; i++) { run += host[i]; bad += got[i] != run; }
    }
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_read(ctx, scratch, GPUK__SCRATCH_SCAN, &word, 8));
    CHECK(word == (uint64_t)3 << 32); /* 0x3FFFFFFD + 6, modulo 2^30; the count back at 0 */
    /* the last scan above (513 tiles) left flags in words 0..512: sweep them away */
    launches = sc->scan_tiles / 256 + 2;
    for (k = 0; k < launches; k++) CHECK_OK(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), 1000));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    status = (uint64_t*)malloc(sc->scan_tiles * GPUK__SCAN_STATUS_BYTES);
    CHECK_OK(gpuk_buffer_read(ctx, scratch, GPUK__SCRATCH_SCAN + 16, status,
                              sc->scan_tiles * GPUK__SCAN_STATUS_BYTES));
    for (i = 1; i < sc->scan_tiles; i++) stale += status[i * (GPUK__SCAN_STATUS_BYTES / 8)] != 0;
    CHECK(stale == 0);
    CHECK(status[0] != 0); /* the short scans' own tile */
    if (bad || stale) fprintf(stderr, "  %zu wrong prefix sums, %zu stale status words\n", bad, stale);
    CHECK_OK(gpuk_buffer_destroy(ctx, scratch));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    free(host); free(got); free(status);
    return TEST_PASS;
}

/* ==== transpose ==== */
static int test_transpose_is_exact(void) {
    static const size_t shapes[][2] = { { 0, 5 }, { 1, 1 }, { 1, 1025 }, { 1025, 1 }, { 31, 33 }, { 32, 32 },
                                        { 33, 1023 }, { 1023, 1025 } };
    size_t k, r, c;
    int t;
    mismatches = 0;
    for (t = F32; t <= F64; t++) {
        arr in = arr_new((ty)t), out = arr_new((ty)t);
        for (k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            size_t rows = shapes[k][0], cols = shapes[k][1];
            fill_random(in.host, (ty)t, MAXN + 2 * PAD, -1e3, 1e3);
            upload(&in);
            poison(&out);
            CHECK_OK(TYPED2(gpuk_transpose, (ty)t, ctx, S, view(&out, 1), view(&in, 2), rows, cols));
            download(&out);
            for (r = 0; r < rows; r++)
                for (c = 0; c < cols; c++)
                    if (memcmp((char*)out.host + (1 + c * rows + r) * tsize((ty)t),
                               (char*)in.host + (2 + r * cols + c) * tsize((ty)t), tsize((ty)t)))
                        mismatch("transpose", (ty)t, rows * cols, c * rows + r, get(out.host, (ty)t, 1 + c * rows + r),
                                 get(in.host, (ty)t, 2 + r * cols + c), 0);
            expect_untouched("transpose", &out, 1, rows * cols);
        }
        arr_free(&in); arr_free(&out);
    }
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* ==== histograms ==== */
static void check_histogram(int is_u8, size_t n, size_t first, uint32_t nbins, int64_t lo, int64_t hi) {
    size_t bytes = (n + first + 16) * (is_u8 ? 1 : 4), i;
    unsigned char* host = (unsigned char*)malloc(bytes);
    uint64_t* want = (uint64_t*)calloc(nbins, 8);
    uint64_t* got = (uint64_t*)malloc((size_t)nbins * 8);
    gpuk_buffer in, counts;
    for (i = 0; i + 8 <= bytes; i += 8) { uint64_t v = rng(); memcpy(host + i, &v, 8); }
    for (; i < bytes; i++) host[i] = (unsigned char)rng();
    if (!is_u8) /* i32 values spread over twice the range so some fall outside */
        for (i = 0; i < n + first; i++) {
            int32_t v = (int32_t)((int64_t)(rng() % (uint64_t)(2 * (hi - lo))) + lo - (hi - lo) / 2);
            memcpy(host + 4 * i, &v, 4);
        }
    for (i = 0; i < n; i++) {
        int64_t v;
        if (is_u8) v = host[first + i];
        else { int32_t w; memcpy(&w, host + 4 * (first + i), 4); v = w; }
        if (v >= lo && v < hi) want[(uint64_t)(v - lo) * nbins / (uint64_t)(hi - lo)]++;
    }
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &in));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (size_t)nbins * 8 + 8 }, &counts));
    CHECK_OK(gpuk_buffer_write(ctx, in, 0, host, bytes));
    CHECK_OK(gpuk_buffer_memset(ctx, S, counts, 0, 0xFFFFFFFFu, 4, nbins * 2 + 2)); /* poison */
    if (is_u8) CHECK_OK(gpuk_histogram_u8(ctx, S, gpuk_at(counts, 1), nbins, lo, hi, gpuk_at(in, first), n));
    else CHECK_OK(gpuk_histogram_i32(ctx, S, gpuk_at(counts, 1), nbins, lo, hi, gpuk_at(in, first), n));
    CHECK_OK(gpuk_buffer_read(ctx, counts, 8, got, (size_t)nbins * 8));
    for (i = 0; i < nbins; i++)
        if (got[i] != want[i]) { mismatch(is_u8 ? "histogram_u8" : "histogram_i32", U32, n, i, (double)got[i], (double)want[i], 0); break; }
    CHECK_OK(gpuk_buffer_destroy(ctx, in));
    CHECK_OK(gpuk_buffer_destroy(ctx, counts));
    free(host); free(want); free(got);
}

static int test_histograms_count_exactly(void) {
    size_t si;
    mismatches = 0;
    for (si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        check_histogram(1, n, 0, 256, 0, 256);       /* one bin per byte, per-warp shared counts */
        check_histogram(1, n, 2, 64, 0, 512);        /* every byte in range, bins 8 wide: a shift */
        check_histogram(1, n, 2, 16, 64, 128);       /* bins 4 wide from 64: subtract, test, shift */
        check_histogram(1, n, 5, 7, 10, 200);        /* uneven bins, values outside the range */
        check_histogram(1, n, 3, 3000, 0, 256);      /* more bins than fit shared memory: global */
        check_histogram(0, n, 1, 100, -1000, 1000);
        check_histogram(0, n, 2, 5000, -50000, 50000);
    }
    CHECK(mismatches == 0);
    return TEST_PASS;
}

static int test_histogram_above_2_to_31_bytes(void) {
    size_t free_b = 0;
    if (getenv("GPUK_TEST_QUICK")) return TEST_SKIP;
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_b, NULL));
    if (free_b < ((size_t)5 << 30)) return TEST_SKIP;
    mismatches = 0;
    check_histogram(1, ((size_t)1 << 31) + 4099, 1, 256, 0, 256);
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* ==== Philox random numbers ==== */
static void philox(uint64_t counter, uint64_t seed, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    int r;
    for (r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* The Random123 known-answer vector for Philox4x32-10 with counter and key zero pins the CPU
   reference itself. */
static int test_philox_reference_matches_published_vector(void) {
    uint32_t w[4];
    philox(0, 0, w);
    CHECK(w[0] == 0x6627e8d5u && w[1] == 0xe169c58du && w[2] == 0xbc57ac4cu && w[3] == 0x9b00dbd8u);
    return TEST_PASS;
}

static double ref_random(int normal, ty t, uint64_t seed, uint64_t e) {
    uint32_t w[4];
    if (t == F32) {
        philox(e / 4, seed, w);
        if (!normal) return (float)(w[e % 4] >> 8) * 5.9604644775390625e-8f;
        {
            int k = (int)(e % 4) & ~1;
            double u1 = 1.0 - (double)(w[k] >> 8) * 5.9604644775390625e-8, u2 = (double)(w[k + 1] >> 8) * 5.9604644775390625e-8;
            double rad = sqrt(-2 * log(u1));
            return e % 2 ? rad * sin(2 * M_PI * u2) : rad * cos(2 * M_PI * u2);
        }
    } else {
        double u1, u2;
        philox(e / 2, seed, w);
        u1 = ((double)(w[0] >> 5) * 67108864.0 + (double)(w[1] >> 6)) * 1.1102230246251565e-16;
        u2 = ((double)(w[2] >> 5) * 67108864.0 + (double)(w[3] >> 6)) * 1.1102230246251565e-16;
        if (!normal) return e % 2 ? u2 : u1;
        return e % 2 ? sqrt(-2 * log(1 - u1)) * sin(2 * M_PI * u2) : sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
    }
}

/* Uniform: bit for bit. Normal: within 1e-5 (f32) or 1e-12 (f64) of float64 Box-Muller on the
   same uniforms, times (1 + |value|). Offsets continue the same stream of numbers. */
static int test_random_matches_cpu_philox(void) {
    const uint64_t seed = rng();
    size_t si, i;
    int t, normal;
    mismatches = 0;
    for (t = F32; t <= F64; t++) {
        arr out = arr_new((ty)t);
        for (normal = 0; normal < 2; normal++)
            for (si = 0; si < NSIZES; si++) {
                size_t n = sizes[si];
                /* offset 0 at the buffer's start: whole blocks aligned, 16-byte stores; 5 one
                   element in: aligned too; 2^32 + 3 one element in: never aligned */
                const uint64_t offset = si % 3 == 0 ? 0 : si % 3 == 1 ? 5 : 0x100000003ull;
                const size_t first = si % 3 == 0 ? 0 : 1;
                double mean = 0;
                poison(&out);
                if (normal) CHECK_OK(TYPED2(gpuk_random_normal, (ty)t, ctx, S, view(&out, first), n, seed, offset));
                else CHECK_OK(TYPED2(gpuk_random_uniform, (ty)t, ctx, S, view(&out, first), n, seed, offset));
                download(&out);
                for (i = 0; i < n; i++) {
                    double got = get(out.host, (ty)t, first + i), want = ref_random(normal, (ty)t, seed, offset + i);
                    expect_close(normal ? "random_normal" : "random_uniform", (ty)t, n, i, got, want,
                                 normal ? (t == F32 ? 1e-5 : 1e-12) * (1 + fabs(want)) : 0);
                    mean += got;
                }
                if (n > 100000) CHECK(fabs(mean / (double)n - (normal ? 0.0 : 0.5)) < 0.01);
                expect_untouched("random", &out, first, n);
            }
        arr_free(&out);
    }
    CHECK(mismatches == 0);
    return TEST_PASS;
}

/* ==== loading ==== */
/* Each kernel's PTX is loaded on first use only: a fresh ctx after one kernel has one module. */
static int test_kernels_load_lazily(void) {
    gpuk_ctx* c2 = NULL;
    gpuk_buffer b;
    CHECK_OK(gpuk_ctx_destroy(ctx));
    CHECK_OK(gpuk_ctx_create(NULL, &c2));
    CHECK(gpuk_kernels_loaded(c2) == 0);
    CHECK_OK(gpuk_buffer_create(c2, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    CHECK_OK(gpuk_fill_f32(c2, S, gpuk_at(b, 0), 16, 1.0f));
    CHECK(gpuk_kernels_loaded(c2) == 1);
    CHECK_OK(gpuk_fill_f32(c2, S, gpuk_at(b, 0), 16, 2.0f));
    CHECK_OK(gpuk_sum_f32(c2, S, gpuk_at(b, 0), gpuk_at(b, 1), 15));
    CHECK(gpuk_kernels_loaded(c2) == 2);
    CHECK_OK(gpuk_ctx_sync(c2));
    ctx = c2;
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (getenv("GPUK_TEST_QUICK")) sizes[NSIZES - 1] = 20011;
    if (!gpu_setup("gpu_kernels", 15, &ctx, &code)) return code;
    RUN(test_kernels_load_lazily);
    RUN(test_elementwise_ops_match_float64);
    RUN(test_iota_linspace_and_strided_copy);
    RUN(test_reductions_match_float64);
    RUN(test_reductions_are_deterministic);
    RUN(test_argmin_argmax_with_nan);
    RUN(test_scans_match_float64);
    RUN(test_scan_after_scratch_regrowth);
    RUN(test_scan_epoch_wrap_and_stale_flag_sweep);
    RUN(test_transpose_is_exact);
    RUN(test_histograms_count_exactly);
    RUN(test_histogram_above_2_to_31_bytes);
    RUN(test_philox_reference_matches_published_vector);
    RUN(test_random_matches_cpu_philox);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
