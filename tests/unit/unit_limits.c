/* tests/unit/unit_limits.c - the ctx's limits (gpuk_ctx_set_limit, gpuk_ctx_get_limit) and the
   launch record, on the fake driver: each limit read and set through to the driver's context of
   the ctx's device, unknown limits refused before the driver, the printf FIFO and the malloc
   heap refused by gpuk once the ctx has launched a kernel (gpuk_launch, an extended launch, a
   graph, a custom kernel) with a text naming the rule and the kernel while the stack size
   still changes, the driver's own refusal passed through with its reason, a sticky fault's
   text naming the last launch of every live ctx (a device-side assert, 710, and a trap's
   719) and the way to the failing line. No GPU needed.
   cc -std=c99 -I../.. unit_limits.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/fake_nvrtc.h"

/* plain: no device system call; say: calls vprintf, as nvcc's PTX for printf does; fault: the
   fake driver's faulting kernel (its fault_on_sync code at the next sync) */
static const char ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, "
    ".param .b64 vprintf_param_1);\n"
    ".visible .entry plain(.param .u64 p)\n{\n ret;\n}\n"
    ".visible .entry say()\n{\n .param .b64 param0;\n .param .b64 param1;\n .param .b32 retval0;\n"
    " call.uni (retval0), vprintf, (param0, param1);\n ret;\n}\n"
    ".visible .entry fault()\n{\n ret;\n}\n";

static const gpuk_limit all_limits[] = {
    GPUK_LIMIT_STACK_SIZE, GPUK_LIMIT_PRINTF_FIFO_SIZE, GPUK_LIMIT_MALLOC_HEAP_SIZE,
    GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH, GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT
};

static gpuk_kernel kernel_of(gpuk_ctx* c, const char* name) {
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    CHECK_OK(gpuk_module_load(c, &(gpuk_module_desc){ .image = { ptx, 0 }, .label = "limits" }, &m));
    CHECK_OK(gpuk_kernel_get(c, m, name, &k));
    return k;
}

static gpuk_result launch(gpuk_ctx* c, gpuk_kernel k) {
    gpuk_devptr p = 0;
    gpuk_kernel_info info;
    if (gpuk_kernel_query(c, k, &info) == GPUK_OK && info.num_params == 1)
        return gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32), GPUK_ARGS(&p) });
    return gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32) });
}

/* Every limit reads the driver's default; a set reaches the driver and reads back; the sync
   depth is the driver's to refuse from compute capability 9.0 (215, with the reason). */
static int test_defaults_and_round_trip(void) {
    fake_config cfg;
    gpuk_ctx* c;
    size_t v = 0;
    static const size_t defaults[5] = { 1024, 1 << 20, 8 << 20, 2, 2048 };
    size_t i;
    memset(&cfg, 0, sizeof cfg);
    cfg.cc_major = 8; /* an A100: the sync depth is there */
    c = fake_gpuk_up(&cfg);
    for (i = 0; i < 5; i++) {
        CHECK_OK(gpuk_ctx_get_limit(c, all_limits[i], &v));
        CHECK(v == defaults[i]);
    }
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_STACK_SIZE, 4096));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 4 << 20));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_MALLOC_HEAP_SIZE, 64 << 20));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 4096));
    CHECK(fake.set_limit_calls == 5);
    CHECK(fake.limits[0][0] == 4096 && fake.limits[0][1] == (4 << 20) && fake.limits[0][2] == (64 << 20) &&
          fake.limits[0][3] == 4 && fake.limits[0][4] == 4096);
    CHECK_OK(gpuk_ctx_get_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, &v));
    CHECK(v == (4 << 20));
    CHECK_OK(gpuk_ctx_get_limit(c, GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH, &v));
    CHECK(v == 4);
    fake_gpuk_down(c);
    /* Hopper: no sync depth, the driver says so and gpuk passes it on with the reason */
    c = fake_gpuk_up(NULL);
    v = 5;
    CHECK_RESULT(gpuk_ctx_get_limit(c, GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH, &v), (gpuk_result)215);
    CHECK(v == 0);
    CHECK_ERROR_MENTIONS("cuCtxGetLimit: CUDA_ERROR_UNSUPPORTED_LIMIT (215): GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH");
    CHECK_ERROR_MENTIONS("compute capability 9.0");
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4), (gpuk_result)215);
    CHECK_ERROR_MENTIONS("cuCtxSetLimit: CUDA_ERROR_UNSUPPORTED_LIMIT (215): GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 4");
    /* limits belong to the device's primary context: a ctx of device 1 has its own */
    fake_gpuk_down(c);
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    c = fake_gpuk_up(&cfg);
    {
        gpuk_ctx* d1 = NULL;
        CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &d1));
        CHECK_OK(gpuk_ctx_set_limit(d1, GPUK_LIMIT_STACK_SIZE, 8192));
        CHECK_OK(gpuk_ctx_get_limit(c, GPUK_LIMIT_STACK_SIZE, &v));
        CHECK(v == 1024);
        CHECK_OK(gpuk_ctx_get_limit(d1, GPUK_LIMIT_STACK_SIZE, &v));
        CHECK(v == 8192 && fake.limits[1][0] == 8192);
        CHECK_OK(gpuk_ctx_destroy(d1));
    }
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* 0, GPUK_LIMIT_NUM and values past it: refused with the value named, before the driver. */
static int test_unknown_limits_refused(void) {
    gpuk_ctx* c = fake_gpuk_up(NULL);
    static const unsigned bad[] = { 0u, (unsigned)GPUK_LIMIT_NUM, 99u, 0x7FFFFFFFu };
    size_t i, v = 7;
    long calls = fake.calls;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_RESULT(gpuk_ctx_set_limit(c, (gpuk_limit)bad[i], 1), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("is not a gpuk_limit");
        v = 7;
        CHECK_RESULT(gpuk_ctx_get_limit(c, (gpuk_limit)bad[i], &v), GPUK_ERR_INVALID_ARG);
        CHECK(v == 0);
    }
    CHECK_ERROR_MENTIONS("gpuk_ctx_get_limit: which = 2147483647 is not a gpuk_limit");
    CHECK_RESULT(gpuk_ctx_get_limit(c, GPUK_LIMIT_STACK_SIZE, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_ctx_set_limit(NULL, GPUK_LIMIT_STACK_SIZE, 1), GPUK_ERR_INVALID_ARG);
    CHECK(fake.calls == calls);
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* After the ctx's first launch gpuk refuses the FIFO and the heap itself, naming the rule and
   the kernel, without a driver call; the stack size and the pending launch count still
   change, and every limit still reads. A ctx of another device is not held by it, and a ctx
   made after the device's primary context went away starts afresh. */
static int test_fifo_and_heap_only_before_the_first_launch(void) {
    fake_config cfg;
    gpuk_ctx *c, *d1 = NULL;
    gpuk_kernel k;
    size_t v = 0;
    long calls;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    c = fake_gpuk_up(&cfg);
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &d1));
    k = kernel_of(c, "plain");
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 2 << 20)); /* before: fine */
    CHECK_OK(launch(c, k));
    calls = fake.calls;
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 4 << 20), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_ctx_set_limit: GPUK_LIMIT_PRINTF_FIFO_SIZE can be set only before the ctx's "
                         "first kernel launch");
    CHECK_ERROR_MENTIONS("a kernel calling printf");
    CHECK_ERROR_MENTIONS("kernel 'plain' has been launched");
    CHECK_ERROR_MENTIONS("right after gpuk_ctx_create");
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_MALLOC_HEAP_SIZE, 64 << 20), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("GPUK_LIMIT_MALLOC_HEAP_SIZE can be set only before");
    CHECK_ERROR_MENTIONS("malloc or free");
    CHECK(fake.calls == calls);
    CHECK(fake.limits[0][1] == (2 << 20) && fake.limits[0][2] == (8 << 20));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_STACK_SIZE, 16384));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 8192));
    CHECK(fake.limits[0][0] == 16384 && fake.limits[0][4] == 8192);
    CHECK_OK(gpuk_ctx_get_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, &v));
    CHECK(v == (2 << 20));
    /* device 1's ctx has launched nothing */
    CHECK_OK(gpuk_ctx_set_limit(d1, GPUK_LIMIT_MALLOC_HEAP_SIZE, 32 << 20));
    CHECK(fake.limits[1][2] == (32 << 20));
    CHECK_OK(gpuk_ctx_destroy(d1));
    /* the same device again once its primary context is gone: a fresh start */
    CHECK_OK(gpuk_ctx_destroy(c));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 4 << 20));
    CHECK(fake.limits[0][1] == (4 << 20));
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* An extended launch, a graph launch and a custom kernel count as launches too; a failed
   launch does not. */
static int test_every_kind_of_launch_counts(void) {
    gpuk_ctx* c = fake_gpuk_up(NULL);
    gpuk_kernel k = kernel_of(c, "plain");
    gpuk_devptr p = 0;
    gpuk_stream s;
    gpuk_buffer b;
    gpuk_graph g;
    /* a refused launch (block.x 0) and one the driver fails are not launches */
    CHECK_RESULT(gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(0), GPUK_ARGS(&p) }),
                 GPUK_ERR_INVALID_ARG);
    fake.cfg.fail_name = "cuLaunchKernel";
    CHECK_RESULT(launch(c, k), (gpuk_result)1);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 2 << 20));
    /* extended */
    CHECK_OK(gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(2), .block = GPUK_DIM1(32), GPUK_ARGS(&p),
                                                    .cluster = GPUK_DIM1(2) }));
    CHECK(fake.ex_launches == 1);
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 2 << 20), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("kernel 'plain' has been launched");
    fake_gpuk_down(c);
    /* a graph of a memset alone: its launch is recorded as the graph */
    c = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_stream_create(c, NULL, &s));
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    CHECK_OK(gpuk_graph_begin_capture(c, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_memset(c, s, b, 0, 7, 1, 64));
    CHECK_OK(gpuk_graph_end_capture(c, s, &g));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_MALLOC_HEAP_SIZE, 16 << 20)); /* captured, not run */
    CHECK_OK(gpuk_graph_launch(c, s, g));
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_MALLOC_HEAP_SIZE, 32 << 20), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("a CUDA graph (gpuk_graph_launch) has been launched");
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* A custom kernel from a C expression (fake NVRTC): its launch is recorded by its name. */
static int test_custom_kernel_counts(void) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_elementwise ew;
    gpuk_buffer y;
    gpuk_elementwise_desc ed;
    gpuk_shutdown();
    fake_reset(NULL);
    fake_nvrtc_reset(NULL);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_get_proc = fake_nvrtc_get_proc;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
    memset(&ed, 0, sizeof ed);
    ed.params = "float* y";
    ed.body = "y[i] = 1.0f";
    ed.name = "ones";
    CHECK_OK(gpuk_elementwise_create(c, &ed, &ew));
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 64 }, &y));
    /* n = 0 launches nothing */
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &ew, 0, GPUK_ARGV(gpuk_arg_array(gpuk_at(y, 0)))));
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 2 << 20));
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &ew, 16, GPUK_ARGV(gpuk_arg_array(gpuk_at(y, 0)))));
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_PRINTF_FIFO_SIZE, 4 << 20), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("kernel 'ones' has been launched");
    CHECK_OK(gpuk_ctx_destroy(c));
    CHECK(fake_nv.live_programs == 0);
    fake_gpuk_check_released();
    return TEST_PASS;
}

/* A built-in kernel's launch is recorded by its name too. */
static int test_builtin_kernel_counts(void) {
    gpuk_ctx* c = fake_gpuk_up(NULL);
    gpuk_buffer y;
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 64 }, &y));
    CHECK_OK(gpuk_fill_f32(c, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), 0, 1.0f)); /* n = 0: no launch */
    CHECK_OK(gpuk_ctx_set_limit(c, GPUK_LIMIT_MALLOC_HEAP_SIZE, 16 << 20));
    CHECK_OK(gpuk_fill_f32(c, GPUK_DEFAULT_STREAM, gpuk_at(y, 0), 16, 1.0f));
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_MALLOC_HEAP_SIZE, 32 << 20), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("kernel 'gpuk_fill_f32' has been launched");
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* The driver's own rule, as the fake keeps it: after a kernel calling printf has run, the raw
   cuCtxSetLimit of the FIFO answers 1 (a plain kernel leaves it settable). A second ctx of
   the same device, which has launched nothing, meets that refusal: gpuk passes the driver's
   code on with the reason. */
static int test_driver_refusal_passed_on(void) {
    typedef unsigned int (*set_limit_fn)(unsigned int limit, size_t value);
    gpuk_ctx *c = fake_gpuk_up(NULL), *c2 = NULL;
    set_limit_fn raw;
    void* sym = gpuk_driver_symbol("cuCtxSetLimit", 3010);
    CHECK(sym != NULL);
    memcpy(&raw, &sym, sizeof raw);
    CHECK_OK(launch(c, kernel_of(c, "plain")));
    CHECK_OK(gpuk_ctx_make_current(c));
    CHECK(raw(1, 2 << 20) == 0); /* no printf has run */
    CHECK_OK(launch(c, kernel_of(c, "say")));
    CHECK(raw(1, 4 << 20) == 1 && raw(2, 16 << 20) == 0 && raw(0, 4096) == 0);
    CHECK_OK(gpuk_ctx_create(NULL, &c2));
    CHECK_RESULT(gpuk_ctx_set_limit(c2, GPUK_LIMIT_PRINTF_FIFO_SIZE, 4 << 20), (gpuk_result)1);
    CHECK_ERROR_MENTIONS("cuCtxSetLimit: CUDA_ERROR_INVALID_VALUE (1): GPUK_LIMIT_PRINTF_FIFO_SIZE = 4194304: "
                         "refused once a kernel calling printf has run in the device's primary context");
    CHECK_OK(gpuk_ctx_set_limit(c2, GPUK_LIMIT_MALLOC_HEAP_SIZE, 32 << 20)); /* no malloc has run */
    CHECK(fake.limits[0][1] == (2 << 20) && fake.limits[0][2] == (32 << 20));
    /* another failure of the call: its code and the limit named */
    fake.cfg.fail_name = "cuCtxSetLimit";
    fake.cfg.fail_code = 2;
    CHECK_RESULT(gpuk_ctx_set_limit(c2, GPUK_LIMIT_STACK_SIZE, 1 << 20), (gpuk_result)2);
    CHECK_ERROR_MENTIONS("cuCtxSetLimit: CUDA_ERROR_OUT_OF_MEMORY (2): GPUK_LIMIT_STACK_SIZE = 1048576");
    fake.cfg.fail_name = "cuCtxGetLimit";
    {
        size_t v = 9;
        CHECK_RESULT(gpuk_ctx_get_limit(c2, GPUK_LIMIT_STACK_SIZE, &v), (gpuk_result)2);
        CHECK(v == 0);
        CHECK_ERROR_MENTIONS("cuCtxGetLimit: CUDA_ERROR_OUT_OF_MEMORY (2): GPUK_LIMIT_STACK_SIZE");
    }
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_ctx_destroy(c2));
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* A device-side assert (710) is sticky like 700: its text names the last launch of each live
   ctx (a kernel on device 0, a graph on device 1), says CUDA is unusable and how to find the
   line; every later call gives the same cause, naming the kernel, without a driver call. */
static int test_assert_names_the_last_launch(void) {
    fake_config cfg;
    gpuk_ctx *c, *d1 = NULL;
    gpuk_stream s;
    gpuk_buffer b;
    gpuk_graph g;
    gpuk_kernel k;
    size_t v = 3;
    long calls;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = 2;
    cfg.fault_on_sync = 710;
    c = fake_gpuk_up(&cfg);
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &d1));
    CHECK_OK(gpuk_stream_create(d1, NULL, &s));
    CHECK_OK(gpuk_buffer_create(d1, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    CHECK_OK(gpuk_graph_begin_capture(d1, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_memset(d1, s, b, 0, 7, 1, 64));
    CHECK_OK(gpuk_graph_end_capture(d1, s, &g));
    CHECK_OK(gpuk_graph_launch(d1, s, g));
    k = kernel_of(c, "plain");
    CHECK_OK(launch(c, k));
    CHECK_OK(launch(c, kernel_of(c, "fault")));
    CHECK_RESULT(gpuk_ctx_sync(c), (gpuk_result)710);
    printf("     %s\n", gpuk_last_error());
    CHECK_ERROR_MENTIONS("gpuk_ctx_sync: cuCtxSynchronize: CUDA_ERROR_ASSERT (710); last launch on device ");
    CHECK_ERROR_MENTIONS("device 0: kernel 'fault'");
    CHECK_ERROR_MENTIONS("device 1: a CUDA graph (gpuk_graph_launch)");
    CHECK_ERROR_MENTIONS("a device-side assert failed");
    CHECK_ERROR_MENTIONS("stderr");
    CHECK_ERROR_MENTIONS("unusable in this process");
    CHECK_ERROR_MENTIONS("compute-sanitizer");
    CHECK_ERROR_MENTIONS("-lineinfo");
    CHECK(strlen(gpuk_last_error()) < 511); /* not cut short */
    calls = fake.calls;
    CHECK_RESULT(gpuk_buffer_write(d1, b, 0, "abc", 3), (gpuk_result)710);
    printf("     %s\n", gpuk_last_error());
    CHECK_ERROR_MENTIONS("gpuk_buffer_write: CUDA is unusable in this process since an earlier fault: "
                         "gpuk_ctx_sync: cuCtxSynchronize: CUDA_ERROR_ASSERT (710); last launch on device ");
    CHECK_ERROR_MENTIONS("kernel 'fault'");
    CHECK_ERROR_MENTIONS("-lineinfo");
    CHECK(strlen(gpuk_last_error()) < 511);
    CHECK_RESULT(gpuk_ctx_set_limit(c, GPUK_LIMIT_STACK_SIZE, 4096), (gpuk_result)710);
    CHECK_RESULT(gpuk_ctx_get_limit(c, GPUK_LIMIT_STACK_SIZE, &v), (gpuk_result)710);
    CHECK(v == 0);
    CHECK_RESULT(launch(c, k), (gpuk_result)710);
    CHECK_RESULT(gpuk_ctx_destroy(d1), (gpuk_result)710); /* frees host memory, no driver call */
    CHECK_RESULT(gpuk_ctx_destroy(c), (gpuk_result)710);
    CHECK(fake.calls == calls);
    CHECK_OK(gpuk_shutdown());
    fake_reset(NULL);
    return TEST_PASS;
}

/* A trap's launch failure (719) reported by a stream sync names the last kernel too, with the
   hint for faults; a fault before any launch names none. */
static int test_trap_and_a_fault_before_any_launch(void) {
    fake_config cfg;
    gpuk_ctx* c;
    memset(&cfg, 0, sizeof cfg);
    cfg.fault_on_sync = 719;
    c = fake_gpuk_up(&cfg);
    CHECK_OK(launch(c, kernel_of(c, "fault")));
    CHECK_RESULT(gpuk_stream_sync(c, GPUK_DEFAULT_STREAM), (gpuk_result)719);
    CHECK_ERROR_MENTIONS("cuStreamSynchronize: CUDA_ERROR_LAUNCH_FAILED (719); last launch on device 0: kernel 'fault'");
    CHECK_ERROR_MENTIONS("__trap()");
    CHECK_ERROR_MENTIONS("-lineinfo");
    CHECK_RESULT(gpuk_ctx_destroy(c), (gpuk_result)719);
    CHECK_OK(gpuk_shutdown());
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_name = "cuCtxSynchronize";
    cfg.fail_code = 700;
    cfg.sticky = 1;
    c = fake_gpuk_up(&cfg);
    CHECK_RESULT(gpuk_ctx_sync(c), (gpuk_result)700);
    CHECK_ERROR_MENTIONS("cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700) (hint: ");
    CHECK(strstr(gpuk_last_error(), "last launch") == NULL);
    CHECK_RESULT(gpuk_ctx_destroy(c), (gpuk_result)700);
    CHECK_OK(gpuk_shutdown());
    fake_reset(NULL);
    return TEST_PASS;
}

int main(void) {
    RUN(test_defaults_and_round_trip);
    RUN(test_unknown_limits_refused);
    RUN(test_fifo_and_heap_only_before_the_first_launch);
    RUN(test_every_kind_of_launch_counts);
    RUN(test_custom_kernel_counts);
    RUN(test_builtin_kernel_counts);
    RUN(test_driver_refusal_passed_on);
    RUN(test_assert_names_the_last_launch);
    RUN(test_trap_and_a_fault_before_any_launch);
    return test_summary();
}
