#!/usr/bin/env bash
# tests/integration/examples.sh - every example (built by `ninja examples`) at its quick size. With
# a GPU: exit status 0 and each picture a valid PNG (signature, chunk CRCs, IHDR, the whole image
# data inflating to the right size) of the expected width and height. Without one: each prints the
# cause once and exits 1 or 2 without crashing; the GPU runs count as skipped. With a GPU but no
# NCCL, 16_nccl_allreduce (exit 2, its install hint) counts as skipped; pip's NCCL wheel is found
# through python3 where NCCL_PATH is not set. On a platform without CUDA IPC,
# 18_ipc_producer_consumer (exit 2, saying so) counts as skipped; with a driver older than
# CUDA 12.4, 19_heat_until_converged (exit 2, saying so) likewise.
# Pictures go to $EXAMPLES_OUT (default build/examples-check). Run from the repository root.
set -u
out=${EXAMPLES_OUT:-build/examples-check}; rm -rf "$out"; mkdir -p "$out"
# program [arguments]: picture=WIDTHxHEIGHT ... (height * = any). --gpus 3 runs the multi-GPU
# examples' split on 3 ctxs whatever the GPU count (several ctxs share a device where fewer).
expect='vector_add:
own_kernels:
device_query: device_memory.png=640x*
ufuncs: ufuncs.png=800x300
statistics: histogram.png=800x400
monte_carlo_pi: monte_carlo_pi.png=512x512
mandelbrot_julia: mandelbrot_f32.png=1024x1024 mandelbrot_f64.png=1024x1024 julia_f32.png=600x600 julia_f64.png=600x600
smoothing: smoothing_before.png=1024x1024 smoothing_after.png=1024x1024
heat_equation: heat_00000.png=256x256 heat_00500.png=256x256 heat_01000.png=256x256 heat_01500.png=256x256 heat_02000.png=256x256
matrix_multiply: matrix_c.png=512x512
streams_pipeline: timeline.png=1200x204
custom_kernels:
mandelbrot_bands: mandelbrot_bands.png=1024x1024
mandelbrot_bands --gpus 3: mandelbrot_bands.png=1024x1024
multi_gpu_sum:
multi_gpu_sum --gpus 3:
nccl_allreduce:
zero_copy_frames:
ipc_producer_consumer:
heat_until_converged: heat_converged.png=256x256
row_softmax:
device_printf:
link_device_functions:
compact_particles: compact_particles.png=512x512
sort_particles: sort_particles.png=512x512
picture_histogram: picture_before.png=1024x1024 picture_equalized.png=1024x1024 picture_histograms.png=800x400'
# prints WIDTHxHEIGHT of a valid PNG, or why it is not one (exit 1)
png_size() { python3 - "$1" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
if d[:8] != b"\x89PNG\r\n\x1a\n": sys.exit("not a PNG signature")
i, idat, ihdr, end = 8, b"", None, False
while i + 8 <= len(d):
    n, kind = struct.unpack(">I4s", d[i:i + 8]); body = d[i + 8:i + 8 + n]
    if len(body) != n or zlib.crc32(kind + body) != struct.unpack(">I", d[i + 8 + n:i + 12 + n])[0]:
        sys.exit("chunk %r: bad length or CRC" % kind)
    if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT": idat += body
    if kind == b"IEND": end = True
    i += 12 + n
if not ihdr or not end: sys.exit("no IHDR or IEND")
w, h, depth, colour = ihdr[:4]
channels = {0: 1, 2: 3, 6: 4}.get(colour)
if depth != 8 or not channels: sys.exit("unexpected depth %d / colour type %d" % (depth, colour))
if len(zlib.decompress(idat)) != h * (1 + w * channels): sys.exit("image data of the wrong size")
print("%dx%d" % (w, h))
PY
}
passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
progs=$(printf '%s\n' "$expect" | cut -d: -f1 | cut -d' ' -f1 | sort -u)
for p in $progs; do [ -x "build/$p" ] || { bad "build/$p missing (ninja examples)"; }; done
[ "$failed" = 0 ] || { echo "$passed passed, $failed failed, $skipped skipped"; exit 1; }
./build/device_query --out "$out/device_query" >"$out/device_query.log" 2>&1; probe=$?
if [ "$probe" != 0 ] && [ "$probe" != 2 ]; then
  bad "device_query: exit $probe"; sed 's/^/     /' "$out/device_query.log" | tail -n 5
fi
# NCCL (16_nccl_allreduce) from pip's wheel where it is not on the library path
if [ "$probe" = 0 ] && [ -z "${NCCL_PATH:-}" ] &&
   lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null) &&
   [ -f "$lib" ]; then export NCCL_PATH=$lib; fi
while IFS= read -r line; do
  run=${line%%:*}; pics=${line#*:}; p=${run// /_}
  ./build/$run --out "$out/$p" >"$out/$p.log" 2>&1; rc=$?
  if [ "$probe" = 0 ]; then # a GPU: the example must pass and draw its pictures
    if [ "$rc" = 2 ] && grep -q 'NCCL not found' "$out/$p.log"; then
      skipped=$((skipped + 1)); echo "skip $run: $(grep -m1 'NCCL not found' "$out/$p.log" | cut -c1-150)"; continue
    fi
    if [ "$rc" = 2 ] && grep -q 'no CUDA IPC on this platform' "$out/$p.log"; then
      skipped=$((skipped + 1)); echo "skip $run: no CUDA IPC on this platform"; continue
    fi
    if [ "$rc" = 2 ] && grep -q 'need a driver for CUDA 12.4 or newer' "$out/$p.log"; then
      skipped=$((skipped + 1)); echo "skip $run: the driver predates WHILE graph nodes"; continue
    fi
    if [ "$rc" != 0 ]; then bad "$run: exit $rc"; sed 's/^/     /' "$out/$p.log" | tail -n 8; continue; fi
    why=""
    for pic in $pics; do
      f=${pic%%=*}; want=${pic#*=}
      got=$(png_size "$out/$p/$f" 2>&1) || { why="$why $f: $got;"; continue; }
      case $got in $want) ;; *) why="$why $f is $got, not $want;";; esac
    done
    if [ -z "$why" ]; then ok "$run: $(grep -E '^PASSED|ok$' "$out/$p.log" | tail -n 1 | cut -c1-110)"
    else bad "$run:$why"; fi
  else # no GPU: the cause once, exit 1 or 2, no crash
    causes=$(grep -cE '^gpuk error|sees no CUDA device' "$out/$p.log")
    if { [ "$rc" = 1 ] || [ "$rc" = 2 ]; } && [ "$causes" = 1 ]; then
      ok "$run without a GPU: exit $rc, the cause once"; skipped=$((skipped + 1))
    else bad "$run without a GPU: exit $rc, the cause printed $causes times"; sed 's/^/     /' "$out/$p.log" | tail -n 5; fi
  fi
done <<<"$expect"
[ "$probe" = 0 ] || echo "skip the examples' GPU runs: no usable GPU ($(head -n 1 "$out/device_query.log" | cut -c1-100))"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
