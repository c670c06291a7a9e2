/* src/gpuk_device.h - part of gpuk.h: device count, attributes and queries. */
/* ---- >>device ---- */
static gpuk_result gpuk__device_get(const char* fn, int device, gpuk__cu_device* out) {
    int count = 0;
    gpuk__cu_result r = GPUK__DRV.cuDeviceGetCount(&count);
    if (r) return gpuk__fail_cu(fn, "cuDeviceGetCount", r, NULL);
    if (device < 0 || device >= count)
        return gpuk__fail(fn, count ? GPUK_ERR_INVALID_ARG : 100, "device %d does not exist "
                          "(%d CUDA devices)", device, count);
    r = GPUK__DRV.cuDeviceGet(out, device);
    if (r) return gpuk__fail_cu(fn, "cuDeviceGet", r, NULL);
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_count(int* out_count) {
    const char* const fn = __func__;
    gpuk__cu_result r;
    if (!out_count) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_count is NULL");
    *out_count = 0;
    GPUK__READY(fn);
    r = GPUK__DRV.cuDeviceGetCount(out_count);
    if (r) {
        *out_count = 0;
        return gpuk__fail_cu(fn, "cuDeviceGetCount", r, NULL);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_attribute(int device, int cu_attribute, int* out_value) {
    const char* const fn = __func__;
    gpuk__cu_device dev;
    gpuk__cu_result cr;
    gpuk_result r;
    if (!out_value) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_value is NULL");
    *out_value = 0;
    GPUK__READY(fn);
    if ((r = gpuk__device_get(fn, device, &dev)) != GPUK_OK) return r;
    cr = GPUK__DRV.cuDeviceGetAttribute(out_value, (unsigned)cu_attribute, dev);
    if (cr) {
        *out_value = 0;
        return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr, NULL);
    }
    return GPUK_OK;
}

/* gpuk_device_query's body; fn names the public call errors are reported under. */
static gpuk_result gpuk__device_query(const char* fn, int device, gpuk_device_info* out_info) {
    /* CU_DEVICE_ATTRIBUTE_* numbers, paired with where they land. */
    struct { unsigned attr; size_t offset; } const attrs[] = {
        { 75, offsetof(gpuk_device_info, cc_major) }, { 76, offsetof(gpuk_device_info, cc_minor) },
        { 16, offsetof(gpuk_device_info, sm_count) }, { 13, offsetof(gpuk_device_info, clock_khz) },
        { 36, offsetof(gpuk_device_info, mem_clock_khz) },
        { 37, offsetof(gpuk_device_info, mem_bus_bits) },
        { 38, offsetof(gpuk_device_info, l2_bytes) },
        { 8, offsetof(gpuk_device_info, shared_per_block) },
        { 97, offsetof(gpuk_device_info, shared_per_block_optin) },
        { 81, offsetof(gpuk_device_info, shared_per_sm) },
        { 12, offsetof(gpuk_device_info, regs_per_block) },
        { 1, offsetof(gpuk_device_info, max_threads_per_block) },
        { 39, offsetof(gpuk_device_info, max_threads_per_sm) },
        { 10, offsetof(gpuk_device_info, warp_size) },
        { 2, offsetof(gpuk_device_info, max_block) },
        { 3, offsetof(gpuk_device_info, max_block) + sizeof(int) },
        { 4, offsetof(gpuk_device_info, max_block) + 2 * sizeof(int) },
        { 5, offsetof(gpuk_device_info, max_grid) },
        { 6, offsetof(gpuk_device_info, max_grid) + sizeof(int) },
        { 7, offsetof(gpuk_device_info, max_grid) + 2 * sizeof(int) },
        { 18, offsetof(gpuk_device_info, integrated) },
        { 40, offsetof(gpuk_device_info, async_engines) },
        { GPUK__CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
          offsetof(gpuk_device_info, can_map_host_memory) },
        { GPUK__CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, offsetof(gpuk_device_info, managed_memory) },
        { GPUK__CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
          offsetof(gpuk_device_info, concurrent_managed_access) },
        { GPUK__CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
          offsetof(gpuk_device_info, pageable_memory_access) },
    };
    gpuk__cu_device dev;
    gpuk__cu_result cr;
    gpuk_result r;
    size_t i;
    if (!out_info) return gpuk__fail(fn, GPUK_ERR_INVALID_ARG, "out_info is NULL");
    memset(out_info, 0, sizeof *out_info);
    GPUK__READY(fn);
    if ((r = gpuk__device_get(fn, device, &dev)) != GPUK_OK) return r;
    out_info->ordinal = device;
    out_info->driver_version = gpuk__g.driver_version;
    if ((cr = GPUK__DRV.cuDeviceGetName(out_info->name,
                                        (int)sizeof out_info->name - 1, dev)) != 0) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_cu(fn, "cuDeviceGetName", cr, NULL);
    }
    if ((cr = GPUK__DRV.cuDeviceTotalMem(&out_info->total_bytes, dev)) != 0) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_cu(fn, "cuDeviceTotalMem", cr, NULL);
    }
    for (i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        if ((cr = GPUK__DRV.cuDeviceGetAttribute(&v, attrs[i].attr, dev)) != 0) {
            memset(out_info, 0, sizeof *out_info);
            return gpuk__fail_cu(fn, "cuDeviceGetAttribute", cr, NULL);
        }
        memcpy((char*)out_info + attrs[i].offset, &v, sizeof v);
    }
    /* Bus id is informative only; a driver that cannot tell leaves it empty. */
    if (!gpuk__tolerate(fn, "cuDeviceGetPCIBusId",
                        GPUK__DRV.cuDeviceGetPCIBusId(out_info->pci_bus_id,
                                                      (int)sizeof out_info->pci_bus_id - 1, dev)))
        out_info->pci_bus_id[0] = 0;
    if (GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_broken(fn);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_query(int device, gpuk_device_info* out_info) {
    return gpuk__device_query(__func__, device, out_info);
}
