/* tests/compile/compile_c99.c - the implementation compiles as strict C99 (see
   compile_checks.sh), and so does what programs write with it: GPUK_ARGS over pointers to
   const objects, the launch-grid helpers, GPUK_OP_* for the GEMM calls' uint32_t trans_a and
   trans_b, and version tests in #if. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"

#if !defined(GPUK_VERSION) || GPUK_VERSION < 300
#error "GPUK_VERSION >= 300 must hold from 0.3.0 on, in #if"
#endif
#if GPUK_VERSION != GPUK_VERSION_MAJOR * 10000 + GPUK_VERSION_MINOR * 100 + GPUK_VERSION_PATCH
#error "GPUK_VERSION must be GPUK_VERSION_MAJOR/MINOR/PATCH combined"
#endif
#if GPUK_VERSION_MAJOR == 0 && GPUK_VERSION_MINOR < 3
#error "GPUK_VERSION_MAJOR and GPUK_VERSION_MINOR must be usable in #if"
#endif

static int used_as_documented(void) {
    const gpuk_devptr p = 0;
    const float s = 2.0f;
    const unsigned n = 4;
    int m = 1;
    gpuk_launch_desc d = { .grid = GPUK_DIM1(1), .block = GPUK_DIM1(1), GPUK_ARGS(&p, &s, &n, &m) };
    gpuk_grid g = gpuk_grid_2d(10, 3, 8, 2), h = gpuk_grid_1d(10, 4);
    uint32_t t = GPUK_OP_T;
    gpuk_op op = GPUK_OP_N;
#ifndef GPUK_NO_KERNELS
    const gpuk_buffer none = { 0 };
    gpuk_array2d v = gpuk_at2d(none, 0, 2, 2, 0);
    if (gpuk_gemm_f32(NULL, GPUK_DEFAULT_STREAM, v, 1.0f, v, GPUK_OP_N, v, GPUK_OP_T, 0.0f) == GPUK_OK)
        return -1; /* a NULL ctx is refused */
#endif
    g.stream = GPUK_DEFAULT_STREAM;
    return (int)(d.num_args + d.arg_sizes[0] + g.grid.x + g.grid.y + h.grid.x + t + (uint32_t)op) +
           (*(const float*)d.args[1] == 2.0f);
}

int main(void) { return gpuk_result_str(GPUK_OK)[0] == 'G' && used_as_documented() == 21 ? 0 : 1; }
