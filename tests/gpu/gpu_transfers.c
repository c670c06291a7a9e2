/* tests/gpu/gpu_transfers.c - host transfers on a real GPU: stream-less copies of pageable memory
   through the ctx's pinned staging, against the driver's direct copy of the same device memory
   (a second ctx with no_staging wrapping it), byte for byte, at sizes around the pieces, with
   unaligned offsets and at 300 MiB; staged copies ordered after a slow kernel on a user stream
   and on the ctx default stream; four threads copying through one ctx at once (one gets the
   staging, the others go direct); gpuk_stream_join and gpuk_stream_fork ordering copies after
   slow kernels on other streams; 64 and 300 MiB staged through four copying threads. Skipped
   where no driver or GPU exists.
   cc -std=c99 -I../.. gpu_transfers.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_test_kernels.h"
#include "gpu_setup.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* staged: every pageable copy staged through 1 MiB (pieces of 256-512 KiB); direct: the
   driver's own copy; dflt: the default staging size (32 MiB) from 1 MiB up (by default staging
   starts at 1 MiB too) */
static gpuk_ctx *staged, *direct, *dflt;
static gpuk_module mod;

static void fill_random(unsigned char* p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { uint64_t v = rng(); memcpy(p + i, &v, 8); }
    for (; i < n; i++) p[i] = (unsigned char)rng();
}

/* The same device memory as a buffer of the other ctx (both on device 0's primary context). */
static gpuk_buffer twin(gpuk_ctx* c, gpuk_ctx* owner, gpuk_buffer b) {
    gpuk_buffer t = { 0 };
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = gpuk_buffer_size(owner, b),
                                                        .wrap = gpuk_buffer_devptr(owner, b) }, &t));
    return t;
}

/* n bytes at dev_off / host_off: written by `wc`, read back by `rc` into poisoned memory; every
   byte equal, the bytes either side untouched (on the device: a guard written first). */
static void round_trip(gpuk_ctx* wc, gpuk_buffer wb, gpuk_ctx* rc, gpuk_buffer rb, size_t n,
                       size_t dev_off, size_t host_off) {
    size_t cap = gpuk_buffer_size(wc, wb);
    unsigned char* src = (unsigned char*)malloc(n + host_off + 1);
    unsigned char* dst = (unsigned char*)malloc(n + host_off + 2);
    unsigned char guard[2] = { 0xEE, 0xEE }, got[2];
    CHECK(src && dst && dev_off + n + 1 <= cap);
    if (!src || !dst || dev_off + n + 1 > cap) { free(src); free(dst); return; }
    fill_random(src, n + host_off + 1);
    if (dev_off) CHECK_OK(gpuk_buffer_write(wc, wb, dev_off - 1, guard, 1));
    CHECK_OK(gpuk_buffer_write(wc, wb, dev_off + n, guard, 1));
    CHECK_OK(gpuk_buffer_write(wc, wb, dev_off, src + host_off, n));
    memset(dst, 0x5A, n + host_off + 2);
    CHECK_OK(gpuk_buffer_read(rc, rb, dev_off, dst + host_off, n));
    CHECK(memcmp(dst + host_off, src + host_off, n) == 0);
    CHECK(dst[host_off + n] == 0x5A && (host_off == 0 || dst[host_off - 1] == 0x5A));
    got[0] = got[1] = 0;
    if (dev_off) CHECK_OK(gpuk_buffer_read(rc, rb, dev_off - 1, &got[0], 1));
    else got[0] = 0xEE;
    CHECK_OK(gpuk_buffer_read(rc, rb, dev_off + n, &got[1], 1));
    CHECK(got[0] == 0xEE && got[1] == 0xEE);
    free(src);
    free(dst);
}

static int test_staged_against_direct(void) {
    static const size_t sizes[] = { 1, 4095, (256 << 10) - 1, 256 << 10, (256 << 10) + 1, (512 << 10) - 1,
                                    512 << 10, (512 << 10) + 1, 3 * (512 << 10) + 7, (8 << 20) + 5,
                                    (64 << 20) + 3 };
    static const size_t offs[][2] = { { 0, 0 }, { 3, 1 }, { 4097, 7 } };
    const size_t cap = (64 << 20) + 8192;
    gpuk_buffer b = { 0 }, t;
    size_t i, k, nsizes = sizeof sizes / sizeof sizes[0] - (under_sanitizer() ? 2 : 0);
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = cap, .label = "staged" }, &b));
    t = twin(direct, staged, b);
    for (i = 0; i < nsizes; i++)
        for (k = 0; k < 3; k++) {
            round_trip(staged, b, direct, t, sizes[i], offs[k][0], offs[k][1]); /* staged write */
            round_trip(direct, t, staged, b, sizes[i], offs[k][0], offs[k][1]); /* staged read */
            round_trip(staged, b, staged, b, sizes[i], offs[k][0], offs[k][1]);
        }
    CHECK_OK(gpuk_buffer_destroy(direct, t));
    CHECK_OK(gpuk_buffer_destroy(staged, b));
    return TEST_PASS;
}

/* 300 MiB through dflt (32 MiB of staging, pieces of 16 MiB), against direct. */
static int test_large_default(void) {
    const size_t n = (size_t)300 << 20;
    gpuk_buffer b = { 0 }, t;
    if (under_sanitizer()) return TEST_SKIP;
    CHECK_OK(gpuk_buffer_create(dflt, &(gpuk_buffer_desc){ .bytes = n + 4096, .label = "large" }, &b));
    t = twin(direct, dflt, b);
    round_trip(dflt, b, direct, t, n, 1, 3);
    round_trip(direct, t, dflt, b, n, 4095, 0);
    CHECK_OK(gpuk_buffer_destroy(direct, t));
    CHECK_OK(gpuk_buffer_destroy(dflt, b));
    return TEST_PASS;
}

/* Four copying threads (the default staging, pieces of 16 MiB cut into four slices): 64 MiB
   and 300 MiB staged one way and direct the other, at odd offsets; the ctx's destroy joins its
   threads. */
static int test_four_threads(void) {
    static const size_t sizes[] = { ((size_t)64 << 20) + 3, (size_t)300 << 20 };
    gpuk_ctx* four = NULL;
    gpuk_buffer b = { 0 }, t;
    size_t i;
    if (under_sanitizer()) return TEST_SKIP;
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_min_bytes = 1, .staging_threads = 4 }, &four));
    if (!four) return TEST_PASS;
    CHECK_OK(gpuk_buffer_create(four, &(gpuk_buffer_desc){ .bytes = ((size_t)300 << 20) + 8192, .label = "four" }, &b));
    t = twin(direct, four, b);
    for (i = 0; i < 2; i++) {
        round_trip(four, b, direct, t, sizes[i], 4097, 5); /* staged write, direct read */
        round_trip(direct, t, four, b, sizes[i], 1, 0);    /* direct write, staged read */
    }
    CHECK(four->staging.crew.workers == 3 && four->staging.crew.worker_slices > 0);
    CHECK_OK(gpuk_buffer_destroy(direct, t));
    CHECK_OK(gpuk_buffer_destroy(four, b));
    CHECK_OK(gpuk_ctx_destroy(four));
    return TEST_PASS;
}

static int check_affine(const float* x, const float* y, unsigned n, float s, float add) {
    unsigned i;
    for (i = 0; i < n; i++)
        if (!(y[i] == fmaf(x[i], s, add))) return 0; /* the kernel's one rounding */
    return 1;
}

/* A slow kernel y = x * s + add on `stream` of ctx staged (1 << 20 elements, spinning). */
static void launch_slow(gpuk_stream stream, gpuk_buffer x, gpuk_buffer y, float s, float add) {
    static unsigned n = 1u << 20, spin = 1u << 22;
    gpuk_kernel k = { 0 };
    gpuk_devptr dx = gpuk_buffer_devptr(staged, x), dy = gpuk_buffer_devptr(staged, y);
    void* args[6];
    gpuk_launch_desc ld;
    if (under_sanitizer()) spin = 1u << 12;
    args[0] = &dx; args[1] = &dy; args[2] = &s; args[3] = &add; args[4] = &n; args[5] = &spin;
    memset(&ld, 0, sizeof ld);
    ld.grid.x = (n + 255) / 256;
    ld.block.x = 256;
    ld.args = args;
    ld.num_args = 6;
    ld.stream = stream;
    CHECK_OK(gpuk_kernel_get(staged, mod, "slow_affine", &k));
    CHECK_OK(gpuk_launch(staged, k, &ld));
}

/* Staged copies keep the stream-less ordering: after a slow kernel on a user stream and on the
   ctx default stream, a staged read sees its output and a staged write of its input waits. */
static int test_staged_ordering(void) {
    const unsigned n = 1u << 20;
    const size_t bytes = n * sizeof(float);
    gpuk_buffer x = { 0 }, y = { 0 };
    gpuk_stream s = { 0 };
    float* hx = (float*)malloc(bytes);
    float* hx2 = (float*)malloc(bytes);
    float* out = (float*)malloc(bytes);
    unsigned i, round;
    CHECK(hx && hx2 && out);
    if (!hx || !hx2 || !out) return TEST_PASS;
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &x));
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &y));
    CHECK_OK(gpuk_stream_create(staged, NULL, &s));
    for (round = 0; round < 2; round++) {
        gpuk_stream on = round ? GPUK_DEFAULT_STREAM : s;
        for (i = 0; i < n; i++) { hx[i] = (float)uniform(-1, 1); hx2[i] = (float)uniform(9, 11); }
        CHECK_OK(gpuk_buffer_write(staged, x, 0, hx, bytes));
        CHECK_OK(gpuk_buffer_memset(staged, on, y, 0, 0x7FC00000u, 4, n));
        launch_slow(on, x, y, 1.5f, 0.25f);
        CHECK_OK(gpuk_buffer_write(staged, x, 0, hx2, bytes)); /* the kernel must see hx */
        for (i = 0; i < n; i++) out[i] = NAN;
        CHECK_OK(gpuk_buffer_read(staged, y, 0, out, bytes));
        CHECK(check_affine(hx, out, n, 1.5f, 0.25f));
    }
    CHECK_OK(gpuk_stream_destroy(staged, s));
    CHECK_OK(gpuk_buffer_destroy(staged, x));
    CHECK_OK(gpuk_buffer_destroy(staged, y));
    free(hx);
    free(hx2);
    free(out);
    return TEST_PASS;
}

/* join: slow kernels on A and B, C joins both and copies their outputs; fork: a slow kernel on
   A, A forks B and C, which copy its output. Non-blocking streams, so that nothing but the
   join or fork orders them; outputs poisoned first. */
static int test_join_fork(void) {
    const unsigned n = 1u << 20;
    const size_t bytes = n * sizeof(float);
    gpuk_stream st[3];
    gpuk_buffer x = { 0 }, y1 = { 0 }, y2 = { 0 }, z1 = { 0 }, z2 = { 0 };
    float* hx = (float*)malloc(bytes);
    float* out = (float*)malloc(bytes);
    unsigned i;
    CHECK(hx && out);
    if (!hx || !out) return TEST_PASS;
    for (i = 0; i < 3; i++) CHECK_OK(gpuk_stream_create(staged, &(gpuk_stream_desc){ .non_blocking = true }, &st[i]));
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &x));
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &y1));
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &y2));
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &z1));
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = bytes }, &z2));
    for (i = 0; i < n; i++) hx[i] = (float)uniform(-1, 1);
    CHECK_OK(gpuk_buffer_write(staged, x, 0, hx, bytes));
    /* join */
    CHECK_OK(gpuk_buffer_memset(staged, st[2], z1, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_buffer_memset(staged, st[2], z2, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_stream_sync(staged, st[2]));
    CHECK_OK(gpuk_buffer_memset(staged, st[0], y1, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_buffer_memset(staged, st[1], y2, 0, 0x7FC00000u, 4, n));
    launch_slow(st[0], x, y1, 2.0f, 1.0f);
    launch_slow(st[1], x, y2, -3.0f, 0.5f);
    CHECK_OK(gpuk_stream_join(staged, st[2], st, 2));
    CHECK_OK(gpuk_buffer_copy_async(staged, st[2], z1, 0, y1, 0, bytes));
    CHECK_OK(gpuk_buffer_copy_async(staged, st[2], z2, 0, y2, 0, bytes));
    CHECK_OK(gpuk_stream_sync(staged, st[2]));
    CHECK_OK(gpuk_buffer_read(staged, z1, 0, out, bytes));
    CHECK(check_affine(hx, out, n, 2.0f, 1.0f));
    CHECK_OK(gpuk_buffer_read(staged, z2, 0, out, bytes));
    CHECK(check_affine(hx, out, n, -3.0f, 0.5f));
    CHECK_OK(gpuk_ctx_sync(staged));
    /* fork */
    CHECK_OK(gpuk_buffer_memset(staged, st[0], y1, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_buffer_memset(staged, st[0], z1, 0, 0x7FC00000u, 4, n));
    CHECK_OK(gpuk_buffer_memset(staged, st[0], z2, 0, 0x7FC00000u, 4, n));
    launch_slow(st[0], x, y1, 0.5f, -1.0f);
    CHECK_OK(gpuk_stream_fork(staged, st[0], &st[1], 2));
    CHECK_OK(gpuk_buffer_copy_async(staged, st[1], z1, 0, y1, 0, bytes));
    CHECK_OK(gpuk_buffer_copy_async(staged, st[2], z2, 0, y1, 0, bytes));
    CHECK_OK(gpuk_stream_sync(staged, st[1]));
    CHECK_OK(gpuk_stream_sync(staged, st[2]));
    CHECK_OK(gpuk_buffer_read(staged, z1, 0, out, bytes));
    CHECK(check_affine(hx, out, n, 0.5f, -1.0f));
    CHECK_OK(gpuk_buffer_read(staged, z2, 0, out, bytes));
    CHECK(check_affine(hx, out, n, 0.5f, -1.0f));
    CHECK_OK(gpuk_ctx_sync(staged));
    for (i = 0; i < 3; i++) CHECK_OK(gpuk_stream_destroy(staged, st[i]));
    CHECK_OK(gpuk_buffer_destroy(staged, x));
    CHECK_OK(gpuk_buffer_destroy(staged, y1));
    CHECK_OK(gpuk_buffer_destroy(staged, y2));
    CHECK_OK(gpuk_buffer_destroy(staged, z1));
    CHECK_OK(gpuk_buffer_destroy(staged, z2));
    free(hx);
    free(out);
    return TEST_PASS;
}

/* Four threads, each its own buffer, write and read 12 MiB at once through the default ctx:
   whoever finds the staging taken goes direct; every byte comes back. */
enum { THREADS = 4, ROUNDS = 6 };
static int thread_bad[THREADS];
static void* copier(void* arg) {
    int id = (int)(intptr_t)arg, r;
    size_t n = (12 << 20) + (size_t)id;
    unsigned char* src = (unsigned char*)malloc(n);
    unsigned char* dst = (unsigned char*)malloc(n);
    gpuk_buffer b = { 0 };
    uint64_t x = 0x12345u + (uint64_t)id;
    size_t i;
    if (!src || !dst || gpuk_buffer_create(dflt, &(gpuk_buffer_desc){ .bytes = n }, &b) != GPUK_OK) {
        thread_bad[id] = 1;
        free(src);
        free(dst);
        return NULL;
    }
    for (r = 0; r < ROUNDS; r++) {
        for (i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; src[i] = (unsigned char)x; }
        memset(dst, 0, n);
        if (gpuk_buffer_write(dflt, b, 0, src, n) != GPUK_OK || gpuk_buffer_read(dflt, b, 0, dst, n) != GPUK_OK ||
            memcmp(src, dst, n) != 0)
            thread_bad[id] = 1;
    }
    if (gpuk_buffer_destroy(dflt, b) != GPUK_OK) thread_bad[id] = 1;
    free(src);
    free(dst);
    return NULL;
}
static int test_threads(void) {
    pthread_t t[THREADS];
    int i;
    for (i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, copier, (void*)(intptr_t)i) == 0);
    for (i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(!thread_bad[i]);
    }
    return TEST_PASS;
}

/* An async copy of pageable memory stays the driver's (synchronous there): still right. */
static int test_async_pageable(void) {
    const size_t n = (4 << 20) + 1;
    unsigned char* src = (unsigned char*)malloc(n);
    unsigned char* dst = (unsigned char*)malloc(n);
    gpuk_buffer b = { 0 };
    CHECK(src && dst);
    if (!src || !dst) return TEST_PASS;
    fill_random(src, n);
    memset(dst, 0, n);
    CHECK_OK(gpuk_buffer_create(staged, &(gpuk_buffer_desc){ .bytes = n }, &b));
    CHECK_OK(gpuk_buffer_write_async(staged, GPUK_DEFAULT_STREAM, b, 0, src, n));
    CHECK_OK(gpuk_buffer_read_async(staged, GPUK_DEFAULT_STREAM, b, 0, dst, n));
    CHECK_OK(gpuk_stream_sync(staged, GPUK_DEFAULT_STREAM));
    CHECK(memcmp(src, dst, n) == 0);
    CHECK_OK(gpuk_buffer_destroy(staged, b));
    free(src);
    free(dst);
    return TEST_PASS;
}

int main(void) {
    int rc;
    if (!gpu_setup("gpu_transfers", 7, NULL, &rc)) return rc;
    rng_seed_from_clock();
    if (gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_bytes = 1 << 20, .staging_min_bytes = 1 }, &staged) != GPUK_OK ||
        gpuk_ctx_create(&(gpuk_ctx_desc){ .no_staging = true }, &direct) != GPUK_OK ||
        gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_min_bytes = (size_t)1 << 20 }, &dflt) != GPUK_OK ||
        gpuk_module_load(staged, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 }, .label = "gpu_test" }, &mod) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    RUN(test_staged_against_direct);
    RUN(test_large_default);
    RUN(test_four_threads);
    RUN(test_staged_ordering);
    RUN(test_join_fork);
    RUN(test_threads);
    RUN(test_async_pageable);
    CHECK_OK(gpuk_ctx_destroy(staged));
    CHECK_OK(gpuk_ctx_destroy(direct));
    CHECK_OK(gpuk_ctx_destroy(dflt));
    return test_summary();
}
