/* tests/unit/unit_host_memory.c - zero-copy (mapped host) and managed buffers on the fake driver:
   bytes through them both ways (the CPU's pointer, copies, memsets) against the data they were
   made with, built-in launches taking them as views, the device attributes gpuk reports, the
   prefetch and advice calls reaching the driver with the right range, device and stream, every
   call refusing them once destroyed, the refusals where the device or the driver cannot, failed
   driver calls leaving nothing behind, 0 bytes, and the ctx destroy freeing what is left.
   No GPU needed.
   cc -std=c99 -I../.. unit_host_memory.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <stdlib.h>
#include <time.h>

static gpuk_ctx* ctx;

/* Fresh bytes each run (main prints the seed). */
static uint64_t seed;
static void fill_random(unsigned char* p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        p[i] = (unsigned char)(seed >> 24);
    }
}

/* Every call that takes a buffer refuses b (destroyed) before the driver sees it. */
static void check_refused(gpuk_buffer b) {
    unsigned char host[8];
    gpuk_devptr p = 1;
    size_t n = 1;
    long calls = fake.calls;
    CHECK(gpuk_buffer_host_ptr(ctx, b) == NULL && gpuk_buffer_devptr(ctx, b) == 0);
    CHECK(gpuk_buffer_size(ctx, b) == 0);
    CHECK_RESULT(gpuk_buffer_write(ctx, b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_read(ctx, b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, b, 0, 0, 1, 8),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_array_resolve(ctx, gpuk_at(b, 0), 4, "x", &p, &n), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, b, 0, 8, 0),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_advise(ctx, b, 0, 8, GPUK_ADVICE_SET_READ_MOSTLY, 0),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_destroy(ctx, b), GPUK_ERR_INVALID_HANDLE);
    CHECK(fake.calls == calls);
}

/* The device's abilities in gpuk_device_info, as the driver answers them. */
static int test_device_info(void) {
    const gpuk_device_info* info;
    fake_config cfg;
    ctx = fake_gpuk_up(NULL);
    info = gpuk_ctx_device_info(ctx);
    CHECK(info->can_map_host_memory == 1 && info->managed_memory == 1);
    CHECK(info->concurrent_managed_access == 1 && info->pageable_memory_access == 0);
    fake_gpuk_down(ctx);
    memset(&cfg, 0, sizeof cfg);
    cfg.no_map_host = cfg.no_managed = cfg.no_concurrent_managed = 1;
    ctx = fake_gpuk_up(&cfg);
    info = gpuk_ctx_device_info(ctx);
    CHECK(info->can_map_host_memory == 0 && info->managed_memory == 0);
    CHECK(info->concurrent_managed_access == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A mapped buffer made with data: the CPU sees the data, the device address is the mapped
   one, copies and memsets move bytes seen by the CPU and the other way, built-ins take it. */
static int test_mapped_round_trip(void) {
    enum { N = 4096 };
    static unsigned char data[N], want[N], got[N];
    gpuk_buffer m, dev, other;
    unsigned char* host;
    gpuk_devptr p = 0;
    size_t n = 0;
    long launches;
    fill_random(data, N);
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .data = { data, N },
                                                                 .label = "frame" }, &m));
    host = (unsigned char*)gpuk_buffer_host_ptr(ctx, m);
    CHECK(host != NULL && gpuk_buffer_size(ctx, m) == N);
    if (!host) return TEST_PASS; /* failed above; the rest would only crash */
    CHECK(gpuk_buffer_devptr(ctx, m) == (gpuk_devptr)(uintptr_t)host); /* the fake maps 1:1 */
    CHECK(fake_live_count(FK_HOST) == 1 && fake_live_count(FK_ALLOC) == 0);
    CHECK(memcmp(host, data, N) == 0);
    /* the CPU writes, a copy out through the driver sees it */
    fill_random(want, N);
    memcpy(host, want, N);
    memset(got, 0x5A, N);
    CHECK_OK(gpuk_buffer_read(ctx, m, 0, got, N));
    CHECK(memcmp(got, want, N) == 0);
    /* a copy in and a memset, then the CPU reads them */
    fill_random(want, N);
    CHECK_OK(gpuk_buffer_write(ctx, m, 100, want, 1000));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, m, 2000, 0xAB, 1, 16));
    CHECK_OK(gpuk_ctx_sync(ctx));
    CHECK(memcmp(host + 100, want, 1000) == 0);
    {
        int i, bad = 0;
        for (i = 0; i < 16; i++) bad += host[2000 + i] != 0xAB;
        CHECK(bad == 0);
    }
    /* device to device, both ways with an ordinary buffer */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N }, &dev));
    CHECK_OK(gpuk_buffer_copy(ctx, dev, 0, m, 0, N));
    memset(got, 0, N);
    CHECK_OK(gpuk_buffer_read(ctx, dev, 0, got, N));
    CHECK(memcmp(got, host, N) == 0);
    /* a view of it resolves to the mapped address; a built-in takes it */
    CHECK_OK(gpuk_array_resolve(ctx, gpuk_at(m, 4), 4, "x", &p, &n));
    CHECK(p == (gpuk_devptr)(uintptr_t)host + 16 && n == N / 4 - 4);
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = N }, &other));
    launches = fake.launches;
    CHECK_OK(gpuk_add_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(other, 0), gpuk_at(m, 0),
                          gpuk_at(dev, 0), N / 4));
    CHECK(fake.launches == launches + 1);
    {   /* its arguments: out, a, b as the mapped and device addresses */
        gpuk_devptr out = gpuk_buffer_devptr(ctx, other), a = gpuk_buffer_devptr(ctx, m);
        CHECK(memcmp(fake.last_args[0], &out, sizeof out) == 0);
        CHECK(memcmp(fake.last_args[1], &a, sizeof a) == 0);
    }
    /* not on a stream: refused by the stream-ordered free, kept */
    CHECK_RESULT(gpuk_buffer_free_async(ctx, GPUK_DEFAULT_STREAM, m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_create_mapped");
    CHECK(gpuk_buffer_host_ptr(ctx, m) == host);
    /* device memory has no CPU pointer */
    CHECK(gpuk_buffer_host_ptr(ctx, dev) == NULL);
    CHECK_OK(gpuk_buffer_destroy(ctx, m));
    CHECK(fake_live_count(FK_HOST) == 1); /* other's */
    check_refused(m);
    CHECK_OK(gpuk_buffer_destroy(ctx, other));
    CHECK_OK(gpuk_buffer_destroy(ctx, dev));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The caller's memory registered and mapped: the CPU pointer is the caller's, data is placed
   in it (memmove: data may be inside it), the destroy unregisters and leaves it the caller's. */
static int test_mapped_registered(void) {
    enum { N = 8192 };
    static unsigned char mine[N], want[N], got[N];
    gpuk_buffer r, again;
    fill_random(mine, N);
    memcpy(want, mine + 64, 512);
    memcpy(want + 512, mine + 512, N - 512);
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = N, .host_ptr = mine,
                                                                 .data = { mine + 64, 512 } }, &r));
    CHECK(gpuk_buffer_host_ptr(ctx, r) == mine);
    CHECK(fake_live_count(FK_REGISTERED) == 1);
    CHECK(memcmp(mine, want, N) == 0);
    memset(got, 0, N);
    CHECK_OK(gpuk_buffer_read(ctx, r, 0, got, N));
    CHECK(memcmp(got, want, N) == 0);
    /* registering it twice: the driver's 712, the handle stays zero */
    again.id = 7;
    CHECK_RESULT(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = N,
                                                                     .host_ptr = mine }, &again),
                 712);
    CHECK(again.id == 0);
    CHECK_ERROR_MENTIONS("cuMemHostRegister");
    CHECK_OK(gpuk_buffer_destroy(ctx, r));
    CHECK(fake_live_count(FK_REGISTERED) == 0);
    check_refused(r);
    mine[0] ^= 1; /* still the caller's, writable */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A managed buffer: data uploaded at create (by the driver), one address for the CPU and the
   device; prefetch both ways on a stream and every advice reach the driver as asked. */
static int test_managed(void) {
    enum { N = 6000 };
    static unsigned char data[N], got[N];
    gpuk_buffer g, plain;
    gpuk_stream s;
    unsigned char* host;
    int a;
    fill_random(data, N);
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &plain));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = N, .data = { data, N },
                                                                  .label = "shared" }, &g));
    host = (unsigned char*)gpuk_buffer_host_ptr(ctx, g);
    CHECK(host != NULL && (gpuk_devptr)(uintptr_t)host == gpuk_buffer_devptr(ctx, g));
    if (!host) return TEST_PASS; /* failed above; the rest would only crash */
    CHECK(fake_live_count(FK_MANAGED) == 1);
    CHECK(memcmp(host, data, N) == 0);
    memset(got, 0, N);
    CHECK_OK(gpuk_buffer_read(ctx, g, 0, got, N));
    CHECK(memcmp(got, data, N) == 0);
    /* prefetch: to the device on s, to the host on the default stream */
    CHECK_OK(gpuk_buffer_prefetch(ctx, s, g, 0, N, 0));
    CHECK(fake.prefetches == 1 && fake.last_prefetch_device == 0);
    CHECK(fake.last_prefetch_stream == gpuk_stream_native(ctx, s));
    CHECK_OK(gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, g, 4096, N - 4096, GPUK_DEVICE_HOST));
    CHECK(fake.prefetches == 2 && fake.last_prefetch_device == -1);
    CHECK_OK(gpuk_buffer_prefetch(ctx, s, g, 0, 0, 0)); /* 0 bytes: nothing */
    CHECK(fake.prefetches == 2);
    /* every advice, each to the device and to the host */
    for (a = GPUK_ADVICE_SET_READ_MOSTLY; a < GPUK_ADVICE_NUM; a++) {
        long before = fake.advices;
        CHECK_OK(gpuk_buffer_advise(ctx, g, 0, N, (gpuk_advice)a, 0));
        CHECK(fake.advices == before + 1 && fake.last_advice == (unsigned)a);
        CHECK_OK(gpuk_buffer_advise(ctx, g, 128, 256, (gpuk_advice)a, GPUK_DEVICE_HOST));
        CHECK(fake.advices == before + 2);
        if (a >= GPUK_ADVICE_SET_PREFERRED_LOCATION) CHECK(fake.last_advice_device == -1);
    }
    /* bad ranges, advice, devices and buffers */
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, g, 1, N, 0), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_advise(ctx, g, N, 1, GPUK_ADVICE_SET_ACCESSED_BY, 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_advise(ctx, g, 0, N, GPUK_ADVICE_DEFAULT, 0), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_advise(ctx, g, 0, N, GPUK_ADVICE_NUM, 0), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, g, 0, N, -2), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("GPUK_DEVICE_HOST");
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, g, 0, N, 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("does not exist");
    CHECK_RESULT(gpuk_buffer_advise(ctx, g, 0, N, GPUK_ADVICE_SET_PREFERRED_LOCATION, 9),
                 GPUK_ERR_INVALID_ARG);
    /* read-mostly ignores the device, as the driver does */
    CHECK_OK(gpuk_buffer_advise(ctx, g, 0, N, GPUK_ADVICE_SET_READ_MOSTLY, 9));
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, plain, 0, 64, 0), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not managed memory");
    CHECK_RESULT(gpuk_buffer_advise(ctx, plain, 0, 64, GPUK_ADVICE_SET_READ_MOSTLY, 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, g), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_create_managed");
    CHECK(gpuk_buffer_host_ptr(ctx, g) == host);
    CHECK_OK(gpuk_buffer_destroy(ctx, g));
    CHECK(fake_live_count(FK_MANAGED) == 0);
    check_refused(g);
    CHECK_OK(gpuk_buffer_destroy(ctx, plain));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A device that cannot: refused with the reason, before the driver. */
static int test_unsupported_device(void) {
    fake_config cfg;
    gpuk_buffer b;
    long calls;
    memset(&cfg, 0, sizeof cfg);
    cfg.no_map_host = cfg.no_managed = 1;
    ctx = fake_gpuk_up(&cfg);
    calls = fake.calls;
    b.id = 9;
    CHECK_RESULT(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = 64 }, &b),
                 GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("CAN_MAP_HOST_MEMORY");
    CHECK(b.id == 0);
    CHECK_RESULT(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &b),
                 GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("MANAGED_MEMORY");
    CHECK(fake.calls == calls);
    fake_gpuk_down(ctx);
    /* managed memory without concurrent access: made and advised, not prefetched */
    memset(&cfg, 0, sizeof cfg);
    cfg.no_concurrent_managed = 1;
    ctx = fake_gpuk_up(&cfg);
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    calls = fake.calls;
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, b, 0, 64, 0),
                 GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("CONCURRENT_MANAGED_ACCESS");
    CHECK(fake.calls == calls);
    CHECK_OK(gpuk_buffer_advise(ctx, b, 0, 64, GPUK_ADVICE_SET_PREFERRED_LOCATION, 0));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A driver without an entry point: GPUK_ERR_DRIVER_TOO_OLD naming it, no driver call. */
static int test_driver_too_old(void) {
    static const char* const names[] = { "cuMemHostGetDevicePointer", "cuMemAllocManaged",
                                         "cuMemPrefetchAsync", "cuMemAdvise" };
    size_t i;
    for (i = 0; i < 4; i++) {
        fake_config cfg;
        gpuk_buffer b = { 0 }, g = { 0 };
        long calls;
        memset(&cfg, 0, sizeof cfg);
        cfg.missing[0] = names[i];
        ctx = fake_gpuk_up(&cfg);
        if (i >= 2)
            CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &g));
        calls = fake.calls;
        if (i == 0)
            CHECK_RESULT(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = 64 }, &b),
                         GPUK_ERR_DRIVER_TOO_OLD);
        else if (i == 1)
            CHECK_RESULT(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &b),
                         GPUK_ERR_DRIVER_TOO_OLD);
        else if (i == 2)
            CHECK_RESULT(gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, g, 0, 64, 0),
                         GPUK_ERR_DRIVER_TOO_OLD);
        else
            CHECK_RESULT(gpuk_buffer_advise(ctx, g, 0, 64, GPUK_ADVICE_SET_ACCESSED_BY, 0),
                         GPUK_ERR_DRIVER_TOO_OLD);
        CHECK_ERROR_MENTIONS(names[i]);
        CHECK(fake.calls == calls && b.id == 0);
        if (g.id) CHECK_OK(gpuk_buffer_destroy(ctx, g));
        fake_gpuk_down(ctx);
    }
    return TEST_PASS;
}

/* Each new driver call failing, in each form that makes it: its code and name come back,
   the handle stays zero, nothing is left with the driver (the host memory of a failed mapping
   is given back), and the next try works. */
enum { MAP_ALLOC, MAP_REGISTER, MANAGED, PREFETCH_DEV, PREFETCH_HOST, ADVISE_DEV, ADVISE_HOST };
static int test_driver_failures(void) {
    static const struct { const char* name; int form; } cases[] = {
        { "cuMemHostAlloc", MAP_ALLOC }, { "cuMemHostRegister", MAP_REGISTER },
        { "cuMemHostGetDevicePointer", MAP_ALLOC }, { "cuMemHostGetDevicePointer", MAP_REGISTER },
        { "cuMemAllocManaged", MANAGED }, { "cuMemcpyHtoDAsync", MANAGED },
        { "cuMemPrefetchAsync", PREFETCH_DEV }, { "cuMemPrefetchAsync", PREFETCH_HOST },
        { "cuMemAdvise", ADVISE_DEV }, { "cuMemAdvise", ADVISE_HOST },
    };
    static unsigned char mine[256], data[256];
    size_t i;
    fill_random(data, sizeof data);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int form = cases[i].form;
        fake_config cfg;
        gpuk_buffer b = { 5 }, g = { 0 };
        gpuk_result r;
        memset(&cfg, 0, sizeof cfg);
        cfg.fail_name = cases[i].name;
        cfg.fail_code = 2;
        ctx = fake_gpuk_up(&cfg);
        if (form == MAP_ALLOC || form == MAP_REGISTER) {
            gpuk_pinned_desc d;
            memset(&d, 0, sizeof d);
            d.bytes = 256;
            d.host_ptr = form == MAP_REGISTER ? mine : NULL;
            d.data.ptr = data;
            d.data.bytes = 256;
            r = gpuk_buffer_create_mapped(ctx, &d, &b);
        } else if (form == MANAGED) {
            r = gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .data = { data, 256 } }, &b);
        } else {
            const int where = form == PREFETCH_HOST || form == ADVISE_HOST ? GPUK_DEVICE_HOST : 0;
            b.id = 0;
            CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &g));
            r = form <= PREFETCH_HOST
                    ? gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, g, 0, 256, where)
                    : gpuk_buffer_advise(ctx, g, 0, 256, GPUK_ADVICE_SET_ACCESSED_BY, where);
        }
        CHECK_RESULT(r, 2);
        CHECK_ERROR_MENTIONS(cases[i].name);
        CHECK(b.id == 0 && fake.failed_calls == 1);
        CHECK(fake_live_count(FK_HOST) == 0 && fake_live_count(FK_REGISTERED) == 0);
        CHECK(fake_live_count(FK_MANAGED) == (g.id ? 1 : 0));
        /* the next try works (fail_name fails every call to it: lift it) */
        fake.cfg.fail_name = NULL;
        if (form == MAP_ALLOC || form == MAP_REGISTER) {
            CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){
                .bytes = 256, .host_ptr = form == MAP_REGISTER ? mine : NULL }, &b));
            CHECK_OK(gpuk_buffer_destroy(ctx, b));
        } else if (form == MANAGED) {
            CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .data = { data, 256 } },
                                                &b));
            CHECK(gpuk_buffer_host_ptr(ctx, b) &&
                  memcmp(gpuk_buffer_host_ptr(ctx, b), data, 256) == 0);
            CHECK_OK(gpuk_buffer_destroy(ctx, b));
        }
        if (g.id) CHECK_OK(gpuk_buffer_destroy(ctx, g));
        fake_gpuk_down(ctx);
    }
    return TEST_PASS;
}

/* 0 bytes: a valid empty buffer with no memory and no driver call, as gpuk_buffer_create. */
static int test_zero_bytes(void) {
    gpuk_buffer m, g;
    long calls;
    ctx = fake_gpuk_up(NULL);
    calls = fake.calls;
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .label = "none" }, &m));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 0 }, &g));
    CHECK(fake.calls == calls);
    CHECK(m.id && g.id && gpuk_buffer_host_ptr(ctx, m) == NULL && gpuk_buffer_devptr(ctx, g) == 0);
    CHECK_OK(gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, g, 0, 0, 0));
    CHECK_OK(gpuk_buffer_advise(ctx, g, 0, 0, GPUK_ADVICE_SET_READ_MOSTLY, 0));
    CHECK(fake.calls == calls);
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, GPUK_DEFAULT_STREAM, g, 0, 1, 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_OK(gpuk_buffer_destroy(ctx, m));
    CHECK_OK(gpuk_buffer_destroy(ctx, g));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A failed destroy keeps the handle for another try; the ctx destroy frees what is left
   (mapped, registered and managed), and the driver gets every block back. */
static int test_destroy_and_ctx_destroy(void) {
    static unsigned char mine[512];
    gpuk_buffer m, r, g;
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = 512 }, &m));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = 512, .host_ptr = mine },
                                       &r));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 512 }, &g));
    fake.cfg.fail_name = "cuMemFreeHost";
    CHECK_RESULT(gpuk_buffer_destroy(ctx, m), 1);
    CHECK_ERROR_MENTIONS("cuMemFreeHost");
    fake.cfg.fail_name = NULL;
    CHECK(gpuk_buffer_host_ptr(ctx, m) != NULL);
    CHECK_OK(gpuk_buffer_destroy(ctx, m));
    CHECK(fake_live_count(FK_HOST) == 0 && fake_live_count(FK_REGISTERED) == 1);
    CHECK(fake_live_count(FK_MANAGED) == 1);
    fake_gpuk_down(ctx); /* r and g: freed by the ctx destroy */
    return TEST_PASS;
}

int main(void) {
    seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull | 1u;
    printf("seed %llu\n", (unsigned long long)seed);
    RUN(test_device_info);
    RUN(test_mapped_round_trip);
    RUN(test_mapped_registered);
    RUN(test_managed);
    RUN(test_unsupported_device);
    RUN(test_driver_too_old);
    RUN(test_driver_failures);
    RUN(test_zero_bytes);
    RUN(test_destroy_and_ctx_destroy);
    return test_summary();
}
