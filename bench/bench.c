/* bench/bench.c - gpuk against the raw driver in one run: launch host cost of an empty kernel,
   host cost of an event record (gpuk's asks whether the stream is being captured first),
   pinned 256 MiB host<->device copies, device->device copy, init to the first kernel, a chain
   of 64 tiny kernels launched on a stream against the same chain replayed as a CUDA graph
   (gpuk_graph_*; per-kernel time to completion), and pageable (malloc'd) host<->device copies
   from 64 KiB to 256 MiB: the raw driver, gpuk direct (no_staging), gpuk staged at every size,
   gpuk as configured by default, and pinned, with the size from which staging beats the
   direct copy (the crossover behind gpuk's default staging_min_bytes); then 256 MiB staged
   through 16, 32 and 64 MiB of staging (gpuk_ctx_desc.staging_bytes), and through 1, 2, 4, 8
   and 16 copying threads (gpuk_ctx_desc.staging_threads) beside the same threads' bare
   memcpy, and the alternative of page-locking the caller's memory for the copy
   (cuMemHostRegister + cuMemcpyHtoD/DtoH + cuMemHostUnregister).
   Medians of repeats after warm-up; ratios, never absolute pass/fail times. Results also go to
   build/bench-csv/driver.csv (bench_csv.h).
   cc -std=c99 -O2 -I.. bench.c -o bench -ldl -lpthread */
#define _POSIX_C_SOURCE 200112L /* clock_gettime; pthread barriers */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "bench_clock.h"
#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

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
typedef cu_res (*evcreate_fn)(void**, unsigned);
typedef cu_res (*evrecord_fn)(void*, void*);
typedef cu_res (*evdestroy_fn)(void*);
typedef cu_res (*register_fn)(void*, size_t, unsigned);
typedef cu_res (*unregister_fn)(void*);

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

/* Pageable copies, one direction: per size, the median time of one copy for each way. */
enum { WAYS = 5, PSIZES = 7 };
static const char* const way_name[WAYS] = { "raw", "direct", "staged", "default", "pinned" };
static const size_t psize[PSIZES] = { 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20 };

typedef struct pageable_setup {
    gpuk_ctx* ctx[3];      /* ways 1-3: no_staging, staging_min_bytes 1, the defaults */
    gpuk_buffer buf[3];    /* the same 256 MiB of device memory in each */
    gpuk_devptr dev;
    void* pageable;        /* 256 MiB of malloc'd, touched memory */
    void* pinned;
    htod_fn htod;
    dtoh_fn dtoh;
    sync_fn sync;
} pageable_setup;

/* One copy of bytes by way w (0 raw pageable, 1-3 gpuk's ctxs, 4 raw pinned), done when it
   returns (the raw pageable host->device copy may return before its DMA ends: synced, as gpuk
   waits); 0 on success. */
static int pageable_copy(const pageable_setup* p, int w, int to_device, size_t bytes) {
    void* host = w == 4 ? p->pinned : p->pageable;
    if (w == 0 || w == 4) {
        if (gpuk_ctx_make_current(p->ctx[2]) != GPUK_OK) return 1;
        if (to_device) return p->htod(p->dev, host, bytes) != 0 || p->sync() != 0;
        return (int)p->dtoh(host, p->dev, bytes);
    }
    return to_device ? gpuk_buffer_write(p->ctx[w - 1], p->buf[w - 1], 0, host, bytes) != GPUK_OK
                     : gpuk_buffer_read(p->ctx[w - 1], p->buf[w - 1], 0, host, bytes) != GPUK_OK;
}

/* GB/s[size][way] for one direction: enough copies per sample for 64 MiB, ways interleaved,
   medians of REPEATS after two warm-up rounds (the first staged copy allocates the staging). */
static int pageable_measure(const pageable_setup* p, int to_device, double gbs[PSIZES][WAYS]) {
    int i, w, rep;
    for (i = 0; i < PSIZES; i++) {
        size_t k, iters = psize[i] >= ((size_t)64 << 20) ? 1 : ((size_t)64 << 20) / psize[i];
        double t[WAYS][REPEATS];
        for (rep = -2; rep < REPEATS; rep++)
            for (w = 0; w < WAYS; w++) {
                double s = now_us();
                for (k = 0; k < iters; k++)
                    if (pageable_copy(p, w, to_device, psize[i])) {
                        fprintf(stderr, "bench: pageable copy (%s, %zu bytes) failed: %s\n", way_name[w], psize[i],
                                gpuk_last_error());
                        return 1;
                    }
                if (rep >= 0) t[w][rep] = (now_us() - s) / (double)iters;
            }
        for (w = 0; w < WAYS; w++) gbs[i][w] = (double)psize[i] / median(t[w], REPEATS) / 1e3;
    }
    return 0;
}

/* The host side's own limit: T threads' memcpy over the 256 MiB of pageable memory into (or
   out of) the first 8 MiB of pinned memory, in 8 MiB pieces each cut into T contiguous slices,
   thread i copying slice i of every piece, all pieces copied one after another with the
   threads waiting for each other after each piece (as a staged copy's threads do, without its
   DMA); GB/s, median of REPEATS. A staged copy moves every byte through such a memcpy, so it
   cannot be faster. */
enum { MOST_THREADS = 16 };
typedef struct memcpy_job {
    const pageable_setup* p;
    size_t bytes;
    int into_pinned, threads, index;
    pthread_barrier_t* barrier;
} memcpy_job;
static void* memcpy_slices(void* arg) {
    const memcpy_job* j = (const memcpy_job*)arg;
    const size_t piece = (size_t)8 << 20, at = (size_t)j->index * (piece / (size_t)j->threads);
    const size_t slice = j->index == j->threads - 1 ? piece - at : piece / (size_t)j->threads;
    size_t off;
    for (off = 0; off < j->bytes; off += piece) {
        char* pinned = (char*)j->p->pinned + at;
        char* pageable = (char*)j->p->pageable + off + at;
        if (j->into_pinned) memcpy(pinned, pageable, slice);
        else memcpy(pageable, pinned, slice);
        pthread_barrier_wait(j->barrier);
    }
    return NULL;
}
static double memcpy_gbs(const pageable_setup* p, size_t bytes, int into_pinned, int threads) {
    double t[REPEATS];
    int rep, i;
    for (rep = -2; rep < REPEATS; rep++) {
        pthread_t th[MOST_THREADS];
        memcpy_job job[MOST_THREADS];
        pthread_barrier_t barrier;
        double s;
        pthread_barrier_init(&barrier, NULL, (unsigned)threads);
        for (i = 0; i < threads; i++) {
            memcpy_job j = { p, bytes, into_pinned, threads, i, &barrier };
            job[i] = j;
        }
        s = now_us();
        for (i = 1; i < threads; i++)
            if (pthread_create(&th[i], NULL, memcpy_slices, &job[i]) != 0) { fprintf(stderr, "bench: no thread\n"); exit(1); }
        memcpy_slices(&job[0]);
        for (i = 1; i < threads; i++) pthread_join(th[i], NULL);
        if (rep >= 0) t[rep] = now_us() - s;
        pthread_barrier_destroy(&barrier);
    }
    return (double)bytes / median(t, REPEATS) / 1e3;
}

/* 256 MiB staged through a ctx of each configuration i (tcount[i] copying threads, sbytes[i]
   of staging; 0: the default), the same device memory, both ways: GB/s, medians of REPEATS
   after two warm-up rounds, configurations interleaved. */
enum { TCOUNTS = 5, SCOUNTS = 3 };
static const int tcount[TCOUNTS] = { 1, 2, 4, 8, 16 };
static const size_t scount[SCOUNTS] = { 16 << 20, 32 << 20, 64 << 20 };
static int staged_measure(const pageable_setup* p, size_t bytes, int n, const int* tcounts, const size_t* sbytes,
                          double (*gbs)[2]) {
    gpuk_ctx* c[TCOUNTS];
    gpuk_buffer b[TCOUNTS];
    double t[TCOUNTS][2][REPEATS];
    int i, dir, rep;
    for (i = 0; i < n; i++) {
        TRY(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_min_bytes = 1, .staging_threads = (uint32_t)tcounts[i],
                                             .staging_bytes = sbytes[i] }, &c[i]));
        TRY(gpuk_buffer_create(c[i], &(gpuk_buffer_desc){ .bytes = bytes, .wrap = p->dev }, &b[i]));
    }
    for (rep = -2; rep < REPEATS; rep++)
        for (i = 0; i < n; i++)
            for (dir = 0; dir < 2; dir++) {
                double s = now_us();
                TRY(dir == 0 ? gpuk_buffer_write(c[i], b[i], 0, p->pageable, bytes)
                             : gpuk_buffer_read(c[i], b[i], 0, p->pageable, bytes));
                if (rep >= 0) t[i][dir][rep] = now_us() - s;
            }
    for (i = 0; i < n; i++) {
        for (dir = 0; dir < 2; dir++) gbs[i][dir] = (double)bytes / median(t[i][dir], REPEATS) / 1e3;
        TRY(gpuk_buffer_destroy(c[i], b[i]));
        TRY(gpuk_ctx_destroy(c[i]));
    }
    return 0;
}

/* The alternative to staging: page-lock the caller's memory for the one copy. Per copy:
   cuMemHostRegister(256 MiB of pageable memory, flags 0) + cuMemcpyHtoD (DtoH) +
   cuMemHostUnregister, all three timed together; GB/s, median of REPEATS. */
static int register_copy_gbs(const pageable_setup* p, size_t bytes, register_fn reg, unregister_fn unreg,
                             double out_gbs[2]) {
    double t[2][REPEATS];
    int rep, dir;
    TRY(gpuk_ctx_make_current(p->ctx[2]));
    for (rep = -2; rep < REPEATS; rep++)
        for (dir = 0; dir < 2; dir++) {
            double s = now_us();
            RAW(reg(p->pageable, bytes, 0u));
            if (dir == 0) RAW(p->htod(p->dev, p->pageable, bytes) || p->sync()); /* done before the unregister */
            else RAW(p->dtoh(p->pageable, p->dev, bytes));
            RAW(unreg(p->pageable));
            if (rep >= 0) t[dir][rep] = now_us() - s;
        }
    for (dir = 0; dir < 2; dir++) out_gbs[dir] = (double)bytes / median(t[dir], REPEATS) / 1e3;
    return 0;
}

/* The smallest size from which staged beats direct at every larger size measured; 0: none. */
static size_t pageable_crossover(double gbs[PSIZES][WAYS]) {
    int i;
    size_t from = 0;
    for (i = PSIZES - 1; i >= 0 && gbs[i][2] > gbs[i][1]; i--) from = psize[i];
    return from;
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
    double raw_us[REPEATS], gpuk_us[REPEATS], lr, lg, ev_raw_us = 0, ev_gpuk_us = 0;
    int rep, i, b;
    size_t bytes = (size_t)256 << 20;
    gpuk_buffer d1, d2;
    gpuk_pinned h;
    double ratio_h2d, ratio_d2h, ratio_d2d, bw_h2d, bw_d2h, bw_d2d, raw_h2d, raw_d2h, raw_d2d;
    double pg_h2d, pg_d2h, pg_raw_h2d, pg_raw_d2h, pg_pin_h2d, pg_pin_d2h; /* pageable 256 MiB */
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

    /* event record: host time per call, raw cuEventRecord against gpuk_event_record on the
       default stream, timing-free events, in batches, interleaved. gpuk asks cuStreamIsCapturing
       first (inside a capture a record becomes a graph node, CU_EVENT_RECORD_EXTERNAL): this is
       that question's cost outside a capture. */
    {
        evcreate_fn raw_evcreate;
        evrecord_fn raw_evrecord;
        evdestroy_fn raw_evdestroy;
        void* raw_ev = NULL;
        gpuk_event ev;
        double er[REPEATS], eg[REPEATS];
        SYM(raw_evcreate, evcreate_fn, "cuEventCreate", 2000);
        SYM(raw_evrecord, evrecord_fn, "cuEventRecord", 2000);
        SYM(raw_evdestroy, evdestroy_fn, "cuEventDestroy", 4000);
        RAW(raw_evcreate(&raw_ev, 2u)); /* CU_EVENT_DISABLE_TIMING */
        TRY(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = true }, &ev));
        for (rep = -2; rep < REPEATS; rep++) {
            double traw = 0, tg = 0;
            for (b = 0; b < BATCHES; b++) {
                double s = now_us();
                for (i = 0; i < BATCH; i++) RAW(raw_evrecord(raw_ev, stream));
                traw += now_us() - s;
                TRY(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
                s = now_us();
                for (i = 0; i < BATCH; i++) TRY(gpuk_event_record(ctx, GPUK_DEFAULT_STREAM, ev));
                tg += now_us() - s;
                TRY(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
            }
            if (rep >= 0) { er[rep] = traw / (BATCH * BATCHES); eg[rep] = tg / (BATCH * BATCHES); }
        }
        ev_raw_us = median(er, REPEATS);
        ev_gpuk_us = median(eg, REPEATS);
        RAW(raw_evdestroy(raw_ev));
        TRY(gpuk_event_destroy(ctx, ev));
    }

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

    /* pageable copies: the same device memory through three ctxs (one primary context) */
    {
        pageable_setup p;
        double h2d[PSIZES][WAYS], d2h[PSIZES][WAYS];
        memset(&p, 0, sizeof p);
        p.dev = gpuk_buffer_devptr(ctx, d1);
        p.pinned = gpuk_pinned_ptr(ctx, h);
        p.htod = raw_htod;
        p.dtoh = raw_dtoh;
        p.sync = raw_sync;
        TRY(gpuk_ctx_create(&(gpuk_ctx_desc){ .no_staging = true }, &p.ctx[0]));
        TRY(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_min_bytes = 1 }, &p.ctx[1]));
        p.ctx[2] = ctx;
        for (i = 0; i < 2; i++)
            TRY(gpuk_buffer_create(p.ctx[i], &(gpuk_buffer_desc){ .bytes = bytes, .wrap = p.dev }, &p.buf[i]));
        p.buf[2] = d1;
        if (!(p.pageable = malloc(bytes))) { fprintf(stderr, "bench: no 256 MiB of host memory\n"); return 1; }
        memset(p.pageable, 0x3C, bytes); /* touched: no first-touch page faults in the timing */
        if (pageable_measure(&p, 1, h2d) || pageable_measure(&p, 0, d2h)) return 1;
        printf("\n== pageable copies (GB/s; raw driver cuMemcpyHtoD/DtoH from malloc'd memory, gpuk direct = "
               "no_staging, staged at every size by the default %u threads, default, pinned), medians of %d ==\n",
               (unsigned)gpuk_ctx_desc_defaults(NULL).staging_threads, REPEATS);
        printf("%-9s | %-37s | %-37s\n", "size", "host->device", "device->host");
        printf("%-9s |", "");
        for (i = 0; i < 2; i++) { int w; for (w = 0; w < WAYS; w++) printf(" %7s", way_name[w]); printf(" |"); }
        printf("\n");
        for (i = 0; i < PSIZES; i++) {
            int w;
            printf("%6zu KiB |", psize[i] >> 10);
            for (w = 0; w < WAYS; w++) printf(" %7.2f", h2d[i][w]);
            printf(" |");
            for (w = 0; w < WAYS; w++) printf(" %7.2f", d2h[i][w]);
            printf(" |\n");
        }
        printf("crossover (staged faster than direct from this size up): host->device %zu KiB, device->host "
               "%zu KiB (0: never); gpuk's default staging_min_bytes: %zu KiB (0: nothing staged)\n",
               pageable_crossover(h2d) >> 10, pageable_crossover(d2h) >> 10,
               gpuk_ctx_desc_defaults(NULL).staging_min_bytes == (size_t)-1 ? 0 : gpuk_ctx_desc_defaults(NULL).staging_min_bytes >> 10);
        {
            int dt = (int)gpuk_ctx_desc_defaults(NULL).staging_threads;
            if (dt > MOST_THREADS) dt = MOST_THREADS;
            printf("memcpy over 256 MiB in 8 MiB pieces, each cut into slices among T threads waiting for each other "
                   "after each piece: T = 1: pageable->pinned %.2f GB/s, pinned->pageable %.2f GB/s; T = %d (the "
                   "default staging_threads here): %.2f GB/s, %.2f GB/s (a staged copy's host side; it cannot beat "
                   "these)\n", memcpy_gbs(&p, bytes, 1, 1), memcpy_gbs(&p, bytes, 0, 1), dt,
                   memcpy_gbs(&p, bytes, 1, dt), memcpy_gbs(&p, bytes, 0, dt));
        }
        {   /* the thread counts, to choose the default staging_threads; and page-locking instead */
            double tg[TCOUNTS][2], sg[SCOUNTS][2], rg[2];
            const size_t sdefault[TCOUNTS] = { 0 };
            int dts[SCOUNTS];
            register_fn reg;
            unregister_fn unreg;
            SYM(reg, register_fn, "cuMemHostRegister", 6050);
            SYM(unreg, unregister_fn, "cuMemHostUnregister", 4000);
            for (i = 0; i < SCOUNTS; i++) dts[i] = 0; /* the default threads */
            if (staged_measure(&p, bytes, TCOUNTS, tcount, sdefault, tg) ||
                staged_measure(&p, bytes, SCOUNTS, dts, scount, sg) || register_copy_gbs(&p, bytes, reg, unreg, rg))
                return 1;
            printf("\n== pageable 256 MiB staged through S MiB of staging (staging_bytes S, the default %u threads; "
                   "gpuk's default staging_bytes: %zu MiB), GB/s and ratio to the pinned copy above ==\n",
                   (unsigned)gpuk_ctx_desc_defaults(NULL).staging_threads, gpuk_ctx_desc_defaults(NULL).staging_bytes >> 20);
            for (i = 0; i < SCOUNTS; i++)
                printf("S = %2zu MiB | host->device %6.2f (%.2f) | device->host %6.2f (%.2f)\n", scount[i] >> 20,
                       sg[i][0], sg[i][0] / h2d[PSIZES - 1][4], sg[i][1], sg[i][1] / d2h[PSIZES - 1][4]);
            printf("\n== pageable 256 MiB staged by T copying threads (staging_threads T, the default staging_bytes), GB/s and "
                   "ratio to the pinned copy above; memcpy: the T threads' bare memcpy as in the line above ==\n");
            printf("%-3s | %-34s | %-34s\n", "T", "host->device: staged  /pinned  memcpy", "device->host: staged  /pinned  memcpy");
            for (i = 0; i < TCOUNTS; i++)
                printf("%3d | %20.2f %8.2f %7.2f | %20.2f %8.2f %7.2f\n", tcount[i], tg[i][0],
                       tg[i][0] / h2d[PSIZES - 1][4], memcpy_gbs(&p, bytes, 1, tcount[i]), tg[i][1],
                       tg[i][1] / d2h[PSIZES - 1][4], memcpy_gbs(&p, bytes, 0, tcount[i]));
            printf("page-locked for the copy instead (cuMemHostRegister 256 MiB + cuMemcpyHtoD/DtoH + cuMemHostUnregister, "
                   "timed together): host->device %.2f GB/s (%.2f of pinned), device->host %.2f GB/s (%.2f of pinned)\n",
                   rg[0], rg[0] / h2d[PSIZES - 1][4], rg[1], rg[1] / d2h[PSIZES - 1][4]);
        }
        pg_h2d = h2d[PSIZES - 1][2]; pg_d2h = d2h[PSIZES - 1][2];
        pg_raw_h2d = h2d[PSIZES - 1][0]; pg_raw_d2h = d2h[PSIZES - 1][0];
        pg_pin_h2d = h2d[PSIZES - 1][4]; pg_pin_d2h = d2h[PSIZES - 1][4];
        for (i = 0; i < 2; i++) {
            TRY(gpuk_buffer_destroy(p.ctx[i], p.buf[i]));
            TRY(gpuk_ctx_destroy(p.ctx[i]));
        }
        free(p.pageable);
    }
    have_graphs = (gpuk_features() & GPUK_FEATURE_GRAPHS) != 0;
    if (have_graphs && chain_bench(ctx, &chain_stream_us, &chain_graph_us)) return 1;
    TRY(gpuk_ctx_destroy(ctx));

    printf("\n== gpuk bench on %s (sm_%d%d, driver %d), medians of %d after warm-up ==\n", info.name,
           info.cc_major, info.cc_minor, info.driver_version, REPEATS);
    printf("%-44s %12s %12s %8s %s\n", "measure", "raw driver", "gpuk", "ratio", "goal");
    printf("%-44s %9.3f us %9.3f us %+7.3f %s\n", "empty-kernel launch, host cost per call", lr, lg, lg - lr,
           "gpuk - raw <= +0.100 us");
    printf("%-44s %9.3f us %9.3f us %+7.3f %s\n", "event record, host cost per call", ev_raw_us, ev_gpuk_us,
           ev_gpuk_us - ev_raw_us, "gpuk - raw (no goal: the capture check's cost)");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s\n", "pinned 256 MiB host->device", raw_h2d, bw_h2d, ratio_h2d, ">= 0.97");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s\n", "pinned 256 MiB device->host", raw_d2h, bw_d2h, ratio_d2h, ">= 0.97");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s\n", "256 MiB device->device (read+write)", raw_d2d, bw_d2d, ratio_d2d, ">= 0.97");
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s (%.2f of pinned, goal >= 0.70)\n", "pageable 256 MiB host->device, staged",
           pg_raw_h2d, pg_h2d, pg_h2d / pg_raw_h2d, ">= 2.0", pg_h2d / pg_pin_h2d);
    printf("%-44s %9.1f GB/s %7.1f GB/s %8.3f %s (%.2f of pinned, goal >= 0.70)\n", "pageable 256 MiB device->host, staged",
           pg_raw_d2h, pg_d2h, pg_d2h / pg_raw_d2h, ">= 2.0", pg_d2h / pg_pin_d2h);
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
    /* pageable rows: the ratio to pinned (goal: 0.70 of pinned); raw pageable is in the text */
    bench_csv_row("pageable host->device, staged, to pinned", "256 MiB", bytes / pg_h2d / 1e6, pg_h2d, "GB/s",
                  pg_h2d / pg_pin_h2d, 0.70);
    bench_csv_row("pageable device->host, staged, to pinned", "256 MiB", bytes / pg_d2h / 1e6, pg_d2h, "GB/s",
                  pg_d2h / pg_pin_d2h, 0.70);
    /* the chain: ratio stream time / graph time, so that higher is better like the other rows
       (goal: graph <= 0.6 x stream) */
    if (have_graphs)
        bench_csv_row("64-kernel chain as a graph, per kernel", "64 x 1 block", chain_graph_us / 1e3, chain_graph_us,
                      "us (stream: see ratio)", chain_stream_us / chain_graph_us, 1.0 / 0.6);
    bench_csv_row("init to first kernel", "", (t_first - t0) / 1e3, BENCH_CSV_NONE, "", BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_close();
    return 0;
}
