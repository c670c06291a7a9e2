/* tests/gpu/gpu_reduce_axis.c - reductions along an axis of a 2-D view (gpuk_sum_rows_f32,
   gpuk_argmax_cols_f64, ...) on the GPU against the CPU: sums against float64 sums within
   rounding, min/max/argmin/argmax exactly (ties to the first index, NaN never wins, an all-NaN
   row or column gives index 0), on fresh random inputs of every launch shape the host picks:
   short and long rows (rows in pieces), wide and tall views (columns in chunks), unaligned
   and strided views, one element, and empty views; tall views of short rows (64, 63, 6, 4
   and 1 columns, aligned or not) for several turns of the short rows' loop; the bench's calls
   at its shapes (8192 x 8192, 64 x 2^22, 2^22 x 64). Outputs are poisoned first, and the
   element after the last result must keep its poison. The same input twice gives the same
   bits. GPUK_TEST_QUICK=1 (the sanitizer runs): the tall short-row views cut to 3001 rows, the
   bench's shapes to smaller ones that take the same launch paths.
   cc -std=c99 -I../.. gpu_reduce_axis.c -ldl -lpthread -lm */
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

/* A view: rows x cols from element first, row_stride (0: cols). */
typedef struct shape { size_t rows, cols, stride, first; } shape;
static shape shapes[] = {
    { 1, 1, 0, 0 },        /* one element */
    { 1, 1000, 0, 0 },     /* one row */
    { 1000, 1, 0, 0 },     /* one column */
    { 37, 513, 515, 3 },   /* odd, strided, unaligned: narrow columns, rows from unaligned */
    { 300, 64, 0, 0 },     /* short rows: several rows a warp */
    { 16, 1 << 19, 0, 0 }, /* long rows, few: each in pieces */
    { 1 << 17, 40, 0, 0 }, /* tall and thin: columns in chunks */
    { 1 << 16, 17, 19, 1 },/* tall, narrow columns, unaligned */
    { 1000, 3000, 3001, 0 },
    /* tall and thin, short rows (SHORT_FIRST on): rows enough for several turns of every
       group's loop and a part turn (16 lanes a row: 16896 groups on 132 SMs) */
    { 150001, 64, 0, 0 },  /* 16-byte aligned rows, whole packs */
    { 150001, 63, 0, 0 },  /* rows from every alignment: heads and tails */
    { 150001, 64, 67, 1 }, /* strided, unaligned */
    { 150001, 64, 68, 4 }, /* strided, aligned */
    { 300001, 4, 0, 0 },   /* a pack a row (f32) */
    { 300001, 1, 0, 0 },   /* an element a row */
    { 300001, 6, 0, 2 },   /* a pack and a bit, unaligned */
};
enum { SHORT_FIRST = 9 };
enum { SHAPES = sizeof shapes / sizeof shapes[0] };
static size_t stride_of(const shape* s) { return s->stride ? s->stride : s->cols; }
static size_t elems_of(const shape* s) {
    return s->rows ? s->first + (s->rows - 1) * stride_of(s) + s->cols : s->first;
}

/* The input as doubles: random in [-1, 1), or (ties) small integers, with NaN sprinkled in
   where asked; row 0 all NaN where asked (nan_row). */
static void fill(double* x, size_t n, int ties, int nans) {
    size_t i;
    for (i = 0; i < n; i++) {
        x[i] = ties ? (double)(int)(uniform(0, 7)) - 3.0 : uniform(-1, 1);
        if (nans && rng() % 50 == 0) x[i] = NAN;
    }
}

/* The CPU's answer for result j of op on axis (0 rows, 1 columns): sum in double; min/max
   skipping NaN (+inf / -inf when all are NaN); arg the first extreme's index, 0 when all are
   NaN. abs_sum: the sum of magnitudes (the sum's rounding scale). */
enum { SUM, MIN, MAX, ARGMIN, ARGMAX, OPS };
static const char* const op_name[OPS] = { "sum", "min", "max", "argmin", "argmax" };
static double cpu(const double* x, const shape* s, int axis, int op, size_t j, double* abs_sum) {
    const size_t n = axis ? s->rows : s->cols, ld = stride_of(s);
    double acc = op == SUM ? 0.0 : op == MIN || op == ARGMIN ? INFINITY : -INFINITY;
    size_t i, at = (size_t)-1;
    *abs_sum = 0;
    for (i = 0; i < n; i++) {
        const double v = axis ? x[s->first + i * ld + j] : x[s->first + j * ld + i];
        if (op == SUM) {
            acc += v;
            *abs_sum += fabs(v);
        } else if (v == v && ((op == MIN || op == ARGMIN) ? v < acc : v > acc)) {
            acc = v;
            at = i;
        } else if (v == v && v == acc && at == (size_t)-1) {
            at = i; /* an infinite first extreme */
        }
    }
    if (op == ARGMIN || op == ARGMAX) return at == (size_t)-1 ? 0.0 : (double)at;
    return acc;
}

typedef gpuk_result (*axis_fn)(gpuk_ctx*, gpuk_stream, gpuk_array, gpuk_array2d);
static axis_fn fn_of(int f64, int axis, int op) {
    static const axis_fn t[2][2][OPS] = {
        { { gpuk_sum_rows_f32, gpuk_min_rows_f32, gpuk_max_rows_f32, gpuk_argmin_rows_f32,
            gpuk_argmax_rows_f32 },
          { gpuk_sum_cols_f32, gpuk_min_cols_f32, gpuk_max_cols_f32, gpuk_argmin_cols_f32,
            gpuk_argmax_cols_f32 } },
        { { gpuk_sum_rows_f64, gpuk_min_rows_f64, gpuk_max_rows_f64, gpuk_argmin_rows_f64,
            gpuk_argmax_rows_f64 },
          { gpuk_sum_cols_f64, gpuk_min_cols_f64, gpuk_max_cols_f64, gpuk_argmin_cols_f64,
            gpuk_argmax_cols_f64 } } };
    return t[f64][axis][op];
}

/* Runs op on axis over s for one input (uploaded as f32 or f64) and checks every result and the
   poisoned element after them; returns the number of wrong results. bits: the raw results. */
static size_t run_one(const double* x, const shape* s, int f64, int axis, int op,
                      gpuk_buffer in, gpuk_buffer out, unsigned char* bits) {
    const size_t results = axis ? s->cols : s->rows, elem = f64 ? 8 : 4;
    const size_t out_elem = op >= ARGMIN ? 8 : elem, n = elems_of(s);
    unsigned char* host = malloc((results + 1) * out_elem + 1);
    size_t j, wrong = 0;
    gpuk_result r;
    CHECK(host != NULL);
    if (!host) return results + 1;
    memset(host, 0xA5, (results + 1) * out_elem); /* poison */
    CHECK_OK(gpuk_buffer_write(ctx, out, 0, host, (results + 1) * out_elem));
    r = fn_of(f64, axis, op)(ctx, S, gpuk_at(out, 0),
                             gpuk_at2d(in, s->first, s->rows, s->cols, s->stride));
    if (r != GPUK_OK) {
        printf("     %s_%s_%s %zu x %zu: %s\n", op_name[op], axis ? "cols" : "rows",
               f64 ? "f64" : "f32", s->rows, s->cols, gpuk_last_error());
        free(host);
        return results + 1;
    }
    CHECK_OK(gpuk_buffer_read(ctx, out, 0, host, (results + 1) * out_elem));
    if (bits) memcpy(bits, host, results * out_elem);
    for (j = 0; j < results; j++) {
        double abs_sum, want = cpu(x, s, axis, op, j, &abs_sum), got;
        int ok;
        if (op >= ARGMIN) {
            uint64_t u;
            memcpy(&u, host + j * 8, 8);
            got = (double)u;
            ok = got == want;
        } else {
            if (f64) memcpy(&got, host + j * 8, 8);
            else {
                float g;
                memcpy(&g, host + j * 4, 4);
                got = g;
            }
            if (op == SUM) /* float32: each add rounds; the order differs from the CPU's */
                ok = fabs(got - want) <= (f64 ? 1e-13 : 2e-6) * (abs_sum + 1.0) *
                     (1.0 + log2((double)(axis ? s->rows : s->cols) + 1.0));
            else
                ok = got == (f64 ? want : (double)(float)want) || (isnan(got) && isnan(want));
        }
        if (!ok && wrong++ < 3)
            printf("     %s_%s_%s %zu x %zu (stride %zu, first %zu): result %zu is %.17g, the CPU "
                   "says %.17g\n", op_name[op], axis ? "cols" : "rows", f64 ? "f64" : "f32",
                   s->rows, s->cols, stride_of(s), s->first, j, got, want);
    }
    for (j = 0; j < out_elem; j++)
        if (host[results * out_elem + j] != 0xA5) {
            printf("     %s: wrote past its %zu results\n", op_name[op], results);
            wrong++;
            break;
        }
    (void)n;
    free(host);
    return wrong;
}

/* Every op, both axes, both types, every shape; ties inputs for the arg ops, NaN in some. */
static int check_all(int ties, int nans) {
    size_t s, wrong = 0;
    int f64, axis, op;
    for (s = 0; s < SHAPES; s++) {
        const shape* sh = &shapes[s];
        const size_t n = elems_of(sh);
        double* x = malloc(n * sizeof *x);
        void* up = malloc(n * 8);
        size_t i, results_most = sh->rows > sh->cols ? sh->rows : sh->cols;
        gpuk_buffer in, out;
        fill(x, n, ties, nans);
        if (nans && sh->rows > 1 && sh->cols > 1) /* an all-NaN row and column */
            for (i = 0; i < sh->cols; i++) x[sh->first + i] = NAN;
        if (nans && sh->rows > 1 && sh->cols > 1)
            for (i = 0; i < sh->rows; i++) x[sh->first + i * stride_of(sh)] = NAN;
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 8 }, &in));
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (results_most + 1) * 8 },
                                    &out));
        for (f64 = 0; f64 < 2; f64++) {
            for (i = 0; i < n; i++) {
                if (f64) ((double*)up)[i] = x[i];
                else ((float*)up)[i] = (float)x[i];
            }
            if (!f64) /* the CPU sees what the GPU sees */
                for (i = 0; i < n; i++) x[i] = (double)((float*)up)[i];
            CHECK_OK(gpuk_buffer_write(ctx, in, 0, up, n * (f64 ? 8 : 4)));
            for (axis = 0; axis < 2; axis++)
                for (op = ties || nans ? MIN : SUM; op < OPS; op++)
                    wrong += run_one(x, sh, f64, axis, op, in, out, NULL);
        }
        CHECK_OK(gpuk_buffer_destroy(ctx, in));
        CHECK_OK(gpuk_buffer_destroy(ctx, out));
        free(x);
        free(up);
    }
    CHECK(wrong == 0);
    return TEST_PASS;
}

static int test_every_shape_matches_the_cpu(void) { return check_all(0, 0); }
static int test_ties_give_the_first_index(void) { return check_all(1, 0); }
static int test_nan_never_wins(void) { return check_all(0, 1); }

/* The same input twice: the same bits (shapes with pieces and chunks, and short rows). */
static int test_the_bits_repeat(void) {
    static const size_t which[] = { 5, 6, 8, SHORT_FIRST, SHORT_FIRST + 1 };
    size_t w;
    for (w = 0; w < sizeof which / sizeof which[0]; w++) {
        const shape* sh = &shapes[which[w]];
        const size_t n = elems_of(sh), results = sh->rows > sh->cols ? sh->rows : sh->cols;
        double* x = malloc(n * sizeof *x);
        float* up = malloc(n * sizeof *up);
        unsigned char *a = malloc(results * 8), *b = malloc(results * 8);
        gpuk_buffer in, out;
        int axis;
        size_t i;
        fill(x, n, 0, 0);
        for (i = 0; i < n; i++) x[i] = up[i] = (float)x[i];
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { up, n * 4 } }, &in));
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (results + 1) * 8 }, &out));
        for (axis = 0; axis < 2; axis++) {
            const size_t k = axis ? sh->cols : sh->rows;
            CHECK(run_one(x, sh, 0, axis, SUM, in, out, a) == 0);
            CHECK(run_one(x, sh, 0, axis, SUM, in, out, b) == 0);
            CHECK(memcmp(a, b, k * 4) == 0);
        }
        CHECK_OK(gpuk_buffer_destroy(ctx, in));
        CHECK_OK(gpuk_buffer_destroy(ctx, out));
        free(x); free(up); free(a); free(b);
    }
    return TEST_PASS;
}

/* The bench's calls at its shapes (bench/bench_kernels.c, axis_line): views from element 0 of
   one buffer, rows packed; mixed signs so that the sums cancel. Rows of 8192 whole (too many
   for pieces), of 2^22 in pieces, of 64 in the packed kernel; columns of 8192 and 2^22 rows in
   chunks (2^22: the most chunks), of 64 rows in none. Quick: shapes that keep those paths on
   132 multiprocessors (64 x 2^18 is the least power of two wide enough for no chunks). */
static int test_the_bench_shapes(void) {
    static const struct { size_t rows, cols, quick_rows, quick_cols; int axis, op; } call[] = {
        { 8192, 8192, 512, 512, 0, SUM },
        { 64, (size_t)1 << 22, 64, (size_t)1 << 18, 0, SUM },
        { (size_t)1 << 22, 64, (size_t)1 << 17, 64, 0, SUM },
        { 8192, 8192, 512, 512, 1, SUM },
        { 64, (size_t)1 << 22, 64, (size_t)1 << 18, 1, SUM },
        { (size_t)1 << 22, 64, (size_t)1 << 17, 64, 1, SUM },
        { 8192, 8192, 512, 512, 0, ARGMAX },
        { 8192, 8192, 512, 512, 1, MAX },
    };
    enum { CALLS = sizeof call / sizeof call[0] };
    const int quick = getenv("GPUK_TEST_QUICK") != NULL;
    const size_t n = quick ? (size_t)1 << 24 : (size_t)1 << 28, results_most = (size_t)1 << 22;
    double* x = malloc(n * sizeof *x);
    float* up = malloc(n * sizeof *up);
    size_t c, i, wrong = 0;
    gpuk_buffer in, out;
    CHECK(x != NULL && up != NULL);
    if (!x || !up) {
        free(x);
        free(up);
        return TEST_PASS;
    }
    fill(x, n, 0, 0);
    for (i = 0; i < n; i++) x[i] = up[i] = (float)x[i]; /* the CPU sees what the GPU sees */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { up, n * 4 } }, &in));
    free(up);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (results_most + 1) * 8 },
                                &out));
    for (c = 0; c < CALLS; c++) {
        const shape s = { quick ? call[c].quick_rows : call[c].rows,
                          quick ? call[c].quick_cols : call[c].cols, 0, 0 };
        wrong += run_one(x, &s, 0, call[c].axis, call[c].op, in, out, NULL);
    }
    CHECK_OK(gpuk_buffer_destroy(ctx, in));
    CHECK_OK(gpuk_buffer_destroy(ctx, out));
    free(x);
    CHECK(wrong == 0);
    return TEST_PASS;
}

/* Empty views: sums of no elements are 0 (and written); min/max of none refused; no results,
   no launch. */
static int test_empty_views(void) {
    gpuk_buffer in, out;
    float got[4] = { -1, -1, -1, -1 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &in));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { got, sizeof got } }, &out));
    CHECK_OK(gpuk_sum_rows_f32(ctx, S, gpuk_at(out, 0), gpuk_at2d(in, 0, 3, 0, 0)));
    CHECK_OK(gpuk_buffer_read(ctx, out, 0, got, sizeof got));
    CHECK(got[0] == 0 && got[1] == 0 && got[2] == 0 && got[3] == -1);
    CHECK_RESULT(gpuk_min_rows_f32(ctx, S, gpuk_at(out, 0), gpuk_at2d(in, 0, 3, 0, 0)),
                 GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_argmax_cols_f32(ctx, S, gpuk_at(out, 0), gpuk_at2d(in, 0, 5, 0, 0)));
    CHECK_OK(gpuk_buffer_destroy(ctx, in));
    CHECK_OK(gpuk_buffer_destroy(ctx, out));
    return TEST_PASS;
}

#define NTESTS 6
int main(void) {
    int rc;
    rng_seed_from_clock();
    if (getenv("GPUK_TEST_QUICK")) {
        size_t i;
        for (i = SHORT_FIRST; i < SHAPES; i++) shapes[i].rows = 3001;
    }
    if (!gpu_setup("gpu_reduce_axis", NTESTS, &ctx, &rc)) return rc;
    RUN(test_every_shape_matches_the_cpu);
    RUN(test_ties_give_the_first_index);
    RUN(test_nan_never_wins);
    RUN(test_the_bits_repeat);
    RUN(test_the_bench_shapes);
    RUN(test_empty_views);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
