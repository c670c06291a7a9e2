/* examples/11_streams_pipeline.c - streams and events: an array goes through the GPU in 16
   chunks, each copied in (pinned memory), processed by a kernel of the gallery's own and
   copied back; first all on one stream, then spread over 4 streams so that copies and
   kernels of different chunks overlap (gpuk_stream_fork starts the streams after the first,
   gpuk_stream_join brings them back into it). gpuk events time every step; the program prints the
   speedup and draws the timeline of both runs (timeline.png: blue copy in, green kernel,
   orange copy out; top row one stream, below the four). Sampled results checked on the CPU.
   Default 2^24 floats, --full 2^26.
   cc -std=c99 -O2 -I.. 11_streams_pipeline.c -o streams_pipeline -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "11_streams_pipeline";
enum { CHUNKS = 16, STREAMS = 4, STEPS = 3 }; /* steps: copy in, kernel, copy out */

typedef struct pipeline {
    gpuk_ctx* ctx;
    gallery_kernels_kernels k;
    gpuk_buffer din, dout;
    gpuk_stream s[STREAMS];
    gpuk_event t0, ev[CHUNKS][STEPS + 1]; /* ev[c][0] before the copy in, [c][i] after step i */
    float *in, *out;                      /* pinned */
    size_t chunk;                         /* floats per chunk */
    int reps;                             /* the kernel's work per element */
} pipeline;

/* Queues all chunks on `streams` streams (chunk c on stream c % streams) and waits; times[c][i]
   = ms from the start to event ev[c][i]. */
static gpuk_result run(pipeline* p, int streams, float times[CHUNKS][STEPS + 1], float* total) {
    gpuk_result r;
    int c, i;
    size_t bytes = p->chunk * sizeof(float);
    *total = 0;
    /* every stream starts after t0 */
    if ((r = gpuk_event_record(p->ctx, p->s[0], p->t0)) != GPUK_OK ||
        (r = gpuk_stream_fork(p->ctx, p->s[0], p->s + 1, (uint32_t)streams - 1)) != GPUK_OK)
        return r;
    for (c = 0; c < CHUNKS; c++) {
        gpuk_stream s = p->s[c % streams];
        size_t first = (size_t)c * p->chunk;
        gpuk_grid launch = gpuk_grid_1d(p->chunk, 256);
        launch.stream = s;
        if ((r = gpuk_event_record(p->ctx, s, p->ev[c][0])) != GPUK_OK ||
            (r = gpuk_buffer_write_async(p->ctx, s, p->din, first * sizeof(float), p->in + first, bytes)) != GPUK_OK ||
            (r = gpuk_event_record(p->ctx, s, p->ev[c][1])) != GPUK_OK ||
            (r = gallery_kernels_busy_f32(p->ctx, &p->k, &launch, gpuk_at(p->din, first), gpuk_at(p->dout, first),
                                          (unsigned)p->chunk, p->reps)) != GPUK_OK ||
            (r = gpuk_event_record(p->ctx, s, p->ev[c][2])) != GPUK_OK ||
            (r = gpuk_buffer_read_async(p->ctx, s, p->dout, first * sizeof(float), p->out + first, bytes)) != GPUK_OK ||
            (r = gpuk_event_record(p->ctx, s, p->ev[c][3])) != GPUK_OK)
            return r;
    }
    /* s[0] takes the other streams' work back (a step on the whole output would go on there),
       so waiting for s[0] waits for every chunk */
    if ((r = gpuk_stream_join(p->ctx, p->s[0], p->s + 1, (uint32_t)streams - 1)) != GPUK_OK ||
        (r = gpuk_stream_sync(p->ctx, p->s[0])) != GPUK_OK)
        return r;
    for (c = 0; c < CHUNKS; c++)
        for (i = 0; i <= STEPS; i++) {
            if ((r = gpuk_event_elapsed_ms(p->ctx, p->t0, p->ev[c][i], &times[c][i])) != GPUK_OK) return r;
            if (times[c][i] > *total) *total = times[c][i];
        }
    return GPUK_OK;
}

/* Sampled outputs against the kernel's loop on the CPU (fmaf rounds once, like __fmaf_rn). */
static size_t check(const pipeline* p, uint64_t* seed) {
    size_t s, bad = 0, n = p->chunk * CHUNKS;
    for (s = 0; s < 2000; s++) {
        size_t i = (size_t)(ex_rand(seed) * (double)n);
        float x = p->in[i];
        int r;
        for (r = 0; r < p->reps; r++) x = fmaf(x, 0.999f, 0.001f);
        if (!(fabsf(p->out[i] - x) <= 1e-6f * fabsf(x))) bad++;
    }
    return bad;
}

/* The two runs as rows of boxes on one time axis: the sequential run on top, each stream of
   the overlapped run below it. */
static int timeline(const char* dir, float seq[CHUNKS][STEPS + 1], float par[CHUNKS][STEPS + 1], float span) {
    enum { W = 1200, ROW = 28, GAP = 8, H = GAP + ROW + 3 * GAP + STREAMS * (ROW + GAP) };
    static uint8_t rgb[W * H * 3];
    static const uint32_t colour[STEPS] = { 0x3182bd, 0x31a354, 0xe6550d };
    double scale = (W - 2 * GAP) / span;
    int c, i, run;
    memset(rgb, 255, sizeof rgb);
    ex_rect(rgb, W, H, 0, GAP + ROW + GAP, W, GAP + ROW + GAP + 1, 0x999999);
    for (run = 0; run < 2; run++)
        for (c = 0; c < CHUNKS; c++) {
            float (*t)[STEPS + 1] = run ? par : seq;
            int y = run ? GAP + ROW + 3 * GAP + (c % STREAMS) * (ROW + GAP) : GAP;
            for (i = 0; i < STEPS; i++) /* a 1-pixel gap shows where one box ends */
                ex_rect(rgb, W, H, GAP + (int)(t[c][i] * scale), y, GAP + (int)(t[c][i + 1] * scale) - 1, y + ROW, colour[i]);
        }
    return ex_png(dir, "timeline.png", W, H, 3, rgb);
}

int main(int argc, char** argv) {
    ex_opts o;
    pipeline p;
    int rc = ex_begin(argc, argv, ex_name, "chunked copy-kernel-copy pipeline on 1 vs 4 streams", &o, &p.ctx);
    gpuk_pinned pin, pout;
    float seq[CHUNKS][STEPS + 1], par[CHUNKS][STEPS + 1], seq_ms, par_ms, copy_ms, kernel_ms;
    size_t i, n, bad;
    uint64_t seed = 5;
    int c, ok;
    gpuk_ctx* ctx = p.ctx;
    if (rc >= 0) return rc;
    n = o.full ? (size_t)1 << 26 : (size_t)1 << 24;
    p.chunk = n / CHUNKS;
    p.reps = 100;
    TRY(gallery_kernels_load(ctx, &p.k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "in" }, &p.din));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "out" }, &p.dout));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = n * sizeof(float), .label = "in" }, &pin));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = n * sizeof(float), .label = "out" }, &pout));
    p.in = (float*)gpuk_pinned_ptr(ctx, pin);
    p.out = (float*)gpuk_pinned_ptr(ctx, pout);
    for (c = 0; c < STREAMS; c++) TRY(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .priority = 0 }, &p.s[c]));
    TRY(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = false }, &p.t0));
    for (c = 0; c < CHUNKS; c++)
        for (i = 0; i <= STEPS; i++) TRY(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = false }, &p.ev[c][i]));
    for (i = 0; i < n; i++) p.in[i] = (float)ex_rand(&seed);
    /* a warm-up run, then the kernel's work set so that it takes about as long as a chunk's
       copy in: then overlapping can hide most of the copies */
    TRY(run(&p, STREAMS, par, &par_ms));
    copy_ms = par[0][1] - par[0][0];
    kernel_ms = par[0][2] - par[0][1];
    if (kernel_ms > 0) p.reps = (int)(p.reps * copy_ms / kernel_ms);
    if (p.reps < 1) p.reps = 1;
    if (p.reps > 20000) p.reps = 20000;
    TRY(run(&p, 1, seq, &seq_ms));
    bad = check(&p, &seed);
    memset(p.out, 0, n * sizeof(float)); /* the second run must write every checked output again */
    TRY(run(&p, STREAMS, par, &par_ms));
    bad += check(&p, &seed);
    printf("%d chunks of %zu floats (%.1f MB), kernel %d fused multiply-adds per element\n", CHUNKS, p.chunk,
           (double)p.chunk * sizeof(float) / 1e6, p.reps);
    printf("one chunk: copy in %.3f ms, kernel %.3f ms, copy out %.3f ms\n", seq[0][1] - seq[0][0],
           seq[0][2] - seq[0][1], seq[0][3] - seq[0][2]);
    printf("1 stream: %.3f ms; %d streams: %.3f ms; speedup %.2fx\n", seq_ms, STREAMS, par_ms, seq_ms / par_ms);
    ok = bad == 0;
    if (bad) printf("MISMATCH: %zu of 4000 sampled outputs differ from the CPU\n", bad);
    if (timeline(o.out_dir, seq, par, seq_ms > par_ms ? seq_ms : par_ms) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    return ex_result(ok, "%d streams %.2fx faster than 1 (%.3f vs %.3f ms), sampled outputs match the CPU", STREAMS,
                     seq_ms / par_ms, par_ms, seq_ms);
}
