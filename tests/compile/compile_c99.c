/* tests/compile/compile_c99.c - the implementation compiles as strict C99 (see
   compile_checks.sh). */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
int main(void) { return gpuk_result_str(GPUK_OK)[0] == 'G' ? 0 : 1; }
