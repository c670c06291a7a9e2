/* tests/gpu/device_functions_check.h - the checks of gpuk_device.cuh's functions in a user's
   kernel, shared by the tests that get them by #include (gpu_nvrtc.c) and by linking
   (gpu_link.c). Include after gpuk.h, check.h and gpu_setup.h.
   random_kernel_matches_builtins: k(f32 *u, f64 *u, f32 *normal, f64 *normal, n, seed, offset)
   against gpuk_random_uniform/normal_f32/_f64 over fresh seeds and offsets (0, small and
   unaligned, large): the uniforms bit for bit and in [0, 1), the normals within rounding (the
   count of bit-for-bit equal ones printed under what). sums_kernel_matches_cpu: k(in, warp
   inclusive scan, warp sum, block sum, block sum as double) on a 32 x 8 block against the CPU.
   Outputs are poisoned before each launch. */
#ifndef DEVICE_FUNCTIONS_CHECK_H
#define DEVICE_FUNCTIONS_CHECK_H
#include <math.h>
#include <string.h>

static void random_kernel_matches_builtins(gpuk_ctx* c, gpuk_kernel k, const char* what) {
    enum { N = 5000, ROUNDS = 8 };
    static float f[N], bf[N], nf[N], bnf[N];
    static double d[N], bd[N], nd[N], bnd[N];
    void* const host[8] = { f, d, nf, nd, bf, bd, bnf, bnd };
    const size_t elem[8] = { 4, 8, 4, 8, 4, 8, 4, 8 };
    const gpuk_stream s0 = { 0 };
    gpuk_buffer b[8];
    gpuk_devptr p[4];
    size_t i, j, close_bad = 0, normal_same = 0, normal_all = 0;
    int round;
    for (j = 0; j < 8; j++)
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = N * sizeof(double) }, &b[j]));
    for (j = 0; j < 4; j++) p[j] = gpuk_buffer_devptr(c, b[j]);
    for (round = 0; round < ROUNDS; round++) {
        /* fresh seeds; offsets 0, small and unaligned, and large (below 2^62: no wrap) */
        unsigned long long seed = rng(), n = 1 + rng() % N;
        unsigned long long offset = round == 0 ? 0 : round < 4 ? rng() % 1000 : rng() >> 2;
        for (j = 0; j < 8; j++) /* poison: NaN patterns a kernel that wrote nothing leaves */
            CHECK_OK(gpuk_buffer_memset(c, s0, b[j], 0, 0xFFFFFFFFu, 4, N * 2));
        CHECK_OK(gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(7),
                                                        .block = GPUK_DIM1(128),
                                                        GPUK_ARGS(&p[0], &p[1], &p[2], &p[3], &n,
                                                                  &seed, &offset) }));
        CHECK_OK(gpuk_random_uniform_f32(c, s0, gpuk_at(b[4], 0), (size_t)n, seed, offset));
        CHECK_OK(gpuk_random_uniform_f64(c, s0, gpuk_at(b[5], 0), (size_t)n, seed, offset));
        CHECK_OK(gpuk_random_normal_f32(c, s0, gpuk_at(b[6], 0), (size_t)n, seed, offset));
        CHECK_OK(gpuk_random_normal_f64(c, s0, gpuk_at(b[7], 0), (size_t)n, seed, offset));
        for (j = 0; j < 8; j++) CHECK_OK(gpuk_buffer_read(c, b[j], 0, host[j], n * elem[j]));
        /* the uniforms bit for bit, and in [0, 1) */
        CHECK(memcmp(f, bf, n * sizeof *f) == 0);
        CHECK(memcmp(d, bd, n * sizeof *d) == 0);
        /* the normals: the same formula; bit for bit where the compiler's math library matches
           the one the built-ins were compiled with, and within rounding in any case */
        for (i = 0; i < n; i++) {
            close_bad += !(f[i] >= 0.0f && f[i] < 1.0f) + !(d[i] >= 0.0 && d[i] < 1.0);
            normal_same += memcmp(&nf[i], &bnf[i], sizeof nf[i]) == 0;
            normal_same += memcmp(&nd[i], &bnd[i], sizeof nd[i]) == 0;
            close_bad += !(fabsf(nf[i] - bnf[i]) <= 1e-5f * (1.0f + fabsf(bnf[i])));
            close_bad += !(fabs(nd[i] - bnd[i]) <= 1e-13 * (1.0 + fabs(bnd[i])));
        }
        normal_all += 2 * n;
    }
    printf("     %s normals bit for bit equal to the built-ins': %zu of %zu\n", what, normal_same,
           normal_all);
    CHECK(close_bad == 0);
    for (j = 0; j < 8; j++) CHECK_OK(gpuk_buffer_destroy(c, b[j]));
}

static void sums_kernel_matches_cpu(gpuk_ctx* c, gpuk_kernel k) {
    enum { BLOCKS = 16, N = BLOCKS * 256 };
    static int in[N], scan[N], warp[N], block[BLOCKS];
    static double block64[BLOCKS];
    void* const host[5] = { in, scan, warp, block, block64 };
    const size_t bytes[5] = { sizeof in, sizeof scan, sizeof warp, sizeof block, sizeof block64 };
    const gpuk_stream s0 = { 0 };
    gpuk_buffer b[5];
    gpuk_devptr p[5];
    size_t i, j, bad = 0;
    for (i = 0; i < N; i++) in[i] = (int)(rng() % 2001) - 1000;
    CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .data = GPUK_RANGE(in) }, &b[0]));
    for (j = 1; j < 5; j++) {
        CHECK_OK(gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = bytes[j] }, &b[j]));
        CHECK_OK(gpuk_buffer_memset(c, s0, b[j], 0, 0xA5A5A5A5u, 4, bytes[j] / 4));
    }
    for (j = 0; j < 5; j++) p[j] = gpuk_buffer_devptr(c, b[j]);
    /* a 2-D block of 32 x 8: warps are formed from the linear thread index */
    CHECK_OK(gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(BLOCKS),
                                                    .block = GPUK_DIM2(32, 8),
                                                    GPUK_ARGS(&p[0], &p[1], &p[2], &p[3],
                                                              &p[4]) }));
    for (j = 1; j < 5; j++) CHECK_OK(gpuk_buffer_read(c, b[j], 0, host[j], bytes[j]));
    for (j = 0; j < BLOCKS; j++) {
        int bsum = 0;
        for (i = 0; i < 256; i += 32) {
            int run = 0, wsum = 0;
            size_t l;
            for (l = 0; l < 32; l++) wsum += in[j * 256 + i + l];
            for (l = 0; l < 32; l++) {
                run += in[j * 256 + i + l];
                bad += scan[j * 256 + i + l] != run;
                bad += warp[j * 256 + i + l] != wsum;
            }
            bsum += wsum;
        }
        bad += block[j] != bsum;
        bad += block64[j] != (double)bsum;
    }
    CHECK(bad == 0);
    for (j = 0; j < 5; j++) CHECK_OK(gpuk_buffer_destroy(c, b[j]));
}
#endif
