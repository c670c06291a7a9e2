#!/usr/bin/env python3
"""gpuk_embed.py - your own CUDA kernels in a C header for gpuk: one PTX module, lowered to run
on every driver and GPU gpuk supports (like the built-ins), checked with ptxas, and a typed C
wrapper per extern "C" __global__ kernel.

  tools/gpuk_embed.py my_kernels.cu -o my_kernels.h [--name NAME] [--check] [--no-ptxas-checks]
                                    [--nvcc PATH] [-I DIR]... [-D NAME[=VALUE]]...

Writes my_kernels.h, which needs only gpuk.h: my_kernels_load(ctx, &k), then per kernel
my_kernels_<kernel>(ctx, &k, &launch, args...), where pointer parameters take a gpuk_array
(gpuk_at(buffer, first)) and scalars their own C type. --check fails (exit 1) when the header
is not what the .cu makes now (for CI; headers it includes count where nvcc is the one that made
the header, else only the .cu's hash is compared); output is deterministic. Needs Python 3 and the CUDA
toolkit (nvcc, ptxas) at build time only; the program then builds with plain cc.

It runs the generator's users'-kernels step (tools/gpuk_gen/user_kernels.py: wrap()), the same
steps that build gpuk.h's own built-in kernels; tools/gen_ptx.py --wrap is the same command.
"""
import argparse
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuk_gen.common import ROOT  # noqa: E402
from gpuk_gen.user_kernels import wrap, wrap_setup  # noqa: E402


def main():
    ap = argparse.ArgumentParser(prog="gpuk_embed.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wrap", metavar="SRC.cu", help="the CUDA C file of the kernels")
    ap.add_argument("-o", "--output", metavar="OUT.h", required=True, help="the header to write")
    ap.add_argument("--name", help="prefix of the generated names (default: OUT's name)")
    ap.add_argument("--check", action="store_true", help="fail if OUT.h is stale; write nothing")
    ap.add_argument("--no-ptxas-checks", action="store_true", help="skip compiling for real targets")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                    help="an include folder for nvcc (repeatable)")
    ap.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                    help="a macro for nvcc (repeatable)")
    args = wrap_setup(ap.parse_args())
    os.chdir(ROOT)
    return wrap(args, os.path.join(os.path.dirname(args.nvcc), "ptxas"))


if __name__ == "__main__":
    main()
