"""gpuk_gen.emit - C text: the PTX as string pieces, the generated sections of gpuk.h (wrappers,
kernel ids, tables), and escapes for comments and string literals."""
import difflib
import hashlib
import re
import zlib

from .common import GENERATOR_VERSION, PIECE_CHARS, PTX_CUDA, fail, kernel_id, sm_name
from .kernels import FAMILIES, doc, family_of
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


# The 85 characters of the packed form (src/gpuk_inflate.h has the same): printable ASCII less
# the quote, the backslash, the question mark (no trigraph can form) and six others.
B85 = "!#$%&()*+-./0123456789:=@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~"
PACKED_LINE = 97                   # packed characters a source line: with its quotes, 99 columns


DICTIONARY_BYTES = 16384            # the shared dictionary: bench of sizes in the generator's notes


def dictionary(modules):
    """The preset dictionary every module is deflated against: the PTX lines most modules share
    (three or more), most common last (the nearest to the data, the cheapest to refer to), up
    to DICTIONARY_BYTES. 16 KiB of them take a tenth off the deflated size; 32 KiB gain less
    than they cost to store. Deterministic: ties go by the line's bytes."""
    count = {}
    for mod in modules:
        for line in set(mod.encode().split(b"\n")):
            count[line] = count.get(line, 0) + 1
    lines, size = [], 0
    for line, c in sorted(count.items(), key=lambda lc: (-lc[1], lc[0])):
        if c < 3:
            break
        if size + len(line) + 1 <= DICTIONARY_BYTES:
            lines.append(line)
            size += len(line) + 1
    return b"".join(line + b"\n" for line in reversed(lines))


def deflate(data, zdict=b""):
    """data as a raw DEFLATE stream (RFC 1951), zlib's best compression, against the preset
    dictionary zdict (none: b"")."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zdict=zdict) if zdict else \
        zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    return c.compress(data) + c.flush()


def b85(data):
    """data in the packed alphabet: 5 characters a 4 bytes, big-endian, a last group of n bytes
    as its first n + 1 characters (zero-padded, as src/gpuk_inflate.h reads it)."""
    out = []
    for i in range(0, len(data), 4):
        chunk = data[i:i + 4]
        v = int.from_bytes(chunk + b"\0" * (4 - len(chunk)), "big")
        digits = []
        for _ in range(5):
            v, d = divmod(v, 85)
            digits.append(B85[d])
        out.append("".join(reversed(digits))[:len(chunk) + 1])
    return "".join(out)


def without_packed(header):
    """header with the packed PTX and the deflated sizes left out: what another zlib, whose
    (equally valid) deflated bytes differ, leaves the same."""
    header = re.sub(r'^"[!#-~]*",?\n', "", header, flags=re.M)
    return re.sub(r"(GPUK__IF_\w+\(\w+\)|gpuk__ptx_dictionary_), (\d+), \d+,", r"\1, \2,", header)


# A module may be stored as a line script against another of its family (the base, stored
# whole): the many modules one kernel macro makes for several types, or a variant and its
# kernel, share most of their lines, which one deflate window of 32 KiB cannot see across
# modules. The script deflated is about a fifth of the packed PTX smaller in all. Chosen by
# the script's length, not by deflated sizes, so that another zlib chooses the same.
SCRIPT_AT_MOST = 0.7                # of the module's bytes: a longer script, and it stays whole


def line_script(base, text):
    """text as edits of base's lines, a line each, every line ending in a newline: "=N" keeps
    base's next N lines, "-N" drops them, "+N" adds the N lines that follow (src/gpuk_builtin.h,
    gpuk__patch, applies it; a text is its lines joined by newlines)."""
    a, b = base.split("\n"), text.split("\n")
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append("=%d" % (i2 - i1))
            continue
        if i2 > i1:
            out.append("-%d" % (i2 - i1))
        if j2 > j1:
            out.append("+%d" % (j2 - j1))
            out.extend(b[j1:j2])
    return "".join(line + "\n" for line in out)


def patched(base, script):
    """base with script applied (line_script's inverse, to check every script made)."""
    a, out, i, lines, k = base.split("\n"), [], 0, script.split("\n")[:-1], 0
    while k < len(lines):
        op, n = lines[k][0], int(lines[k][1:])
        k += 1
        if op == "=":
            out.extend(a[i:i + n])
        if op in "=-":
            i += n
        else:
            out.extend(lines[k:k + n])
            k += n
    return "\n".join(out)


def bases(order, modules, fam_of):
    """{module: (base module, script)} for the modules stored as scripts; order: the table's
    modules, then the variants (a base is a table module stored whole, of the same family)."""
    chosen, whole = {}, []
    for name, is_kernel in order:
        best = None
        for cand in whole:
            if fam_of[cand] != fam_of[name]:
                continue
            script = line_script(modules[cand], modules[name])
            if len(script) <= SCRIPT_AT_MOST * len(modules[name]) and \
                    (best is None or len(script) < len(best[1])):
                best = (cand, script)
        if best:
            if patched(modules[best[0]], best[1]) != modules[name]:
                fail("the line script of %s against %s does not give it back" % (name, best[0]))
            chosen[name] = best
        elif is_kernel:
            whole.append(name)
    return chosen


def packed_pieces(packed):
    """Deflated bytes in the packed alphabet as the lines of a C array of string-literal
    pieces of PIECE_CHARS (a multiple of 5: each piece decodes alone), each piece's lines
    adjacent literals of PACKED_LINE characters."""
    assert PIECE_CHARS % 5 == 0
    text, out = b85(packed), []
    for p in range(0, len(text), PIECE_CHARS):
        piece = text[p:p + PIECE_CHARS]
        # unindented: four spaces on each of about 6,700 lines would be 27 KB of the header
        out.append("\n".join("\"%s\"" % piece[i:i + PACKED_LINE]
                             for i in range(0, len(piece), PACKED_LINE)) + ",")
    return out


def ptx_blob(name, mod, zdict, family, based=None):
    """The C text of one module (an annotation, then its PTX, or its line script against the
    module based names, deflated against zdict and packed) and its table row, whose PTX is 0
    where its family is left out."""
    version, target = header_info(mod)
    stored = based[1] if based else mod
    packed = deflate(stored.encode(), zdict)
    # (the text is ptx/<name>.ptx, which --check compares byte for byte)
    out = ["/* %s: .version %d.%d, .target %s, driver >= CUDA %s%s, %d bytes%s */"
           % (name, version[0], version[1], sm_name(target), PTX_CUDA[version],
              ", compute capability %d.%d only" % divmod(target[0], 10) if target[1] else "", len(mod),
              ", as a script of %d on %s" % (len(stored), based[0]) if based else ""),
           "static const char* const gpuk__ptx_%s[] = {" % name[5:]]
    out.extend(packed_pieces(packed))
    out.append("    0\n};")
    entry = "{ \"%s\", GPUK__IF_%s(gpuk__ptx_%s), %d, %d, %d, %d, %d, %s, %d }" % (
        name, family, name[5:], len(mod), len(packed), version[0] * 10 + version[1], target[0],
        target[1],
        kernel_id(based[0]) if based else "-1", len(stored) if based else 0)
    return out, entry


def family_switches(kernels, fam_of):
    """The public block that turns the GPUK_ONLY_<F> / GPUK_NO_<F> a program defines into
    GPUK__FAMILY_<F> (kept) for every family, and GPUK__LAUNCHER_<L> for every host launcher
    (src/gpuk_builtin.h's gpuk__<l>) some kept family calls."""
    order = [f[0] for f in FAMILIES]
    without_ptx = set(n for n, _t, _w, macros in FAMILIES if not macros)
    names = sorted(set(fam_of[k[4]] for k in kernels) | without_ptx,
                   key=lambda n: (order.index(n) if n in order else len(order), n))
    what = dict((n, (t, w)) for n, t, w, _m in FAMILIES)
    out = ["/* Families of built-in kernels. Define GPUK_NO_<FAMILY> before including gpuk.h to leave",
           "   that family out (its calls undeclared, its PTX and launcher gone), or one or more",
           "   GPUK_ONLY_<FAMILY> to keep only those:"]
    out += ["     %-12s %s" % (n, what[n][0].lower() + (": " + what[n][1].split(";")[0] if n in what else ""))
            for n in names]
    out[-1] += " */"
    out.append("#if " + " || \\\n    ".join(
        " || ".join("defined(GPUK_ONLY_%s)" % n for n in names[k:k + 3]) for k in range(0, len(names), 3)))
    out += ["#define GPUK__ONLY_SOME 1", "#endif"]
    for n in names:
        out += ["#if !defined(GPUK_NO_%s) && (!defined(GPUK__ONLY_SOME) || defined(GPUK_ONLY_%s))" % (n, n),
                "#define GPUK__FAMILY_%s 1" % n, "#endif"]
    users = {}
    for kern, _text, params, body, entry in kernels:
        if params is None:
            continue  # an entry without a wrapper: its owner's launcher runs it
        launcher = re.match(r"return (gpuk__\w+)\(", body).group(1)
        users.setdefault(launcher, [])
        if fam_of[entry] not in users[launcher]:
            users[launcher].append(fam_of[entry])
    for launcher in sorted(users):
        out += ["#if " + " || ".join("defined(GPUK__FAMILY_%s)" % n for n in users[launcher]),
                "#define GPUK__LAUNCHER_%s 1" % launcher[6:].upper(), "#endif"]
    return out, names


def guarded(order, sep):
    """[(family, text)] in order, joined by sep, each run of one family inside #if/#endif."""
    runs = []
    for fam, text in order:
        if not runs or runs[-1][0] != fam:
            runs.append((fam, []))
        runs[-1][1].append(text)
    return sep.join("#if defined(GPUK__FAMILY_%s)\n%s\n#endif" % (fam, sep.join(texts))
                    for fam, texts in runs)


def sections(kernels, variants, modules, source_hash, nvcc_ver, constants, families):
    """{section name: text between its markers}."""
    stamp = "tools/gen_ptx.py v%s from gpuk_kernels.cuh sha256 %s, nvcc %s, zlib %s -- do not edit" % (
        GENERATOR_VERSION, source_hash[:16], nvcc_ver, zlib.ZLIB_VERSION)
    fam_of = dict((kern, family_of(fam)) for fam, kern, _t in families)
    variant_fam = dict((name, fam_of[base]) for name, base in variants)
    switches, names = family_switches(kernels, fam_of)
    decl = ["/* " + stamp + " */", "#if !defined(GPUK_NO_KERNELS)"] + switches
    ids = ["/* " + stamp + " */", "enum {"]
    zdict = dictionary([modules[k] for k in sorted(modules)])
    packed = deflate(zdict)
    ptx = ["/* " + stamp + " */"]
    for n in names:  # a left-out family's table rows hold no PTX
        ptx += ["#if defined(GPUK__FAMILY_%s)" % n, "#define GPUK__IF_%s(ptx) ptx" % n, "#else",
                "#define GPUK__IF_%s(ptx) 0" % n, "#endif"]
    ptx += ["/* the preset dictionary every module below is deflated against (itself deflated): %d "
            "bytes of the PTX lines most modules share */" % len(zdict),
            "static const char* const gpuk__ptx_dictionary_[] = {"]
    ptx.extend(packed_pieces(packed))
    ptx.append("    0\n};")
    ptx.append("static const gpuk__builtin_ptx gpuk__builtin_dictionary = "
               "{ \"the dictionary\", gpuk__ptx_dictionary_, %d, %d, 0, 0, 0, -1, 0 };"
               % (len(zdict), len(packed)))
    decls, defs, blobs, table, companions = [], [], [], [], []
    module_fam = dict(variant_fam)
    module_fam.update((kern, fam_of[entry]) for kern, _t, _p, _b, entry in kernels if entry == kern)
    order = [(k[0], True) for k in kernels if k[4] == k[0]] + [(name, False) for name, _b in variants]
    based = bases(order, modules, module_fam)
    for kern, text, params, body, entry in kernels:
        fam = fam_of[entry]
        if params is None:  # no wrapper: a companion of the wrapper body names
            companions.append("    { %s, %s }," % (kernel_id(body), kernel_id(kern)))
        else:
            proto = "gpuk_result %s(gpuk_ctx* ctx, gpuk_stream stream, %s)" % (kern, params)
            decls.append((fam, "GPUK_API " + proto + "; " + doc(text)))
            defs.append((fam, "GPUK__IMPL " + proto + " {\n    " + body + "\n}"))
        if entry != kern:
            continue  # launches another wrapper's kernel
        ids.append("    %s," % kernel_id(kern))
        blob, row = ptx_blob(kern, modules[kern], zdict, fam, based.get(kern))
        blobs.append((fam, "\n".join(blob)))
        table.append("    " + row + ",")
    vtable = []
    for name, base in variants:
        blob, row = ptx_blob(name, modules[name], zdict, variant_fam[name], based.get(name))
        blobs.append((variant_fam[name], "\n".join(blob)))
        vtable.append("    { %s, %s }," % (kernel_id(base), row))
    decl.append(guarded(decls, "\n"))
    decl.append("#endif")
    ptx.append(guarded(blobs, "\n"))
    ids.append("    GPUK__KERNEL_COUNT\n};")
    ids.append("/* constants the kernels and their host launchers share */")
    ids.extend("#define %s %s" % c for c in constants)
    ids.append("/* every kernel as X(family, name, type), in id order: tests expand it, one macro a family */")
    ids.append("#define GPUK__KERNEL_LIST(X) \\")
    listed = [f for f in families if not f[1].startswith("gpuk__")]  # entries have no wrapper
    ids.extend("    X(%s, %s, %s)%s" % (fam, kern[5:-len(t) - 1], t, " \\" if i + 1 < len(listed) else "")
               for i, (fam, kern, t) in enumerate(listed))
    ptx.append("static const gpuk__builtin_ptx gpuk__builtin_table[GPUK__KERNEL_COUNT] = {")
    ptx.extend(table)
    ptx.append("};")
    ptx.append("/* faster forms for newer GPUs (the last field 1: for that compute capability only); the list ends at kernel -1 */")
    ptx.append("static const gpuk__builtin_variant gpuk__builtin_variant_table[] = {")
    ptx.extend(vtable)
    ptx.append("    { -1, { 0, 0, 0, 0, 0, 0, 0, -1, 0 } }\n};")
    ptx.append("/* kernels a wrapper's launcher may run instead of its own for some calls: { its own, "
               "the other }; the list ends at -1 */")
    ptx.append("static const int gpuk__builtin_companion[][2] = {")
    ptx.extend(companions)
    ptx.append("    { -1, -1 }\n};")
    return {"kernels": "\n".join(decl), "kernel_ids": "\n".join(ids),
            "wrappers": guarded(defs, "\n\n"),
            "ptx": "\n".join(ptx)}


def device_header_section(text):
    """gpuk_device.cuh's text as string pieces (joined at run time: the whole is longer than
    the 4095 chars C99 allows one literal) for gpuk_module_compile to hand to NVRTC, and a
    hash of it that the compile cache's key holds."""
    if "??" in text or any(not (" " <= c <= "~" or c == "\n") for c in text):
        fail("gpuk_device.cuh: keep it to printable ASCII, no '??' (a trigraph in a C string)")
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    out = ["/* tools/gen_ptx.py v%s from gpuk_device.cuh -- do not edit */" % GENERATOR_VERSION,
           "#define GPUK__DEVICE_HEADER_HASH \"gpuk_device.cuh sha256 %s\"" % digest,
           "static const char* const gpuk__device_header[] = {"]
    for piece in c_string_pieces(text):
        out.extend("    \"%s\"" % lit for lit in piece)
        out[-1] += ","
    out.append("    0\n};")
    return "\n".join(out)


def device_library_section(mod, modules, stamp):
    """The linkable library (gpuk_device_lib.cu's PTX) packed as a built-in module is: deflated
    against the built-ins' dictionary, which is made from the kernels alone (so the library
    changes none of their bytes), with its gpuk__builtin_ptx row; gpuk_module_link unpacks it
    with the built-ins' code."""
    zdict = dictionary([modules[k] for k in sorted(modules)])
    blob, _row = ptx_blob("gpuk_device_lib", mod, zdict, "")
    version, target = header_info(mod)
    return "\n".join(["/* " + stamp + " */"] + blob + [
        "static const gpuk__builtin_ptx gpuk__device_library = { \"gpuk_device_lib\", "
        "gpuk__ptx_device_lib, %d, %d, %d, %d, 0, -1, 0 };"
        % (len(mod), len(deflate(mod.encode(), zdict)), version[0] * 10 + version[1], target[0])])


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
