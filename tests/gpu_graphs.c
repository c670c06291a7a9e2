/* tests/gpu_graphs.c - built-in kernels captured into a CUDA graph and replayed: one capture of
   a reduction, an argmax, a dot, three scans (2^24 i32 inclusive: the case that went wrong on
   every replay after the first when the scan epoch was a launch argument; f32 exclusive; f64
   inclusive, the sm_70 variant where the device has it) and two histograms, then eight
   replays, each on fresh random inputs written between replays, every output poisoned first
   and checked against a CPU reference. Also: a built-in that would load or allocate during a
   capture returns GPUK_ERR_CAPTURING and the capture still ends cleanly. The graph calls come
   from the driver through gpuk_driver_symbol (gpuk does not wrap graphs yet). Skipped where no
   driver or GPU exists, or where the driver has no graph entry points. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>
#include <time.h>

static gpuk_ctx* ctx;

/* The driver's graph entry points, with cuda.h's parameter types spelled as gpuk does. */
typedef unsigned int (*pfn_begin)(void* stream, unsigned int mode);
typedef unsigned int (*pfn_end)(void* stream, void** out_graph);
typedef unsigned int (*pfn_instantiate)(void** out_exec, void* graph, unsigned long long flags);
typedef unsigned int (*pfn_launch)(void* exec, void* stream);
typedef unsigned int (*pfn_destroy)(void* object);
static pfn_begin begin_capture;
static pfn_end end_capture;
static pfn_instantiate instantiate;
static pfn_launch graph_launch;
static pfn_destroy exec_destroy, graph_destroy;
enum { CAPTURE_MODE_THREAD_LOCAL = 1 };

static int resolve(void* dst, const char* name, int version) {
    void* p = gpuk_driver_symbol(name, version);
    memcpy(dst, &p, sizeof p); /* ISO C: no direct object->function pointer cast */
    return p != NULL;
}
static int graphs_available(void) {
    return resolve(&begin_capture, "cuStreamBeginCapture", 10010) && resolve(&end_capture, "cuStreamEndCapture", 10000) &&
           resolve(&instantiate, "cuGraphInstantiateWithFlags", 11040) && resolve(&graph_launch, "cuGraphLaunch", 10000) &&
           resolve(&exec_destroy, "cuGraphExecDestroy", 10000) && resolve(&graph_destroy, "cuGraphDestroy", 10000);
}
#define CHECK_CU(expr) do { unsigned int cu_ = (expr); if (cu_) fprintf(stderr, "  %s -> CUresult %u\n", #expr, cu_); CHECK(cu_ == 0); } while (0)


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
    void *graph = NULL, *exec = NULL;
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
    CHECK_CU(begin_capture(gpuk_stream_native(ctx, s), CAPTURE_MODE_THREAD_LOCAL));
    r = enqueue(&w, s);
    CHECK_OK(r);
    CHECK_CU(end_capture(gpuk_stream_native(ctx, s), &graph));
    CHECK(graph != NULL);
    if (graph) CHECK_CU(instantiate(&exec, graph, 0));
    for (replay = 0; exec && replay < 8; replay++) {
        size_t b;
        refresh(&w, s);
        CHECK_CU(graph_launch(exec, gpuk_stream_native(ctx, s)));
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
    if (exec) CHECK_CU(exec_destroy(exec));
    if (graph) CHECK_CU(graph_destroy(graph));
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
    void *graph = NULL, *exec = NULL;
    uint32_t host[5000], got[5000], run = 0;
    size_t i, bad = 0;
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_kernels_load(ctx, "scan_inclusive_u32"));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, n));
    for (i = 0; i < n; i++) host[i] = (uint32_t)rng();
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, host, sizeof host));
    CHECK_CU(begin_capture(gpuk_stream_native(ctx, s), CAPTURE_MODE_THREAD_LOCAL));
    CHECK_RESULT(gpuk_norm2_f64(ctx, s, gpuk_at(b, 0), gpuk_at(b, 1), 100), GPUK_ERR_CAPTURING);
    CHECK_RESULT(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), too_long), GPUK_ERR_CAPTURING);
    CHECK_OK(gpuk_scan_inclusive_u32(ctx, s, gpuk_at(b, 0), gpuk_at(b, 0), n));
    CHECK_CU(end_capture(gpuk_stream_native(ctx, s), &graph));
    if (graph) CHECK_CU(instantiate(&exec, graph, 0));
    if (exec) CHECK_CU(graph_launch(exec, gpuk_stream_native(ctx, s)));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, got, sizeof got));
    for (i = 0; i < n; i++) { run += host[i]; bad += got[i] != run; }
    CHECK(bad == 0);
    if (exec) CHECK_CU(exec_destroy(exec));
    if (graph) CHECK_CU(graph_destroy(graph));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (!gpu_setup("gpu_graphs", 2, &ctx, &code)) return code;
    if (!graphs_available()) {
        printf("skip gpu_graphs: the driver has no graph entry points\n0 passed, 0 failed, 2 skipped\n");
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    RUN(test_builtins_replay_correctly_from_a_graph);
    RUN(test_unprepared_builtin_refused_during_capture);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
