/* tests/unit/unit_ipc.c - buffers and events shared between processes (gpuk_buffer_export,
   gpuk_buffer_import, gpuk_event_export, gpuk_event_import) on the fake driver, which plays
   both processes in one: the test changes the process id gpuk sees between export and import
   (GPUK__IPC_PROCESS_ID). Fresh random data through an imported buffer both ways against the
   host's copy, built-ins and copies taking it, its destroy closing the mapping and never
   freeing, the ctx destroy closing what is left; events exported, imported, waited for and
   synced; refusals before the driver (a handle of this process's own export, the memory
   pool's buffers, imported and host-visible ones, events not made interprocess, an event's
   handle for a buffer, bytes that are no handle, another layout, stale handles); 0 bytes; a
   platform without IPC, the driver's CUDA_ERROR_NOT_SUPPORTED and a driver without the entry
   points; every driver call of the sharing failed in turn. No GPU needed.
   cc -std=c99 -I../.. unit_ipc.c -ldl -lpthread */
#define _GNU_SOURCE
static long test_pid = 1000;
#define GPUK__IPC_PROCESS_ID() test_pid
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <stdlib.h>
#include <time.h>

/* splitmix64 seeded from the clock: fresh data every run */
static uint64_t rng_state;
static uint64_t rng(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static void fill_random(float* x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)(int32_t)(rng() >> 40) / 65536.0f;
}
static size_t count_wrong(const float* got, const float* want, size_t n) {
    size_t i, bad = 0;
    for (i = 0; i < n; i++) bad += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
    return bad;
}

/* Two ctxs on the fake's two devices stand for the two processes (each its own device, as two
   programs sharing one machine's GPUs): A exports as process 1000, B imports as 2000. */
static gpuk_ctx *A, *B;
static void two_processes(const fake_config* cfg) {
    fake_config c;
    if (cfg) c = *cfg;
    else memset(&c, 0, sizeof c);
    c.devices = 2;
    CHECK_OK(fake_gpuk_init(&c));
    CHECK_OK(gpuk_ctx_create(NULL, &A));
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &B));
    test_pid = 1000;
}
static void done(void) {
    CHECK_OK(gpuk_ctx_destroy(B)); /* the importer first: its mappings close before the frees */
    CHECK_OK(gpuk_ctx_destroy(A));
    fake_gpuk_check_released();
    test_pid = 1000;
}

/* Random floats written by the exporter are read through the import; new ones written through
   the import (a stream-less write, then a memset by the importer) are read by the exporter;
   a built-in and a device copy take the imported handle; its destroy closes the mapping and
   the export lives on. Outputs poisoned before each read. */
static int test_buffer_round_trip(void) {
    enum { N = 4099 };
    static float src[N], got[N], back[N];
    gpuk_buffer x, imp, other;
    gpuk_ipc_handle h;
    long opens = fake_ipc_opens, closes = fake_ipc_closes;
    size_t i;
    unsigned char probe[4];
    two_processes(NULL);
    fill_random(src, N);
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .data = GPUK_RANGE(src), .label = "shared" },
                                &x));
    CHECK_OK(gpuk_buffer_export(A, x, &h));
    test_pid = 2000;
    CHECK_OK(gpuk_buffer_import(B, &h, &imp));
    CHECK(fake_ipc_opens == opens + 1);
    CHECK(gpuk_buffer_size(B, imp) == sizeof src);
    CHECK(gpuk_buffer_devptr(B, imp) == gpuk_buffer_devptr(A, x));
    memset(got, 0xFF, sizeof got);
    CHECK_OK(gpuk_buffer_read(B, imp, 0, got, sizeof got));
    CHECK(count_wrong(got, src, N) == 0);
    /* the exporter's label names it in the importer's errors */
    CHECK_RESULT(gpuk_buffer_read(B, imp, sizeof src, probe, 4), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("buffer 'shared'");
    /* the importer writes, the exporter reads */
    fill_random(src, N);
    CHECK_OK(gpuk_buffer_write(B, imp, 0, src, sizeof src));
    memset(back, 0xFF, sizeof back);
    CHECK_OK(gpuk_buffer_read(A, x, 0, back, sizeof back));
    CHECK(count_wrong(back, src, N) == 0);
    CHECK_OK(gpuk_buffer_memset(B, GPUK_DEFAULT_STREAM, imp, 8, 0x3F800000u, 4, 10)); /* 1.0f */
    CHECK_OK(gpuk_ctx_sync(B));
    for (i = 2; i < 12; i++) src[i] = 1.0f;
    memset(back, 0xFF, sizeof back);
    CHECK_OK(gpuk_buffer_read(A, x, 0, back, sizeof back));
    CHECK(count_wrong(back, src, N) == 0);
    /* an ordinary handle for copies and the built-ins */
    CHECK_OK(gpuk_buffer_create(B, &(gpuk_buffer_desc){ .bytes = sizeof src }, &other));
    CHECK_OK(gpuk_buffer_copy(B, other, 0, imp, 0, sizeof src));
    memset(got, 0xFF, sizeof got);
    CHECK_OK(gpuk_buffer_read(B, other, 0, got, sizeof got));
    CHECK(count_wrong(got, src, N) == 0);
    CHECK_OK(gpuk_scale_f32(B, GPUK_DEFAULT_STREAM, gpuk_at(other, 0), 2.0f, gpuk_at(imp, 0), N));
    /* the destroy closes, never frees: the export and its data stay */
    CHECK_OK(gpuk_buffer_destroy(B, imp));
    CHECK(fake_ipc_closes == closes + 1 && fake_live_count(FK_IPCMEM) == 0);
    CHECK(fake_live_count(FK_ALLOC) == 2);
    memset(back, 0xFF, sizeof back);
    CHECK_OK(gpuk_buffer_read(A, x, 0, back, sizeof back));
    CHECK(count_wrong(back, src, N) == 0);
    /* and the destroyed import is refused like any destroyed buffer */
    CHECK_RESULT(gpuk_buffer_read(B, imp, 0, probe, 4), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_destroy(B, imp), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_buffer_size(B, imp) == 0 && gpuk_buffer_devptr(B, imp) == 0);
    /* a second import while a first is open, left for the ctx destroy to close */
    CHECK_OK(gpuk_buffer_import(B, &h, &imp));
    CHECK_OK(gpuk_buffer_import(B, &h, &other));
    done();
    CHECK(fake_ipc_closes == closes + 3);
    return TEST_PASS;
}

/* An interprocess event exported and imported: the importer's stream waits for it, it syncs
   and queries; it records no time; its destroy leaves the export. */
static int test_event_round_trip(void) {
    gpuk_event xe, plain, ie;
    gpuk_stream s;
    gpuk_ipc_handle h;
    bool done_flag = false;
    float ms = 1.0f;
    long opens = fake_ipc_event_opens;
    two_processes(NULL);
    CHECK_OK(gpuk_event_create(A, &(gpuk_event_desc){ .interprocess = true }, &xe));
    CHECK_OK(gpuk_event_create(A, NULL, &plain));
    CHECK_OK(gpuk_stream_create(B, NULL, &s));
    CHECK_OK(gpuk_event_record(A, GPUK_DEFAULT_STREAM, xe));
    CHECK_OK(gpuk_event_export(A, xe, &h));
    test_pid = 2000;
    CHECK_OK(gpuk_event_import(B, &h, &ie));
    CHECK(fake_ipc_event_opens == opens + 1);
    CHECK_OK(gpuk_stream_wait(B, s, ie));
    CHECK_OK(gpuk_event_sync(B, ie));
    CHECK_OK(gpuk_event_query(B, ie, &done_flag));
    CHECK(done_flag);
    CHECK_OK(gpuk_event_record(B, s, ie)); /* either process may record */
    CHECK_RESULT(gpuk_event_elapsed_ms(B, ie, ie, &ms), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("records no time");
    CHECK_RESULT(gpuk_event_elapsed_ms(A, xe, plain, &ms), GPUK_ERR_INVALID_ARG);
    CHECK(ms == 0.0f);
    /* an imported event is not exported again */
    {
        gpuk_ipc_handle again;
        memset(&again, 0x5A, sizeof again);
        CHECK_RESULT(gpuk_event_export(B, ie, &again), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("imported from another process");
        CHECK(again.bytes[0] == 0 && again.bytes[GPUK_IPC_HANDLE_BYTES - 1] == 0); /* zeroed */
    }
    CHECK_OK(gpuk_event_destroy(B, ie));
    CHECK(fake_live_count(FK_EVENT) == 2); /* the export and the plain one */
    CHECK_RESULT(gpuk_stream_wait(B, s, ie), GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_event_record(A, GPUK_DEFAULT_STREAM, xe)); /* the export lives on */
    CHECK_OK(gpuk_event_import(B, &h, &ie)); /* left for the ctx destroy */
    done();
    return TEST_PASS;
}

/* Refused with a clear text, before the driver sees anything. */
static int test_refusals(void) {
    gpuk_buffer x, pooled, imp, empty;
    gpuk_event plain, xe, ie;
    gpuk_stream s;
    gpuk_ipc_handle hb, he, bad;
    long calls;
    two_processes(NULL);
    CHECK_OK(gpuk_stream_create(A, NULL, &s));
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 256, .label = "x" }, &x));
    CHECK_OK(gpuk_buffer_create_async(A, s, &(gpuk_buffer_desc){ .bytes = 256, .label = "pooled" },
                                      &pooled));
    CHECK_OK(gpuk_event_create(A, &(gpuk_event_desc){ .no_timing = true }, &plain));
    CHECK_OK(gpuk_event_create(A, &(gpuk_event_desc){ .interprocess = true }, &xe));
    CHECK_OK(gpuk_buffer_export(A, x, &hb));
    CHECK_OK(gpuk_event_export(A, xe, &he));
    calls = fake.calls;
    /* the same process: the driver would answer CUDA_ERROR_INVALID_CONTEXT */
    CHECK_RESULT(gpuk_buffer_import(B, &hb, &imp), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("exported by this process");
    CHECK(imp.id == 0);
    CHECK_RESULT(gpuk_event_import(A, &he, &ie), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("exported by this process");
    CHECK(ie.id == 0);
    /* the memory pool's buffers: cuIpcGetMemHandle cannot share them */
    CHECK_RESULT(gpuk_buffer_export(A, pooled, &bad), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_create_async");
    CHECK_ERROR_MENTIONS("buffer 'pooled'");
    /* an event not made interprocess */
    CHECK_RESULT(gpuk_event_export(A, plain, &bad), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("interprocess");
    CHECK(fake.calls == calls);
    test_pid = 2000;
    calls = fake.calls;
    /* kinds crossed, bytes that are no handle, another layout */
    CHECK_RESULT(gpuk_buffer_import(B, &he, &imp), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("an event's, not a buffer's");
    CHECK_RESULT(gpuk_event_import(B, &hb, &ie), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("a buffer's, not an event's");
    memset(&bad, 0, sizeof bad);
    CHECK_RESULT(gpuk_buffer_import(B, &bad, &imp), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("no gpuk IPC handle");
    bad = hb;
    bad.bytes[4] ^= 0x7F; /* the layout's version */
    CHECK_RESULT(gpuk_buffer_import(B, &bad, &imp), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("layout");
    CHECK(fake.calls == calls);
    /* an imported buffer is not exported again, nor freed on a stream */
    CHECK_OK(gpuk_buffer_import(B, &hb, &imp));
    calls = fake.calls;
    CHECK_RESULT(gpuk_buffer_export(B, imp, &bad), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("imported from another process");
    CHECK_RESULT(gpuk_buffer_free_async(B, GPUK_DEFAULT_STREAM, imp), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_import");
    CHECK(gpuk_buffer_size(B, imp) == 256); /* still live after the refusal */
    CHECK(fake.calls == calls);
    CHECK_OK(gpuk_buffer_destroy(B, imp));
    /* 0 bytes: a handle of an empty buffer, no driver call either side */
    test_pid = 1000;
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 0 }, &empty));
    calls = fake.calls;
    CHECK_OK(gpuk_buffer_export(A, empty, &bad));
    test_pid = 2000;
    CHECK_OK(gpuk_buffer_import(B, &bad, &imp));
    CHECK(gpuk_buffer_size(B, imp) == 0 && gpuk_buffer_devptr(B, imp) == 0);
    CHECK(fake.calls == calls);
    CHECK_OK(gpuk_buffer_destroy(B, imp));
    /* the export gone: the driver's error, with the buffer named */
    test_pid = 1000;
    CHECK_OK(gpuk_buffer_destroy(A, x));
    test_pid = 2000;
    CHECK_RESULT(gpuk_buffer_import(B, &hb, &imp), (gpuk_result)1);
    CHECK_ERROR_MENTIONS("cuIpcOpenMemHandle");
    CHECK_ERROR_MENTIONS("'x'");
    CHECK(imp.id == 0);
    CHECK_OK(gpuk_event_destroy(A, xe));
    CHECK_RESULT(gpuk_event_import(B, &he, &ie), (gpuk_result)400);
    CHECK_ERROR_MENTIONS("cuIpcOpenEventHandle");
    CHECK_OK(gpuk_buffer_free_async(A, s, pooled));
    done();
    return TEST_PASS;
}

/* A platform without CUDA IPC: refused by the device's attributes before the entry points,
   or by the driver (801) with the same explanation; a driver without the entry points. */
static int test_platform_without_ipc(void) {
    fake_config cfg;
    gpuk_buffer x, imp;
    gpuk_event xe, ie;
    gpuk_ipc_handle h;
    memset(&cfg, 0, sizeof cfg);
    cfg.no_ipc = 1;
    two_processes(&cfg);
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 64 }, &x));
    CHECK_OK(gpuk_event_create(A, &(gpuk_event_desc){ .interprocess = true }, &xe));
    CHECK_RESULT(gpuk_buffer_export(A, x, &h), GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING");
    CHECK_ERROR_MENTIONS("WDDM");
    CHECK_RESULT(gpuk_event_export(A, xe, &h), GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED");
    done();

    memset(&cfg, 0, sizeof cfg);
    cfg.fail_name = "cuIpcGetMemHandle";
    cfg.fail_code = 801;
    two_processes(&cfg);
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 64 }, &x));
    CHECK_RESULT(gpuk_buffer_export(A, x, &h), (gpuk_result)801);
    CHECK_ERROR_MENTIONS("CUDA_ERROR_NOT_SUPPORTED (801)");
    CHECK_ERROR_MENTIONS("not available on this platform");
    {
        unsigned char zero[GPUK_IPC_HANDLE_BYTES] = { 0 };
        CHECK(memcmp(h.bytes, zero, sizeof zero) == 0); /* out zeroed on failure */
    }
    done();

    /* a driver older than CUDA 11.0 has no cuIpcOpenMemHandle_v2; one without the event's */
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 10020;
    two_processes(&cfg);
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 64 }, &x));
    CHECK_RESULT(gpuk_buffer_export(A, x, &h), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuIpcOpenMemHandle");
    CHECK_ERROR_MENTIONS("10.2");
    done();
    memset(&cfg, 0, sizeof cfg);
    cfg.missing[0] = "cuIpcOpenEventHandle";
    two_processes(&cfg);
    CHECK_OK(gpuk_event_create(A, &(gpuk_event_desc){ .interprocess = true }, &xe));
    CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 64 }, &x));
    CHECK_OK(gpuk_buffer_export(A, x, &h)); /* buffers need none of the event's */
    test_pid = 2000;
    CHECK_OK(gpuk_buffer_import(B, &h, &imp));
    CHECK_RESULT(gpuk_event_import(B, &h, &ie), GPUK_ERR_INVALID_ARG); /* a buffer's handle */
    test_pid = 1000;
    CHECK_RESULT(gpuk_event_export(A, xe, &h), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuIpcOpenEventHandle");
    done();
    return TEST_PASS;
}

/* Each driver call the sharing makes, failed in turn: the call returns that failure with
   text, a failed destroy keeps its handle for a retry, and no mapping or event is left
   behind (done() checks the fake got everything back). */
static int test_each_call_failed(void) {
    long n, total = 0, first = 0;
    int round;
    for (round = 0; round < 2; round++) {
        for (n = 1; round == 0 ? n == 1 : n <= total; n++) {
            fake_config cfg;
            gpuk_buffer x, imp = { 0 };
            gpuk_event xe, ie = { 0 };
            gpuk_ipc_handle hb, he;
            gpuk_result r = GPUK_OK;
            memset(&cfg, 0, sizeof cfg);
            two_processes(&cfg);
            CHECK_OK(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 64 }, &x));
            CHECK_OK(gpuk_event_create(A, &(gpuk_event_desc){ .interprocess = true }, &xe));
            /* the calls from here on are the ones failed in turn */
            first = fake.calls;
            fake.cfg.fail_at = round ? first + n : 0;
            fake.cfg.fail_code = 2;
            if (r == GPUK_OK) r = gpuk_buffer_export(A, x, &hb);
            if (r == GPUK_OK) r = gpuk_event_export(A, xe, &he);
            test_pid = 2000;
            if (r == GPUK_OK) r = gpuk_buffer_import(B, &hb, &imp);
            if (r == GPUK_OK) r = gpuk_event_import(B, &he, &ie);
            if (r == GPUK_OK) r = gpuk_buffer_destroy(B, imp);
            if (r == GPUK_OK) r = gpuk_event_destroy(B, ie);
            if (round == 0) {
                CHECK_OK(r);
                total = fake.calls - first;
                CHECK(total >= 10);
            } else if (strcmp(fake_last_failed_name, "cuCtxGetCurrent") != 0) {
                /* (a failed cuCtxGetCurrent is absorbed by design: gpuk sets the context) */
                CHECK_RESULT(r, (gpuk_result)2);
                CHECK(gpuk_last_error()[0] != 0);
                if (fake.first_failure_call != first + n)
                    fprintf(stderr, "  call %ld not failed\n", n);
                CHECK(fake.first_failure_call == first + n);
            }
            fake.cfg.fail_at = 0;
            /* a failed destroy keeps the handle: a retry releases it */
            if (imp.id && gpuk_buffer_size(B, imp) == 64) CHECK_OK(gpuk_buffer_destroy(B, imp));
            if (ie.id && gpuk_event_query(B, ie, &(bool){ false }) == GPUK_OK)
                CHECK_OK(gpuk_event_destroy(B, ie));
            done();
        }
    }
    printf("     %ld driver calls of the sharing, each failed once\n", total);
    return TEST_PASS;
}

int main(void) {
    rng_state = (uint64_t)time(NULL) * 0x2545F4914F6CDD1Dull;
    RUN(test_buffer_round_trip);
    RUN(test_event_round_trip);
    RUN(test_refusals);
    RUN(test_platform_without_ipc);
    RUN(test_each_call_failed);
    return test_summary();
}
