// bench/gemm_tma_prototype.cu - the TF32 GEMM of gpuk's sm_90a TMA path (gemm_tma_run) on its own,
// both operands K-major, 128 x 256 and 128 x 128 tiles, checked and timed against cuBLAS TF32 at
// five sizes. Not part of gpuk; nothing builds it by default. Needs compute capability 9.0:
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a bench/gemm_tma_prototype.cu \
//        -o build/gemm_tma_prototype -lcublas -lcuda && ./build/gemm_tma_prototype
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda.h>
// wgmma m64n256k8 / m64n128k8, TF32, both operands from shared memory (generated asm operand lists)
__device__ __forceinline__ void wgmma_n256(float* d, unsigned long long da, unsigned long long db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db));
}
__device__ __forceinline__ void wgmma_tf32_ss(float* d, unsigned long long da, unsigned long long db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db));
}

typedef unsigned long long u64; typedef unsigned int u32;
#define DEV __device__ __forceinline__
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
template <int S, int BN_ = 256> struct cfg { enum { BM = 128, BN = BN_, BK = 32, ABYTES = BM * 128, BBYTES = BN * 128, STAGE = ABYTES + BBYTES, SMEM = S * STAGE + 1024 + 64 }; };
DEV u32 saddr(const void* p) { return (u32)__cvta_generic_to_shared(p); }
DEV void cp16(u32 dst, const void* src, u32 bytes) { asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(bytes) : "memory"); }
DEV void mb_init(u32 b, u32 n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory"); }
DEV void mb_arrive(u32 b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory"); }
DEV void mb_cp_arrive(u32 b) { asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(b) : "memory"); }
DEV void mb_wait(u32 b, u32 parity) {
    asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" :: "r"(b), "r"(parity) : "memory");
}
DEV void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
DEV void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> DEV void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }
DEV void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
DEV u64 desc(u32 addr) { return (u64)((addr >> 4) & 0x3FFF) | (1ull << 16) | (64ull << 32) | (1ull << 62); }

// C[m x n] = A[m x k] (row-major) * Bt[n x k]^T, lda = ldb = k (multiple of 4), edges zero-filled.
// A producer warpgroup (setmaxnreg down to 40; one thread issues TMA loads of 32-k slices,
// 128-byte swizzle, into S stages, each with a "full" and an "empty" mbarrier) and two consumer
// warpgroups (setmaxnreg up to 232; wgmma m64nBNk8 from both stages by descriptor; each releases
// a stage once the wgmma after it has been issued and the one reading it retired).
template <int S, int BN>
__global__ void __launch_bounds__(384, 1) ws_gemm(float* c, const __grid_constant__ CUtensorMap tma, const __grid_constant__ CUtensorMap tmb, int m, int n, int k, int ldc) {
    typedef cfg<S, BN> C;
    extern __shared__ unsigned char smraw[];
    const u32 base = (saddr(smraw) + 1023u) & ~1023u;
    const u32 bars = base + S * C::STAGE; /* full[S], empty[S] */
    const int tid = threadIdx.x, wg = tid >> 7;
    const int m0 = blockIdx.y * C::BM, n0 = blockIdx.x * C::BN, nk = (k + 31) / 32;
    if (tid == 0) {
        for (int s = 0; s < S; s++) { mb_init(bars + 8 * s, 1); mb_init(bars + 8 * (S + s), 256); }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) { /* producer */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            for (int kt = 0; kt < nk; kt++) {
                const int s = kt % S;
                if (kt >= S) mb_wait(bars + 8 * (S + s), ((kt / S) - 1) & 1);
                const u32 st = base + s * C::STAGE, full = bars + 8 * s;
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(full), "r"((u32)C::STAGE) : "memory");
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                             :: "r"(st), "l"(&tma), "r"(kt * 32), "r"(m0), "r"(full) : "memory");
                for (int h = 0; h < C::BN / 128; h++)
                    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                                 :: "r"(st + C::ABYTES + h * 16384), "l"(&tmb), "r"(kt * 32), "r"(n0 + h * 128), "r"(full) : "memory");
            }
        }
    } else { /* consumers */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int cw = wg - 1;
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] = 0.f;
        for (int kt = 0; kt < nk; kt++) {
            const int s = kt % S;
            mb_wait(bars + 8 * s, (kt / S) & 1);
            const u32 sa = base + s * C::STAGE + cw * 64 * 128, sb = base + s * C::STAGE + C::ABYTES;
            wg_fence();
#pragma unroll
            for (int q = 0; q < 4; q++) { if (BN == 256) wgmma_n256(d, desc(sa + q * 32), desc(sb + q * 32)); else wgmma_tf32_ss(d, desc(sa + q * 32), desc(sb + q * 32)); }
            wg_commit();
            wg_wait<1>();
            if (kt > 0) mb_arrive(bars + 8 * (S + (kt - 1) % S));
        }
        wg_wait<0>();
        const int t = tid & 127, w = t >> 5, lane = t & 31;
#pragma unroll
        for (int j = 0; j < BN / 2; j++) {
            const int row = m0 + cw * 64 + w * 16 + (lane >> 2) + 8 * ((j >> 1) & 1), col = n0 + (j >> 2) * 8 + (lane & 3) * 2 + (j & 1);
            if (row < m && col < n) c[(size_t)row * ldc + col] = d[j];
        }
    }
}

static float med(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
template <typename F> static float timeit(F f, int reps = 11) {
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1); std::vector<float> t;
    for (int r = -2; r < reps; r++) { cudaEventRecord(e0); f(); cudaEventRecord(e1); CK(cudaEventSynchronize(e1)); float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 0) t.push_back(ms); }
    return med(t);
}
static CUtensorMap make_map(const float* p, int rows, int k) {
    CUtensorMap t;
    cuuint64_t dims[2] = { (cuuint64_t)k, (cuuint64_t)rows }, strides[1] = { (cuuint64_t)k * 4 };
    cuuint32_t box[2] = { 32, 128 }, es[2] = { 1, 1 };
    CUresult r = cuTensorMapEncodeTiled(&t, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void*)p, dims, strides, box, es,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r) { printf("cuTensorMapEncodeTiled: %d\n", (int)r); exit(1); }
    return t;
}
template <int S, int BN> static void run(float* c, const CUtensorMap& ta, const CUtensorMap& tb, int m, int n, int k) {
    static bool set = false;
    if (!set) { CK(cudaFuncSetAttribute(ws_gemm<S, BN>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cfg<S, BN>::SMEM)); set = true; }
    ws_gemm<S, BN><<<dim3((n + BN - 1) / BN, (m + 127) / 128), 384, cfg<S, BN>::SMEM>>>(c, ta, tb, m, n, k, n);
}
int main() {
    cublasHandle_t blas; cublasCreate(&blas); cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH);
    struct sh { int m, n, k; } shapes[] = { { 4096, 4096, 4096 }, { 8192, 8192, 4096 }, { 1024, 512, 2048 }, { 1000, 1000, 1000 }, { 301, 257, 132 } };
    for (auto s : shapes) {
        int m = s.m, n = s.n, k = s.k;
        std::vector<float> ha((size_t)m * k), hb((size_t)n * k), hc((size_t)m * n);
        unsigned z = 99u + m;
        for (auto& v : ha) { z = z * 1664525u + 1013904223u; v = (float)((int)(z >> 9) - (1 << 22)) / (1 << 22); }
        for (auto& v : hb) { z = z * 1664525u + 1013904223u; v = (float)((int)(z >> 9) - (1 << 22)) / (1 << 22); }
        float *a, *bt, *c;
        CK(cudaMalloc(&a, ha.size() * 4)); CK(cudaMalloc(&bt, hb.size() * 4)); CK(cudaMalloc(&c, hc.size() * 4));
        CK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(bt, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
        const float one = 1, zero = 0;
        const CUtensorMap ta = make_map(a, m, k), tb = make_map(bt, n, k);
        auto cub = [&] { cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, bt, k, a, k, &zero, c, n); };
        float tc = timeit(cub);
        double fl = 2.0 * m * n * k;
        printf("%dx%dx%d TN: cuBLAS TF32 %.1f TFLOP/s", m, n, k, fl / tc / 1e9);
        auto go = [&](const char* nm, auto f) {
            CK(cudaMemset(c, 0xFF, hc.size() * 4)); f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
            int bad = 0; double worst = 0; unsigned q = 5;
            for (int t = 0; t < 1000; t++) {
                q = q * 1664525u + 1013904223u; int i = (q >> 8) % m; q = q * 1664525u + 1013904223u; int j = (q >> 8) % n;
                double ref = 0, mag = 0;
                for (int l = 0; l < k; l++) { double p = (double)ha[(size_t)i * k + l] * hb[(size_t)j * k + l]; ref += p; mag += fabs(p); }
                double err = fabs(hc[(size_t)i * n + j] - ref), tol = (2.0 * (k + 2) * 6e-8 + 0x1.2p-9) * mag + 1e-30;
                worst = std::max(worst, err / tol); bad += !(err <= tol);
            }
            float t = timeit(f);
            printf("; %s %s (worst %.3f) %.1f TFLOP/s = %.2f", nm, bad ? "WRONG" : "right", worst, fl / t / 1e9, tc / t);
        };
        go("tma 128x256 S=4", [&] { run<4, 256>(c, ta, tb, m, n, k); });
        go("tma 128x128 S=4", [&] { run<4, 128>(c, ta, tb, m, n, k); });
        go("tma 128x128 S=6", [&] { run<6, 128>(c, ta, tb, m, n, k); });
        printf("\n");
        cudaFree(a); cudaFree(bt); cudaFree(c);
    }
    return 0;
}
