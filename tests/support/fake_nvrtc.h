/* tests/support/fake_nvrtc.h - a fake NVRTC for host tests, plugged into gpuk via
   gpuk_desc.nvrtc_get_proc. A "compile" reads the source's extern "C" __global__ kernels and
   emits PTX with one .entry each (the fake driver reads those), or a small ELF whose
   ".text.<name>" sections name them (a cubin, to the fake driver), or with -dlto "LTO-IR":
   "\x7fLTO" then each kernel's name and NUL (what tests/support/fake_nvjitlink.h links). A source containing
   "#error" fails with a log naming the line. It records what it was given (options, headers,
   name expressions), counts calls and live programs, and can fail its Nth call. */
#ifndef FAKE_NVRTC_H
#define FAKE_NVRTC_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_nvrtc_config {
    int major, minor;         /* nvrtcVersion; 0 -> 13.0 */
    int archs[16];            /* nvrtcGetSupportedArchs; none -> 75 80 86 89 90 100 120 */
    int no_arch_list;         /* the two arch entry points are missing (NVRTC < 11.2) */
    int no_cubin;             /* nvrtcGetCUBIN* missing (NVRTC < 11.1) */
    int no_ltoir;             /* nvrtcGetLTOIR* missing (NVRTC < 12.0) */
    const char* missing;      /* this entry point is missing */
    long fail_at;             /* the Nth call (1-based) returns fail_code; 0 = never */
    int fail_code;            /* 0 -> 1 (NVRTC_ERROR_OUT_OF_MEMORY) */
} fake_nvrtc_config;

typedef struct fake_nvrtc_prog {
    char* source;
    char* ptx;                /* or the cubin */
    size_t ptx_bytes;
    char log[512];
    char* exprs[8];
    int nexprs;
    int compiled;
    int lto;                  /* compiled with -dlto: ptx holds the fake LTO-IR */
} fake_nvrtc_prog;

static struct {
    fake_nvrtc_config cfg;
    long calls, compiles, live_programs;
    char options[1024];       /* the last compile's options, space-separated */
    char headers[1024];       /* the last program's headers: "name=source;", gpuk_device.cuh
                                 left out (its text is below) */
    int num_headers;          /* the last program's headers, gpuk_device.cuh counted */
    int device_headers;       /* how many of them were named "gpuk_device.cuh" */
    char device_header[32768]; /* the last program's gpuk_device.cuh (cut at 32 KiB) */
    char arch[32];            /* the last compile's -arch value */
    char source[16384];       /* the last program's source (cut at 16 KiB) */
} fake_nv;

static void fake_nvrtc_reset(const fake_nvrtc_config* cfg) {
    memset(&fake_nv, 0, sizeof fake_nv);
    if (cfg) fake_nv.cfg = *cfg;
    if (!fake_nv.cfg.major) { fake_nv.cfg.major = 13; fake_nv.cfg.minor = 0; }
    if (!fake_nv.cfg.archs[0]) {
        static const int dflt[] = { 75, 80, 86, 89, 90, 100, 120 };
        memcpy(fake_nv.cfg.archs, dflt, sizeof dflt);
    }
    if (!fake_nv.cfg.fail_code) fake_nv.cfg.fail_code = 1;
}

static int fake_nv_fail(void) {
    fake_nv.calls++;
    return fake_nv.cfg.fail_at && fake_nv.calls == fake_nv.cfg.fail_at ? fake_nv.cfg.fail_code : 0;
}
#define FAKE_NV_ENTER() do { int c_ = fake_nv_fail(); if (c_) return (unsigned)c_; } while (0)

static unsigned fn_nvrtcVersion(int* major, int* minor) {
    FAKE_NV_ENTER();
    *major = fake_nv.cfg.major; *minor = fake_nv.cfg.minor;
    return 0;
}
static int fake_nv_narchs(void) { int n = 0; while (n < 16 && fake_nv.cfg.archs[n]) n++; return n; }
static unsigned fn_nvrtcGetNumSupportedArchs(int* n) { FAKE_NV_ENTER(); *n = fake_nv_narchs(); return 0; }
static unsigned fn_nvrtcGetSupportedArchs(int* a) {
    FAKE_NV_ENTER();
    memcpy(a, fake_nv.cfg.archs, (size_t)fake_nv_narchs() * sizeof *a);
    return 0;
}
static unsigned fn_nvrtcCreateProgram(void** out, const char* src, const char* name, int nh,
                                      const char* const* hs, const char* const* hn) {
    fake_nvrtc_prog* p;
    int i;
    (void)name;
    FAKE_NV_ENTER();
    if (!src || nh < 0 || (nh && (!hs || !hn))) return 3; /* INVALID_INPUT */
    if (!(p = (fake_nvrtc_prog*)calloc(1, sizeof *p))) return 1;
    p->source = strdup(src);
    snprintf(fake_nv.source, sizeof fake_nv.source, "%s", src);
    fake_nv.headers[0] = 0;
    fake_nv.device_header[0] = 0;
    fake_nv.num_headers = nh;
    fake_nv.device_headers = 0;
    for (i = 0; i < nh; i++) {
        size_t n = strlen(fake_nv.headers);
        if (strcmp(hn[i], "gpuk_device.cuh") == 0) {
            fake_nv.device_headers++;
            snprintf(fake_nv.device_header, sizeof fake_nv.device_header, "%s", hs[i]);
            continue;
        }
        snprintf(fake_nv.headers + n, sizeof fake_nv.headers - n, "%s=%s;", hn[i], hs[i]);
    }
    fake_nv.live_programs++;
    *out = p;
    return 0;
}
static unsigned fn_nvrtcDestroyProgram(void** pp) {
    fake_nvrtc_prog* p = (fake_nvrtc_prog*)*pp;
    int i;
    fake_nv.calls++; /* never fails: a failing destroy would leak in the fake itself */
    if (!p) return 3;
    free(p->source); free(p->ptx);
    for (i = 0; i < p->nexprs; i++) free(p->exprs[i]);
    free(p);
    *pp = NULL;
    fake_nv.live_programs--;
    return 0;
}
static unsigned fn_nvrtcAddNameExpression(void* prog, const char* e) {
    fake_nvrtc_prog* p = (fake_nvrtc_prog*)prog;
    FAKE_NV_ENTER();
    if (p->nexprs == 8 || p->compiled) return 8;
    p->exprs[p->nexprs++] = strdup(e);
    return 0;
}
/* "name<T>" lowers to "_Z4nameIT_E" here (the real mangling does not matter to gpuk) */
static unsigned fn_nvrtcCompileProgram(void* prog, int n, const char* const* opts) {
    fake_nvrtc_prog* p = (fake_nvrtc_prog*)prog;
    const char* s;
    const char* err;
    size_t cap = 4096, len = 0;
    int i, cubin = 0, lto = 0;
    FAKE_NV_ENTER();
    fake_nv.compiles++;
    fake_nv.options[0] = 0;
    for (i = 0; i < n; i++) {
        size_t k = strlen(fake_nv.options);
        snprintf(fake_nv.options + k, sizeof fake_nv.options - k, "%s%s", i ? " " : "", opts[i]);
        if (strncmp(opts[i], "-arch=", 6) == 0) {
            snprintf(fake_nv.arch, sizeof fake_nv.arch, "%s", opts[i] + 6);
            cubin = strncmp(opts[i] + 6, "sm_", 3) == 0;
        }
        lto |= strcmp(opts[i], "-dlto") == 0;
    }
    if ((err = strstr(p->source, "#error")) != NULL) {
        int line = 1;
        for (s = p->source; s < err; s++) line += *s == '\n';
        snprintf(p->log, sizeof p->log, "prog.cu(%d): error: #error directive: %s\n\n1 error detected "
                 "in the compilation of \"prog.cu\".\n", line, err + 7);
        return 6; /* NVRTC_ERROR_COMPILATION */
    }
    if (strstr(p->source, "#warning")) snprintf(p->log, sizeof p->log, "prog.cu(1): warning: a warning\n");
    p->compiled = 1;
    p->ptx = (char*)calloc(1, cap);
    if (lto) {
        p->lto = 1;
        for (memcpy(p->ptx, "\x7fLTO", 4), len = 4, s = p->source;
             (s = strstr(s, "__global__ void ")) != NULL;) {
            s += 16;
            while (*s && *s != '(' && *s != ' ' && len + 2 < cap) p->ptx[len++] = *s++;
            p->ptx[len++] = 0;
        }
        p->ptx_bytes = len;
        return 0;
    }
    if (cubin) { /* an ELF64 header whose section headers start right after the names */
        memcpy(p->ptx, "\x7f" "ELF\x02\x01\x01", 7);
        len = 64 + 1;
    } else {
        len = (size_t)snprintf(p->ptx, cap, "//\n.version 8.0\n.target sm_%s\n.address_size 64\n",
                               strncmp(fake_nv.arch, "compute_", 8) == 0 ? fake_nv.arch + 8 : "52");
    }
    for (s = p->source; (s = strstr(s, "__global__ void ")) != NULL;) {
        char name[64];
        size_t k = 0;
        s += 16;
        while (*s && *s != '(' && *s != ' ' && k + 1 < sizeof name) name[k++] = *s++;
        name[k] = 0;
        if (cubin) len += (size_t)snprintf(p->ptx + len, cap - len, ".text.%s", name) + 1;
        else len += (size_t)snprintf(p->ptx + len, cap - len, ".visible .entry %s(\n.param .u64 p0\n)\n{\nret;\n}\n", name);
    }
    for (i = 0; i < p->nexprs; i++) { /* templates: an entry under the lowered name */
        char low[96];
        snprintf(low, sizeof low, "_Z%zu%s", strcspn(p->exprs[i], "<"), p->exprs[i]);
        low[strcspn(low, "<")] = 0;
        if (cubin) len += (size_t)snprintf(p->ptx + len, cap - len, ".text.%sIfEvPT_", low) + 1;
        else len += (size_t)snprintf(p->ptx + len, cap - len, ".visible .entry %sIfEvPT_(\n.param .u64 p0\n)\n{\nret;\n}\n", low);
    }
    if (cubin) { uint64_t shoff = len; memcpy(p->ptx + 0x28, &shoff, 8); }
    p->ptx_bytes = cubin ? len : len + 1;
    return 0;
}
static unsigned fn_nvrtcGetProgramLogSize(void* prog, size_t* n) {
    FAKE_NV_ENTER();
    *n = strlen(((fake_nvrtc_prog*)prog)->log) + 1;
    return 0;
}
static unsigned fn_nvrtcGetProgramLog(void* prog, char* log) {
    FAKE_NV_ENTER();
    strcpy(log, ((fake_nvrtc_prog*)prog)->log);
    return 0;
}
static unsigned fake_nv_size(void* prog, size_t* n, int want_cubin) {
    fake_nvrtc_prog* p = (fake_nvrtc_prog*)prog;
    FAKE_NV_ENTER();
    if (!p->compiled) return 4; /* INVALID_PROGRAM */
    if (p->lto != (want_cubin == 2)) return 4; /* LTO-IR only with -dlto, and only LTO-IR */
    if (want_cubin < 2 && want_cubin != (p->ptx[0] == 0x7f)) { *n = 0; return 0; } /* PTX only for compute_XX */
    *n = p->ptx_bytes;
    return 0;
}
static unsigned fn_nvrtcGetPTXSize(void* prog, size_t* n) { return fake_nv_size(prog, n, 0); }
static unsigned fn_nvrtcGetCUBINSize(void* prog, size_t* n) { return fake_nv_size(prog, n, 1); }
static unsigned fn_nvrtcGetPTX(void* prog, char* out) {
    FAKE_NV_ENTER();
    memcpy(out, ((fake_nvrtc_prog*)prog)->ptx, ((fake_nvrtc_prog*)prog)->ptx_bytes);
    return 0;
}
static unsigned fn_nvrtcGetCUBIN(void* prog, char* out) { return fn_nvrtcGetPTX(prog, out); }
static unsigned fn_nvrtcGetLTOIRSize(void* prog, size_t* n) { return fake_nv_size(prog, n, 2); }
static unsigned fn_nvrtcGetLTOIR(void* prog, char* out) { return fn_nvrtcGetPTX(prog, out); }
static unsigned fn_nvrtcGetLoweredName(void* prog, const char* e, const char** out) {
    fake_nvrtc_prog* p = (fake_nvrtc_prog*)prog;
    static char lowered[8][96];
    int i;
    FAKE_NV_ENTER();
    for (i = 0; i < p->nexprs; i++)
        if (strcmp(p->exprs[i], e) == 0) {
            snprintf(lowered[i], sizeof lowered[i], "_Z%zu%s", strcspn(e, "<"), e);
            lowered[i][strcspn(lowered[i], "<")] = 0;
            strcat(lowered[i], "IfEvPT_");
            *out = lowered[i];
            return 0;
        }
    return 10; /* NAME_EXPRESSION_NOT_VALID */
}
static const char* fn_nvrtcGetErrorString(unsigned r) {
    return r == 6 ? "NVRTC_ERROR_COMPILATION" : r == 1 ? "NVRTC_ERROR_OUT_OF_MEMORY" : "NVRTC_ERROR_fake";
}

typedef struct fake_nv_entry { const char* name; void (*fn)(void); } fake_nv_entry;
#define FAKE_NV_E(name) { #name, (void (*)(void))fn_##name }
static const fake_nv_entry fake_nv_entries[] = {
    FAKE_NV_E(nvrtcVersion), FAKE_NV_E(nvrtcGetNumSupportedArchs), FAKE_NV_E(nvrtcGetSupportedArchs),
    FAKE_NV_E(nvrtcCreateProgram), FAKE_NV_E(nvrtcDestroyProgram), FAKE_NV_E(nvrtcAddNameExpression),
    FAKE_NV_E(nvrtcCompileProgram), FAKE_NV_E(nvrtcGetProgramLogSize), FAKE_NV_E(nvrtcGetProgramLog),
    FAKE_NV_E(nvrtcGetPTXSize), FAKE_NV_E(nvrtcGetPTX), FAKE_NV_E(nvrtcGetCUBINSize),
    FAKE_NV_E(nvrtcGetCUBIN), FAKE_NV_E(nvrtcGetLoweredName), FAKE_NV_E(nvrtcGetErrorString),
    FAKE_NV_E(nvrtcGetLTOIRSize), FAKE_NV_E(nvrtcGetLTOIR),
};

/* gpuk_get_proc_fn for gpuk_desc.nvrtc_get_proc; user: a log of the symbols asked for, or NULL */
static void* fake_nvrtc_get_proc(const char* symbol, int abi_version, void* user) {
    size_t i;
    (void)abi_version;
    if (user) { strncat((char*)user, symbol, 1023 - strlen((char*)user)); strncat((char*)user, " ", 1023 - strlen((char*)user)); }
    if (fake_nv.cfg.missing && strcmp(symbol, fake_nv.cfg.missing) == 0) return NULL;
    if (fake_nv.cfg.no_arch_list && strstr(symbol, "SupportedArchs")) return NULL;
    if (fake_nv.cfg.no_cubin && strstr(symbol, "CUBIN")) return NULL;
    if (fake_nv.cfg.no_ltoir && strstr(symbol, "LTOIR")) return NULL;
    for (i = 0; i < sizeof fake_nv_entries / sizeof fake_nv_entries[0]; i++)
        if (strcmp(fake_nv_entries[i].name, symbol) == 0) {
            void* p;
            memcpy(&p, &fake_nv_entries[i].fn, sizeof p);
            return p;
        }
    return NULL;
}
#endif
