/* tests/gpu/gpu_link.c - modules linked by the driver's linker (gpuk_module_link). A kernel
   compiled by NVRTC as relocatable code that only declares gpuk_uniform_f32 and its kin,
   linked against gpuk's library of gpuk_device.cuh's functions: the uniforms bit for bit those
   of gpuk_random_uniform_f32/_f64, the normals within rounding (bit for bit where NVRTC's math
   matches the built-ins'), over fresh seeds and offsets; the library's warp and block sums and
   warp scan against the CPU; two NVRTC programs and a hand-written PTX function linked into
   one module; an undefined function named by the linker's error; a kernel calling
   cudaGraphSetConditional loads with nothing linked; two NVRTC programs compiled to LTO-IR
   (one calling a function the other defines) linked by nvJitLink, run against the CPU, and
   the call left unresolved without the second (that case skipped where nvJitLink is not
   found). Outputs are poisoned before each launch. Skipped where no GPU, or no NVRTC, is
   found. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include "device_functions_check.h"
#include <math.h>
#include <stdlib.h>

static gpuk_ctx* ctx;

/* declarations only, with the exact parameter types gpuk_device_lib.cu defines them with */
static const char random_src[] =
    "extern \"C\" __device__ float gpuk_uniform_f32(unsigned long long, unsigned long long);\n"
    "extern \"C\" __device__ double gpuk_uniform_f64(unsigned long long, unsigned long long);\n"
    "extern \"C\" __device__ float gpuk_normal_f32(unsigned long long, unsigned long long);\n"
    "extern \"C\" __device__ double gpuk_normal_f64(unsigned long long, unsigned long long);\n"
    "extern \"C\" __global__ void draw(float* f, double* d, float* nf, double* nd,\n"
    "                                   unsigned long long n, unsigned long long seed,\n"
    "                                   unsigned long long offset) {\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "         i < n; i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        f[i] = gpuk_uniform_f32(seed, offset + i);\n"
    "        d[i] = gpuk_uniform_f64(seed, offset + i);\n"
    "        nf[i] = gpuk_normal_f32(seed, offset + i);\n"
    "        nd[i] = gpuk_normal_f64(seed, offset + i);\n"
    "    }\n"
    "}\n";

static const char sums_src[] =
    "extern \"C\" __device__ int gpuk_warp_inclusive_scan_i32(int);\n"
    "extern \"C\" __device__ int gpuk_warp_sum_i32(int);\n"
    "extern \"C\" __device__ int gpuk_block_sum_i32(int);\n"
    "extern \"C\" __device__ double gpuk_block_sum_f64(double);\n"
    "extern \"C\" __global__ void sums(const int* in, int* scan, int* warp, int* block,\n"
    "                                   double* block64) {\n"
    "    unsigned t = threadIdx.x + blockDim.x * threadIdx.y, i = blockIdx.x * 256 + t;\n"
    "    int v = in[i];\n"
    "    scan[i] = gpuk_warp_inclusive_scan_i32(v);\n"
    "    warp[i] = gpuk_warp_sum_i32(v);\n"
    "    int b = gpuk_block_sum_i32(v);\n"
    "    double b64 = gpuk_block_sum_f64((double)v);\n"
    "    if (b != gpuk_block_sum_i32(v)) b = -1; /* called again at once */\n"
    "    if (t == 255) { block[blockIdx.x] = b; block64[blockIdx.x] = b64; }\n"
    "}\n";

/* a device function in one program, a hand-written PTX one, and a kernel calling both */
static const char lib_src[] =
    "extern \"C\" __device__ float fma_twice(float a, float x, float y) {\n"
    "    return 2.0f * __fmaf_rn(a, x, y);\n"
    "}\n";
static const char add_one_ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .func (.param .b32 func_retval0) add_one(.param .b32 x)\n{\n"
    " .reg .b32 %r<3>;\n ld.param.u32 %r1, [x];\n add.s32 %r2, %r1, 1;\n"
    " st.param.b32 [func_retval0], %r2;\n ret;\n}\n";
static const char main_src[] =
    "extern \"C\" __device__ float fma_twice(float a, float x, float y);\n"
    "extern \"C\" __device__ int add_one(int x);\n"
    "extern \"C\" __global__ void apply(float a, const float* x, float* y, int* z,\n"
    "                                    unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) { y[i] = fma_twice(a, x[i], y[i]); z[i] = add_one(z[i]); }\n"
    "}\n";

static gpuk_compile_desc program(const char* src, const char* name) {
    gpuk_compile_desc d;
    memset(&d, 0, sizeof d);
    d.source = src;
    d.name = name;
    return d;
}

/* one compiled input, linked with gpuk_device.cuh's library */
static gpuk_result link_one(gpuk_compile_desc* cd, gpuk_module* m) {
    gpuk_link_input in;
    gpuk_link_desc d;
    memset(&in, 0, sizeof in);
    in.compile = cd;
    memset(&d, 0, sizeof d);
    d.inputs = &in;
    d.num_inputs = 1;
    d.gpuk_device = true;
    d.label = cd->name;
    return gpuk_module_link(ctx, &d, m);
}

static int test_linked_random_matches_builtins(void) {
    gpuk_compile_desc cd = program(random_src, "draw.cu");
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    CHECK_OK(link_one(&cd, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "draw", &k));
    if (k.id) random_kernel_matches_builtins(ctx, k, "linked");
    CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

static int test_linked_sums(void) {
    gpuk_compile_desc cd = program(sums_src, "sums.cu");
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    CHECK_OK(link_one(&cd, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "sums", &k));
    if (k.id) sums_kernel_matches_cpu(ctx, k);
    CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

static int test_programs_and_ptx_linked(void) {
    enum { N = 1000 };
    static float x[N], y[N], ref[N], out[N];
    static int z[N], zout[N];
    gpuk_compile_desc lib = program(lib_src, "fma_twice.cu"), app = program(main_src, "apply.cu");
    gpuk_link_input in[3];
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    gpuk_buffer bx, by, bz;
    gpuk_devptr px, py, pz;
    float a = (float)uniform(-2, 2);
    unsigned n = N, i, bad = 0;
    char log[4096];
    for (i = 0; i < N; i++) {
        x[i] = (float)uniform(-1, 1);
        y[i] = (float)uniform(-1, 1);
        z[i] = (int)(rng() % 100000) - 50000;
        ref[i] = 2.0f * fmaf(a, x[i], y[i]);
    }
    memset(in, 0, sizeof in);
    in[0].compile = &app; /* the caller first: the linker resolves across the whole set */
    in[1].compile = &lib;
    in[2].image.ptr = add_one_ptx;
    in[2].label = "add_one.ptx";
    memset(&d, 0, sizeof d);
    d.inputs = in;
    d.num_inputs = 3;
    d.label = "apply";
    d.log = log;
    d.log_bytes = sizeof log;
    CHECK_OK(gpuk_module_link(ctx, &d, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "apply", &k));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(x) }, &bx));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(y) }, &by));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(z) }, &bz));
    px = gpuk_buffer_devptr(ctx, bx);
    py = gpuk_buffer_devptr(ctx, by);
    pz = gpuk_buffer_devptr(ctx, bz);
    CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1((N + 127) / 128),
                                                      .block = GPUK_DIM1(128),
                                                      GPUK_ARGS(&a, &px, &py, &pz, &n) }));
    CHECK_OK(gpuk_buffer_read(ctx, by, 0, out, sizeof out));
    CHECK_OK(gpuk_buffer_read(ctx, bz, 0, zout, sizeof zout));
    for (i = 0; i < N; i++) bad += memcmp(&out[i], &ref[i], sizeof out[i]) != 0 ||
                                   zout[i] != z[i] + 1;
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    CHECK_OK(gpuk_buffer_destroy(ctx, bz));
    CHECK_OK(gpuk_module_unload(ctx, m));
    /* without the PTX input add_one is undefined: the linker says so, by name */
    d.num_inputs = 2;
    CHECK(gpuk_module_link(ctx, &d, &m) > 0);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("cuLinkComplete");
    CHECK_ERROR_MENTIONS("add_one");
    CHECK(strstr(log, "add_one") != NULL);
    return TEST_PASS;
}

/* LTO-IR: a kernel calling fma_thrice, which a second program defines, both compiled by NVRTC
   with -dlto and linked through nvJitLink for the device; bit for bit the CPU's
   3 * fmaf(a, x, y) (one rounding for the fma, one for the product). */
static const char lto_lib_src[] =
    "extern \"C\" __device__ float fma_thrice(float a, float x, float y) {\n"
    "    return 3.0f * __fmaf_rn(a, x, y);\n"
    "}\n";
static const char lto_main_src[] =
    "extern \"C\" __device__ float fma_thrice(float a, float x, float y);\n"
    "extern \"C\" __global__ void lto_apply(float a, const float* x, const float* y,\n"
    "                                        float* out, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = fma_thrice(a, x[i], y[i]);\n"
    "}\n";

static int test_lto_programs_linked(void) {
    enum { N = 3000 };
    static float x[N], y[N], ref[N], out[N], poison[N];
    gpuk_compile_desc lib = program(lto_lib_src, "fma_thrice.cu");
    gpuk_compile_desc app = program(lto_main_src, "lto_apply.cu");
    gpuk_link_input in[2];
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    gpuk_buffer bx, by, bo;
    gpuk_devptr px, py, po;
    float a = (float)uniform(-2, 2);
    unsigned n = N - (unsigned)(rng() % 100), i, bad = 0;
    char log[4096];
    gpuk_result r;
    for (i = 0; i < N; i++) {
        x[i] = (float)uniform(-1, 1);
        y[i] = (float)uniform(-1, 1);
        ref[i] = 3.0f * fmaf(a, x[i], y[i]);
    }
    memset(poison, 0xff, sizeof poison); /* NaN: an element the kernel skips stays NaN */
    memset(in, 0, sizeof in);
    in[0].compile = &app;
    in[0].lto = true;
    in[1].compile = &lib;
    in[1].lto = true;
    memset(&d, 0, sizeof d);
    d.inputs = in;
    d.num_inputs = 2;
    d.label = "lto_apply";
    d.log = log;
    d.log_bytes = sizeof log;
    r = gpuk_module_link(ctx, &d, &m);
    if (r == GPUK_ERR_NO_NVRTC && strstr(gpuk_last_error(), "nvJitLink")) {
        printf("     no nvJitLink: %s\n", gpuk_last_error());
        return TEST_SKIP;
    }
    CHECK_OK(r);
    CHECK_OK(gpuk_kernel_get(ctx, m, "lto_apply", &k));
    if (!k.id) return TEST_PASS;
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(x) }, &bx));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(y) }, &by));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(poison) }, &bo));
    px = gpuk_buffer_devptr(ctx, bx);
    py = gpuk_buffer_devptr(ctx, by);
    po = gpuk_buffer_devptr(ctx, bo);
    CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1((n + 127) / 128),
                                                      .block = GPUK_DIM1(128),
                                                      GPUK_ARGS(&a, &px, &py, &po, &n) }));
    CHECK_OK(gpuk_buffer_read(ctx, bo, 0, out, sizeof out));
    for (i = 0; i < n; i++) bad += memcmp(&out[i], &ref[i], sizeof out[i]) != 0;
    for (; i < N; i++) bad += memcmp(&out[i], &poison[i], sizeof out[i]) != 0;
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    CHECK_OK(gpuk_module_unload(ctx, m));
    /* without the second program fma_thrice is undefined: nvJitLink says so, by name */
    d.num_inputs = 1;
    CHECK_RESULT(gpuk_module_link(ctx, &d, &m), GPUK_ERR_COMPILE);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("nvJitLinkComplete");
    CHECK_ERROR_MENTIONS("fma_thrice");
    CHECK(strstr(log, "fma_thrice") != NULL);
    return TEST_PASS;
}

/* cudaGraphSetConditional (a WHILE or IF graph node's condition, CUDA 12.4 drivers) is, like
   vprintf, a function the driver itself supplies when it loads a module: a kernel that
   declares it compiles and loads with no library linked (nvlink leaves it undefined even
   against libcudadevrt). Loaded here, not launched: a launch needs a conditional node. */
static int test_driver_supplies_graph_set_conditional(void) {
    static const char src[] =
        "extern \"C\" __device__ void cudaGraphSetConditional(unsigned long long handle,\n"
        "                                                      unsigned int value);\n"
        "extern \"C\" __global__ void keep_going(unsigned long long handle, const float* change,\n"
        "                                         float tolerance) {\n"
        "    cudaGraphSetConditional(handle, *change > tolerance);\n"
        "}\n";
    gpuk_compile_desc cd = program(src, "keep_going.cu");
    gpuk_link_input in;
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    int v = 0;
    CHECK_OK(gpuk_driver_version(&v));
    if (v < 12040) {
        printf("     the driver (%d.%d) predates conditional graph nodes (12.4)\n", v / 1000,
               v % 1000 / 10);
        return TEST_SKIP;
    }
    CHECK_OK(gpuk_module_compile(ctx, &cd, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "keep_going", &k));
    if (m.id) CHECK_OK(gpuk_module_unload(ctx, m));
    memset(&in, 0, sizeof in);
    in.compile = &cd; /* relocatable, through the linker: still nothing to link it against */
    memset(&d, 0, sizeof d);
    d.inputs = &in;
    d.num_inputs = 1;
    CHECK_OK(gpuk_module_link(ctx, &d, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "keep_going", &k));
    if (m.id) CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

int main(void) {
    int code, v = 0;
    gpuk_init(NULL); /* its failure is gpu_setup's to report */
    if (!gpu_setup("gpu_link", 5, &ctx, &code)) return code;
    if (gpuk_nvrtc_version(&v) != GPUK_OK) {
        printf("skip gpu_link: no NVRTC (%s)\n0 passed, 0 failed, 5 skipped\n", gpuk_last_error());
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    rng_seed_from_clock();
    RUN(test_linked_random_matches_builtins);
    RUN(test_linked_sums);
    RUN(test_programs_and_ptx_linked);
    RUN(test_driver_supplies_graph_set_conditional);
    RUN(test_lto_programs_linked);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
