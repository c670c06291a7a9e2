/* tests/gpu/gpu_ipc.c - buffers and events shared between two processes on a real GPU (CUDA
   IPC). In this process: a buffer and an interprocess event exported; importing them here is
   refused (the driver opens an export only in other processes), as are exports of the memory
   pool's buffers and of events not made interprocess. Across processes (this program again,
   started by fork and exec with --child, the handles sent through a pipe): the parent fills a
   buffer with fresh random floats, scales it on the GPU a few times and records an event
   without waiting; the child imports buffer and event, makes its stream wait for the event,
   reads the buffer into poisoned memory and checks it against its own CPU reference (the same
   seed), is refused a stream-ordered free and a re-export of the import, then writes a
   scaled copy into a second imported buffer (poisoned by the parent) and records a second
   imported event without waiting; the parent's stream waits for that event and the parent
   checks the copy bit for bit. The child then destroys its imports (closing, never freeing:
   the parent's buffer keeps its data afterwards) and imports once more. Skipped where no
   driver or GPU exists or the platform has no CUDA IPC; GPUK_TEST_UNDER_SANITIZER=1 skips the
   cross-process part (a child process under compute-sanitizer, importing memory the tool did
   not see allocated, is not what the sanitizer runs check), and the whole program where the
   tool makes the export fail.
   cc -std=c99 -I../.. gpu_ipc.c -ldl -lpthread */
#define _GNU_SOURCE
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "../support/check.h"
#include "gpu_setup.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static gpuk_ctx* ctx;
static const char* self_path;

/* What the parent sends the child, and the child's answer; raw structs through a pipe. */
typedef struct msg_handles {
    uint64_t seed, n;
    float alpha, beta;
    uint32_t reps;
    gpuk_ipc_handle x, y, ready, done;
} msg_handles;
typedef struct msg_result { int32_t ok; uint32_t wrong; } msg_result;

static int write_all(int fd, const void* p, size_t n) {
    const char* c = (const char*)p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k <= 0) return 0;
        c += k;
        n -= (size_t)k;
    }
    return 1;
}
static int read_all(int fd, void* p, size_t n) {
    char* c = (char*)p;
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k <= 0) return 0;
        c += k;
        n -= (size_t)k;
    }
    return 1;
}

/* x0 from seed (both processes draw it), then reps multiplications by alpha: what the
   built-in's single rounding per step gives, bit for bit. */
static void reference(float* out, uint64_t seed, size_t n, float alpha, uint32_t reps) {
    size_t i;
    uint32_t k;
    rng_state = seed;
    for (i = 0; i < n; i++) {
        float v = (float)uniform(-4.0, 4.0);
        for (k = 0; k < reps; k++) v = alpha * v;
        out[i] = v;
    }
}
static size_t count_wrong(const float* got, const float* want, size_t n, const char* what) {
    size_t i, bad = 0;
    for (i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof got[i]) != 0 && bad++ < 3)
            fprintf(stderr, "  %s: element %zu of %zu is %.9g, want %.9g\n", what, i, n, got[i],
                    want[i]);
    return bad;
}

/* In one process: the export works, the import of it is refused before the driver, the
   memory pool's buffers and events not made interprocess are refused. */
static int test_refusals_in_one_process(void) {
    gpuk_buffer x, pooled, imp;
    gpuk_event plain, xe, ie;
    gpuk_ipc_handle hb, he, h;
    gpuk_result r;
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 4096, .label = "x" }, &x));
    r = gpuk_buffer_export(ctx, x, &hb);
    if (r == GPUK_ERR_UNSUPPORTED || r == (gpuk_result)801) {
        printf("     no CUDA IPC here: %s\n", gpuk_last_error());
        CHECK_OK(gpuk_buffer_destroy(ctx, x));
        return TEST_SKIP;
    }
    CHECK_OK(r);
    CHECK_RESULT(gpuk_buffer_import(ctx, &hb, &imp), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("exported by this process");
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .interprocess = true }, &xe));
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .no_timing = true }, &plain));
    CHECK_OK(gpuk_event_export(ctx, xe, &he));
    CHECK_RESULT(gpuk_event_import(ctx, &he, &ie), GPUK_ERR_INVALID_ARG);
    CHECK_RESULT(gpuk_event_export(ctx, plain, &h), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("interprocess");
    if (gpuk_features() & GPUK_FEATURE_STREAM_MEMORY &&
        gpuk_buffer_create_async(ctx, GPUK_DEFAULT_STREAM, &(gpuk_buffer_desc){ .bytes = 4096 },
                                 &pooled) == GPUK_OK) {
        CHECK_RESULT(gpuk_buffer_export(ctx, pooled, &h), GPUK_ERR_INVALID_ARG);
        CHECK_ERROR_MENTIONS("gpuk_buffer_create_async");
        CHECK_OK(gpuk_buffer_free_async(ctx, GPUK_DEFAULT_STREAM, pooled));
    }
    CHECK_OK(gpuk_event_destroy(ctx, xe));
    CHECK_OK(gpuk_event_destroy(ctx, plain));
    CHECK_OK(gpuk_buffer_destroy(ctx, x));
    return TEST_PASS;
}

/* The child: stdin and stdout are the pipes. Its checks go to stderr; its verdict to the
   parent (the result message) and the exit status. */
static int child_main(void) {
    msg_handles m;
    msg_result res = { 1, 0 };
    gpuk_ctx* c = NULL;
    gpuk_buffer x, y, again;
    gpuk_event ready, done;
    gpuk_stream s;
    gpuk_pinned ph;
    gpuk_ipc_handle h;
    float *hx, *want;
    uint32_t bye = 0;
    alarm(120); /* a lost parent must not leave this process waiting */
    if (!read_all(0, &m, sizeof m)) return 2;
    want = (float*)malloc((size_t)m.n * sizeof(float));
    if (!want || gpuk_ctx_create(NULL, &c) != GPUK_OK) {
        fprintf(stderr, "  child: setup: %s\n", gpuk_last_error());
        return 3;
    }
    CHECK_OK(gpuk_buffer_import(c, &m.x, &x));
    CHECK_OK(gpuk_buffer_import(c, &m.y, &y));
    CHECK_OK(gpuk_event_import(c, &m.ready, &ready));
    CHECK_OK(gpuk_event_import(c, &m.done, &done));
    CHECK(gpuk_buffer_size(c, x) == m.n * sizeof(float) && gpuk_buffer_size(c, y) == m.n * 4);
    CHECK_OK(gpuk_stream_create(c, NULL, &s));
    CHECK_OK(gpuk_pinned_create(c, &(gpuk_pinned_desc){ .bytes = m.n * sizeof(float) }, &ph));
    hx = (float*)gpuk_pinned_ptr(c, ph);
    if (check_failures || !hx) return 4;
    memset(hx, 0xFF, m.n * sizeof(float));
    /* the parent's scaling may still run: the stream waits for its event on the GPU */
    CHECK_OK(gpuk_stream_wait(c, s, ready));
    CHECK_OK(gpuk_buffer_read_async(c, s, x, 0, hx, m.n * sizeof(float)));
    CHECK_OK(gpuk_stream_sync(c, s));
    reference(want, m.seed, (size_t)m.n, m.alpha, m.reps);
    res.wrong = (uint32_t)count_wrong(hx, want, (size_t)m.n, "child reads the parent's buffer");
    /* the import is not the child's to free, nor to export again; its label is the parent's */
    CHECK_RESULT(gpuk_buffer_free_async(c, s, x), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("gpuk_buffer_import");
    CHECK_RESULT(gpuk_buffer_export(c, x, &h), GPUK_ERR_INVALID_ARG);
    CHECK_ERROR_MENTIONS("buffer 'shared x'");
    /* the answer, written on the GPU, announced by the event without a host wait here */
    CHECK_OK(gpuk_scale_f32(c, s, gpuk_at(y, 0), m.beta, gpuk_at(x, 0), (size_t)m.n));
    CHECK_OK(gpuk_event_record(c, s, done));
    res.ok = check_failures == 0;
    if (!write_all(1, &res, sizeof res)) return 5;
    if (!read_all(0, &bye, sizeof bye)) return 6; /* the parent has checked y */
    /* the destroys close the mappings; a new import opens the same memory again */
    CHECK_OK(gpuk_buffer_destroy(c, x));
    CHECK_OK(gpuk_buffer_destroy(c, y));
    CHECK_RESULT(gpuk_buffer_read(c, x, 0, hx, 4), GPUK_ERR_INVALID_HANDLE);
    CHECK_OK(gpuk_buffer_import(c, &m.x, &again));
    memset(hx, 0xFF, 4 * sizeof(float));
    CHECK_OK(gpuk_buffer_read(c, again, 0, hx, 4 * sizeof(float)));
    CHECK(count_wrong(hx, want, 4, "child's second import") == 0);
    CHECK_OK(gpuk_buffer_destroy(c, again));
    CHECK_OK(gpuk_event_destroy(c, ready));
    CHECK_OK(gpuk_event_destroy(c, done));
    CHECK_OK(gpuk_ctx_destroy(c));
    free(want);
    return check_failures ? 7 : 0;
}

/* Starts this program with --child, its stdin and stdout the two pipes. */
static pid_t start_child(int* to_child, int* from_child) {
    int a[2], b[2];
    pid_t pid;
    if (pipe(a) != 0 || pipe(b) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        dup2(a[0], 0);
        dup2(b[1], 1);
        close(a[0]); close(a[1]); close(b[0]); close(b[1]);
        execl(self_path, self_path, "--child", (char*)NULL);
        _exit(127);
    }
    close(a[0]);
    close(b[1]);
    *to_child = a[1];
    *from_child = b[0];
    return pid;
}

static int test_two_processes(void) {
    const size_t n = ((size_t)1 << 20) + 3;
    msg_handles m;
    msg_result res = { 0, 0 };
    gpuk_buffer x, y;
    gpuk_event ready, done;
    gpuk_stream s;
    gpuk_pinned ph;
    float *x0, *want, *hy;
    uint32_t k, bye = 1;
    int to_child = -1, from_child = -1, status = -1;
    size_t i;
    pid_t pid;
    if (under_sanitizer()) {
        printf("     skipped under compute-sanitizer (GPUK_TEST_UNDER_SANITIZER)\n");
        return TEST_SKIP;
    }
    memset(&m, 0, sizeof m);
    m.seed = rng() | 1u;
    m.n = n;
    m.alpha = 1.0009765625f; /* 1 + 2^-10: every step rounds */
    m.beta = (float)uniform(0.5, 2.0);
    m.reps = 24;
    x0 = (float*)malloc(n * sizeof(float));
    want = (float*)malloc(n * sizeof(float));
    if (!x0 || !want) { free(x0); free(want); CHECK(0); return TEST_PASS; }
    reference(x0, m.seed, n, 1.0f, 0);
    reference(want, m.seed, n, m.alpha, m.reps);
    CHECK_OK(gpuk_stream_create(ctx, NULL, &s));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "shared x",
                                                          .data = { x0, n * 4 } }, &x));
    CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * 4, .label = "y" }, &y));
    CHECK_OK(gpuk_buffer_memset(ctx, s, y, 0, 0xFF, 1, n * 4)); /* poison: NaNs */
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .interprocess = true }, &ready));
    CHECK_OK(gpuk_event_create(ctx, &(gpuk_event_desc){ .interprocess = true }, &done));
    CHECK_OK(gpuk_buffer_export(ctx, x, &m.x));
    CHECK_OK(gpuk_buffer_export(ctx, y, &m.y));
    CHECK_OK(gpuk_event_export(ctx, ready, &m.ready));
    CHECK_OK(gpuk_event_export(ctx, done, &m.done));
    /* queued, not waited for: the child's stream waits for the event instead */
    for (k = 0; k < m.reps; k++)
        CHECK_OK(gpuk_scale_f32(ctx, s, gpuk_at(x, 0), m.alpha, gpuk_at(x, 0), n));
    CHECK_OK(gpuk_event_record(ctx, s, ready));
    if (check_failures) return TEST_PASS;
    signal(SIGPIPE, SIG_IGN);
    alarm(120);
    pid = start_child(&to_child, &from_child);
    CHECK(pid > 0);
    if (pid <= 0) return TEST_PASS;
    CHECK(write_all(to_child, &m, sizeof m));
    CHECK(read_all(from_child, &res, sizeof res));
    CHECK(res.ok == 1 && res.wrong == 0);
    /* the child's answer: after its event, on this process's stream */
    CHECK_OK(gpuk_pinned_create(ctx, &(gpuk_pinned_desc){ .bytes = n * 4 }, &ph));
    hy = (float*)gpuk_pinned_ptr(ctx, ph);
    if (hy) {
        memset(hy, 0x7F, n * 4);
        CHECK_OK(gpuk_stream_wait(ctx, s, done));
        CHECK_OK(gpuk_buffer_read_async(ctx, s, y, 0, hy, n * 4));
        CHECK_OK(gpuk_stream_sync(ctx, s));
        for (i = 0; i < n; i++) x0[i] = m.beta * want[i];
        CHECK(count_wrong(hy, x0, n, "parent reads the child's answer") == 0);
    }
    CHECK(write_all(to_child, &bye, sizeof bye));
    waitpid(pid, &status, 0);
    alarm(0);
    close(to_child);
    close(from_child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "  child: %s %d\n", WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    /* the child's destroys closed its mappings and freed nothing: x still holds its data */
    if (hy) {
        memset(hy, 0x7F, n * 4);
        CHECK_OK(gpuk_buffer_read(ctx, x, 0, hy, n * 4));
        CHECK(count_wrong(hy, want, n, "parent's buffer after the child") == 0);
        CHECK_OK(gpuk_pinned_destroy(ctx, ph));
    }
    CHECK_OK(gpuk_event_destroy(ctx, ready));
    CHECK_OK(gpuk_event_destroy(ctx, done));
    CHECK_OK(gpuk_buffer_destroy(ctx, x));
    CHECK_OK(gpuk_buffer_destroy(ctx, y));
    CHECK_OK(gpuk_stream_destroy(ctx, s));
    free(x0);
    free(want);
    return TEST_PASS;
}

int main(int argc, char** argv) {
    int code, skip_all = 0;
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child_main();
    if (!gpu_setup("gpu_ipc", 2, &ctx, &code)) return code;
    rng_seed_from_clock();
    {   /* a platform without CUDA IPC: both tests skipped, saying why */
        gpuk_buffer probe;
        gpuk_ipc_handle h;
        gpuk_result r;
        CHECK_OK(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = 256 }, &probe));
        r = gpuk_buffer_export(ctx, probe, &h);
        if (r == GPUK_ERR_UNSUPPORTED || r == (gpuk_result)801) {
            printf("skip gpu_ipc: no CUDA IPC here: %s\n", gpuk_last_error());
            skip_all = 1;
        } else if (r != GPUK_OK && under_sanitizer()) {
            /* the tool may not let the driver export memory it tracks: say so, check the rest
               outside it */
            printf("skip gpu_ipc: no export under compute-sanitizer: %s\n", gpuk_last_error());
            skip_all = 1;
        }
        CHECK_OK(gpuk_buffer_destroy(ctx, probe));
    }
    if (skip_all) {
        CHECK_OK(gpuk_ctx_destroy(ctx));
        printf("0 passed, %d failed, 2 skipped\n", check_failures ? 1 : 0);
        return check_failures ? 1 : 0;
    }
    RUN(test_refusals_in_one_process);
    RUN(test_two_processes);
    CHECK_OK(gpuk_ctx_destroy(ctx));
    return test_summary();
}
