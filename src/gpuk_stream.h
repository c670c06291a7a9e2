/* src/gpuk_stream.h - part of gpuk.h: streams, events, timers. */
/* ---- >>stream ---- */
GPUK__IMPL gpuk_result gpuk_stream_create(gpuk_ctx* ctx, const gpuk_stream_desc* desc,
                                          gpuk_stream* out_stream) {
    gpuk_stream_desc d;
    gpuk__stream_slot* s;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    s = (gpuk__stream_slot*)gpuk__create_begin(__func__, ctx, gpuk__kind_stream,
                                               out_stream ? &out_stream->id : NULL, desc, 1,
                                               GPUK__CANARIES(desc), &r);
    if (!s) return r;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    s->cu = (gpuk__cu_stream)d.wrap;
    s->owned = d.wrap == NULL;
    if (!s->owned && GPUK__DRV.cuStreamGetCtx) {
        /* A stream of another context fails or misbehaves at its first use, far from the
           cause. cuStreamGetCtx (9.2+) tells; without it the stream is taken on trust. */
        gpuk__cu_context owner = NULL;
        if ((r = gpuk__enter(__func__, ctx)) != GPUK_OK) { /* the answer for legacy handles */
        } else if ((cr = GPUK__DRV.cuStreamGetCtx(s->cu, &owner)) != 0) {
            r = gpuk__fail_cu(__func__, "cuStreamGetCtx", cr, "the wrapped stream");
        } else if (owner != ctx->cu) {
            r = gpuk__fail(__func__, GPUK_ERR_INVALID_ARG,
                           "wrapped stream %p belongs to another CUDA context (%p; this ctx's is "
                           "the primary context %p of device %d)",
                           d.wrap, (void*)owner, (void*)ctx->cu, ctx->info.ordinal);
        }
    }
    /* blocking by default (flags 0): ordered with gpuk's stream-less calls */
    if (s->owned && (r = gpuk__enter(__func__, ctx)) == GPUK_OK &&
        (cr = GPUK__DRV.cuStreamCreateWithPriority(
             &s->cu, d.non_blocking ? (unsigned)GPUK__CU_STREAM_NON_BLOCKING : 0u,
             d.priority)) != 0)
        r = gpuk__fail_cu(__func__, "cuStreamCreateWithPriority", cr, NULL);
    return gpuk__slot_end(ctx, gpuk__kind_stream, s, r, &out_stream->id);
}

static gpuk__cu_result gpuk__stream_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    gpuk__stream_slot* s = (gpuk__stream_slot*)slot;
    const gpuk__pool* pool = &ctx->pools[gpuk__kind_stream];
    gpuk_result first = GPUK_OK;
    int i;
    /* the layers first (a stream's built-in scratch): what they hold for the stream may still
       be in use by its work */
    for (i = 0; i < GPUK__LAYER_COUNT; i++) {
        const gpuk__layer* layer = gpuk__layer_of(i);
        if (layer && layer->stream_release)
            layer->stream_release(__func__, ctx, ctx->layer[i],
                                  (uint32_t)((size_t)((char*)slot - pool->slots) / pool->stride),
                                  &first);
    }
    *out_call = "cuMemFree";
    if (first > 0) return (gpuk__cu_result)first;
    /* gpuk's own code, passed through as it is (the note of a scratch area kept for a graph
       could not be allocated) */
    *out_call = "giving up the stream's built-in scratch";
    if (first != GPUK_OK) return (gpuk__cu_result)first;
    *out_call = "cuStreamDestroy";
    return s->owned ? GPUK__DRV.cuStreamDestroy(s->cu) : 0;
}

GPUK__IMPL gpuk_result gpuk_stream_destroy(gpuk_ctx* ctx, gpuk_stream stream) {
    return gpuk__handle_destroy(__func__, ctx, gpuk__kind_stream, stream.id);
}

/* The common head of stream calls: alive, ctx, stream handle. No driver call yet, so that a
   bad handle found after it never costs one. */
#define GPUK__STREAM_HEAD(fn, ctx, stream, cs) \
    do { gpuk_result h_; GPUK__ALIVE(fn); GPUK__CTX_CHECK(fn, ctx); \
         if ((h_ = gpuk__stream_resolve(fn, ctx, stream, &(cs))) != GPUK_OK) return h_; } while (0)
#define GPUK__ENTER(fn, ctx) \
    do { gpuk_result e_ = gpuk__enter(fn, ctx); if (e_ != GPUK_OK) return e_; } while (0)

GPUK__IMPL gpuk_result gpuk_stream_sync(gpuk_ctx* ctx, gpuk_stream stream) {
    const char* const fn = __func__;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuStreamSynchronize(cs);
    return cr ? gpuk__fail_cu(fn, "cuStreamSynchronize", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_stream_query(gpuk_ctx* ctx, gpuk_stream stream, bool* out_done) {
    const char* const fn = __func__;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    if (!out_done) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_done is NULL");
    *out_done = false;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuStreamQuery(cs);
    if (cr == GPUK__CU_ERROR_NOT_READY) return GPUK_OK;
    if (cr) return gpuk__fail_cu(fn, "cuStreamQuery", cr, NULL);
    *out_done = true;
    return GPUK_OK;
}

/* Both stream waits: stream of ctx, event of event_ctx (the same ctx or a checked pair). */
static gpuk_result gpuk__stream_wait(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                     const gpuk_ctx* event_ctx, gpuk_event event) {
    const gpuk__event_slot* e;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (!(e = gpuk__event_lookup(event_ctx, event.id)))
        return gpuk__bad_handle(fn, "event", event.id);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuStreamWaitEvent(cs, e->cu, 0);
    return cr ? gpuk__fail_cu(fn, "cuStreamWaitEvent", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_stream_wait(gpuk_ctx* ctx, gpuk_stream stream, gpuk_event event) {
    return gpuk__stream_wait(__func__, ctx, stream, ctx, event);
}

GPUK__IMPL gpuk_result gpuk_stream_wait_peer(gpuk_ctx* ctx, gpuk_stream stream, gpuk_ctx* event_ctx,
                                             gpuk_event event) {
    const char* const fn = __func__;
    gpuk_result r;
    GPUK__ALIVE(fn);
    if ((r = gpuk__ctx_pair(fn, ctx, "ctx", event_ctx, "event_ctx")) != GPUK_OK) return r;
    return gpuk__stream_wait(fn, ctx, stream, event_ctx, event);
}

/* gpuk_stream_join and _fork: one internal event, recorded and waited for under join_lock
   (cuStreamWaitEvent waits for the record made before it, so the event can be recorded again
   at once; the lock keeps two threads from recording between each other's record and wait). */
static gpuk_result gpuk__stream_fan(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                    const gpuk_stream* others, uint32_t count, int join) {
    gpuk__cu_stream cs, co;
    gpuk__cu_result cr = 0;
    const char* call = "cuEventCreate";
    uint32_t i, at = count; /* the others[] entry a failure is at; count: none */
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (count && !others)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "others is NULL but count is %u", count);
    for (i = 0; i < count; i++) /* every handle checked before the driver sees any */
        if (others[i].id && !gpuk__stream_lookup(ctx, others[i].id))
            return gpuk__fail(fn, GPUK_ERR_INVALID_HANDLE,
                              "others[%u]: stream handle 0x%x is destroyed or belongs to another "
                              "ctx", i, others[i].id);
    for (i = 0; i < count && others[i].id == stream.id; i++) {}
    if (i == count) return GPUK_OK; /* nothing but stream itself */
    GPUK__ENTER(fn, ctx);
    gpuk__mutex_lock(&ctx->join_lock);
    if (!ctx->join_ev) cr = GPUK__DRV.cuEventCreate(&ctx->join_ev, GPUK__CU_EVENT_DISABLE_TIMING);
    if (!cr && !join) {
        call = "cuEventRecord";
        cr = GPUK__DRV.cuEventRecord(ctx->join_ev, cs);
    }
    for (i = 0; i < count && !cr; i++) {
        if (others[i].id == stream.id) continue;
        (void)gpuk__stream_resolve(fn, ctx, others[i], &co); /* checked above */
        at = i;
        call = "cuEventRecord";
        if (join && (cr = GPUK__DRV.cuEventRecord(ctx->join_ev, co)) != 0) break;
        call = "cuStreamWaitEvent";
        cr = GPUK__DRV.cuStreamWaitEvent(join ? cs : co, ctx->join_ev, 0);
    }
    gpuk__mutex_unlock(&ctx->join_lock);
    if (!cr) return GPUK_OK;
    if (at < count) {
        char detail[32];
        gpuk__fmt(detail, sizeof detail, 0, "others[%u]", at);
        return gpuk__fail_cu(fn, call, cr, detail);
    }
    return gpuk__fail_cu(fn, call, cr, NULL);
}

GPUK__IMPL gpuk_result gpuk_stream_join(gpuk_ctx* ctx, gpuk_stream stream,
                                        const gpuk_stream* others, uint32_t count) {
    return gpuk__stream_fan(__func__, ctx, stream, others, count, 1);
}

GPUK__IMPL gpuk_result gpuk_stream_fork(gpuk_ctx* ctx, gpuk_stream stream,
                                        const gpuk_stream* others, uint32_t count) {
    return gpuk__stream_fan(__func__, ctx, stream, others, count, 0);
}

GPUK__IMPL gpuk_result gpuk_stream_host_func(gpuk_ctx* ctx, gpuk_stream stream,
                                             void (*fn_ptr)(void* user_data), void* user_data) {
    const char* const fn = __func__;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    if (!fn_ptr) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "fn is NULL");
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuLaunchHostFunc(cs, (gpuk__cu_host_fn)fn_ptr, user_data);
    return cr ? gpuk__fail_cu(fn, "cuLaunchHostFunc", cr, NULL) : GPUK_OK;
}

GPUK__IMPL void* gpuk_stream_native(const gpuk_ctx* ctx, gpuk_stream stream) {
    const gpuk__stream_slot* s;
    if (!ctx) return NULL;
    if (stream.id == 0) return (void*)ctx->default_stream;
    s = gpuk__stream_lookup(ctx, stream.id);
    return s ? (void*)s->cu : NULL;
}

GPUK__IMPL gpuk_result gpuk_stream_priority_range(gpuk_ctx* ctx, int* out_least,
                                                  int* out_greatest) {
    const char* const fn = __func__;
    int least = 0, greatest = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (out_least) *out_least = 0;
    if (out_greatest) *out_greatest = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!out_least || !out_greatest)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "an out pointer is NULL");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuCtxGetStreamPriorityRange(&least, &greatest)) != 0)
        return gpuk__fail_cu(fn, "cuCtxGetStreamPriorityRange", cr, NULL);
    *out_least = least;
    *out_greatest = greatest;
    return GPUK_OK;
}

/* ---- >>event ---- */
/* Shared by gpuk_event_create and the timer, each under its own name. */
static gpuk_result gpuk__event_create(const char* fn, gpuk_ctx* ctx, const gpuk_event_desc* desc,
                                      gpuk_event* out_event) {
    gpuk__event_slot* s;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    unsigned flags;
    s = (gpuk__event_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_event,
                                              out_event ? &out_event->id : NULL, desc, 1,
                                              GPUK__CANARIES(desc), &r);
    if (!s) return r;
    /* an interprocess event cannot time (the driver requires DISABLE_TIMING with it) */
    s->ipc = desc && desc->interprocess ? GPUK__EVENT_INTERPROCESS : GPUK__EVENT_LOCAL;
    s->timing = !(desc && desc->no_timing) && s->ipc == GPUK__EVENT_LOCAL;
    flags = (s->timing ? 0u : (unsigned)GPUK__CU_EVENT_DISABLE_TIMING) |
            (desc && desc->blocking_sync ? (unsigned)GPUK__CU_EVENT_BLOCKING_SYNC : 0u) |
            (s->ipc ? (unsigned)GPUK__CU_EVENT_INTERPROCESS : 0u);
    if ((r = gpuk__enter(fn, ctx)) == GPUK_OK && (cr = GPUK__DRV.cuEventCreate(&s->cu, flags)) != 0)
        r = gpuk__fail_cu(fn, "cuEventCreate", cr, NULL);
    return gpuk__slot_end(ctx, gpuk__kind_event, s, r, &out_event->id);
}

GPUK__IMPL gpuk_result gpuk_event_create(gpuk_ctx* ctx, const gpuk_event_desc* desc,
                                         gpuk_event* out_event) {
    return gpuk__event_create(__func__, ctx, desc, out_event);
}

static gpuk__cu_result gpuk__event_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    (void)ctx;
    *out_call = "cuEventDestroy";
    return GPUK__DRV.cuEventDestroy(((const gpuk__event_slot*)slot)->cu);
}

GPUK__IMPL gpuk_result gpuk_event_destroy(gpuk_ctx* ctx, gpuk_event event) {
    return gpuk__handle_destroy(__func__, ctx, gpuk__kind_event, event.id);
}

/* Shared by gpuk_event_record and the timer, each under its own name. */
static gpuk_result gpuk__event_record(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                      gpuk_event event) {
    const gpuk__event_slot* e;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (!(e = gpuk__event_lookup(ctx, event.id))) return gpuk__bad_handle(fn, "event", event.id);
    GPUK__ENTER(fn, ctx);
    if (GPUK__DRV.cuEventRecordWithFlags && GPUK__DRV.cuStreamIsCapturing) {
        /* in a capture a plain record only orders streams within it, and the event cannot be
           waited for afterwards (the H100's driver: CUDA_ERROR_INVALID_VALUE); an "external"
           record becomes a graph node that records the event at each launch, as a record on a
           stream does. */
        unsigned int status = 0;
        if ((cr = GPUK__DRV.cuStreamIsCapturing(cs, &status)) != 0)
            return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, NULL);
        if (status == GPUK__CU_STREAM_CAPTURE_ACTIVE) {
            cr = GPUK__DRV.cuEventRecordWithFlags(e->cu, cs, GPUK__CU_EVENT_RECORD_EXTERNAL);
            return cr ? gpuk__fail_cu(fn, "cuEventRecordWithFlags", cr, "inside a stream capture")
                      : GPUK_OK;
        }
    }
    cr = GPUK__DRV.cuEventRecord(e->cu, cs);
    return cr ? gpuk__fail_cu(fn, "cuEventRecord", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_event_record(gpuk_ctx* ctx, gpuk_stream stream, gpuk_event event) {
    return gpuk__event_record("gpuk_event_record", ctx, stream, event);
}

/* The common head of event calls: alive, ctx, event handle. */
#define GPUK__EVENT_HEAD(fn, ctx, event, e) \
    do { GPUK__ALIVE(fn); GPUK__CTX_CHECK(fn, ctx); \
         if (!((e) = gpuk__event_lookup(ctx, (event).id))) \
             return gpuk__bad_handle(fn, "event", (event).id); } while (0)

GPUK__IMPL gpuk_result gpuk_event_sync(gpuk_ctx* ctx, gpuk_event event) {
    const char* const fn = __func__;
    const gpuk__event_slot* e;
    gpuk__cu_result cr;
    GPUK__EVENT_HEAD(fn, ctx, event, e);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuEventSynchronize(e->cu);
    return cr ? gpuk__fail_cu(fn, "cuEventSynchronize", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_event_query(gpuk_ctx* ctx, gpuk_event event, bool* out_done) {
    const char* const fn = __func__;
    const gpuk__event_slot* e;
    gpuk__cu_result cr;
    if (!out_done) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_done is NULL");
    *out_done = false;
    GPUK__EVENT_HEAD(fn, ctx, event, e);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuEventQuery(e->cu);
    if (cr == GPUK__CU_ERROR_NOT_READY) return GPUK_OK;
    if (cr) return gpuk__fail_cu(fn, "cuEventQuery", cr, NULL);
    *out_done = true;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_event_elapsed_ms(gpuk_ctx* ctx, gpuk_event start, gpuk_event stop,
                                             float* out_ms) {
    const char* const fn = __func__;
    const gpuk__event_slot* a;
    const gpuk__event_slot* b;
    gpuk__cu_result cr;
    float ms = 0.0f;
    if (!out_ms) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ms is NULL");
    *out_ms = 0.0f;
    GPUK__EVENT_HEAD(fn, ctx, start, a);
    if (!(b = gpuk__event_lookup(ctx, stop.id))) return gpuk__bad_handle(fn, "stop event", stop.id);
    if (!a->timing || !b->timing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "an event records no time: created with "
                          "no_timing or interprocess, or imported (gpuk_event_import)");
    GPUK__ENTER(fn, ctx);
    if ((cr = GPUK__DRV.cuEventElapsedTime(&ms, a->cu, b->cu)) != 0)
        return gpuk__fail_cu(fn, "cuEventElapsedTime", cr, NULL);
    *out_ms = ms;
    return GPUK_OK;
}

/* ---- >>timer ---- */
GPUK__IMPL gpuk_result gpuk_timer_create(gpuk_ctx* ctx, gpuk_timer* out_timer) {
    const char* const fn = __func__;
    gpuk_result r;
    if (!out_timer) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_timer is NULL");
    memset(out_timer, 0, sizeof *out_timer);
    if ((r = gpuk__event_create(fn, ctx, NULL, &out_timer->start)) != GPUK_OK) return r;
    if ((r = gpuk__event_create(fn, ctx, NULL, &out_timer->stop)) != GPUK_OK) {
        gpuk__handle_destroy(fn, ctx, gpuk__kind_event, out_timer->start.id);
        out_timer->start.id = 0;
    }
    return r;
}

/* Each event destroyed is zeroed in *timer; one whose destroy failed stays, so a retry
   destroys what is left (a timer with both events gone is refused as destroyed). */
GPUK__IMPL gpuk_result gpuk_timer_destroy(gpuk_ctx* ctx, gpuk_timer* timer) {
    const char* const fn = __func__;
    gpuk_result a = GPUK_OK, b = GPUK_OK;
    if (!timer) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "timer is NULL");
    GPUK__CTX_CHECK(fn, ctx);
    if (!timer->start.id && !timer->stop.id) return gpuk__bad_handle(fn, "timer", 0);
    if (timer->start.id &&
        (a = gpuk__handle_destroy(fn, ctx, gpuk__kind_event, timer->start.id)) == GPUK_OK)
        timer->start.id = 0;
    if (timer->stop.id &&
        (b = gpuk__handle_destroy(fn, ctx, gpuk__kind_event, timer->stop.id)) == GPUK_OK)
        timer->stop.id = 0;
    if (a == GPUK_OK && b == GPUK_OK) memset(timer, 0, sizeof *timer);
    return b != GPUK_OK ? b : a; /* the last failure: the one gpuk_last_error() tells */
}

/* A timer's events, checked under the timer call's own name before the event calls run. */
static gpuk_result gpuk__timer_check(const char* fn, const gpuk_ctx* ctx, const gpuk_timer* t) {
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__event_lookup(ctx, t->start.id))
        return gpuk__bad_handle(fn, "timer start event", t->start.id);
    if (!gpuk__event_lookup(ctx, t->stop.id))
        return gpuk__bad_handle(fn, "timer stop event", t->stop.id);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_timer_start(gpuk_ctx* ctx, gpuk_stream stream, gpuk_timer* timer) {
    gpuk_result r;
    if (!timer) return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "timer is NULL");
    if ((r = gpuk__timer_check(__func__, ctx, timer)) != GPUK_OK) return r;
    /* the stream is kept for gpuk_timer_stop only once it has proved valid */
    if ((r = gpuk__event_record(__func__, ctx, stream, timer->start)) != GPUK_OK) return r;
    timer->stream = stream;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_timer_stop(gpuk_ctx* ctx, gpuk_timer* timer, float* out_ms) {
    gpuk_result r;
    if (out_ms) *out_ms = 0.0f;
    if (!timer || !out_ms)
        return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "timer or out_ms is NULL");
    if ((r = gpuk__timer_check(__func__, ctx, timer)) != GPUK_OK) return r;
    if ((r = gpuk__event_record(__func__, ctx, timer->stream, timer->stop)) != GPUK_OK) return r;
    if ((r = gpuk_event_sync(ctx, timer->stop)) != GPUK_OK) return r;
    return gpuk_event_elapsed_ms(ctx, timer->start, timer->stop, out_ms);
}
