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
                               gpuk.h (tools/gpuk_embed.py is this); see wrap()
  tools/gen_ptx.py --embed SRC.cu OUT.h NAME [--check]
                               other CUDA C as one PTX module in a C header (the GPU
                               tests' user kernels): `static const char NAME[]`, lowered
                               and checked like the built-ins; see embed()

gpuk.h, the shipped header, is the hand-written sources in src/ (SOURCES, in that order)
joined into one file, with the GPUK_GENERATED sections between their markers filled in; it is
never edited by hand.

Steps for every kernel (an extern "C" __global__ entry named by a GPUK_* line at the end of
gpuk_kernels.cuh):
  1. nvcc -ptx compiles the whole file once; the PTX is split into one module per entry,
     keeping only the module-scope items (tables, device functions) that entry uses;
  2. the module's .version/.target lines are lowered to the oldest ptxas accepts (baseline
     .target sm_52; the .version found from ptxas's own "requires .version X" messages);
  3. ptxas compiles it for real targets: sm_75..sm_120 with this toolkit, sm_53/62/72 with the
     CUDA 11.8 ptxas of Debian's nvidia-cuda-toolkit (fetched into .cache/, never committed);
  4. ptx/<kernel>.ptx is written and gpuk.h's GPUK_GENERATED sections are rewritten: public
     typed wrappers, kernel ids, wrapper bodies and the PTX text in pieces under 4095 chars.
Output is deterministic: no dates, no absolute paths, LF only, fixed order.

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
The suffixes are parsed in one place (VARIANT_SUFFIX, FAMILY_SUFFIX, variant_target).
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

GENERATOR_VERSION = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = "gpuk_kernels.cuh"
HEADER = "gpuk.h"
# The hand-written parts of gpuk.h, in the order they are joined: the manual and declarations,
# then the implementation, one concern a file, in dependency order (a call into a later file
# goes through a hook whose declaration names that file).
SOURCES = ["src/gpuk_api.h", "src/gpuk_platform.h", "src/gpuk_driver.h", "src/gpuk_result.h",
           "src/gpuk_loader.h", "src/gpuk_device.h", "src/gpuk_handle.h", "src/gpuk_ctx.h",
           "src/gpuk_staging.h", "src/gpuk_memory.h", "src/gpuk_stream.h", "src/gpuk_module.h",
           "src/gpuk_nvrtc.h", "src/gpuk_launch.h", "src/gpuk_graph.h", "src/gpuk_builtin.h",
           "src/gpuk_custom.h", "src/gpuk_builtin_ptx.h", "src/gpuk_end.h"]
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
           "u32": ("uint32_t", 4), "u8": ("uint8_t", 1)}


PROG = "gen_ptx"                   # the name errors start with (gpuk_embed for --wrap)

# A target is (sm, arch_specific): (80, False) is .target sm_80, PTX that runs on sm_80 and every
# newer GPU; (90, True) is sm_90a, PTX with Hopper's architecture-specific instructions (wgmma,
# setmaxnreg) that runs on compute capability 9.0 exactly. Variant names and family macros carry
# it as a suffix, parsed here and nowhere else: gpuk_gemm_tf32__sm90a, GPUK_GEMM_SM90A(T, t).
VARIANT_SUFFIX = re.compile(r"__sm(\d+)(a?)$")
FAMILY_SUFFIX = re.compile(r"^(.*)_SM(\d+)(A?)$")


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
# The kernel list: the GPUK_* instantiation lines of gpuk_kernels.cuh, and the "// wrap"
# declarations before each family macro, which say what each kernel's C wrapper looks like.

def kernel_list(source_text):
    """[(family, {param: value})] in source order, from lines like 'GPUK_BINARY(add, float, f32)',
    the values named by the family macro's own parameters (op, T, t, ...)."""
    tail = source_text.split("// ==== instantiation lists ====\n", 1)
    if len(tail) != 2:
        fail(SOURCE + ": no '==== instantiation lists' marker")
    params = {m.group(1): [a.strip() for a in m.group(2).split(",")]
              for m in re.finditer(r"^#define GPUK_([A-Z0-9_]+)\(([^)]*)\)", source_text, re.M)}
    out = []
    for line in tail[1].splitlines():
        m = re.match(r"^GPUK_([A-Z0-9_]+)\(([^)]*)\)\s*$", line.strip())
        if not m:
            if line.strip():
                fail(SOURCE + ": cannot read instantiation line: " + line)
            continue
        fam, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        if fam not in params or len(params[fam]) != len(args):
            fail(SOURCE + ": %s does not match its family macro's parameters" % line.strip())
        out.append((fam, dict(zip(params[fam], args))))
    return out


def family_wraps(source_text):
    """{family: [declaration text]} from the '// wrap' lines (with their '//      '
    continuation lines) right before each '#define GPUK_<FAMILY>(...)'."""
    wraps, pending, cur = {}, [], None
    for line in source_text.split("\n"):
        s = line.strip()
        if s.startswith("// wrap "):
            if cur:
                pending.append(cur)
            cur = s[len("// wrap "):]
            continue
        if cur is not None and line.startswith("//      "):
            cur += " " + s[2:].strip()
            continue
        if cur is not None:
            pending.append(cur)
            cur = None
        m = re.match(r"#define GPUK_([A-Z0-9_]+)\(", s)
        if m and pending:
            wraps[m.group(1)] = pending
            pending = []
        elif pending:
            fail(SOURCE + ": '// wrap' lines must come right before their family macro, not before: " + s)
    return wraps


def shared_constants(source_text):
    """[(host name, value)] from the '#define NAME value' lines between the shared-constant
    markers: the host launchers use them as GPUK__NAME (a leading GPUK_ dropped)."""
    m = re.search(r"// ==== shared constants ====\n(.*?)// ==== end of shared constants ====", source_text, re.S)
    if not m:
        fail(SOURCE + ": no '==== shared constants ====' block")
    out = []
    for line in m.group(1).strip().split("\n"):
        d = re.match(r"^#define (\w+) (\w+)$", line.strip())
        if not d:
            fail(SOURCE + ": cannot read shared constant: " + line)
        name, value = d.group(1), d.group(2)
        out.append(("GPUK__" + (name[5:] if name.startswith("GPUK_") else name),
                    value + "u" if value.isdigit() else value))
    return out


def doc(text):
    return "/* " + text + " */"


def expand(text, values):
    """The {op: a=..; b=..} choices and the {x} names of a wrap declaration filled in."""
    def choose(m):
        picks = dict(p.strip().split("=", 1) for p in m.group(2).split(";"))
        if values.get(m.group(1)) not in picks:
            fail("%s: no choice for %s = %s" % (text, m.group(1), values.get(m.group(1))))
        return picks[values[m.group(1)]]
    text = re.sub(r"\{(\w+): ([^}]*)\}", choose, text)
    def name(m):
        if m.group(1) not in values:
            fail("%s: unknown {%s}" % (text, m.group(1)))
        return values[m.group(1)]
    return re.sub(r"\{(\w+)\}", name, text)


def wrappers_for(fam, args, wraps):
    """[(kernel, doc, params, body)] for one instantiation line. params excludes ctx, stream."""
    if FAMILY_SUFFIX.match(fam):
        return []  # a variant family: see variants_for
    if fam not in wraps:
        fail("family GPUK_%s has no '// wrap' declaration" % fam)
    T, size = C_TYPES[args["t"]]
    values = dict(args, T=T, size=str(size))
    res = []
    for decl in wraps[fam]:
        m = re.match(r"^(gpuk_[\w{}]+)\((.*?)\) = (\w+)(?:@(gpuk_[\w{}]+))?\((.*)\) \| (.*)$", decl)
        if not m:
            fail("cannot read wrap declaration: " + decl)
        kern, params, launcher, entry, rest, text = (expand(g or "", values) for g in m.groups())
        # launcher@gpuk_x: this wrapper launches the kernel of wrapper gpuk_x (no entry of its own)
        entry = entry or kern
        body = "return %s(\"%s\", GPUK__K_%s, ctx, stream, %s);" % (launcher, kern, entry[5:].upper(), rest)
        res.append((kern, text, params, body, entry))
    kerns = [r[0] for r in res]
    if any(r[4] not in kerns for r in res):
        fail("GPUK_%s: a wrapper launches a kernel its family does not make" % fam)
    return res


def variants_for(fam, args, wraps):
    """[(variant entry, kernel it stands in for)]: faster forms for newer GPUs, named
    <kernel>__smNN (GPUK_<FAMILY>_SMNN) or, architecture-specific, <kernel>__smNNa
    (GPUK_<FAMILY>_SMNNA), chosen at run time where the device has them; no wrappers of their
    own."""
    m = FAMILY_SUFFIX.match(fam)
    if not m:
        return []
    bases = [k[0] for k in wrappers_for(m.group(1), args, wraps) if k[4] == k[0]]
    return [(b + "__sm" + m.group(2) + m.group(3).lower(), b) for b in bases]


# ---------------------------------------------------------------------------------------------
# PTX: compile, split per entry, lower, check.

def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def nvcc_version(nvcc):
    out = run([nvcc, "--version"]).stdout
    m = re.search(r"release (\d+\.\d+), V([\d.]+)", out)
    return m.group(2) if m else "unknown"


# nvcc 13.0's cicc chooses between equally valid PTX by where its own data lies in memory: with
# address space layout randomization, about 1 compile of gpuk_kernels.cuh in 12 gives another
# gpuk_gemm_tf32__sm80 (one more vector load from shared memory, two more registers), on a
# quiet machine or a busy one alike. With randomization off the same source and toolkit give
# the same PTX on every run (where the system's libraries lie in memory still counts: a system
# whose libraries differ may get the other form every time, and --check then says so every
# time, with the first differing line). Linux keeps the ADDR_NO_RANDOMIZE personality across
# fork and exec, so setting it here once covers every nvcc started afterwards and what it runs.
ADDR_NO_RANDOMIZE = 0x0040000
fixed_layout = None     # None: not tried yet; then True or False


def fix_address_layout():
    """Turns address randomization off for the programs started from now on (Linux); says
    once on stderr where it cannot (other systems, or a sandbox that forbids it)."""
    global fixed_layout
    if fixed_layout is None:
        fixed_layout = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                libc = ctypes.CDLL(None, use_errno=True)
                persona = libc.personality(0xffffffff)      # 0xffffffff: query only
                fixed_layout = persona != -1 and (bool(persona & ADDR_NO_RANDOMIZE) or
                                                  libc.personality(persona | ADDR_NO_RANDOMIZE) != -1)
            except (OSError, AttributeError):
                pass
        if not fixed_layout:
            sys.stderr.write("%s: note: cannot turn address randomization off here; nvcc may then "
                             "emit another, equally valid PTX from time to time\n" % PROG)
    return fixed_layout


def compile_ptx(nvcc, source_path, extra=(), arch=NVCC_ARCH):
    fix_address_layout()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "all.ptx")
        r = run([nvcc, "-ptx", "-arch=" + arch, "-std=c++17", "-x", "cu"] + list(extra) +
                ["-o", out, source_path])
        if r.returncode:
            fail("nvcc failed:\n" + r.stdout)
        with open(out) as f:
            return f.read()


def compile_entries(nvcc, names):
    """split_ptx's ({entry: module}, {entry: nvcc's text}) for the whole source: one nvcc pass
    for compute_75 gives every entry except the architecture-specific variants, which come from
    a pass of their own target (-arch=compute_90a for __sm90a: nvcc then defines
    __CUDA_ARCH_FEAT_SM90_ALL, and such a kernel may keep its wgmma code under it). Their
    compute_75 copies, if the source makes any, are dropped."""
    targets = sorted(set(t for t in map(variant_target, names) if t and t[1]))
    archs = [NVCC_ARCH] + ["compute_%da" % t[0] for t in targets]
    fix_address_layout()   # before the threads: compile_ptx's own call then only reads the result
    with concurrent.futures.ThreadPoolExecutor(len(archs)) as pool:
        texts = list(pool.map(lambda a: compile_ptx(nvcc, SOURCE, arch=a), archs))
    modules, originals = {}, {}
    for target, text in zip([None] + targets, texts):
        split, orig = split_ptx(text)
        for n in split:
            t = variant_target(n)
            if (t if t and t[1] else None) == target:
                modules[n], originals[n] = split[n], orig[n]
    return modules, originals


def split_ptx(text):
    """({entry: module text}, {entry: the same as nvcc wrote it}) with each entry's
    module-scope dependencies, in source order; the first is compacted and without the
    pragmas gpuk drops, the second is kept to compare machine code against."""
    lines = text.replace("\r\n", "\n").split("\n")
    items, i = [], 0          # (names, text)
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s or s.startswith("//") or s.startswith(".version") or s.startswith(".target") \
                or s.startswith(".address_size"):
            i += 1
            continue
        start, depth, body = i, 0, []
        while i < len(lines):
            body.append(lines[i])
            depth += lines[i].count("{") - lines[i].count("}")
            i += 1
            if depth == 0 and lines[i - 1].rstrip().endswith(("}", ";")):
                break
        head = body[0].strip()
        m = re.search(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", "\n".join(body))
        if m and (head.startswith(".visible .entry") or ".func" in head.split("(")[0]):
            name = m.group(1)
        else:
            m = re.search(r"([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\])?\s*(?:=|;)", "\n".join(body))
            if not m:
                fail("cannot name PTX item at line %d: %s" % (start + 1, head))
            name = m.group(1)
        items.append((name, head.startswith(".visible .entry"), "\n".join(body)))
    by_name = {}
    for idx, (name, _, _) in enumerate(items):
        by_name.setdefault(name, []).append(idx)
    modules, originals = {}, {}
    for idx, (name, is_entry, body) in enumerate(items):
        if not is_entry:
            continue
        need, todo = set([idx]), [idx]
        while todo:
            j = todo.pop()
            for word in set(re.findall(r"[A-Za-z_$][\w$]*", items[j][2])):
                for k in by_name.get(word, []):
                    if k not in need and not items[k][1]:
                        need.add(k)
                        todo.append(k)
        originals[name] = "\n".join(items[k][2] for k in sorted(need)) + "\n"
        modules[name] = compact(DROPPED_PRAGMAS.sub("", originals[name]))
    return modules, originals


# nvcc 13 marks loads of padded structs with this hint, which only PTX ISA 8.3 (CUDA 12.3
# drivers) accepts; it changes no result, so the baseline drops it rather than raise its floor.
DROPPED_PRAGMAS = re.compile(r'^\s*\.pragma "used_bytes_mask [^"]*";\n', re.M)


def compact(text):
    """Whitespace and comment lines cut (about a tenth of the text, so a tenth of gpuk.h's
    compile time): tabs become one space, comment-only and empty lines go."""
    out = []
    for line in text.split("\n"):
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        out.append((" " if line[:1] in "\t " else "") + re.sub(r"[ \t]+", " ", s))
    return "\n".join(out) + "\n"


def with_header(body, version, target):
    return ".version %d.%d\n.target %s\n.address_size 64\n%s" % (version[0], version[1], sm_name(target), body)


def ptxas_run(ptxas, arch, text, tmp, tag):
    """ptxas text for arch ('sm_90', 'sm_90a'): (passed, its log)."""
    path = os.path.join(tmp, tag + ".ptx")
    with open(path, "w") as f:
        f.write(text)
    r = run([ptxas, "-arch=" + arch, "-o", os.devnull, path])
    return r.returncode == 0, r.stdout


def lower(ptxas, name, body, tmp):
    """(version, target) lowest that ptxas 13 accepts for body: target first, then version. A
    variant (<kernel>__smNN) starts at its own sm_NN, where its faster instructions are; an
    architecture-specific one (<kernel>__smNNa) keeps sm_NNa, the only target its instructions
    exist on, and gets the lowest .version for it."""
    floor = variant_target(name)
    if floor and floor[1]:
        targets = [floor]
    else:
        targets = [(t, False) for t in BASELINE_TARGETS + (VARIANT_TARGETS if floor else [])
                   if t >= (floor[0] if floor else 0)]
    for target in targets:
        version = (ARCH_SPECIFIC_MIN_VERSION if target[1] else TARGET_MIN_VERSION)[target[0]]
        while True:
            ok, log = ptxas_run(ptxas, own_arch(target), with_header(body, version, target), tmp, name)
            if ok:
                return version, target
            m = re.findall(r"requires PTX ISA \.version (\d+)\.(\d+) or later", log)
            if m:
                want = max((int(a), int(b)) for a, b in m)
                if want <= version or want not in PTX_CUDA:
                    fail("%s: ptxas wants .version %d.%d:\n%s" % (name, want[0], want[1], log))
                version = want
                continue
            if re.search(r"requires \.target sm_\d+ or higher|not supported on \.target", log):
                break   # next target
            fail("%s: ptxas rejects the lowered PTX:\n%s" % (name, log))
    fail("%s: no target up to %s accepts it" % (name, sm_name(targets[-1])))


def old_ptxas():
    """Path of the CUDA 11.8 ptxas from Debian's nvidia-cuda-toolkit, fetched on first use."""
    exe = os.path.join(CACHE, "cuda-11.8", "usr", "bin", "ptxas")
    if not os.path.exists(exe):
        r = run(["bash", os.path.join(ROOT, "tools", "deb-fetch"), OLD_PTXAS_DEB, os.path.join(CACHE, "cuda-11.8")])
        if r.returncode or not os.path.exists(exe):
            fail("cannot fetch the CUDA 11.8 ptxas (tools/deb-fetch %s):\n%s" % (OLD_PTXAS_DEB, r.stdout[-2000:]))
    return exe


def code_sections(cubin):
    """{section name: bytes} of the .text sections (the machine code) of an ELF64 cubin."""
    b = open(cubin, "rb").read()
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]
    def name(off):
        return b[names + off:b.index(b"\0", names + off)].decode()
    return {name(s[0]): b[s[4]:s[4] + s[5]] for s in secs if name(s[0]).startswith(".text")}


def check_same_code(modules, originals, ptxas, jobs):
    """Lowered modules compile to the same machine code as nvcc's own PTX (its .version 9.0,
    .target sm_75 header, or the variant's own target, and every line it wrote) for sm_75,
    sm_90 and sm_120 (an sm_90a variant: sm_90a alone); returns (compiles, [(kernel, arch)
    that differ])."""
    def header(n):
        return ".version 9.0\n.target %s\n.address_size 64\n" % own_arch(header_info(modules[n])[1])
    tasks = [(n, a) for n in modules if n in originals
             for a in real_archs(header_info(modules[n])[1], (75, 90, 120))]
    with tempfile.TemporaryDirectory() as tmp:
        def one(task):
            n, a = task
            code = []
            for tag, text in (("low", modules[n]), ("orig", header(n) + originals[n])):
                src, out = os.path.join(tmp, "%s_%s_%s.ptx" % (n, a, tag)), os.path.join(tmp, "%s_%s_%s.cubin" % (n, a, tag))
                with open(src, "w") as f:
                    f.write(text)
                r = run([ptxas, "-arch=" + a, "-o", out, src])
                if r.returncode:
                    fail("ptxas failed on %s for %s:\n%s" % (src, a, r.stdout))
                code.append(code_sections(out))
            return None if code[0] == code[1] else (n, a)
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            diffs = [d for d in pool.map(one, tasks) if d]
    return len(tasks) * 2, diffs


def check_targets(modules, new_ptxas, old, jobs):
    """ptxas every module for every real target; returns the number of compiles. old None:
    the targets of the CUDA 13 ptxas only. An architecture-specific module (sm_90a) is compiled
    for its own arch by the CUDA 13 ptxas alone (no other arch takes it; 11.8 predates it)."""
    target = {n: header_info(modules[n])[1] for n in modules}
    tasks = [(new_ptxas, a, n) for n in modules for a in real_archs(target[n], NEW_PTXAS_ARCHS)]
    if old is not None:
        tasks += [(old, a, n) for n in modules if not target[n][1]
                  for a in real_archs(target[n], OLD_PTXAS_ARCHS)]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        def one(task):
            exe, arch, name = task
            ok, log = ptxas_run(exe, arch, modules[name], tmp, "%s_%s_%d" % (name, arch, exe == old))
            return None if ok else "%s for %s (%s):\n%s" % (name, arch, exe, log)
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for e in pool.map(one, tasks):
                if e:
                    errors.append(e)
    if errors:
        fail("ptxas target checks failed:\n" + "\n".join(errors[:10]))
    return len(tasks)


# ---------------------------------------------------------------------------------------------
# gpuk.h sections

def c_string_pieces(text):
    """The text as C string-literal pieces, each under PIECE_CHARS chars, split at line ends."""
    pieces, cur, size = [], [], 0
    for line in text.split("\n")[:-1]:
        lit = line.replace("\\", "\\\\").replace("\"", "\\\"").replace("\t", "\\t") + "\\n"
        if size + len(lit) > PIECE_CHARS and cur:
            pieces.append(cur)
            cur, size = [], 0
        if len(lit) > PIECE_CHARS:
            fail("a PTX line is longer than %d chars" % PIECE_CHARS)
        cur.append(lit)
        size += len(lit)
    if cur:
        pieces.append(cur)
    return pieces


def header_info(text):
    """((major, minor), target) of a module's .version/.target lines."""
    m = re.search(r"^\.version (\d+)\.(\d+)\n\.target sm_(\d+)(a?)$", text, re.M)
    return (int(m.group(1)), int(m.group(2))), (int(m.group(3)), m.group(4) == "a")


def ptx_blob(name, mod):
    """The C text of one module: an annotation, then the PTX in string-literal pieces."""
    version, target = header_info(mod)
    digest = hashlib.sha256(mod.encode()).hexdigest()
    out = ["/* %s: ptx/%s.ptx, .version %d.%d, .target %s, driver >= CUDA %s%s, %d bytes, sha256 %s */"
           % (name, name, version[0], version[1], sm_name(target), PTX_CUDA[version],
              ", compute capability %d.%d only" % divmod(target[0], 10) if target[1] else "", len(mod), digest[:16]),
           "static const char* const gpuk__ptx_%s[] = {" % name[5:]]
    for piece in c_string_pieces(mod):
        out.append("    " + "\n    ".join("\"%s\"" % lit for lit in piece) + ",")
    out.append("    0\n};")
    entry = "{ \"%s\", gpuk__ptx_%s, %d, %d, %d, %d }" % (name, name[5:], len(mod), version[0] * 10 + version[1],
                                                        target[0], target[1])
    return out, entry


def sections(kernels, variants, modules, source_hash, nvcc_ver, constants, families):
    """{section name: text between its markers}."""
    stamp = "tools/gen_ptx.py v%s from gpuk_kernels.cuh sha256 %s, nvcc %s -- do not edit" % (
        GENERATOR_VERSION, source_hash[:16], nvcc_ver)
    decl = ["/* " + stamp + " */", "#if !defined(GPUK_NO_KERNELS)"]
    ids = ["/* " + stamp + " */", "enum {"]
    defs = ["/* " + stamp + " */"]
    ptx = ["/* " + stamp + " */"]
    table = []
    for kern, text, params, body, entry in kernels:
        proto = "gpuk_result %s(gpuk_ctx* ctx, gpuk_stream stream, %s)" % (kern, params)
        decl.append("GPUK_API " + proto + "; " + doc(text))
        defs.append("GPUK__IMPL " + proto + " {\n    " + body + "\n}")
        if entry != kern:
            continue  # launches another wrapper's kernel
        ids.append("    GPUK__K_%s," % kern[5:].upper())
        blob, entry = ptx_blob(kern, modules[kern])
        ptx.extend(blob)
        table.append("    " + entry + ",")
    vtable = []
    for name, base in variants:
        blob, entry = ptx_blob(name, modules[name])
        ptx.extend(blob)
        vtable.append("    { GPUK__K_%s, %s }," % (base[5:].upper(), entry))
    decl.append("#endif")
    ids.append("    GPUK__KERNEL_COUNT\n};")
    ids.append("/* constants the kernels and their host launchers share */")
    ids.extend("#define %s %s" % c for c in constants)
    ids.append("/* every kernel as X(family, name, type), in id order: tests expand it, one macro a family */")
    ids.append("#define GPUK__KERNEL_LIST(X) \\")
    ids.extend("    X(%s, %s, %s)%s" % (fam, kern[5:-len(t) - 1], t, " \\" if i + 1 < len(families) else "")
               for i, (fam, kern, t) in enumerate(families))
    ptx.append("static const gpuk__builtin_ptx gpuk__builtin_table[GPUK__KERNEL_COUNT] = {")
    ptx.extend(table)
    ptx.append("};")
    ptx.append("/* faster forms for newer GPUs (the last field 1: for that compute capability only); the list ends at kernel -1 */")
    ptx.append("static const gpuk__builtin_variant gpuk__builtin_variant_table[] = {")
    ptx.extend(vtable)
    ptx.append("    { -1, { 0, 0, 0, 0, 0, 0 } }\n};")
    return {"kernels": "\n".join(decl), "kernel_ids": "\n".join(ids),
            "wrappers": "\n\n".join(defs), "ptx": "\n".join(ptx)}


def join_sources():
    """The hand-written parts of gpuk.h joined in order (generated sections still empty)."""
    parts = []
    for path in SOURCES:
        if not os.path.exists(path):
            fail("missing " + path)
        with open(path) as f:
            parts.append(f.read())
    return "\n".join(parts)


def replace_sections(header, new):
    out = header
    for name, body in new.items():
        begin = "/* GPUK_GENERATED_BEGIN(%s) */" % name
        end = "/* GPUK_GENERATED_END(%s) */" % name
        if out.count(begin) != 1 or out.count(end) != 1:
            fail("gpuk.h needs exactly one %s and one %s" % (begin, end))
        a, b = out.index(begin), out.index(end)
        if b < a:
            fail("gpuk.h: %s comes before %s" % (end, begin))
        inner = out[a + len(begin):b]
        if "GPUK_GENERATED_BEGIN" in inner:
            fail("gpuk.h: nested GPUK_GENERATED markers in %s" % name)
        out = out[:a + len(begin)] + "\n" + body + "\n" + out[b:]
    return out


# ---------------------------------------------------------------------------------------------
# --embed: any CUDA C file as one PTX module in a C header (tests/gpu_test_kernels.h), made the
# way the built-ins are: the same nvcc call, compaction, lowering and ptxas checks.

def module_body(text):
    """(nvcc's whole PTX without its .version/.target/.address_size lines, the same compacted
    and without the pragmas gpuk drops): one module keeping every entry, where the built-ins
    are split per entry; the first is what check_same_code compares against."""
    keep = [l for l in text.replace("\r\n", "\n").split("\n")
            if not l.strip().startswith((".version", ".target", ".address_size"))]
    return "\n".join(keep), compact(DROPPED_PRAGMAS.sub("", "\n".join(keep)))


def embed(args, ptxas):
    """Write (or with --check, compare) args.embed's OUT.h: SRC.cu's PTX as the NUL-terminated
    `static const char NAME[]`, one string literal a line. The string is what gpuk_module_load
    takes as it is; its literals join into one, so a compiler warns past C99's 4095 chars with
    -Wpedantic (-Woverlength-strings): the tests that include it build without -Wpedantic."""
    (src, out), name = args.embed_paths, args.embed[2]
    if not re.match(r"^[A-Za-z_]\w*$", name):
        fail("--embed: NAME must be a C identifier: " + name)
    rel, rel_out = (os.path.relpath(p, ROOT).replace(os.sep, "/") for p in (src, out))
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    nvcc_ver = nvcc_version(args.nvcc)
    old = open(out).read() if os.path.exists(out) else ""
    stamp = re.search(r"sha256 ([0-9a-f]+), nvcc ([\w.]+)", old)
    if args.check and stamp and stamp.group(2) != nvcc_ver:
        # another nvcc writes other (equally good) PTX: only the source hash can be checked
        if stamp.group(1) != digest:
            fail("stale: %s changed since %s was generated (run tools/gen_ptx.py --embed)" % (rel, rel_out))
        print("up to date (source hash only: nvcc %s here, %s made it): %s" % (nvcc_ver, stamp.group(2), rel_out))
        return
    original, body = module_body(compile_ptx(args.nvcc, src))
    with tempfile.TemporaryDirectory() as tmp:
        version, target = lower(ptxas, name, body, tmp)
    module = with_header(body, version, target)
    lits = ["\"%s\"" % lit for piece in c_string_pieces(module) for lit in piece]
    text = ("/* %s - generated, do not edit: one PTX module (.version %d.%d, .target %s,\n"
            "   driver >= CUDA %s, %d bytes) from %s sha256 %s,\n   nvcc %s, by\n"
            "   tools/gen_ptx.py --embed %s %s %s */\n"
            "static const char %s[] =\n    %s;\n" % (
                os.path.basename(out), version[0], version[1], sm_name(target), PTX_CUDA[version], len(module),
                rel, digest, nvcc_ver, rel, rel_out, name, name, "\n    ".join(lits)))
    summary = "%s from %s: .version %d.%d, .target %s, %d bytes" % (
        rel_out, rel, version[0], version[1], sm_name(target), len(module))
    if not args.no_ptxas_checks:
        compiles, diffs = check_same_code({name: module}, {name: original}, ptxas, args.jobs)
        summary += "; machine code as from nvcc's own PTX for %d of %d archs (sm_75/90/120)" % (
            compiles // 2 - len(diffs), compiles // 2)
        count = check_targets({name: module}, ptxas, old_ptxas(), args.jobs)
        summary += "; ptxas: %d compiles passed" % count
    if args.check:
        if text != old:
            fail("stale (run tools/gen_ptx.py --embed %s %s %s): %s" % (rel, rel_out, name, rel_out))
        print("up to date: " + summary)
    else:
        with open(out, "w", newline="\n") as f:
            f.write(text)
        print("wrote " + summary)


# ---------------------------------------------------------------------------------------------
# --wrap: a user's own CUDA C file as one PTX module in a C header WITH a typed C wrapper per
# extern "C" __global__ kernel (tools/gpuk_embed.py calls this). The PTX is made as the
# built-ins' and --embed's is (compile_ptx, module_body, lower, the ptxas checks); the header
# needs only gpuk.h and builds as C99 and C++11 under -Wpedantic (PTX in pieces under C99's
# 4095-char literal limit, joined once at load).

# Scalar parameter types a wrapper takes as they are, by spelling: (C type, bytes). Pointers to
# them become gpuk_array views. Fixed-width types only where C and CUDA C agree on the size
# (no long: 4 bytes on Windows, 8 elsewhere).
WRAP_TYPES = {}
for _spellings, _c, _size in (
        (["float"], "float", 4), (["double"], "double", 8),
        (["char"], "char", 1), (["signed char"], "signed char", 1),
        (["unsigned char"], "unsigned char", 1),
        (["short", "short int", "signed short", "signed short int"], "short", 2),
        (["unsigned short", "unsigned short int"], "unsigned short", 2),
        (["int", "signed", "signed int"], "int", 4),
        (["unsigned", "unsigned int"], "unsigned int", 4),
        (["long long", "long long int", "signed long long", "signed long long int"], "long long", 8),
        (["unsigned long long", "unsigned long long int"], "unsigned long long", 8),
        (["int8_t"], "int8_t", 1), (["uint8_t"], "uint8_t", 1), (["int16_t"], "int16_t", 2),
        (["uint16_t"], "uint16_t", 2), (["int32_t"], "int32_t", 4), (["uint32_t"], "uint32_t", 4),
        (["int64_t"], "int64_t", 8), (["uint64_t"], "uint64_t", 8),
        (["size_t"], "size_t", 8)):   # 64-bit hosts only, as PTX .address_size 64 is
    for _s in _spellings:
        WRAP_TYPES[_s] = (_c, _size)
# PTX .param types -> bytes, to check what was read from the source against what nvcc emitted
PTX_PARAM_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}
# names a kernel parameter cannot keep in the C wrapper: the wrapper's own parameters, the type
# names it spells, and C's keywords that C++ lacks; such a parameter, or one starting gpuk,
# gets '_' appended (until unique). The wrapper's locals are gpuk__-prefixed and end in a
# letter or digit, so no renamed or kept name can meet them.
WRAP_RESERVED = {"ctx", "kernels", "launch", "restrict", "_Bool", "_Complex", "_Imaginary"} | \
    set(s for s in WRAP_TYPES if re.match(r"^[A-Za-z_]\w*$", s))


def strip_comments(text):
    """The source with comments replaced by spaces (newlines kept, so line numbers stay) and
    string and char literals kept as they are."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_params(text):
    """The parameter list's text split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for c in text:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p.strip() for p in parts]


def wrap_param(kernel, index, text):
    """(kind 'array' or 'scalar', C type, bytes, name) of one kernel parameter, or an error
    string naming the kernel and parameter."""
    where = "kernel %s, parameter %d (%s)" % (kernel, index + 1, " ".join(text.split()))
    if "__grid_constant__" in text:
        return where + ": __grid_constant__ parameters are not supported; pass a pointer"
    if "&" in text:
        return where + ": reference parameters are not supported; pass a pointer or a value"
    if "[" in text or "=" in text or "(" in text:
        return where + ": unsupported parameter form (arrays, defaults, function pointers)"
    if "<" in text or "::" in text:
        return where + ": template or namespaced types are not supported"
    words = re.findall(r"[A-Za-z_]\w*|\*", text)
    words = [w for w in words if w not in ("__restrict__", "__restrict", "restrict", "volatile")]
    stars = words.count("*")
    name = None
    keywords = ("const", "int", "char", "short", "long", "signed", "unsigned", "float", "double")
    if words and words[-1] not in ("*",) + keywords and re.match(r"^[A-Za-z_]\w*$", words[-1]):
        # the last identifier is the name unless dropping it leaves no type (unnamed 'int')
        rest = [w for w in words[:-1] if w not in ("*", "const")]
        if rest and " ".join(rest) in WRAP_TYPES or (rest and stars):
            name, words = words[-1], words[:-1]
        elif rest and " ".join(rest + [words[-1]]) not in WRAP_TYPES:
            name, words = words[-1], words[:-1]
    base = " ".join(w for w in words if w not in ("*", "const"))
    if stars > 1:
        return where + ": pointers to pointers are not supported"
    if base not in WRAP_TYPES:
        return where + ": type '%s' is not supported; use one of: %s%s" % (
            base, ", ".join(sorted(set(c for c, _ in WRAP_TYPES.values()))),
            " (or a pointer to one)" if not stars else "")
    ctype, size = WRAP_TYPES[base]
    name = name or "arg%d" % index
    if stars:
        return ("array", ctype, size, name, "const" in words[:words.index("*")])
    return ("scalar", ctype, size, name, False)


def wrap_names(params):
    """params with each name the C wrapper cannot use as it is (WRAP_RESERVED, or starting
    gpuk) given '_'s until it is free and unlike every other parameter's name."""
    taken, out = set(p[3] for p in params), []
    for kind, ctype, size, name, const in params:
        if name in WRAP_RESERVED or name.startswith("gpuk"):
            taken.discard(name)
            name += "_"
            while name in WRAP_RESERVED or name in taken:
                name += "_"
            taken.add(name)
        out.append((kind, ctype, size, name, const))
    return out


def c_comment(text):
    """text safe inside a /* */ comment: no '*/', no trigraph, no control character."""
    text = "".join(c if " " <= c <= "~" or ord(c) > 127 else "?" for c in text)
    return text.replace("*/", "*\\/").replace("??", "?\\?")


def c_string(text):
    """text as the inside of a C string literal: quotes, backslashes, '?' (trigraphs) and
    control characters escaped."""
    out = []
    for c in text:
        if c in "\\\"?":
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        else:
            out.extend("\\%03o" % b for b in c.encode("utf-8"))
    return "".join(out)


def parse_kernels(source, rel):
    """[(kernel, signature text, [params])] for the source's __global__ functions, in source
    order; fails naming every one it cannot wrap (not extern "C", a template, a parameter type
    it does not take)."""
    text = strip_comments(source)
    # extern "C" { ... } blocks: their brace spans
    blocks = []
    for m in re.finditer(r'extern\s+"C"\s*\{', text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        blocks.append((m.end(), j))
    kernels, errors, seen = [], [], set()
    for m in re.finditer(r"\b__global__\b", text):
        line = text.count("\n", 0, m.start()) + 1
        # inside a #define (its line or a continuation): the kernels it makes are found in
        # nvcc's PTX and reported there
        ls = text.rfind("\n", 0, m.start()) + 1
        while ls > 1 and text[ls - 2] == "\\":
            ls = text.rfind("\n", 0, ls - 1) + 1
        if text[ls:m.start()].lstrip().startswith("#"):
            continue
        start = max(text.rfind(c, 0, m.start()) for c in ";{}")
        # a '#' line (#include, #define) ends the previous declaration too
        nl = text.rfind("\n#", 0, m.start())
        if nl > start:
            start = text.find("\n", nl + 1)
        prefix = text[start + 1:m.start()]
        attr = r"(?:(?:__launch_bounds__|__cluster_dims__|__maxnreg__)\s*\([^)]*\)\s*)*"
        head = re.match(r"\s*" + attr + r"void\s+" + attr + r"([A-Za-z_]\w*)\s*\(", text[m.end():])
        if not head:
            if "template" in prefix or ">" in prefix:
                errors.append("%s:%d: a template kernel cannot be wrapped (its PTX name is mangled "
                              "and it has no one signature): call it from an extern \"C\" __global__ "
                              "kernel with fixed types" % (rel, line))
            else:
                errors.append("%s:%d: cannot read this kernel's declaration (want extern \"C\" "
                              "__global__ void name(parameters))" % (rel, line))
            continue
        name = head.group(1)
        open_at = m.end() + head.end() - 1
        depth, j = 0, open_at
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        params_text = text[open_at + 1:j - 1]
        after = text[j:].lstrip()
        if re.search(r"\btemplate\b", prefix):
            errors.append("%s:%d: kernel %s is a template: its PTX name is mangled and it has no one "
                          "signature; call it from an extern \"C\" __global__ kernel with fixed "
                          "types" % (rel, line, name))
            continue
        in_block = any(a <= m.start() < b for a, b in blocks)
        if not in_block and not re.search(r'\bextern\s+"C"', prefix):
            errors.append("%s:%d: kernel %s is not extern \"C\": its PTX name is C++-mangled; "
                          "declare it extern \"C\" __global__ void %s(...)" % (rel, line, name, name))
            continue
        if after.startswith(";"):
            continue  # a declaration; the definition is wrapped
        if name in seen:
            errors.append("%s:%d: kernel %s is defined twice" % (rel, line, name))
            continue
        seen.add(name)
        ptext = params_text.strip()
        plist = [] if ptext in ("", "void") else split_params(ptext)
        params = [wrap_param(name, i, p) for i, p in enumerate(plist)]
        bad = [p for p in params if isinstance(p, str)]
        if bad:
            errors.extend("%s:%d: %s" % (rel, line, b) for b in bad)
            continue
        names = [p[3] for p in params]
        if len(set(names)) != len(names):
            errors.append("%s:%d: kernel %s: two parameters share a name" % (rel, line, name))
            continue
        params = wrap_names(params)
        kernels.append((name, "void %s(%s)" % (name, " ".join(ptext.split())), params))
    if errors:
        fail("cannot wrap %s:\n  " % rel + "\n  ".join(errors))
    if not kernels:
        fail("%s has no extern \"C\" __global__ kernel to wrap" % rel)
    return kernels


def ptx_entry_params(ptx):
    """{entry: [bytes of each .param]} from PTX text; None for a parameter it cannot size."""
    out = {}
    for m in re.finditer(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)", ptx):
        sizes = []
        for p in split_params(m.group(2)):
            t = re.match(r"\.param\s+\.[a-z](\d+)\s+\S+$", p.strip())
            sizes.append(PTX_PARAM_BYTES.get(t.group(1)) if t else None)
        out[m.group(1)] = [] if m.group(2).strip() == "" else sizes
    return out


def wrap_header(name, rel, rel_out, digest, nvcc_ver, module, kernels, shown_args=""):
    """The generated header's text."""
    version, target = header_info(module)
    # from --name, unique in a program (headers of one file name in two folders differ by it)
    guard = "GPUK_EMBED_" + name + "_H"
    label, rel, rel_out, shown_args = c_string(rel), c_comment(rel), c_comment(rel_out), c_comment(shown_args)
    L = ["/* %s - generated, do not edit: the kernels of %s" % (os.path.basename(rel_out), rel),
         "   (sha256 %s) as one PTX module (.version %d.%d, .target %s, driver >= CUDA %s," % (
             digest, version[0], version[1], sm_name(target), PTX_CUDA[version]),
         "   %d bytes) with a typed C wrapper per kernel, made in the header's folder by" % len(module),
         "   nvcc %s, tools/gen_ptx.py v%s: gpuk_embed.py %s -o %s --name %s%s" % (
             nvcc_ver, GENERATOR_VERSION, rel, rel_out, name, shown_args),
         "",
         "   Needs gpuk.h (GPUK_IMPLEMENTATION in one file of the program, as always); all static",
         "   inline, so any number of files may include it. Use:",
         "       %s_kernels k;" % name,
         "       %s_load(ctx, &k);      (JIT-compiles the module, once)" % name,
         "       gpuk_grid launch = gpuk_grid_1d(n, 256);",
         "       %s_%s(ctx, &k, &launch, ...);   (queues it; returns without waiting)" % (name, kernels[0][0]),
         "       %s_unload(ctx, &k);    (or let gpuk_ctx_destroy free it)" % name,
         "   Pointer parameters take a gpuk_array view (gpuk_at(buffer, first), first counted in the",
         "   pointer's element type); the wrapper checks the handle, that first lies inside the",
         "   buffer and the alignment (gpuk_array_resolve), before the driver sees anything. The",
         "   kernel itself must stay inside the buffer: gpuk cannot know how far it reads. An",
         "   empty grid (grid.x 0, as gpuk_grid_1d(0, block) gives) checks them and runs nothing. */",
         "#ifndef " + guard,
         "#define " + guard,
         "#include <stdlib.h>",
         "#include <string.h>",
         "#include \"gpuk.h\"",
         "",
         "#ifndef GPUK_GRID_DEFINED",
         "#define GPUK_GRID_DEFINED",
         "/* How to launch a generated wrapper's kernel: grid and block shapes (y, z: 0 -> 1),",
         "   dynamic shared memory bytes and the stream ({0} = the ctx default stream). */",
         "typedef struct gpuk_grid {",
         "    gpuk_dim3 grid, block;",
         "    uint32_t shared_bytes;",
         "    gpuk_stream stream;",
         "} gpuk_grid;",
         "/* A 1-D launch of at least threads threads in blocks of block, on the default stream. */",
         "static inline gpuk_grid gpuk_grid_1d(size_t threads, uint32_t block) {",
         "    gpuk_grid g;",
         "    memset(&g, 0, sizeof g);",
         "    g.block.x = block;",
         "    g.grid.x = block ? (uint32_t)((threads + block - 1) / block) : 0u;",
         "    return g;",
         "}",
         "#endif",
         "",
         "#ifdef __cplusplus",
         "extern \"C\" {",
         "#endif",
         "",
         "/* the PTX in pieces under C99's 4095-char string-literal limit, joined at load */",
         "static const char* const %s_ptx[] = {" % name]
    pieces = c_string_pieces(module)
    for piece in pieces:
        L.append("    " + "\n    ".join("\"%s\"" % lit for lit in piece) + ",")
    L += ["    0", "};", "",
          "/* The loaded module and a handle per kernel; all zero when not loaded. */",
          "typedef struct %s_kernels {" % name, "    gpuk_module module;"]
    L += ["    gpuk_kernel %s;" % k for k, _, _ in kernels]
    L += ["} %s_kernels;" % name, "",
          "/* JIT-loads the module on ctx and gets each kernel; on failure out is all zero and",
          "   nothing stays loaded. PTX of more than one piece is joined in memory from malloc,",
          "   freed before it returns (not gpuk_desc.allocator: no public call reaches it). */",
          "static inline gpuk_result %s_load(gpuk_ctx* ctx, %s_kernels* out) {" % (name, name),
          "    gpuk_module_desc desc;",
          "    gpuk_result r;"]
    if len(pieces) > 1:
        L += ["    const char* const* piece;", "    size_t bytes = 0, at = 0;", "    char* text;"]
    L += ["    if (!out) return gpuk_module_load(ctx, NULL, NULL); /* gpuk names the NULL */",
          "    memset(out, 0, sizeof *out);",
          "    memset(&desc, 0, sizeof desc);",
          "    desc.kind = GPUK_IMAGE_PTX;",
          "    desc.label = \"%s\";" % label]
    if len(pieces) == 1:
        L += ["    desc.image.ptr = %s_ptx[0]; /* one piece: loaded as it is */" % name,
              "    r = gpuk_module_load(ctx, &desc, &out->module);"]
    else:
        L += ["    for (piece = %s_ptx; *piece; piece++) bytes += strlen(*piece);" % name,
              "    text = (char*)malloc(bytes + 1);",
              "    if (!text) return GPUK_ERR_HOST_ALLOC; /* before any gpuk call: no error text */",
              "    for (piece = %s_ptx; *piece; piece++) {" % name,
              "        size_t n = strlen(*piece);",
              "        memcpy(text + at, *piece, n);",
              "        at += n;",
              "    }",
              "    text[at] = 0;",
              "    desc.image.ptr = text;",
              "    r = gpuk_module_load(ctx, &desc, &out->module);",
              "    free(text);"]
    L += ["    if (r != GPUK_OK) return r;"]
    for k, _, _ in kernels:
        L.append("    if ((r = gpuk_kernel_get(ctx, out->module, \"%s\", &out->%s)) != GPUK_OK) goto fail;" % (k, k))
    L += ["    return GPUK_OK;",
          "fail:",
          "    gpuk_module_unload(ctx, out->module);",
          "    memset(out, 0, sizeof *out);",
          "    return r;",
          "}", "",
          "/* Unloads the module (its kernels go with it) and zeroes k. */",
          "static inline gpuk_result %s_unload(gpuk_ctx* ctx, %s_kernels* k) {" % (name, name),
          "    gpuk_result r;",
          "    gpuk_module m;",
          "    m.id = k ? k->module.id : 0u;",
          "    r = gpuk_module_unload(ctx, m);",
          "    if (r == GPUK_OK && k) memset(k, 0, sizeof *k);",
          "    return r;",
          "}"]
    for k, sig, params in kernels:
        cparams = ["gpuk_ctx* ctx", "const %s_kernels* kernels" % name, "const gpuk_grid* launch"]
        for kind, ctype, size, pname, const in params:
            cparams.append(("gpuk_array %s" % pname) if kind == "array" else "%s %s" % (ctype, pname))
        L += ["", "/* __global__ %s */" % c_comment(sig)]
        proto = "static inline gpuk_result %s_%s(" % (name, k)
        line, lines = proto, []
        for i, p in enumerate(cparams):
            piece = p + (", " if i + 1 < len(cparams) else ") {")
            if len(line) + len(piece.rstrip()) > 100:
                lines.append(line.rstrip())
                line = " " * len(proto)
            line += piece
        lines.append(line)
        L += lines
        # the locals are gpuk__-prefixed: no parameter name can meet them (wrap_names)
        n = len(params)
        L += ["    gpuk_launch_desc gpuk__desc;", "    gpuk_kernel gpuk__kernel;"]
        if n:
            L += ["    void* gpuk__args[%d];" % n, "    size_t gpuk__sizes[%d];" % n]
        arrays = [i for i, p in enumerate(params) if p[0] == "array"]
        if arrays:
            L.append("    gpuk_devptr %s;" % ", ".join("gpuk__p%d = 0" % i for i in arrays))
            L.append("    size_t gpuk__elems = 0;")
            L.append("    gpuk_result gpuk__r;")
        for i, (kind, ctype, size, pname, const) in enumerate(params):
            if kind == "array":
                # the handle, first and alignment, with the wrapper and parameter in the error
                L.append("    if ((gpuk__r = gpuk_array_resolve(ctx, %s, sizeof(%s), \"%s_%s: %s\"," % (
                    pname, ctype, name, k, pname))
                L.append("                                      &gpuk__p%d, &gpuk__elems)) != GPUK_OK)" % i)
                L.append("        return gpuk__r;")
        L += ["    gpuk__kernel.id = kernels ? kernels->%s.id : 0u;" % k,
              "    if (!launch) return gpuk_launch(ctx, gpuk__kernel, NULL); /* gpuk names the NULL */",
              "    /* an empty grid (gpuk_grid_1d(0, block)): the views are checked, nothing runs */",
              "    if (!launch->grid.x) return GPUK_OK;",
              "    gpuk__desc = gpuk_launch_desc_defaults(NULL);",
              "    gpuk__desc.grid = launch->grid;",
              "    gpuk__desc.block = launch->block;",
              "    gpuk__desc.shared_bytes = launch->shared_bytes;",
              "    gpuk__desc.stream = launch->stream;"]
        for i, (kind, ctype, size, pname, const) in enumerate(params):
            arg = "gpuk__p%d" % i if kind == "array" else pname
            L += ["    gpuk__args[%d] = &%s;" % (i, arg), "    gpuk__sizes[%d] = sizeof %s;" % (i, arg)]
        if n:
            L += ["    gpuk__desc.args = gpuk__args;", "    gpuk__desc.arg_sizes = gpuk__sizes;",
                  "    gpuk__desc.num_args = %d;" % n]
        L += ["    return gpuk_launch(ctx, gpuk__kernel, &gpuk__desc);", "}"]
    L += ["", "#ifdef __cplusplus", "}", "#endif", "#endif /* %s */" % guard, ""]
    return "\n".join(L)


def seen_from(path, folder):
    """path relative to folder ('/' separated), or absolute where the two share only the root
    folder (no climb of ../ to the root)."""
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    if os.path.commonpath([path, folder]) == os.path.abspath(os.sep):
        return path.replace(os.sep, "/")
    return os.path.relpath(path, folder).replace(os.sep, "/")


def wrap(args, ptxas):
    """Write (or with --check, compare) the header of args.wrap's kernels: see wrap_header."""
    src, out = args.wrap_paths
    name = args.name or re.sub(r"\W", "_", os.path.splitext(os.path.basename(out))[0])
    if not re.match(r"^[A-Za-z_]\w*$", name):
        fail("--name must be a C identifier: " + name)
    # paths as seen from the header's folder: the text is the same whatever the working folder
    rel = seen_from(src, os.path.dirname(out))
    rel_out = os.path.basename(out)
    given = args.wrap_given
    if not os.path.exists(src):
        fail("no such file: " + given)
    with open(src, "rb") as f:
        raw = f.read()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    kernels = parse_kernels(raw.decode("utf-8", "replace"), given)
    if not os.path.exists(args.nvcc) or not os.path.exists(ptxas):
        fail("needs nvcc and ptxas (CUDA toolkit 13); looked at %s (--nvcc PATH)" % args.nvcc)
    nvcc_ver = nvcc_version(args.nvcc)
    old = open(out).read() if os.path.exists(out) else ""
    old_hash = re.search(r"^   \(sha256 ([0-9a-f]+)\) as one PTX module", old, re.M)
    old_nvcc = re.search(r"^   nvcc ([\w.]+), tools/gen_ptx\.py", old, re.M)
    if args.check and old_hash and old_nvcc and old_nvcc.group(1) != nvcc_ver:
        # another nvcc writes other (equally good) PTX: only the source hash can be checked
        if old_hash.group(1) != digest:
            fail("stale: %s changed since %s was generated" % (given, args.output))
        print("up to date (source hash only: nvcc %s here, %s made it): %s" % (
            nvcc_ver, old_nvcc.group(1), rel_out))
        return
    original, body = module_body(compile_ptx(args.nvcc, src, args.nvcc_args))
    entries = ptx_entry_params(body)
    for k, _, params in kernels:
        if k not in entries:
            fail("%s: kernel %s is not in nvcc's PTX (inside #if 0?)" % (given, k))
        want = [8 if p[0] == "array" else p[2] for p in params]
        if entries[k] != want:
            fail("%s: kernel %s: parameters read from the source (%s bytes) differ from nvcc's PTX "
                 "(%s bytes): a macro or typedef in the signature?" % (
                     given, k, "/".join(map(str, want)), "/".join(map(str, entries[k]))))
    extra = sorted(set(entries) - set(k for k, _, _ in kernels))
    if extra:
        fail("%s: nvcc's PTX has kernels the source does not show as extern \"C\" __global__ "
             "(made by a macro?): %s" % (given, ", ".join(extra)))
    with tempfile.TemporaryDirectory() as tmp:
        version, target = lower(ptxas, name, body, tmp)
    module = with_header(body, version, target)
    text = wrap_header(name, rel, rel_out, digest, nvcc_ver, module, kernels, args.shown_args)
    summary = "%s from %s: %d kernel(s), .version %d.%d, .target %s, %d bytes" % (
        rel_out, rel, len(kernels), version[0], version[1], sm_name(target), len(module))
    if not args.no_ptxas_checks:
        old_exe = os.path.join(CACHE, "cuda-11.8", "usr", "bin", "ptxas")
        if os.path.exists(old_exe):
            count = check_targets({name: module}, ptxas, old_exe, args.jobs)
            summary += "; ptxas: %d compiles (sm_%s with CUDA 13, sm_%s with CUDA 11.8) passed" % (
                count, "/".join(map(str, NEW_PTXAS_ARCHS)), "/".join(map(str, OLD_PTXAS_ARCHS)))
        else:
            # the CUDA 11.8 ptxas (sm_53/62/72) is fetched by the built-ins' checks only
            count = check_targets({name: module}, ptxas, None, args.jobs)
            summary += "; ptxas: %d compiles (sm_%s with CUDA 13) passed" % (
                count, "/".join(map(str, NEW_PTXAS_ARCHS)))
    if args.check:
        if text != old:
            fail("stale (run tools/gpuk_embed.py %s -o %s --name %s%s in its folder): %s" % (
                rel, rel_out, name, args.shown_args, rel_out))
        print("up to date: " + summary)
    else:
        with open(out, "w", newline="\n") as f:
            f.write(text)
        print("wrote " + summary)


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
        global PROG
        PROG = "gpuk_embed"
        if not args.output:
            fail("--wrap needs -o OUT.h")
        args.wrap_paths = [os.path.abspath(p) for p in (args.wrap, args.output)]
        args.wrap_given = args.wrap  # errors name the source as the command line gave it
        # -I folders as seen from the header's folder in the header's text, absolute for nvcc
        here = os.path.dirname(args.wrap_paths[1])
        args.nvcc_args = ["-I" + os.path.abspath(d) for d in args.include] + ["-D" + d for d in args.define]
        args.shown_args = "".join(" -I %s" % seen_from(d, here) for d in args.include) + \
            "".join(" -D %s" % d for d in args.define)
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
    source_hash = hashlib.sha256(source).hexdigest()
    kernels, variants, families = [], [], []
    wraps = family_wraps(source.decode())
    for fam, inst in kernel_list(source.decode()):
        made = wrappers_for(fam, inst, wraps)
        kernels.extend(made)
        families.extend((fam, k[0], inst["t"]) for k in made if k[4] == k[0])
        variants.extend(variants_for(fam, inst, wraps))
    constants = shared_constants(source.decode())
    names = [k[0] for k in kernels if k[4] == k[0]] + [v[0] for v in variants]
    if len(set(names)) != len(names):
        fail("duplicate kernel names")
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
            fail("stale: gpuk_kernels.cuh changed since ptx/ was generated (run tools/gen_ptx.py)")
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

    new_header = replace_sections(joined, sections(kernels, variants, modules, source_hash, nvcc_ver,
                                                   constants, families))
    stale, first_diffs = [], []
    if new_header != header:
        stale.append(HEADER)
    for n in names:
        path = os.path.join(PTX_DIR, n + ".ptx")
        old = open(path).read() if os.path.exists(path) else None
        if old != modules[n]:
            stale.append(path)
            if old is not None and len(first_diffs) < 3:
                first_diffs.append(first_difference(path, old, modules[n]))
    extra = sorted(set(f[:-4] for f in os.listdir(PTX_DIR) if f.endswith(".ptx")) - set(names)) \
        if os.path.isdir(PTX_DIR) else []
    stale += [os.path.join(PTX_DIR, e + ".ptx") + " (no such kernel)" for e in extra]
    # docs/kernels.md from the same '// wrap' lines: written, or checked, with gpuk.h
    sys.dont_write_bytecode = True  # no tools/__pycache__ left in the tree
    import gen_docs
    stale += gen_docs.sync(source.decode(), write=not args.check)

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
        with open(HEADER, "w", newline="\n") as f:
            f.write(new_header)

    summary = "%d kernels + %d variants, %d bytes of PTX; .version floors %s" % (
        len(kernels), len(variants), sum(len(m) for m in modules.values()),
        ", ".join("%d.%d x%d" % (v[0], v[1], c) for v, c in sorted(
            {v: sum(1 for n in names if floors[n][0] == v) for v in set(f[0] for f in floors.values())}.items())))
    if args.from_ptx:
        args.no_ptxas_checks = True
    if not args.no_ptxas_checks and originals:
        # A lower .version or .target can change what ptxas emits (fence and atomic forms,
        # scheduling); where it does, tests/gpu_lowered.c compares the outputs on a GPU.
        compiles, diffs = check_same_code(modules, originals, ptxas, args.jobs)
        kernels_differ = sorted(set(d[0] for d in diffs))
        summary += "; machine code as from nvcc's own PTX for %d of %d kernel/arch pairs (sm_75/90/120), " \
                   "different for %d kernels" % (compiles // 2 - len(diffs), compiles // 2, len(kernels_differ))
        if args.verbose and diffs:
            print("different machine code: " + ", ".join("%s (%s)" % d for d in diffs))
    if not args.no_ptxas_checks:
        count = check_targets(modules, ptxas, old_ptxas(), args.jobs)
        specific = sorted(set(sm_name(f[1]) for f in floors.values() if f[1][1]))
        summary += "; ptxas: %d compiles (sm_%s with CUDA 13, sm_%s with CUDA 11.8%s) passed" % (
            count, "/".join(map(str, NEW_PTXAS_ARCHS)), "/".join(map(str, OLD_PTXAS_ARCHS)),
            "; the %s variants for %s only, with CUDA 13" % ("/".join(specific), "/".join(specific))
            if specific else "")
    print(("up to date: " if args.check else "wrote %s and %s/: " % (HEADER, PTX_DIR)) + summary)


if __name__ == "__main__":
    main()
