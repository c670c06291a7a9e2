/* tests/compile/compile_static_b.c - the second GPUK_STATIC translation unit (see
   compile_static_a.c). */
#define GPUK_STATIC
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
int other_tu(void);
int other_tu(void) { return gpuk_features() == 0 ? 0 : 1; }
