/* src/gpuk_launch.h - part of gpuk.h: a module's kernels (lookup, attributes), launches. */
/* ---- >>kernel ---- */
GPUK__IMPL gpuk_result gpuk_kernel_get(gpuk_ctx* ctx, gpuk_module module, const char* name,
                                       gpuk_kernel* out_kernel) {
    const char* const fn = __func__;
    const gpuk__module_slot* m;
    gpuk__kernel_slot k;
    gpuk__pool* kp;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t slot;
    if (!out_kernel) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_kernel is NULL");
    out_kernel->id = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!name || !*name) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "name is NULL or empty");
    if (!(m = gpuk__module_lookup(ctx, module.id)))
        return gpuk__bad_handle(fn, "module", module.id);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    memset(&k, 0, sizeof k);
    if ((cr = GPUK__DRV.cuModuleGetFunction(&k.cu, m->cu, name)) != 0) {
        char detail[96];
        gpuk__fmt(detail, sizeof detail, 0, "no kernel '%s' in module '%s'", name, m->label);
        return gpuk__fail_cu(fn, "cuModuleGetFunction", cr, detail);
    }
    if ((cr = GPUK__DRV.cuFuncGetAttribute(&k.max_threads, GPUK__CU_FUNC_MAX_THREADS_PER_BLOCK,
                                           k.cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&k.static_shared, GPUK__CU_FUNC_SHARED_SIZE_BYTES,
                                           k.cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&k.max_dynamic_shared,
                                           GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.cu)) != 0)
        return gpuk__fail_cu(fn, "cuFuncGetAttribute", cr, name);
    k.num_params = -1;
    if (GPUK__DRV.cuFuncGetParamInfo) {
        /* Count parameters by asking for each until the driver says there is none (1). */
        size_t i, off = 0, sz = 0;
        for (i = 0; i < 4096; i++) {
            cr = GPUK__DRV.cuFuncGetParamInfo(k.cu, i, &off, &sz);
            if (cr) break;
            if (i < GPUK__MAX_CHECKED_PARAMS)
                k.param_bytes[i] = (uint16_t)(sz < 65535u ? sz : 65535u);
        }
        if (cr == GPUK__CU_ERROR_INVALID_VALUE) k.num_params = (int)i;
        else if (!gpuk__tolerate(fn, "cuFuncGetParamInfo", cr) &&
                 GPUK__ATOMIC_LOAD(&gpuk__g.broken))
            return gpuk__fail_broken(fn);
    }
    gpuk__copy_text(k.name, sizeof k.name, name);
    k.module_id = module.id;
    kp = &ctx->pools[gpuk__kind_kernel];
    gpuk__mutex_lock(&ctx->lock);
    /* The module may have been unloaded meanwhile: check again under the lock. */
    slot = gpuk__module_lookup(ctx, module.id) ? gpuk__pool_take(kp) : 0;
    if (slot) {
        memcpy(gpuk__pool_slot(kp, slot), &k, sizeof k);
        k.id = gpuk__pool_publish(kp, slot);
    }
    gpuk__mutex_unlock(&ctx->lock);
    if (!slot) {
        if (!gpuk__module_lookup(ctx, module.id)) return gpuk__bad_handle(fn, "module", module.id);
        return gpuk__fail(fn, GPUK_ERR_POOL_FULL, "all %u kernel slots are in use", kp->size - 1);
    }
    out_kernel->id = k.id;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_query(gpuk_ctx* ctx, gpuk_kernel kernel,
                                         gpuk_kernel_info* out_info) {
    const char* const fn = __func__;
    const gpuk__kernel_slot* k;
    gpuk_kernel_info info;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!out_info) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_info is NULL");
    memset(out_info, 0, sizeof *out_info);
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id)))
        return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    memset(&info, 0, sizeof info);
    if ((cr = GPUK__DRV.cuFuncGetAttribute(&info.num_regs, GPUK__CU_FUNC_NUM_REGS, k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.const_bytes, GPUK__CU_FUNC_CONST_SIZE_BYTES,
                                           k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.local_bytes, GPUK__CU_FUNC_LOCAL_SIZE_BYTES,
                                           k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.ptx_version, GPUK__CU_FUNC_PTX_VERSION,
                                           k->cu)) != 0 ||
        (cr = GPUK__DRV.cuFuncGetAttribute(&info.binary_version,
                                           GPUK__CU_FUNC_BINARY_VERSION, k->cu)) != 0)
        return gpuk__fail_cu(fn, "cuFuncGetAttribute", cr, k->name);
    info.static_shared_bytes = k->static_shared;
    info.max_threads_per_block = k->max_threads;
    info.max_dynamic_shared_bytes = GPUK__ATOMIC_LOAD(&k->max_dynamic_shared);
    info.num_params = k->num_params;
    *out_info = info;
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_set_max_dynamic_shared(gpuk_ctx* ctx, gpuk_kernel kernel,
                                                          uint32_t bytes) {
    const char* const fn = __func__;
    gpuk__kernel_slot* k;
    gpuk__cu_result cr;
    gpuk_result r;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id)))
        return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((uint64_t)bytes + (uint64_t)k->static_shared > (uint64_t)ctx->info.shared_per_block_optin)
        return gpuk__fail(fn, GPUK_ERR_LIMIT,
                          "kernel '%s': %u dynamic + %d static shared bytes exceed the device's "
                          "opt-in limit of %d bytes per block", k->name, bytes,
                          k->static_shared, ctx->info.shared_per_block_optin);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuFuncSetAttribute(k->cu, GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)bytes)) != 0)
        return gpuk__fail_cu(fn, "cuFuncSetAttribute", cr, k->name);
    /* atomic: gpuk_launch on another thread reads it */
    GPUK__ATOMIC_STORE(&k->max_dynamic_shared, (int)bytes);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_suggest_block(gpuk_ctx* ctx, gpuk_kernel kernel,
                                                 uint32_t shared_bytes, int* out_block,
                                                 int* out_min_grid) {
    const char* const fn = __func__;
    const gpuk__kernel_slot* k;
    int block = 0, grid = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (out_block) *out_block = 0;
    if (out_min_grid) *out_min_grid = 0;
    if (!out_block) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_block is NULL");
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id)))
        return gpuk__bad_handle(fn, "kernel", kernel.id);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if ((cr = GPUK__DRV.cuOccupancyMaxPotentialBlockSize(&grid, &block, k->cu, NULL,
                                                         shared_bytes, 0)) != 0)
        return gpuk__fail_cu(fn, "cuOccupancyMaxPotentialBlockSize", cr, k->name);
    *out_block = block;
    if (out_min_grid) *out_min_grid = grid;
    return GPUK_OK;
}

/* Kernels hold no driver object of their own: they go with their module. */
static gpuk__cu_result gpuk__kernel_release(gpuk_ctx* ctx, void* slot, const char** out_call) {
    (void)ctx;
    (void)slot;
    (void)out_call;
    return 0;
}

/* ---- >>launch ---- */
static gpuk_launch_desc gpuk__launch_desc_defaults(const gpuk_launch_desc* desc) {
    gpuk_launch_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.grid.y) d.grid.y = 1;
    if (!d.grid.z) d.grid.z = 1;
    if (!d.block.y) d.block.y = 1;
    if (!d.block.z) d.block.z = 1;
    return d;
}

GPUK__IMPL gpuk_launch_desc gpuk_launch_desc_defaults(const gpuk_launch_desc* desc) {
    return gpuk__launch_desc_defaults(desc);
}

static gpuk_result gpuk__launch_limit(const char* fn, const gpuk__kernel_slot* k, const char* what,
                                      uint32_t value, long long limit) {
    return gpuk__fail(fn, GPUK_ERR_LIMIT, "kernel '%s': %s = %u exceeds the limit of %lld", k->name,
                      what, value, limit);
}

/* Shape and shared memory against the device and kernel limits, and (debug) the arguments. */
static gpuk_result gpuk__launch_check(const char* fn, const gpuk_ctx* ctx,
                                      const gpuk__kernel_slot* k, const gpuk_launch_desc* d,
                                      const uint32_t g[3], const uint32_t b[3]) {
    static const char* const gnames[3] = { "grid.x", "grid.y", "grid.z" };
    static const char* const bnames[3] = { "block.x", "block.y", "block.z" };
    int i, max_dynamic_shared = GPUK__ATOMIC_LOAD(&k->max_dynamic_shared);
    if (gpuk__desc_canaries_bad(d->_start_canary, d->_end_canary))
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "gpuk_launch_desc canaries are not zero");
    if (!d->grid.x || !d->block.x)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': %s is 0", k->name,
                          d->grid.x ? "block.x" : "grid.x");
    for (i = 0; i < 3; i++) {
        if (g[i] > (uint32_t)ctx->info.max_grid[i])
            return gpuk__launch_limit(fn, k, gnames[i], g[i], ctx->info.max_grid[i]);
        if (b[i] > (uint32_t)ctx->info.max_block[i])
            return gpuk__launch_limit(fn, k, bnames[i], b[i], ctx->info.max_block[i]);
    }
    if ((uint64_t)b[0] * b[1] * b[2] > (uint64_t)k->max_threads)
        return gpuk__fail(fn, GPUK_ERR_LIMIT,
                          "kernel '%s': block %ux%ux%u = %llu threads exceeds its limit of %d "
                          "threads per block", k->name, b[0], b[1], b[2],
                          (unsigned long long)b[0] * b[1] * b[2], k->max_threads);
    if (d->shared_bytes > (uint32_t)max_dynamic_shared)
        return gpuk__fail(fn, GPUK_ERR_LIMIT,
                          "kernel '%s': %u bytes of dynamic shared memory exceed its limit of %d "
                          "(raise it with gpuk_kernel_set_max_dynamic_shared, up to %d bytes minus "
                          "%d static)", k->name, d->shared_bytes, max_dynamic_shared,
                          ctx->info.shared_per_block_optin, k->static_shared);
    if (k->num_params > 0 && !d->args)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "kernel '%s' takes %d parameters but args is NULL", k->name,
                          k->num_params);
#if GPUK_DEBUG
    if (d->num_args && k->num_params >= 0 && d->num_args != (uint32_t)k->num_params)
        return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                          "kernel '%s' takes %d parameters, num_args is %u", k->name,
                          k->num_params, d->num_args);
    if (d->num_args && d->args) {
        uint32_t a;
        for (a = 0; a < d->num_args; a++) {
            if (!d->args[a])
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                                  "kernel '%s': args[%u] is NULL", k->name, a);
            if (d->arg_sizes && k->num_params >= 0 && a < GPUK__MAX_CHECKED_PARAMS &&
                d->arg_sizes[a] != k->param_bytes[a])
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                                  "kernel '%s': argument %u is %zu bytes, the parameter is %u "
                                  "bytes%s", k->name, a, d->arg_sizes[a],
                                  (unsigned)k->param_bytes[a],
                                  d->arg_sizes[a] == sizeof(gpuk_buffer) &&
                                  k->param_bytes[a] == sizeof(gpuk_devptr)
                                  ? " (a gpuk_buffer handle where the kernel takes a device "
                                    "pointer? pass &p with gpuk_devptr p = "
                                    "gpuk_buffer_devptr(ctx, buffer))"
                                  : "");
        }
    }
#endif
    return GPUK_OK;
}

/* The most blocks of k a cooperative launch may have at threads and shared bytes a block:
   every block must be resident at once for a grid-wide sync, else the launch fails (720) or
   the kernel waits forever. The ctx is current. */
static gpuk_result gpuk__cooperative_max(const char* fn, const gpuk_ctx* ctx,
                                         const gpuk__kernel_slot* k, uint32_t threads,
                                         uint32_t shared, uint32_t* out_max, int* out_per_sm) {
    int can = 0, per_sm = 0;
    gpuk__cu_result cr;
    *out_max = 0;
    *out_per_sm = 0;
    if (!GPUK__DRV.cuOccupancyMaxActiveBlocksPerMultiprocessor)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD, "kernel '%s': a cooperative launch needs "
                          "cuOccupancyMaxActiveBlocksPerMultiprocessor, which this driver lacks",
                          k->name);
    if ((cr = GPUK__DRV.cuDeviceGetAttribute(&can, GPUK__CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                                             ctx->dev)) != 0)
        return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr,
                             "CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH");
    if (!can)
        return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "kernel '%s': device %d (%s) cannot launch "
                          "cooperative kernels", k->name, ctx->info.ordinal, ctx->info.name);
    if ((cr = GPUK__DRV.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->cu, (int)threads,
                                                                    shared)) != 0)
        return gpuk__fail_cu(fn, "cuOccupancyMaxActiveBlocksPerMultiprocessor", cr, k->name);
    *out_per_sm = per_sm;
    *out_max = (uint32_t)per_sm * (uint32_t)ctx->info.sm_count;
    return GPUK_OK;
}

/* A launch asks for clusters when any side is set: x, or y or z over 1 (all 0, and
   GPUK_DIM1(0) = {0, 1, 1}, ask for none); x = 0 beside y or z over 1 is then refused. */
#define GPUK__CLUSTER_ASKED(c) ((c).x || (c).y > 1u || (c).z > 1u)

/* gpuk_launch with clusters, a cooperative grid or a priority: cuLaunchKernelEx with those
   attributes, each checked first so that a refusal says why (the driver's is a bare 1 or
   720). Kept out of gpuk_launch so the plain path pays three compares for it. */
static GPUK__NOINLINE gpuk_result gpuk__launch_ex(const char* fn, gpuk_ctx* ctx,
                                                  const gpuk__kernel_slot* k,
                                                  const gpuk_launch_desc* d, gpuk__cu_stream cs,
                                                  const uint32_t g[3], const uint32_t b[3]) {
    static const char axis[3] = { 'x', 'y', 'z' };
    gpuk__cu_launch_attr attrs[3];
    gpuk__cu_launch_config cfg;
    unsigned int n = 0, i;
    int cluster = 0;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!GPUK__DRV.cuLaunchKernelEx)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD,
                          "kernel '%s': clusters, cooperative launch and launch priorities need "
                          "cuLaunchKernelEx, from a driver for CUDA 11.8 or newer (this one is "
                          "%d.%d)", k->name, gpuk__g.driver_version / 1000,
                          gpuk__g.driver_version % 1000 / 10);
    memset(attrs, 0, sizeof attrs);
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.grid, g, sizeof cfg.grid);
    memcpy(cfg.block, b, sizeof cfg.block);
    cfg.shared_bytes = d->shared_bytes;
    cfg.stream = cs;
    cfg.attrs = attrs;
    if (GPUK__CLUSTER_ASKED(d->cluster)) {
        uint32_t c[3];
        if (!d->cluster.x) /* as for grid and block: x is required, y and z default to 1 */
            return gpuk__fail(fn, GPUK_ERR_INVALID_ARG,
                              "kernel '%s': a cluster of %ux%ux%u has x = 0 (set x too; y and z 0 "
                              "-> 1)", k->name, d->cluster.x, d->cluster.y, d->cluster.z);
        c[0] = d->cluster.x;
        c[1] = d->cluster.y ? d->cluster.y : 1u;
        c[2] = d->cluster.z ? d->cluster.z : 1u;
        if (ctx->info.cc_major < 9)
            return gpuk__fail(fn, GPUK_ERR_UNSUPPORTED, "kernel '%s': thread-block clusters need "
                              "compute capability 9.0 or newer; device %d (%s) is %d.%d", k->name,
                              ctx->info.ordinal, ctx->info.name, ctx->info.cc_major,
                              ctx->info.cc_minor);
        /* the size first: a cluster no device holds is the answer, whatever the grid; each
           side alone first, so that the product cannot wrap */
        if (c[0] > 8u || c[1] > 8u || c[2] > 8u || c[0] * c[1] * c[2] > 8u)
            return gpuk__fail(fn, GPUK_ERR_LIMIT,
                              "kernel '%s': a cluster of %ux%ux%u blocks exceeds the portable "
                              "cluster size of 8 blocks", k->name, c[0], c[1], c[2]);
        for (i = 0; i < 3; i++)
            if (g[i] % c[i])
                return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': cluster.%c = %u does not "
                                  "divide grid.%c = %u", k->name, axis[i], c[i], axis[i], g[i]);
        attrs[n].id = GPUK__CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        memcpy(attrs[n].value.dim, c, sizeof c);
        n++;
        cluster = 1;
    }
    if (d->priority && gpuk__g.driver_version < 12000)
        return gpuk__fail(fn, GPUK_ERR_DRIVER_TOO_OLD,
                          "kernel '%s': a launch priority needs a driver "
                          "for CUDA 12.0 or newer (this one is %d.%d); use a stream's priority "
                          "(gpuk_stream_desc.priority)", k->name, gpuk__g.driver_version / 1000,
                          gpuk__g.driver_version % 1000 / 10);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    if (cluster && GPUK__DRV.cuOccupancyMaxActiveClusters) {
        /* a cluster's blocks must all fit on one GPU processing cluster at once: where the
           threads, shared memory or registers they need do not, the driver's launch fails
           with a bare CUDA_ERROR_CLUSTER_OUT_OF_RESOURCES (912) */
        int fit = 0;
        cfg.num_attrs = n;
        cr = GPUK__DRV.cuOccupancyMaxActiveClusters(
            &fit, k->cu, (const struct CUlaunchConfig_st*)(const void*)&cfg);
        if (cr) return gpuk__fail_cu(fn, "cuOccupancyMaxActiveClusters", cr, k->name);
        if (fit < 1)
            return gpuk__fail(fn, GPUK_ERR_LIMIT,
                              "kernel '%s': no cluster of %ux%ux%u blocks of %u threads and %u "
                              "bytes of dynamic shared memory fits on the device at once "
                              "(cuOccupancyMaxActiveClusters: 0); use smaller clusters or blocks",
                              k->name, attrs[0].value.dim[0], attrs[0].value.dim[1],
                              attrs[0].value.dim[2], b[0] * b[1] * b[2], d->shared_bytes);
    }
    if (d->cooperative) {
        uint32_t max = 0;
        int per_sm = 0;
        uint64_t blocks = (uint64_t)g[0] * g[1] * g[2];
        if ((r = gpuk__cooperative_max(fn, ctx, k, b[0] * b[1] * b[2], d->shared_bytes, &max,
                                       &per_sm)) != GPUK_OK)
            return r;
        if (blocks > max)
            return gpuk__fail(fn, GPUK_ERR_LIMIT,
                              "kernel '%s': a cooperative grid of %llu blocks exceeds the %u the "
                              "device holds at once (%d a multiprocessor x %d multiprocessors at "
                              "%u threads and %u bytes of dynamic shared memory a block; "
                              "gpuk_kernel_max_cooperative_grid)", k->name,
                              (unsigned long long)blocks, max, per_sm, ctx->info.sm_count,
                              b[0] * b[1] * b[2], d->shared_bytes);
        attrs[n].id = GPUK__CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n].value.i = 1;
        n++;
    }
    if (d->priority) {
        attrs[n].id = GPUK__CU_LAUNCH_ATTRIBUTE_PRIORITY;
        attrs[n].value.i = d->priority;
        n++;
    }
    cfg.num_attrs = n;
    cr = GPUK__DRV.cuLaunchKernelEx((const struct CUlaunchConfig_st*)(const void*)&cfg, k->cu,
                                    d->args, NULL);
    if (cr) return gpuk__fail_cu(fn, "cuLaunchKernelEx", cr, k->name);
    gpuk__launch_note(ctx, k->name);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_launch(gpuk_ctx* ctx, gpuk_kernel kernel,
                                   const gpuk_launch_desc* desc) {
    const char* const fn = __func__;
    const gpuk__kernel_slot* k;
    gpuk_launch_desc d;
    gpuk__cu_stream cs;
    gpuk__cu_result cr;
    gpuk_result r;
    uint32_t g[3], b[3];
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (GPUK__UNLIKELY(!desc)) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "desc is NULL");
    if (GPUK__UNLIKELY(!(k = gpuk__kernel_lookup(ctx, kernel.id))))
        return gpuk__bad_handle(fn, "kernel", kernel.id);
    d = gpuk__launch_desc_defaults(desc);
    if ((r = gpuk__stream_resolve(fn, ctx, d.stream, &cs)) != GPUK_OK) return r;
    g[0] = d.grid.x; g[1] = d.grid.y; g[2] = d.grid.z;
    b[0] = d.block.x; b[1] = d.block.y; b[2] = d.block.z;
    if ((r = gpuk__launch_check(fn, ctx, k, &d, g, b)) != GPUK_OK) return r;
    if (GPUK__UNLIKELY(GPUK__CLUSTER_ASKED(d.cluster) || d.cooperative || d.priority))
        return gpuk__launch_ex(fn, ctx, k, &d, cs, g, b);
    if ((r = gpuk__enter(fn, ctx)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuLaunchKernel(k->cu, g[0], g[1], g[2], b[0], b[1], b[2], d.shared_bytes, cs,
                                  d.args, NULL);
    if (GPUK__UNLIKELY(cr)) return gpuk__fail_cu(fn, "cuLaunchKernel", cr, k->name);
    gpuk__launch_note(ctx, k->name);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_kernel_max_cooperative_grid(gpuk_ctx* ctx, gpuk_kernel kernel,
                                                        uint32_t block, uint32_t shared_bytes,
                                                        uint32_t* out_blocks) {
    const char* const fn = __func__;
    const gpuk__kernel_slot* k;
    int per_sm = 0;
    if (!out_blocks) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_blocks is NULL");
    *out_blocks = 0;
    GPUK__ALIVE(fn);
    GPUK__CTX_CHECK(fn, ctx);
    if (!(k = gpuk__kernel_lookup(ctx, kernel.id)))
        return gpuk__bad_handle(fn, "kernel", kernel.id);
    if (!block) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "kernel '%s': block is 0", k->name);
    if (block > (uint32_t)k->max_threads)
        return gpuk__launch_limit(fn, k, "block", block, k->max_threads);
    GPUK__ENTER(fn, ctx);
    return gpuk__cooperative_max(fn, ctx, k, block, shared_bytes, out_blocks, &per_sm);
}
