/* tests/unit/unit_multi_gpu_examples.c - a multi-GPU example's host side on the fake driver's two
   devices, under ASan: built once per example (-DEXAMPLE=14, 15 or 16), its main run in this
   process after the fake is plugged in (the example's own gpuk_init then finds gpuk ready).
   The fake runs no kernels, so the outputs keep their poison and the example must report
   FAILED with every ctx, buffer, event and module released; what it prints shows the split
   (which GPU got which share, shared devices, the peer path) and, for NCCL, the install hint
   when the library is missing. No GPU needed. */
#define _GNU_SOURCE
#define main example_main
#if EXAMPLE == 14
#include "../../examples/14_mandelbrot_bands.c"
#elif EXAMPLE == 15
#include "../../examples/15_multi_gpu_sum.c"
#else
#include "../../examples/16_nccl_allreduce.c"
#endif
#undef main
#include "../support/check.h"
#include "../support/fake_driver.h"
#include <fcntl.h>
#include <unistd.h>

static char out_dir[] = "/tmp/gpuk_multi_gpu_XXXXXX";
static char text[1 << 16]; /* what the last run printed, stdout and stderr */

/* Runs the example's main with args on a fresh fake of two devices; its exit status. */
static int run(const fake_config* cfg, const char* a1, const char* a2) {
    char* argv[6] = { (char*)"example", (char*)"--out", out_dir, (char*)a1, (char*)a2, NULL };
    char path[64];
    int argc = a2 ? 5 : 3, fd, saved_out, saved_err, rc;
    ssize_t got;
    CHECK_OK(fake_gpuk_init(cfg));
    snprintf(path, sizeof path, "%s/log", out_dir);
    fflush(stdout);
    fflush(stderr);
    saved_out = dup(1);
    saved_err = dup(2);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    rc = example_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    got = pread(fd, text, sizeof text - 1, 0);
    text[got > 0 ? got : 0] = 0;
    close(fd);
    fake_gpuk_check_released(); /* ex_end_gpus gave everything back */
    return rc;
}

#define CHECK_SAYS(s)                                                                  \
    do {                                                                               \
        if (!strstr(text, s)) {                                                        \
            CHECK(strstr(text, s) != NULL);                                            \
            fprintf(stderr, "    wanted '%s' in what it printed:\n%s\n", s, text);     \
        }                                                                              \
    } while (0)

#if EXAMPLE == 14
static int test_two_devices(void) {
    CHECK(run(&(fake_config){ .devices = 2 }, NULL, NULL) == 1);
    CHECK_SAYS("GPU 0: device 0");
    CHECK_SAYS("GPU 1: device 1");
    CHECK_SAYS("GPU 0: rows    0..511");
    CHECK_SAYS("GPU 1: rows  512..1023");
    CHECK_SAYS("2 GPUs: ");
    CHECK_SAYS("FAILED: Mandelbrot 1024^2 in 2 bands on 2 GPUs differs from GPU 0's picture bit for bit "
               "(1048576 pixels differ)");
    CHECK_SAYS("mandelbrot_bands.png (1024x1024)");
    return 0;
}
static int test_three_ctxs_two_devices(void) {
    CHECK(run(&(fake_config){ .devices = 2 }, "--gpus", "3") == 1);
    CHECK_SAYS("GPU 2: device 0, ");
    CHECK_SAYS("(shared)");
    CHECK_SAYS("GPU 2: rows  682..1023");
    CHECK_SAYS("GPUs share a device: no speedup expected");
    return 0;
}
#elif EXAMPLE == 15
static int test_two_devices(void) {
    CHECK(run(&(fake_config){ .devices = 2, .peer_access = 1 }, NULL, NULL) == 1);
    CHECK_SAYS("GPU 1 -> GPU 0: peer to peer");
    CHECK_SAYS("GPU 0:   16777216 values from          0");
    CHECK_SAYS("GPU 1:   16777216 values from   16777216");
    CHECK_SAYS("FAILED: sum of 33554432 doubles over 2 GPUs does NOT match");
    return 0;
}
static int test_no_peer_path(void) {
    CHECK(run(&(fake_config){ .devices = 2 }, NULL, NULL) == 1);
    CHECK_SAYS("GPU 1 -> GPU 0: through the host");
    return 0;
}
static int test_three_ctxs_two_devices(void) {
    CHECK(run(&(fake_config){ .devices = 2, .peer_access = 1 }, "--gpus", "3") == 1);
    CHECK_SAYS("GPU 2 -> GPU 0: the same device");
    CHECK_SAYS("GPU 2:   11184812 values from   22369620");
    return 0;
}
#else
static int test_no_nccl(void) {
    setenv("NCCL_PATH", "/nonexistent/libnccl.so.2", 1);
    CHECK(run(&(fake_config){ .devices = 2 }, NULL, NULL) == EX_NO_GPU);
    CHECK_SAYS("NCCL not found (/nonexistent/libnccl.so.2): install it (pip install nvidia-nccl-cu13");
    CHECK(strstr(strstr(text, "NCCL not found") + 1, "NCCL not found") == NULL); /* once */
    return 0;
}
static int test_more_ctxs_than_devices(void) {
    setenv("NCCL_PATH", "/nonexistent/libnccl.so.2", 1);
    CHECK(run(&(fake_config){ .devices = 2 }, "--gpus", "3") == EX_NO_GPU);
    CHECK_SAYS("NCCL takes one GPU a rank: 2 of the 3 ctxs asked for are used");
    return 0;
}
#endif

int main(void) {
    if (!mkdtemp(out_dir)) { perror("mkdtemp"); return 1; }
#if EXAMPLE == 14
    RUN(test_two_devices);
    RUN(test_three_ctxs_two_devices);
#elif EXAMPLE == 15
    RUN(test_two_devices);
    RUN(test_no_peer_path);
    RUN(test_three_ctxs_two_devices);
#else
    RUN(test_no_nccl);
    RUN(test_more_ctxs_than_devices);
#endif
    {
        char cmd[96];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", out_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", out_dir);
    }
    return test_summary();
}
