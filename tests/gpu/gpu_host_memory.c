/* tests/gpu/gpu_host_memory.c - zero-copy (mapped host) and managed buffers on a real GPU: the
   abilities gpuk_device_info reports against the driver's raw attributes; fresh random data
   written by the CPU into mapped memory (allocated, and the program's own registered), read
   in place by a built-in kernel and by a kernel of the program's own (PTX below), the results
   written into mapped memory and read by the CPU after the sync, outputs poisoned first,
   against a CPU reference; the CPU rewriting the input between launches (no stale data);
   copies between mapped, managed and device memory; the 3x3 smoothing on a 1920x1080 frame
   in each kind of memory (the same bits, and the CPU's mean); managed buffers advised (read-mostly,
   preferred location, accessed-by), prefetched to the device and back to the host where the
   device has concurrent managed access (refused with GPUK_ERR_UNSUPPORTED where it has not),
   read and written by the CPU through their pointer; handles refused after their destroy.
   Skipped where no driver or GPU exists; each part where the device lacks the ability.
   GPUK_TEST_QUICK=1 (the sanitizer runs): smaller arrays.
   cc -std=c99 -I../.. gpu_host_memory.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NTESTS 7
static gpuk_ctx* ctx;
static gpuk_stream s; /* non-blocking: ordered only by its own syncs */
static const gpuk_device_info* info;
static gpuk_kernel twice_plus_one;
static size_t n_floats;

/* A kernel of the program's own: out[i] = 2 * in[i] + 1 (one rounding, as fmaf). */
static const char user_ptx[] =
    ".version 6.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry twice_plus_one(.param .u64 out, .param .u64 in, .param .u32 n)\n{\n"
    " .reg .pred %p<2>;\n .reg .b32 %r<6>;\n .reg .f32 %f<3>;\n .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [in];\n ld.param.u32 %r1, [n];\n"
    " mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mov.u32 %r4, %tid.x;\n"
    " mad.lo.s32 %r5, %r2, %r3, %r4;\n setp.ge.u32 %p1, %r5, %r1;\n @%p1 bra DONE;\n"
    " cvta.to.global.u64 %rd3, %rd2;\n mul.wide.u32 %rd4, %r5, 4;\n add.s64 %rd5, %rd3, %rd4;\n"
    " ld.global.f32 %f1, [%rd5];\n fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;\n"
    " cvta.to.global.u64 %rd6, %rd1;\n add.s64 %rd7, %rd6, %rd4;\n st.global.f32 [%rd7], %f2;\n"
    "DONE:\n ret;\n}\n";

static int quick(void) { return getenv("GPUK_TEST_QUICK") != NULL || under_sanitizer(); }

/* Values whose doubles, products and sums stay exact before the one rounding to float. */
static void fill_random(float* x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)uniform(0.25, 4.0) * (rng() & 1 ? 1.0f : -1.0f);
}

/* NaN in every element: a result never written shows. */
static void poison(float* x, size_t n) { memset(x, 0xFF, n * sizeof *x); }

/* Wrong elements of got against alpha * x + beta (one rounding), the first few printed. */
static size_t count_wrong(const float* got, const float* x, double alpha, double beta, size_t n,
                          const char* what) {
    size_t i, bad = 0;
    for (i = 0; i < n; i++) {
        float want = (float)(alpha * (double)x[i] + beta);
        if (memcmp(&got[i], &want, sizeof want) != 0 && bad++ < 3)
            fprintf(stderr, "  %s: element %zu of %zu is %.9g, want %.9g\n", what, i, n,
                    (double)got[i], (double)want);
    }
    return bad;
}

static gpuk_result launch_user(gpuk_buffer out, gpuk_buffer in, size_t n) {
    gpuk_devptr po = gpuk_buffer_devptr(ctx, out), pi = gpuk_buffer_devptr(ctx, in);
    unsigned un = (unsigned)n;
    return gpuk_launch(ctx, twice_plus_one,
                       &(gpuk_launch_desc){ .grid = GPUK_DIM1((un + 255u) / 256u),
                                            .block = GPUK_DIM1(256), .stream = s,
                                            GPUK_ARGS(&po, &pi, &un) });
}

/* gpuk_device_info's abilities are the driver's attributes. */
static int test_device_info(void) {
    static const struct { int attr; size_t off; const char* name; } rows[] = {
        { 18, offsetof(gpuk_device_info, integrated), "integrated" },
        { 19, offsetof(gpuk_device_info, can_map_host_memory), "can_map_host_memory" },
        { 83, offsetof(gpuk_device_info, managed_memory), "managed_memory" },
        { 89, offsetof(gpuk_device_info, concurrent_managed_access), "concurrent_managed_access" },
        { 88, offsetof(gpuk_device_info, pageable_memory_access), "pageable_memory_access" },
    };
    size_t i;
    printf("  %s:", info->name);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int raw = -1, ours;
        memcpy(&ours, (const char*)info + rows[i].off, sizeof ours);
        CHECK_OK(gpuk_device_attribute(info->ordinal, rows[i].attr, &raw));
        CHECK(raw == ours);
        printf(" %s %d", rows[i].name, ours);
    }
    printf("\n");
    return TEST_PASS;
}

/* Mapped memory, allocated and registered: the CPU writes the input in place, a built-in and
   the program's kernel read it and write mapped outputs the CPU reads after the sync; the CPU
   rewrites the input and the next launches see the new values. */
static int test_zero_copy(void) {
    const size_t n = n_floats, bytes = n * sizeof(float);
    gpuk_buffer in, out, reg, out2;
    float *x, *y, *mine = NULL, *y2;
    int round;
    if (!info->can_map_host_memory) return TEST_SKIP;
    CHECK(posix_memalign((void**)&mine, 4096, bytes) == 0 && mine);
    if (!mine) return TEST_PASS;
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes, .label = "in" },
                                       &in));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes, .label = "out" },
                                       &out));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes, .host_ptr = mine,
                                                                 .label = "mine" }, &reg));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &out2));
    x = (float*)gpuk_buffer_host_ptr(ctx, in);
    y = (float*)gpuk_buffer_host_ptr(ctx, out);
    y2 = (float*)gpuk_buffer_host_ptr(ctx, out2);
    CHECK(x && y && y2 && gpuk_buffer_host_ptr(ctx, reg) == mine);
    if (!x || !y || !y2) return TEST_PASS;
    for (round = 0; round < 2; round++) {
        float alpha = (float)(round + 2) * 0.5f;
        fill_random(x, n);
        fill_random(mine, n);
        poison(y, n);
        poison(y2, n);
        CHECK_OK(gpuk_scale_f32(ctx, s, gpuk_at(out, 0), alpha, gpuk_at(in, 0), n));
        CHECK_OK(launch_user(out2, reg, n));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        CHECK(count_wrong(y, x, alpha, 0.0, n, "built-in on mapped memory") == 0);
        CHECK(count_wrong(y2, mine, 2.0, 1.0, n, "own kernel on registered memory") == 0);
        /* the other way round: the built-in on the caller's, the kernel on gpuk's */
        poison(y, n);
        poison(y2, n);
        CHECK_OK(gpuk_scale_f32(ctx, s, gpuk_at(out, 0), alpha, gpuk_at(reg, 0), n));
        CHECK_OK(launch_user(out2, in, n));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        CHECK(count_wrong(y, mine, alpha, 0.0, n, "built-in on registered memory") == 0);
        CHECK(count_wrong(y2, x, 2.0, 1.0, n, "own kernel on mapped memory") == 0);
    }
    CHECK_OK(gpuk_buffer_destroy(ctx, in));
    CHECK_OK(gpuk_buffer_destroy(ctx, out));
    CHECK_OK(gpuk_buffer_destroy(ctx, reg));
    CHECK_OK(gpuk_buffer_destroy(ctx, out2));
    CHECK(gpuk_buffer_host_ptr(ctx, in) == NULL && gpuk_buffer_devptr(ctx, reg) == 0);
    CHECK_RESULT(gpuk_scale_f32(ctx, s, gpuk_at(out, 0), 1.0f, gpuk_at(in, 0), n),
                 GPUK_ERR_INVALID_HANDLE);
    mine[0] = 1.0f; /* unregistered, still the program's */
    free(mine);
    return TEST_PASS;
}

/* Managed memory: uploaded at create, advised, prefetched to the device, read by a built-in
   and the program's kernel, results prefetched back and read by the CPU; the CPU rewrites
   the input through its pointer (after a sync: the device is idle) and the next launch sees
   it. Without concurrent managed access the prefetch is refused and the rest still holds. */
static int test_managed(void) {
    const size_t n = n_floats, bytes = n * sizeof(float);
    gpuk_buffer in, out, out2;
    float *x, *y, *y2, *ref;
    int round, can_prefetch;
    if (!info->managed_memory) return TEST_SKIP;
    can_prefetch = info->concurrent_managed_access != 0;
    ref = (float*)malloc(bytes);
    CHECK(ref != NULL);
    if (!ref) return TEST_PASS;
    fill_random(ref, n);
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .data = { ref, bytes },
                                                                  .label = "in" }, &in));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &out));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &out2));
    x = (float*)gpuk_buffer_host_ptr(ctx, in);
    y = (float*)gpuk_buffer_host_ptr(ctx, out);
    y2 = (float*)gpuk_buffer_host_ptr(ctx, out2);
    CHECK(x && y && y2 && (gpuk_devptr)(uintptr_t)x == gpuk_buffer_devptr(ctx, in));
    if (!x || !y || !y2) return TEST_PASS;
    CHECK_OK(gpuk_ctx_sync(ctx));
    CHECK(memcmp(x, ref, bytes) == 0); /* the upload, read by the CPU */
    CHECK_OK(gpuk_buffer_advise(ctx, in, 0, bytes, GPUK_ADVICE_SET_READ_MOSTLY, 0));
    CHECK_OK(gpuk_buffer_advise(ctx, out, 0, bytes, GPUK_ADVICE_SET_PREFERRED_LOCATION,
                                info->ordinal));
    CHECK_OK(gpuk_buffer_advise(ctx, out, 0, bytes, GPUK_ADVICE_SET_ACCESSED_BY,
                                GPUK_DEVICE_HOST));
    for (round = 0; round < 2; round++) {
        const float alpha = round ? -1.5f : 3.0f;
        if (round) { /* the CPU writes the input in place (the device is idle) */
            fill_random(ref, n);
            memcpy(x, ref, bytes);
        }
        poison(y, n);
        poison(y2, n);
        if (can_prefetch) {
            CHECK_OK(gpuk_buffer_prefetch(ctx, s, in, 0, bytes, info->ordinal));
            CHECK_OK(gpuk_buffer_prefetch(ctx, s, out, 0, bytes, info->ordinal));
        } else {
            CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, in, 0, bytes, info->ordinal),
                         GPUK_ERR_UNSUPPORTED);
        }
        CHECK_OK(gpuk_scale_f32(ctx, s, gpuk_at(out, 0), alpha, gpuk_at(in, 0), n));
        CHECK_OK(launch_user(out2, in, n));
        if (can_prefetch) {
            CHECK_OK(gpuk_buffer_prefetch(ctx, s, out, 0, bytes, GPUK_DEVICE_HOST));
            CHECK_OK(gpuk_buffer_prefetch(ctx, s, out2, 0, bytes, GPUK_DEVICE_HOST));
        }
        CHECK_OK(gpuk_ctx_sync(ctx));
        CHECK(count_wrong(y, ref, alpha, 0.0, n, "built-in on managed memory") == 0);
        CHECK(count_wrong(y2, ref, 2.0, 1.0, n, "own kernel on managed memory") == 0);
    }
    CHECK_OK(gpuk_buffer_advise(ctx, in, 0, bytes, GPUK_ADVICE_UNSET_READ_MOSTLY, 0));
    CHECK_OK(gpuk_buffer_advise(ctx, out, 0, bytes, GPUK_ADVICE_UNSET_PREFERRED_LOCATION, 0));
    CHECK_OK(gpuk_buffer_advise(ctx, out, 0, bytes, GPUK_ADVICE_UNSET_ACCESSED_BY,
                                GPUK_DEVICE_HOST));
    CHECK_OK(gpuk_buffer_destroy(ctx, in));
    CHECK_OK(gpuk_buffer_destroy(ctx, out));
    CHECK_OK(gpuk_buffer_destroy(ctx, out2));
    CHECK(gpuk_buffer_host_ptr(ctx, in) == NULL);
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, in, 0, bytes, 0), GPUK_ERR_INVALID_HANDLE);
    free(ref);
    return TEST_PASS;
}

/* Copies between the three kinds: mapped -> device -> managed -> mapped, and the stream-less
   read and write of each, byte for byte. */
static int test_copies(void) {
    const size_t n = n_floats, bytes = n * sizeof(float);
    gpuk_buffer m, d, g, m2;
    float *ref, *got, *mp, *m2p;
    if (!info->can_map_host_memory || !info->managed_memory) return TEST_SKIP;
    ref = (float*)malloc(bytes);
    got = (float*)malloc(bytes);
    CHECK(ref && got);
    if (!ref || !got) return TEST_PASS;
    fill_random(ref, n);
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .data = { ref, bytes } }, &m));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &d));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &g));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &m2));
    mp = (float*)gpuk_buffer_host_ptr(ctx, m);
    m2p = (float*)gpuk_buffer_host_ptr(ctx, m2);
    CHECK(mp && m2p && memcmp(mp, ref, bytes) == 0);
    if (!mp || !m2p || !gpuk_buffer_host_ptr(ctx, g)) return TEST_PASS;
    poison(m2p, n);
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, d, 0, m, 0, bytes));
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, g, 0, d, 0, bytes));
    CHECK_OK(gpuk_buffer_copy_async(ctx, s, m2, 0, g, 0, bytes));
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK(memcmp(m2p, ref, bytes) == 0);
    poison(got, n);
    CHECK_OK(gpuk_buffer_read(ctx, g, 0, got, bytes));
    CHECK(memcmp(got, ref, bytes) == 0);
    fill_random(ref, n);
    CHECK_OK(gpuk_buffer_write(ctx, g, 0, ref, bytes));
    CHECK_OK(gpuk_buffer_write(ctx, m, 0, ref, bytes));
    CHECK(memcmp(gpuk_buffer_host_ptr(ctx, g), ref, bytes) == 0);
    CHECK(memcmp(mp, ref, bytes) == 0);
    CHECK_OK(gpuk_buffer_memset(ctx, s, m2, 0, 0x3F800000u, 4, n)); /* 1.0f */
    CHECK_OK(gpuk_stream_sync(ctx, s));
    CHECK(m2p[0] == 1.0f && m2p[n - 1] == 1.0f);
    CHECK_OK(gpuk_buffer_destroy(ctx, m));
    CHECK_OK(gpuk_buffer_destroy(ctx, d));
    CHECK_OK(gpuk_buffer_destroy(ctx, g));
    CHECK_OK(gpuk_buffer_destroy(ctx, m2));
    free(ref);
    free(got);
    return TEST_PASS;
}

/* The 3x3 smoothing built-in (its TMA tiles on sm_90 and newer, the row stride being a
   multiple of 16 bytes) on a frame in mapped, managed and device memory: the same bits each
   way, and within 1e-5 of the mean of the neighbours on the CPU. */
static int test_stencil(void) {
    static const float ninth[9] = { 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9,
                                    1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9 };
    const size_t w = quick() ? 200 : 1920, h = quick() ? 120 : 1080, n = w * h;
    const size_t bytes = n * sizeof(float);
    gpuk_buffer in[3], out[3];
    float *frame, *got, *outs[3];
    size_t i, k, bad = 0, x, y;
    if (!info->can_map_host_memory || !info->managed_memory) return TEST_SKIP;
    frame = (float*)malloc(bytes);
    got = (float*)malloc(bytes);
    CHECK(frame && got);
    if (!frame || !got) return TEST_PASS;
    for (i = 0; i < n; i++) frame[i] = (float)uniform(0.0, 1.0);
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { frame, bytes } }, &in[0]));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &out[0]));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .data = { frame, bytes } },
                                       &in[1]));
    CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = bytes }, &out[1]));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .data = { frame, bytes } },
                                        &in[2]));
    CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = bytes }, &out[2]));
    CHECK_OK(gpuk_buffer_memset(ctx, s, out[0], 0, 0xFFFFFFFFu, 4, n));
    outs[1] = (float*)gpuk_buffer_host_ptr(ctx, out[1]);
    outs[2] = (float*)gpuk_buffer_host_ptr(ctx, out[2]);
    CHECK(outs[1] && outs[2]);
    if (!outs[1] || !outs[2]) return TEST_PASS;
    CHECK_OK(gpuk_ctx_sync(ctx));
    poison(outs[1], n);
    poison(outs[2], n);
    for (k = 0; k < 3; k++)
        CHECK_OK(gpuk_stencil3x3_f32(ctx, s, gpuk_at2d(out[k], 0, h, w, 0),
                                     gpuk_at2d(in[k], 0, h, w, 0), ninth, GPUK_BOUNDARY_SKIP));
    CHECK_OK(gpuk_ctx_sync(ctx));
    CHECK_OK(gpuk_buffer_read(ctx, out[0], 0, got, bytes));
    CHECK(memcmp(outs[1], got, bytes) == 0);
    CHECK(memcmp(outs[2], got, bytes) == 0);
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            double sum = 0;
            int count = 0;
            size_t yy, xx;
            for (yy = y ? y - 1 : 0; yy <= y + 1 && yy < h; yy++)
                for (xx = x ? x - 1 : 0; xx <= x + 1 && xx < w; xx++) {
                    sum += frame[yy * w + xx];
                    count++;
                }
            if (!(fabs(got[y * w + x] - sum / count) <= 1e-5) && bad++ < 3)
                fprintf(stderr, "  3x3 at (%zu, %zu) is %.9g, want %.9g\n", y, x,
                        (double)got[y * w + x], sum / count);
        }
    CHECK(bad == 0);
    for (k = 0; k < 3; k++) {
        CHECK_OK(gpuk_buffer_destroy(ctx, in[k]));
        CHECK_OK(gpuk_buffer_destroy(ctx, out[k]));
    }
    free(frame);
    free(got);
    return TEST_PASS;
}

/* Refusals: prefetch and advice of device and mapped memory, ranges outside the buffer. */
static int test_refusals(void) {
    gpuk_buffer d, m = { 0 }, g = { 0 };
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &d));
    CHECK_RESULT(gpuk_buffer_prefetch(ctx, s, d, 0, 64, 0), GPUK_ERR_INVALID_ARG);
    CHECK(gpuk_buffer_host_ptr(ctx, d) == NULL);
    if (info->can_map_host_memory) {
        CHECK_OK(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = 64 }, &m));
        CHECK_RESULT(gpuk_buffer_advise(ctx, m, 0, 64, GPUK_ADVICE_SET_READ_MOSTLY, 0),
                     GPUK_ERR_INVALID_ARG);
        CHECK_RESULT(gpuk_buffer_free_async(ctx, s, m), GPUK_ERR_INVALID_ARG);
        CHECK_OK(gpuk_buffer_destroy(ctx, m));
    }
    if (info->managed_memory) {
        CHECK_OK(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &g));
        CHECK_RESULT(gpuk_buffer_advise(ctx, g, 32, 64, GPUK_ADVICE_SET_READ_MOSTLY, 0),
                     GPUK_ERR_OUT_OF_BOUNDS);
        CHECK_OK(gpuk_buffer_destroy(ctx, g));
    }
    CHECK_OK(gpuk_buffer_destroy(ctx, d));
    return TEST_PASS;
}

/* A device without the ability refuses with the reason (run where the attributes are 0). */
static int test_unsupported(void) {
    gpuk_buffer b;
    if (info->can_map_host_memory && info->managed_memory) return TEST_SKIP;
    if (!info->can_map_host_memory)
        CHECK_RESULT(gpuk_buffer_create_mapped(ctx, &(gpuk_pinned_desc){ .bytes = 64 }, &b),
                     GPUK_ERR_UNSUPPORTED);
    if (!info->managed_memory)
        CHECK_RESULT(gpuk_buffer_create_managed(ctx, &(gpuk_buffer_desc){ .bytes = 64 }, &b),
                     GPUK_ERR_UNSUPPORTED);
    return TEST_PASS;
}

int main(void) {
    int rc;
    gpuk_module mod;
    if (!gpu_setup("gpu_host_memory", NTESTS, &ctx, &rc)) return rc;
    rng_seed_from_clock();
    n_floats = quick() ? (size_t)1 << 14 : (size_t)1 << 20;
    info = gpuk_ctx_device_info(ctx);
    if (gpuk_stream_create(ctx, &(gpuk_stream_desc){ .non_blocking = true }, &s) != GPUK_OK ||
        gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { user_ptx, 0 }, .label = "own" },
                         &mod) != GPUK_OK ||
        gpuk_kernel_get(ctx, mod, "twice_plus_one", &twice_plus_one) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    RUN(test_device_info);
    RUN(test_zero_copy);
    RUN(test_managed);
    RUN(test_copies);
    RUN(test_stencil);
    RUN(test_refusals);
    RUN(test_unsupported);
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
