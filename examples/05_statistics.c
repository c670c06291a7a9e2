/* examples/05_statistics.c - statistics with the built-ins: standard normal random numbers,
   sum, min, max, argmax, dot, norm, inclusive scan and a histogram, each timed on the GPU
   beside the CPU and checked against it in double; the histogram as a PNG bar chart with the
   normal curve over it. Default 2^22 numbers, --full 10^8.
   cc -std=c99 -O2 -I.. 05_statistics.c -o statistics -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "05_statistics";
enum { NBINS = 100, SCALE = 10 }; /* bins of width 1/SCALE over [-5, 5) */
enum { OP_RANDOM, OP_SUM, OP_MIN, OP_MAX, OP_ARGMAX, OP_DOT, OP_NORM, OP_SCAN, OP_HIST, OP_NUM };
static const char* const op_names[OP_NUM] = { "random normal", "sum", "min", "max", "argmax",
                                              "dot(x, x)", "norm", "inclusive scan", "histogram" };

/* The histogram as bars, with dots where a true normal distribution's counts would be. */
static int bar_chart(const char* dir, const uint64_t* counts, size_t n) {
    enum { W = 800, H = 400, BW = W / NBINS };
    static uint8_t rgb[W * H * 3];
    uint64_t top = 1;
    int b;
    for (b = 0; b < NBINS; b++) if (counts[b] > top) top = counts[b];
    memset(rgb, 255, sizeof rgb);
    for (b = 0; b < NBINS; b++) {
        double lo = (b - NBINS / 2) / (double)SCALE, hi = lo + 1.0 / SCALE;
        double expect = (double)n * 0.5 * (erf(hi / sqrt(2.0)) - erf(lo / sqrt(2.0)));
        int h = (int)((double)(H - 20) * (double)counts[b] / (double)top), e = (int)((double)(H - 20) * expect / (double)top);
        ex_rect(rgb, W, H, b * BW + 1, H - h, (b + 1) * BW - 1, H, 0x4292c6);
        ex_rect(rgb, W, H, b * BW + BW / 2 - 2, H - e - 2, b * BW + BW / 2 + 2, H - e + 2, 0xcb181d);
    }
    return ex_png(dir, "histogram.png", W, H, 3, rgb);
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "statistics of normal random numbers with the built-ins", &o, &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer x, scan, q, res, hist;
    gpuk_timer timer;
    gpuk_grid launch;
    gpuk_stream s0 = GPUK_DEFAULT_STREAM;
    float gpu_ms[OP_NUM] = { 0 }, *hx, *hs, g[5]; /* g: sum, min, max, dot, norm */
    double cpu_ms[OP_NUM] = { 0 }, t, sum = 0, abs_sum = 0, dot = 0, mean, sd;
    uint64_t arg = 0, counts[NBINS], cpu_counts[NBINS] = { 0 };
    size_t n, i, argmax = 0, scan_bad = 0;
    float mn, mx;
    int pass, op, ok = 1;
    uint64_t seed = 0x5eed;
    if (rc >= 0) return rc;
    n = o.full ? 100000000 : (size_t)1 << 22;
    launch = gpuk_grid_1d(n, 256);
    hx = (float*)malloc(n * sizeof(float));
    hs = (float*)malloc(n * sizeof(float));
    if (!hx || !hs) return ex_result(0, "out of host memory");
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "x" }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "scan" }, &scan));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(int32_t), .label = "bins" }, &q));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8 * sizeof(uint64_t), .label = "results" }, &res));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof counts, .label = "counts" }, &hist));
    TRY(gpuk_timer_create(ctx, &timer));
    /* pass 0 loads each kernel (JIT, the first use on the ctx); pass 1 is timed. res holds
       float results at elements 0..4 and the uint64 argmax at uint64 element 3 (bytes 24..31). */
    for (pass = 0; pass < 2; pass++) {
#define TIMED(op, call) do { TRY(gpuk_timer_start(ctx, s0, &timer)); TRY(call); \
                             TRY(gpuk_timer_stop(ctx, &timer, &gpu_ms[op])); } while (0)
        TIMED(OP_RANDOM, gpuk_random_normal_f32(ctx, s0, gpuk_at(x, 0), n, seed, 0));
        TIMED(OP_SUM, gpuk_sum_f32(ctx, s0, gpuk_at(res, 0), gpuk_at(x, 0), n));
        TIMED(OP_MIN, gpuk_min_f32(ctx, s0, gpuk_at(res, 1), gpuk_at(x, 0), n));
        TIMED(OP_MAX, gpuk_max_f32(ctx, s0, gpuk_at(res, 2), gpuk_at(x, 0), n));
        TIMED(OP_ARGMAX, gpuk_argmax_f32(ctx, s0, gpuk_at(res, 3), gpuk_at(x, 0), n));
        TIMED(OP_DOT, gpuk_dot_f32(ctx, s0, gpuk_at(res, 4), gpuk_at(x, 0), gpuk_at(x, 0), n));
        TIMED(OP_NORM, gpuk_norm2_f32(ctx, s0, gpuk_at(res, 5), gpuk_at(x, 0), n));
        TIMED(OP_SCAN, gpuk_scan_inclusive_f32(ctx, s0, gpuk_at(scan, 0), gpuk_at(x, 0), n));
        /* the histogram counts integers: x * 10 rounded down (a kernel of the gallery's own) */
        TRY(gpuk_timer_start(ctx, s0, &timer));
        TRY(gallery_kernels_quantize_f32(ctx, &k, &launch, gpuk_at(x, 0), gpuk_at(q, 0), (float)SCALE, (unsigned)n));
        TRY(gpuk_histogram_i32(ctx, s0, gpuk_at(hist, 0), NBINS, -NBINS / 2, NBINS / 2, gpuk_at(q, 0), n));
        TRY(gpuk_timer_stop(ctx, &timer, &gpu_ms[OP_HIST]));
#undef TIMED
    }
    TRY(gpuk_buffer_read(ctx, res, 0, g, sizeof(float) * 3));
    TRY(gpuk_buffer_read(ctx, res, 3 * sizeof(uint64_t), &arg, sizeof arg));
    TRY(gpuk_buffer_read(ctx, res, 4 * sizeof(float), &g[3], sizeof(float) * 2)); /* dot, norm: elements 4, 5 */
    TRY(gpuk_buffer_read(ctx, x, 0, hx, n * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, scan, 0, hs, n * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, hist, 0, counts, sizeof counts));

    /* the CPU does the same in double, op by op */
    t = ex_now_ms(); for (i = 0; i < n; i++) sum += hx[i]; cpu_ms[OP_SUM] = ex_now_ms() - t;
    t = ex_now_ms(); mn = hx[0]; for (i = 1; i < n; i++) if (hx[i] < mn) mn = hx[i]; cpu_ms[OP_MIN] = ex_now_ms() - t;
    t = ex_now_ms(); mx = hx[0]; for (i = 1; i < n; i++) if (hx[i] > mx) mx = hx[i]; cpu_ms[OP_MAX] = ex_now_ms() - t;
    t = ex_now_ms(); for (i = 1; i < n; i++) if (hx[i] > hx[argmax]) argmax = i; cpu_ms[OP_ARGMAX] = ex_now_ms() - t;
    t = ex_now_ms(); for (i = 0; i < n; i++) dot += (double)hx[i] * hx[i]; cpu_ms[OP_DOT] = ex_now_ms() - t;
    cpu_ms[OP_NORM] = cpu_ms[OP_DOT];
    t = ex_now_ms();
    {   /* prefix sums in double; every 997th element and the last checked, against a bound
           from the sum of magnitudes so far */
        double p = 0, pabs = 0;
        for (i = 0; i < n; i++) {
            p += hx[i];
            pabs += fabs(hx[i]);
            if ((i % 997 == 0 || i == n - 1) && !(fabs(hs[i] - p) <= 1e-5 * pabs + 1e-5)) scan_bad++;
        }
        abs_sum = pabs;
    }
    cpu_ms[OP_SCAN] = ex_now_ms() - t;
    t = ex_now_ms();
    for (i = 0; i < n; i++) {
        float scaled = hx[i] * (float)SCALE; /* one rounding, as the kernel's __fmul_rn */
        int b = (int)floorf(scaled) + NBINS / 2;
        if (b >= 0 && b < NBINS) cpu_counts[b]++;
    }
    cpu_ms[OP_HIST] = ex_now_ms() - t;
    mean = sum / (double)n;
    sd = sqrt(dot / (double)n - mean * mean);

    printf("%zu standard normal numbers (Philox, seed 0x%llx): mean %.5f, standard deviation %.5f\n", n,
           (unsigned long long)seed, mean, sd);
    printf("  %-15s %10s %10s\n", "", "GPU ms", "CPU ms");
    for (op = 0; op < OP_NUM; op++) {
        char cpu[32] = "-";
        if (op != OP_RANDOM) snprintf(cpu, sizeof cpu, "%.2f", cpu_ms[op]);
        printf("  %-15s %10.3f %10s\n", op_names[op], gpu_ms[op], cpu);
    }
#define CHECK(cond, ...) do { if (!(cond)) { ok = 0; printf("  MISMATCH: " __VA_ARGS__); printf("\n"); } } while (0)
    CHECK(fabs(g[0] - sum) <= 1e-5 * abs_sum + 1e-3, "sum %.9g, CPU %.9g", g[0], sum);
    CHECK(g[1] == mn, "min %.9g, CPU %.9g", g[1], mn);
    CHECK(g[2] == mx, "max %.9g, CPU %.9g", g[2], mx);
    CHECK(arg == argmax, "argmax %llu, CPU %zu", (unsigned long long)arg, argmax);
    CHECK(fabs(g[3] - dot) <= 1e-5 * dot, "dot %.9g, CPU %.9g", g[3], dot);
    CHECK(fabs(g[4] - sqrt(dot)) <= 1e-5 * sqrt(dot), "norm %.9g, CPU %.9g", g[4], sqrt(dot));
    CHECK(scan_bad == 0, "%zu sampled scan elements off", scan_bad);
    CHECK(memcmp(counts, cpu_counts, sizeof counts) == 0, "histogram counts differ");
    CHECK(fabs(mean) < 6.0 / sqrt((double)n) && fabs(sd - 1.0) < 6.0 * sqrt(0.5 / (double)n),
          "not a standard normal sample (mean %g, sd %g)", mean, sd);
#undef CHECK
    if (bar_chart(o.out_dir, counts, n) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    free(hx);
    free(hs);
    return ex_result(ok, "sum %.4g, min %.4f, max %.4f at %llu, norm %.5g, scan and %d-bin histogram of %zu values match the CPU",
                     (double)g[0], (double)g[1], (double)g[2], (unsigned long long)arg, (double)g[4], NBINS, n);
}
