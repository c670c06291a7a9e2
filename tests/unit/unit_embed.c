/* tests/unit/unit_embed.c - the wrappers tools/gpuk_embed.py generates
   (tests/support/embed_test_kernels.h from tests/support/embed_test_kernels.cu) against the fake
   driver: the module loads with every kernel, each wrapper's launch reaches the driver with the
   argument bytes the kernel takes (pointers as the view's device address, scalars as they are,
   sizes checked against the PTX by gpuk's debug launch check, views through gpuk_array_resolve),
   and bad views (zero or destroyed handles, first past the buffer's end, a misaligned address) and
   a missing launch struct or kernel are refused before any driver call. The fake runs no kernel:
   tests/gpu/gpu_embed.c checks the results on a GPU.
   cc -std=c99 -I. tests/unit/unit_embed.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/embed_test_kernels.h"

static gpuk_ctx* ctx;
static embed_kernels k;

static gpuk_buffer buffer(size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .label = "b" }, &b));
    return b;
}

/* argument i of the last launch holds the bytes of *value */
static int arg_is(int i, const void* value, size_t bytes) {
    return memcmp(fake.last_args[i], value, bytes) == 0;
}
#define ARG_IS(i, v) arg_is(i, &(v), sizeof(v))

static int test_load_gets_every_kernel_and_unload_releases_them(void) {
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(embed_load(ctx, &k));
    CHECK(k.module.id != 0);
    CHECK(k.saxpy.id && k.widen.id && k.small_args.id && k.xor_bytes.id && k.add_index_u16.id &&
          k.nothing.id);
    CHECK(fake_live_count(FK_MODULE) == 1);
    CHECK_OK(embed_unload(ctx, &k));
    CHECK(k.module.id == 0 && k.saxpy.id == 0 && k.nothing.id == 0);
    CHECK(fake_live_count(FK_MODULE) == 0);
    /* unloaded: the zeroed struct's kernels are refused, and a second unload too */
    CHECK_RESULT(embed_nothing(ctx, &k, &(gpuk_grid){ GPUK_DIM1(1), GPUK_DIM1(1), 0, { 0 } }),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(embed_unload(ctx, &k), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(embed_load(ctx, NULL), GPUK_ERR_INVALID_ARG);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* a kernel_get failure after the module loaded: out is zero and nothing stays loaded */
static int test_failed_load_leaves_nothing_loaded(void) {
    fake_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_name = "cuModuleGetFunction";
    ctx = fake_gpuk_up(&cfg);
    memset(&k, 0xAB, sizeof k);
    CHECK(embed_load(ctx, &k) != GPUK_OK);
    CHECK(k.module.id == 0 && k.saxpy.id == 0);
    CHECK(fake_live_count(FK_MODULE) == 0);
    fake_gpuk_down(ctx);
    memset(&cfg, 0, sizeof cfg);
    cfg.jit_code = 218;
    cfg.jit_log = "ptxas fatal: bad";
    ctx = fake_gpuk_up(&cfg);
    CHECK_RESULT(embed_load(ctx, &k), 218);
    CHECK(k.module.id == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static int test_each_wrapper_passes_its_arguments_as_the_kernel_takes_them(void) {
    gpuk_buffer f = buffer(1024), u = buffer(1024);
    gpuk_devptr fp = gpuk_buffer_devptr(ctx, f), up_ = gpuk_buffer_devptr(ctx, u);
    gpuk_grid g = gpuk_grid_1d(1000, 256);
    long launches;
    CHECK(g.grid.x == 4 && g.block.x == 256 && g.shared_bytes == 0 && g.stream.id == 0);
    CHECK_OK(embed_load(ctx, &k));
    {   /* float, const float*, float*, unsigned */
        float a = 2.5f;
        unsigned n = 77;
        gpuk_devptr x = fp + 3 * 4, y = up_ + 10 * 4;
        launches = fake.launches;
        CHECK_OK(embed_saxpy(ctx, &k, &g, a, gpuk_at(f, 3), gpuk_at(u, 10), n));
        CHECK(fake.launches == launches + 1);
        CHECK(ARG_IS(0, a) && ARG_IS(1, x) && ARG_IS(2, y) && ARG_IS(3, n));
    }
    {   /* const int32_t*, double*, double, long long, uint64_t */
        double scale = -0.125;
        long long offset = -1234567890123LL;
        uint64_t n = 0x123456789ULL;
        gpuk_devptr in = fp + 5 * 4, out = up_ + 7 * 8;
        CHECK_OK(embed_widen(ctx, &k, &g, gpuk_at(f, 5), gpuk_at(u, 7), scale, offset, n));
        CHECK(ARG_IS(0, in) && ARG_IS(1, out) && ARG_IS(2, scale) && ARG_IS(3, offset) &&
              ARG_IS(4, n));
    }
    {   /* 1- and 2-byte scalars of every signedness, then a pointer */
        int8_t a = -5;
        uint8_t b = 250;
        short c = -30000;
        unsigned short d = 65000;
        char e = 'q';
        int16_t h = -2;
        gpuk_devptr out = up_ + 8;
        CHECK_OK(embed_small_args(ctx, &k, &g, a, b, c, d, e, h, gpuk_at(u, 1)));
        CHECK(ARG_IS(0, a) && ARG_IS(1, b) && ARG_IS(2, c) && ARG_IS(3, d) && ARG_IS(4, e) &&
              ARG_IS(5, h) && ARG_IS(6, out));
    }
    {   /* a byte view at an odd element: 1-byte alignment is fine */
        unsigned char key = 0x5A;
        uint32_t n = 9;
        gpuk_devptr bytes = fp + 13;
        CHECK_OK(embed_xor_bytes(ctx, &k, &g, gpuk_at(f, 13), key, n));
        CHECK(ARG_IS(0, bytes) && ARG_IS(1, key) && ARG_IS(2, n));
    }
    {   /* 16-bit elements; first counts elements, not bytes */
        int n = -1;
        gpuk_devptr src = fp + 2 * 511, dst = up_;
        CHECK_OK(embed_add_index_u16(ctx, &k, &g, gpuk_at(f, 511), gpuk_at(u, 0), n));
        CHECK(ARG_IS(0, src) && ARG_IS(1, dst) && ARG_IS(2, n));
    }
    {   /* first == the buffer's element count: an empty tail view, allowed */
        float a = 1.0f;
        gpuk_devptr end = fp + 1024;
        CHECK_OK(embed_saxpy(ctx, &k, &g, a, gpuk_at(f, 256), gpuk_at(f, 256), 0u));
        CHECK(ARG_IS(1, end) && ARG_IS(2, end));
    }
    {   /* no parameters; the launch struct's shape, shared bytes and stream are used */
        gpuk_stream s;
        gpuk_grid g2 = g;
        CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
        g2.stream = s;
        g2.shared_bytes = 128;
        launches = fake.launches;
        CHECK_OK(embed_nothing(ctx, &k, &g2));
        CHECK(fake.launches == launches + 1);
        g2.stream.id = 0x7777;   /* a bad stream handle is gpuk_launch's to refuse */
        CHECK_RESULT(embed_nothing(ctx, &k, &g2), GPUK_ERR_INVALID_HANDLE);
        g2.stream = s;
        g2.block.x = 0;          /* and an empty block */
        CHECK_RESULT(embed_nothing(ctx, &k, &g2), GPUK_ERR_INVALID_ARG);
        CHECK(fake.launches == launches + 1);
        CHECK_OK(gpuk_stream_destroy(ctx, s));
    }
    CHECK_OK(embed_unload(ctx, &k));
    return TEST_PASS;
}

/* Bad views and a missing launch struct or kernel table: an error, and no driver call. */
static int test_bad_views_are_refused_before_the_driver(void) {
    gpuk_buffer f = buffer(1024), dead = buffer(64), odd = { 0 };
    gpuk_grid g = gpuk_grid_1d(1, 1);
    const gpuk_array zero = { { 0 }, 0 };
    long calls;
    CHECK_OK(gpuk_buffer_destroy(ctx, dead));
    /* a wrapped buffer starting one byte into f: every element of it is misaligned */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 512,
                                                          .wrap = gpuk_buffer_devptr(ctx, f) + 1 },
                                &odd));
    CHECK_OK(embed_load(ctx, &k));
    calls = fake.calls;
    /* the error names the wrapper and the parameter (gpuk_array_resolve's what) */
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, zero, gpuk_at(f, 0), 1u), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("gpuk_array_resolve: embed_saxpy: x handle is zero");
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(f, 0), zero, 1u), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("embed_saxpy: y handle is zero");
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(dead, 0), gpuk_at(f, 0), 1u),
                 GPUK_ERR_INVALID_HANDLE);
    /* 1024 bytes hold 256 floats: first 257 starts past the end */
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(f, 0), gpuk_at(f, 257), 1u),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("embed_saxpy: y: first 257 is past the end of buffer 'b' (256 elements of 4 bytes)");
    CHECK_RESULT(embed_widen(ctx, &k, &g, gpuk_at(f, 0), gpuk_at(f, 129), 1.0, 0, 1),
                 GPUK_ERR_OUT_OF_BOUNDS);     /* 128 doubles */
    CHECK_ERROR_MENTIONS("embed_widen: out: first 129");
    CHECK_RESULT(embed_widen(ctx, &k, &g, gpuk_at(f, (size_t)-1), gpuk_at(f, 0), 1.0, 0, 1),
                 GPUK_ERR_OUT_OF_BOUNDS);     /* first * 4 would overflow */
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(odd, 0), gpuk_at(f, 0), 1u),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not aligned");
    CHECK_RESULT(embed_add_index_u16(ctx, &k, &g, gpuk_at(f, 0), gpuk_at(odd, 4), 1),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("embed_add_index_u16: dst: address");
    CHECK_ERROR_MENTIONS("not aligned to its 2-byte elements");
    CHECK_RESULT(embed_saxpy(ctx, &k, NULL, 1.0f, gpuk_at(f, 0), gpuk_at(f, 0), 1u),
                 GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(embed_saxpy(ctx, NULL, &g, 1.0f, gpuk_at(f, 0), gpuk_at(f, 0), 1u),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(embed_saxpy(NULL, &k, &g, 1.0f, gpuk_at(f, 0), gpuk_at(f, 0), 1u),
                 GPUK_ERR_INVALID_ARG);
    CHECK(fake.calls == calls);
    /* the byte kernel takes the odd buffer: 1-byte elements are always aligned */
    CHECK_OK(embed_xor_bytes(ctx, &k, &g, gpuk_at(odd, 0), 1, 1u));
    CHECK(fake.calls > calls);
    CHECK_OK(embed_unload(ctx, &k));
    CHECK_OK(gpuk_buffer_destroy(ctx, odd));
    return TEST_PASS;
}

/* n = 0 through a wrapper: gpuk_grid_1d(0, block) gives an empty grid, which checks the
   views and runs nothing (as the built-ins' n = 0); a bad view is still refused. */
static int test_empty_grid_checks_and_runs_nothing(void) {
    gpuk_buffer f = buffer(1024), dead = buffer(64);
    gpuk_grid g = gpuk_grid_1d(0, 256);
    long launches;
    CHECK(g.grid.x == 0 && g.block.x == 256);
    CHECK_OK(gpuk_buffer_destroy(ctx, dead));
    CHECK_OK(embed_load(ctx, &k));
    launches = fake.launches;
    CHECK_OK(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(f, 0), gpuk_at(f, 0), 0u));
    CHECK_OK(embed_nothing(ctx, &k, &g));
    CHECK(fake.launches == launches);
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(dead, 0), gpuk_at(f, 0), 0u), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(embed_saxpy(ctx, &k, &g, 1.0f, gpuk_at(f, 257), gpuk_at(f, 0), 0u), GPUK_ERR_OUT_OF_BOUNDS);
    /* gpuk_launch itself keeps the driver's rule: a grid of 0 blocks is an error there */
    CHECK_RESULT(gpuk_launch(ctx, k.nothing, &(gpuk_launch_desc){ .block = GPUK_DIM1(1) }), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("grid.x is 0");
    CHECK(fake.launches == launches);
    CHECK_OK(embed_unload(ctx, &k));
    CHECK_OK(gpuk_buffer_destroy(ctx, f));
    return TEST_PASS;
}

/* gpuk_grid_2d (gpuk.h): x over columns, y over rows, whole blocks covering both; cols or rows 0
   an empty grid; block_y 0 is 1, block_x 0 reaches gpuk_launch, which refuses it. */
static int test_grid_2d_covers_columns_and_rows(void) {
    gpuk_grid g = gpuk_grid_2d(1000, 3, 32, 8);
    long launches;
    CHECK(g.grid.x == 32 && g.grid.y == 1 && g.block.x == 32 && g.block.y == 8);
    CHECK(g.shared_bytes == 0 && g.stream.id == 0);
    g = gpuk_grid_2d(64, 65, 16, 16);
    CHECK(g.grid.x == 4 && g.grid.y == 5);
    CHECK_OK(embed_load(ctx, &k));
    launches = fake.launches;
    CHECK_OK(embed_nothing(ctx, &k, &g));
    CHECK(fake.launches == launches + 1);
    CHECK(fake.last_grid[0] == 4 && fake.last_grid[1] == 5 && fake.last_grid[2] == 1);
    CHECK(fake.last_block[0] == 16 && fake.last_block[1] == 16 && fake.last_block[2] == 1);
    g = gpuk_grid_2d(7, 9, 8, 0);
    CHECK(g.grid.x == 1 && g.grid.y == 9 && g.block.y == 1);
    g = gpuk_grid_2d(1000, 0, 16, 16);
    CHECK(g.grid.x == 0);
    CHECK_OK(embed_nothing(ctx, &k, &g));
    g = gpuk_grid_2d(0, 1000, 16, 16);
    CHECK(g.grid.x == 0);
    CHECK_OK(embed_nothing(ctx, &k, &g));
    CHECK(fake.launches == launches + 1);
    g = gpuk_grid_2d(1000, 3, 0, 8);
    CHECK_RESULT(embed_nothing(ctx, &k, &g), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("block");
    CHECK(fake.launches == launches + 1);
    CHECK_OK(embed_unload(ctx, &k));
    return TEST_PASS;
}

/* gpuk_array_resolve itself: the address of element first, the elements left to the end */
static int test_array_resolve_gives_address_and_elements_left(void) {
    gpuk_buffer b = buffer(100);
    gpuk_devptr p = 1;
    size_t left = 1;
    CHECK_OK(gpuk_array_resolve(ctx, gpuk_at(b, 3), 8, "v", &p, &left));
    CHECK(p == gpuk_buffer_devptr(ctx, b) + 24 && left == 9);   /* 12 doubles, 3 skipped */
    CHECK_OK(gpuk_array_resolve(ctx, gpuk_at(b, 100), 1, NULL, &p, &left));
    CHECK(p == gpuk_buffer_devptr(ctx, b) + 100 && left == 0);  /* the end: empty, allowed */
    CHECK_RESULT(gpuk_array_resolve(ctx, gpuk_at(b, 7), 16, NULL, &p, &left), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("view: first 7 is past the end of buffer 'b' (6 elements of 16 bytes)");
    CHECK(p == 0 && left == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    return TEST_PASS;
}

/* Every driver call of a program using the generated header (ctx, buffers, load, a launch,
   unload) failed in turn: no error without a failed call, a failed load leaves nothing
   loaded, nothing leaks, and the fake sees no misuse. */
static int test_every_driver_failure_is_reported_and_leaks_nothing(void) {
    long n, total = 0;
    for (n = 1; n < 200; n++) {
        fake_config cfg;
        gpuk_ctx* c = NULL;
        gpuk_buffer b = { 0 };
        embed_kernels kk;
        gpuk_grid g = gpuk_grid_1d(64, 64);
        int failed = 0;
        memset(&cfg, 0, sizeof cfg);
        cfg.fail_at = n;
        memset(&kk, 0, sizeof kk);
        if (fake_gpuk_init(&cfg) != GPUK_OK || gpuk_ctx_create(NULL, &c) != GPUK_OK) failed = 1;
        if (!failed && gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 256 }, &b) != GPUK_OK) failed = 1;
        if (!failed && embed_load(c, &kk) != GPUK_OK) {
            failed = 1;
            CHECK(kk.module.id == 0 && kk.saxpy.id == 0 && fake_live_count(FK_MODULE) == 0);
        }
        if (!failed && embed_saxpy(c, &kk, &g, 1.0f, gpuk_at(b, 0), gpuk_at(b, 0), 64u) != GPUK_OK) failed = 1;
        if (!failed && embed_unload(c, &kk) != GPUK_OK) failed = 1;
        if (c && gpuk_ctx_destroy(c) != GPUK_OK) {
            failed = 1;
            fake.cfg.fail_at = 0;               /* a failed destroy keeps the ctx for a retry */
            CHECK_OK(gpuk_ctx_destroy(c));
        }
        CHECK(!failed || fake.failed_calls > 0); /* gpuk may ride out some failures, not invent one */
        if (fake.protocol_errors) fprintf(stderr, "  fail_at %ld: fake driver: %s\n", n, fake.protocol_msg);
        CHECK(fake.protocol_errors == 0);
        CHECK(fake_all_released());
        CHECK_OK(gpuk_shutdown());
        total++;
        if (!fake.failed_calls) break;   /* n is past the program's last driver call */
    }
    CHECK(n < 200 && total > 10);
    return TEST_PASS;
}

int main(void) {
    RUN(test_load_gets_every_kernel_and_unload_releases_them);
    RUN(test_failed_load_leaves_nothing_loaded);
    RUN(test_every_driver_failure_is_reported_and_leaks_nothing);
    ctx = fake_gpuk_up(NULL);
    RUN(test_each_wrapper_passes_its_arguments_as_the_kernel_takes_them);
    RUN(test_bad_views_are_refused_before_the_driver);
    RUN(test_empty_grid_checks_and_runs_nothing);
    RUN(test_grid_2d_covers_columns_and_rows);
    RUN(test_array_resolve_gives_address_and_elements_left);
    fake_gpuk_down(ctx);
    return test_summary();
}
