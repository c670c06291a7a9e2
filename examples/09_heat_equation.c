/* examples/09_heat_equation.c - the 2D heat equation, explicit 5-point scheme with a fixed
   (Dirichlet) border: the top edge held at 1, the others at 0, a hot disc at the start. One
   kernel launch of the gallery's own per step, buffers swapped between steps; a PNG of the
   field every few steps; checked against the CPU doing the same rounded steps.
   Default 256^2, 2000 steps, a PNG every 500; --full 1024^2, 20000 steps, every 4000 (the
   CPU check then covers the first 200 steps).
   cc -std=c99 -O2 -I.. 09_heat_equation.c -o heat_equation -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "09_heat_equation";
static const float R = 0.2f; /* k dt / h^2: stable up to 1/4 */

/* One step on the CPU, one rounding per operation, in the kernel's order. */
static void cpu_step(const float* u, float* v, int n) {
    int x, y;
    for (y = 0; y < n; y++)
        for (x = 0; x < n; x++) {
            size_t i = (size_t)y * (size_t)n + (size_t)x, w = (size_t)n;
            float sum4, c4, lap, d;
            if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { v[i] = u[i]; continue; }
            sum4 = u[i - 1] + u[i + 1];
            sum4 = sum4 + u[i - w];
            sum4 = sum4 + u[i + w];
            c4 = 4.0f * u[i];
            lap = sum4 - c4;
            d = R * lap;
            v[i] = u[i] + d;
        }
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "2D heat equation, explicit 5-point scheme", &o, &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer buf[2];
    gpuk_timer timer;
    gpuk_grid launch;
    int n, steps, every, check_steps, step, x, y, ok = 1, checked = 0;
    size_t i, cells;
    float *u0, *a, *b, *field, ms, gpu_ms = 0;
    double t, cpu_ms, worst = 0, lo = 1, hi = 0;
    if (rc >= 0) return rc;
    n = o.full ? 1024 : 256;
    steps = o.full ? 20000 : 2000;
    every = o.full ? 4000 : 500;
    check_steps = o.full ? 200 : steps;
    cells = (size_t)n * (size_t)n;
    u0 = (float*)calloc(cells, sizeof(float));
    a = (float*)malloc(cells * sizeof(float));
    b = (float*)malloc(cells * sizeof(float));
    field = (float*)malloc(cells * sizeof(float));
    if (!u0 || !a || !b || !field) return ex_result(0, "out of host memory");
    for (x = 0; x < n; x++) u0[x] = 1.0f; /* row 0, the top edge, is held hot */
    for (y = 1; y < n - 1; y++)
        for (x = 1; x < n - 1; x++) {
            double dx = (double)x / n - 0.6, dy = (double)y / n - 0.6;
            if (dx * dx + dy * dy < 0.02) u0[(size_t)y * (size_t)n + (size_t)x] = 1.0f;
        }
    launch = gpuk_grid_2d((size_t)n, (size_t)n, 16, 16);
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { u0, cells * sizeof(float) }, .label = "u" }, &buf[0]));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cells * sizeof(float), .label = "v" }, &buf[1]));
    TRY(gpuk_timer_create(ctx, &timer));
    /* the CPU's reference after check_steps steps */
    memcpy(a, u0, cells * sizeof(float));
    t = ex_now_ms();
    for (step = 0; step < check_steps; step++) { float* s; cpu_step(a, b, n); s = a; a = b; b = s; }
    cpu_ms = ex_now_ms() - t;
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    for (step = 0; step <= steps; step++) {
        if (step == check_steps || step % every == 0) { /* the field after `step` steps is in buf[step % 2] */
            TRY(gpuk_timer_stop(ctx, &timer, &ms));
            gpu_ms += ms;
            TRY(gpuk_buffer_read(ctx, buf[step % 2], 0, field, cells * sizeof(float)));
            if (step == check_steps) {
                for (i = 0; i < cells; i++) if (fabs((double)field[i] - a[i]) > worst) worst = fabs((double)field[i] - a[i]);
                checked = 1;
            }
            for (i = 0; i < cells; i++) { if (field[i] < lo) lo = field[i]; if (field[i] > hi) hi = field[i]; }
            if (step % every == 0) {
                char file[64];
                uint8_t* rgb = ex_field_rgb(field, n, n, 0.0, 1.0);
                snprintf(file, sizeof file, "heat_%05d.png", step);
                if (!rgb || ex_png(o.out_dir, file, n, n, 3, rgb) != 0) ok = 0;
                free(rgb);
            }
            TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
        }
        if (step < steps)
            TRY(gallery_kernels_heat_step_f32(ctx, &k, &launch, gpuk_at(buf[step % 2], 0), gpuk_at(buf[(step + 1) % 2], 0), n, n, R));
    }
    TRY(gpuk_timer_stop(ctx, &timer, &ms));
    /* the maximum principle: the field stays within its start's range [0, 1] (give or take
       the rounding of a step) */
    ok = ok && checked && worst <= 1e-6 && lo >= -1e-6 && hi <= 1.0 + 1e-6;
    printf("%dx%d grid, %d steps: GPU %.2f ms (%.1f us a step, %.1f Gcells/s); CPU %.1f ms for %d steps (%.1f us a step)\n",
           n, n, steps, gpu_ms, 1e3 * gpu_ms / steps, (double)cells * steps / gpu_ms / 1e6, cpu_ms, check_steps,
           1e3 * cpu_ms / check_steps);
    printf("after %d steps the GPU and CPU fields differ by at most %.2g; values stayed in [%.3g, %.3g]\n", check_steps,
           worst, lo, hi);
    TRY(gpuk_ctx_destroy(ctx));
    free(u0); free(a); free(b); free(field);
    return ex_result(ok, "%d steps of %dx%d, equal to the CPU's after %d steps (difference %.2g), a PNG every %d", steps,
                     n, n, check_steps, worst, every);
}
