/* examples/17_zero_copy_frames.c - one frame pipeline three ways: the CPU writes each frame of a
   panning noisy scene, the built-in 3x3 smoothing (gpuk_stencil3x3_f32, nine weights of 1/9,
   GPUK_BOUNDARY_SKIP) runs on it, the CPU reads the result (a checksum of every frame); with
   copies into device memory and back, with zero-copy (gpuk_buffer_create_mapped: the GPU
   reads and writes the CPU's memory in place) and with managed memory
   (gpuk_buffer_create_managed, prefetched where the device can). Prints the time a frame of
   each; the three agree on every frame's checksum and, bit for bit, on the last frame, which
   is checked against the CPU. On an integrated GPU (Jetson) the copies are pure overhead; on
   a discrete one each zero-copy access crosses the bus. Default 480x270, 8 frames; --full
   1920x1080, 60 frames.
   cc -std=c99 -O2 -I.. 17_zero_copy_frames.c -o zero_copy_frames -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"

static const char ex_name[] = "17_zero_copy_frames";

enum { MODE_COPIES, MODE_ZERO_COPY, MODE_MANAGED, MODES };
static const char* const mode_name[MODES] = { "copies", "zero-copy", "managed" };

/* The scene: a noisy picture wider and taller than a frame; frame f is the window that starts
   f pixels right and down (the camera pans). */
typedef struct scene { float* px; int w, h, fw, fh; } scene;

static void frame_write(const scene* sc, int f, float* dst) {
    const size_t row = (size_t)sc->fw * sizeof(float);
    int y;
    for (y = 0; y < sc->fh; y++)
        memcpy(dst + (size_t)y * (size_t)sc->fw,
               sc->px + (size_t)(y + f) * (size_t)sc->w + (size_t)f, row);
}

/* What the CPU does with each result: reads every pixel (a sum, in one order, so equal frames
   give equal checksums). */
static double frame_read(const float* px, size_t n) {
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++) s += px[i];
    return s;
}

/* The filter on the CPU: the mean of the neighbours inside the frame. */
static void cpu_smooth(const float* in, float* out, int w, int h) {
    int px, py, x, y;
    for (py = 0; py < h; py++)
        for (px = 0; px < w; px++) {
            double s = 0;
            int count = 0;
            for (y = py - 1; y <= py + 1; y++)
                for (x = px - 1; x <= px + 1; x++)
                    if (y >= 0 && y < h && x >= 0 && x < w) {
                        s += in[(size_t)y * (size_t)w + (size_t)x];
                        count++;
                    }
            out[(size_t)py * (size_t)w + (size_t)px] = (float)(s / count);
        }
}

int main(int argc, char** argv) {
    static const float ninth[9] = { 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9,
                                    1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9 };
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name,
                      "camera frames smoothed with copies, zero-copy and managed memory", &o, &ctx);
    const gpuk_device_info* info;
    gpuk_stream s;
    scene sc;
    gpuk_buffer in[MODES], out[MODES];
    gpuk_pinned hin, hout;
    float *last[MODES], *cpu, *src, *dst = NULL;
    double *sums[MODES], ms[MODES], worst = 0;
    int frames, w, h, mode, f, ran[MODES] = { 0 }, prefetch, ok = 1;
    size_t n, bytes, i, bad = 0, disagree = 0;
    uint64_t seed = 17;
    if (rc >= 0) return rc;
    w = o.full ? 1920 : 480;
    h = o.full ? 1080 : 270;
    frames = o.full ? 60 : 8;
    n = (size_t)w * (size_t)h;
    bytes = n * sizeof(float);
    info = gpuk_ctx_device_info(ctx);
    prefetch = info->concurrent_managed_access != 0;
    printf("%s: %s GPU; zero-copy %s, managed memory %s%s\n", info->name,
           info->integrated ? "integrated" : "discrete", info->can_map_host_memory ? "yes" : "no",
           info->managed_memory ? "yes" : "no", prefetch ? " (prefetched)" : " (not prefetched)");
    sc.fw = w; sc.fh = h; sc.w = w + frames; sc.h = h + frames;
    sc.px = (float*)malloc((size_t)sc.w * (size_t)sc.h * sizeof(float));
    cpu = (float*)malloc(bytes);
    for (mode = 0; mode < MODES; mode++) {
        last[mode] = (float*)malloc(bytes);
        sums[mode] = (double*)calloc((size_t)frames, sizeof(double));
        if (!last[mode] || !sums[mode]) return ex_result(0, "out of host memory");
    }
    if (!sc.px || !cpu) return ex_result(0, "out of host memory");
    for (i = 0; i < (size_t)sc.w * (size_t)sc.h; i++) { /* stripes and noise */
        double x = (double)(i % (size_t)sc.w), y = (double)(i / (size_t)sc.w);
        sc.px[i] = (float)(0.5 + 0.25 * sin(0.05 * x + 0.03 * y) + 0.4 * (ex_rand(&seed) - 0.5));
    }
    TRY(gpuk_stream_create(ctx, NULL, &s));
    /* copies: page-locked host frames (what a careful copy pipeline uses) and device buffers */
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &hin));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &hout));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &in[MODE_COPIES]));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &out[MODE_COPIES]));
    ran[MODE_COPIES] = 1;
    if (info->can_map_host_memory) {
        TRY(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes },
                                      &in[MODE_ZERO_COPY]));
        TRY(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes },
                                      &out[MODE_ZERO_COPY]));
        ran[MODE_ZERO_COPY] = 1;
    }
    if (info->managed_memory) {
        TRY(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = bytes },
                                       &in[MODE_MANAGED]));
        TRY(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = bytes },
                                       &out[MODE_MANAGED]));
        /* the input is written by the CPU and read by the GPU each frame: read-mostly would
           only add work; the output is made on the GPU, so it prefers to live there */
        TRY(gpuk_buffer_advise(ctx, out[MODE_MANAGED], 0, bytes,
                               GPUK_ADVICE_SET_PREFERRED_LOCATION, info->ordinal));
        ran[MODE_MANAGED] = 1;
    }
    for (mode = 0; mode < MODES; mode++) {
        gpuk_array2d vin, vout;
        double t = 0;
        int run;
        if (!ran[mode]) continue;
        vin = gpuk_at2d(in[mode], 0, (size_t)h, (size_t)w, 0);
        vout = gpuk_at2d(out[mode], 0, (size_t)h, (size_t)w, 0);
        if (mode == MODE_COPIES) {
            src = (float*)gpuk_pinned_ptr(ctx, hin);
            dst = (float*)gpuk_pinned_ptr(ctx, hout);
        } else {
            src = (float*)gpuk_buffer_host_ptr(ctx, in[mode]);
            dst = (float*)gpuk_buffer_host_ptr(ctx, out[mode]);
        }
        for (run = 0; run < 2; run++) { /* a warm-up frame (first launch, first touch), then all */
            int count = run ? frames : 1;
            t = ex_now_ms();
            for (f = 0; f < count; f++) {
                frame_write(&sc, f, src); /* the device is idle here: safe for managed memory too */
                if (mode == MODE_COPIES)
                    TRY(gpuk_buffer_write_async(ctx, s, in[mode], 0, src, bytes));
                if (mode == MODE_MANAGED && prefetch)
                    TRY(gpuk_buffer_prefetch(ctx, s, in[mode], 0, bytes, info->ordinal));
                TRY(gpuk_stencil3x3_f32(ctx, s, vout, vin, ninth, GPUK_BOUNDARY_SKIP));
                if (mode == MODE_COPIES)
                    TRY(gpuk_buffer_read_async(ctx, s, out[mode], 0, dst, bytes));
                if (mode == MODE_MANAGED && prefetch)
                    TRY(gpuk_buffer_prefetch(ctx, s, out[mode], 0, bytes, GPUK_DEVICE_HOST));
                /* the whole device, not just s: without concurrent managed access the CPU may
                   touch managed memory only while no kernel runs */
                TRY(gpuk_ctx_sync(ctx));
                if (run) sums[mode][f] = frame_read(dst, n);
            }
            t = ex_now_ms() - t;
        }
        ms[mode] = t / frames;
        memcpy(last[mode], dst, bytes);
        printf("%-10s %7.3f ms a frame (%dx%d, %d frames)\n", mode_name[mode], ms[mode], w, h,
               frames);
    }
    /* the last frame against the CPU; the modes against each other */
    {
        float* frame = (float*)malloc(bytes);
        if (!frame) return ex_result(0, "out of host memory");
        frame_write(&sc, frames - 1, frame);
        cpu_smooth(frame, cpu, w, h);
        free(frame);
    }
    for (i = 0; i < n; i++) {
        double e = fabs((double)last[MODE_COPIES][i] - cpu[i]);
        if (!(e <= 1e-5)) bad++;
        if (e > worst) worst = e;
    }
    for (mode = 1; mode < MODES; mode++) {
        if (!ran[mode]) continue;
        if (memcmp(last[mode], last[MODE_COPIES], bytes) != 0) disagree++;
        for (f = 0; f < frames; f++) disagree += sums[mode][f] != sums[MODE_COPIES][f];
    }
    ok = bad == 0 && disagree == 0;
    printf("last frame against the CPU: largest difference %.2g; %zu disagreements between modes\n",
           worst, disagree);
    for (mode = 0; mode < MODES; mode++) {
        if (ran[mode]) {
            TRY(gpuk_buffer_destroy(ctx, in[mode]));
            TRY(gpuk_buffer_destroy(ctx, out[mode]));
        }
        free(last[mode]);
        free(sums[mode]);
    }
    TRY(gpuk_pinned_destroy(ctx, hin));
    TRY(gpuk_pinned_destroy(ctx, hout));
    TRY(gpuk_stream_destroy(ctx, s));
    TRY(gpuk_ctx_destroy(ctx));
    free(sc.px);
    free(cpu);
    {
        char times[MODES][24];
        for (mode = 0; mode < MODES; mode++) {
            if (ran[mode]) snprintf(times[mode], sizeof times[mode], "%.3f ms", ms[mode]);
            else snprintf(times[mode], sizeof times[mode], "n/a");
        }
        return ex_result(ok, "%zu pixels off the CPU, %zu disagreements; a frame: copies %s, "
                         "zero-copy %s, managed %s", bad, disagree, times[MODE_COPIES],
                         times[MODE_ZERO_COPY], times[MODE_MANAGED]);
    }
}
