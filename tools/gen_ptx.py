#!/usr/bin/env python3
"""gen_ptx.py - build gpuk.h: gpuk_kernels.cuh -> ptx/*.ptx, then src/*.h + ptx/ -> gpuk.h.

For maintainers (users never run it). Python 3 standard library + the CUDA toolkit.

  tools/gen_ptx.py             regenerate ptx/ (nvcc) and gpuk.h
  tools/gen_ptx.py --from-ptx  rebuild gpuk.h from src/ and the committed ptx/ (no nvcc: after
                               editing src/, this is all that is needed)
  tools/gen_ptx.py --check     fail when gpuk.h or ptx/ is stale, then run the ptxas checks
  tools/gen_ptx.py --no-ptxas-checks ...   skip the ptxas target checks
  tools/gen_ptx.py --wrap SRC.cu -o OUT.h [--name NAME] [--check]
                               a user's kernels: one PTX module and a typed C wrapper per
                               extern "C" __global__ kernel in a header that needs only
                               gpuk.h (tools/gpuk_embed.py is this); see user_kernels
  tools/gen_ptx.py --embed SRC.cu OUT.h NAME [--check]
                               other CUDA C as one PTX module in a C header (the GPU
                               tests' user kernels): `static const char NAME[]`, lowered
                               and checked like the built-ins; see user_kernels

gpuk.h, the shipped header, is the hand-written sources in src/ (amalgamate.SOURCES, in that
order) joined into one file, with the GPUK_GENERATED sections between their markers filled in;
it is never edited by hand. docs/kernels.md, the kernels' reference, is written with it.

This file is the command line; each step is a module of tools/gpuk_gen/: kernels (the kernel
list from gpuk_kernels.cuh), nvcc (PTX, a module per entry), lowering (.version/.target),
ptxas_checks, emit (C text), amalgamate (src/ -> gpuk.h), docs, user_kernels (--embed,
--wrap), common (tables and helpers they share).

Steps for every kernel (an extern "C" __global__ entry named by a GPUK_* line at the end of
gpuk_kernels.cuh):
  1. nvcc -ptx compiles the whole file once; the PTX is split into one module per entry,
     keeping only the module-scope items (tables, device functions) that entry uses;
  2. the module's .version/.target lines are lowered to the oldest ptxas accepts (baseline
     .target sm_52; the .version found from ptxas's own "requires .version X" messages);
  3. ptxas compiles it for real targets: sm_75..sm_120 with this toolkit, sm_53/62/72 with the
     CUDA 11.8 ptxas of Debian's nvidia-cuda-toolkit (fetched into .cache/, never committed);
  4. ptx/<kernel>.ptx is written and gpuk.h's GPUK_GENERATED sections are rewritten: public
     typed wrappers, kernel ids, wrapper bodies and the PTX text in pieces under 4095 chars,
     and the text of gpuk_device.cuh (which gpuk_kernels.cuh includes) for NVRTC's compiles.
  5. gpuk_device_lib.cu (gpuk_device.cuh's functions as extern "C" definitions) is compiled
     relocatable (nvcc -rdc=true), lowered and checked the same way (ptxas -c: it has no
     entry), and written to ptx/gpuk_device_lib.ptx and, packed, to gpuk.h for
     gpuk_module_link (device_library in this file says when --from-ptx compiles it).
Output is deterministic: no dates, no absolute paths, LF only, fixed order.

Companions: an '// entry gpuk__NAME for gpuk_WRAPPER | text' line among a family's '// wrap'
lines declares one more kernel of each instantiation with no wrapper of its own, which
WRAPPER's launcher runs instead of its own kernel for some calls (gpuk__builtin_companion in
gpuk.h lists the pairs; gpuk_kernels_load loads them together).

Variants: a GPUK_<FAMILY>_SMNN line makes <kernel>__smNN of each of the family's kernels, a
faster form whose lowering starts at sm_NN (no wrapper of its own: the run time picks it,
src/gpuk_builtin.h gpuk__variant_pick). GPUK_<FAMILY>_SMNNA makes <kernel>__smNNa, an
architecture-specific one (so far sm_90a: wgmma, setmaxnreg), which differs in every step:
  1. it comes from a second nvcc pass with -arch=compute_NNa (its own __CUDA_ARCH_FEAT_SMNN_ALL
     defined); the compute_75 pass should leave it out (a macro under that #if), else its copy
     there is dropped, and its numbered labels shift those of the kernels after it;
  2. .target stays sm_NNa (no other target has its instructions), .version the oldest ptxas
     takes with it (ARCH_SPECIFIC_MIN_VERSION: 8.0 for sm_90a, a CUDA 12.0 driver);
  3. ptxas checks it for sm_NNa alone, with this toolkit only: such PTX compiles for no other
     architecture, and CUDA 11.8's ptxas does not know sm_90a;
  4. its row in gpuk.h's variant table has arch_specific 1: the run time takes it only on a
     device of exactly that compute capability (9.0; 10.x and 12.x refuse sm_90a PTX).
The suffixes are parsed in one place (common: VARIANT_SUFFIX, FAMILY_SUFFIX, variant_target).
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # no __pycache__ left in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuk_gen import docs  # noqa: E402  (the generator's steps, one module each)
from gpuk_gen.amalgamate import join_sources, replace_sections  # noqa: E402
from gpuk_gen.common import (DEVICE_HEADER, DEVICE_LIBRARY, GENERATOR_VERSION,  # noqa: E402
                             HEADER, NEW_PTXAS_ARCHS, OLD_PTXAS_ARCHS, PTX_DIR, ROOT, SOURCE,
                             fail, first_difference, kernel_id, sm_name, variant_target)
from gpuk_gen.emit import (device_header_section, device_library_section,  # noqa: E402
                           sections, without_packed)
from gpuk_gen.kernels import (family_wraps, kernel_list, shared_constants,  # noqa: E402
                              variants_for, wrappers_for)
from gpuk_gen.lowering import header_info, lower, with_header  # noqa: E402
from gpuk_gen.nvcc import compile_entries, compile_ptx, module_body, nvcc_version  # noqa: E402
from gpuk_gen.ptxas_checks import check_same_code, check_targets, old_ptxas  # noqa: E402
from gpuk_gen.user_kernels import embed, wrap, wrap_setup  # noqa: E402


LIBRARY_NAME = "gpuk_device_lib"   # ptx/gpuk_device_lib.ptx: no kernel, never pruned as one


def device_library(args, header, device_header, ptxas):
    """(PTX, stamp) of gpuk_device_lib.cu, the linkable library: compiled relocatable (-rdc, so
    its extern "C" functions stay as .visible .func for a link) and lowered as a kernel is.
    Where nvcc is not run (--from-ptx, or --check with another nvcc), ptx/gpuk_device_lib.ptx
    is taken while gpuk.h's stamp says it was made from the sources as they are (its hash
    covers gpuk_device_lib.cu and gpuk_device.cuh); --from-ptx compiles it where they changed."""
    with open(DEVICE_LIBRARY, "rb") as f:
        digest = hashlib.sha256(f.read() + device_header).hexdigest()[:16]
    path = os.path.join(PTX_DIR, LIBRARY_NAME + ".ptx")
    old = re.search(r"gpuk_device_lib\.cu sha256 ([0-9a-f]+), nvcc ([\w.]+)", header)
    stamp = "tools/gen_ptx.py v%s from gpuk_device_lib.cu sha256 %s, nvcc %s -- do not edit"
    have_nvcc = os.path.exists(args.nvcc) and os.path.exists(ptxas)
    if args.from_ptx or (args.check and old and have_nvcc and
                         old.group(2) != nvcc_version(args.nvcc)):
        if old and old.group(1) == digest and os.path.exists(path):
            return open(path).read(), stamp % (GENERATOR_VERSION, digest, old.group(2))
        if args.check or not have_nvcc:
            fail("stale: gpuk_device_lib.cu or gpuk_device.cuh changed since %s was made "
                 "(run tools/gen_ptx.py, which needs nvcc)" % path)
    _original, body = module_body(compile_ptx(args.nvcc, DEVICE_LIBRARY,
                                              ["-rdc=true", "-I" + ROOT]))
    with tempfile.TemporaryDirectory() as tmp:
        version, target = lower(ptxas, LIBRARY_NAME, body, tmp)
    return with_header(body, version, target), stamp % (GENERATOR_VERSION, digest,
                                                        nvcc_version(args.nvcc))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if gpuk.h or ptx/ is stale; write nothing")
    ap.add_argument("--from-ptx", action="store_true", help="rebuild gpuk.h from src/ and ptx/ without nvcc")
    ap.add_argument("--no-ptxas-checks", action="store_true", help="skip compiling for real targets")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--verbose", action="store_true", help="list the kernels whose machine code the lowering changes")
    ap.add_argument("--embed", nargs=3, metavar=("SRC.cu", "OUT.h", "NAME"),
                    help="write other CUDA C as one lowered PTX module in a C header (see embed())")
    ap.add_argument("--wrap", metavar="SRC.cu",
                    help="a user's kernels as one lowered PTX module with a typed C wrapper per "
                         "extern \"C\" __global__ kernel (tools/gpuk_embed.py; see wrap())")
    ap.add_argument("-o", "--output", metavar="OUT.h", help="--wrap: the header to write")
    ap.add_argument("--name", help="--wrap: prefix of the generated names (default: OUT's name)")
    ap.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                    help="--wrap: an include folder for nvcc (repeatable)")
    ap.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                    help="--wrap: a macro for nvcc (repeatable)")
    args = ap.parse_args()
    if args.embed:  # its paths are the caller's, from before the chdir
        args.embed_paths = [os.path.abspath(p) for p in args.embed[:2]]
    if args.wrap:
        wrap_setup(args)
    elif args.output or args.name or args.include or args.define:
        fail("-o, --name, -I and -D go with --wrap")
    os.chdir(ROOT)
    ptxas = os.path.join(os.path.dirname(args.nvcc), "ptxas")
    if args.wrap:  # checks the source before it looks for nvcc: its errors need no toolkit
        return wrap(args, ptxas)
    if not args.from_ptx and (not os.path.exists(args.nvcc) or not os.path.exists(ptxas)):
        fail("needs nvcc and ptxas (CUDA toolkit 13); looked at " + args.nvcc)
    if args.embed:
        return embed(args, ptxas)

    with open(SOURCE, "rb") as f:
        source = f.read()
    with open(DEVICE_HEADER, "rb") as f:
        device_header = f.read()
    # the stamp's hash covers the header gpuk_kernels.cuh includes: a change to either is stale
    source_hash = hashlib.sha256(source + device_header).hexdigest()
    kernels, variants, families = [], [], []
    wraps = family_wraps(source.decode())
    for fam, inst in kernel_list(source.decode()):
        made = wrappers_for(fam, inst, wraps)
        kernels.extend(made)
        families.extend((fam, k[0], inst["t"]) for k in made if k[4] == k[0])
        variants.extend(variants_for(fam, inst, wraps))
    constants = shared_constants(source.decode())
    names = [k[0] for k in kernels if k[4] == k[0]] + [v[0] for v in variants]
    if len(set(names)) != len(names) or len(set(map(kernel_id, names))) != len(names):
        fail("duplicate kernel names (or ids: gpuk_x and gpuk__x share GPUK__K_X)")
    if any(v[1] not in names for v in variants):
        fail("a variant stands in for a kernel that does not exist")

    header = open(HEADER).read() if os.path.exists(HEADER) else ""
    joined = join_sources()
    stamp = re.search(r"gpuk_kernels\.cuh sha256 ([0-9a-f]+), nvcc ([\w.]+)", header)
    nvcc_ver = "none" if args.from_ptx else nvcc_version(args.nvcc)
    modules, floors, originals = {}, {}, {}
    if args.from_ptx and not stamp:
        fail("--from-ptx needs the nvcc stamp of the current gpuk.h; run tools/gen_ptx.py")
    if args.from_ptx or (args.check and stamp and stamp.group(2) != nvcc_ver):
        # Another nvcc may emit other (equally good) PTX: check what it can without it: the
        # source is the one the PTX was made from, and gpuk.h matches src/ and ptx/.
        if not args.from_ptx:
            print("gen_ptx: nvcc %s here, %s made ptx/: checking hashes and gpuk.h against ptx/ only"
                  % (nvcc_ver, stamp.group(2)))
        if stamp.group(1) != source_hash[:16]:
            fail("stale: gpuk_kernels.cuh or gpuk_device.cuh changed since ptx/ was generated "
                 "(run tools/gen_ptx.py)")
        nvcc_ver = stamp.group(2)
        for n in names:
            path = os.path.join(PTX_DIR, n + ".ptx")
            if not os.path.exists(path):
                fail("stale: %s is missing" % path)
            modules[n] = open(path).read()
            floors[n] = header_info(modules[n])
    else:
        split, originals = compile_entries(args.nvcc, names)
        missing = sorted(set(names) ^ set(split))
        if missing:
            fail("kernels in the lists and entries in the PTX differ: " + ", ".join(missing))
        with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            floors = dict(zip(names, pool.map(lambda n: lower(ptxas, n, split[n], tmp), names)))
        for n in names:
            version, target = floors[n]
            modules[n] = with_header(split[n], version, target)
        baseline_high = [n for n in names if not variant_target(n) and floors[n][1][0] > 52]
        if baseline_high:
            fail("baseline kernels must run on sm_52; these need more: " + ", ".join(baseline_high))

    new = sections(kernels, variants, modules, source_hash, nvcc_ver, constants, families)
    new["device_header"] = device_header_section(device_header.decode())
    library, library_stamp = device_library(args, header, device_header, ptxas)
    new["device_library"] = device_library_section(library, modules, library_stamp)
    new_header = replace_sections(joined, new)
    stale, first_diffs = [], []
    made_by_zlib = re.search(r", zlib ([\w.-]+) -- do not edit", header)
    if new_header != header and made_by_zlib and made_by_zlib.group(1) != zlib.ZLIB_VERSION and \
            without_packed(new_header) == without_packed(header):
        # another zlib deflates to other bytes: gpuk.h is up to date if all else is the same
        # (tests/unit/unit_unpack.c checks that its packed PTX unpacks to ptx/ exactly)
        print("gen_ptx: zlib %s here, %s made gpuk.h: its packed PTX not compared" % (
            zlib.ZLIB_VERSION, made_by_zlib.group(1)))
    elif new_header != header:
        stale.append(HEADER)
    for n in names:
        path = os.path.join(PTX_DIR, n + ".ptx")
        old = open(path).read() if os.path.exists(path) else None
        if old != modules[n]:
            stale.append(path)
            if old is not None and len(first_diffs) < 3:
                first_diffs.append(first_difference(path, old, modules[n]))
    library_path = os.path.join(PTX_DIR, LIBRARY_NAME + ".ptx")
    if (open(library_path).read() if os.path.exists(library_path) else None) != library:
        stale.append(library_path)
    extra = sorted(set(f[:-4] for f in os.listdir(PTX_DIR) if f.endswith(".ptx")) -
                   set(names + [LIBRARY_NAME])) \
        if os.path.isdir(PTX_DIR) else []
    stale += [os.path.join(PTX_DIR, e + ".ptx") + " (no such kernel)" for e in extra]
    # docs/kernels.md from the same '// wrap' lines: written, or checked, with gpuk.h
    stale += docs.sync(source.decode(), write=not args.check)

    if args.check:
        if stale:
            fail("stale (run tools/gen_ptx.py): " + ", ".join(stale[:10]) + "".join(first_diffs))
    else:
        os.makedirs(PTX_DIR, exist_ok=True)
        for e in extra:
            os.remove(os.path.join(PTX_DIR, e + ".ptx"))
        for n in names:
            with open(os.path.join(PTX_DIR, n + ".ptx"), "w", newline="\n") as f:
                f.write(modules[n])
        with open(library_path, "w", newline="\n") as f:
            f.write(library)
        with open(HEADER, "w", newline="\n") as f:
            f.write(new_header)

    summary = "%d wrappers, %d kernels + %d variants, %d bytes of PTX; .version floors %s" % (
        sum(1 for k in kernels if k[2] is not None), len(names) - len(variants), len(variants),
        sum(len(m) for m in modules.values()),
        ", ".join("%d.%d x%d" % (v[0], v[1], c) for v, c in sorted(
            {v: sum(1 for n in names if floors[n][0] == v) for v in set(f[0] for f in floors.values())}.items())))
    if args.from_ptx:
        args.no_ptxas_checks = True
    if not args.no_ptxas_checks and originals:
        # A lower .version or .target can change what ptxas emits (fence and atomic forms,
        # scheduling); where it does, tests/gpu/gpu_lowered.c compares the outputs on a GPU.
        compiles, diffs = check_same_code(modules, originals, ptxas, args.jobs)
        kernels_differ = sorted(set(d[0] for d in diffs))
        summary += "; machine code as from nvcc's own PTX for %d of %d kernel/arch pairs (sm_75/90/120), " \
                   "different for %d kernels" % (compiles // 2 - len(diffs), compiles // 2, len(kernels_differ))
        if args.verbose and diffs:
            print("different machine code: " + ", ".join("%s (%s)" % d for d in diffs))
    if not args.no_ptxas_checks:
        count = check_targets(dict(modules, **{LIBRARY_NAME: library}), ptxas, old_ptxas(),
                              args.jobs)
        specific = sorted(set(sm_name(f[1]) for f in floors.values() if f[1][1]))
        summary += "; ptxas: %d compiles (sm_%s with CUDA 13, sm_%s with CUDA 11.8%s) passed" % (
            count, "/".join(map(str, NEW_PTXAS_ARCHS)), "/".join(map(str, OLD_PTXAS_ARCHS)),
            "; the %s variants for %s only, with CUDA 13" % ("/".join(specific), "/".join(specific))
            if specific else "")
    print(("up to date: " if args.check else "wrote %s and %s/: " % (HEADER, PTX_DIR)) + summary)


if __name__ == "__main__":
    main()
