// bench/stencil_residency_lab.cu - a lab, not part of gpuk (nothing builds it by default): the
// sm_90 3x3 stencil exactly as gpuk ships it (ptx/gpuk_stencil3x3_{i32,f32}__sm90.ptx, loaded
// by the driver's JIT as gpuk loads it), launched with more dynamic shared memory than its box
// needs so that fewer blocks fit on a multiprocessor, to see whether residency is what holds it
// at 0.80 of copy bandwidth at 4096^2 i32 where a lab kernel with more registers (so fewer
// blocks) ran at 0.84 (README, the stencil rows). Each row: blocks a multiprocessor (the
// driver's occupancy answer for that shared memory), the time of a launch (batches of 10
// between events, median of 21 after 3 warm-ups) and its ratio to a 1 GiB device copy counted
// as 8 bytes a cell, like bench_kernels. Every launch's output must equal, bit for bit, the
// output of the library's own launch (5312 bytes), and that one a CPU computation of the
// interior cells in the kernel's order of operations (fma in weight order; i32 rounded half
// away from zero) on random inputs; a mismatch is printed and the lab exits 1.
// First run (H100, 2026-11-25, README's stencil rows): every block fewer a multiprocessor was
// slower (i32 4096^2 0.813 at 10 blocks, 0.724 at 5), so residency does not explain the gap.
// Arguments: a folder holding both PTX files instead of ptx/ (a variant to compare, e.g. the
// shipped PTX with .minnctapersm added), and "once" to time only the library's own launch.
//   nvcc -O3 -std=c++17 -arch=native bench/stencil_residency_lab.cu \
//        -o build/stencil_residency_lab -lcuda && ./build/stencil_residency_lab   (from the repo root)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <string>
#include <algorithm>
#include <cuda.h>
#include <cuda_runtime.h>

#define CK(x) do { auto e_ = (x); if (e_) { std::printf("%s failed: %d (line %d)\n", #x, (int)e_, __LINE__); std::exit(1); } } while (0)

enum { TILE_COLS = 64, TILE_ROWS = 16, THREADS = 128, LIB_SMEM = 5312, BOUNDARY_SKIP = 1 };

static std::vector<char> slurp(const char* path) {
    std::vector<char> v;
    FILE* f = std::fopen(path, "rb");
    if (!f) return v;
    int c;
    while ((c = std::fgetc(f)) != EOF) v.push_back((char)c);
    v.push_back(0);
    std::fclose(f);
    return v;
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <typename F> static float time_batches(F launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = -3; r < 21; r++) {
        CK(cudaEventRecord(a));
        for (int k = 0; k < 10; k++) launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 0) t.push_back(ms / 10);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return median(t);
}

// the kernel's interior cell: acc = fma(w[q], x[q], acc) for q = 0..8 in row-major order
static bool cpu_matches(bool is_f32, const std::vector<int>& in_bits, const std::vector<int>& out_bits, size_t n,
                        const float* w) {
    unsigned seed = 99;
    for (int s = 0; s < 4000; s++) {
        seed = seed * 1664525u + 1013904223u;
        const size_t i = 1 + (seed >> 8) % (n - 2);
        seed = seed * 1664525u + 1013904223u;
        const size_t j = 1 + (seed >> 8) % (n - 2);
        int want;
        if (is_f32) {
            float acc = 0.0f;
            for (int q = 0; q < 9; q++) {
                float x;
                std::memcpy(&x, &in_bits[(i + q / 3 - 1) * n + j + q % 3 - 1], 4);
                acc = std::fma(w[q], x, acc);
            }
            std::memcpy(&want, &acc, 4);
        } else {
            double acc = 0.0;
            for (int q = 0; q < 9; q++) acc = std::fma((double)w[q], (double)in_bits[(i + q / 3 - 1) * n + j + q % 3 - 1], acc);
            want = (int)std::trunc(acc + std::copysign(0.5, acc));
        }
        if (out_bits[i * n + j] != want) {
            std::printf("MISMATCH %s at (%zu, %zu): got %d, the CPU %d\n", is_f32 ? "f32" : "i32", i, j, out_bits[i * n + j], want);
            return false;
        }
    }
    return true;
}

int main(int argc, char** argv) {
    // argv[1]: a folder holding the two PTX files instead of ptx/ (a variant to compare);
    // argv[2] "once": only the library's own shared memory, no sweep
    const std::string dir = argc > 1 ? argv[1] : "ptx";
    const bool once = argc > 2 && std::strcmp(argv[2], "once") == 0;
    CK(cudaFree(0));
    CUdevice dev;
    CK(cuCtxGetDevice(&dev));
    char name[256];
    CK(cuDeviceGetName(name, sizeof name, dev));
    int sms, max_smem;
    CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CK(cuDeviceGetAttribute(&max_smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));

    const size_t big = (size_t)1 << 30;
    void *s0, *d0;
    CK(cudaMalloc(&s0, big));
    CK(cudaMalloc(&d0, big));
    std::vector<float> ct;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = 0; r < 21; r++) {
        CK(cudaEventRecord(a));
        CK(cudaMemcpyAsync(d0, s0, big, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r > 0) ct.push_back(ms);
    }
    const double copy = 2.0 * big / median(ct) / 1e6; // GB/s, read + write
    CK(cudaFree(s0));
    CK(cudaFree(d0));
    std::printf("%s, %d SMs: device copy of 1 GiB %.1f GB/s (the limit every ratio divides by)\n", name, sms, copy);

    float w[9];
    double wd[9];
    for (int q = 0; q < 9; q++) { w[q] = 1.0f / 9.0f; wd[q] = (double)w[q]; }
    bool ok = true;
    for (int is_f32 = 0; is_f32 < 2; is_f32++) {
        const std::string path = dir + (is_f32 ? "/gpuk_stencil3x3_f32__sm90.ptx" : "/gpuk_stencil3x3_i32__sm90.ptx");
        const char* fname = is_f32 ? "gpuk_stencil3x3_f32__sm90" : "gpuk_stencil3x3_i32__sm90";
        std::vector<char> ptx = slurp(path.c_str());
        if (ptx.size() < 2) {
            std::printf("cannot read %s (run from the repo root)\n", path.c_str());
            return 1;
        }
        CUmodule mod;
        CUfunction f;
        CK(cuModuleLoadData(&mod, ptx.data()));
        CK(cuModuleGetFunction(&f, mod, fname));
        int regs, static_smem;
        CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
        CK(cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f)); // the mbarrier
        const int max_dynamic = max_smem - static_smem;
        CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, max_dynamic));
        for (unsigned long long n : { 4096ull, 8192ull }) {
            const size_t cells = (size_t)(n * n);
            std::vector<int> h(cells), got(cells), ref(cells);
            unsigned x = 12345u + (unsigned)n + (unsigned)is_f32;
            for (auto& v : h) {
                x = x * 1664525u + 1013904223u;
                if (is_f32) { float fv = (float)((int)(x >> 8) - (1 << 23)) / 4096.0f; std::memcpy(&v, &fv, 4); }
                else v = (int)(x >> 8) - (1 << 23);
            }
            CUdeviceptr in, out;
            CK(cuMemAlloc(&in, cells * 4));
            CK(cuMemAlloc(&out, cells * 4));
            CK(cuMemcpyHtoD(in, h.data(), cells * 4));
            alignas(64) CUtensorMap map;
            const cuuint64_t dims[2] = { n, n }, strides[1] = { n * 4 };
            const cuuint32_t box[2] = { TILE_COLS + 8, TILE_ROWS + 2 }, es[2] = { 1, 1 };
            CK(cuTensorMapEncodeTiled(&map, is_f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_INT32, 2,
                                      (void*)in, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
            unsigned long long rows = n, cols = n, ld = n;
            unsigned boundary = BOUNDARY_SKIP, use_map = 1;
            void* args[11] = { &out, &in, &rows, &cols, &ld, &ld, w, &boundary, &map, wd, &use_map };
            const unsigned gx = (unsigned)(n / TILE_COLS), gy = (unsigned)(n / TILE_ROWS);
            int last_blocks = -1;
            bool first = true;
            for (int smem = LIB_SMEM; smem <= (once ? LIB_SMEM : max_dynamic); smem += 256) {
                int blocks;
                CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, THREADS, smem));
                if (blocks == last_blocks || blocks < 3) continue; // the least shared memory for each count
                last_blocks = blocks;
                CK(cuMemsetD8(out, 0xAB, cells * 4));
                auto launch = [&] { CK(cuLaunchKernel(f, gx, gy, 1, THREADS, 1, 1, smem, 0, args, nullptr)); };
                const float ms = time_batches(launch);
                CK(cuMemcpyDtoH(got.data(), out, cells * 4));
                if (first) {
                    ref = got;
                    if (!cpu_matches(is_f32, h, got, (size_t)n, w)) ok = false;
                    first = false;
                } else if (got != ref) {
                    std::printf("MISMATCH: the output with %d bytes of shared memory differs from the library's launch\n", smem);
                    ok = false;
                }
                std::printf("%s %5llu^2  %2d regs  %6d bytes shared  %2d blocks/SM  %.4f ms  ratio %.3f%s\n", is_f32 ? "f32" : "i32",
                            n, regs, smem, blocks, ms, 8.0 * cells / ms / 1e6 / copy, smem == LIB_SMEM ? "  (gpuk's launch)" : "");
            }
            CK(cuMemFree(in));
            CK(cuMemFree(out));
        }
        CK(cuModuleUnload(mod));
    }
    std::printf(ok ? "every output equal to gpuk's launch and the CPU's interior cells\n" : "FAILED\n");
    return ok ? 0 : 1;
}
