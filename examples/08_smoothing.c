/* examples/08_smoothing.c - 3x3 mean filter of a generated noisy image through a kernel of the
   gallery's own (edge pixels average their neighbours inside the image); every pixel
   checked against the CPU; before and after PNGs. Default 1024^2, --full 4096^2.
   The built-in gpuk_stencil3x3_f32 with nine weights of 1/9 and GPUK_BOUNDARY_SKIP is the same
   filter (its last bits may differ: it scales a weighted sum instead of dividing by the count).
   cc -std=c99 -O2 -I.. 08_smoothing.c -o smoothing -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "08_smoothing";

/* The kernel on the CPU: neighbours added row by row, left to right, then one division. */
static void cpu_smooth(const float* in, float* out, int w, int h) {
    int px, py, x, y;
    for (py = 0; py < h; py++)
        for (px = 0; px < w; px++) {
            float s = 0;
            int count = 0;
            for (y = py - 1; y <= py + 1; y++)
                for (x = px - 1; x <= px + 1; x++)
                    if (y >= 0 && y < h && x >= 0 && x < w) { s += in[(size_t)y * (size_t)w + (size_t)x]; count++; }
            out[(size_t)py * (size_t)w + (size_t)px] = s / (float)count;
        }
}

/* Gray PNG of values in [0, 1]. */
static int gray_png(const char* dir, const char* file, const float* v, int w, int h, uint8_t* tmp) {
    size_t i, n = (size_t)w * (size_t)h;
    for (i = 0; i < n; i++) tmp[i] = (uint8_t)(255.0f * (v[i] < 0 ? 0 : v[i] > 1 ? 1 : v[i]) + 0.5f);
    return ex_png(dir, file, w, h, 1, tmp);
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "3x3 smoothing of an image", &o, &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer in, out;
    gpuk_timer timer;
    gpuk_grid launch;
    float *img, *gpu, *cpu, ms = 0;
    uint8_t* tmp;
    int n, x, y, run, ok;
    size_t i, pixels, bad = 0;
    double t, cpu_ms, worst = 0;
    uint64_t seed = 42;
    if (rc >= 0) return rc;
    n = o.full ? 4096 : 1024;
    pixels = (size_t)n * (size_t)n;
    img = (float*)malloc(pixels * sizeof(float));
    gpu = (float*)malloc(pixels * sizeof(float));
    cpu = (float*)malloc(pixels * sizeof(float));
    tmp = (uint8_t*)malloc(pixels);
    if (!img || !gpu || !cpu || !tmp) return ex_result(0, "out of host memory");
    for (y = 0; y < n; y++) /* rings and a bright square, with salt-and-pepper-ish noise */
        for (x = 0; x < n; x++) {
            double u = (double)x / n - 0.5, v = (double)y / n - 0.5, r = sqrt(u * u + v * v);
            double base = 0.5 + 0.3 * cos(40.0 * r) * (r < 0.45) + 0.3 * (fabs(u - 0.25) < 0.1 && fabs(v + 0.25) < 0.1);
            img[(size_t)y * (size_t)n + (size_t)x] = (float)(base + 0.6 * (ex_rand(&seed) - 0.5));
        }
    launch = gpuk_grid_2d((size_t)n, (size_t)n, 16, 16);
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { img, pixels * sizeof(float) }, .label = "image" }, &in));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = pixels * sizeof(float), .label = "smoothed" }, &out));
    TRY(gpuk_timer_create(ctx, &timer));
    for (run = 0; run < 2; run++) { /* warm-up, then timed */
        TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
        TRY(gallery_kernels_smooth3x3_f32(ctx, &k, &launch, gpuk_at(in, 0), gpuk_at(out, 0), n, n));
        TRY(gpuk_timer_stop(ctx, &timer, &ms));
    }
    TRY(gpuk_buffer_read(ctx, out, 0, gpu, pixels * sizeof(float)));
    t = ex_now_ms();
    cpu_smooth(img, cpu, n, n);
    cpu_ms = ex_now_ms() - t;
    for (i = 0; i < pixels; i++) {
        double e = fabs((double)gpu[i] - cpu[i]);
        if (!(e <= 1e-6)) bad++;
        if (e > worst) worst = e;
    }
    printf("3x3 mean of a %dx%d float image: GPU %.3f ms (%.0f GB/s counting 8 bytes a pixel), CPU %.1f ms; "
           "largest difference %.2g\n", n, n, ms, 8.0 * (double)pixels / ms / 1e6, cpu_ms, worst);
    ok = bad == 0;
    if (gray_png(o.out_dir, "smoothing_before.png", img, n, n, tmp) != 0) ok = 0;
    if (gray_png(o.out_dir, "smoothing_after.png", gpu, n, n, tmp) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    free(img); free(gpu); free(cpu); free(tmp);
    return ex_result(ok, "%zu of %zu pixels differ from the CPU (GPU %.3f ms, CPU %.1f ms)", bad, pixels, ms, cpu_ms);
}
