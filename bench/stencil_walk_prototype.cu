// bench/stencil_walk_prototype.cu - the sm_90 3x3 i32 box smoothing's walk of 64 x 16 tiles
// through a ring of TMA boxes (interior cells, which must equal gpuk_stencil3x3_i32's), timed with
// 2..6 blocks an SM and 2 or 3 stages beside gpuk's call and a device copy. Nothing builds it:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. bench/stencil_walk_prototype.cu \
//        -o build/stencil_walk_prototype -lcuda -ldl && ./build/stencil_walk_prototype
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
typedef unsigned long long u64; typedef unsigned int u32;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define TRY(x) do { if ((x) != GPUK_OK) { printf("gpuk: %s\n", gpuk_last_error()); exit(1); } } while (0)
struct Wd { double w[9]; };
enum { TC = 64, TR = 16, LS = TC + 8, BOXR = TR + 2, BOX = LS * BOXR, RT = 8, SBI = (BOX * 4 + 127) / 128 * 32 };
__device__ __forceinline__ u32 su(const void* p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mb_wait(u32 bar, u32 par) {
    asm volatile("{\n.reg .pred p;\nW1:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W1;\n}" ::"r"(bar), "r"(par) : "memory");
}
__device__ __forceinline__ void issue(u32 dst, const CUtensorMap* m, int x, int y, u32 bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"((u32)(BOX * 4)) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(m), "r"(x), "r"(y), "r"(bar) : "memory");
}
template <int STAGES>
__global__ void __launch_bounds__(128) persist(int* out, const __grid_constant__ CUtensorMap map, u64 rows, u64 cols, u64 ldo,
                                               const __grid_constant__ Wd wd, u32 ntc, u32 tiles) {
    extern __shared__ __align__(128) unsigned char smraw[];
    __shared__ __align__(8) u64 bar[STAGES];
    int* const s = (int*)(smraw + ((128u - (su(smraw) & 127u)) & 127u));
    const u32 t = threadIdx.x, x = t % TC, h = t / TC;
    if (t == 0) {
        for (int i = 0; i < STAGES; i++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(su(&bar[i])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int i = 0; i < STAGES; i++) {
            const u32 tile = blockIdx.x + i * gridDim.x;
            if (tile < tiles) issue(su(s + i * SBI), &map, (int)(tile % ntc * TC) - 4, (int)(tile / ntc * TR) - 1, su(&bar[i]));
        }
    }
    __syncthreads();
    u32 it = 0;
    for (u32 tile = blockIdx.x; tile < tiles; tile += gridDim.x, it++) {
        const u32 st = it % STAGES;
        const u64 c0 = tile % ntc * TC, r0 = tile / ntc * TR, j = c0 + x, i0 = r0 + h * RT;
        mb_wait(su(&bar[st]), (it / STAGES) & 1);
        if (i0 > 0 && i0 + RT < rows && j > 0 && j + 1 < cols) {
            const int* p = s + st * SBI + (h * RT) * LS + x + 3;
            double win[3][3];
#pragma unroll
            for (int c = 0; c < 3; c++) { win[0][c] = p[c]; win[1][c] = p[LS + c]; }
            p += 2 * LS;
            int* o = out + i0 * ldo + j;
#pragma unroll
            for (int r = 0; r < RT; r++) {
#pragma unroll
                for (int c = 0; c < 3; c++) win[(r + 2) % 3][c] = p[c];
                double acc = 0;
#pragma unroll
                for (int di = 0; di < 3; di++)
#pragma unroll
                    for (int dj = 0; dj < 3; dj++) acc = fma(wd.w[di * 3 + dj], win[(r + di) % 3][dj], acc);
                *o = __double2int_rz(acc + copysign(0.5, acc));
                p += LS;
                o += ldo;
            }
        }
        __syncthreads(); /* every thread is done with stage st */
        if (t == 0) {
            const u32 nt = tile + STAGES * gridDim.x;
            if (nt < tiles) issue(su(s + st * SBI), &map, (int)(nt % ntc * TC) - 4, (int)(nt / ntc * TR) - 1, su(&bar[st]));
        }
    }
}
static cudaStream_t st;
template <typename F> static float batch_ms(F f) {
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> v;
    for (int i = 0; i < 3; i++) f();
    for (int i = 0; i < 11; i++) {
        CK(cudaEventRecord(a, st)); for (int k = 0; k < 10; k++) f(); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); v.push_back(ms / 10);
    }
    std::sort(v.begin(), v.end()); return v[5];
}
static void run_size(gpuk_ctx* ctx, gpuk_stream gs, u64 N, int sms, void* cx, void* cy, int rounds) {
    const u64 N28 = 1ull << 28;
    int *in, *o1, *o2;
    CK(cudaMalloc(&in, N * N * 4)); CK(cudaMalloc(&o1, N * N * 4)); CK(cudaMalloc(&o2, N * N * 4));
    std::vector<int> hin(N * N); srand(5); for (auto& e : hin) e = rand() - RAND_MAX / 2;
    CK(cudaMemcpy(in, hin.data(), N * N * 4, cudaMemcpyHostToDevice));
    gpuk_buffer_desc bd = {}; gpuk_buffer bi, bo;
    bd.wrap = (gpuk_devptr)(uintptr_t)in; bd.bytes = N * N * 4; TRY(gpuk_buffer_create(ctx, &bd, &bi));
    bd.wrap = (gpuk_devptr)(uintptr_t)o1; TRY(gpuk_buffer_create(ctx, &bd, &bo));
    static const float box9[9] = { 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9 };
    Wd wd; for (int q = 0; q < 9; q++) wd.w[q] = (double)box9[q];
    CUtensorMap map;
    cuuint64_t dims[2] = { N, N }, strides[1] = { N * 4 };
    cuuint32_t box[2] = { LS, BOXR }, one[2] = { 1, 1 };
    if (cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, in, dims, strides, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)) { printf("map\n"); exit(1); }
    const u32 ntc = (N + TC - 1) / TC, tiles = ntc * ((N + TR - 1) / TR);
    auto lib = [&] { TRY(gpuk_stencil3x3_i32(ctx, gs, gpuk_at2d(bo, 0, N, N, 0), gpuk_at2d(bi, 0, N, N, 0), box9, GPUK_BOUNDARY_SKIP)); };
    auto copy = [&] { CK(cudaMemcpyAsync(cy, cx, N28 * 4, cudaMemcpyDeviceToDevice, st)); };
    auto copyimg = [&] { CK(cudaMemcpyAsync(o2, in, N * N * 4, cudaMemcpyDeviceToDevice, st)); };
    lib();
    CK(cudaMemsetAsync(o2, 0x7f, N * N * 4, st));
    persist<2><<<sms * 4, 128, 2 * SBI * 4 + 128, st>>>(o2, map, N, N, N, wd, ntc, tiles);
    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
    std::vector<int> a(N * N), b(N * N);
    CK(cudaMemcpy(a.data(), o1, N * N * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(b.data(), o2, N * N * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0; for (u64 i = 8; i + 8 < N; i++) for (u64 j = 1; j + 1 < N; j++) bad += a[i * N + j] != b[i * N + j];
    printf("== %llu^2: cells (rows 8..N-9) differing from gpuk's: %zu\n", N, bad);
    for (int round = 0; round < rounds; round++) {
        const double peak = 8.0 * N28 / batch_ms(copy) / 1e6, cells = 8.0 * N * N / 1e6;
        printf("round %d: copy 2^28 %.1f GB/s; image copy %.3f; gpuk library %.3f\n", round, peak, cells / batch_ms(copyimg) / peak,
               cells / batch_ms(lib) / peak);
        for (int B : { 2, 3, 4, 5, 6 })
            for (int S = 2; S <= 3; S++)
                for (int bal = 0; bal < 2; bal++) {
                    const size_t smem = S * SBI * 4 + 128;
                    u32 grid = sms * B;
                    if (bal) { const u32 c = (tiles + grid - 1) / grid; grid = (tiles + c - 1) / c; }
                    auto k = [&] {
                        if (S == 2) persist<2><<<grid, 128, smem, st>>>(o2, map, N, N, N, wd, ntc, tiles);
                        if (S == 3) persist<3><<<grid, 128, smem, st>>>(o2, map, N, N, N, wd, ntc, tiles);
                    };
                    printf("  persist %d blocks/SM %d stages grid %5u (%s) %.3f\n", B, S, grid, bal ? "balanced" : "B x SMs ", cells / batch_ms(k) / peak);
                }
    }
    TRY(gpuk_buffer_destroy(ctx, bi)); TRY(gpuk_buffer_destroy(ctx, bo));
    CK(cudaFree(in)); CK(cudaFree(o1)); CK(cudaFree(o2));
}
int main() {
    const u64 N28 = 1ull << 28;
    CK(cudaSetDevice(0)); CK(cudaFree(0)); CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    void *cx, *cy;
    CK(cudaMalloc(&cx, N28 * 4)); CK(cudaMalloc(&cy, N28 * 4)); CK(cudaMemset(cx, 1, N28 * 4));
    gpuk_ctx* ctx; TRY(gpuk_ctx_create(NULL, &ctx));
    gpuk_stream_desc sd = {}; sd.wrap = (void*)st; gpuk_stream gs; TRY(gpuk_stream_create(ctx, &sd, &gs));
    for (int S = 2; S <= 3; S++) {
        const size_t smem = S * SBI * 4 + 128;
        if (S == 2) CK(cudaFuncSetAttribute(persist<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        if (S == 3) CK(cudaFuncSetAttribute(persist<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    run_size(ctx, gs, 4096, sms, cx, cy, 2);
    run_size(ctx, gs, 8192, sms, cx, cy, 1);
    run_size(ctx, gs, 4000, sms, cx, cy, 1);
    CK(cudaGetLastError());
    return 0;
}
