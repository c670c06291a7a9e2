/* tests/compile/compile_cxx11.cpp - the implementation compiles as C++11 and C++17 (see
   compile_checks.sh), and so do the public macros that have a C++ spelling, the launch-grid
   helpers, GPUK_OP_* for the GEMM calls' uint32_t trans_a and trans_b, and version tests in
   #if. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#if !defined(GPUK_VERSION) || GPUK_VERSION < 300 || \
    GPUK_VERSION != GPUK_VERSION_MAJOR * 10000 + GPUK_VERSION_MINOR * 100 + GPUK_VERSION_PATCH
#error "GPUK_VERSION must be usable in #if"
#endif
static int macros_compile(void) {
    int x = 5;
    gpuk_stream s = GPUK_DEFAULT_STREAM;
    gpuk_dim3 d = GPUK_DIM1(x), e = GPUK_DIM2(x, 2), f = GPUK_DIM3(1u, x, 3);
    gpuk_range r = GPUK_RANGE(x);
    gpuk_array2d v = gpuk_at2d(gpuk_buffer(), 0, 2, 3, 0);
    return (int)(s.id + d.y + e.y + f.z + r.bytes + v.cols);
}
static int helpers_compile(void) {
    gpuk_grid g = gpuk_grid_2d(10, 3, 8, 2), h = gpuk_grid_1d(10, 4);
    gpuk_array2d v = gpuk_at2d(gpuk_buffer(), 0, 2, 2, 0);
    uint32_t t = GPUK_OP_T;
    g.stream = GPUK_DEFAULT_STREAM;
#ifndef GPUK_NO_KERNELS
    if (gpuk_gemm_f64(NULL, g.stream, v, 1.0, v, GPUK_OP_N, v, GPUK_OP_T, 0.0) == GPUK_OK)
        return -1; /* a NULL ctx is refused */
#endif
    return (int)(g.grid.x + g.grid.y + h.grid.x + t + v.cols); /* 2 + 2 + 3 + 1 + 2 */
}
int main(void) {
    return gpuk_result_str(GPUK_OK)[0] == 'G' && macros_compile() == 13 && helpers_compile() == 10
           ? 0 : 1;
}
