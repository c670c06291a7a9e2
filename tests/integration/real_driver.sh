#!/usr/bin/env bash
# tests/integration/real_driver.sh - gpuk against real libraries at the explicit driver path, under
# ASan+UBSan (LeakSanitizer included): none at all, an empty file, a directory, a library that
# is not a driver, a driver too old, an old driver without cuGetProcAddress (every entry point
# found by its exported ABI name), and Debian's real libcuda1 on a machine with no GPU (fetched
# by tools/deb-fetch into .cache/, never committed). Run from the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
check() { # name, output file, patterns that must all appear
  local name=$1 out=$2; shift 2; local p
  for p in "$@"; do
    if ! grep -qE -- "$p" "$out"; then failed=$((failed + 1)); echo "FAIL $name: no '$p' in:"; sed 's/^/    /' "$out" | head -20; return; fi
  done
  passed=$((passed + 1)); echo "ok   $name"
}
# the driver's own allocations are its business; everything of gpuk's must be freed
echo "leak:libcuda.so" >"$tmp/lsan.supp"
run() { # library path(s)..., output file
  local out=${!#}; ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$tmp/lsan.supp "$tmp/real_driver" "${@:1:$#-1}" >"$out" 2>&1
  echo "exit=$?" >>"$out"; }
lacks() { # name, output file, pattern that must not appear
  if grep -qE -- "$3" "$2"; then failed=$((failed + 1)); echo "FAIL $1: '$3' in:"; sed 's/^/    /' "$2" | head -20; fi; }
gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -I. tests/integration/real_driver.c \
  -o "$tmp/real_driver" -ldl -lpthread || { echo "FAIL build"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

run /nonexistent/libcuda.so.1 "$tmp/a"
check "no library at the path" "$tmp/a" "init=-1 " "cannot load the NVIDIA driver '/nonexistent/libcuda.so.1'" "count=-1 .*failed earlier" "again=-1" "exit=0"
: >"$tmp/empty.so"
run "$tmp/empty.so" "$tmp/b"
check "an empty file" "$tmp/b" "init=-1 " "cannot load the NVIDIA driver '.*empty.so'" "exit=0"
run "$tmp" "$tmp/c"
check "a directory" "$tmp/c" "init=-1 " "cannot load" "exit=0"
libm=$(gcc -print-file-name=libm.so.6)
run "$libm" "$tmp/d"
check "a library that is not a driver" "$tmp/d" "init=-1 " "is not a CUDA driver \\(no working cuDriverGetVersion\\)" "exit=0"

# A stub driver exporting every entry point of gpuk's table by its ABI name, no cuGetProcAddress
python3 - "$tmp/stub.c" <<'PY'
import re, sys
rows = re.findall(r'X\(\w+, \d+, "(\w+)", [01],', open("gpuk.h").read())
with open(sys.argv[1], "w") as f:
    f.write("#include <stdlib.h>\nint cuDriverGetVersion(int* v) {\n#ifdef FIXED_VERSION\n *v = FIXED_VERSION;\n#else\n"
            " *v = atoi(getenv(\"STUB_VERSION\"));\n#endif\n return 0;\n}\n")
    for sym in sorted(set(rows) - {"cuDriverGetVersion", "cuGetProcAddress", "cuGetProcAddress_v2"}):
        f.write("int %s(void) { return 0; }\n" % sym)
PY
gcc -shared -fPIC -o "$tmp/libstub.so" "$tmp/stub.c"
STUB_VERSION=11020 run "$tmp/libstub.so" "$tmp/e"
# features bit 0 (GPUK_FEATURE_PROC_ADDRESS) must be off: the entry points came from dlsym
check "old driver (11.2), entry points by exported name" "$tmp/e" "init=0 features=0x[0-9a-f]*[02468ace] " "version=11020" "count=0 " "exit=0"
STUB_VERSION=9020 run "$tmp/libstub.so" "$tmp/f"
check "driver too old (9.2)" "$tmp/f" "init=-2 " "driver supports CUDA 9.2; gpuk needs 10.0" "exit=0"

# A failed gpuk_init forgets the library it opened: a retry naming a working driver loads that
# one, and the first failure names the first path only (right away, and after gpuk_shutdown)
gcc -shared -fPIC -DFIXED_VERSION=9020 -o "$tmp/libstub_old.so" "$tmp/stub.c"
for between in "" shutdown; do
  STUB_VERSION=11020 run "$libm" "$tmp/libstub.so" $between "$tmp/r1$between"
  check "retry after a library that is not a driver${between:+ (shutdown between)}" "$tmp/r1$between" \
    "first=-1 text=.*'$libm' is not a CUDA driver" "retry=0 " "count=0 " "shutdown=0" "exit=0"
  lacks "retry after a library that is not a driver: the first text blames the first path" "$tmp/r1$between" "first=.*libstub"
  STUB_VERSION=11020 run "$tmp/libstub_old.so" "$tmp/libstub.so" $between "$tmp/r2$between"
  check "retry after a driver too old${between:+ (shutdown between)}" "$tmp/r2$between" \
    "first=-2 text=.*CUDA 9.2" "retry=0 " "count=0 " "shutdown=0" "exit=0"
  STUB_VERSION=11020 run /nonexistent/libcuda.so.1 "$tmp/libstub.so" $between "$tmp/r3$between"
  check "retry after no library at the path${between:+ (shutdown between)}" "$tmp/r3$between" \
    "first=-1 text=.*'/nonexistent/libcuda.so.1'" "retry=0 " "exit=0"
done
# the other way round: a working driver kept, then a path that is not one is still refused
STUB_VERSION=11020 run "$tmp/libstub.so" "$libm" shutdown "$tmp/r4"
check "a kept driver does not stand in for another path" "$tmp/r4" "first=0 " \
  "retry=-1 .*text=.*'$libm' is not a CUDA driver" "exit=0"

# Debian's libcuda1 (non-free), here with no GPU and no kernel module
lib=.cache/libcuda1/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1
if [ ! -f "$lib" ] && [ "$(uname -m)" = x86_64 ]; then
  tools/deb-fetch libcuda1 .cache/libcuda1 >"$tmp/apt.log" 2>&1
fi
if [ -f "$lib" ]; then
  run "$lib" "$tmp/g"
  check "Debian libcuda1 without a GPU: a clear error, no crash, no leak of gpuk's" "$tmp/g" \
    "init=[1-9][0-9]* .*cuInit: CUDA_ERROR_" "count=[1-9][0-9]* .*failed earlier" "again=[1-9]" "shutdown=0" "exit=0"
  grep -m1 '^init=' "$tmp/g" | sed 's/^/     /'
else
  skipped=$((skipped + 1)); echo "skip Debian libcuda1 (could not fetch it)"; sed 's/^/    /' "$tmp/apt.log" 2>/dev/null | tail -3
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
