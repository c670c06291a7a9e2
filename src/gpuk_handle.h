/* src/gpuk_handle.h - part of gpuk.h: handle pools, the ctx struct, layer hooks, handle checks. */
/* ---- >>pool ---- */
/* Handle ids: (ctx tag << 28) | (generation << slot bits) | slot. The slot bits fit the pool
   (13 for 4096 slots, 16 for the largest), slot 0 is reserved (so no live id is 0), and the
   generation takes the bits left: a slot's generation advances each time it is freed, and free
   slots are reused oldest first, so a destroyed handle's id comes back only when its slot has
   been reused 2^(28 - slot bits) times. The tag is the owning ctx's (gpuk__ctx_tag_take): a
   handle is refused by every other live ctx. A slot holds the id it was created with (0 when
   free), so a lookup is one compare. */
#define GPUK__TAG_SHIFT 28u
#define GPUK__TAGS 16u

typedef struct gpuk__pool {
    char* slots;          /* size slots of stride bytes, each beginning with its uint32_t id */
    size_t stride;
    uint32_t size;        /* slots including the reserved slot 0 */
    uint32_t slot_bits;   /* low id bits that hold the slot */
    uint32_t tag;         /* the ctx's tag, in place */
    uint32_t free_head;   /* ring of free slots, oldest at free_head */
    uint32_t free_count;
    uint32_t* free_ring;  /* size - 1 entries */
    uint32_t* gens;       /* per slot, the generation its next id gets */
} gpuk__pool;

/* How a buffer's memory came: cuMemAlloc (or wrapped, not owned), cuMemAllocAsync from the
   device's pool, or cuMemAllocAsync inside a stream capture (a graph's allocation); mapped
   host memory, cuMemHostAlloc'd or the caller's registered, or cuMemAllocManaged
   (src/gpuk_hostmem.h). */
enum { GPUK__BUFFER_PLAIN, GPUK__BUFFER_ORDERED, GPUK__BUFFER_GRAPH, GPUK__BUFFER_MAPPED,
       GPUK__BUFFER_REGISTERED, GPUK__BUFFER_MANAGED,
       GPUK__BUFFER_IPC /* opened from another process (src/gpuk_ipc.h): closed, never freed */ };

typedef struct gpuk__buffer_slot {
    uint32_t id;
    bool owned;
    uint8_t origin;          /* GPUK__BUFFER_* */
    uint32_t stream_id;      /* ORDERED and GRAPH: the stream it was created on (0: the ctx's
                                default stream), where gpuk_buffer_destroy frees it */
    gpuk_devptr ptr;
    size_t bytes;
    void* host;              /* MAPPED, REGISTERED, MANAGED: the CPU's pointer; else NULL */
    char label[24];
} gpuk__buffer_slot;

typedef struct gpuk__pinned_slot {
    uint32_t id;
    bool registered;
    void* ptr;
    size_t bytes;
    char label[24];
} gpuk__pinned_slot;

typedef struct gpuk__stream_slot {
    uint32_t id;
    bool owned;
    gpuk__cu_stream cu;
} gpuk__stream_slot;

/* An event's part in CUDA IPC (src/gpuk_ipc.h): none, exportable (created interprocess), or
   opened from another process's export. */
enum { GPUK__EVENT_LOCAL, GPUK__EVENT_INTERPROCESS, GPUK__EVENT_IMPORTED };

typedef struct gpuk__event_slot {
    uint32_t id;
    bool timing;
    uint8_t ipc;             /* GPUK__EVENT_* */
    gpuk__cu_event cu;
} gpuk__event_slot;

typedef struct gpuk__graph_slot {
    uint32_t id;
    gpuk__cu_graph_exec exec;
} gpuk__graph_slot;

typedef struct gpuk__module_slot {
    uint32_t id;
    gpuk__cu_module cu;
    char label[24];
    const gpuk__nvrtc_entry* compiled; /* gpuk_module_compile's cache entry, or NULL */
} gpuk__module_slot;

#define GPUK__MAX_CHECKED_PARAMS 32
typedef struct gpuk__kernel_slot {
    uint32_t id;
    uint32_t module_id;
    gpuk__cu_function cu;
    int max_threads;        /* per block, for this kernel */
    int static_shared;
    int max_dynamic_shared; /* current limit */
    int num_params;         /* -1 unknown */
    uint16_t param_bytes[GPUK__MAX_CHECKED_PARAMS];
    char name[40];
} gpuk__kernel_slot;

/* Layers above the core (the built-in kernels; later compiled programs, graphs, peers) keep
   their own per-ctx state in ctx->layer[] and hear of releases through these hooks, so the
   core knows nothing of what they hold. Each hook is optional. Hook table: the core's files
   (src/gpuk_ctx.h, src/gpuk_stream.h) call into the built-in layer, a later file, only
   through it; src/gpuk_builtin.h fills it in (gpuk__builtin_layer). */
typedef struct gpuk__layer {
    /* at the end of ctx create: make the layer's state (*state); a failure undoes the create */
    gpuk_result (*ctx_init)(const char* fn, gpuk_ctx* ctx, void** state);
    /* a stream (slot index; 0 = the ctx default stream) is about to be destroyed in the
       driver: release what the layer holds for it; keep the first failure in *first */
    void (*stream_release)(const char* fn, gpuk_ctx* ctx, void* state, uint32_t slot,
                           gpuk_result* first);
    /* ctx destroy, after the device is idle and before the core's objects go: releases what
       the layer holds and frees *state, setting it NULL (NULL already after a failed
       ctx_init). On a failure that is not a sticky fault it keeps in *state what it could not
       release, for the retry of the destroy, and keeps the failure in *first. */
    void (*ctx_release)(const char* fn, gpuk_ctx* ctx, void** state, gpuk_result* first);
    /* a graph of ctx was destroyed (the ctx is current): what the layer kept for graphs may
       be given back once none is left; failures are the layer's to keep for later */
    void (*graph_destroyed)(const char* fn, gpuk_ctx* ctx, void* state);
} gpuk__layer;
enum { GPUK__LAYER_BUILTIN, GPUK__LAYER_COUNT };
/* The layers; NULL where compiled out. Hook: defined in src/gpuk_builtin.h beside the built-in
   layer's table (src/gpuk_builtin_ptx.h under GPUK_NO_KERNELS, returning NULL), which the core
   cannot name. Called by ctx create and destroy (src/gpuk_ctx.h), stream destroy
   (src/gpuk_stream.h) and graph destroy (src/gpuk_graph.h). */
static const gpuk__layer* gpuk__layer_of(int which);

/* The handle kinds, one row each, in the order a ctx destroy releases them (graphs before
   the kernels and memory they use, kernels before their modules, events and streams before
   memory): name, slot type, gpuk_ctx_desc field of
   the pool size, its default. Each kind has a gpuk__<name>_lookup (below) and a
   gpuk__<name>_release (in its own file, gpuk__release below) that gives the slot's object
   back to the driver. */
#define GPUK__HANDLE_KINDS(X) \
    X(graph, gpuk__graph_slot, max_graphs, 64) \
    X(kernel, gpuk__kernel_slot, max_kernels, 1024) \
    X(module, gpuk__module_slot, max_modules, 64) \
    X(event, gpuk__event_slot, max_events, 1024) \
    X(stream, gpuk__stream_slot, max_streams, 256) \
    X(pinned, gpuk__pinned_slot, max_pinned, 256) \
    X(buffer, gpuk__buffer_slot, max_buffers, 4096)

#define GPUK__KIND_ENUM(name, type, field, dflt) gpuk__kind_##name,
typedef enum gpuk__kind { GPUK__HANDLE_KINDS(GPUK__KIND_ENUM) GPUK__KIND_NUM } gpuk__kind;
#undef GPUK__KIND_ENUM

#define GPUK__KIND_NAME(name, type, field, dflt) #name,
static const char* const gpuk__kind_name[GPUK__KIND_NUM] = { GPUK__HANDLE_KINDS(GPUK__KIND_NAME) };
#undef GPUK__KIND_NAME


/* Pinned staging for stream-less copies of pageable host memory (>>staging): two halves of
   one cuMemHostAlloc block and an event for the last DMA of each. */
enum { GPUK__STAGING_UNSET, GPUK__STAGING_READY, GPUK__STAGING_OFF };
/* gpuk_ctx_desc.staging_bytes 0: pieces of 16 MiB keep the DMA busy while the next piece is
   copied; 16 MiB of staging was slower on 256 MiB copies (bench "pageable copies"). Copies of
   up to 64 MiB take the same pieces either way (a quarter of the copy). */
#define GPUK__STAGING_BYTES ((size_t)32 << 20)
#define GPUK__STAGING_LEAST ((size_t)64 << 10)   /* the least staging_bytes taken */
/* staging_min_bytes 0: copies from this size up are staged. Below 1 MiB staging gains little
   over the driver's own pageable copy (bench "pageable copies"); with one copying thread
   (staging_threads 1) it loses at every size, the host's memcpy being the limit. */
#define GPUK__STAGING_MIN_BYTES ((size_t)1 << 20)
/* staging_threads 0: min(GPUK__STAGING_THREADS_DEFAULT_MOST, CPUs / 2), at least 1, counting
   the CPUs of the GPU's NUMA node the process may use where the node is known, else the online
   CPUs (half the CPUs: the program's own threads keep the other half; 8 copying threads
   already saturate the memory bandwidth of most hosts) */
#define GPUK__STAGING_THREADS_DEFAULT_MOST 8u
#define GPUK__STAGING_THREADS_MOST 64u           /* the most staging_threads taken */
/* The least slice one thread copies: waking a thread costs some microseconds, about what 64 KiB
   of memcpy takes, so smaller work stays with fewer threads. */
#define GPUK__STAGING_SLICE_LEAST ((size_t)64 << 10)
/* Tests define it (an expression) to stand for the online CPU count, so that the default
   thread count's two rules differ on a machine of few CPUs too. */
#if !defined(GPUK__ONLINE_CPUS)
#define GPUK__ONLINE_CPUS() gpuk__cpu_count()
#endif
/* Tests define it (an expression, nonzero: refuse this start) to fail thread starts. */
#if !defined(GPUK__THREAD_START_REFUSED)
#define GPUK__THREAD_START_REFUSED() 0
#endif
/* The staging's copy threads: each piece's memcpy (into a half or out of it) is cut into
   slices, slice 0 copied by the calling thread and slice i by worker i. Workers only copy
   memory (no driver call, no gpuk state), so they need no current context. One job at a time
   (the staging lock). A job is posted and finished through atomics, with waits that spin
   first: waking 7 sleeping workers and collecting them through the mutex can cost tens of
   microseconds a piece, a quarter of a piece's time (>>staging). */
typedef struct gpuk__crew {
    int live;                /* lock and conditions initialised, workers started */
    long owner_pid;          /* the process that started them (a fork child has none) */
    gpuk__mutex lock;        /* only for sleeping: go and done, started */
    gpuk__cond go;           /* a job posted (gen changed) or quit set */
    gpuk__cond done;         /* every worker has acked the job */
    unsigned workers;        /* threads running: the staging copies with workers + 1 */
    unsigned started;        /* indices 1..workers handed out as they start (under lock) */
    unsigned gen;            /* atomic: the job's number, stored (release) after its fields */
    unsigned acks;           /* atomic: workers done with job gen (their slice copied, or none) */
    int quit;                /* atomic */
    unsigned slices;         /* the job: slices of `slice` bytes (the last shorter); the job's */
    char* dst;               /* fields change only once every worker has acked the last job */
    const char* src;
    size_t bytes, slice;
    int stream;              /* the job's stores bypass the caches (gpuk__slice_copy) */
    unsigned worker_slices;  /* atomic: slices the workers copied since the start (tests read it) */
    unsigned asleep;         /* atomic: threads now sleeping in a wait of the crew (tests
                                read it) */
    int pin;                 /* each worker binds itself to cpus as it starts */
    gpuk__cpu_set cpus;      /* the CPUs of the GPU's NUMA node the process may use */
    gpuk__thread th[GPUK__STAGING_THREADS_MOST - 1];
} gpuk__crew;
typedef struct gpuk__staging {
    gpuk__mutex lock;        /* held by the one copy using the halves; a copy finding it taken
                                goes the driver's way instead of waiting */
    int state;               /* GPUK__STAGING_*: OFF after a failed allocation or drain */
    char* mem;               /* 2 * half bytes, allocated by the first staged copy */
    size_t half;
    gpuk__cu_event ev[2];
    size_t min_bytes;        /* copies from this size up are staged; 0: never */
    unsigned threads;        /* gpuk_ctx_desc.staging_threads, resolved: the most that copy */
    gpuk__crew crew;         /* threads - 1 workers, started with the memory */
} gpuk__staging;
/* Hook: joins the copy threads; defined in src/gpuk_staging.h with the threads it stops, called
   by gpuk_ctx_destroy (src/gpuk_ctx.h, which comes before the staging: a staged copy needs
   the ctx). */
static void gpuk__crew_stop(gpuk__crew* cr);

/* A conditional graph being captured on a stream (src/gpuk_graph.h): the whole graph (head,
   conditional node, body), the node's handle and type, and which part the capture is in. */
typedef struct gpuk__cond_capture {
    gpuk__cu_stream stream; /* NULL: a free entry */
    uint32_t stream_id;     /* its handle: an entry whose stream was destroyed is stale */
    gpuk__cu_graph graph;
    uint64_t handle;
    unsigned int type;      /* GPUK__CU_GRAPH_COND_TYPE_* */
    int in_body;
} gpuk__cond_capture;

struct gpuk_ctx {
    gpuk__cu_context cu;
    gpuk__cu_device dev;
    gpuk__cu_stream default_stream;
    gpuk__mutex lock;
    gpuk_device_info info;
    uint32_t tag;
    gpuk__pool pools[GPUK__KIND_NUM];
    void* layer[GPUK__LAYER_COUNT]; /* each layer's own state (gpuk__layer) */
    uint32_t kernels_max_sm;        /* gpuk_ctx_desc's: 0 or the newest built-in variant taken */
    gpuk_ctx* next_live;            /* gpuk__g.live_list (under gpuk__lock) */
    gpuk__staging staging;
    gpuk__mutex join_lock;          /* gpuk_stream_join/fork: join_ev between record and wait */
    gpuk__cu_event join_ev;         /* created by the first join or fork */
    gpuk__cu_graph graph_orphans[4]; /* captured graphs whose cuGraphDestroy failed (under lock):
                                        tried again by the ctx destroy */
    uint32_t graph_orphan_count;
    gpuk__cond_capture conds[4];    /* conditional graphs being captured (src/gpuk_graph.h,
                                       under lock) */
    int mempools;                   /* atomic: GPUK__MEMPOOLS_* (src/gpuk_mempool.h) */
    const char* last_launch;        /* atomic: what the ctx launched last (gpuk__launch_note);
                                       NULL before its first launch */
};

/* What a graph launch records (gpuk__launch_note): a fixed text, told apart from a kernel's
   name by its address. */
static const char gpuk__launch_of_graph[] = "a CUDA graph (gpuk_graph_launch)";

/* Records a launch on ctx: gpuk_launch, the built-in and custom kernels' launcher
   (gpuk__builtin_go) and a graph launch call it once the
   driver has taken the launch. what is the kernel's name in its slot (which lives as long as
   the ctx; a slot reused after its module's unload names its new kernel) or
   gpuk__launch_of_graph. One release store of a pointer, no lock: a sticky fault's text names
   the last launch of each live ctx (gpuk__fault_launches, src/gpuk_ctx.h), and a launch ends
   the time in which the printf FIFO and the malloc heap may be set (gpuk_ctx_set_limit). */
static inline void gpuk__launch_note(gpuk_ctx* ctx, const char* what) {
    GPUK__ATOMIC_STORE_PTR(&ctx->last_launch, what);
}

/* Gives a live slot's driver objects back (the ctx is current); returns the driver's result
   and names the failing call in *out_call. After a failure the slot still describes what is
   left to release, so the call can be made again. Hook: each kind's is defined with the
   kind's calls, in a later file (buffer and pinned: src/gpuk_memory.h; stream and event:
   src/gpuk_stream.h; module: src/gpuk_module.h; kernel: src/gpuk_launch.h; graph:
   src/gpuk_graph.h); every destroy and the ctx destroy (src/gpuk_ctx.h) call it through the
   table gpuk__release, so that the handle code knows no kind's driver objects. */
typedef gpuk__cu_result (*gpuk__release_fn)(gpuk_ctx* ctx, void* slot, const char** out_call);
#define GPUK__KIND_RELEASE(name, type, field, dflt) \
    static gpuk__cu_result gpuk__##name##_release(gpuk_ctx* ctx, void* slot, const char** out_call);
GPUK__HANDLE_KINDS(GPUK__KIND_RELEASE)
#undef GPUK__KIND_RELEASE
#define GPUK__KIND_RELEASE(name, type, field, dflt) gpuk__##name##_release,
static const gpuk__release_fn gpuk__release[GPUK__KIND_NUM] = {
    GPUK__HANDLE_KINDS(GPUK__KIND_RELEASE)
};
#undef GPUK__KIND_RELEASE

static void* gpuk__pool_slot(const gpuk__pool* pool, uint32_t i) {
    return pool->slots + i * pool->stride;
}

/* Slot index of id in pool, or 0 when id is not live there. */
static uint32_t gpuk__pool_find(const gpuk__pool* pool, uint32_t id) {
    uint32_t i = id & ((1u << pool->slot_bits) - 1u);
    uint32_t live;
    if (i == 0 || i >= pool->size) return 0;
    memcpy(&live, gpuk__pool_slot(pool, i), sizeof live);
    return live == id ? i : 0;
}

#define GPUK__DEFINE_LOOKUP(name, type, field, dflt) \
    static type* gpuk__##name##_lookup(const gpuk_ctx* ctx, uint32_t id) { \
        const gpuk__pool* p_ = &ctx->pools[gpuk__kind_##name]; \
        uint32_t i_ = gpuk__pool_find(p_, id); \
        return i_ ? (type*)gpuk__pool_slot(p_, i_) : NULL; \
    }
GPUK__HANDLE_KINDS(GPUK__DEFINE_LOOKUP)
#undef GPUK__DEFINE_LOOKUP

/* The oldest free slot (call with ctx->lock held); 0 when the pool is full. */
static uint32_t gpuk__pool_take(gpuk__pool* pool) {
    uint32_t i;
    if (!pool->free_count) return 0;
    i = pool->free_ring[pool->free_head];
    pool->free_head = (pool->free_head + 1u) % (pool->size - 1u);
    pool->free_count--;
    return i;
}

/* Frees slot i (call with ctx->lock held): its id is retired for good, by the next
   generation, and the slot waits behind every other free slot. */
static void gpuk__pool_free(gpuk__pool* pool, uint32_t i) {
    uint32_t zero = 0;
    GPUK_ASSERT(pool->free_count + 1 < pool->size);
    memcpy(gpuk__pool_slot(pool, i), &zero, sizeof zero);
    pool->gens[i] = (pool->gens[i] + 1u) & ((1u << (GPUK__TAG_SHIFT - pool->slot_bits)) - 1u);
    pool->free_ring[(pool->free_head + pool->free_count) % (pool->size - 1u)] = i;
    pool->free_count++;
}

/* Gives slot i its id, which makes it live; returns the id. */
static uint32_t gpuk__pool_publish(gpuk__pool* pool, uint32_t i) {
    uint32_t id = pool->tag | (pool->gens[i] << pool->slot_bits) | i;
    memcpy(gpuk__pool_slot(pool, i), &id, sizeof id);
    return id;
}

/* A create's first step: a free slot of kind, reserved under the ctx lock, or NULL after
   failing with GPUK_ERR_POOL_FULL. The create ends in gpuk__slot_commit or gpuk__slot_abort. */
static void* gpuk__slot_begin(const char* fn, gpuk_ctx* ctx, gpuk__kind kind, gpuk_result* out_r) {
    gpuk__pool* pool = &ctx->pools[kind];
    uint32_t i;
    gpuk__mutex_lock(&ctx->lock);
    i = gpuk__pool_take(pool);
    gpuk__mutex_unlock(&ctx->lock);
    if (i) return gpuk__pool_slot(pool, i);
    *out_r = gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u %s slots are in use", pool->size - 1u,
                        gpuk__kind_name[kind]);
    return NULL;
}

static uint32_t gpuk__slot_index(const gpuk__pool* pool, const void* slot) {
    return (uint32_t)((size_t)((const char*)slot - pool->slots) / pool->stride);
}

/* Publishes a slot from gpuk__slot_begin, filled in; returns its id. */
static uint32_t gpuk__slot_commit(gpuk_ctx* ctx, gpuk__kind kind, void* slot) {
    gpuk__pool* pool = &ctx->pools[kind];
    return gpuk__pool_publish(pool, gpuk__slot_index(pool, slot));
}

/* Gives back a slot from gpuk__slot_begin whose create failed (its id was never handed out,
   so the generation stays). */
static void gpuk__slot_abort(gpuk_ctx* ctx, gpuk__kind kind, void* slot) {
    gpuk__pool* pool = &ctx->pools[kind];
    gpuk__mutex_lock(&ctx->lock);
    pool->free_ring[(pool->free_head + pool->free_count) % (pool->size - 1u)] =
        gpuk__slot_index(pool, slot);
    pool->free_count++;
    gpuk__mutex_unlock(&ctx->lock);
}

/* A create's common head, in this order: the out handle (zeroed), no sticky fault, ctx, desc
   (NULL allowed when desc_optional) and its canaries (GPUK__CANARIES); then a free slot of
   kind (gpuk__slot_begin). Returns the slot, or NULL with *out_r set. */
static void* gpuk__create_begin(const char* fn, gpuk_ctx* ctx, gpuk__kind kind, uint32_t* out_id,
                                const void* desc, int desc_optional, uint32_t start_canary,
                                uint32_t end_canary, gpuk_result* out_r) {
    const char* name = gpuk__kind_name[kind];
    if (!out_id) {
        *out_r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_%s is NULL", name);
        return NULL;
    }
    *out_id = 0;
    if (GPUK__UNLIKELY(GPUK__ATOMIC_LOAD(&gpuk__g.broken))) *out_r = gpuk__fail_broken(fn);
    else if (GPUK__UNLIKELY(!ctx)) *out_r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "ctx is NULL");
    else if (!desc && !desc_optional) *out_r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    else if (gpuk__desc_canaries_bad(start_canary, end_canary))
        *out_r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_%s_desc canaries are not zero", name);
    else return gpuk__slot_begin(fn, ctx, kind, out_r);
    return NULL;
}
#define GPUK__CANARIES(desc) (desc) ? (desc)->_start_canary : 0u, (desc) ? (desc)->_end_canary : 0u

/* A create's last step: on success the slot from gpuk__slot_begin is published into *out_id,
   on failure (r) it is given back. Returns r. */
static gpuk_result gpuk__slot_end(gpuk_ctx* ctx, gpuk__kind kind, void* slot, gpuk_result r,
                                  uint32_t* out_id) {
    if (r == GPUK_OK) *out_id = gpuk__slot_commit(ctx, kind, slot);
    else gpuk__slot_abort(ctx, kind, slot);
    return r;
}

/* Detaches id's slot under the ctx lock: its id is zeroed (lookups fail, a second destroy
   fails cleanly) but it is not free. Returns the slot, or 0 when id is not live. */
static uint32_t gpuk__slot_detach(gpuk_ctx* ctx, gpuk__pool* pool, uint32_t id) {
    uint32_t i, zero = 0;
    gpuk__mutex_lock(&ctx->lock);
    i = gpuk__pool_find(pool, id);
    if (i) memcpy(gpuk__pool_slot(pool, i), &zero, sizeof zero);
    gpuk__mutex_unlock(&ctx->lock);
    return i;
}

/* defined below, in >>validate (this file) */
static gpuk_result gpuk__enter(const char* fn, gpuk_ctx* ctx);
static gpuk_result gpuk__bad_handle(const char* fn, const char* what, uint32_t id);

/* The end of a release of detached slot i (once id) of kind whose driver part returned r:
   the slot is freed, or on a failure that is not a sticky fault it gets its id back, so its
   handle can be destroyed again; after a sticky fault it is freed all the same. Returns r (a
   sticky fault's own failure where that is why the slot was freed). */
static gpuk_result gpuk__slot_settle(const char* fn, gpuk_ctx* ctx, gpuk__kind kind, uint32_t i,
                                     uint32_t id, gpuk_result r) {
    gpuk__pool* pool = &ctx->pools[kind];
    int broken = GPUK__ATOMIC_LOAD(&gpuk__g.broken);
    gpuk__mutex_lock(&ctx->lock);
    if (r == GPUK_OK || broken) gpuk__pool_free(pool, i);
    else memcpy(gpuk__pool_slot(pool, i), &id, sizeof id);
    gpuk__mutex_unlock(&ctx->lock);
    /* freed only because of a fault: say so, whatever the failing call said */
    if (broken && r != (gpuk_result)broken) r = gpuk__fail_broken(fn);
    return r;
}

/* Releases detached slot i (once id) of kind in the driver, then frees it. On a failure that
   is not a sticky fault the slot gets its id back, so its handle can be destroyed again; after
   a sticky fault the driver is not called and the slot is freed all the same. */
static gpuk_result gpuk__slot_release(const char* fn, gpuk_ctx* ctx, gpuk__kind kind, uint32_t i,
                                      uint32_t id) {
    gpuk_result r = GPUK_OK;
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) && (r = gpuk__enter(fn, ctx)) == GPUK_OK) {
        const char* call = "";
        gpuk__cu_result cr = gpuk__release[kind](ctx, gpuk__pool_slot(&ctx->pools[kind], i),
                                                 &call);
        if (cr) r = gpuk__fail_cu(fn, call, cr, NULL);
    }
    return gpuk__slot_settle(fn, ctx, kind, i, id, r);
}

/* The destroy of every kind. */
static gpuk_result gpuk__handle_destroy(const char* fn, gpuk_ctx* ctx, gpuk__kind kind,
                                        uint32_t id) {
    uint32_t i;
    if (GPUK__UNLIKELY(!ctx)) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "ctx is NULL");
    if (!(i = gpuk__slot_detach(ctx, &ctx->pools[kind], id)))
        return gpuk__bad_handle(fn, gpuk__kind_name[kind], id);
    return gpuk__slot_release(fn, ctx, kind, i, id);
}

/* ---- >>validate ---- */
#define GPUK__CTX_CHECK(fn, ctx) \
    do { \
        if (GPUK__UNLIKELY(!(ctx))) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "ctx is NULL"); \
    } while (0)

static gpuk_result gpuk__bad_handle(const char* fn, const char* what, uint32_t id) {
    if (!id) return gpuk__fail(fn, GPUK_ERR_INVALID_HANDLE, "%s handle is zero", what);
    return gpuk__fail(fn, GPUK_ERR_INVALID_HANDLE, "%s handle 0x%x is destroyed or belongs to "
                      "another ctx", what, id);
}

static gpuk_result gpuk__enter_slow(const char* fn, gpuk_ctx* ctx) {
    gpuk__cu_result r = GPUK__DRV.cuCtxSetCurrent(ctx->cu);
    return r ? gpuk__fail_cu(fn, "cuCtxSetCurrent", r, NULL) : GPUK_OK;
}

/* Make ctx current on this thread if it is not: a new thread has none (201 otherwise), and
   other libraries may have set theirs. One cuCtxGetCurrent compare on the fast path. */
static gpuk_result gpuk__enter(const char* fn, gpuk_ctx* ctx) {
    gpuk__cu_context cur = NULL;
    gpuk__cu_result r = GPUK__DRV.cuCtxGetCurrent(&cur);
    if (r == 0 && cur == ctx->cu) return GPUK_OK;
    if (r && gpuk__is_sticky((int)r)) return gpuk__fail_cu(fn, "cuCtxGetCurrent", r, NULL);
    return gpuk__enter_slow(fn, ctx);
}

static gpuk_result gpuk__stream_resolve(const char* fn, const gpuk_ctx* ctx, gpuk_stream s,
                                        gpuk__cu_stream* out) {
    const gpuk__stream_slot* slot;
    if (s.id == 0) {
        *out = ctx->default_stream;
        return GPUK_OK;
    }
    slot = gpuk__stream_lookup(ctx, s.id);
    if (GPUK__UNLIKELY(!slot)) return gpuk__bad_handle(fn, "stream", s.id);
    *out = slot->cu;
    return GPUK_OK;
}

/* The pool slot of a resolved stream handle: 0 for the ctx default stream ({0}), which no
   slot holds; layers keep per-stream state by it. */
static inline uint32_t gpuk__stream_slot_of(const gpuk_ctx* ctx, gpuk_stream s) {
    return s.id ? gpuk__pool_find(&ctx->pools[gpuk__kind_stream], s.id) : 0;
}

/* off + bytes <= cap without overflow */
static int gpuk__in_bounds(size_t off, size_t bytes, size_t cap) {
    return off <= cap && bytes <= cap - off;
}

/* "buffer 'x'", or "unlabelled buffer 0x10002" where none was given ("buffer ''" read like a
   bug to newcomers). */
static const char* gpuk__buffer_name(char* buf, size_t cap, const gpuk__buffer_slot* s) {
    if (s->label[0]) gpuk__fmt(buf, cap, 0, "buffer '%s'", s->label);
    else gpuk__fmt(buf, cap, 0, "unlabelled buffer 0x%x", s->id);
    return buf;
}

/* A 2-D view of elem-byte elements: the address of element (0, 0) and the row stride in
   elements (0 -> cols), after checking the handle, that rows do not overlap, that the whole
   strided region lies inside the buffer (without overflow) and the element alignment. An
   empty view (rows or cols 0) checks the handle and first only. For the matrix and stencil
   calls (GEMM, stencils). */
static gpuk_result gpuk__array2d(const char* fn, const gpuk_ctx* ctx, const char* what,
                                 gpuk_array2d v, size_t elem, gpuk_devptr* out,
                                 size_t* out_stride) {
    const gpuk__buffer_slot* s = gpuk__buffer_lookup(ctx, v.buffer.id);
    size_t cap, stride = v.row_stride ? v.row_stride : v.cols;
    char name[48];
    *out = 0;
    *out_stride = 0;
    if (!s) return gpuk__bad_handle(fn, what, v.buffer.id);
    if (v.row_stride && v.row_stride < v.cols)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "%s: row_stride %zu is less than cols %zu (rows would overlap)",
                          what, v.row_stride, v.cols);
    cap = s->bytes / elem;
    /* Last element: first + (rows - 1) * stride + cols - 1 < cap, checked term by term. */
    if (v.first > cap || (v.rows && v.cols && (v.cols > cap - v.first ||
                          (v.rows - 1) > (cap - v.first - v.cols) / stride)))
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS,
                          "%s: %zu x %zu elements (row stride %zu) from element %zu exceed %s (%zu "
                          "elements of %zu bytes)", what, v.rows, v.cols,
                          stride, v.first, gpuk__buffer_name(name, sizeof name, s), cap, elem);
    *out = s->ptr + (gpuk_devptr)v.first * elem;
    if (*out % elem) {
        gpuk_devptr bad = *out;
        *out = 0;
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "%s: address 0x%llx is not aligned to its %zu-byte elements",
                          what, (unsigned long long)bad, elem);
    }
    *out_stride = stride;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_array2d_resolve(gpuk_ctx* ctx, gpuk_array2d view, size_t elem_bytes,
                                            gpuk_devptr* out_devptr, size_t* out_row_stride) {
    const char* const fn = __func__;
    gpuk_devptr p = 0;
    size_t stride = 0;
    gpuk_result r;
    if (out_devptr) *out_devptr = 0;
    if (out_row_stride) *out_row_stride = 0;
    if (!out_devptr || !out_row_stride)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_devptr or out_row_stride is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (elem_bytes == 0 || elem_bytes > 16 || (elem_bytes & (elem_bytes - 1)))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "elem_bytes is %zu; it must be 1, 2, 4, 8 or 16", elem_bytes);
    if ((r = gpuk__array2d(fn, ctx, "view", view, elem_bytes, &p, &stride)) != GPUK_OK) return r;
    *out_devptr = p;
    *out_row_stride = stride;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_array_resolve(gpuk_ctx* ctx, gpuk_array view, size_t elem_bytes,
                                          const char* what, gpuk_devptr* out_devptr,
                                          size_t* out_elems) {
    const char* const fn = __func__;
    const gpuk__buffer_slot* s;
    gpuk_devptr p;
    size_t cap;
    char name[48];
    if (out_devptr) *out_devptr = 0;
    if (out_elems) *out_elems = 0;
    if (!out_devptr || !out_elems)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_devptr or out_elems is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!what) what = "view";
    if (elem_bytes == 0 || elem_bytes > 16 || (elem_bytes & (elem_bytes - 1)))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "%s: elem_bytes is %zu; it must be 1, 2, 4, 8 or 16", what, elem_bytes);
    if (!(s = gpuk__buffer_lookup(ctx, view.buffer.id)))
        return gpuk__bad_handle(fn, what, view.buffer.id);
    cap = s->bytes / elem_bytes;
    if (view.first > cap)
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS, "%s: first %zu is past the end of %s (%zu "
                          "elements of %zu bytes)", what, view.first,
                          gpuk__buffer_name(name, sizeof name, s), cap, elem_bytes);
    p = s->ptr + (gpuk_devptr)view.first * elem_bytes;
    if (p % elem_bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s: address 0x%llx (element %zu of %s) is not "
                          "aligned to its %zu-byte elements", what, (unsigned long long)p,
                          view.first, gpuk__buffer_name(name, sizeof name, s), elem_bytes);
    *out_devptr = p;
    *out_elems = cap - view.first;
    return GPUK_OK;
}
