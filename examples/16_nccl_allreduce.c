/* examples/16_nccl_allreduce.c - an all-reduce over every GPU of the process through NCCL, on
   gpuk's streams and buffers (gpuk_stream_native, gpuk_buffer_devptr). NCCL is loaded at run time
   like the driver: dlopen("libnccl.so.2"), or the file NCCL_PATH names; the few entry points used
   are declared below (built with -DEX_NCCL_H, NCCL's own nccl.h is used instead:
   tests/integration/nccl_abi.sh compiles it so to check the declarations). ncclCommInitAll makes
   one communicator a GPU; one host thread queues each all-reduce (float sum) on every GPU between
   ncclGroupStart and ncclGroupEnd. Each size's result is checked in every element of every GPU
   (integer-valued floats, so the sum is exact). Prints each size's time, algbw = bytes / time and
   busbw = algbw * 2 (n - 1) / n (nccl-tests' definitions: busbw is what each GPU's links carry in a
   ring, comparable across GPU counts; 0 for one GPU), and each GPU's time. Sizes up to 64 MiB,
   --full up to 1 GiB; --gpus N uses N GPUs (NCCL takes one GPU a rank).
   cc -std=c99 -O2 -I.. 16_nccl_allreduce.c -o nccl_allreduce -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <dlfcn.h>
#include <glob.h>

static const char ex_name[] = "16_nccl_allreduce";
enum { RUNS = 3 };

/* NCCL's ABI, as nccl.h (2.x) declares it: the enums are int-sized, these their values; a
   communicator is a pointer to an opaque struct; a stream is the runtime's cudaStream_t, the
   driver's CUstream (struct CUstream_st*). */
enum { NCCL_ABI_SUCCESS = 0, NCCL_ABI_FLOAT32 = 7, NCCL_ABI_SUM = 0 };
#ifdef EX_NCCL_H
#include <nccl.h>
typedef ncclResult_t nccl_result;
typedef ncclDataType_t nccl_type;
typedef ncclRedOp_t nccl_op;
typedef ncclComm_t nccl_comm;
#define NCCL_RESULT_SUCCESS ncclSuccess
#define NCCL_TYPE_FLOAT32 ncclFloat32
#define NCCL_OP_SUM ncclSum
#else
typedef int nccl_result;
typedef int nccl_type;
typedef int nccl_op;
typedef struct ncclComm* nccl_comm;
#define NCCL_RESULT_SUCCESS NCCL_ABI_SUCCESS
#define NCCL_TYPE_FLOAT32 NCCL_ABI_FLOAT32
#define NCCL_OP_SUM NCCL_ABI_SUM
#endif

typedef struct nccl_api {
    nccl_result (*GetVersion)(int* version);
    nccl_result (*CommInitAll)(nccl_comm* comms, int ndev, const int* devlist);
    nccl_result (*AllReduce)(const void* sendbuff, void* recvbuff, size_t count, nccl_type datatype,
                             nccl_op op, nccl_comm comm, struct CUstream_st* stream);
    nccl_result (*GroupStart)(void);
    nccl_result (*GroupEnd)(void);
    nccl_result (*CommDestroy)(nccl_comm comm);
    const char* (*GetErrorString)(nccl_result result);
} nccl_api;

#ifdef EX_NCCL_H
/* Compiled by tests/integration/nccl_abi.sh only: NCCL's functions must fit the pointers above
   (-Werror) and its enums must be int-sized with the values above, as the dlopen path assumes. */
typedef char nccl_abi_sizes[sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclDataType_t) == sizeof(int) &&
                            sizeof(ncclRedOp_t) == sizeof(int) ? 1 : -1];
typedef char nccl_abi_values[(int)ncclSuccess == (int)NCCL_ABI_SUCCESS && (int)ncclFloat32 == (int)NCCL_ABI_FLOAT32 &&
                             (int)ncclSum == (int)NCCL_ABI_SUM ? 1 : -1];
void nccl_abi_check(nccl_api* a);
void nccl_abi_check(nccl_api* a) {
    a->GetVersion = ncclGetVersion;
    a->CommInitAll = ncclCommInitAll;
    a->AllReduce = ncclAllReduce;
    a->GroupStart = ncclGroupStart;
    a->GroupEnd = ncclGroupEnd;
    a->CommDestroy = ncclCommDestroy;
    a->GetErrorString = ncclGetErrorString;
}
#endif

/* Opens NCCL: NCCL_PATH, else libnccl.so.2 on the library path, in the CUDA toolkit, or from
   pip's nvidia-nccl wheels. Fills *a; 0, or -1 after the one line saying what to install. */
static int nccl_load(nccl_api* a) {
    static const char* const where[] = { "libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                         "/usr/local/cuda/lib/libnccl.so.2",
                                         "/usr/local/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so.2",
                                         "/usr/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so.2" };
    static const char* const names[] = { "ncclGetVersion", "ncclCommInitAll", "ncclAllReduce", "ncclGroupStart",
                                         "ncclGroupEnd", "ncclCommDestroy", "ncclGetErrorString" };
    void* fns[sizeof names / sizeof names[0]];
    const char* path = getenv("NCCL_PATH");
    void* lib = NULL;
    size_t i;
    if (path && *path) lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    for (i = 0; !lib && !(path && *path) && i < sizeof where / sizeof where[0]; i++) {
        glob_t g;
        if (glob(where[i], 0, NULL, &g) == 0) { /* a pattern that matches nothing is left out */
            lib = dlopen(g.gl_pathv[g.gl_pathc - 1], RTLD_NOW | RTLD_LOCAL);
            globfree(&g);
        } else if (!strchr(where[i], '*')) lib = dlopen(where[i], RTLD_NOW | RTLD_LOCAL);
    }
    for (i = 0; lib && i < sizeof names / sizeof names[0]; i++)
        if (!(fns[i] = dlsym(lib, names[i]))) { /* not NCCL 2.x: said below */
            dlclose(lib);
            lib = NULL;
        }
    if (!lib) {
        fprintf(stderr, "%s: NCCL not found (%s): install it (pip install nvidia-nccl-cu13, or apt-get install "
                "libnccl2 from NVIDIA's CUDA repository) and name libnccl.so.2 in NCCL_PATH if it is not on the "
                "library path\n", ex_name, path && *path ? path : "libnccl.so.2");
        return -1;
    }
    /* dlsym gives object pointers; ISO C converts them to function pointers only through memcpy */
    memcpy(&a->GetVersion, &fns[0], sizeof fns[0]);
    memcpy(&a->CommInitAll, &fns[1], sizeof fns[1]);
    memcpy(&a->AllReduce, &fns[2], sizeof fns[2]);
    memcpy(&a->GroupStart, &fns[3], sizeof fns[3]);
    memcpy(&a->GroupEnd, &fns[4], sizeof fns[4]);
    memcpy(&a->CommDestroy, &fns[5], sizeof fns[5]);
    memcpy(&a->GetErrorString, &fns[6], sizeof fns[6]);
    return 0; /* never dlclose'd: NCCL keeps threads of its own */
}

typedef struct job {
    nccl_api* nccl;
    int count;
    size_t n; /* floats */
    gpuk_ctx** ctx;
    gpuk_stream* stream;
    gpuk_buffer *send, *recv;
    nccl_comm* comm;
} job;

/* One all-reduce of n floats over all GPUs: queued on each GPU's stream, as one group so that
   one thread may issue it for every GPU. */
static gpuk_result queue_allreduce(void* user) {
    const job* j = (const job*)user;
    nccl_result r = j->nccl->GroupStart(), r2;
    int i;
    for (i = 0; r == NCCL_RESULT_SUCCESS && i < j->count; i++)
        r = j->nccl->AllReduce((const void*)(uintptr_t)gpuk_buffer_devptr(j->ctx[i], j->send[i]),
                               (void*)(uintptr_t)gpuk_buffer_devptr(j->ctx[i], j->recv[i]), j->n, NCCL_TYPE_FLOAT32,
                               NCCL_OP_SUM, j->comm[i], (struct CUstream_st*)gpuk_stream_native(j->ctx[i], j->stream[i]));
    r2 = j->nccl->GroupEnd();
    if (r == NCCL_RESULT_SUCCESS) r = r2;
    if (r == NCCL_RESULT_SUCCESS) return GPUK_OK;
    fprintf(stderr, "%s: ncclAllReduce of %zu floats: %s\n", ex_name, j->n, j->nccl->GetErrorString(r));
    return GPUK_ERR_INVALID_ARG;
}

int main(int argc, char** argv) {
    gpuk_ctx* ctx[EX_MAX_GPUS];
    gpuk_stream stream[EX_MAX_GPUS];
    gpuk_buffer send[EX_MAX_GPUS], recv[EX_MAX_GPUS];
    nccl_comm comm[EX_MAX_GPUS];
    int devs[EX_MAX_GPUS];
    nccl_api nccl;
    ex_opts o;
    int count, devices = 0, i, version = 0, ok = 1;
    int rc = ex_begin_gpus(argc, argv, ex_name, "an all-reduce over all GPUs through NCCL", &o, ctx, EX_MAX_GPUS, &count);
    size_t max_bytes, bytes, k, bad = 0;
    float* h;
    nccl_result nr;
    job j;
    if (rc >= 0) return rc;
    TRY(gpuk_device_count(&devices));
    if (count > devices) { /* ctxs go round the devices: the first ones are on distinct GPUs */
        printf("NCCL takes one GPU a rank: %d of the %d ctxs asked for are used\n", devices, count);
        ex_end_gpus(ex_name, ctx + devices, count - devices);
        count = devices;
    }
    if (nccl_load(&nccl) != 0) {
        ex_end_gpus(ex_name, ctx, count);
        return EX_NO_GPU; /* nothing ran: like a missing driver */
    }
    if ((nr = nccl.GetVersion(&version)) != NCCL_RESULT_SUCCESS) version = 0;
    printf("NCCL %d.%d.%d, %d GPU%s\n", version / 10000, version / 100 % 100, version % 100, count, count > 1 ? "s" : "");
    for (i = 0; i < count; i++) devs[i] = gpuk_ctx_device_info(ctx[i])->ordinal;
    if ((nr = nccl.CommInitAll(comm, count, devs)) != NCCL_RESULT_SUCCESS)
        return ex_result(0, "ncclCommInitAll: %s", nccl.GetErrorString(nr));

    max_bytes = o.full ? (size_t)1 << 30 : (size_t)1 << 26;
    if (!(h = (float*)malloc(max_bytes))) return ex_result(0, "out of host memory");
    /* GPU i sends (i + 1) * (k % 251): every GPU must receive (k % 251) * count (count + 1) / 2 */
    for (k = 0; k < max_bytes / sizeof(float); k++) h[k] = (float)(k % 251);
    for (i = 0; i < count; i++) {
        TRY(gpuk_stream_create(ctx[i], NULL, &stream[i]));
        TRY(gpuk_buffer_create(ctx[i], &(gpuk_buffer_desc){ .data = { h, max_bytes }, .label = "send" }, &send[i]));
        TRY(gpuk_buffer_create(ctx[i], &(gpuk_buffer_desc){ .bytes = max_bytes, .label = "recv" }, &recv[i]));
        TRY(gpuk_scale_f32(ctx[i], stream[i], gpuk_at(send[i], 0), (float)(i + 1), gpuk_at(send[i], 0),
                           max_bytes / sizeof(float)));
    }
    j = (job){ &nccl, count, 0, ctx, stream, send, recv, comm };
    printf("%12s %12s %10s %12s %12s   %s\n", "bytes", "floats", "time us", "algbw GB/s", "busbw GB/s", "each GPU, us");
    for (bytes = 1024;; bytes = bytes * 32 < max_bytes ? bytes * 32 : max_bytes) { /* 1 KiB, 32 KiB, ..., max */
        float ms[EX_MAX_GPUS];
        double t, algbw;
        j.n = bytes / sizeof(float);
        for (i = 0; i < count; i++) TRY(gpuk_buffer_memset(ctx[i], stream[i], recv[i], 0, 0xFFFFFFFFu, 4, j.n)); /* NaN */
        if ((t = ex_time_gpus(ctx, stream, count, RUNS, bytes <= ((size_t)32 << 20) ? 20 : 5, queue_allreduce, &j, ms)) < 0)
            return ex_result(0, "an all-reduce of %zu bytes failed", bytes);
        algbw = (double)bytes / t / 1e6;
        printf("%12zu %12zu %10.1f %12.2f %12.2f  ", bytes, j.n, t * 1e3, algbw, algbw * 2.0 * (count - 1) / count);
        for (i = 0; i < count; i++) printf(" %.1f", ms[i] * 1e3);
        printf("\n");
        for (i = 0; i < count; i++) { /* every element on every GPU */
            TRY(gpuk_buffer_read(ctx[i], recv[i], 0, h, bytes));
            for (k = 0; k < j.n; k++)
                if (h[k] != (float)(k % 251) * (float)(count * (count + 1) / 2) && bad++ == 0)
                    fprintf(stderr, "%s: GPU %d, %zu floats: element %zu is %g, not %g\n", ex_name, i, j.n, k, h[k],
                            (double)(k % 251) * (count * (count + 1) / 2));
        }
        if (bytes == max_bytes) break;
    }
    for (i = 0; i < count; i++)
        if ((nr = nccl.CommDestroy(comm[i])) != NCCL_RESULT_SUCCESS) ok = 0;
    if (ex_end_gpus(ex_name, ctx, count)) ok = 0;
    free(h);
    return ex_result(ok && bad == 0, "NCCL all-reduce of up to %zu MiB over %d GPU%s: %zu wrong elements", max_bytes >> 20,
                     count, count > 1 ? "s" : "", bad);
}
