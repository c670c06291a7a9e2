# tests/compile/compile_checks.sh - gpuk.h compiles warning-free as C99 (gcc, clang, aarch64 and
# mingw-w64 cross compilers), C++11/17, with
# GPUK_STATIC in two linked translation units, with GPUK_NO_KERNELS / GPUK_NO_STDIO, with each
# family of built-ins alone (GPUK_ONLY_<F>) or none, and the
# declarations alone stay under 1,500 preprocessed lines. Run from the repository root.
# GPUK_QUICK=1 (ninja test): gcc, clang and g++ only; the cross compilers and the compile-time
# report are left to ninja check.
set -u
quick=${GPUK_QUICK:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; sed 's/^/    /' "$tmp/err" | head -20; }
try() { local name=$1; shift; if "$@" 2>"$tmp/err"; then ok "$name"; else bad "$name"; fi; }
C99="-std=c99 -Wall -Wextra -Wpedantic -Wsign-conversion -Wstrict-prototypes -Werror"
for cc in gcc clang; do
  if ! command -v $cc >/dev/null; then skipped=$((skipped + 1)); echo "skip $cc (not installed)"; continue; fi
  try "$cc c99 implementation" $cc $C99 -I. -c tests/compile/compile_c99.c -o "$tmp/a.o"
  try "$cc c99 no kernels, no stdio" $cc $C99 -DGPUK_NO_KERNELS -DGPUK_NO_STDIO -I. -c tests/compile/compile_c99.c -o "$tmp/b.o"
  try "$cc c99 NDEBUG" $cc $C99 -DNDEBUG -O2 -I. -c tests/compile/compile_c99.c -o "$tmp/c.o"
  try "$cc static, two TUs linked" sh -c "$cc $C99 -I. -c tests/compile/compile_static_a.c -o $tmp/sa.o && $cc $C99 -I. -c tests/compile/compile_static_b.c -o $tmp/sb.o && $cc $tmp/sa.o $tmp/sb.o -o $tmp/static -ldl -lpthread && $tmp/static"
done
for std in c++11 c++17; do
  if ! command -v g++ >/dev/null; then skipped=$((skipped + 1)); continue; fi
  try "g++ -std=$std" g++ -std=$std -Wall -Wextra -Werror -I. -c tests/compile/compile_cxx11.cpp -o "$tmp/x.o"
done
# Jetson and other arm64 Linux: cross-compiled and linked
if [ -n "$quick" ]; then :
elif command -v aarch64-linux-gnu-gcc >/dev/null; then
  try "aarch64-linux-gnu-gcc c99 (Jetson), linked" aarch64-linux-gnu-gcc $C99 -I. tests/compile/compile_c99.c -o "$tmp/arm" -ldl -lpthread
else skipped=$((skipped + 1)); echo "skip aarch64-linux-gnu-gcc (not installed)"; fi
# Windows: the nvcuda.dll path, kernel32 declared without windows.h; compiled and linked
if [ -n "$quick" ]; then :
elif command -v x86_64-w64-mingw32-gcc >/dev/null; then
  try "mingw-w64 c99 (Windows), linked" x86_64-w64-mingw32-gcc $C99 -I. tests/compile/compile_c99.c -o "$tmp/w.exe"
else skipped=$((skipped + 1)); echo "skip mingw-w64 (not installed)"; fi
# the README's quick start is real code: it must compile as it stands
awk '/^```c$/{f=1;next} /^```$/{f=0} f' README.md > "$tmp/quickstart.c"
try "README quick start compiles (gcc c99)" gcc -std=c99 -Wall -Wextra -Werror -I. "$tmp/quickstart.c" -o "$tmp/qs" -ldl -lpthread
# what users copy must be warning-free under clang -Wextra too (it flags .grid = { n }: missing
# field initializer), and so must the example
if command -v clang >/dev/null; then
  try "README quick start compiles (clang c99 -Wextra -Wpedantic)" clang -std=c99 -Wall -Wextra -Wpedantic -Werror -I. -c "$tmp/quickstart.c" -o "$tmp/qs.o"
  try "examples/01_vector_add.c compiles (clang c99 -Wextra -Wpedantic)" clang -std=c99 -Wall -Wextra -Wpedantic -Werror -I. -c examples/01_vector_add.c -o "$tmp/va.o"
  try "examples/02_own_kernels.c + generated my_kernels.h compile (clang c99 -Wextra -Wpedantic)" clang -std=c99 -Wall -Wextra -Wpedantic -Wsign-conversion -Werror -I. -c examples/02_own_kernels.c -o "$tmp/ok.o"
else skipped=$((skipped + 1)); echo "skip clang README/example checks (clang not installed)"; fi
# gpuk_grid is in gpuk.h and, under the same guard, in every header tools/gpuk_embed.py writes:
# either may come first, in C and in C++
for first in gpuk.h tests/support/embed_test_kernels.h; do
  second=gpuk.h; [ "$first" = gpuk.h ] && second=tests/support/embed_test_kernels.h
  printf '#include "%s"\n#include "%s"\nint f(void);\nint f(void) { gpuk_grid g = gpuk_grid_2d(9, 9, 4, 4); g = gpuk_grid_1d(9, 4); return (int)g.grid.x; }\n' \
    "$first" "$second" >"$tmp/order.c"
  try "gpuk_grid with $first first (gcc c99)" gcc $C99 -I. -c "$tmp/order.c" -o "$tmp/order.o"
  if command -v g++ >/dev/null; then
    try "gpuk_grid with $first first (g++ c++11)" g++ -x c++ -std=c++11 -Wall -Wextra -Werror -I. -c "$tmp/order.c" -o "$tmp/order.o"
  fi
done
# a program may keep one family of built-ins (GPUK_ONLY_<F>, the families read from gpuk.h so a
# new one is covered) or leave them all out: each such implementation warning-free, and a call
# of a left-out family does not build
families=$(grep -o 'defined(GPUK_ONLY_[A-Z0-9_]*)' gpuk.h | sed 's/defined(GPUK_ONLY_\(.*\))/\1/' | sort -u)
if [ -z "$families" ]; then echo "no GPUK_ONLY_ families in gpuk.h" >"$tmp/err"; bad "families read from gpuk.h"
elif [ -z "$quick" ]; then
  printf '#define GPUK_IMPLEMENTATION\n#include "gpuk.h"\nint main(void) { return gpuk_result_str(GPUK_OK)[0] != 71; }\n' >"$tmp/fam.c"
  cp "$tmp/fam.c" "$tmp/fam.cpp"
  for fam in $families; do
    try "gcc c99 GPUK_ONLY_$fam" gcc $C99 -DGPUK_ONLY_$fam -I. -c "$tmp/fam.c" -o "$tmp/fam.o"
  done
  try "gcc c99 every family left out" gcc $C99 $(printf -- '-DGPUK_NO_%s ' $families) -I. -c "$tmp/fam.c" -o "$tmp/fam.o"
  try "clang c99 GPUK_ONLY_GEMM and GPUK_ONLY_SCAN" clang $C99 -DGPUK_ONLY_GEMM -DGPUK_ONLY_SCAN -I. -c "$tmp/fam.c" -o "$tmp/fam.o"
  try "g++ c++11 GPUK_ONLY_REDUCE" g++ -std=c++11 -Wall -Wextra -Werror -DGPUK_ONLY_REDUCE -I. -c "$tmp/fam.cpp" -o "$tmp/fam.o"
  printf '#define GPUK_ONLY_SCAN\n#define GPUK_IMPLEMENTATION\n#include "gpuk.h"\nint f(gpuk_ctx* c, gpuk_buffer b);\nint f(gpuk_ctx* c, gpuk_buffer b) { return (int)gpuk_sum_f32(c, GPUK_DEFAULT_STREAM, gpuk_at(b, 0), gpuk_at(b, 1), 1); }\n' >"$tmp/left_out.c"
  if gcc $C99 -I. -c "$tmp/left_out.c" -o "$tmp/fam.o" 2>"$tmp/err"; then bad "a call of a left-out family does not build"
  elif grep -q "gpuk_sum_f32" "$tmp/err"; then ok "a call of a left-out family does not build (gpuk_sum_f32 under GPUK_ONLY_SCAN)"
  else bad "a call of a left-out family does not build"; fi
  # the float histograms ride with the integer ones: kept by GPUK_ONLY_HISTOGRAM (both
  # launchers compiled, warning-free), gone with GPUK_NO_HISTOGRAM
  printf '#define GPUK_IMPLEMENTATION\n#include "gpuk.h"\nint f(gpuk_ctx* c, gpuk_buffer b);\nint f(gpuk_ctx* c, gpuk_buffer b) { return (int)gpuk_histogram_f32(c, GPUK_DEFAULT_STREAM, gpuk_at(b, 0), 4, 0.0f, 1.0f, gpuk_at(b, 8), 1) + (int)gpuk_histogram_u8(c, GPUK_DEFAULT_STREAM, gpuk_at(b, 0), 4, 0, 4, gpuk_at(b, 64), 1); }\n' >"$tmp/hist.c"
  try "gcc c99 GPUK_ONLY_HISTOGRAM keeps the float histograms" gcc $C99 -DGPUK_ONLY_HISTOGRAM -I. -c "$tmp/hist.c" -o "$tmp/fam.o"
  if gcc $C99 -DGPUK_NO_HISTOGRAM -I. -c "$tmp/hist.c" -o "$tmp/fam.o" 2>"$tmp/err"; then bad "GPUK_NO_HISTOGRAM leaves the float histograms out"
  elif grep -q "gpuk_histogram_f32" "$tmp/err"; then ok "GPUK_NO_HISTOGRAM leaves the float histograms out"
  else bad "GPUK_NO_HISTOGRAM leaves the float histograms out"; fi
fi
# GPUK_ARGS over pointers to const objects: no warning, not even with -Wcast-qual
try "GPUK_ARGS with const arguments (gcc c99 -Wcast-qual)" gcc $C99 -Wcast-qual -I. -c tests/compile/compile_c99.c -o "$tmp/cq.o"
# the C++ spellings of the public macros (GPUK_DEFAULT_STREAM, GPUK_DIM*, GPUK_RANGE) also run
if command -v g++ >/dev/null; then
  try "C++11 macros compile and run" sh -c "g++ -std=c++11 -Wall -Wextra -Werror -I. tests/compile/compile_cxx11.cpp -o $tmp/cxx -ldl -lpthread && $tmp/cxx"
fi
lines=$(printf '#include "gpuk.h"\n' | gcc -std=c99 -E -P -I. -x c - | wc -l)
if [ "$lines" -le 1500 ]; then ok "declarations-only TU: $lines preprocessed lines (<= 1500)"
else echo "$lines lines" >"$tmp/err"; bad "declarations-only TU over 1500 lines"; fi
# compile time of the implementation TU, the best of 3 (a report, not a test: machines vary)
best_ms() {
  local best=999999 i s e
  for i in 1 2 3; do s=$(date +%s%N); gcc "$@" -I. -c tests/compile/compile_c99.c -o "$tmp/t.o"; e=$(date +%s%N)
    [ $(( (e - s) / 1000000 )) -lt $best ] && best=$(( (e - s) / 1000000 )); done
  echo $best
}
if [ -n "$quick" ]; then echo "info quick: the cross compilers (aarch64, mingw-w64) and compile times run in ninja check"
else
  full=$(best_ms -O2); one=$(best_ms -O2 -DGPUK_ONLY_REDUCE); none=$(best_ms -O2 -DGPUK_NO_KERNELS)
  echo "info implementation TU at -O2: $full ms with every family, $one ms with reductions alone" \
       "($(( one * 100 / full )) %), $none ms without the kernels ($(( none * 100 / full )) %)"
fi
echo "$passed passed, $failed failed, $skipped skipped"
