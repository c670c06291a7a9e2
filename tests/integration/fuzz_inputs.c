/* tests/integration/fuzz_inputs.c - a libFuzzer target over what gpuk parses or checks from its
   caller: the PTX header reader (.version/.target), the error-text formatter, the argument checks
   of the built-in kernel wrappers (views, 2-D views, sizes, strides, shapes, bins, offsets) and
   the desc structs of buffer, stream and launch, all on the fake driver. The first byte picks
   which. Run by tests/integration/fuzz.sh for a bounded time: clang
   -fsanitize=fuzzer,address,undefined. */
#define _GNU_SOURCE /* strdup in the fake driver */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/fake_driver.h"
#include <stdint.h>

static gpuk_ctx* ctx;
static gpuk_buffer buf, buf2;
static gpuk_kernel kern;

static const char ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n ret;\n}\n";

static void setup(void) {
    gpuk_desc d;
    gpuk_module m;
    memset(&d, 0, sizeof d);
    d.get_proc = fake_get_proc;
    fake_reset(NULL);
    if (gpuk_init(&d) || gpuk_ctx_create(NULL, &ctx) ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4096 }, &buf) ||
        gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4096 }, &buf2) ||
        gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { ptx, 0 } }, &m) ||
        gpuk_kernel_get(ctx, m, "k", &kern))
        __builtin_trap();
}

static uint64_t take(const uint8_t** p, size_t* n) { /* next 8 bytes, little endian, 0 past the end */
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < 8 && *n; i++, (*p)++, (*n)--) v |= (uint64_t)**p << (8 * i);
    return v;
}

/* gpuk's own codes and the driver's 1..999; anything else is a bug */
static void expect_result(gpuk_result r) {
    if (r < GPUK_ERR_OUT_OF_BOUNDS || r > 999) __builtin_trap();
    if (r != GPUK_OK && !gpuk_last_error()[0]) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const uint8_t mode = size ? data[0] % 4 : 0;
    const uint8_t* p = size ? data + 1 : data;
    size_t n = size ? size - 1 : 0;
    if (!ctx) setup();
    if (mode == 0) { /* PTX header: only within n bytes, sane numbers out */
        int major, minor, sm, arch;
        char* copy = (char*)malloc(n ? n : 1); /* exactly n bytes: ASan catches a read past them */
        memcpy(copy, p, n);
        if (gpuk__ptx_header(copy, n, &major, &minor, &sm, &arch)) {
            if (major < 0 || minor < 0 || sm < 0 || major > 99 || minor > 9 || sm >= 100000 || (arch != 0 && arch != 1))
                __builtin_trap();
            (void)gpuk__ptx_needs_cuda(major, minor);
        }
        free(copy);
    } else if (mode == 1) { /* formatter: any text, any capacity, always terminated in bounds */
        char out[64], text[256];
        size_t cap = n ? (size_t)(p[0] % 64) + 1 : 1, len = n > 1 ? (n - 1 < 255 ? n - 1 : 255) : 0;
        memcpy(text, p + (n ? 1 : 0), len);
        text[len] = 0;
        gpuk__fmt(out, cap, 0, "%s|%d|%zu|%llx|%u", text, (int)len, len, (unsigned long long)len, (unsigned)cap);
        if (strlen(out) >= cap) __builtin_trap();
    } else if (mode == 2) { /* built-in wrappers: any views, sizes and shapes */
        gpuk_array a = gpuk_at(buf, (size_t)take(&p, &n)), b = gpuk_at(buf, (size_t)take(&p, &n));
        size_t x = (size_t)take(&p, &n), y = (size_t)take(&p, &n);
        int64_t lo = (int64_t)take(&p, &n), hi = (int64_t)take(&p, &n);
        const gpuk_stream s = { 0 };
        expect_result(gpuk_add_f32(ctx, s, a, b, a, x));
        expect_result(gpuk_copy_strided_f64(ctx, s, a, x, b, y, x % 97));
        expect_result(gpuk_transpose_f32(ctx, s, a, b, x, y));
        expect_result(gpuk_sum_f64(ctx, s, a, b, x));
        expect_result(gpuk_scan_exclusive_u32(ctx, s, a, b, x));
        expect_result(gpuk_histogram_i32(ctx, s, a, (uint32_t)y, lo, hi, b, x));
        {   /* float histograms: ends from the raw bits (NaN, infinities, subnormals, spans past
               the type's range) */
            double dlo, dhi;
            float flo, fhi;
            uint32_t w = (uint32_t)lo;
            memcpy(&dlo, &lo, 8);
            memcpy(&dhi, &hi, 8);
            memcpy(&flo, &w, 4);
            w = (uint32_t)hi;
            memcpy(&fhi, &w, 4);
            expect_result(gpuk_histogram_f32(ctx, s, a, (uint32_t)y % 5000, flo, fhi, b, x));
            expect_result(gpuk_histogram_f64(ctx, s, a, (uint32_t)y, dlo, dhi, b, x));
        }
        expect_result(gpuk_random_normal_f32(ctx, s, a, x, (uint64_t)lo, (uint64_t)hi));
        { /* GEMM: three 2-D views, each number small (valid shapes happen) or raw (overflow);
             C in the second buffer or in A's and B's (overlap) */
            size_t v[12];
            int i;
            for (i = 0; i < 12; i++) {
                uint64_t r = take(&p, &n);
                v[i] = r & 1 ? (size_t)(r >> 1) : (size_t)((r >> 1) % 40);
            }
            {
                gpuk_array2d c2 = gpuk_at2d(x & 1 ? buf : buf2, v[0], v[1], v[2], v[3]);
                gpuk_array2d a2 = gpuk_at2d(buf, v[4], v[5], v[6], v[7]), b2 = gpuk_at2d(buf, v[8], v[9], v[10], v[11]);
                expect_result(gpuk_gemm_f32(ctx, s, c2, 1.5f, a2, (uint32_t)lo & 1, b2, (uint32_t)hi & 1, 0.5f));
                expect_result(gpuk_gemm_f64(ctx, s, c2, 1.5, a2, (uint32_t)hi & 1, b2, (uint32_t)lo & 1, 0));
            }
        }
    } else { /* desc structs from the bytes (pointers cleared, bools from bits) */
        static char upload[8192];
        gpuk_buffer_desc bd;
        gpuk_stream_desc sd;
        gpuk_launch_desc ld;
        gpuk_buffer nb;
        gpuk_stream ns;
        gpuk_devptr dp = gpuk_buffer_devptr(ctx, buf);
        uint32_t count = 4;
        void* args[2] = { &dp, &count };
        memset(&bd, 0, sizeof bd); memset(&sd, 0, sizeof sd); memset(&ld, 0, sizeof ld);
        bd.bytes = (size_t)take(&p, &n) % (1u << 20);
        bd._start_canary = (uint32_t)take(&p, &n) % 3 == 0 ? 1u : 0u;
        bd.data.ptr = take(&p, &n) & 1 ? upload : NULL; /* v0.2: create-and-upload */
        bd.data.bytes = (size_t)take(&p, &n) % (sizeof upload + 1);
        if (gpuk_buffer_create(ctx, &bd, &nb) == GPUK_OK) expect_result(gpuk_buffer_destroy(ctx, nb));
        sd.priority = (int)take(&p, &n);
        sd.non_blocking = take(&p, &n) & 1;
        if (gpuk_stream_create(ctx, &sd, &ns) == GPUK_OK) expect_result(gpuk_stream_destroy(ctx, ns));
        ld.grid.x = (uint32_t)take(&p, &n); ld.grid.y = (uint32_t)take(&p, &n); ld.grid.z = (uint32_t)take(&p, &n);
        ld.block.x = (uint32_t)take(&p, &n); ld.block.y = (uint32_t)take(&p, &n); ld.block.z = (uint32_t)take(&p, &n);
        ld.shared_bytes = (uint32_t)take(&p, &n);
        ld.num_args = (uint32_t)take(&p, &n) % 4;
        ld.args = take(&p, &n) & 1 ? args : NULL;
        expect_result(gpuk_launch(ctx, kern, &ld));
        { /* 2-D views: any rows, cols, stride and first, against the 4096-byte buffer */
            gpuk_devptr dp2;
            size_t stride2;
            gpuk_array2d v = gpuk_at2d(buf, (size_t)take(&p, &n), (size_t)take(&p, &n), (size_t)take(&p, &n),
                                       (size_t)take(&p, &n));
            expect_result(gpuk_array2d_resolve(ctx, v, (size_t)1 << (take(&p, &n) % 5), &dp2, &stride2));
            expect_result(gpuk_array_resolve(ctx, gpuk_at(buf, (size_t)take(&p, &n)),
                                             (size_t)take(&p, &n) % 20, NULL, &dp2, &stride2));
        }
    }
    return 0;
}
