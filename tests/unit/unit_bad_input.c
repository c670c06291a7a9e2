/* tests/unit/unit_bad_input.c - every public function of gpuk's core called with bad input: NULL
   pointers, zero and overflowing sizes, zero, destroyed and other-ctx handles, out-of-range
   devices and launch shapes, misaligned addresses. One row per function; the test reads gpuk.h
   and fails when a public function has no row, so none can be added without one. (The built-in
   kernels' wrappers have theirs in tests/unit/unit_kernels.c.) Each case must return the stated
   result with a gpuk_last_error() that names the function, and handle checks must not reach
   the driver. Fake driver; no GPU needed. Run from the repository root (it reads gpuk.h). */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <stdint.h>

static const char ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n ret;\n}\n";

/* A: the ctx under test, with live objects; B: another ctx (device 1) with its own objects;
   stale: handles of A's objects destroyed before the cases run. */
static gpuk_ctx *A, *B;
static gpuk_buffer buf, buf_b, buf_stale;
static gpuk_pinned pin, pin_b, pin_stale;
static gpuk_stream str, str_b, str_stale;
static gpuk_event ev, ev_b, ev_stale;
static gpuk_module mod, mod_b, mod_stale;
static gpuk_kernel ker, ker_b, ker_stale;
static gpuk_graph gr, gr_b, gr_stale;
/* buffers made on a stream: live, freed, and made on the stream str_stale before its destroy */
static gpuk_buffer abuf, abuf_stale, abuf_orphan;
static gpuk_buffer mbuf; /* managed, 64 bytes */
static const gpuk_graph zgr = { 0 };
static const gpuk_buffer zbuf = { 0 };
static const gpuk_pinned zpin = { 0 };
static const gpuk_stream zstr = { 0 };
static const gpuk_event zev = { 0 };
static const gpuk_module zmod = { 0 };
static const gpuk_kernel zker = { 0 };

static int cases;
static const char* row_name;
static long calls_before;

/* expr returns want, the text names the function; NODRV: and no driver call was made */
#define BAD(expr, want) \
    do { cases++; calls_before = fake.calls; CHECK_RESULT(expr, want); CHECK_ERROR_MENTIONS(row_name); } while (0)
#define BAD_NODRV(expr, want) \
    do { BAD(expr, want); CHECK(fake.calls == calls_before); } while (0)
/* the three kinds of bad handle, for a call made by CALL(h) */
#define BAD_HANDLES(CALL, zero, stale, other) \
    do { BAD_NODRV(CALL(zero), GPUK_ERR_INVALID_HANDLE); BAD_NODRV(CALL(stale), GPUK_ERR_INVALID_HANDLE); \
         BAD_NODRV(CALL(other), GPUK_ERR_INVALID_HANDLE); } while (0)
/* a getter that answers 0/NULL for bad input */
#define ZERO(expr) do { cases++; CHECK((expr) == 0); } while (0)

static void* my_alloc(size_t n, void* user) { (void)user; return malloc(n); }
static void row_init(void) {
    gpuk_desc d;
    memset(&d, 0, sizeof d);
    d.log_level = GPUK_LOG_NUM;
    BAD_NODRV(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = my_alloc; /* one half of a pair */
    BAD_NODRV(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    memset(&d, 0, sizeof d);
    d._start_canary = 1;
    BAD_NODRV(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    {   /* library paths over 4095 characters: refused, not cut to another library's name */
        static char longp[4097];
        memset(longp, 'x', 4096);
        memset(&d, 0, sizeof d);
        d.nvrtc_path = longp;
        BAD_NODRV(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("gpuk_desc.nvrtc_path");
        memset(&d, 0, sizeof d);
        d.driver_path = longp;
        BAD_NODRV(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("gpuk_desc.driver_path");
    }
}
static void row_shutdown(void) { BAD_NODRV(gpuk_shutdown(), GPUK_ERR_BUSY); /* ctxs alive */ }
static void row_driver_version(void) { BAD_NODRV(gpuk_driver_version(NULL), GPUK_ERR_INVALID_ARG); }
static void row_features(void) { cases++; CHECK((gpuk_features() & ~0x7Fu) == 0); }
static void row_driver_symbol(void) {
    ZERO(gpuk_driver_symbol(NULL, 1000));
    ZERO(gpuk_driver_symbol("", 1000));
    ZERO(gpuk_driver_symbol("cuNoSuchFunction", 1000));
}
static void row_result_str(void) {
    cases += 3;
    CHECK(gpuk_result_str(123456) != NULL && gpuk_result_str(-99999) != NULL && gpuk_result_str(GPUK_OK) != NULL);
}
static void row_last_error(void) { cases++; CHECK(gpuk_last_error() != NULL); }
static void row_log_stderr(void) { /* out-of-range level and NULL text: no crash */
    cases += 2;
    gpuk_log_stderr(NULL, (gpuk_log_level)99, 0, "x");
    gpuk_log_stderr(NULL, GPUK_LOG_ERROR, 0, NULL);
}
/* The desc defaults are infallible: NULL = all zero resolved; out-of-range values pass
   through for create to name. */
static void row_desc_defaults(void) {
    cases += 2;
    CHECK(gpuk_desc_defaults(NULL).log_level == GPUK_LOG_WARN);
    CHECK(gpuk_desc_defaults(&(gpuk_desc){ .log_level = (gpuk_log_level)99 }).log_level == 99);
}
static void row_ctx_desc_defaults(void) {
    cases += 2;
    CHECK(gpuk_ctx_desc_defaults(NULL).max_buffers == 4096);
    CHECK(gpuk_ctx_desc_defaults(&(gpuk_ctx_desc){ .max_buffers = 70000, .device = -1 }).max_buffers == 70000);
}
static void row_buffer_desc_defaults(void) {
    cases += 2;
    CHECK(gpuk_buffer_desc_defaults(NULL).bytes == 0);
    CHECK(gpuk_buffer_desc_defaults(&(gpuk_buffer_desc){ .data = { NULL, SIZE_MAX } }).bytes == SIZE_MAX);
}
static void row_pinned_desc_defaults(void) {
    cases += 2;
    CHECK(gpuk_pinned_desc_defaults(NULL).bytes == 0);
    CHECK(gpuk_pinned_desc_defaults(&(gpuk_pinned_desc){ ._end_canary = 3 })._end_canary == 3);
}
static void row_module_desc_defaults(void) {
    cases += 2;
    CHECK(gpuk_module_desc_defaults(NULL).kind == GPUK_IMAGE_DEFAULT); /* no image: nothing to detect */
    CHECK(gpuk_module_desc_defaults(&(gpuk_module_desc){ .kind = (gpuk_image_kind)77 }).kind == 77);
}
static void row_launch_desc_defaults(void) {
    cases += 2;
    CHECK(gpuk_launch_desc_defaults(NULL).block.z == 1);
    CHECK(gpuk_launch_desc_defaults(&(gpuk_launch_desc){ .grid = { 0, 70000, 0 } }).grid.y == 70000);
}
static void row_device_count(void) { BAD_NODRV(gpuk_device_count(NULL), GPUK_ERR_INVALID_ARG); }
static void row_device_query(void) {
    gpuk_device_info info;
    BAD_NODRV(gpuk_device_query(0, NULL), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_device_query(-1, &info), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_device_query(99, &info), GPUK_ERR_INVALID_ARG);
}
static void row_device_attribute(void) {
    int v;
    BAD_NODRV(gpuk_device_attribute(0, 1, NULL), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_device_attribute(-1, 1, &v), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_device_attribute(99, 1, &v), GPUK_ERR_INVALID_ARG);
}
static void row_ctx_create(void) {
    gpuk_ctx* c = NULL;
    BAD_NODRV(gpuk_ctx_create(NULL, NULL), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 99 }, &c), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = -1 }, &c), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_create(&(gpuk_ctx_desc){ .max_buffers = 70000 }, &c), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_create(&(gpuk_ctx_desc){ .staging_bytes = 65535 }, &c), GPUK_ERR_INVALID_ARG);
    cases++;
    CHECK(c == NULL);
}
static void row_ctx_destroy(void) { BAD_NODRV(gpuk_ctx_destroy(NULL), GPUK_ERR_INVALID_ARG); }
static void row_ctx_sync(void) { BAD_NODRV(gpuk_ctx_sync(NULL), GPUK_ERR_INVALID_ARG); }
static void row_ctx_mem_info(void) {
    size_t f;
    BAD_NODRV(gpuk_ctx_mem_info(NULL, &f, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_mem_info(A, NULL, NULL), GPUK_ERR_INVALID_ARG);
}
static void row_ctx_device_info(void) { ZERO(gpuk_ctx_device_info(NULL)); }
static void row_ctx_make_current(void) { BAD_NODRV(gpuk_ctx_make_current(NULL), GPUK_ERR_INVALID_ARG); }
static void row_ctx_set_limit(void) {
    BAD_NODRV(gpuk_ctx_set_limit(NULL, GPUK_LIMIT_STACK_SIZE, 4096), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_set_limit(A, GPUK_LIMIT_DEFAULT, 4096), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("which = 0 is not a gpuk_limit");
    BAD_NODRV(gpuk_ctx_set_limit(A, GPUK_LIMIT_NUM, 4096), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_set_limit(A, GPUK_LIMIT_FORCE_U32, 4096), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_set_limit(A, (gpuk_limit)-1, 4096), GPUK_ERR_INVALID_ARG);
}
static void row_ctx_get_limit(void) {
    size_t v = 7;
    BAD_NODRV(gpuk_ctx_get_limit(NULL, GPUK_LIMIT_STACK_SIZE, &v), GPUK_ERR_INVALID_ARG);
    cases++;
    CHECK(v == 0);
    BAD_NODRV(gpuk_ctx_get_limit(A, GPUK_LIMIT_STACK_SIZE, NULL), GPUK_ERR_INVALID_ARG);
    v = 7;
    BAD_NODRV(gpuk_ctx_get_limit(A, GPUK_LIMIT_NUM, &v), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("is not a gpuk_limit");
    cases++;
    CHECK(v == 0);
}

static char host[64];
static void row_buffer_create(void) {
    gpuk_buffer b;
    BAD_NODRV(gpuk_buffer_create(NULL, &(gpuk_buffer_desc){ .bytes = 8 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create(A, NULL, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 8 }, NULL), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = SIZE_MAX }, &b), 2); /* out of memory */
    BAD_NODRV(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .bytes = 4, .data = { host, 8 } }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create(A, &(gpuk_buffer_desc){ .data = { NULL, 8 } }, &b), GPUK_ERR_INVALID_ARG);
}
#define DESTROY_BUF(h) gpuk_buffer_destroy(A, h)
static void row_buffer_destroy(void) {
    BAD_HANDLES(DESTROY_BUF, zbuf, buf_stale, buf_b);
    BAD_HANDLES(DESTROY_BUF, zbuf, abuf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_destroy(NULL, buf), GPUK_ERR_INVALID_ARG);
    /* made on a stream destroyed since: it cannot be freed in order there */
    BAD_NODRV(gpuk_buffer_destroy(A, abuf_orphan), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_free_async");
}
static void row_buffer_size(void) { ZERO(gpuk_buffer_size(NULL, buf)); ZERO(gpuk_buffer_size(A, buf_stale)); ZERO(gpuk_buffer_size(A, buf_b)); }
static void row_buffer_devptr(void) { ZERO(gpuk_buffer_devptr(NULL, buf)); ZERO(gpuk_buffer_devptr(A, zbuf)); ZERO(gpuk_buffer_devptr(A, buf_b)); }

#define WRITE(h) gpuk_buffer_write(A, h, 0, host, 8)
static void row_buffer_write(void) {
    BAD_HANDLES(WRITE, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_write(A, buf, 0, NULL, 8), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_write(A, buf, 60, host, 8), GPUK_ERR_OUT_OF_BOUNDS);
    BAD_NODRV(gpuk_buffer_write(A, buf, SIZE_MAX, host, 2), GPUK_ERR_OUT_OF_BOUNDS); /* offset + bytes overflows */
}
#define READ(h) gpuk_buffer_read(A, h, 0, host, 8)
static void row_buffer_read(void) {
    BAD_HANDLES(READ, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_read(A, buf, 0, NULL, 8), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_read(A, buf, 8, host, SIZE_MAX), GPUK_ERR_OUT_OF_BOUNDS);
}
#define COPY_DST(h) gpuk_buffer_copy(A, h, 0, buf, 0, 8)
#define COPY_SRC(h) gpuk_buffer_copy(A, buf, 0, h, 0, 8)
static void row_buffer_copy(void) {
    BAD_HANDLES(COPY_DST, zbuf, buf_stale, buf_b);
    BAD_HANDLES(COPY_SRC, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_copy(A, buf, 0, buf, 1, 64), GPUK_ERR_OUT_OF_BOUNDS);
}
#define DOWNLOAD(h) gpuk_buffer_download(A, h, &dl, &dl_bytes)
static void row_buffer_download(void) {
    void* dl;
    size_t dl_bytes;
    BAD_HANDLES(DOWNLOAD, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_download(A, buf, NULL, &dl_bytes), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_download(A, buf, &dl, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_download(NULL, buf, &dl, &dl_bytes), GPUK_ERR_INVALID_ARG);
    cases++;
    CHECK(dl == NULL && dl_bytes == 0);
}
static void row_host_free(void) { cases++; gpuk_host_free(NULL); /* no-op, no crash */ }
#define RESOLVE2D(h) gpuk_array2d_resolve(A, gpuk_at2d(h, 0, 1, 1, 0), 4, &p2, &s2)
static void row_array2d_resolve(void) {
    gpuk_devptr p2;
    size_t s2;
    BAD_HANDLES(RESOLVE2D, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_array2d_resolve(NULL, gpuk_at2d(buf, 0, 1, 1, 0), 4, &p2, &s2), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array2d_resolve(A, gpuk_at2d(buf, 0, 1, 1, 0), 4, NULL, &s2), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array2d_resolve(A, gpuk_at2d(buf, 0, 1, 1, 0), 0, &p2, &s2), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array2d_resolve(A, gpuk_at2d(buf, 0, 4, 4, 3), 4, &p2, &s2), GPUK_ERR_INVALID_ARG); /* overlap */
    BAD_NODRV(gpuk_array2d_resolve(A, gpuk_at2d(buf, 0, 5, 4, 0), 4, &p2, &s2), GPUK_ERR_OUT_OF_BOUNDS);
    BAD_NODRV(gpuk_array2d_resolve(A, gpuk_at2d(buf, 1, SIZE_MAX, 1, SIZE_MAX), 4, &p2, &s2), GPUK_ERR_OUT_OF_BOUNDS);
    cases++;
    CHECK(p2 == 0 && s2 == 0);
}
#define RESOLVE1D(h) gpuk_array_resolve(A, gpuk_at(h, 0), 4, "x", &p1, &e1)
static void row_array_resolve(void) {
    gpuk_devptr p1;
    size_t e1;
    BAD_HANDLES(RESOLVE1D, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_array_resolve(NULL, gpuk_at(buf, 0), 4, "x", &p1, &e1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array_resolve(A, gpuk_at(buf, 0), 4, "x", NULL, &e1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array_resolve(A, gpuk_at(buf, 0), 4, "x", &p1, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array_resolve(A, gpuk_at(buf, 0), 3, "x", &p1, &e1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array_resolve(A, gpuk_at(buf, 0), 32, NULL, &p1, &e1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_array_resolve(A, gpuk_at(buf, 17), 4, "x", &p1, &e1), GPUK_ERR_OUT_OF_BOUNDS); /* 16 floats */
    BAD_NODRV(gpuk_array_resolve(A, gpuk_at(buf, SIZE_MAX), 1, "x", &p1, &e1), GPUK_ERR_OUT_OF_BOUNDS);
    cases++;
    CHECK(p1 == 0 && e1 == 0);
}
#define WRITE_ASYNC_STREAM(s) gpuk_buffer_write_async(A, s, buf, 0, host, 8)
static void row_buffer_write_async(void) {
    BAD_NODRV(WRITE_ASYNC_STREAM(str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(WRITE_ASYNC_STREAM(str_b), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_write_async(A, str, buf_b, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_write_async(A, str, buf, 0, NULL, 8), GPUK_ERR_INVALID_ARG);
}
static void row_buffer_read_async(void) {
    BAD_NODRV(gpuk_buffer_read_async(A, str_stale, buf, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_read_async(A, str, buf_stale, 0, host, 8), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_read_async(A, str, buf, 64, host, 1), GPUK_ERR_OUT_OF_BOUNDS);
}
static void row_buffer_copy_async(void) {
    BAD_NODRV(gpuk_buffer_copy_async(A, str_b, buf, 0, buf, 0, 8), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_copy_async(A, str, buf, 0, buf_b, 0, 8), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_copy_async(A, str, buf, SIZE_MAX - 4, buf, 0, 8), GPUK_ERR_OUT_OF_BOUNDS);
}
#define COPY_PEER_DST(h) gpuk_buffer_copy_peer(A, h, 0, B, buf_b, 0, 8)
#define COPY_PEER_SRC(h) gpuk_buffer_copy_peer(A, buf, 0, B, h, 0, 8)
static void row_buffer_copy_peer(void) {
    BAD_NODRV(gpuk_buffer_copy_peer(NULL, buf, 0, B, buf_b, 0, 8), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_copy_peer(A, buf, 0, NULL, buf_b, 0, 8), GPUK_ERR_INVALID_ARG);
    BAD_HANDLES(COPY_PEER_DST, zbuf, buf_stale, buf_b);
    BAD_HANDLES(COPY_PEER_SRC, zbuf, buf_stale, buf);
    BAD_NODRV(gpuk_buffer_copy_peer(A, buf, 60, B, buf_b, 0, 8), GPUK_ERR_OUT_OF_BOUNDS);
    BAD_NODRV(gpuk_buffer_copy_peer(A, buf, 0, B, buf_b, SIZE_MAX - 4, 8), GPUK_ERR_OUT_OF_BOUNDS);
}
#define COPY_PEER_STR(h) gpuk_buffer_copy_peer_async(A, h, buf, 0, B, buf_b, 0, 8)
static void row_buffer_copy_peer_async(void) {
    BAD_NODRV(gpuk_buffer_copy_peer_async(A, str, buf, 0, NULL, buf_b, 0, 8), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(COPY_PEER_STR(str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(COPY_PEER_STR(str_b), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_copy_peer_async(A, str, buf, 0, B, buf, 0, 8), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_copy_peer_async(A, str, buf, SIZE_MAX - 4, B, buf_b, 0, 8), GPUK_ERR_OUT_OF_BOUNDS);
}
/* CUDA IPC: the handle checks, then what cannot be shared, all before the driver */
static gpuk_ipc_handle ipc_out;
#define EXPORT_BUF(h) gpuk_buffer_export(A, h, &ipc_out)
static void row_buffer_export(void) {
    BAD_NODRV(gpuk_buffer_export(NULL, buf, &ipc_out), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_export(A, buf, NULL), GPUK_ERR_INVALID_ARG);
    BAD_HANDLES(EXPORT_BUF, zbuf, buf_stale, buf_b);
    BAD_NODRV(EXPORT_BUF(abuf), GPUK_ERR_INVALID_ARG); /* the memory pool's */
    CHECK_ERROR_MENTIONS("gpuk_buffer_create_async");
}
static void row_buffer_import(void) {
    gpuk_buffer b;
    gpuk_ipc_handle h;
    memset(&h, 0, sizeof h);
    BAD_NODRV(gpuk_buffer_import(A, NULL, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_import(A, &h, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_import(NULL, &h, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_import(A, &h, &b), GPUK_ERR_INVALID_ARG); /* no gpuk handle */
    CHECK_OK(gpuk_buffer_export(A, buf, &h));
    BAD_NODRV(gpuk_buffer_import(A, &h, &b), GPUK_ERR_INVALID_ARG); /* this process's export */
    CHECK_ERROR_MENTIONS("exported by this process");
}
static void row_device_can_access_peer(void) {
    bool can;
    BAD_NODRV(gpuk_device_can_access_peer(0, 1, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_device_can_access_peer(1, 1, &can), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_device_can_access_peer(0, 99, &can), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_device_can_access_peer(-1, 0, &can), GPUK_ERR_INVALID_ARG);
}
static void row_ctx_enable_peer_access(void) {
    BAD_NODRV(gpuk_ctx_enable_peer_access(NULL, B), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_enable_peer_access(A, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_ctx_enable_peer_access(A, A), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_ctx_enable_peer_access(A, B), (gpuk_result)217); /* the fake has no P2P here */
}
#define MEMSET(h) gpuk_buffer_memset(A, zstr, h, 0, 0, 4, 2)
static void row_buffer_memset(void) {
    BAD_HANDLES(MEMSET, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_memset(A, zstr, buf, 0, 0, 3, 2), GPUK_ERR_INVALID_ARG);          /* element size */
    BAD_NODRV(gpuk_buffer_memset(A, zstr, buf, 0, 0x1FF, 1, 2), GPUK_ERR_INVALID_ARG);      /* value too wide */
    BAD_NODRV(gpuk_buffer_memset(A, zstr, buf, 1, 0, 4, 2), GPUK_ERR_INVALID_ARG);          /* misaligned */
    BAD_NODRV(gpuk_buffer_memset(A, zstr, buf, 0, 0, 4, SIZE_MAX / 2), GPUK_ERR_OUT_OF_BOUNDS); /* n * 4 overflows */
}

static void row_buffer_create_async(void) {
    gpuk_buffer b;
    BAD_NODRV(gpuk_buffer_create_async(NULL, str, &(gpuk_buffer_desc){ .bytes = 8 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_async(A, str, NULL, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .bytes = 8 }, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .bytes = 8, ._start_canary = 1 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_async(A, str_stale, &(gpuk_buffer_desc){ .bytes = 8 }, &b), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_create_async(A, str_b, &(gpuk_buffer_desc){ .bytes = 8 }, &b), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .bytes = 8, .wrap = 4096 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .data = { host, 8 } }, &b), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .bytes = SIZE_MAX }, &b), 2); /* out of memory */
    cases++;
    CHECK(b.id == 0);
}
#define FREE_ASYNC(h) gpuk_buffer_free_async(A, str, h)
static void row_buffer_free_async(void) {
    BAD_HANDLES(FREE_ASYNC, zbuf, abuf_stale, buf_b); /* the stale one: a double free */
    BAD_NODRV(gpuk_buffer_free_async(NULL, str, abuf), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_free_async(A, str_stale, abuf), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_free_async(A, str_b, abuf), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_free_async(A, str, buf), GPUK_ERR_INVALID_ARG); /* made by gpuk_buffer_create */
    cases++;
    CHECK(gpuk_buffer_size(A, abuf) == 64 && gpuk_buffer_size(A, buf) == 64); /* both kept */
}
static void row_mempool_set_release_threshold(void) {
    BAD_NODRV(gpuk_mempool_set_release_threshold(NULL, 0), GPUK_ERR_INVALID_ARG);
}
static void row_mempool_get_release_threshold(void) {
    uint64_t v = 7;
    BAD_NODRV(gpuk_mempool_get_release_threshold(NULL, &v), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_mempool_get_release_threshold(A, NULL), GPUK_ERR_INVALID_ARG);
    cases++;
    CHECK(v == 0);
}
static void row_mempool_trim(void) { BAD_NODRV(gpuk_mempool_trim(NULL, 0), GPUK_ERR_INVALID_ARG); }

static void row_pinned_create(void) {
    gpuk_pinned p;
    BAD_NODRV(gpuk_pinned_create(NULL, &(gpuk_pinned_desc){ .bytes = 8 }, &p), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_pinned_create(A, NULL, &p), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_pinned_create(A, &(gpuk_pinned_desc){ .bytes = 8 }, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_pinned_create(A, &(gpuk_pinned_desc){ .bytes = 4, .data = { host, 8 } }, &p), GPUK_ERR_INVALID_ARG);
}
static void row_buffer_create_mapped(void) {
    gpuk_buffer b;
    BAD_NODRV(gpuk_buffer_create_mapped(NULL, &(gpuk_pinned_desc){ .bytes = 8 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_mapped(A, NULL, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_mapped(A, &(gpuk_pinned_desc){ .bytes = 8 }, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_mapped(A, &(gpuk_pinned_desc){ .bytes = 8, ._end_canary = 1 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_mapped(A, &(gpuk_pinned_desc){ .bytes = 4, .data = { host, 8 } }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_mapped(A, &(gpuk_pinned_desc){ .data = { NULL, 8 } }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_mapped(A, &(gpuk_pinned_desc){ .host_ptr = host }, &b), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.bytes"); /* registering needs the size */
    BAD(gpuk_buffer_create_mapped(A, &(gpuk_pinned_desc){ .bytes = SIZE_MAX }, &b), 2); /* out of memory */
    cases++;
    CHECK(b.id == 0);
}
static void row_buffer_create_managed(void) {
    gpuk_buffer b;
    BAD_NODRV(gpuk_buffer_create_managed(NULL, &(gpuk_buffer_desc){ .bytes = 8 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_managed(A, NULL, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .bytes = 8 }, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .bytes = 8, ._start_canary = 1 }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .bytes = 4, .data = { host, 8 } }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .data = { NULL, 8 } }, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .bytes = 8, .wrap = 4096 }, &b), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .bytes = SIZE_MAX }, &b), 2); /* out of memory */
    cases++;
    CHECK(b.id == 0);
}
static void row_buffer_host_ptr(void) {
    ZERO(gpuk_buffer_host_ptr(NULL, mbuf)); ZERO(gpuk_buffer_host_ptr(A, buf_stale));
    ZERO(gpuk_buffer_host_ptr(A, buf_b)); ZERO(gpuk_buffer_host_ptr(A, buf)); /* device memory */
}
#define PREFETCH(h) gpuk_buffer_prefetch(A, str, h, 0, 8, 0)
static void row_buffer_prefetch(void) {
    BAD_HANDLES(PREFETCH, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_prefetch(NULL, str, mbuf, 0, 8, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_prefetch(A, str_stale, mbuf, 0, 8, 0), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_prefetch(A, str_b, mbuf, 0, 8, 0), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_buffer_prefetch(A, str, buf, 0, 8, 0), GPUK_ERR_INVALID_ARG); /* not managed */
    BAD_NODRV(gpuk_buffer_prefetch(A, str, abuf, 0, 8, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_prefetch(A, str, mbuf, 60, 8, 0), GPUK_ERR_OUT_OF_BOUNDS);
    BAD_NODRV(gpuk_buffer_prefetch(A, str, mbuf, SIZE_MAX, 2, 0), GPUK_ERR_OUT_OF_BOUNDS); /* overflows */
    BAD_NODRV(gpuk_buffer_prefetch(A, str, mbuf, 0, 8, -7), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_buffer_prefetch(A, str, mbuf, 0, 8, 2), GPUK_ERR_INVALID_ARG); /* two devices */
}
#define ADVISE(h) gpuk_buffer_advise(A, h, 0, 8, GPUK_ADVICE_SET_READ_MOSTLY, 0)
static void row_buffer_advise(void) {
    BAD_HANDLES(ADVISE, zbuf, buf_stale, buf_b);
    BAD_NODRV(gpuk_buffer_advise(NULL, mbuf, 0, 8, GPUK_ADVICE_SET_READ_MOSTLY, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_advise(A, buf, 0, 8, GPUK_ADVICE_SET_READ_MOSTLY, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_advise(A, mbuf, 8, 64, GPUK_ADVICE_SET_READ_MOSTLY, 0), GPUK_ERR_OUT_OF_BOUNDS);
    BAD_NODRV(gpuk_buffer_advise(A, mbuf, 0, 8, GPUK_ADVICE_DEFAULT, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_advise(A, mbuf, 0, 8, GPUK_ADVICE_NUM, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_advise(A, mbuf, 0, 8, (gpuk_advice)-1, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_buffer_advise(A, mbuf, 0, 8, GPUK_ADVICE_SET_ACCESSED_BY, -7), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_buffer_advise(A, mbuf, 0, 8, GPUK_ADVICE_SET_PREFERRED_LOCATION, 2), GPUK_ERR_INVALID_ARG);
}
#define DESTROY_PIN(h) gpuk_pinned_destroy(A, h)
static void row_pinned_destroy(void) { BAD_HANDLES(DESTROY_PIN, zpin, pin_stale, pin_b); }
static void row_pinned_ptr(void) { ZERO(gpuk_pinned_ptr(NULL, pin)); ZERO(gpuk_pinned_ptr(A, pin_stale)); ZERO(gpuk_pinned_ptr(A, pin_b)); }
static void row_pinned_size(void) { ZERO(gpuk_pinned_size(NULL, pin)); ZERO(gpuk_pinned_size(A, zpin)); ZERO(gpuk_pinned_size(A, pin_b)); }

static void row_stream_create(void) {
    gpuk_stream s;
    BAD_NODRV(gpuk_stream_create(NULL, NULL, &s), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_create(A, NULL, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_create(A, &(gpuk_stream_desc){ ._end_canary = 7 }, &s), GPUK_ERR_INVALID_ARG);
}
#define DESTROY_STR(h) gpuk_stream_destroy(A, h)
#define SYNC_STR(h) gpuk_stream_sync(A, h)
#define NATIVE_STR(h) gpuk_stream_native(A, h)
static void row_stream_destroy(void) { BAD_HANDLES(DESTROY_STR, zstr, str_stale, str_b); }
static void row_stream_sync(void) { BAD_NODRV(SYNC_STR(str_stale), GPUK_ERR_INVALID_HANDLE); BAD_NODRV(SYNC_STR(str_b), GPUK_ERR_INVALID_HANDLE); }
static void row_stream_query(void) {
    bool done;
    BAD_NODRV(gpuk_stream_query(A, str, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_query(A, str_stale, &done), GPUK_ERR_INVALID_HANDLE);
}
static void row_stream_wait(void) {
    BAD_NODRV(gpuk_stream_wait(A, str, zev), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_stream_wait(A, str, ev_b), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_stream_wait(A, str_stale, ev), GPUK_ERR_INVALID_HANDLE);
}
#define WAIT_PEER_EV(h) gpuk_stream_wait_peer(A, str, B, h)
static void row_stream_wait_peer(void) {
    BAD_NODRV(gpuk_stream_wait_peer(NULL, str, B, ev_b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_wait_peer(A, str, NULL, ev_b), GPUK_ERR_INVALID_ARG);
    BAD_HANDLES(WAIT_PEER_EV, zev, ev_stale, ev);
    BAD_NODRV(gpuk_stream_wait_peer(A, str_stale, B, ev_b), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_stream_wait_peer(A, str_b, B, ev_b), GPUK_ERR_INVALID_HANDLE);
}
#define JOIN_STR(h) gpuk_stream_join(A, h, &str, 1)
#define FORK_STR(h) gpuk_stream_fork(A, str, &h, 1)
static void row_stream_join(void) {
    BAD_NODRV(gpuk_stream_join(NULL, str, &str, 1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_join(A, str, NULL, 1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(JOIN_STR(str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(JOIN_STR(str_b), GPUK_ERR_INVALID_HANDLE);
}
static void row_stream_fork(void) {
    BAD_NODRV(gpuk_stream_fork(NULL, str, &str, 1), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_fork(A, str, NULL, 3), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(FORK_STR(str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(FORK_STR(str_b), GPUK_ERR_INVALID_HANDLE);
}
static void nothing(void* p) { (void)p; }
static void row_stream_host_func(void) {
    BAD_NODRV(gpuk_stream_host_func(A, str, NULL, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_host_func(A, str_b, nothing, NULL), GPUK_ERR_INVALID_HANDLE);
}
static void row_stream_native(void) { ZERO(NATIVE_STR(str_stale)); ZERO(NATIVE_STR(str_b)); ZERO(gpuk_stream_native(NULL, str)); }
static void row_stream_priority_range(void) {
    int a, b;
    BAD_NODRV(gpuk_stream_priority_range(NULL, &a, &b), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_stream_priority_range(A, NULL, NULL), GPUK_ERR_INVALID_ARG);
}

static void row_event_create(void) {
    gpuk_event e;
    BAD_NODRV(gpuk_event_create(NULL, NULL, &e), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_create(A, NULL, NULL), GPUK_ERR_INVALID_ARG);
}
#define DESTROY_EV(h) gpuk_event_destroy(A, h)
#define RECORD_EV(h) gpuk_event_record(A, zstr, h)
#define SYNC_EV(h) gpuk_event_sync(A, h)
static void row_event_destroy(void) { BAD_HANDLES(DESTROY_EV, zev, ev_stale, ev_b); }
#define EXPORT_EV(h) gpuk_event_export(A, h, &ipc_out)
static void row_event_export(void) {
    BAD_NODRV(gpuk_event_export(NULL, ev, &ipc_out), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_export(A, ev, NULL), GPUK_ERR_INVALID_ARG);
    BAD_HANDLES(EXPORT_EV, zev, ev_stale, ev_b);
    BAD_NODRV(EXPORT_EV(ev), GPUK_ERR_INVALID_ARG); /* not created interprocess */
    CHECK_ERROR_MENTIONS("interprocess");
}
static void row_event_import(void) {
    gpuk_event e;
    gpuk_ipc_handle h;
    memset(&h, 0, sizeof h);
    BAD_NODRV(gpuk_event_import(A, NULL, &e), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_import(A, &h, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_import(NULL, &h, &e), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_import(A, &h, &e), GPUK_ERR_INVALID_ARG); /* no gpuk handle */
    CHECK_OK(gpuk_buffer_export(A, buf, &h));
    BAD_NODRV(gpuk_event_import(A, &h, &e), GPUK_ERR_INVALID_ARG); /* a buffer's handle */
}
static void row_event_record(void) { BAD_HANDLES(RECORD_EV, zev, ev_stale, ev_b); BAD_NODRV(gpuk_event_record(A, str_b, ev), GPUK_ERR_INVALID_HANDLE); }
static void row_event_sync(void) { BAD_HANDLES(SYNC_EV, zev, ev_stale, ev_b); }
static void row_event_query(void) {
    bool done;
    BAD_NODRV(gpuk_event_query(A, ev, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_query(A, ev_b, &done), GPUK_ERR_INVALID_HANDLE);
}
static void row_event_elapsed_ms(void) {
    float ms;
    BAD_NODRV(gpuk_event_elapsed_ms(A, ev, ev, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_event_elapsed_ms(A, ev_stale, ev, &ms), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_event_elapsed_ms(A, ev, ev_b, &ms), GPUK_ERR_INVALID_HANDLE);
}
static void row_timer_create(void) { BAD_NODRV(gpuk_timer_create(A, NULL), GPUK_ERR_INVALID_ARG); BAD_NODRV(gpuk_timer_create(NULL, NULL), GPUK_ERR_INVALID_ARG); }
static void row_timer_destroy(void) {
    gpuk_timer t;
    memset(&t, 0, sizeof t);
    BAD_NODRV(gpuk_timer_destroy(A, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_timer_destroy(A, &t), GPUK_ERR_INVALID_HANDLE); /* never created */
    t.start = ev_stale;
    BAD_NODRV(gpuk_timer_destroy(A, &t), GPUK_ERR_INVALID_HANDLE);
    CHECK(t.start.id == ev_stale.id); /* kept: not zeroed on failure */
}
static void row_timer_start(void) {
    gpuk_timer t;
    memset(&t, 0, sizeof t);
    BAD_NODRV(gpuk_timer_start(A, zstr, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_timer_start(A, zstr, &t), GPUK_ERR_INVALID_HANDLE); /* never created */
}
static void row_timer_stop(void) {
    gpuk_timer t;
    float ms;
    memset(&t, 0, sizeof t);
    BAD_NODRV(gpuk_timer_stop(A, NULL, &ms), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_timer_stop(A, &t, &ms), GPUK_ERR_INVALID_HANDLE);
}

static void row_module_load(void) {
    gpuk_module m;
    BAD_NODRV(gpuk_module_load(NULL, &(gpuk_module_desc){ .image = { ptx, 0 } }, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_load(A, NULL, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_load(A, &(gpuk_module_desc){ .image = { NULL, 0 } }, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_load(A, &(gpuk_module_desc){ .image = { ptx, 0 }, .kind = (gpuk_image_kind)77 }, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_load(A, &(gpuk_module_desc){ .image = { "nonsense", 0 } }, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_load(A, &(gpuk_module_desc){ .image = { ".version 7.10\n", 0 } }, &m), GPUK_ERR_INVALID_ARG);
}
static void row_module_compile(void) {
    gpuk_module m;
    gpuk_compile_desc d;
    static const char* const arch[] = { "--gpu-architecture=sm_80" };
    memset(&d, 0, sizeof d);
    d.source = "__global__ void k() {}";
    BAD_NODRV(gpuk_module_compile(NULL, &d, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_compile(A, NULL, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_compile(A, &d, NULL), GPUK_ERR_INVALID_ARG);
    d.options = arch; d.num_options = 1;
    BAD_NODRV(gpuk_module_compile(A, &d, &m), GPUK_ERR_INVALID_ARG);
    d.num_headers = 1;
    BAD_NODRV(gpuk_module_compile(A, &d, &m), GPUK_ERR_INVALID_ARG);
    memset(&d, 0, sizeof d);
    BAD_NODRV(gpuk_module_compile(A, &d, &m), GPUK_ERR_INVALID_ARG); /* no source */
    d.source = "__global__ void k() {}";
    d.log_bytes = 64; /* a log size without its buffer */
    BAD_NODRV(gpuk_module_compile(A, &d, &m), GPUK_ERR_INVALID_ARG);
}
static void row_module_link(void) {
    gpuk_module m;
    gpuk_link_input in[2];
    gpuk_link_desc d;
    gpuk_compile_desc cd;
    memset(in, 0, sizeof in);
    memset(&d, 0, sizeof d);
    memset(&cd, 0, sizeof cd);
    in[0].image.ptr = ptx;
    d.inputs = in;
    d.num_inputs = 1;
    BAD_NODRV(gpuk_module_link(NULL, &d, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_link(A, NULL, &m), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_module_link(A, &d, NULL), GPUK_ERR_INVALID_ARG);
    d.num_inputs = 0; /* nothing to link */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    d.num_inputs = 1;
    d.inputs = NULL;
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    d.inputs = in;
    d.log_bytes = 64; /* a log size without its buffer */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    d.log_bytes = 0;
    d._end_canary = 1;
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    d._end_canary = 0;
    in[0].path = "k.ptx"; /* two of image, path and compile */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].image.ptr = NULL;
    in[0].path = NULL; /* none of them */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].path = "";
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].path = "k.bin"; /* no kind to be read from its name */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].kind = (gpuk_link_kind)77;
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].path = NULL;
    in[0].kind = GPUK_LINK_PTX;
    in[0].compile = &cd; /* a kind for a compiled input */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].kind = GPUK_LINK_DEFAULT; /* a compile desc without its source */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
    in[0].compile = NULL;
    in[0].image.ptr = "nonsense"; /* not PTX */
    BAD_NODRV(gpuk_module_link(A, &d, &m), GPUK_ERR_INVALID_ARG);
}
static void row_module_lowered_name(void) {
    ZERO(gpuk_module_lowered_name(A, zmod, "k<int>"));
    ZERO(gpuk_module_lowered_name(A, mod_stale, "k<int>"));
    ZERO(gpuk_module_lowered_name(A, mod_b, "k<int>"));
    ZERO(gpuk_module_lowered_name(A, mod, "k<int>")); /* loaded, not compiled */
    ZERO(gpuk_module_lowered_name(NULL, mod, "k<int>"));
    ZERO(gpuk_module_lowered_name(A, mod, NULL));
}
static void row_nvrtc_version(void) { BAD_NODRV(gpuk_nvrtc_version(NULL), GPUK_ERR_INVALID_ARG); }
#define UNLOAD(h) gpuk_module_unload(A, h)
static void row_module_unload(void) { BAD_HANDLES(UNLOAD, zmod, mod_stale, mod_b); }
#define KGET(h) gpuk_kernel_get(A, h, "k", &k)
static void row_kernel_get(void) {
    gpuk_kernel k;
    BAD_HANDLES(KGET, zmod, mod_stale, mod_b);
    BAD_NODRV(gpuk_kernel_get(A, mod, NULL, &k), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_kernel_get(A, mod, "k", NULL), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_kernel_get(A, mod, "no_such_kernel", &k), 500); /* CUDA_ERROR_NOT_FOUND */
}
#define KQUERY(h) gpuk_kernel_query(A, h, &info)
static void row_kernel_query(void) {
    gpuk_kernel_info info;
    BAD_HANDLES(KQUERY, zker, ker_stale, ker_b);
    BAD_NODRV(gpuk_kernel_query(A, ker, NULL), GPUK_ERR_INVALID_ARG);
}
#define KSHARED(h) gpuk_kernel_set_max_dynamic_shared(A, h, 1024)
static void row_kernel_set_max_dynamic_shared(void) {
    BAD_HANDLES(KSHARED, zker, ker_stale, ker_b);
    BAD_NODRV(gpuk_kernel_set_max_dynamic_shared(A, ker, 0xFFFFFFFFu), GPUK_ERR_LIMIT);
}
#define KSUGGEST(h) gpuk_kernel_suggest_block(A, h, 0, &blk, &grid)
static void row_kernel_suggest_block(void) {
    int blk, grid;
    BAD_HANDLES(KSUGGEST, zker, ker_stale, ker_b);
    BAD_NODRV(gpuk_kernel_suggest_block(A, ker, 0, NULL, NULL), GPUK_ERR_INVALID_ARG);
}
static gpuk_devptr arg_p;
static uint32_t arg_n = 4;
static void* args[2] = { &arg_p, &arg_n };
#define LAUNCH(h) gpuk_launch(A, h, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 }, .args = args })
static void row_launch(void) {
    BAD_HANDLES(LAUNCH, zker, ker_stale, ker_b);
    BAD_NODRV(gpuk_launch(A, ker, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 0 }, .block = { 32 }, .args = args }), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 2048 }, .args = args }), GPUK_ERR_LIMIT);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 1, 70000 }, .block = { 32 }, .args = args }), GPUK_ERR_LIMIT);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 }, .shared_bytes = 1u << 30, .args = args }), GPUK_ERR_LIMIT);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 } }), GPUK_ERR_INVALID_ARG); /* args NULL */
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 }, .args = args, .num_args = 3 }), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 1 }, .block = { 32 }, .stream = { 999 }, .args = args }), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 3 }, .block = { 32 }, .args = args, .cluster = { 2 } }), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 16 }, .block = { 32 }, .args = args, .cluster = { 16 } }), GPUK_ERR_LIMIT);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 16 }, .block = { 32 }, .args = args, .cluster = { 0, 2, 1 } }), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 16 }, .block = { 32 }, .args = args,
                                                       .cluster = { 1u << 22, 1u << 21, 1u << 21 } }), GPUK_ERR_LIMIT);
    BAD(gpuk_launch(A, ker, &(gpuk_launch_desc){ .grid = { 100000 }, .block = { 32 }, .args = args, .cooperative = true }), GPUK_ERR_LIMIT);
}
#define KCOOP(h) gpuk_kernel_max_cooperative_grid(A, h, 32, 0, &blocks)
static void row_kernel_max_cooperative_grid(void) {
    uint32_t blocks;
    BAD_HANDLES(KCOOP, zker, ker_stale, ker_b);
    BAD_NODRV(gpuk_kernel_max_cooperative_grid(A, ker, 32, 0, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_kernel_max_cooperative_grid(A, ker, 0, 0, &blocks), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_kernel_max_cooperative_grid(A, ker, 2048, 0, &blocks), GPUK_ERR_LIMIT);
    BAD_NODRV(gpuk_kernel_max_cooperative_grid(NULL, ker, 32, 0, &blocks), GPUK_ERR_INVALID_ARG);
}
static void row_graph_begin_capture(void) {
    BAD_NODRV(gpuk_graph_begin_capture(A, str, GPUK_CAPTURE_NUM), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_begin_capture(NULL, str, GPUK_CAPTURE_DEFAULT), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_begin_capture(A, str_stale, GPUK_CAPTURE_DEFAULT), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_graph_begin_capture(A, str_b, GPUK_CAPTURE_DEFAULT), GPUK_ERR_INVALID_HANDLE);
}
static void row_graph_end_capture(void) {
    gpuk_graph g;
    BAD_NODRV(gpuk_graph_end_capture(A, str, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_end_capture(NULL, str, &g), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_end_capture(A, str_stale, &g), GPUK_ERR_INVALID_HANDLE);
    BAD(gpuk_graph_end_capture(A, str, &g), GPUK_ERR_INVALID_ARG); /* not being captured */
    cases++;
    CHECK(g.id == 0);
}
#define GUPDATE(h) gpuk_graph_update(A, str, h)
static void row_graph_update(void) {
    BAD_HANDLES(GUPDATE, zgr, gr_stale, gr_b);
    BAD_NODRV(gpuk_graph_update(A, str_stale, gr), GPUK_ERR_INVALID_HANDLE);
    BAD(gpuk_graph_update(A, str, gr), GPUK_ERR_INVALID_ARG); /* not being captured */
}
#define GLAUNCH(h) gpuk_graph_launch(A, str, h)
static void row_graph_launch(void) {
    BAD_HANDLES(GLAUNCH, zgr, gr_stale, gr_b);
    BAD_NODRV(gpuk_graph_launch(A, str_b, gr), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_graph_launch(NULL, str, gr), GPUK_ERR_INVALID_ARG);
}
static void row_graph_begin_while(void) {
    uint64_t cond = 7;
    BAD_NODRV(gpuk_graph_begin_while(A, str, 1, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_begin_while(NULL, str, 1, &cond), GPUK_ERR_INVALID_ARG);
    CHECK(cond == 0);
    BAD_NODRV(gpuk_graph_begin_while(A, str_stale, 1, &cond), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_graph_begin_while(A, str_b, 1, &cond), GPUK_ERR_INVALID_HANDLE);
}
static void row_graph_begin_if(void) {
    uint64_t cond = 7;
    BAD_NODRV(gpuk_graph_begin_if(A, str, 0, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_begin_if(NULL, str, 0, &cond), GPUK_ERR_INVALID_ARG);
    CHECK(cond == 0);
    BAD_NODRV(gpuk_graph_begin_if(A, str_stale, 0, &cond), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_graph_begin_if(A, str_b, 0, &cond), GPUK_ERR_INVALID_HANDLE);
}
static void row_graph_begin_body(void) {
    BAD_NODRV(gpuk_graph_begin_body(NULL, str), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_graph_begin_body(A, str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_graph_begin_body(A, str_b), GPUK_ERR_INVALID_HANDLE);
    BAD(gpuk_graph_begin_body(A, str), GPUK_ERR_INVALID_ARG); /* no conditional capture */
}
#define GDESTROY(h) gpuk_graph_destroy(A, h)
static void row_graph_destroy(void) {
    BAD_HANDLES(GDESTROY, zgr, gr_stale, gr_b);
    BAD_NODRV(gpuk_graph_destroy(NULL, gr), GPUK_ERR_INVALID_ARG);
}
static void row_elementwise_create(void) {
    gpuk_elementwise e;
    gpuk_elementwise_desc d;
    memset(&d, 0, sizeof d);
    d.params = "float* x";
    d.body = "x[i] = 0";
    BAD_NODRV(gpuk_elementwise_create(NULL, &d, &e), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_elementwise_create(A, NULL, &e), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_elementwise_create(A, &d, NULL), GPUK_ERR_INVALID_ARG);
    d.params = "float* x, foo y";
    BAD_NODRV(gpuk_elementwise_create(A, &d, &e), GPUK_ERR_INVALID_ARG);
    d.params = "float* x";
    d.body = NULL;
    BAD_NODRV(gpuk_elementwise_create(A, &d, &e), GPUK_ERR_INVALID_ARG);
    d.body = "x[i] = 0";
    d.params = "float* threadIdx"; /* a name the generated CUDA C++ cannot take */
    BAD_NODRV(gpuk_elementwise_create(A, &d, &e), GPUK_ERR_INVALID_ARG);
    d.params = "float* x";
    d.name = "operator";
    BAD_NODRV(gpuk_elementwise_create(A, &d, &e), GPUK_ERR_INVALID_ARG);
    d.name = NULL;
    d.log_bytes = 64; /* a log size without its buffer */
    BAD_NODRV(gpuk_elementwise_create(A, &d, &e), GPUK_ERR_INVALID_ARG);
}
/* a kernel struct around A's loaded kernel with no parameters, or around bad handles */
static gpuk_elementwise ew_of(gpuk_kernel k, uint32_t num_params) {
    gpuk_elementwise e;
    memset(&e, 0, sizeof e);
    e.module = mod;
    e.kernel = k;
    e.num_params = num_params;
    return e;
}
#define EWLAUNCH() gpuk_elementwise_launch(A, zstr, &ew, 10, NULL, 0)
static void row_elementwise_launch(void) {
    gpuk_elementwise ew;
    gpuk_arg one = gpuk_arg_f32(1.0f);
    ew = ew_of(zker, 0); BAD_NODRV(EWLAUNCH(), GPUK_ERR_INVALID_HANDLE);
    ew = ew_of(ker_stale, 0); BAD_NODRV(EWLAUNCH(), GPUK_ERR_INVALID_HANDLE);
    ew = ew_of(ker_b, 0); BAD_NODRV(EWLAUNCH(), GPUK_ERR_INVALID_HANDLE);
    ew = ew_of(ker, 0);
    BAD_NODRV(gpuk_elementwise_launch(NULL, zstr, &ew, 10, NULL, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_elementwise_launch(A, zstr, NULL, 10, NULL, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_elementwise_launch(A, str_stale, &ew, 10, NULL, 0), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_elementwise_launch(A, zstr, &ew, 10, &one, 1), GPUK_ERR_INVALID_ARG); /* 1 for 0 */
    ew = ew_of(ker, 99);
    BAD_NODRV(gpuk_elementwise_launch(A, zstr, &ew, 10, NULL, 0), GPUK_ERR_INVALID_ARG); /* damaged */
    {   /* "float* y, const double* x" in place: two element sizes at one start would race */
        gpuk_arg two[2];
        ew = ew_of(ker, 2);
        ew.param[0] = 1u | 0x20u;         /* float* */
        ew.param[1] = 2u | 0x20u | 0x40u; /* const double* */
        two[0] = gpuk_arg_array(gpuk_at(buf, 0));
        two[1] = gpuk_arg_array(gpuk_at(buf, 0));
        BAD_NODRV(gpuk_elementwise_launch(A, zstr, &ew, 4, two, 2), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("in place needs one element size");
    }
}
static void row_elementwise_destroy(void) {
    gpuk_elementwise e;
    BAD_NODRV(gpuk_elementwise_destroy(A, NULL), GPUK_ERR_INVALID_ARG);
    e = ew_of(ker, 0);
    BAD_NODRV(gpuk_elementwise_destroy(NULL, &e), GPUK_ERR_INVALID_ARG);
    e.module = zmod; BAD_NODRV(gpuk_elementwise_destroy(A, &e), GPUK_ERR_INVALID_HANDLE);
    e.module = mod_stale; BAD_NODRV(gpuk_elementwise_destroy(A, &e), GPUK_ERR_INVALID_HANDLE);
    e.module = mod_b; BAD_NODRV(gpuk_elementwise_destroy(A, &e), GPUK_ERR_INVALID_HANDLE);
}
static void row_reduction_create(void) {
    gpuk_reduction r;
    gpuk_reduction_desc d;
    memset(&d, 0, sizeof d);
    d.params = "const float* x";
    d.map = "x[i]";
    d.reduce = "a + b";
    d.identity = "0";
    d.type = "float";
    BAD_NODRV(gpuk_reduction_create(NULL, &d, &r), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_reduction_create(A, NULL, &r), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_reduction_create(A, &d, NULL), GPUK_ERR_INVALID_ARG);
    d.type = "struct pair";
    BAD_NODRV(gpuk_reduction_create(A, &d, &r), GPUK_ERR_INVALID_ARG);
    d.type = "float";
    d.reduce = NULL;
    BAD_NODRV(gpuk_reduction_create(A, &d, &r), GPUK_ERR_INVALID_ARG);
}
static gpuk_reduction red_of(gpuk_kernel k, uint8_t type) {
    gpuk_reduction r;
    memset(&r, 0, sizeof r);
    r.module = mod;
    r.kernel = k;
    r.type = type;
    return r;
}
#define REDLAUNCH() gpuk_reduction_launch(A, zstr, &rk, gpuk_at(buf, 0), 10, NULL, 0)
static void row_reduction_launch(void) {
    gpuk_reduction rk;
    rk = red_of(zker, 1); BAD_NODRV(REDLAUNCH(), GPUK_ERR_INVALID_HANDLE);
    rk = red_of(ker_stale, 1); BAD_NODRV(REDLAUNCH(), GPUK_ERR_INVALID_HANDLE);
    rk = red_of(ker_b, 1); BAD_NODRV(REDLAUNCH(), GPUK_ERR_INVALID_HANDLE);
    rk = red_of(ker, 1);
    BAD_NODRV(gpuk_reduction_launch(NULL, zstr, &rk, gpuk_at(buf, 0), 10, NULL, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_reduction_launch(A, zstr, NULL, gpuk_at(buf, 0), 10, NULL, 0), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_reduction_launch(A, zstr, &rk, gpuk_at(buf, 16), 10, NULL, 0), GPUK_ERR_OUT_OF_BOUNDS);
    BAD_NODRV(gpuk_reduction_launch(A, zstr, &rk, gpuk_at(buf_b, 0), 10, NULL, 0), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(gpuk_reduction_launch(A, zstr, &rk, gpuk_at(buf_stale, 0), 10, NULL, 0), GPUK_ERR_INVALID_HANDLE);
    rk = red_of(ker, 0);
    BAD_NODRV(REDLAUNCH(), GPUK_ERR_INVALID_ARG); /* damaged: no type */
}
static void row_reduction_destroy(void) {
    gpuk_reduction r = red_of(ker, 1);
    BAD_NODRV(gpuk_reduction_destroy(A, NULL), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_reduction_destroy(NULL, &r), GPUK_ERR_INVALID_ARG);
    r.module = zmod; BAD_NODRV(gpuk_reduction_destroy(A, &r), GPUK_ERR_INVALID_HANDLE);
    r.module = mod_stale; BAD_NODRV(gpuk_reduction_destroy(A, &r), GPUK_ERR_INVALID_HANDLE);
    r.module = mod_b; BAD_NODRV(gpuk_reduction_destroy(A, &r), GPUK_ERR_INVALID_HANDLE);
}
static void row_kernels_loaded(void) { ZERO(gpuk_kernels_loaded(NULL)); }
static void row_kernels_load(void) {
    BAD_NODRV(gpuk_kernels_load(NULL, "sum_f32"), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(gpuk_kernels_load(A, NULL), GPUK_ERR_INVALID_ARG);
    BAD(gpuk_kernels_load(A, "sum_f32, no_such_kernel"), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("'no_such_kernel'");
    BAD(gpuk_kernels_load(A, "gpuk_sum_f3"), GPUK_ERR_INVALID_ARG); /* whole names, or a '*' */
}
#define RESERVE(h) gpuk_kernels_reserve(A, h, 1000)
static void row_kernels_reserve(void) {
    BAD_NODRV(gpuk_kernels_reserve(NULL, zstr, 1000), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(RESERVE(str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(RESERVE(str_b), GPUK_ERR_INVALID_HANDLE);
    BAD(gpuk_kernels_reserve(A, zstr, (size_t)1 << 62), 2); /* more scratch than the device has */
}
#define RESERVE_SORT(h) gpuk_kernels_reserve_sort(A, h, 1000)
static void row_kernels_reserve_sort(void) {
    BAD_NODRV(gpuk_kernels_reserve_sort(NULL, zstr, 1000), GPUK_ERR_INVALID_ARG);
    BAD_NODRV(RESERVE_SORT(str_stale), GPUK_ERR_INVALID_HANDLE);
    BAD_NODRV(RESERVE_SORT(str_b), GPUK_ERR_INVALID_HANDLE);
    BAD(gpuk_kernels_reserve_sort(A, zstr, (size_t)1 << 61), GPUK_ERR_LIMIT); /* past SIZE_MAX */
    BAD(gpuk_kernels_reserve_sort(A, zstr, (size_t)1 << 50), 2); /* more than the device has */
}

typedef struct row { const char* name; void (*fn)(void); } row;
#define ROW(f) { "gpuk_" #f, row_##f }
static const row rows[] = {
    ROW(init), ROW(shutdown), ROW(driver_version), ROW(features), ROW(driver_symbol), ROW(result_str),
    ROW(last_error), ROW(log_stderr), ROW(desc_defaults), ROW(ctx_desc_defaults), ROW(buffer_desc_defaults),
    ROW(pinned_desc_defaults), ROW(module_desc_defaults), ROW(launch_desc_defaults), ROW(device_count), ROW(device_query), ROW(device_attribute),
    ROW(ctx_create), ROW(ctx_destroy), ROW(ctx_sync), ROW(ctx_mem_info), ROW(ctx_device_info),
    ROW(ctx_make_current), ROW(ctx_set_limit), ROW(ctx_get_limit), ROW(buffer_create), ROW(buffer_destroy), ROW(buffer_size), ROW(buffer_devptr),
    ROW(buffer_write), ROW(buffer_read), ROW(buffer_copy), ROW(buffer_download), ROW(host_free),
    ROW(array2d_resolve), ROW(array_resolve), ROW(buffer_write_async), ROW(buffer_read_async),
    ROW(buffer_copy_async), ROW(buffer_copy_peer), ROW(buffer_copy_peer_async),
    ROW(buffer_export), ROW(buffer_import), ROW(event_export), ROW(event_import),
    ROW(device_can_access_peer), ROW(ctx_enable_peer_access), ROW(buffer_memset), ROW(buffer_create_async),
    ROW(buffer_free_async), ROW(mempool_set_release_threshold), ROW(mempool_get_release_threshold),
    ROW(mempool_trim), ROW(pinned_create), ROW(pinned_destroy), ROW(pinned_ptr),
    ROW(buffer_create_mapped), ROW(buffer_create_managed), ROW(buffer_host_ptr),
    ROW(buffer_prefetch), ROW(buffer_advise),
    ROW(pinned_size), ROW(stream_create), ROW(stream_destroy), ROW(stream_sync), ROW(stream_query),
    ROW(stream_wait), ROW(stream_wait_peer), ROW(stream_join), ROW(stream_fork), ROW(stream_host_func), ROW(stream_native), ROW(stream_priority_range),
    ROW(event_create), ROW(event_destroy), ROW(event_record), ROW(event_sync), ROW(event_query),
    ROW(event_elapsed_ms), ROW(timer_create), ROW(timer_destroy), ROW(timer_start), ROW(timer_stop),
    ROW(module_load), ROW(module_unload), ROW(module_compile), ROW(module_link), ROW(module_lowered_name),
    ROW(nvrtc_version), ROW(kernel_get), ROW(kernel_query),
    ROW(kernel_set_max_dynamic_shared), ROW(kernel_suggest_block), ROW(launch),
    ROW(kernel_max_cooperative_grid), ROW(graph_begin_capture), ROW(graph_end_capture),
    ROW(graph_update), ROW(graph_launch), ROW(graph_destroy), ROW(graph_begin_while),
    ROW(graph_begin_if), ROW(graph_begin_body), ROW(kernels_loaded), ROW(kernels_load),
    ROW(kernels_reserve), ROW(kernels_reserve_sort), ROW(elementwise_create), ROW(elementwise_launch), ROW(elementwise_destroy),
    ROW(reduction_create), ROW(reduction_launch), ROW(reduction_destroy),
};

/* The public functions gpuk.h declares outside the generated kernel section. */
static int declared(char names[][64], int cap) {
    FILE* f = fopen("gpuk.h", "r");
    char line[512];
    int n = 0, generated = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f) && !strstr(line, "#ifdef GPUK_IMPLEMENTATION")) {
        char* p;
        if (strstr(line, "GPUK_GENERATED_BEGIN(kernels)")) generated = 1;
        if (strstr(line, "GPUK_GENERATED_END(kernels)")) generated = 0;
        if (generated || strncmp(line, "GPUK_API ", 9) != 0 || !(p = strstr(line, "gpuk_"))) continue;
        while (strstr(p + 1, "gpuk_") && strstr(p + 1, "gpuk_") < strchr(p, '(')) p = strstr(p + 1, "gpuk_");
        if (n < cap) { size_t len = (size_t)(strchr(p, '(') - p); snprintf(names[n++], 64, "%.*s", (int)len, p); }
    }
    fclose(f);
    return n;
}

static int test_every_public_function_has_a_row(void) {
    static char names[128][64];
    int n = declared(names, 128), i;
    size_t j;
    CHECK(n > 50);
    for (i = 0; i < n; i++) {
        int found = 0;
        for (j = 0; j < sizeof rows / sizeof rows[0]; j++) found |= strcmp(rows[j].name, names[i]) == 0;
        if (!found) fprintf(stderr, "  %s has no row in tests/unit/unit_bad_input.c\n", names[i]);
        CHECK(found);
    }
    printf("     %d public functions, %zu rows\n", n, sizeof rows / sizeof rows[0]);
    return TEST_PASS;
}

static void setup(void) {
    gpuk_desc d;
    fake_config cfg;
    gpuk_buffer b;
    gpuk_pinned p;
    gpuk_stream s;
    gpuk_event e;
    gpuk_module m;
    gpuk_kernel k;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    fake_reset(&cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &A));
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &B));
#define MAKE_ALL(c, bb, pp, ss, ee, mm, kk) \
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 64 }, &bb)); \
    CHECK_OK(gpuk_pinned_create(c, &(gpuk_pinned_desc){ .bytes = 64 }, &pp)); \
    CHECK_OK(gpuk_stream_create(c, NULL, &ss)); \
    CHECK_OK(gpuk_event_create(c, NULL, &ee)); \
    CHECK_OK(gpuk_module_load(c, &(gpuk_module_desc){ .image = { ptx, 0 } }, &mm)); \
    CHECK_OK(gpuk_kernel_get(c, mm, "k", &kk));
    MAKE_ALL(A, buf, pin, str, ev, mod, ker)
    MAKE_ALL(B, buf_b, pin_b, str_b, ev_b, mod_b, ker_b)
    MAKE_ALL(A, b, p, s, e, m, k)
#undef MAKE_ALL
    buf_stale = b; pin_stale = p; str_stale = s; ev_stale = e; mod_stale = m; ker_stale = k;
    CHECK_OK(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .bytes = 64 }, &abuf));
    CHECK_OK(gpuk_buffer_create_async(A, str, &(gpuk_buffer_desc){ .bytes = 64 }, &abuf_stale));
    CHECK_OK(gpuk_buffer_free_async(A, str, abuf_stale));
    CHECK_OK(gpuk_buffer_create_async(A, s, &(gpuk_buffer_desc){ .bytes = 64 }, &abuf_orphan));
    CHECK_OK(gpuk_buffer_create_managed(A, &(gpuk_buffer_desc){ .bytes = 64 }, &mbuf));
    CHECK_OK(gpuk_buffer_destroy(A, b));
    CHECK_OK(gpuk_pinned_destroy(A, p));
    CHECK_OK(gpuk_stream_destroy(A, s));
    CHECK_OK(gpuk_event_destroy(A, e));
    CHECK_OK(gpuk_module_unload(A, m)); /* takes its kernel with it */
#define MAKE_GRAPH(c, s, g) \
    CHECK_OK(gpuk_graph_begin_capture(c, s, GPUK_CAPTURE_DEFAULT)); \
    CHECK_OK(gpuk_graph_end_capture(c, s, &g));
    MAKE_GRAPH(A, str, gr)
    MAKE_GRAPH(B, str_b, gr_b)
    MAKE_GRAPH(A, str, gr_stale)
#undef MAKE_GRAPH
    CHECK_OK(gpuk_graph_destroy(A, gr_stale));
    arg_p = gpuk_buffer_devptr(A, buf);
}

static int test_bad_input_table(void) {
    size_t i;
    /* gpuk_init's own checks run before gpuk is up (a second init returns at once) */
    gpuk_shutdown();
    fake_reset(NULL);
    row_name = "gpuk_init";
    row_init();
    setup();
    for (i = 1; i < sizeof rows / sizeof rows[0]; i++) { /* rows[0] is init, done above */
        int before = check_failures;
        row_name = rows[i].name;
        rows[i].fn();
        if (check_failures != before) fprintf(stderr, "  in the row of %s\n", row_name);
    }
    printf("     %d bad-input cases over %zu functions\n", cases, sizeof rows / sizeof rows[0]);
    CHECK_OK(gpuk_ctx_destroy(B));
    CHECK_OK(gpuk_ctx_destroy(A));
    CHECK(fake_all_released() && fake.protocol_errors == 0);
    CHECK_OK(gpuk_shutdown());
    return TEST_PASS;
}

int main(void) {
    RUN(test_every_public_function_has_a_row);
    RUN(test_bad_input_table);
    return test_summary();
}
