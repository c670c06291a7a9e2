/* examples/22_link_device_functions.c - gpuk's device functions linked into a kernel of your
   own: a program compiled by NVRTC as relocatable code that only declares gpuk_uniform_f32 and
   gpuk_block_sum_u32 (extern "C", the library's exact parameter types), joined to gpuk's
   library of them by gpuk_module_link with .gpuk_device = true. The kernel estimates pi from
   random points in the unit square (two uniforms a point: x is element 2i of the stream, y
   element 2i + 1), counting those inside the quarter circle, a block sum and one atomic add a
   block. Checked: every uniform it drew equals gpuk_random_uniform_f32's of the same seed bit
   for bit, and its count equals the CPU's over those numbers exactly; pi within 6 standard
   errors. Default 2^22 points, --full 2^25. Needs NVRTC (the CUDA toolkit's libnvrtc;
   GPUK_NVRTC_PATH).
   cc -std=c99 -O2 -I.. 22_link_device_functions.c -o link_device_functions -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <unistd.h>

static const char ex_name[] = "22_link_device_functions";

/* Declarations only: the definitions come from gpuk's library at link time. The test against 1
   is made in double, where x * x + y * y of two floats is exact but for one rounding whether
   fused or not, so the GPU's count and the CPU's agree to the point. */
static const char pi_src[] =
    "extern \"C\" __device__ float gpuk_uniform_f32(unsigned long long seed,\n"
    "                                              unsigned long long e);\n"
    "extern \"C\" __device__ unsigned int gpuk_block_sum_u32(unsigned int v);\n"
    "extern \"C\" __global__ void count_hits(unsigned long long points, unsigned long long seed,\n"
    "                                        float* drawn, unsigned long long* hits) {\n"
    "    unsigned int mine = 0;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "         i < points; i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        float x = gpuk_uniform_f32(seed, 2 * i), y = gpuk_uniform_f32(seed, 2 * i + 1);\n"
    "        drawn[2 * i] = x;\n"
    "        drawn[2 * i + 1] = y;\n"
    "        mine += (double)x * x + (double)y * y < 1.0;\n"
    "    }\n"
    "    unsigned int block = gpuk_block_sum_u32(mine); /* every thread calls it */\n"
    "    if (threadIdx.x == 0) atomicAdd(hits, (unsigned long long)block);\n"
    "}\n";

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    int rc = ex_begin(argc, argv, ex_name, "pi from gpuk's random numbers linked into a kernel",
                      &o, &ctx);
    uint64_t seed = 22;
    gpuk_compile_desc program;
    gpuk_link_input input;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_buffer drawn, ref, hits;
    gpuk_devptr p_drawn, p_hits;
    gpuk_timer timer;
    gpuk_result r;
    char log[4096];
    unsigned long long points, gpu_hits = 0, cpu_hits = 0, i, mismatches = 0;
    float *h_drawn, *h_ref, ms = 0;
    double t0, cpu_ms, pi, se;
    if (rc >= 0) return rc;
    points = o.full ? 1ull << 25 : 1ull << 22;
    h_drawn = (float*)malloc(2 * points * sizeof(float));
    h_ref = (float*)malloc(2 * points * sizeof(float));
    if (!h_drawn || !h_ref) return ex_result(0, "out of host memory");
    /* the toolkit's NVRTC where it is not on the library path and none is named */
    if (!getenv("GPUK_NVRTC_PATH") && access("/usr/local/cuda/lib64/libnvrtc.so.13", R_OK) == 0)
        setenv("GPUK_NVRTC_PATH", "/usr/local/cuda/lib64/libnvrtc.so.13", 0);

    /* one NVRTC program (compiled with -rdc=true by gpuk_module_link) and gpuk's library */
    memset(&program, 0, sizeof program);
    program.source = pi_src;
    program.name = "count_hits.cu";
    memset(&input, 0, sizeof input);
    input.compile = &program;
    t0 = ex_now_ms();
    r = gpuk_module_link(ctx, &(gpuk_link_desc){ .inputs = &input, .num_inputs = 1,
                                                 .gpuk_device = true, .label = "pi",
                                                 .log = log, .log_bytes = sizeof log }, &m);
    if (r == GPUK_ERR_NO_NVRTC) return EX_NO_GPU; /* the logger said what to install */
    TRY(r);
    printf("count_hits compiled, linked against gpuk's device functions and loaded in %.1f ms\n",
           ex_now_ms() - t0);
    TRY(gpuk_kernel_get(ctx, m, "count_hits", &k));

    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2 * points * sizeof(float),
                                                     .label = "drawn" }, &drawn));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 2 * points * sizeof(float),
                                                     .label = "reference" }, &ref));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof gpu_hits, .label = "hits" },
                           &hits));
    p_drawn = gpuk_buffer_devptr(ctx, drawn);
    p_hits = gpuk_buffer_devptr(ctx, hits);
    /* NaN in every slot the kernel should write, so a point it skips cannot pass */
    TRY(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, drawn, 0, 0xFFFFFFFFu, 4, 2 * points));
    TRY(gpuk_buffer_memset(ctx, GPUK_DEFAULT_STREAM, hits, 0, 0, 4, 2));
    TRY(gpuk_timer_create(ctx, &timer));
    TRY(gpuk_timer_start(ctx, GPUK_DEFAULT_STREAM, &timer));
    TRY(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1024), .block = GPUK_DIM1(256),
                                                 GPUK_ARGS(&points, &seed, &p_drawn, &p_hits) }));
    TRY(gpuk_timer_stop(ctx, &timer, &ms));
    /* the same stream from the built-in generator */
    TRY(gpuk_random_uniform_f32(ctx, GPUK_DEFAULT_STREAM, gpuk_at(ref, 0), 2 * points, seed, 0));
    TRY(gpuk_buffer_read(ctx, drawn, 0, h_drawn, 2 * points * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, ref, 0, h_ref, 2 * points * sizeof(float)));
    TRY(gpuk_buffer_read(ctx, hits, 0, &gpu_hits, sizeof gpu_hits));

    for (i = 0; i < 2 * points; i++)
        mismatches += memcmp(&h_drawn[i], &h_ref[i], sizeof(float)) != 0;
    t0 = ex_now_ms();
    for (i = 0; i < points; i++) {
        double x = h_ref[2 * i], y = h_ref[2 * i + 1];
        cpu_hits += x * x + y * y < 1.0;
    }
    cpu_ms = ex_now_ms() - t0;
    pi = 4.0 * (double)gpu_hits / (double)points;
    se = 4.0 * sqrt(EX_PI / 4 * (1 - EX_PI / 4) / (double)points); /* of a binomial count */
    printf("%llu points: %llu inside on the GPU (%.3f ms, drawing them too), %llu on the CPU "
           "(%.1f ms, counting only)\n", points, gpu_hits, (double)ms, cpu_hits, cpu_ms);
    printf("pi ~ %.6f, off by %.2e = %.2f standard errors; %llu of %llu uniforms differ from "
           "gpuk_random_uniform_f32's\n", pi, pi - EX_PI, fabs(pi - EX_PI) / se, mismatches,
           2 * points);

    TRY(gpuk_timer_destroy(ctx, &timer));
    TRY(gpuk_module_unload(ctx, m));
    TRY(gpuk_ctx_destroy(ctx));
    free(h_drawn);
    free(h_ref);
    return ex_result(mismatches == 0 && gpu_hits == cpu_hits && fabs(pi - EX_PI) < 6 * se,
                     "pi ~ %.6f from %llu points through linked gpuk_uniform_f32, bit for bit "
                     "gpuk_random_uniform_f32's; %llu mismatches", pi, points, mismatches);
}
