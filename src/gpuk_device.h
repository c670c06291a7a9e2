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

/* ---- the GPU's NUMA node ---- */
/* Linux tells a PCI device's node and a node's CPUs in sysfs; anything missing or odd there
   reads as "unknown", which leaves the staging as on any other system (>>staging). */
#if !defined(GPUK__SYSFS_ROOT)
#define GPUK__SYSFS_ROOT "/sys" /* tests point it at a tree of their own */
#endif

/* One CPU number at *p (advanced past it): 1, or 0 where there is none or it is beyond the
   mask. */
static int gpuk__cpu_number(const char** p, unsigned* out) {
    unsigned v = 0;
    const char* s = *p;
    if (*s < '0' || *s > '9') return 0;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10u + (unsigned)(*s - '0')) >= GPUK__CPU_SET_BITS) return 0;
    *p = s;
    *out = v;
    return 1;
}

/* A node's cpulist, the kernel's list form ("0-15,32-47", a newline at the end, "" for a node
   without CPUs), into *out: the number of CPUs in it, or -1 (and *out empty) for anything
   else: another character, a range backwards, a CPU the mask cannot hold. */
static int gpuk__cpulist_parse(const char* s, gpuk__cpu_set* out) {
    int count = 0, items = 0;
    memset(out, 0, sizeof *out);
    while (*s && *s != '\n') {
        unsigned lo, hi, c;
        if (items++ && *s++ != ',') goto bad; /* each item after the first follows a comma */
        if (!gpuk__cpu_number(&s, &lo)) goto bad;
        hi = lo;
        if (*s == '-') {
            s++;
            if (!gpuk__cpu_number(&s, &hi) || hi < lo) goto bad;
        }
        for (c = lo; c <= hi; c++) {
            unsigned long bit = 1ul << (c % GPUK__CPU_WORD_BITS);
            count += !(out->bits[c / GPUK__CPU_WORD_BITS] & bit);
            out->bits[c / GPUK__CPU_WORD_BITS] |= bit;
        }
    }
    if (*s == '\n') s++;
    if (!*s) return count;
bad:
    memset(out, 0, sizeof *out);
    return -1;
}

/* The NUMA node of the PCI device bus_id ("0000:3B:00.0", either case), from its numa_node
   file in sysfs (named in lower case); -1 where unknown: not Linux, no such file, -1 there
   (firmware that does not tell, or a machine of one node) or anything but a node number. */
static int gpuk__pci_numa_node(const char* bus_id) {
    char id[32], path[512], text[32];
    const char* p = text;
    size_t i;
    int node = 0;
    for (i = 0; bus_id[i]; i++) {
        char c = bus_id[i];
        if (i + 1 >= sizeof id ||
            !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
              c == ':' || c == '.'))
            return -1;
        id[i] = c;
        if (c >= 'A' && c <= 'F') id[i] = "abcdef"[c - 'A'];
    }
    id[i] = 0;
    if (!i || id[0] == '.' || /* nothing that could name a folder above the devices' */
        gpuk__fmt(path, sizeof path, 0, "%s/bus/pci/devices/%s/numa_node", GPUK__SYSFS_ROOT,
                  id) + 1 >= sizeof path ||
        gpuk__file_read_small(path, text, sizeof text) < 0 || *p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((node = node * 10 + (*p - '0')) > 65535) return -1; /* no such node */
    if (*p == '\n') p++;
    return *p ? -1 : node;
}

/* The CPUs of NUMA node `node` that the calling thread may run on (the node's cpulist and the
   thread's affinity mask) into *out, and their number; 0 (and *out empty) where unknown: node
   -1, no or an odd cpulist, no affinity calls, or none of the node's CPUs allowed. */
static unsigned gpuk__numa_cpus(int node, gpuk__cpu_set* out) {
    char path[512], text[4096]; /* every list of up to GPUK__CPU_SET_BITS CPUs fits */
    gpuk__cpu_set allowed;
    unsigned i, count = 0;
    memset(out, 0, sizeof *out);
    if (node < 0 ||
        gpuk__fmt(path, sizeof path, 0, "%s/devices/system/node/node%d/cpulist",
                  GPUK__SYSFS_ROOT, node) + 1 >= sizeof path ||
        gpuk__file_read_small(path, text, sizeof text) < 0 ||
        gpuk__cpulist_parse(text, out) <= 0 || !gpuk__affinity_get(&allowed)) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    for (i = 0; i < sizeof out->bits / sizeof out->bits[0]; i++) {
        unsigned long w = out->bits[i] &= allowed.bits[i];
        for (; w; w &= w - 1u) count++;
    }
    return count;
}

/* The NUMA node of device's GPU for gpuk_ctx_desc_defaults, which cannot fail: -1 before
   gpuk_init has loaded the driver, after a fault, for a device that does not exist, or where
   a driver call fails; neither the logger nor gpuk_last_error hears of it. */
static int gpuk__device_numa_node_quiet(int device) {
    char bus_id[32];
    gpuk__cu_device dev;
    int count = 0;
    if (!GPUK__ATOMIC_LOAD(&gpuk__g.initialized) || GPUK__ATOMIC_LOAD(&gpuk__g.broken) ||
        GPUK__DRV.cuDeviceGetCount(&count) != 0 || device < 0 || device >= count ||
        GPUK__DRV.cuDeviceGet(&dev, device) != 0)
        return -1;
    memset(bus_id, 0, sizeof bus_id);
    if (GPUK__DRV.cuDeviceGetPCIBusId(bus_id, (int)sizeof bus_id - 1, dev) != 0) return -1;
    return gpuk__pci_numa_node(bus_id);
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
    out_info->numa_node = out_info->pci_bus_id[0] ? gpuk__pci_numa_node(out_info->pci_bus_id) : -1;
    if (GPUK__ATOMIC_LOAD(&gpuk__g.broken)) {
        memset(out_info, 0, sizeof *out_info);
        return gpuk__fail_broken(fn);
    }
    return GPUK_OK;
}

GPUK__IMPL gpuk_result gpuk_device_query(int device, gpuk_device_info* out_info) {
    return gpuk__device_query(__func__, device, out_info);
}
