/* examples/21_device_printf.c - printf and assert in kernels of your own. The printf FIFO (the
   device buffer printf writes into) sized with gpuk_ctx_set_limit before the ctx's first launch
   and read back with gpuk_ctx_get_limit; a kernel's lines reaching stdout at the next
   synchronisation (gpuk_stream_sync), not at the launch; the FIFO refused once a kernel has
   run, with gpuk's text naming the rule and the kernel; the stack size still changing. Then a
   failed device-side assert in a child process: CUDA_ERROR_ASSERT (710) at the sync, the
   driver's message (file, line, condition), and the next call refused with gpuk's text naming
   the kernel that faulted. A fault leaves the ctx unusable until the process ends, which is
   why it runs in a child. Checked: the limits read back, the refusal's code, the child's 710.
   Needs NVRTC (the CUDA toolkit's libnvrtc; GPUK_NVRTC_PATH).
   cc -std=c99 -O2 -I.. 21_device_printf.c -o device_printf -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char ex_name[] = "21_device_printf";

/* NVRTC knows printf and assert without any header */
static const char kernels_src[] =
    "extern \"C\" __global__ void hello(int round, float x) {\n"
    "    printf(\"  GPU: block %u thread %u, round %d, x = %.2f\\n\", blockIdx.x, threadIdx.x,\n"
    "           round, x);\n"
    "}\n"
    "extern \"C\" __global__ void check_positive(const float* v, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) assert(v[i] > 0.0f);\n"
    "}\n";

static gpuk_result compile(gpuk_ctx* ctx, gpuk_module* m) {
    /* the toolkit's NVRTC where it is not on the library path and none is named */
    if (!getenv("GPUK_NVRTC_PATH") && access("/usr/local/cuda/lib64/libnvrtc.so.13", R_OK) == 0)
        setenv("GPUK_NVRTC_PATH", "/usr/local/cuda/lib64/libnvrtc.so.13", 0);
    return gpuk_module_compile(ctx, &(gpuk_compile_desc){ .source = kernels_src,
                                                          .name = "printf_assert.cu" }, m);
}

/* The child: check_positive over 256 values, one of them negative. Exit 0 where the sync
   returns 710 and a later call returns it again with a text naming the kernel. */
static int assert_child(void) {
    enum { N = 256 };
    float v[N];
    gpuk_ctx* ctx;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_buffer b;
    gpuk_devptr p;
    gpuk_result r1, r2;
    unsigned n = N, i;
    int ok;
    alarm(60); /* never hang: the parent sees the signal as a failure */
    for (i = 0; i < N; i++) v[i] = 1.0f + (float)i;
    v[137] = -1.0f;
    if (!ex_start("21_device_printf (child)", &ctx)) return EX_NO_GPU;
    TRY(compile(ctx, &m));
    TRY(gpuk_kernel_get(ctx, m, "check_positive", &k));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .data = { v, sizeof v } }, &b));
    p = gpuk_buffer_devptr(ctx, b);
    TRY(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(N / 128),
                                                 .block = GPUK_DIM1(128), GPUK_ARGS(&p, &n) }));
    r1 = gpuk_ctx_sync(ctx); /* the logger prints the fault too (stderr) */
    printf("child: gpuk_ctx_sync returned %d: %s\n", (int)r1, gpuk_last_error());
    r2 = gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 16 }, &b);
    printf("child: the next call returned %d: %s\n", (int)r2, gpuk_last_error());
    ok = r1 == (gpuk_result)710 && r2 == r1 && strstr(gpuk_last_error(), "check_positive") != NULL;
    gpuk_ctx_destroy(ctx); /* returns the fault again; the process ends anyway */
    fflush(stdout);
    return ok ? 0 : 1;
}

/* Runs this program again as a child (a fresh process: CUDA does not survive a fork) that
   fails an assert; 1 where it exited 0. */
static int run_assert_child(const char* self) {
    int status = -1;
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", self, "--assert-child", (char*)NULL);
        execlp(self, self, "--assert-child", (char*)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        printf("cannot run the child: %s\n", strerror(errno));
        return 0;
    }
    if (!WIFEXITED(status)) printf("the child ended by signal %d\n", WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0) printf("the child exited %d\n", WEXITSTATUS(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char** argv) {
    ex_opts o;
    gpuk_ctx* ctx;
    gpuk_module m;
    gpuk_kernel hello;
    gpuk_stream s;
    gpuk_result r;
    size_t fifo0 = 0, fifo = 0, stack = 0, heap = 0, after = 0;
    const size_t want_fifo = (size_t)4 << 20, want_stack = 8192;
    int rc, round = 1, bad = 0, child_ok;
    float x = 2.5f;
    if (argc == 2 && strcmp(argv[1], "--assert-child") == 0) return assert_child();
    rc = ex_begin(argc, argv, ex_name, "device printf, its FIFO, and a failed assert in a child",
                  &o, &ctx);
    if (rc >= 0) return rc;
    r = compile(ctx, &m);
    if (r == GPUK_ERR_NO_NVRTC) return EX_NO_GPU; /* the logger said what to install */
    TRY(r);
    TRY(gpuk_kernel_get(ctx, m, "hello", &hello));
    TRY(gpuk_stream_create(ctx, NULL, &s));

    /* before the first launch: every limit may change */
    TRY(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, &fifo0));
    TRY(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_STACK_SIZE, &stack));
    TRY(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_MALLOC_HEAP_SIZE, &heap));
    printf("limits: printf FIFO %zu bytes, stack %zu bytes a thread, malloc heap %zu bytes\n",
           fifo0, stack, heap);
    TRY(gpuk_ctx_set_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, want_fifo));
    TRY(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, &fifo));
    printf("printf FIFO: asked for %zu bytes, the driver keeps %zu\n", want_fifo, fifo);
    bad += fifo < want_fifo; /* the driver may round up, never down */

    /* the kernel's lines wait in the FIFO until the next synchronisation */
    TRY(gpuk_launch(ctx, hello, &(gpuk_launch_desc){ .grid = GPUK_DIM1(2), .block = GPUK_DIM1(4),
                                                     .stream = s, GPUK_ARGS(&round, &x) }));
    printf("host: hello launched on 2 blocks of 4 threads; now gpuk_stream_sync\n");
    fflush(stdout); /* the driver prints through stdio's stdout: keep the order */
    TRY(gpuk_stream_sync(ctx, s));
    printf("host: after gpuk_stream_sync (the lines above came from the GPU)\n");

    /* after a launch: gpuk refuses the FIFO itself, as the driver would once a kernel calling
       printf has run; the logger has printed the text on stderr as well */
    r = gpuk_ctx_set_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, 2 * want_fifo);
    printf("the FIFO after a launch: %s (%d): %s\n", gpuk_result_str(r), (int)r,
           gpuk_last_error());
    bad += r != GPUK_ERR_INVALID_ARG || strstr(gpuk_last_error(), "hello") == NULL;
    TRY(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, &after));
    bad += after != fifo;
    /* the stack size may change at any time */
    TRY(gpuk_ctx_set_limit(ctx, GPUK_LIMIT_STACK_SIZE, want_stack));
    TRY(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_STACK_SIZE, &after));
    printf("stack after the launch: asked for %zu bytes, the driver keeps %zu\n", want_stack,
           after);
    bad += after < want_stack;
    TRY(gpuk_stream_destroy(ctx, s));
    TRY(gpuk_ctx_destroy(ctx));

    printf("a failed assert, in a child process:\n");
    child_ok = run_assert_child(argv[0]);
    return ex_result(bad == 0 && child_ok, "printf FIFO %zu -> %zu bytes, refused after a launch; "
                     "the child's assert gave 710 naming its kernel%s", fifo0, fifo,
                     child_ok ? "" : " (it did not)");
}
