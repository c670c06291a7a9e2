// bench/bench_gemm.cu - gpuk_gemm_f32/f64/tf32 against cuBLAS SGEMM/DGEMM on the same GPU, the
// same memory and the same stream: 4096^3, 1024x2048 times 2048x512 (m=1024 n=512 k=2048),
// 1000^3, TF32 against cuBLAS in TF32 mode (and at 4096^3 with B given transposed, no goal:
// the kernel without B's transpose), the portable sm_52 baseline variant forced on this GPU,
// and 512 products of 128^3 (strided batched, both). Each figure is the median of 11 runs after
// 2 warm-ups, timed by cudaEvents around the call on that stream, cuBLAS's and gpuk's runs taking
// turns; FLOPs = 2 m n k a product. Arguments: label prefixes of the rows to run (default all).
// First it checks once, at 1000^3, that both give the same C within tolerance (so it cannot
// time a wrong kernel), and exits non-zero when they do not.
// gpuk's side is in this file (gpuk.h compiled as C++ by nvcc's host compiler) rather than in
// bench/bench_kernels.c so that one program prints both figures and their ratio on one line,
// both sides work on the very same buffers (gpuk wraps the cudaMalloc pointers; gpuk uses the
// device's primary context, which the runtime uses too) and one cudaEvent pair times either.
// Built by tests/gpu-check with nvcc (never by users, never committed as a binary):
//   nvcc -O3 -std=c++17 -arch=native -I. bench/bench_gemm.cu -o build/bench_gemm -lcublas -ldl
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "bench_csv.h" // results also to build/bench-csv/gemm.csv
#include <cublas_v2.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "bench_gemm: %s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    std::fprintf(stderr, "bench_gemm: %s: cuBLAS status %d\n", #x, (int)s_); std::exit(1); } } while (0)
#define TRY(x) do { gpuk_result r_ = (x); if (r_ != GPUK_OK) { \
    std::fprintf(stderr, "bench_gemm: %s\n", gpuk_last_error()); std::exit(1); } } while (0)

static cudaStream_t st;
static cublasHandle_t blas;
// ctx[0] runs the variants the GPU picks; ctx[1] holds them to the portable sm_52 baseline
// (gpuk_ctx_desc.kernels_max_sm = 52), the one older GPUs run; ctx[2] to the variants an sm_80
// GPU (A100) runs (kernels_max_sm = 80), measured here as a stand-in
enum { CTXS = 3 };
static gpuk_ctx* ctx[CTXS];
static gpuk_stream gst[CTXS]; // st, wrapped: gpuk's calls and cuBLAS's queue on the same stream
// gpuk_gemm_f32/f64 and gpuk_gemm_tf32 on ctx[0]; EXACT on ctx[1]; EXACT and TF32 on ctx[2]
// TF32_BT: TF32 with B given transposed (n x k, trans_b), which the sm_90a TMA path reads as it
// is, with no transpose into the workspace first: the kernel alone, beside the TF32 row
enum mode { EXACT, TF32, BASELINE, SM80, SM80_TF32, TF32_BT };
static int ctx_of(mode md) { return md == BASELINE ? 1 : md == SM80 || md == SM80_TF32 ? 2 : 0; }
static bool is_tf32(mode md) { return md == TF32 || md == SM80_TF32 || md == TF32_BT; }

// The medians of 11 timed runs of f (cuBLAS) and of g (gpuk) after 2 warm-ups of each, the two
// taking turns (each round times one of each, which first alternating) so that a change of clock
// or temperature during a row falls on both sides alike: timed one after the other, the FP64
// rows' ratio moved between 0.64 and 0.73 from run to run.
template <typename F, typename G> static void median_pair(F f, G g, float* tf, float* tg) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t[2];
    for (int i = 0; i < 2; i++) { f(); g(); }
    for (int i = 0; i < 22; i++) {
        const int side = (i ^ (i >> 1)) & 1; // f g g f f g g f ...
        CK(cudaEventRecord(a, st));
        if (side) g(); else f();
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t[side].push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    for (auto& v : t) std::sort(v.begin(), v.end());
    *tf = t[0][5];
    *tg = t[1][5];
}
// the rows to run: every row, or those whose label starts with one of the program's arguments
// (bench_gemm dgemm: the FP64 rows alone)
static int nwant;
static char** want;
static bool wanted(const char* lab) {
    for (int i = 0; i < nwant; i++) if (!std::strncmp(lab, want[i], std::strlen(want[i]))) return true;
    return nwant == 0;
}

// uniform in [-1, 1) from a hash of the index (fresh per seed), or |x| of another array
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

template <typename T> struct mats {
    T *a, *b, *c, *c2;
    gpuk_buffer ga[CTXS], gb[CTXS], gc[CTXS]; // wrapped in each ctx
};
static void wrap(void* p, size_t bytes, gpuk_buffer* out) {
    gpuk_buffer_desc d;
    std::memset(&d, 0, sizeof d);
    d.wrap = (gpuk_devptr)(uintptr_t)p;
    d.bytes = bytes;
    for (int i = 0; i < CTXS; i++) TRY(gpuk_buffer_create(ctx[i], &d, &out[i]));
}
// A (m x k), B (k x n), C (m x n) for `count` products side by side, A and B random
template <typename T> static mats<T> alloc(size_t m, size_t n, size_t k, size_t count) {
    mats<T> x;
    CK(cudaMalloc(&x.a, m * k * count * sizeof(T)));
    CK(cudaMalloc(&x.b, k * n * count * sizeof(T)));
    CK(cudaMalloc(&x.c, m * n * count * sizeof(T)));
    CK(cudaMalloc(&x.c2, m * n * count * sizeof(T)));
    fill_uniform<<<1024, 256, 0, st>>>(x.a, m * k * count, (unsigned long long)std::rand() << 20);
    fill_uniform<<<1024, 256, 0, st>>>(x.b, k * n * count, (unsigned long long)std::rand() << 21);
    CK(cudaMemsetAsync(x.c, 0, m * n * count * sizeof(T), st));
    CK(cudaGetLastError());
    wrap(x.a, m * k * count * sizeof(T), x.ga);
    wrap(x.b, k * n * count * sizeof(T), x.gb);
    wrap(x.c, m * n * count * sizeof(T), x.gc);
    return x;
}
template <typename T> static void release(mats<T>& x) {
    for (int i = 0; i < CTXS; i++) {
        TRY(gpuk_buffer_destroy(ctx[i], x.ga[i]));
        TRY(gpuk_buffer_destroy(ctx[i], x.gb[i]));
        TRY(gpuk_buffer_destroy(ctx[i], x.gc[i]));
    }
    CK(cudaFree(x.a)); CK(cudaFree(x.b)); CK(cudaFree(x.c)); CK(cudaFree(x.c2));
}

// gpuk works on row-major matrices, cuBLAS on column-major ones. A row-major m x n matrix is
// the column-major n x m matrix of its transpose, so row-major C = A B is column-major
// C^T = B^T A^T: cuBLAS gets (n, m, k), B first with ld n, A second with ld k, C with ld n,
// and both libraries then compute the same product in the same memory layout.
// With bt, B is stored n x k (row-major), column-major k x n: cuBLAS's op(B) is then its transpose.
static void cublas_gemm(float* c, const float* a, const float* b, size_t m, size_t n, size_t k, bool bt) {
    const float one = 1, zero = 0;
    CB(cublasSgemm(blas, bt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, (int)(bt ? k : n),
                   a, (int)k, &zero, c, (int)n));
}
static void cublas_gemm(double* c, const double* a, const double* b, size_t m, size_t n, size_t k, bool bt) {
    const double one = 1, zero = 0;
    CB(cublasDgemm(blas, bt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, (int)(bt ? k : n),
                   a, (int)k, &zero, c, (int)n));
}
// cuBLAS's TF32 mode for the TF32 rows only (CUBLAS_DEFAULT_MATH never uses TF32 for SGEMM)
static void cublas_math(mode md) { CB(cublasSetMathMode(blas, is_tf32(md) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH)); }
static gpuk_result gpuk_gemm(float, mode md, gpuk_array2d c, gpuk_array2d a, gpuk_array2d b) {
    const int i = ctx_of(md);
    if (is_tf32(md)) return gpuk_gemm_tf32(ctx[i], gst[i], c, 1.0f, a, 0, b, md == TF32_BT ? GPUK_OP_T : 0, 0.0f);
    return gpuk_gemm_f32(ctx[i], gst[i], c, 1.0f, a, 0, b, 0, 0.0f);
}
static gpuk_result gpuk_gemm(double, mode md, gpuk_array2d c, gpuk_array2d a, gpuk_array2d b) {
    const int i = ctx_of(md);
    return gpuk_gemm_f64(ctx[i], gst[i], c, 1.0, a, 0, b, 0, 0.0);
}
// B as stored: k x n, or n x k where the call takes it transposed
static gpuk_array2d b_view(gpuk_buffer b, mode md, size_t k, size_t n) {
    return md == TF32_BT ? gpuk_at2d(b, 0, n, k, 0) : gpuk_at2d(b, 0, k, n, 0);
}
static const char* label(size_t elem, mode md) {
    if (md == TF32) return "tf32 ";
    if (md == TF32_BT) return "tf32 B^T";
    if (md == SM80_TF32) return "tf32 sm_80 path";
    if (md == BASELINE) return elem == 4 ? "sgemm sm_52 baseline" : "dgemm sm_52 baseline";
    if (md == SM80) return elem == 4 ? "sgemm sm_80 path" : "dgemm sm_80 path";
    return elem == 4 ? "sgemm" : "dgemm";
}

// C from gpuk and from cuBLAS (FP32/FP64) on the same A and B must agree within 2 (k + 2) eps
// sum_l |a b| (each errs by at most about k eps/2 of that sum; tests/gpu/gpu_gemm.c states the
// same bound against a double reference), plus 1.125 * 2^-9 of that sum for TF32 (inputs cut
// to 10-bit mantissas: gpuk's sm_90a variant truncates, 2^-9 a product, and cuBLAS may round).
// The bound itself is |A| |B| from cuBLAS.
template <typename T> static int verify(mode md, size_t m, size_t n, size_t k) {
    mats<T> x = alloc<T>(m, n, k, 1);
    T *absa, *absb, *bound;
    CK(cudaMalloc(&absa, m * k * sizeof(T)));
    CK(cudaMalloc(&absb, k * n * sizeof(T)));
    CK(cudaMalloc(&bound, m * n * sizeof(T)));
    abs_of<<<1024, 256, 0, st>>>(absa, x.a, m * k);
    abs_of<<<1024, 256, 0, st>>>(absb, x.b, k * n);
    cublas_gemm(bound, absa, absb, m, n, k, md == TF32_BT);
    cublas_gemm(x.c2, x.a, x.b, m, n, k, md == TF32_BT);
    CK(cudaMemsetAsync(x.c, 0xFF, m * n * sizeof(T), st)); // NaN: a C gpuk left unwritten fails
    const int ci = ctx_of(md);
    TRY(gpuk_gemm(T(), md, gpuk_at2d(x.gc[ci], 0, m, n, 0), gpuk_at2d(x.ga[ci], 0, m, k, 0), b_view(x.gb[ci], md, k, n)));
    CK(cudaStreamSynchronize(st));
    std::vector<T> g(m * n), r(m * n), bd(m * n);
    CK(cudaMemcpy(g.data(), x.c, m * n * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), x.c2, m * n * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(bd.data(), bound, m * n * sizeof(T), cudaMemcpyDeviceToHost));
    const double eps = sizeof(T) == 4 ? 1.0 / (1 << 23) : 1.0 / (1ull << 52);
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < m * n; i++) {
        double tol = (2.0 * (double)(k + 2) * eps + (is_tf32(md) ? 0x1.2p-9 : 0)) * (double)bd[i];
        double d = std::fabs((double)g[i] - (double)r[i]);
        if (!(d <= tol)) {
            if (bad++ < 5)
                std::fprintf(stderr, "bench_gemm: %s %zux%zux%zu C[%zu][%zu]: gpuk %.17g, cuBLAS %.17g (tolerance %.3g)\n",
                             sizeof(T) == 4 ? "f32" : "f64", m, n, k, i / n, i % n, (double)g[i], (double)r[i], tol);
        } else if (tol > 0) worst = std::max(worst, d / tol);
    }
    std::printf("check %s %zux%zux%zu: gpuk and cuBLAS agree: %s (largest difference %.3f of the tolerance)\n",
                label(sizeof(T), md), m, n, k, bad ? "NO" : "yes", worst);
    CK(cudaFree(absa)); CK(cudaFree(absb)); CK(cudaFree(bound));
    release(x);
    return bad == 0;
}

// each row's goal (the same on every GPU; the sm_80 paths held to the picked variants' goals),
// NaN where it sets none, with *why the reason printed instead. On compute capability 9.0 and
// newer, cuBLAS runs TF32 on wgmma and FP64 on Hopper's own f64 mma shapes, which no sm_80 code
// can issue: there the sm_80 paths' TF32 and FP64 rows say how an A100 binary fares on this
// GPU, and their goal holds on sm_80 GPUs only. The FP64 baseline runs on the CUDA cores
// against cuBLAS's FP64 tensor cores, which GPUs before sm_80 lack.
static int cc_major; // the device's
static double goal_of(const char* lab, const char* name, const char** why) {
    static const struct { const char *lab, *name; double goal; } g[] = {
        { "sgemm", "4096^3", 0.90 }, { "sgemm", "m=1024 n=512 k=2048", 0.90 }, { "sgemm", "1000^3", 0.80 },
        { "tf32 ", "4096^3", 0.85 }, { "tf32 ", "m=1024 n=512 k=2048", 0.85 },
        { "dgemm", "4096^3", 0.85 }, { "dgemm", "m=1024 n=512 k=2048", 0.85 },
        { "dgemm", "1000^3", 0.70 },
        { "sgemm sm_80 path", "4096^3", 0.90 }, { "tf32 sm_80 path", "4096^3", 0.85 },
        { "dgemm sm_80 path", "4096^3", 0.85 }, { "sgemm sm_52 baseline", "4096^3", 0.60 },
        { "sgemm", "512 x 128^3 batched", 0.85 } };
    *why = "no goal";
    if (cc_major >= 9 &&
        (!std::strcmp(lab, "tf32 sm_80 path") || !std::strcmp(lab, "dgemm sm_80 path"))) {
        *why = "no goal on this GPU: cuBLAS uses instructions sm_80 code cannot";
        return BENCH_CSV_NONE;
    }
    if (!std::strcmp(lab, "tf32 B^T")) {
        *why = "no goal: the kernel alone, for the tf32 row above";
        return BENCH_CSV_NONE;
    }
    if (!std::strcmp(lab, "dgemm sm_52 baseline")) {
        *why = "no goal: CUDA cores against cuBLAS's FP64 tensor cores";
        return BENCH_CSV_NONE;
    }
    for (const auto& e : g) if (!std::strcmp(e.lab, lab) && !std::strcmp(e.name, name)) return e.goal;
    return BENCH_CSV_NONE;
}
// "goal >= G" (and BELOW GOAL where the ratio falls short) or the reason there is none
static void judge(char* out, size_t size, double ratio, double goal, const char* why) {
    if (goal == goal)
        std::snprintf(out, size, "goal >= %.2f%s", goal, ratio >= goal ? "" : "  BELOW GOAL");
    else
        std::snprintf(out, size, "%s", why);
}
// The ratio is cuBLAS time / gpuk time, both medians; the baseline rows divide by cuBLAS in
// FP32/FP64, the TF32 rows by cuBLAS in TF32.
template <typename T> static void bench(mode md, const char* name, size_t m, size_t n, size_t k) {
    if (!wanted(label(sizeof(T), md))) return;
    mats<T> x = alloc<T>(m, n, k, 1);
    const int ci = ctx_of(md);
    gpuk_array2d c = gpuk_at2d(x.gc[ci], 0, m, n, 0), a = gpuk_at2d(x.ga[ci], 0, m, k, 0), b = b_view(x.gb[ci], md, k, n);
    float tc, tg;
    median_pair([&] { cublas_math(md); cublas_gemm(x.c, x.a, x.b, m, n, k, md == TF32_BT); cublas_math(EXACT); },
                [&] { TRY(gpuk_gemm(T(), md, c, a, b)); }, &tc, &tg);
    double flop = 2.0 * (double)m * (double)n * (double)k;
    const char* why;
    const double goal = goal_of(label(sizeof(T), md), name, &why);
    char judged[96];
    judge(judged, sizeof judged, tc / tg, goal, why);
    std::printf("%-20s %-20s cublas %6.1f TFLOP/s  gpuk %6.1f TFLOP/s  ratio %.2f   (%.3f ms, %.3f ms; %s)\n",
                label(sizeof(T), md), name, flop / tc / 1e9, flop / tg / 1e9, tc / tg, tc, tg, judged);
    bench_csv_row(label(sizeof(T), md), name, tg, flop / tg / 1e9, "TFLOP/s", tc / tg, goal);
    release(x);
}

static void bench_batched(size_t count, size_t s) {
    if (!wanted("sgemm batched")) return;
    mats<float> x = alloc<float>(s, s, s, count);
    const float one = 1, zero = 0;
    const long long stride = (long long)(s * s);
    float tc, tg;
    median_pair([&] {
        CB(cublasSgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)s, (int)s, (int)s, &one, x.b, (int)s, stride,
                                     x.a, (int)s, stride, &zero, x.c, (int)s, stride, (int)count));
    }, [&] {
        TRY(gpuk_gemm_batched_f32(ctx[0], gst[0], gpuk_at2d(x.gc[0], 0, s, s, 0), s * s, 1.0f, gpuk_at2d(x.ga[0], 0, s, s, 0),
                                  s * s, 0, gpuk_at2d(x.gb[0], 0, s, s, 0), s * s, 0, 0.0f, count));
    }, &tc, &tg);
    double flop = 2.0 * (double)s * (double)s * (double)s * (double)count;
    char name[48], judged[96];
    const char* why;
    std::snprintf(name, sizeof name, "%zu x %zu^3 batched", count, s);
    const double goal = goal_of("sgemm", name, &why);
    judge(judged, sizeof judged, tc / tg, goal, why);
    std::printf("%-20s %-20s cublas %6.1f TFLOP/s  gpuk %6.1f TFLOP/s  ratio %.2f   "
                "(%.3f ms, %.3f ms; strided batched both; %s)\n",
                "sgemm", name, flop / tc / 1e9, flop / tg / 1e9, tc / tg, tc, tg, judged);
    bench_csv_row("sgemm", name, tg, flop / tg / 1e9, "TFLOP/s", tc / tg, goal);
    release(x);
}

int main(int argc, char** argv) {
    nwant = argc - 1;
    want = argv + 1;
    // cuBLAS must compute in FP32 where gpuk does: CUBLAS_DEFAULT_MATH never uses TF32 for
    // SGEMM; no global override either way (NVIDIA_TF32_OVERRIDE=0 would also turn off the
    // TF32 mode the TF32 rows ask for)
    unsetenv("NVIDIA_TF32_OVERRIDE");
    std::srand(12345);
    CK(cudaSetDevice(0));
    CK(cudaFree(0)); // the runtime takes the primary context, which gpuk then shares
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CB(cublasCreate(&blas));
    CB(cublasSetStream(blas, st));
    CB(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    for (int i = 0; i < CTXS; i++) {
        gpuk_ctx_desc cd;
        std::memset(&cd, 0, sizeof cd);
        cd.kernels_max_sm = i == 1 ? 52 : i == 2 ? 80 : 0;
        TRY(gpuk_ctx_create(&cd, &ctx[i]));
        gpuk_stream_desc sd;
        std::memset(&sd, 0, sizeof sd);
        sd.wrap = (void*)st;
        TRY(gpuk_stream_create(ctx[i], &sd, &gst[i]));
    }
    int ver = 0;
    CB(cublasGetVersion(blas, &ver));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    cc_major = prop.major;
    std::printf("== GEMM: gpuk vs cuBLAS %d (FP32/FP64; TF32 rows against cuBLAS TF32), %s\n", ver, prop.name);
    // the variants ctx[0] runs here (compute capability 9.0: TF32 on the architecture-specific sm_90a one)
    std::printf("   gpuk variants: %s, %s, %s\n", gpuk__builtin_pick(ctx[0], GPUK__K_GEMM_F32)->name + 5,
                gpuk__builtin_pick(ctx[0], GPUK__K_GEMM_F64)->name + 5, gpuk__builtin_pick(ctx[0], GPUK__K_GEMM_TF32)->name + 5);
    bench_csv_open("gemm", prop.name);
    int ok = 1;
    for (mode md : { EXACT, TF32, TF32_BT, BASELINE, SM80, SM80_TF32 }) ok &= verify<float>(md, 1000, 1000, 1000);
    for (mode md : { EXACT, BASELINE, SM80 }) ok &= verify<double>(md, 1000, 1000, 1000);
    if (!ok) { std::printf("gpuk's GEMM disagrees with cuBLAS: not timed\n"); return 1; }
    bench<float>(EXACT, "4096^3", 4096, 4096, 4096);
    bench<float>(EXACT, "m=1024 n=512 k=2048", 1024, 512, 2048);
    bench<float>(EXACT, "1000^3", 1000, 1000, 1000);
    bench<float>(TF32, "4096^3", 4096, 4096, 4096);
    bench<float>(TF32_BT, "4096^3", 4096, 4096, 4096);
    bench<float>(TF32, "m=1024 n=512 k=2048", 1024, 512, 2048);
    bench<double>(EXACT, "4096^3", 4096, 4096, 4096);
    bench<double>(EXACT, "m=1024 n=512 k=2048", 1024, 512, 2048);
    bench<double>(EXACT, "1000^3", 1000, 1000, 1000);
    bench<float>(SM80, "4096^3", 4096, 4096, 4096);
    bench<float>(SM80_TF32, "4096^3", 4096, 4096, 4096);
    bench<double>(SM80, "4096^3", 4096, 4096, 4096);
    bench<float>(BASELINE, "4096^3", 4096, 4096, 4096);
    bench<double>(BASELINE, "4096^3", 4096, 4096, 4096);
    bench_batched(512, 128);
    CK(cudaGetLastError());
    bench_csv_close();
    for (int i = 0; i < CTXS; i++) {
        TRY(gpuk_stream_destroy(ctx[i], gst[i]));
        TRY(gpuk_ctx_destroy(ctx[i]));
    }
    CB(cublasDestroy(blas));
    CK(cudaStreamDestroy(st));
    return 0;
}
