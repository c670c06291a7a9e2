/* tests/gpu/gpu_gemm.c - gpuk_gemm_f32/f64 (C = alpha op(A) op(B) + beta C, row-major views) on a
   real GPU against a CPU reference computed in double (blocked, on every core), on fresh random
   inputs uniform in [-1, 1), for all four transpose combinations of every shape. Skipped where
   no driver or GPU exists.
   Before every run C's whole buffer is poisoned (0xFF bytes: NaN); with beta != 0 C's view then
   gets random values (the call must read them), with beta = 0 it stays NaN (C must not be read:
   no NaN may survive). Afterwards every element of C's buffer outside the view (before it,
   between rows where row_stride > cols, after it) must still be 0xFF bytes. A's and B's
   buffers hold NaN everywhere outside their views, so a kernel that lets an element outside a
   view into a result fails; they end where the view ends (compute-sanitizer sees reads past).
   Tolerance, per element (stated where it is checked, in expect_gemm):
       |got - ref| <= TOL_C * (k + 2) * eps * (|alpha| sum_l |op(A)_il op(B)_lj| + |beta| |c_ij|)
   with TOL_C = 2 and eps the type's epsilon (2^-23, 2^-52): recursive summation of k products
   errs by at most k * eps/2 of that sum, the alpha and beta scalings and the final add by a few
   eps/2 more (the "+ 2"); TOL_C = 2 leaves room for the double reference's own error, which for
   f64 is as large as the kernel's. An f32 kernel computing in TF32 (10-bit mantissa) fails it.
   Shapes: m, n or k = 0 (k = 0: C = beta C, and 0 when beta = 0 over a NaN C), 1x1x1, 1x4096x1,
   4096x1x3, 2x3x4096, 17x33x65 (packed; first > 0 with row_stride > cols; odd first and odd
   row_stride), 127x129x300, alpha = 0, beta = 0, A and B in one buffer (A A^T), 1000^3 and
   1024x2048 times 2048x512 (m=1024 k=2048 n=512), all four transpose combinations each, f32 and
   f64. GPUK_TEST_QUICK=1 (for the sanitizer runs) leaves out the last two. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define TOL_C 2.0
#define PAD 8 /* elements after C's view that must stay untouched */

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };

typedef enum { F32, F64, TF32 } ty; /* TF32: f32 data, gpuk_gemm_tf32 */
static const char* const ty_name[] = { "f32", "f64", "tf32" };
static size_t tsize(ty t) { return t == F64 ? 8 : 4; }
static double eps_of(ty t) { return t == F64 ? DBL_EPSILON : FLT_EPSILON; }
/* The variant under test may take inputs as TF32 (gpuk_gemm_tf32 on sm_80 and newer, unless
   the ctx holds the kernels to an older variant), a 10-bit mantissa. The sm_80 variant rounds
   to nearest, so each input is off by at most 2^-11 of itself and each product by 2^-10 (plus
   2^-22); the sm_90a one (wgmma) hands the tensor cores the FP32 bits, which truncate: 2^-10 an
   input, 2^-9 a product. The tolerance adds tf32_tol (1.125 times that bound) times the bound
   on the sum of |products| to the FP32 one; 0 where TF32 is exact FP32. */
static double tf32_tol; /* set per ctx in main */
static double as_type(ty t, double v) { return t != F64 ? (double)(float)v : v; }
static double get(const void* p, ty t, size_t i) {
    return t != F64 ? (double)((const float*)p)[i] : ((const double*)p)[i];
}
static void put(void* p, ty t, size_t i, double v) {
    if (t != F64) ((float*)p)[i] = (float)v;
    else ((double*)p)[i] = v;
}
static double* xalloc(size_t n) { /* n doubles, zeroed; never NULL */
    double* p = (double*)calloc(n ? n : 1, sizeof(double));
    if (!p) { fprintf(stderr, "gpu_gemm: out of host memory\n"); exit(1); }
    return p;
}

/* ---- the reference: dot_ij = sum_l a_il b_lj and abs_ij = sum_l |a_il b_lj| in double ----
   i-l-j order, so the inner loop runs along rows of B and C (vectorised without reassociating
   anything), blocked so that a tile of B stays in L2, rows split over the cores. */
enum { IB = 16, LB = 128, JB = 512 };
typedef struct ref_job {
    const double *a, *b, *babs; /* m x k, k x n, |b| */
    double *dot, *abs;          /* m x n, zeroed */
    const size_t* rows;         /* the rows to compute: rows[i0..i1) */
    size_t n, k, i0, i1;
} ref_job;
static void* ref_rows(void* arg) {
    const ref_job* r = (const ref_job*)arg;
    size_t ib, jb, lb, ii, i, l, j;
    for (ib = r->i0; ib < r->i1; ib += IB)
        for (jb = 0; jb < r->n; jb += JB)
            for (lb = 0; lb < r->k; lb += LB)
                for (ii = ib; ii < r->i1 && ii < ib + IB; ii++) {
                    i = r->rows[ii];
                    double* restrict d = r->dot + i * r->n;
                    double* restrict s = r->abs + i * r->n;
                    size_t jend = jb + JB < r->n ? jb + JB : r->n;
                    for (l = lb; l < r->k && l < lb + LB; l++) {
                        const double x = r->a[i * r->k + l], ax = fabs(x);
                        const double* restrict brow = r->b + l * r->n;
                        const double* restrict arow = r->babs + l * r->n;
                        for (j = jb; j < jend; j++) {
                            d[j] += x * brow[j];
                            s[j] += ax * arow[j];
                        }
                    }
                }
    return NULL;
}
static void reference(const double* a, const double* b, const size_t* rows, size_t m, size_t n, size_t k, double* dot,
                      double* sum_abs) {
    enum { MAXT = 64 };
    pthread_t th[MAXT];
    ref_job job[MAXT];
    double* babs = xalloc(k * n);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t i, nt = cores < 1 ? 1 : cores > MAXT ? MAXT : (size_t)cores, per;
    int started[MAXT];
    for (i = 0; i < k * n; i++) babs[i] = fabs(b[i]);
    if (nt > (m + IB - 1) / IB) nt = (m + IB - 1) / IB;
    if (nt == 0) nt = 1;
    per = (m + nt - 1) / nt;
    for (i = 0; i < nt; i++) {
        job[i].a = a; job[i].b = b; job[i].babs = babs; job[i].dot = dot; job[i].abs = sum_abs;
        job[i].n = n; job[i].k = k; job[i].rows = rows;
        job[i].i0 = i * per < m ? i * per : m;
        job[i].i1 = (i + 1) * per < m ? (i + 1) * per : m;
        started[i] = i > 0 && pthread_create(&th[i], NULL, ref_rows, &job[i]) == 0;
    }
    ref_rows(&job[0]);
    for (i = 1; i < nt; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else ref_rows(&job[i]); /* no thread to be had: do its rows here */
    }
    free(babs);
}

/* ---- one problem: op(A) (m x k), op(B) (k x n), C's start, alpha, beta, and the expected C ---- */
typedef struct problem {
    ty t;
    size_t m, n, k;
    size_t* rows;             /* the rows of C checked, ascending: all, or samples of big shapes */
    size_t nrows;
    double alpha, beta;       /* rounded to t */
    double *a, *b, *c0;       /* values rounded to t */
    double *ref, *bound;      /* expected C; |alpha| sum |a b| + |beta c0| */
} problem;

static void problem_solve(problem* p) {
    size_t i, mn = p->m * p->n;
    double* dot = xalloc(mn);
    double* sum_abs = xalloc(mn);
    reference(p->a, p->b, p->rows, p->nrows, p->n, p->k, dot, sum_abs);
    for (i = 0; i < mn; i++) {
        /* beta = 0: C is not read (it holds NaN), so it must not appear in the reference */
        p->ref[i] = p->alpha * dot[i] + (p->beta != 0 ? p->beta * p->c0[i] : 0);
        p->bound[i] = fabs(p->alpha) * sum_abs[i] + fabs(p->beta) * fabs(p->c0[i]);
    }
    free(dot);
    free(sum_abs);
}

/* Big shapes check SAMPLE rows of C: a band of 32 at a random place and the last 32 (the
   partial tiles); the rest are still checked for not being NaN. */
#define SAMPLE_FROM ((size_t)1 << 32) /* m n k from which rows are sampled */
static problem problem_new(ty t, size_t m, size_t n, size_t k, double alpha, double beta) {
    problem p;
    size_t i;
    p.t = t; p.m = m; p.n = n; p.k = k;
    p.rows = (size_t*)malloc((m ? m : 1) * sizeof(size_t));
    if (!p.rows) { fprintf(stderr, "gpu_gemm: out of host memory\n"); exit(1); }
    p.nrows = 0;
    if ((double)m * n * k < (double)SAMPLE_FROM || m <= 64) {
        for (i = 0; i < m; i++) p.rows[p.nrows++] = i;
    } else {
        size_t r0 = (size_t)uniform(0, (double)(m - 64));
        for (i = r0; i < r0 + 32; i++) p.rows[p.nrows++] = i;
        for (i = m - 32; i < m; i++) p.rows[p.nrows++] = i;
    }
    p.alpha = as_type(t, alpha);
    p.beta = as_type(t, beta);
    p.a = xalloc(m * k); p.b = xalloc(k * n); p.c0 = xalloc(m * n);
    p.ref = xalloc(m * n); p.bound = xalloc(m * n);
    for (i = 0; i < m * k; i++) p.a[i] = as_type(t, uniform(-1, 1));
    for (i = 0; i < k * n; i++) p.b[i] = as_type(t, uniform(-1, 1));
    for (i = 0; i < m * n; i++) p.c0[i] = as_type(t, uniform(-1, 1));
    problem_solve(&p);
    return p;
}
static void problem_free(problem* p) { free(p->a); free(p->b); free(p->c0); free(p->ref); free(p->bound); free(p->rows); }

/* ---- views: how a matrix sits in its buffer ---- */
typedef enum { PACKED, PADDED, ODD } view_kind;
static const char* const view_name[] = { "packed", "padded", "odd" };
typedef struct placed {
    size_t rows, cols, first, stride, elems; /* elems: the buffer's length */
    size_t stride_arg;                       /* what the call gets: 0 (-> cols) when packed */
} placed;
/* PACKED: first 0, row_stride 0. PADDED: first > 0 and row_stride > cols, rows 16-byte aligned
   where cols allow. ODD: odd first and odd row_stride (salt tells A, B and C apart). */
static placed place(view_kind v, size_t rows, size_t cols, size_t salt, size_t tail) {
    placed p;
    p.rows = rows; p.cols = cols;
    p.first = v == PACKED ? 0 : v == PADDED ? 16 : 1 + 2 * salt;
    p.stride = v == PACKED ? cols : v == PADDED ? cols + 8 : cols + 3 + 2 * salt;
    if (v == ODD && p.stride % 2 == 0) p.stride++;
    p.stride_arg = v == PACKED ? 0 : p.stride;
    p.elems = p.first + (rows && cols ? (rows - 1) * p.stride + cols : 0) + tail;
    if (p.elems == 0) p.elems = 1;
    return p;
}
static size_t at(const placed* p, size_t r, size_t c) { return p->first + r * p->stride + c; }
static int in_view(const placed* p, size_t e) {
    if (e < p->first || p->rows == 0 || p->cols == 0) return 0;
    e -= p->first;
    return e / p->stride < p->rows && e % p->stride < p->cols;
}

/* Host image of a matrix buffer: NaN outside the view, the values (stored transposed when
   trans) inside. src is the op() matrix, rows_op x cols_op. */
static void* image_ab(ty t, const placed* p, const double* src, size_t cols_op, int trans) {
    void* h = malloc(p->elems * tsize(t));
    size_t r, c;
    if (!h) { fprintf(stderr, "gpu_gemm: out of host memory\n"); exit(1); }
    memset(h, 0xFF, p->elems * tsize(t));
    for (r = 0; r < p->rows; r++)
        for (c = 0; c < p->cols; c++)
            put(h, t, at(p, r, c), trans ? src[c * cols_op + r] : src[r * cols_op + c]);
    return h;
}

static gpuk_buffer upload(ty t, const void* host, size_t elems) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = elems * tsize(t), .label = "gemm" }, &b));
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, host, elems * tsize(t)));
    return b;
}

static gpuk_result call_gemm(ty t, gpuk_array2d c, double alpha, gpuk_array2d a, int ta, gpuk_array2d b, int tb,
                             double beta) {
    if (t == F32) return gpuk_gemm_f32(ctx, S, c, (float)alpha, a, (uint32_t)ta, b, (uint32_t)tb, (float)beta);
    if (t == TF32) return gpuk_gemm_tf32(ctx, S, c, (float)alpha, a, (uint32_t)ta, b, (uint32_t)tb, (float)beta);
    return gpuk_gemm_f64(ctx, S, c, alpha, a, (uint32_t)ta, b, (uint32_t)tb, beta);
}

/* C's buffer after the call against p: the view within tolerance (see the top of the file),
   everything else still 0xFF bytes. Returns the number of bad elements; prints the first few. */
static long expect_gemm(const problem* p, const placed* pc, const void* got, const char* what) {
    const unsigned char* bytes = (const unsigned char*)got;
    const double tol_scale = TOL_C * (double)(p->k + 2) * eps_of(p->t) + (p->t == TF32 ? tf32_tol : 0);
    size_t e, i, j, r, es = tsize(p->t);
    long bad = 0;
    for (i = 0; i < p->m; i++) /* rows not sampled: at least written (no NaN poison left) */
        for (j = 0; j < p->n && p->nrows < p->m; j++)
            if (isnan(get(got, p->t, at(pc, i, j))) && bad++ < 5)
                fprintf(stderr, "  %s: C[%zu][%zu] is NaN (the poison)\n", what, i, j);
    for (r = 0; r < p->nrows; r++)
        for (i = p->rows[r], j = 0; j < p->n; j++) {
            double g = get(got, p->t, at(pc, i, j)), want = p->ref[i * p->n + j];
            double tol = tol_scale * p->bound[i * p->n + j];
            if (fabs(g - want) <= tol) continue; /* NaN fails here too */
            if (bad++ < 5)
                fprintf(stderr, "  %s: C[%zu][%zu] = %.17g, want %.17g (tolerance %.3g, off by %.3g)\n", what, i,
                        j, g, want, tol, fabs(g - want));
        }
    for (e = 0; e < pc->elems; e++) {
        size_t x;
        if (in_view(pc, e)) continue;
        for (x = 0; x < es && bytes[e * es + x] == 0xFF; x++) {}
        if (x == es) continue;
        if (bad++ < 5)
            fprintf(stderr, "  %s: element %zu of C's buffer, outside the view (first %zu, row_stride %zu), "
                    "was written (%.17g)\n", what, e, pc->first, pc->stride, get(got, p->t, e));
    }
    return bad;
}

/* One problem, one transpose combination, one view kind for A, B and C: upload, poison, call,
   read back, compare. */
static void run_one(const problem* p, int ta, int tb, view_kind v) {
    char what[160];
    const ty t = p->t;
    placed pa = place(v, ta ? p->k : p->m, ta ? p->m : p->k, 0, 0);
    placed pb = place(v, tb ? p->n : p->k, tb ? p->k : p->n, 1, 0);
    placed pc = place(v, p->m, p->n, 2, PAD);
    void* ha = image_ab(t, &pa, p->a, p->k, ta);
    void* hb = image_ab(t, &pb, p->b, p->n, tb);
    void* hc = malloc(pc.elems * tsize(t));
    gpuk_buffer ba, bb, bc;
    size_t i, j;
    long bad;
    if (!hc) { fprintf(stderr, "gpu_gemm: out of host memory\n"); exit(1); }
    snprintf(what, sizeof what, "%s m=%zu n=%zu k=%zu trans_a=%d trans_b=%d %s views alpha=%g beta=%g", ty_name[t],
             p->m, p->n, p->k, ta, tb, view_name[v], p->alpha, p->beta);
    memset(hc, 0xFF, pc.elems * tsize(t)); /* the poison; beta != 0: C's start inside the view */
    if (p->beta != 0)
        for (i = 0; i < p->m; i++)
            for (j = 0; j < p->n; j++) put(hc, t, at(&pc, i, j), p->c0[i * p->n + j]);
    ba = upload(t, ha, pa.elems);
    bb = upload(t, hb, pb.elems);
    bc = upload(t, hc, pc.elems);
    memset(hc, 0, pc.elems * tsize(t));
    CHECK_OK(call_gemm(t, gpuk_at2d(bc, pc.first, pc.rows, pc.cols, pc.stride_arg), p->alpha,
                       gpuk_at2d(ba, pa.first, pa.rows, pa.cols, pa.stride_arg), ta,
                       gpuk_at2d(bb, pb.first, pb.rows, pb.cols, pb.stride_arg), tb, p->beta));
    CHECK_OK(gpuk_buffer_read(ctx, bc, 0, hc, pc.elems * tsize(t)));
    bad = expect_gemm(p, &pc, hc, what);
    if (bad) {
        fprintf(stderr, "  %s: %ld bad elements\n", what, bad);
        check_failures++;
    }
    CHECK_OK(gpuk_buffer_destroy(ctx, ba));
    CHECK_OK(gpuk_buffer_destroy(ctx, bb));
    CHECK_OK(gpuk_buffer_destroy(ctx, bc));
    free(ha); free(hb); free(hc);
}

/* A fresh problem of this shape, run in all four transpose combinations (the reference does not
   depend on them: the same op(A) and op(B) are stored either way) for each view kind asked. */
static void check_shape(ty t, size_t m, size_t n, size_t k, double alpha, double beta, int views) {
    problem p = problem_new(t, m, n, k, alpha, beta);
    int ta, tb, v;
    for (v = PACKED; v <= ODD; v++) {
        if (!(views & (1 << v))) continue;
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++) run_one(&p, ta, tb, (view_kind)v);
    }
    problem_free(&p);
}
#define V_PACKED (1 << PACKED)
#define V_ALL ((1 << PACKED) | (1 << PADDED) | (1 << ODD))

static int quick(void) { return getenv("GPUK_TEST_QUICK") != NULL; }

/* m, n or k = 0 is valid: nothing written when m or n is 0; k = 0 gives C = beta C, and 0 when
   beta = 0 over a NaN C. */
static int test_gemm_empty_shapes(void) {
    ty t;
    for (t = F32; t <= TF32; t++) {
        check_shape(t, 0, 5, 7, 1.5, 0.5, V_ALL);
        check_shape(t, 6, 0, 7, 1.5, 0.5, V_ALL);
        check_shape(t, 0, 0, 0, 1.5, 0.5, V_PACKED);
        check_shape(t, 3, 4, 0, 1.5, -0.75, V_ALL);
        check_shape(t, 3, 4, 0, 1.5, 0, V_ALL);
        check_shape(t, 300, 200, 0, 1.5, 0, V_PACKED);
    }
    return TEST_PASS;
}

/* Small and thin shapes, every view kind on the odd-sized one; alpha and beta both matter. */
static int test_gemm_small_shapes(void) {
    ty t;
    for (t = F32; t <= TF32; t++) {
        check_shape(t, 1, 1, 1, 1.25, -0.5, V_ALL);
        check_shape(t, 1, 4096, 1, -0.75, 0.5, V_PACKED | (1 << ODD));
        check_shape(t, 4096, 1, 3, 1.5, 0.25, V_PACKED | (1 << ODD));
        check_shape(t, 2, 3, 4096, 0.5, 1.5, V_PACKED | (1 << ODD));
        check_shape(t, 17, 33, 65, 1.5, -0.75, V_ALL);
        check_shape(t, 127, 129, 300, -1.25, 0.5, V_PACKED | (1 << ODD));
        check_shape(t, 64, 64, 64, 1, 1, V_PACKED);
    }
    return TEST_PASS;
}

/* beta = 0: C (NaN) is not read; alpha = 0: C = beta C; both 0: C = 0 over NaN. */
static int test_gemm_alpha_beta_zero(void) {
    ty t;
    for (t = F32; t <= TF32; t++) {
        check_shape(t, 17, 33, 65, 1.5, 0, V_ALL);
        check_shape(t, 130, 70, 190, 1, 0, V_PACKED);
        check_shape(t, 17, 33, 65, 0, 0.5, V_PACKED | (1 << ODD));
        check_shape(t, 17, 33, 65, 0, 0, V_PACKED | (1 << ODD));
    }
    return TEST_PASS;
}

/* A and B may share a buffer, even be the same view (only C must not overlap them):
   C = alpha A A^T + beta C with B the same view as A. */
static int test_gemm_a_and_b_in_one_buffer(void) {
    ty t;
    for (t = F32; t <= TF32; t++) {
        const size_t m = 65, k = 33;
        problem p = problem_new(t, m, m, k, 0.75, -0.5);
        placed pa = place(ODD, m, k, 0, 0), pc = place(PACKED, m, m, 0, PAD);
        void *ha, *hc = malloc(pc.elems * tsize(t));
        gpuk_buffer ba, bc;
        size_t i, j;
        char what[64];
        for (i = 0; i < k; i++) /* op(B) = A^T */
            for (j = 0; j < m; j++) p.b[i * m + j] = p.a[j * k + i];
        problem_solve(&p);
        ha = image_ab(t, &pa, p.a, k, 0);
        memset(hc, 0xFF, pc.elems * tsize(t));
        for (i = 0; i < m * m; i++) put(hc, t, i, p.c0[i]);
        ba = upload(t, ha, pa.elems);
        bc = upload(t, hc, pc.elems);
        CHECK_OK(call_gemm(t, gpuk_at2d(bc, 0, m, m, 0), p.alpha, gpuk_at2d(ba, pa.first, m, k, pa.stride), 0,
                           gpuk_at2d(ba, pa.first, m, k, pa.stride), 1, p.beta));
        CHECK_OK(gpuk_buffer_read(ctx, bc, 0, hc, pc.elems * tsize(t)));
        snprintf(what, sizeof what, "%s A A^T, one view", ty_name[t]);
        if (expect_gemm(&p, &pc, hc, what)) check_failures++;
        CHECK_OK(gpuk_buffer_destroy(ctx, ba));
        CHECK_OK(gpuk_buffer_destroy(ctx, bc));
        free(ha); free(hc);
        problem_free(&p);
    }
    return TEST_PASS;
}

/* 1000^3 (not a multiple of any tile), every transpose combination, f32 and f64. */
static int test_gemm_1000_cubed(void) {
    ty t;
    if (quick()) return TEST_SKIP;
    for (t = F32; t <= TF32; t++) check_shape(t, 1000, 1000, 1000, 1.25, -0.5, V_PACKED);
    return TEST_PASS;
}

/* (1024 x 2048) @ (2048 x 512), m=1024 k=2048 n=512, as in bench_gemm; once more with
   padded views (row_stride > cols, first > 0) and beta = 0 over NaN. */
static int test_gemm_seed_shape(void) {
    ty t;
    if (quick()) return TEST_SKIP;
    for (t = F32; t <= TF32; t++) {
        check_shape(t, 1024, 512, 2048, 1, 0, V_PACKED | (1 << PADDED));
        check_shape(t, 1024, 512, 2048, -0.5, 2, V_PACKED);
    }
    return TEST_PASS;
}

/* Shapes past every tile multiple, and the bench's 4096^3, on sampled rows (SAMPLE_FROM). */
static int test_gemm_big_shapes(void) {
    ty t;
    if (quick()) return TEST_SKIP;
    for (t = F32; t <= TF32; t++) {
        problem p = problem_new(t, 4097, 4095, 4093, 0.75, 0.5);
        run_one(&p, 0, 0, PACKED);
        run_one(&p, 1, 1, ODD);
        problem_free(&p);
        p = problem_new(t, 4096, 4096, 4096, 1, 0);
        run_one(&p, 0, 1, PACKED);
        problem_free(&p);
    }
    return TEST_PASS;
}

/* The sm_90a TF32 variant's TMA path (gpuk_kernels.cuh, gemm_tma_run: one product, A as-is
   with 16-byte aligned rows, at least a 128 x 256 tile for every SM): B transposed (its tensor
   map over b itself) and B packed (transposed first into the stream's workspace), with edges in
   m and n and k not a multiple of 32; then what must leave the path and still be right: a
   padded B, and k not a multiple of 4. On other variants the same shapes test their paths. */
static int test_gemm_tma_path_shapes(void) {
    problem p;
    /* the smallest shape that takes the path on an H100 (12 x 11 = 132 tiles of 128 x 256,
       shallow k), also at the sanitizers' quick sizes */
    p = problem_new(TF32, 1536, 2816, 68, 1, -0.5);
    run_one(&p, 0, 0, PACKED);
    run_one(&p, 0, 1, PACKED);
    problem_free(&p);
    if (quick()) return TEST_PASS;
    p = problem_new(TF32, 2000, 3001, 1004, 0.75, 0.5);
    run_one(&p, 0, 0, PACKED);
    run_one(&p, 0, 1, PACKED);
    run_one(&p, 0, 0, PADDED);
    problem_free(&p);
    p = problem_new(TF32, 1500, 2900, 1001, 1, 0);
    run_one(&p, 0, 0, PACKED);
    problem_free(&p);
    return TEST_PASS;
}

/* Deep k without split-K (12 x 13 tiles of 128 fill an H100): k 1030, whose last slice is 6 of
   FP64's 16 on sm_90 (the fast copies, then the element path), and 1000, each transpose; the
   first product also at the sanitizers' quick sizes. */
static int test_gemm_f64_deep_k_last_slice(void) {
    problem p = problem_new(F64, 1536, 1544, 1030, 1, -0.5);
    run_one(&p, 0, 0, PACKED);
    if (quick()) { /* racecheck takes minutes a product this size */
        problem_free(&p);
        return TEST_PASS;
    }
    run_one(&p, 1, 1, ODD);
    problem_free(&p);
    p = problem_new(F64, 1536, 1544, 1000, -0.75, 0);
    run_one(&p, 0, 1, PACKED);
    problem_free(&p);
    return TEST_PASS;
}

/* Split-K (few tiles, deep k: the host splits k and the last part adds the parts in order):
   right, and the same bits on a second run. */
static int test_gemm_split_k_is_right_and_repeats(void) {
    ty t;
    for (t = F32; t <= TF32; t++) {
        const size_t m = 70, n = 130, k = 5000;
        problem p = problem_new(t, m, n, k, 1.5, -0.5);
        placed pa = place(PACKED, m, k, 0, 0), pb = place(PACKED, k, n, 0, 0), pc = place(PACKED, m, n, 0, PAD);
        void *ha = image_ab(t, &pa, p.a, k, 0), *hb = image_ab(t, &pb, p.b, n, 0);
        void *h1 = malloc(pc.elems * tsize(t)), *h2 = malloc(pc.elems * tsize(t));
        gpuk_buffer ba, bb, bc;
        size_t i;
        int run;
        if (!h1 || !h2) { fprintf(stderr, "gpu_gemm: out of host memory\n"); exit(1); }
        ba = upload(t, ha, pa.elems);
        bb = upload(t, hb, pb.elems);
        for (run = 0; run < 2; run++) {
            void* h = run ? h2 : h1;
            memset(h, 0xFF, pc.elems * tsize(t));
            for (i = 0; i < m * n; i++) put(h, t, i, p.c0[i]);
            bc = upload(t, h, pc.elems);
            CHECK_OK(call_gemm(t, gpuk_at2d(bc, 0, m, n, 0), p.alpha, gpuk_at2d(ba, 0, m, k, 0), 0,
                               gpuk_at2d(bb, 0, k, n, 0), 0, p.beta));
            CHECK_OK(gpuk_buffer_read(ctx, bc, 0, h, pc.elems * tsize(t)));
            CHECK_OK(gpuk_buffer_destroy(ctx, bc));
        }
        if (expect_gemm(&p, &pc, h1, "split-K")) check_failures++;
        CHECK(memcmp(h1, h2, pc.elems * tsize(t)) == 0);
        CHECK_OK(gpuk_buffer_destroy(ctx, ba));
        CHECK_OK(gpuk_buffer_destroy(ctx, bb));
        free(ha); free(hb); free(h1); free(h2);
        problem_free(&p);
    }
    return TEST_PASS;
}

/* gpuk_gemm_batched_*: batch products at element strides; A shared (stride 0); C's products
   side by side within rows (stride_c = n, ldc = batch n) or a block each; poison between. */
static gpuk_result call_batched(ty t, gpuk_array2d c, size_t sc, double alpha, gpuk_array2d a, size_t sa, int ta,
                                gpuk_array2d b, size_t sb, int tb, double beta, size_t batch) {
    if (t == F32) return gpuk_gemm_batched_f32(ctx, S, c, sc, (float)alpha, a, sa, (uint32_t)ta, b, sb, (uint32_t)tb, (float)beta, batch);
    if (t == TF32) return gpuk_gemm_batched_tf32(ctx, S, c, sc, (float)alpha, a, sa, (uint32_t)ta, b, sb, (uint32_t)tb, (float)beta, batch);
    return gpuk_gemm_batched_f64(ctx, S, c, sc, alpha, a, sa, (uint32_t)ta, b, sb, (uint32_t)tb, beta, batch);
}
static void check_batched(ty t, size_t batch, size_t m, size_t n, size_t k, double beta, int share_a,
                          int side_by_side, int ta, int tb) {
    problem* p = (problem*)calloc(batch, sizeof *p);
    const size_t a_el = m * k, b_el = k * n + 5; /* B's products 5 elements apart */
    const size_t ldc = side_by_side ? batch * n : n + 3, sc = side_by_side ? n : m * ldc + 7;
    const size_t c_el = (batch - 1) * sc + (m - 1) * ldc + n + PAD, na = share_a ? 1 : batch;
    void *ha = malloc(na * a_el * tsize(t)), *hb = malloc(batch * b_el * tsize(t)), *hc = malloc(c_el * tsize(t));
    gpuk_buffer ba, bb, bc;
    placed one = place(PACKED, m, n, 0, 0);
    size_t q, i, j;
    char what[160];
    if (!p || !ha || !hb || !hc) { fprintf(stderr, "gpu_gemm: out of host memory\n"); exit(1); }
    memset(ha, 0xFF, na * a_el * tsize(t));
    memset(hb, 0xFF, batch * b_el * tsize(t));
    memset(hc, 0xFF, c_el * tsize(t)); /* NaN: the poison, and C's start where beta = 0 */
    for (q = 0; q < batch; q++) {
        p[q] = problem_new(t, m, n, k, 1.25, beta);
        if (share_a && q) { /* every product uses the first A */
            memcpy(p[q].a, p[0].a, a_el * sizeof(double));
            problem_solve(&p[q]);
        }
        for (i = 0; i < (ta ? k : m) && q < na; i++) /* stored as op(A) or its transpose, packed */
            for (j = 0; j < (ta ? m : k); j++)
                put(ha, t, q * a_el + i * (ta ? m : k) + j, ta ? p[q].a[j * k + i] : p[q].a[i * k + j]);
        for (i = 0; i < (tb ? n : k); i++)
            for (j = 0; j < (tb ? k : n); j++)
                put(hb, t, q * b_el + i * (tb ? k : n) + j, tb ? p[q].b[j * n + i] : p[q].b[i * n + j]);
        for (i = 0; i < m && beta != 0; i++)
            for (j = 0; j < n; j++) put(hc, t, q * sc + i * ldc + j, p[q].c0[i * n + j]);
    }
    ba = upload(t, ha, na * a_el);
    bb = upload(t, hb, batch * b_el);
    bc = upload(t, hc, c_el);
    CHECK_OK(call_batched(t, gpuk_at2d(bc, 0, m, n, ldc), sc, 1.25, gpuk_at2d(ba, 0, ta ? k : m, ta ? m : k, 0),
                          share_a ? 0 : a_el, ta, gpuk_at2d(bb, 0, tb ? n : k, tb ? k : n, 0), b_el, tb, beta, batch));
    CHECK_OK(gpuk_buffer_read(ctx, bc, 0, hc, c_el * tsize(t)));
    one.stride = ldc;
    one.elems = c_el;
    for (q = 0; q < batch; q++) {
        const double tol_scale = TOL_C * (double)(k + 2) * eps_of(t) + (t == TF32 ? tf32_tol : 0);
        snprintf(what, sizeof what, "%s product %zu of %zu, %zux%zux%zu share_a=%d side_by_side=%d ta=%d tb=%d",
                 ty_name[t], q, batch, m, n, k, share_a, side_by_side, ta, tb);
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) {
                double g = get(hc, t, q * sc + i * ldc + j), want = p[q].ref[i * n + j];
                if (!(fabs(g - want) <= tol_scale * p[q].bound[i * n + j]) && check_failures++ < 5)
                    fprintf(stderr, "  %s: C[%zu][%zu] = %.17g, want %.17g\n", what, i, j, g, want);
            }
    }
    for (i = 0; i < c_el; i++) { /* elements in no product's view: still the poison */
        int inside = 0;
        for (q = 0; q < batch && !inside; q++) {
            one.first = q * sc;
            inside = in_view(&one, i);
        }
        if (!inside && !isnan(get(hc, t, i)) && check_failures++ < 5)
            fprintf(stderr, "  %s batch: element %zu, in no product, was written\n", ty_name[t], i);
    }
    CHECK_OK(gpuk_buffer_destroy(ctx, ba));
    CHECK_OK(gpuk_buffer_destroy(ctx, bb));
    CHECK_OK(gpuk_buffer_destroy(ctx, bc));
    for (q = 0; q < batch; q++) problem_free(&p[q]);
    free(p); free(ha); free(hb); free(hc);
}
static int test_gemm_strided_batched(void) {
    ty t;
    for (t = F32; t <= TF32; t++) {
        check_batched(t, 5, 17, 33, 65, -0.5, 0, 0, 0, 0);
        check_batched(t, 4, 17, 33, 65, 0, 1, 1, 1, 0);
        check_batched(t, 3, 130, 70, 190, 0.5, 0, 1, 0, 1);
        if (!quick()) check_batched(t, 64, 128, 128, 128, 0, 0, 0, 1, 1);
    }
    return TEST_PASS;
}

/* The variant each GEMM runs on this ctx is the one kernels_max_sm and the GPU call for: TF32
   on an H100 (9.0) takes the architecture-specific sm_90a one with kernels_max_sm 0, sm_80's
   with 80, the baseline with 52; on other GPUs from sm_80 on (8.x, 10.x, 12.x) never sm_90a. */
static uint32_t max_sm_now;
static int test_gemm_runs_the_expected_variant(void) {
    const gpuk_device_info* d = gpuk_ctx_device_info(ctx);
    const int sm = d->cc_major * 10 + d->cc_minor;
    const char* tf32 = gpuk__builtin_pick(ctx, GPUK__K_GEMM_TF32)->name;
    const char* want = max_sm_now == 52 || sm < 80 ? "gpuk_gemm_tf32"
                       : sm == 90 && max_sm_now != 80 ? "gpuk_gemm_tf32__sm90a" : "gpuk_gemm_tf32__sm80";
    printf("     variants: %s, %s, %s\n", gpuk__builtin_pick(ctx, GPUK__K_GEMM_F32)->name,
           gpuk__builtin_pick(ctx, GPUK__K_GEMM_F64)->name, tf32);
    CHECK(strcmp(tf32, want) == 0);
    CHECK(gpuk__builtin_pick(ctx, GPUK__K_GEMM_TF32)->arch_specific == (strstr(want, "__sm90a") != NULL));
    return TEST_PASS;
}

/* Every GEMM variant this GPU runs, forced in turn by gpuk_ctx_desc.kernels_max_sm: the newest
   (0: TF32's sm_90a one on an H100), sm_80's, and the portable sm_52 baseline. */
int main(void) {
    static const uint32_t max_sm[] = { 0, 80, 52 };
    int code, v;
    gpuk_device_info info;
    if (!gpu_setup("gpu_gemm", 11 * 3, NULL, &code)) return code;
    rng_seed_from_clock();
    if (gpuk_device_query(0, &info) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    for (v = 0; v < 3; v++) {
        const int sm = info.cc_major * 10 + info.cc_minor;
        if (gpuk_ctx_create(&(gpuk_ctx_desc){ .kernels_max_sm = max_sm[v] }, &ctx) != GPUK_OK) {
            printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
            return 1;
        }
        tf32_tol = sm == 90 && (max_sm[v] == 0 || max_sm[v] >= 90) ? 0x1.2p-9  /* sm_90a: truncates */
                 : sm >= 80 && (max_sm[v] == 0 || max_sm[v] >= 80) ? 0x1.2p-10 /* sm_80: rounds */
                 : 0;
        printf("     kernels_max_sm = %u (GPU sm_%d): TF32 %s\n", max_sm[v], sm,
               tf32_tol == 0x1.2p-9 ? "truncated inputs (wgmma)" : tf32_tol > 0 ? "rounded inputs" : "exact FP32");
        max_sm_now = max_sm[v];
        RUN(test_gemm_runs_the_expected_variant);
        RUN(test_gemm_empty_shapes);
        RUN(test_gemm_small_shapes);
        RUN(test_gemm_alpha_beta_zero);
        RUN(test_gemm_a_and_b_in_one_buffer);
        RUN(test_gemm_f64_deep_k_last_slice);
        RUN(test_gemm_split_k_is_right_and_repeats);
        RUN(test_gemm_strided_batched);
        RUN(test_gemm_1000_cubed);
        RUN(test_gemm_seed_shape);
        RUN(test_gemm_big_shapes);
        RUN(test_gemm_tma_path_shapes);
        CHECK_OK(gpuk_ctx_destroy(ctx));
    }
    return test_summary();
}
