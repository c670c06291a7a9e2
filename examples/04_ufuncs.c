/* examples/04_ufuncs.c - element-wise built-ins ("ufuncs"): cos(x)^2 + sin(x)^2 on x = 0, 1,
   2, ... and SELU on normal random numbers, each timed on the GPU (gpuk timer) beside the
   same loop on the CPU, checked against double precision; a plot of both results.
   Default 2e6 / 2e5 values, --full 1e7 / 1e6.
   cc -std=c99 -O2 -I.. 04_ufuncs.c -o ufuncs -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"

static const char ex_name[] = "04_ufuncs";
static const double SELU_ALPHA = 1.6732632423543772, SELU_LAMBDA = 1.0507009873554805;

/* A 3x3 dot of colour at (x, y) of an RGB picture. */
static void dot(uint8_t* rgb, int w, int h, int x, int y, uint32_t colour) {
    ex_rect(rgb, w, h, x - 1, y - 1, x + 2, y + 2, colour);
}

int main(int argc, char** argv) {
    enum { PW = 400, PH = 300 }; /* each of the two plots */
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "cos^2+sin^2 and SELU through the built-ins", &o, &ctx);
    size_t n_cos, n_selu, i, bad_cos = 0, bad_selu = 0;
    gpuk_buffer x, y;
    gpuk_timer timer;
    float ms_cos = 0, ms_selu = 0, *hx, *hy, *cpu;
    double t0, cpu_cos, cpu_selu, worst_cos = 0, worst_selu = 0, gpu_vs_cpu = 0;
    uint8_t* rgb;
    if (rc >= 0) return rc;
    n_cos = o.full ? 10000000 : 2000000;
    n_selu = o.full ? 1000000 : 200000;
    hx = (float*)malloc(n_cos * sizeof(float));
    hy = (float*)malloc(n_cos * sizeof(float));
    cpu = (float*)malloc(n_cos * sizeof(float));
    rgb = (uint8_t*)malloc(2 * PW * PH * 3);
    if (!hx || !hy || !cpu || !rgb) return ex_result(0, "out of host memory");
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n_cos * sizeof(float), .label = "x" }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n_cos * sizeof(float), .label = "y" }, &y));
    TRY(gpuk_timer_create(ctx, &timer));

    /* cos^2 + sin^2 on x = 0, 1, ..., n - 1 (exact in float below 2^24) */
    TRY(gpuk_iota_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(x, 0), n_cos, 0.0f, 1.0f));
    TRY(gpuk_cos2_plus_sin2_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), gpuk_at(x, 0), n_cos)); /* JIT */
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_cos2_plus_sin2_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), gpuk_at(x, 0), n_cos));
    TRY(gpuk_timer_stop(ctx, &timer, &ms_cos));
    TRY(gpuk_buffer_read(ctx, x, 0, hx, n_cos * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, y, 0, hy, n_cos * sizeof(float)));
    t0 = ex_now_ms();
    for (i = 0; i < n_cos; i++) {
        float c = cosf(hx[i]), s = sinf(hx[i]);
        cpu[i] = c * c + s * s;
    }
    cpu_cos = ex_now_ms() - t0;
    for (i = 0; i < n_cos; i++) { /* the exact answer is 1; float sin/cos miss by a few ulp */
        double c = cos((double)hx[i]), s = sin((double)hx[i]), err = fabs((double)hy[i] - (c * c + s * s));
        if (hx[i] != (float)i || !(err <= 4e-6)) bad_cos++;
        if (err > worst_cos) worst_cos = err;
        if (fabs((double)hy[i] - cpu[i]) > gpu_vs_cpu) gpu_vs_cpu = fabs((double)hy[i] - cpu[i]);
    }
    printf("cos(x)^2 + sin(x)^2 on %zu floats: GPU %.3f ms, CPU %.1f ms (%.0fx); largest error %.2g\n",
           n_cos, ms_cos, cpu_cos, cpu_cos / ms_cos, worst_cos);

    /* SELU on standard normal numbers (Philox, seed 12) */
    TRY(gpuk_random_normal_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(x, 0), n_selu, 12, 0));
    TRY(gpuk_selu_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), gpuk_at(x, 0), n_selu,
                      (float)SELU_ALPHA, (float)SELU_LAMBDA)); /* JIT */
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_selu_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), gpuk_at(x, 0), n_selu,
                      (float)SELU_ALPHA, (float)SELU_LAMBDA));
    TRY(gpuk_timer_stop(ctx, &timer, &ms_selu));
    TRY(gpuk_buffer_read(ctx, x, 0, hx, n_selu * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, y, 0, hy, n_selu * sizeof(float)));
    t0 = ex_now_ms();
    for (i = 0; i < n_selu; i++)
        cpu[i] = (float)SELU_LAMBDA * (hx[i] > 0 ? hx[i] : (float)SELU_ALPHA * expf(hx[i]) - (float)SELU_ALPHA);
    cpu_selu = ex_now_ms() - t0;
    for (i = 0; i < n_selu; i++) {
        double v = hx[i], ref = SELU_LAMBDA * (v > 0 ? v : SELU_ALPHA * exp(v) - SELU_ALPHA);
        double err = fabs((double)hy[i] - ref);
        if (!(err <= 2e-6 * (fabs(ref) + 1.0))) bad_selu++;
        if (err > worst_selu) worst_selu = err;
        if (fabs((double)hy[i] - cpu[i]) > gpu_vs_cpu) gpu_vs_cpu = fabs((double)hy[i] - cpu[i]);
    }
    printf("SELU on %zu floats: GPU %.3f ms, CPU %.2f ms (%.0fx); largest error %.2g\n", n_selu, ms_selu,
           cpu_selu, cpu_selu / ms_selu, worst_selu);
    printf("GPU and CPU float results differ by at most %.2g\n", gpu_vs_cpu);

    /* left: SELU(x) for x in [-4, 4); right: cos^2 + sin^2 - 1 in units of 1e-7 for the first x */
    memset(rgb, 255, 2 * PW * PH * 3);
    ex_rect(rgb, 2 * PW, PH, 0, PH * 3 / 4, PW, PH * 3 / 4 + 1, 0x999999);   /* y = 0 */
    ex_rect(rgb, 2 * PW, PH, PW * 3 / 2, 0, PW * 3 / 2 + 1, PH, 0x999999);   /* x = 0 */
    ex_rect(rgb, 2 * PW, PH, PW, PH / 2, 2 * PW, PH / 2 + 1, 0x999999);      /* error 0 */
    for (i = 0; i < n_selu && i < 5000; i++)
        dot(rgb, 2 * PW, PH, (int)((hx[i] + 4.0f) / 8.0f * PW), (int)(PH * 3 / 4 - hy[i] * PH / 6.0f), 0x2166ac);
    TRY(gpuk_iota_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(x, 0), PW, 0.0f, 1.0f));
    TRY(gpuk_cos2_plus_sin2_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), gpuk_at(x, 0), PW));
    TRY(gpuk_buffer_read(ctx, y, 0, hy, PW * sizeof(float)));
    for (i = 0; i < PW; i++)
        dot(rgb, 2 * PW, PH, PW + (int)i, (int)(PH / 2 - ((double)hy[i] - 1.0) * 1e7 * PH / 8.0), 0xb2182b);
    if (ex_png(o.out_dir, "ufuncs.png", 2 * PW, PH, 3, rgb) != 0) bad_cos++;
    TRY(gpuk_ctx_destroy(ctx));
    free(hx); free(hy); free(cpu); free(rgb);
    return ex_result(bad_cos + bad_selu == 0, "cos2+sin2 %zu and SELU %zu values off (GPU %.3f / %.3f ms, CPU %.1f / %.1f ms)",
                     bad_cos, bad_selu, ms_cos, ms_selu, cpu_cos, cpu_selu);
}
