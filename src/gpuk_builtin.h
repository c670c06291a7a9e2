/* src/gpuk_builtin.h - part of gpuk.h: the built-in kernel layer (loading, scratch, launchers). */
/* ---- >>builtin ---- */
#if !defined(GPUK_NO_KERNELS)
/* GPUK_GENERATED_BEGIN(kernel_ids) */
/* GPUK_GENERATED_END(kernel_ids) */

typedef struct gpuk__builtin_ptx {
    const char* name;
    const char* const* pieces;   /* the PTX deflated, in the packed alphabet, cut under C99's
                                    4095-char literal limit into pieces of 5-character groups */
    size_t bytes;                /* of the PTX text */
    size_t packed;               /* of the deflated PTX */
    int version;                 /* PTX ISA major * 10 + minor */
    int target;                  /* .target sm_XX */
    int arch_specific;           /* 1: .target sm_XXa (wgmma, setmaxnreg), which the driver
                                    JIT-compiles for compute capability XX only, not newer */
    int base;                    /* -1: pieces hold the PTX itself; else they hold a line script
                                    (gpuk__patch) that makes it from kernel base's PTX */
    size_t script;               /* of that script (0: none) */
} gpuk__builtin_ptx;
/* A faster form of a kernel for newer GPUs (its .target says which). */
typedef struct gpuk__builtin_variant {
    int kernel;                  /* GPUK__K_*, or -1 at the end of the list */
    gpuk__builtin_ptx ptx;
} gpuk__builtin_variant;
/* Hook: these four are defined in src/gpuk_builtin_ptx.h, after the generated PTX tables they
   read (which follow the custom kernels in gpuk.h). */
static const gpuk__builtin_ptx* gpuk__builtin_ptx_of(int id);
static const gpuk__builtin_variant* gpuk__builtin_variants(void);
static const gpuk__builtin_ptx* gpuk__builtin_dictionary_of(void);
static int gpuk__builtin_companion_of(int id, int after);

/* p's packed text into its deflated bytes at scratch, those inflated into out[start,
   start + what p stores) (out[0, start) holding the dictionary p was deflated against): its
   PTX, or its line script; 1 when it all decodes to exactly the sizes the table gives. */
static int gpuk__unpack(const gpuk__builtin_ptx* p, unsigned char* out, size_t start,
                        unsigned char* scratch) {
    const char* const* piece;
    size_t pos = 0;
    for (piece = p->pieces; *piece; piece++) {
        const size_t got = gpuk__b85_decode(*piece, strlen(*piece), scratch + pos, p->packed - pos);
        if (got == (size_t)-1) return 0;
        pos += got;
    }
    return pos == p->packed &&
           gpuk__inflate(scratch, pos, out, start, start + (p->base >= 0 ? p->script : p->bytes));
}

/* The next line of text[*at, len) (through its '\n', or to len, where a text's last line ends
   without one): its length with the '\n'; the '\n' counted where it is missing too. */
static size_t gpuk__line(const char* text, size_t len, size_t* at, int* missing) {
    const char* nl = (const char*)memchr(text + *at, '\n', len - *at);
    const size_t n = nl ? (size_t)(nl - (text + *at)) + 1 : len - *at + 1;
    *missing = !nl;
    *at += nl ? n : len - *at;
    return n;
}

/* out[0, out_len) from base (base_len bytes) and a line script (tools/gpuk_gen/emit.py,
   line_script): "=N" copies base's next N lines, "-N" skips them, "+N" adds the N lines after
   it. Lines end in '\n'; a text is its lines joined by '\n', so base's last line has none and
   out's last gets one here, at out[out_len], which becomes the NUL. out has out_len + 1
   bytes. 1 when the script fits base and makes exactly out_len bytes. */
static int gpuk__patch(const char* base, size_t base_len, const char* script, size_t script_len,
                       char* out, size_t out_len) {
    size_t b = 0, s = 0, o = 0;
    int base_done = 0;
    while (s < script_len) {
        const char op = script[s++];
        size_t count = 0;
        if (op != '=' && op != '-' && op != '+') return 0;
        if (s >= script_len || script[s] < '0' || script[s] > '9') return 0;
        while (s < script_len && script[s] >= '0' && script[s] <= '9') {
            if (count > out_len) return 0; /* no script asks for more lines than out has bytes */
            count = count * 10 + (size_t)(script[s++] - '0');
        }
        if (s >= script_len || script[s++] != '\n') return 0;
        for (; count; count--) {
            size_t at, n;
            int missing;
            const char* from;
            if (op == '+') {
                at = s;
                n = gpuk__line(script, script_len, &s, &missing);
                if (missing) return 0; /* the script's own lines all end in '\n' */
                from = script + at;
            } else {
                if (base_done) return 0;
                at = b;
                n = gpuk__line(base, base_len, &b, &missing);
                base_done = missing;
                from = base + at;
                if (op == '-') continue;
            }
            if (n > out_len + 1 - o) return 0;
            memcpy(out + o, from, n - (op != '+' && missing));
            o += n;
            out[o - 1] = '\n';
        }
    }
    if (o != out_len + 1) return 0;
    out[out_len] = 0;
    return 1;
}

/* The PTX text of b, unpacked (the dictionary first, then b against it; where b is a line
   script, its base's PTX too, which the script edits) into memory from gpuk__alloc that
   *out_block holds (free it); NULL with a failure said. The block: the dictionary, the base's
   PTX, the dictionary again and the script, the PTX made and its NUL, the scratch bytes. */
static char* gpuk__builtin_text(const char* fn, const gpuk__builtin_ptx* b, char** out_block,
                                gpuk_result* r) {
    const gpuk__builtin_ptx* d = gpuk__builtin_dictionary_of();
    const gpuk__builtin_ptx* a = b->base >= 0 ? gpuk__builtin_ptx_of(b->base) : NULL;
    const size_t base_bytes = a ? a->bytes + d->bytes + b->script : 0;
    size_t scratch = d->packed > b->packed ? d->packed : b->packed, bytes;
    unsigned char *block, *made;
    int ok;
    if (a && a->packed > scratch) scratch = a->packed;
    bytes = d->bytes + base_bytes + b->bytes + 1 + scratch;
    *out_block = NULL;
    if (!(block = (unsigned char*)gpuk__alloc(bytes))) {
        *r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate %zu bytes to unpack the PTX of %s",
                        bytes, b->name);
        return NULL;
    }
    made = block + d->bytes + base_bytes;
    ok = gpuk__unpack(d, block, 0, made + b->bytes + 1);
    if (ok && !a) {
        ok = gpuk__unpack(b, block, d->bytes, made + b->bytes + 1); /* made is right after d */
        made[b->bytes] = 0;
    } else if (ok) { /* a's PTX after d; d again and b's script after that; then the PTX made */
        unsigned char* second = block + d->bytes + a->bytes;
        ok = a->base < 0 && a->pieces && gpuk__unpack(a, block, d->bytes, made + b->bytes + 1);
        memcpy(second, block, d->bytes);
        ok = ok && gpuk__unpack(b, second, d->bytes, made + b->bytes + 1) &&
             gpuk__patch((const char*)block + d->bytes, a->bytes, (const char*)second + d->bytes,
                         b->script, (char*)made, b->bytes);
    }
    if (!ok) {
        gpuk__free(block);
        *r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the PTX of %s in gpuk.h does not unpack (was the "
                        "header edited? tools/gen_ptx.py --from-ptx remakes it)", b->name);
        return NULL;
    }
    *out_block = (char*)block;
    return (char*)made;
}

/* Of base and kernel id's variants in list (ending at kernel -1), the PTX to load on a device
   of compute capability cc (major * 10 + minor) with driver version driver (CUDA major * 1000
   + minor * 10), held to targets up to max_sm where that is not 0: the variant with the highest
   .target the device and driver can take, else base. An architecture-specific variant (sm_90a)
   runs on its own compute capability only (9.0: not 10.x or 12.x, whose drivers refuse sm_90a
   PTX) and beats a plain one of the same target (sm_90), as its instructions are the reason for
   it. */
static const gpuk__builtin_ptx* gpuk__variant_pick(const gpuk__builtin_ptx* base,
                                                   const gpuk__builtin_variant* list, int id,
                                                   int cc, int max_sm, int driver) {
    const gpuk__builtin_ptx* best = base;
    const int sm = max_sm && max_sm < cc ? max_sm : cc;
    for (; list->kernel >= 0; list++) {
        const gpuk__builtin_ptx* p = &list->ptx;
        if (list->kernel != id || p->target > sm || (p->arch_specific && p->target != cc) ||
            gpuk__ptx_needs_cuda(p->version / 10, p->version % 10) > driver)
            continue;
        if (p->target > best->target ||
            (p->target == best->target && p->arch_specific > best->arch_specific))
            best = p;
    }
    return best;
}

/* The PTX to load for kernel id on ctx (gpuk_ctx_desc.kernels_max_sm caps the target); the
   baseline (.target sm_52 or lower) where no variant fits, which every device takes. */
static const gpuk__builtin_ptx* gpuk__builtin_pick(const gpuk_ctx* ctx, int id) {
    return gpuk__variant_pick(gpuk__builtin_ptx_of(id), gpuk__builtin_variants(), id,
                              ctx->info.cc_major * 10 + ctx->info.cc_minor,
                              (int)ctx->kernels_max_sm, gpuk__g.driver_version);
}

/* GPUK__BLOCK (threads a block, every built-in), GPUK__SCAN_ITEMS_4/8, GPUK__TRANSPOSE_TILE,
   GPUK__HIST_SMEM_BINS: generated above from gpuk_kernels.cuh's shared constants */
#define GPUK__REDUCE_MAX_GRID 4096u
#define GPUK__SCRATCH_SCAN (16u + GPUK__REDUCE_MAX_GRID * 16u) /* reduction ticket + partials */
#define GPUK__SCRATCH_MIN ((size_t)1 << 18)
#define GPUK__SCAN_TILE_MIN ((size_t)GPUK__BLOCK * GPUK__SCAN_ITEMS_8) /* the smallest scan tile */
#define GPUK__CU_STREAM_PER_THREAD ((gpuk__cu_stream)(uintptr_t)2)

/* Launch shapes that bench/bench_shapes.c sweeps: built with GPUK__TUNING, it sets a knob to a
   value >= 0 and the launches use that in place of what they choose from the device. A program
   never defines GPUK__TUNING, and GPUK__TUNED is then the choice itself. */
enum {
    GPUK__TUNE_SCAN_AHEAD, GPUK__TUNE_GENERATE_PER_SM, GPUK__TUNE_STENCIL_PER_SM,
    GPUK__TUNE_GEMM_SPLITS, GPUK__TUNE_KNOBS
};
#if defined(GPUK__TUNING)
static long long gpuk__tuned[GPUK__TUNE_KNOBS] = { -1, -1, -1, -1 };
#define GPUK__TUNED(knob, chosen) \
    (gpuk__tuned[knob] >= 0 ? (size_t)gpuk__tuned[knob] : (size_t)(chosen))
#else
#define GPUK__TUNED(knob, chosen) ((size_t)(chosen))
#endif

/* Device scratch for the built-in reductions and scans, one per gpuk stream (kernels on one
   CUDA stream run in order, so they can share it): reductions use the first
   GPUK__SCRATCH_SCAN bytes, scans the rest. Zeroed when allocated; the kernels leave their
   counters as the next launch needs them (the scans their epoch too). Its lock is held from
   taking the area to the launch, so a regrowth by another thread never frees it in between;
   a regrowth waits for this stream only. An area a launch used while its stream was being
   captured has its address in a graph: it is retired instead of freed (gpuk__area_drop). */
typedef struct gpuk__scratch {
    gpuk__mutex lock;
    gpuk_devptr ptr;
    size_t bytes;
    size_t scan_tiles; /* tiles the scan status area has room for */
    gpuk_devptr ws;    /* GEMM's split-K workspace, a separate area (zeroed when allocated) */
    size_t ws_bytes;
    gpuk_devptr sort;  /* the sorts' area: status words, second key and value buffers */
    size_t sort_bytes;
    unsigned captured; /* GPUK__AREA_* of the areas a capture has used */
} gpuk__scratch;
enum { GPUK__AREA_SCAN = 1, GPUK__AREA_WS = 2, GPUK__AREA_SORT = 4 };

/* A scratch area a capture used, given up by its stream (grown, or the stream destroyed)
   while a graph may still use it: freed once the ctx has no graph and no capture open
   (gpuk__retired_trim), else with the ctx. */
typedef struct gpuk__retired {
    struct gpuk__retired* next;
    gpuk_devptr ptr;
} gpuk__retired;

/* The built-in layer's per-ctx state (ctx->layer[GPUK__LAYER_BUILTIN]). */
typedef struct gpuk__builtin_state {
    gpuk__cu_function function[GPUK__KERNEL_COUNT]; /* atomic: published once loaded */
    gpuk__cu_module module[GPUK__KERNEL_COUNT];
    /* the baseline PTX of a kernel whose picked variant can decline a call (see
       gpuk__builtin_twin), loaded beside it the same way; NULL where none is needed */
    gpuk__cu_function base_function[GPUK__KERNEL_COUNT];
    gpuk__cu_module base_module[GPUK__KERNEL_COUNT];
    uint32_t big_shared[GPUK__KERNEL_COUNT];        /* atomic: dynamic shared bytes above 48 KB
                                                       the function was allowed (0: none) */
    uint32_t scratch_count;                         /* stream slots + 1 */
    gpuk__scratch* scratch;                         /* [0]: the ctx default stream */
    gpuk__retired* retired;                         /* under ctx->lock */
} gpuk__builtin_state;

static gpuk__builtin_state* gpuk__builtin_of(const gpuk_ctx* ctx) {
    return (gpuk__builtin_state*)ctx->layer[GPUK__LAYER_BUILTIN];
}

/* One built-in launch: filled by a family function, run by gpuk__builtin_go. */
typedef struct gpuk__kcall gpuk__kcall;
struct gpuk__kcall {
    const char* fn;
    gpuk_ctx* ctx;
    int id;
    gpuk_stream stream;
    gpuk__cu_stream cs;
    uint32_t grid_x, grid_y, grid_z, block_x, block_y, shared;
    size_t workspace_tiles;    /* scans: tiles their status words need; 0: none */
    size_t ws_bytes;           /* GEMM split-K: workspace bytes it needs; 0: none */
    gpuk_devptr* ws_arg;       /* set to the workspace, or to 0 with *splits_arg = 1 where none
                                  can be had (per-thread stream, or a capture that cannot grow
                                  it) */
    uint32_t* splits_arg;
    gpuk_devptr* scratch_arg;  /* kernels with scratch: set to its address (scans: their part) */
    unsigned long long* capacity_arg; /* scans: set to the tiles the status area holds (and
                                         scratch_arg to the scans' part) */
    void** args;
    gpuk__cu_function func;    /* a custom kernel's function (id unused), or NULL */
    int baseline;              /* launch id's baseline PTX, not its variant (gpuk__builtin_twin) */
    const char* func_name;     /* its name, for errors */
    /* called just before the launch (under the stream's scratch lock where the call takes a
       workspace), with the workspace or 0 where none could be had: GEMM's TMA path */
    gpuk_result (*before)(struct gpuk__kcall* k, gpuk_devptr ws);
    void* before_data;
    unsigned int capture;      /* the stream's capture status, asked once a launch
                                  (GPUK__CAPTURE_UNASKED until then: gpuk__capture_status) */
};

/* A module load or an allocation is "unsafe" to the driver while a capture is under way: from
   any thread during one begun in global mode, from the capturing thread in thread-local mode.
   The driver refuses it and invalidates that capture, although the call concerns another
   stream. gpuk's own such calls on a stream that is not itself captured (a built-in's first
   use, its scratch) run with this thread in relaxed mode, which the driver allows; the
   thread's mode is put back after. *old: the mode to put back (~0u: none was changed, the
   driver having no such call). */
static gpuk_result gpuk__capture_relax(const char* fn, unsigned int* old) {
    gpuk__cu_result cr;
    *old = GPUK__CU_STREAM_CAPTURE_MODE_RELAXED;
    if (!GPUK__DRV.cuThreadExchangeStreamCaptureMode) {
        *old = ~0u;
        return GPUK_OK;
    }
    if ((cr = GPUK__DRV.cuThreadExchangeStreamCaptureMode(old)) != 0) {
        *old = ~0u;
        return gpuk__fail_cu(fn, "cuThreadExchangeStreamCaptureMode", cr, "to relaxed");
    }
    return GPUK_OK;
}
static gpuk_result gpuk__capture_restore(const char* fn, unsigned int old) {
    gpuk__cu_result cr;
    /* no call after a fault */
    if (old == ~0u || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return GPUK_OK;
    if ((cr = GPUK__DRV.cuThreadExchangeStreamCaptureMode(&old)) == 0) return GPUK_OK;
    return gpuk__fail_cu(fn, "cuThreadExchangeStreamCaptureMode", cr, "back from relaxed");
}

/* Whether cs is being captured (*status 0: no; 1 active, 2 invalidated), asked of the driver
   only while *status is GPUK__CAPTURE_UNASKED: a launch asks once, whatever needs to know. */
#define GPUK__CAPTURE_UNASKED (~0u)
static gpuk_result gpuk__capture_status(const char* fn, gpuk__cu_stream cs,
                                        unsigned int* status) {
    unsigned int got = 0;
    gpuk__cu_result cr;
    if (*status != GPUK__CAPTURE_UNASKED) return GPUK_OK;
    /* a driver before graphs: none */
    if (GPUK__DRV.cuStreamIsCapturing && (cr = GPUK__DRV.cuStreamIsCapturing(cs, &got)) != 0)
        return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, NULL);
    *status = got;
    return GPUK_OK;
}

/* A capture on the stream makes a first-use load or a scratch allocation impossible: the
   driver would refuse it and invalidate the capture. Checked only on those slow paths. */
static gpuk_result gpuk__not_capturing(const char* fn, gpuk__cu_stream cs, unsigned int* status,
                                       const char* what) {
    gpuk_result r;
    if ((r = gpuk__capture_status(fn, cs, status)) != GPUK_OK) return r;
    if (*status == 0) return GPUK_OK;
    return gpuk__fail(fn, GPUK_ERR_CAPTURING, "the stream is being captured into a CUDA graph, and "
                      "this call needs %s first, which a capture cannot hold", what);
}

/* Kernels whose variants decline some calls, which the baseline then serves: the 3x3's tiles
   need rows 16-byte aligned apart (and, on sm_90, a tensor map). A decline launches the
   baseline PTX itself (its own module beside the variant's) rather than a copy of its code
   inside the variant, whose registers are set for the tiles. */
static int gpuk__builtin_twin(int id) {
#if defined(GPUK__LAUNCHER_STENCIL)
    return id == GPUK__K_STENCIL3X3_F32 || id == GPUK__K_STENCIL3X3_I32;
#else
    (void)id;
    return 0;
#endif
}

/* The function of built-in kernel id on ctx, its module JIT-loaded on first use; baseline: the
   baseline PTX's (the same function where no variant was picked). No lock is held over the
   JIT, so launches of loaded kernels never wait for it; two threads that load the same kernel
   at once both JIT it, and the second unloads its copy. */
static gpuk_result gpuk__builtin_function_of(const char* fn, gpuk_ctx* ctx, int id,
                                             gpuk__cu_stream cs, int baseline,
                                             gpuk__cu_function* out) {
    gpuk__builtin_state* st = gpuk__builtin_of(ctx);
    gpuk__cu_function* const slot = baseline ? &st->base_function[id] : &st->function[id];
    gpuk__cu_module* const mslot = baseline ? &st->base_module[id] : &st->module[id];
    const gpuk__builtin_ptx* b;
    gpuk__cu_module mod = NULL;
    gpuk__cu_function f = NULL;
    gpuk__cu_result cr;
    gpuk_result r;
    unsigned int relaxed, capture = GPUK__CAPTURE_UNASKED;
    char *text, *block;
    /* first, and alone on a launch's way: a loaded function */
    if ((*out = (gpuk__cu_function)GPUK__ATOMIC_LOAD_PTR(slot)) != NULL) return GPUK_OK;
    b = gpuk__builtin_pick(ctx, id);
    if (baseline) {
        if (b == gpuk__builtin_ptx_of(id)) /* no variant picked: the baseline is the function */
            return gpuk__builtin_function_of(fn, ctx, id, cs, 0, out);
        b = gpuk__builtin_ptx_of(id);
    }
    if (cs && (r = gpuk__not_capturing(fn, cs, &capture, "loading the kernel "
                                       "(gpuk_kernels_load)")) != GPUK_OK)
        return r;
    /* unpacked once per kernel and ctx, at its first use */
    if (!(text = gpuk__builtin_text(fn, b, &block, &r))) return r;
    /* a capture on another stream must not see the load */
    if ((r = gpuk__capture_relax(fn, &relaxed)) == GPUK_OK) {
        gpuk_result back;
        r = gpuk__jit_load(fn, ctx, (const unsigned char*)text, b->bytes, 0, 1, b->name, &mod);
        if (r == GPUK_OK && (back = gpuk__capture_restore(fn, relaxed)) != GPUK_OK) {
            /* still relaxed */
            if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuModuleUnload(mod);
            r = back;
        } else if (r != GPUK_OK) {
            gpuk__capture_restore(fn, relaxed);
        }
    }
    gpuk__free(block);
    if (r != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuModuleGetFunction(&f, mod, b->name)) != 0) {
        r = gpuk__fail_cu(fn, "cuModuleGetFunction", cr, b->name);
        /* none after a sticky fault */
        if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuModuleUnload(mod);
        return r;
    }
    if (GPUK__ATOMIC_CAS_PTR(slot, NULL, f)) {
        *mslot = mod; /* read only by ctx destroy, which no use may race */
        *out = f;
        return GPUK_OK;
    }
    /* another thread loaded it meanwhile: use that one */
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuModuleUnload(mod);
    *out = (gpuk__cu_function)GPUK__ATOMIC_LOAD_PTR(slot);
    return GPUK_OK;
}

static gpuk_result gpuk__builtin_function(const char* fn, gpuk_ctx* ctx, int id, gpuk__cu_stream cs,
                                          gpuk__cu_function* out) {
    return gpuk__builtin_function_of(fn, ctx, id, cs, 0, out);
}

/* Scratch layout: [reduction ticket + partials: GPUK__SCRATCH_SCAN][scan ticket and epoch: 8,
   sweep cursor: 8][GPUK__SCAN_STATUS_BYTES of status for each of scan_tiles tiles]. The status
   area only ever holds tile status, so leftovers can never look like a flag of a later scan. */
static size_t gpuk__scratch_bytes(size_t scan_tiles) {
    return GPUK__SCRATCH_SCAN + 16 + scan_tiles * GPUK__SCAN_STATUS_BYTES;
}

/* CU_STREAM_PER_THREAD is a different CUDA stream on every thread, so one scratch area for
   the handle would be shared by kernels that do not run in order. */
static gpuk_result gpuk__scratch_stream_ok(const char* fn, gpuk_stream stream, gpuk__cu_stream cs) {
    if (cs != GPUK__CU_STREAM_PER_THREAD) return GPUK_OK;
    return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                      "stream 0x%x wraps CU_STREAM_PER_THREAD, a different CUDA stream on each "
                      "thread; reductions and scans keep scratch per stream: give them a stream of "
                      "their own (gpuk_stream_create)", stream.id);
}

/* The scratch of the gpuk stream, locked; NULL with the error set when the handle is bad or
   stands for a different CUDA stream on each thread. gpuk__scratch_unlock releases it. */
static gpuk__scratch* gpuk__scratch_lock(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                         gpuk__cu_stream cs, gpuk_result* r) {
    gpuk__builtin_state* st = gpuk__builtin_of(ctx);
    uint32_t slot = gpuk__stream_slot_of(ctx, stream);
    gpuk__scratch* s;
    if ((*r = gpuk__scratch_stream_ok(fn, stream, cs)) != GPUK_OK) return NULL;
    GPUK_ASSERT(slot < st->scratch_count);
    s = &st->scratch[slot];
    gpuk__mutex_lock(&s->lock);
    *r = GPUK_OK;
    return s;
}

static void gpuk__scratch_unlock(gpuk__scratch* s) { gpuk__mutex_unlock(&s->lock); }

/* Frees one area of a stream's scratch (the driver waits for kernels still using it); keeps
   the first failure. 1: forgotten. 0: the driver would not free it, so it stays recorded (and
   usable) and a later release tries again instead of leaking it; after a sticky fault it is
   forgotten, as every driver object is. */
static int gpuk__area_free(const char* fn, gpuk_devptr* ptr, size_t* bytes, gpuk_result* first) {
    gpuk_result r = GPUK_OK, back;
    unsigned int old;
    int freed = !*ptr;
    /* relaxed for the free, as gpuk__alloc_zeroed */
    if (*ptr && !GPUK__ATOMIC_LOAD(&gpuk__g.broken) &&
        (r = gpuk__capture_relax(fn, &old)) == GPUK_OK) {
        GPUK__KEEP_FIRST(r, "cuMemFree", GPUK__DRV.cuMemFree(*ptr));
        freed = r == GPUK_OK;
        back = gpuk__capture_restore(fn, old);
        if (r == GPUK_OK) r = back; /* freed all the same: said, and forgotten */
    }
    if (*first == GPUK_OK) *first = r;
    if (!freed && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return 0;
    *ptr = 0;
    *bytes = 0;
    return 1;
}

/* Whether a graph of ctx may hold a retired area (call under ctx->lock): a gpuk_graph alive
   (its slot is taken before gpuk_graph_end_capture ends the capture, so a graph being made
   counts), a conditional capture under way, or a capture open on one of ctx's streams (a
   capture's other streams may be joined back already); 1 where the driver cannot say.
   Graphs made by the driver's own calls are not seen. */
static int gpuk__graphs_may_hold(const char* fn, const gpuk_ctx* ctx) {
    const gpuk__pool* graphs = &ctx->pools[gpuk__kind_graph];
    const gpuk__pool* streams = &ctx->pools[gpuk__kind_stream];
    unsigned int status = 0;
    uint32_t i, id;
    if (graphs->free_count + 1u < graphs->size) return 1;
    for (i = 0; i < 4; i++)
        if (ctx->conds[i].stream) return 1;
    if (!GPUK__DRV.cuStreamIsCapturing) return 0; /* a driver before graphs */
    if (ctx->default_stream &&
        (!gpuk__tolerate(fn, "cuStreamIsCapturing",
                         GPUK__DRV.cuStreamIsCapturing(ctx->default_stream, &status)) || status))
        return 1;
    for (i = 1; i < streams->size; i++) {
        const gpuk__stream_slot* slot = (const gpuk__stream_slot*)gpuk__pool_slot(streams, i);
        memcpy(&id, slot, sizeof id);
        if (id && slot->cu &&
            (!gpuk__tolerate(fn, "cuStreamIsCapturing",
                             GPUK__DRV.cuStreamIsCapturing(slot->cu, &status)) || status))
            return 1;
    }
    return 0;
}

/* Frees st's retired areas (ctx's) once no graph of ctx may hold them: tried when an area is
   retired and when a graph is destroyed. An area the driver would not free stays on the
   list, for a later try or the ctx destroy (which reports it). */
static void gpuk__retired_trim(const char* fn, gpuk_ctx* ctx, gpuk__builtin_state* st) {
    gpuk__retired *list = NULL, *kept = NULL, *node;
    unsigned int old = ~0u;
    gpuk__mutex_lock(&ctx->lock);
    if (st->retired && !GPUK__ATOMIC_LOAD(&gpuk__g.broken) && !gpuk__graphs_may_hold(fn, ctx)) {
        list = st->retired;
        st->retired = NULL;
    }
    gpuk__mutex_unlock(&ctx->lock);
    if (!list) return;
    /* relaxed for the frees, as gpuk__area_free */
    if (gpuk__capture_relax(fn, &old) != GPUK_OK) {
        kept = list;
        list = NULL;
    }
    while (list) {
        gpuk__cu_result cr = 0;
        node = list;
        list = node->next;
        /* after a sticky fault forgotten, as every driver object is */
        if (GPUK__ATOMIC_LOAD(&gpuk__g.broken) ||
            gpuk__tolerate(fn, "cuMemFree", cr = GPUK__DRV.cuMemFree(node->ptr)) ||
            gpuk__is_sticky((int)cr)) {
            gpuk__free(node);
            continue;
        }
        gpuk__log(GPUK_LOG_WARN, (int)cr, "cuMemFree failed on a scratch area kept for CUDA "
                  "graphs; the ctx destroy tries again");
        node->next = kept;
        kept = node;
    }
    (void)gpuk__capture_restore(fn, old);
    if (!kept) return;
    for (node = kept; node->next; node = node->next) {}
    gpuk__mutex_lock(&ctx->lock);
    node->next = st->retired;
    st->retired = kept;
    gpuk__mutex_unlock(&ctx->lock);
}

/* Gives up area bit of s (locked; at ptr and bytes) as its stream grows it or is destroyed:
   freed where no capture used it, else retired to the ctx's list (a graph may still use it)
   and freed there once no graph can (gpuk__retired_trim). Returns as gpuk__area_free: 1
   forgotten; 0 kept, recorded and usable, the failure in *first (or the retired area's note
   could not be allocated). */
static int gpuk__area_drop(const char* fn, gpuk_ctx* ctx, gpuk__scratch* s, unsigned bit,
                           gpuk_devptr* ptr, size_t* bytes, gpuk_result* first) {
    gpuk__builtin_state* st = gpuk__builtin_of(ctx);
    gpuk__retired* node;
    if (!(s->captured & bit) || !*ptr || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        if (!gpuk__area_free(fn, ptr, bytes, first)) return 0;
        s->captured &= ~bit;
        return 1;
    }
    if (!(node = (gpuk__retired*)gpuk__alloc(sizeof *node))) {
        gpuk_result r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the note of a "
                                   "scratch area a CUDA graph may use; the area stays");
        if (*first == GPUK_OK) *first = r;
        return 0;
    }
    node->ptr = *ptr;
    gpuk__mutex_lock(&ctx->lock);
    node->next = st->retired;
    st->retired = node;
    gpuk__mutex_unlock(&ctx->lock);
    *ptr = 0;
    *bytes = 0;
    s->captured &= ~bit;
    gpuk__retired_trim(fn, ctx, st);
    return 1;
}

/* Every area of s (the scan scratch, GEMM's workspace, the sorts' area), given up: its
   stream is being destroyed, or its ctx (which clears s->captured first: the graphs go too). */
static void gpuk__scratch_drop(const char* fn, gpuk_ctx* ctx, gpuk__scratch* s,
                               gpuk_result* first) {
    if (gpuk__area_drop(fn, ctx, s, GPUK__AREA_SCAN, &s->ptr, &s->bytes, first))
        s->scan_tiles = 0;
    gpuk__area_drop(fn, ctx, s, GPUK__AREA_WS, &s->ws, &s->ws_bytes, first);
    gpuk__area_drop(fn, ctx, s, GPUK__AREA_SORT, &s->sort, &s->sort_bytes, first);
}

/* A launch takes area bit of s (locked): marked where the stream is being captured, the
   area's address then being in a graph. Asks at most the launch's one capture query, none
   once the area is marked. */
static gpuk_result gpuk__scratch_use(const char* fn, gpuk__scratch* s, unsigned bit,
                                     gpuk__cu_stream cs, unsigned int* capture) {
    gpuk_result r;
    if (s->captured & bit) return GPUK_OK;
    if ((r = gpuk__capture_status(fn, cs, capture)) != GPUK_OK) return r;
    if (*capture) s->captured |= bit;
    return GPUK_OK;
}

/* bytes of device memory, cleared on stream cs (in order before the kernels that use it).
   cs is not captured (the callers check); a capture elsewhere must not see the allocation. */
static gpuk_result gpuk__alloc_zeroed(const char* fn, gpuk__cu_stream cs, size_t bytes,
                                      const char* what, gpuk_devptr* out) {
    gpuk__cu_result cr;
    gpuk_result r;
    unsigned int old;
    *out = 0;
    if ((r = gpuk__capture_relax(fn, &old)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemAlloc(out, bytes);
    if (cr != 0) {
        r = gpuk__fail_cu(fn, "cuMemAlloc", cr, what); /* first: it notes a sticky fault */
        gpuk__capture_restore(fn, old);
        *out = 0;
        return r;
    }
    if ((r = gpuk__capture_restore(fn, old)) != GPUK_OK) {
        if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuMemFree(*out); /* still relaxed */
        *out = 0;
        return r;
    }
    if ((cr = GPUK__DRV.cuMemsetD8Async(*out, 0, bytes, cs)) != 0) {
        r = gpuk__fail_cu(fn, "cuMemsetD8Async", cr, what);
        if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuMemFree(*out);
        *out = 0;
        return r;
    }
    return GPUK_OK;
}

/* Makes ctx's stream's GEMM workspace s (locked) at least bytes, zeroed when new (its tile
   counters must start at 0; the kernels reset them). *got: 1 ready, 0 none to be had without
   failing (a capture is under way: the caller then does without). *capture: as
   gpuk__capture_status. */
static gpuk_result gpuk__ws_reserve(const char* fn, gpuk_ctx* ctx, gpuk__scratch* s,
                                    gpuk__cu_stream cs, size_t bytes, unsigned int* capture,
                                    int* got) {
    gpuk__cu_result cr;
    gpuk_devptr p = 0;
    gpuk_result r = GPUK_OK;
    const size_t want = bytes > 2 * s->ws_bytes ? bytes : 2 * s->ws_bytes;
    *got = s->ws && s->ws_bytes >= bytes;
    if (*got) return GPUK_OK;
    if ((r = gpuk__capture_status(fn, cs, capture)) != GPUK_OK) return r;
    if (*capture) return GPUK_OK;
    if (s->ws) {
        if ((cr = GPUK__DRV.cuStreamSynchronize(cs)) != 0)
            return gpuk__fail_cu(fn, "cuStreamSynchronize", cr,
                                 "before growing the GEMM workspace");
        if (!gpuk__area_drop(fn, ctx, s, GPUK__AREA_WS, &s->ws, &s->ws_bytes, &r)) return r;
    }
    if ((r = gpuk__alloc_zeroed(fn, cs, want, "the GEMM split-K workspace", &p)) != GPUK_OK)
        return r;
    s->ws = p;
    s->ws_bytes = want;
    *got = 1;
    return GPUK_OK;
}

/* Makes ctx's stream's scratch s (locked) hold scans of tiles tiles, zeroed when new. A
   regrowth waits for the stream first: kernels queued earlier may use the old area.
   *capture: as gpuk__capture_status. */
static gpuk_result gpuk__scratch_reserve(const char* fn, gpuk_ctx* ctx, gpuk__scratch* s,
                                         gpuk__cu_stream cs, size_t tiles,
                                         unsigned int* capture) {
    gpuk__cu_result cr;
    gpuk_devptr p = 0;
    size_t want_tiles, want;
    gpuk_result r = GPUK_OK;
    if (s->ptr && s->scan_tiles >= tiles) return GPUK_OK;
    /* room for twice the tiles (the growth step) must not overflow size_t (32-bit hosts) */
    if (tiles > ((size_t)-1 - GPUK__SCRATCH_SCAN - 16) / ((size_t)2 * GPUK__SCAN_STATUS_BYTES))
        return gpuk__fail(fn, GPUK_ERR_LIMIT,
                          "scratch for %zu scan tiles would pass SIZE_MAX", tiles);
    if ((r = gpuk__not_capturing(fn, cs, capture, "device scratch (gpuk_kernels_reserve)")) !=
        GPUK_OK)
        return r;
    want_tiles = tiles > 2 * s->scan_tiles ? tiles : 2 * s->scan_tiles;
    if (want_tiles < (GPUK__SCRATCH_MIN - GPUK__SCRATCH_SCAN) / GPUK__SCAN_STATUS_BYTES)
        want_tiles = (GPUK__SCRATCH_MIN - GPUK__SCRATCH_SCAN) / GPUK__SCAN_STATUS_BYTES;
    want = gpuk__scratch_bytes(want_tiles);
    if (s->ptr) {
        if ((cr = GPUK__DRV.cuStreamSynchronize(cs)) != 0)
            return gpuk__fail_cu(fn, "cuStreamSynchronize", cr, "before growing the scratch");
        /* GEMM's workspace stays */
        if (!gpuk__area_drop(fn, ctx, s, GPUK__AREA_SCAN, &s->ptr, &s->bytes, &r)) return r;
        s->scan_tiles = 0;
    }
    if ((r = gpuk__alloc_zeroed(fn, cs, want, "scratch for reductions and scans", &p)) != GPUK_OK)
        return r;
    s->ptr = p;
    s->bytes = want;
    s->scan_tiles = want_tiles;
    return GPUK_OK;
}

/* Allows built-in id's function f bytes of dynamic shared memory where they pass the 48 KB a
   launch gets without asking (the sm_90a TF32 GEMM), once a ctx. */
static gpuk_result gpuk__builtin_allow_shared(const char* fn, gpuk_ctx* ctx, int id,
                                              gpuk__cu_function f, uint32_t bytes) {
    gpuk__cu_result cr;
    if (bytes <= 48u * 1024u ||
        (uint32_t)GPUK__ATOMIC_LOAD(&gpuk__builtin_of(ctx)->big_shared[id]) >= bytes)
        return GPUK_OK;
    if ((cr = GPUK__DRV.cuFuncSetAttribute(f, GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)bytes)) != 0)
        return gpuk__fail_cu(fn, "cuFuncSetAttribute", cr,
                             "allowing the kernel its dynamic shared memory");
    GPUK__ATOMIC_STORE(&gpuk__builtin_of(ctx)->big_shared[id], bytes);
    return GPUK_OK;
}

/* Loads (first use), takes scratch where the kernel needs it, and launches. Only the stream's
   own scratch lock is held, from taking the area to the launch. */
GPUK__SHARED gpuk_result gpuk__builtin_go(gpuk__kcall* k) {
    gpuk__cu_function f = NULL;
    gpuk__scratch* s = NULL;
    gpuk__cu_result cr;
    gpuk_result r;
    if (k->scratch_arg && (r = gpuk__scratch_stream_ok(k->fn, k->stream, k->cs)) != GPUK_OK)
        return r;
    if ((r = gpuk__enter(k->fn, k->ctx)) != GPUK_OK) return r;
    if (k->func) f = k->func;
    else if ((r = gpuk__builtin_function_of(k->fn, k->ctx, k->id, k->cs, k->baseline, &f)) !=
             GPUK_OK)
        return r;
    if (k->ws_bytes) { /* split-K: the workspace, or no split where there can be none */
        int got = 0;
        if (k->cs != GPUK__CU_STREAM_PER_THREAD) {
            if (!(s = gpuk__scratch_lock(k->fn, k->ctx, k->stream, k->cs, &r))) return r;
            if ((r = gpuk__ws_reserve(k->fn, k->ctx, s, k->cs, k->ws_bytes, &k->capture,
                                      &got)) != GPUK_OK ||
                (got && (r = gpuk__scratch_use(k->fn, s, GPUK__AREA_WS, k->cs, &k->capture)) !=
                            GPUK_OK))
                goto done;
        }
        *k->ws_arg = got ? s->ws : 0;
        if (!got) *k->splits_arg = 1;
    }
    if (k->scratch_arg) {
        if (!(s = gpuk__scratch_lock(k->fn, k->ctx, k->stream, k->cs, &r))) return r;
        if ((r = gpuk__scratch_reserve(k->fn, k->ctx, s, k->cs, k->workspace_tiles,
                                       &k->capture)) != GPUK_OK ||
            (r = gpuk__scratch_use(k->fn, s, GPUK__AREA_SCAN, k->cs, &k->capture)) != GPUK_OK)
            goto done;
        *k->scratch_arg = s->ptr;
        if (k->capacity_arg) {
            *k->scratch_arg = s->ptr + GPUK__SCRATCH_SCAN;
            *k->capacity_arg = s->scan_tiles;
        }
    }
    if (k->before && (r = k->before(k, k->ws_arg ? *k->ws_arg : 0)) != GPUK_OK) goto done;
    if (!k->func &&
        (r = gpuk__builtin_allow_shared(k->fn, k->ctx, k->id, f, k->shared)) != GPUK_OK)
        goto done;
    cr = GPUK__DRV.cuLaunchKernel(f, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, 1,
                                  k->shared, k->cs, k->args, NULL);
    if (cr)
        r = gpuk__fail_cu(k->fn, "cuLaunchKernel", cr,
                          k->func ? k->func_name : gpuk__builtin_ptx_of(k->id)->name);
    else /* the built-ins' names are static, a custom kernel's lives in its kernel slot */
        gpuk__launch_note(k->ctx, k->func ? k->func_name : gpuk__builtin_ptx_of(k->id)->name);
done:
    if (s) gpuk__scratch_unlock(s);
    return r;
}

/* Checks common to every built-in call; fills the launch record's ctx, stream and ids. */
GPUK__SHARED gpuk_result gpuk__kcall_init(gpuk__kcall* k, const char* fn, int id, gpuk_ctx* ctx,
                                          gpuk_stream stream) {
    memset(k, 0, sizeof *k);
    k->capture = GPUK__CAPTURE_UNASKED;
    k->fn = fn;
    k->ctx = ctx;
    k->id = id;
    k->stream = stream;
    k->block_x = GPUK__BLOCK;
    k->block_y = 1;
    k->grid_y = 1;
    k->grid_z = 1;
    GPUK__CTX_CHECK(fn, ctx); /* first: a NULL ctx gives a constant error, never GPUK_OK */
    GPUK__ALIVE(fn);
    return gpuk__stream_resolve(fn, ctx, stream, &k->cs);
}

/* ---- the layer's hooks ---- */
static gpuk_result gpuk__builtin_ctx_init(const char* fn, gpuk_ctx* ctx, void** state) {
    gpuk__builtin_state* st = (gpuk__builtin_state*)gpuk__alloc(sizeof *st);
    uint32_t i;
    if (st) {
        st->scratch_count = ctx->pools[gpuk__kind_stream].size; /* slot 0 (reserved): the default */
        st->scratch = (gpuk__scratch*)gpuk__alloc(sizeof *st->scratch * st->scratch_count);
    }
    if (!st || !st->scratch) {
        gpuk__free(st);
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the built-in kernels' state");
    }
    for (i = 0; i < st->scratch_count; i++) gpuk__mutex_init(&st->scratch[i].lock);
    *state = st;
    return GPUK_OK;
}

static void gpuk__builtin_stream_release(const char* fn, gpuk_ctx* ctx, void* state, uint32_t slot,
                                         gpuk_result* first) {
    gpuk__builtin_state* st = (gpuk__builtin_state*)state;
    if (st && slot < st->scratch_count) gpuk__scratch_drop(fn, ctx, &st->scratch[slot], first);
}

static void gpuk__builtin_graph_destroyed(const char* fn, gpuk_ctx* ctx, void* state) {
    if (state) gpuk__retired_trim(fn, ctx, (gpuk__builtin_state*)state);
}

static void gpuk__builtin_ctx_release(const char* fn, gpuk_ctx* ctx, void** state,
                                      gpuk_result* first) {
    gpuk__builtin_state* st = (gpuk__builtin_state*)*state;
    gpuk_result r = GPUK_OK;
    uint32_t i;
    if (!st) return;
    for (i = 0; i < 2 * GPUK__KERNEL_COUNT; i++) { /* the modules, then the baselines' */
        gpuk__cu_module* m = i < GPUK__KERNEL_COUNT ? &st->module[i]
                                                    : &st->base_module[i - GPUK__KERNEL_COUNT];
        gpuk_result one = GPUK_OK;
        if (!*m) continue;
        GPUK__KEEP_FIRST(one, "cuModuleUnload", GPUK__DRV.cuModuleUnload(*m));
        if (one == GPUK_OK || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) *m = NULL;
        else if (r == GPUK_OK) r = one;
    }
    for (i = 0; i < st->scratch_count; i++) {
        st->scratch[i].captured = 0; /* freed, not retired: the ctx's graphs go with it */
        gpuk__scratch_drop(fn, ctx, &st->scratch[i], &r);
    }
    while (st->retired) { /* the device is idle, and the graphs go with the ctx */
        gpuk__retired* node = st->retired;
        size_t bytes = 0;
        if (!gpuk__area_free(fn, &node->ptr, &bytes, &r)) break;
        st->retired = node->next;
        gpuk__free(node);
    }
    if (*first == GPUK_OK) *first = r;
    if (r != GPUK_OK && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return; /* kept for the retry */
    for (i = 0; i < st->scratch_count; i++) gpuk__mutex_fini(&st->scratch[i].lock);
    gpuk__free(st->scratch);
    gpuk__free(st);
    *state = NULL;
}

static const gpuk__layer gpuk__builtin_layer = {
    gpuk__builtin_ctx_init, gpuk__builtin_stream_release, gpuk__builtin_ctx_release,
    gpuk__builtin_graph_destroyed
};

static const gpuk__layer* gpuk__layer_of(int which) {
    return which == GPUK__LAYER_BUILTIN ? &gpuk__builtin_layer : NULL;
}

/* ---- preparing for a graph capture ---- */
/* 1 when the kernel called name (with or without "gpuk_") is matched by pattern of len bytes,
   which may end in '*' (a prefix). */
static int gpuk__name_matches(const char* name, const char* pattern, size_t len) {
    if (!(len >= 5 && strncmp(pattern, "gpuk_", 5) == 0)) name += 5; /* names start "gpuk_" */
    if (len && pattern[len - 1] == '*') return strncmp(name, pattern, len - 1) == 0;
    return strlen(name) == len && strncmp(name, pattern, len) == 0;
}

GPUK__IMPL gpuk_result gpuk_kernels_load(gpuk_ctx* ctx, const char* names) {
    static const char fn[] = "gpuk_kernels_load";
    const char* p = names;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!names) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "names is NULL");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    for (;;) {
        size_t len;
        int i, c, found = 0, left_out = 0;
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
        if (!*p) return GPUK_OK;
        for (len = 0; p[len] && p[len] != ' ' && p[len] != ',' && p[len] != '\t' &&
             p[len] != '\n'; len++) {}
        for (i = 0; i < GPUK__KERNEL_COUNT; i++) {
            gpuk__cu_function f;
            if (!gpuk__name_matches(gpuk__builtin_ptx_of(i)->name, p, len)) continue;
            if (!gpuk__builtin_ptx_of(i)->pieces) { /* its family is left out of this program */
                left_out = 1;
                continue;
            }
            found = 1;
            if ((r = gpuk__builtin_function(fn, ctx, i, NULL, &f)) != GPUK_OK) return r;
            /* and the baseline that serves what the variant declines, for a capture's sake */
            if (gpuk__builtin_twin(i) &&
                (r = gpuk__builtin_function_of(fn, ctx, i, NULL, 1, &f)) != GPUK_OK)
                return r;
            /* and every kernel its launcher may run instead, for the same reason */
            for (c = gpuk__builtin_companion_of(i, -1); c >= 0;
                 c = gpuk__builtin_companion_of(i, c))
                if ((r = gpuk__builtin_function(fn, ctx, c, NULL, &f)) != GPUK_OK) return r;
        }
        if (!found) {
            char name[64];
            gpuk__copy_text(name, len + 1 < sizeof name ? len + 1 : sizeof name, p);
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, left_out ? "'%s' names kernels of a family "
                              "this program leaves out (GPUK_NO_<FAMILY> or GPUK_ONLY_<FAMILY>)"
                              : "no built-in kernel is named '%s'", name);
        }
        p += len;
    }
}

GPUK__IMPL gpuk_result gpuk_kernels_reserve(gpuk_ctx* ctx, gpuk_stream stream, size_t max_scan_n) {
    static const char fn[] = "gpuk_kernels_reserve";
    gpuk__cu_stream cs;
    gpuk__scratch* s;
    gpuk_result r;
    unsigned int capture = GPUK__CAPTURE_UNASKED;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (!(s = gpuk__scratch_lock(fn, ctx, stream, cs, &r))) return r;
    /* tiles of the smallest tile size, so a scan of any type fits */
    r = gpuk__scratch_reserve(fn, ctx, s, cs, max_scan_n / GPUK__SCAN_TILE_MIN +
                                                  (max_scan_n % GPUK__SCAN_TILE_MIN != 0),
                              &capture);
    gpuk__scratch_unlock(s);
    return r;
}

#if defined(GPUK__LAUNCHER_SORT)
/* Whether sort kernel id runs its variant on ctx (4-byte pairs on sm_90 and newer: the
   values moved after the keys, SORT_ITEMS_4M keys a thread); the other sorts have none. */
static int gpuk__sort_variant(const gpuk_ctx* ctx, int id) {
    return gpuk__builtin_pick(ctx, id) != gpuk__builtin_ptx_of(id);
}

/* The sorts' scratch for n keys of key bytes (tiles of GPUK__BLOCK times GPUK__SORT_ITEMS_4K
   4-byte keys alone, _4 with values (_4M in the sm_90 variant), _8K 8-byte keys alone, _8
   with values): [bins: 8 passes x 256 u64][8 u32 tickets][256 status words (u64) a tile] then
   the second key buffer and, for pairs, the second value buffer, each at a multiple of 256
   bytes; 0 where the size passes SIZE_MAX. */
static size_t gpuk__sort_tile(size_t key, int pairs, int variant) {
    return (size_t)GPUK__BLOCK * (variant ? GPUK__SORT_ITEMS_4M
                                  : key == 8 ? (pairs ? GPUK__SORT_ITEMS_8 : GPUK__SORT_ITEMS_8K)
                                  : pairs ? GPUK__SORT_ITEMS_4 : GPUK__SORT_ITEMS_4K);
}
#define GPUK__SORT_HEAD_BYTES ((size_t)(8 * 256 + 8) * 8)
#define GPUK__SORT_UP(x) (((x) + 255) & ~(size_t)255)
static size_t gpuk__sort_bytes(size_t n, size_t key, int pairs, int variant, size_t* keys_at,
                               size_t* vals_at) {
    const size_t tiles = n / gpuk__sort_tile(key, pairs, variant) + 1;
    if (n > ((size_t)-1 - 4096) / 16 - tiles * 2048 / 16) return 0; /* 13 bytes a key + status */
    *keys_at = GPUK__SORT_UP(GPUK__SORT_HEAD_BYTES + tiles * 256 * 8);
    *vals_at = GPUK__SORT_UP(*keys_at + n * key);
    return *vals_at + (pairs ? GPUK__SORT_UP(n * 4) : 0);
}

/* Makes ctx's stream's sort area s (locked) at least bytes. Nothing in it needs clearing when
   new: each sort clears its head and status words. *capture: as gpuk__capture_status. */
static gpuk_result gpuk__sort_reserve(const char* fn, gpuk_ctx* ctx, gpuk__scratch* s,
                                      gpuk__cu_stream cs, size_t bytes, unsigned int* capture) {
    gpuk__cu_result cr;
    gpuk_devptr p = 0;
    gpuk_result r = GPUK_OK;
    if (s->sort && s->sort_bytes >= bytes) return GPUK_OK;
    if ((r = gpuk__not_capturing(fn, cs, capture, "sort scratch (gpuk_kernels_reserve_sort)")) !=
        GPUK_OK)
        return r;
    if (s->sort) {
        if ((cr = GPUK__DRV.cuStreamSynchronize(cs)) != 0)
            return gpuk__fail_cu(fn, "cuStreamSynchronize", cr, "before growing the sort scratch");
        if (!gpuk__area_drop(fn, ctx, s, GPUK__AREA_SORT, &s->sort, &s->sort_bytes, &r)) return r;
    }
    if ((r = gpuk__alloc_zeroed(fn, cs, bytes, "sort scratch", &p)) != GPUK_OK) return r;
    s->sort = p;
    s->sort_bytes = bytes;
    return GPUK_OK;
}
#endif /* GPUK__LAUNCHER_SORT */

GPUK__IMPL gpuk_result gpuk_kernels_reserve_sort(gpuk_ctx* ctx, gpuk_stream stream,
                                                 size_t max_sort_n) {
    static const char fn[] = "gpuk_kernels_reserve_sort";
#if defined(GPUK__LAUNCHER_SORT)
    gpuk__cu_stream cs;
    gpuk__scratch* s;
    gpuk_result r;
    size_t bytes = 0, keys_at, vals_at;
    unsigned int capture = GPUK__CAPTURE_UNASKED;
    int kind;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    /* the most any sort of max_sort_n keys takes: 4- or 8-byte keys, alone or with values (the
       tile sizes differ, and with them the status words) */
    for (kind = 0; kind < 4; kind++) {
        static const int ids[4] = { GPUK__K_SORT_KEYS_U32, GPUK__K_SORT_PAIRS_U32,
                                    GPUK__K_SORT_KEYS_U64, GPUK__K_SORT_PAIRS_U64 };
        const size_t b = gpuk__sort_bytes(max_sort_n, kind < 2 ? 4 : 8, kind % 2,
                                          gpuk__sort_variant(ctx, ids[kind]), &keys_at, &vals_at);
        if (!b)
            return gpuk__fail(fn, GPUK_ERR_LIMIT, "scratch for sorts of %zu keys would pass "
                              "SIZE_MAX", max_sort_n);
        if (b > bytes) bytes = b;
    }
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (!(s = gpuk__scratch_lock(fn, ctx, stream, cs, &r))) return r;
    r = gpuk__sort_reserve(fn, ctx, s, cs, bytes, &capture);
    gpuk__scratch_unlock(s);
    return r;
#else
    (void)stream;
    (void)max_sort_n;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "this program leaves the sort family out "
                      "(GPUK_NO_SORT or GPUK_ONLY_<FAMILY>)");
#endif
}

/* Address of n elements of elem bytes at a, after checking the handle, the bounds (without
   overflow) and the element alignment. */
GPUK__SHARED gpuk_result gpuk__array(const char* fn, const gpuk_ctx* ctx, const char* what,
                                     gpuk_array a, size_t elem, size_t n, gpuk_devptr* out) {
    const gpuk__buffer_slot* s = gpuk__buffer_lookup(ctx, a.buffer.id);
    size_t cap;
    *out = 0;
    if (!s) return gpuk__bad_handle(fn, what, a.buffer.id);
    cap = s->bytes / elem;
    if (a.first > cap || n > cap - a.first)
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS,
                          "%s: elements %zu to %zu + %zu exceed buffer '%s' (%zu elements of %zu "
                          "bytes)", what, a.first, a.first, n, s->label, cap, elem);
    *out = s->ptr + (gpuk_devptr)a.first * elem;
    if (*out % elem)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "%s: address 0x%llx is not aligned to its %zu-byte elements",
                          what, (unsigned long long)*out, elem);
    return GPUK_OK;
}

/* Two arrays that share bytes but do not start together: a kernel would read what it wrote.
   same_ok: the in-place case (the same first element) is allowed; every caller that allows it
   reads and writes elements of one size, element i by thread i alone. */
GPUK__SHARED gpuk_result gpuk__overlap(const char* fn, const char* what, gpuk_devptr p,
                                       gpuk_devptr q, size_t bytes_p, size_t bytes_q,
                                       int same_ok) {
    if (!bytes_p || !bytes_q || p >= q + bytes_q || q >= p + bytes_p) return GPUK_OK;
    if (same_ok && p == q) return GPUK_OK;
    return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s overlap%s", what,
                      same_ok ? " without being the same array (in-place use needs the same "
                                "first element)"
                              : "");
}

/* Blocks for units of work at per_block units a block, at least 1 and at most cap. */
GPUK__SHARED uint32_t gpuk__grid(size_t units, size_t per_block, size_t cap) {
    size_t g = units / per_block + (units % per_block != 0);
    if (g < 1) g = 1;
    return (uint32_t)(g < cap ? g : cap);
}

#if defined(GPUK__LAUNCHER_STENCIL) /* its only user */
/* The greatest common divisor (Euclid's); gcd(a, 0) = a. */
static size_t gpuk__gcd(size_t a, size_t b) {
    while (b) {
        const size_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}
#endif

GPUK__SHARED size_t gpuk__sm_blocks(const gpuk_ctx* ctx, size_t per_sm) {
    return (size_t)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1) * per_sm;
}

#if defined(GPUK__LAUNCHER_MAP)
/* Element-wise kernels: (out, a, b, n, s0, s1). */
/* not inlined: ~100 generated wrappers call these (compile time, code size) */
static GPUK__NOINLINE gpuk_result gpuk__map(const char* fn, int id, gpuk_ctx* ctx,
                                            gpuk_stream stream, size_t elem, size_t n,
                                            gpuk_array out, const gpuk_array* a,
                                            const gpuk_array* b, const void* s0, const void* s1) {
    static const unsigned char zero[16] = { 0 };
    gpuk_devptr po, pa = 0, pb = 0;
    unsigned long long n64 = n;
    void* args[6];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "out", out, elem, n, &po)) != GPUK_OK) return r;
    if (a && (r = gpuk__array(fn, ctx, "input", *a, elem, n, &pa)) != GPUK_OK) return r;
    if (b && (r = gpuk__array(fn, ctx, "second input", *b, elem, n, &pb)) != GPUK_OK) return r;
    if (a && (r = gpuk__overlap(fn, "out and input", po, pa, n * elem, n * elem, 1)) != GPUK_OK)
        return r;
    if (b &&
        (r = gpuk__overlap(fn, "out and second input", po, pb, n * elem, n * elem, 1)) != GPUK_OK)
        return r;
    if (n == 0) return GPUK_OK;
    args[0] = &po; args[1] = &pa; args[2] = &pb; args[3] = &n64;
    args[4] = (void*)(uintptr_t)(s0 ? s0 : zero);
    args[5] = (void*)(uintptr_t)(s1 ? s1 : zero);
    k.args = args;
    /* a block for every 256 packs: faster than a grid of 32 blocks an SM looping over the rest
       (bench "add_f32 2^28") */
    k.grid_x = gpuk__grid(n, GPUK__BLOCK * (16 / elem), (size_t)ctx->info.max_grid[0]);
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_MAP */

#if defined(GPUK__LAUNCHER_GENERATE)
/* Kernels that make out[i] from i: (out, n, s0, s1), per_thread elements a thread. */
static GPUK__NOINLINE gpuk_result gpuk__generate(const char* fn, int id, gpuk_ctx* ctx,
                                                 gpuk_stream stream, size_t elem, size_t n,
                                                 gpuk_array out, const void* s0, const void* s1,
                                                 size_t scalar_bytes, size_t per_thread) {
    gpuk_devptr po;
    unsigned long long n64 = n;
    void* args[4];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "out", out, elem, n, &po)) != GPUK_OK) return r;
    if (per_thread > 1) { /* random: s1 is the element offset into the stream of numbers */
        unsigned long long offset;
        memcpy(&offset, s1, sizeof offset);
        GPUK_ASSERT(scalar_bytes == sizeof offset);
        if (n && offset > ~0ull - (n - 1))
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "offset %llu + n %zu passes 2^64", offset, n);
    }
    (void)scalar_bytes;
    if (n == 0) return GPUK_OK;
    args[0] = &po; args[1] = &n64;
    args[2] = (void*)(uintptr_t)s0; args[3] = (void*)(uintptr_t)s1;
    k.args = args;
    /* 32 blocks an SM, looping: a block for every 256 Philox blocks was slower (bench
       "random_uniform_f32 2^28") */
    k.grid_x = gpuk__grid(n / per_thread + 2, GPUK__BLOCK,
                          gpuk__sm_blocks(ctx, GPUK__TUNED(GPUK__TUNE_GENERATE_PER_SM, 32)));
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_GENERATE */

#if defined(GPUK__LAUNCHER_STRIDED)
/* Elements a stride walk of n touches: (n - 1) * stride + 1, or 0 on overflow or n = 0. */
static size_t gpuk__extent(size_t n, size_t stride, int* overflow) {
    *overflow = 0;
    if (n == 0) return 0;
    if (stride && n - 1 > ((size_t)-1 - 1) / stride) { *overflow = 1; return 0; }
    return (n - 1) * stride + 1;
}

/* Strided copy: (out, in, n, out_stride, in_stride). */
static GPUK__NOINLINE gpuk_result gpuk__strided(const char* fn, int id, gpuk_ctx* ctx,
                                                gpuk_stream stream, size_t elem, gpuk_array out,
                                                size_t out_stride, gpuk_array in,
                                                size_t in_stride, size_t n) {
    gpuk_devptr po, pi;
    unsigned long long n64 = n, os = out_stride, is = in_stride;
    size_t out_n, in_n;
    int over_o, over_i;
    void* args[5];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (out_stride == 0 && n > 1)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "out_stride is 0 with n = %zu: every element would land on out[0]", n);
    out_n = gpuk__extent(n, out_stride, &over_o);
    in_n = gpuk__extent(n, in_stride, &over_i);
    if (over_o || over_i)
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS,
                          "n %zu times the %s stride %zu passes SIZE_MAX", n, over_o ? "out" : "in",
                          over_o ? out_stride : in_stride);
    if ((r = gpuk__array(fn, ctx, "out", out, elem, out_n, &po)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "in", in, elem, in_n, &pi)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "out and in", po, pi, out_n * elem, in_n * elem, 0)) != GPUK_OK)
        return r;
    if (n == 0) return GPUK_OK;
    args[0] = &po; args[1] = &pi; args[2] = &n64; args[3] = &os; args[4] = &is;
    k.args = args;
    k.grid_x = gpuk__grid(n, GPUK__BLOCK, (size_t)ctx->info.max_grid[0]);
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_STRIDED */

#if defined(GPUK__LAUNCHER_CONVERT)
/* Conversions between f32 and the 16-bit floats: (out, in, n). The elements differ in size,
   so element i of out can hold bytes of an input another thread has yet to read: out and in
   may not overlap at all. */
static GPUK__NOINLINE gpuk_result gpuk__convert(const char* fn, int id, gpuk_ctx* ctx,
                                                gpuk_stream stream, size_t out_elem,
                                                size_t in_elem, gpuk_array out, gpuk_array in,
                                                size_t n) {
    gpuk_devptr po, pi;
    unsigned long long n64 = n;
    void* args[3];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "out", out, out_elem, n, &po)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "in", in, in_elem, n, &pi)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "out and in", po, pi, n * out_elem, n * in_elem, 0)) != GPUK_OK)
        return r;
    if (n == 0) return GPUK_OK;
    args[0] = &po; args[1] = &pi; args[2] = &n64;
    k.args = args;
    /* a block for every 256 groups of 8 elements, as gpuk__map's packs */
    k.grid_x = gpuk__grid(n, (size_t)GPUK__BLOCK * 8, (size_t)ctx->info.max_grid[0]);
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_CONVERT */

#if defined(GPUK__LAUNCHER_REDUCE)
/* Reductions: (out, a, b, n, scratch). The grid depends only on n and the device, which is
   what makes the result's bits repeat. */
static GPUK__NOINLINE gpuk_result gpuk__reduce(const char* fn, int id, gpuk_ctx* ctx,
                                               gpuk_stream stream, size_t elem, size_t out_elem,
                                               int needs_elements, gpuk_array out,
                                               const gpuk_array* a, const gpuk_array* b, size_t n) {
    gpuk_devptr po, pa, pb = 0, scratch = 0;
    unsigned long long n64 = n;
    void* args[5];
    gpuk__kcall k;
    gpuk_result r;
    size_t cap;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "out", out, out_elem, 1, &po)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "input", *a, elem, n, &pa)) != GPUK_OK) return r;
    if (b && (r = gpuk__array(fn, ctx, "second input", *b, elem, n, &pb)) != GPUK_OK) return r;
    if (needs_elements && n == 0)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "n is 0: there is no smallest or largest of no elements");
    args[0] = &po; args[1] = &pa; args[2] = &pb; args[3] = &n64; args[4] = &scratch;
    k.args = args;
    cap = gpuk__sm_blocks(ctx, 8);
    k.grid_x = gpuk__grid(n, GPUK__BLOCK * (16 / elem),
                          cap < GPUK__REDUCE_MAX_GRID ? cap : GPUK__REDUCE_MAX_GRID);
    k.scratch_arg = &scratch;
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_REDUCE */

#if defined(GPUK__LAUNCHER_REDUCE_AXIS)
/* Reductions along an axis: (out, in, rows, cols, ld, shape, chunks, span, ws); kind 0 sum,
   1 min/max, 2 argmin/argmax (u64 results, 16-byte partials); axis 0: a result a row, 1: a
   column. About 8 blocks a multiprocessor in all (the 1-D reductions' count). The kernel's
   comment says what shape, chunks and span mean. Chunks (and the workspace their partials
   need) only where the results alone would not keep the blocks busy: long rows few of them,
   or tall columns, with a ticket each (row or strip) among the workspace's first
   GPUK__GEMM_SPLIT_TILES counters, which every kernel leaves zero; where no workspace can be had (a capture that cannot grow it, the
   per-thread stream) the kernel folds whole rows or columns, slower but the same bits' rules. */
static GPUK__NOINLINE gpuk_result gpuk__reduce_axis(const char* fn, int id, gpuk_ctx* ctx,
                                                    gpuk_stream stream, size_t elem, int kind,
                                                    int axis, gpuk_array out, gpuk_array2d in) {
    const size_t acc = kind == 2 ? 16 : elem, vec = 16 / elem;
    const size_t results = axis ? in.cols : in.rows, along = axis ? in.rows : in.cols;
    const size_t cap = gpuk__sm_blocks(ctx, 8), lanes = cap * GPUK__BLOCK;
    gpuk_devptr po, pi, ws = 0;
    size_t ld, span;
    unsigned long long rows = in.rows, cols = in.cols, ld64, span64;
    uint32_t shape, chunks = 1;
    int packed;
    void* args[9];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array2d(fn, ctx, "in", in, elem, &pi, &ld)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "out", out, kind == 2 ? 8 : elem, results, &po)) != GPUK_OK)
        return r;
    if (results && along &&
        (r = gpuk__overlap(fn, "out and in", po, pi, results * (kind == 2 ? 8 : elem),
                           ((in.rows - 1) * ld + in.cols) * elem, 0)) != GPUK_OK)
        return r;
    if (kind && results && !along)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "in is %zu x %zu: there is no smallest or largest of no elements",
                          in.rows, in.cols);
    if (results == 0) return GPUK_OK;
    if (axis == 0) {
        /* lanes a row: about its 16-byte packs, a power of two up to a warp, and at least a
           pack's elements (a short row's unaligned head and tail take a lane an element) */
        size_t g = vec;
        while (g < 32 && g * vec < along) g *= 2;
        shape = (uint32_t)g;
        span = along;
        /* long rows, too few to give every lane work: each in pieces of at least 32 packs a
           lane, the pieces' count a row bounded by the workspace's tickets and partials */
        if (results * g < lanes && along > 32 * g * vec && results <= GPUK__GEMM_SPLIT_TILES) {
            size_t want = lanes / (results * g), most = along / (32 * g * vec);
            if (want > most) want = most;
            if (want > 1) {
                span = (along + want - 1) / want;
                span = (span + vec - 1) / vec * vec; /* pieces start on the same alignment */
                chunks = (uint32_t)((along + span - 1) / span);
            }
        }
        k.grid_x = gpuk__grid(results * chunks * g, GPUK__BLOCK, cap);
        /* short rows of whole 16-byte packs, each row 16-byte aligned: the kernel made for
           them, which keeps more rows in flight (its comment in gpuk_kernels.cuh) */
        if (along <= g * vec && along % vec == 0 && pi % 16 == 0 && (ld * elem) % 16 == 0 &&
            (packed = gpuk__builtin_companion_of(id, -1)) >= 0) {
            k.id = packed;
            k.grid_x = gpuk__grid(results * g, GPUK__BLOCK,
                                  gpuk__sm_blocks(ctx, GPUK__AXIS_PACKED_BLOCKS));
        }
    } else {
        /* 16 bytes a thread where every row starts 16-byte aligned and none ends mid-pack */
        const int wide = pi % 16 == 0 && (ld * elem) % 16 == 0 && in.cols % vec == 0;
        const size_t v = wide ? vec : 1, groups = (results + v - 1) / v;
        size_t tx = 1, strips;
        /* up to 64 threads across (4 rows of them a block): wide views get 4 times the strips,
           so fewer chunks, and the last block of a strip folds 4 chunks at a time */
        while (tx < 64 && tx < groups) tx *= 2;
        shape = (uint32_t)tx | (wide ? 1u << 16 : 0u);
        strips = (groups + tx - 1) / tx;
        if (strips > (size_t)ctx->info.max_grid[0])
            return gpuk__fail(fn, GPUK_ERR_LIMIT, "%zu columns need %zu blocks across; the grid "
                              "takes %d", results, strips, ctx->info.max_grid[0]);
        span = along;
        /* tall columns, too few strips to fill the device: the rows in chunks of at least 8
           a thread, and at most 64 a thread row (the last block's fold) */
        if (strips < cap && along > 8 * (GPUK__BLOCK / tx) && strips <= GPUK__GEMM_SPLIT_TILES) {
            size_t want = cap / strips, most = along / (8 * (GPUK__BLOCK / tx));
            if (want > most) want = most;
            if (want > 64 * (GPUK__BLOCK / tx)) want = 64 * (GPUK__BLOCK / tx);
            if (want > 1) {
                span = (along + want - 1) / want;
                chunks = (uint32_t)((along + span - 1) / span);
            }
        }
        k.grid_x = (uint32_t)strips;
        k.grid_y = chunks;
    }
    ld64 = ld;
    span64 = span;
    args[0] = &po; args[1] = &pi; args[2] = &rows; args[3] = &cols; args[4] = &ld64;
    args[5] = &shape; args[6] = &chunks; args[7] = &span64; args[8] = &ws;
    k.args = args;
    if (chunks > 1) { /* the tickets (a row's or a strip's) among GEMM's counters, the partials */
        k.ws_bytes = (size_t)GPUK__GEMM_SPLIT_TILES * 4u + (size_t)chunks * results * acc;
        k.ws_arg = &ws;
        k.splits_arg = &chunks;
    }
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_REDUCE_AXIS */

#if defined(GPUK__LAUNCHER_SCAN) || defined(GPUK__LAUNCHER_SELECT)
/* Scans and selects: a block per tile of 8192 (4-byte) or 4096 elements (scan_items in
   gpuk_kernels.cuh). */
static size_t gpuk__scan_tile(size_t elem) {
    return (size_t)GPUK__BLOCK * (elem == 4 ? GPUK__SCAN_ITEMS_4 : GPUK__SCAN_ITEMS_8);
}

/* How many tiles ahead a scan block prefetches into L2 (gpuk_kernels.cuh, scan): 2.5 tiles a
   multiprocessor for 4-byte types and 2 for 8-byte ones (bench "scan_inclusive_i32 2^28"), and
   never more than a quarter of L2 (at half of it, prefetched tiles were evicted before use);
   0: none. */
static uint32_t gpuk__scan_ahead(const gpuk_device_info* info, size_t elem) {
    const size_t tile_bytes = gpuk__scan_tile(elem) * elem;
    const size_t l2_tiles = info->l2_bytes > 0 ? (size_t)info->l2_bytes / (4 * tile_bytes) : 0;
    const size_t per_sm = info->sm_count > 0 ? (size_t)info->sm_count * (elem == 4 ? 5 : 4) / 2 : 0;
    return (uint32_t)(per_sm < l2_tiles ? per_sm : l2_tiles);
}

/* The tiles of n elements, or GPUK_ERR_LIMIT where the grid cannot hold them. */
static gpuk_result gpuk__scan_tiles(const char* fn, const gpuk_ctx* ctx, size_t n, size_t elem,
                                    size_t* tiles) {
    const size_t tile = gpuk__scan_tile(elem);
    *tiles = n / tile + (n % tile != 0);
    if (*tiles > (size_t)ctx->info.max_grid[0] || *tiles > 0xFFFFFFFFu)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "n = %zu needs %zu tiles of %zu; the grid takes %d",
                          n, *tiles, tile, ctx->info.max_grid[0]);
    return GPUK_OK;
}
#endif

#if defined(GPUK__LAUNCHER_SCAN)
/* Scans: (out, in, n, scratch, ahead, capacity). */
static GPUK__NOINLINE gpuk_result gpuk__scan(const char* fn, int id, gpuk_ctx* ctx,
                                             gpuk_stream stream, size_t elem, gpuk_array out,
                                             gpuk_array in, size_t n) {
    gpuk_devptr po, pi, scratch = 0;
    unsigned long long n64 = n, capacity = 0;
    uint32_t ahead;
    size_t tiles;
    void* args[6];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "out", out, elem, n, &po)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "in", in, elem, n, &pi)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "out and in", po, pi, n * elem, n * elem, 1)) != GPUK_OK) return r;
    if (n == 0) return GPUK_OK;
    if ((r = gpuk__scan_tiles(fn, ctx, n, elem, &tiles)) != GPUK_OK) return r;
    ahead = (uint32_t)GPUK__TUNED(GPUK__TUNE_SCAN_AHEAD, gpuk__scan_ahead(&ctx->info, elem));
    args[0] = &po; args[1] = &pi; args[2] = &n64; args[3] = &scratch; args[4] = &ahead;
    args[5] = &capacity;
    k.args = args;
    k.grid_x = (uint32_t)tiles;
    k.workspace_tiles = tiles;
    k.scratch_arg = &scratch;
    k.capacity_arg = &capacity;
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_SCAN */

#if defined(GPUK__LAUNCHER_SELECT)
/* Selects: (out, count, in, flags, n, op, value, scratch, ahead, capacity, lengths),
   tiled and looked back like the scans, in the scans' scratch. mode: 0 select_if,
   1 select_flagged, 2 count_if, 3 partition_if, 4 unique, 5 run_length_encode (SELECT_* in
   gpuk_kernels.cuh); out is NULL for count_if, flags non-NULL for select_flagged alone,
   lengths for run_length_encode alone, value NULL where no op is taken. */
static GPUK__NOINLINE gpuk_result gpuk__select(const char* fn, int id, gpuk_ctx* ctx,
                                               gpuk_stream stream, size_t elem, int mode,
                                               const gpuk_array* out, gpuk_array count,
                                               gpuk_array in, const gpuk_array* flags,
                                               const gpuk_array* lengths, size_t n, uint32_t op,
                                               const void* value) {
    /* GPUK_CMP_* to the kernel's mask of outcomes kept: 1 less, 2 equal, 4 greater,
       8 unordered; 16 the finite test */
    static const uint32_t masks[GPUK_CMP_NUM] = { 0, 1, 3, 4, 6, 2, 13, 13, 16 };
    gpuk_devptr po = 0, pc, pi, pf = 0, pl = 0, scratch = 0;
    unsigned long long n64 = n, capacity = 0;
    union { float f; double d; int32_t i; uint32_t u; } v;
    uint32_t ahead, kernel_op = 0;
    size_t tiles;
    void* args[11];
    gpuk__kcall k;
    gpuk__cu_result cr;
    gpuk_result r;
    memset(&v, 0, sizeof v);
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (lengths && (uint64_t)n >> 48) /* a tile status holds 48-bit counts and heads */
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "n is %zu; run-length encoding takes fewer "
                          "than 2^48 elements", n);
    if (value) { /* the op, and its value in the kernel's type (0 where unused) */
        const int is_float = id == GPUK__K_SELECT_IF_F32 || id == GPUK__K_SELECT_IF_F64 ||
                             id == GPUK__K_COUNT_IF_F32 || id == GPUK__K_COUNT_IF_F64 ||
                             id == GPUK__K_PARTITION_IF_F32 || id == GPUK__K_PARTITION_IF_F64;
        if (op == 0 || op >= GPUK_CMP_NUM)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "op is %u; it must be a gpuk_cmp, "
                              "GPUK_CMP_LT (1) to GPUK_CMP_FINITE (8)", op);
        if (op == GPUK_CMP_FINITE && !is_float)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "op GPUK_CMP_FINITE applies to f32 and "
                              "f64 only: every integer is finite");
        kernel_op = masks[op];
        if (op < GPUK_CMP_NONZERO) memcpy(&v, value, elem);
    }
    if (out && (r = gpuk__array(fn, ctx, lengths ? "values" : "out", *out, elem, n, &po)) !=
                   GPUK_OK)
        return r;
    if ((r = gpuk__array(fn, ctx, "count", count, 8, 1, &pc)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "in", in, elem, n, &pi)) != GPUK_OK) return r;
    if (flags && (r = gpuk__array(fn, ctx, "flags", *flags, 1, n, &pf)) != GPUK_OK) return r;
    if (lengths && (r = gpuk__array(fn, ctx, "lengths", *lengths, 8, n, &pl)) != GPUK_OK)
        return r;
    /* in place (out the same view as in) only for select_if and select_flagged: a tile writes
       below its own end, into tiles whose blocks have all read their input */
    if (out && (r = gpuk__overlap(fn, lengths ? "values and in" : "out and in", po, pi,
                                  n * elem, n * elem, mode <= 1)) != GPUK_OK)
        return r;
    if (out && (r = gpuk__overlap(fn, lengths ? "values and count" : "out and count", po, pc,
                                  n * elem, 8, 0)) != GPUK_OK)
        return r;
    if ((r = gpuk__overlap(fn, "in and count", pi, pc, n * elem, 8, 0)) != GPUK_OK) return r;
    if (flags && ((r = gpuk__overlap(fn, "out and flags", po, pf, n * elem, n, 0)) != GPUK_OK ||
                  (r = gpuk__overlap(fn, "flags and count", pf, pc, n, 8, 0)) != GPUK_OK))
        return r;
    if (lengths &&
        ((r = gpuk__overlap(fn, "lengths and values", pl, po, n * 8, n * elem, 0)) != GPUK_OK ||
         (r = gpuk__overlap(fn, "lengths and in", pl, pi, n * 8, n * elem, 0)) != GPUK_OK ||
         (r = gpuk__overlap(fn, "lengths and count", pl, pc, n * 8, 8, 0)) != GPUK_OK))
        return r;
    if (n == 0) { /* no tile to write it: the count is 0 */
        if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
        if ((cr = GPUK__DRV.cuMemsetD32Async(pc, 0, 2, k.cs)) != 0)
            return gpuk__fail_cu(fn, "cuMemsetD32Async", cr, "writing count 0");
        return GPUK_OK;
    }
    if ((r = gpuk__scan_tiles(fn, ctx, n, elem, &tiles)) != GPUK_OK) return r;
    ahead = (uint32_t)GPUK__TUNED(GPUK__TUNE_SCAN_AHEAD, gpuk__scan_ahead(&ctx->info, elem));
    args[0] = &po; args[1] = &pc; args[2] = &pi; args[3] = &pf; args[4] = &n64;
    args[5] = &kernel_op; args[6] = &v; args[7] = &scratch; args[8] = &ahead;
    args[9] = &capacity; args[10] = &pl;
    k.args = args;
    k.grid_x = (uint32_t)tiles;
    k.workspace_tiles = tiles;
    k.scratch_arg = &scratch;
    k.capacity_arg = &capacity;
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_SELECT */

#if defined(GPUK__LAUNCHER_TRANSPOSE)
/* Transpose: (out, in, rows, cols), 32x8 threads a 64x64 tile. */
static GPUK__NOINLINE gpuk_result gpuk__transpose(const char* fn, int id, gpuk_ctx* ctx,
                                                  gpuk_stream stream, size_t elem, gpuk_array out,
                                                  gpuk_array in, size_t rows, size_t cols) {
    gpuk_devptr po, pi;
    unsigned long long r64 = rows, c64 = cols;
    size_t total;
    void* args[4];
    gpuk__kcall k;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (cols && rows > (size_t)-1 / cols)
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS,
                          "rows %zu x cols %zu passes SIZE_MAX", rows, cols);
    total = rows * cols;
    if ((r = gpuk__array(fn, ctx, "out", out, elem, total, &po)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "in", in, elem, total, &pi)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "out and in", po, pi, total * elem, total * elem, 0)) != GPUK_OK)
        return r;
    if (total == 0) return GPUK_OK;
    args[0] = &po; args[1] = &pi; args[2] = &r64; args[3] = &c64;
    k.args = args;
    k.block_x = 32;
    k.block_y = GPUK__BLOCK / 32;
    if (cols / GPUK__TRANSPOSE_TILE + 1 > (size_t)ctx->info.max_grid[0])
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "cols = %zu needs more than %d blocks across", cols,
                          ctx->info.max_grid[0]);
    k.grid_x = gpuk__grid(cols, GPUK__TRANSPOSE_TILE, (size_t)ctx->info.max_grid[0]);
    /* taller matrices loop inside the kernel */
    k.grid_y = gpuk__grid(rows, GPUK__TRANSPOSE_TILE, 65535);
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_TRANSPOSE */

#if defined(GPUK__LAUNCHER_GEMM)
/* Matrix multiply: (c, a, b, gemm_args, alpha, beta), gemm_args being the kernel's struct of
   that name (gpuk_kernels.cuh): the same members in the same order, no padding. */
typedef struct gpuk__gemm_args {
    uint64_t m, n, k, ldc, lda, ldb, stride_c, stride_a, stride_b;
    uint32_t trans_a, trans_b, batch, splits;
    gpuk_devptr ws;
} gpuk__gemm_args;

/* The C tile of GEMM variant v (gpuk_kernels.cuh's policies), rows (the return) and *cols:
   the tensor-core FP64 ones take 128 x 128 (sm_80) and 128 x GPUK__GEMM_F64_TILE_N (sm_90),
   SIMT FP64 64 x 64, every FP32 one 128 x 128. */
static size_t gpuk__gemm_tile(const gpuk__builtin_ptx* v, size_t elem, size_t* cols) {
    const size_t rows =
        elem == 4 ? GPUK__GEMM_TILE_4 : v->target >= 80 ? GPUK__GEMM_TILE_MMA : GPUK__GEMM_TILE_8;
    if (cols)
        *cols = elem == 8 && v->target >= 90 && !v->arch_specific ? GPUK__GEMM_F64_TILE_N : rows;
    return rows;
}

/* Parts to split k into: only where the tiles leave multiprocessors idle, up to per_sm blocks
   a multiprocessor (the variant's resident blocks: parts beyond them run as a second wave),
   each part at least 128 deep, at most 16 parts. 1: no split. */
static uint32_t gpuk__gemm_splits(const gpuk_ctx* ctx, size_t tiles, size_t k, size_t per_sm) {
    const size_t blocks = gpuk__sm_blocks(ctx, per_sm);
    size_t splits;
    if (tiles >= (size_t)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1) ||
        tiles > GPUK__GEMM_SPLIT_TILES)
        return 1;
    splits = blocks / tiles;
    if (splits > k / 128) splits = k / 128;
    if (splits > 16) splits = 16;
    return splits > 1 ? (uint32_t)splits : 1u;
}

/* The sm_90a TF32 GEMM's TMA path (gpuk_kernels.cuh, gemm_tma_run): 384 threads, a 128 x 256
   tile a job, tensor maps of A and of B^T (both K-major: the TF32 form of wgmma reads no other)
   from the driver's cuTensorMapEncodeTiled, each 128 bytes on a 64-byte boundary. Taken for one
   product with A as-is and 16-byte aligned rows, enough tiles to fill the GPU, and B^T at hand:
   B transposed (trans_b, aligned), or a packed B that a transpose kernel first turns into B^T
   in the stream's GEMM workspace (where none can be had, in a capture or on the per-thread
   stream, the call takes the cp.async path instead). */
typedef struct gpuk__gemm_tma {
    int mode;                  /* 0: the cp.async path; 1: B^T is b itself; 2: b transposed */
    unsigned char raw[2 * 128 + 64];
    unsigned char* maps;       /* in raw, 64-byte aligned: A's map, then B^T's */
    gpuk_devptr a, b;
    uint64_t m, n, k, lda, ldb;
    uint32_t grid_x_tma, grid_x_old;
} gpuk__gemm_tma;

/* rows x k floats at p, row stride ld elements, as 32 x 128 boxes with the 128-byte swizzle */
static gpuk__cu_result gpuk__tmap_encode(unsigned char* map, gpuk_devptr p, uint64_t rows,
                                         uint64_t k, uint64_t ld) {
    const uint64_t dims[2] = { k, rows }, strides[1] = { ld * 4u };
    const uint32_t box[2] = { 32, 128 }, one[2] = { 1, 1 };
    return GPUK__DRV.cuTensorMapEncodeTiled((struct CUtensorMap_st*)(void*)map,
                                            GPUK__CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                            (void*)(uintptr_t)p, dims, strides, box, one, 0,
                                            GPUK__CU_TENSOR_MAP_SWIZZLE_128B,
                                            GPUK__CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
}

static gpuk_result gpuk__gemm_tma_prepare(gpuk__kcall* k, gpuk_devptr ws) {
    gpuk__gemm_tma* t = (gpuk__gemm_tma*)k->before_data;
    gpuk_devptr bt = t->b;
    gpuk__cu_result cr;
    gpuk_result r;
    if (t->mode == 2 && !ws) t->mode = 0;
    if (t->mode == 2 &&
        !GPUK__ATOMIC_LOAD_PTR(&gpuk__builtin_of(k->ctx)->function[GPUK__K_TRANSPOSE_F32])) {
        /* the transpose kernel would load first, which a capture cannot hold: the cp.async
           path then, as without a workspace */
        if ((r = gpuk__capture_status(k->fn, k->cs, &k->capture)) != GPUK_OK) return r;
        if (k->capture) t->mode = 0;
    }
    if (t->mode == 2) { /* B (k x n, packed) -> B^T (n x k) after the workspace's counters */
        gpuk__cu_function f;
        unsigned long long rows = t->k, cols = t->n;
        void* targs[4];
        bt = ws + (gpuk_devptr)GPUK__GEMM_SPLIT_TILES * 4u;
        targs[0] = &bt; targs[1] = &t->b; targs[2] = &rows; targs[3] = &cols;
        if ((r = gpuk__builtin_function(k->fn, k->ctx, GPUK__K_TRANSPOSE_F32, k->cs,
                                        &f)) != GPUK_OK)
            return r;
        cr = GPUK__DRV.cuLaunchKernel(f,
                                      gpuk__grid((size_t)cols, GPUK__TRANSPOSE_TILE,
                                                 (size_t)k->ctx->info.max_grid[0]),
                                      gpuk__grid((size_t)rows, GPUK__TRANSPOSE_TILE, 65535), 1, 32,
                                      GPUK__BLOCK / 32, 1, 0, k->cs, targs, NULL);
        if (cr) return gpuk__fail_cu(k->fn, "cuLaunchKernel", cr, "transposing b for the TMA path");
    }
    if (t->mode) {
        if ((cr = gpuk__tmap_encode(t->maps, t->a, t->m, t->k, t->lda)) != 0 ||
            (cr = gpuk__tmap_encode(t->maps + 128, bt, t->n, t->k,
                                    t->mode == 2 ? t->k : t->ldb)) != 0)
            return gpuk__fail_cu(k->fn, "cuTensorMapEncodeTiled", cr,
                                 "a tensor map for the TMA path");
        return GPUK_OK;
    }
    memset(t->maps, 0, 256);
    k->block_x = GPUK__BLOCK;
    k->grid_x = t->grid_x_old;
    return GPUK_OK;
}

/* Takes the TMA path where it can (see gpuk__gemm_tma): fills t and turns k to it. Only the
   sm_90a variant (the caller's v) has one. */
static void gpuk__gemm_tma_plan(gpuk__kcall* k, const gpuk__builtin_ptx* v, gpuk__gemm_tma* t,
                                gpuk__gemm_args* g, gpuk_devptr a, gpuk_devptr b) {
    const gpuk_ctx* ctx = k->ctx;
    const uint64_t jobs = (g->m + 127) / 128 * ((g->n + GPUK__GEMM_TMA_BN - 1) / GPUK__GEMM_TMA_BN);
    const uint64_t most = (uint64_t)1 << 32; /* a tensor map's dimensions */
    if (!v->arch_specific || !GPUK__DRV.cuTensorMapEncodeTiled) return;
    /* the maps' rules: 16-byte aligned addresses and row strides, dimensions below 2^32,
       strides below 2^40 bytes */
    if (jobs < (uint64_t)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1) || g->trans_a ||
        (a & 15u) || (g->lda & 3u) || g->k == 0 || g->m >= most || g->n >= most || g->k >= most ||
        g->lda >= ((uint64_t)1 << 38) || g->ldb >= ((uint64_t)1 << 38))
        return;
    if (g->trans_b && !(b & 15u) && !(g->ldb & 3u)) t->mode = 1;
    else if (!g->trans_b && g->ldb == g->n && !(b & 15u) && !(g->k & 3u) &&
             g->n <= ((size_t)-1 - (size_t)GPUK__GEMM_SPLIT_TILES * 4u) / 4u / g->k) {
        t->mode = 2;
        k->ws_bytes = (size_t)GPUK__GEMM_SPLIT_TILES * 4u + (size_t)(g->n * g->k) * 4u;
        k->ws_arg = &g->ws;
        k->splits_arg = &g->splits;
    } else
        return;
    t->a = a; t->b = b;
    t->m = g->m; t->n = g->n; t->k = g->k; t->lda = g->lda; t->ldb = g->ldb;
    t->grid_x_old = k->grid_x;
    t->grid_x_tma = gpuk__grid((size_t)jobs, 1, (size_t)ctx->info.max_grid[0]);
    k->grid_x = t->grid_x_tma;
    k->block_x = GPUK__GEMM_TMA_THREADS;
    k->before = gpuk__gemm_tma_prepare;
    k->before_data = t;
}

/* Checks op(a) (m x k) times op(b) (k x n) into c (m x n), batch times at element strides
   stride_x (views for product i start i * stride_x later), and launches. */
static GPUK__NOINLINE gpuk_result gpuk__gemm(const char* fn, int id, gpuk_ctx* ctx,
                                             gpuk_stream stream, size_t elem, gpuk_array2d c,
                                             size_t stride_c, const void* alpha, gpuk_array2d a,
                                             size_t stride_a, uint32_t trans_a, gpuk_array2d b,
                                             size_t stride_b, uint32_t trans_b, const void* beta,
                                             size_t batch) {
    static const char* const names[3] = { "c", "a", "b" };
    const gpuk__builtin_ptx* variant;
    gpuk_array2d v[3];
    size_t stride[3], ld[3], bytes[3], am, ak, bk, bn, tile, tile_n, tiles, per_sm, i;
    gpuk_devptr p[3];
    gpuk__gemm_args g;
    gpuk__gemm_tma tma;
    void* args[8];
    gpuk__kcall k;
    gpuk_result r;
    v[0] = c; v[1] = a; v[2] = b;
    stride[0] = stride_c; stride[1] = stride_a; stride[2] = stride_b;
    GPUK__CTX_CHECK(fn, ctx); /* kcall_init checks it too; said here for the static analysers */
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (trans_a > GPUK_OP_T || trans_b > GPUK_OP_T)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is %u: GPUK_OP_N (0) or GPUK_OP_T (1)",
                          trans_a > GPUK_OP_T ? "trans_a" : "trans_b",
                          (unsigned)(trans_a > GPUK_OP_T ? trans_a : trans_b));
    memset(&g, 0, sizeof g);
    for (i = 0; i < 3; i++) {
        gpuk_array2d last = v[i];
        if ((r = gpuk__array2d(fn, ctx, names[i], v[i], elem, &p[i], &ld[i])) != GPUK_OK) return r;
        /* the batch's last product: its view moved by (batch - 1) * stride, inside the buffer
           too */
        if (batch > 1 && stride[i]) {
            if (batch - 1 > ((size_t)-1 - v[i].first) / stride[i])
                return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS,
                                  "%s: %zu products at a stride of %zu elements pass SIZE_MAX",
                                  names[i], batch, stride[i]);
            last.first += (batch - 1) * stride[i];
            if ((r = gpuk__array2d(fn, ctx, names[i], last, elem, &p[i], &ld[i])) != GPUK_OK)
                return r;
            p[i] -= (gpuk_devptr)((batch - 1) * stride[i] * elem);
        }
        /* the bytes from the first product's first element to the last product's last one */
        bytes[i] = v[i].rows && v[i].cols && batch
                 ? (((v[i].rows - 1) * ld[i] + v[i].cols) + (batch - 1) * stride[i]) * elem : 0;
    }
    am = trans_a ? a.cols : a.rows;
    ak = trans_a ? a.rows : a.cols;
    bk = trans_b ? b.cols : b.rows;
    bn = trans_b ? b.rows : b.cols;
    if (am != c.rows || bn != c.cols || ak != bk)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "shapes do not chain: c is %zu x %zu, op(a) %zu x %zu, op(b) %zu x %zu "
                          "(need m x n = (m x k) (k x n))", c.rows, c.cols, am, ak, bk, bn);
    /* C's products must not share elements: whole blocks apart, or side by side within rows */
    if (batch > 1 && c.rows && c.cols && stride_c < (c.rows - 1) * ld[0] + c.cols &&
        !(stride_c >= c.cols && (batch - 1) * stride_c + c.cols <= ld[0]))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "stride_c %zu makes the %zu products of c (%zu x %zu, row stride %zu) "
                          "share elements", stride_c, batch, c.rows, c.cols, ld[0]);
    /* whole strided extents: conservative for interleaved views, exact for the usual ones */
    if ((r = gpuk__overlap(fn, "c and a", p[0], p[1], bytes[0], bytes[1], 0)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "c and b", p[0], p[2], bytes[0], bytes[2], 0)) != GPUK_OK) return r;
    if (c.rows == 0 || c.cols == 0 || batch == 0) return GPUK_OK;
    if (batch > 0xFFFFFFFFu)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "batch %zu is more than 2^32 - 1 products", batch);
    variant = gpuk__builtin_pick(ctx, id); /* the one gpuk__builtin_go loads */
    tile = gpuk__gemm_tile(variant, elem, &tile_n);
    /* the sm_90a GEMM (TF32 by wgmma) and the sm_90 FP64 one keep their stages in dynamic shared
       memory */
    if (variant->arch_specific) k.shared = GPUK__GEMM_WGMMA_SMEM;
    else if (elem == 8 && variant->target >= 90) {
        k.shared = GPUK__GEMM_F64_SMEM;
        k.block_x = GPUK__GEMM_F64_THREADS;
    }
    memset(&tma, 0, sizeof tma);
    tma.maps = tma.raw + (64u - (unsigned)((uintptr_t)tma.raw & 63u)) % 64u; /* zeros unless TMA */
    args[6] = tma.maps;
    args[7] = tma.maps + 128;
    tiles = (c.rows / tile + (c.rows % tile != 0)) * (c.cols / tile_n + (c.cols % tile_n != 0));
    g.m = c.rows; g.n = c.cols; g.k = ak;
    g.ldc = ld[0]; g.lda = ld[1]; g.ldb = ld[2];
    g.stride_c = stride_c; g.stride_a = stride_a; g.stride_b = stride_b;
    g.trans_a = trans_a != 0; g.trans_b = trans_b != 0;
    g.batch = (uint32_t)batch;
    /* one block a multiprocessor for the sm_80 FP64 tensor-core variant (256 threads of 255
       registers) and the sm_90a one (its dynamic shared memory), two for the others; the sm_90
       FP64 one (128 threads of 255 registers) where two of its stages fit the multiprocessor's
       shared memory (an H100's 228 KB, not sm_120's 100 KB; the driver keeps 1 KB a block).
       Counting blocks that cannot be resident would split k into too many parts (bench
       "dgemm m=1024 n=512 k=2048"). */
    per_sm = variant->arch_specific ||
             (elem == 8 && variant->target >= 80 && variant->target < 90) ||
             (k.shared == GPUK__GEMM_F64_SMEM &&
              (size_t)(unsigned)ctx->info.shared_per_sm <
                  2u * ((size_t)GPUK__GEMM_F64_SMEM + 1024u)) ? 1u : 2u;
    g.splits = batch == 1 ? (uint32_t)GPUK__TUNED(GPUK__TUNE_GEMM_SPLITS,
                                                  gpuk__gemm_splits(ctx, tiles, ak, per_sm))
                          : 1u;
    args[0] = &p[0]; args[1] = &p[1]; args[2] = &p[2]; args[3] = &g;
    args[4] = (void*)(uintptr_t)alpha; args[5] = (void*)(uintptr_t)beta;
    k.args = args;
    if (g.splits > 1) { /* GPUK__GEMM_SPLIT_TILES counters, then every part's tile */
        k.ws_bytes = (size_t)GPUK__GEMM_SPLIT_TILES * 4 + tiles * g.splits * tile * tile_n * elem;
        k.ws_arg = &g.ws;
        k.splits_arg = &g.splits;
    }
    /* one block a job; more than the grid takes loop inside the kernel */
    k.grid_x = gpuk__grid(batch > (size_t)-1 / tiles ? (size_t)-1 : tiles * g.splits * batch, 1,
                          /* splits > 1 only with batch 1 and few tiles */
                          (size_t)ctx->info.max_grid[0]);
    if (k.shared && batch == 1 && g.splits == 1)
        gpuk__gemm_tma_plan(&k, variant, &tma, &g, p[1], p[2]);
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_GEMM */

#if defined(GPUK__LAUNCHER_STENCIL)
/* Whether the 3x3's tiles can take the view in (*use = 1 + off) or the call runs the baseline
   (*use = 0), and for TMA the tensor map. The 3x3's sm_90 variant (gpuk_kernels.cuh,
   stencil3x3_tile) loads each tile's box by TMA from a tensor map of in: 4-byte elements, boxes of
   (COLS + 8) x (ROWS + 2), out-of-range elements read as 0. The map's rules: its base 16-byte
   aligned, its row stride a multiple of 16 bytes (below 2^40); the kernel's box coordinates are
   int, so rows and cols below 2^31. Where in itself is off 1 to 3 elements past a 16-byte boundary
   (a view from an odd column), the map starts at that boundary, off columns wider, and *use = 1 +
   off: the kernel reads its boxes off columns further right (the boxes themselves must start on 16
   bytes) and the column left of the image as 0 itself (it is data here, not the map's fill).
   Elsewhere (or with no cuTensorMapEncodeTiled, a driver before CUDA 12.0) *use stays 0 and the
   call runs the baseline's 32 x 8 kernel instead (gpuk__builtin_twin). The sm_80 variant (tma 0)
   copies the same boxes by cp.async under the same rules: *use as above, no map made. */
static gpuk_result gpuk__stencil_tiles(const char* fn, int id, int tma, unsigned char* map,
                                      gpuk_devptr in, unsigned long long rows,
                                      unsigned long long cols, size_t ld, uint32_t* use) {
    const gpuk_devptr base = in - (in & 15u); /* the 16-byte boundary at or below in */
    const unsigned off = (unsigned)(in - base) / 4u;
    const uint64_t dims[2] = { cols + off, rows }, strides[1] = { (uint64_t)ld * 4u };
    const uint32_t box[2] = { GPUK__STENCIL3_TMA_COLS + 8, GPUK__STENCIL3_TMA_ROWS + 2 },
        one[2] = { 1, 1 };
    gpuk__cu_result cr;
    memset(map, 0, 128);
    *use = 0;
    if ((tma && !GPUK__DRV.cuTensorMapEncodeTiled) || (in & 3u) || (ld & 3u) ||
        ld >= ((size_t)1 << 38) || rows >= ((unsigned long long)1 << 31) ||
        cols + off >= ((unsigned long long)1 << 31))
        return GPUK_OK;
    if (!tma) {
        *use = 1 + off;
        return GPUK_OK;
    }
    cr = GPUK__DRV.cuTensorMapEncodeTiled((struct CUtensorMap_st*)(void*)map,
                                          id == GPUK__K_STENCIL3X3_F32
                                              ? GPUK__CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                              : GPUK__CU_TENSOR_MAP_DATA_TYPE_INT32,
                                          2, (void*)(uintptr_t)base, dims, strides, box, one, 0,
                                          GPUK__CU_TENSOR_MAP_SWIZZLE_NONE,
                                          GPUK__CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
    if (cr)
        return gpuk__fail_cu(fn, "cuTensorMapEncodeTiled", cr,
                             "a tensor map of in for the 3x3's TMA tiles");
    *use = 1 + off;
    return GPUK_OK;
}

/* Stencils: (out, in, rows, cols, ldo, ldi, weights | alpha, boundary | steps), 32 x 8 threads a
   block of 32 * GPUK__STENCIL3_COLS x GPUK__STENCIL3_ROWS (3x3) or 32 * (16 / elem) x
   GPUK__STENCIL_ROWS (heat); the 3x3's sm_90 and sm_80 variants add (map, weights as doubles,
   use_map) and take tiles of GPUK__STENCIL3_TMA_COLS x _ROWS walked by blocks of
   GPUK__STENCIL3_TMA_THREADS threads, GPUK__STENCIL3_TMA_PER_SM a multiprocessor, where in's
   rows allow them (see gpuk__stencil_tiles); else the call launches the baseline's 32 x 8
   kernel. mode 0:
   3x3 (weights, boundary); 1: one heat step (in -> out); 2: steps heat steps of out (the
   field) using in as scratch, a step a launch (field and scratch taking turns), then for odd
   steps a copy back (the kernel's steps = 0), so the field ends where it started. Several
   steps a launch in shared memory (32 x 32 tiles, a halo of 4) was about half as fast a step
   as one step a launch (bench "heat_step_f32"), so that is not used. */
static GPUK__NOINLINE gpuk_result gpuk__stencil(const char* fn, int id, gpuk_ctx* ctx,
                                                gpuk_stream stream, size_t elem, int mode,
                                                gpuk_array2d out, gpuk_array2d in,
                                                const float* weights, const void* alpha,
                                                uint32_t boundary, uint32_t steps) {
    gpuk_devptr p[2];
    size_t ld[2], launches, c;
    unsigned long long rows = out.rows, cols = out.cols, lds[2];
    struct { float w[9]; } w;
    struct { double w[9]; } wd;
    unsigned char raw[128 + 64];
    /* 64-byte aligned */
    unsigned char* const map = raw + (64u - (unsigned)((uintptr_t)raw & 63u)) % 64u;
    uint32_t chunk = 0, use_map = 0;
    void* args[11];
    gpuk__kcall k;
    gpuk_result r;
    int i, target;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if ((r = gpuk__array2d(fn, ctx, mode == 2 ? "field" : "out", out, elem, &p[0],
                           &ld[0])) != GPUK_OK)
        return r;
    if ((r = gpuk__array2d(fn, ctx, mode == 2 ? "scratch" : "in", in, elem, &p[1],
                           &ld[1])) != GPUK_OK)
        return r;
    if (in.rows != out.rows || in.cols != out.cols)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is %zu x %zu but %s is %zu x %zu",
                          mode == 2 ? "field" : "out", out.rows, out.cols,
                          mode == 2 ? "scratch" : "in", in.rows, in.cols);
    if (rows && cols &&
        (r = gpuk__overlap(fn, mode == 2 ? "field and scratch" : "out and in", p[0], p[1],
                           (size_t)((rows - 1) * ld[0] + cols) * elem,
                           (size_t)((rows - 1) * ld[1] + cols) * elem, 0)) != GPUK_OK)
        return r;
    if (mode == 0) {
        if (!weights)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "weights is NULL (nine floats, row-major)");
        if (boundary < GPUK_BOUNDARY_SKIP || boundary > GPUK_BOUNDARY_ZERO)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "boundary is %u; it must be GPUK_BOUNDARY_SKIP, GPUK_BOUNDARY_CLAMP "
                              "or GPUK_BOUNDARY_ZERO", boundary);
        for (i = 0; i < 9; i++) {
            w.w[i] = weights[i];
            if (!(w.w[i] - w.w[i] == 0))
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                                  "weights[%d] is not a finite number", i);
        }
    }
    if (rows == 0 || cols == 0 || (mode == 2 && steps == 0)) return GPUK_OK;
    k.block_x = 32;
    k.block_y = GPUK__BLOCK / 32;
    k.grid_x = gpuk__grid((size_t)cols,
                          mode == 0 ? (size_t)32 * GPUK__STENCIL3_COLS : 32 * (16 / elem),
                          (size_t)ctx->info.max_grid[0]);
    k.grid_y = gpuk__grid((size_t)rows, mode == 0 ? GPUK__STENCIL3_ROWS : GPUK__STENCIL_ROWS,
                          65535); /* taller views loop in the kernel */
    lds[0] = ld[0]; lds[1] = ld[1];
    args[2] = &rows; args[3] = &cols;
    args[6] = mode == 0 ? (void*)&w : (void*)(uintptr_t)alpha;
    args[7] = mode == 0 ? (void*)&boundary : (void*)&chunk;
    k.args = args;
    if (mode == 0 && (target = gpuk__builtin_pick(ctx, id)->target) >= 80) { /* the tiles */
        for (i = 0; i < 9; i++) wd.w[i] = (double)w.w[i];
        if ((r = gpuk__stencil_tiles(fn, id, target >= 90, map, p[1], rows, cols, ld[1],
                                    &use_map)) != GPUK_OK)
            return r;
        args[8] = map; args[9] = &wd; args[10] = &use_map;
        k.baseline = !use_map; /* the 32 x 8 kernel, in the launch shape above */
        if (use_map) { /* blocks that walk the tiles (the kernel's comment says why this many) */
            /* (a map's rules mean rows and cols below 2^31: each count fits gpuk__grid's 32
               bits) */
            const size_t tc = gpuk__grid((size_t)cols, GPUK__STENCIL3_TMA_COLS, (size_t)-1),
                         tiles = tc * gpuk__grid((size_t)rows, GPUK__STENCIL3_TMA_ROWS, (size_t)-1);
            const size_t per_sm = GPUK__TUNED(GPUK__TUNE_STENCIL_PER_SM, GPUK__STENCIL3_TMA_PER_SM);
            size_t g = gpuk__grid(tiles, 1, gpuk__sm_blocks(ctx, per_sm)), d = 0;
            /* Where blocks walk several tiles, up to an eighth fewer of them, so that the grid and
               the tiles a row have no common factor: each block's tile column then goes round all
               of them, and the first and last columns (the edge rules' extra work) come to every
               block alike, not every few turns to a few (bench "stencil3x3_i32 4096^2"). More
               blocks than 4 an SM, to even out the tiles a block, were slower. */
            while (g < tiles && d < g / 8 && gpuk__gcd(g - d, tc) != 1) d++;
            k.grid_x = (unsigned)(d < g / 8 ? g - d : g);
            k.grid_y = 1;
            k.grid_z = 1;
            k.block_x = GPUK__STENCIL3_TMA_THREADS;
            k.block_y = 1;
            k.shared = GPUK__STENCIL3_TMA_SMEM;
        }
    }
    if (mode != 2) { /* out <- in */
        args[0] = &p[0]; args[1] = &p[1]; args[4] = &lds[0]; args[5] = &lds[1];
        chunk = 1;
        return gpuk__builtin_go(&k);
    }
    launches = (size_t)steps + steps % 2; /* odd: the last launch copies back */
    for (c = 0; c < launches; c++) {
        /* even launches read the field, odd ones the scratch */
        const int from = c % 2 == 0 ? 0 : 1;
        chunk = c < steps ? 1u : 0u;
        args[0] = &p[1 - from]; args[1] = &p[from]; args[4] = &lds[1 - from]; args[5] = &lds[from];
        if ((r = gpuk__builtin_go(&k)) != GPUK_OK) return r;
    }
    return GPUK_OK;
}
#endif /* GPUK__LAUNCHER_STENCIL */

#if defined(GPUK__LAUNCHER_HISTOGRAM)
/* Histogram: zero counts, then (counts, in, n, nbins, lo, hi) with per-block shared counts. */
static GPUK__NOINLINE gpuk_result gpuk__histogram(const char* fn, int id, gpuk_ctx* ctx,
                                                  gpuk_stream stream, size_t elem,
                                                  gpuk_array counts, uint32_t nbins, int64_t lo,
                                                  int64_t hi, gpuk_array in, size_t n) {
    gpuk_devptr pc, pi;
    unsigned long long n64 = n;
    long long lo64 = lo, hi64 = hi;
    void* args[6];
    gpuk__kcall k;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t copies;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (nbins == 0 || nbins > (1u << 24))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "nbins is %u; it must be 1 to 2^24", nbins);
    if (lo >= hi || (uint64_t)hi - (uint64_t)lo > ((uint64_t)1 << 40))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the range [%lld, %lld) is %s", (long long)lo,
                          (long long)hi, lo >= hi ? "empty" : "wider than 2^40");
    if ((r = gpuk__array(fn, ctx, "counts", counts, 8, nbins, &pc)) != GPUK_OK) return r;
    if ((r = gpuk__array(fn, ctx, "in", in, elem, n, &pi)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "counts and in", pc, pi, (size_t)nbins * 8, n * elem, 0)) != GPUK_OK)
        return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuMemsetD32Async(pc, 0, (size_t)nbins * 2, k.cs)) != 0)
        return gpuk__fail_cu(fn, "cuMemsetD32Async", cr, "zeroing counts");
    if (n == 0) return GPUK_OK;
    args[0] = &pc; args[1] = &pi; args[2] = &n64; args[3] = &nbins; args[4] = &lo64;
    args[5] = &hi64;
    k.args = args;
    /* u8: one copy of the counts per warp */
    copies = elem == 1 && nbins <= 256 ? GPUK__BLOCK / 32 : 1;
    k.shared = nbins <= GPUK__HIST_SMEM_BINS ? copies * nbins * 4 : 0;
    k.grid_x = gpuk__grid(n, (size_t)GPUK__BLOCK * (elem == 1 ? 16u : 1u), gpuk__sm_blocks(ctx, 8));
    return gpuk__builtin_go(&k);
}
#endif /* GPUK__LAUNCHER_HISTOGRAM */

#if defined(GPUK__LAUNCHER_HISTOGRAM_FLOAT)
/* Float histogram: zero the nbins + 3 counts, then (counts, in, n, nbins, lo, hi, scale) with
   scale = nbins / (hi - lo) rounded to the input's type here, once, so every block and a CPU
   reference bin with the same number. lo and hi reach here as double; an f32 call's are floats
   widened exactly. */
static GPUK__NOINLINE gpuk_result gpuk__histogram_float(const char* fn, int id, gpuk_ctx* ctx,
                                                        gpuk_stream stream, size_t elem,
                                                        gpuk_array counts, uint32_t nbins,
                                                        double lo, double hi, gpuk_array in,
                                                        size_t n) {
    gpuk_devptr pc, pi;
    unsigned long long n64 = n;
    /* volatile: each step rounded to its type, even where float math runs wider (x87) */
    volatile float lo32 = 0.0f, hi32 = 0.0f, span32, scale32 = 0.0f;
    volatile double span64, scale64 = 0.0;
    void* args[7];
    gpuk__kcall k;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t copies;
    int finite;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (nbins == 0 || nbins > (1u << 24))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "nbins is %u; it must be 1 to 2^24", nbins);
    /* x - x is 0 for a finite x, NaN for an infinity or a NaN */
    if (!(lo - lo == 0.0 && hi - hi == 0.0))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "lo and hi must be finite (an infinity or a "
                          "NaN is not a range)");
    if (!(lo < hi))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the range [lo, hi) is empty: lo >= hi");
    if (elem == 4) { /* an f32 call's lo and hi are floats: converted back exactly */
        lo32 = (float)lo;
        hi32 = (float)hi;
        span32 = hi32 - lo32;
        scale32 = (float)nbins / span32;
        finite = span32 - span32 == 0.0f && scale32 - scale32 == 0.0f && scale32 > 0.0f;
    } else {
        span64 = hi - lo;
        scale64 = (double)nbins / span64;
        finite = span64 - span64 == 0.0 && scale64 - scale64 == 0.0 && scale64 > 0.0;
    }
    if (!finite)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "hi - lo or nbins / (hi - lo) overflows %s "
                          "(or the latter is 0): the bins are not representable",
                          elem == 4 ? "float" : "double");
    if ((r = gpuk__array(fn, ctx, "counts", counts, 8, (size_t)nbins + 3, &pc)) != GPUK_OK)
        return r;
    if ((r = gpuk__array(fn, ctx, "in", in, elem, n, &pi)) != GPUK_OK) return r;
    if ((r = gpuk__overlap(fn, "counts and in", pc, pi, ((size_t)nbins + 3) * 8, n * elem, 0)) !=
        GPUK_OK)
        return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuMemsetD32Async(pc, 0, ((size_t)nbins + 3) * 2, k.cs)) != 0)
        return gpuk__fail_cu(fn, "cuMemsetD32Async", cr, "zeroing counts");
    if (n == 0) return GPUK_OK;
    {
        float lo_f = lo32, hi_f = hi32, scale_f = scale32;
        double lo_d = lo, hi_d = hi, scale_d = scale64;
        args[0] = &pc; args[1] = &pi; args[2] = &n64; args[3] = &nbins;
        if (elem == 4) { args[4] = &lo_f; args[5] = &hi_f; args[6] = &scale_f; }
        else { args[4] = &lo_d; args[5] = &hi_d; args[6] = &scale_d; }
        k.args = args;
        /* one copy of the counts per warp up to 256 bins; past HIST_SMEM_BINS only the three
           counts apart are in shared memory */
        copies = nbins <= 256 ? GPUK__BLOCK / 32 : 1;
        k.shared = nbins <= GPUK__HIST_SMEM_BINS ? copies * (nbins + 3) * 4 : 3 * 4;
        k.grid_x = gpuk__grid(n, (size_t)GPUK__BLOCK * (16 / elem),
                              gpuk__sm_blocks(ctx, elem == 4 ? GPUK__HIST_F32_PER_SM
                                                             : GPUK__HIST_F64_PER_SM));
        return gpuk__builtin_go(&k);
    }
}
#endif /* GPUK__LAUNCHER_HISTOGRAM_FLOAT */

#if defined(GPUK__LAUNCHER_SORT)
/* Radix sort (gpuk_kernels.cuh, sort_run): one block where n fits a tile; else, on the
   stream, a clear of the head and status words, the histogram, and a launch a pass, the
   passes alternating between out and the second buffer so that the last lands in out. In
   place (out the same as in) with an odd number of passes, the input goes to the second
   buffer first, so that no pass writes what it reads. values_out NULL: keys alone; index: the
   values are the keys' input positions (values_in unused). */
static GPUK__NOINLINE gpuk_result gpuk__sort(const char* fn, int id, gpuk_ctx* ctx,
                                             gpuk_stream stream, size_t key, gpuk_array keys_out,
                                             gpuk_array keys_in, const gpuk_array* values_out,
                                             const gpuk_array* values_in, size_t n,
                                             int descending, uint32_t begin_bit,
                                             uint32_t end_bit, int index) {
    const int pairs = values_out != NULL;
    const int variant = gpuk__sort_variant(ctx, id);
    const size_t tile = gpuk__sort_tile(key, pairs, variant), bits = key * 8;
    gpuk_devptr ko, ki, vo = 0, vi = 0, scratch = 0, src_k, src_v, dst_k, dst_v, alt_k = 0;
    gpuk_devptr alt_v = 0;
    unsigned long long n64 = n;
    uint32_t pass, passes, mode, first_mode, grid;
    size_t tiles, bytes, keys_at, vals_at;
    void* args[10];
    gpuk__kcall k;
    gpuk__cu_function f;
    gpuk__cu_result cr;
    gpuk__scratch* s;
    gpuk_result r;
    if ((r = gpuk__kcall_init(&k, fn, id, ctx, stream)) != GPUK_OK) return r;
    if (end_bit == 0) end_bit = (uint32_t)bits;
    if (begin_bit >= end_bit || end_bit > bits)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the bit range [%u, %u) is %s", begin_bit,
                          end_bit, begin_bit >= end_bit ? "empty (end_bit 0 stands for all bits)"
                                                        : "past the key's bits");
    if ((r = gpuk__array(fn, ctx, pairs ? "keys_out" : "out", keys_out, key, n, &ko)) != GPUK_OK)
        return r;
    if ((r = gpuk__array(fn, ctx, pairs ? "keys_in" : "in", keys_in, key, n, &ki)) != GPUK_OK)
        return r;
    if ((r = gpuk__overlap(fn, pairs ? "keys_out and keys_in" : "out and in", ko, ki, n * key,
                           n * key, 1)) != GPUK_OK)
        return r;
    if (pairs) {
        const char* what = index ? "index_out" : "values_out";
        if ((r = gpuk__array(fn, ctx, what, *values_out, 4, n, &vo)) != GPUK_OK) return r;
        if (values_in && (r = gpuk__array(fn, ctx, "values_in", *values_in, 4, n, &vi)) != GPUK_OK)
            return r;
        if (values_in && (r = gpuk__overlap(fn, "values_out and values_in", vo, vi, n * 4, n * 4,
                                            1)) != GPUK_OK)
            return r;
        if ((r = gpuk__overlap(fn, index ? "keys_out and index_out" : "keys_out and values_out",
                               ko, vo, n * key, n * 4, 0)) != GPUK_OK ||
            (r = gpuk__overlap(fn, index ? "keys_in and index_out" : "keys_in and values_out",
                               ki, vo, n * key, n * 4, 0)) != GPUK_OK)
            return r;
        if (values_in && (r = gpuk__overlap(fn, "keys_out and values_in", ko, vi, n * key, n * 4,
                                            0)) != GPUK_OK)
            return r;
        if (index && (uint64_t)n > 0x100000000ull)
            return gpuk__fail(fn, GPUK_ERR_LIMIT, "n = %zu: index_out holds uint32 indices, so n "
                              "can be at most 2^32", n);
    }
    if (n == 0) return GPUK_OK;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((r = gpuk__builtin_function(fn, ctx, id, k.cs, &f)) != GPUK_OK) return r;
    passes = (end_bit - begin_bit + 7) / 8;
    mode = descending ? GPUK__SORT_DESCENDING : 0u;
    first_mode = mode | (index ? GPUK__SORT_INDEX : 0u);
    args[0] = &dst_k; args[1] = &src_k; args[2] = &dst_v; args[3] = &src_v; args[4] = &n64;
    args[5] = &scratch; args[6] = &pass; args[7] = &begin_bit; args[8] = &end_bit;
    args[9] = &first_mode;
    if (n <= tile) { /* one block sorts it all in shared memory: no scratch */
        dst_k = ko; src_k = ki; dst_v = vo; src_v = vi;
        pass = GPUK__SORT_SINGLE;
        cr = GPUK__DRV.cuLaunchKernel(f, 1, 1, 1, GPUK__BLOCK, 1, 1, 0, k.cs, args, NULL);
        if (cr) return gpuk__fail_cu(fn, "cuLaunchKernel", cr, gpuk__builtin_ptx_of(id)->name);
        gpuk__launch_note(ctx, gpuk__builtin_ptx_of(id)->name);
        return GPUK_OK;
    }
    tiles = n / tile + (n % tile != 0);
    if (tiles > (size_t)ctx->info.max_grid[0] || tiles > 0xFFFFFFFFu)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "n = %zu needs %zu tiles of %zu; the grid takes %d",
                          n, tiles, tile, ctx->info.max_grid[0]);
    if (!(bytes = gpuk__sort_bytes(n, key, pairs, variant, &keys_at, &vals_at)))
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "scratch for a sort of %zu keys would pass "
                          "SIZE_MAX", n);
    if (!(s = gpuk__scratch_lock(fn, ctx, stream, k.cs, &r))) return r;
    if ((r = gpuk__sort_reserve(fn, ctx, s, k.cs, bytes, &k.capture)) != GPUK_OK ||
        (r = gpuk__scratch_use(fn, s, GPUK__AREA_SORT, k.cs, &k.capture)) != GPUK_OK)
        goto done;
    scratch = s->sort;
    alt_k = s->sort + keys_at;
    alt_v = pairs ? s->sort + vals_at : 0;
    /* the head (histogram, tickets) and this sort's status words start at zero */
    if ((cr = GPUK__DRV.cuMemsetD32Async(scratch, 0, (GPUK__SORT_HEAD_BYTES + tiles * 2048) / 4,
                                         k.cs)) != 0) {
        r = gpuk__fail_cu(fn, "cuMemsetD32Async", cr, "clearing the sort's status words");
        goto done;
    }
    src_k = ki; src_v = vi;
    if (passes % 2 && (ko == ki || (pairs && vi && vo == vi))) { /* in place, odd: see above */
        if ((cr = GPUK__DRV.cuMemcpyDtoDAsync(alt_k, ki, n * key, k.cs)) != 0 ||
            (vi && (cr = GPUK__DRV.cuMemcpyDtoDAsync(alt_v, vi, n * 4, k.cs)) != 0)) {
            r = gpuk__fail_cu(fn, "cuMemcpyDtoDAsync", cr, "the input to the second buffer");
            goto done;
        }
        src_k = alt_k;
        if (vi) src_v = alt_v;
    }
    /* the histogram: a grid-stride loop, 4 blocks an SM (3 fit where the tile is dynamic) */
    pass = GPUK__SORT_HIST;
    dst_k = ko; dst_v = vo;
    grid = gpuk__grid(n, (size_t)GPUK__BLOCK * 16, gpuk__sm_blocks(ctx, 4));
    if ((cr = GPUK__DRV.cuLaunchKernel(f, grid, 1, 1, GPUK__BLOCK, 1, 1, 0, k.cs, args,
                                       NULL)) != 0) {
        r = gpuk__fail_cu(fn, "cuLaunchKernel", cr, gpuk__builtin_ptx_of(id)->name);
        goto done;
    }
    for (pass = 0; pass < passes; pass++) {
        const int to_out = (passes - 1 - pass) % 2 == 0;
        dst_k = to_out ? ko : alt_k;
        dst_v = to_out ? vo : alt_v;
        if (pass == 1) first_mode = mode; /* the values are in the buffers from pass 1 on */
        cr = GPUK__DRV.cuLaunchKernel(f, (uint32_t)tiles, 1, 1, GPUK__BLOCK, 1, 1, 0, k.cs,
                                      args, NULL);
        if (cr) {
            r = gpuk__fail_cu(fn, "cuLaunchKernel", cr, gpuk__builtin_ptx_of(id)->name);
            goto done;
        }
        src_k = dst_k;
        src_v = dst_v;
    }
    gpuk__launch_note(ctx, gpuk__builtin_ptx_of(id)->name);
done:
    gpuk__scratch_unlock(s);
    return r;
}
#endif /* GPUK__LAUNCHER_SORT */
