/* examples/01_vector_add.c - device query, then c = a + b on 2^24 floats through a kernel given
   as PTX text, checked against the CPU, with timings.
   cc -std=c99 -O2 -I.. 01_vector_add.c -o vector_add -ldl */
#define _POSIX_C_SOURCE 199309L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Hand-written PTX: .target sm_52 and .version 6.0 load on any driver from CUDA 9.0 on. */
static const char vadd_ptx[] =
    ".version 6.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    "\n"
    "// c[i] = a[i] + b[i] for i < n; one thread per element\n"
    ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
    "{\n"
    "    .reg .pred  %p;\n"
    "    .reg .b32   %r<5>;\n"
    "    .reg .b64   %rd<8>;\n"
    "    .reg .f32   %f<4>;\n"
    "\n"
    "    ld.param.u64        %rd1, [a];\n"
    "    ld.param.u64        %rd2, [b];\n"
    "    ld.param.u64        %rd3, [c];\n"
    "    ld.param.u32        %r1, [n];\n"
    "    mov.u32             %r2, %ctaid.x;\n"
    "    mov.u32             %r3, %ntid.x;\n"
    "    mov.u32             %r4, %tid.x;\n"
    "    mad.lo.s32          %r2, %r2, %r3, %r4;\n"
    "    setp.ge.u32         %p, %r2, %r1;\n"
    "    @%p bra             DONE;\n"
    "    mul.wide.u32        %rd4, %r2, 4;\n"
    "    cvta.to.global.u64  %rd1, %rd1;\n"
    "    cvta.to.global.u64  %rd2, %rd2;\n"
    "    cvta.to.global.u64  %rd3, %rd3;\n"
    "    add.s64             %rd5, %rd1, %rd4;\n"
    "    add.s64             %rd6, %rd2, %rd4;\n"
    "    add.s64             %rd7, %rd3, %rd4;\n"
    "    ld.global.f32       %f1, [%rd5];\n"
    "    ld.global.f32       %f2, [%rd6];\n"
    "    add.f32             %f3, %f1, %f2;\n"
    "    st.global.f32       [%rd7], %f3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

/* The logger installed below already prints every failure's text (gpuk_last_error() holds the
   same), so TRY only says which call it was. */
#define TRY(call) do { gpuk_result r_ = (call); if (r_ != GPUK_OK) { \
    fprintf(stderr, "vector_add: %s failed\n", #call); return 1; } } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(void) {
    const unsigned n = 1u << 24;
    const size_t bytes = (size_t)n * sizeof(float);
    gpuk_ctx* ctx;
    gpuk_buffer a, b, c;
    gpuk_pinned ha, hb, hc;
    gpuk_module mod;
    gpuk_kernel vadd;
    gpuk_timer timer;
    float *pa, *pb, *pc, ms_up = 0, ms_kernel = 0, ms_down = 0;
    int count = 0, block = 0, d;
    unsigned i, bad = 0;
    double t0 = now_ms(), t_init, t_ctx, t_mod;

    TRY(gpuk_init(&(gpuk_desc){ .logger = { gpuk_log_stderr, NULL } }));
    t_init = now_ms();
    TRY(gpuk_device_count(&count));
    if (count == 0) { fprintf(stderr, "vector_add: the driver sees no CUDA device\n"); return 1; }
    for (d = 0; d < count; d++) {
        gpuk_device_info info;
        TRY(gpuk_device_query(d, &info));
        printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB, driver CUDA %d.%d\n", d, info.name, info.cc_major,
               info.cc_minor, info.sm_count, (double)info.total_bytes / (1 << 30), info.driver_version / 1000,
               info.driver_version % 1000 / 10);
    }
    TRY(gpuk_ctx_create(&(gpuk_ctx_desc){ .device = 0 }, &ctx));
    t_ctx = now_ms();
    TRY(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { vadd_ptx, 0 }, .label = "vadd" }, &mod));
    TRY(gpuk_kernel_get(ctx, mod, "vadd", &vadd));
    t_mod = now_ms();

    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .label = "a" }, &a));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .label = "b" }, &b));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes, .label = "c" }, &c));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &ha));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &hb));
    TRY(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &hc));
    pa = (float*)gpuk_pinned_ptr(ctx, ha);
    pb = (float*)gpuk_pinned_ptr(ctx, hb);
    pc = (float*)gpuk_pinned_ptr(ctx, hc);
    srand((unsigned)time(NULL));
    for (i = 0; i < n; i++) {
        pa[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        pb[i] = (float)rand() / (float)RAND_MAX * 1000.0f;
        pc[i] = -12345.0f; /* poison: every element must be written */
    }
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_buffer_write_async(ctx, GPUK_DEFAULT_STREAM, a, 0, pa, bytes));
    TRY(gpuk_buffer_write_async(ctx, GPUK_DEFAULT_STREAM, b, 0, pb, bytes));
    TRY(gpuk_timer_stop(ctx, &timer, &ms_up));
    {
        gpuk_devptr da = gpuk_buffer_devptr(ctx, a), db = gpuk_buffer_devptr(ctx, b), dc = gpuk_buffer_devptr(ctx, c);
        unsigned un = n;
        TRY(gpuk_kernel_suggest_block(ctx, vadd, 0, &block, NULL));
        TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
        /* GPUK_ARGS records each argument's size too: debug builds check them against vadd's */
        TRY(gpuk_launch(ctx, vadd, &(gpuk_launch_desc){ .grid = GPUK_DIM1((n + (unsigned)block - 1) / (unsigned)block),
                                                        .block = GPUK_DIM1(block), GPUK_ARGS(&da, &db, &dc, &un) }));
        TRY(gpuk_timer_stop(ctx, &timer, &ms_kernel));
    }
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_buffer_read_async(ctx, GPUK_DEFAULT_STREAM, c, 0, pc, bytes));
    TRY(gpuk_timer_stop(ctx, &timer, &ms_down));
    for (i = 0; i < n; i++) if (pc[i] != pa[i] + pb[i]) bad++; /* one float add: exact on both sides */
    printf("init %.1f ms, context %.1f ms, module load (PTX JIT) %.1f ms\n", t_init - t0, t_ctx - t_init, t_mod - t_ctx);
    printf("vector add of %u floats, block %d: upload %.3f ms (%.1f GB/s), kernel %.3f ms (%.1f GB/s), "
           "download %.3f ms (%.1f GB/s)\n", n, block, ms_up, 2.0 * bytes / ms_up / 1e6, ms_kernel,
           3.0 * bytes / ms_kernel / 1e6, ms_down, bytes / ms_down / 1e6);
    printf("%s: %u of %u elements differ from the CPU\n", bad ? "FAILED" : "PASSED", bad, n);
    TRY(gpuk_ctx_destroy(ctx)); /* frees buffers, pinned memory, timer events and the module */
    return bad ? 1 : 0;
}
