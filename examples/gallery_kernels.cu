// examples/gallery_kernels.cu - the gallery's own CUDA C kernels (the examples from 03_ on):
// Mandelbrot and Julia sets in f32 and f64, 3x3 smoothing, a heat-equation step, and small
// helpers for Monte Carlo pi, histograms, particles and the streams pipeline.
// tools/gpuk_embed.py turns it into examples/gallery_kernels.h (PTX + a typed C wrapper per
// kernel):
//   python3 tools/gpuk_embed.py examples/gallery_kernels.cu -o examples/gallery_kernels.h
// Arithmetic goes through the explicitly rounded intrinsics (__fmul_rn, __dadd_rn, __fma_rn,
// ...), which nvcc never fuses or splits: the examples' CPU references (C99 fma() where the
// kernel fuses) then compute the same bits.

__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }
// |z|^2 > 4 compared as integers: |z|^2 is never negative or NaN before the escape, and for
// such floats the order of the bits is the order of the values. The compare then runs on the
// integer units, not the FP64 ones the loop is bound by (the f64 Mandelbrot about 6 % faster).
__device__ __forceinline__ bool above4(float m) { return __float_as_int(m) > 0x40800000; }
__device__ __forceinline__ bool above4(double m) { return __double_as_longlong(m) > 0x4010000000000000LL; }

// Iterations of z = z^2 + c from z until |z|^2 > 4, at most max_iter. Six rounded operations an
// iteration: zr^2, |z|^2 = fma(zi, zi, zr^2), zr' = fma(-zi, zi, zr^2) + cr and
// zi' = fma(zr + zr, zi, ci) (eight without fma: the f64 Mandelbrot a fifth slower).
template <typename T>
__device__ __forceinline__ int escape_time(T zr, T zi, T cr, T ci, int max_iter) {
    int i = 0;
    while (i < max_iter) {
        const T zr2 = mul(zr, zr);
        if (above4(fma_rn(zi, zi, zr2))) break;
        const T t = add(fma_rn(-zi, zi, zr2), cr);
        zi = fma_rn(add(zr, zr), zi, ci);
        zr = t;
        i++;
    }
    return i;
}

// One pixel (px, py) of a width x height image of the plane from (x0, y0), dx and dy apart:
// Mandelbrot: z starts at 0, c is the pixel; Julia: z starts at the pixel, c is (cr, ci).
template <typename T>
__device__ __forceinline__ void fractal(unsigned* iters, int width, int height, T x0, T y0,
                                        T dx, T dy, int julia, T cr, T ci, int max_iter) {
    int px = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int py = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (px >= width || py >= height) return;
    T x = add(x0, mul((T)px, dx)), y = add(y0, mul((T)py, dy));
    int n = julia ? escape_time(x, y, cr, ci, max_iter) : escape_time((T)0, (T)0, x, y, max_iter);
    iters[(size_t)py * (size_t)width + (size_t)px] = (unsigned)n;
}

extern "C" __global__ void mandelbrot_f32(unsigned* iters, int width, int height, float x0,
                                          float y0, float dx, float dy, int max_iter) {
    fractal(iters, width, height, x0, y0, dx, dy, 0, 0.0f, 0.0f, max_iter);
}
extern "C" __global__ void mandelbrot_f64(unsigned* iters, int width, int height, double x0,
                                          double y0, double dx, double dy, int max_iter) {
    fractal(iters, width, height, x0, y0, dx, dy, 0, 0.0, 0.0, max_iter);
}
extern "C" __global__ void julia_f32(unsigned* iters, int width, int height, float x0, float y0,
                                     float dx, float dy, float cr, float ci, int max_iter) {
    fractal(iters, width, height, x0, y0, dx, dy, 1, cr, ci, max_iter);
}
extern "C" __global__ void julia_f64(unsigned* iters, int width, int height, double x0,
                                     double y0, double dx, double dy, double cr, double ci,
                                     int max_iter) {
    fractal(iters, width, height, x0, y0, dx, dy, 1, cr, ci, max_iter);
}

// out = mean of the pixel's 3x3 neighbourhood inside the image (edges average fewer pixels),
// added row by row, left to right.
extern "C" __global__ void smooth3x3_f32(const float* in, float* out, int width, int height) {
    int px = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int py = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (px >= width || py >= height) return;
    float s = 0.0f;
    int count = 0;
    for (int y = py - 1; y <= py + 1; y++) {
        if (y < 0 || y >= height) continue;
        for (int x = px - 1; x <= px + 1; x++) {
            if (x < 0 || x >= width) continue;
            s = add(s, in[(size_t)y * (size_t)width + (size_t)x]);
            count++;
        }
    }
    out[(size_t)py * (size_t)width + (size_t)px] = __fdiv_rn(s, (float)count);
}

// One explicit step of the 2D heat equation, 5-point Laplacian: v = u + r * (left + right +
// up + down - 4u) inside; the border keeps its values (Dirichlet). r = k dt / h^2 <= 1/4.
extern "C" __global__ void heat_step_f32(const float* u, float* v, int width, int height,
                                         float r) {
    int px = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int py = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (px >= width || py >= height) return;
    size_t i = (size_t)py * (size_t)width + (size_t)px, w = (size_t)width;
    if (px == 0 || py == 0 || px == width - 1 || py == height - 1) {
        v[i] = u[i];
        return;
    }
    float sum4 = add(add(add(u[i - 1], u[i + 1]), u[i - w]), u[i + w]);
    v[i] = add(u[i], mul(r, sub(sum4, mul(4.0f, u[i]))));
}

// hit[i] = 1 where the point (x[i], y[i]) lies inside the unit circle (in double: exact
// squares of the floats), else 0.
extern "C" __global__ void in_circle(const float* x, const float* y, unsigned* hit, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = x[i], b = y[i];
    hit[i] = add(mul(a, a), mul(b, b)) < 1.0 ? 1u : 0u;
}

// inside[i] = 1 where the point (x[i], y[i]) lies in the box [0, 1) x [0, 1), else 0: the
// flags gpuk_select_flagged_f32 keeps particles by in the compaction example.
extern "C" __global__ void in_box(const float* x, const float* y, unsigned char* inside,
                                  unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    inside[i] = x[i] >= 0.0f && x[i] < 1.0f && y[i] >= 0.0f && y[i] < 1.0f;
}

// q[i] = floor(x[i] * scale) as an int: float samples into integer bins for gpuk_histogram_i32.
extern "C" __global__ void quantize_f32(const float* x, int* q, float scale, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = (int)floorf(mul(x[i], scale));
}

// cell[i] = the cell of the point (x[i], y[i]) in a g x g grid over [0, 1) x [0, 1), row by
// row (x * g and y * g rounded to nearest, then truncated; points outside clamped to the edge
// cells): the keys the particle-sorting example sorts by.
extern "C" __global__ void cell_of(const float* x, const float* y, unsigned* cell, unsigned g,
                                   unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float fx = mul(x[i], (float)g), fy = mul(y[i], (float)g);
    unsigned cx = fx <= 0.0f ? 0u : fx >= (float)(g - 1) ? g - 1 : (unsigned)fx;
    unsigned cy = fy <= 0.0f ? 0u : fy >= (float)(g - 1) ? g - 1 : (unsigned)fy;
    cell[i] = cy * g + cx;
}

// out[i] = in[index[i]]: an array put in the order a sort's index gives.
extern "C" __global__ void gather_f32(const float* in, const unsigned* index, float* out,
                                      unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[index[i]];
}

// out[i] = sqrt(iters[i] / max_iter): escape counts as brightness in [0, 1] (1 inside the
// set), both steps correctly rounded, as the CPU's sqrtf and float division are.
extern "C" __global__ void brightness_f32(const unsigned* iters, float* out, int max_iter,
                                          unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __fsqrt_rn(__fdiv_rn((float)iters[i], (float)max_iter));
}

// out[i] = level[b] for the bin b of in[i] in nbins bins over [lo, hi), as gpuk_histogram_f32
// bins it (b = trunc((in[i] - lo) * (nbins / (hi - lo))), each step rounded, nbins - 1 where
// that rounds to nbins); below lo level[nbins], at or above hi level[nbins + 1]. With level
// the histogram's running sum over n, that is histogram equalization.
extern "C" __global__ void equalize_f32(const float* in, const float* level, float* out,
                                        unsigned nbins, float lo, float hi, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    unsigned b;
    if (v < lo) b = nbins;
    else if (v >= hi) b = nbins + 1;
    else {
        float t = mul(sub(v, lo), __fdiv_rn((float)nbins, sub(hi, lo)));
        b = (unsigned)t;
        if (b >= nbins) b = nbins - 1;
    }
    out[i] = level[b];
}

// out[i] = in[i] after reps steps of x = x * 0.999 + 0.001 (fused): arithmetic to keep the
// GPU busy for about as long as a chunk's copies take in the streams example.
extern "C" __global__ void busy_f32(const float* in, float* out, unsigned n, int reps) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    for (int r = 0; r < reps; r++) x = __fmaf_rn(x, 0.999f, 0.001f);
    out[i] = x;
}
