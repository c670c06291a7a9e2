/* tests/compile/driver_sigs.c - gpuk's driver function types must match the toolkit's
   cudaTypedefs.h. Each row's PFN_<symbol>_v<abi> is assigned to gpuk__pfn_<symbol>; under -Werror
   a mismatch in argument count, pointer level or width fails the build. Needs the CUDA toolkit
   headers.
   cc -std=c99 -Werror -I../.. -I/usr/local/cuda/include driver_sigs.c -ldl */
#include <cuda.h>
#include <cudaTypedefs.h>
/* the IPC rows take cuda.h's handle structs by value: name them, so the rows compare */
#define GPUK__CU_IPC_MEM_HANDLE CUipcMemHandle_v1
#define GPUK__CU_IPC_EVENT_HANDLE CUipcEventHandle_v1
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include <stdio.h>

#define CHECK_ROW(name, ver, exp, req, params) \
    { PFN_##name##_v##ver official = 0; gpuk__pfn_##name ours = official; (void)ours; rows++; }

int main(void) {
    int rows = 0;
    GPUK__DRIVER_FUNCS(CHECK_ROW)
    /* the constants gpuk copies from cuda.h */
    _Static_assert((int)GPUK__CU_STREAM_NON_BLOCKING == (int)CU_STREAM_NON_BLOCKING, "stream flag");
    _Static_assert((int)GPUK__CU_EVENT_DISABLE_TIMING == (int)CU_EVENT_DISABLE_TIMING, "event flag");
    _Static_assert((int)GPUK__CU_EVENT_RECORD_EXTERNAL == (int)CU_EVENT_RECORD_EXTERNAL, "event record flag");
    _Static_assert((int)GPUK__CU_STREAM_CAPTURE_ACTIVE == (int)CU_STREAM_CAPTURE_STATUS_ACTIVE, "capture status");
    _Static_assert((int)GPUK__CU_EVENT_BLOCKING_SYNC == (int)CU_EVENT_BLOCKING_SYNC, "event flag");
    _Static_assert((int)GPUK__CU_MEMHOSTALLOC_PORTABLE == (int)CU_MEMHOSTALLOC_PORTABLE, "host alloc flag");
    _Static_assert((int)GPUK__CU_MEMHOSTREGISTER_PORTABLE == (int)CU_MEMHOSTREGISTER_PORTABLE, "register flag");
    _Static_assert((int)GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE == (int)CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "ptr attr");
    _Static_assert((int)GPUK__CU_POINTER_ATTRIBUTE_CONTEXT == (int)CU_POINTER_ATTRIBUTE_CONTEXT, "ptr attr");
    _Static_assert((int)GPUK__CU_MEMORYTYPE_HOST == (int)CU_MEMORYTYPE_HOST, "memory type");
    _Static_assert((int)GPUK__CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL == (int)CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "ptr attr");
    _Static_assert((int)GPUK__CU_JIT_INFO_LOG_BUFFER == (int)CU_JIT_INFO_LOG_BUFFER, "jit");
    _Static_assert((int)GPUK__CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES == (int)CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, "jit");
    _Static_assert((int)GPUK__CU_JIT_ERROR_LOG_BUFFER == (int)CU_JIT_ERROR_LOG_BUFFER, "jit");
    _Static_assert((int)GPUK__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == (int)CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "jit");
    _Static_assert((int)GPUK__CU_JIT_INPUT_CUBIN == (int)CU_JIT_INPUT_CUBIN &&
                   (int)GPUK__CU_JIT_INPUT_PTX == (int)CU_JIT_INPUT_PTX &&
                   (int)GPUK__CU_JIT_INPUT_FATBINARY == (int)CU_JIT_INPUT_FATBINARY &&
                   (int)GPUK__CU_JIT_INPUT_OBJECT == (int)CU_JIT_INPUT_OBJECT &&
                   (int)GPUK__CU_JIT_INPUT_LIBRARY == (int)CU_JIT_INPUT_LIBRARY, "link input");
    _Static_assert((int)GPUK__CU_FUNC_MAX_THREADS_PER_BLOCK == (int)CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "attr");
    _Static_assert((int)GPUK__CU_FUNC_SHARED_SIZE_BYTES == (int)CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "attr");
    _Static_assert((int)GPUK__CU_FUNC_CONST_SIZE_BYTES == (int)CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "attr");
    _Static_assert((int)GPUK__CU_FUNC_LOCAL_SIZE_BYTES == (int)CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "attr");
    _Static_assert((int)GPUK__CU_FUNC_NUM_REGS == (int)CU_FUNC_ATTRIBUTE_NUM_REGS, "attr");
    _Static_assert((int)GPUK__CU_FUNC_PTX_VERSION == (int)CU_FUNC_ATTRIBUTE_PTX_VERSION, "attr");
    _Static_assert((int)GPUK__CU_FUNC_BINARY_VERSION == (int)CU_FUNC_ATTRIBUTE_BINARY_VERSION, "attr");
    _Static_assert((int)GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES == (int)CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "attr");
    _Static_assert((int)GPUK__CU_GET_PROC_ADDRESS_LEGACY_STREAM == (int)CU_GET_PROC_ADDRESS_LEGACY_STREAM, "proc");
    _Static_assert((int)GPUK__CU_ERROR_NOT_READY == (int)CUDA_ERROR_NOT_READY, "code");
    _Static_assert(sizeof(gpuk_devptr) == sizeof(CUdeviceptr), "devptr");
    _Static_assert((int)GPUK__CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH == (int)CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "attr");
    _Static_assert((int)GPUK__CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED == (int)CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "attr");
    _Static_assert((int)GPUK__CU_MEMPOOL_ATTR_RELEASE_THRESHOLD == (int)CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "mempool attr");
    _Static_assert(sizeof(uint64_t) == sizeof(cuuint64_t), "the release threshold's type");
    _Static_assert((int)GPUK__CU_LAUNCH_ATTRIBUTE_COOPERATIVE == (int)CU_LAUNCH_ATTRIBUTE_COOPERATIVE, "launch attr");
    _Static_assert((int)GPUK__CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION == (int)CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, "launch attr");
    _Static_assert((int)GPUK__CU_LAUNCH_ATTRIBUTE_PRIORITY == (int)CU_LAUNCH_ATTRIBUTE_PRIORITY, "launch attr");
    _Static_assert((int)GPUK__CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "tensor map");
    _Static_assert((int)GPUK__CU_TENSOR_MAP_SWIZZLE_128B == (int)CU_TENSOR_MAP_SWIZZLE_128B, "tensor map");
    _Static_assert((int)GPUK__CU_TENSOR_MAP_L2_PROMOTION_L2_256B == (int)CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "tensor map");
    _Static_assert(CU_TENSOR_MAP_INTERLEAVE_NONE == 0 && CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE == 0, "tensor map");
    _Static_assert(sizeof(CUtensorMap) == 128, "tensor map size");
    _Static_assert((int)GPUK__CU_STREAM_CAPTURE_MODE_GLOBAL == (int)CU_STREAM_CAPTURE_MODE_GLOBAL, "capture mode");
    _Static_assert((int)GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL == (int)CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "capture mode");
    _Static_assert((int)GPUK__CU_STREAM_CAPTURE_MODE_RELAXED == (int)CU_STREAM_CAPTURE_MODE_RELAXED, "capture mode");
    _Static_assert((int)GPUK__CU_STREAM_CAPTURE_STATUS_NONE == (int)CU_STREAM_CAPTURE_STATUS_NONE, "capture status");
    _Static_assert((int)GPUK__CU_LIMIT_STACK_SIZE == (int)CU_LIMIT_STACK_SIZE, "limit");
    _Static_assert((int)GPUK__CU_LIMIT_PRINTF_FIFO_SIZE == (int)CU_LIMIT_PRINTF_FIFO_SIZE, "limit");
    _Static_assert((int)GPUK__CU_LIMIT_MALLOC_HEAP_SIZE == (int)CU_LIMIT_MALLOC_HEAP_SIZE, "limit");
    _Static_assert((int)GPUK__CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH == (int)CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, "limit");
    _Static_assert((int)GPUK__CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT == (int)CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, "limit");
    _Static_assert((int)GPUK__CU_ERROR_INVALID_VALUE == (int)CUDA_ERROR_INVALID_VALUE, "code");
    /* CUDA IPC: gpuk's own handle struct has cuda.h's layout (the same ABI by value) */
    _Static_assert(sizeof(gpuk__cu_ipc_handle) == sizeof(CUipcMemHandle) &&
                   sizeof(gpuk__cu_ipc_handle) == sizeof(CUipcEventHandle) &&
                   _Alignof(gpuk__cu_ipc_handle) == _Alignof(CUipcMemHandle) &&
                   _Alignof(gpuk__cu_ipc_handle) == _Alignof(CUipcEventHandle), "IPC handle");
    _Static_assert((int)GPUK__CU_EVENT_INTERPROCESS == (int)CU_EVENT_INTERPROCESS, "event flag");
    _Static_assert((int)GPUK__CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS ==
                   (int)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, "IPC flag");
    _Static_assert((int)GPUK__CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING ==
                   (int)CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "attr");
    _Static_assert((int)GPUK__CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED ==
                   (int)CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, "attr");
    _Static_assert((int)GPUK__CU_ERROR_NOT_SUPPORTED == (int)CUDA_ERROR_NOT_SUPPORTED, "code");
    _Static_assert((int)GPUK__CU_ERROR_INVALID_CONTEXT == (int)CUDA_ERROR_INVALID_CONTEXT, "code");
    _Static_assert((int)GPUK__CU_MEMHOSTALLOC_DEVICEMAP == (int)CU_MEMHOSTALLOC_DEVICEMAP &&
                   (int)GPUK__CU_MEMHOSTREGISTER_DEVICEMAP == (int)CU_MEMHOSTREGISTER_DEVICEMAP &&
                   (int)GPUK__CU_MEM_ATTACH_GLOBAL == (int)CU_MEM_ATTACH_GLOBAL &&
                   (int)GPUK__CU_DEVICE_CPU == (int)CU_DEVICE_CPU, "host memory flags");
    _Static_assert((int)GPUK__CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY == (int)CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY &&
                   (int)GPUK__CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY == (int)CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY &&
                   (int)GPUK__CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS == (int)CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS &&
                   (int)GPUK__CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS == (int)CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS &&
                   CU_DEVICE_ATTRIBUTE_INTEGRATED == 18, "host memory attributes");
    /* gpuk_advice passes its values through as CUmem_advise's */
    _Static_assert((int)GPUK_ADVICE_SET_READ_MOSTLY == (int)CU_MEM_ADVISE_SET_READ_MOSTLY &&
                   (int)GPUK_ADVICE_UNSET_READ_MOSTLY == (int)CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
                   (int)GPUK_ADVICE_SET_PREFERRED_LOCATION == (int)CU_MEM_ADVISE_SET_PREFERRED_LOCATION &&
                   (int)GPUK_ADVICE_UNSET_PREFERRED_LOCATION == (int)CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION &&
                   (int)GPUK_ADVICE_SET_ACCESSED_BY == (int)CU_MEM_ADVISE_SET_ACCESSED_BY &&
                   (int)GPUK_ADVICE_UNSET_ACCESSED_BY == (int)CU_MEM_ADVISE_UNSET_ACCESSED_BY,
                   "advice");
    /* cuLaunchKernelEx's structs, which gpuk lays out by hand */
#define SAME_FIELD(ours, theirs, a, b) \
    _Static_assert(offsetof(ours, a) == offsetof(theirs, b) && sizeof(((ours*)0)->a) == sizeof(((theirs*)0)->b), #a)
    _Static_assert(sizeof(gpuk__cu_launch_attr) == sizeof(CUlaunchAttribute), "CUlaunchAttribute size");
    _Static_assert(_Alignof(gpuk__cu_launch_attr) == _Alignof(CUlaunchAttribute), "CUlaunchAttribute alignment");
    SAME_FIELD(gpuk__cu_launch_attr, CUlaunchAttribute, id, id);
    SAME_FIELD(gpuk__cu_launch_attr, CUlaunchAttribute, value, value);
    _Static_assert(sizeof(((gpuk__cu_launch_attr*)0)->value.dim) == sizeof(((CUlaunchAttribute*)0)->value.clusterDim), "clusterDim");
    _Static_assert(sizeof(((gpuk__cu_launch_attr*)0)->value.i) == sizeof(((CUlaunchAttribute*)0)->value.priority), "priority");
    _Static_assert(sizeof(gpuk__cu_launch_config) == sizeof(CUlaunchConfig), "CUlaunchConfig size");
    /* grid[3], block[3]: three consecutive unsigned ints each in cuda.h */
    _Static_assert(offsetof(gpuk__cu_launch_config, grid) == offsetof(CUlaunchConfig, gridDimX), "grid");
    _Static_assert(offsetof(gpuk__cu_launch_config, block) == offsetof(CUlaunchConfig, blockDimX), "block");
    SAME_FIELD(gpuk__cu_launch_config, CUlaunchConfig, shared_bytes, sharedMemBytes);
    SAME_FIELD(gpuk__cu_launch_config, CUlaunchConfig, stream, hStream);
    SAME_FIELD(gpuk__cu_launch_config, CUlaunchConfig, attrs, attrs);
    SAME_FIELD(gpuk__cu_launch_config, CUlaunchConfig, num_attrs, numAttrs);
    _Static_assert(offsetof(CUlaunchConfig, blockDimX) == offsetof(CUlaunchConfig, gridDimX) + 12, "grid as an array");
    _Static_assert(offsetof(CUlaunchConfig, sharedMemBytes) == offsetof(CUlaunchConfig, blockDimX) + 12, "block as an array");
    /* cuGraphAddNode's CUgraphNodeParams with a CUDA_CONDITIONAL_NODE_PARAMS (conditional
       nodes), also laid out by hand */
    _Static_assert(sizeof(gpuk__cu_cond_node_params) == sizeof(CUgraphNodeParams), "CUgraphNodeParams size");
    _Static_assert(_Alignof(gpuk__cu_cond_node_params) == _Alignof(CUgraphNodeParams), "CUgraphNodeParams alignment");
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, type, type);
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, u.cond.handle, conditional.handle);
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, u.cond.type, conditional.type);
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, u.cond.size, conditional.size);
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, u.cond.out_bodies, conditional.phGraph_out);
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, u.cond.ctx, conditional.ctx);
    SAME_FIELD(gpuk__cu_cond_node_params, CUgraphNodeParams, reserved2, reserved2);
    _Static_assert((int)GPUK__CU_GRAPH_NODE_TYPE_CONDITIONAL == (int)CU_GRAPH_NODE_TYPE_CONDITIONAL &&
                   (int)GPUK__CU_GRAPH_COND_ASSIGN_DEFAULT == (int)CU_GRAPH_COND_ASSIGN_DEFAULT &&
                   (int)GPUK__CU_GRAPH_COND_TYPE_IF == (int)CU_GRAPH_COND_TYPE_IF &&
                   (int)GPUK__CU_GRAPH_COND_TYPE_WHILE == (int)CU_GRAPH_COND_TYPE_WHILE, "conditional");
#undef SAME_FIELD
    if (GPUK__CU_STREAM_LEGACY != CU_STREAM_LEGACY) { printf("FAIL GPUK__CU_STREAM_LEGACY\n"); return 1; }
    {   /* the cuGetProcAddress ABIs gpuk calls by hand */
        PFN_cuGetProcAddress_v11030 v1 = 0; gpuk__pfn_get_proc_v1 g1 = v1; (void)g1;
        PFN_cuGetProcAddress_v12000 v2 = 0; gpuk__pfn_get_proc_v2 g2 = (gpuk__pfn_get_proc_v2)v2; (void)g2;
    }
    printf("1 passed, 0 failed, 0 skipped (driver_sigs: all %d driver rows match cudaTypedefs.h)\n", rows);
    return 0;
}
