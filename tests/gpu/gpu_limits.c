/* tests/gpu/gpu_limits.c - the ctx's limits and what kernels say on a real GPU: every limit read
   and set before the first launch, device printf reaching stdout at a sync (a stream sync, a
   ctx sync, a stream-less read) and not before, the printf FIFO and the heap refused once a
   kernel has run (by gpuk, and by the driver itself when asked directly), the stack size
   still changing; a device-side assert (710) and a trap in child processes, with the driver's
   message and gpuk's text naming the kernel and the way to the line. Skipped where no driver
   or GPU exists; GPUK_SKIP_FAULT_TEST=1 (the sanitizer runs) skips the two children.
   cc -std=c99 -I../.. gpu_limits.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_test_kernels.h"
#include "gpu_setup.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static gpuk_ctx* ctx;
static gpuk_module mod;
static const char* self_path;

static gpuk_kernel kernel(gpuk_ctx* c, gpuk_module m, const char* name) {
    gpuk_kernel k = { 0 };
    CHECK_OK(gpuk_kernel_get(c, m, name, &k));
    return k;
}

/* A file's whole text (at most cap - 1 bytes), NUL-terminated; "" where it cannot be read. */
static void read_file(const char* path, char* out, size_t cap) {
    FILE* f = fopen(path, "rb");
    size_t n = 0;
    out[0] = 0;
    if (!f) return;
    n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    fclose(f);
}

/* stdout into a fresh temporary file from here (stdio's buffer flushed first), and back. */
typedef struct capture { char path[64]; int saved; int fd; } capture;
static int capture_begin(capture* c) {
    snprintf(c->path, sizeof c->path, "/tmp/gpu_limits_XXXXXX");
    fflush(stdout);
    c->fd = mkstemp(c->path);
    c->saved = dup(1);
    if (c->fd < 0 || c->saved < 0 || dup2(c->fd, 1) < 0) return 0;
    return 1;
}
/* What reached the file so far (the driver's output may still sit in stdio's buffer). */
static void capture_peek(capture* c, char* out, size_t cap) {
    fflush(stdout);
    read_file(c->path, out, cap);
}
static void capture_end(capture* c, char* out, size_t cap) {
    capture_peek(c, out, cap);
    dup2(c->saved, 1);
    close(c->saved);
    close(c->fd);
    unlink(c->path);
}

/* Every limit reads (the sync depth may be CUDA_ERROR_UNSUPPORTED_LIMIT from compute capability
   9.0); each settable one set before the ctx's first launch reads back at least what was
   asked (the driver may round up). */
static int test_limits_before_the_first_launch(void) {
    static const gpuk_limit which[] = { GPUK_LIMIT_STACK_SIZE, GPUK_LIMIT_PRINTF_FIFO_SIZE,
                                        GPUK_LIMIT_MALLOC_HEAP_SIZE, GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
                                        GPUK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT };
    static const char* const names[] = { "stack", "printf FIFO", "malloc heap", "sync depth",
                                         "pending launches" };
    static const size_t want[] = { 4096, (size_t)2 << 20, (size_t)16 << 20, 3, 4096 };
    size_t i, v;
    for (i = 0; i < 5; i++) {
        gpuk_result r = gpuk_ctx_get_limit(ctx, which[i], &v);
        if (which[i] == GPUK_LIMIT_DEV_RUNTIME_SYNC_DEPTH && r == (gpuk_result)215) {
            printf("     %s: not on this device (CUDA_ERROR_UNSUPPORTED_LIMIT)\n", names[i]);
            continue;
        }
        CHECK_OK(r);
        printf("     %s: %zu by default", names[i], v);
        CHECK_OK(gpuk_ctx_set_limit(ctx, which[i], want[i]));
        CHECK_OK(gpuk_ctx_get_limit(ctx, which[i], &v));
        printf(", %zu after asking for %zu\n", v, want[i]);
        CHECK(v >= want[i]);
    }
    return TEST_PASS;
}

/* Each thread's line, read from stdout after a sync: n threads a block, blocks blocks. */
static int lines_present(const char* text, int tag, unsigned blocks, unsigned n) {
    unsigned b, t;
    int missing = 0;
    char line[96];
    for (b = 0; b < blocks; b++)
        for (t = 0; t < n; t++) {
            snprintf(line, sizeof line, "gpuk printf %d: block %u thread %u x=1.50\n", tag, b, t);
            if (!strstr(text, line)) missing++;
        }
    return missing == 0;
}

/* The kernel's lines are not on stdout after the launch alone; they are after a stream sync,
   after a ctx sync, and after a stream-less read. */
static int test_printf_reaches_stdout_at_a_sync(void) {
    gpuk_kernel k = kernel(ctx, mod, "say_hello");
    gpuk_stream s;
    gpuk_buffer b;
    float x = 1.5f, back = 0.0f;
    int tag, round;
    static char text[16384];
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof back }, &b));
    CHECK_OK(gpuk_buffer_write(ctx, b, 0, &x, sizeof x)); /* the read below reads set bytes */
    for (round = 0; round < 3; round++) {
        capture c;
        tag = 41 + round;
        if (!capture_begin(&c)) { CHECK(!"cannot redirect stdout"); return TEST_PASS; }
        CHECK_OK(gpuk_launch(ctx, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(2), .block = GPUK_DIM1(3),
                                                          .stream = round == 0 ? s : GPUK_DEFAULT_STREAM,
                                                          GPUK_ARGS(&tag, &x) }));
        capture_peek(&c, text, sizeof text);
        CHECK(strstr(text, "gpuk printf") == NULL); /* not before a sync */
        if (round == 0) CHECK_OK(gpuk_stream_sync(ctx, s));
        if (round == 1) CHECK_OK(gpuk_ctx_sync(ctx));
        if (round == 2) CHECK_OK(gpuk_buffer_read(ctx, b, 0, &back, sizeof back));
        capture_end(&c, text, sizeof text);
        printf("     after %s: %s", round == 0 ? "gpuk_stream_sync" : round == 1 ? "gpuk_ctx_sync" :
               "gpuk_buffer_read", text[0] ? text : "(nothing)\n");
        CHECK(lines_present(text, tag, 2, 3));
    }
    CHECK_OK(gpuk_buffer_destroy(ctx, b));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    return TEST_PASS;
}

/* After launches (the printf kernel's among them) gpuk refuses the FIFO and the heap, naming
   the rule; the driver, asked directly, refuses the FIFO itself (the rule gpuk keeps); the
   stack size still changes. */
static int test_fifo_refused_after_a_printf_kernel(void) {
    typedef unsigned int (*set_limit_fn)(unsigned int limit, size_t value);
    void* sym = gpuk_driver_symbol("cuCtxSetLimit", 3010);
    set_limit_fn raw;
    size_t fifo = 0, v = 0;
    CHECK_OK(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, &fifo));
    CHECK_RESULT(gpuk_ctx_set_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, 2 * fifo), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("only before the ctx's first kernel launch");
    CHECK_ERROR_MENTIONS("kernel 'say_hello' has been launched");
    CHECK_RESULT(gpuk_ctx_set_limit(ctx, GPUK_LIMIT_MALLOC_HEAP_SIZE, (size_t)64 << 20), GPUK_ERR_INVALID_ARG);
    CHECK(sym != NULL);
    if (sym) {
        unsigned int cr;
        memcpy(&raw, &sym, sizeof raw);
        CHECK_OK(gpuk_ctx_make_current(ctx));
        cr = raw(1 /* CU_LIMIT_PRINTF_FIFO_SIZE */, 2 * fifo);
        printf("     the driver's own cuCtxSetLimit of the FIFO after a printf kernel: %u (%s)\n", cr,
               gpuk_result_str((gpuk_result)cr));
        CHECK(cr == 1);
    }
    CHECK_OK(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_PRINTF_FIFO_SIZE, &v));
    CHECK(v == fifo);
    CHECK_OK(gpuk_ctx_set_limit(ctx, GPUK_LIMIT_STACK_SIZE, 8192));
    CHECK_OK(gpuk_ctx_get_limit(ctx, GPUK_LIMIT_STACK_SIZE, &v));
    CHECK(v >= 8192);
    return TEST_PASS;
}

/* Child: launch kernel name with bad = 1 (one block of 32 threads), sync, check what gpuk says
   then and at a later call; print both texts. Exit 0 when they are as documented. */
static int fault_child(const char* name) {
    gpuk_ctx* c;
    gpuk_module m;
    gpuk_kernel k;
    gpuk_buffer b;
    int bad = 1, ok;
    gpuk_result r1, r2;
    alarm(60); /* never hang: the parent sees SIGALRM as a failure */
    if (gpuk_ctx_create(NULL, &c) != GPUK_OK) { printf("child: no ctx: %s\n", gpuk_last_error()); return 2; }
    if (gpuk_module_load(c, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 } }, &m) != GPUK_OK ||
        gpuk_kernel_get(c, m, name, &k) != GPUK_OK) {
        printf("child: %s\n", gpuk_last_error());
        return 3;
    }
    if (gpuk_launch(c, k, &(gpuk_launch_desc){ .grid = GPUK_DIM1(1), .block = GPUK_DIM1(32), GPUK_ARGS(&bad) }) != GPUK_OK) {
        printf("child: launch: %s\n", gpuk_last_error());
        return 4;
    }
    r1 = gpuk_ctx_sync(c);
    printf("child: sync after %s: %s\n", name, gpuk_last_error());
    ok = strstr(gpuk_last_error(), name) != NULL && strstr(gpuk_last_error(), "compute-sanitizer") != NULL &&
         strstr(gpuk_last_error(), "-lineinfo") != NULL && strstr(gpuk_last_error(), "unusable") != NULL;
    if (strcmp(name, "assert_fails") == 0)
        ok = ok && r1 == (gpuk_result)710 && strstr(gpuk_last_error(), "CUDA_ERROR_ASSERT (710)") != NULL;
    else ok = ok && (r1 == (gpuk_result)715 || r1 == (gpuk_result)719);
    r2 = gpuk_buffer_create(c, &(gpuk_buffer_desc){ .bytes = 16 }, &b);
    printf("child: a later call: %s\n", gpuk_last_error());
    ok = ok && r2 == r1 && strstr(gpuk_last_error(), "since an earlier fault") != NULL &&
         strstr(gpuk_last_error(), name) != NULL;
    ok = ok && gpuk_ctx_destroy(c) == r1;
    printf("child: results %d %d\n", (int)r1, (int)r2);
    fflush(stdout);
    return ok ? 0 : 1;
}

/* Runs this program as a child (fork, exec) in mode, its stdout and stderr into files. */
static int run_child(const char* mode, char* out, size_t out_cap, char* err, size_t err_cap) {
    char out_path[64], err_path[64];
    int fo, fe, status = -1;
    pid_t pid;
    snprintf(out_path, sizeof out_path, "/tmp/gpu_limits_out_XXXXXX");
    snprintf(err_path, sizeof err_path, "/tmp/gpu_limits_err_XXXXXX");
    fo = mkstemp(out_path);
    fe = mkstemp(err_path);
    if (fo < 0 || fe < 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        execl(self_path, self_path, mode, (char*)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, &status, 0);
    close(fo);
    close(fe);
    read_file(out_path, out, out_cap);
    read_file(err_path, err, err_cap);
    unlink(out_path);
    unlink(err_path);
    return status;
}

/* A failed device-side assert: 710 with gpuk's text (the kernel, the way to the line) in the
   child, and the driver's message (this file and the condition) on its stderr or stdout. */
static int test_assert_in_a_child(void) {
    static char out[8192], err[8192];
    int status;
    if (getenv("GPUK_SKIP_FAULT_TEST")) return TEST_SKIP;
    status = run_child("--assert-child", out, sizeof out, err, sizeof err);
    printf("%s", out);
    if (err[0]) printf("     child's stderr: %s", err);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strstr(out, "CUDA_ERROR_ASSERT (710)") != NULL);
    CHECK(strstr(err, "Assertion") != NULL || strstr(out, "Assertion") != NULL);
    CHECK(strstr(err, "gpu_test_kernels.cu:") != NULL || strstr(out, "gpu_test_kernels.cu:") != NULL);
    printf("     the driver's assert message went to %s\n",
           strstr(err, "Assertion") ? "stderr" : strstr(out, "Assertion") ? "stdout" : "neither");
    return TEST_PASS;
}

/* A trap: 715 or 719 with the kernel named. */
static int test_trap_in_a_child(void) {
    static char out[8192], err[8192];
    int status;
    if (getenv("GPUK_SKIP_FAULT_TEST")) return TEST_SKIP;
    status = run_child("--trap-child", out, sizeof out, err, sizeof err);
    printf("%s", out);
    if (err[0]) printf("     child's stderr: %s", err);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strstr(out, "kernel 'trap_now'") != NULL);
    return TEST_PASS;
}

int main(int argc, char** argv) {
    int code;
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--assert-child") == 0) return fault_child("assert_fails");
    if (argc > 1 && strcmp(argv[1], "--trap-child") == 0) return fault_child("trap_now");
    if (!gpu_setup("gpu_limits", 5, &ctx, &code)) return code;
    if (gpuk_module_load(ctx, &(gpuk_module_desc){ .image = { gpu_test_ptx, 0 }, .label = "gpu_test" }, &mod) != GPUK_OK) {
        printf("FAIL setup: %s\n0 passed, 1 failed, 0 skipped\n", gpuk_last_error());
        return 1;
    }
    RUN(test_limits_before_the_first_launch); /* first: no kernel has run on the ctx yet */
    RUN(test_printf_reaches_stdout_at_a_sync);
    RUN(test_fifo_refused_after_a_printf_kernel);
    RUN(test_assert_in_a_child);
    RUN(test_trap_in_a_child);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
