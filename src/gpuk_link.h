/* src/gpuk_link.h - part of gpuk.h: modules linked from several inputs by the driver's linker. */
/* ---- >>link ---- */
/* gpuk_module_link drives the driver's own linker (cuLinkCreate ... cuLinkComplete, CUDA 5.5;
   the _v2 ABI of cuLinkCreate/AddData/AddFile, CUDA 6.5): relocatable inputs (PTX, cubins and
   fatbins made with -rdc, archives, NVRTC programs compiled with -rdc=true) become one cubin,
   loaded as an ordinary module. The linker's error and info logs are asked for at create and
   are filled by every later call, so a failed add or complete says why. */
#define GPUK__LINK_ROWS(X) X(cuLinkCreate) X(cuLinkAddData) X(cuLinkAddFile) X(cuLinkComplete) \
    X(cuLinkDestroy)

/* Hook: the PTX text of gpuk_device_lib.cu (gpuk_device.cuh's functions, extern "C"),
   unpacked into memory that *out_block holds (free it); NULL with *r set where it cannot be
   (GPUK_NO_KERNELS leaves it out). Defined in src/gpuk_builtin_ptx.h beside the packed PTX. */
static char* gpuk__device_library_text(const char* fn, char** out_block, gpuk_result* r);

static const char* const gpuk__link_kind_name[GPUK_LINK_NUM] = {
    "detected", "PTX", "cubin", "fatbin", "library", "object", "LTO-IR"
};

/* The kind of an image by its first bytes, as gpuk_module_load detects (an archive too). */
static gpuk_link_kind gpuk__link_kind_of_image(const unsigned char* b, size_t len) {
    if (len >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
        return GPUK_LINK_CUBIN;
    if (len >= 4 && ((b[0] == 0x50 && b[1] == 0xED && b[2] == 0x55 && b[3] == 0xBA) ||
                     (b[0] == 0xB1 && b[1] == 0x43 && b[2] == 0x62 && b[3] == 0x46)))
        return GPUK_LINK_FATBIN;
    if (len >= 8 && memcmp(b, "!<arch>\n", 8) == 0) return GPUK_LINK_LIBRARY;
    return GPUK_LINK_PTX;
}

/* The kind of a file by its name's ending; GPUK_LINK_DEFAULT where the ending says nothing. */
static gpuk_link_kind gpuk__link_kind_of_path(const char* path) {
    static const struct { const char* end; gpuk_link_kind kind; } ends[] = {
        { ".ptx", GPUK_LINK_PTX }, { ".cubin", GPUK_LINK_CUBIN }, { ".fatbin", GPUK_LINK_FATBIN },
        { ".a", GPUK_LINK_LIBRARY }, { ".lib", GPUK_LINK_LIBRARY }, { ".o", GPUK_LINK_OBJECT },
        { ".obj", GPUK_LINK_OBJECT }, { ".ltoir", GPUK_LINK_LTOIR }
    };
    size_t n = strlen(path), i;
    for (i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t k = strlen(ends[i].end);
        if (n > k && strcmp(path + n - k, ends[i].end) == 0) return ends[i].kind;
    }
    return GPUK_LINK_DEFAULT;
}

static unsigned int gpuk__link_cu_type(gpuk_link_kind kind) {
    switch (kind) {
    case GPUK_LINK_CUBIN: return GPUK__CU_JIT_INPUT_CUBIN;
    case GPUK_LINK_FATBIN: return GPUK__CU_JIT_INPUT_FATBINARY;
    case GPUK_LINK_LIBRARY: return GPUK__CU_JIT_INPUT_LIBRARY;
    case GPUK_LINK_OBJECT: return GPUK__CU_JIT_INPUT_OBJECT;
    default: return GPUK__CU_JIT_INPUT_PTX;
    }
}

/* The desc's arguments, before anything is compiled or linked; the error names the first bad
   one. */
static gpuk_result gpuk__link_check(const char* fn, const gpuk_link_desc* d) {
    uint32_t i;
    if (gpuk__desc_canaries_bad(d->_start_canary, d->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_link_desc canaries are not zero");
    if (!d->log != !d->log_bytes)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.log and desc.log_bytes: set both "
                          "(a buffer and its size) or neither");
    if (d->log) d->log[0] = 0;
    if (d->num_inputs && !d->inputs)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.num_inputs is %u but desc.inputs is "
                          "NULL", d->num_inputs);
    if (!d->num_inputs)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.num_inputs is 0: nothing to link");
    if (d->num_inputs > 4096)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.num_inputs %u: more than 4096",
                          d->num_inputs);
    for (i = 0; i < d->num_inputs; i++) {
        const gpuk_link_input* in = &d->inputs[i];
        int set = (in->image.ptr != NULL) + (in->path != NULL) + (in->compile != NULL);
        if (set != 1)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u]: set exactly one of "
                              "image.ptr, path and compile (%d are set)", i, set);
        if ((unsigned)in->kind >= (unsigned)GPUK_LINK_NUM)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].kind %d is out of range",
                              i, (int)in->kind);
        if (in->compile && in->kind != GPUK_LINK_DEFAULT)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u]: kind is for image and "
                              "path; a compiled input's kind is NVRTC's output", i);
        if (in->lto && !in->compile)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].lto is for compiled "
                              "inputs; an LTO-IR image or file is kind GPUK_LINK_LTOIR", i);
        if (in->lto && in->compile->ptx_only)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u]: lto and "
                              "compile->ptx_only both set: LTO-IR is not PTX", i);
        if (in->image.ptr && in->kind == GPUK_LINK_LTOIR && !in->image.bytes)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].image.bytes is 0: "
                              "LTO-IR is binary, give its size", i);
        if (in->path && !*in->path)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].path is empty", i);
        if (in->path && in->kind == GPUK_LINK_DEFAULT &&
            gpuk__link_kind_of_path(in->path) == GPUK_LINK_DEFAULT)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].path '%s': its ending "
                              "is none of .ptx .cubin .fatbin .a .lib .o .obj .ltoir: name its "
                              "kind", i,
                              in->path);
        if (in->compile) {
            gpuk_result r = gpuk__compile_check(fn, in->compile);
            if (r != GPUK_OK) return r;
        }
    }
    return GPUK_OK;
}

/* Whether options already ask NVRTC for relocatable device code. */
static int gpuk__rdc_given(const gpuk_compile_desc* c) {
    uint32_t i;
    for (i = 0; i < c->num_options; i++) {
        const char* o = c->options[i];
        if (strcmp(o, "-rdc=true") == 0 || strcmp(o, "--relocatable-device-code=true") == 0 ||
            strcmp(o, "-dc") == 0)
            return 1;
    }
    return 0;
}

/* A compiled input: c compiled with -rdc=true added (where not given), and -dlto for LTO-IR
   (lto), through the compile cache like gpuk_module_compile's (the options are part of the
   key). */
static gpuk_result gpuk__link_compile(const char* fn, gpuk_ctx* ctx, const gpuk_compile_desc* c,
                                      int lto, const gpuk__nvrtc_entry** out) {
    gpuk_compile_desc d = *c;
    const char** opts;
    gpuk_result r;
    uint32_t n = c->num_options;
    if (gpuk__rdc_given(c) && !lto) return gpuk__compile_cached(fn, ctx, c, out);
    opts = (const char**)gpuk__alloc(((size_t)c->num_options + 2u) * sizeof *opts);
    if (!opts) {
        *out = NULL;
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate %u option pointers",
                          c->num_options + 2u);
    }
    if (c->num_options) memcpy((void*)opts, (const void*)c->options, c->num_options * sizeof *opts);
    if (!gpuk__rdc_given(c)) opts[n++] = "-rdc=true";
    if (lto) opts[n++] = "-dlto";
    d.options = opts;
    d.num_options = n;
    r = gpuk__compile_cached_as(fn, ctx, &d, lto, out);
    gpuk__free((void*)opts);
    return r;
}

/* A linker call failed: its name, the input, and the error log's first lines. */
static gpuk_result gpuk__link_fail(const char* fn, const char* call, gpuk__cu_result cr,
                                   const char* label, const char* input, const char* error_log) {
    char detail[400];
    size_t pos = gpuk__fmt(detail, sizeof detail, 0, "module '%s'%s%s%s: ", label,
                           input ? ", input '" : "", input ? input : "", input ? "'" : "");
    gpuk__first_lines(detail + pos, sizeof detail - pos,
                      error_log[0] ? error_log : "(empty linker log)");
    if (error_log[0]) gpuk__log(GPUK_LOG_ERROR, (int)cr, error_log);
    return gpuk__fail_cu(fn, call, cr, detail);
}

/* Adds one in-memory image to the link; PTX is made NUL-terminated (the driver reads it as a
   C string), its size then counting the NUL. */
static gpuk_result gpuk__link_add(const char* fn, gpuk__cu_link_state st,
                                  gpuk_link_kind kind, const unsigned char* bytes, size_t len,
                                  const char* label, const char* input, const char* error_log) {
    char* copy = NULL;
    void* data = (void*)(uintptr_t)bytes;
    size_t size = len;
    gpuk__cu_result cr;
    if (kind == GPUK_LINK_PTX) {
        if (bytes[len - 1] != 0) {
            if (!(copy = (char*)gpuk__alloc(len + 1)))
                return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot copy %zu bytes of PTX", len);
            memcpy(copy, bytes, len);
            copy[len] = 0;
            data = copy;
        }
        size = strlen((const char*)data) + 1;
    }
    cr = GPUK__DRV.cuLinkAddData(st, gpuk__link_cu_type(kind), data, size, input, 0, NULL, NULL);
    gpuk__free(copy);
    return cr ? gpuk__link_fail(fn, "cuLinkAddData", cr, label, input, error_log) : GPUK_OK;
}

/* The name input i goes by in errors and the linker's log. */
static void gpuk__link_input_label(const gpuk_link_input* in, uint32_t i, char* buf, size_t cap) {
    if (in->label && *in->label) gpuk__copy_text(buf, cap, in->label);
    else if (in->path) gpuk__copy_text(buf, cap, in->path);
    else if (in->compile && in->compile->name && *in->compile->name)
        gpuk__copy_text(buf, cap, in->compile->name);
    else gpuk__fmt(buf, cap, 0, "input %u", i);
}

/* The in-memory inputs' sizes, and their PTX checked against the driver and the device,
   before anything is compiled or the linker is asked. */
static gpuk_result gpuk__link_check_images(const char* fn, const gpuk_ctx* ctx,
                                           const gpuk_link_desc* d, const char* label) {
    char input[64];
    uint32_t i;
    for (i = 0; i < d->num_inputs; i++) {
        const gpuk_link_input* in = &d->inputs[i];
        const unsigned char* b = (const unsigned char*)in->image.ptr;
        size_t len;
        gpuk_link_kind kind;
        gpuk_result r;
        if (!b) continue;
        len = in->image.bytes ? in->image.bytes : strlen((const char*)b);
        kind = in->kind ? in->kind : gpuk__link_kind_of_image(b, len);
        gpuk__link_input_label(in, i, input, sizeof input);
        if (len == 0)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s', input '%s': the %s image "
                              "is empty", label, input, gpuk__link_kind_name[kind]);
        if (kind == GPUK_LINK_PTX && (r = gpuk__ptx_check(fn, ctx, b, len, input)) != GPUK_OK)
            return r;
    }
    return GPUK_OK;
}

/* The linker's logs into the caller's buffer: the error log, then the info log. */
static void gpuk__link_log_out(const gpuk_link_desc* d, const char* error_log,
                               const char* info_log) {
    size_t pos;
    if (!d->log) return;
    pos = gpuk__fmt(d->log, d->log_bytes, 0, "%s", error_log);
    if (info_log[0])
        gpuk__fmt(d->log, d->log_bytes, pos, "%s%s", pos && d->log[pos - 1] != '\n' ? "\n" : "",
                  info_log);
}

/* nvJitLink: a link with an LTO-IR input goes through it whole (it takes PTX, cubins,
   fatbins, objects and archives too), for the ctx's device (-arch=sm_XY) with -lto; its cubin
   is then loaded as an ordinary module. Loaded on the first such link, under
   gpuk__nvrtc_lock; a failed load is not remembered. */
static void* gpuk__njl_sym(const char* name) {
    gpuk__lib_row row;
    row.symbol = row.export_name = name;
    row.version = 12000;
    row.required = 0;
    row.offset = 0;
    return gpuk__lib_resolve(&gpuk__njl_lib, &row);
}

static gpuk_result gpuk__njl_load(const char* fn) {
    char name[64];
    uint32_t features = 0;
    unsigned int major = 0, minor = 0;
    size_t i;
    int m;
    gpuk__pfn_njl_version version = NULL;
    gpuk_result r = gpuk__lib_load(&gpuk__njl_lib, gpuk__jl.path[0] ? gpuk__jl.path : NULL,
                                   gpuk__jl.get_proc, gpuk__jl.get_proc_user_data, fn, &features);
    const char* what = gpuk__jl.get_proc ? "gpuk_desc.nvjitlink_get_proc" : gpuk__jl.found;
    if (r) return r;
    /* the newest major whose names it exports: what nvJitLink.h of that major calls */
    for (m = 13; m >= 12; m--) {
        gpuk__fmt(name, sizeof name, 0, "__nvJitLinkCreate_%d_0", m);
        if (gpuk__njl_sym(name)) break;
    }
    if (m < 12) {
        gpuk__lib_forget(&gpuk__njl_lib);
        return gpuk__fail_hint(fn, GPUK_ERR_NO_NVRTC, gpuk__njl_lib.hint, "'%s' is not nvJitLink "
                               "12 or 13 (it exports neither __nvJitLinkCreate_13_0 nor "
                               "__nvJitLinkCreate_12_0)", what);
    }
    for (i = 0; i < sizeof gpuk__njl_rows / sizeof gpuk__njl_rows[0]; i++) {
        const gpuk__lib_row* row = &gpuk__njl_rows[i];
        void* p;
        gpuk__fmt(name, sizeof name, 0, "__%s_%d_0", row->symbol, m);
        if (!(p = gpuk__njl_sym(name))) {
            gpuk__lib_forget(&gpuk__njl_lib);
            return gpuk__fail_hint(fn, GPUK_ERR_NO_NVRTC, gpuk__njl_lib.hint, "'%s' (nvJitLink "
                                   "%d) has no %s; gpuk needs it", what, m, name);
        }
        memcpy((char*)&gpuk__jl.fns + row->offset, &p, sizeof p);
    }
    gpuk__sym_to_fn(&version, sizeof version, gpuk__njl_sym("nvJitLinkVersion"));
    gpuk__jl.major = m;
    gpuk__jl.version = version && version(&major, &minor) == 0 && (int)major == m
                           ? (int)(major * 1000 + minor * 10) : m * 1000;
    gpuk__jl.lib.keep = 1; /* its code may have run: never closed */
    GPUK__ATOMIC_STORE(&gpuk__jl.loaded, 1);
    if (!gpuk__jl.get_proc && gpuk__log_wants(GPUK_LOG_INFO)) {
        char msg[GPUK__PATH_MAX + 120];
        gpuk__fmt(msg, sizeof msg, 0, "%s: nvJitLink %d.%d loaded from %s (%s)", fn,
                  gpuk__jl.version / 1000, gpuk__jl.version % 1000 / 10, gpuk__jl.found,
                  gpuk__jl.found_how ? gpuk__jl.found_how : "");
        gpuk__log(GPUK_LOG_INFO, 0, msg);
    }
    return GPUK_OK;
}

static gpuk_result gpuk__njl_ready(const char* fn) {
    gpuk_result r = GPUK_OK;
    if (GPUK__ATOMIC_LOAD(&gpuk__jl.loaded)) return GPUK_OK;
    gpuk__mutex_lock(&gpuk__nvrtc_lock);
    if (!gpuk__jl.loaded) r = gpuk__njl_load(fn);
    gpuk__mutex_unlock(&gpuk__nvrtc_lock);
    return r;
}

/* nvJitLinkResult's names (nvJitLink.h's order, which is ABI). */
static const char* gpuk__njl_result_name(unsigned int res) {
    static const char* const names[] = {
        "NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
        "NVJITLINK_ERROR_MISSING_ARCH", "NVJITLINK_ERROR_INVALID_INPUT",
        "NVJITLINK_ERROR_PTX_COMPILE", "NVJITLINK_ERROR_NVVM_COMPILE", "NVJITLINK_ERROR_INTERNAL",
        "NVJITLINK_ERROR_THREADPOOL", "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        "NVJITLINK_ERROR_FINALIZE", "NVJITLINK_ERROR_NULL_INPUT",
        "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS", "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
        "NVJITLINK_ERROR_ARCH_MISMATCH", "NVJITLINK_ERROR_OUTDATED_LIBRARY",
        "NVJITLINK_ERROR_MISSING_FATBIN", "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
        "NVJITLINK_ERROR_UNSUPPORTED_ARCH", "NVJITLINK_ERROR_LTO_NOT_ENABLED"
    };
    return res < sizeof names / sizeof names[0] ? names[res] : "NVJITLINK_ERROR";
}

/* One of nvJitLink's logs into buf (cap bytes), "" where it has none or cannot give it. */
static void gpuk__njl_log(gpuk__njl_handle h, int info, char* buf, size_t cap) {
    const gpuk__njl* j = &gpuk__jl.fns;
    size_t n = 0;
    char* all;
    buf[0] = 0;
    if (!h || (info ? j->nvJitLinkGetInfoLogSize(h, &n) : j->nvJitLinkGetErrorLogSize(h, &n)) ||
        n <= 1 || !(all = (char*)gpuk__alloc(n + 1)))
        return;
    all[0] = all[n] = 0;
    if ((info ? j->nvJitLinkGetInfoLog(h, all) : j->nvJitLinkGetErrorLog(h, all)) == 0)
        gpuk__copy_text(buf, cap, all);
    gpuk__free(all);
}

/* An nvJitLink call failed: its name and result, the input, the error log's first lines;
   GPUK_ERR_COMPILE, as for NVRTC (GPUK_ERR_HOST_ALLOC where it ran out of memory). */
static gpuk_result gpuk__njl_fail(const char* fn, const char* call, unsigned int res,
                                  const char* label, const char* input, const char* error_log) {
    char first[400];
    gpuk__first_lines(first, sizeof first, error_log[0] ? error_log : "(empty linker log)");
    if (error_log[0]) gpuk__log(GPUK_LOG_ERROR, GPUK_ERR_COMPILE, error_log);
    return gpuk__fail(fn, GPUK_ERR_COMPILE, "module '%s'%s%s%s: %s: %s (%u): %s", label,
                      input ? ", input '" : "", input ? input : "", input ? "'" : "", call,
                      gpuk__njl_result_name(res), res, first);
}

static unsigned int gpuk__njl_type(gpuk_link_kind kind) {
    switch (kind) {
    case GPUK_LINK_CUBIN: return GPUK__NJL_INPUT_CUBIN;
    case GPUK_LINK_FATBIN: return GPUK__NJL_INPUT_FATBIN;
    case GPUK_LINK_LIBRARY: return GPUK__NJL_INPUT_LIBRARY;
    case GPUK_LINK_OBJECT: return GPUK__NJL_INPUT_OBJECT;
    case GPUK_LINK_LTOIR: return GPUK__NJL_INPUT_LTOIR;
    default: return GPUK__NJL_INPUT_PTX;
    }
}

/* Whether the link has an LTO-IR input, and so goes through nvJitLink. */
static int gpuk__link_has_ltoir(const gpuk_link_desc* d) {
    uint32_t i;
    for (i = 0; i < d->num_inputs; i++) {
        const gpuk_link_input* in = &d->inputs[i];
        if ((in->compile && in->lto) || in->kind == GPUK_LINK_LTOIR ||
            (in->path && !in->kind && gpuk__link_kind_of_path(in->path) == GPUK_LINK_LTOIR))
            return 1;
    }
    return 0;
}

/* gpuk_module_link through nvJitLink (the desc checked, the ctx entered). */
static gpuk_result gpuk__njl_link(const char* fn, gpuk_ctx* ctx, const gpuk_link_desc* desc,
                                  const char* label, const char* library, uint32_t* out_id) {
    const gpuk__njl* j = &gpuk__jl.fns;
    char arch[32], error_log[4096], info_log[2048], input[64];
    const char* opts[2];
    const char* call = NULL;
    gpuk__njl_handle h = NULL;
    unsigned char* cubin = NULL;
    size_t cubin_bytes = 0;
    unsigned int res = 0;
    gpuk_result r = GPUK_OK;
    uint32_t i;
    error_log[0] = info_log[0] = input[0] = 0;
    gpuk__fmt(arch, sizeof arch, 0, "-arch=sm_%d", ctx->info.cc_major * 10 + ctx->info.cc_minor);
    opts[0] = arch;
    opts[1] = "-lto";
    call = "nvJitLinkCreate";
    if ((res = j->nvJitLinkCreate(&h, 2, opts)) != 0) h = NULL;
    for (i = 0; !res && r == GPUK_OK && i < desc->num_inputs; i++) {
        const gpuk_link_input* in = &desc->inputs[i];
        gpuk__link_input_label(in, i, input, sizeof input);
        if (in->compile) {
            const gpuk__nvrtc_entry* e = NULL;
            if ((r = gpuk__link_compile(fn, ctx, in->compile, in->lto, &e)) == GPUK_OK) {
                call = "nvJitLinkAddData";
                res = j->nvJitLinkAddData(h, e->is_ltoir ? GPUK__NJL_INPUT_LTOIR
                                             : e->is_ptx ? GPUK__NJL_INPUT_PTX
                                                         : GPUK__NJL_INPUT_CUBIN,
                                          (const unsigned char*)(e + 1) + e->key_bytes,
                                          e->image_bytes, input);
            }
        } else if (in->path) {
            gpuk_link_kind kind = in->kind ? in->kind : gpuk__link_kind_of_path(in->path);
            call = "nvJitLinkAddFile";
            res = j->nvJitLinkAddFile(h, gpuk__njl_type(kind), in->path);
        } else {
            const unsigned char* b = (const unsigned char*)in->image.ptr;
            size_t len = in->image.bytes ? in->image.bytes : strlen((const char*)b);
            gpuk_link_kind kind = in->kind ? in->kind : gpuk__link_kind_of_image(b, len);
            char* copy = NULL;
            /* PTX goes NUL-terminated, as to the driver's linker */
            if (kind == GPUK_LINK_PTX && b[len - 1] != 0) {
                if (!(copy = (char*)gpuk__alloc(len + 1))) {
                    r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot copy %zu bytes of PTX", len);
                    break;
                }
                memcpy(copy, b, len);
                copy[len++] = 0;
                b = (const unsigned char*)copy;
            }
            call = "nvJitLinkAddData";
            res = j->nvJitLinkAddData(h, gpuk__njl_type(kind), b, len, input);
            gpuk__free(copy);
        }
    }
    if (!res && r == GPUK_OK && library) {
        gpuk__copy_text(input, sizeof input, "gpuk_device_lib");
        call = "nvJitLinkAddData";
        res = j->nvJitLinkAddData(h, GPUK__NJL_INPUT_PTX, library, strlen(library) + 1, input);
    }
    if (!res && r == GPUK_OK) {
        input[0] = 0;
        call = "nvJitLinkComplete";
        if (!(res = j->nvJitLinkComplete(h))) {
            call = "nvJitLinkGetLinkedCubinSize";
            res = j->nvJitLinkGetLinkedCubinSize(h, &cubin_bytes);
        }
        if (!res && !cubin_bytes) res = 6; /* NVJITLINK_ERROR_INTERNAL: an empty cubin */
        if (!res && !(cubin = (unsigned char*)gpuk__alloc(cubin_bytes)))
            r = gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "module '%s': cannot allocate the %zu-byte "
                           "linked cubin", label, cubin_bytes);
        if (!res && cubin) {
            call = "nvJitLinkGetLinkedCubin";
            res = j->nvJitLinkGetLinkedCubin(h, cubin);
        }
    }
    gpuk__njl_log(h, 0, error_log, sizeof error_log);
    gpuk__njl_log(h, 1, info_log, sizeof info_log);
    gpuk__link_log_out(desc, error_log, info_log);
    if (res && r == GPUK_OK)
        r = gpuk__njl_fail(fn, call, res, label, input[0] ? input : NULL, error_log);
    if (r == GPUK_OK && info_log[0]) gpuk__log(GPUK_LOG_DEBUG, 0, info_log);
    if (r == GPUK_OK)
        r = gpuk__module_add(fn, ctx, cubin, cubin_bytes, cubin_bytes, 0, label, NULL, out_id);
    gpuk__free(cubin);
    /* a failed destroy leaves nvJitLink's host memory behind; the module made is good */
    if (h && j->nvJitLinkDestroy(&h) != 0)
        gpuk__log(GPUK_LOG_WARN, 0, "nvJitLinkDestroy failed: the link's host memory stays "
                  "with nvJitLink");
    return r;
}

GPUK__IMPL gpuk_result gpuk_module_link(gpuk_ctx* ctx, const gpuk_link_desc* desc,
                                        gpuk_module* out_module) {
    const char* const fn = __func__;
    unsigned int opts[4];
    void* vals[4];
    char info_log[2048], error_log[4096], input[64];
    char *library = NULL, *block = NULL;
    gpuk__cu_link_state st = NULL;
    gpuk__cu_result cr;
    gpuk_result r = GPUK_OK;
    const char* label;
    void* cubin = NULL;
    size_t cubin_bytes = 0;
    uint32_t i;
    if (!out_module) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_module is NULL");
    out_module->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!desc) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if ((r = gpuk__link_check(fn, desc)) != GPUK_OK) return r;
    label = desc->label && *desc->label ? desc->label : "linked";
    if (gpuk__link_has_ltoir(desc)) {
        if ((r = gpuk__link_check_images(fn, ctx, desc, label)) != GPUK_OK ||
            (r = gpuk__njl_ready(fn)) != GPUK_OK)
            return r;
        if (desc->gpuk_device && !(library = gpuk__device_library_text(fn, &block, &r))) return r;
        if ((r = gpuk__enter(fn, ctx)) == GPUK_OK)
            r = gpuk__njl_link(fn, ctx, desc, label, library, &out_module->id);
        gpuk__free(block);
        return r;
    }
#define GPUK__X_LINK_ROW(name) \
    if (!GPUK__DRV.name) \
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "linking needs a driver for CUDA 6.5 or " \
                          "newer; this one (%d.%d) lacks " #name, gpuk__g.driver_version / 1000, \
                          gpuk__g.driver_version % 1000 / 10);
    GPUK__LINK_ROWS(GPUK__X_LINK_ROW)
#undef GPUK__X_LINK_ROW
    if ((r = gpuk__link_check_images(fn, ctx, desc, label)) != GPUK_OK) return r;
    if (desc->gpuk_device &&
        !(library = gpuk__device_library_text(fn, &block, &r)))
        return r;
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) {
        gpuk__free(block);
        return r;
    }
    gpuk__jit_log_options(opts, vals, info_log, sizeof info_log, error_log, sizeof error_log);
    /* opts and vals stay alive until cuLinkDestroy, as the driver asks of output options */
    if ((cr = GPUK__DRV.cuLinkCreate(4, opts, vals, &st)) != 0) {
        st = NULL;
        r = gpuk__link_fail(fn, "cuLinkCreate", cr, label, NULL, error_log);
    }
    for (i = 0; r == GPUK_OK && i < desc->num_inputs; i++) {
        const gpuk_link_input* in = &desc->inputs[i];
        gpuk__link_input_label(in, i, input, sizeof input);
        if (in->compile) {
            const gpuk__nvrtc_entry* e = NULL;
            if ((r = gpuk__link_compile(fn, ctx, in->compile, 0, &e)) == GPUK_OK)
                r = gpuk__link_add(fn, st, e->is_ptx ? GPUK_LINK_PTX : GPUK_LINK_CUBIN,
                                   (const unsigned char*)(e + 1) + e->key_bytes, e->image_bytes,
                                   label, input, error_log);
        } else if (in->path) {
            gpuk_link_kind kind = in->kind ? in->kind : gpuk__link_kind_of_path(in->path);
            cr = GPUK__DRV.cuLinkAddFile(st, gpuk__link_cu_type(kind), in->path, 0, NULL, NULL);
            if (cr) r = gpuk__link_fail(fn, "cuLinkAddFile", cr, label, input, error_log);
        } else {
            const unsigned char* b = (const unsigned char*)in->image.ptr;
            size_t len = in->image.bytes ? in->image.bytes : strlen((const char*)b);
            gpuk_link_kind kind = in->kind ? in->kind : gpuk__link_kind_of_image(b, len);
            r = gpuk__link_add(fn, st, kind, b, len, label, input, error_log);
        }
    }
    if (r == GPUK_OK && library)
        r = gpuk__link_add(fn, st, GPUK_LINK_PTX, (const unsigned char*)library,
                           strlen(library), label, "gpuk_device_lib", error_log);
    if (r == GPUK_OK && (cr = GPUK__DRV.cuLinkComplete(st, &cubin, &cubin_bytes)) != 0)
        r = gpuk__link_fail(fn, "cuLinkComplete", cr, label, NULL, error_log);
    info_log[sizeof info_log - 1] = error_log[sizeof error_log - 1] = 0;
    gpuk__link_log_out(desc, error_log, info_log);
    if (r == GPUK_OK && info_log[0]) gpuk__log(GPUK_LOG_DEBUG, 0, info_log);
    /* the cubin belongs to the link state: loaded before the state goes */
    if (r == GPUK_OK)
        r = gpuk__module_add(fn, ctx, (const unsigned char*)cubin, cubin_bytes, cubin_bytes, 0,
                             label, NULL, &out_module->id);
    gpuk__free(block);
    /* a failed destroy leaves the driver's host memory behind; the module made is good */
    if (st && !GPUK__ATOMIC_LOAD(&gpuk__g.broken) &&
        !gpuk__tolerate(fn, "cuLinkDestroy", cr = GPUK__DRV.cuLinkDestroy(st)) &&
        !gpuk__is_sticky((int)cr))
        gpuk__log(GPUK_LOG_WARN, (int)cr, "cuLinkDestroy failed: the link state's host memory "
                  "stays with the driver");
    return r;
}
