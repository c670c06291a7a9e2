"""gpuk_gen.user_kernels - users' kernels: --embed (a CUDA C file as one lowered PTX module in a
C header) and --wrap (tools/gpuk_embed.py: that module with a typed C wrapper per kernel)."""
import hashlib
import os
import re
import tempfile

from . import common
from .common import (CACHE, GENERATOR_VERSION, NEW_PTXAS_ARCHS, OLD_PTXAS_ARCHS, PTX_CUDA, ROOT,
    fail, sm_name)
from .nvcc import compile_ptx, module_body, nvcc_version
from .lowering import header_info, lower, with_header
from .ptxas_checks import check_same_code, check_targets, old_ptxas
from .emit import c_comment, c_string, c_string_pieces


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
    original, body = module_body(compile_ptx(args.nvcc, src, ["-I" + ROOT]))
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


def wrap_setup(args):
    """args of a --wrap run (wrap, output, name, include, define) completed with what wrap()
    reads: the paths made absolute (the generator works from the repository's root), the
    source as the command line gave it (for errors), nvcc's -I/-D, and their form shown in the
    header (-I folders as seen from the header's folder)."""
    common.PROG = "gpuk_embed"
    if not args.output:
        fail("--wrap needs -o OUT.h")
    args.wrap_paths = [os.path.abspath(p) for p in (args.wrap, args.output)]
    args.wrap_given = args.wrap
    here = os.path.dirname(args.wrap_paths[1])
    # the repository's root last: #include "gpuk_device.cuh" works from any kernel file, and a
    # folder the command line names comes first
    args.nvcc_args = ["-I" + os.path.abspath(d) for d in args.include] + ["-I" + ROOT] + \
        ["-D" + d for d in args.define]
    args.shown_args = "".join(" -I %s" % seen_from(d, here) for d in args.include) + \
        "".join(" -D %s" % d for d in args.define)
    return args


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
