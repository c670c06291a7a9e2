/* tests/unit/unit_custom.c - custom element-wise and reduction kernels (gpuk_elementwise_*,
   gpuk_reduction_*) on the fake driver with the fake NVRTC: the generated source holds the
   expressions and the parameter types, parameter lists refused with a clear error before
   anything is compiled, launch arguments checked (count, kind, bounds, overlap, handles), a
   compile error's log, the cache (the same kernel twice compiles once), the reduction's grid
   fixed by n. No GPU, no toolkit needed.
   cc -std=c99 -I../.. unit_custom.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include "../support/fake_nvrtc.h"
#include <stdlib.h>

static char logged[65536];
static void capture(void* u, gpuk_log_level level, int code, const char* msg) {
    size_t n = strlen(logged);
    (void)u; (void)code;
    snprintf(logged + n, sizeof logged - n, "[%d] %s\n", (int)level, msg);
}

static gpuk_ctx* up(void) {
    gpuk_desc d;
    gpuk_ctx* c = NULL;
    gpuk_shutdown();
    fake_reset(NULL);
    fake_nvrtc_reset(NULL);
    logged[0] = 0;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    d.nvrtc_get_proc = fake_nvrtc_get_proc;
    d.logger.func = capture;
    d.log_level = GPUK_LOG_INFO;
    CHECK_OK(gpuk_init(&d));
    CHECK_OK(gpuk_ctx_create(NULL, &c));
    return c;
}

static void down(gpuk_ctx* c) {
    CHECK_OK(gpuk_ctx_destroy(c));
    CHECK(fake_nv.live_programs == 0);
    fake_gpuk_check_released();
}

static gpuk_elementwise_desc saxpy_desc(void) {
    gpuk_elementwise_desc d;
    memset(&d, 0, sizeof d);
    d.params = "float a, const float* x, float* y";
    d.body = "y[i] = a * x[i] + y[i]";
    d.name = "saxpy";
    return d;
}

static gpuk_buffer make(gpuk_ctx* c, size_t bytes) {
    gpuk_buffer_desc d;
    gpuk_buffer b = { 0 };
    memset(&d, 0, sizeof d);
    d.bytes = bytes;
    CHECK_OK(gpuk_buffer_create(c, &d, &b));
    return b;
}

static int test_elementwise_source_and_launch(void) {
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_elementwise k;
    gpuk_buffer x = make(c, 100 * sizeof(float)), y = make(c, 100 * sizeof(float));
    long before;
    d.preamble = "__device__ float twice(float v) { return 2 * v; }";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK(k.num_params == 3);
    CHECK(strstr(fake_nv.source, "y[i] = a * x[i] + y[i]") != NULL);
    CHECK(strstr(fake_nv.source, "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, "
                                 "unsigned long long gpuk_n_)") != NULL);
    CHECK(strstr(fake_nv.source, "__device__ float twice(float v)") != NULL);
    CHECK(strstr(fake_nv.source, "#line 1 \"saxpy: body\"") != NULL);
    CHECK(strstr(fake_nv.source, "const long long i = gpuk_i_;") != NULL); /* 64-bit index */
    CHECK(strstr(fake_nv.source, "gpuk_i_ += (long long)gridDim.x * 256") != NULL); /* grid-stride */
    before = fake.launches;
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100,
                                     GPUK_ARGV(gpuk_arg_f32(2.0f), gpuk_arg_array(gpuk_at(x, 0)),
                                               gpuk_arg_array(gpuk_at(y, 0)))));
    CHECK(fake.launches == before + 1);
    CHECK(fake.last_grid[0] == 1);
    /* n = 0: checked, nothing launched */
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 0,
                                     GPUK_ARGV(gpuk_arg_f32(2.0f), gpuk_arg_array(gpuk_at(x, 0)),
                                               gpuk_arg_array(gpuk_at(y, 0)))));
    CHECK(fake.launches == before + 1);
    /* the 64-bit types by their CUDA names; no parameters at all */
    d.params = "int64_t* a, const uint64_t* b, uint8_t* c8, raw const unsigned short* t, unsigned s";
    d.body = "a[i] = (long long)b[i] + t[0] + s + c8[i]";
    d.name = "mixed";
    d.preamble = NULL;
    {
        gpuk_elementwise m;
        CHECK_OK(gpuk_elementwise_create(c, &d, &m));
        CHECK(strstr(fake_nv.source, "mixed(long long* a, const unsigned long long* b, unsigned char* c8, "
                                     "const unsigned short* t, unsigned int s, unsigned long long gpuk_n_)") != NULL);
        CHECK_OK(gpuk_elementwise_destroy(c, &m));
        CHECK(m.module.id == 0 && m.kernel.id == 0);
    }
    d.params = " ";
    d.body = "";
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG); /* empty body */
    CHECK_ERROR_MENTIONS("desc.body is NULL or empty");
    d.body = "(void)n";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK(k.num_params == 0);
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 5, NULL, 0));
    down(c);
    return TEST_PASS;
}

static int test_parameter_list_errors(void) {
    static const struct { const char* params; const char* says; } rows[] = {
        { "float a, foo* x", "parameter 1 'foo* x': unknown type 'foo'" },
        { "float a, float a", "'a' is parameter 0's name too" },
        { "float a, const float* x, double* a", "parameter 2 'double* a': 'a' is parameter 0's name too" },
        { "float 1x", "unexpected character '1'" },
        { "float a; float b", "unexpected character ';'" },
        { "float* i", "the name 'i' is taken" },
        { "const double* n", "the name 'n' is taken" },
        { "float* gpuk_out_", "the name 'gpuk_out_' is taken (names starting gpuk_ are gpuk's)" },
        { "float* while", "the name 'while' is taken" },
        { "float a,", "parameter 1 is empty" },
        { ",float a", "parameter 0 is empty" },
        { "float", "has no name" },
        { "float*", "has no name" },
        { "unsigned long long", "has no name" },
        { "x", "has no name" },
        { "const * p", "has no type" },
        { "float** p", "pointers to pointers" },
        { "float* const p", "'const' after the '*'" },
        { "short s", "a scalar of type 'short' is not taken" },
        { "raw float s", "raw is for pointers" },
        { "long x", "unknown type 'long'" },
        { "float a, float b, float c, float d, float e, float f, float g, float h, float j, float k, "
          "float l, float m, float o, float p, float q, float r, float s", "more than 16 parameters" },
    };
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_reduction_desc rd;
    gpuk_elementwise k;
    gpuk_reduction rk;
    size_t i;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        d.params = rows[i].params;
        CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
        if (!strstr(gpuk_last_error(), rows[i].says))
            fprintf(stderr, "  params \"%s\": wanted \"%s\"\n", rows[i].params, rows[i].says);
        CHECK_ERROR_MENTIONS(rows[i].says);
        CHECK_ERROR_MENTIONS("gpuk_elementwise_create: desc.params");
        CHECK(k.module.id == 0 && k.kernel.id == 0);
    }
    d = saxpy_desc();
    d.params = NULL;
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.params is NULL");
    d = saxpy_desc();
    d.name = "9lives";
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.name '9lives' is not a C identifier");
    d.name = "gpuk_mine";
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    d = saxpy_desc();
    d._end_canary = 1;
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("canaries");
    d = saxpy_desc();
    d.num_options = 1;
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    /* a reduction's own fields */
    memset(&rd, 0, sizeof rd);
    rd.params = "const float* x";
    rd.map = "x[i]";
    rd.reduce = "a + b";
    rd.identity = "0";
    rd.type = "short";
    CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.type 'short' is not a result type");
    rd.type = "float3";
    CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
    rd.type = "float";
    rd.identity = NULL;
    CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.identity is NULL or empty");
    rd.identity = "0";
    rd.map = "  ";
    CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.map is NULL or empty");
    rd.map = "x[i]";
    rd.params = "const float* x, float* x";
    CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_reduction_create: desc.params");
    CHECK(fake_nv.compiles == 0); /* nothing reached NVRTC */
    CHECK(fake_nv.calls == 0);    /* not even loaded */
    down(c);
    return TEST_PASS;
}

static int test_argument_errors(void) {
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_elementwise k, zero;
    gpuk_buffer x = make(c, 100 * sizeof(float)), y = make(c, 100 * sizeof(float));
    gpuk_buffer small = make(c, 10 * sizeof(float)), both = make(c, 200 * sizeof(float));
    gpuk_arg a[3];
    long before;
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    a[0] = gpuk_arg_f32(2.0f);
    a[1] = gpuk_arg_array(gpuk_at(x, 0));
    a[2] = gpuk_arg_array(gpuk_at(y, 0));
    before = fake.launches;
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 2), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("2 arguments for 3 parameters");
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, NULL, 3), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, NULL, 100, a, 3), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_elementwise_launch(NULL, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_ARG);
    a[0] = gpuk_arg_f64(2.0);
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("args[0] is gpuk_arg_f64; parameter 0 (float) takes gpuk_arg_f32");
    a[0] = gpuk_arg_array(gpuk_at(x, 0));
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("args[0] is a view (gpuk_arg_array); parameter 0 (float)");
    a[0] = gpuk_arg_f32(2.0f);
    a[1] = gpuk_arg_f32(1.0f);
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("parameter 1 (const float*) takes a view (gpuk_arg_array)");
    memset(&a[1], 0, sizeof a[1]);
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("args[1] is no argument (GPUK_ARG_DEFAULT)");
    /* bounds: each view holds n elements from its first */
    a[1] = gpuk_arg_array(gpuk_at(small, 0));
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("args[1] (const float*)");
    a[1] = gpuk_arg_array(gpuk_at(x, 1));
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 99, a, 3));
    a[1] = gpuk_arg_array(gpuk_at(x, 0));
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, (size_t)-1, a, 3), GPUK_ERR_OUT_OF_BOUNDS);
    /* a stale handle */
    {
        gpuk_buffer gone = make(c, 400);
        CHECK_OK(gpuk_buffer_destroy(c, gone));
        a[2] = gpuk_arg_array(gpuk_at(gone, 0));
        CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_HANDLE);
    }
    /* overlap: y written, x read from the same buffer one element later: refused; in place fine */
    a[1] = gpuk_arg_array(gpuk_at(both, 1));
    a[2] = gpuk_arg_array(gpuk_at(both, 0));
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("args[1] and args[2] overlap");
    a[1] = gpuk_arg_array(gpuk_at(both, 100));
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3)); /* apart */
    a[1] = gpuk_arg_array(gpuk_at(both, 0));
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100, a, 3)); /* in place */
    CHECK(fake.launches == before + 3);
    /* a zero struct, and one whose kernel is gone */
    memset(&zero, 0, sizeof zero);
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &zero, 100, NULL, 0), GPUK_ERR_INVALID_HANDLE);
    zero = k;
    CHECK_OK(gpuk_elementwise_destroy(c, &k));
    CHECK(k.kernel.id == 0);
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &zero, 100, a, 3), GPUK_ERR_INVALID_HANDLE);
    CHECK_RESULT(gpuk_elementwise_destroy(c, &zero), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("gpuk_elementwise_destroy");
    down(c);
    return TEST_PASS;
}

/* In place with two element sizes: y (4-byte) written over half of x[i / 2] (8-byte) that
   another thread has still to read. Refused naming both parameters; the same start with one
   element size (float and int) and distinct starts apart stay allowed. */
static int test_in_place_needs_one_element_size(void) {
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_elementwise k;
    gpuk_buffer buf = make(c, 1024 * sizeof(double));
    long before;
    d.params = "float* y, const double* x";
    d.body = "y[i] = (float)x[i]";
    d.name = "narrow";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    before = fake.launches;
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100,
                                         GPUK_ARGV(gpuk_arg_array(gpuk_at(buf, 0)), gpuk_arg_array(gpuk_at(buf, 0)))),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("args[0] and args[1] (float* and const double*) start at the same element");
    CHECK_ERROR_MENTIONS("4 and 8 bytes");
    /* the other way round: a double written over two floats */
    CHECK_OK(gpuk_elementwise_destroy(c, &k));
    d.params = "double* y, const float* x";
    d.body = "y[i] = x[i]";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100,
                                         GPUK_ARGV(gpuk_arg_array(gpuk_at(buf, 0)), gpuk_arg_array(gpuk_at(buf, 0)))),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("(double* and const float*)");
    CHECK(fake.launches == before);
    /* apart: fine */
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100,
                                     GPUK_ARGV(gpuk_arg_array(gpuk_at(buf, 0)), gpuk_arg_array(gpuk_at(buf, 400)))));
    CHECK_OK(gpuk_elementwise_destroy(c, &k));
    /* one element size, two types: in place is fine */
    d.params = "int* y, const float* x";
    d.body = "y[i] = (int)x[i]";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 100,
                                     GPUK_ARGV(gpuk_arg_array(gpuk_at(buf, 0)), gpuk_arg_array(gpuk_at(buf, 0)))));
    CHECK(fake.launches == before + 2);
    /* n = 0 reads and writes nothing: no race to refuse */
    CHECK_OK(gpuk_elementwise_destroy(c, &k));
    d.params = "float* y, const double* x";
    d.body = "y[i] = (float)x[i]";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 0,
                                     GPUK_ARGV(gpuk_arg_array(gpuk_at(buf, 0)), gpuk_arg_array(gpuk_at(buf, 0)))));
    CHECK(fake.launches == before + 2);
    down(c);
    return TEST_PASS;
}

/* Every name the generated CUDA C++ cannot take is refused before compiling, as a parameter
   and as the kernel's name, naming why. */
static int test_taken_names(void) {
    static const char* const names[] = {
        /* CUDA's built-in variables and what the generated code calls */
        "threadIdx", "blockIdx", "gridDim", "blockDim", "warpSize", "atomicAdd", "__syncthreads",
        "__threadfence",
        /* C++ keywords and alternative tokens */
        "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor",
        "xor_eq", "operator", "nullptr", "constexpr", "consteval", "virtual", "private",
        "protected", "public", "class", "template", "typename", "this", "throw", "try", "catch",
        "new", "delete", "namespace", "using", "friend", "mutable", "explicit", "decltype",
        "noexcept", "static_assert", "thread_local", "alignas", "alignof", "char8_t", "wchar_t",
        "co_await", "concept", "requires", "long", "bool", "true", "false", "asm", "export",
        "dynamic_cast", "static_cast", "reinterpret_cast", "const_cast", "typeid", "restrict",
        /* the entry point, the generated source's own names, reserved spellings */
        "main", "i", "n", "raw", "gpuk_acc_", "gpuk_n_", "gpuk_out_", "gpuk_scratch_",
        "gpuk_reduce_", "gpuk_fold_", "gpuk_v_", "gpuk_sm_", "gpuk_w_", "_x", "a__b", "__x"
    };
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_reduction_desc rd;
    gpuk_elementwise k;
    gpuk_reduction rk;
    char params[128];
    size_t j;
    memset(&rd, 0, sizeof rd);
    rd.map = "1";
    rd.reduce = "a + b";
    rd.identity = "0";
    rd.type = "int";
    for (j = 0; j < sizeof names / sizeof names[0]; j++) {
        const char* says = strcmp(names[j], "long") == 0 ? "has no name" : "is taken (";
        snprintf(params, sizeof params, "const float* %s", names[j]);
        d = saxpy_desc();
        d.params = params;
        d.body = "(void)0";
        /* "float* long" reads as a type without a name, refused as such */
        CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
        if (!strstr(gpuk_last_error(), says)) fprintf(stderr, "  parameter '%s' was not refused\n", names[j]);
        CHECK_ERROR_MENTIONS(says);
        rd.params = params;
        rd.name = NULL;
        CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS(says);
        /* the kernel's name: i and n are free there (they are not the kernel's) */
        if (strcmp(names[j], "i") == 0 || strcmp(names[j], "n") == 0) continue;
        d.params = "float* y";
        d.name = names[j];
        CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
        if (!strstr(gpuk_last_error(), "desc.name")) fprintf(stderr, "  name '%s' was not refused\n", names[j]);
        CHECK_ERROR_MENTIONS("desc.name '");
        rd.params = "";
        rd.name = names[j];
        CHECK_RESULT(gpuk_reduction_create(c, &rd, &rk), GPUK_ERR_INVALID_ARG);
    }
    d = saxpy_desc();
    d.params = "const float* threadIdx";
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("the name 'threadIdx' is taken (a name CUDA or the generated code uses)");
    d.params = "float* y";
    d.name = "not";
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("desc.name 'not' is taken (a C++ keyword)");
    CHECK(fake_nv.compiles == 0); /* nothing reached NVRTC */
    /* names close to the taken ones are fine, and a reduction may have parameters a and b:
       its reduce expression sees its own a and b */
    d = saxpy_desc();
    d.params = "const float* nn, const float* ii, float* mainly, float* gpukernel, float* x_";
    d.body = "(void)0";
    d.name = "threadIdx_x";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK_OK(gpuk_elementwise_destroy(c, &k));
    rd.params = "const float* a, const float* b";
    rd.map = "a[i] * b[i]";
    rd.type = "float";
    rd.name = "dot";
    CHECK_OK(gpuk_reduction_create(c, &rd, &rk));
    CHECK(strstr(fake_nv.source, "gpuk_reduce_(float a, float b)") != NULL);
    CHECK(strstr(fake_nv.source, "void dot(const float* a, const float* b, float* gpuk_out_") != NULL);
    CHECK_OK(gpuk_reduction_destroy(c, &rk));
    down(c);
    return TEST_PASS;
}

static int test_raw_views(void) {
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_elementwise k;
    gpuk_buffer table = make(c, 4 * sizeof(double)), out = make(c, 1000 * sizeof(double));
    d.params = "raw const double* table, double* out";
    d.body = "out[i] = table[i % 4]";
    d.name = "lookup";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k));
    CHECK_OK(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 1000,
                                     GPUK_ARGV(gpuk_arg_array(gpuk_at(table, 0)), gpuk_arg_array(gpuk_at(out, 0)))));
    /* a raw view still has its first checked */
    CHECK_RESULT(gpuk_elementwise_launch(c, GPUK_DEFAULT_STREAM, &k, 1000,
                                         GPUK_ARGV(gpuk_arg_array(gpuk_at(table, 5)), gpuk_arg_array(gpuk_at(out, 0)))),
                 GPUK_ERR_OUT_OF_BOUNDS);
    down(c);
    return TEST_PASS;
}

static int test_cache_reuse(void) {
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_elementwise k1, k2, k3;
    CHECK_OK(gpuk_elementwise_create(c, &d, &k1));
    CHECK(fake_nv.compiles == 1);
    CHECK_OK(gpuk_elementwise_create(c, &d, &k2));
    CHECK(fake_nv.compiles == 1); /* the same source: NVRTC skipped */
    CHECK(strstr(logged, "cache hit") != NULL);
    CHECK(k1.module.id != k2.module.id); /* a module each */
    d.body = "y[i] = a * x[i] - y[i]";
    CHECK_OK(gpuk_elementwise_create(c, &d, &k3));
    CHECK(fake_nv.compiles == 2);
    CHECK_OK(gpuk_elementwise_destroy(c, &k1));
    CHECK_OK(gpuk_elementwise_destroy(c, &k2));
    down(c); /* k3 goes with the ctx */
    return TEST_PASS;
}

static int test_compile_error(void) {
    gpuk_ctx* c = up();
    gpuk_elementwise_desc d = saxpy_desc();
    gpuk_elementwise k;
    d.body = "#error the body is wrong";
    CHECK_RESULT(gpuk_elementwise_create(c, &d, &k), GPUK_ERR_COMPILE);
    CHECK_ERROR_MENTIONS("gpuk_elementwise_create: 'saxpy.cu': nvrtcCompileProgram");
    CHECK_ERROR_MENTIONS("the body is wrong");
    CHECK(strstr(logged, "the generated source that failed to compile") != NULL);
    CHECK(strstr(logged, "extern \"C\" __global__ void saxpy(") != NULL);
    CHECK(k.module.id == 0 && k.kernel.id == 0);
    down(c);
    return TEST_PASS;
}

static int test_reduction(void) {
    gpuk_ctx* c = up();
    gpuk_reduction_desc d;
    gpuk_reduction k;
    gpuk_buffer x = make(c, 1000000 * sizeof(float)), out = make(c, sizeof(float));
    gpuk_buffer out8 = make(c, 2 * sizeof(double));
    unsigned grid;
    long before;
    memset(&d, 0, sizeof d);
    d.params = "const float* x";
    d.map = "x[i] * x[i]";
    d.reduce = "a + b";
    d.identity = "0.0f";
    d.type = "float";
    d.name = "sum_squares";
    CHECK_OK(gpuk_reduction_create(c, &d, &k));
    CHECK(strstr(fake_nv.source, "x[i] * x[i]") != NULL);
    CHECK(strstr(fake_nv.source, "a + b") != NULL);
    CHECK(strstr(fake_nv.source, "0.0f") != NULL);
    CHECK(strstr(fake_nv.source, "static __device__ __forceinline__ float gpuk_reduce_(float a, float b)") != NULL);
    CHECK(strstr(fake_nv.source, "extern \"C\" __global__ void sum_squares(const float* x, float* gpuk_out_, "
                                 "unsigned long long gpuk_n_, void* gpuk_scratch_)") != NULL);
    CHECK(strstr(fake_nv.source, "atomicAdd(gpuk_ticket_, 1u) == gridDim.x - 1") != NULL);
    before = fake.launches;
    CHECK_OK(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 0), 1000000,
                                   GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)))));
    grid = fake.last_grid[0];
    CHECK(grid >= 1 && grid <= 4096);
    CHECK_OK(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 0), 1000000,
                                   GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)))));
    CHECK(fake.last_grid[0] == grid); /* fixed by n */
    /* n = 0 launches too: it writes the identity */
    CHECK_OK(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 0), 0,
                                   GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)))));
    CHECK(fake.launches == before + 3);
    CHECK(fake.last_grid[0] == 1);
    /* out: one element of the type, inside its buffer */
    CHECK_RESULT(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 1), 10,
                                       GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)))), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("out");
    CHECK_RESULT(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 0), 1000001,
                                       GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)))), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 0), 10,
                                       GPUK_ARGV(gpuk_arg_f32(1.0f))), GPUK_ERR_INVALID_ARG);
    CHECK_OK(gpuk_reduction_destroy(c, &k));
    CHECK_RESULT(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out, 0), 10,
                                       GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)))), GPUK_ERR_INVALID_HANDLE);
    /* a max-abs over doubles with a scalar parameter and a preamble */
    d.params = "const double* v, double scale";
    d.map = "fabs(v[i]) * scale";
    d.reduce = "fmax(a, b)";
    d.identity = "0.0";
    d.type = "double";
    d.name = "max_abs";
    d.preamble = "/* nothing */";
    CHECK_OK(gpuk_reduction_create(c, &d, &k));
    CHECK(strstr(fake_nv.source, "double gpuk_reduce_(double a, double b)") != NULL);
    CHECK_OK(gpuk_reduction_launch(c, GPUK_DEFAULT_STREAM, &k, gpuk_at(out8, 1), 100,
                                   GPUK_ARGV(gpuk_arg_array(gpuk_at(x, 0)), gpuk_arg_f64(1.0))));
    down(c);
    return TEST_PASS;
}

int main(void) {
    RUN(test_elementwise_source_and_launch);
    RUN(test_parameter_list_errors);
    RUN(test_argument_errors);
    RUN(test_in_place_needs_one_element_size);
    RUN(test_taken_names);
    RUN(test_raw_views);
    RUN(test_cache_reuse);
    RUN(test_compile_error);
    RUN(test_reduction);
    return test_summary();
}
