/* src/gpuk_graph.h - part of gpuk.h: graphs by stream capture: capture, update, launch. */
/* ---- >>graph ---- */
/* Graphs are made by stream capture: what gpuk queues on a stream between begin and end
   (launches, built-ins, copies, memsets, records) becomes a graph, instantiated at once into
   an executable graph, the one driver object a gpuk_graph holds (the captured CUgraph is
   destroyed: an exec does not need it). Arguments change by capturing again and updating the
   exec (cuGraphExecUpdate), as CUDA programs update captured launches. */
#define GPUK__GRAPH_ROWS(X) \
    X(cuStreamIsCapturing) X(cuStreamBeginCapture) X(cuStreamEndCapture) \
    X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy) \
    X(cuGraphExecUpdate)

/* Every graph row is optional (cuGraphInstantiateWithFlags, the feature bit, came last, in
   11.4): a driver without one gets the name of the first missing. */
static gpuk_result gpuk__graphs_ready(const char* fn) {
#define GPUK__X_GRAPH_ROW(name) \
    if (!GPUK__DRV.name) \
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, \
                          "CUDA graphs need a driver for CUDA 11.4 or "\
                          "newer; this one (%d.%d) lacks " #name, gpuk__g.driver_version / 1000, \
                          gpuk__g.driver_version % 1000 / 10);
    GPUK__GRAPH_ROWS(GPUK__X_GRAPH_ROW)
#undef GPUK__X_GRAPH_ROW
    return GPUK_OK;
}

/* The common head of begin, end and update: alive, ctx, stream, graph rows, ctx current;
   then whether the stream is being captured (an invalidated capture counts: it must still be
   ended). */
static gpuk_result gpuk__capture_head(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                      gpuk__cu_stream* out_cs, int* out_capturing) {
    unsigned int status = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__STREAM_HEAD(fn, ctx, stream, *out_cs);
    if ((r = gpuk__graphs_ready(fn)) != GPUK_OK) return r;
    GPUK__ENTER(fn, ctx);
    if ((cr = GPUK__DRV.cuStreamIsCapturing(*out_cs, &status)) != 0)
        return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, NULL);
    *out_capturing = status != GPUK__CU_STREAM_CAPTURE_STATUS_NONE;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_begin_capture(gpuk_ctx* ctx, gpuk_stream stream,
                                                gpuk_capture_mode mode) {
    const char* const fn = __func__;
    static const unsigned int cu_mode[GPUK_CAPTURE_NUM] = {
        GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, GPUK__CU_STREAM_CAPTURE_MODE_GLOBAL,
        GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, GPUK__CU_STREAM_CAPTURE_MODE_RELAXED
    };
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    int capturing = 0;
    if ((unsigned)mode >= (unsigned)GPUK_CAPTURE_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "mode %u is not a gpuk_capture_mode",
                          (unsigned)mode);
    if ((r = gpuk__capture_head(fn, ctx, stream, &cs, &capturing)) != GPUK_OK) return r;
    if (capturing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "the stream is already being captured (end that capture with "
                          "gpuk_graph_end_capture first)");
    cr = GPUK__DRV.cuStreamBeginCapture(cs, cu_mode[mode]);
    return cr ? gpuk__fail_cu(fn, "cuStreamBeginCapture", cr, NULL) : GPUK_OK;
}

/* Destroys a captured graph once its work is done (instantiated, or used for an update, or of
   no use). Its failure is absorbed: the call's own work succeeded, and the graph is only the
   driver's host memory, so it is kept for the ctx destroy to try again (at most four; the
   logger hears of it). No driver call after a sticky fault. */
static void gpuk__graph_drop(const char* fn, gpuk_ctx* ctx, gpuk__cu_graph graph) {
    gpuk__cu_result cr;
    int kept = 0;
    if (!graph || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return;
    if (gpuk__tolerate(fn, "cuGraphDestroy", cr = GPUK__DRV.cuGraphDestroy(graph)) ||
        gpuk__is_sticky((int)cr))
        return;
    gpuk__mutex_lock(&ctx->lock);
    if (ctx->graph_orphan_count < 4) {
        ctx->graph_orphans[ctx->graph_orphan_count++] = graph;
        kept = 1;
    }
    gpuk__mutex_unlock(&ctx->lock);
    gpuk__log(GPUK_LOG_WARN, (int)cr,
              kept ? "cuGraphDestroy failed on a captured graph; the ctx destroy tries again"
                   : "cuGraphDestroy failed on a captured graph; its host memory stays with the "
                     "driver");
}

/* Ends the capture on cs: the graph it recorded, or a failure (the stream is out of capture
   mode either way once the driver was asked). */
static gpuk_result gpuk__capture_end(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                     gpuk__cu_graph* out_graph) {
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    int capturing = 0;
    *out_graph = NULL;
    if ((r = gpuk__capture_head(fn, ctx, stream, &cs, &capturing)) != GPUK_OK) return r;
    if (!capturing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the stream is not being captured "
                          "(gpuk_graph_begin_capture first)");
    if ((cr = GPUK__DRV.cuStreamEndCapture(cs, out_graph)) != 0) {
        /* an invalidated capture may still hand back a graph: it is of no use */
        gpuk__graph_drop(fn, ctx, *out_graph);
        *out_graph = NULL;
        return gpuk__fail_cu(fn, "cuStreamEndCapture", cr,
                             cr == 908 ? "a thread-local or global capture ends on the thread that "
                                         "began it" :
                             "the capture was invalidated by a call it cannot hold (a synchronous "
                             "or stream-less call, a sync, an allocation, a copy of pageable host "
                             "memory, or work from another stream joining it); it has ended");
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_end_capture(gpuk_ctx* ctx, gpuk_stream stream,
                                              gpuk_graph* out_graph) {
    const char* const fn = __func__;
    gpuk__graph_slot* s;
    gpuk__cu_graph graph = NULL;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    s = (gpuk__graph_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_graph,
                                              out_graph ? &out_graph->id : NULL,
                                              NULL, 1, 0u, 0u, &r);
    if (!s) return r;
    if ((r = gpuk__capture_end(fn, ctx, stream, &graph)) == GPUK_OK) {
        if ((cr = GPUK__DRV.cuGraphInstantiateWithFlags(&s->exec, graph, 0)) != 0)
            r = gpuk__fail_cu(fn, "cuGraphInstantiateWithFlags", cr, NULL);
        gpuk__graph_drop(fn, ctx, graph); /* the exec does not need it */
    }
    return gpuk__slot_end(ctx, gpuk__kind_graph, s, r, &out_graph->id);
}

/* cuGraphExecUpdate's CUgraphExecUpdateResult values 2..8, as a reason. */
static const char* gpuk__graph_update_reason(unsigned int result) {
    static const char* const why[] = {
        "the captured work's shape differs (other nodes or dependencies)",
        "a node's type differs (a kernel where a copy was...)", "a kernel node's function differs",
        "a node's parameters changed in a way an update cannot apply (a copy to other memory "
        "kinds, a memset's element size...)",
        "a node cannot be updated", "a kernel node's function changed in a way an update cannot "
        "apply (another module or context)",
        "a node's launch attributes changed in a way an update cannot apply"
    };
    return result >= 2 && result <= 8 ? why[result - 2] : "the driver did not say why";
}

GPUK__IMPL gpuk_result gpuk_graph_update(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph graph) {
    const char* const fn = __func__;
    const gpuk__graph_slot* s;
    gpuk__cu_graph g = NULL;
    gpuk__cu_graph_node node = NULL;
    unsigned int result = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(s = gpuk__graph_lookup(ctx, graph.id))) return gpuk__bad_handle(fn, "graph", graph.id);
    if ((r = gpuk__capture_end(fn, ctx, stream, &g)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuGraphExecUpdate(s->exec, g, &node, &result);
    /* no call after it */
    if (cr && gpuk__is_sticky((int)cr)) return gpuk__fail_cu(fn, "cuGraphExecUpdate", cr, NULL);
    gpuk__graph_drop(fn, ctx, g);
    if (cr) {
        char detail[192];
        gpuk__fmt(detail, sizeof detail, 0, "graph 0x%x is unchanged: %s (result %u)", graph.id,
                  gpuk__graph_update_reason(result), result);
        return gpuk__fail_cu(fn, "cuGraphExecUpdate", cr, detail);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_launch(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph graph) {
    const char* const fn = __func__;
    const gpuk__graph_slot* s;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (GPUK__UNLIKELY(!(s = gpuk__graph_lookup(ctx, graph.id))))
        return gpuk__bad_handle(fn, "graph", graph.id);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuGraphLaunch(s->exec, cs);
    if (GPUK__UNLIKELY(cr)) return gpuk__fail_cu(fn, "cuGraphLaunch", cr, NULL);
    gpuk__launch_note(ctx, gpuk__launch_of_graph);
    return GPUK_OK;
}

static gpuk__cu_result gpuk__graph_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    (void)ctx;
    *out_call = "cuGraphExecDestroy";
    return GPUK__DRV.cuGraphExecDestroy(((const gpuk__graph_slot*)slot)->exec);
}

GPUK__IMPL gpuk_result gpuk_graph_destroy(gpuk_ctx* ctx, gpuk_graph graph) {
    return gpuk__handle_destroy(__func__, ctx, gpuk__kind_graph, graph.id);
}
