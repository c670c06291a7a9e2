#!/usr/bin/env bash
# tests/integration/gpuk_embed.sh - tools/gpuk_embed.py (gen_ptx.py --wrap), the generator of users'
# kernel headers: kernels it cannot wrap fail with exit 1 and an error naming the kernel and the
# parameter (a template, a struct or reference parameter, no extern "C", ...), found before nvcc
# runs; with nvcc: __global__ in comments is ignored, extern "C" { } blocks and multi-line
# signatures are read, the output is the same on every run, --check fails on a stale header, and two
# generated headers build together in one file as C99 (gcc, clang, -Wpedantic) and C++11. Run from
# the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; sed 's/^/    /' "$tmp/err" | head -20; }
gen() { python3 tools/gpuk_embed.py "$@"; }
# refuses NAME SOURCE TEXT...: generating from SOURCE exits 1 with every TEXT in its error
refuses() { local name=$1 src=$2; shift 2
  printf '%s\n' "$src" > "$tmp/bad.cu"
  gen "$tmp/bad.cu" -o "$tmp/bad.h" --nvcc /nonexistent/nvcc >"$tmp/out" 2>"$tmp/err"; local rc=$?
  local t; for t in "$@"; do
    if ! grep -qF -- "$t" "$tmp/err"; then echo "(exit $rc; no '$t' in the error)" >>"$tmp/err"; bad "$name"; return; fi
  done
  if [ $rc -ne 1 ] || [ -e "$tmp/bad.h" ]; then echo "(exit $rc, or a header was written)" >>"$tmp/err"; bad "$name"; return; fi
  ok "$name"; }

refuses "template kernel: named, with the fix" \
  'template <typename T> __global__ void scale(T* x, T s) { x[0] *= s; }' \
  "bad.cu:1: kernel scale is a template" 'extern "C" __global__'
refuses "template kernel declared on two lines" \
  $'template <typename T>\n__global__ void scale(T* x) {}' "bad.cu:2: kernel scale is a template"
refuses "struct parameter: kernel, parameter number and type named" \
  $'struct pair { float a, b; };\nextern "C" __global__ void use_pair(float* out, pair p) {}' \
  "bad.cu:2: kernel use_pair, parameter 2 (pair p): type 'pair' is not supported"
refuses "missing extern \"C\"" \
  '__global__ void plain(float* x) {}' 'kernel plain is not extern "C"' 'C++-mangled'
refuses "reference parameter" \
  'extern "C" __global__ void r(float& x) {}' "kernel r, parameter 1 (float& x): reference parameters"
refuses "pointer to pointer" \
  'extern "C" __global__ void pp(float** x) {}' "kernel pp, parameter 1 (float** x): pointers to pointers"
refuses "__grid_constant__ parameter" \
  'extern "C" __global__ void g(const __grid_constant__ int x) {}' "kernel g, parameter 1" "__grid_constant__"
refuses "long (4 or 8 bytes by platform)" \
  'extern "C" __global__ void l(long n) {}' "kernel l, parameter 1 (long n): type 'long' is not supported"
refuses "every bad kernel listed at once" \
  $'extern "C" __global__ void a(double* d, bool b) {}\n__global__ void b2(int x) {}' \
  "kernel a, parameter 2 (bool b)" "kernel b2 is not extern \"C\""
refuses "no kernel at all" '__device__ float f(float x) { return x; }' "has no extern \"C\" __global__ kernel"
# a good file gets as far as looking for nvcc
printf 'extern "C" __global__ void k(float* x) {}\n' > "$tmp/good.cu"
if gen "$tmp/good.cu" -o "$tmp/good.h" --nvcc /nonexistent/nvcc 2>"$tmp/err"; then bad "no nvcc: exit 1"
elif grep -q "needs nvcc" "$tmp/err"; then ok "a good file passes the source checks, then needs nvcc"
else bad "no nvcc: exit 1 naming nvcc"; fi

nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$nvcc" ]; then
  skipped=$((skipped + 1)); echo "skip generated headers (no nvcc)"
else
  cat > "$tmp/two.cu" <<'CU'
#include <stdint.h>
// __global__ void in_a_comment(int x) {}   (ignored)
/* __global__ void nor_this(int x) {} */
extern "C" {
__global__ void
fill(float* __restrict__ out,  // the output
     float value,
     unsigned long long n) {
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
}
extern "C" __global__ void __launch_bounds__(256) count(const uint8_t* in, unsigned* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i]) atomicAdd(total, 1u);
}
CU
  if gen "$tmp/two.cu" -o "$tmp/two.h" --nvcc "$nvcc" --no-ptxas-checks >"$tmp/err" 2>&1 &&
     grep -q "static inline gpuk_result two_fill(" "$tmp/two.h" && grep -q "gpuk_array out, float value" "$tmp/two.h" &&
     grep -q "static inline gpuk_result two_count(" "$tmp/two.h" && ! grep -q "in_a_comment\|nor_this" "$tmp/two.h"; then
    ok "extern \"C\" block, multi-line signature, __launch_bounds__; comments ignored"
  else bad "extern \"C\" block, multi-line signature, __launch_bounds__; comments ignored"; fi
  cp "$tmp/two.h" "$tmp/two.first.h"
  if gen "$tmp/two.cu" -o "$tmp/two.h" --nvcc "$nvcc" --no-ptxas-checks >"$tmp/err" 2>&1 && cmp "$tmp/two.h" "$tmp/two.first.h" >>"$tmp/err" 2>&1 &&
     (cd "$tmp" && python3 "$OLDPWD/tools/gpuk_embed.py" two.cu -o two.h --nvcc "$nvcc" --no-ptxas-checks) >>"$tmp/err" 2>&1 &&
     cmp "$tmp/two.h" "$tmp/two.first.h" >>"$tmp/err" 2>&1; then
    ok "deterministic: the same header on every run, from any working folder"
  else bad "deterministic output"; fi
  if gen "$tmp/two.cu" -o "$tmp/two.h" --nvcc "$nvcc" --no-ptxas-checks --check >"$tmp/err" 2>&1; then ok "--check: up to date"
  else bad "--check: up to date"; fi
  echo 'extern "C" __global__ void extra(int* p) { *p = 1; }' >> "$tmp/two.cu"
  if gen "$tmp/two.cu" -o "$tmp/two.h" --nvcc "$nvcc" --no-ptxas-checks --check >"$tmp/err" 2>&1; then bad "--check: a changed source is stale"
  elif grep -q "stale" "$tmp/err" && cmp -s "$tmp/two.h" "$tmp/two.first.h"; then ok "--check: a changed source is stale (exit 1, nothing written)"
  else bad "--check: a changed source is stale"; fi
  cp "$tmp/two.first.h" "$tmp/two.h"
  mkdir -p "$tmp/inc" "$tmp/src"
  printf '#ifndef FACTOR\n#error FACTOR not defined\n#endif\n#define SCALE(x) ((x) * FACTOR)\n' > "$tmp/inc/scale.h"
  printf '#include "scale.h"\nextern "C" __global__ void k(float* x) { x[0] = SCALE(x[0]); }\n' > "$tmp/src/inc.cu"
  if gen "$tmp/src/inc.cu" -o "$tmp/inc.h" --nvcc "$nvcc" --no-ptxas-checks -I "$tmp/inc" -D FACTOR=3.0f >"$tmp/err" 2>&1 &&
     grep -q "gpuk_embed.py src/inc.cu -o inc.h --name inc -I inc -D FACTOR=3.0f" "$tmp/inc.h" &&
     ! gen "$tmp/src/inc.cu" -o "$tmp/inc2.h" --nvcc "$nvcc" --no-ptxas-checks -I "$tmp/inc" >>"$tmp/err" 2>&1; then
    ok "-I and -D reach nvcc and are shown in the header"
  else bad "-I and -D reach nvcc and are shown in the header"; fi
  # gpuk_device.cuh found beside gpuk.h, from a kernel file elsewhere, run from elsewhere
  cat > "$tmp/src/dev.cu" <<'CU'
#include "gpuk_device.cuh"
extern "C" __global__ void uni(float* out, double* out64, unsigned long long seed, unsigned long long offset) {
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = gpuk_uniform_f32(seed, offset + i) + gpuk_block_sum(1.0f) + gpuk_warp_inclusive_scan(1.0f);
    out64[i] = gpuk_uniform_f64(seed, offset + i) + gpuk_warp_sum(gpuk_normal_f64(seed, i));
}
CU
  if (cd "$tmp" && python3 "$OLDPWD/tools/gpuk_embed.py" src/dev.cu -o dev.h --nvcc "$nvcc" --no-ptxas-checks) >"$tmp/err" 2>&1 &&
     grep -q "static inline gpuk_result dev_uni(" "$tmp/dev.h" && grep -q "mul.hi.u32" "$tmp/dev.h" &&
     grep -q "gpuk_embed.py src/dev.cu -o dev.h --name dev\$" "$tmp/dev.h"; then
    ok "#include \"gpuk_device.cuh\" found with no -I, not shown in the header"
  else bad "#include \"gpuk_device.cuh\" found with no -I"; fi
  printf '#define KERNEL(name) \\\n    extern "C" __global__ void name(float* x) { x[0] = 1.0f; }\nKERNEL(made)\nextern "C" __global__ void plain(int n) {}\n' > "$tmp/macro.cu"
  if gen "$tmp/macro.cu" -o "$tmp/macro.h" --nvcc "$nvcc" --no-ptxas-checks >"$tmp/err" 2>&1; then bad "a kernel made by a macro is refused"
  elif grep -q "made by a macro?): made" "$tmp/err" && [ ! -e "$tmp/macro.h" ]; then ok "a kernel made by a macro: refused, named (exit 1)"
  else bad "a kernel made by a macro is refused"; fi
  printf '#define GPUK_IMPLEMENTATION\n#include "gpuk.h"\n#include "two.h"\n#include "embed_test_kernels.h"\n#include "two.h"\nint main(void) { return 0; }\n' > "$tmp/both.c"
  cp "$tmp/both.c" "$tmp/both.cpp"
  for cc in gcc clang; do
    if command -v $cc >/dev/null; then
      if $cc -std=c99 -Wall -Wextra -Wpedantic -Wsign-conversion -Wstrict-prototypes -Werror -I. -Itests/support -I"$tmp" -c "$tmp/both.c" -o "$tmp/both.o" 2>"$tmp/err"
      then ok "two generated headers in one file: $cc -std=c99 -Wpedantic"; else bad "two generated headers: $cc c99"; fi
    else skipped=$((skipped + 1)); fi
  done
  if g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. -Itests/support -I"$tmp" -c "$tmp/both.cpp" -o "$tmp/both.o" 2>"$tmp/err"
  then ok "two generated headers in one file: g++ -std=c++11 -Wpedantic"; else bad "two generated headers: g++ c++11"; fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
