/* gallery_kernels.h - generated, do not edit: the kernels of gallery_kernels.cu
   (sha256 40a3be1c54548719) as one PTX module (.version 4.2, .target sm_52, driver >= CUDA 7.0,
   21830 bytes) with a typed C wrapper per kernel, made in the header's folder by
   nvcc 13.0.88, tools/gen_ptx.py v1: gpuk_embed.py gallery_kernels.cu -o gallery_kernels.h --name gallery_kernels

   Needs gpuk.h (GPUK_IMPLEMENTATION in one file of the program, as always); all static
   inline, so any number of files may include it. Use:
       gallery_kernels_kernels k;
       gallery_kernels_load(ctx, &k);      (JIT-compiles the module, once)
       gpuk_grid launch = gpuk_grid_1d(n, 256);
       gallery_kernels_mandelbrot_f32(ctx, &k, &launch, ...);   (queues it; returns without waiting)
       gallery_kernels_unload(ctx, &k);    (or let gpuk_ctx_destroy free it)
   Pointer parameters take a gpuk_array view (gpuk_at(buffer, first), first counted in the
   pointer's element type); the wrapper checks the handle, that first lies inside the
   buffer and the alignment (gpuk_array_resolve), before the driver sees anything. The
   kernel itself must stay inside the buffer: gpuk cannot know how far it reads. An
   empty grid (grid.x 0, as gpuk_grid_1d(0, block) gives) checks them and runs nothing. */
#ifndef GPUK_EMBED_gallery_kernels_H
#define GPUK_EMBED_gallery_kernels_H
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
static const char* const gallery_kernels_ptx[] = {
    ".version 4.2\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry mandelbrot_f32(\n"
    " .param .u64 mandelbrot_f32_param_0,\n"
    " .param .u32 mandelbrot_f32_param_1,\n"
    " .param .u32 mandelbrot_f32_param_2,\n"
    " .param .f32 mandelbrot_f32_param_3,\n"
    " .param .f32 mandelbrot_f32_param_4,\n"
    " .param .f32 mandelbrot_f32_param_5,\n"
    " .param .f32 mandelbrot_f32_param_6,\n"
    " .param .u32 mandelbrot_f32_param_7\n"
    ")\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .f32 %f<24>;\n"
    " .reg .b32 %r<20>;\n"
    " .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [mandelbrot_f32_param_0];\n"
    " ld.param.u32 %r6, [mandelbrot_f32_param_1];\n"
    " ld.param.u32 %r8, [mandelbrot_f32_param_2];\n"
    " ld.param.f32 %f8, [mandelbrot_f32_param_3];\n"
    " ld.param.f32 %f9, [mandelbrot_f32_param_4];\n"
    " ld.param.f32 %f10, [mandelbrot_f32_param_5];\n"
    " ld.param.f32 %f11, [mandelbrot_f32_param_6];\n"
    " ld.param.u32 %r7, [mandelbrot_f32_param_7];\n"
    " mov.u32 %r9, %ctaid.x;\n"
    " mov.u32 %r10, %ntid.x;\n"
    " mov.u32 %r11, %tid.x;\n"
    " mad.lo.s32 %r1, %r9, %r10, %r11;\n"
    " mov.u32 %r12, %ntid.y;\n"
    " mov.u32 %r13, %ctaid.y;\n"
    " mov.u32 %r14, %tid.y;\n"
    " mad.lo.s32 %r2, %r13, %r12, %r14;\n"
    " setp.ge.s32 %p1, %r1, %r6;\n"
    " setp.ge.s32 %p2, %r2, %r8;\n"
    " or.pred %p3, %p1, %p2;\n"
    " @%p3 bra $L__BB0_6;\n"
    " setp.lt.s32 %p4, %r7, 1;\n"
    " mov.u32 %r19, 0;\n"
    " @%p4 bra $L__BB0_5;\n"
    " cvt.rn.f32.s32 %f14, %r2;\n"
    " mul.rn.f32 %f15, %f14, %f11;\n"
    " add.rn.f32 %f1, %f9, %f15;\n"
    " cvt.rn.f32.s32 %f16, %r1;\n"
    " mul.rn.f32 %f17, %f16, %f10;\n"
    " add.rn.f32 %f2, %f8, %f17;\n"
    " mov.f32 %f22, 0f00000000;\n"
    " mov.u32 %r19, 0;\n"
    " mov.f32 %f23, %f22;\n"
    "$L__BB0_3:\n"
    " mul.rn.f32 %f5, %f22, %f22;\n"
    " fma.rn.f32 %f18, %f23, %f23, %f5;\n"
    " mov.b32 %r17, %f18;\n"
    " setp.gt.s32 %p5, %r17, 1082130432;\n"
    " @%p5 bra $L__BB0_5;\n"
    " neg.f32 %f19, %f23;\n"
    " fma.rn.f32 %f20, %f19, %f23, %f5;\n"
    " add.rn.f32 %f6, %f20, %f2;\n"
    " add.rn.f32 %f21, %f22, %f22;\n"
    " fma.rn.f32 %f23, %f21, %f23, %f1;\n"
    " add.s32 %r19, %r19, 1;\n"
    " setp.lt.s32 %p6, %r19, %r7;\n"
    " mov.f32 %f22, %f6;\n"
    " @%p6 bra $L__BB0_3;\n"
    "$L__BB0_5:\n"
    " mul.wide.s32 %rd2, %r6, %r2;\n"
    " cvt.s64.s32 %rd3, %r1;\n"
    " add.s64 %rd4, %rd2, %rd3;\n"
    " cvta.to.global.u64 %rd5, %rd1;\n"
    " shl.b64 %rd6, %rd4, 2;\n"
    " add.s64 %rd7, %rd5, %rd6;\n"
    " st.global.u32 [%rd7], %r19;\n"
    "$L__BB0_6:\n"
    " ret;\n"
    "}\n"
    ".visible .entry mandelbrot_f64(\n"
    " .param .u64 mandelbrot_f64_param_0,\n"
    " .param .u32 mandelbrot_f64_param_1,\n"
    " .param .u32 mandelbrot_f64_param_2,\n"
    " .param .f64 mandelbrot_f64_param_3,\n"
    " .param .f64 mandelbrot_f64_param_4,\n"
    " .param .f64 mandelbrot_f64_param_5,\n"
    " .param .f64 mandelbrot_f64_param_6,\n"
    " .param .u32 mandelbrot_f64_param_7\n"
    ")\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .b32 %r<19>;\n"
    " .reg .f64 %fd<24>;\n"
    " .reg .b64 %rd<9>;\n"
    " ld.param.u64 %rd1, [mandelbrot_f64_param_0];\n"
    " ld.param.u32 %r6, [mandelbrot_f64_param_1];\n"
    " ld.param.u32 %r8, [mandelbrot_f64_param_2];\n"
    " ld.param.f64 %fd8, [mandelbrot_f64_param_3];\n"
    " ld.param.f64 %fd9, [mandelbrot_f64_param_4];\n"
    " ld.param.f64 %fd10, [mandelbrot_f64_param_5];\n"
    " ld.param.f64 %fd11, [mandelbrot_f64_param_6];\n"
    " ld.param.u32 %r7, [mandelbrot_f64_param_7];\n"
    " mov.u32 %r9, %ctaid.x;\n"
    " mov.u32 %r10, %ntid.x;\n"
    " mov.u32 %r11, %tid.x;\n"
    " mad.lo.s32 %r1, %r9, %r10, %r11;\n"
    " mov.u32 %r12, %ntid.y;\n"
    " mov.u32 %r13, %ctaid.y;\n"
    " mov.u32 %r14, %tid.y;\n"
    " mad.lo.s32 %r2, %r13, %r12, %r14;\n"
    " setp.ge.s32 %p1, %r1, %r6;\n"
    " setp.ge.s32 %p2, %r2, %r8;\n"
    " or.pred %p3, %p1, %p2;\n"
    " @%p3 bra $L__BB1_6;\n"
    " setp.lt.s32 %p4, %r7, 1;\n"
    " mov.u32 %r18, 0;\n"
    " @%p4 bra $L__BB1_5;\n"
    " cvt.rn.f64.s32 %fd14, %r2;\n"
    " mul.rn.f64 %fd15, %fd14, %fd11;\n"
    " add.rn.f64 %fd1, %fd9, %fd15;\n"
    " cvt.rn.f64.s32 %fd16, %r1;\n"
    " mul.rn.f64 %fd17, %fd16, %fd10;\n"
    " add.rn.f64 %fd2, %fd8, %fd17;\n"
    " mov.f64 %fd22, 0d0000000000000000;\n"
    " mov.u32 %r18, 0;\n"
    " mov.f64 %fd23, %fd22;\n"
    "$L__BB1_3:\n"
    " mul.rn.f64 %fd5, %fd22, %fd22;\n"
    " fma.rn.f64 %fd18, %fd23, %fd23, %fd5;\n"
    " mov.b64 %rd2, %fd18;\n"
    " setp.gt.s64 %p5, %rd2, 4616189618054758400;\n"
    " @%p5 bra $L__BB1_5;\n"
    " neg.f64 %fd19, %fd23;\n"
    " fma.rn.f64 %fd20, %fd19, %fd23, %fd5;\n"
    " add.rn.f64 %fd6, %fd20, %fd2;\n"
    " add.rn.f64 %fd21, %fd22, %fd22;\n"
    " fma.rn.f64 %fd23, %fd21, %fd23, %fd1;\n"
    " add.s32 %r18, %r18, 1;\n"
    " setp.lt.s32 %p6, %r18, %r7;\n",
    " mov.f64 %fd22, %fd6;\n"
    " @%p6 bra $L__BB1_3;\n"
    "$L__BB1_5:\n"
    " mul.wide.s32 %rd3, %r6, %r2;\n"
    " cvt.s64.s32 %rd4, %r1;\n"
    " add.s64 %rd5, %rd3, %rd4;\n"
    " cvta.to.global.u64 %rd6, %rd1;\n"
    " shl.b64 %rd7, %rd5, 2;\n"
    " add.s64 %rd8, %rd6, %rd7;\n"
    " st.global.u32 [%rd8], %r18;\n"
    "$L__BB1_6:\n"
    " ret;\n"
    "}\n"
    ".visible .entry julia_f32(\n"
    " .param .u64 julia_f32_param_0,\n"
    " .param .u32 julia_f32_param_1,\n"
    " .param .u32 julia_f32_param_2,\n"
    " .param .f32 julia_f32_param_3,\n"
    " .param .f32 julia_f32_param_4,\n"
    " .param .f32 julia_f32_param_5,\n"
    " .param .f32 julia_f32_param_6,\n"
    " .param .f32 julia_f32_param_7,\n"
    " .param .f32 julia_f32_param_8,\n"
    " .param .u32 julia_f32_param_9\n"
    ")\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .f32 %f<24>;\n"
    " .reg .b32 %r<20>;\n"
    " .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [julia_f32_param_0];\n"
    " ld.param.u32 %r6, [julia_f32_param_1];\n"
    " ld.param.u32 %r8, [julia_f32_param_2];\n"
    " ld.param.f32 %f8, [julia_f32_param_3];\n"
    " ld.param.f32 %f9, [julia_f32_param_4];\n"
    " ld.param.f32 %f10, [julia_f32_param_5];\n"
    " ld.param.f32 %f11, [julia_f32_param_6];\n"
    " ld.param.f32 %f12, [julia_f32_param_7];\n"
    " ld.param.f32 %f13, [julia_f32_param_8];\n"
    " ld.param.u32 %r7, [julia_f32_param_9];\n"
    " mov.u32 %r9, %ctaid.x;\n"
    " mov.u32 %r10, %ntid.x;\n"
    " mov.u32 %r11, %tid.x;\n"
    " mad.lo.s32 %r1, %r9, %r10, %r11;\n"
    " mov.u32 %r12, %ntid.y;\n"
    " mov.u32 %r13, %ctaid.y;\n"
    " mov.u32 %r14, %tid.y;\n"
    " mad.lo.s32 %r2, %r13, %r12, %r14;\n"
    " setp.ge.s32 %p1, %r1, %r6;\n"
    " setp.ge.s32 %p2, %r2, %r8;\n"
    " or.pred %p3, %p1, %p2;\n"
    " @%p3 bra $L__BB2_6;\n"
    " setp.lt.s32 %p4, %r7, 1;\n"
    " mov.u32 %r19, 0;\n"
    " @%p4 bra $L__BB2_5;\n"
    " cvt.rn.f32.s32 %f14, %r2;\n"
    " mul.rn.f32 %f15, %f14, %f11;\n"
    " add.rn.f32 %f23, %f9, %f15;\n"
    " cvt.rn.f32.s32 %f16, %r1;\n"
    " mul.rn.f32 %f17, %f16, %f10;\n"
    " add.rn.f32 %f22, %f8, %f17;\n"
    " mov.u32 %r19, 0;\n"
    "$L__BB2_3:\n"
    " mul.rn.f32 %f5, %f22, %f22;\n"
    " fma.rn.f32 %f18, %f23, %f23, %f5;\n"
    " mov.b32 %r17, %f18;\n"
    " setp.gt.s32 %p5, %r17, 1082130432;\n"
    " @%p5 bra $L__BB2_5;\n"
    " neg.f32 %f19, %f23;\n"
    " fma.rn.f32 %f20, %f19, %f23, %f5;\n"
    " add.rn.f32 %f6, %f20, %f12;\n"
    " add.rn.f32 %f21, %f22, %f22;\n"
    " fma.rn.f32 %f23, %f21, %f23, %f13;\n"
    " add.s32 %r19, %r19, 1;\n"
    " setp.lt.s32 %p6, %r19, %r7;\n"
    " mov.f32 %f22, %f6;\n"
    " @%p6 bra $L__BB2_3;\n"
    "$L__BB2_5:\n"
    " mul.wide.s32 %rd2, %r6, %r2;\n"
    " cvt.s64.s32 %rd3, %r1;\n"
    " add.s64 %rd4, %rd2, %rd3;\n"
    " cvta.to.global.u64 %rd5, %rd1;\n"
    " shl.b64 %rd6, %rd4, 2;\n"
    " add.s64 %rd7, %rd5, %rd6;\n"
    " st.global.u32 [%rd7], %r19;\n"
    "$L__BB2_6:\n"
    " ret;\n"
    "}\n"
    ".visible .entry julia_f64(\n"
    " .param .u64 julia_f64_param_0,\n"
    " .param .u32 julia_f64_param_1,\n"
    " .param .u32 julia_f64_param_2,\n"
    " .param .f64 julia_f64_param_3,\n"
    " .param .f64 julia_f64_param_4,\n"
    " .param .f64 julia_f64_param_5,\n"
    " .param .f64 julia_f64_param_6,\n"
    " .param .f64 julia_f64_param_7,\n"
    " .param .f64 julia_f64_param_8,\n"
    " .param .u32 julia_f64_param_9\n"
    ")\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .b32 %r<19>;\n"
    " .reg .f64 %fd<24>;\n"
    " .reg .b64 %rd<9>;\n"
    " ld.param.u64 %rd1, [julia_f64_param_0];\n"
    " ld.param.u32 %r6, [julia_f64_param_1];\n"
    " ld.param.u32 %r8, [julia_f64_param_2];\n"
    " ld.param.f64 %fd8, [julia_f64_param_3];\n"
    " ld.param.f64 %fd9, [julia_f64_param_4];\n"
    " ld.param.f64 %fd10, [julia_f64_param_5];\n"
    " ld.param.f64 %fd11, [julia_f64_param_6];\n"
    " ld.param.f64 %fd12, [julia_f64_param_7];\n"
    " ld.param.f64 %fd13, [julia_f64_param_8];\n"
    " ld.param.u32 %r7, [julia_f64_param_9];\n"
    " mov.u32 %r9, %ctaid.x;\n"
    " mov.u32 %r10, %ntid.x;\n"
    " mov.u32 %r11, %tid.x;\n"
    " mad.lo.s32 %r1, %r9, %r10, %r11;\n"
    " mov.u32 %r12, %ntid.y;\n"
    " mov.u32 %r13, %ctaid.y;\n"
    " mov.u32 %r14, %tid.y;\n"
    " mad.lo.s32 %r2, %r13, %r12, %r14;\n"
    " setp.ge.s32 %p1, %r1, %r6;\n"
    " setp.ge.s32 %p2, %r2, %r8;\n"
    " or.pred %p3, %p1, %p2;\n"
    " @%p3 bra $L__BB3_6;\n"
    " setp.lt.s32 %p4, %r7, 1;\n"
    " mov.u32 %r18, 0;\n"
    " @%p4 bra $L__BB3_5;\n"
    " cvt.rn.f64.s32 %fd14, %r2;\n"
    " mul.rn.f64 %fd15, %fd14, %fd11;\n"
    " add.rn.f64 %fd23, %fd9, %fd15;\n"
    " cvt.rn.f64.s32 %fd16, %r1;\n"
    " mul.rn.f64 %fd17, %fd16, %fd10;\n"
    " add.rn.f64 %fd22, %fd8, %fd17;\n"
    " mov.u32 %r18, 0;\n"
    "$L__BB3_3:\n"
    " mul.rn.f64 %fd5, %fd22, %fd22;\n"
    " fma.rn.f64 %fd18, %fd23, %fd23, %fd5;\n"
    " mov.b64 %rd2, %fd18;\n"
    " setp.gt.s64 %p5, %rd2, 4616189618054758400;\n",
    " @%p5 bra $L__BB3_5;\n"
    " neg.f64 %fd19, %fd23;\n"
    " fma.rn.f64 %fd20, %fd19, %fd23, %fd5;\n"
    " add.rn.f64 %fd6, %fd20, %fd12;\n"
    " add.rn.f64 %fd21, %fd22, %fd22;\n"
    " fma.rn.f64 %fd23, %fd21, %fd23, %fd13;\n"
    " add.s32 %r18, %r18, 1;\n"
    " setp.lt.s32 %p6, %r18, %r7;\n"
    " mov.f64 %fd22, %fd6;\n"
    " @%p6 bra $L__BB3_3;\n"
    "$L__BB3_5:\n"
    " mul.wide.s32 %rd3, %r6, %r2;\n"
    " cvt.s64.s32 %rd4, %r1;\n"
    " add.s64 %rd5, %rd3, %rd4;\n"
    " cvta.to.global.u64 %rd6, %rd1;\n"
    " shl.b64 %rd7, %rd5, 2;\n"
    " add.s64 %rd8, %rd6, %rd7;\n"
    " st.global.u32 [%rd8], %r18;\n"
    "$L__BB3_6:\n"
    " ret;\n"
    "}\n"
    ".visible .entry smooth3x3_f32(\n"
    " .param .u64 smooth3x3_f32_param_0,\n"
    " .param .u64 smooth3x3_f32_param_1,\n"
    " .param .u32 smooth3x3_f32_param_2,\n"
    " .param .u32 smooth3x3_f32_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<12>;\n"
    " .reg .f32 %f<14>;\n"
    " .reg .b32 %r<30>;\n"
    " .reg .b64 %rd<21>;\n"
    " ld.param.u64 %rd7, [smooth3x3_f32_param_0];\n"
    " ld.param.u64 %rd8, [smooth3x3_f32_param_1];\n"
    " ld.param.u32 %r14, [smooth3x3_f32_param_2];\n"
    " ld.param.u32 %r15, [smooth3x3_f32_param_3];\n"
    " mov.u32 %r16, %ntid.x;\n"
    " mov.u32 %r17, %ctaid.x;\n"
    " mov.u32 %r18, %tid.x;\n"
    " mad.lo.s32 %r1, %r17, %r16, %r18;\n"
    " mov.u32 %r19, %ntid.y;\n"
    " mov.u32 %r20, %ctaid.y;\n"
    " mov.u32 %r21, %tid.y;\n"
    " mad.lo.s32 %r2, %r20, %r19, %r21;\n"
    " setp.ge.s32 %p1, %r1, %r14;\n"
    " setp.ge.s32 %p2, %r2, %r15;\n"
    " or.pred %p3, %p1, %p2;\n"
    " @%p3 bra $L__BB4_9;\n"
    " add.s32 %r24, %r2, -1;\n"
    " cvt.s64.s32 %rd1, %r14;\n"
    " add.s32 %r4, %r1, -2;\n"
    " add.s32 %r23, %r1, -1;\n"
    " cvta.to.global.u64 %rd9, %rd7;\n"
    " mul.wide.s32 %rd10, %r23, 4;\n"
    " add.s64 %rd2, %rd9, %rd10;\n"
    " cvta.to.global.u64 %rd3, %rd8;\n"
    " mov.f32 %f12, 0f00000000;\n"
    " mov.u32 %r28, 0;\n"
    "$L__BB4_2:\n"
    " setp.ge.s32 %p4, %r24, %r15;\n"
    " setp.lt.s32 %p5, %r24, 0;\n"
    " or.pred %p6, %p5, %p4;\n"
    " @%p6 bra $L__BB4_7;\n"
    " cvt.s64.s32 %rd11, %r24;\n"
    " mul.lo.s64 %rd12, %rd1, %rd11;\n"
    " shl.b64 %rd13, %rd12, 2;\n"
    " add.s64 %rd20, %rd2, %rd13;\n"
    " mov.u32 %r26, %r4;\n"
    "$L__BB4_4:\n"
    " add.s32 %r26, %r26, 1;\n"
    " setp.lt.s32 %p7, %r26, 0;\n"
    " setp.ge.s32 %p8, %r26, %r14;\n"
    " or.pred %p9, %p7, %p8;\n"
    " @%p9 bra $L__BB4_6;\n"
    " ld.global.f32 %f7, [%rd20];\n"
    " add.rn.f32 %f12, %f12, %f7;\n"
    " add.s32 %r28, %r28, 1;\n"
    "$L__BB4_6:\n"
    " add.s64 %rd20, %rd20, 4;\n"
    " setp.le.s32 %p10, %r26, %r1;\n"
    " @%p10 bra $L__BB4_4;\n"
    "$L__BB4_7:\n"
    " add.s32 %r13, %r24, 1;\n"
    " setp.le.s32 %p11, %r24, %r2;\n"
    " mov.u32 %r24, %r13;\n"
    " @%p11 bra $L__BB4_2;\n"
    " cvt.rn.f32.s32 %f8, %r28;\n"
    " div.rn.f32 %f9, %f12, %f8;\n"
    " cvt.s64.s32 %rd14, %r2;\n"
    " mul.lo.s64 %rd15, %rd1, %rd14;\n"
    " cvt.s64.s32 %rd16, %r1;\n"
    " add.s64 %rd17, %rd15, %rd16;\n"
    " shl.b64 %rd18, %rd17, 2;\n"
    " add.s64 %rd19, %rd3, %rd18;\n"
    " st.global.f32 [%rd19], %f9;\n"
    "$L__BB4_9:\n"
    " ret;\n"
    "}\n"
    ".visible .entry heat_step_f32(\n"
    " .param .u64 heat_step_f32_param_0,\n"
    " .param .u64 heat_step_f32_param_1,\n"
    " .param .u32 heat_step_f32_param_2,\n"
    " .param .u32 heat_step_f32_param_3,\n"
    " .param .f32 heat_step_f32_param_4\n"
    ")\n"
    "{\n"
    " .reg .pred %p<11>;\n"
    " .reg .f32 %f<16>;\n"
    " .reg .b32 %r<13>;\n"
    " .reg .b64 %rd<18>;\n"
    " ld.param.u64 %rd7, [heat_step_f32_param_0];\n"
    " ld.param.u64 %rd6, [heat_step_f32_param_1];\n"
    " ld.param.u32 %r3, [heat_step_f32_param_2];\n"
    " ld.param.u32 %r4, [heat_step_f32_param_3];\n"
    " ld.param.f32 %f1, [heat_step_f32_param_4];\n"
    " cvta.to.global.u64 %rd1, %rd7;\n"
    " mov.u32 %r5, %ntid.x;\n"
    " mov.u32 %r6, %ctaid.x;\n"
    " mov.u32 %r7, %tid.x;\n"
    " mad.lo.s32 %r1, %r6, %r5, %r7;\n"
    " mov.u32 %r8, %ntid.y;\n"
    " mov.u32 %r9, %ctaid.y;\n"
    " mov.u32 %r10, %tid.y;\n"
    " mad.lo.s32 %r2, %r9, %r8, %r10;\n"
    " setp.ge.s32 %p1, %r1, %r3;\n"
    " setp.ge.s32 %p2, %r2, %r4;\n"
    " or.pred %p3, %p1, %p2;\n"
    " @%p3 bra $L__BB5_4;\n"
    " cvt.s64.s32 %rd2, %r3;\n"
    " mul.wide.s32 %rd8, %r3, %r2;\n"
    " cvt.s64.s32 %rd9, %r1;\n"
    " add.s64 %rd3, %rd8, %rd9;\n"
    " setp.eq.s32 %p4, %r2, 0;\n"
    " setp.eq.s32 %p5, %r1, 0;\n"
    " or.pred %p6, %p5, %p4;\n"
    " add.s32 %r11, %r3, -1;\n"
    " setp.eq.s32 %p7, %r1, %r11;\n"
    " or.pred %p8, %p6, %p7;\n"
    " add.s32 %r12, %r4, -1;\n"
    " setp.eq.s32 %p9, %r2, %r12;\n"
    " or.pred %p10, %p8, %p9;\n"
    " shl.b64 %rd10, %rd3, 2;\n"
    " add.s64 %rd4, %rd1, %rd10;\n"
    " cvta.to.global.u64 %rd11, %rd6;\n"
    " add.s64 %rd5, %rd11, %rd10;\n"
    " @%p10 bra $L__BB5_3;\n"
    " bra.uni $L__BB5_2;\n"
    "$L__BB5_3:\n"
    " ld.global.f32 %f15, [%rd4];\n",
    " st.global.f32 [%rd5], %f15;\n"
    " bra.uni $L__BB5_4;\n"
    "$L__BB5_2:\n"
    " ld.global.f32 %f2, [%rd4+4];\n"
    " ld.global.f32 %f3, [%rd4+-4];\n"
    " add.rn.f32 %f4, %f3, %f2;\n"
    " sub.s64 %rd12, %rd3, %rd2;\n"
    " shl.b64 %rd13, %rd12, 2;\n"
    " add.s64 %rd14, %rd1, %rd13;\n"
    " ld.global.f32 %f5, [%rd14];\n"
    " add.rn.f32 %f6, %f4, %f5;\n"
    " add.s64 %rd15, %rd3, %rd2;\n"
    " shl.b64 %rd16, %rd15, 2;\n"
    " add.s64 %rd17, %rd1, %rd16;\n"
    " ld.global.f32 %f7, [%rd17];\n"
    " add.rn.f32 %f8, %f6, %f7;\n"
    " ld.global.f32 %f9, [%rd4];\n"
    " mov.f32 %f10, 0f40800000;\n"
    " mul.rn.f32 %f11, %f10, %f9;\n"
    " sub.rn.f32 %f12, %f8, %f11;\n"
    " mul.rn.f32 %f13, %f1, %f12;\n"
    " add.rn.f32 %f14, %f9, %f13;\n"
    " st.global.f32 [%rd5], %f14;\n"
    "$L__BB5_4:\n"
    " ret;\n"
    "}\n"
    ".visible .entry in_circle(\n"
    " .param .u64 in_circle_param_0,\n"
    " .param .u64 in_circle_param_1,\n"
    " .param .u64 in_circle_param_2,\n"
    " .param .u32 in_circle_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<3>;\n"
    " .reg .f32 %f<3>;\n"
    " .reg .b32 %r<7>;\n"
    " .reg .f64 %fd<6>;\n"
    " .reg .b64 %rd<11>;\n"
    " ld.param.u64 %rd1, [in_circle_param_0];\n"
    " ld.param.u64 %rd2, [in_circle_param_1];\n"
    " ld.param.u64 %rd3, [in_circle_param_2];\n"
    " ld.param.u32 %r2, [in_circle_param_3];\n"
    " mov.u32 %r3, %ctaid.x;\n"
    " mov.u32 %r4, %ntid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB6_2;\n"
    " cvta.to.global.u64 %rd4, %rd1;\n"
    " mul.wide.u32 %rd5, %r1, 4;\n"
    " add.s64 %rd6, %rd4, %rd5;\n"
    " ld.global.f32 %f1, [%rd6];\n"
    " cvt.f64.f32 %fd1, %f1;\n"
    " cvta.to.global.u64 %rd7, %rd2;\n"
    " add.s64 %rd8, %rd7, %rd5;\n"
    " ld.global.f32 %f2, [%rd8];\n"
    " cvt.f64.f32 %fd2, %f2;\n"
    " mul.rn.f64 %fd3, %fd1, %fd1;\n"
    " mul.rn.f64 %fd4, %fd2, %fd2;\n"
    " add.rn.f64 %fd5, %fd3, %fd4;\n"
    " setp.lt.f64 %p2, %fd5, 0d3FF0000000000000;\n"
    " selp.u32 %r6, 1, 0, %p2;\n"
    " cvta.to.global.u64 %rd9, %rd3;\n"
    " add.s64 %rd10, %rd9, %rd5;\n"
    " st.global.u32 [%rd10], %r6;\n"
    "$L__BB6_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry in_box(\n"
    " .param .u64 in_box_param_0,\n"
    " .param .u64 in_box_param_1,\n"
    " .param .u64 in_box_param_2,\n"
    " .param .u32 in_box_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .b16 %rs<6>;\n"
    " .reg .f32 %f<3>;\n"
    " .reg .b32 %r<6>;\n"
    " .reg .b64 %rd<13>;\n"
    " ld.param.u64 %rd2, [in_box_param_0];\n"
    " ld.param.u64 %rd3, [in_box_param_1];\n"
    " ld.param.u64 %rd4, [in_box_param_2];\n"
    " ld.param.u32 %r2, [in_box_param_3];\n"
    " mov.u32 %r3, %ntid.x;\n"
    " mov.u32 %r4, %ctaid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r4, %r3, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB7_5;\n"
    " cvta.to.global.u64 %rd5, %rd2;\n"
    " cvt.u64.u32 %rd1, %r1;\n"
    " mul.wide.u32 %rd6, %r1, 4;\n"
    " add.s64 %rd7, %rd5, %rd6;\n"
    " ld.global.f32 %f2, [%rd7];\n"
    " setp.ltu.f32 %p2, %f2, 0f00000000;\n"
    " setp.geu.f32 %p3, %f2, 0f3F800000;\n"
    " mov.u16 %rs5, 0;\n"
    " or.pred %p4, %p2, %p3;\n"
    " @%p4 bra $L__BB7_4;\n"
    " cvta.to.global.u64 %rd8, %rd3;\n"
    " shl.b64 %rd9, %rd1, 2;\n"
    " add.s64 %rd10, %rd8, %rd9;\n"
    " ld.global.f32 %f1, [%rd10];\n"
    " setp.ltu.f32 %p5, %f1, 0f00000000;\n"
    " @%p5 bra $L__BB7_4;\n"
    " setp.lt.f32 %p6, %f1, 0f3F800000;\n"
    " selp.u16 %rs5, 1, 0, %p6;\n"
    "$L__BB7_4:\n"
    " cvta.to.global.u64 %rd11, %rd4;\n"
    " add.s64 %rd12, %rd11, %rd1;\n"
    " st.global.u8 [%rd12], %rs5;\n"
    "$L__BB7_5:\n"
    " ret;\n"
    "}\n"
    ".visible .entry quantize_f32(\n"
    " .param .u64 quantize_f32_param_0,\n"
    " .param .u64 quantize_f32_param_1,\n"
    " .param .f32 quantize_f32_param_2,\n"
    " .param .u32 quantize_f32_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .f32 %f<5>;\n"
    " .reg .b32 %r<7>;\n"
    " .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [quantize_f32_param_0];\n"
    " ld.param.u64 %rd2, [quantize_f32_param_1];\n"
    " ld.param.f32 %f1, [quantize_f32_param_2];\n"
    " ld.param.u32 %r2, [quantize_f32_param_3];\n"
    " mov.u32 %r3, %ctaid.x;\n"
    " mov.u32 %r4, %ntid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB8_2;\n"
    " cvta.to.global.u64 %rd3, %rd1;\n"
    " mul.wide.u32 %rd4, %r1, 4;\n"
    " add.s64 %rd5, %rd3, %rd4;\n"
    " ld.global.f32 %f2, [%rd5];\n"
    " mul.rn.f32 %f3, %f2, %f1;\n"
    " cvt.rmi.f32.f32 %f4, %f3;\n"
    " cvt.rzi.s32.f32 %r6, %f4;\n"
    " cvta.to.global.u64 %rd6, %rd2;\n"
    " add.s64 %rd7, %rd6, %rd4;\n"
    " st.global.u32 [%rd7], %r6;\n"
    "$L__BB8_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry cell_of(\n"
    " .param .u64 cell_of_param_0,\n",
    " .param .u64 cell_of_param_1,\n"
    " .param .u64 cell_of_param_2,\n"
    " .param .u32 cell_of_param_3,\n"
    " .param .u32 cell_of_param_4\n"
    ")\n"
    "{\n"
    " .reg .pred %p<6>;\n"
    " .reg .f32 %f<8>;\n"
    " .reg .b32 %r<18>;\n"
    " .reg .b64 %rd<13>;\n"
    " ld.param.u64 %rd2, [cell_of_param_0];\n"
    " ld.param.u64 %rd3, [cell_of_param_1];\n"
    " ld.param.u64 %rd4, [cell_of_param_2];\n"
    " ld.param.u32 %r8, [cell_of_param_3];\n"
    " ld.param.u32 %r9, [cell_of_param_4];\n"
    " mov.u32 %r10, %ntid.x;\n"
    " mov.u32 %r11, %ctaid.x;\n"
    " mov.u32 %r12, %tid.x;\n"
    " mad.lo.s32 %r1, %r11, %r10, %r12;\n"
    " setp.ge.u32 %p1, %r1, %r9;\n"
    " @%p1 bra $L__BB9_8;\n"
    " cvta.to.global.u64 %rd5, %rd2;\n"
    " cvt.u64.u32 %rd1, %r1;\n"
    " mul.wide.u32 %rd6, %r1, 4;\n"
    " add.s64 %rd7, %rd5, %rd6;\n"
    " cvt.rn.f32.u32 %f3, %r8;\n"
    " ld.global.f32 %f4, [%rd7];\n"
    " mul.rn.f32 %f1, %f4, %f3;\n"
    " cvta.to.global.u64 %rd8, %rd3;\n"
    " add.s64 %rd9, %rd8, %rd6;\n"
    " ld.global.f32 %f5, [%rd9];\n"
    " mul.rn.f32 %f2, %f5, %f3;\n"
    " setp.le.f32 %p2, %f1, 0f00000000;\n"
    " mov.u32 %r17, 0;\n"
    " mov.u32 %r16, %r17;\n"
    " @%p2 bra $L__BB9_4;\n"
    " add.s32 %r16, %r8, -1;\n"
    " cvt.rn.f32.u32 %f6, %r16;\n"
    " setp.ge.f32 %p3, %f1, %f6;\n"
    " @%p3 bra $L__BB9_4;\n"
    " cvt.rzi.u32.f32 %r16, %f1;\n"
    "$L__BB9_4:\n"
    " setp.le.f32 %p4, %f2, 0f00000000;\n"
    " @%p4 bra $L__BB9_7;\n"
    " add.s32 %r17, %r8, -1;\n"
    " cvt.rn.f32.u32 %f7, %r17;\n"
    " setp.ge.f32 %p5, %f2, %f7;\n"
    " @%p5 bra $L__BB9_7;\n"
    " cvt.rzi.u32.f32 %r17, %f2;\n"
    "$L__BB9_7:\n"
    " mad.lo.s32 %r15, %r17, %r8, %r16;\n"
    " cvta.to.global.u64 %rd10, %rd4;\n"
    " shl.b64 %rd11, %rd1, 2;\n"
    " add.s64 %rd12, %rd10, %rd11;\n"
    " st.global.u32 [%rd12], %r15;\n"
    "$L__BB9_8:\n"
    " ret;\n"
    "}\n"
    ".visible .entry gather_f32(\n"
    " .param .u64 gather_f32_param_0,\n"
    " .param .u64 gather_f32_param_1,\n"
    " .param .u64 gather_f32_param_2,\n"
    " .param .u32 gather_f32_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .f32 %f<2>;\n"
    " .reg .b32 %r<7>;\n"
    " .reg .b64 %rd<12>;\n"
    " ld.param.u64 %rd1, [gather_f32_param_0];\n"
    " ld.param.u64 %rd2, [gather_f32_param_1];\n"
    " ld.param.u64 %rd3, [gather_f32_param_2];\n"
    " ld.param.u32 %r2, [gather_f32_param_3];\n"
    " mov.u32 %r3, %ctaid.x;\n"
    " mov.u32 %r4, %ntid.x;\n"
    " mov.u32 %r5, %tid.x;\n"
    " mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2;\n"
    " @%p1 bra $L__BB10_2;\n"
    " cvta.to.global.u64 %rd4, %rd2;\n"
    " mul.wide.u32 %rd5, %r1, 4;\n"
    " add.s64 %rd6, %rd4, %rd5;\n"
    " ld.global.u32 %r6, [%rd6];\n"
    " cvta.to.global.u64 %rd7, %rd1;\n"
    " mul.wide.u32 %rd8, %r6, 4;\n"
    " add.s64 %rd9, %rd7, %rd8;\n"
    " ld.global.f32 %f1, [%rd9];\n"
    " cvta.to.global.u64 %rd10, %rd3;\n"
    " add.s64 %rd11, %rd10, %rd5;\n"
    " st.global.f32 [%rd11], %f1;\n"
    "$L__BB10_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry brightness_f32(\n"
    " .param .u64 brightness_f32_param_0,\n"
    " .param .u64 brightness_f32_param_1,\n"
    " .param .u32 brightness_f32_param_2,\n"
    " .param .u32 brightness_f32_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<2>;\n"
    " .reg .f32 %f<5>;\n"
    " .reg .b32 %r<8>;\n"
    " .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [brightness_f32_param_0];\n"
    " ld.param.u64 %rd2, [brightness_f32_param_1];\n"
    " ld.param.u32 %r2, [brightness_f32_param_2];\n"
    " ld.param.u32 %r3, [brightness_f32_param_3];\n"
    " mov.u32 %r4, %ctaid.x;\n"
    " mov.u32 %r5, %ntid.x;\n"
    " mov.u32 %r6, %tid.x;\n"
    " mad.lo.s32 %r1, %r4, %r5, %r6;\n"
    " setp.ge.u32 %p1, %r1, %r3;\n"
    " @%p1 bra $L__BB11_2;\n"
    " cvta.to.global.u64 %rd3, %rd1;\n"
    " mul.wide.u32 %rd4, %r1, 4;\n"
    " add.s64 %rd5, %rd3, %rd4;\n"
    " ld.global.u32 %r7, [%rd5];\n"
    " cvt.rn.f32.u32 %f1, %r7;\n"
    " cvt.rn.f32.s32 %f2, %r2;\n"
    " div.rn.f32 %f3, %f1, %f2;\n"
    " sqrt.rn.f32 %f4, %f3;\n"
    " cvta.to.global.u64 %rd6, %rd2;\n"
    " add.s64 %rd7, %rd6, %rd4;\n"
    " st.global.f32 [%rd7], %f4;\n"
    "$L__BB11_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry equalize_f32(\n"
    " .param .u64 equalize_f32_param_0,\n"
    " .param .u64 equalize_f32_param_1,\n"
    " .param .u64 equalize_f32_param_2,\n"
    " .param .u32 equalize_f32_param_3,\n"
    " .param .f32 equalize_f32_param_4,\n"
    " .param .f32 equalize_f32_param_5,\n"
    " .param .u32 equalize_f32_param_6\n"
    ")\n"
    "{\n"
    " .reg .pred %p<5>;\n"
    " .reg .f32 %f<10>;\n"
    " .reg .b32 %r<13>;\n"
    " .reg .b64 %rd<14>;\n"
    " ld.param.u64 %rd2, [equalize_f32_param_0];\n"
    " ld.param.u64 %rd3, [equalize_f32_param_1];\n"
    " ld.param.u64 %rd4, [equalize_f32_param_2];\n"
    " ld.param.u32 %r12, [equalize_f32_param_3];\n"
    " ld.param.f32 %f2, [equalize_f32_param_4];\n",
    " ld.param.f32 %f3, [equalize_f32_param_5];\n"
    " ld.param.u32 %r6, [equalize_f32_param_6];\n"
    " mov.u32 %r7, %ntid.x;\n"
    " mov.u32 %r8, %ctaid.x;\n"
    " mov.u32 %r9, %tid.x;\n"
    " mad.lo.s32 %r1, %r8, %r7, %r9;\n"
    " setp.ge.u32 %p1, %r1, %r6;\n"
    " @%p1 bra $L__BB12_6;\n"
    " cvta.to.global.u64 %rd5, %rd2;\n"
    " cvt.u64.u32 %rd1, %r1;\n"
    " mul.wide.u32 %rd6, %r1, 4;\n"
    " add.s64 %rd7, %rd5, %rd6;\n"
    " ld.global.f32 %f1, [%rd7];\n"
    " setp.lt.f32 %p2, %f1, %f2;\n"
    " @%p2 bra $L__BB12_5;\n"
    " setp.ltu.f32 %p3, %f1, %f3;\n"
    " @%p3 bra $L__BB12_4;\n"
    " bra.uni $L__BB12_3;\n"
    "$L__BB12_4:\n"
    " sub.rn.f32 %f4, %f1, %f2;\n"
    " sub.rn.f32 %f5, %f3, %f2;\n"
    " cvt.rn.f32.u32 %f6, %r12;\n"
    " div.rn.f32 %f7, %f6, %f5;\n"
    " mul.rn.f32 %f8, %f4, %f7;\n"
    " cvt.rzi.u32.f32 %r10, %f8;\n"
    " setp.lt.u32 %p4, %r10, %r12;\n"
    " add.s32 %r11, %r12, -1;\n"
    " selp.b32 %r12, %r10, %r11, %p4;\n"
    " bra.uni $L__BB12_5;\n"
    "$L__BB12_3:\n"
    " add.s32 %r12, %r12, 1;\n"
    "$L__BB12_5:\n"
    " cvta.to.global.u64 %rd8, %rd3;\n"
    " mul.wide.u32 %rd9, %r12, 4;\n"
    " add.s64 %rd10, %rd8, %rd9;\n"
    " ld.global.f32 %f9, [%rd10];\n"
    " cvta.to.global.u64 %rd11, %rd4;\n"
    " shl.b64 %rd12, %rd1, 2;\n"
    " add.s64 %rd13, %rd11, %rd12;\n"
    " st.global.f32 [%rd13], %f9;\n"
    "$L__BB12_6:\n"
    " ret;\n"
    "}\n"
    ".visible .entry busy_f32(\n"
    " .param .u64 busy_f32_param_0,\n"
    " .param .u64 busy_f32_param_1,\n"
    " .param .u32 busy_f32_param_2,\n"
    " .param .u32 busy_f32_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred %p<7>;\n"
    " .reg .f32 %f<22>;\n"
    " .reg .b32 %r<16>;\n"
    " .reg .b64 %rd<10>;\n"
    " ld.param.u64 %rd2, [busy_f32_param_0];\n"
    " ld.param.u64 %rd3, [busy_f32_param_1];\n"
    " ld.param.u32 %r9, [busy_f32_param_2];\n"
    " ld.param.u32 %r8, [busy_f32_param_3];\n"
    " mov.u32 %r10, %ntid.x;\n"
    " mov.u32 %r11, %ctaid.x;\n"
    " mov.u32 %r12, %tid.x;\n"
    " mad.lo.s32 %r1, %r11, %r10, %r12;\n"
    " setp.ge.u32 %p1, %r1, %r9;\n"
    " @%p1 bra $L__BB13_8;\n"
    " cvta.to.global.u64 %rd4, %rd2;\n"
    " cvt.u64.u32 %rd1, %r1;\n"
    " mul.wide.u32 %rd5, %r1, 4;\n"
    " add.s64 %rd6, %rd4, %rd5;\n"
    " ld.global.f32 %f21, [%rd6];\n"
    " setp.lt.s32 %p2, %r8, 1;\n"
    " @%p2 bra $L__BB13_7;\n"
    " add.s32 %r13, %r8, -1;\n"
    " and.b32 %r15, %r8, 3;\n"
    " setp.lt.u32 %p3, %r13, 3;\n"
    " @%p3 bra $L__BB13_5;\n"
    " sub.s32 %r14, %r8, %r15;\n"
    "$L__BB13_4:\n"
    " mov.f32 %f10, 0f3A83126F;\n"
    " mov.f32 %f11, 0f3F7FBE77;\n"
    " fma.rn.f32 %f12, %f21, %f11, %f10;\n"
    " fma.rn.f32 %f13, %f12, %f11, %f10;\n"
    " fma.rn.f32 %f14, %f13, %f11, %f10;\n"
    " fma.rn.f32 %f21, %f14, %f11, %f10;\n"
    " add.s32 %r14, %r14, -4;\n"
    " setp.ne.s32 %p4, %r14, 0;\n"
    " @%p4 bra $L__BB13_4;\n"
    "$L__BB13_5:\n"
    " setp.eq.s32 %p5, %r15, 0;\n"
    " @%p5 bra $L__BB13_7;\n"
    "$L__BB13_6:\n"
    " .pragma \"nounroll\";\n"
    " mov.f32 %f15, 0f3A83126F;\n"
    " mov.f32 %f16, 0f3F7FBE77;\n"
    " fma.rn.f32 %f21, %f21, %f16, %f15;\n"
    " add.s32 %r15, %r15, -1;\n"
    " setp.ne.s32 %p6, %r15, 0;\n"
    " @%p6 bra $L__BB13_6;\n"
    "$L__BB13_7:\n"
    " cvta.to.global.u64 %rd7, %rd3;\n"
    " shl.b64 %rd8, %rd1, 2;\n"
    " add.s64 %rd9, %rd7, %rd8;\n"
    " st.global.f32 [%rd9], %f21;\n"
    "$L__BB13_8:\n"
    " ret;\n"
    "}\n",
    0
};

/* The loaded module and a handle per kernel; all zero when not loaded. */
typedef struct gallery_kernels_kernels {
    gpuk_module module;
    gpuk_kernel mandelbrot_f32;
    gpuk_kernel mandelbrot_f64;
    gpuk_kernel julia_f32;
    gpuk_kernel julia_f64;
    gpuk_kernel smooth3x3_f32;
    gpuk_kernel heat_step_f32;
    gpuk_kernel in_circle;
    gpuk_kernel in_box;
    gpuk_kernel quantize_f32;
    gpuk_kernel cell_of;
    gpuk_kernel gather_f32;
    gpuk_kernel brightness_f32;
    gpuk_kernel equalize_f32;
    gpuk_kernel busy_f32;
} gallery_kernels_kernels;

/* JIT-loads the module on ctx and gets each kernel; on failure out is all zero and
   nothing stays loaded. PTX of more than one piece is joined in memory from malloc,
   freed before it returns (not gpuk_desc.allocator: no public call reaches it). */
static inline gpuk_result gallery_kernels_load(gpuk_ctx* ctx, gallery_kernels_kernels* out) {
    gpuk_module_desc desc;
    gpuk_result r;
    const char* const* piece;
    size_t bytes = 0, at = 0;
    char* text;
    if (!out) return gpuk_module_load(ctx, NULL, NULL); /* gpuk names the NULL */
    memset(out, 0, sizeof *out);
    memset(&desc, 0, sizeof desc);
    desc.kind = GPUK_IMAGE_PTX;
    desc.label = "gallery_kernels.cu";
    for (piece = gallery_kernels_ptx; *piece; piece++) bytes += strlen(*piece);
    text = (char*)malloc(bytes + 1);
    if (!text) return GPUK_ERR_HOST_ALLOC; /* before any gpuk call: no error text */
    for (piece = gallery_kernels_ptx; *piece; piece++) {
        size_t n = strlen(*piece);
        memcpy(text + at, *piece, n);
        at += n;
    }
    text[at] = 0;
    desc.image.ptr = text;
    r = gpuk_module_load(ctx, &desc, &out->module);
    free(text);
    if (r != GPUK_OK) return r;
    if ((r = gpuk_kernel_get(ctx, out->module, "mandelbrot_f32", &out->mandelbrot_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "mandelbrot_f64", &out->mandelbrot_f64)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "julia_f32", &out->julia_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "julia_f64", &out->julia_f64)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "smooth3x3_f32", &out->smooth3x3_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "heat_step_f32", &out->heat_step_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "in_circle", &out->in_circle)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "in_box", &out->in_box)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "quantize_f32", &out->quantize_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "cell_of", &out->cell_of)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "gather_f32", &out->gather_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "brightness_f32", &out->brightness_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "equalize_f32", &out->equalize_f32)) != GPUK_OK) goto fail;
    if ((r = gpuk_kernel_get(ctx, out->module, "busy_f32", &out->busy_f32)) != GPUK_OK) goto fail;
    return GPUK_OK;
fail:
    gpuk_module_unload(ctx, out->module);
    memset(out, 0, sizeof *out);
    return r;
}

/* Unloads the module (its kernels go with it) and zeroes k. */
static inline gpuk_result gallery_kernels_unload(gpuk_ctx* ctx, gallery_kernels_kernels* k) {
    gpuk_result r;
    gpuk_module m;
    m.id = k ? k->module.id : 0u;
    r = gpuk_module_unload(ctx, m);
    if (r == GPUK_OK && k) memset(k, 0, sizeof *k);
    return r;
}

/* __global__ void mandelbrot_f32(unsigned* iters, int width, int height, float x0, float y0, float dx, float dy, int max_iter) */
static inline gpuk_result gallery_kernels_mandelbrot_f32(gpuk_ctx* ctx,
                                                         const gallery_kernels_kernels* kernels,
                                                         const gpuk_grid* launch, gpuk_array iters,
                                                         int width, int height, float x0, float y0,
                                                         float dx, float dy, int max_iter) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[8];
    size_t gpuk__sizes[8];
    gpuk_devptr gpuk__p0 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, iters, sizeof(unsigned int), "gallery_kernels_mandelbrot_f32: iters",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->mandelbrot_f32.id : 0u;
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
    gpuk__args[1] = &width;
    gpuk__sizes[1] = sizeof width;
    gpuk__args[2] = &height;
    gpuk__sizes[2] = sizeof height;
    gpuk__args[3] = &x0;
    gpuk__sizes[3] = sizeof x0;
    gpuk__args[4] = &y0;
    gpuk__sizes[4] = sizeof y0;
    gpuk__args[5] = &dx;
    gpuk__sizes[5] = sizeof dx;
    gpuk__args[6] = &dy;
    gpuk__sizes[6] = sizeof dy;
    gpuk__args[7] = &max_iter;
    gpuk__sizes[7] = sizeof max_iter;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 8;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void mandelbrot_f64(unsigned* iters, int width, int height, double x0, double y0, double dx, double dy, int max_iter) */
static inline gpuk_result gallery_kernels_mandelbrot_f64(gpuk_ctx* ctx,
                                                         const gallery_kernels_kernels* kernels,
                                                         const gpuk_grid* launch, gpuk_array iters,
                                                         int width, int height, double x0,
                                                         double y0, double dx, double dy,
                                                         int max_iter) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[8];
    size_t gpuk__sizes[8];
    gpuk_devptr gpuk__p0 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, iters, sizeof(unsigned int), "gallery_kernels_mandelbrot_f64: iters",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->mandelbrot_f64.id : 0u;
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
    gpuk__args[1] = &width;
    gpuk__sizes[1] = sizeof width;
    gpuk__args[2] = &height;
    gpuk__sizes[2] = sizeof height;
    gpuk__args[3] = &x0;
    gpuk__sizes[3] = sizeof x0;
    gpuk__args[4] = &y0;
    gpuk__sizes[4] = sizeof y0;
    gpuk__args[5] = &dx;
    gpuk__sizes[5] = sizeof dx;
    gpuk__args[6] = &dy;
    gpuk__sizes[6] = sizeof dy;
    gpuk__args[7] = &max_iter;
    gpuk__sizes[7] = sizeof max_iter;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 8;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void julia_f32(unsigned* iters, int width, int height, float x0, float y0, float dx, float dy, float cr, float ci, int max_iter) */
static inline gpuk_result gallery_kernels_julia_f32(gpuk_ctx* ctx,
                                                    const gallery_kernels_kernels* kernels,
                                                    const gpuk_grid* launch, gpuk_array iters,
                                                    int width, int height, float x0, float y0,
                                                    float dx, float dy, float cr, float ci,
                                                    int max_iter) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[10];
    size_t gpuk__sizes[10];
    gpuk_devptr gpuk__p0 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, iters, sizeof(unsigned int), "gallery_kernels_julia_f32: iters",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->julia_f32.id : 0u;
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
    gpuk__args[1] = &width;
    gpuk__sizes[1] = sizeof width;
    gpuk__args[2] = &height;
    gpuk__sizes[2] = sizeof height;
    gpuk__args[3] = &x0;
    gpuk__sizes[3] = sizeof x0;
    gpuk__args[4] = &y0;
    gpuk__sizes[4] = sizeof y0;
    gpuk__args[5] = &dx;
    gpuk__sizes[5] = sizeof dx;
    gpuk__args[6] = &dy;
    gpuk__sizes[6] = sizeof dy;
    gpuk__args[7] = &cr;
    gpuk__sizes[7] = sizeof cr;
    gpuk__args[8] = &ci;
    gpuk__sizes[8] = sizeof ci;
    gpuk__args[9] = &max_iter;
    gpuk__sizes[9] = sizeof max_iter;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 10;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void julia_f64(unsigned* iters, int width, int height, double x0, double y0, double dx, double dy, double cr, double ci, int max_iter) */
static inline gpuk_result gallery_kernels_julia_f64(gpuk_ctx* ctx,
                                                    const gallery_kernels_kernels* kernels,
                                                    const gpuk_grid* launch, gpuk_array iters,
                                                    int width, int height, double x0, double y0,
                                                    double dx, double dy, double cr, double ci,
                                                    int max_iter) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[10];
    size_t gpuk__sizes[10];
    gpuk_devptr gpuk__p0 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, iters, sizeof(unsigned int), "gallery_kernels_julia_f64: iters",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->julia_f64.id : 0u;
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
    gpuk__args[1] = &width;
    gpuk__sizes[1] = sizeof width;
    gpuk__args[2] = &height;
    gpuk__sizes[2] = sizeof height;
    gpuk__args[3] = &x0;
    gpuk__sizes[3] = sizeof x0;
    gpuk__args[4] = &y0;
    gpuk__sizes[4] = sizeof y0;
    gpuk__args[5] = &dx;
    gpuk__sizes[5] = sizeof dx;
    gpuk__args[6] = &dy;
    gpuk__sizes[6] = sizeof dy;
    gpuk__args[7] = &cr;
    gpuk__sizes[7] = sizeof cr;
    gpuk__args[8] = &ci;
    gpuk__sizes[8] = sizeof ci;
    gpuk__args[9] = &max_iter;
    gpuk__sizes[9] = sizeof max_iter;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 10;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void smooth3x3_f32(const float* in, float* out, int width, int height) */
static inline gpuk_result gallery_kernels_smooth3x3_f32(gpuk_ctx* ctx,
                                                        const gallery_kernels_kernels* kernels,
                                                        const gpuk_grid* launch, gpuk_array in,
                                                        gpuk_array out, int width, int height) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, in, sizeof(float), "gallery_kernels_smooth3x3_f32: in",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(float), "gallery_kernels_smooth3x3_f32: out",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->smooth3x3_f32.id : 0u;
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
    gpuk__args[2] = &width;
    gpuk__sizes[2] = sizeof width;
    gpuk__args[3] = &height;
    gpuk__sizes[3] = sizeof height;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void heat_step_f32(const float* u, float* v, int width, int height, float r) */
static inline gpuk_result gallery_kernels_heat_step_f32(gpuk_ctx* ctx,
                                                        const gallery_kernels_kernels* kernels,
                                                        const gpuk_grid* launch, gpuk_array u,
                                                        gpuk_array v, int width, int height,
                                                        float r) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[5];
    size_t gpuk__sizes[5];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, u, sizeof(float), "gallery_kernels_heat_step_f32: u",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, v, sizeof(float), "gallery_kernels_heat_step_f32: v",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->heat_step_f32.id : 0u;
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
    gpuk__args[2] = &width;
    gpuk__sizes[2] = sizeof width;
    gpuk__args[3] = &height;
    gpuk__sizes[3] = sizeof height;
    gpuk__args[4] = &r;
    gpuk__sizes[4] = sizeof r;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 5;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void in_circle(const float* x, const float* y, unsigned* hit, unsigned n) */
static inline gpuk_result gallery_kernels_in_circle(gpuk_ctx* ctx,
                                                    const gallery_kernels_kernels* kernels,
                                                    const gpuk_grid* launch, gpuk_array x,
                                                    gpuk_array y, gpuk_array hit, unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, x, sizeof(float), "gallery_kernels_in_circle: x",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, y, sizeof(float), "gallery_kernels_in_circle: y",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, hit, sizeof(unsigned int), "gallery_kernels_in_circle: hit",
                                      &gpuk__p2, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->in_circle.id : 0u;
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
    gpuk__args[2] = &gpuk__p2;
    gpuk__sizes[2] = sizeof gpuk__p2;
    gpuk__args[3] = &n;
    gpuk__sizes[3] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void in_box(const float* x, const float* y, unsigned char* inside, unsigned n) */
static inline gpuk_result gallery_kernels_in_box(gpuk_ctx* ctx,
                                                 const gallery_kernels_kernels* kernels,
                                                 const gpuk_grid* launch, gpuk_array x,
                                                 gpuk_array y, gpuk_array inside, unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, x, sizeof(float), "gallery_kernels_in_box: x",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, y, sizeof(float), "gallery_kernels_in_box: y",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, inside, sizeof(unsigned char), "gallery_kernels_in_box: inside",
                                      &gpuk__p2, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->in_box.id : 0u;
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
    gpuk__args[2] = &gpuk__p2;
    gpuk__sizes[2] = sizeof gpuk__p2;
    gpuk__args[3] = &n;
    gpuk__sizes[3] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void quantize_f32(const float* x, int* q, float scale, unsigned n) */
static inline gpuk_result gallery_kernels_quantize_f32(gpuk_ctx* ctx,
                                                       const gallery_kernels_kernels* kernels,
                                                       const gpuk_grid* launch, gpuk_array x,
                                                       gpuk_array q, float scale, unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, x, sizeof(float), "gallery_kernels_quantize_f32: x",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, q, sizeof(int), "gallery_kernels_quantize_f32: q",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->quantize_f32.id : 0u;
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
    gpuk__args[3] = &n;
    gpuk__sizes[3] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void cell_of(const float* x, const float* y, unsigned* cell, unsigned g, unsigned n) */
static inline gpuk_result gallery_kernels_cell_of(gpuk_ctx* ctx,
                                                  const gallery_kernels_kernels* kernels,
                                                  const gpuk_grid* launch, gpuk_array x,
                                                  gpuk_array y, gpuk_array cell, unsigned int g,
                                                  unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[5];
    size_t gpuk__sizes[5];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, x, sizeof(float), "gallery_kernels_cell_of: x",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, y, sizeof(float), "gallery_kernels_cell_of: y",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, cell, sizeof(unsigned int), "gallery_kernels_cell_of: cell",
                                      &gpuk__p2, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->cell_of.id : 0u;
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
    gpuk__args[2] = &gpuk__p2;
    gpuk__sizes[2] = sizeof gpuk__p2;
    gpuk__args[3] = &g;
    gpuk__sizes[3] = sizeof g;
    gpuk__args[4] = &n;
    gpuk__sizes[4] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 5;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void gather_f32(const float* in, const unsigned* index, float* out, unsigned n) */
static inline gpuk_result gallery_kernels_gather_f32(gpuk_ctx* ctx,
                                                     const gallery_kernels_kernels* kernels,
                                                     const gpuk_grid* launch, gpuk_array in,
                                                     gpuk_array index, gpuk_array out,
                                                     unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, in, sizeof(float), "gallery_kernels_gather_f32: in",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, index, sizeof(unsigned int), "gallery_kernels_gather_f32: index",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(float), "gallery_kernels_gather_f32: out",
                                      &gpuk__p2, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->gather_f32.id : 0u;
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
    gpuk__args[2] = &gpuk__p2;
    gpuk__sizes[2] = sizeof gpuk__p2;
    gpuk__args[3] = &n;
    gpuk__sizes[3] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void brightness_f32(const unsigned* iters, float* out, int max_iter, unsigned n) */
static inline gpuk_result gallery_kernels_brightness_f32(gpuk_ctx* ctx,
                                                         const gallery_kernels_kernels* kernels,
                                                         const gpuk_grid* launch, gpuk_array iters,
                                                         gpuk_array out, int max_iter,
                                                         unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, iters, sizeof(unsigned int), "gallery_kernels_brightness_f32: iters",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(float), "gallery_kernels_brightness_f32: out",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->brightness_f32.id : 0u;
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
    gpuk__args[2] = &max_iter;
    gpuk__sizes[2] = sizeof max_iter;
    gpuk__args[3] = &n;
    gpuk__sizes[3] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void equalize_f32(const float* in, const float* level, float* out, unsigned nbins, float lo, float hi, unsigned n) */
static inline gpuk_result gallery_kernels_equalize_f32(gpuk_ctx* ctx,
                                                       const gallery_kernels_kernels* kernels,
                                                       const gpuk_grid* launch, gpuk_array in,
                                                       gpuk_array level, gpuk_array out,
                                                       unsigned int nbins, float lo, float hi,
                                                       unsigned int n) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[7];
    size_t gpuk__sizes[7];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0, gpuk__p2 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, in, sizeof(float), "gallery_kernels_equalize_f32: in",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, level, sizeof(float), "gallery_kernels_equalize_f32: level",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(float), "gallery_kernels_equalize_f32: out",
                                      &gpuk__p2, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->equalize_f32.id : 0u;
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
    gpuk__args[2] = &gpuk__p2;
    gpuk__sizes[2] = sizeof gpuk__p2;
    gpuk__args[3] = &nbins;
    gpuk__sizes[3] = sizeof nbins;
    gpuk__args[4] = &lo;
    gpuk__sizes[4] = sizeof lo;
    gpuk__args[5] = &hi;
    gpuk__sizes[5] = sizeof hi;
    gpuk__args[6] = &n;
    gpuk__sizes[6] = sizeof n;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 7;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

/* __global__ void busy_f32(const float* in, float* out, unsigned n, int reps) */
static inline gpuk_result gallery_kernels_busy_f32(gpuk_ctx* ctx,
                                                   const gallery_kernels_kernels* kernels,
                                                   const gpuk_grid* launch, gpuk_array in,
                                                   gpuk_array out, unsigned int n, int reps) {
    gpuk_launch_desc gpuk__desc;
    gpuk_kernel gpuk__kernel;
    void* gpuk__args[4];
    size_t gpuk__sizes[4];
    gpuk_devptr gpuk__p0 = 0, gpuk__p1 = 0;
    size_t gpuk__elems = 0;
    gpuk_result gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, in, sizeof(float), "gallery_kernels_busy_f32: in",
                                      &gpuk__p0, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    if ((gpuk__r = gpuk_array_resolve(ctx, out, sizeof(float), "gallery_kernels_busy_f32: out",
                                      &gpuk__p1, &gpuk__elems)) != GPUK_OK)
        return gpuk__r;
    gpuk__kernel.id = kernels ? kernels->busy_f32.id : 0u;
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
    gpuk__args[3] = &reps;
    gpuk__sizes[3] = sizeof reps;
    gpuk__desc.args = gpuk__args;
    gpuk__desc.arg_sizes = gpuk__sizes;
    gpuk__desc.num_args = 4;
    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);
}

#ifdef __cplusplus
}
#endif
#endif /* GPUK_EMBED_gallery_kernels_H */
