/* tests/integration/real_nvjitlink.c - gpuk_module_link through a real nvJitLink (argv[2],
   through gpuk_desc.nvjitlink_path, or its search where argv[2] is "--search") with a real
   NVRTC (argv[1]) on the fake driver's sm_90 device: two NVRTC programs compiled to LTO-IR
   (-dlto), one calling a function the other defines, and a PTX image, link into a cubin for
   sm_90 that the driver gets; the same LTO-IR linked by nvJitLink's own calls (through the table gpuk
   loaded) gives an ELF for the CUDA machine; an unresolved call fails with nvJitLink's log.
   Run by tests/integration/real_nvjitlink.sh; no GPU needed (nvJitLink needs none). */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <stdlib.h>

static const char* nvrtc_path;
static const char* njl_path; /* NULL: nvJitLink's search */
static char logged[16384];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)level; (void)code;
    snprintf(logged + n, sizeof logged - n, "%s\n", msg);
}

static const char caller_src[] =
    "extern \"C\" __device__ float twice(float x);\n"
    "extern \"C\" __global__ void apply(float* v, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) v[i] = twice(v[i]) + 1.0f;\n}\n";
static const char callee_src[] =
    "extern \"C\" __device__ float twice(float x) { return 2.0f * x; }\n";

static const char ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry from_ptx(.param .u64 p)\n{\n ret;\n}\n";

static int up(gpuk_ctx** c) {
    gpuk_desc d;
    gpuk_shutdown();
    fake_reset(NULL);
    logged[0] = 0;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_path = nvrtc_path;
    d.nvjitlink_path = njl_path;
    d.logger.func = capture;
    d.log_level = GPUK_LOG_INFO;
    return gpuk_init(&d) == GPUK_OK && gpuk_ctx_create(NULL, c) == GPUK_OK;
}

static int test_real_lto_link(void) {
    gpuk_ctx* c = NULL;
    gpuk_compile_desc caller, callee;
    gpuk_link_input in[3];
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    gpuk_kernel k;
    char log[4096];
    CHECK(up(&c));
    memset(&caller, 0, sizeof caller);
    caller.source = caller_src;
    caller.name = "caller.cu";
    memset(&callee, 0, sizeof callee);
    callee.source = callee_src;
    callee.name = "callee.cu";
    memset(in, 0, sizeof in);
    in[0].compile = &caller;
    in[0].lto = true;
    in[1].compile = &callee;
    in[1].lto = true;
    in[2].image.ptr = ptx;
    memset(&d, 0, sizeof d);
    d.inputs = in;
    d.num_inputs = 3;
    d.label = "lto";
    d.log = log;
    d.log_bytes = sizeof log;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    printf("     nvJitLink %d.%d%s%s\n", gpuk__jl.version / 1000, gpuk__jl.version % 1000 / 10,
           gpuk__jl.found[0] ? " from " : "", gpuk__jl.found);
    CHECK(strstr(logged, "'caller.cu': NVRTC") != NULL && strstr(logged, "LTO-IR (sm_90)") != NULL);
    CHECK(fake.last_module_elf == 1); /* a cubin reached the driver */
    CHECK(fake.last_module_bytes > 500);
    CHECK_OK(gpuk_kernel_get(c, m, "apply", &k));
    CHECK_OK(gpuk_kernel_get(c, m, "from_ptx", &k));
    if (!njl_path) CHECK(strstr(logged, "nvJitLink 1") != NULL && strstr(logged, "loaded from"));
    /* without the callee the call stays unresolved: nvJitLink's result and log */
    d.num_inputs = 1;
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_COMPILE);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("gpuk_module_link: module 'lto': nvJitLinkComplete: NVJITLINK_ERROR_");
    CHECK_ERROR_MENTIONS("twice");
    CHECK(strstr(log, "twice") != NULL);
    printf("     %s\n", gpuk_last_error());
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return TEST_PASS;
}

/* The LTO-IR NVRTC gave (from gpuk's compile cache) linked by nvJitLink's own calls through
   the table gpuk loaded: an ELF64 image for the CUDA machine (EM_CUDA, 190). */
static int test_cubin_is_cuda_elf(void) {
    const gpuk__njl* j = &gpuk__jl.fns;
    const gpuk__nvrtc_entry* e;
    const char* opts[2] = { "-arch=sm_90", "-lto" };
    gpuk__njl_handle h = NULL;
    unsigned char* cubin = NULL;
    size_t bytes = 0, n = 0;
    gpuk_ctx* c = NULL;
    CHECK(up(&c));
    {   /* the compiles and the load, through one link */
        gpuk_compile_desc cd[2];
        gpuk_link_input in[2];
        gpuk_link_desc d;
        gpuk_module m;
        memset(cd, 0, sizeof cd);
        cd[0].source = caller_src;
        cd[1].source = callee_src;
        memset(in, 0, sizeof in);
        in[0].compile = &cd[0];
        in[1].compile = &cd[1];
        in[0].lto = in[1].lto = true;
        memset(&d, 0, sizeof d);
        d.inputs = in;
        d.num_inputs = 2;
        CHECK_OK(gpuk_module_link(c, &d, &m));
    }
    CHECK(GPUK__ATOMIC_LOAD(&gpuk__jl.loaded) == 1);
    CHECK(j->nvJitLinkCreate(&h, 2, opts) == 0);
    for (e = gpuk__nv.cache; e; e = e->next) {
        n++;
        CHECK(e->is_ltoir == 1 && e->is_ptx == 0);
        CHECK(j->nvJitLinkAddData(h, GPUK__NJL_INPUT_LTOIR,
                                  (const unsigned char*)(e + 1) + e->key_bytes, e->image_bytes,
                                  "cached") == 0);
    }
    CHECK(n == 2);
    CHECK(j->nvJitLinkComplete(h) == 0);
    CHECK(j->nvJitLinkGetLinkedCubinSize(h, &bytes) == 0 && bytes > 64);
    if (bytes > 64 && (cubin = (unsigned char*)malloc(bytes)) != NULL) {
        CHECK(j->nvJitLinkGetLinkedCubin(h, cubin) == 0);
        CHECK(memcmp(cubin, "\x7f" "ELF", 4) == 0);
        CHECK(cubin[4] == 2);                         /* ELFCLASS64 */
        CHECK(cubin[18] == 190 && cubin[19] == 0);    /* e_machine EM_CUDA, little-endian */
        free(cubin);
    }
    CHECK(j->nvJitLinkDestroy(&h) == 0);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return TEST_PASS;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        printf("usage: real_nvjitlink LIBNVRTC LIBNVJITLINK|--search\n");
        return 2;
    }
    nvrtc_path = argv[1];
    njl_path = strcmp(argv[2], "--search") == 0 ? NULL : argv[2];
    RUN(test_real_lto_link);
    RUN(test_cubin_is_cuda_elf);
    return test_summary();
}
