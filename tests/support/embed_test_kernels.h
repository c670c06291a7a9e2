/* embed_test_kernels.h - generated, do not edit: the kernels of embed_test_kernels.cu
   (sha256 309673d41c692dca) as one PTX module (.version 4.2, .target sm_52, driver >= CUDA 7.0,
   4402 bytes) with a typed C wrapper per kernel, made in the header's folder by
   nvcc 13.0.88, tools/gen_ptx.py v1: gpuk_embed.py embed_test_kernels.cu -o embed_test_kernels.h --name embed

   Needs gpuk.h (GPUK_IMPLEMENTATION in one file of the program, as always); all static
   inline, so any number of files may include it. Use:
       embed_kernels k;
       embed_load(ctx, &k);      (JIT-compiles the module, once)
       gpuk_grid launch = gpuk_grid_1d(n, 256);
       embed_saxpy(ctx, &k, &launch, ...);   (queues it; returns without waiting)
       embed_unload(ctx, &k);    (or let gpuk_ctx_destroy free it)
   Pointer parameters take a gpuk_array view (gpuk_at(buffer, first), first counted in the
   pointer's element type); the wrapper checks the handle, that first lies inside the
   buffer and the alignment (gpuk_array_resolve), before the driver sees anything. The
   kernel itself must stay inside the buffer: gpuk cannot know how far it reads. An
   empty grid (grid.x 0, as gpuk_grid_1d(0, block) gives) checks them and runs nothing. */
#ifndef GPUK_EMBED_embed_H
#define GPUK_EMBED_embed_H
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
static const char* const embed_ptx[] = {
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
    " ld.global.nc.f32 %f2, [%rd6];\n"
    " add.s64 %rd7, %rd3, %rd5;\n"
    " ld.global.f32 %f3, [%rd7];\n"
    " fma.rn.f32 %f4, %f2, %f1, %f3;\n"
    " st.global.f32 [%rd7], %f4;\n"
    "$L__BB0_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry widen(\n"
    " .param .u64 widen_param_0,\n"
    " .param .u64 widen_param_1,\n"
    " .param .f64 widen_param_2,\n"
    " .param .u64 widen_param_3,\n"
    " .param .u64 widen_param_4\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .b32 %r<5>;\n"
    " .reg .f64 %fd<5>;\n"
    " .reg .b64 %rd<14>;\n"
    " ld.param.u64 %rd2, [widen_param_0];\n"
    " ld.param.u64 %rd3, [widen_param_1];\n"
    " ld.param.f64 %fd1, [widen_param_2];\n"
    " ld.param.u64 %rd4, [widen_param_3];\n"
    " ld.param.u64 %rd5, [widen_param_4];\n"
    " mov.u32 %r1, %ctaid.x;\n"
    " mov.u32 %r2, %ntid.x;\n"
    " mul.wide.u32 %rd6, %r1, %r2;\n"
    " mov.u32 %r3, %tid.x;\n"
    " cvt.u64.u32 %rd7, %r3;\n"
    " add.s64 %rd1, %rd6, %rd7;\n"
    " setp.ge.u64 %p1, %rd1, %rd5;\n"
    " @%p1 bra $L__BB1_2;\n"
    " cvta.to.global.u64 %rd8, %rd2;\n"
    " shl.b64 %rd9, %rd1, 2;\n"
    " add.s64 %rd10, %rd8, %rd9;\n"
    " ld.global.u32 %r4, [%rd10];\n"
    " cvt.rn.f64.s32 %fd2, %r4;\n"
    " cvt.rn.f64.s64 %fd3, %rd4;\n"
    " fma.rn.f64 %fd4, %fd2, %fd1, %fd3;\n"
    " cvta.to.global.u64 %rd11, %rd3;\n"
    " shl.b64 %rd12, %rd1, 3;\n"
    " add.s64 %rd13, %rd11, %rd12;\n"
    " st.global.f64 [%rd13], %fd4;\n"
    "$L__BB1_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry small_args(\n"
    " .param .u8 small_args_param_0,\n"
    " .param .u8 small_args_param_1,\n"
    " .param .u16 small_args_param_2,\n"
    " .param .u16 small_args_param_3,\n"
    " .param .u8 small_args_param_4,\n"
    " .param .u16 small_args_param_5,\n"
    " .param .u64 small_args_param_6\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .b16 %rs<7>;\n"
    " .reg .b32 %r<4>;\n"
    " .reg .b64 %rd<9>;\n"
    " ld.param.s8 %rs5, [small_args_param_4];\n"
    " ld.param.u8 %rs2, [small_args_param_1];\n"
    " ld.param.s8 %rs1, [small_args_param_0];\n"
    " ld.param.u16 %rs3, [small_args_param_2];\n"
    " ld.param.u16 %rs4, [small_args_param_3];\n"
    " ld.param.u16 %rs6, [small_args_param_5];\n"
    " ld.param.u64 %rd1, [small_args_param_6];\n"
    " mov.u32 %r1, %ctaid.x;\n"
    " mov.u32 %r2, %tid.x;\n"
    " or.b32 %r3, %r2, %r1;\n"
    " setp.ne.s32 %p1, %r3, 0;\n"
    " @%p1 bra $L__BB2_2;\n"
    " cvta.to.global.u64 %rd2, %rd1;\n"
    " cvt.s64.s16 %rd3, %rs1;\n"
    " st.global.u64 [%rd2], %rd3;\n"
    " cvt.u64.u16 %rd4, %rs2;\n"
    " st.global.u64 [%rd2+8], %rd4;\n"
    " cvt.s64.s16 %rd5, %rs3;\n"
    " st.global.u64 [%rd2+16], %rd5;\n"
    " cvt.u64.u16 %rd6, %rs4;\n"
    " st.global.u64 [%rd2+24], %rd6;\n"
    " cvt.s64.s16 %rd7, %rs5;\n"
    " st.global.u64 [%rd2+32], %rd7;\n"
    " cvt.s64.s16 %rd8, %rs6;\n"
    " st.global.u64 [%rd2+40], %rd8;\n"
    "$L__BB2_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry xor_bytes(\n"
    " .param .u64 xor_bytes_param_0,\n"
    " .param .u8 xor_bytes_param_1,\n"
    " .param .u32 xor_bytes_param_2\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .b16 %rs<4>;\n"
    " .reg .b32 %r<6>;\n"
    " .reg .b64 %rd<5>;\n"
    " ld.param.u8 %rs1, [xor_bytes_param_1];\n"
    " ld.param.u64 %rd1, [xor_bytes_param_0];\n"
    " ld.param.u32 %r2, [xor_bytes_param_2];\n"
    " mov.u32 %r3, %ctaid.x;\n"
    " mov.u32 %r4, %ntid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB3_2;\n"
    " cvta.to.global.u64 %rd2, %rd1;\n"
    " cvt.u64.u32 %rd3, %r1;\n"
    " add.s64 %rd4, %rd2, %rd3;\n"
    " ld.global.u8 %rs2, [%rd4];\n"
    " xor.b16 %rs3, %rs2, %rs1;\n"
    " st.global.u8 [%rd4], %rs3;\n"
    "$L__BB3_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry add_index_u16(\n"
    " .param .u64 add_index_u16_param_0,\n"
    " .param .u64 add_index_u16_param_1,\n"
    " .param .u32 add_index_u16_param_2\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .b16 %rs<4>;\n"
    " .reg .b32 %r<6>;\n"
    " .reg .b64 %rd<8>;\n",
    " ld.param.u64 %rd1, [add_index_u16_param_0];\n"
    " ld.param.u64 %rd2, [add_index_u16_param_1];\n"
    " ld.param.u32 %r2, [add_index_u16_param_2];\n"
    " mov.u32 %r3, %ctaid.x;\n"
    " mov.u32 %r4, %ntid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.s32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB4_2;\n"
    " cvta.to.global.u64 %rd3, %rd1;\n"
    " mul.wide.s32 %rd4, %r1, 2;\n"
    " add.s64 %rd5, %rd3, %rd4;\n"
    " cvt.u16.u32 %rs1, %r1;\n"
    " ld.global.u16 %rs2, [%rd5];\n"
    " add.s16 %rs3, %rs2, %rs1;\n"
    " cvta.to.global.u64 %rd6, %rd2;\n"
    " add.s64 %rd7, %rd6, %rd4;\n"
    " st.global.u16 [%rd7], %rs3;\n"
    "$L__BB4_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry nothing()\n"
    "{\n"
    " ret;\n"
    "}\n",
    0
};

/* The loaded module and a handle per kernel; all zero when not loaded. */
typedef struct embed_kernels {
    gpuk_module module;
    gpuk_kernel saxpy;
    gpuk_kernel widen;
    gpuk_kernel small_args;
    gpuk_kernel xor_bytes;
    gpuk_kernel add_index_u16;
    gpuk_kernel nothing;
} embed_kernels;

/* JIT-loads the module on ctx and gets each kernel; on failure out is all zero and
   nothing stays loaded. PTX of more than one piece is joined in memory from malloc,
   freed before it returns (not gpuk_desc.allocator: no public call reaches it). */
static inline gpuk_result embed_load(gpuk_ctx* ctx, embed_kernels* out) {
    gpuk_module_desc desc;
    gpuk_result r;
    const char* const* piece;
    size_t bytes = 0, at = 0;
    char* text;
    if (!out) return gpuk_module_load(ctx, NULL, NULL); /* gpuk names the NULL */
    memset(out, 0, sizeof *out);
    memset(&desc, 0, sizeof desc);
    desc.kind = GPUK_IMAGE_PTX;
    desc.label = "embed_test_kernels.cu";
    for (piece = embed_ptx; *piece; piece++) bytes += strlen(*piece);
    text = (char*)malloc(bytes + 1);
    if (!text) return GPUK_ERR_HOST_ALLOC; /* before any gpuk call: no error text */
    for (piece = embed_ptx; *piece; piece++) {
        size_t n = strlen(*piece);
        memcpy(text + at, *piece, n);
        at += n;
    }
    text[at] = 0;
    desc.image.ptr = text;
    r = gpuk_module_load(ctx, &desc, &out->module);
    free(text);
    if (r != GPUK_OK) return r;
    if ((r = gpuk_kernel_get(ctx, out->module, "saxpy", &out->saxpy)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "widen", &out->widen)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "small_args", &out->small_args)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "xor_bytes", &out->xor_bytes)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "add_index_u16", &out->add_index_u16)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "nothing", &out->nothing)) != GPUK_OK) goto fail;
    return GPUK_OK;
fail:
    gpuk_module_unload(ctx, out->module);
    memset(out, 0, sizeof *out);
    return r;
}

/* Unloads the module (its kernels go with it) and zeroes k. */
static inline gpuk_result embed_unload(gpuk_ctx* ctx, embed_kernels* k) {
    gpuk_result r;
    gpuk_module m;
    m.id = k ? k->module.id : 0u;
    r = gpuk_module_unload(ctx, m);
    if (r == GPUK_OK && k) memset(k, 0, sizeof *k);
    return r;
}

/* __global__ void saxpy(float a, const float* __restrict__ x, float* y, unsigned n) */
static inline gpuk_result embed_saxpy(gpuk_ctx* ctx, const embed_kernels* kernels,
                                      const gpuk_grid* launch, float a, gpuk_array x, gpuk_array y,
                                      unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, x, sizeof(float), "embed_saxpy: x",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, y, sizeof(float), "embed_saxpy: y",
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

/* __global__ void widen(const int32_t* in, double* out, double scale, long long offset, uint64_t n) */
static inline gpuk_result embed_widen(gpuk_ctx* ctx, const embed_kernels* kernels,
                                      const gpuk_grid* launch, gpuk_array in, gpuk_array out,
                                      double scale, long long offset, uint64_t n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[5];
    size_t gpuk__sizes[5];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, in, sizeof(int32_t), "embed_widen: in",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(double), "embed_widen: out",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->widen.id : 0u;
    if (!launch) return gpuk_launch(ctx, gpuk__kernel, NULL); /* gpuk names the NULL */
    /* an empty grid (gpuk_grid_1d(0, block)): the views are checked, nothing runs */
    if (!launch->grid.x) return GPUK_OK;
    gpuk__desc = gpuk_launch_desc_defaults(NULL);
    gpuk__desc.grid = launch->grid;
    gpuk__desc.block = launch->block;
    gpuk__desc.shared_bytes = launch->shared_bytes;
    gpuk__desc.stream = launch->stream;
    gpuk__args[0] = &gpuk__p0;
    gpuk__sizes[0] = sizeof gpuk__p0;
    gpuk__args[1] = &gpuk__p1;
    gpuk__sizes[1] = sizeof gpuk__p1;
    gpuk__args[2] = &scale;
    gpuk__sizes[2] = sizeof scale;
    gpuk__args[3] = &offset;
    gpuk__sizes[3] = sizeof offset;
    gpuk__args[4] = &n;
    gpuk__sizes[4] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 5;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void small_args(int8_t a, uint8_t b, short c, unsigned short d, char e, int16_t f, unsigned long long* out) */
static inline gpuk_result embed_small_args(gpuk_ctx* ctx, const embed_kernels* kernels,
                                           const gpuk_grid* launch, int8_t a, uint8_t b, short c,
                                           unsigned short d, char e, int16_t f, gpuk_array out) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[7];
    size_t gpuk__sizes[7];
    gpuk_devptr gpuk__p6 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(unsigned long long), "embed_small_args: out",
                                      &gpuk__p6, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->small_args.id : 0u;
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
    gpuk__args[1] = &b;
    gpuk__sizes[1] = sizeof b;
    gpuk__args[2] = &c;
    gpuk__sizes[2] = sizeof c;
    gpuk__args[3] = &d;
    gpuk__sizes[3] = sizeof d;
    gpuk__args[4] = &e;
    gpuk__sizes[4] = sizeof e;
    gpuk__args[5] = &f;
    gpuk__sizes[5] = sizeof f;
    gpuk__args[6] = &gpuk__p6;
    gpuk__sizes[6] = sizeof gpuk__p6;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 7;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void xor_bytes(uint8_t* bytes, unsigned char key, uint32_t n) */
static inline gpuk_result embed_xor_bytes(gpuk_ctx* ctx, const embed_kernels* kernels,
                                          const gpuk_grid* launch, gpuk_array bytes,
                                          unsigned char key, uint32_t n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[3];
    size_t gpuk__sizes[3];
    gpuk_devptr gpuk__p0 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, bytes, sizeof(uint8_t), "embed_xor_bytes: bytes",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->xor_bytes.id : 0u;
    if (!launch) return gpuk_launch(ctx, gpuk__kernel, NULL); /* gpuk names the NULL */
    /* an empty grid (gpuk_grid_1d(0, block)): the views are checked, nothing runs */
    if (!launch->grid.x) return GPUK_OK;
    gpuk__desc = gpuk_launch_desc_defaults(NULL);
    gpuk__desc.grid = launch->grid;
    gpuk__desc.block = launch->block;
    gpuk__desc.shared_bytes = launch->shared_bytes;
    gpuk__desc.stream = launch->stream;
    gpuk__args[0] = &gpuk__p0;
    gpuk__sizes[0] = sizeof gpuk__p0;
    gpuk__args[1] = &key;
    gpuk__sizes[1] = sizeof key;
    gpuk__args[2] = &n;
    gpuk__sizes[2] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 3;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void add_index_u16(const uint16_t* src, uint16_t* dst, int n) */
static inline gpuk_result embed_add_index_u16(gpuk_ctx* ctx, const embed_kernels* kernels,
                                              const gpuk_grid* launch, gpuk_array src,
                                              gpuk_array dst, int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[3];
    size_t gpuk__sizes[3];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, src, sizeof(uint16_t), "embed_add_index_u16: src",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, dst, sizeof(uint16_t), "embed_add_index_u16: dst",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->add_index_u16.id : 0u;
    if (!launch) return gpuk_launch(ctx, gpuk__kernel, NULL); /* gpuk names the NULL */
    /* an empty grid (gpuk_grid_1d(0, block)): the views are checked, nothing runs */
    if (!launch->grid.x) return GPUK_OK;
    gpuk__desc = gpuk_launch_desc_defaults(NULL);
    gpuk__desc.grid = launch->grid;
    gpuk__desc.block = launch->block;
    gpuk__desc.shared_bytes = launch->shared_bytes;
    gpuk__desc.stream = launch->stream;
    gpuk__args[0] = &gpuk__p0;
    gpuk__sizes[0] = sizeof gpuk__p0;
    gpuk__args[1] = &gpuk__p1;
    gpuk__sizes[1] = sizeof gpuk__p1;
    gpuk__args[2] = &n;
    gpuk__sizes[2] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 3;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void nothing(void) */
static inline gpuk_result embed_nothing(gpuk_ctx* ctx, const embed_kernels* kernels,
                                        const gpuk_grid* launch) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    gpuk__kernel.id = kernels ? kernels->nothing.id : 0u;
    if (!launch) return gpuk_launch(ctx, gpuk__kernel, NULL); /* gpuk names the NULL */
    /* an empty grid (gpuk_grid_1d(0, block)): the views are checked, nothing runs */
    if (!launch->grid.x) return GPUK_OK;
    gpuk__desc = gpuk_launch_desc_defaults(NULL);
    gpuk__desc.grid = launch->grid;
    gpuk__desc.block = launch->block;
    gpuk__desc.shared_bytes = launch->shared_bytes;
    gpuk__desc.stream = launch->stream;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

#ifdef __cplusplus
}
#endif
#endif /* GPUK_EMBED_embed_H */
