/* tests/compile/compile_cxx11.cpp - the implementation compiles as C++11 and C++17 (see
   compile_checks.sh), and so do the public macros that have a C++ spelling. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
static int macros_compile(void) {
    int x = 5;
    gpuk_stream s = GPUK_DEFAULT_STREAM;
    gpuk_dim3 d = GPUK_DIM1(x), e = GPUK_DIM2(x, 2), f = GPUK_DIM3(1u, x, 3);
    gpuk_range r = GPUK_RANGE(x);
    gpuk_array2d v = gpuk_at2d(gpuk_buffer(), 0, 2, 3, 0);
    return (int)(s.id + d.y + e.y + f.z + r.bytes + v.cols);
}
int main(void) { return gpuk_result_str(GPUK_OK)[0] == 'G' && macros_compile() == 13 ? 0 : 1; }
