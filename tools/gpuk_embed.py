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

This is a front end to the one generator, tools/gen_ptx.py --wrap (which also builds gpuk.h's
own built-in kernels): see wrap() there.
"""
import os
import sys

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    args, src, argv = [], None, sys.argv[1:]
    while argv:  # the one argument that is not an option or an option's value is SRC.cu
        a = argv.pop(0)
        if a in ("-o", "--output", "--name", "--nvcc", "--jobs", "-I", "-D") and argv:
            args += [a, argv.pop(0)]
        elif a.startswith("-") or src is not None:
            args.append(a)
        else:
            src = a
    if src is None:
        sys.stderr.write("gpuk_embed: usage: tools/gpuk_embed.py SRC.cu -o OUT.h [--name NAME] "
                         "[--check] [--no-ptxas-checks] [--nvcc PATH] [-I DIR] [-D NAME=VALUE]\n")
        sys.exit(2)
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_ptx.py")
    os.execv(sys.executable, [sys.executable, gen, "--wrap", src] + args)
