// tests/support/embed_test_kernels.cu - kernels for the generated-wrapper tests:
// tools/gpuk_embed.py turns this into tests/support/embed_test_kernels.h (typed C wrappers),
// which tests/unit/unit_embed.c (fake driver: the argument bytes) and tests/gpu/gpu_embed.c (a
// GPU: the results) use. Between them they cover every parameter kind a wrapper takes: pointers
// to several element types, const and not, and scalars of 1, 2, 4 and 8 bytes, signed, unsigned
// and floating.
#include <stdint.h>

/* y[i] = a * x[i] + y[i] */
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// out[i] = (double)in[i] * scale + offset, for 64-bit counts
extern "C" __global__ void widen(const int32_t* in, double* out, double scale, long long offset,
                                 uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (double)in[i] * scale + (double)offset;
}

// Every small scalar width arrives intact: out[0..5] = each argument widened to 64 bits.
extern "C" __global__ void small_args(int8_t a, uint8_t b, short c, unsigned short d,
                                      char e, int16_t f,
                                      unsigned long long* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = (unsigned long long)(long long)a;
        out[1] = (unsigned long long)b;
        out[2] = (unsigned long long)(long long)c;
        out[3] = (unsigned long long)d;
        out[4] = (unsigned long long)(long long)e;
        out[5] = (unsigned long long)(long long)f;
    }
}

extern "C" {
// bytes[i] ^= key, over n bytes of a byte view (any offset: 1-byte alignment)
__global__ void xor_bytes(uint8_t* bytes, unsigned char key, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bytes[i] ^= key;
}
}

// dst[i] = src[i] + (uint16_t)i, 16-bit elements
extern "C" __global__ void add_index_u16(const uint16_t* src, uint16_t* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = (uint16_t)(src[i] + (uint16_t)i);
}

// No parameters: launch overhead, and the zero-argument wrapper.
extern "C" __global__ void nothing(void) {}
