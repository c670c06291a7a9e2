/* tests/unit/unit_nvjitlink.c - gpuk_module_link through nvJitLink (an LTO-IR input), on the
   fake driver, the fake NVRTC and the fake nvJitLink: NVRTC programs compiled with -dlto and
   an LTO-IR image linked for the device with -lto, the kernels in the loaded module; no
   LTO-IR input never loads nvJitLink; the versioned export names of each major; nvJitLink's
   search through the toolkit folders, and absent; each nvJitLink call failing in turn with
   nothing left behind; the error and info logs; what is refused before nvJitLink. No GPU, no
   toolkit needed.
   cc -std=c99 -I../.. unit_nvjitlink.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/fake_nvrtc.h"
#include "../support/fake_nvjitlink.h"
#include <stdlib.h>
#include <unistd.h>

static char logged[8192];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)code;
    snprintf(logged + n, sizeof logged - n, "[%d] %s\n", (int)level, msg);
}

static char asked[1024]; /* the symbols gpuk asked the fake nvJitLink for */

/* gpuk up on the fakes; njl: the fake nvJitLink's config (NULL: defaults); path: set
   gpuk_desc.nvjitlink_path instead of the fake */
static gpuk_ctx* up(const fake_njl_config* njl, const char* path) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_shutdown();
    fake_reset(NULL);
    fake_nvrtc_reset(NULL);
    fake_njl_reset(njl);
    logged[0] = asked[0] = 0;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_get_proc = fake_nvrtc_get_proc;
    if (path) d.nvjitlink_path = path;
    else {
        d.nvjitlink_get_proc = fake_nvjitlink_get_proc;
        d.nvjitlink_get_proc_user_data = asked;
    }
    d.logger.func = capture;
    d.log_level = GPUK_LOG_DEBUG;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
    return c;
}

static const char caller_src[] =
    "extern \"C\" __device__ float twice(float x);\n"
    "extern \"C\" __global__ void apply(float* v) { v[threadIdx.x] = twice(v[threadIdx.x]); }\n";
static const char callee_src[] =
    "extern \"C\" __device__ float twice(float x) { return 2.0f * x; }\n"
    "extern \"C\" __global__ void probe(float* v) { v[0] = twice(v[0]); }\n";
static const char plain_ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry from_ptx(.param .u64 p)\n{\n ret;\n}\n";

typedef struct link_case {
    gpuk_compile_desc caller, callee;
    gpuk_link_input in[3];
    gpuk_link_desc d;
    char log[1024];
} link_case;

/* two NVRTC programs compiled to LTO-IR and one PTX image */
static void link_case_init(link_case* t) {
    memset(t, 0, sizeof *t);
    t->caller.source = caller_src;
    t->caller.name = "caller.cu";
    t->callee.source = callee_src;
    t->callee.name = "callee.cu";
    t->in[0].compile = &t->caller;
    t->in[0].lto = true;
    t->in[1].compile = &t->callee;
    t->in[1].lto = true;
    t->in[2].image.ptr = plain_ptx;
    t->in[2].label = "plain";
    t->d.inputs = t->in;
    t->d.num_inputs = 3;
    t->d.label = "lto";
    t->d.log = t->log;
    t->d.log_bytes = sizeof t->log;
}

static int test_lto_link_goes_through_nvjitlink(void) {
    gpuk_ctx* c = up(NULL, NULL);
    link_case t;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    long links = fake_live_count(FK_LINK);
    link_case_init(&t);
    CHECK_OK(gpuk_module_link(c, &t.d, &m));
    CHECK(m.id != 0);
    /* the device's architecture (the fake's default sm_90) and LTO */
    CHECK(strcmp(fake_njl.options, "-arch=sm_90 -lto") == 0);
    CHECK(fake_njl.num_types == 3);
    CHECK(fake_njl.types[0] == 3 && fake_njl.types[1] == 3 && fake_njl.types[2] == 2);
    CHECK(strcmp(fake_njl.input_names, "caller.cu callee.cu plain") == 0);
    /* NVRTC was asked for relocatable LTO-IR */
    CHECK(strstr(fake_nv.options, "-rdc=true") != NULL);
    CHECK(strstr(fake_nv.options, "-dlto") != NULL);
    /* every kernel of every input is in the module the linked cubin became */
    CHECK_OK(gpuk_kernel_get(c, m, "apply", &k));
    CHECK_OK(gpuk_kernel_get(c, m, "probe", &k));
    CHECK_OK(gpuk_kernel_get(c, m, "from_ptx", &k));
    CHECK(strstr(t.log, "fake nvJitLink linked 3 inputs") != NULL); /* the info log */
    CHECK(fake_njl.live_links == 0);
    CHECK(fake_live_count(FK_LINK) == links); /* the driver's linker was not used */
    /* the compiled LTO-IR is cached: the same link compiles nothing again */
    {
        long compiles = fake_nv.compiles;
        gpuk_module m2 = { 0 };
        CHECK_OK(gpuk_module_link(c, &t.d, &m2));
        CHECK(fake_nv.compiles == compiles);
        CHECK_OK(gpuk_module_unload(c, m2));
    }
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* An LTO-IR image (its kind named) and a .ltoir file link the same way. */
static int test_ltoir_image_and_file(void) {
    static const char ltoir[] = "\x7fLTO" "from_image\0";
    char path[64];
    FILE* f;
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_link_input in[2];
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    snprintf(path, sizeof path, "/tmp/gpuk_njl_%ld.ltoir", (long)getpid());
    CHECK((f = fopen(path, "wb")) != NULL);
    if (!f) return TEST_PASS;
    fwrite("\x7fLTO" "from_file\0", 1, 14, f);
    fclose(f);
    memset(in, 0, sizeof in);
    in[0].image.ptr = ltoir;
    in[0].image.bytes = sizeof ltoir - 1;
    in[0].kind = GPUK_LINK_LTOIR;
    in[1].path = path;
    memset(&d, 0, sizeof d);
    d.inputs = in;
    d.num_inputs = 2;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK(fake_njl.types[0] == 3 && fake_njl.types[1] == 3);
    CHECK_OK(gpuk_kernel_get(c, m, "from_image", &k));
    CHECK_OK(gpuk_kernel_get(c, m, "from_file", &k));
    CHECK_OK(gpuk_module_unload(c, m));
    unlink(path);
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* Without an LTO-IR input nvJitLink is never looked for: a link through the driver works with
   nvJitLink absent, and nothing was asked of the fake. */
static int test_no_ltoir_never_loads_nvjitlink(void) {
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_link_input in;
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    memset(&in, 0, sizeof in);
    in.image.ptr = plain_ptx;
    memset(&d, 0, sizeof d);
    d.inputs = &in;
    d.num_inputs = 1;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK(asked[0] == 0);
    CHECK(fake_njl.calls == 0);
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    c = up(NULL, "/nonexistent/libnvJitLink.so.13");
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* Absent, or not nvJitLink: GPUK_ERR_NO_NVRTC naming the file and the hint; the link is
   refused before NVRTC compiles anything. */
static int test_absent_or_wrong_library(void) {
    static const char* const libms[] = { "/lib/x86_64-linux-gnu/libm.so.6",
                                         "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                         "/lib/aarch64-linux-gnu/libm.so.6",
                                         "/lib64/libm.so.6", NULL };
    gpuk_ctx* c = up(NULL, "/nonexistent/libnvJitLink.so.13");
    link_case t;
    gpuk_module m = { 5 };
    int i;
    link_case_init(&t);
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_NO_NVRTC);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("cannot load nvJitLink (the CUDA LTO-IR linker) "
                         "'/nonexistent/libnvJitLink.so.13'");
    CHECK_ERROR_MENTIONS("GPUK_NVJITLINK_PATH");
    CHECK(fake_nv.compiles == 0);
    fake_gpuk_down(c);
    /* GPUK_NVJITLINK_PATH is read where the desc names none */
    setenv("GPUK_NVJITLINK_PATH", "/nonexistent/from_env/libnvJitLink.so", 1);
    {
        gpuk_desc d;
        gpuk_shutdown();
        fake_reset(NULL);
        fake_nvrtc_reset(NULL);
        memset(&d, 0, sizeof d);
        d.get_proc = fake_get_proc;
        d.nvrtc_get_proc = fake_nvrtc_get_proc;
        CHECK_OK(gpuk_init(&d));
        CHECK_OK(gpuk_ctx_create(NULL, &c));
        CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_NO_NVRTC);
        CHECK_ERROR_MENTIONS("/nonexistent/from_env/libnvJitLink.so");
        fake_gpuk_down(c);
    }
    unsetenv("GPUK_NVJITLINK_PATH");
    /* a library that is not nvJitLink: its exports say so */
    for (i = 0; libms[i] && access(libms[i], R_OK) != 0; i++) {}
    if (!libms[i]) return TEST_PASS;
    c = up(NULL, libms[i]);
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("is not nvJitLink 12 or 13");
    CHECK_ERROR_MENTIONS(libms[i]);
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* The exports' names follow the library's major: 13's, else 12's; a missing one is named. */
static int test_versioned_names(void) {
    fake_njl_config cfg;
    link_case t;
    gpuk_module m = { 0 };
    gpuk_ctx* c;
    memset(&cfg, 0, sizeof cfg);
    cfg.major = 12;
    cfg.minor = 2;
    cfg.no_version = 1; /* before 12.3 */
    c = up(&cfg, NULL);
    link_case_init(&t);
    CHECK_OK(gpuk_module_link(c, &t.d, &m));
    CHECK(strstr(asked, "__nvJitLinkCreate_13_0 __nvJitLinkCreate_12_0 ") == asked);
    CHECK(strstr(asked, "__nvJitLinkGetLinkedCubin_12_0") != NULL);
    CHECK(strstr(asked + strlen("__nvJitLinkCreate_13_0"), "_13_0") == NULL); /* once */
    CHECK(gpuk__jl.version == 12000);
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    cfg.major = 13;
    cfg.minor = 1;
    cfg.no_version = 0;
    c = up(&cfg, NULL);
    CHECK_OK(gpuk_module_link(c, &t.d, &m));
    CHECK(strstr(asked, "__nvJitLinkCreate_13_0 ") == asked);
    CHECK(strstr(asked, "_12_0") == NULL);
    CHECK(gpuk__jl.version == 13010);
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    cfg.missing = "__nvJitLinkGetLinkedCubin_13_0";
    c = up(&cfg, NULL);
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("(nvJitLink 13) has no __nvJitLinkGetLinkedCubin_13_0");
    fake_gpuk_down(c);
    cfg.major = 11; /* exports no name gpuk knows */
    cfg.missing = NULL;
    c = up(&cfg, NULL);
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("'gpuk_desc.nvjitlink_get_proc' is not nvJitLink 12 or 13");
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* An unresolved call: nvJitLink's result and error log in gpuk_last_error, the whole log in
   desc.log and at GPUK_LOG_ERROR. */
static int test_error_log(void) {
    gpuk_ctx* c = up(NULL, NULL);
    link_case t;
    gpuk_module m = { 9 };
    gpuk_compile_desc bad;
    link_case_init(&t);
    memset(&bad, 0, sizeof bad);
    bad.source = "extern \"C\" __global__ void undefined_fn(float* v) {}\n";
    bad.name = "bad.cu";
    t.in[1].compile = &bad;
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_COMPILE);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("gpuk_module_link: module 'lto': nvJitLinkComplete: "
                         "NVJITLINK_ERROR_PTX_COMPILE (4): error   : Undefined reference to "
                         "'undefined_fn' in 'bad.cu'");
    CHECK(strstr(t.log, "ERROR NVJITLINK_ERROR_PTX_COMPILE: link failed") != NULL);
    CHECK(strstr(logged, "Undefined reference to 'undefined_fn'") != NULL);
    CHECK(fake_njl.live_links == 0);
    CHECK(fake_live_count(FK_MODULE) == 0);
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* Each nvJitLink call failing in turn (the fake's Nth call): a failure names the call and
   leaves no link or module behind; a failing log call loses only the log. */
static int test_each_call_failing(void) {
    static const char* const calls[] = { "nvJitLinkCreate", "nvJitLinkAddData",
                                         "nvJitLinkComplete", "nvJitLinkGetLinkedCubinSize",
                                         "nvJitLinkGetLinkedCubin" };
    long n, total;
    int seen[5] = { 0 }, i, oks = 0;
    fake_njl_config cfg;
    gpuk_ctx* c = up(NULL, NULL);
    link_case t;
    gpuk_module m = { 0 };
    link_case_init(&t);
    CHECK_OK(gpuk_module_link(c, &t.d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    total = fake_njl.calls; /* the load's nvJitLinkVersion call included */
    CHECK(total > 10);
    for (n = 1; n <= total; n++) {
        memset(&cfg, 0, sizeof cfg);
        cfg.fail_at = n;
        c = up(&cfg, NULL);
        link_case_init(&t);
        m.id = 3;
        if (gpuk_module_link(c, &t.d, &m) == GPUK_OK) {
            oks++;
            CHECK(m.id != 0);
            CHECK_OK(gpuk_module_unload(c, m));
        } else {
            int named = 0;
            CHECK(m.id == 0);
            CHECK(gpuk_last_error()[0] != 0);
            for (i = 0; i < 5; i++)
                if (strstr(gpuk_last_error(), calls[i])) { seen[i] = 1; named = 1; }
            /* nvJitLinkVersion failing: the version comes from the names instead */
            CHECK(named);
            CHECK_ERROR_MENTIONS("NVJITLINK_ERROR_INTERNAL (6)");
        }
        CHECK(fake_njl.live_links == 0);
        fake_gpuk_down(c);
    }
    for (i = 0; i < 5; i++) CHECK(seen[i]);
    CHECK(oks >= 4); /* nvJitLinkVersion and the log calls */
    return TEST_PASS;
}

/* Refused before nvJitLink or NVRTC runs: lto on a non-compiled input, with ptx_only, an
   LTO-IR image without its size; an NVRTC that cannot give LTO-IR. */
static int test_refused(void) {
    gpuk_ctx* c = up(NULL, NULL);
    link_case t;
    gpuk_module m = { 0 };
    fake_nvrtc_config nv;
    link_case_init(&t);
    t.in[2].lto = true;
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.inputs[2].lto is for compiled inputs");
    link_case_init(&t);
    t.callee.ptx_only = true;
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.inputs[1]: lto and compile->ptx_only both set");
    link_case_init(&t);
    t.in[2].image.ptr = "\x7fLTO" "x";
    t.in[2].kind = GPUK_LINK_LTOIR;
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.inputs[2].image.bytes is 0: LTO-IR is binary");
    CHECK(fake_njl.calls == 0 && fake_nv.compiles == 0);
    fake_gpuk_down(c);
    c = up(NULL, NULL);
    memset(&nv, 0, sizeof nv);
    nv.no_ltoir = 1;
    nv.major = 11;
    nv.minor = 8;
    fake_nvrtc_reset(&nv);
    link_case_init(&t);
    CHECK_RESULT(gpuk_module_link(c, &t.d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("'caller.cu': NVRTC 11.8 cannot give LTO-IR (it has no nvrtcGetLTOIR)");
    CHECK(fake_njl.live_links == 0);
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* nvJitLink's search: NVRTC's folders for its own sonames, on a copy of gpuk's descriptor
   whose sonames no system has; a library found in a pip wheel's nvidia/nvjitlink/lib, and
   nothing anywhere naming what was tried and the hint. */
static const char* const test_sonames[] = { "libgpuk_test_njl.so.13", "libgpuk_test_njl.so.12",
                                            NULL };
static int test_search(void) {
    static const char* const vars[] = { "HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_PATH",
                                        "CUDA_HOME", "GPUK_NVJITLINK_PATH" };
    static const char* const libms[] = { "/lib/x86_64-linux-gnu/libm.so.6",
                                         "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                         "/lib/aarch64-linux-gnu/libm.so.6",
                                         "/lib64/libm.so.6", NULL };
    char base[64], wheel[200], cmd[600], file[300], saved[6][400];
    gpuk__lib lib = gpuk__njl_lib;
    uint32_t features = 0;
    gpuk_ctx* c = up(NULL, NULL);
    const char* libm;
    int i;
    for (i = 0; libms[i] && access(libms[i], R_OK) != 0; i++) {}
    if (!(libm = libms[i])) { fake_gpuk_down(c); return TEST_SKIP; }
    for (i = 0; i < 6; i++)
        snprintf(saved[i], sizeof saved[i], "%s", getenv(vars[i]) ? getenv(vars[i]) : "");
    snprintf(base, sizeof base, "/tmp/gpuk_njl_search_%ld", (long)getpid());
    snprintf(wheel, sizeof wheel, "%s/venv/lib/python3.12/site-packages/nvidia/nvjitlink/lib",
             base);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", wheel);
    CHECK(system(cmd) == 0);
    for (i = 0; i < 6; i++) unsetenv(vars[i]);
    snprintf(cmd, sizeof cmd, "%s/cuda", base);
    setenv("CUDA_PATH", cmd, 1);
    snprintf(cmd, sizeof cmd, "%s/venv", base);
    setenv("VIRTUAL_ENV", cmd, 1);
    lib.sonames = test_sonames;
    CHECK_RESULT(gpuk__lib_load(&lib, NULL, NULL, NULL, "test_search", &features),
                 GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("test_search: cannot load nvJitLink (not found): tried "
                         "libgpuk_test_njl.so.13, .12 by name, then in ");
    CHECK_ERROR_MENTIONS("/cuda/lib64");
    CHECK_ERROR_MENTIONS("(hint: install it (the toolkit's libnvjitlink package");
    snprintf(file, sizeof file, "%s/libgpuk_test_njl.so.12", wheel);
    CHECK(symlink(libm, file) == 0);
    CHECK_OK(gpuk__lib_load(&lib, NULL, NULL, NULL, "test_search", &features));
    CHECK(strcmp(gpuk__jl.found, file) == 0);
    CHECK(gpuk__jl.found_how && strcmp(gpuk__jl.found_how, "a pip wheel in $VIRTUAL_ENV") == 0);
    gpuk__lib_forget(&lib);
    unlink(file);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
    for (i = 0; i < 6; i++)
        if (saved[i][0]) setenv(vars[i], saved[i], 1);
        else unsetenv(vars[i]);
    gpuk__jl.found[0] = 0;
    fake_gpuk_down(c);
    return TEST_PASS;
}

int main(void) {
    RUN(test_lto_link_goes_through_nvjitlink);
    RUN(test_ltoir_image_and_file);
    RUN(test_no_ltoir_never_loads_nvjitlink);
    RUN(test_absent_or_wrong_library);
    RUN(test_versioned_names);
    RUN(test_error_log);
    RUN(test_each_call_failing);
    RUN(test_refused);
    RUN(test_search);
    return test_summary();
}
