/* src/gpuk_memory.h - part of gpuk.h: buffers, copies, fills, peer copies, pinned memory. */
/* ---- >>buffer ---- */
/* A wrapped pointer of another device or CUDA context fails or corrupts memory at its first
   use, far from the cause: ask the driver whose it is. A pointer the driver does not know
   (an error other than a sticky one) is let through: gpuk cannot tell, and its use will. So is
   mapped host memory (its device is where it was allocated, yet every context may use it). */
static gpuk_result gpuk__wrap_check_ptr(const char* fn, const gpuk_ctx* ctx, gpuk_devptr p) {
    gpuk__cu_context owner = NULL;
    unsigned int type = 0;
    int ordinal = -1;
    gpuk__cu_result cr;
    cr = GPUK__DRV.cuPointerGetAttribute(&type, GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
    if (cr == 0 && type == GPUK__CU_MEMORYTYPE_HOST) return GPUK_OK;
    if (!gpuk__tolerate(fn, "cuPointerGetAttribute", cr) && gpuk__is_sticky((int)cr))
        return (gpuk_result)cr;
    cr = GPUK__DRV.cuPointerGetAttribute(&ordinal, GPUK__CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
    if (cr == 0 && ordinal != ctx->info.ordinal)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "wrapped device pointer 0x%llx is memory of device %d; this ctx is on "
                          "device %d", p, ordinal, ctx->info.ordinal);
    if (!gpuk__tolerate(fn, "cuPointerGetAttribute", cr) && gpuk__is_sticky((int)cr))
        return (gpuk_result)cr;
    cr = GPUK__DRV.cuPointerGetAttribute((void*)&owner, GPUK__CU_POINTER_ATTRIBUTE_CONTEXT, p);
    /* NULL: memory of no one context (e.g. cuMemMap'ed), usable from any on its device */
    if (cr == 0 && owner && owner != ctx->cu)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "wrapped device pointer 0x%llx belongs to another CUDA context of device "
                          "%d (gpuk uses the device's primary context)", p, ctx->info.ordinal);
    if (!gpuk__tolerate(fn, "cuPointerGetAttribute", cr) && gpuk__is_sticky((int)cr))
        return (gpuk_result)cr;
    return GPUK_OK;
}

static gpuk_buffer_desc gpuk__buffer_desc_defaults(const gpuk_buffer_desc* desc) {
    gpuk_buffer_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.bytes) d.bytes = d.data.bytes;
    return d;
}

GPUK__IMPL gpuk_buffer_desc gpuk_buffer_desc_defaults(const gpuk_buffer_desc* desc) {
    return gpuk__buffer_desc_defaults(desc);
}

/* The initial contents of a buffer or pinned block: data.bytes must fit, data.ptr must be
   there when data.bytes is not 0. */
static gpuk_result gpuk__check_data(const char* fn, const char* desc_name, gpuk_range data,
                                    size_t bytes) {
    if (data.bytes > bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s.data.bytes = %zu exceeds %s.bytes = %zu",
                          desc_name, data.bytes, desc_name, bytes);
    if (data.bytes && !data.ptr)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s.data.ptr is NULL but data.bytes is %zu",
                          desc_name, data.bytes);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_buffer_create(gpuk_ctx* ctx, const gpuk_buffer_desc* desc,
                                          gpuk_buffer* out_buffer) {
    gpuk_buffer_desc d;
    gpuk__buffer_slot* s;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    s = (gpuk__buffer_slot*)gpuk__create_begin(__func__, ctx, gpuk__kind_buffer,
                                               out_buffer ? &out_buffer->id : NULL, desc, 0,
                                               GPUK__CANARIES(desc), &r);
    if (!s) return r;
    d = gpuk__buffer_desc_defaults(desc);
    s->ptr = d.wrap;
    s->bytes = d.bytes;
    s->owned = !d.wrap;
    s->origin = GPUK__BUFFER_PLAIN;
    s->stream_id = 0;
    s->host = NULL;
    gpuk__copy_text(s->label, sizeof s->label, d.label);
    if (d.wrap && !d.bytes) {
        r = gpuk__fail(__func__, GPUK_ERR_INVALID_ARG,
                       "wrapping device pointer 0x%llx needs desc.bytes", d.wrap);
    } else if ((r = gpuk__check_data(__func__, "gpuk_buffer_desc", d.data, d.bytes)) != GPUK_OK) {
    } else if (d.wrap) {
        r = gpuk__wrap_check_ptr(__func__, ctx, d.wrap);
    } else if (d.bytes && (r = gpuk__enter(__func__, ctx)) == GPUK_OK &&
               (cr = GPUK__DRV.cuMemAlloc(&s->ptr, d.bytes)) != 0) {
        char what[80];
        if (d.label && *d.label)
            gpuk__fmt(what, sizeof what, 0, "%zu bytes for buffer '%s'", d.bytes, d.label);
        else gpuk__fmt(what, sizeof what, 0, "%zu bytes for an unlabelled buffer", d.bytes);
        s->ptr = 0;
        r = gpuk__fail_cu(__func__, "cuMemAlloc", cr, what);
    }
    if (r == GPUK_OK && d.data.bytes) {
        /* Like gpuk_buffer_write: on the legacy stream, after earlier work (a wrapped
           allocation may be in use), waited for; staged where pageable and large. */
        if ((r = gpuk__enter(__func__, ctx)) == GPUK_OK)
            r = gpuk__copy_host_sync(__func__, ctx, GPUK__HTOD, s->ptr,
                                     (void*)(uintptr_t)d.data.ptr, d.data.bytes,
                                     "uploading desc.data");
        if (r != GPUK_OK && s->owned && s->ptr && !GPUK__ATOMIC_LOAD(&gpuk__g.broken))
            GPUK__DRV.cuMemFree(s->ptr);
    }
    return gpuk__slot_end(ctx, gpuk__kind_buffer, s, r, &out_buffer->id);
}

/* gpuk_buffer_destroy's release of a cuMemAlloc'd buffer, and the ctx destroy's of every
   buffer. A stream-ordered one reaches it only in the ctx destroy, once the device is idle:
   cuMemFree then takes it back without waiting (for such memory it never waits). A graph's
   allocation exists only from a launch of the graph until its free; the driver answers
   CUDA_ERROR_INVALID_VALUE for one that does not exist now, and there is nothing to free. */
static gpuk__cu_result gpuk__buffer_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    const gpuk__buffer_slot* s = (const gpuk__buffer_slot*)slot;
    gpuk__cu_result cr;
    (void)ctx;
    /* mapped host memory (src/gpuk_hostmem.h): freed, or the caller's unregistered; a
       managed buffer is cuMemFree'd like device memory */
    if (s->origin == GPUK__BUFFER_MAPPED) {
        *out_call = "cuMemFreeHost";
        return s->host ? GPUK__DRV.cuMemFreeHost(s->host) : 0;
    }
    if (s->origin == GPUK__BUFFER_REGISTERED) {
        *out_call = "cuMemHostUnregister";
        return s->host ? GPUK__DRV.cuMemHostUnregister(s->host) : 0;
    }
    if (s->origin == GPUK__BUFFER_IPC) {
        /* opened from another process: the mapping is closed, the memory stays the
           exporter's. The close is not documented to wait for queued work that reads the
           mapping, so wait for the device first, as cuMemFree does. */
        gpuk__cu_result sync_cr;
        *out_call = "cuCtxSynchronize";
        if (s->ptr && (sync_cr = GPUK__DRV.cuCtxSynchronize()) != 0) return sync_cr;
        *out_call = "cuIpcCloseMemHandle";
        return s->ptr ? GPUK__DRV.cuIpcCloseMemHandle(s->ptr) : 0;
    }
    *out_call = "cuMemFree";
    if (!s->owned || !s->ptr) return 0;
    cr = GPUK__DRV.cuMemFree(s->ptr);
    return s->origin == GPUK__BUFFER_GRAPH && cr == GPUK__CU_ERROR_INVALID_VALUE ? 0 : cr;
}

/* A buffer made on a stream is freed in order on that stream (gpuk__buffer_free_detached,
   src/gpuk_mempool.h), as the program that made it there expects; cuMemFree would not wait
   for the work queued before. */
GPUK__IMPL gpuk_result gpuk_buffer_destroy(gpuk_ctx* ctx, gpuk_buffer buffer) {
    const char* const fn = __func__;
    uint32_t i;
    GPUK__CTX_CHECK(fn, ctx);
    if (!(i = gpuk__slot_detach(ctx, &ctx->pools[gpuk__kind_buffer], buffer.id)))
        return gpuk__bad_handle(fn, "buffer", buffer.id);
    if (gpuk__buffer_stream_ordered(
            (const gpuk__buffer_slot*)gpuk__pool_slot(&ctx->pools[gpuk__kind_buffer], i)))
        return gpuk__buffer_free_detached(fn, ctx, i, buffer.id, NULL);
    return gpuk__slot_release(fn, ctx, gpuk__kind_buffer, i, buffer.id);
}

GPUK__IMPL size_t gpuk_buffer_size(const gpuk_ctx* ctx, gpuk_buffer buffer) {
    const gpuk__buffer_slot* s = ctx ? gpuk__buffer_lookup(ctx, buffer.id) : NULL;
    return s ? s->bytes : 0;
}

GPUK__IMPL gpuk_devptr gpuk_buffer_devptr(const gpuk_ctx* ctx, gpuk_buffer buffer) {
    const gpuk__buffer_slot* s = ctx ? gpuk__buffer_lookup(ctx, buffer.id) : NULL;
    return s ? s->ptr : 0;
}

static gpuk_result gpuk__bounds_fail(const char* fn, const gpuk__buffer_slot* s, size_t off,
                                     size_t bytes) {
    char name[48];
    return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS, "offset %zu + %zu bytes exceeds %s of %zu bytes",
                      off, bytes, gpuk__buffer_name(name, sizeof name, s), s->bytes);
}

/* In debug builds, report an "async" copy that the driver will make synchronous because the
   host memory is pageable. Costs a cuPointerGetAttribute, so only when the log would show it. */
static void gpuk__check_pageable(const char* fn, const void* host) {
#if GPUK_DEBUG
    unsigned int type = 0;
    if (!gpuk__log_wants(GPUK_LOG_DEBUG)) return;
    if (!gpuk__tolerate(fn, "cuPointerGetAttribute",
                        GPUK__DRV.cuPointerGetAttribute(&type,
                                                        GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                        (gpuk_devptr)(uintptr_t)host))) {
        char msg[160];
        gpuk__fmt(msg, sizeof msg, 0, "%s: host memory %x is pageable, so the driver copies it "
                  "synchronously; use gpuk_pinned memory for a real async copy", fn,
                  (unsigned)(uintptr_t)host);
        gpuk__log(GPUK_LOG_DEBUG, 0, msg);
    }
#else
    (void)fn;
    (void)host;
#endif
}

/* Every buffer copy: validate, then one async driver call on stream (of ctx, which owns dst);
   wait when sync. The source buffer is looked up in src_ctx, ctx itself for every copy so
   far: a copy between the buffers of two ctxs (devices) takes the same path. A sync
   (stream-less) copy runs on the legacy stream, so that it starts after the work queued
   earlier on the ctx default stream and on every blocking stream, like cudaMemcpy; stream is
   then only validated. */
static gpuk_result gpuk__copy(const char* fn, gpuk_ctx* ctx, gpuk_stream stream, int sync,
                              gpuk__copy_dir dir, uint32_t dst_id, size_t dst_off, void* host,
                              const gpuk_ctx* src_ctx, uint32_t src_id, size_t src_off,
                              size_t bytes) {
    const gpuk__buffer_slot* d = NULL;
    const gpuk__buffer_slot* s = NULL;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    const char* cu_fn;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (dir != GPUK__DTOH && !(d = gpuk__buffer_lookup(ctx, dst_id)))
        return gpuk__bad_handle(fn, "dst buffer", dst_id);
    if (dir != GPUK__HTOD && (!src_ctx || !(s = gpuk__buffer_lookup(src_ctx, src_id))))
        return gpuk__bad_handle(fn, "src buffer", src_id);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if (d && !gpuk__in_bounds(dst_off, bytes, d->bytes))
        return gpuk__bounds_fail(fn, d, dst_off, bytes);
    if (s && !gpuk__in_bounds(src_off, bytes, s->bytes))
        return gpuk__bounds_fail(fn, s, src_off, bytes);
    if (bytes == 0) return GPUK_OK;
    /* cuMemcpyDtoD promises no memmove semantics; compared as addresses, so that wrapped
       views of one allocation count too */
    if (dir == GPUK__DTOD && d->ptr + dst_off < s->ptr + src_off + bytes &&
        s->ptr + src_off < d->ptr + dst_off + bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "the source ('%s' + %zu) and destination ('%s' + %zu) of %zu bytes "
                          "overlap; the driver's device copy does not allow that (copy through a "
                          "second buffer)", s->label, src_off, d->label, dst_off, bytes);
    if (sync) cs = GPUK__CU_STREAM_LEGACY;
    if (dir != GPUK__DTOD && !host)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is NULL",
                          dir == GPUK__HTOD ? "src" : "dst");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (sync && dir != GPUK__DTOD)
        return gpuk__copy_host_sync(fn, ctx, dir,
                                    dir == GPUK__HTOD ? d->ptr + dst_off : s->ptr + src_off,
                                    host, bytes, NULL);
    if (dir == GPUK__HTOD) {
        cu_fn = "cuMemcpyHtoDAsync";
        gpuk__check_pageable(fn, host);
        cr = GPUK__DRV.cuMemcpyHtoDAsync(d->ptr + dst_off, host, bytes, cs);
    } else if (dir == GPUK__DTOH) {
        cu_fn = "cuMemcpyDtoHAsync";
        gpuk__check_pageable(fn, host);
        cr = GPUK__DRV.cuMemcpyDtoHAsync(host, s->ptr + src_off, bytes, cs);
    } else if (src_ctx != ctx) {
        /* between two ctxs: the driver copies peer to peer where it can, else through the host */
        if (sync) {
            cu_fn = "cuMemcpyPeer";
            cr = GPUK__DRV.cuMemcpyPeer(d->ptr + dst_off, ctx->cu, s->ptr + src_off,
                                        src_ctx->cu, bytes);
            return cr ? gpuk__fail_cu(fn, cu_fn, cr, NULL) : GPUK_OK;
        }
        cu_fn = "cuMemcpyPeerAsync";
        cr = GPUK__DRV.cuMemcpyPeerAsync(d->ptr + dst_off, ctx->cu, s->ptr + src_off,
                                         src_ctx->cu, bytes, cs);
    } else {
        cu_fn = "cuMemcpyDtoDAsync";
        cr = GPUK__DRV.cuMemcpyDtoDAsync(d->ptr + dst_off, s->ptr + src_off, bytes, cs);
    }
    if (cr) return gpuk__fail_cu(fn, cu_fn, cr, NULL);
    if (sync && (cr = GPUK__DRV.cuStreamSynchronize(cs)) != 0)
        return gpuk__fail_cu(fn, "cuStreamSynchronize", cr, NULL);
    return GPUK_OK;
}

static const gpuk_stream gpuk__default_stream = { 0 };

GPUK__IMPL gpuk_result gpuk_buffer_write(gpuk_ctx* ctx, gpuk_buffer dst, size_t dst_offset,
                                         const void* src, size_t bytes) {
    return gpuk__copy(__func__, ctx, gpuk__default_stream, 1, GPUK__HTOD, dst.id,
                      dst_offset, (void*)(uintptr_t)src, ctx, 0, 0, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_read(gpuk_ctx* ctx, gpuk_buffer src, size_t src_offset,
                                        void* dst, size_t bytes) {
    return gpuk__copy(__func__, ctx, gpuk__default_stream, 1, GPUK__DTOH, 0, 0, dst, ctx,
                      src.id, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_copy(gpuk_ctx* ctx, gpuk_buffer dst, size_t dst_offset,
                                        gpuk_buffer src, size_t src_offset, size_t bytes) {
    return gpuk__copy(__func__, ctx, gpuk__default_stream, 1, GPUK__DTOD, dst.id,
                      dst_offset, NULL, ctx, src.id, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_download(gpuk_ctx* ctx, gpuk_buffer src, void** out_ptr,
                                            size_t* out_bytes) {
    const char* const fn = __func__;
    const gpuk__buffer_slot* s;
    size_t bytes;
    void* host;
    gpuk_result r;
    if (out_ptr) *out_ptr = NULL;
    if (out_bytes) *out_bytes = 0;
    if (!out_ptr || !out_bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ptr or out_bytes is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(s = gpuk__buffer_lookup(ctx, src.id))) return gpuk__bad_handle(fn, "src buffer", src.id);
    bytes = s->bytes;
    if (bytes == 0) return GPUK_OK;
    if (!(host = gpuk__alloc(bytes))) {
        char name[48];
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC,
                          "cannot allocate %zu bytes of host memory for %s", bytes,
                          gpuk__buffer_name(name, sizeof name, s));
    }
    r = gpuk__copy(fn, ctx, gpuk__default_stream, 1, GPUK__DTOH, 0, 0, host, ctx, src.id, 0, bytes);
    if (r != GPUK_OK) {
        gpuk__free(host);
        return r;
    }
    *out_ptr = host;
    *out_bytes = bytes;
    return GPUK_OK;
}

GPUK__IMPL void gpuk_host_free(void* ptr) { gpuk__free(ptr); }

GPUK__IMPL gpuk_result gpuk_buffer_write_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                               size_t dst_offset, const void* src, size_t bytes) {
    return gpuk__copy(__func__, ctx, stream, 0, GPUK__HTOD, dst.id, dst_offset,
                      (void*)(uintptr_t)src, ctx, 0, 0, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_read_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer src,
                                              size_t src_offset, void* dst, size_t bytes) {
    return gpuk__copy(__func__, ctx, stream, 0, GPUK__DTOH, 0, 0, dst, ctx, src.id,
                      src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_copy_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                              size_t dst_offset, gpuk_buffer src,
                                              size_t src_offset, size_t bytes) {
    return gpuk__copy(__func__, ctx, stream, 0, GPUK__DTOD, dst.id, dst_offset,
                      NULL, ctx, src.id, src_offset, bytes);
}

/* ---- >>peer ---- */
/* The ctx pair of a call between two ctxs: both non-NULL and live (a destroyed ctx is refused
   by address, not dereferenced), and the driver has the peer rows. */
static gpuk_result gpuk__ctx_pair(const char* fn, const gpuk_ctx* a, const char* a_name,
                                  const gpuk_ctx* b, const char* b_name) {
    const gpuk_ctx* c;
    int live_a = 0, live_b = 0;
    if (!a) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is NULL", a_name);
    if (!b) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is NULL", b_name);
    gpuk__mutex_lock(&gpuk__lock);
    for (c = gpuk__g.live_list; c; c = c->next_live) {
        if (c == a) live_a = 1;
        if (c == b) live_b = 1;
    }
    gpuk__mutex_unlock(&gpuk__lock);
    if (!live_a)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is not a live ctx (destroyed?)", a_name);
    if (!live_b)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is not a live ctx (destroyed?)", b_name);
    if (!(gpuk__g.features & GPUK_FEATURE_PEER) || !GPUK__DRV.cuMemcpyPeer ||
        !GPUK__DRV.cuDeviceCanAccessPeer || !GPUK__DRV.cuCtxEnablePeerAccess)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "the driver lacks cuMemcpyPeer, "
                          "cuMemcpyPeerAsync, cuDeviceCanAccessPeer or cuCtxEnablePeerAccess");
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_can_access_peer(int device, int peer_device, bool* out_can) {
    const char* const fn = __func__;
    gpuk__cu_device d = 0, p = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    int can = 0;
    if (!out_can) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_can is NULL");
    *out_can = false;
    GPUK__READY(fn);
    if (!GPUK__DRV.cuDeviceCanAccessPeer)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "the driver lacks cuDeviceCanAccessPeer");
    if (device == peer_device)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "device and peer_device are both %d (a device "
                          "always reaches its own memory)", device);
    if ((r = gpuk__device_get(fn, device, &d)) != GPUK_OK) return r;
    if ((r = gpuk__device_get(fn, peer_device, &p)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuDeviceCanAccessPeer(&can, d, p)) != 0)
        return gpuk__fail_cu(fn, "cuDeviceCanAccessPeer", cr, NULL);
    *out_can = can != 0;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_ctx_enable_peer_access(gpuk_ctx* ctx, gpuk_ctx* peer) {
    const char* const fn = __func__;
    gpuk__cu_result cr;
    gpuk_result r;
    int can = 0;
    GPUK__ALIVE(fn);
    if ((r = gpuk__ctx_pair(fn, ctx, "ctx", peer, "peer")) != GPUK_OK) return r;
    if (ctx->info.ordinal == peer->info.ordinal)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "ctx and peer are both on device %d (one primary context): no peer "
                          "access is needed", ctx->info.ordinal);
    if ((cr = GPUK__DRV.cuDeviceCanAccessPeer(&can, ctx->dev, peer->dev)) != 0)
        return gpuk__fail_cu(fn, "cuDeviceCanAccessPeer", cr, NULL);
    if (!can)
        return gpuk__fail(fn, (int)GPUK__CU_ERROR_PEER_ACCESS_UNSUPPORTED,
                          "device %d cannot access device %d's memory directly (no peer path "
                          "between them); gpuk_buffer_copy_peer still works, staged through the "
                          "host by the driver", ctx->info.ordinal, peer->info.ordinal);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuCtxEnablePeerAccess(peer->cu, 0);
    if (cr == GPUK__CU_ERROR_PEER_ACCESS_ALREADY_ENABLED) return GPUK_OK;
    return cr ? gpuk__fail_cu(fn, "cuCtxEnablePeerAccess", cr, NULL) : GPUK_OK;
}

/* The head of both peer copies: the pair, then the ordinary copy's checks. */
static gpuk_result gpuk__copy_peer(const char* fn, gpuk_ctx* dst_ctx, gpuk_stream stream, int sync,
                                   gpuk_buffer dst, size_t dst_offset, gpuk_ctx* src_ctx,
                                   gpuk_buffer src, size_t src_offset, size_t bytes) {
    gpuk_result r;
    GPUK__ALIVE(fn);
    if ((r = gpuk__ctx_pair(fn, dst_ctx, "dst_ctx", src_ctx, "src_ctx")) != GPUK_OK) return r;
    return gpuk__copy(fn, dst_ctx, stream, sync, GPUK__DTOD, dst.id, dst_offset, NULL, src_ctx,
                      src.id, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_copy_peer(gpuk_ctx* dst_ctx, gpuk_buffer dst, size_t dst_offset,
                                             gpuk_ctx* src_ctx, gpuk_buffer src, size_t src_offset,
                                             size_t bytes) {
    return gpuk__copy_peer(__func__, dst_ctx, gpuk__default_stream, 1, dst, dst_offset, src_ctx,
                           src, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_copy_peer_async(gpuk_ctx* dst_ctx, gpuk_stream stream,
                                                   gpuk_buffer dst, size_t dst_offset,
                                                   gpuk_ctx* src_ctx, gpuk_buffer src,
                                                   size_t src_offset, size_t bytes) {
    return gpuk__copy_peer(__func__, dst_ctx, stream, 0, dst, dst_offset, src_ctx, src,
                           src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_memset(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                          size_t byte_offset, uint32_t value, uint32_t elem_bytes,
                                          size_t count) {
    const char* const fn = __func__;
    const gpuk__buffer_slot* d;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(d = gpuk__buffer_lookup(ctx, dst.id))) return gpuk__bad_handle(fn, "dst buffer", dst.id);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "elem_bytes is %u; it must be 1, 2 or 4", elem_bytes);
    if (elem_bytes < 4 && value >> (8 * elem_bytes))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "value 0x%x does not fit in %u bytes",
                          value, elem_bytes);
    if (count > (size_t)-1 / elem_bytes ||
        !gpuk__in_bounds(byte_offset, count * elem_bytes, d->bytes)) {
        char name[48];
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS, "offset %zu + %zu elements of %u bytes "
                          "exceeds %s of %zu bytes", byte_offset, count, elem_bytes,
                          gpuk__buffer_name(name, sizeof name, d), d->bytes);
    }
    if ((d->ptr + byte_offset) % elem_bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "address 0x%llx is not aligned to %u bytes",
                          d->ptr + byte_offset, elem_bytes);
    if (count == 0) return GPUK_OK;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (elem_bytes == 1)
        cr = GPUK__DRV.cuMemsetD8Async(d->ptr + byte_offset, (unsigned char)value, count, cs);
    else if (elem_bytes == 2)
        cr = GPUK__DRV.cuMemsetD16Async(d->ptr + byte_offset, (unsigned short)value, count, cs);
    else cr = GPUK__DRV.cuMemsetD32Async(d->ptr + byte_offset, value, count, cs);
    return cr ? gpuk__fail_cu(fn, "cuMemsetD*Async", cr, NULL) : GPUK_OK;
}

/* ---- >>pinned ---- */
static gpuk_pinned_desc gpuk__pinned_desc_defaults(const gpuk_pinned_desc* desc) {
    gpuk_pinned_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.bytes) d.bytes = d.data.bytes;
    return d;
}

GPUK__IMPL gpuk_pinned_desc gpuk_pinned_desc_defaults(const gpuk_pinned_desc* desc) {
    return gpuk__pinned_desc_defaults(desc);
}

GPUK__IMPL gpuk_result gpuk_pinned_create(gpuk_ctx* ctx, const gpuk_pinned_desc* desc,
                                          gpuk_pinned* out_pinned) {
    gpuk_pinned_desc d;
    gpuk__pinned_slot* s;
    gpuk__cu_result cr = 0;
    gpuk_result r = GPUK_OK;
    s = (gpuk__pinned_slot*)gpuk__create_begin(__func__, ctx, gpuk__kind_pinned,
                                               out_pinned ? &out_pinned->id : NULL, desc, 0,
                                               GPUK__CANARIES(desc), &r);
    if (!s) return r;
    d = gpuk__pinned_desc_defaults(desc);
    s->ptr = d.host_ptr;
    s->bytes = d.bytes;
    s->registered = d.host_ptr != NULL;
    gpuk__copy_text(s->label, sizeof s->label, d.label);
    if (s->registered && !d.bytes) {
        r = gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "registering host memory needs desc.bytes");
    } else if ((r = gpuk__check_data(__func__, "gpuk_pinned_desc", d.data, d.bytes)) != GPUK_OK) {
    } else if (d.bytes && (r = gpuk__enter(__func__, ctx)) == GPUK_OK) {
        /* PORTABLE: the memory counts as pinned for every context, not just this one. */
        if (s->registered)
            cr = GPUK__DRV.cuMemHostRegister(s->ptr, d.bytes, GPUK__CU_MEMHOSTREGISTER_PORTABLE);
        else cr = GPUK__DRV.cuMemHostAlloc(&s->ptr, d.bytes, GPUK__CU_MEMHOSTALLOC_PORTABLE);
        if (cr) {
            if (!s->registered) s->ptr = NULL;
            r = gpuk__fail_cu(__func__,
                              s->registered ? "cuMemHostRegister" : "cuMemHostAlloc", cr, NULL);
        }
    }
    /* Host memory: a plain copy (memmove: data may lie inside registered host_ptr memory). */
    if (r == GPUK_OK && d.data.bytes) memmove(s->ptr, d.data.ptr, d.data.bytes);
    return gpuk__slot_end(ctx, gpuk__kind_pinned, s, r, &out_pinned->id);
}

static gpuk__cu_result gpuk__pinned_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    const gpuk__pinned_slot* s = (const gpuk__pinned_slot*)slot;
    (void)ctx;
    *out_call = s->registered ? "cuMemHostUnregister" : "cuMemFreeHost";
    if (!s->ptr) return 0;
    return s->registered ? GPUK__DRV.cuMemHostUnregister(s->ptr) : GPUK__DRV.cuMemFreeHost(s->ptr);
}

GPUK__IMPL gpuk_result gpuk_pinned_destroy(gpuk_ctx* ctx, gpuk_pinned pinned) {
    return gpuk__handle_destroy(__func__, ctx, gpuk__kind_pinned, pinned.id);
}

GPUK__IMPL void* gpuk_pinned_ptr(const gpuk_ctx* ctx, gpuk_pinned pinned) {
    const gpuk__pinned_slot* s = ctx ? gpuk__pinned_lookup(ctx, pinned.id) : NULL;
    return s ? s->ptr : NULL;
}

GPUK__IMPL size_t gpuk_pinned_size(const gpuk_ctx* ctx, gpuk_pinned pinned) {
    const gpuk__pinned_slot* s = ctx ? gpuk__pinned_lookup(ctx, pinned.id) : NULL;
    return s ? s->bytes : 0;
}
