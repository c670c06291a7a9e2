#!/usr/bin/env bash
# tests/integration/mpi_example.sh - examples/12_mpi_heat.c (the heat equation in row bands over MPI
# ranks) built with mpicc and run by mpirun. With a GPU: 1, 2 and 4 ranks (sharing the GPUs there
# are), each run's result equal bit for bit to one GPU stepping the whole grid (the example checks
# that and prints PASSED). Without one: 2 ranks each print the no-GPU cause and the job ends with
# exit status 2 (the example's "nothing ran"), no crash, no hang. Skipped without mpicc/mpirun (CI
# installs Open MPI). Run from the repository root.
set -u
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "skip mpi_example: no mpicc/mpirun (Open MPI: apt-get install libopenmpi-dev openmpi-bin)"
  echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
mkdir -p build
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
if ! mpicc -std=c99 -O2 -Wall -Wextra -Werror -I. examples/12_mpi_heat.c -o build/mpi_heat -lpng -lm -ldl; then
  bad "12_mpi_heat builds with mpicc"; echo "$passed passed, $failed failed, $skipped skipped"; exit 1
fi
ok "12_mpi_heat builds with mpicc"
# root (CI, the GPU machine) needs --allow-run-as-root; small machines need --oversubscribe
run() { timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$1" build/mpi_heat --out build/mpi-check 2>&1; }
out=$(run 1); rc=$?
if [ $rc = 2 ]; then # no GPU here: the cause from every rank, and exit 2
  out=$(run 2); rc=$?
  causes=$(printf '%s\n' "$out" | grep -c 'no GPU to run on')
  if [ $rc = 2 ] && [ "$causes" = 2 ]; then ok "2 ranks without a GPU: each says so, exit 2"
  else bad "2 ranks without a GPU (exit $rc, $causes causes)"; printf '%s\n' "$out" | tail -20; fi
  skipped=$((skipped + 3))
else
  for np in 1 2 4; do
    [ "$np" = 1 ] || { out=$(run "$np"); rc=$?; }
    if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q '^PASSED'; then
      ok "$np rank(s): $(printf '%s\n' "$out" | grep '^12_mpi_heat:' | sed 's/^12_mpi_heat: //')"
    else bad "$np rank(s) (exit $rc)"; printf '%s\n' "$out" | tail -20; fi
  done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
