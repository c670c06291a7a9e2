#!/usr/bin/env bash
# tests/integration/analyze.sh - the host tests under ThreadSanitizer and valgrind, and gpuk.h
# through cppcheck and clang-tidy. (ASan+UBSan builds are the default ones in build.ninja.)
# Check sets, kept small and documented:
#   cppcheck   --enable=warning,portability,performance: its style group reports variables
#              "never read" that gpuk reads through the void* argument arrays of a launch.
#   clang-tidy clang-analyzer-*, bugprone-* without easily-swappable-parameters (C APIs take
#              runs of size_t by design) and reserved-identifier (gpuk__ internal names, the
#              stb convention; reserved only in C++). Each NOLINT in gpuk.h says why.
# Each missing tool counts as skipped. Run from the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; sed 's/^/    /' "$tmp/out" | grep -v '^    ok ' | head -30; }
skip() { skipped=$((skipped + 1)); echo "skip $1"; }
# every host test, tests/unit/unit_*.c (a fixed list here left out unit_bad_input)
hosts=$(cd tests/unit && ls unit_*.c | sed 's/\.c$//')

for t in $hosts; do
  if gcc -std=c99 -g -O1 -fsanitize=thread -I. "tests/unit/$t.c" -o "$tmp/$t.tsan" -ldl -lpthread 2>"$tmp/out" &&
     TSAN_OPTIONS=halt_on_error=1:exitcode=66 setarch "$(uname -m)" -R "$tmp/$t.tsan" >"$tmp/out" 2>&1 &&
     ! grep -q "ThreadSanitizer" "$tmp/out"; then ok "ThreadSanitizer $t"; else bad "ThreadSanitizer $t"; fi
done

if command -v valgrind >/dev/null; then
  for t in $hosts; do
    if gcc -std=c99 -g -O1 -I. "tests/unit/$t.c" -o "$tmp/$t.plain" -ldl -lpthread 2>"$tmp/out" &&
       valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect \
         --show-leak-kinds=definite,indirect --trace-children=yes "$tmp/$t.plain" >"$tmp/out" 2>&1
    then ok "valgrind $t (no errors, no leaks, fork children too)"; else bad "valgrind $t"; fi
  done
else skip "valgrind (not installed)"; fi

if command -v cppcheck >/dev/null; then
  if cppcheck -q --std=c99 --enable=warning,portability,performance --error-exitcode=1 -I. -U_WIN32 \
       tests/compile/compile_c99.c >"$tmp/out" 2>&1
  then ok "cppcheck gpuk.h implementation"; else bad "cppcheck"; fi
else skip "cppcheck (not installed)"; fi

tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
if [ -n "$tidy" ]; then
  for def in "" "-DGPUK_NO_KERNELS"; do
    "$tidy" -quiet -header-filter='gpuk\.h' \
      -checks='-*,clang-analyzer-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier' \
      tests/compile/compile_c99.c -- -std=c99 -I. $def >"$tmp/out" 2>&1
    if ! grep -qE "warning:|error:" "$tmp/out"; then ok "clang-tidy gpuk.h implementation $def"; else bad "clang-tidy $def"; fi
  done
else skip "clang-tidy (not installed)"; fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
