/* tests/gpu/gpu_setup.h - the start every GPU test program shares: find a GPU or report the whole
   program as skipped, then create a ctx on device 0 (or report the setup failure). Include
   after gpuk.h and check.h. */
#ifndef GPU_SETUP_H
#define GPU_SETUP_H
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* splitmix64: fresh random inputs every run (rng_seed_from_clock in main) */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline uint64_t rng(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline void rng_seed_from_clock(void) { rng_state ^= (uint64_t)time(NULL) * 0x2545F4914F6CDD1Dull; }
/* uniform in [lo, hi) from 53 random bits */
static inline double uniform(double lo, double hi) {
    return lo + (hi - lo) * ((double)(rng() >> 11) / 9007199254740992.0);
}

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
