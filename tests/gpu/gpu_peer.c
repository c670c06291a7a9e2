/* tests/gpu/gpu_peer.c - several ctxs on a real GPU machine: a ctx on every device found, peer
   access queried and enabled both ways for every pair (where the hardware cannot, the refusal
   is checked instead), copies between every pair of devices (sync and async, at offsets, with
   a cross-ctx event wait ordering a producer on one device before the copy on another), and,
   with one device, two ctxs of that device (the same primary context) and the refusals; peer
   copies of 1 byte, 4095 bytes and 1 GiB both ways, byte for byte, with the 1 GiB copy's
   bandwidth against a device-to-device copy (GPUK_TEST_QUICK: 64 MiB). Uses every device it
   finds and says how many.
   cc -std=c99 -I../.. gpu_peer.c -ldl -lpthread */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEV = 16, N = 1 << 20 }; /* 4 MiB of u32 a copy */

static gpuk_ctx* ctxs[MAX_DEV];
static int ndev;

static int test_peer_access(void) {
    int i, j;
    bool can;
    for (i = 0; i < ndev; i++) {
        CHECK_RESULT(gpuk_device_can_access_peer(i, i, &can), GPUK_ERR_INVALID_ARG);
        CHECK_RESULT(gpuk_ctx_enable_peer_access(ctxs[i], ctxs[i]), GPUK_ERR_INVALID_ARG);
        for (j = 0; j < ndev; j++) {
            if (i == j) continue;
            CHECK_OK(gpuk_device_can_access_peer(i, j, &can));
            printf("     device %d -> %d: peer access %s\n", i, j, can ? "yes" : "no");
            if (can) {
                CHECK_OK(gpuk_ctx_enable_peer_access(ctxs[i], ctxs[j]));
                CHECK_OK(gpuk_ctx_enable_peer_access(ctxs[i], ctxs[j])); /* idempotent */
            } else {
                CHECK_RESULT(gpuk_ctx_enable_peer_access(ctxs[i], ctxs[j]), (gpuk_result)217);
            }
        }
    }
    return TEST_PASS;
}

/* src on device i filled with iota from a value, copied to device j (sync, then async at
   offsets after a cross-ctx wait), read back and compared. */
static int copy_pair(gpuk_ctx* ci, gpuk_ctx* cj, uint32_t base) {
    gpuk_buffer x, y;
    gpuk_stream sj;
    gpuk_event done;
    uint32_t* host = (uint32_t*)malloc(N * sizeof *host);
    size_t k;
    CHECK(host != NULL);
    if (!host) return TEST_PASS;
    CHECK_OK(gpuk_buffer_create(ci, &(gpuk_buffer_desc){ .bytes = N * 4, .label = "src" }, &x));
    CHECK_OK(gpuk_buffer_create(cj, &(gpuk_buffer_desc){ .bytes = N * 4, .label = "dst" }, &y));
    CHECK_OK(gpuk_stream_create(cj, NULL, &sj));
    CHECK_OK(gpuk_event_create(ci, &(gpuk_event_desc){ .no_timing = true }, &done));
    CHECK_OK(gpuk_iota_u32(ci, GPUK_DEFAULT_STREAM, gpuk_at(x, 0), N, base, 1));
    CHECK_OK(gpuk_buffer_copy_peer(cj, y, 0, ci, x, 0, N * 4));
    CHECK_OK(gpuk_buffer_read(cj, y, 0, host, N * 4));
    for (k = 0; k < N && host[k] == base + (uint32_t)k; k++) {}
    CHECK(k == N);
    /* async: the producer on ci, a cross-ctx wait, the copy on a stream of cj */
    CHECK_OK(gpuk_fill_u32(ci, GPUK_DEFAULT_STREAM, gpuk_at(x, 0), N, base ^ 0xA5A5A5A5u));
    CHECK_OK(gpuk_event_record(ci, GPUK_DEFAULT_STREAM, done));
    CHECK_OK(gpuk_stream_wait_peer(cj, sj, ci, done));
    CHECK_OK(gpuk_buffer_copy_peer_async(cj, sj, y, 12, ci, x, 8, N * 4 - 16));
    CHECK_OK(gpuk_stream_sync(cj, sj));
    CHECK_OK(gpuk_buffer_read(cj, y, 0, host, N * 4));
    CHECK(host[0] == base && host[1] == base + 1 && host[2] == base + 2);
    for (k = 3; k < N - 1 && host[k] == (base ^ 0xA5A5A5A5u); k++) {}
    CHECK(k == N - 1);
    CHECK(host[N - 1] == base + N - 1);
    CHECK_OK(gpuk_event_destroy(ci, done));
    CHECK_OK(gpuk_stream_destroy(cj, sj));
    CHECK_OK(gpuk_buffer_destroy(ci, x));
    CHECK_OK(gpuk_buffer_destroy(cj, y));
    free(host);
    return TEST_PASS;
}

/* Random bytes of size n from (ci, x at offset so) to (cj, y at offset do), read back and
   compared byte for byte (y poisoned first); 1 when equal. */
static int peer_bytes_equal(gpuk_ctx* ci, gpuk_buffer x, size_t so, gpuk_ctx* cj, gpuk_buffer y, size_t dof,
                            size_t n, unsigned char* a, unsigned char* b) {
    size_t k;
    for (k = 0; k < n; k += 8) {
        uint64_t v = rng();
        memcpy(a + k, &v, n - k < 8 ? n - k : 8);
    }
    memset(b, 0x5A, n);
    CHECK_OK(gpuk_buffer_write(ci, x, so, a, n));
    CHECK_OK(gpuk_buffer_memset(cj, GPUK_DEFAULT_STREAM, y, dof, 0xC3u, 1, n));
    CHECK_OK(gpuk_buffer_copy_peer(cj, y, dof, ci, x, so, n));
    CHECK_OK(gpuk_buffer_read(cj, y, dof, b, n));
    return memcmp(a, b, n) == 0;
}

/* The median of 3 timed copies after a warm-up: peer (x on ci -> y on cj, on a stream of cj)
   when peer, else device-to-device within ci (x -> z). GB/s of n bytes. */
static double copy_gbs(gpuk_ctx* ci, gpuk_buffer x, gpuk_ctx* cj, gpuk_buffer y, gpuk_buffer z, size_t n, int peer) {
    gpuk_ctx* c = peer ? cj : ci;
    gpuk_stream s;
    gpuk_event e0, e1;
    float ms[4] = { 0, 0, 0, 0 }, t;
    int rep, a, b;
    CHECK_OK(gpuk_stream_create(c, NULL, &s));
    CHECK_OK(gpuk_event_create(c, NULL, &e0));
    CHECK_OK(gpuk_event_create(c, NULL, &e1));
    for (rep = 0; rep < 4; rep++) {
        CHECK_OK(gpuk_event_record(c, s, e0));
        if (peer) CHECK_OK(gpuk_buffer_copy_peer_async(cj, s, y, 0, ci, x, 0, n));
        else CHECK_OK(gpuk_buffer_copy_async(ci, s, z, 0, x, 0, n));
        CHECK_OK(gpuk_event_record(c, s, e1));
        CHECK_OK(gpuk_event_sync(c, e1));
        CHECK_OK(gpuk_event_elapsed_ms(c, e0, e1, &ms[rep]));
    }
    for (a = 1; a < 4; a++) /* sort the three timed runs (ms[0] was the warm-up) */
        for (b = a + 1; b < 4; b++)
            if (ms[b] < ms[a]) { t = ms[a]; ms[a] = ms[b]; ms[b] = t; }
    CHECK_OK(gpuk_event_destroy(c, e0));
    CHECK_OK(gpuk_event_destroy(c, e1));
    CHECK_OK(gpuk_stream_destroy(c, s));
    return ms[2] > 0 ? (double)n / (ms[2] * 1e-3) / 1e9 : 0;
}

/* Peer copies of 1 byte, 4095 bytes and 1 GiB (64 MiB under GPUK_TEST_QUICK) at odd offsets
   between ci and cj, checked byte for byte, and the big copy's bandwidth against a
   device-to-device copy within ci (a read and a write of n bytes each way). */
static void peer_sizes(gpuk_ctx* ci, gpuk_ctx* cj, const char* what) {
    const size_t big = getenv("GPUK_TEST_QUICK") ? (size_t)64 << 20 : (size_t)1 << 30;
    const size_t sizes[3] = { 1, 4095, big };
    gpuk_buffer x = { 0 }, y = { 0 }, z = { 0 };
    unsigned char* a = (unsigned char*)malloc(big + 64);
    unsigned char* b = (unsigned char*)malloc(big + 64);
    int i, ok = 1;
    CHECK(a && b);
    if (!a || !b) { free(a); free(b); return; }
    CHECK_OK(gpuk_buffer_create(ci, &(gpuk_buffer_desc){ .bytes = big + 64, .label = "peer src" }, &x));
    CHECK_OK(gpuk_buffer_create(cj, &(gpuk_buffer_desc){ .bytes = big + 64, .label = "peer dst" }, &y));
    CHECK_OK(gpuk_buffer_create(ci, &(gpuk_buffer_desc){ .bytes = big + 64, .label = "d2d dst" }, &z));
    for (i = 0; i < 3; i++) {
        int same = peer_bytes_equal(ci, x, 3, cj, y, 5, sizes[i], a, b);
        CHECK(same);
        ok &= same;
    }
    if (ok && !under_sanitizer()) {
        const double peer = copy_gbs(ci, x, cj, y, z, big, 1), d2d = copy_gbs(ci, x, cj, y, z, big, 0);
        printf("     %s: 1 B, 4095 B and %zu MiB equal byte for byte; %zu MiB peer copy %.1f GB/s, "
               "device-to-device on the source %.1f GB/s (%.2f of it)\n", what, big >> 20, big >> 20, peer,
               d2d, d2d > 0 ? peer / d2d : 0);
    }
    CHECK_OK(gpuk_buffer_destroy(ci, x));
    CHECK_OK(gpuk_buffer_destroy(cj, y));
    CHECK_OK(gpuk_buffer_destroy(ci, z));
    free(a);
    free(b);
}

/* Every ordered pair of devices (or, with one device, a second ctx of it, both ways). */
static int test_peer_sizes_and_bandwidth(void) {
    char what[64];
    int i, j;
    for (i = 0; i < ndev; i++)
        for (j = 0; j < ndev; j++) {
            if (i == j) continue;
            snprintf(what, sizeof what, "device %d -> %d", i, j);
            peer_sizes(ctxs[i], ctxs[j], what);
        }
    if (ndev == 1) {
        gpuk_ctx* second = NULL;
        CHECK_OK(gpuk_ctx_create(NULL, &second));
        if (second) {
            peer_sizes(ctxs[0], second, "device 0, ctx A -> ctx B");
            peer_sizes(second, ctxs[0], "device 0, ctx B -> ctx A");
            CHECK_OK(gpuk_ctx_destroy(second));
        }
    }
    return TEST_PASS;
}

static int test_copies_every_pair(void) {
    int i, j;
    for (i = 0; i < ndev; i++)
        for (j = 0; j < ndev; j++)
            if (i != j) copy_pair(ctxs[i], ctxs[j], (uint32_t)(1000 * i + 17 * j));
    if (ndev == 1) {
        /* one device: a second ctx of it (the same primary context) */
        gpuk_ctx* second = NULL;
        CHECK_OK(gpuk_ctx_create(NULL, &second));
        if (second) {
            CHECK_RESULT(gpuk_ctx_enable_peer_access(ctxs[0], second), GPUK_ERR_INVALID_ARG);
            copy_pair(ctxs[0], second, 5);
            copy_pair(second, ctxs[0], 6);
            CHECK_OK(gpuk_ctx_destroy(second));
            CHECK_RESULT(gpuk_buffer_copy_peer(ctxs[0], (gpuk_buffer){ 1 }, 0, second,
                                               (gpuk_buffer){ 1 }, 0, 4), GPUK_ERR_INVALID_ARG);
        }
    }
    /* the same ctx: the ordinary copy */
    copy_pair(ctxs[0], ctxs[0], 7);
    return TEST_PASS;
}

int main(void) {
    int code, i;
    gpuk_init(NULL); /* its failure is gpu_setup's to report */
    if (!gpu_setup("gpu_peer", 3, NULL, &code)) return code;
    rng_seed_from_clock();
    CHECK_OK(gpuk_device_count(&ndev));
    if (ndev > MAX_DEV) ndev = MAX_DEV;
    for (i = 0; i < ndev; i++) {
        CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = i }, &ctxs[i]));
        if (!ctxs[i]) { printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error()); return 1; }
    }
    printf("     gpu_peer: ran with %d device%s%s\n", ndev, ndev == 1 ? "" : "s",
           ndev == 1 ? " (same-device behaviour and refusals only; no pair of devices)" : "");
    RUN(test_peer_access);
    RUN(test_copies_every_pair);
    RUN(test_peer_sizes_and_bandwidth);
    for (i = 0; i < ndev; i++) CHECK_OK(gpuk_ctx_destroy(ctxs[i]));
    return test_summary();
}
