/* examples/25_picture_histogram.c - the histogram of a picture, and the picture equalized by
   it: a view of the Mandelbrot set's seahorse valley as brightness sqrt(escape count / limit)
   in [0, 1], most of it dark. gpuk_histogram_f32 counts it into 256 bins of [0, 1), and apart
   from them the pixels at or above 1 (inside the set); the host turns the counts into each
   bin's share of the pixels at or below it, and a kernel of the gallery's own maps every pixel
   through that table (histogram equalization), which spreads the dark tones over the whole
   range. The histogram of the result is counted again. The CPU bins by the rule
   gpuk_histogram_f32 documents and maps by the same table: both histograms and the equalized
   picture must match bit for bit. Pictures before and after, and both histograms.
   Default 1024 x 1024 pixels, --full 4096 x 4096.
   cc -std=c99 -O2 -I.. 25_picture_histogram.c -o picture_histogram -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "25_picture_histogram";

enum { BINS = 256, LIMIT = 2000, CHART_W = 800, CHART_H = 400 };

/* The slot gpuk_histogram_f32 counts v in over [0, 1): its bin, BINS below 0, BINS + 1 at or
   above 1, BINS + 2 NaN. Each step rounded to float, as the library documents (C's float
   arithmetic rounds each operation so). */
static uint32_t cpu_slot(float v) {
    const float lo = 0.0f, hi = 1.0f, scale = (float)BINS / (hi - lo);
    float t;
    uint32_t b;
    if (v != v) return BINS + 2;
    if (v < lo) return BINS;
    if (v >= hi) return BINS + 1;
    t = (v - lo) * scale;
    b = (uint32_t)t;
    return b < BINS ? b : BINS - 1;
}

/* counts (BINS + 3) of v on the CPU; 1 where they equal the GPU's got, else 0 (said) */
static int same_counts(const char* what, const float* v, size_t n, const uint64_t* got) {
    uint64_t want[BINS + 3] = { 0 };
    size_t i;
    for (i = 0; i < n; i++) want[cpu_slot(v[i])]++;
    for (i = 0; i < BINS + 3; i++)
        if (want[i] != got[i]) {
            printf("MISMATCH: %s, slot %zu: GPU %llu, CPU %llu\n", what, i,
                   (unsigned long long)got[i], (unsigned long long)want[i]);
            return 0;
        }
    return 1;
}

/* Two histograms side by side as bars, each scaled to its own tallest bin */
static void draw_histograms(uint8_t* rgb, const uint64_t* before, const uint64_t* after) {
    const int panel = CHART_W / 2, base = CHART_H - 10;
    int h, b;
    memset(rgb, 255, (size_t)CHART_W * CHART_H * 3);
    for (h = 0; h < 2; h++) {
        const uint64_t* c = h ? after : before;
        uint64_t top = 1;
        for (b = 0; b < BINS; b++) top = c[b] > top ? c[b] : top;
        for (b = 0; b < BINS; b++) {
            const int x0 = h * panel + 10 + b * (panel - 20) / BINS;
            const int x1 = h * panel + 10 + (b + 1) * (panel - 20) / BINS;
            const int tall = (int)((double)(base - 10) * (double)c[b] / (double)top + 0.5);
            ex_rect(rgb, CHART_W, CHART_H, x0, base - tall, x1, base, h ? 0xe6550d : 0x3182bd);
        }
        ex_rect(rgb, CHART_W, CHART_H, h * panel + 10, base, h * panel + panel - 10, base + 2,
                0x636363);
    }
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "a picture's histogram and its equalization", &o,
                      &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer iters, v, out, counts, levels;
    gpuk_timer timer;
    gpuk_stream s0 = GPUK_DEFAULT_STREAM;
    uint64_t before[BINS + 3], after[BINS + 3], below = 0, in_range;
    uint64_t dark_before = 0, dark_after = 0;
    float level[BINS + 2], *hv, *hout, ms_hist = 0, ms_eq = 0;
    size_t n, i, bad = 0;
    uint8_t* gray;
    int side, b, rep, ok = 1;
    if (rc >= 0) return rc;
    side = o.full ? 4096 : 1024;
    n = (size_t)side * (size_t)side;
    hv = (float*)malloc(n * 4);
    hout = (float*)malloc(n * 4);
    gray = (uint8_t*)malloc(n > (size_t)CHART_W * CHART_H * 3 ? n : (size_t)CHART_W * CHART_H * 3);
    if (!hv || !hout || !gray) return ex_result(0, "out of host memory");
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "iters" }, &iters));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "picture" }, &v));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "equalized" }, &out));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (BINS + 3) * 8, .label = "counts" },
                           &counts));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (BINS + 2) * 4, .label = "levels" },
                           &levels));
    TRY(gpuk_timer_create(ctx, &timer));
    { /* the picture: a 0.004-wide view of the seahorse valley, from -0.749 + 0.110i */
        const gpuk_grid launch2 = gpuk_grid_2d((size_t)side, (size_t)side, 16, 16);
        const gpuk_grid launch = gpuk_grid_1d(n, 256);
        const float d = 0.004f / (float)side;
        TRY(gallery_kernels_mandelbrot_f32(ctx, &k, &launch2, gpuk_at(iters, 0), side, side,
                                           -0.749f, 0.110f, d, -d, LIMIT));
        TRY(gallery_kernels_brightness_f32(ctx, &k, &launch, gpuk_at(iters, 0), gpuk_at(v, 0),
                                           LIMIT, (unsigned)n));
    }
    for (rep = 0; rep < 2; rep++) { /* the second time round is timed */
        TRY(gpuk_timer_start(ctx, s0, &timer));
        TRY(gpuk_histogram_f32(ctx, s0, gpuk_at(counts, 0), BINS, 0.0f, 1.0f, gpuk_at(v, 0), n));
        TRY(gpuk_timer_stop(ctx, &timer, &ms_hist));
    }
    TRY(gpuk_buffer_read(ctx, counts, 0, before, sizeof before));
    /* the table: a bin's share of the in-range pixels at or below it; below the range 0, at or
       above it (inside the set) 1 */
    in_range = n - before[BINS] - before[BINS + 1] - before[BINS + 2];
    for (b = 0; b < BINS; b++) {
        below += before[b];
        level[b] = in_range ? (float)((double)below / (double)in_range) : 0.0f;
    }
    level[BINS] = 0.0f;
    level[BINS + 1] = 1.0f;
    TRY(gpuk_buffer_write(ctx, levels, 0, level, sizeof level));
    for (rep = 0; rep < 2; rep++) {
        const gpuk_grid launch = gpuk_grid_1d(n, 256);
        TRY(gpuk_timer_start(ctx, s0, &timer));
        TRY(gallery_kernels_equalize_f32(ctx, &k, &launch, gpuk_at(v, 0), gpuk_at(levels, 0),
                                         gpuk_at(out, 0), BINS, 0.0f, 1.0f, (unsigned)n));
        TRY(gpuk_timer_stop(ctx, &timer, &ms_eq));
    }
    TRY(gpuk_histogram_f32(ctx, s0, gpuk_at(counts, 0), BINS, 0.0f, 1.0f, gpuk_at(out, 0), n));
    TRY(gpuk_buffer_read(ctx, counts, 0, after, sizeof after));
    TRY(gpuk_buffer_read(ctx, v, 0, hv, n * 4));
    TRY(gpuk_buffer_read(ctx, out, 0, hout, n * 4));

    ok &= same_counts("the picture", hv, n, before);
    for (i = 0; i < n; i++) bad += memcmp(&hout[i], &level[cpu_slot(hv[i])], 4) != 0;
    if (bad) { printf("MISMATCH: %zu of %zu equalized pixels\n", bad, n); ok = 0; }
    ok &= same_counts("the equalized picture", hout, n, after);
    for (b = 0; b < BINS / 10; b++) { dark_before += before[b]; dark_after += after[b]; }
    printf("%dx%d picture: %llu pixels inside the set (at or above the range); in the darkest "
           "tenth of the range %llu before, %llu after; histogram %.3f ms, equalization %.3f "
           "ms\n", side, side, (unsigned long long)before[BINS + 1],
           (unsigned long long)dark_before, (unsigned long long)dark_after, ms_hist, ms_eq);
    for (i = 0; i < n; i++) gray[i] = (uint8_t)(hv[i] * 255.0f + 0.5f);
    if (ex_png(o.out_dir, "picture_before.png", side, side, 1, gray) != 0) ok = 0;
    for (i = 0; i < n; i++) gray[i] = (uint8_t)(hout[i] * 255.0f + 0.5f);
    if (ex_png(o.out_dir, "picture_equalized.png", side, side, 1, gray) != 0) ok = 0;
    draw_histograms(gray, before, after);
    if (ex_png(o.out_dir, "picture_histograms.png", CHART_W, CHART_H, 3, gray) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    free(hv); free(hout); free(gray);
    return ex_result(ok, "%dx%d picture: histograms before and after equalization and the "
                     "equalized picture match the CPU", side, side);
}
