/* src/gpuk_loader.h - part of gpuk.h: loading the driver and NVRTC; gpuk_init, gpuk_shutdown. */
/* ---- >>init ---- */
#if !defined(_WIN32)
#include <dirent.h>   /* NVRTC's search lists /usr/local and the Python folders */
#include <sys/stat.h> /* and checks folders; the disk cache makes its folder */
#endif
/* ISO C has no cast from object to function pointer; dlsym's result is copied instead. */
static void gpuk__sym_to_fn(void* fn_var, size_t fn_bytes, void* sym) {
    GPUK_ASSERT(fn_bytes == sizeof sym);
    memcpy(fn_var, &sym, fn_bytes);
}

static void* gpuk__lib_resolve(const gpuk__lib* lib, const gpuk__lib_row* row) {
    const gpuk__lib_state* st = lib->state;
    void* fn = NULL;
    if (st->user_get_proc)
        return st->user_get_proc(row->symbol, row->version, st->user_get_proc_data);
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

/* The longest library path gpuk_desc takes, its NUL included (Linux's PATH_MAX): a longer one
   is refused rather than cut, which could name another library. */
#define GPUK__PATH_MAX 4096
/* The longest gpuk_desc.nvrtc_cache_dir: the file names go after it. */
#define GPUK__CACHE_DIR_MAX (GPUK__PATH_MAX - 64)

/* NVRTC's state (>>nvrtc): the table, what gpuk_init said about finding it, and the cache
   (here, before gpuk__lib_open, whose search records where NVRTC was found). */
/* One compiled program in the cache: a header, then key_bytes of key, image_bytes of image (PTX
   with its NUL, or a cubin) and names_bytes of lowered names ("expression\0lowered\0"...). */
typedef struct gpuk__nvrtc_entry gpuk__nvrtc_entry;
struct gpuk__nvrtc_entry {
    gpuk__nvrtc_entry* next;
    uint64_t hash;
    size_t key_bytes, image_bytes, names_bytes;
    int is_ptx;
    int is_ltoir;              /* LTO-IR (NVRTC -dlto, for nvJitLink); is_ptx is then 0 */
    int arch;                  /* sm_XX / compute_XX compiled for */
};
typedef struct gpuk__nvrtc_state {
    int loaded;                /* atomic: 1 once the table is filled (under gpuk__nvrtc_lock) */
    int version;               /* 13000 for NVRTC 13.0 */
    int num_archs;             /* of archs; 0 where NVRTC cannot list them (< 11.2) */
    int archs[128];            /* sm numbers it compiles for (75, 80, ..., 120) */
    char path[GPUK__PATH_MAX]; /* gpuk_desc.nvrtc_path, copied ("" = none) */
    char found[GPUK__PATH_MAX]; /* the file that opened, for the log */
    const char* found_how;     /* how the last load found it: "by name", "in $CUDA_HOME"... */
    void* builtins;            /* NVRTC's builtins library, loaded from its folder; kept */
    char cache_dir[GPUK__PATH_MAX]; /* the disk cache's folder ("" = none) */
    int cache_warned;          /* atomic: a disk cache failure was logged at WARN already */
    unsigned cache_seq;        /* atomic: makes each temporary file name unique */
    gpuk_get_proc_fn get_proc;
    void* get_proc_user_data;
    gpuk__pfn_nvrtc_error_string error_string; /* may be NULL */
    gpuk__lib_state lib;
    gpuk__nvrtc fns;
    gpuk__nvrtc_entry* cache;  /* newest first; freed by gpuk_shutdown */
} gpuk__nvrtc_state;
static gpuk__nvrtc_state gpuk__nv;

static uint64_t gpuk__fnv1a(const char* p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--) h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
    return h;
}

/* NVRTC's search, where neither gpuk_desc.nvrtc_path nor GPUK_NVRTC_PATH names it: its
   sonames through the system loader (LD_LIBRARY_PATH, the ld.so cache, ...), then the folders
   where CUDA toolkits and pip wheels put it, as CuPy looks (the KERNELS section lists them).
   One search: what opened, and what was tried, for the error. */
typedef struct gpuk__search {
    const gpuk__lib* lib;
    const char* fn;
    void* handle;                  /* what opened; NULL while nothing did */
    char path[GPUK__PATH_MAX];     /* the file being tried (the one that opened, at the end) */
    char why[200];                 /* the first failure other than a missing file */
    char folders[512];             /* the folders tried, NUL-separated, as many as fit */
    size_t folders_len;
    int num_folders, num_listed, num_pythons, num_wheels;
    uint64_t seen[64];             /* the folders' hashes: each is tried once */
    int num_seen;
} gpuk__search;

#if defined(_WIN32)
#define GPUK__SEP "\\"
#else
#define GPUK__SEP "/"
#endif

/* A failure to open s->path: kept unless it only says the file is not there ("<path>: cannot
   open shared object file: No such file or directory"), or an earlier one was kept. */
static void gpuk__search_why(gpuk__search* s, const char* why) {
    size_t n = strlen(s->path);
    if (s->why[0]) return;
    if (strncmp(why, s->path, n) == 0 && strstr(why + n, "No such file")) return;
    if (strstr(why, s->path)) gpuk__copy_text(s->why, sizeof s->why, why);
    else gpuk__fmt(s->why, sizeof s->why, 0, "'%s': %s", s->path, why);
}

/* Tries each soname in folder; 1 once one opened (s->handle, s->path). A folder already tried
   (CUDA_HOME=/usr/local/cuda, say) is not tried again. */
static int gpuk__search_in(gpuk__search* s, const char* folder, const char* how) {
    const char* const* name;
    char why[200];
    size_t n = strlen(folder);
    uint64_t h;
    int i;
    while (n > 1 && (folder[n - 1] == '/' || folder[n - 1] == '\\')) n--;
    if (!n || n + 64 >= GPUK__PATH_MAX) return 0;
    h = gpuk__fnv1a(folder, n);
    for (i = 0; i < s->num_seen; i++)
        if (s->seen[i] == h) return 0;
    if (s->num_seen < (int)(sizeof s->seen / sizeof s->seen[0])) s->seen[s->num_seen++] = h;
    s->num_folders++;
    if (s->folders_len + n + 1 <= sizeof s->folders) {
        memcpy(s->folders + s->folders_len, folder, n);
        s->folders[s->folders_len + n] = 0;
        s->folders_len += n + 1;
        s->num_listed++;
    }
    if (gpuk__log_wants(GPUK_LOG_DEBUG)) {
        char msg[GPUK__PATH_MAX + 100];
        gpuk__fmt(msg, sizeof msg, 0, "%s: looking for %s in %s (%s)", s->fn, s->lib->kind,
                  folder, how);
        gpuk__log(GPUK_LOG_DEBUG, 0, msg);
    }
    for (name = s->lib->sonames; *name; name++) {
        size_t k = strlen(*name);
        if (n + 1 + k >= sizeof s->path) continue;
        memcpy(s->path, folder, n);
        s->path[n] = GPUK__SEP[0];
        memcpy(s->path + n + 1, *name, k + 1);
        s->handle = gpuk__lib_open_path(s->path, why, sizeof why);
        if (s->handle) {
            *s->lib->found_how = how;
            return 1;
        }
        gpuk__search_why(s, why);
    }
    return 0;
}

/* root + sub (sub NULL: root alone) into buf; 0 where it does not fit. */
static int gpuk__join(char* buf, size_t cap, const char* root, const char* sub) {
    size_t pos;
    if (!root || !*root) return 0;
    pos = gpuk__fmt(buf, cap, 0, "%s%s%s", root, sub ? GPUK__SEP : "", sub ? sub : "");
    return pos + 1 < cap;
}

#if !defined(_WIN32)
static int gpuk__is_dir(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The entries of folder named prefix + N or prefix + N.M (digits only), newest version first:
   "cuda-" gives cuda-13.0, cuda-12.6, cuda-12.4, cuda-11.8; "python3." gives python3.13,
   python3.12, python3.9. At most max of them, names up to 31 characters; the count. */
static int gpuk__versions(const char* folder, const char* prefix, char (*out)[32], int max) {
    long keys[16];
    int n = 0, i;
    size_t plen = strlen(prefix);
    struct dirent* e;
    DIR* d = opendir(folder);
    if (!d) return 0;
    if (max > 16) max = 16;
    while ((e = readdir(d)) != NULL) {
        const char* p = e->d_name;
        long major = 0, minor = -1, key;
        if (strncmp(p, prefix, plen) != 0 || strlen(p) >= 32) continue;
        p += plen;
        if (*p < '0' || *p > '9') continue;
        while (*p >= '0' && *p <= '9' && major < 100000) major = major * 10 + (*p++ - '0');
        if (*p == '.' && p[1] >= '0' && p[1] <= '9')
            for (p++, minor = 0; *p >= '0' && *p <= '9' && minor < 100000; p++)
                minor = minor * 10 + (*p - '0');
        if (*p) continue;
        key = major * 1000000 + minor + 1; /* cuda-12 (a link to the newest 12.x) before 12.x */
        if (minor < 0) key = major * 1000000 + 999999;
        if (n == max && key <= keys[n - 1]) continue;
        for (i = n < max ? n : max - 1; i > 0 && keys[i - 1] < key; i--) {
            keys[i] = keys[i - 1];
            memcpy(out[i], out[i - 1], 32);
        }
        keys[i] = key;
        memcpy(out[i], e->d_name, strlen(e->d_name) + 1);
        if (n < max) n++;
    }
    closedir(d);
    return n;
}

/* The pip wheels' folders under the python3.X installations of base (".../lib"). */
static int gpuk__search_wheels(gpuk__search* s, const char* base, const char* how) {
    static const char* const packages[] = { "site-packages", "dist-packages" };
    /* nvidia-cuda-nvrtc 13.x installs into nvidia/cu13/lib, the -cu12/-cu11 wheels into
       nvidia/cuda_nvrtc/lib; nvidia-nvjitlink-cu12 into nvidia/nvjitlink/lib */
    static const char* const wheels[] = { "nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib",
                                          "nvidia/nvjitlink/lib" };
    char pythons[8][32], dir[GPUK__PATH_MAX], folder[GPUK__PATH_MAX];
    int n = gpuk__versions(base, "python3.", pythons, 8), i;
    size_t p, w;
    for (i = 0; i < n; i++)
        for (p = 0; p < 2; p++) {
            if (gpuk__fmt(dir, sizeof dir, 0, "%s/%s/%s", base, pythons[i], packages[p]) + 1 >=
                    sizeof dir || !gpuk__is_dir(dir))
                continue;
            s->num_pythons++;
            for (w = 0; w < sizeof wheels / sizeof wheels[0]; w++) {
                if (!gpuk__join(folder, sizeof folder, dir, wheels[w]) || !gpuk__is_dir(folder))
                    continue;
                s->num_wheels++;
                if (gpuk__search_in(s, folder, how)) return 1;
            }
        }
    return 0;
}
#endif

/* The folders after the sonames, in order; 1 once one opened. */
static int gpuk__search_folders(gpuk__search* s) {
    static const char* const roots[] = { "CUDA_PATH", "CUDA_HOME" };
    static const char* const hows[] = { "in $CUDA_PATH", "in $CUDA_HOME" };
#if defined(_WIN32)
    /* the CUDA 13 toolkit keeps its DLLs in bin\x64, older ones in bin */
    static const char* const subs[] = { "bin\\x64", "bin" };
#else
    static const char* const subs[] = { "lib64", "lib" };
    static const char* const envs[] = { "VIRTUAL_ENV", "CONDA_PREFIX" };
    static const char* const env_hows[] = { "a pip wheel in $VIRTUAL_ENV",
                                            "a pip wheel in $CONDA_PREFIX" };
    char cudas[16][32];
    const char* home;
    int n;
#endif
    char folder[GPUK__PATH_MAX];
    size_t r, i;
    for (r = 0; r < 2; r++)
        for (i = 0; i < 2; i++)
            if (gpuk__join(folder, sizeof folder, gpuk__getenv(roots[r]), subs[i]) &&
                gpuk__search_in(s, folder, hows[r]))
                return 1;
#if !defined(_WIN32)
    if (gpuk__search_in(s, "/usr/local/cuda/lib64", "in /usr/local/cuda")) return 1;
    n = gpuk__versions("/usr/local", "cuda-", cudas, 16);
    for (r = 0; r < (size_t)n; r++)
        if (gpuk__fmt(folder, sizeof folder, 0, "/usr/local/%s/lib64", cudas[r]) &&
            gpuk__search_in(s, folder, "in a versioned toolkit folder"))
            return 1;
    /* the active environment's first, then the user's, then the system's: Python's order */
    for (r = 0; r < 2; r++)
        if (gpuk__join(folder, sizeof folder, gpuk__getenv(envs[r]), "lib") &&
            gpuk__search_wheels(s, folder, env_hows[r]))
            return 1;
    home = gpuk__getenv("HOME");
    if (gpuk__join(folder, sizeof folder, home, ".local/lib") &&
        gpuk__search_wheels(s, folder, "a pip wheel in ~/.local"))
        return 1;
    if (gpuk__search_wheels(s, "/usr/local/lib", "a pip wheel in /usr/local/lib") ||
        gpuk__search_wheels(s, "/usr/lib", "a pip wheel in /usr/lib"))
        return 1;
#endif
    return 0;
}

/* The names as the error lists them: "libnvrtc.so.13, .12, .11.2" (each after the first from
   its last '.' within the part it shares with the first). */
static size_t gpuk__names_short(char* buf, size_t cap, const char* const* names) {
    size_t pos = 0, i;
    for (i = 0; names[i]; i++) {
        const char* t = names[i];
        if (i) {
            size_t k = 0, dot = 0;
            while (t[k] && t[k] == names[0][k]) {
                if (t[k] == '.') dot = k;
                k++;
            }
            if (dot) t += dot;
        }
        pos = gpuk__fmt(buf, cap, pos, "%s%s", i ? ", " : "", t);
    }
    return pos;
}

/* The search failed: the error names what was tried, cut to fit gpuk_last_error's 512 bytes
   (the folders first cut, with their count); GPUK_LOG_DEBUG heard each folder. */
static gpuk_result gpuk__search_fail(gpuk__search* s) {
    static const char hint[] = "install it (the toolkit's cuda-nvrtc package, or pip install "
                               "nvidia-cuda-nvrtc), or name it in gpuk_desc.nvrtc_path or "
                               "GPUK_NVRTC_PATH";
    char names[160], pythons[96], folders[512], more[40];
    const char* f = s->folders;
    size_t fixed, pos = 0;
    int i, shown = 0;
    gpuk__names_short(names, sizeof names, s->lib->sonames);
    pythons[0] = more[0] = 0;
    if (s->num_pythons && !s->num_wheels)
        gpuk__fmt(pythons, sizeof pythons, 0, "; no %s wheel in the %d Python site-packages "
                  "folders found", s->lib->kind, s->num_pythons);
    /* fn ": cannot load NVRTC (not found): tried " names " by name, then in " folders more
       pythons ": " why " (hint: " hint ")" */
    fixed = strlen(s->fn) + strlen(s->lib->kind) + strlen(names) + strlen(pythons) +
            strlen(s->why) + (s->lib->hint ? strlen(s->lib->hint) + 1 : sizeof hint) + 80;
    folders[0] = 0;
    for (i = 0; i < s->num_listed; i++, f += strlen(f) + 1) {
        if (fixed + pos + strlen(f) + 2 + sizeof more > 511) break;
        pos = gpuk__fmt(folders, sizeof folders, pos, "%s%s", i ? ", " : "", f);
        shown++;
    }
    if (shown < s->num_folders)
        gpuk__fmt(more, sizeof more, 0, "%s%d more folder%s", shown ? " and " : "",
                  s->num_folders - shown, s->num_folders - shown == 1 ? "" : "s");
    return gpuk__fail_hint(s->fn, s->lib->missing_code, s->lib->hint ? s->lib->hint : hint,
                           "cannot load %s%s: tried %s by name%s%s%s%s%s%s", s->lib->kind,
                           s->why[0] ? "" : " (not found)", names,
                           s->num_folders ? ", then in " : "", folders, more, pythons,
                           s->why[0] ? ": " : "", s->why);
}

/* The sonames, then the toolkit's folders (gpuk__search_folders), for NVRTC and nvJitLink;
   *out_name is what opened. */
static gpuk_result gpuk__nvrtc_search(const gpuk__lib* lib, const char* fn, void** out_handle,
                                      const char** out_name) {
    gpuk__search s;
    char why[200];
    const char* const* name;
    memset(&s, 0, sizeof s);
    s.lib = lib;
    s.fn = fn;
    for (name = lib->sonames; *name; name++) {
        gpuk__copy_text(s.path, sizeof s.path, *name);
        if ((s.handle = gpuk__lib_open_path(*name, why, sizeof why)) != NULL) {
            *lib->found_how = "by name";
            *out_handle = s.handle;
            *out_name = *name;
            return GPUK_OK;
        }
        gpuk__search_why(&s, why);
    }
    if (!gpuk__search_folders(&s)) return gpuk__search_fail(&s);
    gpuk__copy_text(lib->found, GPUK__PATH_MAX, s.path);
    *out_handle = s.handle;
    *out_name = lib->found;
    return GPUK_OK;
}

/* Opens the library named by path (else lib->env_path, else each of lib->sonames in turn;
   NVRTC's search goes on to its folders) as lib->state->handle; *out_name is the name that
   opened. */
static gpuk_result gpuk__lib_open(const gpuk__lib* lib, const char* path, const char* fn,
                                  const char** out_name) {
    gpuk__lib_state* st = lib->state;
    char why[200], tried[300];
    size_t pos = 0;
    const char* const* name;
    void* h = NULL;
    int search = lib->found != NULL;
    why[0] = tried[0] = 0;
    if (search) *lib->found_how = path ? lib->desc_field : lib->env_path;
    if (!path && lib->env_path) path = gpuk__getenv(lib->env_path);
    if (path && *path) {
        h = gpuk__lib_open_path(path, why, sizeof why);
        if (!h)
            return gpuk__fail_hint(fn, lib->missing_code, lib->hint, "cannot load %s '%s': %s",
                                   lib->name, path, why);
    } else if (search) {
        gpuk_result r = gpuk__nvrtc_search(lib, fn, &h, &path);
        if (r) return r;
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
            return gpuk__fail_hint(fn, lib->missing_code, lib->hint,
                                   "cannot load %s (tried %s): %s", lib->name, tried, why);
    }
    if (h == st->handle) {
        gpuk__lib_close(h); /* kept from an earlier load: only the new reference goes */
    } else {
        /* Another library was kept: it stays loaded (its threads may run it), forgotten here. */
        if (st->handle && !st->keep) gpuk__lib_close(st->handle);
        st->handle = h;
        st->keep = 0;
    }
    if (search && path != lib->found) gpuk__copy_text(lib->found, GPUK__PATH_MAX, path);
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
    1, GPUK_ERR_NO_DRIVER, GPUK_ERR_DRIVER_TOO_OLD, NULL, NULL, NULL, NULL
};

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
    0, GPUK_ERR_NO_NVRTC, GPUK_ERR_NO_NVRTC, NULL, gpuk__nv.found, &gpuk__nv.found_how,
    "gpuk_desc.nvrtc_path"
};

/* nvJitLink's state (>>link): loaded by the first link with an LTO-IR input (gpuk__njl_load),
   under gpuk__nvrtc_lock, and kept like NVRTC. Its search is NVRTC's, for its own sonames. */
typedef struct gpuk__njl_state {
    int loaded;                /* atomic: 1 once the table is filled */
    int version;               /* 13000 for 13.0; the major alone (12000) before nvJitLink 12.3 */
    int major;                 /* of the exports' names: __nvJitLinkCreate_<major>_0 */
    char path[GPUK__PATH_MAX]; /* gpuk_desc.nvjitlink_path, copied ("" = none) */
    char found[GPUK__PATH_MAX]; /* the file that opened, for the log */
    const char* found_how;
    gpuk_get_proc_fn get_proc;
    void* get_proc_user_data;
    gpuk__lib_state lib;
    gpuk__njl fns;
} gpuk__njl_state;
static gpuk__njl_state gpuk__jl;

static const char* const gpuk__njl_sonames[] = { GPUK__NVJITLINK_NAMES, NULL };

/* No rows and no probe here: the exports' names depend on the major (gpuk__njl_load). */
static const gpuk__lib gpuk__njl_lib = {
    "nvJitLink (the CUDA LTO-IR linker)", "nvJitLink", gpuk__njl_sonames, "GPUK_NVJITLINK_PATH",
    NULL, NULL, NULL, 0, NULL, 0, &gpuk__jl.fns, sizeof gpuk__jl.fns, &gpuk__jl.lib,
    0, GPUK_ERR_NO_NVRTC, GPUK_ERR_NO_NVRTC,
    "install it (the toolkit's libnvjitlink package, or pip install nvidia-nvjitlink-cu12), or "
    "name it in gpuk_desc.nvjitlink_path or GPUK_NVJITLINK_PATH",
    gpuk__jl.found, &gpuk__jl.found_how, "gpuk_desc.nvjitlink_path"
};

/* The table forgotten (the library stays loaded once its code ran); the caller holds
   gpuk__nvrtc_lock. */
static void gpuk__njl_forget_locked(void) {
    if (GPUK__ATOMIC_LOAD(&gpuk__jl.loaded)) gpuk__lib_forget(&gpuk__njl_lib);
    GPUK__ATOMIC_STORE(&gpuk__jl.loaded, 0);
    gpuk__jl.version = gpuk__jl.major = 0;
    gpuk__jl.path[0] = gpuk__jl.found[0] = 0;
    gpuk__jl.found_how = NULL;
    gpuk__jl.get_proc = NULL;
    gpuk__jl.get_proc_user_data = NULL;
}

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
    gpuk__nv.path[0] = gpuk__nv.found[0] = gpuk__nv.cache_dir[0] = 0;
    gpuk__nv.found_how = NULL;
    GPUK__ATOMIC_STORE(&gpuk__nv.cache_warned, 0);
    gpuk__nv.get_proc = NULL;
    gpuk__nv.get_proc_user_data = NULL;
}

/* gpuk_shutdown: the next gpuk_init's NVRTC and nvJitLink settings apply. */
static void gpuk__nvrtc_forget(void) {
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    gpuk__nvrtc_forget_locked();
    gpuk__njl_forget_locked();
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
}

/* gpuk_init: where the next NVRTC load looks (the path is copied: it is used later). An NVRTC
   that gpuk_nvrtc_version loaded before gpuk_init, from GPUK_NVRTC_PATH or the default search,
   gives way to the one this init names; with neither nvrtc_path nor nvrtc_get_proc set it
   stays, being the one the defaults find. The disk cache's folder: nvrtc_cache_dir, else
   GPUK_CACHE_DIR (secure_getenv: the cache decides what code runs), else none. */
static void gpuk__nvrtc_configure(const gpuk_desc* d) {
    const char* dir = d->nvrtc_cache_dir ? d->nvrtc_cache_dir : gpuk__getenv("GPUK_CACHE_DIR");
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    if ((d->nvrtc_path || d->nvrtc_get_proc) && GPUK__ATOMIC_LOAD(&gpuk__nv.loaded))
        gpuk__nvrtc_forget_locked();
    gpuk__copy_text(gpuk__nv.path, sizeof gpuk__nv.path, d->nvrtc_path);
    gpuk__nv.get_proc = d->nvrtc_get_proc;
    gpuk__nv.get_proc_user_data = d->nvrtc_get_proc_user_data;
    /* nvJitLink the same way: one named replaces one loaded */
    if ((d->nvjitlink_path || d->nvjitlink_get_proc) && GPUK__ATOMIC_LOAD(&gpuk__jl.loaded))
        gpuk__njl_forget_locked();
    gpuk__copy_text(gpuk__jl.path, sizeof gpuk__jl.path, d->nvjitlink_path);
    gpuk__jl.get_proc = d->nvjitlink_get_proc;
    gpuk__jl.get_proc_user_data = d->nvjitlink_get_proc_user_data;
    gpuk__nv.cache_dir[0] = 0;
    GPUK__ATOMIC_STORE(&gpuk__nv.cache_warned, 0);
    if (dir && strlen(dir) < GPUK__CACHE_DIR_MAX)
        gpuk__copy_text(gpuk__nv.cache_dir, sizeof gpuk__nv.cache_dir, dir);
    else if (dir) { /* only GPUK_CACHE_DIR: gpuk_init refuses a nvrtc_cache_dir this long */
        char msg[160];
        gpuk__fmt(msg, sizeof msg, 0, "gpuk_init: GPUK_CACHE_DIR is %zu characters long (at most "
                  "%d are taken): compiles are not cached on disk", strlen(dir),
                  GPUK__CACHE_DIR_MAX - 1);
        gpuk__log(GPUK_LOG_WARN, 0, msg);
    }
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
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD,
                          "driver supports CUDA %d.%d; gpuk needs 10.0 or newer",
                          version / 1000, version % 1000 / 10);
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
    if (d.nvjitlink_path && strlen(d.nvjitlink_path) >= GPUK__PATH_MAX)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.nvjitlink_path is %zu characters "
                          "long; at most %d are taken", strlen(d.nvjitlink_path),
                          GPUK__PATH_MAX - 1);
    if (d.nvrtc_cache_dir && strlen(d.nvrtc_cache_dir) >= GPUK__CACHE_DIR_MAX)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_desc.nvrtc_cache_dir is %zu characters "
                          "long; at most %d are taken", strlen(d.nvrtc_cache_dir),
                          GPUK__CACHE_DIR_MAX - 1);
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
        gpuk__fmt(gpuk__tls_error, sizeof gpuk__tls_error, 0,
                  "%s: gpuk_init failed earlier (call it again to retry): %s", fn,
                  gpuk__g.init_failed_text);
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
