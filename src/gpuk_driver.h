/* src/gpuk_driver.h - part of gpuk.h: the driver's and NVRTC's entry points; process-wide state. */
/* ---- >>driver ---- */
/* Private aliases for the driver's types. Struct tags are cuda.h's, so tests/compile/driver_sigs.c
   can assign each official PFN_ type to ours; CUresult and the enums are non-negative enums, which
   C compilers give the type unsigned int. */
typedef unsigned int gpuk__cu_result;
typedef int gpuk__cu_device;
typedef struct CUctx_st* gpuk__cu_context;
typedef struct CUmod_st* gpuk__cu_module;
typedef struct CUfunc_st* gpuk__cu_function;
typedef struct CUstream_st* gpuk__cu_stream;
typedef struct CUevent_st* gpuk__cu_event;
typedef struct CUmemPoolHandle_st* gpuk__cu_mempool;
typedef void(GPUK__CUDAAPI* gpuk__cu_host_fn)(void* user_data);
typedef size_t(GPUK__CUDAAPI* gpuk__cu_b2d_fn)(int block_size);
struct CUlaunchConfig_st;
struct CUlib_st;
struct CUtensorMap_st; /* 128 bytes, 64-byte aligned: GEMM's TMA path (gpuk__tmap) */
typedef struct CUgraph_st* gpuk__cu_graph;
typedef struct CUgraphExec_st* gpuk__cu_graph_exec;
typedef struct CUgraphNode_st* gpuk__cu_graph_node;
typedef struct CUlinkState_st* gpuk__cu_link_state;
struct CUgraphNodeParams_st;
struct CUgraphEdgeData_st;
/* cuGraphAddNode's CUgraphNodeParams holding a CUDA_CONDITIONAL_NODE_PARAMS, laid out as cuda.h
   does (256 bytes; tests/compile/driver_sigs.c compares). gpuk's own tag, as for the launch
   config: the call casts. */
typedef struct gpuk__cu_cond_node_params {
    unsigned int type; /* CU_GRAPH_NODE_TYPE_CONDITIONAL */
    int reserved0[3];
    union {
        long long reserved1[29];
        struct {
            uint64_t handle;
            unsigned int type; /* CU_GRAPH_COND_TYPE_* */
            unsigned int size; /* bodies: 1 */
            gpuk__cu_graph* out_bodies;
            gpuk__cu_context ctx;
        } cond;
    } u;
    long long reserved2;
} gpuk__cu_cond_node_params;
/* cuLaunchKernelEx's CUlaunchConfig and CUlaunchAttribute, laid out as cuda.h does (the attribute
   value is a 64-byte union holding pointers; tests/compile/driver_sigs.c compares sizes and
   offsets). gpuk's own tags: cuda.h's CUlaunchConfig_st stays opaque here, so a program may include
   both headers; the call casts. */
typedef struct gpuk__cu_launch_attr {
    unsigned int id;
    char pad[4];
    union { char bytes[64]; void* align_; int i; unsigned int dim[3]; } value;
} gpuk__cu_launch_attr;
typedef struct gpuk__cu_launch_config {
    unsigned int grid[3], block[3], shared_bytes;
    struct CUstream_st* stream;
    gpuk__cu_launch_attr* attrs;
    unsigned int num_attrs;
} gpuk__cu_launch_config;
/* CUipcMemHandle and CUipcEventHandle: 64 bytes that the IPC entry points take and give by
   value, so gpuk needs a complete struct of that layout. Its own tag: cuda.h's would clash in a
   program that includes both headers. tests/compile/driver_sigs.c defines the two macros as
   cuda.h's types before including gpuk.h, to check the rows against cudaTypedefs.h. */
typedef struct gpuk__cu_ipc_handle { char reserved[64]; } gpuk__cu_ipc_handle;
#if !defined(GPUK__CU_IPC_MEM_HANDLE)
#define GPUK__CU_IPC_MEM_HANDLE gpuk__cu_ipc_handle
#define GPUK__CU_IPC_EVENT_HANDLE gpuk__cu_ipc_handle
#endif

/* Every run-time library gpuk loads (the driver; NVRTC or NCCL later) is one X-macro list, one
   descriptor (gpuk__lib, >>state) and one call of gpuk__lib_load (>>init). A list's rows are
     X(member, ABI version, exported name, required, (parameters))
   member: the symbol a resolver (cuGetProcAddress, gpuk_desc.get_proc) is asked for, and the
   table member; ABI version: the version cuGetProcAddress resolves it at; exported name: what
   dlsym looks up where there is no resolver (drivers < 11.3); required: 0 = optional, missing
   is no failure (GPUK__X_FEATURE can turn a feature bit on when present). Every entry point
   returns a non-negative result enum (CUresult, nvrtcResult, ncclResult_t: unsigned int). */
typedef struct gpuk__lib_row {
    const char* symbol;
    const char* export_name;
    int version;
    int required;
    size_t offset;             /* of the member in the library's table */
} gpuk__lib_row;

/* An optional row that turns a gpuk_features() bit on when the library has it. */
typedef struct gpuk__lib_feature {
    size_t offset;
    uint32_t bit;
} gpuk__lib_feature;

/* Expansions of a list: GPUK__LIB_TABLE(FUNCS, table) declares the pointer types
   gpuk__pfn_<member> and the struct `table`; rows and feature rows come from GPUK__X_ROW and
   GPUK__X_FEATURE(member, bit) with GPUK__X_TABLE #defined as the table type around them. */
#define GPUK__X_PFN(name, ver, exp, req, params) \
    typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_##name) \
        params; /* NOLINT(bugprone-macro-parentheses): a parameter list */
#define GPUK__X_MEMBER(name, ver, exp, req, params) gpuk__pfn_##name name;
#define GPUK__X_ROW(name, ver, exp, req, params) \
    { #name, exp, ver, req, offsetof(GPUK__X_TABLE, name) },
#define GPUK__X_FEATURE(name, bit) { offsetof(GPUK__X_TABLE, name), bit },
#define GPUK__LIB_TABLE(FUNCS, table) \
    FUNCS(GPUK__X_PFN) \
    typedef struct table { \
        FUNCS(GPUK__X_MEMBER) \
    } table; /* NOLINT(bugprone-macro-parentheses): a type name */

/* The driver: the ABI version picks e.g. cuMemAlloc_v2 (3020), never the 32-bit-size CUDA 2.0
   ABI behind the plain export. */
#define GPUK__DRIVER_FUNCS(X) \
    X(cuInit, 2000, "cuInit", 1, (unsigned int flags)) \
    X(cuDriverGetVersion, 2020, "cuDriverGetVersion", 1, (int* out_version)) \
    X(cuGetErrorName, 6000, "cuGetErrorName", 0, (gpuk__cu_result code, const char** out_name)) \
    X(cuDeviceGetCount, 2000, "cuDeviceGetCount", 1, (int* out_count)) \
    X(cuDeviceGet, 2000, "cuDeviceGet", 1, (gpuk__cu_device* out_dev, int ordinal)) \
    X(cuDeviceGetName, 2000, "cuDeviceGetName", 1, (char* name, int len, gpuk__cu_device dev)) \
    X(cuDeviceTotalMem, 3020, "cuDeviceTotalMem_v2", 1, (size_t* out_bytes, gpuk__cu_device dev)) \
    X(cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute", 1, \
      (int* out_value, unsigned int attribute, gpuk__cu_device dev)) \
    X(cuDeviceGetPCIBusId, 4010, "cuDeviceGetPCIBusId", 1, \
      (char* bus_id, int len, gpuk__cu_device dev)) \
    X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain", 1, \
      (gpuk__cu_context* out_ctx, gpuk__cu_device dev)) \
    X(cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease", 1, (gpuk__cu_device dev)) \
    X(cuCtxGetCurrent, 4000, "cuCtxGetCurrent", 1, (gpuk__cu_context* out_ctx)) \
    X(cuCtxSetCurrent, 4000, "cuCtxSetCurrent", 1, (gpuk__cu_context ctx)) \
    X(cuCtxSynchronize, 2000, "cuCtxSynchronize", 1, (void)) \
    X(cuCtxGetStreamPriorityRange, 5050, "cuCtxGetStreamPriorityRange", 1, \
      (int* out_least, int* out_greatest)) \
    X(cuCtxSetLimit, 3010, "cuCtxSetLimit", 1, (unsigned int limit, size_t value)) \
    X(cuCtxGetLimit, 3010, "cuCtxGetLimit", 1, (size_t* out_value, unsigned int limit)) \
    X(cuMemGetInfo, 3020, "cuMemGetInfo_v2", 1, (size_t* out_free, size_t* out_total)) \
    X(cuMemAlloc, 3020, "cuMemAlloc_v2", 1, (gpuk_devptr* out_ptr, size_t bytes)) \
    X(cuMemFree, 3020, "cuMemFree_v2", 1, (gpuk_devptr ptr)) \
    X(cuMemHostAlloc, 2020, "cuMemHostAlloc", 1, \
      (void** out_ptr, size_t bytes, unsigned int flags)) \
    X(cuMemFreeHost, 2000, "cuMemFreeHost", 1, (void* ptr)) \
    X(cuMemHostRegister, 6050, "cuMemHostRegister_v2", 1, \
      (void* ptr, size_t bytes, unsigned int flags)) \
    X(cuMemHostUnregister, 4000, "cuMemHostUnregister", 1, (void* ptr)) \
    X(cuMemHostGetDevicePointer, 3020, "cuMemHostGetDevicePointer_v2", 0, \
      (gpuk_devptr* out_ptr, void* host, unsigned int flags)) \
    X(cuMemAllocManaged, 6000, "cuMemAllocManaged", 0, \
      (gpuk_devptr* out_ptr, size_t bytes, unsigned int flags)) \
    /* prefetch and advice: the CUDA 8.0 ABI (a device, CU_DEVICE_CPU for the host), which \
       every later driver keeps; CUDA 12.2's _v2 (cuda.h's names since 13.0) take a         \
       CUmemLocation instead */                                                             \
    X(cuMemPrefetchAsync, 8000, "cuMemPrefetchAsync", 0, \
      (gpuk_devptr ptr, size_t bytes, gpuk__cu_device dst_device, gpuk__cu_stream stream)) \
    X(cuMemAdvise, 8000, "cuMemAdvise", 0, \
      (gpuk_devptr ptr, size_t bytes, unsigned int advice, gpuk__cu_device device)) \
    X(cuMemsetD8Async, 3020, "cuMemsetD8Async", 1, \
      (gpuk_devptr dst, unsigned char value, size_t count, gpuk__cu_stream stream)) \
    X(cuMemsetD16Async, 3020, "cuMemsetD16Async", 1, \
      (gpuk_devptr dst, unsigned short value, size_t count, gpuk__cu_stream stream)) \
    X(cuMemsetD32Async, 3020, "cuMemsetD32Async", 1, \
      (gpuk_devptr dst, unsigned int value, size_t count, gpuk__cu_stream stream)) \
    X(cuMemcpyHtoDAsync, 3020, "cuMemcpyHtoDAsync_v2", 1, \
      (gpuk_devptr dst, const void* src, size_t bytes, gpuk__cu_stream stream)) \
    X(cuMemcpyDtoHAsync, 3020, "cuMemcpyDtoHAsync_v2", 1, \
      (void* dst, gpuk_devptr src, size_t bytes, gpuk__cu_stream stream)) \
    X(cuMemcpyDtoDAsync, 3020, "cuMemcpyDtoDAsync_v2", 1, \
      (gpuk_devptr dst, gpuk_devptr src, size_t bytes, gpuk__cu_stream stream)) \
    X(cuMemcpyPeer, 4000, "cuMemcpyPeer", 0, \
      (gpuk_devptr dst, gpuk__cu_context dst_ctx, gpuk_devptr src, gpuk__cu_context src_ctx, \
       size_t bytes)) \
    X(cuMemcpyPeerAsync, 4000, "cuMemcpyPeerAsync", 0, \
      (gpuk_devptr dst, gpuk__cu_context dst_ctx, gpuk_devptr src, gpuk__cu_context src_ctx, \
       size_t bytes, gpuk__cu_stream stream)) \
    X(cuDeviceCanAccessPeer, 4000, "cuDeviceCanAccessPeer", 0, \
      (int* out_can, gpuk__cu_device dev, gpuk__cu_device peer_dev)) \
    X(cuCtxEnablePeerAccess, 4000, "cuCtxEnablePeerAccess", 0, \
      (gpuk__cu_context peer_ctx, unsigned int flags)) \
    X(cuPointerGetAttribute, 4000, "cuPointerGetAttribute", 1, \
      (void* out_data, unsigned int attribute, gpuk_devptr ptr)) \
    X(cuMemAllocAsync, 11020, "cuMemAllocAsync", 0, \
      (gpuk_devptr* out_ptr, size_t bytes, gpuk__cu_stream stream)) \
    X(cuMemFreeAsync, 11020, "cuMemFreeAsync", 0, (gpuk_devptr ptr, gpuk__cu_stream stream)) \
    X(cuDeviceGetMemPool, 11020, "cuDeviceGetMemPool", 0, \
      (gpuk__cu_mempool* out_pool, gpuk__cu_device dev)) \
    X(cuMemPoolSetAttribute, 11020, "cuMemPoolSetAttribute", 0, \
      (gpuk__cu_mempool pool, unsigned int attribute, void* value)) \
    X(cuMemPoolGetAttribute, 11020, "cuMemPoolGetAttribute", 0, \
      (gpuk__cu_mempool pool, unsigned int attribute, void* out_value)) \
    X(cuMemPoolTrimTo, 11020, "cuMemPoolTrimTo", 0, (gpuk__cu_mempool pool, size_t keep_bytes)) \
    /* CUDA IPC (src/gpuk_ipc.h): the handles are 64-byte structs passed by value */ \
    X(cuIpcGetMemHandle, 4010, "cuIpcGetMemHandle", 0, \
      (GPUK__CU_IPC_MEM_HANDLE* out_handle, gpuk_devptr ptr)) \
    X(cuIpcOpenMemHandle, 11000, "cuIpcOpenMemHandle_v2", 0, \
      (gpuk_devptr* out_ptr, GPUK__CU_IPC_MEM_HANDLE handle, unsigned int flags)) \
    X(cuIpcCloseMemHandle, 4010, "cuIpcCloseMemHandle", 0, (gpuk_devptr ptr)) \
    X(cuIpcGetEventHandle, 4010, "cuIpcGetEventHandle", 0, \
      (GPUK__CU_IPC_EVENT_HANDLE* out_handle, gpuk__cu_event event)) \
    X(cuIpcOpenEventHandle, 4010, "cuIpcOpenEventHandle", 0, \
      (gpuk__cu_event* out_event, GPUK__CU_IPC_EVENT_HANDLE handle)) \
    X(cuStreamCreateWithPriority, 5050, "cuStreamCreateWithPriority", 1, \
      (gpuk__cu_stream* out_stream, unsigned int flags, int priority)) \
    X(cuStreamDestroy, 4000, "cuStreamDestroy_v2", 1, (gpuk__cu_stream stream)) \
    X(cuStreamSynchronize, 2000, "cuStreamSynchronize", 1, (gpuk__cu_stream stream)) \
    X(cuStreamQuery, 2000, "cuStreamQuery", 1, (gpuk__cu_stream stream)) \
    X(cuStreamGetCtx, 9020, "cuStreamGetCtx", 0, \
      (gpuk__cu_stream stream, gpuk__cu_context* out_ctx)) \
    X(cuStreamWaitEvent, 3020, "cuStreamWaitEvent", 1, \
      (gpuk__cu_stream stream, gpuk__cu_event event, unsigned int flags)) \
    X(cuStreamIsCapturing, 10000, "cuStreamIsCapturing", 0, \
      (gpuk__cu_stream stream, unsigned int* out_status)) \
    X(cuStreamBeginCapture, 10010, "cuStreamBeginCapture_v2", 0, \
      (gpuk__cu_stream stream, unsigned int mode)) \
    X(cuThreadExchangeStreamCaptureMode, 10010, "cuThreadExchangeStreamCaptureMode", 0, \
      (unsigned int* mode)) \
    X(cuStreamEndCapture, 10000, "cuStreamEndCapture", 0, \
      (gpuk__cu_stream stream, gpuk__cu_graph* out_graph)) \
    X(cuLaunchHostFunc, 10000, "cuLaunchHostFunc", 1, \
      (gpuk__cu_stream stream, gpuk__cu_host_fn fn, void* user_data)) \
    X(cuEventCreate, 2000, "cuEventCreate", 1, (gpuk__cu_event* out_event, unsigned int flags)) \
    X(cuEventDestroy, 4000, "cuEventDestroy_v2", 1, (gpuk__cu_event event)) \
    X(cuEventRecord, 2000, "cuEventRecord", 1, (gpuk__cu_event event, gpuk__cu_stream stream)) \
    X(cuEventRecordWithFlags, 11010, "cuEventRecordWithFlags", 0, \
      (gpuk__cu_event event, gpuk__cu_stream stream, unsigned int flags)) \
    X(cuEventSynchronize, 2000, "cuEventSynchronize", 1, (gpuk__cu_event event)) \
    X(cuEventQuery, 2000, "cuEventQuery", 1, (gpuk__cu_event event)) \
    X(cuEventElapsedTime, 2000, "cuEventElapsedTime", 1, \
      (float* out_ms, gpuk__cu_event start, gpuk__cu_event stop)) \
    X(cuModuleLoadDataEx, 2010, "cuModuleLoadDataEx", 1, \
      (gpuk__cu_module* out_module, const void* image, unsigned int num_options, \
       unsigned int* options, void** option_values)) \
    X(cuModuleUnload, 2000, "cuModuleUnload", 1, (gpuk__cu_module module)) \
    X(cuModuleGetFunction, 2000, "cuModuleGetFunction", 1, \
      (gpuk__cu_function* out_func, gpuk__cu_module module, const char* name)) \
    X(cuLinkCreate, 6050, "cuLinkCreate_v2", 0, \
      (unsigned int num_options, unsigned int* options, void** option_values, \
       gpuk__cu_link_state* out_state)) \
    X(cuLinkAddData, 6050, "cuLinkAddData_v2", 0, \
      (gpuk__cu_link_state state, unsigned int type, void* data, size_t bytes, const char* name, \
       unsigned int num_options, unsigned int* options, void** option_values)) \
    X(cuLinkAddFile, 6050, "cuLinkAddFile_v2", 0, \
      (gpuk__cu_link_state state, unsigned int type, const char* path, unsigned int num_options, \
       unsigned int* options, void** option_values)) \
    X(cuLinkComplete, 5050, "cuLinkComplete", 0, \
      (gpuk__cu_link_state state, void** out_cubin, size_t* out_bytes)) \
    X(cuLinkDestroy, 5050, "cuLinkDestroy", 0, (gpuk__cu_link_state state)) \
    X(cuFuncGetAttribute, 2020, "cuFuncGetAttribute", 1, \
      (int* out_value, unsigned int attribute, gpuk__cu_function func)) \
    X(cuFuncSetAttribute, 9000, "cuFuncSetAttribute", 1, \
      (gpuk__cu_function func, unsigned int attribute, int value)) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, \
      "cuOccupancyMaxActiveBlocksPerMultiprocessor", 0, \
      (int* out_blocks, gpuk__cu_function func, int block_size, size_t shared_bytes)) \
    X(cuOccupancyMaxPotentialBlockSize, 6050, "cuOccupancyMaxPotentialBlockSize", 1, \
      (int* out_min_grid, int* out_block, gpuk__cu_function func, gpuk__cu_b2d_fn shared_of_block, \
       size_t shared_bytes, int block_limit)) \
    X(cuLaunchKernel, 4000, "cuLaunchKernel", 1, \
      (gpuk__cu_function func, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, \
       unsigned int block_x, unsigned int block_y, unsigned int block_z, \
       unsigned int shared_bytes, gpuk__cu_stream stream, void** params, void** extra)) \
    X(cuFuncGetParamInfo, 12040, "cuFuncGetParamInfo", 0, \
      (gpuk__cu_function func, size_t index, size_t* out_offset, size_t* out_bytes)) \
    X(cuLaunchKernelEx, 11060, "cuLaunchKernelEx", 0, \
      (const struct CUlaunchConfig_st* config, gpuk__cu_function func, void** params, \
       void** extra)) \
    X(cuOccupancyMaxActiveClusters, 11070, "cuOccupancyMaxActiveClusters", 0, \
      (int* out_clusters, gpuk__cu_function func, const struct CUlaunchConfig_st* config)) \
    X(cuGraphInstantiateWithFlags, 11040, "cuGraphInstantiateWithFlags", 0, \
      (gpuk__cu_graph_exec* out_exec, gpuk__cu_graph graph, unsigned long long flags)) \
    X(cuGraphLaunch, 10000, "cuGraphLaunch", 0, \
      (gpuk__cu_graph_exec exec, gpuk__cu_stream stream)) \
    X(cuGraphExecDestroy, 10000, "cuGraphExecDestroy", 0, (gpuk__cu_graph_exec exec)) \
    X(cuGraphDestroy, 10000, "cuGraphDestroy", 0, (gpuk__cu_graph graph)) \
    X(cuGraphExecUpdate, 10020, "cuGraphExecUpdate", 0, \
      (gpuk__cu_graph_exec exec, gpuk__cu_graph graph, gpuk__cu_graph_node* out_error_node, \
       unsigned int* out_result)) \
    /* conditional graph nodes (src/gpuk_graph.h): a graph built around a node whose body \
       is captured; the handle is a cuuint64_t */ \
    X(cuGraphCreate, 10000, "cuGraphCreate", 0, (gpuk__cu_graph* out_graph, unsigned int flags)) \
    X(cuGraphConditionalHandleCreate, 12030, "cuGraphConditionalHandleCreate", 0, \
      (uint64_t* out_handle, gpuk__cu_graph graph, gpuk__cu_context ctx, \
       unsigned int default_value, unsigned int flags)) \
    X(cuGraphAddNode, 12020, "cuGraphAddNode", 0, \
      (gpuk__cu_graph_node* out_node, gpuk__cu_graph graph, const gpuk__cu_graph_node* deps, \
       size_t num_deps, struct CUgraphNodeParams_st* params)) \
    X(cuStreamBeginCaptureToGraph, 12030, "cuStreamBeginCaptureToGraph", 0, \
      (gpuk__cu_stream stream, gpuk__cu_graph graph, const gpuk__cu_graph_node* deps, \
       const struct CUgraphEdgeData_st* edge_data, size_t num_deps, unsigned int mode)) \
    X(cuStreamGetCaptureInfo, 11030, "cuStreamGetCaptureInfo_v2", 0, \
      (gpuk__cu_stream stream, unsigned int* out_status, uint64_t* out_id, \
       gpuk__cu_graph* out_graph, const gpuk__cu_graph_node** out_deps, size_t* out_num_deps)) \
    X(cuTensorMapEncodeTiled, 12000, "cuTensorMapEncodeTiled", 0, \
      (struct CUtensorMap_st* out_map, unsigned int data_type, uint32_t rank, void* address, \
       const uint64_t* dims, const uint64_t* strides, const uint32_t* box, \
       const uint32_t* element_strides, unsigned int interleave, unsigned int swizzle, \
       unsigned int l2_promotion, unsigned int oob_fill)) \
    X(cuLibraryLoadData, 12000, "cuLibraryLoadData", 0, \
      (struct CUlib_st** out_library, const void* code, unsigned int* jit_options, \
       void** jit_values, unsigned int num_jit_options, unsigned int* library_options, \
       void** library_values, unsigned int num_library_options))

/* Optional driver rows behind gpuk_features() bits. */
#define GPUK__DRIVER_FEATURES(X) \
    X(cuFuncGetParamInfo, GPUK_FEATURE_PARAM_INFO) \
    X(cuLaunchKernelEx, GPUK_FEATURE_LAUNCH_EX) \
    X(cuGraphInstantiateWithFlags, GPUK_FEATURE_GRAPHS) \
    X(cuLibraryLoadData, GPUK_FEATURE_LIBRARY) \
    X(cuMemcpyPeerAsync, GPUK_FEATURE_PEER) \
    X(cuMemAllocAsync, GPUK_FEATURE_STREAM_MEMORY)

GPUK__LIB_TABLE(GPUK__DRIVER_FUNCS, gpuk__driver)
#define GPUK__X_TABLE gpuk__driver
static const gpuk__lib_row gpuk__driver_rows[] = { GPUK__DRIVER_FUNCS(GPUK__X_ROW) };
static const gpuk__lib_feature gpuk__driver_features[] = { GPUK__DRIVER_FEATURES(GPUK__X_FEATURE) };
#undef GPUK__X_TABLE

/* NVRTC, the runtime compiler behind gpuk_module_compile, loaded on its first use. The program
   handle's tag is gpuk's own (NVRTC's starts with an underscore); nvrtcResult is an enum like
   CUresult. Versions: the CUDA release that added the entry point (what a resolver hears). */
typedef struct gpuk__nvrtc_program_st* gpuk__nvrtc_program;
#define GPUK__NVRTC_FUNCS(X) \
    X(nvrtcVersion, 7000, "nvrtcVersion", 1, (int* out_major, int* out_minor)) \
    X(nvrtcGetNumSupportedArchs, 11020, "nvrtcGetNumSupportedArchs", 0, (int* out_count)) \
    X(nvrtcGetSupportedArchs, 11020, "nvrtcGetSupportedArchs", 0, (int* out_archs)) \
    X(nvrtcCreateProgram, 7000, "nvrtcCreateProgram", 1, \
      (gpuk__nvrtc_program* out_prog, const char* source, const char* name, int num_headers, \
       const char* const* headers, const char* const* include_names)) \
    X(nvrtcDestroyProgram, 7000, "nvrtcDestroyProgram", 1, (gpuk__nvrtc_program* prog)) \
    X(nvrtcCompileProgram, 7000, "nvrtcCompileProgram", 1, \
      (gpuk__nvrtc_program prog, int num_options, const char* const* options)) \
    X(nvrtcGetProgramLogSize, 7000, "nvrtcGetProgramLogSize", 1, \
      (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetProgramLog, 7000, "nvrtcGetProgramLog", 1, (gpuk__nvrtc_program prog, char* log)) \
    X(nvrtcGetPTXSize, 7000, "nvrtcGetPTXSize", 1, (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetPTX, 7000, "nvrtcGetPTX", 1, (gpuk__nvrtc_program prog, char* ptx)) \
    X(nvrtcGetCUBINSize, 11010, "nvrtcGetCUBINSize", 0, \
      (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetCUBIN, 11010, "nvrtcGetCUBIN", 0, (gpuk__nvrtc_program prog, char* cubin)) \
    X(nvrtcGetLTOIRSize, 12000, "nvrtcGetLTOIRSize", 0, \
      (gpuk__nvrtc_program prog, size_t* out_bytes)) \
    X(nvrtcGetLTOIR, 12000, "nvrtcGetLTOIR", 0, (gpuk__nvrtc_program prog, char* ltoir)) \
    X(nvrtcAddNameExpression, 8000, "nvrtcAddNameExpression", 1, \
      (gpuk__nvrtc_program prog, const char* name_expression)) \
    X(nvrtcGetLoweredName, 8000, "nvrtcGetLoweredName", 1, \
      (gpuk__nvrtc_program prog, const char* name_expression, const char** out_lowered))

GPUK__LIB_TABLE(GPUK__NVRTC_FUNCS, gpuk__nvrtc)
#define GPUK__X_TABLE gpuk__nvrtc
static const gpuk__lib_row gpuk__nvrtc_rows[] = { GPUK__NVRTC_FUNCS(GPUK__X_ROW) };
#undef GPUK__X_TABLE
/* nvrtcGetErrorString returns a string, not a result: resolved beside the table. */
typedef const char*(GPUK__CUDAAPI* gpuk__pfn_nvrtc_error_string)(unsigned int result);

/* nvJitLink, the linker of LTO-IR behind gpuk_module_link, loaded when a link has an LTO-IR
   input. Its exports carry the ABI in the name (__nvJitLinkCreate_13_0: what nvJitLink.h of
   that major #defines nvJitLinkCreate to), so the member names below are completed with the
   loaded library's major ("__" member "_13_0") before dlsym or a resolver sees them; the
   ABI version column is that of the first library, 12.0. nvJitLinkInputType is an enum. */
typedef struct gpuk__njl_handle_st* gpuk__njl_handle;
#define GPUK__NVJITLINK_FUNCS(X) \
    X(nvJitLinkCreate, 12000, "nvJitLinkCreate", 1, \
      (gpuk__njl_handle* out_handle, uint32_t num_options, const char** options)) \
    X(nvJitLinkDestroy, 12000, "nvJitLinkDestroy", 1, (gpuk__njl_handle* handle)) \
    X(nvJitLinkAddData, 12000, "nvJitLinkAddData", 1, \
      (gpuk__njl_handle handle, unsigned int input_type, const void* data, size_t bytes, \
       const char* name)) \
    X(nvJitLinkAddFile, 12000, "nvJitLinkAddFile", 1, \
      (gpuk__njl_handle handle, unsigned int input_type, const char* file_name)) \
    X(nvJitLinkComplete, 12000, "nvJitLinkComplete", 1, (gpuk__njl_handle handle)) \
    X(nvJitLinkGetLinkedCubinSize, 12000, "nvJitLinkGetLinkedCubinSize", 1, \
      (gpuk__njl_handle handle, size_t* out_bytes)) \
    X(nvJitLinkGetLinkedCubin, 12000, "nvJitLinkGetLinkedCubin", 1, \
      (gpuk__njl_handle handle, void* cubin)) \
    X(nvJitLinkGetErrorLogSize, 12000, "nvJitLinkGetErrorLogSize", 1, \
      (gpuk__njl_handle handle, size_t* out_bytes)) \
    X(nvJitLinkGetErrorLog, 12000, "nvJitLinkGetErrorLog", 1, \
      (gpuk__njl_handle handle, char* log)) \
    X(nvJitLinkGetInfoLogSize, 12000, "nvJitLinkGetInfoLogSize", 1, \
      (gpuk__njl_handle handle, size_t* out_bytes)) \
    X(nvJitLinkGetInfoLog, 12000, "nvJitLinkGetInfoLog", 1, (gpuk__njl_handle handle, char* log))

GPUK__LIB_TABLE(GPUK__NVJITLINK_FUNCS, gpuk__njl)
#define GPUK__X_TABLE gpuk__njl
static const gpuk__lib_row gpuk__njl_rows[] = { GPUK__NVJITLINK_FUNCS(GPUK__X_ROW) };
#undef GPUK__X_TABLE
/* nvJitLinkVersion (12.3 on; unversioned): the library's version where it has it. */
typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_njl_version)(unsigned int* out_major,
                                                              unsigned int* out_minor);
/* NVJITLINK_INPUT_* of nvJitLink.h (ABI) */
enum {
    GPUK__NJL_INPUT_CUBIN = 1, GPUK__NJL_INPUT_PTX = 2, GPUK__NJL_INPUT_LTOIR = 3,
    GPUK__NJL_INPUT_FATBIN = 4, GPUK__NJL_INPUT_OBJECT = 5, GPUK__NJL_INPUT_LIBRARY = 6
};

/* cuGetProcAddress, CUDA 11.3 ABI and the CUDA 12.0 one with a status out-parameter. */
typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_get_proc_v1)(const char* symbol, void** out_fn,
                                                              int version, uint64_t flags);
typedef gpuk__cu_result(GPUK__CUDAAPI* gpuk__pfn_get_proc_v2)(const char* symbol, void** out_fn,
                                                              int version, uint64_t flags,
                                                              int* out_status);

/* Driver constants gpuk uses (values from cuda.h; they are ABI and never change). */
enum {
    GPUK__CU_STREAM_NON_BLOCKING = 1,
    GPUK__CU_EVENT_BLOCKING_SYNC = 1,
    GPUK__CU_EVENT_DISABLE_TIMING = 2,
    GPUK__CU_EVENT_RECORD_EXTERNAL = 1,
    GPUK__CU_STREAM_CAPTURE_ACTIVE = 1,
    GPUK__CU_MEMHOSTALLOC_PORTABLE = 1,
    GPUK__CU_MEMHOSTREGISTER_PORTABLE = 1,
    GPUK__CU_MEMHOSTALLOC_DEVICEMAP = 2,
    GPUK__CU_MEMHOSTREGISTER_DEVICEMAP = 2,
    GPUK__CU_MEM_ATTACH_GLOBAL = 1,
    GPUK__CU_DEVICE_CPU = -1,
    GPUK__CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
    GPUK__CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
    GPUK__CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
    GPUK__CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
    GPUK__CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    GPUK__CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    GPUK__CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    GPUK__CU_MEMORYTYPE_HOST = 1,
    GPUK__CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    GPUK__CU_JIT_INFO_LOG_BUFFER = 3,
    GPUK__CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    GPUK__CU_JIT_ERROR_LOG_BUFFER = 5,
    GPUK__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    GPUK__CU_JIT_INPUT_CUBIN = 0,
    GPUK__CU_JIT_INPUT_PTX = 1,
    GPUK__CU_JIT_INPUT_FATBINARY = 2,
    GPUK__CU_JIT_INPUT_OBJECT = 3,
    GPUK__CU_JIT_INPUT_LIBRARY = 4,
    GPUK__CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
    GPUK__CU_FUNC_SHARED_SIZE_BYTES = 1,
    GPUK__CU_FUNC_CONST_SIZE_BYTES = 2,
    GPUK__CU_FUNC_LOCAL_SIZE_BYTES = 3,
    GPUK__CU_FUNC_NUM_REGS = 4,
    GPUK__CU_FUNC_PTX_VERSION = 5,
    GPUK__CU_FUNC_BINARY_VERSION = 6,
    GPUK__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    GPUK__CU_ERROR_INVALID_VALUE = 1,
    GPUK__CU_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    GPUK__CU_ERROR_INVALID_CONTEXT = 201,
    GPUK__CU_ERROR_NOT_SUPPORTED = 801,
    GPUK__CU_EVENT_INTERPROCESS = 4,
    GPUK__CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
    GPUK__CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    GPUK__CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
    GPUK__CU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    GPUK__CU_ERROR_NOT_READY = 600,
    GPUK__CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
    GPUK__CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
    GPUK__CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    GPUK__CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
    GPUK__CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    GPUK__CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
    GPUK__CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
    GPUK__CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
    GPUK__CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    GPUK__CU_TENSOR_MAP_SWIZZLE_128B = 3,
    GPUK__CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
    GPUK__CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    GPUK__CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    GPUK__CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    GPUK__CU_STREAM_CAPTURE_STATUS_NONE = 0,
    GPUK__CU_GRAPH_NODE_TYPE_CONDITIONAL = 13,
    GPUK__CU_GRAPH_COND_ASSIGN_DEFAULT = 1,
    GPUK__CU_GRAPH_COND_TYPE_IF = 0,
    GPUK__CU_GRAPH_COND_TYPE_WHILE = 1,
    GPUK__CU_LIMIT_STACK_SIZE = 0,
    GPUK__CU_LIMIT_PRINTF_FIFO_SIZE = 1,
    GPUK__CU_LIMIT_MALLOC_HEAP_SIZE = 2,
    GPUK__CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 3,
    GPUK__CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4
};

/* ---- >>state ---- */
/* A loaded library: its handle and how its rows are resolved. */
typedef struct gpuk__lib_state {
    void* handle;              /* dlopen'd; NULL before a load and with a user resolver */
    int keep;                  /* the library's code ran (the driver: cuInit), it may have
                                  threads running it: never closed, at most left behind */
    int version;               /* what the probe reported */
    gpuk__pfn_get_proc_v1 get_proc_v1;
    gpuk__pfn_get_proc_v2 get_proc_v2;
    gpuk_get_proc_fn user_get_proc;
    void* user_get_proc_data;
} gpuk__lib_state;

/* How to find and check one run-time library, and where its entry points go. */
typedef struct gpuk__lib {
    const char* name;                /* in texts: "cannot load the NVIDIA driver '...'" */
    const char* kind;                /* "'...' is not a CUDA driver" */
    const char* const* sonames;      /* tried in order when no path is named; NULL-terminated */
    const char* env_path;            /* variable naming the path (secure_getenv); may be NULL */
    const char* probe_symbol;        /* exported function that proves it is the right library */
    int (*probe)(void* sym, int* out_version); /* calls it: 1 when it works */
    const gpuk__lib_row* rows;
    size_t num_rows;
    const gpuk__lib_feature* features;
    size_t num_features;
    void* table;                     /* where the entry points go (table_bytes long) */
    size_t table_bytes;
    gpuk__lib_state* state;
    int proc_address;                /* resolve through cuGetProcAddress: the driver alone */
    int missing_code;                /* no library, or not the right one */
    int too_old_code;                /* a required row missing */
    const char* hint;                /* for those failures; NULL -> gpuk__hint(code) */
    /* A library searched for in the toolkit's folders too (NVRTC, nvJitLink; NULL: by its
       sonames only): where the search records the file that opened and how it was found,
       and the gpuk_desc field that names it, for the log */
    char* found;
    const char** found_how;
    const char* desc_field;
} gpuk__lib;

typedef struct gpuk__state {
    int initialized;           /* atomic: 1 once the table is loaded and cuInit returned */
    int broken;                /* atomic: 0, the first sticky CUresult, or GPUK_ERR_FORKED */
    char broken_text[256];     /* the first fault, as reported then */
    int init_failed;           /* the last gpuk_init's failure; implicit inits do not retry it */
    char init_failed_text[512];
    int live_ctxs;
    int tag_users[16];         /* live ctxs per handle tag (GPUK__TAGS) */
    gpuk_ctx* live_list;       /* every live ctx, through gpuk_ctx.next_live (under gpuk__lock) */
    uint32_t next_tag;         /* tags go round, so a new ctx does not reuse a just-freed one */
    uint32_t features;
    int driver_version;
    gpuk_logger logger;        /* logger and log_level: under gpuk__log_lock */
    gpuk_log_level log_level;
    int log_limit;             /* atomic: the level logged up to, 0 without a logger */
    gpuk_allocator allocator;
    gpuk__lib_state driver_lib;
    gpuk__driver drv;
} gpuk__state;

/* Static storage: all zero before the first call; the lock needs its static initialiser. */
static gpuk__state gpuk__g;
static gpuk__mutex gpuk__lock = GPUK__MUTEX_INIT;       /* init, shutdown, ctx count */
static gpuk__mutex gpuk__fault_lock = GPUK__MUTEX_INIT; /* the first sticky fault; may be taken
                                                          while gpuk__lock is held (in init) */
static gpuk__mutex gpuk__log_lock = GPUK__MUTEX_INIT;   /* the logger; taken after the others */
/* NVRTC's loading and its compile cache (>>nvrtc); taken after gpuk__lock, before the two
   above */
static gpuk__mutex gpuk__nvrtc_lock = GPUK__MUTEX_INIT;
#define GPUK__DRV (gpuk__g.drv)
/* CU_STREAM_LEGACY: the context's legacy NULL stream, named explicitly (a plain NULL means the
   per-thread stream in code built with per-thread default streams). Work on it waits for
   earlier work on every blocking stream of the context, and later work on those waits for it:
   cudaMemcpy's ordering, which gpuk's stream-less calls use. */
#define GPUK__CU_STREAM_LEGACY ((gpuk__cu_stream)(uintptr_t)1)
