/* gpuk_kernels.cuh - the CUDA C source of gpuk's built-in kernels.

   tools/gen_ptx.py compiles this file to PTX, splits it into one module per kernel, lowers each
   module's .version/.target to the oldest the instructions allow, and writes ptx/ and the
   generated sections of gpuk.h. Users never compile this file; they get its PTX inside gpuk.h.

   Conventions, shared by every kernel and by the C wrappers that launch them:
   - sizes and indices are 64-bit (u64), so any n up to the memory size works;
   - blocks are 256 threads (GPUK_BLOCK); grids are chosen by the host and every loop is
     grid-stride, so a kernel is correct for any grid of at least one block;
   - pointers need only element alignment: kernels that read 16 bytes at a time check the
     addresses themselves and fall back to one element at a time;
   - each kernel is an extern "C" entry named gpuk_<op>_<type>, made by one line of the
     GPUK_* instantiation lists at the end (the generator reads those lines too);
   - each family macro (#define GPUK_<FAMILY>(params)) is preceded by one "// wrap" declaration
     per C wrapper it gets: the wrapper's prototype, "=" the host launcher it calls (in
     src/gpuk_builtin.h; the generator adds the name, id, ctx and stream arguments), "|" its
     one-line doc. {t} {T} {size} stand for the type suffix, its C type and size, other {x} for
     the family macro's parameter x; {op: a=..; b=..} picks a doc piece by the op parameter.
     So a new family is its kernel, its wrap lines, its host launcher and its tests. */

/* ---- constants shared with the host launchers: tools/gen_ptx.py copies each into gpuk.h
   as GPUK__<NAME> (GPUK_BLOCK as GPUK__BLOCK) ---- */
// ==== shared constants ====
#define GPUK_BLOCK 256
#define SCAN_ITEMS_4 32
#define SCAN_ITEMS_8 16
#define TRANSPOSE_TILE 64
#define HIST_SMEM_BINS 2048
#define HIST_F32_PER_SM 8
#define HIST_F64_PER_SM 6
#define SORT_ITEMS_4 16
#define SORT_ITEMS_4M 28
#define SORT_ITEMS_4K 24
#define SORT_ITEMS_8 12
#define SORT_ITEMS_8K 14
#define SORT_BLOCKS_SM 4
#define SORT_HIST 0xFFFFFFFFu
#define SORT_SINGLE 0xFFFFFFFEu
#define SORT_DESCENDING 1
#define SORT_INDEX 2
#define SCAN_EPOCH_MASK 0x3FFFFFFFu
#define SCAN_STATUS_BYTES 32
#define GEMM_TILE_4 128
#define GEMM_TILE_8 64
#define GEMM_TILE_MMA 128
#define GEMM_SPLIT_TILES 1024
#define GEMM_WGMMA_SMEM 205824
#define GEMM_F64_SMEM 76800
#define GEMM_F64_THREADS 128
#define GEMM_F64_TILE_N 64
#define GEMM_TMA_THREADS 384
#define GEMM_TMA_BN 256
#define AXIS_PACKED_BLOCKS 8
#define STENCIL_ROWS 64
#define STENCIL3_ROWS 32
#define STENCIL3_COLS 2
#define STENCIL3_TMA_COLS 64
#define STENCIL3_TMA_ROWS 16
#define STENCIL3_TMA_THREADS 128
#define STENCIL3_TMA_STAGES 2
#define STENCIL3_TMA_PER_SM 4
#define STENCIL3_TMA_SMEM 10624
// ==== end of shared constants ====

#include "gpuk_device.cuh" /* the random numbers' generator and conversions */

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define GPUK_WARPS (GPUK_BLOCK / 32)
#define GPUK_DEV __device__ __forceinline__

/* ---- 16-byte packs: the unit of a vectorized load or store ---- */
template <typename T> struct __align__(16) pack16 { T v[16 / sizeof(T)]; };
template <typename T, int N> struct __align__(N * sizeof(T)) packn { T v[N]; };

GPUK_DEV bool aligned16(const void* p) { return ((u64)p & 15u) == 0; }

/* ---- math by type (the float forms are the single-precision library calls) ---- */
GPUK_DEV float k_sqrt(float x) { return sqrtf(x); }
GPUK_DEV double k_sqrt(double x) { return sqrt(x); }
GPUK_DEV float k_exp(float x) { return expf(x); }
GPUK_DEV double k_exp(double x) { return exp(x); }
GPUK_DEV float k_log(float x) { return logf(x); }
GPUK_DEV double k_log(double x) { return log(x); }
GPUK_DEV float k_sin(float x) { return sinf(x); }
GPUK_DEV double k_sin(double x) { return sin(x); }
GPUK_DEV float k_cos(float x) { return cosf(x); }
GPUK_DEV double k_cos(double x) { return cos(x); }
GPUK_DEV void k_sincos(float x, float* s, float* c) { sincosf(x, s, c); }
GPUK_DEV void k_sincos(double x, double* s, double* c) { sincos(x, s, c); }
GPUK_DEV float k_abs(float x) { return fabsf(x); }
GPUK_DEV double k_abs(double x) { return fabs(x); }
GPUK_DEV int k_abs(int x) { return x < 0 ? (int)(0u - (u32)x) : x; } /* |INT_MIN| wraps, as in C */
/* min/max skip NaN like C's fmin/fmax: a NaN never replaces a number */
GPUK_DEV float k_min(float a, float b) { return fminf(a, b); }
GPUK_DEV double k_min(double a, double b) { return fmin(a, b); }
GPUK_DEV float k_max(float a, float b) { return fmaxf(a, b); }
GPUK_DEV double k_max(double a, double b) { return fmax(a, b); }
GPUK_DEV int k_min(int a, int b) { return a < b ? a : b; }
GPUK_DEV u32 k_min(u32 a, u32 b) { return a < b ? a : b; }
GPUK_DEV int k_max(int a, int b) { return a > b ? a : b; }
GPUK_DEV u32 k_max(u32 a, u32 b) { return a > b ? a : b; }
/* numpy's names for the element-wise forms */
template <typename T> GPUK_DEV T k_minimum(T a, T b) { return k_min(a, b); }
template <typename T> GPUK_DEV T k_maximum(T a, T b) { return k_max(a, b); }
/* integer +, -, * wrap modulo 2^32 (done unsigned: signed overflow is undefined in C++) */
GPUK_DEV float k_add(float a, float b) { return a + b; }
GPUK_DEV double k_add(double a, double b) { return a + b; }
GPUK_DEV int k_add(int a, int b) { return (int)((u32)a + (u32)b); }
GPUK_DEV u32 k_add(u32 a, u32 b) { return a + b; }
GPUK_DEV u64 k_add(u64 a, u64 b) { return a + b; }
GPUK_DEV float k_sub(float a, float b) { return a - b; }
GPUK_DEV double k_sub(double a, double b) { return a - b; }
GPUK_DEV int k_sub(int a, int b) { return (int)((u32)a - (u32)b); }
GPUK_DEV u32 k_sub(u32 a, u32 b) { return a - b; }
GPUK_DEV float k_mul(float a, float b) { return a * b; }
GPUK_DEV double k_mul(double a, double b) { return a * b; }
GPUK_DEV int k_mul(int a, int b) { return (int)((u32)a * (u32)b); }
GPUK_DEV u32 k_mul(u32 a, u32 b) { return a * b; }

/* ---- 16-bit floats: f16 (IEEE binary16) and bf16 (bfloat16), stored as 16 bits and computed
   in f32. f16 converts with the hardware's cvt, which every target has: round to nearest even,
   overflow to +-inf, subnormals kept (no .ftz). Integer conversions made the f16 kernels
   compute-bound. bf16 is f32's top half: widening is a shift, narrowing a few integer
   instructions (its cvt needs sm_80). An f32 +, - or * of two 16-bit values rounded to 16
   bits is their exact result rounded once: f32's 24 bits are at least 2p + 2 for f16's p = 11
   and bf16's p = 8, so the double rounding is innocuous.
   NaNs: arithmetic gives a NaN of no particular payload (f32's own arithmetic does), so widen
   and narrow leave f16 NaN bits to the hardware; the conversion kernels alone promise the
   payload (convert_one below): a NaN narrows to a NaN of its sign with the quiet bit set and
   its payload's top bits kept (as x86's F16C does) and widens with its payload. */
struct f16_t { unsigned short bits; };
struct bf16_t { unsigned short bits; };
GPUK_DEV float widen(f16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
GPUK_DEV float widen(bf16_t h) { return __uint_as_float((u32)h.bits << 16); }
template <typename T> GPUK_DEV T widen(T x) { return x; }
template <typename H> GPUK_DEV H narrow(float x);
template <> GPUK_DEV f16_t narrow<f16_t>(float x) {
    f16_t r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
    return r;
}
template <> GPUK_DEV bf16_t narrow<bf16_t>(float x) {
    const u32 b = __float_as_uint(x);
    bf16_t h;
    if ((b & 0x7fffffffu) > 0x7f800000u) h.bits = (unsigned short)(b >> 16 | 0x40u);
    else h.bits = (unsigned short)((b + 0x7fffu + (b >> 16 & 1u)) >> 16); /* carries to inf */
    return h;
}
/* what a fold accumulates T in, and the type of a map kernel's scalars */
template <typename T> struct wide { typedef T type; };
template <> struct wide<f16_t> { typedef float type; };
template <> struct wide<bf16_t> { typedef float type; };
#define GPUK_HALF_OPS(H)                                                                     \
    GPUK_DEV H k_add(H a, H b) { return narrow<H>(widen(a) + widen(b)); }                    \
    GPUK_DEV H k_sub(H a, H b) { return narrow<H>(widen(a) - widen(b)); }                    \
    GPUK_DEV H k_mul(H a, H b) { return narrow<H>(widen(a) * widen(b)); }
GPUK_HALF_OPS(f16_t)
GPUK_HALF_OPS(bf16_t)

/* ---- element-wise map ----
   out[i] = f(a[i], b[i]) for i < n, where f may ignore a or b (fill, unary ops). The range is
   cut into a scalar head up to the first 16-byte boundary of out, a body of 16-byte packs and a
   scalar tail; the body is used only when a and b sit at the same offset mod 16 as out, else
   every element goes one at a time. out may equal a or b (in place). */
template <int NIN, int UNROLL, typename T, typename F>
GPUK_DEV void map(F f, T* out, const T* a, const T* b, u64 n) {
    const u64 V = 16 / sizeof(T);
    const u64 tid = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GPUK_BLOCK;
    const u64 mis = (u64)out & 15u;
    bool packs = (NIN < 1 || ((u64)a & 15u) == mis) && (NIN < 2 || ((u64)b & 15u) == mis);
    u64 head = packs ? (16u - mis) % 16u / sizeof(T) : n;
    if (head > n) head = n;
    for (u64 i = tid; i < head; i += stride)
        out[i] = f(NIN > 0 ? a[i] : T(), NIN > 1 ? b[i] : T());
    const u64 npacks = (n - head) / V;
    pack16<T>* po = (pack16<T>*)(out + head);
    const pack16<T>* pa = (const pack16<T>*)(a + head);
    const pack16<T>* pb = (const pack16<T>*)(b + head);
    /* UNROLL packs a thread: all loads first, so more bytes are in flight per thread (the
       packs are distinct, so this is right in place too) */
    for (u64 p = tid; p < npacks; p += UNROLL * stride) {
        pack16<T> x[UNROLL], y[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (p + u * stride < npacks) {
                if (NIN > 0) x[u] = pa[p + u * stride];
                if (NIN > 1) y[u] = pb[p + u * stride];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (p + u * stride < npacks) {
                pack16<T> r;
#pragma unroll
                for (int k = 0; k < (int)V; k++) r.v[k] = f(NIN > 0 ? x[u].v[k] : T(), NIN > 1 ? y[u].v[k] : T());
                po[p + u * stride] = r;
            }
        }
    }
    for (u64 i = head + npacks * V + tid; i < n; i += stride)
        out[i] = f(NIN > 0 ? a[i] : T(), NIN > 1 ? b[i] : T());
}

/* Every map kernel has the same parameters, so one host launcher serves them all:
   (out, a, b, n, s0, s1); a, b, s0, s1 are ignored where the op has no use for them. The
   scalars of the 16-bit floats' kernels are f32 (wide<T>). */
#define GPUK_MAP_KERNEL(name, T, NIN, expr) GPUK_MAP_KERNEL_U(name, T, NIN, 2, expr)
/* UNROLL 1 for the ops whose code is long (sin, cos): their PTX stays small and quick to JIT. */
#define GPUK_MAP_KERNEL_U(name, T, NIN, UNROLL, expr)                                        \
    struct name##_op {                                                                       \
        typename wide<T>::type s0, s1;                                                       \
        __device__ T operator()(T x, T y) const { (void)x; (void)y; return expr; }           \
    };                                                                                       \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    name(T* out, const T* a, const T* b, u64 n, wide<T>::type s0, wide<T>::type s1) {        \
        name##_op f = { s0, s1 };                                                            \
        map<NIN, UNROLL>(f, out, a, b, n);                                                   \
    }

/* ---- conversions between f32 and the 16-bit floats ----
   out[i] = in[i] widened or narrowed, where out and in reach a 16-byte boundary at the same
   element, else one at a time. Narrowing takes groups of 8 elements a thread (32 bytes of
   floats in, 16 of halves out); widening one 16-byte pack of out a thread from 8 bytes of in,
   two of them in flight, so that each store of a warp writes 512 contiguous bytes (two
   16-byte stores a thread side by side would leave every sector half written by each).
   out and in never overlap (the launcher refuses it): their elements differ in size. */
template <typename O, typename I> GPUK_DEV O convert_one(I x) { return narrow<O>(x); }
/* f16 NaNs by the rule above: the f16 bits sign-extended from bit 15 and shifted into place
   give sign, payload and, with the exponent's bits set, the f32 NaN */
template <> GPUK_DEV float convert_one<float, f16_t>(f16_t x) {
    const float f = widen(x);
    return f == f ? f : __int_as_float((int)((u32)x.bits << 16) >> 3 | 0x7f800000);
}
template <> GPUK_DEV f16_t convert_one<f16_t, float>(float x) {
    f16_t r = narrow<f16_t>(x);
    const u32 b = __float_as_uint(x);
    if (x != x) r.bits = (unsigned short)(b >> 16 & 0x8000u | 0x7e00u | (b >> 13 & 0x3ffu));
    return r;
}
template <> GPUK_DEV float convert_one<float, bf16_t>(bf16_t x) { return widen(x); }
template <typename O, typename I> GPUK_DEV void convert(O* out, const I* in, u64 n) {
    const int PI = 8 * sizeof(I) / 16, PO = 8 * sizeof(O) / 16; /* packs a group of 8 */
    const u64 tid = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GPUK_BLOCK;
    u64 head = n;
    for (u64 h = 0; h < 8; h++)
        if ((((u64)(out + h) | (u64)(in + h)) & 15u) == 0) { head = h; break; }
    if (head > n) head = n;
    for (u64 i = tid; i < head; i += stride) out[i] = convert_one<O>(in[i]);
    if (sizeof(O) > sizeof(I)) {
        enum { E = 16 / sizeof(O), U = 2 };
        const u64 nout = (n - head) / E;
        const packn<I, E>* ci = (const packn<I, E>*)(in + head);
        pack16<O>* po = (pack16<O>*)(out + head);
        for (u64 q = tid; q < nout; q += U * stride) {
            packn<I, E> x[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (q + u * stride < nout) x[u] = ci[q + u * stride];
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (q + u * stride < nout) {
                    pack16<O> r;
#pragma unroll
                    for (int e = 0; e < E; e++) r.v[e] = convert_one<O>(x[u].v[e]);
                    po[q + u * stride] = r;
                }
            }
        }
        for (u64 i = head + nout * E + tid; i < n; i += stride) out[i] = convert_one<O>(in[i]);
        return;
    }
    const u64 groups = (n - head) / 8;
    const pack16<I>* pi = (const pack16<I>*)(in + head);
    pack16<O>* po = (pack16<O>*)(out + head);
    for (u64 g = tid; g < groups; g += stride) {
        pack16<I> x[PI];
        pack16<O> r[PO];
#pragma unroll
        for (int k = 0; k < PI; k++) x[k] = pi[g * PI + k];
#pragma unroll
        for (int e = 0; e < 8; e++)
            r[e / (8 / PO)].v[e % (8 / PO)] = convert_one<O>(x[e / (8 / PI)].v[e % (8 / PI)]);
#pragma unroll
        for (int k = 0; k < PO; k++) po[g * PO + k] = r[k];
    }
    for (u64 i = head + groups * 8 + tid; i < n; i += stride) out[i] = convert_one<O>(in[i]);
}
#define GPUK_CONVERT_KERNEL(name, O, I)                                                      \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK) name(O* out, const I* in, u64 n) { \
        convert(out, in, n);                                                                 \
    }
// wrap gpuk_to_{h}_{t}(gpuk_array out, gpuk_array in, size_t n)
//      = gpuk__convert(2, {size}, out, in, n)
//      | out[i] (uint16_t bits) = in[i] rounded to {h: f16=IEEE binary16; bf16=bfloat16},
//      nearest even
#define GPUK_TO_HALF(H, h, T, t) GPUK_CONVERT_KERNEL(gpuk_to_##h##_##t, H, T)
// wrap gpuk_to_f32_{t}(gpuk_array out, gpuk_array in, size_t n)
//      = gpuk__convert(4, {size}, out, in, n)
//      | out[i] (float) = in[i] ({t: f16=IEEE binary16; bf16=bfloat16} bits), exactly
#define GPUK_TO_F32(T, t) GPUK_CONVERT_KERNEL(gpuk_to_f32_##t, float, T)

/* fill: out[i] = s0. */
// wrap gpuk_fill_{t}(gpuk_array out, size_t n, {T} value)
//      = gpuk__map({size}, n, out, NULL, NULL, &value, NULL) | out[i] = value
#define GPUK_FILL(T, t) GPUK_MAP_KERNEL_U(gpuk_fill_##t, T, 0, 1, s0)
/* binary: out[i] = a[i] op b[i]. */
// wrap gpuk_{op}_{t}(gpuk_array out, gpuk_array a, gpuk_array b, size_t n)
//      = gpuk__map({size}, n, out, &a, &b, NULL, NULL)
//      | out[i] = {op: add=a[i] + b[i]; sub=a[i] - b[i]; mul=a[i] * b[i]; minimum=min(a[i], b[i]); maximum=max(a[i], b[i])}
#define GPUK_BINARY(op, T, t) GPUK_MAP_KERNEL(gpuk_##op##_##t, T, 2, k_##op(x, y))
// wrap gpuk_div_{t}(gpuk_array out, gpuk_array a, gpuk_array b, size_t n)
//      = gpuk__map({size}, n, out, &a, &b, NULL, NULL) | out[i] = a[i] / b[i]
#define GPUK_DIV(T, t) GPUK_MAP_KERNEL(gpuk_div_##t, T, 2, x / y)
/* axpy: y[i] = s0 * x[i] + y[i] (launched with out = b = y, a = x). */
// wrap gpuk_axpy_{t}(gpuk_array y, {T} alpha, gpuk_array x, size_t n)
//      = gpuk__map({size}, n, y, &x, &y, &alpha, NULL) | y[i] = alpha * x[i] + y[i]
#define GPUK_AXPY(T, t) GPUK_MAP_KERNEL(gpuk_axpy_##t, T, 2, s0 * x + y)
// wrap gpuk_axpy_{t}(gpuk_array y, float alpha, gpuk_array x, size_t n)
//      = gpuk__map({size}, n, y, &x, &y, &alpha, NULL)
//      | y[i] = alpha * x[i] + y[i], one f32 fma rounded to 16 bits
#define GPUK_AXPY_HALF(T, t)                                                                 \
    GPUK_MAP_KERNEL(gpuk_axpy_##t, T, 2, narrow<T>(fmaf(s0, widen(x), widen(y))))
/* scale: out[i] = s0 * x[i]. */
// wrap gpuk_scale_{t}(gpuk_array out, {T} alpha, gpuk_array x, size_t n)
//      = gpuk__map({size}, n, out, &x, NULL, &alpha, NULL) | out[i] = alpha * x[i]
#define GPUK_SCALE(T, t) GPUK_MAP_KERNEL(gpuk_scale_##t, T, 1, s0 * x)
/* unary: out[i] = op(x[i]). */
// wrap gpuk_{op}_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__map({size}, n, out, &x, NULL, NULL, NULL) | out[i] = {op}(x[i])
#define GPUK_UNARY(op, T, t) GPUK_MAP_KERNEL(gpuk_##op##_##t, T, 1, k_##op(x))
// wrap gpuk_{op}_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__map({size}, n, out, &x, NULL, NULL, NULL) | out[i] = {op}(x[i])
#define GPUK_UNARY_LONG(op, T, t) GPUK_MAP_KERNEL_U(gpuk_##op##_##t, T, 1, 1, k_##op(x))
/* cos(x)^2 + sin(x)^2, one argument reduction for both (examples/04_ufuncs.c's ufunc). */
GPUK_DEV float cos2_plus_sin2(float x) { float s, c; k_sincos(x, &s, &c); return c * c + s * s; }
GPUK_DEV double cos2_plus_sin2(double x) { double s, c; k_sincos(x, &s, &c); return c * c + s * s; }
// wrap gpuk_cos2_plus_sin2_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__map({size}, n, out, &x, NULL, NULL, NULL) | out[i] = cos(x[i])^2 + sin(x[i])^2
#define GPUK_COS2SIN2(T, t) GPUK_MAP_KERNEL_U(gpuk_cos2_plus_sin2_##t, T, 1, 1, cos2_plus_sin2(x))
/* SELU: lambda * (x > 0 ? x : alpha * exp(x) - alpha), with s0 = alpha, s1 = lambda. */
// wrap gpuk_selu_{t}(gpuk_array out, gpuk_array x, size_t n, {T} alpha, {T} lambda)
//      = gpuk__map({size}, n, out, &x, NULL, &alpha, &lambda)
//      | out[i] = lambda * (x > 0 ? x : alpha * exp(x) - alpha)
#define GPUK_SELU(T, t) GPUK_MAP_KERNEL(gpuk_selu_##t, T, 1, s1 * (x > T(0) ? x : s0 * k_exp(x) - s0))

/* ---- iota and linspace: out[i] from i alone ---- */
/* iota: out[i] = start + i * step (integers wrap modulo 2^32). */
template <typename T> GPUK_DEV T iota_at(u64 i, T start, T step) { return start + T(i) * step; }
template <> GPUK_DEV int iota_at<int>(u64 i, int start, int step) { return (int)((u32)start + (u32)i * (u32)step); }
template <> GPUK_DEV u32 iota_at<u32>(u64 i, u32 start, u32 step) { return start + (u32)i * step; }

// wrap gpuk_iota_{t}(gpuk_array out, size_t n, {T} start, {T} step)
//      = gpuk__generate({size}, n, out, &start, &step, sizeof start, 1)
//      | out[i] = start + i * step (arange)
#define GPUK_IOTA(T, t)                                                                      \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_iota_##t(T* out, u64 n, T start, T step) {                                          \
        for (u64 i = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x; i < n;                      \
             i += (u64)gridDim.x * GPUK_BLOCK)                                               \
            out[i] = iota_at<T>(i, start, step);                                             \
    }

/* linspace: n points from lo to hi inclusive; the first half steps up from lo and the second
   down from hi, so both ends are exact and the error never grows past half the range. */
// wrap gpuk_linspace_{t}(gpuk_array out, size_t n, {T} lo, {T} hi)
//      = gpuk__generate({size}, n, out, &lo, &hi, sizeof lo, 1) | n points from lo to hi inclusive
#define GPUK_LINSPACE(T, t)                                                                  \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_linspace_##t(T* out, u64 n, T lo, T hi) {                                           \
        const T step = n > 1 ? (hi - lo) / T(n - 1) : T(0);                                  \
        for (u64 i = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x; i < n;                      \
             i += (u64)gridDim.x * GPUK_BLOCK)                                               \
            out[i] = (i < n / 2 || n == 1) ? lo + T(i) * step : hi - T(n - 1 - i) * step;   \
    }

/* ---- strided copy: out[i * out_stride] = in[i * in_stride] (gathers a column of a
   row-major matrix with in_stride = its row length; in_stride 0 broadcasts in[0]) ---- */
// wrap gpuk_copy_strided_{t}(gpuk_array out, size_t out_stride, gpuk_array in, size_t in_stride, size_t n)
//      = gpuk__strided({size}, out, out_stride, in, in_stride, n)
//      | out[i * out_stride] = in[i * in_stride]; in_stride 0 broadcasts in[0]
#define GPUK_COPY_STRIDED(T, t)                                                              \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_copy_strided_##t(T* out, const T* in, u64 n, u64 out_stride, u64 in_stride) {       \
        for (u64 i = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x; i < n;                      \
             i += (u64)gridDim.x * GPUK_BLOCK)                                               \
            out[i * out_stride] = in[i * in_stride];                                         \
    }

/* ---- reductions ----
   Deterministic: each block folds a fixed grid-stride share of the input (in 16-byte packs
   when the addresses allow) in a fixed order, combines its threads in a fixed tree and stores
   one partial; the last block to finish (counted by an atomic ticket in the scratch area)
   folds the partials in index order and writes the result. Same input and grid -> same bits.
   scratch: u32 ticket (zero between launches: the last block resets it), then partials. */
template <typename T> struct argval { T v; u64 i; };

/* Reads another block's partial through L2 (never a stale L1 line). */
template <typename A> GPUK_DEV A fetch(const A* p) { return *(const volatile A*)p; }
template <typename T> GPUK_DEV argval<T> fetch(const argval<T>* p) {
    argval<T> r;
    r.v = *(const volatile T*)&p->v;
    r.i = *(const volatile u64*)&p->i;
    return r;
}

/* Folds: identity, element -> accumulator, accumulator combine, accumulator -> result. */
template <typename T> struct fold_sum {
    typedef typename wide<T>::type acc; typedef acc out;
    GPUK_DEV acc init() { return acc(0); }
    GPUK_DEV acc take(T x, T, u64) { return widen(x); }
    GPUK_DEV acc join(acc a, acc b) { return k_add(a, b); }
    GPUK_DEV out done(acc a) { return a; }
};
template <typename T> struct fold_dot {
    typedef typename wide<T>::type acc; typedef acc out;
    GPUK_DEV acc init() { return acc(0); }
    GPUK_DEV acc take(T x, T y, u64) { return widen(x) * widen(y); }
    GPUK_DEV acc join(acc a, acc b) { return a + b; }
    GPUK_DEV out done(acc a) { return a; }
};
template <typename T> struct fold_norm2 {
    typedef T acc; typedef T out;
    GPUK_DEV acc init() { return T(0); }
    GPUK_DEV acc take(T x, T, u64) { return x * x; }
    GPUK_DEV acc join(acc a, acc b) { return a + b; }
    GPUK_DEV out done(acc a) { return k_sqrt(a); }
};
template <typename T> GPUK_DEV T lowest();
template <typename T> GPUK_DEV T highest();
template <> GPUK_DEV float lowest<float>() { return -__int_as_float(0x7f800000); }
template <> GPUK_DEV float highest<float>() { return __int_as_float(0x7f800000); }
template <> GPUK_DEV double lowest<double>() { return -__longlong_as_double(0x7ff0000000000000ll); }
template <> GPUK_DEV double highest<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <> GPUK_DEV int lowest<int>() { return (int)0x80000000u; }
template <> GPUK_DEV int highest<int>() { return 0x7fffffff; }
template <> GPUK_DEV u32 lowest<u32>() { return 0u; }
template <> GPUK_DEV u32 highest<u32>() { return 0xffffffffu; }
template <typename T> struct fold_min {
    typedef typename wide<T>::type acc; typedef acc out;
    GPUK_DEV acc init() { return highest<acc>(); }
    GPUK_DEV acc take(T x, T, u64) { return widen(x); }
    GPUK_DEV acc join(acc a, acc b) { return k_min(a, b); }
    GPUK_DEV out done(acc a) { return a; }
};
template <typename T> struct fold_max {
    typedef typename wide<T>::type acc; typedef acc out;
    GPUK_DEV acc init() { return lowest<acc>(); }
    GPUK_DEV acc take(T x, T, u64) { return widen(x); }
    GPUK_DEV acc join(acc a, acc b) { return k_max(a, b); }
    GPUK_DEV out done(acc a) { return a; }
};
/* argmin/argmax: the index of the first extreme element; NaN never wins; an index of all ones
   stands for "none yet" while folding, and an all-NaN input gives index 0 (the first NaN, as
   NumPy's argmin/argmax answer when a NaN is present). */
template <typename T, bool MIN> struct fold_arg {
    typedef argval<T> P;
    typedef P acc; typedef u64 out;
    GPUK_DEV acc init() { P p; p.v = MIN ? highest<T>() : lowest<T>(); p.i = ~0ull; return p; }
    GPUK_DEV acc take(T x, T, u64 i) {
        P p; p.v = x; p.i = (x == x) ? i : ~0ull; if (!(x == x)) p.v = init().v; return p;
    }
    GPUK_DEV acc join(acc a, acc b) {
        bool b_wins = MIN ? (b.v < a.v) : (b.v > a.v);
        if (b.v == a.v) b_wins = b.i < a.i;
        return b_wins ? b : a;
    }
    GPUK_DEV out done(acc a) { return a.i == ~0ull ? 0ull : a.i; }
    /* join(a, take(x, _, i)) where i is past every index in a (a thread's own elements, in
       order): a tie keeps a, and only the first number replaces "none yet" */
    GPUK_DEV acc step(acc a, T x, T, u64 i) {
        const bool wins = (MIN ? x < a.v : x > a.v) || (a.i == ~0ull && x == x);
        if (wins) {
            a.v = x;
            a.i = i;
        }
        return a;
    }
};
/* join(a, take(x, y, i)); fold_arg has a cheaper form for elements in order */
template <typename F, typename T>
GPUK_DEV typename F::acc fold_step(F f, typename F::acc a, T x, u64 i) { return f.join(a, f.take(x, T(), i)); }
template <typename T, bool MIN>
GPUK_DEV argval<T> fold_step(fold_arg<T, MIN> f, argval<T> a, T x, u64 i) { return f.step(a, x, T(), i); }

template <typename F>
GPUK_DEV typename F::acc block_fold(F f, typename F::acc v, typename F::acc* smem) {
    smem[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int w = GPUK_BLOCK / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) smem[threadIdx.x] = f.join(smem[threadIdx.x], smem[threadIdx.x + w]);
        __syncthreads();
    }
    return smem[0];
}

template <int NIN, typename T, typename F>
GPUK_DEV void reduce(F f, typename F::out* result, const T* a, const T* b, u64 n, void* scratch) {
    typedef typename F::acc A;
    const u64 V = 16 / sizeof(T);
    const u64 tid = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GPUK_BLOCK;
    __shared__ A smem[GPUK_BLOCK];
    __shared__ bool last;
    A acc = f.init();
    const u64 mis = (u64)a & 15u;
    bool packs = NIN < 2 || ((u64)b & 15u) == mis;
    u64 head = packs ? (16u - mis) % 16u / sizeof(T) : n;
    if (head > n) head = n;
    for (u64 i = tid; i < head; i += stride) acc = f.join(acc, f.take(a[i], NIN > 1 ? b[i] : T(), i));
    const u64 npacks = (n - head) / V;
    const pack16<T>* pa = (const pack16<T>*)(a + head);
    const pack16<T>* pb = (const pack16<T>*)(b + head);
    /* two packs a turn, both loads issued first: more bytes in flight a thread */
    for (u64 p = tid; p < npacks; p += 2 * stride) {
        pack16<T> x[2], y[2];
#pragma unroll
        for (int u = 0; u < 2; u++) {
            if (p + u * stride < npacks) {
                x[u] = pa[p + u * stride];
                if (NIN > 1) y[u] = pb[p + u * stride];
            }
        }
#pragma unroll
        for (int u = 0; u < 2; u++) {
            if (p + u * stride < npacks) {
                const u64 at = head + (p + u * stride) * V;
#pragma unroll
                for (int k = 0; k < (int)V; k++)
                    acc = f.join(acc, f.take(x[u].v[k], NIN > 1 ? y[u].v[k] : T(), at + k));
            }
        }
    }
    for (u64 i = head + npacks * V + tid; i < n; i += stride) acc = f.join(acc, f.take(a[i], NIN > 1 ? b[i] : T(), i));
    acc = block_fold(f, acc, smem);

    u32* ticket = (u32*)scratch;
    A* partials = (A*)((char*)scratch + 16);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    A total = f.init();
    for (u32 i = threadIdx.x; i < gridDim.x; i += GPUK_BLOCK)
        total = f.join(total, fetch(partials + i));
    total = block_fold(f, total, smem);
    if (threadIdx.x == 0) {
        *result = f.done(total);
        *ticket = 0;
    }
}

/* Reduction kernels share (out, a, b, n, scratch); b is used by dot only. */
#define GPUK_REDUCE_KERNEL(name, T, NIN, F)                                                  \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    name(F::out* out, const T* a, const T* b, u64 n, void* scratch) {                        \
        reduce<NIN>(F(), out, a, b, n, scratch);                                             \
    }
// wrap gpuk_sum_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce({size}, {size}, 0, out, &x, NULL, n) | out[0] = x[0] + ... + x[n-1]
#define GPUK_SUM(T, t) GPUK_REDUCE_KERNEL(gpuk_sum_##t, T, 1, fold_sum<T>)
// wrap gpuk_min_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce({size}, {size}, 1, out, &x, NULL, n) | out[0] = smallest x[i] (n >= 1)
#define GPUK_MIN(T, t) GPUK_REDUCE_KERNEL(gpuk_min_##t, T, 1, fold_min<T>)
// wrap gpuk_max_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce({size}, {size}, 1, out, &x, NULL, n) | out[0] = largest x[i] (n >= 1)
#define GPUK_MAX(T, t) GPUK_REDUCE_KERNEL(gpuk_max_##t, T, 1, fold_max<T>)
// wrap gpuk_argmin_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce({size}, 8, 1, out, &x, NULL, n)
//      | out[0] (uint64) = index of the first smallest x[i] (n >= 1)
#define GPUK_ARGMIN(T, t) GPUK_REDUCE_KERNEL(gpuk_argmin_##t, T, 1, GPUK_ARG_FOLD(T, true))
// wrap gpuk_argmax_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce({size}, 8, 1, out, &x, NULL, n)
//      | out[0] (uint64) = index of the first largest x[i] (n >= 1)
#define GPUK_ARGMAX(T, t) GPUK_REDUCE_KERNEL(gpuk_argmax_##t, T, 1, GPUK_ARG_FOLD(T, false))
#define GPUK_ARG_FOLD(T, is_min) fold_arg<T, is_min>
// wrap gpuk_dot_{t}(gpuk_array out, gpuk_array x, gpuk_array y, size_t n)
//      = gpuk__reduce({size}, {size}, 0, out, &x, &y, n) | out[0] = x[0]*y[0] + ... + x[n-1]*y[n-1]
#define GPUK_DOT(T, t) GPUK_REDUCE_KERNEL(gpuk_dot_##t, T, 2, fold_dot<T>)
// wrap gpuk_norm2_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce({size}, {size}, 0, out, &x, NULL, n) | out[0] = sqrt(sum of x[i]^2)
#define GPUK_NORM2(T, t) GPUK_REDUCE_KERNEL(gpuk_norm2_##t, T, 1, fold_norm2<T>)
/* The 16-bit floats' reductions: the same folds, accumulated and answered in f32 (float). */
// wrap gpuk_sum_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce(2, 4, 0, out, &x, NULL, n) | out[0] (float) = x[0] + ... + x[n-1], added in f32
#define GPUK_SUM_HALF(T, t) GPUK_SUM(T, t)
// wrap gpuk_min_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce(2, 4, 1, out, &x, NULL, n) | out[0] (float) = smallest x[i] (n >= 1)
#define GPUK_MIN_HALF(T, t) GPUK_MIN(T, t)
// wrap gpuk_max_{t}(gpuk_array out, gpuk_array x, size_t n)
//      = gpuk__reduce(2, 4, 1, out, &x, NULL, n) | out[0] (float) = largest x[i] (n >= 1)
#define GPUK_MAX_HALF(T, t) GPUK_MAX(T, t)
// wrap gpuk_dot_{t}(gpuk_array out, gpuk_array x, gpuk_array y, size_t n)
//      = gpuk__reduce(2, 4, 0, out, &x, &y, n)
//      | out[0] (float) = x[0]*y[0] + ... + x[n-1]*y[n-1], multiplied and added in f32
#define GPUK_DOT_HALF(T, t) GPUK_DOT(T, t)

/* ---- reductions along an axis of a 2-D view: a result for each row or each column ----
   The folds above, over every row (out[r], columns in order) or every column (out[c], rows in
   order) of in (rows x cols, ld elements from row to row). The launch shape depends on the
   view and the device only, so the bits repeat like the 1-D reductions'.
   Rows: a group of G lanes (a power of two up to a warp, about the row's 16-byte packs) folds
   a segment: the whole row, or with chunks > 1 one of the row's pieces of span columns (long
   rows, few of them: the pieces keep every multiprocessor busy); short rows (a 16-byte pack a
   lane at most) SHORT_ROWS at a time. Each row is read 16 bytes at
   a time from its first aligned element on. With chunks > 1 a segment's partial goes to the
   workspace and the group that brings the row's ticket to chunks folds the partials in chunk
   order and resets the ticket.
   Columns: a block is tx x (GPUK_BLOCK / tx) threads; a thread takes v adjacent columns (v =
   16 bytes where every row is 16-byte aligned and cols a multiple of v, else 1; shape = tx |
   vec << 16) and folds them
   over the rows of its chunk (span rows; all rows with chunks = 1), GPUK_BLOCK / tx rows
   apart, so that a warp reads whole rows' stretches; the block folds those in shared memory.
   With chunks > 1 the partials go to the workspace and the last block of the strip of
   columns (its ticket) folds them in chunk order.
   ws: the workspace of GEMM's split-K: up to GEMM_SPLIT_TILES u32 tickets at its start (zero
   between launches, GEMM's tile counters too), the partials after them; chunks = 1 (the host
   had no workspace, or needs none): none used. */
template <typename A> GPUK_DEV A shfl_xor(A a, int m, unsigned mask) { return __shfl_xor_sync(mask, a, m); }
template <typename T> GPUK_DEV argval<T> shfl_xor(argval<T> a, int m, unsigned mask) {
    argval<T> r;
    r.v = __shfl_xor_sync(mask, a.v, m);
    r.i = __shfl_xor_sync(mask, a.i, m);
    return r;
}
/* Another block's partial, from L2 like fetch, but free to be issued ahead of the ones before
   it (a volatile load is not): the folds of many partials keep several loads in flight. */
template <typename A> GPUK_DEV A fetch_l2(const A* p) { return __ldcg(p); }
template <typename T> GPUK_DEV argval<T> fetch_l2(const argval<T>* p) {
    argval<T> r;
    r.v = __ldcg(&p->v);
    r.i = __ldcg(&p->i);
    return r;
}
/* folds a group's lanes (every lane ends with the same bits: the joins commute exactly) */
template <typename F>
GPUK_DEV typename F::acc group_fold(F f, typename F::acc a, u32 g, unsigned mask) {
    for (u32 m = g / 2; m > 0; m /= 2) a = f.join(a, shfl_xor(a, (int)m, mask));
    return a;
}

/* group_fold where the whole warp folds at once (the short rows' loop): shuffles that name
   every lane spare the compiler's checks of which lanes take part (a mask of a group's lanes
   cost a match and a vote each step), and unrolled they spare the loop; xor by less than g
   stays within the group, so the joins and their order are group_fold's */
template <typename F>
GPUK_DEV typename F::acc group_fold_warp(F f, typename F::acc a, u32 g) {
#pragma unroll
    for (u32 m = 16; m > 0; m /= 2)
        if (m < g) a = f.join(a, shfl_xor(a, (int)m, 0xffffffffu));
    return a;
}

/* Short rows (a 16-byte pack a lane at most, so cols <= 32 * V < 2^32): a lane's part of a
   row is its head element (before the row's first 16-byte boundary), its pack and its tail
   element, each where it has one. A group loads the parts of SHORT_ROWS rows before it folds
   any (the folds wait on the loads: one row at a time left a warp a single load in flight
   through each fold and shuffle), then folds each row in column order, as the long rows'
   loop does, so the bits are those of one row at a time. */
enum { SHORT_ROWS = 2 };
template <typename T> struct short_part {
    pack16<T> x;
    T h, t;
    u32 head; /* the row's head elements; the pack starts there */
    bool ok;  /* the row exists */
};
template <typename T>
GPUK_DEV void short_row_load(short_part<T>& p, const T* in, u64 r, u64 rows, u32 cols, u64 ld,
                             u32 lane) {
    const u32 V = 16 / sizeof(T);
    p.ok = r < rows;
    p.head = 0;
    if (!p.ok) return;
    const T* row = in + r * ld;
    const u32 head = (u32)((16u - ((u64)row & 15u)) % 16u / sizeof(T));
    p.head = head < cols ? head : cols;
    const u32 packs = (cols - p.head) / V, tail = p.head + packs * V;
    if (lane < p.head) p.h = row[lane];
    if (lane < packs) p.x = ((const pack16<T>*)(row + p.head))[lane];
    if (tail + lane < cols) p.t = row[tail + lane];
}
template <typename T, typename F>
GPUK_DEV typename F::acc short_row_fold(F f, const short_part<T>& p, u32 cols, u32 lane) {
    const u32 V = 16 / sizeof(T), packs = (cols - p.head) / V, tail = p.head + packs * V;
    typename F::acc acc = f.init();
    if (!p.ok) return acc;
    if (lane < p.head) acc = fold_step(f, acc, p.h, lane);
    if (lane < packs)
#pragma unroll
        for (u32 k = 0; k < V; k++) acc = fold_step(f, acc, p.x.v[k], p.head + lane * V + k);
    if (tail + lane < cols) acc = fold_step(f, acc, p.t, tail + lane);
    return acc;
}
/* The group's rows: first, first + step, ... (the loop the same for the whole warp: first -
   gi is its first group's row) */
template <int R, typename T, typename F>
GPUK_DEV void reduce_short_rows(F f, typename F::out* out, const T* in, u64 rows, u32 cols,
                                u64 ld, u32 g, u32 lane, u32 gi, u64 first, u64 step) {
    for (u64 s0 = first; s0 - gi < rows; s0 += R * step) {
        short_part<T> p[R];
#pragma unroll
        for (u32 u = 0; u < R; u++) short_row_load(p[u], in, s0 + u * step, rows, cols, ld, lane);
#pragma unroll
        for (u32 u = 0; u < R; u++) {
            const typename F::acc acc = group_fold_warp(f, short_row_fold(f, p[u], cols, lane), g);
            if (p[u].ok && lane == 0) out[s0 + u * step] = f.done(acc);
        }
    }
}

/* Short rows that are whole 16-byte packs, every row 16-byte aligned: a lane's part of a row
   is one pack, with no head or tail, so a group keeps more rows' loads in flight in the
   registers the general loop spends on its parts; the folds and their order are the general
   loop's, so are the bits. A kernel of its own (gpuk__<op>_rows_packed_<t>, which the host
   launches for such views): inside the rows kernel its loop took registers the long rows'
   loops needed. */
enum { PACKED_ROWS = 2 }; /* rows a group keeps in flight: 4 or 8, at fewer blocks, no faster */
template <typename T, typename F>
GPUK_DEV void reduce_packed_rows(F f, typename F::out* out, const T* in, u64 rows, u64 cols,
                                 u64 ld, u32 g) {
    enum { R = PACKED_ROWS };
    const u32 V = 16 / sizeof(T), packs = (u32)cols / V, lane = threadIdx.x % g;
    const u32 gi = (threadIdx.x % 32) / g, per_warp = 32 / g;
    const u64 warp = ((u64)blockIdx.x * GPUK_BLOCK + threadIdx.x) / 32;
    const u64 step = (u64)gridDim.x * (GPUK_BLOCK / 32) * per_warp;
    /* the loop the same for the whole warp: s0 - gi is its first group's row */
    for (u64 s0 = warp * per_warp + gi; s0 - gi < rows; s0 += R * step) {
        pack16<T> x[R];
#pragma unroll
        for (u32 u = 0; u < R; u++)
            if (s0 + u * step < rows && lane < packs)
                x[u] = ((const pack16<T>*)(in + (s0 + u * step) * ld))[lane];
#pragma unroll
        for (u32 u = 0; u < R; u++) {
            const u64 r = s0 + u * step;
            typename F::acc acc = f.init();
            if (r < rows && lane < packs)
#pragma unroll
                for (u32 k = 0; k < V; k++) acc = fold_step(f, acc, x[u].v[k], lane * V + k);
            acc = group_fold_warp(f, acc, g);
            if (r < rows && lane == 0) out[r] = f.done(acc);
        }
    }
}

template <typename T, typename F>
GPUK_DEV void reduce_rows(F f, typename F::out* out, const T* in, u64 rows, u64 cols, u64 ld,
                          u32 g, u32 chunks, u64 span, void* ws) {
    typedef typename F::acc A;
    const u32 V = 16 / sizeof(T), lane = threadIdx.x % g, gi = (threadIdx.x % 32) / g;
    const unsigned mask = g == 32 ? 0xffffffffu : ((1u << g) - 1u) << (gi * g);
    const u64 warp = ((u64)blockIdx.x * GPUK_BLOCK + threadIdx.x) / 32;
    const u64 warps = (u64)gridDim.x * (GPUK_BLOCK / 32), per_warp = 32 / g;
    if (chunks <= 1) {
        chunks = 1;
        span = cols;
    }
    const u64 segs = rows * chunks;
    u32* tickets = (u32*)ws;
    A* partials = (A*)(tickets + GEMM_SPLIT_TILES);
    if (cols <= (u64)g * V) {
        reduce_short_rows<SHORT_ROWS, T>(f, out, in, rows, (u32)cols, ld, g, lane, gi,
                                         warp * per_warp + gi, warps * per_warp);
        return;
    }
    /* the warp's groups take segments side by side; the loop is the same for the whole warp */
    for (u64 s0 = warp * per_warp; s0 < segs; s0 += warps * per_warp) {
        const u64 s = s0 + gi, r = s / chunks, c0 = s % chunks * span;
        const bool active = s < segs;
        A acc = f.init();
        if (active) {
            const u64 c1 = c0 + span < cols ? c0 + span : cols;
            const T* row = in + r * ld;
            u64 head = (16u - ((u64)(row + c0) & 15u)) % 16u / sizeof(T);
            if (head > c1 - c0) head = c1 - c0;
            for (u64 c = c0 + lane; c < c0 + head; c += g) acc = fold_step(f, acc, row[c], c);
            const u64 a0 = c0 + head, packs = (c1 - a0) / V;
            const pack16<T>* p = (const pack16<T>*)(row + a0);
#pragma unroll 4
            for (u64 q = lane; q < packs; q += g) {
                const pack16<T> x = p[q];
#pragma unroll
                for (u32 k = 0; k < V; k++) acc = fold_step(f, acc, x.v[k], a0 + q * V + k);
            }
            for (u64 c = a0 + packs * V + lane; c < c1; c += g) acc = fold_step(f, acc, row[c], c);
        }
        acc = group_fold(f, acc, g, mask);
        if (!active) continue;
        if (chunks == 1) {
            if (lane == 0) out[r] = f.done(acc);
            continue;
        }
        u32 last = 0;
        if (lane == 0) {
            partials[s] = acc;
            __threadfence();
            last = atomicAdd(tickets + r, 1u) == chunks - 1;
        }
        last = __shfl_sync(mask, last, (int)(gi * g));
        if (!last) continue;
        __threadfence();
        A total = f.init();
#pragma unroll 4
        for (u64 j = lane; j < chunks; j += g) total = f.join(total, fetch_l2(partials + r * chunks + j));
        total = group_fold(f, total, g, mask);
        if (lane == 0) {
            out[r] = f.done(total);
            tickets[r] = 0;
        }
    }
}

/* folds fold[k][.] (k < v) over the block's ty rows of threads, into row 0 */
template <typename F, typename A, int V>
GPUK_DEV void fold_rows_of_threads(F f, A (*fold)[GPUK_BLOCK], u32 v, u32 tx) {
    const u32 t = threadIdx.x, cy = t / tx;
    __syncthreads();
    for (u32 w = GPUK_BLOCK / tx / 2; w > 0; w /= 2) {
        if (cy < w)
#pragma unroll 1
            for (u32 k = 0; k < v; k++) fold[k][t] = f.join(fold[k][t], fold[k][t + w * tx]);
        __syncthreads();
    }
}

template <typename T, typename F>
GPUK_DEV void reduce_cols(F f, typename F::out* out, const T* in, u64 rows, u64 cols, u64 ld,
                          u32 shape, u32 chunks, u64 span, void* ws) {
    typedef typename F::acc A;
    enum { V = 16 / sizeof(T) };
    const u32 tx = shape & 0xffffu, ty = GPUK_BLOCK / tx, t = threadIdx.x, cx = t % tx, cy = t / tx;
    const u32 v = shape >> 16 ? (u32)V : 1u; /* V: cols is a multiple of V */
    const u64 c = ((u64)blockIdx.x * tx + cx) * v;
    __shared__ A fold[V][GPUK_BLOCK];
    __shared__ bool last;
    if (chunks <= 1) {
        if (blockIdx.y) return; /* the host's chunks, undone for want of a workspace */
        chunks = 1;
        span = rows;
    }
    const u64 r0 = (u64)blockIdx.y * span, r1 = r0 + span < rows ? r0 + span : rows;
    if (v > 1) {
        A acc[V];
#pragma unroll
        for (u32 k = 0; k < V; k++) acc[k] = f.init();
        if (c < cols)
#pragma unroll 4
            for (u64 r = r0 + cy; r < r1; r += ty) {
                const pack16<T> x = *(const pack16<T>*)(in + r * ld + c);
#pragma unroll
                for (u32 k = 0; k < V; k++) acc[k] = fold_step(f, acc[k], x.v[k], r);
            }
#pragma unroll
        for (u32 k = 0; k < V; k++) fold[k][t] = acc[k];
    } else {
        A acc = f.init();
        if (c < cols)
#pragma unroll 4
            for (u64 r = r0 + cy; r < r1; r += ty) acc = fold_step(f, acc, in[r * ld + c], r);
        fold[0][t] = acc;
    }
    fold_rows_of_threads<F, A, V>(f, fold, v, tx);
    const u32 n = c < cols ? (cols - c < v ? (u32)(cols - c) : v) : 0u; /* columns of thread cx */
    if (chunks == 1) {
        if (cy == 0)
            for (u32 k = 0; k < n; k++) out[c + k] = f.done(fold[k][cx]);
        return;
    }
    u32* tickets = (u32*)ws;
    A* partials = (A*)(tickets + GEMM_SPLIT_TILES);
    if (cy == 0)
        for (u32 k = 0; k < n; k++) partials[blockIdx.y * cols + c + k] = fold[k][cx];
    __threadfence();
    __syncthreads();
    if (t == 0) last = atomicAdd(tickets + blockIdx.x, 1u) == chunks - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    /* the strip's chunks folded in order: thread (cx, cy) takes chunks cy, cy + ty, ... */
    {
        A acc[V];
#pragma unroll
        for (u32 k = 0; k < V; k++) acc[k] = f.init();
#pragma unroll 4
        for (u64 j = cy; j < chunks; j += ty)
#pragma unroll
            for (u32 k = 0; k < V; k++)
                if (k < n) acc[k] = f.join(acc[k], fetch_l2(partials + j * cols + c + k));
#pragma unroll
        for (u32 k = 0; k < V; k++) fold[k][t] = acc[k];
    }
    fold_rows_of_threads<F, A, V>(f, fold, v, tx);
    if (cy == 0)
        for (u32 k = 0; k < n; k++) out[c + k] = f.done(fold[k][cx]);
    if (t == 0) tickets[blockIdx.x] = 0;
}

/* An axis reduction's kernels: one a row, one a column, and the rows of whole packs; all take
   (out, in, rows, cols, ld, shape, chunks, span, ws). 8 blocks a multiprocessor, as the host
   launches: at 36 registers a thread only 7 fitted, and the eighth ran as a second wave, a
   clear loss (bench "sum_rows_f32 8192x8192"); the rows of packs AXIS_PACKED_BLOCKS. */
#define GPUK_AXIS_KERNELS(op, T, t, F)                                                       \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, 8)                              \
    gpuk_##op##_rows_##t(F::out* out, const T* in, u64 rows, u64 cols, u64 ld, u32 shape,    \
                         u32 chunks, u64 span, void* ws) {                                   \
        reduce_rows<T>(F(), out, in, rows, cols, ld, shape, chunks, span, ws);               \
    }                                                                                        \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, 8)                              \
    gpuk_##op##_cols_##t(F::out* out, const T* in, u64 rows, u64 cols, u64 ld, u32 shape,    \
                         u32 chunks, u64 span, void* ws) {                                   \
        reduce_cols<T>(F(), out, in, rows, cols, ld, shape, chunks, span, ws);               \
    }                                                                                        \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, AXIS_PACKED_BLOCKS)             \
    gpuk__##op##_rows_packed_##t(F::out* out, const T* in, u64 rows, u64 cols, u64 ld,       \
                                 u32 shape, u32 chunks, u64 span, void* ws) {                \
        reduce_packed_rows<T>(F(), out, in, rows, cols, ld, shape);                          \
    }
// wrap gpuk_sum_rows_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 0, 0, out, in) | out[r] = in[r][0] + ... + in[r][cols-1], for every row r (rows results)
// wrap gpuk_sum_cols_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 0, 1, out, in) | out[c] = in[0][c] + ... + in[rows-1][c], for every column c (cols results)
// entry gpuk__sum_rows_packed_{t} for gpuk_sum_rows_{t} | rows of whole 16-byte packs
#define GPUK_SUM_AXIS(T, t) GPUK_AXIS_KERNELS(sum, T, t, fold_sum<T>)
// wrap gpuk_min_rows_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 1, 0, out, in) | out[r] = smallest in[r][c] (cols >= 1)
// wrap gpuk_min_cols_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 1, 1, out, in) | out[c] = smallest in[r][c] (rows >= 1)
// entry gpuk__min_rows_packed_{t} for gpuk_min_rows_{t} | rows of whole 16-byte packs
#define GPUK_MIN_AXIS(T, t) GPUK_AXIS_KERNELS(min, T, t, fold_min<T>)
// wrap gpuk_max_rows_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 1, 0, out, in) | out[r] = largest in[r][c] (cols >= 1)
// wrap gpuk_max_cols_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 1, 1, out, in) | out[c] = largest in[r][c] (rows >= 1)
// entry gpuk__max_rows_packed_{t} for gpuk_max_rows_{t} | rows of whole 16-byte packs
#define GPUK_MAX_AXIS(T, t) GPUK_AXIS_KERNELS(max, T, t, fold_max<T>)
// wrap gpuk_argmin_rows_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 2, 0, out, in) | out[r] (uint64) = the column of row r's first smallest element (cols >= 1)
// wrap gpuk_argmin_cols_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 2, 1, out, in) | out[c] (uint64) = the row of column c's first smallest element (rows >= 1)
// entry gpuk__argmin_rows_packed_{t} for gpuk_argmin_rows_{t} | rows of whole 16-byte packs
#define GPUK_ARGMIN_AXIS(T, t) GPUK_AXIS_KERNELS(argmin, T, t, GPUK_ARG_FOLD(T, true))
// wrap gpuk_argmax_rows_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 2, 0, out, in) | out[r] (uint64) = the column of row r's first largest element (cols >= 1)
// wrap gpuk_argmax_cols_{t}(gpuk_array out, gpuk_array2d in)
//      = gpuk__reduce_axis({size}, 2, 1, out, in) | out[c] (uint64) = the row of column c's first largest element (rows >= 1)
// entry gpuk__argmax_rows_packed_{t} for gpuk_argmax_rows_{t} | rows of whole 16-byte packs
#define GPUK_ARGMAX_AXIS(T, t) GPUK_AXIS_KERNELS(argmax, T, t, GPUK_ARG_FOLD(T, false))

/* ---- scan (prefix sum), single pass with decoupled look-back ----
   Each block takes the next tile number from an atomic ticket (so tiles start in order and a
   block never waits on one that has not started: no reliance on the order blocks are
   scheduled in; also faster than tile = blockIdx.x, bench "scan_inclusive_f32"), loads its
   tile into shared memory with coalesced reads, scans it, publishes its tile total, and finds
   its prefix by reading the totals of the tiles before it, 32 at a time by one warp
   (look_back_warp), until one has published a full inclusive prefix. Then it writes the tile
   out.
   in may equal out.
   Prefetch: a block that has its tile in shared memory asks L2 for tile index + ahead (the
   host picks ahead: a few tiles a multiprocessor, capped at a quarter of L2), so the block
   that takes that tile later finds it on chip; the output goes out with evict-first stores so
   it does not push the prefetched input out of L2: about a tenth of copy bandwidth (bench
   "scan_inclusive_f32"). A whole wave of resident blocks ahead is too far: tiles leave L2 unused.
   scratch: a 64-bit ticket word (low half: tiles drawn in this launch; high half: the launch's
   epoch), a 64-bit sweep cursor, then SCAN_STATUS_BYTES of status for each of `capacity`
   tiles. A status flag holds the launch's epoch above its two state bits, so stale flags from
   earlier launches never look ready and nothing needs clearing between launches. The epoch
   lives in device memory and the kernel advances it itself: the block that draws the last
   ticket resets the count and steps the epoch in one store, after every other block of the
   launch has drawn its ticket (and with it the epoch). So a launch replayed from a CUDA graph, whose arguments never
   change, still gets a fresh epoch each time. Epochs repeat after 2^30 - 1 launches; a flag
   that old must never survive, so each launch also clears the status words of 256 tiles past
   its own end at a cursor that walks the whole area: every flag is rewritten or cleared at
   least once in capacity / 256 launches, far fewer than 2^30. */
#define SCAN_FLAG_AGG 1u
#define SCAN_FLAG_INCL 2u

/* items a thread: 32 (4-byte) or 16 (8-byte), tiles of 32 KiB: faster than 16 KiB tiles (bench
   "scan_inclusive_f32") */
template <typename T> struct scan_items { enum { n = sizeof(T) == 4 ? SCAN_ITEMS_4 : SCAN_ITEMS_8 }; };

template <typename T>
GPUK_DEV T warp_inclusive_sum(T v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        T o = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v = k_add(v, o);
    }
    return v;
}

template <typename T>
GPUK_DEV T warp_total(T v) {
#pragma unroll
    for (int d = 16; d > 0; d /= 2) v = k_add(v, shfl_xor(v, d, 0xffffffffu));
    return v;
}

GPUK_DEV u32 to_bits(float v) { return __float_as_uint(v); }
GPUK_DEV u32 to_bits(int v) { return (u32)v; }
GPUK_DEV u32 to_bits(u32 v) { return v; }
GPUK_DEV void from_bits(u32 b, float* v) { *v = __uint_as_float(b); }
GPUK_DEV void from_bits(u32 b, int* v) { *v = (int)b; }
GPUK_DEV void from_bits(u32 b, u32* v) { *v = b; }

/* Tile status: a 64-bit flag word (flag in its high half) and beside it an 8-byte value.
   4-byte values ride in the flag word's low half, so flag and value arrive together in one
   8-byte store and load. 8-byte values take the second word, and the pair goes out in one
   16-byte store and comes back in one 16-byte load, which the GPU performs as a single access
   (CUB's tile status relies on the same): a tile's look-back costs one round trip to L2 and no
   fence, as the 4-byte one does (bench "scan_inclusive_f64"). Each tile's status has a 32-byte
   sector to itself, so blocks that publish and poll neighbouring tiles do not meet in one
   (bench "scan_inclusive_f32"). Only tile status is ever written to this area, so leftover
   data never passes for a flag. */
#define SCAN_STRIDE (SCAN_STATUS_BYTES / 8) /* u64 words a tile's status takes */
template <typename T, bool WIDE = (sizeof(T) > 4)> struct scan_status {
    volatile u64* words;
    GPUK_DEV explicit scan_status(void* flag_words) : words((volatile u64*)flag_words) {}
    GPUK_DEV void publish(u64 j, u32 flag, T v) {
        words[SCAN_STRIDE * j] = ((u64)flag << 32) | to_bits(v);
    }
    GPUK_DEV u32 wait(u64 j, u32 ready, T* v) {
        u64 w;
        u32 f;
        do {
            w = words[SCAN_STRIDE * j];
            f = (u32)(w >> 32);
        } while ((f & ~3u) != ready || (f & 3u) == 0);
        from_bits((u32)w, v);
        return f & 3u;
    }
};
/* A value wider than 4 bytes as the pair's low flag-word half and second word, and back: an
   8-byte value takes the second word whole (count_head, below, has its own pair). */
template <typename T> GPUK_DEV void to_pair(T v, u64* low, u64* second) {
    *low = 0;
    memcpy(second, &v, 8);
}
template <typename T> GPUK_DEV void from_pair(u64, u64 second, T* v) { memcpy(v, &second, 8); }
template <typename T> struct scan_status<T, true> {
    u64* words;
    GPUK_DEV explicit scan_status(void* flag_words) : words((u64*)flag_words) {}
    GPUK_DEV void publish(u64 j, u32 flag, T v) {
        u64 low, b;
        to_pair(v, &low, &b);
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(words + SCAN_STRIDE * j),
                     "l"(((u64)flag << 32) | low), "l"(b) : "memory");
    }
    GPUK_DEV u32 wait(u64 j, u32 ready, T* v) {
        u64 w, b;
        u32 f;
        do {
            asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(w), "=l"(b)
                         : "l"(words + SCAN_STRIDE * j) : "memory");
            f = (u32)(w >> 32);
        } while ((f & ~3u) != ready || (f & 3u) == 0);
        from_pair((u64)(u32)w, b, v);
        return f & 3u;
    }
};

/* Run-length encoding's tile value: its run heads (the count) and the position + 1 of its last
   head (0: none). Summed, counts add and the later head wins: heads grow with the tile, so the
   greatest is the last. Both fit 48 bits (the host keeps n below 2^48), so flag, count and
   head share the 16-byte pair: the flag word's low half the count's low 32 bits, the second
   word the count's high 16 bits above the head. */
struct count_head {
    u64 count, head;
    GPUK_DEV count_head() {}
    GPUK_DEV explicit count_head(int) : count(0), head(0) {}
    GPUK_DEV count_head(u64 c, u64 h) : count(c), head(h) {}
};
GPUK_DEV count_head k_add(count_head a, count_head b) {
    return count_head(a.count + b.count, a.head > b.head ? a.head : b.head);
}
GPUK_DEV count_head shfl_xor(count_head a, int m, unsigned mask) {
    return count_head(__shfl_xor_sync(mask, a.count, m), __shfl_xor_sync(mask, a.head, m));
}
GPUK_DEV void to_pair(count_head v, u64* low, u64* second) {
    *low = (u32)v.count;
    *second = (v.count >> 32) << 48 | v.head;
}
GPUK_DEV void from_pair(u64 low, u64 second, count_head* v) {
    *v = count_head(low | (second >> 48) << 32, second & ((1ull << 48) - 1));
}

/* Shared-memory index with a pad element per 128 bytes (32 4-byte, 16 8-byte elements), so
   threads reading ITEMS consecutive elements each, and threads writing 16-byte packs side by
   side, do not meet in a bank: an 8-byte element takes two banks, and a pad per 32 of them
   left every pair of threads in one (bench "scan_inclusive_f64"). */
template <typename T> struct scan_pad { enum { every = 128 / sizeof(T) }; };
template <typename T> GPUK_DEV u32 padded(u32 i) { return i + i / scan_pad<T>::every; }

/* A 16-byte store marked evict-first (st.global.cs). */
template <typename T> GPUK_DEV void store_streaming(pack16<T>* p, const pack16<T>& v) {
    uint4 u;
    memcpy(&u, &v, 16);
    __stcs((uint4*)p, u);
}

/* Asks L2 for the bytes [p, p + bytes), one 128-byte line a thread and round. */
GPUK_DEV void prefetch_l2(const char* p, u64 bytes) {
    for (u64 off = (u64)threadIdx.x * 128; off < bytes; off += (u64)blockDim.x * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(p + off));
}

/* The look-back by one warp: lane L watches tile end - L, so one round trip to L2 covers 32
   tiles, and the nearest tile with a full prefix ends the walk. Returns, in every lane, the sum
   of the values from that tile on: the prefix of the tiles before index. (The whole block, 256
   tiles a round, read eight times the status for the same answer: bench "scan_inclusive_f32".) */
template <typename T, typename STATUS>
GPUK_DEV T look_back_warp(STATUS& status, u64 index, u32 ready, u32 lane) {
    T prefix = T(0);
    for (i64 end = (i64)index - 1;; end -= 32) {
        const i64 j = end - (i64)lane;
        u32 state = SCAN_FLAG_INCL; /* tiles before 0 do not exist: done, add 0 */
        T val = T(0);
        if (j >= 0) state = status.wait((u64)j, ready, &val);
        const u32 done = __ballot_sync(0xffffffffu, state == SCAN_FLAG_INCL);
        if (done && lane > (u32)(__ffs(done) - 1)) val = T(0);
        prefix = k_add(prefix, warp_total(val));
        if (done) return prefix;
    }
}

template <typename T, bool EXCLUSIVE, typename STATUS = scan_status<T> >
GPUK_DEV void scan(T* out, const T* in, u64 n, void* scratch, u32 ahead, u64 capacity) {
    enum { ITEMS = scan_items<T>::n, TILE = GPUK_BLOCK * scan_items<T>::n };
    __shared__ T tile[TILE + TILE / scan_pad<T>::every];
    __shared__ T warp_sums[GPUK_WARPS];
    __shared__ T tile_prefix;
    __shared__ u64 tile_index;
    __shared__ u32 tile_epoch;
    __shared__ u64 sweep_from; /* ~0: this block does not sweep */
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
    const u64 ntiles = (n + TILE - 1) / TILE;
    u64* ticket = (u64*)scratch;
    u64* cursor = ticket + 1;
    volatile u64* words = (volatile u64*)(ticket + 2);
    STATUS status(ticket + 2);

    if (t == 0) {
        const u64 w = atomicAdd((unsigned long long*)ticket, 1ull);
        tile_index = (u32)w;
        tile_epoch = (u32)(w >> 32);
        sweep_from = ~0ull;
        if ((u32)w == ntiles - 1) { /* every other block has its ticket: next launch's epoch */
            *ticket = (u64)((tile_epoch + 1u) & SCAN_EPOCH_MASK) << 32;
            const u64 c = *cursor;
            sweep_from = c < capacity ? c : 0;
            *cursor = sweep_from + GPUK_BLOCK;
        }
    }
    __syncthreads();
    if (sweep_from != ~0ull && sweep_from + t >= ntiles && sweep_from + t < capacity)
        words[SCAN_STRIDE * (sweep_from + t)] = 0; /* past this launch's tiles: none reads them */
    const u32 epoch = tile_epoch;
    const u64 index = tile_index;
    const u64 base = index * TILE;
    const u32 valid = (u32)(n - base < TILE ? n - base : TILE);
    const T* src = in + base;

    enum { V = 16 / sizeof(T) };
    if (valid == TILE && aligned16(src)) { /* full tile: 16-byte loads, all issued before any use */
        pack16<T> w[ITEMS / V];
#pragma unroll
        for (int k = 0; k < ITEMS / V; k++) w[k] = ((const pack16<T>*)src)[k * GPUK_BLOCK + t];
#pragma unroll
        for (int k = 0; k < ITEMS / V; k++)
#pragma unroll
            for (int c = 0; c < V; c++) tile[padded<T>((k * GPUK_BLOCK + t) * V + c)] = w[k].v[c];
    } else if (valid == TILE) { /* full tile: no bounds tests, every load issued before any use */
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            tile[padded<T>(k * GPUK_BLOCK + t)] = src[k * GPUK_BLOCK + t];
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            u32 j = k * GPUK_BLOCK + t;
            tile[padded<T>(j)] = j < valid ? src[j] : T(0);
        }
    }
    __syncthreads();
    if (ahead && index + ahead < ntiles) {
        const u64 later = (index + ahead) * TILE;
        prefetch_l2((const char*)(in + later), (n - later < TILE ? n - later : TILE) * sizeof(T));
    }
    T run = T(0); /* this thread's total; its items are summed again at the end (from shared
                     memory, not registers: fewer registers, more blocks an SM) */
#pragma unroll
    for (int k = 0; k < ITEMS; k++) run = k_add(run, tile[padded<T>(t * ITEMS + k)]);
    /* exclusive prefix of this thread's total within the block */
    T incl = warp_inclusive_sum(run);
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    T warp_prefix = T(0), block_total = T(0);
#pragma unroll
    for (int w = 0; w < GPUK_WARPS; w++) {
        if (w < (int)warp) warp_prefix = k_add(warp_prefix, warp_sums[w]);
        block_total = k_add(block_total, warp_sums[w]);
    }
    T lane_before = __shfl_up_sync(0xffffffffu, incl, 1);
    T thread_prefix = lane == 0 ? warp_prefix : k_add(warp_prefix, lane_before);

    /* The tile is scanned within itself while warp 0 looks back, and the tile's prefix is added
       as it goes out: the look-back's wait overlaps the scan, and a barrier goes (bench
       "scan_inclusive_f64"). A float element's sum is then (tile prefix) + (the tile's own sum
       up to it), rounded as a sum's is; float scans promise no more (see the guide). */
    const u32 ready = epoch << 2;
    if (t == 0 && index > 0) status.publish(index, ready | SCAN_FLAG_AGG, block_total);
    T offset = thread_prefix;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const u32 p = padded<T>(t * ITEMS + k);
        const T inclusive = k_add(offset, tile[p]);
        tile[p] = EXCLUSIVE ? offset : inclusive;
        offset = inclusive;
    }
    if (warp == 0) {
        const T prefix = index > 0 ? look_back_warp<T>(status, index, ready, lane) : T(0);
        if (lane == 0) {
            status.publish(index, ready | SCAN_FLAG_INCL, k_add(prefix, block_total));
            tile_prefix = prefix;
        }
    }
    __syncthreads();
    const T add = tile_prefix;
    T* dst = out + base;
    if (valid == TILE && aligned16(dst)) {
#pragma unroll
        for (int k = 0; k < ITEMS / V; k++) {
            pack16<T> w;
#pragma unroll
            for (int c = 0; c < V; c++)
                w.v[c] = k_add(add, tile[padded<T>((k * GPUK_BLOCK + t) * V + c)]);
            store_streaming((pack16<T>*)dst + k * GPUK_BLOCK + t, w);
        }
    } else if (valid == TILE) {
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            dst[k * GPUK_BLOCK + t] = k_add(add, tile[padded<T>(k * GPUK_BLOCK + t)]);
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            u32 j = k * GPUK_BLOCK + t;
            if (j < valid) dst[j] = k_add(add, tile[padded<T>(j)]);
        }
    }
}

// wrap gpuk_scan_inclusive_{t}(gpuk_array out, gpuk_array in, size_t n)
//      = gpuk__scan({size}, out, in, n) | out[i] = in[0] + ... + in[i] (out may be in)
// wrap gpuk_scan_exclusive_{t}(gpuk_array out, gpuk_array in, size_t n)
//      = gpuk__scan({size}, out, in, n) | out[i] = in[0] + ... + in[i-1], out[0] = 0 (out may be in)
#define GPUK_SCAN(T, t)                                                                      \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_scan_inclusive_##t(T* out, const T* in, u64 n, void* scratch, u32 ahead, u64 capacity) { \
        scan<T, false>(out, in, n, scratch, ahead, capacity);                                  \
    }                                                                                        \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_scan_exclusive_##t(T* out, const T* in, u64 n, void* scratch, u32 ahead, u64 capacity) { \
        scan<T, true>(out, in, n, scratch, ahead, capacity);                                   \
    }

/* ---- select (stream compaction): keep the elements that pass a test, in order ----
   One pass over tiles of the scan's size, with the scan's look-back: it shares the scans'
   scratch (ticket, epoch, sweep cursor, tile status) and their protocol,
   so selects and scans may follow each other on one stream in any order. Each block draws
   its tile by ticket, loads it into registers (16-byte loads where aligned; thread t holds
   packs k * GPUK_BLOCK + t, so a tile position's order is pack round, then thread, then place
   in the pack), tests each element, and counts what it keeps per warp and round with ballots.
   A scan of those 64 counts gives every kept element its place in the tile; the block stages
   the kept elements there, compacted in shared memory, while it finds the tile's prefix (kept
   elements of earlier tiles) by look-back. Then it writes the staged run out with consecutive
   threads at consecutive addresses. Counts are 64-bit, so a tile status is the scans' 16-byte
   pair; the block of the last tile writes the total to count. Modes: SELECT_IF keeps x op
   value; SELECT_FLAGGED keeps x[i] where flags[i] != 0; COUNT_IF only counts; PARTITION_IF
   writes the kept first, then the rest in reverse order from the end (the rejected of a tile
   go after every kept one, whose number is known only at the end: from the end backwards needs
   no such number); UNIQUE keeps the
   first of each run of equal (==) elements; RLE keeps those too, and a run's length is the
   next head's position less its own: the tile's heads' positions are staged in shared memory,
   so each length goes out with consecutive threads at consecutive addresses. The tile's last
   run ends in it only where the element after the tile starts a run; else the tile its end
   falls in writes it, as the run that tile entered with, whose head is the last head before
   that tile. The look-back carries that head beside the count: each tile publishes the
   position + 1 of its last head (0: none) in the same 16-byte pair as its count (count_head),
   and the inclusive form the greatest so far. (Finding each run's last element instead, and
   writing its length there, took a quarter longer: bench "run_length_encode_i32".) */
#define SELECT_IF 0
#define SELECT_FLAGGED 1
#define SELECT_COUNT 2
#define SELECT_PARTITION 3
#define SELECT_UNIQUE 4
#define SELECT_RLE 5

/* op of the comparisons: a mask of the outcomes kept (1 less, 2 equal, 4 greater, 8 unordered:
   a NaN on one side), or SELECT_OP_FINITE. The host maps GPUK_CMP_* onto these. */
#define SELECT_OP_FINITE 16u

GPUK_DEV bool k_finite(float x) { return isfinite(x); }
GPUK_DEV bool k_finite(double x) { return isfinite(x); }
GPUK_DEV bool k_finite(int) { return true; }
GPUK_DEV bool k_finite(u32) { return true; }

template <typename T> GPUK_DEV bool select_test(T x, u32 op, T value) {
    if (op == SELECT_OP_FINITE) return k_finite(x);
    const u32 outcome = x < value ? 1u : x == value ? 2u : x > value ? 4u : 8u;
    return (outcome & op) != 0;
}

/* A tile's value in the status: its count, and for RLE its last head too */
template <int MODE> struct select_value { typedef u64 type; };
template <> struct select_value<SELECT_RLE> { typedef count_head type; };
GPUK_DEV u64 select_count(u64 v) { return v; }
GPUK_DEV u64 select_count(count_head v) { return v.count; }
GPUK_DEV u64 select_head(u64) { return 0; }
GPUK_DEV u64 select_head(count_head v) { return v.head; }
template <typename SV> GPUK_DEV SV select_own(u32 kept, u64) { return (SV)kept; }
template <> GPUK_DEV count_head select_own<count_head>(u32 kept, u64 head) {
    return count_head(kept, head);
}

/* lengths: RLE's */
template <typename T, int MODE, typename STATUS>
GPUK_DEV void select_tiles(T* out, u64* count, const T* in, const unsigned char* flags, u64 n,
                           u32 op, T value, void* scratch, u32 ahead,
                           u64 capacity, u64* lengths) {
    enum { RUNS = MODE == SELECT_UNIQUE || MODE == SELECT_RLE };
    enum { ITEMS = scan_items<T>::n, TILE = GPUK_BLOCK * scan_items<T>::n, V = 16 / sizeof(T) };
    enum { ROUNDS = ITEMS / V, COUNTS = ROUNDS * GPUK_WARPS };
    __shared__ T stage[MODE == SELECT_COUNT || MODE == SELECT_RLE ? 1 : TILE];
    __shared__ unsigned short head_at[MODE == SELECT_RLE ? TILE : 1]; /* RLE: local head places */
    __shared__ u64 warp_heads[GPUK_WARPS];
    __shared__ u64 tile_last_head; /* RLE: position + 1 of the last head before this tile */
    __shared__ u32 counts[COUNTS]; /* kept per (round, warp), then their exclusive prefixes */
    __shared__ u64 tile_prefix;
    __shared__ u32 tile_kept;
    __shared__ u64 tile_index;
    __shared__ u32 tile_epoch;
    __shared__ u64 sweep_from;
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
    const u64 ntiles = (n + TILE - 1) / TILE;
    u64* ticket = (u64*)scratch;
    u64* cursor = ticket + 1;
    volatile u64* words = (volatile u64*)(ticket + 2);
    STATUS status(ticket + 2);

    if (t == 0) { /* the scan's ticket, epoch and sweep (see scan) */
        const u64 w = atomicAdd((unsigned long long*)ticket, 1ull);
        tile_index = (u32)w;
        tile_epoch = (u32)(w >> 32);
        sweep_from = ~0ull;
        if ((u32)w == ntiles - 1) {
            *ticket = (u64)((tile_epoch + 1u) & SCAN_EPOCH_MASK) << 32;
            const u64 c = *cursor;
            sweep_from = c < capacity ? c : 0;
            *cursor = sweep_from + GPUK_BLOCK;
        }
    }
    __syncthreads();
    if (sweep_from != ~0ull && sweep_from + t >= ntiles && sweep_from + t < capacity)
        words[SCAN_STRIDE * (sweep_from + t)] = 0;
    const u32 epoch = tile_epoch;
    const u64 index = tile_index;
    const u64 base = index * TILE;
    const u32 valid = (u32)(n - base < TILE ? n - base : TILE);
    const T* src = in + base;

    /* element (k * GPUK_BLOCK + t) * V + c of the tile is w[k].v[c] */
    pack16<T> w[ROUNDS];
    if (valid == TILE && aligned16(src)) {
#pragma unroll
        for (int k = 0; k < ROUNDS; k++) w[k] = ((const pack16<T>*)src)[k * GPUK_BLOCK + t];
    } else {
#pragma unroll
        for (int k = 0; k < ROUNDS; k++)
#pragma unroll
            for (int c = 0; c < V; c++) {
                const u32 j = (k * GPUK_BLOCK + t) * V + c;
                w[k].v[c] = j < valid ? src[j] : T(0);
            }
    }
    if (ahead && index + ahead < ntiles) {
        const u64 later = (index + ahead) * TILE;
        prefetch_l2((const char*)(in + later), (n - later < TILE ? n - later : TILE) * sizeof(T));
    }
    /* keep: bit k * V + c for element (k, c) of this thread (ITEMS <= 32); last_head (RLE):
       position + 1 of this thread's last head */
    u32 keep = 0;
    u64 last_head = 0;
#pragma unroll
    for (int k = 0; k < ROUNDS; k++) {
        T prev = T(0); /* the element before (k, 0) */
        if (RUNS) {
            prev = __shfl_up_sync(0xffffffffu, w[k].v[V - 1], 1);
            const u64 j = base + (u64)(k * GPUK_BLOCK + t) * V;
            if (lane == 0 && j > 0 && j - base < valid) prev = in[j - 1];
        }
#pragma unroll
        for (int c = 0; c < V; c++) {
            const u32 j = (k * GPUK_BLOCK + t) * V + c;
            bool kept;
            if (MODE == SELECT_FLAGGED) kept = j < valid && flags[base + j] != 0;
            else if (RUNS)
                kept = j < valid &&
                       (base + j == 0 || !(w[k].v[c] == (c ? w[k].v[c - 1] : prev)));
            else kept = j < valid && select_test(w[k].v[c], op, value);
            keep |= (u32)kept << (k * V + c);
            if (MODE == SELECT_RLE && kept) last_head = base + j + 1;
        }
        u32 total = 0;
#pragma unroll
        for (int c = 0; c < V; c++)
            total += __popc(__ballot_sync(0xffffffffu, (keep >> (k * V + c)) & 1u));
        if (lane == 0) counts[k * GPUK_WARPS + warp] = total;
    }
    if (MODE == SELECT_RLE) { /* the tile's last head, per warp */
#pragma unroll
        for (int d = 16; d > 0; d /= 2) {
            const u64 o = __shfl_xor_sync(0xffffffffu, last_head, d);
            last_head = o > last_head ? o : last_head;
        }
        if (lane == 0) warp_heads[warp] = last_head;
    }
    __syncthreads();
    if (warp == 0) { /* exclusive scan of the COUNTS (<= 64) counts, two a lane */
        const u32 a = 2 * lane < COUNTS ? counts[2 * lane] : 0;
        const u32 b = 2 * lane + 1 < COUNTS ? counts[2 * lane + 1] : 0;
        const u32 incl = warp_inclusive_sum(a + b);
        if (2 * lane < COUNTS) counts[2 * lane] = incl - a - b;
        if (2 * lane + 1 < COUNTS) counts[2 * lane + 1] = incl - b;
        if (lane == 31) tile_kept = incl;
    }
    __syncthreads();
    const u32 kept_here = tile_kept;
    const u32 ready = epoch << 2;
    typedef typename select_value<MODE>::type SV;
    SV own = SV(0);
    if (t == 0) { /* published before the staging, so later tiles wait less */
        u64 h = 0; /* RLE: the tile's last head */
        if (MODE == SELECT_RLE)
#pragma unroll
            for (int v = 0; v < GPUK_WARPS; v++) h = warp_heads[v] > h ? warp_heads[v] : h;
        own = select_own<SV>(kept_here, h);
        status.publish(index, ready | (index == 0 ? SCAN_FLAG_INCL : SCAN_FLAG_AGG), own);
        tile_prefix = 0;
        tile_last_head = 0; /* index 0: never read */
    }
    if (MODE != SELECT_COUNT) { /* stage: kept at their place, PARTITION's rest from the end */
        const u32 lt = (1u << lane) - 1u;
#pragma unroll
        for (int k = 0; k < ROUNDS; k++) {
            u32 place = counts[k * GPUK_WARPS + warp];
#pragma unroll
            for (int c = 0; c < V; c++)
                place += __popc(__ballot_sync(0xffffffffu, (keep >> (k * V + c)) & 1u) & lt);
#pragma unroll
            for (int c = 0; c < V; c++) {
                const u32 j = (k * GPUK_BLOCK + t) * V + c;
                if (MODE == SELECT_RLE) {
                    if ((keep >> (k * V + c)) & 1u) head_at[place++] = (unsigned short)j;
                } else if ((keep >> (k * V + c)) & 1u) stage[place++] = w[k].v[c];
                else if (MODE == SELECT_PARTITION && j < valid)
                    stage[valid - 1 - (j - place)] = w[k].v[c];
            }
        }
    }
    __syncthreads();
    if (index > 0) {
        if (warp == 0) {
            const SV prefix = look_back_warp<SV>(status, index, ready, lane);
            if (lane == 0) {
                status.publish(index, ready | SCAN_FLAG_INCL, k_add(prefix, own));
                tile_prefix = select_count(prefix);
                if (MODE == SELECT_RLE) tile_last_head = select_head(prefix);
            }
        }
        __syncthreads();
    }
    const u64 before = tile_prefix;
    if (index == ntiles - 1 && t == 0) *count = before + kept_here;
    if (MODE == SELECT_COUNT) return;
    if (MODE == SELECT_RLE) { /* values at the heads straight out; lengths from the heads */
        const u32 lt = (1u << lane) - 1u;
#pragma unroll
        for (int k = 0; k < ROUNDS; k++) {
            u32 place = counts[k * GPUK_WARPS + warp];
#pragma unroll
            for (int c = 0; c < V; c++)
                place += __popc(__ballot_sync(0xffffffffu, (keep >> (k * V + c)) & 1u) & lt);
#pragma unroll
            for (int c = 0; c < V; c++)
                if ((keep >> (k * V + c)) & 1u) out[before + place++] = w[k].v[c];
        }
        /* A run's length is the next head's place less its own, run p of the tile's at
           before + p. The tile's last run ends here only where the element after the tile
           starts a run (or there is none); else a later tile writes it, as the run that tile
           entered with. The run this tile entered with (its first element not a head) ends at
           the tile's first head, or with the tile's end where that ends a run. */
        for (u32 p = t; p + 1 < kept_here; p += GPUK_BLOCK)
            __stcs(lengths + before + p, (u64)(head_at[p + 1] - head_at[p]));
        if (t == 0) {
            const u64 after = base + valid;
            const bool ends = after == n || !(in[after] == in[after - 1]);
            if (kept_here && ends)
                lengths[before + kept_here - 1] = valid - head_at[kept_here - 1];
            if (index > 0 && (kept_here == 0 || head_at[0] != 0) && (kept_here || ends))
                lengths[before - 1] =
                    base + (kept_here ? head_at[0] : valid) - (tile_last_head - 1);
        }
        return;
    }
    T* dst = out + before;
    for (u32 i = t; i < kept_here; i += GPUK_BLOCK) __stcs(dst + i, stage[i]);
    if (MODE == SELECT_PARTITION) { /* rejected before this tile: base - before */
        T* rest = out + (n - (base - before) - valid);
        for (u32 i = kept_here + t; i < valid; i += GPUK_BLOCK) __stcs(rest + i, stage[i]);
    }
}

// wrap gpuk_select_if_{t}(gpuk_array out, gpuk_array count, gpuk_array in, size_t n, uint32_t op, {T} value)
//      = gpuk__select({size}, 0, &out, count, in, NULL, NULL, n, op, &value)
//      | out = the in[i] for which in[i] op value holds (op a gpuk_cmp), in order; count[0] (uint64) = how many; out may be in
#define GPUK_SELECT_IF(T, t) GPUK_SELECT_ONE(select_if_##t, T, SELECT_IF, scan_status<u64>)
// wrap gpuk_select_flagged_{t}(gpuk_array out, gpuk_array count, gpuk_array in, gpuk_array flags, size_t n)
//      = gpuk__select({size}, 1, &out, count, in, &flags, NULL, n, 0, NULL)
//      | out = the in[i] whose flags[i] (uint8) is not 0, in order; count[0] (uint64) = how many; out may be in
#define GPUK_SELECT_FLAGGED(T, t) \
    GPUK_SELECT_ONE(select_flagged_##t, T, SELECT_FLAGGED, scan_status<u64>)
// wrap gpuk_count_if_{t}(gpuk_array count, gpuk_array in, size_t n, uint32_t op, {T} value)
//      = gpuk__select({size}, 2, NULL, count, in, NULL, NULL, n, op, &value)
//      | count[0] (uint64) = the number of in[i] for which in[i] op value holds (op a gpuk_cmp)
#define GPUK_COUNT_IF(T, t) GPUK_SELECT_ONE(count_if_##t, T, SELECT_COUNT, scan_status<u64>)
// wrap gpuk_partition_if_{t}(gpuk_array out, gpuk_array count, gpuk_array in, size_t n, uint32_t op, {T} value)
//      = gpuk__select({size}, 3, &out, count, in, NULL, NULL, n, op, &value)
//      | out[0, count) = the in[i] for which in[i] op value holds, in order; out[count, n) = the others, in reverse order; count[0] (uint64) = how many kept
#define GPUK_PARTITION_IF(T, t) \
    GPUK_SELECT_ONE(partition_if_##t, T, SELECT_PARTITION, scan_status<u64>)
// wrap gpuk_unique_{t}(gpuk_array out, gpuk_array count, gpuk_array in, size_t n)
//      = gpuk__select({size}, 4, &out, count, in, NULL, NULL, n, 0, NULL)
//      | out = the first element of each run of equal (==) consecutive in[i], in order; count[0] (uint64) = how many
#define GPUK_UNIQUE(T, t) GPUK_SELECT_ONE(unique_##t, T, SELECT_UNIQUE, scan_status<u64>)
// wrap gpuk_run_length_encode_{t}(gpuk_array values, gpuk_array lengths, gpuk_array count, gpuk_array in, size_t n)
//      = gpuk__select({size}, 5, &values, count, in, NULL, &lengths, n, 0, NULL)
//      | values = the first element of each run of equal (==) consecutive in[i], lengths (uint64) = its length, in order; count[0] (uint64) = the number of runs; n below 2^48
#define GPUK_RUN_LENGTH_ENCODE(T, t) \
    GPUK_SELECT_ONE(run_length_encode_##t, T, SELECT_RLE, scan_status<count_head>)
#define GPUK_SELECT_ONE(name, T, mode, S)                                                    \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_##name(T* out, u64* count, const T* in, const unsigned char* flags, u64 n, u32 op,  \
                T value, void* scratch, u32 ahead, u64 capacity, u64* lengths) {             \
        select_tiles<T, mode, S>(out, count, in, flags, n, op, value, scratch, ahead,           \
                                 capacity, lengths);                                         \
    }

/* ---- matrix multiply: C = alpha * op(A) * op(B) + beta * C, row-major ----
   One main loop (gemm_run) for every type and variant; a "policy" does the math. The block's
   256 threads stage BK-wide k-slices of op(A) (TILE x BK) and op(B) (BK x TILE) in shared
   memory and the policy adds each slice's product to the TILE x TILE accumulators it keeps in
   registers. B's stage is k-major (row l of the slice at l * LDB); A's is k-major too
   (element l of row i at l * LDA + i) unless the policy keeps it m-major (P::A_MMAJOR: row i
   at i * LDA, its k contiguous), which lets A's rows go by 16-byte copies like B's.
   Staging:
   - baseline (any GPU): the next slice is loaded into registers while the policy works on the
     current one, then stored to the other of two shared buffers (one barrier a slice);
   - sm_80 and newer: cp.async copies each element straight into the (STAGES - 1)-th next of
     P::STAGES shared buffers, so STAGES - 1 slices are in flight while the policy works.
     Where the tile lies wholly inside C, the slice is whole and the operands are as-is,
     16-byte aligned rows (the common case), each thread has one source pointer an operand
     and constant steps: no index math or bounds checks (those cost a fifth of f32 GEMM's
     speed: bench "sgemm 4096^3"). Anything else (edge tiles, the last partial slice,
     transposes, misalignment) copies element by element, zero-filled.
   Elements outside op(A) or op(B) read as 0, so any m, n, k, row stride and element
   alignment works; op(X) = X^T only changes which index walks memory.
   The work: one job a (batch, split, tile row, tile column), walked grid-stride by a 1-D grid,
   so any grid is correct and the host picks it for speed only. Split-K: job part s of a tile
   sums k in [s * kper, (s + 1) * kper); each part stores its accumulators to the workspace,
   and the part that arrives last (a per-tile counter, reset by that part) adds all parts in
   the order s = 0, 1, ... (so results do not depend on timing) and writes C.
   Epilogue: beta = 0: C is not read (a NaN in C does not survive). */
struct gemm_args {
    u64 m, n, k, ldc, lda, ldb, stride_c, stride_a, stride_b;
    u32 trans_a, trans_b, batch, splits;
    u32* ws; /* splits > 1: a counter a tile, then the parts (see gemm_finish) */
};

/* The SIMT policy (FP32/FP64 FMA, no tensor cores): 16 x 16 threads, each TM x TM outputs
   (8 x 8 floats of a 128 tile, 4 x 4 doubles of a 64 tile) as 2 x 2 groups of G x G, G the
   elements in 16 bytes, so every shared-memory read is 16 bytes: thread (tx, ty) has rows
   ty * G + {0..G-1} and TILE / 2 more, columns likewise with tx. A warp reads 2 distinct
   16-byte A words (broadcast) and 16 distinct B words a step. PAD = G keeps rows 16-byte
   aligned and staggers the k-major stores of an operand whose k index is contiguous. */
template <typename T> struct gemm_simt {
    enum { TILE = sizeof(T) == 4 ? GEMM_TILE_4 : GEMM_TILE_8, BK = 8, G = 16 / sizeof(T), PAD = G,
           TM = TILE / 16, NACC = TM * TM, A_MMAJOR = 0, LDA = TILE + PAD, LDB = TILE + PAD, STAGES = 3, DYN = 0,
           TILE_M = TILE, TILE_N = TILE, THREADS = GPUK_BLOCK, MINB = 1 };
    GPUK_DEV static u32 bswz(u32) { return 0; }
    T acc[NACC];
    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = T(0);
    }
    GPUK_DEV void step(const T* as, const T* bs) {
        const u32 tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
        for (int l = 0; l < BK; l++) {
            T x[TM], y[TM];
#pragma unroll
            for (int g = 0; g < 2; g++) {
                const pack16<T> pa = *(const pack16<T>*)(as + l * (TILE + PAD) + g * (TILE / 2) + ty * G);
                const pack16<T> pb = *(const pack16<T>*)(bs + l * (TILE + PAD) + g * (TILE / 2) + tx * G);
#pragma unroll
                for (int u = 0; u < G; u++) {
                    x[g * G + u] = pa.v[u];
                    y[g * G + u] = pb.v[u];
                }
            }
#pragma unroll
            for (int r = 0; r < TM; r++)
#pragma unroll
                for (int c = 0; c < TM; c++) acc[r * TM + c] = fma(x[r], y[c], acc[r * TM + c]);
        }
    }
    GPUK_DEV u32 row(int i) const { const u32 r = i / TM; return r / G * (TILE / 2) + threadIdx.x / 16 * G + r % G; }
    GPUK_DEV u32 col(int i) const { const u32 c = i % TM; return c / G * (TILE / 2) + threadIdx.x % 16 * G + c % G; }
};

/* Baseline staging of one operand's share of a slice: TILE * BK elements, PER a thread, into
   a k-major stage. kcontig: the k index is contiguous in memory (A as-is, B transposed);
   consecutive threads then take consecutive k of a row, else consecutive rows (columns of B)
   of one k, so loads are coalesced either way. Slots past the matrix (mn >= mn_end or
   k >= k_end) read as 0. */
template <typename T, int TILE, int BK, int LD> struct gemm_operand {
    enum { PER = TILE * BK / GPUK_BLOCK };
    const T* x;
    u64 ld, mn0, mn_end;
    bool kcontig;
    GPUK_DEV u32 mn(int e) const { const u32 q = e * GPUK_BLOCK + threadIdx.x; return kcontig ? q / BK : q % TILE; }
    GPUK_DEV u32 kk(int e) const { const u32 q = e * GPUK_BLOCK + threadIdx.x; return kcontig ? q % BK : q / TILE; }
    GPUK_DEV void fetch(u64 k0, u64 k_end, T (&v)[PER]) const {
#pragma unroll
        for (int e = 0; e < PER; e++) {
            const u64 r = mn0 + mn(e), c = k0 + kk(e);
            const T* const at = kcontig ? x + r * ld + c : x + c * ld + r;
            v[e] = r < mn_end && c < k_end ? *at : T(0);
        }
    }
    GPUK_DEV void put(T* s, const T (&v)[PER]) const {
#pragma unroll
        for (int e = 0; e < PER; e++) s[kk(e) * LD + mn(e)] = v[e];
    }
};

/* cp.async (sm_80+): 16 bytes, or one element that reads as 0 where !in (src-size 0). */
GPUK_DEV void cp_async16(const void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((u32)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
}
/* The first bytes (0 to 16) of src, the rest of the 16 zeros (src is not read where bytes is 0:
   any valid address will do) */
GPUK_DEV void cp_async16_n(const void* dst, const void* src, u32 bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((u32)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(bytes)
                 : "memory");
}
/* 16 bytes, or 16 zeros where !in */
GPUK_DEV void cp_async16_in(const void* dst, const void* src, bool in) {
    cp_async16_n(dst, src, in ? 16u : 0u);
}
template <typename T> GPUK_DEV void cp_async_elem(const T* dst, const T* src, bool in) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"((u32)__cvta_generic_to_shared(dst)),
                 "l"(src), "n"(sizeof(T)), "r"(in ? (u32)sizeof(T) : 0u)
                 : "memory");
}
GPUK_DEV void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> GPUK_DEV void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

/* TMA and mbarriers (sm_90+; shared-memory addresses as 32-bit): a tensor map is the driver's
   CUtensorMap (cuTensorMapEncodeTiled, 128 bytes on a 64-byte boundary), passed by value as a
   __grid_constant__ parameter. A box's first coordinate must make a 16-byte aligned address
   (H100: a box at column -1 of an int32 map faults as an illegal instruction; -4 works). */
struct __align__(64) tensor_map { u64 v[16]; };
GPUK_DEV u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }
GPUK_DEV void mbar_init(u32 bar, u32 count) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory"); }
GPUK_DEV void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
GPUK_DEV void mbar_arrive(u32 bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory"); }
GPUK_DEV void mbar_expect_tx(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
GPUK_DEV void mbar_wait(u32 bar, u32 parity) {
    asm volatile("{\n.reg .pred p;\nMBAR_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra MBAR_WAIT;\n}" ::"r"(bar), "r"(parity)
                 : "memory");
}
/* generic-proxy accesses to shared memory before this, async-proxy (TMA) ones after */
GPUK_DEV void proxy_fence_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
/* the box of map at (x, y) (x the contiguous dimension) into dst, counted on bar */
GPUK_DEV void tma_load_2d(u32 dst, const tensor_map& map, int x, int y, u32 bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(&map), "r"(x), "r"(y), "r"(bar) : "memory");
}

/* Adds the policy's accumulators to C (through the workspace when k is split; see above). */
template <typename T, typename P>
GPUK_DEV void gemm_finish(P& p, const gemm_args& g, T* c, T alpha, T beta, u64 row0, u64 col0, u64 tile,
                          u64 tiles, u32 s) {
    const u32 t = threadIdx.x;
    if (g.splits > 1) {
        /* parts: [tile][split][NACC][256 threads], after GEMM_SPLIT_TILES counters, which only
           ever hold counters (so a workspace reused by a call of another shape starts at 0) */
        T* part = (T*)(g.ws + GEMM_SPLIT_TILES) + tile * g.splits * (P::NACC * P::THREADS);
#pragma unroll
        for (int i = 0; i < P::NACC; i++) part[((u64)s * P::NACC + i) * P::THREADS + t] = p.acc[i];
        __threadfence();
        __syncthreads();
        bool last = false;
        if (t == 0) {
            last = atomicAdd(g.ws + tile, 1u) == g.splits - 1;
            if (last) g.ws[tile] = 0; /* every part has counted: ready for the next launch */
        }
        /* thread 0's answer to all (a barrier, not a shared word: TF32's stages fill all of
           the 48 KB of static shared memory) */
        if (!__syncthreads_or(last)) return;
        __threadfence();
        /* every part from the workspace, this one's too (this thread wrote it), in part order */
        p.zero();
#pragma unroll 1
        for (u32 q = 0; q < g.splits; q++) {
            const T* pq = part + (u64)q * P::NACC * P::THREADS + t;
#pragma unroll
            for (int i = 0; i < P::NACC; i++) p.acc[i] += __ldcg(pq + i * P::THREADS);
        }
    }
#pragma unroll
    for (int i = 0; i < P::NACC; i++) {
        const u64 r = row0 + p.row(i), cc = col0 + p.col(i);
        if (r >= g.m || cc >= g.n) continue;
        T* q = c + r * g.ldc + cc;
        *q = beta == T(0) ? alpha * p.acc[i] : fma(beta, *q, alpha * p.acc[i]);
    }
}

/* The sm_80+ stage loader of one job (see the family's comment): copies slice k0 of op(A) and
   op(B) into stage st = [A: TILE x LDA or BK x LDA][B: BK x LDB]. B's 16-byte group cg of row l
   lands at group cg ^ P::bswz(l) (a policy's bank-conflict swizzle; the element path agrees). */
template <typename T, typename P> struct gemm_stager {
    enum {
        TM = P::TILE_M, TN = P::TILE_N, BK = P::BK, LDA = P::LDA, LDB = P::LDB, G = 16 / sizeof(T), NT = P::THREADS,
        A_ELEMS = P::A_MMAJOR ? TM * LDA : BK * LDA, STAGE = A_ELEMS + BK * LDB,
        /* fast A, m-major: CH 16-byte chunks a row, RPE rows a round, NA16 copies a thread */
        CH = BK / G, RPE = NT / (CH ? CH : 1), NA16 = TM * CH / NT,
        /* fast A, k-major: element copies, k = t % 8 + 8 (e % KH), row t / 8 + NT / 8 (e / KH) */
        KH = BK / 8, NAE = TM * BK / NT,
        /* fast B: CHB 16-byte chunks a row of TN, RPB rows a round, NB copies a thread */
        CHB = TN / G, RPB = NT / CHB, NB = BK * CHB / NT,
        NSLOW_A = TM * BK / NT, NSLOW_B = TN * BK / NT /* element copies a thread */
    };
    static_assert((A_ELEMS * sizeof(T)) % 16 == 0 && (STAGE * sizeof(T)) % 16 == 0, "16-byte stages");
    static_assert(P::A_MMAJOR ? (CH >= 1 && NT % CH == 0 && TM * CH % NT == 0)
                              : (BK % 8 == 0 && TM * BK % NT == 0), "A's fast path");
    static_assert(NT % CHB == 0 && BK * CHB % NT == 0 && TN * BK % NT == 0, "B's fast path");
    const gemm_args& g;
    const T *xa, *xb, *fa, *fb;
    u64 row0, col0, k_end, fa_step, fb_step;
    u32 fa_dst;
    bool fast;
    /* An edge tile (part of it past m or n) takes the fast path's copies too, each under a
       predicate (rows past m and B's 16-byte groups past n read as zeros), where n is a
       multiple of G so that no group straddles n: element copies cost the edge tiles a
       third of their speed, and with every tile in flight at once (1000^3: 64 tiles, 15 at
       the edges) the slowest tile is the product's time (bench_shapes "dgemm 1000^3": 1.5x).
       The predicates are worked out a slice at a time and edge tiles take the general loop.
       Both element sizes (bench_gemm "sgemm 1000^3", "dgemm 1000^3"); the whole tiles lost
       nothing by it. */
    bool edge;
    const T *ra, *rb; /* the fast path's sources at the next slice (loads come in k order): a
                         pointer advanced each slice, not k0 * ldb and each copy's row step
                         recomputed (at 127 registers the compiler kept none of them) */
    GPUK_DEV gemm_stager(const gemm_args& g_, const T* a, const T* b, u64 r0, u64 c0, u64 ke)
        : g(g_), xa(a), xb(b), row0(r0), col0(c0), k_end(ke) {
        const u32 t = threadIdx.x;
        fast = !g.trans_a && !g.trans_b && row0 + TM <= g.m && col0 + TN <= g.n && aligned16(xb) &&
               g.ldb % G == 0 && (!P::A_MMAJOR || (aligned16(xa) && g.lda % G == 0));
        edge = !fast && !g.trans_a && !g.trans_b && aligned16(xb) && g.ldb % G == 0 &&
                   (!P::A_MMAJOR || (aligned16(xa) && g.lda % G == 0)) && g.n % G == 0;
        /* the fast path's sources at k = 0 (A moves +k0, B +k0 * ldb) and A's place in a stage */
        fa = P::A_MMAJOR ? xa + (row0 + t / CH) * g.lda + (t % CH) * G : xa + (row0 + t / 8) * g.lda + t % 8;
        fa_step = (u64)(P::A_MMAJOR ? RPE : NT / 8) * g.lda;
        fa_dst = P::A_MMAJOR ? (t / CH) * LDA + (t % CH) * G : (t % 8) * LDA + t / 8;
        fb = xb + (u64)(t / CHB) * g.ldb + col0 + (t % CHB) * G;
        fb_step = (u64)RPB * g.ldb;
    }
    GPUK_DEV void start(u64 k0) { ra = fa + k0; rb = fb + k0 * g.ldb; } /* the first slice's k */
    /* the next slice, whole, by the fast path (the caller checked both) */
    GPUK_DEV void load_fast(T* st) {
        const u32 t = threadIdx.x;
        T* const sa = st;
        T* const sb = st + A_ELEMS;
        const T* q = ra;
        if constexpr (P::A_MMAJOR) {
#pragma unroll
            for (int e = 0; e < NA16; e++, q += fa_step) cp_async16(sa + fa_dst + e * RPE * LDA, q);
        } else {
#pragma unroll
            for (int e = 0; e < NAE; e++) {
                cp_async_elem(sa + fa_dst + (e % KH) * 8 * LDA + (e / KH) * (NT / 8), q + (e % KH) * 8, true);
                if (e % KH == KH - 1) q += fa_step;
            }
        }
        q = rb;
#pragma unroll
        for (int e = 0; e < NB; e++, q += fb_step) {
            const u32 l = e * RPB + t / CHB;
            cp_async16(sb + l * LDB + ((t % CHB) ^ P::bswz(l)) * G, q);
        }
        ra += BK;
        rb += (u64)BK * g.ldb;
    }
    /* the next slice, whole, of an edge tile: the fast path's copies under their predicates */
    GPUK_DEV void load_edge(T* st) {
        const u32 t = threadIdx.x;
        T* const sa = st;
        T* const sb = st + A_ELEMS;
        const bool b_in = col0 + (t % CHB) * G < g.n;
        const T* q = ra;
        if constexpr (P::A_MMAJOR) {
#pragma unroll
            for (int e = 0; e < NA16; e++, q += fa_step) {
                const bool in = row0 + t / CH + (u64)e * RPE < g.m;
                cp_async16_in(sa + fa_dst + e * RPE * LDA, in ? q : xa, in);
            }
        } else {
#pragma unroll
            for (int e = 0; e < NAE; e++) {
                const bool in = row0 + t / 8 + (u64)(e / KH) * (NT / 8) < g.m;
                cp_async_elem(sa + fa_dst + (e % KH) * 8 * LDA + (e / KH) * (NT / 8), in ? q + (e % KH) * 8 : xa, in);
                if (e % KH == KH - 1) q += fa_step;
            }
        }
        q = rb;
#pragma unroll
        for (int e = 0; e < NB; e++, q += fb_step) {
            const u32 l = e * RPB + t / CHB;
            cp_async16_in(sb + l * LDB + ((t % CHB) ^ P::bswz(l)) * G, b_in ? q : xb, b_in);
        }
        ra += BK;
        rb += (u64)BK * g.ldb;
    }
    /* the next slice, at k0: fast where it can be, else element by element */
    GPUK_DEV void load(T* st, u64 k0) {
        const u32 t = threadIdx.x;
        T* const sa = st;
        T* const sb = st + A_ELEMS;
        if (fast && k0 + BK <= k_end) {
            load_fast(st);
            return;
        }
        if (edge && k0 + BK <= k_end) {
            load_edge(st);
            return;
        }
        ra += BK; /* kept in step with k0 */
        rb += (u64)BK * g.ldb;
#pragma unroll
        for (int e = 0; e < NSLOW_A; e++) {
            const u32 q = e * NT + t;
            const u32 i = g.trans_a ? q % TM : q / BK, l = g.trans_a ? q / TM : q % BK;
            const u64 r = row0 + i, kk = k0 + l;
            const bool in = r < g.m && kk < k_end;
            cp_async_elem(sa + (P::A_MMAJOR ? i * LDA + l : l * LDA + i),
                          in ? (g.trans_a ? xa + kk * g.lda + r : xa + r * g.lda + kk) : xa, in);
        }
#pragma unroll
        for (int e = 0; e < NSLOW_B; e++) {
            const u32 q = e * NT + t;
            const u32 j = g.trans_b ? q / BK : q % TN, l = g.trans_b ? q % BK : q / TN;
            const u64 cc = col0 + j, kk = k0 + l;
            const bool in = cc < g.n && kk < k_end;
            cp_async_elem(sb + l * LDB + ((j / G) ^ P::bswz(l)) * G + j % G,
                          in ? (g.trans_b ? xb + cc * g.ldb + kk : xb + kk * g.ldb + cc) : xb, in);
        }
    }
};

template <typename T, typename P, bool ASYNC>
GPUK_DEV void gemm_run(const gemm_args& g, T* c, const T* a, const T* b, T alpha, T beta) {
    enum { TILE = P::TILE, BK = P::BK, LD = P::TILE + P::PAD, STAGES = ASYNC ? P::STAGES : 2,
           STAGE = ASYNC ? gemm_stager<T, P>::STAGE : BK * LD }; /* baseline: A's and B's stages apart */
    static_assert(P::DYN || !ASYNC || STAGES * STAGE * sizeof(T) <= 48 * 1024, "static shared memory: 48 KB");
    /* a policy with DYN keeps its stages in dynamic shared memory (the host passes GEMM_F64_SMEM) */
    extern __shared__ __align__(16) unsigned char gemm_dyn_smem[];
    __shared__ __align__(16) T sm_static[P::DYN ? 1 : ASYNC ? STAGES * STAGE : 2 * STAGES * STAGE];
    T* const sm = P::DYN ? (T*)gemm_dyn_smem : sm_static;
    static_assert(ASYNC || (P::TILE_M == TILE && P::TILE_N == TILE), "the baseline's tiles are square");
    const u64 ntn = (g.n + P::TILE_N - 1) / P::TILE_N, ntm = (g.m + P::TILE_M - 1) / P::TILE_M, tiles = ntn * ntm;
    const u64 jobs = tiles * g.splits * g.batch;
    /* k a part: a multiple of BK, so parts start on slice boundaries */
    const u64 kper = ((g.k + g.splits - 1) / g.splits + BK - 1) / BK * BK;
    for (u64 w = blockIdx.x; w < jobs; w += gridDim.x) {
        const u64 tile = w % tiles, z = w / tiles, bi = z / g.splits;
        const u32 s = (u32)(z % g.splits);
        const u64 row0 = tile / ntn * P::TILE_M, col0 = tile % ntn * P::TILE_N;
        const u64 k_begin = s * kper, k_end = k_begin + kper < g.k ? k_begin + kper : g.k;
        P p;
        p.zero();
        if constexpr (ASYNC) {
            gemm_stager<T, P> ld(g, a + bi * g.stride_a, b + bi * g.stride_b, row0, col0, k_end);
            ld.start(k_begin);
#pragma unroll
            for (int st = 0; st < STAGES - 1; st++) {
                const u64 k0 = k_begin + (u64)st * BK;
                if (k0 < k_end) ld.load(sm + st * STAGE, k0);
                cp_async_commit();
            }
            u32 cur = 0;
            u64 k0 = k_begin;
            /* while the slice loaded next is whole and the tile fast: the fast copy alone, no
               test a slice (86 % of a slice's instructions FFMA, not 80 %: bench "sgemm 4096^3") */
            if (ld.fast)
                for (; k0 + (u64)STAGES * BK <= k_end; k0 += BK) {
                    cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    const u32 next = cur == 0 ? STAGES - 1 : cur - 1;
                    ld.load_fast(sm + next * STAGE);
                    cp_async_commit();
                    p.step(sm + cur * STAGE, sm + cur * STAGE + gemm_stager<T, P>::A_ELEMS);
                    cur = cur + 1 == STAGES ? 0 : cur + 1;
                }

            for (; k0 < k_end; k0 += BK) {
                cp_async_wait<STAGES - 2>();
                __syncthreads(); /* slice k0 is in, and every thread is done with the buffer refilled next */
                const u64 kn = k0 + (u64)(STAGES - 1) * BK;
                const u32 next = cur == 0 ? STAGES - 1 : cur - 1; /* (cur + STAGES - 1) % STAGES */
                if (kn < k_end) ld.load(sm + next * STAGE, kn);
                cp_async_commit();
                p.step(sm + cur * STAGE, sm + cur * STAGE + gemm_stager<T, P>::A_ELEMS);
                cur = cur + 1 == STAGES ? 0 : cur + 1;
            }
            cp_async_wait<0>();
        } else if (k_begin < k_end) {
            gemm_operand<T, TILE, BK, LD> la, lb;
            la.x = a + bi * g.stride_a; la.ld = g.lda; la.mn0 = row0; la.mn_end = g.m; la.kcontig = g.trans_a == 0;
            lb.x = b + bi * g.stride_b; lb.ld = g.ldb; lb.mn0 = col0; lb.mn_end = g.n; lb.kcontig = g.trans_b != 0;
            T* const sa = sm;                 /* [2][BK * LD] */
            T* const sb = sm + STAGES * STAGE; /* [2][BK * LD] */
            T va[gemm_operand<T, TILE, BK, LD>::PER], vb[gemm_operand<T, TILE, BK, LD>::PER];
            la.fetch(k_begin, k_end, va);
            lb.fetch(k_begin, k_end, vb);
            la.put(sa, va);
            lb.put(sb, vb);
            __syncthreads();
            u32 cur = 0;
            for (u64 k0 = k_begin; k0 < k_end; k0 += BK) {
                const bool more = k0 + BK < k_end;
                if (more) {
                    la.fetch(k0 + BK, k_end, va);
                    lb.fetch(k0 + BK, k_end, vb);
                }
                p.step(sa + cur * STAGE, sb + cur * STAGE);
                if (more) {
                    la.put(sa + (cur ^ 1) * STAGE, va);
                    lb.put(sb + (cur ^ 1) * STAGE, vb);
                }
                __syncthreads();
                cur ^= 1;
            }
        }
        __syncthreads(); /* the next job refills the buffers */
        gemm_finish<T>(p, g, c + bi * g.stride_c, alpha, beta, row0, col0, tile, tiles, s);
    }
}

/* ---- tensor-core policies (sm_80 and newer; their PTX needs .target sm_80, or sm_90 for the
   m16n8kK FP64 shapes), mma.sync through inline PTX. 8 warps as 2 (m) x 4 (n).
   Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k8 / m8n8k4 / m16n8k{4,8,16}"),
   g = lane >> 2, q = lane & 3:
     m16n8kK A (16 x K): a[r], r < K/2:  row g + 8 * (r & 1), k = q + 4 * (r >> 1)
     m16n8kK B (K x 8):  b[r], r < K/4:  k = q + 4 * r,       col g
     m16n8   C (16 x 8): c[r], r < 4:    row g + 8 * (r >> 1), col 2q + (r & 1)
     m8n8k4  A (8 x 4): a0 = (g, q);  B (4 x 8): b0 = (q, g);  C (8 x 8): c[r] = (g, 2q + r)
   The mma's m, n and k indices map to tile rows, columns and slice positions in whatever
   order makes a thread's fragments contiguous in shared memory, so they come from 16-byte
   loads; row()/col() report the order. Bank conflicts: a 16-byte warp load runs as 4 phases
   of 8 lanes, and each policy says why its 8 lanes of a phase hit 8 distinct 16-byte bank
   groups. From shared memory alone, FP64 m16n8k4 does twice m8n8k4's work a cycle on H100,
   hence sm_90's FP64 variant. */
/* ---------------------------------------------------------------------------------------------
   TF32: mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32 (sm_80+), A m-major in shared memory so both
   operands come by 16-byte cp.async (with A k-major, as FP64 below, A would go element by
   element, about a tenth slower).
   TILE 128, warps 2 (m) x 4 (n), warp tile 64 x 32: m16 tiles t = 0..3 at rows wm * 64 + 16t +
   {g, g + 8} (the fragment's own order), n8 tiles u = 0..3 with fragment col n at tile col
   wn * 32 + 4n + u (so a thread's B cols 4g .. 4g + 3 are one float4 at each k).
   k order (free: A and B agree on it): a quad q owns KQ = BK / 4 consecutive k, q * KQ ..
   q * KQ + KQ - 1; element e = 4v + 2jj + h of those is fragment k-position q + 4h of k8 step
   (v, jj). So A is one float4 a row per 4 k (16-byte loads along k), B one float4 a k row.
   Banks: A's LDA = 16 (rows g, g + 1 16 words apart): the 8 lanes of a quarter-warp hit 8
   distinct 16-byte groups. B: LDB = 128 with the 16-byte group XOR-swizzled by 2 * ((l / KQ)
   & 3) = 2q: lanes (g, q) read group g ^ 2q, distinct; the cp.async rows are permuted within
   aligned groups of 8, still conflict-free. Stage = 2 * 128 * 16 * 4 = 16 KB; 3 stages 48 KB.
   C: acc[s * 8 + j] is row(s), col wn * 32 + 8q + j: 8 consecutive columns a row. */
template <int BK_>
struct gemm_tf32_mma {
    enum { TILE = GEMM_TILE_MMA, BK = BK_, PAD = 0, NACC = 64, A_MMAJOR = 1, LDA = BK, LDB = TILE, KQ = BK / 4,
           TILE_M = TILE, TILE_N = TILE, THREADS = GPUK_BLOCK, MINB = 2,
           STAGES = 3, DYN = 0 };
    static_assert(BK == 16, "LDA = BK is conflict-free at 16 only");
    float acc[NACC];
    GPUK_DEV static u32 bswz(u32 l) { return 2u * ((l / KQ) & 3u); }
    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = 0.f;
    }
    GPUK_DEV static u32 tf32(float x) {
        u32 r;
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
        return r;
    }
    GPUK_DEV static void mma(float& c0, float& c1, float& c2, float& c3, u32 a0, u32 a1, u32 a2, u32 a3,
                             u32 b0, u32 b1) {
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
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
                b0[0] = tf32(y0.x); b0[1] = tf32(y0.y); b0[2] = tf32(y0.z); b0[3] = tf32(y0.w);
                b1[0] = tf32(y1.x); b1[1] = tf32(y1.y); b1[2] = tf32(y1.z); b1[3] = tf32(y1.w);
#pragma unroll
                for (int t = 0; t < 4; t++) {
                    const float4 r0 = xa[t][0], r1 = xa[t][1];
                    const u32 a0 = tf32(jj ? r0.z : r0.x), a2 = tf32(jj ? r0.w : r0.y);
                    const u32 a1 = tf32(jj ? r1.z : r1.x), a3 = tf32(jj ? r1.w : r1.y);
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        mma(acc[(2 * t) * 8 + u], acc[(2 * t) * 8 + 4 + u], acc[(2 * t + 1) * 8 + u],
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

/* ---------------------------------------------------------------------------------------------
   FP64: KS = 0 -> mma.sync.m8n8k4 (sm_80+); KS = 4, 8, 16 -> mma.sync.m16n8kKS (sm_90+, PTX 7.8):
   the same FLOPs in 2x / 4x / 8x fewer instructions than m8n8k4.
   Both stages k-major; lane (g, q) reads word q * LD + 2g doubles on: with LD = 4 (mod 16)
   doubles (PAD 4) the 8 lanes of a phase hit 8 distinct 16-byte bank groups.
   Warps TILE_M / 64 (m) x TILE_N / 32 (n), warp tile WM x WN = 64 x 32 (warp w: wm = w / WARPS_N,
   wn = w % WARPS_N); a thread holds RA = WM/8 A rows and NB = WN/8 B cols ("slots"), identical
   for every KS:
     A slot r: tile row wm * WM + (r >> 1) * 16 + 2g + (r & 1)   (pairs -> one double2 load a k)
               m8n8k4: slot r is m8 tile r's fragment row g; m16n8kK: slots 2t, 2t+1 are m16 tile
               t's fragment rows g, g + 8
     B slot u: fragment col n of n8 tile u is tile col wn * WN + (u >> 1) * 16 + 2n + (u & 1)
               (the thread's own n = g: pairs of slots -> one double2 load a k)
   C: fragment col n = 2q + e of tile u -> acc[r * 2NB + j], j = (u >> 1) * 4 + 2e + (u & 1), at
     row(slot r), col wn * WN + (j >> 2) * 16 + 4q + (j & 3): runs of 4 consecutive columns.
   128 x 64 on sm_90 (4 warps, 3 stages of BK 16, 75 KB of dynamic shared memory, two blocks an
   SM: the shape of cuBLAS's own H100 DGEMM kernel under ncu), faster than 128 x 128 at 4096^3
   and 1024 x 512 x 2048, a little slower at 1000^3 (bench "dgemm").
   128 x 128 on sm_80: 64 accumulators (128 registers) a thread, 1 block of 8 warps an SM; half
   the shared-memory bytes a FLOP of TILE 64 (warp tile 64x32: 0.375 B/FMA of fragment loads,
   + 0.125 B/FMA of cp.async fills, vs 0.75 + 0.25 at TILE 64, which would need all of the SM's
   128 B/clk at H100's 128 DFMA/clk), and half the L2/DRAM traffic. Its stage
   = 2 * BK * 132 * 8 bytes:
   BK 8 -> 16896 B (2 stages 33.8 KB; 3 stages 50.7 KB > 48 KB); BK 4 -> 8448 B (3 stages 25.3 KB).
   TILE 64 (LD 68): BK 8 -> 8704 B a stage, 16 accumulators. KS = 16 needs BK % 16 == 0. */
template <int TILE_M_, int TILE_N_, int BK_, int KS, int STAGES_>
struct gemm_f64_mma {
    enum {
        TILE_M = TILE_M_, TILE_N = TILE_N_, TILE = TILE_M, BK = BK_, PAD = 4, WM = 64, WN = 32,
        WARPS_N = TILE_N / WN, THREADS = 32 * (TILE_M / WM) * WARPS_N, MINB = 256 / THREADS, RA = WM / 8,
        NB = WN / 8, NACC = RA * NB * 2, KK = KS == 0 ? 4 : KS, A_MMAJOR = 0, LDA = TILE_M + PAD,
        LDB = TILE_N + PAD, STAGES = STAGES_,
        DYN = STAGES * BK * (LDA + LDB) * 8 > 48 * 1024 /* stages past the 48 KB of static shared memory */
    };
    double acc[NACC];
    GPUK_DEV static u32 bswz(u32) { return 0; }

    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = 0.0;
    }
    GPUK_DEV static int j_of(int u, int e) { return (u >> 1) * 4 + 2 * e + (u & 1); }
    GPUK_DEV void step(const double* as, const double* bs) {
        static_assert(BK % KK == 0 && NB % 2 == 0 && RA % 2 == 0, "shape");
        const u32 lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
        const u32 wm = (threadIdx.x >> 5) / WARPS_N, wn = (threadIdx.x >> 5) % WARPS_N;
        const double* pa = as + q * LDA + wm * WM + g * 2;
        const double* pb = bs + q * LDB + wn * WN + g * 2;
#pragma unroll
        for (int k = 0; k < BK; k += KK) {
            double a[KK / 4][RA], b[KK / 4][NB]; /* [k = k + 4h + q][slot] */
#pragma unroll
            for (int h = 0; h < KK / 4; h++) {
#pragma unroll
                for (int r = 0; r < RA; r += 2) {
                    const double2 x = *(const double2*)(pa + (k + 4 * h) * LDA + (r >> 1) * 16);
                    a[h][r] = x.x; a[h][r + 1] = x.y;
                }
#pragma unroll
                for (int u = 0; u < NB; u += 2) {
                    const double2 y = *(const double2*)(pb + (k + 4 * h) * LDB + (u >> 1) * 16);
                    b[h][u] = y.x; b[h][u + 1] = y.y;
                }
            }
            if constexpr (KS == 0) {
#pragma unroll
                for (int r = 0; r < RA; r++)
#pragma unroll
                    for (int u = 0; u < NB; u++)
                        asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                            : "+d"(acc[r * 2 * NB + j_of(u, 0)]), "+d"(acc[r * 2 * NB + j_of(u, 1)])
                            : "d"(a[0][r]), "d"(b[0][u]));
            } else {
#pragma unroll
                for (int t = 0; t < RA / 2; t++)
#pragma unroll
                    for (int u = 0; u < NB; u++) {
                        double& c0 = acc[(2 * t) * 2 * NB + j_of(u, 0)];
                        double& c1 = acc[(2 * t) * 2 * NB + j_of(u, 1)];
                        double& c2 = acc[(2 * t + 1) * 2 * NB + j_of(u, 0)];
                        double& c3 = acc[(2 * t + 1) * 2 * NB + j_of(u, 1)];
                        if constexpr (KS == 4)
                            asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                                "{%0,%1,%2,%3};"
                                : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
                                : "d"(a[0][2 * t]), "d"(a[0][2 * t + 1]), "d"(b[0][u]));
                        else if constexpr (KS == 8)
                            asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                                "{%8,%9}, {%0,%1,%2,%3};"
                                : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
                                : "d"(a[0][2 * t]), "d"(a[0][2 * t + 1]), "d"(a[KK / 4 - 1][2 * t]),
                                  "d"(a[KK / 4 - 1][2 * t + 1]), "d"(b[0][u]), "d"(b[KK / 4 - 1][u]));
                        else
                            asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                                "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                                : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
                                : "d"(a[0][2 * t]), "d"(a[0][2 * t + 1]), "d"(a[1 % (KK / 4)][2 * t]),
                                  "d"(a[1 % (KK / 4)][2 * t + 1]), "d"(a[2 % (KK / 4)][2 * t]),
                                  "d"(a[2 % (KK / 4)][2 * t + 1]), "d"(a[3 % (KK / 4)][2 * t]),
                                  "d"(a[3 % (KK / 4)][2 * t + 1]), "d"(b[0][u]), "d"(b[1 % (KK / 4)][u]),
                                  "d"(b[2 % (KK / 4)][u]), "d"(b[3 % (KK / 4)][u]));
                    }
            }
        }
    }
    GPUK_DEV u32 row(int i) const {
        const u32 r = (u32)i / (2 * NB), g = (threadIdx.x & 31) >> 2;
        return (threadIdx.x >> 5) / WARPS_N * WM + (r >> 1) * 16 + g * 2 + (r & 1);
    }
    GPUK_DEV u32 col(int i) const {
        const u32 j = (u32)i % (2 * NB);
        return (threadIdx.x >> 5) % WARPS_N * WN + (j >> 2) * 16 + (threadIdx.x & 3) * 4 + (j & 3);
    }
};

/* ---- TF32 on Hopper's warpgroup MMA (wgmma; PTX target sm_90a, so compute capability 9.0
   exactly) ----
   mma.sync reaches about 140 TFLOP/s from shared memory on an H100, so a third of cuBLAS's
   TF32; wgmma reads both operands from shared memory by descriptor and runs asynchronously.
   256 threads are two warpgroups; a 128 x 128 tile of C, each warpgroup 64 rows by 128 columns
   (m64n128k8, 64 floats a thread). For TF32 both operands must be K-major in shared memory:
   rows of 32 k (128 bytes), 8-row groups 1024 bytes apart, 16-byte chunks swizzled by row
   (chunk c of row r at c ^ (r & 7), the 128-byte swizzle the descriptor names). Slices of 32 k
   go through GEMM_WG_STAGES stages by cp.async; per slice and operand:
   - K-major in memory (A as-is, B transposed), 16-byte aligned, whole: 16-byte copies
     straight into the swizzled layout;
   - MN-major (A transposed, B as-is), aligned, whole: 16-byte copies into a [32 k][132] area of
     the stage, then every thread transposes a piece into a K-major buffer (two, taking turns
     by slice) after the slice lands: one more barrier a slice;
   - anything else (edges, misalignment): element by element into the swizzled layout, 0
     outside op(A) or op(B).
   Shared memory: 4 stages of 2 x 17 KB, 2 x 2 transposed tiles of 16 KB: GEMM_WGMMA_SMEM
   bytes, dynamic (more than the 48 KB a kernel gets statically). Jobs, split-K and the
   epilogue are gemm_run's (gemm_finish); the accumulators' rows and columns are wgmma's.
   TF32 here truncates each input to its 10-bit mantissa (the tensor cores read the FP32
   bits), the mma.sync path rounds it. Every thread both copies and multiplies, in step at
   each barrier, which holds it to about half the speed of gemm_tma_run below: that splits
   them and is taken where it can be. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) /* the sm_90a pass only (see GPUK_GEMM_SM90A) */
enum { GEMM_WG_BK = 32, GEMM_WG_STAGES = 4, GEMM_WG_LDS = 132, GEMM_WG_OP = 17408, GEMM_WG_KT = 16384 };
static_assert(GEMM_WGMMA_SMEM == GEMM_WG_STAGES * 2 * GEMM_WG_OP + 2 * 2 * GEMM_WG_KT + 1024,
              "the host's dynamic shared memory for the kernel");
GPUK_DEV u32 gemm_wg_swz(u32 r, u32 kk) { return r * 128 + ((((kk >> 2) ^ (r & 7)) << 4) | ((kk & 3) << 2)); }
/* the operand's matrix descriptor: start address, leading offset (unused when swizzled), 1024
   bytes between 8-row groups, 128-byte swizzle */
GPUK_DEV u64 gemm_wg_desc(u32 addr) { return (u64)((addr >> 4) & 0x3FFF) | (1ull << 16) | (64ull << 32) | (1ull << 62); }
GPUK_DEV void gemm_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
GPUK_DEV void gemm_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> GPUK_DEV void gemm_wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
/* cp.async and st.shared write through the generic proxy, wgmma reads through the async one */
/* Shared memory by its 32-bit window address (generic pointers cost a conversion each, and a
   generic store is slower than st.shared): 16 bytes or one float (0 where !in) by cp.async. */
GPUK_DEV void gemm_wg_cp16(u32 dst, const float* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
GPUK_DEV void gemm_wg_cp4(u32 dst, const float* src, bool in) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(in ? 4u : 0u) : "memory");
}
#define GEMM_WG_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), \
    "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
GPUK_DEV void gemm_wg_mma(float* d, u64 da, u64 db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, 1, 1, 1;"
                 : GEMM_WG_D8(0), GEMM_WG_D8(8), GEMM_WG_D8(16), GEMM_WG_D8(24), GEMM_WG_D8(32),
                   GEMM_WG_D8(40), GEMM_WG_D8(48), GEMM_WG_D8(56)
                 : "l"(da), "l"(db));
}

/* One operand of a job: element (r, k) of op(X) (r: m for A, n for B). */
struct gemm_wg_operand {
    const float* p;
    u64 ld, rows;
    bool kmajor;
    GPUK_DEV const float* at(u64 r, u64 k) const { return kmajor ? p + r * ld + k : p + k * ld + r; }
    /* 0: 16-byte copies, K-major; 1: 16-byte copies, MN-major (transposed later); 2: elements */
    GPUK_DEV int mode(u64 r0, u64 k0, u64 k_end) const {
        const bool whole = k0 + GEMM_WG_BK <= k_end && r0 + GEMM_TILE_MMA <= rows && (ld & 3) == 0 && aligned16(p);
        return whole ? (kmajor ? 0 : 1) : 2;
    }
    GPUK_DEV void load(u32 dst, u64 r0, u64 k0, u64 k_end, int how) const {
        const u32 t = threadIdx.x;
        if (how == 0) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const u32 q = t + GPUK_BLOCK * i, r = q >> 3, ch = q & 7;
                gemm_wg_cp16(dst + r * 128 + ((ch ^ (r & 7)) << 4), p + (r0 + r) * ld + k0 + ch * 4);
            }
        } else if (how == 1) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const u32 q = t + GPUK_BLOCK * i, kk = q >> 5, ch = q & 31;
                gemm_wg_cp16(dst + (kk * GEMM_WG_LDS + ch * 4) * 4, p + (k0 + kk) * ld + r0 + ch * 4);
            }
        } else {
#pragma unroll 4
            for (int i = 0; i < 16; i++) { /* consecutive threads walk memory's contiguous index */
                const u32 e = t + GPUK_BLOCK * i, r = kmajor ? e >> 5 : e & 127, kk = kmajor ? e & 31 : e >> 7;
                const bool in = r0 + r < rows && k0 + kk < k_end;
                gemm_wg_cp4(dst + gemm_wg_swz(r, kk), in ? at(r0 + r, k0 + kk) : p, in);
            }
        }
    }
};

/* A [32 k][132] slice to the K-major swizzled layout: lane = k, warp w rows 16w..16w+15, so
   the 16-byte reads and the 4-byte writes are free of bank conflicts. */
GPUK_DEV void gemm_wg_transpose(u32 dst, u32 src) {
    const u32 t = threadIdx.x, kk = t & 31, r0 = (t >> 5) * 16;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float v[4];
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                     : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                     : "r"(src + (kk * GEMM_WG_LDS + r0 + i * 4) * 4));
#pragma unroll
        for (int e = 0; e < 4; e++)
            asm volatile("st.shared.f32 [%0], %1;" ::"r"(dst + gemm_wg_swz(r0 + i * 4 + e, kk)), "f"(v[e]) : "memory");
    }
}

/* The accumulators as gemm_finish takes them: element i of thread t is row (warpgroup * 64 +
   warp * 16 + lane / 4 + 8 * bit 1 of i), column 8 * (i / 4) + 2 * (lane % 4) + bit 0 of i. */
struct gemm_wg_acc {
    enum { NACC = 64, THREADS = GPUK_BLOCK };
    float acc[NACC];
    GPUK_DEV void zero() {
#pragma unroll
        for (int i = 0; i < NACC; i++) acc[i] = 0.0f;
    }
    GPUK_DEV u32 row(int i) const {
        const u32 t = threadIdx.x;
        return (t >> 7) * 64 + ((t >> 5) & 3) * 16 + ((t & 31) >> 2) + 8 * (((u32)i >> 1) & 1);
    }
    GPUK_DEV u32 col(int i) const { return ((u32)i >> 2) * 8 + (threadIdx.x & 3) * 2 + ((u32)i & 1); }
};

GPUK_DEV void gemm_wgmma_run(const gemm_args& g, float* c, const float* a, const float* b, float alpha, float beta) {
    extern __shared__ __align__(1024) unsigned char gemm_wg_smem[];
    enum { TILE = GEMM_TILE_MMA, BK = GEMM_WG_BK, S = GEMM_WG_STAGES, STAGE = 2 * GEMM_WG_OP };
    /* the swizzle repeats every 1024 bytes of address: align the stages to it */
    const u32 sm = ((u32)__cvta_generic_to_shared(gemm_wg_smem) + 1023u) & ~1023u;
    const u32 kt_buf = sm + S * STAGE; /* [slice parity][A, B] transposed */
    const u64 ntn = (g.n + TILE - 1) / TILE, ntm = (g.m + TILE - 1) / TILE, tiles = ntn * ntm;
    const u64 jobs = tiles * g.splits * g.batch;
    const u64 kper = ((g.k + g.splits - 1) / g.splits + BK - 1) / BK * BK;
    const u32 wg_row = (threadIdx.x >> 7) * 64 * 128; /* this warpgroup's 64 rows of A's tile */
    for (u64 w = blockIdx.x; w < jobs; w += gridDim.x) {
        const u64 tile = w % tiles, z = w / tiles, bi = z / g.splits;
        const u32 s = (u32)(z % g.splits);
        const u64 row0 = tile / ntn * TILE, col0 = tile % ntn * TILE;
        const u64 k_begin = s * kper, k_end = k_begin + kper < g.k ? k_begin + kper : g.k;
        const u64 slices = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
        const gemm_wg_operand oa = { a + bi * g.stride_a, g.lda, g.m, g.trans_a == 0 };
        const gemm_wg_operand ob = { b + bi * g.stride_b, g.ldb, g.n, g.trans_b != 0 };
        gemm_wg_acc p;
        p.zero();
#pragma unroll
        for (u32 j = 0; j < S - 2; j++) {
            const u64 k0 = k_begin + j * BK;
            if (j < slices) {
                oa.load(sm + j * STAGE, row0, k0, k_end, oa.mode(row0, k0, k_end));
                ob.load(sm + j * STAGE + GEMM_WG_OP, col0, k0, k_end, ob.mode(col0, k0, k_end));
            }
            cp_async_commit(); /* empty groups too: the waits count groups */
        }
        for (u64 j = 0; j < slices; j++) {
            cp_async_wait<S - 3>();
            proxy_fence_async();
            /* slice j is in; slice j - 2's stage and transposed buffer are free (every
               warpgroup's wgmma of it retired at its wait of slice j - 1) */
            __syncthreads();
            const u64 jn = j + S - 2;
            if (jn < slices) {
                const u64 kn = k_begin + jn * BK;
                const u32 st = sm + (u32)(jn % S) * STAGE;
                oa.load(st, row0, kn, k_end, oa.mode(row0, kn, k_end));
                ob.load(st + GEMM_WG_OP, col0, kn, k_end, ob.mode(col0, kn, k_end));
            }
            cp_async_commit();
            const u64 k0 = k_begin + j * BK;
            const u32 st = sm + (u32)(j % S) * STAGE;
            u32 ta = st, tb = st + GEMM_WG_OP;
            const int ma = oa.mode(row0, k0, k_end), mb = ob.mode(col0, k0, k_end);
            if (ma == 1) gemm_wg_transpose(ta = kt_buf + (u32)(j & 1) * 2 * GEMM_WG_KT, st);
            if (mb == 1) gemm_wg_transpose(tb = kt_buf + (u32)(j & 1) * 2 * GEMM_WG_KT + GEMM_WG_KT, st + GEMM_WG_OP);
            if (ma == 1 || mb == 1) {
                proxy_fence_async();
                __syncthreads();
            }
            const u32 da = ta + wg_row, db = tb;
            gemm_wg_fence();
#pragma unroll
            for (int q = 0; q < BK / 8; q++) gemm_wg_mma(p.acc, gemm_wg_desc(da + q * 32), gemm_wg_desc(db + q * 32));
            gemm_wg_commit();
            gemm_wg_wait<1>();
        }
        gemm_wg_wait<0>();
        __syncthreads(); /* the next job refills the stages */
        gemm_finish<float>(p, g, c + bi * g.stride_c, alpha, beta, row0, col0, tile, tiles, s);
    }
}

/* ---- the same with TMA and warp specialization (the path taken where it can be) ----
   384 threads: warpgroup 0 loads, warpgroups 1 and 2 multiply. One thread of the loader
   issues TMA copies (cp.async.bulk.tensor, by tensor maps the host made with the driver's
   cuTensorMapEncodeTiled over A (m x k) and B^T (n x k), both K-major; the 128-byte swizzle
   and zeros outside the matrix come from the copy engine) of 32-k slices into GEMM_TMA_STAGES
   stages of A's 128 rows and B^T's 256; each stage has a "full" mbarrier (the copies' bytes
   arrived) and an "empty" one (both multiplying warpgroups' wgmma of it retired). The
   multiplying warpgroups run m64n256k8 on their 64 rows of the 128 x 256 tile (128 floats a
   thread), never waiting on each other or on a block barrier, and write C; the loader moves on
   to the next job's slices meanwhile. setmaxnreg hands the loader's registers to them. A
   row-major B is transposed into the workspace first (bench "tf32 4096^3");
   bench/gemm_tma_prototype.cu times this design alone, both operands K-major. No split-K or
   batches here: the host takes this path for one product with enough 128 x 256 tiles to fill
   the GPU (see gpuk__gemm_tma), and gemm_wgmma_run above otherwise. */
enum { GEMM_TMA_STAGES = 4, GEMM_TMA_ABYTES = 128 * 128, GEMM_TMA_BBYTES = GEMM_TMA_BN * 128,
       GEMM_TMA_STAGE = GEMM_TMA_ABYTES + GEMM_TMA_BBYTES };
static_assert(GEMM_TMA_STAGES * GEMM_TMA_STAGE + 1024 + 16 * GEMM_TMA_STAGES <= GEMM_WGMMA_SMEM,
              "the TMA path fits the dynamic shared memory the host asks for");
GPUK_DEV void gemm_wg_mma256(float* d, u64 da, u64 db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, 1, 1, 1;"
                 : GEMM_WG_D8(0), GEMM_WG_D8(8), GEMM_WG_D8(16), GEMM_WG_D8(24), GEMM_WG_D8(32),
                   GEMM_WG_D8(40), GEMM_WG_D8(48), GEMM_WG_D8(56), GEMM_WG_D8(64), GEMM_WG_D8(72),
                   GEMM_WG_D8(80), GEMM_WG_D8(88), GEMM_WG_D8(96), GEMM_WG_D8(104), GEMM_WG_D8(112),
                   GEMM_WG_D8(120)
                 : "l"(da), "l"(db));
}
#undef GEMM_WG_D8
GPUK_DEV void gemm_tma_run(const gemm_args& g, float* c, const tensor_map& ta, const tensor_map& tb, float alpha, float beta) {
    extern __shared__ __align__(1024) unsigned char gemm_wg_smem[];
    enum { S = GEMM_TMA_STAGES, BN = GEMM_TMA_BN };
    const u32 sm = ((u32)__cvta_generic_to_shared(gemm_wg_smem) + 1023u) & ~1023u;
    const u32 full = sm + S * GEMM_TMA_STAGE, empty = full + 8 * S;
    const u64 ntn = (g.n + BN - 1) / BN, ntm = (g.m + 127) / 128, jobs = ntn * ntm, slices = (g.k + 31) / 32;
    const u32 t = threadIdx.x, wg = t >> 7;
    if (t == 0) {
        for (u32 s = 0; s < S; s++) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 256);
        }
        mbar_init_fence();
    }
    __syncthreads();
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (t != 0) return;
        u64 it = 0; /* slices issued by this block, over all its jobs: stage it % S, round it / S */
        for (u64 w = blockIdx.x; w < jobs; w += gridDim.x) {
            const u64 row0 = w / ntn * 128, col0 = w % ntn * BN;
            for (u64 j = 0; j < slices; j++, it++) {
                const u32 s = (u32)(it % S), st = sm + s * GEMM_TMA_STAGE;
                if (it >= S) mbar_wait(empty + 8 * s, (u32)((it / S - 1) & 1));
                mbar_expect_tx(full + 8 * s, (u32)GEMM_TMA_STAGE);
                tma_load_2d(st, ta, (int)(j * 32), (int)row0, full + 8 * s);
#pragma unroll
                for (u32 h = 0; h < BN / 128; h++)
                    tma_load_2d(st + GEMM_TMA_ABYTES + h * 128 * 128, tb, (int)(j * 32), (int)(col0 + h * 128), full + 8 * s);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const u32 cw = wg - 1, w4 = (t >> 5) & 3, lane = t & 31;
    u64 it = 0;
    for (u64 w = blockIdx.x; w < jobs; w += gridDim.x) {
        const u64 row0 = w / ntn * 128, col0 = w % ntn * BN;
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
        for (u64 j = 0; j < slices; j++, it++) {
            const u32 s = (u32)(it % S), st = sm + s * GEMM_TMA_STAGE;
            mbar_wait(full + 8 * s, (u32)((it / S) & 1));
            gemm_wg_fence();
#pragma unroll
            for (int q = 0; q < 4; q++)
                gemm_wg_mma256(d, gemm_wg_desc(st + cw * 64 * 128 + q * 32), gemm_wg_desc(st + GEMM_TMA_ABYTES + q * 32));
            gemm_wg_commit();
            gemm_wg_wait<1>();
            if (j > 0) mbar_arrive(empty + 8 * (u32)((it - 1) % S)); /* slice j - 1's wgmma retired */
        }
        gemm_wg_wait<0>();
        if (slices) mbar_arrive(empty + 8 * (u32)((it - 1) % S));
#pragma unroll
        for (int i = 0; i < BN / 2; i++) {
            const u64 r = row0 + cw * 64 + w4 * 16 + (lane >> 2) + 8 * ((i >> 1) & 1);
            const u64 cc = col0 + (i >> 2) * 8 + (lane & 3) * 2 + (i & 1);
            if (r >= g.m || cc >= g.n) continue;
            float* q = c + r * g.ldc + cc;
            *q = beta == 0.0f ? alpha * d[i] : fma(beta, *q, alpha * d[i]);
        }
    }
}
#endif

/* The policy each variant uses (TF32's baseline is exact FP32: see its wrapper's doc). */
typedef gemm_simt<float> gemm_policy_f32;
typedef gemm_simt<float> gemm_policy_tf32;
typedef gemm_simt<double> gemm_policy_f64;
typedef gemm_simt<float> gemm_policy_sm80_f32;
typedef gemm_tf32_mma<16> gemm_policy_sm80_tf32;                 /* 3 stages of 16 KB */
typedef gemm_f64_mma<GEMM_TILE_MMA, GEMM_TILE_MMA, 8, 0, 2> gemm_policy_sm80_f64;  /* m8n8k4, 2 stages of 17 KB */
/* m16n8k4, 128 x 64 tiles, 3 stages of 25 KB in dynamic shared memory (see the policy): a slice
   of 16 k instead of 8 halves the barriers a FLOP (bench "dgemm 4096^3"). 32 k would need more
   shared memory than a block of sm_120 (99 KB), which runs this variant too, may have.
   Not faster: 4 stages, m16n8k8. */
typedef gemm_f64_mma<GEMM_TILE_MMA, GEMM_F64_TILE_N, 16, 4, 3> gemm_policy_sm90_f64;
static_assert(gemm_policy_sm90_f64::DYN &&
                  GEMM_F64_SMEM == gemm_policy_sm90_f64::STAGES * gemm_policy_sm90_f64::BK * (gemm_policy_sm90_f64::LDA + gemm_policy_sm90_f64::LDB) * 8 &&
                  GEMM_F64_THREADS == gemm_policy_sm90_f64::THREADS,
              "GEMM_F64_SMEM, GEMM_F64_THREADS: the sm_90 FP64 variant's stages and threads");

/* 4-byte types: at most 128 registers, so two blocks share an SM (bench "sgemm 4096^3" and
   "sgemm sm_52 baseline 4096^3");
   FP64's tensor-core policies hold 64 doubles a thread: the sm_80 one (256 threads) runs one
   block an SM, the sm_90 one (128 threads, MINB 2) two. */
#define GPUK_GEMM_ENTRY(T, t, suffix, policy, async)                                         \
    extern "C" __global__ void __launch_bounds__(policy::THREADS, sizeof(T) == 4 ? 2 : policy::MINB) \
    gpuk_gemm_##t##suffix(T* c, const T* a, const T* b, gemm_args g, T alpha, T beta) {      \
        gemm_run<T, policy, async>(g, c, a, b, alpha, beta);                                 \
    }

// wrap gpuk_gemm_{t}(gpuk_array2d c, {T} alpha, gpuk_array2d a, uint32_t trans_a, gpuk_array2d b, uint32_t trans_b, {T} beta)
//      = gpuk__gemm({size}, c, 0, &alpha, a, 0, trans_a, b, 0, trans_b, &beta, 1)
//      | C = alpha * op(A) * op(B) + beta * C for row-major views, op(X) = X^T where trans_x; m = c.rows, n = c.cols; beta = 0: C is not read{t: f32=; f64=; tf32=. TF32: tensor cores with 10-bit mantissas on sm_80 and newer, exact FP32 on older GPUs}
// wrap gpuk_gemm_batched_{t}(gpuk_array2d c, size_t stride_c, {T} alpha, gpuk_array2d a, size_t stride_a, uint32_t trans_a, gpuk_array2d b, size_t stride_b, uint32_t trans_b, {T} beta, size_t batch)
//      = gpuk__gemm@gpuk_gemm_{t}({size}, c, stride_c, &alpha, a, stride_a, trans_a, b, stride_b, trans_b, &beta, batch)
//      | batch products at once: product i uses the views moved by i * stride_x elements (stride 0: shared); else as gpuk_gemm_{t}
#define GPUK_GEMM(T, t) GPUK_GEMM_ENTRY(T, t, , gemm_policy_##t, false)
/* Variants: cp.async staging on sm_80 and newer, with TF32 and FP64 tensor cores; FP64's
   m16n8k4 shape on sm_90. */
#define GPUK_GEMM_SM80(T, t) GPUK_GEMM_ENTRY(T, t, __sm80, gemm_policy_sm80_##t, true)
#define GPUK_GEMM_SM90(T, t) GPUK_GEMM_ENTRY(T, t, __sm90, gemm_policy_sm90_##t, true)
/* Architecture-specific variants (.target sm_90a: wgmma, setmaxnreg; compute capability 9.0
   only) come from tools/gen_ptx.py's pass of their own with -arch=compute_90a, where nvcc
   defines __CUDA_ARCH_FEAT_SM90_ALL; the compute_75 pass leaves them out (gen_ptx.py would
   drop them, but their numbered labels would shift every later kernel's PTX). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) /* TF32 only: wgmma, one block an SM; the TMA path where the
                                          host made tensor maps (384 threads), else cp.async (256) */
#define GPUK_GEMM_SM90A(T, t)                                                                \
    extern "C" __global__ void __launch_bounds__(GEMM_TMA_THREADS, 1)                        \
    gpuk_gemm_##t##__sm90a(T* c, const T* a, const T* b, gemm_args g, T alpha, T beta,       \
                           const __grid_constant__ tensor_map ta, const __grid_constant__ tensor_map tb) { \
        if (blockDim.x == GEMM_TMA_THREADS) gemm_tma_run(g, c, ta, tb, alpha, beta);          \
        else gemm_wgmma_run(g, c, a, b, alpha, beta);                                        \
    }
#else
#define GPUK_GEMM_SM90A(T, t)
#endif

/* ---- stencils on 2-D row-major views: 3x3 weighted (images), 5-point heat step ----
   The heat step: a block of 32 x 8 threads covers 32 * (16 / sizeof(T)) columns and
   STENCIL_ROWS rows (each thread STENCIL_ROWS / 8 rows, 16 bytes of columns). The 3x3: 32 x 8 threads cover 32 * STENCIL3_COLS
   columns and STENCIL3_ROWS rows, each thread STENCIL3_COLS side by side, so a row of its
   window is STENCIL3_COLS + 2 loads and conversions instead of 3 per output (bench
   "stencil3x3_i32 smoothing 4096^2 (max sm 80)"; 64 rows a block or 4 columns were slower).
   Neighbours come through L1 (a block's rows and its neighbours' overlap). Grid-stride in both
   directions: any grid is correct. */
enum { BOUNDARY_SKIP = 1, BOUNDARY_CLAMP = 2, BOUNDARY_ZERO = 3 };
struct stencil_weights { float w[9]; }; /* row-major: w[0] is (-1, -1), w[4] the centre */

GPUK_DEV u64 clamp_index(i64 i, u64 n) { return i < 0 ? 0 : (u64)i >= n ? n - 1 : (u64)i; }

/* f32: acc = fma(w, x, acc) in the order w[0] .. w[8]; i32: the same in double (exact for
   any int32 and float weight products), then rounded to nearest, ties away from zero, and
   saturated to int32. Out-of-range neighbours: CLAMP reads the nearest edge element, ZERO
   reads 0, SKIP leaves them out and scales the sum by W / W_valid (W: the sum of all nine
   weights, W_valid: of those inside), so normalized weights average the neighbours present. */
template <typename T> struct stencil_acc { typedef float type; };
template <> struct stencil_acc<int> { typedef double type; };
GPUK_DEV float stencil_out(float v, float) { return v; }
/* trunc(v + copysign(0.5, v)) is floor(v + 0.5) for v >= 0 and -floor(-v + 0.5) below, the
   same bits with one add and the conversion (which saturates to int32, NaN -> 0) instead of a
   rounding instruction, compares and selects: the i32 3x3 is bound by FP64 work on H100. */
GPUK_DEV int stencil_out(double v, int) { return __double2int_rz(v + copysign(0.5, v)); }

/* SKIP's scale for a cell whose neighbours' rows and columns up, down, left, right are inside
   (flags bits 0..3): *f = W / W_valid, and whether to apply it (not where every weight is
   inside, or none is). */
template <typename A, typename W> GPUK_DEV bool stencil_skip_factor(const W& wa, A all, u32 flags, A* f) {
    A valid = A(0);
#pragma unroll
    for (int q = 0; q < 9; q++)
        if ((q / 3 != 0 || (flags & 1)) && (q / 3 != 2 || (flags & 2)) && (q % 3 != 0 || (flags & 4)) &&
            (q % 3 != 2 || (flags & 8)))
            valid = valid + (A)wa[q];
    *f = all / valid;
    return valid != all && valid != A(0);
}
GPUK_DEV u32 stencil_flags(u64 i, u64 j, u64 rows, u64 cols) {
    return (i > 0) | (i + 1 < rows) << 1 | (j > 0) << 2 | (j + 1 < cols) << 3;
}

/* Output (i, j) by the rules above with any neighbour on or past an edge; at(r, c) reads element
   (r, c) of in, inside the image. W: the weights as A (an array, or the i32 tiles' doubles). */
template <typename T, typename A, typename W, typename F>
GPUK_DEV T stencil_cell(u64 i, u64 j, u64 rows, u64 cols, const W& wa, A all, u32 boundary, F at) {
    const bool inner = i > 0 && i + 1 < rows && j > 0 && j + 1 < cols;
    A acc = A(0), valid = A(0);
#pragma unroll
    for (int di = -1; di <= 1; di++)
#pragma unroll
        for (int dj = -1; dj <= 1; dj++) {
            const int q = (di + 1) * 3 + dj + 1;
            const i64 ii = (i64)i + di, jj = (i64)j + dj;
            const bool inside = inner || (ii >= 0 && (u64)ii < rows && jj >= 0 && (u64)jj < cols);
            T x = T(0);
            if (inside) x = at((u64)ii, (u64)jj);
            else if (boundary == BOUNDARY_CLAMP) x = at(clamp_index(ii, rows), clamp_index(jj, cols));
            if (inside) valid = valid + (A)wa[q];
            acc = fma((A)wa[q], (A)x, acc);
        }
    /* (W_valid here as the loop goes, not by stencil_skip_factor above, which is 2 % slower) */
    if (boundary == BOUNDARY_SKIP && !inner && valid != all && valid != A(0)) acc = acc * (all / valid);
    return stencil_out(acc, T());
}

template <typename T>
GPUK_DEV void stencil3x3(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi, stencil_weights w, u32 boundary) {
    typedef typename stencil_acc<T>::type A;
    A wa[9], all = A(0);
#pragma unroll
    for (int q = 0; q < 9; q++) {
        wa[q] = (A)w.w[q];
        all = all + wa[q];
    }
    enum { R = STENCIL3_ROWS / 8, C = STENCIL3_COLS };
    for (u64 j0 = ((u64)blockIdx.x * 32 + threadIdx.x) * C; j0 < cols; j0 += (u64)gridDim.x * 32 * C)
        for (u64 r0 = (u64)blockIdx.y * STENCIL3_ROWS; r0 < rows; r0 += (u64)gridDim.y * STENCIL3_ROWS) {
            const u64 first = r0 + threadIdx.y * R; /* this thread's R rows of its C columns */
            if (first > 0 && first + R < rows && j0 > 0 && j0 + C < cols) {
                /* all neighbours inside: a window of 3 rows slides down, C + 2 loads a row */
                const T* p = in + (first - 1) * ldi + j0 - 1;
                A win[3][C + 2]; /* converted once as loaded (int -> double runs at a quarter rate) */
#pragma unroll
                for (int c = 0; c < C + 2; c++) { win[0][c] = (A)__ldg(p + c); win[1][c] = (A)__ldg(p + ldi + c); }
                p += 2 * ldi;
                T* o = out + first * ldo + j0;
#pragma unroll
                for (int r = 0; r < R; r++) {
#pragma unroll
                    for (int c = 0; c < C + 2; c++) win[(r + 2) % 3][c] = (A)__ldg(p + c);
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        A acc = A(0);
#pragma unroll
                        for (int di = 0; di < 3; di++)
#pragma unroll
                            for (int dj = 0; dj < 3; dj++) acc = fma(wa[di * 3 + dj], win[(r + di) % 3][c + dj], acc);
                        o[c] = stencil_out(acc, T());
                    }
                    p += ldi;
                    o += ldo;
                }
                continue;
            }
            for (u64 j = j0; j < j0 + C && j < cols; j++)
                for (u64 i = first; i < first + R && i < rows; i++)
                    out[i * ldo + j] = stencil_cell<T>(i, j, rows, cols, wa, all, boundary,
                                                       [&](u64 r, u64 c) { return __ldg(in + r * ldi + c); });
        }
}

/* The sm_90 variant's 3x3 (gpuk_stencil3x3_*__sm90): STENCIL3_TMA_THREADS threads a block,
   tiles of STENCIL3_TMA_COLS x STENCIL3_TMA_ROWS outputs, STENCIL3_TMA_PER_SM blocks a
   multiprocessor (fewer where the tiles are fewer) that walk the tiles grid-stride, the
   image's edge cells with their tiles (see stencil3x3_rows).
   A tile's input box, columns c0 - 4 .. c0 + COLS + 3 and rows r0 - 1 .. r0 + ROWS, comes
   into shared memory whole by one TMA copy, by a tensor map of in that the host made
   (a row stride of a multiple of 16 bytes; out-of-range elements read as 0). Where it could
   not make one, the host launches the baseline's 32 x 8 kernel above instead (faster than
   these tiles loading their own boxes element by element). The entry's launch bounds (256
   threads, 3 blocks an SM) hold it to 80 registers: at 104 or 108 the tiles ran no faster. A
   block keeps STENCIL3_TMA_STAGES boxes in a ring, each with its mbarrier: it works on one
   while the copy of the next is in flight, and refills a stage once every thread is done
   with it. Each thread slides a 3-row
   window down STENCIL3_TMA_ROWS / 2 rows of one column, all reads from shared memory. The TMA
   keeps a whole box in flight without registers, which the 32 x 8 kernel's loads cannot.
   4 blocks an SM, 2 stages: one box a block instead (16 resident) left the last wave's
   multiprocessors idle, a fixed cost a call well above a copy's; edge cells read from in before
   the walk cost each block about a tile of latency (bench "stencil3x3_i32 smoothing 4096^2",
   "... 8192^2"; bench/stencil_walk_prototype.cu times other counts of blocks and stages).
   Not faster: other tile shapes, outputs by a TMA store, i32 converted to double once in shared
   memory, evict-first output stores; i32 weights held in registers are slower than read from
   the kernel parameter. */
struct stencil_weights_d { double w[9]; }; /* the i32 path's weights, (double)w exactly */
template <typename T> struct stencil_tile_weights { /* f32: floats in registers */
    float w[9];
    GPUK_DEV stencil_tile_weights(const stencil_weights& f, const stencil_weights_d&) {
#pragma unroll
        for (int q = 0; q < 9; q++) w[q] = f.w[q];
    }
    GPUK_DEV float operator[](int q) const { return w[q]; }
};
template <> struct stencil_tile_weights<int> { /* i32: doubles read from the kernel parameter */
    const stencil_weights_d& d;
    GPUK_DEV stencil_tile_weights(const stencil_weights&, const stencil_weights_d& d_) : d(d_) {}
    GPUK_DEV double operator[](int q) const { return d.w[q]; }
};
enum { STENCIL3_TMA_LS = STENCIL3_TMA_COLS + 8, STENCIL3_TMA_BOX = STENCIL3_TMA_LS * (STENCIL3_TMA_ROWS + 2),
       STENCIL3_TMA_STAGE = (STENCIL3_TMA_BOX * 4 + 127) / 128 * 128 /* bytes: TMA writes 128-byte aligned */ };
static_assert(STENCIL3_TMA_SMEM == STENCIL3_TMA_STAGES * STENCIL3_TMA_STAGE + 128,
              "the host's dynamic shared memory: the stages' boxes, aligned");

/* The box of tile (c0, r0) into stage st: one TMA copy counted on bar (thread 0). Its first
   column is the map's c0 - 4, a multiple of 4: a box from a column that is not (16 bytes of
   4-byte elements) stops the kernel with an illegal instruction on H100 (the driver encodes
   such maps without complaint: x = -3, -2, -1 and -5 fault, -4 and 0 do not). */
template <typename T> GPUK_DEV void stencil3x3_box(T* st, u64 c0, u64 r0, const tensor_map& map, u32 bar) {
    mbar_expect_tx(bar, STENCIL3_TMA_BOX * sizeof(T));
    tma_load_2d(smem_u32(st), map, (int)c0 - 4, (int)r0 - 1, bar);
}

/* The same box by the block's threads (the sm_80 variant): 16-byte cp.async copies, a box row
   of STENCIL3_TMA_LS / 4, from base, the map's column 0 (in less off columns), width its
   columns (cols + off), ld its row stride, all under the tensor map's rules. A thread's copies
   are the same places of every box, so their offsets are worked out once a block; a box wholly
   inside takes them as they are. Elsewhere, what the map would fill with 0 (rows outside the
   image, columns left of base or past width) cp.async fills itself: its source size is the
   bytes inside (0 to 16), and a copy with none reads nothing (base stands in). */
template <typename T> struct stencil3x3_copier {
    enum { LS = STENCIL3_TMA_LS, CH = LS / 4, N = CH * (STENCIL3_TMA_ROWS + 2),
           K = (N + STENCIL3_TMA_THREADS - 1) / STENCIL3_TMA_THREADS };
    static_assert(sizeof(T) == 4 && LS % 4 == 0, "whole 16-byte copies of a box row");
    const T* base;
    u64 rows, width, ld;
    u64 from[K]; /* this thread's copies: box row * ld + column, in elements */
    u32 to[K];   /* and their places in a stage */
    GPUK_DEV stencil3x3_copier(const T* base_, u64 rows_, u64 width_, u64 ld_)
        : base(base_), rows(rows_), width(width_), ld(ld_) {
#pragma unroll
        for (int k = 0; k < K; k++) {
            const u32 q = threadIdx.x + k * STENCIL3_TMA_THREADS, b = q / CH, c = q % CH;
            from[k] = (u64)b * ld + 4 * c;
            to[k] = b * LS + 4 * c;
        }
    }
    /* the box of the tile at (c0, r0) into st */
    GPUK_DEV void operator()(T* st, u64 c0, u64 r0) const {
        if (r0 >= 1 && r0 + STENCIL3_TMA_ROWS < rows && c0 >= 4 && c0 + LS - 4 <= width) {
            const T* p = base + (r0 - 1) * ld + (c0 - 4);
#pragma unroll
            for (int k = 0; k < K; k++)
                if (k + 1 < K || threadIdx.x + k * STENCIL3_TMA_THREADS < N)
                    cp_async16(st + to[k], p + from[k]);
            return;
        }
#pragma unroll
        for (int k = 0; k < K; k++) {
            const u32 q = threadIdx.x + k * STENCIL3_TMA_THREADS, b = q / CH, c = q % CH;
            const i64 r = (i64)r0 - 1 + b, m = (i64)c0 - 4 + 4 * (i64)c;
            const bool inside = r >= 0 && (u64)r < rows && m >= 0 && (u64)m < width;
            const u32 bytes =
                !inside ? 0u : (u64)m + 4 <= width ? 16u : (u32)(width - (u64)m) * 4u;
            if (q < N)
                cp_async16_n(st + to[k], inside ? base + (u64)r * ld + (u64)m : base, bytes);
        }
    }
};

/* Outputs (i0 .. i0 + RT - 1, j) of a tile, RT = the tile's rows a thread, from its box in a
   stage, b the box row of row i0 - 1 and x + 4 + off the box column of j: a window of 3 rows slides
   down the column, all reads from shared memory. Where a neighbour leaves the image the box
   holds 0 (the map's zero fill, PTX's "zero fill mode" of a tensor map without the NaN
   request), which ZERO wants and SKIP leaves out of the sum before its scale (skipf[flags]
   where bit flags of *skipm is set); CLAMP copies the nearest column or row inside into the
   window instead. Where the map starts off columns left of the image (off > 0: a view from an
   odd column; the box stays where it was, and the window reads off columns to its right),
   those columns hold data, and column -1 is zeroed in the window for ZERO and SKIP. ROWS: the thread's rows meet the first or last row (rows past the last are
   not written); COLS: j may be the first or last column. The caller picks by warp (a row
   group is whole warps; a warp with a side column takes COLS for all its threads), so a warp
   never runs two paths; the others run the window alone. (A path of the edge's own, taken by
   the edge threads alone, diverged their warps and was slower.) The same fma order as
   stencil_cell: each rule gives the 32 x 8 kernel's bits. */
template <typename T, bool ROWS, bool COLS, typename W, typename A>
GPUK_DEV void stencil3x3_rows(T* out, const T* st, u32 x, u32 b, u64 i0, u64 j, u64 rows, u64 cols, u64 ldo, u32 off,
                              const W& wa, const A* skipf, const u32* skipm, u32 boundary) {
    enum { LS = STENCIL3_TMA_LS, RT = STENCIL3_TMA_ROWS * STENCIL3_TMA_COLS / STENCIL3_TMA_THREADS };
    const bool clamp = boundary == BOUNDARY_CLAMP, left = j == 0, right = j + 1 == cols;
    const bool ccopy = COLS && clamp && (left || right); /* CLAMP at a side: copy the centre column out */
    const bool czero = COLS && !clamp && left && off;    /* column -1 is data, not the fill */
    const u32 cflags = 3u | !left << 2 | !right << 3;
    const bool cscale = COLS && !ROWS && boundary == BOUNDARY_SKIP && (left || right) && ((*skipm >> cflags) & 1);
    const auto sides = [&](A* w) {
        if (ccopy) {
            if (left) w[0] = w[1];
            if (right) w[2] = w[1];
        } else if (czero) {
            w[0] = A(0);
        }
    };
    const T* p = st + b * LS + x + 3 + off;
    A win[3][3];
#pragma unroll
    for (int c = 0; c < 3; c++) { win[0][c] = (A)p[c]; win[1][c] = (A)p[LS + c]; }
    sides(win[0]);
    sides(win[1]);
    if (ROWS && clamp && i0 == 0)
#pragma unroll
        for (int c = 0; c < 3; c++) win[0][c] = win[1][c];
    p += 2 * LS;
    T* o = out + i0 * ldo + j;
#pragma unroll
    for (int r = 0; r < RT; r++) {
#pragma unroll
        for (int c = 0; c < 3; c++) win[(r + 2) % 3][c] = (A)p[c];
        sides(win[(r + 2) % 3]);
        if (ROWS) {
            if (i0 + r >= rows) break;
            if (clamp && i0 + r + 1 == rows)
#pragma unroll
                for (int c = 0; c < 3; c++) win[(r + 2) % 3][c] = win[(r + 1) % 3][c];
        }
        A acc = A(0);
#pragma unroll
        for (int di = 0; di < 3; di++)
#pragma unroll
            for (int dj = 0; dj < 3; dj++) acc = fma((A)wa[di * 3 + dj], win[(r + di) % 3][dj], acc);
        if (cscale) acc = acc * skipf[cflags];
        if (ROWS && boundary == BOUNDARY_SKIP) {
            const u32 flags = stencil_flags(i0 + r, j, rows, cols);
            if ((*skipm >> flags) & 1) acc = acc * skipf[flags];
        }
        *o = stencil_out(acc, T());
        p += LS;
        o += ldo;
    }
}

/* The tiles' walk. TMA (sm_90): thread 0 copies each box by the tensor map, counted on its
   stage's mbarrier. Else (sm_80): every thread copies its part of the box (stencil3x3_copier,
   from in less off columns) as one cp.async group a stage, so a stage is ready once a thread's
   group S - 1 back is done and a barrier has passed. */
template <typename T, bool TMA>
GPUK_DEV void stencil3x3_tile(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi,
                              const stencil_weights& w, const stencil_weights_d& wd, u32 boundary,
                              const tensor_map& map, u32 off) {
    typedef typename stencil_acc<T>::type A;
    enum { TC = STENCIL3_TMA_COLS, TR = STENCIL3_TMA_ROWS, LS = STENCIL3_TMA_LS, H = STENCIL3_TMA_THREADS / TC, RT = TR / H,
           S = STENCIL3_TMA_STAGES, SE = STENCIL3_TMA_STAGE / sizeof(T) /* a stage in elements */ };
    static_assert(STENCIL3_TMA_THREADS % TC == 0 && TR % H == 0, "whole columns of whole row groups");
    extern __shared__ __align__(128) unsigned char stencil_smem[];
    __shared__ __align__(8) u64 bar[S];
    /* the TMA writes boxes to 128-byte aligned shared memory (cp.async needs 16) */
    T* const s = (T*)(stencil_smem + ((128u - (smem_u32(stencil_smem) & 127u)) & 127u));
    /* The tiles: ntr rows of ntc, row by row; a block takes tile blockIdx.x and then every
       gridDim.x-th, its tile row and column moving by (step_r, step_c) a turn (no 64-bit
       division in the loop: one there nearly halves the speed). */
    const u64 ntc = (cols + TC - 1) / TC, ntr = (rows + TR - 1) / TR, step_r = gridDim.x / ntc, step_c = gridDim.x % ntc;
    u64 tr = blockIdx.x / ntc, tc = blockIdx.x % ntc; /* this turn's tile */
    u64 fr = tr, fc = tc; /* the tile S turns ahead, the next copy (TMA: thread 0's: it issues) */
    const stencil3x3_copier<T> copier(in - off, rows, cols + off, ldi); /* TMA: unused */
    const auto copy = [&](T* st, u32 q) { /* the box of tile (fr, fc) into stage q at st */
        if (TMA) stencil3x3_box<T>(st, fc * TC, fr * TR, map, smem_u32(&bar[q]));
        else copier(st, fc * TC, fr * TR);
    };
    const auto advance = [&](u64& r, u64& c) {
        c += step_c;
        r += step_r;
        if (c >= ntc) { c -= ntc; r++; }
    };
    /* first of all: the copies' latency is most of a tile's time */
    if (TMA && threadIdx.x == 0) {
#pragma unroll
        for (u32 q = 0; q < S; q++) mbar_init(smem_u32(&bar[q]), 1);
        mbar_init_fence();
    }
    if (!TMA || threadIdx.x == 0)
#pragma unroll
        for (u32 q = 0; q < S; q++) {
            if (fr < ntr) copy(s + q * SE, q);
            if (!TMA) cp_async_commit(); /* a group a stage, empty or not, to count by */
            advance(fr, fc);
        }
    const stencil_tile_weights<T> wa(w, wd);
    __shared__ A skipf[16]; /* SKIP's scales by the cell's flags (stencil_flags), once a block */
    __shared__ u32 skipm;   /* and which to apply */
    if (threadIdx.x < 32) {
        A all = A(0);
#pragma unroll
        for (int q = 0; q < 9; q++) all = all + (A)wa[q];
        A f;
        const bool use = threadIdx.x < 16 && stencil_skip_factor(wa, all, threadIdx.x, &f);
        if (threadIdx.x < 16) skipf[threadIdx.x] = f;
        const u32 m = __ballot_sync(0xffffffffu, use);
        if (threadIdx.x == 0) skipm = m;
    }
    const u32 x = threadIdx.x % TC, h = threadIdx.x / TC; /* this thread's column and row group */
    __syncthreads(); /* the barriers' init, the scales */
    u32 it = 0;
    for (; tr < ntr; advance(tr, tc), it++) {
        const u32 q = it % S;
        T* const st = s + q * SE;
        const u64 j = tc * TC + x, i0 = tr * TR + h * RT;
        if (TMA) {
            mbar_wait(smem_u32(&bar[q]), (it / S) & 1);
        } else {
            cp_async_wait<S - 1>();
            __syncthreads(); /* every thread's part of the box */
        }
        /* the path by warp: ROWS where the row group meets the first or last row (whole warps),
           COLS where one of the warp's columns is the first or last; else the window alone */
        const bool inner_rows = i0 > 0 && i0 + RT < rows, side = __any_sync(0xffffffffu, j == 0 || j + 1 == cols);
        if (inner_rows && !side && j < cols)
            stencil3x3_rows<T, false, false>(out, st, x, h * RT, i0, j, rows, cols, ldo, off, wa, skipf, &skipm, boundary);
        else if (inner_rows && j < cols)
            stencil3x3_rows<T, false, true>(out, st, x, h * RT, i0, j, rows, cols, ldo, off, wa, skipf, &skipm, boundary);
        else if (i0 < rows && j < cols)
            stencil3x3_rows<T, true, true>(out, st, x, h * RT, i0, j, rows, cols, ldo, off, wa, skipf, &skipm, boundary);
        __syncthreads(); /* every thread is done with stage q: refill it */
        if ((!TMA || threadIdx.x == 0) && fr < ntr) copy(st, q);
        if (!TMA) cp_async_commit();
        advance(fr, fc);
    }
}

/* One explicit step of u_t = laplacian(u) on the 5-point grid: interior cells get
   c + alpha * (((up + down) + (left + right)) - 4 c), one fma; the edge rows and columns are
   the Dirichlet boundary and are copied unchanged. */
template <typename T>
GPUK_DEV T heat_cell(const T* in, u64 ld, u64 i, u64 j, u64 rows, u64 cols, T alpha) {
    const T c = in[i * ld + j];
    if (i == 0 || j == 0 || i + 1 == rows || j + 1 == cols) return c;
    const T sum = (in[(i - 1) * ld + j] + in[(i + 1) * ld + j]) + (in[i * ld + j - 1] + in[i * ld + j + 1]);
    return fma(alpha, sum - T(4) * c, c);
}

/* A 16-byte load of p through the read-only path, as a pack */
template <typename T> GPUK_DEV pack16<T> ldg_pack(const T* p) {
    union { uint4 u; pack16<T> k; } x;
    x.u = __ldg((const uint4*)p);
    return x.k;
}

/* A warp covers 32 * V columns, a lane V side by side (16 bytes), and R rows of them: each
   row of a block is 512 bytes of one DRAM page instead of 128 (one column a lane ran at 0.88
   of copy: bench "heat_step_f32 8192^2"). A lane's left and right neighbours come from the
   lanes beside it by shuffles; the warp's two outer ones, one element each side, by a load
   every lane makes (one transaction). Views whose rows are not 16-byte aligned, and warps at
   an edge, take one element at a time. */
template <typename T>
GPUK_DEV void heat_step(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi, T alpha, bool copy) {
    enum { R = STENCIL_ROWS / 8, V = 16 / sizeof(T), BW = 32 * V };
    const u32 lane = threadIdx.x;
    const bool packs = aligned16(in) && aligned16(out) && ldi % V == 0 && ldo % V == 0;
    for (u64 j0 = (u64)blockIdx.x * BW; j0 < cols; j0 += (u64)gridDim.x * BW)
        for (u64 r0 = (u64)blockIdx.y * STENCIL_ROWS; r0 < rows; r0 += (u64)gridDim.y * STENCIL_ROWS) {
            const u64 first = r0 + threadIdx.y * R; /* this thread's R rows */
            if (packs && first > 0 && first + R < rows && j0 > 0 && j0 + BW < cols) {
                /* every load issued before the first store (in source order: out may alias
                   in for the compiler, so a load after a store waited for it, a memory
                   latency a row) */
                const u64 j = j0 + lane * V;
                const T* p = in + first * ldi + j;
                pack16<T> col[R + 2];
                T left[R], right[R];
#pragma unroll
                for (int r = 0; r < R + 2; r++) col[r] = ldg_pack(p + ((u64)r - 1) * ldi);
#pragma unroll
                for (int r = 0; r < R; r++) {
                    left[r] = __ldg(in + (first + r) * ldi + j0 - 1);
                    right[r] = __ldg(in + (first + r) * ldi + j0 + BW);
                }
                T* o = out + first * ldo + j;
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const pack16<T>& c = col[r + 1];
                    T prev = __shfl_up_sync(0xffffffffu, c.v[V - 1], 1);
                    T next = __shfl_down_sync(0xffffffffu, c.v[0], 1);
                    if (lane == 0) prev = left[r];
                    if (lane == 31) next = right[r];
                    pack16<T> res;
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const T l = e ? c.v[e - 1] : prev, rt = e + 1 < V ? c.v[e + 1] : next;
                        const T sum = (col[r].v[e] + col[r + 2].v[e]) + (l + rt);
                        res.v[e] = copy ? c.v[e] : fma(alpha, sum - T(4) * c.v[e], c.v[e]);
                    }
                    *(pack16<T>*)(o + (u64)r * ldo) = res;
                }
                continue;
            }
#pragma unroll 1
            for (u32 e = 0; e < V; e++) {
                const u64 j = j0 + lane + 32u * e;
                if (j >= cols) break;
                for (u64 i = first; i < first + R && i < rows; i++)
                    out[i * ldo + j] = copy ? in[i * ldi + j] : heat_cell(in, ldi, i, j, rows, cols, alpha);
            }
        }
}

// wrap gpuk_stencil3x3_{t}(gpuk_array2d out, gpuk_array2d in, const float* weights, uint32_t boundary)
//      = gpuk__stencil({size}, 0, out, in, weights, NULL, boundary, 0)
//      | out = the 3x3 weighted sum of in's neighbours (weights[9], row-major, [4] the centre) with boundary GPUK_BOUNDARY_SKIP (leave out-of-range neighbours out, scale by the weight sum over the ones present), _CLAMP or _ZERO{t: f32=; i32=, computed in double, rounded to nearest (ties away from 0) and saturated}; out must not overlap in
#define GPUK_STENCIL3X3(T, t)                                                                \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_stencil3x3_##t(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi, stencil_weights w, u32 boundary) { \
        stencil3x3<T>(out, in, rows, cols, ldo, ldi, w, boundary);                           \
    }
/* Variant: the tiles above on sm_90 and newer (the host passes a 1-D block of
   STENCIL3_TMA_THREADS, a 1-D grid of at most STENCIL3_TMA_PER_SM blocks a multiprocessor and
   at most one a tile, STENCIL3_TMA_SMEM bytes of dynamic shared memory, and a tensor map of in
   with use_map = 1 + the columns it starts left of in (gpuk__stencil_tmap); where it could not
   make a map, the host launches the baseline instead). */
#define GPUK_STENCIL3X3_SM90(T, t)                                                           \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, 3)                              \
    gpuk_stencil3x3_##t##__sm90(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi, stencil_weights w, \
                                u32 boundary, const __grid_constant__ tensor_map map,        \
                                const __grid_constant__ stencil_weights_d wd, u32 use_map) { \
        stencil3x3_tile<T, true>(out, in, rows, cols, ldo, ldi, w, wd, boundary, map, use_map - 1); \
    }
/* Variant: the same tiles on sm_80 and newer by cp.async (what the A100 runs): the sm_90
   one's parameters, its map unused (the host leaves it zero), use_map 1 + off by the tensor
   map's rules; where they fail, the host launches the baseline's 32 x 8 kernel instead. Its
   launch bounds are the tiles' own: up to 128 registers, which its copies need (held to 80,
   it spilled and ran slower). */
#define GPUK_STENCIL3X3_SM80(T, t)                                                           \
    extern "C" __global__ void __launch_bounds__(STENCIL3_TMA_THREADS, STENCIL3_TMA_PER_SM)  \
    gpuk_stencil3x3_##t##__sm80(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi, stencil_weights w, \
                                u32 boundary, const __grid_constant__ tensor_map map,        \
                                const __grid_constant__ stencil_weights_d wd, u32 use_map) { \
        stencil3x3_tile<T, false>(out, in, rows, cols, ldo, ldi, w, wd, boundary, map, use_map - 1); \
    }
// wrap gpuk_heat_step_{t}(gpuk_array2d out, gpuk_array2d in, {T} alpha)
//      = gpuk__stencil({size}, 1, out, in, NULL, &alpha, 0, 1)
//      | one explicit 5-point heat/Jacobi step: interior out = c + alpha ((up + down) + (left + right) - 4 c), the edge rows and columns (Dirichlet boundary) copied; out must not overlap in
// wrap gpuk_heat_steps_{t}(gpuk_array2d field, gpuk_array2d scratch, {T} alpha, uint32_t steps)
//      = gpuk__stencil@gpuk_heat_step_{t}({size}, 2, field, scratch, NULL, &alpha, 0, steps)
//      | steps heat steps, the result in field; scratch: same shape, not overlapping, overwritten (a step a launch, and for odd steps a copy back)
#define GPUK_HEAT(T, t)                                                                      \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_heat_step_##t(T* out, const T* in, u64 rows, u64 cols, u64 ldo, u64 ldi, T alpha, u32 steps) { \
        heat_step<T>(out, in, rows, cols, ldo, ldi, alpha, steps == 0); /* 0: a copy */      \
    }

/* ---- transpose: out (cols x rows) = in (rows x cols)^T, both row-major ----
   A block moves 64x64 tiles through shared memory (one pad column so the column reads do not
   conflict), reading rows of in and writing rows of out, so both sides are coalesced; each
   thread moves 16 elements a tile, all loads issued before the stores. Tiles beyond the grid's
   y range are taken in a loop, so any height works. Registers held to 6 blocks a
   multiprocessor (40): left free, the kernel took 64 and 4 blocks, which left a block's
   stores with too few other blocks' loads beside them (bench "transpose_f32 16384^2", on
   the faster memory most); 8 blocks spill. */

template <typename T>
GPUK_DEV void transpose(T* out, const T* in, u64 rows, u64 cols) {
    __shared__ T tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
    const u32 tx = threadIdx.x, ty = threadIdx.y; /* 32 x 8 threads */
    const u64 c0 = (u64)blockIdx.x * TRANSPOSE_TILE;
    for (u64 r0 = (u64)blockIdx.y * TRANSPOSE_TILE; r0 < rows; r0 += (u64)gridDim.y * TRANSPOSE_TILE) {
        const bool full = r0 + TRANSPOSE_TILE <= rows && c0 + TRANSPOSE_TILE <= cols;
#pragma unroll
        for (u32 k = 0; k < TRANSPOSE_TILE; k += 8)
#pragma unroll
            for (u32 h = 0; h < TRANSPOSE_TILE; h += 32) {
                u64 r = r0 + ty + k, c = c0 + tx + h;
                if (full || (r < rows && c < cols)) tile[ty + k][tx + h] = in[r * cols + c];
            }
        __syncthreads();
#pragma unroll
        for (u32 k = 0; k < TRANSPOSE_TILE; k += 8)
#pragma unroll
            for (u32 h = 0; h < TRANSPOSE_TILE; h += 32) {
                u64 c = c0 + ty + k, r = r0 + tx + h;
                if (full || (r < rows && c < cols)) out[c * rows + r] = tile[tx + h][ty + k];
            }
        __syncthreads();
    }
}

// wrap gpuk_transpose_{t}(gpuk_array out, gpuk_array in, size_t rows, size_t cols)
//      = gpuk__transpose({size}, out, in, rows, cols)
//      | out (cols x rows) = transpose of in (rows x cols), row-major; out != in
#define GPUK_TRANSPOSE(T, t)                                                                 \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, 6)                              \
    gpuk_transpose_##t(T* out, const T* in, u64 rows, u64 cols) {                            \
        transpose<T>(out, in, rows, cols);                                                   \
    }

/* ---- histogram: counts[bin] += number of in[i] in bin, bins splitting [lo, hi) evenly ----
   bin = (x - lo) * nbins / (hi - lo); values outside [lo, hi) are not counted. Each block
   counts into shared memory when the bins fit (u8 input with <= 256 bins: one copy per warp,
   so warps do not contend), then adds its counts to the 64-bit global counts; with more bins
   it adds to global memory directly. The host zeroes counts first. u8 input is read 16 bytes
   at a time where aligned; bytes map to bins by a shift when the bin width is a power of two,
   else through a 256-entry table per block. */
#define HIST_PACKS 2

extern __shared__ u32 hist_smem[];

GPUK_DEV u32 bin_of(i64 x, i64 lo, u64 span, u32 nbins) { return (u32)((u64)(x - lo) * nbins / span); }

/* byte -> bin (or -1: not counted) by subtract and shift, or through a table */
struct bin_shift {
    u32 lo, span;
    int shift;
    GPUK_DEV int operator()(u32 b) const { u32 d = b - lo; return d < span ? (int)(d >> shift) : -1; }
};
struct bin_shift_all { /* every byte is in range (lo = 0, hi >= 256): no test */
    int shift;
    GPUK_DEV int operator()(u32 b) const { return (int)((b & 0xffu) >> shift); }
};
struct bin_byte { /* 256 bins of [0, 256): the byte is its bin */
    GPUK_DEV int operator()(u32 b) const { return (int)(b & 0xffu); }
};
struct bin_lut {
    const int* lut;
    GPUK_DEV int operator()(u32 b) const { return lut[b]; }
};

/* Counts n bytes into mine: a head up to a 16-byte boundary, 16-byte packs, a tail. */
template <typename BIN>
GPUK_DEV void count_bytes(const unsigned char* in, u64 n, u32* mine, BIN bin, u64 tid, u64 stride) {
    u64 head = (16u - ((u64)in & 15u)) % 16u;
    if (head > n) head = n;
    for (u64 i = tid; i < head; i += stride) { int b = bin(in[i]); if (b >= 0) atomicAdd(mine + b, 1u); }
    const u64 npacks = (n - head) / 16;
    const uint4* p = (const uint4*)(in + head);
    /* HIST_PACKS packs in flight, then count; 2 keeps the kernel in the 32 registers that 8
       blocks an SM allow (4 packs spilled once the byte-is-its-bin path came in) */
    for (u64 k = tid; k < npacks; k += HIST_PACKS * stride) {
        uint4 w[HIST_PACKS];
#pragma unroll
        for (int u = 0; u < HIST_PACKS; u++) if (k + u * stride < npacks) w[u] = p[k + u * stride];
#pragma unroll
        for (int u = 0; u < HIST_PACKS; u++) {
            if (k + u * stride >= npacks) break;
            u32 words[4] = { w[u].x, w[u].y, w[u].z, w[u].w };
#pragma unroll
            for (int q = 0; q < 4; q++) {
#pragma unroll
                for (int s = 0; s < 32; s += 8) {
                    int b = bin((words[q] >> s) & 0xffu);
                    if (b >= 0) atomicAdd(mine + b, 1u);
                }
            }
        }
    }
    for (u64 i = head + npacks * 16 + tid; i < n; i += stride) { int b = bin(in[i]); if (b >= 0) atomicAdd(mine + b, 1u); }
}

template <typename T>
GPUK_DEV void histogram(u64* counts, const T* in, u64 n, u32 nbins, i64 lo, i64 hi) {
    const u64 span = (u64)(hi - lo);
    const u64 tid = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GPUK_BLOCK;
    if (nbins > HIST_SMEM_BINS) {
        for (u64 i = tid; i < n; i += stride) {
            i64 x = in[i];
            if (x >= lo && x < hi) atomicAdd(counts + bin_of(x, lo, span, nbins), 1ull);
        }
        return;
    }
    /* u8 into <= 256 bins: one copy of the counts per warp, so warps do not contend (faster
       than one copy per lane interleaved: bench "histogram_u8 256 bins") */
    const u32 copies = sizeof(T) == 1 && nbins <= 256 ? GPUK_WARPS : 1;
    for (u32 i = threadIdx.x; i < copies * nbins; i += GPUK_BLOCK) hist_smem[i] = 0;
    u32* mine = hist_smem + threadIdx.x / 32 % copies * nbins;
    if constexpr (sizeof(T) == 1) {
        /* bins of a power-of-two width (256 bins of [0, 256): width 1) map by a shift; others
           through a table, byte -> bin or -1 when outside [lo, hi) */
        __shared__ int lut[256];
        const u64 width = span / nbins;
        const bool shifts = copies > 1 && span % nbins == 0 && (width & (width - 1)) == 0 && lo >= 0 && lo < 256;
        if (!shifts)
            for (u32 x = threadIdx.x; x < 256; x += GPUK_BLOCK)
                lut[x] = ((i64)x >= lo && (i64)x < hi) ? (int)bin_of(x, lo, span, nbins) : -1;
        __syncthreads();
        bin_shift by_shift = { (u32)lo, span < 256 ? (u32)span : 256u, __ffsll((long long)width) - 1 };
        bin_lut by_table = { lut };
        if (shifts && lo == 0 && span == 256 && nbins == 256) {
            bin_byte same;
            count_bytes(in, n, mine, same, tid, stride);
        } else if (shifts && lo == 0 && span >= 256) {
            bin_shift_all all = { by_shift.shift };
            count_bytes(in, n, mine, all, tid, stride);
        } else if (shifts) count_bytes(in, n, mine, by_shift, tid, stride);
        else count_bytes(in, n, mine, by_table, tid, stride);
    } else {
        __syncthreads();
        for (u64 i = tid; i < n; i += stride) {
            i64 x = in[i];
            if (x >= lo && x < hi) atomicAdd(mine + bin_of(x, lo, span, nbins), 1u);
        }
    }
    __syncthreads();
    for (u32 bin = threadIdx.x; bin < nbins; bin += GPUK_BLOCK) {
        u64 sum = 0;
        for (u32 c = 0; c < copies; c++) sum += hist_smem[c * nbins + bin];
        if (sum) atomicAdd(counts + bin, sum);
    }
}

/* Dynamic shared memory the host gives: copies * nbins * 4 bytes (0 above HIST_SMEM_BINS).
   The host launches 8 blocks an SM, so the kernel must fit 8 (32 registers a thread). */
// wrap gpuk_histogram_{t}(gpuk_array counts, uint32_t nbins, int64_t lo, int64_t hi, gpuk_array in, size_t n)
//      = gpuk__histogram({size}, counts, nbins, lo, hi, in, n)
//      | counts[b] (uint64, nbins of them) = number of in[i] with lo <= in[i] < hi and (in[i] - lo) * nbins / (hi - lo) == b
#define GPUK_HISTOGRAM(T, t)                                                                 \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, 8)                              \
    gpuk_histogram_##t(u64* counts, const T* in, u64 n, u32 nbins, i64 lo, i64 hi) {         \
        histogram<T>(counts, in, n, nbins, lo, hi);                                          \
    }

/* ---- float histogram: counts[b] = number of in[i] in bin b, nbins bins splitting [lo, hi)
   evenly, then three counts apart: [nbins] below lo (-inf too), [nbins + 1] at or above hi (+inf
   too), [nbins + 2] NaN ----
   The bin of lo <= x < hi is trunc((x - lo) * scale), scale = nbins / (hi - lo) rounded to T by
   the host, the subtraction and the product each rounded to nearest in T with no fused
   multiply-add (so a CPU finds the same bins), nbins - 1 where that rounds up to nbins. Every
   step is monotonic, so bins stay in order and contiguous; an edge may sit an ulp or so from
   lo + b (hi - lo) / nbins. Counting is the integer histogram's: shared-memory counts per block
   (one copy per warp up to 256 bins, so warps do not contend), added to the 64-bit global counts
   at the end; above HIST_SMEM_BINS the bins go to global memory and only the three counts apart
   stay in shared memory. Input is read 16 bytes at a time where aligned, HIST_FPACKS packs in
   flight, with streaming loads: each byte is read once. */
#define HIST_FPACKS 2

GPUK_DEV float sub_rn(float a, float b) { return __fsub_rn(a, b); }
GPUK_DEV double sub_rn(double a, double b) { return __dsub_rn(a, b); }
GPUK_DEV float mul_rn(float a, float b) { return __fmul_rn(a, b); }
GPUK_DEV double mul_rn(double a, double b) { return __dmul_rn(a, b); }
GPUK_DEV u32 trunc_u32(float a) { return __float2uint_rz(a); }
GPUK_DEV u32 trunc_u32(double a) { return __double2uint_rz(a); }
GPUK_DEV void unpack16(uint4 w, float* v) {
    v[0] = __uint_as_float(w.x); v[1] = __uint_as_float(w.y);
    v[2] = __uint_as_float(w.z); v[3] = __uint_as_float(w.w);
}
GPUK_DEV void unpack16(uint4 w, double* v) {
    v[0] = __hiloint2double((int)w.y, (int)w.x); v[1] = __hiloint2double((int)w.w, (int)w.z);
}

template <typename T>
struct float_bin {
    T lo, hi, scale;
    u32 nbins;
    /* x's slot: its bin, or nbins (below lo), nbins + 1 (at or above hi), nbins + 2 (NaN).
       Selects, not branches, so a warp with values on both sides of the range does not split;
       the bin of a value outside the range is computed and dropped (the conversion of a
       negative, huge or NaN product is defined: 0 or saturated). */
    GPUK_DEV u32 operator()(T x) const {
        const u32 b = trunc_u32(mul_rn(sub_rn(x, lo), scale));
        u32 slot = b < nbins ? b : nbins - 1;
        slot = x < lo ? nbins : slot;
        slot = x >= hi ? nbins + 1 : slot;
        return x != x ? nbins + 2 : slot;
    }
};
struct to_shared { /* every slot in this warp's (or block's) shared copy */
    u32* mine;
    GPUK_DEV void operator()(u32 slot) const { atomicAdd(mine + slot, 1u); }
};
struct to_global { /* bins straight to the global counts, the three apart in shared memory */
    u64* counts;
    u32 nbins;
    GPUK_DEV void operator()(u32 slot) const {
        if (slot < nbins) atomicAdd(counts + slot, 1ull);
        else atomicAdd(hist_smem + (slot - nbins), 1u);
    }
};

/* Counts n values: a head up to a 16-byte boundary, 16-byte packs, a tail. */
template <typename T, typename SINK>
GPUK_DEV void count_values(const T* in, u64 n, float_bin<T> bin, SINK sink, u64 tid, u64 stride) {
    constexpr u32 per = 16 / sizeof(T);
    u64 head = (16u - ((u64)in & 15u)) % 16u / sizeof(T);
    if (head > n) head = n;
    for (u64 i = tid; i < head; i += stride) sink(bin(in[i]));
    const u64 npacks = (n - head) / per;
    const uint4* p = (const uint4*)(in + head);
    for (u64 k = tid; k < npacks; k += HIST_FPACKS * stride) {
        uint4 w[HIST_FPACKS];
#pragma unroll
        for (int u = 0; u < HIST_FPACKS; u++)
            if (k + u * stride < npacks) w[u] = __ldcs(p + k + u * stride);
#pragma unroll
        for (int u = 0; u < HIST_FPACKS; u++) {
            if (k + u * stride >= npacks) break;
            T v[per];
            unpack16(w[u], v);
#pragma unroll
            for (u32 q = 0; q < per; q++) sink(bin(v[q]));
        }
    }
    for (u64 i = head + npacks * per + tid; i < n; i += stride) sink(bin(in[i]));
}

template <typename T>
GPUK_DEV void histogram_float(u64* counts, const T* in, u64 n, u32 nbins, T lo, T hi, T scale) {
    const u64 tid = (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GPUK_BLOCK;
    const float_bin<T> bin = { lo, hi, scale, nbins };
    const bool shared = nbins <= HIST_SMEM_BINS;
    const u32 slots = nbins + 3;
    const u32 copies = nbins <= 256 ? GPUK_WARPS : 1;
    const u32 used = shared ? copies * slots : 3;
    for (u32 i = threadIdx.x; i < used; i += GPUK_BLOCK) hist_smem[i] = 0;
    __syncthreads();
    if (shared) {
        const to_shared sink = { hist_smem + threadIdx.x / 32 % copies * slots };
        count_values(in, n, bin, sink, tid, stride);
    } else {
        const to_global sink = { counts, nbins };
        count_values(in, n, bin, sink, tid, stride);
    }
    __syncthreads();
    for (u32 slot = (shared ? 0 : nbins) + threadIdx.x; slot < slots; slot += GPUK_BLOCK) {
        u64 sum = 0;
        if (shared)
            for (u32 c = 0; c < copies; c++) sum += hist_smem[c * slots + slot];
        else sum = hist_smem[slot - nbins];
        if (sum) atomicAdd(counts + slot, sum);
    }
}

/* Dynamic shared memory the host gives: copies * (nbins + 3) * 4 bytes, 12 above
   HIST_SMEM_BINS. per_sm blocks an SM (the host's HIST_F32_PER_SM, HIST_F64_PER_SM): 8 for f32,
   as the integer histogram; f64 spills in 8's 32 registers, so 6. */
// wrap gpuk_histogram_{t}(gpuk_array counts, uint32_t nbins, {T} lo, {T} hi, gpuk_array in,
//      size_t n) = gpuk__histogram_float({size}, counts, nbins, lo, hi, in, n)
//      | counts (uint64, nbins + 3 of them): [b] = number of in[i] with lo <= in[i] < hi in bin b
//      = trunc((in[i] - lo) * (nbins / (hi - lo))), each step rounded to nearest in the input's
//      type, nbins - 1
//      where that rounds to nbins; [nbins] = number below lo, [nbins + 1] at or above hi,
//      [nbins + 2] NaN; lo and hi finite
#define GPUK_HISTOGRAM_FLOAT(T, t, per_sm)                                                   \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, per_sm)                         \
    gpuk_histogram_##t(u64* counts, const T* in, u64 n, u32 nbins, T lo, T hi, T scale) {    \
        histogram_float<T>(counts, in, n, nbins, lo, hi, scale);                             \
    }

/* ---- random numbers: Philox4x32-10 (Salmon et al., SC'11), counter based ----
   Element e (= offset + i) of a stream with key = seed takes words from the Philox block
   with counter (e / per, 0, 0) where per is how many elements one 128-bit block makes:
   uniform f32: 4 (word e % 4, (w >> 8) * 2^-24, in [0, 1));
   uniform f64: 2 (words 2(e%2), 2(e%2)+1, 53 bits: ((w0 >> 5) * 2^26 + (w1 >> 6)) * 2^-53);
   normal: Box-Muller on pairs of uniforms taken as 1 - u, in (0, 1]: f32 pairs (w0, w1) and
   (w2, w3) give elements 0-1 and 2-3 of a block, f64 the two 53-bit uniforms give 0-1.
   One thread makes one block and writes its elements that fall in [offset, offset + n): a
   block wholly inside, at a 16-byte aligned place, in one store. The generator and the
   conversions are gpuk_device.cuh's, which users' kernels include to get the same numbers. */
template <typename T, int PER>
GPUK_DEV void random_blocks(T* out, u64 n, u64 offset, u64 seed, bool normal) {
    if (n == 0) return;
    const u64 first = offset / PER, last = (offset + n - 1) / PER;
    for (u64 blk = first + (u64)blockIdx.x * GPUK_BLOCK + threadIdx.x; blk <= last;
         blk += (u64)gridDim.x * GPUK_BLOCK) {
        gpuk_philox4 r = gpuk_philox4x32_10(blk, seed);
        T vals[PER];
        if constexpr (PER == 4) { /* f32 */
            if (!normal) {
                for (int k = 0; k < 4; k++) vals[k] = (T)gpuk_u01_f32(r.w[k]);
            } else {
                for (int k = 0; k < 4; k += 2) {
                    float z0, z1;
                    gpuk_box_muller_f32(gpuk_u01_f32(r.w[k]), gpuk_u01_f32(r.w[k + 1]), &z0, &z1);
                    vals[k] = (T)z0; vals[k + 1] = (T)z1;
                }
            }
        } else { /* f64 */
            double u1 = gpuk_u01_f64(r.w[0], r.w[1]), u2 = gpuk_u01_f64(r.w[2], r.w[3]);
            if (!normal) {
                vals[0] = (T)u1; vals[1] = (T)u2;
            } else {
                double z0, z1;
                gpuk_box_muller_f64(u1, u2, &z0, &z1);
                vals[0] = (T)z0; vals[1] = (T)z1;
            }
        }
        const u64 e0 = blk * PER;
        if (e0 >= offset && n >= PER && e0 - offset <= n - PER && aligned16(out + (e0 - offset))) {
            pack16<T> p; /* a whole block in one 16-byte store: a quarter of the store requests
                            of four 4-byte ones (bench "random_uniform_f32") */
            uint4 u;
#pragma unroll
            for (int k = 0; k < PER; k++) p.v[k] = vals[k];
            memcpy(&u, &p, 16);
            __stwb((uint4*)(out + (e0 - offset)), u); /* (a plain uint4 store, nvcc made four) */
        } else {
#pragma unroll
            for (int k = 0; k < PER; k++) {
                u64 e = e0 + k;
                if (e >= offset && e - offset < n) out[e - offset] = vals[k];
            }
        }
    }
}

// wrap gpuk_random_uniform_{t}(gpuk_array out, size_t n, uint64_t seed, uint64_t offset)
//      = gpuk__generate({size}, n, out, &seed, &offset, sizeof seed, {per})
//      | out[i] = uniform in [0, 1), Philox4x32-10 element offset + i of seed
// wrap gpuk_random_normal_{t}(gpuk_array out, size_t n, uint64_t seed, uint64_t offset)
//      = gpuk__generate({size}, n, out, &seed, &offset, sizeof seed, {per})
//      | out[i] = standard normal (Box-Muller), Philox4x32-10 element offset + i of seed
#define GPUK_RANDOM(T, t, per)                                                               \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_random_uniform_##t(T* out, u64 n, u64 seed, u64 offset) {                           \
        random_blocks<T, per>(out, n, offset, seed, false);                                  \
    }                                                                                        \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK)                                 \
    gpuk_random_normal_##t(T* out, u64 n, u64 seed, u64 offset) {                            \
        random_blocks<T, per>(out, n, offset, seed, true);                                   \
    }

/* ---- radix sort: LSD, 8-bit digits, stable; keys alone or with 32-bit values ----
   Keys sort by their ordered bits: unsigned as they are, signed with the sign bit flipped,
   floats with the sign bit of positives flipped and every bit of negatives (so -0.0 sorts
   before +0.0, negative NaNs before -inf and positive NaNs after +inf); descending sorts the
   complement of those bits, which keeps equal keys in input order. Only the bits
   [begin_bit, end_bit) of the ordered form count; a pass sorts by one 8-bit digit of them
   (the last pass's digit may be narrower), least significant first.
   The host runs, on one stream: a clear of the scratch head and status words; the histogram
   phase (every pass's 256 digit counts from the input, in one read); then one launch a pass,
   each block a tile taken by ticket (tiles start in input order, so look-back never waits on
   a tile that has not started), in the one-sweep design: the block counts its tile's digits
   and publishes the 256 counts, ranks its keys by digit (stably, warp by warp), finds each
   digit's count in earlier tiles by decoupled look-back (thread d walks tile status words of
   digit d back to a tile that has published an inclusive prefix), and scatters its keys
   through shared memory so that runs of one digit go out as contiguous stores. The start of digit d in the output
   is the exclusive sum of the histogram's counts below d, which every block adds up itself.
   A sort of at most one tile runs in one block, every pass in shared memory (phase
   SORT_SINGLE), without scratch.
   scratch (u64 words): bins[8][256] (the histogram), 8 u32 tickets (one a pass), then the
   status words, 256 a tile: bits 63..60 the pass + 1, bit 59 set where the value is the
   inclusive prefix (else the tile's own count), bits 58..0 the value. The host clears them
   once a sort; a word of an earlier pass of the same sort never matches the pass a block waits
   for, so no clear is needed between passes. A value in one 64-bit word with its flag: a
   reader needs no fence between them. */
#define SORT_RADIX 256
/* SORT_HIST, SORT_SINGLE: the phases apart from passes; SORT_DESCENDING, SORT_INDEX (the
   values are each key's input position, made by pass 0): mode bits (shared constants) */
#define SORT_HEAD_WORDS (8 * SORT_RADIX + 8)
#define SORT_VALUE_MASK ((1ull << 59) - 1)
#define SORT_INCL (1ull << 59)

/* items a thread: 24 for 4-byte keys alone (SORT_ITEMS_4K), 16 with values (SORT_ITEMS_4), 14
   for 8-byte keys alone (SORT_ITEMS_8K; 12 measured slower) and 12 with values (SORT_ITEMS_8),
   so that the tile's keys, values, the warps' digit counts and (keys alone) match masks stay
   under 48 KiB of static shared memory (4 blocks an SM), which every GPU gives a block. Keys
   with values find a digit's lanes by ballots there: the masks fit beside the values only
   with fewer items a thread, and 14 items with masks measured slower than 16 with ballots.
   The sm_90 variant of 4-byte pairs moves the values after the keys (sort_tile): its tile
   holds keys alone, then the values, so 28 items (SORT_ITEMS_4M) and the masks fit in the 48
   KiB at 3 blocks an SM (SORT_PAIRS_BLOCKS_SM, 80 registers). On the H100 it measured faster
   than the ballots and than the masks with keys and values in the tile (20 items, 58 KiB of
   dynamic shared memory); older GPUs run the baseline, the variant being measured on Hopper
   only. */
enum { SORT_PAIRS_BLOCKS_SM = 3 };
template <typename K, int PAIRS> struct sort_items {
    enum { n = sizeof(K) == 4 ? (PAIRS == 2 ? SORT_ITEMS_4M : PAIRS ? SORT_ITEMS_4 : SORT_ITEMS_4K)
                              : (PAIRS ? SORT_ITEMS_8 : SORT_ITEMS_8K) };
};
/* PAIRS: 0 keys alone, 1 with values in the tile beside the keys (ballots), 2 with values
   moved through the tile after the keys (masks; the sm_90 variant, 4-byte keys) */
template <typename K, int PAIRS> struct sort_or {
    enum { on = PAIRS != 1 };
};
template <typename K> struct sort_uint { typedef u32 t; };
template <> struct sort_uint<u64> { typedef u64 t; };
template <> struct sort_uint<i64> { typedef u64 t; };
template <> struct sort_uint<double> { typedef u64 t; };

/* the key's bits as stored, and its ordered form */
GPUK_DEV u32 sort_raw(u32 k) { return k; }
GPUK_DEV u32 sort_raw(int k) { return (u32)k; }
GPUK_DEV u32 sort_raw(float k) { return __float_as_uint(k); }
GPUK_DEV u64 sort_raw(u64 k) { return k; }
GPUK_DEV u64 sort_raw(i64 k) { return (u64)k; }
GPUK_DEV u64 sort_raw(double k) { return (u64)__double_as_longlong(k); }
template <typename K> GPUK_DEV K sort_key(typename sort_uint<K>::t b) {
    K k;
    memcpy(&k, &b, sizeof k);
    return k;
}
template <typename K> GPUK_DEV typename sort_uint<K>::t sort_ordered(typename sort_uint<K>::t b) {
    typedef typename sort_uint<K>::t U;
    const U top = (U)1 << (sizeof(U) * 8 - 1);
    if (K(-1) > K(0)) return b;        /* unsigned */
    if (K(0.5) == K(0)) return b ^ top; /* signed integer */
    return (b & top) ? ~b : b ^ top;    /* float */
}

/* the digit of ordered bits o at bit shift, width bits (1..8) */
template <typename U> GPUK_DEV u32 sort_digit(U o, u32 shift, u32 width) {
    return (u32)(o >> shift) & ((1u << width) - 1u);
}

GPUK_DEV u32 lanes_below() { u32 m; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m)); return m; }

/* Block-wide exclusive sum of one u64 a thread (256 threads); total to *total. */
GPUK_DEV u64 sort_block_exclusive(u64 v, u64* warp_sums, u64* total) {
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
    u64 incl = v;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        u64 o = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= (u32)d) incl += o;
    }
    __syncthreads(); /* warp_sums may still be read from an earlier call */
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    u64 before = 0, all = 0;
#pragma unroll
    for (int w = 0; w < GPUK_WARPS; w++) {
        if (w < (int)warp) before += warp_sums[w];
        all += warp_sums[w];
    }
    *total = all;
    return before + incl - v;
}

/* Shared memory of a sort block: the tile's keys and values in their new order, each warp's
   count of each digit (then its running place), each digit's output offset. */
template <typename K, int PAIRS> struct sort_smem {
    enum { TILE = GPUK_BLOCK * sort_items<K, PAIRS>::n };
    typename sort_uint<K>::t keys[TILE];
    u32 vals[PAIRS == 1 ? TILE : 1]; /* PAIRS 2: the values go through keys, after them */
    u32 warp_counts[GPUK_WARPS][SORT_RADIX];
    u32 match[sort_or<K, PAIRS>::on ? GPUK_WARPS : 1][SORT_RADIX]; /* a warp's lanes of a digit */
    u64 offset[SORT_RADIX]; /* output index of the tile's element 0 of each digit, mod 2^64 */
    u64 warp_sums[GPUK_WARPS];
    u64 tile;
};

/* Counts the tile's digits warp by warp (a warp's own row of counters: its atomics never
   contend with another warp's). After it, s.warp_counts[w][d] is digit d's count in the warps
   before w, and thread d holds the tile's count of d (returned). Items are warp-striped: item
   k of lane l of warp w is tile element (w * ITEMS + k) * 32 + l, so the warps' segments and,
   inside one, the items in k order follow the input order; items past valid are not counted. */
template <typename K, int PAIRS, int ITEMS, typename U>
GPUK_DEV u32 sort_count(sort_smem<K, PAIRS>& s, const U (&raw)[ITEMS], U flip, u32 shift,
                        u32 width, u32 valid) {
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
    for (u32 i = t; i < GPUK_WARPS * SORT_RADIX; i += GPUK_BLOCK) (&s.warp_counts[0][0])[i] = 0;
    if (sort_or<K, PAIRS>::on)
        for (u32 i = t; i < GPUK_WARPS * SORT_RADIX; i += GPUK_BLOCK) (&s.match[0][0])[i] = 0;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        if ((warp * ITEMS + k) * 32 + lane < valid)
            atomicAdd(&s.warp_counts[warp][sort_digit(sort_ordered<K>(raw[k]) ^ flip, shift,
                                                       width)], 1u);
    __syncthreads();
    u32 run = 0;
#pragma unroll
    for (int w = 0; w < GPUK_WARPS; w++) {
        const u32 c = s.warp_counts[w][t];
        s.warp_counts[w][t] = run;
        run += c;
    }
    return run;
}

/* Ranks the tile by digit, stably, places each key at its rank in s.keys and calls put(k,
   rank) for each placed item k (the values' own step). start: thread d's start of digit d's
   run in the tile. A warp ranks one item of
   each lane at a time: the lanes holding the same digit, their leader advances the warp's
   counter of that digit by their number, each takes its place among them. The lanes of a
   digit come from a shared-memory mask each sets its bit in (sort_or), else one ballot a bit
   of the digit: the masks take a fifth of the ballots' instructions and measured faster
   (docs/performance.md); sm_70's match.any measured slower than either. */
template <typename K, int PAIRS, int ITEMS, typename U, typename Put>
GPUK_DEV void sort_place(sort_smem<K, PAIRS>& s, const U (&raw)[ITEMS], U flip, u32 shift,
                         u32 width, u32 valid, u32 start, Put put) {
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
#pragma unroll
    for (int w = 0; w < GPUK_WARPS; w++) s.warp_counts[w][t] += start;
    __syncthreads();
    u32* mine = s.warp_counts[warp];
    const u32 below = lanes_below();
    const bool full = valid == (u32)s.TILE;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const bool ok = full || (warp * ITEMS + k) * 32 + lane < valid;
        const u32 d = sort_digit(sort_ordered<K>(raw[k]) ^ flip, shift, width);
        u32 peers;
        if (sort_or<K, PAIRS>::on) {
            if (ok) atomicOr(&s.match[warp][d], 1u << lane);
            __syncwarp();
            peers = ok ? s.match[warp][d] : 0u;
            __syncwarp();
        } else {
            peers = full ? 0xffffffffu : __ballot_sync(0xffffffffu, ok);
#pragma unroll
            for (int b = 0; b < 8; b++) {
                const u32 set = __ballot_sync(0xffffffffu, (d >> b) & 1u);
                peers &= ((d >> b) & 1u) ? set : ~set;
            }
        }
        const int leader = 31 - __clz(peers | 1u); /* any lane where peers is 0 (!ok) */
        u32 before = 0;
        if (ok && (u32)leader == lane) {
            before = mine[d];
            mine[d] = before + __popc(peers);
            if (sort_or<K, PAIRS>::on) s.match[warp][d] = 0; /* zero for the next item */
        }
        before = __shfl_sync(0xffffffffu, before, leader);
        if (ok) {
            const u32 at = before + __popc(peers & below);
            s.keys[at] = raw[k];
            put(k, at);
        }
        __syncwarp(); /* the leader's count before the next item's read */
    }
}

/* Thread d's exclusive sums over the digits below d, of two counts at once: the tile's (below
   2^16: a tile is smaller) in the low 16 bits, the whole input's (below 2^44: the grid's tiles
   bound n) above them, so one block scan serves both; the tile's start returned, the input's
   to *digit_start. */
template <typename K, int PAIRS>
GPUK_DEV u32 sort_starts(sort_smem<K, PAIRS>& s, u32 count, u64 input_count, u64* digit_start) {
    static_assert(sort_smem<K, PAIRS>::TILE < 65536, "a tile's counts fit in 16 bits");
    u64 all;
    const u64 both = sort_block_exclusive(input_count << 16 | count, s.warp_sums, &all);
    *digit_start = both >> 16;
    return (u32)(both & 0xffffu);
}

/* Counts key bits b (as stored) in every pass's digit counts */
template <typename K, typename U>
GPUK_DEV void sort_hist_add(u32* counts, U b, U flip, u32 passes, u32 begin_bit, u32 end_bit) {
    const U o = sort_ordered<K>(b) ^ flip;
    for (u32 p = 0; p < passes; p++) {
        const u32 shift = begin_bit + 8 * p;
        const u32 width = end_bit - shift < 8 ? end_bit - shift : 8;
        atomicAdd(counts + p * SORT_RADIX + sort_digit(o, shift, width), 1u);
    }
}

/* Thread d: digit d's count in the tiles before tile index, by look-back (a tile at a time:
   reading several tiles' words at once measured slower, the extra reads crowd L2); then the
   tile's inclusive prefix (count its own) published for the tiles after it. */
GPUK_DEV u64 sort_look_back(volatile u64* status, u64 index, u32 pass, u32 count) {
    const u32 t = threadIdx.x;
    u64 before = 0;
    if (index == 0) return 0;
    for (u64 j = index - 1;; j--) {
        u64 w;
        do { w = status[j * SORT_RADIX + t]; } while ((w >> 60) != pass + 1);
        before += w & SORT_VALUE_MASK;
        if ((w & SORT_INCL) || j == 0) break;
    }
    status[index * SORT_RADIX + t] = (u64)(pass + 1) << 60 | SORT_INCL | (before + count);
    return before;
}

/* The value of the tile's element e (base: the tile's first): the key's input position in
   index mode, else vin's (0 past valid) */
GPUK_DEV u32 sort_value(const u32* vin, u64 base, u32 e, u32 valid, u32 mode) {
    return (mode & SORT_INDEX) ? (u32)(base + e) : e < valid ? vin[base + e] : 0u;
}

/* The histogram phase (SORT_HIST), one tile's pass (pass 0 ..), or every pass of the one tile
   where n fits one (SORT_SINGLE; the tile stays in registers' striping between passes).
   PAIRS 2 moves the values after the keys: each item's place kept (16 bits), the keys written
   out with their digits kept (8 bits), then the values loaded and put through the keys' tile
   to their places; in one tile, each item's input position follows its key instead, and the
   values are gathered by it at the end. */
template <typename K, int PAIRS>
GPUK_DEV void sort_tile(sort_smem<K, PAIRS>& s, K* out, const K* in, u32* vout, const u32* vin,
                        u64 n, u64* scratch, u32 pass, u32 begin_bit, u32 end_bit, u32 mode) {
    typedef typename sort_uint<K>::t U;
    enum { ITEMS = sort_items<K, PAIRS>::n, TILE = GPUK_BLOCK * ITEMS, R = (ITEMS + 1) / 2 };
    const u32 t = threadIdx.x, lane = t & 31, warp = t / 32;
    const U flip = (mode & SORT_DESCENDING) ? ~(U)0 : (U)0;
    const u32 passes = (end_bit - begin_bit + 7) / 8;
    if (pass == SORT_HIST) { /* every pass's digit counts, in shared memory then added up */
        u32* counts = &s.warp_counts[0][0]; /* 8 passes x 256 = GPUK_WARPS x SORT_RADIX */
        for (u32 i = t; i < GPUK_WARPS * SORT_RADIX; i += GPUK_BLOCK) counts[i] = 0;
        __syncthreads();
        /* 16-byte packs from the first aligned key on, four in flight a thread; the keys
           before it and after the last whole pack one a thread */
        enum { V = 16 / sizeof(U) };
        const U* src = (const U*)in;
        const u64 head_bytes = (16u - ((u64)in & 15u)) & 15u;
        const u64 head = head_bytes / sizeof(U) < n ? head_bytes / sizeof(U) : n;
        const u64 packs = (n - head) / V, stride = (u64)gridDim.x * GPUK_BLOCK;
        const pack16<U>* p = (const pack16<U>*)(src + head);
        const u64 g = (u64)blockIdx.x * GPUK_BLOCK + t;
        u64 q = g;
        for (; q + 3 * stride < packs; q += 4 * stride) {
            pack16<U> x[4];
#pragma unroll
            for (int c = 0; c < 4; c++) x[c] = p[q + c * stride];
#pragma unroll
            for (int c = 0; c < 4; c++)
#pragma unroll
                for (int v = 0; v < V; v++)
                    sort_hist_add<K>(counts, x[c].v[v], flip, passes, begin_bit, end_bit);
        }
        for (; q < packs; q += stride)
#pragma unroll
            for (int v = 0; v < V; v++)
                sort_hist_add<K>(counts, p[q].v[v], flip, passes, begin_bit, end_bit);
        if (g < head) sort_hist_add<K>(counts, src[g], flip, passes, begin_bit, end_bit);
        if (head + packs * V + g < n)
            sort_hist_add<K>(counts, src[head + packs * V + g], flip, passes, begin_bit, end_bit);
        __syncthreads();
        for (u32 i = t; i < passes * SORT_RADIX; i += GPUK_BLOCK)
            if (counts[i])
                atomicAdd((unsigned long long*)scratch + i, (unsigned long long)counts[i]);
        return;
    }

    const bool single = pass == SORT_SINGLE;
    u64 index = 0;
    if (!single) {
        if (t == 0) s.tile = atomicAdd((u32*)(scratch + 8 * SORT_RADIX) + pass, 1u);
        __syncthreads();
        index = s.tile;
    }
    const u64 base = index * TILE;
    const u32 valid = (u32)(n - base < TILE ? n - base : TILE);
    U raw[ITEMS]; /* the keys' bits; their digits are worked out again where needed */
    u32 val[PAIRS == 1 ? ITEMS : 1];
    u32 pos[R], rank[R]; /* PAIRS 2: input positions (one tile), places; two 16 bits a register */
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { /* every load issued before any use */
        const u32 e = (warp * ITEMS + k) * 32 + lane;
        raw[k] = e < valid ? sort_raw(in[base + e]) : (U)0;
        if (PAIRS == 1) val[k] = sort_value(vin, base, e, valid, mode);
        if (PAIRS == 2 && k % 2 == 0) pos[k / 2] = e | (e + 32) << 16;
    }

    const u64 tag = (u64)(pass + 1) << 60;
    volatile u64* status = (volatile u64*)(scratch + SORT_HEAD_WORDS);
    for (u32 p = single ? 0 : pass; p < (single ? passes : pass + 1); p++) {
        const u32 shift = begin_bit + 8 * p;
        const u32 width = end_bit - shift < 8 ? end_bit - shift : 8;
        const u32 count = sort_count<K, PAIRS, ITEMS, U>(s, raw, flip, shift, width, valid);
        /* the tile's counts published before the ranking, so that later tiles' look-back
           finds them sooner */
        if (!single) status[index * SORT_RADIX + t] = tag | (index == 0 ? SORT_INCL : 0) | count;
        u64 digit_start;
        const u32 tile_start =
            sort_starts(s, count, single ? 0 : scratch[p * SORT_RADIX + t], &digit_start);
#pragma unroll
        for (int r = 0; r < R; r++) rank[r] = 0;
        sort_place<K, PAIRS, ITEMS, U>(s, raw, flip, shift, width, valid, tile_start,
                                       [&](int k, u32 at) {
                                           if (PAIRS == 1) s.vals[at] = val[k];
                                           if (PAIRS == 2) rank[k / 2] |= at << (16 * (k & 1));
                                       });
        if (single) {
            __syncthreads();
#pragma unroll
            for (int k = 0; k < ITEMS; k++) { /* the next pass's input, in the same striping */
                const u32 e = (warp * ITEMS + k) * 32 + lane;
                raw[k] = e < valid ? s.keys[e] : (U)0;
                if (PAIRS == 1) val[k] = e < valid ? s.vals[e] : 0u;
            }
            __syncthreads();
            if (PAIRS == 2) { /* each item's input position follows its key through the tile */
#pragma unroll
                for (int k = 0; k < ITEMS; k++)
                    if ((warp * ITEMS + k) * 32 + lane < valid)
                        s.keys[(rank[k / 2] >> (16 * (k & 1))) & 0xffffu] =
                            (pos[k / 2] >> (16 * (k & 1))) & 0xffffu;
                __syncthreads();
#pragma unroll
                for (int k = 0; k < ITEMS; k += 2) {
                    const u32 e = (warp * ITEMS + k) * 32 + lane;
                    pos[k / 2] = ((u32)s.keys[e] & 0xffffu) |
                                 (k + 1 < ITEMS ? (u32)s.keys[e + 32] << 16 : 0u);
                }
            }
            continue;
        }
        const u64 before = sort_look_back(status, index, pass, count);
        /* where digit d starts in the output: the histogram's counts below d, then the earlier
           tiles' */
        s.offset[t] = digit_start + before - tile_start;
        __syncthreads();
        u32 dig[(ITEMS + 3) / 4]; /* PAIRS 2: the digits of the thread's places, four a register */
#pragma unroll
        for (int i = 0; i < (ITEMS + 3) / 4; i++) dig[i] = 0;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const u32 e = k * GPUK_BLOCK + t;
            if (e < valid) {
                const U r = s.keys[e];
                const u32 d = sort_digit(sort_ordered<K>(r) ^ flip, shift, width);
                const u64 at = s.offset[d] + e;
                out[at] = sort_key<K>(r);
                if (PAIRS == 1) vout[at] = s.vals[e];
                if (PAIRS == 2) dig[k / 4] |= d << (8 * (k % 4));
            }
        }
        if (PAIRS == 2) { /* the values, loaded once the keys are out (CUB's order) */
            u32 v[ITEMS];
#pragma unroll
            for (int k = 0; k < ITEMS; k++)
                v[k] = sort_value(vin, base, (warp * ITEMS + k) * 32 + lane, valid, mode);
            __syncthreads(); /* every key read out of the tile */
#pragma unroll
            for (int k = 0; k < ITEMS; k++)
                if ((warp * ITEMS + k) * 32 + lane < valid)
                    s.keys[(rank[k / 2] >> (16 * (k & 1))) & 0xffffu] = v[k];
            __syncthreads();
#pragma unroll
            for (int k = 0; k < ITEMS; k++) {
                const u32 e = k * GPUK_BLOCK + t;
                if (e < valid)
                    vout[s.offset[(dig[k / 4] >> (8 * (k % 4))) & 0xffu] + e] = (u32)s.keys[e];
            }
        }
        return;
    }
    /* the single block: its tile is sorted in registers' striping; write it out in order */
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const u32 e = (warp * ITEMS + k) * 32 + lane;
        if (e < valid) {
            out[e] = sort_key<K>(raw[k]);
            if (PAIRS == 1) vout[e] = val[k];
        }
    }
    if (PAIRS == 2) { /* the values gathered, all read before any is written (vout may be vin) */
        u32 v[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            v[k] = sort_value(vin, 0, (pos[k / 2] >> (16 * (k & 1))) & 0xffffu,
                              (warp * ITEMS + k) * 32 + lane < valid ? valid : 0, mode);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const u32 e = (warp * ITEMS + k) * 32 + lane;
            if (e < valid) vout[e] = v[k];
        }
    }
}
/* The one tile's passes out of line: the sm_90 pairs' passes keep their 80 registers to
   themselves (inlined beside them, it spilled) */
template <typename K, int PAIRS>
__device__ __noinline__ void sort_single_apart(sort_smem<K, PAIRS>& s, K* out, const K* in,
                                               u32* vout, const u32* vin, u64 n, u32 begin_bit,
                                               u32 end_bit, u32 mode) {
    sort_tile<K, PAIRS>(s, out, in, vout, vin, n, (u64*)0, SORT_SINGLE, begin_bit, end_bit,
                        mode);
}

template <typename K, int PAIRS>
GPUK_DEV void sort_run(K* out, const K* in, u32* vout, const u32* vin, u64 n, u64* scratch,
                       u32 pass, u32 begin_bit, u32 end_bit, u32 mode) {
    __shared__ sort_smem<K, PAIRS> s;
    if (PAIRS == 2 && pass == SORT_SINGLE)
        sort_single_apart<K, PAIRS>(s, out, in, vout, vin, n, begin_bit, end_bit, mode);
    else
        sort_tile<K, PAIRS>(s, out, in, vout, vin, n, scratch, pass, begin_bit, end_bit, mode);
}

/* Launched by the host once a phase: pass = SORT_HIST (a grid over the input), SORT_SINGLE
   (one block, n <= one tile), or a pass 0 ..; mode: SORT_DESCENDING, SORT_INDEX. At most 64
   registers, so SORT_BLOCKS_SM (4) blocks an SM fit: 3 at 80 registers measured slower, 5 at
   48 spill with values; left free, the kernel took 127 registers and 2 blocks. 4-byte keys
   alone spill a few words at 64 and still measured faster at 24 items than at 16. */
// wrap gpuk_sort_keys_{t}(gpuk_array out, gpuk_array in, size_t n, int descending,
//      uint32_t begin_bit, uint32_t end_bit)
//      = gpuk__sort({size}, out, in, NULL, NULL, n, descending, begin_bit, end_bit, 0)
//      | out = in sorted stably ({T} keys), by bits [begin_bit, end_bit) of their ordered
//      form (end_bit 0: all); out may be in
#define GPUK_SORT_KEYS(T, t)                                                                 \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, SORT_BLOCKS_SM)                 \
    gpuk_sort_keys_##t(T* out, const T* in, u32* vout, const u32* vin, u64 n, u64* scratch,  \
                       u32 pass, u32 begin_bit, u32 end_bit, u32 mode) {                     \
        sort_run<T, 0>(out, in, vout, vin, n, scratch, pass, begin_bit, end_bit, mode);      \
    }
// wrap gpuk_sort_pairs_{t}(gpuk_array keys_out, gpuk_array values_out, gpuk_array keys_in,
//      gpuk_array values_in, size_t n, int descending, uint32_t begin_bit, uint32_t end_bit)
//      = gpuk__sort({size}, keys_out, keys_in, &values_out, &values_in, n, descending,
//      begin_bit, end_bit, 0)
//      | keys_out = keys_in sorted stably, values_out (any 4-byte type) = values_in in that
//      order; outputs may be their inputs
// wrap gpuk_sort_index_{t}(gpuk_array keys_out, gpuk_array index_out, gpuk_array keys_in,
//      size_t n, int descending, uint32_t begin_bit, uint32_t end_bit)
//      = gpuk__sort@gpuk_sort_pairs_{t}({size}, keys_out, keys_in, &index_out, NULL, n,
//      descending, begin_bit, end_bit, 1)
//      | keys_out = keys_in sorted stably, index_out (uint32) = each one's index in keys_in
#define GPUK_SORT_PAIRS(T, t)                                                                \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, SORT_BLOCKS_SM)                 \
    gpuk_sort_pairs_##t(T* out, const T* in, u32* vout, const u32* vin, u64 n, u64* scratch, \
                        u32 pass, u32 begin_bit, u32 end_bit, u32 mode) {                    \
        sort_run<T, 1>(out, in, vout, vin, n, scratch, pass, begin_bit, end_bit, mode);      \
    }
/* Variant for 4-byte keys: the values moved after the keys, the masks and SORT_ITEMS_4M items
   in static shared memory, SORT_PAIRS_BLOCKS_SM (3) blocks an SM at 80 registers. */
#define GPUK_SORT_PAIRS_SM90(T, t)                                                           \
    extern "C" __global__ void __launch_bounds__(GPUK_BLOCK, SORT_PAIRS_BLOCKS_SM)           \
    gpuk_sort_pairs_##t##__sm90(T* out, const T* in, u32* vout, const u32* vin, u64 n,       \
                                u64* scratch, u32 pass, u32 begin_bit, u32 end_bit, u32 mode) { \
        static_assert(sizeof(T) == 4, "the values go through the keys' tile");              \
        sort_run<T, 2>(out, in, vout, vin, n, scratch, pass, begin_bit, end_bit, mode);      \
    }

/* one line per kernel family and type; tools/gen_ptx.py reads the lines below */
// ==== instantiation lists ====
GPUK_FILL(float, f32)
GPUK_FILL(double, f64)
GPUK_FILL(int, i32)
GPUK_FILL(u32, u32)
GPUK_IOTA(float, f32)
GPUK_IOTA(double, f64)
GPUK_IOTA(int, i32)
GPUK_IOTA(u32, u32)
GPUK_LINSPACE(float, f32)
GPUK_LINSPACE(double, f64)
GPUK_COPY_STRIDED(float, f32)
GPUK_COPY_STRIDED(double, f64)
GPUK_COPY_STRIDED(int, i32)
GPUK_COPY_STRIDED(u32, u32)

GPUK_BINARY(add, float, f32)
GPUK_BINARY(add, double, f64)
GPUK_BINARY(add, int, i32)
GPUK_BINARY(add, u32, u32)
GPUK_BINARY(sub, float, f32)
GPUK_BINARY(sub, double, f64)
GPUK_BINARY(sub, int, i32)
GPUK_BINARY(sub, u32, u32)
GPUK_BINARY(mul, float, f32)
GPUK_BINARY(mul, double, f64)
GPUK_BINARY(mul, int, i32)
GPUK_BINARY(mul, u32, u32)
GPUK_BINARY(add, f16_t, f16)
GPUK_BINARY(add, bf16_t, bf16)
GPUK_BINARY(sub, f16_t, f16)
GPUK_BINARY(sub, bf16_t, bf16)
GPUK_BINARY(mul, f16_t, f16)
GPUK_BINARY(mul, bf16_t, bf16)
GPUK_DIV(float, f32)
GPUK_DIV(double, f64)
GPUK_BINARY(minimum, float, f32)
GPUK_BINARY(minimum, double, f64)
GPUK_BINARY(minimum, int, i32)
GPUK_BINARY(minimum, u32, u32)
GPUK_BINARY(maximum, float, f32)
GPUK_BINARY(maximum, double, f64)
GPUK_BINARY(maximum, int, i32)
GPUK_BINARY(maximum, u32, u32)
GPUK_AXPY(float, f32)
GPUK_AXPY(double, f64)
GPUK_AXPY_HALF(f16_t, f16)
GPUK_AXPY_HALF(bf16_t, bf16)
GPUK_SCALE(float, f32)
GPUK_SCALE(double, f64)
GPUK_UNARY(abs, float, f32)
GPUK_UNARY(abs, double, f64)
GPUK_UNARY(abs, int, i32)
GPUK_UNARY(sqrt, float, f32)
GPUK_UNARY(sqrt, double, f64)
GPUK_UNARY(exp, float, f32)
GPUK_UNARY(exp, double, f64)
GPUK_UNARY(log, float, f32)
GPUK_UNARY(log, double, f64)
GPUK_UNARY_LONG(sin, float, f32)
GPUK_UNARY_LONG(sin, double, f64)
GPUK_UNARY_LONG(cos, float, f32)
GPUK_UNARY_LONG(cos, double, f64)
GPUK_COS2SIN2(float, f32)
GPUK_COS2SIN2(double, f64)
GPUK_SELU(float, f32)
GPUK_SELU(double, f64)
GPUK_TO_HALF(f16_t, f16, float, f32)
GPUK_TO_HALF(bf16_t, bf16, float, f32)
GPUK_TO_F32(f16_t, f16)
GPUK_TO_F32(bf16_t, bf16)

GPUK_SUM(float, f32)
GPUK_SUM(double, f64)
GPUK_SUM(int, i32)
GPUK_SUM(u32, u32)
GPUK_MIN(float, f32)
GPUK_MIN(double, f64)
GPUK_MIN(int, i32)
GPUK_MIN(u32, u32)
GPUK_MAX(float, f32)
GPUK_MAX(double, f64)
GPUK_MAX(int, i32)
GPUK_MAX(u32, u32)
GPUK_ARGMIN(float, f32)
GPUK_ARGMIN(double, f64)
GPUK_ARGMIN(int, i32)
GPUK_ARGMIN(u32, u32)
GPUK_ARGMAX(float, f32)
GPUK_ARGMAX(double, f64)
GPUK_ARGMAX(int, i32)
GPUK_ARGMAX(u32, u32)
GPUK_DOT(float, f32)
GPUK_DOT(double, f64)
GPUK_NORM2(float, f32)
GPUK_NORM2(double, f64)
GPUK_SUM_HALF(f16_t, f16)
GPUK_SUM_HALF(bf16_t, bf16)
GPUK_MIN_HALF(f16_t, f16)
GPUK_MIN_HALF(bf16_t, bf16)
GPUK_MAX_HALF(f16_t, f16)
GPUK_MAX_HALF(bf16_t, bf16)
GPUK_DOT_HALF(f16_t, f16)
GPUK_DOT_HALF(bf16_t, bf16)
GPUK_SUM_AXIS(float, f32)
GPUK_SUM_AXIS(double, f64)
GPUK_MIN_AXIS(float, f32)
GPUK_MIN_AXIS(double, f64)
GPUK_MAX_AXIS(float, f32)
GPUK_MAX_AXIS(double, f64)
GPUK_ARGMIN_AXIS(float, f32)
GPUK_ARGMIN_AXIS(double, f64)
GPUK_ARGMAX_AXIS(float, f32)
GPUK_ARGMAX_AXIS(double, f64)

GPUK_SCAN(float, f32)
GPUK_SCAN(double, f64)
GPUK_SCAN(int, i32)
GPUK_SCAN(u32, u32)
GPUK_SELECT_IF(float, f32)
GPUK_SELECT_IF(double, f64)
GPUK_SELECT_IF(int, i32)
GPUK_SELECT_IF(u32, u32)
GPUK_SELECT_FLAGGED(float, f32)
GPUK_SELECT_FLAGGED(double, f64)
GPUK_SELECT_FLAGGED(int, i32)
GPUK_SELECT_FLAGGED(u32, u32)
GPUK_COUNT_IF(float, f32)
GPUK_COUNT_IF(double, f64)
GPUK_COUNT_IF(int, i32)
GPUK_COUNT_IF(u32, u32)
GPUK_PARTITION_IF(float, f32)
GPUK_PARTITION_IF(double, f64)
GPUK_PARTITION_IF(int, i32)
GPUK_PARTITION_IF(u32, u32)
GPUK_UNIQUE(float, f32)
GPUK_UNIQUE(double, f64)
GPUK_UNIQUE(int, i32)
GPUK_UNIQUE(u32, u32)
GPUK_RUN_LENGTH_ENCODE(float, f32)
GPUK_RUN_LENGTH_ENCODE(double, f64)
GPUK_RUN_LENGTH_ENCODE(int, i32)
GPUK_RUN_LENGTH_ENCODE(u32, u32)

GPUK_STENCIL3X3(float, f32)
GPUK_STENCIL3X3(int, i32)
GPUK_STENCIL3X3_SM90(float, f32)
GPUK_STENCIL3X3_SM90(int, i32)
GPUK_STENCIL3X3_SM80(float, f32)
GPUK_STENCIL3X3_SM80(int, i32)
GPUK_HEAT(float, f32)
GPUK_HEAT(double, f64)

GPUK_TRANSPOSE(float, f32)
GPUK_TRANSPOSE(double, f64)

GPUK_GEMM(float, f32)
GPUK_GEMM(double, f64)
GPUK_GEMM(float, tf32)
GPUK_GEMM_SM80(float, f32)
GPUK_GEMM_SM80(double, f64)
GPUK_GEMM_SM80(float, tf32)
GPUK_GEMM_SM90(double, f64)
GPUK_GEMM_SM90A(float, tf32)

GPUK_HISTOGRAM(unsigned char, u8)
GPUK_HISTOGRAM(int, i32)
GPUK_HISTOGRAM_FLOAT(float, f32, HIST_F32_PER_SM)
GPUK_HISTOGRAM_FLOAT(double, f64, HIST_F64_PER_SM)
GPUK_SORT_KEYS(u32, u32)
GPUK_SORT_PAIRS(u32, u32)
GPUK_SORT_KEYS(int, i32)
GPUK_SORT_PAIRS(int, i32)
GPUK_SORT_KEYS(float, f32)
GPUK_SORT_PAIRS(float, f32)
GPUK_SORT_KEYS(u64, u64)
GPUK_SORT_PAIRS(u64, u64)
GPUK_SORT_KEYS(i64, i64)
GPUK_SORT_PAIRS(i64, i64)
GPUK_SORT_KEYS(double, f64)
GPUK_SORT_PAIRS(double, f64)
GPUK_SORT_PAIRS_SM90(u32, u32)
GPUK_SORT_PAIRS_SM90(int, i32)
GPUK_SORT_PAIRS_SM90(float, f32)

GPUK_RANDOM(float, f32, 4)
GPUK_RANDOM(double, f64, 2)
