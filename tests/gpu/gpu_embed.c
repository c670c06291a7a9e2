/* tests/gpu/gpu_embed.c - the kernels of tests/support/embed_test_kernels.cu run through the
   wrappers tools/gpuk_embed.py generated (tests/support/embed_test_kernels.h) and give what a CPU
   computes: views at element offsets reach the kernel as the right addresses, every scalar width
   arrives intact, launch shapes and streams are used. Outputs are poisoned first; inputs are random
   each run. Skips without a GPU.
   cc -std=c99 -I. tests/gpu/gpu_embed.c -ldl -lpthread -lm */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "../support/embed_test_kernels.h"
#include "gpu_setup.h"
#include <math.h>

static gpuk_ctx* ctx;
static embed_kernels k;

static gpuk_buffer upload(const void* data, size_t bytes) {
    gpuk_buffer b = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .data = { data, bytes } }, &b));
    return b;
}

/* y[5 + i] = a * x[3 + i] + y[5 + i] for i < n; elements outside stay as they were */
static int test_saxpy_on_offset_views(void) {
    enum { N = 1000, CAP = 1024 };
    static float x[CAP], y[CAP], got[CAP];
    const float a = 1.75f;
    gpuk_buffer bx, by;
    gpuk_grid g = gpuk_grid_1d(N, 128);
    int i, bad = 0;
    for (i = 0; i < CAP; i++) { x[i] = (float)uniform(-10, 10); y[i] = (float)uniform(-10, 10); }
    bx = upload(x, sizeof x);
    by = upload(y, sizeof y);
    CHECK_OK(embed_saxpy(ctx, &k, &g, a, gpuk_at(bx, 3), gpuk_at(by, 5), (unsigned)N));
    CHECK_OK(gpuk_buffer_read(ctx, by, 0, got, sizeof got));
    for (i = 0; i < CAP; i++) {
        float want = i >= 5 && i < 5 + N ? a * x[i - 2] + y[i] : y[i];
        /* the GPU may fuse the multiply-add: one rounding instead of two */
        if (fabsf(got[i] - want) > 1e-5f * (fabsf(a * x[i >= 2 ? i - 2 : 0]) + fabsf(y[i]) + 1.0f)) bad++;
    }
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bx));
    CHECK_OK(gpuk_buffer_destroy(ctx, by));
    return TEST_PASS;
}

/* out[i] = in[i] * scale + offset in doubles; scale a power of two, so exact either way */
static int test_widen_doubles_and_64_bit_scalars(void) {
    enum { N = 777 };
    static int32_t in[N];
    static double out[N + 1];
    const double scale = 0.25;
    const long long offset = -5000000000LL;
    gpuk_buffer bi, bo;
    gpuk_grid g = gpuk_grid_1d(N, 64);
    int i, bad = 0;
    for (i = 0; i < N; i++) in[i] = (int32_t)(rng() % 2000001) - 1000000;
    memset(out, 0xFF, sizeof out);   /* NaN poison */
    bi = upload(in, sizeof in);
    bo = upload(out, sizeof out);
    CHECK_OK(embed_widen(ctx, &k, &g, gpuk_at(bi, 0), gpuk_at(bo, 1), scale, offset, (uint64_t)N));
    CHECK_OK(gpuk_buffer_read(ctx, bo, 0, out, sizeof out));
    CHECK(isnan(out[0]));
    for (i = 0; i < N; i++) if (out[i + 1] != (double)in[i] * scale + (double)offset) bad++;
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bi));
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

static int test_small_scalars_arrive_intact(void) {
    unsigned long long out[8];
    gpuk_buffer bo;
    gpuk_grid g = gpuk_grid_1d(1, 32);
    memset(out, 0xEE, sizeof out);
    bo = upload(out, sizeof out);
    CHECK_OK(embed_small_args(ctx, &k, &g, (int8_t)-5, (uint8_t)250, (short)-30000,
                              (unsigned short)65000, (char)'q', (int16_t)-2, gpuk_at(bo, 1)));
    CHECK_OK(gpuk_buffer_read(ctx, bo, 0, out, sizeof out));
    CHECK(out[0] == 0xEEEEEEEEEEEEEEEEull && out[7] == 0xEEEEEEEEEEEEEEEEull);
    CHECK(out[1] == (unsigned long long)-5LL && out[2] == 250u && out[3] == (unsigned long long)-30000LL);
    CHECK(out[4] == 65000u && out[5] == (unsigned long long)(long long)'q' &&
          out[6] == (unsigned long long)-2LL);
    CHECK_OK(gpuk_buffer_destroy(ctx, bo));
    return TEST_PASS;
}

/* bytes 13..112 xor 0x5A, on a stream of its own with dynamic shared memory asked for */
static int test_bytes_at_an_odd_offset_on_a_stream(void) {
    unsigned char b[256], got[256];
    gpuk_buffer bb;
    gpuk_stream s;
    gpuk_grid g = gpuk_grid_1d(100, 32);
    int i, bad = 0;
    for (i = 0; i < 256; i++) b[i] = (unsigned char)rng();
    bb = upload(b, sizeof b);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    g.stream = s;
    g.shared_bytes = 1024;
    CHECK_OK(embed_xor_bytes(ctx, &k, &g, gpuk_at(bb, 13), 0x5A, 100u));
    CHECK_OK(gpuk_buffer_read_async(ctx, s, bb, 0, got, sizeof got));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    for (i = 0; i < 256; i++)
        if (got[i] != (i >= 13 && i < 113 ? (unsigned char)(b[i] ^ 0x5A) : b[i])) bad++;
    CHECK(bad == 0);
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_buffer_destroy(ctx, bb));
    return TEST_PASS;
}

/* dst[i] = src[1 + i] + i mod 2^16: first counts 2-byte elements; dst past n untouched */
static int test_u16_elements(void) {
    enum { N = 500 };
    uint16_t src[N + 1], dst[N + 4];
    gpuk_buffer bs, bd;
    gpuk_grid g = gpuk_grid_1d(N, 256);
    int i, bad = 0;
    for (i = 0; i <= N; i++) src[i] = (uint16_t)rng();
    memset(dst, 0xAB, sizeof dst);
    bs = upload(src, sizeof src);
    bd = upload(dst, sizeof dst);
    CHECK_OK(embed_add_index_u16(ctx, &k, &g, gpuk_at(bs, 1), gpuk_at(bd, 0), N));
    CHECK_OK(gpuk_buffer_read(ctx, bd, 0, dst, sizeof dst));
    for (i = 0; i < N; i++) if (dst[i] != (uint16_t)(src[i + 1] + (uint16_t)i)) bad++;
    for (i = N; i < N + 4; i++) if (dst[i] != 0xABAB) bad++;
    CHECK(bad == 0);
    CHECK_OK(gpuk_buffer_destroy(ctx, bs));
    CHECK_OK(gpuk_buffer_destroy(ctx, bd));
    return TEST_PASS;
}

static int test_no_parameters(void) {
    gpuk_grid g = gpuk_grid_1d(4096, 256);
    CHECK_OK(embed_nothing(ctx, &k, &g));
    CHECK_OK(gpuk_ctx_sync(ctx));
    return TEST_PASS;
}

int main(void) {
    int code;
    if (!gpu_setup("gpu_embed", 6, &ctx, &code)) return code;
    rng_seed_from_clock();
    if (embed_load(ctx, &k) != GPUK_OK) {
        printf("FAIL load: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    RUN(test_saxpy_on_offset_views);
    RUN(test_widen_doubles_and_64_bit_scalars);
    RUN(test_small_scalars_arrive_intact);
    RUN(test_bytes_at_an_odd_offset_on_a_stream);
    RUN(test_u16_elements);
    RUN(test_no_parameters);
    CHECK_OK(embed_unload(ctx, &k));
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
