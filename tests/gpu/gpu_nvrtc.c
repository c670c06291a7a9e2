/* tests/gpu/gpu_nvrtc.c - CUDA C compiled at run time (gpuk_module_compile, NVRTC loaded by gpuk)
   and run: saxpy, and a template instantiated through name expressions, against CPU
   references; the same compile again is a cache hit (the logger says so, and it takes no
   NVRTC time). Skipped where no GPU, or no NVRTC (GPUK_NVRTC_PATH names one), is found. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static gpuk_ctx* ctx;
static char logged[8192];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)code;
    if (level == GPUK_LOG_WARN) fprintf(stderr, "gpuk: %s\n", msg); /* errors: CHECK prints them */
    snprintf(logged + n, sizeof logged - n, "%s\n", msg);
}
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char saxpy_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, unsigned long long n) {\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

static const char template_src[] =
    "#include \"ops.h\"\n"
    "template <typename T> __global__ void axpb(T* x, T a, T b, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = OP(a, x[i], b);\n"
    "}\n";

static int test_saxpy(void) {
    enum { N = 100003 };
    static float x[N], y[N], ref[N], out[N];
    float a = 2.5f;
    unsigned long long n = N;
    gpuk_compile_desc d;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_buffer bx, by;
    gpuk_devptr px, py;
    size_t i, bad = 0;
    for (i = 0; i < N; i++) {
        x[i] = (float)uniform(-1, 1);
        y[i] = (float)uniform(-1, 1);
        ref[i] = fmaf(a, x[i], y[i]);
    }
    memset(&d, 0, sizeof d);
    d.source = saxpy_src;
    d.name = "saxpy.cu";
    CHECK_OK(gpuk_module_compile(ctx, &d, &m));
    printf("     %s", strstr(logged, "NVRTC") ? strstr(logged, "NVRTC") : "(no info log)\n");
    CHECK_OK(gpuk_kernel_get(ctx, m, "saxpy", &k));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(x) }, &bx));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(y) }, &by));
    px = gpuk_buffer_devptr(ctx, bx);
    py = gpuk_buffer_devptr(ctx, by);
    CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(64), .block = GPUK_DIM1(256),
                                                      GPUK_ARGS(&a, &px, &py, &n) }));
    CHECK_OK(gpuk_buffer_read(ctx, by, 0, out, sizeof out));
    for (i = 0; i < N; i++) bad += fabsf(out[i] - ref[i]) > 1e-6f * (1.0f + fabsf(ref[i]));
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

static int test_template_by_name_expression(void) {
    enum { N = 1000 };
    static float xf[N], rf[N];
    static double xd[N], rd[N];
    static const char* const exprs[] = { "axpb<float>", "axpb<double>" };
    gpuk_compile_header h = { "ops.h", "#define OP(a, x, b) ((a) * (x) + (b))\n" };
    gpuk_compile_desc d;
    gpuk_module m;
    gpuk_kernel kf, kd;
    gpuk_buffer bf, bd;
    gpuk_devptr pf, pd;
    float af = 3.0f, bfv = -1.0f;
    double ad = -0.5, bdv = 2.0;
    unsigned n = N;
    size_t i, bad = 0;
    const char *lf, *ld;
    for (i = 0; i < N; i++) {
        xf[i] = (float)uniform(-4, 4);
        xd[i] = uniform(-4, 4);
    }
    memset(&d, 0, sizeof d);
    d.source = template_src;
    d.name = "axpb.cu";
    d.headers = &h; d.num_headers = 1;
    d.name_expressions = exprs; d.num_name_expressions = 2;
    CHECK_OK(gpuk_module_compile(ctx, &d, &m));
    lf = gpuk_module_lowered_name(ctx, m, "axpb<float>");
    ld = gpuk_module_lowered_name(ctx, m, "axpb<double>");
    CHECK(lf && ld);
    if (!lf || !ld) return TEST_PASS;
    printf("     axpb<float> -> %s, axpb<double> -> %s\n", lf, ld);
    CHECK_OK(gpuk_kernel_get(ctx, m, lf, &kf));
    CHECK_OK(gpuk_kernel_get(ctx, m, ld, &kd));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(xf) }, &bf));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = GPUK_RANGE(xd) }, &bd));
    pf = gpuk_buffer_devptr(ctx, bf);
    pd = gpuk_buffer_devptr(ctx, bd);
    CHECK_OK(gpuk_launch(ctx, kf, &(gpuk_launch_desc){ .grid = GPUK_DIM1((N + 255) / 256),
                                                       .block = GPUK_DIM1(256), GPUK_ARGS(&pf, &af, &bfv, &n) }));
    CHECK_OK(gpuk_launch(ctx, kd, &(gpuk_launch_desc){ .grid = GPUK_DIM1((N + 255) / 256),
                                                       .block = GPUK_DIM1(256), GPUK_ARGS(&pd, &ad, &bdv, &n) }));
    CHECK_OK(gpuk_buffer_read(ctx, bf, 0, rf, sizeof rf));
    CHECK_OK(gpuk_buffer_read(ctx, bd, 0, rd, sizeof rd));
    for (i = 0; i < N; i++) {
        float ef = fmaf(af, xf[i], bfv);
        double ed = fma(ad, xd[i], bdv);
        bad += fabsf(rf[i] - ef) > 1e-6f * (1.0f + fabsf(ef));
        bad += fabs(rd[i] - ed) > 1e-14 * (1.0 + fabs(ed));
    }
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bf));
    CHECK_OK(gpuk_buffer_destroy(ctx, bd));
    CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

static int test_second_compile_is_a_cache_hit(void) {
    gpuk_compile_desc d;
    gpuk_module m1, m2;
    gpuk_kernel k;
    double t0, t1, t2;
    static const char* const opts[] = { "-DCACHE_TEST=1" }; /* a key no other test used */
    memset(&d, 0, sizeof d);
    d.source = saxpy_src;
    d.name = "saxpy.cu";
    d.options = opts; d.num_options = 1;
    logged[0] = 0;
    t0 = now_ms();
    CHECK_OK(gpuk_module_compile(ctx, &d, &m1));
    t1 = now_ms();
    CHECK(strstr(logged, "cache hit") == NULL);
    CHECK_OK(gpuk_module_compile(ctx, &d, &m2));
    t2 = now_ms();
    CHECK(strstr(logged, "'saxpy.cu': cache hit") != NULL);
    CHECK_OK(gpuk_kernel_get(ctx, m2, "saxpy", &k));
    printf("     compile cold %.1f ms, cached %.3f ms (module load included)\n", t1 - t0, t2 - t1);
    CHECK(t2 - t1 < t1 - t0);
    CHECK_OK(gpuk_module_unload(ctx, m1));
    CHECK_OK(gpuk_module_unload(ctx, m2));
    return TEST_PASS;
}

int main(void) {
    int code, v = 0;
    gpuk_desc d;
    memset(&d, 0, sizeof d);
    d.logger.func = capture;
    d.log_level = GPUK_LOG_INFO;
    /* the toolkit's NVRTC where it is not on the library path and none is named */
    if (!getenv("GPUK_NVRTC_PATH") && access("/usr/local/cuda/lib64/libnvrtc.so.13", R_OK) == 0)
        d.nvrtc_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
    gpuk_init(&d); /* its failure is gpu_setup's to report */
    if (!gpu_setup("gpu_nvrtc", 3, &ctx, &code)) return code;
    if (gpuk_nvrtc_version(&v) != GPUK_OK) {
        printf("skip gpu_nvrtc: no NVRTC (%s)\n0 passed, 0 failed, 3 skipped\n", gpuk_last_error());
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    printf("     NVRTC %d.%d, device sm_%d%d\n", v / 1000, v % 1000 / 10,
           gpuk_ctx_device_info(ctx)->cc_major, gpuk_ctx_device_info(ctx)->cc_minor);
    rng_seed_from_clock();
    RUN(test_saxpy);
    RUN(test_template_by_name_expression);
    RUN(test_second_compile_is_a_cache_hit);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
