/* tests/gpu/gpu_oom.c - allocate 1 GiB buffers until the device refuses: gpuk reports out of memory
   (2) with a readable text and no crash; after freeing them the free memory is back where it
   was, and allocation and a built-in kernel work again. Skipped where no driver or GPU exists. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <stdlib.h>

enum { MAX_CHUNKS = 1024 };
static gpuk_ctx* ctx;

static int test_allocate_until_refused_then_recover(void) {
    static gpuk_buffer chunks[MAX_CHUNKS];
    const size_t chunk = (size_t)1 << 30;
    size_t free_before = 0, free_after = 0, total = 0;
    gpuk_result r = GPUK_OK;
    gpuk_buffer small;
    float sum = 0;
    int n = 0, i;
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_before, &total));
    while (n < MAX_CHUNKS && (r = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = chunk }, &chunks[n])) == GPUK_OK) n++;
    printf("     %d GiB taken of %zu MiB total before the device refused: %s\n", n, total >> 20, gpuk_last_error());
    CHECK_RESULT(r, 2); /* CUDA_ERROR_OUT_OF_MEMORY */
    CHECK_ERROR_MENTIONS("CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(n > 0 && (size_t)n * chunk <= total);
    for (i = 0; i < n; i++) CHECK_OK(gpuk_buffer_destroy(ctx, chunks[i]));
    CHECK_OK(gpuk_ctx_mem_info(ctx, &free_after, NULL));
    if (!under_sanitizer()) CHECK(free_after == free_before);
    /* and everything still works */
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 1 << 20 }, &small));
    CHECK_OK(gpuk_fill_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(small, 1), 1000, 0.5f));
    CHECK_OK(gpuk_sum_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(small, 0), gpuk_at(small, 1), 1000));
    CHECK_OK(gpuk_buffer_read(ctx, small, 0, &sum, 4));
    CHECK(sum == 500.0f);
    CHECK_OK(gpuk_buffer_destroy(ctx, small));
    return TEST_PASS;
}

int main(void) {
    int code;
    if (!gpu_setup("gpu_oom", 1, &ctx, &code)) return code;
    RUN(test_allocate_until_refused_then_recover);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
