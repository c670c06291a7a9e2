"""gpuk_gen.ptxas_checks - every lowered module compiled by ptxas for real targets (this
toolkit's and CUDA 11.8's), and its machine code compared with nvcc's own PTX's."""
import concurrent.futures
import os
import struct
import tempfile

from .common import (CACHE, NEW_PTXAS_ARCHS, OLD_PTXAS_ARCHS, OLD_PTXAS_DEB, ROOT, fail, own_arch,
    real_archs, run)
from .lowering import header_info, ptxas_run


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
