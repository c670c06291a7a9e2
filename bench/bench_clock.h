/* bench/bench_clock.h - what both benchmarks need to time things on the host: a monotonic
   clock in milliseconds and the median of a run of samples (sorted in place). */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H
#include <stdlib.h>
#include <time.h>

static inline double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static inline double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}
#endif
