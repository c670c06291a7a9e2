#!/usr/bin/env bash
# tests/integration/nccl_abi.sh - examples/16_nccl_allreduce.c's own NCCL declarations (it loads
# NCCL with dlopen, without nccl.h) against NCCL itself, no GPU needed: compiled with -DEX_NCCL_H
# against nccl.h under -Werror (every function pointer type must take NCCL's function, the enums be
# int-sized with the example's values); then its loader (tests/integration/nccl_load.c) on the
# installed libnccl.so.2 (entry points resolve, ncclGetVersion answers), and on a missing file and a
# library that is not NCCL (refused, the install hint printed once). Parts without nccl.h or
# libnccl.so.2 are skipped. Run from the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
inc=""
for d in /usr/local/cuda/include /usr/include /usr/local/include; do
  if [ -f "$d/nccl.h" ]; then inc=$d; break; fi
done
if [ -z "$inc" ]; then echo "skip the ABI check: no nccl.h"; skipped=$((skipped + 1))
else
  cuda_inc=/usr/local/cuda/include # nccl.h includes cuda_runtime.h
  for cc in gcc clang; do
    command -v $cc >/dev/null || continue
    if $cc -std=c99 -Wall -Wextra -Wpedantic -Wstrict-prototypes -Werror -fsyntax-only -DEX_NCCL_H -I. \
        -isystem "$inc" -isystem "$cuda_inc" examples/16_nccl_allreduce.c 2>"$tmp/err"; then
      ok "$cc: the example's NCCL declarations match $inc/nccl.h ($(awk '/^#define NCCL_(MAJOR|MINOR|PATCH) /{printf "%s%s", s, $3; s="."}' "$inc/nccl.h"))"
    else bad "$cc: the example's NCCL declarations differ from $inc/nccl.h"; sed 's/^/     /' "$tmp/err" | head -20; fi
  done
fi
if ! gcc -std=c99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -Wall -Wextra -Werror \
    -I. tests/integration/nccl_load.c -o "$tmp/nccl_load" -lpng -lm -ldl -lpthread 2>"$tmp/err"; then
  bad "tests/integration/nccl_load.c builds"; sed 's/^/     /' "$tmp/err" | head -20
  echo "$passed passed, $failed failed, $skipped skipped"; exit 1
fi
lib=""
for l in /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2; do
  if [ -f "$l" ]; then lib=$l; break; fi
done
if [ -z "$lib" ]; then echo "skip the loader on a real NCCL: no libnccl.so.2"; skipped=$((skipped + 1))
elif out=$(NCCL_PATH=$lib ASAN_OPTIONS=detect_leaks=0 "$tmp/nccl_load" ok 2>&1); then ok "loads $lib: $out"
else bad "loading $lib"; printf '%s\n' "$out" | sed 's/^/     /'; fi
for p in "$tmp/none/libnccl.so.2" "$(gcc -print-file-name=libm.so.6)"; do
  out=$(NCCL_PATH=$p "$tmp/nccl_load" missing 2>&1); rc=$?
  hints=$(printf '%s\n' "$out" | grep -c 'NCCL not found.*pip install nvidia-nccl')
  if [ $rc = 0 ] && [ "$hints" = 1 ]; then ok "NCCL_PATH=$p refused with the install hint once"
  else bad "NCCL_PATH=$p (exit $rc, $hints hints)"; printf '%s\n' "$out" | sed 's/^/     /'; fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
