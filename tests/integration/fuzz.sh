#!/usr/bin/env bash
# tests/integration/fuzz.sh - runs the libFuzzer target tests/integration/fuzz_inputs.c for
# FUZZ_SECONDS (default 30) under ASan+UBSan, from a seed corpus of real PTX headers. Any crash,
# sanitizer report or trap is a finding and fails. Needs clang with libFuzzer; skipped without it.
set -u
secs=${FUZZ_SECONDS:-30}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }' >"$tmp/probe.c"
if ! command -v clang >/dev/null || ! clang -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null; then
  echo "skip fuzz: no clang with libFuzzer"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
if ! clang -std=c99 -g -O1 -Wall -Werror -Wno-unused-function -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=undefined -I. tests/integration/fuzz_inputs.c -o "$tmp/fuzz" -ldl -lpthread 2>"$tmp/err"; then
  echo "FAIL fuzz: the target does not build"; sed 's/^/    /' "$tmp/err" | head -10
  echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
mkdir -p "$tmp/corpus"
i=0
for f in ptx/gpuk_add_f32.ptx ptx/gpuk_gemm_f64__sm80.ptx; do
  [ -f "$f" ] || continue
  { printf '\0'; head -c 300 "$f"; } >"$tmp/corpus/ptx$i"; i=$((i + 1))
done
printf '\1hello %%s world' >"$tmp/corpus/fmt"
printf '\2\3\0\0\0\0\0\0\0\5\0\0\0\0\0\0\0\100\0\0\0\0\0\0\0' >"$tmp/corpus/wrappers"
printf '\3\0\4\0\0\0\0\0\0' >"$tmp/corpus/descs"
mkdir -p build
if (cd "$tmp" && ./fuzz -max_total_time="$secs" -max_len=4096 -print_final_stats=1 -artifact_prefix="$OLDPWD/build/fuzz-" corpus) >"$tmp/log" 2>&1; then
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$tmp/log" | grep -oE '[0-9]+$')
  echo "ok   fuzz: ${runs:-?} inputs in ${secs} s, no finding"; echo "1 passed, 0 failed, 0 skipped"
else
  echo "FAIL fuzz: a finding (the input is kept in build/fuzz-*)"; grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$tmp/log" | head -10
  echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
