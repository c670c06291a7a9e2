/* examples/07_mandelbrot_julia.c - the Mandelbrot set and the Julia set of c = -0.8 + 0.156i,
   each in f32 and f64, through kernels of the gallery's own (gallery_kernels.cu, wrapped by
   tools/gpuk_embed.py); escape counts checked on sampled pixels against the CPU doing the
   same rounded operations; a coloured PNG each. Default 1024^2 x 256 and 600^2 x 3000
   iterations, --full 4096^2 x 256 and 1200^2 x 3000.
   cc -std=c99 -O2 -I.. 07_mandelbrot_julia.c -o mandelbrot_julia -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "07_mandelbrot_julia";

/* The kernel's escape_time on the CPU: one rounding per operation, as __fmul_rn/__dadd_rn, and
   C99's fma()/fmaf() (exact, one rounding) where the kernel fuses (one operation per statement,
   so no compiler fuses or splits another). */
#define CPU_ESCAPE(T, FMA, NAME)                                                             \
    static int NAME(T zr, T zi, T cr, T ci, int max_iter) {                                  \
        int i = 0;                                                                           \
        while (i < max_iter) {                                                               \
            T zr2 = zr * zr, t, twice;                                                       \
            if (FMA(zi, zi, zr2) > (T)4) break;                                              \
            t = FMA(-zi, zi, zr2);                                                           \
            t = t + cr;                                                                      \
            twice = zr + zr;                                                                 \
            zi = FMA(twice, zi, ci);                                                         \
            zr = t;                                                                          \
            i++;                                                                             \
        }                                                                                    \
        return i;                                                                            \
    }
CPU_ESCAPE(float, fmaf, escape_f32)
CPU_ESCAPE(double, fma, escape_f64)

typedef struct job {
    const char* name;
    int julia, f64, size, max_iter;
    double x0, y0, span, cr, ci; /* top-left corner, width of the square, Julia's c */
    double numba_ms;             /* a Numba reference time, f64 at the full size, 0 = none */
} job;

/* The CPU's count for pixel (px, py), in the job's precision from the same coordinates. */
static int cpu_pixel(const job* j, int px, int py) {
    double d = j->span / j->size;
    if (j->f64) {
        double x = (double)px * d, y = (double)py * -d;
        x = j->x0 + x;
        y = j->y0 + y;
        return j->julia ? escape_f64(x, y, j->cr, j->ci, j->max_iter) : escape_f64(0, 0, x, y, j->max_iter);
    } else {
        float x = (float)px * (float)d, y = (float)py * (float)-d;
        x = (float)j->x0 + x;
        y = (float)j->y0 + y;
        return j->julia ? escape_f32(x, y, (float)j->cr, (float)j->ci, j->max_iter)
                        : escape_f32(0, 0, x, y, j->max_iter);
    }
}

int main(int argc, char** argv) {
    enum { SAMPLES = 4000 };
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "Mandelbrot and Julia sets, f32 and f64", &o, &ctx);
    int m = 1024, jl = 600, ji, ok = 1, run;
    job jobs[4];
    gallery_kernels_kernels k;
    gpuk_buffer iters;
    gpuk_timer timer;
    unsigned* h;
    uint8_t* rgb;
    uint64_t seed = 7;
    if (rc >= 0) return rc;
    if (o.full) { m = 4096; jl = 1200; }
    jobs[0] = (job){ "mandelbrot_f32", 0, 0, m, 256, -2.25, 1.5, 3.0, 0, 0, 0 };
    jobs[1] = (job){ "mandelbrot_f64", 0, 1, m, 256, -2.25, 1.5, 3.0, 0, 0, 0.47 };
    jobs[2] = (job){ "julia_f32", 1, 0, jl, 3000, -1.5, 1.5, 3.0, -0.8, 0.156, 0 };
    jobs[3] = (job){ "julia_f64", 1, 1, jl, 3000, -1.5, 1.5, 3.0, -0.8, 0.156, 0.21 };
    h = (unsigned*)malloc((size_t)m * (size_t)m * sizeof(unsigned));
    rgb = (uint8_t*)malloc((size_t)m * (size_t)m * 3);
    if (!h || !rgb) return ex_result(0, "out of host memory");
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = (size_t)m * (size_t)m * sizeof(unsigned), .label = "iters" }, &iters));
    TRY(gpuk_timer_create(ctx, &timer));
    for (ji = 0; ji < 4; ji++) {
        const job* j = &jobs[ji];
        int n = j->size, s, bad = 0;
        size_t pixels = (size_t)n * (size_t)n;
        double d = j->span / n, t, cpu_ms;
        float ms = 0;
        gpuk_grid launch = gpuk_grid_2d((size_t)n, (size_t)n, 16, 16);
        char file[64];
        for (run = 0; run < 2; run++) { /* the first run warms up; the second is timed */
            TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
            if (j->julia && j->f64)
                TRY(gallery_kernels_julia_f64(ctx, &k, &launch, gpuk_at(iters, 0), n, n, j->x0, j->y0, d, -d, j->cr, j->ci, j->max_iter));
            else if (j->julia)
                TRY(gallery_kernels_julia_f32(ctx, &k, &launch, gpuk_at(iters, 0), n, n, (float)j->x0, (float)j->y0,
                                              (float)d, (float)-d, (float)j->cr, (float)j->ci, j->max_iter));
            else if (j->f64)
                TRY(gallery_kernels_mandelbrot_f64(ctx, &k, &launch, gpuk_at(iters, 0), n, n, j->x0, j->y0, d, -d, j->max_iter));
            else
                TRY(gallery_kernels_mandelbrot_f32(ctx, &k, &launch, gpuk_at(iters, 0), n, n, (float)j->x0, (float)j->y0,
                                                   (float)d, (float)-d, j->max_iter));
            TRY(gpuk_timer_stop(ctx, &timer, &ms));
        }
        TRY(gpuk_buffer_read(ctx, iters, 0, h, pixels * sizeof(unsigned)));
        t = ex_now_ms();
        for (s = 0; s < SAMPLES; s++) {
            int px = (int)(ex_rand(&seed) * n), py = (int)(ex_rand(&seed) * n);
            if (h[(size_t)py * (size_t)n + (size_t)px] != (unsigned)cpu_pixel(j, px, py)) bad++;
        }
        cpu_ms = (ex_now_ms() - t) * (double)pixels / SAMPLES;
        /* near the set's edge a count is chaotic; the same rounded operations on both sides
           should still agree everywhere, and at most 0.1% of the samples may differ */
        if (bad * 1000 > SAMPLES) ok = 0;
        printf("%-15s %5dx%-5d %4d iterations: GPU %7.3f ms, CPU ~%8.0f ms (from %d pixels), %d of them differ%s",
               j->name, n, n, j->max_iter, ms, cpu_ms, SAMPLES, bad, bad * 1000 > SAMPLES ? " (too many)" : "");
        if (o.full && j->numba_ms > 0) printf("; Numba %.2f ms", j->numba_ms);
        printf("\n");
        ex_escape_rgb(h, pixels, j->max_iter, rgb);
        snprintf(file, sizeof file, "%s.png", j->name);
        if (ex_png(o.out_dir, file, n, n, 3, rgb) != 0) ok = 0;
    }
    TRY(gpuk_ctx_destroy(ctx));
    free(h);
    free(rgb);
    return ex_result(ok, "4 fractals (Mandelbrot %d^2, Julia %d^2, f32 and f64), sampled escape counts match the CPU", m, jl);
}
