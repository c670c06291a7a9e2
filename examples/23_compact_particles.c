/* examples/23_compact_particles.c - particles drift out of the unit box and are dropped every
   step: the built-in add moves them, a kernel of the gallery's own flags those still inside,
   gpuk_select_flagged_f32 compacts positions and velocities in place by those flags and
   leaves the survivors' number in device memory. The CPU runs the same steps on the same
   numbers; survivors and their order must match bit for bit. A picture of where the
   survivors started (blue) and of those lost (orange).
   Default 2^20 particles, --full 2^24; 32 steps.
   cc -std=c99 -O2 -I.. 23_compact_particles.c -o compact_particles -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "23_compact_particles";

/* One step on the CPU, as the GPU does it: move (one float add), keep those in [0, 1)^2 in
   order. Returns the survivors. */
static size_t cpu_step(float* x, float* y, float* vx, float* vy, uint32_t* id, size_t n) {
    size_t i, kept = 0;
    for (i = 0; i < n; i++) {
        const float px = x[i] + vx[i], py = y[i] + vy[i];
        if (px >= 0.0f && px < 1.0f && py >= 0.0f && py < 1.0f) {
            x[kept] = px; y[kept] = py; vx[kept] = vx[i]; vy[kept] = vy[i]; id[kept] = id[i];
            kept++;
        }
    }
    return kept;
}

int main(int argc, char** argv) {
    enum { STEPS = 32, PIC = 512 };
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "particles leaving a box, compacted on the GPU", &o,
                      &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer b[4], flags, count;
    gpuk_timer timer;
    gpuk_stream s0 = GPUK_DEFAULT_STREAM;
    float *h[4], *x0, *y0, *got, ms, gpu_ms = 0;
    uint32_t* id;
    uint64_t alive;
    size_t n, n0, cpu_n, i;
    double t, cpu_ms = 0;
    uint8_t* rgb;
    int step, a, ok = 1;
    if (rc >= 0) return rc;
    n0 = n = cpu_n = o.full ? (size_t)1 << 24 : (size_t)1 << 20;
    for (a = 0; a < 4; a++) h[a] = (float*)malloc(n * sizeof(float));
    x0 = (float*)malloc(n * sizeof(float));
    y0 = (float*)malloc(n * sizeof(float));
    got = (float*)malloc(n * sizeof(float));
    id = (uint32_t*)malloc(n * sizeof(uint32_t));
    rgb = (uint8_t*)malloc(PIC * PIC * 3);
    if (!h[0] || !h[1] || !h[2] || !h[3] || !x0 || !y0 || !got || !id || !rgb)
        return ex_result(0, "out of host memory");
    TRY(gallery_kernels_load(ctx, &k));
    for (a = 0; a < 4; a++) /* x, y, vx, vy */
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float) }, &b[a]));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n, .label = "flags" }, &flags));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "count" }, &count));
    TRY(gpuk_timer_create(ctx, &timer));
    /* positions uniform in the box, velocities normal with a standard deviation of 1/64 */
    TRY(gpuk_random_uniform_f32(ctx, s0, gpuk_at(b[0], 0), n, 1, 0));
    TRY(gpuk_random_uniform_f32(ctx, s0, gpuk_at(b[1], 0), n, 2, 0));
    TRY(gpuk_random_normal_f32(ctx, s0, gpuk_at(b[2], 0), n, 3, 0));
    TRY(gpuk_random_normal_f32(ctx, s0, gpuk_at(b[3], 0), n, 4, 0));
    TRY(gpuk_scale_f32(ctx, s0, gpuk_at(b[2], 0), 1.0f / 64, gpuk_at(b[2], 0), n));
    TRY(gpuk_scale_f32(ctx, s0, gpuk_at(b[3], 0), 1.0f / 64, gpuk_at(b[3], 0), n));
    for (a = 0; a < 4; a++) TRY(gpuk_buffer_read(ctx, b[a], 0, h[a], n * sizeof(float)));
    memcpy(x0, h[0], n * sizeof(float));
    memcpy(y0, h[1], n * sizeof(float));
    for (i = 0; i < n; i++) id[i] = (uint32_t)i;
    TRY(gpuk_kernels_load(ctx, "add_f32, select_flagged_f32")); /* JIT now, not in the timing */
    for (step = 1; step <= STEPS && n > 0; step++) {
        gpuk_grid launch = gpuk_grid_1d(n, 256);
        TRY(gpuk_timer_start(ctx, s0, &timer));
        TRY(gpuk_add_f32(ctx, s0, gpuk_at(b[0], 0), gpuk_at(b[0], 0), gpuk_at(b[2], 0), n));
        TRY(gpuk_add_f32(ctx, s0, gpuk_at(b[1], 0), gpuk_at(b[1], 0), gpuk_at(b[3], 0), n));
        TRY(gallery_kernels_in_box(ctx, &k, &launch, gpuk_at(b[0], 0), gpuk_at(b[1], 0),
                                   gpuk_at(flags, 0), (unsigned)n));
        for (a = 0; a < 4; a++) /* in place: out is in; each writes the same count */
            TRY(gpuk_select_flagged_f32(ctx, s0, gpuk_at(b[a], 0), gpuk_at(count, 0),
                                        gpuk_at(b[a], 0), gpuk_at(flags, 0), n));
        TRY(gpuk_timer_stop(ctx, &timer, &ms));
        gpu_ms += ms;
        TRY(gpuk_buffer_read(ctx, count, 0, &alive, sizeof alive));
        t = ex_now_ms();
        cpu_n = cpu_step(h[0], h[1], h[2], h[3], id, cpu_n);
        cpu_ms += ex_now_ms() - t;
        if (step % 8 == 0 || alive != cpu_n)
            printf("step %2d: %zu particles left (GPU %llu)\n", step, cpu_n,
                   (unsigned long long)alive);
        if (alive != cpu_n) ok = 0;
        n = (size_t)alive;
        if (!ok) break;
    }
    for (a = 0; a < 4 && ok; a++) { /* the survivors, in their order, bit for bit */
        TRY(gpuk_buffer_read(ctx, b[a], 0, got, n * sizeof(float)));
        if (memcmp(got, h[a], n * sizeof(float)) != 0) {
            printf("MISMATCH in %s\n", a == 0 ? "x" : a == 1 ? "y" : a == 2 ? "vx" : "vy");
            ok = 0;
        }
    }
    printf("%zu of %zu particles left after %d steps; GPU %.2f ms (move, flag, compact 4 arrays), "
           "CPU %.1f ms\n", n, n0, STEPS, gpu_ms, cpu_ms);
    memset(rgb, 255, PIC * PIC * 3);
    for (i = 0; i < n0 && i < 40000; i++) { /* every start lost, then the survivors' over it */
        int px = (int)(x0[i] * PIC), py = PIC - 1 - (int)(y0[i] * PIC);
        ex_rect(rgb, PIC, PIC, px - 1, py - 1, px + 1, py + 1, 0xfd8d3c);
    }
    for (i = 0; i < cpu_n && id[i] < 40000; i++) {
        int px = (int)(x0[id[i]] * PIC), py = PIC - 1 - (int)(y0[id[i]] * PIC);
        ex_rect(rgb, PIC, PIC, px - 1, py - 1, px + 1, py + 1, 0x2171b5);
    }
    if (ex_png(o.out_dir, "compact_particles.png", PIC, PIC, 3, rgb) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    for (a = 0; a < 4; a++) free(h[a]);
    free(x0); free(y0); free(got); free(id); free(rgb);
    return ex_result(ok, "%zu of %zu particles left after %d steps (GPU %.2f ms), the same as "
                     "the CPU's", n, n0, STEPS, gpu_ms);
}
