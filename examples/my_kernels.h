/* my_kernels.h - generated, do not edit: the kernels of my_kernels.cu
   (sha256 dcb681f365e8eaf2) as one PTX module (.version 4.2, .target sm_52, driver >= CUDA 7.0,
   833 bytes) with a typed C wrapper per kernel, made in the header's folder by
   nvcc 13.0.88, tools/gen_ptx.py v1: gpuk_embed.py my_kernels.cu -o my_kernels.h --name my_kernels

   Needs gpuk.h (GPUK_IMPLEMENTATION in one file of the program, as always); all static
   inline, so any number of files may include it. Use:
       my_kernels_kernels k;
       my_kernels_load(ctx, &k);      (JIT-compiles the module, once)
       gpuk_grid launch = gpuk_grid_1d(n, 256);
       my_kernels_saxpy(ctx, &k, &launch, ...);   (queues it; returns without waiting)
       my_kernels_unload(ctx, &k);    (or let gpuk_ctx_destroy free it)
   Pointer parameters take a gpuk_array view (gpuk_at(buffer, first), first counted in the
   pointer's element type); the wrapper checks the handle, that first lies inside the
   buffer and the alignment (gpuk_array_resolve), before the driver sees anything. The
   kernel itself must stay inside the buffer: gpuk cannot know how far it reads. An
   empty grid (grid.x 0, as gpuk_grid_1d(0, block) gives) checks them and runs nothing. */
#ifndef GPUK_EMBED_my_kernels_H
#define GPUK_EMBED_my_kernels_H
#include <stdlib.h>
#include <string.h>
#include "gpuk.h"

#ifndef GPUK_GRID_DEFINED
#define GPUK_GRID_DEFINED
/* How to launch a generated wrapper's kernel: grid and block shapes (y, z: 0 -> 1),
   dynamic shared memory bytes and the stream ({0} = the ctx default stream). */
typedef struct gpuk_grid {
    gpuk_dim3 grid, block;
    uint32_t shared_bytes;
    gpuk_stream stream;
} gpuk_grid;
/* A 1-D launch of at least threads threads in blocks of block, on the default stream. */
static inline gpuk_grid gpuk_grid_1d(size_t threads, uint32_t block) {
    gpuk_grid g;
    memset(&g, 0, sizeof g);
    g.block.x = block;
    g.grid.x = block ? (uint32_t)((threads + block - 1) / block) : 0u;
    return g;
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* the PTX in pieces under C99's 4095-char string-literal limit, joined at load */
static const char* const my_kernels_ptx[] = {
    ".version 4.2\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry saxpy(\n"
    " .param .f32 saxpy_param_0,\n"
    " .param .u64 saxpy_param_1,\n"
    " .param .u64 saxpy_param_2,\n"
    " .param .u32 saxpy_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .f32 %f<5>;\n"
    " .reg .b32 %r<6>;\n"
    " .reg .b64 %rd<8>;\n"
    " ld.param.f32 %f1, [saxpy_param_0];\n"
    " ld.param.u64 %rd1, [saxpy_param_1];\n"
    " ld.param.u64 %rd2, [saxpy_param_2];\n"
    " ld.param.u32 %r2, [saxpy_param_3];\n"
    " mov.u32 %r3, %ctaid.x;\n"
    " mov.u32 %r4, %ntid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB0_2;\n"
    " cvta.to.global.u64 %rd3, %rd2;\n"
    " cvta.to.global.u64 %rd4, %rd1;\n"
    " mul.wide.u32 %rd5, %r1, 4;\n"
    " add.s64 %rd6, %rd4, %rd5;\n"
    " ld.global.f32 %f2, [%rd6];\n"
    " add.s64 %rd7, %rd3, %rd5;\n"
    " ld.global.f32 %f3, [%rd7];\n"
    " fma.rn.f32 %f4, %f2, %f1, %f3;\n"
    " st.global.f32 [%rd7], %f4;\n"
    "$L__BB0_2:\n"
    " ret;\n"
    "}\n",
    0
};

/* The loaded module and a handle per kernel; all zero when not loaded. */
typedef struct my_kernels_kernels {
    gpuk_module module;
    gpuk_kernel saxpy;
} my_kernels_kernels;

/* JIT-loads the module on ctx and gets each kernel; on failure out is all zero and
   nothing stays loaded. PTX of more than one piece is joined in memory from malloc,
   freed before it returns (not gpuk_desc.allocator: no public call reaches it). */
static inline gpuk_result my_kernels_load(gpuk_ctx* ctx, my_kernels_kernels* out) {
    gpuk_module_desc desc;
    gpuk_result r;
    if (!out) return gpuk_module_load(ctx, NULL, NULL); /* gpuk names the NULL */
    memset(out, 0, sizeof *out);
    memset(&desc, 0, sizeof desc);
    desc.kind = GPUK_IMAGE_PTX;
    desc.label = "my_kernels.cu";
    desc.image.ptr = my_kernels_ptx[0]; /* one piece: loaded as it is */
    r = gpuk_module_load(ctx, &desc, &out->module);
    if (r != GPUK_OK) return r;
    if ((r = gpuk_kernel_get(ctx, out->module, "saxpy", &out->saxpy)) != GPUK_OK) goto fail;
    return GPUK_OK;
fail:
    gpuk_module_unload(ctx, out->module);
    memset(out, 0, sizeof *out);
    return r;
}

/* Unloads the module (its kernels go with it) and zeroes k. */
static inline gpuk_result my_kernels_unload(gpuk_ctx* ctx, my_kernels_kernels* k) {
    gpuk_result r;
    gpuk_module m;
    m.id = k ? k->module.id : 0u;
    r = gpuk_module_unload(ctx, m);
    if (r == GPUK_OK && k) memset(k, 0, sizeof *k);
    return r;
}

/* __global__ void saxpy(float a, const float* x, float* y, unsigned n) */
static inline gpuk_result my_kernels_saxpy(gpuk_ctx* ctx, const my_kernels_kernels* kernels,
                                           const gpuk_grid* launch, float a, gpuk_array x,
                                           gpuk_array y, unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, x, sizeof(float), "my_kernels_saxpy: x",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, y, sizeof(float), "my_kernels_saxpy: y",
                                      &gpuk__p2, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->saxpy.id : 0u;
    if (!launch) return gpuk_launch(ctx, gpuk__kernel, NULL); /* gpuk names the NULL */
    /* an empty grid (gpuk_grid_1d(0, block)): the views are checked, nothing runs */
    if (!launch->grid.x) return GPUK_OK;
    gpuk__desc = gpuk_launch_desc_defaults(NULL);
    gpuk__desc.grid = launch->grid;
    gpuk__desc.block = launch->block;
    gpuk__desc.shared_bytes = launch->shared_bytes;
    gpuk__desc.stream = launch->stream;
    gpuk__args[0] = &a;
    gpuk__sizes[0] = sizeof a;
    gpuk__args[1] = &gpuk__p1;
    gpuk__sizes[1] = sizeof gpuk__p1;
    gpuk__args[2] = &gpuk__p2;
    gpuk__sizes[2] = sizeof gpuk__p2;
    gpuk__args[3] = &n;
    gpuk__sizes[3] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

#ifdef __cplusplus
}
#endif
#endif /* GPUK_EMBED_my_kernels_H */
