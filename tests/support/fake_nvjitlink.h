/* tests/support/fake_nvjitlink.h - a fake nvJitLink for host tests, plugged into gpuk via
   gpuk_desc.nvjitlink_get_proc. It answers only the versioned export names of its major
   (__nvJitLinkCreate_13_0 ...) and nvJitLinkVersion, as the real library exports them. A link
   collects the kernels of its inputs (the fake NVRTC's LTO-IR "\x7fLTO" name\0..., PTX's
   ".entry name", a cubin's ".text.name") and completes to a small ELF whose ".text.<name>"
   sections name them (a cubin, to the fake driver). An input holding "undefined_fn" fails
   the completion with an error log naming it, as an unresolved call does. It records the
   options and each input's type, counts calls and live handles, and can fail its Nth call. */
#ifndef FAKE_NVJITLINK_H
#define FAKE_NVJITLINK_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_njl_config {
    int major, minor;         /* nvJitLinkVersion, and the exports' names; 0 -> 13.0 */
    int no_version;           /* nvJitLinkVersion missing (nvJitLink < 12.3) */
    const char* missing;      /* this export is missing (its versioned name) */
    long fail_at;             /* the Nth call (1-based) returns fail_code; 0 = never */
    int fail_code;            /* 0 -> 6 (NVJITLINK_ERROR_INTERNAL) */
} fake_njl_config;

typedef struct fake_njl_link {
    char names[2048];         /* the kernels found so far, NUL-separated */
    size_t names_len;
    char* cubin;
    size_t cubin_bytes;
    char error_log[512], info_log[256];
    int inputs;
} fake_njl_link;

static struct {
    fake_njl_config cfg;
    long calls, completes, live_links;
    char options[256];        /* the last create's options, space-separated */
    int types[16];            /* the last link's input types (NVJITLINK_INPUT_*) */
    int num_types;
    char input_names[512];    /* the last link's AddData names, space-separated */
} fake_njl;

static void fake_njl_reset(const fake_njl_config* cfg) {
    memset(&fake_njl, 0, sizeof fake_njl);
    if (cfg) fake_njl.cfg = *cfg;
    if (!fake_njl.cfg.major) { fake_njl.cfg.major = 13; fake_njl.cfg.minor = 0; }
    if (!fake_njl.cfg.fail_code) fake_njl.cfg.fail_code = 6;
}

static int fake_njl_fail(void) {
    fake_njl.calls++;
    if (!fake_njl.cfg.fail_at || fake_njl.calls != fake_njl.cfg.fail_at) return 0;
    return fake_njl.cfg.fail_code;
}
#define FAKE_NJL_ENTER() do { int c_ = fake_njl_fail(); if (c_) return (unsigned)c_; } while (0)

static unsigned fj_nvJitLinkVersion(unsigned* major, unsigned* minor) {
    FAKE_NJL_ENTER();
    *major = (unsigned)fake_njl.cfg.major; *minor = (unsigned)fake_njl.cfg.minor;
    return 0;
}
static unsigned fj_nvJitLinkCreate(void** out, uint32_t n, const char** opts) {
    fake_njl_link* l;
    uint32_t i;
    int arch = 0;
    FAKE_NJL_ENTER();
    fake_njl.options[0] = 0;
    fake_njl.num_types = 0;
    fake_njl.input_names[0] = 0;
    for (i = 0; i < n; i++) {
        size_t k = strlen(fake_njl.options);
        snprintf(fake_njl.options + k, sizeof fake_njl.options - k, "%s%s", i ? " " : "", opts[i]);
        arch |= strncmp(opts[i], "-arch=sm_", 9) == 0;
    }
    if (!arch) return 2; /* NVJITLINK_ERROR_MISSING_ARCH */
    if (!(l = (fake_njl_link*)calloc(1, sizeof *l))) return 6;
    fake_njl.live_links++;
    *out = l;
    return 0;
}
static unsigned fj_nvJitLinkDestroy(void** pl) {
    fake_njl_link* l = (fake_njl_link*)*pl;
    fake_njl.calls++; /* never fails: a failing destroy would leak in the fake itself */
    if (!l) return 3;
    free(l->cubin);
    free(l);
    *pl = NULL;
    fake_njl.live_links--;
    return 0;
}
static void fake_njl_name(fake_njl_link* l, const char* name, size_t n) {
    if (l->names_len + n + 1 >= sizeof l->names) return;
    memcpy(l->names + l->names_len, name, n);
    l->names[l->names_len + n] = 0;
    l->names_len += n + 1;
}
static unsigned fj_nvJitLinkAddData(void* h, unsigned type, const void* data, size_t size,
                                    const char* name) {
    fake_njl_link* l = (fake_njl_link*)h;
    const char* d = (const char*)data;
    size_t i;
    FAKE_NJL_ENTER();
    if (!l || !data || !size) return 10; /* NVJITLINK_ERROR_NULL_INPUT */
    if (fake_njl.num_types < 16) fake_njl.types[fake_njl.num_types++] = (int)type;
    i = strlen(fake_njl.input_names);
    snprintf(fake_njl.input_names + i, sizeof fake_njl.input_names - i, "%s%s", i ? " " : "",
             name ? name : "(null)");
    l->inputs++;
    if (type == 3) { /* LTO-IR: the fake NVRTC's */
        if (size < 4 || memcmp(d, "\x7fLTO", 4) != 0) return 8; /* UNRECOGNIZED_INPUT */
        for (i = 4; i < size;) {
            size_t k = strnlen(d + i, size - i);
            if (k) fake_njl_name(l, d + i, k);
            if (k == 12 && memcmp(d + i, "undefined_fn", 12) == 0)
                snprintf(l->error_log, sizeof l->error_log, "error   : Undefined reference to "
                         "'undefined_fn' in '%s'\nERROR NVJITLINK_ERROR_PTX_COMPILE: link failed\n",
                         name ? name : "");
            i += k + 1;
        }
    } else if (type == 2) { /* PTX */
        const char* s = d;
        while ((s = strstr(s, ".entry ")) != NULL && s < d + size) {
            s += 7;
            fake_njl_name(l, s, strcspn(s, "( \n"));
        }
    } else if (type == 1) { /* a cubin: the fake NVRTC's or this fake's ELF */
        for (i = 65; i + 6 < size; i += strnlen(d + i, size - i) + 1)
            if (memcmp(d + i, ".text.", 6) == 0) fake_njl_name(l, d + i + 6, strlen(d + i + 6));
    } else {
        return 12; /* NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: the fake links no other */
    }
    return 0;
}
static unsigned fj_nvJitLinkAddFile(void* h, unsigned type, const char* path) {
    FILE* f;
    char buf[4096];
    size_t n;
    FAKE_NJL_ENTER();
    fake_njl.calls--; /* the AddData below counts it */
    if (!path || !(f = fopen(path, "rb"))) return 3; /* INVALID_INPUT */
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return fj_nvJitLinkAddData(h, type, buf, n, path);
}
static unsigned fj_nvJitLinkComplete(void* h) {
    fake_njl_link* l = (fake_njl_link*)h;
    size_t i, len;
    FAKE_NJL_ENTER();
    fake_njl.completes++;
    if (l->error_log[0]) return 4; /* NVJITLINK_ERROR_PTX_COMPILE */
    l->cubin = (char*)calloc(1, 65 + l->names_len * 2 + 64);
    memcpy(l->cubin, "\x7f" "ELF\x02\x01\x01", 7);
    len = 65;
    for (i = 0; i < l->names_len; i += strlen(l->names + i) + 1)
        len += (size_t)sprintf(l->cubin + len, ".text.%s", l->names + i) + 1;
    { uint64_t shoff = len; memcpy(l->cubin + 0x28, &shoff, 8); }
    l->cubin_bytes = len;
    snprintf(l->info_log, sizeof l->info_log, "info    : fake nvJitLink linked %d inputs\n",
             l->inputs);
    return 0;
}
static unsigned fj_nvJitLinkGetLinkedCubinSize(void* h, size_t* n) {
    fake_njl_link* l = (fake_njl_link*)h;
    FAKE_NJL_ENTER();
    if (!l->cubin) return 3;
    *n = l->cubin_bytes;
    return 0;
}
static unsigned fj_nvJitLinkGetLinkedCubin(void* h, void* out) {
    fake_njl_link* l = (fake_njl_link*)h;
    FAKE_NJL_ENTER();
    if (!l->cubin) return 3;
    memcpy(out, l->cubin, l->cubin_bytes);
    return 0;
}
static unsigned fj_nvJitLinkGetErrorLogSize(void* h, size_t* n) {
    FAKE_NJL_ENTER();
    *n = strlen(((fake_njl_link*)h)->error_log) + 1;
    return 0;
}
static unsigned fj_nvJitLinkGetErrorLog(void* h, char* out) {
    FAKE_NJL_ENTER();
    strcpy(out, ((fake_njl_link*)h)->error_log);
    return 0;
}
static unsigned fj_nvJitLinkGetInfoLogSize(void* h, size_t* n) {
    FAKE_NJL_ENTER();
    *n = strlen(((fake_njl_link*)h)->info_log) + 1;
    return 0;
}
static unsigned fj_nvJitLinkGetInfoLog(void* h, char* out) {
    FAKE_NJL_ENTER();
    strcpy(out, ((fake_njl_link*)h)->info_log);
    return 0;
}

typedef struct fake_njl_entry { const char* name; void (*fn)(void); } fake_njl_entry;
#define FAKE_NJL_E(name) { #name, (void (*)(void))fj_##name }
static const fake_njl_entry fake_njl_entries[] = {
    FAKE_NJL_E(nvJitLinkCreate), FAKE_NJL_E(nvJitLinkDestroy), FAKE_NJL_E(nvJitLinkAddData),
    FAKE_NJL_E(nvJitLinkAddFile), FAKE_NJL_E(nvJitLinkComplete),
    FAKE_NJL_E(nvJitLinkGetLinkedCubinSize), FAKE_NJL_E(nvJitLinkGetLinkedCubin),
    FAKE_NJL_E(nvJitLinkGetErrorLogSize), FAKE_NJL_E(nvJitLinkGetErrorLog),
    FAKE_NJL_E(nvJitLinkGetInfoLogSize), FAKE_NJL_E(nvJitLinkGetInfoLog),
};

/* gpuk_get_proc_fn for gpuk_desc.nvjitlink_get_proc; user: a log of the symbols asked for, or
   NULL */
static void* fake_nvjitlink_get_proc(const char* symbol, int abi_version, void* user) {
    char want[96];
    size_t i;
    void* p;
    (void)abi_version;
    if (user) {
        strncat((char*)user, symbol, 1023 - strlen((char*)user));
        strncat((char*)user, " ", 1023 - strlen((char*)user));
    }
    if (fake_njl.cfg.missing && strcmp(symbol, fake_njl.cfg.missing) == 0) return NULL;
    if (strcmp(symbol, "nvJitLinkVersion") == 0) {
        void (*fn)(void) = (void (*)(void))fj_nvJitLinkVersion;
        if (fake_njl.cfg.no_version) return NULL;
        memcpy(&p, &fn, sizeof p);
        return p;
    }
    for (i = 0; i < sizeof fake_njl_entries / sizeof fake_njl_entries[0]; i++) {
        snprintf(want, sizeof want, "__%s_%d_0", fake_njl_entries[i].name, fake_njl.cfg.major);
        if (strcmp(want, symbol) == 0) {
            memcpy(&p, &fake_njl_entries[i].fn, sizeof p);
            return p;
        }
    }
    return NULL;
}
#endif
