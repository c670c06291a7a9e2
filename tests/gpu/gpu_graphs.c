/* tests/gpu/gpu_graphs.c - built-in kernels captured into a CUDA graph and replayed: one capture of
   a reduction, an argmax, a dot, three scans (2^24 i32 inclusive: the case that went wrong on
   every replay after the first when the scan epoch was a launch argument; f32 exclusive; f64
   inclusive, the sm_70 variant where the device has it) and two histograms, then eight
   replays, each on fresh random inputs written between replays, every output poisoned first
   and checked against a CPU reference. Also: a built-in that would load or allocate during a
   capture returns GPUK_ERR_CAPTURING and the capture still ends cleanly. And a graph of gpuk
   launches, built-ins, copies through pinned memory, memsets and event records replayed many
   times on fresh inputs, its arguments updated by capturing again (gpuk_graph_update), a
   changed shape refused with the graph unchanged. And gpuk_stream_fork/_join inside a capture
   (a second stream joins the graph and back), an unjoined fork failing cleanly. A built-in's
   first use on one stream while another is captured, in each capture mode; a ctx destroy
   with a capture open. Skipped where no driver or GPU exists, or where the driver has no
   graph entry points. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_test_kernels.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>
#include <time.h>

static gpuk_ctx* ctx;



#define NBIG ((size_t)1 << 24)     /* the scan that replays went wrong on */
#define NF (((size_t)1 << 20) + 3) /* float arrays: several tiles and reduction blocks */
#define NBINS 100

typedef struct work {
    gpuk_buffer ints, ints_out, f32, f32_out, f64a, f64b, f64_out, bytes, counts, results;
    int32_t* h_ints;
    float* h_f32;
    double *h_f64a, *h_f64b;
    unsigned char* h_bytes;
} work;

/* The captured sequence: everything on stream s, each output its own buffer. results holds
   sum_f32 (8 bytes room), argmax_f64 (u64) and dot_f64 at elements 0, 1, 2 of 8 bytes. */
static gpuk_result enqueue(const work* w, gpuk_stream s) {
    gpuk_result r;
    if ((r = gpuk_sum_f32(ctx, s, gpuk_at(w->results, 0), gpuk_at(w->f32, 0), NF)) != GPUK_OK) return r;
    if ((r = gpuk_argmax_f64(ctx, s, gpuk_at(w->results, 1), gpuk_at(w->f64a, 0), NF)) != GPUK_OK) return r;
    if ((r = gpuk_dot_f64(ctx, s, gpuk_at(w->results, 2), gpuk_at(w->f64a, 0), gpuk_at(w->f64b, 0), NF)) != GPUK_OK) return r;
    if ((r = gpuk_scan_inclusive_i32(ctx, s, gpuk_at(w->ints_out, 0), gpuk_at(w->ints, 0), NBIG)) != GPUK_OK) return r;
    if ((r = gpuk_scan_exclusive_f32(ctx, s, gpuk_at(w->f32_out, 0), gpuk_at(w->f32, 0), NF)) != GPUK_OK) return r;
    if ((r = gpuk_scan_inclusive_f64(ctx, s, gpuk_at(w->f64_out, 0), gpuk_at(w->f64a, 0), NF)) != GPUK_OK) return r;
    if ((r = gpuk_histogram_u8(ctx, s, gpuk_at(w->counts, 0), 256, 0, 256, gpuk_at(w->bytes, 0), NBIG)) != GPUK_OK) return r;
    return gpuk_histogram_i32(ctx, s, gpuk_at(w->counts, 256), NBINS, -1000, 1000, gpuk_at(w->ints, 0), NBIG);
}

/* Fresh inputs, written (and outputs poisoned) while no replay runs. */
static void refresh(work* w, gpuk_stream s) {
    size_t i;
    for (i = 0; i < NBIG; i++) w->h_ints[i] = (int32_t)(rng() % 3001) - 1500;
    for (i = 0; i < NF; i++) {
        w->h_f32[i] = (float)uniform(-1, 1);
        w->h_f64a[i] = uniform(-10, 10);
        w->h_f64b[i] = uniform(-10, 10);
    }
    for (i = 0; i < NBIG; i++) w->h_bytes[i] = (unsigned char)rng();
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_write(ctx, w->ints, 0, w->h_ints, NBIG * 4));
    CHECK_OK(gpuk_buffer_write(ctx, w->f32, 0, w->h_f32, NF * 4));
    CHECK_OK(gpuk_buffer_write(ctx, w->f64a, 0, w->h_f64a, NF * 8));
    CHECK_OK(gpuk_buffer_write(ctx, w->f64b, 0, w->h_f64b, NF * 8));
    CHECK_OK(gpuk_buffer_write(ctx, w->bytes, 0, w->h_bytes, NBIG));
    CHECK_OK(gpuk_buffer_memset(ctx, s, w->ints_out, 0, 0xFF, 1, NBIG * 4));
    CHECK_OK(gpuk_buffer_memset(ctx, s, w->f32_out, 0, 0xFF, 1, NF * 4));
    CHECK_OK(gpuk_buffer_memset(ctx, s, w->f64_out, 0, 0xFF, 1, NF * 8));
    CHECK_OK(gpuk_buffer_memset(ctx, s, w->counts, 0, 0xFF, 1, (256 + NBINS) * 8));
    CHECK_OK(gpuk_buffer_memset(ctx, s, w->results, 0, 0xFF, 1, 3 * 8));
    CHECK_OK(gpuk_stream_sync(ctx, s));
}

/* Every output against the CPU; returns the number of wrong values (first few printed). */
static size_t verify(const work* w, int replay) {
    int32_t* ints = (int32_t*)malloc(NBIG * 4);
    float* f32 = (float*)malloc(NF * 4);
    double* f64 = (double*)malloc(NF * 8);
    uint64_t counts[256 + NBINS], want[256 + NBINS];
    unsigned char res[24];
    double sum = 0, mag = 0, dot = 0, dmag = 0, run = 0, rmag = 0, got_d;
    float got_f;
    uint64_t argmax = 0, got_i;
    uint32_t irun = 0;
    size_t i, bad = 0;
    CHECK_OK(gpuk_buffer_read(ctx, w->ints_out, 0, ints, NBIG * 4));
    CHECK_OK(gpuk_buffer_read(ctx, w->f32_out, 0, f32, NF * 4));
    CHECK_OK(gpuk_buffer_read(ctx, w->f64_out, 0, f64, NF * 8));
    CHECK_OK(gpuk_buffer_read(ctx, w->counts, 0, counts, sizeof counts));
    CHECK_OK(gpuk_buffer_read(ctx, w->results, 0, res, sizeof res));
#define BAD(cond, ...) do { if (cond) { if (bad++ < 5) { fprintf(stderr, "  replay %d: ", replay); fprintf(stderr, __VA_ARGS__); } } } while (0)
    for (i = 0; i < NBIG; i++) { /* i32 scans wrap modulo 2^32: exact */
        irun += (uint32_t)w->h_ints[i];
        BAD((uint32_t)ints[i] != irun, "scan_inclusive_i32[%zu] = %d, want %d\n", i, ints[i], (int32_t)irun);
    }
    for (i = 0; i < NF; i++) { /* float scans: 4 (tiles + 64) eps sum|x| so far, in float64 */
        BAD(!(fabs(f32[i] - run) <= 4 * ((double)i / 2048 + 64) * 5.96e-8 * rmag),
            "scan_exclusive_f32[%zu] = %.9g, want %.9g\n", i, f32[i], run);
        run += w->h_f32[i];
        rmag += fabs(w->h_f32[i]);
        sum += w->h_f32[i];
        mag += fabs(w->h_f32[i]);
    }
    run = rmag = 0;
    for (i = 0; i < NF; i++) {
        run += w->h_f64a[i];
        rmag += fabs(w->h_f64a[i]);
        BAD(!(fabs(f64[i] - run) <= 4 * ((double)i / 2048 + 64) * 1.11e-16 * rmag),
            "scan_inclusive_f64[%zu] = %.17g, want %.17g\n", i, f64[i], run);
        dot += w->h_f64a[i] * w->h_f64b[i];
        dmag += fabs(w->h_f64a[i] * w->h_f64b[i]);
        if (w->h_f64a[i] > w->h_f64a[argmax]) argmax = i;
    }
    memcpy(&got_f, res, 4);
    memcpy(&got_i, res + 8, 8);
    memcpy(&got_d, res + 16, 8);
    BAD(!(fabs(got_f - sum) <= 8 * (log2((double)NF) + 64) * 5.96e-8 * mag), "sum_f32 = %.9g, want %.9g\n", got_f, sum);
    BAD(got_i != argmax, "argmax_f64 = %llu, want %llu\n", (unsigned long long)got_i, (unsigned long long)argmax);
    BAD(!(fabs(got_d - dot) <= 8 * (log2((double)NF) + 64) * 1.11e-16 * dmag), "dot_f64 = %.17g, want %.17g\n", got_d, dot);
    memset(want, 0, sizeof want);
    for (i = 0; i < NBIG; i++) {
        int32_t v = w->h_ints[i];
        want[w->h_bytes[i]]++;
        if (v >= -1000 && v < 1000) want[256 + (uint64_t)(v + 1000) * NBINS / 2000]++;
    }
    for (i = 0; i < 256 + NBINS; i++)
        BAD(counts[i] != want[i], "histogram_%s count[%zu] = %llu, want %llu\n", i < 256 ? "u8" : "i32",
            i < 256 ? i : i - 256, (unsigned long long)counts[i], (unsigned long long)want[i]);
#undef BAD
    free(ints); free(f32); free(f64);
    return bad;
}

static gpuk_buffer make(size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &b));
    return b;
}

/* Capture once, replay eight times on fresh inputs: every replay right. */
static int test_builtins_replay_correctly_from_a_graph(void) {
    work w;
    gpuk_stream s;
    gpuk_graph graph = { 0 };
    int replay;
    size_t bad = 0;
    gpuk_result r;
    memset(&w, 0, sizeof w);
    w.ints = make(NBIG * 4); w.ints_out = make(NBIG * 4); w.f32 = make(NF * 4); w.f32_out = make(NF * 4);
    w.f64a = make(NF * 8); w.f64b = make(NF * 8); w.f64_out = make(NF * 8); w.bytes = make(NBIG);
    w.counts = make((256 + NBINS) * 8); w.results = make(3 * 8);
    w.h_ints = (int32_t*)malloc(NBIG * 4); w.h_f32 = (float*)malloc(NF * 4);
    w.h_f64a = (double*)malloc(NF * 8); w.h_f64b = (double*)malloc(NF * 8); w.h_bytes = (unsigned char*)malloc(NBIG);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    /* the first-use work a capture cannot hold, done beforehand */
    CHECK_OK(gpuk_kernels_load(ctx, "sum_f32 argmax_f64 dot_f64 scan_inclusive_i32 scan_exclusive_f32 "
                                    "scan_inclusive_f64 histogram_*"));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, NBIG));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    r = enqueue(&w, s);
    CHECK_OK(r);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph));
    CHECK(graph.id != 0);
    for (replay = 0; graph.id && replay < 8; replay++) {
        size_t b;
        refresh(&w, s);
        CHECK_OK(gpuk_graph_launch(ctx, s, graph));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        b = verify(&w, replay);
        if (b) fprintf(stderr, "  replay %d: %zu wrong values\n", replay, b);
        bad += b;
    }
    CHECK(bad == 0);
    /* the same sequence run directly afterwards is right too (the scratch state carries on) */
    refresh(&w, s);
    CHECK_OK(enqueue(&w, s));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK(verify(&w, 8) == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, graph));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    free(w.h_ints); free(w.h_f32); free(w.h_f64a); free(w.h_f64b); free(w.h_bytes);
    CHECK_OK(gpuk_ctx_sync(ctx));
    return TEST_PASS;
}

/* Inside a capture, a built-in not loaded yet and a scan longer than the reserved scratch are
   refused with GPUK_ERR_CAPTURING; the capture is not broken by it (it ends and replays the
   call that was prepared). */
static int test_unprepared_builtin_refused_during_capture(void) {
    const size_t n = 5000;
    const size_t too_long = 70000000; /* 8545 tiles of 8192: more than the reserve's 8191 */
    gpuk_buffer b = make(too_long * 4);
    gpuk_stream s;
    gpuk_graph graph = { 0 };
    uint32_t host[5000], got[5000], run = 0;
    size_t i, bad = 0;
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_kernels_load(ctx, "scan_inclusive_u32"));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, n));
    for (i = 0; i < n; i++) host[i] = (uint32_t)rng();
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, host, sizeof host));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_RESULT(gpuk_norm2_f64(ctx, s, gpuk_at(b, 0), gpuk_at(b, 1), 100), GPUK_ERR_CAPTURING);
    CHECK_RESULT(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), too_long), GPUK_ERR_CAPTURING);
    CHECK_OK(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), n));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph));
    CHECK_OK(gpuk_graph_launch(ctx, s, graph));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, got, sizeof got));
    for (i = 0; i < n; i++) { run += host[i]; bad += got[i] != run; }
    CHECK(bad == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, graph));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    return TEST_PASS;
}

/* Captured on a non-blocking stream (stream-less calls may run meanwhile): fresh inputs
   through pinned memory -> x; y = 1 (memset); z = x + y (vadd, a gpuk launch); z *= scale
   (gpuk_scale_f32); sum = sum(z) (gpuk_sum_f32, scratch reserved); an event recorded; z and
   sum back into pinned memory. Replayed 20 times, each on new inputs written into the pinned
   block and against the CPU; then the arguments changed (vadd(x, x), another scale, fewer
   elements) by capturing the same calls again and updating the graph; then one launch more
   captured: refused, and the graph still does what it did. */
typedef struct graph_io { float* in; float* out; float* sum; } graph_io;
typedef struct chain { gpuk_kernel vadd; gpuk_buffer x, y, z, sum; gpuk_event done; graph_io io; } chain;

static gpuk_result launch_vadd(const chain* c, gpuk_stream s, uint32_t n, int twice) {
    gpuk_devptr px = gpuk_buffer_devptr(ctx, c->x), py = gpuk_buffer_devptr(ctx, twice ? c->x : c->y),
                pz = gpuk_buffer_devptr(ctx, c->z);
    return gpuk_launch(ctx, c->vadd, &(gpuk_launch_desc){ .grid = GPUK_DIM1((n + 255) / 256), .block = GPUK_DIM1(256),
                                                          .stream = s, GPUK_ARGS(&px, &py, &pz, &n) });
}

static gpuk_result capture_chain(const chain* c, gpuk_stream s, uint32_t n, int twice, float scale, int extra_launch) {
    gpuk_result r;
    if ((r = gpuk_buffer_write_async(ctx, s, c->x, 0, c->io.in, (size_t)n * 4)) != GPUK_OK) return r;
    if ((r = gpuk_buffer_memset(ctx, s, c->y, 0, 0x3F800000u, 4, n)) != GPUK_OK) return r; /* 1.0f */
    if ((r = launch_vadd(c, s, n, twice)) != GPUK_OK) return r;
    if (extra_launch && (r = launch_vadd(c, s, n, twice)) != GPUK_OK) return r;
    if ((r = gpuk_scale_f32(ctx, s, gpuk_at(c->z, 0), scale, gpuk_at(c->z, 0), n)) != GPUK_OK) return r;
    if ((r = gpuk_sum_f32(ctx, s, gpuk_at(c->sum, 0), gpuk_at(c->z, 0), n)) != GPUK_OK) return r;
    if ((r = gpuk_event_record(ctx, s, c->done)) != GPUK_OK) return r;
    if ((r = gpuk_buffer_read_async(ctx, s, c->z, 0, c->io.out, (size_t)n * 4)) != GPUK_OK) return r;
    return gpuk_buffer_read_async(ctx, s, c->sum, 0, c->io.sum, 4);
}

/* Replays graph reps times on fresh inputs: out = (x + (twice ? x : 1)) * scale for the first
   n elements, exactly (one rounding each, as on the GPU), the rest of the n_all left as
   poisoned; the sum within float rounding. Returns the number of wrong values. */
static size_t replay_and_check(const chain* c, gpuk_graph graph, gpuk_stream s, uint32_t n_all, uint32_t n,
                               int twice, float scale, int reps) {
    size_t bad = 0;
    int rep;
    uint32_t i;
    for (rep = 0; rep < reps; rep++) {
        double want_sum = 0, mag = 0;
        for (i = 0; i < n_all; i++) c->io.in[i] = (float)uniform(-100, 100);
        for (i = 0; i < n_all; i++) c->io.out[i] = -12345.0f;
        *c->io.sum = -12345.0f;
        CHECK_OK(gpuk_graph_launch(ctx, s, graph));
        CHECK_OK(gpuk_event_sync(ctx, c->done));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        for (i = 0; i < n_all; i++) {
            float v = c->io.in[i] + (twice ? c->io.in[i] : 1.0f);
            float want = i < n ? v * scale : -12345.0f;
            if (c->io.out[i] != want && bad++ < 5)
                fprintf(stderr, "  rep %d: z[%u] = %.9g, want %.9g\n", rep, i, c->io.out[i], want);
            if (i < n) { want_sum += (double)want; mag += fabs((double)want); }
        }
        if (!(fabs(*c->io.sum - want_sum) <= 8 * (log2((double)n) + 64) * 5.96e-8 * mag) && bad++ < 5)
            fprintf(stderr, "  rep %d: sum = %.9g, want %.9g\n", rep, *c->io.sum, want_sum);
    }
    return bad;
}

static int test_graph_of_launches_copies_and_builtins(void) {
    const uint32_t n = 300007, n2 = 200001;
    gpuk_module m;
    gpuk_stream s;
    gpuk_pinned hin, hout, hsum;
    gpuk_graph graph = { 0 };
    chain c;
    memset(&c, 0, sizeof c);
    c.x = make((size_t)n * 4); c.y = make((size_t)n * 4); c.z = make((size_t)n * 4); c.sum = make(8);
    CHECK_OK(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 } }, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "vadd", &c.vadd));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_event_create(ctx, NULL, &c.done));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = (size_t)n * 4 }, &hin));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = (size_t)n * 4 }, &hout));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 4 }, &hsum));
    c.io.in = (float*)gpuk_pinned_ptr(ctx, hin);
    c.io.out = (float*)gpuk_pinned_ptr(ctx, hout);
    c.io.sum = (float*)gpuk_pinned_ptr(ctx, hsum);
    /* the first-use load and the scratch, outside the capture */
    CHECK_OK(gpuk_kernels_load(ctx, "scale_f32 sum_f32"));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, 0));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(capture_chain(&c, s, n, 0, 2.0f, 0));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph));
    CHECK(replay_and_check(&c, graph, s, n, n, 0, 2.0f, 20) == 0);
    /* new arguments: vadd(x, x), scale 3, n2 elements (the copy back stops at n2: the rest of
       out keeps its poison) */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(capture_chain(&c, s, n2, 1, 3.0f, 0));
    CHECK_OK(gpuk_graph_update(ctx, s, graph));
    CHECK(replay_and_check(&c, graph, s, n, n2, 1, 3.0f, 10) == 0);
    /* one launch more: refused, the graph unchanged */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(capture_chain(&c, s, n, 0, 2.0f, 1));
    CHECK_RESULT(gpuk_graph_update(ctx, s, graph), (gpuk_result)910);
    CHECK_ERROR_MENTIONS("unchanged");
    CHECK(replay_and_check(&c, graph, s, n, n2, 1, 3.0f, 3) == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, graph));
    CHECK_OK(gpuk_event_destroy(ctx, c.done));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_pinned_destroy(ctx, hin));
    CHECK_OK(gpuk_pinned_destroy(ctx, hout));
    CHECK_OK(gpuk_pinned_destroy(ctx, hsum));
    CHECK_OK(gpuk_module_unload(ctx, m));
    CHECK_OK(gpuk_buffer_destroy(ctx, c.x));
    CHECK_OK(gpuk_buffer_destroy(ctx, c.y));
    CHECK_OK(gpuk_buffer_destroy(ctx, c.z));
    CHECK_OK(gpuk_buffer_destroy(ctx, c.sum));
    return TEST_PASS;
}

/* gpuk_stream_fork and _join inside a capture: the fork brings a second stream into the
   capture, which runs a slow kernel there while the origin runs another, and the join makes
   the last kernel wait for both: replayed on fresh inputs, v = (x + x) + fmaf(x, 3, 0.5)
   exactly, which a missing dependency on the slow branch would break. A fork left unjoined:
   the capture ends with the driver's error and no graph, and both streams work afterwards. */
static int test_fork_and_join_inside_a_capture(void) {
    uint32_t n = 200003, spin = 4000; /* launch arguments: not const */
    float three = 3.0f, half = 0.5f;
    gpuk_module m;
    gpuk_kernel vadd, slow;
    gpuk_stream s, s2;
    gpuk_pinned hin, hout;
    gpuk_graph graph = { 0 }, unjoined = { 0 };
    gpuk_buffer x = make((size_t)n * 4), z = make((size_t)n * 4), w = make((size_t)n * 4), v = make((size_t)n * 4);
    gpuk_devptr px = gpuk_buffer_devptr(ctx, x), pz = gpuk_buffer_devptr(ctx, z), pw = gpuk_buffer_devptr(ctx, w),
                pv = gpuk_buffer_devptr(ctx, v);
    const gpuk_dim3 grid = GPUK_DIM1((n + 255) / 256), block = GPUK_DIM1(256);
    float *in, *out;
    size_t bad = 0;
    uint32_t i;
    int rep;
    CHECK_OK(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 } }, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "vadd", &vadd));
    CHECK_OK(gpuk_kernel_get(ctx, m, "slow_affine", &slow));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s2));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = (size_t)n * 4 }, &hin));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = (size_t)n * 4 }, &hout));
    in = (float*)gpuk_pinned_ptr(ctx, hin);
    out = (float*)gpuk_pinned_ptr(ctx, hout);

    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(gpuk_buffer_write_async(ctx, s, x, 0, in, (size_t)n * 4));
    CHECK_OK(gpuk_stream_fork(ctx, s, &s2, 1));
    CHECK_OK(gpuk_launch(ctx, slow, &(gpuk_launch_desc){ .grid = grid, .block = block, .stream = s2,
                                                         GPUK_ARGS(&px, &pw, &three, &half, &n, &spin) }));
    CHECK_OK(gpuk_launch(ctx, vadd, &(gpuk_launch_desc){ .grid = grid, .block = block, .stream = s,
                                                         GPUK_ARGS(&px, &px, &pz, &n) }));
    CHECK_OK(gpuk_stream_join(ctx, s, &s2, 1));
    CHECK_OK(gpuk_launch(ctx, vadd, &(gpuk_launch_desc){ .grid = grid, .block = block, .stream = s,
                                                         GPUK_ARGS(&pz, &pw, &pv, &n) }));
    CHECK_OK(gpuk_buffer_read_async(ctx, s, v, 0, out, (size_t)n * 4));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph));
    for (rep = 0; rep < 8; rep++) {
        for (i = 0; i < n; i++) in[i] = (float)uniform(-1000, 1000);
        for (i = 0; i < n; i++) out[i] = -12345.0f;
        CHECK_OK(gpuk_graph_launch(ctx, s, graph));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        for (i = 0; i < n; i++) {
            float twice = in[i] + in[i], affine = fmaf(in[i], three, half), want = twice + affine;
            if (out[i] != want && bad++ < 5)
                fprintf(stderr, "  rep %d: v[%u] = %.9g, want %.9g\n", rep, i, out[i], want);
        }
    }
    CHECK(bad == 0);

    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(gpuk_stream_fork(ctx, s, &s2, 1));
    CHECK_OK(gpuk_launch(ctx, slow, &(gpuk_launch_desc){ .grid = grid, .block = block, .stream = s2,
                                                         GPUK_ARGS(&px, &pw, &three, &half, &n, &spin) }));
    CHECK(gpuk_graph_end_capture(ctx, s, &unjoined) != GPUK_OK);
    CHECK(unjoined.id == 0);
    CHECK(strlen(gpuk_last_error()) > 0);
    /* both streams run work again, in order */
    for (i = 0; i < n; i++) in[i] = (float)uniform(-1000, 1000);
    CHECK_OK(gpuk_buffer_write_async(ctx, s2, x, 0, in, (size_t)n * 4));
    CHECK_OK(gpuk_launch(ctx, slow, &(gpuk_launch_desc){ .grid = grid, .block = block, .stream = s2,
                                                         GPUK_ARGS(&px, &pw, &three, &half, &n, &spin) }));
    CHECK_OK(gpuk_stream_join(ctx, s, &s2, 1));
    CHECK_OK(gpuk_launch(ctx, vadd, &(gpuk_launch_desc){ .grid = grid, .block = block, .stream = s,
                                                         GPUK_ARGS(&pw, &pw, &pv, &n) }));
    CHECK_OK(gpuk_buffer_read_async(ctx, s, v, 0, out, (size_t)n * 4));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_stream_sync(ctx, s2));
    for (i = 0; i < n; i++) {
        float affine = fmaf(in[i], three, half);
        if (out[i] != affine + affine && bad++ < 5) fprintf(stderr, "  after: v[%u] = %.9g, want %.9g\n", i, out[i], affine + affine);
    }
    CHECK(bad == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, graph));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_stream_destroy(ctx, s2));
    CHECK_OK(gpuk_pinned_destroy(ctx, hin));
    CHECK_OK(gpuk_pinned_destroy(ctx, hout));
    CHECK_OK(gpuk_module_unload(ctx, m));
    CHECK_OK(gpuk_buffer_destroy(ctx, x));
    CHECK_OK(gpuk_buffer_destroy(ctx, z));
    CHECK_OK(gpuk_buffer_destroy(ctx, w));
    CHECK_OK(gpuk_buffer_destroy(ctx, v));
    return TEST_PASS;
}

/* A capture on stream a; on stream b of the same ctx, in the same thread, a built-in's first
   use (its module's JIT load and its scratch: calls the driver refuses during a global-mode
   capture, or a thread-local one of this thread, invalidating it). In each capture mode the
   built-in gives the right sum and a's capture still ends in a graph that replays. A fresh
   ctx each time, so that the built-in is not loaded yet. */
static int test_first_use_beside_a_capture(void) {
    static const gpuk_capture_mode modes[] = { GPUK_CAPTURE_GLOBAL, GPUK_CAPTURE_THREAD_LOCAL,
                                               GPUK_CAPTURE_RELAXED };
    static const char* const names[] = { "global", "thread-local", "relaxed" };
    const size_t n = 300001;
    float* x = (float*)malloc(n * sizeof *x);
    float y[1024], sum = 0;
    size_t m, i;
    for (m = 0; m < 3; m++) {
        gpuk_ctx* c2 = NULL;
        gpuk_stream a = { 0 }, b = { 0 };
        gpuk_buffer bx = { 0 }, by = { 0 }, bs = { 0 };
        gpuk_graph g = { 0 };
        double want = 0, mag = 0;
        size_t bad = 0;
        int before = check_failures;
        CHECK_OK(gpuk_ctx_create(NULL, &c2));
        CHECK_OK(gpuk_stream_create(c2, &(gpuk_stream_desc){ .non_blocking = true }, &a));
        CHECK_OK(gpuk_stream_create(c2, &(gpuk_stream_desc){ .non_blocking = true }, &b));
        for (i = 0; i < n; i++) { x[i] = (float)uniform(-1, 1); want += x[i]; mag += fabs(x[i]); }
        CHECK_OK(gpuk_buffer_create(c2, &(gpuk_buffer_desc){ .data = { x, n * sizeof *x } }, &bx));
        CHECK_OK(gpuk_buffer_create(c2, &(gpuk_buffer_desc){ .bytes = sizeof y }, &by));
        CHECK_OK(gpuk_buffer_create(c2, &(gpuk_buffer_desc){ .bytes = 4 }, &bs));
        CHECK_OK(gpuk_buffer_memset(c2, GPUK_DEFAULT_STREAM, bs, 0, 0xFFC00000u, 4, 1)); /* NaN */
        CHECK_OK(gpuk_ctx_sync(c2));
        CHECK_OK(gpuk_graph_begin_capture(c2, a, modes[m]));
        CHECK_OK(gpuk_buffer_memset(c2, a, by, 0, 0x40000000u, 4, 1024)); /* 2.0f, captured */
        CHECK_OK(gpuk_sum_f32(c2, b, gpuk_at(bs, 0), gpuk_at(bx, 0), n)); /* first use, on b */
        CHECK_OK(gpuk_graph_end_capture(c2, a, &g));
        CHECK_OK(gpuk_stream_sync(c2, b));
        CHECK_OK(gpuk_buffer_read(c2, bs, 0, &sum, 4));
        CHECK(fabs((double)sum - want) <= 8 * (log2((double)n) + 64) * 5.96e-8 * mag);
        for (i = 0; i < 1024; i++) y[i] = -1.0f;
        CHECK_OK(gpuk_buffer_write(c2, by, 0, y, sizeof y));
        CHECK_OK(gpuk_graph_launch(c2, a, g));
        CHECK_OK(gpuk_stream_sync(c2, a));
        CHECK_OK(gpuk_buffer_read(c2, by, 0, y, sizeof y));
        for (i = 0; i < 1024; i++) bad += y[i] != 2.0f;
        CHECK(bad == 0);
        if (g.id) CHECK_OK(gpuk_graph_destroy(c2, g));
        CHECK_OK(gpuk_ctx_destroy(c2));
        printf("     %s capture: %s\n", names[m], check_failures == before ? "sum right, capture intact" : "FAILED");
    }
    free(x);
    return TEST_PASS;
}

/* gpuk_ctx_destroy with a capture open on one of its streams: GPUK_ERR_CAPTURING naming it,
   the capture intact (it ends in a graph that replays), then the destroy succeeds. */
static int test_ctx_destroy_with_a_capture_open(void) {
    gpuk_ctx* c2 = NULL;
    gpuk_stream a = { 0 };
    gpuk_buffer by = { 0 };
    gpuk_graph g = { 0 };
    uint32_t y[256];
    size_t i, bad = 0;
    CHECK_OK(gpuk_ctx_create(NULL, &c2));
    CHECK_OK(gpuk_stream_create(c2, &(gpuk_stream_desc){ .non_blocking = true }, &a));
    CHECK_OK(gpuk_buffer_create(c2, &(gpuk_buffer_desc){ .bytes = sizeof y }, &by));
    CHECK_OK(gpuk_graph_begin_capture(c2, a, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_memset(c2, a, by, 0, 0x12345678u, 4, 256));
    CHECK_RESULT(gpuk_ctx_destroy(c2), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("is capturing into a CUDA graph; the ctx is kept");
    printf("     %s\n", gpuk_last_error());
    CHECK_RESULT(gpuk_ctx_destroy(c2), GPUK_ERR_CAPTURING);
    CHECK_OK(gpuk_graph_end_capture(c2, a, &g));
    for (i = 0; i < 256; i++) y[i] = 0;
    CHECK_OK(gpuk_buffer_write(c2, by, 0, y, sizeof y));
    CHECK_OK(gpuk_graph_launch(c2, a, g));
    CHECK_OK(gpuk_stream_sync(c2, a));
    CHECK_OK(gpuk_buffer_read(c2, by, 0, y, sizeof y));
    for (i = 0; i < 256; i++) bad += y[i] != 0x12345678u;
    CHECK(bad == 0);
    CHECK_OK(gpuk_ctx_destroy(c2));
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (!gpu_setup("gpu_graphs", 6, &ctx, &code)) return code;
    if (!(gpuk_features() & GPUK_FEATURE_GRAPHS)) {
        printf("skip gpu_graphs: the driver has no graph entry points\n0 passed, 0 failed, 6 skipped\n");
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    RUN(test_builtins_replay_correctly_from_a_graph);
    RUN(test_unprepared_builtin_refused_during_capture);
    RUN(test_graph_of_launches_copies_and_builtins);
    RUN(test_fork_and_join_inside_a_capture);
    RUN(test_first_use_beside_a_capture);
    RUN(test_ctx_destroy_with_a_capture_open);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
