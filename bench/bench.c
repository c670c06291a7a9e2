/* bench/bench.c - gpuk against the raw driver in one run: launch host cost of an empty kernel,
   pinned 256 MiB host<->device copies, device->device copy, init to the first kernel, and a
   chain of 64 tiny kernels launched on a stream against the same chain replayed as a CUDA
   graph (gpuk_graph_*; per-kernel time to completion).
   Medians of repeats after warm-up; ratios, never absolute pass/fail times. Results also go to
   build/bench-csv/driver.csv (bench_csv.h).
   cc -std=c99 -O2 -I.. bench.c -o bench -ldl -lpthread */
#define _POSIX_C_SOURCE 199309L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "bench_clock.h"
#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char empty_ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n";
/* *p += 1 from one thread: a tiny kernel whose count proves every launch of the chain ran */
static const char inc_ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n.visible .entry inc(.param .u64 p)\n{\n"
    " .reg .b32 %r; .reg .b64 %a;\n ld.param.u64 %a, [p]; cvta.to.global.u64 %a, %a;\n"
    " ld.global.u32 %r, [%a]; add.u32 %r, %r, 1; st.global.u32 [%a], %r;\n ret;\n}\n";

typedef unsigned int cu_res;
typedef cu_res (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            void*, void**, void**);
typedef cu_res (*htod_fn)(gpuk_devptr, const void*, size_t);
typedef cu_res (*dtoh_fn)(void*, gpuk_devptr, size_t);
typedef cu_res (*dtod_fn)(gpuk_devptr, gpuk_devptr, size_t);
typedef cu_res (*sync_fn)(void);
typedef cu_res (*getfn_fn)(void**, void*, const char*);

static double now_us(void) { return now_ms() * 1e3; }

/* Symbols from the same driver gpuk loaded, at the ABI versions cuda.h 13 maps them to. */
static void* sym(const char* name, int version) {
    void* p = gpuk_driver_symbol(name, version);
    if (!p) { fprintf(stderr, "bench: the driver has no %s\n", name); exit(1); }
    return p;
}
#define SYM(var, type, name, ver) do { void* p_ = sym(name, ver); memcpy(&var, &p_, sizeof p_); } while (0)

#define TRY(call) do { gpuk_result r_ = (call); if (r_ != GPUK_OK) { \
    fprintf(stderr, "bench: %s\n", gpuk_last_error()); return 1; } } while (0)
#define RAW(call) do { cu_res r_ = (call); if (r_) { fprintf(stderr, "bench: %s = %u\n", #call, r_); return 1; } } while (0)

enum { REPEATS = 11, BATCH = 1000, BATCHES = 20, CHAIN = 64, CHAINS = 50 };

/* The 64-kernel chain: per-kernel time to completion (enqueue + sync, wall clock) of CHAINS
   chains back to back, launched one kernel at a time on a stream and replayed as a graph
   captured once; medians of REPEATS after warm-up, interleaved. The counter must end at the
   number of launches. */
static int chain_bench(gpuk_ctx* ctx, double* out_stream_us, double* out_graph_us) {
    gpuk_module m;
    gpuk_kernel k;
    gpuk_stream s;
    gpuk_buffer counter;
    gpuk_graph g;
    gpuk_devptr p;
    double st[REPEATS], gr[REPEATS];
    uint32_t count = 0, launched = 0;
    int rep, c, i;
    TRY(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { inc_ptx, 0 } }, &m));
    TRY(gpuk_kernel_get(ctx, m, "inc", &k));
    TRY(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(count) }, &counter));
    p = gpuk_buffer_devptr(ctx, counter);
#define CHAIN_LAUNCH() gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32), \
                                                                .stream = s, GPUK_ARGS(&p) })
    TRY(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    for (i = 0; i < CHAIN; i++) TRY(CHAIN_LAUNCH());
    TRY(gpuk_graph_end_capture(ctx, s, &g));
    for (rep = -3; rep < REPEATS; rep++) {
        double t = now_us(), t_stream, t_graph;
        for (c = 0; c < CHAINS; c++)
            for (i = 0; i < CHAIN; i++) TRY(CHAIN_LAUNCH());
        TRY(gpuk_stream_sync(ctx, s));
        t_stream = now_us() - t;
        t = now_us();
        for (c = 0; c < CHAINS; c++) TRY(gpuk_graph_launch(ctx, s, g));
        TRY(gpuk_stream_sync(ctx, s));
        t_graph = now_us() - t;
        launched += 2u * CHAINS * CHAIN;
        if (rep >= 0) { st[rep] = t_stream / (CHAINS * CHAIN); gr[rep] = t_graph / (CHAINS * CHAIN); }
    }
#undef CHAIN_LAUNCH
    TRY(gpuk_buffer_read(ctx, counter, 0, &count, sizeof count));
    if (count != launched) {
        fprintf(stderr, "bench: the chain's counter is %u, want %u launches\n", count, launched);
        return 1;
    }
    *out_stream_us = median(st, REPEATS);
    *out_graph_us = median(gr, REPEATS);
    TRY(gpuk_graph_destroy(ctx, g));
    TRY(gpuk_stream_destroy(ctx, s));
    TRY(gpuk_buffer_destroy(ctx, counter));
    return gpuk_module_unload(ctx, m) != GPUK_OK;
}

int main(void) {
    double t0 = now_us(), t_init, t_ctx, t_mod, t_first;
    gpuk_ctx* ctx;
    gpuk_module mod;
    gpuk_kernel k;
    launch_fn raw_launch;
    htod_fn raw_htod;
    dtoh_fn raw_dtoh;
    dtod_fn raw_dtod;
    sync_fn raw_sync;
    getfn_fn raw_getfn;
    void* raw_func = NULL;
    void* stream;
    double raw_us[REPEATS], gpuk_us[REPEATS], lr, lg;
    int rep, i, b;
    size_t bytes = (size_t)256 << 20;
    gpuk_buffer d1, d2;
    gpuk_pinned h;
    double ratio_h2d, ratio_d2h, ratio_d2d, bw_h2d, bw_d2h, bw_d2d, raw_h2d, raw_d2h, raw_d2d;
    gpuk_device_info info;
    double chain_stream_us = 0, chain_graph_us = 0;
    int have_graphs;

    /* init to first launched kernel, split by stage; first thing in the process */
    TRY(gpuk_init(NULL));
    t_init = now_us();
    TRY(gpuk_ctx_create(NULL, &ctx));
    t_ctx = now_us();
    TRY(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { empty_ptx, 0 } }, &mod));
    TRY(gpuk_kernel_get(ctx, mod, "empty", &k));
    t_mod = now_us();
    TRY(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 } }));
    TRY(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
    t_first = now_us();
    info = *gpuk_ctx_device_info(ctx);

    SYM(raw_launch, launch_fn, "cuLaunchKernel", 4000);
    SYM(raw_htod, htod_fn, "cuMemcpyHtoD", 3020);
    SYM(raw_dtoh, dtoh_fn, "cuMemcpyDtoH", 3020);
    SYM(raw_dtod, dtod_fn, "cuMemcpyDtoD", 3020);
    SYM(raw_sync, sync_fn, "cuCtxSynchronize", 2000);
    SYM(raw_getfn, getfn_fn, "cuModuleGetFunction", 2000);
    TRY(gpuk_ctx_make_current(ctx));
    {   /* the raw side gets its own CUfunction from its own module load, as a raw program would */
        typedef cu_res (*load_fn)(void**, const void*);
        load_fn raw_load;
        void* raw_mod = NULL;
        SYM(raw_load, load_fn, "cuModuleLoadData", 2000);
        RAW(raw_load(&raw_mod, empty_ptx));
        RAW(raw_getfn(&raw_func, raw_mod, "empty"));
    }
    stream = gpuk_stream_native(ctx, GPUK_DEFAULT_STREAM);

    /* launch: host time per call, in batches so the queue never fills; interleaved raw/gpuk */
    for (rep = -2; rep < REPEATS; rep++) {
        double traw = 0, tg = 0;
        for (b = 0; b < BATCHES; b++) {
            double s = now_us();
            for (i = 0; i < BATCH; i++) RAW(raw_launch(raw_func, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
            traw += now_us() - s;
            TRY(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
            s = now_us();
            for (i = 0; i < BATCH; i++) TRY(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 } }));
            tg += now_us() - s;
            TRY(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
        }
        if (rep >= 0) { raw_us[rep] = traw / (BATCH * BATCHES); gpuk_us[rep] = tg / (BATCH * BATCHES); }
    }
    lr = median(raw_us, REPEATS);
    lg = median(gpuk_us, REPEATS);

    /* copies: 256 MiB, pinned host memory, interleaved raw/gpuk, wall time to completion */
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &d1));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &d2));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &h));
    memset(gpuk_pinned_ptr(ctx, h), 0x5A, bytes);
    {
        double rh[REPEATS], gh[REPEATS], rd[REPEATS], gd[REPEATS], rdd[REPEATS], gdd[REPEATS];
        void* hp = gpuk_pinned_ptr(ctx, h);
        gpuk_devptr p1 = gpuk_buffer_devptr(ctx, d1), p2 = gpuk_buffer_devptr(ctx, d2);
        for (rep = -2; rep < REPEATS; rep++) {
            double s, e[6];
            TRY(gpuk_ctx_make_current(ctx));
            s = now_us(); RAW(raw_htod(p1, hp, bytes)); e[0] = now_us() - s;
            s = now_us(); TRY(gpuk_buffer_write(ctx, d1, 0, hp, bytes)); e[1] = now_us() - s;
            s = now_us(); RAW(raw_dtoh(hp, p1, bytes)); e[2] = now_us() - s;
            s = now_us(); TRY(gpuk_buffer_read(ctx, d1, 0, hp, bytes)); e[3] = now_us() - s;
            s = now_us(); RAW(raw_dtod(p2, p1, bytes)); RAW(raw_sync()); e[4] = now_us() - s;
            s = now_us(); TRY(gpuk_buffer_copy(ctx, d2, 0, d1, 0, bytes)); e[5] = now_us() - s;
            if (rep >= 0) { rh[rep] = e[0]; gh[rep] = e[1]; rd[rep] = e[2]; gd[rep] = e[3]; rdd[rep] = e[4]; gdd[rep] = e[5]; }
        }
        {
            double mrh = median(rh, REPEATS), mgh = median(gh, REPEATS), mrd = median(rd, REPEATS);
            double mgd = median(gd, REPEATS), mrdd = median(rdd, REPEATS), mgdd = median(gdd, REPEATS);
            ratio_h2d = mrh / mgh; ratio_d2h = mrd / mgd; ratio_d2d = mrdd / mgdd;
            /* ratio: raw time over gpuk time (gpuk's speed relative to the raw driver); each
               column's bandwidth from its own median time */
            bw_h2d = bytes / mgh / 1e3; bw_d2h = bytes / mgd / 1e3; bw_d2d = 2.0 * bytes / mgdd / 1e3;
            raw_h2d = bytes / mrh / 1e3; raw_d2h = bytes / mrd / 1e3; raw_d2d = 2.0 * bytes / mrdd / 1e3;
            printf("copy medians (us): h2d raw %.0f gpuk %.0f | d2h raw %.0f gpuk %.0f | d2d raw %.0f gpuk %.0f\n",
                   mrh, mgh, mrd, mgd, mrdd, mgdd);
        }
    }
    have_graphs = (gpuk_features() & GPUK_FEATURE_GRAPHS) != 0;
    if (have_graphs && chain_bench(ctx, &chain_stream_us, &chain_graph_us)) return 1;
    TRY(gpuk_ctx_destroy(ctx));

    printf("\n== gpuk bench on %s (sm_%d%d, driver %d), medians of %d after warm-up ==\n", info.name,
           info.cc_major, info.cc_minor, info.driver_version, REPEATS);
    printf("%-44s %12s %12s %8s %s\n", "measure", "raw driver", "gpuk", "ratio", "goal");
    printf("%-44s %9.3f us %9.3f us %+7.3f %s\n", "empty-kernel launch, host cost per call", lr, lg, lg - lr,
           "gpuk - raw <= +0.100 us");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s\n", "pinned 256 MiB host->device", raw_h2d, bw_h2d, ratio_h2d, ">= 0.97");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s\n", "pinned 256 MiB device->host", raw_d2h, bw_d2h, ratio_d2h, ">= 0.97");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s\n", "256 MiB device->device (read+write)", raw_d2d, bw_d2d, ratio_d2d, ">= 0.97");
    if (have_graphs)
        printf("%-44s %9.3f us %9.3f us %8.3f %s\n", "64-kernel chain, per kernel: stream | graph", chain_stream_us,
               chain_graph_us, chain_graph_us / chain_stream_us, "graph / stream <= 0.6");
    else
        printf("64-kernel chain: skipped, the driver has no CUDA graphs\n");
    printf("init to first kernel: driver load + cuInit %.1f ms, context %.1f ms, module load %.1f ms, "
           "first launch+sync %.2f ms, total %.1f ms\n", (t_init - t0) / 1e3, (t_ctx - t_init) / 1e3,
           (t_mod - t_ctx) / 1e3, (t_first - t_mod) / 1e3, (t_first - t0) / 1e3);
    /* CSV: gpuk's figures. The launch line's ratio column is a difference (gpuk - raw, us); its
       ratio here is raw time over gpuk time like the copies', and the goal gpuk - raw <= 0.1 us
       the same bound as a ratio: raw / (raw + 0.1). */
    bench_csv_open("driver", info.name);
    bench_csv_row("empty-kernel launch, host cost per call", "1 block", lg / 1e3, lg - lr, "us over raw", lr / lg,
                  lr / (lr + 0.1));
    bench_csv_row("pinned host->device", "256 MiB", bytes / bw_h2d / 1e6, bw_h2d, "GB/s", ratio_h2d, 0.97);
    bench_csv_row("pinned device->host", "256 MiB", bytes / bw_d2h / 1e6, bw_d2h, "GB/s", ratio_d2h, 0.97);
    bench_csv_row("device->device", "256 MiB", 2.0 * bytes / bw_d2d / 1e6, bw_d2d, "GB/s read+write", ratio_d2d, 0.97);
    /* the chain: ratio stream time / graph time, so that higher is better like the other rows
       (goal: graph <= 0.6 x stream) */
    if (have_graphs)
        bench_csv_row("64-kernel chain as a graph, per kernel", "64 x 1 block", chain_graph_us / 1e3, chain_graph_us,
                      "us (stream: see ratio)", chain_stream_us / chain_graph_us, 1.0 / 0.6);
    bench_csv_row("init to first kernel", "", (t_first - t0) / 1e3, BENCH_CSV_NONE, "", BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_close();
    return 0;
}
