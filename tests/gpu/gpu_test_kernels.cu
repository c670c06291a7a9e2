// tests/gpu/gpu_test_kernels.cu - kernels the GPU tests load as user PTX (tools/gen_ptx.py --embed
// turns this into tests/gpu/gpu_test_kernels.h). extern "C" keeps the .entry names unmangled.
// The #line below names this file as the repository does, so that assert's __FILE__ puts no
// absolute path into the generated header (its number is the line after it).
#line 6 "tests/gpu/gpu_test_kernels.cu"
#include <assert.h>
#include <stdint.h>
#include <stdio.h>

// Every scalar width and a pointer arrive intact: out[] gets each argument widened to 64 bits.
extern "C" __global__ void echo_args(int8_t a, int16_t b, int32_t c, int64_t d, float e, double f,
                                     uint8_t g, unsigned long long* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = (unsigned long long)(long long)a;
        out[1] = (unsigned long long)(long long)b;
        out[2] = (unsigned long long)(long long)c;
        out[3] = (unsigned long long)d;
        out[4] = (unsigned long long)__float_as_uint(e);
        out[5] = (unsigned long long)__double_as_longlong(f);
        out[6] = (unsigned long long)g;
    }
}

// y[i] = x[i] * s + add, after spinning `spin` rounds per element: a slow kernel, so that work
// queued behind it on a stream (or an event-linked stream) is only right if it really waited.
extern "C" __global__ void slow_affine(const float* x, float* y, float s, float add, unsigned n,
                                       unsigned spin) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (unsigned k = 0; k < spin; k++) acc = acc * 0.999f + 1.0f;
    y[i] = __fmaf_rn(x[i], s, add) + acc * 0.0f; // one rounding, as the test's fmaf; acc stays finite, so this adds exactly 0
}

// c[i] = a[i] + b[i]
extern "C" __global__ void vadd(const float* a, const float* b, float* c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Writes far outside any allocation: the sticky-fault test runs it in a child process.
extern "C" __global__ void write_out_of_bounds(int* p) {
    p[(size_t)1 << 40] = 1;
}

// Empty: launch overhead.
extern "C" __global__ void empty(void) {}

// Grid-wide barrier of our own for cooperative launches (no cooperative_groups, so it lowers
// like the rest): bar[0] counts arrivals, bar[1] is the generation the waiters watch; the last
// block to arrive resets the count and starts the next generation. Every block must be
// resident at once (a cooperative launch guarantees it), else the waiters spin forever.
__device__ static void grid_barrier(volatile unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned gen = bar[1];
        unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
        __threadfence(); // this block's writes before its arrival
        if (atomicAdd((unsigned*)&bar[0], 1u) == blocks - 1u) {
            bar[0] = 0u;
            __threadfence();
            atomicAdd((unsigned*)&bar[1], 1u);
        } else {
            while (bar[1] == gen) {
            }
        }
        __threadfence(); // the other blocks' writes before this block reads
    }
    __syncthreads();
}

// rounds times: b[i] = a[(i + shift) % n] + 1, then a and b swap roles; a grid-wide barrier
// between rounds. Element i reads one written by another block in the round before, so a
// barrier that did not hold shows as wrong values. Those reads go through L2 (ld.global.cg):
// this SM's L1 may still hold the buffer's lines from two rounds ago. Grid-stride over n.
extern "C" __global__ void coop_rounds(float* a, float* b, unsigned* bar, unsigned n, unsigned shift,
                                       unsigned rounds) {
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned r = 0; r < rounds; r++) {
        float* src = (r & 1u) ? b : a;
        float* dst = (r & 1u) ? a : b;
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            dst[i] = __ldcg(&src[(i + shift) % n]) + 1.0f; // L2: never a stale L1 line
        grid_barrier(bar);
    }
}

// Device printf: one line a thread, which the driver writes to stdout at the next sync.
extern "C" __global__ void say_hello(int tag, float x) {
    printf("gpuk printf %d: block %u thread %u x=%.2f\n", tag, blockIdx.x, threadIdx.x, (double)x);
}

// A device-side assert that fails in thread 0 of block 0 when bad is not 0: CUDA_ERROR_ASSERT
// (710) at the next sync, and the driver prints this file, line and condition. The
// sticky-fault tests run it in a child process.
extern "C" __global__ void assert_fails(int bad) {
    assert(bad == 0 || threadIdx.x != 0 || blockIdx.x != 0);
}

// A trap when bad is not 0: the kernel stops and the launch fails at the next sync. In a child
// process too.
extern "C" __global__ void trap_now(int bad) {
    if (bad) __trap();
}
