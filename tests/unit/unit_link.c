/* tests/unit/unit_link.c - gpuk_module_link on the fake driver's linker (and the fake NVRTC for
   compiled inputs): PTX calling a function another input defines, gpuk_device.cuh's library
   (every function it exports, from the text packed in gpuk.h), each input kind by image and
   by file, an NVRTC program compiled with -rdc=true and cached, the linker's log, what is
   refused before the driver, a driver without the linker, and each linker call failing in
   turn with nothing left behind. No GPU, no toolkit needed.
   cc -std=c99 -I../.. unit_link.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/fake_nvrtc.h"
#include <stdlib.h>
#include <unistd.h>

#define PTX_HEAD ".version 6.0\n.target sm_52\n.address_size 64\n"
/* a kernel that calls gpuk_uniform_f32, declared only, as nvcc -rdc / NVRTC -rdc=true leave it */
static const char draw_ptx[] =
    PTX_HEAD
    ".extern .func (.param .b32 func_retval0) gpuk_uniform_f32\n(\n"
    " .param .b64 gpuk_uniform_f32_param_0,\n .param .b64 gpuk_uniform_f32_param_1\n);\n"
    ".visible .entry draw(.param .u64 out, .param .u64 seed)\n{\n ret;\n}\n";
/* a kernel calling helper, and an input defining it */
static const char uses_helper_ptx[] =
    PTX_HEAD ".extern .func helper\n(\n .param .b32 helper_param_0\n);\n"
    ".visible .entry caller(.param .u32 n)\n{\n ret;\n}\n";
static const char helper_ptx[] =
    PTX_HEAD ".visible .func helper(\n .param .b32 helper_param_0\n)\n{\n ret;\n}\n";

/* the functions gpuk_device_lib.cu defines, extern "C" */
static const char* const exported[] = {
    "gpuk_philox4x32_10", "gpuk_u01_f32", "gpuk_u01_f64", "gpuk_box_muller_f32",
    "gpuk_box_muller_f64", "gpuk_uniform_f32", "gpuk_uniform_f64", "gpuk_normal_f32",
    "gpuk_normal_f64", "gpuk_lane_id",
    "gpuk_warp_sum_i32", "gpuk_warp_sum_u32", "gpuk_warp_sum_i64", "gpuk_warp_sum_u64",
    "gpuk_warp_sum_f32", "gpuk_warp_sum_f64", "gpuk_warp_inclusive_scan_i32",
    "gpuk_warp_inclusive_scan_u32", "gpuk_warp_inclusive_scan_i64",
    "gpuk_warp_inclusive_scan_u64", "gpuk_warp_inclusive_scan_f32",
    "gpuk_warp_inclusive_scan_f64", "gpuk_block_sum_i32", "gpuk_block_sum_u32",
    "gpuk_block_sum_i64", "gpuk_block_sum_u64", "gpuk_block_sum_f32", "gpuk_block_sum_f64"
};

static char logged[8192];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)code;
    snprintf(logged + n, sizeof logged - n, "[%d] %s\n", (int)level, msg);
}

static gpuk_ctx* up(const fake_config* cfg) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_shutdown();
    fake_reset(cfg);
    fake_nvrtc_reset(NULL);
    logged[0] = 0;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_get_proc = fake_nvrtc_get_proc;
    d.logger.func = capture;
    d.log_level = GPUK_LOG_DEBUG;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
    return c;
}

static gpuk_link_input image_input(const char* text) {
    gpuk_link_input in;
    memset(&in, 0, sizeof in);
    in.image.ptr = text;
    return in;
}

static int test_declared_function_links_against_gpuk_device(void) {
    gpuk_ctx* c = up(NULL);
    gpuk_link_input in = image_input(draw_ptx);
    gpuk_link_desc d;
    gpuk_module m = { 77 };
    gpuk_kernel k = { 0 };
    char log[512];
    memset(&d, 0, sizeof d);
    d.inputs = &in;
    d.num_inputs = 1;
    d.label = "draw";
    d.log = log;
    d.log_bytes = sizeof log;
    /* without the library the declaration stays undefined: the linker's own code and words */
    CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)218);
    CHECK(m.id == 0);
    CHECK_ERROR_MENTIONS("cuLinkComplete");
    CHECK_ERROR_MENTIONS("module 'draw'");
    CHECK_ERROR_MENTIONS("Undefined reference to 'gpuk_uniform_f32'");
    CHECK(strstr(log, "Undefined reference to 'gpuk_uniform_f32'") != NULL);
    CHECK(strstr(logged, "Undefined reference") != NULL); /* the whole log at GPUK_LOG_ERROR */
    CHECK(fake_live_count(FK_LINK) == 0);
    d.gpuk_device = true;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK(m.id != 0);
    CHECK(strstr(log, "linked 2 inputs") != NULL); /* the info log, with the library counted */
    CHECK_OK(gpuk_kernel_get(c, m, "draw", &k));
    CHECK(fake_live_count(FK_LINK) == 0);
    CHECK_OK(gpuk_module_unload(c, m));
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* Every function the library exports is defined in the PTX gpuk.h packs: a declaration of
   each links only with the library. */
static int test_library_defines_every_export(void) {
    gpuk_ctx* c = up(NULL);
    size_t i;
    for (i = 0; i < sizeof exported / sizeof exported[0]; i++) {
        char text[512];
        gpuk_link_input in;
        gpuk_link_desc d;
        gpuk_module m = { 0 };
        snprintf(text, sizeof text, PTX_HEAD ".extern .func %s\n(\n);\n"
                 ".visible .entry k()\n{\n ret;\n}\n", exported[i]);
        in = image_input(text);
        memset(&d, 0, sizeof d);
        d.inputs = &in;
        d.num_inputs = 1;
        CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)218);
        d.gpuk_device = true;
        CHECK_OK(gpuk_module_link(c, &d, &m));
        if (m.id) CHECK_OK(gpuk_module_unload(c, m));
        else fprintf(stderr, "  %s not defined by the library\n", exported[i]);
    }
    /* and nothing it does not export: a name of the inline header alone stays undefined */
    {
        gpuk_link_input in = image_input(PTX_HEAD ".extern .func gpuk__philox_word\n(\n);\n"
                                         ".visible .entry k()\n{\n ret;\n}\n");
        gpuk_link_desc d;
        gpuk_module m = { 0 };
        memset(&d, 0, sizeof d);
        d.inputs = &in;
        d.num_inputs = 1;
        d.gpuk_device = true;
        CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)218);
    }
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* A fake cubin (fake_elf_entries reads it): a 64-byte ELF64 header, then the names. */
static size_t make_cubin(unsigned char* b, size_t cap, const char* kernel) {
    uint64_t shoff;
    size_t n = 64;
    memset(b, 0, cap);
    memcpy(b, "\x7f" "ELF\x02\x01\x01", 7);
    n += (size_t)snprintf((char*)b + n + 1, cap - n - 1, ".text.%s", kernel) + 2;
    shoff = n;
    memcpy(b + 0x28, &shoff, 8);
    return n;
}

static int test_input_kinds_by_image_and_file(void) {
    gpuk_ctx* c = up(NULL);
    unsigned char cubin[256];
    char archive[512], dir[] = "/tmp/gpuk_link_XXXXXX", ptx_path[300], lib_path[300],
         odd_path[300];
    gpuk_link_input in[3];
    gpuk_link_desc d;
    gpuk_module m = { 0 };
    gpuk_kernel k = { 0 };
    FILE* f;
    size_t cubin_bytes = make_cubin(cubin, sizeof cubin, "from_cubin");
    memset(&d, 0, sizeof d);
    d.inputs = in;
    /* a caller and its callee, in either order; and a cubin (kind detected) beside them */
    in[0] = image_input(uses_helper_ptx);
    in[1] = image_input(helper_ptx);
    memset(&in[2], 0, sizeof in[2]);
    in[2].image.ptr = cubin;
    in[2].image.bytes = cubin_bytes;
    d.num_inputs = 3;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_kernel_get(c, m, "caller", &k));
    CHECK_OK(gpuk_kernel_get(c, m, "from_cubin", &k));
    CHECK_OK(gpuk_module_unload(c, m));
    in[0] = image_input(helper_ptx);
    in[1] = image_input(uses_helper_ptx);
    d.num_inputs = 2;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    /* PTX given with its length and no NUL: copied, and the size passed counts the NUL */
    in[0].image.bytes = strlen(helper_ptx);
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    /* the callee in an archive, detected by its "!<arch>" */
    snprintf(archive, sizeof archive, "!<arch>\n%s", helper_ptx);
    in[0] = image_input(uses_helper_ptx);
    in[1] = image_input(archive);
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    /* missing it: the linker names the function */
    d.num_inputs = 1;
    CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)218);
    CHECK_ERROR_MENTIONS("Undefined reference to 'helper'");
    /* files: the kind from the name's ending, or as given */
    CHECK(mkdtemp(dir) != NULL);
    snprintf(ptx_path, sizeof ptx_path, "%s/helper.ptx", dir);
    snprintf(lib_path, sizeof lib_path, "%s/libhelper.a", dir);
    snprintf(odd_path, sizeof odd_path, "%s/helper.txt", dir);
    CHECK((f = fopen(ptx_path, "w")) != NULL);
    if (f) { fputs(helper_ptx, f); fclose(f); }
    CHECK((f = fopen(lib_path, "w")) != NULL);
    if (f) { fputs(archive, f); fclose(f); }
    CHECK((f = fopen(odd_path, "w")) != NULL);
    if (f) { fputs(helper_ptx, f); fclose(f); }
    d.num_inputs = 2;
    memset(&in[1], 0, sizeof in[1]);
    in[1].path = ptx_path;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    in[1].path = lib_path;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    in[1].path = odd_path;
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("name its kind");
    in[1].kind = GPUK_LINK_PTX;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK_OK(gpuk_module_unload(c, m));
    unlink(ptx_path);
    unlink(lib_path);
    unlink(odd_path);
    rmdir(dir);
    /* a file that is not there: the driver's code and the path, in the input's label */
    in[1].kind = GPUK_LINK_DEFAULT;
    in[1].path = ptx_path;
    in[1].label = "the helper";
    CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)301);
    CHECK_ERROR_MENTIONS("cuLinkAddFile");
    CHECK_ERROR_MENTIONS("input 'the helper'");
    CHECK_ERROR_MENTIONS("helper.ptx");
    /* a cubin that is not one */
    memset(&in[1], 0, sizeof in[1]);
    in[1].image.ptr = "not a cubin at all";
    in[1].kind = GPUK_LINK_CUBIN;
    CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)200);
    CHECK_ERROR_MENTIONS("cuLinkAddData");
    CHECK(fake_live_count(FK_LINK) == 0);
    fake_gpuk_down(c);
    return TEST_PASS;
}

static int test_compiled_input_is_relocatable_and_cached(void) {
    gpuk_ctx* c = up(NULL);
    static const char src[] =
        "extern \"C\" __device__ float gpuk_uniform_f32(unsigned long long, unsigned long long);\n"
        "extern \"C\" __global__ void draw(float* out, unsigned long long seed) {\n"
        "    out[threadIdx.x] = gpuk_uniform_f32(seed, threadIdx.x);\n}\n";
    static const char* const opts[] = { "-DN=4" };
    gpuk_compile_desc cd;
    gpuk_link_input in;
    gpuk_link_desc d;
    gpuk_module m = { 0 }, plain = { 0 };
    gpuk_kernel k = { 0 };
    long compiles;
    memset(&cd, 0, sizeof cd);
    cd.source = src;
    cd.name = "draw.cu";
    cd.options = opts;
    cd.num_options = 1;
    memset(&in, 0, sizeof in);
    in.compile = &cd;
    memset(&d, 0, sizeof d);
    d.inputs = &in;
    d.num_inputs = 1;
    d.gpuk_device = true;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK(strstr(fake_nv.options, "-rdc=true") != NULL);
    CHECK(strstr(fake_nv.options, "-DN=4") != NULL);
    CHECK_OK(gpuk_kernel_get(c, m, "draw", &k));
    CHECK_OK(gpuk_module_unload(c, m));
    /* the same again: from the cache, NVRTC not run */
    compiles = fake_nv.compiles;
    CHECK_OK(gpuk_module_link(c, &d, &m));
    CHECK(fake_nv.compiles == compiles);
    CHECK_OK(gpuk_module_unload(c, m));
    /* gpuk_module_compile of the same desc is another program (no -rdc): compiled anew */
    CHECK_OK(gpuk_module_compile(c, &cd, &plain));
    CHECK(fake_nv.compiles == compiles + 1);
    CHECK(strstr(fake_nv.options, "-rdc") == NULL);
    CHECK_OK(gpuk_module_unload(c, plain));
    /* -rdc=true given already: not added twice */
    {
        static const char* const rdc[] = { "-rdc=true" };
        cd.options = rdc;
        CHECK_OK(gpuk_module_link(c, &d, &m));
        CHECK(strstr(fake_nv.options, "-rdc=true") == strstr(fake_nv.options, "-rdc"));
        CHECK(strstr(strstr(fake_nv.options, "-rdc=true") + 1, "-rdc") == NULL);
        CHECK_OK(gpuk_module_unload(c, m));
    }
    /* a compile error: NVRTC's, as gpuk_module_compile reports it */
    cd.source = "#error no\n";
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_COMPILE);
    CHECK(fake_live_count(FK_LINK) == 0);
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* Refused before the driver's linker is asked: PTX for a newer GPU or driver, an empty image,
   a driver without the linker. */
static int test_refused_before_the_linker(void) {
    gpuk_ctx* c = up(NULL);
    gpuk_link_input in[2];
    gpuk_link_desc d;
    gpuk_module m = { 5 };
    fake_config cfg;
    memset(&d, 0, sizeof d);
    d.inputs = in;
    d.num_inputs = 2;
    in[0] = image_input(helper_ptx);
    in[1] = image_input(".version 6.0\n.target sm_100\n.address_size 64\n"
                        ".visible .entry k()\n{\n ret;\n}\n");
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("sm_100 is newer than the device (sm_90)");
    CHECK(m.id == 0);
    in[1] = image_input(".version 9.9\n.target sm_52\n");
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_DRIVER_TOO_OLD);
    in[1] = image_input("");
    in[1].kind = GPUK_LINK_CUBIN;
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("cubin image is empty");
    CHECK(fake_live_count(FK_LINK) == 0);
    fake_gpuk_down(c);
    /* a driver without the linker: named, and nothing asked of it */
    memset(&cfg, 0, sizeof cfg);
    cfg.missing[0] = "cuLinkAddFile";
    c = up(&cfg);
    in[1] = image_input(uses_helper_ptx);
    CHECK_RESULT(gpuk_module_link(c, &d, &m), GPUK_ERR_DRIVER_TOO_OLD);
    CHECK_ERROR_MENTIONS("lacks cuLinkAddFile");
    fake_gpuk_down(c);
    return TEST_PASS;
}

/* Each linker call failing in turn: its code comes back with its name, the link state is
   destroyed, no module is left; a failed destroy after a good link costs a warning. */
static int test_each_linker_call_failing(void) {
    static const char* const calls[] = { "cuLinkCreate", "cuLinkAddData", "cuLinkComplete",
                                         "cuModuleLoadDataEx", "cuLinkDestroy" };
    size_t i;
    int nth;
    for (i = 0; i < sizeof calls / sizeof calls[0]; i++)
        for (nth = 1; nth <= (strcmp(calls[i], "cuLinkAddData") == 0 ? 3 : 1); nth++) {
            gpuk_ctx* c;
            gpuk_link_input in[2];
            gpuk_link_desc d;
            gpuk_module m = { 9 };
            gpuk_kernel k = { 0 };
            fake_config cfg;
            memset(&cfg, 0, sizeof cfg);
            c = up(NULL);
            memset(&d, 0, sizeof d);
            d.inputs = in;
            d.num_inputs = 2;
            d.gpuk_device = true; /* a third add: the library */
            in[0] = image_input(uses_helper_ptx);
            in[1] = image_input(helper_ptx);
            fake.cfg.fail_name = calls[i];
            fake.cfg.fail_nth = nth;
            fake.cfg.fail_code = 2;
            if (strcmp(calls[i], "cuLinkDestroy") == 0) {
                CHECK_OK(gpuk_module_link(c, &d, &m));
                CHECK(strstr(logged, "cuLinkDestroy failed") != NULL);
                CHECK_OK(gpuk_kernel_get(c, m, "caller", &k));
                CHECK_OK(gpuk_module_unload(c, m));
                CHECK(fake_live_count(FK_LINK) == 1); /* the driver kept it */
                fake.cfg.fail_name = NULL;
                CHECK_OK(gpuk_ctx_destroy(c));
                gpuk_shutdown();
                continue;
            }
            CHECK_RESULT(gpuk_module_link(c, &d, &m), (gpuk_result)2);
            CHECK(m.id == 0);
            CHECK_ERROR_MENTIONS(calls[i]);
            CHECK(fake_live_count(FK_LINK) == 0);
            CHECK(fake_live_count(FK_MODULE) == 0);
            fake.cfg.fail_name = NULL;
            fake_gpuk_down(c);
        }
    return TEST_PASS;
}

int main(void) {
    RUN(test_declared_function_links_against_gpuk_device);
    RUN(test_library_defines_every_export);
    RUN(test_input_kinds_by_image_and_file);
    RUN(test_compiled_input_is_relocatable_and_cached);
    RUN(test_refused_before_the_linker);
    RUN(test_each_linker_call_failing);
    return test_summary();
}
