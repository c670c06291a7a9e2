"""gpuk_gen.nvcc - PTX from nvcc: one compile of gpuk_kernels.cuh (or a user's file), split into a
module per entry with the module-scope items that entry uses."""
import concurrent.futures
import os
import re
import sys
import tempfile

from . import common
from .common import NVCC_ARCH, SOURCE, fail, run, variant_target


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
                             "emit another, equally valid PTX from time to time\n" % common.PROG)
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


# ---------------------------------------------------------------------------------------------
# --embed: any CUDA C file as one PTX module in a C header (tests/gpu/gpu_test_kernels.h), made the
# way the built-ins are: the same nvcc call, compaction, lowering and ptxas checks.

def module_body(text):
    """(nvcc's whole PTX without its .version/.target/.address_size lines, the same compacted
    and without the pragmas gpuk drops): one module keeping every entry, where the built-ins
    are split per entry; the first is what check_same_code compares against."""
    keep = [l for l in text.replace("\r\n", "\n").split("\n")
            if not l.strip().startswith((".version", ".target", ".address_size"))]
    return "\n".join(keep), compact(DROPPED_PRAGMAS.sub("", "\n".join(keep)))
