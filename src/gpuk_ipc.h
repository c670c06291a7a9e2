/* src/gpuk_ipc.h - part of gpuk.h: buffers and events shared with other processes (CUDA IPC). */
/* ---- >>ipc ---- */
#include <time.h> /* the number a process draws for its handles */
/* A gpuk_ipc_handle's bytes: this layout, in the machine's own byte order (a handle never
   leaves the machine). The magic and the version refuse bytes that are no gpuk handle, or one
   of another gpuk layout, before the driver sees them; the exporter's identity refuses a
   handle opened in the process that exported it, which the driver answers only with
   CUDA_ERROR_INVALID_CONTEXT. */
enum { GPUK__IPC_MAGIC = 0x4b555047u /* "GPUK" */, GPUK__IPC_VERSION = 1u };
enum { GPUK__IPC_BUFFER = 1u, GPUK__IPC_EVENT = 2u };
typedef struct gpuk__ipc_layout {
    uint32_t magic;
    uint16_t version;
    uint16_t kind;                 /* GPUK__IPC_BUFFER or GPUK__IPC_EVENT */
    uint64_t bytes;                /* a buffer's size */
    uint64_t pid;                  /* the exporting process, and a number it drew: two */
    uint64_t nonce;                /*   processes of one pid in two PID namespaces differ */
    char driver[64];               /* CUipcMemHandle or CUipcEventHandle */
    char label[24];                /* a buffer's label, for the importer's error texts */
} gpuk__ipc_layout;
typedef char gpuk__ipc_layout_fits[sizeof(gpuk__ipc_layout) <= GPUK_IPC_HANDLE_BYTES ? 1 : -1];

/* Tests define it (a long) to play two processes in one. */
#if !defined(GPUK__IPC_PROCESS_ID)
#define GPUK__IPC_PROCESS_ID() gpuk__process_id()
#endif

/* This process's identity in handles: its pid and a number drawn once per pid (again in a
   fork child, which has a new pid), under gpuk__lock. Time, clock and addresses (ASLR) mixed
   by splitmix64: no two processes that share a pid should draw the same. */
static uint64_t gpuk__ipc_nonce;
static long gpuk__ipc_nonce_pid;
static void gpuk__ipc_self(uint64_t* out_pid, uint64_t* out_nonce) {
    long pid = GPUK__IPC_PROCESS_ID();
    gpuk__mutex_lock(&gpuk__lock);
    if (!gpuk__ipc_nonce || gpuk__ipc_nonce_pid != pid) {
        uint64_t z = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^
                     ((uint64_t)(uintptr_t)&z << 7) ^ ((uint64_t)(uintptr_t)&gpuk__g >> 3) ^
                     ((uint64_t)pid << 40);
        z += 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        gpuk__ipc_nonce = z ? z : 1u;
        gpuk__ipc_nonce_pid = pid;
    }
    *out_pid = (uint64_t)pid;
    *out_nonce = gpuk__ipc_nonce;
    gpuk__mutex_unlock(&gpuk__lock);
}

#define GPUK__IPC_MEM_ROWS(X) X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle)
#define GPUK__IPC_EVENT_ROWS(X) X(cuIpcGetEventHandle) X(cuIpcOpenEventHandle)

/* The driver has the entry points of the kind (a driver without one gets its name; the
   memory's open is CUDA 11.0's _v2) and the device can share them: unified addressing for
   memory, as the driver documents; CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED for events, where
   the driver knows that attribute (CUDA 12; older ones answer CUDA_ERROR_INVALID_VALUE and
   the entry point decides). Asked at each export and import: they are rare calls. */
static gpuk_result gpuk__ipc_ready(const char* fn, gpuk_ctx* ctx, int events) {
    int has = 0;
    gpuk__cu_result cr;
#define GPUK__X_IPC_ROW(name) \
    if (!GPUK__DRV.name) \
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, \
                          "sharing %s between processes needs a driver for CUDA %s or newer; " \
                          "this one (%d.%d) lacks " #name, events ? "events" : "buffers", \
                          events ? "4.1" : "11.0", gpuk__g.driver_version / 1000, \
                          gpuk__g.driver_version % 1000 / 10);
    if (events) {
        GPUK__IPC_EVENT_ROWS(GPUK__X_IPC_ROW)
    } else {
        GPUK__IPC_MEM_ROWS(GPUK__X_IPC_ROW)
    }
#undef GPUK__X_IPC_ROW
    cr = GPUK__DRV.cuDeviceGetAttribute(&has, events ?
                                        (unsigned)GPUK__CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED :
                                        (unsigned)GPUK__CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
                                        ctx->dev);
    if (events && cr == GPUK__CU_ERROR_INVALID_VALUE) return GPUK_OK;
    if (cr) return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr, events ?
                                 "CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED" :
                                 "CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING");
    if (!has)
        return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "device %d (%s) cannot share %s between "
                          "processes (%s is 0): CUDA IPC is not available on this platform "
                          "(Windows under WDDM, some Jetson boards); share through host memory",
                          ctx->info.ordinal, ctx->info.name, events ? "events" : "buffers",
                          events ? "CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED" :
                                   "CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING");
    return GPUK_OK;
}

/* A failed IPC entry point, with what the code means here. */
static gpuk_result gpuk__ipc_fail_cu(const char* fn, const char* cu_fn, gpuk__cu_result cr,
                                     const char* what) {
    if (cr == GPUK__CU_ERROR_NOT_SUPPORTED)
        return gpuk__fail_hint(fn, (int)cr, "CUDA IPC is not available on this platform "
                               "(Windows under WDDM, some Jetson boards): share through host "
                               "memory", "%s: CUDA_ERROR_NOT_SUPPORTED (801): %s", cu_fn, what);
    if (cr == GPUK__CU_ERROR_INVALID_CONTEXT && strncmp(cu_fn, "cuIpcOpen", 9) == 0)
        return gpuk__fail_hint(fn, (int)cr, "the driver refuses a handle in the process that "
                               "exported it, and a second CUDA context of one device opening "
                               "the same export", "%s: CUDA_ERROR_INVALID_CONTEXT (201): %s",
                               cu_fn, what);
    return gpuk__fail_cu(fn, cu_fn, cr, what);
}

/* The handle's bytes as its layout, checked: a gpuk handle of this layout, of kind, not of
   this process's own export. */
static gpuk_result gpuk__ipc_read(const char* fn, const gpuk_ipc_handle* handle, unsigned kind,
                                  gpuk__ipc_layout* out) {
    uint64_t pid, nonce;
    memcpy(out, handle->bytes, sizeof *out);
    out->label[sizeof out->label - 1] = 0;
    if (out->magic != GPUK__IPC_MAGIC)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle holds no gpuk IPC handle (fill it "
                          "with gpuk_buffer_export or gpuk_event_export and send its "
                          "GPUK_IPC_HANDLE_BYTES bytes unchanged)");
    if (out->version != GPUK__IPC_VERSION)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle is of gpuk's IPC layout %u; this "
                          "gpuk reads layout %u (build both programs with one gpuk.h)",
                          (unsigned)out->version, (unsigned)GPUK__IPC_VERSION);
    if (out->kind != kind)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle is %s's, not %s's",
                          out->kind == GPUK__IPC_EVENT ? "an event" : "a buffer",
                          kind == GPUK__IPC_EVENT ? "an event" : "a buffer");
    gpuk__ipc_self(&pid, &nonce);
    if (out->pid == pid && out->nonce == nonce)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle was exported by this process, and "
                          "the driver opens a handle only in other processes: use the %s "
                          "itself", kind == GPUK__IPC_EVENT ? "event" : "buffer");
    return GPUK_OK;
}

/* A handle's layout of kind, all else zero; sealed with this process's identity into out */
static void gpuk__ipc_begin(gpuk__ipc_layout* h, uint16_t kind) {
    memset(h, 0, sizeof *h);
    h->magic = GPUK__IPC_MAGIC;
    h->version = GPUK__IPC_VERSION;
    h->kind = kind;
}
static void gpuk__ipc_seal(gpuk__ipc_layout* h, gpuk_ipc_handle* out) {
    gpuk__ipc_self(&h->pid, &h->nonce);
    memcpy(out->bytes, h, sizeof *h);
}

GPUK__IMPL gpuk_result gpuk_buffer_export(gpuk_ctx* ctx, gpuk_buffer buffer,
                                          gpuk_ipc_handle* out_handle) {
    const char* const fn = __func__;
    const gpuk__buffer_slot* s;
    gpuk__ipc_layout h;
    GPUK__CU_IPC_MEM_HANDLE dh;
    gpuk__cu_result cr;
    gpuk_result r;
    char name[48];
    if (!out_handle) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_handle is NULL");
    memset(out_handle, 0, sizeof *out_handle);
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(s = gpuk__buffer_lookup(ctx, buffer.id)))
        return gpuk__bad_handle(fn, "buffer", buffer.id);
    gpuk__buffer_name(name, sizeof name, s);
    if (s->origin == GPUK__BUFFER_ORDERED || s->origin == GPUK__BUFFER_GRAPH)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s was made on a stream from the device's "
                          "memory pool (gpuk_buffer_create_async), which cuIpcGetMemHandle "
                          "cannot share: make it with gpuk_buffer_create", name);
    if (s->origin == GPUK__BUFFER_IPC)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s was imported from another process "
                          "(gpuk_buffer_import): export it in the process that made it", name);
    if (s->origin != GPUK__BUFFER_PLAIN)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is host-visible or managed memory, which "
                          "cuIpcGetMemHandle cannot share: make it with gpuk_buffer_create",
                          name);
    gpuk__ipc_begin(&h, GPUK__IPC_BUFFER);
    h.bytes = (uint64_t)s->bytes;
    gpuk__copy_text(h.label, sizeof h.label, s->label);
    if (s->bytes) {
        if ((r = gpuk__ipc_ready(fn, ctx, 0)) != GPUK_OK) return r;
        if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
        memset(&dh, 0, sizeof dh);
        if ((cr = GPUK__DRV.cuIpcGetMemHandle(&dh, s->ptr)) != 0)
            return gpuk__ipc_fail_cu(fn, "cuIpcGetMemHandle", cr, s->owned ? name :
                                     "a wrapped pointer must be the start of a cuMemAlloc "
                                     "allocation");
        memcpy(h.driver, dh.reserved, sizeof h.driver);
    }
    gpuk__ipc_seal(&h, out_handle);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_buffer_import(gpuk_ctx* ctx, const gpuk_ipc_handle* handle,
                                          gpuk_buffer* out_buffer) {
    const char* const fn = __func__;
    gpuk__buffer_slot* s;
    gpuk__ipc_layout h;
    GPUK__CU_IPC_MEM_HANDLE dh;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    if (out_buffer) out_buffer->id = 0;
    if (out_buffer && !handle) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle is NULL");
    s = (gpuk__buffer_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_buffer,
                                               out_buffer ? &out_buffer->id : NULL, NULL, 1,
                                               0u, 0u, &r);
    if (!s) return r;
    /* every member, also those other origins set: the slot may be a reused one */
    memset(s, 0, sizeof *s);
    s->origin = GPUK__BUFFER_IPC;
    if ((r = gpuk__ipc_read(fn, handle, GPUK__IPC_BUFFER, &h)) == GPUK_OK) {
        s->bytes = (size_t)h.bytes;
        gpuk__copy_text(s->label, sizeof s->label, h.label);
        if ((uint64_t)s->bytes != h.bytes)
            r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle's buffer of %llu bytes exceeds "
                           "this process's address space", (unsigned long long)h.bytes);
    }
    if (r == GPUK_OK && s->bytes && (r = gpuk__ipc_ready(fn, ctx, 0)) == GPUK_OK &&
        (r = gpuk__enter(fn, ctx)) == GPUK_OK) {
        char what[64];
        memcpy(dh.reserved, h.driver, sizeof dh.reserved);
        if ((cr = GPUK__DRV.cuIpcOpenMemHandle(&s->ptr, dh,
                                               GPUK__CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) != 0) {
            s->ptr = 0;
            gpuk__fmt(what, sizeof what, 0, "%zu bytes exported as %s%s%s", s->bytes,
                      s->label[0] ? "'" : "an unlabelled buffer", s->label,
                      s->label[0] ? "'" : "");
            r = gpuk__ipc_fail_cu(fn, "cuIpcOpenMemHandle", cr, what);
        }
    }
    return gpuk__slot_end(ctx, gpuk__kind_buffer, s, r, &out_buffer->id);
}

GPUK__IMPL gpuk_result gpuk_event_export(gpuk_ctx* ctx, gpuk_event event,
                                         gpuk_ipc_handle* out_handle) {
    const char* const fn = __func__;
    const gpuk__event_slot* e;
    gpuk__ipc_layout h;
    GPUK__CU_IPC_EVENT_HANDLE dh;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!out_handle) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_handle is NULL");
    memset(out_handle, 0, sizeof *out_handle);
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(e = gpuk__event_lookup(ctx, event.id))) return gpuk__bad_handle(fn, "event", event.id);
    if (e->ipc == GPUK__EVENT_IMPORTED)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "event 0x%x was imported from another "
                          "process (gpuk_event_import): export it in the process that made it",
                          event.id);
    if (e->ipc != GPUK__EVENT_INTERPROCESS)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "event 0x%x was not created with "
                          "gpuk_event_desc.interprocess = true, which sharing needs "
                          "(CU_EVENT_INTERPROCESS)", event.id);
    if ((r = gpuk__ipc_ready(fn, ctx, 1)) != GPUK_OK) return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    memset(&dh, 0, sizeof dh);
    if ((cr = GPUK__DRV.cuIpcGetEventHandle(&dh, e->cu)) != 0)
        return gpuk__ipc_fail_cu(fn, "cuIpcGetEventHandle", cr, "an interprocess event");
    gpuk__ipc_begin(&h, GPUK__IPC_EVENT);
    memcpy(h.driver, dh.reserved, sizeof h.driver);
    gpuk__ipc_seal(&h, out_handle);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_event_import(gpuk_ctx* ctx, const gpuk_ipc_handle* handle,
                                         gpuk_event* out_event) {
    const char* const fn = __func__;
    gpuk__event_slot* s;
    gpuk__ipc_layout h;
    GPUK__CU_IPC_EVENT_HANDLE dh;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    if (out_event) out_event->id = 0;
    if (out_event && !handle) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "handle is NULL");
    s = (gpuk__event_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_event,
                                              out_event ? &out_event->id : NULL, NULL, 1, 0u,
                                              0u, &r);
    if (!s) return r;
    memset(s, 0, sizeof *s);
    s->ipc = GPUK__EVENT_IMPORTED; /* behaves as created with DISABLE_TIMING (cuda.h) */
    if ((r = gpuk__ipc_read(fn, handle, GPUK__IPC_EVENT, &h)) == GPUK_OK &&
        (r = gpuk__ipc_ready(fn, ctx, 1)) == GPUK_OK && (r = gpuk__enter(fn, ctx)) == GPUK_OK) {
        memcpy(dh.reserved, h.driver, sizeof dh.reserved);
        if ((cr = GPUK__DRV.cuIpcOpenEventHandle(&s->cu, dh)) != 0) {
            s->cu = NULL;
            r = gpuk__ipc_fail_cu(fn, "cuIpcOpenEventHandle", cr, "an exported event");
        }
    }
    return gpuk__slot_end(ctx, gpuk__kind_event, s, r, &out_event->id);
}
