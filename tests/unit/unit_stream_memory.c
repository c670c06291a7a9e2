/* tests/unit/unit_stream_memory.c - buffers made and freed on a stream (gpuk_buffer_create_async,
   gpuk_buffer_free_async) and the memory pool's release threshold and trim, on the fake driver:
   data through such buffers byte for byte, every call refusing the handle after its free, the
   destroy rule (in order on the stream it was made on, refused once that stream is gone), 0
   bytes, a driver without memory pools and a device without them, captures (made and freed in
   the graph and replayed, a buffer from outside refused with the capture intact, one left
   allocated at the end), failed and sticky driver calls, other ctxs, and the ctx destroy
   freeing what is left. No GPU needed.
   cc -std=c99 -I../.. unit_stream_memory.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"

static gpuk_ctx* ctx;

/* Every call that takes a buffer refuses b (a freed handle) before the driver sees it. */
static void check_refused(gpuk_buffer b, gpuk_stream s, gpuk_buffer other) {
    unsigned char host[8];
    gpuk_devptr p = 1;
    size_t n = 1;
    long calls = fake.calls;
    CHECK(gpuk_buffer_size(ctx, b) == 0 && gpuk_buffer_devptr(ctx, b) == 0);
    CHECK_RESULT(gpuk_buffer_write_async(ctx, s, b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_read_async(ctx, s, b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_write(ctx, b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_read(ctx, b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_copy_async(ctx, s, other, 0, b, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_copy_async(ctx, s, b, 0, other, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_memset(ctx, s, b, 0, 0, 1, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_array_resolve(ctx, gpuk_at(b, 0), 4, "x", &p, &n), GPUK_ERR_INVALID_HANDLE);
    CHECK(p == 0 && n == 0);
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, b), GPUK_ERR_INVALID_HANDLE); /* a double free */
    CHECK_ERROR_MENTIONS("destroyed or belongs to another ctx");
    CHECK_RESULT(gpuk_buffer_destroy(ctx, b), GPUK_ERR_INVALID_HANDLE);
    CHECK(fake.calls == calls);
}

/* Bytes in through one buffer made on a stream, copied into another, back out: byte for byte;
   then every call refuses the freed handles, and the driver got each block back on the
   stream it was freed on. */
static int test_round_trip(void) {
    gpuk_stream s;
    gpuk_buffer a, b, plain;
    gpuk_pinned hin, hout;
    unsigned char *in, *out;
    int i, bad = 0;
    ctx = fake_gpuk_up(NULL);
    CHECK(gpuk_features() & GPUK_FEATURE_STREAM_MEMORY);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 1000 }, &hin));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 1000 }, &hout));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &plain));
    in = (unsigned char*)gpuk_pinned_ptr(ctx, hin);
    out = (unsigned char*)gpuk_pinned_ptr(ctx, hout);
    for (i = 0; i < 1000; i++) in[i] = (unsigned char)(i * 37 + 11);
    memset(out, 0, 1000);
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 1000, .label = "tmp" }, &a));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 1000 }, &b));
    CHECK(fake.async_allocs == 2 && fake.mem_in_use == 2000 + 64);
    CHECK(gpuk_buffer_size(ctx, a) == 1000 && gpuk_buffer_devptr(ctx, a) != 0);
    CHECK_OK(gpuk_buffer_write_async(ctx, s, a, 0, in, 1000));
    CHECK_OK(gpuk_buffer_memset(ctx, s, b, 0, 0xEE, 1, 1000));
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, b, 100, a, 0, 800));
    CHECK_OK(gpuk_buffer_read_async(ctx, s, b, 0, out, 1000));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    for (i = 0; i < 1000; i++) bad += out[i] != (i >= 100 && i < 900 ? in[i - 100] : 0xEE);
    CHECK(bad == 0);
    /* a stream-less read is ordered after the stream's work like any buffer's */
    memset(out, 0, 1000);
    CHECK_OK(gpuk_buffer_read(ctx, a, 0, out, 1000));
    CHECK(memcmp(out, in, 1000) == 0);
    CHECK_OK(gpuk_buffer_free_async(ctx, s, a));
    CHECK(fake.async_frees == 1 && fake.last_free_stream == gpuk_stream_native(ctx, s));
    check_refused(a, s, plain);
    /* gpuk_buffer_destroy frees it in order on the stream it was made on */
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    CHECK(fake.async_frees == 2 && fake.last_free_stream == gpuk_stream_native(ctx, s));
    check_refused(b, GPUK_DEFAULT_STREAM, plain);
    CHECK(fake.mem_in_use == 64);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The destroy rule and the buffers free_async takes. */
static int test_destroy_and_free_rules(void) {
    gpuk_stream s, gone;
    gpuk_buffer c, d, plain, wrapped;
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &gone));
    /* made on a stream destroyed since: the destroy cannot free it in order there */
    CHECK_OK(gpuk_buffer_create_async(ctx, gone, &(gpuk_buffer_desc){ .bytes = 64, .label = "c" }, &c));
    CHECK_OK(gpuk_stream_destroy(ctx, gone));
    CHECK_RESULT(gpuk_buffer_destroy(ctx, c), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("buffer 'c'");
    CHECK_ERROR_MENTIONS("gpuk_buffer_free_async");
    CHECK(gpuk_buffer_size(ctx, c) == 64); /* still there */
    CHECK_OK(gpuk_buffer_free_async(ctx, GPUK_DEFAULT_STREAM, c));
    CHECK(fake.last_free_stream == gpuk_stream_native(ctx, GPUK_DEFAULT_STREAM));
    /* on the default stream, destroyed there; freed on another stream than its own */
    CHECK_OK(gpuk_buffer_create_async(ctx, GPUK_DEFAULT_STREAM, &(gpuk_buffer_desc){ .bytes = 64 }, &d));
    CHECK_OK(gpuk_buffer_destroy(ctx, d));
    CHECK(fake.last_free_stream == gpuk_stream_native(ctx, GPUK_DEFAULT_STREAM));
    CHECK_OK(gpuk_buffer_create_async(ctx, GPUK_DEFAULT_STREAM, &(gpuk_buffer_desc){ .bytes = 64 }, &d));
    CHECK_OK(gpuk_buffer_free_async(ctx, s, d));
    CHECK(fake.last_free_stream == gpuk_stream_native(ctx, s));
    /* free_async takes only buffers made on a stream; the others stay as they were */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64, .label = "plain" }, &plain));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64, .wrap = gpuk_buffer_devptr(ctx, plain) }, &wrapped));
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, plain), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_destroy");
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, wrapped), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("wraps memory gpuk does not own");
    CHECK(gpuk_buffer_size(ctx, plain) == 64 && gpuk_buffer_size(ctx, wrapped) == 64);
    CHECK(fake.async_frees == 3);
    CHECK_OK(gpuk_buffer_destroy(ctx, wrapped));
    CHECK_OK(gpuk_buffer_destroy(ctx, plain));
    /* a stale or foreign stream: refused, the buffer kept */
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &d));
    CHECK_RESULT(gpuk_buffer_free_async(ctx, gone, d), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_free_async(ctx, (gpuk_stream){ 12345u }, d), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_buffer_size(ctx, d) == 64);
    CHECK_OK(gpuk_buffer_free_async(ctx, s, d));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* 0 bytes: a valid empty handle, as gpuk_buffer_create gives, with no driver allocation or
   free; the desc's other members refused. */
static int test_zero_bytes_and_desc(void) {
    gpuk_stream s;
    gpuk_buffer e, x;
    unsigned char host[8] = { 0 };
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 0, .label = "empty" }, &e));
    CHECK(e.id != 0 && gpuk_buffer_devptr(ctx, e) == 0 && gpuk_buffer_size(ctx, e) == 0);
    CHECK(fake.async_allocs == 0);
    CHECK_OK(gpuk_buffer_write_async(ctx, s, e, 0, host, 0));
    CHECK_RESULT(gpuk_buffer_write_async(ctx, s, e, 0, host, 1), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_OK(gpuk_buffer_free_async(ctx, s, e));
    CHECK(fake.async_frees == 0);
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, e), GPUK_ERR_INVALID_HANDLE);
    x.id = 77;
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, NULL, &x), GPUK_ERR_INVALID_ARG);
    CHECK(x.id == 0);
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 8, .data = GPUK_RANGE(host) }, &x),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_write_async");
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 8, .wrap = 4096 }, &x),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.wrap");
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 8, ._end_canary = 1 }, &x),
                 GPUK_ERR_INVALID_ARG);
    CHECK(fake.async_allocs == 0 && x.id == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A driver before CUDA 11.2 (no entry points) and a device without memory pools: every call
   refused with its reason, 0 bytes too; ordinary buffers unaffected. */
static int test_no_memory_pools(void) {
    fake_config cfg;
    gpuk_stream s;
    gpuk_buffer b, plain;
    uint64_t th = 5;
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 11010;
    ctx = fake_gpuk_up(&cfg);
    CHECK(!(gpuk_features() & GPUK_FEATURE_STREAM_MEMORY));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    b.id = 9;
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &b), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("CUDA 11.2");
    CHECK_ERROR_MENTIONS("lacks cuMemAllocAsync");
    CHECK(b.id == 0);
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 0 }, &b), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_RESULT(gpuk_mempool_set_release_threshold(ctx, 1), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_RESULT(gpuk_mempool_get_release_threshold(ctx, &th), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK(th == 0);
    CHECK_RESULT(gpuk_mempool_trim(ctx, 0), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &plain));
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, plain), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_buffer_destroy(ctx, plain));
    fake_gpuk_down(ctx);

    memset(&cfg, 0, sizeof cfg);
    cfg.no_mempools = 1;
    ctx = fake_gpuk_up(&cfg);
    CHECK(gpuk_features() & GPUK_FEATURE_STREAM_MEMORY);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &b), GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("has no memory pools");
    CHECK_ERROR_MENTIONS("gpuk_buffer_create");
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 0 }, &b), GPUK_ERR_UNSUPPORTED);
    CHECK_RESULT(gpuk_mempool_trim(ctx, 0), GPUK_ERR_UNSUPPORTED);
    CHECK_RESULT(gpuk_mempool_set_release_threshold(ctx, 1), GPUK_ERR_UNSUPPORTED);
    CHECK(b.id == 0 && fake.async_allocs == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The threshold and the trim reach the pool of the ctx's own device. */
static int test_threshold_and_trim(void) {
    fake_config cfg;
    gpuk_ctx* other = NULL;
    uint64_t th = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    ctx = fake_gpuk_up(&cfg);
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &other));
    CHECK_OK(gpuk_mempool_get_release_threshold(ctx, &th));
    CHECK(th == 0); /* the driver's default */
    CHECK_OK(gpuk_mempool_set_release_threshold(ctx, UINT64_MAX));
    CHECK_OK(gpuk_mempool_get_release_threshold(ctx, &th));
    CHECK(th == UINT64_MAX && fake.pool_threshold[0] == UINT64_MAX && fake.pool_threshold[1] == 0);
    CHECK_OK(gpuk_mempool_set_release_threshold(other, (uint64_t)77 << 20));
    CHECK(fake.pool_threshold[1] == (uint64_t)77 << 20 && fake.pool_threshold[0] == UINT64_MAX);
    CHECK_OK(gpuk_mempool_trim(ctx, 12345));
    CHECK(fake.pool_trims == 1 && fake.last_trim_keep == 12345);
    CHECK_RESULT(gpuk_mempool_get_release_threshold(ctx, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_mempool_trim(NULL, 0), GPUK_ERR_INVALID_ARG);
    /* a failing pool call: its text, nothing kept */
    fake.cfg.fail_name = "cuMemPoolGetAttribute";
    th = 3;
    CHECK_RESULT(gpuk_mempool_get_release_threshold(ctx, &th), 1);
    CHECK_ERROR_MENTIONS("cuMemPoolGetAttribute");
    CHECK(th == 0);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_ctx_destroy(other));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* In a capture: a buffer made and freed there is the graph's (each launch moves the bytes
   through it again, its handle gone after the captured free); one from outside is refused with
   the capture intact; one left allocated at the end names the graph's memory, freed after a
   launch; another left never launched is freed by the ctx destroy. */
static int test_capture(void) {
    gpuk_stream s;
    gpuk_buffer g, out, outside, left, left2;
    gpuk_pinned hin, hout;
    gpuk_graph graph, graph2;
    unsigned char *in, *res;
    int rep, i, bad = 0;
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &out));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 256 }, &hin));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 256 }, &hout));
    in = (unsigned char*)gpuk_pinned_ptr(ctx, hin);
    res = (unsigned char*)gpuk_pinned_ptr(ctx, hout);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 256, .label = "g" }, &g));
    CHECK(gpuk_buffer_devptr(ctx, g) != 0 && fake_live_count(FK_GALLOC) == 1 && fake.mem_in_use == 256);
    CHECK_OK(gpuk_buffer_write_async(ctx, s, g, 0, in, 256));
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, out, 0, g, 0, 256));
    CHECK_OK(gpuk_buffer_free_async(ctx, s, g));
    CHECK(gpuk_buffer_size(ctx, g) == 0);
    CHECK_RESULT(gpuk_buffer_copy_async(ctx, s, out, 0, g, 0, 256), GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_buffer_read_async(ctx, s, out, 0, res, 256));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph));
    for (rep = 0; rep < 3; rep++) {
        for (i = 0; i < 256; i++) in[i] = (unsigned char)(i * 7 + rep * 31 + 3);
        memset(res, 0, 256);
        CHECK_OK(gpuk_buffer_memset(ctx, s, out, 0, 0x5A, 1, 256)); /* poisoned between launches */
        CHECK_OK(gpuk_graph_launch(ctx, s, graph));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        bad += memcmp(in, res, 256) != 0;
    }
    CHECK(bad == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, graph));

    /* made outside the capture: its free (or destroy) inside is refused, the capture intact */
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64, .label = "outside" }, &outside));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, outside), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("buffer 'outside' was not made in a capture");
    CHECK_RESULT(gpuk_buffer_destroy(ctx, outside), GPUK_ERR_CAPTURING);
    CHECK(gpuk_buffer_size(ctx, outside) == 64 && fake.protocol_errors == 0);
    CHECK_OK(gpuk_buffer_memset(ctx, s, outside, 0, 1, 1, 64)); /* the capture goes on */
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph2));
    CHECK_OK(gpuk_graph_destroy(ctx, graph2));
    CHECK_OK(gpuk_buffer_free_async(ctx, s, outside));

    /* left allocated at the end: the handle names the graph's memory, freed after a launch */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64, .label = "left" }, &left));
    CHECK_OK(gpuk_buffer_memset(ctx, s, left, 0, 0x33, 1, 64));
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, out, 0, left, 0, 64));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph));
    CHECK(gpuk_buffer_size(ctx, left) == 64);
    CHECK_OK(gpuk_buffer_memset(ctx, s, out, 0, 0, 1, 256));
    CHECK_OK(gpuk_graph_launch(ctx, s, graph));
    CHECK_OK(gpuk_buffer_free_async(ctx, s, left));
    CHECK_OK(gpuk_buffer_read(ctx, out, 0, res, 64));
    for (i = 0; i < 64; i++) bad += res[i] != 0x33;
    CHECK(bad == 0);
    CHECK(gpuk_buffer_size(ctx, left) == 0);
    /* and one never launched: left to the ctx destroy, which frees what exists */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 32 }, &left2));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &graph2));
    CHECK(fake.protocol_errors == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A failed allocation gives its slot back and leaves nothing; a failed free keeps the handle
   for another try; a sticky fault in the free frees the handle without another driver call. */
static int test_failures(void) {
    gpuk_ctx_desc small;
    gpuk_stream s;
    gpuk_buffer b, c, full;
    int i;
    memset(&small, 0, sizeof small);
    small.max_buffers = 2;
    ctx = fake_gpuk_up_desc(NULL, &small);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    fake.cfg.fail_name = "cuMemAllocAsync";
    fake.cfg.fail_code = 2;
    for (i = 0; i < 3; i++) { /* more tries than slots: each failure gave its slot back */
        b.id = 1;
        CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64, .label = "big" }, &b), 2);
        CHECK_ERROR_MENTIONS("cuMemAllocAsync");
        CHECK_ERROR_MENTIONS("64 bytes for buffer 'big'");
        CHECK(b.id == 0);
    }
    fake.cfg.fail_name = "cuStreamIsCapturing";
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &b), 2);
    fake.cfg.fail_name = NULL;
    CHECK(fake.mem_in_use == 0 && fake.async_allocs == 0);
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = ((size_t)1 << 30) + 1 }, &b), 2);
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &c));
    CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &full), GPUK_ERR_POOL_FULL);
    fake.cfg.fail_name = "cuMemFreeAsync";
    fake.cfg.fail_code = 1;
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, b), 1);
    CHECK_ERROR_MENTIONS("cuMemFreeAsync");
    CHECK_RESULT(gpuk_buffer_destroy(ctx, b), 1);
    fake.cfg.fail_name = NULL;
    CHECK(gpuk_buffer_size(ctx, b) == 64);
    CHECK_OK(gpuk_buffer_free_async(ctx, s, b));
    /* a sticky fault: the handle is freed all the same, and no driver call follows */
    fake.cfg.fail_name = "cuMemFreeAsync";
    fake.cfg.fail_code = 700;
    fake.cfg.sticky = 1;
    CHECK_RESULT(gpuk_buffer_free_async(ctx, s, c), 700);
    {
        long calls = fake.calls;
        CHECK(gpuk_buffer_size(ctx, c) == 0);
        CHECK_RESULT(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &b), 700);
        CHECK_RESULT(gpuk_mempool_trim(ctx, 0), 700);
        CHECK(fake.calls == calls);
    }
    CHECK_RESULT(gpuk_ctx_destroy(ctx), 700);
    CHECK_OK(gpuk_shutdown());
    return TEST_PASS;
}

/* Handles of another ctx: the buffer, the stream. */
static int test_other_ctx(void) {
    fake_config cfg;
    gpuk_ctx* other = NULL;
    gpuk_stream s, t;
    gpuk_buffer b, c;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    ctx = fake_gpuk_up(&cfg);
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &other));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_stream_create(other, NULL, &t));
    CHECK_OK(gpuk_buffer_create_async(ctx, s, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    CHECK_OK(gpuk_buffer_create_async(other, t, &(gpuk_buffer_desc){ .bytes = 64 }, &c));
    CHECK_RESULT(gpuk_buffer_free_async(other, t, b), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_free_async(ctx, t, b), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_destroy(other, b), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_create_async(ctx, t, &(gpuk_buffer_desc){ .bytes = 64 }, &c), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_buffer_size(ctx, b) == 64 && fake.async_frees == 0);
    CHECK_OK(gpuk_buffer_free_async(ctx, s, b));
    CHECK_OK(gpuk_ctx_destroy(other)); /* frees c */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* What the program left is freed by the ctx destroy (after waiting for the device). */
static int test_ctx_destroy_frees_the_rest(void) {
    gpuk_stream s;
    gpuk_buffer b;
    int i;
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    for (i = 0; i < 5; i++)
        CHECK_OK(gpuk_buffer_create_async(ctx, i % 2 ? s : GPUK_DEFAULT_STREAM, &(gpuk_buffer_desc){ .bytes = 100 }, &b));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK(fake_live_count(FK_ALLOC) == 5);
    fake_gpuk_down(ctx); /* every block given back */
    return TEST_PASS;
}

int main(void) {
    RUN(test_round_trip);
    RUN(test_destroy_and_free_rules);
    RUN(test_zero_bytes_and_desc);
    RUN(test_no_memory_pools);
    RUN(test_threshold_and_trim);
    RUN(test_capture);
    RUN(test_failures);
    RUN(test_other_ctx);
    RUN(test_ctx_destroy_frees_the_rest);
    return test_summary();
}
