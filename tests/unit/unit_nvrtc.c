/* tests/unit/unit_nvrtc.c - gpuk_module_compile on the fake driver with a fake NVRTC (through
   gpuk_desc.nvrtc_get_proc): no NVRTC, a compile error and its log, options and headers passed
   through, cubin or PTX by the architectures NVRTC lists, name expressions, the cache, the
   log buffer, the disk cache, NVRTC's search through the toolkit and pip folders (with
   libraries of test names, in folders made for the test), and a fault sweep over every NVRTC
   call and host allocation. No GPU, no toolkit needed.
   cc -std=c99 -I../.. unit_nvrtc.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/fake_nvrtc.h"
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char saxpy_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* counting allocator: what gpuk took and gave back; fail_alloc_at fails the Nth */
static long allocs, frees, alloc_calls, fail_alloc_at;
static void* count_alloc(size_t n, void* u) {
    (void)u;
    if (++alloc_calls == fail_alloc_at) return NULL;
    allocs++;
    return malloc(n);
}
static void count_free(void* p, void* u) { (void)u; frees++; free(p); }

/* the logger's last messages at each level */
static char logged[4096];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)code;
    snprintf(logged + n, sizeof logged - n, "[%d] %s\n", (int)level, msg);
}

static char asked[1024];
static const char* up_cache_dir; /* gpuk_desc.nvrtc_cache_dir for up() */

/* gpuk on the fake driver and fake NVRTC (nvrtc NULL: defaults), one ctx on an sm_90 device */
static gpuk_ctx* up(const fake_nvrtc_config* nvrtc, const char* nvrtc_path) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_shutdown();
    fake_reset(NULL);
    fake_nvrtc_reset(nvrtc);
    allocs = frees = alloc_calls = fail_alloc_at = 0;
    logged[0] = asked[0] = 0;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_path = nvrtc_path;
    d.nvrtc_get_proc = nvrtc_path ? NULL : fake_nvrtc_get_proc;
    d.nvrtc_get_proc_user_data = asked;
    d.nvrtc_cache_dir = up_cache_dir;
    d.allocator.alloc_fn = count_alloc;
    d.allocator.free_fn = count_free;
    d.logger.func = capture;
    d.log_level = GPUK_LOG_INFO;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
    return c;
}

static void down(gpuk_ctx* c) {
    CHECK_OK(gpuk_ctx_destroy(c));
    CHECK(fake_nv.live_programs == 0);
    fake_gpuk_check_released(); /* and gpuk_shutdown, which frees the cache */
    CHECK(allocs == frees);
}

static gpuk_compile_desc saxpy_desc(void) {
    gpuk_compile_desc d;
    memset(&d, 0, sizeof d);
    d.source = saxpy_src;
    d.name = "saxpy.cu";
    return d;
}

static int test_no_nvrtc_names_what_to_install(void) {
    gpuk_ctx* c = up(NULL, "/nonexistent/libnvrtc.so.13");
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m = { 7 };
    int v = 1;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_NO_NVRTC);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("cannot load NVRTC");
    CHECK_ERROR_MENTIONS("/nonexistent/libnvrtc.so.13");
    CHECK_ERROR_MENTIONS("nvidia-cuda-nvrtc");
    CHECK_ERROR_MENTIONS("GPUK_NVRTC_PATH");
    CHECK(strcmp(gpuk_result_str(GPUK_ERR_NO_NVRTC), "GPUK_ERR_NO_NVRTC") == 0);
    /* not remembered: the next call tries again, and fails the same way */
    CHECK_RESULT(gpuk_nvrtc_version(&v), GPUK_ERR_NO_NVRTC);
    CHECK(v == 0);
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_NO_NVRTC);
    down(c);
    return TEST_PASS;
}

static int test_not_nvrtc_or_too_old(void) {
    fake_nvrtc_config cfg;
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m;
    gpuk_ctx* c = up(NULL, "libm.so.6");
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("is not NVRTC (no working nvrtcVersion)");
    down(c);
    memset(&cfg, 0, sizeof cfg);
    cfg.missing = "nvrtcGetLoweredName";
    c = up(&cfg, NULL);
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("has no nvrtcGetLoweredName");
    down(c);
    /* the environment names it where the desc does not */
    setenv("GPUK_NVRTC_PATH", "/nonexistent/from_env/libnvrtc.so", 1);
    c = up(NULL, "");
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("/nonexistent/from_env/libnvrtc.so");
    unsetenv("GPUK_NVRTC_PATH");
    down(c);
    return TEST_PASS;
}

/* Library paths are taken whole or refused: one over 4095 characters fails gpuk_init naming
   the field; one of 516 characters whose first 511 name another library (here libm, through
   a link) must not load that library, as a path cut to 511 characters would. */
static int test_long_paths(void) {
    static char longp[5000], base[64], link_path[520], asked_path[530];
    char dir[520];
    const char* libm = NULL;
    static const char* const libms[] = { "/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                         "/lib/aarch64-linux-gnu/libm.so.6", "/lib64/libm.so.6", NULL };
    gpuk_desc d;
    gpuk_ctx* c;
    gpuk_compile_desc cd = saxpy_desc();
    gpuk_module m;
    size_t i, at;
    int v = 0;
    gpuk_shutdown();
    fake_reset(NULL);
    memset(longp, 'a', 4096);
    longp[0] = '/';
    longp[4096] = 0;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_path = longp;
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_desc.nvrtc_path is 4096 characters long; at most 4095 are taken");
    d.nvrtc_path = NULL;
    d.driver_path = longp;
    d.get_proc = NULL;
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_desc.driver_path is 4096 characters long");
    longp[4095] = 0; /* 4095 characters: taken, and then not found */
    CHECK_RESULT(gpuk_init(&d), GPUK_ERR_NO_DRIVER);
    for (i = 0; libms[i] && !libm; i++)
        if (access(libms[i], R_OK) == 0) libm = libms[i];
    if (!libm) return TEST_SKIP;
    /* a link of exactly 511 characters to libm, in folders of at most 200 */
    snprintf(base, sizeof base, "/tmp/gpuk_long_%ld", (long)getpid());
    CHECK(mkdir(base, 0700) == 0);
    snprintf(dir, sizeof dir, "%s", base);
    at = strlen(dir);
    while (511 - at > 201) {
        dir[at] = '/';
        memset(dir + at + 1, 'd', 199);
        dir[at + 200] = 0;
        at += 200;
        CHECK(mkdir(dir, 0700) == 0);
    }
    memcpy(link_path, dir, at);
    link_path[at] = '/';
    memset(link_path + at + 1, 'l', 511 - at - 1);
    link_path[511] = 0;
    CHECK(strlen(link_path) == 511);
    CHECK(symlink(libm, link_path) == 0);
    memcpy(asked_path, link_path, 511);
    memcpy(asked_path + 511, ".so.9", 6); /* 516 characters, no such file */
    c = up(NULL, asked_path);
    CHECK_RESULT(gpuk_module_compile(c, &cd, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("cannot load NVRTC");
    CHECK(strstr(gpuk_last_error(), "is not NVRTC") == NULL); /* libm was not loaded */
    CHECK_RESULT(gpuk_nvrtc_version(&v), GPUK_ERR_NO_NVRTC);
    down(c);
    unlink(link_path);
    while (strlen(dir) > strlen(base)) {
        rmdir(dir);
        *strrchr(dir, '/') = 0;
    }
    rmdir(base);
    return TEST_PASS;
}

static int test_compile_error_log(void) {
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m = { 7 };
    d.source = "extern \"C\" __global__ void k() {}\n#error no good\n";
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_COMPILE);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("gpuk_module_compile: 'saxpy.cu': nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)");
    CHECK_ERROR_MENTIONS("prog.cu(2): error: #error directive: no good");
    CHECK(strstr(logged, "1 error detected") != NULL); /* the whole log, to the logger */
    CHECK(strcmp(gpuk_result_str(GPUK_ERR_COMPILE), "GPUK_ERR_COMPILE") == 0);
    /* a warning: compiled, the log at WARN */
    logged[0] = 0;
    d.source = "#warning w\nextern \"C\" __global__ void k() {}\n";
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(strstr(logged, "[2] prog.cu(1): warning") != NULL);
    down(c);
    return TEST_PASS;
}

/* gpuk_device.cuh goes to every compile under that name, its text exactly the file's (run
   from the repository root); a header of that name in the desc goes instead, alone. */
static int test_device_header_passed(void) {
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_compile_desc d = saxpy_desc();
    gpuk_compile_header h[2];
    gpuk_module m;
    static char file[32768];
    size_t n;
    FILE* f = fopen("gpuk_device.cuh", "rb");
    CHECK(f != NULL);
    n = fread(file, 1, sizeof file - 1, f);
    fclose(f);
    CHECK(n > 1000 && n < sizeof file - 1);
    file[n] = 0;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(fake_nv.num_headers == 1 && fake_nv.device_headers == 1);
    CHECK(strcmp(fake_nv.device_header, file) == 0);
    CHECK(strstr(fake_nv.device_header, "gpuk_uniform_f32(unsigned long long seed") != NULL);
    h[0].name = "a.h"; h[0].source = "#define A 1";
    d.headers = h; d.num_headers = 1;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(fake_nv.num_headers == 2 && fake_nv.device_headers == 1);
    CHECK(strcmp(fake_nv.headers, "a.h=#define A 1;") == 0);
    CHECK(strcmp(fake_nv.device_header, file) == 0);
    h[1].name = "gpuk_device.cuh"; h[1].source = "#define MINE 1";
    d.num_headers = 2;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(fake_nv.num_headers == 2 && fake_nv.device_headers == 1);
    CHECK(strcmp(fake_nv.device_header, "#define MINE 1") == 0);
    down(c);
    return TEST_PASS;
}

static int test_options_and_headers_passed(void) {
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_compile_desc d = saxpy_desc();
    static const char* const opts[] = { "-DN=4", "-use_fast_math" };
    static const char* const bad[] = { "-arch=sm_80" };
    gpuk_compile_header h[2];
    gpuk_module m;
    gpuk_kernel k;
    int v = 0;
    h[0].name = "a.h"; h[0].source = "#define A 1";
    h[1].name = "b.h"; h[1].source = "#define B 2";
    d.options = opts; d.num_options = 2;
    d.headers = h; d.num_headers = 2;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(strcmp(fake_nv.options, "-DN=4 -use_fast_math -arch=sm_90") == 0);
    CHECK(strcmp(fake_nv.headers, "a.h=#define A 1;b.h=#define B 2;") == 0);
    CHECK_OK(gpuk_kernel_get(c, m, "saxpy", &k));
    CHECK(strstr(asked, "nvrtcCompileProgram") != NULL); /* through the resolver */
    CHECK_OK(gpuk_nvrtc_version(&v));
    CHECK(v == 13000);
    /* argument errors never reach NVRTC */
    d.options = bad; d.num_options = 1;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk picks the architecture");
    d.options = NULL;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    d.num_options = 0; d.source = NULL;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    d = saxpy_desc(); d._end_canary = 1;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_module_compile(c, NULL, &m), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_module_compile(NULL, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK(fake_nv.compiles == 1);
    down(c);
    return TEST_PASS;
}

/* which target a device of sm_90 gets from an NVRTC of cfg */
static void target_case(const fake_nvrtc_config* cfg, int ptx_only, const char* arch, int elf) {
    gpuk_ctx* c = up(cfg, NULL);
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m;
    gpuk_kernel k;
    d.ptx_only = ptx_only;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(strcmp(fake_nv.arch, arch) == 0);
    CHECK(fake.last_module_elf == elf);
    CHECK(strstr(logged, elf ? "compiled it to a cubin (sm_90)" : "compiled it to PTX") != NULL);
    CHECK_OK(gpuk_kernel_get(c, m, "saxpy", &k));
    if (strcmp(fake_nv.arch, arch) != 0) fprintf(stderr, "    arch %s, wanted %s\n", fake_nv.arch, arch);
    down(c);
}

static int test_cubin_or_ptx_by_arch_list(void) {
    fake_nvrtc_config cfg;
    gpuk_ctx* c;
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m;
    static const int old[] = { 52, 60, 70, 75, 80, 86, 89 };
    static const int newer[] = { 100, 120 };
    target_case(NULL, 0, "sm_90", 1);          /* listed: a cubin */
    target_case(NULL, 1, "compute_90", 0);     /* asked for PTX */
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.archs, old, sizeof old);
    target_case(&cfg, 0, "compute_89", 0);     /* not listed: PTX of the newest below */
    memset(&cfg, 0, sizeof cfg);
    cfg.no_arch_list = 1;
    target_case(&cfg, 0, "compute_90", 0);     /* no list, yet 11.2 or newer: PTX for the device */
    /* an NVRTC before 11.2 has no list: PTX for the newest architecture it knows, not one it
       would refuse (-arch=compute_90 is unknown to 10.2) */
    cfg.major = 10;
    cfg.minor = 2;
    target_case(&cfg, 0, "compute_75", 0);
    cfg.major = 11;
    cfg.minor = 1;
    target_case(&cfg, 0, "compute_86", 0);
    cfg.major = 9;
    cfg.minor = 0;
    target_case(&cfg, 0, "compute_70", 0);
    cfg.major = 7;
    cfg.minor = 0;
    target_case(&cfg, 0, "compute_53", 0);
    memset(&cfg, 0, sizeof cfg);
    cfg.no_cubin = 1;
    target_case(&cfg, 0, "compute_90", 0);     /* no cubin entry points (< 11.1) */
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.archs, newer, sizeof newer);
    c = up(&cfg, NULL);
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("NVRTC 13.0 compiles for sm_100 and newer; the device is sm_90");
    CHECK(fake_nv.compiles == 0);
    down(c);
    return TEST_PASS;
}

static int test_name_expressions(void) {
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_compile_desc d = saxpy_desc();
    static const char* const exprs[] = { "scale<float>", "shift<float>" };
    gpuk_module m, plain;
    gpuk_kernel k;
    const char* low;
    d.source = "template <typename T> __global__ void scale(T* x) {}\n"
               "template <typename T> __global__ void shift(T* x) {}\n";
    d.name_expressions = exprs;
    d.num_name_expressions = 2;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    low = gpuk_module_lowered_name(c, m, "scale<float>");
    CHECK(low && strcmp(low, "_Z5scaleIfEvPT_") == 0);
    low = gpuk_module_lowered_name(c, m, "shift<float>");
    CHECK(low && strcmp(low, "_Z5shiftIfEvPT_") == 0);
    CHECK_OK(gpuk_kernel_get(c, m, gpuk_module_lowered_name(c, m, "scale<float>"), &k));
    CHECK(gpuk_module_lowered_name(c, m, "scale<double>") == NULL);
    CHECK(gpuk_module_lowered_name(c, m, NULL) == NULL);
    CHECK(gpuk_module_lowered_name(NULL, m, "scale<float>") == NULL);
    /* a module that was not compiled, and one unloaded */
    CHECK_OK(gpuk_module_load(c, &(gpuk_module_desc){ .image = { ".version 7.0\n.target sm_52\n.entry k()\n{ ret; }\n", 0 } }, &plain));
    CHECK(gpuk_module_lowered_name(c, plain, "scale<float>") == NULL);
    CHECK_OK(gpuk_module_unload(c, m));
    CHECK(gpuk_module_lowered_name(c, m, "scale<float>") == NULL);
    down(c);
    return TEST_PASS;
}

static int test_cache(void) {
    gpuk_ctx *c = up(NULL, NULL), *c2 = NULL;
    gpuk_compile_desc d = saxpy_desc();
    static const char* const opt[] = { "-DX=1" };
    static const char* const opt2[] = { "-DX=2" };
    gpuk_compile_header h;
    gpuk_module m1, m2, m3;
    gpuk_kernel k;
    CHECK_OK(gpuk_module_compile(c, &d, &m1));
    CHECK_OK(gpuk_module_compile(c, &d, &m2));
    CHECK(fake_nv.compiles == 1);             /* the second skipped NVRTC */
    CHECK(m1.id != m2.id);                    /* two modules all the same */
    CHECK(strstr(logged, "'saxpy.cu': cache hit, a cubin (sm_90) compiled earlier") != NULL);
    CHECK_OK(gpuk_ctx_create(NULL, &c2));     /* another ctx of the same architecture */
    CHECK_OK(gpuk_module_compile(c2, &d, &m3));
    CHECK_OK(gpuk_kernel_get(c2, m3, "saxpy", &k));
    CHECK(fake_nv.compiles == 1);
    CHECK_OK(gpuk_ctx_destroy(c2));
    /* each part of the key counts */
    d.options = opt; d.num_options = 1;
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 2);
    d.options = opt2;
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 3);
    h.name = "h.h"; h.source = "";
    d.headers = &h; d.num_headers = 1;
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 4);
    h.source = " ";
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 5);
    d.ptx_only = 1;
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 6);
    d.name = "other.cu";
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 7);
    CHECK_OK(gpuk_module_compile(c, &d, &m3));
    CHECK(fake_nv.compiles == 7);
    down(c);                                  /* gpuk_shutdown frees the cache: allocs == frees */
    /* and a failed compile is not cached */
    c = up(NULL, NULL);
    d = saxpy_desc();
    d.source = "#error x\n";
    CHECK_RESULT(gpuk_module_compile(c, &d, &m1), GPUK_ERR_COMPILE);
    CHECK_RESULT(gpuk_module_compile(c, &d, &m1), GPUK_ERR_COMPILE);
    CHECK(fake_nv.compiles == 2);
    down(c);
    return TEST_PASS;
}

/* The whole NVRTC log in the caller's buffer: an error's, a warning's, cut to fit, empty on
   a cache hit and for a refused desc; the custom kernels pass theirs through. */
static int test_log_buffer(void) {
    gpuk_ctx* c = up(NULL, NULL);
    gpuk_compile_desc d = saxpy_desc();
    gpuk_elementwise_desc ed;
    gpuk_elementwise e;
    gpuk_module m;
    char log[256], tiny[16];
    d.log = log;
    d.log_bytes = sizeof log;
    d.source = "extern \"C\" __global__ void k() {}\n#error no good\n";
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_COMPILE);
    CHECK(strstr(log, "prog.cu(2): error: #error directive: no good") != NULL);
    CHECK(strstr(log, "1 error detected in the compilation") != NULL); /* past the first line */
    d.log = tiny;
    d.log_bytes = sizeof tiny;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_COMPILE);
    CHECK(strlen(tiny) == sizeof tiny - 1 && strncmp(tiny, "prog.cu(2): err", 15) == 0);
    d.log = log;
    d.log_bytes = sizeof log;
    d.source = "#warning w\nextern \"C\" __global__ void k() {}\n";
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(strcmp(log, "prog.cu(1): warning: a warning\n") == 0);
    strcpy(log, "stale");
    CHECK_OK(gpuk_module_compile(c, &d, &m)); /* a cache hit: NVRTC did not run */
    CHECK(log[0] == 0);
    CHECK(fake_nv.compiles == 3);
    strcpy(log, "stale");
    d.source = NULL;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK(log[0] == 0);
    d = saxpy_desc();
    d.log = log; /* without its size */
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.log and desc.log_bytes");
    d.log = NULL;
    d.log_bytes = 8;
    CHECK_RESULT(gpuk_module_compile(c, &d, &m), GPUK_ERR_INVALID_ARG);
    /* a custom kernel's log: its preamble fails in the fake NVRTC */
    memset(&ed, 0, sizeof ed);
    ed.params = "float* y";
    ed.body = "y[i] = 1";
    ed.preamble = "#error in the preamble";
    ed.log = log;
    ed.log_bytes = sizeof log;
    CHECK_RESULT(gpuk_elementwise_create(c, &ed, &e), GPUK_ERR_COMPILE);
    CHECK(strstr(log, "#error directive: in the preamble") != NULL);
    strcpy(log, "stale");
    ed.params = "float* y, float* y";
    CHECK_RESULT(gpuk_elementwise_create(c, &ed, &e), GPUK_ERR_INVALID_ARG);
    CHECK(log[0] == 0);
    down(c);
    return TEST_PASS;
}

/* The one cache file in dir ("" when none) into out; *out_files counts every file there, so
   a temporary file left behind shows. */
static void cache_file(const char* dir, char* out, size_t cap, int* out_files) {
    DIR* d = opendir(dir);
    struct dirent* e;
    out[0] = 0;
    *out_files = 0;
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        ++*out_files;
        if (strncmp(e->d_name, "nvrtc-", 6) == 0 && strstr(e->d_name, ".gpuk") &&
            !strstr(e->d_name, ".tmp"))
            snprintf(out, cap, "%s/%s", dir, e->d_name);
    }
    closedir(d);
}

/* One compile of saxpy (options: opt, or none) in a fresh gpuk_init with the disk cache in
   dir: as after a new process start, only the disk can spare NVRTC the work. Returns how
   many compiles NVRTC ran. */
static long disk_compile(const char* dir, const char* opt, int ptx_only) {
    gpuk_ctx* c;
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m;
    gpuk_kernel k;
    long n;
    up_cache_dir = dir;
    c = up(NULL, NULL);
    up_cache_dir = NULL;
    d.ptx_only = ptx_only;
    if (opt) { d.options = &opt; d.num_options = 1; }
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK_OK(gpuk_kernel_get(c, m, "saxpy", &k)); /* the image from disk loads and has it */
    CHECK_OK(gpuk_module_compile(c, &d, &m));     /* and then it is in memory */
    CHECK(strstr(logged, "'saxpy.cu': cache hit") != NULL);
    n = fake_nv.compiles;
    down(c);
    return n;
}

/* flips one byte of file at offset from the end (negative) or the start */
static void flip_byte(const char* file, long offset) {
    FILE* f = fopen(file, "r+b");
    int ch;
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET);
    ch = fgetc(f);
    fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET);
    fputc(ch ^ 0x5a, f);
    fclose(f);
}

static int test_disk_cache(void) {
    char base[64], dir[128], file[256], file2[256], blocker[160], msg[512];
    struct stat st;
    int files = 0;
    gpuk_ctx* c;
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m;
    snprintf(base, sizeof base, "/tmp/gpuk_disk_%ld", (long)getpid());
    snprintf(dir, sizeof dir, "%s/made/by/gpuk", base); /* gpuk makes the missing folders */
    /* off by default: nothing is written anywhere */
    unsetenv("GPUK_CACHE_DIR");
    CHECK(disk_compile(NULL, NULL, 0) == 1);
    /* cold: compiled and written; a new start: read back, NVRTC not run */
    CHECK(disk_compile(dir, NULL, 0) == 1);
    cache_file(dir, file, sizeof file, &files);
    CHECK(file[0] && files == 1); /* no temporary file left */
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    CHECK(strstr(logged, "'saxpy.cu': disk cache hit, a cubin (sm_90) from ") != NULL);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    /* another key: another file */
    CHECK(disk_compile(dir, "-DX=1", 0) == 1);
    CHECK(disk_compile(dir, "-DX=2", 0) == 1);
    CHECK(disk_compile(dir, NULL, 1) == 1); /* PTX */
    CHECK(disk_compile(dir, "-DX=1", 0) == 0);
    CHECK(disk_compile(dir, NULL, 1) == 0);
    cache_file(dir, file2, sizeof file2, &files);
    CHECK(files == 4);
    /* damaged files are misses, compiled and written again; never a wrong module */
    flip_byte(file, -3);   /* in the image: the checksum */
    CHECK(disk_compile(dir, NULL, 0) == 1);
    CHECK(strstr(logged, "is damaged: compiling again") != NULL);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    flip_byte(file, 64 + 12); /* in the key: another program of the same hash */
    CHECK(disk_compile(dir, NULL, 0) == 1);
    CHECK(strstr(logged, "holds another program of the same hash: compiling again") != NULL);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    CHECK(truncate(file, 100) == 0); /* cut short */
    CHECK(disk_compile(dir, NULL, 0) == 1);
    CHECK(strstr(logged, "has the wrong size: compiling again") != NULL);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    flip_byte(file, 1); /* not the format */
    CHECK(disk_compile(dir, NULL, 0) == 1);
    CHECK(strstr(logged, "is not one of this gpuk's") != NULL);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    CHECK(truncate(file, 10) == 0);
    CHECK(disk_compile(dir, NULL, 0) == 1);
    CHECK(strstr(logged, "is too short") != NULL);
    CHECK(disk_compile(dir, NULL, 0) == 0);
    /* GPUK_CACHE_DIR where the desc names none; "" in the desc turns it off */
    setenv("GPUK_CACHE_DIR", dir, 1);
    CHECK(disk_compile(NULL, NULL, 0) == 0);
    CHECK(disk_compile("", NULL, 0) == 1);
    unsetenv("GPUK_CACHE_DIR");
    /* a folder that cannot be made: a warning, once, and the compiles work */
    snprintf(blocker, sizeof blocker, "%s/a_file", base);
    fclose(fopen(blocker, "w"));
    snprintf(msg, sizeof msg, "%s/cache", blocker);
    up_cache_dir = msg;
    c = up(NULL, NULL);
    up_cache_dir = NULL;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(fake_nv.compiles == 1);
    CHECK(strstr(logged, "[2] gpuk_module_compile: 'saxpy.cu': cannot read the disk cache file") != NULL);
    CHECK(strstr(logged, "[3] gpuk_module_compile: 'saxpy.cu': cannot create the disk cache file") != NULL);
    CHECK(strstr(logged, "Not a directory; compiles are not cached on disk") != NULL);
    logged[0] = 0;
    d.ptx_only = true;
    CHECK_OK(gpuk_module_compile(c, &d, &m));
    CHECK(strstr(logged, "[3] gpuk_module_compile: 'saxpy.cu': cannot create") != NULL); /* INFO now */
    CHECK(strstr(logged, "[2]") == NULL);
    down(c);
    /* a file that cannot be read or replaced (a folder in its place): a miss and a warning */
    unlink(file);
    CHECK(mkdir(file, 0700) == 0);
    CHECK(disk_compile(dir, NULL, 0) == 1);
    CHECK(strstr(logged, "cannot rename into place the disk cache file") != NULL);
    CHECK(strstr(logged, "[2] ") != NULL);
    rmdir(file);
    /* the desc's folder may not be longer than what the file names fit after */
    {
        static char longdir[5000];
        gpuk_desc gd;
        memset(longdir, 'c', 4040);
        longdir[0] = '/';
        memset(&gd, 0, sizeof gd);
        gd.get_proc = fake_get_proc;
        gd.nvrtc_cache_dir = longdir;
        gpuk_shutdown();
        CHECK_RESULT(gpuk_init(&gd), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("gpuk_desc.nvrtc_cache_dir is 4040 characters long");
    }
    snprintf(msg, sizeof msg, "rm -rf '%s'", base);
    CHECK(system(msg) == 0);
    return TEST_PASS;
}

/* NVRTC's search, on a copy of gpuk's NVRTC descriptor whose sonames no system has: with the
   explicit paths unset it goes through the folders in order, a library in a folder is found
   there (here libm, which the probe then refuses, naming the file), and the error lists
   what was tried. The environment points at folders made for the test. */
static const char* const test_sonames[] = { "libgpuk_test_nvrtc.so.13", "libgpuk_test_nvrtc.so.12",
                                            NULL };
static gpuk_result search_load(void) {
    gpuk__lib lib = gpuk__nvrtc_lib;
    uint32_t features = 0;
    gpuk_result r;
    lib.sonames = test_sonames;
    logged[0] = 0;
    r = gpuk__lib_load(&lib, NULL, NULL, NULL, "test_search", &features);
    CHECK(strlen(gpuk_last_error()) < 511); /* never cut: it fits */
    return r;
}

static const char* libm_path(void) {
    static const char* const libms[] = { "/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                         "/lib/aarch64-linux-gnu/libm.so.6", "/lib64/libm.so.6", NULL };
    size_t i;
    for (i = 0; libms[i]; i++)
        if (access(libms[i], R_OK) == 0) return libms[i];
    return NULL;
}

static void mkdirs(const char* path) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    CHECK(system(cmd) == 0);
}

static int test_search(void) {
    static const char* const vars[] = { "HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_PATH", "CUDA_HOME" };
    char base[64], p[8][200], link[400], saved[5][400];
    const char* libm = libm_path();
    const char* at[8];
    gpuk_desc d;
    int i;
    if (!libm) return TEST_SKIP;
    for (i = 0; i < 5; i++) snprintf(saved[i], sizeof saved[i], "%s", getenv(vars[i]) ? getenv(vars[i]) : "");
    snprintf(base, sizeof base, "/tmp/gpuk_search_%ld", (long)getpid());
    snprintf(p[0], sizeof p[0], "%s/cuda_path", base);
    snprintf(p[1], sizeof p[1], "%s/cuda_home", base);
    snprintf(p[2], sizeof p[2], "%s/venv/lib/python3.12/site-packages/nvidia/cu13/lib", base);
    snprintf(p[3], sizeof p[3], "%s/venv/lib/python3.9/site-packages/nvidia/cuda_nvrtc/lib", base);
    snprintf(p[4], sizeof p[4], "%s/home/.local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib", base);
    snprintf(p[5], sizeof p[5], "%s/conda/lib/python3.10/site-packages", base); /* no wheel */
    for (i = 2; i < 6; i++) mkdirs(p[i]);
    mkdirs(p[1]);
    gpuk_shutdown();
    memset(&d, 0, sizeof d);
    d.logger.func = capture;
    d.log_level = GPUK_LOG_DEBUG;
    d.get_proc = fake_get_proc;
    fake_reset(NULL);
    CHECK_OK(gpuk_init(&d));
    unsetenv("GPUK_NVRTC_PATH");
    setenv("CUDA_PATH", p[0], 1);
    setenv("CUDA_HOME", p[1], 1);
    snprintf(link, sizeof link, "%s/venv", base);
    setenv("VIRTUAL_ENV", link, 1);
    snprintf(link, sizeof link, "%s/conda", base);
    setenv("CONDA_PREFIX", link, 1);
    snprintf(link, sizeof link, "%s/home", base);
    setenv("HOME", link, 1);
    /* nothing anywhere: every place in order, in the log at DEBUG and in the error */
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("test_search: cannot load NVRTC (not found): tried libgpuk_test_nvrtc.so.13, .12 by name, then in ");
    CHECK_ERROR_MENTIONS("/cuda_path/lib64, ");
    CHECK_ERROR_MENTIONS("more folders");
    CHECK_ERROR_MENTIONS("(hint: install it (the toolkit's cuda-nvrtc package, or pip install nvidia-cuda-nvrtc), or name it in gpuk_desc.nvrtc_path or GPUK_NVRTC_PATH)");
    printf("     %s\n", gpuk_last_error());
    snprintf(link, sizeof link, "in %s/cuda_path/lib64 (in $CUDA_PATH)", base);
    at[0] = strstr(logged, link);
    snprintf(link, sizeof link, "in %s/cuda_path/lib (in $CUDA_PATH)", base);
    at[1] = strstr(logged, link);
    snprintf(link, sizeof link, "in %s/cuda_home/lib64 (in $CUDA_HOME)", base);
    at[2] = strstr(logged, link);
    at[3] = strstr(logged, "in /usr/local/cuda/lib64 (in /usr/local/cuda)");
    snprintf(link, sizeof link, "in %s (a pip wheel in $VIRTUAL_ENV)", p[2]);
    at[4] = strstr(logged, link);
    snprintf(link, sizeof link, "in %s (a pip wheel in $VIRTUAL_ENV)", p[3]);
    at[5] = strstr(logged, link);
    snprintf(link, sizeof link, "in %s (a pip wheel in ~/.local)", p[4]);
    at[6] = strstr(logged, link);
    for (i = 0; i < 7; i++) {
        CHECK(at[i] != NULL);
        if (i && at[i] && at[i - 1]) CHECK(at[i] > at[i - 1]);
    }
    if (strstr(logged, "/usr/local/cuda-")) CHECK(strstr(logged, "/usr/local/cuda-") > at[3]);
    CHECK(strstr(logged, "/conda/lib/python3.10") == NULL); /* no wheel folder: not tried */
    /* a file that is there but does not load is the reason given */
    snprintf(link, sizeof link, "%s/lib64", p[0]);
    mkdirs(link);
    snprintf(link, sizeof link, "%s/lib64/libgpuk_test_nvrtc.so.13", p[0]);
    fclose(fopen(link, "w"));
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("test_search: cannot load NVRTC: tried ");
    snprintf(link, sizeof link, "folders: %s/lib64/libgpuk_test_nvrtc.so.13: file too short (hint: ", p[0]);
    CHECK_ERROR_MENTIONS(link);
    snprintf(link, sizeof link, "%s/lib64/libgpuk_test_nvrtc.so.13", p[0]);
    unlink(link);
    /* found in a folder: the first in the order wins, .13 before .12 in each */
    snprintf(link, sizeof link, "%s/libgpuk_test_nvrtc.so.12", p[3]);
    CHECK(symlink(libm, link) == 0);
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    snprintf(link, sizeof link, "'%s/libgpuk_test_nvrtc.so.12' is not NVRTC", p[3]);
    CHECK_ERROR_MENTIONS(link);
    snprintf(link, sizeof link, "%s/libgpuk_test_nvrtc.so.12", p[2]);
    CHECK(symlink(libm, link) == 0);
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    snprintf(link, sizeof link, "'%s/libgpuk_test_nvrtc.so.12' is not NVRTC", p[2]); /* 3.12 first */
    CHECK_ERROR_MENTIONS(link);
    snprintf(link, sizeof link, "%s/lib64", p[1]);
    mkdirs(link);
    snprintf(link, sizeof link, "%s/lib64/libgpuk_test_nvrtc.so.12", p[1]);
    CHECK(symlink(libm, link) == 0);
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    snprintf(link, sizeof link, "'%s/lib64/libgpuk_test_nvrtc.so.12' is not NVRTC", p[1]);
    CHECK_ERROR_MENTIONS(link);
    snprintf(link, sizeof link, "%s/lib64/libgpuk_test_nvrtc.so.13", p[1]);
    CHECK(symlink(libm, link) == 0);
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    snprintf(link, sizeof link, "'%s/lib64/libgpuk_test_nvrtc.so.13' is not NVRTC", p[1]);
    CHECK_ERROR_MENTIONS(link);
    /* long folders: the error is cut to fit, counting the rest */
    {
        char longp[400];
        memset(longp, 'x', 300);
        longp[0] = '/';
        longp[300] = 0;
        setenv("CUDA_PATH", longp, 1);
        setenv("CUDA_HOME", longp, 1);
        unsetenv("VIRTUAL_ENV");
        CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
        CHECK_ERROR_MENTIONS("by name, then in ");
        CHECK_ERROR_MENTIONS("more folders");
        CHECK_ERROR_MENTIONS("GPUK_NVRTC_PATH)");
    }
    /* an explicit path is the only place tried */
    setenv("CUDA_HOME", p[1], 1);
    setenv("GPUK_NVRTC_PATH", "/nonexistent/libnvrtc.so.13", 1);
    CHECK_RESULT(search_load(), GPUK_ERR_NO_NVRTC);
    CHECK_ERROR_MENTIONS("cannot load NVRTC (the CUDA runtime compiler) '/nonexistent/libnvrtc.so.13'");
    CHECK(strstr(gpuk_last_error(), "is not NVRTC") == NULL);
    unsetenv("GPUK_NVRTC_PATH");
    for (i = 0; i < 5; i++) {
        if (saved[i][0]) setenv(vars[i], saved[i], 1);
        else unsetenv(vars[i]);
    }
    gpuk_shutdown();
    snprintf(link, sizeof link, "rm -rf '%s'", base);
    CHECK(system(link) == 0);
    return TEST_PASS;
}

/* The pieces of the search: toolkit and Python folders newest version first; the names as
   the error lists them. */
static int test_search_pieces(void) {
    char base[64], path[160], got[16][32], text[200];
    static const char* const names[] = { "cuda-11.8", "cuda-12.4", "cuda-12.10", "cuda-13.0", "cuda-12",
                                         "cuda-x", "cudafoo", "cuda-13.0.1", "python3.9", "python3.12",
                                         "python3.12t", "python3", NULL };
    static const char* const nvrtc_names[] = { GPUK__NVRTC_NAMES, NULL };
    int i, n;
    snprintf(base, sizeof base, "/tmp/gpuk_versions_%ld", (long)getpid());
    CHECK(mkdir(base, 0700) == 0);
    for (i = 0; names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", base, names[i]);
        CHECK(mkdir(path, 0700) == 0);
    }
    n = gpuk__versions(base, "cuda-", got, 16);
    CHECK(n == 5);
    if (n == 5) {
        CHECK(strcmp(got[0], "cuda-13.0") == 0);
        CHECK(strcmp(got[1], "cuda-12") == 0);
        CHECK(strcmp(got[2], "cuda-12.10") == 0);
        CHECK(strcmp(got[3], "cuda-12.4") == 0);
        CHECK(strcmp(got[4], "cuda-11.8") == 0);
    }
    n = gpuk__versions(base, "cuda-", got, 2); /* the newest two */
    CHECK(n == 2 && strcmp(got[0], "cuda-13.0") == 0 && strcmp(got[1], "cuda-12") == 0);
    n = gpuk__versions(base, "python3.", got, 8);
    CHECK(n == 2 && strcmp(got[0], "python3.12") == 0 && strcmp(got[1], "python3.9") == 0);
    CHECK(gpuk__versions("/nonexistent", "cuda-", got, 8) == 0);
    for (i = 0; names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", base, names[i]);
        rmdir(path);
    }
    rmdir(base);
    gpuk__names_short(text, sizeof text, nvrtc_names);
    CHECK(strcmp(text, "libnvrtc.so.13, .12, .11.2, .11.1, .11.0, .10.2") == 0);
    return TEST_PASS;
}

/* Every NVRTC call and every host allocation of a compile, failed in turn: an error, never a
   crash; no program or host memory left behind; then the compile works. */
/* One compile of a templated kernel with options and a header; *out_calls, *out_allocs: the
   NVRTC calls and host allocations it made. */
static gpuk_result sweep_compile(int ptx, long fail_nvrtc, long fail_alloc, long* out_calls,
                                 long* out_allocs) {
    static const char* const exprs[] = { "scale<float>" };
    static const char* const opts[] = { "-DA=1" };
    fake_nvrtc_config cfg;
    gpuk_compile_header h;
    gpuk_compile_desc d = saxpy_desc();
    gpuk_module m = { 7 };
    gpuk_ctx* c;
    gpuk_result r;
    memset(&cfg, 0, sizeof cfg);
    cfg.fail_at = fail_nvrtc;
    cfg.fail_code = fail_nvrtc % 2 ? 1 : 11;
    c = up(&cfg, NULL);
    h.name = "h.h"; h.source = "#define H 1";
    d.source = "template <typename T> __global__ void scale(T* x) {}\n";
    d.name_expressions = exprs; d.num_name_expressions = 1;
    d.options = opts; d.num_options = 1;
    d.headers = &h; d.num_headers = 1;
    d.ptx_only = ptx;
    alloc_calls = 0;
    fail_alloc_at = fail_alloc;
    r = gpuk_module_compile(c, &d, &m);
    fail_alloc_at = 0;
    *out_calls = fake_nv.calls;
    *out_allocs = alloc_calls;
    CHECK(fake_nv.live_programs == 0);
    if (r == GPUK_OK) CHECK(gpuk_module_lowered_name(c, m, "scale<float>") != NULL);
    else {
        CHECK(m.id == 0);
        CHECK(r == GPUK_ERR_NO_NVRTC || r == GPUK_ERR_COMPILE || r == GPUK_ERR_HOST_ALLOC);
        CHECK(gpuk_last_error()[0] != 0);
    }
    down(c);
    return r;
}

/* Every NVRTC call and every host allocation of a compile, failed in turn: an error (or a
   success where the failed query was optional), never a crash; no program or host memory
   left behind. */
static int test_fault_sweep(void) {
    int ptx;
    for (ptx = 0; ptx < 2; ptx++) {
        long calls = 0, nallocs = 0, n, dummy, failed = 0;
        CHECK_OK(sweep_compile(ptx, 0, 0, &calls, &nallocs));
        CHECK(calls >= 10 && nallocs >= 3);
        for (n = 1; n <= calls; n++) failed += sweep_compile(ptx, n, 0, &dummy, &dummy) != GPUK_OK;
        for (n = 1; n <= nallocs; n++) failed += sweep_compile(ptx, 0, n, &dummy, &dummy) != GPUK_OK;
        CHECK(failed >= calls - 3); /* only the optional arch queries and log fetch may fail quietly */
    }
    return TEST_PASS;
}

int main(void) {
    RUN(test_no_nvrtc_names_what_to_install);
    RUN(test_not_nvrtc_or_too_old);
    RUN(test_long_paths);
    RUN(test_compile_error_log);
    RUN(test_options_and_headers_passed);
    RUN(test_device_header_passed);
    RUN(test_cubin_or_ptx_by_arch_list);
    RUN(test_name_expressions);
    RUN(test_cache);
    RUN(test_log_buffer);
    RUN(test_disk_cache);
    RUN(test_search_pieces);
    RUN(test_search);
    RUN(test_fault_sweep);
    return test_summary();
}
