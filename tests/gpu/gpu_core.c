/* tests/gpu/gpu_core.c - gpuk's core on a real GPU: copies, ordering on and across streams, timing,
   user PTX with every scalar argument width, JIT logs, stale handles, 8 threads on one ctx,
   out-of-memory, and a kernel fault in a child process. Skipped where no driver or GPU exists.
   cc -std=c99 -I../.. gpu_core.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_test_kernels.h"
#include "gpu_setup.h"
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static gpuk_ctx* ctx;
static gpuk_module mod;
static const char* self_path;

static float rngf(void) { return (float)((double)(rng() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

static gpuk_kernel kernel(const char* name) {
    gpuk_kernel k = { 0 };
    CHECK_OK(gpuk_kernel_get(ctx, mod, name, &k));
    return k;
}

static gpuk_buffer buffer(size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &b));
    return b;
}

static int test_device_info_is_sane(void) {
    const gpuk_device_info* d = gpuk_ctx_device_info(ctx);
    size_t free_b = 0, total_b = 0;
    CHECK(d->name[0] != 0);
    CHECK(d->cc_major >= 5 && d->sm_count > 0 && d->warp_size == 32 && d->max_threads_per_block >= 1024);
    CHECK(d->total_bytes > ((size_t)1 << 30) && d->l2_bytes > 0 && d->driver_version >= 10000);
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_b, &total_b));
    CHECK(free_b > 0 && free_b <= total_b && total_b == d->total_bytes);
    printf("     device: %s, sm_%d%d, %d SMs, %zu MiB, driver %d\n", d->name, d->cc_major, d->cc_minor,
           d->sm_count, d->total_bytes >> 20, d->driver_version);
    return TEST_PASS;
}

/* bytes through host->device, device->device, device->host, sync and async, exactly */
static void round_trip(size_t bytes) {
    unsigned char* src = (unsigned char*)malloc(bytes);
    unsigned char* dst = (unsigned char*)malloc(bytes);
    gpuk_buffer a = buffer(bytes), b = buffer(bytes + 3);
    gpuk_pinned pin;
    size_t i;
    for (i = 0; i < bytes; i++) src[i] = (unsigned char)rng();
    memset(dst, 0xCD, bytes);
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, b, 0, 0xEE, 1, bytes + 3));
    CHECK_OK(gpuk_buffer_write(ctx, a, 0, src, bytes));
    CHECK_OK(gpuk_buffer_copy(ctx, b, 3, a, 0, bytes)); /* odd offset */
    CHECK_OK(gpuk_buffer_read(ctx, b, 3, dst, bytes));
    CHECK(memcmp(src, dst, bytes) == 0);
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, dst, 3));
    CHECK(dst[0] == 0xEE && dst[1] == 0xEE && dst[2] == 0xEE);
    /* pinned + async on the default stream */
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &pin));
    memset(gpuk_pinned_ptr(ctx, pin), 0xAB, bytes);
    CHECK_OK(gpuk_buffer_read_async(ctx, GPUK_DEFAULT_STREAM, a, 0, gpuk_pinned_ptr(ctx, pin), bytes));
    CHECK_OK(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
    CHECK(memcmp(src, gpuk_pinned_ptr(ctx, pin), bytes) == 0);
    CHECK_OK(gpuk_pinned_destroy(ctx, pin));
    CHECK_OK(gpuk_buffer_destroy(ctx, a));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    free(src);
    free(dst);
}

static int test_copies_round_trip_exactly(void) {
    round_trip(1);
    round_trip(4095);
    round_trip(((size_t)1 << 28) + 3);
    return TEST_PASS;
}

static int check_affine(const float* x, const float* y, unsigned n, float s, float add) {
    unsigned i, bad = 0;
    for (i = 0; i < n; i++) {
        double want = (double)x[i] * s + add;
        if (!(fabs(y[i] - want) <= 1e-6 * (fabs(want) + 1.0))) bad++;
    }
    return bad == 0;
}

static int test_stream_order_and_events_across_streams(void) {
    const unsigned n = 1u << 20;
    const size_t bytes = n * sizeof(float);
    gpuk_kernel slow = kernel("slow_affine");
    gpuk_stream sa, sb;
    gpuk_event done_a;
    gpuk_buffer x = buffer(bytes), y = buffer(bytes), z = buffer(bytes);
    gpuk_pinned hx, hz;
    float* px;
    float* pz;
    float s = 1.5f, add = -0.25f;
    unsigned spin = 20000, i;
    gpuk_devptr dx = gpuk_buffer_devptr(ctx, x), dy = gpuk_buffer_devptr(ctx, y);
    void* args[6] = { &dx, &dy, &s, &add, (void*)&n, &spin };
    CHECK_OK(gpuk_stream_create(ctx, NULL, &sa));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .priority = -1 }, &sb));
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = true }, &done_a));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &hx));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &hz));
    px = (float*)gpuk_pinned_ptr(ctx, hx);
    pz = (float*)gpuk_pinned_ptr(ctx, hz);
    for (i = 0; i < n; i++) { px[i] = rngf(); pz[i] = NAN; }
    /* poison y and z so that an unordered read shows */
    CHECK_OK(gpuk_buffer_memset(ctx, sa, y, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_buffer_memset(ctx, sb, z, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_stream_sync(ctx, sb));
    /* stream A: upload, slow kernel; stream B waits on A's event, then copies y -> z, downloads */
    CHECK_OK(gpuk_buffer_write_async(ctx, sa, x, 0, px, bytes));
    CHECK_OK(gpuk_launch(ctx, slow, &(gpuk_launch_desc){ .grid = { (n + 255) / 256 }, .block = { 256 },
                                                          .stream = sa, .args = args, .num_args = 6 }));
    CHECK_OK(gpuk_event_record(ctx, sa, done_a));
    CHECK_OK(gpuk_stream_wait(ctx, sb, done_a));
    CHECK_OK(gpuk_buffer_copy_async(ctx, sb, z, 0, y, 0, bytes));
    CHECK_OK(gpuk_buffer_read_async(ctx, sb, z, 0, pz, bytes));
    CHECK_OK(gpuk_stream_sync(ctx, sb));
    CHECK(check_affine(px, pz, n, s, add));
    /* on one stream: kernel then download, no explicit wait between them */
    for (i = 0; i < n; i++) pz[i] = NAN;
    s = -3.0f;
    CHECK_OK(gpuk_launch(ctx, slow, &(gpuk_launch_desc){ .grid = { (n + 255) / 256 }, .block = { 256 },
                                                          .stream = sa, .args = args, .num_args = 6 }));
    CHECK_OK(gpuk_buffer_read_async(ctx, sa, y, 0, pz, bytes));
    CHECK_OK(gpuk_stream_sync(ctx, sa));
    CHECK(check_affine(px, pz, n, s, add));
    CHECK_OK(gpuk_stream_destroy(ctx, sa));
    CHECK_OK(gpuk_stream_destroy(ctx, sb));
    return TEST_PASS;
}

/* Stream-less calls are ordered like cudaMemcpy: after a long kernel queued on a user stream
   (created with the default desc, so blocking), gpuk_buffer_read sees its results,
   gpuk_buffer_write does not overwrite an input the kernel has not read yet, and
   gpuk_buffer_copy copies its results. Outputs are poisoned (NaN) and the kernel spins for tens of
   milliseconds, so a call that ran beside it would show stale or changed data. */
static int test_streamless_calls_wait_for_user_streams(void) {
    const unsigned n = 1u << 16; /* one wave on any GPU gpuk supports, so the spin sets the time */
    const size_t bytes = n * sizeof(float);
    gpuk_kernel slow = kernel("slow_affine");
    gpuk_stream s;
    gpuk_buffer x = buffer(bytes), y = buffer(bytes), z = buffer(bytes);
    float* hx = (float*)malloc(bytes);
    float* hx2 = (float*)malloc(bytes);
    float* out = (float*)malloc(bytes);
    float sc = 1.5f, add = 0.25f;
    unsigned spin = 1u << 24, i; /* about 40 ms on an H100 */
    gpuk_devptr dx = gpuk_buffer_devptr(ctx, x), dy = gpuk_buffer_devptr(ctx, y);
    void* args[6] = { &dx, &dy, &sc, &add, (void*)&n, &spin };
    gpuk_launch_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.grid.x = (n + 255) / 256;
    ld.block.x = 256;
    ld.args = args;
    ld.num_args = 6;
    if (under_sanitizer()) spin = 1u << 16; /* ordering is still checked, just less long */
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    ld.stream = s;
    for (i = 0; i < n; i++) { hx[i] = rngf(); hx2[i] = rngf() + 10.0f; }
    CHECK_OK(gpuk_buffer_write(ctx, x, 0, hx, bytes));
    /* 1. read after a kernel on the user stream */
    CHECK_OK(gpuk_buffer_memset(ctx, s, y, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_launch(ctx, slow, &ld));
    for (i = 0; i < n; i++) out[i] = NAN;
    CHECK_OK(gpuk_buffer_read(ctx, y, 0, out, bytes));
    CHECK(check_affine(hx, out, n, sc, add));
    /* 2. write of the kernel's input right after the launch: the kernel must see the old x */
    CHECK_OK(gpuk_buffer_memset(ctx, s, y, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_launch(ctx, slow, &ld));
    CHECK_OK(gpuk_buffer_write(ctx, x, 0, hx2, bytes));
    CHECK_OK(gpuk_buffer_read(ctx, y, 0, out, bytes));
    CHECK(check_affine(hx, out, n, sc, add));
    /* 3. device copy of the kernel's output, then read */
    CHECK_OK(gpuk_buffer_memset(ctx, s, y, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_buffer_memset(ctx, s, z, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_launch(ctx, slow, &ld));
    CHECK_OK(gpuk_buffer_copy(ctx, z, 0, y, 0, bytes));
    for (i = 0; i < n; i++) out[i] = NAN;
    CHECK_OK(gpuk_buffer_read(ctx, z, 0, out, bytes));
    CHECK(check_affine(hx2, out, n, sc, add));
    /* 4. a kernel on the ctx default stream (where built-in kernels run), then a read */
    CHECK_OK(gpuk_buffer_memset(ctx, (gpuk_stream){ 0 }, y, 0, 0x7FC00000u, 4, n));
    ld.stream.id = 0;
    CHECK_OK(gpuk_launch(ctx, slow, &ld));
    for (i = 0; i < n; i++) out[i] = NAN;
    CHECK_OK(gpuk_buffer_read(ctx, y, 0, out, bytes));
    CHECK(check_affine(hx2, out, n, sc, add));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_buffer_destroy(ctx, x));
    CHECK_OK(gpuk_buffer_destroy(ctx, y));
    CHECK_OK(gpuk_buffer_destroy(ctx, z));
    free(hx);
    free(hx2);
    free(out);
    return TEST_PASS;
}

static int test_elapsed_time_is_sane(void) {
    const unsigned n = 1u << 16;
    gpuk_kernel slow = kernel("slow_affine");
    gpuk_buffer x = buffer(n * 4), y = buffer(n * 4);
    gpuk_devptr dx = gpuk_buffer_devptr(ctx, x), dy = gpuk_buffer_devptr(ctx, y);
    float s = 1, add = 0, ms_short = 0, ms_long = 0;
    unsigned spin = 5000;
    void* args[6] = { &dx, &dy, &s, &add, (void*)&n, &spin };
    gpuk_launch_desc ld = { 0, { (n + 255) / 256, 0, 0 }, { 256, 0, 0 }, 0, { 0 }, args, 6, NULL, { 0, 0, 0 }, false, 0, 0 };
    gpuk_timer t;
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, x, 0, 0x3F800000u, 4, n));
    CHECK_OK(gpuk_timer_create(ctx, &t));
    CHECK_OK(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &t));
    CHECK_OK(gpuk_launch(ctx, slow, &ld));
    CHECK_OK(gpuk_timer_stop(ctx, &t, &ms_short));
    spin = 50000;
    CHECK_OK(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &t));
    CHECK_OK(gpuk_launch(ctx, slow, &ld));
    CHECK_OK(gpuk_timer_stop(ctx, &t, &ms_long));
    printf("     slow kernel: %.3f ms (spin 5000), %.3f ms (spin 50000)\n", ms_short, ms_long);
    CHECK(ms_short > 0.0f && ms_long < 10000.0f);
    /* 10x the work; not under a sanitizer, whose per-launch cost swamps both */
    if (!under_sanitizer()) CHECK(ms_long > 3.0f * ms_short);
    CHECK_OK(gpuk_timer_destroy(ctx, &t));
    return TEST_PASS;
}

static int test_every_scalar_argument_width(void) {
    gpuk_kernel k = kernel("echo_args");
    gpuk_buffer out = buffer(8 * sizeof(unsigned long long));
    gpuk_kernel_info info;
    unsigned long long got[8];
    int round;
    CHECK_OK(gpuk_kernel_query(ctx, k, &info));
    CHECK(info.num_params == 8 || info.num_params == -1);
    for (round = 0; round < 4; round++) {
        int8_t a = (int8_t)rng(); int16_t b = (int16_t)rng(); int32_t c = (int32_t)rng();
        int64_t d = (int64_t)rng(); float e = rngf() * 1e6f; double f = (double)rngf() * 1e300;
        uint8_t g = (uint8_t)rng();
        gpuk_devptr p = gpuk_buffer_devptr(ctx, out);
        uint32_t ebits;
        uint64_t fbits;
        void* args[8] = { &a, &b, &c, &d, &e, &f, &g, &p };
        size_t sizes[8] = { 1, 2, 4, 8, 4, 8, 1, 8 };
        memset(got, 0xEE, sizeof got);
        CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, out, 0, 0xEEEEEEEEu, 4, 16));
        CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 }, .args = args,
                                                          .num_args = 8, .arg_sizes = sizes }));
        CHECK_OK(gpuk_buffer_read(ctx, out, 0, got, sizeof got));
        memcpy(&ebits, &e, 4);
        memcpy(&fbits, &f, 8);
        CHECK((long long)got[0] == a && (long long)got[1] == b && (long long)got[2] == c);
        CHECK((int64_t)got[3] == d && got[4] == ebits && got[5] == fbits && got[6] == g);
    }
#if GPUK_DEBUG
    if (info.num_params == 8) { /* the driver can tell: a wrong size is caught before launch */
        size_t wrong[8] = { 1, 2, 4, 4, 4, 8, 1, 8 };
        int64_t d = 0; int8_t a = 0; int16_t b = 0; int32_t c = 0; float e = 0; double f = 0; uint8_t g = 0;
        gpuk_devptr p = gpuk_buffer_devptr(ctx, out);
        void* args[8] = { &a, &b, &c, &d, &e, &f, &g, &p };
        CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 1 }, .args = args,
                                                              .num_args = 8, .arg_sizes = wrong }),
                     GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("argument 3 is 4 bytes, the parameter is 8 bytes");
    }
#endif
    CHECK_OK(gpuk_buffer_destroy(ctx, out));
    return TEST_PASS;
}

static int test_bad_ptx_gives_jit_log(void) {
    static const char bad[] = ".version 7.0\n.target sm_52\n.address_size 64\n"
                              ".visible .entry broken()\n{\n  frobnicate.u32 %r1;\n  ret;\n}\n";
    static const char future[] = ".version 9.9\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n";
    gpuk_module m;
    gpuk_result r = gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { bad, 0 }, .label = "bad" }, &m);
    CHECK(r == (gpuk_result)218 || r == (gpuk_result)200);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("module 'bad'");
    CHECK_ERROR_MENTIONS("frobnicate");
    printf("     %s\n", gpuk_last_error());
    r = gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { future, 0 }, .label = "future" }, &m);
    CHECK(r == GPUK_ERR_DRIVER_TOO_OLD || r == (gpuk_result)222);
    CHECK_ERROR_MENTIONS("9.9");
    printf("     %s\n", gpuk_last_error());
    return TEST_PASS;
}

static int test_stale_handles_never_reach_the_driver(void) {
    gpuk_stream s;
    gpuk_event e;
    gpuk_buffer b = buffer(64);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_event_destroy(ctx, e));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    /* the raw driver segfaults on these (measured); gpuk answers */
    CHECK_RESULT(gpuk_stream_sync(ctx, s), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_record(ctx, GPUK_DEFAULT_STREAM, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_sync(ctx, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_stream_wait(ctx, GPUK_DEFAULT_STREAM, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_write(ctx, b, 0, "x", 1), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_destroy(ctx, b), GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_ctx_sync(ctx)); /* and the ctx is fine */
    return TEST_PASS;
}

static int test_out_of_memory_then_continue(void) {
    gpuk_buffer huge, ok;
    size_t total = gpuk_ctx_device_info(ctx)->total_bytes;
    CHECK_RESULT(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = total * 4, .label = "huge" }, &huge), (gpuk_result)2);
    CHECK_ERROR_MENTIONS("CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(huge.id == 0);
    ok = buffer(1 << 20);
    CHECK(ok.id != 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, ok));
    return TEST_PASS;
}

/* API v0.2 on a GPU: buffers created with their data, a launch through GPUK_ARGS on
   GPUK_DEFAULT_STREAM, the result downloaded in one call; &buffer refused where the driver
   reports parameter sizes. c = a + b is one float add: exact on both sides. */
static int test_v02_upload_args_download(void) {
    unsigned n = 100003, i, bad = 0;
    size_t bytes = (size_t)n * sizeof(float), got_bytes = 0;
    float* a = (float*)malloc(bytes);
    float* b = (float*)malloc(bytes);
    float* c = NULL;
    gpuk_kernel vadd = kernel("vadd");
    gpuk_buffer da, db, dc;
    gpuk_devptr pa, pb, pc;
    for (i = 0; i < n; i++) { a[i] = rngf() * 1000.0f; b[i] = rngf(); }
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { a, bytes }, .label = "a" }, &da));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { b, bytes }, .label = "b" }, &db));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .label = "c" }, &dc));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, dc, 0, 0xFFFFFFFFu, 4, n)); /* NaN poison */
    pa = gpuk_buffer_devptr(ctx, da); pb = gpuk_buffer_devptr(ctx, db); pc = gpuk_buffer_devptr(ctx, dc);
    CHECK_OK(gpuk_launch(ctx, vadd, &(gpuk_launch_desc){ .grid = GPUK_DIM1((n + 255) / 256), .block = GPUK_DIM1(256),
                                                         GPUK_ARGS(&pa, &pb, &pc, &n) }));
    if (gpuk_features() & GPUK_FEATURE_PARAM_INFO) {
        CHECK_RESULT(gpuk_launch(ctx, vadd, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32),
                                                                 GPUK_ARGS(&da, &pb, &pc, &n) }), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("a gpuk_buffer handle where the kernel takes a device pointer");
    }
    CHECK_OK(gpuk_buffer_download(ctx, dc, (void**)&c, &got_bytes));
    CHECK(c != NULL && got_bytes == bytes);
    if (c) for (i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
    CHECK(bad == 0);
    gpuk_host_free(c);
    CHECK_OK(gpuk_buffer_destroy(ctx, da));
    CHECK_OK(gpuk_buffer_destroy(ctx, db));
    CHECK_OK(gpuk_buffer_destroy(ctx, dc));
    free(a);
    free(b);
    return TEST_PASS;
}

typedef struct worker { gpuk_kernel vadd; int failures; unsigned seed; } worker;

static void* worker_body(void* p) {
    worker* w = (worker*)p;
    int it;
    for (it = 0; it < 50; it++) {
        unsigned n = 1000 + (unsigned)(rand_r(&w->seed) % 100000), i;
        size_t bytes = n * sizeof(float);
        float* a = (float*)malloc(bytes);
        float* b = (float*)malloc(bytes);
        float* c = (float*)malloc(bytes);
        gpuk_buffer da, db, dc;
        gpuk_stream s;
        gpuk_devptr pa, pb, pc;
        void* args[4] = { &pa, &pb, &pc, &n };
        for (i = 0; i < n; i++) { a[i] = (float)rand_r(&w->seed) / 1000.0f; b[i] = (float)i; c[i] = -1.0f; }
        if (gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &da) != GPUK_OK ||
            gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &db) != GPUK_OK ||
            gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &dc) != GPUK_OK ||
            gpuk_stream_create(ctx, NULL, &s) != GPUK_OK) { w->failures++; break; }
        pa = gpuk_buffer_devptr(ctx, da); pb = gpuk_buffer_devptr(ctx, db); pc = gpuk_buffer_devptr(ctx, dc);
        if (gpuk_buffer_write_async(ctx, s, da, 0, a, bytes) != GPUK_OK) w->failures++;
        if (gpuk_buffer_write_async(ctx, s, db, 0, b, bytes) != GPUK_OK) w->failures++;
        if (gpuk_launch(ctx, w->vadd, &(gpuk_launch_desc){ .grid = { (n + 127) / 128 }, .block = { 128 }, .stream = s,
                                                           .args = args, .num_args = 4 }) != GPUK_OK) w->failures++;
        if (gpuk_buffer_read_async(ctx, s, dc, 0, c, bytes) != GPUK_OK) w->failures++;
        if (gpuk_stream_sync(ctx, s) != GPUK_OK) w->failures++;
        for (i = 0; i < n; i++) if (c[i] != a[i] + b[i]) { w->failures++; break; }
        gpuk_stream_destroy(ctx, s);
        gpuk_buffer_destroy(ctx, da); gpuk_buffer_destroy(ctx, db); gpuk_buffer_destroy(ctx, dc);
        free(a); free(b); free(c);
    }
    return NULL;
}

static void run_workers(gpuk_kernel vadd) {
    pthread_t t[8];
    worker w[8];
    int i;
    for (i = 0; i < 8; i++) {
        w[i].vadd = vadd; w[i].failures = 0; w[i].seed = (unsigned)rng();
        CHECK(pthread_create(&t[i], NULL, worker_body, &w[i]) == 0);
    }
    for (i = 0; i < 8; i++) { pthread_join(t[i], NULL); CHECK(w[i].failures == 0); }
}

static int test_one_ctx_from_eight_threads(void) {
    gpuk_kernel vadd = kernel("vadd");
    size_t free_before = 0, free_after = 0;
    /* The first round lets the driver set up what it caches per thread and stream; a leak in
       gpuk would show as less free memory after each later round. */
    run_workers(vadd);
    if (under_sanitizer()) return TEST_PASS;
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_before, NULL));
    run_workers(vadd);
    run_workers(vadd);
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_after, NULL));
    if (free_after != free_before) printf("     free memory: %zu before, %zu after\n", free_before, free_after);
    CHECK(free_after == free_before);
    return TEST_PASS;
}

/* Child: launch a kernel that writes far out of bounds; report what gpuk says after it. */
static int fault_child(void) {
    gpuk_ctx* c;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_buffer b;
    gpuk_devptr p;
    gpuk_result r1, r2, r3, r4, r5;
    void* args[1] = { &p };
    alarm(60); /* never hang: the parent sees SIGALRM as a failure */
    if (gpuk_ctx_create(NULL, &c) != GPUK_OK) { printf("child: no ctx: %s\n", gpuk_last_error()); return 2; }
    if (gpuk_module_load(c, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 } }, &m) != GPUK_OK ||
        gpuk_kernel_get(c, m, "write_out_of_bounds", &k) != GPUK_OK ||
        gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 16 }, &b) != GPUK_OK) return 3;
    p = gpuk_buffer_devptr(c, b);
    gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 1 }, .args = args });
    r1 = gpuk_ctx_sync(c);
    printf("child: sync after the faulting kernel: %s\n", gpuk_last_error());
    r2 = gpuk_buffer_write(c, b, 0, "abcd", 4);
    printf("child: a later call: %s\n", gpuk_last_error());
    r3 = gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 1 }, .args = args });
    r4 = gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 16 }, &b);
    r5 = gpuk_ctx_destroy(c);
    printf("child: results %d %d %d %d %d\n", (int)r1, (int)r2, (int)r3, (int)r4, (int)r5);
    return (r1 > 0 && r2 == r1 && r3 == r1 && r4 == r1 && r5 == r1 &&
            strstr(gpuk_last_error(), "since an earlier fault") != NULL) ? 0 : 1;
}

static int test_fault_in_child_is_sticky_and_reported(void) {
    char cmd[1024];
    FILE* p;
    char out[4096] = { 0 };
    size_t len = 0;
    int status;
    snprintf(cmd, sizeof cmd, "'%s' --fault-child 2>&1", self_path);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return TEST_PASS;
    while (len + 1 < sizeof out && fgets(out + len, (int)(sizeof out - len), p)) len = strlen(out);
    status = pclose(p);
    printf("%s", out);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strstr(out, "CUDA_ERROR_ILLEGAL_ADDRESS (700)") != NULL || strstr(out, "(719)") != NULL);
    return TEST_PASS;
}

int main(int argc, char** argv) {
    int code;
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--fault-child") == 0) return fault_child();
    rng_seed_from_clock();
    if (!gpu_setup("gpu_core", 11, &ctx, &code)) return code;
    if (gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 }, .label = "gpu_test" }, &mod) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    RUN(test_device_info_is_sane);
    RUN(test_copies_round_trip_exactly);
    RUN(test_stream_order_and_events_across_streams);
    RUN(test_streamless_calls_wait_for_user_streams);
    RUN(test_elapsed_time_is_sane);
    RUN(test_every_scalar_argument_width);
    RUN(test_bad_ptx_gives_jit_log);
    RUN(test_stale_handles_never_reach_the_driver);
    RUN(test_out_of_memory_then_continue);
    RUN(test_v02_upload_args_download);
    RUN(test_one_ctx_from_eight_threads);
    if (!getenv("GPUK_SKIP_FAULT_TEST")) RUN(test_fault_in_child_is_sticky_and_reported);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
