#!/usr/bin/env bash
# tests/integration/kernels_generated.sh - gpuk.h and ptx/ are what tools/gen_ptx.py makes from
# gpuk_kernels.cuh, and every kernel's PTX compiles with ptxas for sm_75..sm_120 (CUDA 13) and
# sm_53/62/72 (CUDA 11.8, fetched from Debian into .cache/); likewise the GPU tests' own
# kernels, tests/gpu/gpu_test_kernels.h from tests/gpu/gpu_test_kernels.cu (gen_ptx.py --embed), and
# the generated-wrapper tests' header, tests/support/embed_test_kernels.h from
# tests/support/embed_test_kernels.cu (tools/gpuk_embed.py = gen_ptx.py --wrap), and the example's
# examples/my_kernels.h from examples/my_kernels.cu.
# Needs the CUDA toolkit.
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$nvcc" ]; then echo "skip kernels_generated: no nvcc (CUDA toolkit)"; echo "0 passed, 0 failed, 5 skipped"; exit 0; fi
passed=0; failed=0
one() { local name=$1; shift
  if python3 tools/gen_ptx.py --nvcc "$nvcc" "$@"; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name"; fi; }
one "kernels_generated (gpuk.h, ptx/)" --check
one "gpu_test_kernels.h generated" --check --embed tests/gpu/gpu_test_kernels.cu tests/gpu/gpu_test_kernels.h gpu_test_ptx
one "embed_test_kernels.h generated" --check --wrap tests/support/embed_test_kernels.cu -o tests/support/embed_test_kernels.h --name embed
one "examples/my_kernels.h generated" --check --wrap examples/my_kernels.cu -o examples/my_kernels.h
one "examples/gallery_kernels.h generated" --check --wrap examples/gallery_kernels.cu -o examples/gallery_kernels.h
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]
