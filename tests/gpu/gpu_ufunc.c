/* tests/gpu/gpu_ufunc.c - custom element-wise and reduction kernels from C expressions
   (gpuk_elementwise_*, gpuk_reduction_*) compiled by NVRTC and run, against CPU references on
   fresh random inputs at edge sizes: a saxpy ufunc (views at an offset, in place), a double
   ufunc that uses the index i and an int scalar; sum of squares (f32), max abs (f64) and a
   count (u64) as reductions, whose bits repeat run after run and on another stream. Skipped
   where no GPU, or no NVRTC (GPUK_NVRTC_PATH names one), is found. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static gpuk_ctx* ctx;
static void warn_log(void* u, gpuk_log_level level, int code, const char* msg) {
    (void)u; (void)code;
    if (level <= GPUK_LOG_WARN) fprintf(stderr, "gpuk: %s\n", msg);
}

static const size_t sizes[] = { 1, 31, 255, 256, 257, 4097, 100003, ((size_t)1 << 22) + 3 };
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXN (((size_t)1 << 22) + 3)

static gpuk_buffer upload(const void* p, size_t bytes) {
    gpuk_buffer b = { 0 };
    gpuk_buffer_desc d;
    memset(&d, 0, sizeof d);
    d.bytes = bytes;
    if (p) {
        d.data.ptr = p;
        d.data.bytes = bytes;
    }
    CHECK_OK(gpuk_buffer_create(ctx, &d, &b));
    return b;
}

static int test_saxpy_ufunc(void) {
    float* x = (float*)malloc((MAXN + 3) * sizeof(float));
    float* y = (float*)malloc(MAXN * sizeof(float));
    float* out = (float*)malloc(MAXN * sizeof(float));
    gpuk_elementwise_desc d;
    gpuk_elementwise k;
    size_t s, i;
    memset(&d, 0, sizeof d);
    d.params = "float a, const float* x, float* y";
    d.body = "y[i] = a * x[i] + y[i]";
    d.name = "saxpy";
    CHECK_OK(gpuk_elementwise_create(ctx, &d, &k));
    for (s = 0; s < NSIZES && x && y && out; s++) {
        const size_t n = sizes[s];
        const float a = (float)uniform(-3, 3);
        size_t bad = 0;
        gpuk_buffer bx, by;
        for (i = 0; i < n + 3; i++) x[i] = (float)uniform(-1, 1);
        for (i = 0; i < n; i++) y[i] = (float)uniform(-1, 1);
        bx = upload(x, (n + 3) * sizeof(float));
        by = upload(y, n * sizeof(float));
        /* x from its element 3: views at an offset */
        CHECK_OK(gpuk_elementwise_launch(ctx, GPUK_DEFAULT_STREAM, &k, n,
                                         GPUK_ARGV(gpuk_arg_f32(a), gpuk_arg_array(gpuk_at(bx, 3)),
                                                   gpuk_arg_array(gpuk_at(by, 0)))));
        CHECK_OK(gpuk_buffer_read(ctx, by, 0, out, n * sizeof(float)));
        for (i = 0; i < n; i++) {
            float ref = fmaf(a, x[i + 3], y[i]);
            bad += fabsf(out[i] - ref) > 1e-6f * (1.0f + fabsf(ref));
        }
        if (bad) printf("     saxpy n = %zu: %zu of %zu wrong\n", n, bad, n);
        CHECK(bad == 0);
        /* in place: y = a * y + y */
        CHECK_OK(gpuk_elementwise_launch(ctx, GPUK_DEFAULT_STREAM, &k, n,
                                         GPUK_ARGV(gpuk_arg_f32(a), gpuk_arg_array(gpuk_at(by, 0)),
                                                   gpuk_arg_array(gpuk_at(by, 0)))));
        CHECK_OK(gpuk_buffer_read(ctx, by, 0, y, n * sizeof(float)));
        for (i = 0, bad = 0; i < n; i++) {
            float ref = fmaf(a, out[i], out[i]);
            bad += fabsf(y[i] - ref) > 1e-6f * (1.0f + fabsf(ref));
        }
        CHECK(bad == 0);
        CHECK_OK(gpuk_buffer_destroy(ctx, bx));
        CHECK_OK(gpuk_buffer_destroy(ctx, by));
    }
    CHECK_OK(gpuk_elementwise_destroy(ctx, &k));
    free(x); free(y); free(out);
    return TEST_PASS;
}

/* the index i, an int scalar, a raw lookup table and a preamble function */
static int test_index_and_table_ufunc(void) {
    const size_t n = 300007;
    double* out = (double*)malloc(n * sizeof(double));
    double table[5];
    gpuk_elementwise_desc d;
    gpuk_elementwise k;
    gpuk_buffer bt, bo;
    int shift = (int)(rng() % 1000) - 500;
    size_t i, bad = 0;
    for (i = 0; i < 5; i++) table[i] = uniform(-10, 10);
    memset(&d, 0, sizeof d);
    d.params = "raw const double* table, int shift, double* out";
    d.body = "out[i] = twice(table[i % 5]) + (double)(i + shift)";
    d.preamble = "__device__ double twice(double v) { return 2.0 * v; }";
    d.name = "index_table";
    CHECK_OK(gpuk_elementwise_create(ctx, &d, &k));
    bt = upload(table, sizeof table);
    bo = upload(NULL, n * sizeof(double));
    CHECK_OK(gpuk_elementwise_launch(ctx, GPUK_DEFAULT_STREAM, &k, n,
                                     GPUK_ARGV(gpuk_arg_array(gpuk_at(bt, 0)), gpuk_arg_i32(shift),
                                               gpuk_arg_array(gpuk_at(bo, 0)))));
    CHECK_OK(gpuk_buffer_read(ctx, bo, 0, out, n * sizeof(double)));
    for (i = 0; out && i < n; i++) bad += out[i] != 2.0 * table[i % 5] + (double)((long long)i + shift);
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bt));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    CHECK_OK(gpuk_elementwise_destroy(ctx, &k));
    free(out);
    return TEST_PASS;
}

/* sum of squares (f32), max abs (f64), count above a threshold (u64): against the CPU, and the
   same bits on a second run and on another stream */
static int test_reductions(void) {
    float* xf = (float*)malloc(MAXN * sizeof(float));
    double* xd = (double*)malloc(MAXN * sizeof(double));
    gpuk_reduction_desc d;
    gpuk_reduction ssq, maxabs, count;
    gpuk_stream other;
    size_t s, i;
    memset(&d, 0, sizeof d);
    d.params = "const float* x";
    d.map = "x[i] * x[i]";
    d.reduce = "a + b";
    d.identity = "0.0f";
    d.type = "float";
    d.name = "sum_squares";
    CHECK_OK(gpuk_reduction_create(ctx, &d, &ssq));
    d.params = "const double* x";
    d.map = "fabs(x[i])";
    d.reduce = "fmax(a, b)";
    d.identity = "0.0";
    d.type = "double";
    d.name = "max_abs";
    CHECK_OK(gpuk_reduction_create(ctx, &d, &maxabs));
    d.params = "const double* x, double lo";
    d.map = "x[i] > lo ? 1ull : 0ull";
    d.reduce = "a + b";
    d.identity = "0";
    d.type = "uint64_t";
    d.name = "count_above";
    CHECK_OK(gpuk_reduction_create(ctx, &d, &count));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &other));
    for (s = 0; s < NSIZES + 1 && xf && xd; s++) {
        const size_t n = s < NSIZES ? sizes[s] : 0;
        const double lo = uniform(-0.5, 0.5);
        double ref_ssq = 0, ref_abs_sum = 0, ref_max = 0, got_max[2] = { -1, -1 };
        float got_ssq[3];
        unsigned long long ref_count = 0, got_count[2] = { 7, 7 };
        gpuk_buffer bf, bd, out;
        for (i = 0; i < n; i++) {
            xf[i] = (float)uniform(-1, 1);
            xd[i] = uniform(-100, 100) * (rng() % 7 == 0 ? 1e3 : 1.0);
            ref_ssq += (double)xf[i] * xf[i];
            ref_abs_sum += (double)xf[i] * xf[i];
            ref_max = fabs(xd[i]) > ref_max ? fabs(xd[i]) : ref_max;
            ref_count += xd[i] > lo;
        }
        bf = upload(n ? xf : NULL, (n ? n : 1) * sizeof(float));
        bd = upload(n ? xd : NULL, (n ? n : 1) * sizeof(double));
        out = upload(NULL, 64);
        for (i = 0; i < 3; i++) { /* twice on the default stream, then on another */
            gpuk_stream st = i < 2 ? GPUK_DEFAULT_STREAM : other;
            CHECK_OK(gpuk_reduction_launch(ctx, st, &ssq, gpuk_at(out, i), n,
                                           GPUK_ARGV(gpuk_arg_array(gpuk_at(bf, 0)))));
        }
        CHECK_OK(gpuk_stream_sync(ctx, other));
        CHECK_OK(gpuk_buffer_read(ctx, out, 0, got_ssq, sizeof got_ssq));
        for (i = 0; i < 2; i++) {
            CHECK_OK(gpuk_reduction_launch(ctx, GPUK_DEFAULT_STREAM, &maxabs, gpuk_at(out, 4 + i), n,
                                           GPUK_ARGV(gpuk_arg_array(gpuk_at(bd, 0)))));
            CHECK_OK(gpuk_reduction_launch(ctx, GPUK_DEFAULT_STREAM, &count, gpuk_at(out, 6 + i), n,
                                           GPUK_ARGV(gpuk_arg_array(gpuk_at(bd, 0)), gpuk_arg_f64(lo))));
        }
        CHECK_OK(gpuk_buffer_read(ctx, out, 32, got_max, sizeof got_max));
        CHECK_OK(gpuk_buffer_read(ctx, out, 48, got_count, sizeof got_count));
        /* f32 sum: within n float roundings of the sum of |terms| */
        if (!(fabs(got_ssq[0] - ref_ssq) <= 1e-6 + (double)n * 6e-8 * ref_abs_sum))
            printf("     sum of squares n = %zu: %.9g, CPU %.9g\n", n, (double)got_ssq[0], ref_ssq);
        CHECK(fabs(got_ssq[0] - ref_ssq) <= 1e-6 + (double)n * 6e-8 * ref_abs_sum);
        CHECK(memcmp(&got_ssq[0], &got_ssq[1], sizeof(float)) == 0); /* same bits again */
        CHECK(memcmp(&got_ssq[0], &got_ssq[2], sizeof(float)) == 0); /* and on another stream */
        CHECK(got_max[0] == ref_max && got_max[1] == ref_max); /* exact: max of exact values */
        CHECK(got_count[0] == ref_count && got_count[1] == ref_count);
        if (n == 0) CHECK(got_ssq[0] == 0.0f && got_max[0] == 0.0 && got_count[0] == 0); /* identity */
        CHECK_OK(gpuk_buffer_destroy(ctx, bf));
        CHECK_OK(gpuk_buffer_destroy(ctx, bd));
        CHECK_OK(gpuk_buffer_destroy(ctx, out));
    }
    CHECK_OK(gpuk_stream_destroy(ctx, other));
    CHECK_OK(gpuk_reduction_destroy(ctx, &ssq));
    CHECK_OK(gpuk_reduction_destroy(ctx, &maxabs));
    CHECK_OK(gpuk_reduction_destroy(ctx, &count));
    free(xf); free(xd);
    return TEST_PASS;
}

int main(void) {
    int code, v = 0;
    gpuk_desc d;
    memset(&d, 0, sizeof d);
    d.logger.func = warn_log;
    /* the toolkit's NVRTC where it is not on the library path and none is named */
    if (!getenv("GPUK_NVRTC_PATH") && access("/usr/local/cuda/lib64/libnvrtc.so.13", R_OK) == 0)
        d.nvrtc_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
    gpuk_init(&d); /* its failure is gpu_setup's to report */
    if (!gpu_setup("gpu_ufunc", 3, &ctx, &code)) return code;
    if (gpuk_nvrtc_version(&v) != GPUK_OK) {
        printf("skip gpu_ufunc: no NVRTC (%s)\n0 passed, 0 failed, 3 skipped\n", gpuk_last_error());
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    rng_seed_from_clock();
    RUN(test_saxpy_ufunc);
    RUN(test_index_and_table_ufunc);
    RUN(test_reductions);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
