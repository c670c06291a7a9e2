/* bench/scan_baseline.h - runs the baseline PTX of a built-in scan by hand (module load, a
   zeroed scratch of its own, gpuk_launch), so a test or bench on a GPU where gpuk picks a
   faster variant can still run and time the baseline. Shared by bench/bench_kernels.c (times
   it) and tests/gpu/gpu_kernels.c (checks it): tests may include from bench/, not the reverse.
   Include after gpuk.h with GPUK_IMPLEMENTATION (it reads the generated tables). */
#ifndef SCAN_BASELINE_H
#define SCAN_BASELINE_H

typedef struct scan_baseline {
    gpuk_module module;
    gpuk_kernel kernel;
    gpuk_buffer scratch;   /* ticket and epoch, sweep cursor, a status word a tile, two values a tile */
    size_t elem, tiles, tile;
} scan_baseline;

/* Baseline of kernel id (a scan of elem-byte elements) for up to n elements. */
static gpuk_result scan_baseline_open(gpuk_ctx* ctx, int id, size_t elem, size_t n, scan_baseline* b) {
    const gpuk__builtin_ptx* p = gpuk__builtin_ptx_of(id);
    char* block = NULL;
    const char* text;
    gpuk_result r = GPUK_OK;
    memset(b, 0, sizeof *b);
    b->elem = elem;
    b->tile = gpuk__scan_tile(elem);
    b->tiles = n / b->tile + 1;
    /* the PTX as gpuk.h stores it (packed), unpacked the library's own way */
    if (!(text = gpuk__builtin_text("scan_baseline_open", p, &block, &r))) return r;
    r = gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { text, 0 }, .label = p->name }, &b->module);
    gpuk__free(block);
    if (r == GPUK_OK) r = gpuk_kernel_get(ctx, b->module, p->name, &b->kernel);
    if (r == GPUK_OK) r = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 16 + b->tiles * 24 }, &b->scratch);
    if (r == GPUK_OK) r = gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, b->scratch, 0, 0, 4, (16 + b->tiles * 24) / 4);
    return r;
}

static gpuk_result scan_baseline_run(gpuk_ctx* ctx, scan_baseline* b, gpuk_stream s, gpuk_devptr out,
                                     gpuk_devptr in, size_t n) {
    gpuk_devptr scratch = gpuk_buffer_devptr(ctx, b->scratch), values = scratch + 16 + 8 * b->tiles;
    unsigned long long n64 = n, capacity = b->tiles;
    uint32_t ahead = gpuk__scan_ahead(gpuk_ctx_device_info(ctx), b->elem);
    void* args[7] = { &out, &in, &n64, &scratch, &values, &ahead, &capacity };
    return gpuk_launch(ctx, b->kernel, &(gpuk_launch_desc){ .grid = { (uint32_t)((n + b->tile - 1) / b->tile) },
                       .block = { 256 }, .stream = s, .args = args, .num_args = 7 });
}

static void scan_baseline_close(gpuk_ctx* ctx, scan_baseline* b) {
    gpuk_module_unload(ctx, b->module);
    gpuk_buffer_destroy(ctx, b->scratch);
}
#endif
