/* gpuk_device.cuh - device code for your own kernels: gpuk's random numbers (Philox4x32-10,
   bit for bit those of gpuk_random_uniform_* and gpuk_random_normal_*), warp and block sums,
   an inclusive warp scan.

   Include it from a kernel source with #include "gpuk_device.cuh":
   - nvcc: add the folder of gpuk.h to the include path (-I); tools/gpuk_embed.py adds it itself;
   - NVRTC: gpuk_module_compile (and the custom kernels) hand this text to NVRTC as the header
     "gpuk_device.cuh", so nothing needs copying (a header of that name in the desc wins).
   It needs no standard header and defines only gpuk_ names (and the GPUK_DEVICE_CUH guard).
   gpuk's built-in kernels (gpuk_kernels.cuh) include it too: their random numbers are made by
   the functions below, so the two can never drift apart.

   Random numbers: element e of the stream with key `seed` comes from the Philox block with
   counter e / per, where per is how many elements one 128-bit block (4 words) makes:
   uniform f32: per 4, word e % 4 as (w >> 8) * 2^-24, in [0, 1);
   uniform f64: per 2, words 2(e % 2) and 2(e % 2) + 1 as ((w0 >> 5) * 2^26 + (w1 >> 6)) * 2^-53;
   normal: Box-Muller on the uniforms (u1, u2) taken as sqrt(-2 ln(1 - u1)) * (cos, sin)(2 pi u2):
   f32 words (w0, w1) give elements 0-1 of a block, (w2, w3) elements 2-3; f64 its two 53-bit
   uniforms give elements 0-1. gpuk_random_uniform_f32(out, n, seed, offset) writes
   gpuk_uniform_f32(seed, offset + i) to out[i], and so on for the other three. The uniforms
   are exact integer arithmetic, equal under any compiler and options; the normals call
   logf/sqrtf/sincospif (log/sqrt/sincospi), equal to the built-ins' where compiled without
   fast-math options (-use_fast_math, -ftz=true, -prec-div/-prec-sqrt=false change them).

   Reductions: the warp functions must be called by all 32 lanes of a warp, the block ones by
   every thread of a block whose size is a multiple of 32; any 1-, 2- or 3-D block shape. They
   work for int, unsigned, long long, unsigned long long, float and double. */
#ifndef GPUK_DEVICE_CUH
#define GPUK_DEVICE_CUH

#define GPUK__DFN __device__ __forceinline__

/* ---- random numbers ---- */
struct gpuk_philox4 { unsigned int w[4]; };

/* Philox4x32-10 (Salmon et al., SC'11) of the 128-bit counter (counter, 0) and 64-bit key seed */
GPUK__DFN gpuk_philox4 gpuk_philox4x32_10(unsigned long long counter, unsigned long long seed) {
    unsigned int c0 = (unsigned int)counter, c1 = (unsigned int)(counter >> 32), c2 = 0, c3 = 0;
    unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
#pragma unroll
    for (int round = 0; round < 10; round++) {
        unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        c0 = hi1 ^ c1 ^ k0; c1 = lo1; c2 = hi0 ^ c3 ^ k1; c3 = lo0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    gpuk_philox4 r = { { c0, c1, c2, c3 } };
    return r;
}

/* one word as a float in [0, 1): its top 24 bits times 2^-24 */
GPUK__DFN float gpuk_u01_f32(unsigned int w) { return (float)(w >> 8) * 5.9604644775390625e-8f; }
/* two words as a double in [0, 1): 27 bits of w0 and 26 of w1, times 2^-53 */
GPUK__DFN double gpuk_u01_f64(unsigned int w0, unsigned int w1) {
    return ((double)(w0 >> 5) * 67108864.0 + (double)(w1 >> 6)) * 1.1102230246251565e-16;
}

/* Box-Muller: uniforms u1, u2 in [0, 1) to two standard normals (*z0 from cos, *z1 from sin) */
GPUK__DFN void gpuk_box_muller_f32(float u1, float u2, float* z0, float* z1) {
    float rad = sqrtf(-2.0f * logf(1.0f - u1)), s, c;
    sincospif(2.0f * u2, &s, &c);
    *z0 = rad * c; *z1 = rad * s;
}
GPUK__DFN void gpuk_box_muller_f64(double u1, double u2, double* z0, double* z1) {
    double rad = sqrt(-2.0 * log(1.0 - u1)), s, c;
    sincospi(2.0 * u2, &s, &c);
    *z0 = rad * c; *z1 = rad * s;
}

GPUK__DFN unsigned int gpuk__philox_word(const gpuk_philox4& r, unsigned int k) {
    return k == 0 ? r.w[0] : k == 1 ? r.w[1] : k == 2 ? r.w[2] : r.w[3];
}

/* element e of stream seed, as gpuk_random_uniform_f32/_f64 and gpuk_random_normal_f32/_f64
   make it: each call runs one Philox block (a kernel making all elements of a block can call
   gpuk_philox4x32_10 once and convert its words as above) */
GPUK__DFN float gpuk_uniform_f32(unsigned long long seed, unsigned long long e) {
    gpuk_philox4 r = gpuk_philox4x32_10(e / 4, seed);
    return gpuk_u01_f32(gpuk__philox_word(r, (unsigned int)(e % 4)));
}
GPUK__DFN double gpuk_uniform_f64(unsigned long long seed, unsigned long long e) {
    gpuk_philox4 r = gpuk_philox4x32_10(e / 2, seed);
    return e % 2 ? gpuk_u01_f64(r.w[2], r.w[3]) : gpuk_u01_f64(r.w[0], r.w[1]);
}
GPUK__DFN float gpuk_normal_f32(unsigned long long seed, unsigned long long e) {
    gpuk_philox4 r = gpuk_philox4x32_10(e / 4, seed);
    unsigned int k = (unsigned int)(e % 4) & 2u;
    float z0, z1;
    gpuk_box_muller_f32(gpuk_u01_f32(gpuk__philox_word(r, k)),
                        gpuk_u01_f32(gpuk__philox_word(r, k + 1)), &z0, &z1);
    return e % 2 ? z1 : z0;
}
GPUK__DFN double gpuk_normal_f64(unsigned long long seed, unsigned long long e) {
    gpuk_philox4 r = gpuk_philox4x32_10(e / 2, seed);
    double z0, z1;
    gpuk_box_muller_f64(gpuk_u01_f64(r.w[0], r.w[1]), gpuk_u01_f64(r.w[2], r.w[3]), &z0, &z1);
    return e % 2 ? z1 : z0;
}

/* ---- warp and block reductions ---- */
/* this thread's lane in its warp (0..31), whatever the block's shape */
GPUK__DFN unsigned int gpuk_lane_id(void) {
    unsigned int lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

/* the sum of v over the warp, in every lane (a butterfly: the same order in every lane) */
template <typename T> GPUK__DFN T gpuk_warp_sum(T v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

/* lane i gets the sum of v over lanes 0..i */
template <typename T> GPUK__DFN T gpuk_warp_inclusive_scan(T v) {
    const unsigned int lane = gpuk_lane_id();
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T o = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= (unsigned int)d) v += o;
    }
    return v;
}

/* the sum of v over the block, in every thread; a barrier for the block (it calls
   __syncthreads twice), so it may be called again at once */
template <typename T> GPUK__DFN T gpuk_block_sum(T v) {
    __shared__ T gpuk__part[32];
    const unsigned int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned int warps = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
    v = gpuk_warp_sum(v);
    __syncthreads(); /* the previous call's readers are done with gpuk__part */
    if (gpuk_lane_id() == 0) gpuk__part[tid / 32u] = v;
    __syncthreads();
    T s = gpuk__part[0];
    for (unsigned int i = 1; i < warps; i++) s += gpuk__part[i];
    return s;
}

#undef GPUK__DFN
#endif
