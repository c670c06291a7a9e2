/* tests/unit/unit_graphs.c - CUDA graphs and extended launch on the fake driver: a capture of
   launches, built-ins, copies, memsets and event records replayed (the fake replays the
   records: copies move bytes at each launch), arguments updated by capturing again, a changed
   shape refused with the graph unchanged, invalidated captures, and every error path (no graph
   entry points, a stream captured twice or not at all, bad modes and handles, a full pool);
   clusters, cooperative launches and priorities through cuLaunchKernelEx with their refusals
   before the driver (no clusters before sm_90, a cluster not dividing the grid or over 8
   blocks, a cooperative grid over the device's co-residency, no cuLaunchKernelEx, no
   cooperative launch). No GPU needed.
   cc -std=c99 -I../.. unit_graphs.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"

static const char ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n ret;\n}\n";

static gpuk_ctx* ctx;
static gpuk_kernel ker;

static gpuk_kernel load_kernel(void) {
    gpuk_module m;
    gpuk_kernel k = { 0 };
    CHECK_OK(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { ptx, 0 } }, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "k", &k));
    return k;
}

static void up(const fake_config* cfg) {
    ctx = fake_gpuk_up(cfg);
    ker = load_kernel();
}

/* k(p, n) on stream s with grid g */
static gpuk_result launch_k(gpuk_stream s, gpuk_devptr p, uint32_t n, uint32_t g) {
    return gpuk_launch(ctx, ker, &(gpuk_launch_desc){ .grid = GPUK_DIM1(g), .block = GPUK_DIM1(64),
                                                      .stream = s, GPUK_ARGS(&p, &n) });
}

static int last_args_are(gpuk_devptr p, uint32_t n) {
    gpuk_devptr gp;
    uint32_t gn;
    memcpy(&gp, fake.last_args[0], 8);
    memcpy(&gn, fake.last_args[1], 4);
    return gp == p && gn == n;
}

/* Copies, a memset, a launch and an event record captured, then the graph launched three
   times: the records run each time (bytes copied from the host buffer as it is then). */
static int test_capture_and_replay(void) {
    gpuk_stream s;
    gpuk_buffer a, b;
    gpuk_pinned hin, hout;
    gpuk_event e, e0;
    gpuk_graph g;
    float ms = 0;
    unsigned char* in;
    unsigned char* out;
    long launches;
    int rep, i, bad = 0;
    up(NULL);
    CHECK(gpuk_features() & GPUK_FEATURE_GRAPHS);
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &a));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &b));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 256 }, &hin));
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 256 }, &hout));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e));
    CHECK_OK(gpuk_event_create(ctx, NULL, &e0));
    CHECK_OK(gpuk_event_record(ctx, s, e0));
    in = (unsigned char*)gpuk_pinned_ptr(ctx, hin);
    out = (unsigned char*)gpuk_pinned_ptr(ctx, hout);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    launches = fake.launches;
    CHECK_OK(gpuk_buffer_write_async(ctx, s, a, 0, in, 256));
    CHECK_OK(gpuk_buffer_memset(ctx, s, b, 0, 0x77, 1, 256));
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, b, 64, a, 0, 128));
    CHECK_OK(launch_k(s, gpuk_buffer_devptr(ctx, b), 256, 4));
    CHECK_OK(gpuk_event_record(ctx, s, e));
    CHECK_OK(gpuk_buffer_read_async(ctx, s, b, 0, out, 256));
    CHECK(fake.launches == launches); /* recorded, not run */
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK(g.id != 0);
    CHECK(fake_live_count(FK_GRAPH) == 0 && fake_live_count(FK_EXEC) == 1);
    /* the record inside the capture is a node (an external record): e is recorded by each
       launch, not by the capture (a plain record there would leave e never recorded) */
    CHECK_RESULT(gpuk_event_elapsed_ms(ctx, e0, e, &ms), 600);
    for (rep = 0; rep < 3; rep++) {
        for (i = 0; i < 256; i++) in[i] = (unsigned char)(i * 13 + rep * 7 + 1);
        memset(out, 0, 256);
        CHECK_OK(gpuk_graph_launch(ctx, s, g));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        for (i = 0; i < 256; i++) bad += out[i] != (i >= 64 && i < 192 ? in[i - 64] : 0x77);
    }
    CHECK(bad == 0);
    CHECK_OK(gpuk_event_elapsed_ms(ctx, e0, e, &ms));
    CHECK(fake.launches == launches + 3 && fake.graph_launches == 3);
    CHECK(last_args_are(gpuk_buffer_devptr(ctx, b), 256));
    /* on another stream, the default one included */
    CHECK_OK(gpuk_graph_launch(ctx, GPUK_DEFAULT_STREAM, g));
    CHECK(fake.graph_launches == 4);
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_RESULT(gpuk_graph_launch(ctx, s, g), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_destroy(ctx, g), GPUK_ERR_INVALID_HANDLE);
    CHECK(fake_live_count(FK_EXEC) == 0);
    /* an empty capture is a valid graph that does nothing */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_RELAXED));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    /* left alive: the ctx destroy releases it */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The same work captured again with other arguments updates the graph; other work (one more
   launch, a memset where a launch was) is refused with the reason and the graph unchanged. */
static int test_update(void) {
    gpuk_stream s;
    gpuk_buffer a, b;
    gpuk_graph g, zero = { 0 };
    gpuk_devptr pa, pb;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &a));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &b));
    pa = gpuk_buffer_devptr(ctx, a);
    pb = gpuk_buffer_devptr(ctx, b);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(launch_k(s, pa, 10, 2));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK(last_args_are(pa, 10) && fake.last_grid[0] == 2);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(launch_k(s, pb, 20, 3));
    CHECK_OK(gpuk_graph_update(ctx, s, g));
    CHECK(fake_live_count(FK_GRAPH) == 0);
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK(last_args_are(pb, 20) && fake.last_grid[0] == 3);
    /* one more node: refused, the graph keeps its work */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(launch_k(s, pa, 30, 1));
    CHECK_OK(launch_k(s, pa, 31, 1));
    CHECK_RESULT(gpuk_graph_update(ctx, s, g), (gpuk_result)910);
    CHECK_ERROR_MENTIONS("gpuk_graph_update");
    CHECK_ERROR_MENTIONS("is unchanged");
    CHECK_ERROR_MENTIONS("shape differs");
    CHECK(fake_live_count(FK_GRAPH) == 0);
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK(last_args_are(pb, 20));
    /* a memset where the launch was */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_OK(gpuk_buffer_memset(ctx, s, a, 0, 0, 4, 64));
    CHECK_RESULT(gpuk_graph_update(ctx, s, g), (gpuk_result)910);
    CHECK_ERROR_MENTIONS("type differs");
    /* bad handles and no capture, before the capture is touched */
    CHECK_RESULT(gpuk_graph_update(ctx, s, zero), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_update(ctx, s, g), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not being captured");
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_THREAD_LOCAL));
    CHECK_RESULT(gpuk_graph_update(ctx, s, g), GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g)); /* the capture was left intact */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Built-ins prepared before the capture are recorded, and run again at each launch. */
static int test_builtins_in_a_graph(void) {
    gpuk_stream s;
    gpuk_buffer f;
    gpuk_graph g;
    long launches;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 1 << 20 }, &f));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000), GPUK_ERR_CAPTURING);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g)); /* not broken by the refusal */
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_OK(gpuk_kernels_load(ctx, "sum_f32 scan_inclusive_i32 fill_f32"));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, 100000));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    launches = fake.launches;
    CHECK_OK(gpuk_fill_f32(ctx, s, gpuk_at(f, 0), 100000, 1.0f));
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 200000), gpuk_at(f, 0), 100000));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK(fake.launches == launches);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK(fake.launches > launches && (fake.launches - launches) % 2 == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Calls a capture cannot hold invalidate it: the call says why, the end returns 901 with
   text and no graph, and the stream can be captured again. */
static int test_invalidated_captures(void) {
    gpuk_stream s, nb;
    gpuk_buffer a;
    gpuk_graph g = { 0 };
    unsigned char host[64] = { 0 };
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &nb));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &a));
    /* a sync of the capturing stream */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_stream_sync(ctx, s), (gpuk_result)900);
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), (gpuk_result)901);
    CHECK_ERROR_MENTIONS("invalidated");
    CHECK(g.id == 0 && fake_live_count(FK_GRAPH) == 0 && fake_live_count(FK_EXEC) == 0);
    /* a stream-less call while a blocking stream captures: it would join the capture */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_buffer_write(ctx, a, 0, host, 64), (gpuk_result)906);
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), (gpuk_result)901);
    /* the same on a non-blocking stream's capture is fine */
    CHECK_OK(gpuk_graph_begin_capture(ctx, nb, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_buffer_write(ctx, a, 0, host, 64));
    CHECK_OK(gpuk_graph_end_capture(ctx, nb, &g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    /* a copy from pageable host memory */
    CHECK_OK(gpuk_graph_begin_capture(ctx, nb, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_buffer_write_async(ctx, nb, a, 0, host, 64), (gpuk_result)900);
    CHECK_RESULT(gpuk_launch(ctx, ker, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(1),
                                                            .stream = nb, .args = NULL }),
                 GPUK_ERR_INVALID_ARG); /* gpuk's own check: not the driver's */
    CHECK_RESULT(gpuk_graph_end_capture(ctx, nb, &g), (gpuk_result)901);
    /* the stream works normally afterwards */
    CHECK_OK(launch_k(nb, gpuk_buffer_devptr(ctx, a), 1, 1));
    CHECK_OK(gpuk_stream_sync(ctx, nb));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static gpuk_stream thread_stream;
static gpuk_result thread_result;
static void* end_on_other_thread(void* arg) {
    gpuk_graph g;
    (void)arg;
    thread_result = gpuk_graph_end_capture(ctx, thread_stream, &g);
    return NULL;
}

static int test_capture_errors(void) {
    gpuk_stream s, stale;
    gpuk_graph g, g2;
    pthread_t t;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &stale));
    CHECK_OK(gpuk_stream_destroy(ctx, stale));
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, s, (gpuk_capture_mode)7), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_capture_mode");
    CHECK_RESULT(gpuk_graph_begin_capture(NULL, s, GPUK_CAPTURE_DEFAULT), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, stale, GPUK_CAPTURE_DEFAULT), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not being captured");
    CHECK(g.id == 0);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_GLOBAL));
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_GLOBAL), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("already being captured");
    /* a thread-local or global capture ends on its own thread */
    thread_stream = s;
    CHECK(pthread_create(&t, NULL, end_on_other_thread, NULL) == 0);
    pthread_join(t, NULL);
    CHECK_RESULT(thread_result, (gpuk_result)908);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    /* relaxed: any thread may end it */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_RELAXED));
    CHECK(pthread_create(&t, NULL, end_on_other_thread, NULL) == 0);
    pthread_join(t, NULL);
    CHECK_RESULT(thread_result, GPUK_OK);
    /* driver failures pass through with the call's name */
    fake.cfg.fail_name = "cuStreamBeginCapture";
    fake.cfg.fail_code = 999;
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuStreamBeginCapture");
    fake.cfg.fail_name = "cuGraphInstantiateWithFlags";
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g2), (gpuk_result)999);
    CHECK(g2.id == 0 && fake_live_count(FK_GRAPH) == 0); /* the captured graph freed */
    fake.cfg.fail_name = "cuGraphLaunch";
    CHECK_RESULT(gpuk_graph_launch(ctx, s, g), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuGraphLaunch");
    fake.cfg.fail_name = "cuGraphExecDestroy";
    CHECK_RESULT(gpuk_graph_destroy(ctx, g), (gpuk_result)999);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_graph_destroy(ctx, g)); /* kept for a retry */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static int test_graph_handles_and_pool(void) {
    gpuk_ctx* other;
    gpuk_stream s;
    gpuk_graph g, g2, zero = { 0 };
    ctx = fake_gpuk_up_desc(&(fake_config){ .devices = 2 }, &(gpuk_ctx_desc){ .max_graphs = 1 });
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 1 }, &other));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK(gpuk_ctx_desc_defaults(NULL).max_graphs == 64);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g2), GPUK_ERR_POOL_FULL);
    CHECK_ERROR_MENTIONS("graph slots");
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g2)); /* the capture waited for a free slot */
    CHECK_RESULT(gpuk_graph_launch(ctx, s, zero), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_launch(ctx, s, g), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_launch(other, GPUK_DEFAULT_STREAM, g2), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_destroy(other, g2), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_graph_destroy(NULL, g2), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_ctx_destroy(other));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A driver without graph entry points: every graph call names what is missing. */
static int test_driver_without_graphs(void) {
    gpuk_graph g;
    gpuk_stream s;
    up(&(fake_config){ .version = 11030, .missing = { "cuGraphInstantiateWithFlags" } });
    CHECK(!(gpuk_features() & GPUK_FEATURE_GRAPHS));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuGraphInstantiateWithFlags");
    CHECK_ERROR_MENTIONS("CUDA 11.4");
    CHECK_ERROR_MENTIONS("11.3");
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK(g.id == 0);
    fake_gpuk_down(ctx);
    up(&(fake_config){ .missing = { "cuGraphExecUpdate" } });
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, GPUK_DEFAULT_STREAM, GPUK_CAPTURE_DEFAULT), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuGraphExecUpdate");
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* --- extended launch --- */
static gpuk_result launch_ex(gpuk_dim3 grid, gpuk_dim3 cluster, bool coop, int priority, uint32_t block) {
    gpuk_devptr p = 0;
    uint32_t n = 0;
    return gpuk_launch(ctx, ker, &(gpuk_launch_desc){ .grid = grid, .block = GPUK_DIM1(block), GPUK_ARGS(&p, &n),
                                                      .cluster = cluster, .cooperative = coop,
                                                      .priority = priority });
}

static int test_clusters(void) {
    long before;
    up(NULL);
    CHECK(gpuk_features() & GPUK_FEATURE_LAUNCH_EX);
    CHECK_OK(launch_ex(GPUK_DIM2(8, 6), GPUK_DIM2(4, 2), false, 0, 128));
    CHECK(fake.ex_launches == 1 && fake.last_cluster[0] == 4 && fake.last_cluster[1] == 2 && fake.last_cluster[2] == 1);
    /* the plain path stays cuLaunchKernel */
    CHECK_OK(launch_ex(GPUK_DIM1(8), GPUK_DIM3(0, 0, 0), false, 0, 128));
    CHECK_OK(launch_ex(GPUK_DIM1(8), GPUK_DIM1(0), false, 0, 128)); /* {0, 1, 1}: none */
    CHECK(fake.ex_launches == 1);
    before = fake.calls;
    /* a y or z over 1 asks for clusters: beside x = 0 refused, not dropped */
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM3(0, 2, 1), false, 0, 128), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("a cluster of 0x2x1 has x = 0");
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM3(0, 0, 2), false, 0, 128), GPUK_ERR_INVALID_ARG);
    /* each side is checked before the product, which would wrap to 0 in 64 bits */
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM3(1u << 22, 1u << 21, 1u << 21), false, 0, 128), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("portable cluster size of 8");
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM3(1u << 31, 2, 1), false, 0, 128), GPUK_ERR_LIMIT);
    CHECK_RESULT(launch_ex(GPUK_DIM1(10), GPUK_DIM1(4), false, 0, 128), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("cluster.x = 4 does not divide grid.x = 10");
    CHECK_RESULT(launch_ex(GPUK_DIM2(8, 3), GPUK_DIM2(1, 2), false, 0, 128), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("cluster.y = 2 does not divide grid.y = 3");
    CHECK_RESULT(launch_ex(GPUK_DIM1(32), GPUK_DIM1(16), false, 0, 128), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("portable cluster size of 8");
    CHECK(fake.calls == before); /* refused before the driver */
    /* clusters whose blocks cannot be resident together: refused with the reason, before the
       launch (the driver would answer CUDA_ERROR_CLUSTER_OUT_OF_RESOURCES) */
    fake.cfg.cluster_threads = 1024;
    before = fake.launches;
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(8), false, 0, 256), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("no cluster of 8x1x1 blocks of 256 threads");
    CHECK_ERROR_MENTIONS("cuOccupancyMaxActiveClusters");
    CHECK(fake.launches == before);
    CHECK_OK(launch_ex(GPUK_DIM1(8), GPUK_DIM1(4), false, 0, 256)); /* 1024 threads fit */
    fake.cfg.cluster_threads = 0;
    fake.cfg.fail_name = "cuOccupancyMaxActiveClusters";
    fake.cfg.fail_code = 999;
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(2), false, 0, 128), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuOccupancyMaxActiveClusters");
    fake.cfg.fail_name = NULL;
    fake_gpuk_down(ctx);
    /* a driver without the occupancy query: the launch goes ahead, the driver checks */
    up(&(fake_config){ .missing = { "cuOccupancyMaxActiveClusters" } });
    CHECK_OK(launch_ex(GPUK_DIM1(8), GPUK_DIM1(2), false, 0, 128));
    fake_gpuk_down(ctx);
    /* a device before sm_90 */
    up(&(fake_config){ .cc_major = 8 });
    before = fake.calls;
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(2), false, 0, 128), GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("compute capability 9.0");
    CHECK_ERROR_MENTIONS("is 8.");
    CHECK(fake.calls == before);
    fake_gpuk_down(ctx);
    /* a driver without cuLaunchKernelEx */
    up(&(fake_config){ .version = 11040, .missing = { "cuLaunchKernelEx" } });
    CHECK(!(gpuk_features() & GPUK_FEATURE_LAUNCH_EX));
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(2), false, 0, 128), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("cuLaunchKernelEx");
    CHECK_ERROR_MENTIONS("11.8");
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(0), true, 0, 128), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_OK(launch_ex(GPUK_DIM1(8), GPUK_DIM1(0), false, 0, 128)); /* plain launches still work */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static int test_cooperative(void) {
    uint32_t max = 0;
    gpuk_kernel zero = { 0 };
    long before;
    up(NULL);
    /* fake occupancy: 2048 / block (at most 32) a multiprocessor, 132 multiprocessors */
    CHECK_OK(gpuk_kernel_max_cooperative_grid(ctx, ker, 256, 0, &max));
    CHECK(max == 8 * 132);
    CHECK_OK(launch_ex(GPUK_DIM1(8 * 132), GPUK_DIM1(0), true, 0, 256));
    CHECK(fake.ex_launches == 1 && fake.last_cooperative == 1);
    CHECK_OK(launch_ex(GPUK_DIM2(66, 16), GPUK_DIM1(0), true, 0, 256));
    before = fake.launches;
    CHECK_RESULT(launch_ex(GPUK_DIM1(8 * 132 + 1), GPUK_DIM1(0), true, 0, 256), GPUK_ERR_LIMIT);
    CHECK_ERROR_MENTIONS("cooperative grid of 1057 blocks exceeds the 1056");
    CHECK_ERROR_MENTIONS("8 a multiprocessor x 132");
    CHECK(fake.launches == before);
    CHECK_RESULT(gpuk_kernel_max_cooperative_grid(ctx, ker, 0, 0, &max), GPUK_ERR_INVALID_ARG);
    CHECK(max == 0);
    CHECK_RESULT(gpuk_kernel_max_cooperative_grid(ctx, ker, 2048, 0, &max), GPUK_ERR_LIMIT);
    CHECK_RESULT(gpuk_kernel_max_cooperative_grid(ctx, zero, 64, 0, &max), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_kernel_max_cooperative_grid(ctx, ker, 64, 0, NULL), GPUK_ERR_INVALID_ARG);
    fake.cfg.fail_name = "cuOccupancyMaxActiveBlocksPerMultiprocessor";
    fake.cfg.fail_code = 999;
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(0), true, 0, 256), (gpuk_result)999);
    CHECK_ERROR_MENTIONS("cuOccupancyMaxActiveBlocksPerMultiprocessor");
    fake.cfg.fail_name = NULL;
    fake_gpuk_down(ctx);
    /* a device without cooperative launch */
    up(&(fake_config){ .no_cooperative = 1 });
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(0), true, 0, 256), GPUK_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("cannot launch cooperative kernels");
    CHECK_RESULT(gpuk_kernel_max_cooperative_grid(ctx, ker, 64, 0, &max), GPUK_ERR_UNSUPPORTED);
    fake_gpuk_down(ctx);
    /* no occupancy entry point */
    up(&(fake_config){ .missing = { "cuOccupancyMaxActiveBlocksPerMultiprocessor" } });
    CHECK_RESULT(launch_ex(GPUK_DIM1(8), GPUK_DIM1(0), true, 0, 256), GPUK_ERR_DRIVER_TOO_OLD);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static int test_priority_and_capture_of_ex_launches(void) {
    gpuk_stream s;
    gpuk_graph g;
    up(NULL);
    CHECK_OK(launch_ex(GPUK_DIM1(4), GPUK_DIM1(0), false, -3, 64));
    CHECK(fake.ex_launches == 1 && fake.last_priority == -3 && fake.last_cooperative == 0);
    /* all three at once, captured: the attributes come back at each launch */
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_launch(ctx, ker, &(gpuk_launch_desc){ .grid = GPUK_DIM1(8), .block = GPUK_DIM1(64), .stream = s,
                                                        .args = (void*[]){ &(gpuk_devptr){ 5 }, &(uint32_t){ 6 } },
                                                        .cluster = GPUK_DIM1(2), .cooperative = true,
                                                        .priority = -1 }));
    CHECK(fake.ex_launches == 1);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    memset(fake.last_cluster, 0, sizeof fake.last_cluster);
    fake.last_cooperative = fake.last_priority = 0;
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK(fake.ex_launches == 2 && fake.last_cluster[0] == 2 && fake.last_cooperative == 1 && fake.last_priority == -1);
    CHECK(last_args_are(5, 6));
    fake_gpuk_down(ctx);
    up(&(fake_config){ .version = 11080 });
    CHECK_RESULT(launch_ex(GPUK_DIM1(4), GPUK_DIM1(0), false, -3, 64), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("CUDA 12.0");
    CHECK_OK(launch_ex(GPUK_DIM1(4), GPUK_DIM1(2), false, 0, 64)); /* clusters need 11.8 only */
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A capture on stream a, and on stream b (not captured) a built-in's first use, which loads
   its module and allocates its scratch: calls the driver refuses during a global-mode capture
   (any thread) or a thread-local one (this thread), invalidating it. In every mode the call
   works and a's capture goes on to a graph. The same call on a itself is refused. */
static int test_first_use_beside_a_capture(void) {
    static const gpuk_capture_mode modes[] = { GPUK_CAPTURE_GLOBAL, GPUK_CAPTURE_THREAD_LOCAL,
                                               GPUK_CAPTURE_RELAXED };
    size_t m;
    for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        gpuk_stream a, b;
        gpuk_buffer x;
        gpuk_graph g;
        up(NULL);
        CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &a));
        CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &b));
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4096 }, &x));
        CHECK_OK(gpuk_graph_begin_capture(ctx, a, modes[m]));
        CHECK_OK(launch_k(a, gpuk_buffer_devptr(ctx, x), 64, 1));
        CHECK_OK(gpuk_sum_f32(ctx, b, gpuk_at(x, 0), gpuk_at(x, 1), 512)); /* JIT + scratch on b */
        CHECK_OK(gpuk_fill_f32(ctx, b, gpuk_at(x, 0), 8, 1.0f));         /* another first use */
        CHECK_RESULT(gpuk_scan_inclusive_f32(ctx, a, gpuk_at(x, 0), gpuk_at(x, 0), 16), GPUK_ERR_CAPTURING);
        CHECK_OK(gpuk_graph_end_capture(ctx, a, &g)); /* not invalidated */
        CHECK_OK(gpuk_graph_launch(ctx, a, g));
        CHECK_OK(gpuk_stream_sync(ctx, a));
        if (check_failures) fprintf(stderr, "  (capture mode %d)\n", (int)modes[m]);
        fake_gpuk_down(ctx);
    }
    return TEST_PASS;
}

/* gpuk_ctx_destroy with a capture still open: refused naming the stream (cuCtxSynchronize
   would fail at every retry, and break the capture); once it is ended the ctx goes. */
static int test_ctx_destroy_with_a_capture_open(void) {
    gpuk_stream a;
    gpuk_graph g;
    long syncs;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &a));
    CHECK_OK(gpuk_graph_begin_capture(ctx, a, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(launch_k(a, 0, 1, 1));
    syncs = fake.calls;
    CHECK_RESULT(gpuk_ctx_destroy(ctx), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_ctx_destroy: stream 0x");
    CHECK_ERROR_MENTIONS("is capturing into a CUDA graph; the ctx is kept");
    CHECK_ERROR_MENTIONS("gpuk_graph_end_capture");
    CHECK_RESULT(gpuk_ctx_destroy(ctx), GPUK_ERR_CAPTURING); /* the same, and no harm done */
    CHECK_OK(gpuk_graph_end_capture(ctx, a, &g));
    CHECK(fake.calls > syncs);
    /* the capture of the ctx's default stream likewise */
    CHECK_OK(gpuk_graph_begin_capture(ctx, GPUK_DEFAULT_STREAM, GPUK_CAPTURE_RELAXED));
    CHECK_RESULT(gpuk_ctx_destroy(ctx), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("the ctx's default stream is capturing");
    CHECK_OK(gpuk_graph_end_capture(ctx, GPUK_DEFAULT_STREAM, &g));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

int main(void) {
    RUN(test_capture_and_replay);
    RUN(test_update);
    RUN(test_builtins_in_a_graph);
    RUN(test_invalidated_captures);
    RUN(test_first_use_beside_a_capture);
    RUN(test_ctx_destroy_with_a_capture_open);
    RUN(test_capture_errors);
    RUN(test_graph_handles_and_pool);
    RUN(test_driver_without_graphs);
    RUN(test_clusters);
    RUN(test_cooperative);
    RUN(test_priority_and_capture_of_ex_launches);
    return test_summary();
}
