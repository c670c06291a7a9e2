"""gpuk_gen.kernels - the kernel list: the families, instantiation lines, '// wrap' declarations
and shared constants read from gpuk_kernels.cuh, turned into wrappers and variants."""
import re

from .common import C_TYPES, FAMILY_SUFFIX, SOURCE, fail, kernel_id


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
    """{family: [declaration text]} from the '// wrap' and '// entry' lines (with their '//      '
    continuation lines) right before each '#define GPUK_<FAMILY>(...)'; an entry's text keeps
    its 'entry ' prefix (see wrappers_for)."""
    wraps, pending, cur = {}, [], None
    for line in source_text.split("\n"):
        s = line.strip()
        if s.startswith("// wrap ") or s.startswith("// entry "):
            if cur:
                pending.append(cur)
            cur = s[len("// wrap "):] if s.startswith("// wrap ") else s[3:]
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
    """[(kernel, doc, params, body, entry)] for one instantiation line. params excludes ctx,
    stream; entry is the kernel the wrapper launches (its own, or another's: launcher@gpuk_x).
    An '// entry gpuk__NAME for gpuk_WRAPPER | doc' line declares a kernel with no wrapper of
    its own, which WRAPPER's launcher may launch instead of its own kernel for some calls
    (gpuk_kernels_load loads the two together): its row has params None and body WRAPPER's
    name."""
    if FAMILY_SUFFIX.match(fam):
        return []  # a variant family: see variants_for
    if fam not in wraps:
        fail("family GPUK_%s has no '// wrap' declaration" % fam)
    T, size = C_TYPES[args["t"]]
    values = dict(args, T=T, size=str(size))
    res = []
    for decl in wraps[fam]:
        if decl.startswith("entry "):
            m = re.match(r"^entry (gpuk__[\w{}]+) for (gpuk_[\w{}]+) \| (.*)$", decl)
            if not m:
                fail("cannot read entry declaration: " + decl)
            kern, owner, text = (expand(g, values) for g in m.groups())
            res.append((kern, text, None, owner, kern))
            continue
        m = re.match(r"^(gpuk_[\w{}]+)\((.*?)\) = (\w+)(?:@(gpuk_[\w{}]+))?\((.*)\) \| (.*)$", decl)
        if not m:
            fail("cannot read wrap declaration: " + decl)
        kern, params, launcher, entry, rest, text = (expand(g or "", values) for g in m.groups())
        # launcher@gpuk_x: this wrapper launches the kernel of wrapper gpuk_x (no entry of its own)
        entry = entry or kern
        body = "return %s(\"%s\", %s, ctx, stream, %s);" % (launcher, kern, kernel_id(entry), rest)
        res.append((kern, text, params, body, entry))
    kerns = [r[0] for r in res if r[2] is not None]
    if any(r[4] not in kerns for r in res if r[2] is not None):
        fail("GPUK_%s: a wrapper launches a kernel its family does not make" % fam)
    if any(r[3] not in kerns for r in res if r[2] is None):
        fail("GPUK_%s: an entry names a wrapper its family does not make" % fam)
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


# The families a program can keep or leave out (GPUK_ONLY_<NAME> / GPUK_NO_<NAME>), each with
# its reference section's title and line and the GPUK_<FAMILY> macros of gpuk_kernels.cuh it
# holds (a variant's macro, GPUK_<FAMILY>_SMNN, goes with its family). A macro named in none
# is a family of its own, under its own name: a new family gets its switch and its section
# before anyone files it here.
FAMILIES = [
    ("GENERATE", "Generate", "fill arrays with constants, sequences or random numbers",
     ["FILL", "IOTA", "LINSPACE", "RANDOM"]),
    ("ELEMENTWISE", "Element-wise",
     "one output element from the same element of each input; may run in place",
     ["BINARY", "DIV", "AXPY", "SCALE", "UNARY", "UNARY_LONG", "COS2SIN2", "SELU", "TO_HALF",
      "TO_F32", "AXPY_HALF"]),
    ("MOVE", "Move", "strided copies and transposes", ["COPY_STRIDED", "TRANSPOSE"]),
    ("REDUCE", "Reduce",
     "deterministic: the same input on the same device gives the same bits every time",
     ["SUM", "MIN", "MAX", "ARGMIN", "ARGMAX", "DOT", "NORM2", "SUM_AXIS", "MIN_AXIS",
      "MAX_AXIS", "ARGMIN_AXIS", "ARGMAX_AXIS", "SUM_HALF", "MIN_HALF", "MAX_HALF", "DOT_HALF"]),
    ("SCAN", "Scan", "prefix sums in a single pass over the input", ["SCAN"]),
    ("SELECT", "Select", "keep the elements that pass a test, in order, with their count in "
     "device memory; one pass over the input",
     ["SELECT_IF", "SELECT_FLAGGED", "COUNT_IF", "PARTITION_IF", "UNIQUE",
      "RUN_LENGTH_ENCODE"]),
    ("HISTOGRAM", "Count", "histograms with 64-bit counts; they overwrite the counts, never add",
     ["HISTOGRAM", "HISTOGRAM_FLOAT"]),
    ("SORT", "Sort",
     "stable radix sorts of keys, alone, with 32-bit values (any 4-byte type, moved as bits) or "
     "with each key's input index. Keys sort by value: integers as numbers; floats as numbers "
     "with -0.0 before +0.0, NaNs with the sign bit set before -inf and other NaNs after +inf "
     "(the order of their bits made unsigned: a positive float's sign bit flipped, a negative "
     "one's every bit). Descending reverses that order and still keeps equal keys in input "
     "order. Only bits [begin_bit, end_bit) of that unsigned form count (end_bit 0: up to the "
     "top; an empty range is refused). The result always lands in the outputs, which may be "
     "their inputs (in place). A sort of more than one tile (6144 4-byte keys alone, 4096 "
     "with values, 3584 8-byte keys alone, 3072 with values) takes a second key (and value) "
     "buffer and status words "
     "from the stream's scratch, "
     "allocated on first use; reserve it with gpuk_kernels_reserve_sort before a graph capture "
     "(a capture that would grow it returns GPUK_ERR_CAPTURING). gpuk_sort_index takes n up to "
     "2^32",
     ["SORT_KEYS", "SORT_PAIRS"]),
    ("STENCIL", "Stencil", "2-D neighbourhoods on gpuk_array2d views", ["STENCIL3X3", "HEAT"]),
    ("GEMM", "Matrix", "GEMM on row-major gpuk_array2d views, BLAS rules", ["GEMM"]),
    # No PTX of its own: gpuk_elementwise_* and gpuk_reduction_* (src/gpuk_custom.h), which
    # compile at run time with NVRTC; a switch like the others, as a program that keeps one
    # family of built-ins rarely wants run-time compilation compiled in with it.
    ("CUSTOM", "Custom", "element-wise and reduction kernels from C expressions, compiled at "
     "run time by NVRTC", []),
]


def family_of(macro):
    """The FAMILIES name of a GPUK_<macro> (its variants' macros included)."""
    m = FAMILY_SUFFIX.match(macro)
    base = m.group(1) if m else macro
    for name, _title, _what, macros in FAMILIES:
        if base in macros:
            return name
    return base

