#!/usr/bin/env bash
# tests/integration/real_nvrtc.sh - gpuk_module_compile with the installed real NVRTC (the CUDA
# toolkit's libnvrtc, named by path) on the fake driver, under ASan+UBSan; skipped where no NVRTC is
# installed. No GPU needed. Run from the repository root.
# Then NVRTC's search with GPUK_NVRTC_PATH and LD_LIBRARY_PATH unset and the ld.so cache ignored
# (the dynamic loader run with --inhibit-cache), so its sonames alone cannot find it: in a
# CUDA_HOME made here (lib64/ holding links to the real library and its builtins), and in a pip
# wheel's folder under a VIRTUAL_ENV made here, with /usr/local hidden (a mount namespace of
# unshare -rm; skipped where that is not allowed), since /usr/local/cuda comes first.
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
passed=0; failed=0; skipped=0
count() { # the summary line of one run's output ($1), added up
  local line p f s
  line=$(printf '%s\n' "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' | tail -n 1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  read -r p f s <<<"$(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')"
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}
run() { local out; out=$("$@" 2>&1); printf '%s\n' "$out" | grep -vE '^[0-9]+ passed, '; count "$out"; }
run env ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$tmp/lsan.supp "$tmp/real_nvrtc" "$lib"

real=$(readlink -f "$lib"); realdir=$(dirname "$real"); so=$(basename "$lib")
interp=$(readelf -l "$tmp/real_nvrtc" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
if [ -z "$interp" ] || ! "$interp" --help 2>/dev/null | grep -q -- --inhibit-cache; then
  echo "skip NVRTC's search (no dynamic loader with --inhibit-cache)"; skipped=$((skipped + 2))
else
  # links named as the toolkit and the wheels name them, to the real files
  # (in $1, to the files of $realdir as seen at $2)
  link_nvrtc() {
    mkdir -p "$1"; ln -s "$2/$so" "$1/$so"
    for b in "$realdir"/libnvrtc-builtins.so.*; do ln -s "$2/$(basename "$b")" "$1/"; done
  }
  search_env=(env -u GPUK_NVRTC_PATH -u LD_LIBRARY_PATH -u CUDA_PATH -u CUDA_HOME -u VIRTUAL_ENV
              -u CONDA_PREFIX ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$tmp/lsan.supp)
  link_nvrtc "$tmp/cuda/lib64" "$realdir"
  run "${search_env[@]}" CUDA_HOME="$tmp/cuda" "$interp" --inhibit-cache "$tmp/real_nvrtc" \
    --found-in "$tmp/cuda/lib64" 'in $CUDA_HOME'
  # the pip wheel: CUDA 13's wheel installs into nvidia/cu13/lib, older ones into nvidia/cuda_nvrtc/lib
  wheel=nvidia/cuda_nvrtc/lib; [ "$so" = libnvrtc.so.13 ] && wheel=nvidia/cu13/lib
  wheel_dir=$tmp/venv/lib/python3.12/site-packages/$wheel
  mkdir -p "$tmp/real"
  link_nvrtc "$wheel_dir" "$tmp/real"
  if unshare -rm true 2>/dev/null; then
    # in the namespace: the library's folder bound under $tmp/real, then /usr/local hidden
    run unshare -rm sh -c 'mount --bind "$1" "$2/real" && mount -t tmpfs none /usr/local && shift 2 && exec "$@"' \
      sh "$realdir" "$tmp" "${search_env[@]}" VIRTUAL_ENV="$tmp/venv" HOME="$tmp/home" "$interp" --inhibit-cache \
      "$tmp/real_nvrtc" --found-in "$wheel_dir" 'a pip wheel in $VIRTUAL_ENV'
  else
    echo "skip NVRTC in a pip wheel (no mount namespace: unshare -rm is not allowed here)"; skipped=$((skipped + 1))
  fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
