/* src/gpuk_platform.h - part of gpuk.h: opens the implementation; configuration; the OS layer. */
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
/* GPUK__SHARED: a helper of several built-in launchers, which a build that keeps only some
   families (GPUK_ONLY_<F>) may not call at all. */
#if defined(__GNUC__) || defined(__clang__)
#define GPUK__UNLIKELY(c) __builtin_expect(!!(c), 0)
#define GPUK__NOINLINE __attribute__((noinline))
#define GPUK__SHARED static __attribute__((unused))
#else
#define GPUK__UNLIKELY(c) (c)
#define GPUK__NOINLINE
#define GPUK__SHARED static
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
__declspec(dllimport) int __stdcall SleepConditionVariableSRW(void** cv, void** lock,
                                                              unsigned long ms,
                                                              unsigned long flags);
__declspec(dllimport) void __stdcall WakeAllConditionVariable(void** cv);
__declspec(dllimport) void __stdcall WakeConditionVariable(void** cv);
__declspec(dllimport) void* __stdcall CreateThread(void* security, size_t stack,
                                                   unsigned long (__stdcall* start)(void*),
                                                   void* arg, unsigned long flags,
                                                   unsigned long* id);
__declspec(dllimport) unsigned long __stdcall WaitForSingleObject(void* handle, unsigned long ms);
__declspec(dllimport) int __stdcall CloseHandle(void* handle);
__declspec(dllimport) unsigned long __stdcall GetActiveProcessorCount(unsigned short group);
#endif
#define GPUK__CUDAAPI __stdcall
typedef struct gpuk__mutex { void* srw; } gpuk__mutex;
#define GPUK__MUTEX_INIT { 0 }
static void gpuk__mutex_lock(gpuk__mutex* m) { AcquireSRWLockExclusive((void**)&m->srw); }
static void gpuk__mutex_unlock(gpuk__mutex* m) { ReleaseSRWLockExclusive((void**)&m->srw); }
static int gpuk__mutex_trylock(gpuk__mutex* m) {
    return TryAcquireSRWLockExclusive((void**)&m->srw) != 0;
}
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
/* nvJitLink's DLLs carry major and minor like NVRTC's; the minor is 0 throughout a major */
#define GPUK__NVJITLINK_NAMES "nvJitLink_130_0.dll", "nvJitLink_120_0.dll"
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
   marks itself forked. Registered before gpuk's global lock is first taken.
   Hook: the three are defined in src/gpuk_result.h, after the locks they take (the state in
   src/gpuk_driver.h) and the fault flag the child sets. */
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
/* nvJitLink (CUDA 12.0 on) is named by its major version; newest first */
#define GPUK__NVJITLINK_NAMES "libnvJitLink.so.13", "libnvJitLink.so.12"
#endif

/* CPU sets, for placing the staging's copy threads on the GPU's NUMA node (>>device): a fixed
   mask of GPUK__CPU_SET_BITS CPUs, so that nothing allocates. Linux only; elsewhere nothing is
   read and no thread is moved. */
#define GPUK__CPU_SET_BITS 1024u
#define GPUK__CPU_WORD_BITS (8u * (unsigned)sizeof(unsigned long))
typedef struct gpuk__cpu_set {
    unsigned long bits[GPUK__CPU_SET_BITS / GPUK__CPU_WORD_BITS];
} gpuk__cpu_set;
#if defined(__linux__)
#include <fcntl.h>
/* sched_getaffinity and sched_setaffinity are looked up at run time: <sched.h> declares them
   only under _GNU_SOURCE, which the including program may not define, and a prototype of
   ours would clash with glibc's where it does. The type is theirs with pid_t as the int it
   is and cpu_set_t as the words it holds. */
typedef int (*gpuk__affinity_fn)(int pid, size_t bytes, unsigned long* mask);
static gpuk__affinity_fn gpuk__sched_getaffinity, gpuk__sched_setaffinity;
static pthread_once_t gpuk__affinity_once = PTHREAD_ONCE_INIT;
static void gpuk__affinity_resolve(void) {
    /* the program's own handle: its symbols, then the libraries it started with (libc) */
    void* self = dlopen(NULL, RTLD_LAZY);
    void *get, *set;
    if (!self) return;
    get = dlsym(self, "sched_getaffinity");
    set = dlsym(self, "sched_setaffinity");
    if (get && set) { /* ISO C has no cast from object to function pointer */
        memcpy(&gpuk__sched_getaffinity, &get, sizeof get);
        memcpy(&gpuk__sched_setaffinity, &set, sizeof set);
    }
    dlclose(self); /* libc stays loaded: the functions outlive the handle */
}
/* The CPUs the calling thread may run on into *out: 1, or 0 (and *out empty) where that
   cannot be told (no such calls, or more CPUs than the mask holds). */
static int gpuk__affinity_get(gpuk__cpu_set* out) {
    memset(out, 0, sizeof *out);
    pthread_once(&gpuk__affinity_once, gpuk__affinity_resolve);
    if (gpuk__sched_getaffinity && gpuk__sched_getaffinity(0, sizeof out->bits, out->bits) == 0)
        return 1;
    memset(out, 0, sizeof *out);
    return 0;
}
/* Binds the calling thread (pid 0: this thread alone, not the process) to the CPUs of set. A
   refusal leaves it where it was: placement is a matter of speed only. */
static void gpuk__affinity_set(gpuk__cpu_set* set) {
    pthread_once(&gpuk__affinity_once, gpuk__affinity_resolve);
    if (gpuk__sched_setaffinity) (void)gpuk__sched_setaffinity(0, sizeof set->bits, set->bits);
}
/* A small file (sysfs) into buf, NUL-terminated: its length, or -1 where it cannot be read
   or does not fit in cap - 1 bytes (a part of it could read as a different value). */
static long gpuk__file_read_small(const char* path, char* buf, size_t cap) {
#if defined(O_CLOEXEC)
    int fd = open(path, O_RDONLY | O_CLOEXEC); /* not inherited by a program another thread runs */
#else
    int fd = open(path, O_RDONLY);
#endif
    size_t n = 0;
    ssize_t got = 0;
    if (fd < 0) return -1;
    while (n + 1 < cap && (got = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)got;
    close(fd);
    if (got < 0 || n + 1 >= cap) return -1;
    buf[n] = 0;
    return (long)n;
}
#else
static int gpuk__affinity_get(gpuk__cpu_set* out) {
    memset(out, 0, sizeof *out);
    return 0;
}
static void gpuk__affinity_set(gpuk__cpu_set* set) { (void)set; }
static long gpuk__file_read_small(const char* path, char* buf, size_t cap) {
    (void)path, (void)buf, (void)cap;
    return -1;
}
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
void* _InterlockedExchangePointer(void* volatile* p, void* v);
#pragma intrinsic(_InterlockedExchangeAdd, _InterlockedExchange, _InterlockedOr, \
                  _InterlockedCompareExchangePointer, _InterlockedExchangePointer)
#define GPUK__ATOMIC_LOAD(p) ((int)_InterlockedOr((long volatile*)(p), 0))
#define GPUK__ATOMIC_STORE(p, v) (void)_InterlockedExchange((long volatile*)(p), (long)(v))
#define GPUK__ATOMIC_ADD(p, v) ((unsigned)_InterlockedExchangeAdd((long volatile*)(p), (long)(v)))
#define GPUK__ATOMIC_ADD_ACQREL(p, v) GPUK__ATOMIC_ADD(p, v) /* a full barrier there */
/* a compare-exchange of NULL with NULL changes nothing and returns the value */
#define GPUK__ATOMIC_LOAD_PTR(p) \
    _InterlockedCompareExchangePointer((void* volatile*)(p), NULL, NULL)
#define GPUK__ATOMIC_CAS_PTR(p, expected, v) \
    (_InterlockedCompareExchangePointer((void* volatile*)(p), (v), (expected)) == (expected))
#define GPUK__ATOMIC_STORE_PTR(p, v) \
    (void)_InterlockedExchangePointer((void* volatile*)(p), (void*)(uintptr_t)(v))
#else
#define GPUK__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GPUK__ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GPUK__ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GPUK__ATOMIC_ADD_ACQREL(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define GPUK__ATOMIC_LOAD_PTR(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GPUK__ATOMIC_STORE_PTR(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* 1 when *p was expected and is now v */
#define GPUK__ATOMIC_CAS_PTR(p, expected, v) \
    gpuk__cas_ptr((void**)(p), (void*)(expected), (void*)(v))
static inline int gpuk__cas_ptr(void** p, void* expected, void* v) {
    return __atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
#endif
