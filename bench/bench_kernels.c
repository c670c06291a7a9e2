/* bench/bench_kernels.c - the built-in kernels against the device's own copy bandwidth,
   measured in the same run: each line is a median of 11 timed samples after 2 warm-ups (events on
   one stream around one run, or a batch of runs where one is short: bench_batch.h) and its ratio
   to a device-to-device copy of the same size class.
   Ratios: element-wise and scans count bytes read + written, like the copy; reductions count
   bytes read only (a reduction reads what a copy reads and writes nothing); random counts
   bytes written.
   Results also go to build/bench-csv/kernels.csv (bench_csv.h; not for --cold-start).
   Goals are the same on every GPU. --max-sm 80 runs the whole table on the variants an sm_80
   GPU (A100) runs, on this one (gpuk_ctx_desc.kernels_max_sm = 80), the 3x3 there on its 32 x 8
   kernel, whose goal is lower: it has no TMA tiles to keep the image's rows in flight.
   bench_kernels --cold-start   time from a ready ctx to the first built-in kernel's result
   bench_kernels [--max-sm N] [--only P,Q..]   only the rows whose names start with P, Q, ..
   cc -std=c99 -O2 -I.. bench_kernels.c -o bench_kernels -ldl -lpthread -lm */
#define _POSIX_C_SOURCE 199309L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "bench_clock.h"
#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRY(call) do { gpuk_result r_ = (call); if (r_ != GPUK_OK) { \
    fprintf(stderr, "bench_kernels: %s\n", gpuk_last_error()); exit(1); } } while (0)
#include "bench_batch.h"

static gpuk_ctx* ctx;
static const gpuk_stream S = { 0 };
static gpuk_timer timer;
typedef bench_work_fn work_fn;


static double time_ms(work_fn work) { return bench_time_ms(ctx, &timer, work); }

#define N28 ((size_t)1 << 28)
#define N26 ((size_t)1 << 26)
#define SIDE ((size_t)16384)
static gpuk_buffer x, y, z, h8;
static size_t n_cur;
static double copy_gbs;

static const char* only; /* --only: the prefixes of the rows to run, comma-separated */
static int wanted(const char* name) {
    const char* p = only;
    if (!only) return 1;
    for (;;) {
        const size_t len = strcspn(p, ",");
        if (len && strncmp(name, p, len) == 0) return 1;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

static gpuk_array at0(gpuk_buffer b) { return gpuk_at(b, 0); }
static void w_copy(void) { TRY(gpuk_buffer_copy_async(ctx, S, y, 0, x, 0, n_cur * 4)); }
static void w_add(void) { TRY(gpuk_add_f32(ctx, S, at0(z), at0(x), at0(y), n_cur)); }
static void w_axpy(void) { TRY(gpuk_axpy_f32(ctx, S, at0(y), 1.5f, at0(x), n_cur)); }
static void w_selu(void) { TRY(gpuk_selu_f32(ctx, S, at0(y), at0(x), n_cur, 1.6732632f, 1.0507010f)); }
static void w_sum(void) { TRY(gpuk_sum_f32(ctx, S, at0(z), at0(x), n_cur)); }
static void w_dot(void) { TRY(gpuk_dot_f32(ctx, S, at0(z), at0(x), at0(y), n_cur)); }
static void w_min(void) { TRY(gpuk_min_f32(ctx, S, at0(z), at0(x), n_cur)); }
static void w_max(void) { TRY(gpuk_max_f32(ctx, S, at0(z), at0(x), n_cur)); }
/* 16-bit floats: x's uniform floats in [0, 1) read as f16 pairs, whose low halves are random
   bits, some of them NaN or inf (the kernels take no branch on the class) */
static void w_add_f16(void) { TRY(gpuk_add_f16(ctx, S, at0(z), at0(x), at0(y), n_cur)); }
static void w_sum_f16(void) { TRY(gpuk_sum_f16(ctx, S, at0(z), at0(x), n_cur)); }
static void w_to_f16(void) { TRY(gpuk_to_f16_f32(ctx, S, at0(z), at0(x), n_cur)); }
static void w_from_f16(void) { TRY(gpuk_to_f32_f16(ctx, S, at0(z), at0(x), n_cur)); }
static void w_dot_f16(void) { TRY(gpuk_dot_f16(ctx, S, at0(z), at0(x), at0(y), n_cur)); }
static void w_add_bf16(void) { TRY(gpuk_add_bf16(ctx, S, at0(z), at0(x), at0(y), n_cur)); }
static void w_sum_bf16(void) { TRY(gpuk_sum_bf16(ctx, S, at0(z), at0(x), n_cur)); }
/* reductions along an axis: x viewed as ax_rows x ax_cols, one result a row or a column */
static size_t ax_rows, ax_cols;
static void w_sum_rows(void) { TRY(gpuk_sum_rows_f32(ctx, S, at0(z), gpuk_at2d(x, 0, ax_rows, ax_cols, 0))); }
static void w_sum_cols(void) { TRY(gpuk_sum_cols_f32(ctx, S, at0(z), gpuk_at2d(x, 0, ax_rows, ax_cols, 0))); }
static void w_argmax_rows(void) { TRY(gpuk_argmax_rows_f32(ctx, S, at0(z), gpuk_at2d(x, 0, ax_rows, ax_cols, 0))); }
static void w_max_cols(void) { TRY(gpuk_max_cols_f32(ctx, S, at0(z), gpuk_at2d(x, 0, ax_rows, ax_cols, 0))); }
static void w_scan_i32(void) { TRY(gpuk_scan_inclusive_i32(ctx, S, at0(y), at0(x), n_cur)); }
static void w_scan_f32(void) { TRY(gpuk_scan_inclusive_f32(ctx, S, at0(y), at0(x), n_cur)); }
static void w_scan_f64(void) { TRY(gpuk_scan_inclusive_f64(ctx, S, at0(y), at0(x), n_cur)); }
static void w_transpose(void) { TRY(gpuk_transpose_f32(ctx, S, at0(y), at0(x), SIDE, SIDE)); }
static void w_hist(void) { TRY(gpuk_histogram_u8(ctx, S, at0(z), 256, 0, 256, at0(h8), n_cur)); }
static void w_hist_f32(void) {
    TRY(gpuk_histogram_f32(ctx, S, at0(z), 256, 0.0f, 1.0f, at0(x), n_cur));
}
/* sorts: keys from splitmix64 of the index (the low 32 bits for u32 keys), as bench_cub's
   sort lines make them; pairs carry the index as the value */
static gpuk_buffer sort_vals, sort_vals_out;
static void w_sort_u32(void) { TRY(gpuk_sort_keys_u32(ctx, S, at0(y), at0(x), n_cur, 0, 0, 0)); }
static void w_sort_pairs(void) {
    TRY(gpuk_sort_pairs_u32(ctx, S, at0(y), at0(sort_vals_out), at0(x), at0(sort_vals), n_cur, 0,
                            0, 0));
}
static void w_sort_u64(void) { TRY(gpuk_sort_keys_u64(ctx, S, at0(y), at0(x), n_cur, 0, 0, 0)); }
static uint64_t splitmix64(uint64_t i) {
    uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* x = n keys of key_bytes each (and sort_vals = 0, 1, ... for pairs), written from the host */
static void sort_keys_fill(size_t n, size_t key_bytes) {
    const size_t chunk = (size_t)1 << 22;
    unsigned char* host = (unsigned char*)malloc(chunk * key_bytes);
    uint32_t* idx = (uint32_t*)malloc(chunk * 4);
    size_t i, j;
    if (!host || !idx) { fprintf(stderr, "bench_kernels: out of host memory\n"); exit(1); }
    for (i = 0; i < n; i += chunk) {
        const size_t m = n - i < chunk ? n - i : chunk;
        for (j = 0; j < m; j++) {
            const uint64_t k = splitmix64(i + j);
            const uint32_t k32 = (uint32_t)k;
            if (key_bytes == 8) memcpy(host + j * 8, &k, 8);
            else memcpy(host + j * 4, &k32, 4);
            idx[j] = (uint32_t)(i + j);
        }
        TRY(gpuk_buffer_write(ctx, x, i * key_bytes, host, m * key_bytes));
        TRY(gpuk_buffer_write(ctx, sort_vals, i * 4, idx, m * 4));
    }
    free(host);
    free(idx);
}
/* one sort line: ms and keys a second; the goal is against bench_cub's line of the same name
   (another binary), so it is printed, not checked here */
static void sort_line(const char* name, size_t n, work_fn w, const char* goal) {
    if (!wanted(name)) return;
    char size[16];
    double ms;
    n_cur = n;
    ms = time_ms(w);
    printf("%-34s n=2^%-2d %9.3f ms %8.3f Gkeys/s (goal: %s)\n", name, __builtin_ctzll(n), ms,
           (double)n / ms / 1e6, goal);
    snprintf(size, sizeof size, "2^%d", __builtin_ctzll(n));
    bench_csv_row(name, size, ms, (double)n / ms / 1e6, "Gkeys/s", BENCH_CSV_NONE, BENCH_CSV_NONE);
}

static void w_select_f32(void) {
    TRY(gpuk_select_if_f32(ctx, S, at0(y), at0(z), at0(x), n_cur, GPUK_CMP_LT, 0.5f));
}
/* run-length encoding: x = runs of whole groups of 4 i32, each group 0 or 1 by splitmix64 of
   its index (as bench_cub's line makes them); values to y, lengths to rle_lengths, the count
   to z */
static gpuk_buffer rle_lengths;
static void w_rle(void) {
    TRY(gpuk_run_length_encode_i32(ctx, S, at0(y), at0(rle_lengths), at0(z), at0(x), n_cur));
}
static void w_c2s2(void) { TRY(gpuk_cos2_plus_sin2_f32(ctx, S, at0(y), at0(x), n_cur)); }
static void w_rand(void) { TRY(gpuk_random_uniform_f32(ctx, S, at0(y), n_cur, 42, 0)); }
/* stencils: a 4096^2 and an 8192^2 i32 image smoothed (box, GPUK_BOUNDARY_SKIP), an 8192^2 f32 heat
   step, and 4 steps through gpuk_heat_steps (counted per step: 8 bytes a cell a step) */
#define IMG ((size_t)4096)
#define FIELD ((size_t)8192)
static const float box9[9] = { 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9 };
static void w_smooth(void) {
    TRY(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(y, 0, IMG, IMG, 0), gpuk_at2d(x, 0, IMG, IMG, 0), box9, GPUK_BOUNDARY_SKIP));
}
static void w_smooth8k(void) {
    TRY(gpuk_stencil3x3_i32(ctx, S, gpuk_at2d(y, 0, FIELD, FIELD, 0), gpuk_at2d(x, 0, FIELD, FIELD, 0), box9, GPUK_BOUNDARY_SKIP));
}
static void w_heat(void) {
    TRY(gpuk_heat_step_f32(ctx, S, gpuk_at2d(y, 0, FIELD, FIELD, 0), gpuk_at2d(x, 0, FIELD, FIELD, 0), 0.2f));
}
static void w_heat4(void) {
    TRY(gpuk_heat_steps_f32(ctx, S, gpuk_at2d(x, 0, FIELD, FIELD, 0), gpuk_at2d(y, 0, FIELD, FIELD, 0), 0.2f, 4));
}

static void line(const char* name, size_t n, work_fn w, double bytes_per_elem, const char* counted, double goal) {
    if (!wanted(name)) return;
    double ms, gbs;
    char size[16], unit[32];
    n_cur = n;
    ms = time_ms(w);
    gbs = bytes_per_elem * (double)n / ms / 1e6;
    if (goal != goal) /* BENCH_CSV_NONE: a row for comparison, not held to a goal */
        printf("%-34s n=2^%-2d %9.3f ms %8.1f GB/s  ratio %.3f (%s; no goal)\n", name, __builtin_ctzll(n), ms, gbs,
               gbs / copy_gbs, counted);
    else
        printf("%-34s n=2^%-2d %9.3f ms %8.1f GB/s  ratio %.3f (%s; goal >= %.2f)%s\n", name, __builtin_ctzll(n), ms, gbs,
               gbs / copy_gbs, counted, goal, gbs / copy_gbs >= goal ? "" : "  BELOW GOAL");
    snprintf(size, sizeof size, "2^%d", __builtin_ctzll(n));
    snprintf(unit, sizeof unit, "GB/s %s", counted);
    bench_csv_row(name, size, ms, gbs, unit, gbs / copy_gbs, goal);
}

static void axis_line(const char* what, size_t rows, size_t cols, work_fn w) {
    if (!wanted(what)) return;
    char name[64];
    ax_rows = rows, ax_cols = cols;
    snprintf(name, sizeof name, "%s %zux%zu", what, rows, cols);
    line(name, rows * cols, w, 4, "read", 0.90);
}

static int cold_start(void) {
    double t0, t1, t2, t3;
    gpuk_buffer a, b, c;
    float v = 0;
    TRY(gpuk_ctx_create(NULL, &ctx));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4 << 20 }, &a));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4 << 20 }, &b));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4 << 20 }, &c));
    TRY(gpuk_ctx_sync(ctx));
    t0 = now_ms(); /* ctx exists, buffers exist: from here it is the kernel library's cost */
    TRY(gpuk_fill_f32(ctx, S, gpuk_at(a, 0), 1 << 20, 1.5f));
    TRY(gpuk_buffer_read(ctx, a, 4, &v, 4));
    t1 = now_ms();
    TRY(gpuk_fill_f32(ctx, S, gpuk_at(b, 0), 1 << 20, 2.0f));
    TRY(gpuk_add_f32(ctx, S, gpuk_at(c, 0), gpuk_at(a, 0), gpuk_at(b, 0), 1 << 20));
    TRY(gpuk_buffer_read(ctx, c, 4, &v, 4));
    t2 = now_ms();
    TRY(gpuk_cos2_plus_sin2_f32(ctx, S, gpuk_at(c, 0), gpuk_at(a, 0), 1 << 20));
    TRY(gpuk_buffer_read(ctx, c, 4, &v, 4));
    t3 = now_ms();
    printf("cold start (CUDA_CACHE_DISABLE=%s): first kernel (fill_f32) result %.2f ms after the ctx; "
           "a second kernel (add_f32) %.2f ms; the largest (cos2_plus_sin2_f32, %zu bytes of PTX) %.2f ms; value %g\n",
           getenv("CUDA_CACHE_DISABLE") ? getenv("CUDA_CACHE_DISABLE") : "unset", t1 - t0, t2 - t1,
           gpuk__builtin_ptx_of(GPUK__K_COS2_PLUS_SIN2_F32)->bytes, t3 - t2, v);
    TRY(gpuk_ctx_destroy(ctx));
    return 0;
}

int main(int argc, char** argv) {
    size_t free_b = 0;
    gpuk_ctx_desc cd = { 0 };
    if (argc > 1 && strcmp(argv[1], "--cold-start") == 0) return cold_start();
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--max-sm") == 0) cd.kernels_max_sm = (uint32_t)atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--only") == 0) only = argv[a + 1];
        else { fprintf(stderr, "bench_kernels: unknown argument %s\n", argv[a]); return 2; }
    }
    TRY(gpuk_ctx_create(&cd, &ctx));
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_ctx_mem_info(ctx, &free_b, NULL));
    /* 4 GiB of arrays, 2 more for the sort's values, about 2.2 for its scratch */
    if (free_b < ((size_t)9 << 30)) { fprintf(stderr, "bench_kernels: needs 9 GiB free\n"); return 1; }
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &y));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &z));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 }, &h8));
    TRY(gpuk_random_uniform_f32(ctx, S, at0(x), N28, 7, 0));
    TRY(gpuk_random_uniform_f32(ctx, S, at0(y), N28, 8, 0));
    TRY(gpuk_random_uniform_f32(ctx, S, gpuk_at(h8, 0), N28 / 4, 9, 0)); /* random bytes */
    TRY(gpuk_ctx_sync(ctx));

    printf("== gpuk kernel bench on %s (sm_%d%d, %d SMs%s)\n", gpuk_ctx_device_info(ctx)->name,
           gpuk_ctx_device_info(ctx)->cc_major, gpuk_ctx_device_info(ctx)->cc_minor, gpuk_ctx_device_info(ctx)->sm_count,
           cd.kernels_max_sm ? "; the variants of kernels_max_sm 80" : "");
    bench_csv_open(cd.kernels_max_sm ? "kernels_sm80" : "kernels", gpuk_ctx_device_info(ctx)->name);
    n_cur = N28;
    {
        double ms = time_ms(w_copy);
        copy_gbs = 8.0 * (double)N28 / ms / 1e6;
        printf("%-34s n=2^28 %8.1f GB/s read+write (the limit every ratio divides by)\n", "device copy (cuMemcpyDtoDAsync)", copy_gbs);
        bench_csv_row("device copy (cuMemcpyDtoDAsync)", "2^28", ms, copy_gbs, "GB/s read+write", BENCH_CSV_NONE, BENCH_CSV_NONE);
    }
    line("add_f32", N28, w_add, 12, "read+write", 0.95);
    line("axpy_f32", N28, w_axpy, 12, "read+write", 0.95);
    line("selu_f32", N28, w_selu, 8, "read+write", 0.95);
    line("selu_f32", N26, w_selu, 8, "read+write", 0.95);
    line("sum_f32", N28, w_sum, 4, "read", 1.0);
    line("dot_f32", N28, w_dot, 8, "read", 1.0);
    line("min_f32", N28, w_min, 4, "read", 1.0);
    line("max_f32", N28, w_max, 4, "read", 1.0);
    line("add_f16", N28, w_add_f16, 6, "read+write", 0.95);
    line("sum_f16", N28, w_sum_f16, 2, "read", 1.0);
    line("dot_f16", N28, w_dot_f16, 4, "read", 1.0);
    line("to_f16_f32", N28, w_to_f16, 6, "read+write", 0.95);
    line("to_f32_f16", N28, w_from_f16, 6, "read+write", 0.95);
    line("add_bf16", N28, w_add_bf16, 6, "read+write", 0.95);
    line("sum_bf16", N28, w_sum_bf16, 2, "read", 1.0);
    axis_line("sum_rows_f32", 8192, 8192, w_sum_rows);
    axis_line("sum_rows_f32", 64, (size_t)1 << 22, w_sum_rows);
    axis_line("sum_rows_f32", (size_t)1 << 22, 64, w_sum_rows);
    axis_line("sum_cols_f32", 8192, 8192, w_sum_cols);
    axis_line("sum_cols_f32", 64, (size_t)1 << 22, w_sum_cols);
    axis_line("sum_cols_f32", (size_t)1 << 22, 64, w_sum_cols);
    axis_line("argmax_rows_f32", 8192, 8192, w_argmax_rows);
    axis_line("max_cols_f32", 8192, 8192, w_max_cols);
    line("scan_inclusive_i32", N28, w_scan_i32, 8, "read+write", 0.92);
    line("scan_inclusive_f32", N28, w_scan_f32, 8, "read+write", 0.92);
    line("scan_inclusive_f64", N28 / 2, w_scan_f64, 16, "read+write", 0.88);
    line("transpose_f32 16384^2", SIDE * SIDE, w_transpose, 8, "read+write", 0.92);
    line("random_uniform_f32", N28, w_rand, 4, "write", 0.92);
    if (wanted("stencil3x3_i32")) { /* the variant gpuk picks here (within kernels_max_sm) */
        char name[64];
        snprintf(name, sizeof name, "stencil3x3_i32 smoothing 4096^2 (%s)",
                 gpuk__builtin_pick(ctx, GPUK__K_STENCIL3X3_I32)->name + 5);
        line(name, IMG * IMG, w_smooth, 8, "read+write", cd.kernels_max_sm ? 0.85 : 0.88);
    }
    if (wanted("stencil3x3_i32") && !cd.kernels_max_sm) { /* then the sm_80 path
           (kernels_max_sm 80 in a second ctx on this device, with its own image and timer) */
        gpuk_ctx* picked_ctx = ctx;
        gpuk_timer picked_timer = timer;
        gpuk_buffer px = x, py = y;
        TRY(gpuk_ctx_create(&(gpuk_ctx_desc){ .kernels_max_sm = 80 }, &ctx));
        TRY(gpuk_timer_create(ctx, &timer));
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = IMG * IMG * 4 }, &x));
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = IMG * IMG * 4 }, &y));
        TRY(gpuk_random_uniform_f32(ctx, S, at0(x), IMG * IMG, 7, 0));
        line("stencil3x3_i32 smoothing 4096^2 (max sm 80)", IMG * IMG, w_smooth, 8, "read+write", 0.85);
        TRY(gpuk_buffer_destroy(ctx, x));
        TRY(gpuk_buffer_destroy(ctx, y));
        TRY(gpuk_timer_destroy(ctx, &timer));
        TRY(gpuk_ctx_destroy(ctx));
        ctx = picked_ctx, timer = picked_timer, x = px, y = py;
    }
    if (wanted("stencil3x3_i32")) { /* at 4096^2 (64 MiB each way) even a copy falls short of
           the 2^28 copy: the same image size copied, and the smoothing against that copy */
        double smooth_ms, copy_ms;
        n_cur = IMG * IMG;
        copy_ms = time_ms(w_copy);
        smooth_ms = time_ms(w_smooth);
        printf("%-34s n=2^%-2d %9.3f ms %8.1f GB/s  ratio %.3f to the 2^28 copy; the smoothing's ratio to it %.3f\n",
               "device copy of the 4096^2 image", __builtin_ctzll(IMG * IMG), copy_ms, 8.0 * (double)(IMG * IMG) / copy_ms / 1e6,
               8.0 * (double)(IMG * IMG) / copy_ms / 1e6 / copy_gbs, copy_ms / smooth_ms);
    }
    line("stencil3x3_i32 smoothing 8192^2", FIELD * FIELD, w_smooth8k, 8, "read+write", cd.kernels_max_sm ? 0.85 : 0.90);
    line("heat_step_f32 8192^2", FIELD * FIELD, w_heat, 8, "read+write", 0.88);
    line("heat_steps_f32 8192^2 x4 (per step)", 4 * FIELD * FIELD, w_heat4, 8, "read+write a step", 0.88);
    n_cur = N28;
    if (wanted("histogram_u8")) {
        double ms = time_ms(w_hist);
        printf("%-34s n=2^28 %9.3f ms %8.1f GB/s read (goal: faster than bench_cub's HistogramEven "
               "u8 256 bins)\n", "histogram_u8 256 bins", ms, (double)N28 / ms / 1e6);
        bench_csv_row("histogram_u8 256 bins", "2^28", ms, (double)N28 / ms / 1e6, "GB/s read", BENCH_CSV_NONE, BENCH_CSV_NONE);
    }
    TRY(gpuk_random_uniform_f32(ctx, S, at0(x), N28, 7, 0)); /* the next two rows' input */
    if (wanted("histogram_f32")) { /* f32 uniform in [0, 1) into 256 bins of [0, 1), as
           bench_cub's HistogramEven f32 line; the goal is against that line (another binary),
           so it is printed, not checked here */
        double ms;
        ms = time_ms(w_hist_f32);
        printf("%-34s n=2^28 %9.3f ms %8.1f GB/s read  ratio %.3f (read; goal: >= 1.3x bench_cub's "
               "HistogramEven f32 256 bins, its ms / 1.3)\n", "histogram_f32 256 bins", ms,
               4.0 * (double)N28 / ms / 1e6, 4.0 * (double)N28 / ms / 1e6 / copy_gbs);
        bench_csv_row("histogram_f32 256 bins", "2^28", ms, 4.0 * (double)N28 / ms / 1e6,
                      "GB/s read", BENCH_CSV_NONE, BENCH_CSV_NONE);
    }
    if (wanted("select_if")) { /* x uniform in [0, 1) (still the histogram's), x < 0.5 kept:
           about half, as bench_cub's DeviceSelect::If f32 line; bytes: 4n read, 4 a kept
           element written. The goal is against that line (another binary), so it is printed,
           not checked here */
        double ms, gbs;
        uint64_t kept = 0;
        ms = time_ms(w_select_f32);
        TRY(gpuk_buffer_read(ctx, z, 0, &kept, sizeof kept));
        gbs = (4.0 * (double)N28 + 4.0 * (double)kept) / ms / 1e6;
        printf("%-34s n=2^28 %9.3f ms %8.1f GB/s  ratio %.3f (read+write, %.1f %% kept; goal: "
               ">= 0.9x bench_cub's DeviceSelect::If f32 50 %%, its ms / 0.9)\n",
               "select_if_f32 50 % kept", ms, gbs, gbs / copy_gbs, 100.0 * (double)kept / N28);
        bench_csv_row("select_if_f32 50 % kept", "2^28", ms, gbs, "GB/s read+write", gbs / copy_gbs,
                      BENCH_CSV_NONE);
    }
    if (wanted("run_length")) { /* runs of 8 on average, an eighth of n of them (the call asks
           room for n, the most there can be); bytes: 4n read, 4 + 8 a run written. The goal is
           against bench_cub's line (another binary), so it is printed, not checked here */
        double ms, gbs;
        uint64_t runs = 0;
        int32_t* host = (int32_t*)malloc(N28 * 4);
        size_t i;
        if (!host) { fprintf(stderr, "bench_kernels: out of host memory\n"); exit(1); }
        for (i = 0; i < N28; i++) host[i] = (int32_t)(splitmix64(i / 4) & 1u);
        TRY(gpuk_buffer_write(ctx, x, 0, host, N28 * 4));
        free(host);
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 8 }, &rle_lengths));
        n_cur = N28;
        ms = time_ms(w_rle);
        TRY(gpuk_buffer_read(ctx, z, 0, &runs, sizeof runs));
        gbs = (4.0 * (double)N28 + 12.0 * (double)runs) / ms / 1e6;
        printf("%-34s n=2^28 %9.3f ms %8.1f GB/s  ratio %.3f (read+write, %llu runs; goal: "
               ">= 0.9x bench_cub's DeviceRunLengthEncode::Encode i32, its ms / 0.9)\n",
               "run_length_encode_i32", ms, gbs, gbs / copy_gbs, (unsigned long long)runs);
        bench_csv_row("run_length_encode_i32", "2^28", ms, gbs, "GB/s read+write", gbs / copy_gbs,
                      BENCH_CSV_NONE);
        TRY(gpuk_buffer_destroy(ctx, rle_lengths));
    }
    if (wanted("sort_")) { /* radix sorts against bench_cub's DeviceRadixSort lines on the same
                              keys */
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &sort_vals));
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = N28 * 4 }, &sort_vals_out));
        sort_keys_fill(N28, 4);
        sort_line("sort_keys_u32", N28, w_sort_u32, ">= 1.0x bench_cub's SortKeys u32");
        sort_line("sort_pairs_u32", N28, w_sort_pairs, ">= 0.9x bench_cub's SortPairs u32");
        sort_line("sort_keys_u32", (size_t)1 << 16, w_sort_u32, "<= 1.5x bench_cub's 2^16 time");
        sort_keys_fill(N28 / 2, 8);
        sort_line("sort_keys_u64", N28 / 2, w_sort_u64, ">= 0.9x bench_cub's SortKeys u64");
        TRY(gpuk_buffer_destroy(ctx, sort_vals));
        TRY(gpuk_buffer_destroy(ctx, sort_vals_out));
    }
    /* cos^2 + sin^2 on x = 0, 1, ..., 1e7 - 1: past |x| = 105615 sinf/cosf take the slow path */
    TRY(gpuk_iota_f32(ctx, S, at0(x), 10000000, 0.0f, 1.0f));
    n_cur = 10000000;
    if (wanted("cos2_plus_sin2_f32")) {
        double ms = time_ms(w_c2s2);
        printf("%-34s n=1e7  %9.3f ms (goal <= 0.20 ms)\n", "cos2_plus_sin2_f32 x=0..1e7", ms);
        bench_csv_row("cos2_plus_sin2_f32 x=0..1e7", "1e7", ms, ms, "ms", BENCH_CSV_NONE, 0.20);
    }
    if (wanted("selu_f32 x1000")) { /* SELU on 1e6: host wall time per call, launch included,
                                       1000 calls back to back */
        double t0, per[BENCH_REPEATS];
        int rep, i;
        n_cur = 1000000;
        for (rep = 0; rep < BENCH_REPEATS; rep++) {
            TRY(gpuk_ctx_sync(ctx));
            t0 = now_ms();
            for (i = 0; i < 1000; i++) w_selu();
            TRY(gpuk_stream_sync(ctx, S));
            per[rep] = (now_ms() - t0) * 1000.0 / 1000.0;
        }
        qsort(per, BENCH_REPEATS, sizeof per[0], cmp_double);
        printf("%-34s n=1e6  %9.3f us per call, launch included (goal <= 10 us)\n", "selu_f32 x1000 back to back", per[BENCH_REPEATS / 2]);
        bench_csv_row("selu_f32 x1000 back to back", "1e6", per[BENCH_REPEATS / 2] / 1e3, per[BENCH_REPEATS / 2], "us per call",
                      BENCH_CSV_NONE, 10.0);
    }
    bench_csv_close();
    TRY(gpuk_ctx_destroy(ctx));
    return 0;
}
