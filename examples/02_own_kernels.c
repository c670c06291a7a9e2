/* examples/02_own_kernels.c - a kernel of your own (examples/my_kernels.cu), called through the
   typed wrapper tools/gpuk_embed.py generated (examples/my_kernels.h): y = 2x + y on 2^20
   floats, checked against the CPU. Needs no CUDA toolkit to build, only the driver to run.
   cc -std=c99 -O2 -I.. 02_own_kernels.c -o own_kernels -ldl */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "my_kernels.h"
#include <stdio.h>
#include <stdlib.h>

/* The logger installed below prints every failure's text, so TRY only says which call it was. */
#define TRY(call) do { gpuk_result r_ = (call); if (r_ != GPUK_OK) { \
    fprintf(stderr, "own_kernels: %s failed\n", #call); return 1; } } while (0)

int main(void) {
    enum { N = 1 << 20 };
    gpuk_ctx* ctx;
    gpuk_buffer x, y;
    my_kernels_kernels k;
    gpuk_grid launch = gpuk_grid_1d(N, 256);
    float* hx = (float*)malloc(N * sizeof(float));
    float* hy = (float*)malloc(N * sizeof(float));
    size_t i, bad = 0;
    if (!hx || !hy) return 1;
    for (i = 0; i < N; i++) { hx[i] = (float)i; hy[i] = 1.0f; }
    TRY(gpuk_init(&(gpuk_desc){ .logger = { gpuk_log_stderr, NULL } }));
    TRY(gpuk_ctx_create(NULL, &ctx));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { hx, N * sizeof(float) } }, &x));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { hy, N * sizeof(float) } }, &y));
    TRY(my_kernels_load(ctx, &k));                         /* JIT, once */
    TRY(my_kernels_saxpy(ctx, &k, &launch, 2.0f, gpuk_at(x, 0), gpuk_at(y, 0), (unsigned)N));
    TRY(gpuk_buffer_read(ctx, y, 0, hy, N * sizeof(float))); /* waits for the kernel */
    for (i = 0; i < N; i++) if (hy[i] != 2.0f * (float)i + 1.0f) bad++;
    printf("saxpy on %d floats through my_kernels.h: %s\n", N, bad ? "WRONG" : "ok");
    TRY(gpuk_ctx_destroy(ctx));                            /* unloads the module too */
    free(hx);
    free(hy);
    return bad ? 1 : 0;
}
