// bench/bench_cub.cu - the reference points for bench/bench_kernels: CUB's histogram, sum, scan,
// select and radix sort on the same sizes and GPU, with its own device copy for the ratio. Built by
// tests/gpu-check with nvcc (never by users, never committed as a binary). Results also go to
// build/bench-csv/cub.csv (bench_csv.h).
//   nvcc -O3 -std=c++17 -arch=native bench_cub.cu -o bench_cub
#include <cub/cub.cuh>
#include "bench_csv.h"
#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "bench_cub: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

template <typename F> static float median_ms(F f) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> t;
    for (int i = 0; i < 2; i++) f();
    for (int i = 0; i < 11; i++) {
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[5];
}

__global__ void fill_bytes(unsigned* p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 7) * 40503u;
}

/* uniform floats in [0, 1) (24 random bits), the histogram f32 line's input */
__global__ void fill_unit_floats(float* p, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 7) * 40503u;
        h ^= h >> 15; h *= 0x2c1b3c6du; h ^= h >> 12;
        p[i] = (float)(h >> 8) * (1.0f / 16777216.0f);
    }
}

/* the sort lines' keys: splitmix64 of the index (its low 32 bits for u32 keys), and the index
   as the value, as bench_kernels makes them */
__device__ unsigned long long splitmix64(unsigned long long i) {
    unsigned long long z = i * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__global__ void fill_sort_keys(unsigned* k32, unsigned long long* k64, unsigned* vals, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned long long k = splitmix64(i);
        if (k32) k32[i] = (unsigned)k;
        if (k64) k64[i] = k;
        if (vals) vals[i] = (unsigned)i;
    }
}

/* the run-length encoding line's input: runs of whole groups of 4 elements, each group 0 or 1 by
   splitmix64 of its index (runs of 8 elements on average), as bench_kernels makes it */
__global__ void fill_runs(int* p, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = (int)(splitmix64(i / 4) & 1u);
}

/* CUB's DeviceRunLengthEncode::Encode on bench_kernels' run_length_encode line; its lengths are
   4-byte ints where gpuk's are 8 bytes, so the line compares times, not bytes */
static int rle_line() {
    const size_t n = (size_t)1 << 28;
    int *in, *values, *lengths, *runs;
    void* tmp = nullptr;
    size_t tb = 0;
    CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&values, n)); CK(cudaMalloc(&lengths, n));
    CK(cudaMalloc(&runs, sizeof(int)));
    fill_runs<<<1024, 256>>>(in, n);
    cub::DeviceRunLengthEncode::Encode(nullptr, tb, in, values, lengths, runs, (int)n);
    CK(cudaMalloc(&tmp, tb));
    const float ms = median_ms([&] {
        size_t s = tb;
        cub::DeviceRunLengthEncode::Encode(tmp, s, in, values, lengths, runs, (int)n);
    });
    int count = 0;
    CK(cudaMemcpy(&count, runs, sizeof count, cudaMemcpyDeviceToHost));
    CK(cudaGetLastError());
    std::printf("cub DeviceRunLengthEncode::Encode i32 n=2^28 %9.3f ms, %d runs (gpuk's goal: %.3f "
                "ms)\n", ms, count, ms / 0.9);
    bench_csv_row("cub DeviceRunLengthEncode::Encode i32", "2^28", ms, 4.0 * n / ms / 1e6,
                  "GB/s read", BENCH_CSV_NONE, BENCH_CSV_NONE);
    CK(cudaFree(in)); CK(cudaFree(values)); CK(cudaFree(lengths)); CK(cudaFree(runs));
    CK(cudaFree(tmp));
    return 0;
}

/* CUB's radix sorts on bench_kernels' sort lines; each line prints the time gpuk's line must
   meet */
static int sort_lines() {
    const size_t n = (size_t)1 << 28;
    unsigned *k, *ko, *v, *vo;
    unsigned long long *k64, *k64o;
    CK(cudaMalloc(&k, n * 4)); CK(cudaMalloc(&ko, n * 4));
    CK(cudaMalloc(&v, n * 4)); CK(cudaMalloc(&vo, n * 4));
    fill_sort_keys<<<1024, 256>>>(k, nullptr, v, n);
    CK(cudaDeviceSynchronize());
    size_t t1 = 0, t2 = 0, t3 = 0;
    cub::DeviceRadixSort::SortKeys(nullptr, t1, k, ko, (int)n);
    cub::DeviceRadixSort::SortPairs(nullptr, t2, k, ko, v, vo, (int)n);
    cub::DeviceRadixSort::SortKeys(nullptr, t3, (unsigned long long*)k, (unsigned long long*)ko,
                                   (int)(n / 2));
    void* tmp;
    size_t tb = std::max(t1, std::max(t2, t3));
    CK(cudaMalloc(&tmp, tb));
    using cub::DeviceRadixSort;
    float keys = median_ms([&] { size_t s = tb; DeviceRadixSort::SortKeys(tmp, s, k, ko, (int)n); });
    float pairs = median_ms([&] {
        size_t s = tb;
        DeviceRadixSort::SortPairs(tmp, s, k, ko, v, vo, (int)n);
    });
    float small = median_ms([&] { size_t s = tb; DeviceRadixSort::SortKeys(tmp, s, k, ko, 1 << 16); });
    CK(cudaFree(v)); CK(cudaFree(vo));
    k64 = (unsigned long long*)k; k64o = (unsigned long long*)ko;
    fill_sort_keys<<<1024, 256>>>(nullptr, k64, nullptr, n / 2);
    CK(cudaDeviceSynchronize());
    float keys64 = median_ms([&] {
        size_t s = tb;
        DeviceRadixSort::SortKeys(tmp, s, k64, k64o, (int)(n / 2));
    });
    CK(cudaGetLastError());
    std::printf("cub DeviceRadixSort::SortKeys u32    n=2^28 %9.3f ms %8.3f Gkeys/s "
                "(gpuk's goal: <= %.3f ms)\n",
                keys, n / keys / 1e6, keys / 1.0);
    std::printf("cub DeviceRadixSort::SortPairs u32   n=2^28 %9.3f ms %8.3f Gkeys/s "
                "(gpuk's goal: <= %.3f ms)\n",
                pairs, n / pairs / 1e6, pairs / 0.9);
    std::printf("cub DeviceRadixSort::SortKeys u32    n=2^16 %9.3f ms %8.3f Gkeys/s "
                "(gpuk's goal: <= %.3f ms)\n",
                small, 65536 / small / 1e6, small * 1.5);
    std::printf("cub DeviceRadixSort::SortKeys u64    n=2^27 %9.3f ms %8.3f Gkeys/s "
                "(gpuk's goal: <= %.3f ms)\n",
                keys64, n / 2 / keys64 / 1e6, keys64 / 0.9);
    bench_csv_row("cub DeviceRadixSort::SortKeys u32", "2^28", keys, n / keys / 1e6, "Gkeys/s",
                  BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceRadixSort::SortPairs u32", "2^28", pairs, n / pairs / 1e6, "Gkeys/s",
                  BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceRadixSort::SortKeys u32", "2^16", small, 65536 / small / 1e6, "Gkeys/s",
                  BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceRadixSort::SortKeys u64", "2^27", keys64, n / 2 / keys64 / 1e6, "Gkeys/s",
                  BENCH_CSV_NONE, BENCH_CSV_NONE);
    CK(cudaFree(k)); CK(cudaFree(ko)); CK(cudaFree(tmp));
    return 0;
}
/* DeviceSelect::If's test, the select_if_f32 line's: x < 0.5 */
struct below_half {
    __device__ bool operator()(float v) const { return v < 0.5f; }
};

int main() {
    const size_t n = (size_t)1 << 28;
    float *x, *y, *out;
    int *xi, *yi;
    unsigned char* bytes;
    float* unit;
    int* counts;
    int* num_selected;
    CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&out, 64));
    CK(cudaMalloc(&bytes, n)); CK(cudaMalloc(&counts, 257 * 4)); CK(cudaMalloc(&unit, n * 4));
    CK(cudaMalloc(&num_selected, sizeof(int)));
    xi = (int*)x; yi = (int*)y;
    CK(cudaMemset(x, 0, n * 4));
    fill_bytes<<<1024, 256>>>((unsigned*)bytes, n / 4);
    fill_unit_floats<<<1024, 256>>>(unit, n);
    CK(cudaDeviceSynchronize());
    size_t t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5 = 0;
    cub::DeviceReduce::Sum(nullptr, t1, x, out, (int)n);
    cub::DeviceScan::InclusiveSum(nullptr, t2, xi, yi, (int)n);
    cub::DeviceHistogram::HistogramEven(nullptr, t3, bytes, counts, 257, 0, 256, (int)n);
    cub::DeviceHistogram::HistogramEven(nullptr, t4, unit, counts, 257, 0.0f, 1.0f, (int)n);
    cub::DeviceSelect::If(nullptr, t5, unit, y, num_selected, (int)n, below_half());
    void* tmp;
    size_t tb = std::max(std::max(std::max(t1, t4), std::max(t2, t3)), t5);
    CK(cudaMalloc(&tmp, tb));
    float copy = median_ms([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); });
    double copy_gbs = 8.0 * n / copy / 1e6;
    float sum = median_ms([&] { size_t s = tb; cub::DeviceReduce::Sum(tmp, s, x, out, (int)n); });
    float scan = median_ms([&] { size_t s = tb; cub::DeviceScan::InclusiveSum(tmp, s, xi, yi, (int)n); });
    float hist = median_ms([&] { size_t s = tb; cub::DeviceHistogram::HistogramEven(tmp, s, bytes, counts, 257, 0, 256, (int)n); });
    float hist_f32 = median_ms([&] {
        size_t s = tb;
        cub::DeviceHistogram::HistogramEven(tmp, s, unit, counts, 257, 0.0f, 1.0f, (int)n);
    });
    float select = median_ms([&] {
        size_t s = tb;
        cub::DeviceSelect::If(tmp, s, unit, y, num_selected, (int)n, below_half());
    });
    int kept = 0;
    CK(cudaMemcpy(&kept, num_selected, sizeof kept, cudaMemcpyDeviceToHost));
    const double select_gbs = (4.0 * n + 4.0 * kept) / select / 1e6; /* read n, write kept */
    CK(cudaGetLastError());
    std::printf("== CUB %d.%d.%d reference\n", CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    std::printf("cub device copy                    n=2^28 %8.1f GB/s read+write\n", copy_gbs);
    std::printf("cub DeviceReduce::Sum f32          n=2^28 %9.3f ms ratio %.3f (read)\n", sum, 4.0 * n / sum / 1e6 / copy_gbs);
    std::printf("cub DeviceScan::InclusiveSum i32   n=2^28 %9.3f ms ratio %.3f (read+write)\n", scan, 8.0 * n / scan / 1e6 / copy_gbs);
    std::printf("cub DeviceHistogram::HistogramEven u8 256 bins n=2^28 %9.3f ms %8.1f GB/s read "
                "(gpuk's goal: < %.3f ms)\n", hist, 1.0 * n / hist / 1e6, hist);
    std::printf("cub DeviceHistogram::HistogramEven f32 256 bins n=2^28 %9.3f ms %8.1f GB/s read "
                "(gpuk's goal: %.3f ms)\n", hist_f32, 4.0 * n / hist_f32 / 1e6, hist_f32 / 1.3);
    std::printf("cub DeviceSelect::If f32 50 %% n=2^28 %9.3f ms %8.1f GB/s ratio %.3f (read+write, "
                "%.1f %% kept; gpuk's goal: %.3f ms)\n", select, select_gbs, select_gbs / copy_gbs,
                100.0 * kept / n, select / 0.9);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    bench_csv_open("cub", prop.name);
    bench_csv_row("cub device copy", "2^28", copy, copy_gbs, "GB/s read+write", BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceReduce::Sum f32", "2^28", sum, 4.0 * n / sum / 1e6, "GB/s read", 4.0 * n / sum / 1e6 / copy_gbs,
                  BENCH_CSV_NONE);
    bench_csv_row("cub DeviceScan::InclusiveSum i32", "2^28", scan, 8.0 * n / scan / 1e6, "GB/s read+write",
                  8.0 * n / scan / 1e6 / copy_gbs, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceHistogram::HistogramEven u8 256 bins", "2^28", hist, 1.0 * n / hist / 1e6, "GB/s read",
                  BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceHistogram::HistogramEven f32 256 bins", "2^28", hist_f32,
                  4.0 * n / hist_f32 / 1e6, "GB/s read", BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_row("cub DeviceSelect::If f32 50 %", "2^28", select, select_gbs, "GB/s read+write",
                  select_gbs / copy_gbs, BENCH_CSV_NONE);
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(bytes)); CK(cudaFree(unit)); CK(cudaFree(tmp));
    if (rle_line() || sort_lines()) return 1;
    bench_csv_close();
    return 0;
}
