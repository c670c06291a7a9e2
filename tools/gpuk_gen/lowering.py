"""gpuk_gen.lowering - each module's .version/.target lowered to the oldest ptxas accepts, so
that old drivers and GPUs load it."""
import os
import re

from .common import (ARCH_SPECIFIC_MIN_VERSION, BASELINE_TARGETS, PTX_CUDA, TARGET_MIN_VERSION,
    VARIANT_TARGETS, fail, own_arch, run, sm_name, variant_target)


def with_header(body, version, target):
    return ".version %d.%d\n.target %s\n.address_size 64\n%s" % (version[0], version[1], sm_name(target), body)


def ptxas_run(ptxas, arch, text, tmp, tag):
    """ptxas text for arch ('sm_90', 'sm_90a'): (passed, its log)."""
    path = os.path.join(tmp, tag + ".ptx")
    with open(path, "w") as f:
        f.write(text)
    # a module without an entry (the linkable library) is compiled relocatable (-c): a
    # whole-program compile would drop every function in it, unchecked
    r = run([ptxas, "-arch=" + arch] + ([] if ".entry" in text else ["-c"]) +
            ["-o", os.devnull, path])
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


def header_info(text):
    """((major, minor), target) of a module's .version/.target lines."""
    m = re.search(r"^\.version (\d+)\.(\d+)\n\.target sm_(\d+)(a?)$", text, re.M)
    return (int(m.group(1)), int(m.group(2))), (int(m.group(3)), m.group(4) == "a")
