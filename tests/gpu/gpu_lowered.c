/* tests/gpu/gpu_lowered.c - every built-in kernel gives bit-identical output from its lowered PTX
   (what gpuk ships: .version/.target set to the oldest ptxas accepts) and from the same PTX
   with nvcc's own header (.version 9.0, .target sm_75), on the same inputs. Two ctxs: one
   loads the shipped PTX as usual, the other gets the nvcc-header modules put in its kernel
   slots; every wrapper runs on both, at aligned and misaligned views, and the outputs are
   compared byte for byte. The sizes keep float scans to one look-back step (deterministic).
   (The module text is otherwise the shipped one: gen_ptx.py drops nvcc's comment lines and
   whitespace and, in argmin/argmax, a used_bytes_mask hint; gen_ptx.py checks that the first
   two change no machine code.) Run for the variants the GPU takes (kernels_max_sm 0: on an
   H100 that is gpuk_gemm_tf32__sm90a, .target sm_90a, whose nvcc header keeps sm_90a) and again
   held to sm_80's where the GPU is newer than sm_80 (kernels_max_sm 80: the sm_80 forms).
   Skipped where no driver or GPU exists. */
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <stdlib.h>

#define N_ANY 8000                      /* one 4-byte scan tile, two 8-byte ones */
#define N_STRIDED (N_ANY / 3 - 1)
#define ROWS 89
#define COLS 89
#define REGION ((size_t)N_ANY + 64)     /* elements of up to 8 bytes each output gets */

static const gpuk_stream S = { 0 };
typedef struct side {
    gpuk_ctx* c;
    gpuk_buffer outs[GPUK__KERNEL_COUNT];
    gpuk_buffer in_f32, in_f64, in_i32, in_u32, in_u8;
} side;

static unsigned char* pattern;  /* the bytes every output starts from */
static uint32_t max_sm;          /* gpuk_ctx_desc.kernels_max_sm of both sides */
static unsigned char* inputs[5]; /* f32, f64, i32, u32, u8 inputs */

static void side_open(side* s) {
    int k;
    gpuk_buffer* ins[5];
    CHECK_OK(gpuk_ctx_create(&(gpuk_ctx_desc){ .max_modules = 256, .max_kernels = 256, .kernels_max_sm = max_sm },
                             &s->c)); /* a module a kernel */
    ins[0] = &s->in_f32; ins[1] = &s->in_f64; ins[2] = &s->in_i32; ins[3] = &s->in_u32; ins[4] = &s->in_u8;
    for (k = 0; k < 5; k++) {
        CHECK_OK(gpuk_buffer_create(s->c, &(gpuk_buffer_desc){ .bytes = REGION * 8 }, ins[k]));
        CHECK_OK(gpuk_buffer_write(s->c, *ins[k], 0, inputs[k], REGION * 8));
    }
    for (k = 0; k < GPUK__KERNEL_COUNT; k++)
        CHECK_OK(gpuk_buffer_create(s->c, &(gpuk_buffer_desc){ .bytes = REGION * 8 }, &s->outs[k]));
}

/* Puts the nvcc-header form of each kernel's module (the one gpuk picks here) in c's slots. */
static void use_nvcc_headers(gpuk_ctx* c) {
    int id;
    for (id = 0; id < GPUK__KERNEL_COUNT; id++) {
        const gpuk__builtin_ptx* b = gpuk__builtin_pick(c, id);
        char* block = NULL;
        gpuk_result r = GPUK_OK;
        char* text = gpuk__builtin_text("use_nvcc_headers", b, &block, &r); /* gpuk.h holds it packed */
        char* body;
        gpuk_module m;
        gpuk_kernel k;
        char head[48], target[16];
        CHECK(text != NULL && r == GPUK_OK);
        if (!text) return;
        body = strstr(text, ".address_size"); /* after .version and .target */
        memmove(text + 31, body, strlen(body) + 1);
        /* nvcc's sm_75, or a variant's own newer target (its instructions need it), with the
           'a' of an architecture-specific one (sm_90a) */
        snprintf(target, sizeof target, "%d%s", b->target > 75 ? b->target : 75, b->arch_specific ? "a" : "");
        snprintf(head, sizeof head, ".version 9.0\n.target sm_%-6s", target);
        memcpy(text, head, 30);
        text[30] = '\n';
        m.id = k.id = 0;
        CHECK_OK(gpuk_module_load(c, &(gpuk_module_desc){ .image = { text, 0 }, .label = b->name }, &m));
        CHECK_OK(gpuk_kernel_get(c, m, b->name, &k));
        /* the function only: the module stays the module handle's, unloaded once */
        if (k.id) gpuk__builtin_of(c)->function[id] = gpuk__kernel_lookup(c, k.id)->cu;
        gpuk__free(block);
    }
}

#define OUT gpuk_at(s->outs[k], off)
#define IN(t) gpuk_at(s->in_##t, off)
/* an id with no wrapper of its own, launched by its owner's (gpuk__builtin_companion) */
static int is_companion(int id) {
    return strncmp(gpuk__builtin_ptx_of(id)->name, "gpuk__", 6) == 0;
}
#define RUN_ONE(call) \
    do { CHECK_OK(call); k++; while (k < GPUK__KERNEL_COUNT && is_companion(k)) k++; } while (0)
/* one call shape a family, expanded over gpuk.h's list of every kernel (GPUK__KERNEL_LIST) */
#define RUN_FAMILY(fam, name, t) RUN_##fam(gpuk_##name##_##t, t);
#define RUN_FILL(f, t) RUN_ONE(f(c, S, OUT, N_ANY, 7))
#define RUN_IOTA(f, t) RUN_ONE(f(c, S, OUT, N_ANY, 3, 2))
#define RUN_LINSPACE(f, t) RUN_ONE(f(c, S, OUT, N_ANY, 3, 250))
#define RUN_COPY_STRIDED(f, t) RUN_ONE(f(c, S, OUT, 1, IN(t), 3, N_STRIDED))
#define RUN_BINARY(f, t) RUN_ONE(f(c, S, OUT, IN(t), IN(t), N_ANY))
#define RUN_DIV RUN_BINARY
#define RUN_DOT RUN_BINARY
#define RUN_AXPY(f, t) RUN_ONE(f(c, S, OUT, 1.5, IN(t), N_ANY))
#define RUN_SCALE RUN_AXPY
#define RUN_UNARY(f, t) RUN_ONE(f(c, S, OUT, IN(t), N_ANY))
#define RUN_UNARY_LONG RUN_UNARY
#define RUN_COS2SIN2 RUN_UNARY
#define RUN_SUM RUN_UNARY
#define RUN_MIN RUN_UNARY
#define RUN_MAX RUN_UNARY
#define RUN_ARGMIN RUN_UNARY
#define RUN_ARGMAX RUN_UNARY
#define RUN_NORM2 RUN_UNARY
#define RUN_TO_HALF RUN_UNARY
#define RUN_TO_F32 RUN_UNARY
#define RUN_AXPY_HALF RUN_AXPY
#define RUN_SUM_HALF RUN_UNARY
#define RUN_MIN_HALF RUN_UNARY
#define RUN_MAX_HALF RUN_UNARY
#define RUN_DOT_HALF RUN_BINARY
/* the 16-bit floats read the u32 input's random bits: every class (NaN, inf, subnormal) */
#define in_f16 in_u32
#define in_bf16 in_u32
#define RUN_SCAN RUN_UNARY
/* a rows kernel's wrapper runs again on rows of whole 16-byte packs (4 elements in, 16-byte
   aligned both ways), which its companion takes: into the companion's output */
#define RUN_SUM_AXIS(f, t)                                                                 \
    do {                                                                                   \
        const int p_ = gpuk__builtin_companion_of(k, -1);                                  \
        if (p_ >= 0)                                                                       \
            CHECK_OK(f(c, S, gpuk_at(s->outs[p_], off),                                    \
                       gpuk_at2d(s->in_##t, 4 * off, 37, 32, 36)));                        \
        RUN_ONE(f(c, S, OUT, gpuk_at2d(s->in_##t, off, 37, 29, 31)));                      \
    } while (0)
#define RUN_MIN_AXIS RUN_SUM_AXIS
#define RUN_MAX_AXIS RUN_SUM_AXIS
#define RUN_ARGMIN_AXIS RUN_SUM_AXIS
#define RUN_ARGMAX_AXIS RUN_SUM_AXIS
#define RUN_SELU(f, t) RUN_ONE(f(c, S, OUT, IN(t), N_ANY, 1.5, 1.0507))
#define RUN_TRANSPOSE(f, t) RUN_ONE(f(c, S, OUT, IN(t), ROWS, COLS))
#define HIST_RANGE_u8 3, 250
#define HIST_RANGE_i32 -5, 1000000
#define RUN_HISTOGRAM(f, t) RUN_ONE(f(c, S, OUT, 61, HIST_RANGE_##t, IN(t), N_ANY))
#define RUN_HISTOGRAM_FLOAT(f, t) RUN_ONE(f(c, S, OUT, 61, -0.25, 0.75, IN(t), N_ANY))
#define RUN_RANDOM(f, t) RUN_ONE(f(c, S, OUT, N_ANY, 12345, 77))
/* sorts: 8-byte keys from the f64 input; pairs of 4500 keys (several tiles), their values after
   the keys in the same output */
#define SORT_IN_u32 s->in_u32
#define SORT_IN_i32 s->in_i32
#define SORT_IN_f32 s->in_f32
#define SORT_IN_u64 s->in_f64
#define SORT_IN_i64 s->in_f64
#define SORT_IN_f64 s->in_f64
#define RUN_SORT_KEYS(f, t) RUN_ONE(f(c, S, OUT, gpuk_at(SORT_IN_##t, off), N_ANY, 0, 0, 0))
#define RUN_SORT_PAIRS(f, t) RUN_ONE(f(c, S, OUT, gpuk_at(s->outs[k], 9016 + off), gpuk_at(SORT_IN_##t, off), \
                                       gpuk_at(s->in_u32, off), 4500, 1, 0, 0))
static const float weights[9] = { 0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f, 0.0625f, 0.125f, 0.0625f };
#define RUN_STENCIL3X3(f, t) RUN_ONE(f(c, S, gpuk_at2d(s->outs[k], off, 37, 29, 0), gpuk_at2d(s->in_##t, off, 37, 29, 31), \
                                       weights, GPUK_BOUNDARY_SKIP))
#define RUN_HEAT(f, t) RUN_ONE(f(c, S, gpuk_at2d(s->outs[k], off, 37, 29, 0), gpuk_at2d(s->in_##t, off, 37, 29, 31), 0.2))
/* selects: the count past the output's N_ANY elements of up to 8 bytes */
#define SEL_COUNT gpuk_at(s->outs[k], N_ANY + 8)
#define RUN_SELECT_IF(f, t) RUN_ONE(f(c, S, OUT, SEL_COUNT, IN(t), N_ANY, GPUK_CMP_LT, 1))
#define RUN_PARTITION_IF RUN_SELECT_IF
#define RUN_SELECT_FLAGGED(f, t) RUN_ONE(f(c, S, OUT, SEL_COUNT, IN(t), IN(u8), N_ANY))
#define RUN_COUNT_IF(f, t) RUN_ONE(f(c, S, SEL_COUNT, IN(t), N_ANY, GPUK_CMP_GE, 1))
#define RUN_UNIQUE(f, t) RUN_ONE(f(c, S, OUT, SEL_COUNT, IN(t), N_ANY))
/* a third of N_ANY: the run lengths (8 bytes each) after the values, in the same output */
#define RUN_RUN_LENGTH_ENCODE(f, t) \
    RUN_ONE(f(c, S, OUT, gpuk_at(s->outs[k], N_ANY / 3 + 8), SEL_COUNT, IN(t), N_ANY / 3))
#define GEMM_IN_f32 s->in_f32
#define GEMM_IN_tf32 s->in_f32
#define GEMM_IN_f64 s->in_f64
#define RUN_GEMM(f, t) RUN_ONE(f(c, S, gpuk_at2d(s->outs[k], off, 37, 29, 0), 1.5, gpuk_at2d(GEMM_IN_##t, off, 37, 23, 0), 0, \
                                 gpuk_at2d(GEMM_IN_##t, off + 1000, 29, 23, 0), 1, 0.5))

/* Every wrapper once, into its own output; outputs first reset to the pattern. */
static void run_all(side* s, size_t off) {
    gpuk_ctx* c = s->c;
    int k;
    for (k = 0; k < GPUK__KERNEL_COUNT; k++) CHECK_OK(gpuk_buffer_write(c, s->outs[k], 0, pattern, REGION * 8));
    k = 0;
    GPUK__KERNEL_LIST(RUN_FAMILY)
    CHECK(k == GPUK__KERNEL_COUNT);
    CHECK_OK(gpuk_ctx_sync(c));
}

static int test_lowered_and_nvcc_headers_give_the_same_bytes(void) {
    side low, orig;
    unsigned char* a = (unsigned char*)malloc(REGION * 8);
    unsigned char* b = (unsigned char*)malloc(REGION * 8);
    size_t off, i;
    int k, same = 0, runs = 0;
    side_open(&low);
    side_open(&orig);
    use_nvcc_headers(orig.c);
    for (off = 0; off < 2; off++) { /* 16-byte aligned views, then one element in */
        run_all(&low, off);
        run_all(&orig, off);
        for (k = 0; k < GPUK__KERNEL_COUNT; k++) {
            CHECK_OK(gpuk_buffer_read(low.c, low.outs[k], 0, a, REGION * 8));
            CHECK_OK(gpuk_buffer_read(orig.c, orig.outs[k], 0, b, REGION * 8));
            runs++;
            if (memcmp(a, b, REGION * 8) == 0) { same++; continue; }
            for (i = 0; i < REGION * 8 && a[i] == b[i]; i++) {}
            fprintf(stderr, "  %s (offset %zu): byte %zu differs\n", gpuk__builtin_ptx_of(k)->name, off, i);
            check_failures++;
        }
    }
    printf("     kernels_max_sm = %u: %d of %d kernel runs bit-identical (%d kernels, aligned and misaligned "
           "views); variants:", max_sm, same, runs, GPUK__KERNEL_COUNT);
    for (k = 0; k < GPUK__KERNEL_COUNT; k++)
        if (gpuk__builtin_pick(low.c, k) != gpuk__builtin_ptx_of(k)) printf(" %s", gpuk__builtin_pick(low.c, k)->name);
    printf("\n");
    CHECK(gpuk_kernels_loaded(low.c) == GPUK__KERNEL_COUNT);
    CHECK_OK(gpuk_ctx_destroy(orig.c));
    CHECK_OK(gpuk_ctx_destroy(low.c));
    free(a); free(b);
    return TEST_PASS;
}

int main(void) {
    int code;
    size_t i;
    gpuk_device_info info;
    if (!gpu_setup("gpu_lowered", 2, NULL, &code)) return code;
    pattern = (unsigned char*)malloc(REGION * 8);
    for (i = 0; i < 5; i++) inputs[i] = (unsigned char*)malloc(REGION * 8);
    for (i = 0; i < REGION * 8; i++) { /* a fixed pseudo-random mix: both sides see the same */
        uint32_t h = (uint32_t)i * 2654435761u;
        pattern[i] = (unsigned char)(h >> 13);
        inputs[2][i] = inputs[3][i] = (unsigned char)(h >> 7);
        inputs[4][i] = (unsigned char)(h >> 19);
    }
    for (i = 0; i < REGION; i++) { /* floats in [0.5, 2): valid for sqrt and log */
        float f = 0.5f + 1.5f * (float)((i * 40503u) % 65537u) / 65537.0f;
        double d = 0.5 + 1.5 * (double)((i * 2654435761u) % 1000003u) / 1000003.0;
        memcpy(inputs[0] + 4 * i, &f, 4);
        memcpy(inputs[1] + 8 * i, &d, 8);
    }
    RUN(test_lowered_and_nvcc_headers_give_the_same_bytes);
    CHECK_OK(gpuk_device_query(0, &info));
    if (info.cc_major * 10 + info.cc_minor > 80) {
        max_sm = 80;
        RUN(test_lowered_and_nvcc_headers_give_the_same_bytes);
    } else {
        printf("skip kernels_max_sm = 80: the GPU (sm_%d%d) takes no newer variant\n", info.cc_major, info.cc_minor);
        tests_skipped++;
    }
    free(pattern);
    for (i = 0; i < 5; i++) free(inputs[i]);
    return test_summary();
}
