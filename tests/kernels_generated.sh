#!/usr/bin/env bash
# tests/kernels_generated.sh - gpuk.h and ptx/ are what tools/gen_ptx.py makes from
# gpuk_kernels.cuh, and every kernel's PTX compiles with ptxas for sm_75..sm_120 (CUDA 13) and
# sm_53/62/72 (CUDA 11.8, fetched from Debian into .cache/). Needs the CUDA toolkit.
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$nvcc" ]; then echo "skip kernels_generated: no nvcc (CUDA toolkit)"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
if python3 tools/gen_ptx.py --check --nvcc "$nvcc"; then
  echo "ok   kernels_generated"; echo "1 passed, 0 failed, 0 skipped"
else
  echo "FAIL kernels_generated"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
