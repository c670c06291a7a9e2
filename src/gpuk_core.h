/* src/gpuk_core.h - part of gpuk.h: the implementation's core (platform, driver loader, errors, ctx,
   handles, memory, streams, events, modules, launch). tools/gen_ptx.py joins src/ into gpuk.h. */
#ifdef GPUK_IMPLEMENTATION
#ifndef GPUK_IMPL_INCLUDED
#define GPUK_IMPL_INCLUDED

/* ---- >>config ---- */
#ifdef GPUK_MALLOC
#error "gpuk: allocation is configured at run time through gpuk_desc.allocator, not GPUK_MALLOC"
#endif
#ifndef GPUK_ASSERT
#include <assert.h>
#define GPUK_ASSERT(c) assert(c)
#endif
#ifndef GPUK_DEBUG
#ifdef NDEBUG
#define GPUK_DEBUG 0
#else
#define GPUK_DEBUG 1
#endif
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifndef GPUK_NO_STDIO
#include <stdio.h>
#endif
#if defined(GPUK_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define GPUK__IMPL static __attribute__((unused)) /* a TU need not call every function */
#elif defined(GPUK_STATIC)
#define GPUK__IMPL static
#else
#define GPUK__IMPL
#endif
#if defined(__GNUC__) || defined(__clang__)
#define GPUK__UNLIKELY(c) __builtin_expect(!!(c), 0)
#define GPUK__NOINLINE __attribute__((noinline))
#else
#define GPUK__UNLIKELY(c) (c)
#define GPUK__NOINLINE
#endif

/* ---- >>platform ---- */
#if defined(_WIN32)
/* No windows.h: the few kernel32 entry points are declared here, with windows.h's types [volk]. */
#if !defined(_WINDOWS_) && !defined(_WINBASE_)
struct HINSTANCE__;
typedef long long (__stdcall* gpuk__farproc)(void);
__declspec(dllimport) struct HINSTANCE__* __stdcall LoadLibraryA(const char* name);
__declspec(dllimport) gpuk__farproc __stdcall GetProcAddress(struct HINSTANCE__* lib,
                                                              const char* name);
__declspec(dllimport) int __stdcall FreeLibrary(struct HINSTANCE__* lib);
__declspec(dllimport) void __stdcall AcquireSRWLockExclusive(void** lock);
__declspec(dllimport) void __stdcall ReleaseSRWLockExclusive(void** lock);
#endif
#define GPUK__CUDAAPI __stdcall
typedef struct gpuk__mutex { void* srw; } gpuk__mutex;
#define GPUK__MUTEX_INIT { 0 }
static void gpuk__mutex_lock(gpuk__mutex* m) { AcquireSRWLockExclusive((void**)&m->srw); }
static void gpuk__mutex_unlock(gpuk__mutex* m) { ReleaseSRWLockExclusive((void**)&m->srw); }
static void gpuk__mutex_init(gpuk__mutex* m) { m->srw = 0; }
static void gpuk__mutex_fini(gpuk__mutex* m) { (void)m; }
static void* gpuk__lib_open_path(const char* path, char* why, size_t cap) {
    void* lib = (void*)LoadLibraryA(path);
    if (!lib && cap) { strncpy(why, "LoadLibraryA failed", cap - 1); why[cap - 1] = 0; }
    return lib;
}
static void gpuk__lib_close(void* lib) { FreeLibrary((struct HINSTANCE__*)lib); }
static void* gpuk__lib_sym(void* lib, const char* name) {
    gpuk__farproc fn = GetProcAddress((struct HINSTANCE__*)lib, name);
    void* p;
    memcpy(&p, &fn, sizeof p); /* ISO C has no cast from function to object pointer */
    return p;
}
static const char* gpuk__getenv(const char* name) { return getenv(name); }
static void gpuk__register_fork_handlers(void) {}
#define GPUK__DEFAULT_DRIVER "nvcuda.dll"
#else
#include <dlfcn.h>
#include <pthread.h>
#define GPUK__CUDAAPI
typedef struct gpuk__mutex { pthread_mutex_t m; } gpuk__mutex;
#define GPUK__MUTEX_INIT { PTHREAD_MUTEX_INITIALIZER }
static void gpuk__mutex_lock(gpuk__mutex* m) { pthread_mutex_lock(&m->m); }
static void gpuk__mutex_unlock(gpuk__mutex* m) { pthread_mutex_unlock(&m->m); }
static void gpuk__mutex_init(gpuk__mutex* m) { pthread_mutex_init(&m->m, NULL); }
static void gpuk__mutex_fini(gpuk__mutex* m) { pthread_mutex_destroy(&m->m); }
static void* gpuk__lib_open_path(const char* path, char* why, size_t cap) {
    /* RTLD_LOCAL: never let the driver's symbols leak into the program's namespace. */
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib && cap) {
        const char* e = dlerror();
        strncpy(why, e ? e : "dlopen failed", cap - 1);
        why[cap - 1] = 0;
    }
    return lib;
}
static void gpuk__lib_close(void* lib) { dlclose(lib); }
static void* gpuk__lib_sym(void* lib, const char* name) { return dlsym(lib, name); }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 17))
/* Declared here because <stdlib.h> shows it only under _GNU_SOURCE, which the including program
   may not define; it ignores the environment in setuid/setgid processes. */
extern char* secure_getenv(const char* name);
static const char* gpuk__getenv(const char* name) { return secure_getenv(name); }
#else
static const char* gpuk__getenv(const char* name) { return getenv(name); }
#endif
/* fork() must not copy gpuk's locks while another thread holds them (the child would wait for
   a thread it does not have): prepare takes them all, parent and child let go; the child also
   marks itself forked. Registered before gpuk's global lock is first taken. */
static void gpuk__atfork_prepare(void);
static void gpuk__atfork_parent(void);
static void gpuk__atfork_child(void);
static pthread_once_t gpuk__fork_once = PTHREAD_ONCE_INIT;
static void gpuk__register_fork_handlers_once(void) {
    pthread_atfork(gpuk__atfork_prepare, gpuk__atfork_parent, gpuk__atfork_child);
}
static void gpuk__register_fork_handlers(void) {
    pthread_once(&gpuk__fork_once, gpuk__register_fork_handlers_once);
}
#define GPUK__DEFAULT_DRIVER "libcuda.so.1"
#endif

#if defined(GPUK_NO_THREAD_LOCAL)
#define GPUK__TLS
#elif defined(__cplusplus) && __cplusplus >= 201103L
#define GPUK__TLS thread_local
#elif defined(_MSC_VER)
#define GPUK__TLS __declspec(thread)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define GPUK__TLS _Thread_local
#else
#define GPUK__TLS __thread
#endif

#if defined(_MSC_VER) && !defined(__clang__)
long _InterlockedExchangeAdd(long volatile* p, long v);
#define GPUK__ATOMIC_LOAD(p) (*(volatile int*)(p))
#define GPUK__ATOMIC_STORE(p, v) (void)(*(volatile int*)(p) = (v))
#define GPUK__ATOMIC_ADD(p, v) ((unsigned)_InterlockedExchangeAdd((long volatile*)(p), (long)(v)))
#else
#define GPUK__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GPUK__ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GPUK__ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#endif

/* ---- >>driver ---- */
/* Private aliases for the driver's types. Struct tags are cuda.h's, so tests/driver_sigs.c can
   assign each official PFN_ type to ours; CUresult and the enums are non-negative enums, which
   C compilers give the type unsigned int. */
typedef unsigned int gpuk__cu_result;
typedef int gpuk__cu_device;
typedef struct CUctx_st* gpuk__cu_context;
typedef struct CUmod_st* gpuk__cu_module;
typedef struct CUfunc_st* gpuk__cu_function;
typedef struct CUstream_st* gpuk__cu_stream;
typedef struct CUevent_st* gpuk__cu_event;
typedef void(GPUK__CUDAAPI* gpuk__cu_host_fn)(void* user_data);
typedef size_t(GPUK__CUDAAPI* gpuk__cu_b2d_fn)(int block_size);
struct CUlaunchConfig_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUlib_st;

/* Every run-time library gpuk loads (the driver; NVRTC or NCCL later) is one X-macro list, one
   descriptor (gpuk__lib, >>state) and one call of gpuk__lib_load (>>init). A list's rows are
     X(member, ABI version, exported name, required, (parameters))
   member: the symbol a resolver (cuGetProcAddress, gpuk_desc.get_proc) is asked for, and the
   table member; ABI version: the version cuGetProcAddress resolves it at; exported name: what
   dlsym looks up where there is no resolver (drivers < 11.3); required: 0 = optional, missing
   is no failure (GPUK__X_FEATURE can turn a feature bit on when present). Every entry point
   returns a non-negative result enum (CUresult, nvrtcResult, ncclResult_t: unsigned int). */
typedef struct gpuk__lib_row {
    const char* symbol;
    const char* export_name;
    int version;
    int required;
    size_t offset;             /* of the member in the library's table */
} gpuk__lib_row;

/* An optional row that turns a gpuk_features() bit on when the library has it. */
typedef struct gpuk__lib_feature {
    size_t offset;
    uint32_t bit;
} gpuk__lib_feature;

/* Expansions of a list: GPUK__LIB_TABLE(FUNCS, table) declares the pointer types
   gpuk__pfn_<member> and the struct `table`; rows and feature rows come from GPUK__X_ROW and
   GPUK__X_FEATURE(member, bit) with GPUK__X_TABLE #defined as the table type around them. */
#define GPUK__X_PFN(name, ver, exp, req, params) \
    typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_##name) params; /* NOLINT(bugprone-macro-parentheses): a parameter list */
#define GPUK__X_MEMBER(name, ver, exp, req, params) gpuk__pfn_##name name;
#define GPUK__X_ROW(name, ver, exp, req, params) \
    { #name, exp, ver, req, offsetof(GPUK__X_TABLE, name) },
#define GPUK__X_FEATURE(name, bit) { offsetof(GPUK__X_TABLE, name), bit },
#define GPUK__LIB_TABLE(FUNCS, table) \
    FUNCS(GPUK__X_PFN) \
    typedef struct table { FUNCS(GPUK__X_MEMBER) } table; /* NOLINT(bugprone-macro-parentheses): a type name */

/* The driver: the ABI version picks e.g. cuMemAlloc_v2 (3020), never the 32-bit-size CUDA 2.0
   ABI behind the plain export. */
#define GPUK__DRIVER_FUNCS(X) \
    X(cuInit, 2000, "cuInit", 1, (unsigned int flags)) \
    X(cuDriverGetVersion, 2020, "cuDriverGetVersion", 1, (int* out_version)) \
    X(cuGetErrorName, 6000, "cuGetErrorName", 0, (gpuk__cu_result code, const char** out_name)) \
    X(cuDeviceGetCount, 2000, "cuDeviceGetCount", 1, (int* out_count)) \
    X(cuDeviceGet, 2000, "cuDeviceGet", 1, (gpuk__cu_device* out_dev, int ordinal)) \
    X(cuDeviceGetName, 2000, "cuDeviceGetName", 1, (char* name, int len, gpuk__cu_device dev)) \
    X(cuDeviceTotalMem, 3020, "cuDeviceTotalMem_v2", 1, (size_t* out_bytes, gpuk__cu_device dev)) \
    X(cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute", 1, \
      (int* out_value, unsigned int attribute, gpuk__cu_device dev)) \
    X(cuDeviceGetPCIBusId, 4010, "cuDeviceGetPCIBusId", 1, (char* bus_id, int len, gpuk__cu_device dev)) \
    X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain", 1, \
      (gpuk__cu_context* out_ctx, gpuk__cu_device dev)) \
    X(cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease", 1, (gpuk__cu_device dev)) \
    X(cuCtxGetCurrent, 4000, "cuCtxGetCurrent", 1, (gpuk__cu_context* out_ctx)) \
    X(cuCtxSetCurrent, 4000, "cuCtxSetCurrent", 1, (gpuk__cu_context ctx)) \
    X(cuCtxSynchronize, 2000, "cuCtxSynchronize", 1, (void)) \
    X(cuCtxGetStreamPriorityRange, 5050, "cuCtxGetStreamPriorityRange", 1, \
      (int* out_least, int* out_greatest)) \
    X(cuMemGetInfo, 3020, "cuMemGetInfo_v2", 1, (size_t* out_free, size_t* out_total)) \
    X(cuMemAlloc, 3020, "cuMemAlloc_v2", 1, (gpuk_devptr* out_ptr, size_t bytes)) \
    X(cuMemFree, 3020, "cuMemFree_v2", 1, (gpuk_devptr ptr)) \
    X(cuMemHostAlloc, 2020, "cuMemHostAlloc", 1, (void** out_ptr, size_t bytes, unsigned int flags)) \
    X(cuMemFreeHost, 2000, "cuMemFreeHost", 1, (void* ptr)) \
    X(cuMemHostRegister, 6050, "cuMemHostRegister_v2", 1, (void* ptr, size_t bytes, unsigned int flags)) \
    X(cuMemHostUnregister, 4000, "cuMemHostUnregister", 1, (void* ptr)) \
    X(cuMemsetD8Async, 3020, "cuMemsetD8Async", 1, \
      (gpuk_devptr dst, unsigned char value, size_t count, gpuk__cu_stream stream)) \
    X(cuMemsetD16Async, 3020, "cuMemsetD16Async", 1, \
      (gpuk_devptr dst, unsigned short value, size_t count, gpuk__cu_stream stream)) \
    X(cuMemsetD32Async, 3020, "cuMemsetD32Async", 1, \
      (gpuk_devptr dst, unsigned int value, size_t count, gpuk__cu_stream stream)) \
    X(cuMemcpyHtoDAsync, 3020, "cuMemcpyHtoDAsync_v2", 1, \
      (gpuk_devptr dst, const void* src, size_t bytes, gpuk__cu_stream stream)) \
    X(cuMemcpyDtoHAsync, 3020, "cuMemcpyDtoHAsync_v2", 1, \
      (void* dst, gpuk_devptr src, size_t bytes, gpuk__cu_stream stream)) \
    X(cuMemcpyDtoDAsync, 3020, "cuMemcpyDtoDAsync_v2", 1, \
      (gpuk_devptr dst, gpuk_devptr src, size_t bytes, gpuk__cu_stream stream)) \
    X(cuPointerGetAttribute, 4000, "cuPointerGetAttribute", 1, \
      (void* out_data, unsigned int attribute, gpuk_devptr ptr)) \
    X(cuStreamCreateWithPriority, 5050, "cuStreamCreateWithPriority", 1, \
      (gpuk__cu_stream* out_stream, unsigned int flags, int priority)) \
    X(cuStreamDestroy, 4000, "cuStreamDestroy_v2", 1, (gpuk__cu_stream stream)) \
    X(cuStreamSynchronize, 2000, "cuStreamSynchronize", 1, (gpuk__cu_stream stream)) \
    X(cuStreamQuery, 2000, "cuStreamQuery", 1, (gpuk__cu_stream stream)) \
    X(cuStreamWaitEvent, 3020, "cuStreamWaitEvent", 1, \
      (gpuk__cu_stream stream, gpuk__cu_event event, unsigned int flags)) \
    X(cuLaunchHostFunc, 10000, "cuLaunchHostFunc", 1, \
      (gpuk__cu_stream stream, gpuk__cu_host_fn fn, void* user_data)) \
    X(cuEventCreate, 2000, "cuEventCreate", 1, (gpuk__cu_event* out_event, unsigned int flags)) \
    X(cuEventDestroy, 4000, "cuEventDestroy_v2", 1, (gpuk__cu_event event)) \
    X(cuEventRecord, 2000, "cuEventRecord", 1, (gpuk__cu_event event, gpuk__cu_stream stream)) \
    X(cuEventSynchronize, 2000, "cuEventSynchronize", 1, (gpuk__cu_event event)) \
    X(cuEventQuery, 2000, "cuEventQuery", 1, (gpuk__cu_event event)) \
    X(cuEventElapsedTime, 2000, "cuEventElapsedTime", 1, \
      (float* out_ms, gpuk__cu_event start, gpuk__cu_event stop)) \
    X(cuModuleLoadDataEx, 2010, "cuModuleLoadDataEx", 1, \
      (gpuk__cu_module* out_module, const void* image, unsigned int num_options, \
       unsigned int* options, void** option_values)) \
    X(cuModuleUnload, 2000, "cuModuleUnload", 1, (gpuk__cu_module module)) \
    X(cuModuleGetFunction, 2000, "cuModuleGetFunction", 1, \
      (gpuk__cu_function* out_func, gpuk__cu_module module, const char* name)) \
    X(cuFuncGetAttribute, 2020, "cuFuncGetAttribute", 1, \
      (int* out_value, unsigned int attribute, gpuk__cu_function func)) \
    X(cuFuncSetAttribute, 9000, "cuFuncSetAttribute", 1, \
      (gpuk__cu_function func, unsigned int attribute, int value)) \
    X(cuOccupancyMaxPotentialBlockSize, 6050, "cuOccupancyMaxPotentialBlockSize", 1, \
      (int* out_min_grid, int* out_block, gpuk__cu_function func, gpuk__cu_b2d_fn shared_of_block, \
       size_t shared_bytes, int block_limit)) \
    X(cuLaunchKernel, 4000, "cuLaunchKernel", 1, \
      (gpuk__cu_function func, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, \
       unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, \
       gpuk__cu_stream stream, void** params, void** extra)) \
    X(cuFuncGetParamInfo, 12040, "cuFuncGetParamInfo", 0, \
      (gpuk__cu_function func, size_t index, size_t* out_offset, size_t* out_bytes)) \
    X(cuLaunchKernelEx, 11060, "cuLaunchKernelEx", 0, \
      (const struct CUlaunchConfig_st* config, gpuk__cu_function func, void** params, void** extra)) \
    X(cuGraphInstantiateWithFlags, 11040, "cuGraphInstantiateWithFlags", 0, \
      (struct CUgraphExec_st** out_exec, struct CUgraph_st* graph, unsigned long long flags)) \
    X(cuLibraryLoadData, 12000, "cuLibraryLoadData", 0, \
      (struct CUlib_st** out_library, const void* code, unsigned int* jit_options, \
       void** jit_values, unsigned int num_jit_options, unsigned int* library_options, \
       void** library_values, unsigned int num_library_options))

/* Optional driver rows behind gpuk_features() bits. */
#define GPUK__DRIVER_FEATURES(X) \
    X(cuFuncGetParamInfo, GPUK_FEATURE_PARAM_INFO) \
    X(cuLaunchKernelEx, GPUK_FEATURE_LAUNCH_EX) \
    X(cuGraphInstantiateWithFlags, GPUK_FEATURE_GRAPHS) \
    X(cuLibraryLoadData, GPUK_FEATURE_LIBRARY)

GPUK__LIB_TABLE(GPUK__DRIVER_FUNCS, gpuk__driver)
#define GPUK__X_TABLE gpuk__driver
static const gpuk__lib_row gpuk__driver_rows[] = { GPUK__DRIVER_FUNCS(GPUK__X_ROW) };
static const gpuk__lib_feature gpuk__driver_features[] = { GPUK__DRIVER_FEATURES(GPUK__X_FEATURE) };
#undef GPUK__X_TABLE

/* cuGetProcAddress, CUDA 11.3 ABI and the CUDA 12.0 one with a status out-parameter. */
typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_get_proc_v1)(const char* symbol, void** out_fn,
                                                              int version, uint64_t flags);
typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_get_proc_v2)(const char* symbol, void** out_fn,
                                                              int version, uint64_t flags,
                                                              int* out_status);

/* Driver constants gpuk uses (values from cuda.h; they are ABI and never change). */
enum {
    GPUK__CU_STREAM_NON_BLOCKING = 1,
    GPUK__CU_EVENT_BLOCKING_SYNC = 1,
    GPUK__CU_EVENT_DISABLE_TIMING = 2,
    GPUK__CU_MEMHOSTALLOC_PORTABLE = 1,
    GPUK__CU_MEMHOSTREGISTER_PORTABLE = 1,
    GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    GPUK__CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    GPUK__CU_JIT_INFO_LOG_BUFFER = 3,
    GPUK__CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    GPUK__CU_JIT_ERROR_LOG_BUFFER = 5,
    GPUK__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    GPUK__CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
    GPUK__CU_FUNC_SHARED_SIZE_BYTES = 1,
    GPUK__CU_FUNC_CONST_SIZE_BYTES = 2,
    GPUK__CU_FUNC_LOCAL_SIZE_BYTES = 3,
    GPUK__CU_FUNC_NUM_REGS = 4,
    GPUK__CU_FUNC_PTX_VERSION = 5,
    GPUK__CU_FUNC_BINARY_VERSION = 6,
    GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    GPUK__CU_ERROR_INVALID_VALUE = 1,
    GPUK__CU_ERROR_NOT_READY = 600
};

/* ---- >>state ---- */
/* A loaded library: its handle and how its rows are resolved. */
typedef struct gpuk__lib_state {
    void* handle;              /* dlopen'd; NULL before a load and with a user resolver */
    int keep;                  /* the library's code ran (the driver: cuInit), it may have
                                  threads running it: never closed, at most left behind */
    int version;               /* what the probe reported */
    gpuk__pfn_get_proc_v1 get_proc_v1;
    gpuk__pfn_get_proc_v2 get_proc_v2;
    gpuk_get_proc_fn user_get_proc;
    void* user_get_proc_data;
} gpuk__lib_state;

/* How to find and check one run-time library, and where its entry points go. */
typedef struct gpuk__lib {
    const char* name;                /* in texts: "cannot load the NVIDIA driver '...'" */
    const char* kind;                /* "'...' is not a CUDA driver" */
    const char* const* sonames;      /* tried in order when no path is named; NULL-terminated */
    const char* env_path;            /* variable naming the path (secure_getenv); may be NULL */
    const char* probe_symbol;        /* exported function that proves it is the right library */
    int (*probe)(void* sym, int* out_version); /* calls it: 1 when it works */
    const gpuk__lib_row* rows;
    size_t num_rows;
    const gpuk__lib_feature* features;
    size_t num_features;
    void* table;                     /* where the entry points go (table_bytes long) */
    size_t table_bytes;
    gpuk__lib_state* state;
    int proc_address;                /* resolve through cuGetProcAddress: the driver alone */
    int missing_code;                /* no library, or not the right one */
    int too_old_code;                /* a required row missing */
    const char* hint;                /* for those failures; NULL -> gpuk__hint(code) */
} gpuk__lib;

typedef struct gpuk__state {
    int initialized;           /* atomic: 1 once the table is loaded and cuInit returned */
    int broken;                /* atomic: 0, the first sticky CUresult, or GPUK_ERR_FORKED */
    char broken_text[256];     /* the first fault, as reported then */
    int init_failed;           /* the last gpuk_init's failure; implicit inits do not retry it */
    char init_failed_text[512];
    int live_ctxs;
    unsigned int next_gen;     /* atomic: handle generations, process-wide so that a handle of
                                  one ctx does not match a slot of another */
    uint32_t features;
    int driver_version;
    gpuk_logger logger;        /* logger and log_level: under gpuk__log_lock */
    gpuk_log_level log_level;
    int log_limit;             /* atomic: the level logged up to, 0 without a logger */
    gpuk_allocator allocator;
    gpuk__lib_state driver_lib;
    gpuk__driver drv;
} gpuk__state;

/* Static storage: all zero before the first call; the lock needs its static initialiser. */
static gpuk__state gpuk__g;
static gpuk__mutex gpuk__lock = GPUK__MUTEX_INIT;       /* init, shutdown, ctx count */
static gpuk__mutex gpuk__fault_lock = GPUK__MUTEX_INIT; /* the first sticky fault; may be taken
                                                          while gpuk__lock is held (in init) */
static gpuk__mutex gpuk__log_lock = GPUK__MUTEX_INIT;   /* the logger; taken after the two above */
#define GPUK__DRV (gpuk__g.drv)

/* ---- >>result ---- */
static GPUK__TLS char gpuk__tls_error[512];

#define GPUK__CU_ERROR_NAMES(X) \
    X(1, INVALID_VALUE) X(2, OUT_OF_MEMORY) X(3, NOT_INITIALIZED) X(4, DEINITIALIZED) \
    X(5, PROFILER_DISABLED) X(6, PROFILER_NOT_INITIALIZED) X(7, PROFILER_ALREADY_STARTED) \
    X(8, PROFILER_ALREADY_STOPPED) X(34, STUB_LIBRARY) X(36, CALL_REQUIRES_NEWER_DRIVER) \
    X(46, DEVICE_UNAVAILABLE) X(100, NO_DEVICE) X(101, INVALID_DEVICE) \
    X(102, DEVICE_NOT_LICENSED) X(200, INVALID_IMAGE) X(201, INVALID_CONTEXT) \
    X(202, CONTEXT_ALREADY_CURRENT) X(205, MAP_FAILED) X(206, UNMAP_FAILED) \
    X(207, ARRAY_IS_MAPPED) X(208, ALREADY_MAPPED) X(209, NO_BINARY_FOR_GPU) \
    X(210, ALREADY_ACQUIRED) X(211, NOT_MAPPED) X(212, NOT_MAPPED_AS_ARRAY) \
    X(213, NOT_MAPPED_AS_POINTER) X(214, ECC_UNCORRECTABLE) X(215, UNSUPPORTED_LIMIT) \
    X(216, CONTEXT_ALREADY_IN_USE) X(217, PEER_ACCESS_UNSUPPORTED) X(218, INVALID_PTX) \
    X(219, INVALID_GRAPHICS_CONTEXT) X(220, NVLINK_UNCORRECTABLE) \
    X(221, JIT_COMPILER_NOT_FOUND) X(222, UNSUPPORTED_PTX_VERSION) \
    X(223, JIT_COMPILATION_DISABLED) X(224, UNSUPPORTED_EXEC_AFFINITY) \
    X(225, UNSUPPORTED_DEVSIDE_SYNC) X(226, CONTAINED) X(300, INVALID_SOURCE) \
    X(301, FILE_NOT_FOUND) X(302, SHARED_OBJECT_SYMBOL_NOT_FOUND) \
    X(303, SHARED_OBJECT_INIT_FAILED) X(304, OPERATING_SYSTEM) X(400, INVALID_HANDLE) \
    X(401, ILLEGAL_STATE) X(402, LOSSY_QUERY) X(500, NOT_FOUND) X(600, NOT_READY) \
    X(700, ILLEGAL_ADDRESS) X(701, LAUNCH_OUT_OF_RESOURCES) X(702, LAUNCH_TIMEOUT) \
    X(703, LAUNCH_INCOMPATIBLE_TEXTURING) X(704, PEER_ACCESS_ALREADY_ENABLED) \
    X(705, PEER_ACCESS_NOT_ENABLED) X(708, PRIMARY_CONTEXT_ACTIVE) \
    X(709, CONTEXT_IS_DESTROYED) X(710, ASSERT) X(711, TOO_MANY_PEERS) \
    X(712, HOST_MEMORY_ALREADY_REGISTERED) X(713, HOST_MEMORY_NOT_REGISTERED) \
    X(714, HARDWARE_STACK_ERROR) X(715, ILLEGAL_INSTRUCTION) X(716, MISALIGNED_ADDRESS) \
    X(717, INVALID_ADDRESS_SPACE) X(718, INVALID_PC) X(719, LAUNCH_FAILED) \
    X(720, COOPERATIVE_LAUNCH_TOO_LARGE) X(721, TENSOR_MEMORY_LEAK) X(800, NOT_PERMITTED) \
    X(801, NOT_SUPPORTED) X(802, SYSTEM_NOT_READY) X(803, SYSTEM_DRIVER_MISMATCH) \
    X(804, COMPAT_NOT_SUPPORTED_ON_DEVICE) X(805, MPS_CONNECTION_FAILED) \
    X(806, MPS_RPC_FAILURE) X(807, MPS_SERVER_NOT_READY) X(808, MPS_MAX_CLIENTS_REACHED) \
    X(809, MPS_MAX_CONNECTIONS_REACHED) X(810, MPS_CLIENT_TERMINATED) \
    X(811, CDP_NOT_SUPPORTED) X(812, CDP_VERSION_MISMATCH) \
    X(900, STREAM_CAPTURE_UNSUPPORTED) X(901, STREAM_CAPTURE_INVALIDATED) \
    X(902, STREAM_CAPTURE_MERGE) X(903, STREAM_CAPTURE_UNMATCHED) \
    X(904, STREAM_CAPTURE_UNJOINED) X(905, STREAM_CAPTURE_ISOLATION) \
    X(906, STREAM_CAPTURE_IMPLICIT) X(907, CAPTURED_EVENT) \
    X(908, STREAM_CAPTURE_WRONG_THREAD) X(909, TIMEOUT) X(910, GRAPH_EXEC_UPDATE_FAILURE) \
    X(911, EXTERNAL_DEVICE) X(912, INVALID_CLUSTER_SIZE) X(913, FUNCTION_NOT_LOADED) \
    X(914, INVALID_RESOURCE_TYPE) X(915, INVALID_RESOURCE_CONFIGURATION) \
    X(916, KEY_ROTATION) X(999, UNKNOWN)

GPUK__IMPL const char* gpuk_result_str(gpuk_result result) {
    /* Own table: the driver's cuGetErrorName crashes on a NULL out-pointer and knows nothing
       before it is loaded. */
    switch (result) {
    case GPUK_OK: return "GPUK_OK";
    case GPUK_ERR_NO_DRIVER: return "GPUK_ERR_NO_DRIVER";
    case GPUK_ERR_DRIVER_TOO_OLD: return "GPUK_ERR_DRIVER_TOO_OLD";
    case GPUK_ERR_INVALID_ARG: return "GPUK_ERR_INVALID_ARG";
    case GPUK_ERR_INVALID_HANDLE: return "GPUK_ERR_INVALID_HANDLE";
    case GPUK_ERR_POOL_FULL: return "GPUK_ERR_POOL_FULL";
    case GPUK_ERR_HOST_ALLOC: return "GPUK_ERR_HOST_ALLOC";
    case GPUK_ERR_FORKED: return "GPUK_ERR_FORKED";
    case GPUK_ERR_BUSY: return "GPUK_ERR_BUSY";
    case GPUK_ERR_LIMIT: return "GPUK_ERR_LIMIT";
    case GPUK_ERR_OUT_OF_BOUNDS: return "GPUK_ERR_OUT_OF_BOUNDS";
    case GPUK_RESULT_FORCE_32: break;
    }
    switch ((int)result) {
#define GPUK__X_NAME(code, name) case code: return "CUDA_ERROR_" #name;
        GPUK__CU_ERROR_NAMES(GPUK__X_NAME)
#undef GPUK__X_NAME
    default: break;
    }
    return (int)result > 0 ? "CUDA_ERROR_(unknown code)" : "GPUK_ERR_(unknown code)";
}

static const char* gpuk__hint(int code) {
    switch (code) {
    case GPUK_ERR_NO_DRIVER:
        return "install the NVIDIA driver (it provides libcuda.so.1 / nvcuda.dll); in a container "
               "run with the NVIDIA container runtime (--gpus all); or name the library in "
               "gpuk_desc.driver_path or GPUK_DRIVER_PATH";
    case GPUK_ERR_DRIVER_TOO_OLD: return "update the NVIDIA driver";
    case GPUK_ERR_FORKED:
        return "CUDA cannot be used in a child after fork(): initialise gpuk only in the child, "
               "or start the child with exec/posix_spawn";
    case GPUK_ERR_INVALID_HANDLE: return "the handle is zero, destroyed, or belongs to another ctx";
    case GPUK_ERR_POOL_FULL: return "raise the matching max_* in gpuk_ctx_desc";
    case 2: return "device memory is exhausted: free buffers or allocate less";
    case 3: return "the driver is not initialised (cuInit failed, or CUDA was used before fork())";
    case 34: return "this libcuda is the CUDA toolkit's stub, not a driver: use the real libcuda.so.1";
    case 100: return "no CUDA device is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES";
    case 201: return "no usable current context on this thread (raw driver calls: "
                     "gpuk_ctx_make_current first)";
    case 209: return "the cubin/fatbin has no code for this GPU's architecture: ship PTX or add it";
    case 218: return "the PTX is invalid or targets a newer GPU: read the JIT log";
    case 222: return "the driver is older than this PTX's .version: update the driver or lower "
                     "the PTX .version";
    case 223: return "PTX JIT is disabled (CUDA_DISABLE_JIT?): load a cubin instead";
    case 500: return "not found: a kernel name must be the .entry name (extern \"C\" in CUDA C++)";
    case 700: case 702: case 714: case 715: case 716: case 717: case 718: case 719:
        return "an earlier kernel faulted (errors are asynchronous); CUDA is unusable in this "
               "process from now on; run under compute-sanitizer to find the kernel";
    case 999: return "the driver failed: check nvidia-smi and the kernel log";
    default: return NULL;
    }
}

static int gpuk__is_sticky(int code) {
    return code == 700 || code == 702 || (code >= 714 && code <= 719);
}

/* A small formatter, so gpuk needs no stdio: %s %d %u %ld %lu %lld %llu %zu %x %llx %c %%. */
static size_t gpuk__vfmt(char* buf, size_t cap, size_t pos, const char* fmt, va_list ap) {
    char tmp[32];
    if (!cap) return 0;
    for (; *fmt && pos + 1 < cap; fmt++) {
        const char* s = tmp;
        int is_long = 0, is_size = 0, base = 10, neg = 0;
        unsigned long long u = 0;
        if (*fmt != '%') { buf[pos++] = *fmt; continue; }
        fmt++;
        while (*fmt == 'l') { is_long++; fmt++; }
        if (*fmt == 'z') { is_size = 1; fmt++; }
        switch (*fmt) {
        case 's': s = va_arg(ap, const char*); if (!s) s = "(null)"; break;
        case 'c': tmp[0] = (char)va_arg(ap, int); tmp[1] = 0; break;
        case 'd': {
            long long v = is_long >= 2 ? va_arg(ap, long long)
                        : is_long ? (long long)va_arg(ap, long) : (long long)va_arg(ap, int); /* NOLINT(bugprone-branch-clone): long is not int */
            neg = v < 0;
            u = neg ? (unsigned long long)(-(v + 1)) + 1u : (unsigned long long)v;
            s = NULL;
            break;
        }
        case 'u': case 'x':
            u = is_size ? (unsigned long long)va_arg(ap, size_t)
              : is_long >= 2 ? va_arg(ap, unsigned long long)
              : is_long ? (unsigned long long)va_arg(ap, unsigned long) /* NOLINT(bugprone-branch-clone) */
              : (unsigned long long)va_arg(ap, unsigned int);
            base = *fmt == 'x' ? 16 : 10;
            s = NULL;
            break;
        case '%': tmp[0] = '%'; tmp[1] = 0; break;
        default: tmp[0] = '?'; tmp[1] = 0; if (!*fmt) fmt--; break;
        }
        if (!s) {
            char* e = tmp + sizeof tmp - 1;
            *e = 0;
            do { *--e = "0123456789abcdef"[u % (unsigned)base]; u /= (unsigned)base; } while (u);
            if (neg) *--e = '-';
            s = e;
        }
        while (*s && pos + 1 < cap) buf[pos++] = *s++;
    }
    buf[pos] = 0;
    return pos;
}

static size_t gpuk__fmt(char* buf, size_t cap, size_t pos, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pos = gpuk__vfmt(buf, cap, pos, fmt, ap);
    va_end(ap);
    return pos;
}

GPUK__IMPL const char* gpuk_last_error(void) { return gpuk__tls_error; }

/* ---- >>log ---- */
/* Any thread may log while gpuk_init or gpuk_shutdown replaces the logger: the level check is
   one atomic load (debug builds check it on hot paths), the logger pair is copied under
   gpuk__log_lock and called outside it, so a logger may call gpuk. */
static int gpuk__log_wants(gpuk_log_level level) {
    return (int)level <= GPUK__ATOMIC_LOAD(&gpuk__g.log_limit);
}

static void gpuk__log(gpuk_log_level level, int code, const char* msg) {
    gpuk_logger logger;
    int limit;
    if (!gpuk__log_wants(level)) return;
    gpuk__mutex_lock(&gpuk__log_lock);
    logger = gpuk__g.logger;
    limit = GPUK__ATOMIC_LOAD(&gpuk__g.log_limit);
    gpuk__mutex_unlock(&gpuk__log_lock);
    if (logger.func && (int)level <= limit) logger.func(logger.user_data, level, code, msg);
}

static void gpuk__log_set(gpuk_logger logger, gpuk_log_level level) {
    gpuk__mutex_lock(&gpuk__log_lock);
    gpuk__g.logger = logger;
    gpuk__g.log_level = level;
    GPUK__ATOMIC_STORE(&gpuk__g.log_limit,
                       logger.func ? (int)(level ? level : GPUK_LOG_WARN) : 0);
    gpuk__mutex_unlock(&gpuk__log_lock);
}

#ifndef GPUK_NO_STDIO
GPUK__IMPL void gpuk_log_stderr(void* user_data, gpuk_log_level level, int code, const char* msg) {
    static const char* const names[] = { "log", "error", "warn", "info", "debug" };
    (void)user_data;
    (void)code;
    fprintf(stderr, "gpuk %s: %s\n", (unsigned)level < (unsigned)GPUK_LOG_NUM ? names[level] : "log", msg ? msg : "");
}
#endif

/* Records this thread's error text ("fn: detail (hint: ...)"), logs it, returns code. */
static gpuk_result gpuk__vfail(const char* fn, int code, const char* hint, const char* fmt,
                               va_list ap) {
    size_t pos = gpuk__fmt(gpuk__tls_error, sizeof gpuk__tls_error, 0, "%s: ", fn);
    pos = gpuk__vfmt(gpuk__tls_error, sizeof gpuk__tls_error, pos, fmt, ap);
    if (hint) gpuk__fmt(gpuk__tls_error, sizeof gpuk__tls_error, pos, " (hint: %s)", hint);
    gpuk__log(GPUK_LOG_ERROR, code, gpuk__tls_error);
    return (gpuk_result)code;
}

static gpuk_result gpuk__fail(const char* fn, int code, const char* fmt, ...) {
    gpuk_result r;
    va_list ap;
    va_start(ap, fmt);
    r = gpuk__vfail(fn, code, gpuk__hint(code), fmt, ap);
    va_end(ap);
    return r;
}

/* The same with the caller's hint (NULL: the code's own). */
static gpuk_result gpuk__fail_hint(const char* fn, int code, const char* hint, const char* fmt,
                                   ...) {
    gpuk_result r;
    va_list ap;
    va_start(ap, fmt);
    r = gpuk__vfail(fn, code, hint ? hint : gpuk__hint(code), fmt, ap);
    va_end(ap);
    return r;
}

/* A driver call failed: name it, and remember a sticky fault for the whole process. */
static gpuk_result gpuk__fail_cu(const char* fn, const char* cu_fn, gpuk__cu_result r,
                                 const char* detail) {
    int code = (int)r;
    gpuk__fail(fn, code, "%s: %s (%d)%s%s", cu_fn, gpuk_result_str((gpuk_result)code), code,
               detail ? ": " : "", detail ? detail : "");
    if (gpuk__is_sticky(code) && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        gpuk__mutex_lock(&gpuk__fault_lock);
        if (!gpuk__g.broken) {
            gpuk__fmt(gpuk__g.broken_text, sizeof gpuk__g.broken_text, 0, "%s: %s: %s (%d)", fn,
                      cu_fn, gpuk_result_str((gpuk_result)code), code);
            GPUK__ATOMIC_STORE(&gpuk__g.broken, code);
        }
        gpuk__mutex_unlock(&gpuk__fault_lock);
    }
    return (gpuk_result)code;
}

static gpuk_result gpuk__fail_broken(const char* fn) {
    int code = GPUK__ATOMIC_LOAD(&gpuk__g.broken);
    if (code == GPUK_ERR_FORKED)
        return gpuk__fail(fn, code, "this process is a fork() child of a process that used CUDA");
    return gpuk__fail(fn, code, "CUDA is unusable in this process since an earlier fault: %s",
                      gpuk__g.broken_text);
}

/* For driver calls whose failure gpuk tolerates (informative queries): a sticky fault is still
   recorded, anything else is ignored. Returns 1 when the call succeeded. */
static int gpuk__tolerate(const char* fn, const char* cu_fn, gpuk__cu_result r) {
    if (r && gpuk__is_sticky((int)r)) gpuk__fail_cu(fn, cu_fn, r, NULL);
    return r == 0;
}

/* Every call that reaches the driver starts with this: one load of a process-wide flag. */
#define GPUK__ALIVE(fn) \
    do { if (GPUK__UNLIKELY(GPUK__ATOMIC_LOAD(&gpuk__g.broken))) return gpuk__fail_broken(fn); } while (0)

#if !defined(_WIN32)
/* In the order init takes them. fork() thus waits for a gpuk_init in progress on another thread
   (so a logger or get_proc resolver must not fork while gpuk_init calls it). */
static void gpuk__atfork_prepare(void) {
    gpuk__mutex_lock(&gpuk__lock);
    gpuk__mutex_lock(&gpuk__fault_lock);
    gpuk__mutex_lock(&gpuk__log_lock);
}
static void gpuk__atfork_parent(void) {
    gpuk__mutex_unlock(&gpuk__log_lock);
    gpuk__mutex_unlock(&gpuk__fault_lock);
    gpuk__mutex_unlock(&gpuk__lock);
}
static void gpuk__atfork_child(void) {
    if (GPUK__ATOMIC_LOAD(&gpuk__g.initialized)) GPUK__ATOMIC_STORE(&gpuk__g.broken, (int)GPUK_ERR_FORKED);
    gpuk__atfork_parent(); /* the forking thread took them, and it is this one in the child */
}
#endif

/* ---- >>alloc ---- */
/* src (NULL: empty) into dst of cap bytes, cut to fit, always terminated. */
static void gpuk__copy_text(char* dst, size_t cap, const char* src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

static void* gpuk__alloc(size_t bytes) {
    void* p = gpuk__g.allocator.alloc_fn ? gpuk__g.allocator.alloc_fn(bytes, gpuk__g.allocator.user_data)
                                         : malloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

static void gpuk__free(void* p) {
    if (!p) return;
    if (gpuk__g.allocator.free_fn) gpuk__g.allocator.free_fn(p, gpuk__g.allocator.user_data);
    else free(p);
}

/* ---- >>init ---- */
/* ISO C has no cast from object to function pointer; dlsym's result is copied instead. */
static void gpuk__sym_to_fn(void* fn_var, size_t fn_bytes, void* sym) {
    GPUK_ASSERT(fn_bytes == sizeof sym);
    memcpy(fn_var, &sym, fn_bytes);
}

static void* gpuk__lib_resolve(const gpuk__lib* lib, const gpuk__lib_row* row) {
    const gpuk__lib_state* st = lib->state;
    void* fn = NULL;
    if (st->user_get_proc) return st->user_get_proc(row->symbol, row->version, st->user_get_proc_data);
    if (st->get_proc_v2) {
        int status = 0;
        if (st->get_proc_v2(row->symbol, &fn, row->version, GPUK__CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                            &status) != 0)
            fn = NULL;
        return fn;
    }
    if (st->get_proc_v1) {
        if (st->get_proc_v1(row->symbol, &fn, row->version,
                            GPUK__CU_GET_PROC_ADDRESS_LEGACY_STREAM) != 0)
            fn = NULL;
        return fn;
    }
    /* No resolver (drivers older than 11.3): the exported name carries the ABI (cuMemAlloc_v2). */
    return st->handle ? gpuk__lib_sym(st->handle, row->export_name) : NULL;
}

/* After a failed load: close the library unless its code ran (then it stays loaded, and the
   next load of the same library finds it again). Either way its table is cleared. */
static void gpuk__lib_forget(const gpuk__lib* lib) {
    gpuk__lib_state* st = lib->state;
    if (st->handle && !st->keep) {
        gpuk__lib_close(st->handle);
        st->handle = NULL;
    }
    st->get_proc_v1 = NULL;
    st->get_proc_v2 = NULL;
    memset(lib->table, 0, lib->table_bytes);
}

/* Opens the library named by path (else lib->env_path, else each of lib->sonames in turn) as
   lib->state->handle; *out_name is the name that opened. */
static gpuk_result gpuk__lib_open(const gpuk__lib* lib, const char* path, const char* fn,
                                  const char** out_name) {
    gpuk__lib_state* st = lib->state;
    char why[200], tried[300];
    size_t pos = 0;
    const char* const* name;
    void* h = NULL;
    why[0] = tried[0] = 0;
    if (!path && lib->env_path) path = gpuk__getenv(lib->env_path);
    if (path && *path) {
        h = gpuk__lib_open_path(path, why, sizeof why);
        if (!h)
            return gpuk__fail_hint(fn, lib->missing_code, lib->hint, "cannot load %s '%s': %s",
                                   lib->name, path, why);
    } else {
        for (name = lib->sonames; *name && !h; name++) {
            pos = gpuk__fmt(tried, sizeof tried, pos, "%s'%s'", pos ? ", " : "", *name);
            h = gpuk__lib_open_path(*name, why, sizeof why);
            path = *name;
        }
        if (!h && lib->sonames[0] && !lib->sonames[1])
            return gpuk__fail_hint(fn, lib->missing_code, lib->hint, "cannot load %s %s: %s",
                                   lib->name, tried, why);
        if (!h)
            return gpuk__fail_hint(fn, lib->missing_code, lib->hint, "cannot load %s (tried %s): %s",
                                   lib->name, tried, why);
    }
    if (h == st->handle) {
        gpuk__lib_close(h); /* kept from an earlier load: only the new reference goes */
    } else {
        /* Another library was kept: it stays loaded (its threads may run it), forgotten here. */
        if (st->handle && !st->keep) gpuk__lib_close(st->handle);
        st->handle = h;
        st->keep = 0;
    }
    *out_name = path;
    return GPUK_OK;
}

/* Loads one library: opens and probes it (unless a user resolver stands in for it), resolves
   every row into lib->table and ORs the feature bits of the optional rows found into
   *out_features. A failure names the library and what was tried, forgets what it opened, and
   leaves the table zero. */
static gpuk_result gpuk__lib_load(const gpuk__lib* lib, const char* path, gpuk_get_proc_fn get_proc,
                                  void* get_proc_data, const char* fn, uint32_t* out_features) {
    gpuk__lib_state* st = lib->state;
    size_t i;
    *out_features = 0;
    st->user_get_proc = get_proc;
    st->user_get_proc_data = get_proc_data;
    st->get_proc_v1 = NULL;
    st->get_proc_v2 = NULL;
    st->version = 0;
    memset(lib->table, 0, lib->table_bytes);
    if (!get_proc) {
        const char* name = NULL;
        gpuk_result r = gpuk__lib_open(lib, path, fn, &name);
        if (r) return r;
        if (lib->probe_symbol) {
            void* sym = gpuk__lib_sym(st->handle, lib->probe_symbol);
            if (!sym || !lib->probe(sym, &st->version)) {
                gpuk__lib_forget(lib);
                return gpuk__fail_hint(fn, lib->missing_code, lib->hint, "'%s' is not %s (no "
                                       "working %s)", name, lib->kind, lib->probe_symbol);
            }
        }
        /* cuGetProcAddress (11.3+) resolves each row at a fixed ABI version, so header remaps
           like CUDA 13's cuCtxCreate_v4 can never change what gpuk calls. */
        if (lib->proc_address && st->version >= 12000)
            gpuk__sym_to_fn(&st->get_proc_v2, sizeof st->get_proc_v2,
                            gpuk__lib_sym(st->handle, "cuGetProcAddress_v2"));
        if (lib->proc_address && !st->get_proc_v2 && st->version >= 11030)
            gpuk__sym_to_fn(&st->get_proc_v1, sizeof st->get_proc_v1,
                            gpuk__lib_sym(st->handle, "cuGetProcAddress"));
        if (st->get_proc_v1 || st->get_proc_v2) *out_features |= GPUK_FEATURE_PROC_ADDRESS;
    }
    for (i = 0; i < lib->num_rows; i++) {
        const gpuk__lib_row* row = &lib->rows[i];
        void* p = gpuk__lib_resolve(lib, row);
        memcpy((char*)lib->table + row->offset, &p, sizeof p);
        if (!p && row->required) {
            gpuk__lib_forget(lib);
            *out_features = 0;
            return gpuk__fail_hint(fn, lib->too_old_code, lib->hint, "%s has no %s (ABI of CUDA "
                                   "%d.%d); gpuk needs it", lib->name, row->symbol,
                                   row->version / 1000, row->version % 1000 / 10);
        }
    }
    for (i = 0; i < lib->num_features; i++) {
        void* p;
        memcpy(&p, (const char*)lib->table + lib->features[i].offset, sizeof p);
        if (p) *out_features |= lib->features[i].bit;
    }
    return GPUK_OK;
}

/* The driver's probe: cuDriverGetVersion, exported by every driver under that name. */
static int gpuk__driver_probe(void* sym, int* out_version) {
    gpuk__pfn_cuDriverGetVersion get_version;
    gpuk__sym_to_fn(&get_version, sizeof get_version, sym);
    return get_version(out_version) == 0;
}

static const char* const gpuk__driver_sonames[] = { GPUK__DEFAULT_DRIVER, NULL };

static const gpuk__lib gpuk__driver_lib = {
    "the NVIDIA driver", "a CUDA driver", gpuk__driver_sonames, "GPUK_DRIVER_PATH",
    "cuDriverGetVersion", gpuk__driver_probe,
    gpuk__driver_rows, sizeof gpuk__driver_rows / sizeof gpuk__driver_rows[0],
    gpuk__driver_features, sizeof gpuk__driver_features / sizeof gpuk__driver_features[0],
    &gpuk__g.drv, sizeof gpuk__g.drv, &gpuk__g.driver_lib,
    1, GPUK_ERR_NO_DRIVER, GPUK_ERR_DRIVER_TOO_OLD, NULL
};

static gpuk_result gpuk__load_driver(const gpuk_desc* desc) {
    static const char fn[] = "gpuk_init";
    uint32_t features = 0;
    int version = 0;
    gpuk__cu_result r;
    gpuk_result res = gpuk__lib_load(&gpuk__driver_lib, desc->driver_path, desc->get_proc,
                                     desc->get_proc_user_data, fn, &features);
    gpuk__g.features = features;
    if (res) return res;
    r = GPUK__DRV.cuDriverGetVersion(&version);
    if (r) {
        gpuk__lib_forget(&gpuk__driver_lib);
        return gpuk__fail_cu(fn, "cuDriverGetVersion", r, NULL);
    }
    gpuk__g.driver_version = version;
    if (version < 10000) {
        gpuk__lib_forget(&gpuk__driver_lib);
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "driver supports CUDA %d.%d; gpuk needs 10.0 "
                          "or newer", version / 1000, version % 1000 / 10);
    }
    /* cuInit starts the driver's own threads, which run its code from then on: from here the
       library is never closed, whatever cuInit returns. */
    gpuk__g.driver_lib.keep = 1;
    r = GPUK__DRV.cuInit(0);
    if (r) return gpuk__fail_cu(fn, "cuInit", r, NULL);
    return GPUK_OK;
}

static int gpuk__desc_canaries_bad(uint32_t start, uint32_t end) {
    return GPUK_DEBUG && (start != 0 || end != 0);
}

GPUK__IMPL gpuk_result gpuk_init(const gpuk_desc* desc) {
    static const char fn[] = "gpuk_init";
    gpuk_desc d;
    gpuk_result r;
    if (GPUK__ATOMIC_LOAD(&gpuk__g.initialized)) {
        GPUK__ALIVE(fn);
        return GPUK_OK;
    }
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc canaries are not zero (desc not "
                          "zero-initialised?)");
    if (!d.allocator.alloc_fn != !d.allocator.free_fn)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.allocator needs both alloc_fn and "
                          "free_fn, or neither");
    if ((unsigned)d.log_level >= (unsigned)GPUK_LOG_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.log_level %d is out of range",
                          (int)d.log_level);
    gpuk__register_fork_handlers();
    gpuk__mutex_lock(&gpuk__lock);
    if (gpuk__g.initialized) {
        gpuk__mutex_unlock(&gpuk__lock);
        return GPUK_OK;
    }
    gpuk__log_set(d.logger, d.log_level);
    gpuk__g.allocator = d.allocator;
    r = gpuk__load_driver(&d);
    gpuk__g.init_failed = (int)r;
    if (r == GPUK_OK) {
        GPUK__ATOMIC_STORE(&gpuk__g.initialized, 1);
    } else {
        memset(&gpuk__g.drv, 0, sizeof gpuk__g.drv);
        gpuk__copy_text(gpuk__g.init_failed_text, sizeof gpuk__g.init_failed_text, gpuk__tls_error);
    }
    gpuk__mutex_unlock(&gpuk__lock);
    return r;
}

/* A call that needs the driver before any gpuk_init initialises with defaults; after a failed
   init it returns that failure without trying again (a driver without a device answers every
   cuInit the same way, and the real one leaks a little each time): gpuk_init retries. */
static gpuk_result gpuk__ready_slow(const char* fn) {
    int failed;
    gpuk__register_fork_handlers();
    gpuk__mutex_lock(&gpuk__lock);
    failed = gpuk__g.init_failed;
    if (failed) /* the saved text carries its own hint: not gpuk__fail, which would add another */
        gpuk__fmt(gpuk__tls_error, sizeof gpuk__tls_error, 0, "%s: gpuk_init failed earlier (call it again to retry): %s",
                  fn, gpuk__g.init_failed_text);
    gpuk__mutex_unlock(&gpuk__lock);
    if (!failed) return gpuk_init(NULL);
    gpuk__log(GPUK_LOG_ERROR, failed, gpuk__tls_error);
    return (gpuk_result)failed;
}

#define GPUK__READY(fn) \
    do { \
        GPUK__ALIVE(fn); \
        if (GPUK__UNLIKELY(!GPUK__ATOMIC_LOAD(&gpuk__g.initialized))) { \
            gpuk_result ready_r_ = gpuk__ready_slow(fn); \
            if (ready_r_ != GPUK_OK) return ready_r_; \
        } \
    } while (0)

GPUK__IMPL gpuk_result gpuk_shutdown(void) {
    gpuk_logger logger;
    gpuk__register_fork_handlers();
    gpuk__mutex_lock(&gpuk__lock);
    if (gpuk__g.live_ctxs) {
        int n = gpuk__g.live_ctxs;
        gpuk__mutex_unlock(&gpuk__lock);
        return gpuk__fail("gpuk_shutdown", GPUK_ERR_BUSY, "%d ctx still alive: destroy them first", n);
    }
    GPUK__ATOMIC_STORE(&gpuk__g.initialized, 0);
    gpuk__g.init_failed = 0;
    /* A fork child stays a fork child; any other fault is forgotten: a new init asks the driver. */
    if (gpuk__g.broken != GPUK_ERR_FORKED) GPUK__ATOMIC_STORE(&gpuk__g.broken, 0);
    memset(&gpuk__g.drv, 0, sizeof gpuk__g.drv);
    gpuk__g.features = 0;
    gpuk__g.driver_version = 0;
    memset(&logger, 0, sizeof logger);
    gpuk__log_set(logger, GPUK_LOG_DEFAULT);
    memset(&gpuk__g.allocator, 0, sizeof gpuk__g.allocator);
    gpuk__mutex_unlock(&gpuk__lock);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_driver_version(int* out_version) {
    if (!out_version) return gpuk__fail("gpuk_driver_version", GPUK_ERR_INVALID_ARG, "out_version is NULL");
    *out_version = 0;
    GPUK__READY("gpuk_driver_version");
    *out_version = gpuk__g.driver_version;
    return GPUK_OK;
}

GPUK__IMPL uint32_t gpuk_features(void) {
    return GPUK__ATOMIC_LOAD(&gpuk__g.initialized) ? gpuk__g.features : 0u;
}

GPUK__IMPL void* gpuk_driver_symbol(const char* symbol, int abi_version) {
    gpuk__lib_row row;
    if (!symbol || !GPUK__ATOMIC_LOAD(&gpuk__g.initialized)) return NULL;
    row.symbol = symbol;
    row.export_name = symbol;
    row.version = abi_version;
    row.required = 0;
    row.offset = 0;
    return gpuk__lib_resolve(&gpuk__driver_lib, &row);
}

/* ---- >>device ---- */
static gpuk_result gpuk__device_get(const char* fn, int device, gpuk__cu_device* out) {
    int count = 0;
    gpuk__cu_result r = GPUK__DRV.cuDeviceGetCount(&count);
    if (r) return gpuk__fail_cu(fn, "cuDeviceGetCount", r, NULL);
    if (device < 0 || device >= count)
        return gpuk__fail(fn, count ? GPUK_ERR_INVALID_ARG : 100, "device %d does not exist "
                          "(%d CUDA devices)", device, count);
    r = GPUK__DRV.cuDeviceGet(out, device);
    if (r) return gpuk__fail_cu(fn, "cuDeviceGet", r, NULL);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_count(int* out_count) {
    static const char fn[] = "gpuk_device_count";
    gpuk__cu_result r;
    if (!out_count) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_count is NULL");
    *out_count = 0;
    GPUK__READY(fn);
    r = GPUK__DRV.cuDeviceGetCount(out_count);
    if (r) {
        *out_count = 0;
        return gpuk__fail_cu(fn, "cuDeviceGetCount", r, NULL);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_attribute(int device, int cu_attribute, int* out_value) {
    static const char fn[] = "gpuk_device_attribute";
    gpuk__cu_device dev;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!out_value) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_value is NULL");
    *out_value = 0;
    GPUK__READY(fn);
    if ((r = gpuk__device_get(fn, device, &dev)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuDeviceGetAttribute(out_value, (unsigned)cu_attribute, dev);
    if (cr) {
        *out_value = 0;
        return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr, NULL);
    }
    return GPUK_OK;
}

/* gpuk_device_query's body; fn names the public call errors are reported under. */
static gpuk_result gpuk__device_query(const char* fn, int device, gpuk_device_info* out_info) {
    /* CU_DEVICE_ATTRIBUTE_* numbers, paired with where they land. */
    struct { unsigned attr; size_t offset; } const attrs[] = {
        { 75, offsetof(gpuk_device_info, cc_major) }, { 76, offsetof(gpuk_device_info, cc_minor) },
        { 16, offsetof(gpuk_device_info, sm_count) }, { 13, offsetof(gpuk_device_info, clock_khz) },
        { 36, offsetof(gpuk_device_info, mem_clock_khz) },
        { 37, offsetof(gpuk_device_info, mem_bus_bits) }, { 38, offsetof(gpuk_device_info, l2_bytes) },
        { 8, offsetof(gpuk_device_info, shared_per_block) },
        { 97, offsetof(gpuk_device_info, shared_per_block_optin) },
        { 81, offsetof(gpuk_device_info, shared_per_sm) },
        { 12, offsetof(gpuk_device_info, regs_per_block) },
        { 1, offsetof(gpuk_device_info, max_threads_per_block) },
        { 39, offsetof(gpuk_device_info, max_threads_per_sm) },
        { 10, offsetof(gpuk_device_info, warp_size) },
        { 2, offsetof(gpuk_device_info, max_block) },
        { 3, offsetof(gpuk_device_info, max_block) + sizeof(int) },
        { 4, offsetof(gpuk_device_info, max_block) + 2 * sizeof(int) },
        { 5, offsetof(gpuk_device_info, max_grid) },
        { 6, offsetof(gpuk_device_info, max_grid) + sizeof(int) },
        { 7, offsetof(gpuk_device_info, max_grid) + 2 * sizeof(int) },
        { 18, offsetof(gpuk_device_info, integrated) },
        { 40, offsetof(gpuk_device_info, async_engines) },
    };
    gpuk__cu_device dev;
    gpuk__cu_result cr;
    gpuk_result r;
    size_t i;
    if (!out_info) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_info is NULL");
    memset(out_info, 0, sizeof *out_info);
    GPUK__READY(fn);
    if ((r = gpuk__device_get(fn, device, &dev)) != GPUK_OK) return r;
    out_info->ordinal = device;
    out_info->driver_version = gpuk__g.driver_version;
    if ((cr = GPUK__DRV.cuDeviceGetName(out_info->name, (int)sizeof out_info->name - 1, dev)) != 0) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_cu(fn, "cuDeviceGetName", cr, NULL);
    }
    if ((cr = GPUK__DRV.cuDeviceTotalMem(&out_info->total_bytes, dev)) != 0) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_cu(fn, "cuDeviceTotalMem", cr, NULL);
    }
    for (i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        if ((cr = GPUK__DRV.cuDeviceGetAttribute(&v, attrs[i].attr, dev)) != 0) {
            memset(out_info, 0, sizeof *out_info);
            return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr, NULL);
        }
        memcpy((char*)out_info + attrs[i].offset, &v, sizeof v);
    }
    /* Bus id is informative only; a driver that cannot tell leaves it empty. */
    if (!gpuk__tolerate(fn, "cuDeviceGetPCIBusId",
                        GPUK__DRV.cuDeviceGetPCIBusId(out_info->pci_bus_id, (int)sizeof out_info->pci_bus_id - 1, dev)))
        out_info->pci_bus_id[0] = 0;
    if (GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_broken(fn);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_query(int device, gpuk_device_info* out_info) {
    return gpuk__device_query("gpuk_device_query", device, out_info);
}

/* ---- >>pool ---- */
/* Handle ids: low 16 bits the slot (0 reserved), high 16 a process-wide generation. A slot
   holds the id it was created with; lookup = one compare. */
#define GPUK__SLOT_BITS 16u
#define GPUK__SLOT_MASK 0xFFFFu

typedef struct gpuk__pool {
    uint32_t size;        /* slots including the reserved slot 0 */
    uint32_t free_count;
    uint32_t* free_slots;
} gpuk__pool;

typedef struct gpuk__buffer_slot {
    uint32_t id;
    bool owned;
    gpuk_devptr ptr;
    size_t bytes;
    char label[24];
} gpuk__buffer_slot;

typedef struct gpuk__pinned_slot {
    uint32_t id;
    bool registered;
    void* ptr;
    size_t bytes;
    char label[24];
} gpuk__pinned_slot;

/* Device scratch for the built-in reductions and scans, one per stream (kernels on one
   stream run in order, so they can share it): reductions use the first GPUK__SCRATCH_SCAN
   bytes, scans the rest. Zeroed when allocated; the kernels leave their counters at zero. */
typedef struct gpuk__scratch {
    gpuk_devptr ptr;
    size_t bytes;
    size_t scan_tiles; /* tiles the scan status words have room for; their values follow */
    uint32_t epoch;    /* scan launches on this scratch, so each launch's flags differ */
} gpuk__scratch;

typedef struct gpuk__stream_slot {
    uint32_t id;
    bool owned;
    gpuk__cu_stream cu;
    gpuk__scratch scratch;
} gpuk__stream_slot;

typedef struct gpuk__event_slot {
    uint32_t id;
    bool timing;
    gpuk__cu_event cu;
} gpuk__event_slot;

typedef struct gpuk__module_slot {
    uint32_t id;
    gpuk__cu_module cu;
    char label[24];
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

#if !defined(GPUK_NO_KERNELS)
/* GPUK_GENERATED_BEGIN(kernel_ids) */
/* GPUK_GENERATED_END(kernel_ids) */
#endif

struct gpuk_ctx {
    gpuk__cu_context cu;
    gpuk__cu_device dev;
    gpuk__cu_stream default_stream;
    gpuk__mutex lock;
    gpuk_device_info info;
    gpuk__pool buffer_pool, pinned_pool, stream_pool, event_pool, module_pool, kernel_pool;
    gpuk__buffer_slot* buffers;
    gpuk__pinned_slot* pinned;
    gpuk__stream_slot* streams;
    gpuk__event_slot* events;
    gpuk__module_slot* modules;
    gpuk__kernel_slot* kernels;
#if !defined(GPUK_NO_KERNELS)
    gpuk__mutex kernel_lock;    /* built-in loading, and scratch use up to the launch */
    gpuk__scratch scratch;      /* of the ctx default stream */
    gpuk__cu_module builtin_module[GPUK__KERNEL_COUNT];
    gpuk__cu_function builtin_function[GPUK__KERNEL_COUNT];
#endif
};

static uint32_t gpuk__new_id(uint32_t slot) {
    uint32_t gen = GPUK__ATOMIC_ADD(&gpuk__g.next_gen, 1u) % 0xFFFFu + 1u;
    return (gen << GPUK__SLOT_BITS) | slot;
}

/* Slot index for id in a pool of ids stored at stride bytes, or 0 when id is not live there. */
static uint32_t gpuk__pool_find(const gpuk__pool* pool, const void* slots, size_t stride, uint32_t id) {
    uint32_t i = id & GPUK__SLOT_MASK;
    uint32_t live;
    if (i == 0 || i >= pool->size) return 0;
    memcpy(&live, (const char*)slots + i * stride, sizeof live);
    return live == id ? i : 0;
}

#define GPUK__DEFINE_LOOKUP(kind, slot_type, array, pool) \
    static slot_type* gpuk__##kind##_lookup(const gpuk_ctx* ctx, uint32_t id) { \
        uint32_t i = gpuk__pool_find(&ctx->pool, ctx->array, sizeof(slot_type), id); \
        return i ? &ctx->array[i] : NULL; \
    }
GPUK__DEFINE_LOOKUP(buffer, gpuk__buffer_slot, buffers, buffer_pool)
GPUK__DEFINE_LOOKUP(pinned, gpuk__pinned_slot, pinned, pinned_pool)
GPUK__DEFINE_LOOKUP(stream, gpuk__stream_slot, streams, stream_pool)
GPUK__DEFINE_LOOKUP(event, gpuk__event_slot, events, event_pool)
GPUK__DEFINE_LOOKUP(module, gpuk__module_slot, modules, module_pool)
GPUK__DEFINE_LOOKUP(kernel, gpuk__kernel_slot, kernels, kernel_pool)
#undef GPUK__DEFINE_LOOKUP

/* Takes a free slot (call with ctx->lock held); 0 when the pool is full. */
static uint32_t gpuk__pool_take(gpuk__pool* pool) {
    return pool->free_count ? pool->free_slots[--pool->free_count] : 0;
}

static void gpuk__pool_give(gpuk__pool* pool, uint32_t slot) {
    GPUK_ASSERT(pool->free_count + 1 < pool->size);
    pool->free_slots[pool->free_count++] = slot;
}

/* A free slot of pool, taken under the ctx lock; 0 when the pool is full. */
static uint32_t gpuk__slot_take(gpuk_ctx* ctx, gpuk__pool* pool) {
    uint32_t slot;
    gpuk__mutex_lock(&ctx->lock);
    slot = gpuk__pool_take(pool);
    gpuk__mutex_unlock(&ctx->lock);
    return slot;
}

/* Gives back a slot taken by gpuk__slot_take whose object was never published. */
static void gpuk__slot_give(gpuk_ctx* ctx, gpuk__pool* pool, uint32_t slot) {
    gpuk__mutex_lock(&ctx->lock);
    gpuk__pool_give(pool, slot);
    gpuk__mutex_unlock(&ctx->lock);
}

/* Frees id's slot under the ctx lock after copying it to out (the slot may be reused at once).
   Returns 0 when id is not live. */
static uint32_t gpuk__pool_release(gpuk_ctx* ctx, gpuk__pool* pool, void* slots, size_t stride,
                                   uint32_t id, void* out) {
    uint32_t i;
    gpuk__mutex_lock(&ctx->lock);
    i = gpuk__pool_find(pool, slots, stride, id);
    if (i) {
        char* slot = (char*)slots + i * stride;
        memcpy(out, slot, stride);
        memset(slot, 0, sizeof(uint32_t));
        gpuk__pool_give(pool, i);
    }
    gpuk__mutex_unlock(&ctx->lock);
    return i;
}

/* ---- >>validate ---- */
#define GPUK__CTX_CHECK(fn, ctx) \
    do { if (GPUK__UNLIKELY(!(ctx))) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "ctx is NULL"); } while (0)

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

/* off + bytes <= cap without overflow */
static int gpuk__in_bounds(size_t off, size_t bytes, size_t cap) {
    return off <= cap && bytes <= cap - off;
}

/* ---- >>ctx ---- */
static gpuk_result gpuk__pool_init(const char* fn, gpuk__pool* pool, void** slots, size_t stride,
                                   uint32_t want, uint32_t dflt, const char* field) {
    uint32_t n = want ? want : dflt, i;
    if (n > 65535u)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc.%s = %u exceeds 65535", field, n);
    pool->size = n + 1u;
    *slots = gpuk__alloc(stride * pool->size);
    pool->free_slots = (uint32_t*)gpuk__alloc(sizeof(uint32_t) * pool->size);
    if (!*slots || !pool->free_slots)
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the %s pool (%u slots)", field, n);
    /* Hand out low slots first: ids stay small and readable in logs. */
    for (i = 0; i < n; i++) pool->free_slots[i] = n - i;
    pool->free_count = n;
    return GPUK_OK;
}

static void gpuk__ctx_free_host(gpuk_ctx* ctx) {
    gpuk__free(ctx->buffers); gpuk__free(ctx->buffer_pool.free_slots);
    gpuk__free(ctx->pinned); gpuk__free(ctx->pinned_pool.free_slots);
    gpuk__free(ctx->streams); gpuk__free(ctx->stream_pool.free_slots);
    gpuk__free(ctx->events); gpuk__free(ctx->event_pool.free_slots);
    gpuk__free(ctx->modules); gpuk__free(ctx->module_pool.free_slots);
    gpuk__free(ctx->kernels); gpuk__free(ctx->kernel_pool.free_slots);
    gpuk__free(ctx);
}

GPUK__IMPL gpuk_result gpuk_ctx_create(const gpuk_ctx_desc* desc, gpuk_ctx** out_ctx) {
    static const char fn[] = "gpuk_ctx_create";
    gpuk_ctx_desc d;
    gpuk_ctx* ctx;
    gpuk_result r;
    gpuk__cu_result cr;
    if (!out_ctx) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ctx is NULL");
    *out_ctx = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc canaries are not zero");
    GPUK__READY(fn);
    ctx = (gpuk_ctx*)gpuk__alloc(sizeof *ctx);
    if (!ctx) return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the ctx");
#define GPUK__POOL(pool, arr, field, dflt) \
    if ((r = gpuk__pool_init(fn, &ctx->pool, (void**)&ctx->arr, sizeof *ctx->arr, d.field, dflt, #field)) != GPUK_OK) \
        goto fail_host;
    GPUK__POOL(buffer_pool, buffers, max_buffers, 4096)
    GPUK__POOL(pinned_pool, pinned, max_pinned, 256)
    GPUK__POOL(stream_pool, streams, max_streams, 256)
    GPUK__POOL(event_pool, events, max_events, 1024)
    GPUK__POOL(module_pool, modules, max_modules, 64)
    GPUK__POOL(kernel_pool, kernels, max_kernels, 1024)
#undef GPUK__POOL
    if ((r = gpuk__device_query(fn, d.device, &ctx->info)) != GPUK_OK) goto fail_host;
    if ((r = gpuk__device_get(fn, d.device, &ctx->dev)) != GPUK_OK) goto fail_host;
    /* The primary context is the one the runtime API and other libraries share; creating our
       own (cuCtxCreate) would split memory and streams from theirs. */
    if ((cr = GPUK__DRV.cuDevicePrimaryCtxRetain(&ctx->cu, ctx->dev)) != 0) {
        r = gpuk__fail_cu(fn, "cuDevicePrimaryCtxRetain", cr, NULL);
        goto fail_host;
    }
    if ((r = gpuk__enter_slow(fn, ctx)) != GPUK_OK) goto fail_retained;
    if ((cr = GPUK__DRV.cuStreamCreateWithPriority(&ctx->default_stream, GPUK__CU_STREAM_NON_BLOCKING, 0)) != 0) {
        r = gpuk__fail_cu(fn, "cuStreamCreateWithPriority", cr, "the ctx default stream");
        goto fail_retained;
    }
    gpuk__mutex_init(&ctx->lock);
#if !defined(GPUK_NO_KERNELS)
    gpuk__mutex_init(&ctx->kernel_lock);
#endif
    gpuk__mutex_lock(&gpuk__lock);
    gpuk__g.live_ctxs++;
    gpuk__mutex_unlock(&gpuk__lock);
    *out_ctx = ctx;
    return GPUK_OK;
fail_retained:
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuDevicePrimaryCtxRelease(ctx->dev);
fail_host:
    gpuk__ctx_free_host(ctx);
    return r;
}

/* One teardown step: goes on past ordinary failures, keeping the first, but makes no driver
   call once a sticky fault is known (the driver may block or fail on every call then). */
#define GPUK__KEEP_FIRST(first, call_name, expr) \
    do { if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken)) { gpuk__cu_result kf_ = (expr); \
         if (kf_) { gpuk_result kr_ = gpuk__fail_cu(fn, call_name, kf_, NULL); \
                    if ((first) == GPUK_OK) (first) = kr_; } } } while (0)

GPUK__IMPL gpuk_result gpuk_ctx_destroy(gpuk_ctx* ctx) {
    static const char fn[] = "gpuk_ctx_destroy";
    gpuk_result first = GPUK_OK;
    uint32_t i;
    GPUK__CTX_CHECK(fn, ctx);
    /* After a sticky fault or in a fork child the driver must not be called (it may block or
       fail); host memory is freed all the same. */
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) && (first = gpuk__enter(fn, ctx)) == GPUK_OK) {
        gpuk__cu_context cur = NULL;
        GPUK__KEEP_FIRST(first, "cuCtxSynchronize", GPUK__DRV.cuCtxSynchronize());
        for (i = 1; i < ctx->module_pool.size; i++)
            if (ctx->modules[i].id) GPUK__KEEP_FIRST(first, "cuModuleUnload", GPUK__DRV.cuModuleUnload(ctx->modules[i].cu));
#if !defined(GPUK_NO_KERNELS)
        for (i = 0; i < GPUK__KERNEL_COUNT; i++)
            if (ctx->builtin_module[i]) GPUK__KEEP_FIRST(first, "cuModuleUnload", GPUK__DRV.cuModuleUnload(ctx->builtin_module[i]));
        if (ctx->scratch.ptr) GPUK__KEEP_FIRST(first, "cuMemFree", GPUK__DRV.cuMemFree(ctx->scratch.ptr));
        for (i = 1; i < ctx->stream_pool.size; i++)
            if (ctx->streams[i].id && ctx->streams[i].scratch.ptr)
                GPUK__KEEP_FIRST(first, "cuMemFree", GPUK__DRV.cuMemFree(ctx->streams[i].scratch.ptr));
#endif
        for (i = 1; i < ctx->event_pool.size; i++)
            if (ctx->events[i].id) GPUK__KEEP_FIRST(first, "cuEventDestroy", GPUK__DRV.cuEventDestroy(ctx->events[i].cu));
        for (i = 1; i < ctx->stream_pool.size; i++)
            if (ctx->streams[i].id && ctx->streams[i].owned)
                GPUK__KEEP_FIRST(first, "cuStreamDestroy", GPUK__DRV.cuStreamDestroy(ctx->streams[i].cu));
        for (i = 1; i < ctx->pinned_pool.size; i++) {
            gpuk__pinned_slot* p = &ctx->pinned[i];
            if (!p->id || !p->ptr) continue;
            if (p->registered) GPUK__KEEP_FIRST(first, "cuMemHostUnregister", GPUK__DRV.cuMemHostUnregister(p->ptr));
            else GPUK__KEEP_FIRST(first, "cuMemFreeHost", GPUK__DRV.cuMemFreeHost(p->ptr));
        }
        for (i = 1; i < ctx->buffer_pool.size; i++)
            if (ctx->buffers[i].id && ctx->buffers[i].owned && ctx->buffers[i].ptr)
                GPUK__KEEP_FIRST(first, "cuMemFree", GPUK__DRV.cuMemFree(ctx->buffers[i].ptr));
        GPUK__KEEP_FIRST(first, "cuStreamDestroy", GPUK__DRV.cuStreamDestroy(ctx->default_stream));
        /* Leave no thread pointing at a primary context it no longer holds. */
        if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) && GPUK__DRV.cuCtxGetCurrent(&cur) == 0 && cur == ctx->cu)
            GPUK__KEEP_FIRST(first, "cuCtxSetCurrent", GPUK__DRV.cuCtxSetCurrent(NULL));
        GPUK__KEEP_FIRST(first, "cuDevicePrimaryCtxRelease", GPUK__DRV.cuDevicePrimaryCtxRelease(ctx->dev));
    }
    if (GPUK__ATOMIC_LOAD(&gpuk__g.broken) && first == GPUK_OK) first = gpuk__fail_broken(fn);
    gpuk__mutex_fini(&ctx->lock);
#if !defined(GPUK_NO_KERNELS)
    gpuk__mutex_fini(&ctx->kernel_lock);
#endif
    gpuk__ctx_free_host(ctx);
    gpuk__mutex_lock(&gpuk__lock);
    gpuk__g.live_ctxs--;
    gpuk__mutex_unlock(&gpuk__lock);
    return first;
}

GPUK__IMPL gpuk_result gpuk_ctx_sync(gpuk_ctx* ctx) {
    static const char fn[] = "gpuk_ctx_sync";
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuCtxSynchronize();
    return cr ? gpuk__fail_cu(fn, "cuCtxSynchronize", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_ctx_mem_info(gpuk_ctx* ctx, size_t* out_free, size_t* out_total) {
    static const char fn[] = "gpuk_ctx_mem_info";
    size_t f = 0, t = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (out_free) *out_free = 0;
    if (out_total) *out_total = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!out_free && !out_total) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_free and out_total are NULL");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuMemGetInfo(&f, &t)) != 0) return gpuk__fail_cu(fn, "cuMemGetInfo", cr, NULL);
    if (out_free) *out_free = f;
    if (out_total) *out_total = t;
    return GPUK_OK;
}

GPUK__IMPL const gpuk_device_info* gpuk_ctx_device_info(const gpuk_ctx* ctx) {
    return ctx ? &ctx->info : NULL;
}

GPUK__IMPL gpuk_result gpuk_ctx_make_current(gpuk_ctx* ctx) {
    static const char fn[] = "gpuk_ctx_make_current";
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    return gpuk__enter(fn, ctx);
}

/* ---- >>buffer ---- */
GPUK__IMPL gpuk_result gpuk_buffer_create(gpuk_ctx* ctx, const gpuk_buffer_desc* desc,
                                          gpuk_buffer* out_buffer) {
    static const char fn[] = "gpuk_buffer_create";
    gpuk__buffer_slot* s;
    gpuk_devptr ptr = 0;
    uint32_t slot;
    gpuk_result r;
    if (!out_buffer) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_buffer is NULL");
    out_buffer->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (gpuk__desc_canaries_bad(desc->_start_canary, desc->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_buffer_desc canaries are not zero");
    if (desc->wrap && !desc->bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "wrapping device pointer 0x%llx needs desc.bytes", desc->wrap);
    slot = gpuk__slot_take(ctx, &ctx->buffer_pool);
    if (!slot) return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u buffer slots are in use", ctx->buffer_pool.size - 1);
    if (desc->wrap) {
        ptr = desc->wrap;
    } else if (desc->bytes) {
        gpuk__cu_result cr;
        if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) goto fail;
        if ((cr = GPUK__DRV.cuMemAlloc(&ptr, desc->bytes)) != 0) {
            char what[64];
            gpuk__fmt(what, sizeof what, 0, "%zu bytes for '%s'", desc->bytes, desc->label ? desc->label : "");
            r = gpuk__fail_cu(fn, "cuMemAlloc", cr, what);
            goto fail;
        }
    }
    s = &ctx->buffers[slot];
    s->ptr = ptr;
    s->bytes = desc->bytes;
    s->owned = !desc->wrap;
    gpuk__copy_text(s->label, sizeof s->label, desc->label);
    s->id = gpuk__new_id(slot);
    out_buffer->id = s->id;
    return GPUK_OK;
fail:
    gpuk__slot_give(ctx, &ctx->buffer_pool, slot);
    return r;
}

GPUK__IMPL gpuk_result gpuk_buffer_destroy(gpuk_ctx* ctx, gpuk_buffer buffer) {
    static const char fn[] = "gpuk_buffer_destroy";
    gpuk__buffer_slot s;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__pool_release(ctx, &ctx->buffer_pool, ctx->buffers, sizeof s, buffer.id, &s))
        return gpuk__bad_handle(fn, "buffer", buffer.id);
    if (!s.owned || !s.ptr) return GPUK_OK;
    GPUK__ALIVE(fn);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuMemFree(s.ptr);
    return cr ? gpuk__fail_cu(fn, "cuMemFree", cr, NULL) : GPUK_OK;
}

GPUK__IMPL size_t gpuk_buffer_size(const gpuk_ctx* ctx, gpuk_buffer buffer) {
    const gpuk__buffer_slot* s = ctx ? gpuk__buffer_lookup(ctx, buffer.id) : NULL;
    return s ? s->bytes : 0;
}

GPUK__IMPL gpuk_devptr gpuk_buffer_devptr(const gpuk_ctx* ctx, gpuk_buffer buffer) {
    const gpuk__buffer_slot* s = ctx ? gpuk__buffer_lookup(ctx, buffer.id) : NULL;
    return s ? s->ptr : 0;
}

static gpuk_result gpuk__bounds_fail(const char* fn, const gpuk__buffer_slot* s, size_t off, size_t bytes) {
    return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS, "offset %zu + %zu bytes exceeds buffer '%s' of %zu bytes",
                      off, bytes, s->label, s->bytes);
}

/* In debug builds, report an "async" copy that the driver will make synchronous because the
   host memory is pageable. Costs a cuPointerGetAttribute, so only when the log would show it. */
static void gpuk__check_pageable(const char* fn, const void* host) {
#if GPUK_DEBUG
    unsigned int type = 0;
    if (!gpuk__log_wants(GPUK_LOG_DEBUG)) return;
    if (!gpuk__tolerate(fn, "cuPointerGetAttribute",
                        GPUK__DRV.cuPointerGetAttribute(&type, GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
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

typedef enum gpuk__copy_dir { GPUK__HTOD, GPUK__DTOH, GPUK__DTOD } gpuk__copy_dir;

/* Every buffer copy: validate, then one async driver call on stream; wait when sync. */
static gpuk_result gpuk__copy(const char* fn, gpuk_ctx* ctx, gpuk_stream stream, int sync,
                              gpuk__copy_dir dir, uint32_t dst_id, size_t dst_off, void* host,
                              uint32_t src_id, size_t src_off, size_t bytes) {
    const gpuk__buffer_slot* d = NULL;
    const gpuk__buffer_slot* s = NULL;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    const char* cu_fn;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (dir != GPUK__DTOH && !(d = gpuk__buffer_lookup(ctx, dst_id))) return gpuk__bad_handle(fn, "dst buffer", dst_id);
    if (dir != GPUK__HTOD && !(s = gpuk__buffer_lookup(ctx, src_id))) return gpuk__bad_handle(fn, "src buffer", src_id);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if (d && !gpuk__in_bounds(dst_off, bytes, d->bytes)) return gpuk__bounds_fail(fn, d, dst_off, bytes);
    if (s && !gpuk__in_bounds(src_off, bytes, s->bytes)) return gpuk__bounds_fail(fn, s, src_off, bytes);
    if (bytes == 0) return GPUK_OK;
    if (dir != GPUK__DTOD && !host)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is NULL", dir == GPUK__HTOD ? "src" : "dst");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (dir == GPUK__HTOD) {
        cu_fn = "cuMemcpyHtoDAsync";
        if (!sync) gpuk__check_pageable(fn, host);
        cr = GPUK__DRV.cuMemcpyHtoDAsync(d->ptr + dst_off, host, bytes, cs);
    } else if (dir == GPUK__DTOH) {
        cu_fn = "cuMemcpyDtoHAsync";
        if (!sync) gpuk__check_pageable(fn, host);
        cr = GPUK__DRV.cuMemcpyDtoHAsync(host, s->ptr + src_off, bytes, cs);
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
    return gpuk__copy("gpuk_buffer_write", ctx, gpuk__default_stream, 1, GPUK__HTOD, dst.id,
                      dst_offset, (void*)(uintptr_t)src, 0, 0, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_read(gpuk_ctx* ctx, gpuk_buffer src, size_t src_offset,
                                        void* dst, size_t bytes) {
    return gpuk__copy("gpuk_buffer_read", ctx, gpuk__default_stream, 1, GPUK__DTOH, 0, 0, dst,
                      src.id, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_copy(gpuk_ctx* ctx, gpuk_buffer dst, size_t dst_offset,
                                        gpuk_buffer src, size_t src_offset, size_t bytes) {
    return gpuk__copy("gpuk_buffer_copy", ctx, gpuk__default_stream, 1, GPUK__DTOD, dst.id,
                      dst_offset, NULL, src.id, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_write_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                               size_t dst_offset, const void* src, size_t bytes) {
    return gpuk__copy("gpuk_buffer_write_async", ctx, stream, 0, GPUK__HTOD, dst.id, dst_offset,
                      (void*)(uintptr_t)src, 0, 0, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_read_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer src,
                                              size_t src_offset, void* dst, size_t bytes) {
    return gpuk__copy("gpuk_buffer_read_async", ctx, stream, 0, GPUK__DTOH, 0, 0, dst, src.id,
                      src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_copy_async(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                              size_t dst_offset, gpuk_buffer src,
                                              size_t src_offset, size_t bytes) {
    return gpuk__copy("gpuk_buffer_copy_async", ctx, stream, 0, GPUK__DTOD, dst.id, dst_offset,
                      NULL, src.id, src_offset, bytes);
}

GPUK__IMPL gpuk_result gpuk_buffer_memset(gpuk_ctx* ctx, gpuk_stream stream, gpuk_buffer dst,
                                          size_t byte_offset, uint32_t value, uint32_t elem_bytes,
                                          size_t count) {
    static const char fn[] = "gpuk_buffer_memset";
    const gpuk__buffer_slot* d;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(d = gpuk__buffer_lookup(ctx, dst.id))) return gpuk__bad_handle(fn, "dst buffer", dst.id);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "elem_bytes is %u; it must be 1, 2 or 4", elem_bytes);
    if (elem_bytes < 4 && value >> (8 * elem_bytes))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "value 0x%x does not fit in %u bytes", value, elem_bytes);
    if (count > (size_t)-1 / elem_bytes || !gpuk__in_bounds(byte_offset, count * elem_bytes, d->bytes))
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS, "offset %zu + %zu elements of %u bytes "
                          "exceeds buffer '%s' of %zu bytes", byte_offset, count, elem_bytes, d->label, d->bytes);
    if ((d->ptr + byte_offset) % elem_bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "address 0x%llx is not aligned to %u bytes",
                          d->ptr + byte_offset, elem_bytes);
    if (count == 0) return GPUK_OK;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (elem_bytes == 1) cr = GPUK__DRV.cuMemsetD8Async(d->ptr + byte_offset, (unsigned char)value, count, cs);
    else if (elem_bytes == 2) cr = GPUK__DRV.cuMemsetD16Async(d->ptr + byte_offset, (unsigned short)value, count, cs);
    else cr = GPUK__DRV.cuMemsetD32Async(d->ptr + byte_offset, value, count, cs);
    return cr ? gpuk__fail_cu(fn, "cuMemsetD*Async", cr, NULL) : GPUK_OK;
}

/* ---- >>pinned ---- */
GPUK__IMPL gpuk_result gpuk_pinned_create(gpuk_ctx* ctx, const gpuk_pinned_desc* desc,
                                          gpuk_pinned* out_pinned) {
    static const char fn[] = "gpuk_pinned_create";
    gpuk__pinned_slot* s;
    void* ptr = NULL;
    uint32_t slot;
    gpuk_result r = GPUK_OK;
    if (!out_pinned) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_pinned is NULL");
    out_pinned->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (gpuk__desc_canaries_bad(desc->_start_canary, desc->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_pinned_desc canaries are not zero");
    if (desc->host_ptr && !desc->bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "registering host memory needs desc.bytes");
    slot = gpuk__slot_take(ctx, &ctx->pinned_pool);
    if (!slot) return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u pinned slots are in use", ctx->pinned_pool.size - 1);
    if (desc->bytes) {
        gpuk__cu_result cr;
        if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) goto fail;
        /* PORTABLE: the memory counts as pinned for every context, not just this one. */
        if (desc->host_ptr) {
            ptr = desc->host_ptr;
            cr = GPUK__DRV.cuMemHostRegister(ptr, desc->bytes, GPUK__CU_MEMHOSTREGISTER_PORTABLE);
            if (cr) { r = gpuk__fail_cu(fn, "cuMemHostRegister", cr, NULL); goto fail; }
        } else {
            cr = GPUK__DRV.cuMemHostAlloc(&ptr, desc->bytes, GPUK__CU_MEMHOSTALLOC_PORTABLE);
            if (cr) { r = gpuk__fail_cu(fn, "cuMemHostAlloc", cr, NULL); goto fail; }
        }
    }
    s = &ctx->pinned[slot];
    s->ptr = ptr;
    s->bytes = desc->bytes;
    s->registered = desc->host_ptr != NULL;
    gpuk__copy_text(s->label, sizeof s->label, desc->label);
    s->id = gpuk__new_id(slot);
    out_pinned->id = s->id;
    return GPUK_OK;
fail:
    gpuk__slot_give(ctx, &ctx->pinned_pool, slot);
    return r;
}

GPUK__IMPL gpuk_result gpuk_pinned_destroy(gpuk_ctx* ctx, gpuk_pinned pinned) {
    static const char fn[] = "gpuk_pinned_destroy";
    gpuk__pinned_slot s;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__pool_release(ctx, &ctx->pinned_pool, ctx->pinned, sizeof s, pinned.id, &s))
        return gpuk__bad_handle(fn, "pinned", pinned.id);
    if (!s.ptr) return GPUK_OK;
    GPUK__ALIVE(fn);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = s.registered ? GPUK__DRV.cuMemHostUnregister(s.ptr) : GPUK__DRV.cuMemFreeHost(s.ptr);
    return cr ? gpuk__fail_cu(fn, s.registered ? "cuMemHostUnregister" : "cuMemFreeHost", cr, NULL) : GPUK_OK;
}

GPUK__IMPL void* gpuk_pinned_ptr(const gpuk_ctx* ctx, gpuk_pinned pinned) {
    const gpuk__pinned_slot* s = ctx ? gpuk__pinned_lookup(ctx, pinned.id) : NULL;
    return s ? s->ptr : NULL;
}

GPUK__IMPL size_t gpuk_pinned_size(const gpuk_ctx* ctx, gpuk_pinned pinned) {
    const gpuk__pinned_slot* s = ctx ? gpuk__pinned_lookup(ctx, pinned.id) : NULL;
    return s ? s->bytes : 0;
}

/* ---- >>stream ---- */
GPUK__IMPL gpuk_result gpuk_stream_create(gpuk_ctx* ctx, const gpuk_stream_desc* desc,
                                          gpuk_stream* out_stream) {
    static const char fn[] = "gpuk_stream_create";
    gpuk_stream_desc d;
    gpuk__stream_slot* s;
    gpuk__cu_stream cu = NULL;
    uint32_t slot;
    gpuk_result r = GPUK_OK;
    if (!out_stream) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_stream is NULL");
    out_stream->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_stream_desc canaries are not zero");
    slot = gpuk__slot_take(ctx, &ctx->stream_pool);
    if (!slot) return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u stream slots are in use", ctx->stream_pool.size - 1);
    if (d.wrap) {
        cu = (gpuk__cu_stream)d.wrap;
    } else {
        gpuk__cu_result cr;
        if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) goto fail;
        cr = GPUK__DRV.cuStreamCreateWithPriority(&cu, d.blocking ? 0u : (unsigned)GPUK__CU_STREAM_NON_BLOCKING,
                                                  d.priority);
        if (cr) { r = gpuk__fail_cu(fn, "cuStreamCreateWithPriority", cr, NULL); goto fail; }
    }
    s = &ctx->streams[slot];
    s->cu = cu;
    s->owned = d.wrap == NULL;
    memset(&s->scratch, 0, sizeof s->scratch);
    s->id = gpuk__new_id(slot);
    out_stream->id = s->id;
    return GPUK_OK;
fail:
    gpuk__slot_give(ctx, &ctx->stream_pool, slot);
    return r;
}

GPUK__IMPL gpuk_result gpuk_stream_destroy(gpuk_ctx* ctx, gpuk_stream stream) {
    static const char fn[] = "gpuk_stream_destroy";
    gpuk__stream_slot s;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__pool_release(ctx, &ctx->stream_pool, ctx->streams, sizeof s, stream.id, &s))
        return gpuk__bad_handle(fn, "stream", stream.id);
    if (!s.owned && !s.scratch.ptr) return GPUK_OK;
    GPUK__ALIVE(fn);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    /* cuMemFree waits for the kernels still using the scratch */
    if (s.scratch.ptr && (cr = GPUK__DRV.cuMemFree(s.scratch.ptr)) != 0) {
        r = gpuk__fail_cu(fn, "cuMemFree", cr, "stream scratch");
        if (GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return r; /* a sticky fault: no more driver calls */
    }
    if (s.owned && (cr = GPUK__DRV.cuStreamDestroy(s.cu)) != 0) return gpuk__fail_cu(fn, "cuStreamDestroy", cr, NULL);
    return r;
}

/* The common head of stream calls: alive, ctx, stream handle. No driver call yet, so that a
   bad handle found after it never costs one. */
#define GPUK__STREAM_HEAD(fn, ctx, stream, cs) \
    do { gpuk_result h_; GPUK__ALIVE(fn); GPUK__CTX_CHECK(fn, ctx); \
         if ((h_ = gpuk__stream_resolve(fn, ctx, stream, &(cs))) != GPUK_OK) return h_; } while (0)
#define GPUK__ENTER(fn, ctx) \
    do { gpuk_result e_ = gpuk__enter(fn, ctx); if (e_ != GPUK_OK) return e_; } while (0)

GPUK__IMPL gpuk_result gpuk_stream_sync(gpuk_ctx* ctx, gpuk_stream stream) {
    static const char fn[] = "gpuk_stream_sync";
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuStreamSynchronize(cs);
    return cr ? gpuk__fail_cu(fn, "cuStreamSynchronize", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_stream_query(gpuk_ctx* ctx, gpuk_stream stream, bool* out_done) {
    static const char fn[] = "gpuk_stream_query";
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

GPUK__IMPL gpuk_result gpuk_stream_wait(gpuk_ctx* ctx, gpuk_stream stream, gpuk_event event) {
    static const char fn[] = "gpuk_stream_wait";
    const gpuk__event_slot* e;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (!(e = gpuk__event_lookup(ctx, event.id))) return gpuk__bad_handle(fn, "event", event.id);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuStreamWaitEvent(cs, e->cu, 0);
    return cr ? gpuk__fail_cu(fn, "cuStreamWaitEvent", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_stream_host_func(gpuk_ctx* ctx, gpuk_stream stream,
                                             void (*fn_ptr)(void* user_data), void* user_data) {
    static const char fn[] = "gpuk_stream_host_func";
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

GPUK__IMPL gpuk_result gpuk_stream_priority_range(gpuk_ctx* ctx, int* out_least, int* out_greatest) {
    static const char fn[] = "gpuk_stream_priority_range";
    int least = 0, greatest = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (out_least) *out_least = 0;
    if (out_greatest) *out_greatest = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!out_least || !out_greatest) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "an out pointer is NULL");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuCtxGetStreamPriorityRange(&least, &greatest)) != 0)
        return gpuk__fail_cu(fn, "cuCtxGetStreamPriorityRange", cr, NULL);
    *out_least = least;
    *out_greatest = greatest;
    return GPUK_OK;
}

/* ---- >>event ---- */
GPUK__IMPL gpuk_result gpuk_event_create(gpuk_ctx* ctx, const gpuk_event_desc* desc,
                                         gpuk_event* out_event) {
    static const char fn[] = "gpuk_event_create";
    gpuk_event_desc d;
    gpuk__event_slot* s;
    gpuk__cu_event cu = NULL;
    gpuk__cu_result cr;
    uint32_t slot;
    gpuk_result r;
    if (!out_event) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_event is NULL");
    out_event->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_event_desc canaries are not zero");
    slot = gpuk__slot_take(ctx, &ctx->event_pool);
    if (!slot) return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u event slots are in use", ctx->event_pool.size - 1);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) goto fail;
    cr = GPUK__DRV.cuEventCreate(&cu, (d.no_timing ? (unsigned)GPUK__CU_EVENT_DISABLE_TIMING : 0u) |
                                          (d.blocking_sync ? (unsigned)GPUK__CU_EVENT_BLOCKING_SYNC : 0u));
    if (cr) { r = gpuk__fail_cu(fn, "cuEventCreate", cr, NULL); goto fail; }
    s = &ctx->events[slot];
    s->cu = cu;
    s->timing = !d.no_timing;
    s->id = gpuk__new_id(slot);
    out_event->id = s->id;
    return GPUK_OK;
fail:
    gpuk__slot_give(ctx, &ctx->event_pool, slot);
    return r;
}

GPUK__IMPL gpuk_result gpuk_event_destroy(gpuk_ctx* ctx, gpuk_event event) {
    static const char fn[] = "gpuk_event_destroy";
    gpuk__event_slot s;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__pool_release(ctx, &ctx->event_pool, ctx->events, sizeof s, event.id, &s))
        return gpuk__bad_handle(fn, "event", event.id);
    GPUK__ALIVE(fn);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuEventDestroy(s.cu);
    return cr ? gpuk__fail_cu(fn, "cuEventDestroy", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_event_record(gpuk_ctx* ctx, gpuk_event event, gpuk_stream stream) {
    static const char fn[] = "gpuk_event_record";
    const gpuk__event_slot* e;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (!(e = gpuk__event_lookup(ctx, event.id))) return gpuk__bad_handle(fn, "event", event.id);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuEventRecord(e->cu, cs);
    return cr ? gpuk__fail_cu(fn, "cuEventRecord", cr, NULL) : GPUK_OK;
}

/* The common head of event calls: alive, ctx, event handle. */
#define GPUK__EVENT_HEAD(fn, ctx, event, e) \
    do { GPUK__ALIVE(fn); GPUK__CTX_CHECK(fn, ctx); \
         if (!((e) = gpuk__event_lookup(ctx, (event).id))) return gpuk__bad_handle(fn, "event", (event).id); } while (0)

GPUK__IMPL gpuk_result gpuk_event_sync(gpuk_ctx* ctx, gpuk_event event) {
    static const char fn[] = "gpuk_event_sync";
    const gpuk__event_slot* e;
    gpuk__cu_result cr;
    GPUK__EVENT_HEAD(fn, ctx, event, e);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuEventSynchronize(e->cu);
    return cr ? gpuk__fail_cu(fn, "cuEventSynchronize", cr, NULL) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_event_query(gpuk_ctx* ctx, gpuk_event event, bool* out_done) {
    static const char fn[] = "gpuk_event_query";
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
    static const char fn[] = "gpuk_event_elapsed_ms";
    const gpuk__event_slot* a;
    const gpuk__event_slot* b;
    gpuk__cu_result cr;
    float ms = 0.0f;
    if (!out_ms) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ms is NULL");
    *out_ms = 0.0f;
    GPUK__EVENT_HEAD(fn, ctx, start, a);
    if (!(b = gpuk__event_lookup(ctx, stop.id))) return gpuk__bad_handle(fn, "stop event", stop.id);
    if (!a->timing || !b->timing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "an event was created with no_timing");
    GPUK__ENTER(fn, ctx);
    if ((cr = GPUK__DRV.cuEventElapsedTime(&ms, a->cu, b->cu)) != 0)
        return gpuk__fail_cu(fn, "cuEventElapsedTime", cr, NULL);
    *out_ms = ms;
    return GPUK_OK;
}

/* ---- >>timer ---- */
GPUK__IMPL gpuk_result gpuk_timer_create(gpuk_ctx* ctx, gpuk_timer* out_timer) {
    gpuk_result r;
    if (!out_timer) return gpuk__fail("gpuk_timer_create", GPUK_ERR_INVALID_ARG, "out_timer is NULL");
    memset(out_timer, 0, sizeof *out_timer);
    if ((r = gpuk_event_create(ctx, NULL, &out_timer->start)) != GPUK_OK) return r;
    if ((r = gpuk_event_create(ctx, NULL, &out_timer->stop)) != GPUK_OK) {
        gpuk_event_destroy(ctx, out_timer->start);
        out_timer->start.id = 0;
    }
    return r;
}

GPUK__IMPL gpuk_result gpuk_timer_destroy(gpuk_ctx* ctx, gpuk_timer* timer) {
    gpuk_result a, b;
    if (!timer) return gpuk__fail("gpuk_timer_destroy", GPUK_ERR_INVALID_ARG, "timer is NULL");
    a = gpuk_event_destroy(ctx, timer->start);
    b = gpuk_event_destroy(ctx, timer->stop);
    memset(timer, 0, sizeof *timer);
    return a != GPUK_OK ? a : b;
}

/* A timer's events, checked under the timer call's own name before the event calls run. */
static gpuk_result gpuk__timer_check(const char* fn, const gpuk_ctx* ctx, const gpuk_timer* t) {
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__event_lookup(ctx, t->start.id)) return gpuk__bad_handle(fn, "timer start event", t->start.id);
    if (!gpuk__event_lookup(ctx, t->stop.id)) return gpuk__bad_handle(fn, "timer stop event", t->stop.id);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_timer_start(gpuk_ctx* ctx, gpuk_timer* timer, gpuk_stream stream) {
    gpuk_result r;
    if (!timer) return gpuk__fail("gpuk_timer_start", GPUK_ERR_INVALID_ARG, "timer is NULL");
    if ((r = gpuk__timer_check("gpuk_timer_start", ctx, timer)) != GPUK_OK) return r;
    timer->stream = stream;
    return gpuk_event_record(ctx, timer->start, stream);
}

GPUK__IMPL gpuk_result gpuk_timer_stop(gpuk_ctx* ctx, gpuk_timer* timer, float* out_ms) {
    gpuk_result r;
    if (out_ms) *out_ms = 0.0f;
    if (!timer || !out_ms) return gpuk__fail("gpuk_timer_stop", GPUK_ERR_INVALID_ARG, "timer or out_ms is NULL");
    if ((r = gpuk__timer_check("gpuk_timer_stop", ctx, timer)) != GPUK_OK) return r;
    if ((r = gpuk_event_record(ctx, timer->stop, timer->stream)) != GPUK_OK) return r;
    if ((r = gpuk_event_sync(ctx, timer->stop)) != GPUK_OK) return r;
    return gpuk_event_elapsed_ms(ctx, timer->start, timer->stop, out_ms);
}

/* ---- >>module ---- */
/* PTX ISA version -> first CUDA version whose driver loads it (PTX ISA release notes). */
static const struct { int ptx, cuda; } gpuk__ptx_cuda[] = {
    { 60, 9000 }, { 61, 9010 }, { 62, 9020 }, { 63, 10000 }, { 64, 10010 }, { 65, 10020 },
    { 70, 11000 }, { 71, 11010 }, { 72, 11020 }, { 73, 11030 }, { 74, 11040 }, { 75, 11050 },
    { 76, 11060 }, { 77, 11070 }, { 78, 11080 }, { 80, 12000 }, { 81, 12010 }, { 82, 12020 },
    { 83, 12030 }, { 84, 12040 }, { 85, 12050 }, { 86, 12070 }, { 87, 12080 }, { 88, 12090 },
    { 90, 13000 },
};

/* CUDA version a driver needs for PTX ISA major.minor; 0 = older than the table (any driver
   gpuk runs on), -1 = newer than the table (let the driver judge). */
static int gpuk__ptx_needs_cuda(int major, int minor) {
    int v = major * 10 + minor;
    size_t i, n = sizeof gpuk__ptx_cuda / sizeof gpuk__ptx_cuda[0];
    if (v < gpuk__ptx_cuda[0].ptx) return 0;
    for (i = 0; i < n; i++)
        if (gpuk__ptx_cuda[i].ptx >= v) return gpuk__ptx_cuda[i].cuda;
    return -1;
}

/* Reads the .version and .target directives at the head of PTX text, within len bytes.
   Returns 1 with the numbers (target_sm 0 if none found), 0 if there is no valid .version. */
static int gpuk__ptx_header(const char* text, size_t len, int* major, int* minor, int* target_sm) {
    size_t i = 0;
    *major = *minor = *target_sm = 0;
    while (i < len && text[i]) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') { i++; continue; }
        if (c == '/' && i + 1 < len && text[i + 1] == '/') {
            while (i < len && text[i] && text[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < len && text[i + 1] == '*') {
            i += 2;
            while (i + 1 < len && text[i] && !(text[i] == '*' && text[i + 1] == '/')) i++;
            i += 2;
            continue;
        }
        if (len - i > 8 && memcmp(text + i, ".version", 8) == 0 && !*major) {
            int a = 0, b = 0, digits = 0;
            i += 8;
            while (i < len && (text[i] == ' ' || text[i] == '\t')) i++;
            while (i < len && text[i] >= '0' && text[i] <= '9' && a < 1000) { a = a * 10 + (text[i++] - '0'); digits++; }
            if (!digits || i >= len || text[i] != '.') return 0;
            i++;
            digits = 0;
            while (i < len && text[i] >= '0' && text[i] <= '9' && b < 1000) { b = b * 10 + (text[i++] - '0'); digits++; }
            /* PTX ISA versions are major.minor with a one-digit minor; anything else is not a
               version gpuk can compare (7.10 would read as 8.0) */
            if (!digits || a > 99 || b > 9) return 0;
            *major = a;
            *minor = b;
            continue;
        }
        if (len - i > 7 && memcmp(text + i, ".target", 7) == 0 && *major) {
            int sm = 0;
            i += 7;
            while (i < len && (text[i] == ' ' || text[i] == '\t')) i++;
            if (len - i > 3 && memcmp(text + i, "sm_", 3) == 0) {
                i += 3;
                while (i < len && text[i] >= '0' && text[i] <= '9' && sm < 10000) sm = sm * 10 + (text[i++] - '0');
                *target_sm = sm;
            }
            return 1;
        }
        if (*major) return 1; /* .version seen, the next directive is not .target */
        return 0;              /* anything else before .version: not PTX as the ISA defines it */
    }
    return *major != 0;
}

/* The first line of a JIT log that says something, for gpuk_last_error. */
static void gpuk__first_lines(char* dst, size_t cap, const char* log) {
    size_t n = 0;
    while (*log && n + 1 < cap) {
        char c = *log++;
        if (c == '\n' || c == '\r') c = ' ';
        dst[n++] = c;
    }
    while (n && dst[n - 1] == ' ') n--;
    dst[n] = 0;
}

/* Loads an image as a module: PTX is first checked against the driver (.version) and the
   device (.target), and copied when it does not end in a NUL; the JIT logs are always asked
   for, and the error log's first line goes into the error text. */
static gpuk_result gpuk__jit_load(const char* fn, gpuk_ctx* ctx, const unsigned char* bytes, size_t len,
                                  size_t given_bytes, int is_ptx, const char* label, gpuk__cu_module* out) {
    unsigned int opts[4];
    void* vals[4];
    char info_log[2048], error_log[4096], detail[320];
    char* text_copy = NULL;
    const void* image = bytes;
    gpuk__cu_result cr;
    gpuk_result r;
    *out = NULL;
    if (is_ptx) {
        int major, minor, sm, need;
        if (len == 0) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': the PTX text is empty", label);
        if (!gpuk__ptx_header((const char*)bytes, len, &major, &minor, &sm))
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': no valid .version directive "
                              "(major.minor) at the head of the PTX text (not PTX?)", label);
        need = gpuk__ptx_needs_cuda(major, minor);
        if (need > gpuk__g.driver_version || (need < 0 && gpuk__g.driver_version <= 13000))
            return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "module '%s': PTX .version %d.%d needs a "
                              "driver for CUDA %d.%d or newer; this driver supports CUDA %d.%d", label,
                              major, minor, need > 0 ? need / 1000 : 13, need > 0 ? need % 1000 / 10 : 1,
                              gpuk__g.driver_version / 1000, gpuk__g.driver_version % 1000 / 10);
        if (sm > ctx->info.cc_major * 10 + ctx->info.cc_minor)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': PTX .target sm_%d is newer than "
                              "the device (sm_%d%d)", label, sm, ctx->info.cc_major, ctx->info.cc_minor);
        /* The driver reads PTX up to a NUL: copy text that does not end in one. */
        if (given_bytes && bytes[len - 1] != 0) {
            text_copy = (char*)gpuk__alloc(len + 1);
            if (!text_copy) return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot copy %zu bytes of PTX", len);
            memcpy(text_copy, bytes, len);
            text_copy[len] = 0;
            image = text_copy;
        }
    }
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) {
        gpuk__free(text_copy);
        return r;
    }
    info_log[0] = error_log[0] = 0;
    opts[0] = GPUK__CU_JIT_INFO_LOG_BUFFER; vals[0] = info_log;
    opts[1] = GPUK__CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES; vals[1] = (void*)(uintptr_t)sizeof info_log;
    opts[2] = GPUK__CU_JIT_ERROR_LOG_BUFFER; vals[2] = error_log;
    opts[3] = GPUK__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES; vals[3] = (void*)(uintptr_t)sizeof error_log;
    cr = GPUK__DRV.cuModuleLoadDataEx(out, image, 4, opts, vals);
    gpuk__free(text_copy);
    info_log[sizeof info_log - 1] = error_log[sizeof error_log - 1] = 0;
    if (cr) {
        size_t pos = gpuk__fmt(detail, sizeof detail, 0, "module '%s': ", label);
        gpuk__first_lines(detail + pos, sizeof detail - pos, error_log[0] ? error_log : "(empty JIT log)");
        *out = NULL;
        r = gpuk__fail_cu(fn, "cuModuleLoadDataEx", cr, detail);
        if (error_log[0]) gpuk__log(GPUK_LOG_ERROR, (int)cr, error_log);
        return r;
    }
    if (info_log[0]) gpuk__log(GPUK_LOG_DEBUG, 0, info_log);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_module_load(gpuk_ctx* ctx, const gpuk_module_desc* desc,
                                        gpuk_module* out_module) {
    static const char fn[] = "gpuk_module_load";
    const unsigned char* bytes;
    gpuk_image_kind kind;
    size_t len;
    gpuk__module_slot* s;
    gpuk__cu_module cu = NULL;
    gpuk_result r;
    uint32_t slot;
    const char* label;
    if (!out_module) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_module is NULL");
    out_module->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (gpuk__desc_canaries_bad(desc->_start_canary, desc->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_module_desc canaries are not zero");
    if (!desc->image.ptr) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.image.ptr is NULL");
    if ((unsigned)desc->kind >= (unsigned)GPUK_IMAGE_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.kind %d is out of range", (int)desc->kind);
    label = desc->label ? desc->label : "";
    bytes = (const unsigned char*)desc->image.ptr;
    len = desc->image.bytes ? desc->image.bytes : strlen((const char*)bytes);
    kind = desc->kind;
    if (kind == GPUK_IMAGE_DEFAULT) {
        if (len >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F') kind = GPUK_IMAGE_CUBIN;
        /* fatbin (0xBA55ED50) or its fatbinc wrapper (0x466243B1), little endian */
        else if (len >= 4 && ((bytes[0] == 0x50 && bytes[1] == 0xED && bytes[2] == 0x55 && bytes[3] == 0xBA) ||
                              (bytes[0] == 0xB1 && bytes[1] == 0x43 && bytes[2] == 0x62 && bytes[3] == 0x46)))
            kind = GPUK_IMAGE_FATBIN;
        else kind = GPUK_IMAGE_PTX;
    }
    if (kind == GPUK_IMAGE_PTX && len == 0)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': the PTX text is empty", label);
    slot = gpuk__slot_take(ctx, &ctx->module_pool);
    if (!slot) return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u module slots are in use", ctx->module_pool.size - 1);
    r = gpuk__jit_load(fn, ctx, bytes, len, desc->image.bytes, kind == GPUK_IMAGE_PTX, label, &cu);
    if (r != GPUK_OK) {
        gpuk__slot_give(ctx, &ctx->module_pool, slot);
        return r;
    }
    s = &ctx->modules[slot];
    s->cu = cu;
    gpuk__copy_text(s->label, sizeof s->label, label);
    s->id = gpuk__new_id(slot);
    out_module->id = s->id;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_module_unload(gpuk_ctx* ctx, gpuk_module module) {
    static const char fn[] = "gpuk_module_unload";
    gpuk__module_slot s;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t i;
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__pool_release(ctx, &ctx->module_pool, ctx->modules, sizeof s, module.id, &s))
        return gpuk__bad_handle(fn, "module", module.id);
    /* Its kernels die with it: a launch through one would reach freed driver state. */
    gpuk__mutex_lock(&ctx->lock);
    for (i = 1; i < ctx->kernel_pool.size; i++)
        if (ctx->kernels[i].id && ctx->kernels[i].module_id == module.id) {
            ctx->kernels[i].id = 0;
            gpuk__pool_give(&ctx->kernel_pool, i);
        }
    gpuk__mutex_unlock(&ctx->lock);
    GPUK__ALIVE(fn);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuModuleUnload(s.cu);
    return cr ? gpuk__fail_cu(fn, "cuModuleUnload", cr, NULL) : GPUK_OK;
}

/* ---- >>kernel ---- */
GPUK__IMPL gpuk_result gpuk_kernel_get(gpuk_ctx* ctx, gpuk_module module, const char* name,
                                       gpuk_kernel* out_kernel) {
    static const char fn[] = "gpuk_kernel_get";
    const gpuk__module_slot* m;
    gpuk__kernel_slot k;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t slot;
    if (!out_kernel) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_kernel is NULL");
    out_kernel->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!name || !*name) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "name is NULL or empty");
    if (!(m = gpuk__module_lookup(ctx, module.id))) return gpuk__bad_handle(fn, "module", module.id);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    memset(&k, 0, sizeof k);
    if ((cr = GPUK__DRV.cuModuleGetFunction(&k.cu, m->cu, name)) != 0) {
        char detail[96];
        gpuk__fmt(detail, sizeof detail, 0, "no kernel '%s' in module '%s'", name, m->label);
        return gpuk__fail_cu(fn, "cuModuleGetFunction", cr, detail);
    }
    if ((cr = GPUK__DRV.cuFuncGetAttribute(&k.max_threads, GPUK__CU_FUNC_MAX_THREADS_PER_BLOCK, k.cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&k.static_shared, GPUK__CU_FUNC_SHARED_SIZE_BYTES, k.cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&k.max_dynamic_shared, GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.cu)) != 0)
        return gpuk__fail_cu(fn, "cuFuncGetAttribute", cr, name);
    k.num_params = -1;
    if (GPUK__DRV.cuFuncGetParamInfo) {
        /* Count parameters by asking for each until the driver says there is none (1). */
        size_t i, off = 0, sz = 0;
        for (i = 0; i < 4096; i++) {
            cr = GPUK__DRV.cuFuncGetParamInfo(k.cu, i, &off, &sz);
            if (cr) break;
            if (i < GPUK__MAX_CHECKED_PARAMS) k.param_bytes[i] = (uint16_t)(sz < 65535u ? sz : 65535u);
        }
        if (cr == GPUK__CU_ERROR_INVALID_VALUE) k.num_params = (int)i;
        else if (!gpuk__tolerate(fn, "cuFuncGetParamInfo", cr) && GPUK__ATOMIC_LOAD(&gpuk__g.broken))
            return gpuk__fail_broken(fn);
    }
    gpuk__copy_text(k.name, sizeof k.name, name);
    k.module_id = module.id;
    gpuk__mutex_lock(&ctx->lock);
    /* The module may have been unloaded meanwhile: check again under the lock. */
    slot = gpuk__module_lookup(ctx, module.id) ? gpuk__pool_take(&ctx->kernel_pool) : 0;
    if (slot) {
        k.id = gpuk__new_id(slot);
        ctx->kernels[slot] = k;
    }
    gpuk__mutex_unlock(&ctx->lock);
    if (!slot) {
        if (!gpuk__module_lookup(ctx, module.id)) return gpuk__bad_handle(fn, "module", module.id);
        return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u kernel slots are in use", ctx->kernel_pool.size - 1);
    }
    out_kernel->id = k.id;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_query(gpuk_ctx* ctx, gpuk_kernel kernel, gpuk_kernel_info* out_info) {
    static const char fn[] = "gpuk_kernel_query";
    const gpuk__kernel_slot* k;
    gpuk_kernel_info info;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!out_info) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_info is NULL");
    memset(out_info, 0, sizeof *out_info);
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id))) return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    memset(&info, 0, sizeof info);
    if ((cr = GPUK__DRV.cuFuncGetAttribute(&info.num_regs, GPUK__CU_FUNC_NUM_REGS, k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.const_bytes, GPUK__CU_FUNC_CONST_SIZE_BYTES, k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.local_bytes, GPUK__CU_FUNC_LOCAL_SIZE_BYTES, k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.ptx_version, GPUK__CU_FUNC_PTX_VERSION, k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.binary_version, GPUK__CU_FUNC_BINARY_VERSION, k->cu)) != 0)
        return gpuk__fail_cu(fn, "cuFuncGetAttribute", cr, k->name);
    info.static_shared_bytes = k->static_shared;
    info.max_threads_per_block = k->max_threads;
    info.max_dynamic_shared_bytes = k->max_dynamic_shared;
    info.num_params = k->num_params;
    *out_info = info;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_set_max_dynamic_shared(gpuk_ctx* ctx, gpuk_kernel kernel, uint32_t bytes) {
    static const char fn[] = "gpuk_kernel_set_max_dynamic_shared";
    gpuk__kernel_slot* k;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id))) return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((uint64_t)bytes + (uint64_t)k->static_shared > (uint64_t)ctx->info.shared_per_block_optin)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': %u dynamic + %d static shared bytes exceed "
                          "the device's opt-in limit of %d bytes per block", k->name, bytes,
                          k->static_shared, ctx->info.shared_per_block_optin);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuFuncSetAttribute(k->cu, GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes)) != 0)
        return gpuk__fail_cu(fn, "cuFuncSetAttribute", cr, k->name);
    k->max_dynamic_shared = (int)bytes;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_suggest_block(gpuk_ctx* ctx, gpuk_kernel kernel, uint32_t shared_bytes,
                                                 int* out_block, int* out_min_grid) {
    static const char fn[] = "gpuk_kernel_suggest_block";
    const gpuk__kernel_slot* k;
    int block = 0, grid = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (out_block) *out_block = 0;
    if (out_min_grid) *out_min_grid = 0;
    if (!out_block) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_block is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id))) return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuOccupancyMaxPotentialBlockSize(&grid, &block, k->cu, NULL, shared_bytes, 0)) != 0)
        return gpuk__fail_cu(fn, "cuOccupancyMaxPotentialBlockSize", cr, k->name);
    *out_block = block;
    if (out_min_grid) *out_min_grid = grid;
    return GPUK_OK;
}

/* ---- >>launch ---- */
static gpuk_result gpuk__launch_limit(const char* fn, const gpuk__kernel_slot* k, const char* what,
                                      uint32_t value, long long limit) {
    return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': %s = %u exceeds the limit of %lld", k->name,
                      what, value, limit);
}

/* Shape and shared memory against the device and kernel limits, and (debug) the arguments. */
static gpuk_result gpuk__launch_check(const char* fn, const gpuk_ctx* ctx, const gpuk__kernel_slot* k,
                                      const gpuk_launch_desc* d, const uint32_t g[3], const uint32_t b[3]) {
    static const char* const gnames[3] = { "grid.x", "grid.y", "grid.z" };
    static const char* const bnames[3] = { "block.x", "block.y", "block.z" };
    int i;
    if (gpuk__desc_canaries_bad(d->_start_canary, d->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_launch_desc canaries are not zero");
    if (!d->grid.x || !d->block.x)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': %s is 0", k->name, d->grid.x ? "block.x" : "grid.x");
    for (i = 0; i < 3; i++) {
        if (g[i] > (uint32_t)ctx->info.max_grid[i]) return gpuk__launch_limit(fn, k, gnames[i], g[i], ctx->info.max_grid[i]);
        if (b[i] > (uint32_t)ctx->info.max_block[i]) return gpuk__launch_limit(fn, k, bnames[i], b[i], ctx->info.max_block[i]);
    }
    if ((uint64_t)b[0] * b[1] * b[2] > (uint64_t)k->max_threads)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': block %ux%ux%u = %llu threads exceeds its limit "
                          "of %d threads per block", k->name, b[0], b[1], b[2],
                          (unsigned long long)b[0] * b[1] * b[2], k->max_threads);
    if (d->shared_bytes > (uint32_t)k->max_dynamic_shared)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': %u bytes of dynamic shared memory exceed its "
                          "limit of %d (raise it with gpuk_kernel_set_max_dynamic_shared, up to %d bytes "
                          "minus %d static)", k->name, d->shared_bytes, k->max_dynamic_shared,
                          ctx->info.shared_per_block_optin, k->static_shared);
    if (k->num_params > 0 && !d->args)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s' takes %d parameters but args is NULL",
                          k->name, k->num_params);
#if GPUK_DEBUG
    if (d->num_args && k->num_params >= 0 && d->num_args != (uint32_t)k->num_params)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s' takes %d parameters, num_args is %u",
                          k->name, k->num_params, d->num_args);
    if (d->num_args && d->args) {
        uint32_t a;
        for (a = 0; a < d->num_args; a++) {
            if (!d->args[a]) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': args[%u] is NULL", k->name, a);
            if (d->arg_sizes && k->num_params >= 0 && a < GPUK__MAX_CHECKED_PARAMS &&
                d->arg_sizes[a] != k->param_bytes[a])
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': argument %u is %zu bytes, the "
                                  "parameter is %u bytes", k->name, a, d->arg_sizes[a], (unsigned)k->param_bytes[a]);
        }
    }
#endif
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_launch(gpuk_ctx* ctx, gpuk_kernel kernel, const gpuk_launch_desc* desc) {
    static const char fn[] = "gpuk_launch";
    const gpuk__kernel_slot* k;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t g[3], b[3];
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (GPUK__UNLIKELY(!desc)) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (GPUK__UNLIKELY(!(k = gpuk__kernel_lookup(ctx, kernel.id)))) return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((r = gpuk__stream_resolve(fn, ctx, desc->stream, &cs)) != GPUK_OK) return r;
    g[0] = desc->grid.x; g[1] = desc->grid.y ? desc->grid.y : 1u; g[2] = desc->grid.z ? desc->grid.z : 1u;
    b[0] = desc->block.x; b[1] = desc->block.y ? desc->block.y : 1u; b[2] = desc->block.z ? desc->block.z : 1u;
    if ((r = gpuk__launch_check(fn, ctx, k, desc, g, b)) != GPUK_OK) return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuLaunchKernel(k->cu, g[0], g[1], g[2], b[0], b[1], b[2], desc->shared_bytes, cs,
                                  desc->args, NULL);
    return GPUK__UNLIKELY(cr) ? gpuk__fail_cu(fn, "cuLaunchKernel", cr, k->name) : GPUK_OK;
}
