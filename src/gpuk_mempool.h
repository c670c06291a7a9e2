/* src/gpuk_mempool.h - part of gpuk.h: buffers made and freed on a stream, the memory pool. */
/* ---- >>mempool ---- */
/* cuMemAllocAsync and cuMemFreeAsync (CUDA 11.2) take memory from the device's current memory
   pool and give it back in the order of a stream: no wait for the whole device, as cuMemFree
   has, and a block freed on a stream is taken again by the next allocation there without a
   trip to the driver's allocator. Such buffers are ordinary slots of the buffer pool
   (gpuk__buffer_slot.origin tells them apart), checked by every call like the others. This
   file comes before src/gpuk_memory.h, whose gpuk_buffer_destroy frees them through
   gpuk__buffer_free_detached. */
enum { GPUK__MEMPOOLS_UNKNOWN, GPUK__MEMPOOLS_YES, GPUK__MEMPOOLS_NO };

#define GPUK__MEMPOOL_ROWS(X) \
    X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuDeviceGetMemPool) X(cuMemPoolSetAttribute) \
    X(cuMemPoolGetAttribute) X(cuMemPoolTrimTo)

/* The driver has the pool's entry points (all optional, all of CUDA 11.2: a driver without one
   gets its name) and the ctx's device has memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_
   SUPPORTED, asked once a ctx: the driver refuses cuMemAllocAsync where it is 0). */
static gpuk_result gpuk__mempools_ready(const char* fn, gpuk_ctx* ctx) {
    int state = GPUK__ATOMIC_LOAD(&ctx->mempools), has = 0;
    gpuk__cu_result cr;
    if (state == GPUK__MEMPOOLS_YES) return GPUK_OK;
#define GPUK__X_MEMPOOL_ROW(name) \
    if (!GPUK__DRV.name) \
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, \
                          "buffers made on a stream need a driver for CUDA 11.2 or newer; this " \
                          "one (%d.%d) lacks " #name, gpuk__g.driver_version / 1000, \
                          gpuk__g.driver_version % 1000 / 10);
    GPUK__MEMPOOL_ROWS(GPUK__X_MEMPOOL_ROW)
#undef GPUK__X_MEMPOOL_ROW
    if (state == GPUK__MEMPOOLS_UNKNOWN) {
        cr = GPUK__DRV.cuDeviceGetAttribute(&has, GPUK__CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                            ctx->dev);
        if (cr) return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr,
                                     "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED");
        state = has ? GPUK__MEMPOOLS_YES : GPUK__MEMPOOLS_NO;
        GPUK__ATOMIC_STORE(&ctx->mempools, state);
    }
    if (state == GPUK__MEMPOOLS_NO)
        return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED,
                          "device %d (%s) has no memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_"
                          "SUPPORTED is 0), so buffers cannot be made on a stream: use "
                          "gpuk_buffer_create", ctx->info.ordinal, ctx->info.name);
    return GPUK_OK;
}

/* Whether cs is in a capture, active or invalidated (an allocation there is the graph's, a free
   there a graph node); 0 on a driver without cuStreamIsCapturing, which has no captures. */
static gpuk_result gpuk__capturing(const char* fn, gpuk__cu_stream cs, unsigned int* out_status) {
    gpuk__cu_result cr;
    *out_status = GPUK__CU_STREAM_CAPTURE_STATUS_NONE;
    if (!GPUK__DRV.cuStreamIsCapturing) return GPUK_OK;
    cr = GPUK__DRV.cuStreamIsCapturing(cs, out_status);
    return cr ? gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_buffer_create_async(gpuk_ctx* ctx, gpuk_stream stream,
                                                const gpuk_buffer_desc* desc,
                                                gpuk_buffer* out_buffer) {
    const char* const fn = __func__;
    gpuk__buffer_slot* s;
    gpuk__cu_stream cs = NULL;
    gpuk__cu_result cr;
    unsigned int capture = 0;
    gpuk_result r = GPUK_OK;
    s = (gpuk__buffer_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_buffer,
                                               out_buffer ? &out_buffer->id : NULL, desc, 0,
                                               GPUK__CANARIES(desc), &r);
    if (!s) return r;
    s->ptr = 0;
    s->bytes = desc->bytes;
    s->owned = true;
    s->origin = GPUK__BUFFER_ORDERED;
    s->stream_id = stream.id;
    s->host = NULL;
    gpuk__copy_text(s->label, sizeof s->label, desc->label);
    if (desc->wrap) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.wrap is set: a buffer made on a stream is "
                       "memory of the pool; wrap memory of your own with gpuk_buffer_create");
    } else if (desc->data.ptr || desc->data.bytes) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.data is set: a buffer made on a stream "
                       "starts uninitialised; queue its upload with gpuk_buffer_write_async");
    } else if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK ||
               (r = gpuk__mempools_ready(fn, ctx)) != GPUK_OK) {
    } else if (s->bytes && (r = gpuk__enter(fn, ctx)) == GPUK_OK &&
               (r = gpuk__capturing(fn, cs, &capture)) == GPUK_OK) {
        if (capture) s->origin = GPUK__BUFFER_GRAPH;
        if ((cr = GPUK__DRV.cuMemAllocAsync(&s->ptr, s->bytes, cs)) != 0) {
            char what[80];
            if (s->label[0])
                gpuk__fmt(what, sizeof what, 0, "%zu bytes for buffer '%s'", s->bytes, s->label);
            else gpuk__fmt(what, sizeof what, 0, "%zu bytes for an unlabelled buffer", s->bytes);
            s->ptr = 0;
            r = gpuk__fail_cu(fn, "cuMemAllocAsync", cr, what);
        }
    }
    return gpuk__slot_end(ctx, gpuk__kind_buffer, s, r, &out_buffer->id);
}

/* A buffer made on a stream (freed in order on one), not by a gpuk_buffer_create*. */
static int gpuk__buffer_stream_ordered(const gpuk__buffer_slot* s) {
    return s->origin == GPUK__BUFFER_ORDERED || s->origin == GPUK__BUFFER_GRAPH;
}

/* The name of a detached buffer slot (its id is 0 then) in errors: as gpuk__buffer_name. */
static const char* gpuk__detached_name(char* buf, size_t cap, const gpuk__buffer_slot* s,
                                       uint32_t id) {
    gpuk__buffer_slot named = *s;
    named.id = id;
    return gpuk__buffer_name(buf, cap, &named);
}

/* Frees the buffer of detached slot i (once id) on *stream, or, where stream is NULL
   (gpuk_buffer_destroy), on the stream it was made on. A refusal or a failure gives the slot
   its id back, so the handle stays valid for another try; after a sticky fault the slot is
   freed without a driver call. gpuk_buffer_destroy (src/gpuk_memory.h, a later file) calls it
   too. */
static gpuk_result gpuk__buffer_free_detached(const char* fn, gpuk_ctx* ctx, uint32_t i,
                                              uint32_t id, const gpuk_stream* stream) {
    const gpuk__buffer_slot* s =
        (const gpuk__buffer_slot*)gpuk__pool_slot(&ctx->pools[gpuk__kind_buffer], i);
    gpuk_stream on;
    gpuk__cu_stream cs = NULL;
    gpuk__cu_result cr;
    unsigned int capture = 0;
    gpuk_result r = GPUK_OK;
    char name[48];
    if (GPUK__ATOMIC_LOAD(&gpuk__g.broken))
        return gpuk__slot_settle(fn, ctx, gpuk__kind_buffer, i, id, GPUK_OK);
    on.id = stream ? stream->id : s->stream_id;
    if (s->origin == GPUK__BUFFER_IPC) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s was opened from another process "
                       "(gpuk_buffer_import), not made on a stream: gpuk_buffer_destroy closes "
                       "it", gpuk__detached_name(name, sizeof name, s, id));
    } else if (!gpuk__buffer_stream_ordered(s)) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s was made by gpuk_buffer_create%s%s, not on "
                       "a stream: free it with gpuk_buffer_destroy",
                       gpuk__detached_name(name, sizeof name, s, id),
                       s->origin == GPUK__BUFFER_MANAGED ? "_managed"
                       : s->origin != GPUK__BUFFER_PLAIN ? "_mapped" : "",
                       s->owned ? "" : " (it wraps memory gpuk does not own)");
    } else if (!stream && on.id && !gpuk__stream_lookup(ctx, on.id)) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the stream %s was made on (0x%x) is destroyed, "
                       "so it cannot be freed in order there: free it with "
                       "gpuk_buffer_free_async on a stream ordered after its last use",
                       gpuk__detached_name(name, sizeof name, s, id), on.id);
    } else if ((r = gpuk__stream_resolve(fn, ctx, on, &cs)) != GPUK_OK) {
    } else if (s->ptr && (r = gpuk__enter(fn, ctx)) == GPUK_OK &&
               (r = gpuk__capturing(fn, cs, &capture)) == GPUK_OK) {
        if (capture && s->origin != GPUK__BUFFER_GRAPH)
            r = gpuk__fail_hint(fn, GPUK_ERR_CAPTURING, "free it after gpuk_graph_end_capture, or "
                                "make it in the capture", "%s was not made in a capture, and "
                                "a graph frees only its own allocations; the capture is intact",
                                gpuk__detached_name(name, sizeof name, s, id));
        else if ((cr = GPUK__DRV.cuMemFreeAsync(s->ptr, cs)) != 0)
            r = gpuk__fail_cu(fn, "cuMemFreeAsync", cr,
                              gpuk__detached_name(name, sizeof name, s, id));
    }
    return gpuk__slot_settle(fn, ctx, gpuk__kind_buffer, i, id, r);
}

GPUK__IMPL gpuk_result gpuk_buffer_free_async(gpuk_ctx* ctx, gpuk_stream stream,
                                              gpuk_buffer buffer) {
    const char* const fn = __func__;
    uint32_t i;
    GPUK__CTX_CHECK(fn, ctx);
    if (!(i = gpuk__slot_detach(ctx, &ctx->pools[gpuk__kind_buffer], buffer.id)))
        return gpuk__bad_handle(fn, "buffer", buffer.id);
    return gpuk__buffer_free_detached(fn, ctx, i, buffer.id, &stream);
}

/* The device's current memory pool (the one cuMemAllocAsync takes from: the default pool
   unless a library set another with cudaDeviceSetMemPool), asked at each call for that
   reason. */
static gpuk_result gpuk__mempool_of(const char* fn, gpuk_ctx* ctx, gpuk__cu_mempool* out) {
    gpuk__cu_result cr;
    gpuk_result r;
    *out = NULL;
    if ((r = gpuk__mempools_ready(fn, ctx)) != GPUK_OK) return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuDeviceGetMemPool(out, ctx->dev);
    return cr ? gpuk__fail_cu(fn, "cuDeviceGetMemPool", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_mempool_set_release_threshold(gpuk_ctx* ctx, uint64_t bytes) {
    const char* const fn = __func__;
    gpuk__cu_mempool pool;
    gpuk__cu_result cr;
    gpuk_result r;
    uint64_t value = bytes;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__mempool_of(fn, ctx, &pool)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemPoolSetAttribute(pool, GPUK__CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value);
    return cr ? gpuk__fail_cu(fn, "cuMemPoolSetAttribute", cr, "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD")
              : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_mempool_get_release_threshold(gpuk_ctx* ctx, uint64_t* out_bytes) {
    const char* const fn = __func__;
    gpuk__cu_mempool pool;
    gpuk__cu_result cr;
    gpuk_result r;
    uint64_t value = 0;
    if (!out_bytes) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_bytes is NULL");
    *out_bytes = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__mempool_of(fn, ctx, &pool)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemPoolGetAttribute(pool, GPUK__CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value);
    if (cr)
        return gpuk__fail_cu(fn, "cuMemPoolGetAttribute", cr, "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD");
    *out_bytes = value;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_mempool_trim(gpuk_ctx* ctx, size_t keep_bytes) {
    const char* const fn = __func__;
    gpuk__cu_mempool pool;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__mempool_of(fn, ctx, &pool)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemPoolTrimTo(pool, keep_bytes);
    return cr ? gpuk__fail_cu(fn, "cuMemPoolTrimTo", cr, NULL) : GPUK_OK;
}
