/* src/gpuk_nvrtc.h - part of gpuk.h: NVRTC: compiling CUDA C++ into modules, the compile cache. */
/* ---- >>nvrtc ---- */
/* NVRTC opens its builtins library (libnvrtc-builtins.so.13.0, nvrtc-builtins64_130.dll) at
   its first compile by name, through the system loader's search, which does not look beside
   NVRTC: an NVRTC loaded from a folder off that search (by the search's folders, or a path)
   would fail every compile with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE. Loaded from NVRTC's
   folder first, it is what NVRTC's own load then finds (the loader matches loaded libraries by
   name). Kept for the process, like NVRTC (one loaded again only drops the new reference);
   nothing is done where NVRTC's folder has none. */
static void gpuk__nvrtc_builtins(const char* fn, int major, int minor) {
    char path[GPUK__PATH_MAX + 40], why[200];
    const char* p;
    size_t dir = 0;
    void* h;
    for (p = gpuk__nv.found; *p; p++)
        if (*p == '/' || *p == '\\') dir = (size_t)(p - gpuk__nv.found) + 1;
    if (!dir) return;
    memcpy(path, gpuk__nv.found, dir);
#if defined(_WIN32)
    gpuk__fmt(path, sizeof path, dir, "nvrtc-builtins64_%d%d.dll", major, minor);
#else
    gpuk__fmt(path, sizeof path, dir, "libnvrtc-builtins.so.%d.%d", major, minor);
#endif
    h = gpuk__lib_open_path(path, why, sizeof why);
    if (h && h == gpuk__nv.builtins) gpuk__lib_close(h);
    else if (h) gpuk__nv.builtins = h;
    if (gpuk__log_wants(GPUK_LOG_DEBUG)) {
        char msg[GPUK__PATH_MAX + 300];
        gpuk__fmt(msg, sizeof msg, 0, "%s: %s%s%s", fn, h ? "loaded " : "",
                  h ? path : "NVRTC's builtins not beside it: ", h ? "" : why);
        gpuk__log(GPUK_LOG_DEBUG, 0, msg);
    }
}

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
    if (!gpuk__nv.get_proc) gpuk__nvrtc_builtins(fn, major, minor);
    GPUK__ATOMIC_STORE(&gpuk__nv.loaded, 1);
    if (!gpuk__nv.get_proc && gpuk__log_wants(GPUK_LOG_INFO)) {
        char msg[GPUK__PATH_MAX + 120];
        gpuk__fmt(msg, sizeof msg, 0, "%s: NVRTC %d.%d loaded from %s (%s)", fn, major, minor,
                  gpuk__nv.found, gpuk__nv.found_how ? gpuk__nv.found_how : "");
        gpuk__log(GPUK_LOG_INFO, 0, msg);
    }
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
    return gpuk__fail(fn, res == 1 ? GPUK_ERR_HOST_ALLOC : GPUK_ERR_COMPILE,
                      "'%s': %s: %s (%u)%s%s", label, call, name ? name : "NVRTC error", res,
                      first[0] ? ": " : "", first);
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

/* gpuk_device.cuh, the header gpuk hands to every NVRTC compile under that name (users'
   kernels include it for gpuk's random numbers and reductions), its text in pieces. */
/* GPUK_GENERATED_BEGIN(device_header) */
/* GPUK_GENERATED_END(device_header) */
#define GPUK__DEVICE_HEADER_NAME "gpuk_device.cuh"

/* The joined text written at buf (buf NULL: only counted); its length, less the NUL. */
static size_t gpuk__device_header_text(char* buf) {
    size_t n = 0, k;
    int i;
    for (i = 0; gpuk__device_header[i]; i++) {
        k = strlen(gpuk__device_header[i]);
        if (buf) memcpy(buf + n, gpuk__device_header[i], k);
        n += k;
    }
    if (buf) buf[n] = 0;
    return n;
}

/* 0 when the desc brings a header named "gpuk_device.cuh" itself (it then goes alone), else 1 */
static uint32_t gpuk__device_header_added(const gpuk_compile_desc* d) {
    uint32_t i;
    for (i = 0; i < d->num_headers; i++)
        if (strcmp(d->headers[i].name, GPUK__DEVICE_HEADER_NAME) == 0) return 0;
    return 1;
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
    /* the embedded gpuk_device.cuh changes only with gpuk.h, the disk cache outlives it */
    pos = gpuk__key_put(buf, pos, GPUK__DEVICE_HEADER_HASH);
    for (i = 0; i < d->num_options; i++) pos = gpuk__key_put(buf, pos, d->options[i]);
    for (i = 0; i < d->num_headers; i++) {
        pos = gpuk__key_put(buf, pos, d->headers[i].name);
        pos = gpuk__key_put(buf, pos, d->headers[i].source);
    }
    for (i = 0; i < d->num_name_expressions; i++)
        pos = gpuk__key_put(buf, pos, d->name_expressions[i]);
    return pos;
}

static const gpuk__nvrtc_entry* gpuk__nvrtc_cache_find(uint64_t hash, const char* key,
                                                       size_t bytes) {
    const gpuk__nvrtc_entry* e;
    for (e = gpuk__nv.cache; e; e = e->next)
        if (e->hash == hash && e->key_bytes == bytes && memcmp(e + 1, key, bytes) == 0) return e;
    return NULL;
}

/* Runs NVRTC on the program; on success *out is a new cache entry (not yet in the cache). The
   program is always destroyed; whatever was allocated is freed on every path. The image is
   PTX (is_ptx), else LTO-IR (lto: -dlto is among the options), else a cubin. */
static gpuk_result gpuk__nvrtc_run(const char* fn, const gpuk_compile_desc* d, const char* name,
                                   const char* arch_option, int is_ptx, int lto, const char* key,
                                   size_t key_bytes, gpuk__nvrtc_entry** out) {
    const gpuk__nvrtc* nv = &gpuk__nv.fns;
    const uint32_t added = gpuk__device_header_added(d), nh = d->num_headers + added;
    const size_t n_ptrs = (size_t)d->num_options + 1u + 2u * (size_t)nh;
    const size_t text_bytes = added ? gpuk__device_header_text(NULL) + 1u : 0u;
    /* the pointers, then the joined gpuk_device.cuh */
    const char** ptrs = (const char**)gpuk__alloc(n_ptrs * sizeof *ptrs + text_bytes);
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
        ptrs[d->num_options + 1u + nh + i] = d->headers[i].name;
    }
    if (added) {
        char* text = (char*)(ptrs + n_ptrs);
        gpuk__device_header_text(text);
        ptrs[d->num_options + 1u + d->num_headers] = text;
        ptrs[d->num_options + 1u + nh + d->num_headers] = GPUK__DEVICE_HEADER_NAME;
    }
    call = "nvrtcCreateProgram";
    res = nv->nvrtcCreateProgram(&prog, d->source, name, (int)nh,
                                 nh ? ptrs + d->num_options + 1 : NULL,
                                 nh ? ptrs + d->num_options + 1 + nh : NULL);
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
        if (log && d->log) gpuk__copy_text(d->log, d->log_bytes, log);
        if (!res && log_res) { res = log_res; call = "nvrtcGetProgramLogSize"; }
    }
    if (res) {
        if (log && log[0]) gpuk__log(GPUK_LOG_ERROR, GPUK_ERR_COMPILE, log);
        r = gpuk__nvrtc_fail(fn, name, call, res, log);
    } else if (log && log[0]) {
        gpuk__log(GPUK_LOG_WARN, 0, log);
    }
    if (!r) {
        call = is_ptx ? "nvrtcGetPTXSize" : lto ? "nvrtcGetLTOIRSize" : "nvrtcGetCUBINSize";
        res = is_ptx ? nv->nvrtcGetPTXSize(prog, &image_bytes)
              : lto  ? nv->nvrtcGetLTOIRSize(prog, &image_bytes)
                     : nv->nvrtcGetCUBINSize(prog, &image_bytes);
        for (i = 0; !res && i < d->num_name_expressions; i++) {
            const char* lowered = NULL;
            call = "nvrtcGetLoweredName";
            res = nv->nvrtcGetLoweredName(prog, d->name_expressions[i], &lowered);
            if (!res)
                names_bytes += strlen(d->name_expressions[i]) + strlen(lowered ? lowered : "") + 2;
        }
        if (!res && !image_bytes) res = 11; /* NVRTC_ERROR_INTERNAL_ERROR: an empty image */
        if (res) r = gpuk__nvrtc_fail(fn, name, call, res, NULL);
    }
    if (!r &&
        !(e = (gpuk__nvrtc_entry*)gpuk__alloc(sizeof *e + key_bytes + image_bytes + names_bytes)))
        r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "'%s': cannot allocate %zu bytes for the compiled "
                       "program", name, sizeof *e + key_bytes + image_bytes + names_bytes);
    if (!r) {
        char* image = (char*)(e + 1) + key_bytes;
        e->key_bytes = key_bytes;
        e->image_bytes = image_bytes;
        e->names_bytes = names_bytes;
        e->is_ptx = is_ptx;
        e->is_ltoir = lto;
        memcpy(e + 1, key, key_bytes);
        call = is_ptx ? "nvrtcGetPTX" : lto ? "nvrtcGetLTOIR" : "nvrtcGetCUBIN";
        res = is_ptx ? nv->nvrtcGetPTX(prog, image)
              : lto  ? nv->nvrtcGetLTOIR(prog, image) : nv->nvrtcGetCUBIN(prog, image);
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
    if (!d->log != !d->log_bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.log and desc.log_bytes: set both "
                          "(a buffer and its size) or neither");
    if (d->log) d->log[0] = 0;
    if (!d->source) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.source is NULL");
    if ((d->num_options && !d->options) || (d->num_headers && !d->headers) ||
        (d->num_name_expressions && !d->name_expressions))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "desc: a count is nonzero but its array is NULL");
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
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "desc.headers[%u]: name or source is NULL", i);
    for (i = 0; i < d->num_name_expressions; i++)
        if (!d->name_expressions[i] || !*d->name_expressions[i])
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.name_expressions[%u] is NULL or "
                              "empty", i);
    return GPUK_OK;
}

/* ---- the disk cache (gpuk_desc.nvrtc_cache_dir, GPUK_CACHE_DIR) ---- */
/* One file per compile key: "<folder>/nvrtc-<hash>.gpuk", this header, then the entry's key,
   image and lowered names. Numbers are in the writer's byte order, and the key holds size_t
   lengths, so a file from a machine of another byte order or size_t width never matches. */
typedef struct gpuk__disk_header {
    char magic[16];                /* gpuk__disk_magic: the format */
    uint64_t key_bytes, image_bytes, names_bytes;
    uint64_t is_ptx, arch;
    uint64_t sum;                  /* FNV-1a of key, image and names */
} gpuk__disk_header;
static const char gpuk__disk_magic[16] = "gpuk nvrtc 1\n";

/* A disk cache failure: GPUK_LOG_WARN the first time after gpuk_init, GPUK_LOG_INFO after. */
static void gpuk__disk_warn(const char* msg) {
    gpuk__log(GPUK__ATOMIC_ADD(&gpuk__nv.cache_warned, 1) == 0 ? GPUK_LOG_WARN : GPUK_LOG_INFO,
              0, msg);
}

#if !defined(GPUK_NO_STDIO)
#include <errno.h>
#if defined(_WIN32)
#include <direct.h> /* _mkdir */
#if !defined(_WINDOWS_) && !defined(_WINBASE_)
__declspec(dllimport) int __stdcall MoveFileExA(const char* from, const char* to,
                                                unsigned long flags);
__declspec(dllimport) unsigned long __stdcall GetCurrentProcessId(void);
#endif
#else
#include <fcntl.h> /* open: O_EXCL */
#endif
static void gpuk__disk_name(char* buf, size_t cap, uint64_t hash) {
    char hex[17];
    int i;
    for (i = 15; i >= 0; i--, hash >>= 4) hex[i] = "0123456789abcdef"[hash & 15u];
    hex[16] = 0;
    gpuk__fmt(buf, cap, 0, "%s" GPUK__SEP "nvrtc-%s.gpuk", gpuk__nv.cache_dir, hex);
}

/* The entry the disk cache holds for key, or NULL: no file, or one whose format, sizes, key,
   target or checksum differ (cut short, damaged, another program of the same hash), which the
   compile then writes again. */
static gpuk__nvrtc_entry* gpuk__disk_read(const char* fn, const char* name, uint64_t hash,
                                          const char* key, size_t key_bytes, int is_ptx,
                                          int arch) {
    char file[GPUK__PATH_MAX], msg[GPUK__PATH_MAX + 200];
    gpuk__disk_header h;
    gpuk__nvrtc_entry* e = NULL;
    const char* bad = NULL;
    long size = -1;
    size_t body = 0;
    FILE* f;
    gpuk__disk_name(file, sizeof file, hash);
    if (!(f = fopen(file, "rb"))) {
        if (errno != ENOENT) {
            gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': cannot read the disk cache file %s: %s", fn,
                      name, file, strerror(errno));
            gpuk__disk_warn(msg);
        }
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        fread(&h, sizeof h, 1, f) != 1)
        bad = "is too short";
    else if (memcmp(h.magic, gpuk__disk_magic, sizeof h.magic) != 0)
        bad = "is not one of this gpuk's";
    else if (h.key_bytes != key_bytes || h.is_ptx != (uint64_t)is_ptx ||
             h.arch != (uint64_t)arch || !h.image_bytes || h.image_bytes > (1ull << 31) ||
             h.names_bytes > (1ull << 24))
        bad = "holds another program";
    else if ((uint64_t)size != sizeof h + h.key_bytes + h.image_bytes + h.names_bytes)
        bad = "has the wrong size";
    else if (!(e = (gpuk__nvrtc_entry*)gpuk__alloc(
                   sizeof *e + (body = key_bytes + (size_t)h.image_bytes + (size_t)h.names_bytes))))
        bad = "cannot be read (no host memory)";
    else if (fread(e + 1, 1, body, f) != body)
        bad = "cannot be read whole";
    else if (memcmp(e + 1, key, key_bytes) != 0)
        bad = "holds another program of the same hash";
    else if (gpuk__fnv1a((const char*)(e + 1), body) != h.sum)
        bad = "is damaged";
    fclose(f);
    if (!bad) {
        /* what readers rely on: PTX ends in its NUL, names are NUL-terminated pairs */
        const char* image = (const char*)(e + 1) + key_bytes;
        const char* names = image + h.image_bytes;
        size_t i, nuls = 0;
        for (i = 0; i < h.names_bytes; i++) nuls += names[i] == 0;
        if ((is_ptx && image[h.image_bytes - 1] != 0) || nuls % 2 ||
            (h.names_bytes && names[h.names_bytes - 1] != 0))
            bad = "is damaged";
    }
    if (bad) {
        gpuk__free(e);
        if (gpuk__log_wants(GPUK_LOG_INFO)) {
            gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': the disk cache file %s %s: compiling "
                      "again", fn, name, file, bad);
            gpuk__log(GPUK_LOG_INFO, 0, msg);
        }
        return NULL;
    }
    e->key_bytes = key_bytes;
    e->image_bytes = (size_t)h.image_bytes;
    e->names_bytes = (size_t)h.names_bytes;
    e->is_ptx = is_ptx;
    e->arch = arch;
    if (gpuk__log_wants(GPUK_LOG_INFO)) {
        gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': disk cache hit, %s (%s_%d) from %s", fn, name,
                  is_ptx ? "PTX" : "a cubin", is_ptx ? "compute" : "sm", arch, file);
        gpuk__log(GPUK_LOG_INFO, 0, msg);
    }
    return e;
}

/* The folder and its missing parents, made private to the user (0700); failures are left
   for the file's creation to report. */
static void gpuk__disk_mkdirs(void) {
    char dir[GPUK__PATH_MAX];
    size_t i;
    gpuk__copy_text(dir, sizeof dir, gpuk__nv.cache_dir);
    for (i = 1; dir[i - 1]; i++)
        if (dir[i] == '/' || dir[i] == '\\' || !dir[i]) {
            char c = dir[i];
            dir[i] = 0;
#if defined(_WIN32)
            _mkdir(dir);
#else
            mkdir(dir, 0700);
#endif
            dir[i] = c;
            if (!c) break;
        }
}

#if !defined(_WIN32)
static int gpuk__write_all(int fd, const void* p, size_t n) {
    const char* c = (const char*)p;
    while (n) {
        long w = (long)write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        c += w;
        n -= (size_t)w;
    }
    return 1;
}
#endif

/* Writes e whole under a temporary name in the folder, then renames it into place (atomic:
   a reader sees the old file or the new one, never part of one). Failures are logged, never
   returned. */
static void gpuk__disk_write(const char* fn, const char* name, const gpuk__nvrtc_entry* e) {
    char file[GPUK__PATH_MAX], tmp[GPUK__PATH_MAX + 64], msg[GPUK__PATH_MAX + 300];
    gpuk__disk_header h;
    size_t body = e->key_bytes + e->image_bytes + e->names_bytes;
    const char* what = NULL;
    const char* which; /* the file the failure is about */
    int err = 0, tries;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, gpuk__disk_magic, sizeof h.magic);
    h.key_bytes = e->key_bytes;
    h.image_bytes = e->image_bytes;
    h.names_bytes = e->names_bytes;
    h.is_ptx = (uint64_t)e->is_ptx;
    h.arch = (uint64_t)e->arch;
    h.sum = gpuk__fnv1a((const char*)(e + 1), body);
    gpuk__disk_name(file, sizeof file, e->hash);
    which = tmp;
#if defined(_WIN32)
    gpuk__fmt(tmp, sizeof tmp, 0, "%s.%lu.%u.tmp", file, GetCurrentProcessId(),
              GPUK__ATOMIC_ADD(&gpuk__nv.cache_seq, 1u));
    {
        FILE* f = NULL;
        for (tries = 0; tries < 2 && !f; tries++) {
            if (tries) gpuk__disk_mkdirs();
            f = fopen(tmp, "wb");
        }
        if (!f) {
            what = "cannot create";
            err = errno;
        } else {
            int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(e + 1, 1, body, f) == body;
            if (!ok) err = errno;
            if (fclose(f) != 0 && ok) { ok = 0; err = errno; }
            if (!ok) what = "cannot write";
            else if (!MoveFileExA(tmp, file, 1u)) { /* MOVEFILE_REPLACE_EXISTING */
                what = "cannot rename into place";
                which = file;
            }
            if (what) remove(tmp);
        }
    }
#else
    gpuk__fmt(tmp, sizeof tmp, 0, "%s.%ld.%u.tmp", file, gpuk__process_id(),
              (unsigned)GPUK__ATOMIC_ADD(&gpuk__nv.cache_seq, 1u));
    {
        int fd = -1, ok;
        /* O_EXCL: never through a link someone left at that name */
        for (tries = 0; tries < 2 && fd < 0; tries++) {
            if (tries && errno != ENOENT) break;
            if (tries) gpuk__disk_mkdirs();
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
        }
        if (fd < 0) {
            what = "cannot create";
            err = errno;
        } else {
            ok = gpuk__write_all(fd, &h, sizeof h) && gpuk__write_all(fd, e + 1, body);
            if (!ok) err = errno;
            if (close(fd) != 0 && ok) { ok = 0; err = errno; }
            if (!ok) what = "cannot write";
            else if (rename(tmp, file) != 0) {
                what = "cannot rename into place";
                which = file;
                err = errno;
            }
            if (what) unlink(tmp);
        }
    }
#endif
    if (what) {
        gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': %s the disk cache file %s%s%s; compiles are not "
                  "cached on disk", fn, name, what, which,
                  err ? ": " : "", err ? strerror(err) : "");
        gpuk__disk_warn(msg);
    } else if (gpuk__log_wants(GPUK_LOG_DEBUG)) {
        gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': written to the disk cache as %s", fn, name, file);
        gpuk__log(GPUK_LOG_DEBUG, 0, msg);
    }
}
#else
/* GPUK_NO_STDIO: no disk cache; a folder asked for is named once in the log. */
static gpuk__nvrtc_entry* gpuk__disk_read(const char* fn, const char* name, uint64_t hash,
                                          const char* key, size_t key_bytes, int is_ptx,
                                          int arch) {
    (void)fn; (void)name; (void)hash; (void)key; (void)key_bytes; (void)is_ptx; (void)arch;
    return NULL;
}
static void gpuk__disk_write(const char* fn, const char* name, const gpuk__nvrtc_entry* e) {
    (void)name; (void)e;
    if (!GPUK__ATOMIC_LOAD(&gpuk__nv.cache_warned)) {
        char msg[120];
        gpuk__fmt(msg, sizeof msg, 0, "%s: built with GPUK_NO_STDIO: the disk cache is left out",
                  fn);
        gpuk__disk_warn(msg);
    }
}
#endif

/* The compiled image of desc (checked by the caller) for ctx's device, from the process's
   cache, the disk cache or NVRTC, into *out_found (kept until gpuk_shutdown). Shared by
   gpuk_module_compile and gpuk_module_link's compiled inputs; lto: LTO-IR, for which desc's
   options hold -dlto (so its key is never a cubin's or PTX's). */
static gpuk_result gpuk__compile_cached_as(const char* fn, gpuk_ctx* ctx,
                                           const gpuk_compile_desc* desc, int lto,
                                           const gpuk__nvrtc_entry** out_found) {
    const gpuk__nvrtc_entry* found;
    gpuk__nvrtc_entry* made = NULL;
    const char* name;
    char arch_option[32], msg[200];
    char* key;
    size_t key_bytes;
    uint64_t hash;
    int sm, arch, cubin, is_ptx;
    gpuk_result r = GPUK_OK;
    *out_found = NULL;
    name = desc->name && *desc->name ? desc->name : "program.cu";
    if ((r = gpuk__nvrtc_ready(fn)) != GPUK_OK) return r;
    sm = ctx->info.cc_major * 10 + ctx->info.cc_minor;
    cubin = gpuk__nvrtc_target(sm, desc->ptx_only, &arch);
    if (cubin < 0)
        return gpuk__fail_hint(fn, GPUK_ERR_NO_NVRTC, "name an older NVRTC in gpuk_desc.nvrtc_path "
                               "or GPUK_NVRTC_PATH",
                               "NVRTC %d.%d compiles for sm_%d and newer; the device is sm_%d",
                               gpuk__nv.version / 1000, gpuk__nv.version % 1000 / 10,
                               gpuk__nv.num_archs ? gpuk__nv.archs[0] : arch, sm);
    if (lto && !(gpuk__nv.fns.nvrtcGetLTOIRSize && gpuk__nv.fns.nvrtcGetLTOIR))
        return gpuk__fail_hint(fn, GPUK_ERR_NO_NVRTC, "name NVRTC 12.0 or newer in "
                               "gpuk_desc.nvrtc_path or GPUK_NVRTC_PATH",
                               "'%s': NVRTC %d.%d cannot give LTO-IR (it has no nvrtcGetLTOIR)",
                               name, gpuk__nv.version / 1000, gpuk__nv.version % 1000 / 10);
    is_ptx = !cubin && !lto; /* LTO-IR for sm_XX, or compute_XX where NVRTC lists no sm_XX */
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
        /* set by gpuk_init, cleared by gpuk_shutdown, which cannot run while a ctx lives */
        int disk = gpuk__nv.cache_dir[0] != 0, from_disk = 0;
        if (disk) from_disk = (made = gpuk__disk_read(fn, name, hash, key, key_bytes, is_ptx,
                                                      arch)) != NULL;
        if (!made)
            r = gpuk__nvrtc_run(fn, desc, name, arch_option, is_ptx, lto, key, key_bytes, &made);
        if (r == GPUK_OK) {
            made->hash = hash;
            made->arch = arch;
            made->is_ltoir = lto; /* the disk cache keeps no kind but PTX's */
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
            if (disk && !from_disk) gpuk__disk_write(fn, name, found);
        }
        if (found && !from_disk && gpuk__log_wants(GPUK_LOG_INFO)) {
            gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': NVRTC %d.%d compiled it to %s (%s_%d)%s", fn,
                      name, gpuk__nv.version / 1000, gpuk__nv.version % 1000 / 10,
                      lto ? "LTO-IR" : cubin ? "a cubin" : "PTX", cubin ? "sm" : "compute",
                      arch, cubin || lto ? "" : ": this NVRTC lists no cubin target for the "
                      "device");
            gpuk__log(GPUK_LOG_INFO, 0, msg);
        }
    } else if (gpuk__log_wants(GPUK_LOG_INFO)) {
        gpuk__fmt(msg, sizeof msg, 0, "%s: '%s': cache hit, %s (%s_%d) compiled earlier", fn, name,
                  found->is_ptx ? "PTX" : found->is_ltoir ? "LTO-IR" : "a cubin",
                  found->is_ptx ? "compute" : "sm", found->arch);
        gpuk__log(GPUK_LOG_INFO, 0, msg);
    }
    gpuk__free(key);
    *out_found = found;
    return found ? GPUK_OK : r;
}

static gpuk_result gpuk__compile_cached(const char* fn, gpuk_ctx* ctx,
                                        const gpuk_compile_desc* desc,
                                        const gpuk__nvrtc_entry** out_found) {
    return gpuk__compile_cached_as(fn, ctx, desc, 0, out_found);
}

/* gpuk_module_compile, with fn naming the public call in errors (the custom kernels' create
   calls compile through it too). */
static gpuk_result gpuk__module_compile(const char* fn, gpuk_ctx* ctx,
                                        const gpuk_compile_desc* desc, gpuk_module* out_module) {
    const gpuk__nvrtc_entry* found;
    gpuk_result r;
    if (!out_module) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_module is NULL");
    out_module->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if ((r = gpuk__compile_check(fn, desc)) != GPUK_OK) return r;
    if ((r = gpuk__compile_cached(fn, ctx, desc, &found)) != GPUK_OK) return r;
    return gpuk__module_add(fn, ctx, (const unsigned char*)(found + 1) + found->key_bytes,
                            found->image_bytes, found->image_bytes, found->is_ptx,
                            desc->name && *desc->name ? desc->name : "program.cu", found,
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
