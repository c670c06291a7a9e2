/* src/gpuk_builtin_ptx.h - part of gpuk.h: the built-ins' generated wrappers and PTX. */
GPUK__IMPL int gpuk_kernels_loaded(gpuk_ctx* ctx) {
    const gpuk__builtin_state* st;
    int i, count = 0;
    if (!ctx || !(st = gpuk__builtin_of(ctx))) return 0;
    for (i = 0; i < GPUK__KERNEL_COUNT; i++) /* a kernel counts once, its baseline twin or not */
        count += GPUK__ATOMIC_LOAD_PTR(&st->function[i]) != NULL ||
                 GPUK__ATOMIC_LOAD_PTR(&st->base_function[i]) != NULL;
    return count;
}

/* GPUK_GENERATED_BEGIN(wrappers) */
/* GPUK_GENERATED_END(wrappers) */

/* The PTX of every built-in kernel, and its table. */
/* GPUK_GENERATED_BEGIN(ptx) */
/* GPUK_GENERATED_END(ptx) */

static const gpuk__builtin_ptx* gpuk__builtin_ptx_of(int id) { return &gpuk__builtin_table[id]; }
static const gpuk__builtin_variant* gpuk__builtin_variants(void) {
    return gpuk__builtin_variant_table;
}
static const gpuk__builtin_ptx* gpuk__builtin_dictionary_of(void) {
    return &gpuk__builtin_dictionary;
}
/* The next kernel after kernel `after` (-1: the first) that kernel id's launcher may run
   instead of id's own, or -1: a short walk of a short list, on the calls that may need one. */
static int gpuk__builtin_companion_of(int id, int after) {
    int i, seen = after < 0;
    for (i = 0; gpuk__builtin_companion[i][0] >= 0; i++) {
        if (gpuk__builtin_companion[i][0] != id) continue;
        if (seen) return gpuk__builtin_companion[i][1];
        seen = gpuk__builtin_companion[i][1] == after;
    }
    return -1;
}

/* gpuk_device.cuh's functions as a linkable library (gpuk_device_lib.cu), packed as a
   built-in's PTX is, for gpuk_module_link's desc.gpuk_device. */
/* GPUK_GENERATED_BEGIN(device_library) */
/* GPUK_GENERATED_END(device_library) */

static char* gpuk__device_library_text(const char* fn, char** out_block, gpuk_result* r) {
    return gpuk__builtin_text(fn, &gpuk__device_library, out_block, r);
}
#else
static const gpuk__layer* gpuk__layer_of(int which) { (void)which; return NULL; }
static char* gpuk__device_library_text(const char* fn, char** out_block, gpuk_result* r) {
    *out_block = NULL;
    *r = gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc.gpuk_device: this program was built with "
                    "GPUK_NO_KERNELS, which leaves out gpuk_device.cuh's linkable library");
    return NULL;
}
#endif /* GPUK_NO_KERNELS */
