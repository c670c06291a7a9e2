/* tests/unit/unit_handles.c - handle ids against the fake driver: a destroyed handle stays refused
   however many handles come after it, a handle of one ctx is refused by every other ctx, and a
   destroy that fails in the driver keeps its handle (and a ctx destroy its ctx) for a retry.
   cc -std=c99 -I../.. unit_handles.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"

static const char ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry scale(.param .u64 p, .param .f32 s, .param .u32 n)\n{\n ret;\n}\n";

/* More create/destroy cycles than a 16-bit generation has values. */
enum { CYCLES = 70000 };

static void up(int devices) {
    fake_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = devices;
    CHECK_OK(fake_gpuk_init(&cfg));
}

static gpuk_ctx* ctx_on(int device, uint32_t max_buffers) {
    gpuk_ctx_desc cd;
    gpuk_ctx* ctx = NULL;
    memset(&cd, 0, sizeof cd);
    cd.device = device;
    cd.max_buffers = max_buffers;
    CHECK_OK(gpuk_ctx_create(&cd, &ctx));
    return ctx;
}

static void down(void) { fake_gpuk_check_released(); }

/* Creates and destroys CYCLES 0-byte buffers on ctx (no driver call: this is about ids);
   returns how many came before one matched h or h's destroy did not fail, or -1 for none. */
static int cycles_until_alias(gpuk_ctx* ctx, gpuk_buffer h) {
    gpuk_buffer_desc bd;
    gpuk_buffer x;
    int i;
    memset(&bd, 0, sizeof bd);
    for (i = 0; i < CYCLES; i++) {
        CHECK_OK(gpuk_buffer_create(ctx, &bd, &x));
        if (x.id == h.id || gpuk_buffer_destroy(ctx, h) != GPUK_ERR_INVALID_HANDLE) return i;
        gpuk_buffer_destroy(ctx, x);
    }
    return -1;
}

/* A stale handle stays refused through CYCLES creations on its own ctx: its destroy neither
   succeeds nor frees the buffer that now holds its slot. */
static void stale_after_many(uint32_t max_buffers) {
    gpuk_ctx* ctx;
    gpuk_buffer stale, live;
    gpuk_buffer_desc bd;
    int n;
    up(1);
    ctx = ctx_on(0, max_buffers);
    if (!ctx) return;
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    CHECK_OK(gpuk_buffer_create(ctx, &bd, &stale));
    CHECK_OK(gpuk_buffer_destroy(ctx, stale));
    n = cycles_until_alias(ctx, stale);
    CHECK(n < 0);
    if (n >= 0) fprintf(stderr, "  max_buffers %u: stale handle 0x%x matched after %d creations\n",
                        max_buffers, stale.id, n);
    /* the live buffer in the stale handle's slot survives the stale destroy */
    bd.bytes = 64;
    CHECK_OK(gpuk_buffer_create(ctx, &bd, &live));
    CHECK_RESULT(gpuk_buffer_destroy(ctx, stale), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_buffer_size(ctx, live) == 64);
    CHECK(fake_live_count(FK_ALLOC) == 1);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    down();
}

static int test_stale_refused_after_wrap_default_pool(void) {
    stale_after_many(0);
    return TEST_PASS;
}

/* One slot: every creation reuses it, the worst case for a per-slot generation. */
static int test_stale_refused_after_wrap_one_slot(void) {
    stale_after_many(1);
    return TEST_PASS;
}

/* a's handle is refused by b, however many handles b has made in the slot it names. */
static void foreign_refused(int dev_a, int dev_b) {
    gpuk_ctx* a;
    gpuk_ctx* b;
    gpuk_buffer ha, hb;
    gpuk_buffer_desc bd;
    int n;
    up(2);
    a = ctx_on(dev_a, 0);
    b = ctx_on(dev_b, 0);
    if (!a || !b) return;
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    CHECK_OK(gpuk_buffer_create(a, &bd, &ha));
    n = cycles_until_alias(b, ha);
    CHECK(n < 0);
    if (n >= 0) fprintf(stderr, "  devices %d/%d: a's handle 0x%x matched in b after %d creations\n",
                        dev_a, dev_b, ha.id, n);
    CHECK_OK(gpuk_buffer_create(b, &bd, &hb));
    CHECK(ha.id != hb.id);
    CHECK(gpuk_buffer_size(b, ha) == 0 && gpuk_buffer_devptr(b, ha) == 0);
    CHECK_RESULT(gpuk_buffer_destroy(b, ha), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("another ctx");
    CHECK(gpuk_buffer_size(a, ha) == 64 && gpuk_buffer_size(b, hb) == 64);
    CHECK(fake_live_count(FK_ALLOC) == 2);
    CHECK_OK(gpuk_ctx_destroy(b));
    CHECK(gpuk_buffer_size(a, ha) == 64);
    CHECK_OK(gpuk_ctx_destroy(a));
    down();
}

static int test_foreign_ctx_refused_same_device(void) {
    foreign_refused(0, 0);
    return TEST_PASS;
}

static int test_foreign_ctx_refused_two_devices(void) {
    foreign_refused(0, 1);
    return TEST_PASS;
}

/* Every kind: the first handle of two fresh ctxs on one device share slot and generation. */
static int test_foreign_ctx_refused_every_kind(void) {
    gpuk_ctx* a;
    gpuk_ctx* b;
    gpuk_pinned p;
    gpuk_stream s;
    gpuk_event e;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_kernel_info ki;
    gpuk_pinned_desc pd;
    gpuk_module_desc md;
    up(1);
    a = ctx_on(0, 0);
    b = ctx_on(0, 0);
    if (!a || !b) return TEST_PASS;
    memset(&pd, 0, sizeof pd);
    pd.bytes = 64;
    memset(&md, 0, sizeof md);
    md.image.ptr = ptx;
    CHECK_OK(gpuk_pinned_create(a, &pd, &p));
    CHECK_OK(gpuk_stream_create(a, NULL, &s));
    CHECK_OK(gpuk_event_create(a, NULL, &e));
    CHECK_OK(gpuk_module_load(a, &md, &m));
    CHECK_OK(gpuk_kernel_get(a, m, "scale", &k));
    CHECK(gpuk_pinned_ptr(b, p) == NULL);
    CHECK_RESULT(gpuk_pinned_destroy(b, p), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_stream_native(b, s) == NULL);
    CHECK_RESULT(gpuk_stream_sync(b, s), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_stream_destroy(b, s), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_sync(b, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_event_destroy(b, e), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_kernel_query(b, k, &ki), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_module_unload(b, m), GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_kernel_query(a, k, &ki));
    CHECK_OK(gpuk_ctx_destroy(b));
    CHECK_OK(gpuk_ctx_destroy(a));
    down();
    return TEST_PASS;
}

/* A ctx destroyed and a new one created: the old ctx's handles do not name the new ctx's objects. */
static int test_handle_of_destroyed_ctx_refused_by_next(void) {
    gpuk_ctx* a;
    gpuk_ctx* b;
    gpuk_buffer ha, hb;
    gpuk_buffer_desc bd;
    up(1);
    a = ctx_on(0, 0);
    if (!a) return TEST_PASS;
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    CHECK_OK(gpuk_buffer_create(a, &bd, &ha));
    CHECK_OK(gpuk_ctx_destroy(a));
    b = ctx_on(0, 0);
    if (!b) return TEST_PASS;
    CHECK_OK(gpuk_buffer_create(b, &bd, &hb));
    CHECK(ha.id != hb.id);
    CHECK_RESULT(gpuk_buffer_destroy(b, ha), GPUK_ERR_INVALID_HANDLE);
    CHECK(gpuk_buffer_size(b, hb) == 64);
    CHECK_OK(gpuk_ctx_destroy(b));
    down();
    return TEST_PASS;
}

/* A destroy whose driver call fails keeps its handle and object; the retry releases them. */
static int test_failed_destroy_keeps_handle(void) {
    gpuk_ctx* ctx;
    gpuk_buffer buf;
    gpuk_pinned pin;
    gpuk_stream s;
    gpuk_event e;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_kernel_info ki;
    gpuk_buffer_desc bd;
    gpuk_pinned_desc pd;
    gpuk_module_desc md;
    up(1);
    ctx = ctx_on(0, 0);
    if (!ctx) return TEST_PASS;
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    memset(&pd, 0, sizeof pd);
    pd.bytes = 64;
    memset(&md, 0, sizeof md);
    md.image.ptr = ptx;
    CHECK_OK(gpuk_buffer_create(ctx, &bd, &buf));
    CHECK_OK(gpuk_pinned_create(ctx, &pd, &pin));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e));
    CHECK_OK(gpuk_module_load(ctx, &md, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "scale", &k));

    fake.cfg.fail_name = "cuMemFree";
    CHECK_RESULT(gpuk_buffer_destroy(ctx, buf), (gpuk_result)1);
    CHECK(gpuk_buffer_size(ctx, buf) == 64 && fake_live_count(FK_ALLOC) == 1);
    fake.cfg.fail_name = "cuMemFreeHost";
    CHECK_RESULT(gpuk_pinned_destroy(ctx, pin), (gpuk_result)1);
    CHECK(gpuk_pinned_ptr(ctx, pin) != NULL && fake_live_count(FK_HOST) == 1);
    fake.cfg.fail_name = "cuStreamDestroy";
    CHECK_RESULT(gpuk_stream_destroy(ctx, s), (gpuk_result)1);
    CHECK(gpuk_stream_native(ctx, s) != NULL && fake_live_count(FK_STREAM) == 2);
    fake.cfg.fail_name = "cuEventDestroy";
    CHECK_RESULT(gpuk_event_destroy(ctx, e), (gpuk_result)1);
    CHECK(fake_live_count(FK_EVENT) == 1);
    fake.cfg.fail_name = "cuModuleUnload";
    CHECK_RESULT(gpuk_module_unload(ctx, m), (gpuk_result)1);
    CHECK(fake_live_count(FK_MODULE) == 1);
    fake.cfg.fail_name = NULL;
    /* still live: usable, and the retry releases each */
    CHECK_OK(gpuk_event_sync(ctx, e));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_kernel_query(ctx, k, &ki));
    CHECK_OK(gpuk_buffer_destroy(ctx, buf));
    CHECK_OK(gpuk_pinned_destroy(ctx, pin));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_event_destroy(ctx, e));
    CHECK_OK(gpuk_module_unload(ctx, m));
    CHECK_RESULT(gpuk_kernel_query(ctx, k, &ki), GPUK_ERR_INVALID_HANDLE);
    CHECK(fake_live_count(FK_ALLOC) == 0 && fake_live_count(FK_HOST) == 0 && fake_live_count(FK_STREAM) == 1 &&
          fake_live_count(FK_EVENT) == 0 && fake_live_count(FK_MODULE) == 0);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    down();
    return TEST_PASS;
}

/* A ctx destroy that fails before or while releasing keeps the ctx: its objects, the primary
   context reference and the default stream stay, and the retry releases them. */
static void ctx_destroy_fails_at(const char* call) {
    gpuk_ctx* a;
    gpuk_ctx* b;
    gpuk_buffer buf;
    gpuk_buffer_desc bd;
    up(2);
    a = ctx_on(0, 0);
    b = ctx_on(1, 0); /* makes device 1 current: destroying a must make a current first */
    if (!a || !b) return;
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    CHECK_OK(gpuk_buffer_create(a, &bd, &buf));
    CHECK_OK(gpuk_ctx_make_current(b));
    fake.cfg.fail_name = call;
    CHECK_RESULT(gpuk_ctx_destroy(a), (gpuk_result)1);
    CHECK_ERROR_MENTIONS(call);
    fake.cfg.fail_name = NULL;
    CHECK(fake.primary_refs[0] == 1);
    CHECK(gpuk_buffer_size(a, buf) == 64 && fake_live_count(FK_ALLOC) == 1);
    CHECK(fake_live_count(FK_STREAM) == 2);
    CHECK_OK(gpuk_buffer_write(a, buf, 0, "0123456789", 10));
    CHECK_RESULT(gpuk_shutdown(), GPUK_ERR_BUSY);
    CHECK_OK(gpuk_ctx_destroy(a));
    CHECK_OK(gpuk_ctx_destroy(b));
    down();
}

static int test_ctx_destroy_failed_set_current_keeps_ctx(void) {
    ctx_destroy_fails_at("cuCtxSetCurrent");
    return TEST_PASS;
}

static int test_ctx_destroy_failed_free_keeps_ctx(void) {
    ctx_destroy_fails_at("cuMemFree");
    return TEST_PASS;
}

/* After a sticky fault: no driver call, host state freed, the handle is gone. */
static int test_destroy_after_sticky_fault_frees_host_state(void) {
    gpuk_ctx* ctx;
    gpuk_buffer buf;
    gpuk_buffer_desc bd;
    long calls;
    up(1);
    ctx = ctx_on(0, 0);
    if (!ctx) return TEST_PASS;
    memset(&bd, 0, sizeof bd);
    bd.bytes = 64;
    CHECK_OK(gpuk_buffer_create(ctx, &bd, &buf));
    fake.cfg.fail_code = 700;
    fake.cfg.sticky = 1;
    fake.cfg.fail_name = "cuMemFree";
    CHECK_RESULT(gpuk_buffer_destroy(ctx, buf), (gpuk_result)700);
    calls = fake.calls;
    CHECK(gpuk_buffer_size(ctx, buf) == 0);
    CHECK_RESULT(gpuk_ctx_destroy(ctx), (gpuk_result)700);
    CHECK(fake.calls == calls);
    CHECK_OK(gpuk_shutdown());
    return TEST_PASS;
}

int main(void) {
    RUN(test_stale_refused_after_wrap_default_pool);
    RUN(test_stale_refused_after_wrap_one_slot);
    RUN(test_foreign_ctx_refused_same_device);
    RUN(test_foreign_ctx_refused_two_devices);
    RUN(test_foreign_ctx_refused_every_kind);
    RUN(test_handle_of_destroyed_ctx_refused_by_next);
    RUN(test_failed_destroy_keeps_handle);
    RUN(test_ctx_destroy_failed_set_current_keeps_ctx);
    RUN(test_ctx_destroy_failed_free_keeps_ctx);
    RUN(test_destroy_after_sticky_fault_frees_host_state);
    return test_summary();
}
