/* tests/support/fake_driver.h - a fake CUDA driver for host tests, plugged into gpuk via
   gpuk_desc.get_proc. "Device memory" is host memory, so copies really move bytes; streams, events,
   modules and contexts are tracked objects, so a double destroy, a leak, or a call without a
   current context is caught. Any call can be made to fail: the Nth call (fail_at), or by name
   (fail_name), with any code; a sticky code makes every later call fail, as the real driver does
   after 700.
   Stream capture records what is queued on a capturing stream (copies, memsets, launches,
   event records) into a graph instead of running it; a graph exec replays the records, so
   copies in a graph move bytes at each launch, and an update checks the records' shape as
   the driver does (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE when it changed).
   Stream-ordered memory (cuMemAllocAsync, cuMemFreeAsync) comes from one pool per device whose
   release threshold is kept and whose trims are counted; an allocation inside a capture is the
   graph's (kind FK_GALLOC: it lives until the fake is reset, poisoned again at each launch),
   and only such memory may be freed inside a capture, as the driver requires.
   Context limits (cuCtxSetLimit, cuCtxGetLimit) are kept per device from the driver's defaults;
   the printf FIFO and the malloc heap are refused (CUDA_ERROR_INVALID_VALUE) once a kernel
   whose PTX calls vprintf (malloc, free) has run there, as the driver does, until the primary
   context's last release; the device runtime's sync depth is unsupported from compute
   capability 9.0 (CUDA_ERROR_UNSUPPORTED_LIMIT).
   Page-locked memory made with DEVICEMAP is mapped (its device address, from
   cuMemHostGetDevicePointer, is its host one, and copies and memsets may use it); managed
   memory (cuMemAllocManaged) is device memory the host shares; prefetch and advice check the
   range and the device and are counted.
   It checks gpuk's error paths; it is never evidence that a kernel works. */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned int fres; /* CUresult */
typedef unsigned long long fdevptr;

enum { FAKE_MAX_OBJS = 8192, FAKE_MAX_DEVICES = 4 };

/* mapped: page-locked host memory made with DEVICEMAP (its device address is its host one) */
typedef struct fake_obj { int kind; int live; void* mem; size_t bytes; int device; int mapped; } fake_obj;
enum { FK_ALLOC = 1, FK_HOST, FK_REGISTERED, FK_STREAM, FK_EVENT, FK_MODULE, FK_FUNC, FK_CTX, FK_GRAPH,
       FK_EXEC, FK_GALLOC, FK_MANAGED };
enum { FK_LINK = 64 }; /* a cuLinkCreate state (the linker: f_cuLinkCreate) */
enum { FK_IPCMEM = 65 }; /* a cuIpcOpenMemHandle mapping (f_cuIpcOpenMemHandle) */
typedef struct fake_ipc_map { unsigned long long ptr; } fake_ipc_map;

typedef struct fake_func {
    int kind_tag; char name[64]; int nparams; size_t psize[16]; int fault;
    int max_dynamic_smem; /* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES); 0: not set */
    int uses_printf, uses_malloc; /* its body calls vprintf; malloc or free */
} fake_func;
enum { FAKE_MAX_FUNCS = 32 }; /* kernels a module may hold (the gallery module has 9) */
typedef struct fake_module { int kind_tag; char* text; fake_func funcs[FAKE_MAX_FUNCS]; int nfuncs; } fake_module;
/* flags: cuEventCreate's; imported_from: the exported event a cuIpcOpenEventHandle opened */
typedef struct fake_event { int kind_tag; int recorded; double t; void* stream; long seq; unsigned flags;
                            void* imported_from; } fake_event;

typedef struct fake_config {
    int version;              /* cuDriverGetVersion; 0 -> 13000 */
    int devices;              /* 0 -> 1 */
    long fail_at;             /* fail the Nth driver call (1-based); 0 = never */
    const char* fail_name;    /* or every call to this entry point */
    int fail_code;            /* 0 -> 1 (INVALID_VALUE) */
    int sticky;               /* after the first failure, every call returns fail_code */
    const char* missing[8];   /* entry points the driver does not have */
    int jit_code;             /* cuModuleLoadDataEx fails with this and jit_log */
    const char* jit_log;
    size_t mem_limit;         /* cuMemAlloc above this total -> 2 (out of memory); 0 = 1 GiB */
    int fault_on_sync;        /* a launched kernel named "fault" makes the next sync return this */
    int cc_major;             /* compute capability major; 0 -> 9 */
    int cc_minor;             /* and minor (8.9: Ada, 12.0: consumer Blackwell) */
    int l2_bytes;             /* CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE; 0 -> 7 (as any other attribute) */
    int shared_per_sm;        /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR; 0 -> an H100's 233472 */
    void* capturing_stream;   /* cuStreamIsCapturing says this stream is being captured */
    int jit_delay_ms;         /* cuModuleLoadDataEx takes this long (a slow JIT) */
    int sync_delay_ms;        /* stream and ctx syncs take this long (a long kernel draining) */
    void (*on_call)(const char* name); /* called at the start of every entry point (a test can
                                          pause a thread there to force an interleaving) */
    int peer_access;          /* 1: every device can access every other's memory (P2P) */
    long fail_nth;            /* with fail_name: only its Nth call fails (1-based); 0 = every one */
    int defer_copies;         /* 1: an async copy between device and page-locked host memory
                                 moves its bytes only when its stream, an event recorded after
                                 it, or the ctx is waited for, as a real DMA engine may; page-
                                 locked memory copied again or freed meanwhile is misuse */
    int no_cooperative;       /* CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0 */
    int occupancy;            /* blocks a multiprocessor (occupancy); 0 -> 2048 / block, at most 32 */
    int cluster_threads;      /* the most threads a cluster's blocks may have together (one GPU
                                 processing cluster): 0 -> 16 x 2048; over it no cluster fits */
    int no_mempools;          /* CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0 (the entry
                                 points of CUDA 11.2 are there from version 11020) */
    int no_ipc;               /* CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING and _IPC_EVENT_SUPPORTED
                                 are 0 (a platform without CUDA IPC) */
    int no_map_host;          /* CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0 */
    int no_managed;           /* CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0 (cuMemAllocManaged: 801) */
    int no_concurrent_managed; /* CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0 (Windows,
                                 some Jetson): cuMemPrefetchAsync to a device is refused */
    const char* pci_bus_id;   /* cuDeviceGetPCIBusId's answer for every device (the driver's
                                 is upper case); NULL -> "0000:0N:00.0", N = ordinal + 1 */
} fake_config;

/* A deferred copy (defer_copies), in the order queued. */
typedef struct fake_pending { void* stream; int htod; void* host; fdevptr dev; size_t n; long seq; } fake_pending;
enum { FAKE_MAX_PENDING = 256, FAKE_MAX_WAITS = 64 };

/* One recorded operation of a captured stream, with what it needs to run again: kernel
   arguments are copied at capture, as the driver does; host pointers are read at each run. */
enum { FOP_MEMSET = 1, FOP_HTOD, FOP_DTOH, FOP_DTOD, FOP_LAUNCH, FOP_RECORD, FOP_ALLOC, FOP_FREE,
       FOP_COND /* a conditional node: recorded with its body, replayed as nothing */ };
typedef struct fake_op {
    int type;
    unsigned long long dst, src;
    void* host;
    size_t n, elem;
    unsigned value;
    void* func;
    unsigned grid[3], block[3], attr_cluster[3], smem;
    int attr_cooperative, attr_priority, ex;
    unsigned char args[16][128];
} fake_op;
enum { FAKE_MAX_OPS = 160 };
/* A captured graph, and an instantiated exec (a copy of it). */
typedef struct fake_graph { int nops; fake_op ops[FAKE_MAX_OPS]; } fake_graph;

/* A stream: its creation flags and whether work is queued on it that nothing has waited for
   yet (the fake runs work at once, but tracks the order a real GPU would need); its capture
   (0 none, 1 active, 2 invalidated) with its mode, thread and graph. */
typedef struct fake_stream {
    unsigned flags;
    int pending;
    int capture;
    unsigned capture_mode;
    pthread_t capture_thread;
    fake_graph* graph;
    int capture_to;           /* cuStreamBeginCaptureToGraph: graph is the caller's */
} fake_stream;
#define FAKE_STREAM_LEGACY ((void*)(uintptr_t)1) /* CU_STREAM_LEGACY */

typedef struct fake_state {
    fake_config cfg;
    pthread_mutex_t lock;
    long calls;
    long failed_calls;
    long first_failure_call;
    int sticky_now;
    int primary_refs[FAKE_MAX_DEVICES];
    int peer_enabled[FAKE_MAX_DEVICES][FAKE_MAX_DEVICES]; /* [ctx device][peer device] */
    long peer_copies;         /* cuMemcpyPeer(Async) calls that copied */
    fake_obj objs[FAKE_MAX_OBJS];
    int nobjs;
    size_t mem_in_use;
    long launches;
    int pending_fault;
    int protocol_errors;      /* gpuk misused the driver: double free, bad handle, no context */
    char protocol_msg[256];
    unsigned char last_args[16][128]; /* the last launch's kernel arguments, as passed */
    unsigned last_grid[3];            /* and its grid */
    unsigned last_block[3];           /* and block */
    unsigned last_smem;               /* and dynamic shared memory */
    long tensor_maps;                 /* cuTensorMapEncodeTiled calls that made a map */
    int legacy_pending;       /* work queued on the legacy stream not yet waited for */
    long unordered;           /* copies that a real GPU could run before (or while) earlier
                                 queued work on another stream runs: stale or clobbered data */
    void* last_copy_stream;   /* the stream of the last memcpy */
    unsigned last_cluster[3]; /* the last cuLaunchKernelEx's attributes (0: not set) */
    int last_cooperative, last_priority;
    long ex_launches;         /* launches through cuLaunchKernelEx */
    long graph_launches;
    long cond_handles;        /* cuGraphConditionalHandleCreate calls that made a handle */
    long cond_nodes;          /* conditional nodes added (fake_cond_bodies holds their bodies) */
    unsigned last_cond_default, last_cond_type; /* the last handle's default, node's type */
    unsigned long long pool_threshold[FAKE_MAX_DEVICES]; /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    long pool_trims;          /* cuMemPoolTrimTo calls */
    size_t last_trim_keep;    /* and the last one's bytes to keep */
    long async_allocs, async_frees; /* cuMemAllocAsync / cuMemFreeAsync that did their work
                                 (recorded into a capture or run) */
    void* last_free_stream;   /* the stream of the last cuMemFreeAsync */
    size_t limits[FAKE_MAX_DEVICES][5]; /* CUlimit 0-4 of each device's primary context */
    int printf_ran[FAKE_MAX_DEVICES], malloc_ran[FAKE_MAX_DEVICES]; /* a kernel calling them ran */
    long set_limit_calls;     /* cuCtxSetLimit calls that changed a limit */
    int last_module_elf;      /* the last module loaded was a cubin (ELF) */
    size_t last_module_bytes; /* and its size by its ELF header */
    long name_calls;          /* calls to cfg.fail_name so far (fail_nth) */
    long pinned_copies;       /* async host copies whose host memory was page-locked */
    long seq;                 /* deferred copies queued so far */
    fake_pending pending[FAKE_MAX_PENDING];
    int npending;
    struct { void* waiter; void* on; } waits[FAKE_MAX_WAITS]; /* cuStreamWaitEvent: the waiting
                                 stream and the stream the event was recorded on */
    int nwaits;
    long prefetches;          /* cuMemPrefetchAsync calls that moved a managed range */
    int last_prefetch_device; /* and the last one's device (-1: CU_DEVICE_CPU) */
    void* last_prefetch_stream;
    long advices;             /* cuMemAdvise calls that took */
    unsigned last_advice;     /* and the last one's advice and device */
    int last_advice_device;
} fake_state;

static fake_state fake = { .lock = PTHREAD_MUTEX_INITIALIZER }; /* the rest zero: fake_reset sets it */
static __thread int fake_replaying; /* a graph's records run: not counted as driver calls */
static __thread int fake_tls_ctx; /* 0 = none, else device + 1 */
static const char* fake_last_failed_name = ""; /* entry point of the first injected failure */

static void fake_protocol(const char* what, const char* fn) {
    fake.protocol_errors++;
    snprintf(fake.protocol_msg, sizeof fake.protocol_msg, "%s in %s", what, fn);
}

/* A primary context's limits as the driver starts it: 1 KiB of stack, a 1 MiB printf FIFO, an
   8 MiB heap, sync depth 2, 2048 pending device-side launches; nothing run yet. */
static void fake_limits_default(int dev) {
    static const size_t defaults[5] = { 1024, (size_t)1 << 20, (size_t)8 << 20, 2, 2048 };
    memcpy(fake.limits[dev], defaults, sizeof defaults);
    fake.printf_ran[dev] = fake.malloc_ran[dev] = 0;
}

static void fake_reset(const fake_config* cfg) {
    int i;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++) {
        fake_obj* o = &fake.objs[i];
        if (o->kind == FK_MODULE && o->mem) free(((fake_module*)o->mem)->text);
        if (o->kind == FK_STREAM && o->mem && !((fake_stream*)o->mem)->capture_to)
            free(((fake_stream*)o->mem)->graph); /* a capture to a graph: not the stream's */
        if (o->kind != FK_REGISTERED && o->kind != FK_FUNC) free(o->mem);
    }
    memset(fake.objs, 0, sizeof fake.objs);
    fake.nobjs = 0;
    memset(&fake.cfg, 0, sizeof fake.cfg);
    if (cfg) fake.cfg = *cfg;
    if (!fake.cfg.version) fake.cfg.version = 13000;
    if (!fake.cfg.devices) fake.cfg.devices = 1;
    if (!fake.cfg.fail_code) fake.cfg.fail_code = 1;
    if (!fake.cfg.mem_limit) fake.cfg.mem_limit = (size_t)1 << 30;
    fake.calls = fake.failed_calls = fake.first_failure_call = 0;
    fake_last_failed_name = "";
    fake.sticky_now = 0;
    memset(fake.primary_refs, 0, sizeof fake.primary_refs);
    memset(fake.peer_enabled, 0, sizeof fake.peer_enabled);
    fake.peer_copies = 0;
    fake.mem_in_use = 0;
    fake.launches = 0;
    fake.pending_fault = 0;
    fake.protocol_errors = 0;
    fake.protocol_msg[0] = 0;
    fake.legacy_pending = 0;
    fake.unordered = 0;
    fake.last_copy_stream = NULL;
    fake.last_module_elf = 0;
    fake.last_module_bytes = 0;
    fake.name_calls = fake.pinned_copies = fake.seq = 0;
    fake.npending = fake.nwaits = 0;
    memset(fake.last_cluster, 0, sizeof fake.last_cluster);
    fake.last_cooperative = fake.last_priority = 0;
    fake.ex_launches = fake.graph_launches = 0;
    fake.cond_handles = fake.cond_nodes = 0;
    memset(fake.pool_threshold, 0, sizeof fake.pool_threshold);
    fake.pool_trims = fake.async_allocs = fake.async_frees = 0;
    fake.last_trim_keep = 0;
    fake.last_free_stream = NULL;
    for (i = 0; i < FAKE_MAX_DEVICES; i++) fake_limits_default(i);
    fake.set_limit_calls = 0;
    fake.prefetches = fake.advices = 0;
    fake.last_prefetch_device = fake.last_advice_device = 0;
    fake.last_prefetch_stream = NULL;
    fake.last_advice = 0;
    pthread_mutex_unlock(&fake.lock);
    fake_tls_ctx = 0;
}

/* Count the call; decide whether it fails. */
static int fake_fail(const char* fn) {
    int code = 0;
    if (fake_replaying) return 0;
    if (fake.cfg.on_call) fake.cfg.on_call(fn);
    pthread_mutex_lock(&fake.lock);
    fake.calls++;
    if (fake.sticky_now) code = fake.cfg.fail_code;
    else if ((fake.cfg.fail_at && fake.calls == fake.cfg.fail_at) ||
             (fake.cfg.fail_name && strcmp(fake.cfg.fail_name, fn) == 0 &&
              (!fake.cfg.fail_nth || ++fake.name_calls == fake.cfg.fail_nth))) {
        code = fake.cfg.fail_code;
        if (fake.cfg.sticky) fake.sticky_now = 1;
    }
    if (code) {
        fake.failed_calls++;
        if (!fake.first_failure_call) { fake.first_failure_call = fake.calls; fake_last_failed_name = fn; }
    }
    pthread_mutex_unlock(&fake.lock);
    return code;
}

#define FAKE_ENTER(name) do { int c_ = fake_fail(name); if (c_) return (fres)c_; } while (0)
#define FAKE_NEED_CTX(name) do { if (!fake_tls_ctx) { fake_protocol("no current context", name); return 201; } } while (0)

static void* fake_track(int kind, void* mem, size_t bytes) {
    int i;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs && fake.objs[i].live; i++) {}
    if (i == fake.nobjs) {
        if (fake.nobjs == FAKE_MAX_OBJS) { pthread_mutex_unlock(&fake.lock); return NULL; }
        fake.nobjs++;
    }
    if (fake.objs[i].mem && fake.objs[i].kind != FK_REGISTERED && fake.objs[i].kind != FK_FUNC) free(fake.objs[i].mem);
    fake.objs[i].kind = kind;
    fake.objs[i].live = 1;
    fake.objs[i].mem = mem;
    fake.objs[i].bytes = bytes;
    fake.objs[i].device = fake_tls_ctx - 1;
    fake.objs[i].mapped = 0;
    pthread_mutex_unlock(&fake.lock);
    return mem;
}

static fake_obj* fake_find_locked(int kind, const void* mem) {
    int i;
    for (i = 0; i < fake.nobjs; i++)
        if (fake.objs[i].live && fake.objs[i].kind == kind && fake.objs[i].mem == mem) return &fake.objs[i];
    return NULL;
}

static void fake_set_mapped(int kind, const void* mem, int mapped) {
    fake_obj* o;
    pthread_mutex_lock(&fake.lock);
    if ((o = fake_find_locked(kind, mem)) != NULL) o->mapped = mapped;
    pthread_mutex_unlock(&fake.lock);
}

static int fake_is_live(int kind, const void* mem) {
    fake_obj* o;
    pthread_mutex_lock(&fake.lock);
    o = fake_find_locked(kind, mem);
    pthread_mutex_unlock(&fake.lock);
    return o != NULL;
}

/* Untrack and free; a second release of the same object is a protocol error. */
static int fake_release(int kind, void* mem, const char* fn) {
    fake_obj* o;
    pthread_mutex_lock(&fake.lock);
    o = fake_find_locked(kind, mem);
    if (o) {
        o->live = 0;
        if (kind == FK_ALLOC) fake.mem_in_use -= o->bytes;
        if (kind == FK_MODULE) { free(((fake_module*)mem)->text); }
        if (kind == FK_STREAM && !((fake_stream*)mem)->capture_to) free(((fake_stream*)mem)->graph);
        if (kind != FK_REGISTERED) free(mem);
        o->mem = NULL;
    }
    pthread_mutex_unlock(&fake.lock);
    if (!o) fake_protocol("release of an unknown or destroyed object", fn);
    return o != NULL;
}

/* Device memory range [p, p+n) inside one live allocation (copies must stay in bounds). */
static int fake_dev_ok(fdevptr p, size_t n) {
    int i, ok = 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs && !ok; i++) {
        fake_obj* o = &fake.objs[i];
        uintptr_t b = (uintptr_t)o->mem;
        if (o->live && (o->kind == FK_ALLOC || o->kind == FK_GALLOC || o->kind == FK_MANAGED || o->mapped) &&
            (uintptr_t)p >= b && (uintptr_t)p + n <= b + o->bytes) ok = 1;
    }
    pthread_mutex_unlock(&fake.lock);
    return ok;
}

static int fake_live_count(int kind) {
    int i, n = 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++) n += fake.objs[i].live && fake.objs[i].kind == kind;
    pthread_mutex_unlock(&fake.lock);
    return n;
}

/* This process's threads (Linux: /proc/self/task; -1 where that cannot be read): gpuk's
   staging copy threads must be gone after the ctx destroy. */
static inline int fake_thread_count(void) {
    DIR* d = opendir("/proc/self/task");
    struct dirent* e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
/* The count before gpuk starts any: after one thread of the test's own has come and gone
   (ThreadSanitizer starts a thread of its own at the first thread start). */
static inline void* fake_no_op_thread(void* arg) { return arg; }
static inline int fake_threads_settled(void) {
    pthread_t t;
    int i, last = -1, same = 0;
    if (pthread_create(&t, NULL, fake_no_op_thread, NULL) == 0) pthread_join(t, NULL);
    /* the joined thread may stay listed for a moment (longer on a loaded machine): wait for
       the count to hold still over three readings 2 ms apart, 5 s at most */
    for (i = 0; i < 2500 && same < 3; i++) {
        struct timespec ms = { 0, 2000000 };
        int now = fake_thread_count();
        same = now == last ? same + 1 : 0;
        last = now;
        nanosleep(&ms, NULL);
    }
    return fake_thread_count();
}

/* The count is back to n within 5 s: a joined thread may stay listed for a moment after its
   join returns (the kernel clears its id before it is gone; on a loaded 2-core CI machine a
   second was not always enough). */
static inline int fake_threads_back_to(int n) {
    int i;
    for (i = 0; i < 5000 && fake_thread_count() != n; i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    return fake_thread_count() == n;
}

/* Everything gpuk acquired has been given back. */
static int fake_all_released(void) {
    int d, refs = 0;
    for (d = 0; d < FAKE_MAX_DEVICES; d++) refs += fake.primary_refs[d];
    return refs == 0 && fake_live_count(FK_ALLOC) == 0 && fake_live_count(FK_HOST) == 0 &&
           fake_live_count(FK_REGISTERED) == 0 && fake_live_count(FK_STREAM) == 0 &&
           fake_live_count(FK_EVENT) == 0 && fake_live_count(FK_MODULE) == 0 &&
           fake_live_count(FK_GRAPH) == 0 && fake_live_count(FK_EXEC) == 0 &&
           fake_live_count(FK_MANAGED) == 0 &&
           fake_live_count(FK_LINK) == 0 && fake_live_count(FK_IPCMEM) == 0;
}

/* The legacy stream and a blocking stream are ordered with each other (cuda.h: "the legacy
   stream synchronizes with all blocking streams"); any other two streams are not. */
static int fake_streams_ordered(void* a, void* b) {
    if (a == b) return 1;
    if (a == FAKE_STREAM_LEGACY) return ((fake_stream*)b)->flags == 0;
    if (b == FAKE_STREAM_LEGACY) return ((fake_stream*)a)->flags == 0;
    return 0;
}
/* Work queued on s: counts it as unordered when other streams hold queued work that s is not
   ordered after, then marks s pending. Work on the legacy stream waits for the blocking ones. */
static void fake_enqueue(void* s, int is_copy) {
    int i;
    pthread_mutex_lock(&fake.lock);
    if (fake.legacy_pending && !fake_streams_ordered(s, FAKE_STREAM_LEGACY) && is_copy) fake.unordered++;
    for (i = 0; i < fake.nobjs; i++) {
        fake_obj* o = &fake.objs[i];
        if (!o->live || o->kind != FK_STREAM || o->mem == s || !((fake_stream*)o->mem)->pending) continue;
        if (fake_streams_ordered(s, o->mem)) ((fake_stream*)o->mem)->pending = 0; /* s waits for it */
        else if (is_copy) fake.unordered++;
    }
    if (s == FAKE_STREAM_LEGACY) fake.legacy_pending = 1;
    else ((fake_stream*)s)->pending = 1;
    if (is_copy) fake.last_copy_stream = s;
    pthread_mutex_unlock(&fake.lock);
}
/* s has been waited for (its work is done). The legacy stream's work waited for the blocking
   streams' earlier work, so that is done too. */
static void fake_stream_done(void* s) {
    pthread_mutex_lock(&fake.lock);
    if (s == FAKE_STREAM_LEGACY) fake.legacy_pending = 0;
    else if (s) ((fake_stream*)s)->pending = 0;
    pthread_mutex_unlock(&fake.lock);
}
static void fake_all_done(void) {
    int i;
    pthread_mutex_lock(&fake.lock);
    fake.legacy_pending = 0;
    for (i = 0; i < fake.nobjs; i++)
        if (fake.objs[i].live && fake.objs[i].kind == FK_STREAM) ((fake_stream*)fake.objs[i].mem)->pending = 0;
    pthread_mutex_unlock(&fake.lock);
}
/* [h, h+n) inside one live page-locked block (cuMemHostAlloc'd or registered). */
static int fake_host_pinned_locked(const void* h, size_t n) {
    int i;
    for (i = 0; i < fake.nobjs; i++) {
        const fake_obj* o = &fake.objs[i];
        if (o->live && (o->kind == FK_HOST || o->kind == FK_REGISTERED) && (uintptr_t)h >= (uintptr_t)o->mem &&
            (uintptr_t)h + n <= (uintptr_t)o->mem + o->bytes) return 1;
    }
    return 0;
}
/* defer_copies: moves the bytes of the deferred copies on streams ordered with s (NULL: all)
   queued up to seq upto, in order, and forgets them. */
static void fake_run_pending_locked(void* s, long upto) {
    int i, k = 0;
    for (i = 0; i < fake.npending; i++) {
        fake_pending* p = &fake.pending[i];
        if ((!s || fake_streams_ordered(p->stream, s)) && p->seq <= upto) {
            if (p->htod) memcpy((void*)(uintptr_t)p->dev, p->host, p->n);
            else memcpy(p->host, (const void*)(uintptr_t)p->dev, p->n);
        } else fake.pending[k++] = *p;
    }
    fake.npending = k;
}
static void fake_run_pending(void* s, long upto) {
    pthread_mutex_lock(&fake.lock);
    fake_run_pending_locked(s, upto);
    pthread_mutex_unlock(&fake.lock);
}
/* An async copy of n bytes between dev and host on s: queued for later (1) where defer_copies
   is on and the host memory page-locked, else 0 (the caller copies now). Counts page-locked
   copies; host memory still in flight in an earlier deferred copy is misuse: its bytes were
   replaced, or read, before that copy moved them. */
static int fake_defer_copy(void* s, int htod, void* host, fdevptr dev, size_t n, const char* fn) {
    int i, deferred = 0;
    pthread_mutex_lock(&fake.lock);
    if (fake_host_pinned_locked(host, n)) {
        fake.pinned_copies++;
        for (i = 0; i < fake.npending; i++)
            if ((uintptr_t)host < (uintptr_t)fake.pending[i].host + fake.pending[i].n &&
                (uintptr_t)fake.pending[i].host < (uintptr_t)host + n)
                fake_protocol("page-locked host memory used again while an async copy of it is in flight", fn);
        if (fake.cfg.defer_copies && fake.npending < FAKE_MAX_PENDING) {
            fake_pending* p = &fake.pending[fake.npending++];
            p->stream = s; p->htod = htod; p->host = host; p->dev = dev; p->n = n; p->seq = ++fake.seq;
            deferred = 1;
        }
    }
    /* a copy made now comes after what its stream holds: that lands first */
    if (!deferred) fake_run_pending_locked(s, fake.seq);
    pthread_mutex_unlock(&fake.lock);
    return deferred;
}
/* cuMemFreeHost / cuMemHostUnregister of p: a deferred copy of it still in flight is misuse. */
static void fake_free_pinned_check(void* p, const char* fn) {
    int i, k = 0;
    size_t bytes = 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++)
        if (fake.objs[i].live && fake.objs[i].mem == p && (fake.objs[i].kind == FK_HOST || fake.objs[i].kind == FK_REGISTERED))
            bytes = fake.objs[i].bytes;
    for (i = 0; i < fake.npending; i++) {
        uintptr_t h = (uintptr_t)fake.pending[i].host;
        if (h >= (uintptr_t)p && h < (uintptr_t)p + bytes) fake_protocol("page-locked host memory freed while an async copy of it is in flight", fn);
        else fake.pending[k++] = fake.pending[i];
    }
    fake.npending = k;
    pthread_mutex_unlock(&fake.lock);
}
/* The capture s is in, active or invalidated (NULL: none; the legacy stream is never captured). */
static fake_stream* fake_capturing(void* s) {
    if (!s || s == FAKE_STREAM_LEGACY || !((fake_stream*)s)->capture) return NULL;
    return (fake_stream*)s;
}
/* Work on the legacy stream would join every blocking stream's capture: the driver refuses it
   (906, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) and invalidates those captures. 1 when it did. */
static int fake_legacy_breaks_capture(void* s) {
    int i, hit = 0;
    if (s != FAKE_STREAM_LEGACY) return 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++) {
        fake_stream* st = (fake_stream*)fake.objs[i].mem;
        if (fake.objs[i].live && fake.objs[i].kind == FK_STREAM && st->flags == 0 && st->capture == 1) {
            st->capture = 2;
            hit = 1;
        }
    }
    pthread_mutex_unlock(&fake.lock);
    return hit;
}
/* Records op in st's capture: 901 on an invalidated one, as the driver answers then. */
static fres fake_record(fake_stream* st, const fake_op* op) {
    if (st->capture == 2) return 901;
    if (st->graph->nops == FAKE_MAX_OPS) return 2;
    st->graph->ops[st->graph->nops++] = *op;
    return 0;
}
/* What a call that a capture cannot hold does to it: invalidates it; the call gets 900. */
static fres fake_capture_unsupported(fake_stream* st) {
    st->capture = 2;
    return 900;
}
/* The calling thread's capture mode (cuThreadExchangeStreamCaptureMode): 0 global (the
   default), 1 thread-local, 2 relaxed. */
static __thread unsigned fake_thread_mode;
/* A potentially unsafe call (an allocation, a free, a module load) while a capture is under
   way: unless this thread is relaxed, the driver refuses it (900) and invalidates every capture
   that forbids it (begun in global mode on any thread, or in thread-local or global mode on
   this one). 0 when the call may go ahead. */
static fres fake_unsafe_call(void) {
    int i, hit = 0;
    if (fake_thread_mode == 2) return 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++) {
        fake_stream* st = (fake_stream*)fake.objs[i].mem;
        if (!fake.objs[i].live || fake.objs[i].kind != FK_STREAM || st->capture != 1) continue;
        if (st->capture_mode == 0 || (st->capture_mode == 1 && pthread_equal(st->capture_thread, pthread_self()))) {
            st->capture = 2;
            hit = 1;
        }
    }
    pthread_mutex_unlock(&fake.lock);
    return hit ? 900 : 0;
}
static fres f_cuThreadExchangeStreamCaptureMode(unsigned* mode) {
    unsigned old;
    FAKE_ENTER("cuThreadExchangeStreamCaptureMode");
    if (!mode || *mode > 2) return 1;
    old = fake_thread_mode;
    fake_thread_mode = *mode;
    *mode = old;
    return 0;
}
/* Host memory gpuk page-locked (allocated or registered): the only kind a captured copy takes. */
static int fake_host_pinned(const void* p, size_t n) {
    int ok;
    pthread_mutex_lock(&fake.lock);
    ok = fake_host_pinned_locked(p, n);
    pthread_mutex_unlock(&fake.lock);
    return ok;
}
/* A copy or memset queued on s: recorded when s is capturing (res is then the call's result),
   refused when it would join a capture from the legacy stream; 0 when it runs now. */
static int fake_capture_op(void* s, const fake_op* op, const void* host, fres* res) {
    fake_stream* cap = fake_capturing(s);
    if (cap) {
        *res = host && !fake_host_pinned(host, op->n) ? fake_capture_unsupported(cap) : fake_record(cap, op);
        return 1;
    }
    if (fake_legacy_breaks_capture(s)) { *res = 906; return 1; }
    return 0;
}
static fake_op fake_op_of(int type, unsigned long long dst, unsigned long long src, void* host, size_t n) {
    fake_op op;
    memset(&op, 0, sizeof op);
    op.type = type; op.dst = dst; op.src = src; op.host = host; op.n = n;
    return op;
}
/* --- the entry points --- */
static fres f_cuInit(unsigned int flags) { FAKE_ENTER("cuInit"); return flags ? 1 : 0; }
static fres f_cuDriverGetVersion(int* v) { FAKE_ENTER("cuDriverGetVersion"); *v = fake.cfg.version; return 0; }
static fres f_cuGetErrorName(fres code, const char** out) { (void)code; *out = "CUDA_ERROR_FAKE"; return 0; }
static fres f_cuDeviceGetCount(int* n) { FAKE_ENTER("cuDeviceGetCount"); *n = fake.cfg.devices; return 0; }
static fres f_cuDeviceGet(int* d, int ordinal) {
    FAKE_ENTER("cuDeviceGet");
    if (ordinal < 0 || ordinal >= fake.cfg.devices) return 101;
    *d = ordinal;
    return 0;
}
static fres f_cuDeviceGetName(char* name, int len, int dev) {
    FAKE_ENTER("cuDeviceGetName");
    snprintf(name, (size_t)len, "Fake GPU %d", dev);
    return 0;
}
static fres f_cuDeviceTotalMem(size_t* b, int dev) { FAKE_ENTER("cuDeviceTotalMem"); (void)dev; *b = fake.cfg.mem_limit; return 0; }
static fres f_cuDeviceGetAttribute(int* v, unsigned attr, int dev) {
    FAKE_ENTER("cuDeviceGetAttribute");
    (void)dev;
    switch (attr) {
    case 1: *v = 1024; break;            /* max threads per block */
    case 2: case 3: *v = 1024; break;    /* block x, y */
    case 4: *v = 64; break;              /* block z */
    case 5: *v = 2147483647; break;      /* grid x */
    case 6: case 7: *v = 65535; break;   /* grid y, z */
    case 8: *v = 49152; break;
    case 97: *v = 232448; break;         /* opt-in shared per block */
    case 10: *v = 32; break;
    case 75: *v = fake.cfg.cc_major ? fake.cfg.cc_major : 9; break;
    case 76: *v = fake.cfg.cc_minor; break;
    case 16: *v = 132; break;
    case 38: *v = fake.cfg.l2_bytes ? fake.cfg.l2_bytes : 7; break;
    case 81: *v = fake.cfg.shared_per_sm ? fake.cfg.shared_per_sm : 233472; break;
    case 95: *v = !fake.cfg.no_cooperative; break;  /* cooperative launch */
    case 120: *v = (fake.cfg.cc_major ? fake.cfg.cc_major : 9) >= 9; break; /* cluster launch */
    case 115: *v = !fake.cfg.no_mempools; break; /* memory pools */
    case 41: case 125: *v = !fake.cfg.no_ipc; break; /* unified addressing, IPC events */
    case 19: *v = !fake.cfg.no_map_host; break;  /* can map host memory */
    case 83: *v = !fake.cfg.no_managed; break;   /* managed memory */
    case 89: *v = !fake.cfg.no_concurrent_managed; break;
    case 88: *v = 0; break;                      /* pageable memory access (HMM, ATS) */
    default: *v = 7; break;
    }
    return 0;
}
static fres f_cuDeviceGetPCIBusId(char* id, int len, int dev) {
    FAKE_ENTER("cuDeviceGetPCIBusId");
    if (fake.cfg.pci_bus_id) snprintf(id, (size_t)len, "%s", fake.cfg.pci_bus_id);
    else snprintf(id, (size_t)len, "0000:%02x:00.0", dev + 1);
    return 0;
}
static fres f_cuDevicePrimaryCtxRetain(void** ctx, int dev) {
    FAKE_ENTER("cuDevicePrimaryCtxRetain");
    fake.primary_refs[dev]++;
    *ctx = (void*)(uintptr_t)(0x1000 + dev); /* stable per device, like the real primary ctx */
    return 0;
}
static fres f_cuDevicePrimaryCtxRelease(int dev) {
    FAKE_ENTER("cuDevicePrimaryCtxRelease");
    if (fake.primary_refs[dev] <= 0) { fake_protocol("release of an unretained primary ctx", "cuDevicePrimaryCtxRelease"); return 1; }
    fake.primary_refs[dev]--;
    if (fake.primary_refs[dev] == 0) { /* the primary context's peer mappings and limits go with it */
        int i;
        for (i = 0; i < FAKE_MAX_DEVICES; i++) fake.peer_enabled[dev][i] = fake.peer_enabled[i][dev] = 0;
        fake_limits_default(dev);
    }
    return 0;
}
static fres f_cuCtxGetCurrent(void** ctx) {
    FAKE_ENTER("cuCtxGetCurrent");
    *ctx = fake_tls_ctx ? (void*)(uintptr_t)(0x1000 + fake_tls_ctx - 1) : NULL;
    return 0;
}
static fres f_cuCtxSetCurrent(void* ctx) {
    FAKE_ENTER("cuCtxSetCurrent");
    fake_tls_ctx = ctx ? (int)((uintptr_t)ctx - 0x1000) + 1 : 0;
    return 0;
}
static void fake_sleep_ms(int ms) {
    struct timespec t;
    if (ms <= 0) return;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&t, NULL);
}
static fres f_sync_common(const char* name) {
    int f;
    FAKE_ENTER(name);
    FAKE_NEED_CTX(name);
    fake_sleep_ms(fake.cfg.sync_delay_ms);
    pthread_mutex_lock(&fake.lock);
    f = fake.pending_fault;
    if (f) { fake.sticky_now = 1; fake.cfg.fail_code = f; }
    pthread_mutex_unlock(&fake.lock);
    return (fres)f;
}
static fres f_cuCtxSynchronize(void) {
    fres r = f_sync_common("cuCtxSynchronize");
    if (!r) fake_run_pending(NULL, fake.seq);
    if (!r) fake_all_done();
    return r;
}
static fres f_cuCtxGetStreamPriorityRange(int* least, int* greatest) {
    FAKE_ENTER("cuCtxGetStreamPriorityRange"); FAKE_NEED_CTX("cuCtxGetStreamPriorityRange");
    *least = 0; *greatest = -5;
    return 0;
}
/* CUlimit 0-4; the sync depth only below compute capability 9.0 (215 from there). */
static fres fake_limit_ok(unsigned limit) {
    if (limit > 4) return 1;
    if (limit == 3 && (fake.cfg.cc_major ? fake.cfg.cc_major : 9) >= 9) return 215;
    return 0;
}
static fres f_cuCtxSetLimit(unsigned limit, size_t value) {
    int dev = fake_tls_ctx - 1;
    fres r;
    FAKE_ENTER("cuCtxSetLimit"); FAKE_NEED_CTX("cuCtxSetLimit");
    if ((r = fake_limit_ok(limit)) != 0) return r;
    pthread_mutex_lock(&fake.lock);
    if ((limit == 1 && fake.printf_ran[dev]) || (limit == 2 && fake.malloc_ran[dev])) r = 1;
    else { fake.limits[dev][limit] = value; fake.set_limit_calls++; }
    pthread_mutex_unlock(&fake.lock);
    return r;
}
static fres f_cuCtxGetLimit(size_t* value, unsigned limit) {
    fres r;
    FAKE_ENTER("cuCtxGetLimit"); FAKE_NEED_CTX("cuCtxGetLimit");
    if ((r = fake_limit_ok(limit)) != 0) return r;
    pthread_mutex_lock(&fake.lock);
    *value = fake.limits[fake_tls_ctx - 1][limit];
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuMemGetInfo(size_t* f, size_t* t) {
    FAKE_ENTER("cuMemGetInfo"); FAKE_NEED_CTX("cuMemGetInfo");
    *t = fake.cfg.mem_limit; *f = fake.cfg.mem_limit - fake.mem_in_use;
    return 0;
}
static fres f_cuMemAlloc(fdevptr* p, size_t n) {
    void* m;
    fres unsafe;
    FAKE_ENTER("cuMemAlloc"); FAKE_NEED_CTX("cuMemAlloc");
    if ((unsafe = fake_unsafe_call()) != 0) return unsafe;
    if (n == 0) return 1; /* as measured on the real driver */
    pthread_mutex_lock(&fake.lock); /* reserve under the lock: threads allocate at once */
    if (n > fake.cfg.mem_limit - fake.mem_in_use) { pthread_mutex_unlock(&fake.lock); return 2; }
    fake.mem_in_use += n;
    pthread_mutex_unlock(&fake.lock);
    m = malloc(n);
    if (!m || !fake_track(FK_ALLOC, m, n)) {
        free(m);
        pthread_mutex_lock(&fake.lock); fake.mem_in_use -= n; pthread_mutex_unlock(&fake.lock);
        return 2;
    }
    memset(m, 0xA5, n);
    *p = (fdevptr)(uintptr_t)m;
    return 0;
}
static fres f_cuMemFree(fdevptr p) {
    fres unsafe;
    FAKE_ENTER("cuMemFree"); FAKE_NEED_CTX("cuMemFree");
    if ((unsafe = fake_unsafe_call()) != 0) return unsafe;
    if (fake_is_live(FK_GALLOC, (void*)(uintptr_t)p)) return 0; /* a graph's allocation, now free */
    if (fake_is_live(FK_MANAGED, (void*)(uintptr_t)p)) return fake_release(FK_MANAGED, (void*)(uintptr_t)p, "cuMemFree") ? 0 : 1;
    return fake_release(FK_ALLOC, (void*)(uintptr_t)p, "cuMemFree") ? 0 : 1;
}
static fres f_cuMemHostAlloc(void** p, size_t n, unsigned flags) {
    void* m;
    FAKE_ENTER("cuMemHostAlloc"); FAKE_NEED_CTX("cuMemHostAlloc");
    if (flags & ~7u) return 1; /* PORTABLE, DEVICEMAP, WRITECOMBINED */
    if ((flags & 2u) && fake.cfg.no_map_host) return 801;
    if (n > fake.cfg.mem_limit) return 2; /* more than the machine has */
    m = malloc(n ? n : 1);
    if (!m || !fake_track(FK_HOST, m, n)) { free(m); return 2; }
    memset(m, 0xCD, n); /* never zero by luck: a read before a deferred copy lands shows */
    fake_set_mapped(FK_HOST, m, (flags & 2u) != 0);
    *p = m;
    return 0;
}
static fres f_cuMemFreeHost(void* p) { FAKE_ENTER("cuMemFreeHost"); fake_free_pinned_check(p, "cuMemFreeHost"); return fake_release(FK_HOST, p, "cuMemFreeHost") ? 0 : 1; }
static fres f_cuMemHostRegister(void* p, size_t n, unsigned flags) {
    FAKE_ENTER("cuMemHostRegister"); FAKE_NEED_CTX("cuMemHostRegister");
    if (flags & ~15u) return 1; /* PORTABLE, DEVICEMAP, IOMEMORY, READ_ONLY */
    if ((flags & 2u) && fake.cfg.no_map_host) return 801;
    if (fake_is_live(FK_REGISTERED, p)) return 712;
    if (!fake_track(FK_REGISTERED, p, n)) return 2;
    fake_set_mapped(FK_REGISTERED, p, (flags & 2u) != 0);
    return 0;
}
static fres f_cuMemHostUnregister(void* p) {
    FAKE_ENTER("cuMemHostUnregister");
    fake_free_pinned_check(p, "cuMemHostUnregister");
    return fake_release(FK_REGISTERED, p, "cuMemHostUnregister") ? 0 : 713;
}
/* The device address of mapped page-locked memory: its host address, as on a device that
   uses the host's page tables; memory page-locked without DEVICEMAP has none (1). */
static fres f_cuMemHostGetDevicePointer(fdevptr* d, void* h, unsigned flags) {
    int i, ok = 0;
    FAKE_ENTER("cuMemHostGetDevicePointer"); FAKE_NEED_CTX("cuMemHostGetDevicePointer");
    if (flags || !d) return 1;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs && !ok; i++) {
        const fake_obj* o = &fake.objs[i];
        ok = o->live && o->mapped && (uintptr_t)h >= (uintptr_t)o->mem && (uintptr_t)h < (uintptr_t)o->mem + o->bytes;
    }
    pthread_mutex_unlock(&fake.lock);
    if (!ok) return 1;
    *d = (fdevptr)(uintptr_t)h;
    return 0;
}
/* A managed range [p, p+n) inside one live cuMemAllocManaged block. */
static int fake_managed_ok(fdevptr p, size_t n) {
    int i, ok = 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs && !ok; i++) {
        const fake_obj* o = &fake.objs[i];
        ok = o->live && o->kind == FK_MANAGED && (uintptr_t)p >= (uintptr_t)o->mem &&
             (uintptr_t)p + n <= (uintptr_t)o->mem + o->bytes;
    }
    pthread_mutex_unlock(&fake.lock);
    return ok;
}
/* A device for prefetch and advice: an existing one, or CU_DEVICE_CPU (-1). */
static int fake_place_ok(int dev) { return dev == -1 || (dev >= 0 && dev < fake.cfg.devices); }
static int fake_stream_ok(void* s, const char* fn) {
    if (!s) { fake_protocol("NULL stream used (ambiguous: legacy or per-thread)", fn); return 0; }
    if (s == FAKE_STREAM_LEGACY) return 1;
    if (!fake_is_live(FK_STREAM, s)) { fake_protocol("destroyed or unknown stream", fn); return 0; }
    return 1;
}
#define FAKE_MEMSET(NAME, T) \
    static fres f_##NAME(fdevptr d, T v, size_t n, void* s) { \
        size_t i; FAKE_ENTER(#NAME); FAKE_NEED_CTX(#NAME); \
        if (!fake_stream_ok(s, #NAME)) return 400; \
        if (!fake_dev_ok(d, n * sizeof(T))) { fake_protocol("memset out of bounds", #NAME); return 1; } \
        { fake_op op_ = fake_op_of(FOP_MEMSET, d, 0, NULL, n); fres r_; op_.elem = sizeof(T); op_.value = v; \
          if (fake_capture_op(s, &op_, NULL, &r_)) return r_; } \
        for (i = 0; i < n; i++) memcpy((char*)(uintptr_t)d + i * sizeof(T), &v, sizeof(T)); \
        fake_enqueue(s, 0); \
        return 0; }
FAKE_MEMSET(cuMemsetD8Async, unsigned char)
FAKE_MEMSET(cuMemsetD16Async, unsigned short)
FAKE_MEMSET(cuMemsetD32Async, unsigned int)
static fres f_cuMemcpyHtoDAsync(fdevptr d, const void* h, size_t n, void* s) {
    FAKE_ENTER("cuMemcpyHtoDAsync"); FAKE_NEED_CTX("cuMemcpyHtoDAsync");
    if (!fake_stream_ok(s, "cuMemcpyHtoDAsync")) return 400;
    if (!fake_dev_ok(d, n)) { fake_protocol("copy out of bounds", "cuMemcpyHtoDAsync"); return 1; }
    { fake_op op = fake_op_of(FOP_HTOD, d, 0, (void*)(uintptr_t)h, n); fres r;
      if (fake_capture_op(s, &op, h, &r)) return r; }
    if (!fake_defer_copy(s, 1, (void*)(uintptr_t)h, d, n, "cuMemcpyHtoDAsync")) memcpy((void*)(uintptr_t)d, h, n);
    fake_enqueue(s, 1);
    return 0;
}
static fres f_cuMemcpyDtoHAsync(void* h, fdevptr d, size_t n, void* s) {
    FAKE_ENTER("cuMemcpyDtoHAsync"); FAKE_NEED_CTX("cuMemcpyDtoHAsync");
    if (!fake_stream_ok(s, "cuMemcpyDtoHAsync")) return 400;
    if (!fake_dev_ok(d, n)) { fake_protocol("copy out of bounds", "cuMemcpyDtoHAsync"); return 1; }
    { fake_op op = fake_op_of(FOP_DTOH, 0, d, h, n); fres r;
      if (fake_capture_op(s, &op, h, &r)) return r; }
    if (!fake_defer_copy(s, 0, h, d, n, "cuMemcpyDtoHAsync")) memcpy(h, (void*)(uintptr_t)d, n);
    fake_enqueue(s, 1);
    return 0;
}
static fres f_cuMemcpyDtoDAsync(fdevptr d, fdevptr s2, size_t n, void* s) {
    FAKE_ENTER("cuMemcpyDtoDAsync"); FAKE_NEED_CTX("cuMemcpyDtoDAsync");
    if (!fake_stream_ok(s, "cuMemcpyDtoDAsync")) return 400;
    if (!fake_dev_ok(d, n) || !fake_dev_ok(s2, n)) { fake_protocol("copy out of bounds", "cuMemcpyDtoDAsync"); return 1; }
    /* The driver promises no memmove semantics: copy forward byte by byte (as memcpy may),
       so that an overlapping copy comes out wrong here too, and say so. */
    if (d < s2 + n && s2 < d + n) fake_protocol("overlapping device-to-device copy", "cuMemcpyDtoDAsync");
    { fake_op op = fake_op_of(FOP_DTOD, d, s2, NULL, n); fres r;
      if (fake_capture_op(s, &op, NULL, &r)) return r; }
    fake_run_pending(s, fake.seq); /* what the stream holds lands first */
    { size_t i; for (i = 0; i < n; i++) ((char*)(uintptr_t)d)[i] = ((const char*)(uintptr_t)s2)[i]; }
    fake_enqueue(s, 1);
    return 0;
}
/* Host memory for n bytes of device memory of the current device, counted against the limit
   and poisoned (never zero by luck); NULL (out of memory) otherwise. */
static void* fake_device_alloc(int kind, size_t n) {
    void* m;
    pthread_mutex_lock(&fake.lock); /* reserve under the lock: threads allocate at once */
    if (n > fake.cfg.mem_limit - fake.mem_in_use) { pthread_mutex_unlock(&fake.lock); return NULL; }
    if (kind == FK_ALLOC) fake.mem_in_use += n;
    pthread_mutex_unlock(&fake.lock);
    m = malloc(n);
    if (!m || !fake_track(kind, m, n)) {
        free(m);
        if (kind == FK_ALLOC) { pthread_mutex_lock(&fake.lock); fake.mem_in_use -= n; pthread_mutex_unlock(&fake.lock); }
        return NULL;
    }
    memset(m, 0xA5, n);
    return m;
}
/* Stream-ordered: the fake runs work at once, so the memory is there when the call returns;
   inside a capture it is the graph's, made now at the address every launch uses. */
static fres f_cuMemAllocAsync(fdevptr* p, size_t n, void* s) {
    fake_stream* cap;
    void* m;
    FAKE_ENTER("cuMemAllocAsync"); FAKE_NEED_CTX("cuMemAllocAsync");
    if (!fake_stream_ok(s, "cuMemAllocAsync")) return 400;
    if (!p || n == 0) return 1;
    cap = fake_capturing(s);
    if (cap && cap->capture == 2) return 901;
    if (!(m = fake_device_alloc(cap ? FK_GALLOC : FK_ALLOC, n))) return 2;
    if (cap) {
        fake_op op = fake_op_of(FOP_ALLOC, (fdevptr)(uintptr_t)m, 0, NULL, n);
        fres r = fake_record(cap, &op);
        if (r) return r; /* the block stays the fake's until reset */
    } else {
        fake_enqueue(s, 0);
    }
    *p = (fdevptr)(uintptr_t)m;
    pthread_mutex_lock(&fake.lock); fake.async_allocs++; pthread_mutex_unlock(&fake.lock);
    return 0;
}
/* A capture frees only the graph's own allocations (CUDA_ERROR_INVALID_VALUE otherwise, and
   the capture is invalidated); outside one, a graph's allocation may be freed after a launch. */
static fres f_cuMemFreeAsync(fdevptr p, void* s) {
    fake_stream* cap;
    FAKE_ENTER("cuMemFreeAsync"); FAKE_NEED_CTX("cuMemFreeAsync");
    if (!fake_stream_ok(s, "cuMemFreeAsync")) return 400;
    cap = fake_capturing(s);
    if (cap) {
        fake_op op = fake_op_of(FOP_FREE, p, 0, NULL, 0);
        fres r;
        if (cap->capture == 2) return 901;
        if (!fake_is_live(FK_GALLOC, (void*)(uintptr_t)p)) {
            fake_protocol("memory not allocated by a graph freed inside a capture", "cuMemFreeAsync");
            cap->capture = 2;
            return 1;
        }
        if ((r = fake_record(cap, &op)) != 0) return r;
    } else if (!fake_is_live(FK_GALLOC, (void*)(uintptr_t)p)) {
        if (!fake_release(FK_ALLOC, (void*)(uintptr_t)p, "cuMemFreeAsync")) return 1;
        fake_enqueue(s, 0);
    }
    pthread_mutex_lock(&fake.lock);
    fake.async_frees++;
    fake.last_free_stream = s;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
/* Managed memory: host memory like the fake's device memory, not counted against mem_limit
   (the driver pages it out); flags must be GLOBAL (1) or HOST (2). */
static fres f_cuMemAllocManaged(fdevptr* p, size_t n, unsigned flags) {
    void* m;
    fres unsafe;
    FAKE_ENTER("cuMemAllocManaged"); FAKE_NEED_CTX("cuMemAllocManaged");
    if ((unsafe = fake_unsafe_call()) != 0) return unsafe;
    if (fake.cfg.no_managed) return 801; /* CUDA_ERROR_NOT_SUPPORTED */
    if (!p || n == 0 || (flags != 1 && flags != 2)) return 1;
    if (!(m = fake_device_alloc(FK_MANAGED, n))) return 2;
    *p = (fdevptr)(uintptr_t)m;
    return 0;
}
/* Moves nothing (one memory here); checks what the driver checks and counts the call. */
static fres f_cuMemPrefetchAsync(fdevptr p, size_t n, int dev, void* s) {
    FAKE_ENTER("cuMemPrefetchAsync"); FAKE_NEED_CTX("cuMemPrefetchAsync");
    if (!fake_stream_ok(s, "cuMemPrefetchAsync")) return 400;
    if (!fake_managed_ok(p, n)) { fake_protocol("prefetch of memory that is not managed (or out of bounds)", "cuMemPrefetchAsync"); return 1; }
    if (!fake_place_ok(dev)) return 101;
    if (dev >= 0 && fake.cfg.no_concurrent_managed) return 101;
    fake_enqueue(s, 0);
    pthread_mutex_lock(&fake.lock);
    fake.prefetches++;
    fake.last_prefetch_device = dev;
    fake.last_prefetch_stream = s;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuMemAdvise(fdevptr p, size_t n, unsigned advice, int dev) {
    FAKE_ENTER("cuMemAdvise");
    if (!fake_managed_ok(p, n)) { fake_protocol("advice for memory that is not managed (or out of bounds)", "cuMemAdvise"); return 1; }
    if (advice < 1 || advice > 6) return 1;
    if (advice > 2 && !fake_place_ok(dev)) return 101; /* read-mostly ignores the device */
    pthread_mutex_lock(&fake.lock);
    fake.advices++;
    fake.last_advice = advice;
    fake.last_advice_device = dev;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
/* One pool per device, its handle 0x2000 + the device. */
static int fake_pool_device(void* pool) {
    uintptr_t v = (uintptr_t)pool;
    return v >= 0x2000 && v < 0x2000 + (uintptr_t)fake.cfg.devices ? (int)(v - 0x2000) : -1;
}
static fres f_cuDeviceGetMemPool(void** pool, int dev) {
    FAKE_ENTER("cuDeviceGetMemPool");
    if (dev < 0 || dev >= fake.cfg.devices) return 101;
    if (fake.cfg.no_mempools) return 801;
    *pool = (void*)(uintptr_t)(0x2000 + dev);
    return 0;
}
static fres f_cuMemPoolSetAttribute(void* pool, unsigned attr, void* value) {
    int d = fake_pool_device(pool);
    FAKE_ENTER("cuMemPoolSetAttribute");
    if (d < 0) { fake_protocol("unknown memory pool", "cuMemPoolSetAttribute"); return 400; }
    if (attr != 4 || !value) return 1; /* the release threshold is all gpuk sets */
    memcpy(&fake.pool_threshold[d], value, sizeof fake.pool_threshold[d]);
    return 0;
}
static fres f_cuMemPoolGetAttribute(void* pool, unsigned attr, void* value) {
    int d = fake_pool_device(pool);
    FAKE_ENTER("cuMemPoolGetAttribute");
    if (d < 0) { fake_protocol("unknown memory pool", "cuMemPoolGetAttribute"); return 400; }
    if (attr != 4 || !value) return 1;
    memcpy(value, &fake.pool_threshold[d], sizeof fake.pool_threshold[d]);
    return 0;
}
static fres f_cuMemPoolTrimTo(void* pool, size_t keep) {
    FAKE_ENTER("cuMemPoolTrimTo");
    if (fake_pool_device(pool) < 0) { fake_protocol("unknown memory pool", "cuMemPoolTrimTo"); return 400; }
    pthread_mutex_lock(&fake.lock);
    fake.pool_trims++;
    fake.last_trim_keep = keep;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
/* A primary context handle of a retained device: its ordinal, else -1. */
static int fake_ctx_device(void* c) {
    uintptr_t v = (uintptr_t)c;
    if (v < 0x1000 || v >= 0x1000 + (uintptr_t)fake.cfg.devices) return -1;
    return fake.primary_refs[v - 0x1000] > 0 ? (int)(v - 0x1000) : -1;
}
/* Memory of device dev (n bytes from p inside one allocation of that device). */
static int fake_dev_on(fdevptr p, size_t n, int dev) {
    int i, ok = 0;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++) {
        const fake_obj* o = &fake.objs[i];
        if (o->live && o->kind == FK_ALLOC && p >= (fdevptr)(uintptr_t)o->mem &&
            p + n <= (fdevptr)(uintptr_t)o->mem + o->bytes) { ok = o->device == dev; break; }
    }
    pthread_mutex_unlock(&fake.lock);
    return ok;
}
static fres fake_peer_copy(fdevptr d, void* dc, fdevptr s2, void* sc, size_t n, const char* fn) {
    int dd = fake_ctx_device(dc), sd = fake_ctx_device(sc);
    if (dd < 0 || sd < 0) { fake_protocol("unknown or released context", fn); return 201; }
    if (!fake_dev_on(d, n, dd) || !fake_dev_on(s2, n, sd)) {
        fake_protocol("peer copy of memory not on its context's device (or out of bounds)", fn);
        return 1;
    }
    memmove((void*)(uintptr_t)d, (const void*)(uintptr_t)s2, n);
    fake.peer_copies++;
    return 0;
}
static fres f_cuMemcpyPeer(fdevptr d, void* dc, fdevptr s2, void* sc, size_t n) {
    fres r;
    FAKE_ENTER("cuMemcpyPeer"); FAKE_NEED_CTX("cuMemcpyPeer");
    if ((r = fake_peer_copy(d, dc, s2, sc, n, "cuMemcpyPeer")) != 0) return r;
    fake_all_done(); /* synchronous, serialized with both contexts */
    return 0;
}
static fres f_cuMemcpyPeerAsync(fdevptr d, void* dc, fdevptr s2, void* sc, size_t n, void* s) {
    fres r;
    FAKE_ENTER("cuMemcpyPeerAsync"); FAKE_NEED_CTX("cuMemcpyPeerAsync");
    if (!fake_stream_ok(s, "cuMemcpyPeerAsync")) return 400;
    if ((r = fake_peer_copy(d, dc, s2, sc, n, "cuMemcpyPeerAsync")) != 0) return r;
    fake_enqueue(s, 1);
    return 0;
}
static fres f_cuDeviceCanAccessPeer(int* can, int dev, int peer) {
    FAKE_ENTER("cuDeviceCanAccessPeer");
    if (dev < 0 || dev >= fake.cfg.devices || peer < 0 || peer >= fake.cfg.devices) return 101;
    *can = dev != peer && fake.cfg.peer_access;
    return 0;
}
static fres f_cuCtxEnablePeerAccess(void* peer_ctx, unsigned flags) {
    int pd, cd;
    FAKE_ENTER("cuCtxEnablePeerAccess"); FAKE_NEED_CTX("cuCtxEnablePeerAccess");
    cd = fake_tls_ctx - 1;
    if (flags) return 1;
    if ((pd = fake_ctx_device(peer_ctx)) < 0) { fake_protocol("unknown or released peer context", "cuCtxEnablePeerAccess"); return 201; }
    if (pd == cd) return 101; /* CUDA_ERROR_INVALID_DEVICE: the current context itself */
    if (!fake.cfg.peer_access) return 217;
    if (fake.peer_enabled[cd][pd]) return 704;
    fake.peer_enabled[cd][pd] = 1;
    return 0;
}
static fres f_cuPointerGetAttribute(void* out, unsigned attr, fdevptr p) {
    int i, found = 0;
    FAKE_ENTER("cuPointerGetAttribute");
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++) { /* device memory: CONTEXT, MEMORY_TYPE, DEVICE_ORDINAL */
        fake_obj* o = &fake.objs[i];
        if (o->live && (o->kind == FK_ALLOC || o->kind == FK_MANAGED) && (uintptr_t)p >= (uintptr_t)o->mem &&
            (uintptr_t)p < (uintptr_t)o->mem + o->bytes) {
            if (attr == 1) *(void**)out = (void*)(uintptr_t)(0x1000 + o->device);
            else if (attr == 2) *(unsigned*)out = 2; /* CU_MEMORYTYPE_DEVICE */
            else *(int*)out = o->device;
            pthread_mutex_unlock(&fake.lock);
            return 0;
        }
    }
    for (i = 0; i < fake.nobjs && !found; i++) { /* page-locked host memory */
        fake_obj* o = &fake.objs[i];
        if (o->live && (o->kind == FK_HOST || o->kind == FK_REGISTERED) && (uintptr_t)p >= (uintptr_t)o->mem &&
            (uintptr_t)p < (uintptr_t)o->mem + o->bytes) {
            found = 1;
            /* as the real driver: the context and device it was allocated in */
            if (attr == 1) { *(void**)out = (void*)(uintptr_t)(0x1000 + o->device); found = 2; }
            if (attr == 9) { *(int*)out = o->device; found = 2; }
        }
    }
    pthread_mutex_unlock(&fake.lock);
    if (!found) return 1; /* pageable host memory: the real driver says INVALID_VALUE */
    if (found == 1) *(unsigned*)out = 1; /* CU_MEMORYTYPE_HOST */
    return 0;
}
static fres f_cuStreamCreateWithPriority(void** s, unsigned flags, int prio) {
    fake_stream* m;
    FAKE_ENTER("cuStreamCreateWithPriority"); FAKE_NEED_CTX("cuStreamCreateWithPriority");
    (void)prio;
    m = (fake_stream*)calloc(1, sizeof *m);
    if (!m || !fake_track(FK_STREAM, m, sizeof *m)) { free(m); return 2; }
    m->flags = flags;
    *s = m;
    return 0;
}
static inline unsigned fake_stream_flags(void* s) { return s == FAKE_STREAM_LEGACY ? 0u : ((fake_stream*)s)->flags; }
static fres f_cuStreamGetCtx(void* s, void** ctx) {
    int i;
    FAKE_ENTER("cuStreamGetCtx");
    if (!s || s == FAKE_STREAM_LEGACY || s == (void*)(uintptr_t)2) { /* legacy, per-thread: the current context's */
        FAKE_NEED_CTX("cuStreamGetCtx");
        *ctx = (void*)(uintptr_t)(0x1000 + fake_tls_ctx - 1);
        return 0;
    }
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs; i++)
        if (fake.objs[i].live && fake.objs[i].kind == FK_STREAM && fake.objs[i].mem == s) {
            *ctx = (void*)(uintptr_t)(0x1000 + fake.objs[i].device);
            pthread_mutex_unlock(&fake.lock);
            return 0;
        }
    pthread_mutex_unlock(&fake.lock);
    fake_protocol("destroyed or unknown stream", "cuStreamGetCtx");
    return 400;
}
static fres f_cuStreamDestroy(void* s) {
    FAKE_ENTER("cuStreamDestroy");
    return fake_release(FK_STREAM, s, "cuStreamDestroy") ? 0 : 400;
}
static fres f_cuStreamSynchronize(void* s) {
    fres r;
    if (!fake_stream_ok(s, "cuStreamSynchronize")) return 400;
    if (fake_capturing(s)) { FAKE_ENTER("cuStreamSynchronize"); return fake_capture_unsupported(fake_capturing(s)); }
    r = f_sync_common("cuStreamSynchronize");
    if (!r) fake_run_pending(s, fake.seq);
    if (!r) fake_stream_done(s);
    return r;
}
static fres f_cuStreamIsCapturing(void* s, unsigned* status) {
    FAKE_ENTER("cuStreamIsCapturing");
    if (!fake_stream_ok(s, "cuStreamIsCapturing")) return 400;
    *status = s && s == fake.cfg.capturing_stream ? 1u : 0u; /* CU_STREAM_CAPTURE_STATUS_ACTIVE */
    if (fake_capturing(s)) *status = (unsigned)fake_capturing(s)->capture; /* 2: invalidated */
    return 0;
}
static fres f_cuStreamQuery(void* s) {
    FAKE_ENTER("cuStreamQuery");
    if (!fake_stream_ok(s, "cuStreamQuery")) return 400;
    if (fake_capturing(s)) return fake_capture_unsupported(fake_capturing(s));
    fake_run_pending(s, fake.seq); /* done, so its copies have landed */
    return 0;
}
static fres f_cuStreamWaitEvent(void* s, void* e, unsigned flags) {
    FAKE_ENTER("cuStreamWaitEvent"); FAKE_NEED_CTX("cuStreamWaitEvent");
    (void)flags;
    if (!fake_stream_ok(s, "cuStreamWaitEvent")) return 400;
    if (!fake_is_live(FK_EVENT, e)) { fake_protocol("destroyed event", "cuStreamWaitEvent"); return 400; }
    pthread_mutex_lock(&fake.lock);
    if (fake.nwaits < FAKE_MAX_WAITS) {
        fake.waits[fake.nwaits].waiter = s;
        fake.waits[fake.nwaits++].on = ((fake_event*)e)->stream;
    }
    fake_run_pending_locked(((fake_event*)e)->stream, ((fake_event*)e)->seq); /* its work comes first */
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuLaunchHostFunc(void* s, void (*fn)(void*), void* user) {
    FAKE_ENTER("cuLaunchHostFunc"); FAKE_NEED_CTX("cuLaunchHostFunc");
    if (!fake_stream_ok(s, "cuLaunchHostFunc")) return 400;
    fn(user); /* the fake runs everything at once */
    return 0;
}
static fres f_cuEventCreate(void** e, unsigned flags) {
    fake_event* m;
    FAKE_ENTER("cuEventCreate"); FAKE_NEED_CTX("cuEventCreate");
    if ((flags & 4u) && !(flags & 2u)) return 1; /* INTERPROCESS needs DISABLE_TIMING */
    m = (fake_event*)calloc(1, sizeof *m);
    if (!m || !fake_track(FK_EVENT, m, sizeof *m)) { free(m); return 2; }
    m->flags = flags;
    *e = m;
    return 0;
}
static fres f_cuEventDestroy(void* e) { FAKE_ENTER("cuEventDestroy"); return fake_release(FK_EVENT, e, "cuEventDestroy") ? 0 : 400; }
/* In a capture only an external record (cuEventRecordWithFlags, CU_EVENT_RECORD_EXTERNAL)
   becomes a node that records the event at each graph launch; a plain one only orders the
   capture's streams, as the driver does, so the fake leaves the event as it was. */
static fres fake_event_record(void* e, void* s, unsigned flags, const char* fn) {
    static double clock_ms;
    if (!fake_stream_ok(s, fn)) return 400;
    if (!fake_is_live(FK_EVENT, e)) { fake_protocol("destroyed event", fn); return 400; }
    if (flags > 1) return 1;
    if (flags == 1 && !fake_capturing(s)) return 1; /* external outside a capture: refused */
    { fake_op op = fake_op_of(FOP_RECORD, 0, 0, e, 0); fres r;
      if (fake_capturing(s) && !flags) return fake_capturing(s)->capture == 2 ? 901 : 0;
      if (fake_capture_op(s, &op, NULL, &r)) return r; }
    pthread_mutex_lock(&fake.lock);
    ((fake_event*)e)->recorded = 1;
    ((fake_event*)e)->t = (clock_ms += 1.5);
    ((fake_event*)e)->stream = s;
    ((fake_event*)e)->seq = fake.seq; /* the deferred copies it follows */
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuEventRecord(void* e, void* s) {
    FAKE_ENTER("cuEventRecord"); FAKE_NEED_CTX("cuEventRecord");
    return fake_event_record(e, s, 0, "cuEventRecord");
}
static fres f_cuEventRecordWithFlags(void* e, void* s, unsigned flags) {
    FAKE_ENTER("cuEventRecordWithFlags"); FAKE_NEED_CTX("cuEventRecordWithFlags");
    return fake_event_record(e, s, flags, "cuEventRecordWithFlags");
}
static fres f_cuEventSynchronize(void* e) {
    fres r;
    if (!fake_is_live(FK_EVENT, e)) { fake_protocol("destroyed event", "cuEventSynchronize"); return 400; }
    r = f_sync_common("cuEventSynchronize");
    if (!r && ((fake_event*)e)->recorded) fake_run_pending(((fake_event*)e)->stream, ((fake_event*)e)->seq);
    return r;
}
static fres f_cuEventQuery(void* e) {
    FAKE_ENTER("cuEventQuery");
    if (!fake_is_live(FK_EVENT, e)) return 400;
    if (((fake_event*)e)->recorded) fake_run_pending(((fake_event*)e)->stream, ((fake_event*)e)->seq);
    return 0;
}
static fres f_cuEventElapsedTime(float* ms, void* a, void* b) {
    FAKE_ENTER("cuEventElapsedTime");
    if (!fake_is_live(FK_EVENT, a) || !fake_is_live(FK_EVENT, b)) { fake_protocol("destroyed event", "cuEventElapsedTime"); return 400; }
    if (!((fake_event*)a)->recorded || !((fake_event*)b)->recorded) return 600;
    *ms = (float)(((fake_event*)b)->t - ((fake_event*)a)->t);
    return 0;
}
/* Size of the parameter whose ".<type> name" starts at p, read from the type alone. */
static size_t fake_param_size(const char* p) {
    const char* type = p + 1;
    size_t len = strcspn(type, " \t");
    if (strncmp(type, "align ", 6) == 0) { /* .align N .b8 name[bytes]: a struct */
        const char* open = strchr(type, '[');
        return open ? (size_t)strtoul(open + 1, NULL, 10) : 1;
    }
    if (len >= 2 && memcmp(type + len - 2, "64", 2) == 0) return 8;
    if (len >= 2 && memcmp(type + len - 2, "32", 2) == 0) return 4;
    if (len >= 2 && memcmp(type + len - 2, "16", 2) == 0) return 2;
    return 1;
}
/* Reads ".entry name(.param .u64 a, ...)" headers from PTX text. */
static void fake_parse_entries(fake_module* m) {
    const char* p = m->text;
    while ((p = strstr(p, ".entry ")) != NULL && m->nfuncs < FAKE_MAX_FUNCS) {
        fake_func* f = &m->funcs[m->nfuncs++];
        const char* close;
        size_t n = 0;
        p += 7;
        while (*p && *p != '(' && *p != ' ' && *p != '\n' && n + 1 < sizeof f->name) f->name[n++] = *p++;
        f->name[n] = 0;
        f->fault = strcmp(f->name, "fault") == 0;
        close = strchr(p, ')');
        while (close && (p = strstr(p, ".param ")) != NULL && p < close && f->nparams < 16) {
            p += 7;
            f->psize[f->nparams++] = fake_param_size(p);
        }
        if (close) p = close;
        {   /* its body, up to the next entry: the device system calls it makes */
            const char* next = strstr(p, ".entry ");
            size_t len = next ? (size_t)(next - p) : strlen(p);
            char* body = (char*)malloc(len + 1);
            if (body) {
                memcpy(body, p, len);
                body[len] = 0;
                f->uses_printf = strstr(body, "vprintf") != NULL;
                f->uses_malloc = strstr(body, " malloc,") != NULL || strstr(body, " free,") != NULL;
                free(body);
            }
        }
    }
}
/* A cubin (ELF64): its kernels are its ".text.<name>" sections, given as ".entry <name>()"
   lines (no parameters known, so launches are not checked); NULL for anything else. */
static char* fake_elf_entries(const unsigned char* b) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    size_t size, i, n = 0, cap = 4096;
    char* text;
    if (memcmp(b, "\x7f" "ELF", 4) != 0 || b[4] != 2) return NULL;
    memcpy(&shoff, b + 0x28, 8);
    memcpy(&shentsize, b + 0x3A, 2);
    memcpy(&shnum, b + 0x3C, 2);
    size = (size_t)shoff + (size_t)shentsize * shnum;
    fake.last_module_bytes = size;
    if (!(text = (char*)calloc(1, cap))) return NULL;
    for (i = 0; i + 6 < size; i++)
        if (memcmp(b + i, ".text.", 6) == 0 && (i == 0 || b[i - 1] == 0)) {
            int k = snprintf(text + n, cap - n, ".entry %s()\n", (const char*)b + i + 6);
            if (k > 0 && (size_t)k < cap - n) n += (size_t)k;
        }
    return text;
}
/* PTX the device cannot take, as the JIT judges it: a .target newer than the device, or an
   architecture-specific one (sm_90a) of another compute capability. */
static int fake_ptx_refused(const char* text) {
    const char* t = strstr(text, ".target sm_");
    int cc = (fake.cfg.cc_major ? fake.cfg.cc_major : 9) * 10 + fake.cfg.cc_minor, sm = 0;
    if (!t) return 0;
    for (t += 11; *t >= '0' && *t <= '9'; t++) sm = sm * 10 + (*t - '0');
    return sm > cc || (*t == 'a' && sm != cc);
}
static fres f_cuModuleLoadDataEx(void** mod, const void* image, unsigned n, unsigned* opts, void** vals) {
    fake_module* m;
    unsigned i;
    char* err = NULL;
    size_t err_cap = 0;
    fres unsafe;
    FAKE_ENTER("cuModuleLoadDataEx"); FAKE_NEED_CTX("cuModuleLoadDataEx");
    if ((unsafe = fake_unsafe_call()) != 0) return unsafe;
    fake_sleep_ms(fake.cfg.jit_delay_ms);
    for (i = 0; i < n; i++) {
        if (opts[i] == 5) err = (char*)vals[i];
        if (opts[i] == 6) err_cap = (size_t)(uintptr_t)vals[i];
    }
    if (fake.cfg.jit_code) {
        if (err && err_cap) snprintf(err, err_cap, "%s", fake.cfg.jit_log ? fake.cfg.jit_log : "");
        return (fres)fake.cfg.jit_code;
    }
    m = (fake_module*)calloc(1, sizeof *m);
    if (!m) return 2;
    m->text = fake_elf_entries((const unsigned char*)image);
    fake.last_module_elf = m->text != NULL;
    if (!m->text && !strstr((const char*)image, ".entry")) {
        free(m);
        if (err && err_cap) snprintf(err, err_cap, "ptxas fatal   : no .entry in input");
        return 218;
    }
    if (!m->text && fake_ptx_refused((const char*)image)) {
        free(m);
        if (err && err_cap) snprintf(err, err_cap, "ptxas fatal   : PTX .target not supported on this device");
        return 218; /* CUDA_ERROR_INVALID_PTX */
    }
    if (!m->text) m->text = strdup((const char*)image);
    fake_parse_entries(m);
    if (!fake_track(FK_MODULE, m, sizeof *m)) { free(m->text); free(m); return 2; }
    *mod = m;
    return 0;
}
static fres f_cuModuleUnload(void* mod) { FAKE_ENTER("cuModuleUnload"); return fake_release(FK_MODULE, mod, "cuModuleUnload") ? 0 : 400; }
static fres f_cuModuleGetFunction(void** f, void* mod, const char* name) {
    int i;
    FAKE_ENTER("cuModuleGetFunction");
    if (!fake_is_live(FK_MODULE, mod)) { fake_protocol("destroyed module", "cuModuleGetFunction"); return 400; }
    for (i = 0; i < ((fake_module*)mod)->nfuncs; i++)
        if (strcmp(((fake_module*)mod)->funcs[i].name, name) == 0) { *f = &((fake_module*)mod)->funcs[i]; return 0; }
    return 500;
}
/* The linker (cuLink*): a state gathers its inputs' PTX text (a cubin's entries as
   fake_elf_entries gives them, an archive's bytes after its "!<arch>\n"; fatbins and objects
   add nothing); complete fails, as nvlink does, on an ".extern .func" that no input defines,
   and gives the gathered text as the "cubin", which f_cuModuleLoadDataEx reads. */
enum { FAKE_LINK_TEXT = 1 << 18 };
typedef struct fake_link {
    char* err; size_t err_cap; char* info; size_t info_cap;
    int inputs; size_t len; char text[FAKE_LINK_TEXT];
} fake_link;
static fres f_cuLinkCreate(unsigned n, unsigned* opts, void** vals, void** out) {
    fake_link* l;
    unsigned i;
    FAKE_ENTER("cuLinkCreate"); FAKE_NEED_CTX("cuLinkCreate");
    if (!(l = (fake_link*)calloc(1, sizeof *l))) return 2;
    for (i = 0; i < n; i++) {
        if (opts[i] == 3) l->info = (char*)vals[i];
        if (opts[i] == 4) l->info_cap = (size_t)(uintptr_t)vals[i];
        if (opts[i] == 5) l->err = (char*)vals[i];
        if (opts[i] == 6) l->err_cap = (size_t)(uintptr_t)vals[i];
    }
    if (!fake_track(FK_LINK, l, sizeof *l)) { free(l); return 2; }
    *out = l;
    return 0;
}
/* The name after ".func" at p (after its return parameter, if any) into name. */
static void fake_func_name(const char* p, char* name, size_t cap) {
    size_t n = 0;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '(') { const char* c = strchr(p, ')'); p = c ? c + 1 : p + strlen(p); }
    while (*p == ' ' || *p == '\t') p++;
    while ((*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) && n + 1 < cap)
        name[n++] = *p++;
    name[n] = 0;
}
static fres fake_link_put(fake_link* l, unsigned type, const char* data, size_t size, const char* name) {
    char* entries = NULL;
    const char* add = NULL;
    size_t n = 0;
    if (type == 1) { /* PTX */
        const char* nul = (const char*)memchr(data, 0, size);
        n = nul ? (size_t)(nul - data) : size;
        if (n < 8 || !strstr(data, ".version") || fake_ptx_refused(data)) {
            if (l->err && l->err_cap) snprintf(l->err, l->err_cap, "ptxas fatal   : %s: PTX not accepted for this device", name ? name : "");
            return 218;
        }
        add = data;
    } else if (type == 0) { /* cubin */
        if (size < 64 || !(entries = fake_elf_entries((const unsigned char*)data))) {
            if (l->err && l->err_cap) snprintf(l->err, l->err_cap, "nvlink error   : %s: not a cubin", name ? name : "");
            return 200; /* CUDA_ERROR_INVALID_IMAGE */
        }
        add = entries;
        n = strlen(entries);
    } else if (type == 4) { /* library */
        if (size < 8 || memcmp(data, "!<arch>\n", 8) != 0) {
            if (l->err && l->err_cap) snprintf(l->err, l->err_cap, "nvlink error   : %s: not an archive", name ? name : "");
            return 200;
        }
        add = data + 8;
        n = size - 8;
    }
    if (l->len + n + 2 > sizeof l->text) { free(entries); return 2; }
    if (n) { memcpy(l->text + l->len, add, n); l->len += n; l->text[l->len++] = '\n'; }
    l->inputs++;
    free(entries);
    return 0;
}
static fres f_cuLinkAddData(void* st, unsigned type, void* data, size_t size, const char* name, unsigned n, unsigned* o, void** v) {
    (void)n; (void)o; (void)v;
    FAKE_ENTER("cuLinkAddData");
    if (!fake_is_live(FK_LINK, st)) { fake_protocol("destroyed link state", "cuLinkAddData"); return 400; }
    if (!data || !size) return 1;
    return fake_link_put((fake_link*)st, type, (const char*)data, size, name);
}
static fres f_cuLinkAddFile(void* st, unsigned type, const char* path, unsigned n, unsigned* o, void** v) {
    fake_link* l = (fake_link*)st;
    FILE* f;
    char* buf;
    long size;
    fres r;
    (void)n; (void)o; (void)v;
    FAKE_ENTER("cuLinkAddFile");
    if (!fake_is_live(FK_LINK, st)) { fake_protocol("destroyed link state", "cuLinkAddFile"); return 400; }
    if (!(f = fopen(path, "rb"))) {
        if (l->err && l->err_cap) snprintf(l->err, l->err_cap, "nvlink fatal   : Could not open input file '%s'", path);
        return 301; /* CUDA_ERROR_FILE_NOT_FOUND */
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char*)calloc(1, (size_t)(size > 0 ? size : 0) + 1);
    if (!buf) { fclose(f); return 2; }
    if (size > 0 && fread(buf, 1, (size_t)size, f) != (size_t)size) size = 0;
    fclose(f);
    r = fake_link_put(l, type, buf, (size_t)size + (type == 1), path);
    free(buf);
    return r;
}
static fres f_cuLinkComplete(void* st, void** cubin, size_t* size) {
    fake_link* l = (fake_link*)st;
    const char* p;
    char name[128], def[128];
    FAKE_ENTER("cuLinkComplete");
    if (!fake_is_live(FK_LINK, st)) { fake_protocol("destroyed link state", "cuLinkComplete"); return 400; }
    l->text[l->len] = 0;
    for (p = l->text; (p = strstr(p, ".extern .func")) != NULL; p += 13) {
        const char* q;
        int found = 0;
        fake_func_name(p + 13, name, sizeof name);
        for (q = l->text; !found && (q = strstr(q, ".func")) != NULL; q += 5) {
            const char* line = q;
            while (line > l->text && line[-1] != '\n') line--;
            if (strncmp(line, ".extern", 7) == 0) continue;
            fake_func_name(q + 5, def, sizeof def);
            found = strcmp(def, name) == 0;
        }
        if (!found) {
            if (l->err && l->err_cap) snprintf(l->err, l->err_cap, "nvlink error   : Undefined reference to '%s'", name);
            return 218;
        }
    }
    if (l->info && l->info_cap) snprintf(l->info, l->info_cap, "info    : linked %d inputs", l->inputs);
    *cubin = l->text;
    *size = l->len + 1;
    return 0;
}
static fres f_cuLinkDestroy(void* st) {
    FAKE_ENTER("cuLinkDestroy");
    return fake_release(FK_LINK, st, "cuLinkDestroy") ? 0 : 400;
}
static fres f_cuFuncGetAttribute(int* v, unsigned attr, void* f) {
    FAKE_ENTER("cuFuncGetAttribute");
    (void)f;
    *v = attr == 0 ? 1024 : attr == 8 ? 49152 : attr == 1 ? 0 : attr == 4 ? 16 : 90;
    return 0;
}
/* Attribute 8 (MAX_DYNAMIC_SHARED_SIZE_BYTES): up to the opt-in limit (232448, attribute 97's),
   which launches asking for more than 48 KB of dynamic shared memory then need. */
static fres f_cuFuncSetAttribute(void* f, unsigned attr, int v) {
    FAKE_ENTER("cuFuncSetAttribute");
    if (v < 0 || !f) return 1;
    if (attr == 8) {
        if (v > 232448) return 1;
        ((fake_func*)f)->max_dynamic_smem = v;
    }
    return 0;
}
static fres f_cuOccupancyMaxPotentialBlockSize(int* grid, int* block, void* f, size_t (*b2d)(int), size_t dyn, int lim) {
    FAKE_ENTER("cuOccupancyMaxPotentialBlockSize");
    (void)f; (void)b2d; (void)dyn; (void)lim;
    *grid = 264; *block = 512;
    return 0;
}
/* A launch of either entry point (ex: cuLaunchKernelEx's attributes in an op, else NULL). */
static fres fake_launch(const char* name, void* f, const unsigned g[3], const unsigned b[3], unsigned smem,
                        void* s, void** params, const fake_op* ex) {
    fake_func* fn = (fake_func*)f;
    unsigned gx = g[0], gy = g[1], gz = g[2];
    int i;
    fake_op op;
    fres r;
    if (!fake_stream_ok(s, name)) return 400;
    if (!gx || !gy || !gz || !b[0] || !b[1] || !b[2] || (unsigned long long)b[0] * b[1] * b[2] > 1024) return 1;
    if (fn->nparams && !params) return 1;
    if (smem > 49152 && (int)smem > fn->max_dynamic_smem) return 1; /* past 48 KB only as allowed */
    for (i = 0; i < fn->nparams; i++) if (!params[i]) { fake_protocol("NULL kernel argument", name); return 1; }
    if (ex) op = *ex;
    else memset(&op, 0, sizeof op);
    op.type = FOP_LAUNCH;
    op.func = f;
    memcpy(op.grid, g, sizeof op.grid);
    memcpy(op.block, b, sizeof op.block);
    op.smem = smem;
    for (i = 0; i < fn->nparams; i++) memcpy(op.args[i], params[i], fn->psize[i] <= 128 ? fn->psize[i] : 128);
    if (fake_capture_op(s, &op, NULL, &r)) return r;
    pthread_mutex_lock(&fake.lock);
    if (ex) {
        memcpy(fake.last_cluster, ex->attr_cluster, sizeof fake.last_cluster);
        fake.last_cooperative = ex->attr_cooperative;
        fake.last_priority = ex->attr_priority;
        fake.ex_launches++;
    }
    for (i = 0; i < fn->nparams; i++) memcpy(fake.last_args[i], params[i], fn->psize[i] <= 128 ? fn->psize[i] : 128);
    fake.last_grid[0] = gx; fake.last_grid[1] = gy; fake.last_grid[2] = gz;
    memcpy(fake.last_block, b, sizeof fake.last_block);
    fake.last_smem = smem;
    fake.launches++;
    pthread_mutex_unlock(&fake.lock);
    fake_enqueue(s, 0);
    pthread_mutex_lock(&fake.lock);
    if (fn->fault) fake.pending_fault = fake.cfg.fault_on_sync ? fake.cfg.fault_on_sync : 700;
    if (fn->uses_printf) fake.printf_ran[fake_tls_ctx - 1] = 1;
    if (fn->uses_malloc) fake.malloc_ran[fake_tls_ctx - 1] = 1;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                             unsigned smem, void* s, void** params, void** extra) {
    unsigned g[3], b[3];
    FAKE_ENTER("cuLaunchKernel"); FAKE_NEED_CTX("cuLaunchKernel");
    (void)extra;
    g[0] = gx; g[1] = gy; g[2] = gz; b[0] = bx; b[1] = by; b[2] = bz;
    return fake_launch("cuLaunchKernel", f, g, b, smem, s, params, NULL);
}
/* The rules gpuk must keep (cuda.h's list, for the 2-D maps of 4-byte elements it makes: with
   a swizzle the box's inner dimension fits its span, 32, 64 or 128 bytes); the map records its
   address, dimensions, stride, box and data type as 64-bit words 0-6, for tests to read back
   from a launch's arguments. */
static fres f_cuTensorMapEncodeTiled(void* map, unsigned dt, unsigned rank, void* addr, const unsigned long long* dims,
                                     const unsigned long long* strides, const unsigned* box, const unsigned* es,
                                     unsigned interleave, unsigned swizzle, unsigned l2, unsigned oob) {
    unsigned long long* v = (unsigned long long*)map;
    unsigned i;
    FAKE_ENTER("cuTensorMapEncodeTiled");
    (void)l2;
    if (!map || ((uintptr_t)map & 63u) || ((uintptr_t)addr & 15u) || rank < 1 || rank > 5 || dt > 15 || interleave ||
        swizzle > 6 || oob > 1 || (box[0] * 4u) % 16u || (swizzle && box[0] * 4u > (swizzle < 3 ? 32u << (swizzle - 1) : 128u)) ||
        (rank > 1 && (strides[0] % 16u || strides[0] >> 40)))
        return 1;
    for (i = 0; i < rank; i++)
        if (!dims[i] || dims[i] >> 32 || !box[i] || box[i] > 256 || !es[i] || es[i] > 8) return 1;
    memset(map, 0, 128);
    v[0] = (unsigned long long)(uintptr_t)addr; v[1] = dims[0]; v[2] = rank > 1 ? dims[1] : 0; v[3] = rank > 1 ? strides[0] : 0;
    v[4] = box[0]; v[5] = rank > 1 ? box[1] : 0; v[6] = dt;
    pthread_mutex_lock(&fake.lock);
    fake.tensor_maps++;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void* f, int block, size_t smem) {
    FAKE_ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor");
    (void)f; (void)smem;
    if (block <= 0) return 1;
    *n = fake.cfg.occupancy ? fake.cfg.occupancy : 2048 / block < 32 ? 2048 / block : 32;
    return 0;
}
/* cuda.h's CUlaunchConfig and CUlaunchAttribute (64-byte value union), laid out by hand. */
typedef struct fake_launch_attr { unsigned id; char pad[4]; union { char b[64]; void* a; int i; unsigned dim[3]; } v; } fake_launch_attr;
typedef struct fake_launch_config {
    unsigned grid[3], block[3], smem;
    void* stream;
    fake_launch_attr* attrs;
    unsigned nattrs;
} fake_launch_config;
/* How many clusters of the config's cluster attribute fit at once: none where their threads
   exceed cfg.cluster_threads, else 132 SMs' worth (the driver's answer is per device). */
static fres f_cuOccupancyMaxActiveClusters(int* n, void* f, const void* config) {
    const fake_launch_config* c = (const fake_launch_config*)config;
    unsigned long long threads, limit = fake.cfg.cluster_threads ? (unsigned long long)fake.cfg.cluster_threads : 16u * 2048u;
    unsigned i, cl = 0;
    FAKE_ENTER("cuOccupancyMaxActiveClusters"); FAKE_NEED_CTX("cuOccupancyMaxActiveClusters");
    (void)f;
    if (!n || !c || (c->nattrs && !c->attrs)) return 1;
    for (i = 0; i < c->nattrs; i++)
        if (c->attrs[i].id == 4) cl = c->attrs[i].v.dim[0] * c->attrs[i].v.dim[1] * c->attrs[i].v.dim[2];
    if (!cl) return 1; /* no cluster attribute: the driver answers INVALID_VALUE (1) too */
    threads = (unsigned long long)cl * c->block[0] * c->block[1] * c->block[2];
    *n = threads > limit ? 0 : (int)(132u * 2048u / threads);
    return 0;
}
/* The attributes gpuk uses, checked as the driver does: clusters (4) need sm_90 and must
   divide the grid; a cooperative grid (2) must fit the device at once (720); priority (8). */
static fres f_cuLaunchKernelEx(const void* config, void* f, void** params, void** extra) {
    const fake_launch_config* c = (const fake_launch_config*)config;
    fake_op ex;
    unsigned i, k;
    FAKE_ENTER("cuLaunchKernelEx"); FAKE_NEED_CTX("cuLaunchKernelEx");
    (void)extra;
    memset(&ex, 0, sizeof ex);
    ex.ex = 1;
    if (c->nattrs && !c->attrs) return 1;
    for (i = 0; i < c->nattrs; i++) {
        const fake_launch_attr* a = &c->attrs[i];
        if (a->id == 4) {
            if ((fake.cfg.cc_major ? fake.cfg.cc_major : 9) < 9) return 801; /* NOT_SUPPORTED */
            for (k = 0; k < 3; k++) if (!a->v.dim[k] || c->grid[k] % a->v.dim[k]) return 1;
            memcpy(ex.attr_cluster, a->v.dim, sizeof ex.attr_cluster);
        } else if (a->id == 2) {
            int per_sm = 0;
            unsigned threads = c->block[0] * c->block[1] * c->block[2];
            if (fake.cfg.no_cooperative) return 801;
            per_sm = fake.cfg.occupancy ? fake.cfg.occupancy : 2048 / (int)threads < 32 ? 2048 / (int)threads : 32;
            if ((unsigned long long)c->grid[0] * c->grid[1] * c->grid[2] > (unsigned long long)per_sm * 132u) return 720;
            ex.attr_cooperative = a->v.i;
        } else if (a->id == 8) {
            ex.attr_priority = a->v.i;
        } else {
            return 1;
        }
    }
    return fake_launch("cuLaunchKernelEx", f, c->grid, c->block, c->smem, c->stream, params, &ex);
}
/* --- stream capture and graphs --- */
static fake_stream* fake_stream_of(void* s) { return s && s != FAKE_STREAM_LEGACY ? (fake_stream*)s : NULL; }
static fres f_cuStreamBeginCapture(void* s, unsigned mode) {
    fake_stream* st;
    FAKE_ENTER("cuStreamBeginCapture"); FAKE_NEED_CTX("cuStreamBeginCapture");
    if (!fake_stream_ok(s, "cuStreamBeginCapture")) return 400;
    if (!(st = fake_stream_of(s))) return 900; /* the legacy stream cannot be captured */
    if (mode > 2) return 1;
    if (st->capture) return 401; /* CUDA_ERROR_ILLEGAL_STATE */
    if (!(st->graph = (fake_graph*)calloc(1, sizeof *st->graph))) return 2;
    st->capture = 1;
    st->capture_mode = mode;
    st->capture_thread = pthread_self();
    return 0;
}
static fres f_cuStreamEndCapture(void* s, void** out_graph) {
    fake_stream* st;
    int state;
    FAKE_ENTER("cuStreamEndCapture"); FAKE_NEED_CTX("cuStreamEndCapture");
    *out_graph = NULL;
    if (!fake_stream_ok(s, "cuStreamEndCapture")) return 400;
    if (!(st = fake_stream_of(s)) || !st->capture) return 401;
    if (st->capture_mode != 2 && !pthread_equal(st->capture_thread, pthread_self())) return 908;
    state = st->capture;
    st->capture = 0;
    if (st->capture_to) { /* the graph was the caller's before and stays theirs */
        st->capture_to = 0;
        if (state != 2) *out_graph = st->graph;
        st->graph = NULL;
        return state == 2 ? 901 : 0;
    }
    if (state == 2 || !fake_track(FK_GRAPH, st->graph, sizeof *st->graph)) {
        free(st->graph);
        st->graph = NULL;
        return state == 2 ? 901 : 2;
    }
    *out_graph = st->graph;
    st->graph = NULL;
    return 0;
}
static fres f_cuGraphInstantiateWithFlags(void** out_exec, void* graph, unsigned long long flags) {
    fake_graph* e;
    FAKE_ENTER("cuGraphInstantiateWithFlags"); FAKE_NEED_CTX("cuGraphInstantiateWithFlags");
    if (!fake_is_live(FK_GRAPH, graph)) { fake_protocol("unknown or destroyed graph", "cuGraphInstantiateWithFlags"); return 400; }
    if (flags) return 1;
    if (!(e = (fake_graph*)malloc(sizeof *e))) return 2;
    memcpy(e, graph, sizeof *e);
    if (!fake_track(FK_EXEC, e, sizeof *e)) { free(e); return 2; }
    *out_exec = e;
    return 0;
}
/* Conditional nodes (CUDA 12.3): a graph made empty, a handle, a node whose body is one of
   fake_cond_bodies (a ring: the node owns it, nothing frees it), capture into a given graph. */
enum { FAKE_COND_BODIES = 8 };
static fake_graph fake_cond_bodies[FAKE_COND_BODIES];
static void* fake_cond_body_ptrs[FAKE_COND_BODIES]; /* phGraph_out arrays, as the driver's */
static const void* fake_capture_dep = &fake_capture_dep; /* the one node a head ends in */
static int fake_graph_ok(void* g) {
    return fake_is_live(FK_GRAPH, g) ||
           ((fake_graph*)g >= fake_cond_bodies && (fake_graph*)g < fake_cond_bodies + FAKE_COND_BODIES);
}
static fres f_cuGraphCreate(void** out_graph, unsigned flags) {
    fake_graph* g;
    FAKE_ENTER("cuGraphCreate");
    *out_graph = NULL;
    if (flags) return 1;
    if (!(g = (fake_graph*)calloc(1, sizeof *g))) return 2;
    if (!fake_track(FK_GRAPH, g, sizeof *g)) { free(g); return 2; }
    *out_graph = g;
    return 0;
}
static fres f_cuGraphConditionalHandleCreate(uint64_t* out, void* g, void* ctx, unsigned dflt, unsigned flags) {
    FAKE_ENTER("cuGraphConditionalHandleCreate"); FAKE_NEED_CTX("cuGraphConditionalHandleCreate");
    if (!fake_is_live(FK_GRAPH, g)) { fake_protocol("unknown or destroyed graph", "cuGraphConditionalHandleCreate"); return 400; }
    if ((uintptr_t)ctx != 0x1000u + (uintptr_t)(fake_tls_ctx - 1)) return 201; /* not the current primary ctx */
    if (flags > 1) return 1;
    pthread_mutex_lock(&fake.lock);
    *out = 0xC0D0000ull + (uint64_t)++fake.cond_handles;
    fake.last_cond_default = dflt;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuGraphAddNode(void** out_node, void* g, void* const* deps, size_t n, void* params) {
    const unsigned char* p = (const unsigned char*)params;
    unsigned type, ctype, size;
    uint64_t handle;
    void** out_bodies;
    fake_graph* body;
    fake_op op;
    size_t i;
    FAKE_ENTER("cuGraphAddNode"); FAKE_NEED_CTX("cuGraphAddNode");
    if (!fake_is_live(FK_GRAPH, g)) { fake_protocol("unknown or destroyed graph", "cuGraphAddNode"); return 400; }
    for (i = 0; i < n; i++) if (deps[i] != fake_capture_dep) return 1;
    memcpy(&type, p, 4);                        /* CUgraphNodeParams: type, reserved0[3], union */
    memcpy(&handle, p + 16, 8);                 /* CUDA_CONDITIONAL_NODE_PARAMS: handle, */
    memcpy(&ctype, p + 24, 4);                  /* type, */
    memcpy(&size, p + 28, 4);                   /* size, */
    memcpy(&out_bodies, p + 32, sizeof out_bodies); /* phGraph_out (an output), ctx */
    for (i = 48; i < 256; i++) if (p[i]) return 1; /* the rest must be zero */
    if (type != 13 || ctype > 1 || size != 1 || (handle >> 16) != 0xC0Dull) return 1;
    if (((fake_graph*)g)->nops == FAKE_MAX_OPS) return 2;
    pthread_mutex_lock(&fake.lock);
    body = &fake_cond_bodies[fake.cond_nodes++ % FAKE_COND_BODIES];
    fake.last_cond_type = ctype;
    pthread_mutex_unlock(&fake.lock);
    memset(body, 0, sizeof *body);
    memset(&op, 0, sizeof op);
    op.type = FOP_COND;
    op.value = ctype;
    op.src = handle;
    op.host = body;
    op.n = n;
    ((fake_graph*)g)->ops[((fake_graph*)g)->nops++] = op;
    /* as the driver does: phGraph_out pointed at an array of its own holding the body (a
       caller that reads its own variable instead gets nothing) */
    fake_cond_body_ptrs[body - fake_cond_bodies] = body;
    out_bodies = &fake_cond_body_ptrs[body - fake_cond_bodies];
    memcpy((unsigned char*)params + 32, &out_bodies, sizeof out_bodies);
    *out_node = &((fake_graph*)g)->ops[((fake_graph*)g)->nops - 1];
    return 0;
}
static fres f_cuStreamBeginCaptureToGraph(void* s, void* g, void* const* deps, const void* edges, size_t n, unsigned mode) {
    fake_stream* st;
    FAKE_ENTER("cuStreamBeginCaptureToGraph"); FAKE_NEED_CTX("cuStreamBeginCaptureToGraph");
    if (!fake_stream_ok(s, "cuStreamBeginCaptureToGraph")) return 400;
    if (!fake_graph_ok(g)) { fake_protocol("unknown or destroyed graph", "cuStreamBeginCaptureToGraph"); return 400; }
    if (!(st = fake_stream_of(s))) return 900;
    if (mode > 2 || n || deps || edges) return 1; /* gpuk starts each part with no dependencies */
    if (st->capture) return 401;
    st->graph = (fake_graph*)g;
    st->capture = 1;
    st->capture_to = 1;
    st->capture_mode = mode;
    st->capture_thread = pthread_self();
    return 0;
}
static fres f_cuStreamGetCaptureInfo(void* s, unsigned* status, uint64_t* id, void** g, void* const** deps, size_t* n) {
    fake_stream* st;
    FAKE_ENTER("cuStreamGetCaptureInfo"); FAKE_NEED_CTX("cuStreamGetCaptureInfo");
    if (!fake_stream_ok(s, "cuStreamGetCaptureInfo")) return 400;
    st = fake_capturing(s);
    *status = st ? (unsigned)st->capture : 0u;
    if (id) *id = st ? 1u : 0u;
    if (g) *g = st ? st->graph : NULL;
    if (deps) *deps = (void* const*)&fake_capture_dep;
    if (n) *n = st && st->graph->nops ? 1u : 0u;
    return 0;
}
static fres f_cuGraphDestroy(void* g) { FAKE_ENTER("cuGraphDestroy"); return fake_release(FK_GRAPH, g, "cuGraphDestroy") ? 0 : 400; }
static fres f_cuGraphExecDestroy(void* e) { FAKE_ENTER("cuGraphExecDestroy"); return fake_release(FK_EXEC, e, "cuGraphExecDestroy") ? 0 : 400; }
/* One record run again on stream s (not counted as a driver call). */
static fres fake_replay_op(const fake_op* op, void* s) {
    void* params[16];
    int i;
    switch (op->type) {
    case FOP_MEMSET:
        return op->elem == 1 ? f_cuMemsetD8Async(op->dst, (unsigned char)op->value, op->n, s)
             : op->elem == 2 ? f_cuMemsetD16Async(op->dst, (unsigned short)op->value, op->n, s)
             : f_cuMemsetD32Async(op->dst, op->value, op->n, s);
    case FOP_HTOD: return f_cuMemcpyHtoDAsync(op->dst, op->host, op->n, s);
    case FOP_DTOH: return f_cuMemcpyDtoHAsync(op->host, op->src, op->n, s);
    case FOP_DTOD: return f_cuMemcpyDtoDAsync(op->dst, op->src, op->n, s);
    case FOP_RECORD: return fake_event_record(op->host, s, 0, "cuEventRecord"); /* the node, at a launch */
    case FOP_ALLOC: /* fresh memory at each launch: what the last one left is gone */
        if (!fake_is_live(FK_GALLOC, (void*)(uintptr_t)op->dst)) return 1;
        memset((void*)(uintptr_t)op->dst, 0xA5, op->n);
        return 0;
    case FOP_FREE: return 0;
    case FOP_COND: return 0; /* the fake runs no kernel that could set the condition */
    case FOP_LAUNCH:
        for (i = 0; i < 16; i++) params[i] = (void*)op->args[i];
        return fake_launch("cuGraphLaunch", op->func, op->grid, op->block, op->smem, s, params, op->ex ? op : NULL);
    default: return 1;
    }
}
static fres f_cuGraphLaunch(void* e, void* s) {
    const fake_graph* g = (const fake_graph*)e;
    fake_stream* cap;
    fres r = 0;
    int i;
    FAKE_ENTER("cuGraphLaunch"); FAKE_NEED_CTX("cuGraphLaunch");
    if (!fake_stream_ok(s, "cuGraphLaunch")) return 400;
    if (!fake_is_live(FK_EXEC, e)) { fake_protocol("unknown or destroyed graph exec", "cuGraphLaunch"); return 400; }
    if ((cap = fake_capturing(s)) != NULL) { /* a graph inside a capture: its records join it */
        for (i = 0; i < g->nops && !r; i++) r = fake_record(cap, &g->ops[i]);
        return r;
    }
    if (fake_legacy_breaks_capture(s)) return 906;
    fake_replaying = 1;
    for (i = 0; i < g->nops && !r; i++) r = fake_replay_op(&g->ops[i], s);
    fake_replaying = 0;
    if (!r) { pthread_mutex_lock(&fake.lock); fake.graph_launches++; pthread_mutex_unlock(&fake.lock); }
    return r;
}
/* CUDA 10.2's ABI: the same records in the same order with new values, or 910 with the
   reason (2: the number of nodes changed, 3: a node's type changed). */
static fres f_cuGraphExecUpdate(void* e, void* g, void** out_node, unsigned* out_result) {
    fake_graph* x = (fake_graph*)e;
    const fake_graph* n = (const fake_graph*)g;
    int i;
    FAKE_ENTER("cuGraphExecUpdate"); FAKE_NEED_CTX("cuGraphExecUpdate");
    *out_node = NULL;
    *out_result = 1;
    if (!fake_is_live(FK_EXEC, e) || !fake_is_live(FK_GRAPH, g)) { fake_protocol("unknown graph or exec", "cuGraphExecUpdate"); return 400; }
    if (x->nops != n->nops) { *out_result = 2; return 910; }
    for (i = 0; i < n->nops; i++)
        if (x->ops[i].type != n->ops[i].type || (n->ops[i].type == FOP_MEMSET && x->ops[i].elem != n->ops[i].elem)) {
            *out_result = 3;
            return 910;
        }
    memcpy(x->ops, n->ops, sizeof x->ops);
    *out_result = 0;
    return 0;
}
static fres f_cuFuncGetParamInfo(void* f, size_t i, size_t* off, size_t* sz) {
    fake_func* fn = (fake_func*)f;
    FAKE_ENTER("cuFuncGetParamInfo");
    if (i >= (size_t)fn->nparams) return 1;
    *off = i * 8; *sz = fn->psize[i];
    return 0;
}

/* CUDA IPC, played in one process: a handle carries the exported pointer (or event) behind a
   tag; an open of a memory handle maps the very same memory (so writes through it show in
   the export) and is tracked until its close (a cuMemFree of it instead frees the export,
   whose own free then fails as a double free); an opened event is a new event that
   remembers its export. What the fake cannot know (which process
   opens) gpuk checks itself. */
typedef struct fake_ipc_handle { char reserved[64]; } fake_ipc_handle;
static const char fake_ipc_mem_tag[8] = "fakeMEM", fake_ipc_event_tag[8] = "fakeEVT";
static long fake_ipc_opens, fake_ipc_closes, fake_ipc_event_opens;
/* The live cuIpcOpenMemHandle mapping of p, or NULL. */
static fake_ipc_map* fake_ipc_map_of(fdevptr p) {
    int i;
    fake_ipc_map* m = NULL;
    pthread_mutex_lock(&fake.lock);
    for (i = 0; i < fake.nobjs && !m; i++)
        if (fake.objs[i].live && fake.objs[i].kind == FK_IPCMEM && ((fake_ipc_map*)fake.objs[i].mem)->ptr == p)
            m = (fake_ipc_map*)fake.objs[i].mem;
    pthread_mutex_unlock(&fake.lock);
    return m;
}
static fres f_cuIpcGetMemHandle(fake_ipc_handle* h, fdevptr p) {
    int i, found = 0;
    size_t bytes = 0;
    FAKE_ENTER("cuIpcGetMemHandle"); FAKE_NEED_CTX("cuIpcGetMemHandle");
    pthread_mutex_lock(&fake.lock); /* the start of a live cuMemAlloc allocation, as the driver needs */
    for (i = 0; i < fake.nobjs && !found; i++)
        if (fake.objs[i].live && fake.objs[i].kind == FK_ALLOC && (fdevptr)(uintptr_t)fake.objs[i].mem == p) {
            found = 1;
            bytes = fake.objs[i].bytes;
        }
    pthread_mutex_unlock(&fake.lock);
    if (!found) return 1;
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, fake_ipc_mem_tag, 8);
    memcpy(h->reserved + 8, &p, sizeof p);
    memcpy(h->reserved + 16, &bytes, sizeof bytes);
    return 0;
}
static fres f_cuIpcOpenMemHandle(fdevptr* out, fake_ipc_handle h, unsigned flags) {
    fdevptr p;
    size_t bytes;
    fake_ipc_map* m;
    FAKE_ENTER("cuIpcOpenMemHandle"); FAKE_NEED_CTX("cuIpcOpenMemHandle");
    if (flags != 1u) return 1; /* CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, as the driver requires */
    if (memcmp(h.reserved, fake_ipc_mem_tag, 8) != 0) return 1;
    memcpy(&p, h.reserved + 8, sizeof p);
    memcpy(&bytes, h.reserved + 16, sizeof bytes);
    if (!fake_dev_ok(p, bytes)) return 1; /* the export is gone */
    if (!(m = (fake_ipc_map*)malloc(sizeof *m))) return 2;
    m->ptr = p;
    if (!fake_track(FK_IPCMEM, m, bytes)) { free(m); return 2; }
    *out = p;
    pthread_mutex_lock(&fake.lock); fake_ipc_opens++; pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuIpcCloseMemHandle(fdevptr p) {
    fake_ipc_map* m;
    FAKE_ENTER("cuIpcCloseMemHandle"); FAKE_NEED_CTX("cuIpcCloseMemHandle");
    if (!(m = fake_ipc_map_of(p))) { fake_protocol("close of memory not opened with cuIpcOpenMemHandle", "cuIpcCloseMemHandle"); return 1; }
    fake_release(FK_IPCMEM, m, "cuIpcCloseMemHandle");
    pthread_mutex_lock(&fake.lock); fake_ipc_closes++; pthread_mutex_unlock(&fake.lock);
    return 0;
}
static fres f_cuIpcGetEventHandle(fake_ipc_handle* h, void* e) {
    FAKE_ENTER("cuIpcGetEventHandle"); FAKE_NEED_CTX("cuIpcGetEventHandle");
    if (!fake_is_live(FK_EVENT, e)) { fake_protocol("destroyed event", "cuIpcGetEventHandle"); return 400; }
    if ((((fake_event*)e)->flags & 6u) != 6u) return 1; /* INTERPROCESS | DISABLE_TIMING */
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, fake_ipc_event_tag, 8);
    memcpy(h->reserved + 8, &e, sizeof e);
    return 0;
}
static fres f_cuIpcOpenEventHandle(void** out, fake_ipc_handle h) {
    void* from;
    fake_event* m;
    FAKE_ENTER("cuIpcOpenEventHandle"); FAKE_NEED_CTX("cuIpcOpenEventHandle");
    if (memcmp(h.reserved, fake_ipc_event_tag, 8) != 0) return 1;
    memcpy(&from, h.reserved + 8, sizeof from);
    if (!fake_is_live(FK_EVENT, from)) return 400; /* the export is gone */
    m = (fake_event*)calloc(1, sizeof *m);
    if (!m || !fake_track(FK_EVENT, m, sizeof *m)) { free(m); return 2; }
    m->flags = 6u;
    m->imported_from = from;
    *out = m;
    pthread_mutex_lock(&fake.lock); fake_ipc_event_opens++; pthread_mutex_unlock(&fake.lock);
    return 0;
}

typedef struct fake_entry { const char* name; void (*fn)(void); } fake_entry;
#define FAKE_E(name) { #name, (void (*)(void))f_##name }
static const fake_entry fake_entries[] = {
    FAKE_E(cuInit), FAKE_E(cuDriverGetVersion), FAKE_E(cuGetErrorName), FAKE_E(cuDeviceGetCount),
    FAKE_E(cuDeviceGet), FAKE_E(cuDeviceGetName), FAKE_E(cuDeviceTotalMem), FAKE_E(cuDeviceGetAttribute),
    FAKE_E(cuDeviceGetPCIBusId), FAKE_E(cuDevicePrimaryCtxRetain), FAKE_E(cuDevicePrimaryCtxRelease),
    FAKE_E(cuCtxGetCurrent), FAKE_E(cuCtxSetCurrent), FAKE_E(cuCtxSynchronize),
    FAKE_E(cuCtxGetStreamPriorityRange), FAKE_E(cuCtxSetLimit), FAKE_E(cuCtxGetLimit), FAKE_E(cuMemGetInfo), FAKE_E(cuMemAlloc), FAKE_E(cuMemFree),
    FAKE_E(cuMemHostAlloc), FAKE_E(cuMemFreeHost), FAKE_E(cuMemHostRegister), FAKE_E(cuMemHostUnregister),
    FAKE_E(cuMemsetD8Async), FAKE_E(cuMemsetD16Async), FAKE_E(cuMemsetD32Async), FAKE_E(cuMemcpyHtoDAsync),
    FAKE_E(cuMemcpyDtoHAsync), FAKE_E(cuMemcpyDtoDAsync), FAKE_E(cuPointerGetAttribute),
    FAKE_E(cuStreamCreateWithPriority), FAKE_E(cuStreamDestroy), FAKE_E(cuStreamSynchronize),
    FAKE_E(cuStreamQuery), FAKE_E(cuStreamIsCapturing), FAKE_E(cuStreamGetCtx), FAKE_E(cuStreamWaitEvent), FAKE_E(cuLaunchHostFunc), FAKE_E(cuEventCreate),
    FAKE_E(cuEventDestroy), FAKE_E(cuEventRecord), FAKE_E(cuEventRecordWithFlags), FAKE_E(cuEventSynchronize), FAKE_E(cuEventQuery),
    FAKE_E(cuEventElapsedTime), FAKE_E(cuModuleLoadDataEx), FAKE_E(cuModuleUnload),
    FAKE_E(cuModuleGetFunction), FAKE_E(cuFuncGetAttribute), FAKE_E(cuFuncSetAttribute),
    FAKE_E(cuOccupancyMaxPotentialBlockSize), FAKE_E(cuLaunchKernel), FAKE_E(cuFuncGetParamInfo),
    FAKE_E(cuMemcpyPeer), FAKE_E(cuMemcpyPeerAsync), FAKE_E(cuDeviceCanAccessPeer),
    FAKE_E(cuCtxEnablePeerAccess), FAKE_E(cuOccupancyMaxActiveBlocksPerMultiprocessor),
    FAKE_E(cuLaunchKernelEx), FAKE_E(cuOccupancyMaxActiveClusters), FAKE_E(cuTensorMapEncodeTiled), FAKE_E(cuStreamBeginCapture), FAKE_E(cuThreadExchangeStreamCaptureMode), FAKE_E(cuStreamEndCapture),
    FAKE_E(cuGraphInstantiateWithFlags), FAKE_E(cuGraphDestroy), FAKE_E(cuGraphExecDestroy),
    FAKE_E(cuGraphLaunch), FAKE_E(cuGraphExecUpdate), FAKE_E(cuGraphCreate),
    FAKE_E(cuGraphConditionalHandleCreate), FAKE_E(cuGraphAddNode), FAKE_E(cuStreamBeginCaptureToGraph),
    FAKE_E(cuStreamGetCaptureInfo), FAKE_E(cuMemAllocAsync), FAKE_E(cuMemFreeAsync),
    FAKE_E(cuDeviceGetMemPool), FAKE_E(cuMemPoolSetAttribute), FAKE_E(cuMemPoolGetAttribute), FAKE_E(cuMemPoolTrimTo),
    FAKE_E(cuIpcGetMemHandle), FAKE_E(cuIpcOpenMemHandle), FAKE_E(cuIpcCloseMemHandle), FAKE_E(cuIpcGetEventHandle),
    FAKE_E(cuIpcOpenEventHandle),
    FAKE_E(cuMemHostGetDevicePointer), FAKE_E(cuMemAllocManaged), FAKE_E(cuMemPrefetchAsync), FAKE_E(cuMemAdvise),
    FAKE_E(cuLinkCreate), FAKE_E(cuLinkAddData), FAKE_E(cuLinkAddFile), FAKE_E(cuLinkComplete),
    FAKE_E(cuLinkDestroy),
};

/* gpuk_get_proc_fn: entry points by name; NULL for missing ones and for rows the fake lacks
   (libraries: optional in gpuk). */
static void* fake_get_proc(const char* symbol, int abi_version, void* user) {
    size_t i;
    int k;
    (void)user;
    (void)abi_version;
    for (k = 0; k < 8 && fake.cfg.missing[k]; k++)
        if (strcmp(fake.cfg.missing[k], symbol) == 0) return NULL;
    if (strcmp(symbol, "cuFuncGetParamInfo") == 0 && fake.cfg.version < 12040) return NULL;
    if ((strncmp(symbol, "cuMemPool", 9) == 0 || strcmp(symbol, "cuMemAllocAsync") == 0 ||
         strcmp(symbol, "cuMemFreeAsync") == 0 || strcmp(symbol, "cuDeviceGetMemPool") == 0) &&
        fake.cfg.version < 11020)
        return NULL; /* memory pools came with CUDA 11.2 */
    if (strcmp(symbol, "cuIpcOpenMemHandle") == 0 && fake.cfg.version < 11000) return NULL; /* its _v2 */
    if ((strcmp(symbol, "cuGraphConditionalHandleCreate") == 0 ||
         strcmp(symbol, "cuStreamBeginCaptureToGraph") == 0) && fake.cfg.version < 12030)
        return NULL; /* conditional nodes came with CUDA 12.3 */
    for (i = 0; i < sizeof fake_entries / sizeof fake_entries[0]; i++)
        if (strcmp(fake_entries[i].name, symbol) == 0) {
            void* p;
            memcpy(&p, &fake_entries[i].fn, sizeof p); /* ISO C: no direct function->object cast */
            return p;
        }
    return NULL;
}
#if defined(CHECK_H) && defined(GPUK_H_INCLUDED)
/* gpuk initialised on a fresh fake driver (cfg NULL: the defaults); the init's result. */
static inline gpuk_result fake_gpuk_init(const fake_config* cfg) {
    gpuk_desc d;
    gpuk_shutdown();
    fake_reset(cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    return gpuk_init(&d);
}

/* After the last ctx is gone: the driver got everything back and saw no misuse. */
static inline void fake_gpuk_check_released(void) {
    CHECK(fake_all_released());
    if (fake.protocol_errors) fprintf(stderr, "  fake driver: %s\n", fake.protocol_msg);
    CHECK(fake.protocol_errors == 0);
    CHECK_OK(gpuk_shutdown());
}

/* The plain case: one ctx on a fresh fake driver, and its teardown. */
static inline gpuk_ctx* fake_gpuk_up_desc(const fake_config* cfg, const gpuk_ctx_desc* desc) {
    gpuk_ctx* c = NULL;
    CHECK_OK(fake_gpuk_init(cfg));
    CHECK_OK(gpuk_ctx_create(desc, &c));
    return c;
}
static inline gpuk_ctx* fake_gpuk_up(const fake_config* cfg) { return fake_gpuk_up_desc(cfg, NULL); }

static inline void fake_gpuk_down(gpuk_ctx* c) {
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
}
#endif
#endif
