/* examples/24_sort_particles.c - particles sorted into the cells of a grid, the first step of a
   neighbour search (each particle then looks only at its own and the next cells): a kernel of
   the gallery's own gives each particle its cell of a 256 x 256 grid, row by row;
   gpuk_sort_index_u32 orders the cells stably by their low 16 bits only (two 8-bit passes
   instead of four) and gives each particle's index in the input; the gallery's gather puts
   the positions in that order; gpuk_run_length_encode_u32 gives each occupied cell and how
   many particles it holds. The CPU does the same by a counting sort; the order, positions and
   cells must match bit for bit. A picture of the 8 x 8 cells in a corner, each particle
   coloured by its place in the sorted order: memory now walks the grid cell by cell.
   Default 2^20 particles, --full 2^24.
   cc -std=c99 -O2 -I.. 24_sort_particles.c -o sort_particles -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "gallery_kernels.h"
#include "example_util.h"

static const char ex_name[] = "24_sort_particles";

enum { G = 256, BITS = 16 /* G * G cells: 2^16 */, ZOOM = 8, PIC = 512 };

/* The cell of (x, y) as the gallery's cell_of finds it: x * G rounded to a float, truncated,
   clamped to the grid (C's float multiply rounds as the kernel's __fmul_rn). */
static uint32_t cpu_cell(float x, float y) {
    const float fx = x * (float)G, fy = y * (float)G;
    const uint32_t cx = fx <= 0.0f ? 0u : fx >= (float)(G - 1) ? G - 1 : (uint32_t)fx;
    const uint32_t cy = fy <= 0.0f ? 0u : fy >= (float)(G - 1) ? G - 1 : (uint32_t)fy;
    return cy * G + cx;
}

/* Stable counting sort of the particles by cell: order[k] = the input index of the k-th;
   start[c] = where cell c's particles begin (G * G + 1 of them). */
static void cpu_sort(const uint32_t* cell, size_t n, uint32_t* order, uint32_t* start) {
    size_t i, c;
    memset(start, 0, (G * G + 1) * sizeof *start);
    for (i = 0; i < n; i++) start[cell[i] + 1]++;
    for (c = 0; c < G * G; c++) start[c + 1] += start[c];
    for (i = 0; i < n; i++) order[start[cell[i]]++] = (uint32_t)i;
    for (c = G * G; c > 0; c--) start[c] = start[c - 1]; /* back to the starts */
    start[0] = 0;
}

/* The corner's ZOOM x ZOOM cells, PIC / ZOOM pixels a cell, their grid in grey, each particle
   a dot coloured by its rank among the corner's particles in the sorted order. */
static void draw_corner(uint8_t* rgb, const float* xs, const float* ys, const uint32_t* cells,
                        size_t n) {
    size_t i, shown = 0, total = 0;
    int q;
    memset(rgb, 255, (size_t)PIC * PIC * 3);
    for (q = 0; q <= ZOOM; q++) {
        const int at = q * PIC / ZOOM;
        ex_rect(rgb, PIC, PIC, at - 1, 0, at + 1, PIC, 0xbdbdbd);
        ex_rect(rgb, PIC, PIC, 0, at - 1, PIC, at + 1, 0xbdbdbd);
    }
    for (i = 0; i < n; i++) total += cells[i] % G < ZOOM && cells[i] / G < ZOOM;
    for (i = 0; i < n; i++) {
        uint8_t c[3];
        int px, py;
        if (!(cells[i] % G < ZOOM && cells[i] / G < ZOOM)) continue;
        ex_colormap((double)shown++ / (double)(total > 1 ? total - 1 : 1), c);
        px = (int)(xs[i] * (float)(G * PIC / ZOOM));
        py = PIC - 1 - (int)(ys[i] * (float)(G * PIC / ZOOM));
        ex_rect(rgb, PIC, PIC, px - 2, py - 2, px + 3, py + 3,
                (uint32_t)c[0] << 16 | (uint32_t)c[1] << 8 | c[2]);
    }
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "particles sorted into grid cells", &o, &ctx);
    gallery_kernels_kernels k;
    gpuk_buffer x, y, xs, ys, cell, sorted, order, run_cell, run_len, runs;
    gpuk_timer timer;
    gpuk_stream s0 = GPUK_DEFAULT_STREAM;
    float *hx, *hy, *gx, *gy, ms = 0;
    uint32_t *hcell, *horder, *start, *gorder, *gcell, *grun;
    uint64_t *glen, nruns = 0;
    size_t n, i, c, cells_used = 0, bad = 0;
    double t, cpu_ms;
    uint8_t* rgb;
    int rep, ok = 1;
    if (rc >= 0) return rc;
    n = o.full ? (size_t)1 << 24 : (size_t)1 << 20;
    hx = (float*)malloc(n * 4); hy = (float*)malloc(n * 4);
    gx = (float*)malloc(n * 4); gy = (float*)malloc(n * 4);
    hcell = (uint32_t*)malloc(n * 4); horder = (uint32_t*)malloc(n * 4);
    gorder = (uint32_t*)malloc(n * 4); gcell = (uint32_t*)malloc(n * 4);
    grun = (uint32_t*)malloc(n * 4); glen = (uint64_t*)malloc(n * 8);
    start = (uint32_t*)malloc((G * G + 1) * 4);
    rgb = (uint8_t*)malloc((size_t)PIC * PIC * 3);
    if (!hx || !hy || !gx || !gy || !hcell || !horder || !gorder || !gcell || !grun || !glen ||
        !start || !rgb)
        return ex_result(0, "out of host memory");
    TRY(gallery_kernels_load(ctx, &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "x" }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "y" }, &y));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "xs" }, &xs));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "ys" }, &ys));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "cell" }, &cell));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "sorted" }, &sorted));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "order" }, &order));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "run_cell" },
                           &run_cell));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 8, .label = "run_len" },
                           &run_len));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 8, .label = "runs" }, &runs));
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_random_uniform_f32(ctx, s0, gpuk_at(x, 0), n, 1, 0));
    TRY(gpuk_random_uniform_f32(ctx, s0, gpuk_at(y, 0), n, 2, 0));
    /* the second time round is timed: the first loads the kernels and the sort's scratch */
    for (rep = 0; rep < 2; rep++) {
        gpuk_grid launch = gpuk_grid_1d(n, 256);
        TRY(gpuk_timer_start(ctx, s0, &timer));
        TRY(gallery_kernels_cell_of(ctx, &k, &launch, gpuk_at(x, 0), gpuk_at(y, 0),
                                    gpuk_at(cell, 0), G, (unsigned)n));
        TRY(gpuk_sort_index_u32(ctx, s0, gpuk_at(sorted, 0), gpuk_at(order, 0), gpuk_at(cell, 0), n,
                                0, 0, BITS));
        TRY(gallery_kernels_gather_f32(ctx, &k, &launch, gpuk_at(x, 0), gpuk_at(order, 0),
                                       gpuk_at(xs, 0), (unsigned)n));
        TRY(gallery_kernels_gather_f32(ctx, &k, &launch, gpuk_at(y, 0), gpuk_at(order, 0),
                                       gpuk_at(ys, 0), (unsigned)n));
        TRY(gpuk_run_length_encode_u32(ctx, s0, gpuk_at(run_cell, 0), gpuk_at(run_len, 0),
                                       gpuk_at(runs, 0), gpuk_at(sorted, 0), n));
        TRY(gpuk_timer_stop(ctx, &timer, &ms));
    }
    TRY(gpuk_buffer_read(ctx, x, 0, hx, n * 4));
    TRY(gpuk_buffer_read(ctx, y, 0, hy, n * 4));
    TRY(gpuk_buffer_read(ctx, order, 0, gorder, n * 4));
    TRY(gpuk_buffer_read(ctx, sorted, 0, gcell, n * 4));
    TRY(gpuk_buffer_read(ctx, xs, 0, gx, n * 4));
    TRY(gpuk_buffer_read(ctx, ys, 0, gy, n * 4));
    TRY(gpuk_buffer_read(ctx, runs, 0, &nruns, 8));
    if (nruns > n) return ex_result(0, "%llu runs reported for %zu particles",
                                    (unsigned long long)nruns, n);
    TRY(gpuk_buffer_read(ctx, run_cell, 0, grun, (size_t)nruns * 4));
    TRY(gpuk_buffer_read(ctx, run_len, 0, glen, (size_t)nruns * 8));

    t = ex_now_ms(); /* the CPU: cells, counting sort, gather */
    for (i = 0; i < n; i++) hcell[i] = cpu_cell(hx[i], hy[i]);
    cpu_sort(hcell, n, horder, start);
    cpu_ms = ex_now_ms() - t;
    for (i = 0; i < n; i++) { /* order, cells and positions bit for bit */
        const uint32_t j = horder[i];
        bad += gorder[i] != j || gcell[i] != hcell[j] || memcmp(&gx[i], &hx[j], 4) != 0 ||
               memcmp(&gy[i], &hy[j], 4) != 0;
    }
    if (bad) { printf("MISMATCH: %zu of %zu particles out of the CPU's order\n", bad, n); ok = 0; }
    for (c = 0; c < G * G; c++) cells_used += start[c + 1] > start[c];
    if (nruns != cells_used) {
        printf("MISMATCH: %llu occupied cells, the CPU %zu\n", (unsigned long long)nruns,
               cells_used);
        ok = 0;
    }
    for (c = 0, i = 0; ok && c < G * G; c++) { /* each occupied cell, in order, with its count */
        if (start[c + 1] == start[c]) continue;
        if (grun[i] != c || glen[i] != start[c + 1] - start[c]) {
            printf("MISMATCH: run %zu is cell %u of %llu, the CPU's cell %zu of %u\n", i, grun[i],
                   (unsigned long long)glen[i], c, start[c + 1] - start[c]);
            ok = 0;
        }
        i++;
    }
    printf("%zu particles into %zu occupied cells of %d: GPU %.3f ms (cells, sort of 16 bits, "
           "gather, runs), CPU %.1f ms (cells, counting sort)\n", n, cells_used, G * G, ms, cpu_ms);
    draw_corner(rgb, gx, gy, gcell, n);
    if (ex_png(o.out_dir, "sort_particles.png", PIC, PIC, 3, rgb) != 0) ok = 0;
    TRY(gpuk_ctx_destroy(ctx));
    free(hx); free(hy); free(gx); free(gy); free(hcell); free(horder); free(gorder); free(gcell);
    free(grun); free(glen); free(start); free(rgb);
    return ex_result(ok, "%zu particles sorted into %zu cells on the GPU in %.3f ms, the same "
                     "order as the CPU's", n, cells_used, ms);
}
