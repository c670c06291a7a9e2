/* tests/gpu/gpu_launch_ex.c - extended launch on a real GPU, each result against the CPU:
   thread-block clusters (a kernel that reads its neighbour block's shared memory through
   distributed shared memory: mapa + ld.shared::cluster; clusters of 2, 4 and 8 blocks; the
   rank and cluster size each block saw), a cooperative kernel that syncs the whole grid
   between rounds (a barrier of our own; the grid as large as the device holds at once, and one
   block more refused before the driver), and a launch with a priority. Devices before sm_90
   check that clusters are refused. A captured scan replayed after its stream's scratch grew
   and after its stream was destroyed. Skipped where no driver or GPU exists, or where the
   driver has no cuLaunchKernelEx.
   cc -std=c99 -I../.. gpu_launch_ex.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_test_kernels.h"
#include "gpu_setup.h"
#include <stdlib.h>

static gpuk_ctx* ctx;
static gpuk_module mod;

/* Each block stores its x values in shared memory; after a cluster barrier, thread t of the
   block of rank r writes out[i] = the shared value of thread t in the block of rank
   (r + 1) % cluster size, read through distributed shared memory; thread 0 writes
   ranks[block] = rank * 256 + cluster size. A second barrier keeps every block's shared
   memory alive until its neighbour has read it. Hand-written (.target sm_90: nvcc's
   compute_75 baseline, which tools/gen_ptx.py --embed uses, has no clusters); ptxas 13
   accepts it for sm_90. Blocks of at most 1024 threads. */
static const char cluster_ptx[] =
    ".version 7.8\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry cluster_neighbour(.param .u64 x, .param .u64 out, .param .u64 ranks)\n"
    "{\n"
    " .reg .pred %p1;\n"
    " .reg .b32 %r<13>;\n"
    " .reg .b64 %rd<9>;\n"
    " .reg .f32 %f<3>;\n"
    " .shared .align 4 .b8 buf[4096];\n"
    " ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [out]; ld.param.u64 %rd3, [ranks];\n"
    " cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;\n"
    " mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;\n"
    " mad.lo.s32 %r4, %r2, %r3, %r1;\n"
    " mul.wide.u32 %rd4, %r4, 4; add.s64 %rd5, %rd1, %rd4; ld.global.f32 %f1, [%rd5];\n"
    " mov.u32 %r5, buf; shl.b32 %r6, %r1, 2; add.s32 %r7, %r5, %r6;\n"
    " st.shared.f32 [%r7], %f1;\n"
    " barrier.cluster.arrive;\n"
    " barrier.cluster.wait;\n"
    " mov.u32 %r8, %cluster_ctarank; mov.u32 %r9, %cluster_nctarank;\n"
    " add.s32 %r10, %r8, 1; rem.u32 %r10, %r10, %r9;\n"
    " mapa.shared::cluster.u32 %r11, %r7, %r10;\n"
    " ld.shared::cluster.f32 %f2, [%r11];\n"
    " add.s64 %rd6, %rd2, %rd4; st.global.f32 [%rd6], %f2;\n"
    " setp.eq.s32 %p1, %r1, 0;\n"
    " mad.lo.s32 %r12, %r8, 256, %r9;\n"
    " mul.wide.u32 %rd7, %r2, 4; add.s64 %rd8, %rd3, %rd7;\n"
    " @%p1 st.global.u32 [%rd8], %r12;\n"
    " barrier.cluster.arrive;\n"
    " barrier.cluster.wait;\n"
    " ret;\n"
    "}\n";

static gpuk_buffer buffer(size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &b));
    return b;
}

static int test_cluster_reads_neighbour_shared_memory(void) {
    static const uint32_t sizes[3] = { 2, 4, 8 };
    const gpuk_device_info* d = gpuk_ctx_device_info(ctx);
    const uint32_t threads = 256, blocks = 8 * 37;
    const size_t n = (size_t)threads * blocks;
    float* x = (float*)malloc(n * 4);
    float* out = (float*)malloc(n * 4);
    uint32_t* ranks = (uint32_t*)malloc(blocks * 4);
    gpuk_buffer bx = buffer(n * 4), bout = buffer(n * 4), branks = buffer(blocks * 4);
    gpuk_devptr px = gpuk_buffer_devptr(ctx, bx), pout = gpuk_buffer_devptr(ctx, bout),
                prk = gpuk_buffer_devptr(ctx, branks);
    gpuk_module m;
    gpuk_kernel k;
    size_t i, bad = 0;
    int s;
    if (d->cc_major < 9) {
        /* no clusters: refused before the driver, whatever kernel */
        gpuk_kernel v;
        CHECK_OK(gpuk_kernel_get(ctx, mod, "vadd", &v));
        CHECK_RESULT(gpuk_launch(ctx, v, &(gpuk_launch_desc){ .grid = GPUK_DIM1(2), .block = GPUK_DIM1(32),
                                                              GPUK_ARGS(&px, &px, &pout, &(uint32_t){ 64 }),
                                                              .cluster = GPUK_DIM1(2) }),
                     GPUK_ERR_UNSUPPORTED);
        printf("     sm_%d%d: clusters refused (need sm_90)\n", d->cc_major, d->cc_minor);
        free(x); free(out); free(ranks);
        return TEST_PASS;
    }
    CHECK_OK(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { cluster_ptx, 0 }, .label = "cluster" }, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "cluster_neighbour", &k));
    for (s = 0; s < 3; s++) {
        uint32_t c = sizes[s];
        for (i = 0; i < n; i++) x[i] = (float)uniform(-1000, 1000);
        CHECK_OK(gpuk_buffer_write(ctx, bx, 0, x, n * 4));
        CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, bout, 0, 0xFF, 1, n * 4));
        CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, branks, 0, 0xFF, 1, blocks * 4));
        CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(blocks), .block = GPUK_DIM1(threads),
                                                          GPUK_ARGS(&px, &pout, &prk), .cluster = GPUK_DIM1(c) }));
        CHECK_OK(gpuk_buffer_read(ctx, bout, 0, out, n * 4));
        CHECK_OK(gpuk_buffer_read(ctx, branks, 0, ranks, blocks * 4));
        for (i = 0; i < n; i++) {
            size_t b = i / threads, t = i % threads;
            size_t nb = b / c * c + (b % c + 1) % c; /* rank = blockIdx.x % c for c x 1 x 1 */
            if (out[i] != x[nb * threads + t] && bad++ < 5)
                fprintf(stderr, "  cluster %u: out[%zu] = %g, want x[%zu] = %g\n", c, i, out[i], nb * threads + t,
                        x[nb * threads + t]);
        }
        for (i = 0; i < blocks; i++)
            if (ranks[i] != (uint32_t)(i % c) * 256u + c && bad++ < 5)
                fprintf(stderr, "  cluster %u: block %zu saw rank/size %u, want %u\n", c, i, ranks[i],
                        (uint32_t)(i % c) * 256u + c);
    }
    CHECK(bad == 0);
    /* the refusals that need no driver: not dividing the grid, over 8 blocks */
    CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(blocks + 1), .block = GPUK_DIM1(threads),
                                                          GPUK_ARGS(&px, &pout, &prk), .cluster = GPUK_DIM1(2) }),
                 GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(blocks), .block = GPUK_DIM1(threads),
                                                          GPUK_ARGS(&px, &pout, &prk), .cluster = GPUK_DIM1(16) }),
                 GPUK_ERR_LIMIT);
    CHECK_OK(gpuk_module_unload(ctx, m));
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, bout));
    CHECK_OK(gpuk_buffer_destroy(ctx, branks));
    free(x); free(out); free(ranks);
    return TEST_PASS;
}

/* rounds of b[i] = a[(i + shift) % n] + 1 with a grid-wide barrier between them, the grid as
   large as the device holds at once; against the same rounds on the CPU, exactly. */
static int test_cooperative_grid_sync(void) {
    const uint32_t threads = 256;
    uint32_t rounds = 9, n = (1u << 20) + 3, max = 0, shift = (uint32_t)(rng() % n), r, i;
    float* a = (float*)malloc((size_t)n * 4);
    float* b = (float*)malloc((size_t)n * 4);
    float* got = (float*)malloc((size_t)n * 4);
    gpuk_buffer ba = buffer((size_t)n * 4), bb = buffer((size_t)n * 4), bbar = buffer(8);
    gpuk_devptr pa = gpuk_buffer_devptr(ctx, ba), pb = gpuk_buffer_devptr(ctx, bb), pbar = gpuk_buffer_devptr(ctx, bbar);
    gpuk_kernel k;
    size_t bad = 0;
    CHECK_OK(gpuk_kernel_get(ctx, mod, "coop_rounds", &k));
    CHECK_OK(gpuk_kernel_max_cooperative_grid(ctx, k, threads, 0, &max));
    CHECK(max >= (uint32_t)gpuk_ctx_device_info(ctx)->sm_count);
    printf("     cooperative grid: up to %u blocks of %u threads\n", max, threads);
    for (i = 0; i < n; i++) a[i] = (float)uniform(-100, 100);
    CHECK_OK(gpuk_buffer_write(ctx, ba, 0, a, (size_t)n * 4));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, bb, 0, 0xFF, 1, (size_t)n * 4));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, bbar, 0, 0, 4, 2));
    CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(max), .block = GPUK_DIM1(threads),
                                                      GPUK_ARGS(&pa, &pb, &pbar, &n, &shift, &rounds),
                                                      .cooperative = true }));
    /* one block more than fits: refused before the driver */
    CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(max + 1), .block = GPUK_DIM1(threads),
                                                          GPUK_ARGS(&pa, &pb, &pbar, &n, &shift, &rounds),
                                                          .cooperative = true }),
                 GPUK_ERR_LIMIT);
    for (r = 0; r < rounds; r++) {
        float* src = (r & 1u) ? b : a;
        float* dst = (r & 1u) ? a : b;
        for (i = 0; i < n; i++) dst[i] = src[(i + shift) % n] + 1.0f;
    }
    /* after an odd number of rounds the result is in b */
    CHECK_OK(gpuk_buffer_read(ctx, (rounds & 1u) ? bb : ba, 0, got, (size_t)n * 4));
    for (i = 0; i < n; i++)
        if (got[i] != ((rounds & 1u) ? b : a)[i] && bad++ < 5)
            fprintf(stderr, "  [%u] = %.9g, want %.9g\n", i, got[i], ((rounds & 1u) ? b : a)[i]);
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, ba));
    CHECK_OK(gpuk_buffer_destroy(ctx, bb));
    CHECK_OK(gpuk_buffer_destroy(ctx, bbar));
    free(a); free(b); free(got);
    return TEST_PASS;
}

/* A launch at the greatest priority on a stream of the least: it runs, and right. */
static int test_priority_launch(void) {
    uint32_t n = 100003;
    float* a = (float*)malloc(n * 4);
    float* b = (float*)malloc(n * 4);
    float* c = (float*)malloc(n * 4);
    gpuk_buffer ba = buffer(n * 4), bb = buffer(n * 4), bc = buffer(n * 4);
    gpuk_devptr pa = gpuk_buffer_devptr(ctx, ba), pb = gpuk_buffer_devptr(ctx, bb), pc = gpuk_buffer_devptr(ctx, bc);
    gpuk_stream s;
    gpuk_kernel k;
    int least = 0, greatest = 0;
    uint32_t i;
    size_t bad = 0;
    if (gpuk_ctx_device_info(ctx)->driver_version < 12000) {
        printf("     driver before 12.0: launch priorities refused\n");
        free(a); free(b); free(c);
        return TEST_SKIP;
    }
    CHECK_OK(gpuk_kernel_get(ctx, mod, "vadd", &k));
    CHECK_OK(gpuk_stream_priority_range(ctx, &least, &greatest));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .priority = least }, &s));
    for (i = 0; i < n; i++) { a[i] = (float)uniform(-1, 1); b[i] = (float)uniform(-1, 1); }
    CHECK_OK(gpuk_buffer_write(ctx, ba, 0, a, n * 4));
    CHECK_OK(gpuk_buffer_write(ctx, bb, 0, b, n * 4));
    CHECK_OK(gpuk_buffer_memset(ctx, s, bc, 0, 0xFF, 1, n * 4));
    CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1((n + 255) / 256), .block = GPUK_DIM1(256),
                                                      .stream = s, GPUK_ARGS(&pa, &pb, &pc, &n),
                                                      .priority = greatest != 0 ? greatest : -1 }));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_read(ctx, bc, 0, c, n * 4));
    for (i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
    CHECK(bad == 0);
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_buffer_destroy(ctx, ba));
    CHECK_OK(gpuk_buffer_destroy(ctx, bb));
    CHECK_OK(gpuk_buffer_destroy(ctx, bc));
    free(a); free(b); free(c);
    return TEST_PASS;
}

/* bout's n int32 against want's int64 sums, wrapped modulo 2^32 as the scan does. */
static int scan_matches(gpuk_buffer bout, int32_t* got, const int64_t* want, size_t n) {
    size_t i, bad = 0;
    CHECK_OK(gpuk_buffer_read(ctx, bout, 0, got, n * 4));
    for (i = 0; i < n; i++)
        if (got[i] != (int32_t)(uint32_t)(uint64_t)want[i] && bad++ < 5)
            fprintf(stderr, "  [%zu] = %d, want %lld (wrapped)\n", i, got[i], (long long)want[i]);
    return bad == 0;
}

/* A graph's built-in keeps the scratch its stream had at the capture: an inclusive scan of
   random integers captured on a stream whose scratch then grows twice (much larger reserves,
   a longer scan run there between them), with new buffers filled with a poison that may take
   freed memory, replayed onto a poisoned output against the CPU's sums in int64 (the scan
   wraps modulo 2^32); then again on the default stream once the stream is destroyed. */
static int test_graph_scan_after_its_scratch_grows(void) {
    const size_t n = ((size_t)3 << 20) + (size_t)(rng() % 1000);
    int32_t* x = (int32_t*)malloc(n * 4);
    int32_t* got = (int32_t*)malloc(n * 4);
    int64_t* want = (int64_t*)malloc(n * 8);
    gpuk_buffer bx, bout, big, decoy[8];
    gpuk_stream s;
    gpuk_graph g;
    int64_t sum = 0;
    size_t i;
    if (!(gpuk_features() & GPUK_FEATURE_GRAPHS)) {
        printf("     driver without CUDA graphs\n");
        free(x); free(got); free(want);
        return TEST_SKIP;
    }
    bx = buffer(n * 4);
    bout = buffer(n * 4);
    big = buffer(8 * n * 4);
    for (i = 0; i < n; i++) {
        x[i] = (int32_t)(rng() % 2000001u) - 1000000;
        want[i] = sum += x[i];
    }
    CHECK_OK(gpuk_buffer_write(ctx, bx, 0, x, n * 4));
    CHECK_OK(gpuk_kernels_load(ctx, "scan_inclusive_i32"));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, n));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(bout, 0), gpuk_at(bx, 0), n));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, 64 * n));
    CHECK_OK(gpuk_buffer_memset(ctx, s, big, 0, 0x01, 1, 8 * n * 4));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(big, 0), gpuk_at(big, 0), 8 * n));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, 1024 * n));
    for (i = 0; i < 8; i++) { /* 64 KiB to 8 MiB */
        decoy[i] = buffer((size_t)64 << (10 + i));
        CHECK_OK(gpuk_buffer_memset(ctx, s, decoy[i], 0, 0xA5, 1, (size_t)64 << (10 + i)));
    }
    CHECK_OK(gpuk_buffer_memset(ctx, s, bout, 0, 0xFF, 1, n * 4));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK(scan_matches(bout, got, want, n));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, bout, 0, 0xFF, 1, n * 4));
    CHECK_OK(gpuk_graph_launch(ctx, GPUK_DEFAULT_STREAM, g));
    CHECK_OK(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
    CHECK(scan_matches(bout, got, want, n));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    for (i = 0; i < 8; i++) CHECK_OK(gpuk_buffer_destroy(ctx, decoy[i]));
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, bout));
    CHECK_OK(gpuk_buffer_destroy(ctx, big));
    free(x); free(got); free(want);
    return TEST_PASS;
}

int main(void) {
    int code;
    rng_seed_from_clock();
    if (!gpu_setup("gpu_launch_ex", 4, &ctx, &code)) return code;
    if (!(gpuk_features() & GPUK_FEATURE_LAUNCH_EX)) {
        printf("skip gpu_launch_ex: the driver has no cuLaunchKernelEx\n0 passed, 0 failed, 4 skipped\n");
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    if (gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 }, .label = "gpu_test" }, &mod) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    RUN(test_cluster_reads_neighbour_shared_memory);
    RUN(test_cooperative_grid_sync);
    RUN(test_priority_launch);
    RUN(test_graph_scan_after_its_scratch_grows);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
