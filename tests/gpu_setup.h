/* tests/gpu_setup.h - the start every GPU test program shares: find a GPU or report the whole
   program as skipped, then create a ctx on device 0 (or report the setup failure). Include
   after gpuk.h and check.h. */
#ifndef GPU_SETUP_H
#define GPU_SETUP_H
#include <stdlib.h>

/* tests/gpu-check sets GPUK_TEST_UNDER_SANITIZER when it runs a test under compute-sanitizer:
   the tool allocates device memory of its own (shadow state), so free-memory accounting is
   meaningless there, and its cost per launch swamps timing ratios. */
static inline int under_sanitizer(void) { return getenv("GPUK_TEST_UNDER_SANITIZER") != NULL; }

/* 1 with *ctx ready (ctx may be NULL: no ctx wanted); 0 after printing the summary line that
   tests/run-tests reads, with *exit_code set for main to return. */
static int gpu_setup(const char* program, int tests, gpuk_ctx** ctx, int* exit_code) {
    int n = 0;
    gpuk_result r = gpuk_device_count(&n);
    *exit_code = 0;
    if (r != GPUK_OK || n == 0) {
        printf("skip %s: no usable GPU (%s)\n", program, r != GPUK_OK ? gpuk_last_error() : "0 devices");
        printf("0 passed, 0 failed, %d skipped\n", tests);
        return 0;
    }
    if (ctx && gpuk_ctx_create(NULL, ctx) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        *exit_code = 1;
        return 0;
    }
    return 1;
}
#endif
