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
__declspec(dllimport) unsigned char __stdcall TryAcquireSRWLockExclusive(void** lock);
__declspec(dllimport) int __stdcall SleepConditionVariableSRW(void** cv, void** lock, unsigned long ms,
                                                              unsigned long flags);
__declspec(dllimport) void __stdcall WakeAllConditionVariable(void** cv);
__declspec(dllimport) void __stdcall WakeConditionVariable(void** cv);
__declspec(dllimport) void* __stdcall CreateThread(void* security, size_t stack,
                                                   unsigned long (__stdcall* start)(void*), void* arg,
                                                   unsigned long flags, unsigned long* id);
__declspec(dllimport) unsigned long __stdcall WaitForSingleObject(void* handle, unsigned long ms);
__declspec(dllimport) int __stdcall CloseHandle(void* handle);
__declspec(dllimport) unsigned long __stdcall GetActiveProcessorCount(unsigned short group);
#endif
#define GPUK__CUDAAPI __stdcall
typedef struct gpuk__mutex { void* srw; } gpuk__mutex;
#define GPUK__MUTEX_INIT { 0 }
static void gpuk__mutex_lock(gpuk__mutex* m) { AcquireSRWLockExclusive((void**)&m->srw); }
static void gpuk__mutex_unlock(gpuk__mutex* m) { ReleaseSRWLockExclusive((void**)&m->srw); }
static int gpuk__mutex_trylock(gpuk__mutex* m) { return TryAcquireSRWLockExclusive((void**)&m->srw) != 0; }
static void gpuk__mutex_init(gpuk__mutex* m) { m->srw = 0; }
static void gpuk__mutex_fini(gpuk__mutex* m) { (void)m; }
/* Threads and condition variables, for the staging's copy threads (>>staging) */
typedef void* gpuk__thread;
typedef struct gpuk__cond { void* cv; } gpuk__cond;
typedef unsigned long (__stdcall* gpuk__thread_fn)(void*);
#define GPUK__THREAD_MAIN(name) static unsigned long __stdcall name(void* gpuk__thread_arg)
#define GPUK__THREAD_END return 0
static int gpuk__thread_start(gpuk__thread* t, gpuk__thread_fn f, void* arg) {
    *t = CreateThread(NULL, 0, f, arg, 0, NULL);
    return *t != NULL;
}
static void gpuk__thread_join(gpuk__thread t) {
    WaitForSingleObject(t, 0xFFFFFFFFul); /* INFINITE */
    CloseHandle(t);
}
static void gpuk__cond_init(gpuk__cond* c) { c->cv = 0; }
static void gpuk__cond_fini(gpuk__cond* c) { (void)c; }
static void gpuk__cond_wait(gpuk__cond* c, gpuk__mutex* m) {
    SleepConditionVariableSRW(&c->cv, (void**)&m->srw, 0xFFFFFFFFul, 0);
}
static void gpuk__cond_broadcast(gpuk__cond* c) { WakeAllConditionVariable(&c->cv); }
static void gpuk__cond_signal(gpuk__cond* c) { WakeConditionVariable(&c->cv); }
static unsigned gpuk__cpu_count(void) {
    unsigned long n = GetActiveProcessorCount(0xFFFF); /* ALL_PROCESSOR_GROUPS */
    return n ? (unsigned)n : 1u;
}
static long gpuk__process_id(void) { return 0; } /* no fork() */
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
#define GPUK__NVRTC_NAMES "nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll", \
    "nvrtc64_111_0.dll", "nvrtc64_110_0.dll", "nvrtc64_102_0.dll"
#else
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#define GPUK__CUDAAPI
typedef struct gpuk__mutex { pthread_mutex_t m; } gpuk__mutex;
#define GPUK__MUTEX_INIT { PTHREAD_MUTEX_INITIALIZER }
static void gpuk__mutex_lock(gpuk__mutex* m) { pthread_mutex_lock(&m->m); }
static void gpuk__mutex_unlock(gpuk__mutex* m) { pthread_mutex_unlock(&m->m); }
static int gpuk__mutex_trylock(gpuk__mutex* m) { return pthread_mutex_trylock(&m->m) == 0; }
static void gpuk__mutex_init(gpuk__mutex* m) { pthread_mutex_init(&m->m, NULL); }
static void gpuk__mutex_fini(gpuk__mutex* m) { pthread_mutex_destroy(&m->m); }
typedef pthread_t gpuk__thread;
typedef struct gpuk__cond { pthread_cond_t c; } gpuk__cond;
typedef void* (*gpuk__thread_fn)(void*);
#define GPUK__THREAD_MAIN(name) static void* name(void* gpuk__thread_arg)
#define GPUK__THREAD_END return NULL
static int gpuk__thread_start(gpuk__thread* t, gpuk__thread_fn f, void* arg) {
    return pthread_create(t, NULL, f, arg) == 0;
}
static void gpuk__thread_join(gpuk__thread t) { pthread_join(t, NULL); }
static void gpuk__cond_init(gpuk__cond* c) { pthread_cond_init(&c->c, NULL); }
static void gpuk__cond_fini(gpuk__cond* c) { pthread_cond_destroy(&c->c); }
static void gpuk__cond_wait(gpuk__cond* c, gpuk__mutex* m) { pthread_cond_wait(&c->c, &m->m); }
static void gpuk__cond_broadcast(gpuk__cond* c) { pthread_cond_broadcast(&c->c); }
static void gpuk__cond_signal(gpuk__cond* c) { pthread_cond_signal(&c->c); }
static unsigned gpuk__cpu_count(void) {
#if defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
#else
    return 1u;
#endif
}
static long gpuk__process_id(void) { return (long)getpid(); }
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
   may not define; it ignores the environment in setuid/setgid processes. Not where stdlib.h
   declared it for C++ (g++ and nvcc define _GNU_SOURCE), with a throw() ours would lack. */
#if !(defined(__cplusplus) && defined(_GNU_SOURCE))
extern char* secure_getenv(const char* name);
#endif
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
/* NVRTC's sonames carry the major version (11.x: major.minor); newest first */
#define GPUK__NVRTC_NAMES "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", \
    "libnvrtc.so.11.1", "libnvrtc.so.11.0", "libnvrtc.so.10.2"
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
/* The Interlocked intrinsics on every MSVC target: each is atomic with a full barrier. A plain
   volatile access is ordered only under /volatile:ms, the x86 and x64 default; ARM64 defaults
   to /volatile:iso, under which the staging threads' hand-off would break. (Declared here, so
   that no <intrin.h> or <windows.h> is needed.) */
long _InterlockedExchangeAdd(long volatile* p, long v);
long _InterlockedExchange(long volatile* p, long v);
long _InterlockedOr(long volatile* p, long v);
void* _InterlockedCompareExchangePointer(void* volatile* p, void* v, void* expected);
#pragma intrinsic(_InterlockedExchangeAdd, _InterlockedExchange, _InterlockedOr, \
                  _InterlockedCompareExchangePointer)
#define GPUK__ATOMIC_LOAD(p) ((int)_InterlockedOr((long volatile*)(p), 0))
#define GPUK__ATOMIC_STORE(p, v) (void)_InterlockedExchange((long volatile*)(p), (long)(v))
#define GPUK__ATOMIC_ADD(p, v) ((unsigned)_InterlockedExchangeAdd((long volatile*)(p), (long)(v)))
#define GPUK__ATOMIC_ADD_ACQREL(p, v) GPUK__ATOMIC_ADD(p, v) /* a full barrier there */
/* a compare-exchange of NULL with NULL changes nothing and returns the value */
#define GPUK__ATOMIC_LOAD_PTR(p) _InterlockedCompareExchangePointer((void* volatile*)(p), NULL, NULL)
#define GPUK__ATOMIC_CAS_PTR(p, expected, v) \
    (_InterlockedCompareExchangePointer((void* volatile*)(p), (v), (expected)) == (expected))
#else
#define GPUK__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GPUK__ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GPUK__ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GPUK__ATOMIC_ADD_ACQREL(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define GPUK__ATOMIC_LOAD_PTR(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
/* 1 when *p was expected and is now v */
#define GPUK__ATOMIC_CAS_PTR(p, expected, v) \
    gpuk__cas_ptr((void**)(p), (void*)(expected), (void*)(v))
static inline int gpuk__cas_ptr(void** p, void* expected, void* v) {
    return __atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
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
struct CUlib_st;
struct CUtensorMap_st; /* 128 bytes, 64-byte aligned: GEMM's TMA path (gpuk__tmap) */
typedef struct CUgraph_st* gpuk__cu_graph;
typedef struct CUgraphExec_st* gpuk__cu_graph_exec;
typedef struct CUgraphNode_st* gpuk__cu_graph_node;
/* cuLaunchKernelEx's CUlaunchConfig and CUlaunchAttribute, laid out as cuda.h does (the
   attribute value is a 64-byte union holding pointers; tests/driver_sigs.c compares sizes and
   offsets). gpuk's own tags: cuda.h's CUlaunchConfig_st stays opaque here, so a program may
   include both headers; the call casts. */
typedef struct gpuk__cu_launch_attr {
    unsigned int id;
    char pad[4];
    union { char bytes[64]; void* align_; int i; unsigned int dim[3]; } value;
} gpuk__cu_launch_attr;
typedef struct gpuk__cu_launch_config {
    unsigned int grid[3], block[3], shared_bytes;
    struct CUstream_st* stream;
    gpuk__cu_launch_attr* attrs;
    unsigned int num_attrs;
} gpuk__cu_launch_config;

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
    X(cuMemcpyPeer, 4000, "cuMemcpyPeer", 0, \
      (gpuk_devptr dst, gpuk__cu_context dst_ctx, gpuk_devptr src, gpuk__cu_context src_ctx, \
       size_t bytes)) \
    X(cuMemcpyPeerAsync, 4000, "cuMemcpyPeerAsync", 0, \
      (gpuk_devptr dst, gpuk__cu_context dst_ctx, gpuk_devptr src, gpuk__cu_context src_ctx, \
       size_t bytes, gpuk__cu_stream stream)) \
    X(cuDeviceCanAccessPeer, 4000, "cuDeviceCanAccessPeer", 0, \
      (int* out_can, gpuk__cu_device dev, gpuk__cu_device peer_dev)) \
    X(cuCtxEnablePeerAccess, 4000, "cuCtxEnablePeerAccess", 0, \
      (gpuk__cu_context peer_ctx, unsigned int flags)) \
    X(cuPointerGetAttribute, 4000, "cuPointerGetAttribute", 1, \
      (void* out_data, unsigned int attribute, gpuk_devptr ptr)) \
    X(cuStreamCreateWithPriority, 5050, "cuStreamCreateWithPriority", 1, \
      (gpuk__cu_stream* out_stream, unsigned int flags, int priority)) \
    X(cuStreamDestroy, 4000, "cuStreamDestroy_v2", 1, (gpuk__cu_stream stream)) \
    X(cuStreamSynchronize, 2000, "cuStreamSynchronize", 1, (gpuk__cu_stream stream)) \
    X(cuStreamQuery, 2000, "cuStreamQuery", 1, (gpuk__cu_stream stream)) \
    X(cuStreamGetCtx, 9020, "cuStreamGetCtx", 0, (gpuk__cu_stream stream, gpuk__cu_context* out_ctx)) \
    X(cuStreamWaitEvent, 3020, "cuStreamWaitEvent", 1, \
      (gpuk__cu_stream stream, gpuk__cu_event event, unsigned int flags)) \
    X(cuStreamIsCapturing, 10000, "cuStreamIsCapturing", 0, \
      (gpuk__cu_stream stream, unsigned int* out_status)) \
    X(cuStreamBeginCapture, 10010, "cuStreamBeginCapture_v2", 0, \
      (gpuk__cu_stream stream, unsigned int mode)) \
    X(cuThreadExchangeStreamCaptureMode, 10010, "cuThreadExchangeStreamCaptureMode", 0, \
      (unsigned int* mode)) \
    X(cuStreamEndCapture, 10000, "cuStreamEndCapture", 0, \
      (gpuk__cu_stream stream, gpuk__cu_graph* out_graph)) \
    X(cuLaunchHostFunc, 10000, "cuLaunchHostFunc", 1, \
      (gpuk__cu_stream stream, gpuk__cu_host_fn fn, void* user_data)) \
    X(cuEventCreate, 2000, "cuEventCreate", 1, (gpuk__cu_event* out_event, unsigned int flags)) \
    X(cuEventDestroy, 4000, "cuEventDestroy_v2", 1, (gpuk__cu_event event)) \
    X(cuEventRecord, 2000, "cuEventRecord", 1, (gpuk__cu_event event, gpuk__cu_stream stream)) \
    X(cuEventRecordWithFlags, 11010, "cuEventRecordWithFlags", 0, \
      (gpuk__cu_event event, gpuk__cu_stream stream, unsigned int flags)) \
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
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, \
      "cuOccupancyMaxActiveBlocksPerMultiprocessor", 0, \
      (int* out_blocks, gpuk__cu_function func, int block_size, size_t shared_bytes)) \
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
    X(cuOccupancyMaxActiveClusters, 11070, "cuOccupancyMaxActiveClusters", 0, \
      (int* out_clusters, gpuk__cu_function func, const struct CUlaunchConfig_st* config)) \
    X(cuGraphInstantiateWithFlags, 11040, "cuGraphInstantiateWithFlags", 0, \
      (gpuk__cu_graph_exec* out_exec, gpuk__cu_graph graph, unsigned long long flags)) \
    X(cuGraphLaunch, 10000, "cuGraphLaunch", 0, (gpuk__cu_graph_exec exec, gpuk__cu_stream stream)) \
    X(cuGraphExecDestroy, 10000, "cuGraphExecDestroy", 0, (gpuk__cu_graph_exec exec)) \
    X(cuGraphDestroy, 10000, "cuGraphDestroy", 0, (gpuk__cu_graph graph)) \
    X(cuGraphExecUpdate, 10020, "cuGraphExecUpdate", 0, \
      (gpuk__cu_graph_exec exec, gpuk__cu_graph graph, gpuk__cu_graph_node* out_error_node, \
       unsigned int* out_result)) \
    X(cuTensorMapEncodeTiled, 12000, "cuTensorMapEncodeTiled", 0, \
      (struct CUtensorMap_st* out_map, unsigned int data_type, uint32_t rank, void* address, \
       const uint64_t* dims, const uint64_t* strides, const uint32_t* box, \
       const uint32_t* element_strides, unsigned int interleave, unsigned int swizzle, \
       unsigned int l2_promotion, unsigned int oob_fill)) \
    X(cuLibraryLoadData, 12000, "cuLibraryLoadData", 0, \
      (struct CUlib_st** out_library, const void* code, unsigned int* jit_options, \
       void** jit_values, unsigned int num_jit_options, unsigned int* library_options, \
       void** library_values, unsigned int num_library_options))

/* Optional driver rows behind gpuk_features() bits. */
#define GPUK__DRIVER_FEATURES(X) \
    X(cuFuncGetParamInfo, GPUK_FEATURE_PARAM_INFO) \
    X(cuLaunchKernelEx, GPUK_FEATURE_LAUNCH_EX) \
    X(cuGraphInstantiateWithFlags, GPUK_FEATURE_GRAPHS) \
    X(cuLibraryLoadData, GPUK_FEATURE_LIBRARY) \
    X(cuMemcpyPeerAsync, GPUK_FEATURE_PEER)

GPUK__LIB_TABLE(GPUK__DRIVER_FUNCS, gpuk__driver)
#define GPUK__X_TABLE gpuk__driver
static const gpuk__lib_row gpuk__driver_rows[] = { GPUK__DRIVER_FUNCS(GPUK__X_ROW) };
static const gpuk__lib_feature gpuk__driver_features[] = { GPUK__DRIVER_FEATURES(GPUK__X_FEATURE) };
#undef GPUK__X_TABLE

/* NVRTC, the runtime compiler behind gpuk_module_compile, loaded on its first use. The program
   handle's tag is gpuk's own (NVRTC's starts with an underscore); nvrtcResult is an enum like
   CUresult. Versions: the CUDA release that added the entry point (what a resolver hears). */
typedef struct gpuk__nvrtc_program_st* gpuk__nvrtc_program;
#define GPUK__NVRTC_FUNCS(X) \
    X(nvrtcVersion, 7000, "nvrtcVersion", 1, (int* out_major, int* out_minor)) \
    X(nvrtcGetNumSupportedArchs, 11020, "nvrtcGetNumSupportedArchs", 0, (int* out_count)) \
    X(nvrtcGetSupportedArchs, 11020, "nvrtcGetSupportedArchs", 0, (int* out_archs)) \
    X(nvrtcCreateProgram, 7000, "nvrtcCreateProgram", 1, \
      (gpuk__nvrtc_program* out_prog, const char* source, const char* name, int num_headers, \
       const char* const* headers, const char* const* include_names)) \
    X(nvrtcDestroyProgram, 7000, "nvrtcDestroyProgram", 1, (gpuk__nvrtc_program* prog)) \
    X(nvrtcCompileProgram, 7000, "nvrtcCompileProgram", 1, \
      (gpuk__nvrtc_program prog, int num_options, const char* const* options)) \
    X(nvrtcGetProgramLogSize, 7000, "nvrtcGetProgramLogSize", 1, \
      (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetProgramLog, 7000, "nvrtcGetProgramLog", 1, (gpuk__nvrtc_program prog, char* log)) \
    X(nvrtcGetPTXSize, 7000, "nvrtcGetPTXSize", 1, (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetPTX, 7000, "nvrtcGetPTX", 1, (gpuk__nvrtc_program prog, char* ptx)) \
    X(nvrtcGetCUBINSize, 11010, "nvrtcGetCUBINSize", 0, (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetCUBIN, 11010, "nvrtcGetCUBIN", 0, (gpuk__nvrtc_program prog, char* cubin)) \
    X(nvrtcAddNameExpression, 8000, "nvrtcAddNameExpression", 1, \
      (gpuk__nvrtc_program prog, const char* name_expression)) \
    X(nvrtcGetLoweredName, 8000, "nvrtcGetLoweredName", 1, \
      (gpuk__nvrtc_program prog, const char* name_expression, const char** out_lowered))

GPUK__LIB_TABLE(GPUK__NVRTC_FUNCS, gpuk__nvrtc)
#define GPUK__X_TABLE gpuk__nvrtc
static const gpuk__lib_row gpuk__nvrtc_rows[] = { GPUK__NVRTC_FUNCS(GPUK__X_ROW) };
#undef GPUK__X_TABLE
/* nvrtcGetErrorString returns a string, not a result: resolved beside the table. */
typedef const char*(GPUK__CUDAAPI* gpuk__pfn_nvrtc_error_string)(unsigned int result);

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
    GPUK__CU_EVENT_RECORD_EXTERNAL = 1,
    GPUK__CU_STREAM_CAPTURE_ACTIVE = 1,
    GPUK__CU_MEMHOSTALLOC_PORTABLE = 1,
    GPUK__CU_MEMHOSTREGISTER_PORTABLE = 1,
    GPUK__CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    GPUK__CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    GPUK__CU_MEMORYTYPE_HOST = 1,
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
    GPUK__CU_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    GPUK__CU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    GPUK__CU_ERROR_NOT_READY = 600,
    GPUK__CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
    GPUK__CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
    GPUK__CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    GPUK__CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
    GPUK__CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
    GPUK__CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
    GPUK__CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    GPUK__CU_TENSOR_MAP_SWIZZLE_128B = 3,
    GPUK__CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
    GPUK__CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    GPUK__CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    GPUK__CU_STREAM_CAPTURE_STATUS_NONE = 0
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
    int tag_users[16];         /* live ctxs per handle tag (GPUK__TAGS) */
    gpuk_ctx* live_list;       /* every live ctx, through gpuk_ctx.next_live (under gpuk__lock) */
    uint32_t next_tag;         /* tags go round, so a new ctx does not reuse a just-freed one */
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
static gpuk__mutex gpuk__log_lock = GPUK__MUTEX_INIT;   /* the logger; taken after the others */
/* NVRTC's loading and its compile cache (>>nvrtc); taken after gpuk__lock, before the two
   above */
static gpuk__mutex gpuk__nvrtc_lock = GPUK__MUTEX_INIT;
#define GPUK__DRV (gpuk__g.drv)
/* CU_STREAM_LEGACY: the context's legacy NULL stream, named explicitly (a plain NULL means the
   per-thread stream in code built with per-thread default streams). Work on it waits for
   earlier work on every blocking stream of the context, and later work on those waits for it:
   cudaMemcpy's ordering, which gpuk's stream-less calls use. */
#define GPUK__CU_STREAM_LEGACY ((gpuk__cu_stream)(uintptr_t)1)

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
    case GPUK_ERR_CAPTURING: return "GPUK_ERR_CAPTURING";
    case GPUK_ERR_NO_NVRTC: return "GPUK_ERR_NO_NVRTC";
    case GPUK_ERR_COMPILE: return "GPUK_ERR_COMPILE";
    case GPUK_ERR_UNSUPPORTED: return "GPUK_ERR_UNSUPPORTED";
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
    case GPUK_ERR_NO_NVRTC:
        return "install the CUDA toolkit's runtime compiler (libnvrtc: the toolkit's cuda-nvrtc "
               "package, or pip install nvidia-cuda-nvrtc), and name the library in "
               "gpuk_desc.nvrtc_path or GPUK_NVRTC_PATH where it is not on the library path";
    case GPUK_ERR_FORKED:
        return "CUDA cannot be used in a child after fork(): initialise gpuk only in the child, "
               "or start the child with exec/posix_spawn";
    case GPUK_ERR_INVALID_HANDLE: return "the handle is zero, destroyed, or belongs to another ctx";
    case GPUK_ERR_POOL_FULL: return "raise the matching max_* in gpuk_ctx_desc";
    case GPUK_ERR_CAPTURING:
        return "before capturing, load the kernels (gpuk_kernels_load) and reserve their scratch "
               "(gpuk_kernels_reserve), or run the call once outside the capture";
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
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    gpuk__mutex_lock(&gpuk__fault_lock);
    gpuk__mutex_lock(&gpuk__log_lock);
}
static void gpuk__atfork_parent(void) {
    gpuk__mutex_unlock(&gpuk__log_lock);
    gpuk__mutex_unlock(&gpuk__fault_lock);
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
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

/* The longest library path gpuk_desc takes, its NUL included (Linux's PATH_MAX): a longer one
   is refused rather than cut, which could name another library. */
#define GPUK__PATH_MAX 4096

/* NVRTC's state (>>nvrtc): the table, what gpuk_init said about finding it, and the cache. */
/* One compiled program in the cache: a header, then key_bytes of key, image_bytes of image (PTX
   with its NUL, or a cubin) and names_bytes of lowered names ("expression\0lowered\0"...). */
typedef struct gpuk__nvrtc_entry gpuk__nvrtc_entry;
struct gpuk__nvrtc_entry {
    gpuk__nvrtc_entry* next;
    uint64_t hash;
    size_t key_bytes, image_bytes, names_bytes;
    int is_ptx;
    int arch;                  /* sm_XX / compute_XX compiled for */
};
typedef struct gpuk__nvrtc_state {
    int loaded;                /* atomic: 1 once the table is filled (under gpuk__nvrtc_lock) */
    int version;               /* 13000 for NVRTC 13.0 */
    int num_archs;             /* of archs; 0 where NVRTC cannot list them (< 11.2) */
    int archs[128];            /* sm numbers it compiles for (75, 80, ..., 120) */
    char path[GPUK__PATH_MAX]; /* gpuk_desc.nvrtc_path, copied ("" = none) */
    gpuk_get_proc_fn get_proc;
    void* get_proc_user_data;
    gpuk__pfn_nvrtc_error_string error_string; /* may be NULL */
    gpuk__lib_state lib;
    gpuk__nvrtc fns;
    gpuk__nvrtc_entry* cache;  /* newest first; freed by gpuk_shutdown */
} gpuk__nvrtc_state;
static gpuk__nvrtc_state gpuk__nv;

static int gpuk__nvrtc_probe(void* sym, int* out_version) {
    gpuk__pfn_nvrtcVersion get_version;
    int major = 0, minor = 0;
    gpuk__sym_to_fn(&get_version, sizeof get_version, sym);
    if (get_version(&major, &minor) != 0) return 0;
    *out_version = major * 1000 + minor * 10;
    return 1;
}

static const char* const gpuk__nvrtc_sonames[] = { GPUK__NVRTC_NAMES, NULL };

static const gpuk__lib gpuk__nvrtc_lib = {
    "NVRTC (the CUDA runtime compiler)", "NVRTC", gpuk__nvrtc_sonames, "GPUK_NVRTC_PATH",
    "nvrtcVersion", gpuk__nvrtc_probe,
    gpuk__nvrtc_rows, sizeof gpuk__nvrtc_rows / sizeof gpuk__nvrtc_rows[0], NULL, 0,
    &gpuk__nv.fns, sizeof gpuk__nv.fns, &gpuk__nv.lib,
    0, GPUK_ERR_NO_NVRTC, GPUK_ERR_NO_NVRTC, NULL
};

/* The cache freed and the table forgotten (the library stays loaded: its code ran), so the
   next load follows the settings then in force. The caller holds gpuk__nvrtc_lock. */
static void gpuk__nvrtc_forget_locked(void) {
    while (gpuk__nv.cache) {
        gpuk__nvrtc_entry* e = gpuk__nv.cache;
        gpuk__nv.cache = e->next;
        gpuk__free(e);
    }
    if (GPUK__ATOMIC_LOAD(&gpuk__nv.loaded)) gpuk__lib_forget(&gpuk__nvrtc_lib);
    GPUK__ATOMIC_STORE(&gpuk__nv.loaded, 0);
    gpuk__nv.version = gpuk__nv.num_archs = 0;
    gpuk__nv.error_string = NULL;
    gpuk__nv.path[0] = 0;
    gpuk__nv.get_proc = NULL;
    gpuk__nv.get_proc_user_data = NULL;
}

/* gpuk_shutdown: the next gpuk_init's NVRTC settings apply. */
static void gpuk__nvrtc_forget(void) {
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    gpuk__nvrtc_forget_locked();
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
}

/* gpuk_init: where the next NVRTC load looks (the path is copied: it is used later). An NVRTC
   that gpuk_nvrtc_version loaded before gpuk_init, from GPUK_NVRTC_PATH or the default names,
   gives way to the one this init names; with neither nvrtc_path nor nvrtc_get_proc set it
   stays, being the one the defaults name. */
static void gpuk__nvrtc_configure(const gpuk_desc* d) {
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    if ((d->nvrtc_path || d->nvrtc_get_proc) && GPUK__ATOMIC_LOAD(&gpuk__nv.loaded))
        gpuk__nvrtc_forget_locked();
    gpuk__copy_text(gpuk__nv.path, sizeof gpuk__nv.path, d->nvrtc_path);
    gpuk__nv.get_proc = d->nvrtc_get_proc;
    gpuk__nv.get_proc_user_data = d->nvrtc_get_proc_user_data;
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
}

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

/* Every desc's defaults in one place (STYLE.md §4): NULL = all zero; out-of-range values stay
   as they are, for the create call to name. */
static gpuk_desc gpuk__desc_defaults(const gpuk_desc* desc) {
    gpuk_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (d.log_level == GPUK_LOG_DEFAULT) d.log_level = GPUK_LOG_WARN;
    return d;
}

GPUK__IMPL gpuk_desc gpuk_desc_defaults(const gpuk_desc* desc) { return gpuk__desc_defaults(desc); }

GPUK__IMPL gpuk_result gpuk_init(const gpuk_desc* desc) {
    const char* const fn = __func__;
    gpuk_desc d;
    gpuk_result r;
    if (GPUK__ATOMIC_LOAD(&gpuk__g.initialized)) {
        GPUK__ALIVE(fn);
        return GPUK_OK;
    }
    d = gpuk__desc_defaults(desc);
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc canaries are not zero (desc not "
                          "zero-initialised?)");
    if (!d.allocator.alloc_fn != !d.allocator.free_fn)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.allocator needs both alloc_fn and "
                          "free_fn, or neither");
    if (d.driver_path && strlen(d.driver_path) >= GPUK__PATH_MAX)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.driver_path is %zu characters long; "
                          "at most %d are taken", strlen(d.driver_path), GPUK__PATH_MAX - 1);
    if (d.nvrtc_path && strlen(d.nvrtc_path) >= GPUK__PATH_MAX)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.nvrtc_path is %zu characters long; "
                          "at most %d are taken", strlen(d.nvrtc_path), GPUK__PATH_MAX - 1);
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
    gpuk__nvrtc_configure(&d);
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
        return gpuk__fail(__func__, GPUK_ERR_BUSY, "%d ctx still alive or being created: "
                          "destroy them first", n);
    }
    GPUK__ATOMIC_STORE(&gpuk__g.initialized, 0);
    gpuk__g.init_failed = 0;
    gpuk__nvrtc_forget(); /* before the allocator goes: the cache was allocated through it */
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
    if (!out_version) return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "out_version is NULL");
    *out_version = 0;
    GPUK__READY(__func__);
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
    const char* const fn = __func__;
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
    const char* const fn = __func__;
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
    return gpuk__device_query(__func__, device, out_info);
}

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

typedef struct gpuk__stream_slot {
    uint32_t id;
    bool owned;
    gpuk__cu_stream cu;
} gpuk__stream_slot;

typedef struct gpuk__event_slot {
    uint32_t id;
    bool timing;
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
   core knows nothing of what they hold. Each hook is optional. */
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
} gpuk__layer;
enum { GPUK__LAYER_BUILTIN, GPUK__LAYER_COUNT };
/* The layers, defined with their code further down; NULL where compiled out. */
static const gpuk__layer* gpuk__layer_of(int which);

/* The handle kinds, one row each, in the order a ctx destroy releases them (graphs before
   the kernels and memory they use, kernels before their modules, events and streams before
   memory): name, slot type, gpuk_ctx_desc field of
   the pool size, its default. Each kind has a gpuk__<name>_lookup (below) and a
   gpuk__<name>_release (in its section) that gives the slot's object back to the driver. */
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
/* gpuk_ctx_desc.staging_bytes 0. 256 MiB copies on the H100 machine moved faster through 32 MiB
   (pieces of 16 MiB) than 16 in 9 of 10 paired runs host->device, 8 of 10 device->host
   (2026-11-25, about 15% on average); copies of up to 64 MiB take the same pieces either way
   (a quarter of the copy). */
#define GPUK__STAGING_BYTES ((size_t)32 << 20)
#define GPUK__STAGING_LEAST ((size_t)64 << 10)   /* the least staging_bytes taken */
/* staging_min_bytes 0: copies from this size up are staged. On the H100 machine (bench/bench.c,
   16 CPUs, 8 copying threads) staged copies beat the driver's own from 4 MiB up host to device
   and from 1 MiB up device to host while the copying threads slept between pieces
   (2026-11-23); with them spinning, from 64 KiB up both ways, by 1.46x / 2.04x at 1 MiB but
   only 1.07x / 1.15x at 64 KiB (2026-11-25), so from 1 MiB. With one thread (staging_threads
   1) staging lost at every size; the host's memcpy is the limit. */
#define GPUK__STAGING_MIN_BYTES ((size_t)1 << 20)
/* staging_threads 0: min(GPUK__STAGING_THREADS_DEFAULT_MOST, online CPUs / 2), at least 1 (half
   the CPUs: the program's own threads keep the other half; 8 copying threads already saturate
   the memory bandwidth of most hosts) */
#define GPUK__STAGING_THREADS_DEFAULT_MOST 8u
#define GPUK__STAGING_THREADS_MOST 64u           /* the most staging_threads taken */
/* The least slice one thread copies: waking a thread costs some microseconds, about what 64 KiB
   of memcpy takes, so smaller work stays with fewer threads. */
#define GPUK__STAGING_SLICE_LEAST ((size_t)64 << 10)
/* Tests define it (an expression, nonzero: refuse this start) to fail thread starts. */
#if !defined(GPUK__THREAD_START_REFUSED)
#define GPUK__THREAD_START_REFUSED() 0
#endif
/* The staging's copy threads: each piece's memcpy (into a half or out of it) is cut into
   slices, slice 0 copied by the calling thread and slice i by worker i. Workers only copy
   memory (no driver call, no gpuk state), so they need no current context. One job at a time
   (the staging lock). A job is posted and finished through atomics, with waits that spin
   first: on the H100 machine's VM, waking 7 sleeping workers and collecting them through the
   mutex cost tens of microseconds a piece, a quarter of a piece's time (>>staging). */
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
    unsigned worker_slices;  /* atomic: slices the workers copied since the start (tests read it) */
    unsigned asleep;         /* atomic: threads now sleeping in a wait of the crew (tests read it) */
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
static void gpuk__crew_stop(gpuk__crew* cr);

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
};

/* Gives a live slot's driver objects back (the ctx is current); returns the driver's result
   and names the failing call in *out_call. After a failure the slot still describes what is
   left to release, so the call can be made again. */
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

static void* gpuk__pool_slot(const gpuk__pool* pool, uint32_t i) { return pool->slots + i * pool->stride; }

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
    pool->free_ring[(pool->free_head + pool->free_count) % (pool->size - 1u)] = gpuk__slot_index(pool, slot);
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

static gpuk_result gpuk__enter(const char* fn, gpuk_ctx* ctx); /* >>validate */
static gpuk_result gpuk__bad_handle(const char* fn, const char* what, uint32_t id);

/* Releases detached slot i (once id) of kind in the driver, then frees it. On a failure that
   is not a sticky fault the slot gets its id back, so its handle can be destroyed again; after
   a sticky fault the driver is not called and the slot is freed all the same. */
static gpuk_result gpuk__slot_release(const char* fn, gpuk_ctx* ctx, gpuk__kind kind, uint32_t i,
                                      uint32_t id) {
    gpuk__pool* pool = &ctx->pools[kind];
    void* slot = gpuk__pool_slot(pool, i);
    gpuk_result r = GPUK_OK;
    int broken;
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) && (r = gpuk__enter(fn, ctx)) == GPUK_OK) {
        const char* call = "";
        gpuk__cu_result cr = gpuk__release[kind](ctx, slot, &call);
        if (cr) r = gpuk__fail_cu(fn, call, cr, NULL);
    }
    broken = GPUK__ATOMIC_LOAD(&gpuk__g.broken);
    gpuk__mutex_lock(&ctx->lock);
    if (r == GPUK_OK || broken) gpuk__pool_free(pool, i);
    else memcpy(slot, &id, sizeof id);
    gpuk__mutex_unlock(&ctx->lock);
    /* freed only because of a fault: say so, whatever the failing call said */
    if (broken && r != (gpuk_result)broken) r = gpuk__fail_broken(fn);
    return r;
}

/* The destroy of every kind. */
static gpuk_result gpuk__handle_destroy(const char* fn, gpuk_ctx* ctx, gpuk__kind kind, uint32_t id) {
    uint32_t i;
    if (GPUK__UNLIKELY(!ctx)) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "ctx is NULL");
    if (!(i = gpuk__slot_detach(ctx, &ctx->pools[kind], id)))
        return gpuk__bad_handle(fn, gpuk__kind_name[kind], id);
    return gpuk__slot_release(fn, ctx, kind, i, id);
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
static gpuk_result gpuk__array2d(const char* fn, const gpuk_ctx* ctx, const char* what, gpuk_array2d v,
                                 size_t elem, gpuk_devptr* out, size_t* out_stride) {
    const gpuk__buffer_slot* s = gpuk__buffer_lookup(ctx, v.buffer.id);
    size_t cap, stride = v.row_stride ? v.row_stride : v.cols;
    char name[48];
    *out = 0;
    *out_stride = 0;
    if (!s) return gpuk__bad_handle(fn, what, v.buffer.id);
    if (v.row_stride && v.row_stride < v.cols)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s: row_stride %zu is less than cols %zu (rows "
                          "would overlap)", what, v.row_stride, v.cols);
    cap = s->bytes / elem;
    /* Last element: first + (rows - 1) * stride + cols - 1 < cap, checked term by term. */
    if (v.first > cap || (v.rows && v.cols && (v.cols > cap - v.first ||
                          (v.rows - 1) > (cap - v.first - v.cols) / stride)))
        return gpuk__fail(fn, GPUK_ERR_OUT_OF_BOUNDS, "%s: %zu x %zu elements (row stride %zu) from "
                          "element %zu exceed %s (%zu elements of %zu bytes)", what, v.rows, v.cols,
                          stride, v.first, gpuk__buffer_name(name, sizeof name, s), cap, elem);
    *out = s->ptr + (gpuk_devptr)v.first * elem;
    if (*out % elem) {
        gpuk_devptr bad = *out;
        *out = 0;
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s: address 0x%llx is not aligned to its %zu-byte "
                          "elements", what, (unsigned long long)bad, elem);
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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "elem_bytes is %zu; it must be 1, 2, 4, 8 or 16", elem_bytes);
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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s: elem_bytes is %zu; it must be 1, 2, 4, 8 or 16",
                          what, elem_bytes);
    if (!(s = gpuk__buffer_lookup(ctx, view.buffer.id))) return gpuk__bad_handle(fn, what, view.buffer.id);
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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc.%s = %u exceeds 65535", field, n);
    pool->size = n + 1u;
    pool->stride = stride;
    for (pool->slot_bits = 1; (1u << pool->slot_bits) <= n; pool->slot_bits++) {}
    pool->slots = (char*)gpuk__alloc(stride * pool->size);
    pool->free_ring = (uint32_t*)gpuk__alloc(sizeof(uint32_t) * pool->size);
    pool->gens = (uint32_t*)gpuk__alloc(sizeof(uint32_t) * pool->size);
    if (!pool->slots || !pool->free_ring || !pool->gens)
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the %s pool (%u slots)", field, n);
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
                         cr = GPUK__DRV.cuGraphDestroy(ctx->graph_orphans[ctx->graph_orphan_count - 1]));
        if (cr) break;
        ctx->graph_orphan_count--;
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
        gpuk__keep_first(fn, first, "cuMemFreeHost", cr = GPUK__DRV.cuMemFreeHost(ctx->staging.mem));
        if (!cr) ctx->staging.mem = NULL;
    }
}

/* Releases everything ctx holds in the driver, each object once: what is released is
   forgotten, so after a failure (GPUK_OK not returned, no sticky fault) the call can be made
   again for what is left. Objects first, each kind in GPUK__HANDLE_KINDS order; the default
   stream and the primary context reference only once every object is gone. Stops at a sticky
   fault (no driver call after it). */
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
    if (old == ~0u || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return GPUK_OK; /* no call after a fault */
    if ((cr = GPUK__DRV.cuThreadExchangeStreamCaptureMode(&old)) == 0) return GPUK_OK;
    return gpuk__fail_cu(fn, "cuThreadExchangeStreamCaptureMode", cr, "back from relaxed");
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
    if (ctx->default_stream && (cr = GPUK__DRV.cuStreamIsCapturing(ctx->default_stream, &status)) != 0)
        return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, "the ctx's default stream");
    if (status)
        return gpuk__fail_hint(fn, GPUK_ERR_CAPTURING, "end the capture with gpuk_graph_end_capture "
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
                                   "gpuk_graph_end_capture first", "stream 0x%x is capturing into a "
                                   "CUDA graph%s; the ctx is kept", id,
                                   status == GPUK__CU_STREAM_CAPTURE_ACTIVE ? "" : " (invalidated, "
                                   "not yet ended)");
    }
    return GPUK_OK;
}

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
                (r = gpuk__slot_release(fn, ctx, (gpuk__kind)k, i, id)) != GPUK_OK && first == GPUK_OK)
                first = r;
        }
    }
    if (first != GPUK_OK || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return first;
    if (ctx->default_stream) {
        gpuk__keep_first(fn, &first, "cuStreamDestroy", GPUK__DRV.cuStreamDestroy(ctx->default_stream));
        if (first != GPUK_OK) return first;
        ctx->default_stream = NULL;
    }
    /* Leave no thread pointing at a primary context it no longer holds. */
    if (GPUK__DRV.cuCtxGetCurrent(&cur) == 0 && cur == ctx->cu)
        gpuk__keep_first(fn, &first, "cuCtxSetCurrent", GPUK__DRV.cuCtxSetCurrent(NULL));
    if (first != GPUK_OK) return first;
    gpuk__keep_first(fn, &first, "cuDevicePrimaryCtxRelease", GPUK__DRV.cuDevicePrimaryCtxRelease(ctx->dev));
    return first;
}


static void gpuk__ctx_mutexes_fini(gpuk_ctx* ctx) {
    gpuk__mutex_fini(&ctx->lock);
    gpuk__mutex_fini(&ctx->staging.lock);
    gpuk__mutex_fini(&ctx->join_lock);
}

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
    if (!d.staging_threads) {
        unsigned half = gpuk__cpu_count() / 2u;
        d.staging_threads = half < 1u ? 1u : half > GPUK__STAGING_THREADS_DEFAULT_MOST ?
                                             GPUK__STAGING_THREADS_DEFAULT_MOST : half;
    }
    return d;
}

GPUK__IMPL gpuk_ctx_desc gpuk_ctx_desc_defaults(const gpuk_ctx_desc* desc) {
    return gpuk__ctx_desc_defaults(desc);
}

GPUK__IMPL gpuk_result gpuk_ctx_create(const gpuk_ctx_desc* desc, gpuk_ctx** out_ctx) {
    const char* const fn = __func__;
    gpuk_ctx_desc d;
    gpuk_ctx* ctx;
    gpuk__cu_context prev = NULL;
    gpuk_result r;
    int i;
    gpuk__cu_result cr;
    if (!out_ctx) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ctx is NULL");
    *out_ctx = NULL;
    d = gpuk__ctx_desc_defaults(desc);
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc canaries are not zero");
    if (d.staging_bytes < GPUK__STAGING_LEAST)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc.staging_bytes = %zu is below the "
                          "least, 65536 (0 -> 32 MiB; no_staging turns staging off)", d.staging_bytes);
    if (d.staging_threads > GPUK__STAGING_THREADS_MOST)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_ctx_desc.staging_threads = %u is above the "
                          "most, %u (0 -> min(8, CPUs / 2); 1 -> the calling thread only)",
                          (unsigned)d.staging_threads, GPUK__STAGING_THREADS_MOST);
    GPUK__READY(fn);
    /* Counted as live from here, so that a gpuk_shutdown on another thread cannot unload the
       driver table under a create halfway through: it fails with GPUK_ERR_BUSY instead. */
    gpuk__mutex_lock(&gpuk__lock);
    if (!gpuk__g.initialized) {
        gpuk__mutex_unlock(&gpuk__lock);
        return gpuk__fail(fn, GPUK_ERR_BUSY, "gpuk_shutdown ran on another thread as this call began");
    }
    gpuk__g.live_ctxs++;
    gpuk__mutex_unlock(&gpuk__lock);
    ctx = (gpuk_ctx*)gpuk__alloc(sizeof *ctx);
    if (!ctx) {
        r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate the ctx");
        goto fail_count;
    }
#define GPUK__POOL(name, type, field, dflt) \
    if ((r = gpuk__pool_init(fn, &ctx->pools[gpuk__kind_##name], sizeof(type), d.field, dflt, #field)) != GPUK_OK) \
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
    ctx->staging.threads = d.staging_threads;
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
    const char* const fn = __func__;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    return gpuk__enter(fn, ctx);
}

/* ---- >>staging ---- */
/* Pageable host memory cannot be reached by the DMA engines: the driver copies it through a
   bounce buffer of its own, piece after piece, so the host copy and the DMA take turns
   (measured on an H100 through CuPy: 7.6 GB/s host->device, 11.6 device->host, against about
   55 pinned). gpuk's staging lets them overlap instead: while the DMA engine moves one pinned
   half, the calling thread copies the next piece into the other half (or the previous piece
   out of it). Only the stream-less copies stage: they wait for their copy anyway, so the host
   side can run on the calling thread; an async copy of pageable memory stays the driver's
   (which makes it synchronous). The pieces run on the legacy stream like the direct copy, so
   the ordering rules of stream-less copies hold unchanged. */
typedef enum gpuk__copy_dir { GPUK__HTOD, GPUK__DTOH, GPUK__DTOD } gpuk__copy_dir;

/* The piece of a staged copy: a quarter of the copy, so that a copy of a few pieces overlaps
   too, yet at least 256 KiB (each piece costs a few microseconds of driver calls) and at least
   a least slice for each copying thread (each piece wakes them), and at most a half. */
static size_t gpuk__staging_piece(size_t half, size_t bytes, unsigned threads) {
    size_t piece = (bytes / 4u + 4095u) & ~(size_t)4095, least = (size_t)threads * GPUK__STAGING_SLICE_LEAST;
    if (least < ((size_t)256 << 10)) least = (size_t)256 << 10;
    if (piece < least) piece = least;
    return piece < half ? piece : half;
}

/* ---- the copy threads ---- */
/* A hint to the CPU inside a spin loop (x86 pause, Arm yield). */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define GPUK__CPU_RELAX() __builtin_ia32_pause()
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
#define GPUK__CPU_RELAX() __asm__ __volatile__("yield")
#else
#define GPUK__CPU_RELAX() ((void)0)
#endif
/* How long a wait of the crew spins before it sleeps: 2^14 pauses, some hundreds of
   microseconds on current x86 (a piece's DMA is 100-200), so the threads sleep soon after a
   staged copy ends. */
#define GPUK__CREW_SPINS (1u << 14)

/* Until *word != value (or, with quit, the crew quits): spins, then sleeps on cond. */
static unsigned gpuk__crew_wait(gpuk__crew* cr, const unsigned* word, unsigned value, gpuk__cond* cond,
                                int quit) {
    unsigned i, v;
    for (i = 0; i < GPUK__CREW_SPINS; i++) {
        if ((v = GPUK__ATOMIC_LOAD(word)) != value || (quit && GPUK__ATOMIC_LOAD(&cr->quit))) return v;
        GPUK__CPU_RELAX();
    }
    gpuk__mutex_lock(&cr->lock);
    while ((v = GPUK__ATOMIC_LOAD(word)) == value && !(quit && GPUK__ATOMIC_LOAD(&cr->quit))) {
        GPUK__ATOMIC_ADD(&cr->asleep, 1u);
        gpuk__cond_wait(cond, &cr->lock);
        GPUK__ATOMIC_ADD(&cr->asleep, (unsigned)-1);
    }
    gpuk__mutex_unlock(&cr->lock);
    return v;
}

/* A worker: takes its index, then copies slice `index` of each job posted and acks it, until
   quit. */
GPUK__THREAD_MAIN(gpuk__crew_main) {
    gpuk__crew* cr = (gpuk__crew*)gpuk__thread_arg;
    unsigned seen = 0, index;
    gpuk__mutex_lock(&cr->lock);
    index = ++cr->started;
    gpuk__mutex_unlock(&cr->lock);
    for (;;) {
        seen = gpuk__crew_wait(cr, &cr->gen, seen, &cr->go, 1);
        if (GPUK__ATOMIC_LOAD(&cr->quit)) break;
        if (index < cr->slices) {
            size_t off = index * cr->slice, n = cr->bytes - off < cr->slice ? cr->bytes - off : cr->slice;
            memcpy(cr->dst + off, cr->src + off, n);
            GPUK__ATOMIC_ADD(&cr->worker_slices, 1u);
        }
        if (GPUK__ATOMIC_ADD_ACQREL(&cr->acks, 1u) + 1u == cr->workers) { /* the last: wake a sleeping caller */
            gpuk__mutex_lock(&cr->lock);
            gpuk__cond_signal(&cr->done);
            gpuk__mutex_unlock(&cr->lock);
        }
    }
    GPUK__THREAD_END;
}

/* Starts up to threads - 1 workers (with the staging memory, by its first copy). Threads that
   cannot start are done without: the copies use fewer (the calling thread alone at worst),
   and the logger hears once at GPUK_LOG_WARN. Never fails. */
static void gpuk__crew_start(const char* fn, gpuk__crew* cr, unsigned threads) {
    char msg[256];
    if (threads <= 1u) return;
    gpuk__mutex_init(&cr->lock);
    gpuk__cond_init(&cr->go);
    gpuk__cond_init(&cr->done);
    cr->owner_pid = gpuk__process_id();
    cr->live = 1;
    while (cr->workers < threads - 1u) {
        if (GPUK__THREAD_START_REFUSED() || !gpuk__thread_start(&cr->th[cr->workers], gpuk__crew_main, cr)) break;
        cr->workers++;
    }
    if (cr->workers == threads - 1u) return;
    gpuk__fmt(msg, sizeof msg, 0, "%s: could start only %u of the %u staging copy threads asked for "
              "(gpuk_ctx_desc.staging_threads %u); this ctx's staged copies use %u thread%s", fn,
              cr->workers, threads - 1u, threads, cr->workers + 1u, cr->workers ? "s" : "");
    gpuk__log(GPUK_LOG_WARN, 0, msg);
}

/* Joins the workers (ctx destroy). A fork child has none of its parent's threads, and their
   lock may have been held at the fork: it leaves them alone. */
static void gpuk__crew_stop(gpuk__crew* cr) {
    unsigned i;
    if (!cr->live || cr->owner_pid != gpuk__process_id()) return;
    gpuk__mutex_lock(&cr->lock);
    GPUK__ATOMIC_STORE(&cr->quit, 1);
    gpuk__cond_broadcast(&cr->go);
    gpuk__mutex_unlock(&cr->lock);
    for (i = 0; i < cr->workers; i++) gpuk__thread_join(cr->th[i]);
    cr->workers = 0;
    gpuk__cond_fini(&cr->go);
    gpuk__cond_fini(&cr->done);
    gpuk__mutex_fini(&cr->lock);
    cr->live = 0;
}

/* memcpy(dst, src, bytes) by the calling thread and the workers: as many slices as threads
   (fewer when slices would be under GPUK__STAGING_SLICE_LEAST), each at an offset that is a
   multiple of 4 KiB (the pinned side's pages and cache lines are a thread's alone); returns
   once every slice is copied. */
static void gpuk__crew_memcpy(gpuk__crew* cr, void* dst, const void* src, size_t bytes) {
    size_t n = bytes / GPUK__STAGING_SLICE_LEAST, slice;
    if (n > cr->workers + 1u) n = cr->workers + 1u;
    if (n <= 1u) {
        memcpy(dst, src, bytes);
        return;
    }
    slice = ((bytes + n - 1u) / n + 4095u) & ~(size_t)4095;
    /* every worker acked the last job: none reads these until gen moves */
    cr->dst = (char*)dst;
    cr->src = (const char*)src;
    cr->bytes = bytes;
    cr->slice = slice;
    cr->slices = (unsigned)((bytes + slice - 1u) / slice);
    GPUK__ATOMIC_STORE(&cr->acks, 0u);
    GPUK__ATOMIC_STORE(&cr->gen, GPUK__ATOMIC_LOAD(&cr->gen) + 1u); /* posted */
    gpuk__mutex_lock(&cr->lock); /* wakes the workers that stopped spinning */
    gpuk__cond_broadcast(&cr->go);
    gpuk__mutex_unlock(&cr->lock);
    memcpy(dst, src, slice); /* slice 0; there are at least two */
    for (;;) { /* until every worker has acked (acks only grows, up to workers) */
        unsigned a = GPUK__ATOMIC_LOAD(&cr->acks);
        if (a == cr->workers) break;
        gpuk__crew_wait(cr, &cr->acks, a, &cr->done, 0);
    }
}

/* The first staged copy of a ctx allocates the halves and their events. Where that fails
   (pinned memory is a scarce resource), staging stays off for the ctx: the copy, and every
   later one, goes the driver's way; the logger hears of it once (GPUK_LOG_WARN). Returns a
   sticky fault only. Called with the staging lock held. */
static gpuk_result gpuk__staging_setup(const char* fn, gpuk__staging* st) {
    void* mem = NULL;
    gpuk__cu_event ev[2] = { NULL, NULL };
    const char* call = "cuMemHostAlloc";
    gpuk__cu_result cr;
    char msg[256];
    /* flags 0: pinned for this primary context, the only one that copies through it */
    if ((cr = GPUK__DRV.cuMemHostAlloc(&mem, 2u * st->half, 0u)) == 0) {
        call = "cuEventCreate";
        if ((cr = GPUK__DRV.cuEventCreate(&ev[0], GPUK__CU_EVENT_DISABLE_TIMING)) == 0)
            cr = GPUK__DRV.cuEventCreate(&ev[1], GPUK__CU_EVENT_DISABLE_TIMING);
    }
    if (cr == 0) {
        st->mem = (char*)mem;
        st->ev[0] = ev[0];
        st->ev[1] = ev[1];
        gpuk__crew_start(fn, &st->crew, st->threads);
        GPUK__ATOMIC_STORE(&st->state, GPUK__STAGING_READY);
        return GPUK_OK;
    }
    if (gpuk__is_sticky((int)cr)) return gpuk__fail_cu(fn, call, cr, "allocating pinned staging memory");
    if (ev[0]) GPUK__DRV.cuEventDestroy(ev[0]);
    if (mem) GPUK__DRV.cuMemFreeHost(mem);
    GPUK__ATOMIC_STORE(&st->state, GPUK__STAGING_OFF);
    gpuk__fmt(msg, sizeof msg, 0, "%s: cannot allocate %zu bytes of pinned staging memory (%s: %s "
              "(%d)); this ctx's pageable copies take the driver's own, slower way from now on",
              fn, 2u * st->half, call, gpuk_result_str((gpuk_result)cr), (int)cr);
    gpuk__log(GPUK_LOG_WARN, (int)cr, msg);
    return GPUK_OK;
}

/* The staged copy itself: pieces j = 0 .. m-1, piece j through half j % 2. Host to device:
   piece j is copied into its half once the DMA of piece j - 2 out of that half is done, then
   queued. Device to host: piece j is queued before piece j - 1 is copied out (after its DMA),
   so the DMA of one overlaps the host copy of the other. Returns once every piece is done. On
   a failure nothing queued may outlive the call (the next copy reuses the halves): the legacy
   stream is waited for, and if even that fails staging stays off for the ctx (its halves are
   freed with the ctx, after its device sync). The destination then holds part of the data. */
static gpuk_result gpuk__staged_run(const char* fn, gpuk__staging* st, gpuk__copy_dir dir,
                                    gpuk_devptr dev, char* host, size_t bytes) {
    const size_t piece = gpuk__staging_piece(st->half, bytes, st->crew.workers + 1u);
    const size_t m = (bytes + piece - 1u) / piece;
    const char* call = "";
    gpuk__cu_result cr = 0;
    size_t j, off = 0, n = 0;
    char detail[96];
    gpuk_result r;
    for (j = 0; j <= m && !cr; j++) {
        char* half = st->mem + (j & 1u) * st->half;
        off = j * piece;
        n = j < m ? (bytes - off < piece ? bytes - off : piece) : 0;
        if (dir == GPUK__HTOD && j < m) {
            if (j >= 2 && (cr = GPUK__DRV.cuEventSynchronize(st->ev[j & 1u])) != 0) {
                call = "cuEventSynchronize";
                break;
            }
            gpuk__crew_memcpy(&st->crew, half, host + off, n);
            call = "cuMemcpyHtoDAsync";
            cr = GPUK__DRV.cuMemcpyHtoDAsync(dev + off, half, n, GPUK__CU_STREAM_LEGACY);
        } else if (dir == GPUK__DTOH) {
            if (j < m) {
                call = "cuMemcpyDtoHAsync";
                cr = GPUK__DRV.cuMemcpyDtoHAsync(half, dev + off, n, GPUK__CU_STREAM_LEGACY);
            }
            if (!cr && j < m && (cr = GPUK__DRV.cuEventRecord(st->ev[j & 1u], GPUK__CU_STREAM_LEGACY)) != 0)
                call = "cuEventRecord";
            if (!cr && j > 0) { /* piece j - 1 out of the other half */
                size_t prev = (j - 1u) * piece, k = (j - 1u) & 1u;
                size_t pn = bytes - prev < piece ? bytes - prev : piece;
                if ((cr = GPUK__DRV.cuEventSynchronize(st->ev[k])) != 0) {
                    call = "cuEventSynchronize";
                    off = prev;
                    break;
                }
                gpuk__crew_memcpy(&st->crew, host + prev, st->mem + k * st->half, pn);
            }
            continue;
        }
        if (!cr && j < m && (cr = GPUK__DRV.cuEventRecord(st->ev[j & 1u], GPUK__CU_STREAM_LEGACY)) != 0)
            call = "cuEventRecord";
    }
    if (!cr) {
        /* like the direct copy: done, and the legacy stream's earlier work with it */
        call = "cuStreamSynchronize";
        cr = GPUK__DRV.cuStreamSynchronize(GPUK__CU_STREAM_LEGACY);
        if (!cr) return GPUK_OK;
        off = bytes;
    }
    gpuk__fmt(detail, sizeof detail, 0, "staged copy of %zu bytes, at byte %zu", bytes, off);
    r = gpuk__fail_cu(fn, call, cr, detail);
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.broken) && GPUK__DRV.cuStreamSynchronize(GPUK__CU_STREAM_LEGACY) != 0)
        GPUK__ATOMIC_STORE(&st->state, GPUK__STAGING_OFF);
    return r;
}

/* A stream-less copy between host memory and dev (gpuk_buffer_write/read, a create's upload):
   on the legacy stream, after the work queued earlier on it and on every blocking stream, and
   waited for. Pageable host memory of at least the ctx's staging_min_bytes goes through the
   staging halves when they are free; everything else (pinned, registered or managed memory,
   small copies, a copy while another thread's uses the halves) is one driver copy. */
static gpuk_result gpuk__copy_host_sync(const char* fn, gpuk_ctx* ctx, gpuk__copy_dir dir,
                                        gpuk_devptr dev, void* host, size_t bytes, const char* detail) {
    gpuk__staging* st = &ctx->staging;
    const char* cu_fn;
    gpuk__cu_result cr;
    if (st->min_bytes && bytes >= st->min_bytes && GPUK__ATOMIC_LOAD(&st->state) != GPUK__STAGING_OFF) {
        /* memory the driver does not know is pageable; it knows pinned, registered, managed */
        unsigned int type = 0;
        cr = GPUK__DRV.cuPointerGetAttribute(&type, GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                             (gpuk_devptr)(uintptr_t)host);
        if (cr && gpuk__is_sticky((int)cr)) return gpuk__fail_cu(fn, "cuPointerGetAttribute", cr, NULL);
        if (cr && gpuk__mutex_trylock(&st->lock)) {
            gpuk_result r = GPUK_OK;
            if (st->state == GPUK__STAGING_UNSET) r = gpuk__staging_setup(fn, st);
            if (r == GPUK_OK && st->state == GPUK__STAGING_READY) {
                r = gpuk__staged_run(fn, st, dir, dev, (char*)host, bytes);
                gpuk__mutex_unlock(&st->lock);
                return r;
            }
            gpuk__mutex_unlock(&st->lock);
            if (r != GPUK_OK) return r;
        }
    }
    if (dir == GPUK__HTOD) {
        cu_fn = "cuMemcpyHtoDAsync";
        cr = GPUK__DRV.cuMemcpyHtoDAsync(dev, host, bytes, GPUK__CU_STREAM_LEGACY);
    } else {
        cu_fn = "cuMemcpyDtoHAsync";
        cr = GPUK__DRV.cuMemcpyDtoHAsync(host, dev, bytes, GPUK__CU_STREAM_LEGACY);
    }
    if (!cr) {
        cu_fn = "cuStreamSynchronize";
        cr = GPUK__DRV.cuStreamSynchronize(GPUK__CU_STREAM_LEGACY);
    }
    return cr ? gpuk__fail_cu(fn, cu_fn, cr, detail) : GPUK_OK;
}

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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "wrapped device pointer 0x%llx is memory of device "
                          "%d; this ctx is on device %d", p, ordinal, ctx->info.ordinal);
    if (!gpuk__tolerate(fn, "cuPointerGetAttribute", cr) && gpuk__is_sticky((int)cr))
        return (gpuk_result)cr;
    cr = GPUK__DRV.cuPointerGetAttribute((void*)&owner, GPUK__CU_POINTER_ATTRIBUTE_CONTEXT, p);
    /* NULL: memory of no one context (e.g. cuMemMap'ed), usable from any on its device */
    if (cr == 0 && owner && owner != ctx->cu)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "wrapped device pointer 0x%llx belongs to another "
                          "CUDA context of device %d (gpuk uses the device's primary context)", p,
                          ctx->info.ordinal);
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
static gpuk_result gpuk__check_data(const char* fn, const char* desc_name, gpuk_range data, size_t bytes) {
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
    gpuk__copy_text(s->label, sizeof s->label, d.label);
    if (d.wrap && !d.bytes) {
        r = gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "wrapping device pointer 0x%llx needs desc.bytes",
                       d.wrap);
    } else if ((r = gpuk__check_data(__func__, "gpuk_buffer_desc", d.data, d.bytes)) != GPUK_OK) {
    } else if (d.wrap) {
        r = gpuk__wrap_check_ptr(__func__, ctx, d.wrap);
    } else if (d.bytes && (r = gpuk__enter(__func__, ctx)) == GPUK_OK &&
               (cr = GPUK__DRV.cuMemAlloc(&s->ptr, d.bytes)) != 0) {
        char what[80];
        if (d.label && *d.label) gpuk__fmt(what, sizeof what, 0, "%zu bytes for buffer '%s'", d.bytes, d.label);
        else gpuk__fmt(what, sizeof what, 0, "%zu bytes for an unlabelled buffer", d.bytes);
        s->ptr = 0;
        r = gpuk__fail_cu(__func__, "cuMemAlloc", cr, what);
    }
    if (r == GPUK_OK && d.data.bytes) {
        /* Like gpuk_buffer_write: on the legacy stream, after earlier work (a wrapped
           allocation may be in use), waited for; staged where pageable and large. */
        if ((r = gpuk__enter(__func__, ctx)) == GPUK_OK)
            r = gpuk__copy_host_sync(__func__, ctx, GPUK__HTOD, s->ptr, (void*)(uintptr_t)d.data.ptr,
                                     d.data.bytes, "uploading desc.data");
        if (r != GPUK_OK && s->owned && s->ptr && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) GPUK__DRV.cuMemFree(s->ptr);
    }
    return gpuk__slot_end(ctx, gpuk__kind_buffer, s, r, &out_buffer->id);
}

static gpuk__cu_result gpuk__buffer_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    const gpuk__buffer_slot* s = (const gpuk__buffer_slot*)slot;
    (void)ctx;
    *out_call = "cuMemFree";
    return s->owned && s->ptr ? GPUK__DRV.cuMemFree(s->ptr) : 0;
}

GPUK__IMPL gpuk_result gpuk_buffer_destroy(gpuk_ctx* ctx, gpuk_buffer buffer) {
    return gpuk__handle_destroy(__func__, ctx, gpuk__kind_buffer, buffer.id);
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

/* Every buffer copy: validate, then one async driver call on stream (of ctx, which owns dst);
   wait when sync. The source buffer is looked up in src_ctx, ctx itself for every copy so
   far: a copy between the buffers of two ctxs (devices) takes the same path. A sync
   (stream-less) copy runs on the legacy stream, so that it starts after the work queued
   earlier on the ctx default stream and on every blocking stream, like cudaMemcpy; stream is
   then only validated. */
static gpuk_result gpuk__copy(const char* fn, gpuk_ctx* ctx, gpuk_stream stream, int sync,
                              gpuk__copy_dir dir, uint32_t dst_id, size_t dst_off, void* host,
                              const gpuk_ctx* src_ctx, uint32_t src_id, size_t src_off, size_t bytes) {
    const gpuk__buffer_slot* d = NULL;
    const gpuk__buffer_slot* s = NULL;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    const char* cu_fn;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (dir != GPUK__DTOH && !(d = gpuk__buffer_lookup(ctx, dst_id))) return gpuk__bad_handle(fn, "dst buffer", dst_id);
    if (dir != GPUK__HTOD && (!src_ctx || !(s = gpuk__buffer_lookup(src_ctx, src_id))))
        return gpuk__bad_handle(fn, "src buffer", src_id);
    if ((r = gpuk__stream_resolve(fn, ctx, stream, &cs)) != GPUK_OK) return r;
    if (d && !gpuk__in_bounds(dst_off, bytes, d->bytes)) return gpuk__bounds_fail(fn, d, dst_off, bytes);
    if (s && !gpuk__in_bounds(src_off, bytes, s->bytes)) return gpuk__bounds_fail(fn, s, src_off, bytes);
    if (bytes == 0) return GPUK_OK;
    /* cuMemcpyDtoD promises no memmove semantics; compared as addresses, so that wrapped
       views of one allocation count too */
    if (dir == GPUK__DTOD && d->ptr + dst_off < s->ptr + src_off + bytes &&
        s->ptr + src_off < d->ptr + dst_off + bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the source ('%s' + %zu) and destination ('%s' + %zu) "
                          "of %zu bytes overlap; the driver's device copy does not allow that (copy "
                          "through a second buffer)", s->label, src_off, d->label, dst_off, bytes);
    if (sync) cs = GPUK__CU_STREAM_LEGACY;
    if (dir != GPUK__DTOD && !host)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is NULL", dir == GPUK__HTOD ? "src" : "dst");
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (sync && dir != GPUK__DTOD)
        return gpuk__copy_host_sync(fn, ctx, dir, dir == GPUK__HTOD ? d->ptr + dst_off : s->ptr + src_off,
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
            cr = GPUK__DRV.cuMemcpyPeer(d->ptr + dst_off, ctx->cu, s->ptr + src_off, src_ctx->cu, bytes);
            return cr ? gpuk__fail_cu(fn, cu_fn, cr, NULL) : GPUK_OK;
        }
        cu_fn = "cuMemcpyPeerAsync";
        cr = GPUK__DRV.cuMemcpyPeerAsync(d->ptr + dst_off, ctx->cu, s->ptr + src_off, src_ctx->cu, bytes, cs);
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
    if (!out_ptr || !out_bytes) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_ptr or out_bytes is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(s = gpuk__buffer_lookup(ctx, src.id))) return gpuk__bad_handle(fn, "src buffer", src.id);
    bytes = s->bytes;
    if (bytes == 0) return GPUK_OK;
    if (!(host = gpuk__alloc(bytes))) {
        char name[48];
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate %zu bytes of host memory for %s",
                          bytes, gpuk__buffer_name(name, sizeof name, s));
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
    if (!live_a) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is not a live ctx (destroyed?)", a_name);
    if (!live_b) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "%s is not a live ctx (destroyed?)", b_name);
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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "ctx and peer are both on device %d (one primary "
                          "context): no peer access is needed", ctx->info.ordinal);
    if ((cr = GPUK__DRV.cuDeviceCanAccessPeer(&can, ctx->dev, peer->dev)) != 0)
        return gpuk__fail_cu(fn, "cuDeviceCanAccessPeer", cr, NULL);
    if (!can)
        return gpuk__fail(fn, (int)GPUK__CU_ERROR_PEER_ACCESS_UNSUPPORTED, "device %d cannot access "
                          "device %d's memory directly (no peer path between them); "
                          "gpuk_buffer_copy_peer still works, staged through the host by the driver",
                          ctx->info.ordinal, peer->info.ordinal);
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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "elem_bytes is %u; it must be 1, 2 or 4", elem_bytes);
    if (elem_bytes < 4 && value >> (8 * elem_bytes))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "value 0x%x does not fit in %u bytes", value, elem_bytes);
    if (count > (size_t)-1 / elem_bytes || !gpuk__in_bounds(byte_offset, count * elem_bytes, d->bytes)) {
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
    if (elem_bytes == 1) cr = GPUK__DRV.cuMemsetD8Async(d->ptr + byte_offset, (unsigned char)value, count, cs);
    else if (elem_bytes == 2) cr = GPUK__DRV.cuMemsetD16Async(d->ptr + byte_offset, (unsigned short)value, count, cs);
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
        if (s->registered) cr = GPUK__DRV.cuMemHostRegister(s->ptr, d.bytes, GPUK__CU_MEMHOSTREGISTER_PORTABLE);
        else cr = GPUK__DRV.cuMemHostAlloc(&s->ptr, d.bytes, GPUK__CU_MEMHOSTALLOC_PORTABLE);
        if (cr) {
            if (!s->registered) s->ptr = NULL;
            r = gpuk__fail_cu(__func__, s->registered ? "cuMemHostRegister" : "cuMemHostAlloc", cr, NULL);
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
            r = gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "wrapped stream %p belongs to another CUDA "
                           "context (%p; this ctx's is the primary context %p of device %d)",
                           d.wrap, (void*)owner, (void*)ctx->cu, ctx->info.ordinal);
        }
    }
    /* blocking by default (flags 0): ordered with gpuk's stream-less calls */
    if (s->owned && (r = gpuk__enter(__func__, ctx)) == GPUK_OK &&
        (cr = GPUK__DRV.cuStreamCreateWithPriority(&s->cu, d.non_blocking ? (unsigned)GPUK__CU_STREAM_NON_BLOCKING : 0u,
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
            layer->stream_release(__func__, ctx, ctx->layer[i], (uint32_t)((size_t)((char*)slot - pool->slots) / pool->stride),
                                  &first);
    }
    *out_call = "cuMemFree";
    if (first != GPUK_OK) return first > 0 ? (gpuk__cu_result)first : (gpuk__cu_result)GPUK__CU_ERROR_INVALID_VALUE;
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
    if (!(e = gpuk__event_lookup(event_ctx, event.id))) return gpuk__bad_handle(fn, "event", event.id);
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
    if (count && !others) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "others is NULL but count is %u", count);
    for (i = 0; i < count; i++) /* every handle checked before the driver sees any */
        if (others[i].id && !gpuk__stream_lookup(ctx, others[i].id))
            return gpuk__fail(fn, GPUK_ERR_INVALID_HANDLE, "others[%u]: stream handle 0x%x is destroyed or "
                              "belongs to another ctx", i, others[i].id);
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

GPUK__IMPL gpuk_result gpuk_stream_join(gpuk_ctx* ctx, gpuk_stream stream, const gpuk_stream* others,
                                        uint32_t count) {
    return gpuk__stream_fan(__func__, ctx, stream, others, count, 1);
}

GPUK__IMPL gpuk_result gpuk_stream_fork(gpuk_ctx* ctx, gpuk_stream stream, const gpuk_stream* others,
                                        uint32_t count) {
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

GPUK__IMPL gpuk_result gpuk_stream_priority_range(gpuk_ctx* ctx, int* out_least, int* out_greatest) {
    const char* const fn = __func__;
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
    s->timing = !(desc && desc->no_timing);
    flags = (s->timing ? 0u : (unsigned)GPUK__CU_EVENT_DISABLE_TIMING) |
            (desc && desc->blocking_sync ? (unsigned)GPUK__CU_EVENT_BLOCKING_SYNC : 0u);
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
static gpuk_result gpuk__event_record(const char* fn, gpuk_ctx* ctx, gpuk_stream stream, gpuk_event event) {
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
            return cr ? gpuk__fail_cu(fn, "cuEventRecordWithFlags", cr, "inside a stream capture") : GPUK_OK;
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
         if (!((e) = gpuk__event_lookup(ctx, (event).id))) return gpuk__bad_handle(fn, "event", (event).id); } while (0)

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
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "an event was created with no_timing");
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
    if (timer->start.id && (a = gpuk__handle_destroy(fn, ctx, gpuk__kind_event, timer->start.id)) == GPUK_OK)
        timer->start.id = 0;
    if (timer->stop.id && (b = gpuk__handle_destroy(fn, ctx, gpuk__kind_event, timer->stop.id)) == GPUK_OK)
        timer->stop.id = 0;
    if (a == GPUK_OK && b == GPUK_OK) memset(timer, 0, sizeof *timer);
    return b != GPUK_OK ? b : a; /* the last failure: the one gpuk_last_error() tells */
}

/* A timer's events, checked under the timer call's own name before the event calls run. */
static gpuk_result gpuk__timer_check(const char* fn, const gpuk_ctx* ctx, const gpuk_timer* t) {
    GPUK__CTX_CHECK(fn, ctx);
    if (!gpuk__event_lookup(ctx, t->start.id)) return gpuk__bad_handle(fn, "timer start event", t->start.id);
    if (!gpuk__event_lookup(ctx, t->stop.id)) return gpuk__bad_handle(fn, "timer stop event", t->stop.id);
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
    if (!timer || !out_ms) return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "timer or out_ms is NULL");
    if ((r = gpuk__timer_check(__func__, ctx, timer)) != GPUK_OK) return r;
    if ((r = gpuk__event_record(__func__, ctx, timer->stream, timer->stop)) != GPUK_OK) return r;
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

#define GPUK__PTX_TABLE_LAST (sizeof gpuk__ptx_cuda / sizeof gpuk__ptx_cuda[0] - 1)

/* The newest PTX ISA version (major * 10 + minor) a driver for CUDA version cuda loads. */
static int gpuk__ptx_of_driver(int cuda) {
    size_t i;
    int ptx = gpuk__ptx_cuda[0].ptx;
    for (i = 0; i <= GPUK__PTX_TABLE_LAST; i++)
        if (gpuk__ptx_cuda[i].cuda <= cuda) ptx = gpuk__ptx_cuda[i].ptx;
    return ptx;
}

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
   Returns 1 with the numbers (target_sm 0 if none found; arch_specific 1 for sm_XXa, PTX that
   only compute capability XX runs), 0 if there is no valid .version. */
static int gpuk__ptx_header(const char* text, size_t len, int* major, int* minor, int* target_sm,
                            int* arch_specific) {
    size_t i = 0;
    *major = *minor = *target_sm = *arch_specific = 0;
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
                *arch_specific = i < len && text[i] == 'a';
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
        int major, minor, sm, arch_specific, need;
        if (len == 0) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': the PTX text is empty", label);
        if (!gpuk__ptx_header((const char*)bytes, len, &major, &minor, &sm, &arch_specific))
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': no valid .version directive "
                              "(major.minor) at the head of the PTX text (not PTX?)", label);
        need = gpuk__ptx_needs_cuda(major, minor);
        if (need > gpuk__g.driver_version)
            return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "module '%s': PTX .version %d.%d needs a "
                              "driver for CUDA %d.%d or newer; this driver supports CUDA %d.%d", label,
                              major, minor, need / 1000, need % 1000 / 10,
                              gpuk__g.driver_version / 1000, gpuk__g.driver_version % 1000 / 10);
        /* Newer than gpuk's table: a driver newer than the table's last entry may know it (let
           it judge); an older one cannot. */
        if (need < 0 && gpuk__g.driver_version <= gpuk__ptx_cuda[GPUK__PTX_TABLE_LAST].cuda) {
            int known = gpuk__ptx_cuda[GPUK__PTX_TABLE_LAST].ptx;
            int loads = gpuk__ptx_of_driver(gpuk__g.driver_version);
            return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "module '%s': PTX .version %d.%d is newer than "
                              "any PTX version gpuk knows (%d.%d); this driver supports CUDA %d.%d (PTX "
                              ".version %d.%d and older)", label, major, minor, known / 10, known % 10,
                              gpuk__g.driver_version / 1000, gpuk__g.driver_version % 1000 / 10,
                              loads / 10, loads % 10);
        }
        if (sm > ctx->info.cc_major * 10 + ctx->info.cc_minor)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': PTX .target sm_%d%s is newer than "
                              "the device (sm_%d%d)", label, sm, arch_specific ? "a" : "",
                              ctx->info.cc_major, ctx->info.cc_minor);
        /* sm_90a's instructions (wgmma, setmaxnreg) exist on 9.0 alone: newer drivers refuse it
           for 10.x with a JIT error that says less */
        if (arch_specific && sm != ctx->info.cc_major * 10 + ctx->info.cc_minor)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': PTX .target sm_%da is "
                              "architecture-specific: it runs on compute capability %d.%d only, not on "
                              "this device (sm_%d%d)", label, sm, sm / 10, sm % 10,
                              ctx->info.cc_major, ctx->info.cc_minor);
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

/* Detects the image kind where it is 0 and names an unlabelled module "". image.bytes stays 0
   for NUL-terminated PTX (the loader then passes the caller's text without a copy). */
static gpuk_module_desc gpuk__module_desc_defaults(const gpuk_module_desc* desc) {
    gpuk_module_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.label) d.label = "";
    if (d.kind == GPUK_IMAGE_DEFAULT && d.image.ptr) {
        const unsigned char* b = (const unsigned char*)d.image.ptr;
        size_t len = d.image.bytes ? d.image.bytes : strlen((const char*)b);
        if (len >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') d.kind = GPUK_IMAGE_CUBIN;
        /* fatbin (0xBA55ED50) or its fatbinc wrapper (0x466243B1), little endian */
        else if (len >= 4 && ((b[0] == 0x50 && b[1] == 0xED && b[2] == 0x55 && b[3] == 0xBA) ||
                              (b[0] == 0xB1 && b[1] == 0x43 && b[2] == 0x62 && b[3] == 0x46)))
            d.kind = GPUK_IMAGE_FATBIN;
        else d.kind = GPUK_IMAGE_PTX;
    }
    return d;
}

GPUK__IMPL gpuk_module_desc gpuk_module_desc_defaults(const gpuk_module_desc* desc) {
    return gpuk__module_desc_defaults(desc);
}

/* A module slot holding image, loaded by gpuk__jit_load and published into *out_id. */
static gpuk_result gpuk__module_add(const char* fn, gpuk_ctx* ctx, const unsigned char* bytes,
                                    size_t len, size_t given_bytes, int is_ptx, const char* label,
                                    const gpuk__nvrtc_entry* compiled, uint32_t* out_id) {
    gpuk__module_slot* s;
    gpuk_result r;
    if (!(s = (gpuk__module_slot*)gpuk__slot_begin(fn, ctx, gpuk__kind_module, &r))) return r;
    gpuk__copy_text(s->label, sizeof s->label, label);
    s->compiled = compiled;
    r = gpuk__jit_load(fn, ctx, bytes, len, given_bytes, is_ptx, label, &s->cu);
    return gpuk__slot_end(ctx, gpuk__kind_module, s, r, out_id);
}

GPUK__IMPL gpuk_result gpuk_module_load(gpuk_ctx* ctx, const gpuk_module_desc* desc,
                                        gpuk_module* out_module) {
    const char* const fn = __func__;
    gpuk_module_desc d;
    const unsigned char* bytes;
    gpuk_image_kind kind;
    size_t len;
    const char* label;
    if (!out_module) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_module is NULL");
    out_module->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    d = gpuk__module_desc_defaults(desc);
    if (gpuk__desc_canaries_bad(d._start_canary, d._end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_module_desc canaries are not zero");
    if (!d.image.ptr) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.image.ptr is NULL");
    if ((unsigned)d.kind >= (unsigned)GPUK_IMAGE_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.kind %d is out of range", (int)d.kind);
    label = d.label;
    bytes = (const unsigned char*)d.image.ptr;
    len = d.image.bytes ? d.image.bytes : strlen((const char*)bytes);
    kind = d.kind;
    if (kind == GPUK_IMAGE_PTX && len == 0)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': the PTX text is empty", label);
    return gpuk__module_add(fn, ctx, bytes, len, desc->image.bytes, kind == GPUK_IMAGE_PTX, label,
                            NULL, &out_module->id);
}

static gpuk__cu_result gpuk__module_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    (void)ctx;
    *out_call = "cuModuleUnload";
    return GPUK__DRV.cuModuleUnload(((const gpuk__module_slot*)slot)->cu);
}

GPUK__IMPL gpuk_result gpuk_module_unload(gpuk_ctx* ctx, gpuk_module module) {
    gpuk_result r = gpuk__handle_destroy(__func__, ctx, gpuk__kind_module, module.id);
    gpuk__pool* kp;
    uint32_t i;
    if (r != GPUK_OK && (r == GPUK_ERR_INVALID_HANDLE || r == GPUK_ERR_INVALID_ARG ||
                         !GPUK__ATOMIC_LOAD(&gpuk__g.broken)))
        return r; /* the module is still there (or never was) */
    /* Its kernels die with it: a launch through one would reach freed driver state. */
    kp = &ctx->pools[gpuk__kind_kernel];
    gpuk__mutex_lock(&ctx->lock);
    for (i = 1; i < kp->size; i++) {
        const gpuk__kernel_slot* k = (const gpuk__kernel_slot*)gpuk__pool_slot(kp, i);
        if (k->id && k->module_id == module.id) gpuk__pool_free(kp, i);
    }
    gpuk__mutex_unlock(&ctx->lock);
    return r;
}

/* ---- >>nvrtc ---- */
/* NVRTC is loaded by the first compile (or gpuk_nvrtc_version); a failed load is not
   remembered, so a later call tries again (after the library was installed, say). */
static gpuk_result gpuk__nvrtc_load(const char* fn) {
    uint32_t features = 0;
    int n = 0;
    gpuk__lib_row row;
    gpuk_result r = gpuk__lib_load(&gpuk__nvrtc_lib, gpuk__nv.path[0] ? gpuk__nv.path : NULL,
                                   gpuk__nv.get_proc, gpuk__nv.get_proc_user_data, fn, &features);
    int major = 0, minor = 0;
    if (r) return r;
    if (gpuk__nv.fns.nvrtcVersion(&major, &minor) != 0) {
        gpuk__lib_forget(&gpuk__nvrtc_lib);
        return gpuk__fail(fn, GPUK_ERR_NO_NVRTC, "nvrtcVersion failed");
    }
    gpuk__nv.version = major * 1000 + minor * 10;
    gpuk__nv.num_archs = 0;
    if (gpuk__nv.fns.nvrtcGetNumSupportedArchs && gpuk__nv.fns.nvrtcGetSupportedArchs &&
        gpuk__nv.fns.nvrtcGetNumSupportedArchs(&n) == 0 && n > 0 &&
        n <= (int)(sizeof gpuk__nv.archs / sizeof gpuk__nv.archs[0]) &&
        gpuk__nv.fns.nvrtcGetSupportedArchs(gpuk__nv.archs) == 0)
        gpuk__nv.num_archs = n;
    row.symbol = row.export_name = "nvrtcGetErrorString";
    row.version = 7000;
    row.required = 0;
    row.offset = 0;
    gpuk__sym_to_fn(&gpuk__nv.error_string, sizeof gpuk__nv.error_string,
                    gpuk__lib_resolve(&gpuk__nvrtc_lib, &row));
    gpuk__nv.lib.keep = 1; /* its code ran: never closed */
    GPUK__ATOMIC_STORE(&gpuk__nv.loaded, 1);
    return GPUK_OK;
}

static gpuk_result gpuk__nvrtc_ready(const char* fn) {
    gpuk_result r = GPUK_OK;
    if (GPUK__ATOMIC_LOAD(&gpuk__nv.loaded)) return GPUK_OK;
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    if (!gpuk__nv.loaded) r = gpuk__nvrtc_load(fn);
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
    return r;
}

GPUK__IMPL gpuk_result gpuk_nvrtc_version(int* out_version) {
    gpuk_result r;
    if (!out_version) return gpuk__fail(__func__, GPUK_ERR_INVALID_ARG, "out_version is NULL");
    *out_version = 0;
    if ((r = gpuk__nvrtc_ready(__func__)) != GPUK_OK) return r;
    *out_version = gpuk__nv.version;
    return GPUK_OK;
}

/* An NVRTC call failed: its name and result, with the log's first lines where there is one.
   Out of memory is GPUK_ERR_HOST_ALLOC, anything else GPUK_ERR_COMPILE. */
static gpuk_result gpuk__nvrtc_fail(const char* fn, const char* label, const char* call,
                                    unsigned int res, const char* log) {
    char first[400];
    const char* name = gpuk__nv.error_string ? gpuk__nv.error_string(res) : NULL;
    gpuk__first_lines(first, sizeof first, log ? log : "");
    return gpuk__fail(fn, res == 1 ? GPUK_ERR_HOST_ALLOC : GPUK_ERR_COMPILE, "'%s': %s: %s (%u)%s%s",
                      label, call, name ? name : "NVRTC error", res, first[0] ? ": " : "", first);
}

/* The target for a device of compute capability sm: 1 = a cubin for sm itself (NVRTC lists
   it and can give cubins); 0 = PTX for *out_arch, the newest listed at or below sm (sm itself
   where NVRTC cannot list its architectures); -1 = NVRTC knows none at or below sm. */
/* The architectures an NVRTC without nvrtcGetSupportedArchs (before 11.2) compiles for, by
   its version (the CUDA releases' notes): *out_oldest to *out_newest; 0, 0 where it has the
   list or is too new to need this table. */
static void gpuk__nvrtc_unlisted_archs(int version, int* out_oldest, int* out_newest) {
    *out_oldest = version < 9000 ? 20 : version < 11000 ? 30 : 35;
    *out_newest = version < 8000 ? 53 : version < 9000 ? 62 : version < 9010 ? 70 :
                  version < 10000 ? 72 : version < 11000 ? 75 : version < 11010 ? 80 : 86;
    if (version >= 11020) *out_oldest = *out_newest = 0;
}

static int gpuk__nvrtc_target(int sm, int ptx_only, int* out_arch) {
    int i, best = 0, oldest, newest;
    int cubin = !ptx_only && gpuk__nv.fns.nvrtcGetCUBINSize && gpuk__nv.fns.nvrtcGetCUBIN;
    *out_arch = sm;
    if (!gpuk__nv.num_archs) {
        /* no list: PTX for the device, or for the newest architecture this NVRTC knows (an
           older NVRTC refuses -arch=compute_XX it has never heard of; the driver JIT-compiles
           older PTX for newer GPUs) */
        gpuk__nvrtc_unlisted_archs(gpuk__nv.version, &oldest, &newest);
        if (!newest) return 0;
        if (sm < oldest) {
            *out_arch = oldest;
            return -1;
        }
        *out_arch = sm < newest ? sm : newest;
        return 0;
    }
    for (i = 0; i < gpuk__nv.num_archs; i++) {
        int a = gpuk__nv.archs[i];
        if (a == sm && cubin) return 1;
        if (a <= sm && a > best) best = a;
    }
    *out_arch = best;
    return best ? 0 : -1;
}

/* The cache key, written at buf + pos (buf NULL: only counted); each text with its length and
   its NUL. */
static size_t gpuk__key_put(char* buf, size_t pos, const char* text) {
    const char* t = text ? text : "";
    size_t n = strlen(t);
    if (buf) {
        memcpy(buf + pos, &n, sizeof n);
        memcpy(buf + pos + sizeof n, t, n + 1);
    }
    return pos + sizeof n + n + 1;
}

static size_t gpuk__compile_key(char* buf, const gpuk_compile_desc* d, const char* name,
                                const char* arch_option) {
    size_t pos = 0;
    uint32_t i;
    char counts[64];
    gpuk__fmt(counts, sizeof counts, 0, "%u %u %u nvrtc %d", d->num_options, d->num_headers,
              d->num_name_expressions, gpuk__nv.version);
    pos = gpuk__key_put(buf, pos, counts);
    pos = gpuk__key_put(buf, pos, arch_option);
    pos = gpuk__key_put(buf, pos, name);
    pos = gpuk__key_put(buf, pos, d->source);
    for (i = 0; i < d->num_options; i++) pos = gpuk__key_put(buf, pos, d->options[i]);
    for (i = 0; i < d->num_headers; i++) {
        pos = gpuk__key_put(buf, pos, d->headers[i].name);
        pos = gpuk__key_put(buf, pos, d->headers[i].source);
    }
    for (i = 0; i < d->num_name_expressions; i++) pos = gpuk__key_put(buf, pos, d->name_expressions[i]);
    return pos;
}

static uint64_t gpuk__fnv1a(const char* p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--) h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
    return h;
}

static const gpuk__nvrtc_entry* gpuk__nvrtc_cache_find(uint64_t hash, const char* key, size_t bytes) {
    const gpuk__nvrtc_entry* e;
    for (e = gpuk__nv.cache; e; e = e->next)
        if (e->hash == hash && e->key_bytes == bytes && memcmp(e + 1, key, bytes) == 0) return e;
    return NULL;
}

/* Runs NVRTC on the program; on success *out is a new cache entry (not yet in the cache). The
   program is always destroyed; whatever was allocated is freed on every path. */
static gpuk_result gpuk__nvrtc_run(const char* fn, const gpuk_compile_desc* d, const char* name,
                                   const char* arch_option, int is_ptx, const char* key,
                                   size_t key_bytes, gpuk__nvrtc_entry** out) {
    const gpuk__nvrtc* nv = &gpuk__nv.fns;
    size_t n_ptrs = (size_t)d->num_options + 1u + 2u * (size_t)d->num_headers;
    const char** ptrs = (const char**)gpuk__alloc(n_ptrs * sizeof *ptrs);
    gpuk__nvrtc_program prog = NULL;
    gpuk__nvrtc_entry* e = NULL;
    char* log = NULL;
    const char* call;
    size_t log_bytes = 0, image_bytes = 0, names_bytes = 0, pos;
    unsigned int res;
    gpuk_result r = GPUK_OK;
    uint32_t i;
    *out = NULL;
    if (!ptrs) return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "'%s': cannot allocate %zu option "
                                 "pointers", name, n_ptrs);
    for (i = 0; i < d->num_options; i++) ptrs[i] = d->options[i];
    ptrs[d->num_options] = arch_option;
    for (i = 0; i < d->num_headers; i++) {
        ptrs[d->num_options + 1u + i] = d->headers[i].source;
        ptrs[d->num_options + 1u + d->num_headers + i] = d->headers[i].name;
    }
    call = "nvrtcCreateProgram";
    res = nv->nvrtcCreateProgram(&prog, d->source, name, (int)d->num_headers,
                                 d->num_headers ? ptrs + d->num_options + 1 : NULL,
                                 d->num_headers ? ptrs + d->num_options + 1 + d->num_headers : NULL);
    if (res) prog = NULL;
    for (i = 0; !res && i < d->num_name_expressions; i++) {
        call = "nvrtcAddNameExpression";
        res = nv->nvrtcAddNameExpression(prog, d->name_expressions[i]);
    }
    if (!res) {
        unsigned int log_res;
        call = "nvrtcCompileProgram";
        res = nv->nvrtcCompileProgram(prog, (int)d->num_options + 1, ptrs);
        /* the log, whatever the compile said: errors and warnings are in it */
        log_res = nv->nvrtcGetProgramLogSize(prog, &log_bytes);
        if (!log_res && log_bytes > 1 && (log = (char*)gpuk__alloc(log_bytes + 1)) != NULL &&
            nv->nvrtcGetProgramLog(prog, log) != 0)
            log[0] = 0;
        if (log) log[log_bytes] = 0;
        if (!res && log_res) { res = log_res; call = "nvrtcGetProgramLogSize"; }
    }
    if (res) {
        if (log && log[0]) gpuk__log(GPUK_LOG_ERROR, GPUK_ERR_COMPILE, log);
        r = gpuk__nvrtc_fail(fn, name, call, res, log);
    } else if (log && log[0]) {
        gpuk__log(GPUK_LOG_WARN, 0, log);
    }
    if (!r) {
        call = is_ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize";
        res = is_ptx ? nv->nvrtcGetPTXSize(prog, &image_bytes) : nv->nvrtcGetCUBINSize(prog, &image_bytes);
        for (i = 0; !res && i < d->num_name_expressions; i++) {
            const char* lowered = NULL;
            call = "nvrtcGetLoweredName";
            res = nv->nvrtcGetLoweredName(prog, d->name_expressions[i], &lowered);
            if (!res) names_bytes += strlen(d->name_expressions[i]) + strlen(lowered ? lowered : "") + 2;
        }
        if (!res && !image_bytes) res = 11; /* NVRTC_ERROR_INTERNAL_ERROR: an empty image */
        if (res) r = gpuk__nvrtc_fail(fn, name, call, res, NULL);
    }
    if (!r && !(e = (gpuk__nvrtc_entry*)gpuk__alloc(sizeof *e + key_bytes + image_bytes + names_bytes)))
        r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "'%s': cannot allocate %zu bytes for the compiled "
                       "program", name, sizeof *e + key_bytes + image_bytes + names_bytes);
    if (!r) {
        char* image = (char*)(e + 1) + key_bytes;
        e->key_bytes = key_bytes;
        e->image_bytes = image_bytes;
        e->names_bytes = names_bytes;
        e->is_ptx = is_ptx;
        memcpy(e + 1, key, key_bytes);
        call = is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN";
        res = is_ptx ? nv->nvrtcGetPTX(prog, image) : nv->nvrtcGetCUBIN(prog, image);
        for (i = 0, pos = 0; !res && i < d->num_name_expressions; i++) {
            const char* lowered = NULL;
            char* names = image + image_bytes;
            call = "nvrtcGetLoweredName";
            res = nv->nvrtcGetLoweredName(prog, d->name_expressions[i], &lowered);
            if (res) break;
            /* sizes as counted above: the same expression gives the same lowered name */
            pos = gpuk__fmt(names, names_bytes, pos, "%s", d->name_expressions[i]) + 1;
            pos = gpuk__fmt(names, names_bytes, pos, "%s", lowered ? lowered : "") + 1;
        }
        if (res) {
            r = gpuk__nvrtc_fail(fn, name, call, res, NULL);
            gpuk__free(e);
            e = NULL;
        }
    }
    if (prog) nv->nvrtcDestroyProgram(&prog);
    gpuk__free(log);
    gpuk__free((void*)ptrs);
    *out = e;
    return r;
}

/* The arguments gpuk_module_compile needs; the error names the first bad one. */
static gpuk_result gpuk__compile_check(const char* fn, const gpuk_compile_desc* d) {
    uint32_t i;
    if (gpuk__desc_canaries_bad(d->_start_canary, d->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_compile_desc canaries are not zero");
    if (!d->source) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.source is NULL");
    if ((d->num_options && !d->options) || (d->num_headers && !d->headers) ||
        (d->num_name_expressions && !d->name_expressions))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc: a count is nonzero but its array is NULL");
    if (d->num_options > 4096 || d->num_headers > 4096 || d->num_name_expressions > 4096)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc: more than 4096 options, headers or "
                          "name expressions");
    for (i = 0; i < d->num_options; i++) {
        const char* o = d->options[i];
        if (!o) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.options[%u] is NULL", i);
        if (strncmp(o, "-arch", 5) == 0 || strncmp(o, "--gpu-architecture", 18) == 0)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.options[%u] '%s': gpuk picks the "
                              "architecture for the ctx's device (desc.ptx_only for PTX)", i, o);
    }
    for (i = 0; i < d->num_headers; i++)
        if (!d->headers[i].name || !d->headers[i].source)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.headers[%u]: name or source is NULL", i);
    for (i = 0; i < d->num_name_expressions; i++)
        if (!d->name_expressions[i] || !*d->name_expressions[i])
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.name_expressions[%u] is NULL or "
                              "empty", i);
    return GPUK_OK;
}

/* gpuk_module_compile, with fn naming the public call in errors (the custom kernels' create
   calls compile through it too). */
static gpuk_result gpuk__module_compile(const char* fn, gpuk_ctx* ctx, const gpuk_compile_desc* desc,
                                        gpuk_module* out_module) {
    const gpuk__nvrtc_entry* found;
    gpuk__nvrtc_entry* made = NULL;
    const char* name;
    char arch_option[32], msg[200];
    char* key;
    size_t key_bytes;
    uint64_t hash;
    int sm, arch, cubin;
    gpuk_result r;
    if (!out_module) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_module is NULL");
    out_module->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if ((r = gpuk__compile_check(fn, desc)) != GPUK_OK) return r;
    name = desc->name && *desc->name ? desc->name : "program.cu";
    if ((r = gpuk__nvrtc_ready(fn)) != GPUK_OK) return r;
    sm = ctx->info.cc_major * 10 + ctx->info.cc_minor;
    cubin = gpuk__nvrtc_target(sm, desc->ptx_only, &arch);
    if (cubin < 0)
        return gpuk__fail_hint(fn, GPUK_ERR_NO_NVRTC, "name an older NVRTC in gpuk_desc.nvrtc_path "
                               "or GPUK_NVRTC_PATH", "NVRTC %d.%d compiles for sm_%d and newer; the "
                               "device is sm_%d", gpuk__nv.version / 1000, gpuk__nv.version % 1000 / 10,
                               gpuk__nv.num_archs ? gpuk__nv.archs[0] : arch, sm);
    gpuk__fmt(arch_option, sizeof arch_option, 0, "-arch=%s_%d", cubin ? "sm" : "compute", arch);
    key_bytes = gpuk__compile_key(NULL, desc, name, arch_option);
    if (!(key = (char*)gpuk__alloc(key_bytes)))
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "'%s': cannot allocate the %zu-byte cache key",
                          name, key_bytes);
    gpuk__compile_key(key, desc, name, arch_option);
    hash = gpuk__fnv1a(key, key_bytes);
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    found = gpuk__nvrtc_cache_find(hash, key, key_bytes);
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
    if (!found) {
        r = gpuk__nvrtc_run(fn, desc, name, arch_option, !cubin, key, key_bytes, &made);
        if (r == GPUK_OK) {
            made->hash = hash;
            made->arch = arch;
            gpuk__mutex_lock(&gpuk__nvrtc_lock);
            /* another thread may have compiled the same meanwhile: keep the first */
            found = gpuk__nvrtc_cache_find(hash, key, key_bytes);
            if (!found) {
                made->next = gpuk__nv.cache;
                gpuk__nv.cache = made;
                found = made;
                made = NULL;
            }
            gpuk__mutex_unlock(&gpuk__nvrtc_lock);
            gpuk__free(made);
        }
        if (found && gpuk__log_wants(GPUK_LOG_INFO)) {
            gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': NVRTC %d.%d compiled it to %s (%s_%d)%s", fn,
                      name, gpuk__nv.version / 1000, gpuk__nv.version % 1000 / 10,
                      cubin ? "a cubin" : "PTX", cubin ? "sm" : "compute", arch,
                      cubin ? "" : ": this NVRTC lists no cubin target for the device");
            gpuk__log(GPUK_LOG_INFO, 0, msg);
        }
    } else if (gpuk__log_wants(GPUK_LOG_INFO)) {
        gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': cache hit, %s (%s_%d) compiled earlier", fn, name,
                  found->is_ptx ? "PTX" : "a cubin", found->is_ptx ? "compute" : "sm", found->arch);
        gpuk__log(GPUK_LOG_INFO, 0, msg);
    }
    gpuk__free(key);
    if (!found) return r;
    return gpuk__module_add(fn, ctx, (const unsigned char*)(found + 1) + found->key_bytes,
                            found->image_bytes, found->image_bytes, found->is_ptx, name, found,
                            &out_module->id);
}

GPUK__IMPL gpuk_result gpuk_module_compile(gpuk_ctx* ctx, const gpuk_compile_desc* desc,
                                           gpuk_module* out_module) {
    return gpuk__module_compile(__func__, ctx, desc, out_module);
}

GPUK__IMPL const char* gpuk_module_lowered_name(const gpuk_ctx* ctx, gpuk_module module,
                                                const char* name_expression) {
    const gpuk__module_slot* m;
    const char *p, *end;
    if (!ctx || !name_expression || !(m = gpuk__module_lookup(ctx, module.id)) || !m->compiled)
        return NULL;
    p = (const char*)(m->compiled + 1) + m->compiled->key_bytes + m->compiled->image_bytes;
    end = p + m->compiled->names_bytes;
    while (p < end) {
        const char* lowered = p + strlen(p) + 1;
        if (strcmp(p, name_expression) == 0) return lowered;
        p = lowered + strlen(lowered) + 1;
    }
    return NULL;
}


/* ---- >>kernel ---- */
GPUK__IMPL gpuk_result gpuk_kernel_get(gpuk_ctx* ctx, gpuk_module module, const char* name,
                                       gpuk_kernel* out_kernel) {
    const char* const fn = __func__;
    const gpuk__module_slot* m;
    gpuk__kernel_slot k;
    gpuk__pool* kp;
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
    kp = &ctx->pools[gpuk__kind_kernel];
    gpuk__mutex_lock(&ctx->lock);
    /* The module may have been unloaded meanwhile: check again under the lock. */
    slot = gpuk__module_lookup(ctx, module.id) ? gpuk__pool_take(kp) : 0;
    if (slot) {
        memcpy(gpuk__pool_slot(kp, slot), &k, sizeof k);
        k.id = gpuk__pool_publish(kp, slot);
    }
    gpuk__mutex_unlock(&ctx->lock);
    if (!slot) {
        if (!gpuk__module_lookup(ctx, module.id)) return gpuk__bad_handle(fn, "module", module.id);
        return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u kernel slots are in use", kp->size - 1);
    }
    out_kernel->id = k.id;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_query(gpuk_ctx* ctx, gpuk_kernel kernel, gpuk_kernel_info* out_info) {
    const char* const fn = __func__;
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
    info.max_dynamic_shared_bytes = GPUK__ATOMIC_LOAD(&k->max_dynamic_shared);
    info.num_params = k->num_params;
    *out_info = info;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_set_max_dynamic_shared(gpuk_ctx* ctx, gpuk_kernel kernel, uint32_t bytes) {
    const char* const fn = __func__;
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
    /* atomic: gpuk_launch on another thread reads it */
    GPUK__ATOMIC_STORE(&k->max_dynamic_shared, (int)bytes);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_suggest_block(gpuk_ctx* ctx, gpuk_kernel kernel, uint32_t shared_bytes,
                                                 int* out_block, int* out_min_grid) {
    const char* const fn = __func__;
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

/* Kernels hold no driver object of their own: they go with their module. */
static gpuk__cu_result gpuk__kernel_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    (void)ctx;
    (void)slot;
    (void)out_call;
    return 0;
}

/* ---- >>launch ---- */
static gpuk_launch_desc gpuk__launch_desc_defaults(const gpuk_launch_desc* desc) {
    gpuk_launch_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.grid.y) d.grid.y = 1;
    if (!d.grid.z) d.grid.z = 1;
    if (!d.block.y) d.block.y = 1;
    if (!d.block.z) d.block.z = 1;
    return d;
}

GPUK__IMPL gpuk_launch_desc gpuk_launch_desc_defaults(const gpuk_launch_desc* desc) {
    return gpuk__launch_desc_defaults(desc);
}

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
    int i, max_dynamic_shared = GPUK__ATOMIC_LOAD(&k->max_dynamic_shared);
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
    if (d->shared_bytes > (uint32_t)max_dynamic_shared)
        return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': %u bytes of dynamic shared memory exceed its "
                          "limit of %d (raise it with gpuk_kernel_set_max_dynamic_shared, up to %d bytes "
                          "minus %d static)", k->name, d->shared_bytes, max_dynamic_shared,
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
                                  "parameter is %u bytes%s", k->name, a, d->arg_sizes[a],
                                  (unsigned)k->param_bytes[a],
                                  d->arg_sizes[a] == sizeof(gpuk_buffer) && k->param_bytes[a] == sizeof(gpuk_devptr)
                                  ? " (a gpuk_buffer handle where the kernel takes a device pointer? pass "
                                    "&p with gpuk_devptr p = gpuk_buffer_devptr(ctx, buffer))" : "");
        }
    }
#endif
    return GPUK_OK;
}

/* The most blocks of k a cooperative launch may have at threads and shared bytes a block:
   every block must be resident at once for a grid-wide sync, else the launch fails (720) or
   the kernel waits forever. The ctx is current. */
static gpuk_result gpuk__cooperative_max(const char* fn, const gpuk_ctx* ctx, const gpuk__kernel_slot* k,
                                         uint32_t threads, uint32_t shared, uint32_t* out_max,
                                         int* out_per_sm) {
    int can = 0, per_sm = 0;
    gpuk__cu_result cr;
    *out_max = 0;
    *out_per_sm = 0;
    if (!GPUK__DRV.cuOccupancyMaxActiveBlocksPerMultiprocessor)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "kernel '%s': a cooperative launch needs "
                          "cuOccupancyMaxActiveBlocksPerMultiprocessor, which this driver lacks", k->name);
    if ((cr = GPUK__DRV.cuDeviceGetAttribute(&can, GPUK__CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, ctx->dev)) != 0)
        return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr, "CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH");
    if (!can)
        return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "kernel '%s': device %d (%s) cannot launch "
                          "cooperative kernels", k->name, ctx->info.ordinal, ctx->info.name);
    if ((cr = GPUK__DRV.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->cu, (int)threads, shared)) != 0)
        return gpuk__fail_cu(fn, "cuOccupancyMaxActiveBlocksPerMultiprocessor", cr, k->name);
    *out_per_sm = per_sm;
    *out_max = (uint32_t)per_sm * (uint32_t)ctx->info.sm_count;
    return GPUK_OK;
}

/* A launch asks for clusters when any side is set: x, or y or z over 1 (all 0, and
   GPUK_DIM1(0) = {0, 1, 1}, ask for none); x = 0 beside y or z over 1 is then refused. */
#define GPUK__CLUSTER_ASKED(c) ((c).x || (c).y > 1u || (c).z > 1u)

/* gpuk_launch with clusters, a cooperative grid or a priority: cuLaunchKernelEx with those
   attributes, each checked first so that a refusal says why (the driver's is a bare 1 or
   720). Kept out of gpuk_launch so the plain path pays three compares for it. */
static GPUK__NOINLINE gpuk_result gpuk__launch_ex(const char* fn, gpuk_ctx* ctx, const gpuk__kernel_slot* k,
                                                  const gpuk_launch_desc* d, gpuk__cu_stream cs,
                                                  const uint32_t g[3], const uint32_t b[3]) {
    static const char axis[3] = { 'x', 'y', 'z' };
    gpuk__cu_launch_attr attrs[3];
    gpuk__cu_launch_config cfg;
    unsigned int n = 0, i;
    int cluster = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!GPUK__DRV.cuLaunchKernelEx)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "kernel '%s': clusters, cooperative launch and "
                          "launch priorities need cuLaunchKernelEx, from a driver for CUDA 11.8 or newer "
                          "(this one is %d.%d)", k->name, gpuk__g.driver_version / 1000,
                          gpuk__g.driver_version % 1000 / 10);
    memset(attrs, 0, sizeof attrs);
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.grid, g, sizeof cfg.grid);
    memcpy(cfg.block, b, sizeof cfg.block);
    cfg.shared_bytes = d->shared_bytes;
    cfg.stream = cs;
    cfg.attrs = attrs;
    if (GPUK__CLUSTER_ASKED(d->cluster)) {
        uint32_t c[3];
        if (!d->cluster.x) /* as for grid and block: x is required, y and z default to 1 */
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': a cluster of %ux%ux%u has x = 0 "
                              "(set x too; y and z 0 -> 1)", k->name, d->cluster.x,
                              d->cluster.y, d->cluster.z);
        c[0] = d->cluster.x;
        c[1] = d->cluster.y ? d->cluster.y : 1u;
        c[2] = d->cluster.z ? d->cluster.z : 1u;
        if (ctx->info.cc_major < 9)
            return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "kernel '%s': thread-block clusters need "
                              "compute capability 9.0 or newer; device %d (%s) is %d.%d", k->name,
                              ctx->info.ordinal, ctx->info.name, ctx->info.cc_major, ctx->info.cc_minor);
        /* the size first: a cluster no device holds is the answer, whatever the grid; each
           side alone first, so that the product cannot wrap */
        if (c[0] > 8u || c[1] > 8u || c[2] > 8u || c[0] * c[1] * c[2] > 8u)
            return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': a cluster of %ux%ux%u blocks exceeds "
                              "the portable cluster size of 8 blocks", k->name, c[0], c[1], c[2]);
        for (i = 0; i < 3; i++)
            if (g[i] % c[i])
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': cluster.%c = %u does not "
                                  "divide grid.%c = %u", k->name, axis[i], c[i], axis[i], g[i]);
        attrs[n].id = GPUK__CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        memcpy(attrs[n].value.dim, c, sizeof c);
        n++;
        cluster = 1;
    }
    if (d->priority && gpuk__g.driver_version < 12000)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "kernel '%s': a launch priority needs a driver "
                          "for CUDA 12.0 or newer (this one is %d.%d); use a stream's priority "
                          "(gpuk_stream_desc.priority)", k->name, gpuk__g.driver_version / 1000,
                          gpuk__g.driver_version % 1000 / 10);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (cluster && GPUK__DRV.cuOccupancyMaxActiveClusters) {
        /* a cluster's blocks must all fit on one GPU processing cluster at once: where the
           threads, shared memory or registers they need do not, the driver's launch fails
           with a bare CUDA_ERROR_CLUSTER_OUT_OF_RESOURCES (912) */
        int fit = 0;
        cfg.num_attrs = n;
        cr = GPUK__DRV.cuOccupancyMaxActiveClusters(&fit, k->cu, (const struct CUlaunchConfig_st*)(const void*)&cfg);
        if (cr) return gpuk__fail_cu(fn, "cuOccupancyMaxActiveClusters", cr, k->name);
        if (fit < 1)
            return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': no cluster of %ux%ux%u blocks of %u "
                              "threads and %u bytes of dynamic shared memory fits on the device at "
                              "once (cuOccupancyMaxActiveClusters: 0); use smaller clusters or "
                              "blocks", k->name, attrs[0].value.dim[0], attrs[0].value.dim[1],
                              attrs[0].value.dim[2], b[0] * b[1] * b[2], d->shared_bytes);
    }
    if (d->cooperative) {
        uint32_t max = 0;
        int per_sm = 0;
        uint64_t blocks = (uint64_t)g[0] * g[1] * g[2];
        if ((r = gpuk__cooperative_max(fn, ctx, k, b[0] * b[1] * b[2], d->shared_bytes, &max, &per_sm)) != GPUK_OK)
            return r;
        if (blocks > max)
            return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': a cooperative grid of %llu blocks "
                              "exceeds the %u the device holds at once (%d a multiprocessor x %d "
                              "multiprocessors at %u threads and %u bytes of dynamic shared memory a "
                              "block; gpuk_kernel_max_cooperative_grid)", k->name,
                              (unsigned long long)blocks, max, per_sm, ctx->info.sm_count,
                              b[0] * b[1] * b[2], d->shared_bytes);
        attrs[n].id = GPUK__CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n].value.i = 1;
        n++;
    }
    if (d->priority) {
        attrs[n].id = GPUK__CU_LAUNCH_ATTRIBUTE_PRIORITY;
        attrs[n].value.i = d->priority;
        n++;
    }
    cfg.num_attrs = n;
    cr = GPUK__DRV.cuLaunchKernelEx((const struct CUlaunchConfig_st*)(const void*)&cfg, k->cu, d->args, NULL);
    return cr ? gpuk__fail_cu(fn, "cuLaunchKernelEx", cr, k->name) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_launch(gpuk_ctx* ctx, gpuk_kernel kernel, const gpuk_launch_desc* desc) {
    const char* const fn = __func__;
    const gpuk__kernel_slot* k;
    gpuk_launch_desc d;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t g[3], b[3];
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (GPUK__UNLIKELY(!desc)) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (GPUK__UNLIKELY(!(k = gpuk__kernel_lookup(ctx, kernel.id)))) return gpuk__bad_handle(fn, "kernel", kernel.id);
    d = gpuk__launch_desc_defaults(desc);
    if ((r = gpuk__stream_resolve(fn, ctx, d.stream, &cs)) != GPUK_OK) return r;
    g[0] = d.grid.x; g[1] = d.grid.y; g[2] = d.grid.z;
    b[0] = d.block.x; b[1] = d.block.y; b[2] = d.block.z;
    if ((r = gpuk__launch_check(fn, ctx, k, &d, g, b)) != GPUK_OK) return r;
    if (GPUK__UNLIKELY(GPUK__CLUSTER_ASKED(d.cluster) || d.cooperative || d.priority))
        return gpuk__launch_ex(fn, ctx, k, &d, cs, g, b);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuLaunchKernel(k->cu, g[0], g[1], g[2], b[0], b[1], b[2], d.shared_bytes, cs,
                                  d.args, NULL);
    return GPUK__UNLIKELY(cr) ? gpuk__fail_cu(fn, "cuLaunchKernel", cr, k->name) : GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_max_cooperative_grid(gpuk_ctx* ctx, gpuk_kernel kernel, uint32_t block,
                                                        uint32_t shared_bytes, uint32_t* out_blocks) {
    const char* const fn = __func__;
    const gpuk__kernel_slot* k;
    int per_sm = 0;
    if (!out_blocks) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_blocks is NULL");
    *out_blocks = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id))) return gpuk__bad_handle(fn, "kernel", kernel.id);
    if (!block) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': block is 0", k->name);
    if (block > (uint32_t)k->max_threads)
        return gpuk__launch_limit(fn, k, "block", block, k->max_threads);
    GPUK__ENTER(fn, ctx);
    return gpuk__cooperative_max(fn, ctx, k, block, shared_bytes, out_blocks, &per_sm);
}

/* ---- >>graph ---- */
/* Graphs are made by stream capture: what gpuk queues on a stream between begin and end
   (launches, built-ins, copies, memsets, records) becomes a graph, instantiated at once into
   an executable graph, the one driver object a gpuk_graph holds (the captured CUgraph is
   destroyed: an exec does not need it). Arguments change by capturing again and updating the
   exec (cuGraphExecUpdate), as CUDA programs update captured launches. */
#define GPUK__GRAPH_ROWS(X) \
    X(cuStreamIsCapturing) X(cuStreamBeginCapture) X(cuStreamEndCapture) \
    X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy) \
    X(cuGraphExecUpdate)

/* Every graph row is optional (cuGraphInstantiateWithFlags, the feature bit, came last, in
   11.4): a driver without one gets the name of the first missing. */
static gpuk_result gpuk__graphs_ready(const char* fn) {
#define GPUK__X_GRAPH_ROW(name) \
    if (!GPUK__DRV.name) \
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "CUDA graphs need a driver for CUDA 11.4 or " \
                          "newer; this one (%d.%d) lacks " #name, gpuk__g.driver_version / 1000, \
                          gpuk__g.driver_version % 1000 / 10);
    GPUK__GRAPH_ROWS(GPUK__X_GRAPH_ROW)
#undef GPUK__X_GRAPH_ROW
    return GPUK_OK;
}

/* The common head of begin, end and update: alive, ctx, stream, graph rows, ctx current;
   then whether the stream is being captured (an invalidated capture counts: it must still be
   ended). */
static gpuk_result gpuk__capture_head(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                      gpuk__cu_stream* out_cs, int* out_capturing) {
    unsigned int status = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__STREAM_HEAD(fn, ctx, stream, *out_cs);
    if ((r = gpuk__graphs_ready(fn)) != GPUK_OK) return r;
    GPUK__ENTER(fn, ctx);
    if ((cr = GPUK__DRV.cuStreamIsCapturing(*out_cs, &status)) != 0)
        return gpuk__fail_cu(fn, "cuStreamIsCapturing", cr, NULL);
    *out_capturing = status != GPUK__CU_STREAM_CAPTURE_STATUS_NONE;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_begin_capture(gpuk_ctx* ctx, gpuk_stream stream, gpuk_capture_mode mode) {
    const char* const fn = __func__;
    static const unsigned int cu_mode[GPUK_CAPTURE_NUM] = {
        GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, GPUK__CU_STREAM_CAPTURE_MODE_GLOBAL,
        GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, GPUK__CU_STREAM_CAPTURE_MODE_RELAXED
    };
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    int capturing = 0;
    if ((unsigned)mode >= (unsigned)GPUK_CAPTURE_NUM)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "mode %u is not a gpuk_capture_mode", (unsigned)mode);
    if ((r = gpuk__capture_head(fn, ctx, stream, &cs, &capturing)) != GPUK_OK) return r;
    if (capturing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the stream is already being captured (end that "
                          "capture with gpuk_graph_end_capture first)");
    cr = GPUK__DRV.cuStreamBeginCapture(cs, cu_mode[mode]);
    return cr ? gpuk__fail_cu(fn, "cuStreamBeginCapture", cr, NULL) : GPUK_OK;
}

/* Destroys a captured graph once its work is done (instantiated, or used for an update, or of
   no use). Its failure is absorbed: the call's own work succeeded, and the graph is only the
   driver's host memory, so it is kept for the ctx destroy to try again (at most four; the
   logger hears of it). No driver call after a sticky fault. */
static void gpuk__graph_drop(const char* fn, gpuk_ctx* ctx, gpuk__cu_graph graph) {
    gpuk__cu_result cr;
    int kept = 0;
    if (!graph || GPUK__ATOMIC_LOAD(&gpuk__g.broken)) return;
    if (gpuk__tolerate(fn, "cuGraphDestroy", cr = GPUK__DRV.cuGraphDestroy(graph)) || gpuk__is_sticky((int)cr))
        return;
    gpuk__mutex_lock(&ctx->lock);
    if (ctx->graph_orphan_count < 4) {
        ctx->graph_orphans[ctx->graph_orphan_count++] = graph;
        kept = 1;
    }
    gpuk__mutex_unlock(&ctx->lock);
    gpuk__log(GPUK_LOG_WARN, (int)cr, kept ? "cuGraphDestroy failed on a captured graph; the ctx destroy tries again"
                                           : "cuGraphDestroy failed on a captured graph; its host memory stays with the driver");
}

/* Ends the capture on cs: the graph it recorded, or a failure (the stream is out of capture
   mode either way once the driver was asked). */
static gpuk_result gpuk__capture_end(const char* fn, gpuk_ctx* ctx, gpuk_stream stream,
                                     gpuk__cu_graph* out_graph) {
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    int capturing = 0;
    *out_graph = NULL;
    if ((r = gpuk__capture_head(fn, ctx, stream, &cs, &capturing)) != GPUK_OK) return r;
    if (!capturing)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "the stream is not being captured "
                          "(gpuk_graph_begin_capture first)");
    if ((cr = GPUK__DRV.cuStreamEndCapture(cs, out_graph)) != 0) {
        /* an invalidated capture may still hand back a graph: it is of no use */
        gpuk__graph_drop(fn, ctx, *out_graph);
        *out_graph = NULL;
        return gpuk__fail_cu(fn, "cuStreamEndCapture", cr,
                             cr == 908 ? "a thread-local or global capture ends on the thread that "
                                         "began it" :
                             "the capture was invalidated by a call it cannot hold (a synchronous "
                             "or stream-less call, a sync, an allocation, a copy of pageable host "
                             "memory, or work from another stream joining it); it has ended");
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_end_capture(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph* out_graph) {
    const char* const fn = __func__;
    gpuk__graph_slot* s;
    gpuk__cu_graph graph = NULL;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    s = (gpuk__graph_slot*)gpuk__create_begin(fn, ctx, gpuk__kind_graph, out_graph ? &out_graph->id : NULL,
                                              NULL, 1, 0u, 0u, &r);
    if (!s) return r;
    if ((r = gpuk__capture_end(fn, ctx, stream, &graph)) == GPUK_OK) {
        if ((cr = GPUK__DRV.cuGraphInstantiateWithFlags(&s->exec, graph, 0)) != 0)
            r = gpuk__fail_cu(fn, "cuGraphInstantiateWithFlags", cr, NULL);
        gpuk__graph_drop(fn, ctx, graph); /* the exec does not need it */
    }
    return gpuk__slot_end(ctx, gpuk__kind_graph, s, r, &out_graph->id);
}

/* cuGraphExecUpdate's CUgraphExecUpdateResult values 2..8, as a reason. */
static const char* gpuk__graph_update_reason(unsigned int result) {
    static const char* const why[] = {
        "the captured work's shape differs (other nodes or dependencies)",
        "a node's type differs (a kernel where a copy was...)", "a kernel node's function differs",
        "a node's parameters changed in a way an update cannot apply (a copy to other memory "
        "kinds, a memset's element size...)",
        "a node cannot be updated", "a kernel node's function changed in a way an update cannot "
        "apply (another module or context)",
        "a node's launch attributes changed in a way an update cannot apply"
    };
    return result >= 2 && result <= 8 ? why[result - 2] : "the driver did not say why";
}

GPUK__IMPL gpuk_result gpuk_graph_update(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph graph) {
    const char* const fn = __func__;
    const gpuk__graph_slot* s;
    gpuk__cu_graph g = NULL;
    gpuk__cu_graph_node node = NULL;
    unsigned int result = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(s = gpuk__graph_lookup(ctx, graph.id))) return gpuk__bad_handle(fn, "graph", graph.id);
    if ((r = gpuk__capture_end(fn, ctx, stream, &g)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuGraphExecUpdate(s->exec, g, &node, &result);
    if (cr && gpuk__is_sticky((int)cr)) return gpuk__fail_cu(fn, "cuGraphExecUpdate", cr, NULL); /* no call after it */
    gpuk__graph_drop(fn, ctx, g);
    if (cr) {
        char detail[192];
        gpuk__fmt(detail, sizeof detail, 0, "graph 0x%x is unchanged: %s (result %u)", graph.id,
                  gpuk__graph_update_reason(result), result);
        return gpuk__fail_cu(fn, "cuGraphExecUpdate", cr, detail);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_graph_launch(gpuk_ctx* ctx, gpuk_stream stream, gpuk_graph graph) {
    const char* const fn = __func__;
    const gpuk__graph_slot* s;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    GPUK__STREAM_HEAD(fn, ctx, stream, cs);
    if (GPUK__UNLIKELY(!(s = gpuk__graph_lookup(ctx, graph.id)))) return gpuk__bad_handle(fn, "graph", graph.id);
    GPUK__ENTER(fn, ctx);
    cr = GPUK__DRV.cuGraphLaunch(s->exec, cs);
    return GPUK__UNLIKELY(cr) ? gpuk__fail_cu(fn, "cuGraphLaunch", cr, NULL) : GPUK_OK;
}

static gpuk__cu_result gpuk__graph_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    (void)ctx;
    *out_call = "cuGraphExecDestroy";
    return GPUK__DRV.cuGraphExecDestroy(((const gpuk__graph_slot*)slot)->exec);
}

GPUK__IMPL gpuk_result gpuk_graph_destroy(gpuk_ctx* ctx, gpuk_graph graph) {
    return gpuk__handle_destroy(__func__, ctx, gpuk__kind_graph, graph.id);
}
