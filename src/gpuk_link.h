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
    "detected", "PTX", "cubin", "fatbin", "library", "object"
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
        { ".obj", GPUK_LINK_OBJECT }
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
        if (in->path && !*in->path)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].path is empty", i);
        if (in->path && in->kind == GPUK_LINK_DEFAULT &&
            gpuk__link_kind_of_path(in->path) == GPUK_LINK_DEFAULT)
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.inputs[%u].path '%s': its ending "
                              "is none of .ptx .cubin .fatbin .a .lib .o .obj: name its kind", i,
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

/* A compiled input: c compiled with -rdc=true added (where not given), through the compile
   cache like gpuk_module_compile's (the option is part of the key). */
static gpuk_result gpuk__link_compile(const char* fn, gpuk_ctx* ctx, const gpuk_compile_desc* c,
                                      const gpuk__nvrtc_entry** out) {
    gpuk_compile_desc d = *c;
    const char** opts;
    gpuk_result r;
    if (gpuk__rdc_given(c)) return gpuk__compile_cached(fn, ctx, c, out);
    opts = (const char**)gpuk__alloc(((size_t)c->num_options + 1u) * sizeof *opts);
    if (!opts) {
        *out = NULL;
        return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot allocate %u option pointers",
                          c->num_options + 1u);
    }
    if (c->num_options) memcpy((void*)opts, (const void*)c->options, c->num_options * sizeof *opts);
    opts[c->num_options] = "-rdc=true";
    d.options = opts;
    d.num_options = c->num_options + 1u;
    r = gpuk__compile_cached(fn, ctx, &d, out);
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
    info_log[0] = error_log[0] = 0;
    opts[0] = GPUK__CU_JIT_INFO_LOG_BUFFER; vals[0] = info_log;
    opts[1] = GPUK__CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES; vals[1] = (void*)(uintptr_t)sizeof info_log;
    opts[2] = GPUK__CU_JIT_ERROR_LOG_BUFFER; vals[2] = error_log;
    opts[3] = GPUK__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    vals[3] = (void*)(uintptr_t)sizeof error_log;
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
            if ((r = gpuk__link_compile(fn, ctx, in->compile, &e)) == GPUK_OK)
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
