// bench/sort_pairs_prototype.cu - a second form of the radix sort's pass for 4-byte keys with
// values, timed beside gpuk's two forms and CUB's SortPairs in one program. gpuk's pairs rank
// each key and its value together, so the tile in shared memory holds both; this form ranks
// and writes out the keys alone, then loads the values and moves each through the same tile
// to its key's place (CUB's order of work). The tile holding keys alone leaves room for more
// keys a thread in 48 KiB of static shared memory beside the digit masks. Every form runs the
// same host sequence (the sort's clear, gpuk's histogram phase, a launch a pass), so only the
// passes differ; every output is checked against CUB's and, at the smaller sizes, a stable
// sort on the CPU. Nothing builds it:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. bench/sort_pairs_prototype.cu \
//        -o build/sort_pairs_prototype && ./build/sort_pairs_prototype [log2 n, default 28]
#include "gpuk_kernels.cuh"
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

/* The shared memory of this form at N keys a thread: the tile (keys, then values), the warps'
   digit counts and masks, the digits' output offsets. sort_count, sort_starts and sort_place
   take it as sort_smem<K, 100 + N>. */
#define AFTER_SMEM(N)                                                                        \
    template <typename K> struct sort_smem<K, 100 + N> {                                     \
        enum { TILE = GPUK_BLOCK * N };                                                      \
        u32 keys[TILE];                                                                      \
        u32 warp_counts[GPUK_WARPS][SORT_RADIX];                                             \
        u32 match[GPUK_WARPS][SORT_RADIX];                                                   \
        u64 offset[SORT_RADIX];                                                              \
        u64 warp_sums[GPUK_WARPS];                                                           \
        u64 tile;                                                                            \
    };
AFTER_SMEM(16)
AFTER_SMEM(20)
AFTER_SMEM(24)
AFTER_SMEM(26)
AFTER_SMEM(28)

/* The tile's values, striped as its keys were loaded (each key's input position in index mode) */
template <int ITEMS>
GPUK_DEV void after_values(u32 (&val)[ITEMS], const u32* vin, u64 base, u32 valid, u32 mode) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const u32 e = (warp * ITEMS + k) * 32 + lane;
        val[k] = (mode & SORT_INDEX) ? (u32)(base + e) : e < valid ? vin[base + e] : 0u;
    }
}

/* One pass (pass 0 ..; the histogram phase is gpuk's own kernel's), as sort_run's but the
   values moved after the keys. EARLY: the values' loads issued before the keys' stores (else
   after them, as CUB does). */
template <typename K, int ITEMS, bool EARLY>
GPUK_DEV void after_pass(K* out, const K* in, u32* vout, const u32* vin, u64 n, u64* scratch,
                         u32 pass, u32 begin_bit, u32 end_bit, u32 mode) {
    enum { P = 100 + ITEMS, TILE = GPUK_BLOCK * ITEMS, R = (ITEMS + 1) / 2, D = (ITEMS + 3) / 4 };
    __shared__ sort_smem<K, P> s;
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
    const u32 flip = (mode & SORT_DESCENDING) ? ~0u : 0u;
    if (t == 0) s.tile = atomicAdd((u32*)(scratch + 8 * SORT_RADIX) + pass, 1u);
    __syncthreads();
    const u64 index = s.tile, base = index * TILE;
    const u32 valid = (u32)(n - base < TILE ? n - base : TILE);
    u32 raw[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const u32 e = (warp * ITEMS + k) * 32 + lane;
        raw[k] = e < valid ? sort_raw(in[base + e]) : 0u;
    }
    const u32 shift = begin_bit + 8 * pass;
    const u32 width = end_bit - shift < 8 ? end_bit - shift : 8;
    const u64 tag = (u64)(pass + 1) << 60;
    volatile u64* status = (volatile u64*)(scratch + SORT_HEAD_WORDS);
    const u32 count = sort_count<K, P, ITEMS, u32>(s, raw, flip, shift, width, valid);
    status[index * SORT_RADIX + t] = tag | (index == 0 ? SORT_INCL : 0) | count;
    u64 digit_start;
    const u32 tile_start = sort_starts(s, count, scratch[pass * SORT_RADIX + t], &digit_start);
    u32 rank[R]; /* each item's place in the tile, two 16-bit places a register */
#pragma unroll
    for (int r = 0; r < R; r++) rank[r] = 0;
    sort_place<K, P, ITEMS, u32>(s, raw, flip, shift, width, valid, tile_start,
                                 [&](int k, u32 at) { rank[k / 2] |= at << (16 * (k & 1)); });
    const u64 before = sort_look_back(status, index, pass, count);
    s.offset[t] = digit_start + before - tile_start;
    __syncthreads();
    u32 val[ITEMS];
    if (EARLY) after_values(val, vin, base, valid, mode);
    u32 dig[D]; /* the digit of each of this thread's places, four a register */
#pragma unroll
    for (int i = 0; i < D; i++) dig[i] = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const u32 e = k * GPUK_BLOCK + t;
        if (e < valid) {
            const u32 r = s.keys[e];
            const u32 d = sort_digit(sort_ordered<K>(r) ^ flip, shift, width);
            dig[k / 4] |= d << (8 * (k % 4));
            out[s.offset[d] + e] = sort_key<K>(r);
        }
    }
    if (!EARLY) after_values(val, vin, base, valid, mode);
    __syncthreads(); /* every key read out of the tile */
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        if ((warp * ITEMS + k) * 32 + lane < valid)
            s.keys[(rank[k / 2] >> (16 * (k & 1))) & 0xffffu] = val[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const u32 e = k * GPUK_BLOCK + t;
        if (e < valid) vout[s.offset[(dig[k / 4] >> (8 * (k % 4))) & 0xffu] + e] = s.keys[e];
    }
}

template <typename K, int ITEMS, int BLOCKS, bool EARLY>
__global__ void __launch_bounds__(GPUK_BLOCK, BLOCKS)
after_kernel(K* out, const K* in, u32* vout, const u32* vin, u64 n, u64* scratch, u32 pass,
             u32 begin_bit, u32 end_bit, u32 mode) {
    after_pass<K, ITEMS, EARLY>(out, in, vout, vin, n, scratch, pass, begin_bit, end_bit, mode);
}

typedef void (*pass_fn)(u32*, const u32*, u32*, const u32*, u64, u64*, u32, u32, u32, u32);
struct form {
    const char* name;
    pass_fn pass;
    int items;    /* keys a thread: the tile is 256 times this */
    int dynamic;  /* bytes of dynamic shared memory (gpuk's sm_90 form) */
};
static const form forms[] = {
    { "gpuk ballots, 16 keys a thread (the baseline)", gpuk_sort_pairs_u32, SORT_ITEMS_4, 0 },
    { "gpuk masks, 20 keys a thread (the sm_90 variant)", gpuk_sort_pairs_u32__sm90, SORT_ITEMS_4M,
      SORT_PAIRS_SMEM },
    { "values after, 20 keys, 3 blocks an SM", after_kernel<u32, 20, 3, false>, 20, 0 },
    { "values after, 24 keys, 3 blocks an SM", after_kernel<u32, 24, 3, false>, 24, 0 },
    { "values after, 26 keys, 3 blocks an SM", after_kernel<u32, 26, 3, false>, 26, 0 },
    { "values after, 28 keys, 3 blocks an SM", after_kernel<u32, 28, 3, false>, 28, 0 },
    { "values after, 26 keys, values loaded early", after_kernel<u32, 26, 3, true>, 26, 0 },
    { "values after, 16 keys, 4 blocks an SM", after_kernel<u32, 16, 4, false>, 16, 0 },
    { "values after, 20 keys, 4 blocks an SM", after_kernel<u32, 20, 4, false>, 20, 0 },
    { "values after, 24 keys, 4 blocks an SM", after_kernel<u32, 24, 4, false>, 24, 0 },
    { "values after, 26 keys, 4 blocks an SM", after_kernel<u32, 26, 4, false>, 26, 0 },
};
enum { FORMS = sizeof forms / sizeof forms[0] };

static int sms;
static u64* scratch;
static u32 *alt_k, *alt_v;

/* The host's sequence of gpuk__sort for n above one tile, 32-bit keys, all bits: the clear,
   the histogram (gpuk's sm_90 kernel), then four passes ending in out. */
static void run(const form& f, u32* out, const u32* in, u32* vout, const u32* vin, u64 n,
                u32 mode) {
    const u64 tile = (u64)GPUK_BLOCK * f.items, tiles = (n + tile - 1) / tile;
    u32 begin = 0, end = 32;
    CK(cudaMemsetAsync(scratch, 0, SORT_HEAD_WORDS * 8 + tiles * 2048));
    u64 hist_grid = (n + 4095) / 4096;
    if (hist_grid > (u64)sms * 4) hist_grid = (u64)sms * 4;
    gpuk_sort_pairs_u32__sm90<<<(u32)hist_grid, GPUK_BLOCK, SORT_PAIRS_SMEM>>>(
        out, in, vout, vin, n, scratch, SORT_HIST, begin, end, mode);
    const u32* sk = in;
    const u32* sv = vin;
    for (u32 pass = 0; pass < 4; pass++) {
        u32* dk = (3 - pass) % 2 == 0 ? out : alt_k;
        u32* dv = (3 - pass) % 2 == 0 ? vout : alt_v;
        f.pass<<<(u32)tiles, GPUK_BLOCK, f.dynamic>>>(dk, sk, dv, sv, n, scratch, pass, begin, end,
                                                     pass == 0 ? mode : mode & ~(u32)SORT_INDEX);
        sk = dk;
        sv = dv;
    }
    CK(cudaGetLastError());
}

__global__ void fill(u32* k, u32* v, u64 n, u32 seed, u32 key_mask) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        u32 h = (u32)i * 0x9E3779B9u ^ seed;
        h ^= h >> 16; h *= 0x85EBCA6Bu; h ^= h >> 13; h *= 0xC2B2AE35u; h ^= h >> 16;
        k[i] = h & key_mask;
        v[i] = h * 0x27D4EB2Du + (u32)i;
    }
}

/* Checks every form at n keys (mode: SORT_DESCENDING, SORT_INDEX) against a stable sort on
   the CPU; outputs poisoned first. */
static int check_cpu(u32* k, u32* v, u32* ko, u32* vo, u64 n, u32 key_mask, u32 mode) {
    std::vector<u32> hk(n), hv(n), idx(n), gk(n), gv(n);
    fill<<<256, 256>>>(k, v, n, (u32)n * 7919u + mode, key_mask);
    CK(cudaMemcpy(hk.data(), k, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hv.data(), v, n * 4, cudaMemcpyDeviceToHost));
    for (u64 i = 0; i < n; i++) idx[i] = (u32)i;
    std::stable_sort(idx.begin(), idx.end(), [&](u32 a, u32 b) {
        return (mode & SORT_DESCENDING) ? hk[a] > hk[b] : hk[a] < hk[b];
    });
    int bad = 0;
    for (int i = 0; i < FORMS; i++) {
        if ((u64)GPUK_BLOCK * forms[i].items >= n) continue; /* one tile: gpuk's single block */
        CK(cudaMemset(ko, 0xA5, n * 4));
        CK(cudaMemset(vo, 0xA5, n * 4));
        run(forms[i], ko, k, vo, v, n, mode);
        CK(cudaMemcpy(gk.data(), ko, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(gv.data(), vo, n * 4, cudaMemcpyDeviceToHost));
        u64 wrong = 0;
        for (u64 j = 0; j < n; j++)
            wrong += gk[j] != hk[idx[j]] || gv[j] != ((mode & SORT_INDEX) ? idx[j] : hv[idx[j]]);
        if (wrong) {
            std::printf("WRONG: %s, n=%llu mask=%08x mode=%u: %llu of %llu places differ\n",
                        forms[i].name, (unsigned long long)n, key_mask, mode,
                        (unsigned long long)wrong, (unsigned long long)n);
            bad = 1;
        }
    }
    return bad;
}

int main(int argc, char** argv) {
    const int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
    const u64 n = (u64)1 << log2n;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    std::printf("%s, %d SMs; 2^%d pairs of random u32 keys and values\n", prop.name, sms, log2n);
    CK(cudaFuncSetAttribute(gpuk_sort_pairs_u32__sm90, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            SORT_PAIRS_SMEM));
    for (int i = 0; i < FORMS; i++) {
        cudaFuncAttributes a;
        CK(cudaFuncGetAttributes(&a, forms[i].pass));
        std::printf("  form %d: %s: %d registers, %zu B static shared, %d B spilled\n", i,
                    forms[i].name, a.numRegs, a.sharedSizeBytes, (int)a.localSizeBytes);
    }
    u32 *k, *v, *ko, *vo, *ck, *cv;
    CK(cudaMalloc(&k, n * 4)); CK(cudaMalloc(&v, n * 4));
    CK(cudaMalloc(&ko, n * 4)); CK(cudaMalloc(&vo, n * 4));
    CK(cudaMalloc(&ck, n * 4)); CK(cudaMalloc(&cv, n * 4));
    CK(cudaMalloc(&alt_k, n * 4)); CK(cudaMalloc(&alt_v, n * 4));
    CK(cudaMalloc(&scratch, SORT_HEAD_WORDS * 8 + (n / (GPUK_BLOCK * 16) + 1) * 2048));

    /* correctness at small and odd sizes, few and many distinct keys, both orders, index */
    int bad = 0;
    const u64 sizes[] = { 4097, 6657, 26625, 1000003, (u64)1 << 20 };
    for (u64 sz : sizes) {
        if (sz > n) continue;
        bad |= check_cpu(k, v, ko, vo, sz, 0xffffffffu, 0);
        bad |= check_cpu(k, v, ko, vo, sz, 0x0000000fu, 0);
        bad |= check_cpu(k, v, ko, vo, sz, 0xffffffffu, SORT_DESCENDING);
        bad |= check_cpu(k, v, ko, vo, sz, 0x00ff00f0u, SORT_INDEX);
    }
    std::printf("CPU checks at %zu sizes up to 2^20: %s\n", sizeof sizes / sizeof sizes[0],
                bad ? "FAILED" : "every form equal to a stable sort");

    /* the large size: CUB's output is the reference */
    fill<<<1024, 256>>>(k, v, n, 12345u, 0xffffffffu);
    size_t tb = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, tb, k, ck, v, cv, (int)n);
    void* tmp;
    CK(cudaMalloc(&tmp, tb));
    auto cub_sort = [&] {
        size_t s = tb;
        CK(cub::DeviceRadixSort::SortPairs(tmp, s, k, ck, v, cv, (int)n));
    };
    cub_sort();
    CK(cudaDeviceSynchronize());
    std::vector<u32> rk(n), rv(n), gk(n), gv(n);
    CK(cudaMemcpy(rk.data(), ck, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rv.data(), cv, n * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < FORMS; i++) {
        CK(cudaMemset(ko, 0xA5, n * 4));
        CK(cudaMemset(vo, 0xA5, n * 4));
        run(forms[i], ko, k, vo, v, n, 0);
        CK(cudaMemcpy(gk.data(), ko, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(gv.data(), vo, n * 4, cudaMemcpyDeviceToHost));
        if (std::memcmp(gk.data(), rk.data(), n * 4) || std::memcmp(gv.data(), rv.data(), n * 4)) {
            std::printf("WRONG at 2^%d: %s differs from CUB's SortPairs\n", log2n, forms[i].name);
            bad = 1;
        }
    }

    /* timing: rounds taking turns, each a median of 11 after two warm-ups */
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    auto median_ms = [&](auto work) {
        std::vector<float> ms;
        for (int r = 0; r < 13; r++) {
            CK(cudaEventRecord(e0));
            work();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float x;
            CK(cudaEventElapsedTime(&x, e0, e1));
            if (r >= 2) ms.push_back(x);
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    };
    for (int round = 0; round < 3; round++) {
        const float cub_ms = median_ms(cub_sort);
        std::printf("round %d: CUB SortPairs %.3f ms\n", round + 1, cub_ms);
        for (int i = 0; i < FORMS; i++) {
            const float ms = median_ms([&] { run(forms[i], ko, k, vo, v, n, 0); });
            std::printf("  %-50s %8.3f ms  %.3f of CUB's speed\n", forms[i].name, ms, cub_ms / ms);
        }
    }
    std::printf("%s\n", bad ? "FAILED" : "all outputs right");
    return bad;
}
