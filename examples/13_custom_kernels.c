/* examples/13_custom_kernels.c - custom kernels from C expressions, as PyCUDA's
   ElementwiseKernel and ReductionKernel make them: an element-wise "ufunc" (gpu_2x_ker:
   out[i] = 2 * in[i]) and a reduction (the dot product: map vec1[i] * vec2[i], reduce a + b,
   identity 0), compiled at run time by NVRTC (cached), each timed on the GPU beside the same
   loop on the CPU and checked against it.
   Default 1e7 values, --full 5e7. Needs NVRTC (the CUDA toolkit's libnvrtc; GPUK_NVRTC_PATH).
   cc -std=c99 -O2 -I.. 13_custom_kernels.c -o custom_kernels -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <unistd.h>

static const char ex_name[] = "13_custom_kernels";

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "a custom ufunc and a custom reduction (NVRTC)", &o, &ctx);
    gpuk_elementwise twice;
    gpuk_reduction dot;
    gpuk_buffer in, out, v1, v2, result;
    gpuk_timer timer;
    gpuk_result r;
    size_t n, i, bad = 0;
    float *h_in, *h_out, *h_v2, gpu_dot = 0, ms_2x = 0, ms_dot = 0, cpu_dot_f = 0;
    double t0, cpu_2x, cpu_dot, ref_dot = 0, abs_dot = 0;
    if (rc >= 0) return rc;
    n = o.full ? 50000000 : 10000000;
    h_in = (float*)malloc(n * sizeof(float));
    h_out = (float*)malloc(n * sizeof(float));
    h_v2 = (float*)malloc(n * sizeof(float));
    if (!h_in || !h_out || !h_v2) return ex_result(0, "out of host memory");
    { /* random inputs in [0, 1) and [-1, 1) */
        uint64_t seed = 13;
        for (i = 0; i < n; i++) h_in[i] = (float)ex_rand(&seed);
        for (i = 0; i < n; i++) h_v2[i] = (float)(2 * ex_rand(&seed) - 1);
    }
    /* the toolkit's NVRTC where it is not on the library path and none is named */
    if (!getenv("GPUK_NVRTC_PATH") && access("/usr/local/cuda/lib64/libnvrtc.so.13", R_OK) == 0)
        setenv("GPUK_NVRTC_PATH", "/usr/local/cuda/lib64/libnvrtc.so.13", 0);

    /* gpu_2x_ker = ElementwiseKernel("float *in, float *out", "out[i] = 2*in[i];", "gpu_2x_ker") */
    t0 = ex_now_ms();
    r = gpuk_elementwise_create(ctx, &(gpuk_elementwise_desc){ .params = "const float* in, float* out",
                                                                .body = "out[i] = 2 * in[i]",
                                                                .name = "gpu_2x_ker" }, &twice);
    if (r == GPUK_ERR_NO_NVRTC) return EX_NO_GPU; /* the logger said what to install */
    TRY(r);
    printf("gpu_2x_ker compiled and loaded in %.1f ms\n", ex_now_ms() - t0);
    /* dot = ReductionKernel(np.float32, neutral="0", reduce_expr="a+b",
                             map_expr="vec1[i]*vec2[i]", arguments="float *vec1, float *vec2") */
    t0 = ex_now_ms();
    TRY(gpuk_reduction_create(ctx, &(gpuk_reduction_desc){ .params = "const float* vec1, const float* vec2",
                                                            .map = "vec1[i] * vec2[i]", .reduce = "a + b",
                                                            .identity = "0", .type = "float",
                                                            .name = "dot" }, &dot));
    printf("dot compiled and loaded in %.1f ms\n", ex_now_ms() - t0);

    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "in",
                                                     .data = { h_in, n * sizeof(float) } }, &in));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "out" }, &out));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float), .label = "vec2",
                                                     .data = { h_v2, n * sizeof(float) } }, &v2));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2 * sizeof(float), .label = "result" }, &result));
    v1 = in;
    TRY(gpuk_timer_create(ctx, &timer));

    /* the ufunc: once to warm up, once timed */
    TRY(gpuk_elementwise_launch(ctx, GPUK_DEFAULT_STREAM, &twice, n,
                                GPUK_ARGV(gpuk_arg_array(gpuk_at(in, 0)), gpuk_arg_array(gpuk_at(out, 0)))));
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_elementwise_launch(ctx, GPUK_DEFAULT_STREAM, &twice, n,
                                GPUK_ARGV(gpuk_arg_array(gpuk_at(in, 0)), gpuk_arg_array(gpuk_at(out, 0)))));
    TRY(gpuk_timer_stop(ctx, &timer, &ms_2x));
    TRY(gpuk_buffer_read(ctx, out, 0, h_out, n * sizeof(float)));
    t0 = ex_now_ms();
    for (i = 0; i < n; i++) bad += h_out[i] != 2 * h_in[i]; /* exact: doubling a float */
    cpu_2x = ex_now_ms() - t0;
    printf("gpu_2x_ker on %zu floats: GPU %.3f ms, CPU 2*x and compare %.1f ms; %zu wrong\n", n, ms_2x,
           cpu_2x, bad);

    /* the reduction: twice (the same bits both times: the grid is fixed by n) */
    TRY(gpuk_reduction_launch(ctx, GPUK_DEFAULT_STREAM, &dot, gpuk_at(result, 0), n,
                              GPUK_ARGV(gpuk_arg_array(gpuk_at(v1, 0)), gpuk_arg_array(gpuk_at(v2, 0)))));
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_reduction_launch(ctx, GPUK_DEFAULT_STREAM, &dot, gpuk_at(result, 1), n,
                              GPUK_ARGV(gpuk_arg_array(gpuk_at(v1, 0)), gpuk_arg_array(gpuk_at(v2, 0)))));
    TRY(gpuk_timer_stop(ctx, &timer, &ms_dot));
    {
        float two[2];
        TRY(gpuk_buffer_read(ctx, result, 0, two, sizeof two));
        gpu_dot = two[1];
        if (memcmp(&two[0], &two[1], sizeof(float)) != 0) {
            printf("the two dot products differ: %.9g and %.9g\n", (double)two[0], (double)two[1]);
            bad++;
        }
    }
    t0 = ex_now_ms();
    for (i = 0; i < n; i++) cpu_dot_f += h_in[i] * h_v2[i]; /* on the CPU, timed */
    cpu_dot = ex_now_ms() - t0;
    for (i = 0; i < n; i++) {
        ref_dot += (double)h_in[i] * h_v2[i];
        abs_dot += fabs((double)h_in[i] * h_v2[i]);
    }
    /* a float sum of n terms in gpuk's tree is off by at most about log2(n) roundings of the
       sum of |terms|; 1e-5 of it is far beyond that and far below any wrong result */
    if (!(fabs((double)gpu_dot - ref_dot) <= 1e-5 * abs_dot)) bad++;
    printf("dot of %zu floats: GPU %.3f ms = %.6f, CPU float loop %.1f ms = %.6f, double %.6f\n", n,
           ms_dot, (double)gpu_dot, cpu_dot, (double)cpu_dot_f, ref_dot);

    TRY(gpuk_elementwise_destroy(ctx, &twice));
    TRY(gpuk_reduction_destroy(ctx, &dot));
    TRY(gpuk_ctx_destroy(ctx));
    free(h_in); free(h_out); free(h_v2);
    return ex_result(bad == 0, "gpu_2x_ker %.3f ms and dot %.3f ms on %zu floats (GPU) against the CPU; "
                     "%zu mismatches", ms_2x, ms_dot, n, bad);
}
