/* tests/gpu/gpu_one_family.c - a program built with one family of built-ins (GPUK_ONLY_REDUCE):
   its kernels unpack, load and compute (sum and dot of f32 and f64 against float64 CPU sums on
   fresh random inputs), and the families it leaves out are refused by name at run time
   (gpuk_kernels_load) as they are at build time (their calls are not declared: the #if below
   fails the build if one is). Skipped where no driver or GPU exists. */
#define _GNU_SOURCE
#define GPUK_ONLY_REDUCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>

#if !defined(GPUK__FAMILY_REDUCE) || defined(GPUK__FAMILY_SCAN) || defined(GPUK__FAMILY_GEMM) || \
    defined(GPUK__FAMILY_ELEMENTWISE)
#error GPUK_ONLY_REDUCE must keep the reductions alone
#endif

static gpuk_ctx* ctx;

static int test_sums_and_dots_of_the_one_family(void) {
    const size_t n = ((size_t)1 << 20) + 7;
    float* xf = (float*)malloc(n * sizeof *xf);
    float* yf = (float*)malloc(n * sizeof *yf);
    double* xd = (double*)malloc(n * sizeof *xd);
    double wsum = 0, wdot = 0, mag = 0, got[2] = { -1, -1 };
    float gotf[2] = { -1, -1 };
    gpuk_buffer bx = { 0 }, by = { 0 }, bd = { 0 }, out = { 0 };
    size_t i, kept;
    for (i = 0; i < n; i++) {
        xf[i] = (float)uniform(-1, 1);
        yf[i] = (float)uniform(-1, 1);
        xd[i] = uniform(-100, 100);
    }
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { xf, n * sizeof *xf } }, &bx));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { yf, n * sizeof *yf } }, &by));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { xd, n * sizeof *xd } }, &bd));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 16 }, &out));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, out, 0, 0xFF, 1, 16)); /* NaN poison */
    CHECK_OK(gpuk_sum_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(out, 0), gpuk_at(bx, 0), n));
    CHECK_OK(gpuk_dot_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(out, 1), gpuk_at(bx, 0), gpuk_at(by, 0), n));
    CHECK_OK(gpuk_buffer_read(ctx, out, 0, gotf, sizeof gotf));
    for (i = 0; i < n; i++) { wsum += xf[i]; wdot += (double)xf[i] * yf[i]; mag += fabs(xf[i]); }
    CHECK(fabs(gotf[0] - wsum) <= 8 * (log2((double)n) + 64) * 5.96e-8 * mag);
    CHECK(fabs(gotf[1] - wdot) <= 8 * (log2((double)n) + 64) * 5.96e-8 * mag);
    printf("     sum_f32 %.6g (CPU %.6g), dot_f32 %.6g (CPU %.6g)\n", gotf[0], wsum, gotf[1], wdot);
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, out, 0, 0xFF, 1, 16));
    CHECK_OK(gpuk_sum_f64(ctx, GPUK_DEFAULT_STREAM, gpuk_at(out, 0), gpuk_at(bd, 0), n));
    CHECK_OK(gpuk_buffer_read(ctx, out, 0, got, 8));
    for (wsum = 0, mag = 0, i = 0; i < n; i++) { wsum += xd[i]; mag += fabs(xd[i]); }
    CHECK(fabs(got[0] - wsum) <= 8 * (log2((double)n) + 64) * 1.11e-16 * mag);
    printf("     sum_f64 %.12g (CPU %.12g)\n", got[0], wsum);
    CHECK(gpuk_kernels_loaded(ctx) == 3);
    /* the families left out: refused by name */
    CHECK_RESULT(gpuk_kernels_load(ctx, "scan_inclusive_f32"), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("a family this program leaves out");
    CHECK_RESULT(gpuk_kernels_load(ctx, "gemm_*"), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_kernels_load(ctx, "*")); /* every kernel it has, and no other */
    for (i = 0, kept = 0; i < GPUK__KERNEL_COUNT; i++) kept += gpuk__builtin_ptx_of((int)i)->pieces != NULL;
    CHECK(kept > 10 && kept < GPUK__KERNEL_COUNT / 2);
    CHECK(gpuk_kernels_loaded(ctx) == (int)kept);
    gpuk_buffer_destroy(ctx, bx);
    gpuk_buffer_destroy(ctx, by);
    gpuk_buffer_destroy(ctx, bd);
    gpuk_buffer_destroy(ctx, out);
    free(xf);
    free(yf);
    free(xd);
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (!gpu_setup("gpu_one_family", 1, &ctx, &code)) return code;
    RUN(test_sums_and_dots_of_the_one_family);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
