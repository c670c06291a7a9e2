# tests/compile/driver_sigs.sh - build and run tests/compile/driver_sigs.c where the CUDA
# toolkit headers exist.
inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
if [ ! -f "$inc/cudaTypedefs.h" ]; then echo "skip driver_sigs: no $inc/cudaTypedefs.h"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
out=$(mktemp); trap 'rm -f "$out"' EXIT
if ! gcc -std=c11 -Wall -Wextra -Werror -I. -I"$inc" tests/compile/driver_sigs.c -o "$out" -ldl -lpthread; then
  echo "FAIL driver_sigs: gpuk's driver types differ from $inc/cudaTypedefs.h"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi
"$out"
