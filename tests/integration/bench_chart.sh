#!/usr/bin/env bash
# tests/integration/bench_chart.sh - the benches' CSV (bench/bench_csv.h, built as C99 and as C++
# like the .cu benches) as tools/bench_chart.py reads it: every row back with its quoting and empty
# fields, a missing CSV a clear error, an empty one no crash; the PNG drawn only where matplotlib is
# installed (skipped otherwise). No GPU. Run from the repository root.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; skip=0
ok() { echo "ok   bench_chart: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL bench_chart: $1"; fail=$((fail + 1)); }
cat >"$tmp/w.c" <<'EOF'
#define _POSIX_C_SOURCE 199309L
#include "bench_csv.h"
int main(int argc, char** argv) {
    (void)argc;
    bench_csv_open(argv[1], "Fake GPU, \"x\"");
    bench_csv_row("add_f32", "2^28", 1.054, 3056.5, "GB/s read+write", 1.019, 0.95);
    bench_csv_row(" tf32 ", "m=1024 n=512 k=2048", 0.2, 64.3, "TFLOP/s", 0.51, BENCH_CSV_NONE);
    bench_csv_row("histogram_u8, 256 bins", "2^28", 0.111, 2426, "GB/s read", BENCH_CSV_NONE, BENCH_CSV_NONE);
    bench_csv_close();
    return 0;
}
EOF
if cc -std=c99 -Wall -Wextra -Wpedantic -Werror -Ibench "$tmp/w.c" -o "$tmp/wc" -lm 2>"$tmp/err" &&
   c++ -x c++ -std=c++11 -Wall -Wextra -Werror -Ibench "$tmp/w.c" -o "$tmp/wcxx" 2>>"$tmp/err"; then
  ok "bench_csv.h builds as C99 and C++11"
else
  bad "bench_csv.h does not build"; sed 's/^/    /' "$tmp/err" | head -10
fi
for b in driver kernels cub; do BENCH_CSV_DIR="$tmp/csv/sub" "$tmp/wc" "$b"; done
BENCH_CSV_DIR="$tmp/csv/sub" "$tmp/wcxx" gemm
list=$(python3 tools/bench_chart.py --dir "$tmp/csv/sub" --list 2>&1)
if [ "$(grep -c 'ratio 1.019  goal 0.95' <<<"$list")" = 4 ] && [ "$(grep -c 'tf32  m=1024 n=512 k=2048 .*ratio 0.510  goal -$' <<<"$list")" = 4 ] &&
   [ "$(grep -c 'histogram_u8, 256 bins  2^28 .*ratio -      goal -$' <<<"$list")" = 4 ] &&
   grep -q '^gpuk benchmarks on Fake GPU, "x", 2' <<<"$list"; then
  ok "the writer's rows read back (quotes, commas, empty fields; C and C++)"
else
  bad "rows read back wrong"; sed 's/^/    /' <<<"$list" | head -20
fi
rm "$tmp/csv/sub/cub.csv"
msg=$(python3 tools/bench_chart.py --dir "$tmp/csv/sub" --list 2>&1); rc=$?
if [ "$rc" = 1 ] && [[ "$msg" == "bench_chart: $tmp/csv/sub/cub.csv is missing"* ]] && [[ "$msg" != *Traceback* ]]; then
  ok "a missing CSV: exit 1, named"
else
  bad "a missing CSV gave exit $rc: $msg"
fi
: >"$tmp/csv/sub/cub.csv"; head -n 1 "$tmp/csv/sub/driver.csv" >"$tmp/csv/sub/kernels.csv"
if python3 tools/bench_chart.py --dir "$tmp/csv/sub" --list >"$tmp/out" 2>&1 && grep -q '^\[cub\] 0 row' "$tmp/out" &&
   grep -q '^\[kernels\] 0 row' "$tmp/out"; then
  ok "empty CSVs (no bytes, header only): no rows, no error"
else
  bad "empty CSVs"; sed 's/^/    /' "$tmp/out" | head -10
fi
if python3 -c 'import matplotlib' 2>/dev/null; then
  if python3 tools/bench_chart.py --dir "$tmp/csv/sub" -o "$tmp/chart.png" >"$tmp/out" 2>&1 &&
     [ "$(head -c 8 "$tmp/chart.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
    ok "chart drawn: a PNG"
  else
    bad "no chart"; sed 's/^/    /' "$tmp/out" | head -10
  fi
else
  echo "skip bench_chart: no matplotlib, nothing drawn"; skip=$((skip + 1))
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
