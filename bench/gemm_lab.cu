// bench/gemm_lab.cu - the GEMM issue's tuning lab: candidate policies and main loops against
// cuBLAS in one run, so that a change is measured before it is ported into gpuk_kernels.cuh.
// Scratch for that issue: it copies the library's main loop to vary it; delete it once the
// candidates below that pay are ported (they are not in gpuk.h).
//
// Every candidate runs row-major NN at 4096^3, the seed shape m=1024 n=512 k=2048 (split-K as the
// host does it: tiles < SMs -> splits = min(2 * SMs / tiles, k / 128, 16), workspace = counters
// then parts) and 1000^3 (edge tiles and a partial last k-slice: the slow, general staging path),
// each the median of 7 cudaEvent-timed launches after 2 warm-ups, against cuBLAS on the same
// buffers (SGEMM default math, SGEMM in TF32 mode for the tf32 rows, DGEMM). Each is checked at
// every shape against cuBLAS (C prefilled with NaN): |C - C_cublas| <= (2 (k + 2) eps + [TF32]
// 1.125 * 2^-10) * (|A| |B|)  (eps = 2^-23 / 2^-52, |A||B| by cuBLAS on abs copies, as bench_gemm).
// "err" is the largest |difference| / tolerance.
//
// Measured on an H100 80GB HBM3, 2026-11-23 (TFLOP/s at 4096^3; cuBLAS 50.6 / TF32 352 / 58.6):
//   f32 library sm_80 32.9, lab loop (fast path: one pointer a thread, no bounds) + library SIMT
//   policy at 128 registers 42.1, warp-tiled 32x64 BK16 3 stages 43.1 (ported: the fast path and
//   128 registers, 35.5 in the library);
//   tf32 library 59.9, A kept m-major in shared memory so both operands go by 16-byte cp.async:
//   66-74, and at 128 registers (2 blocks an SM) 85 (not ported yet);
//   f64 library (m16n8k4) 30.2, A m-major 34.0 (not ported).
//
// Build and run (GPU machine, from the repo root):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v bench/gemm_lab.cu -o build/gemm_lab -lcublas
//   build/gemm_lab
#include "../gpuk_kernels.cuh"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

/* ============================================================================================
   Lab main loop: lab_run<T, P, STAGES>
   Stages live in dynamic shared memory (so > 48 KB works): stage s = [A part][B part].
   The policy P says the layout:
     A_MMAJOR = 1: A stage is m-major, row i at i * LDA, k contiguous (TILE x LDA) -> A's rows are
                   k-contiguous in memory (NN), so 16-byte cp.async both for A and B.
     A_MMAJOR = 0: A stage is k-major (BK x LDA), as the library: A goes element-wise (4/8-byte
                   cp.async) for NN.
     B: always k-major (BK x LDB); 16-byte group cg of row l is stored at group cg ^ bswz(l).
   Fast path (NN, 16-byte aligned rows, the tile wholly inside m x n, a whole BK slice): each
   thread has one base pointer an operand and constant strides per copy (no per-element
   (mn, k) recomputation, no bounds). Anything else (edges, the last partial slice, transposes,
   misalignment): element-wise zero-filled copies in the same layout.
   Jobs, split-K, epilogue: exactly the library's (gemm_finish is reused).
   ============================================================================================ */
extern __shared__ __align__(16) unsigned char lab_smem[];

GPUK_DEV void lab_cp16(const void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((u32)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
}
template <typename T> GPUK_DEV void lab_cp_elem(const T* dst, const T* src, bool in) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"((u32)__cvta_generic_to_shared(dst)),
                 "l"(src), "n"(sizeof(T)), "r"(in ? (u32)sizeof(T) : 0u)
                 : "memory");
}

template <typename T, typename P, int STAGES>
GPUK_DEV void lab_run(const gemm_args& g, T* c, const T* a, const T* b, T alpha, T beta) {
    enum {
        TILE = P::TILE, BK = P::BK, LDA = P::LDA, LDB = P::LDB, G = 16 / sizeof(T),
        A_ELEMS = P::A_MMAJOR ? TILE * LDA : BK * LDA, B_ELEMS = BK * LDB, STAGE = A_ELEMS + B_ELEMS,
        /* fast A, m-major: CH 16-byte chunks a row, RPE rows a copy round, NA copies a thread */
        CH = BK / G, RPE = 256 / (CH ? CH : 1), NA16 = TILE * CH / 256,
        /* fast A, k-major: element copies, kk = t % 8 + 8 (e % KH), row = t / 8 + 32 (e / KH) */
        KH = BK / 8, NAE = TILE * BK / 256,
        /* fast B: CHB 16-byte chunks a row of TILE, RPB rows a round, NB copies a thread */
        CHB = TILE / G, RPB = 256 / CHB, NB = BK * CHB / 256,
        NSLOW = TILE * BK / 256
    };
    static_assert((A_ELEMS * sizeof(T)) % 16 == 0 && (STAGE * sizeof(T)) % 16 == 0, "16-byte stages");
    static_assert(P::A_MMAJOR ? (CH >= 1 && 256 % CH == 0 && TILE * CH % 256 == 0) : (BK % 8 == 0 && TILE * BK % 256 == 0), "A");
    static_assert(256 % CHB == 0 && BK * CHB % 256 == 0, "B");
    T* const sm = (T*)lab_smem;
    const u32 t = threadIdx.x;
    const u64 ntn = (g.n + TILE - 1) / TILE, ntm = (g.m + TILE - 1) / TILE, tiles = ntn * ntm;
    const u64 jobs = tiles * g.splits * g.batch;
    const u64 kper = ((g.k + g.splits - 1) / g.splits + BK - 1) / BK * BK;
    for (u64 w = blockIdx.x; w < jobs; w += gridDim.x) {
        const u64 tile = w % tiles, z = w / tiles, bi = z / g.splits;
        const u32 s = (u32)(z % g.splits);
        const u64 row0 = tile / ntn * TILE, col0 = tile % ntn * TILE;
        const u64 k_begin = s * kper, k_end = k_begin + kper < g.k ? k_begin + kper : g.k;
        const T* const xa = a + bi * g.stride_a;
        const T* const xb = b + bi * g.stride_b;
        const bool fast = !g.trans_a && !g.trans_b && row0 + TILE <= g.m && col0 + TILE <= g.n &&
                          aligned16(xb) && g.ldb % G == 0 && (!P::A_MMAJOR || (aligned16(xa) && g.lda % G == 0));
        /* fast-path bases at k = 0 (A moves +k0, B +k0 * ldb) */
        const T* const fa = P::A_MMAJOR ? xa + (row0 + t / CH) * g.lda + (t % CH) * G
                                        : xa + (row0 + t / 8) * g.lda + t % 8;
        const u64 fa_step = (u64)(P::A_MMAJOR ? RPE : 32) * g.lda;
        const u32 fa_dst = P::A_MMAJOR ? (t / CH) * LDA + (t % CH) * G : (t % 8) * LDA + t / 8;
        const T* const fb = xb + (u64)(t / CHB) * g.ldb + col0 + (t % CHB) * G;
        const u64 fb_step = (u64)RPB * g.ldb;
        auto load = [&](T* st, u64 k0) {
            T* const sa = st;
            T* const sb = st + A_ELEMS;
            if (fast && k0 + BK <= k_end) {
                if constexpr (P::A_MMAJOR) {
#pragma unroll
                    for (int e = 0; e < NA16; e++) lab_cp16(sa + fa_dst + e * RPE * LDA, fa + k0 + e * fa_step);
                } else {
#pragma unroll
                    for (int e = 0; e < NAE; e++)
                        lab_cp_elem(sa + fa_dst + (e % KH) * 8 * LDA + (e / KH) * 32, fa + k0 + (e % KH) * 8 + (e / KH) * fa_step, true);
                }
#pragma unroll
                for (int e = 0; e < NB; e++) {
                    const u32 l = e * RPB + t / CHB, cg = t % CHB;
                    lab_cp16(sb + l * LDB + (cg ^ P::bswz(l)) * G, fb + k0 * g.ldb + e * fb_step);
                }
                return;
            }
            /* general: element-wise, zero-filled, any op / edge */
#pragma unroll
            for (int e = 0; e < NSLOW; e++) {
                const u32 q = e * 256 + t;
                const u32 i = g.trans_a ? q % TILE : q / BK, l = g.trans_a ? q / TILE : q % BK;
                const u64 r = row0 + i, kk = k0 + l;
                const bool in = r < g.m && kk < k_end;
                const T* src = in ? (g.trans_a ? xa + kk * g.lda + r : xa + r * g.lda + kk) : xa;
                lab_cp_elem(sa + (P::A_MMAJOR ? i * LDA + l : l * LDA + i), src, in);
            }
#pragma unroll
            for (int e = 0; e < NSLOW; e++) {
                const u32 q = e * 256 + t;
                const u32 j = g.trans_b ? q / BK : q % TILE, l = g.trans_b ? q % BK : q / TILE;
                const u64 cc = col0 + j, kk = k0 + l;
                const bool in = cc < g.n && kk < k_end;
                const T* src = in ? (g.trans_b ? xb + cc * g.ldb + kk : xb + kk * g.ldb + cc) : xb;
                lab_cp_elem(sb + l * LDB + ((j / G) ^ P::bswz(l)) * G + j % G, src, in);
            }
        };
        P p;
        p.zero();
#pragma unroll
        for (int st = 0; st < STAGES - 1; st++) {
            const u64 k0 = k_begin + (u64)st * BK;
            if (k0 < k_end) load(sm + st * STAGE, k0);
            cp_async_commit();
        }
        u32 cur = 0;
        for (u64 k0 = k_begin; k0 < k_end; k0 += BK) {
            cp_async_wait<STAGES - 2>();
            __syncthreads();
            const u64 kn = k0 + (u64)(STAGES - 1) * BK;
            const u32 next = cur == 0 ? STAGES - 1 : cur - 1; /* (cur + STAGES - 1) % STAGES */
            if (kn < k_end) load(sm + next * STAGE, kn);
            cp_async_commit();
            p.step(sm + cur * STAGE, sm + cur * STAGE + A_ELEMS);
            cur = cur + 1 == STAGES ? 0 : cur + 1;
        }
        cp_async_wait<0>();
        __syncthreads();
        gemm_finish<T>(p, g, c + bi * g.stride_c, alpha, beta, row0, col0, tile, tiles, s);
    }
}

/* ============================================================================================
   Policies for the lab loop
   ============================================================================================ */

/* The library's SIMT policy as-is (k-major A and B, LD 132), for the lab loop. */
struct lab_simt_lib : gemm_simt<float> {
    enum { A_MMAJOR = 0, LDA = GEMM_TILE_4 + 4, LDB = GEMM_TILE_4 + 4 };
    GPUK_DEV static u32 bswz(u32) { return 0; }
};

/* Warp-tiled SIMT FP32: TILE 128, 8 warps of WM x WN, lanes (WM/8) x (WN/8), each thread 8 x 8
   as 2 x 2 groups of 4 x 4: rows wbase_m + h * WM/2 + lm * 4 + {0..3}, cols likewise.
   A warp reads WM/8 distinct float4 of A and WN/8 of B a k (4 + 8 = 12 words of 16 B: one
   wavefront each load) instead of the library's 2 + 16. Both k-major; A LD 132 (element copies
   of t % 8 = k land 4 banks apart, t / 8 = row adds 1: conflict-free), B LD 128.
   Fragments double-buffered across l (the loop is fully unrolled, so ptxas schedules it). */
template <int WM, int WN, int BK_>
struct lab_simt_wt {
    enum { TILE = 128, BK = BK_, NACC = 64, A_MMAJOR = 0, LDA = TILE + 4, LDB = TILE, LM = WM / 8, LN = WN / 8,
           WARPS_N = TILE / WN };
    static_assert(LM * LN == 32 && (TILE / WM) * (TILE / WN) == 8, "8 warps of 32 lanes");
    float acc[NACC];
    GPUK_DEV static u32 bswz(u32) { return 0; }
    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = 0.f;
    }
    GPUK_DEV static u32 rbase() { const u32 lane = threadIdx.x & 31; return (threadIdx.x >> 5) / WARPS_N * WM + lane / LN * 4; }
    GPUK_DEV static u32 cbase() { const u32 lane = threadIdx.x & 31; return (threadIdx.x >> 5) % WARPS_N * WN + lane % LN * 4; }
    GPUK_DEV void step(const float* as, const float* bs) {
        const float* pa = as + rbase();
        const float* pb = bs + cbase();
        float4 xa[2][2], yb[2][2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            xa[0][h] = *(const float4*)(pa + h * (WM / 2));
            yb[0][h] = *(const float4*)(pb + h * (WN / 2));
        }
#pragma unroll
        for (int l = 0; l < BK; l++) {
            const int cb = l & 1, nb = cb ^ 1;
            if (l + 1 < BK) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    xa[nb][h] = *(const float4*)(pa + (l + 1) * LDA + h * (WM / 2));
                    yb[nb][h] = *(const float4*)(pb + (l + 1) * LDB + h * (WN / 2));
                }
            }
            const float x[8] = { xa[cb][0].x, xa[cb][0].y, xa[cb][0].z, xa[cb][0].w,
                                 xa[cb][1].x, xa[cb][1].y, xa[cb][1].z, xa[cb][1].w };
            const float y[8] = { yb[cb][0].x, yb[cb][0].y, yb[cb][0].z, yb[cb][0].w,
                                 yb[cb][1].x, yb[cb][1].y, yb[cb][1].z, yb[cb][1].w };
#pragma unroll
            for (int r = 0; r < 8; r++)
#pragma unroll
                for (int cc = 0; cc < 8; cc++) acc[r * 8 + cc] = fmaf(x[r], y[cc], acc[r * 8 + cc]);
        }
    }
    GPUK_DEV u32 row(int i) const { const u32 r = (u32)i / 8; return rbase() + r / 4 * (WM / 2) + r % 4; }
    GPUK_DEV u32 col(int i) const { const u32 cc = (u32)i % 8; return cbase() + cc / 4 * (WN / 2) + cc % 4; }
};

/* TF32 mma.sync m16n8k8 with A m-major in shared memory (both operands by 16-byte cp.async).
   Warps 2 (m) x 4 (n), warp tile 64 x 32: m16 tiles t = 0..3 at rows wm*64 + 16t + {g, g+8}
   (natural order), n8 tiles u = 0..3 with fragment col n at tile col wn*32 + 4n + u (as the
   library: a thread's B cols 4g..4g+3 are one float4).
   k permutation (free: A and B agree): a thread (quad q) owns KQ = BK/4 consecutive k,
   q*KQ .. q*KQ+KQ-1; element e = 4v + 2jj + h of those is fragment k-position q + 4h of k8
   step (v, jj). So A is one float4 a row per 4 k (LDS.128 along k), B one float4 a k row.
   Banks: A LDA = 16 (BK 16: rows g, g+1 16 words apart) or 36 (BK 32): the 8 lanes of a
   quarter-warp hit 8 distinct 16-byte groups. B LDB = 128, XOR swizzle of the 16-byte group by
   2 * ((l / KQ) & 3) = 2q: lanes (g, q) read group g ^ 2q -> distinct; 16-byte cp.async rows
   are permuted within aligned groups of 8 -> still conflict-free.
   CVT = 0: no cvt.rna (the tensor core ignores the low 13 bits: truncation) to see its cost. */
template <int BK_, bool CVT>
struct lab_tf32_mm {
    enum { TILE = 128, BK = BK_, NACC = 64, A_MMAJOR = 1, LDA = BK == 16 ? 16 : BK + 4, LDB = TILE, KQ = BK / 4 };
    static_assert(BK % 16 == 0, "BK 16 or 32");
    float acc[NACC];
    GPUK_DEV static u32 bswz(u32 l) { return 2u * ((l / KQ) & 3u); }
    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = 0.f;
    }
    GPUK_DEV static u32 cv(float x) {
        if constexpr (CVT) return gemm_tf32_mma<16>::tf32(x);
        else return __float_as_uint(x);
    }
    GPUK_DEV void step(const float* as, const float* bs) {
        const u32 lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
        const u32 wm = threadIdx.x >> 7, wn = (threadIdx.x >> 5) & 3;
        const float* pa = as + (wm * 64 + g) * LDA + q * KQ;
        const float* pb = bs + q * KQ * LDB + wn * 32 + 4 * (g ^ (2 * q));
#pragma unroll
        for (int v = 0; v < KQ / 4; v++) {
            float4 xa[4][2], yb[4];
#pragma unroll
            for (int t = 0; t < 4; t++)
#pragma unroll
                for (int hr = 0; hr < 2; hr++) xa[t][hr] = *(const float4*)(pa + (16 * t + 8 * hr) * LDA + 4 * v);
#pragma unroll
            for (int e = 0; e < 4; e++) yb[e] = *(const float4*)(pb + (4 * v + e) * LDB);
#pragma unroll
            for (int jj = 0; jj < 2; jj++) {
                u32 b0[4], b1[4];
                const float4 y0 = yb[2 * jj], y1 = yb[2 * jj + 1];
                b0[0] = cv(y0.x); b0[1] = cv(y0.y); b0[2] = cv(y0.z); b0[3] = cv(y0.w);
                b1[0] = cv(y1.x); b1[1] = cv(y1.y); b1[2] = cv(y1.z); b1[3] = cv(y1.w);
#pragma unroll
                for (int t = 0; t < 4; t++) {
                    const float4 r0 = xa[t][0], r1 = xa[t][1];
                    const u32 a0 = cv(jj ? r0.z : r0.x), a2 = cv(jj ? r0.w : r0.y);
                    const u32 a1 = cv(jj ? r1.z : r1.x), a3 = cv(jj ? r1.w : r1.y);
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        gemm_tf32_mma<16>::mma(acc[(2 * t) * 8 + u], acc[(2 * t) * 8 + 4 + u], acc[(2 * t + 1) * 8 + u],
                                               acc[(2 * t + 1) * 8 + 4 + u], a0, a1, a2, a3, b0[u], b1[u]);
                }
            }
        }
    }
    GPUK_DEV u32 row(int i) const {
        const u32 s = (u32)i >> 3, g = (threadIdx.x & 31) >> 2;
        return (threadIdx.x >> 7) * 64 + (s >> 1) * 16 + g + 8 * (s & 1);
    }
    GPUK_DEV u32 col(int i) const { return ((threadIdx.x >> 5) & 3) * 32 + (threadIdx.x & 3) * 8 + ((u32)i & 7); }
};

/* FP64 mma.sync m16n8k4 (sm_90) with A m-major (16-byte cp.async for both operands).
   Warps 2 x 4, warp tile 64 x 32, m16 tiles at rows wm*64 + 16t + {g, g+8} (natural), B/C
   columns as the library's policy (slot pairs -> double2 loads; runs of 4 columns in C).
   k permutation: quad q owns KQ = BK/4 consecutive k; k4 step j uses k = q*KQ + j.
   BK 8: A LDA 8 (rows 64 B: one double2 a row holds both steps; rows g, g+1 4 groups apart),
         B LDB 130 (2q*65 -> groups 2q + g: conflict-free without swizzle).
   BK 4: A LDA 4 (LDS.64, 16 lanes of a half-warp hit 16 distinct 8-byte slots), B LDB 132. */
template <int BK_>
struct lab_f64_mm {
    enum { TILE = 128, BK = BK_, NACC = 64, A_MMAJOR = 1, LDA = BK, LDB = BK == 8 ? 130 : 132, KQ = BK / 4 };
    static_assert(BK == 4 || BK == 8, "BK 4 or 8");
    double acc[NACC];
    GPUK_DEV static u32 bswz(u32) { return 0; }
    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = 0.0;
    }
    GPUK_DEV static int j_of(int u, int e) { return (u >> 1) * 4 + 2 * e + (u & 1); }
    GPUK_DEV void step(const double* as, const double* bs) {
        const u32 lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
        const u32 wm = threadIdx.x >> 7, wn = (threadIdx.x >> 5) & 3;
        const double* pa = as + (wm * 64 + g) * LDA + q * KQ;
        const double* pb = bs + q * KQ * LDB + wn * 32 + 2 * g;
        double a[KQ][4][2];
#pragma unroll
        for (int t = 0; t < 4; t++)
#pragma unroll
            for (int hr = 0; hr < 2; hr++) {
                if constexpr (KQ == 2) {
                    const double2 x = *(const double2*)(pa + (16 * t + 8 * hr) * LDA);
                    a[0][t][hr] = x.x;
                    a[KQ - 1][t][hr] = x.y;
                } else {
                    a[0][t][hr] = pa[(16 * t + 8 * hr) * LDA];
                }
            }
#pragma unroll
        for (int j = 0; j < KQ; j++) {
            double bb[4];
#pragma unroll
            for (int w = 0; w < 2; w++) {
                const double2 y = *(const double2*)(pb + j * LDB + w * 16);
                bb[2 * w] = y.x;
                bb[2 * w + 1] = y.y;
            }
#pragma unroll
            for (int t = 0; t < 4; t++)
#pragma unroll
                for (int u = 0; u < 4; u++)
                    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                        : "+d"(acc[(2 * t) * 8 + j_of(u, 0)]), "+d"(acc[(2 * t) * 8 + j_of(u, 1)]),
                          "+d"(acc[(2 * t + 1) * 8 + j_of(u, 0)]), "+d"(acc[(2 * t + 1) * 8 + j_of(u, 1)])
                        : "d"(a[j][t][0]), "d"(a[j][t][1]), "d"(bb[u]));
        }
    }
    GPUK_DEV u32 row(int i) const {
        const u32 s = (u32)i >> 3, g = (threadIdx.x & 31) >> 2;
        return (threadIdx.x >> 7) * 64 + (s >> 1) * 16 + g + 8 * (s & 1);
    }
    GPUK_DEV u32 col(int i) const {
        const u32 j = (u32)i & 7;
        return ((threadIdx.x >> 5) & 3) * 32 + (j >> 2) * 16 + (threadIdx.x & 3) * 4 + (j & 3);
    }
};

/* ---- kernels ---- */
template <typename T, typename P, int STAGES, int MINB>
__global__ void __launch_bounds__(GPUK_BLOCK, MINB) lab_kernel(T* c, const T* a, const T* b, gemm_args g, T alpha, T beta) {
    lab_run<T, P, STAGES>(g, c, a, b, alpha, beta);
}
/* the library's own main loop and policy, only the launch bounds changed */
template <typename T, typename P, bool ASYNC, int MINB>
__global__ void __launch_bounds__(GPUK_BLOCK, MINB) lib_kernel(T* c, const T* a, const T* b, gemm_args g, T alpha, T beta) {
    gemm_run<T, P, ASYNC>(g, c, a, b, alpha, beta);
}
template <typename P, int STAGES> constexpr size_t lab_smem_bytes() {
    return (size_t)STAGES * ((P::A_MMAJOR ? P::TILE * P::LDA : P::BK * P::LDA) + P::BK * P::LDB) * sizeof(P::acc[0]);
}

/* ============================================================================================
   Host
   ============================================================================================ */
static void print_table(bool attrs);
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "gemm_tune: %s (line %d): %s\n", #x, __LINE__, cudaGetErrorString(e_)); \
    print_table(false); std::exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    std::fprintf(stderr, "gemm_tune: %s: cuBLAS status %d\n", #x, (int)s_); std::exit(1); } } while (0)

enum kind { F32, TF32, F64 };
struct cand {
    const char* name;
    kind k;
    const void* fn;
    size_t smem; /* dynamic */
    int tile;
};

static cudaStream_t st;
static cublasHandle_t blas;
static int sms;

template <typename T> __global__ void fill_uniform(T* p, size_t n, unsigned long long seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = (T)(-1.0 + 2.0 * (double)(z >> 11) / 9007199254740992.0);
    }
}
template <typename T> __global__ void abs_of(T* out, const T* in, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i] < 0 ? -in[i] : in[i];
}
/* worst |c - ref| / tol (as double bits: non-negative, so integer max works); bad counts NaN too */
template <typename T>
__global__ void check_k(const T* c, const T* ref, const T* bound, size_t n, double rel, unsigned long long* worst,
                        unsigned long long* bad) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const double d = fabs((double)c[i] - (double)ref[i]), tol = rel * (double)bound[i];
        if (!(d <= tol)) atomicAdd(bad, 1ull);
        else if (tol > 0) atomicMax(worst, (unsigned long long)__double_as_longlong(d / tol));
    }
}

template <typename F> static float median_ms(F f) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int i = 0; i < 2; i++) f();
    for (int i = 0; i < 7; i++) {
        CK(cudaEventRecord(e0, st));
        f();
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(t.begin(), t.end());
    return t[3];
}

static void cublas_gemm(float* c, const float* a, const float* b, size_t m, size_t n, size_t k) {
    const float one = 1, zero = 0;
    CB(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, (int)n, a, (int)k, &zero, c, (int)n));
}
static void cublas_gemm(double* c, const double* a, const double* b, size_t m, size_t n, size_t k) {
    const double one = 1, zero = 0;
    CB(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, (int)n, a, (int)k, &zero, c, (int)n));
}

struct shape { const char* name; size_t m, n, k; };
static const shape shapes[3] = { { "4096^3", 4096, 4096, 4096 }, { "1024x512x2048", 1024, 512, 2048 }, { "1000^3", 1000, 1000, 1000 } };
struct result { double tflops = 0, ratio = 0, err = 0; bool ok = false; };

static void* ws; /* split-K workspace: GEMM_SPLIT_TILES counters, then parts */
static size_t ws_bytes;

template <typename T> static void launch(const cand& cd, T* c, const T* a, const T* b, size_t m, size_t n, size_t k) {
    gemm_args g;
    std::memset(&g, 0, sizeof g);
    const size_t tile = (size_t)cd.tile, tiles = ((m + tile - 1) / tile) * ((n + tile - 1) / tile);
    size_t splits = 1;
    if (tiles < (size_t)sms) { /* src/gpuk_builtin.h gpuk__gemm_splits */
        splits = (size_t)(2 * sms) / tiles;
        splits = std::min(splits, k / 128);
        splits = std::min(splits, (size_t)16);
        if (splits < 1) splits = 1;
    }
    if (splits > 1 && (size_t)GEMM_SPLIT_TILES * 4 + tiles * splits * tile * tile * sizeof(T) > ws_bytes) {
        std::fprintf(stderr, "gemm_tune: workspace too small\n");
        std::exit(1);
    }
    g.m = m; g.n = n; g.k = k; g.ldc = n; g.lda = k; g.ldb = n;
    g.trans_a = 0; g.trans_b = 0; g.batch = 1; g.splits = (u32)splits; g.ws = (u32*)ws;
    T alpha = 1, beta = 0;
    void* args[6] = { &c, &a, &b, &g, &alpha, &beta };
    CK(cudaLaunchKernel(cd.fn, dim3((unsigned)(tiles * splits)), dim3(GPUK_BLOCK), args, cd.smem, st));
}

struct bufs { void *a, *b, *absa, *absb, *c, *ref, *reftf, *bound; };

template <typename T>
static void run_shape(const std::vector<cand>& cands, std::vector<std::vector<result>>& res, int si, bufs& B,
                      double cub_tf[3][3]) {
    const shape& sh = shapes[si];
    const size_t m = sh.m, n = sh.n, k = sh.k;
    T *a = (T*)B.a, *b = (T*)B.b, *absa = (T*)B.absa, *absb = (T*)B.absb, *c = (T*)B.c, *ref = (T*)B.ref,
      *reftf = (T*)B.reftf, *bound = (T*)B.bound;
    const bool is4 = sizeof(T) == 4;
    fill_uniform<<<1024, 256, 0, st>>>(a, m * k, 0x1234567ull + si);
    fill_uniform<<<1024, 256, 0, st>>>(b, k * n, 0x7654321ull + si);
    abs_of<<<1024, 256, 0, st>>>(absa, a, m * k);
    abs_of<<<1024, 256, 0, st>>>(absb, b, k * n);
    CK(cudaGetLastError());
    CB(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    cublas_gemm(bound, absa, absb, m, n, k);
    cublas_gemm(ref, a, b, m, n, k);
    const double flop = 2.0 * m * n * k;
    cub_tf[is4 ? 0 : 2][si] = flop / (median_ms([&] { cublas_gemm(c, a, b, m, n, k); }) * 1e-3) / 1e12;
    if (is4) {
        CB(cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH));
        cublas_gemm(reftf, a, b, m, n, k);
        cub_tf[1][si] = flop / (median_ms([&] { cublas_gemm(c, a, b, m, n, k); }) * 1e-3) / 1e12;
        CB(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    }
    unsigned long long* dev;
    CK(cudaMalloc(&dev, 16));
    const double eps = is4 ? std::ldexp(1.0, -23) : std::ldexp(1.0, -52);
    for (size_t ci = 0; ci < cands.size(); ci++) {
        const cand& cd = cands[ci];
        if ((cd.k == F64) == is4) continue;
        const bool tf = cd.k == TF32;
        /* check: C prefilled with NaN */
        CK(cudaMemsetAsync(c, 0xFF, m * n * sizeof(T), st));
        launch<T>(cd, c, a, b, m, n, k);
        CK(cudaGetLastError());
        CK(cudaMemsetAsync(dev, 0, 16, st));
        const double rel = 2.0 * (double)(k + 2) * eps + (tf ? 0x1.2p-10 : 0.0);
        check_k<T><<<1024, 256, 0, st>>>(c, tf ? reftf : ref, bound, m * n, rel, dev, dev + 1);
        unsigned long long h[2];
        CK(cudaMemcpyAsync(h, dev, 16, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        result& r = res[ci][si];
        double worst;
        std::memcpy(&worst, &h[0], 8);
        r.ok = h[1] == 0;
        r.err = worst;
        const float ms = median_ms([&] { launch<T>(cd, c, a, b, m, n, k); });
        r.tflops = flop / (ms * 1e-3) / 1e12;
        r.ratio = r.tflops / cub_tf[cd.k][si];
    }
    CK(cudaFree(dev));
}

static void set_smem(const void* fn, size_t smem) {
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
}

template <typename T, typename P, int STAGES, int MINB>
static cand lab(const char* name, kind k) {
    const size_t smem = lab_smem_bytes<P, STAGES>();
    auto fn = lab_kernel<T, P, STAGES, MINB>;
    set_smem((const void*)fn, smem);
    return cand{ name, k, (const void*)fn, smem, P::TILE };
}

/* globals for print_table (also called on a CUDA error, with what was measured so far) */
static std::vector<cand> g_cands;
static std::vector<std::vector<result>> g_res;
static double g_cub[3][3];
static cudaDeviceProp g_prop;
static bool g_printed;
static void print_table(bool attrs) {
    if (g_printed) return;
    g_printed = true;
    const std::vector<cand>& cands = g_cands;
    const std::vector<std::vector<result>>& res = g_res;
    double (&cub)[3][3] = g_cub;
    if (res.size() != cands.size()) return;
    std::printf("%s, %d SMs. TFLOP/s and cuBLAS-time/ours; err = max |diff|/tolerance over all 3 shapes\n", g_prop.name, sms);
    std::printf("cuBLAS TFLOP/s %-17s  sgemm %6.1f %6.1f %6.1f | tf32 %6.1f %6.1f %6.1f | dgemm %5.1f %5.1f %5.1f\n", "(4096/seed/1000)",
                cub[0][0], cub[0][1], cub[0][2], cub[1][0], cub[1][1], cub[1][2], cub[2][0], cub[2][1], cub[2][2]);
    std::printf("%-32s %13s %13s %13s %-10s %4s %4s %6s %3s\n", "candidate", "4096^3", "1024x512x2048", "1000^3", "check",
                "regs", "lmem", "smem", "b/SM");
    for (size_t ci = 0; ci < cands.size(); ci++) {
        const cand& cd = cands[ci];
        cudaFuncAttributes fa;
        std::memset(&fa, 0, sizeof fa);
        if (attrs) CK(cudaFuncGetAttributes(&fa, cd.fn));
        int nb = 0;
        if (attrs) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, cd.fn, GPUK_BLOCK, cd.smem));
        bool ok = true, ran = true;
        double err = 0;
        for (int si = 0; si < 3; si++) {
            ok = ok && res[ci][si].ok;
            ran = ran && res[ci][si].tflops > 0;
            err = std::max(err, res[ci][si].err);
        }
        std::printf("%-32s %6.1f %5.2f  %6.1f %5.2f  %6.1f %5.2f  %-4s %5.3f %4d %4d %5.1fK %3d\n", cd.name,
                    res[ci][0].tflops, res[ci][0].ratio, res[ci][1].tflops, res[ci][1].ratio, res[ci][2].tflops,
                    res[ci][2].ratio, !ran ? "n/a" : ok ? "ok" : "FAIL", err, fa.numRegs, (int)fa.localSizeBytes,
                    (fa.sharedSizeBytes + cd.smem) / 1024.0, nb);
    }
}

int main() {
    int dev = 0;
    cudaDeviceProp& prop = g_prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    if (prop.major != 9) {
        std::fprintf(stderr, "gemm_tune: needs an sm_90 GPU (got %s, sm_%d%d)\n", prop.name, prop.major, prop.minor);
        return 1;
    }
    sms = prop.multiProcessorCount;
    CK(cudaStreamCreate(&st));
    CB(cublasCreate(&blas));
    CB(cublasSetStream(blas, st));

    std::vector<cand>& cands = g_cands;
    /* ---- controls: the library's kernels as built today ---- */
    cands.push_back({ "f32  ctl sm80 (simt cp.async)", F32, (const void*)gpuk_gemm_f32__sm80, 0, 128 });
    cands.push_back({ "f32  ctl base (sm52 prefetch)", F32, (const void*)gpuk_gemm_f32, 0, 128 });
    /* ---- FP32 SIMT candidates (the control already runs 2 blocks/SM: 113 registers) ---- */
    {
        auto fb = lib_kernel<float, gemm_simt<float>, false, 2>;
        cands.push_back({ "f32  base LB(256,2)", F32, (const void*)fb, 0, 128 });
    }
    cands.push_back(lab<float, lab_simt_lib, 3, 2>("f32  lab loop+lib simt BK8 S3 LB2", F32));
    cands.push_back(lab<float, lab_simt_lib, 4, 2>("f32  lab loop+lib simt BK8 S4 LB2", F32));
    cands.push_back(lab<float, lab_simt_wt<32, 64, 8>, 4, 2>("f32  wt32x64 BK8 S4 LB2", F32));
    cands.push_back(lab<float, lab_simt_wt<32, 64, 16>, 3, 2>("f32  wt32x64 BK16 S3 LB2", F32));
    cands.push_back(lab<float, lab_simt_wt<64, 32, 16>, 3, 2>("f32  wt64x32 BK16 S3 LB2", F32));
    cands.push_back(lab<float, lab_simt_wt<32, 64, 16>, 3, 1>("f32  wt32x64 BK16 S3 LB1", F32));
    cands.push_back(lab<float, lab_simt_wt<64, 32, 16>, 3, 1>("f32  wt64x32 BK16 S3 LB1", F32));
    /* ---- TF32 ---- */
    cands.push_back({ "tf32 ctl sm80 (BK16 S2)", TF32, (const void*)gpuk_gemm_tf32__sm80, 0, 128 });
    cands.push_back(lab<float, lab_tf32_mm<16, true>, 2, 1>("tf32 mmajorA BK16 S2 32K", TF32));
    cands.push_back(lab<float, lab_tf32_mm<16, true>, 3, 1>("tf32 mmajorA BK16 S3 48K", TF32));
    cands.push_back(lab<float, lab_tf32_mm<16, true>, 4, 1>("tf32 mmajorA BK16 S4 64K", TF32));
    cands.push_back(lab<float, lab_tf32_mm<32, true>, 2, 1>("tf32 mmajorA BK32 S2 68K", TF32));
    cands.push_back(lab<float, lab_tf32_mm<32, true>, 3, 1>("tf32 mmajorA BK32 S3 102K", TF32));
    cands.push_back(lab<float, lab_tf32_mm<16, false>, 4, 1>("tf32 mmajorA BK16 S4 nocvt", TF32));
    cands.push_back(lab<float, lab_tf32_mm<16, true>, 3, 2>("tf32 mmajorA BK16 S3 LB2", TF32));
    cands.push_back(lab<float, lab_tf32_mm<16, true>, 4, 2>("tf32 mmajorA BK16 S4 LB2", TF32));
    /* ---- FP64 ---- */
    cands.push_back({ "f64  ctl sm90 (m16n8k4 BK8 S2)", F64, (const void*)gpuk_gemm_f64__sm90, 0, 128 });
    cands.push_back(lab<double, lab_f64_mm<8>, 2, 1>("f64  mmajorA BK8 S2 33K", F64));
    cands.push_back(lab<double, lab_f64_mm<8>, 3, 1>("f64  mmajorA BK8 S3 50K", F64));
    cands.push_back(lab<double, lab_f64_mm<8>, 4, 1>("f64  mmajorA BK8 S4 66K", F64));
    cands.push_back(lab<double, lab_f64_mm<4>, 3, 1>("f64  mmajorA BK4 S3 25K", F64));
    cands.push_back(lab<double, lab_f64_mm<4>, 4, 1>("f64  mmajorA BK4 S4 33K", F64));

    /* buffers: 4096^2 doubles each */
    const size_t big = (size_t)4096 * 4096 * sizeof(double);
    bufs B;
    void** all[8] = { &B.a, &B.b, &B.absa, &B.absb, &B.c, &B.ref, &B.reftf, &B.bound };
    for (auto p : all) CK(cudaMalloc(p, big));
    ws_bytes = (size_t)GEMM_SPLIT_TILES * 4 + (size_t)2 * sms * 128 * 128 * sizeof(double);
    CK(cudaMalloc(&ws, ws_bytes));
    CK(cudaMemset(ws, 0, GEMM_SPLIT_TILES * 4));

    g_res.assign(cands.size(), std::vector<result>(3));
    std::vector<std::vector<result>>& res = g_res;
    double (&cub)[3][3] = g_cub;
    for (int si = 0; si < 3; si++) {
        run_shape<float>(cands, res, si, B, cub);
        run_shape<double>(cands, res, si, B, cub);
    }
    print_table(true);
    CB(cublasDestroy(blas));
    return 0;
}
