/* examples/10_matrix_multiply.c - C = A B in float through the built-in gpuk_gemm_f32 on
   random matrices (gpuk_random_uniform_f32), GFLOP/s from gpuk's timer, sampled entries of C
   checked against double-precision dot products on the CPU; a heat map of C.
   Default 1024^3, --full 4096^3.
   cc -std=c99 -O2 -I.. 10_matrix_multiply.c -o matrix_multiply -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <float.h>

static const char ex_name[] = "10_matrix_multiply";

int main(int argc, char** argv) {
    enum { SAMPLES = 2000, RUNS = 5, PIC = 512 };
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "matrix multiply through gpuk_gemm_f32", &o, &ctx);
    gpuk_buffer a, b, c;
    gpuk_timer timer;
    size_t n, s, bad = 0;
    float *ha, *hb, *hc, ms, best = 1e30f;
    double t, cpu_ms, worst = 0, lo = 1e300, hi = -1e300;
    uint64_t seed = 99;
    int run, ok, px, py, f;
    uint8_t* rgb;
    float* pic;
    if (rc >= 0) return rc;
    n = o.full ? 4096 : 1024;
    ha = (float*)malloc(n * n * sizeof(float));
    hb = (float*)malloc(n * n * sizeof(float));
    hc = (float*)malloc(n * n * sizeof(float));
    pic = (float*)malloc(PIC * PIC * sizeof(float));
    if (!ha || !hb || !hc || !pic) return ex_result(0, "out of host memory");
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * n * sizeof(float), .label = "A" }, &a));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * n * sizeof(float), .label = "B" }, &b));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * n * sizeof(float), .label = "C" }, &c));
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_random_uniform_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(a, 0), n * n, 1, 0));
    TRY(gpuk_random_uniform_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(b, 0), n * n, 2, 0));
    for (run = 0; run <= RUNS; run++) { /* run 0 loads the kernel (JIT); the best of the rest counts */
        TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
        TRY(gpuk_gemm_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at2d(c, 0, n, n, 0), 1.0f, gpuk_at2d(a, 0, n, n, 0), GPUK_OP_N,
                          gpuk_at2d(b, 0, n, n, 0), GPUK_OP_N, 0.0f));
        TRY(gpuk_timer_stop(ctx, &timer, &ms));
        if (run > 0 && ms < best) best = ms;
    }
    TRY(gpuk_buffer_read(ctx, a, 0, ha, n * n * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, b, 0, hb, n * n * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, c, 0, hc, n * n * sizeof(float)));
    t = ex_now_ms();
    for (s = 0; s < SAMPLES; s++) {
        size_t i = (size_t)(ex_rand(&seed) * (double)n), j = (size_t)(ex_rand(&seed) * (double)n), l;
        double ref = 0, mag = 0, err;
        for (l = 0; l < n; l++) {
            ref += (double)ha[i * n + l] * hb[l * n + j];
            mag += fabs((double)ha[i * n + l] * hb[l * n + j]);
        }
        /* float dot products of length n: each of n additions may round */
        err = fabs(hc[i * n + j] - ref);
        if (!(err <= (double)(n + 2) * FLT_EPSILON * mag)) bad++;
        if (err / mag > worst) worst = err / mag;
    }
    cpu_ms = (ex_now_ms() - t) * (double)(n * n) / SAMPLES;
    printf("C = A B, %zux%zu times %zux%zu (float): GPU %.3f ms, %.0f GFLOP/s; naive CPU loop ~%.0f ms (from %d entries)\n",
           n, n, n, n, best, 2.0 * (double)n * n * n / best / 1e6, cpu_ms, SAMPLES);
    printf("%d sampled entries of C against double: largest error %.2g of the sum of |a b|\n", SAMPLES, worst);
    f = (int)(n / PIC); /* the picture: means of f x f blocks of C */
    for (py = 0; py < PIC; py++)
        for (px = 0; px < PIC; px++) {
            double sum = 0;
            int y, x;
            for (y = 0; y < f; y++)
                for (x = 0; x < f; x++) sum += hc[((size_t)py * f + y) * n + (size_t)px * f + x];
            pic[py * PIC + px] = (float)(sum / (f * f));
            if (pic[py * PIC + px] < lo) lo = pic[py * PIC + px];
            if (pic[py * PIC + px] > hi) hi = pic[py * PIC + px];
        }
    ok = bad == 0;
    rgb = ex_field_rgb(pic, PIC, PIC, lo, hi);
    if (!rgb || ex_png(o.out_dir, "matrix_c.png", PIC, PIC, 3, rgb) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    free(ha); free(hb); free(hc); free(pic); free(rgb);
    return ex_result(ok, "%zu^3 GEMM at %.0f GFLOP/s (%.3f ms), %zu of %d sampled entries off", n,
                     2.0 * (double)n * n * n / best / 1e6, best, bad, SAMPLES);
}
