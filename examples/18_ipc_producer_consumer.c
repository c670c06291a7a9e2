/* examples/18_ipc_producer_consumer.c - two processes share GPU memory without copying it (CUDA
   IPC). The producer fills a buffer with n uniform random floats on the GPU
   (gpuk_random_uniform_f32) and records an interprocess event, without waiting for either;
   it exports both (gpuk_buffer_export, gpuk_event_export) and writes the two handles, plain
   bytes, into a pipe. The consumer, a child process, imports them (gpuk_buffer_import,
   gpuk_event_import), makes its stream wait for the producer's event on the GPU, sums the
   shared buffer where it lies with gpuk_sum_f32 and writes the sum back through a second pipe.
   The producer checks it against its own gpuk_sum_f32 of the same buffer (bit for bit: the
   built-in reductions are deterministic on one device) and against the CPU's double sum.
   The child is forked before either process starts CUDA: CUDA cannot be used in a fork()
   child of a process that already uses it (gpuk returns GPUK_ERR_FORKED there); a program
   that forks later starts its consumer with exec instead. The consumer must be done with the
   buffer (its import destroyed) before the producer frees it, so the producer waits for it
   to exit first. Default 2^24 floats (64 MiB), --full 2^27 (512 MiB).
   cc -std=c99 -O2 -I.. 18_ipc_producer_consumer.c -o ipc_producer_consumer -lpng -lm -ldl */
#define _POSIX_C_SOURCE 200809L
#define GPUK_IMPLEMENTATION
#include "gpuk.h"
#include "example_util.h"
#include <sys/wait.h>
#include <unistd.h>

static const char ex_name[] = "18_ipc_producer_consumer";
static const uint64_t SEED = 18;

/* Through the pipes as they are: the handles are plain bytes. */
typedef struct request { uint64_t n; gpuk_ipc_handle samples, filled; } request;
typedef struct reply { float sum; float ms; } reply;

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

/* The child: handles in, the sum out. Returns its exit status. */
static int consumer(int in, int out) {
    request q;
    reply a;
    gpuk_ctx* ctx;
    gpuk_buffer samples, sum;
    gpuk_event filled;
    gpuk_stream s;
    double t0;
    /* no request: the producer found no GPU or no CUDA IPC, and said so */
    if (!read_all(in, &q, sizeof q)) return EX_NO_GPU;
    if (!ex_start("18_ipc_producer_consumer (consumer)", &ctx)) return EX_NO_GPU;
    t0 = ex_now_ms();
    TRY(gpuk_buffer_import(ctx, &q.samples, &samples));
    TRY(gpuk_event_import(ctx, &q.filled, &filled));
    TRY(gpuk_stream_create(ctx, NULL, &s));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof(float), .label = "sum" },
                           &sum));
    /* the producer's fill may still run: the GPU waits for it, not this thread */
    TRY(gpuk_stream_wait(ctx, s, filled));
    TRY(gpuk_sum_f32(ctx, s, gpuk_at(sum, 0), gpuk_at(samples, 0), (size_t)q.n));
    TRY(gpuk_stream_sync(ctx, s));
    TRY(gpuk_buffer_read(ctx, sum, 0, &a.sum, sizeof a.sum));
    a.ms = (float)(ex_now_ms() - t0);
    printf("consumer: imported %.0f MiB and summed it in place in %.2f ms (import, wait, sum)\n",
           (double)q.n * 4 / (1 << 20), a.ms);
    /* the import closes (it never frees: the memory is the producer's) */
    TRY(gpuk_buffer_destroy(ctx, samples));
    TRY(gpuk_event_destroy(ctx, filled));
    TRY(gpuk_ctx_destroy(ctx));
    return write_all(out, &a, sizeof a) ? 0 : 1;
}

static int producer(const ex_opts* o, int out, int in, pid_t child, int* child_status) {
    const size_t n = (size_t)1 << (o->full ? 27 : 24);
    request q;
    reply a;
    gpuk_ctx* ctx;
    gpuk_buffer samples, sum;
    gpuk_event filled;
    gpuk_stream s;
    gpuk_result r;
    float own = 0;
    const float* host;
    void* raw = NULL;
    double cpu = 0;
    size_t i, bytes = 0;
    int ok;
    if (!ex_start(ex_name, &ctx)) return EX_NO_GPU;
    TRY(gpuk_stream_create(ctx, NULL, &s));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = n * sizeof(float),
                                                     .label = "samples" }, &samples));
    TRY(gpuk_buffer_create(ctx, &(gpuk_buffer_desc){ .bytes = sizeof(float), .label = "sum" },
                           &sum));
    TRY(gpuk_event_create(ctx, &(gpuk_event_desc){ .interprocess = true }, &filled));
    TRY(gpuk_random_uniform_f32(ctx, s, gpuk_at(samples, 0), n, SEED, 0));
    TRY(gpuk_event_record(ctx, s, filled));
    memset(&q, 0, sizeof q);
    q.n = n;
    r = gpuk_buffer_export(ctx, samples, &q.samples);
    if (r == GPUK_ERR_UNSUPPORTED || r == (gpuk_result)801) {
        fprintf(stderr, "%s: no CUDA IPC on this platform; nothing was shared\n", ex_name);
        gpuk_ctx_destroy(ctx);
        return EX_NO_GPU;
    }
    TRY(r);
    TRY(gpuk_event_export(ctx, filled, &q.filled));
    printf("producer: %zu floats (%.0f MiB) being drawn on %s; handles sent (%zu bytes)\n", n,
           (double)n * 4 / (1 << 20), gpuk_ctx_device_info(ctx)->name, sizeof q);
    if (!write_all(out, &q, sizeof q) || !read_all(in, &a, sizeof a)) {
        fprintf(stderr, "%s: the consumer gave no answer (its output above says why)\n", ex_name);
        return 1;
    }
    /* the same reduction here, and the CPU's */
    TRY(gpuk_sum_f32(ctx, s, gpuk_at(sum, 0), gpuk_at(samples, 0), n));
    TRY(gpuk_stream_sync(ctx, s));
    TRY(gpuk_buffer_read(ctx, sum, 0, &own, sizeof own));
    TRY(gpuk_buffer_download(ctx, samples, &raw, &bytes));
    host = (const float*)raw;
    for (i = 0; i < n; i++) cpu += host[i];
    gpuk_host_free(raw);
    /* the consumer has closed its import once it exits: only then is the buffer freed */
    waitpid(child, child_status, 0);
    TRY(gpuk_event_destroy(ctx, filled));
    TRY(gpuk_ctx_destroy(ctx));
    ok = memcmp(&a.sum, &own, sizeof own) == 0 && fabs((double)own - cpu) <= 1e-5 * cpu &&
         WIFEXITED(*child_status) && WEXITSTATUS(*child_status) == 0;
    printf("consumer's sum %.1f, producer's %.1f (%s), CPU's %.1f\n", (double)a.sum, (double)own,
           memcmp(&a.sum, &own, sizeof own) == 0 ? "bit for bit" : "DIFFERENT", cpu);
    return ex_result(ok, "%zu floats shared by two processes: the consumer's sum is the "
                     "producer's, bit for bit (%.0f; it imported and summed in %.1f ms)", n,
                     (double)own, (double)a.ms);
}

int main(int argc, char** argv) {
    ex_opts o;
    int to_child[2], from_child[2], status = 0, rc;
    pid_t pid;
    rc = ex_parse(argc, argv, ex_name, "two processes sharing one GPU buffer (CUDA IPC)", &o);
    if (rc >= 0) return rc;
    if (pipe(to_child) != 0 || pipe(from_child) != 0) {
        perror(ex_name);
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0) {
        perror(ex_name);
        return 1;
    }
    if (pid == 0) { /* the consumer; CUDA starts in each process after the fork */
        close(to_child[1]);
        close(from_child[0]);
        rc = consumer(to_child[0], from_child[1]);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    close(to_child[0]);
    close(from_child[1]);
    status = -1;
    rc = producer(&o, to_child[1], from_child[0], pid, &status);
    close(to_child[1]); /* a consumer still waiting for a request reads the end */
    close(from_child[0]);
    if (status == -1) waitpid(pid, &status, 0);
    return rc;
}
