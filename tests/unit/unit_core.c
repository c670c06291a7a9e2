/* tests/unit/unit_core.c - every public function against the fake driver: results, error texts,
   handle rules, limits, sticky faults, fork, threads, teardown. No GPU needed.
   cc -std=c99 -I../.. unit_core.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <pthread.h>
#include <semaphore.h>
#include <sys/wait.h>
#include <unistd.h>

static const char scale_ptx[] =
    "// scale: p[i] *= s\n"
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry scale(.param .u64 p, .param .f32 s, .param .u32 n)\n{\n ret;\n}\n";

static void free_wrapper_unused(void* p, void* user) { (void)user; free(p); }
static void host_counter(void* user) { ++*(int*)user; }

static char captured[4096];
static int captured_count;
static pthread_mutex_t captured_lock = PTHREAD_MUTEX_INITIALIZER; /* the logger runs on any thread */
static void capture_log(void* user, gpuk_log_level level, int code, const char* msg) {
    (void)user; (void)level; (void)code;
    pthread_mutex_lock(&captured_lock);
    captured_count++;
    snprintf(captured, sizeof captured, "%s", msg);
    pthread_mutex_unlock(&captured_lock);
}

/* Start gpuk on the fake driver with cfg; returns a ctx on device 0 (NULL when want_ctx is 0). */
static gpuk_ctx* fake_up(const fake_config* cfg, int want_ctx) {
    gpuk_desc d;
    gpuk_ctx* ctx = NULL;
    gpuk_shutdown();
    fake_reset(cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.logger.func = capture_log;
    d.log_level = GPUK_LOG_DEBUG;
    captured[0] = 0;
    captured_count = 0;
    CHECK_OK(gpuk_init(&d));
    if (want_ctx) {
        gpuk_ctx_desc cd;
        memset(&cd, 0, sizeof cd);
        CHECK_OK(gpuk_ctx_create(&cd, &ctx));
    }
    return ctx;
}

/* Destroy ctx, then require that the driver got everything back and saw no misuse. */
static void fake_down(gpuk_ctx* ctx) {
    if (ctx) CHECK_OK(gpuk_ctx_destroy(ctx));
    CHECK(fake_all_released());
    if (fake.protocol_errors) fprintf(stderr, "  fake driver: %s\n", fake.protocol_msg);
    CHECK(fake.protocol_errors == 0);
    CHECK_OK(gpuk_shutdown());
}

static gpuk_buffer make_buffer(gpuk_ctx* ctx, size_t bytes, const char* label) {
    gpuk_buffer b;
    gpuk_buffer_desc d;
    memset(&d, 0, sizeof d);
    d.bytes = bytes;
    d.label = label;
    CHECK_OK(gpuk_buffer_create(ctx, &d, &b));
    return b;
}

static gpuk_kernel load_scale(gpuk_ctx* ctx, gpuk_module* out_mod) {
    gpuk_module_desc md;
    gpuk_kernel k = { 0 };
    memset(&md, 0, sizeof md);
    md.image.ptr = scale_ptx;
    md.label = "scale";
    CHECK_OK(gpuk_module_load(ctx, &md, out_mod));
    CHECK_OK(gpuk_kernel_get(ctx, *out_mod, "scale", &k));
    return k;
}

/* GPUK_VERSION_* agree with gpuk.h's line 1, with each other and with the newest release in
   CHANGELOG.md. */
static int test_version_macros_match_doc_line(void) {
    FILE* f = fopen("../gpuk.h", "r");
    char line[128], want[128];
    if (!f) f = fopen("gpuk.h", "r");
    CHECK(f != NULL);
    if (!f) return TEST_PASS;
    CHECK(fgets(line, sizeof line, f) != NULL);
    fclose(f);
    snprintf(want, sizeof want, "/* gpuk.h - v%d.%d.%d - ", GPUK_VERSION_MAJOR, GPUK_VERSION_MINOR, GPUK_VERSION_PATCH);
    CHECK(strncmp(line, want, strlen(want)) == 0);
    CHECK(strstr(line, GPUK_VERSION_STRING) != NULL);
    CHECK(GPUK_VERSION == GPUK_VERSION_MAJOR * 10000 + GPUK_VERSION_MINOR * 100 + GPUK_VERSION_PATCH);
#define VERSION_STR_(x) #x
#define VERSION_STR(x) VERSION_STR_(x)
    CHECK(strcmp(GPUK_VERSION_STRING, VERSION_STR(GPUK_VERSION_MAJOR) "." VERSION_STR(GPUK_VERSION_MINOR)
                                      "." VERSION_STR(GPUK_VERSION_PATCH)) == 0);
    /* and the newest release in CHANGELOG.md ("## 0.3.0 — date", below "## Unreleased") */
    f = fopen("../CHANGELOG.md", "r");
    if (!f) f = fopen("CHANGELOG.md", "r");
    CHECK(f != NULL);
    if (!f) return TEST_PASS;
    while (fgets(line, sizeof line, f) && (strncmp(line, "## ", 3) != 0 || strncmp(line, "## Unreleased", 13) == 0)) {}
    fclose(f);
    snprintf(want, sizeof want, "## %s ", GPUK_VERSION_STRING);
    CHECK(strncmp(line, want, strlen(want)) == 0);
    return TEST_PASS;
}

static int test_result_str_never_null(void) {
    int c;
    for (c = -20; c <= 1000; c++) {
        const char* s = gpuk_result_str((gpuk_result)c);
        CHECK(s != NULL && s[0]);
    }
    CHECK(strcmp(gpuk_result_str((gpuk_result)222), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION") == 0);
    CHECK(strcmp(gpuk_result_str((gpuk_result)700), "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
    CHECK(strcmp(gpuk_result_str(GPUK_ERR_INVALID_HANDLE), "GPUK_ERR_INVALID_HANDLE") == 0);
    CHECK(strcmp(gpuk_result_str(GPUK_ERR_OUT_OF_BOUNDS), "GPUK_ERR_OUT_OF_BOUNDS") == 0);
    CHECK(strcmp(gpuk_result_str((gpuk_result)12345), "CUDA_ERROR_(unknown code)") == 0);
    return TEST_PASS;
}

static int test_no_driver_library(void) {
    gpuk_desc d;
    int n = -1;
    gpuk_shutdown();
    memset(&d, 0, sizeof d);
    d.driver_path = "/nonexistent/libcuda.so.1";
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_NO_DRIVER);
    CHECK_ERROR_MENTIONS("/nonexistent/libcuda.so.1");
    CHECK_ERROR_MENTIONS("install the NVIDIA driver");
    /* later implicit inits give the same failure, with its text and one hint, not a new try */
    CHECK_RESULT(gpuk_device_count(&n), GPUK_ERR_NO_DRIVER);
    CHECK_ERROR_MENTIONS("gpuk_device_count: gpuk_init failed earlier");
    CHECK_ERROR_MENTIONS("/nonexistent/libcuda.so.1");
    {
        const char* hint = strstr(gpuk_last_error(), "(hint:");
        CHECK(hint != NULL && strstr(hint + 1, "(hint:") == NULL);
        CHECK(gpuk_last_error()[strlen(gpuk_last_error()) - 1] == ')'); /* not cut inside the hint */
    }
    CHECK(gpuk_features() == 0);
    gpuk_shutdown();
    return TEST_PASS;
}

static int test_init_rejects_bad_desc(void) {
    gpuk_desc d;
    gpuk_shutdown();
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.allocator.alloc_fn = NULL;
    d.allocator.free_fn = free_wrapper_unused;
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("allocator");
    memset(&d, 0, sizeof d);
    d._start_canary = 1;
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("canaries");
    memset(&d, 0, sizeof d);
    d.log_level = GPUK_LOG_NUM;
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    return TEST_PASS;
}

static int test_old_driver(void) {
    fake_config cfg;
    gpuk_desc d;
    memset(&cfg, 0, sizeof cfg);
    /* 11.2: no cuFuncGetParamInfo; gpuk still works, the feature bit is off */
    cfg.version = 11020;
    fake_down(fake_up(&cfg, 1));
    fake_up(&cfg, 0);
    CHECK((gpuk_features() & GPUK_FEATURE_PARAM_INFO) == 0);
    CHECK_OK(gpuk_shutdown());
    cfg.version = 12080;
    fake_up(&cfg, 0);
    CHECK((gpuk_features() & GPUK_FEATURE_PARAM_INFO) != 0);
    CHECK_OK(gpuk_shutdown());
    /* a required entry point missing: named, with the CUDA version that has it */
    cfg.missing[0] = "cuLaunchHostFunc";
    fake_reset(&cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuLaunchHostFunc");
    CHECK_ERROR_MENTIONS("CUDA 10.0");
    /* a driver older than gpuk's floor */
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 9020;
    fake_reset(&cfg);
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("9.2");
    gpuk_shutdown();
    return TEST_PASS;
}

static int test_cuinit_failure_has_hint(void) {
    fake_config cfg;
    gpuk_desc d;
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_name = "cuInit";
    cfg.fail_code = 100;
    gpuk_shutdown();
    fake_reset(&cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    CHECK_RESULT(gpuk_init(&d), (gpuk_result)100);
    CHECK_ERROR_MENTIONS("cuInit: CUDA_ERROR_NO_DEVICE (100)");
    CHECK_ERROR_MENTIONS("nvidia-smi");
    gpuk_shutdown();
    return TEST_PASS;
}

static int test_device_query(void) {
    fake_config cfg;
    gpuk_device_info info;
    int n = 0, v = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    fake_up(&cfg, 0);
    CHECK_OK(gpuk_device_count(&n));
    CHECK(n == 2);
    CHECK_OK(gpuk_device_query(1, &info));
    CHECK(strcmp(info.name, "Fake GPU 1") == 0);
    CHECK(info.cc_major == 9 && info.cc_minor == 0 && info.sm_count == 132);
    CHECK(info.max_block[2] == 64 && info.max_grid[1] == 65535 && info.warp_size == 32);
    CHECK(strcmp(info.pci_bus_id, "0000:02:00.0") == 0);
    CHECK(info.driver_version == 13000);
    CHECK_OK(gpuk_device_attribute(0, 16, &v));
    CHECK(v == 132);
    CHECK_RESULT(gpuk_device_query(2, &info), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("device 2 does not exist (2 CUDA devices)");
    CHECK(info.name[0] == 0);
    CHECK_RESULT(gpuk_device_query(-1, &info), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_device_query(0, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_device_count(NULL), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_device_attribute(0, 16, NULL), GPUK_ERR_INVALID_ARG);
    fake_down(NULL);
    return TEST_PASS;
}

static int test_copies_round_trip_and_bounds(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    unsigned char src[1000], dst[1000];
    gpuk_buffer a = make_buffer(ctx, 1000, "a"), b = make_buffer(ctx, 600, "b");
    size_t i;
    for (i = 0; i < sizeof src; i++) src[i] = (unsigned char)(rand() & 0xFF);
    memset(dst, 0x5A, sizeof dst);
    CHECK(gpuk_buffer_size(ctx, a) == 1000 && gpuk_buffer_devptr(ctx, a) != 0);
    CHECK_OK(gpuk_buffer_write(ctx, a, 0, src, 1000));
    CHECK_OK(gpuk_buffer_copy(ctx, b, 100, a, 300, 500));
    CHECK_OK(gpuk_buffer_read(ctx, b, 100, dst, 500));
    CHECK(memcmp(dst, src + 300, 500) == 0);
    CHECK_OK(gpuk_buffer_read_async(ctx, GPUK_DEFAULT_STREAM, a, 999, dst, 1));
    CHECK(dst[0] == src[999]);
    /* bounds: past the end, overflow of offset + bytes */
    CHECK_RESULT(gpuk_buffer_write(ctx, a, 1, src, 1000), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("buffer 'a' of 1000 bytes");
    CHECK_RESULT(gpuk_buffer_read(ctx, a, (size_t)-1, dst, 2), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_copy(ctx, b, 0, a, 0, 601), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_copy(ctx, a, 0, b, 500, 101), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_write(ctx, a, 0, NULL, 10), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_read(ctx, a, 0, NULL, 10), GPUK_ERR_INVALID_ARG);
    /* zero bytes: handles still checked, nothing copied */
    CHECK_OK(gpuk_buffer_write(ctx, a, 1000, NULL, 0));
    CHECK_RESULT(gpuk_buffer_write(ctx, (gpuk_buffer){ 0 }, 0, src, 0), GPUK_ERR_INVALID_HANDLE);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_memset_widths(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_buffer a = make_buffer(ctx, 64, "m");
    unsigned char out[64];
    uint16_t h;
    uint32_t w;
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 0, 0x11, 1, 64));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 8, 0xBEEF, 2, 4));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 32, 0xCAFEF00Du, 4, 2));
    CHECK_OK(gpuk_buffer_read(ctx, a, 0, out, 64));
    CHECK(out[0] == 0x11 && out[7] == 0x11 && out[16] == 0x11 && out[63] == 0x11);
    memcpy(&h, out + 14, 2);
    CHECK(h == 0xBEEF);
    memcpy(&w, out + 36, 4);
    CHECK(w == 0xCAFEF00Du);
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 1, 0, 4, 1), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("aligned");
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 0, 0, 3, 1), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 0, 0x100, 1, 1), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 0, 0, 4, 17), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 0, 0, 4, (size_t)-1 / 2), GPUK_ERR_OUT_OF_BOUNDS);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_size_zero_is_a_valid_empty_object(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_buffer z = make_buffer(ctx, 0, "empty");
    gpuk_pinned p;
    gpuk_pinned_desc pd;
    CHECK(z.id != 0);
    CHECK(gpuk_buffer_devptr(ctx, z) == 0 && gpuk_buffer_size(ctx, z) == 0);
    CHECK_OK(gpuk_buffer_write(ctx, z, 0, "x", 0));
    CHECK_RESULT(gpuk_buffer_write(ctx, z, 0, "x", 1), GPUK_ERR_OUT_OF_BOUNDS);
    memset(&pd, 0, sizeof pd);
    CHECK_OK(gpuk_pinned_create(ctx, &pd, &p));
    CHECK(p.id != 0 && gpuk_pinned_ptr(ctx, p) == NULL);
    CHECK_OK(gpuk_pinned_destroy(ctx, p));
    CHECK_OK(gpuk_buffer_destroy(ctx, z));
    CHECK(fake_live_count(FK_ALLOC) == 0);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_pinned_alloc_and_register(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_pinned p, r;
    gpuk_pinned_desc pd;
    static char mine[4096];
    memset(&pd, 0, sizeof pd);
    pd.bytes = 1 << 16;
    CHECK_OK(gpuk_pinned_create(ctx, &pd, &p));
    CHECK(gpuk_pinned_ptr(ctx, p) != NULL && gpuk_pinned_size(ctx, p) == (1u << 16));
    pd.bytes = sizeof mine;
    pd.host_ptr = mine;
    CHECK_OK(gpuk_pinned_create(ctx, &pd, &r));
    CHECK(gpuk_pinned_ptr(ctx, r) == mine);
    CHECK(fake_live_count(FK_REGISTERED) == 1);
    CHECK_OK(gpuk_pinned_destroy(ctx, r));
    CHECK(fake_live_count(FK_REGISTERED) == 0);
    CHECK_RESULT(gpuk_pinned_destroy(ctx, r), GPUK_ERR_INVALID_HANDLE);
    pd.bytes = 0;
    CHECK_RESULT(gpuk_pinned_create(ctx, &pd, &r), GPUK_ERR_INVALID_ARG);
    CHECK(r.id == 0);
    /* p is left for ctx destroy to free */
    fake_down(ctx);
    return TEST_PASS;
}

static int test_async_from_pageable_is_reported(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_buffer a = make_buffer(ctx, 256, "a");
    gpuk_pinned p;
    gpuk_pinned_desc pd;
    char pageable[256];
    memset(pageable, 1, sizeof pageable);
    captured_count = 0;
    CHECK_OK(gpuk_buffer_write_async(ctx, GPUK_DEFAULT_STREAM, a, 0, pageable, sizeof pageable));
#if GPUK_DEBUG
    CHECK(captured_count == 1 && strstr(captured, "pageable") != NULL);
#endif
    memset(&pd, 0, sizeof pd);
    pd.bytes = 256;
    CHECK_OK(gpuk_pinned_create(ctx, &pd, &p));
    captured_count = 0;
    CHECK_OK(gpuk_buffer_write_async(ctx, GPUK_DEFAULT_STREAM, a, 0, gpuk_pinned_ptr(ctx, p), 256));
    CHECK(captured_count == 0);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_stale_zero_and_foreign_handles(void) {
    fake_config cfg;
    gpuk_ctx* ctx;
    gpuk_ctx* other = NULL;
    gpuk_ctx_desc cd;
    gpuk_buffer a, b;
    gpuk_stream s;
    gpuk_event e;
    gpuk_module m;
    gpuk_kernel k;
    char buf[16];
    long calls;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    ctx = fake_up(&cfg, 1);
    memset(&cd, 0, sizeof cd);
    cd.device = 1;
    CHECK_OK(gpuk_ctx_create(&cd, &other));
    a = make_buffer(ctx, 16, "a");
    b = make_buffer(other, 16, "b");
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e));
    k = load_scale(ctx, &m);
    /* a handle of another ctx never reaches the driver */
    calls = fake.calls;
    CHECK_RESULT(gpuk_buffer_write(ctx, b, 0, buf, 16), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("belongs to another ctx");
    CHECK_RESULT(gpuk_stream_sync(other, s), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_record(other, GPUK_DEFAULT_STREAM, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_kernel_query(other, k, &(gpuk_kernel_info){ 0 }), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_destroy(other, a), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_buffer_devptr(other, a) == 0);
    CHECK(fake.calls == calls);
    /* destroyed handles: stale, and the driver is never handed the dead CUstream/CUevent */
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_event_destroy(ctx, e));
    CHECK_OK(gpuk_module_unload(ctx, m));
    CHECK_OK(gpuk_buffer_destroy(ctx, a));
    calls = fake.calls;
    CHECK_RESULT(gpuk_stream_sync(ctx, s), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_stream_destroy(ctx, s), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_sync(ctx, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_destroy(ctx, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_buffer_read(ctx, a, 0, buf, 1), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_kernel_get(ctx, m, "scale", &k), GPUK_ERR_INVALID_HANDLE);
    CHECK(k.id == 0);
    CHECK(fake.calls == calls);
    CHECK(gpuk_stream_native(ctx, s) == NULL);
    CHECK(gpuk_stream_native(ctx, GPUK_DEFAULT_STREAM) != NULL);
    /* zero handles */
    CHECK_RESULT(gpuk_buffer_destroy(ctx, (gpuk_buffer){ 0 }), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("handle is zero");
    CHECK_RESULT(gpuk_event_record(ctx, GPUK_DEFAULT_STREAM, (gpuk_event){ 0 }), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_module_unload(ctx, (gpuk_module){ 0 }), GPUK_ERR_INVALID_HANDLE);
    /* a slot reused by a new object does not revive the old handle (free slots are reused
       oldest first: create and destroy until a's slot comes round) */
    {
        uint32_t slot_mask = (1u << ctx->pools[gpuk__kind_buffer].slot_bits) - 1u;
        gpuk_buffer c = make_buffer(ctx, 16, "c");
        int n;
        for (n = 0; n < 5000 && (c.id & slot_mask) != (a.id & slot_mask); n++) {
            CHECK_OK(gpuk_buffer_destroy(ctx, c));
            c = make_buffer(ctx, 16, "c");
        }
        CHECK((c.id & slot_mask) == (a.id & slot_mask));
        CHECK(c.id != a.id);
        CHECK_RESULT(gpuk_buffer_write(ctx, a, 0, buf, 1), GPUK_ERR_INVALID_HANDLE);
    }
    CHECK_OK(gpuk_ctx_destroy(other));
    fake_down(ctx);
    return TEST_PASS;
}

static int test_unloading_a_module_kills_its_kernels(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_module m;
    gpuk_kernel k = load_scale(ctx, &m);
    gpuk_launch_desc ld;
    CHECK_OK(gpuk_module_unload(ctx, m));
    memset(&ld, 0, sizeof ld);
    ld.grid.x = ld.block.x = 1;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_INVALID_HANDLE);
    CHECK(fake.launches == 0);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_launch_limits_and_args(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_module m;
    gpuk_kernel k = load_scale(ctx, &m);
    gpuk_kernel_info ki;
    gpuk_launch_desc ld;
    gpuk_devptr p = 0;
    float s = 2.0f;
    unsigned n = 10;
    void* args[3] = { &p, &s, &n };
    size_t sizes_ok[3] = { 8, 4, 4 }, sizes_bad[3] = { 8, 8, 4 };
    int block = 0, grid = 0;
    memset(&ld, 0, sizeof ld);
    ld.grid.x = 4; ld.block.x = 256; ld.args = args; ld.num_args = 3; ld.arg_sizes = sizes_ok;
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK(fake.launches == 1);
    ld.block.x = 1025;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("block.x = 1025 exceeds the limit of 1024");
    ld.block.x = 32; ld.block.y = 64;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("2048 threads");
    ld.block.y = 0; ld.block.z = 65;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("block.z");
    ld.block.z = 0; ld.grid.y = 65536;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("grid.y = 65536");
    ld.grid.y = 0; ld.grid.x = 0;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("grid.x is 0");
    ld.grid.x = 1; ld.shared_bytes = 49153;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("gpuk_kernel_set_max_dynamic_shared");
    CHECK_OK(gpuk_kernel_set_max_dynamic_shared(ctx, k, 100000));
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK_RESULT(gpuk_kernel_set_max_dynamic_shared(ctx, k, 300000), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("opt-in limit of 232448");
    ld.shared_bytes = 0;
    ld.args = NULL;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("takes 3 parameters but args is NULL");
    ld.args = args;
#if GPUK_DEBUG
    ld.num_args = 2;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("takes 3 parameters, num_args is 2");
    ld.num_args = 3; ld.arg_sizes = sizes_bad;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("argument 1 is 8 bytes, the parameter is 4 bytes");
    ld.arg_sizes = NULL; args[2] = NULL;
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("args[2] is NULL");
    args[2] = &n;
#endif
    CHECK_RESULT(gpuk_launch(ctx, k, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_launch(NULL, k, &ld), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_kernel_query(ctx, k, &ki));
    CHECK(ki.num_params == 3 && ki.max_threads_per_block == 1024 && ki.max_dynamic_shared_bytes == 100000);
    CHECK_OK(gpuk_kernel_suggest_block(ctx, k, 0, &block, &grid));
    CHECK(block == 512 && grid == 264);
    CHECK_RESULT(gpuk_kernel_get(ctx, m, "missing", &k), (gpuk_result)500);
    CHECK_ERROR_MENTIONS("no kernel 'missing' in module 'scale'");
    CHECK_ERROR_MENTIONS("extern \"C\"");
    fake_down(ctx);
    return TEST_PASS;
}

static int test_module_ptx_checks_and_jit_log(void) {
    fake_config cfg;
    gpuk_ctx* ctx;
    gpuk_module m;
    gpuk_module_desc md;
    static const char ptx90[] = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{ ret; }\n";
    static const char ptx_sm100[] = ".version 8.6\n.target sm_100\n.visible .entry k()\n{ ret; }\n";
    static const char ptx_sm90a[] = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{ ret; }\n";
    int i;
    static const char not_ptx[] = "hello world";
    char unterminated[sizeof scale_ptx];
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 12080;
    ctx = fake_up(&cfg, 1);
    memset(&md, 0, sizeof md);
    md.image.ptr = ptx90;
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("PTX .version 9.0 needs a driver for CUDA 13.0 or newer; this driver supports CUDA 12.8");
    CHECK(m.id == 0);
    md.image.ptr = ptx_sm100;
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("sm_100 is newer than the device (sm_90)");
    md.image.ptr = not_ptx;
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("no valid .version");
    md.image.ptr = ".version 7.10\n.target sm_52\n.address_size 64\n"; /* not 8.0 (found by fuzzing) */
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("no valid .version");
    md.image.ptr = NULL;
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_INVALID_ARG);
    /* text given with a size and no NUL: gpuk copies it and terminates it */
    memcpy(unterminated, scale_ptx, sizeof unterminated);
    md.image.ptr = unterminated;
    md.image.bytes = sizeof unterminated - 1;
    unterminated[sizeof unterminated - 1] = 'X';
    CHECK_OK(gpuk_module_load(ctx, &md, &m));
    CHECK_OK(gpuk_module_unload(ctx, m));
    fake_down(ctx);
    /* architecture-specific PTX (sm_90a) loads on compute capability 9.0 and is refused, before
       the driver, on 10.0 (newer, but without wgmma) and 8.9 (older) */
    for (i = 0; i < 3; i++) {
        static const int majors[3] = { 9, 10, 8 }, minors[3] = { 0, 0, 9 };
        int modules;
        memset(&cfg, 0, sizeof cfg);
        cfg.cc_major = majors[i];
        cfg.cc_minor = minors[i];
        ctx = fake_up(&cfg, 1);
        memset(&md, 0, sizeof md);
        md.image.ptr = ptx_sm90a;
        md.label = "wgmma";
        modules = fake_live_count(FK_MODULE);
        if (i == 0) {
            CHECK_OK(gpuk_module_load(ctx, &md, &m));
            CHECK(fake_live_count(FK_MODULE) == modules + 1);
            CHECK_OK(gpuk_module_unload(ctx, m));
        } else {
            CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_INVALID_ARG);
            CHECK(m.id == 0 && fake_live_count(FK_MODULE) == modules);
            CHECK_ERROR_MENTIONS(i == 1 ? "module 'wgmma': PTX .target sm_90a is architecture-specific: it runs "
                                          "on compute capability 9.0 only, not on this device (sm_100)"
                                        : "module 'wgmma': PTX .target sm_90a is newer than the device (sm_89)");
        }
        fake_down(ctx);
    }
    /* the driver rejects the PTX: its JIT log reaches gpuk_last_error */
    memset(&cfg, 0, sizeof cfg);
    cfg.jit_code = 222;
    cfg.jit_log = "ptxas application ptx input, line 1; fatal   : Unsupported .version 9.9; current version is '9.0'";
    ctx = fake_up(&cfg, 1);
    memset(&md, 0, sizeof md);
    md.image.ptr = scale_ptx;
    md.label = "mine";
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), (gpuk_result)222);
    CHECK_ERROR_MENTIONS("cuModuleLoadDataEx: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): module 'mine'");
    CHECK_ERROR_MENTIONS("Unsupported .version 9.9");
    CHECK_ERROR_MENTIONS("driver is older than this PTX");
    CHECK(strstr(captured, "Unsupported .version 9.9") != NULL);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_out_of_memory(void) {
    fake_config cfg;
    gpuk_ctx* ctx;
    gpuk_buffer a, b;
    memset(&cfg, 0, sizeof cfg);
    cfg.mem_limit = 1 << 20;
    ctx = fake_up(&cfg, 1);
    a = make_buffer(ctx, 1 << 19, "half");
    CHECK_RESULT(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 1 << 20, .label = "too big" }, &b), (gpuk_result)2);
    CHECK(b.id == 0);
    CHECK_ERROR_MENTIONS("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2): 1048576 bytes for buffer 'too big'");
    CHECK_ERROR_MENTIONS("free buffers");
    CHECK_OK(gpuk_buffer_destroy(ctx, a));
    b = make_buffer(ctx, 1 << 20, "fits now");
    CHECK(b.id != 0);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_sticky_fault_fails_fast(void) {
    fake_config cfg;
    gpuk_ctx* ctx;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_launch_desc ld;
    gpuk_buffer b;
    static const char fault_ptx[] = ".version 6.0\n.target sm_52\n.visible .entry fault()\n{ ret; }\n";
    long calls;
    memset(&cfg, 0, sizeof cfg);
    cfg.fault_on_sync = 700;
    ctx = fake_up(&cfg, 1);
    CHECK_OK(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { fault_ptx, 0 } }, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "fault", &k));
    b = make_buffer(ctx, 64, "b");
    memset(&ld, 0, sizeof ld);
    ld.grid.x = ld.block.x = 1;
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK_RESULT(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM), (gpuk_result)700);
    CHECK_ERROR_MENTIONS("cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    CHECK_ERROR_MENTIONS("compute-sanitizer");
    calls = fake.calls;
    /* every later call: the first cause, and no driver call */
    CHECK_RESULT(gpuk_buffer_write(ctx, b, 0, "abc", 3), (gpuk_result)700);
    CHECK_ERROR_MENTIONS("gpuk_buffer_write: CUDA is unusable in this process since an earlier fault: "
                         "gpuk_stream_sync: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    CHECK_RESULT(gpuk_launch(ctx, k, &ld), (gpuk_result)700);
    CHECK_RESULT(gpuk_init(NULL), (gpuk_result)700);
    CHECK_RESULT(gpuk_device_count(&(int){ 0 }), (gpuk_result)700);
    CHECK_RESULT(gpuk_ctx_create(NULL, &(gpuk_ctx*){ NULL }), (gpuk_result)700);
    CHECK_RESULT(gpuk_ctx_destroy(ctx), (gpuk_result)700); /* frees host memory, skips the driver */
    CHECK(fake.calls == calls);
    CHECK_OK(gpuk_shutdown());
    fake_reset(NULL);
    return TEST_PASS;
}

static int test_fork_child_gets_clear_error(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    int fds[2], status = 0;
    pid_t pid;
    char msg[512] = { 0 };
    CHECK(pipe(fds) == 0);
    pid = fork();
    if (pid == 0) {
        int n = -1;
        gpuk_result r = gpuk_device_count(&n);
        gpuk_result r2 = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8 }, &(gpuk_buffer){ 0 });
        ssize_t w = write(fds[1], gpuk_last_error(), strlen(gpuk_last_error()));
        /* the child can still give back the host memory it inherited (valgrind checks) */
        gpuk_result r3 = gpuk_ctx_destroy(ctx);
        (void)w;
        gpuk_shutdown();
        _exit(r == GPUK_ERR_FORKED && r2 == GPUK_ERR_FORKED && r3 == GPUK_ERR_FORKED && n == 0 ? 0 : 1);
    }
    close(fds[1]);
    CHECK(read(fds[0], msg, sizeof msg - 1) > 0);
    close(fds[0]);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strstr(msg, "fork() child") != NULL && strstr(msg, "cannot be used") != NULL);
    /* the parent is unaffected */
    CHECK_OK(gpuk_ctx_sync(ctx));
    fake_down(ctx);
    return TEST_PASS;
}

typedef struct thread_arg { gpuk_ctx* ctx; gpuk_kernel k; int failures; } thread_arg;

static void* thread_body(void* p) {
    thread_arg* a = (thread_arg*)p;
    int i;
    for (i = 0; i < 200; i++) {
        gpuk_buffer b;
        gpuk_stream s;
        gpuk_event e;
        unsigned char in[96], out[96];
        gpuk_devptr ptr;
        float sc = 1.0f;
        unsigned n = 24;
        void* args[3] = { &ptr, &sc, &n };
        gpuk_launch_desc ld;
        memset(in, (unsigned char)i, sizeof in);
        if (gpuk_buffer_create(a->ctx, &(gpuk_buffer_desc){ .bytes = sizeof in }, &b) != GPUK_OK) { a->failures++; continue; }
        if (gpuk_stream_create(a->ctx, NULL, &s) != GPUK_OK || gpuk_event_create(a->ctx, NULL, &e) != GPUK_OK) a->failures++;
        ptr = gpuk_buffer_devptr(a->ctx, b);
        memset(&ld, 0, sizeof ld);
        ld.grid.x = 1; ld.block.x = 32; ld.stream = s; ld.args = args; ld.num_args = 3;
        if (gpuk_buffer_write_async(a->ctx, s, b, 0, in, sizeof in) != GPUK_OK) a->failures++;
        if (gpuk_launch(a->ctx, a->k, &ld) != GPUK_OK) a->failures++;
        if (gpuk_event_record(a->ctx, s, e) != GPUK_OK) a->failures++;
        if (gpuk_buffer_read_async(a->ctx, s, b, 0, out, sizeof out) != GPUK_OK) a->failures++;
        if (gpuk_stream_sync(a->ctx, s) != GPUK_OK) a->failures++;
        if (memcmp(in, out, sizeof in) != 0) a->failures++;
        if (gpuk_event_destroy(a->ctx, e) != GPUK_OK || gpuk_stream_destroy(a->ctx, s) != GPUK_OK ||
            gpuk_buffer_destroy(a->ctx, b) != GPUK_OK) a->failures++;
    }
    return NULL;
}

static int test_one_ctx_from_eight_threads(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_module m;
    gpuk_kernel k = load_scale(ctx, &m);
    pthread_t t[8];
    thread_arg args[8];
    int i;
    for (i = 0; i < 8; i++) {
        args[i].ctx = ctx; args[i].k = k; args[i].failures = 0;
        CHECK(pthread_create(&t[i], NULL, thread_body, &args[i]) == 0);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        CHECK(args[i].failures == 0);
    }
    CHECK(fake.launches == 8 * 200);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_ctx_destroy_releases_everything(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_stream s;
    gpuk_event e;
    gpuk_module m;
    gpuk_pinned p;
    gpuk_timer t;
    static char reg[512];
    int i;
    for (i = 0; i < 10; i++) make_buffer(ctx, 100 + (size_t)i, "leak me");
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .priority = -1 }, &s));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = true }, &e));
    CHECK_OK(gpuk_timer_create(ctx, &t));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 4096 }, &p));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = sizeof reg, .host_ptr = reg }, &p));
    load_scale(ctx, &m);
    CHECK(!fake_all_released());
    fake_down(ctx); /* checks that everything came back */
    return TEST_PASS;
}

static int test_pool_full(void) {
    gpuk_ctx* ctx;
    gpuk_ctx_desc cd;
    gpuk_stream s[3];
    fake_up(NULL, 0);
    memset(&cd, 0, sizeof cd);
    cd.max_streams = 2;
    CHECK_OK(gpuk_ctx_create(&cd, &ctx));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s[0]));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s[1]));
    CHECK_RESULT(gpuk_stream_create(ctx, NULL, &s[2]), GPUK_ERR_POOL_FULL);
    CHECK_ERROR_MENTIONS("max_* in gpuk_ctx_desc");
    CHECK_OK(gpuk_stream_destroy(ctx, s[0]));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s[2]));
    cd.max_buffers = 70000;
    CHECK_RESULT(gpuk_ctx_create(&cd, &(gpuk_ctx*){ NULL }), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("max_buffers = 70000 exceeds 65535");
    CHECK_RESULT(gpuk_shutdown(), GPUK_ERR_BUSY);
    fake_down(ctx);
    return TEST_PASS;
}

/* A timer's failures under its own name: a full event pool is gpuk_timer_create's error; a
   failed destroy keeps the event it could not destroy, so a retry finishes the job. */
static int test_timer_errors(void) {
    gpuk_ctx* ctx;
    gpuk_ctx_desc cd;
    gpuk_timer t, keep;
    gpuk_event e;
    fake_up(NULL, 0);
    memset(&cd, 0, sizeof cd);
    cd.max_events = 3;
    CHECK_OK(gpuk_ctx_create(&cd, &ctx));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e));
    /* one slot left: the start event takes it, the stop event finds the pool full */
    CHECK_RESULT(gpuk_timer_create(ctx, &t), GPUK_ERR_POOL_FULL);
    CHECK_ERROR_MENTIONS("gpuk_timer_create:");
    CHECK(strstr(gpuk_last_error(), "gpuk_event_create") == NULL);
    CHECK(t.start.id == 0 && t.stop.id == 0);
    CHECK_OK(gpuk_event_destroy(ctx, e)); /* the start event was given back: two slots free */
    CHECK_OK(gpuk_timer_create(ctx, &t));
    /* the first event destroy fails: the timer keeps its start event, loses its stop event */
    fake.cfg.fail_name = "cuEventDestroy";
    fake.cfg.fail_nth = 1;
    fake.name_calls = 0;
    keep = t;
    CHECK_RESULT(gpuk_timer_destroy(ctx, &t), 1);
    CHECK_ERROR_MENTIONS("gpuk_timer_destroy: cuEventDestroy");
    CHECK(t.start.id == keep.start.id && t.stop.id == 0);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_timer_destroy(ctx, &t)); /* the retry the failure allows */
    CHECK(t.start.id == 0 && t.stop.id == 0);
    CHECK_RESULT(gpuk_timer_destroy(ctx, &t), GPUK_ERR_INVALID_HANDLE); /* nothing left */
    CHECK_ERROR_MENTIONS("gpuk_timer_destroy: timer handle is zero");
    CHECK_RESULT(gpuk_timer_destroy(ctx, &keep), GPUK_ERR_INVALID_HANDLE); /* a stale copy */
    fake_down(ctx);
    return TEST_PASS;
}

static int test_streams_events_timer(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_stream s, w;
    gpuk_event a, b, nt;
    gpuk_timer t;
    bool done = false;
    float ms = -1.0f;
    int least = 1, greatest = 1, hits = 0;
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_event_create(ctx, NULL, &a));
    CHECK_OK(gpuk_event_create(ctx, NULL, &b));
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = true }, &nt));
    CHECK_OK(gpuk_event_record(ctx, s, a));
    CHECK_OK(gpuk_stream_wait(ctx, GPUK_DEFAULT_STREAM, a));
    CHECK_OK(gpuk_event_record(ctx, GPUK_DEFAULT_STREAM, b));
    CHECK_OK(gpuk_event_sync(ctx, b));
    CHECK_OK(gpuk_event_query(ctx, b, &done));
    CHECK(done);
    CHECK_OK(gpuk_stream_query(ctx, s, &done));
    CHECK(done);
    CHECK_OK(gpuk_event_elapsed_ms(ctx, a, b, &ms));
    CHECK(ms > 0.0f);
    CHECK_OK(gpuk_event_record(ctx, s, nt));
    CHECK_RESULT(gpuk_event_elapsed_ms(ctx, a, nt, &ms), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("no_timing");
    CHECK_OK(gpuk_timer_create(ctx, &t));
    CHECK_OK(gpuk_timer_start(ctx, s, &t));
    CHECK_OK(gpuk_timer_stop(ctx, &t, &ms));
    CHECK(ms > 0.0f);
    CHECK_OK(gpuk_timer_destroy(ctx, &t));
    CHECK_OK(gpuk_stream_priority_range(ctx, &least, &greatest));
    CHECK(least == 0 && greatest == -5);
    CHECK_OK(gpuk_stream_host_func(ctx, s, host_counter, &hits));
    CHECK(hits == 1);
    CHECK_RESULT(gpuk_stream_host_func(ctx, s, NULL, &hits), GPUK_ERR_INVALID_ARG);
    /* a wrapped native stream is used, not destroyed, by gpuk */
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .wrap = gpuk_stream_native(ctx, s) }, &w));
    CHECK_OK(gpuk_stream_sync(ctx, w));
    CHECK_OK(gpuk_stream_destroy(ctx, w));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_RESULT(gpuk_stream_query(ctx, s, NULL), GPUK_ERR_INVALID_ARG);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_wrapped_buffer_is_not_freed(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_buffer owner = make_buffer(ctx, 128, "owner"), view;
    unsigned char out[4];
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64, .wrap = gpuk_buffer_devptr(ctx, owner) + 64 }, &view));
    CHECK_OK(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, view, 0, 0x7E, 1, 64));
    CHECK_OK(gpuk_buffer_read(ctx, owner, 64, out, 4));
    CHECK(out[0] == 0x7E && out[3] == 0x7E);
    CHECK_OK(gpuk_buffer_destroy(ctx, view));
    CHECK(fake_live_count(FK_ALLOC) == 1);
    CHECK_RESULT(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .wrap = 0x1000 }, &view), GPUK_ERR_INVALID_ARG);
    fake_down(ctx);
    return TEST_PASS;
}

static int test_new_thread_gets_the_ctx_made_current(void) {
    /* covered from 8 threads above; here: a thread whose current ctx another library changed */
    gpuk_ctx* ctx = fake_up(&(fake_config){ .devices = 2 }, 1);
    gpuk_buffer b = make_buffer(ctx, 8, "b");
    f_cuCtxSetCurrent((void*)(uintptr_t)0x1001); /* someone made device 1 current */
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, "12345678", 8));
    CHECK(fake_tls_ctx == 1);
    f_cuCtxSetCurrent(NULL);
    CHECK_OK(gpuk_ctx_mem_info(ctx, &(size_t){ 0 }, NULL));
    CHECK_OK(gpuk_ctx_make_current(ctx));
    CHECK(gpuk_ctx_device_info(ctx)->sm_count == 132);
    CHECK(gpuk_ctx_device_info(NULL) == NULL);
    fake_down(ctx);
    return TEST_PASS;
}

/* Calls without a stream (gpuk_buffer_write/read/copy) are ordered after all work queued
   earlier on the ctx default stream and on streams created blocking (the default): like
   cudaMemcpy. The fake tracks which queued work a copy could overtake on a real GPU. */
static int test_streamless_calls_wait_for_user_streams(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_module m;
    gpuk_kernel k = load_scale(ctx, &m);
    gpuk_buffer b = make_buffer(ctx, 64, "b"), c = make_buffer(ctx, 64, "c");
    gpuk_stream s, nb;
    gpuk_stream_desc sd;
    gpuk_devptr p = gpuk_buffer_devptr(ctx, b);
    float sc = 2.0f;
    unsigned n = 16;
    void* args[3] = { &p, &sc, &n };
    unsigned char out[64];
    gpuk_launch_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.grid.x = 1;
    ld.block.x = 16;
    ld.args = args;
    ld.num_args = 3;
    memset(out, 0, sizeof out);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK(fake_stream_flags(gpuk_stream_native(ctx, s)) == 0); /* blocking by default */
    CHECK(fake_stream_flags(gpuk_stream_native(ctx, (gpuk_stream){ 0 })) == 0);
    /* a kernel on a user stream, then a read: the read must wait for it */
    ld.stream = s;
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, out, 64));
    CHECK(fake.unordered == 0);
    CHECK(fake.last_copy_stream == FAKE_STREAM_LEGACY);
    CHECK(fake.legacy_pending == 0); /* and it returned only once the copy was done */
    /* a write must not overwrite an input a queued kernel has not read yet */
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, out, 64));
    CHECK(fake.unordered == 0);
    /* work on the ctx default stream (where built-in kernels run by default), then a copy */
    ld.stream.id = 0;
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK_OK(gpuk_buffer_copy(ctx, c, 0, b, 0, 64));
    CHECK(fake.unordered == 0);
    /* an async call on a stream after a stream-less one is ordered after it too */
    CHECK_OK(gpuk_buffer_read_async(ctx, s, c, 0, out, 64));
    CHECK(fake.unordered == 0);
    CHECK_OK(gpuk_stream_sync(ctx, s));
    /* a stream created non-blocking is not ordered with stream-less calls (documented) */
    memset(&sd, 0, sizeof sd);
    sd.non_blocking = true;
    CHECK_OK(gpuk_stream_create(ctx, &sd, &nb));
    CHECK(fake_stream_flags(gpuk_stream_native(ctx, nb)) == 1);
    ld.stream = nb;
    CHECK_OK(gpuk_launch(ctx, k, &ld));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, out, 64));
    CHECK(fake.unordered == 1);
    CHECK_OK(gpuk_stream_sync(ctx, nb));
    fake_down(ctx);
    return TEST_PASS;
}

/* API v0.2: GPUK_DEFAULT_STREAM names the ctx default stream in C (and C++, compile_cxx11). */
static int test_default_stream_constant(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_stream zero = { 0 };
    CHECK(GPUK_DEFAULT_STREAM.id == 0);
    CHECK(gpuk_stream_native(ctx, GPUK_DEFAULT_STREAM) == gpuk_stream_native(ctx, zero));
    CHECK(gpuk_stream_native(ctx, GPUK_DEFAULT_STREAM) != NULL);
    CHECK_OK(gpuk_stream_sync(ctx, GPUK_DEFAULT_STREAM));
    fake_down(ctx);
    return TEST_PASS;
}

/* A failed gpuk_ctx_create leaves the thread's current context as it found it, whichever
   driver call failed: never on a primary context it has released. */
static int test_failed_ctx_create_restores_the_current_ctx(void) {
    fake_config cfg;
    gpuk_ctx* ctx = NULL;
    int before, n, failures = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    fake_up(&cfg, 0);
    for (before = 0; before <= 2; before++) { /* none current, device 0's, device 1's */
        for (n = 1; n < 100; n++) {
            gpuk_result r;
            int reached;
            f_cuCtxSetCurrent(before ? (void*)(uintptr_t)(0x1000 + before - 1) : NULL);
            fake.cfg.fail_at = fake.calls + n;
            r = gpuk_ctx_create(NULL, &ctx);
            reached = fake.calls >= fake.cfg.fail_at;
            fake.cfg.fail_at = 0;
            if (r == GPUK_OK) { /* a tolerated failure, or none: the new ctx is current */
                CHECK(fake_tls_ctx == 1);
                CHECK_OK(gpuk_ctx_destroy(ctx));
                if (!reached) break; /* the whole create ran without the injected failure */
                continue;
            }
            failures++;
            CHECK(ctx == NULL);
            if (fake_tls_ctx != before)
                fprintf(stderr, "  failing call %d (%s): current ctx %d, was %d\n", n, fake_last_failed_name,
                        fake_tls_ctx, before);
            CHECK(fake_tls_ctx == before);
            CHECK(fake.primary_refs[0] == 0);
        }
        CHECK(n < 100);
    }
    CHECK(failures >= 3 * 5);
    f_cuCtxSetCurrent(NULL);
    fake_down(NULL);
    return TEST_PASS;
}

typedef struct race_arg { gpuk_ctx* ctx; gpuk_kernel k; int failures; } race_arg;
static void* race_set_shared(void* p) {
    race_arg* a = (race_arg*)p;
    int i;
    for (i = 0; i < 2000; i++)
        if (gpuk_kernel_set_max_dynamic_shared(a->ctx, a->k, i % 2 ? 4096u : 65536u) != GPUK_OK) a->failures++;
    return NULL;
}
static void* race_launch(void* p) {
    race_arg* a = (race_arg*)p;
    gpuk_devptr dp = 0;
    float sc = 1.0f;
    unsigned n = 0;
    void* args[3] = { &dp, &sc, &n };
    gpuk_launch_desc ld;
    int i;
    memset(&ld, 0, sizeof ld);
    ld.grid.x = 1;
    ld.block.x = 32;
    ld.shared_bytes = 4096; /* within both limits the other thread sets */
    ld.args = args;
    for (i = 0; i < 2000; i++)
        if (gpuk_launch(a->ctx, a->k, &ld) != GPUK_OK) a->failures++;
    return NULL;
}

/* gpuk_kernel_set_max_dynamic_shared on one thread while another launches the kernel: no data
   race (tests/integration/analyze.sh runs this under ThreadSanitizer) and every launch passes. */
static int test_set_max_dynamic_shared_while_launching(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_module m;
    race_arg a;
    pthread_t t1, t2;
    a.ctx = ctx;
    a.k = load_scale(ctx, &m);
    a.failures = 0;
    CHECK(pthread_create(&t1, NULL, race_set_shared, &a) == 0);
    CHECK(pthread_create(&t2, NULL, race_launch, &a) == 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(a.failures == 0);
    fake_down(ctx);
    return TEST_PASS;
}

/* Create-and-upload: desc.data is copied in at create; bytes 0 takes data.bytes; data larger
   than bytes, or bytes without a pointer, is refused before any allocation. */
static int test_create_with_initial_data(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    float init[100], back[100], tail[50];
    gpuk_buffer a, b, c;
    gpuk_pinned p;
    long allocs;
    int i;
    for (i = 0; i < 100; i++) init[i] = (float)i * 0.5f - 7.0f;
    memset(back, 0x5A, sizeof back);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(init), .label = "init" }, &a));
    CHECK(gpuk_buffer_size(ctx, a) == sizeof init);
    CHECK_OK(gpuk_buffer_read(ctx, a, 0, back, sizeof back));
    CHECK(memcmp(back, init, sizeof init) == 0);
    /* larger buffer: data at the start, the rest is the caller's to fill */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2 * sizeof init, .data = GPUK_RANGE(init) }, &b));
    CHECK(gpuk_buffer_size(ctx, b) == 2 * sizeof init);
    CHECK_OK(gpuk_buffer_read(ctx, b, 50 * sizeof(float), tail, sizeof tail));
    CHECK(memcmp(tail, init + 50, sizeof tail) == 0);
    allocs = fake.calls;
    CHECK_RESULT(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .data = GPUK_RANGE(init) }, &c),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_desc.data.bytes = 400 exceeds gpuk_buffer_desc.bytes = 8");
    CHECK(c.id == 0 && fake.calls == allocs);
    CHECK_RESULT(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { NULL, 16 } }, &c), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("data.ptr is NULL");
    CHECK(fake.calls == allocs);
    /* pinned: the same, by memcpy */
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .data = GPUK_RANGE(init) }, &p));
    CHECK(gpuk_pinned_size(ctx, p) == sizeof init);
    CHECK(memcmp(gpuk_pinned_ptr(ctx, p), init, sizeof init) == 0);
    CHECK_RESULT(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 4, .data = GPUK_RANGE(init) }, &p),
                 GPUK_ERR_INVALID_ARG);
    CHECK(p.id == 0);
    fake_down(ctx);
    return TEST_PASS;
}

/* A failed upload frees the new allocation and slot (the fault sweep covers every call). */
static int test_create_with_data_upload_failure(void) {
    fake_config cfg;
    gpuk_ctx* ctx;
    gpuk_buffer a;
    char data[64] = { 1 };
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_name = "cuMemcpyHtoDAsync";
    cfg.fail_code = 999;
    ctx = fake_up(&cfg, 1);
    CHECK_RESULT(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(data) }, &a), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("uploading desc.data");
    CHECK(a.id == 0);
    fake_down(ctx); /* every allocation given back */
    return TEST_PASS;
}

/* One-call download into host memory from the gpuk allocator, freed by gpuk_host_free. */
static int test_download_whole_buffer(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    unsigned char src[300];
    void* out = (void*)1;
    size_t bytes = 7;
    gpuk_buffer a, empty = make_buffer(ctx, 0, "empty");
    int i;
    for (i = 0; i < 300; i++) src[i] = (unsigned char)(i * 7 + 3);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(src) }, &a));
    CHECK_OK(gpuk_buffer_download(ctx, a, &out, &bytes));
    CHECK(out != NULL && bytes == sizeof src && memcmp(out, src, sizeof src) == 0);
    gpuk_host_free(out);
    CHECK_OK(gpuk_buffer_download(ctx, empty, &out, &bytes));
    CHECK(out == NULL && bytes == 0);
    gpuk_host_free(NULL);
    out = (void*)1;
    bytes = 7;
    CHECK_RESULT(gpuk_buffer_download(ctx, (gpuk_buffer){ 0 }, &out, &bytes), GPUK_ERR_INVALID_HANDLE);
    CHECK(out == NULL && bytes == 0);
    fake_down(ctx);
    return TEST_PASS;
}

/* Error texts name the call the user made and the fact that failed. */
static int test_error_texts_name_the_right_call_and_fact(void) {
    fake_config cfg;
    gpuk_ctx* ctx;
    gpuk_stream s;
    gpuk_timer t;
    gpuk_module m;
    gpuk_module_desc md;
    gpuk_stream bogus;
    float ms = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 12080;
    ctx = fake_up(&cfg, 1);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_timer_create(ctx, &t));
    CHECK_OK(gpuk_timer_start(ctx, s, &t));
    bogus.id = 0x12345;
    CHECK_RESULT(gpuk_timer_start(ctx, bogus, &t), GPUK_ERR_INVALID_HANDLE);
    CHECK(strncmp(gpuk_last_error(), "gpuk_timer_start: ", 18) == 0);
    CHECK(t.stream.id == s.id); /* the timer keeps its last good stream */
    CHECK_OK(gpuk_timer_start(ctx, s, &t));
    CHECK_OK(gpuk_timer_stop(ctx, &t, &ms));
    CHECK_OK(gpuk_timer_destroy(ctx, &t));
    memset(&md, 0, sizeof md);
    md.image.ptr = ".version 99.0\n.target sm_52\n.address_size 64\n.visible .entry k()\n{ ret; }\n";
    CHECK_RESULT(gpuk_module_load(ctx, &md, &m), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("PTX .version 99.0 is newer than any PTX version gpuk knows (9.0); this driver "
                         "supports CUDA 12.8 (PTX .version 8.7 and older)");
    CHECK(strstr(gpuk_last_error(), "13.1") == NULL);
    fake_down(ctx);
    return TEST_PASS;
}

/* A buffer without a label is named by its handle in errors, not as buffer ''. */
static int test_unlabelled_buffer_is_named_readably(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    char text[64], src[8] = { 0 };
    gpuk_buffer a = make_buffer(ctx, 4, NULL);
    CHECK_RESULT(gpuk_buffer_write(ctx, a, 0, src, 8), GPUK_ERR_OUT_OF_BOUNDS);
    snprintf(text, sizeof text, "exceeds unlabelled buffer 0x%x of 4 bytes", a.id);
    CHECK_ERROR_MENTIONS(text);
    CHECK(strstr(gpuk_last_error(), "''") == NULL);
    CHECK_RESULT(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, a, 0, 0, 4, 2), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS(text + 8);
    fake_down(ctx);
    return TEST_PASS;
}

/* cuMemcpyDtoD promises no memmove semantics, so overlapping ranges (in one buffer, or
   through a wrapped view of it) are refused; adjacent ones are fine. */
static int test_overlapping_device_copy_is_refused(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_buffer b = make_buffer(ctx, 64, "b"), view;
    gpuk_buffer_desc vd;
    unsigned char in[64], out[64];
    int i;
    for (i = 0; i < 64; i++) in[i] = (unsigned char)i;
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, in, 64));
    CHECK_RESULT(gpuk_buffer_copy(ctx, b, 8, b, 0, 32), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(gpuk_buffer_copy(ctx, b, 0, b, 8, 32), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_buffer_copy_async(ctx, (gpuk_stream){ 0 }, b, 1, b, 0, 32), GPUK_ERR_INVALID_ARG);
    memset(&vd, 0, sizeof vd);
    vd.bytes = 32;
    vd.wrap = gpuk_buffer_devptr(ctx, b) + 4;
    CHECK_OK(gpuk_buffer_create(ctx, &vd, &view));
    CHECK_RESULT(gpuk_buffer_copy(ctx, view, 0, b, 0, 32), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, out, 64));
    CHECK(memcmp(in, out, 64) == 0); /* nothing was copied */
    CHECK_OK(gpuk_buffer_copy(ctx, b, 32, b, 0, 32)); /* adjacent: no overlap */
    CHECK_OK(gpuk_buffer_read(ctx, b, 32, out, 32));
    CHECK(memcmp(in, out, 32) == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, view));
    fake_down(ctx);
    return TEST_PASS;
}

/* The 2-D view check: the whole strided region inside the buffer, no overflow, no overlap. */
static int test_array2d_bounds(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_buffer a = make_buffer(ctx, 100 * 4, "m"); /* 100 floats */
    gpuk_buffer odd;
    gpuk_devptr base = gpuk_buffer_devptr(ctx, a), p = 1;
    size_t stride = 1;
    const size_t big = (size_t)1 << (sizeof(size_t) * 8 - 2);
    /* 10 x 10 dense fills it exactly; stride defaults to cols */
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 10, 10, 0), 4, &p, &stride));
    CHECK(p == base && stride == 10);
    /* 4 x 5 inside a stride of 20, from element 32: last element 32 + 3*20 + 4 = 96 */
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 32, 4, 5, 20), 4, &p, &stride));
    CHECK(p == base + 32 * 4 && stride == 20);
    /* the last row may end at the buffer's end even though rows * stride does not fit */
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 5, 20, 20), 4, &p, &stride));
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 99, 1, 1, 0), 4, &p, &stride));
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 4, 1, 33), 4, &p, &stride)); /* 0, 33, 66, 99 */
    /* one element past the end, in each direction (36 + 3 * 20 + 4 = 100) */
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 36, 4, 5, 20), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("4 x 5 elements (row stride 20) from element 36 exceed buffer 'm' (100 elements of 4 bytes)");
    CHECK(p == 0 && stride == 0);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 11, 10, 0), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 1, 101, 0), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 4, 1, 34), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 101, 0, 0, 0), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    /* overflow: rows * stride and first + cols wrap around size_t */
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, big, 1, big), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 3, 2, SIZE_MAX / 2 + 1), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 50, 1, SIZE_MAX - 10, 0), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, SIZE_MAX, 1, 1, 0), 4, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    /* overlapping rows, empty views, element sizes, handles, alignment */
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 2, 10, 9), 4, &p, &stride), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("row_stride 9 is less than cols 10");
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 100, 0, 5, 0), 4, &p, &stride));
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 100, SIZE_MAX, 0, 0), 4, &p, &stride));
    CHECK_OK(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 2, 25, 0), 8, &p, &stride)); /* 50 doubles */
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 2, 26, 0), 8, &p, &stride), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(a, 0, 1, 1, 0), 3, &p, &stride), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d((gpuk_buffer){ 0 }, 0, 1, 1, 0), 4, &p, &stride),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64, .wrap = 0x1002 }, &odd));
    CHECK_RESULT(gpuk_array2d_resolve(ctx, gpuk_at2d(odd, 0, 1, 1, 0), 4, &p, &stride), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not aligned");
    CHECK(p == 0 && stride == 0);
    fake_down(ctx);
    return TEST_PASS;
}

/* A wrapped device pointer or stream of another device/context is refused at create time
   (it would fail or corrupt later, far from the cause). */
static int test_wrapping_foreign_pointers_and_streams_is_refused(void) {
    fake_config cfg;
    gpuk_ctx *c0, *c1 = NULL;
    gpuk_ctx_desc cd;
    gpuk_buffer b1, w;
    gpuk_buffer_desc bd;
    gpuk_stream s1, ws;
    gpuk_stream_desc sd;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    c0 = fake_up(&cfg, 1);
    memset(&cd, 0, sizeof cd);
    cd.device = 1;
    CHECK_OK(gpuk_ctx_create(&cd, &c1));
    b1 = make_buffer(c1, 64, "on device 1");
    CHECK_OK(gpuk_stream_create(c1, NULL, &s1));
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    bd.wrap = gpuk_buffer_devptr(c1, b1);
    CHECK_RESULT(gpuk_buffer_create(c0, &bd, &w), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("device 1");
    CHECK(w.id == 0);
    CHECK_OK(gpuk_buffer_create(c1, &bd, &w)); /* its own device's pointer is fine */
    CHECK_OK(gpuk_buffer_destroy(c1, w));
    { /* mapped host memory is usable from every context: not refused */
        gpuk_pinned hp;
        gpuk_pinned_desc pd;
        memset(&pd, 0, sizeof pd);
        pd.bytes = 64;
        CHECK_OK(gpuk_pinned_create(c1, &pd, &hp));
        bd.wrap = (gpuk_devptr)(uintptr_t)gpuk_pinned_ptr(c1, hp);
        CHECK_OK(gpuk_buffer_create(c0, &bd, &w));
        CHECK_OK(gpuk_buffer_destroy(c0, w));
        CHECK_OK(gpuk_pinned_destroy(c1, hp));
    }
    memset(&sd, 0, sizeof sd);
    sd.wrap = gpuk_stream_native(c1, s1);
    CHECK_RESULT(gpuk_stream_create(c0, &sd, &ws), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("another CUDA context");
    CHECK(ws.id == 0);
    CHECK_OK(gpuk_stream_create(c1, &sd, &ws));
    CHECK_OK(gpuk_stream_destroy(c1, ws));
    /* a driver without cuStreamGetCtx: wrapping is not checked, as before */
    CHECK_OK(gpuk_ctx_destroy(c1));
    fake_down(c0);
    cfg.missing[0] = "cuStreamGetCtx";
    c0 = fake_up(&cfg, 1);
    sd.wrap = gpuk_stream_native(c0, (gpuk_stream){ 0 });
    CHECK_OK(gpuk_stream_create(c0, &sd, &ws));
    CHECK_OK(gpuk_stream_destroy(c0, ws));
    fake_down(c0);
    return TEST_PASS;
}

static sem_t create_paused, create_resume;
static int pause_armed;
static void pause_in_retain(const char* name) {
    if (pause_armed && strcmp(name, "cuDevicePrimaryCtxRetain") == 0) {
        pause_armed = 0;
        sem_post(&create_paused);
        sem_wait(&create_resume);
    }
}
typedef struct create_arg { gpuk_ctx* ctx; gpuk_result r; } create_arg;
static void* create_body(void* p) {
    create_arg* a = (create_arg*)p;
    a->r = gpuk_ctx_create(NULL, &a->ctx);
    return NULL;
}

/* gpuk_shutdown while another thread is inside gpuk_ctx_create must not unload the driver
   table under it: it is refused as if the ctx were alive. The fake pauses the creating thread
   inside the driver so that the interleaving is forced, not hoped for. */
static int test_shutdown_during_ctx_create_is_refused(void) {
    fake_config cfg;
    create_arg a;
    pthread_t t;
    memset(&cfg, 0, sizeof cfg);
    cfg.on_call = pause_in_retain;
    fake_up(&cfg, 0);
    sem_init(&create_paused, 0, 0);
    sem_init(&create_resume, 0, 0);
    pause_armed = 1;
    a.ctx = NULL;
    a.r = GPUK_ERR_INVALID_ARG;
    CHECK(pthread_create(&t, NULL, create_body, &a) == 0);
    sem_wait(&create_paused);
    CHECK_RESULT(gpuk_shutdown(), GPUK_ERR_BUSY);
    CHECK_ERROR_MENTIONS("being created");
    sem_post(&create_resume);
    pthread_join(t, NULL);
    CHECK_OK(a.r);
    CHECK(a.ctx != NULL);
    sem_destroy(&create_paused);
    sem_destroy(&create_resume);
    fake_down(a.ctx);
    return TEST_PASS;
}

/* Each desc's defaults come from one function; the public twin shows what create uses. */
static int test_desc_defaults(void) {
    gpuk_desc gd = gpuk_desc_defaults(NULL);
    gpuk_ctx_desc cd = gpuk_ctx_desc_defaults(NULL);
    gpuk_buffer_desc bd;
    gpuk_pinned_desc pd;
    gpuk_module_desc md;
    gpuk_launch_desc ld;
    static const unsigned char elf[] = { 0x7f, 'E', 'L', 'F', 0 };
    static const unsigned char fatbin[] = { 0x50, 0xED, 0x55, 0xBA, 0 };
    char data[40];
    CHECK(gd.log_level == GPUK_LOG_WARN && gd.get_proc == NULL);
    gd = gpuk_desc_defaults(&(gpuk_desc){ .log_level = GPUK_LOG_DEBUG });
    CHECK(gd.log_level == GPUK_LOG_DEBUG);
    CHECK(cd.device == 0 && cd.max_buffers == 4096 && cd.max_pinned == 256 && cd.max_streams == 256 &&
          cd.max_events == 1024 && cd.max_modules == 64 && cd.max_kernels == 1024);
    cd = gpuk_ctx_desc_defaults(&(gpuk_ctx_desc){ .device = 1, .max_buffers = 70000, .max_events = 3 });
    CHECK(cd.device == 1 && cd.max_buffers == 70000 && cd.max_events == 3 && cd.max_kernels == 1024);
    bd = gpuk_buffer_desc_defaults(&(gpuk_buffer_desc){ .data = GPUK_RANGE(data) });
    CHECK(bd.bytes == sizeof data && bd.data.ptr == data);
    bd = gpuk_buffer_desc_defaults(&(gpuk_buffer_desc){ .bytes = 8, .data = GPUK_RANGE(data) });
    CHECK(bd.bytes == 8); /* kept: create names the mismatch */
    CHECK(gpuk_buffer_desc_defaults(NULL).bytes == 0);
    pd = gpuk_pinned_desc_defaults(&(gpuk_pinned_desc){ .data = GPUK_RANGE(data) });
    CHECK(pd.bytes == sizeof data);
    md = gpuk_module_desc_defaults(&(gpuk_module_desc){ .image = { scale_ptx, 0 } });
    CHECK(md.kind == GPUK_IMAGE_PTX && md.label && md.label[0] == 0 && md.image.bytes == 0);
    md = gpuk_module_desc_defaults(&(gpuk_module_desc){ .image = { elf, 4 } });
    CHECK(md.kind == GPUK_IMAGE_CUBIN);
    md = gpuk_module_desc_defaults(&(gpuk_module_desc){ .image = { fatbin, 4 }, .label = "f" });
    CHECK(md.kind == GPUK_IMAGE_FATBIN && strcmp(md.label, "f") == 0);
    md = gpuk_module_desc_defaults(&(gpuk_module_desc){ .image = { elf, 4 }, .kind = GPUK_IMAGE_PTX });
    CHECK(md.kind == GPUK_IMAGE_PTX);
    ld = gpuk_launch_desc_defaults(&(gpuk_launch_desc){ .grid = GPUK_DIM1(7), .block = { 32, 0, 0 } });
    CHECK(ld.grid.x == 7 && ld.grid.y == 1 && ld.grid.z == 1 && ld.block.x == 32 && ld.block.y == 1 &&
          ld.block.z == 1);
    ld = gpuk_launch_desc_defaults(NULL);
    CHECK(ld.grid.x == 0 && ld.grid.y == 1 && ld.args == NULL);
    return TEST_PASS;
}

/* GPUK_ARGS records each argument's size, so passing &buffer (a 4-byte gpuk_buffer handle)
   for a device pointer parameter is refused with a clear text instead of faulting the GPU. */
static int test_launch_args_macro_catches_buffer_handle(void) {
    gpuk_ctx* ctx = fake_up(NULL, 1);
    gpuk_module m;
    gpuk_kernel k = load_scale(ctx, &m); /* scale(.u64 p, .f32 s, .u32 n) */
    gpuk_buffer buf = make_buffer(ctx, 64, "x");
    gpuk_devptr p = gpuk_buffer_devptr(ctx, buf);
    float s = 2.0f;
    unsigned n = 16;
    double wide = 1.0;
    gpuk_launch_desc ld = { GPUK_ARGS(&p, &s, &n) };
    CHECK(ld.num_args == 3 && ld.arg_sizes[0] == 8 && ld.arg_sizes[1] == 4 && ld.arg_sizes[2] == 4);
    CHECK(ld.args[0] == &p && ld.args[1] == &s && ld.args[2] == &n);
    CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32),
                                                      GPUK_ARGS(&p, &s, &n) }));
    CHECK(fake.launches == 1);
    CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32),
                                                          GPUK_ARGS(&buf, &s, &n) }), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("kernel 'scale': argument 0 is 4 bytes, the parameter is 8 bytes (a gpuk_buffer "
                         "handle where the kernel takes a device pointer?");
    CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32),
                                                          GPUK_ARGS(&p, &wide, &n) }), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("argument 1 is 8 bytes, the parameter is 4 bytes");
    CHECK(strstr(gpuk_last_error(), "gpuk_buffer") == NULL);
    CHECK_RESULT(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32),
                                                          GPUK_ARGS(&p, &s) }), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("takes 3 parameters, num_args is 2");
    CHECK(fake.launches == 1); /* nothing bad reached the driver */
    fake_down(ctx);
    return TEST_PASS;
}

/* The argument-counting macro up to its limit of 16. */
static int test_args_macro_counts_to_16(void) {
    char c1 = 0; short s2 = 0; int i3 = 0; long long l4 = 0; float f5 = 0; double d6 = 0;
    struct { char b[24]; } big = { { 0 } };
    gpuk_launch_desc a = { GPUK_ARGS(&c1) };
    gpuk_launch_desc b = { GPUK_ARGS(&c1, &s2, &i3, &l4, &f5, &d6, &big, &c1, &c1, &c1, &c1, &c1, &c1, &c1,
                                     &c1, &d6) };
    CHECK(a.num_args == 1 && a.arg_sizes[0] == 1 && a.args[0] == &c1);
    CHECK(b.num_args == 16 && b.arg_sizes[0] == 1 && b.arg_sizes[1] == 2 && b.arg_sizes[2] == 4 &&
          b.arg_sizes[3] == 8 && b.arg_sizes[4] == 4 && b.arg_sizes[5] == 8 && b.arg_sizes[6] == 24 &&
          b.arg_sizes[14] == 1 && b.arg_sizes[15] == 8 && b.args[15] == &d6 && b.args[6] == &big);
    return TEST_PASS;
}

int main(void) {
    srand(12345);
    RUN(test_version_macros_match_doc_line);
    RUN(test_result_str_never_null);
    RUN(test_no_driver_library);
    RUN(test_init_rejects_bad_desc);
    RUN(test_old_driver);
    RUN(test_cuinit_failure_has_hint);
    RUN(test_device_query);
    RUN(test_copies_round_trip_and_bounds);
    RUN(test_memset_widths);
    RUN(test_size_zero_is_a_valid_empty_object);
    RUN(test_pinned_alloc_and_register);
    RUN(test_async_from_pageable_is_reported);
    RUN(test_stale_zero_and_foreign_handles);
    RUN(test_unloading_a_module_kills_its_kernels);
    RUN(test_launch_limits_and_args);
    RUN(test_module_ptx_checks_and_jit_log);
    RUN(test_out_of_memory);
    RUN(test_sticky_fault_fails_fast);
    RUN(test_fork_child_gets_clear_error);
    RUN(test_one_ctx_from_eight_threads);
    RUN(test_ctx_destroy_releases_everything);
    RUN(test_pool_full);
    RUN(test_streams_events_timer);
    RUN(test_timer_errors);
    RUN(test_wrapped_buffer_is_not_freed);
    RUN(test_new_thread_gets_the_ctx_made_current);
    RUN(test_streamless_calls_wait_for_user_streams);
    RUN(test_failed_ctx_create_restores_the_current_ctx);
    RUN(test_set_max_dynamic_shared_while_launching);
    RUN(test_error_texts_name_the_right_call_and_fact);
    RUN(test_overlapping_device_copy_is_refused);
    RUN(test_wrapping_foreign_pointers_and_streams_is_refused);
    RUN(test_shutdown_during_ctx_create_is_refused);
    RUN(test_default_stream_constant);
    RUN(test_create_with_initial_data);
    RUN(test_create_with_data_upload_failure);
    RUN(test_download_whole_buffer);
    RUN(test_unlabelled_buffer_is_named_readably);
    RUN(test_array2d_bounds);
    RUN(test_desc_defaults);
    RUN(test_launch_args_macro_catches_buffer_handle);
    RUN(test_args_macro_counts_to_16);
    return test_summary();
}
