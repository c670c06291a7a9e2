/* tests/integration/real_nvrtc.c - gpuk_module_compile with a real NVRTC (argv[1], through
   gpuk_desc.nvrtc_path) on the fake driver's sm_90 device: a cubin comes out and the driver
   gets it, PTX where asked, a template through its name expression, a real compile error's
   log, the cache; the custom element-wise and reduction kernels' generated sources compile
   (gpuk_elementwise_create, gpuk_reduction_create) and an error in a body is reported at its
   line in the body. With --found-in DIR HOW: NVRTC's search finds the real NVRTC in DIR (a
   CUDA_HOME or a pip wheel's folder the script made, GPUK_NVRTC_PATH unset, the sonames not
   findable), the log says how, and a compile works; the disk cache then serves a second
   gpuk_init without NVRTC. Run by tests/integration/real_nvrtc.sh; no GPU needed. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/fake_nvrtc.h"
#include <stdlib.h>

static const char* nvrtc_path;
static char logged[16384];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)level; (void)code;
    snprintf(logged + n, sizeof logged - n, "%s\n", msg);
}

static const char src[] =
    "#include \"scale.h\"\n"
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "template <typename T> __global__ void scale(T* x, T s, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = SCALE(x[i], s);\n"
    "}\n";

/* gpuk on the fake driver with the real NVRTC, its log captured from level on; a ctx in *c. */
static int up(gpuk_log_level level, gpuk_ctx** c) {
    gpuk_desc d;
    gpuk_shutdown();
    fake_reset(NULL);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_path = nvrtc_path;
    d.logger.func = capture;
    d.log_level = level;
    return gpuk_init(&d) == GPUK_OK && gpuk_ctx_create(NULL, c) == GPUK_OK;
}

static int test_real_nvrtc(void) {
    gpuk_ctx* c = NULL;
    gpuk_compile_desc cd;
    gpuk_compile_header h = { "scale.h", "#define SCALE(a, b) ((a) * (b))\n" };
    static const char* const exprs[] = { "scale<float>" };
    static const char* const opts[] = { "-default-device", "-std=c++17" };
    gpuk_module m, m2, p;
    gpuk_kernel k;
    const char* low;
    int v = 0;
    CHECK(up(GPUK_LOG_INFO, &c));
    CHECK_OK(gpuk_nvrtc_version(&v));
    printf("     NVRTC %d.%d from %s\n", v / 1000, v % 1000 / 10, nvrtc_path);
    memset(&cd, 0, sizeof cd);
    cd.source = src;
    cd.name = "real.cu";
    cd.options = opts; cd.num_options = 2;
    cd.headers = &h; cd.num_headers = 1;
    cd.name_expressions = exprs; cd.num_name_expressions = 1;
    CHECK_OK(gpuk_module_compile(c, &cd, &m));
    CHECK(fake.last_module_elf == 1); /* a cubin for sm_90 reached the driver */
    CHECK(fake.last_module_bytes > 1000);
    CHECK(strstr(logged, "compiled it to a cubin (sm_90)") != NULL);
    CHECK_OK(gpuk_kernel_get(c, m, "saxpy", &k));
    low = gpuk_module_lowered_name(c, m, "scale<float>");
    CHECK(low && strcmp(low, "_Z5scaleIfEvPT_S0_j") == 0);
    if (low) printf("     scale<float> -> %s\n", low);
    CHECK(low && gpuk_kernel_get(c, m, low, &k) == GPUK_OK);
    CHECK_OK(gpuk_module_compile(c, &cd, &m2)); /* cached */
    CHECK(strstr(logged, "cache hit") != NULL);
    /* PTX where asked: its .version is checked against the (fake) driver and it loads */
    cd.ptx_only = true;
    CHECK_OK(gpuk_module_compile(c, &cd, &p));
    CHECK(fake.last_module_elf == 0);
    CHECK(strstr(logged, "compiled it to PTX (compute_90)") != NULL);
    CHECK_OK(gpuk_kernel_get(c, p, "saxpy", &k));
    /* a real compile error */
    logged[0] = 0;
    cd.source = "extern \"C\" __global__ void k() { undeclared_thing = 1; }\n";
    cd.num_name_expressions = 0;
    CHECK_RESULT(gpuk_module_compile(c, &cd, &p), GPUK_ERR_COMPILE);
    CHECK_ERROR_MENTIONS("NVRTC_ERROR_COMPILATION");
    CHECK_ERROR_MENTIONS("undeclared_thing");
    CHECK(strstr(logged, "error detected") != NULL);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return TEST_PASS;
}

/* A source that includes gpuk_device.cuh, handed to NVRTC by gpuk (no file, no header in the
   desc), and calls each of its functions for each type they take. */
static const char device_src[] =
    "#include \"gpuk_device.cuh\"\n"
    "extern \"C\" __global__ void rand4(float* f, double* d, float* nf, double* nd,\n"
    "                                    unsigned long long seed, unsigned long long off) {\n"
    "    unsigned long long e = off + blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    gpuk_philox4 r = gpuk_philox4x32_10(e, seed);\n"
    "    f[threadIdx.x] = gpuk_uniform_f32(seed, e) + gpuk_u01_f32(r.w[3]);\n"
    "    d[threadIdx.x] = gpuk_uniform_f64(seed, e) + gpuk_u01_f64(r.w[0], r.w[1]);\n"
    "    nf[threadIdx.x] = gpuk_normal_f32(seed, e);\n"
    "    nd[threadIdx.x] = gpuk_normal_f64(seed, e);\n"
    "}\n"
    "template <typename T> __device__ void sums(T* out, const T* in) {\n"
    "    T v = in[threadIdx.x];\n"
    "    out[threadIdx.x] = gpuk_warp_sum(v) + gpuk_warp_inclusive_scan(v) + gpuk_block_sum(v);\n"
    "}\n"
    "extern \"C\" __global__ void sums_all(float* f, double* d, int* i, unsigned* u,\n"
    "                                       long long* l, unsigned long long* ul) {\n"
    "    sums(f, f); sums(d, d); sums(i, i); sums(u, u); sums(l, l); sums(ul, ul);\n"
    "    if (gpuk_lane_id() > 31) f[0] = 0.0f;\n"
    "}\n";

static int test_real_device_header(void) {
    gpuk_ctx* c = NULL;
    gpuk_compile_desc cd;
    gpuk_module m, p;
    gpuk_kernel k;
    CHECK(up(GPUK_LOG_INFO, &c));
    memset(&cd, 0, sizeof cd);
    cd.source = device_src;
    cd.name = "device_header.cu";
    CHECK_OK(gpuk_module_compile(c, &cd, &m));
    CHECK(fake.last_module_elf == 1);
    CHECK_OK(gpuk_kernel_get(c, m, "rand4", &k));
    CHECK_OK(gpuk_kernel_get(c, m, "sums_all", &k));
    cd.ptx_only = true;
    CHECK_OK(gpuk_module_compile(c, &cd, &p));
    CHECK(fake.last_module_elf == 0);
    CHECK_OK(gpuk_kernel_get(c, p, "rand4", &k));
    /* compiled with no warning: NVRTC's log stays empty */
    CHECK(strstr(logged, "warning") == NULL);
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return TEST_PASS;
}

/* gpuk_module_link's compiled input: the real NVRTC takes the -rdc=true gpuk adds and gives a
   relocatable cubin, which the (fake) linker joins with gpuk's device library; a kernel that
   only declares gpuk_uniform_f32. */
static int test_real_relocatable(void) {
    static const char draw_src[] =
        "extern \"C\" __device__ float gpuk_uniform_f32(unsigned long long, unsigned long long);\n"
        "extern \"C\" __global__ void draw(float* out, unsigned long long seed) {\n"
        "    out[threadIdx.x] = gpuk_uniform_f32(seed, threadIdx.x);\n}\n";
    gpuk_ctx* c = NULL;
    gpuk_compile_desc cd;
    gpuk_link_input in;
    gpuk_link_desc d;
    gpuk_module m;
    gpuk_kernel k;
    CHECK(up(GPUK_LOG_INFO, &c));
    memset(&cd, 0, sizeof cd);
    cd.source = draw_src;
    cd.name = "draw.cu";
    memset(&in, 0, sizeof in);
    in.compile = &cd;
    memset(&d, 0, sizeof d);
    d.inputs = &in;
    d.num_inputs = 1;
    d.gpuk_device = true;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK(strstr(logged, "'draw.cu': NVRTC") != NULL && strstr(logged, "a cubin (sm_90)") != NULL);
    CHECK_OK(gpuk_kernel_get(c, m, "draw", &k));
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return TEST_PASS;
}

/* Every generated source kind through the real compiler: saxpy, all parameter types, raw
   views, reductions of each result type, a preamble, an option; then an error in a body. */
static int test_real_custom_kernels(void) {
    static const char* const fast[] = { "-use_fast_math" };
    static const struct { const char* params; const char* map; const char* reduce; const char* identity;
                          const char* type; } reds[] = {
        { "const float* x", "x[i] * x[i]", "a + b", "0.0f", "float" },
        { "const double* x, double s", "fabs(x[i]) * s", "fmax(a, b)", "0.0", "double" },
        { "const int* x", "x[i]", "min(a, b)", "0x7fffffff", "int" },
        { "const uint32_t* x", "x[i]", "a ^ b", "0u", "uint32_t" },
        { "const float* x, float lo", "x[i] > lo ? 1 : 0", "a + b", "0", "unsigned long long" },
        { "const int8_t* x, const uint16_t* y", "(long long)x[i] * y[i]", "a + b", "0", "int64_t" },
        { "", "i", "a > b ? a : b", "-1", "long long" },
        /* parameters named as the reduce expression's operands: each sees its own */
        { "const float* a, const float* b", "a[i] * b[i]", "a + b", "0.0f", "float" },
    };
    gpuk_ctx* c = NULL;
    gpuk_elementwise_desc ed;
    gpuk_reduction_desc rd;
    gpuk_elementwise e;
    gpuk_reduction r;
    size_t i;
    CHECK(up(GPUK_LOG_WARN, &c)); /* a warning in the generated code would show */
    logged[0] = 0;
    memset(&ed, 0, sizeof ed);
    ed.params = "float a, const float* x, float* y";
    ed.body = "y[i] = a * x[i] + y[i]";
    ed.name = "saxpy";
    CHECK_OK(gpuk_elementwise_create(c, &ed, &e));
    CHECK(fake.last_module_elf == 1);
    CHECK_OK(gpuk_elementwise_destroy(c, &e));
    ed.params = "raw const double* table, int64_t* a, const uint64_t* b, int8_t* c8, uint8_t* u8, "
                "short* s16, const unsigned short* u16, char* ch, long long k, unsigned long long m, "
                "int j, unsigned u, double dd, float ff";
    ed.body = "double t = table[i % 4] + dd + ff;\n"
              "a[i] = (long long)t + (long long)b[i] + k + (long long)m + j + u + c8[i] + u8[i];\n"
              "s16[i] = (short)u16[i]; ch[i] = (char)(n & 0x7f)";
    ed.name = "every_type";
    ed.preamble = "#define UNUSED_MACRO 1\n__device__ inline double unused_helper(double v) { return v; }";
    ed.options = fast;
    ed.num_options = 1;
    CHECK_OK(gpuk_elementwise_create(c, &ed, &e));
    CHECK_OK(gpuk_elementwise_destroy(c, &e));
    for (i = 0; i < sizeof reds / sizeof reds[0]; i++) {
        memset(&rd, 0, sizeof rd);
        rd.params = reds[i].params;
        rd.map = reds[i].map;
        rd.reduce = reds[i].reduce;
        rd.identity = reds[i].identity;
        rd.type = reds[i].type;
        rd.name = "custom_reduction";
        CHECK_OK(gpuk_reduction_create(c, &rd, &r));
        CHECK_OK(gpuk_reduction_destroy(c, &r));
    }
    if (logged[0]) printf("     logged (want nothing):\n%s\n", logged); /* no warnings */
    CHECK(logged[0] == 0);
    /* a mistake in the body is reported at its line there */
    ed.params = "float a, const float* x, float* y";
    ed.body = "y[i] = a * x[i]\n + undefined_z";
    ed.name = "broken";
    ed.preamble = NULL;
    ed.num_options = 0;
    CHECK_RESULT(gpuk_elementwise_create(c, &ed, &e), GPUK_ERR_COMPILE);
    CHECK_ERROR_MENTIONS("gpuk_elementwise_create: 'broken.cu'");
    CHECK_ERROR_MENTIONS("broken: body(2): error");
    CHECK_ERROR_MENTIONS("undefined_z");
    CHECK(strstr(logged, "the generated source that failed to compile") != NULL);
    printf("     %s\n", gpuk_last_error());
    CHECK_OK(gpuk_ctx_destroy(c));
    fake_gpuk_check_released();
    return TEST_PASS;
}

/* gpuk_nvrtc_version before gpuk_init loads NVRTC from GPUK_NVRTC_PATH (the real one here);
   a gpuk_init that names another NVRTC (the fake, 11.8) then replaces it, and one that names
   none keeps it. */
static int test_nvrtc_before_init(void) {
    gpuk_desc d;
    fake_nvrtc_config cfg;
    int v = 0;
    gpuk_shutdown();
    fake_reset(NULL);
    setenv("GPUK_NVRTC_PATH", nvrtc_path, 1);
    CHECK_OK(gpuk_nvrtc_version(&v));
    CHECK(v >= 12000); /* the toolkit's */
    memset(&cfg, 0, sizeof cfg);
    cfg.major = 11;
    cfg.minor = 8;
    fake_nvrtc_reset(&cfg);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_get_proc = fake_nvrtc_get_proc;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_nvrtc_version(&v));
    CHECK(v == 11080);
    CHECK_OK(gpuk_shutdown());
    /* an init that names no NVRTC keeps the one loaded before it */
    CHECK_OK(gpuk_nvrtc_version(&v));
    CHECK(v >= 12000);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_nvrtc_version(&v));
    CHECK(v >= 12000);
    CHECK_OK(gpuk_shutdown());
    unsetenv("GPUK_NVRTC_PATH");
    return TEST_PASS;
}

/* NVRTC found by the search alone, in found_dir; then a compile, which the disk cache serves
   again after a new gpuk_init */
static const char* found_dir;
static const char* found_how;
static int test_search_finds_it(void) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_compile_desc cd;
    gpuk_module m;
    gpuk_kernel k;
    char want[1024], cache[600], log[4096];
    int v = 0, round;
    CHECK(getenv("GPUK_NVRTC_PATH") == NULL);
    snprintf(cache, sizeof cache, "%s/../gpuk_cache", found_dir);
    for (round = 0; round < 2; round++) {
        gpuk_shutdown();
        fake_reset(NULL);
        memset(&d, 0, sizeof d);
        d.get_proc = fake_get_proc;
        d.logger.func = capture;
        d.log_level = GPUK_LOG_INFO;
        d.nvrtc_cache_dir = cache;
        logged[0] = 0;
        CHECK_OK(gpuk_init(&d));
        CHECK_OK(gpuk_ctx_create(NULL, &c));
        memset(&cd, 0, sizeof cd);
        cd.source = "#warning found\nextern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
        cd.name = "found.cu";
        cd.log = log;
        cd.log_bytes = sizeof log;
        CHECK_OK(gpuk_module_compile(c, &cd, &m));
        CHECK_OK(gpuk_kernel_get(c, m, "k", &k));
        if (round == 0) {
            CHECK_OK(gpuk_nvrtc_version(&v));
            snprintf(want, sizeof want, "NVRTC %d.%d loaded from %s/libnvrtc.so.", v / 1000, v % 1000 / 10,
                     found_dir);
            CHECK(strstr(logged, want) != NULL);
            snprintf(want, sizeof want, "(%s)", found_how);
            CHECK(strstr(logged, want) != NULL);
            CHECK(strstr(log, "found") != NULL); /* the warning, in the caller's buffer */
            if (strstr(logged, "loaded from")) printf("     %.*s\n", (int)strcspn(strstr(logged, "NVRTC"), "\n"),
                                                     strstr(logged, "NVRTC"));
        } else {
            CHECK(strstr(logged, "'found.cu': disk cache hit, a cubin (sm_90)") != NULL);
            CHECK(strstr(log, "found") == NULL); /* NVRTC did not compile */
        }
        CHECK_OK(gpuk_ctx_destroy(c));
    }
    fake_gpuk_check_released();
    return TEST_PASS;
}

int main(int argc, char** argv) {
    if (argc == 4 && strcmp(argv[1], "--found-in") == 0) {
        found_dir = argv[2];
        found_how = argv[3];
        RUN(test_search_finds_it);
        return test_summary();
    }
    if (argc < 2) { printf("usage: real_nvrtc LIBNVRTC | real_nvrtc --found-in DIR HOW\n"); return 2; }
    nvrtc_path = argv[1];
    RUN(test_real_nvrtc);
    RUN(test_real_device_header);
    RUN(test_real_relocatable);
    RUN(test_real_custom_kernels);
    RUN(test_nvrtc_before_init);
    return test_summary();
}
