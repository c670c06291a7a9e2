/* examples/06_monte_carlo_pi.c - pi from random points in the unit square: the built-in
   Philox generator makes x and y, a kernel of the gallery's own marks the points inside the
   quarter circle, the built-in sum counts them, batch by batch. The CPU counts the same
   points; the estimate must lie within 5 standard errors of pi. A picture of the first points.
   Default 2^24 points, --full 2^30.
   cc -std=c99 -O2 -I.. 06_monte_carlo_pi.c -o monte_carlo_pi -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "06_monte_carlo_pi";

int main(int argc, char** argv) {
    enum { BATCH = 1 << 24, PIC = 512 };
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "Monte Carlo estimate of pi", &o, &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer x, y, hit, count;
    gpuk_timer timer;
    gpuk_grid launch = gpuk_grid_1d(BATCH, 256);
    gpuk_stream s0 = GPUK_DEFAULT_STREAM;
    float *hx, *hy, ms, gpu_ms = 0;
    uint64_t total, done, inside = 0, cpu_inside = 0;
    double t, cpu_ms = 0, pi, se;
    uint8_t* rgb;
    size_t i;
    int ok;
    if (rc >= 0) return rc;
    total = o.full ? (uint64_t)1 << 30 : (uint64_t)1 << 24;
    hx = (float*)malloc(BATCH * sizeof(float));
    hy = (float*)malloc(BATCH * sizeof(float));
    rgb = (uint8_t*)malloc(PIC * PIC * 3);
    if (!hx || !hy || !rgb) return ex_result(0, "out of host memory");
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = BATCH * sizeof(float), .label = "x" }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = BATCH * sizeof(float), .label = "y" }, &y));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = BATCH * sizeof(uint32_t), .label = "hit" }, &hit));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof(uint32_t), .label = "count" }, &count));
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_kernels_load(ctx, "random_uniform_f32, sum_u32")); /* JIT now, not in the timing */
    memset(rgb, 255, PIC * PIC * 3);
    for (done = 0; done < total; done += BATCH) {
        unsigned m = (unsigned)(total - done < BATCH ? total - done : BATCH);
        uint32_t c = 0, cc = 0;
        /* x and y: two Philox streams (seeds 1 and 2), element offset = points so far */
        TRY(gpuk_timer_start(ctx, s0, &timer));
        TRY(gpuk_random_uniform_f32(ctx, s0, gpuk_at(x, 0), m, 1, done));
        TRY(gpuk_random_uniform_f32(ctx, s0, gpuk_at(y, 0), m, 2, done));
        TRY(gallery_kernels_in_circle(ctx, &k, &launch, gpuk_at(x, 0), gpuk_at(y, 0), gpuk_at(hit, 0), m));
        TRY(gpuk_sum_u32(ctx, s0, gpuk_at(count, 0), gpuk_at(hit, 0), m));
        TRY(gpuk_timer_stop(ctx, &timer, &ms));
        gpu_ms += ms;
        TRY(gpuk_buffer_read(ctx, count, 0, &c, sizeof c));
        TRY(gpuk_buffer_read(ctx, x, 0, hx, m * sizeof(float)));
        TRY(gpuk_buffer_read(ctx, y, 0, hy, m * sizeof(float)));
        t = ex_now_ms();
        for (i = 0; i < m; i++) cc += (double)hx[i] * hx[i] + (double)hy[i] * hy[i] < 1.0;
        cpu_ms += ex_now_ms() - t;
        if (done == 0) /* the first 20000 points: inside blue, outside orange */
            for (i = 0; i < 20000 && i < m; i++) {
                int px = (int)(hx[i] * PIC), py = PIC - 1 - (int)(hy[i] * PIC);
                ex_rect(rgb, PIC, PIC, px - 1, py - 1, px + 2, py + 2,
                        (double)hx[i] * hx[i] + (double)hy[i] * hy[i] < 1.0 ? 0x2171b5 : 0xfd8d3c);
            }
        inside += c;
        cpu_inside += cc;
    }
    pi = 4.0 * (double)inside / (double)total;
    se = 4.0 * sqrt(0.25 * EX_PI * (1 - 0.25 * EX_PI) / (double)total);
    printf("%llu points, %llu inside: pi ~ %.7f (error %.2g, standard error %.2g)\n", (unsigned long long)total,
           (unsigned long long)inside, pi, pi - EX_PI, se);
    printf("GPU %.2f ms (%.2f Gpoints/s; generate, test, count), CPU count of the same points %.1f ms\n", gpu_ms,
           (double)total / gpu_ms / 1e6, cpu_ms);
    ok = inside == cpu_inside && fabs(pi - EX_PI) < 5 * se;
    if (inside != cpu_inside)
        printf("MISMATCH: the CPU counts %llu inside\n", (unsigned long long)cpu_inside);
    if (ex_png(o.out_dir, "monte_carlo_pi.png", PIC, PIC, 3, rgb) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    free(hx); free(hy); free(rgb);
    return ex_result(ok, "pi ~ %.6f from %llu points (GPU %.2f ms), count equal to the CPU's", pi,
                     (unsigned long long)total, gpu_ms);
}
