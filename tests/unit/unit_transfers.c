/* tests/unit/unit_transfers.c - stream-less copies of pageable host memory through the ctx's pinned
   staging, on the fake driver with deferred copies (a copy of page-locked memory moves its
   bytes only when waited for, as a DMA engine may, and page-locked memory reused or freed
   while in flight is misuse): sizes around the piece boundaries and unaligned offsets byte for
   byte, which copies stage and which go direct, the staging memory's allocation failing (the
   copy still whole, through the driver), a driver call failing in the middle of a staged copy
   (an error, never a silent partial copy, nothing in flight afterwards, the next copy right),
   a copy while the staging is taken, and gpuk_stream_join/fork. The staging's copy threads:
   1, 2, 3 and 8 of them at sizes around slices and pieces (each worker's share counted), copies
   back to back and after the workers have gone to sleep, their threads gone after the ctx
   destroy, thread starts refused (fewer threads, one warning), a fork child that never waits
   for its parent's threads. The GPU's NUMA node: node cpulists odd and plain, the node and its
   CPUs read from a sysfs tree of the test's own, the default thread count from the node's
   CPUs, and each copy thread bound to them (the calling thread left alone). No GPU needed.
   cc -std=c99 -I../.. unit_transfers.c -ldl -lpthread */
#define _GNU_SOURCE
/* thread starts refused from the refuse_from-th on (-1: none), through gpuk's test hook */
static int refuse_from = -1, start_tries;
static int refuse_start(void) { return refuse_from >= 0 && start_tries++ >= refuse_from; }
#define GPUK__THREAD_START_REFUSED() refuse_start()
/* gpuk reads sysfs under this folder: a tree the NUMA tests fill; for the other tests a folder
   that does not exist, so that the GPU's node is unknown there, as on most test machines */
#define NO_SYSFS "/nonexistent-sysfs"
static char sysfs_root[256] = NO_SYSFS;
#define GPUK__SYSFS_ROOT sysfs_root
/* nonzero: the online CPU count gpuk sees (the NUMA tests make it differ from the node's) */
static unsigned online_cpus;
#define GPUK__ONLINE_CPUS() (online_cpus ? online_cpus : gpuk__cpu_count())
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { HALF = 32 << 10, BUF = 2 << 20 };

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static void fill_random(unsigned char* p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        p[i] = (unsigned char)(seed >> 24);
    }
}

/* What the logger heard at GPUK_LOG_WARN (the last message) and how often. */
static char warned[512];
static int warnings;
static void capture(void* user, gpuk_log_level level, int code, const char* msg) {
    (void)user; (void)code;
    if (level != GPUK_LOG_WARN) return;
    warnings++;
    snprintf(warned, sizeof warned, "%s", msg);
}

/* gpuk_ctx_desc.staging_threads of the ctxs up() creates: the calling thread alone unless a
   test says otherwise (the piece counts of the first tests are for one thread) */
static uint32_t up_threads = 1;
static bool up_no_numa; /* and their no_staging_numa */

/* gpuk on a fresh fake driver with deferred copies (and cfg's failures), the capturing logger,
   and a ctx with the given staging settings. */
static gpuk_ctx* up(fake_config cfg, size_t staging_bytes, size_t min_bytes, bool off) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_ctx_desc cd;
    gpuk_shutdown();
    cfg.defer_copies = 1;
    fake_reset(&cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.logger.func = capture;
    warnings = 0;
    warned[0] = 0;
    CHECK_OK(gpuk_init(&d));
    memset(&cd, 0, sizeof cd);
    cd.staging_bytes = staging_bytes;
    cd.staging_min_bytes = min_bytes;
    cd.no_staging = off;
    cd.staging_threads = up_threads;
    cd.no_staging_numa = up_no_numa;
    CHECK_OK(gpuk_ctx_create(&cd, &c));
    return c;
}

static unsigned char* dev_bytes(gpuk_ctx* c, gpuk_buffer b) { return (unsigned char*)(uintptr_t)gpuk_buffer_devptr(c, b); }

/* Writes n random bytes from src + host_off to buffer offset dev_off and reads them back to a
   poisoned dst + host_off: every byte there, none around; the pinned copies the fake saw. */
static void round_trip(gpuk_ctx* c, gpuk_buffer b, size_t n, size_t dev_off, size_t host_off, long want_pinned) {
    unsigned char* src = (unsigned char*)malloc(n + host_off + 1);
    unsigned char* dst = (unsigned char*)malloc(n + host_off + 1);
    unsigned char* dev = dev_bytes(c, b);
    long before = fake.pinned_copies;
    CHECK(src && dst);
    if (!src || !dst) { free(src); free(dst); return; }
    fill_random(src, n + host_off + 1);
    memset(dev, 0xEE, BUF);
    CHECK_OK(gpuk_buffer_write(c, b, dev_off, src + host_off, n));
    CHECK(memcmp(dev + dev_off, src + host_off, n) == 0);
    CHECK(dev_off == 0 || dev[dev_off - 1] == 0xEE);
    CHECK(dev_off + n == BUF || dev[dev_off + n] == 0xEE);
    CHECK(fake.pinned_copies - before == want_pinned);
    memset(dst, 0x5A, n + host_off + 1);
    before = fake.pinned_copies;
    CHECK_OK(gpuk_buffer_read(c, b, dev_off, dst + host_off, n));
    CHECK(memcmp(dst + host_off, dev + dev_off, n) == 0);
    CHECK(host_off == 0 || dst[host_off - 1] == 0x5A);
    CHECK(dst[host_off + n] == 0x5A);
    CHECK(fake.pinned_copies - before == want_pinned);
    CHECK(fake.npending == 0); /* nothing in flight after a stream-less copy */
    free(src);
    free(dst);
}

static int test_sizes_around_pieces(void) {
    /* 64 KiB of staging: halves and pieces of 32 KiB */
    static const size_t sizes[] = { 1, 4095, HALF - 1, HALF, HALF + 1, 2 * HALF, 2 * HALF + 1,
                                    3 * HALF - 1, 5 * HALF + 77, 40 * HALF + 13 };
    static const size_t offs[][2] = { { 0, 0 }, { 3, 1 }, { 4097, 7 } };
    gpuk_ctx* c = up((fake_config){ 0 }, 64 << 10, 1, false);
    gpuk_buffer b;
    size_t i, k;
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (k = 0; k < 3; k++)
            round_trip(c, b, sizes[i], offs[k][0], offs[k][1], (long)((sizes[i] + HALF - 1) / HALF));
    CHECK(fake_live_count(FK_HOST) == 1); /* one block, allocated once */
    CHECK(fake.protocol_errors == 0);
    CHECK(warnings == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return 0;
}

static int test_what_stages(void) {
    gpuk_ctx* c = up((fake_config){ 0 }, 0, (size_t)1 << 20, false); /* 32 MiB (the default), from 1 MiB */
    gpuk_buffer b, b2;
    gpuk_pinned pin;
    unsigned char* host = (unsigned char*)malloc(BUF);
    void* back = NULL;
    size_t got = 0;
    long before;
    gpuk_ctx_desc dd = gpuk_ctx_desc_defaults(NULL);
    CHECK(dd.staging_bytes == (size_t)32 << 20 && dd.staging_min_bytes == (size_t)1 << 20 && !dd.no_staging);
    CHECK(host != NULL);
    if (!host) return 0;
    fill_random(host, BUF);
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    round_trip(c, b, 1000, 0, 0, 0);          /* below the threshold: direct */
    round_trip(c, b, (1 << 20) - 1, 0, 0, 0);
    round_trip(c, b, 1 << 20, 0, 0, 4);       /* pieces of a quarter, 256 KiB at least */
    round_trip(c, b, BUF, 0, 0, 4);
    /* the create's upload and the download stage too */
    before = fake.pinned_copies;
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .data = { host, BUF } }, &b2));
    CHECK(memcmp(dev_bytes(c, b2), host, BUF) == 0);
    CHECK_OK(gpuk_buffer_download(c, b2, &back, &got));
    CHECK(got == BUF && back && memcmp(back, host, BUF) == 0);
    CHECK(fake.pinned_copies - before == 8);
    gpuk_host_free(back);
    /* page-locked memory: one direct copy each way */
    CHECK_OK(gpuk_pinned_create(c, &(gpuk_pinned_desc){ .data = { host, BUF } }, &pin));
    before = fake.pinned_copies;
    CHECK_OK(gpuk_buffer_write(c, b, 0, gpuk_pinned_ptr(c, pin), BUF));
    CHECK(memcmp(dev_bytes(c, b), host, BUF) == 0);
    memset(gpuk_pinned_ptr(c, pin), 0, BUF);
    CHECK_OK(gpuk_buffer_read(c, b, 0, gpuk_pinned_ptr(c, pin), BUF));
    CHECK(memcmp(gpuk_pinned_ptr(c, pin), host, BUF) == 0);
    CHECK(fake.pinned_copies - before == 2);
    /* async copies of pageable memory stay the driver's */
    before = fake.pinned_copies;
    CHECK_OK(gpuk_buffer_write_async(c, GPUK_DEFAULT_STREAM, b2, 0, host, BUF));
    CHECK_OK(gpuk_buffer_read_async(c, GPUK_DEFAULT_STREAM, b2, 0, host, BUF));
    CHECK_OK(gpuk_stream_sync(c, GPUK_DEFAULT_STREAM));
    CHECK(fake.pinned_copies == before);
    CHECK(fake.protocol_errors == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    /* no_staging: the driver's pageable copy at any size, no pinned memory taken; and the
       defaults below 1 MiB (the crossover of bench "pageable copies"): the same */
    c = up((fake_config){ 0 }, 0, 1, true);
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    round_trip(c, b, BUF - 5, 5, 3, 0);
    CHECK(fake_live_count(FK_HOST) == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    c = up((fake_config){ 0 }, 0, 0, false);
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    round_trip(c, b, ((size_t)1 << 20) - 1, 0, 0, 0);
    CHECK(fake_live_count(FK_HOST) == 0);
    {   /* ... and from 1 MiB up staged: four pieces of a quarter */
        const size_t four = (size_t)1 << 20;
        unsigned char* big = (unsigned char*)malloc(four);
        CHECK(big != NULL);
        if (big) {
            fill_random(big, four);
            CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = four }, &b2));
            before = fake.pinned_copies;
            CHECK_OK(gpuk_buffer_write(c, b2, 0, big, four - 1));
            CHECK(fake.pinned_copies == before);
            CHECK_OK(gpuk_buffer_write(c, b2, 0, big, four));
            CHECK(fake.pinned_copies - before == 4);
            CHECK(memcmp(dev_bytes(c, b2), big, four) == 0);
            free(big);
        }
    }
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    /* a staging size below the least is refused, naming the field */
    {
        gpuk_ctx* bad = NULL;
        CHECK_OK(fake_gpuk_init(NULL));
        CHECK_RESULT(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_bytes = 4096 }, &bad), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("staging_bytes = 4096");
        CHECK(bad == NULL);
        fake_gpuk_check_released();
    }
    free(host);
    return 0;
}

/* The staging memory cannot be allocated (each of its three driver calls in turn): the copy
   that wanted it goes direct and is whole, the logger hears once, later copies go direct
   without asking again, and nothing is left allocated. */
static int test_staging_allocation_fails(void) {
    static const struct { const char* name; long nth; } fails[] = {
        { "cuMemHostAlloc", 1 }, { "cuEventCreate", 1 }, { "cuEventCreate", 2 } };
    size_t i;
    for (i = 0; i < sizeof fails / sizeof fails[0]; i++) {
        gpuk_ctx* c = up((fake_config){ .fail_name = fails[i].name, .fail_nth = fails[i].nth, .fail_code = 2 },
                         64 << 10, 1, false);
        gpuk_buffer b;
        int dir;
        for (dir = 0; dir < 2; dir++) { /* the first staged copy a write, then a read */
            fake.name_calls = 0;
            fake.failed_calls = 0;
            CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
            if (dir == 0) {
                round_trip(c, b, 5 * HALF + 3, 1, 1, 0);
            } else {
                unsigned char* dst = (unsigned char*)calloc(1, 5 * HALF);
                fill_random(dev_bytes(c, b), 5 * HALF);
                CHECK_OK(gpuk_buffer_read(c, b, 0, dst, 5 * HALF));
                CHECK(dst && memcmp(dst, dev_bytes(c, b), 5 * HALF) == 0);
                free(dst);
            }
            CHECK(fake.failed_calls == 1);
            CHECK(warnings == 1);
            CHECK(strstr(warned, "pinned staging memory") && strstr(warned, fails[i].name));
            CHECK(strstr(warned, dir == 0 ? "gpuk_buffer_write" : "gpuk_buffer_read"));
            round_trip(c, b, 3 * HALF, 0, 0, 0); /* off from now on: no new attempt */
            CHECK(warnings == 1);
            CHECK(fake_live_count(FK_HOST) == 0);
            CHECK(fake.protocol_errors == 0);
            CHECK_OK(gpuk_buffer_destroy(c, b));
            CHECK_OK(gpuk_ctx_destroy(c));
            fake_gpuk_check_released();
            if (dir == 0)
                c = up((fake_config){ .fail_name = fails[i].name, .fail_nth = fails[i].nth, .fail_code = 2 },
                       64 << 10, 1, false);
        }
    }
    return 0;
}

/* A driver call fails in the middle of a staged copy: the call returns its code naming it
   (never GPUK_OK over a partial copy), nothing is left in flight on the staging memory, the
   next copy is whole and staged again. */
static int test_failure_mid_copy(void) {
    static const struct { const char* name; long nth; int read; } fails[] = {
        { "cuMemcpyHtoDAsync", 3, 0 }, { "cuEventRecord", 2, 0 }, { "cuEventSynchronize", 1, 0 },
        { "cuEventSynchronize", 4, 0 }, { "cuStreamSynchronize", 1, 0 },
        { "cuMemcpyDtoHAsync", 3, 1 }, { "cuEventRecord", 4, 1 }, { "cuEventSynchronize", 2, 1 },
        { "cuStreamSynchronize", 1, 1 } };
    size_t i, n = 10 * HALF + 5;
    unsigned char* src = (unsigned char*)malloc(n);
    unsigned char* dst = (unsigned char*)malloc(n);
    CHECK(src && dst);
    if (!src || !dst) return 0;
    for (i = 0; i < sizeof fails / sizeof fails[0]; i++) {
        gpuk_ctx* c = up((fake_config){ 0 }, 64 << 10, 1, false);
        gpuk_buffer b;
        gpuk_result r;
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
        round_trip(c, b, 3 * HALF, 0, 0, 3); /* staging allocated and used once */
        fill_random(src, n);
        fill_random(dev_bytes(c, b), n);
        fake.name_calls = 0;
        fake.cfg.fail_name = fails[i].name;
        fake.cfg.fail_nth = fails[i].nth;
        fake.cfg.fail_code = 999;
        r = fails[i].read ? gpuk_buffer_read(c, b, 0, dst, n) : gpuk_buffer_write(c, b, 0, src, n);
        CHECK_RESULT(r, (gpuk_result)999);
        CHECK_ERROR_MENTIONS(fails[i].name);
        CHECK_ERROR_MENTIONS("staged copy of 327685 bytes");
        CHECK(fake.npending == 0); /* drained: nothing in flight on the staging halves */
        CHECK(fake.protocol_errors == 0);
        fake.cfg.fail_name = NULL;
        round_trip(c, b, n, 0, 0, 11); /* whole, and staged again */
        CHECK(fake.protocol_errors == 0);
        CHECK_OK(gpuk_ctx_destroy(c));
        fake_gpuk_check_released();
    }
    /* the drain after the failure fails too: staging is off for the ctx from then on (its
       halves may be in flight), and freed with the ctx after its device sync */
    {
        gpuk_ctx* c = up((fake_config){ 0 }, 64 << 10, 1, false);
        gpuk_buffer b;
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
        fill_random(src, n);
        fake.cfg.fail_name = "cuStreamSynchronize";
        fake.cfg.fail_code = 999;
        CHECK_RESULT(gpuk_buffer_write(c, b, 0, src, n), (gpuk_result)999);
        fake.cfg.fail_name = NULL;
        round_trip(c, b, n, 0, 0, 0);
        CHECK(fake_live_count(FK_HOST) == 1);
        CHECK_OK(gpuk_ctx_destroy(c));
        fake_gpuk_check_released();
    }
    /* a sticky fault there is the process's fault, reported by every later call */
    {
        gpuk_ctx* c = up((fake_config){ 0 }, 64 << 10, 1, false);
        gpuk_buffer b;
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
        fake.cfg.fail_name = "cuEventSynchronize";
        fake.cfg.fail_code = 700;
        fake.cfg.sticky = 1;
        CHECK_RESULT(gpuk_buffer_write(c, b, 0, src, n), (gpuk_result)700);
        CHECK_RESULT(gpuk_buffer_read(c, b, 0, dst, 10), (gpuk_result)700);
        CHECK_RESULT(gpuk_ctx_destroy(c), (gpuk_result)700);
        gpuk_shutdown();
    }
    free(src);
    free(dst);
    return 0;
}

/* A copy that finds the staging taken (here: by the copy it interrupts, through the fake's
   call hook) goes direct instead of waiting, and both come out whole. */
static gpuk_ctx* busy_ctx;
static gpuk_buffer busy_buf;
static unsigned char busy_src[4 * HALF];
static int busy_done;
static long busy_pinned;
static void interrupt(const char* name) {
    long before;
    if (busy_done || strcmp(name, "cuMemcpyHtoDAsync") != 0) return;
    busy_done = 1;
    before = fake.pinned_copies;
    CHECK_OK(gpuk_buffer_write(busy_ctx, busy_buf, 0, busy_src, sizeof busy_src));
    busy_pinned = fake.pinned_copies - before;
}
static int test_staging_taken(void) {
    gpuk_ctx* c = up((fake_config){ 0 }, 64 << 10, 1, false);
    gpuk_buffer b;
    unsigned char* src = (unsigned char*)malloc(BUF);
    CHECK(src != NULL);
    if (!src) return 0;
    fill_random(src, BUF);
    fill_random(busy_src, sizeof busy_src);
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &busy_buf));
    busy_ctx = c;
    busy_done = 0;
    busy_pinned = -1;
    fake.cfg.on_call = interrupt;
    CHECK_OK(gpuk_buffer_write(c, b, 0, src, BUF));
    fake.cfg.on_call = NULL;
    CHECK(busy_done && busy_pinned == 0);
    CHECK(memcmp(dev_bytes(c, b), src, BUF) == 0);
    CHECK(memcmp(dev_bytes(c, busy_buf), busy_src, sizeof busy_src) == 0);
    CHECK(fake.protocol_errors == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    free(src);
    return 0;
}

/* The waits recorded so far include `waiter` waiting on `on` (native streams). */
static int waited(gpuk_ctx* c, gpuk_stream waiter, gpuk_stream on) {
    int i, n = 0;
    for (i = 0; i < fake.nwaits; i++)
        n += fake.waits[i].waiter == gpuk_stream_native(c, waiter) && fake.waits[i].on == gpuk_stream_native(c, on);
    return n;
}

static int test_join_fork(void) {
    gpuk_ctx* c = up((fake_config){ 0 }, 0, 0, false);
    gpuk_stream s[3], other, stale, d = GPUK_DEFAULT_STREAM;
    gpuk_ctx* c2;
    long calls;
    int i;
    for (i = 0; i < 3; i++) CHECK_OK(gpuk_stream_create(c, NULL, &s[i]));
    CHECK_OK(gpuk_stream_create(c, NULL, &stale));
    CHECK_OK(gpuk_stream_destroy(c, stale));
    CHECK_OK(gpuk_ctx_create(NULL, &c2));
    CHECK_OK(gpuk_stream_create(c2, NULL, &other));
    {   /* s0 waits for s1, s2 and the default stream; itself is skipped */
        gpuk_stream o[4];
        o[0] = s[1]; o[1] = s[0]; o[2] = s[2]; o[3] = d;
        CHECK_OK(gpuk_stream_join(c, s[0], o, 4));
        CHECK(fake.nwaits == 3);
        CHECK(waited(c, s[0], s[1]) == 1 && waited(c, s[0], s[2]) == 1 && waited(c, s[0], d) == 1);
        fake.nwaits = 0;
        CHECK_OK(gpuk_stream_fork(c, d, o, 3)); /* s1, s0, s2 wait for the default stream */
        CHECK(fake.nwaits == 3);
        CHECK(waited(c, s[1], d) == 1 && waited(c, s[0], d) == 1 && waited(c, s[2], d) == 1);
        fake.nwaits = 0;
        /* nothing to do: no driver call */
        calls = fake.calls;
        CHECK_OK(gpuk_stream_join(c, s[0], o, 0));
        CHECK_OK(gpuk_stream_join(c, s[0], NULL, 0));
        CHECK_OK(gpuk_stream_fork(c, s[0], &s[0], 1));
        CHECK(fake.calls == calls);
        /* bad input: refused before any driver call, naming what */
        CHECK_RESULT(gpuk_stream_join(c, s[0], NULL, 2), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("others is NULL");
        o[1] = stale;
        CHECK_RESULT(gpuk_stream_join(c, s[0], o, 3), GPUK_ERR_INVALID_HANDLE);
        CHECK_ERROR_MENTIONS("others[1]");
        o[1] = other;
        CHECK_RESULT(gpuk_stream_fork(c, s[0], o, 3), GPUK_ERR_INVALID_HANDLE);
        CHECK_ERROR_MENTIONS("gpuk_stream_fork: others[1]");
        CHECK_RESULT(gpuk_stream_join(c, stale, s, 2), GPUK_ERR_INVALID_HANDLE);
        CHECK_RESULT(gpuk_stream_join(NULL, s[0], s, 2), GPUK_ERR_INVALID_ARG);
        CHECK(fake.calls == calls && fake.nwaits == 0);
    }
    /* driver failures pass through, naming the call and the stream; the next call works */
    gpuk_ctx_destroy(c2);
    fake.cfg.fail_name = "cuEventRecord";
    fake.cfg.fail_nth = 2;
    fake.cfg.fail_code = 999;
    fake.name_calls = 0;
    CHECK_RESULT(gpuk_stream_join(c, s[0], &s[1], 2), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuEventRecord");
    CHECK_ERROR_MENTIONS("others[1]");
    fake.cfg.fail_name = "cuStreamWaitEvent";
    fake.cfg.fail_nth = 0;
    CHECK_RESULT(gpuk_stream_fork(c, s[0], &s[1], 2), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuStreamWaitEvent");
    fake.cfg.fail_name = NULL;
    fake.nwaits = 0;
    CHECK_OK(gpuk_stream_join(c, s[0], &s[1], 2));
    CHECK(waited(c, s[0], s[1]) == 1 && waited(c, s[0], s[2]) == 1);
    CHECK(fake.protocol_errors == 0);
    CHECK_OK(gpuk_ctx_destroy(c)); /* the internal event goes with the ctx */
    fake_gpuk_check_released();
    /* the first join cannot create its event: an error, and the next one can */
    c = up((fake_config){ .fail_name = "cuEventCreate", .fail_nth = 1 }, 0, 0, false);
    CHECK_OK(gpuk_stream_create(c, NULL, &s[0]));
    CHECK_RESULT(gpuk_stream_join(c, d, s, 1), (gpuk_result)1);
    CHECK_ERROR_MENTIONS("cuEventCreate");
    CHECK_OK(gpuk_stream_join(c, d, s, 1));
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return 0;
}

/* ---- the staging's copy threads ---- */
enum { SLICE = 64 << 10, BIG_HALF = 512 << 10 }; /* the least slice; halves of 1 MiB of staging */

static size_t round_4k(size_t n) { return (n + 4095u) & ~(size_t)4095; }

/* What the README promises, computed here on its own: a copy of n bytes moves in pieces of a
   quarter of it, at least 256 KiB and at least 64 KiB per thread, at most a half; each piece's
   memcpy is cut into min(threads, piece / 64 KiB) slices on 4 KiB boundaries, the workers
   copying all but the first. Returns the pieces; *worker_slices gets the workers' share. */
static long expect_pieces(size_t n, size_t half, unsigned threads, long* worker_slices) {
    size_t piece = round_4k(n / 4u), least = (size_t)threads * SLICE, off;
    long pieces = 0;
    if (least < ((size_t)256 << 10)) least = (size_t)256 << 10;
    if (piece < least) piece = least;
    if (piece > half) piece = half;
    *worker_slices = 0;
    for (off = 0; off < n; off += piece, pieces++) {
        size_t p = n - off < piece ? n - off : piece, k = p / SLICE;
        if (k > threads) k = threads;
        if (k > 1) {
            size_t slice = round_4k((p + k - 1) / k);
            *worker_slices += (long)((p + slice - 1) / slice) - 1;
        }
    }
    return pieces;
}

/* The workers spin between the pieces of a copy and sleep once a copy is over: copies back to
   back (found spinning) and after a pause in which every worker has gone to sleep (woken by
   the next copy) are whole, in the expected pieces, with the workers' share of the slices. */
static int test_threads_sleep_and_wake(void) {
    const size_t n = 3 * BIG_HALF + 7;
    gpuk_ctx* c;
    gpuk_buffer b;
    int i;
    up_threads = 4;
    c = up((fake_config){ 0 }, 1 << 20, 1, false);
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    for (i = 0; i < 6; i++) {
        long ws, was = (long)GPUK__ATOMIC_LOAD(&c->staging.crew.worker_slices);
        long pieces = expect_pieces(n, BIG_HALF, 4, &ws);
        if (i > 0 && i % 2 == 0) { /* until all three workers sleep */
            int naps = 0;
            while (GPUK__ATOMIC_LOAD(&c->staging.crew.asleep) != 3u && naps++ < 500) usleep(10000);
            CHECK(GPUK__ATOMIC_LOAD(&c->staging.crew.asleep) == 3u);
        }
        round_trip(c, b, n, (size_t)i, (size_t)(5 * i), pieces);
        CHECK((long)GPUK__ATOMIC_LOAD(&c->staging.crew.worker_slices) - was == 2 * ws && ws > 0);
    }
    CHECK(fake.protocol_errors == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    up_threads = 1;
    return 0;
}

/* 1, 2, 3 (odd) and 8 threads: sizes around the slices and pieces at unaligned offsets, byte
   for byte both ways, every slice but the first copied by a worker; the workers exist from
   the first staged copy on and are gone after the ctx destroy. */
static int test_threads_sizes(void) {
    static const unsigned counts[] = { 1, 2, 3, 8 };
    static const size_t sizes[] = { 1, 4095, 2 * SLICE - 1, 2 * SLICE, 2 * SLICE + 1, 3 * SLICE + 4097,
                                    (256 << 10) - 1, 256 << 10, (256 << 10) + 1, 270339, BIG_HALF - 1,
                                    BIG_HALF, BIG_HALF + 1, 3 * BIG_HALF + 7, BUF - 4098 };
    static const size_t offs[][2] = { { 0, 0 }, { 3, 1 }, { 4097, 7 } };
    size_t t, i, k;
    int before = fake_threads_settled();
    CHECK(before > 0);
    for (t = 0; t < sizeof counts / sizeof counts[0]; t++) {
        gpuk_ctx* c;
        gpuk_buffer b;
        up_threads = counts[t];
        c = up((fake_config){ 0 }, 1 << 20, 1, false);
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
        CHECK(fake_threads_back_to(before)); /* none before the first staged copy */
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (k = 0; k < 3; k++) {
                long ws, was = (long)c->staging.crew.worker_slices;
                long pieces = expect_pieces(sizes[i], BIG_HALF, counts[t], &ws);
                round_trip(c, b, sizes[i], offs[k][0], offs[k][1], pieces);
                CHECK((long)c->staging.crew.worker_slices - was == 2 * ws);
                if (counts[t] > 1 && sizes[i] >= 2 * SLICE) CHECK(ws > 0);
            }
        CHECK(c->staging.crew.workers == counts[t] - 1);
        CHECK(fake_threads_back_to(before + (int)counts[t] - 1));
        CHECK(fake.protocol_errors == 0);
        CHECK(warnings == 0);
        CHECK_OK(gpuk_ctx_destroy(c));
        CHECK(fake_threads_back_to(before)); /* joined */
        fake_gpuk_check_released();
    }
    up_threads = 1;
    /* the default: min(8, online CPUs / 2), at least 1; an explicit count kept; over 64 refused */
    {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint32_t want = cpus / 2 > 8 ? 8u : cpus / 2 < 1 ? 1u : (uint32_t)(cpus / 2);
        gpuk_ctx* bad = NULL;
        CHECK(gpuk_ctx_desc_defaults(NULL).staging_threads == want);
        CHECK(gpuk_ctx_desc_defaults(&(gpuk_ctx_desc){ .staging_threads = 3 }).staging_threads == 3);
        CHECK_OK(fake_gpuk_init(NULL));
        CHECK_RESULT(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_threads = 65 }, &bad), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("staging_threads = 65");
        CHECK(bad == NULL);
        CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_threads = 64 }, &bad));
        CHECK_OK(gpuk_ctx_destroy(bad));
        fake_gpuk_check_released();
    }
    return 0;
}

/* Threads that cannot start: the copies use those that did (the calling thread alone at
   worst), whole; the logger hears once; nothing left running after the destroy. */
static int test_thread_start_refused(void) {
    static const int from[] = { 2, 0 };
    size_t i;
    int before = fake_threads_settled();
    for (i = 0; i < 2; i++) {
        gpuk_ctx* c;
        gpuk_buffer b;
        long ws;
        up_threads = 8;
        c = up((fake_config){ 0 }, 1 << 20, 1, false);
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
        refuse_from = from[i];
        start_tries = 0;
        round_trip(c, b, BUF - 1, 1, 3, expect_pieces(BUF - 1, BIG_HALF, 8, &ws)); /* pieces for 8 */
        CHECK(c->staging.crew.workers == (unsigned)from[i]);
        CHECK(fake_threads_back_to(before + from[i]));
        CHECK(warnings == 1);
        CHECK(strstr(warned, "gpuk_buffer_write") && strstr(warned, "only") &&
              strstr(warned, from[i] ? "use 3 threads" : "use 1 thread"));
        round_trip(c, b, 3 * BIG_HALF + 5, 4097, 1, 4);
        CHECK((c->staging.crew.worker_slices > 0) == (from[i] > 0));
        CHECK(warnings == 1);
        CHECK(fake.protocol_errors == 0);
        CHECK_OK(gpuk_ctx_destroy(c));
        CHECK(fake_threads_back_to(before));
        fake_gpuk_check_released();
        refuse_from = -1;
    }
    up_threads = 1;
    return 0;
}

/* A fork child has none of its parent's copy threads: its copies are refused (GPUK_ERR_FORKED)
   and its ctx destroy returns without waiting for them; the parent goes on. */
static int test_fork_child(void) {
    gpuk_ctx* c;
    gpuk_buffer b;
    pid_t pid;
    int status = -1;
    static unsigned char src[BUF];
    up_threads = 4;
    c = up((fake_config){ 0 }, 1 << 20, 1, false);
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
    round_trip(c, b, BUF, 0, 0, 4);
    CHECK(c->staging.crew.workers == 3);
    pid = fork();
    if (pid == 0) {
        gpuk_result w, d;
        alarm(20); /* a wait for a thread that is not there ends the child, failing the test */
        w = gpuk_buffer_write(c, b, 0, src, sizeof src);
        d = gpuk_ctx_destroy(c);
        gpuk_shutdown();
        _exit(w == GPUK_ERR_FORKED && d == GPUK_ERR_FORKED ? 0 : 1);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    round_trip(c, b, BUF - 9, 9, 2, 4);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    up_threads = 1;
    return 0;
}

/* ---- the GPU's NUMA node ---- */

#define WORD_BITS GPUK__CPU_WORD_BITS
static int set_has(const gpuk__cpu_set* s, unsigned c) {
    return (int)((s->bits[c / WORD_BITS] >> (c % WORD_BITS)) & 1u);
}
static void set_add(gpuk__cpu_set* s, unsigned c) {
    s->bits[c / WORD_BITS] |= 1ul << (c % WORD_BITS);
}
static void set_del(gpuk__cpu_set* s, unsigned c) {
    s->bits[c / WORD_BITS] &= ~(1ul << (c % WORD_BITS));
}
static int set_same(const gpuk__cpu_set* a, const gpuk__cpu_set* b) {
    return memcmp(a, b, sizeof *a) == 0;
}
static unsigned set_count(const gpuk__cpu_set* s) {
    unsigned c, n = 0;
    for (c = 0; c < GPUK__CPU_SET_BITS; c++) n += (unsigned)set_has(s, c);
    return n;
}
static int set_lowest(const gpuk__cpu_set* s) {
    unsigned c;
    for (c = 0; c < GPUK__CPU_SET_BITS; c++)
        if (set_has(s, c)) return (int)c;
    return -1;
}
/* s as a cpulist, one CPU an item ("0,1,5"), then extra */
static void set_list(const gpuk__cpu_set* s, const char* extra, char* out, size_t cap) {
    unsigned c;
    size_t n = 0;
    out[0] = 0;
    for (c = 0; c < GPUK__CPU_SET_BITS; c++)
        if (set_has(s, c)) n += (size_t)snprintf(out + n, cap - n, "%s%u", n ? "," : "", c);
    snprintf(out + n, cap - n, "%s\n", extra);
}

/* Thread tid's CPUs, as /proc shows them (Cpus_allowed_list): 1, or 0 where it cannot be read. */
static int thread_cpus(long tid, gpuk__cpu_set* out) {
    char path[64], line[8192];
    FILE* f;
    int ok = 0;
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    if (!(f = fopen(path, "r"))) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            const char* p = line + 18;
            while (*p == ' ' || *p == '\t') p++;
            ok = gpuk__cpulist_parse(p, out) > 0;
            break;
        }
    fclose(f);
    return ok;
}
/* The calling (main) thread's CPUs: those gpuk must leave as they are. */
static int own_cpus(gpuk__cpu_set* out) { return thread_cpus((long)getpid(), out); }

/* This process's thread ids, at most cap; their number. */
static int thread_ids(long* ids, int cap) {
    DIR* d = opendir("/proc/self/task");
    struct dirent* e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL && n < cap)
        if (e->d_name[0] != '.') ids[n++] = atol(e->d_name);
    closedir(d);
    return n;
}

/* A sysfs tree of the test's own under /tmp, which sysfs_root names from now on. */
static void sysfs_make(void) {
    char dir[] = "/tmp/gpuk_sysfs_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(sysfs_root, sizeof sysfs_root, "%s", dir);
}
/* Writes text to the tree's file rel, making its folders; NULL text removes the file. */
static void sysfs_put(const char* rel, const char* text) {
    char path[512], *slash;
    FILE* f;
    snprintf(path, sizeof path, "%s/%s", sysfs_root, rel);
    if (!text) {
        unlink(path);
        return;
    }
    for (slash = strchr(path + strlen(sysfs_root) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = 0;
        mkdir(path, 0700);
        *slash = '/';
    }
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}
static int sysfs_remove_one(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}
/* Removes the tree; sysfs_root names nothing again. */
static void sysfs_drop(void) {
    CHECK(nftw(sysfs_root, sysfs_remove_one, 8, FTW_DEPTH | FTW_PHYS) == 0);
    snprintf(sysfs_root, sizeof sysfs_root, "%s", NO_SYSFS);
}

#define BUS_DIR "bus/pci/devices/0000:3b:00.0/"
/* what the fake driver reports: upper case, as the real one does; sysfs names it in lower */
static const fake_config numa_gpu = { .pci_bus_id = "0000:3B:00.0" };

/* A tree where the GPU is on node 1, whose CPUs are every one this process may use but the
   lowest (all of them where there is one), and CPUs it may not use, which must not count; the
   process's CPUs into *allowed, the node's that count into *node. */
static void numa_tree(gpuk__cpu_set* allowed, gpuk__cpu_set* node) {
    char list[8192];
    CHECK(own_cpus(allowed));
    *node = *allowed;
    if (set_count(node) > 1) set_del(node, (unsigned)set_lowest(node));
    set_list(node, set_has(allowed, 1000) ? "" : ",1000-1023", list, sizeof list);
    sysfs_make();
    sysfs_put(BUS_DIR "numa_node", "1\n");
    sysfs_put("devices/system/node/node1/cpulist", list);
}

/* Node cpulists, plain and odd: a count and the CPUs, or -1 and an empty set. */
static int test_numa_cpulist(void) {
    static const struct { const char* text; int count; } rows[] = {
        { "0-15,32-47\n", 32 }, { "0-15,32-47", 32 }, { "", 0 }, { "\n", 0 }, { "7", 1 },
        { "5-5\n", 1 }, { "3,3,2-4", 3 }, { "1023", 1 }, { "0-1023\n", 1024 },
        /* beyond the mask, overflowing, backwards, malformed */
        { "1024", -1 }, { "0-1024", -1 }, { "4294967297", -1 }, { "99999999999999999999", -1 },
        { "5-3", -1 }, { "0-3,7-6\n", -1 }, { "garbage", -1 }, { "0x3", -1 }, { "1,,2", -1 },
        { ",1", -1 }, { "1,", -1 }, { "1-", -1 }, { "-1", -1 }, { "1-2-3", -1 }, { " 1", -1 },
        { "1 ", -1 }, { "1:2", -1 }, { "1\n2", -1 }, { "0-3\n\n", -1 }, { "1\t", -1 },
    };
    size_t i;
    gpuk__cpu_set s;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int n;
        memset(&s, 0xA5, sizeof s);
        n = gpuk__cpulist_parse(rows[i].text, &s);
        if (n != rows[i].count)
            fprintf(stderr, "  cpulist \"%s\": %d, wanted %d\n", rows[i].text, n, rows[i].count);
        CHECK(n == rows[i].count);
        CHECK(set_count(&s) == (unsigned)(n > 0 ? n : 0));
    }
    CHECK(gpuk__cpulist_parse("0-15,32-47\n", &s) == 32);
    CHECK(set_has(&s, 0) && set_has(&s, 15) && !set_has(&s, 16) && !set_has(&s, 31) &&
          set_has(&s, 32) && set_has(&s, 47) && !set_has(&s, 48));
    CHECK(gpuk__cpulist_parse("3,3,2-4", &s) == 3 && set_has(&s, 2) && set_has(&s, 4));
    CHECK(gpuk__cpulist_parse("1023", &s) == 1 && set_has(&s, 1023));
    return 0;
}

/* The node from the GPU's numa_node file (its bus id lower-cased), and the node's CPUs this
   process may use from the node's cpulist: present, -1, missing, odd. */
static int test_numa_node_lookup(void) {
    static const struct { const char* text; int node; } rows[] = {
        { "1\n", 1 }, { "0\n", 0 }, { "3", 3 }, { "-1\n", -1 }, { "", -1 }, { "\n", -1 },
        { "garbage\n", -1 }, { "1x\n", -1 }, { " 1\n", -1 }, { "99999999999\n", -1 },
        { "1\n2\n", -1 }, { NULL, -1 } /* no file */
    };
    gpuk_device_info info;
    size_t i;
    gpuk_ctx* c;
    sysfs_make();
    c = up(numa_gpu, 1 << 20, 1, false);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sysfs_put(BUS_DIR "numa_node", rows[i].text);
        CHECK_OK(gpuk_device_query(0, &info));
        CHECK(strcmp(info.pci_bus_id, "0000:3B:00.0") == 0);
#if defined(__linux__)
        if (info.numa_node != rows[i].node)
            fprintf(stderr, "  numa_node \"%s\": %d\n", rows[i].text, info.numa_node);
        CHECK(info.numa_node == rows[i].node);
#else
        CHECK(info.numa_node == -1); /* sysfs is Linux's */
#endif
    }
    CHECK(gpuk_ctx_device_info(c)->numa_node == -1); /* read at the create, before any file */
    CHECK(gpuk__pci_numa_node("") == -1 && gpuk__pci_numa_node("../../../../etc") == -1 &&
          gpuk__pci_numa_node("..") == -1 && gpuk__pci_numa_node(".") == -1 &&
          gpuk__pci_numa_node("0000:3b:00.0/../../x") == -1);
    CHECK(gpuk__pci_numa_node("0000:3b:00.00000000000000000000000000000000000000000") == -1);
#if defined(__linux__)
    {
        gpuk__cpu_set allowed, got;
        char list[8192];
        int low;
        sysfs_put(BUS_DIR "numa_node", "2\n");
        CHECK(gpuk__pci_numa_node("0000:3b:00.0") == 2 && gpuk__pci_numa_node("0000:3B:00.0") == 2);
        /* the node's CPUs: those of its cpulist this process may use */
        CHECK(own_cpus(&allowed));
        low = set_lowest(&allowed);
        CHECK(low >= 0);
        memset(&got, 0, sizeof got);
        set_add(&got, (unsigned)low);
        set_list(&got, set_has(&allowed, 1023) ? "" : ",1020-1023", list, sizeof list);
        sysfs_put("devices/system/node/node2/cpulist", list);
        CHECK(gpuk__numa_cpus(2, &got) == 1 && set_count(&got) == 1 &&
              set_has(&got, (unsigned)low));
        set_list(&allowed, "", list, sizeof list);
        sysfs_put("devices/system/node/node2/cpulist", list);
        CHECK(gpuk__numa_cpus(2, &got) == set_count(&allowed) && set_same(&got, &allowed));
        CHECK(gpuk__numa_cpus(3, &got) == 0 && set_count(&got) == 0); /* no cpulist */
        CHECK(gpuk__numa_cpus(-1, &got) == 0 && set_count(&got) == 0);
        {   /* odd cpulists, and a node without CPUs: unknown, an empty set */
            static const char* const odd[] = { "", "\n", "garbage\n", "3-1\n", "0-4096\n",
                                               "0,,1\n" };
            for (i = 0; i < sizeof odd / sizeof odd[0]; i++) {
                sysfs_put("devices/system/node/node2/cpulist", odd[i]);
                CHECK(gpuk__numa_cpus(2, &got) == 0 && set_count(&got) == 0);
            }
        }
        if (!set_has(&allowed, 1023)) { /* none of the node's CPUs allowed */
            sysfs_put("devices/system/node/node2/cpulist", "1023\n");
            CHECK(gpuk__numa_cpus(2, &got) == 0 && set_count(&got) == 0);
        }
    }
#endif
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    sysfs_drop();
    return 0;
}

/* staging_threads 0: min(8, the node's CPUs this process may use / 2), at least 1, where the
   node is known; the online CPUs where it is not or no_staging_numa says so; an explicit count
   kept. */
static int test_numa_default_threads(void) {
    static const unsigned rows[][2] = { { 1, 1 }, { 2, 1 }, { 3, 1 }, { 6, 3 },
                                        { 16, 8 }, { 17, 8 }, { 64, 8 } };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t online = cpus / 2 > 8 ? 8u : cpus / 2 < 1 ? 1u : (uint32_t)(cpus / 2);
    size_t i;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK(gpuk__staging_threads_default(rows[i][0]) == rows[i][1]);
    CHECK(gpuk__staging_threads_default(0) == online);
#if !defined(__linux__)
    return TEST_SKIP;
#else
    gpuk__cpu_set allowed, node, got;
    unsigned n, want;
    gpuk_ctx* c;
    numa_tree(&allowed, &node);
    n = set_count(&node);
    want = n / 2 > 8 ? 8u : n / 2 < 1 ? 1u : n / 2;
    /* online CPUs whose rule gives another count than the node's */
    online_cpus = want == 8 ? 2u : 64u;
    online = want == 8 ? 1u : 8u;
    up_threads = 0;
    c = up(numa_gpu, 1 << 20, 1, false);
    CHECK(c->info.numa_node == 1);
    CHECK(c->staging.threads == want && c->staging.crew.pin == 1);
    CHECK(set_same(&c->staging.crew.cpus, &node));
    CHECK(own_cpus(&got) && set_same(&got, &allowed)); /* the calling thread untouched */
    CHECK(gpuk_ctx_desc_defaults(NULL).staging_threads == want);
    CHECK(gpuk_ctx_desc_defaults(&(gpuk_ctx_desc){ .staging_threads = 5 }).staging_threads == 5);
    CHECK(gpuk_ctx_desc_defaults(&(gpuk_ctx_desc){ .no_staging_numa = true }).staging_threads ==
          online);
    CHECK(gpuk_ctx_desc_defaults(&(gpuk_ctx_desc){ .device = 7 }).staging_threads == online);
    CHECK_OK(gpuk_ctx_destroy(c));
    up_no_numa = true; /* the opt-out: the online CPUs, no binding */
    c = up(numa_gpu, 1 << 20, 1, false);
    CHECK(c->info.numa_node == 1 && c->staging.threads == online && c->staging.crew.pin == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    up_no_numa = false;
    sysfs_put("devices/system/node/node1/cpulist", NULL); /* a node without a cpulist: unknown */
    c = up(numa_gpu, 1 << 20, 1, false);
    CHECK(c->info.numa_node == 1 && c->staging.threads == online && c->staging.crew.pin == 0);
    CHECK(gpuk_ctx_desc_defaults(NULL).staging_threads == online);
    CHECK_OK(gpuk_ctx_destroy(c));
    up_threads = 1;
    online_cpus = 0;
    fake_gpuk_check_released();
    sysfs_drop();
    return 0;
#endif
}

/* Each copy thread runs on the node's CPUs that this process may use, from its start; the
   calling thread keeps its own; with no_staging_numa the copy threads keep the caller's. Needs
   two CPUs or more to tell a node's set from the process's. */
static int test_numa_copy_threads_bound(void) {
#if !defined(__linux__)
    return TEST_SKIP;
#else
    gpuk__cpu_set allowed, node, got;
    long before[256], after[256];
    int nb, na, i, k, round, fresh;
    int settled = fake_threads_settled();
    CHECK(own_cpus(&allowed));
    if (set_count(&allowed) < 2) return TEST_SKIP;
    numa_tree(&allowed, &node);
    for (round = 0; round < 2; round++) {
        gpuk_ctx* c;
        gpuk_buffer b;
        up_threads = 3;
        up_no_numa = round == 1;
        c = up(numa_gpu, 1 << 20, 1, false);
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = BUF }, &b));
        CHECK(fake_threads_back_to(settled));
        nb = thread_ids(before, 256);
        round_trip(c, b, BUF, 0, 0, 4); /* starts the two workers; each copies a slice */
        CHECK(c->staging.crew.workers == 2);
        na = thread_ids(after, 256);
        for (i = 0, fresh = 0; i < na; i++) {
            for (k = 0; k < nb && before[k] != after[i]; k++) {}
            if (k < nb) continue;
            fresh++;
            CHECK(thread_cpus(after[i], &got) && set_same(&got, round == 0 ? &node : &allowed));
        }
        CHECK(fresh == 2);
        CHECK(own_cpus(&got) && set_same(&got, &allowed)); /* the calling thread untouched */
        CHECK_OK(gpuk_ctx_destroy(c));
        CHECK(fake_threads_back_to(settled));
        fake_gpuk_check_released();
    }
    up_threads = 1;
    up_no_numa = false;
    sysfs_drop();
    return 0;
#endif
}

int main(void) {
    RUN(test_sizes_around_pieces);
    RUN(test_what_stages);
    RUN(test_staging_allocation_fails);
    RUN(test_failure_mid_copy);
    RUN(test_staging_taken);
    RUN(test_join_fork);
    RUN(test_threads_sizes);
    RUN(test_threads_sleep_and_wake);
    RUN(test_thread_start_refused);
    RUN(test_fork_child);
    RUN(test_numa_cpulist);
    RUN(test_numa_node_lookup);
    RUN(test_numa_default_threads);
    RUN(test_numa_copy_threads_bound);
    return test_summary();
}
