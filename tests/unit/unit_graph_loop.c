/* tests/unit/unit_graph_loop.c - graphs that loop or branch on the GPU (conditional WHILE and
   IF nodes) on the fake driver: the graph gpuk builds (the head's work, then the node after
   it, with the body's work inside the node), the handle's default, the refusals (a driver
   without the entry points or too old for WHILE, a body begun twice or without a head, an end
   in the head, nesting in another capture, a full table, bad handles), an invalidated body and
   the stream usable after each, a stream destroyed mid-capture. The fake replays the head and
   runs no body (it runs no kernel that could set the value): what the GPU does is
   tests/gpu/gpu_graph_loop.c's. No GPU needed.
   cc -std=c99 -I../.. unit_graph_loop.c -ldl -lpthread */
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

static void up(const fake_config* cfg) {
    gpuk_module m;
    ctx = fake_gpuk_up(cfg);
    CHECK_OK(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { ptx, 0 } }, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "k", &ker));
}

/* k(p, n) on stream s: what a body's kernel gets (the condition handle as its u64) */
static gpuk_result launch_k(gpuk_stream s, uint64_t p, uint32_t n) {
    return gpuk_launch(ctx, ker, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32),
                                                      .stream = s, GPUK_ARGS(&p, &n) });
}

/* The executable graph behind a handle (the fake's exec is a copy of the graph's records). */
static const fake_graph* exec_of(gpuk_graph g) {
    const gpuk__graph_slot* s = gpuk__graph_lookup(ctx, g.id);
    return s ? (const fake_graph*)(const void*)s->exec : NULL;
}

/* A WHILE graph: a memset as its head, a kernel and a memset as its body. The graph holds
   the head's record and then the node (after it), the body's two records are the node's;
   a launch runs the head (the poisoned bytes are set) and no body. */
static int test_while_graph(void) {
    gpuk_stream s;
    gpuk_buffer b;
    gpuk_graph g;
    const fake_graph* x;
    const fake_graph* body;
    unsigned char out[64];
    uint64_t cond = 0;
    uint32_t init = 1u + (uint32_t)(rand() % 1000);
    long launches;
    int i, bad = 0;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &b));
    CHECK_OK(gpuk_graph_begin_while(ctx, s, init, &cond));
    CHECK(cond != 0);
    CHECK(fake.last_cond_default == init);
    CHECK_OK(gpuk_buffer_memset(ctx, s, b, 0, 0x5A, 1, 64));
    CHECK_OK(gpuk_graph_begin_body(ctx, s));
    launches = fake.launches;
    CHECK_OK(launch_k(s, cond, 7));
    CHECK_OK(gpuk_buffer_memset(ctx, s, b, 0, 0x11, 1, 8));
    CHECK(fake.launches == launches); /* recorded, not run */
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK(fake.cond_nodes == 1 && fake.last_cond_type == 1); /* CU_GRAPH_COND_TYPE_WHILE */
    CHECK((x = exec_of(g)) != NULL);
    CHECK(x->nops == 2 && x->ops[0].type == FOP_MEMSET && x->ops[1].type == FOP_COND);
    CHECK(x->ops[1].src == cond && x->ops[1].n == 1); /* the node follows the head's memset */
    body = (const fake_graph*)x->ops[1].host;
    CHECK(body->nops == 2 && body->ops[0].type == FOP_LAUNCH && body->ops[1].type == FOP_MEMSET);
    CHECK(memcmp(body->ops[0].args[0], &cond, 8) == 0);
    /* the stream is out of capture mode: its work runs again */
    CHECK_OK(gpuk_buffer_memset(ctx, s, b, 0, 0xEE, 1, 64));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_buffer_read(ctx, b, 0, out, 64));
    for (i = 0; i < 64; i++) bad += out[i] != 0x5A;
    CHECK(bad == 0);
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* An IF graph with an empty head (the node first, on no dependency), on the default stream
   and on a stream, one after the other; a graph holding a loop launches like any other. */
static int test_if_graph(void) {
    gpuk_stream s;
    gpuk_graph g, h;
    const fake_graph* x;
    uint64_t c1 = 0, c2 = 0;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_graph_begin_if(ctx, s, 0, &c1));
    CHECK(fake.last_cond_default == 0);
    CHECK_OK(gpuk_graph_begin_body(ctx, s));
    CHECK_OK(launch_k(s, c1, 1));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK(fake.last_cond_type == 0); /* CU_GRAPH_COND_TYPE_IF */
    CHECK((x = exec_of(g)) != NULL);
    CHECK(x->nops == 1 && x->ops[0].type == FOP_COND && x->ops[0].n == 0);
    CHECK(((const fake_graph*)x->ops[0].host)->nops == 1);
    CHECK_OK(gpuk_graph_begin_while(ctx, GPUK_DEFAULT_STREAM, 1, &c2));
    CHECK(c2 != c1);
    CHECK_OK(gpuk_graph_begin_body(ctx, GPUK_DEFAULT_STREAM));
    CHECK_OK(gpuk_graph_end_capture(ctx, GPUK_DEFAULT_STREAM, &h)); /* an empty body */
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK_OK(gpuk_graph_launch(ctx, s, h));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK_OK(gpuk_graph_destroy(ctx, h));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Misuse, refused with the capture (where one is open) left as it was. */
static int test_misuse(void) {
    gpuk_stream s, t[5];
    gpuk_graph g = { 0 };
    uint64_t cond = 123;
    int i;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_RESULT(gpuk_graph_begin_while(ctx, s, 1, NULL), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out_cond is NULL");
    CHECK_RESULT(gpuk_graph_begin_if(ctx, (gpuk_stream){ 0x7777 }, 1, &cond),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK(cond == 0);
    CHECK_RESULT(gpuk_graph_begin_if(NULL, s, 1, &cond), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_graph_begin_body(ctx, s), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_graph_begin_while or gpuk_graph_begin_if first");
    /* an ordinary capture: no conditional node inside it, no body */
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_RESULT(gpuk_graph_begin_while(ctx, s, 1, &cond), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("already being captured");
    CHECK_RESULT(gpuk_graph_begin_body(ctx, s), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    /* a conditional capture: no other capture on it, no end in the head, one body */
    CHECK_OK(gpuk_graph_begin_while(ctx, s, 1, &cond));
    CHECK_RESULT(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_graph_begin_if(ctx, s, 1, &cond), GPUK_ERR_INVALID_ARG);
    CHECK(cond == 0);
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_graph_begin_body starts the node's body");
    CHECK(g.id == 0);
    CHECK_OK(launch_k(s, 0, 1)); /* still capturing the head */
    CHECK_OK(gpuk_graph_begin_body(ctx, s));
    CHECK_RESULT(gpuk_graph_begin_body(ctx, s), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("in its body already");
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_RESULT(gpuk_graph_begin_body(ctx, s), GPUK_ERR_INVALID_ARG); /* ended */
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    /* four open at once per ctx */
    for (i = 0; i < 5; i++) CHECK_OK(gpuk_stream_create(ctx, NULL, &t[i]));
    for (i = 0; i < 4; i++) CHECK_OK(gpuk_graph_begin_while(ctx, t[i], 1, &cond));
    CHECK_RESULT(gpuk_graph_begin_while(ctx, t[4], 1, &cond), GPUK_ERR_POOL_FULL);
    CHECK_ERROR_MENTIONS("4 conditional captures");
    CHECK_OK(gpuk_stream_sync(ctx, t[4])); /* not left capturing */
    for (i = 0; i < 4; i++) {
        CHECK_OK(gpuk_graph_begin_body(ctx, t[i]));
        CHECK_OK(gpuk_graph_end_capture(ctx, t[i], &g));
        CHECK_OK(gpuk_graph_destroy(ctx, g));
    }
    CHECK_OK(gpuk_graph_begin_if(ctx, t[4], 1, &cond)); /* an entry is free again */
    CHECK_OK(gpuk_graph_begin_body(ctx, t[4]));
    CHECK_OK(gpuk_graph_end_capture(ctx, t[4], &g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    for (i = 0; i < 5; i++) CHECK_OK(gpuk_stream_destroy(ctx, t[i]));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A sync inside the body or the head invalidates the capture: the call that ends it fails
   (901), no graph is left, and the stream works again. */
static int test_invalidated(void) {
    gpuk_stream s;
    gpuk_graph g = { 0 };
    uint64_t cond;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_graph_begin_while(ctx, s, 1, &cond));
    CHECK_OK(gpuk_graph_begin_body(ctx, s));
    CHECK(gpuk_stream_sync(ctx, s) != GPUK_OK);
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), (gpuk_result)901);
    CHECK_ERROR_MENTIONS("the body's capture was invalidated");
    CHECK(g.id == 0);
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_graph_begin_if(ctx, s, 1, &cond));
    CHECK(gpuk_stream_sync(ctx, s) != GPUK_OK);
    CHECK_RESULT(gpuk_graph_begin_body(ctx, s), (gpuk_result)901);
    CHECK_ERROR_MENTIONS("the head's capture was invalidated");
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_RESULT(gpuk_graph_end_capture(ctx, s, &g), GPUK_ERR_INVALID_ARG); /* nothing open */
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Drivers without conditional nodes (before 12.3: the entry points are missing) and 12.3
   (IF, not WHILE); a missing entry point is named. Ordinary graphs still work. */
static int test_old_drivers(void) {
    fake_config cfg;
    gpuk_graph g;
    uint64_t cond = 5;
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 12020;
    up(&cfg);
    CHECK_RESULT(gpuk_graph_begin_if(ctx, GPUK_DEFAULT_STREAM, 1, &cond),
                 GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("CUDA 12.3 or newer; this one (12.2) lacks "
                         "cuGraphConditionalHandleCreate");
    CHECK(cond == 0);
    CHECK_OK(gpuk_graph_begin_capture(ctx, GPUK_DEFAULT_STREAM, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_graph_end_capture(ctx, GPUK_DEFAULT_STREAM, &g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    fake_gpuk_down(ctx);
    cfg.version = 12030;
    up(&cfg);
    CHECK_RESULT(gpuk_graph_begin_while(ctx, GPUK_DEFAULT_STREAM, 1, &cond),
                 GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("WHILE graph nodes need a driver for CUDA 12.4 or newer; this one "
                         "is 12.3");
    CHECK_OK(gpuk_graph_begin_if(ctx, GPUK_DEFAULT_STREAM, 1, &cond));
    CHECK_OK(gpuk_graph_begin_body(ctx, GPUK_DEFAULT_STREAM));
    CHECK_OK(gpuk_graph_end_capture(ctx, GPUK_DEFAULT_STREAM, &g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    fake_gpuk_down(ctx);
    memset(&cfg, 0, sizeof cfg);
    cfg.missing[0] = "cuGraphAddNode";
    up(&cfg);
    CHECK_RESULT(gpuk_graph_begin_while(ctx, GPUK_DEFAULT_STREAM, 1, &cond),
                 GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("lacks cuGraphAddNode");
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A stream destroyed in the middle of a conditional capture: its entry is stale, never taken
   for a later stream's capture (an ordinary one ends as ordinary), and freed for new ones; the
   graph it held is given back (the teardown's check). */
static int test_stream_destroyed_mid_capture(void) {
    gpuk_stream t, u[4];
    gpuk_graph g;
    uint64_t cond;
    int i;
    up(NULL);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &t));
    CHECK_OK(gpuk_graph_begin_while(ctx, t, 1, &cond));
    CHECK_OK(launch_k(t, cond, 1));
    (void)gpuk_stream_destroy(ctx, t); /* the driver's answer is its own */
    for (i = 0; i < 4; i++) CHECK_OK(gpuk_stream_create(ctx, NULL, &u[i]));
    CHECK_OK(gpuk_graph_begin_capture(ctx, u[0], GPUK_CAPTURE_DEFAULT));
    CHECK_OK(launch_k(u[0], 0, 2));
    CHECK_OK(gpuk_graph_end_capture(ctx, u[0], &g));
    CHECK(exec_of(g) && exec_of(g)->nops == 1 && exec_of(g)->ops[0].type == FOP_LAUNCH);
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    for (i = 0; i < 4; i++) CHECK_OK(gpuk_graph_begin_while(ctx, u[i], 1, &cond));
    for (i = 0; i < 4; i++) {
        CHECK_OK(gpuk_graph_begin_body(ctx, u[i]));
        CHECK_OK(gpuk_graph_end_capture(ctx, u[i], &g));
        CHECK_OK(gpuk_graph_destroy(ctx, g));
        CHECK_OK(gpuk_stream_destroy(ctx, u[i]));
    }
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

int main(void) {
    srand(20261);
    RUN(test_while_graph);
    RUN(test_if_graph);
    RUN(test_misuse);
    RUN(test_invalidated);
    RUN(test_old_drivers);
    RUN(test_stream_destroyed_mid_capture);
    return test_summary();
}
