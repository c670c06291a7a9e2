/* src/gpuk_module.h - part of gpuk.h: modules: loading PTX, cubins and fatbins; the JIT log. */
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
            while (i < len && text[i] >= '0' && text[i] <= '9' && a < 1000) {
                a = a * 10 + (text[i++] - '0');
                digits++;
            }
            if (!digits || i >= len || text[i] != '.') return 0;
            i++;
            digits = 0;
            while (i < len && text[i] >= '0' && text[i] <= '9' && b < 1000) {
                b = b * 10 + (text[i++] - '0');
                digits++;
            }
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
                while (i < len && text[i] >= '0' && text[i] <= '9' && sm < 10000)
                    sm = sm * 10 + (text[i++] - '0');
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

/* PTX's .version against the driver and .target against the device, before the driver sees
   it (its own errors for these say less): gpuk_module_load and gpuk_module_link's inputs. */
static gpuk_result gpuk__ptx_check(const char* fn, const gpuk_ctx* ctx, const unsigned char* bytes,
                                   size_t len, const char* label) {
    int major, minor, sm, arch_specific, need;
    if (len == 0)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "module '%s': the PTX text is empty", label);
    if (!gpuk__ptx_header((const char*)bytes, len, &major, &minor, &sm, &arch_specific))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "module '%s': no valid .version directive "
                          "(major.minor) at the head of the PTX text (not PTX?)", label);
    need = gpuk__ptx_needs_cuda(major, minor);
    if (need > gpuk__g.driver_version)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD,
                          "module '%s': PTX .version %d.%d needs a driver for CUDA %d.%d or "
                          "newer; this driver supports CUDA %d.%d",
                          label, major, minor, need / 1000, need % 1000 / 10,
                          gpuk__g.driver_version / 1000, gpuk__g.driver_version % 1000 / 10);
    /* Newer than gpuk's table: a driver newer than the table's last entry may know it (let
       it judge); an older one cannot. */
    if (need < 0 && gpuk__g.driver_version <= gpuk__ptx_cuda[GPUK__PTX_TABLE_LAST].cuda) {
        int known = gpuk__ptx_cuda[GPUK__PTX_TABLE_LAST].ptx;
        int loads = gpuk__ptx_of_driver(gpuk__g.driver_version);
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD,
                          "module '%s': PTX .version %d.%d is newer than any PTX version gpuk "
                          "knows (%d.%d); this driver supports CUDA %d.%d (PTX .version %d.%d "
                          "and older)", label, major, minor, known / 10, known % 10,
                          gpuk__g.driver_version / 1000, gpuk__g.driver_version % 1000 / 10,
                          loads / 10, loads % 10);
    }
    if (sm > ctx->info.cc_major * 10 + ctx->info.cc_minor)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "module '%s': PTX .target sm_%d%s is newer than the device (sm_%d%d)",
                          label, sm, arch_specific ? "a" : "",
                          ctx->info.cc_major, ctx->info.cc_minor);
    /* sm_90a's instructions (wgmma, setmaxnreg) exist on 9.0 alone: newer drivers refuse it
       for 10.x with a JIT error that says less */
    if (arch_specific && sm != ctx->info.cc_major * 10 + ctx->info.cc_minor)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "module '%s': PTX .target sm_%da is architecture-specific: it runs "
                          "on compute capability %d.%d only, not on this device (sm_%d%d)",
                          label, sm, sm / 10, sm % 10, ctx->info.cc_major, ctx->info.cc_minor);
    return GPUK_OK;
}

/* The four JIT options that ask the driver (cuModuleLoadDataEx, cuLinkCreate) for its info
   and error logs, into info and error, both emptied first. */
static void gpuk__jit_log_options(unsigned int opts[4], void* vals[4], char* info,
                                  size_t info_bytes, char* error, size_t error_bytes) {
    info[0] = error[0] = 0;
    opts[0] = GPUK__CU_JIT_INFO_LOG_BUFFER; vals[0] = info;
    opts[1] = GPUK__CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES; vals[1] = (void*)(uintptr_t)info_bytes;
    opts[2] = GPUK__CU_JIT_ERROR_LOG_BUFFER; vals[2] = error;
    opts[3] = GPUK__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES; vals[3] = (void*)(uintptr_t)error_bytes;
}

/* Loads an image as a module: PTX is first checked against the driver (.version) and the
   device (.target), and copied when it does not end in a NUL; the JIT logs are always asked
   for, and the error log's first line goes into the error text. */
static gpuk_result gpuk__jit_load(const char* fn, gpuk_ctx* ctx, const unsigned char* bytes,
                                  size_t len, size_t given_bytes, int is_ptx, const char* label,
                                  gpuk__cu_module* out) {
    unsigned int opts[4];
    void* vals[4];
    char info_log[2048], error_log[4096], detail[320];
    char* text_copy = NULL;
    const void* image = bytes;
    gpuk__cu_result cr;
    gpuk_result r;
    *out = NULL;
    if (is_ptx) {
        gpuk_result checked = gpuk__ptx_check(fn, ctx, bytes, len, label);
        if (checked != GPUK_OK) return checked;
        /* The driver reads PTX up to a NUL: copy text that does not end in one. */
        if (given_bytes && bytes[len - 1] != 0) {
            text_copy = (char*)gpuk__alloc(len + 1);
            if (!text_copy)
                return gpuk__fail(fn, GPUK_ERR_HOST_ALLOC, "cannot copy %zu bytes of PTX", len);
            memcpy(text_copy, bytes, len);
            text_copy[len] = 0;
            image = text_copy;
        }
    }
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) {
        gpuk__free(text_copy);
        return r;
    }
    gpuk__jit_log_options(opts, vals, info_log, sizeof info_log, error_log, sizeof error_log);
    cr = GPUK__DRV.cuModuleLoadDataEx(out, image, 4, opts, vals);
    gpuk__free(text_copy);
    info_log[sizeof info_log - 1] = error_log[sizeof error_log - 1] = 0;
    if (cr) {
        size_t pos = gpuk__fmt(detail, sizeof detail, 0, "module '%s': ", label);
        gpuk__first_lines(detail + pos, sizeof detail - pos,
                          error_log[0] ? error_log : "(empty JIT log)");
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
        if (len >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
            d.kind = GPUK_IMAGE_CUBIN;
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
