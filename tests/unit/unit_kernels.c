/* tests/unit/unit_kernels.c - the built-in kernels' host side against the fake driver: every typed
   wrapper rejects bad arguments before any driver call, kernels load lazily (one module per
   kernel, on first use, unloaded at ctx destroy), scratch comes and goes with its stream
   (kept for graphs where a capture used it), a JIT failure names the kernel and the next
   call retries, and the oldest driver gpuk accepts
   loads every kernel's lowered PTX. No GPU needed; the fake never
   runs a kernel, so nothing here says a kernel computes the right thing (tests/gpu/gpu_kernels.c).
   cc -std=c99 -I../.. unit_kernels.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

static const gpuk_stream S = { 0 };
static const gpuk_array Z = { { 0 }, 0 };
static const gpuk_array2d Z2 = { { 0 }, 0, 0, 0, 0 };
static gpuk_ctx* ctx;

static gpuk_buffer buffer(size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .label = "b" }, &b));
    return b;
}

/* One row per public wrapper, from gpuk.h's list of every kernel (a new family needs its
   ROW_ macro, or this does not compile): a zero buffer handle fails with INVALID_HANDLE and no
   driver call. */
static int rows;
#define ROW(call) do { rows++; CHECK_RESULT(call, GPUK_ERR_INVALID_HANDLE); CHECK_ERROR_MENTIONS("handle is zero"); } while (0)
/* one call shape a family, expanded over gpuk.h's list of every kernel (GPUK__KERNEL_LIST) */
#define ROW_FAMILY(fam, name, t) ROW_##fam(gpuk_##name##_##t);
#define ROW_FILL(f) ROW(f(ctx, S, Z, 4, 1))
#define ROW_IOTA(f) ROW(f(ctx, S, Z, 4, 1, 1))
#define ROW_LINSPACE ROW_IOTA
#define ROW_RANDOM ROW_IOTA
#define ROW_COPY_STRIDED(f) ROW(f(ctx, S, Z, 1, Z, 4, 4))
#define ROW_BINARY(f) ROW(f(ctx, S, Z, Z, Z, 4))
#define ROW_DIV ROW_BINARY
#define ROW_DOT ROW_BINARY
#define ROW_AXPY(f) ROW(f(ctx, S, Z, 1, Z, 4))
#define ROW_SCALE ROW_AXPY
#define ROW_UNARY(f) ROW(f(ctx, S, Z, Z, 4))
#define ROW_UNARY_LONG ROW_UNARY
#define ROW_COS2SIN2 ROW_UNARY
#define ROW_SUM ROW_UNARY
#define ROW_MIN ROW_UNARY
#define ROW_MAX ROW_UNARY
#define ROW_ARGMIN ROW_UNARY
#define ROW_ARGMAX ROW_UNARY
#define ROW_NORM2 ROW_UNARY
#define ROW_TO_HALF ROW_UNARY
#define ROW_TO_F32 ROW_UNARY
#define ROW_AXPY_HALF ROW_AXPY
#define ROW_SUM_HALF ROW_UNARY
#define ROW_MIN_HALF ROW_UNARY
#define ROW_MAX_HALF ROW_UNARY
#define ROW_DOT_HALF ROW_BINARY
#define ROW_SUM_AXIS(f) ROW(f(ctx, S, Z, Z2))
#define ROW_MIN_AXIS ROW_SUM_AXIS
#define ROW_MAX_AXIS ROW_SUM_AXIS
#define ROW_ARGMIN_AXIS ROW_SUM_AXIS
#define ROW_ARGMAX_AXIS ROW_SUM_AXIS
#define ROW_SCAN ROW_UNARY
#define ROW_SELU(f) ROW(f(ctx, S, Z, Z, 4, 1, 1))
#define ROW_TRANSPOSE(f) ROW(f(ctx, S, Z, Z, 4, 4))
#define ROW_HISTOGRAM(f) ROW(f(ctx, S, Z, 4, 0, 256, Z, 4))
#define ROW_HISTOGRAM_FLOAT(f) ROW(f(ctx, S, Z, 4, 0, 1, Z, 4))
#define ROW_SORT_KEYS(f) ROW(f(ctx, S, Z, Z, 4, 0, 0, 0))
#define ROW_SORT_PAIRS(f) ROW(f(ctx, S, Z, Z, Z, Z, 4, 0, 0, 0))
#define ROW_GEMM(f) ROW(f(ctx, S, Z2, 1, Z2, 0, Z2, 0, 0))
static const float box[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
#define ROW_STENCIL3X3(f) ROW(f(ctx, S, Z2, Z2, box, GPUK_BOUNDARY_SKIP))
#define ROW_HEAT(f) ROW(f(ctx, S, Z2, Z2, 0.25f))
#define ROW_SELECT_IF(f) ROW(f(ctx, S, Z, Z, Z, 4, GPUK_CMP_LT, 0))
#define ROW_PARTITION_IF ROW_SELECT_IF
#define ROW_SELECT_FLAGGED(f) ROW(f(ctx, S, Z, Z, Z, Z, 4))
#define ROW_COUNT_IF(f) ROW(f(ctx, S, Z, Z, 4, GPUK_CMP_LT, 0))
#define ROW_UNIQUE(f) ROW(f(ctx, S, Z, Z, Z, 4))
#define ROW_RUN_LENGTH_ENCODE(f) ROW(f(ctx, S, Z, Z, Z, Z, 4))

static int test_every_wrapper_rejects_a_zero_handle_before_the_driver(void) {
    long calls;
    int i;
    ctx = fake_gpuk_up(NULL);
    calls = fake.calls;
    GPUK__KERNEL_LIST(ROW_FAMILY)
    /* every kernel has a wrapper, but those a wrapper's launcher runs besides its own */
    for (i = 0; gpuk__builtin_companion[i][0] >= 0; i++) {
        CHECK(gpuk__builtin_companion_of(gpuk__builtin_companion[i][0], -1) >= 0);
        CHECK(strncmp(gpuk__builtin_ptx_of(gpuk__builtin_companion[i][1])->name, "gpuk__", 6) == 0);
    }
    CHECK(rows + i == GPUK__KERNEL_COUNT);
    CHECK(fake.calls == calls);
    CHECK(gpuk_kernels_loaded(ctx) == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static int test_bad_arguments_get_clear_errors_before_the_driver(void) {
    gpuk_buffer f, g, u8, wrapped;
    gpuk_stream other;
    long calls;
    ctx = fake_gpuk_up(NULL);
    f = buffer(64 * 4);
    g = buffer(64 * 4);
    u8 = buffer(64);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &other));
    /* a wrapped allocation at an odd address: misaligned for 4-byte elements */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 32, .wrap = gpuk_buffer_devptr(ctx, f) + 2 }, &wrapped));
    calls = fake.calls;
    CHECK_RESULT(gpuk_add_f32(NULL, S, gpuk_at(f, 0), gpuk_at(f, 0), gpuk_at(f, 0), 4), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("ctx is NULL");
    CHECK_RESULT(gpuk_add_f32(ctx, (gpuk_stream){ 12345 }, gpuk_at(f, 0), gpuk_at(f, 0), gpuk_at(f, 0), 4), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("stream handle");
    /* bounds: 60 + 5 > 64 elements; first past the end; n * 4 passing SIZE_MAX */
    CHECK_RESULT(gpuk_add_f32(ctx, S, gpuk_at(f, 60), gpuk_at(g, 0), gpuk_at(g, 0), 5), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("buffer 'b'");
    CHECK_RESULT(gpuk_fill_f32(ctx, S, gpuk_at(f, 65), 0, 1.0f), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_fill_f64(ctx, S, gpuk_at(f, 0), SIZE_MAX / 4, 1.0), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_sum_f32(ctx, S, gpuk_at(f, 64), gpuk_at(g, 0), 4), GPUK_ERR_OUT_OF_BOUNDS);
    /* misaligned element address */
    CHECK_RESULT(gpuk_fill_f32(ctx, S, gpuk_at(wrapped, 0), 2, 1.0f), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not aligned");
    /* overlap that is not in place */
    CHECK_RESULT(gpuk_add_f32(ctx, S, gpuk_at(f, 1), gpuk_at(f, 0), gpuk_at(g, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(gpuk_scan_inclusive_f32(ctx, S, gpuk_at(f, 2), gpuk_at(f, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_transpose_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 2, 2), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_copy_strided_f32(ctx, S, gpuk_at(f, 0), 1, gpuk_at(f, 3), 1, 8), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_histogram_u8(ctx, S, gpuk_at(f, 0), 4, 0, 256, gpuk_at(f, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("counts and in overlap");
    /* 16-bit floats: elements of 2 bytes, results of 4; conversions never in place (their
       elements differ in size) */
    CHECK_RESULT(gpuk_to_f16_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out and in overlap");
    CHECK_RESULT(gpuk_to_f32_bf16(ctx, S, gpuk_at(f, 0), gpuk_at(f, 8), 8), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_to_f32_f16(ctx, S, gpuk_at(f, 0), gpuk_at(g, 120), 9), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("128 elements of 2 bytes");
    CHECK_RESULT(gpuk_to_f16_f32(ctx, S, gpuk_at(g, 0), gpuk_at(f, 0), 129), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_add_f16(ctx, S, gpuk_at(f, 1), gpuk_at(f, 0), gpuk_at(g, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(gpuk_sum_bf16(ctx, S, gpuk_at(f, 64), gpuk_at(g, 0), 4), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_min_f16(ctx, S, gpuk_at(f, 0), gpuk_at(g, 0), 0), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("n is 0");
    CHECK_RESULT(gpuk_dot_bf16(ctx, S, gpuk_at(f, 0), gpuk_at(g, 0), gpuk_at(g, 127), 2), GPUK_ERR_OUT_OF_BOUNDS);
    /* shape and range rules */
    CHECK_RESULT(gpuk_min_f32(ctx, S, gpuk_at(f, 0), gpuk_at(g, 0), 0), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("n is 0");
    CHECK_RESULT(gpuk_argmax_i32(ctx, S, gpuk_at(f, 0), gpuk_at(g, 0), 0), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_histogram_u8(ctx, S, gpuk_at(f, 0), 0, 0, 256, gpuk_at(u8, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("nbins is 0");
    CHECK_RESULT(gpuk_histogram_u8(ctx, S, gpuk_at(f, 0), 4, 10, 10, gpuk_at(u8, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("empty");
    CHECK_RESULT(gpuk_histogram_i32(ctx, S, gpuk_at(f, 0), 4, INT64_MIN, INT64_MAX, gpuk_at(g, 0), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("wider than 2^40");
    CHECK_RESULT(gpuk_copy_strided_f32(ctx, S, gpuk_at(f, 0), 0, gpuk_at(g, 0), 1, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out_stride is 0");
    CHECK_RESULT(gpuk_copy_strided_f32(ctx, S, gpuk_at(f, 0), 1, gpuk_at(g, 0), SIZE_MAX / 2, 8), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_transpose_f64(ctx, S, gpuk_at(f, 0), gpuk_at(g, 0), SIZE_MAX / 2, 3), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("passes SIZE_MAX");
    CHECK_RESULT(gpuk_random_uniform_f32(ctx, S, gpuk_at(f, 0), 8, 1, UINT64_MAX - 3), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("passes 2^64");
    CHECK(fake.calls == calls);
    CHECK(gpuk_kernels_loaded(ctx) == 0);
    CHECK_OK(gpuk_stream_destroy(ctx, other));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* GEMM's own rules, all checked before any driver call: handles, the shapes agreeing (the
   error names both sizes), each view's row_stride and bounds (whole strided region, without
   overflow: 2^32 x 2^32 is not 0 elements), alignment, and C overlapping A or B. Sizes whose
   products pass SIZE_MAX are rejected, or are empty and do nothing. A and B may share memory;
   m or n = 0 is a valid call that loads and launches nothing. */
#define GEMM32(c, a, ta, b, tb) gpuk_gemm_f32(ctx, S, c, 1.5f, a, ta, b, tb, 0.5f)
#define GEMM64(c, a, ta, b, tb) gpuk_gemm_f64(ctx, S, c, 1.5, a, ta, b, tb, 0.5)
static int test_gemm_bad_arguments_get_clear_errors_before_the_driver(void) {
    gpuk_buffer f, g, wrapped;
    long calls, launches;
    const size_t big = (size_t)1 << 32;
    ctx = fake_gpuk_up(NULL);
    f = buffer(1024 * 8);
    g = buffer(1024 * 8);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4096, .wrap = gpuk_buffer_devptr(ctx, f) + 2 }, &wrapped));
    /* the control: C (17 x 23) = A (17 x 11) B (11 x 23), C in g, A and B both in f (may overlap) */
    launches = fake.launches;
    CHECK_OK(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 5, 11, 23, 0), 0));
    CHECK_OK(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 11, 17, 0), 1, gpuk_at2d(f, 0, 23, 11, 0), 1));
    CHECK_OK(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 23, 11, 0), 1));
    /* batched: products a block apart; side by side within rows of C */
    CHECK_OK(gpuk_gemm_batched_f32(ctx, S, gpuk_at2d(g, 0, 4, 5, 0), 20, 1.5f, gpuk_at2d(f, 0, 4, 3, 0), 12, 0,
                                   gpuk_at2d(f, 500, 3, 5, 0), 0, 0, 0.5f, 50));
    CHECK_OK(gpuk_gemm_batched_f32(ctx, S, gpuk_at2d(g, 0, 4, 5, 50), 5, 1.5f, gpuk_at2d(f, 0, 4, 3, 0), 12, 0,
                                   gpuk_at2d(f, 500, 3, 5, 0), 15, 0, 0.5f, 10));
    CHECK(fake.launches > launches);
    calls = fake.calls;
    /* handles */
    CHECK_RESULT(gpuk_gemm_f32(NULL, S, gpuk_at2d(g, 0, 17, 23, 0), 1, gpuk_at2d(f, 0, 17, 11, 0), 0,
                               gpuk_at2d(f, 0, 11, 23, 0), 0, 0), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("ctx is NULL");
    CHECK_RESULT(gpuk_gemm_f64(ctx, (gpuk_stream){ 12345 }, gpuk_at2d(g, 0, 17, 23, 0), 1, gpuk_at2d(f, 0, 17, 11, 0), 0,
                               gpuk_at2d(f, 0, 11, 23, 0), 0, 0), GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("stream handle");
    CHECK_RESULT(GEMM32(gpuk_at2d(Z.buffer, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("handle is zero");
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(Z.buffer, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("handle is zero");
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(Z.buffer, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_HANDLE);
    CHECK_ERROR_MENTIONS("handle is zero");
    /* shapes: op(A)'s k against op(B)'s, C's rows against op(A)'s, C's cols against op(B)'s */
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 13, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("11");
    CHECK_ERROR_MENTIONS("13");
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 1, gpuk_at2d(f, 0, 17, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG); /* op(A) = A^T is 11 x 17: k 17 against B's 17 rows fits, m 11 does not */
    CHECK_ERROR_MENTIONS("11");
    CHECK_ERROR_MENTIONS("17");
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 19, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("19");
    CHECK_ERROR_MENTIONS("17");
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 29, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("29");
    CHECK_ERROR_MENTIONS("23");
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 1),
                 GPUK_ERR_INVALID_ARG); /* op(B) = B^T is 23 x 11 */
    CHECK_ERROR_MENTIONS("23");
    /* trans_a and trans_b: GPUK_OP_N or GPUK_OP_T, nothing else, on every GEMM call */
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 2, gpuk_at2d(f, 0, 11, 23, 0), GPUK_OP_N),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("trans_a is 2");
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 11, 17, 0), GPUK_OP_T, gpuk_at2d(f, 0, 11, 23, 0), 2),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("trans_b is 2");
    CHECK_RESULT(gpuk_gemm_tf32(ctx, S, gpuk_at2d(g, 0, 17, 23, 0), 1.0f, gpuk_at2d(f, 0, 17, 11, 0), 0xFFFFFFFFu,
                                gpuk_at2d(f, 0, 11, 23, 0), GPUK_OP_N, 0.0f), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("trans_a is 4294967295");
    CHECK_RESULT(gpuk_gemm_batched_f64(ctx, S, gpuk_at2d(g, 0, 4, 5, 0), 20, 1.0, gpuk_at2d(f, 0, 4, 3, 0), 12, GPUK_OP_N,
                                       gpuk_at2d(f, 500, 3, 5, 0), 0, 2, 0.0, 5), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("trans_b is 2");
    CHECK_RESULT(gpuk_gemm_batched_tf32(ctx, S, gpuk_at2d(g, 0, 4, 5, 0), 20, 1.0f, gpuk_at2d(f, 0, 4, 3, 0), 12, 2,
                                        gpuk_at2d(f, 500, 3, 5, 0), 0, GPUK_OP_N, 0.0f, 5), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("trans_a is 2");
    CHECK_RESULT(gpuk_gemm_batched_f32(ctx, S, gpuk_at2d(g, 0, 4, 5, 0), 20, 1.0f, gpuk_at2d(f, 0, 4, 3, 0), 12, GPUK_OP_N,
                                       gpuk_at2d(f, 500, 3, 5, 0), 0, 2, 0.0f, 5), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("GPUK_OP_T");
    /* views: row_stride below cols, outside the buffer, misaligned */
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 22), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("row_stride");
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 10), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("row_stride");
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 2048 - 17 * 23 + 1, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0,
                        gpuk_at2d(f, 0, 11, 23, 0), 0), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("buffer 'b'");
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 100), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_OUT_OF_BOUNDS); /* 16 rows of 100 pass 1024 doubles */
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(f, 2048 - 11 * 23 + 1, 11, 23, 0), 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 17, 23, 0), gpuk_at2d(wrapped, 0, 17, 11, 0), 0, gpuk_at2d(f, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not aligned");
    /* C overlapping A or B (A and B may overlap each other, as in the control above) */
    CHECK_RESULT(GEMM32(gpuk_at2d(f, 100, 17, 23, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(g, 0, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(GEMM64(gpuk_at2d(f, 0, 17, 23, 0), gpuk_at2d(g, 0, 17, 11, 0), 0, gpuk_at2d(f, 17 * 23 - 1, 11, 23, 0), 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(GEMM32(gpuk_at2d(f, 0, 17, 11, 0), gpuk_at2d(f, 0, 17, 11, 0), 0, gpuk_at2d(g, 0, 11, 11, 0), 0),
                 GPUK_ERR_INVALID_ARG); /* C is A */
    CHECK_ERROR_MENTIONS("overlap");
    /* batched: the last product past the buffer, strides that pass SIZE_MAX, C's products
       sharing elements (stride_c below a product's extent, not side by side in rows) */
#define BATCH32(c, sc, a, sa, b, sb, n) gpuk_gemm_batched_f32(ctx, S, c, sc, 1.5f, a, sa, 0, b, sb, 0, 0.5f, n)
    CHECK_RESULT(BATCH32(gpuk_at2d(g, 0, 4, 5, 0), 20, gpuk_at2d(f, 0, 4, 3, 0), 12, gpuk_at2d(f, 500, 3, 5, 0), 0, 200),
                 GPUK_ERR_OUT_OF_BOUNDS); /* C's 200th product starts at element 3980 of 2048 */
    CHECK_ERROR_MENTIONS("from element 3980");
    CHECK_RESULT(BATCH32(gpuk_at2d(g, 0, 4, 5, 0), 20, gpuk_at2d(f, 0, 4, 3, 0), (size_t)1 << 62, gpuk_at2d(f, 500, 3, 5, 0), 0, 5),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("SIZE_MAX");
    CHECK_RESULT(BATCH32(gpuk_at2d(g, 0, 4, 5, 0), 19, gpuk_at2d(f, 0, 4, 3, 0), 12, gpuk_at2d(f, 500, 3, 5, 0), 0, 3),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("share elements");
    CHECK_RESULT(BATCH32(gpuk_at2d(g, 0, 4, 5, 50), 5, gpuk_at2d(f, 0, 4, 3, 0), 12, gpuk_at2d(f, 500, 3, 5, 0), 15, 11),
                 GPUK_ERR_INVALID_ARG); /* side by side, but the 11th passes the row stride of 50 */
    CHECK_ERROR_MENTIONS("share elements");
    CHECK_RESULT(BATCH32(gpuk_at2d(f, 400, 4, 5, 0), 20, gpuk_at2d(f, 0, 4, 3, 0), 12, gpuk_at2d(g, 0, 3, 5, 0), 0, 40),
                 GPUK_ERR_INVALID_ARG); /* the 40 C products reach A's 40 */
    CHECK_ERROR_MENTIONS("overlap");
    /* sizes near SIZE_MAX: 2^32 x 2^32 elements (2^64: 0 if multiplied unchecked), m n k = 2^64 */
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, big, big, 0), gpuk_at2d(f, 0, big, 0, 0), 0, gpuk_at2d(f, 0, 0, big, 0), 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, (size_t)1 << 22, (size_t)1 << 21, 0), gpuk_at2d(f, 0, (size_t)1 << 22, (size_t)1 << 21, 0), 0,
                        gpuk_at2d(f, 0, (size_t)1 << 21, (size_t)1 << 21, 0), 0), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(GEMM32(gpuk_at2d(g, 0, 0, SIZE_MAX, 0), gpuk_at2d(f, 0, 0, 7, 0), 0, gpuk_at2d(f, 0, 7, SIZE_MAX, 0), 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(GEMM64(gpuk_at2d(g, 0, SIZE_MAX, 3, 0), gpuk_at2d(f, 0, SIZE_MAX, 0, 0), 0, gpuk_at2d(f, 0, 0, 3, 0), 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK(fake.calls == calls);
    /* empty results: valid, and nothing loads or launches, however large the other sizes */
    launches = fake.launches;
    CHECK_OK(GEMM32(gpuk_at2d(g, 0, SIZE_MAX, 0, 0), gpuk_at2d(f, 0, SIZE_MAX, 0, 0), 0, gpuk_at2d(f, 0, 0, 0, 0), 0));
    CHECK_OK(GEMM64(gpuk_at2d(g, 0, 0, SIZE_MAX, 0), gpuk_at2d(f, 0, 0, 0, 0), 0, gpuk_at2d(f, 0, 0, SIZE_MAX, 0), 0));
    CHECK_OK(GEMM32(gpuk_at2d(g, 0, 0, 5, 0), gpuk_at2d(f, 0, 7, 0, 0), 1, gpuk_at2d(f, 0, 7, 5, 0), 0));
    CHECK(fake.launches == launches);
    CHECK_OK(gpuk_buffer_destroy(ctx, wrapped));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* First use of a kernel loads its module, later uses do not; n = 0 validates and loads nothing
   (except a sum, which still writes its 0); ctx destroy unloads them (fake_all_released). */
static int test_kernels_load_lazily_one_module_each(void) {
    gpuk_buffer f;
    long launches;
    ctx = fake_gpuk_up(NULL);
    f = buffer(1024);
    CHECK_OK(gpuk_add_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), gpuk_at(f, 0), 0));
    CHECK(gpuk_kernels_loaded(ctx) == 0 && fake_live_count(FK_MODULE) == 0);
    launches = fake.launches;
    CHECK_OK(gpuk_add_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), gpuk_at(f, 0), 64));
    CHECK(gpuk_kernels_loaded(ctx) == 1 && fake_live_count(FK_MODULE) == 1);
    CHECK_OK(gpuk_add_f32(ctx, S, gpuk_at(f, 64), gpuk_at(f, 64), gpuk_at(f, 64), 64));
    CHECK(gpuk_kernels_loaded(ctx) == 1 && fake_live_count(FK_MODULE) == 1);
    CHECK(fake.launches == launches + 2);
    CHECK_OK(gpuk_sum_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 1), 0));
    CHECK_OK(gpuk_scan_exclusive_u32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 100));
    CHECK_OK(gpuk_histogram_u8(ctx, S, gpuk_at(f, 0), 16, 0, 256, gpuk_at(f, 128 * 4), 100));
    CHECK(gpuk_kernels_loaded(ctx) == 4 && fake_live_count(FK_MODULE) == 4);
    CHECK(fake.launches == launches + 5);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The scratch a stream's reductions use is freed with the stream, and the ctx's with the ctx. */
static int test_scratch_lives_with_its_stream(void) {
    gpuk_buffer f;
    gpuk_stream s;
    int allocs;
    ctx = fake_gpuk_up(NULL);
    f = buffer(4096);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    allocs = fake_live_count(FK_ALLOC);
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK(fake_live_count(FK_ALLOC) == allocs + 1);
    CHECK_OK(gpuk_dot_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), gpuk_at(f, 1), 1000));
    CHECK(fake_live_count(FK_ALLOC) == allocs + 1);
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK(fake_live_count(FK_ALLOC) == allocs);
    CHECK_OK(gpuk_sum_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK(fake_live_count(FK_ALLOC) == allocs + 1);
    fake_gpuk_down(ctx); /* frees the ctx's scratch: fake_all_released */
    return TEST_PASS;
}

/* A regrowth whose cuMemFree of the old area fails reports it and keeps the old area (still
   allocated, still used by the next calls) instead of forgetting it; once the driver frees
   again, the regrowth goes through, and ctx destroy releases everything. */
static int test_scratch_kept_when_its_free_fails(void) {
    gpuk_buffer f;
    int allocs;
    ctx = fake_gpuk_up(NULL);
    f = buffer(4096);
    CHECK_OK(gpuk_kernels_reserve(ctx, S, 1000));
    allocs = fake_live_count(FK_ALLOC);
    fake.cfg.fail_name = "cuMemFree";
    CHECK_RESULT(gpuk_kernels_reserve(ctx, S, (size_t)1 << 26), 1);
    CHECK_ERROR_MENTIONS("cuMemFree");
    CHECK(fake_live_count(FK_ALLOC) == allocs);
    fake.cfg.fail_name = NULL;
    CHECK_OK(gpuk_sum_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK_OK(gpuk_kernels_reserve(ctx, S, (size_t)1 << 26));
    CHECK(fake_live_count(FK_ALLOC) == allocs);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A failed JIT names the kernel and its log; nothing is kept, and the next call tries again. */
static int test_jit_failure_names_the_kernel_and_retries(void) {
    fake_config cfg;
    gpuk_buffer f;
    memset(&cfg, 0, sizeof cfg);
    cfg.jit_code = 218;
    cfg.jit_log = "ptxas fatal   : out of registers";
    ctx = fake_gpuk_up(&cfg);
    f = buffer(1024);
    CHECK_RESULT(gpuk_exp_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 16), 218);
    CHECK_ERROR_MENTIONS("gpuk_exp_f32");
    CHECK_ERROR_MENTIONS("out of registers");
    CHECK(gpuk_kernels_loaded(ctx) == 0);
    fake.cfg.jit_code = 0;
    CHECK_OK(gpuk_exp_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 16));
    CHECK(gpuk_kernels_loaded(ctx) == 1);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Every kernel's lowered PTX loads on the oldest driver gpuk accepts (CUDA 10.0): its .version
   needs nothing newer, and a scan (the highest floor, PTX 6.0) and an add run there. */
static int test_oldest_supported_driver_runs_every_kernel(void) {
    fake_config cfg;
    gpuk_buffer f;
    int i, lowest = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 10000;
    ctx = fake_gpuk_up(&cfg);
    f = buffer(1024);
    for (i = 0; i < GPUK__KERNEL_COUNT; i++) {
        int v = gpuk__builtin_table[i].version;
        CHECK(gpuk__ptx_needs_cuda(v / 10, v % 10) <= 10000);
        lowest += v <= 42;
    }
    CHECK(lowest > GPUK__KERNEL_COUNT / 2); /* most need nothing newer than PTX 4.2 (CUDA 7.0) */
    CHECK_OK(gpuk_add_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), gpuk_at(f, 0), 16));
    CHECK_OK(gpuk_scan_inclusive_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 16));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A variant is loaded where the device has its .target (f64 GEMM: sm_80), the baseline
   elsewhere; either way the call is the same. */
static int test_variant_chosen_by_compute_capability(void) {
    int cc;
    for (cc = 6; cc <= 8; cc += 2) {
        fake_config cfg;
        gpuk_buffer f;
        const fake_module* m;
        memset(&cfg, 0, sizeof cfg);
        cfg.cc_major = cc;
        ctx = fake_gpuk_up(&cfg);
        f = buffer(8192 * 8);
        CHECK_OK(gpuk_gemm_f64(ctx, S, gpuk_at2d(f, 0, 40, 30, 0), 1, gpuk_at2d(f, 4096, 40, 20, 0),
                               0, gpuk_at2d(f, 2048, 20, 30, 0), 0, 0));
        m = (const fake_module*)gpuk__builtin_of(ctx)->module[GPUK__K_GEMM_F64];
        CHECK(m && (strstr(m->text, "gpuk_gemm_f64__sm80") != NULL) == (cc >= 8));
        CHECK(m && strstr(m->text, cc >= 8 ? ".target sm_80" : ".target sm_52") != NULL);
        fake_gpuk_down(ctx);
    }
    return TEST_PASS;
}

/* The GEMM the device runs, by compute capability, driver and kernels_max_sm: the sm_90a TF32
   variant (architecture-specific: wgmma exists on 9.0 alone) only on exactly 9.0 with a driver
   of CUDA 12.0 or newer (its PTX 8.0) and kernels_max_sm 0 or >= 90; elsewhere the sm_80 one, or
   the baseline before sm_80. The f64 sm_90 variant stays on 9.0 and newer (10.0, 12.0). Each
   call loads what was picked (the fake JIT, like the real one, refuses sm_90a PTX on another
   compute capability), and the GEMM tile follows the variant. */
static int test_arch_specific_variant_only_on_its_compute_capability(void) {
    static const struct {
        int major, minor, driver;
        uint32_t max_sm;
        const char *tf32, *f64;
    } rows[] = {
        { 9, 0, 13000, 0, "gpuk_gemm_tf32__sm90a", "gpuk_gemm_f64__sm90" },
        { 9, 0, 12000, 0, "gpuk_gemm_tf32__sm90a", "gpuk_gemm_f64__sm90" },
        { 9, 0, 13000, 90, "gpuk_gemm_tf32__sm90a", "gpuk_gemm_f64__sm90" },
        { 9, 0, 13000, 80, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm80" },
        { 9, 0, 13000, 52, "gpuk_gemm_tf32", "gpuk_gemm_f64" },
        { 9, 0, 11080, 0, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm90" }, /* PTX 7.8 yes, 8.0 no */
        { 8, 0, 13000, 0, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm80" },
        { 8, 9, 13000, 0, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm80" },
        { 10, 0, 13000, 0, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm90" },
        { 12, 0, 13000, 0, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm90" },
        { 12, 0, 13000, 100, "gpuk_gemm_tf32__sm80", "gpuk_gemm_f64__sm90" },
        { 7, 5, 13000, 0, "gpuk_gemm_tf32", "gpuk_gemm_f64" },
    };
    size_t i;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const int ids[2] = { GPUK__K_GEMM_TF32, GPUK__K_GEMM_F64 };
        const char* want[2];
        fake_config cfg;
        gpuk_buffer f;
        int j;
        want[0] = rows[i].tf32;
        want[1] = rows[i].f64;
        memset(&cfg, 0, sizeof cfg);
        cfg.cc_major = rows[i].major;
        cfg.cc_minor = rows[i].minor;
        cfg.version = rows[i].driver;
        ctx = fake_gpuk_up_desc(&cfg, &(gpuk_ctx_desc){ .kernels_max_sm = rows[i].max_sm });
        f = buffer((size_t)1 << 20);
        CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, 40, 30, 0), 1, gpuk_at2d(f, 4096, 40, 20, 0), 0,
                                gpuk_at2d(f, 8192, 20, 30, 0), 0, 0));
        CHECK_OK(gpuk_gemm_f64(ctx, S, gpuk_at2d(f, 0, 40, 30, 0), 1, gpuk_at2d(f, 4096, 40, 20, 0), 0,
                               gpuk_at2d(f, 8192, 20, 30, 0), 0, 0));
        /* the sm_90 FP64 variant's stages are in dynamic shared memory past 48 KB (the fake
           launch fails unless cuFuncSetAttribute allowed it first); the others have none */
        CHECK(fake.last_smem == (strstr(rows[i].f64, "__sm90") ? (unsigned)GPUK__GEMM_F64_SMEM : 0u));
        /* and 128 threads a block (2 x 2 warps of a 128 x 64 tile), the others 256 */
        CHECK(fake.last_block[0] == (strstr(rows[i].f64, "__sm90") ? (unsigned)GPUK__GEMM_F64_THREADS : 256u));
        for (j = 0; j < 2; j++) {
            const gpuk__builtin_ptx* p = gpuk__builtin_pick(ctx, ids[j]);
            const fake_module* m = (const fake_module*)gpuk__builtin_of(ctx)->module[ids[j]];
            char entry[64];
            snprintf(entry, sizeof entry, ".entry %s(", want[j]);
            if (strcmp(p->name, want[j]) != 0)
                fprintf(stderr, "  sm_%d%d, driver %d, kernels_max_sm %u: %s, want %s\n", rows[i].major,
                        rows[i].minor, rows[i].driver, rows[i].max_sm, p->name, want[j]);
            CHECK(strcmp(p->name, want[j]) == 0);
            CHECK(p->arch_specific == (strstr(want[j], "__sm90a") != NULL));
            CHECK(m && strstr(m->text, entry) != NULL);
            CHECK(m && strstr(m->text, p->arch_specific ? ".target sm_90a\n" : ".target sm_") != NULL);
        }
        /* FP64's tile: 128 x 128 with tensor cores on sm_80, 128 x 64 on sm_90 and newer, 64 x
           64 for the SIMT baseline; TF32 128 x 128 */
        {
            size_t cols = 0;
            CHECK(gpuk__gemm_tile(gpuk__builtin_pick(ctx, GPUK__K_GEMM_F64), 8, &cols) ==
                  (strstr(rows[i].f64, "__sm") ? 128u : 64u));
            CHECK(cols == (strstr(rows[i].f64, "__sm90") ? 64u : strstr(rows[i].f64, "__sm") ? 128u : 64u));
            CHECK(gpuk__gemm_tile(gpuk__builtin_pick(ctx, GPUK__K_GEMM_TF32), 4, &cols) == 128u && cols == 128u);
        }
        fake_gpuk_down(ctx);
    }
    return TEST_PASS;
}

/* The pick's rules on a made-up list (gpuk.h has no kernel with both an sm_90 and an sm_90a
   variant yet): sm_90a beats sm_90 on 9.0 in either list order, never runs elsewhere (8.9,
   10.0, 12.0: the highest plain target the device has instead), needs kernels_max_sm >= 90 and
   a driver of CUDA 12.0; other kernels' variants are not taken. */
static int test_variant_pick_rules(void) {
    static const char* const none[] = { 0 };
    static const gpuk__builtin_ptx base = { "k", none, 0, 0, 42, 52, 0, -1, 0 };
#define V(kernel, name, version, target, arch) { kernel, { name, none, 0, 0, version, target, arch, -1, 0 } }
    static const gpuk__builtin_variant lists[2][6] = {
        { V(3, "k__sm80", 70, 80, 0), V(3, "k__sm90a", 80, 90, 1), V(3, "k__sm90", 78, 90, 0),
          V(4, "other__sm90a", 80, 90, 1), V(3, "k__sm100a", 86, 100, 1), { -1, { 0, 0, 0, 0, 0, 0, 0, -1, 0 } } },
        { V(4, "other__sm90a", 80, 90, 1), V(3, "k__sm90", 78, 90, 0), V(3, "k__sm100a", 86, 100, 1),
          V(3, "k__sm90a", 80, 90, 1), V(3, "k__sm80", 70, 80, 0), { -1, { 0, 0, 0, 0, 0, 0, 0, -1, 0 } } },
    };
#undef V
    static const struct { int cc, max_sm, driver; const char* want; } rows[] = {
        { 90, 0, 13000, "k__sm90a" }, { 90, 90, 12000, "k__sm90a" }, { 90, 0, 11080, "k__sm90" },
        { 90, 89, 13000, "k__sm80" }, { 90, 52, 13000, "k" }, { 89, 0, 13000, "k__sm80" },
        { 100, 0, 13000, "k__sm100a" }, { 100, 90, 13000, "k__sm90" }, { 103, 0, 13000, "k__sm90" },
        { 120, 0, 13000, "k__sm90" }, { 100, 0, 12080, "k__sm100a" }, { 100, 0, 12060, "k__sm90" },
        { 80, 0, 11000, "k__sm80" }, { 75, 0, 13000, "k" },
    };
    size_t i, l;
    for (l = 0; l < 2; l++)
        for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            const gpuk__builtin_ptx* p = gpuk__variant_pick(&base, lists[l], 3, rows[i].cc, rows[i].max_sm, rows[i].driver);
            if (strcmp(p->name, rows[i].want) != 0)
                fprintf(stderr, "  list %zu, cc %d, max_sm %d, driver %d: %s, want %s\n", l, rows[i].cc,
                        rows[i].max_sm, rows[i].driver, p->name, rows[i].want);
            CHECK(strcmp(p->name, rows[i].want) == 0);
        }
    return TEST_PASS;
}

/* A scan block prefetches the tile `ahead` tiles on into L2 (gpuk__scan_ahead): 2.5 tiles a
   multiprocessor for 4-byte types, 2 for 8-byte, never more than a quarter of L2 in tiles of
   32 KiB, none where the L2 size is unknown; the kernel gets that number as its sixth argument,
   and the tiles its scratch holds (at least the first size, 10239) as its seventh. */
static int test_scan_prefetch_distance(void) {
    gpuk_device_info h100, jetson, unknown;
    fake_config cfg;
    gpuk_buffer f;
    uint32_t got;
    uint64_t capacity;
    memset(&h100, 0, sizeof h100);
    h100.sm_count = 132;
    h100.l2_bytes = 50 << 20;
    jetson = unknown = h100;
    jetson.sm_count = 16;
    jetson.l2_bytes = 4 << 20;
    unknown.l2_bytes = 0;
    CHECK(gpuk__scan_ahead(&h100, 4) == 330 && gpuk__scan_ahead(&h100, 8) == 264);
    CHECK(gpuk__scan_ahead(&jetson, 4) == 32 && gpuk__scan_ahead(&jetson, 8) == 32);
    CHECK(gpuk__scan_ahead(&unknown, 4) == 0);
    memset(&cfg, 0, sizeof cfg);
    cfg.l2_bytes = 50 << 20; /* the fake has 132 multiprocessors */
    ctx = fake_gpuk_up(&cfg);
    f = buffer(1 << 20);
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 1000));
    memcpy(&got, fake.last_args[4], 4);
    CHECK(got == 330);
    memcpy(&capacity, fake.last_args[5], 8);
    CHECK(capacity == (GPUK__SCRATCH_MIN - GPUK__SCRATCH_SCAN) / GPUK__SCAN_STATUS_BYTES);
    CHECK_OK(gpuk_scan_exclusive_f64(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 1000));
    memcpy(&got, fake.last_args[4], 4);
    CHECK(got == 264);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Inside a CUDA graph capture nothing may load a module or allocate: a built-in that would
   (first use, scratch missing or too small) fails with GPUK_ERR_CAPTURING before the driver is
   asked, naming what to prepare; once gpuk_kernels_load and gpuk_kernels_reserve have done it
   outside the capture, the same calls are captured (launched) with no load or allocation. */
static int test_capture_needs_kernels_and_scratch_prepared(void) {
    gpuk_buffer f;
    gpuk_stream s;
    int allocs, modules;
    long launches;
    ctx = fake_gpuk_up(NULL);
    f = buffer(1 << 20);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    CHECK_RESULT(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_sum_f32");
    CHECK_ERROR_MENTIONS("gpuk_kernels_load");
    CHECK(gpuk_kernels_loaded(ctx) == 0);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_kernels_load(ctx, "sum_f32, gpuk_scan_inclusive_*"));
    CHECK(gpuk_kernels_loaded(ctx) == 5);
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    CHECK_RESULT(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_kernels_reserve");
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_kernels_reserve(ctx, s, 200000));
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    allocs = fake_live_count(FK_ALLOC);
    modules = fake_live_count(FK_MODULE);
    launches = fake.launches;
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 200000));
    CHECK_OK(gpuk_scan_inclusive_f64(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK(fake.launches == launches + 3);
    CHECK(fake_live_count(FK_ALLOC) == allocs && fake_live_count(FK_MODULE) == modules);
    /* a longer scan than reserved, and a kernel not loaded: refused, the capture untouched */
    CHECK_RESULT(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 40000000), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_scan_exclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 1000), GPUK_ERR_CAPTURING);
    CHECK(fake.launches == launches + 3);
    /* another stream is not being captured: it loads as usual */
    CHECK_OK(gpuk_scan_exclusive_i32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 0), 1000));
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The 3x3 in a capture: a view its variant's tiles decline (rows not 16-byte aligned apart)
   needs the baseline's module, which a first use inside the capture cannot load (refused,
   nothing launched) while the variant's is loaded; gpuk_kernels_load loads both, and then both
   kinds of view are captured with no load. */
static int test_capture_stencil_baseline_loaded_with_its_variant(void) {
    static const float box[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    const size_t rows = 100, cols = 200;
    gpuk_buffer f, g;
    gpuk_stream s;
    int modules;
    long launches;
    ctx = fake_gpuk_up(NULL);
    f = buffer(rows * (cols + 1) * 4);
    g = buffer(rows * (cols + 1) * 4);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_stencil3x3_f32(ctx, s, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), box,
                                 GPUK_BOUNDARY_ZERO)); /* the variant, loaded outside */
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    launches = fake.launches;
    CHECK_RESULT(gpuk_stencil3x3_f32(ctx, s, gpuk_at2d(g, 0, rows, cols, cols + 1),
                                     gpuk_at2d(f, 0, rows, cols, cols + 1), box, GPUK_BOUNDARY_ZERO),
                 GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_kernels_load");
    CHECK(fake.launches == launches);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_kernels_load(ctx, "stencil3x3_f32"));
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    modules = fake_live_count(FK_MODULE);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, s, gpuk_at2d(g, 0, rows, cols, cols + 1), gpuk_at2d(f, 0, rows, cols, cols + 1),
                                 box, GPUK_BOUNDARY_ZERO));
    CHECK(fake.last_block[0] == 32 && fake.last_block[1] == 8);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, s, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), box,
                                 GPUK_BOUNDARY_ZERO));
    CHECK(fake.last_block[0] == 128 && fake.launches == launches + 2 && fake_live_count(FK_MODULE) == modules);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The rows kernel's companion for rows of whole packs: a first use inside a capture is refused
   like any load, and gpuk_kernels_load of the rows kernel loads it too, so that either kind of
   rows then runs in the capture without a load. */
static int test_capture_axis_rows_companion_loaded_with_its_kernel(void) {
    gpuk_buffer f, o;
    gpuk_stream s;
    int modules;
    long launches;
    ctx = fake_gpuk_up(NULL);
    f = buffer(1000 * 64 * 4);
    o = buffer(1000 * 4);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_sum_rows_f32(ctx, s, gpuk_at(o, 0), gpuk_at2d(f, 1, 999, 63, 64)));
    CHECK(strcmp(ctx->last_launch, "gpuk_sum_rows_f32") == 0); /* loaded outside */
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    launches = fake.launches;
    CHECK_RESULT(gpuk_sum_rows_f32(ctx, s, gpuk_at(o, 0), gpuk_at2d(f, 0, 1000, 64, 0)),
                 GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_kernels_load");
    CHECK(fake.launches == launches);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_kernels_load(ctx, "sum_rows_f32"));
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    modules = fake_live_count(FK_MODULE);
    CHECK_OK(gpuk_sum_rows_f32(ctx, s, gpuk_at(o, 0), gpuk_at2d(f, 0, 1000, 64, 0)));
    CHECK(strcmp(ctx->last_launch, "gpuk__sum_rows_packed_f32") == 0);
    CHECK_OK(gpuk_sum_rows_f32(ctx, s, gpuk_at(o, 0), gpuk_at2d(f, 1, 999, 63, 64)));
    CHECK(strcmp(ctx->last_launch, "gpuk_sum_rows_f32") == 0);
    CHECK(fake.launches == launches + 2 && fake_live_count(FK_MODULE) == modules);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Growing the scratch during a capture (a scan longer than reserved takes the same path as
   this larger reserve) is refused with the capture error; outside the capture it works. */
static int test_capture_refuses_scratch_growth(void) {
    int allocs;
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_kernels_reserve(ctx, S, 1000));
    allocs = fake_live_count(FK_ALLOC);
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, S);
    CHECK_RESULT(gpuk_kernels_reserve(ctx, S, (size_t)1 << 30), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("scratch");
    CHECK(fake_live_count(FK_ALLOC) == allocs);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_kernels_reserve(ctx, S, (size_t)1 << 30));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Stream s's scratch as the built-in layer holds it, and whether device address p is still
   allocated (0 never is). */
static const gpuk__scratch* scratch_of(gpuk_stream s) {
    return &gpuk__builtin_of(ctx)->scratch[gpuk__stream_slot_of(ctx, s)];
}
static int dev_live(gpuk_devptr p) { return p && fake_is_live(FK_ALLOC, (void*)(uintptr_t)p); }

/* A counting host allocator whose next allocation can be made to fail. */
static int fail_next_alloc;
static long host_allocs, host_frees;
static void* counted_alloc(size_t n, void* u) {
    (void)u;
    if (fail_next_alloc) {
        fail_next_alloc = 0;
        return NULL;
    }
    host_allocs++;
    return malloc(n);
}
static void counted_free(void* p, void* u) {
    (void)u;
    host_frees++;
    free(p);
}

/* A ctx on the fake driver (host memory from the counting allocator where counted) with a
   buffer f of bytes and a stream s, the kernels names loaded and s's scratch reserved for
   scans of n. */
static void up_with_stream(int counted, size_t bytes, const char* names, size_t n,
                           gpuk_buffer* f, gpuk_stream* s) {
    if (counted) {
        gpuk_desc d;
        gpuk_shutdown();
        fake_reset(NULL);
        memset(&d, 0, sizeof d);
        d.get_proc = fake_get_proc;
        d.allocator.alloc_fn = counted_alloc;
        d.allocator.free_fn = counted_free;
        host_allocs = host_frees = fail_next_alloc = 0;
        CHECK_OK(gpuk_init(&d));
        CHECK_OK(gpuk_ctx_create(NULL, &ctx));
    } else {
        ctx = fake_gpuk_up(NULL);
    }
    *f = buffer(bytes);
    CHECK_OK(gpuk_stream_create(ctx, NULL, s));
    CHECK_OK(gpuk_kernels_load(ctx, names));
    CHECK_OK(gpuk_kernels_reserve(ctx, *s, n));
}

/* A GEMM in f32 split along k, so it takes a workspace on stream s: 128x2048 times 2048x128
   (one tile in 8 parts), or 1024x2048 times 2048x512 (32 tiles in 8 parts: a larger one). */
static gpuk_result split_gemm(gpuk_stream s, gpuk_buffer f, int larger) {
    const size_t m = larger ? 1024 : 128, n = larger ? 512 : 128;
    return gpuk_gemm_f32(ctx, s, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 20, m, 2048, 0), 0,
                         gpuk_at2d(f, 4 << 20, 2048, n, 0), 0, 0);
}

/* The areas a captured built-in used (a scan's scratch, a sort's area, a split GEMM's
   workspace) hold addresses a graph uses: a growth of them on that stream makes new areas and
   keeps the old ones while any graph of the ctx lives or a capture is open on it, so replays
   still find them (the sort's clear of its status words would land in freed memory); the last
   graph's destroy frees them. */
static int test_captured_scratch_kept_while_a_graph_may_use_it(void) {
    gpuk_buffer f, k;
    gpuk_stream s, t;
    gpuk_graph g, other;
    gpuk_devptr scan_old, sort_old, ws_old;
    int allocs;
    up_with_stream(0, (size_t)1 << 27, "scan_inclusive_i32 sort_keys_u32 fill_f32 gemm_f32",
                   100000, &f, &s);
    k = buffer(100000 * 4);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &t));
    CHECK_OK(gpuk_kernels_reserve_sort(ctx, s, 100000));
    CHECK_OK(split_gemm(s, f, 0));
    scan_old = scratch_of(s)->ptr;
    sort_old = scratch_of(s)->sort;
    ws_old = scratch_of(s)->ws;
    CHECK(scan_old && sort_old && ws_old);
    allocs = fake_live_count(FK_ALLOC);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK_OK(gpuk_sort_keys_u32(ctx, s, gpuk_at(k, 0), gpuk_at(f, 0), 100000, 0, 0, 0));
    CHECK_OK(split_gemm(s, f, 0));
    CHECK(scratch_of(s)->captured == (GPUK__AREA_SCAN | GPUK__AREA_WS | GPUK__AREA_SORT));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    /* a graph on t that uses no scratch: while any graph lives, the old areas stay */
    CHECK_OK(gpuk_graph_begin_capture(ctx, t, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_fill_f32(ctx, t, gpuk_at(k, 0), 1000, 1.0f));
    CHECK_OK(gpuk_graph_end_capture(ctx, t, &other));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, (size_t)1 << 26));
    CHECK_OK(gpuk_kernels_reserve_sort(ctx, s, 200000));
    CHECK_OK(split_gemm(s, f, 1));
    CHECK(scratch_of(s)->ptr != scan_old && scratch_of(s)->sort != sort_old &&
          scratch_of(s)->ws != ws_old);
    CHECK(dev_live(scan_old) && dev_live(sort_old) && dev_live(ws_old));
    CHECK(fake_live_count(FK_ALLOC) == allocs + 3);
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK_OK(gpuk_graph_launch(ctx, t, g));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK(dev_live(scan_old) && dev_live(sort_old) && dev_live(ws_old)); /* other lives */
    /* no graph, but a capture open on t: it may yet join work that holds them */
    CHECK_OK(gpuk_graph_begin_capture(ctx, t, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_graph_destroy(ctx, other));
    CHECK(dev_live(scan_old) && dev_live(sort_old) && dev_live(ws_old));
    CHECK_OK(gpuk_fill_f32(ctx, t, gpuk_at(k, 0), 1000, 2.0f));
    CHECK_OK(gpuk_graph_end_capture(ctx, t, &other));
    CHECK_OK(gpuk_graph_destroy(ctx, other));
    CHECK(!dev_live(scan_old) && !dev_live(sort_old) && !dev_live(ws_old));
    CHECK(fake_live_count(FK_ALLOC) == allocs);
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_stream_destroy(ctx, t));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* An area no capture used is freed at its growth, even while a graph lives (one that uses
   none of it). */
static int test_uncaptured_scratch_freed_at_growth(void) {
    gpuk_buffer f;
    gpuk_stream s;
    gpuk_graph g;
    gpuk_devptr old;
    int allocs;
    up_with_stream(0, 1 << 20, "sum_f32 fill_f32", 100000, &f, &s);
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 100000));
    old = scratch_of(s)->ptr;
    allocs = fake_live_count(FK_ALLOC);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_fill_f32(ctx, s, gpuk_at(f, 0), 1000, 1.0f));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, (size_t)1 << 26));
    CHECK(scratch_of(s)->ptr != old && !dev_live(old) && fake_live_count(FK_ALLOC) == allocs);
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A stream destroyed while graphs hold its scratch: the areas its captures used are retired
   (the graphs still run, on another stream), the area none used is freed at once; with the
   graphs still alive at the ctx destroy, the ctx destroy frees them. Two captures before
   and after a growth leave two scan areas behind. */
static int test_captured_scratch_outlives_its_stream(void) {
    gpuk_buffer f, k;
    gpuk_stream s;
    gpuk_graph g1, g2;
    gpuk_devptr scan1, scan2, sort;
    up_with_stream(0, 1 << 20, "scan_inclusive_i32 sort_keys_u32", 100000, &f, &s);
    k = buffer(100000 * 4);
    CHECK_OK(gpuk_kernels_reserve_sort(ctx, s, 100000));
    scan1 = scratch_of(s)->ptr;
    sort = scratch_of(s)->sort;
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g1));
    CHECK_OK(gpuk_sort_keys_u32(ctx, s, gpuk_at(k, 0), gpuk_at(f, 0), 100000, 0, 0, 0));
    CHECK_OK(gpuk_kernels_reserve(ctx, s, (size_t)1 << 26));
    scan2 = scratch_of(s)->ptr;
    CHECK(scan2 != scan1 && dev_live(scan1));
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g2));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK(dev_live(scan1) && dev_live(scan2) && !dev_live(sort));
    CHECK_OK(gpuk_graph_launch(ctx, S, g1));
    CHECK_OK(gpuk_graph_launch(ctx, S, g2));
    CHECK_OK(gpuk_stream_sync(ctx, S));
    fake_gpuk_down(ctx); /* g1, g2 and both scan areas: fake_all_released */
    return TEST_PASS;
}

/* The default stream's scratch, used by a capture on it and grown: retired like any
   stream's, and freed by the ctx destroy when its graph outlives the growth. */
static int test_captured_default_stream_scratch_freed_with_the_ctx(void) {
    gpuk_buffer f;
    gpuk_stream s;
    gpuk_graph g;
    gpuk_devptr old;
    up_with_stream(0, 1 << 20, "sum_f32", 1000, &f, &s);
    CHECK_OK(gpuk_kernels_reserve(ctx, S, 1000));
    old = scratch_of(S)->ptr;
    CHECK_OK(gpuk_graph_begin_capture(ctx, S, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_sum_f32(ctx, S, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK_OK(gpuk_graph_end_capture(ctx, S, &g));
    CHECK_OK(gpuk_kernels_reserve(ctx, S, (size_t)1 << 26));
    CHECK(scratch_of(S)->ptr != old && dev_live(old));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A launch asks the driver whether its stream is being captured at most once, and not at all
   once its area is marked (captured). */
static long capture_queries;
static void count_capture_queries(const char* name) {
    if (strcmp(name, "cuStreamIsCapturing") == 0) capture_queries++;
}
static int test_scratch_capture_query_once_a_launch(void) {
    gpuk_buffer f;
    gpuk_stream s;
    gpuk_graph g;
    up_with_stream(0, 1 << 20, "sum_f32", 1000, &f, &s);
    fake.cfg.on_call = count_capture_queries;
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK(capture_queries == 1);
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    capture_queries = 0;
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK(capture_queries == 1 && (scratch_of(s)->captured & GPUK__AREA_SCAN));
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK(capture_queries == 1);
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    capture_queries = 0;
    CHECK_OK(gpuk_sum_f32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 1), 1000));
    CHECK(capture_queries == 0);
    fake.cfg.on_call = NULL;
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Retiring an area takes a little host memory: where it cannot be had, the growth fails with
   GPUK_ERR_HOST_ALLOC and the stream keeps its area (used by the next calls, the graph
   intact), and a stream destroy fails the same way and keeps the stream; once memory comes
   back both go through, and nothing is left over. */
static int test_retire_without_host_memory(void) {
    gpuk_buffer f;
    gpuk_stream s;
    gpuk_graph g;
    gpuk_devptr old;
    up_with_stream(1, 1 << 20, "scan_inclusive_i32", 100000, &f, &s);
    old = scratch_of(s)->ptr;
    CHECK_OK(gpuk_graph_begin_capture(ctx, s, GPUK_CAPTURE_DEFAULT));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK_OK(gpuk_graph_end_capture(ctx, s, &g));
    fail_next_alloc = 1;
    CHECK_RESULT(gpuk_kernels_reserve(ctx, s, (size_t)1 << 26), GPUK_ERR_HOST_ALLOC);
    CHECK(scratch_of(s)->ptr == old && dev_live(old));
    CHECK_OK(gpuk_scan_inclusive_i32(ctx, s, gpuk_at(f, 0), gpuk_at(f, 0), 100000));
    CHECK_OK(gpuk_graph_launch(ctx, s, g));
    fail_next_alloc = 1;
    CHECK_RESULT(gpuk_stream_destroy(ctx, s), GPUK_ERR_HOST_ALLOC);
    CHECK_ERROR_MENTIONS("scratch");
    CHECK(scratch_of(s)->ptr == old && dev_live(old));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK(dev_live(old));
    CHECK_OK(gpuk_graph_launch(ctx, S, g));
    CHECK_OK(gpuk_graph_destroy(ctx, g));
    CHECK(!dev_live(old));
    CHECK_OK(gpuk_ctx_destroy(ctx));
    fake_gpuk_check_released();
    CHECK(host_allocs == host_frees);
    return TEST_PASS;
}

/* Stencils' own rules, before any driver call: out and in of one shape, not overlapping (not
   even the same view), weights given and finite, a known boundary rule; an empty view or 0
   steps launches nothing. heat_steps launches once a step, and once more (a copy back) for odd
   steps, so the field ends where it started. */
static int test_stencil_arguments_and_launch_plan(void) {
    gpuk_buffer f, g;
    long calls, launches;
    const float nan_weights[9] = { 1, 1, 1, 1, NAN, 1, 1, 1, 1 };
    ctx = fake_gpuk_up(NULL);
    f = buffer(4096 * 8);
    g = buffer(4096 * 8);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 3, 30, 40, 41), box, GPUK_BOUNDARY_CLAMP));
    CHECK_OK(gpuk_heat_step_f64(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), 0.2));
    calls = fake.calls;
    CHECK_RESULT(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 41, 0), box, GPUK_BOUNDARY_SKIP),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("30 x 41");
    CHECK_RESULT(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(f, 100, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), box, GPUK_BOUNDARY_ZERO),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(gpuk_heat_step_f32(ctx, S, gpuk_at2d(f, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), 0.2f), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), NULL, GPUK_BOUNDARY_ZERO),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("weights is NULL");
    CHECK_RESULT(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), nan_weights, GPUK_BOUNDARY_ZERO),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("weights[4]");
    CHECK_RESULT(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), box, 0), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("GPUK_BOUNDARY_SKIP");
    CHECK_RESULT(gpuk_heat_steps_f32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 39), 0.2f, 3),
                 GPUK_ERR_INVALID_ARG); /* row_stride 39 < 40 cols */
    CHECK_ERROR_MENTIONS("row_stride");
    CHECK_RESULT(gpuk_heat_steps_f32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 8000, 30, 40, 0), 0.2f, 3),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK(fake.calls == calls);
    launches = fake.launches;
    CHECK_OK(gpuk_heat_steps_f32(ctx, S, gpuk_at2d(g, 0, 0, 40, 0), gpuk_at2d(f, 0, 0, 40, 0), 0.2f, 3));
    CHECK_OK(gpuk_heat_steps_f32(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), 0.2f, 0));
    CHECK(fake.launches == launches);
    {
        static const uint32_t steps[] = { 1, 2, 4, 5, 8, 9, 13 }, want[] = { 2, 2, 4, 6, 8, 10, 14 };
        size_t q;
        for (q = 0; q < sizeof steps / sizeof steps[0]; q++) {
            launches = fake.launches;
            CHECK_OK(gpuk_heat_steps_f64(ctx, S, gpuk_at2d(g, 0, 30, 40, 0), gpuk_at2d(f, 0, 30, 40, 0), 0.2, steps[q]));
            CHECK(fake.launches - launches == (long)want[q]);
        }
    }
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The 3x3's sm_90 variant, as the launches show it (the fake GPU: sm_90): 128 threads a tile of
   64 x 16, 5312 bytes of dynamic shared memory (a box of 72 x 18 four-byte elements, aligned),
   the weights again as doubles, and a tensor map of in (its address, cols, rows, row stride in
   bytes, the box, INT32 or FLOAT32) with use_map 1 where in is 16-byte aligned with a row
   stride of a multiple of 4 elements; else (also with no cuTensorMapEncodeTiled) the
   baseline's 32 x 8 kernel from a module of its own, loaded once beside the variant's (and by
   gpuk_kernels_load with it). A map the driver refuses fails the call, naming it. A ctx held
   to sm_80 launches the sm_80 variant's tiles by the same rules with no map; one held below,
   the 32 x 8 baseline alone. */
static const unsigned long long* stencil_map_launched(void) { return (const unsigned long long*)(const void*)fake.last_args[8]; }
static uint32_t stencil_use_map_launched(void) {
    uint32_t u;
    memcpy(&u, fake.last_args[10], 4);
    return u;
}
static int test_stencil3x3_tma_tiles_plan(void) {
    static const float gauss[9] = { 0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f, 0.0625f, 0.125f, 0.0625f };
    const size_t rows = 1000, cols = 1024, ld = 1028;
    gpuk_buffer f, g;
    gpuk_devptr base;
    double wd[9];
    long maps;
    int q, modules, loaded;
    ctx = fake_gpuk_up(NULL);
    f = buffer(rows * ld * 4 + 64);
    g = buffer(rows * ld * 4 + 64);
    base = gpuk_buffer_devptr(ctx, f);
    maps = fake.tensor_maps;
    CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 4, rows, cols, ld), gauss,
                                 GPUK_BOUNDARY_SKIP));
    CHECK(fake.tensor_maps - maps == 1 && stencil_use_map_launched() == 1);
    /* 16 x 63 tiles of 64 x 16 walked by 4 blocks a multiprocessor (132 on the fake GPU) less
       one: 527 has no factor in common with the 16 tiles a row (528 = 16 * 33); two 128-byte
       aligned stages of a 72 x 18 box each */
    CHECK(fake.last_block[0] == 128 && fake.last_block[1] == 1 && fake.last_grid[0] == 4 * 132 - 1 &&
          fake.last_grid[1] == 1 && fake.last_grid[2] == 1 && fake.last_smem == 2 * 5248 + 128);
    CHECK(stencil_map_launched()[0] == base + 16 && stencil_map_launched()[1] == cols && stencil_map_launched()[2] == rows &&
          stencil_map_launched()[3] == ld * 4 && stencil_map_launched()[4] == 72 && stencil_map_launched()[5] == 18 &&
          stencil_map_launched()[6] == 3);
    memcpy(wd, fake.last_args[9], sizeof wd);
    for (q = 0; q < 9; q++) CHECK(wd[q] == (double)gauss[q]);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), gauss,
                                 GPUK_BOUNDARY_ZERO));
    CHECK(stencil_use_map_launched() == 1 && stencil_map_launched()[0] == base && stencil_map_launched()[6] == 7);
    /* fewer tiles than that (3 x 2): a block a tile */
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, 33, 100, 0), gpuk_at2d(f, 0, 33, 100, 0), gauss, GPUK_BOUNDARY_ZERO));
    CHECK(fake.last_grid[0] == 6 && fake.last_grid[1] == 1 && fake.last_grid[2] == 1);
    /* in from an odd element (1, 3) or 2 of rows 16-byte aligned apart: the map starts at the
       16-byte boundary below, that many columns wider, and the kernel learns the shift */
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 1, rows, cols, ld), gauss,
                                 GPUK_BOUNDARY_CLAMP));
    CHECK(stencil_use_map_launched() == 2 && stencil_map_launched()[0] == base && stencil_map_launched()[1] == cols + 1 &&
          stencil_map_launched()[2] == rows && fake.last_block[0] == 128 && fake.last_smem == 2 * 5248 + 128);
    CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 4 + 3, rows, cols, ld), gauss,
                                 GPUK_BOUNDARY_ZERO));
    CHECK(stencil_use_map_launched() == 4 && stencil_map_launched()[0] == base + 16 &&
          stencil_map_launched()[1] == cols + 3);
    CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 2, rows, cols, ld), gauss,
                                 GPUK_BOUNDARY_SKIP));
    CHECK(stencil_use_map_launched() == 3 && stencil_map_launched()[0] == base && stencil_map_launched()[1] == cols + 2);
    /* no map: a row stride of 1027 elements (rows not 16-byte aligned apart) */
    maps = fake.tensor_maps;
    modules = fake_live_count(FK_MODULE);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 1, rows, cols, ld - 1), gauss,
                                 GPUK_BOUNDARY_CLAMP));
    /* without a map the baseline's 32 x 8 kernel (8 parameters: the launch shape tells): no
       shared memory, its own module (once: the second call loads nothing) */
    CHECK(fake.last_block[0] == 32 && fake.last_block[1] == 8 && fake.last_smem == 0 &&
          fake_live_count(FK_MODULE) == modules + 1);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 1, rows, cols, ld - 1), gauss,
                                 GPUK_BOUNDARY_ZERO));
    CHECK(fake.last_block[0] == 32 && fake_live_count(FK_MODULE) == modules + 1);
    loaded = gpuk_kernels_loaded(ctx);
    CHECK_OK(gpuk_kernels_load(ctx, "stencil3x3_i32")); /* the variant and the baseline beside it */
    CHECK(fake_live_count(FK_MODULE) == modules + 2 && gpuk_kernels_loaded(ctx) == loaded);
    CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, ld - 1), gauss,
                                 GPUK_BOUNDARY_CLAMP));
    CHECK(fake.last_block[0] == 32 && fake.tensor_maps == maps && fake_live_count(FK_MODULE) == modules + 2);
    fake_gpuk_down(ctx);
    {
        fake_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.missing[0] = "cuTensorMapEncodeTiled";
        ctx = fake_gpuk_up(&cfg);
        f = buffer(rows * ld * 4);
        g = buffer(rows * ld * 4);
        CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), gauss,
                                     GPUK_BOUNDARY_SKIP));
        /* the baseline alone is loaded, and the kernel counts as loaded */
        CHECK(fake.last_block[0] == 32 && fake.last_block[1] == 8 && gpuk_kernels_loaded(ctx) == 1);
        fake_gpuk_down(ctx);
        memset(&cfg, 0, sizeof cfg);
        cfg.fail_name = "cuTensorMapEncodeTiled";
        ctx = fake_gpuk_up(&cfg);
        f = buffer(rows * ld * 4);
        g = buffer(rows * ld * 4);
        CHECK_RESULT(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), gauss,
                                         GPUK_BOUNDARY_SKIP), (gpuk_result)1);
        CHECK_ERROR_MENTIONS("cuTensorMapEncodeTiled");
        fake_gpuk_down(ctx);
    }
    /* held to sm_80: the same tiles by cp.async, use_map by the map's rules, no map made */
    ctx = fake_gpuk_up_desc(NULL, &(gpuk_ctx_desc){ .kernels_max_sm = 80 });
    f = buffer(rows * ld * 4 + 64);
    g = buffer(rows * ld * 4 + 64);
    maps = fake.tensor_maps;
    CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), gauss,
                                 GPUK_BOUNDARY_SKIP));
    CHECK(fake.last_block[0] == 128 && fake.last_block[1] == 1 && fake.last_grid[0] == 4 * 132 - 1 &&
          fake.last_smem == 2 * 5248 + 128 && fake.tensor_maps == maps && stencil_use_map_launched() == 1 &&
          stencil_map_launched()[0] == 0);
    memcpy(wd, fake.last_args[9], sizeof wd);
    for (q = 0; q < 9; q++) CHECK(wd[q] == (double)gauss[q]);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 3, rows, cols, ld), gauss,
                                 GPUK_BOUNDARY_CLAMP));
    CHECK(stencil_use_map_launched() == 4 && fake.last_block[0] == 128 && fake.tensor_maps == maps);
    CHECK_OK(gpuk_stencil3x3_f32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 1, rows, cols, ld - 1), gauss,
                                 GPUK_BOUNDARY_CLAMP));
    /* rows not 16-byte aligned apart: the baseline (its 8 parameters: the launch shape tells) */
    CHECK(fake.last_block[0] == 32 && fake.last_block[1] == 8 && fake.last_smem == 0 && fake.tensor_maps == maps);
    fake_gpuk_down(ctx);
    /* below sm_80: the 32 x 8 baseline */
    ctx = fake_gpuk_up_desc(NULL, &(gpuk_ctx_desc){ .kernels_max_sm = 75 });
    f = buffer(rows * ld * 4);
    g = buffer(rows * ld * 4);
    CHECK_OK(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(g, 0, rows, cols, 0), gpuk_at2d(f, 0, rows, cols, 0), gauss,
                                 GPUK_BOUNDARY_SKIP));
    CHECK(fake.last_block[0] == 32 && fake.last_block[1] == 8 && fake.last_smem == 0 && fake.tensor_maps == maps);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* GEMM's plan, as the launch shows it (the fake GPU: sm_90, 132 SMs): the tile of the variant
   the device takes (FP64: 128 with tensor cores, 64 for the sm_52 baseline that
   kernels_max_sm = 52 forces), split-K only where the tiles leave SMs idle (parts: up to 2
   blocks an SM, each at least 128 deep, at most 16), its workspace taken once; in a capture that
   would need a new workspace the call runs unsplit instead of failing. */
static const gpuk__gemm_args* gemm_launched(void) { return (const gpuk__gemm_args*)(const void*)fake.last_args[3]; }
/* The sm_90a TF32 GEMM's TMA path, as the launches show it (the fake GPU: sm_90, 132 SMs).
   2048 x 4096 x 1024 has 16 x 16 = 256 tiles of 128 x 256: B packed -> a transpose into the
   stream's workspace, then the GEMM on 384 threads with two tensor maps (A's over a, B^T's
   over the workspace, k x 4 bytes a row); B transposed -> no transpose, B^T's map over b.
   The cp.async path (256 threads, no maps) for A transposed, too few tiles, a padded B, k not
   a multiple of 4, a capture with no workspace or before the transpose kernel is loaded, a
   driver without cuTensorMapEncodeTiled, and on a ctx held to sm_80. */
static const unsigned long long* tmap_launched(int which) {
    return (const unsigned long long*)(const void*)fake.last_args[6 + which];
}
static int test_gemm_tma_path_choice(void) {
    const size_t m = 2048, n = 4096, k = 1024;
    gpuk_buffer f = { 0 };
    gpuk_devptr base;
    gpuk_stream s;
    long launches, maps;
    int allocs;
    ctx = fake_gpuk_up(NULL);
    f = buffer((size_t)1 << 27);
    base = gpuk_buffer_devptr(ctx, f);
    launches = fake.launches;
    maps = fake.tensor_maps;
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0));
    CHECK(fake.launches - launches == 2 && fake.tensor_maps - maps == 2); /* the transpose, the GEMM */
    CHECK(fake.last_block[0] == 384 && fake.last_grid[0] == 256 && gemm_launched()->splits == 1);
    CHECK(tmap_launched(0)[0] == base + (4ull << 23) && tmap_launched(0)[1] == k && tmap_launched(0)[2] == m &&
          tmap_launched(0)[3] == k * 4);
    CHECK(tmap_launched(1)[1] == k && tmap_launched(1)[2] == n && tmap_launched(1)[3] == k * 4 &&
          tmap_launched(1)[0] != base + (4ull << 24));
    /* B given transposed (n x k): its own map, no transpose */
    launches = fake.launches;
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, n, k, 0), 1, 0));
    CHECK(fake.launches - launches == 1 && fake.last_block[0] == 384 && tmap_launched(1)[0] == base + (4ull << 24) &&
          tmap_launched(1)[3] == k * 4);
    /* the cp.async path */
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, k, m, 0), 1,
                            gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0));
    CHECK(fake.last_block[0] == 256 && tmap_launched(0)[0] == 0);
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, 512, 512, 0), 1, gpuk_at2d(f, 1 << 23, 512, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, k, 512, 0), 0, 0));
    CHECK(fake.last_block[0] == 256);
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, k, n, n + 4), 0, 0));
    CHECK(fake.last_block[0] == 256);
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k - 1, k), 0,
                            gpuk_at2d(f, 1 << 24, k - 1, n, 0), 0, 0));
    CHECK(fake.last_block[0] == 256);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    allocs = fake_live_count(FK_ALLOC);
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    CHECK_OK(gpuk_gemm_tf32(ctx, s, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0));
    CHECK(fake.last_block[0] == 256 && fake_live_count(FK_ALLOC) == allocs);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    {
        fake_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.missing[0] = "cuTensorMapEncodeTiled";
        ctx = fake_gpuk_up(&cfg);
        f = buffer((size_t)1 << 27);
        CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                                gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0));
        CHECK(fake.last_block[0] == 256);
        fake_gpuk_down(ctx);
        /* a map the driver refuses: the call fails, naming it, and nothing is left behind */
        memset(&cfg, 0, sizeof cfg);
        cfg.fail_name = "cuTensorMapEncodeTiled";
        ctx = fake_gpuk_up(&cfg);
        f = buffer((size_t)1 << 27);
        CHECK_RESULT(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                                    gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0), (gpuk_result)1);
        CHECK_ERROR_MENTIONS("cuTensorMapEncodeTiled");
        fake_gpuk_down(ctx);
    }
    ctx = fake_gpuk_up_desc(NULL, &(gpuk_ctx_desc){ .kernels_max_sm = 80 });
    f = buffer((size_t)1 << 27);
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0));
    CHECK(fake.last_block[0] == 256);
    fake_gpuk_down(ctx);
    /* a capture on a stream whose workspace is big enough (a split-K call grew it) but with
       the transpose kernel not loaded yet, which a capture cannot do: the cp.async path */
    ctx = fake_gpuk_up(NULL);
    f = buffer((size_t)1 << 27);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_gemm_f32(ctx, s, gpuk_at2d(f, 0, 1024, 512, 0), 1, gpuk_at2d(f, 1 << 20, 1024, 2048, 0), 0,
                           gpuk_at2d(f, 4 << 20, 2048, 512, 0), 0, 0));
    CHECK(gemm_launched()->splits == 8);
    CHECK_OK(gpuk_kernels_load(ctx, "gemm_tf32"));
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    CHECK_OK(gpuk_gemm_tf32(ctx, s, gpuk_at2d(f, 0, m, n, 0), 1, gpuk_at2d(f, 1 << 23, m, k, 0), 0,
                            gpuk_at2d(f, 1 << 24, k, n, 0), 0, 0));
    CHECK(fake.last_block[0] == 256 && tmap_launched(0)[0] == 0);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

static int test_gemm_variant_tile_and_split_choice(void) {
    gpuk_buffer f = { 0 };
    gpuk_stream s;
    int allocs;
    ctx = fake_gpuk_up(NULL);
    f = buffer((size_t)1 << 27);
    /* 1024x2048 times 2048x512 in f32: 8 x 4 tiles of 128, k 2048 -> 8 parts of 256 */
    CHECK_OK(gpuk_gemm_f32(ctx, S, gpuk_at2d(f, 0, 1024, 512, 0), 1, gpuk_at2d(f, 1 << 20, 1024, 2048, 0), 0,
                           gpuk_at2d(f, 4 << 20, 2048, 512, 0), 0, 0));
    CHECK(gemm_launched()->splits == 8 && gemm_launched()->ws != 0 && fake.last_grid[0] == 32 * 8);
    /* the same in f64 on the sm_90 variant: 8 x 8 tiles of 128 x 64, two blocks a
       multiprocessor: 264 / 64 -> 4 parts, one wave of 128 threads a block */
    CHECK_OK(gpuk_gemm_f64(ctx, S, gpuk_at2d(f, 0, 1024, 512, 0), 1, gpuk_at2d(f, 1 << 20, 1024, 2048, 0), 0,
                           gpuk_at2d(f, 4 << 20, 2048, 512, 0), 0, 0));
    CHECK(gemm_launched()->splits == 4 && fake.last_grid[0] == 64 * 4 && fake.last_block[0] == 128);
    /* TF32, whose sm_90a variant holds one block a multiprocessor (its shared memory): 132 / 32
       -> 4 parts, one wave */
    CHECK_OK(gpuk_gemm_tf32(ctx, S, gpuk_at2d(f, 0, 1024, 512, 0), 1, gpuk_at2d(f, 1 << 20, 1024, 2048, 0), 0,
                            gpuk_at2d(f, 4 << 20, 2048, 512, 0), 0, 0));
    CHECK(gemm_launched()->splits == 4 && fake.last_grid[0] == 32 * 4 && fake.last_block[0] == 256);
    /* f64 500 x 500, k 1000 on the sm_90 variant: 4 x 8 tiles of 128 x 64, 264 / 32 = 8 parts
       but 1000 / 128 -> 7 */
    CHECK_OK(gpuk_gemm_f64(ctx, S, gpuk_at2d(f, 0, 500, 500, 0), 1, gpuk_at2d(f, 1 << 20, 500, 1000, 0), 0,
                           gpuk_at2d(f, 4 << 20, 1000, 500, 0), 0, 0));
    CHECK(gemm_launched()->splits == 7 && fake.last_grid[0] == 32 * 7);
    /* enough tiles: no split, no workspace */
    CHECK_OK(gpuk_gemm_f32(ctx, S, gpuk_at2d(f, 0, 2048, 2048, 0), 1, gpuk_at2d(f, 1 << 23, 2048, 300, 0), 0,
                           gpuk_at2d(f, 1 << 24, 300, 2048, 0), 0, 0));
    CHECK(gemm_launched()->splits == 1 && gemm_launched()->ws == 0 && fake.last_grid[0] == 16 * 16);
    /* batched: one job a product and tile, never split */
    CHECK_OK(gpuk_gemm_batched_f64(ctx, S, gpuk_at2d(f, 0, 100, 100, 0), 10000, 1, gpuk_at2d(f, 1 << 20, 100, 3000, 0), 0, 0,
                                   gpuk_at2d(f, 1 << 22, 3000, 100, 0), 0, 0, 0, 3));
    CHECK(gemm_launched()->splits == 1 && gemm_launched()->batch == 3 && fake.last_grid[0] == 2 * 3);
    /* capture on a stream with no workspace yet: unsplit, nothing allocated, no error */
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    allocs = fake_live_count(FK_ALLOC);
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    CHECK_OK(gpuk_kernels_load(ctx, "gemm_f32"));
    CHECK_OK(gpuk_gemm_f32(ctx, s, gpuk_at2d(f, 0, 1024, 512, 0), 1, gpuk_at2d(f, 1 << 20, 1024, 2048, 0), 0,
                           gpuk_at2d(f, 4 << 20, 2048, 512, 0), 0, 0));
    CHECK(gemm_launched()->splits == 1 && gemm_launched()->ws == 0 && fake_live_count(FK_ALLOC) == allocs);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    fake_gpuk_down(ctx);
    /* the portable baseline forced: f64 tiles of 64 -> 8 x 8 tiles, 264 / 64 -> 4 parts */
    ctx = fake_gpuk_up_desc(NULL, &(gpuk_ctx_desc){ .kernels_max_sm = 52 });
    f = buffer((size_t)1 << 27);
    CHECK_OK(gpuk_gemm_f64(ctx, S, gpuk_at2d(f, 0, 500, 500, 0), 1, gpuk_at2d(f, 1 << 20, 500, 1000, 0), 0,
                           gpuk_at2d(f, 4 << 20, 1000, 500, 0), 0, 0));
    CHECK(gemm_launched()->splits == 4 && fake.last_grid[0] == 64 * 4);
    fake_gpuk_down(ctx);
    {   /* sm_120: 100 KB of shared memory a multiprocessor hold one of the sm_90 FP64 variant's
           blocks, not two: m=1024 n=512 k=2048 is 64 tiles of 128 x 64 -> 132 / 64 -> 2 parts */
        fake_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.cc_major = 12;
        cfg.shared_per_sm = 102400;
        ctx = fake_gpuk_up_desc(&cfg, NULL);
        f = buffer((size_t)1 << 27);
        CHECK_OK(gpuk_gemm_f64(ctx, S, gpuk_at2d(f, 0, 1024, 512, 0), 1, gpuk_at2d(f, 1 << 20, 1024, 2048, 0), 0,
                               gpuk_at2d(f, 4 << 20, 2048, 512, 0), 0, 0));
        CHECK(strstr(gpuk__builtin_pick(ctx, GPUK__K_GEMM_F64)->name, "__sm90") != NULL);
        CHECK(gemm_launched()->splits == 2 && fake.last_grid[0] == 64 * 2 && fake.last_block[0] == 128);
        fake_gpuk_down(ctx);
    }
    return TEST_PASS;
}

/* The float histograms refuse bins they cannot represent (no range, an infinite or NaN end,
   hi - lo or nbins / (hi - lo) past the type's range) and counts short of nbins + 3, with no
   driver call; n = 0 zeroes exactly nbins + 3 counts and launches nothing. */
static int test_histogram_float_bad_arguments(void) {
    gpuk_buffer c, in, small;
    gpuk_array C, IN;
    long calls;
    ctx = fake_gpuk_up(NULL);
    c = buffer(64 * 8);
    in = buffer(64 * 8);
    small = buffer(9 * 8);
    C = gpuk_at(c, 0);
    IN = gpuk_at(in, 0);
    calls = fake.calls;
#define BAD_F32(nb, lo, hi, want) \
    CHECK_RESULT(gpuk_histogram_f32(ctx, S, C, nb, lo, hi, IN, 8), want)
#define BAD_F64(nb, lo, hi, want) \
    CHECK_RESULT(gpuk_histogram_f64(ctx, S, C, nb, lo, hi, IN, 8), want)
    BAD_F32(0, 0, 1, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("nbins is 0");
    BAD_F64((1u << 24) + 1, 0, 1, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("1 to 2^24");
    BAD_F32(4, 1, 1, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("empty");
    BAD_F64(4, 2, -2, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("lo >= hi");
    BAD_F32(4, (float)NAN, 1, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("finite");
    BAD_F32(4, 0, (float)INFINITY, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("finite");
    BAD_F64(4, -(double)INFINITY, 0, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("finite");
    BAD_F64(4, 0, NAN, GPUK_ERR_INVALID_ARG);
    /* hi - lo past FLT_MAX / DBL_MAX; nbins / (hi - lo) past it (a subnormal width) */
    BAD_F32(4, -3e38f, 3e38f, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overflows float");
    BAD_F64(4, -1.7e308, 1.7e308, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overflows double");
    BAD_F32(1u << 24, 0, 1e-44f, GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("not representable");
#undef BAD_F32
#undef BAD_F64
    /* counts hold nbins + 3: 7 bins need 10, small has 9 */
    CHECK_RESULT(gpuk_histogram_f32(ctx, S, gpuk_at(small, 0), 7, 0, 1, IN, 8),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("buffer 'b'");
    CHECK_RESULT(gpuk_histogram_f64(ctx, S, C, 4, 0, 1, gpuk_at(c, 6), 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("counts and in overlap");
    CHECK(fake.calls == calls);
    CHECK(gpuk_kernels_loaded(ctx) == 0);
    {   /* 6 bins and n = 0: counts[0..9) zeroed, [9] left alone, no launch */
        uint64_t got[10];
        long launches = fake.launches;
        memset(got, 0xAB, sizeof got);
        CHECK_OK(gpuk_buffer_write(ctx, small, 0, got, 9 * 8));
        CHECK_OK(gpuk_buffer_write(ctx, c, 0, got, 10 * 8));
        CHECK_OK(gpuk_histogram_f32(ctx, S, gpuk_at(small, 0), 6, 0, 1, IN, 0));
        CHECK_OK(gpuk_histogram_f64(ctx, S, gpuk_at(c, 1), 6, -1, 1, IN, 0));
        CHECK_OK(gpuk_ctx_sync(ctx));
        CHECK_OK(gpuk_buffer_read(ctx, small, 0, got, 9 * 8));
        CHECK(got[0] == 0 && got[8] == 0);
        CHECK_OK(gpuk_buffer_read(ctx, c, 0, got, 10 * 8));
        CHECK(got[0] == 0xABABABABABABABABull && got[1] == 0 && got[9] == 0);
        CHECK(fake.launches == launches);
    }
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The launch: scale = nbins / (hi - lo) rounded to the input's type on the host; shared memory
   one copy of nbins + 3 counts per warp up to 256 bins, one per block up to HIST_SMEM_BINS,
   the three counts apart alone above; a grid of 16-byte packs capped at the per-SM blocks. */
static int test_histogram_float_launch(void) {
    enum { MOST = GPUK__HIST_SMEM_BINS };
    static const uint32_t bins[] = { 1, 256, 257, MOST, MOST + 1, 5000 };
    gpuk_buffer c, in;
    size_t i;
    ctx = fake_gpuk_up(NULL);
    c = buffer(5003 * 8);
    in = buffer(100000 * 8);
    for (i = 0; i < sizeof bins / sizeof bins[0]; i++) {
        const uint32_t nb = bins[i];
        const unsigned smem = nb <= 256 ? 8 * (nb + 3) * 4 : nb <= MOST ? (nb + 3) * 4 : 12;
        volatile float span = 2.75f - -0.1f, want32 = (float)nb / span;
        volatile double want64 = (double)nb / (2.75 - -0.1);
        float lo32, hi32, scale32;
        double lo64, scale64;
        uint32_t got_bins;
        long launches = fake.launches;
        CHECK_OK(gpuk_histogram_f32(ctx, S, gpuk_at(c, 0), nb, -0.1f, 2.75f, gpuk_at(in, 1), 1000));
        CHECK(fake.launches == launches + 1 && fake.last_smem == smem);
        CHECK(fake.last_grid[0] == 1 && fake.last_block[0] == GPUK__BLOCK);
        memcpy(&got_bins, fake.last_args[3], 4);
        memcpy(&lo32, fake.last_args[4], 4);
        memcpy(&hi32, fake.last_args[5], 4);
        memcpy(&scale32, fake.last_args[6], 4);
        CHECK(got_bins == nb && lo32 == -0.1f && hi32 == 2.75f && scale32 == want32);
        CHECK_OK(gpuk_histogram_f64(ctx, S, gpuk_at(c, 0), nb, -0.1, 2.75, gpuk_at(in, 0), 100000));
        CHECK(fake.launches == launches + 2 && fake.last_smem == smem);
        CHECK(fake.last_grid[0] ==
              gpuk__grid(100000, GPUK__BLOCK * 2, gpuk__sm_blocks(ctx, GPUK__HIST_F64_PER_SM)));
        memcpy(&lo64, fake.last_args[4], 8);
        memcpy(&scale64, fake.last_args[6], 8);
        CHECK(lo64 == -0.1 && scale64 == want64);
    }
    CHECK_OK(gpuk_histogram_f32(ctx, S, gpuk_at(c, 0), 3, 0, 1, gpuk_at(in, 0), 200000));
    CHECK(fake.last_grid[0] ==
          gpuk__grid(200000, GPUK__BLOCK * 4, gpuk__sm_blocks(ctx, GPUK__HIST_F32_PER_SM)));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Selects: a block a scan tile (8192 4-byte or 4096 8-byte elements), the op turned into the
   kernel's mask of outcomes kept (1 less, 2 equal, 4 greater, 8 unordered, 16 finite) as
   its sixth argument and the value as its seventh, the scans' prefetch distance and scratch;
   n = 0 launches nothing and writes count 0 (a memset, so it is captured like a launch). */
static int test_select_launch(void) {
    static const struct { uint32_t op, mask; } ops[] = {
        { GPUK_CMP_LT, 1 }, { GPUK_CMP_LE, 3 }, { GPUK_CMP_GT, 4 }, { GPUK_CMP_GE, 6 },
        { GPUK_CMP_EQ, 2 }, { GPUK_CMP_NE, 13 }, { GPUK_CMP_NONZERO, 13 }, { GPUK_CMP_FINITE, 16 }
    };
    static const size_t sizes[] = { 1, 8191, 8192, 8193, 1000000 };
    fake_config cfg;
    gpuk_buffer in, out, cnt, flags;
    uint64_t count = 7, capacity, n64;
    uint32_t mask, ahead;
    float v32;
    double v64;
    int32_t vi;
    size_t i;
    long launches;
    memset(&cfg, 0, sizeof cfg);
    cfg.l2_bytes = 50 << 20;
    ctx = fake_gpuk_up(&cfg);
    in = buffer(1000000 * 8);
    out = buffer(1000000 * 8);
    cnt = buffer(8);
    flags = buffer(1000000);
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        CHECK_OK(gpuk_select_if_f32(ctx, S, gpuk_at(out, 0), gpuk_at(cnt, 0), gpuk_at(in, 0), 10,
                                    ops[i].op, 0.5f));
        memcpy(&mask, fake.last_args[5], 4);
        memcpy(&v32, fake.last_args[6], 4);
        CHECK(mask == ops[i].mask && v32 == (ops[i].op >= GPUK_CMP_NONZERO ? 0.0f : 0.5f));
    }
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const size_t n = sizes[i];
        CHECK_OK(gpuk_select_if_i32(ctx, S, gpuk_at(out, 0), gpuk_at(cnt, 0), gpuk_at(in, 0), n,
                                    GPUK_CMP_GE, -3));
        CHECK(fake.last_grid[0] == (n + 8191) / 8192 && fake.last_block[0] == GPUK__BLOCK);
        memcpy(&vi, fake.last_args[6], 4);
        memcpy(&n64, fake.last_args[4], 8);
        memcpy(&ahead, fake.last_args[8], 4);
        memcpy(&capacity, fake.last_args[9], 8);
        CHECK(vi == -3 && n64 == n && ahead == 330 && capacity >= fake.last_grid[0]);
        CHECK_OK(gpuk_partition_if_f64(ctx, S, gpuk_at(out, 0), gpuk_at(cnt, 0), gpuk_at(in, 0),
                                       n, GPUK_CMP_LT, 2.5));
        CHECK(fake.last_grid[0] == (n + 4095) / 4096);
        memcpy(&v64, fake.last_args[6], 8);
        memcpy(&ahead, fake.last_args[8], 4);
        CHECK(v64 == 2.5 && ahead == 264);
    }
    /* flags as the fourth argument; count_if passes no out */
    CHECK_OK(gpuk_select_flagged_u32(ctx, S, gpuk_at(out, 0), gpuk_at(cnt, 0), gpuk_at(in, 0),
                                     gpuk_at(flags, 3), 100));
    CHECK(*(gpuk_devptr*)fake.last_args[3] == gpuk_buffer_devptr(ctx, flags) + 3);
    CHECK_OK(gpuk_count_if_f64(ctx, S, gpuk_at(cnt, 0), gpuk_at(in, 0), 100, GPUK_CMP_FINITE, 0));
    CHECK(*(gpuk_devptr*)fake.last_args[0] == 0);
    /* in place: select_if and select_flagged only */
    CHECK_OK(gpuk_select_if_f32(ctx, S, gpuk_at(in, 5), gpuk_at(cnt, 0), gpuk_at(in, 5), 100,
                                GPUK_CMP_NE, 0.0f));
    CHECK_OK(gpuk_select_flagged_f64(ctx, S, gpuk_at(in, 0), gpuk_at(cnt, 0), gpuk_at(in, 0),
                                     gpuk_at(flags, 0), 100));
    /* run_length_encode: under 2^48 elements (a tile status holds 48-bit counts and heads);
       lengths as the eleventh argument */
    if (sizeof(size_t) > 4) {
        CHECK_RESULT(gpuk_run_length_encode_f32(ctx, S, gpuk_at(out, 0), gpuk_at(flags, 8),
                                                gpuk_at(cnt, 0), gpuk_at(in, 0),
                                                (size_t)((uint64_t)1 << 48)),
                     GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("fewer than 2^48");
    }
    CHECK_OK(gpuk_run_length_encode_f32(ctx, S, gpuk_at(out, 0), gpuk_at(flags, 8), gpuk_at(cnt, 0),
                                        gpuk_at(in, 0), 100000));
    CHECK(*(gpuk_devptr*)fake.last_args[10] == gpuk_buffer_devptr(ctx, flags) + 64);
    memcpy(&capacity, fake.last_args[9], 8);
    CHECK(fake.last_grid[0] == 13 && capacity >= 13);
    CHECK_OK(gpuk_select_if_f32(ctx, S, gpuk_at(out, 0), gpuk_at(cnt, 0), gpuk_at(in, 0), 10,
                                GPUK_CMP_LT, 0.5f));
    CHECK(*(gpuk_devptr*)fake.last_args[10] == 0);
    /* n = 0: no launch, count 0 */
    CHECK_OK(gpuk_buffer_write(ctx, cnt, 0, &count, 8));
    launches = fake.launches;
    CHECK_OK(gpuk_unique_i32(ctx, S, gpuk_at(out, 0), gpuk_at(cnt, 0), gpuk_at(in, 0), 0));
    CHECK(fake.launches == launches);
    CHECK_OK(gpuk_buffer_read(ctx, cnt, 0, &count, 8));
    CHECK(count == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Selects refuse before the driver: an op outside gpuk_cmp, FINITE on integers, out, count,
   in, flags or lengths out of bounds, and arrays that overlap (in place only for select_if and
   select_flagged, as the same first element). */
static int test_select_bad_arguments(void) {
    gpuk_buffer in, out, cnt;
    gpuk_array IN, OUT, C;
    long calls;
    ctx = fake_gpuk_up(NULL);
    in = buffer(64 * 8);
    out = buffer(64 * 8);
    cnt = buffer(8);
    IN = gpuk_at(in, 0);
    OUT = gpuk_at(out, 0);
    C = gpuk_at(cnt, 0);
    calls = fake.calls;
    CHECK_RESULT(gpuk_select_if_f32(ctx, S, OUT, C, IN, 8, 0, 1.0f), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("op is 0");
    CHECK_RESULT(gpuk_count_if_u32(ctx, S, C, IN, 8, GPUK_CMP_NUM, 1), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_cmp");
    CHECK_RESULT(gpuk_partition_if_i32(ctx, S, OUT, C, IN, 8, GPUK_CMP_FINITE, 1),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("f32 and f64 only");
    CHECK_RESULT(gpuk_select_if_f64(ctx, S, OUT, C, IN, 65, GPUK_CMP_LT, 1.0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("out: elements 0 to 0 + 65");
    CHECK_RESULT(gpuk_unique_f64(ctx, S, OUT, gpuk_at(cnt, 1), IN, 8), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("count");
    CHECK_RESULT(gpuk_select_flagged_f64(ctx, S, OUT, C, IN, gpuk_at(cnt, 0), 9),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("flags");
    CHECK_RESULT(gpuk_select_if_f32(ctx, S, gpuk_at(in, 1), C, IN, 8, GPUK_CMP_LT, 1.0f),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out and in overlap without being the same array");
    CHECK_RESULT(gpuk_partition_if_f32(ctx, S, IN, C, IN, 8, GPUK_CMP_LT, 1.0f),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out and in overlap");
    CHECK_RESULT(gpuk_unique_u32(ctx, S, IN, C, IN, 8), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_select_if_f32(ctx, S, OUT, gpuk_at(out, 3), IN, 8, GPUK_CMP_LT, 1.0f),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out and count overlap");
    CHECK_RESULT(gpuk_count_if_f64(ctx, S, gpuk_at(in, 3), IN, 8, GPUK_CMP_LT, 1.0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("in and count overlap");
    CHECK_RESULT(gpuk_select_flagged_i32(ctx, S, OUT, C, IN, gpuk_at(out, 0), 8),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out and flags overlap");
    CHECK_RESULT(gpuk_run_length_encode_f32(ctx, S, OUT, gpuk_at(out, 2), C, IN, 8),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("lengths and values overlap");
    CHECK_RESULT(gpuk_run_length_encode_u32(ctx, S, OUT, gpuk_at(in, 3), C, IN, 8),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("lengths and in overlap");
    CHECK_RESULT(gpuk_run_length_encode_f64(ctx, S, OUT, gpuk_at(in, 60), C, IN, 8),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("lengths");
    CHECK_RESULT(gpuk_run_length_encode_i32(ctx, S, IN, OUT, C, IN, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("values and in overlap");
    CHECK(fake.calls == calls);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Reductions along an axis, as the launches show them (the fake GPU: 132 SMs, so 1056 blocks
   of 256 threads in all): lanes a row, rows in pieces, columns 16 bytes a thread or one, tall
   columns in chunks, the workspace only for pieces and chunks (and none in a capture that
   cannot grow it: whole rows, one chunk), and the arguments refused before the driver.
   Arguments: out, in, rows, cols, ld, shape, chunks, span, ws. */
static unsigned axis_arg32(int i) { unsigned v; memcpy(&v, fake.last_args[i], 4); return v; }
static unsigned long long axis_arg64(int i) {
    unsigned long long v;
    memcpy(&v, fake.last_args[i], 8);
    return v;
}
static int test_axis_reduction_plan(void) {
    gpuk_buffer f, o;
    gpuk_stream s;
    int allocs;
    ctx = fake_gpuk_up(NULL);
    f = buffer((size_t)1 << 29);
    o = buffer((size_t)1 << 25);
    /* 8192 x 8192 rows: a warp a row, enough rows: no pieces, no workspace */
    CHECK_OK(gpuk_sum_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 8192, 8192, 0)));
    CHECK(axis_arg32(5) == 32 && axis_arg32(6) == 1 && axis_arg64(8) == 0 && fake.last_grid[0] == 1024);
    /* 32 x 2^22 rows: 32 warps would idle the GPU: 264 pieces a row, each 15888 columns */
    CHECK_OK(gpuk_sum_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 32, 1 << 22, 0)));
    CHECK(axis_arg32(5) == 32 && axis_arg32(6) == 264 && axis_arg64(7) == 15888 && axis_arg64(8) != 0);
    CHECK(fake.last_grid[0] == 1056);
    /* 2^21 x 64 rows: 16 lanes a row (64 floats = 16 packs), rows of whole aligned packs: the
       kernel made for them */
    CHECK_OK(gpuk_sum_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 1 << 21, 64, 0)));
    CHECK(axis_arg32(5) == 16 && axis_arg32(6) == 1);
    CHECK(fake.last_grid[0] == 132 * GPUK__AXIS_PACKED_BLOCKS);
    CHECK(strcmp(ctx->last_launch, "gpuk__sum_rows_packed_f32") == 0);
    CHECK_OK(gpuk_argmax_rows_f64(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 2, 1000, 6, 8)));
    CHECK(strcmp(ctx->last_launch, "gpuk__argmax_rows_packed_f64") == 0);
    /* short rows but not whole aligned packs (an odd count, a row start, a row stride): the
       rows kernel, whose short rows take a head and a tail */
    CHECK_OK(gpuk_sum_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 1 << 21, 63, 0)));
    CHECK(strcmp(ctx->last_launch, "gpuk_sum_rows_f32") == 0 && fake.last_grid[0] == 1056);
    CHECK_OK(gpuk_sum_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 1, 1000, 64, 0)));
    CHECK(strcmp(ctx->last_launch, "gpuk_sum_rows_f32") == 0);
    CHECK_OK(gpuk_min_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 1000, 64, 66)));
    CHECK(strcmp(ctx->last_launch, "gpuk_min_rows_f32") == 0);
    /* long rows stay with the rows kernel */
    CHECK_OK(gpuk_max_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 1000, 132, 0)));
    CHECK(strcmp(ctx->last_launch, "gpuk_max_rows_f32") == 0);
    /* 8192 x 8192 columns: 64 threads across, 16 bytes each: 32 strips; 33 chunks of 249 rows */
    CHECK_OK(gpuk_sum_cols_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 8192, 8192, 0)));
    CHECK(axis_arg32(5) == (64u | 1u << 16) && axis_arg32(6) == 33 && axis_arg64(7) == 249);
    CHECK(fake.last_grid[0] == 32 && fake.last_grid[1] == 33 && axis_arg64(8) != 0);
    /* 2^21 x 64 columns: 16 x 16 threads, one strip, 1024 chunks (64 a thread row) of 2048
       rows */
    CHECK_OK(gpuk_argmax_cols_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 1 << 21, 64, 0)));
    CHECK(axis_arg32(5) == (16u | 1u << 16) && axis_arg32(6) == 1024 && axis_arg64(7) == 2048);
    /* unaligned rows (first 1), or cols not a multiple of 4: a column a thread */
    CHECK_OK(gpuk_sum_cols_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 1, 1000, 1000, 0)));
    CHECK(axis_arg32(5) == 64u && fake.last_grid[0] == 16);
    CHECK_OK(gpuk_sum_cols_f64(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 1000, 1001, 0)));
    CHECK(axis_arg32(5) == 64u);
    /* 32 x 2^22 columns: 16384 strips keep the GPU busy: one chunk */
    CHECK_OK(gpuk_min_cols_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 32, 1 << 22, 0)));
    CHECK(axis_arg32(6) == 1 && fake.last_grid[0] == 16384 && fake.last_grid[1] == 1);
    /* a capture on a stream with no workspace: whole rows, one chunk, nothing allocated */
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    allocs = fake_live_count(FK_ALLOC);
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, s);
    CHECK_OK(gpuk_kernels_load(ctx, "sum_rows_f32"));
    CHECK_OK(gpuk_sum_rows_f32(ctx, s, gpuk_at(o, 0), gpuk_at2d(f, 0, 32, 1 << 22, 0)));
    CHECK(axis_arg32(6) == 1 && axis_arg64(8) == 0 && fake_live_count(FK_ALLOC) == allocs);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    /* refused before the driver */
    fake.calls = 0;
    CHECK_RESULT(gpuk_max_rows_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 3, 0, 0)), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("no smallest or largest");
    CHECK_RESULT(gpuk_sum_rows_f32(ctx, S, gpuk_at(o, (1 << 23) - 2), gpuk_at2d(f, 0, 3, 4, 0)),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_sum_rows_f32(ctx, S, gpuk_at(f, 2), gpuk_at2d(f, 0, 3, 4, 0)), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("overlap");
    CHECK_RESULT(gpuk_sum_cols_f32(ctx, S, gpuk_at(o, 0), gpuk_at2d(f, 0, 3, 4, 2)), GPUK_ERR_INVALID_ARG);
    CHECK(fake.calls == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* gpuk_kernels_load takes names with or without "gpuk_", prefixes ending in '*', and "*". */
static int test_kernels_load_by_name(void) {
    ctx = fake_gpuk_up(NULL);
    CHECK_OK(gpuk_kernels_load(ctx, "gpuk_sum_f32"));
    CHECK_OK(gpuk_kernels_load(ctx, "sum_f32"));
    CHECK(gpuk_kernels_loaded(ctx) == 1);
    CHECK_OK(gpuk_kernels_load(ctx, " histogram_*\t"));
    CHECK(gpuk_kernels_loaded(ctx) == 5);
    CHECK_OK(gpuk_kernels_load(ctx, "*"));
    CHECK(gpuk_kernels_loaded(ctx) == GPUK__KERNEL_COUNT);
    /* and the 3x3s' baselines beside their variants (the fake GPU: sm_90) */
    CHECK(fake_live_count(FK_MODULE) == GPUK__KERNEL_COUNT + 2);
    CHECK_OK(gpuk_kernels_load(ctx, ""));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* A stream handle wrapping CU_STREAM_PER_THREAD is a different CUDA stream on each thread, so
   one scratch area for it would be shared by kernels that do not run in order (wrong sums,
   scans reading past their tiles): reductions and scans refuse it, from every thread. */
static gpuk_stream per_thread;
static gpuk_buffer per_thread_buf;
static void* sum_on_per_thread_stream(void* arg) {
    gpuk_result* r = (gpuk_result*)arg;
    r[0] = gpuk_sum_f32(ctx, per_thread, gpuk_at(per_thread_buf, 0), gpuk_at(per_thread_buf, 1), 1000);
    r[1] = gpuk_scan_inclusive_u32(ctx, per_thread, gpuk_at(per_thread_buf, 0), gpuk_at(per_thread_buf, 0), 1000);
    return NULL;
}
static int test_per_thread_stream_refused_for_scratch(void) {
    pthread_t t[2];
    gpuk_result r[2][2];
    int i;
    long launches;
    ctx = fake_gpuk_up(NULL);
    per_thread_buf = buffer(1 << 16);
    CHECK_OK(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .wrap = (void*)(uintptr_t)2 }, &per_thread));
    launches = fake.launches;
    for (i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, sum_on_per_thread_stream, r[i]) == 0);
    for (i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(r[i][0] == GPUK_ERR_INVALID_ARG && r[i][1] == GPUK_ERR_INVALID_ARG);
    }
    CHECK_RESULT(gpuk_sum_f32(ctx, per_thread, gpuk_at(per_thread_buf, 0), gpuk_at(per_thread_buf, 1), 1000), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("CU_STREAM_PER_THREAD");
    CHECK(fake.launches == launches);
    CHECK_OK(gpuk_stream_destroy(ctx, per_thread));
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Lock scope: a loaded built-in on stream B is not held up by a JIT of another kernel, or by
   a scratch regrowth draining stream A (before, one ctx-wide lock covered both: 300 ms). */
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
static gpuk_buffer slow_buf;
static gpuk_stream slow_stream;
static int slow_started; /* atomic */
static void* jit_on_a(void* arg) {
    (void)arg;
    __atomic_store_n(&slow_started, 1, __ATOMIC_RELEASE);
    CHECK_OK(gpuk_exp_f32(ctx, slow_stream, gpuk_at(slow_buf, 0), gpuk_at(slow_buf, 0), 100));
    return NULL;
}
static void* regrow_on_a(void* arg) {
    (void)arg;
    __atomic_store_n(&slow_started, 1, __ATOMIC_RELEASE);
    CHECK_OK(gpuk_kernels_reserve(ctx, slow_stream, (size_t)1 << 28));
    return NULL;
}
static int test_loaded_builtin_not_delayed_by_jit_or_drain(void) {
    void* (*slow[2])(void*) = { jit_on_a, regrow_on_a };
    gpuk_stream b;
    int k;
    ctx = fake_gpuk_up(NULL);
    slow_buf = buffer(1 << 20);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &slow_stream));
    CHECK_OK(gpuk_stream_create(ctx, NULL, &b));
    CHECK_OK(gpuk_kernels_load(ctx, "sum_f32"));
    CHECK_OK(gpuk_kernels_reserve(ctx, b, 1000));
    CHECK_OK(gpuk_kernels_reserve(ctx, slow_stream, 1000));
    for (k = 0; k < 2; k++) {
        pthread_t t;
        double start, took;
        fake.cfg.jit_delay_ms = fake.cfg.sync_delay_ms = 400;
        __atomic_store_n(&slow_started, 0, __ATOMIC_RELEASE);
        CHECK(pthread_create(&t, NULL, slow[k], NULL) == 0);
        while (!__atomic_load_n(&slow_started, __ATOMIC_ACQUIRE)) {}
        fake_sleep_ms(50); /* well inside the slow call now */
        start = now_ms();
        CHECK_OK(gpuk_sum_f32(ctx, b, gpuk_at(slow_buf, 0), gpuk_at(slow_buf, 1), 1000));
        took = now_ms() - start;
        if (took >= 100) fprintf(stderr, "  %s: the sum on stream B took %.0f ms\n", k ? "drain" : "JIT", took);
        CHECK(took < 100);
        pthread_join(t, NULL);
        fake.cfg.jit_delay_ms = fake.cfg.sync_delay_ms = 0;
    }
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* The table the generator wrote agrees with itself: names, sizes, headers (of the PTX as it
   unpacks; tests/unit/unit_unpack.c compares it with ptx/). */
/* b's PTX text, unpacked, in *block (free it with gpuk__free); NULL where it does not unpack */
static const char* ptx_text(const gpuk__builtin_ptx* b, char** block) {
    gpuk_result r = GPUK_OK;
    const char* text = gpuk__builtin_text("unit_kernels", b, block, &r);
    CHECK(text != NULL);
    return text;
}
/* whether the PTX of b contains text */
static int ptx_has(const gpuk__builtin_ptx* b, const char* text) {
    char* block = NULL;
    const char* all = ptx_text(b, &block);
    const int found = all && strstr(all, text) != NULL;
    gpuk__free(block);
    return found;
}
static int test_generated_table_is_consistent(void) {
    const gpuk__builtin_variant* v;
    int i;
    for (i = 0; i < GPUK__KERNEL_COUNT; i++) {
        const gpuk__builtin_ptx* b = &gpuk__builtin_table[i];
        const char* const* p;
        const char* text;
        char* block = NULL;
        int major = 0, minor = 0, sm = 0, arch = 0;
        for (p = b->pieces; *p; p++) CHECK(strlen(*p) <= 4095);
        if (!(text = ptx_text(b, &block))) continue;
        CHECK(strlen(text) == b->bytes);
        CHECK(gpuk__ptx_header(text, b->bytes, &major, &minor, &sm, &arch));
        CHECK(major * 10 + minor == b->version && sm == b->target && sm <= 52 && !arch && !b->arch_specific);
        CHECK(strstr(text, b->name) != NULL);
        gpuk__free(block);
    }
    for (v = gpuk__builtin_variants(); v->kernel >= 0; v++) { /* each beats its baseline's floor */
        const char* base = gpuk__builtin_ptx_of(v->kernel)->name;
        const char* text;
        char suffix[16], *block = NULL;
        int major = 0, minor = 0, sm = 0, arch = 0;
        CHECK(v->kernel < GPUK__KERNEL_COUNT && v->ptx.target > gpuk__builtin_ptx_of(v->kernel)->target);
        CHECK(strncmp(v->ptx.name, base, strlen(base)) == 0);
        /* its name's suffix, its header and its table row agree: __sm90a, .target sm_90a, 90 + 1 */
        snprintf(suffix, sizeof suffix, "__sm%d%s", v->ptx.target, v->ptx.arch_specific ? "a" : "");
        CHECK(strcmp(v->ptx.name + strlen(base), suffix) == 0);
        if (!(text = ptx_text(&v->ptx, &block))) continue;
        CHECK(gpuk__ptx_header(text, v->ptx.bytes, &major, &minor, &sm, &arch));
        gpuk__free(block);
        CHECK(major * 10 + minor == v->ptx.version && sm == v->ptx.target && arch == v->ptx.arch_specific);
        /* sm_90a needs PTX 8.0 (CUDA 12.0); plain targets 7.8 (CUDA 11.8) or, for the TMA's
           cp.async.bulk.tensor, 8.0 (older drivers take the baseline: gpuk__variant_pick) */
        CHECK(v->ptx.version == (v->ptx.arch_specific ? 80 : v->ptx.version) &&
              (v->ptx.arch_specific || v->ptx.version <= 78 ||
               (v->ptx.version == 80 && ptx_has(&v->ptx, "cp.async.bulk.tensor"))));
    }
    return TEST_PASS;
}

/* Sorts, as the launches show them: refusals before any driver call (bit ranges, sizes,
   overlaps; index output past 2^32 keys); a sort of one tile one block (pass SORT_SINGLE, no
   scratch); longer ones a histogram grid then a launch a pass with a block a tile, the last
   pass into out; a capture that would grow the scratch refused, one reserved ahead not.
   Arguments: keys out, in, values out, in, n, scratch, pass, begin_bit, end_bit, mode. */
static unsigned sort_arg32(int i) { unsigned v; memcpy(&v, fake.last_args[i], 4); return v; }
static unsigned long long sort_arg64(int i) {
    unsigned long long v;
    memcpy(&v, fake.last_args[i], 8);
    return v;
}
/* Whether the module loaded for gpuk_sort_pairs_u32 on ctx holds entry. */
static int sort_module_has(const char* entry) {
    const fake_module* m = (const fake_module*)gpuk__builtin_of(ctx)->module[GPUK__K_SORT_PAIRS_U32];
    return m && strstr(m->text, entry) != NULL;
}

static int test_sort_plan_and_refusals(void) {
    const size_t tile8 = GPUK__BLOCK * GPUK__SORT_ITEMS_8;
    const size_t tile4m = GPUK__BLOCK * GPUK__SORT_ITEMS_4M; /* 4-byte pairs, the sm_90 variant */
    const size_t tile4k = GPUK__BLOCK * GPUK__SORT_ITEMS_4K; /* 4-byte keys alone */
    const size_t tile8k = GPUK__BLOCK * GPUK__SORT_ITEMS_8K; /* 8-byte keys alone */
    gpuk_buffer k, v, w;
    long calls, launches;
    int allocs;
    ctx = fake_gpuk_up(NULL);
    k = buffer(20000 * 8);
    v = buffer(20000 * 4);
    w = buffer(20000 * 8);
    calls = fake.calls;
    CHECK_RESULT(gpuk_sort_keys_u32(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 100, 0, 8, 8), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("[8, 8) is empty");
    CHECK_RESULT(gpuk_sort_keys_i32(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 100, 0, 0, 33), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("past the key's bits");
    CHECK_RESULT(gpuk_sort_keys_f64(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 100, 0, 64, 0), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_sort_keys_u64(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 20001, 0, 0, 0), GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_RESULT(gpuk_sort_keys_u32(ctx, S, gpuk_at(k, 1), gpuk_at(k, 0), 100, 0, 0, 0), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("out and in overlap");
    CHECK_RESULT(gpuk_sort_pairs_u32(ctx, S, gpuk_at(k, 0), gpuk_at(k, 50), gpuk_at(w, 0), gpuk_at(v, 0), 100, 0, 0, 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("keys_out and values_out overlap");
    CHECK_RESULT(gpuk_sort_pairs_f32(ctx, S, gpuk_at(k, 0), gpuk_at(v, 0), gpuk_at(w, 0), gpuk_at(v, 1), 100, 0, 0, 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("values_out and values_in overlap");
    CHECK_RESULT(gpuk_sort_index_i64(ctx, S, gpuk_at(k, 0), gpuk_at(w, 0), gpuk_at(w, 0), 100, 0, 0, 0),
                 GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("keys_in and index_out overlap");
    CHECK_RESULT(gpuk_sort_index_u32(ctx, S, gpuk_at(k, 0), gpuk_at(v, 0), gpuk_at(w, 0), 20001, 0, 0, 0),
                 GPUK_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_MENTIONS("index_out");
    CHECK(fake.calls == calls);
    CHECK(gpuk_kernels_loaded(ctx) == 0);
    /* n = 0: checked, nothing queued */
    launches = fake.launches;
    CHECK_OK(gpuk_sort_keys_u32(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 0, 0, 0, 0));
    CHECK(fake.launches == launches);
    /* one tile: one block, every pass inside it, no scratch */
    allocs = fake_live_count(FK_ALLOC);
    CHECK_OK(gpuk_sort_keys_u32(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), tile4k, 1, 0, 0));
    CHECK(fake.launches == launches + 1 && fake.last_grid[0] == 1 && fake.last_block[0] == GPUK__BLOCK);
    CHECK(sort_arg32(6) == GPUK__SORT_SINGLE && sort_arg32(7) == 0 && sort_arg32(8) == 32 &&
          sort_arg32(9) == GPUK__SORT_DESCENDING && sort_arg64(5) == 0);
    CHECK_OK(gpuk_sort_index_f64(ctx, S, gpuk_at(w, 0), gpuk_at(v, 0), gpuk_at(w, 0), tile8, 0, 3, 0));
    CHECK(fake.last_grid[0] == 1 && sort_arg32(7) == 3 && sort_arg32(8) == 64 &&
          sort_arg32(9) == GPUK__SORT_INDEX);
    CHECK(fake_live_count(FK_ALLOC) == allocs);
    /* a tile and one: the histogram, then 4 passes of 2 tiles, the last into out; 4-byte pairs
       on sm_90 take their variant, its tile of SORT_ITEMS_4M keys a thread in static shared
       memory like every sort's */
    launches = fake.launches;
    CHECK_OK(gpuk_sort_pairs_u32(ctx, S, gpuk_at(w, 0), gpuk_at(v, 0), gpuk_at(k, 0), gpuk_at(v, 0), tile4m + 1, 0, 0, 0));
    CHECK(fake.launches == launches + 5 && fake.last_grid[0] == 2 && sort_arg32(6) == 3);
    CHECK(sort_module_has(".entry gpuk_sort_pairs_u32__sm90("));
    CHECK(fake.last_smem == 0);
    CHECK(sort_arg64(0) == gpuk_buffer_devptr(ctx, w) && sort_arg64(2) == gpuk_buffer_devptr(ctx, v));
    CHECK(sort_arg64(5) != 0 && sort_arg32(9) == 0);
    CHECK(fake_live_count(FK_ALLOC) == allocs + 1);
    launches = fake.launches; /* keys alone: their own tile size */
    CHECK_OK(gpuk_sort_keys_u32(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), tile4k + 1, 0, 0, 0));
    CHECK(fake.launches == launches + 5 && fake.last_grid[0] == 2 && fake.last_smem == 0);
    launches = fake.launches;
    CHECK_OK(gpuk_sort_keys_u64(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), tile8k + 1, 0, 0, 0));
    CHECK(fake.launches == launches + 9 && fake.last_grid[0] == 2);
    CHECK_OK(gpuk_sort_keys_u64(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), tile8k, 0, 0, 0));
    CHECK(fake.launches == launches + 10 && fake.last_grid[0] == 1);
    /* bits [4, 21): 3 passes; index: SORT_INDEX only on the first pass */
    launches = fake.launches;
    CHECK_OK(gpuk_sort_index_u64(ctx, S, gpuk_at(w, 0), gpuk_at(v, 0), gpuk_at(k, 0), 10000, 1, 4, 21));
    CHECK(fake.launches == launches + 4 && fake.last_grid[0] == (10000 + tile8 - 1) / tile8 &&
          fake.last_smem == 0);
    CHECK(sort_arg32(6) == 2 && sort_arg32(7) == 4 && sort_arg32(8) == 21 &&
          sort_arg32(9) == GPUK__SORT_DESCENDING && sort_arg64(0) == gpuk_buffer_devptr(ctx, w));
    /* in place with 3 passes: the input goes to the second buffer first, out is still last */
    CHECK_OK(gpuk_sort_keys_i32(ctx, S, gpuk_at(k, 0), gpuk_at(k, 0), 10000, 0, 0, 24));
    CHECK(sort_arg64(0) == gpuk_buffer_devptr(ctx, k) && sort_arg64(1) != gpuk_buffer_devptr(ctx, k));
    /* a capture that needs more scratch: refused, nothing allocated; reserved ahead: fine */
    CHECK_OK(gpuk_sort_keys_u64(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 100, 0, 0, 0)); /* loaded */
    allocs = fake_live_count(FK_ALLOC);
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, S);
    launches = fake.launches;
    CHECK_RESULT(gpuk_sort_keys_u64(ctx, S, gpuk_at(w, 0), gpuk_at(k, 0), 20000, 0, 0, 0), GPUK_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("gpuk_kernels_reserve_sort");
    CHECK(fake.launches == launches && fake_live_count(FK_ALLOC) == allocs);
    CHECK_RESULT(gpuk_kernels_reserve_sort(ctx, S, 20000), GPUK_ERR_CAPTURING);
    fake.cfg.capturing_stream = NULL;
    CHECK_OK(gpuk_kernels_reserve_sort(ctx, S, 20000));
    CHECK_OK(gpuk_kernels_load(ctx, "sort_pairs_f64"));
    fake.cfg.capturing_stream = gpuk_stream_native(ctx, S);
    CHECK_OK(gpuk_sort_pairs_f64(ctx, S, gpuk_at(w, 0), gpuk_at(v, 0), gpuk_at(k, 0), gpuk_at(v, 0), 20000, 0, 0, 0));
    CHECK(fake.launches == launches + 9);
    fake.cfg.capturing_stream = NULL;
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

/* Below sm_90 (an A100: kernels_max_sm 80 here) 4-byte pairs run the baseline: ballots, its
   smaller tile in static shared memory, no attribute asked. Scratch reserved ahead covers the
   smaller tile's status words. */
static int test_sort_pairs_baseline_below_sm90(void) {
    const size_t tile4 = GPUK__BLOCK * GPUK__SORT_ITEMS_4;
    gpuk_buffer k, v, w;
    long launches;
    ctx = fake_gpuk_up_desc(NULL, &(gpuk_ctx_desc){ .kernels_max_sm = 80 });
    k = buffer(20000 * 8);
    v = buffer(20000 * 4);
    w = buffer(20000 * 8);
    CHECK(GPUK__SORT_ITEMS_4 < GPUK__SORT_ITEMS_4M);
    CHECK_OK(gpuk_kernels_reserve_sort(ctx, S, 20000));
    launches = fake.launches;
    CHECK_OK(gpuk_sort_pairs_u32(ctx, S, gpuk_at(w, 0), gpuk_at(v, 0), gpuk_at(k, 0), gpuk_at(v, 0), tile4 + 1, 0, 0, 0));
    CHECK(fake.launches == launches + 5 && fake.last_grid[0] == 2 && fake.last_smem == 0);
    CHECK(sort_module_has(".entry gpuk_sort_pairs_u32(") && !sort_module_has("__sm90"));
    CHECK_OK(gpuk_sort_index_f32(ctx, S, gpuk_at(w, 0), gpuk_at(v, 0), gpuk_at(k, 0), 20000, 1, 0, 0));
    CHECK(fake.last_grid[0] == (20000 + tile4 - 1) / tile4 && fake.last_smem == 0);
    fake_gpuk_down(ctx);
    return TEST_PASS;
}

int main(void) {
    RUN(test_every_wrapper_rejects_a_zero_handle_before_the_driver);
    RUN(test_bad_arguments_get_clear_errors_before_the_driver);
    RUN(test_gemm_bad_arguments_get_clear_errors_before_the_driver);
    RUN(test_gemm_variant_tile_and_split_choice);
    RUN(test_axis_reduction_plan);
    RUN(test_gemm_tma_path_choice);
    RUN(test_stencil_arguments_and_launch_plan);
    RUN(test_stencil3x3_tma_tiles_plan);
    RUN(test_capture_stencil_baseline_loaded_with_its_variant);
    RUN(test_capture_axis_rows_companion_loaded_with_its_kernel);
    RUN(test_kernels_load_lazily_one_module_each);
    RUN(test_scratch_lives_with_its_stream);
    RUN(test_scratch_kept_when_its_free_fails);
    RUN(test_jit_failure_names_the_kernel_and_retries);
    RUN(test_oldest_supported_driver_runs_every_kernel);
    RUN(test_variant_chosen_by_compute_capability);
    RUN(test_arch_specific_variant_only_on_its_compute_capability);
    RUN(test_variant_pick_rules);
    RUN(test_scan_prefetch_distance);
    RUN(test_generated_table_is_consistent);
    RUN(test_capture_needs_kernels_and_scratch_prepared);
    RUN(test_capture_refuses_scratch_growth);
    RUN(test_captured_scratch_kept_while_a_graph_may_use_it);
    RUN(test_uncaptured_scratch_freed_at_growth);
    RUN(test_captured_scratch_outlives_its_stream);
    RUN(test_captured_default_stream_scratch_freed_with_the_ctx);
    RUN(test_scratch_capture_query_once_a_launch);
    RUN(test_retire_without_host_memory);
    RUN(test_kernels_load_by_name);
    RUN(test_histogram_float_bad_arguments);
    RUN(test_histogram_float_launch);
    RUN(test_sort_plan_and_refusals);
    RUN(test_sort_pairs_baseline_below_sm90);
    RUN(test_select_launch);
    RUN(test_select_bad_arguments);
    RUN(test_per_thread_stream_refused_for_scratch);
    RUN(test_loaded_builtin_not_delayed_by_jit_or_drain);
    return test_summary();
}
