/* bench/bench_shapes.c - sweeps the launch shapes the built-ins choose from the device (src/
   gpuk_builtin.h's GPUK__TUNED knobs), each value's ratio to the device copy measured in the
   same run, so a shape rule can be checked on a new GPU: the scans' prefetch distance, the
   random numbers' blocks a multiprocessor, the 3x3 TMA tiles' blocks a multiprocessor; the heat step's and the transpose's rows are their one shape; GEMM's split-K parts at middle
   sizes (in TFLOP/s: bench_gemm has cuBLAS beside it). The row
   marked "chosen" is what gpuk picks on this device. Ratios count bytes as bench_kernels does.
   bench_shapes [--max-sm 80] [PREFIX]   (--max-sm 80: the variants an sm_80 GPU runs, on this
   one; PREFIX: only the sweeps whose names start with it)
   cc -std=c99 -O2 -I.. bench_shapes.c -o bench_shapes -ldl -lpthread -lm */
#define _POSIX_C_SOURCE 199309L
#define GPUK__TUNING
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call) do { gpuk_result r_ = (call); if (r_ != GPUK_OK) { \
    fprintf(stderr, "bench_shapes: %s\n", gpuk_last_error()); exit(1); } } while (0)
#include "bench_batch.h"

#define N28 ((size_t)1 << 28)
static gpuk_ctx* ctx;
static gpuk_timer timer;
static const gpuk_stream S = { 0 };
static gpuk_buffer x, y;
static size_t side;
static double copy_gbs;
static const char* only = "";
static const float box9[9] = { 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9 };

static void w_copy(void) { TRY(gpuk_buffer_copy_async(ctx, S, y, 0, x, 0, N28 * 4)); }
static void w_scan_i32(void) { TRY(gpuk_scan_inclusive_i32(ctx, S, gpuk_at(y, 0), gpuk_at(x, 0), N28)); }
static void w_scan_f64(void) { TRY(gpuk_scan_inclusive_f64(ctx, S, gpuk_at(y, 0), gpuk_at(x, 0), N28 / 2)); }
static void w_rand(void) { TRY(gpuk_random_uniform_f32(ctx, S, gpuk_at(y, 0), N28, 42, 0)); }
static void w_heat(void) {
    TRY(gpuk_heat_step_f32(ctx, S, gpuk_at2d(y, 0, 8192, 8192, 0), gpuk_at2d(x, 0, 8192, 8192, 0), 0.2f));
}
static void w_transpose(void) { TRY(gpuk_transpose_f32(ctx, S, gpuk_at(y, 0), gpuk_at(x, 0), 16384, 16384)); }
/* GEMM: m = n = k = gemm_side, f32 and f64, reported in TFLOP/s (bench_gemm has cuBLAS) */
static size_t gemm_side;
static gpuk_buffer ga, gb, gc;
static void w_sgemm(void) {
    const size_t s = gemm_side;
    TRY(gpuk_gemm_f32(ctx, S, gpuk_at2d(gc, 0, s, s, 0), 1.0f, gpuk_at2d(ga, 0, s, s, 0), 0,
                      gpuk_at2d(gb, 0, s, s, 0), 0, 0.0f));
}
static void w_dgemm(void) {
    const size_t s = gemm_side;
    TRY(gpuk_gemm_f64(ctx, S, gpuk_at2d(gc, 0, s, s, 0), 1.0, gpuk_at2d(ga, 0, s, s, 0), 0,
                      gpuk_at2d(gb, 0, s, s, 0), 0, 0.0));
}
static void w_smooth(void) {
    TRY(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(y, 0, side, side, 0), gpuk_at2d(x, 0, side, side, 0), box9,
                            GPUK_BOUNDARY_SKIP));
}

/* One row a knob value: -1 is gpuk's own choice. bytes: what the ratio counts; a negative
   value: -(floating-point operations), printed as TFLOP/s. */
static void sweep(const char* name, int knob, const long long* values, int count, bench_work_fn w, double bytes) {
    int i;
    if (strncmp(name, only, strlen(only)) != 0) return;
    for (i = -1; i < count; i++) {
        double ms, gbs;
        gpuk__tuned[knob] = i < 0 ? -1 : values[i];
        ms = bench_time_ms(ctx, &timer, w);
        if (bytes < 0) {
            if (i < 0) printf("%-30s %-12s %9.3f ms %8.1f TFLOP/s\n", name, "chosen", ms, -bytes / ms / 1e9);
            else printf("%-30s %-12lld %9.3f ms %8.1f TFLOP/s\n", name, values[i], ms, -bytes / ms / 1e9);
            continue;
        }
        gbs = bytes / ms / 1e6;
        if (i < 0) printf("%-30s %-12s %9.3f ms %8.1f GB/s  ratio %.3f\n", name, "chosen", ms, gbs, gbs / copy_gbs);
        else printf("%-30s %-12lld %9.3f ms %8.1f GB/s  ratio %.3f\n", name, values[i], ms, gbs, gbs / copy_gbs);
    }
    gpuk__tuned[knob] = -1;
}

int main(int argc, char** argv) {
    gpuk_ctx_desc cd = { 0 };
    const gpuk_device_info* info;
    long long ahead[12], per_sm[] = { 4, 8, 12, 16, 24, 32, 48, 64 }, tma[] = { 2, 3, 4, 5, 6, 8 };
    int i, a = 1;
    if (argc > a + 1 && strcmp(argv[a], "--max-sm") == 0) cd.kernels_max_sm = (uint32_t)atoi(argv[a + 1]), a += 2;
    if (argc > a) only = argv[a];
    TRY(gpuk_ctx_create(&cd, &ctx));
    TRY(gpuk_timer_create(ctx, &timer));
    info = gpuk_ctx_device_info(ctx);
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &y));
    TRY(gpuk_random_uniform_f32(ctx, S, gpuk_at(x, 0), N28, 7, 0));
    printf("== launch shapes on %s (sm_%d%d, %d SMs, L2 %d KiB%s)\n", info->name, info->cc_major, info->cc_minor,
           info->sm_count, info->l2_bytes / 1024, cd.kernels_max_sm ? ", kernels_max_sm 80" : "");
    copy_gbs = 8.0 * (double)N28 / bench_time_ms(ctx, &timer, w_copy) / 1e6;
    printf("%-30s %8.1f GB/s read+write\n", "device copy 2^28 f32", copy_gbs);
    for (i = 0; i < 12; i++) ahead[i] = (long long)info->sm_count * i / 2; /* 0 to 5.5 tiles an SM */
    sweep("scan_inclusive_i32 2^28 ahead", GPUK__TUNE_SCAN_AHEAD, ahead, 12, w_scan_i32, 8.0 * (double)N28);
    sweep("scan_inclusive_f64 2^27 ahead", GPUK__TUNE_SCAN_AHEAD, ahead, 12, w_scan_f64, 8.0 * (double)N28);
    sweep("random_uniform_f32 2^28 per SM", GPUK__TUNE_GENERATE_PER_SM, per_sm, 8, w_rand, 4.0 * (double)N28);
    for (side = 4096; side <= 8192; side *= 2) {
        char name[64];
        snprintf(name, sizeof name, "stencil3x3_i32 %zu^2 per SM", side);
        sweep(name, GPUK__TUNE_STENCIL_PER_SM, tma, 6, w_smooth, 8.0 * (double)(side * side));
    }
    sweep("heat_step_f32 8192^2", 0, NULL, 0, w_heat, 8.0 * 8192 * 8192); /* no knob: its own shape */
    sweep("transpose_f32 16384^2", 0, NULL, 0, w_transpose, 8.0 * 16384 * 16384); /* likewise */
    {   /* GEMM's split-K parts at middle sizes (random inputs: never time zeros) */
        static const size_t sides[] = { 1000, 1024, 2048 };
        long long splits[] = { 1, 2, 3, 4, 5, 6, 7 }; /* at most k / 128, as gpuk allows */
        int si;
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2048 * 2048 * 8 }, &ga));
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2048 * 2048 * 8 }, &gb));
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2048 * 2048 * 8 }, &gc));
        TRY(gpuk_random_uniform_f32(ctx, S, gpuk_at(ga, 0), 2048 * 2048 * 2, 11, 0));
        TRY(gpuk_random_uniform_f32(ctx, S, gpuk_at(gb, 0), 2048 * 2048 * 2, 12, 0));
        for (si = 0; si < 3; si++) {
            const double flop = 2.0 * (double)sides[si] * (double)sides[si] * (double)sides[si];
            char name[64];
            gemm_side = sides[si];
            snprintf(name, sizeof name, "sgemm %zu^3 splits", sides[si]);
            sweep(name, GPUK__TUNE_GEMM_SPLITS, splits, 7, w_sgemm, -flop);
            snprintf(name, sizeof name, "dgemm %zu^3 splits", sides[si]);
            sweep(name, GPUK__TUNE_GEMM_SPLITS, splits, 7, w_dgemm, -flop);
        }
        TRY(gpuk_buffer_destroy(ctx, ga));
        TRY(gpuk_buffer_destroy(ctx, gb));
        TRY(gpuk_buffer_destroy(ctx, gc));
    }
    TRY(gpuk_buffer_destroy(ctx, x));
    TRY(gpuk_buffer_destroy(ctx, y));
    TRY(gpuk_timer_destroy(ctx, &timer));
    TRY(gpuk_ctx_destroy(ctx));
    return 0;
}
