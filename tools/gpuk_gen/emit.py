"""gpuk_gen.emit - C text: the PTX as string pieces, the generated sections of gpuk.h (wrappers,
kernel ids, tables), and escapes for comments and string literals."""
import hashlib

from .common import GENERATOR_VERSION, PIECE_CHARS, PTX_CUDA, fail, sm_name
from .kernels import doc
from .lowering import header_info


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
