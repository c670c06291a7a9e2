#!/usr/bin/env bash
# tests/integration/embed_names.sh - headers from tools/gpuk_embed.py compile whatever a kernel
# names its parameters and wherever its source lies: parameters named after every local and
# parameter of the generated wrapper (and after gpuk's own names), two headers of one file name in
# two folders with different --name in one program, a source path holding '*/', '"' and '??', and a
# source that shares no folder with the header but the root. Each header, and all of them together
# with a call of each wrapper, under gcc and clang -std=c99 -Wall -Wextra -Wpedantic -Werror and g++
# -std=c++11 -Wall -Wextra -Werror. Needs nvcc (skipped without). Run from the repository root.
set -u
repo=$PWD
tmp=$(mktemp -d); far=$(mktemp -d -p /var/tmp 2>/dev/null || mktemp -d); trap 'rm -rf "$tmp" "$far"' EXIT
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; sed 's/^/    /' "$tmp/err" | head -20; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$nvcc" ]; then echo "skip embed_names (no nvcc)"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
gen() { python3 "$repo/tools/gpuk_embed.py" "$@" --nvcc "$nvcc" --no-ptxas-checks; }
# compiles NAME FILE.c: FILE as C99 (gcc, clang) and as C++11 (g++)
compiles() { local name=$1 src=$2 cc
  for cc in gcc clang; do
    command -v $cc >/dev/null || { skipped=$((skipped + 1)); continue; }
    if $cc -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$repo" -I"$tmp" -c "$src" -o "$tmp/x.o" 2>"$tmp/err"
    then ok "$name: $cc -std=c99 -Wpedantic -Werror"; else bad "$name: $cc -std=c99"; fi
  done
  cp "$src" "$tmp/as_cxx.cpp"
  if g++ -std=c++11 -Wall -Wextra -Werror -I"$repo" -I"$tmp" -c "$tmp/as_cxx.cpp" -o "$tmp/x.o" 2>"$tmp/err"
  then ok "$name: g++ -std=c++11 -Werror"; else bad "$name: g++ -std=c++11"; fi; }

# 1. a parameter named after each of the wrapper's locals and parameters, gpuk's names, and the
#    C types it spells; two of them ending in '_' already, so a renamed one must go further
cat > "$tmp/names.cu" <<'CU'
#include <stdint.h>
extern "C" __global__ void clash(float* kernel, const float* elems, int desc, int args, int arg_sizes,
                                 int r, int i, float* ctx, int ctx_, int kernels, int launch,
                                 float* gpuk__desc, int gpuk__r, float* gpuk__p0, int gpuk__elems,
                                 int gpuk_r, int memset, int size_t, int uint32_t) {
    if (threadIdx.x == 0) kernel[0] = elems[0] + ctx[0] + gpuk__desc[0] + gpuk__p0[0] + desc + args +
        arg_sizes + r + i + ctx_ + kernels + launch + gpuk__r + gpuk__elems + gpuk_r + memset + size_t + uint32_t;
}
extern "C" __global__ void plain(void) {}
CU
one_line() { tr '\n' ' ' < "$1" | tr -s ' '; } # the wrappers' prototypes wrap at 100 columns
if gen "$tmp/names.cu" -o "$tmp/names.h" >"$tmp/err" 2>&1 &&
   one_line "$tmp/names.h" | grep -q "gpuk_array kernel, gpuk_array elems, int desc, int args" &&
   one_line "$tmp/names.h" | grep -q "gpuk_array ctx__, int ctx_, int kernels_, int launch_" &&
   one_line "$tmp/names.h" | grep -q "gpuk_array gpuk__desc_, int gpuk__r_, gpuk_array gpuk__p0_" &&
   one_line "$tmp/names.h" | grep -q "int gpuk_r_, int memset, int size_t_, int uint32_t_)"; then
  ok "every wrapper name as a parameter: kept, or renamed with '_' where the wrapper's own"
else bad "every wrapper name as a parameter"; fi
cat > "$tmp/names_use.c" <<'C'
#include "names.h"
int use_names(gpuk_ctx* ctx, const names_kernels* k, const gpuk_grid* g, gpuk_buffer b);
int use_names(gpuk_ctx* ctx, const names_kernels* k, const gpuk_grid* g, gpuk_buffer b) {
    return (int)names_clash(ctx, k, g, gpuk_at(b, 0), gpuk_at(b, 1), 1, 2, 3, 4, 5, gpuk_at(b, 2), 6, 7, 8,
                            gpuk_at(b, 3), 9, gpuk_at(b, 4), 10, 11, 12, 13, 14) + (int)names_plain(ctx, k, g);
}
C
compiles "parameters named after the wrapper's names" "$tmp/names_use.c"

# 2. one file name in two folders, two --name: both headers count in one program
mkdir -p "$tmp/a" "$tmp/b"
printf 'extern "C" __global__ void fill(float* x, float v) { x[threadIdx.x] = v; }\n' > "$tmp/a/k.cu"
printf 'extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }\n' > "$tmp/b/k.cu"
if gen "$tmp/a/k.cu" -o "$tmp/a/kernels.h" --name first >"$tmp/err" 2>&1 &&
   gen "$tmp/b/k.cu" -o "$tmp/b/kernels.h" --name second >>"$tmp/err" 2>&1; then
  ok "two headers named kernels.h in two folders"
else bad "two headers named kernels.h in two folders"; fi
cat > "$tmp/both_folders.c" <<'C'
#include "a/kernels.h"
#include "b/kernels.h"
int use_both(gpuk_ctx* ctx, const first_kernels* f, const second_kernels* s, gpuk_buffer b);
int use_both(gpuk_ctx* ctx, const first_kernels* f, const second_kernels* s, gpuk_buffer b) {
    gpuk_grid g = gpuk_grid_1d(32, 32);
    return (int)first_fill(ctx, f, &g, gpuk_at(b, 0), 1.0f) + (int)second_twice(ctx, s, &g, gpuk_at(b, 0));
}
C
compiles "two kernels.h of different --name in one file" "$tmp/both_folders.c"

# 3. a source path holding the comment's end, a quote and a trigraph
odd="$tmp/we*/ird\"dir??/x"
mkdir -p "$odd"
printf 'extern "C" __global__ void k(int* p) { p[0] = 1; }\n' > "$odd/odd.cu"
if gen "$odd/odd.cu" -o "$tmp/odd.h" >"$tmp/err" 2>&1 && grep -qF 'we*\/ird"dir?\?/x/odd.cu' "$tmp/odd.h" &&
   grep -qF 'desc.label = "we*/ird\"dir\?\?/x/odd.cu";' "$tmp/odd.h"; then
  ok "a path with '*/', '\"' and '??': escaped in the comment and in the label"
else bad "a path with '*/', '\"' and '??'"; fi
printf '#include "odd.h"\n' > "$tmp/odd_use.c"
compiles "the header of a path with '*/', '\"' and '??'" "$tmp/odd_use.c"

# 4. a source that shares only the root folder with the header: its absolute path, no ../../..
printf 'extern "C" __global__ void k(int* p) { p[0] = 2; }\n' > "$far/far.cu"
if gen "$far/far.cu" -o "$tmp/far.h" >"$tmp/err" 2>&1 && grep -qF "the kernels of $far/far.cu" "$tmp/far.h" &&
   ! grep -q '\.\./\.\.' "$tmp/far.h"; then
  ok "a source far from the header is named by its absolute path"
else bad "a source far from the header"; fi
(cd "$tmp/a" && gen k.cu -o ../near.h --name near) >"$tmp/err" 2>&1
if grep -qF "the kernels of a/k.cu" "$tmp/near.h"; then ok "a source near the header is named relative to it"
else bad "a source near the header"; fi
# errors name the source as the command line gave it, not as seen from the header's folder
if (cd "$tmp" && gen missing.cu -o a/out.h) >"$tmp/err" 2>&1; then bad "a missing source fails"
elif grep -q "no such file: missing.cu" "$tmp/err"; then ok "a missing source is named as given"
else bad "a missing source is named as given"; fi

# 5. everything in one program, with gpuk's implementation
cat > "$tmp/all.c" <<'C'
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "names.h"
#include "a/kernels.h"
#include "b/kernels.h"
#include "odd.h"
#include "far.h"
#include "near.h"
int main(void) { return 0; }
C
compiles "all of them in one program with the implementation" "$tmp/all.c"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
