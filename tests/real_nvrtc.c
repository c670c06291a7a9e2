/* tests/real_nvrtc.c - gpuk_module_compile with a real NVRTC (argv[1], through
   gpuk_desc.nvrtc_path) on the fake driver's sm_90 device: a cubin comes out and the driver
   gets it, PTX where asked, a template through its name expression, a real compile error's
   log, the cache. Run by tests/real_nvrtc.sh; no GPU needed. */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "check.h"
#include "fake_driver.h"

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

static int test_real_nvrtc(void) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_compile_desc cd;
    gpuk_compile_header h = { "scale.h", "#define SCALE(a, b) ((a) * (b))\n" };
    static const char* const exprs[] = { "scale<float>" };
    static const char* const opts[] = { "-default-device", "-std=c++17" };
    gpuk_module m, m2, p;
    gpuk_kernel k;
    const char* low;
    int v = 0;
    gpuk_shutdown();
    fake_reset(NULL);
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_path = nvrtc_path;
    d.logger.func = capture;
    d.log_level = GPUK_LOG_INFO;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
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

int main(int argc, char** argv) {
    if (argc < 2) { printf("usage: real_nvrtc LIBNVRTC\n"); return 2; }
    nvrtc_path = argv[1];
    RUN(test_real_nvrtc);
    return test_summary();
}
