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

/* ---- conditional graphs: a node that runs its body while (or if) a value set on the GPU
   is non-zero ----
   A conditional capture builds one graph in two parts, each captured from the stream with
   cuStreamBeginCaptureToGraph: the head (work before the node, which may set the value) into
   the graph itself, then the body into the graph the node owns. The ctx keeps, per capturing
   stream, the graph and which part is being captured (ctx->conds): the end call finishes the
   whole, so gpuk_graph_end_capture ends either kind of capture. */
#define GPUK__COND_ROWS(X) \
    X(cuGraphCreate) X(cuGraphConditionalHandleCreate) X(cuGraphAddNode) \
    X(cuStreamBeginCaptureToGraph) X(cuStreamGetCaptureInfo)

/* The rows and the driver's version: IF nodes came with CUDA 12.3, WHILE nodes work from
   12.4. */
static gpuk_result gpuk__cond_ready(const char* fn, unsigned int type) {
    const int need = type == GPUK__CU_GRAPH_COND_TYPE_WHILE ? 12040 : 12030;
    const char* const what = type == GPUK__CU_GRAPH_COND_TYPE_WHILE ? "WHILE" : "IF";
#define GPUK__X_COND_ROW(name) \
    if (!GPUK__DRV.name) \
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, \
                          "conditional graph nodes need a driver for CUDA 12.3 or newer; this " \
                          "one (%d.%d) lacks " #name, gpuk__g.driver_version / 1000, \
                          gpuk__g.driver_version % 1000 / 10);
    GPUK__COND_ROWS(GPUK__X_COND_ROW)
#undef GPUK__X_COND_ROW
    if (gpuk__g.driver_version < need)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "%s graph nodes need a driver for CUDA "
                          "%d.%d or newer; this one is %d.%d", what, need / 1000,
                          need % 1000 / 10, gpuk__g.driver_version / 1000,
                          gpuk__g.driver_version % 1000 / 10);
    return GPUK_OK;
}

/* Whether entry e's stream is still the one it was made on (a stream destroyed in the middle
   of its capture leaves a stale entry, which a later stream at the same address must not
   inherit). */
static int gpuk__cond_live(const gpuk_ctx* ctx, const gpuk__cond_capture* e) {
    const gpuk__stream_slot* slot;
    if (!e->stream) return 0;
    if (!e->stream_id) return e->stream == ctx->default_stream;
    slot = gpuk__stream_lookup(ctx, e->stream_id);
    return slot && slot->cu == e->stream;
}

/* ctx's entry for the capture on cs (under lock), or NULL. */
static gpuk__cond_capture* gpuk__cond_find(gpuk_ctx* ctx, gpuk__cu_stream cs) {
    int i;
    for (i = 0; i < 4; i++)
        if (ctx->conds[i].stream == cs && gpuk__cond_live(ctx, &ctx->conds[i]))
            return &ctx->conds[i];
    return NULL;
}

/* Takes cs's entry out of ctx: *out holds it (stream NULL when there was none). */
static void gpuk__cond_take(gpuk_ctx* ctx, gpuk__cu_stream cs, gpuk__cond_capture* out) {
    gpuk__cond_capture* e;
    gpuk__mutex_lock(&ctx->lock);
    memset(out, 0, sizeof *out);
    if ((e = gpuk__cond_find(ctx, cs)) != NULL) {
        *out = *e;
        memset(e, 0, sizeof *e);
    }
    gpuk__mutex_unlock(&ctx->lock);
}

/* A failure in the middle of a conditional capture: the stream's capture, where one is still
   open, is ended (its error is of no interest: the call's own is the one to report) and the
   graph dropped, so the stream is usable again and never captures into a destroyed graph. */
static gpuk_result gpuk__cond_abandon(const char* fn, gpuk_ctx* ctx, gpuk__cu_stream cs,
                                      gpuk__cu_graph graph, gpuk_result r) {
    gpuk__cu_graph ended = NULL;
    unsigned int status = 0;
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) && !GPUK__DRV.cuStreamIsCapturing(cs, &status) &&
        status != GPUK__CU_STREAM_CAPTURE_STATUS_NONE)
        (void)GPUK__DRV.cuStreamEndCapture(cs, &ended);
    gpuk__graph_drop(fn, ctx, graph);
    return r;
}

static gpuk_result gpuk__cond_begin(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                    unsigned int type, uint32_t initial_value,
                                    uint64_t* out_cond) {
    gpuk__cond_capture e;
    gpuk__cond_capture* slot;
    gpuk__cu_graph stale[4];
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    int capturing = 0, i, full = 1;
    if (!out_cond) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_cond is NULL");
    *out_cond = 0;
    if ((r = gpuk__capture_head(fn, ctx, stream, &cs, &capturing)) != GPUK_OK) return r;
    if ((r = gpuk__cond_ready(fn, type)) != GPUK_OK) return r;
    if (capturing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "the stream is already being captured: a conditional graph is made by "
                          "a capture of its own (end the other one first; gpuk does not nest "
                          "conditional nodes)");
    gpuk__mutex_lock(&ctx->lock);
    for (i = 0; i < 4; i++) {
        stale[i] = NULL;
        if (ctx->conds[i].stream && !gpuk__cond_live(ctx, &ctx->conds[i])) {
            stale[i] = ctx->conds[i].graph; /* its stream is gone: the entry is free again */
            memset(&ctx->conds[i], 0, sizeof ctx->conds[i]);
        }
        full &= ctx->conds[i].stream != NULL;
    }
    gpuk__mutex_unlock(&ctx->lock);
    for (i = 0; i < 4; i++) gpuk__graph_drop(fn, ctx, stale[i]);
    if (full)
        return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "4 conditional captures are open on this ctx "
                          "already (end one with gpuk_graph_end_capture)");
    memset(&e, 0, sizeof e);
    e.stream = cs;
    e.stream_id = stream.id;
    e.type = type;
    if ((cr = GPUK__DRV.cuGraphCreate(&e.graph, 0)) != 0)
        return gpuk__fail_cu(fn, "cuGraphCreate", cr, NULL);
    /* the default is set again at each launch: every run starts from initial_value */
    if ((cr = GPUK__DRV.cuGraphConditionalHandleCreate(&e.handle, e.graph, ctx->cu,
                                                       initial_value,
                                                       GPUK__CU_GRAPH_COND_ASSIGN_DEFAULT)) != 0)
        return gpuk__cond_abandon(fn, ctx, cs, e.graph,
                                  gpuk__fail_cu(fn, "cuGraphConditionalHandleCreate", cr, NULL));
    if ((cr = GPUK__DRV.cuStreamBeginCaptureToGraph(cs, e.graph, NULL, NULL, 0,
                                                    GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)))
        return gpuk__cond_abandon(fn, ctx, cs, e.graph,
                                  gpuk__fail_cu(fn, "cuStreamBeginCaptureToGraph", cr, NULL));
    gpuk__mutex_lock(&ctx->lock);
    slot = NULL;
    for (i = 0; i < 4 && !slot; i++)
        if (!ctx->conds[i].stream) slot = &ctx->conds[i];
    if (slot) *slot = e;
    gpuk__mutex_unlock(&ctx->lock);
    if (!slot) /* another thread took the last entry meanwhile */
        return gpuk__cond_abandon(fn, ctx, cs, e.graph,
                                  gpuk__fail(fn, GPUK_ERR_POOL_FULL, "4 conditional captures "
                                             "are open on this ctx already"));
    *out_cond = e.handle;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_begin_while(gpuk_ctx* ctx, gpuk_stream stream,
                                              uint32_t initial_value, uint64_t* out_cond) {
    return gpuk__cond_begin(__func__, ctx, stream, GPUK__CU_GRAPH_COND_TYPE_WHILE,
                            initial_value, out_cond);
}

GPUK__IMPL gpuk_result gpuk_graph_begin_if(gpuk_ctx* ctx, gpuk_stream stream,
                                           uint32_t initial_value, uint64_t* out_cond) {
    return gpuk__cond_begin(__func__, ctx, stream, GPUK__CU_GRAPH_COND_TYPE_IF, initial_value,
                            out_cond);
}

GPUK__IMPL gpuk_result gpuk_graph_begin_body(gpuk_ctx* ctx, gpuk_stream stream) {
    const char* const fn = __func__;
    enum { MAX_DEPS = 16 };
    gpuk__cu_graph_node deps[MAX_DEPS], node = NULL;
    const gpuk__cu_graph_node* got = NULL;
    gpuk__cu_cond_node_params p;
    gpuk__cond_capture e;
    gpuk__cond_capture* live;
    gpuk__cu_graph captured = NULL, cg = NULL, body = NULL;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    unsigned int status = 0;
    uint64_t id = 0;
    size_t n = 0, i;
    int capturing = 0, state = 0;
    memset(&e, 0, sizeof e);
    if ((r = gpuk__capture_head(fn, ctx, stream, &cs, &capturing)) != GPUK_OK) return r;
    gpuk__mutex_lock(&ctx->lock);
    if ((live = gpuk__cond_find(ctx, cs)) != NULL) {
        e = *live;
        state = capturing ? (live->in_body ? 2 : 1) : 0;
    }
    gpuk__mutex_unlock(&ctx->lock);
    if (state != 1)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, state == 2 ?
                          "the stream's conditional capture is in its body already" :
                          "the stream is not in a conditional capture's head "
                          "(gpuk_graph_begin_while or gpuk_graph_begin_if first)");
    /* the head's last work is what the node follows; the array lives until the next call */
    cr = GPUK__DRV.cuStreamGetCaptureInfo(cs, &status, &id, &cg, &got, &n);
    if (!cr && n > MAX_DEPS) {
        gpuk__cond_take(ctx, cs, &e);
        return gpuk__cond_abandon(fn, ctx, cs, e.graph, gpuk__fail(
            fn, GPUK_ERR_INVALID_ARG, "the head ends in %u unjoined branches (at most %d: "
            "join the streams first); the capture has ended", (unsigned)n, (int)MAX_DEPS));
    }
    for (i = 0; !cr && i < n; i++) deps[i] = got[i];
    if (cr || status != GPUK__CU_STREAM_CAPTURE_ACTIVE) {
        gpuk__cond_take(ctx, cs, &e);
        return gpuk__cond_abandon(fn, ctx, cs, e.graph, cr ?
            gpuk__fail_cu(fn, "cuStreamGetCaptureInfo", cr, NULL) :
            gpuk__fail_cu(fn, "cuStreamGetCaptureInfo", 901, "the head's capture was "
                          "invalidated by a call it cannot hold; the capture has ended"));
    }
    if ((cr = GPUK__DRV.cuStreamEndCapture(cs, &captured)) != 0) {
        gpuk__cond_take(ctx, cs, &e);
        return gpuk__cond_abandon(fn, ctx, cs, e.graph,
                                  gpuk__fail_cu(fn, "cuStreamEndCapture", cr, NULL));
    }
    memset(&p, 0, sizeof p);
    p.type = GPUK__CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.u.cond.handle = e.handle;
    p.u.cond.type = e.type;
    p.u.cond.size = 1;
    p.u.cond.out_bodies = NULL; /* the driver points it at an array of the node's own */
    p.u.cond.ctx = ctx->cu;
    cr = GPUK__DRV.cuGraphAddNode(&node, e.graph, n ? deps : NULL, n,
                                  (struct CUgraphNodeParams_st*)(void*)&p);
    if (!cr && p.u.cond.out_bodies) body = p.u.cond.out_bodies[0];
    if (!cr) /* (no body graph given back: the capture's own INVALID_VALUE) */
        cr = GPUK__DRV.cuStreamBeginCaptureToGraph(cs, body, NULL, NULL, 0,
                                                   GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (cr) {
        gpuk__cond_take(ctx, cs, &e);
        return gpuk__cond_abandon(fn, ctx, cs, e.graph,
                                  gpuk__fail_cu(fn, node ? "cuStreamBeginCaptureToGraph" :
                                                "cuGraphAddNode", cr, NULL));
    }
    gpuk__mutex_lock(&ctx->lock);
    if ((live = gpuk__cond_find(ctx, cs)) != NULL) live->in_body = 1;
    gpuk__mutex_unlock(&ctx->lock);
    return GPUK_OK;
}

/* The end of a conditional capture on cs (0 when cs has none: an ordinary capture): the whole
   graph in *out_graph, or its failure in *out_r with the graph dropped. A head not yet
   followed by gpuk_graph_begin_body is refused and stays open. */
static int gpuk__cond_end(const char* fn, gpuk_ctx* ctx, gpuk__cu_stream cs,
                          gpuk__cu_graph* out_graph, gpuk_result* out_r) {
    gpuk__cond_capture e;
    gpuk__cond_capture* live;
    gpuk__cu_graph body = NULL;
    gpuk__cu_result cr;
    gpuk_result r;
    int in_body = -1;
    gpuk__mutex_lock(&ctx->lock);
    if ((live = gpuk__cond_find(ctx, cs)) != NULL) in_body = live->in_body;
    gpuk__mutex_unlock(&ctx->lock);
    if (in_body < 0) return 0;
    if (!in_body) {
        *out_r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the conditional capture is in its head: "
                            "gpuk_graph_begin_body starts the node's body, then end");
        return 1;
    }
    gpuk__cond_take(ctx, cs, &e);
    if ((cr = GPUK__DRV.cuStreamEndCapture(cs, &body)) != 0) {
        r = gpuk__fail_cu(fn, "cuStreamEndCapture", cr, cr != 901 ? NULL :
                          "the body's capture was invalidated: a body holds kernels, copies "
                          "and memsets only (no host functions, event records or "
                          "allocations), and no sync; it has ended");
        *out_r = gpuk__cond_abandon(fn, ctx, cs, e.graph, r);
        return 1;
    }
    *out_graph = e.graph; /* the body belongs to its node */
    *out_r = GPUK_OK;
    return 1;
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
    if (gpuk__cond_end(fn, ctx, cs, out_graph, &r)) return r;
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
    gpuk_result r = gpuk__handle_destroy(__func__, ctx, gpuk__kind_graph, graph.id);
    int i;
    /* the built-ins' scratch areas kept for graphs may go with the last one */
    for (i = 0; r == GPUK_OK && i < GPUK__LAYER_COUNT; i++) {
        const gpuk__layer* layer = gpuk__layer_of(i);
        if (layer && layer->graph_destroyed) layer->graph_destroyed(__func__, ctx, ctx->layer[i]);
    }
    return r;
}
