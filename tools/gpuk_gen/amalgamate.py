"""gpuk_gen.amalgamate - gpuk.h from src/: the hand-written parts joined in order, the
GPUK_GENERATED sections rewritten between their markers."""
import os

from .common import fail


# The hand-written parts of gpuk.h, in the order they are joined: the manual and declarations,
# then the implementation, one concern a file, in dependency order (a call into a later file
# goes through a hook whose declaration names that file).
SOURCES = ["src/gpuk_api.h", "src/gpuk_platform.h", "src/gpuk_driver.h", "src/gpuk_result.h",
           "src/gpuk_loader.h", "src/gpuk_device.h", "src/gpuk_handle.h", "src/gpuk_ctx.h",
           "src/gpuk_staging.h", "src/gpuk_mempool.h", "src/gpuk_memory.h", "src/gpuk_hostmem.h",
           "src/gpuk_stream.h", "src/gpuk_ipc.h",
           "src/gpuk_module.h", "src/gpuk_nvrtc.h", "src/gpuk_link.h",
           "src/gpuk_launch.h", "src/gpuk_graph.h",
           "src/gpuk_inflate.h", "src/gpuk_builtin.h", "src/gpuk_custom.h",
           "src/gpuk_builtin_ptx.h", "src/gpuk_end.h"]


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
