/* tools/gpuk_info.c - print every CUDA device the driver sees, like deviceQuery / nvidia-smi.
   Exits 1 with the cause where there is no driver or no device.
   cc -std=c99 -O2 -I.. gpuk_info.c -o gpuk_info -ldl */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>

int main(void) {
    int count = 0, version = 0, d;
    uint32_t f;
    if (gpuk_driver_version(&version) != GPUK_OK || gpuk_device_count(&count) != GPUK_OK) {
        fprintf(stderr, "gpuk_info: %s\n", gpuk_last_error());
        return 1;
    }
    f = gpuk_features();
    printf("driver: CUDA %d.%d; features:%s%s%s%s%s%s%s\n", version / 1000, version % 1000 / 10,
           f & GPUK_FEATURE_PROC_ADDRESS ? " proc-address" : "", f & GPUK_FEATURE_PARAM_INFO ? " param-info" : "",
           f & GPUK_FEATURE_LAUNCH_EX ? " launch-ex" : "", f & GPUK_FEATURE_GRAPHS ? " graphs" : "",
           f & GPUK_FEATURE_LIBRARY ? " library" : "", f & GPUK_FEATURE_PEER ? " peer" : "",
           f & GPUK_FEATURE_STREAM_MEMORY ? " stream-memory" : "");
    if (count == 0) {
        fprintf(stderr, "gpuk_info: the driver sees no CUDA device (check nvidia-smi, CUDA_VISIBLE_DEVICES)\n");
        return 1;
    }
    for (d = 0; d < count; d++) {
        gpuk_device_info i;
        gpuk_ctx* ctx = NULL;
        size_t free_b = 0, total_b = 0;
        if (gpuk_device_query(d, &i) != GPUK_OK) { fprintf(stderr, "gpuk_info: %s\n", gpuk_last_error()); return 1; }
        if (gpuk_ctx_create(&(gpuk_ctx_desc){ .device = d }, &ctx) == GPUK_OK) {
            gpuk_ctx_mem_info(ctx, &free_b, &total_b);
            gpuk_ctx_destroy(ctx);
        }
        printf("device %d: %s\n", d, i.name);
        printf("  PCI bus id            %s\n", i.pci_bus_id);
        if (i.numa_node >= 0) printf("  NUMA node             %d\n", i.numa_node);
        else printf("  NUMA node             unknown\n");
        printf("  compute capability    %d.%d\n", i.cc_major, i.cc_minor);
        printf("  multiprocessors       %d\n", i.sm_count);
        printf("  SM clock              %d MHz\n", i.clock_khz / 1000);
        printf("  memory clock, bus     %d MHz, %d bits\n", i.mem_clock_khz / 1000, i.mem_bus_bits);
        printf("  global memory         %.2f GiB (%.2f GiB free)\n", (double)i.total_bytes / (1u << 30),
               (double)free_b / (1u << 30));
        printf("  L2 cache              %d KiB\n", i.l2_bytes / 1024);
        printf("  shared memory         %d KiB per block (%d KiB opt-in), %d KiB per SM\n",
               i.shared_per_block / 1024, i.shared_per_block_optin / 1024, i.shared_per_sm / 1024);
        printf("  registers per block   %d\n", i.regs_per_block);
        printf("  threads               %d per block, %d per SM, warp %d\n", i.max_threads_per_block,
               i.max_threads_per_sm, i.warp_size);
        printf("  max block             %d x %d x %d\n", i.max_block[0], i.max_block[1], i.max_block[2]);
        printf("  max grid              %d x %d x %d\n", i.max_grid[0], i.max_grid[1], i.max_grid[2]);
        printf("  copy engines          %d%s\n", i.async_engines, i.integrated ? ", integrated (shares host memory)" : "");
        printf("  host memory           zero-copy %s, managed %s%s, pageable access %s\n",
               i.can_map_host_memory ? "yes" : "no", i.managed_memory ? "yes" : "no",
               i.managed_memory ? (i.concurrent_managed_access ? " (concurrent)" : " (device idle only)")
                                : "",
               i.pageable_memory_access ? "yes" : "no");
    }
    return 0;
}
