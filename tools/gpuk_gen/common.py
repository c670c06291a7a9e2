"""gpuk_gen.common - what every step of the generator shares: the file names, the PTX ISA and
target tables, the suffixes that name variants, and how a step fails or runs a program."""
import os
import re
import subprocess
import sys


GENERATOR_VERSION = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = "gpuk_kernels.cuh"
DEVICE_HEADER = "gpuk_device.cuh"   # included by SOURCE and by users' kernels
DEVICE_LIBRARY = "gpuk_device_lib.cu"  # DEVICE_HEADER's functions as a linkable PTX library
HEADER = "gpuk.h"
PTX_DIR = "ptx"
CACHE = os.path.join(ROOT, ".cache")
NVCC_ARCH = "compute_75"          # the oldest nvcc 13 emits; lowered afterwards
BASELINE_TARGETS = [52, 53, 60, 61, 62, 70, 72, 75]
NEW_PTXAS_ARCHS = [75, 80, 90, 100, 120]
OLD_PTXAS_ARCHS = [53, 62, 72]
OLD_PTXAS_DEB = "nvidia-cuda-toolkit"
PIECE_CHARS = 4000                 # C99 guarantees 4095 chars per string literal

# PTX ISA version -> first CUDA release whose driver loads it (PTX ISA release notes).
PTX_CUDA = {
    (4, 2): "7.0", (4, 3): "7.5", (5, 0): "8.0", (6, 0): "9.0", (6, 1): "9.1", (6, 2): "9.2",
    (6, 3): "10.0", (6, 4): "10.1", (6, 5): "10.2", (7, 0): "11.0", (7, 1): "11.1",
    (7, 2): "11.2", (7, 3): "11.3", (7, 4): "11.4", (7, 5): "11.5", (7, 6): "11.6",
    (7, 7): "11.7", (7, 8): "11.8", (8, 0): "12.0", (8, 1): "12.1", (8, 2): "12.2",
    (8, 3): "12.3", (8, 4): "12.4", (8, 5): "12.5", (8, 6): "12.7", (8, 7): "12.8",
    (8, 8): "12.9", (9, 0): "13.0",
}
# Oldest .version ptxas 13 takes with each .target (measured: one lower fails with "PTX .version
# X does not support .target sm_NN"; sm_52/53 take older still, 4.2 is where PTX_CUDA starts).
TARGET_MIN_VERSION = {52: (4, 2), 53: (4, 2), 60: (5, 0), 61: (5, 0), 62: (5, 0), 70: (6, 0),
                      72: (6, 1), 75: (6, 3), 80: (7, 0), 90: (7, 8)}
VARIANT_TARGETS = [80, 90]         # variants (<kernel>__smNN) may also need these
# The same for architecture-specific targets (sm_90a: PTX ISA 8.0, measured: 7.8 fails with
# "PTX .version 7.8 does not support .target sm_90a"). Such PTX is JIT-compiled for exactly that
# architecture and no other (ptxas: "cannot be compiled to future architecture" for sm_100),
# so the ptxas checks compile it for that one arch, with this toolkit only: CUDA 11.8 does not
# know sm_90a.
ARCH_SPECIFIC_MIN_VERSION = {90: (8, 0)}
VERSIONS = sorted(PTX_CUDA)

C_TYPES = {"f32": ("float", 4), "f64": ("double", 8), "tf32": ("float", 4), "i32": ("int32_t", 4),
           "u32": ("uint32_t", 4), "u64": ("uint64_t", 8), "i64": ("int64_t", 8), "u8": ("uint8_t", 1), "f16": ("uint16_t", 2),
           "bf16": ("uint16_t", 2)}


PROG = "gen_ptx"                   # the name errors start with (gpuk_embed for --wrap)

# A target is (sm, arch_specific): (80, False) is .target sm_80, PTX that runs on sm_80 and every
# newer GPU; (90, True) is sm_90a, PTX with Hopper's architecture-specific instructions (wgmma,
# setmaxnreg) that runs on compute capability 9.0 exactly. Variant names and family macros carry
# it as a suffix, parsed here and nowhere else: gpuk_gemm_tf32__sm90a, GPUK_GEMM_SM90A(T, t).
VARIANT_SUFFIX = re.compile(r"__sm(\d+)(a?)$")
FAMILY_SUFFIX = re.compile(r"^(.*)_SM(\d+)(A?)$")


def kernel_id(name):
    """The C enumerator of a kernel's id: GPUK__K_ADD_F32 for gpuk_add_f32, GPUK__K_SUM_ROWS_PACKED_F32
    for the internal gpuk__sum_rows_packed_f32 (an entry without a wrapper of its own)."""
    return "GPUK__K_" + re.sub(r"^gpuk__?", "", name).upper()


def variant_target(name):
    """The target a variant's name asks for ((90, True) for <kernel>__sm90a), None for a baseline
    kernel (or any other name)."""
    m = VARIANT_SUFFIX.search(name)
    return (int(m.group(1)), m.group(2) == "a") if m else None


def sm_name(target):
    """'sm_90a' for (90, True), 'sm_80' for (80, False)."""
    return "sm_%d%s" % (target[0], "a" if target[1] else "")


def real_archs(target, archs):
    """The ptxas -arch values, of the numbers in archs, that a module of target compiles for:
    those at or above it, or for an architecture-specific target, that target alone."""
    return [sm_name(target)] if target[1] else ["sm_%d" % a for a in archs if a >= target[0]]


def own_arch(target):
    """The arch nvcc writes PTX for and ptxas checks the lowering with: compute_75 is the
    oldest nvcc 13 emits, so sm_75 for older targets; a variant's own target above it."""
    return sm_name(target) if target[1] else "sm_%d" % max(75, target[0])


def first_difference(path, old, new):
    """Where a file's text and the text made now part first (line number, both lines), for a
    --check that finds it stale: the cause shows in the log, however rare (nvcc's choices that
    hang on memory addresses once failed about 1 check in 10: see fix_address_layout)."""
    a, b = old.split("\n"), new.split("\n")
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    line = lambda lines: lines[i][:200] if i < len(lines) else "(end of text)"
    return "\n  %s line %d: the file has %r, the generator makes %r" % (path, i + 1, line(a), line(b))


def fail(msg):
    sys.stderr.write(PROG + ": " + msg + "\n")
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# PTX: compile, split per entry, lower, check.

def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
