/* tests/compile_cxx11.cpp - the implementation compiles as C++11 and C++17 (see compile_checks.sh). */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
int main(void) { return gpuk_result_str(GPUK_OK)[0] == 'G' ? 0 : 1; }
