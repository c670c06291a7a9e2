#!/usr/bin/env bash
# tests/integration/real_nvjitlink.sh - gpuk_module_link through the installed real nvJitLink
# (the CUDA toolkit's libnvJitLink) with the real NVRTC, on the fake driver, under ASan+UBSan:
# once named by path, once found by nvJitLink's search (GPUK_NVJITLINK_PATH unset). Skipped where
# either library is missing. No GPU needed. Run from the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nvrtc=""; njl=""
for l in "${GPUK_NVRTC_PATH:-}" /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib64/libnvrtc.so.12; do
  if [ -n "$l" ] && [ -f "$l" ]; then nvrtc=$l; break; fi
done
for l in "${GPUK_NVJITLINK_PATH:-}" /usr/local/cuda/lib64/libnvJitLink.so.13 /usr/local/cuda/lib64/libnvJitLink.so.12; do
  if [ -n "$l" ] && [ -f "$l" ]; then njl=$l; break; fi
done
if [ -z "$nvrtc" ] || [ -z "$njl" ]; then
  echo "skip real nvJitLink (no NVRTC and nvJitLink in /usr/local/cuda/lib64)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -I. tests/integration/real_nvjitlink.c \
  -o "$tmp/real_nvjitlink" -ldl -lpthread || { echo "FAIL build"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# the libraries' own allocations are their business; gpuk's must all be freed
printf 'leak:libnvrtc\nleak:libnvJitLink\n' >"$tmp/lsan.supp"
passed=0; failed=0; skipped=0
count() { # the summary line of one run's output ($1), added up
  local line p f s
  line=$(printf '%s\n' "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' | tail -n 1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  read -r p f s <<<"$(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')"
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}
run() { local out; out=$("$@" 2>&1); printf '%s\n' "$out" | grep -vE '^[0-9]+ passed, '; count "$out"; }
run env ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$tmp/lsan.supp "$tmp/real_nvjitlink" "$nvrtc" "$njl"
run env -u GPUK_NVJITLINK_PATH ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$tmp/lsan.supp \
  CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$njl")")")" "$tmp/real_nvjitlink" "$nvrtc" --search
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
