/* tests/gpu/gpu_stencil.c - the stencil built-ins on a real GPU against CPU references that do the
   same operations in the same order, so results must match bit for bit:
   - gpuk_stencil3x3_f32: acc = fmaf(w[q], x, acc) for q = 0..8 (row-major neighbours), then
     for GPUK_BOUNDARY_SKIP at the edges acc * (W / W_valid); i32: the same in double, rounded
     to nearest with ties away from zero, saturated to int32;
   - gpuk_heat_step_*: interior c + alpha ((up + down) + (left + right) - 4c) as one fma, edges
     copied; gpuk_heat_steps_*: the same step repeated, the result back in the field.
   Shapes: 1x1, 1xN, Nx1, 2x2, 3x3, odd sizes, sizes past the kernels' 32-row and 32-column
   blocks, views with a row stride and an odd first element, with a row stride and first
   element that keep rows 16-byte aligned, and (3x3) with such a stride from an odd first
   element. The 3x3 runs on every variant this GPU has (kernels_max_sm 0, then 80): on sm_90
   and newer the TMA tiles where in's row stride is a multiple of 16 bytes, the 32 x 8 kernel
   elsewhere and on older GPUs. Outputs are poisoned first (and the bytes around the out view
   must keep the poison); inputs are fresh random values (the elements around a view too), i32
   ones spread over the whole range (so saturation and rounding are exercised) and small ones.
   Skipped where no driver or GPU exists. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };

typedef enum { F32, I32, F64 } ty;
static size_t tsize(ty t) { return t == F64 ? 8 : 4; }

/* a view: rows x cols at first, row_stride ld, in a buffer of elems elements; strided 1: an odd
   first element and row stride, 2: both multiples of 4 elements (16-byte aligned rows), 3: the
   stride a multiple of 4, the first element 1 to 3 past one (a view from an odd column) */
typedef struct view { size_t rows, cols, first, ld, elems; } view;
static view make_view(size_t rows, size_t cols, int strided, size_t salt) {
    view v;
    v.rows = rows; v.cols = cols;
    v.first = strided == 1 ? 3 + 2 * salt : strided == 2 ? 4 * (1 + salt) : strided == 3 ? 1 + (rows + cols + salt) % 3 : 0;
    v.ld = strided == 1 ? cols + 5 + salt : strided >= 2 ? (cols + 3) / 4 * 4 + 4 * (1 + salt) : cols;
    v.elems = v.first + (rows ? (rows - 1) * v.ld + cols : 0) + 7;
    return v;
}
static size_t at(const view* v, size_t i, size_t j) { return v->first + i * v->ld + j; }
static gpuk_array2d on(gpuk_buffer b, const view* v) { return gpuk_at2d(b, v->first, v->rows, v->cols, v->ld); }

static void* xmalloc(size_t n) {
    void* p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "gpu_stencil: out of host memory\n"); exit(1); }
    return p;
}
static gpuk_buffer upload(const void* host, size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .data = { host, bytes } }, &b));
    return b;
}

/* ---- the references ---- */
static size_t clampi(long long i, size_t n) { return i < 0 ? 0 : (size_t)i >= n ? n - 1 : (size_t)i; }
static int round_sat(double v) {
    double r = v < 0 ? -floor(-v + 0.5) : floor(v + 0.5);
    return r >= 2147483647.0 ? 2147483647 : r <= -2147483648.0 ? (int)0x80000000u : (int)r;
}
static void ref3x3(ty t, const void* in, const view* vi, void* out, const view* vo, const float* w, unsigned boundary) {
    size_t i, j;
    for (i = 0; i < vi->rows; i++)
        for (j = 0; j < vi->cols; j++) {
            const int inner = i > 0 && i + 1 < vi->rows && j > 0 && j + 1 < vi->cols;
            double dacc = 0, dvalid = 0, dall = 0;
            float facc = 0, fvalid = 0, fall = 0;
            int di, dj;
            for (di = 0; di < 9; di++) { dall = dall + (double)w[di]; fall = fall + w[di]; }
            for (di = -1; di <= 1; di++)
                for (dj = -1; dj <= 1; dj++) {
                    const int q = (di + 1) * 3 + dj + 1;
                    const long long ii = (long long)i + di, jj = (long long)j + dj;
                    const int inside = ii >= 0 && (size_t)ii < vi->rows && jj >= 0 && (size_t)jj < vi->cols;
                    size_t e = 0;
                    int have = 1;
                    if (inside) e = at(vi, (size_t)ii, (size_t)jj);
                    else if (boundary == GPUK_BOUNDARY_CLAMP) e = at(vi, clampi(ii, vi->rows), clampi(jj, vi->cols));
                    else have = 0;
                    if (t == F32) {
                        float x = have ? ((const float*)in)[e] : 0.0f;
                        if (inside) fvalid = fvalid + w[q];
                        facc = fmaf(w[q], x, facc);
                    } else {
                        double x = have ? (double)((const int*)in)[e] : 0.0;
                        if (inside) dvalid = dvalid + (double)w[q];
                        dacc = fma((double)w[q], x, dacc);
                    }
                }
            if (boundary == GPUK_BOUNDARY_SKIP && !inner) {
                if (t == F32 && fvalid != fall && fvalid != 0) facc = facc * (fall / fvalid);
                if (t == I32 && dvalid != dall && dvalid != 0) dacc = dacc * (dall / dvalid);
            }
            if (t == F32) ((float*)out)[at(vo, i, j)] = facc;
            else ((int*)out)[at(vo, i, j)] = round_sat(dacc);
        }
}
static void ref_heat(ty t, const void* in, const view* vi, void* out, const view* vo, double alpha) {
    size_t i, j;
    for (i = 0; i < vi->rows; i++)
        for (j = 0; j < vi->cols; j++) {
            const int edge = i == 0 || j == 0 || i + 1 == vi->rows || j + 1 == vi->cols;
            if (t == F32) {
                const float* x = (const float*)in;
                const float c = x[at(vi, i, j)];
                ((float*)out)[at(vo, i, j)] = edge ? c : fmaf((float)alpha, ((x[at(vi, i - 1, j)] + x[at(vi, i + 1, j)]) +
                                                          (x[at(vi, i, j - 1)] + x[at(vi, i, j + 1)])) - 4.0f * c, c);
            } else {
                const double* x = (const double*)in;
                const double c = x[at(vi, i, j)];
                ((double*)out)[at(vo, i, j)] = edge ? c : fma(alpha, ((x[at(vi, i - 1, j)] + x[at(vi, i + 1, j)]) +
                                                         (x[at(vi, i, j - 1)] + x[at(vi, i, j + 1)])) - 4.0 * c, c);
            }
        }
}

/* out's buffer against the reference image: the view equal bit for bit, the rest poison */
static long compare(const void* got, const void* want, const view* vo, size_t es, const char* what) {
    long bad = 0;
    size_t e;
    for (e = 0; e < vo->elems; e++) {
        if (memcmp((const char*)got + e * es, (const char*)want + e * es, es) == 0) continue;
        if (bad++ < 5) {
            size_t r = e >= vo->first ? (e - vo->first) / vo->ld : 0, c = e >= vo->first ? (e - vo->first) % vo->ld : e;
            fprintf(stderr, "  %s: element %zu (row %zu col %zu of a %zu x %zu view, ld %zu) differs\n", what, e, r, c,
                    vo->rows, vo->cols, vo->ld);
        }
    }
    if (bad) fprintf(stderr, "  %s: %ld elements differ\n", what, bad);
    return bad;
}

static void fill_random(ty t, void* p, size_t n, int wide) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (t == F32) ((float*)p)[i] = (float)uniform(-2, 2);
        else if (t == F64) ((double*)p)[i] = uniform(-2, 2);
        else ((int*)p)[i] = wide ? (int)(uint32_t)rng() : (int)uniform(-300, 300);
    }
}

static void check_3x3(ty t, size_t rows, size_t cols, int strided, const float* w, unsigned boundary, int wide) {
    const size_t es = tsize(t);
    view vi = make_view(rows, cols, strided, 1), vo = make_view(rows, cols, strided, 2);
    void *hi = xmalloc(vi.elems * es), *want = xmalloc(vo.elems * es), *got = xmalloc(vo.elems * es);
    gpuk_buffer bi, bo;
    char what[128];
    fill_random(t, hi, vi.elems, wide);
    memset(want, 0xA5, vo.elems * es); /* the poison */
    ref3x3(t, hi, &vi, want, &vo, w, boundary);
    memset(got, 0xA5, vo.elems * es);
    bi = upload(hi, vi.elems * es);
    bo = upload(got, vo.elems * es);
    if (t == F32) CHECK_OK(gpuk_stencil3x3_f32(ctx, S, on(bo, &vo), on(bi, &vi), w, boundary));
    else CHECK_OK(gpuk_stencil3x3_i32(ctx, S, on(bo, &vo), on(bi, &vi), w, boundary));
    CHECK_OK(gpuk_buffer_read(ctx, bo, 0, got, vo.elems * es));
    snprintf(what, sizeof what, "stencil3x3_%s %zux%zu%s boundary %u%s", t == F32 ? "f32" : "i32", rows, cols,
             strided == 1 ? " strided" : strided == 2 ? " strided aligned" : strided == 3 ? " strided aligned, odd first" : "",
             boundary, wide ? " wide ints" : "");
    if (compare(got, want, &vo, es, what)) check_failures++;
    CHECK_OK(gpuk_buffer_destroy(ctx, bi));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    free(hi); free(want); free(got);
}

static const size_t shapes[][2] = { { 1, 1 }, { 1, 77 }, { 77, 1 }, { 2, 2 }, { 3, 3 }, { 5, 7 }, { 33, 31 },
                                    { 64, 65 }, { 131, 97 }, { 300, 257 }, { 17, 64 }, { 300, 256 } };
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* Box smoothing (examples/08_smoothing.c's), a Gaussian and an edge detector (weights summing
   to 0, where SKIP cannot rescale), every boundary rule, f32 and i32 (wide: saturation and
   ties). */
static int test_stencil3x3_matches_the_cpu(void) {
    static const float box[9] = { 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9 };
    static const float gauss[9] = { 0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f, 0.0625f, 0.125f, 0.0625f };
    static const float edge[9] = { -1, -1, -1, -1, 8, -1, -1, -1, -1 };
    const float* ws[3] = { box, gauss, edge };
    size_t s;
    unsigned b;
    int k, strided;
    for (s = 0; s < NSHAPES; s++)
        for (b = GPUK_BOUNDARY_SKIP; b <= GPUK_BOUNDARY_ZERO; b++)
            for (k = 0; k < 3; k++)
                for (strided = 0; strided < 4; strided++) {
                    check_3x3(F32, shapes[s][0], shapes[s][1], strided, ws[k], b, 0);
                    check_3x3(I32, shapes[s][0], shapes[s][1], strided, ws[k], b, 0);
                    check_3x3(I32, shapes[s][0], shapes[s][1], strided, ws[k], b, 1);
                }
    return TEST_PASS;
}

/* Images of more tiles than the sm_90 and sm_80 variants' grid has blocks (4 a multiprocessor,
   64 x 16 outputs a tile), so that each block walks several tiles through its ring of two
   stages (their barriers' phases, or cp.async groups, turning over), and the edge tiles (whose
   edge warps take the rules' paths, from the box) come to every block: by the tensor map or
   16-byte cp.async copies (16-byte aligned rows; also from an odd first element, the box then
   starting left of in), and where neither can (odd stride) by the baseline's 32 x 8 kernel,
   which the call then launches instead. The
   last row and column fall inside a tile and a thread's rows. GPUK_TEST_QUICK (the sanitizer
   runs): 1601 x 1000, 101 x 16 tiles, about three a block on 132 multiprocessors; else
   4099 x 2051, 257 x 33, about 16. */
static int test_stencil3x3_many_tiles_a_block(void) {
    static const float box[9] = { 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9 };
    static const float edge[9] = { -1, -1, -1, -1, 8, -1, -1, -1, -1 };
    const int quick = getenv("GPUK_TEST_QUICK") != NULL;
    const size_t rows = quick ? 1601 : 4099, cols = quick ? 1000 : 2051;
    int strided;
    for (strided = 0; strided < 4; strided++) {
        check_3x3(I32, rows, cols, strided, box, GPUK_BOUNDARY_SKIP, 0);
        check_3x3(F32, rows, cols, strided, edge, GPUK_BOUNDARY_CLAMP, 0);
    }
    check_3x3(I32, rows, cols, 2, edge, GPUK_BOUNDARY_ZERO, 1);
    return TEST_PASS;
}

/* One step, and heat_steps for 1..9 and 13 steps against as many reference steps; a second
   buffer as scratch; f32 and f64. */
static void check_heat(ty t, size_t rows, size_t cols, int strided, unsigned steps) {
    const size_t es = tsize(t);
    const double alpha = t == F32 ? (double)0.2f : 0.2;
    view vf = make_view(rows, cols, strided, 1), vs = make_view(rows, cols, strided, 2);
    void *field = xmalloc(vf.elems * es), *tmp = xmalloc(vf.elems * es), *got = xmalloc(vf.elems * es);
    void* scratch = xmalloc(vs.elems * es);
    gpuk_buffer bf, bs, bo;
    unsigned q;
    char what[128];
    fill_random(t, field, vf.elems, 0);
    memset(scratch, 0xA5, vs.elems * es);
    /* one step into a poisoned out */
    memset(tmp, 0xA5, vf.elems * es);
    ref_heat(t, field, &vf, tmp, &vf, alpha);
    memset(got, 0xA5, vf.elems * es);
    bf = upload(field, vf.elems * es);
    bo = upload(got, vf.elems * es);
    if (t == F32) CHECK_OK(gpuk_heat_step_f32(ctx, S, on(bo, &vf), on(bf, &vf), (float)alpha));
    else CHECK_OK(gpuk_heat_step_f64(ctx, S, on(bo, &vf), on(bf, &vf), alpha));
    CHECK_OK(gpuk_buffer_read(ctx, bo, 0, got, vf.elems * es));
    snprintf(what, sizeof what, "heat_step_%s %zux%zu%s", t == F32 ? "f32" : "f64", rows, cols, strided ? " strided" : "");
    if (compare(got, tmp, &vf, es, what)) check_failures++;
    /* steps in place: the reference steps field -> tmp -> field ... */
    bs = upload(scratch, vs.elems * es);
    if (t == F32) CHECK_OK(gpuk_heat_steps_f32(ctx, S, on(bf, &vf), on(bs, &vs), (float)alpha, steps));
    else CHECK_OK(gpuk_heat_steps_f64(ctx, S, on(bf, &vf), on(bs, &vs), alpha, steps));
    for (q = 0; q < steps; q++) {
        memcpy(tmp, field, vf.elems * es);
        ref_heat(t, tmp, &vf, field, &vf, alpha);
    }
    CHECK_OK(gpuk_buffer_read(ctx, bf, 0, got, vf.elems * es));
    snprintf(what, sizeof what, "heat_steps_%s %zux%zu%s, %u steps", t == F32 ? "f32" : "f64", rows, cols,
             strided ? " strided" : "", steps);
    if (compare(got, field, &vf, es, what)) check_failures++;
    CHECK_OK(gpuk_buffer_destroy(ctx, bf));
    CHECK_OK(gpuk_buffer_destroy(ctx, bs));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    free(field); free(tmp); free(got); free(scratch);
}

/* The shapes above, and wider ones where warps of 16-byte packs (128 f32 or 64 f64 columns)
   fall wholly inside the edges; strided 2: rows 16-byte aligned with ld != cols (the packed
   path), 1: not aligned (one element at a time). */
static int test_heat_matches_the_cpu(void) {
    static const unsigned steps[] = { 1, 2, 3, 4, 5, 8, 9, 13 };
    static const size_t wide[][2] = { { 40, 700 }, { 129, 520 }, { 67, 1030 } };
    const size_t nwide = sizeof wide / sizeof wide[0];
    size_t s, q;
    int strided;
    for (s = 0; s < NSHAPES + nwide; s++)
        for (strided = 0; strided < 3; strided++)
            for (q = 0; q < sizeof steps / sizeof steps[0]; q++) {
                const size_t* sh = s < NSHAPES ? shapes[s] : wide[s - NSHAPES];
                check_heat(F32, sh[0], sh[1], strided, steps[q]);
                check_heat(F64, sh[0], sh[1], strided, steps[q]);
            }
    return TEST_PASS;
}

int main(void) {
    static const uint32_t max_sm[] = { 0, 80 };
    int code, v;
    if (!gpu_setup("gpu_stencil", 5, NULL, &code)) return code;
    rng_seed_from_clock();
    for (v = 0; v < 2; v++) {
        if (gpuk_ctx_create(&(gpuk_ctx_desc){ .kernels_max_sm = max_sm[v] }, &ctx) != GPUK_OK) {
            printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
            return 1;
        }
        printf("     kernels_max_sm = %u\n", max_sm[v]);
        RUN(test_stencil3x3_matches_the_cpu);
        RUN(test_stencil3x3_many_tiles_a_block);
        if (v == 0) RUN(test_heat_matches_the_cpu);
        CHECK_OK(gpuk_ctx_destroy(ctx));
    }
    return test_summary();
}
