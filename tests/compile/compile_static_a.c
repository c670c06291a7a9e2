/* tests/compile/compile_static_a.c - with GPUK_STATIC two translation units each hold a
   private copy and link together without clashing symbols (see compile_checks.sh). */
#define GPUK_STATIC
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
int other_tu(void);
int main(void) { return (gpuk_result_str(GPUK_ERR_BUSY)[0] == 'G' && other_tu() == 0) ? 0 : 1; }
