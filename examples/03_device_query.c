/* examples/03_device_query.c - every CUDA device the driver sees (like deviceQuery), from
   gpuk_device_query, checked by a 1 MiB round trip through each device's memory; a bar
   chart of each device's free and used memory.
   cc -std=c99 -O2 -I.. 03_device_query.c -o device_query -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"

static const char ex_name[] = "03_device_query";

/* Writes 1 MiB of a pattern to device d and reads it back: 1 when it came back whole. */
static int round_trip(gpuk_ctx* ctx, double* ms) {
    enum { N = 1 << 18 };
    static uint32_t out[N], back[N];
    gpuk_buffer b;
    double t0 = ex_now_ms();
    size_t i;
    for (i = 0; i < N; i++) { out[i] = (uint32_t)(i * 2654435761u); back[i] = 0; }
    if (gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { out, sizeof out }, .label = "probe" }, &b) != GPUK_OK ||
        gpuk_buffer_read(ctx, b, 0, back, sizeof back) != GPUK_OK || gpuk_buffer_destroy(ctx, b) != GPUK_OK)
        return 0;
    *ms = ex_now_ms() - t0;
    return memcmp(out, back, sizeof out) == 0;
}

int main(int argc, char** argv) {
    enum { W = 640, BAR = 40, GAP = 16 };
    ex_opts o;
    gpuk_ctx* ctx0;
    int rc = ex_begin(argc, argv, ex_name, "every CUDA device, like deviceQuery", &o, &ctx0);
    int count = 0, d, ok = 1, version = 0;
    uint8_t* rgb;
    if (rc >= 0) return rc;
    TRY(gpuk_driver_version(&version));
    TRY(gpuk_device_count(&count));
    printf("driver: CUDA %d.%d, %d device(s)\n", version / 1000, version % 1000 / 10, count);
    rgb = (uint8_t*)malloc((size_t)W * (size_t)(count * (BAR + GAP) + GAP) * 3);
    if (!rgb) return ex_result(0, "out of host memory");
    memset(rgb, 255, (size_t)W * (size_t)(count * (BAR + GAP) + GAP) * 3);
    for (d = 0; d < count; d++) {
        gpuk_device_info i;
        gpuk_ctx* ctx = ctx0;
        size_t free_b = 0, total_b = 0;
        double ms = 0, peak_gbs;
        int good;
        TRY(gpuk_device_query(d, &i));
        if (d > 0) TRY(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = d }, &ctx));
        TRY(gpuk_ctx_mem_info(ctx, &free_b, &total_b));
        good = round_trip(ctx, &ms);
        /* double data rate: two transfers per memory clock */
        peak_gbs = 2.0 * i.mem_clock_khz * 1e3 * (i.mem_bus_bits / 8) / 1e9;
        printf("device %d: %s (PCI %s, ", d, i.name, i.pci_bus_id);
        if (i.numa_node >= 0) printf("the host's NUMA node %d)\n", i.numa_node);
        else printf("NUMA node unknown)\n");
        printf("  compute capability %d.%d, %d SMs at %d MHz, warp %d, %d threads per block, %d per SM\n",
               i.cc_major, i.cc_minor, i.sm_count, i.clock_khz / 1000, i.warp_size,
               i.max_threads_per_block, i.max_threads_per_sm);
        printf("  memory %.1f GiB (%.1f GiB free), %d-bit bus at %d MHz: about %.0f GB/s peak; L2 %d MiB\n",
               (double)i.total_bytes / (1 << 30), (double)free_b / (1 << 30), i.mem_bus_bits,
               i.mem_clock_khz / 1000, peak_gbs, i.l2_bytes >> 20);
        printf("  shared memory %d KiB per block (%d KiB opt-in), %d KiB per SM; %d registers per block\n",
               i.shared_per_block >> 10, i.shared_per_block_optin >> 10, i.shared_per_sm >> 10, i.regs_per_block);
        printf("  grid up to %d x %d x %d, block up to %d x %d x %d, %d copy engine(s)%s\n", i.max_grid[0],
               i.max_grid[1], i.max_grid[2], i.max_block[0], i.max_block[1], i.max_block[2], i.async_engines,
               i.integrated ? ", integrated" : "");
        printf("  1 MiB write + read back: %s in %.2f ms\n", good ? "identical" : "DIFFERENT", ms);
        ok &= good && i.cc_major > 0 && i.sm_count > 0 && total_b > 0 && free_b <= total_b;
        {   /* used memory dark, free memory light, one bar per device */
            int y0 = GAP + d * (BAR + GAP), used = (int)((double)(W - 2 * GAP) * (double)(total_b - free_b) / (double)total_b);
            ex_rect(rgb, W, count * (BAR + GAP) + GAP, GAP, y0, W - GAP, y0 + BAR, 0x9ecae1);
            ex_rect(rgb, W, count * (BAR + GAP) + GAP, GAP, y0, GAP + used, y0 + BAR, 0x08519c);
        }
        if (d > 0) TRY(gpuk_ctx_destroy(ctx));
    }
    if (ex_png(o.out_dir, "device_memory.png", W, count * (BAR + GAP) + GAP, 3, rgb) != 0) ok = 0;
    free(rgb);
    TRY(gpuk_ctx_destroy(ctx0));
    return ex_result(ok, "%d device(s) queried, each answered a memory round trip", count);
}
