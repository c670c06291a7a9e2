/* tests/integration/nccl_load.c - examples/16_nccl_allreduce.c's NCCL loader (nccl_load) without
   a GPU: run by tests/integration/nccl_abi.sh with NCCL_PATH naming a library. "ok": every entry
   point resolves and ncclGetVersion / ncclGetErrorString answer through the example's declared
   types.
   "missing": nccl_load refuses, having printed the install hint (the script counts it). */
#define main nccl_example_main
#include "../../examples/16_nccl_allreduce.c"
#undef main

int main(int argc, char** argv) {
    nccl_api a;
    int version = 0, want_ok = argc > 1 && strcmp(argv[1], "ok") == 0;
    memset(&a, 0, sizeof a);
    if (nccl_load(&a) != 0) {
        printf("nccl_load refused '%s'\n", getenv("NCCL_PATH") ? getenv("NCCL_PATH") : "(unset)");
        return want_ok ? 1 : 0;
    }
    if (!want_ok) { printf("nccl_load took '%s'\n", getenv("NCCL_PATH")); return 1; }
    if (a.GetVersion(&version) != NCCL_RESULT_SUCCESS || version < 20000) {
        printf("ncclGetVersion: %d\n", version);
        return 1;
    }
    if (!a.GetErrorString(NCCL_RESULT_SUCCESS) || !a.CommInitAll || !a.AllReduce || !a.GroupStart ||
        !a.GroupEnd || !a.CommDestroy) {
        printf("an entry point is missing\n");
        return 1;
    }
    printf("NCCL %d.%d.%d: '%s'\n", version / 10000, version / 100 % 100, version % 100,
           a.GetErrorString(NCCL_RESULT_SUCCESS));
    return 0;
}
