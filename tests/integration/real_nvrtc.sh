#!/usr/bin/env bash
# tests/integration/real_nvrtc.sh - gpuk_module_compile with the installed real NVRTC (the CUDA
# toolkit's libnvrtc, named by path) on the fake driver, under ASan+UBSan; skipped where no NVRTC is
# installed. No GPU needed. Run from the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lib=""
for l in "${GPUK_NVRTC_PATH:-}" /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib64/libnvrtc.so.12; do
  if [ -n "$l" ] && [ -f "$l" ]; then lib=$l; break; fi
done
if [ -z "$lib" ]; then echo "skip real NVRTC (none in /usr/local/cuda/lib64)"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -I. tests/integration/real_nvrtc.c \
  -o "$tmp/real_nvrtc" -ldl -lpthread || { echo "FAIL build"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# NVRTC's own allocations are its business; gpuk's must all be freed
printf 'leak:libnvrtc\n' >"$tmp/lsan.supp"
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$tmp/lsan.supp "$tmp/real_nvrtc" "$lib"
