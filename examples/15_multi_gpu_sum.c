/* examples/15_multi_gpu_sum.c - one sum over data spread over every GPU: GPU i draws its share
   of n uniform random doubles (Philox counts by element, so with the share's first element as
   offset the shares are exactly the numbers one GPU would draw for all n) and sums it with
   gpuk_sum_f64; the partial sums are gathered two ways: read to the host and added there, and
   copied into GPU 0 with gpuk_buffer_copy_peer (peer to peer where the devices have a path,
   through the host where not) and summed there. Both totals are checked against the CPU's sum
   of the same numbers and GPU 0 alone summing all n. Prints each GPU's time and bandwidth, the
   time on all GPUs against GPU 0 alone, and each gather's time. Default 2^25 values, --full
   2^28 (2 GiB); --gpus N uses N ctxs (several may share a device).
   cc -std=c99 -O2 -I.. 15_multi_gpu_sum.c -o multi_gpu_sum -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"

static const char ex_name[] = "15_multi_gpu_sum";
enum { RUNS = 3, REPS = 5 };
static const uint64_t SEED = 15;

typedef struct gpu {
    gpuk_ctx* ctx;
    gpuk_buffer x, part; /* the share, its sum */
    size_t first, n;     /* the share: elements [first, first + n) */
} gpu;

typedef struct job {
    gpu* g;
    int count;
} job;

/* Queues every GPU's sum of its share. */
static gpuk_result queue_sums(void* user) {
    const job* j = (const job*)user;
    gpuk_result r = GPUK_OK;
    int i;
    for (i = 0; r == GPUK_OK && i < j->count; i++)
        r = gpuk_sum_f64(j->g[i].ctx, GPUK_DEFAULT_STREAM, gpuk_at(j->g[i].part, 0), gpuk_at(j->g[i].x, 0), j->g[i].n);
    return r;
}

/* The share's buffers, its numbers drawn, its sum poisoned with a NaN. */
static gpuk_result gpu_setup(gpu* g, gpuk_ctx* ctx, size_t first, size_t n) {
    gpuk_result r;
    g->ctx = ctx;
    g->first = first;
    g->n = n;
    if ((r = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(double), .label = "x" }, &g->x)) ||
        (r = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof(double), .label = "part" }, &g->part)) ||
        (r = gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, g->part, 0, 0xFFFFFFFFu, 4, 2)))
        return r;
    return gpuk_random_uniform_f64(ctx, GPUK_DEFAULT_STREAM, gpuk_at(g->x, 0), n, SEED, first);
}

/* Sum of v[0..n) with Neumaier's compensation: the reference, good to about one rounding. */
static double cpu_sum(const double* v, size_t n) {
    double s = 0, c = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double t = s + v[i];
        c += fabs(s) >= fabs(v[i]) ? (s - t) + v[i] : (v[i] - t) + s;
        s = t;
    }
    return s + c;
}

int main(int argc, char** argv) {
    gpuk_ctx* ctx[EX_MAX_GPUS];
    gpu g[EX_MAX_GPUS], one;
    gpuk_buffer parts, total;
    ex_opts o;
    int count, i, ok = 1;
    int rc = ex_begin_gpus(argc, argv, ex_name, "a sum over data spread over all GPUs", &o, ctx,
                           EX_MAX_GPUS, &count);
    size_t n;
    double *h, t, t_one, t_all, t_host, t_peer, cpu_ms, ref, host_total = 0, peer_total = 0,
                                                                    one_total = 0, part;
    float ms[EX_MAX_GPUS], ms_one;
    if (rc >= 0) return rc;
    n = o.full ? (size_t)1 << 28 : (size_t)1 << 25;
    if (!(h = (double*)malloc(n * sizeof(double)))) return ex_result(0, "out of host memory");
    TRY(gpu_setup(&one, ctx[0], 0, n)); /* the reference: GPU 0 alone, all n */
    for (i = 0; i < count; i++) {
        size_t first = n / (size_t)count * (size_t)i, last = i + 1 == count ? n : first + n / (size_t)count;
        TRY(gpu_setup(&g[i], ctx[i], first, last - first));
    }
    /* peer access enabled both ways, where the devices have a path (NVLink or PCIe), lets the
       copies into GPU 0 go straight over it; without, the driver stages them through the host */
    for (i = 1; i < count; i++) {
        int dev = gpuk_ctx_device_info(ctx[i])->ordinal, dev0 = gpuk_ctx_device_info(ctx[0])->ordinal;
        bool can = false, back = false;
        if (dev != dev0) TRY(gpuk_device_can_access_peer(dev, dev0, &can));
        if (dev != dev0) TRY(gpuk_device_can_access_peer(dev0, dev, &back));
        can = can && back;
        if (can) TRY(gpuk_ctx_enable_peer_access(ctx[0], ctx[i]));
        if (can) TRY(gpuk_ctx_enable_peer_access(ctx[i], ctx[0]));
        printf("GPU %d -> GPU 0: %s\n", i, dev == dev0 ? "the same device" : can ? "peer to peer" : "through the host");
    }
    t_one = ex_time_gpus(ctx, NULL, 1, RUNS, REPS, queue_sums, &(job){ &one, 1 }, &ms_one);
    t_all = ex_time_gpus(ctx, NULL, count, RUNS, REPS, queue_sums, &(job){ g, count }, ms);
    if (t_one < 0 || t_all < 0) return ex_result(0, "a sum failed");
    for (i = 0; i < count; i++)
        printf("GPU %d: %10zu values from %10zu, %7.3f ms, %6.0f GB/s\n", i, g[i].n, g[i].first, ms[i],
               (double)g[i].n * sizeof(double) / ms[i] / 1e6);
    printf("%d GPU%s: %.3f ms a sum (wall clock); GPU 0 alone: %.3f ms (%.3f on the GPU), %.0f GB/s; speedup %.2fx\n",
           count, count > 1 ? "s" : "", t_all, t_one, ms_one, (double)n * sizeof(double) / ms_one / 1e6, t_one / t_all);

    /* gather 1: each partial sum to the host, added in GPU order */
    t = ex_now_ms();
    for (i = 0; i < count; i++) {
        TRY(gpuk_buffer_read(ctx[i], g[i].part, 0, &part, sizeof part));
        host_total += part;
    }
    t_host = ex_now_ms() - t;
    /* gather 2: each partial sum into GPU 0, summed there */
    TRY(gpuk_buffer_create(ctx[0], &(gpuk_buffer_desc){ .bytes = (size_t)count * sizeof(double), .label = "parts" }, &parts));
    TRY(gpuk_buffer_create(ctx[0], &(gpuk_buffer_desc){ .bytes = sizeof(double), .label = "total" }, &total));
    TRY(gpuk_buffer_memset(ctx[0], GPUK_DEFAULT_STREAM, total, 0, 0xFFFFFFFFu, 4, 2));
    t = ex_now_ms();
    for (i = 0; i < count; i++) TRY(gpuk_buffer_copy_peer(ctx[0], parts, (size_t)i * sizeof(double), ctx[i], g[i].part, 0, sizeof(double)));
    TRY(gpuk_sum_f64(ctx[0], GPUK_DEFAULT_STREAM, gpuk_at(total, 0), gpuk_at(parts, 0), (size_t)count));
    TRY(gpuk_buffer_read(ctx[0], total, 0, &peer_total, sizeof peer_total));
    t_peer = ex_now_ms() - t;
    TRY(gpuk_buffer_read(ctx[0], one.part, 0, &one_total, sizeof one_total));

    /* the CPU: the numbers the GPUs drew, each share read back to its place */
    for (i = 0; i < count; i++) TRY(gpuk_buffer_read(ctx[i], g[i].x, 0, h + g[i].first, g[i].n * sizeof(double)));
    t = ex_now_ms();
    ref = cpu_sum(h, n);
    cpu_ms = ex_now_ms() - t;
    printf("gathered on the host %.3f ms: %.17g\n", t_host, host_total);
    printf("gathered on GPU 0    %.3f ms: %.17g\n", t_peer, peer_total);
    printf("GPU 0 alone:                 %.17g\nCPU (compensated, %.0f ms):  %.17g\n", one_total, cpu_ms, ref);
    /* tree sums of n values near 0.5 round far below 1e-12 of the total; the poisoned NaN or a
       wrong share (a number drawn twice or missed moves the sum by ~0.5) fail the test */
    if (!(fabs(host_total - ref) <= 1e-12 * ref) || !(fabs(peer_total - ref) <= 1e-12 * ref) ||
        !(fabs(one_total - ref) <= 1e-12 * ref) || !(fabs(ref - 0.5 * (double)n) < 0.01 * (double)n))
        ok = 0;
    if (ex_end_gpus(ex_name, ctx, count)) ok = 0;
    free(h);
    return ex_result(ok, "sum of %zu doubles over %d GPUs %s the CPU and GPU 0 alone, %.3f ms vs %.3f ms, %.2fx",
                     n, count, ok ? "matches" : "does NOT match", t_all, t_one, t_one / t_all);
}
