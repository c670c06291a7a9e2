/* examples/19_heat_until_converged.c - a loop that runs on the GPU: the 2D heat equation
   (gpuk_heat_step_f32, the top edge held at 1, a hot disc at the start) stepped until the
   largest change of a step is at most a tolerance. Twice from the same start: a host loop
   (step, measure the change, read the decision back, decide) and a CUDA graph with a WHILE
   node, whose body does the same steps and whose last kernel sets the node's condition on the
   GPU (cudaGraphSetConditional): one launch runs the whole loop. Checked: the same step count
   and the same field bit for bit; the time per step of each. A PNG of the converged field.
   The example's two kernels are hand-written PTX below (no NVRTC or nvcc needed).
   Default 256^2 to 1e-4; --full 512^2 to 2e-5; --size N, --steps N (the most steps).
   Needs a driver for CUDA 12.4 or newer (exit 2 saying so before).
   cc -std=c99 -O2 -I.. 19_heat_until_converged.c -o heat_until_converged -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"

static const char ex_name[] = "19_heat_until_converged";
static const float R = 0.2f; /* k dt / h^2: stable up to 1/4 */

/* From this CUDA C++ (nvcc -ptx, .version and .target lowered, comments dropped):
   extern "C" __device__ void cudaGraphSetConditional(unsigned long long, unsigned int);
   // max |b - a| into *max_bits (the bits of non-negative floats order as integers), a = b
   extern "C" __global__ void change(float* a, const float* b, unsigned n, unsigned* max_bits) {
       float m = 0.0f;
       for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
            i += gridDim.x * blockDim.x) {
           m = fmaxf(m, fabsf(b[i] - a[i]));
           a[i] = b[i];
       }
       for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
       if ((threadIdx.x & 31) == 0 && m > 0.0f) atomicMax(max_bits, __float_as_uint(m));
   }
   // one thread: a step done; go on while the change is over tol (and under max_steps);
   // cond 0: a host loop, no graph to tell
   extern "C" __global__ void judge(unsigned long long cond, unsigned* max_bits, float tol,
                                    unsigned* steps, unsigned* keep, unsigned max_steps) {
       unsigned s = *steps + 1;
       unsigned k = __uint_as_float(*max_bits) > tol && s < max_steps;
       *max_bits = 0;
       *steps = s;
       *keep = k;
       if (cond) cudaGraphSetConditional(cond, k);
   } */
static const char ptx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n.extern .func cudaGraphSetConditional\n(\n"
    ".param .b64 cudaGraphSetConditional_param_0,\n"
    ".param .b32 cudaGraphSetConditional_param_1\n)\n;\n.visible .entry change(\n"
    ".param .u64 change_param_0,\n.param .u64 change_param_1,\n.param .u32 change_param_2,\n"
    ".param .u64 change_param_3\n)\n{\n.reg .pred %p<11>;\n.reg .f32 %f<22>;\n"
    ".reg .b32 %r<31>;\n.reg .b64 %rd<10>;\nld.param.u64 %rd3, [change_param_0];\n"
    "ld.param.u64 %rd4, [change_param_1];\nld.param.u32 %r7, [change_param_2];\n"
    "ld.param.u64 %rd5, [change_param_3];\nmov.u32 %r1, %ntid.x;\nmov.u32 %r8, %ctaid.x;\n"
    "mov.u32 %r2, %tid.x;\nmad.lo.s32 %r30, %r8, %r1, %r2;\nsetp.ge.u32 %p1, %r30, %r7;\n"
    "mov.f32 %f21, 0f00000000;\n@%p1 bra $L__BB3_3;\nmov.u32 %r9, %nctaid.x;\n"
    "mul.lo.s32 %r4, %r9, %r1;\ncvta.to.global.u64 %rd1, %rd4;\n"
    "cvta.to.global.u64 %rd2, %rd3;\nmov.f32 %f21, 0f00000000;\n$L__BB3_2:\n"
    "mul.wide.u32 %rd6, %r30, 4;\nadd.s64 %rd7, %rd1, %rd6;\nadd.s64 %rd8, %rd2, %rd6;\n"
    "ld.global.f32 %f7, [%rd8];\nld.global.f32 %f8, [%rd7];\nsub.f32 %f9, %f8, %f7;\n"
    "abs.f32 %f10, %f9;\nmax.f32 %f21, %f21, %f10;\nst.global.f32 [%rd8], %f8;\n"
    "add.s32 %r30, %r30, %r4;\nsetp.lt.u32 %p2, %r30, %r7;\n@%p2 bra $L__BB3_2;\n$L__BB3_3:\n"
    "mov.b32 %r10, %f21;\nmov.u32 %r11, 31;\nmov.u32 %r12, 16;\nmov.u32 %r13, -1;\n"
    "shfl.sync.bfly.b32 %r14|%p3, %r10, %r12, %r11, %r13;\nmov.b32 %f11, %r14;\n"
    "max.f32 %f12, %f21, %f11;\nmov.b32 %r15, %f12;\nmov.u32 %r16, 8;\n"
    "shfl.sync.bfly.b32 %r17|%p4, %r15, %r16, %r11, %r13;\nmov.b32 %f13, %r17;\n"
    "max.f32 %f14, %f12, %f13;\nmov.b32 %r18, %f14;\nmov.u32 %r19, 4;\n"
    "shfl.sync.bfly.b32 %r20|%p5, %r18, %r19, %r11, %r13;\nmov.b32 %f15, %r20;\n"
    "max.f32 %f16, %f14, %f15;\nmov.b32 %r21, %f16;\nmov.u32 %r22, 2;\n"
    "shfl.sync.bfly.b32 %r23|%p6, %r21, %r22, %r11, %r13;\nmov.b32 %f17, %r23;\n"
    "max.f32 %f18, %f16, %f17;\nmov.b32 %r24, %f18;\nmov.u32 %r25, 1;\n"
    "shfl.sync.bfly.b32 %r26|%p7, %r24, %r25, %r11, %r13;\nmov.b32 %f19, %r26;\n"
    "max.f32 %f4, %f18, %f19;\nand.b32 %r27, %r2, 31;\nsetp.ne.s32 %p8, %r27, 0;\n"
    "setp.leu.f32 %p9, %f4, 0f00000000;\nor.pred %p10, %p8, %p9;\n@%p10 bra $L__BB3_5;\n"
    "mov.b32 %r28, %f4;\ncvta.to.global.u64 %rd9, %rd5;\n"
    "atom.global.max.u32 %r29, [%rd9], %r28;\n$L__BB3_5:\nret;\n}\n.visible .entry judge(\n"
    ".param .u64 judge_param_0,\n.param .u64 judge_param_1,\n.param .f32 judge_param_2,\n"
    ".param .u64 judge_param_3,\n.param .u64 judge_param_4,\n.param .u32 judge_param_5\n)\n{\n"
    ".reg .pred %p<5>;\n.reg .f32 %f<3>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<8>;\n"
    "ld.param.u64 %rd1, [judge_param_0];\nld.param.u64 %rd2, [judge_param_1];\n"
    "ld.param.f32 %f1, [judge_param_2];\nld.param.u64 %rd3, [judge_param_3];\n"
    "ld.param.u64 %rd4, [judge_param_4];\nld.param.u32 %r2, [judge_param_5];\n"
    "cvta.to.global.u64 %rd5, %rd4;\ncvta.to.global.u64 %rd6, %rd3;\n"
    "ld.global.u32 %r3, [%rd6];\nadd.s32 %r4, %r3, 1;\ncvta.to.global.u64 %rd7, %rd2;\n"
    "ld.global.f32 %f2, [%rd7];\nsetp.gt.f32 %p1, %f2, %f1;\nsetp.lt.u32 %p2, %r4, %r2;\n"
    "and.pred %p3, %p2, %p1;\nselp.u32 %r1, 1, 0, %p3;\nmov.u32 %r5, 0;\n"
    "st.global.u32 [%rd7], %r5;\nst.global.u32 [%rd6], %r4;\nst.global.u32 [%rd5], %r1;\n"
    "setp.eq.s64 %p4, %rd1, 0;\n@%p4 bra $L__BB4_2;\n{\n.reg .b32 temp_param_reg;\n"
    ".param .b64 param0;\nst.param.b64 [param0+0], %rd1;\n.param .b32 param1;\n"
    "st.param.b32 [param1+0], %r1;\ncall.uni\ncudaGraphSetConditional,\n(\nparam0,\nparam1\n"
    ");\n}\n$L__BB4_2:\nret;\n}\n";

typedef struct loop {
    gpuk_ctx* ctx;
    gpuk_stream s;
    gpuk_kernel change, judge;
    gpuk_buffer u, v, max_bits, steps, keep;
    gpuk_devptr pu, pv, pm, ps, pk;
    int n;
    uint32_t cells, max_steps;
    float tol;
} loop;

/* One step queued on l->s: u -> v, the change measured and u = v, the decision (told to the
   graph's node when cond is not 0). */
static gpuk_result step(const loop* l, uint64_t cond) {
    const size_t n = (size_t)l->n;
    gpuk_result r;
    if ((r = gpuk_heat_step_f32(l->ctx, l->s, gpuk_at2d(l->v, 0, n, n, 0),
                                gpuk_at2d(l->u, 0, n, n, 0), R)) != GPUK_OK)
        return r;
    if ((r = gpuk_launch(l->ctx, l->change,
                         &(gpuk_launch_desc){ .grid = GPUK_DIM1(264), .block = GPUK_DIM1(256),
                                              .stream = l->s,
                                              GPUK_ARGS(&l->pu, &l->pv, &l->cells, &l->pm) })))
        return r;
    return gpuk_launch(l->ctx, l->judge,
                       &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(1),
                                            .stream = l->s,
                                            GPUK_ARGS(&cond, &l->pm, &l->tol, &l->ps, &l->pk,
                                                      &l->max_steps) });
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "heat equation until converged: a WHILE graph", &o,
                      &ctx);
    loop l;
    gpuk_module m;
    gpuk_graph g;
    uint64_t cond = 0;
    uint32_t keep = 1, host_steps = 0, graph_steps = 0;
    size_t i, cells, differ = 0;
    float *u0, *host_field, *graph_field;
    double t, host_ms, graph_ms;
    int x, y, v = 0, ok;
    uint8_t* rgb;
    if (rc >= 0) return rc;
    TRY(gpuk_driver_version(&v));
    if (v < 12040) {
        printf("%s: graphs with WHILE nodes need a driver for CUDA 12.4 or newer; this one is "
               "%d.%d\n", ex_name, v / 1000, v % 1000 / 10);
        gpuk_ctx_destroy(ctx);
        return EX_NO_GPU;
    }
    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.n = o.size ? (int)o.size : o.full ? 512 : 256;
    l.tol = o.full ? 2e-5f : 1e-4f;
    l.max_steps = o.steps > 0 ? (uint32_t)o.steps : 1000000u;
    if (l.n < 3 || l.n > 8192) return ex_result(0, "--size %d: 3 to 8192", l.n);
    cells = (size_t)l.n * (size_t)l.n;
    l.cells = (uint32_t)cells;
    u0 = (float*)calloc(cells, sizeof(float));
    host_field = (float*)malloc(cells * sizeof(float));
    graph_field = (float*)malloc(cells * sizeof(float));
    if (!u0 || !host_field || !graph_field) return ex_result(0, "out of host memory");
    for (x = 0; x < l.n; x++) u0[x] = 1.0f; /* row 0, the top edge, is held hot */
    for (y = 1; y < l.n - 1; y++)
        for (x = 1; x < l.n - 1; x++) {
            double dx = (double)x / l.n - 0.6, dy = (double)y / l.n - 0.6;
            if (dx * dx + dy * dy < 0.02) u0[(size_t)y * (size_t)l.n + (size_t)x] = 1.0f;
        }
    TRY(gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &l.s));
    TRY(gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { ptx, 0 }, .label = "loop" }, &m));
    TRY(gpuk_kernel_get(ctx, m, "change", &l.change));
    TRY(gpuk_kernel_get(ctx, m, "judge", &l.judge));
    TRY(gpuk_kernels_load(ctx, "heat_step_f32")); /* before the capture: no JIT inside it */
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cells * 4, .label = "u" }, &l.u));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = cells * 4, .label = "v" }, &l.v));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4, .label = "max" }, &l.max_bits));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4, .label = "steps" }, &l.steps));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4, .label = "keep" }, &l.keep));
    l.pu = gpuk_buffer_devptr(ctx, l.u);
    l.pv = gpuk_buffer_devptr(ctx, l.v);
    l.pm = gpuk_buffer_devptr(ctx, l.max_bits);
    l.ps = gpuk_buffer_devptr(ctx, l.steps);
    l.pk = gpuk_buffer_devptr(ctx, l.keep);

    /* the host loop: a step, then a 4-byte read (a sync) to decide on the next */
    TRY(gpuk_buffer_write(ctx, l.u, 0, u0, cells * 4));
    TRY(gpuk_buffer_memset(ctx, l.s, l.max_bits, 0, 0, 4, 1));
    TRY(gpuk_buffer_memset(ctx, l.s, l.steps, 0, 0, 4, 1));
    t = ex_now_ms();
    while (keep) {
        TRY(step(&l, 0));
        TRY(gpuk_stream_sync(ctx, l.s));
        TRY(gpuk_buffer_read(ctx, l.keep, 0, &keep, 4));
        host_steps++;
    }
    host_ms = ex_now_ms() - t;
    TRY(gpuk_buffer_read(ctx, l.u, 0, host_field, cells * 4));

    /* the graph: the head zeroes the counters, the WHILE node's body is the same step; the
       judge kernel's decision is the node's condition (1 at the start: one step at least) */
    TRY(gpuk_graph_begin_while(ctx, l.s, 1, &cond));
    TRY(gpuk_buffer_memset(ctx, l.s, l.max_bits, 0, 0, 4, 1));
    TRY(gpuk_buffer_memset(ctx, l.s, l.steps, 0, 0, 4, 1));
    TRY(gpuk_graph_begin_body(ctx, l.s));
    TRY(step(&l, cond));
    TRY(gpuk_graph_end_capture(ctx, l.s, &g));
    TRY(gpuk_buffer_write(ctx, l.u, 0, u0, cells * 4));
    t = ex_now_ms();
    TRY(gpuk_graph_launch(ctx, l.s, g));
    TRY(gpuk_stream_sync(ctx, l.s));
    graph_ms = ex_now_ms() - t;
    TRY(gpuk_buffer_read(ctx, l.steps, 0, &graph_steps, 4));
    TRY(gpuk_buffer_read(ctx, l.u, 0, graph_field, cells * 4));

    for (i = 0; i < cells; i++) differ += memcmp(&host_field[i], &graph_field[i], 4) != 0;
    ok = host_steps == graph_steps && differ == 0 && host_steps < l.max_steps;
    printf("%dx%d grid to a largest change of %g: host loop %u steps, %.1f ms (%.1f us a step); "
           "WHILE graph %u steps, %.1f ms (%.1f us a step)\n", l.n, l.n, (double)l.tol,
           host_steps, host_ms, 1e3 * host_ms / host_steps, graph_steps, graph_ms,
           graph_steps ? 1e3 * graph_ms / graph_steps : 0.0);
    rgb = ex_field_rgb(graph_field, l.n, l.n, 0.0, 1.0);
    if (!rgb || ex_png(o.out_dir, "heat_converged.png", l.n, l.n, 3, rgb) != 0) ok = 0;
    free(rgb);
    TRY(gpuk_graph_destroy(ctx, g));
    TRY(gpuk_ctx_destroy(ctx));
    free(u0); free(host_field); free(graph_field);
    return ex_result(ok, "%u steps of %dx%d by the host loop and by the WHILE graph, the fields "
                     "%s; %.1f vs %.1f us a step", host_steps, l.n, l.n,
                     differ ? "differ" : "equal", 1e3 * host_ms / host_steps,
                     graph_steps ? 1e3 * graph_ms / graph_steps : 0.0);
}
