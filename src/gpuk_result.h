/* src/gpuk_result.h - part of gpuk.h: results, error texts, logging, fork handlers, allocation. */
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
        return "before capturing, load the kernels (gpuk_kernels_load) and reserve their "
               "scratch (gpuk_kernels_reserve, gpuk_kernels_reserve_sort), or run the call once "
               "outside the capture";
    case 2: return "device memory is exhausted: free buffers or allocate less";
    case 3: return "the driver is not initialised (cuInit failed, or CUDA was used before fork())";
    case 34:
        return "this libcuda is the CUDA toolkit's stub, not a driver: use the real libcuda.so.1";
    case 100: return "no CUDA device is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES";
    case 201: return "no usable current context on this thread (raw driver calls: "
                     "gpuk_ctx_make_current first)";
    case 209: return "the cubin/fatbin has no code for this GPU's architecture: ship PTX or add it";
    case 218: return "the PTX is invalid or targets a newer GPU: read the JIT log";
    case 222: return "the driver is older than this PTX's .version: update the driver or lower "
                     "the PTX .version";
    case 223: return "PTX JIT is disabled (CUDA_DISABLE_JIT?): load a cubin instead";
    case 215: return "the device or driver has no such limit (the device runtime's sync depth "
                     "exists only below compute capability 9.0)";
    case 500: return "not found: a kernel name must be the .entry name (extern \"C\" in CUDA C++)";
    case 710:
        return "a device-side assert failed; the driver printed its file, line and condition to "
               "stderr. CUDA is unusable in this process from now on: only a new process "
               "recovers. Find the line with compute-sanitizer ./app, device code built with "
               "-lineinfo";
    case 700: case 702: case 714: case 715: case 716: case 717: case 718: case 719:
        return "an earlier kernel faulted (errors are asynchronous: the kernel named last need "
               "not be the one; a __trap() gives 715 or 719). CUDA is unusable in this process "
               "from now on: only a new process recovers. Find the kernel and line with "
               "compute-sanitizer ./app, device code built with -lineinfo";
    case 999: return "the driver failed: check nvidia-smi and the kernel log";
    default: return NULL;
    }
}

/* The codes after which the context, and with the primary context the process, cannot be used
   again (cuda.h: "the context cannot be used anymore, and must be destroyed"); 710 is a
   device-side assert. */
static int gpuk__is_sticky(int code) {
    return code == 700 || code == 702 || code == 710 || (code >= 714 && code <= 719);
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
                        /* NOLINTNEXTLINE(bugprone-branch-clone): long is not int */
                        : is_long ? (long long)va_arg(ap, long) : (long long)va_arg(ap, int);
            neg = v < 0;
            u = neg ? (unsigned long long)(-(v + 1)) + 1u : (unsigned long long)v;
            s = NULL;
            break;
        }
        case 'u': case 'x':
            u = is_size ? (unsigned long long)va_arg(ap, size_t)
              : is_long >= 2 ? va_arg(ap, unsigned long long)
              /* NOLINTNEXTLINE(bugprone-branch-clone) */
              : is_long ? (unsigned long long)va_arg(ap, unsigned long)
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
    fprintf(stderr, "gpuk %s: %s\n",
            (unsigned)level < (unsigned)GPUK_LOG_NUM ? names[level] : "log", msg ? msg : "");
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

/* Hook: "; last launch on device 0: kernel 'k'" for the live ctxs that launched something,
   appended at pos of buf (cap bytes); returns the new pos. Defined in src/gpuk_ctx.h, which
   knows the ctxs; a sticky fault's text (gpuk__fail_cu) calls it. */
static size_t gpuk__fault_launches(char* buf, size_t cap, size_t pos);

/* A driver call failed: name it, and remember a sticky fault for the whole process. A kernel
   fault surfaces in whatever call comes after it, so its text names what ran last. */
static gpuk_result gpuk__fail_cu(const char* fn, const char* cu_fn, gpuk__cu_result r,
                                 const char* detail) {
    int code = (int)r;
    char launches[160];
    launches[0] = 0;
    if (gpuk__is_sticky(code)) gpuk__fault_launches(launches, sizeof launches, 0);
    gpuk__fail(fn, code, "%s: %s (%d)%s%s%s", cu_fn, gpuk_result_str((gpuk_result)code), code,
               detail ? ": " : "", detail ? detail : "", launches);
    if (gpuk__is_sticky(code) && !GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        gpuk__mutex_lock(&gpuk__fault_lock);
        if (!gpuk__g.broken) {
            gpuk__fmt(gpuk__g.broken_text, sizeof gpuk__g.broken_text, 0, "%s: %s: %s (%d)%s", fn,
                      cu_fn, gpuk_result_str((gpuk_result)code), code, launches);
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
    do { \
        if (GPUK__UNLIKELY(GPUK__ATOMIC_LOAD(&gpuk__g.broken))) return gpuk__fail_broken(fn); \
    } while (0)

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
    if (GPUK__ATOMIC_LOAD(&gpuk__g.initialized))
        GPUK__ATOMIC_STORE(&gpuk__g.broken, (int)GPUK_ERR_FORKED);
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
    void* p = gpuk__g.allocator.alloc_fn
                  ? gpuk__g.allocator.alloc_fn(bytes, gpuk__g.allocator.user_data)
                  : malloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

static void gpuk__free(void* p) {
    if (!p) return;
    if (gpuk__g.allocator.free_fn) gpuk__g.allocator.free_fn(p, gpuk__g.allocator.user_data);
    else free(p);
}
