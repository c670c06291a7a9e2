/* examples/14_mandelbrot_bands.c - one picture over every GPU of the machine: the Mandelbrot
   set (f64, 256 iterations, 07's kernel from gallery_kernels.cu) cut in row bands, GPU i
   computing band i. One host thread drives all GPUs: a launch only queues work, so it queues
   every band first and then waits for each (ex_time_gpus in example_util.h). The bands put together must equal GPU 0's whole
   image bit for bit. Prints each GPU's time for its band, the time of the picture on all GPUs
   against GPU 0 alone, and the speedup. Default 1024^2, --full 4096^2; --gpus N
   uses N ctxs (several may share a device: the split then runs, without a speedup, on one).
   cc -std=c99 -O2 -I.. 14_mandelbrot_bands.c -o mandelbrot_bands -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "14_mandelbrot_bands";
enum { MAX_ITER = 256, RUNS = 3, REPS = 10 };

typedef struct gpu {
    gpuk_ctx* ctx;
    gallery_kernels_kernels k;
    gpuk_buffer band; /* rows x n escape counts */
    int row0, rows;
} gpu;

typedef struct job {
    gpu* g;
    int count, n;
} job;

/* Queues every GPU's band: rows [row0, row0 + rows) of the n x n picture of [-2.25, 0.75] x
   [-1.5, 1.5]. n is a power of two, so the pixel step d = 3/n and every coordinate
   1.5 - row * d are exact in double: a band starting at 1.5 - row0 * d gives each pixel the
   same coordinates, and so the same counts, as the whole picture. */
static gpuk_result queue_bands(void* user) {
    const job* j = (const job*)user;
    const double d = 3.0 / j->n;
    gpuk_result r = GPUK_OK;
    int i;
    for (i = 0; r == GPUK_OK && i < j->count; i++) {
        gpu* g = &j->g[i];
        gpuk_grid launch = gpuk_grid_2d((size_t)j->n, (size_t)g->rows, 16, 16);
        r = gallery_kernels_mandelbrot_f64(g->ctx, &g->k, &launch, gpuk_at(g->band, 0), j->n, g->rows,
                                           -2.25, 1.5 - g->row0 * d, d, -d, MAX_ITER);
    }
    return r;
}

/* The kernels and the band's buffer, filled with poison (a count no pixel can have) so that a
   band the kernel missed cannot pass for a computed one. */
static gpuk_result gpu_setup(gpu* g, gpuk_ctx* ctx, int row0, int rows, int n, uint32_t poison) {
    size_t pixels = (size_t)rows * (size_t)n;
    gpuk_result r;
    g->ctx = ctx;
    g->row0 = row0;
    g->rows = rows;
    if ((r = gallery_kernels_load(ctx, &g->k)) != GPUK_OK) return r;
    if ((r = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = pixels * sizeof(unsigned), .label = "band" },
                                &g->band)) != GPUK_OK) return r;
    return gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, g->band, 0, poison, 4, pixels);
}

int main(int argc, char** argv) {
    gpuk_ctx* ctx[EX_MAX_GPUS];
    gpu g[EX_MAX_GPUS], one;
    ex_opts o;
    int count, i, n, bad = 0, shared = 0;
    long diff = 0;
    int rc = ex_begin_gpus(argc, argv, ex_name, "the Mandelbrot set in row bands over all GPUs", &o,
                           ctx, EX_MAX_GPUS, &count);
    unsigned *whole, *bands;
    uint8_t* rgb;
    double t_one, t_all;
    float ms[EX_MAX_GPUS], ms_one;
    size_t pixels;
    if (rc >= 0) return rc;
    n = o.full ? 4096 : 1024;
    pixels = (size_t)n * (size_t)n;
    whole = (unsigned*)malloc(pixels * sizeof(unsigned));
    bands = (unsigned*)malloc(pixels * sizeof(unsigned));
    rgb = (uint8_t*)malloc(pixels * 3);
    if (!whole || !bands || !rgb) return ex_result(0, "out of host memory");
    TRY(gpu_setup(&one, ctx[0], 0, n, n, 0xFFFFFFFFu)); /* the reference: GPU 0 alone, the whole picture */
    for (i = 0; i < count; i++) {
        int row0 = (int)((long)i * n / count), row1 = (int)((long)(i + 1) * n / count);
        TRY(gpu_setup(&g[i], ctx[i], row0, row1 - row0, n, 0xDEADBEEFu));
        if (i > 0 && gpuk_ctx_device_info(ctx[i])->ordinal == gpuk_ctx_device_info(ctx[0])->ordinal) shared = 1;
    }
    t_one = ex_time_gpus(ctx, NULL, 1, RUNS, REPS, queue_bands, &(job){ &one, 1, n }, &ms_one);
    t_all = ex_time_gpus(ctx, NULL, count, RUNS, REPS, queue_bands, &(job){ g, count, n }, ms);
    if (t_one < 0 || t_all < 0) return ex_result(0, "a launch failed");

    TRY(gpuk_buffer_read(ctx[0], one.band, 0, whole, pixels * sizeof(unsigned)));
    /* GPU 0's picture itself (07 checks the kernel against the CPU): the corner (-2.25, 1.5)
       escapes at once, c = 0 (column 3n/4, row n/2) never does */
    if (whole[0] > 1 || whole[(size_t)n / 2 * (size_t)n + (size_t)n / 4 * 3] != MAX_ITER) bad++;
    for (i = 0; i < count; i++) {
        size_t first = (size_t)g[i].row0 * (size_t)n, k, len = (size_t)g[i].rows * (size_t)n;
        TRY(gpuk_buffer_read(ctx[i], g[i].band, 0, bands + first, len * sizeof(unsigned)));
        for (k = first; k < first + len; k++) diff += bands[k] != whole[k];
        printf("GPU %d: rows %4d..%-4d %7.3f ms a picture\n", i, g[i].row0, g[i].row0 + g[i].rows - 1, ms[i]);
    }
    printf("%d GPU%s: %.3f ms a picture (wall clock, all bands done); GPU 0 alone: %.3f ms (%.3f on "
           "the GPU); speedup %.2fx%s\n", count, count > 1 ? "s" : "", t_all, t_one, ms_one, t_one / t_all,
           count == 1 ? " (one GPU: nothing to split)" : shared ? " (GPUs share a device: no speedup expected)" : "");

    ex_escape_rgb(bands, pixels, MAX_ITER, rgb);
    for (i = 0; i < count; i++) { /* a strip on the left edge in each GPU's colour marks its band */
        uint8_t c[3];
        ex_colormap((i + 0.5) / count, c);
        ex_rect(rgb, n, n, 0, g[i].row0, n / 64, g[i].row0 + g[i].rows,
                (uint32_t)c[0] << 16 | (uint32_t)c[1] << 8 | c[2]);
    }
    if (ex_png(o.out_dir, "mandelbrot_bands.png", n, n, 3, rgb) != 0) bad++;
    if (ex_end_gpus(ex_name, ctx, count)) bad++;
    free(whole);
    free(bands);
    free(rgb);
    return ex_result(bad == 0 && diff == 0, "Mandelbrot %d^2 in %d bands on %d GPUs %s GPU 0's picture bit "
                     "for bit (%ld pixels differ), %.3f ms vs %.3f ms, %.2fx", n, count, count,
                     diff ? "differs from" : "equals", diff, t_all, t_one, t_one / t_all);
}
