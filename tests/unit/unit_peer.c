/* tests/unit/unit_peer.c - several ctxs on the fake driver's two devices: peer access queries and
   enabling (idempotent; refused clearly where the devices cannot), copies between buffers of
   two ctxs (bytes arrive, with and without peer access), a stream waiting on another ctx's
   event, every error path, and no leaks. No GPU needed.
   cc -std=c99 -I../.. unit_peer.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"

static gpuk_ctx* ctx_on(int device) {
    gpuk_ctx* c = NULL;
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = device }, &c));
    return c;
}

static int test_can_access_peer(void) {
    bool can = true;
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2, .peer_access = 1 }));
    CHECK_OK(gpuk_device_can_access_peer(0, 1, &can));
    CHECK(can);
    CHECK_OK(gpuk_device_can_access_peer(1, 0, &can));
    CHECK(can);
    CHECK_RESULT(gpuk_device_can_access_peer(0, 0, &can), GPUK_ERR_INVALID_ARG);
    CHECK(!can);
    CHECK_ERROR_MENTIONS("both 0");
    CHECK_RESULT(gpuk_device_can_access_peer(0, 2, &can), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_device_can_access_peer(-1, 0, &can), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_device_can_access_peer(0, 1, NULL), GPUK_ERR_INVALID_ARG);
    fake_gpuk_check_released();
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2 }));
    CHECK_OK(gpuk_device_can_access_peer(0, 1, &can));
    CHECK(!can);
    fake_gpuk_check_released();
    return 0;
}

static int test_enable(void) {
    gpuk_ctx *a, *b, *a2;
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2, .peer_access = 1 }));
    a = ctx_on(0);
    b = ctx_on(1);
    a2 = ctx_on(0);
    CHECK_OK(gpuk_ctx_enable_peer_access(a, b));
    CHECK(fake.peer_enabled[0][1] && !fake.peer_enabled[1][0]);
    CHECK_OK(gpuk_ctx_enable_peer_access(a, b)); /* already enabled: success */
    CHECK_OK(gpuk_ctx_enable_peer_access(a2, b)); /* the same primary context: already */
    CHECK_OK(gpuk_ctx_enable_peer_access(b, a));
    CHECK(fake.peer_enabled[1][0]);
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, a), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("both on device 0");
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, a2), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_ctx_enable_peer_access(NULL, b), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("ctx is NULL");
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("peer is NULL");
    CHECK_OK(gpuk_ctx_destroy(a2));
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a2, b), GPUK_ERR_INVALID_ARG); /* destroyed */
    CHECK_ERROR_MENTIONS("not a live ctx");
    CHECK_RESULT(gpuk_ctx_enable_peer_access(b, a2), GPUK_ERR_INVALID_ARG);
    /* a driver failure passes through */
    fake.cfg.fail_name = "cuCtxEnablePeerAccess";
    fake.cfg.fail_code = 999;
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, b), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuCtxEnablePeerAccess");
    fake.cfg.fail_name = "cuDeviceCanAccessPeer";
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, b), (gpuk_result)999);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_OK(gpuk_ctx_destroy(b));
    fake_gpuk_check_released();
    /* without P2P: a clear error, nothing enabled */
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2 }));
    a = ctx_on(0);
    b = ctx_on(1);
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, b), (gpuk_result)217);
    CHECK_ERROR_MENTIONS("cannot access device 1's memory");
    CHECK_ERROR_MENTIONS("gpuk_buffer_copy_peer still works");
    CHECK(!fake.peer_enabled[0][1]);
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_OK(gpuk_ctx_destroy(b));
    fake_gpuk_check_released();
    return 0;
}

/* Bytes written on device 0 arrive on device 1 and back, sync and async, with and without
   peer access. */
static void copies(int peer_access, int enable) {
    gpuk_ctx *a, *b;
    gpuk_buffer x, y;
    gpuk_stream sb;
    unsigned char in[256], out[256];
    int i;
    for (i = 0; i < 256; i++) in[i] = (unsigned char)(i * 7 + 1);
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2, .peer_access = peer_access }));
    a = ctx_on(0);
    b = ctx_on(1);
    if (enable) CHECK_OK(gpuk_ctx_enable_peer_access(b, a));
    CHECK_OK(gpuk_buffer_create(a, &(gpuk_buffer_desc){ .data = GPUK_RANGE(in), .label = "x" }, &x));
    CHECK_OK(gpuk_buffer_create(b, &(gpuk_buffer_desc){ .bytes = 256, .label = "y" }, &y));
    CHECK_OK(gpuk_stream_create(b, NULL, &sb));
    CHECK_OK(gpuk_buffer_copy_peer(b, y, 0, a, x, 0, 256));
    memset(out, 0, sizeof out);
    CHECK_OK(gpuk_buffer_read(b, y, 0, out, 256));
    CHECK(memcmp(in, out, 256) == 0);
    CHECK(fake.peer_copies == 1);
    /* async on a stream of the destination ctx, at offsets */
    CHECK_OK(gpuk_buffer_memset(a, GPUK_DEFAULT_STREAM, x, 0, 0, 1, 256));
    CHECK_OK(gpuk_buffer_copy_peer_async(a, GPUK_DEFAULT_STREAM, x, 16, b, y, 32, 100));
    CHECK_OK(gpuk_stream_sync(a, GPUK_DEFAULT_STREAM));
    CHECK_OK(gpuk_buffer_read(a, x, 0, out, 256));
    for (i = 0; i < 256; i++) CHECK(out[i] == (i >= 16 && i < 116 ? in[i + 16] : 0));
    CHECK_OK(gpuk_buffer_copy_peer_async(b, sb, y, 0, a, x, 0, 256));
    CHECK_OK(gpuk_stream_sync(b, sb));
    CHECK(fake.peer_copies == 3);
    /* 0 bytes: checked, nothing copied */
    CHECK_OK(gpuk_buffer_copy_peer(b, y, 256, a, x, 256, 0));
    CHECK(fake.peer_copies == 3);
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_OK(gpuk_ctx_destroy(b));
    fake_gpuk_check_released();
}
static int test_copies_peer(void) { copies(1, 1); return 0; }
static int test_copies_peer_not_enabled(void) { copies(1, 0); return 0; }
static int test_copies_no_peer(void) { copies(0, 0); return 0; }

static int test_copy_errors(void) {
    gpuk_ctx *a, *b, *c;
    gpuk_buffer x, y, z, gone;
    gpuk_stream sa, sb;
    unsigned char in[64] = { 1, 2, 3 }, out[64];
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2 }));
    a = ctx_on(0);
    b = ctx_on(1);
    c = ctx_on(1);
    CHECK_OK(gpuk_buffer_create(a, &(gpuk_buffer_desc){ .data = GPUK_RANGE(in), .label = "x" }, &x));
    CHECK_OK(gpuk_buffer_create(b, &(gpuk_buffer_desc){ .bytes = 64, .label = "y" }, &y));
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 64, .label = "z" }, &z));
    CHECK_OK(gpuk_buffer_create(b, &(gpuk_buffer_desc){ .bytes = 64 }, &gone));
    CHECK_OK(gpuk_buffer_destroy(b, gone));
    CHECK_OK(gpuk_stream_create(a, NULL, &sa));
    CHECK_OK(gpuk_stream_create(b, NULL, &sb));
    /* NULL ctxs */
    CHECK_RESULT(gpuk_buffer_copy_peer(NULL, y, 0, a, x, 0, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("dst_ctx is NULL");
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 0, NULL, x, 0, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("src_ctx is NULL");
    CHECK_RESULT(gpuk_buffer_copy_peer_async(NULL, sb, y, 0, a, x, 0, 8), GPUK_ERR_INVALID_ARG);
    /* handles checked against their own ctx */
    CHECK_RESULT(gpuk_buffer_copy_peer(b, x, 0, a, x, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("dst buffer");
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 0, a, y, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("src buffer");
    CHECK_RESULT(gpuk_buffer_copy_peer(b, gone, 0, a, x, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_copy_peer(b, (gpuk_buffer){ 0 }, 0, a, x, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_copy_peer(c, y, 0, a, x, 0, 8), GPUK_ERR_INVALID_HANDLE); /* b's, not c's */
    /* the stream is the destination ctx's */
    CHECK_RESULT(gpuk_buffer_copy_peer_async(b, sa, y, 0, a, x, 0, 8), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("stream");
    /* bounds, without overflow */
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 60, a, x, 0, 8), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("buffer 'y'");
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 0, a, x, 57, 8), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_copy_peer_async(b, sb, y, SIZE_MAX - 4, a, x, 0, 8), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 0, a, x, 8, SIZE_MAX), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK(fake.peer_copies == 0);
    /* two ctxs of one device: a peer copy within the device works */
    CHECK_OK(gpuk_buffer_copy_peer(c, z, 0, a, x, 0, 64));
    CHECK_OK(gpuk_buffer_copy_peer(b, y, 0, c, z, 0, 64));
    CHECK_OK(gpuk_buffer_read(b, y, 0, out, 64));
    CHECK(memcmp(in, out, 64) == 0);
    /* the same ctx: the ordinary copy (overlap refused as there) */
    CHECK_OK(gpuk_buffer_copy_peer(b, y, 0, b, y, 32, 32));
    CHECK_RESULT(gpuk_buffer_copy_peer_async(b, sb, y, 0, b, y, 8, 16), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK(fake.peer_copies == 2);
    /* a driver failure passes through, named */
    fake.cfg.fail_name = "cuMemcpyPeerAsync";
    fake.cfg.fail_code = 999;
    CHECK_RESULT(gpuk_buffer_copy_peer_async(b, sb, y, 0, a, x, 0, 8), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuMemcpyPeerAsync");
    fake.cfg.fail_name = "cuMemcpyPeer";
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 0, a, x, 0, 8), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuMemcpyPeer");
    fake.cfg.fail_name = NULL;
    /* a destroyed ctx */
    CHECK_OK(gpuk_ctx_destroy(c));
    CHECK_RESULT(gpuk_buffer_copy_peer(c, z, 0, a, x, 0, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("dst_ctx is not a live ctx");
    CHECK_RESULT(gpuk_buffer_copy_peer_async(b, sb, y, 0, c, z, 0, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("src_ctx is not a live ctx");
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_OK(gpuk_ctx_destroy(b));
    fake_gpuk_check_released();
    return 0;
}

static int test_stream_wait_peer(void) {
    gpuk_ctx *a, *b;
    gpuk_event ea, eb;
    gpuk_stream sa, sb;
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2 }));
    a = ctx_on(0);
    b = ctx_on(1);
    CHECK_OK(gpuk_event_create(a, NULL, &ea));
    CHECK_OK(gpuk_event_create(b, NULL, &eb));
    CHECK_OK(gpuk_stream_create(a, NULL, &sa));
    CHECK_OK(gpuk_stream_create(b, NULL, &sb));
    CHECK_OK(gpuk_event_record(a, sa, ea));
    CHECK_OK(gpuk_stream_wait_peer(b, sb, a, ea));
    CHECK_OK(gpuk_stream_wait_peer(b, GPUK_DEFAULT_STREAM, a, ea));
    CHECK_OK(gpuk_stream_wait_peer(a, sa, a, ea)); /* same ctx: gpuk_stream_wait */
    /* the plain call still refuses another ctx's event */
    CHECK_RESULT(gpuk_stream_wait(b, sb, ea), GPUK_ERR_INVALID_HANDLE);
    /* the event is checked against event_ctx, the stream against ctx */
    CHECK_RESULT(gpuk_stream_wait_peer(b, sb, a, eb), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("event");
    CHECK_RESULT(gpuk_stream_wait_peer(b, sa, a, ea), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("stream");
    CHECK_RESULT(gpuk_stream_wait_peer(b, sb, a, (gpuk_event){ 0 }), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_stream_wait_peer(NULL, sb, a, ea), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_stream_wait_peer(b, sb, NULL, ea), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("event_ctx is NULL");
    fake.cfg.fail_name = "cuStreamWaitEvent";
    fake.cfg.fail_code = 999;
    CHECK_RESULT(gpuk_stream_wait_peer(b, sb, a, ea), (gpuk_result)999);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_RESULT(gpuk_stream_wait_peer(b, sb, a, ea), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not a live ctx");
    CHECK_OK(gpuk_ctx_destroy(b));
    fake_gpuk_check_released();
    return 0;
}

/* A driver without the peer entry points: the feature bit is off, calls say so. */
static int test_old_driver(void) {
    gpuk_ctx *a, *b;
    gpuk_buffer x, y;
    bool can = true;
    CHECK_OK(fake_gpuk_init(&(fake_config){ .devices = 2, .peer_access = 1,
                                            .missing = { "cuMemcpyPeerAsync", "cuDeviceCanAccessPeer" } }));
    CHECK(!(gpuk_features() & GPUK_FEATURE_PEER));
    a = ctx_on(0);
    b = ctx_on(1);
    CHECK_OK(gpuk_buffer_create(a, &(gpuk_buffer_desc){ .bytes = 8 }, &x));
    CHECK_OK(gpuk_buffer_create(b, &(gpuk_buffer_desc){ .bytes = 8 }, &y));
    CHECK_RESULT(gpuk_device_can_access_peer(0, 1, &can), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK(!can);
    CHECK_RESULT(gpuk_buffer_copy_peer(b, y, 0, a, x, 0, 8), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuMemcpyPeerAsync");
    CHECK_RESULT(gpuk_ctx_enable_peer_access(a, b), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_OK(gpuk_ctx_destroy(b));
    fake_gpuk_check_released();
    return 0;
}

int main(void) {
    RUN(test_can_access_peer);
    RUN(test_enable);
    RUN(test_copies_peer);
    RUN(test_copies_peer_not_enabled);
    RUN(test_copies_no_peer);
    RUN(test_copy_errors);
    RUN(test_stream_wait_peer);
    RUN(test_old_driver);
    return test_summary();
}
