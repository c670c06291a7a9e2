/* tests/gpu/gpu_nvrtc.c - CUDA C compiled at run time (gpuk_module_compile, NVRTC loaded by gpuk)
   and run: saxpy, and a template instantiated through name expressions, against CPU
   references; the same compile again is a cache hit (the logger says so, and it takes no
   NVRTC time). NVRTC's search: a child process of this program, run by the dynamic loader
   with --inhibit-cache and without LD_LIBRARY_PATH and GPUK_NVRTC_PATH (so NVRTC's sonames
   cannot find the toolkit's folder), finds NVRTC in the toolkit folders and runs a kernel it
   compiled. The disk cache: one kernel compiled cold into a fresh folder, then after
   gpuk_shutdown and gpuk_init (the in-memory cache gone) read back from it; both times are
   printed. A kernel that includes gpuk_device.cuh makes the built-ins' random numbers (the
   uniforms bit for bit) and right warp and block sums and warp scans. Skipped where no GPU,
   or no NVRTC, is found. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include "device_functions_check.h"
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
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

/* gpuk_device.cuh, handed to NVRTC by gpuk: the same random numbers as the built-ins, and the
   warp and block sums and the warp scan against the CPU */
static const char device_src[] =
    "#include \"gpuk_device.cuh\"\n"
    "extern \"C\" __global__ void mine(float* f, double* d, float* nf, double* nd,\n"
    "                                   unsigned long long n, unsigned long long seed,\n"
    "                                   unsigned long long offset) {\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "         i < n; i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        f[i] = gpuk_uniform_f32(seed, offset + i);\n"
    "        d[i] = gpuk_uniform_f64(seed, offset + i);\n"
    "        nf[i] = gpuk_normal_f32(seed, offset + i);\n"
    "        nd[i] = gpuk_normal_f64(seed, offset + i);\n"
    "    }\n"
    "}\n"
    "extern \"C\" __global__ void sums(const int* in, int* scan, int* warp, int* block,\n"
    "                                   double* block64) {\n"
    "    unsigned t = threadIdx.x + blockDim.x * threadIdx.y, i = blockIdx.x * 256 + t;\n"
    "    int v = in[i];\n"
    "    scan[i] = gpuk_warp_inclusive_scan(v);\n"
    "    warp[i] = gpuk_warp_sum(v);\n"
    "    int b = gpuk_block_sum(v);\n"
    "    double b64 = gpuk_block_sum((double)v);\n"
    "    if (b != gpuk_block_sum(v)) b = -1; /* called again at once */\n"
    "    if (t == 255) { block[blockIdx.x] = b; block64[blockIdx.x] = b64; }\n"
    "}\n";

static int test_device_header_random(void) {
    gpuk_compile_desc cd;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    memset(&cd, 0, sizeof cd);
    cd.source = device_src;
    cd.name = "device_header.cu";
    CHECK_OK(gpuk_module_compile(ctx, &cd, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "mine", &k));
    if (k.id) random_kernel_matches_builtins(ctx, k, "included");
    CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

static int test_device_header_sums(void) {
    gpuk_compile_desc cd;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    memset(&cd, 0, sizeof cd);
    cd.source = device_src;
    cd.name = "device_header.cu";
    CHECK_OK(gpuk_module_compile(ctx, &cd, &m));
    CHECK_OK(gpuk_kernel_get(ctx, m, "sums", &k));
    if (k.id) sums_kernel_matches_cpu(ctx, k);
    CHECK_OK(gpuk_module_unload(ctx, m));
    return TEST_PASS;
}

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
    {
        const char* line = strstr(logged, "NVRTC 1") ? strstr(logged, "NVRTC 1") : "(no info log)";
        printf("     %.*s\n", (int)strcspn(line, "\n"), line); /* where NVRTC was found */
    }
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

/* saxpy compiled and run on the ctx, checked against the CPU (n elements) */
static void run_saxpy(gpuk_ctx* c, gpuk_module m, unsigned long long n) {
    static float x[4096], y[4096], out[4096];
    float a = 1.5f;
    gpuk_kernel k;
    gpuk_buffer bx, by;
    gpuk_devptr px, py;
    size_t i, bad = 0;
    if (n > 4096) n = 4096;
    for (i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f; }
    CHECK_OK(gpuk_kernel_get(c, m, "saxpy", &k));
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .data = { x, (size_t)n * sizeof(float) } }, &bx));
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .data = { y, (size_t)n * sizeof(float) } }, &by));
    px = gpuk_buffer_devptr(c, bx);
    py = gpuk_buffer_devptr(c, by);
    CHECK_OK(gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(8), .block = GPUK_DIM1(128),
                                                    GPUK_ARGS(&a, &px, &py, &n) }));
    CHECK_OK(gpuk_buffer_read(c, by, 0, out, (size_t)n * sizeof(float)));
    for (i = 0; i < n; i++) bad += out[i] != 1.5f * (float)i + 1.0f;
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(c, bx));
    CHECK_OK(gpuk_buffer_destroy(c, by));
}

/* The path of the loaded library whose file name starts with prefix ("" when none), from
   /proc/self/maps. */
static void mapped_path(const char* prefix, char* out, size_t cap) {
    char line[4096];
    FILE* f = fopen("/proc/self/maps", "r");
    out[0] = 0;
    if (!f) return;
    while (!out[0] && fgets(line, sizeof line, f)) {
        char* path = strchr(line, '/');
        char* base;
        if (!path) continue;
        path[strcspn(path, "\n")] = 0;
        base = strrchr(path, '/') + 1;
        if (strncmp(base, prefix, strlen(prefix)) == 0) snprintf(out, cap, "%s", path);
    }
    fclose(f);
}

/* The child: NVRTC by the search alone; exit 0 (found in a folder, a kernel ran), 77 (skip:
   found by name after all, in a folder the loader searches without its cache), 1 (failed). */
static int search_child(void) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_compile_desc cd;
    gpuk_module m;
    const char* at;
    int v = 0;
    memset(&d, 0, sizeof d);
    d.logger.func = capture;
    d.log_level = GPUK_LOG_INFO;
    if (getenv("GPUK_NVRTC_PATH") || gpuk_init(&d) != GPUK_OK || gpuk_ctx_create(NULL, &c) != GPUK_OK) {
        printf("     search child: %s\n", gpuk_last_error());
        return 1;
    }
    if (gpuk_nvrtc_version(&v) != GPUK_OK) {
        printf("     search child: %s\n", gpuk_last_error());
        return 1;
    }
    at = strstr(logged, "NVRTC ");
    printf("     search child: %.*s\n", at ? (int)strcspn(at, "\n") : 4, at ? at : "none");
    if (at && strstr(at, "(by name)")) return 77;
    memset(&cd, 0, sizeof cd);
    cd.source = saxpy_src;
    cd.name = "saxpy.cu";
    if (gpuk_module_compile(c, &cd, &m) != GPUK_OK) {
        printf("     search child: %s\n", gpuk_last_error());
        return 1;
    }
    run_saxpy(c, m, 1000);
    CHECK_OK(gpuk_ctx_destroy(c));
    return check_failures ? 1 : 0;
}

/* NVRTC found with GPUK_NVRTC_PATH unset and the toolkit's folder off the loader's search: this
   program again, as a child run by the dynamic loader with --inhibit-cache (the ld.so cache,
   where the toolkit's folder usually is, ignored) and without LD_LIBRARY_PATH; the driver is
   named by its path, as this process loaded it. */
static int test_found_without_path(const char* self) {
    char ld[1024], cuda[1024], cuda_dir[1024];
    int status = 0;
    pid_t pid;
    mapped_path("ld-linux", ld, sizeof ld);
    mapped_path("libcuda.so", cuda, sizeof cuda);
    if (!ld[0] || !cuda[0]) {
        printf("     no dynamic loader or libcuda in /proc/self/maps\n");
        return TEST_SKIP;
    }
    snprintf(cuda_dir, sizeof cuda_dir, "%s", cuda);
    *strrchr(cuda_dir, '/') = 0;
    fflush(stdout);
    if ((pid = fork()) == 0) {
        /* the driver's folder for the libraries the driver loads itself */
        unsetenv("GPUK_NVRTC_PATH");
        unsetenv("LD_LIBRARY_PATH");
        setenv("GPUK_DRIVER_PATH", cuda, 1);
        execl(ld, ld, "--inhibit-cache", "--library-path", cuda_dir, self, "--search-child", (char*)NULL);
        _exit(2);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        printf("     NVRTC is in a folder the loader searches by default: found by name\n");
        return TEST_SKIP;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return TEST_PASS;
}

/* One kernel through the disk cache in a fresh folder: cold (NVRTC compiles, the file is
   written), then after gpuk_shutdown and gpuk_init (the in-memory cache dropped) warm (read
   back from the file); each is the gpuk_module_compile call alone, module load included. */
static gpuk_desc base_desc;
static int test_disk_cache_times(void) {
    char dir[] = "/tmp/gpuk_disk_cache_XXXXXX", cmd[128];
    double ms[2] = { 0, 0 };
    int round;
    CHECK(mkdtemp(dir) != NULL);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    ctx = NULL;
    for (round = 0; round < 2; round++) {
        gpuk_desc d = base_desc;
        gpuk_compile_desc cd;
        gpuk_module m;
        double t0;
        CHECK_OK(gpuk_shutdown());
        d.nvrtc_cache_dir = dir;
        CHECK_OK(gpuk_init(&d));
        CHECK_OK(gpuk_ctx_create(NULL, &ctx));
        memset(&cd, 0, sizeof cd);
        cd.source = saxpy_src;
        cd.name = "disk.cu";
        logged[0] = 0;
        t0 = now_ms();
        CHECK_OK(gpuk_module_compile(ctx, &cd, &m));
        ms[round] = now_ms() - t0;
        CHECK((strstr(logged, "disk cache hit") != NULL) == (round == 1));
        run_saxpy(ctx, m, 4096); /* the module from the file runs too */
        CHECK_OK(gpuk_module_unload(ctx, m));
        if (round == 0) CHECK_OK(gpuk_ctx_destroy(ctx));
    }
    printf("     nvrtc disk cache: cold %.1f ms, warm %.1f ms\n", ms[0], ms[1]);
    CHECK(ms[1] < ms[0]);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return TEST_PASS;
}

static const char* self_path;
static int test_found_by_search(void) { return test_found_without_path(self_path); }

int main(int argc, char** argv) {
    int code, v = 0;
    if (argc == 2 && strcmp(argv[1], "--search-child") == 0) return search_child();
    self_path = argv[0];
    memset(&base_desc, 0, sizeof base_desc);
    base_desc.logger.func = capture;
    base_desc.log_level = GPUK_LOG_INFO;
    /* NVRTC: GPUK_NVRTC_PATH, else the search (the toolkit's folders where it is not on the
       library path) */
    gpuk_init(&base_desc); /* its failure is gpu_setup's to report */
    if (!gpu_setup("gpu_nvrtc", 7, &ctx, &code)) return code;
    if (gpuk_nvrtc_version(&v) != GPUK_OK) {
        printf("skip gpu_nvrtc: no NVRTC (%s)\n0 passed, 0 failed, 7 skipped\n", gpuk_last_error());
        gpuk_ctx_destroy(ctx);
        return 0;
    }
    printf("     NVRTC %d.%d, device sm_%d%d\n", v / 1000, v % 1000 / 10,
           gpuk_ctx_device_info(ctx)->cc_major, gpuk_ctx_device_info(ctx)->cc_minor);
    rng_seed_from_clock();
    RUN(test_saxpy);
    RUN(test_template_by_name_expression);
    RUN(test_second_compile_is_a_cache_hit);
    RUN(test_found_by_search);
    RUN(test_disk_cache_times);
    RUN(test_device_header_random);
    RUN(test_device_header_sums);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
