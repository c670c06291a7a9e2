/* src/gpuk_ctx.h - part of gpuk.h: ctx create and destroy, sync, memory info, limits. */
/* ---- >>ctx ---- */
/* A handle tag for a new ctx: the next one round that no live ctx has (call under gpuk__lock).
   With more than GPUK__TAGS live ctxs, tags are shared and only the slot check remains. */
static uint32_t gpuk__ctx_tag_take(void) {
    uint32_t i, t = gpuk__g.next_tag % GPUK__TAGS;
    for (i = 0; i < GPUK__TAGS && gpuk__g.tag_users[(t + i) % GPUK__TAGS]; i++) {}
    if (i < GPUK__TAGS) t = (t + i) % GPUK__TAGS;
    gpuk__g.next_tag = t + 1u;
    gpuk__g.tag_users[t]++;
    return t;
}

static gpuk_result gpuk__pool_init(const char* fn, gpuk__pool* pool, size_t stride, uint32_t want,
                                   uint32_t dflt, const char* field) {
    uint32_t n = want ? want : dflt, i;
    if (n > 65535u)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "gpuk_ctx_desc.%s = %u exceeds 65535", field, n);
    pool->size = n + 1u;
    pool->stride = stride;
    for (pool->slot_bits = 1; (1u << pool->slot_bits) <= n; pool->slot_bits++) {}
    pool->slots = (char*)gpuk__alloc(stride * pool->size);
    pool->free_ring = (uint32_t*)gpuk__alloc(sizeof(uint32_t) * pool->size);
    pool->gens = (uint32_t*)gpuk__alloc(sizeof(uint32_t) * pool->size);
    if (!pool->slots || !pool->free_ring || !pool->gens)
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC,
                          "cannot allocate the %s pool (%u slots)", field, n);
    memset(pool->slots, 0, stride * pool->size);
    memset(pool->gens, 0, sizeof(uint32_t) * pool->size);
    /* Hand out low slots first: ids stay small and readable in logs. */
    for (i = 0; i < n; i++) pool->free_ring[i] = i + 1u;
    pool->free_head = 0;
    pool->free_count = n;
    return GPUK_OK;
}

static void gpuk__ctx_free_host(gpuk_ctx* ctx) {
    uint32_t k;
    for (k = 0; k < GPUK__KIND_NUM; k++) {
        gpuk__free(ctx->pools[k].slots);
        gpuk__free(ctx->pools[k].free_ring);
        gpuk__free(ctx->pools[k].gens);
    }
    gpuk__free(ctx);
}

/* One teardown step: goes on past ordinary failures, keeping the first, but makes no driver
   call once a sticky fault is known (the driver may block or fail on every call then). */
#define GPUK__KEEP_FIRST(first, call_name, expr) \
    do { if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) { gpuk__cu_result kf_ = (expr); \
         if (kf_) { gpuk_result kr_ = gpuk__fail_cu(fn, call_name, kf_, NULL); \
                    if ((first) == GPUK_OK) (first) = kr_; } } } while (0)

/* Every layer releases what it holds for ctx (device memory, modules: after a sticky fault,
   host memory only) and its state, or keeps what failed for a retry; the layers above go
   first. */
static void gpuk__layers_release(const char* fn, gpuk_ctx* ctx, gpuk_result* first) {
    int i;
    for (i = GPUK__LAYER_COUNT - 1; i >= 0; i--) {
        const gpuk__layer* layer = gpuk__layer_of(i);
        if (layer && layer->ctx_release) layer->ctx_release(fn, ctx, &ctx->layer[i], first);
    }
}

/* One ctx teardown call: a failure is kept (the first one) and reported; teardown goes on. */
static void gpuk__keep_first(const char* fn, gpuk_result* first, const char* call_name,
                             gpuk__cu_result cr) {
    gpuk_result r;
    if (!cr) return;
    r = gpuk__fail_cu(fn, call_name, cr, NULL);
    if (*first == GPUK_OK) *first = r;
}

/* gpuk's own driver objects of ctx (the staging memory and its events, the join event, graphs
   left by a failed cuGraphDestroy), each released once and forgotten; staging stays off from
   here (a failed destroy keeps the ctx). */
static void gpuk__ctx_release_own(const char* fn, gpuk_ctx* ctx, gpuk_result* first) {
    gpuk__cu_event* evs[3];
    gpuk__cu_result cr;
    int i;
    while (ctx->graph_orphan_count && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        gpuk__keep_first(fn, first, "cuGraphDestroy",
                         cr = GPUK__DRV.cuGraphDestroy(
                             ctx->graph_orphans[ctx->graph_orphan_count - 1]));
        if (cr) break;
        ctx->graph_orphan_count--;
    }
    /* conditional graphs whose capture never ended (src/gpuk_graph.h) */
    for (i = 0; i < 4 && !GPUK__ATOMIC_LOAD(&gpuk__g.broken); i++) {
        if (!ctx->conds[i].stream) continue;
        gpuk__keep_first(fn, first, "cuGraphDestroy",
                         cr = GPUK__DRV.cuGraphDestroy(ctx->conds[i].graph));
        if (!cr) memset(&ctx->conds[i], 0, sizeof ctx->conds[i]);
    }
    evs[0] = &ctx->staging.ev[0];
    evs[1] = &ctx->staging.ev[1];
    evs[2] = &ctx->join_ev;
    GPUK__ATOMIC_STORE(&ctx->staging.state, GPUK__STAGING_OFF);
    for (i = 0; i < 3 && !GPUK__ATOMIC_LOAD(&gpuk__g.broken); i++) {
        if (!*evs[i]) continue;
        gpuk__keep_first(fn, first, "cuEventDestroy", cr = GPUK__DRV.cuEventDestroy(*evs[i]));
        if (!cr) *evs[i] = NULL;
    }
    if (ctx->staging.mem && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        gpuk__keep_first(fn, first, "cuMemFreeHost",
                         cr = GPUK__DRV.cuMemFreeHost(ctx->staging.mem));
        if (!cr) ctx->staging.mem = NULL;
    }
}

/* A capture still open on one of ctx's streams (active, or invalidated and not yet ended):
   GPUK_ERR_CAPTURING naming it. cuCtxSynchronize would fail on it, again at every retry, and
   invalidate an active capture. The ctx is current. */
static gpuk_result gpuk__ctx_captures(const char* fn, gpuk_ctx* ctx) {
    const gpuk__pool* pool = &ctx->pools[gpuk__kind_stream];
    unsigned int status = 0;
    uint32_t i, id = 0;
    if (!GPUK__DRV.cuStreamIsCapturing) return GPUK_OK;
    gpuk__cu_result cr;
    if (ctx->default_stream &&
        (cr = GPUK__DRV.cuStreamIsCapturing(ctx->default_stream, &status)) != 0)
        return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, "the ctx's default stream");
    if (status)
        return gpuk__fail_hint(fn, GPUK_ERR_CAPTURING,
                               "end the capture with gpuk_graph_end_capture "
                               "first", "the ctx's default stream is capturing into a CUDA graph; "
                               "the ctx is kept");
    for (i = 1; i < pool->size; i++) {
        const gpuk__stream_slot* s = (const gpuk__stream_slot*)gpuk__pool_slot(pool, i);
        memcpy(&id, s, sizeof id);
        if (!id || !s->cu) continue;
        if ((cr = GPUK__DRV.cuStreamIsCapturing(s->cu, &status)) != 0)
            return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, NULL);
        if (status)
            return gpuk__fail_hint(fn, GPUK_ERR_CAPTURING, "end the capture with "
                                   "gpuk_graph_end_capture first",
                                   "stream 0x%x is capturing into a CUDA graph%s; the ctx is kept",
                                   id,
                                   status == GPUK__CU_STREAM_CAPTURE_ACTIVE ? "" : " (invalidated, "
                                   "not yet ended)");
    }
    return GPUK_OK;
}

/* Releases everything ctx holds in the driver, each object once: what is released is
   forgotten, so after a failure (GPUK_OK not returned, no sticky fault) the call can be made
   again for what is left. Objects first, each kind in GPUK__HANDLE_KINDS order; the default
   stream and the primary context reference only once every object is gone. Stops at a sticky
   fault (no driver call after it). */
static gpuk_result gpuk__ctx_release(const char* fn, gpuk_ctx* ctx) {
    gpuk_result first = GPUK_OK, r;
    gpuk__cu_context cur = NULL;
    uint32_t k, i;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((r = gpuk__ctx_captures(fn, ctx)) != GPUK_OK) return r;
    gpuk__keep_first(fn, &first, "cuCtxSynchronize", GPUK__DRV.cuCtxSynchronize());
    gpuk__ctx_release_own(fn, ctx, &first);
    /* the layers first (built-in modules and scratch): what they hold may use the core's */
    gpuk__layers_release(fn, ctx, &first);
    for (k = 0; k < GPUK__KIND_NUM; k++) {
        gpuk__pool* pool = &ctx->pools[k];
        for (i = 1; i < pool->size && !GPUK__ATOMIC_LOAD(&gpuk__g.broken); i++) {
            uint32_t id;
            memcpy(&id, gpuk__pool_slot(pool, i), sizeof id);
            if (id && gpuk__slot_detach(ctx, pool, id) &&
                (r = gpuk__slot_release(fn, ctx, (gpuk__kind)k, i, id)) != GPUK_OK &&
                first == GPUK_OK)
                first = r;
        }
    }
    if (first != GPUK_OK || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return first;
    if (ctx->default_stream) {
        gpuk__keep_first(fn, &first, "cuStreamDestroy",
                         GPUK__DRV.cuStreamDestroy(ctx->default_stream));
        if (first != GPUK_OK) return first;
        ctx->default_stream = NULL;
    }
    /* Leave no thread pointing at a primary context it no longer holds. */
    if (GPUK__DRV.cuCtxGetCurrent(&cur) == 0 && cur == ctx->cu)
        gpuk__keep_first(fn, &first, "cuCtxSetCurrent", GPUK__DRV.cuCtxSetCurrent(NULL));
    if (first != GPUK_OK) return first;
    gpuk__keep_first(fn, &first, "cuDevicePrimaryCtxRelease",
                     GPUK__DRV.cuDevicePrimaryCtxRelease(ctx->dev));
    return first;
}


static void gpuk__ctx_mutexes_fini(gpuk_ctx* ctx) {
    gpuk__mutex_fini(&ctx->lock);
    gpuk__mutex_fini(&ctx->staging.lock);
    gpuk__mutex_fini(&ctx->join_lock);
}

/* staging_threads 0; node_cpus: the CPUs of the GPU's NUMA node the process may use, 0 where
   unknown (or no_staging_numa) */
static uint32_t gpuk__staging_threads_default(unsigned node_cpus) {
    unsigned half = (node_cpus ? node_cpus : GPUK__ONLINE_CPUS()) / 2u;
    return half < 1u ? 1u : half > GPUK__STAGING_THREADS_DEFAULT_MOST ?
                            GPUK__STAGING_THREADS_DEFAULT_MOST : half;
}

/* Every default but staging_threads 0, which needs the GPU's NUMA node: resolved by the
   callers, with gpuk__staging_threads_default. */
static gpuk_ctx_desc gpuk__ctx_desc_defaults(const gpuk_ctx_desc* desc) {
    gpuk_ctx_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.max_buffers) d.max_buffers = 4096;
    if (!d.max_pinned) d.max_pinned = 256;
    if (!d.max_streams) d.max_streams = 256;
    if (!d.max_events) d.max_events = 1024;
    if (!d.max_modules) d.max_modules = 64;
    if (!d.max_kernels) d.max_kernels = 1024;
    if (!d.staging_bytes) d.staging_bytes = GPUK__STAGING_BYTES;
    if (!d.staging_min_bytes) d.staging_min_bytes = GPUK__STAGING_MIN_BYTES;
    if (!d.max_graphs) d.max_graphs = 64;
    return d;
}

GPUK__IMPL gpuk_ctx_desc gpuk_ctx_desc_defaults(const gpuk_ctx_desc* desc) {
    gpuk_ctx_desc d = gpuk__ctx_desc_defaults(desc);
    gpuk__cpu_set cpus;
    if (!d.staging_threads)
        d.staging_threads = gpuk__staging_threads_default(
            d.no_staging_numa ? 0u
                              : gpuk__numa_cpus(gpuk__device_numa_node_quiet(d.device), &cpus));
    return d;
}

GPUK__IMPL gpuk_result gpuk_ctx_create(const gpuk_ctx_desc* desc, gpuk_ctx** out_ctx) {
    const char* const fn = __func__;
    gpuk_ctx_desc d;
    gpuk_ctx* ctx;
    gpuk__cu_context prev = NULL;
    gpuk_result r;
    int i;
    unsigned node_cpus = 0;
    gpuk__cu_result cr;
    if (!out_ctx) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ctx is NULL");
    *out_ctx = NULL;
    d = gpuk__ctx_desc_defaults(desc);
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc canaries are not zero");
    if (d.staging_bytes < GPUK__STAGING_LEAST)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "gpuk_ctx_desc.staging_bytes = %zu is below the least, 65536 (0 -> 32 "
                          "MiB; no_staging turns staging off)", d.staging_bytes);
    if (d.staging_threads > GPUK__STAGING_THREADS_MOST)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "gpuk_ctx_desc.staging_threads = %u is above the most, %u (0 -> min(8, "
                          "CPUs / 2); 1 -> the calling thread only)",
                          (unsigned)d.staging_threads, GPUK__STAGING_THREADS_MOST);
    GPUK__READY(fn);
    /* Counted as live from here, so that a gpuk_shutdown on another thread cannot unload the
       driver table under a create halfway through: it fails with GPUK_ERR_BUSY instead. */
    gpuk__mutex_lock(&gpuk__lock);
    if (!gpuk__g.initialized) {
        gpuk__mutex_unlock(&gpuk__lock);
        return gpuk__fail(fn, GPUK_ERR_BUSY,
                          "gpuk_shutdown ran on another thread as this call began");
    }
    gpuk__g.live_ctxs++;
    gpuk__mutex_unlock(&gpuk__lock);
    ctx = (gpuk_ctx*)gpuk__alloc(sizeof *ctx);
    if (!ctx) {
        r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the ctx");
        goto fail_count;
    }
#define GPUK__POOL(name, type, field, dflt) \
    if ((r = gpuk__pool_init(fn, &ctx->pools[gpuk__kind_##name], sizeof(type), d.field, dflt, \
                             #field)) != GPUK_OK) \
        goto fail_host;
    GPUK__HANDLE_KINDS(GPUK__POOL)
#undef GPUK__POOL
    if ((r = gpuk__device_query(fn, d.device, &ctx->info)) != GPUK_OK) goto fail_host;
    if ((r = gpuk__device_get(fn, d.device, &ctx->dev)) != GPUK_OK) goto fail_host;
    /* A failed create leaves the thread's current context as it found it. */
    if ((cr = GPUK__DRV.cuCtxGetCurrent(&prev)) != 0) {
        r = gpuk__fail_cu(fn, "cuCtxGetCurrent", cr, NULL);
        goto fail_host;
    }
    /* The primary context is the one the runtime API and other libraries share; creating our
       own (cuCtxCreate) would split memory and streams from theirs. */
    if ((cr = GPUK__DRV.cuDevicePrimaryCtxRetain(&ctx->cu, ctx->dev)) != 0) {
        r = gpuk__fail_cu(fn, "cuDevicePrimaryCtxRetain", cr, NULL);
        goto fail_host;
    }
    if ((r = gpuk__enter_slow(fn, ctx)) != GPUK_OK) goto fail_current;
    /* Blocking (flags 0), like user streams by default: the stream-less calls run on the
       legacy stream, which is then ordered after the work queued here (built-in kernels). */
    if ((cr = GPUK__DRV.cuStreamCreateWithPriority(&ctx->default_stream, 0u, 0)) != 0) {
        r = gpuk__fail_cu(fn, "cuStreamCreateWithPriority", cr, "the ctx default stream");
        goto fail_current;
    }
    gpuk__mutex_init(&ctx->lock);
    gpuk__mutex_init(&ctx->staging.lock);
    gpuk__mutex_init(&ctx->join_lock);
    /* page-sized halves */
    ctx->staging.half = (d.staging_bytes / 2u) & ~(size_t)4095;
    ctx->staging.min_bytes = d.no_staging ? 0 : d.staging_min_bytes;
    /* The copy threads run on the GPU's NUMA node, whose memory the DMA engine is nearest to
       (>>staging). */
    if (!d.no_staging_numa)
        node_cpus = gpuk__numa_cpus(ctx->info.numa_node, &ctx->staging.crew.cpus);
    ctx->staging.crew.pin = node_cpus > 0;
    ctx->staging.threads =
        d.staging_threads ? d.staging_threads : gpuk__staging_threads_default(node_cpus);
    for (i = 0; i < GPUK__LAYER_COUNT; i++) {
        const gpuk__layer* layer = gpuk__layer_of(i);
        if (layer && layer->ctx_init && (r = layer->ctx_init(fn, ctx, &ctx->layer[i])) != GPUK_OK) {
            gpuk_result ignored = GPUK_OK;
            gpuk__layers_release(fn, ctx, &ignored);
            gpuk__ctx_mutexes_fini(ctx);
            if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuStreamDestroy(ctx->default_stream);
            goto fail_current;
        }
    }
    gpuk__mutex_lock(&gpuk__lock);
    ctx->tag = gpuk__ctx_tag_take();
    ctx->next_live = gpuk__g.live_list;
    gpuk__g.live_list = ctx;
    gpuk__mutex_unlock(&gpuk__lock);
    ctx->kernels_max_sm = d.kernels_max_sm;
    for (i = 0; i < GPUK__KIND_NUM; i++) ctx->pools[i].tag = ctx->tag << GPUK__TAG_SHIFT;
    *out_ctx = ctx;
    return GPUK_OK;
fail_current:
    /* not after a sticky fault: no driver calls then (and the primary ctx is not released) */
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        GPUK__DRV.cuCtxSetCurrent(prev);
        GPUK__DRV.cuDevicePrimaryCtxRelease(ctx->dev);
    }
fail_host:
    gpuk__ctx_free_host(ctx);
fail_count:
    gpuk__mutex_lock(&gpuk__lock);
    gpuk__g.live_ctxs--;
    gpuk__mutex_unlock(&gpuk__lock);
    return r;
}

GPUK__IMPL gpuk_result gpuk_ctx_destroy(gpuk_ctx* ctx) {
    const char* const fn = __func__;
    gpuk_result r = GPUK_OK;
    GPUK__CTX_CHECK(fn, ctx);
    /* After a sticky fault or in a fork child the driver must not be called (it may block or
       fail); host memory is freed all the same. Any other failure keeps the ctx for a retry. */
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) r = gpuk__ctx_release(fn, ctx);
    if (GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        if (r != (gpuk_result)GPUK__ATOMIC_LOAD(&gpuk__g.broken)) r = gpuk__fail_broken(fn);
    } else if (r != GPUK_OK) {
        return r;
    }
    gpuk__crew_stop(&ctx->staging.crew); /* host threads: after a sticky fault too */
    gpuk__ctx_mutexes_fini(ctx);
    gpuk__layers_release(fn, ctx, &r); /* host state (no driver call after a sticky fault) */
    gpuk__mutex_lock(&gpuk__lock);
    gpuk__g.live_ctxs--;
    gpuk__g.tag_users[ctx->tag]--;
    {
        gpuk_ctx** link = &gpuk__g.live_list;
        while (*link && *link != ctx) link = &(*link)->next_live;
        if (*link) *link = ctx->next_live;
    }
    gpuk__mutex_unlock(&gpuk__lock);
    gpuk__ctx_free_host(ctx);
    return r;
}

GPUK__IMPL gpuk_result gpuk_ctx_sync(gpuk_ctx* ctx) {
    const char* const fn = __func__;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuCtxSynchronize();
    return cr ? gpuk__fail_cu(fn, "cuCtxSynchronize", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_ctx_mem_info(gpuk_ctx* ctx, size_t* out_free, size_t* out_total) {
    const char* const fn = __func__;
    size_t f = 0, t = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (out_free) *out_free = 0;
    if (out_total) *out_total = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!out_free && !out_total)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_free and out_total are NULL");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuMemGetInfo(&f, &t)) != 0)
        return gpuk__fail_cu(fn, "cuMemGetInfo", cr, NULL);
    if (out_free) *out_free = f;
    if (out_total) *out_total = t;
    return GPUK_OK;
}

GPUK__IMPL const gpuk_device_info* gpuk_ctx_device_info(const gpuk_ctx* ctx) {
    return ctx ? &ctx->info : NULL;
}

GPUK__IMPL gpuk_result gpuk_ctx_make_current(gpuk_ctx* ctx) {
    const char* const fn = __func__;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    return gpuk__enter(fn, ctx);
}

/* ---- >>limits ---- */
/* gpuk_limit's rows: the driver's CUlimit, the name in texts, and for the two the driver takes
   only before a kernel using them has run, what such a kernel calls. */
typedef struct gpuk__limit_row {
    unsigned int cu;
    const char* name;
    const char* used_by;       /* NULL: may be set at any time as far as gpuk is concerned */
} gpuk__limit_row;
static const gpuk__limit_row gpuk__limit_rows[GPUK_LIMIT_NUM] = {
    { 0, "GPUK_LIMIT_DEFAULT", NULL }, /* none: refused */
    { GPUK__CU_LIMIT_STACK_SIZE, "GPUK_LIMIT_STACK_SIZE", NULL },
    { GPUK__CU_LIMIT_PRINTF_FIFO_SIZE, "GPUK_LIMIT_PRINTF_FIFO_SIZE", "printf" },
    { GPUK__CU_LIMIT_MALLOC_HEAP_SIZE, "GPUK_LIMIT_MALLOC_HEAP_SIZE", "malloc or free" },
    { GPUK__CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, "GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH", NULL },
    { GPUK__CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
      "GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT", NULL }
};

/* The row of which, or GPUK_ERR_INVALID_ARG naming the value (0, GPUK_LIMIT_NUM and past it,
   anything cast into the enum). */
static gpuk_result gpuk__limit_of(const char* fn, gpuk_limit which, const gpuk__limit_row** out) {
    unsigned w = (unsigned)which;
    *out = NULL;
    if (w == 0u || w >= (unsigned)GPUK_LIMIT_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "which = %u is not a gpuk_limit (GPUK_LIMIT_STACK_SIZE = 1 to "
                          "GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = %u)", w,
                          (unsigned)GPUK_LIMIT_NUM - 1u);
    *out = &gpuk__limit_rows[w];
    return GPUK_OK;
}

/* A recorded launch (gpuk__launch_note) in words: "kernel 'k'", or the graph's text. */
static size_t gpuk__launch_words(char* buf, size_t cap, size_t pos, const char* what) {
    return what == gpuk__launch_of_graph ? gpuk__fmt(buf, cap, pos, "%s", what)
                                         : gpuk__fmt(buf, cap, pos, "kernel '%s'", what);
}

/* Hook declared in src/gpuk_result.h, for a sticky fault's text. Only tried: the caller may
   hold gpuk__lock (gpuk_init), or another thread may hold it for a moment, and a fault's text
   must not wait; the launches are then left out. */
static size_t gpuk__fault_launches(char* buf, size_t cap, size_t pos) {
    gpuk_ctx* c;
    int n = 0;
    if (!gpuk__mutex_trylock(&gpuk__lock)) return pos;
    for (c = gpuk__g.live_list; c; c = c->next_live) {
        const char* what = (const char*)GPUK__ATOMIC_LOAD_PTR(&c->last_launch);
        if (!what) continue;
        pos = gpuk__fmt(buf, cap, pos, n++ ? "; device %d: " : "; last launch on device %d: ",
                        c->info.ordinal);
        pos = gpuk__launch_words(buf, cap, pos, what);
    }
    gpuk__mutex_unlock(&gpuk__lock);
    return pos;
}

GPUK__IMPL gpuk_result gpuk_ctx_set_limit(gpuk_ctx* ctx, gpuk_limit which, size_t value) {
    const char* const fn = __func__;
    const gpuk__limit_row* l;
    const char* launched;
    gpuk__cu_result cr;
    gpuk_result r;
    char text[200];
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__limit_of(fn, which, &l)) != GPUK_OK) return r;
    /* The driver's rule (cuCtxSetLimit): these two only before a kernel that calls printf (or
       malloc, free) has run in the context; later it answers a bare CUDA_ERROR_INVALID_VALUE.
       gpuk cannot see which kernels call them, so it holds to the first launch. */
    launched = l->used_by ? (const char*)GPUK__ATOMIC_LOAD_PTR(&ctx->last_launch) : NULL;
    if (launched) {
        gpuk__launch_words(text, sizeof text, 0, launched);
        return gpuk__fail_hint(fn, GPUK_ERR_INVALID_ARG, "set it right after gpuk_ctx_create",
                               "%s can be set only before the ctx's first kernel launch (the "
                               "driver refuses it once a kernel calling %s has run, and gpuk "
                               "cannot tell which kernels do); %s has been launched", l->name,
                               l->used_by, text);
    }
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuCtxSetLimit(l->cu, value)) == 0) return GPUK_OK;
    if (cr == GPUK__CU_ERROR_INVALID_VALUE && l->used_by)
        gpuk__fmt(text, sizeof text, 0, "%s = %zu: refused once a kernel calling %s has run in the "
                  "device's primary context (launched before this ctx was created, or by "
                  "another library sharing the context)", l->name, value, l->used_by);
    else gpuk__fmt(text, sizeof text, 0, "%s = %zu", l->name, value);
    return gpuk__fail_cu(fn, "cuCtxSetLimit", cr, text);
}

GPUK__IMPL gpuk_result gpuk_ctx_get_limit(gpuk_ctx* ctx, gpuk_limit which, size_t* out_value) {
    const char* const fn = __func__;
    const gpuk__limit_row* l;
    size_t value = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!out_value) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_value is NULL");
    *out_value = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__limit_of(fn, which, &l)) != GPUK_OK) return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuCtxGetLimit(&value, l->cu)) != 0)
        return gpuk__fail_cu(fn, "cuCtxGetLimit", cr, l->name);
    *out_value = value;
    return GPUK_OK;
}
