/* examples/12_mpi_heat.c - the 2D heat equation over MPI ranks, one GPU a rank: the grid's
   interior rows are split in bands, each rank steps its band with gpuk_heat_step_f64, and
   neighbours swap their edge rows (halos) through MPI every step. Ranks on one node take its
   GPUs round-robin (several share a GPU where there are more ranks than GPUs). The halos
   go through pinned host buffers, or straight from device memory where the MPI library says
   it is CUDA-aware (Open MPI's MPIX_Query_cuda_support). Rank 0 gathers the result and
   checks it against one GPU stepping the whole grid (gpuk_heat_steps_f64): equal bit for bit,
   since every cell sees the same operations in the same order.
   Default 512^2, 200 steps; --full 4096^2, 2000 steps; --size N and --steps S for any other
   (a strong-scaling run: --size 16384 holds 1 GiB of doubles a rank on two ranks).
   Run:   mpirun -np 4 build/mpi_heat            (one node; add --oversubscribe for more ranks
          mpirun -np 8 -H a:4,b:4 build/mpi_heat  than cores; srun -n 8 under Slurm)
   Build: mpicc -std=c99 -O2 -I. examples/12_mpi_heat.c -o build/mpi_heat -lpng -lm -ldl
   For thousands of ranks one would overlap the halo exchange with the band's interior
   (non-blocking MPI_Isend/Irecv while a kernel steps the rows that need no halo), use 2-D
   blocks instead of row bands (halos shrink from n to n/sqrt(ranks) a side), and gather
   nothing to one rank (parallel I/O for pictures and checks on samples). */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif

static const char ex_name[] = "12_mpi_heat";
static const double ALPHA = 0.2; /* k dt / h^2: stable up to 1/4 */

/* The start: the top edge held at 1, the other edges at 0, a hot disc in the middle. */
static double initial(size_t i, size_t j, size_t n) {
    const double y = (double)i / (double)(n - 1) - 0.5, x = (double)j / (double)(n - 1) - 0.5;
    if (i == 0) return 1.0;
    if (i == n - 1 || j == 0 || j == n - 1) return 0.0;
    return x * x + y * y < 0.04 ? 1.0 : 0.0;
}

static int cuda_aware_mpi(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

/* A ctx on this rank's GPU: local rank (ranks sharing the node) modulo the node's GPUs.
   NULL after printing why (each rank says it: they may be on different machines). */
static gpuk_ctx* rank_ctx(int rank, int local_rank, int* device) {
    int count = 0;
    gpuk_ctx* ctx = NULL;
    if (gpuk_init(&(gpuk_desc){ .logger = { gpuk_log_stderr, NULL } }) != GPUK_OK ||
        gpuk_device_count(&count) != GPUK_OK || count == 0) {
        fprintf(stderr, "%s rank %d: no GPU to run on%s\n", ex_name, rank, count == 0 ? "" : " (see above)");
        return NULL;
    }
    *device = local_rank % count;
    if (gpuk_ctx_create(&(gpuk_ctx_desc){ .device = *device }, &ctx) != GPUK_OK) return NULL;
    return ctx;
}

/* One GPU steps the whole grid: the reference (rank 0). */
static int single_gpu(gpuk_ctx* ctx, const double* start, size_t n, unsigned steps, double* out, double* ms) {
    gpuk_buffer field, scratch;
    double t0;
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { start, n * n * 8 }, .label = "field" }, &field));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * n * 8, .label = "scratch" }, &scratch));
    TRY(gpuk_ctx_sync(ctx));
    t0 = ex_now_ms();
    TRY(gpuk_heat_steps_f64(ctx, GPUK_DEFAULT_STREAM, gpuk_at2d(field, 0, n, n, 0), gpuk_at2d(scratch, 0, n, n, 0), ALPHA,
                            steps));
    TRY(gpuk_ctx_sync(ctx));
    *ms = ex_now_ms() - t0;
    TRY(gpuk_buffer_read(ctx, field, 0, out, n * n * 8));
    TRY(gpuk_buffer_destroy(ctx, field));
    TRY(gpuk_buffer_destroy(ctx, scratch));
    return 0;
}

/* This rank's band: global interior rows [r0, r1) with a halo row above and below (the global
   edge rows for the first and last rank, held fixed). Steps it, swapping halos; returns the
   band's rows (r1 - r0 of them) in out. */
static int run_band(gpuk_ctx* ctx, int rank, int size, size_t n, size_t r0, size_t r1, unsigned steps, int direct,
                    double* out, double* ms) {
    const size_t rows = r1 - r0 + 2, row_bytes = n * 8;
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    double* start = (double*)malloc(rows * row_bytes);
    gpuk_buffer buf[2];
    gpuk_pinned pin;
    double* halo; /* pinned: [send up][send down][from up][from down], a row each */
    size_t i, j;
    unsigned s;
    int cur = 0;
    double t0;
    if (!start) { fprintf(stderr, "%s: out of host memory\n", ex_name); return 1; }
    for (i = 0; i < rows; i++)
        for (j = 0; j < n; j++) start[i * n + j] = initial(r0 - 1 + i, j, n);
    for (i = 0; i < 2; i++)
        TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { start, rows * row_bytes }, .label = "band" }, &buf[i]));
    free(start);
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = 4 * row_bytes, .label = "halos" }, &pin));
    halo = (double*)gpuk_pinned_ptr(ctx, pin);
    TRY(gpuk_kernels_load(ctx, "heat_step_f64")); /* its first-use JIT now, not in the timing */
    TRY(gpuk_ctx_sync(ctx));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = ex_now_ms();
    for (s = 0; s < steps; s++) {
        /* the band's interior rows step; its halo rows (its first and last) are copied */
        TRY(gpuk_heat_step_f64(ctx, GPUK_DEFAULT_STREAM, gpuk_at2d(buf[1 - cur], 0, rows, n, 0),
                               gpuk_at2d(buf[cur], 0, rows, n, 0), ALPHA));
        cur = 1 - cur;
        if (direct) { /* CUDA-aware MPI reads and writes device memory once the step is done */
            const double* d = (const double*)(uintptr_t)gpuk_buffer_devptr(ctx, buf[cur]);
            TRY(gpuk_ctx_sync(ctx));
            MPI_Sendrecv(d + n, (int)n, MPI_DOUBLE, up, 0, (double*)d, (int)n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(d + (rows - 2) * n, (int)n, MPI_DOUBLE, down, 1, (double*)d + (rows - 1) * n, (int)n, MPI_DOUBLE,
                         down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            continue;
        }
        /* through pinned host rows: the reads wait for the step (stream-less copies follow it) */
        if (up != MPI_PROC_NULL) TRY(gpuk_buffer_read(ctx, buf[cur], row_bytes, halo, row_bytes));
        if (down != MPI_PROC_NULL) TRY(gpuk_buffer_read(ctx, buf[cur], (rows - 2) * row_bytes, halo + n, row_bytes));
        MPI_Sendrecv(halo, (int)n, MPI_DOUBLE, up, 0, halo + 2 * n, (int)n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(halo + n, (int)n, MPI_DOUBLE, down, 1, halo + 3 * n, (int)n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (up != MPI_PROC_NULL) TRY(gpuk_buffer_write(ctx, buf[cur], 0, halo + 2 * n, row_bytes));
        if (down != MPI_PROC_NULL) TRY(gpuk_buffer_write(ctx, buf[cur], (rows - 1) * row_bytes, halo + 3 * n, row_bytes));
    }
    TRY(gpuk_ctx_sync(ctx));
    *ms = ex_now_ms() - t0;
    TRY(gpuk_buffer_read(ctx, buf[cur], row_bytes, out, (r1 - r0) * row_bytes));
    TRY(gpuk_pinned_destroy(ctx, pin));
    for (i = 0; i < 2; i++) TRY(gpuk_buffer_destroy(ctx, buf[i]));
    return 0;
}

int main(int argc, char** argv) {
    int rank, size, local_rank, device = -1, rc, ok, all_ok, direct, r;
    MPI_Comm node;
    ex_opts o;
    gpuk_ctx* ctx;
    size_t n, r0, r1, i, j;
    unsigned steps;
    double ms = 0, ms_max = 0, ms_single = 0;
    double *band = NULL, *whole = NULL, *ref = NULL, *start = NULL;
    int *counts = NULL, *displs = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    if ((rc = ex_parse(argc, argv, ex_name, "2D heat equation over MPI ranks, one GPU a rank", &o)) >= 0) {
        MPI_Finalize();
        return rc;
    }
    n = o.size ? o.size : o.full ? 4096 : 512; /* --size, --steps: e.g. each rank's band >= 1 GiB */
    steps = o.steps ? o.steps : o.full ? 2000 : 200;
    if ((size_t)size > n - 2) {
        if (rank == 0) fprintf(stderr, "%s: %d ranks for %zu interior rows\n", ex_name, size, n - 2);
        MPI_Finalize();
        return 1;
    }
    /* every rank needs a GPU, or none computes (a collective would wait for the missing one) */
    ctx = rank_ctx(rank, local_rank, &device);
    ok = ctx != NULL;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (ctx) gpuk_ctx_destroy(ctx);
        MPI_Finalize();
        return EX_NO_GPU;
    }
    direct = cuda_aware_mpi();
    r0 = 1 + (n - 2) * (size_t)rank / (size_t)size;
    r1 = 1 + (n - 2) * (size_t)(rank + 1) / (size_t)size;
    band = (double*)malloc((r1 - r0) * n * 8);
    if (rank == 0) {
        whole = (double*)malloc(n * n * 8);
        ref = (double*)malloc(n * n * 8);
        start = (double*)malloc(n * n * 8);
        counts = (int*)malloc((size_t)size * sizeof(int));
        displs = (int*)malloc((size_t)size * sizeof(int));
    }
    ok = band && (rank != 0 || (whole && ref && start && counts && displs));
    if (ok) ok = run_band(ctx, rank, size, n, r0, r1, steps, direct, band, &ms) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        fprintf(stderr, "%s rank %d: a rank failed; stopping\n", ex_name, rank);
        MPI_Abort(MPI_COMM_WORLD, 1); /* the example's own exit, never gpuk's */
    }
    MPI_Reduce(&ms, &ms_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (r = 0; r < size; r++) {
            const size_t a = 1 + (n - 2) * (size_t)r / (size_t)size, b = 1 + (n - 2) * (size_t)(r + 1) / (size_t)size;
            counts[r] = (int)((b - a) * n);
            displs[r] = (int)(a * n);
        }
    MPI_Gatherv(band, (int)((r1 - r0) * n), MPI_DOUBLE, whole, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    rc = 0;
    if (rank == 0) {
        long bad = 0;
        int computed;
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                start[i * n + j] = initial(i, j, n);
                if (i == 0 || i == n - 1) whole[i * n + j] = start[i * n + j]; /* the fixed edge rows */
            }
        rc = single_gpu(ctx, start, n, steps, ref, &ms_single);
        for (i = 0; i < n * n && rc == 0; i++) bad += memcmp(&whole[i], &ref[i], 8) != 0;
        computed = rc == 0;
        if (computed && n <= 8192) { /* larger grids (scaling runs) make pictures of gigabytes: none */
            float* f = (float*)malloc(n * n * sizeof(float));
            uint8_t* rgb = NULL;
            if (f) {
                for (i = 0; i < n * n; i++) f[i] = (float)whole[i];
                rgb = ex_field_rgb(f, (int)n, (int)n, 0.0, 1.0);
            }
            if (!rgb || ex_png(o.out_dir, "mpi_heat.png", (int)n, (int)n, 3, rgb) != 0) rc = 1;
            free(rgb);
            free(f);
        }
        if (computed) {
            printf("%s: %d rank(s), %zu^2 grid, %u steps, halos %s; bands %.1f ms (slowest rank), one GPU %.1f ms\n",
                   ex_name, size, n, steps, direct ? "device to device (CUDA-aware MPI)" : "through pinned host rows",
                   ms_max, ms_single);
            rc = ex_result(bad == 0 && rc == 0, "%ld of %zu cells differ from the single-GPU run; picture %s%s",
                           bad, n * n, n <= 8192 ? o.out_dir : "none above 8192^2",
                           n <= 8192 ? "/mpi_heat.png" : "");
        }
    }
    free(band); free(whole); free(ref); free(start); free(counts); free(displs);
    gpuk_ctx_destroy(ctx);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
