/* src/gpuk_hostmem.h - part of gpuk.h: zero-copy (mapped host) and managed buffers. */
/* ---- >>hostmem ---- */
/* Mapped and managed buffers are slots of the buffer pool like the others (origin MAPPED,
   REGISTERED or MANAGED, the CPU's pointer in host), so every call that takes a buffer takes
   them, checked the same way, and gpuk__buffer_release (src/gpuk_memory.h) gives them back.
   What the device can do comes from the ctx's gpuk_device_info, asked once at ctx create, so
   a refusal costs no driver call. */

/* "N bytes for buffer 'label'" in a failed allocation's text. */
static const char* gpuk__alloc_what(char* buf, size_t cap, size_t bytes, const char* label) {
    if (label[0]) gpuk__fmt(buf, cap, 0, "%zu bytes for buffer '%s'", bytes, label);
    else gpuk__fmt(buf, cap, 0, "%zu bytes for an unlabelled buffer", bytes);
    return buf;
}

GPUK__IMPL gpuk_result gpuk_buffer_create_mapped(gpuk_ctx* ctx, const gpuk_pinned_desc* desc,
                                                 gpuk_buffer* out_buffer) {
    const char* const fn = __func__;
    gpuk_pinned_desc d;
    gpuk__buffer_slot* s;
    gpuk__cu_result cr = 0;
    const char* call = "cuMemHostAlloc";
    void* host = NULL;
    gpuk_result r = GPUK_OK;
    s = (gpuk__buffer_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_buffer,
                                               out_buffer ? &out_buffer->id : NULL, desc, 0,
                                               GPUK__CANARIES(desc), &r);
    if (!s) return r;
    d = gpuk__pinned_desc_defaults(desc);
    s->ptr = 0;
    s->bytes = d.bytes;
    s->host = NULL;
    s->owned = d.host_ptr == NULL;
    s->origin = d.host_ptr ? GPUK__BUFFER_REGISTERED : GPUK__BUFFER_MAPPED;
    s->stream_id = 0;
    gpuk__copy_text(s->label, sizeof s->label, d.label);
    if (d.host_ptr && !d.bytes) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "registering host memory needs desc.bytes");
    } else if ((r = gpuk__check_data(fn, "gpuk_pinned_desc", d.data, d.bytes)) != GPUK_OK ||
               !d.bytes) { /* refused, or an empty buffer: nothing to allocate */
    } else if (!GPUK__DRV.cuMemHostGetDevicePointer) {
        r = gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "the driver lacks cuMemHostGetDevicePointer");
    } else if (!ctx->info.can_map_host_memory) {
        r = gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "device %d (%s) cannot map host memory "
                       "(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0): copy through a "
                       "gpuk_buffer_create buffer instead", ctx->info.ordinal, ctx->info.name);
    } else if ((r = gpuk__enter(fn, ctx)) == GPUK_OK) {
        /* PORTABLE: pinned and mapped for every context, as gpuk_pinned's memory is */
        if (d.host_ptr) {
            call = "cuMemHostRegister";
            cr = GPUK__DRV.cuMemHostRegister(d.host_ptr, d.bytes,
                                             GPUK__CU_MEMHOSTREGISTER_DEVICEMAP |
                                                 GPUK__CU_MEMHOSTREGISTER_PORTABLE);
            if (!cr) host = d.host_ptr;
        } else {
            cr = GPUK__DRV.cuMemHostAlloc(&host, d.bytes, GPUK__CU_MEMHOSTALLOC_DEVICEMAP |
                                                              GPUK__CU_MEMHOSTALLOC_PORTABLE);
            if (cr) host = NULL;
        }
        /* the device's address of it: the host address itself where the device uses the
           host's page tables, another one where it does not (registered memory, some GPUs) */
        if (!cr) {
            call = "cuMemHostGetDevicePointer";
            cr = GPUK__DRV.cuMemHostGetDevicePointer(&s->ptr, host, 0);
        }
        if (cr) {
            char what[80];
            r = gpuk__fail_cu(fn, call, cr, gpuk__alloc_what(what, sizeof what, d.bytes, s->label));
            if (host && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
                if (d.host_ptr) GPUK__DRV.cuMemHostUnregister(host);
                else GPUK__DRV.cuMemFreeHost(host);
            }
            s->ptr = 0;
        } else {
            s->host = host;
        }
    }
    /* host memory: a plain copy (memmove: data may lie inside registered host_ptr memory) */
    if (r == GPUK_OK && d.data.bytes) memmove(s->host, d.data.ptr, d.data.bytes);
    return gpuk__slot_end(ctx, gpuk__kind_buffer, s, r, &out_buffer->id);
}

GPUK__IMPL gpuk_result gpuk_buffer_create_managed(gpuk_ctx* ctx, const gpuk_buffer_desc* desc,
                                                  gpuk_buffer* out_buffer) {
    const char* const fn = __func__;
    gpuk_buffer_desc d;
    gpuk__buffer_slot* s;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    s = (gpuk__buffer_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_buffer,
                                               out_buffer ? &out_buffer->id : NULL, desc, 0,
                                               GPUK__CANARIES(desc), &r);
    if (!s) return r;
    d = gpuk__buffer_desc_defaults(desc);
    s->ptr = 0;
    s->bytes = d.bytes;
    s->host = NULL;
    s->owned = true;
    s->origin = GPUK__BUFFER_MANAGED;
    s->stream_id = 0;
    gpuk__copy_text(s->label, sizeof s->label, d.label);
    if (d.wrap) {
        r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.wrap is set: a managed buffer is memory "
                       "of the driver's; wrap memory of your own with gpuk_buffer_create");
    } else if ((r = gpuk__check_data(fn, "gpuk_buffer_desc", d.data, d.bytes)) != GPUK_OK ||
               !d.bytes) { /* refused, or an empty buffer: nothing to allocate */
    } else if (!GPUK__DRV.cuMemAllocManaged) {
        r = gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "the driver lacks cuMemAllocManaged");
    } else if (!ctx->info.managed_memory) {
        r = gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "device %d (%s) has no managed memory "
                       "(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0): use gpuk_buffer_create and "
                       "copies, or gpuk_buffer_create_mapped", ctx->info.ordinal, ctx->info.name);
    } else if ((r = gpuk__enter(fn, ctx)) == GPUK_OK) {
        cr = GPUK__DRV.cuMemAllocManaged(&s->ptr, d.bytes, GPUK__CU_MEM_ATTACH_GLOBAL);
        if (cr) {
            char what[80];
            s->ptr = 0;
            r = gpuk__fail_cu(fn, "cuMemAllocManaged", cr,
                              gpuk__alloc_what(what, sizeof what, d.bytes, s->label));
        } else {
            s->host = (void*)(uintptr_t)s->ptr;
        }
    }
    /* A driver copy, not a memcpy: without concurrent managed access the CPU must not touch
       managed memory while a kernel of the device runs, and another thread's may. */
    if (r == GPUK_OK && d.data.bytes) {
        r = gpuk__copy_host_sync(fn, ctx, GPUK__HTOD, s->ptr, (void*)(uintptr_t)d.data.ptr,
                                 d.data.bytes, "uploading desc.data");
        if (r != GPUK_OK && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuMemFree(s->ptr);
    }
    return gpuk__slot_end(ctx, gpuk__kind_buffer, s, r, &out_buffer->id);
}

GPUK__IMPL void* gpuk_buffer_host_ptr(const gpuk_ctx* ctx, gpuk_buffer buffer) {
    const gpuk__buffer_slot* s = ctx ? gpuk__buffer_lookup(ctx, buffer.id) : NULL;
    return s ? s->host : NULL;
}

/* The head of prefetch and advice: a live managed buffer of ctx, the range inside it. */
static gpuk_result gpuk__managed_range(const char* fn, gpuk_ctx* ctx, gpuk_buffer buffer,
                                       size_t offset, size_t bytes,
                                       const gpuk__buffer_slot** out) {
    const gpuk__buffer_slot* s;
    char name[48];
    *out = NULL;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(s = gpuk__buffer_lookup(ctx, buffer.id)))
        return gpuk__bad_handle(fn, "buffer", buffer.id);
    if (s->origin != GPUK__BUFFER_MANAGED)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is not managed memory (prefetch and advice "
                          "are for buffers of gpuk_buffer_create_managed)",
                          gpuk__buffer_name(name, sizeof name, s));
    if (!gpuk__in_bounds(offset, bytes, s->bytes)) return gpuk__bounds_fail(fn, s, offset, bytes);
    *out = s;
    return GPUK_OK;
}

/* device as the driver names it: an ordinal's CUdevice (the ctx's own without a driver call),
   CU_DEVICE_CPU for GPUK_DEVICE_HOST. */
static gpuk_result gpuk__place(const char* fn, const gpuk_ctx* ctx, int device,
                               gpuk__cu_device* out) {
    if (device == GPUK_DEVICE_HOST) {
        *out = GPUK__CU_DEVICE_CPU;
        return GPUK_OK;
    }
    if (device == ctx->info.ordinal) {
        *out = ctx->dev;
        return GPUK_OK;
    }
    if (device < 0)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "device %d is neither a device ordinal nor "
                          "GPUK_DEVICE_HOST (-1)", device);
    return gpuk__device_get(fn, device, out);
}

GPUK__IMPL gpuk_result gpuk_buffer_prefetch(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer buffer,
                                            size_t offset, size_t bytes, int device) {
    const char* const fn = __func__;
    const gpuk__buffer_slot* s;
    gpuk__cu_stream cs;
    gpuk__cu_device dev = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if ((r = gpuk__managed_range(fn, ctx, buffer, offset, bytes, &s)) != GPUK_OK) return r;
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if (!GPUK__DRV.cuMemPrefetchAsync)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "the driver lacks cuMemPrefetchAsync");
    /* the driver refuses a prefetch there too; gpuk says why */
    if (!ctx->info.concurrent_managed_access)
        return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "device %d (%s) has no concurrent managed "
                          "access (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0): the "
                          "driver places managed memory itself at each launch and sync, so "
                          "there is nothing to prefetch", ctx->info.ordinal, ctx->info.name);
    if ((r = gpuk__place(fn, ctx, device, &dev)) != GPUK_OK) return r;
    if (bytes == 0) return GPUK_OK;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemPrefetchAsync(s->ptr + offset, bytes, dev, cs);
    return cr ? gpuk__fail_cu(fn, "cuMemPrefetchAsync", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_buffer_advise(gpuk_ctx* ctx, gpuk_buffer buffer, size_t offset,
                                          size_t bytes, gpuk_advice advice, int device) {
    const char* const fn = __func__;
    const gpuk__buffer_slot* s;
    gpuk__cu_device dev = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if ((r = gpuk__managed_range(fn, ctx, buffer, offset, bytes, &s)) != GPUK_OK) return r;
    if ((int)advice <= (int)GPUK_ADVICE_DEFAULT || (int)advice >= (int)GPUK_ADVICE_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "advice %d is none of GPUK_ADVICE_SET_READ_"
                          "MOSTLY (1) .. GPUK_ADVICE_UNSET_ACCESSED_BY (6)", (int)advice);
    if (!GPUK__DRV.cuMemAdvise)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "the driver lacks cuMemAdvise");
    /* read-mostly is for every processor: the driver ignores the device */
    if (advice == GPUK_ADVICE_SET_READ_MOSTLY || advice == GPUK_ADVICE_UNSET_READ_MOSTLY)
        dev = ctx->dev;
    else if ((r = gpuk__place(fn, ctx, device, &dev)) != GPUK_OK)
        return r;
    if (bytes == 0) return GPUK_OK;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemAdvise(s->ptr + offset, bytes, (unsigned)advice, dev);
    return cr ? gpuk__fail_cu(fn, "cuMemAdvise", cr, NULL) : GPUK_OK;
}
