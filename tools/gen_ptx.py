#!/usr/bin/env python3
"""gen_ptx.py - build gpuk.h: gpuk_kernels.cuh -> ptx/*.ptx, then src/*.h + ptx/ -> gpuk.h.

For maintainers (users never run it). Python 3 standard library + the CUDA toolkit.

  tools/gen_ptx.py             regenerate ptx/ (nvcc) and gpuk.h
  tools/gen_ptx.py --from-ptx  rebuild gpuk.h from src/ and the committed ptx/ (no nvcc: after
                               editing src/, this is all that is needed)
  tools/gen_ptx.py --check     fail when gpuk.h or ptx/ is stale, then run the ptxas checks
  tools/gen_ptx.py --no-ptxas-checks ...   skip the ptxas target checks
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
# The hand-written parts of gpuk.h, in the order they are joined.
SOURCES = ["src/gpuk_api.h", "src/gpuk_core.h", "src/gpuk_builtin.h", "src/gpuk_end.h"]
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
                      72: (6, 1), 75: (6, 3)}
VERSIONS = sorted(PTX_CUDA)

C_TYPES = {"f32": ("float", 4), "f64": ("double", 8), "i32": ("int32_t", 4),
           "u32": ("uint32_t", 4), "u8": ("uint8_t", 1)}


def fail(msg):
    sys.stderr.write("gen_ptx: " + msg + "\n")
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
    if re.match(r"^.*_SM\d+$", fam):
        return []  # a variant family: see variants_for
    if fam not in wraps:
        fail("family GPUK_%s has no '// wrap' declaration" % fam)
    T, size = C_TYPES[args["t"]]
    values = dict(args, T=T, size=str(size))
    res = []
    for decl in wraps[fam]:
        m = re.match(r"^(gpuk_[\w{}]+)\((.*?)\) = (\w+)\((.*)\) \| (.*)$", decl)
        if not m:
            fail("cannot read wrap declaration: " + decl)
        kern, params, launcher, rest, text = (expand(g, values) for g in m.groups())
        body = "return %s(\"%s\", GPUK__K_%s, ctx, stream, %s);" % (launcher, kern, kern[5:].upper(), rest)
        res.append((kern, text, params, body))
    return res


def variants_for(fam, args, wraps):
    """[(variant entry, kernel it stands in for)]: faster forms for newer GPUs, named
    <kernel>__smNN, chosen at run time where the device has them; no wrappers of their own."""
    m = re.match(r"^(.*)_SM(\d+)$", fam)
    if not m:
        return []
    bases = [k[0] for k in wrappers_for(m.group(1), args, wraps)]
    return [(b + "__sm" + m.group(2), b) for b in bases]


# ---------------------------------------------------------------------------------------------
# PTX: compile, split per entry, lower, check.

def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def nvcc_version(nvcc):
    out = run([nvcc, "--version"]).stdout
    m = re.search(r"release (\d+\.\d+), V([\d.]+)", out)
    return m.group(2) if m else "unknown"


def compile_ptx(nvcc, source_path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "all.ptx")
        r = run([nvcc, "-ptx", "-arch=" + NVCC_ARCH, "-std=c++17", "-x", "cu", "-o", out, source_path])
        if r.returncode:
            fail("nvcc failed:\n" + r.stdout)
        with open(out) as f:
            return f.read()


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
    return ".version %d.%d\n.target sm_%d\n.address_size 64\n%s" % (version[0], version[1], target, body)


def ptxas_run(ptxas, arch, text, tmp, tag):
    path = os.path.join(tmp, tag + ".ptx")
    with open(path, "w") as f:
        f.write(text)
    r = run([ptxas, "-arch=sm_%d" % arch, "-o", os.devnull, path])
    return r.returncode == 0, r.stdout


def lower(ptxas, name, body, tmp):
    """(version, target) lowest that ptxas 13 accepts for body: target first, then version."""
    for target in BASELINE_TARGETS:
        version = TARGET_MIN_VERSION[target]
        while True:
            ok, log = ptxas_run(ptxas, 75, with_header(body, version, target), tmp, name)
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
    fail("%s: no baseline target up to sm_75 accepts it" % name)


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
    .target sm_75 header and every line it wrote) for sm_75, sm_90 and sm_120; returns
    (compiles, [(kernel, arch) that differ])."""
    header = ".version 9.0\n.target sm_75\n.address_size 64\n"
    tasks = [(n, a) for n in modules if n in originals for a in (75, 90, 120)
             if a >= header_info(modules[n])[1]]
    with tempfile.TemporaryDirectory() as tmp:
        def one(task):
            n, a = task
            code = []
            for tag, text in (("low", modules[n]), ("orig", header + originals[n])):
                src, out = os.path.join(tmp, "%s_%d_%s.ptx" % (n, a, tag)), os.path.join(tmp, "%s_%d_%s.cubin" % (n, a, tag))
                with open(src, "w") as f:
                    f.write(text)
                r = run([ptxas, "-arch=sm_%d" % a, "-o", out, src])
                if r.returncode:
                    fail("ptxas failed on %s for sm_%d:\n%s" % (src, a, r.stdout))
                code.append(code_sections(out))
            return None if code[0] == code[1] else (n, a)
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            diffs = [d for d in pool.map(one, tasks) if d]
    return len(tasks) * 2, diffs


def check_targets(modules, new_ptxas, old, jobs):
    """ptxas every module for every real target; returns the number of compiles."""
    target = {n: header_info(modules[n])[1] for n in modules}
    tasks = [(new_ptxas, a, n) for n in modules for a in NEW_PTXAS_ARCHS if a >= target[n]]
    tasks += [(old, a, n) for n in modules for a in OLD_PTXAS_ARCHS if a >= target[n]]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        def one(task):
            exe, arch, name = task
            ok, log = ptxas_run(exe, arch, modules[name], tmp, "%s_%d_%d" % (name, arch, exe == old))
            return None if ok else "%s for sm_%d (%s):\n%s" % (name, arch, exe, log)
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
    m = re.search(r"^\.version (\d+)\.(\d+)\n\.target sm_(\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))), int(m.group(3))


def ptx_blob(name, mod):
    """The C text of one module: an annotation, then the PTX in string-literal pieces."""
    version, target = header_info(mod)
    digest = hashlib.sha256(mod.encode()).hexdigest()
    out = ["/* %s: ptx/%s.ptx, .version %d.%d, .target sm_%d, driver >= CUDA %s, %d bytes, sha256 %s */"
           % (name, name, version[0], version[1], target, PTX_CUDA[version], len(mod), digest[:16]),
           "static const char* const gpuk__ptx_%s[] = {" % name[5:]]
    for piece in c_string_pieces(mod):
        out.append("    " + "\n    ".join("\"%s\"" % lit for lit in piece) + ",")
    out.append("    0\n};")
    entry = "{ \"%s\", gpuk__ptx_%s, %d, %d, %d }" % (name, name[5:], len(mod), version[0] * 10 + version[1], target)
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
    for kern, text, params, body in kernels:
        proto = "gpuk_result %s(gpuk_ctx* ctx, gpuk_stream stream, %s)" % (kern, params)
        decl.append("GPUK_API " + proto + "; " + doc(text))
        ids.append("    GPUK__K_%s," % kern[5:].upper())
        defs.append("GPUK__IMPL " + proto + " {\n    " + body + "\n}")
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
    ptx.append("/* faster forms for newer GPUs; the list ends at kernel -1 */")
    ptx.append("static const gpuk__builtin_variant gpuk__builtin_variant_table[] = {")
    ptx.extend(vtable)
    ptx.append("    { -1, { 0, 0, 0, 0, 0 } }\n};")
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
    text = ("/* %s - generated, do not edit: one PTX module (.version %d.%d, .target sm_%d,\n"
            "   driver >= CUDA %s, %d bytes) from %s sha256 %s,\n   nvcc %s, by\n"
            "   tools/gen_ptx.py --embed %s %s %s */\n"
            "static const char %s[] =\n    %s;\n" % (
                os.path.basename(out), version[0], version[1], target, PTX_CUDA[version], len(module),
                rel, digest, nvcc_ver, rel, rel_out, name, name, "\n    ".join(lits)))
    summary = "%s from %s: .version %d.%d, .target sm_%d, %d bytes" % (
        rel_out, rel, version[0], version[1], target, len(module))
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
    args = ap.parse_args()
    if args.embed:  # its paths are the caller's, from before the chdir
        args.embed_paths = [os.path.abspath(p) for p in args.embed[:2]]
    os.chdir(ROOT)
    ptxas = os.path.join(os.path.dirname(args.nvcc), "ptxas")
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
        families.extend((fam, k[0], inst["t"]) for k in made)
        variants.extend(variants_for(fam, inst, wraps))
    constants = shared_constants(source.decode())
    names = [k[0] for k in kernels] + [v[0] for v in variants]
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
        split, originals = split_ptx(compile_ptx(args.nvcc, SOURCE))
        missing = sorted(set(names) ^ set(split))
        if missing:
            fail("kernels in the lists and entries in the PTX differ: " + ", ".join(missing))
        with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            floors = dict(zip(names, pool.map(lambda n: lower(ptxas, n, split[n], tmp), names)))
        for n in names:
            version, target = floors[n]
            modules[n] = with_header(split[n], version, target)
        baseline_high = [n for n in names if "__sm" not in n and floors[n][1] > 52]
        if baseline_high:
            fail("baseline kernels must run on sm_52; these need more: " + ", ".join(baseline_high))

    new_header = replace_sections(joined, sections(kernels, variants, modules, source_hash, nvcc_ver,
                                                   constants, families))
    stale = []
    if new_header != header:
        stale.append(HEADER)
    for n in names:
        path = os.path.join(PTX_DIR, n + ".ptx")
        old = open(path).read() if os.path.exists(path) else None
        if old != modules[n]:
            stale.append(path)
    extra = sorted(set(f[:-4] for f in os.listdir(PTX_DIR) if f.endswith(".ptx")) - set(names)) \
        if os.path.isdir(PTX_DIR) else []
    stale += [os.path.join(PTX_DIR, e + ".ptx") + " (no such kernel)" for e in extra]

    if args.check:
        if stale:
            fail("stale (run tools/gen_ptx.py): " + ", ".join(stale[:10]))
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
            print("different machine code: " + ", ".join("%s (sm_%d)" % d for d in diffs))
    if not args.no_ptxas_checks:
        count = check_targets(modules, ptxas, old_ptxas(), args.jobs)
        summary += "; ptxas: %d compiles (sm_%s with CUDA 13, sm_%s with CUDA 11.8) passed" % (
            count, "/".join(map(str, NEW_PTXAS_ARCHS)), "/".join(map(str, OLD_PTXAS_ARCHS)))
    print(("up to date: " if args.check else "wrote %s and %s/: " % (HEADER, PTX_DIR)) + summary)


if __name__ == "__main__":
    main()
